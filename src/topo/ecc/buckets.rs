//! Per-value change sums for fields whose distinct values are too many for a direct histogram
//! (u32, i32, f32, f64: up to one distinct value per voxel).
//!
//! A comparison sort of 2^27 (key, change) entries takes seconds. Instead:
//! 1. one pass finds the smallest and largest key; the key range is cut into up to 2^11 buckets
//!    of consecutive keys (so a narrow value range still spreads);
//! 2. one pass counts, per slab, the voxels of each bucket, which fixes where every slab writes
//!    the entries of every bucket;
//! 3. the change pass (the kernel) writes each voxel's packed (key, change) entry straight into
//!    its bucket, slabs in parallel;
//! 4. each bucket, small enough for the cache, is radix-sorted on the key bits below the bucket's
//!    own and summed per key, buckets in parallel, straight into the output.

use super::{EccError, EccKey, Geometry, Held, PerValue, Scratch, filtration_key, threshold};
use crate::control::Control;
use crate::field::{Key, Sample};
use rayon::prelude::*;

const BUCKET_BITS: u32 = 11;

/// A packed (key, change) entry: the key as offset-binary bits (order-preserving), the change
/// as an offset-binary i8 in the low byte.
pub(super) trait Packed: Copy + Send + Sync {
    fn bits(self) -> u64;
    fn change(self) -> i8;
}

impl Packed for u64 {
    #[inline(always)]
    fn bits(self) -> u64 {
        self >> 32
    }
    #[inline(always)]
    fn change(self) -> i8 {
        (self as u8 ^ 0x80) as i8
    }
}

impl Packed for u128 {
    #[inline(always)]
    fn bits(self) -> u64 {
        (self >> 64) as u64
    }
    #[inline(always)]
    fn change(self) -> i8 {
        (self as u8 ^ 0x80) as i8
    }
}

/// Raw pointer through which parallel slabs write, each to indices no other slab touches.
struct Shared<E>(*mut E);
// SAFETY: the pointer is only written through at indices that one slab alone owns (see
// per_value), so sharing it between the slabs' threads makes no data race.
unsafe impl<E: Send> Sync for Shared<E> {}
// SAFETY: as for Sync: moving the pointer to a slab's thread hands it indices no other owns.
unsafe impl<E: Send> Send for Shared<E> {}

