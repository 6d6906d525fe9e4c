//! Persistent homology over Z/2 by the standard column reduction (dimension 1 of a complex by
//! union-find, which pairs as the reduction does), and the lower-star
//! persistence of the whole cubical complex computed that way (the brute-force reference the
//! Morse-complex computation is tested against).

use super::grid::{Cell, CellGrid};
use super::order::VertexOrder;
use crate::control::{Cancelled, Control};
use crate::topo::union_find::find;
use rayon::prelude::*;

/// The partner of a critical point that creates an essential class (no other cancels it), in
/// `simplify::Hierarchy::partner` and `morse::complex_persistence`.
pub const UNPAIRED: usize = usize::MAX;

/// Persistence pairs (birth column, death column) and the essential columns.
pub type Reduced = (Vec<(usize, usize)>, Vec<usize>);

/// Reduces boundary columns (row indices of each column, any order) given in filtration order.
/// Returns the persistence pairs (birth column, death column) and the essential columns.
pub fn reduce(columns: Vec<Vec<usize>>) -> Reduced {
    match reduce_with(columns, &Control::default()) {
        Ok(r) => r,
        Err(Cancelled) => unreachable!("no cancel flag was given"),
    }
}

/// [`reduce`] under a [`Control`], checked every 1024 columns.
pub fn reduce_with(columns: Vec<Vec<usize>>, ctl: &Control) -> Result<Reduced, Cancelled> {
    let n = columns.len();
    let entries = || columns.iter().enumerate().flat_map(|(j, c)| c.iter().map(move |&r| (j, r)));
    let pairs = pairs_of(Packed::new(n, entries), &[], ctl)?;
    Ok((pairs.clone(), unpaired(n, &pairs)))
}

/// Boundary columns packed one after another: column `j`'s rows are
/// `rows[start[j]..start[j + 1]]` (a list per column was an allocation each, a fifth of the
/// Morse complex's persistence).
pub(super) struct Packed {
    start: Vec<usize>,
    rows: Vec<usize>,
}

impl Packed {
    /// `n` columns holding the (column, row) `entries` (iterated twice: counted, then placed).
    fn new<I: Iterator<Item = (usize, usize)>>(n: usize, entries: impl Fn() -> I) -> Packed {
        let mut one = Packed::groups(&[n], || entries().map(|(j, r)| (0, j, r)));
        one.pop().expect("one group")
    }

    /// Groups of columns, `sizes[g]` columns in group `g`, holding the (group, column, row)
    /// `entries` (iterated twice: counted, then placed).
    fn groups<I: Iterator<Item = (usize, usize, usize)>>(
        sizes: &[usize],
        entries: impl Fn() -> I,
    ) -> Vec<Packed> {
        let mut start: Vec<Vec<usize>> = sizes.iter().map(|&n| vec![0usize; n + 1]).collect();
        for (g, j, _) in entries() {
            start[g][j + 1] += 1;
        }
        for s in &mut start {
            for j in 1..s.len() {
                s[j] += s[j - 1];
            }
        }
        let mut rows: Vec<Vec<usize>> = start.iter().map(|s| vec![0usize; s[s.len() - 1]]).collect();
        let mut fill = start.clone();
        for (g, j, r) in entries() {
            rows[g][fill[g][j]] = r;
            fill[g][j] += 1;
        }
        start.into_iter().zip(rows).map(|(start, rows)| Packed { start, rows }).collect()
    }

    fn len(&self) -> usize {
        self.start.len() - 1
    }

    fn column(&self, j: usize) -> &[usize] {
        &self.rows[self.start[j]..self.start[j + 1]]
    }
}

