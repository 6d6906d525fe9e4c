//! The saddle-saddle part of the simplification (3D fields): 1-saddles and 2-saddles joined by
//! arcs with V-path counts, and the cancellation of a pair joined by exactly one V-path.
//!
//! Cancelling a 2-saddle `q` with a 1-saddle `p` reverses the one V-path between them, so every
//! 2-saddle `r` that reached `p` now reaches every 1-saddle `t` that `q` reached, through
//! `r -> p`, back up `p -> q`, and `q -> t`, with `m(r, p) * m(q, t)` V-paths (Gyulassy, Bremer,
//! Hamann, Pascucci 2008; gmSC section 4). No other arcs change: a 1-saddle's arcs to minima and
//! a 2-saddle's arcs to maxima simply go with it.
//!
//! Representation, chosen so that a cancellation costs only the arcs of its two nodes: per
//! saddle, the list of the saddles it has been joined to, each with the summed count and one
//! arc to draw, and one hash map from an arc's ends to its places in the two lists. An arc goes
//! only when one of its ends dies, so lists are never searched or shortened and places never
//! move: a dead end is skipped where a list is read. (Lists of live arcs alone had to be searched
//! linearly on every join and removal, and degrees grow as cancellations join saddles.) Each
//! arc a cancellation makes is an immutable record naming its three pieces, so no geometry is
//! ever copied (a merged arc's polyline is the concatenation of its pieces', built when it is
//! drawn) and the complex at any step is the original arcs plus the records born by then,
//! between ends alive then.

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

/// An arc as one of its ends lists it.
#[derive(Clone, Copy, Debug)]
struct Edge {
    /// The other end.
    to: u32,
    /// One arc id joining the two, the one drawn for new arcs through this edge.
    arc: u32,
    paths: Multiplicity,
}

/// The key of the arc between 2-saddle `upper` and 1-saddle `lower`.
fn key(upper: u32, lower: u32) -> u64 {
    (upper as u64) << 32 | lower as u64
}

/// The saddle-saddle arcs during the cancellation loop: the live ones, and those with a dead
/// end, which are never read.
#[derive(Default)]
pub(super) struct SaddleGraph {
    /// Per critical point id: for a 2-saddle, the 1-saddles it has been joined to; for a
    /// 1-saddle, the 2-saddles. Each once, in the order they were joined; dead ones included.
    next: Vec<Vec<Edge>>,
    /// Per arc ([`key`]), its places in its upper end's list and its lower end's.
    place: HashMap<u64, (u32, u32)>,
    dead: Vec<bool>,
    /// Arcs in the complex (added arcs are numbered after them).
    originals: usize,
    /// The two lists a cancellation joins, kept allocated.
    scratch: (Vec<Edge>, Vec<Edge>),
}

impl SaddleGraph {
    /// The saddle-saddle arcs of `c` (none in 2D).
    pub fn new(c: &MorseSmale) -> SaddleGraph {
        let n = c.critical.len();
        let mut g = SaddleGraph {
            next: vec![Vec::new(); n],
            place: HashMap::default(),
            dead: vec![false; n],
            originals: c.arcs.len(),
            scratch: Default::default(),
        };
        if c.grid.ndim == 3 {
            let saddle_saddle =
                |a: &&super::complex::Arc| (c.critical[a.upper].index, c.critical[a.lower].index) == (2, 1);
            // Each list allocated once at its first size (pushes grew them several times each),
            // and the map with room for as many arcs again as cancellations make (as many again
            // on the 256^3 GRF): growing it rehashes every arc.
            let mut degree = vec![0u32; n];
            for a in c.arcs.iter().filter(saddle_saddle) {
                degree[a.upper] += 1;
                degree[a.lower] += 1;
            }
            for (list, &d) in g.next.iter_mut().zip(&degree) {
                list.reserve_exact(d as usize);
            }
            let arcs = degree.iter().map(|&d| d as usize).sum::<usize>() / 2;
            g.place.reserve(2 * arcs);
            for (i, a) in c.arcs.iter().enumerate().filter(|(_, a)| saddle_saddle(a)) {
                g.join(a.upper as u32, a.lower as u32, a.multiplicity, i as u32);
            }
        }
        g
    }

    /// V-paths from 2-saddle `upper` to 1-saddle `lower` now, and an arc id joining them.
    pub fn between(&self, upper: usize, lower: usize) -> Option<(Multiplicity, usize)> {
        if self.dead[upper] || self.dead[lower] {
            return None;
        }
        let &(at, _) = self.place.get(&key(upper as u32, lower as u32))?;
        let e = &self.next[upper][at as usize];
        Some((e.paths, e.arc as usize))
    }

    /// Removes saddle `x` and its arcs (it was cancelled with an extremum).
    pub fn remove(&mut self, x: usize) {
        self.dead[x] = true;
        self.next[x] = Vec::new();
    }

    /// Adds `paths` V-paths from `upper` to `lower` through arc `arc`; true if they were not
    /// joined before.
    fn join(&mut self, upper: u32, lower: u32, paths: Multiplicity, arc: u32) -> bool {
        let (u, l) = (upper as usize, lower as usize);
        match self.place.entry(key(upper, lower)) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let &(pu, pl) = e.get();
                let up = &mut self.next[u][pu as usize];
                up.paths = up.paths.plus(paths);
                let down = &mut self.next[l][pl as usize];
                down.paths = down.paths.plus(paths);
                false
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((self.next[u].len() as u32, self.next[l].len() as u32));
                self.next[u].push(Edge { to: lower, arc, paths });
                self.next[l].push(Edge { to: upper, arc, paths });
                true
            }
        }
    }

    /// The live arcs of saddle `x`, but the one to `but`, into `out`.
    fn live_into(&self, x: usize, but: usize, out: &mut Vec<Edge>) {
        out.clear();
        out.extend(self.next[x].iter().filter(|e| e.to as usize != but && !self.dead[e.to as usize]));
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
        // (Kept between cancellations rather than allocated twice for each.)
        let (mut above, mut below) = std::mem::take(&mut self.scratch);
        self.live_into(p, q, &mut above);
        self.live_into(q, p, &mut below);
        self.remove(p);
        self.remove(q);
        for r in &above {
            for t in &below {
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
                if self.join(r.to, t.to, paths, id) {
                    joined(r.to as usize, t.to as usize);
                }
            }
        }
        self.scratch = (above, below);
    }
}