pub(super) fn per_value<T: Sample, const VERT: bool, const SUP: bool>(
    held: Held<T>,
    geo: &Geometry,
    planes_per_chunk: usize,
    ctl: &Control,
) -> Result<PerValue<T>, EccError>
where
    T::Key: EccKey,
{
    let bits = |s: T| filtration_key::<T, SUP>(s).bits();
    let absent = T::Key::ABSENT.bits();
    let (lo, hi) = held
        .planes(geo, held.range.0, held.range.1)
        .par_iter()
        .map(|&s| bits(s))
        .filter(|&b| b != absent)
        .fold(|| (u64::MAX, 0), |(lo, hi), b| (lo.min(b), hi.max(b)))
        .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    if lo > hi {
        return Ok((Vec::new(), Vec::new()));
    }
    let shift = (64 - (hi - lo).leading_zeros()).saturating_sub(BUCKET_BITS);
    let nb = ((hi - lo) >> shift) as usize + 1;
    // Bucket `nb` holds absent voxels: counted, never written.
    let bucket = move |b: u64| if b == absent { nb } else { ((b - lo) >> shift) as usize };

    let pv = geo.plane_voxels();
    let n_chunks = held.n_chunks(planes_per_chunk);
    let planes = |c: usize| held.chunk_planes(planes_per_chunk, c);
    let counts: Vec<Vec<usize>> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let (p0, p1) = planes(c);
            let mut h = vec![0usize; nb + 1];
            for &s in held.planes(geo, p0, p1) {
                h[bucket(bits(s))] += 1;
            }
            h
        })
        .collect();
    let mut starts = vec![vec![0usize; nb]; n_chunks];
    let mut sizes = vec![0usize; nb];
    let mut total = 0;
    for b in 0..nb {
        for (c, h) in counts.iter().enumerate() {
            starts[c][b] = total;
            total += h[b];
            sizes[b] += h[b];
        }
    }
    drop(counts);

    let mut buf = crate::mem::with_capacity::<<T::Key as EccKey>::Entry>(total);
    let out = Shared(buf.spare_capacity_mut().as_mut_ptr());
    starts.into_par_iter().enumerate().try_for_each_init(Scratch::default, |scratch, (c, mut next)| {
        if ctl.cancelled() {
            return Err(EccError::Cancelled);
        }
        let out = &out;
        let (p0, p1) = planes(c);
        scratch.run::<T, VERT, SUP>(held, geo, p0, p1, |_, keys, changes| {
            for (&k, &ch) in keys.iter().zip(changes) {
                let b = bucket(k.bits());
                if b < nb {
                    // SAFETY: the runs [starts[c][b], starts[c][b] + counts[c][b]) partition
                    // 0..total; slab c writes only inside its own runs, each slot once.
                    unsafe { (*out.0.add(next[b])).write(k.pack(ch)) };
                    next[b] += 1;
                }
            }
        });
        ctl.tick(((p1 - p0) * pv) as u64);
        Ok(())
    })?;
    // SAFETY: the change pass wrote every one of the `total` slots (see above).
    unsafe { buf.set_len(total) };

    let mut slices = Vec::with_capacity(nb);
    let mut rest = buf.as_mut_slice();
    for &s in &sizes {
        let (head, tail) = rest.split_at_mut(s);
        slices.push(head);
        rest = tail;
    }
    // Sort each bucket and count its distinct keys, then write keys and sums into one output.
    let distinct: Vec<usize> = slices
        .par_iter_mut()
        .map_init(Vec::new, |tmp, b| {
            sort_low_bits(b, tmp, lo, shift);
            b.iter().enumerate().filter(|&(i, e)| i == 0 || e.bits() != b[i - 1].bits()).count()
        })
        .collect();
    let n: usize = distinct.iter().sum();
    let mut thresholds = crate::mem::with_capacity::<T>(n);
    let mut sums = crate::mem::with_capacity::<i64>(n);
    let mut t_rest = &mut thresholds.spare_capacity_mut()[..n];
    let mut s_rest = &mut sums.spare_capacity_mut()[..n];
    let mut parts = Vec::with_capacity(nb);
    for (slice, &d) in slices.into_iter().zip(&distinct) {
        let (t, tt) = t_rest.split_at_mut(d);
        let (s, st) = s_rest.split_at_mut(d);
        parts.push((slice, t, s));
        (t_rest, s_rest) = (tt, st);
    }
    parts.into_par_iter().for_each(|(b, t, s)| {
        let (mut i, mut j) = (0, 0);
        while i < b.len() {
            let key = b[i].bits();
            let mut sum = 0i64;
            while i < b.len() && b[i].bits() == key {
                sum += b[i].change() as i64;
                i += 1;
            }
            t[j].write(threshold::<T, SUP>(T::Key::from_bits(key)));
            s[j].write(sum);
            j += 1;
        }
    });
    // SAFETY: bucket b wrote exactly distinct[b] slots of its own part of both outputs.
    unsafe {
        thresholds.set_len(n);
        sums.set_len(n);
    }
    Ok((thresholds, sums))
}

/// Sorts one bucket by the `shift` key bits below the bucket's own: two LSD counting passes
/// when they fit in a cache-sized table, else a comparison sort.
fn sort_low_bits<E: Packed + Default>(bucket: &mut [E], tmp: &mut Vec<E>, lo: u64, shift: u32) {
    if bucket.len() < 64 || shift == 0 || shift > 2 * 12 {
        bucket.sort_unstable_by_key(|e| e.bits());
        return;
    }
    let half = shift.div_ceil(2);
    let mask = (1u64 << half) - 1;
    tmp.resize(bucket.len(), E::default());
    let mut counts = vec![0usize; 1 << half];
    for pass in 0..2 {
        let digit = |e: E| (((e.bits() - lo) >> (pass * half)) & mask) as usize;
        counts.fill(0);
        let (src, dst): (&[E], &mut [E]) = if pass == 0 { (bucket, tmp) } else { (tmp, bucket) };
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
