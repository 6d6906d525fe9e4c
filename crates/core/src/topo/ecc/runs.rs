//! Sorted runs of per-value change sums, merged: how a streamed wide-type field's slabs, each
//! summed on its own, become one curve.
//!
//! Runs are merged [`FANOUT`] at a time as they arrive, like a counter's digits carrying: each
//! entry is merged O(log slabs / log FANOUT) times, and memory stays near that of the curve
//! itself (a field of few distinct values holds at most FANOUT - 1 short runs a level; 16
//! slabs of a field of many peak within a few percent of merging two at a time). A merge
//! runs on all threads: every run is cut before the same thresholds into small pieces, and the
//! pieces are merged in parallel, each in the cache, pairwise as a tree.

use super::PerValue;
use crate::field::Sample;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Runs merged at once: a slab's entries are merged again only after this many more slabs.
const FANOUT: usize = 8;

/// Entries of a merge's piece: its parts and their merges fit a core's L2 cache.
const PIECE: usize = 1 << 14;

/// The change sums of the slabs seen so far, as sorted runs of (threshold, sum), each with
/// its level: how many merges made it.
pub(super) struct Runs<T>(Vec<(PerValue<T>, u32)>);

impl<T: Sample> Runs<T> {
    pub(super) fn new() -> Runs<T> {
        Runs(Vec::new())
    }

    /// Adds a slab's run: distinct thresholds in the filtration's order, and their sums.
    pub(super) fn add<const SUP: bool>(&mut self, run: PerValue<T>) {
        let runs = &mut self.0;
        runs.push((run, 0));
        // FANOUT runs of one level make one of the next, which may complete that level too.
        loop {
            let level = runs.last().expect("a run").1;
            let alike = runs.iter().rev().take_while(|r| r.1 == level).count();
            if alike < FANOUT {
                break;
            }
            let top: Vec<PerValue<T>> = runs.drain(runs.len() - FANOUT..).map(|r| r.0).collect();
            runs.push((merge::<T, SUP>(&top), level + 1));
        }
    }

    /// All runs merged into one (a single run as it is: no copy of the curve).
    pub(super) fn finish<const SUP: bool>(mut self) -> PerValue<T> {
        if self.0.len() == 1 {
            return self.0.pop().expect("one run").0;
        }
        let runs: Vec<PerValue<T>> = self.0.into_iter().map(|r| r.0).collect();
        merge::<T, SUP>(&runs)
    }
}

