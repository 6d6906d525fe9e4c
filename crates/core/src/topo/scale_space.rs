//! χ over threshold and scale: the CPU reference of the scale-space's rows (the GPU's equals it,
//! see `topoview_compute::backend::Backend::smoothed_chi_on_grid`), and the error of smoothing
//! followed by the ECC.

use crate::control::{Cancelled, Control};
use crate::field::ScalarField;
use crate::topo::ecc::{self, EccError, EccOptions, chi_at};
use crate::topo::smooth::{self, SmoothError, Smoothing};

/// Smoothing followed by the ECC of the result failed.
#[derive(Debug, thiserror::Error)]
pub enum SmoothEccError {
    #[error("smoothing: {0}")]
    Smooth(#[from] SmoothError),
    #[error(transparent)]
    Ecc(#[from] EccError),
}

impl From<Cancelled> for SmoothEccError {
    fn from(c: Cancelled) -> Self {
        SmoothEccError::Ecc(c.into())
    }
}

impl SmoothEccError {
    pub fn is_cancelled(&self) -> bool {
        matches!(
            self,
            SmoothEccError::Smooth(SmoothError::Cancelled) | SmoothEccError::Ecc(EccError::Cancelled)
        )
    }
}

/// `field` smoothed, and the ECC of the result.
pub fn smooth_ecc(
    field: &ScalarField,
    s: &Smoothing,
    opts: &EccOptions,
    ctl: &Control,
) -> Result<(ScalarField, ecc::Ecc), SmoothEccError> {
    let f = smooth::smooth(field, s, ctl)?;
    let e = ecc::ecc(&f, opts, ctl)?;
    Ok((f, e))
}

/// For each of `sigmas` (> 0, in voxels), χ at the ascending `grid` of `field` smoothed with σ:
/// each smoothed field's exact curve read at the grid.
pub fn chi_on_grid(
    field: &ScalarField,
    sigmas: &[f64],
    opts: &EccOptions,
    grid: &[f64],
    ctl: &Control,
) -> Result<Vec<Vec<i64>>, SmoothEccError> {
    let mut rows = Vec::with_capacity(sigmas.len());
    for &sigma in sigmas {
        let (_, e) = smooth_ecc(field, &Smoothing::voxels(sigma), opts, ctl)?;
        rows.push(grid.iter().map(|&t| chi_at(&e, t)).collect());
    }
    Ok(rows)
}
