//! The saddle-saddle part of the simplification (3D fields): 1-saddles and 2-saddles joined by
//! arcs with V-path counts, and the cancellation of a pair joined by exactly one V-path.
//!
//! Cancelling a 2-saddle `q` with a 1-saddle `p` reverses the one V-path between them, so every
//! 2-saddle `r` that reached `p` now reaches every 1-saddle `t` that `q` reached, through
//! `r -> p`, back up `p -> q`, and `q -> t`, with `m(r, p) * m(q, t)` V-paths (Gyulassy, Bremer,
//! Hamann, Pascucci 2008; gmSC section 4). No other arcs change: a 1-saddle's arcs to minima and
//! a 2-saddle's arcs to maxima simply go with it.
//!
//! Representation, chosen so that a cancellation costs only the arcs of its two nodes and of
//! their neighbours: per saddle, the list of the saddles it has been joined to, each with the
//! summed count, one arc to draw and its twin's place in the other end's list, all lists in one
//! pool. An arc goes only when one of its ends dies, so lists are never shortened and places
//! never move: a dead end is skipped where a list is read. A cancellation finds which of the
//! pairs it joins are joined already by reading the lists on its smaller side once, with the
//! other side marked. (Lists of live arcs alone had to be searched linearly on every join and
//! removal. A hash map from an arc's ends to its places was a cache miss a join, and building
//! it was most of the hierarchy's set-up: the lists read instead hold about three edges for each
//! hash lookup saved, on the 256^3 GRF and on white noise alike, and are read whole.) Each
//! arc a cancellation makes is an immutable record naming its three pieces, so no geometry is
//! ever copied (a merged arc's polyline is the concatenation of its pieces', built when it is
//! drawn) and the complex at any step is the original arcs plus the records born by then,
//! between ends alive then.

use super::complex::MorseSmale;
use super::vpaths::Multiplicity;

/// A saddle-saddle arc made by a cancellation.
#[derive(Clone, Debug, PartialEq)]
pub struct AddedArc {
    /// Critical point ids of its 2-saddle and 1-saddle.
    pub upper: u32,
    pub lower: u32,
    /// V-paths it adds between them (parallel arcs add up).
    pub multiplicity: Multiplicity,
    /// The cancellation (1-based step) that made it: it lives from then on while both ends do.
    pub born: u32,
    /// Arc ids (the complex's arcs, then added arcs after them) of its pieces, each stored from
    /// its 2-saddle down: `upper` to the cancelled 1-saddle, the cancelled pair's arc (walked
    /// upwards), the cancelled 2-saddle to `lower`.
    pub pieces: [u32; 3],
}

/// An arc as one of its ends lists it.
#[derive(Clone, Copy, Debug)]
struct Edge {
    /// The other end.
    to: u32,
    /// One arc id joining the two, the one drawn for new arcs through this edge.
    arc: u32,
    /// Where the same arc lies in the other end's list.
    twin: u32,
    paths: Multiplicity,
}

impl Edge {
    /// Room not yet taken in a list.
    const UNUSED: Edge = Edge { to: u32::MAX, arc: u32::MAX, twin: u32::MAX, paths: Multiplicity::ZERO };
}

/// No mark, no place.
const NONE: u32 = u32::MAX;

/// The saddle-saddle arcs during the cancellation loop: the live ones, and those with a dead
/// end, which are never read.
#[derive(Default)]
pub(super) struct SaddleGraph {
    /// Per critical point id, where its list lies in `pool`: for a 2-saddle, the 1-saddles it
    /// has been joined to; for a 1-saddle, the 2-saddles. Each once, in the order they were
    /// joined; dead ones included.
    lists: Vec<List>,
    /// Every list's edges. A list that outgrows its room moves to one of the next power of two
    /// (given back before, or new), and a dead saddle's room is given back: no allocation or
    /// free per saddle. (With a vector per saddle, allocating, growing and freeing them took
    /// longer than the rest of the extremum-saddle cancellations.)
    pool: Vec<Edge>,
    /// Rooms given back, by size class: `free[k]` holds (start, room) with room in
    /// [2^k, 2^(k+1)). (Rooms left behind made the pool of white noise 128^3 40 M edges, for 24
    /// M ever listed.)
    free: Vec<Vec<(usize, u32)>>,
    dead: Vec<bool>,
    /// Arcs in the complex (added arcs are numbered after them).
    originals: usize,
    /// Arcs between saddles, live or not.
    arcs: usize,
    /// Per critical point id, [`NONE`] but while a cancellation marks it.
    mark: Vec<u32>,
    /// Kept between cancellations: the two lists a cancellation joins, and per pair of them
    /// the place of the arc that joins them already ([`NONE`] if none).
    scratch: (Vec<Edge>, Vec<Edge>, Vec<u32>),
}

