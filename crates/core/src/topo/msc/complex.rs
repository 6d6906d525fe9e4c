//! The Morse-Smale complex proper: critical points, the arcs between them (with multiplicity
//! and a polyline), and the manifolds (basins of minima, mountains of maxima) as label fields.

use super::gradient::Gradient;
use super::grid::{Cell, CellGrid};
use super::order::VertexOrder;
use super::persistence::top_vertex;
use super::vpaths::{Multiplicity, descending};
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
    /// One V-path between them (see [`Arc::cells`]).
    pub path: Path,
}

/// One V-path of an arc. A saddle-extremum path is unique once its first step is chosen, so it
/// is kept as that step and walked through the gradient when drawn (most arcs are of this
/// kind: their cells would take more memory than the gradient); a saddle-saddle path is one of
/// many through a DAG and is kept as its cells (ids fit 32 bits: see
/// [`super::MscError::TooLarge`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Path {
    /// From the saddle `saddle` down through its vertex `first` to a minimum.
    Down { saddle: u32, first: u32 },
    /// From the saddle `saddle` up through its top cell `first` to a maximum (drawn from the
    /// maximum).
    Up { saddle: u32, first: u32 },
    /// The cells from the upper end to the lower.
    Cells(Box<[u32]>),
}

impl Arc {
    /// The cells of the arc's V-path, from `upper` to `lower`.
    pub fn cells(&self, g: &Gradient) -> Vec<Cell> {
        match &self.path {
            &Path::Down { saddle, first } => {
                let mut cells = vec![saddle as Cell];
                walk_down(g, first as Cell, |c| cells.push(c));
                cells
            }
            &Path::Up { saddle, first } => {
                let mut cells = vec![saddle as Cell];
                walk_up(g, first as Cell, |c| cells.push(c));
                cells.reverse();
                cells
            }
            Path::Cells(c) => c.iter().map(|&c| c as Cell).collect(),
        }
    }

    /// Cell centres (voxel coordinates) of the V-path, from `upper` to `lower`.
    pub fn polyline(&self, g: &Gradient) -> Vec<[f64; 3]> {
        self.cells(g).into_iter().map(|c| position(&g.grid, c)).collect()
    }
}

