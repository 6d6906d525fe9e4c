//! The Morse complex: critical cells joined by counted V-paths, and persistence computed on it
//! (far smaller than the grid, and equal to the persistence of the whole complex).
//!
//! The V-paths leaving a critical k-cell downwards form a DAG on (k-1)-cells: from a facet
//! `a`, the path goes on through `a`'s gradient partner `b` (a k-cell) to `b`'s other facets,
//! and stops at critical (k-1)-cells. Paths split and merge (between saddles in 3D their number
//! can grow exponentially), so they are counted on the DAG in topological order, never
//! enumerated.

use super::gradient::{Gradient, VertexOrder};
use super::grid::Cell;
use super::persistence::{CellPair, reduce, top_vertex};
use std::collections::HashMap;

/// Number of distinct V-paths from one critical cell to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Multiplicity {
    /// The count modulo 2^128 (exact unless `overflowed`; its parity is always exact).
    pub count: u128,
    pub overflowed: bool,
}

impl Multiplicity {
    fn add(&mut self, other: Multiplicity) {
        let (sum, o) = self.count.overflowing_add(other.count);
        self.count = sum;
        self.overflowed |= o || other.overflowed;
    }

    pub fn is_odd(&self) -> bool {
        self.count % 2 == 1
    }
}

/// The (k-1)-cells that follow `a` on a descending V-path: the other facets of `a`'s partner, if
/// `a` is paired upwards; none if `a` is critical or paired downwards.
fn successors(g: &Gradient, a: Cell) -> impl Iterator<Item = Cell> + '_ {
    let grid = &g.grid;
    let up = g.partner(a).filter(|&b| grid.dim(b) > grid.dim(a));
    up.into_iter().flat_map(move |b| grid.facets(b).filter(move |&f| f != a))
}

/// Critical (k-1)-cells reached by descending V-paths from the critical k-cell `sigma`, with the
/// number of paths to each, in cell-id order.
pub fn descending(g: &Gradient, sigma: Cell) -> Vec<(Cell, Multiplicity)> {
    let grid = &g.grid;
    let starts: Vec<Cell> = grid.facets(sigma).collect();
    // Depth-first post-order over the reachable DAG, then counts in topological order.
    let mut order = Vec::new();
    let mut seen: HashMap<Cell, ()> = HashMap::new();
    for &s in &starts {
        if seen.insert(s, ()).is_some() {
            continue;
        }
        let mut stack: Vec<(Cell, Vec<Cell>)> = vec![(s, successors(g, s).collect())];
        while let Some((c, succ)) = stack.last_mut() {
            if let Some(w) = succ.pop() {
                if seen.insert(w, ()).is_none() {
                    let ws = successors(g, w).collect();
                    stack.push((w, ws));
                }
            } else {
                order.push(*c);
                stack.pop();
            }
        }
    }
    let mut paths: HashMap<Cell, Multiplicity> = HashMap::new();
    for &s in &starts {
        paths
            .entry(s)
            .or_insert(Multiplicity { count: 0, overflowed: false })
            .add(Multiplicity { count: 1, overflowed: false });
    }
    let mut out = Vec::new();
    for &c in order.iter().rev() {
        let Some(&m) = paths.get(&c) else { continue };
        if g.is_critical(c) {
            out.push((c, m));
            continue;
        }
        for w in successors(g, c) {
            paths.entry(w).or_insert(Multiplicity { count: 0, overflowed: false }).add(m);
        }
    }
    out.sort_by_key(|&(c, _)| c);
    out
}

/// Critical cells in a filtration order: by their lower star's vertex, then dimension.
pub fn filtration_order(g: &Gradient, order: &(impl VertexOrder + ?Sized)) -> Vec<(Cell, usize)> {
    let mut crit: Vec<(Cell, usize)> =
        g.critical_cells().iter().flatten().map(|&c| (c, top_vertex(&g.grid, order, c))).collect();
    crit.sort_by(|&(a, ta), &(b, tb)| {
        if ta != tb {
            if order.less(ta, tb) { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater }
        } else {
            (g.grid.dim(a), a).cmp(&(g.grid.dim(b), b))
        }
    });
    crit
}

/// Persistence pairs of the lower-star filtration, computed on the Morse complex (boundaries
/// are the critical cells reached by an odd number of V-paths). Every pair has cells in
/// different lower stars (positive persistence in the vertex order).
pub fn persistence(g: &Gradient, order: &(impl VertexOrder + ?Sized)) -> Vec<CellPair> {
    let crit = filtration_order(g, order);
    let pos: HashMap<Cell, usize> = crit.iter().enumerate().map(|(i, &(c, _))| (c, i)).collect();
    let columns: Vec<Vec<usize>> = crit
        .iter()
        .map(|&(c, _)| {
            if g.grid.dim(c) == 0 {
                return Vec::new();
            }
            descending(g, c).into_iter().filter(|(_, m)| m.is_odd()).map(|(t, _)| pos[&t]).collect()
        })
        .collect();
    let (pairs, essential) = reduce(columns);
    let dim = |i: usize| g.grid.dim(crit[i].0);
    let mut out: Vec<CellPair> = pairs
        .into_iter()
        .map(|(b, d)| CellPair { dim: dim(b), birth: crit[b].0, death: Some(crit[d].0) })
        .chain(essential.into_iter().map(|e| CellPair { dim: dim(e), birth: crit[e].0, death: None }))
        .collect();
    out.sort();
    out
}
