//! The working column of a reduction: a sum over Z/2 of coboundaries whose pivot (earliest
//! entry: smallest diameter, then largest number) is wanted again and again.
//!
//! A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) rather than a binary heap: a
//! reduction only ever adds columns whose sum comes at or after the current pivot (the pivot
//! is its earliest entry), so the pivot never moves back, and a monotone queue suffices. The
//! pieces of such a column (the coboundaries of a simplex and of those its reduction added)
//! may have entries before the pivot, but each an even number of times: they cancel, and are
//! dropped as they come. Entries go into a bucket by the highest bit in which they differ from the last
//! pivot: a push is an append, and each entry is moved down a few times before it is the
//! pivot. The columns that make a sphere's class sum a million entries, where every step of
//! a binary heap missed the cache.

use super::index::{Complex, Entry};

/// The most entries of a bucket sorted when it is emptied (see [`Heap::refill`]).
const SORTED_BUCKET: usize = 512;

/// A key of the radix heap: an integer that orders like the filtration, earliest least.
pub trait Key: Copy + Ord + Default + std::ops::BitXor<Output = Self> {
    const BITS: usize;
    fn leading_zeros(self) -> usize;
}

impl Key for u128 {
    const BITS: usize = 128;
    #[inline(always)]
    fn leading_zeros(self) -> usize {
        u128::leading_zeros(self) as usize
    }
}

impl Key for u64 {
    const BITS: usize = 64;
    #[inline(always)]
    fn leading_zeros(self) -> usize {
        u64::leading_zeros(self) as usize
    }
}

/// Diameters are finite and not negative (-0 is read as 0), so their bits grow with them;
/// ties go to the larger number, so it is inverted.
#[inline(always)]
fn wide(e: Entry) -> u128 {
    debug_assert!(e.diameter.is_finite() && e.diameter.is_sign_positive());
    (e.diameter.to_bits() as u128) << 64 | (!e.index) as u128
}

#[inline(always)]
fn from_wide(k: u128) -> Entry {
    Entry { diameter: f32::from_bits((k >> 64) as u32), index: !(k as u64) }
}

/// 64-bit keys for a column whose diameters' bits span little and whose numbers are small:
/// the diameter's bits above the shortest edge's, then the inverted number in `index_bits`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Narrow {
    floor: u32,
    index_bits: u32,
    /// The low `index_bits` bits.
    mask: u64,
}

impl Narrow {
    /// The layout for diameters from `shortest` to `longest` and numbers up to `most`, if
    /// 64 bits hold it.
    pub fn fitting(shortest: f32, longest: f32, most: u64) -> Option<Narrow> {
        if !(shortest.is_finite()
            && longest.is_finite()
            && shortest.is_sign_positive()
            && shortest <= longest)
        {
            return None;
        }
        let (floor, span) = (shortest.to_bits(), longest.to_bits() - shortest.to_bits());
        let index_bits = (64 - most.leading_zeros()).max(1);
        let mask = u64::MAX >> (64 - index_bits);
        // Below 64 bits for the numbers: a shift by 64 is not one.
        (index_bits < 64 && index_bits + (32 - span.leading_zeros()) <= 64).then_some(Narrow {
            floor,
            index_bits,
            mask,
        })
    }

    #[inline(always)]
    fn key(self, e: Entry) -> u64 {
        debug_assert!(e.diameter.to_bits() >= self.floor && e.index <= self.mask);
        ((e.diameter.to_bits() - self.floor) as u64) << self.index_bits | (!e.index & self.mask)
    }

    #[inline(always)]
    fn entry(self, k: u64) -> Entry {
        Entry { diameter: f32::from_bits((k >> self.index_bits) as u32 + self.floor), index: !k & self.mask }
    }
}

/// A working column (see the module docs), its keys 64 bits wide when they fit (half the
/// bytes moved: the sphere's class took 25% less time so), 128 otherwise.
#[derive(Clone)]
pub enum Column {
    Narrow(Heap<u64>, Narrow),
    Wide(Heap<u128>),
}

impl Column {
    /// An empty column for cofacets of dimension `dim + 1` of the complex `c` (every one
    /// within its threshold).
    pub fn for_cofacets(c: &Complex, dim: usize) -> Column {
        let most = c.table.get(c.d.len(), dim + 2).saturating_sub(1);
        Column::with(Narrow::fitting(c.shortest, c.threshold, most))
    }

    /// An empty column with narrow keys of `layout`, or wide ones.
    pub fn with(layout: Option<Narrow>) -> Column {
        match layout {
            Some(n) => Column::Narrow(Heap::default(), n),
            None => Column::Wide(Heap::default()),
        }
    }

