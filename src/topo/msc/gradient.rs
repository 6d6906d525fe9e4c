//! The discrete gradient of a lower-star filtration, vertex by vertex (ProcessLowerStars of
//! Robins, Wood and Sheppard, "Theory and algorithms for constructing discrete Morse complexes
//! from grayscale digital images", IEEE TPAMI 2011).
//!
//! Vertices are ordered by (value, voxel index): ties in value go to the lower index, so the
//! gradient is deterministic. A cell belongs to the lower star of its highest corner. Within a
//! lower star, cells are ordered by the descending list of their other corners (compared
//! lexicographically, a prefix first), and paired greedily: the vertex with its lowest edge, then
//! every cell with exactly one unpaired face in the star with that face; cells left with no
//! unpaired face become critical. Robins et al. prove the result minimal in 2D and 3D: it has as
//! many critical cells of each dimension as the persistent homology of the filtration requires.

use super::grid::{Cell, CellGrid};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};

/// Per cell: 0 while unassigned, [`CRITICAL`], or `PAIRED + 2 * axis + (sign > 0)` naming the
/// partner one step away.
pub const CRITICAL: u8 = 1;
const PAIRED: u8 = 2;

/// A discrete gradient on the cells of a grid.
pub struct Gradient {
    pub grid: CellGrid,
    codes: Vec<u8>,
}

impl Gradient {
    /// The partner of `c` in its gradient pair, or None when `c` is critical.
    #[inline]
    pub fn partner(&self, c: Cell) -> Option<Cell> {
        let code = self.codes[c];
        if code < PAIRED {
            return None;
        }
        let k = code - PAIRED;
        self.grid.step(c, (k / 2) as usize, if k % 2 == 1 { 1 } else { -1 })
    }

    pub fn is_critical(&self, c: Cell) -> bool {
        self.codes[c] == CRITICAL
    }

    /// Critical cells by dimension, in cell-id order.
    pub fn critical_cells(&self) -> [Vec<Cell>; 4] {
        let mut out: [Vec<Cell>; 4] = Default::default();
        for (c, &code) in self.codes.iter().enumerate() {
            if code == CRITICAL {
                out[self.grid.dim(c)].push(c);
            }
        }
        out
    }
}

/// The total order of vertices: (order key of the value, voxel index).
pub trait VertexOrder: Sync {
    fn key(&self, v: usize) -> i64;
    #[inline]
    fn less(&self, a: usize, b: usize) -> bool {
        (self.key(a), a) < (self.key(b), b)
    }
}

impl VertexOrder for [i64] {
    #[inline]
    fn key(&self, v: usize) -> i64 {
        self[v]
    }
}

const MAX_STAR: usize = 27;

/// The lower star of one vertex: its cells (the vertex first) with their ordering keys.
struct Star {
    len: usize,
    cells: [Cell; MAX_STAR],
    /// Other corners, highest first (voxel indices), and how many.
    others: [[usize; 7]; MAX_STAR],
    n_others: [u8; MAX_STAR],
    assigned: [bool; MAX_STAR],
}

impl Star {
    fn position(&self, c: Cell) -> Option<usize> {
        self.cells[..self.len].iter().position(|&x| x == c)
    }
}

/// Computes the gradient of a field given by its vertex order, on all threads.
pub fn gradient(grid: CellGrid, order: &(impl VertexOrder + ?Sized)) -> Gradient {
    let codes: Vec<AtomicU8> = (0..grid.n_cells()).map(|_| AtomicU8::new(0)).collect();
    let n: usize = grid.vdims.iter().product();
    (0..n).into_par_iter().for_each(|v| process_lower_star(&grid, order, v, &codes));
    Gradient { grid, codes: codes.into_iter().map(AtomicU8::into_inner).collect() }
}

fn set_pair(grid: &CellGrid, codes: &[AtomicU8], a: Cell, b: Cell) {
    let (pa, pb) = (grid.coords(a), grid.coords(b));
    let axis = (0..3).find(|&i| pa[i] != pb[i]).expect("paired cells differ along one axis");
    let up = (pb[axis] > pa[axis]) as u8;
    codes[a].store(PAIRED + 2 * axis as u8 + up, Ordering::Relaxed);
    codes[b].store(PAIRED + 2 * axis as u8 + (1 - up), Ordering::Relaxed);
}

