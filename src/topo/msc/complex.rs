//! The Morse-Smale complex proper: critical points, the arcs between them (with multiplicity
//! and a polyline), and the manifolds (basins of minima, mountains of maxima) as label fields.

use super::gradient::Gradient;
use super::grid::{Cell, CellGrid};
use super::morse::{Multiplicity, descending};
use super::order::VertexOrder;
use super::persistence::top_vertex;
use crate::control::{Cancelled, Control};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Label of cells that flow out of the domain instead of reaching an extremum.
pub const NO_LABEL: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CriticalPoint {
    /// 0 minimum, 1 1-saddle, 2 2-saddle (3D) or maximum (2D), 3 maximum (3D).
    pub index: u8,
    pub cell: Cell,
    /// Doubled-grid coordinates of the cell.
    pub cell_coords: [usize; 3],
    /// Centre of the cell in voxel coordinates (half-integers for edges, squares, cubes).
    pub position: [f64; 3],
    /// The voxel whose lower star holds the cell, and its value (the cell's filtration value).
    pub vertex: usize,
    pub value: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arc {
    /// Index (into the critical points) of the end of higher index.
    pub upper: usize,
    /// Index of the end of lower index (one less).
    pub lower: usize,
    /// Number of distinct V-paths between the two.
    pub multiplicity: Multiplicity,
    /// The cells of one V-path, from `upper` to `lower` (ids fit 32 bits: see
    /// [`super::MscError::TooLarge`]); 4 bytes a cell, where their centres took 24.
    pub cells: Box<[u32]>,
}

impl Arc {
    /// Cell centres (voxel coordinates) of the V-path, from `upper` to `lower`.
    pub fn polyline(&self, grid: &CellGrid) -> Vec<[f64; 3]> {
        self.cells.iter().map(|&c| position(grid, c as Cell)).collect()
    }
}

pub struct MorseSmale {
    pub grid: CellGrid,
    pub critical: Vec<CriticalPoint>,
    pub arcs: Vec<Arc>,
    /// Per voxel: the critical point index of the minimum its descending V-path reaches
    /// (ascending manifolds of minima).
    pub basins: Vec<u32>,
    /// Per top-dimensional cell (the dual grid: one fewer along each axis): the critical point
    /// index of the maximum its ascending V-path reaches, or [`NO_LABEL`] where the path leaves
    /// the domain (descending manifolds of maxima).
    pub mountains: Vec<u32>,
}

impl MorseSmale {
    /// The critical point id of cell `c`, if it is critical (a binary search: points are sorted
    /// by index, then cell).
    pub fn id_of(&self, c: Cell) -> Option<usize> {
        id_in(&self.critical, &self.grid, c)
    }
}

fn id_in(critical: &[CriticalPoint], grid: &CellGrid, c: Cell) -> Option<usize> {
    critical.binary_search_by_key(&(grid.dim(c) as u8, c), |p| (p.index, p.cell)).ok()
}

/// Cell centre in voxel coordinates.
pub fn position(grid: &CellGrid, c: Cell) -> [f64; 3] {
    grid.coords(c).map(|x| x as f64 / 2.0)
}

pub fn build(
    g: &Gradient,
    order: &(impl VertexOrder + ?Sized),
    value: impl Fn(usize) -> f64 + Sync,
    ctl: &Control,
) -> Result<MorseSmale, Cancelled> {
    let grid = g.grid;
    let crit_cells = g.critical_cells();
    let critical: Vec<CriticalPoint> = crit_cells
        .par_iter()
        .flat_map_iter(|cells| cells.iter())
        .map(|&c| {
            let v = top_vertex(&grid, order, c);
            CriticalPoint {
                index: grid.dim(c) as u8,
                cell: c,
                cell_coords: grid.coords(c),
                position: position(&grid, c),
                vertex: v,
                value: value(v),
            }
        })
        .collect();
    drop(crit_cells);
    let id_of = |c: Cell| id_in(&critical, &grid, c).expect("a V-path ends at a critical cell");
    ctl.tick(1);
    ctl.check()?;
    let basins = basins(g, &critical);
    ctl.check()?;
    let mountains = mountains(g, &critical);
    ctl.tick(1);
    ctl.check()?;
    let nd = grid.ndim;
    let raw: Vec<Arc> = critical
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, p)| {
            let mut out = Vec::new();
            // Once cancelled, the remaining points are skipped and the result thrown away.
            if ctl.cancelled() {
                return out;
            }
            let k = p.index as usize;
            if k == 1 {
                out.extend(saddle_to_minima(g, i, p.cell, &id_of));
            }
            if k + 1 == nd {
                out.extend(saddle_to_maxima(g, i, p.cell, &id_of));
            }
            if k == 2 && nd == 3 {
                // Between saddles V-paths split and merge: count them on the DAG.
                out.extend(descending(g, p.cell).into_iter().map(|(t, m, path)| Arc {
                    upper: i,
                    lower: id_of(t),
                    multiplicity: m,
                    cells: path.into_iter().map(|c| c as u32).collect(),
                }));
            }
            out
        })
        .collect();
    ctl.check()?;
    let arcs = merge(raw);
    ctl.tick(1);
    Ok(MorseSmale { grid, critical, arcs, basins, mountains })
}

