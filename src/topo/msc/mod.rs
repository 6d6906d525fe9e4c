//! The discrete Morse-Smale complex of a 2D or 3D field (work in progress: the discrete
//! gradient, its critical cells and the persistence reference are here; arcs, manifolds and
//! simplification follow).
//!
//! Setting: voxels are the **vertices** of the cubical grid and every higher cell takes the
//! maximum of its vertices (the lower-star filtration), with ties in value broken by voxel index
//! (a higher index is higher).

pub mod gradient;
pub mod grid;
pub mod morse;
pub mod persistence;

use crate::field::{Key, Sample, ScalarField};
use crate::with_samples;
use gradient::Gradient;
use grid::CellGrid;
use rayon::prelude::*;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MscError {
    #[error("{0} NaN samples: the Morse-Smale complex needs a value at every vertex")]
    Nan(usize),
}

/// Order keys of every voxel (see [`crate::field::Sample::to_key`]), as i64.
pub fn vertex_keys(field: &ScalarField) -> Result<Vec<i64>, MscError> {
    fn keys<T: Sample>(v: &[T]) -> Vec<i64> {
        v.par_iter().map(|s| s.to_key().to_i64()).collect()
    }
    let (nan, _) = crate::topo::ecc::count_non_finite(field);
    if nan > 0 {
        return Err(MscError::Nan(nan));
    }
    Ok(with_samples!(field.samples(), v => keys(v)))
}

/// The grid of cells of `field`.
pub fn cell_grid(field: &ScalarField) -> CellGrid {
    CellGrid::new(field.dims(), field.ndim())
}

/// The discrete gradient of `field` (see [`gradient`]).
pub fn discrete_gradient(field: &ScalarField) -> Result<Gradient, MscError> {
    let keys = vertex_keys(field)?;
    let g = gradient::gradient(cell_grid(field), keys.as_slice());
    debug_assert_eq!(morse_sum(&g), 1, "Morse equality on a box");
    Ok(g)
}

/// The alternating sum of critical cells, which equals chi of the domain (1 for a box).
pub fn morse_sum(g: &Gradient) -> i64 {
    g.critical_cells()
        .iter()
        .enumerate()
        .map(|(k, c)| if k % 2 == 0 { c.len() as i64 } else { -(c.len() as i64) })
        .sum()
}
