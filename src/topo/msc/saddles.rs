//! The saddle-saddle part of the simplification (3D fields): 1-saddles and 2-saddles joined by
//! arcs with V-path counts, and the cancellation of a pair joined by exactly one V-path.
//!
//! Cancelling a 2-saddle `q` with a 1-saddle `p` reverses the one V-path between them, so every
//! 2-saddle `r` that reached `p` now reaches every 1-saddle `t` that `q` reached, through
//! `r -> p`, back up `p -> q`, and `q -> t`, with `m(r, p) * m(q, t)` V-paths (Gyulassy, Bremer,
//! Hamann, Pascucci 2008; gmSC section 4). No other arcs change: a 1-saddle's arcs to minima and
//! a 2-saddle's arcs to maxima simply go with it.
//!
//! Representation, chosen so that a cancellation costs only the arcs of its two nodes: per live
//! saddle, its live saddle-saddle neighbours with the summed count and one arc to draw (a
//! vector, searched linearly: degrees stay small); each arc a cancellation makes is an
//! immutable record naming its three pieces, so no geometry is ever copied (a merged arc's
//! polyline is the concatenation of its pieces', built when it is drawn) and the complex at any
//! step is the original arcs plus the records born by then, between ends alive then.

use super::complex::MorseSmale;
use super::morse::Multiplicity;

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
    to: u32,
    paths: Multiplicity,
    /// One arc id joining the two, the one drawn for new arcs through this edge.
    arc: u32,
}

/// The live saddle-saddle arcs during the cancellation loop.
pub(super) struct SaddleGraph {
    /// Per critical point id: for a 2-saddle, its 1-saddles below; for a 1-saddle, its
    /// 2-saddles above. Empty for extrema and for dead saddles.
    next: Vec<Vec<Edge>>,
    /// Arcs in the complex (added arcs are numbered after them).
    originals: usize,
}

fn find(edges: &[Edge], to: u32) -> Option<usize> {
    edges.iter().position(|e| e.to == to)
}

impl SaddleGraph {
    /// The saddle-saddle arcs of `c` (none in 2D).
    pub fn new(c: &MorseSmale) -> SaddleGraph {
        let mut next: Vec<Vec<Edge>> = vec![Vec::new(); c.critical.len()];
        if c.grid.ndim == 3 {
            for (i, a) in c.arcs.iter().enumerate() {
                if (c.critical[a.upper].index, c.critical[a.lower].index) == (2, 1) {
                    next[a.upper].push(Edge { to: a.lower as u32, paths: a.multiplicity, arc: i as u32 });
                    next[a.lower].push(Edge { to: a.upper as u32, paths: a.multiplicity, arc: i as u32 });
                }
            }
        }
        SaddleGraph { next, originals: c.arcs.len() }
    }

    /// V-paths from 2-saddle `upper` to 1-saddle `lower` now, and an arc id joining them.
    pub fn between(&self, upper: usize, lower: usize) -> Option<(Multiplicity, usize)> {
        let es = &self.next[upper];
        find(es, lower as u32).map(|i| (es[i].paths, es[i].arc as usize))
    }

    /// Removes saddle `x` and its arcs (it was cancelled with an extremum).
    pub fn remove(&mut self, x: usize) {
        for e in std::mem::take(&mut self.next[x]) {
            let back = &mut self.next[e.to as usize];
            if let Some(i) = find(back, x as u32) {
                back.swap_remove(i);
            }
        }
    }

    /// Adds `paths` V-paths from `upper` to `lower` through arc `arc`; true if they were not
    /// joined before.
    fn join(&mut self, upper: u32, lower: u32, paths: Multiplicity, arc: u32) -> bool {
        let mut new = false;
        for (from, to) in [(upper, lower), (lower, upper)] {
            let es = &mut self.next[from as usize];
            match find(es, to) {
                Some(i) => es[i].paths = es[i].paths.plus(paths),
                None => {
                    es.push(Edge { to, paths, arc });
                    new = true;
                }
            }
        }
        new
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
        let above: Vec<Edge> = self.next[p].iter().filter(|e| e.to as usize != q).copied().collect();
        let below: Vec<Edge> = self.next[q].iter().filter(|e| e.to as usize != p).copied().collect();
        self.remove(p);
        self.remove(q);
        for r in &above {
            for t in &below {
                let id = (self.originals + added.len()) as u32;
                let paths = r.paths.times(t.paths);
                added.push(AddedArc {
                    upper: r.to,
                    lower: t.to,
                    multiplicity: paths,
                    born: step as u32,
                    pieces: [r.arc, qp as u32, t.arc],
                });
                if self.join(r.to, t.to, paths, id) {
                    joined(r.to as usize, t.to as usize);
                }
            }
        }
    }
}