const ONE: Multiplicity = Multiplicity { count: 1, overflowed: false };

/// One step of a vertex's descending V-path: the edge it pairs with and that edge's other,
/// lower, end; None at a minimum.
fn down_step(g: &Gradient, u: Cell) -> Option<(Cell, Cell)> {
    let e = g.partner(u)?;
    Some((e, g.grid.facets(e).find(|&f| f != u).expect("an edge has two vertices")))
}

/// One step of a top cell's ascending V-path.
enum UpStep {
    /// The cell is a maximum.
    Critical,
    /// Through the facet it pairs with to the top cell on the other side (higher).
    Next(Cell, Cell),
    /// The facet it pairs with is on the boundary: the path leaves the domain.
    Out,
}

fn up_step(g: &Gradient, b: Cell) -> UpStep {
    match g.partner(b) {
        None => UpStep::Critical,
        Some(f) => g.grid.cofacets(f).find(|&c| c != b).map_or(UpStep::Out, |next| UpStep::Next(f, next)),
    }
}

/// Arcs from the 1-saddle `sigma` (critical point `id`) down to minima: from each of its two
/// vertices the V-path is unique (a vertex pairs with one edge, whose other end is lower).
fn saddle_to_minima(g: &Gradient, id: usize, sigma: Cell, id_of: &impl Fn(Cell) -> usize) -> Vec<Arc> {
    g.grid
        .facets(sigma)
        .map(|mut u| {
            let mut cells = vec![sigma as u32, u as u32];
            while let Some((e, w)) = down_step(g, u) {
                cells.extend([e as u32, w as u32]);
                u = w;
            }
            Arc { upper: id, lower: id_of(u), multiplicity: ONE, cells: cells.into_boxed_slice() }
        })
        .collect()
}

/// Arcs from maxima down to the (d-1)-saddle `sigma` (critical point `id`), traced from the
/// saddle upwards: from each top cell beside it the ascending V-path is unique (a top cell pairs
/// with one facet, whose other top cell is higher); a path that leaves the domain makes no arc.
fn saddle_to_maxima(g: &Gradient, id: usize, sigma: Cell, id_of: &impl Fn(Cell) -> usize) -> Vec<Arc> {
    g.grid
        .cofacets(sigma)
        .filter_map(|mut b| {
            let mut cells = vec![sigma as u32, b as u32];
            loop {
                match up_step(g, b) {
                    UpStep::Critical => break,
                    UpStep::Next(f, next) => {
                        cells.extend([f as u32, next as u32]);
                        b = next;
                    }
                    UpStep::Out => return None,
                }
            }
            cells.reverse();
            Some(Arc { upper: id_of(b), lower: id, multiplicity: ONE, cells: cells.into_boxed_slice() })
        })
        .collect()
}

/// One arc per pair of ends, in place: multiplicities summed, the first path kept (the sort is
/// stable, so "first" is the order the critical points produced them in, whatever the threads).
fn merge(mut raw: Vec<Arc>) -> Vec<Arc> {
    raw.par_sort_by_key(|a| (a.upper, a.lower));
    raw.dedup_by(|later, kept| {
        let same = (later.upper, later.lower) == (kept.upper, kept.lower);
        if same {
            kept.multiplicity = kept.multiplicity.plus(later.multiplicity);
        }
        same
    });
    raw.shrink_to_fit();
    raw
}

/// Marks a label in a pointer-jumping array: entries are either the index of the next element
/// (below 2^31: voxel and dual-cell counts are, see [`super::MscError::TooLarge`]) or a final
/// label with this bit set.
const FINAL: u32 = 1 << 31;

