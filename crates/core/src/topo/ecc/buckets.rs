//! Per-value change sums for fields whose distinct values are too many for a direct histogram
//! (u32, i32, f32, f64: up to one distinct value per voxel).
//!
//! A comparison sort of 2^27 (key, change) entries takes seconds. Instead (an MSD radix
//! partition whose leaves are counted, not sorted):
//! 1. one pass finds the smallest and largest key; the key range is cut into up to 2^8 buckets
//!    of consecutive keys (so a narrow value range still spreads);
//! 2. one pass counts, per slab, the voxels of each bucket, which fixes where every slab writes
//!    the entries of every bucket;
//! 3. the change pass (the kernel) writes each voxel's packed (key, change) entry into its
//!    bucket, slabs in parallel, a cache line at a time through per-bucket line buffers (256 of
//!    them fit the L1 cache: the scattered stores would otherwise miss it one entry at a time);
//! 4. each bucket is finished on its own, buckets in parallel ([`finish`]): while its key range is
//!    too wide to count directly it is partitioned again on the next 8 key bits; a range of at
//!    most 4 keys an entry (and at most 2^16 keys) is summed in a table indexed by the key, a few
//!    entries are sorted; either way the bucket's head is left holding its distinct keys in
//!    order with their summed changes, which are then written straight into the output.

use super::{Chi, EccError, EccKey, Geometry, Held, PerValue, Scratch, chi, filtration_key, threshold};
use crate::control::Control;
use crate::field::{Key, Sample};
use rayon::prelude::*;

/// Key bits a partition pass splits on: 256 buckets, whose line buffers fit the L1 cache.
const FANOUT_BITS: u32 = 8;
/// The widest key range counted in a table (2^16 sums: 512 KiB, in the L2 cache)...
const TABLE_BITS: u32 = 16;
/// ...and only when the bucket has at least one entry for every `TABLE_SPREAD` keys of it.
const TABLE_SPREAD: usize = 4;
/// Buckets this small are sorted, not partitioned.
const SORTED: usize = 256;

/// A packed (key, change) entry: the key as offset-binary bits (order-preserving), the change
/// as an offset-binary i8 in the low byte. Once a bucket is finished, its head holds "sums"
/// instead: a key's offset from the bucket's first key, and the summed change of its voxels.
pub(super) trait Packed: Copy + Send + Sync + Default {
    /// Entries a 64-byte cache line holds.
    const LINE: usize;
    fn bits(self) -> u64;
    fn change(self) -> i8;
    fn sum(offset: u64, sum: i64) -> Self;
    fn offset(self) -> u64;
    fn summed(self) -> i64;
}

/// Bits of a u64 sum entry that hold the summed change: a bucket's keys span at most 2^24
/// offsets (32-bit keys, one partition pass above), and 40 bits sum the changes (at most 13 in
/// magnitude) of 2^35 voxels.
const SUM_BITS: u32 = 40;

impl Packed for u64 {
    const LINE: usize = 8;
    #[inline(always)]
    fn bits(self) -> u64 {
        self >> 32
    }
    #[inline(always)]
    fn change(self) -> i8 {
        (self as u8 ^ 0x80) as i8
    }
    #[inline(always)]
    fn sum(offset: u64, sum: i64) -> Self {
        offset << SUM_BITS | (sum as u64 & ((1 << SUM_BITS) - 1))
    }
    #[inline(always)]
    fn offset(self) -> u64 {
        self >> SUM_BITS
    }
    #[inline(always)]
    fn summed(self) -> i64 {
        ((self << (64 - SUM_BITS)) as i64) >> (64 - SUM_BITS)
    }
}

impl Packed for u128 {
    const LINE: usize = 4;
    #[inline(always)]
    fn bits(self) -> u64 {
        (self >> 64) as u64
    }
    #[inline(always)]
    fn change(self) -> i8 {
        (self as u8 ^ 0x80) as i8
    }
    #[inline(always)]
    fn sum(offset: u64, sum: i64) -> Self {
        (offset as u128) << 64 | sum as u64 as u128
    }
    #[inline(always)]
    fn offset(self) -> u64 {
        (self >> 64) as u64
    }
    #[inline(always)]
    fn summed(self) -> i64 {
        self as u64 as i64
    }
}

