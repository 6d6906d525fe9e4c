//! The saddle-saddle part of the simplification (3D fields): 1-saddles and 2-saddles joined by
//! arcs with V-path counts, and the cancellation of a pair joined by exactly one V-path.
//!
//! Cancelling a 2-saddle `q` with a 1-saddle `p` reverses the one V-path between them, so every
//! 2-saddle `r` that reached `p` now reaches every 1-saddle `t` that `q` reached, through
//! `r -> p`, back up `p -> q`, and `q -> t`, with `m(r, p) * m(q, t)` V-paths (Gyulassy, Bremer,
//! Hamann, Pascucci 2008; gmSC section 4). No other arcs change: a 1-saddle's arcs to minima and
//! a 2-saddle's arcs to maxima simply go with it.
//!
//! Representation, chosen so that a cancellation costs only the arcs of its two nodes: the live
//! saddle-saddle arcs in one hash map by their ends, with the summed count and one arc to draw,
//! and per saddle the list of the saddles it has been joined to. An arc goes only when one of
//! its ends dies, so the lists are never searched or shortened: a dead end is skipped where a
//! list is read. (Lists of arcs searched linearly took 20 ms of the 256^3 GRF's hierarchy on the
//! 2-core VM: degrees grow as cancellations join saddles.) Each arc a cancellation makes is an
//! immutable record naming its three pieces, so no geometry is ever copied (a merged arc's
//! polyline is the concatenation of its pieces', built when it is drawn) and the complex at any
//! step is the original arcs plus the records born by then, between ends alive then.

use super::complex::MorseSmale;
use super::morse::Multiplicity;
use rustc_hash::FxHashMap as HashMap;

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

#[derive(Clone, Copy, Debug)]
struct Edge {
    paths: Multiplicity,
    /// One arc id joining the two, the one drawn for new arcs through this edge.
    arc: u32,
}

/// The key of the arc between 2-saddle `upper` and 1-saddle `lower`.
fn key(upper: u32, lower: u32) -> u64 {
    (upper as u64) << 32 | lower as u64
}

/// The live saddle-saddle arcs during the cancellation loop.
pub(super) struct SaddleGraph {
    /// The arcs by their ends ([`key`]); those with a dead end are left in, never read.
    edges: HashMap<u64, Edge>,
    /// Per critical point id: for a 2-saddle, the 1-saddles it has been joined to; for a
    /// 1-saddle, the 2-saddles. Each once, in the order they were joined; dead ones included.
    next: Vec<Vec<u32>>,
    dead: Vec<bool>,
    /// Arcs in the complex (added arcs are numbered after them).
    originals: usize,
}

impl SaddleGraph {
    /// The saddle-saddle arcs of `c` (none in 2D).
    pub fn new(c: &MorseSmale) -> SaddleGraph {
        let n = c.critical.len();
        let mut g = SaddleGraph {
            // Room for the arcs cancellations make too (as many again on the 256^3 GRF): growing
            // the map rehashes every arc.
            edges: HashMap::with_capacity_and_hasher(2 * c.arcs.len() / 3, Default::default()),
            next: vec![Vec::new(); n],
            dead: vec![false; n],
            originals: c.arcs.len(),
        };
        if c.grid.ndim == 3 {
            for (i, a) in c.arcs.iter().enumerate() {
                if (c.critical[a.upper].index, c.critical[a.lower].index) == (2, 1) {
                    g.join(a.upper as u32, a.lower as u32, a.multiplicity, i as u32);
                }
            }
        }
        g
    }

    /// V-paths from 2-saddle `upper` to 1-saddle `lower` now, and an arc id joining them.
    pub fn between(&self, upper: usize, lower: usize) -> Option<(Multiplicity, usize)> {
        if self.dead[upper] || self.dead[lower] {
            return None;
        }
        self.edges.get(&key(upper as u32, lower as u32)).map(|e| (e.paths, e.arc as usize))
    }

    /// Removes saddle `x` and its arcs (it was cancelled with an extremum).
    pub fn remove(&mut self, x: usize) {
        self.dead[x] = true;
        self.next[x] = Vec::new();
    }

    /// Adds `paths` V-paths from `upper` to `lower` through arc `arc`; true if they were not
    /// joined before.
    fn join(&mut self, upper: u32, lower: u32, paths: Multiplicity, arc: u32) -> bool {
        match self.edges.entry(key(upper, lower)) {
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let e = e.get_mut();
                e.paths = e.paths.plus(paths);
                false
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Edge { paths, arc });
                self.next[upper as usize].push(lower);
                self.next[lower as usize].push(upper);
                true
            }
        }
    }

    /// The live arcs of saddle `x` but the one to `but`, as (the other end, V-paths, arc id).
    fn live(&self, x: usize, but: usize, upper: bool) -> Vec<(u32, Multiplicity, u32)> {
        self.next[x]
            .iter()
            .filter(|&&y| y as usize != but && !self.dead[y as usize])
            .map(|&y| {
                let k = if upper { key(x as u32, y) } else { key(y, x as u32) };
                let e = self.edges[&k];
                (y, e.paths, e.arc)
            })
            .collect()
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
        let above = self.live(p, q, false);
        let below = self.live(q, p, true);
        self.remove(p);
        self.remove(q);
        for &(r, rp, ra) in &above {
            for &(t, tp, ta) in &below {
                let id = (self.originals + added.len()) as u32;
                let paths = rp.times(tp);
                added.push(AddedArc {
                    upper: r,
                    lower: t,
                    multiplicity: paths,
                    born: step as u32,
                    pieces: [ra, qp as u32, ta],
                });
                if self.join(r, t, paths, id) {
                    joined(r as usize, t as usize);
                }
            }
        }
    }
}
