//! The ECC scale-space: χ over (threshold, σ), by the iterated smoothing + ECC pipeline (on the
//! GPU where the backend has one, the field resident there across the scales), at a grid of
//! thresholds common to every σ, with each σ's suggested threshold (the first
//! positive-to-negative zero-crossing) read on the grid.

use super::backend::{Backend, Ran, SmoothEccError};
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::topo::ecc::EccOptions;
use topoview_core::topo::ecc::crossings::{suggested_threshold, zero_crossings};

/// Most scales and thresholds of one scale-space (a heat map, not a volume).
pub const MAX_SIGMAS: usize = 1024;
pub const MAX_THRESHOLDS: usize = 65536;

#[derive(Debug, thiserror::Error)]
pub enum ScaleSpaceError {
    #[error("scale-space: {0}")]
    Range(String),
    #[error(transparent)]
    Compute(#[from] SmoothEccError),
}

/// χ at `thresholds` for each of `sigmas` (σ = 0: the field itself).
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleSpace {
    pub sigmas: Vec<f64>,
    pub thresholds: Vec<f64>,
    /// `chi[s][t]`: χ of the set at `thresholds[t]` of the field smoothed with `sigmas[s]`.
    pub chi: Vec<Vec<i64>>,
    /// Per σ, the suggested threshold on the grid (None: no positive-to-negative crossing).
    pub suggested: Vec<Option<f64>>,
    /// Where each σ ran.
    pub ran: Vec<Ran>,
}

/// `0, step, 2 step, ...` up to `max` (inclusive, within rounding).
pub fn sigmas(max: f64, step: f64) -> Result<Vec<f64>, ScaleSpaceError> {
    if !(max.is_finite() && max > 0.0 && step.is_finite() && step > 0.0) {
        return Err(ScaleSpaceError::Range(format!("SIGMA_MAX ({max}) and STEP ({step}) must be positive")));
    }
    let steps = (max / step + 1e-9).floor();
    if steps + 1.0 > MAX_SIGMAS as f64 {
        return Err(ScaleSpaceError::Range(format!(
            "{} scales; at most {MAX_SIGMAS} (raise STEP)",
            steps + 1.0
        )));
    }
    let n = steps as usize + 1;
    Ok((0..n).map(|i| i as f64 * step).collect())
}

/// `n` thresholds evenly spaced from `lo` to `hi` inclusive (one if they are equal).
pub fn threshold_grid(lo: f64, hi: f64, n: usize) -> Result<Vec<f64>, ScaleSpaceError> {
    if !(2..=MAX_THRESHOLDS).contains(&n) {
        return Err(ScaleSpaceError::Range(format!("{n} thresholds; 2 to {MAX_THRESHOLDS}")));
    }
    if lo == hi {
        return Ok(vec![lo]);
    }
    Ok((0..n).map(|i| if i + 1 == n { hi } else { lo + (hi - lo) * i as f64 / (n - 1) as f64 }).collect())
}

/// The scale-space of `field`. Progress: one tick per voxel and axis smoothed and per voxel of
/// each ECC, `(ndim + 1) * voxels` per σ (the original: voxels only).
pub fn scale_space(
    backend: &Backend,
    field: &ScalarField,
    opts: &EccOptions,
    sigmas: &[f64],
    thresholds: &[f64],
    ctl: &Control,
) -> Result<ScaleSpace, ScaleSpaceError> {
    if !thresholds.windows(2).all(|w| w[0] <= w[1]) {
        return Err(ScaleSpaceError::Range("the thresholds must ascend".into()));
    }
    let mut chi = vec![Vec::new(); sigmas.len()];
    let mut ran = vec![Default::default(); sigmas.len()];
    let originals: Vec<usize> = (0..sigmas.len()).filter(|&k| sigmas[k] == 0.0).collect();
    if !originals.is_empty() {
        let (e, r) = backend.ecc(field, opts, ctl).map_err(SmoothEccError::from)?;
        let row: Vec<i64> = thresholds.iter().map(|&t| super::curve::chi_at(&e, t)).collect();
        for &k in &originals {
            (chi[k], ran[k]) = (row.clone(), r.clone());
        }
    }
    let smoothed: Vec<usize> = (0..sigmas.len()).filter(|&k| sigmas[k] != 0.0).collect();
    if !smoothed.is_empty() {
        let s: Vec<f64> = smoothed.iter().map(|&k| sigmas[k]).collect();
        let (rows, r) = backend.smoothed_chi_on_grid(field, &s, opts, thresholds, ctl)?;
        for (&k, row) in smoothed.iter().zip(rows) {
            (chi[k], ran[k]) = (row, r.clone());
        }
    }
    let suggested = chi.iter().map(|row| suggested_on_grid(row, thresholds, opts)).collect();
    Ok(ScaleSpace { sigmas: sigmas.to_vec(), thresholds: thresholds.to_vec(), chi, suggested, ran })
}

/// The suggested threshold of one scale, read on the grid: the last grid threshold before the
/// first positive-to-negative zero-crossing of χ in filtration order (the rule of
/// [`suggested_threshold`], applied to the grid's samples of the curve).
fn suggested_on_grid(row: &[i64], grid: &[f64], opts: &EccOptions) -> Option<f64> {
    let (mut thresholds, mut chi) = (grid.to_vec(), row.to_vec());
    if opts.filtration == topoview_core::topo::ecc::Filtration::Superlevel {
        thresholds.reverse();
        chi.reverse();
    }
    let e = topoview_core::topo::ecc::Ecc {
        construction: opts.construction,
        filtration: opts.filtration,
        thresholds: topoview_core::field::Samples::F64(thresholds),
        chi: topoview_core::topo::ecc::Chi::I64(chi),
    };
    suggested_threshold(&zero_crossings(&e))
}

/// The work [`scale_space`] reports progress in.
pub fn work(field: &ScalarField, sigmas: &[f64]) -> u64 {
    let n = field.len() as u64;
    sigmas.iter().map(|&s| if s == 0.0 { n } else { (field.ndim() as u64 + 1) * n }).sum()
}

/// The viewer's scale-space: one per field, construction and filtration, on request.
pub const SCALE_SPACE: super::Lane = super::Lane("scale-space");

/// The scale-space of a field over an even grid of its value range.
pub struct ScaleSpaceJob {
    pub field: std::sync::Arc<ScalarField>,
    pub opts: EccOptions,
    pub sigmas: Vec<f64>,
    pub thresholds: Vec<f64>,
}

/// A scale-space with what it was computed from.
pub struct ScaleSpaceMap {
    pub field: std::sync::Arc<ScalarField>,
    pub opts: EccOptions,
    pub map: ScaleSpace,
}

impl super::Job for ScaleSpaceJob {
    type Output = ScaleSpaceMap;

    fn lane(&self) -> super::Lane {
        SCALE_SPACE
    }

    fn run(self, cx: &super::JobContext) -> Result<ScaleSpaceMap, super::JobError> {
        let total = work(&self.field, &self.sigmas);
        let progress = |n: u64| cx.report("scale-space", n, total);
        let map = scale_space(
            cx.backend,
            &self.field,
            &self.opts,
            &self.sigmas,
            &self.thresholds,
            &cx.control(&progress),
        )?;
        if let Some(why) = map.ran.iter().find_map(|r| r.fallback.clone()) {
            cx.note(Some(why));
        }
        Ok(ScaleSpaceMap { field: self.field, opts: self.opts, map })
    }
}

impl From<ScaleSpaceError> for super::JobError {
    fn from(e: ScaleSpaceError) -> Self {
        match e {
            ScaleSpaceError::Compute(c) => c.into(),
            r => super::JobError::Failed(Box::new(r)),
        }
    }
}
