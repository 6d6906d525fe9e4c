//! Persistence-ordered simplification of the Morse-Smale complex, computed once as a hierarchy
//! that reconstructs the complex at any threshold without recomputation.
//!
//! Repeatedly, the lowest-persistence pair of the persistence diagram (the critical cells that
//! create and destroy one homology class) whose two critical points are joined by exactly one
//! V-path is cancelled: an extremum and a saddle, or (3D) a 2-saddle and a 1-saddle. Only
//! persistence pairs are cancelled, so at any threshold every class that persists longer keeps
//! both its critical points: cancelling any cheapest pair joined by one V-path (Gyulassy et al.
//! 2008) can, in 3D, re-pair saddles around a blocked pair and remove a class of persistence far
//! above the threshold (a 1-cycle of persistence 55 gone at 43 on a 3x3x4 grid). A persistence
//! pair joined by several V-paths (two saddles joined by several paths) or by none cannot be
//! cancelled while it is, and is reported as blocked if it never can. Persistence is the value
//! difference of the two ends; each cancellation gets a level, the running maximum of the
//! persistences cancelled so far, so the cancellations below any threshold form a prefix of the
//! sequence.
//!
//! Extremum-saddle pairs: both disappear, the arcs of the extremum move to the extremum across
//! the saddle (its manifold merges there; a saddle whose other side leaves the domain lets it
//! flow out), and the saddle's other arcs go with it. Extrema merge by union-find (with the step
//! of each merge), so moving arcs costs nothing; each saddle keeps its original arcs and finds
//! their current ends through the union-find. A pair that found no V-path to its extremum is
//! re-examined whenever an extremum merges into its extremum. (A first version rewired arcs
//! explicitly, one new arc per neighbour pair at every cancellation: on the MNI template it took
//! about a minute and 3.8 GiB, against 0.7 s for this one.)
//!
//! Saddle-saddle pairs join every 2-saddle above the 1-saddle to every 1-saddle below the
//! 2-saddle, which union-find cannot express: [`super::saddles`] keeps the saddle-saddle arcs
//! per saddle (dead ends skipped where they are read) and records each new arc once, as three
//! pieces, never copying geometry.
//! Cancelling a saddle with an extremum removes its saddle-saddle arcs; cancelling two saddles
//! leaves every extremum arc alone but theirs.