/// Runs of distinct thresholds in the filtration's order (increasing, or decreasing for
/// superlevel sets), merged, the sums of a threshold in several added. Thresholds are exact
/// sample values, one per key (-0.0 is folded into 0.0), so comparing them compares keys.
pub(super) fn merge<T: Sample, const SUP: bool>(runs: &[PerValue<T>]) -> PerValue<T> {
    let n: usize = runs.iter().map(|r| r.0.len()).sum();
    if n == 0 {
        return PerValue::default();
    }
    // Cut every run before the same thresholds: quantiles of a sample of all the runs'
    // thresholds, each run sampled evenly in proportion to its length, so that a piece holds
    // about n / pieces entries however the runs overlap (slabs of a field that rises along z
    // hold disjoint ranges, and a cut by one run's thresholds would leave the others whole).
    let pieces = (n / PIECE).max(4 * rayon::current_num_threads()).min(n);
    let mut sample = Vec::with_capacity(4 * pieces + runs.len());
    for r in runs {
        let k = (r.0.len() * 4 * pieces).div_ceil(n);
        sample.extend((0..k).map(|j| r.0[j * r.0.len() / k]));
    }
    let order = |a: &T, b: &T| {
        if before::<T, SUP>(*a, *b) {
            std::cmp::Ordering::Less
        } else if before::<T, SUP>(*b, *a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    };
    sample.sort_unstable_by(order);
    let cut = |run: &[T], i: usize| match i {
        0 => 0,
        i if i == pieces => run.len(),
        i => {
            let at = sample[i * sample.len() / pieces];
            run.partition_point(|&x| before::<T, SUP>(x, at))
        }
    };
    let cuts: Vec<Vec<usize>> = (0..=pieces).map(|i| runs.iter().map(|r| cut(&r.0, i)).collect()).collect();

    let pieces: Vec<Vec<Part<T>>> = cuts
        .windows(2)
        .map(|w| {
            runs.iter().zip(w[0].iter().zip(&w[1])).map(|(r, (&a, &b))| (&r.0[a..b], &r.1[a..b])).collect()
        })
        .collect();

    // The pieces are merged a batch at a time, each into a scratch of its own, and the batch
    // is then copied to the output's end: the output is written front to back without gaps,
    // so only the memory of the merged entries is ever touched. (Writing each piece where it
    // would land without shared thresholds touched memory for every entry of the runs.)
    let (mut t, mut s) = (crate::mem::with_capacity::<T>(n), crate::mem::with_capacity::<i64>(n));
    let mut scratch: Vec<PerValue<T>> = vec![Default::default(); 4 * rayon::current_num_threads()];
    for batch in pieces.chunks(scratch.len()) {
        scratch.par_iter_mut().zip(batch).for_each(|(out, parts)| merge_parts_to::<T, SUP>(parts, out));
        let merged = &scratch[..batch.len()];
        let len: usize = merged.iter().map(|m| m.0.len()).sum();
        let mut copies = Vec::with_capacity(merged.len());
        let (mut t_rest, mut s_rest) =
            (&mut t.spare_capacity_mut()[..len], &mut s.spare_capacity_mut()[..len]);
        for m in merged {
            let (t_part, t_tail) = t_rest.split_at_mut(m.0.len());
            let (s_part, s_tail) = s_rest.split_at_mut(m.0.len());
            (t_rest, s_rest) = (t_tail, s_tail);
            copies.push((m, t_part, s_part));
        }
        copies.into_par_iter().for_each(|(m, t, s)| {
            t.write_copy_of_slice(&m.0);
            s.write_copy_of_slice(&m.1);
        });
        // SAFETY: the copies wrote the `len` slots after the output's end.
        unsafe {
            t.set_len(t.len() + len);
            s.set_len(s.len() + len);
        }
    }
    // Thresholds in several runs leave room unused; only its address space is given back.
    t.shrink_to_fit();
    s.shrink_to_fit();
    (t, s)
}

/// Part of a run: its thresholds and their sums.
type Part<'a, T> = (&'a [T], &'a [i64]);

/// Merges `parts` into the first slots of `t` and `s`, pairwise as a tree; returns how many
/// entries it wrote.
fn merge_parts_into<T: Sample, const SUP: bool>(
    parts: &[Part<T>],
    t: &mut [MaybeUninit<T>],
    s: &mut [MaybeUninit<i64>],
) -> usize {
    match parts {
        [] => 0,
        [one] => merge_into::<T, SUP>(*one, (&[], &[]), t, s),
        [a, b] => merge_into::<T, SUP>(*a, *b, t, s),
        _ => {
            let (l, r) = parts.split_at(parts.len() / 2);
            let (l, r) = (merged::<T, SUP>(l), merged::<T, SUP>(r));
            merge_into::<T, SUP>((&l.0, &l.1), (&r.0, &r.1), t, s)
        }
    }
}

/// `parts` merged into vectors of their own.
fn merged<T: Sample, const SUP: bool>(parts: &[Part<T>]) -> PerValue<T> {
    let mut out = PerValue::default();
    merge_parts_to::<T, SUP>(parts, &mut out);
    out
}

/// `parts` merged into `out`, replacing what it held (and keeping its memory).
fn merge_parts_to<T: Sample, const SUP: bool>(parts: &[Part<T>], out: &mut PerValue<T>) {
    let n = parts.iter().map(|p| p.0.len()).sum();
    let (t, s) = out;
    t.clear();
    s.clear();
    t.reserve(n);
    s.reserve(n);
    let k =
        merge_parts_into::<T, SUP>(parts, &mut t.spare_capacity_mut()[..n], &mut s.spare_capacity_mut()[..n]);
    // SAFETY: merge_parts_into wrote the first k slots of both.
    unsafe {
        t.set_len(k);
        s.set_len(k);
    }
}

/// Whether threshold `x` comes before `y` in the filtration's order.
fn before<T: Sample, const SUP: bool>(x: T, y: T) -> bool {
    if SUP { x > y } else { x < y }
}

/// Merges runs `a` and `b` into the first slots of `t` and `s`; returns how many it wrote.
fn merge_into<T: Sample, const SUP: bool>(
    a: Part<T>,
    b: Part<T>,
    t: &mut [MaybeUninit<T>],
    s: &mut [MaybeUninit<i64>],
) -> usize {
    let (mut i, mut j, mut k) = (0, 0, 0);
    while i < a.0.len() && j < b.0.len() {
        let (x, y) = (a.0[i], b.0[j]);
        if before::<T, SUP>(x, y) {
            t[k].write(x);
            s[k].write(a.1[i]);
            i += 1;
        } else if before::<T, SUP>(y, x) {
            t[k].write(y);
            s[k].write(b.1[j]);
            j += 1;
        } else {
            t[k].write(x);
            s[k].write(a.1[i] + b.1[j]);
            i += 1;
            j += 1;
        }
        k += 1;
    }
    for (run, from) in [(a, i), (b, j)] {
        let rest = run.0.len() - from;
        t[k..k + rest].write_copy_of_slice(&run.0[from..]);
        s[k..k + rest].write_copy_of_slice(&run.1[from..]);
        k += rest;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A run of distinct thresholds drawn from `0..range` (a few, or most of them), sums of
    /// either sign, in the filtration's order.
    fn run<const SUP: bool>(seed: u64, len: usize, range: u64) -> PerValue<f32> {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut m = BTreeMap::new();
        for _ in 0..len {
            m.insert((next() % range) as u32, next() as i64 % 1000 - 500);
        }
        let mut v: Vec<(f32, i64)> = m.into_iter().map(|(k, s)| (k as f32 - range as f32 / 2.0, s)).collect();
        if SUP {
            v.reverse();
        }
        v.into_iter().unzip()
    }

    fn merged_by_map<const SUP: bool>(runs: &[PerValue<f32>]) -> PerValue<f32> {
        let mut m: BTreeMap<i64, i64> = BTreeMap::new();
        for (t, s) in runs {
            for (&t, &s) in t.iter().zip(s) {
                *m.entry(t as i64).or_default() += s;
            }
        }
        let mut v: Vec<(f32, i64)> = m.into_iter().map(|(t, s)| (t as f32, s)).collect();
        if SUP {
            v.reverse();
        }
        v.into_iter().unzip()
    }

    fn merges_like_a_map<const SUP: bool>() {
        // Lengths around a piece's; key ranges from crowded (most thresholds in several runs)
        // to sparse; empty runs; one run much shorter; many runs at once.
        let cases: [&[(usize, u64)]; 9] = [
            &[(10, 100), (7, 100)],
            &[(0, 100), (5, 100)],
            &[(5, 100), (0, 100)],
            &[(PIECE, 1 << 17), (PIECE, 1 << 17)],
            &[(3 * PIECE, 1 << 24), (PIECE / 2, 1 << 24)],
            &[(20 * PIECE, 30 * PIECE as u64), (20 * PIECE, 30 * PIECE as u64)],
            &[(PIECE, 50), (40, 50)],
            &[(5 * PIECE, 1 << 20), (3 * PIECE, 1 << 20), (0, 1), (PIECE, 1 << 20), (7, 1 << 20)],
            &[(4 * PIECE, 8 * PIECE as u64); 17],
        ];
        for (c, runs) in cases.iter().enumerate() {
            let runs: Vec<PerValue<f32>> = runs
                .iter()
                .enumerate()
                .map(|(r, &(len, range))| run::<SUP>((c * 100 + r) as u64, len, range))
                .collect();
            let want = merged_by_map::<SUP>(&runs);
            assert_eq!(merge::<f32, SUP>(&runs), want, "case {c}, superlevel {SUP}");
            let reversed: Vec<PerValue<f32>> = runs.iter().rev().cloned().collect();
            assert_eq!(merge::<f32, SUP>(&reversed), want, "case {c} reversed, superlevel {SUP}");
        }
        // Runs of disjoint ranges (the slabs of a field that rises along z), in either order,
        // and one of them overlapping two others.
        let mut disjoint: Vec<PerValue<f32>> = (0..5)
            .map(|r| {
                let (t, s) = run::<SUP>(50 + r, 3 * PIECE, 1 << 20);
                (t.iter().map(|&x| x + (r << 20) as f32).collect(), s)
            })
            .collect();
        assert_eq!(
            merge::<f32, SUP>(&disjoint),
            merged_by_map::<SUP>(&disjoint),
            "disjoint, superlevel {SUP}"
        );
        disjoint.reverse();
        disjoint.push(run::<SUP>(60, 2 * PIECE, 3 << 20));
        assert_eq!(
            merge::<f32, SUP>(&disjoint),
            merged_by_map::<SUP>(&disjoint),
            "straddling, superlevel {SUP}"
        );
        // Nothing to merge, and a run alone.
        let one = run::<SUP>(70, 3 * PIECE, 1 << 22);
        assert_eq!(merge::<f32, SUP>(&[]), PerValue::default());
        assert_eq!(merge::<f32, SUP>(&[PerValue::default(), PerValue::default()]), PerValue::default());
        assert_eq!(merge::<f32, SUP>(std::slice::from_ref(&one)), one);
        assert_eq!(Runs::<f32>::new().finish::<SUP>(), PerValue::default());
        let mut alone = Runs::new();
        alone.add::<SUP>(one.clone());
        assert_eq!(alone.finish::<SUP>(), one);
        // Slabs as a stream adds them, enough for runs of two levels and a carry between them.
        let slabs: Vec<PerValue<f32>> = (0..FANOUT * FANOUT + 3)
            .map(|i| run::<SUP>(7 + i as u64, 100 + 997 * (i % 5), 1 << 19))
            .collect();
        let mut runs = Runs::new();
        for r in &slabs {
            runs.add::<SUP>(r.clone());
        }
        assert_eq!(runs.0.iter().map(|r| r.1).collect::<Vec<_>>(), [2, 0, 0, 0]);
        assert_eq!(runs.finish::<SUP>(), merged_by_map::<SUP>(&slabs));
    }

    /// On one and two threads too: fewer pieces a batch, so the batches' copies follow one
    /// another in the output.
    #[test]
    fn merging_runs_equals_summing_them_in_a_map() {
        for threads in [1, 2, 0] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                merges_like_a_map::<false>();
                merges_like_a_map::<true>();
            });
        }
    }
}
