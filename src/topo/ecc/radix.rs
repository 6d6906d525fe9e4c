//! Parallel LSD radix sort of u64 words by their high 32 bits, for the (key, change) entries of
//! fields with many distinct values. A comparison sort of 2^27 entries takes seconds; three
//! counting passes over memory take a fraction of that.

use rayon::prelude::*;

/// Sorts `v` by `v >> 32` (stable within equal keys, which the caller does not need).
pub(super) fn sort_by_high_32(v: &mut Vec<u64>) {
    let n = v.len();
    if n < 1 << 16 {
        v.sort_unstable_by_key(|e| e >> 32);
        return;
    }
    let mut buf = vec![0u64; n];
    let parts = rayon::current_num_threads() * 4;
    let part_len = n.div_ceil(parts);
    let mut in_v = true; // whether the current data are in `v` (else in `buf`)
    for (shift, bits) in [(32u32, 11u32), (43, 11), (54, 10)] {
        let (src, dst): (&[u64], &mut [u64]) = if in_v { (v, &mut buf) } else { (&buf, v) };
        if pass(src, dst, part_len, shift, bits) {
            in_v = !in_v;
        }
    }
    if !in_v {
        *v = buf;
    }
}

/// One counting pass on digit `(e >> shift) & mask`; returns false (and moves nothing) when every
/// entry has the same digit.
fn pass(src: &[u64], dst: &mut [u64], part_len: usize, shift: u32, bits: u32) -> bool {
    let radix = 1usize << bits;
    let mask = (radix - 1) as u64;
    let digit = |e: u64| ((e >> shift) & mask) as usize;
    let counts: Vec<Vec<usize>> = src
        .par_chunks(part_len)
        .map(|part| {
            let mut h = vec![0usize; radix];
            for &e in part {
                h[digit(e)] += 1;
            }
            h
        })
        .collect();
    if (0..radix).any(|d| counts.iter().map(|h| h[d]).sum::<usize>() == src.len()) {
        return false;
    }
    // Start of each (part, digit) run: digits in order, parts in order within a digit.
    let mut starts = vec![vec![0usize; radix]; counts.len()];
    let mut at = 0;
    for d in 0..radix {
        for (p, h) in counts.iter().enumerate() {
            starts[p][d] = at;
            at += h[d];
        }
    }
    let out = SharedSlice(dst.as_mut_ptr());
    src.par_chunks(part_len).zip(starts).for_each(|(part, mut next)| {
        let out = &out;
        for &e in part {
            let d = digit(e);
            // SAFETY: the runs [starts[p][d], starts[p][d] + counts[p][d]) partition 0..len, and
            // part p writes only inside its own runs, each index once.
            unsafe { out.0.add(next[d]).write(e) };
            next[d] += 1;
        }
    });
    true
}

/// A raw pointer that parallel parts write through, each to indices no other part touches.
struct SharedSlice(*mut u64);
unsafe impl Sync for SharedSlice {}
unsafe impl Send for SharedSlice {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_a_comparison_sort() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut v: Vec<u64> = (0..300_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            })
            .collect();
        let mut want: Vec<u64> = v.iter().map(|e| e >> 32).collect();
        want.sort_unstable();
        sort_by_high_32(&mut v);
        assert_eq!(v.iter().map(|e| e >> 32).collect::<Vec<_>>(), want);
    }

    #[test]
    fn skips_constant_digits() {
        let mut v: Vec<u64> = (0..100_000u64).rev().map(|i| (i % 7) << 32 | i).collect();
        sort_by_high_32(&mut v);
        assert!(v.windows(2).all(|w| w[0] >> 32 <= w[1] >> 32));
        assert_eq!(v.len(), 100_000);
    }
}