use super::complex::{MorseSmale, NO_LABEL};
pub use super::persistence::UNPAIRED;
use super::saddles::{AddedArc, SaddleGraph, prefetch};
use super::vpaths::Multiplicity;
use crate::control::{Cancelled, Control};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Cancellation {
    /// Critical point ids of the pair: its end of higher index and its end of lower index (a
    /// saddle and an extremum, or a 2-saddle and a 1-saddle).
    pub upper: usize,
    pub lower: usize,
    pub persistence: f64,
    /// Running maximum of persistence: this cancellation is applied at every threshold >= level.
    pub level: f64,
    /// For an extremum: the extremum it merges into, or None when the saddle's other side
    /// leaves the domain (the manifold then flows out). None for a pair of saddles.
    pub merged_into: Option<usize>,
    /// Arc ids (see [`Hierarchy::arc_count`]) of the pair's arc and, for an extremum, of the
    /// saddle's arc that reaches the survivor.
    #[serde(skip)]
    pub arcs: (usize, Option<usize>),
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Blocked {
    /// Critical point ids of the pair (higher index, lower index).
    pub upper: usize,
    pub lower: usize,
    pub persistence: f64,
    /// Number of V-paths joining them (none, or more than one) when last examined.
    pub paths: String,
    /// Cancellations done when the pair was last examined.
    pub at_step: usize,
}

pub struct Hierarchy {
    pub cancellations: Vec<Cancellation>,
    pub blocked: Vec<Blocked>,
    /// Per critical point: the step (1-based) that cancelled it, usize::MAX if none.
    pub cancelled_at: Vec<usize>,
    /// Saddle-saddle arcs made by cancellations, numbered after the complex's arcs.
    pub added: Vec<AddedArc>,
    /// Per critical point id, the other end of its persistence pair ([`UNPAIRED`] for an
    /// essential class).
    pub partner: Vec<usize>,
    /// Arcs in the complex the hierarchy was built on.
    originals: usize,
}

/// Made arcs a merged saddle-saddle arc's polyline expands into their pieces before the rest is
/// drawn straight (see [`Hierarchy::saddle_path`]); each adds at most three pieces.
pub const MAX_PATH_POINTS: usize = 100_000;

/// Persistence of a pair of values: their difference, 0 when they are equal (so two equal
/// infinities give 0, not NaN: a NaN persistence never equals itself and was re-queued forever).
fn persistence(a: f64, b: f64) -> f64 {
    if a == b { 0.0 } else { (a - b).abs() }
}

/// The saddle end of an arc between an extremum and a saddle, and the extremum end.
fn ends(c: &MorseSmale, arc: usize) -> Option<(usize, usize)> {
    let a = &c.arcs[arc];
    if c.critical[a.lower].index == 0 {
        Some((a.upper, a.lower))
    } else if c.critical[a.upper].index as usize == c.grid.ndim {
        Some((a.lower, a.upper))
    } else {
        None
    }
}

/// A pair waiting in the cancellation queue.
#[derive(Clone, Copy)]
enum Candidate {
    /// A saddle and the extremum it is paired with.
    Extremum { saddle: usize },
    /// A 2-saddle and the 1-saddle it is paired with.
    Saddles { upper: usize, lower: usize },
}

/// The cancellation queue, lowest persistence first. Entries are packed into one u128
/// (persistence bits, then the candidate): persistences are never negative, so their bits sort
/// as they do, and comparing integers keeps the queue cheap (a third of the hierarchy's time
/// with tuples of an f64 wrapper and an enum). The persistence pairs, known at the start, are
/// sorted once (descending, popped from the end); the few pairs queued during the loop go to a
/// heap. With one heap of every pair the hierarchy of white noise 96^3 took 1.24-1.34 s on the
/// 2-core VM, a fifth of its own samples sifting; 1.08-1.12 s so.
struct Queue {
    first: Vec<u128>,
    later: BinaryHeap<Reverse<u128>>,
}

impl Queue {
    /// A queue of `entries` (from [`Queue::key`]).
    fn new(mut entries: Vec<u128>) -> Queue {
        use rayon::prelude::*;
        entries.par_sort_unstable_by_key(|&k| Reverse(k));
        Queue { first: entries, later: BinaryHeap::new() }
    }

    /// Queues an entry (from [`Queue::key`]).
    fn push(&mut self, key: u128) {
        self.later.push(Reverse(key));
    }

    fn key(persistence: f64, c: Candidate) -> u128 {
        debug_assert!(persistence >= 0.0);
        // Critical point ids are below 2^31 and arc ids below 2^32 (check_size bounds the cells).
        let id = |x: usize| u32::try_from(x).expect("ids fit 32 bits") as u128;
        let payload = match c {
            Candidate::Extremum { saddle } => id(saddle),
            Candidate::Saddles { upper, lower } => 1 << 63 | id(upper) << 32 | id(lower),
        };
        (persistence.to_bits() as u128) << 64 | payload
    }

    fn pop(&mut self) -> Option<(f64, Candidate)> {
        let k = match (self.first.last(), self.later.peek()) {
            (Some(&a), Some(&Reverse(b))) if b < a => self.later.pop().map(|Reverse(k)| k),
            (Some(_), _) => self.first.pop(),
            (None, _) => self.later.pop().map(|Reverse(k)| k),
        }?;
        Some(Queue::decode(k))
    }

    /// The pair `n` places after the next among those queued at the start (pairs queued during
    /// the loop may come first: only what is prefetched depends on it).
    fn ahead(&self, n: usize) -> Option<Candidate> {
        let k = *self.first.len().checked_sub(n + 1).map(|i| &self.first[i])?;
        Some(Queue::decode(k).1)
    }

    fn decode(k: u128) -> (f64, Candidate) {
        let (a, b) = (((k >> 32) as u32 & (u32::MAX >> 1)) as usize, k as u32 as usize);
        let c = if (k >> 63) & 1 == 1 {
            Candidate::Saddles { upper: a, lower: b }
        } else {
            Candidate::Extremum { saddle: b }
        };
        (f64::from_bits((k >> 64) as u64), c)
    }
}

/// How many pops ahead the cancellation loop asks for a pair's lists.
const AHEAD: usize = 2;

/// Which pairs a hierarchy cancels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairs {
    /// Extremum-saddle pairs only (the hierarchy before saddle-saddle cancellation, kept to
    /// measure what those cost).
    ExtremumSaddle,
    /// Extremum-saddle and saddle-saddle pairs.
    All,
}