/// Raw pointer through which parallel slabs write, each to indices no other slab touches.
struct Shared<E>(*mut E);
// SAFETY: the pointer is only written through at indices that one slab alone owns (see
// finished), so sharing it between the slabs' threads makes no data race.
unsafe impl<E: Send> Sync for Shared<E> {}
// SAFETY: as for Sync: moving the pointer to a slab's thread hands it indices no other owns.
unsafe impl<E: Send> Send for Shared<E> {}

/// The thresholds present (in filtration order) and the summed change at each. The entries
/// are scattered into `spare`, which keeps its memory for the next call (a stream's next slab:
/// fresh memory costs a page fault per page).
pub(super) fn per_value<T: Sample, const VERT: bool, const SUP: bool>(
    held: Held<T>,
    geo: &Geometry,
    planes_per_chunk: usize,
    ctl: &Control,
    spare: &mut Vec<<T::Key as EccKey>::Entry>,
) -> Result<PerValue<T>, EccError>
where
    T::Key: EccKey,
{
    let done = finished::<T, VERT, SUP>(held, geo, planes_per_chunk, ctl, std::mem::take(spare))?;
    let run = done.write::<T, SUP, i64>(false, |s| s);
    *spare = done.buf;
    Ok(run)
}

/// The thresholds present and the curve's chi at each: the running sums written as the keys
/// are, without a vector of per-key sums between them.
pub(super) fn curve<T: Sample, const VERT: bool, const SUP: bool>(
    held: Held<T>,
    geo: &Geometry,
    planes_per_chunk: usize,
    ctl: &Control,
) -> Result<(Vec<T>, Chi), EccError>
where
    T::Key: EccKey,
{
    let done = finished::<T, VERT, SUP>(held, geo, planes_per_chunk, ctl, Vec::new())?;
    Ok(if geo.chi32 {
        let (t, chi) = done.write::<T, SUP, i32>(true, chi::narrow_chi);
        (t, Chi::I32(chi))
    } else {
        let (t, chi) = done.write::<T, SUP, i64>(true, |x| x);
        (t, Chi::I64(chi))
    })
}

/// A field's entries in buckets of `2^shift` keys from `lo`, each finished: bucket `b` holds
/// its `distinct[b]` keys' sums at its head.
struct Finished<E> {
    buf: Vec<E>,
    sizes: Vec<usize>,
    distinct: Vec<usize>,
    lo: u64,
    shift: u32,
}

fn finished<T: Sample, const VERT: bool, const SUP: bool>(
    held: Held<T>,
    geo: &Geometry,
    planes_per_chunk: usize,
    ctl: &Control,
    mut buf: Vec<<T::Key as EccKey>::Entry>,
) -> Result<Finished<<T::Key as EccKey>::Entry>, EccError>
where
    T::Key: EccKey,
{
    let bits = |s: T| filtration_key::<T, SUP>(s).bits();
    let absent = T::Key::ABSENT.bits();
    // A plain loop a block at a time, which the compiler vectorizes (absent is the largest key,
    // so only the maximum has to skip it).
    let (lo, hi) = held
        .planes(geo, held.range.0, held.range.1)
        .par_chunks(1 << 16)
        .map(|block| {
            let (mut lo, mut hi) = (u64::MAX, 0);
            for &s in block {
                let b = bits(s);
                lo = lo.min(b);
                hi = hi.max(if b == absent { 0 } else { b });
            }
            (lo, hi)
        })
        .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    if lo > hi {
        return Ok(Finished { buf, sizes: Vec::new(), distinct: Vec::new(), lo, shift: 0 });
    }
    let shift = (64 - (hi - lo).leading_zeros()).saturating_sub(FANOUT_BITS);
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
    let (starts, sizes) = runs_of(&counts, nb);
    let total = sizes.iter().sum();

    buf.clear();
    if buf.capacity() < total {
        buf = crate::mem::with_capacity(total);
    }
    let out = Shared(buf.spare_capacity_mut().as_mut_ptr().cast::<<T::Key as EccKey>::Entry>());
    let scratch = || (Scratch::default(), Lines::default());
    starts.into_par_iter().enumerate().try_for_each_init(scratch, |(scratch, lines), (c, mut next)| {
        if ctl.cancelled() {
            return Err(EccError::Cancelled);
        }
        let out = &out;
        let (p0, p1) = planes(c);
        lines.reset(out.0, &next);
        let end: Vec<usize> = next.iter().zip(&counts[c]).map(|(a, n)| a + n).collect();
        scratch.run::<T, VERT, SUP>(held, geo, p0, p1, |_, keys, changes| {
            for (&k, &ch) in keys.iter().zip(changes) {
                let b = bucket(k.bits());
                if b < nb {
                    // SAFETY: the runs [starts[c][b], starts[c][b] + counts[c][b]) partition
                    // 0..total; slab c writes only inside its own runs, each slot once.
                    unsafe { lines.push(b, k.pack(ch), out.0, &mut next) };
                }
            }
        });
        // SAFETY: as above: what is left in the line buffers ends slab c's runs.
        unsafe { lines.flush(out.0, &mut next) };
        debug_assert_eq!(next, end, "the change pass wrote what the counting pass counted");
        ctl.tick(((p1 - p0) * pv) as u64);
        Ok(())
    })?;
    // SAFETY: the change pass wrote every one of the `total` slots (see above).
    unsafe { buf.set_len(total) };

    // Finish each bucket: its distinct keys and their sums at its head.
    let distinct = finish_parts(&mut buf, &sizes, lo, shift, true);
    Ok(Finished { buf, sizes, distinct, lo, shift })
}

