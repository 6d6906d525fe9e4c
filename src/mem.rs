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
