//! The reductions: dimension 0 by union-find over the edges, then, per dimension, Ripser's
//! implicit reduction of the coboundary matrix: columns (simplices) from the latest to enter
//! down, each column's coboundary summed in a [`Column`], pivots (the earliest cofacet) looked up
//! among those already paired; a column whose first cofacet of equal diameter is no pivot yet
//! pairs at once (an emergent pair), and simplices that are pivots of the dimension below are
//! never columns (clearing; those a [`Tail`] finds late are columns until it names them).
//!
//! Apparent pairs first, on all cores (Ripser++'s idea, on the CPU): a column whose earliest
//! cofacet has it as youngest facet, at the same diameter, pairs with that cofacet whatever
//! the other columns do; no column reduced before it can hold that cofacet (it is the first
//! column whose coboundary has it), so all of them enter the pivots before the reduction of
//! the rest. In dense data most columns are apparent. In the highest dimension, where no
//! pivot clears anything, they are not even listed (Ripser 1.2's way): a pivot that no
//! column has is tested for an apparent facet when it turns up, and that facet's coboundary
//! added.
//!
//! The rest are reduced in rounds over a window of open columns (after giotto-ph's parallel
//! reduction, in a simpler form): each round reduces every open column on all cores by the
//! columns paired so far (a long one only so far, by a budget of additions a round), then
//! pairs the leading open columns in order, up to the first that the budget cut off or whose
//! pivot an earlier column took in that pass, which the next rounds reduce further. A column
//! is only ever paired once every column before it is, with a pivot none of them has, so the
//! pairs are the sequential reduction's; what the window adds is that the columns one pass
//! leaves unpaired are reduced side by side, not one by one.

use super::column::{Column, sum_mod2};
use super::index::{Coboundary, Complex, Entry};
use super::stages::Stages;
use super::{Bar, RipsError, apparent};
use crate::control::Control;
use rayon::prelude::*;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Simplex numbers hashed by one multiplication (they are spread already; SipHash's
/// resistance to chosen keys buys nothing here and costs most of a lookup).
#[derive(Default)]
pub struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Cofacet (pivot) number to the column that has it as pivot.
pub type Pivots = HashMap<u64, usize, BuildHasherDefault<IndexHasher>>;

/// Columns in reduction order: the latest to enter first, ties by smaller number.
pub fn sort_columns(c: &mut [Entry]) {
    use rayon::slice::ParallelSliceMut;
    c.par_sort_unstable_by(|a, b| b.diameter.total_cmp(&a.diameter).then(a.index.cmp(&b.index)));
}

/// Dimension 0: components merge along the edges in order of length (union-find); every
/// merge at a positive radius ends a bar. Returns the dimension-1 columns (the edges that
/// merged nothing) and every edge within the threshold.
pub fn dim0(c: &Complex, bars: &mut Vec<Bar>) -> (Vec<Entry>, Vec<Entry>) {
    use rayon::prelude::*;
    let n = c.d.len();
    // Rows of the lower triangle on all cores (Ripser++'s filtration construction), in order.
    let row = |i: usize| -> Vec<Entry> {
        let edge = |j: usize, diameter: f32| Entry { diameter, index: (i * (i - 1) / 2 + j) as u64 };
        match c.neighbors {
            Some(nb) => {
                nb.of(i).iter().take_while(|e| (e.0 as usize) < i).map(|e| edge(e.0 as usize, e.1)).collect()
            }
            None => {
                let row = c.d.row(i).iter().enumerate();
                row.map(|(j, &x)| edge(j, x)).filter(|e| e.diameter <= c.threshold).collect()
            }
        }
    };
    let mut edges: Vec<Entry> = (1..n).into_par_iter().flat_map_iter(row).collect();
    edges.par_sort_unstable_by(|a, b| a.diameter.total_cmp(&b.diameter).then(b.index.cmp(&a.index)));
    let mut parent: Vec<usize> = (0..n).collect();
    let find = |parent: &mut Vec<usize>, mut x: usize| {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    };
    let mut columns = Vec::new();
    for e in &edges {
        let (i, j) = super::row_col(e.index as usize);
        let (a, b) = (find(&mut parent, i), find(&mut parent, j));
        if a != b {
            parent[a.max(b)] = a.min(b);
            if e.diameter > 0.0 {
                // All vertices enter at 0: the class of the younger root (the larger index)
                // dies, killed by this edge.
                let creator = a.max(b) as u64;
                bars.push(Bar { dim: 0, birth: 0.0, death: e.diameter, creator, killer: Some(e.index) });
            }
        } else {
            columns.push(*e);
        }
    }
    for x in 0..n {
        if find(&mut parent, x) == x {
            bars.push(Bar { dim: 0, birth: 0.0, death: f32::INFINITY, creator: x as u64, killer: None });
        }
    }
    sort_columns(&mut columns);
    (columns, edges)
}

/// A column is compacted once it holds this many entries (64 MiB), and then twice what was
/// left: a bound on memory only. The radix heap drops most cancelled entries as they come
/// or as they reach the pivot, and compacting sooner costs a sort of the whole column: the
/// sphere's class of 2 M entries took 334 ms compacted from 16 K entries on, 158 ms never.
const COMPACT_FROM: usize = 1 << 22;

/// The columns' reduction matrix V (without its diagonal): column i is
/// `entries[starts[i]..ends[i]]` (empty for apparent columns).
#[derive(Clone)]
struct Reduction {
    starts: Vec<usize>,
    ends: Vec<usize>,
    entries: Vec<Entry>,
}

/// Adds the coboundary of `s` (cofacets within the threshold) to `column`.
fn push_coboundary(c: &Complex, dim: usize, s: Entry, vertices: &mut Vec<usize>, column: &mut Column) {
    c.table.vertices(s.index, dim, c.d.len(), vertices);
    push_coboundary_of(c, s, vertices, column);
}

/// As [`push_coboundary`], with the simplex's vertices (largest first) known.
fn push_coboundary_of(c: &Complex, s: Entry, vertices: &[usize], column: &mut Column) {
    super::index::cofacets_within(c, s, vertices, |e| column.push(e));
}

/// How a dimension's apparent pairs are paired.
pub enum Apparent<'a, 'f> {
    /// Found among the columns by the finder and entered in the pivots, where they clear
    /// the next dimension's columns.
    Found(&'a mut (dyn super::Offload + 'f)),
    /// Left out of the columns when they were listed ([`next_columns`]); a pivot that no
    /// column has is tested for an apparent facet as it turns up.
    LeftOut,
}

