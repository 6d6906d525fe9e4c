//! Grouping of packed (key, change) entries by key, for fields with many distinct values.
//!
//! A comparison sort of 2^27 entries takes seconds. Instead, one parallel counting pass scatters
//! the entries into up to 2^11 buckets of consecutive key ranges (drawn from the keys' actual
//! minimum and maximum, so narrow value ranges still spread), and each bucket, small enough for
//! the cache, is radix-sorted and summed on its own, buckets in parallel.

use rayon::prelude::*;

const BUCKET_BITS: u32 = 11;
const ABSENT: u32 = u32::MAX;

/// Entries are `key << 32 | change`, where the key is an offset-binary u32 (`ABSENT` =
/// `u32::MAX` for voxels outside every sublevel set, dropped here) and the change an
/// offset-binary i8 in the low byte. Returns the distinct keys in increasing order and the sum of
/// the changes at each.
pub(super) fn group_by_high_32(src: &[u64]) -> (Vec<u32>, Vec<i64>) {
    let key = |e: u64| (e >> 32) as u32;
    let (lo, hi) = src
        .par_iter()
        .map(|&e| key(e))
        .filter(|&k| k != ABSENT)
        .fold(|| (u32::MAX, 0u32), |(lo, hi), k| (lo.min(k), hi.max(k)))
        .reduce(|| (u32::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    if lo > hi {
        return (Vec::new(), Vec::new());
    }
    let range = (hi - lo) as u64;
    let shift = (64 - range.leading_zeros()).saturating_sub(BUCKET_BITS);
    let nb = (range >> shift) as usize + 1;
    // Bucket `nb` collects absent entries, which are counted but never written.
    let bucket = |e: u64| {
        let k = key(e);
        if k == ABSENT { nb } else { ((k - lo) >> shift) as usize }
    };

    let parts = rayon::current_num_threads() * 4;
    let part_len = src.len().div_ceil(parts).max(1);
    let counts: Vec<Vec<usize>> = src
        .par_chunks(part_len)
        .map(|part| {
            let mut h = vec![0usize; nb + 1];
            for &e in part {
                h[bucket(e)] += 1;
            }
            h
        })
        .collect();
    let mut starts = vec![vec![0usize; nb]; counts.len()];
    let mut sizes = vec![0usize; nb];
    let mut at = 0;
    for b in 0..nb {
        for (p, h) in counts.iter().enumerate() {
            starts[p][b] = at;
            at += h[b];
            sizes[b] += h[b];
        }
    }
    let mut buf = vec![0u64; at];
    let out = SharedSlice(buf.as_mut_ptr());
    src.par_chunks(part_len).zip(starts).for_each(|(part, mut next)| {
        let out = &out;
        for &e in part {
            let b = bucket(e);
            if b < nb {
                // SAFETY: the runs [starts[p][b], starts[p][b] + counts[p][b]) partition
                // 0..buf.len(); part p writes only inside its own runs, each index once.
                unsafe { out.0.add(next[b]).write(e) };
                next[b] += 1;
            }
        }
    });

    let mut slices = Vec::with_capacity(nb);
    let mut rest = buf.as_mut_slice();
    for &s in &sizes {
        let (head, tail) = rest.split_at_mut(s);
        slices.push(head);
        rest = tail;
    }
    let groups: Vec<(Vec<u32>, Vec<i64>)> = slices
        .into_par_iter()
        .map_init(Vec::new, |tmp, bucket| {
            sort_low_bits(bucket, tmp, lo, shift);
            sum_runs(bucket)
        })
        .collect();
    let n: usize = groups.iter().map(|g| g.0.len()).sum();
    let (mut keys, mut sums) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for (k, s) in groups {
        keys.extend(k);
        sums.extend(s);
    }
    (keys, sums)
}

/// Sorts one bucket by the `shift` key bits below the bucket's own (LSD, at most two passes).
fn sort_low_bits(bucket: &mut [u64], tmp: &mut Vec<u64>, lo: u32, shift: u32) {
    if bucket.len() < 64 || shift == 0 {
        bucket.sort_unstable_by_key(|e| (e >> 32) as u32);
        return;
    }
    let half = shift.div_ceil(2);
    let mask = (1u64 << half) - 1;
    tmp.resize(bucket.len(), 0);
    let mut counts = vec![0usize; 1 << half];
    for pass in 0..2 {
        let digit = |e: u64| ((((e >> 32) as u32 - lo) as u64 >> (pass * half)) & mask) as usize;
        counts.fill(0);
        let (src, dst): (&[u64], &mut [u64]) = if pass == 0 { (bucket, tmp) } else { (tmp, bucket) };
        for &e in src {
            counts[digit(e)] += 1;
        }
        let mut at = 0;
        for c in counts.iter_mut() {
            (*c, at) = (at, at + *c);
        }
        for &e in src {
            let d = digit(e);
            dst[counts[d]] = e;
            counts[d] += 1;
        }
    }
}

/// Distinct keys of a sorted run and the summed changes at each.
fn sum_runs(sorted: &[u64]) -> (Vec<u32>, Vec<i64>) {
    let (mut keys, mut sums) = (Vec::new(), Vec::<i64>::new());
    for &e in sorted {
        let (k, ch) = ((e >> 32) as u32, (e as u8 ^ 0x80) as i8 as i64);
        match sums.last_mut() {
            Some(s) if keys.last() == Some(&k) => *s += ch,
            _ => {
                keys.push(k);
                sums.push(ch);
            }
        }
    }
    (keys, sums)
}

/// A raw pointer that parallel parts write through, each to indices no other part touches.
struct SharedSlice(*mut u64);
unsafe impl Sync for SharedSlice {}
unsafe impl Send for SharedSlice {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn reference(v: &[u64]) -> (Vec<u32>, Vec<i64>) {
        let mut m = BTreeMap::new();
        for &e in v {
            if (e >> 32) as u32 != ABSENT {
                *m.entry((e >> 32) as u32).or_insert(0i64) += (e as u8 ^ 0x80) as i8 as i64;
            }
        }
        m.into_iter().unzip()
    }

    fn stream(n: usize, key_mask: u32) -> Vec<u64> {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let ch = (s % 29) as i8 - 14;
                let k = ((s >> 20) as u32 & key_mask) | 0x100;
                (k as u64) << 32 | (ch as u8 ^ 0x80) as u64
            })
            .collect()
    }

    #[test]
    fn groups_like_a_map() {
        for mask in [0, 0xf, 0xffff, 0xfff_ffff, 0x7fff_ffff] {
            let mut v = stream(200_000, mask);
            v.extend([(ABSENT as u64) << 32 | 0x85, 0x81]);
            assert_eq!(group_by_high_32(&v), reference(&v), "mask {mask:x}");
        }
    }

    #[test]
    fn empty_and_all_absent() {
        assert_eq!(group_by_high_32(&[]), (vec![], vec![]));
        assert_eq!(group_by_high_32(&[(ABSENT as u64) << 32]), (vec![], vec![]));
    }
}
