//! The Morse complex: critical cells joined by counted V-paths, and persistence computed on it
//! (far smaller than the grid, and equal to the persistence of the whole complex).
//!
//! The V-paths leaving a critical k-cell downwards form a DAG on (k-1)-cells: from a facet
//! `a`, the path goes on through `a`'s gradient partner `b` (a k-cell) to `b`'s other facets,
//! and stops at critical (k-1)-cells. Paths split and merge (between saddles in 3D their number
//! can grow exponentially), so they are counted on the DAG in topological order, never
//! enumerated.

use super::complex::MorseSmale;
use super::gradient::Gradient;
use super::grid::Cell;
use super::order::VertexOrder;
use super::persistence::{
    CellPair, by_dimension, cell_pairs, filtration_cmp, reduce_by_dimension, reduce_dimensions, top_vertex,
};
use super::simplify::UNPAIRED;
use crate::control::{Cancelled, Control};
use rayon::prelude::*;
// Cell ids hash well with a multiply; SipHash took a fifth of the arcs' time.
use rustc_hash::FxHashMap as HashMap;

/// Number of distinct V-paths from one critical cell to another. Packed to 8-byte alignment
/// (24 bytes, not 32): every arc, saddle-graph edge and made arc holds one. Read `count` by
/// value (`{ m.count }`); a reference to it would be unaligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, packed(8))]
pub struct Multiplicity {
    /// The count modulo 2^128 (exact unless `overflowed`; its parity is always exact).
    pub count: u128,
    pub overflowed: bool,
}

impl Multiplicity {
    pub const ZERO: Multiplicity = Multiplicity { count: 0, overflowed: false };

    pub fn plus(self, other: Multiplicity) -> Multiplicity {
        let (count, o) = self.count.overflowing_add(other.count);
        Multiplicity { count, overflowed: self.overflowed || other.overflowed || o }
    }

    /// Paths through both: each of one's followed by each of the other's (mod 2^128, so the
    /// parity stays exact).
    pub fn times(self, other: Multiplicity) -> Multiplicity {
        let (count, o) = self.count.overflowing_mul(other.count);
        Multiplicity { count, overflowed: self.overflowed || other.overflowed || o }
    }

    pub fn is_odd(&self) -> bool {
        self.count % 2 == 1
    }
}

/// Critical (k-1)-cells reached by descending V-paths from the critical k-cell `sigma`, in
/// cell-id order, each with the number of paths to it and one of those paths as the cells it
/// visits (`sigma` first, the target last).
///
/// The path kept is a shortest one, and among those the one that, walked back from the target,
/// steps each time to the predecessor of smallest cell id. That choice depends on no traversal
/// order, so the GPU (kernels/msc.cu), which explores every saddle's DAG level by level on many
/// threads at once, finds the same path.
pub fn descending(g: &Gradient, sigma: Cell) -> Vec<(Cell, Multiplicity, Vec<Cell>)> {
    let grid = &g.grid;
    // The cells a path at `a` goes on to: the other facets of a's partner above it (at most 5,
    // kept on the stack: an allocation per step was half the arcs' time).
    let next = |a: Cell| -> Successors {
        let mut out = Successors { cells: [0; 5], n: 0 };
        if let Some(b) = g.partner(a).filter(|&b| grid.dim(b) > grid.dim(a)) {
            for f in grid.facets(b).filter(|&f| f != a) {
                out.cells[out.n as usize] = f;
                out.n += 1;
            }
        }
        out
    };
    SCRATCH.with_borrow_mut(|scratch| descend(g, sigma, next, scratch))
}

/// A cell of one saddle's DAG.
struct Node {
    cell: Cell,
    /// Steps from the saddle's facets (0 for them).
    depth: u32,
    /// Among the cells one step less deep that lead here, the smallest (the saddle for its
    /// facets).
    parent: Cell,
    /// Arcs into it from the DAG's cells not yet counted.
    waiting: u32,
    paths: Multiplicity,
}