/// Where each block of a partition pass writes each bucket's entries (the blocks' runs of a
/// bucket follow one another, bucket after bucket), from the blocks' `counts` of `buckets`
/// buckets; and each bucket's size.
fn runs_of(counts: &[Vec<usize>], buckets: usize) -> (Vec<Vec<usize>>, Vec<usize>) {
    let mut starts = vec![vec![0usize; buckets]; counts.len()];
    let mut sizes = vec![0usize; buckets];
    let mut total = 0;
    for b in 0..buckets {
        for (c, h) in counts.iter().enumerate() {
            starts[c][b] = total;
            total += h[b];
            sizes[b] += h[b];
        }
    }
    (starts, sizes)
}

/// Finishes the consecutive buckets of `sizes` entries in `buf`, bucket `b` holding keys from
/// `base + b * 2^shift`, buckets in parallel; returns their numbers of distinct keys. A large
/// bucket is itself finished on all threads ([`finish_shared`]) only when `shared`: the parts
/// of a shared bucket are finished one a thread, so that the buffers of nested partitions
/// never hold more than the entries twice over.
fn finish_parts<E: Packed>(
    buf: &mut [E],
    sizes: &[usize],
    base: u64,
    shift: u32,
    shared: bool,
) -> Vec<usize> {
    let mut parts = Vec::with_capacity(sizes.len());
    let mut rest = buf;
    for &size in sizes {
        let (head, tail) = rest.split_at_mut(size);
        parts.push(head);
        rest = tail;
    }
    parts
        .par_iter_mut()
        .enumerate()
        .map_init(Finisher::default, |fin, (b, part)| {
            let base = base + ((b as u64) << shift);
            if shared { finish_shared(part, base, shift, fin) } else { fin.finish(part, base, shift, 0) }
        })
        .collect()
}

impl<E: Packed> Finished<E> {
    /// The thresholds, and for each `value` of the key's sum, or of the running sum up to and
    /// including it when `running`; buckets in parallel.
    fn write<T: Sample, const SUP: bool, V: Send>(
        &self,
        running: bool,
        value: impl Fn(i64) -> V + Sync,
    ) -> (Vec<T>, Vec<V>)
    where
        T::Key: EccKey,
    {
        let n: usize = self.distinct.iter().sum();
        let mut thresholds = crate::mem::with_capacity::<T>(n);
        let mut values = crate::mem::with_capacity::<V>(n);
        let mut t_rest = &mut thresholds.spare_capacity_mut()[..n];
        let mut v_rest = &mut values.spare_capacity_mut()[..n];
        let mut parts = Vec::with_capacity(self.sizes.len());
        let mut at = 0;
        for (b, (&size, &d)) in self.sizes.iter().zip(&self.distinct).enumerate() {
            let (t, tt) = t_rest.split_at_mut(d);
            let (v, vt) = v_rest.split_at_mut(d);
            parts.push((self.lo + ((b as u64) << self.shift), &self.buf[at..at + d], t, v));
            (t_rest, v_rest) = (tt, vt);
            at += size;
        }
        let starts: Vec<i64> = if running {
            let heads: Vec<(usize, usize)> = self
                .sizes
                .iter()
                .scan(0, |at, &size| Some((std::mem::replace(at, *at + size), size)))
                .collect();
            let totals: Vec<i64> = heads
                .par_iter()
                .zip(&self.distinct)
                .map(|(&(at, _), &d)| self.buf[at..at + d].iter().map(|e| e.summed()).sum())
                .collect();
            totals.iter().scan(0, |acc, t| Some(std::mem::replace(acc, *acc + t))).collect()
        } else {
            vec![0; parts.len()]
        };
        parts.into_par_iter().zip(starts).for_each(|((base, head, t, v), mut acc)| {
            for ((e, t), v) in head.iter().zip(t).zip(v) {
                t.write(threshold::<T, SUP>(T::Key::from_bits(base + e.offset())));
                acc = if running { acc + e.summed() } else { e.summed() };
                v.write(value(acc));
            }
        });
        // SAFETY: bucket b wrote exactly distinct[b] slots of its own part of both outputs.
        unsafe {
            thresholds.set_len(n);
            values.set_len(n);
        }
        (thresholds, values)
    }
}

