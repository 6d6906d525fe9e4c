//! Large buffers. On Linux, first touching fresh memory costs a page fault per 4 KiB page, which
//! on virtual machines can cost more than the computation that fills it (measured: 0.4 s per GiB
//! here, 0.1 s with transparent huge pages). Buffers of many megabytes therefore ask the kernel
//! for huge pages before they are first written.

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

/// Memory the system could give this process now (Linux's MemAvailable; None elsewhere).
pub fn available_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
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
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
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

    #[test]
    fn sizes_parse() {
        assert_eq!(super::parse_size("64M"), Ok(64 << 20));
        assert_eq!(super::parse_size("1.5k"), Ok(1536));
        assert_eq!(super::parse_size("4096"), Ok(4096));
        assert!(super::parse_size("-1G").is_err());
        assert!(super::parse_size("lots").is_err());
    }
}
