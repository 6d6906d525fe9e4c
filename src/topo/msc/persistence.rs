//! Persistent homology over Z/2 by the standard column reduction, and the lower-star
//! persistence of the whole cubical complex computed that way (the brute-force reference the
//! Morse-complex computation is tested against).

use super::gradient::VertexOrder;
use super::grid::{Cell, CellGrid};
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
pub fn reduce_with(mut columns: Vec<Vec<usize>>, ctl: &Control) -> Result<Reduced, Cancelled> {
    let n = columns.len();
    let mut pivot_of = vec![usize::MAX; n]; // row -> column whose lowest one is that row
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
    let mut paired = vec![false; n];
    for &(b, d) in &pairs {
        paired[b] = true;
        paired[d] = true;
    }
    let essential = (0..n).filter(|&i| !paired[i]).collect();
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