/// Per-bucket line buffers of one slab's scatter: a bucket's entries wait here until a cache
/// line of them is ready, then go out in one 64-byte copy.
#[derive(Default)]
struct Lines<E> {
    held: Vec<E>,
    fill: Vec<u8>,
    /// Where a bucket's first line starts: a run need not start on a cache line, so its first
    /// line is short (written with plain stores) and every later one is aligned and whole.
    first: Vec<u8>,
}

impl<E: Packed> Lines<E> {
    /// Empty buffers for runs that start at `next` in `out`.
    fn reset(&mut self, out: *mut E, next: &[usize]) {
        self.held.resize(next.len() * E::LINE, E::default());
        self.first.clear();
        self.first.extend(next.iter().map(|&at| (out.wrapping_add(at) as usize % 64 / size_of::<E>()) as u8));
        self.fill.clone_from(&self.first);
    }

    /// Appends `e` to bucket `b`, whose next slot in `out` is `next[b]`.
    ///
    /// # Safety
    /// `b < buckets` of [`Self::reset`], and `out` has room for every entry pushed to a bucket
    /// from its `next` on.
    #[inline(always)]
    unsafe fn push(&mut self, b: usize, e: E, out: *mut E, next: &mut [usize]) {
        // SAFETY: b is below the bucket count (the caller's promise), so these indices are in
        // bounds; the copy goes to slots the caller gives this slab.
        unsafe {
            let f = *self.fill.get_unchecked(b) as usize;
            let line = self.held.as_mut_ptr().add(b * E::LINE);
            line.add(f).write(e);
            if f + 1 == E::LINE {
                let at = next.get_unchecked_mut(b);
                let first = self.first.get_unchecked_mut(b);
                let s = *first as usize;
                if s == 0 {
                    write_line(line, out.add(*at));
                } else {
                    std::ptr::copy_nonoverlapping(line.add(s), out.add(*at), E::LINE - s);
                    *first = 0;
                }
                *at += E::LINE - s;
                *self.fill.get_unchecked_mut(b) = 0;
            } else {
                *self.fill.get_unchecked_mut(b) = (f + 1) as u8;
            }
        }
    }

    /// Writes out what every bucket still holds.
    ///
    /// # Safety
    /// As for [`Self::push`].
    unsafe fn flush(&mut self, out: *mut E, next: &mut [usize]) {
        for (b, (f, s)) in self.fill.iter_mut().zip(&mut self.first).enumerate() {
            let (f, s) = (std::mem::take(f) as usize, std::mem::take(s) as usize);
            // SAFETY: the caller's promise, as in push.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.held.as_ptr().add(b * E::LINE + s),
                    out.add(next[b]),
                    f - s,
                )
            };
            next[b] += f - s;
        }
        // The streaming stores above are ordered before whatever the slab's thread does next
        // (its caller hands the buffer to other threads).
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SFENCE is SSE, part of x86_64's baseline.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
    }
}