/// Per thread, the traversal's map and lists, emptied between saddles but kept allocated:
/// fresh ones per saddle were millions of short allocations among the arcs' long-lived ones,
/// which left the heap fragmented (a third more resident memory than live data).
#[derive(Default)]
struct Scratch {
    /// Place in `nodes` of each cell reached.
    index: HashMap<Cell, u32>,
    /// The cells reached, in breadth-first order.
    nodes: Vec<Node>,
    /// Nodes whose every predecessor has been counted.
    ready: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

fn descend(
    g: &Gradient,
    sigma: Cell,
    next: impl Fn(Cell) -> Successors,
    scratch: &mut Scratch,
) -> Vec<(Cell, Multiplicity, Vec<Cell>)> {
    let Scratch { index, nodes, ready } = scratch;
    index.clear();
    nodes.clear();
    ready.clear();
    let one = Multiplicity { count: 1, overflowed: false };
    for s in g.grid.facets(sigma) {
        index.insert(s, nodes.len() as u32);
        nodes.push(Node { cell: s, depth: 0, parent: sigma, waiting: 0, paths: one });
    }
    // Breadth first: the nodes list is the queue, so the cells of one depth are all seen before
    // the next depth's, and a cell's parent is settled once its depth's cells are done.
    let mut i = 0;
    while i < nodes.len() {
        let (a, d) = (nodes[i].cell, nodes[i].depth);
        let mut succ = next(a);
        while let Some(w) = succ.pop() {
            match index.entry(w) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let n = &mut nodes[*e.get() as usize];
                    n.waiting += 1;
                    if n.depth == d + 1 {
                        n.parent = n.parent.min(a);
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(nodes.len() as u32);
                    let paths = Multiplicity { count: 0, overflowed: false };
                    nodes.push(Node { cell: w, depth: d + 1, parent: a, waiting: 1, paths });
                }
            }
        }
        i += 1;
    }
    // Paths are counted in a topological order (Kahn's): a node passes its count on once every
    // node before it has passed theirs. The DAG's sources are among the saddle's facets.
    ready.extend((0..nodes.len() as u32).filter(|&i| nodes[i as usize].waiting == 0));
    let mut out = Vec::new();
    while let Some(i) = ready.pop() {
        let (c, m) = (nodes[i as usize].cell, nodes[i as usize].paths);
        if g.is_critical(c) {
            out.push((c, m, path_to(g, sigma, c, index, nodes)));
            continue;
        }
        let mut succ = next(c);
        while let Some(w) = succ.pop() {
            let j = index[&w];
            let n = &mut nodes[j as usize];
            n.paths = n.paths.plus(m);
            n.waiting -= 1;
            if n.waiting == 0 {
                ready.push(j);
            }
        }
    }
    out.sort_by_key(|(c, _, _)| *c);
    out
}

/// The kept path from `sigma` to `target` ([`descending`]), walked back through the parents
/// with each step's gradient partner.
fn path_to(g: &Gradient, sigma: Cell, target: Cell, index: &HashMap<Cell, u32>, nodes: &[Node]) -> Vec<Cell> {
    let mut cells = vec![target];
    let mut at = &nodes[index[&target] as usize];
    while at.depth > 0 {
        let p = at.parent;
        cells.push(g.partner(p).expect("a path goes on through a paired cell"));
        cells.push(p);
        at = &nodes[index[&p] as usize];
    }
    cells.push(sigma);
    cells.reverse();
    cells
}

/// The successors of a cell on descending V-paths, popped from the end.
struct Successors {
    cells: [Cell; 5],
    n: u8,
}

impl Successors {
    fn pop(&mut self) -> Option<Cell> {
        self.n = self.n.checked_sub(1)?;
        Some(self.cells[self.n as usize])
    }
}

/// Critical cells in a filtration order: by their lower star's vertex, then dimension.
pub fn filtration_order(g: &Gradient, order: &(impl VertexOrder + ?Sized)) -> Vec<(Cell, usize)> {
    let mut crit: Vec<(Cell, usize)> = g
        .critical_cells()
        .par_iter()
        .flat_map_iter(|cells| cells.iter())
        .map(|&c| (c, top_vertex(&g.grid, order, c)))
        .collect();
    crit.par_sort_by(|&a, &b| filtration_cmp(&g.grid, order, a, b));
    crit
}

/// Persistence pairs of the lower-star filtration, computed on the Morse complex (boundaries
/// are the critical cells reached by an odd number of V-paths). Every pair has cells in
/// different lower stars (positive persistence in the vertex order).
pub fn persistence(g: &Gradient, order: &(impl VertexOrder + ?Sized)) -> Vec<CellPair> {
    let boundary =
        |c| descending(g, c).into_iter().filter(|(_, m, _)| m.is_odd()).map(|(t, _, _)| t).collect();
    match persistence_with(g, order, boundary, &crate::control::Control::default()) {
        Ok(p) => p,
        Err(crate::control::Cancelled) => unreachable!("no cancel flag was given"),
    }
}

