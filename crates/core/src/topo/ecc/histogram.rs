//! Per-value change sums for fields of at most 2^16 possible values (u8, i8, u16, i16): a
//! histogram indexed by key.

use super::PerValue;
use crate::field::Key;

/// Change sums and voxel counts per possible key, for types with at most 2^16 values.
///
/// The hot loop adds one packed word per voxel: the voxel count in the high 32 bits and
/// `change + 16` (never negative) in the low 32, flushed to wide totals before the low half
/// could overflow. For types of at most 2^8 values the words are kept in [`LANES`] copies,
/// voxel `i` adding to copy `i % LANES`: runs of one value (a background, a flat field) would
/// otherwise chain every add on the one before it through memory (0.20 GVox/s on a constant
/// u8 field against 0.33 on noise, one thread of the 2-core VM).
pub(super) struct Histogram {
    lo: i64,
    bins: usize,
    /// `lanes * bins` words, copy-major.
    packed: Vec<u64>,
    lanes: usize,
    pending: usize,
    sums: Vec<i64>,
    /// Voxels counted per bin. The packed AVX-512 kernel counts only the voxels whose change is
    /// not 0 and marks a value held by the others alone with a count of 1
    /// ([`Self::mark_present`]): a count is not 0 exactly where the value occurs, which is all
    /// that the counts are read for.
    counts: Vec<u64>,
    /// Voxel counts per (bin, change) pair of a 256-bin histogram, in two copies (the second
    /// for spread adds alone), filled by [`Self::add_pairs`] (none until then).
    pairs: Option<Box<[[u32; PAIRS]; 2]>>,
}

/// Entries of one copy of [`Histogram::pairs`]: 256 bins of 2^CHANGE_BITS changes.
const PAIRS: usize = 256 << Histogram::CHANGE_BITS;

/// Copies of the packed words for small histograms (see [`Histogram`]).
const LANES: usize = 4;

impl Histogram {
    const FLUSH_AT: usize = 1 << 26;

    pub(super) fn new(lo: i64, bins: usize) -> Self {
        // 2^16 bins in four copies would spill the cache that the hot loop lives in.
        let lanes = if bins <= 256 { LANES } else { 1 };
        Histogram {
            lo,
            bins,
            packed: vec![0; bins * lanes],
            lanes,
            pending: 0,
            sums: vec![0; bins],
            counts: vec![0; bins],
            pairs: None,
        }
    }

    /// Bits of a change in a pair's index: a voxel's change is 1 - singles + pairs - corners of
    /// its neighbourhood, or its negation, and so within [1 - 6 - 8, 1 + 12] = [-13, 13].
    pub(super) const CHANGE_BITS: u32 = 5;
    /// A change's bits in a pair's index are (change + CHANGE_SHIFT) mod 32: the common changes,
    /// -8 to 7, take one 64-byte cache line of each bin's row of 32 counts, so that the tables'
    /// lines in use fit the first-level cache.
    pub(super) const CHANGE_SHIFT: i8 = 8;

    /// The change whose bits in a pair's index are `low`.
    fn change_of(low: usize) -> i64 {
        let m = (1i64 << Self::CHANGE_BITS) - 1;
        ((low as i64 - i64::from(Self::CHANGE_SHIFT) + (m + 1) / 2) & m) - (m + 1) / 2
    }

    /// Counts voxels by their (bin, change) pairs, each given as bin << CHANGE_BITS | (change +
    /// CHANGE_SHIFT) mod 32 (256 bins). Against [`Self::add`]'s packed words this is one
    /// increment a voxel of an index made beforehand, with the vector instructions that made
    /// the changes.
    ///
    /// `spread`: the second and fourth voxel of each four count in a second copy, so that runs
    /// of one pair (a flat field) do not chain every add on the one before it through memory.
    /// Without it everything counts in the first copy: meant for counts that leave out the
    /// changes of 0, which flat runs have; the lines in use (256 bins x 16 common changes x 4
    /// bytes) then take 16 KiB of the first-level cache rather than 32 (two copies took 12% more
    /// time on noise on the VM; `docs/PERFORMANCE.md`).
    #[inline(always)]
    pub(super) fn add_pairs(&mut self, pairs: &[u16], spread: bool) {
        debug_assert_eq!(self.bins, 256);
        if self.pending + pairs.len() > Self::FLUSH_AT {
            self.flush();
        }
        self.pending += pairs.len();
        let copies = self.pairs.get_or_insert_with(|| Box::new([[0; PAIRS]; 2])).as_flattened_mut();
        // Where the odd voxels count: the second copy or the first. The masks keep the index in
        // the tables (and the compiler's bounds checks out).
        let second = if spread { PAIRS } else { 0 };
        let (even, odd) = (|p: u16| p as usize & (PAIRS - 1), |p: u16| (p as usize & (PAIRS - 1)) | second);
        let (fours, rest) = pairs.as_chunks::<4>();
        for &[a, b, c, d] in fours {
            copies[even(a)] += 1;
            copies[odd(b)] += 1;
            copies[even(c)] += 1;
            copies[odd(d)] += 1;
        }
        for &a in rest {
            copies[even(a)] += 1;
        }
    }

    #[inline(always)]
    pub(super) fn add<K: Key>(&mut self, keys: &[K], changes: &[i8]) {
        let lo = self.lo;
        self.add_by(keys, changes, |k| (k.to_i64() - lo) as usize);
    }

    /// [`Self::add`] for the 8-bit keys of [`super::narrow`]: key `k` is bin `k + 128`.
    #[inline(always)]
    pub(super) fn add_8bit(&mut self, keys: &[i8], changes: &[i8]) {
        debug_assert_eq!(self.bins, 256);
        self.add_by(keys, changes, |k| (k as i16 + 128) as usize);
    }