/// The simplification hierarchy of `c`, every kind of persistence pair (`partner`, per critical
/// point id, see [`Hierarchy::partner`]) cancelled.
pub fn hierarchy(c: &MorseSmale, partner: Vec<usize>, ctl: &Control) -> Result<Hierarchy, Cancelled> {
    hierarchy_of(Prepared::new(c), partner, Pairs::All, ctl)
}

/// What the cancellation loop reads of a complex, made before the persistence pairs are known
/// (so it can be made beside them): the points' indices and values, and per saddle its arcs to
/// extrema, in arrays the loop reads in a few cache lines. (Read through the complex's points
/// and arcs, about 80 bytes each and scattered, the extremum-only hierarchy of the 256^3 GRF
/// took 4.0-4.4 ms on the 2-core VM; 1.3-2.1 ms so.)
pub struct Prepared<'a> {
    c: &'a MorseSmale,
    index: Vec<u8>,
    value: Vec<f64>,
    /// Per saddle `s`, its arcs to extrema are `by_saddle[start[s]..start[s + 1]]`, in arc id
    /// order.
    start: Vec<u32>,
    by_saddle: Vec<ExtremumArc>,
    saddles: SaddleGraph,
}

/// An arc from a saddle to an extremum, as the cancellation loop reads it.
#[derive(Clone, Copy)]
struct ExtremumArc {
    extremum: u32,
    arc: u32,
    paths: Multiplicity,
}