/// What a dimension's reduction leaves: the pivots found (cofacet number to column), which
/// clear the next dimension's columns, and the columns left to a [`Tail`] (if it was allowed
/// one and ended with a few long columns still open).
pub struct Reduced {
    pub pivots: Pivots,
    pub tail: Option<Tail>,
}

/// Reduces the columns of dimension `dim` (in their order) and adds their bars.
///
/// In rounds over a window of open columns (see the module docs): a column's pivot depends
/// only on the columns before it, so the pairs are those of the sequential reduction. With
/// `may_leave_tail`, once every column is open and at most `schedule.tail` of them still need
/// reducing, the rest is returned as a [`Tail`] to be finished beside the next dimension.
/// Columns whose simplex `overlap.dropped` names (the pivots a [`Tail`] of the dimension below found
/// late, which clearing would have left out) are left out as they are named.
pub fn reduce(
    cols: &super::Columns,
    bars: &mut Vec<Bar>,
    apparent: Apparent,
    schedule: Schedule,
    overlap: Overlap,
    stages: &mut Stages,
    ctl: &Control,
) -> Result<Reduced, RipsError> {
    let Overlap { may_leave_tail, dropped } = overlap;
    let (c, dim, columns) = (cols.complex, cols.dim, cols.columns);
    let mut pivots = Pivots::default();
    let r = Reducer {
        c,
        dim,
        columns,
        on_the_fly: matches!(apparent, Apparent::LeftOut),
        budget: schedule.budget,
    };
    let todo: Vec<usize> = match apparent {
        Apparent::LeftOut => (0..columns.len()).collect(),
        Apparent::Found(offload) => {
            let found = offload.apparent(cols)?;
            if found.len() != columns.len() {
                return Err(RipsError::Invalid(format!(
                    "{} apparent pairs were found for {} columns",
                    found.len(),
                    columns.len()
                )));
            }
            pivots.reserve(columns.len());
            for (i, t) in found.iter().enumerate() {
                if let Some(t) = t {
                    pivots.insert(t.index, i);
                }
            }
            let paired = found.iter().filter(|a| a.is_some()).count();
            ctl.tick(paired as u64);
            stages.mark(|| format!("dim {dim}: apparent pairs of {} columns: {paired}", columns.len()));
            (0..columns.len()).filter(|&i| found[i].is_none()).collect()
        }
    };
    let mut v =
        Reduction { starts: vec![0; columns.len()], ends: vec![0; columns.len()], entries: Vec::new() };
    let window = schedule.window_per_thread * rayon::current_num_threads();
    // The columns started and not yet paired, in order, with their state (None: not started).
    let mut open: Open = VecDeque::with_capacity(window);
    let mut next = todo.iter();
    let (mut parallel, mut in_order, mut rounds) = (Duration::ZERO, Duration::ZERO, 0);
    // With the stages timed: the columns' work, and each round's slowest column summed (what
    // the rounds wait for however many cores there are).
    let (timed, work, mut waited) = (stages.on(), AtomicU64::new(0), Duration::ZERO);
    let mut tail = None;
    let (mut late, mut seen) = (Vec::new(), 0);
    loop {
        if let Some(d) = dropped {
            drop_late(d, &mut seen, &mut late, &mut open, columns, ctl);
        }
        let is_late = |i: &usize| late.binary_search(&columns[*i].index).is_ok();
        let before = open.len();
        open.extend(next.by_ref().filter(|i| !is_late(i)).take(window - before).map(|&i| (i, None)));
        if open.is_empty() {
            break;
        }
        if may_leave_tail && next.len() == 0 && busy(&open, &pivots) <= schedule.tail {
            let threads = schedule.tail.min(rayon::current_num_threads()).max(1);
            tail = Some(Tail { dim, open, v, budget: schedule.budget.saturating_mul(16), threads });
            break;
        }
        ctl.check()?;
        rounds += 1;
        // On all cores: each open column started, or reduced further by the columns paired
        // since it last was, each until its additions reach the budget of coboundaries: a long
        // column goes on in the next round, and the columns after it are reduced meanwhile.
        let slowest = AtomicU64::new(0);
        open.par_iter_mut().for_each_init(
            || Vec::with_capacity(dim + 2),
            |sc, (i, w)| {
                let t = timed.then(Instant::now);
                r.step(*i, w, &pivots, &v, sc);
                if let Some(t) = t {
                    let ns = t.elapsed().as_nanos() as u64;
                    slowest.fetch_max(ns, Ordering::Relaxed);
                    work.fetch_add(ns, Ordering::Relaxed);
                }
            },
        );
        waited += Duration::from_nanos(slowest.into_inner());
        parallel += stages.lap();
        let paired = pair_leading(&mut open, columns, dim, &mut pivots, &mut v, bars, None);
        ctl.tick(paired as u64);
        in_order += stages.lap();
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let work = work.into_inner() as f64 / 1e6;
    stages.mark(|| {
        let left = tail.as_ref().map_or(String::new(), |t: &Tail| {
            format!("; {} columns left to finish beside the next dimension", busy(&t.open, &pivots))
        });
        format!(
            "dim {dim}: {} columns reduced in {rounds} rounds: {:.1} ms on all cores ({work:.1} ms of \
             work, {:.1} ms of the rounds' slowest columns), {:.1} ms pairing in order{left}",
            todo.len(),
            ms(parallel),
            ms(waited),
            ms(in_order)
        )
    });
    Ok(Reduced { pivots, tail })
}

/// How a dimension's reduction overlaps its neighbours: whether it may leave a [`Tail`] for
/// the next dimension's time, and the pivots the tail of the dimension below names as it
/// finds them (see [`reduce`]).
#[derive(Clone, Copy, Default)]
pub struct Overlap<'a> {
    pub may_leave_tail: bool,
    pub dropped: Option<&'a Mutex<Vec<u64>>>,
}

