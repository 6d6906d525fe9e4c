//! The obviously-correct ECC: build the cubical complex cell by cell, give each cell its value
//! from the construction's rule, and count cells by dimension at every threshold (one sorted
//! sweep over the cells). Slow, a few allocations per cell: the reference for tests only.

use super::{Construction, Ecc, Filtration};
use crate::field::ScalarField;

/// ECC of `field` by explicit cell counting. NaN samples are absent (as with
/// [`super::NanPolicy::Absent`]); infinities are ordinary values.
pub fn ecc(field: &ScalarField, construction: Construction, filtration: Filtration) -> Ecc {
    let shape = field.shape().to_vec();
    let sign = if filtration == Filtration::Superlevel { -1.0 } else { 1.0 };
    let value = |v: &[usize]| {
        let mut i = 0;
        for a in (0..shape.len()).rev() {
            i = i * shape[a] + v[a];
        }
        let s = field.samples().get_f64(i);
        if s.is_nan() { None } else { Some(sign * s) }
    };
    // Cells are points of the doubled grid. Top-cells: voxel v is the cell at 2v + 1 and the grid
    // runs over 0..=2n; vertices: voxel v is the vertex at 2v and the grid runs over 0..2n - 1.
    // Along an axis where the cell coordinate c is odd (top-cells: even) the cell spans the voxels
    // at the two neighbouring coordinates, else only the one at c.
    let top = construction == Construction::TopCells;
    let extent: Vec<usize> = shape.iter().map(|&n| if top { 2 * n + 1 } else { 2 * n - 1 }).collect();
    let mut cells: Vec<(f64, usize)> = Vec::new(); // (filtration value, dimension)
    let mut c = vec![0usize; shape.len()];
    'cells: loop {
        let dim = c.iter().filter(|&&x| x % 2 == 1).count();
        // Voxels of this cell: per axis the list of voxel coordinates it touches.
        let per_axis: Vec<Vec<usize>> = c
            .iter()
            .zip(&shape)
            .map(|(&x, &n)| {
                if top {
                    // Voxel coordinate k sits at 2k + 1; the cell at x touches k with |2k+1-x| <= 1.
                    if x % 2 == 1 {
                        vec![x / 2]
                    } else {
                        [x / 2, x / 2 + 1].iter().filter(|&&k| k >= 1 && k <= n).map(|k| k - 1).collect()
                    }
                } else if x % 2 == 0 {
                    vec![x / 2]
                } else {
                    vec![x / 2, x / 2 + 1]
                }
            })
            .collect();
        let mut cell_value: Option<f64> = None;
        let mut absent = false;
        let mut idx = vec![0usize; shape.len()];
        'voxels: loop {
            let v: Vec<usize> = idx.iter().zip(&per_axis).map(|(&i, ks)| ks[i]).collect();
            match value(&v) {
                None => absent = true,
                Some(s) => {
                    cell_value = Some(match cell_value {
                        None => s,
                        Some(cv) if top => cv.min(s),
                        Some(cv) => cv.max(s),
                    })
                }
            }
            for a in 0..idx.len() {
                idx[a] += 1;
                if idx[a] < per_axis[a].len() {
                    continue 'voxels;
                }
                idx[a] = 0;
            }
            break;
        }
        // Top-cells: a cell exists once any voxel around it does (absent ones never enter);
        // vertices: a cell needs all its corners.
        if let Some(cv) = cell_value
            && (top || !absent)
        {
            cells.push((cv, dim));
        }
        for a in 0..c.len() {
            c[a] += 1;
            if c[a] < extent[a] {
                continue 'cells;
            }
            c[a] = 0;
        }
        break;
    }
    let mut values: Vec<f64> = (0..field.len())
        .map(|i| field.samples().get_f64(i))
        .filter(|s| !s.is_nan())
        .map(|s| sign * s)
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup_by(|a, b| a == b);
    // Sweep the thresholds in order, adding each cell once its value is reached.
    cells.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut chi = Vec::with_capacity(values.len());
    let (mut at, mut sum) = (0, 0i64);
    for &t in &values {
        while at < cells.len() && cells[at].0 <= t {
            sum += if cells[at].1.is_multiple_of(2) { 1 } else { -1 };
            at += 1;
        }
        chi.push(sum);
    }
    let thresholds: Vec<f64> = values.iter().map(|t| sign * t + 0.0).collect();
    Ecc {
        construction,
        filtration,
        thresholds: crate::field::Samples::from_f64(field.dtype(), &thresholds),
        chi: super::Chi::I64(chi),
    }
}