impl<'a> Prepared<'a> {
    pub fn new(c: &'a MorseSmale) -> Prepared<'a> {
        let mut laps = crate::laps::Laps::msc("hierarchy");
        // The saddle graph (its lists laid out and filled, the longer part) beside the rest.
        let (saddles, mut prepared) = rayon::join(|| SaddleGraph::new(c), || Prepared::extremum_arcs(c));
        prepared.saddles = saddles;
        laps.lap(|| "prepared".into());
        prepared
    }

    /// All but the saddle graph (left empty).
    fn extremum_arcs(c: &'a MorseSmale) -> Prepared<'a> {
        let n = c.critical.len();
        let index: Vec<u8> = c.critical.iter().map(|p| p.index).collect();
        let value: Vec<f64> = c.critical.iter().map(|p| p.value).collect();
        // (Flat, after offsets per saddle: a list per critical point was a small allocation
        // each, 12 MB of the MNI's hierarchy.)
        let ends: Vec<Option<(usize, usize)>> = (0..c.arcs.len()).map(|i| ends(c, i)).collect();
        let mut start = vec![0u32; n + 1];
        for &(s, _) in ends.iter().flatten() {
            start[s + 1] += 1;
        }
        for s in 0..n {
            start[s + 1] += start[s];
        }
        let none = ExtremumArc { extremum: 0, arc: 0, paths: Multiplicity::ZERO };
        let mut by_saddle = vec![none; start[n] as usize];
        let mut fill = start.clone();
        for (i, &(s, e)) in ends.iter().enumerate().filter_map(|(i, x)| x.as_ref().map(|x| (i, x))) {
            let paths = c.arcs[i].multiplicity;
            by_saddle[fill[s] as usize] = ExtremumArc { extremum: e as u32, arc: i as u32, paths };
            fill[s] += 1;
        }
        Prepared { c, index, value, start, by_saddle, saddles: SaddleGraph::default() }
    }
}

/// The simplification hierarchy of the complex `prepared` was made from, cancelling `pairs` of
/// the persistence pairing `partner`.
pub fn hierarchy_of(
    prepared: Prepared,
    partner: Vec<usize>,
    pairs: Pairs,
    ctl: &Control,
) -> Result<Hierarchy, Cancelled> {
    let Prepared { c, index, value, start, by_saddle, mut saddles } = prepared;
    let mut laps = crate::laps::Laps::msc("hierarchy");
    let n = c.critical.len();
    assert_eq!(partner.len(), n, "a partner per critical point");
    let index = |i: usize| index[i] as usize;
    let value = |i: usize| value[i];
    let extremum = |i: usize| index(i) == 0 || index(i) == c.grid.ndim;
    let saddle_arcs = |s: usize| &by_saddle[start[s] as usize..start[s + 1] as usize];
    let key = |u: usize, l: usize| {
        let candidate = if extremum(u) {
            Candidate::Extremum { saddle: l }
        } else if extremum(l) {
            Candidate::Extremum { saddle: u }
        } else {
            Candidate::Saddles { upper: u, lower: l }
        };
        Queue::key(persistence(value(u), value(l)), candidate)
    };
    let first: Vec<u128> = (0..n)
        .filter(|&l| partner[l] != UNPAIRED && index(partner[l]) == index(l) + 1)
        .filter(|&l| pairs == Pairs::All || extremum(l) || extremum(partner[l]))
        .map(|l| key(partner[l], l))
        .collect();
    // Each pair is cancelled at most once (pairs queued later are these again), and the
    // cancellations make about as many arcs as the complex has between saddles (the 256^3
    // GRF): growing these vectors copied them and faulted fresh pages in.
    let (pairs_queued, saddle_saddle_arcs) = (first.len(), saddles.arcs());
    let mut heap = Queue::new(first);
    laps.lap(|| "the queue".into());
    let mut h = Hierarchy {
        cancellations: Vec::with_capacity(pairs_queued),
        blocked: Vec::new(),
        cancelled_at: vec![usize::MAX; n],
        added: Vec::with_capacity(saddle_saddle_arcs),
        partner: Vec::new(),
        originals: c.arcs.len(),
    };
    let mut level = f64::NEG_INFINITY;
    // The current representative of every extremum, as a union-find with path halving: the
    // loop asks only about the present step, so chains never need walking twice.
    let mut merged = Merged::new(n);
    // Per extremum: whether its pair found no V-path joining it (a merge into it may make one).
    let mut waits = vec![false; n];
    // Pairs found blocked (upper, lower, persistence, paths, step), made into [`Blocked`]
    // once the loop knows which stay blocked.
    let mut blocked: Vec<(usize, usize, f64, Multiplicity, usize)> = Vec::new();
    let mut popped = 0usize;
    while let Some((pers, candidate)) = heap.pop() {
        // What a pair a few pops ahead reads first (the queue's order is known), asked for
        // now: the loop is bound by memory latency, a handful of misses a cancellation.
        match heap.ahead(AHEAD) {
            Some(Candidate::Saddles { upper, lower }) => {
                saddles.prefetch(upper);
                saddles.prefetch(lower);
            }
            Some(Candidate::Extremum { saddle }) => {
                if let Some(first) = by_saddle.get(start[saddle] as usize) {
                    prefetch(first);
                }
            }
            None => {}
        }
        popped += 1;
        if popped.is_multiple_of(4096) {
            ctl.check()?;
        }
        let steps = h.cancellations.len();
        let (upper, lower, paths, arcs, merged_into) = match candidate {
            Candidate::Extremum { saddle: s } => {
                let e = partner[s];
                if !h.alive(s, steps) {
                    continue;
                }
                // The saddle's V-paths to its extremum, and the extremum on the other side.
                let mut paths = Multiplicity::ZERO;
                let (mut arc, mut other) = (None, None);
                for ea in saddle_arcs(s).iter().filter(|ea| index(ea.extremum as usize) == index(e)) {
                    let a = ea.arc as usize;
                    match merged.find(ea.extremum as usize) {
                        Some(x) if x == e => {
                            paths = paths.plus(ea.paths);
                            arc = Some(a);
                        }
                        Some(x) => other = Some((x, a)),
                        None => {}
                    }
                }
                waits[e] = paths.count == 0;
                let (upper, lower) = if index(e) == 0 { (s, e) } else { (e, s) };
                let arcs = (arc.unwrap_or(usize::MAX), other.map(|(_, a)| a));
                (upper, lower, paths, arcs, other.map(|(x, _)| x))
            }
            Candidate::Saddles { upper, lower } => {
                if !h.alive(upper, steps) {
                    continue;
                }
                let (paths, arc) = saddles.between(upper, lower).unwrap_or((Multiplicity::ZERO, usize::MAX));
                (upper, lower, paths, (arc, None), None)
            }
        };
        if paths.count != 1 || paths.overflowed {
            blocked.push((upper, lower, pers, paths, steps));
            continue;
        }
        level = level.max(pers);
        let step = steps + 1;
        h.cancelled_at[upper] = step;
        h.cancelled_at[lower] = step;
        match candidate {
            Candidate::Extremum { saddle } => {
                let e = partner[saddle];
                merged.cancel(e, merged_into);
                if let Some(x) = merged_into.filter(|&x| waits[x]) {
                    waits[x] = false;
                    heap.push(key(x, partner[x]));
                }
                saddles.remove(saddle);
            }
            Candidate::Saddles { .. } => saddles.cancel(upper, lower, arcs.0, step, &mut h.added, |u, l| {
                // Two saddles joined for the first time: a pair of them left blocked with no
                // V-path may now be cancelled.
                if partner[u] == l {
                    heap.push(key(u, l))
                }
            }),
        }
        h.cancellations.push(Cancellation { upper, lower, persistence: pers, level, merged_into, arcs });
    }
    laps.lap(|| {
        format!("{popped} pops, {} cancellations, {} arcs added", h.cancellations.len(), h.added.len())
    });
    // A pair blocked at first and cancelled later is not blocked; one examined several times
    // is reported as last examined.
    let mut last = rustc_hash::FxHashMap::default();
    for (i, b) in blocked.iter().enumerate() {
        last.insert(b.0, i);
    }
    let end = h.cancellations.len();
    h.blocked = blocked
        .into_iter()
        .enumerate()
        .filter(|&(i, (upper, ..))| last[&upper] == i && h.alive(upper, end))
        .map(|(_, (upper, lower, persistence, paths, at_step))| Blocked {
            upper,
            lower,
            persistence,
            paths: if paths.overflowed {
                format!("more than {}", u128::MAX)
            } else {
                { paths.count }.to_string()
            },
            at_step,
        })
        .collect();
    h.partner = partner;
    Ok(h)
}

/// Union-find over extrema during the cancellation loop: `up[e] == e` while `e` is alive,
/// [`Merged::OUT`] once its manifold has flowed out of the domain.
struct Merged {
    up: Vec<usize>,
}

impl Merged {
    const OUT: usize = usize::MAX;

    fn new(n: usize) -> Merged {
        Merged { up: (0..n).collect() }
    }

    fn find(&mut self, mut e: usize) -> Option<usize> {
        loop {
            let p = self.up[e];
            if p == e {
                return Some(e);
            }
            if p == Self::OUT {
                return None;
            }
            let g = self.up[p];
            if g != Self::OUT {
                self.up[e] = g;
            }
            e = p;
        }
    }

    fn cancel(&mut self, e: usize, into: Option<usize>) {
        self.up[e] = into.unwrap_or(Self::OUT);
    }
}

/// A live arc of the simplified complex: its ends and the original arcs it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveArc {
    pub upper: usize,
    pub lower: usize,
    pub multiplicity: Multiplicity,
    /// Arc ids (see [`Hierarchy::arc_count`]) joining these ends.
    pub ids: Vec<usize>,
}

impl Hierarchy {
    /// Number of cancellations applied at `threshold` (those with level <= threshold).
    pub fn steps_at(&self, threshold: f64) -> usize {
        self.cancellations.partition_point(|c| c.level <= threshold)
    }