    /// Adds `e`; an entry before the last pivot found is dropped (see the module docs: it is
    /// one of a pair that cancels).
    #[inline]
    pub fn push(&mut self, e: Entry) {
        match self {
            Column::Narrow(h, n) => h.push_key(n.key(e)),
            Column::Wide(h) => h.push_key(wide(e)),
        }
    }

    /// The pivot: the earliest entry that occurs an odd number of times (pairs cancel and are
    /// dropped), left in the column; None when all cancel.
    pub fn pivot(&mut self) -> Option<Entry> {
        match self {
            Column::Narrow(h, n) => h.pivot().map(|k| n.entry(k)),
            Column::Wide(h) => h.pivot().map(from_wide),
        }
    }

    /// The number of entries held, cancelled pairs not yet dropped included.
    pub fn held(&self) -> usize {
        match self {
            Column::Narrow(h, _) => h.len,
            Column::Wide(h) => h.len,
        }
    }

    /// Drops every pair of equal entries (a long chain of additions otherwise carries each
    /// cancelled pair until it becomes the pivot).
    pub fn compact(&mut self) {
        match self {
            Column::Narrow(h, _) => h.compact(),
            Column::Wide(h) => h.compact(),
        }
    }
}

/// The radix heap of a [`Column`]: bucket 0 holds the copies of the last pivot, bucket `b`
/// (1 to `K::BITS`) the keys whose highest bit differing from it is bit `b - 1`.
#[derive(Clone, Default)]
pub struct Heap<K> {
    buckets: Vec<Vec<K>>,
    /// The key of the last pivot found (every entry's key is at least this).
    last: K,
    len: usize,
    /// Bit `b - 1` set when bucket `b` has entries: the first is found at once.
    filled: u128,
}

impl<K: Key> Heap<K> {
    #[inline(always)]
    fn bucket(&self, k: K) -> usize {
        if k == self.last { 0 } else { K::BITS - (k ^ self.last).leading_zeros() }
    }

    #[inline]
    fn push_key(&mut self, k: K) {
        if k < self.last {
            return;
        }
        let b = self.bucket(k);
        if self.buckets.len() <= b {
            self.buckets.resize_with(K::BITS + 1, Vec::new);
        }
        self.buckets[b].push(k);
        if b > 0 {
            self.filled |= 1 << (b - 1);
        }
        self.len += 1;
    }

    /// The earliest key held an odd number of times, left in bucket 0 (see [`Column::pivot`]).
    fn pivot(&mut self) -> Option<K> {
        loop {
            if let Some(copies) = self.buckets.first().map(|b| b.len()).filter(|&c| c > 0) {
                self.buckets[0].truncate(copies % 2);
                self.len -= copies - copies % 2;
                if copies % 2 == 1 {
                    return Some(self.last);
                }
            }
            if !self.refill() {
                return None;
            }
        }
    }

    /// Moves the least entry's copies into bucket 0 from the first bucket that has entries;
    /// false when the column is empty. Every entry of that bucket comes before those of the
    /// buckets above, so a small one is sorted and its leading pairs dropped at once (a
    /// column summing many coboundaries cancels most of what it meets): the sphere's class
    /// took 10% less time so.
    fn refill(&mut self) -> bool {
        if self.filled == 0 {
            return false;
        }
        let i = self.filled.trailing_zeros() as usize + 1;
        self.filled &= !(1 << (i - 1));
        let mut moved = std::mem::take(&mut self.buckets[i]);
        let mut first = 0;
        if moved.len() <= SORTED_BUCKET {
            moved.sort_unstable();
            // Drop the runs of equal entries of even length before the first odd one.
            while first < moved.len() {
                let same = moved[first..].iter().take_while(|&&k| k == moved[first]).count();
                if same % 2 == 1 {
                    break;
                }
                first += same;
            }
            self.len -= first;
            self.last = moved.get(first).copied().unwrap_or(self.last);
        } else {
            self.last = moved.iter().copied().min().unwrap_or(self.last);
        }
        // Each entry differs from the new least in a lower bit than before: a lower bucket.
        for &k in &moved[first..] {
            let b = self.bucket(k);
            self.buckets[b].push(k);
            if b > 0 {
                self.filled |= 1 << (b - 1);
            }
        }
        moved.clear();
        self.buckets[i] = moved;
        true
    }