/// The open columns of a reduction, in order: column and state (None: not started).
type Open = VecDeque<(usize, Option<Working>)>;

/// Takes the pivots `dropped` has gained into `late` (sorted) and leaves their columns out of
/// `open`: they reduce to zero, so no other column's pairing depends on them.
fn drop_late(
    dropped: &Mutex<Vec<u64>>,
    seen: &mut usize,
    late: &mut Vec<u64>,
    open: &mut Open,
    columns: &[Entry],
    ctl: &Control,
) {
    let d = dropped.lock().unwrap_or_else(|e| e.into_inner());
    if d.len() == *seen {
        return;
    }
    *seen = d.len();
    late.clone_from(&d);
    drop(d);
    late.sort_unstable();
    late.dedup();
    let before = open.len();
    open.retain(|(i, _)| late.binary_search(&columns[*i].index).is_err());
    ctl.tick((before - open.len()) as u64);
}

/// Whether an open column needs reducing further: not started, stopped by the budget, or its
/// pivot taken by a column paired since.
fn needs_work(w: &Option<Working>, pivots: &Pivots) -> bool {
    w.as_ref().is_none_or(|w| !w.done || w.pivot.is_some_and(|p| pivots.contains_key(&p.index)))
}

/// How many open columns need reducing further.
fn busy(open: &Open, pivots: &Pivots) -> usize {
    open.iter().filter(|(_, w)| needs_work(w, pivots)).count()
}