/// A saddle's list in [`SaddleGraph::pool`]: `len` edges from `start`, room for `room`.
#[derive(Clone, Copy, Default)]
struct List {
    start: usize,
    len: u32,
    room: u32,
}

impl List {
    fn range(self) -> std::ops::Range<usize> {
        self.start..self.start + self.len as usize
    }
}

impl SaddleGraph {
    /// The saddle-saddle arcs of `c` (none in 2D).
    pub fn new(c: &MorseSmale) -> SaddleGraph {
        let n = c.critical.len();
        let mut g = SaddleGraph {
            lists: vec![List::default(); n],
            pool: Vec::new(),
            free: vec![Vec::new(); 32],
            dead: vec![false; n],
            originals: c.arcs.len(),
            arcs: 0,
            mark: Vec::new(),
            scratch: Default::default(),
        };
        if c.grid.ndim == 3 {
            g.mark = vec![NONE; n];
            let saddle_saddle =
                |a: &&super::complex::Arc| (c.critical[a.upper].index, c.critical[a.lower].index) == (2, 1);
            // Each list laid out at its first size.
            let mut start = 0;
            for a in c.arcs.iter().filter(saddle_saddle) {
                g.lists[a.upper].room += 1;
                g.lists[a.lower].room += 1;
            }
            for list in &mut g.lists {
                list.start = start;
                start += list.room as usize;
            }
            // Room for the edges cancellations add (twice the arcs they make, about as many
            // arcs again as at the start on the 256^3 GRF) and for the lists they move: a
            // pool that grows copies itself.
            g.pool = Vec::with_capacity(2 * start);
            g.pool.resize(start, Edge::UNUSED);
            for (i, a) in c.arcs.iter().enumerate().filter(|(_, a)| saddle_saddle(a)) {
                let (u, l) = (a.upper as u32, a.lower as u32);
                // (The complex lists a pair of saddles once; added up all the same if not. The
                // shorter list is read.)
                let (x, y) = if g.lists[a.upper].len <= g.lists[a.lower].len { (u, l) } else { (l, u) };
                match g.place(x, y) {
                    Some(at) => g.add_paths(x, at, a.multiplicity),
                    None => g.join(u, l, a.multiplicity, i as u32),
                }
            }
        }
        g
    }

    /// Saddle-saddle arcs between live saddles or not.
    pub fn arcs(&self) -> usize {
        self.arcs
    }

    /// Saddle `x`'s edges, dead ends included.
    fn edges(&self, x: usize) -> &[Edge] {
        &self.pool[self.lists[x].range()]
    }

    /// The place in `a`'s list of the arc joining saddles `a` and `b`, if any.
    fn place(&self, a: u32, b: u32) -> Option<u32> {
        self.edges(a as usize).iter().position(|e| e.to == b).map(|at| at as u32)
    }

    /// Adds `paths` V-paths to the arc at place `at` in `x`'s list, and to its twin.
    fn add_paths(&mut self, x: u32, at: u32, paths: Multiplicity) {
        let e = &mut self.pool[self.lists[x as usize].start + at as usize];
        e.paths = e.paths.plus(paths);
        let (to, twin) = (e.to as usize, e.twin as usize);
        let t = &mut self.pool[self.lists[to].start + twin];
        t.paths = t.paths.plus(paths);
    }

    /// Appends `e` to saddle `x`'s list.
    fn push(&mut self, x: usize, e: Edge) {
        let list = self.lists[x];
        if list.len == list.room {
            let (start, room) = self.take_room((list.len + 1).next_power_of_two().max(4));
            self.pool.copy_within(list.range(), start);
            self.give_back(list);
            self.lists[x] = List { start, room, ..list };
        }
        let list = &mut self.lists[x];
        self.pool[list.start + list.len as usize] = e;
        list.len += 1;
    }

    /// A room for `want` edges (a power of two), given back before or new: (start, room).
    fn take_room(&mut self, want: u32) -> (usize, u32) {
        if let Some(room) = self.free[want.trailing_zeros() as usize].pop() {
            return room;
        }
        let start = self.pool.len();
        self.pool.resize(start + want as usize, Edge::UNUSED);
        (start, want)
    }

    /// Gives `list`'s room back to the pool.
    fn give_back(&mut self, list: List) {
        if list.room > 0 {
            self.free[list.room.ilog2() as usize].push((list.start, list.room));
        }
    }