/// The persistence pairs (lowest row, column) of reduced `columns`, leaving out the columns
/// `cleared` marks; rows may be numbered apart from the columns.
fn pairs_of(mut columns: Packed, cleared: &[bool], ctl: &Control) -> Result<Vec<(usize, usize)>, Cancelled> {
    let n = columns.len();
    let rows = columns.rows.iter().max().map_or(0, |&r| r + 1);
    for j in 0..n {
        columns.rows[columns.start[j]..columns.start[j + 1]].sort_unstable();
    }
    let mut pivot_of = vec![usize::MAX; rows]; // row -> column whose lowest one is that row
    // The columns an addition changed (a pivot's column is read here when it is not empty: a
    // column whose additions left it empty is no pivot).
    let mut changed: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pairs = Vec::new();
    for j in 0..n {
        if j % 1024 == 0 {
            ctl.check()?;
        }
        if cleared.get(j) == Some(&true) {
            continue;
        }
        let mut col: Option<Vec<usize>> = None;
        loop {
            let now = col.as_deref().unwrap_or(columns.column(j));
            let Some(&low) = now.last() else { break };
            let k = pivot_of[low];
            if k == usize::MAX {
                pivot_of[low] = j;
                pairs.push((low, j));
                break;
            }
            let other = if changed[k].is_empty() { columns.column(k) } else { &changed[k] };
            col = Some(sym_diff(now, other));
        }
        if let Some(col) = col {
            changed[j] = col;
        }
    }
    Ok(pairs)
}

/// The persistence pairs (lowest row, column) of `columns` that each hold no row or two, as
/// edges between `rows` vertices (dimension 1 of a complex whose 0-cells are its vertices), by
/// union-find: a column joining two components pairs with the root of the younger, the root
/// being each component's earliest row; one within a component reduces to zero. These are the
/// pairs of the column reduction (pairs do not depend on how a matrix is reduced). None when a
/// column holds one row or more than two, or the rows do not fit 32 bits.
fn pairs_of_edges(columns: &Packed, rows: usize) -> Option<Vec<(usize, usize)>> {
    let mut up: Vec<u32> = (0..u32::try_from(rows).ok()?).collect();
    let mut pairs = Vec::new();
    for j in 0..columns.len() {
        match *columns.column(j) {
            [] => {}
            [a, b] => {
                let (ra, rb) = (find(&mut up, a), find(&mut up, b));
                if ra != rb {
                    let (elder, younger) = (ra.min(rb), ra.max(rb));
                    up[younger] = elder as u32;
                    pairs.push((younger, j));
                }
            }
            _ => return None,
        }
    }
    Some(pairs)
}

/// The cells of `0..n` in none of `pairs`: the essential classes.
fn unpaired(n: usize, pairs: &[(usize, usize)]) -> Vec<usize> {
    let mut paired = vec![false; n];
    for &(b, d) in pairs {
        paired[b] = true;
        paired[d] = true;
    }
    (0..n).filter(|&i| !paired[i]).collect()
}

/// [`reduce_with`] for the boundary columns of a cell complex, whose rows are cells one
/// dimension below the column's (`dim[i]` is column i's dimension): a column is only ever added
/// to columns of its own dimension, so each dimension reduces on its own, with its rows
/// renumbered among the cells of the dimension below.
pub(super) fn reduce_by_dimension(
    columns: Vec<Vec<usize>>,
    dim: &[usize],
    ctl: &Control,
) -> Result<Reduced, Cancelled> {
    debug_assert!(
        columns.iter().enumerate().all(|(i, col)| col.iter().all(|&r| dim[r] + 1 == dim[i])),
        "rows one dimension below their column"
    );
    let entries = || columns.iter().enumerate().flat_map(|(j, c)| c.iter().map(move |&r| (j, r)));
    let (split, members) = by_dimension(dim, entries);
    reduce_dimensions(split, &members, ctl)
}

/// Boundary columns given as (column, row) `entries` of a complex whose column `i` has
/// dimension `dim[i]`, split by dimension: per dimension its columns, rows renumbered among the
/// cells of the dimension below, and the cells of each dimension (`members`).
pub(super) fn by_dimension<I: Iterator<Item = (usize, usize)>>(
    dim: &[usize],
    entries: impl Fn() -> I,
) -> (Vec<Packed>, Vec<Vec<usize>>) {
    let dims = dim.iter().max().map_or(0, |&d| d + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); dims];
    let mut local = vec![0usize; dim.len()];
    for (i, &d) in dim.iter().enumerate() {
        local[i] = members[d].len();
        members[d].push(i);
    }
    let sizes: Vec<usize> = members.iter().map(|m| m.len()).collect();
    let split = Packed::groups(&sizes, || entries().map(|(j, r)| (dim[j], local[j], local[r])));
    (split, members)
}