/// Pairs the leading open columns in order: each reduced as far as the pivots go, whose pivot
/// no column before it has, up to the first not yet reduced so far or whose pivot one of them
/// took in this pass (the next rounds reduce it). Returns how many were paired; their pivots
/// are also added to `late` if given.
fn pair_leading(
    open: &mut Open,
    columns: &[Entry],
    dim: usize,
    pivots: &mut Pivots,
    v: &mut Reduction,
    bars: &mut Vec<Bar>,
    mut late: Option<&mut Vec<u64>>,
) -> usize {
    let mut paired = 0;
    while let Some((_, w)) = open.front() {
        if needs_work(w, pivots) {
            break;
        }
        let (i, mut w) = match open.pop_front() {
            Some((i, Some(w))) => (i, w),
            _ => unreachable!("the front was just read: started, as it needs no work"),
        };
        paired += 1;
        let col = columns[i];
        v.starts[i] = v.entries.len();
        let Some(p) = w.pivot else {
            bars.push(Bar {
                dim,
                birth: col.diameter,
                death: f32::INFINITY,
                creator: col.index,
                killer: None,
            });
            v.ends[i] = v.starts[i];
            continue;
        };
        if p.diameter > col.diameter {
            let (birth, death) = (col.diameter, p.diameter);
            bars.push(Bar { dim, birth, death, creator: col.index, killer: Some(p.index) });
        }
        pivots.insert(p.index, i);
        if let Some(late) = late.as_deref_mut() {
            late.push(p.index);
        }
        // Column i of V: what was added, equal entries cancelling in pairs.
        sum_mod2(&mut w.added, |e| e.index);
        v.entries.extend_from_slice(&w.added);
        v.ends[i] = v.entries.len();
    }
    paired
}

/// The last columns of a dimension, left open when all but a few were paired (typically the
/// long chains of its essential classes), to be finished on threads of their own while the
/// next dimension is listed and reduced on the pool's.
///
/// The next dimension's columns are then listed with only a guess at the pivots these columns
/// will find ([`Tail::provisional`]): the others are not cleared. That changes none of its
/// pairs: a simplex that is the pivot of a column of the dimension below reduces to zero
/// whatever else is reduced (the lemma clearing rests on), so it pivots nothing; it only reads
/// as an essential class, and [`TailDone::late`] lists the pivots whose essential bars are to
/// be dropped.
pub struct Tail {
    dim: usize,
    open: Open,
    v: Reduction,
    /// Coboundaries a column adds between checks for cancelling.
    budget: usize,
    threads: usize,
}

/// What a [`Tail`]'s thread shares with the barcode: where it names the pivots it finds (for
/// the next dimension to drop their columns), and the flag that ends it early.
#[derive(Clone, Copy)]
pub struct Shared<'a> {
    pub published: &'a Mutex<Vec<u64>>,
    pub stop: &'a AtomicBool,
}

/// What finishing a [`Tail`] found besides its bars.
pub struct TailDone {
    /// The pivots its columns found: simplices of the next dimension that clearing would have
    /// left out.
    pub late: Vec<u64>,
    pub rounds: usize,
}