    #[inline(always)]
    fn add_by<K: Copy>(&mut self, keys: &[K], changes: &[i8], bin: impl Fn(K) -> usize) {
        // A line can be longer than FLUSH_AT (a long 1D field is a single line).
        for (keys, changes) in keys.chunks(Self::FLUSH_AT).zip(changes.chunks(Self::FLUSH_AT)) {
            if self.pending + keys.len() > Self::FLUSH_AT {
                self.flush();
            }
            self.pending += keys.len();
            let word = |k: K, ch: i8| (bin(k), (1u64 << 32) + (ch as i64 + 16) as u64);
            if self.lanes == LANES {
                let (b, p) = (self.bins, &mut self.packed);
                let mut quads = keys.chunks_exact(LANES).zip(changes.chunks_exact(LANES));
                for (k, c) in &mut quads {
                    for lane in 0..LANES {
                        let (i, w) = word(k[lane], c[lane]);
                        p[lane * b + i] += w;
                    }
                }
                let done = keys.len() / LANES * LANES;
                for (&k, &ch) in keys[done..].iter().zip(&changes[done..]) {
                    let (i, w) = word(k, ch);
                    p[i] += w;
                }
            } else {
                for (&k, &ch) in keys.iter().zip(changes) {
                    let (i, w) = word(k, ch);
                    self.packed[i] += w;
                }
            }
        }
    }

    /// Whether each of the 256 bins of a pairs histogram has no voxel counted yet.
    pub(super) fn uncounted(&self) -> [bool; 256] {
        debug_assert_eq!(self.bins, 256);
        let row = 1 << Self::CHANGE_BITS;
        std::array::from_fn(|bin| {
            self.counts[bin] == 0
                && self
                    .pairs
                    .iter()
                    .flat_map(|copies| copies.iter())
                    .all(|copy| copy[bin * row..][..row].iter().all(|&n| n == 0))
        })
    }

    /// Marks `bin`'s value present where no voxel of it is counted.
    pub(super) fn mark_present(&mut self, bin: usize) {
        self.counts[bin] = self.counts[bin].max(1);
    }

    fn flush(&mut self) {
        for lane in self.packed.chunks_exact_mut(self.bins) {
            for ((p, s), c) in lane.iter_mut().zip(&mut self.sums).zip(&mut self.counts) {
                let count = *p >> 32;
                *s += (*p & 0xffff_ffff) as i64 - 16 * count as i64;
                *c += count;
                *p = 0;
            }
        }
        for copy in self.pairs.iter_mut().flat_map(|copies| copies.iter_mut()) {
            for (i, n) in copy.iter_mut().enumerate().filter(|(_, n)| **n > 0) {
                let (bin, change) =
                    (i >> Self::CHANGE_BITS, Self::change_of(i & ((1 << Self::CHANGE_BITS) - 1)));
                self.counts[bin] += u64::from(*n);
                self.sums[bin] += change * i64::from(*n);
                *n = 0;
            }
        }
        self.pending = 0;
    }

    pub(super) fn merge(mut self, mut other: Histogram) -> Histogram {
        self.flush();
        other.flush();
        for (a, b) in self.sums.iter_mut().zip(&other.sums) {
            *a += b;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self
    }

    /// The first bin's key, and the voxels counted (see `counts`) and change sum of each bin.
    pub(super) fn into_bins(mut self) -> (i64, Vec<u64>, Vec<i64>) {
        self.flush();
        (self.lo, self.counts, self.sums)
    }

    /// Thresholds present (keys mapped by `threshold`) and the change sum at each.
    pub(super) fn into_per_value<K: Key, T>(mut self, threshold: impl Fn(K) -> T) -> PerValue<T> {
        self.flush();
        let present = (0..self.counts.len()).filter(|&i| self.counts[i] > 0);
        let thresholds = present.clone().map(|i| threshold(K::from_i64(self.lo + i as i64))).collect();
        let sums = present.map(|i| self.sums[i]).collect();
        (thresholds, sums)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More voxels of one pair than a 16-bit counter holds, in calls of every size, counted in
    /// one copy and spread over two: the count and the change sum are exact, and the second
    /// copy holds the second and fourth voxel of each four of a call when spread, else none.
    #[test]
    fn pairs_count_exactly_in_calls_of_any_size() {
        for spread in [false, true] {
            for call in [1, 3, 64, 1 << 15, (1 << 16) + 5] {
                // Bits 2, 3 and 7: a copy's offset ORed in wrongly would move the count.
                let (bin, change) = (4usize, 4i64);
                let code = (change + i64::from(Histogram::CHANGE_SHIFT)) as usize & 31;
                let pair = (bin << Histogram::CHANGE_BITS | code) as u16;
                let total = 200_003;
                let mut hist = Histogram::new(0, 256);
                let pairs = vec![pair; call];
                let mut left = total;
                while left > 0 {
                    let n = left.min(call);
                    hist.add_pairs(&pairs[..n], spread);
                    left -= n;
                }
                let second = hist.pairs.as_ref().unwrap()[1].iter().sum::<u32>();
                // The second and fourth of each four in a call, the calls full but the last.
                let ones = |n: usize| n / 4 * 2;
                let spread_ones = total / call * ones(call) + ones(total % call);
                assert_eq!(
                    second as usize,
                    if spread { spread_ones } else { 0 },
                    "spread {spread}, calls of {call}"
                );
                let (_, counts, sums) = hist.into_bins();
                assert_eq!(
                    (counts[bin], sums[bin]),
                    (total as u64, change * total as i64),
                    "spread {spread}, calls of {call}"
                );
                assert_eq!(counts.iter().sum::<u64>(), total as u64);
            }
        }
    }
}