pub struct MorseSmale {
    pub grid: CellGrid,
    /// The gradient the complex was built from (its saddle-extremum arcs are walked on it).
    pub gradient: Gradient,
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
    /// Cell centres of arc `i`'s V-path, from its upper end to its lower.
    pub fn polyline(&self, i: usize) -> Vec<[f64; 3]> {
        self.arcs[i].polyline(&self.gradient)
    }

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

/// Basins and mountains (see [`MorseSmale`]) of a gradient whose critical points are
/// `critical`, as [`labels`] computes them.
pub type Labels = (Vec<u32>, Vec<u32>);

/// A saddle-saddle arc as [`descending`] finds it from a 2-saddle, before its ends are numbered
/// (made elsewhere than on the CPU: the GPU's).
#[derive(Clone, Debug, PartialEq)]
pub struct SaddleArc {
    /// The 2-saddle's cell.
    pub upper: u32,
    /// The 1-saddle's cell.
    pub lower: u32,
    pub multiplicity: Multiplicity,
    /// The kept V-path's cells, from `upper` to `lower`.
    pub cells: Box<[u32]>,
}

/// What [`build`]'s other side gives: the labels, unless they are to be made later (the
/// complex's are then empty until its caller sets them), and the saddle-saddle arcs of every
/// 2-saddle when it was to find them and did (else the CPU's threads find them after).
pub type Found = (Option<Labels>, Option<Vec<SaddleArc>>);

/// A saddle-saddle arc of the 2-saddle `p` from what [`descending`] gives.
fn found_from(p: &CriticalPoint, (t, m, path): (Cell, Multiplicity, Vec<Cell>)) -> SaddleArc {
    SaddleArc {
        upper: p.cell as u32,
        lower: t as u32,
        multiplicity: m,
        cells: path.into_iter().map(|c| c as u32).collect(),
    }
}

/// The complex of `gradient`, with the manifold labels made by `device` (the CPU's [`labels`],
/// or an equal computation elsewhere; none when it leaves them for later), which also gives the
/// saddle-saddle arcs (as the CPU's [`descending`] from each 2-saddle would) when `device_arcs`;
/// it runs beside the other arcs.
pub fn build(
    gradient: Gradient,
    order: &(impl VertexOrder + ?Sized),
    value: impl Fn(usize) -> f64 + Sync,
    device: impl FnOnce(&Gradient, &[CriticalPoint]) -> Result<Found, Cancelled> + Send,
    device_arcs: bool,
    ctl: &Control,
) -> Result<MorseSmale, Cancelled> {
    let g = &gradient;
    let grid = g.grid;
    let mut laps = crate::laps::Laps::msc("msc complex");
    // One list, so that the points are made on every thread (a parallel iterator over the four
    // lists made each list's on one).
    let crit_cells: Vec<Cell> = g.critical_cells().concat();
    let critical: Vec<CriticalPoint> = crit_cells
        .par_iter()
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
    // The arcs look up the id of every V-path's end. The points are sorted by (index, cell), so
    // the ids of index k are a run, searched here as packed u32 cells rather than in the 80-byte
    // points (check_size keeps cells below 2^31). On 128^3 white noise (2-core VM) the arcs and
    // manifolds took 2.28-2.36 s searching the points, 1.98-2.01 s so.
    let cells: Vec<u32> = critical.par_iter().map(|p| p.cell as u32).collect();
    let mut starts = [critical.len(); 5];
    for k in (0..4).rev() {
        starts[k] = critical.partition_point(|p| (p.index as usize) < k);
    }
    let id_of = |c: Cell| {
        let d = grid.dim(c);
        let (a, b) = (starts[d], starts[d + 1]);
        a + cells[a..b].binary_search(&(c as u32)).expect("a V-path ends at a critical cell")
    };
    ctl.tick(1);
    ctl.check()?;
    laps.lap(|| format!("{} critical points listed", critical.len()));
    // The labels (unless they come later) and the arcs need only the gradient and the critical
    // points, so they run side by side (on the GPU: its saddle-saddle arcs, transfers included,
    // beside the CPU's other arcs).
    let on_device = || {
        let t = std::time::Instant::now();
        let l = device(g, &critical);
        ctl.tick(1);
        (l, t.elapsed())
    };
    let of_saddle = |a: SaddleArc| Arc {
        upper: id_of(a.upper as Cell),
        lower: id_of(a.lower as Cell),
        multiplicity: a.multiplicity,
        path: Path::Cells(a.cells),
    };
    let find_arcs = || {
        let t = std::time::Instant::now();
        let nd = grid.ndim;
        // Every arc has the critical point that traces it as one end (a saddle), so its parallel
        // arcs are all among that point's: merged there, every arc has distinct ends. (Collected
        // through rayon's large per-thread chunks, which go back to the system once joined: a list
        // per point left 40 MB of small freed blocks resident through the hierarchy.)
        let arcs = critical
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
                if k == 2 && nd == 3 && !device_arcs {
                    // Between saddles V-paths split and merge: count them on the DAG.
                    out.extend(descending(g, p.cell).into_iter().map(|d| of_saddle(found_from(p, d))));
                }
                merge(out)
            })
            .collect::<Vec<Arc>>();
        (arcs, t.elapsed())
    };
    let ((found, t_found), (mut arcs, t_arcs)) = rayon::join(on_device, find_arcs);
    laps.lap(|| {
        let ms = |t: std::time::Duration| t.as_secs_f64() * 1e3;
        format!(
            "beside each other: labels (and arcs) {:.1} ms, the CPU's arcs {:.1} ms",
            ms(t_found),
            ms(t_arcs)
        )
    });
    let (labels, saddle_arcs) = found?;
    let (basins, mountains) = labels.unwrap_or_default();
    ctl.check()?;
    if grid.ndim == 3 && device_arcs {
        // A 2-saddle's arcs down have distinct ends, and none is one of its arcs up; where the
        // device did not find them (it failed), the CPU does.
        match saddle_arcs {
            Some(found) => arcs.par_extend(found.into_par_iter().map(of_saddle)),
            None => arcs.par_extend(critical[starts[2]..starts[3]].par_iter().flat_map_iter(|p| {
                let d = if ctl.cancelled() { Vec::new() } else { descending(g, p.cell) };
                d.into_iter().map(|d| of_saddle(found_from(p, d))).collect::<Vec<_>>()
            })),
        }
        ctl.check()?;
    }
    // Ends are distinct now, so the in-place unstable sort (no buffer) is deterministic.
    arcs.par_sort_unstable_by_key(|a| (a.upper, a.lower));
    ctl.tick(1);
    laps.lap(|| "the arcs gathered and sorted".into());
    Ok(MorseSmale { grid, gradient, critical, arcs, basins, mountains })
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

