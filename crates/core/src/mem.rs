//! Large buffers. On Linux, first touching fresh memory costs a page fault per 4 KiB page, which
//! on virtual machines can cost more than the computation that fills it (measured: 0.4 s per GiB
//! here, 0.1 s with transparent huge pages). Buffers of many megabytes therefore ask the kernel
//! for huge pages before they are first written.

use std::path::{Path, PathBuf};

const HUGE: usize = 2 << 20;

/// An empty vector with room for `n` elements, backed by huge pages where the kernel allows.
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    advise_huge(v.as_ptr() as usize, n * std::mem::size_of::<T>());
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(start: usize, len: usize) {
    if len < 4 * HUGE {
        return;
    }
    let aligned = start.next_multiple_of(HUGE);
    let len = (start + len - aligned) / HUGE * HUGE;
    // SAFETY: the range lies inside an allocation this process owns; MADV_HUGEPAGE only changes
    // how the kernel backs it, never its contents, and failure is harmless.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_start: usize, _len: usize) {}

/// Resident memory of this process in bytes (Linux; None elsewhere). Reads `/proc`: call it
/// about once a second, not per frame.
#[cfg(target_os = "linux")]
pub fn resident_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

#[cfg(not(target_os = "linux"))]
pub fn resident_bytes() -> Option<u64> {
    None
}

/// The memory a computation plans for when the user names no limit: 90% of what the system
/// could give now ([`available_bytes`]), leaving the rest to the process's other work.
pub fn default_budget() -> Option<u64> {
    available_bytes().map(|a| a / 10 * 9)
}

/// Memory this process could take now: the least of what the system could give
/// (MemAvailable), what its address-space limit leaves (`ulimit -v`, [`address_space_left`]) and
/// what its control group leaves (`memory.max`, [`cgroup_left`]), which containers and cluster
/// schedulers set. None where none of them is known (not Linux).
pub fn available_bytes() -> Option<u64> {
    [system_available(), address_space_left(), cgroup_left()].into_iter().flatten().min()
}

/// Linux's MemAvailable.
fn system_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

/// What RLIMIT_AS leaves above the address space this process has mapped, less what the
/// allocator reserves without using: glibc maps up to 64 MiB of address space for each
/// thread's arena, counted by the limit though never touched. None without a limit.
#[cfg(target_os = "linux")]
pub fn address_space_left() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit struct that this frame owns.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 || limit.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    // The threads computations run on (and the main one), at most a quarter of the limit: on
    // many cores the arenas would otherwise claim all of it.
    let arenas = ((rayon::current_num_threads() as u64 + 1) * (64 << 20)).min(limit.rlim_cur / 4);
    Some(limit.rlim_cur.saturating_sub(pages * page).saturating_sub(arenas))
}

#[cfg(not(target_os = "linux"))]
pub fn address_space_left() -> Option<u64> {
    None
}

/// What this process's control group leaves: the least, over it and the groups above it, of
/// `memory.max` less `memory.current` (cgroup v2), or `memory.limit_in_bytes` less
/// `memory.usage_in_bytes` (v1). None when no group sets a limit.
pub fn cgroup_left() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_left_in(Path::new("/sys/fs/cgroup"), &membership)
}

/// [`cgroup_left`] with the cgroup file system mounted at `root` and `/proc/self/cgroup`'s text
/// given.
pub fn cgroup_left_in(root: &Path, membership: &str) -> Option<u64> {
    let number = |p: PathBuf| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let mut least: Option<u64> = None;
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (base, max, current) = match controllers {
            "" => (root.to_path_buf(), "memory.max", "memory.current"),
            c if c.split(',').any(|c| c == "memory") => {
                (root.join("memory"), "memory.limit_in_bytes", "memory.usage_in_bytes")
            }
            _ => continue,
        };
        // The group and each above it, up to the root of the mount.
        let mut group = base.join(path.trim_start_matches('/'));
        loop {
            // "max" (v2) does not parse: no limit at this level.
            if let (Some(m), Some(c)) = (number(group.join(max)), number(group.join(current))) {
                least = Some(least.map_or(m.saturating_sub(c), |l| l.min(m.saturating_sub(c))));
            }
            if group == base || !group.pop() {
                break;
            }
        }
    }
    least
}

