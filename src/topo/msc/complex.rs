//! The Morse-Smale complex proper: critical points, the arcs between them (with multiplicity
//! and a polyline), and the manifolds (basins of minima, mountains of maxima) as label fields.

use super::gradient::Gradient;
use super::grid::{Cell, CellGrid};
use super::morse::{Multiplicity, descending};
use super::persistence::top_vertex;
use crate::control::{Cancelled, Control};
use rayon::prelude::*;
use std::collections::HashMap;

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
    /// Cell centres (voxel coordinates) of one V-path, from `upper` to `lower`.
    pub polyline: Vec<[f64; 3]>,
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

/// Cell centre in voxel coordinates.
pub fn position(grid: &CellGrid, c: Cell) -> [f64; 3] {
    grid.coords(c).map(|x| x as f64 / 2.0)
}

pub fn build(
    g: &Gradient,
    keys: &[i64],
    value: impl Fn(usize) -> f64 + Sync,
    ctl: &Control,
) -> Result<MorseSmale, Cancelled> {
    let grid = g.grid;
    let crit_cells = g.critical_cells();
    let critical: Vec<CriticalPoint> = crit_cells
        .iter()
        .flatten()
        .map(|&c| {
            let v = top_vertex(&grid, keys, c);
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
    let id_of: HashMap<Cell, usize> = critical.iter().enumerate().map(|(i, p)| (p.cell, i)).collect();
    ctl.tick(1);
    ctl.check()?;
    let basins = basins(g, &id_of);
    ctl.check()?;
    let mountains = mountains(g, &id_of);
    ctl.tick(1);
    ctl.check()?;
    let nd = grid.ndim;
    let raw: Vec<RawArc> = critical
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
                out.extend(descending(g, p.cell).into_iter().map(|(t, m, path)| (i, id_of[&t], m, path)));
            }
            out
        })
        .collect();
    ctl.check()?;
    let arcs = merge(raw, &grid);
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
fn saddle_to_minima(g: &Gradient, id: usize, sigma: Cell, id_of: &HashMap<Cell, usize>) -> Vec<RawArc> {
    g.grid
        .facets(sigma)
        .map(|mut u| {
            let mut cells = vec![sigma, u];
            while let Some((e, w)) = down_step(g, u) {
                cells.extend([e, w]);
                u = w;
            }
            (id, id_of[&u], ONE, cells)
        })
        .collect()
}

/// Arcs from maxima down to the (d-1)-saddle `sigma` (critical point `id`), traced from the
/// saddle upwards: from each top cell beside it the ascending V-path is unique (a top cell pairs
/// with one facet, whose other top cell is higher); a path that leaves the domain makes no arc.
fn saddle_to_maxima(g: &Gradient, id: usize, sigma: Cell, id_of: &HashMap<Cell, usize>) -> Vec<RawArc> {
    g.grid
        .cofacets(sigma)
        .filter_map(|mut b| {
            let mut cells = vec![sigma, b];
            loop {
                match up_step(g, b) {
                    UpStep::Critical => break,
                    UpStep::Next(f, next) => {
                        cells.extend([f, next]);
                        b = next;
                    }
                    UpStep::Out => return None,
                }
            }
            cells.reverse();
            Some((id_of[&b], id, ONE, cells))
        })
        .collect()
}

/// (upper id, lower id, multiplicity, cells of one path from upper to lower).
type RawArc = (usize, usize, Multiplicity, Vec<Cell>);

/// One arc per pair of ends: multiplicities summed, the first path kept.
fn merge(mut raw: Vec<RawArc>, grid: &CellGrid) -> Vec<Arc> {
    raw.sort_by_key(|a| (a.0, a.1));
    let mut out: Vec<Arc> = Vec::with_capacity(raw.len());
    for (upper, lower, m, cells) in raw {
        match out.last_mut() {
            Some(last) if last.upper == upper && last.lower == lower => {
                last.multiplicity = last.multiplicity.plus(m)
            }
            _ => out.push(Arc {
                upper,
                lower,
                multiplicity: m,
                polyline: cells.iter().map(|&c| position(grid, c)).collect(),
            }),
        }
    }
    out
}

/// Follows `next` from every element to a fixed point by pointer jumping (log rounds, each in
/// parallel); `NO_LABEL` entries stay.
fn jump_to_roots(mut next: Vec<u32>) -> Vec<u32> {
    loop {
        let jumped: Vec<u32> =
            next.par_iter().map(|&n| if n == NO_LABEL { NO_LABEL } else { next[n as usize] }).collect();
        if jumped == next {
            return next;
        }
        next = jumped;
    }
}

/// Ascending manifolds of minima: each vertex follows its gradient edge down to a minimum.
fn basins(g: &Gradient, id_of: &HashMap<Cell, usize>) -> Vec<u32> {
    let grid = &g.grid;
    let n: usize = grid.vdims.iter().product();
    let next: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|v| down_step(g, grid.vertex_cell(v)).map_or(v as u32, |(_, w)| grid.cell_vertex(w) as u32))
        .collect();
    jump_to_roots(next)
        .into_par_iter()
        .map(|root| if root == NO_LABEL { NO_LABEL } else { id_of[&grid.vertex_cell(root as usize)] as u32 })
        .collect()
}

/// Descending manifolds of maxima on the dual grid of top cells: each top cell follows its
/// gradient facet to the top cell on the other side, up to a maximum.
fn mountains(g: &Gradient, id_of: &HashMap<Cell, usize>) -> Vec<u32> {
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
    let next: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|i| match up_step(g, top_cell(i)) {
            UpStep::Critical => i as u32,
            UpStep::Next(_, b) => dual_index(b) as u32,
            UpStep::Out => NO_LABEL,
        })
        .collect();
    jump_to_roots(next)
        .into_par_iter()
        .map(|root| if root == NO_LABEL { NO_LABEL } else { id_of[&top_cell(root as usize)] as u32 })
        .collect()
}

/// Morse-Smale cells of a 2D field, on the grid of squares: each square gets the id of its
/// (basin, mountain) pair, numbered in order of first appearance; the basin of a square is that
/// of its lowest corner (where its descending flow starts), its mountain its own label. Labels
/// are given after simplification (`basins`, `mountains` already mapped to live extrema);
/// squares whose mountain is [`NO_LABEL`] get [`NO_LABEL`].
pub fn ms_cells_2d(grid: &CellGrid, keys: &[i64], basins: &[u32], mountains: &[u32]) -> Vec<u32> {
    let [nx, ny, _] = grid.vdims;
    let mut ids: HashMap<(u32, u32), u32> = HashMap::new();
    let mut out = Vec::with_capacity(mountains.len());
    for (i, &m) in mountains.iter().enumerate() {
        if m == NO_LABEL {
            out.push(NO_LABEL);
            continue;
        }
        let (x, y) = (i % (nx - 1), i / (nx - 1));
        debug_assert!(y + 1 < ny);
        let corners = [x + nx * y, x + 1 + nx * y, x + nx * (y + 1), x + 1 + nx * (y + 1)];
        let low = *corners.iter().min_by_key(|&&v| (keys[v], v)).expect("four corners");
        let n = ids.len() as u32;
        out.push(*ids.entry((basins[low], m)).or_insert(n));
    }
    out
}