impl Tail {
    /// The open columns reduced as far as `pivots` go, waiting for a column before them.
    fn waiting<'s>(&'s self, pivots: &'s Pivots) -> impl Iterator<Item = &'s (usize, Option<Working>)> {
        self.open.iter().filter(|(_, w)| !needs_work(w, pivots))
    }

    /// The pivots of the open columns that wait (reduced as far as `pivots` go, for a column
    /// before them), each once: theirs unless a column before them takes it. A guess, to
    /// list the next dimension with; checked once the tail is finished.
    pub fn provisional(&self, pivots: &Pivots) -> Vec<u64> {
        let waiting = self.waiting(pivots);
        let mut p: Vec<u64> = waiting.filter_map(|(_, w)| w.as_ref()?.pivot.map(|p| p.index)).collect();
        p.sort_unstable();
        p.dedup();
        p
    }

    /// A copy of the open columns that wait, to be finished as though the columns still
    /// being reduced were not there: a guess at the pivots the waiting ones will pair with
    /// once those are paired (the columns whose pivot an earlier waiting one takes, reduced
    /// further), had at once. Checked as [`Tail::provisional`] is.
    pub fn speculate(&self, pivots: &Pivots) -> Tail {
        let waiting = self.waiting(pivots).cloned().collect();
        Tail { dim: self.dim, open: waiting, v: self.v.clone(), budget: self.budget, threads: self.threads }
    }

    /// Reduces and pairs the open columns (of `columns`, with `pivots` the dimension's pivots
    /// so far) in rounds as [`reduce`] does, on up to `threads` threads of its own, naming
    /// each pivot found in `shared.published`; once `shared.stop` is set, ends at the next
    /// round with what it found so far.
    pub fn finish(
        mut self,
        c: &Complex,
        columns: &[Entry],
        pivots: &mut Pivots,
        bars: &mut Vec<Bar>,
        shared: Shared,
        ctl: &Control,
    ) -> Result<TailDone, RipsError> {
        let Shared { published, stop } = shared;
        let dim = self.dim;
        let r = Reducer { c, dim, columns, on_the_fly: false, budget: self.budget };
        let (mut late, mut rounds) = (Vec::new(), 0);
        while !self.open.is_empty() && !stop.load(Ordering::Relaxed) {
            ctl.check()?;
            rounds += 1;
            // The columns that need it, taken one at a time by up to `threads` threads (this
            // one among them: a thread that cannot be made leaves its share to the others).
            let todo: Vec<_> =
                self.open.iter_mut().filter(|(_, w)| needs_work(w, pivots)).map(Mutex::new).collect();
            let taken = AtomicU64::new(0);
            let (v, p) = (&self.v, &*pivots);
            let run = || {
                let mut sc = Vec::with_capacity(dim + 2);
                while let Some(cell) = todo.get(taken.fetch_add(1, Ordering::Relaxed) as usize) {
                    let mut guard = cell.lock().unwrap_or_else(|e| e.into_inner());
                    let (i, w) = &mut **guard;
                    r.step(*i, w, p, v, &mut sc);
                }
            };
            std::thread::scope(|s| {
                for _ in 1..self.threads.min(todo.len()) {
                    let _ = std::thread::Builder::new().name("rips-tail-worker".into()).spawn_scoped(s, run);
                }
                run();
            });
            let known = late.len();
            let paired =
                pair_leading(&mut self.open, columns, dim, pivots, &mut self.v, bars, Some(&mut late));
            ctl.tick(paired as u64);
            if late.len() > known {
                published.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(&late[known..]);
            }
        }
        Ok(TailDone { late, rounds })
    }
}

/// How the rounds go: the pairs do not depend on it (a test holds them equal for tiny ones).
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    /// Columns open at once per thread: enough for the cores to reduce ahead while a long
    /// column before them is summed; each open column holds its working column.
    pub window_per_thread: usize,
    /// Coboundaries after which a column's round ends (at the end of the addition that
    /// reaches it: a column and its reduction are added whole): a round lasts about this many
    /// additions (a millisecond or so), not as long as its longest column.
    pub budget: usize,
    /// Once every column is open, how few may still need reducing for the dimension to leave
    /// them to a [`Tail`] and let the next begin (0: never).
    pub tail: usize,
    /// Tests only: the guess a tail's next dimension is listed with is made to fail, so that
    /// the dimension is listed and reduced again.
    pub(super) fail_guess: bool,
}