    /// Per critical point, the level at which it is cancelled (infinity if never): it is alive
    /// at every threshold below its level, so a viewer's slider needs one comparison a point.
    pub fn death_levels(&self) -> Vec<f64> {
        self.cancelled_at
            .iter()
            .map(|&s| if s == usize::MAX { f64::INFINITY } else { self.cancellations[s - 1].level })
            .collect()
    }

    /// Whether critical point `i` is alive after `steps` cancellations.
    pub fn alive(&self, i: usize, steps: usize) -> bool {
        self.cancelled_at[i] > steps
    }

    /// Live critical points by index after `steps` cancellations.
    pub fn counts(&self, c: &MorseSmale, steps: usize) -> [usize; 4] {
        let mut k = [0; 4];
        for (i, p) in c.critical.iter().enumerate() {
            if self.alive(i, steps) {
                k[p.index as usize] += 1;
            }
        }
        k
    }

    /// The live extremum that extremum `e` stands for after `steps` cancellations (itself while
    /// alive), or None when its manifold has flowed out of the domain.
    pub fn representative(&self, mut e: usize, steps: usize) -> Option<usize> {
        loop {
            let s = self.cancelled_at[e];
            if s > steps {
                return Some(e);
            }
            e = self.cancellations[s - 1].merged_into?;
        }
    }