/// More memory asked for than the process could take.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{what} needs {} MiB; {} MiB are available (the least of the free memory, ulimit -v and the control group's limit)", .need >> 20, .available >> 20)]
pub struct TooLarge {
    pub what: String,
    pub need: u64,
    pub available: u64,
}

/// Refuses `need` bytes for `what` when more than [`available_bytes`] (nothing is refused where
/// that is unknown).
pub fn check_fits(need: u64, what: &str) -> Result<(), TooLarge> {
    match available_bytes() {
        Some(available) if need > available => Err(TooLarge { what: what.into(), need, available }),
        _ => Ok(()),
    }
}

/// A memory size that does not parse.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum SizeError {
    #[error("'{0}' is not a size (e.g. 512M, 2G)")]
    NotASize(String),
    #[error("'{0}' is not a positive size")]
    NotPositive(String),
}

/// Parses a memory size: plain bytes or with K, M, G (binary units), e.g. "64M".
pub fn parse_size(s: &str) -> Result<usize, SizeError> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1usize << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: f64 = num.parse().map_err(|_| SizeError::NotASize(s.into()))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(SizeError::NotPositive(s.into()));
    }
    Ok((n * mult as f64) as usize)
}

/// Gives the memory freed so far back to the system (glibc keeps what threads free in their
/// own arenas, where the next stage's allocations on another thread cannot reuse it). Called
/// between a parallel stage and a large serial one, it keeps the peak near the live heap's.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn give_back_freed() {
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn give_back_freed() {}

/// Peak resident memory of this process so far, in MiB (Linux only).
pub fn peak_rss_mib() -> Option<f64> {
    status_mib("VmHWM:")
}

/// Peak address space of this process so far, in MiB (Linux only): what `ulimit -v` limits.
pub fn peak_address_space_mib() -> Option<f64> {
    status_mib("VmPeak:")
}

/// A figure of `/proc/self/status` in kB, as MiB.
fn status_mib(key: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn resident_memory_uses_the_page_size() {
        // Against the kernel's own figure in kB (VmRSS), read just before and after.
        let vm_rss = || -> u64 {
            let s = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
            line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
        };
        let before = vm_rss();
        let b = super::resident_bytes().unwrap();
        let after = vm_rss();
        let (lo, hi) = (before.min(after), before.max(after));
        assert!(b >= lo * 9 / 10 && b <= hi * 11 / 10, "{b} bytes, VmRSS {before}..{after}");
    }

    /// Limits of control groups, v2 and v1, at the group and above it; "max" is no limit.
    #[test]
    fn control_group_limits_are_read_at_every_level() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let write = |p: &str, text: &str| {
            let p = root.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap_or(root.path())).unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
        };
        write("job/task/memory.max", "max\n");
        write("job/task/memory.current", "100\n");
        write("job/memory.max", "8000\n");
        write("job/memory.current", "3000\n");
        assert_eq!(super::cgroup_left_in(root.path(), "0::/job/task\n"), Some(5000));
        write("job/task/memory.max", "4000\n");
        assert_eq!(super::cgroup_left_in(root.path(), "0::/job/task\n"), Some(3900));
        assert_eq!(super::cgroup_left_in(root.path(), "0::/other\n"), None);
        write("memory/slurm/memory.limit_in_bytes", "2048\n");
        write("memory/slurm/memory.usage_in_bytes", "48\n");
        let v1 = "12:cpu,cpuacct:/slurm\n5:memory:/slurm\n";
        assert_eq!(super::cgroup_left_in(root.path(), v1), Some(2000));
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(super::parse_size("64M"), Ok(64 << 20));
        assert_eq!(super::parse_size("1.5k"), Ok(1536));
        assert_eq!(super::parse_size("4096"), Ok(4096));
        assert!(super::parse_size("-1G").is_err());
        assert!(super::parse_size("lots").is_err());
    }
}