fn process_lower_star(grid: &CellGrid, order: &(impl VertexOrder + ?Sized), v: usize, codes: &[AtomicU8]) {
    let star = lower_star(grid, order, v);
    let mut star = star;
    let vc = star.cells[0];
    if star.len == 1 {
        codes[vc].store(CRITICAL, Ordering::Relaxed);
        return;
    }
    // G-order: lexicographic on the other corners, highest first; a prefix comes first.
    let less = |s: &Star, i: usize, j: usize| -> bool {
        let (a, b) = (&s.others[i][..s.n_others[i] as usize], &s.others[j][..s.n_others[j] as usize]);
        for (&x, &y) in a.iter().zip(b) {
            if x != y {
                return order.less(x, y);
            }
        }
        a.len() < b.len()
    };
    let unpaired_faces = |s: &Star, i: usize| -> (usize, usize) {
        let mut count = 0;
        let mut last = usize::MAX;
        for f in grid.facets(s.cells[i]) {
            if let Some(j) = s.position(f)
                && !s.assigned[j]
            {
                count += 1;
                last = j;
            }
        }
        (count, last)
    };
    let pop_min = |s: &Star, q: &mut Vec<usize>| -> Option<usize> {
        let (k, _) = q.iter().enumerate().min_by(|a, b| {
            if less(s, *a.1, *b.1) {
                std::cmp::Ordering::Less
            } else if less(s, *b.1, *a.1) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })?;
        Some(q.swap_remove(k))
    };
    let push_cofacets = |s: &Star, of: usize, q: &mut Vec<usize>| {
        for cf in grid.cofacets(s.cells[of]) {
            if let Some(j) = s.position(cf)
                && !s.assigned[j]
                && unpaired_faces(s, j).0 == 1
                && !q.contains(&j)
            {
                q.push(j);
            }
        }
    };

    // The lowest edge pairs with the vertex.
    let edges: Vec<usize> = (1..star.len).filter(|&i| star.n_others[i] == 1).collect();
    let delta = *edges
        .iter()
        .min_by(
            |&&a, &&b| if less(&star, a, b) { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater },
        )
        .expect("a non-trivial lower star has an edge");
    set_pair(grid, codes, vc, star.cells[delta]);
    star.assigned[0] = true;
    star.assigned[delta] = true;
    let mut pq_zero: Vec<usize> = edges.into_iter().filter(|&e| e != delta).collect();
    let mut pq_one: Vec<usize> = Vec::new();
    push_cofacets(&star, delta, &mut pq_one);
    while !pq_one.is_empty() || !pq_zero.is_empty() {
        while let Some(a) = pop_min(&star, &mut pq_one) {
            if star.assigned[a] {
                continue;
            }
            let (count, face) = unpaired_faces(&star, a);
            if count == 0 {
                if !pq_zero.contains(&a) {
                    pq_zero.push(a);
                }
                continue;
            }
            set_pair(grid, codes, star.cells[face], star.cells[a]);
            star.assigned[face] = true;
            star.assigned[a] = true;
            pq_zero.retain(|&x| x != face);
            push_cofacets(&star, a, &mut pq_one);
            push_cofacets(&star, face, &mut pq_one);
        }
        if let Some(g) = pop_min(&star, &mut pq_zero) {
            if star.assigned[g] {
                continue;
            }
            codes[star.cells[g]].store(CRITICAL, Ordering::Relaxed);
            star.assigned[g] = true;
            push_cofacets(&star, g, &mut pq_one);
        }
    }
    debug_assert!(star.assigned[..star.len].iter().all(|&a| a), "every cell of the lower star is assigned");
}

/// The cells whose highest corner is `v`, the vertex first.
fn lower_star(grid: &CellGrid, order: &(impl VertexOrder + ?Sized), v: usize) -> Star {
    let vc = grid.vertex_cell(v);
    let mut s = Star {
        len: 1,
        cells: [vc; MAX_STAR],
        others: [[0; 7]; MAX_STAR],
        n_others: [0; MAX_STAR],
        assigned: [false; MAX_STAR],
    };
    let p = grid.coords(vc);
    let range = |a: usize| if a < grid.ndim { -1i64..=1 } else { 0..=0 };
    for dz in range(2) {
        for dy in range(1) {
            for dx in range(0) {
                if (dx, dy, dz) == (0, 0, 0) {
                    continue;
                }
                let q = [p[0] as i64 + dx, p[1] as i64 + dy, p[2] as i64 + dz];
                if (0..3).any(|a| q[a] < 0 || q[a] >= grid.cdims[a] as i64) {
                    continue;
                }
                let c = grid.id(q.map(|x| x as usize));
                let mut others = [0usize; 7];
                let mut k = 0;
                let mut lower = true;
                for u in grid.corners(c) {
                    if u == v {
                        continue;
                    }
                    if !order.less(u, v) {
                        lower = false;
                        break;
                    }
                    others[k] = u;
                    k += 1;
                }
                if !lower {
                    continue;
                }
                // Highest first.
                let o = &mut others[..k];
                o.sort_by(|&a, &b| {
                    if order.less(b, a) { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater }
                });
                s.cells[s.len] = c;
                s.others[s.len] = others;
                s.n_others[s.len] = k as u8;
                s.len += 1;
            }
        }
    }
    s
}
