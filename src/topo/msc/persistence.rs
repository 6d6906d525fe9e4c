//! Persistent homology over Z/2 by the standard column reduction, and the lower-star
//! persistence of the whole cubical complex computed that way (the brute-force reference the
//! Morse-complex computation is tested against).

use super::grid::{Cell, CellGrid};
use super::order::VertexOrder;
use crate::control::{Cancelled, Control};

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
    let pairs = pairs_of(columns, ctl)?;
    Ok((pairs.clone(), unpaired(n, &pairs)))
}

/// The persistence pairs (lowest row, column) of reduced `columns`; rows may be numbered apart
/// from the columns.
fn pairs_of(mut columns: Vec<Vec<usize>>, ctl: &Control) -> Result<Vec<(usize, usize)>, Cancelled> {
    let n = columns.len();
    let rows = columns.iter().filter_map(|c| c.iter().max()).max().map_or(0, |&r| r + 1);
    let mut pivot_of = vec![usize::MAX; rows]; // row -> column whose lowest one is that row
    let mut pairs = Vec::new();
    for col in columns.iter_mut() {
        col.sort_unstable();
    }
    for j in 0..n {
        if j % 1024 == 0 {
            ctl.check()?;
        }
        let mut col = std::mem::take(&mut columns[j]);
        while let Some(&low) = col.last() {
            let k = pivot_of[low];
            if k == usize::MAX {
                break;
            }
            col = sym_diff(&col, &columns[k]);
        }
        if let Some(&low) = col.last() {
            pivot_of[low] = j;
            pairs.push((low, j));
        }
        columns[j] = col;
    }
    Ok(pairs)
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
/// to columns of its own dimension, so each dimension reduces on its own thread, with its rows
/// renumbered among the cells of the dimension below.
pub(super) fn reduce_by_dimension(
    columns: Vec<Vec<usize>>,
    dim: &[usize],
    ctl: &Control,
) -> Result<Reduced, Cancelled> {
    use rayon::prelude::*;
    let n = columns.len();
    let dims = dim.iter().max().map_or(0, |&d| d + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); dims];
    let mut local = vec![0usize; n];
    for (i, &d) in dim.iter().enumerate() {
        local[i] = members[d].len();
        members[d].push(i);
    }
    let mut split: Vec<Vec<Vec<usize>>> = members.iter().map(|m| Vec::with_capacity(m.len())).collect();
    for (i, col) in columns.into_iter().enumerate() {
        debug_assert!(col.iter().all(|&r| dim[r] + 1 == dim[i]), "rows one dimension below their column");
        split[dim[i]].push(col.into_iter().map(|r| local[r]).collect());
    }
    let reduced: Vec<Vec<(usize, usize)>> =
        split.into_par_iter().map(|cols| pairs_of(cols, ctl)).collect::<Result<_, _>>()?;
    let mut pairs = Vec::new();
    for (d, p) in reduced.into_iter().enumerate() {
        // Columns of dimension 0 are empty: pairs start at dimension 1.
        pairs.extend(p.into_iter().map(|(low, j)| (members[d - 1][low], members[d][j])));
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

/// Persistence of the lower-star filtration of the whole complex, cell by cell. Quadratic-ish:
/// for tests on small grids only.
pub fn brute_force(grid: &CellGrid, order: &(impl VertexOrder + ?Sized)) -> Vec<CellPair> {
    let n = grid.n_cells();
    let tops: Vec<usize> = (0..n).map(|c| top_vertex(grid, order, c)).collect();
    let mut cells: Vec<Cell> = (0..n).collect();
    // Filtration: by top vertex, then faces before cofaces.
    cells.sort_by(|&a, &b| {
        if tops[a] != tops[b] {
            if order.less(tops[a], tops[b]) { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater }
        } else {
            (grid.dim(a), a).cmp(&(grid.dim(b), b))
        }
    });
    let mut pos = vec![0usize; n];
    for (i, &c) in cells.iter().enumerate() {
        pos[c] = i;
    }
    let columns = cells.iter().map(|&c| grid.facets(c).map(|f| pos[f]).collect()).collect();
    let (pairs, essential) = reduce(columns);
    let mut out: Vec<CellPair> = pairs
        .into_iter()
        .map(|(b, d)| CellPair { dim: grid.dim(cells[b]), birth: cells[b], death: Some(cells[d]) })
        .chain(essential.into_iter().map(|e| CellPair {
            dim: grid.dim(cells[e]),
            birth: cells[e],
            death: None,
        }))
        .collect();
    out.sort();
    out
}