/// The pairs and essential cells of columns split by dimension ([`by_dimension`]).
///
/// Dimensions above 1 are reduced from the top down, with clearing (the twist of Chen and
/// Kerber, 2011): a cell that is the pivot of a reduced column one dimension up is the birth of
/// a pair, so its own column would reduce to zero, and is left out instead. Columns that reduce
/// to zero are where the work is: on white noise 96^3 they took 85% of the additions of the
/// 2-saddles' columns and 95% of the 1-saddles'. The pairs are those of the plain reduction (a
/// reduced column's pivot never depends on a column that reduces to zero). Dimension 1, edges
/// between vertices (the 1-saddles of a Morse complex join two minima, or one twice and then
/// none by parity), needs no clearing: it is paired by union-find beside the others.
pub(super) fn reduce_dimensions(
    mut split: Vec<Packed>,
    members: &[Vec<usize>],
    ctl: &Control,
) -> Result<Reduced, Cancelled> {
    let n: usize = members.iter().map(|m| m.len()).sum();
    let dims = split.len();
    let empty = || Packed { start: vec![0], rows: Vec::new() };
    let ones = (dims > 1).then(|| std::mem::replace(&mut split[1], empty()));
    let global = |d: usize, pairs: Vec<(usize, usize)>| {
        pairs.into_iter().map(move |(low, j)| (members[d - 1][low], members[d][j]))
    };
    let (upper, edges) = rayon::join(
        || -> Result<_, Cancelled> {
            // Columns of dimension 0 are empty, and dimension 1 is paired beside: from 2 up.
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            let mut cleared: Vec<bool> = Vec::new();
            for d in (2..dims).rev() {
                let reduced = pairs_of(std::mem::replace(&mut split[d], empty()), &cleared, ctl)?;
                cleared = vec![false; members[d - 1].len()];
                for &(low, _) in &reduced {
                    cleared[low] = true;
                }
                pairs.extend(global(d, reduced));
            }
            Ok((pairs, cleared))
        },
        || ones.as_ref().map(|c| pairs_of_edges(c, members[0].len())),
    );
    let (mut pairs, cleared) = upper?;
    match (edges, ones) {
        (Some(Some(edges)), _) => pairs.extend(global(1, edges)),
        // Columns that are not edges: reduced as the others, after them.
        (_, Some(ones)) => pairs.extend(global(1, pairs_of(ones, &cleared, ctl)?)),
        (_, None) => {}
    }
    let essential = unpaired(n, &pairs);
    Ok((pairs, essential))
}

/// Symmetric difference of two sorted lists.
fn sym_diff(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// A persistence pair of cells (or an essential cell, with `death = None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CellPair {
    pub dim: usize,
    pub birth: Cell,
    pub death: Option<Cell>,
}

/// The highest corner of a cell (its lower star's vertex).
pub fn top_vertex(grid: &CellGrid, order: &(impl VertexOrder + ?Sized), c: Cell) -> usize {
    grid.corners(c).reduce(|a, b| if order.less(a, b) { b } else { a }).expect("a cell has corners")
}

/// The lower-star filtration's order of two cells given with their top vertices: by top vertex,
/// then faces before cofaces (by dimension), then by cell id.
pub fn filtration_cmp(
    grid: &CellGrid,
    order: &(impl VertexOrder + ?Sized),
    (a, ta): (Cell, usize),
    (b, tb): (Cell, usize),
) -> std::cmp::Ordering {
    if ta != tb {
        if order.less(ta, tb) { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater }
    } else {
        (grid.dim(a), a).cmp(&(grid.dim(b), b))
    }
}

/// Persistence of the lower-star filtration of the whole complex, cell by cell. Quadratic-ish:
/// for tests on small grids only.
pub fn brute_force(grid: &CellGrid, order: &(impl VertexOrder + ?Sized)) -> Vec<CellPair> {
    let (cells, columns) = whole_complex(grid, order);
    cell_pairs(&reduce(columns), |i| cells[i], |i| grid.dim(cells[i]))
}