/// Copies one 64-byte line of entries to `dst`, past the caches where the CPU can: the
/// destination is written whole, so reading it first (as a plain store would) only costs.
///
/// # Safety
/// `src` is readable and `dst` writable for 64 bytes; `dst` is 64-byte aligned.
#[inline(always)]
unsafe fn write_line<E>(src: *const E, dst: *mut E) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's promise; MOVNTI is SSE2, part of x86_64's baseline.
    unsafe {
        use std::arch::x86_64::_mm_stream_si64;
        let (src, dst) = (src.cast::<i64>(), dst.cast::<i64>());
        for w in 0..8 {
            _mm_stream_si64(dst.add(w), src.add(w).read_unaligned());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's promise.
    unsafe {
        std::ptr::copy_nonoverlapping(src.cast::<u8>(), dst.cast::<u8>(), 64)
    };
}

/// Buckets with more entries than this are partitioned and finished on all threads: a field
/// whose values crowd into a few buckets (a few exponents of a float, a few levels) would
/// otherwise leave them to a few threads.
const SHARED: usize = 1 << 20;
/// Entries a thread counts and scatters at a time when a bucket is shared.
const SHARED_BLOCK: usize = 1 << 16;

/// [`Finisher::finish`] of one bucket, partitioned on all threads first when it is large;
/// `fin` serves the calling thread.
fn finish_shared<E: Packed>(bucket: &mut [E], base: u64, shift: u32, fin: &mut Finisher<E>) -> usize {
    let n = bucket.len();
    if n <= SHARED || shift == 0 {
        return fin.finish(bucket, base, shift, 0);
    }
    // The keys' own range first, as in Finisher::finish.
    let (min, max) = bucket
        .par_chunks(SHARED_BLOCK)
        .map(|block| block.iter().fold((u64::MAX, 0), |(lo, hi), e| (lo.min(e.bits()), hi.max(e.bits()))))
        .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    let (skip, base, shift) = (min - base, min, bits_of(max - min));
    if shift == 0 {
        let d = fin.finish_within(bucket, base, 0, 0);
        return rebase(&mut bucket[..d], skip);
    }
    let sub = shift.saturating_sub(FANOUT_BITS);
    let parts = (((1u64 << shift) - 1) >> sub) as usize + 1;
    let part = move |e: &E| ((e.bits() - base) >> sub) as usize;
    let counts: Vec<Vec<usize>> = bucket
        .par_chunks(SHARED_BLOCK)
        .map(|block| {
            let mut h = vec![0usize; parts];
            for e in block {
                h[part(e)] += 1;
            }
            h
        })
        .collect();
    let (starts, sizes) = runs_of(&counts, parts);
    let mut tmp = crate::mem::with_capacity::<E>(n);
    let out = Shared(tmp.spare_capacity_mut().as_mut_ptr().cast::<E>());
    bucket.par_chunks(SHARED_BLOCK).zip(starts).for_each(|(block, mut next)| {
        let out = &out;
        for e in block {
            let p = part(e);
            // SAFETY: block c's runs [starts[c][p], + counts[c][p]) partition 0..n; each block
            // writes only inside its own runs, each slot once.
            unsafe { out.0.add(next[p]).write(*e) };
            next[p] += 1;
        }
    });
    // SAFETY: the blocks wrote all n slots (see above).
    unsafe { tmp.set_len(n) };
    let distinct = finish_parts(&mut tmp, &sizes, base, sub, false);
    let (mut j, mut at) = (0, 0);
    for (p, (&size, &d)) in sizes.iter().zip(&distinct).enumerate() {
        for (slot, e) in bucket[j..j + d].iter_mut().zip(&tmp[at..at + d]) {
            *slot = E::sum(skip + ((p as u64) << sub) + e.offset(), e.summed());
        }
        j += d;
        at += size;
    }
    j
}

/// Key bits that offsets up to `span` need.
fn bits_of(span: u64) -> u32 {
    64 - span.leading_zeros()
}

/// Moves sums counted from a later first key (`skip` keys on) back to the bucket's own first
/// key; returns how many there are.
fn rebase<E: Packed>(head: &mut [E], skip: u64) -> usize {
    if skip != 0 {
        for e in head.iter_mut() {
            *e = E::sum(skip + e.offset(), e.summed());
        }
    }
    head.len()
}

/// One thread's buffers for finishing buckets: a table of sums, and a partition target for
/// each level of partitioning.
#[derive(Default)]
struct Finisher<E> {
    table: Vec<i64>,
    levels: Vec<Vec<E>>,
}

/// A table entry counts a voxel here (and adds its change below): a slot holding 0 saw no
/// voxel, and the sum is read back from the low bits (at most 2^23 voxels a bucket, see
/// [`Finisher::finish`]).
const ONE_VOXEL: i64 = 1 << VOXEL_SHIFT;
const VOXEL_SHIFT: u32 = 40;

impl<E: Packed> Finisher<E> {
    /// Leaves at the head of `bucket` its distinct keys in increasing order with their summed
    /// changes ([`Packed::sum`], the offset from `base`, the first key of the bucket's range
    /// of `2^shift` keys); returns how many there are.
    fn finish(&mut self, bucket: &mut [E], base: u64, shift: u32, level: usize) -> usize {
        let n = bucket.len();
        if n <= SORTED || shift == 0 {
            return self.finish_within(bucket, base, shift, level);
        }
        // The keys' own range first: a bucket of a few keys (a field of few levels) is then
        // counted in a small table, or summed, instead of being partitioned level by level.
        let (min, max) =
            bucket.iter().fold((u64::MAX, 0), |(lo, hi), e| (lo.min(e.bits()), hi.max(e.bits())));
        let d = self.finish_within(bucket, min, bits_of(max - min), level);
        rebase(&mut bucket[..d], min - base)
    }

    /// [`Self::finish`] on keys known to lie in `base..base + 2^shift`.
    fn finish_within(&mut self, bucket: &mut [E], base: u64, shift: u32, level: usize) -> usize {
        let n = bucket.len();
        if n == 0 {
            return 0;
        }
        if shift == 0 {
            let sum = bucket.iter().map(|e| e.change() as i64).sum();
            bucket[0] = E::sum(0, sum);
            return 1;
        }
        if shift <= TABLE_BITS && (1usize << shift) <= TABLE_SPREAD * n && n < 1 << 23 {
            return self.count(bucket, base, shift);
        }
        if n <= SORTED {
            bucket.sort_unstable_by_key(|e| e.bits());
            let mut j = 0;
            let mut i = 0;
            while i < n {
                let key = bucket[i].bits();
                let mut sum = 0i64;
                while i < n && bucket[i].bits() == key {
                    sum += bucket[i].change() as i64;
                    i += 1;
                }
                bucket[j] = E::sum(key - base, sum);
                j += 1;
            }
            return j;
        }
        self.partition(bucket, base, shift, level)
    }

    /// Sums the changes of each key in a table indexed by the key's offset, then lists the
    /// keys present.
    fn count(&mut self, bucket: &mut [E], base: u64, shift: u32) -> usize {
        let table = &mut self.table;
        table.clear();
        table.resize(1 << shift, 0);
        for e in bucket.iter() {
            // The offset is below 2^shift: the bucket's range.
            table[(e.bits() - base) as usize] += ONE_VOXEL + e.change() as i64;
        }
        let mut j = 0;
        for (offset, &t) in table.iter().enumerate() {
            if t != 0 {
                let voxels = (t + ONE_VOXEL / 2) >> VOXEL_SHIFT;
                bucket[j] = E::sum(offset as u64, t - voxels * ONE_VOXEL);
                j += 1;
            }
        }
        j
    }

    /// Splits the bucket on its next [`FANOUT_BITS`] key bits into this level's buffer, finishes
    /// each part, and gathers their sums at the bucket's head.
    fn partition(&mut self, bucket: &mut [E], base: u64, shift: u32, level: usize) -> usize {
        let sub = shift.saturating_sub(FANOUT_BITS);
        let parts = (((1u64 << shift) - 1) >> sub) as usize + 1;
        let part = |e: &E| ((e.bits() - base) >> sub) as usize;
        let mut starts = vec![0usize; parts + 1];
        for e in bucket.iter() {
            starts[part(e) + 1] += 1;
        }
        for p in 0..parts {
            starts[p + 1] += starts[p];
        }
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, Vec::new);
        }
        let mut tmp = std::mem::take(&mut self.levels[level]);
        tmp.clear();
        tmp.resize(bucket.len(), E::default());
        let mut next = starts.clone();
        for &e in bucket.iter() {
            let p = part(&e);
            tmp[next[p]] = e;
            next[p] += 1;
        }
        let mut j = 0;
        for p in 0..parts {
            let part_base = (p as u64) << sub;
            let d = self.finish(&mut tmp[starts[p]..starts[p + 1]], base + part_base, sub, level + 1);
            for (k, e) in tmp[starts[p]..starts[p] + d].iter().enumerate() {
                bucket[j + k] = E::sum(part_base + e.offset(), e.summed());
            }
            j += d;
        }
        self.levels[level] = tmp;
        j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distinct keys of `bucket` (offsets from `base`) and their summed changes, by a sort.
    fn sorted_sums<E: Packed>(bucket: &[E], base: u64) -> Vec<(u64, i64)> {
        let mut sums: Vec<(u64, i64)> = bucket.iter().map(|e| (e.bits() - base, e.change() as i64)).collect();
        sums.sort_unstable();
        sums.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 += b.1;
            }
            same
        });
        sums
    }

    /// The sums `finish` leaves against a sort and a run sum, on random buckets of every kind:
    /// ranges counted in the table, sorted, partitioned once or several times (down to single
    /// keys), dense and sparse, in both entry widths.
    fn finishes_like_a_sort<E: Packed>(key_range: u64, pack: impl Fn(u64, i8) -> E) {
        let mut r = crate::synthetic::noise(15);
        let mut fin = Finisher::default();
        for &shift in &[0u32, 1, 3, 8, 9, 12, 16, 17, 20, 24] {
            for &n in &[1usize, 2, 7, 255, 256, 257, 1000, 5000, 70_000] {
                let span = 1u64 << shift;
                let base = r() % (key_range - span);
                // Half the draws keep to a few keys, so that keys repeat.
                let keys = if r() & 1 == 0 { span } else { span.min(1 + r() % 64) };
                let mut bucket: Vec<E> =
                    (0..n).map(|_| pack(base + r() % keys * (span / keys), (r() % 27) as i8 - 13)).collect();
                let want = sorted_sums(&bucket, base);
                let d = fin.finish(&mut bucket, base, shift, 0);
                let got: Vec<(u64, i64)> = bucket[..d].iter().map(|e| (e.offset(), e.summed())).collect();
                assert_eq!(got, want, "shift {shift}, {n} entries, {keys} keys");
            }
        }
    }

    /// A bucket too large for one thread, its entries crowded into a few keys, spread over its
    /// range, or crowded into two keys side by side (one part of over 2^20 entries that is
    /// partitioned again): finished on all threads, it finishes as a sort would.
    fn shared_like_a_sort<E: Packed>(cases: &[(u32, u64)], pack: impl Fn(u64, i8) -> E) {
        let mut r = crate::synthetic::noise(16);
        for &(shift, keys) in cases {
            let n = 3 * SHARED + 17;
            let base = 5 << 24;
            let span = 1u64 << shift;
            let key = |x: u64| {
                base + if keys == 0 { [0, 1, span - 1][(x % 3) as usize] } else { x % keys * (span / keys) }
            };
            let mut bucket: Vec<E> = (0..n).map(|_| pack(key(r()), (r() % 27) as i8 - 13)).collect();
            let want = sorted_sums(&bucket, base);
            let d = finish_shared(&mut bucket, base, shift, &mut Finisher::default());
            let got: Vec<(u64, i64)> = bucket[..d].iter().map(|e| (e.offset(), e.summed())).collect();
            assert!(got == want, "shift {shift}, {keys} keys");
        }
    }

    #[test]
    fn a_shared_bucket_finishes_like_a_sort() {
        let cases = [(20u32, 3u64), (20, 1 << 20), (24, 1000), (24, 1 << 24), (24, 0)];
        shared_like_a_sort::<u64>(&cases, |bits, ch| (bits as i32).wrapping_sub(i32::MIN).pack(ch));
        let cases = [(40u32, 5u64), (56, 1 << 20), (56, 0)];
        shared_like_a_sort::<u128>(&cases, |bits, ch| ((bits ^ (1 << 63)) as i64).pack(ch));
    }

    #[test]
    fn finishing_a_bucket_equals_sorting_it() {
        finishes_like_a_sort::<u64>(1 << 32, |bits, ch| (bits as i32).wrapping_sub(i32::MIN).pack(ch));
        finishes_like_a_sort::<u128>(u64::MAX, |bits, ch| ((bits ^ (1 << 63)) as i64).pack(ch));
    }

    #[test]
    fn a_sum_entry_holds_large_sums_of_either_sign() {
        for sum in [0i64, 1, -1, 13 << 30, -(13 << 30), (1 << 39) - 1, -(1 << 39)] {
            for offset in [0u64, 1, (1 << 24) - 1] {
                assert_eq!((u64::sum(offset, sum).offset(), u64::sum(offset, sum).summed()), (offset, sum));
                assert_eq!((u128::sum(offset, sum).offset(), u128::sum(offset, sum).summed()), (offset, sum));
            }
        }
    }
}