    /// Arc ids: the complex's arcs, then the saddle-saddle arcs cancellations made.
    pub fn arc_count(&self) -> usize {
        self.originals + self.added.len()
    }

    /// The two ends (higher index, lower index) and V-path count of arc `id`, and the step from
    /// which it exists (0 for the complex's own arcs).
    pub fn arc(&self, c: &MorseSmale, id: usize) -> (usize, usize, Multiplicity, usize) {
        match id.checked_sub(self.originals) {
            None => (c.arcs[id].upper, c.arcs[id].lower, c.arcs[id].multiplicity, 0),
            Some(k) => {
                let a = &self.added[k];
                (a.upper as usize, a.lower as usize, a.multiplicity, a.born as usize)
            }
        }
    }

    /// The arcs after `steps` cancellations: arcs between live cells (original ones, and those
    /// cancellations made by then), extremum ends moved to their representatives, parallel arcs
    /// merged.
    pub fn arcs_at(&self, c: &MorseSmale, steps: usize) -> Vec<LiveArc> {
        let rep = self.representatives(steps);
        let mut raw: Vec<(usize, usize, usize)> = Vec::new();
        for i in 0..self.arc_count() {
            let (upper, lower, _, born) = self.arc(c, i);
            let end = |x: usize| {
                let k = c.critical[x].index as usize;
                if k == 0 || k == c.grid.ndim {
                    (rep[x] != NO_LABEL).then_some(rep[x] as usize)
                } else {
                    self.alive(x, steps).then_some(x)
                }
            };
            if born <= steps
                && let (Some(u), Some(l)) = (end(upper), end(lower))
                && self.alive(u, steps)
                && self.alive(l, steps)
            {
                raw.push((u, l, i));
            }
        }
        raw.sort_unstable();
        let mut out: Vec<LiveArc> = Vec::new();
        for (u, l, i) in raw {
            let paths = self.arc(c, i).2;
            match out.last_mut() {
                Some(last) if (last.upper, last.lower) == (u, l) => {
                    last.multiplicity = last.multiplicity.plus(paths);
                    last.ids.push(i);
                }
                _ => out.push(LiveArc { upper: u, lower: l, multiplicity: paths, ids: vec![i] }),
            }
        }
        out
    }

    /// The polyline of arc `id` at the level whose representatives are `rep` (from
    /// [`Hierarchy::representatives`]), upper end first: see [`Hierarchy::extremum_path`] and
    /// [`Hierarchy::saddle_path`] (at most [`MAX_PATH_POINTS`] made arcs expanded).
    pub fn path(&self, c: &MorseSmale, id: usize, rep: &[u32]) -> Vec<[f64; 3]> {
        if id >= self.originals || ends(c, id).is_none() {
            return self.saddle_path(c, id, MAX_PATH_POINTS);
        }
        let mut p = self.extremum_path_in(c, id, rep);
        // extremum_path runs saddle first.
        if c.critical[c.arcs[id].upper].index as usize == c.grid.ndim {
            p.reverse();
        }
        p
    }