/// Follows `next` from every element to a final label by pointer jumping, in place: each round,
/// every element takes its successor's successor, on all threads. Reading an entry another
/// thread is rewriting is benign: both values lead to the same label, so rounds only shorten
/// the paths; the loop ends when a round changes nothing. Returns the labels ([`NO_LABEL`]
/// stays).
fn jump_to_labels(mut next: Vec<u32>) -> Vec<u32> {
    {
        // SAFETY: AtomicU32 has the size, alignment and bit validity of u32, and `next` is
        // borrowed mutably (no other access) while the atomics are used.
        let a: &[AtomicU32] = unsafe { &*(next.as_mut_slice() as *mut [u32] as *const [AtomicU32]) };
        loop {
            let changed = a
                .par_iter()
                .with_min_len(1 << 14)
                .map(|e| {
                    let x = e.load(Ordering::Relaxed);
                    if x & FINAL != 0 {
                        return false;
                    }
                    let y = a[x as usize].load(Ordering::Relaxed);
                    e.store(y, Ordering::Relaxed);
                    y != x
                })
                .reduce(|| false, |p, q| p | q);
            if !changed {
                break;
            }
        }
    }
    next.par_iter_mut().for_each(|x| {
        if *x != NO_LABEL {
            *x &= !FINAL
        }
    });
    next
}

/// Ascending manifolds of minima: each vertex follows its gradient edge down to a minimum.
fn basins(g: &Gradient, critical: &[CriticalPoint]) -> Vec<u32> {
    let grid = &g.grid;
    let n: usize = grid.vdims.iter().product();
    let mut next: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|v| down_step(g, grid.vertex_cell(v)).map_or(v as u32, |(_, w)| grid.cell_vertex(w) as u32))
        .collect();
    // Minima come first among the critical points.
    for (id, p) in critical.iter().enumerate().take_while(|(_, p)| p.index == 0) {
        next[grid.cell_vertex(p.cell)] = id as u32 | FINAL;
    }
    jump_to_labels(next)
}

/// Descending manifolds of maxima on the dual grid of top cells: each top cell follows its
/// gradient facet to the top cell on the other side, up to a maximum.
fn mountains(g: &Gradient, critical: &[CriticalPoint]) -> Vec<u32> {
    let grid = &g.grid;
    let d = grid.ndim;
    let dual: Vec<usize> = (0..3).map(|a| if a < d { grid.vdims[a] - 1 } else { 1 }).collect();
    let n: usize = dual.iter().product();
    if n == 0 || dual.contains(&0) {
        return Vec::new();
    }
    let top_cell = |i: usize| -> Cell {
        let p = [i % dual[0], (i / dual[0]) % dual[1], i / (dual[0] * dual[1])];
        grid.id(std::array::from_fn(|a| if a < d { 2 * p[a] + 1 } else { 0 }))
    };
    let dual_index = |c: Cell| -> usize {
        let p = grid.coords(c);
        let q: [usize; 3] = std::array::from_fn(|a| if a < d { p[a] / 2 } else { 0 });
        q[0] + dual[0] * (q[1] + dual[1] * q[2])
    };
    let mut next: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|i| match up_step(g, top_cell(i)) {
            UpStep::Critical => i as u32,
            UpStep::Next(_, b) => dual_index(b) as u32,
            UpStep::Out => NO_LABEL,
        })
        .collect();
    // Maxima come last among the critical points.
    for (id, p) in critical.iter().enumerate().rev().take_while(|(_, p)| p.index as usize == d) {
        next[dual_index(p.cell)] = id as u32 | FINAL;
    }
    jump_to_labels(next)
}

/// Morse-Smale cells of a 2D field, on the grid of squares: each square gets the id of its
/// (basin, mountain) pair, numbered in order of first appearance; the basin of a square is that
/// of its lowest corner (where its descending flow starts), its mountain its own label. Labels
/// are given after simplification (`basins`, `mountains` already mapped to live extrema);
/// squares whose mountain is [`NO_LABEL`] get [`NO_LABEL`].
pub fn ms_cells_2d(
    grid: &CellGrid,
    order: &(impl VertexOrder + ?Sized),
    basins: &[u32],
    mountains: &[u32],
) -> Vec<u32> {
    let [nx, ny, _] = grid.vdims;
    let mut ids: std::collections::HashMap<(u32, u32), u32> = Default::default();
    let mut out = Vec::with_capacity(mountains.len());
    for (i, &m) in mountains.iter().enumerate() {
        if m == NO_LABEL {
            out.push(NO_LABEL);
            continue;
        }
        let (x, y) = (i % (nx - 1), i / (nx - 1));
        debug_assert!(y + 1 < ny);
        let corners = [x + nx * y, x + 1 + nx * y, x + nx * (y + 1), x + 1 + nx * (y + 1)];
        let low =
            corners.into_iter().reduce(|a, b| if order.less(b, a) { b } else { a }).expect("four corners");
        let n = ids.len() as u32;
        out.push(*ids.entry((basins[low], m)).or_insert(n));
    }
    out
}