impl Default for Schedule {
    /// A tail of up to a quarter of the threads: the long columns it is for are few, and each
    /// takes a thread of its own beside the pool's.
    fn default() -> Self {
        let tail = (rayon::current_num_threads() / 4).max(1);
        Schedule { window_per_thread: 512, budget: 256, tail, fail_guess: false }
    }
}

/// A column part way through its reduction: its coboundary with the columns added so far (a
/// [`Column`]), what was added, the pivot (None: the column is zero), whether the pivot is an
/// emergent pair taken before the rest of the coboundary was summed, whether it is reduced as
/// far as the pivots known went (not stopped by the budget), and the size at which its column
/// is compacted next.
#[derive(Clone)]
struct Working {
    column: Column,
    added: Vec<Entry>,
    pivot: Option<Entry>,
    shortcut: bool,
    done: bool,
    compact_at: usize,
}

/// One dimension's reduction: its columns, whether apparent pivots are looked for as they
/// turn up ([`Apparent::LeftOut`]), and the coboundaries a column adds in a round.
struct Reducer<'a> {
    c: &'a Complex<'a>,
    dim: usize,
    columns: &'a [Entry],
    on_the_fly: bool,
    budget: usize,
}

impl Reducer<'_> {
    /// Column `i` started, or reduced further (see [`Reducer::resume`]).
    fn step(
        &self,
        i: usize,
        w: &mut Option<Working>,
        pivots: &Pivots,
        v: &Reduction,
        scratch: &mut Vec<usize>,
    ) {
        match w {
            None => *w = Some(self.start(i, pivots, v, scratch)),
            Some(w) => self.resume(i, w, pivots, v, scratch),
        }
    }

    /// Column `i`'s coboundary, stopping at the first cofacet of the column's own diameter
    /// when no column has it as pivot yet (the column pairs with it as it stands), reduced by
    /// the columns of `pivots`.
    fn start(&self, i: usize, pivots: &Pivots, v: &Reduction, scratch: &mut Vec<usize>) -> Working {
        let (c, dim) = (self.c, self.dim);
        let col = self.columns[i];
        let mut vertices = Vec::with_capacity(dim + 1);
        c.table.vertices(col.index, dim, c.d.len(), &mut vertices);
        let mut w = Working {
            column: Column::for_cofacets(c, dim),
            added: Vec::new(),
            pivot: None,
            shortcut: false,
            done: false,
            compact_at: COMPACT_FROM,
        };
        let mut check_emergent = true;
        let mut cofacets = Vec::new();
        let mut cob = Coboundary::new(c, col, &vertices);
        while cob.has_next(true) {
            let (e, added) = cob.next_cofacet();
            if e.diameter > c.threshold {
                continue;
            }
            cofacets.push(e);
            if check_emergent && e.diameter == col.diameter {
                if !pivots.contains_key(&e.index) && !self.apparent_pivot(&vertices, added, e) {
                    w.pivot = Some(e);
                    w.shortcut = true;
                    w.done = true;
                    return w;
                }
                check_emergent = false;
            }
        }
        for &e in &cofacets {
            w.column.push(e);
        }
        w.pivot = w.column.pivot();
        self.add_known(&mut w, pivots, v, scratch);
        w
    }

    /// Column `i`, started before, reduced further by the columns paired since (if any, or
    /// if the budget stopped it): an emergent pair whose cofacet another column took sums its
    /// whole coboundary first.
    fn resume(&self, i: usize, w: &mut Working, pivots: &Pivots, v: &Reduction, scratch: &mut Vec<usize>) {
        let taken = w.pivot.is_some_and(|p| pivots.contains_key(&p.index));
        if w.done && !taken {
            return;
        }
        if w.shortcut && taken {
            w.shortcut = false;
            push_coboundary(self.c, self.dim, self.columns[i], scratch, &mut w.column);
            w.pivot = w.column.pivot();
        }
        self.add_known(w, pivots, v, scratch);
    }

    /// Whether cofacet `e`, the simplex `vertices` with `added`, is the pivot of a left-out
    /// apparent pair.
    fn apparent_pivot(&self, vertices: &[usize], added: usize, e: Entry) -> bool {
        if !self.on_the_fly {
            return false;
        }
        let mut us = [0; super::MAX_DIM + 2];
        let k = apparent::with_vertex(vertices, added, &mut us);
        apparent::facet_of_vertices(self.c, &us[..k], e.diameter).is_some()
    }

    /// Adds to `w` the columns of `pivots` (their simplices and their reductions), and the
    /// left-out apparent columns, while its pivot is one of theirs (then `w.done`), or until
    /// an addition used up the budget of coboundaries (a column and its reduction are added
    /// whole, so one addition may pass it) and another is due (not done).
    fn add_known(&self, w: &mut Working, pivots: &Pivots, v: &Reduction, scratch: &mut Vec<usize>) {
        let (c, dim) = (self.c, self.dim);
        let mut budget = self.budget;
        w.done = false;
        while let Some(p) = w.pivot {
            let known = pivots.get(&p.index);
            if budget == 0 && known.is_some() {
                return;
            }
            if let Some(&j) = known {
                budget = budget.saturating_sub(1 + v.ends[j] - v.starts[j]);
                w.added.push(self.columns[j]);
                push_coboundary(c, dim, self.columns[j], scratch, &mut w.column);
                for &s in &v.entries[v.starts[j]..v.ends[j]] {
                    w.added.push(s);
                    push_coboundary(c, dim, s, scratch, &mut w.column);
                }
            } else if let Some(f) =
                self.on_the_fly.then(|| apparent::facet_into(c, p, dim + 1, scratch)).flatten()
            {
                if budget == 0 {
                    return;
                }
                // An apparent column's reduced column is its coboundary.
                budget -= 1;
                w.added.push(f);
                push_coboundary_of(c, f, scratch, &mut w.column);
            } else {
                break;
            }
            if w.column.held() >= w.compact_at {
                w.column.compact();
                w.compact_at = (2 * w.column.held()).max(COMPACT_FROM);
            }
            w.pivot = w.column.pivot();
        }
        w.done = true;
    }
}