/// Every cell of the grid in filtration order, and its boundary column (facets' positions).
fn whole_complex(grid: &CellGrid, order: &(impl VertexOrder + ?Sized)) -> (Vec<Cell>, Vec<Vec<usize>>) {
    let n = grid.n_cells();
    let tops: Vec<usize> = (0..n).map(|c| top_vertex(grid, order, c)).collect();
    let mut cells: Vec<Cell> = (0..n).collect();
    cells.sort_by(|&a, &b| filtration_cmp(grid, order, (a, tops[a]), (b, tops[b])));
    let mut pos = vec![0usize; n];
    for (i, &c) in cells.iter().enumerate() {
        pos[c] = i;
    }
    let columns = cells.iter().map(|&c| grid.facets(c).map(|f| pos[f]).collect()).collect();
    (cells, columns)
}

/// The persistence pairs of a reduction (pairs and essential classes by column) as cell pairs,
/// sorted; column `i` is the cell `cell(i)` of dimension `dim(i)`.
pub fn cell_pairs(
    (pairs, essential): &Reduced,
    cell: impl Fn(usize) -> Cell,
    dim: impl Fn(usize) -> usize,
) -> Vec<CellPair> {
    let mut out: Vec<CellPair> = pairs
        .iter()
        .map(|&(b, d)| CellPair { dim: dim(b), birth: cell(b), death: Some(cell(d)) })
        .chain(essential.iter().map(|&e| CellPair { dim: dim(e), birth: cell(e), death: None }))
        .collect();
    // Births are distinct: an unstable sort gives the one order.
    out.par_sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clearing changes which columns are reduced, never the pairs, and the union-find of the
    /// edges (dimension 1) gives the reduction's pairs: the whole cubical complex of small fields
    /// with many ties, reduced by dimension and plainly.
    #[test]
    fn clearing_gives_the_plain_reductions_pairs() {
        let mut random = crate::synthetic::noise(7);
        for (vdims, ndim, levels) in [
            ([5, 4, 3], 3, 3u64),
            ([4, 4, 4], 3, 256),
            ([7, 6, 1], 2, 2),
            ([9, 5, 1], 2, 5),
            ([3, 3, 3], 3, 1),
        ] {
            let grid = CellGrid::new(vdims, ndim);
            let values: Vec<u8> =
                (0..vdims.iter().product::<usize>()).map(|_| (random() % levels) as u8).collect();
            let (cells, columns) = whole_complex(&grid, values.as_slice());
            let dims: Vec<usize> = cells.iter().map(|&c| grid.dim(c)).collect();
            let (mut want, want_essential) = reduce(columns.clone());
            let (mut got, got_essential) =
                reduce_by_dimension(columns, &dims, &Control::default()).expect("not cancelled");
            want.sort_unstable();
            got.sort_unstable();
            assert!(!want.is_empty(), "{vdims:?}: pairs to compare");
            assert_eq!(got, want, "{vdims:?} {values:?}");
            assert_eq!(got_essential, want_essential, "{vdims:?} {values:?}");
        }
    }

    /// Dimension-1 columns that are not all edges (one row, three rows) are reduced as the
    /// others, and union-find on edges pairs as the reduction does: random columns over
    /// vertices, each against the plain reduction.
    #[test]
    fn dimension_one_pairs_equal_the_plain_reductions() {
        let mut random = crate::synthetic::noise(11);
        for case in 0..200 {
            let n = 3 + (random() % 30) as usize;
            let edges_only = case % 2 == 0;
            let mut dims = Vec::new();
            let mut columns: Vec<Vec<usize>> = Vec::new();
            for i in 0..n {
                let vertices: Vec<usize> = (0..i).filter(|&j| dims[j] == 0).collect();
                if i < 2 || vertices.len() < 3 || random().is_multiple_of(3) {
                    dims.push(0);
                    columns.push(Vec::new());
                    continue;
                }
                let k = if edges_only { 2 } else { [1, 2, 3][(random() % 3) as usize] };
                let mut col: Vec<usize> = Vec::new();
                while col.len() < k {
                    let v = vertices[(random() as usize) % vertices.len()];
                    if !col.contains(&v) {
                        col.push(v);
                    }
                }
                dims.push(1);
                columns.push(col);
            }
            let (mut want, want_essential) = reduce(columns.clone());
            let (mut got, got_essential) =
                reduce_by_dimension(columns.clone(), &dims, &Control::default()).expect("not cancelled");
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "{columns:?}");
            assert_eq!(got_essential, want_essential, "{columns:?}");
        }
    }
}