    /// The polyline of saddle-saddle arc `id` (cell centres from its 2-saddle down): an
    /// original arc's V-path, or the concatenation of an added arc's pieces without the stretches
    /// where it walks back the way it came. After `max_points` made arcs have been expanded
    /// into their pieces, the made arcs left are drawn as straight segments between their ends
    /// (a chain of merged arcs can retrace the same pieces many times), which bounds the work.
    pub fn saddle_path(&self, c: &MorseSmale, id: usize, max_points: usize) -> Vec<[f64; 3]> {
        let mut out: Vec<[f64; 3]> = Vec::new();
        // Pieces meet where one V-path turns back along another (the cancelled pair's arc and
        // the next piece leave the same saddle): a step back to the point before the last
        // undoes the last step, so the walk drawn has no spurs.
        let push = |out: &mut Vec<[f64; 3]>, p: [f64; 3]| {
            let n = out.len();
            if n >= 2 && out[n - 2] == p {
                out.pop();
            } else if out.last() != Some(&p) {
                out.push(p);
            }
        };
        // (arc id, walked from its lower end up), last to be drawn first.
        let mut stack = vec![(id, false)];
        let mut expanded = 0;
        while let Some((i, up)) = stack.pop() {
            match i.checked_sub(self.originals) {
                Some(k) if expanded < max_points => {
                    expanded += 1;
                    let [a, b, d] = self.added[k].pieces.map(|x| x as usize);
                    let order = [(a, false), (b, true), (d, false)];
                    if up {
                        stack.extend(order.iter().map(|&(x, r)| (x, !r)));
                    } else {
                        stack.extend(order.iter().rev());
                    }
                }
                Some(k) => {
                    let a = &self.added[k];
                    let ends = [a.upper, a.lower].map(|x| c.critical[x as usize].position);
                    let [from, to] = if up { [ends[1], ends[0]] } else { ends };
                    push(&mut out, from);
                    push(&mut out, to);
                }
                None => {
                    let line = c.polyline(i);
                    if up {
                        line.iter().rev().for_each(|&p| push(&mut out, p));
                    } else {
                        line.iter().for_each(|&p| push(&mut out, p));
                    }
                }
            }
        }
        out
    }

    /// Blocked pairs with persistence up to `threshold`.
    pub fn blocked_at(&self, threshold: f64) -> impl Iterator<Item = &Blocked> {
        self.blocked.iter().filter(move |b| b.persistence <= threshold)
    }

    /// [`Hierarchy::representative`] of every critical point after `steps` cancellations, as
    /// labels ([`NO_LABEL`] for none).
    pub fn representatives(&self, steps: usize) -> Vec<u32> {
        // Backwards through the cancellations: when one is reached, where its survivor ends up
        // is already known (only later cancellations move it).
        let mut rep: Vec<u32> = (0..self.cancelled_at.len() as u32).collect();
        for x in self.cancellations[..steps].iter().rev() {
            let r = x.merged_into.map_or(NO_LABEL, |m| rep[m]);
            rep[x.upper] = r;
            rep[x.lower] = r;
        }
        rep
    }

    /// A label field (basins or mountains) after `steps` cancellations.
    pub fn labels_at(&self, labels: &[u32], steps: usize) -> Vec<u32> {
        use rayon::prelude::*;
        let rep = self.representatives(steps);
        labels.par_iter().map(|&l| if l == NO_LABEL { NO_LABEL } else { rep[l as usize] }).collect()
    }

    /// A polyline for original arc `arc` after `steps` cancellations, from its saddle end: its
    /// V-path to the extremum it reached in the unsimplified complex, then, when that extremum
    /// has merged into another, a straight segment to the one it stands for now. (The V-path of
    /// the simplified gradient would retrace merged arcs, and its length compounds with every
    /// merge along the way.)
    pub fn extremum_path(&self, c: &MorseSmale, arc: usize, steps: usize) -> Vec<[f64; 3]> {
        extremum_path_to(c, arc, |x| self.representative(x, steps))
    }

    /// [`Hierarchy::extremum_path`] with the representatives looked up in `rep` (from
    /// [`Hierarchy::representatives`]), for many arcs at one level.
    pub fn extremum_path_in(&self, c: &MorseSmale, arc: usize, rep: &[u32]) -> Vec<[f64; 3]> {
        extremum_path_to(c, arc, |x| (rep[x] != NO_LABEL).then_some(rep[x] as usize))
    }
}

fn extremum_path_to(
    c: &MorseSmale,
    arc: usize,
    representative: impl Fn(usize) -> Option<usize>,
) -> Vec<[f64; 3]> {
    let a = &c.arcs[arc];
    let (s, x) = ends(c, arc).expect("an arc between a saddle and an extremum");
    let mut p = c.polyline(arc);
    if a.upper != s {
        p.reverse();
    }
    if let Some(rep) = representative(x).filter(|&r| r != x) {
        p.push(c.critical[rep].position);
    }
    p
}