/// The bytes a dimension's columns and simplices hold: a column costs its entry, its
/// apparent-pair slot and its pivot's hash slot.
fn bytes_held(columns: usize, simplices: usize) -> u64 {
    (columns * 48 + simplices * 16) as u64
}

fn over_budget(c: &Complex, dim: usize) -> RipsError {
    RipsError::Invalid(format!(
        "the simplices of dimension {dim} within the threshold need more than the {:.1} GiB of memory \
         available: give a smaller threshold or a lower highest dimension",
        c.budget as f64 / (1u64 << 30) as f64
    ))
}

/// Whether `columns` columns and `simplices` simplices of dimension `dim`, listed elsewhere,
/// fit the memory the complex may take.
pub fn within_budget(c: &Complex, dim: usize, columns: usize, simplices: usize) -> Result<(), RipsError> {
    if bytes_held(columns, simplices) > c.budget { Err(over_budget(c, dim)) } else { Ok(()) }
}

/// The columns of dimension `dim + 1`: its simplices within the threshold (each met once,
/// from its facet without the largest vertex) that are no pivot of dimension `dim`; and all
/// those simplices, for the dimension after. When `dim + 1` is the highest (`top`), the
/// simplices are not kept and apparent columns are left out ([`Apparent::LeftOut`]).
pub fn next_columns(
    c: &Complex,
    dim: usize,
    simplices: &[Entry],
    pivots: &Pivots,
    top: bool,
    ctl: &Control,
) -> Result<(Vec<Entry>, Vec<Entry>), RipsError> {
    use rayon::prelude::*;
    // Chunks of simplices on all cores, their cofacets concatenated in order; the bytes held
    // so far are counted across chunks, to refuse (not swap or be killed) past the budget.
    let held = AtomicU64::new(0);
    let chunk = |part: &[Entry]| -> Result<(Vec<Entry>, Vec<Entry>), RipsError> {
        ctl.check()?;
        let (mut columns, mut next) = (Vec::new(), Vec::new());
        let mut vertices = Vec::with_capacity(dim + 2);
        let mut cofacet = [0; super::MAX_DIM + 2];
        for s in part {
            c.table.vertices(s.index, dim, c.d.len(), &mut vertices);
            cofacet[1..=dim + 1].copy_from_slice(&vertices);
            let mut cob = Coboundary::new(c, *s, &vertices);
            while cob.has_next(false) {
                let (e, added) = cob.next_cofacet();
                if e.diameter <= c.threshold {
                    if !top {
                        next.push(e);
                    }
                    // The added vertex is above the simplex's: the cofacet's vertices are it
                    // and then theirs.
                    cofacet[0] = added;
                    let cleared = pivots.contains_key(&e.index);
                    if !cleared
                        && (!top || apparent::cofacet_vertex(c, &cofacet[..dim + 2], e.diameter).is_none())
                    {
                        columns.push(e);
                    }
                }
            }
        }
        let bytes = bytes_held(columns.len(), next.len());
        if held.fetch_add(bytes, Ordering::Relaxed) + bytes > c.budget {
            return Err(over_budget(c, dim + 1));
        }
        Ok((columns, next))
    };
    let parts: Vec<(Vec<Entry>, Vec<Entry>)> =
        simplices.par_chunks(super::chunk_for(simplices.len(), 64)).map(chunk).collect::<Result<_, _>>()?;
    let mut columns = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let mut next = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
    for (c, n) in parts {
        columns.extend(c);
        next.extend(n);
    }
    sort_columns(&mut columns);
    Ok((columns, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::rips::index::{Binomials, Neighbors};
    use crate::topo::rips::{Distances, OnCpu};

    /// Every schedule pairs the same columns with the same cofacets as the sequential
    /// reduction (one thread, one column open, no budget), zero-persistence pairs (no bar)
    /// included: dimension 1 with its apparent pairs found first, dimension 2 as the top, its
    /// apparent columns met on the fly; dense and under a threshold.
    #[test]
    fn every_schedule_finds_the_sequential_pivots() {
        let ctl = Control::default();
        let mut next = crate::synthetic::noise(23);
        let schedules = [(1, 1), (1, 2), (3, 1), (2, 7), (512, 256)].map(|(w, b)| Schedule {
            window_per_thread: w,
            budget: b,
            tail: 0,
            fail_guess: false,
        });
        let sequential = Schedule { window_per_thread: 1, budget: usize::MAX, tail: 0, fail_guess: false };
        let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool");
        for round in 0..30 {
            let dim = 2 + round % 2;
            let n = 10 + (next() % 20) as usize;
            let p: Vec<f64> = (0..n * dim).map(|_| (next() % 4) as f64).collect();
            let d = Distances::euclidean(&p, dim, &ctl).expect("finite points");
            let table = Binomials::new(n, 4).expect("small numbers");
            for threshold in [f32::INFINITY, 2.0] {
                let neighbors = threshold.is_finite().then(|| Neighbors::new(&d, threshold));
                let square = d.square();
                let c = Complex {
                    d: &d,
                    table: &table,
                    threshold,
                    neighbors: neighbors.as_ref(),
                    square: round.is_multiple_of(2).then_some(&square[..]),
                    shortest: d.within(threshold).1,
                    budget: u64::MAX,
                };
                let (edges_left, edges) = dim0(&c, &mut Vec::new());
                let reduced = |dim: usize, columns: &[Entry], top: bool, schedule: Schedule| {
                    let mut cpu = OnCpu(&ctl);
                    let apparent = if top { Apparent::LeftOut } else { Apparent::Found(&mut cpu) };
                    let mut stages = Stages::from_env();
                    let cols = super::super::Columns { complex: &c, dim, columns };
                    reduce(&cols, &mut Vec::new(), apparent, schedule, Overlap::default(), &mut stages, &ctl)
                        .expect("a reduction")
                        .pivots
                };
                let p1 = one_thread.install(|| reduced(1, &edges_left, false, sequential));
                let (triangles, _) = next_columns(&c, 1, &edges, &p1, true, &ctl).expect("the columns");
                let p2 = one_thread.install(|| reduced(2, &triangles, true, sequential));
                for &s in &schedules {
                    assert_eq!(reduced(1, &edges_left, false, s), p1, "round {round}, dimension 1, {s:?}");
                    assert_eq!(reduced(2, &triangles, true, s), p2, "round {round}, dimension 2, {s:?}");
                }
            }
        }
    }
}