    fn compact(&mut self) {
        let mut all: Vec<K> = self.buckets.iter_mut().flat_map(|b| b.drain(..)).collect();
        sum_mod2(&mut all, |&k| k);
        self.len = 0;
        self.filled = 0;
        for k in all {
            self.push_key(k);
        }
    }
}

/// Sorts `v` by `key` and keeps one of each run of equal keys of odd length: the sum over
/// Z/2 of the entries listed.
pub fn sum_mod2<T: Copy, K: Ord>(v: &mut Vec<T>, key: impl Fn(&T) -> K) {
    v.sort_unstable_by_key(&key);
    let (mut kept, mut k) = (0, 0);
    while k < v.len() {
        let same = v[k..].iter().take_while(|x| key(x) == key(&v[k])).count();
        if same % 2 == 1 {
            v[kept] = v[k];
            kept += 1;
        }
        k += same;
    }
    v.truncate(kept);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn narrow_keys_order_and_invert_as_wide_ones() {
        let mut next = crate::synthetic::noise(9);
        for (shortest, longest, most) in
            [(0.0, 0.5, 1 << 30), (1e-3, 1.4, (1 << 34) + 5), (0.25, 0.25, 1), (0.0, 7.0, 0)]
        {
            let n = Narrow::fitting(shortest, longest, most).expect("fits");
            let mut es: Vec<Entry> = (0..500)
                .map(|_| {
                    let t = (next() % 1001) as f32 / 1000.0;
                    Entry { diameter: shortest + t * (longest - shortest), index: next() % (most + 1) }
                })
                .filter(|e| e.diameter <= longest)
                .collect();
            es.extend([Entry { diameter: shortest, index: most }, Entry { diameter: longest, index: 0 }]);
            for &e in &es {
                assert_eq!(n.entry(n.key(e)), e);
            }
            for w in es.windows(2) {
                assert_eq!(n.key(w[0]).cmp(&n.key(w[1])), wide(w[0]).cmp(&wide(w[1])), "{w:?}");
            }
        }
        // Too many bits (a zero-length edge leaves every diameter's bits): wide keys.
        assert_eq!(Narrow::fitting(0.0, 0.5, 1 << 36), None);
        // Numbers of 64 bits, even with every diameter equal.
        assert_eq!(Narrow::fitting(1.0, 1.0, u64::MAX), None);
        assert!(Narrow::fitting(1.0, 1.0, u64::MAX >> 1).is_some());
        assert_eq!(Narrow::fitting(0.0, 1.0, u64::MAX >> 1), None);
        assert_eq!(Narrow::fitting(f32::MIN_POSITIVE, f32::MAX, 1 << 40), None);
    }

    /// Against a plain count per entry, with pivots found between pushes at or after them.
    #[test]
    fn pivots_are_the_earliest_odd_entries() {
        let mut next = crate::synthetic::noise(5);
        for round in 0..400 {
            // Half the rounds with narrow keys (diameters from 0, numbers to 8; the floor rises
            // by at most 1.5 a step, 40 steps).
            let narrow = Narrow::fitting(0.0, 64.0, 8);
            assert!(narrow.is_some());
            let mut col = Column::with(if round % 2 == 0 { narrow } else { None });
            let mut counts: BTreeMap<(u32, std::cmp::Reverse<u64>), usize> = BTreeMap::new();
            let mut floor = (0f32, u64::MAX);
            for _ in 0..(round % 40 + 1) {
                // Pushes at or after the last pivot (few distinct values: many equal).
                for _ in 0..next() % 12 {
                    let d = floor.0 + (next() % 4) as f32 * 0.5;
                    let i = if d == floor.0 { next() % (floor.1.min(8) + 1) } else { next() % 8 };
                    let e = Entry { diameter: d, index: i };
                    col.push(e);
                    *counts.entry((d.to_bits(), std::cmp::Reverse(i))).or_default() += 1;
                    // A pair before the last pivot, as the pieces of an added column have.
                    if floor.0 > 0.0 && next().is_multiple_of(3) {
                        let early = Entry { diameter: floor.0 - 0.5, index: next() % 8 };
                        col.push(early);
                        col.push(early);
                    }
                }
                if round % 7 == 0 {
                    col.compact();
                }
                let want = counts
                    .iter()
                    .find(|&(_, &n)| n % 2 == 1)
                    .map(|(&(d, std::cmp::Reverse(i)), _)| Entry { diameter: f32::from_bits(d), index: i });
                assert_eq!(col.pivot(), want, "round {round}");
                assert_eq!(want.is_none(), col.held() == 0);
                if let Some(p) = want {
                    floor = (p.diameter, p.index);
                }
            }
        }
    }
}