/// [`persistence`] with the Morse boundary (critical cells reached by an odd number of V-paths)
/// given by `boundary`, for callers that have already counted the paths.
pub fn persistence_with(
    g: &Gradient,
    order: &(impl VertexOrder + ?Sized),
    boundary: impl Fn(Cell) -> Vec<Cell> + Sync,
    ctl: &crate::control::Control,
) -> Result<Vec<CellPair>, crate::control::Cancelled> {
    let crit = filtration_order(g, order);
    // Filtration positions by cell id, found by binary search.
    let mut by_cell: Vec<(Cell, usize)> = crit.iter().enumerate().map(|(i, &(c, _))| (c, i)).collect();
    by_cell.par_sort_unstable();
    let pos =
        |t: &Cell| by_cell[by_cell.binary_search_by_key(t, |e| e.0).expect("a boundary cell is critical")].1;
    let columns: Vec<Vec<usize>> = crit
        .par_iter()
        .map(|&(c, _)| if g.grid.dim(c) == 0 { Vec::new() } else { boundary(c).iter().map(pos).collect() })
        .collect();
    drop(by_cell);
    ctl.check()?;
    let dims: Vec<usize> = crit.iter().map(|&(c, _)| g.grid.dim(c)).collect();
    let reduced = reduce_by_dimension(columns, &dims, ctl)?;
    Ok(cell_pairs(&reduced, |i| crit[i].0, |i| dims[i]))
}

/// The persistence pairs of a Morse-Smale complex's critical points, from its arcs (which
/// counted every V-path: the Morse boundary is their odd part), and each point's partner by id
/// ([`UNPAIRED`] for an essential class). Equal to [`persistence`] on its gradient; positions
/// are found through an array by id, not by searching cells.
pub fn complex_persistence(
    c: &MorseSmale,
    order: &(impl VertexOrder + ?Sized),
    ctl: &Control,
) -> Result<(Vec<usize>, Vec<CellPair>), Cancelled> {
    // Vertices and cells must fit 31 bits for the packing below (check_size refuses larger).
    assert!(c.grid.n_cells() <= i32::MAX as usize, "cells past 2^31 (check_size)");
    let mut laps = crate::laps::Laps::msc("persistence");
    let p = &c.critical;
    // Critical point ids in filtration order (that of filtration_cmp: vertex key, vertex,
    // dimension, cell), sorted as packed integers: with a comparator reading the samples, this
    // preparation took 0.49 s on 128^3 white noise (2 cores), 0.33 s sorted as integers.
    let packed = |id: usize| {
        let q = &p[id];
        let key = (order.key(q.vertex) as u64 ^ (1 << 63)) as u128;
        key << 64 | (q.vertex as u128) << 33 | (q.index as u128) << 31 | q.cell as u128
    };
    let mut sorted: Vec<(u128, u32)> =
        (0..p.len()).into_par_iter().map(|id| (packed(id), id as u32)).collect();
    sorted.par_sort_unstable();
    let by_pos: Vec<usize> = sorted.into_iter().map(|(_, id)| id as usize).collect();
    laps.lap(|| format!("{} points sorted", p.len()));
    debug_assert!(by_pos.windows(2).all(|w| {
        let (a, b) = (&p[w[0]], &p[w[1]]);
        filtration_cmp(&c.grid, order, (a.cell, a.vertex), (b.cell, b.vertex)).is_lt()
    }));
    let mut pos = vec![0usize; p.len()];
    for (k, &id) in by_pos.iter().enumerate() {
        pos[id] = k;
    }
    // The Morse boundary: per column, the critical points its arcs of odd multiplicity reach.
    let dims: Vec<usize> = by_pos.iter().map(|&id| p[id].index as usize).collect();
    let odd = || c.arcs.iter().filter(|a| a.multiplicity.is_odd()).map(|a| (pos[a.upper], pos[a.lower]));
    let (split, members) = by_dimension(&dims, odd);
    drop(pos);
    laps.lap(|| "columns".into());
    ctl.check()?;
    let reduced = reduce_dimensions(split, &members, ctl)?;
    laps.lap(|| "reduced".into());
    let mut partner = vec![UNPAIRED; p.len()];
    for &(b, d) in &reduced.0 {
        partner[by_pos[b]] = by_pos[d];
        partner[by_pos[d]] = by_pos[b];
    }
    Ok((partner, cell_pairs(&reduced, |i| p[by_pos[i]].cell, |i| dims[i])))
}