    /// Joins 2-saddle `upper` to 1-saddle `lower` (not joined yet) with `paths` V-paths through
    /// arc `arc`.
    fn join(&mut self, upper: u32, lower: u32, paths: Multiplicity, arc: u32) {
        let (u, l) = (upper as usize, lower as usize);
        let (at_u, at_l) = (self.lists[u].len, self.lists[l].len);
        self.push(u, Edge { to: lower, arc, twin: at_l, paths });
        self.push(l, Edge { to: upper, arc, twin: at_u, paths });
        self.arcs += 1;
    }

    /// V-paths from 2-saddle `upper` to 1-saddle `lower` now, and an arc id joining them.
    pub fn between(&self, upper: usize, lower: usize) -> Option<(Multiplicity, usize)> {
        if self.dead[upper] || self.dead[lower] {
            return None;
        }
        let at = self.place(upper as u32, lower as u32)?;
        let e = &self.edges(upper)[at as usize];
        Some((e.paths, e.arc as usize))
    }

    /// Removes saddle `x` and its arcs (it was cancelled with an extremum).
    pub fn remove(&mut self, x: usize) {
        self.dead[x] = true;
        // (Its list is never read again: the lists of the live saddles it was joined to hold
        // the edges that matter, and skip it.)
        let list = std::mem::take(&mut self.lists[x]);
        self.give_back(list);
    }

    /// Asks for saddle `x`'s list, and the room after it, to be brought into cache.
    pub fn prefetch(&self, x: usize) {
        let list = self.lists[x];
        for at in [list.start, list.start + list.len as usize] {
            if let Some(e) = self.pool.get(at) {
                prefetch(e);
            }
        }
    }

    /// The live arcs of saddle `x`, but the one to `but`, into `out`.
    fn live_into(&self, x: usize, but: usize, out: &mut Vec<Edge>) {
        out.clear();
        out.extend(self.edges(x).iter().filter(|e| e.to as usize != but && !self.dead[e.to as usize]));
    }

    /// Per pair of `above` and `below` (row-major), the place of the arc joining their ends
    /// already in the list of one of them, into `found` ([`NONE`] where none); true if the
    /// places are in the lists of `above`'s ends. The lists of the side whose lists are
    /// shorter in all are read, the other side's ends marked.
    fn joined_already(&mut self, above: &[Edge], below: &[Edge], found: &mut Vec<u32>) -> bool {
        let length =
            |side: &[Edge]| side.iter().map(|e| self.lists[e.to as usize].len as usize).sum::<usize>();
        let read_above = length(above) <= length(below);
        let (read, marked) = if read_above { (above, below) } else { (below, above) };
        found.clear();
        found.resize(above.len() * below.len(), NONE);
        for (j, e) in marked.iter().enumerate() {
            self.mark[e.to as usize] = j as u32;
        }
        for (i, r) in read.iter().enumerate() {
            for (at, e) in self.edges(r.to as usize).iter().enumerate() {
                let j = self.mark[e.to as usize];
                if j != NONE {
                    let (a, b) = if read_above { (i, j as usize) } else { (j as usize, i) };
                    found[a * below.len() + b] = at as u32;
                }
            }
        }
        for e in marked {
            self.mark[e.to as usize] = NONE;
        }
        read_above
    }

    /// Cancels 2-saddle `q` with 1-saddle `p` (joined by one V-path through arc `qp`) at
    /// `step`: both leave, the arcs through them are rewired into `added`, and `joined` hears
    /// of every pair of saddles joined for the first time.
    pub fn cancel(
        &mut self,
        q: usize,
        p: usize,
        qp: usize,
        step: usize,
        added: &mut Vec<AddedArc>,
        mut joined: impl FnMut(usize, usize),
    ) {
        // (Kept between cancellations rather than allocated for each.)
        let (mut above, mut below, mut found) = std::mem::take(&mut self.scratch);
        self.live_into(p, q, &mut above);
        self.live_into(q, p, &mut below);
        self.remove(p);
        self.remove(q);
        let read_above = self.joined_already(&above, &below, &mut found);
        for (i, r) in above.iter().enumerate() {
            for (j, t) in below.iter().enumerate() {
                let id = (self.originals + added.len()) as u32;
                let paths = r.paths.times(t.paths);
                let pieces = [r.arc, qp as u32, t.arc];
                added.push(AddedArc {
                    upper: r.to,
                    lower: t.to,
                    multiplicity: paths,
                    born: step as u32,
                    pieces,
                });
                match found[i * below.len() + j] {
                    NONE => {
                        self.join(r.to, t.to, paths, id);
                        joined(r.to as usize, t.to as usize);
                    }
                    at => self.add_paths(if read_above { r.to } else { t.to }, at, paths),
                }
            }
        }
        self.scratch = (above, below, found);
    }
}

/// Asks for the cache line holding `x` (on x86-64; elsewhere nothing).
#[inline(always)]
pub(super) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no effect on memory, and `x` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