/// Walks the descending V-path from vertex `u` to its minimum, telling `visit` every cell from
/// `u` on (vertices and edges in turn); returns the minimum.
fn walk_down(g: &Gradient, mut u: Cell, mut visit: impl FnMut(Cell)) -> Cell {
    visit(u);
    while let Some((e, w)) = down_step(g, u) {
        visit(e);
        visit(w);
        u = w;
    }
    u
}

/// Walks the ascending V-path from top cell `b` to its maximum, telling `visit` every cell
/// from `b` on (facets and top cells in turn); returns the maximum, or None where the path
/// leaves the domain.
fn walk_up(g: &Gradient, mut b: Cell, mut visit: impl FnMut(Cell)) -> Option<Cell> {
    visit(b);
    loop {
        match up_step(g, b) {
            UpStep::Critical => return Some(b),
            UpStep::Next(f, next) => {
                visit(f);
                visit(next);
                b = next;
            }
            UpStep::Out => return None,
        }
    }
}

/// Arcs from the 1-saddle `sigma` (critical point `id`) down to minima: from each of its two
/// vertices the V-path is unique (a vertex pairs with one edge, whose other end is lower).
fn saddle_to_minima(g: &Gradient, id: usize, sigma: Cell, id_of: &impl Fn(Cell) -> usize) -> Vec<Arc> {
    g.grid
        .facets(sigma)
        .map(|u| Arc {
            upper: id,
            lower: id_of(walk_down(g, u, |_| {})),
            multiplicity: ONE,
            path: Path::Down { saddle: sigma as u32, first: u as u32 },
        })
        .collect()
}

/// Arcs from maxima down to the (d-1)-saddle `sigma` (critical point `id`), traced from the
/// saddle upwards: from each top cell beside it the ascending V-path is unique (a top cell pairs
/// with one facet, whose other top cell is higher); a path that leaves the domain makes no arc.
fn saddle_to_maxima(g: &Gradient, id: usize, sigma: Cell, id_of: &impl Fn(Cell) -> usize) -> Vec<Arc> {
    g.grid
        .cofacets(sigma)
        .filter_map(|b| {
            Some(Arc {
                upper: id_of(walk_up(g, b, |_| {})?),
                lower: id,
                multiplicity: ONE,
                path: Path::Up { saddle: sigma as u32, first: b as u32 },
            })
        })
        .collect()
}

/// One arc per pair of ends among one point's arcs: multiplicities summed, the first path
/// kept (the sort is stable: the first traced).
fn merge(mut raw: Vec<Arc>) -> Vec<Arc> {
    raw.sort_by_key(|a| (a.upper, a.lower));
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
        const _: () = assert!(std::mem::align_of::<AtomicU32>() == std::mem::align_of::<u32>());
        // SAFETY: AtomicU32 has the size and bit validity of u32 and, on every target with
        // 32-bit atomics that we build for, its alignment (asserted above at compile time);
        // `next` is borrowed mutably (no other access) while the atomics are used.
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

/// Basins and mountains of `g` (whose critical points are `critical`) on all CPU threads.
pub fn labels(g: &Gradient, critical: &[CriticalPoint], ctl: &Control) -> Result<Labels, Cancelled> {
    let b = basins(g, critical);
    ctl.check()?;
    Ok((b, mountains(g, critical)))
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
    let dual = grid.dual_dims();
    let n: usize = dual.iter().product();
    if n == 0 {
        return Vec::new();
    }
    let top_cell = |i: usize| -> Cell {
        let p = [i % dual[0], (i / dual[0]) % dual[1], i / (dual[0] * dual[1])];
        grid.id(std::array::from_fn(|a| if a < d { 2 * p[a] + 1 } else { 0 }))
    };
    let mut next: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|i| match up_step(g, top_cell(i)) {
            UpStep::Critical => i as u32,
            UpStep::Next(_, b) => grid.dual_index(b) as u32,
            UpStep::Out => NO_LABEL,
        })
        .collect();
    // Maxima come last among the critical points.
    for (id, p) in critical.iter().enumerate().rev().take_while(|(_, p)| p.index as usize == d) {
        next[grid.dual_index(p.cell)] = id as u32 | FINAL;
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
