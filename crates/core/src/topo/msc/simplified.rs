//! The Morse-Smale complex at one simplification level: its live critical points, its arcs
//! with one polyline each, and its label volumes (basins, mountains, 2D Morse-Smale cells) as
//! fields with the source's geometry. The command line, the exports and the viewer all read
//! the complex through this one view.

use super::complex::{CriticalPoint, NO_LABEL, ms_cells_2d};
use super::simplify::LiveArc;
use super::{Analysis, MscError, vertex_order};
use crate::field::{Samples, ScalarField};

/// A simplification level asked for by the user that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LevelError {
    #[error("the persistence level must be finite and not negative, got {0}")]
    Persistence(f64),
    #[error("the relative level must lie in 0..1, got {0}")]
    Relative(f64),
    #[error(
        "a relative level needs a finite value range (this field spans {0} to {1}); give the \
         persistence in the field's units"
    )]
    Range(f64, f64),
}

/// The faults of `persistence` and `relative` that need no field (judged before one is read).
pub fn check_levels(persistence: Option<f64>, relative: Option<f64>) -> Result<(), LevelError> {
    match (persistence, relative) {
        (Some(p), _) if !(p.is_finite() && p >= 0.0) => Err(LevelError::Persistence(p)),
        (None, Some(r)) if !(0.0..=1.0).contains(&r) => Err(LevelError::Relative(r)),
        _ => Ok(()),
    }
}

/// The persistence threshold for `persistence` (in the field's units) or `relative` (a
/// fraction of its value range), None for neither; `persistence` wins when both are given.
pub fn threshold_of(
    field: &ScalarField,
    persistence: Option<f64>,
    relative: Option<f64>,
) -> Result<Option<f64>, LevelError> {
    check_levels(persistence, relative)?;
    match (persistence, relative) {
        (Some(p), _) if p.is_finite() && p >= 0.0 => Ok(Some(p)),
        (Some(p), _) => Err(LevelError::Persistence(p)),
        (None, Some(r)) if !(0.0..=1.0).contains(&r) => Err(LevelError::Relative(r)),
        (None, Some(r)) => {
            let (lo, hi) = crate::field::stats::stats(field).range.unwrap_or((0.0, 0.0));
            if (hi - lo).is_finite() { Ok(Some(r * (hi - lo))) } else { Err(LevelError::Range(lo, hi)) }
        }
        (None, None) => Ok(None),
    }
}

/// The complex simplified up to a persistence threshold: what the exports write and the
/// viewer draws.
pub struct Simplified<'a> {
    pub field: &'a ScalarField,
    pub analysis: &'a Analysis,
    /// None: the unsimplified complex.
    pub threshold: Option<f64>,
    pub steps: usize,
    /// Live arcs, listed when first asked for (see [`Simplified::arcs`]).
    arcs: std::sync::OnceLock<Vec<LiveArc>>,
    /// Representatives of the critical points at this level (see
    /// [`super::simplify::Hierarchy::representatives`]).
    rep: Vec<u32>,
}

impl<'a> Simplified<'a> {
    pub fn new(field: &'a ScalarField, analysis: &'a Analysis, threshold: Option<f64>) -> Self {
        let h = &analysis.hierarchy;
        let steps = threshold.map_or(0, |t| h.steps_at(t));
        let rep = h.representatives(steps);
        Simplified { field, analysis, threshold, steps, arcs: Default::default(), rep }
    }

    /// The live arcs; [`Simplified::path`] draws one V-path of each. Listed on first use: a
    /// summary of the unsimplified complex needs none of them.
    pub fn arcs(&self) -> &[LiveArc] {
        let a = self.analysis;
        self.arcs.get_or_init(|| a.hierarchy.arcs_at(&a.complex, self.steps))
    }

    /// One V-path of live arc `i` (cell centres, upper end first), made when asked: kept for
    /// every arc, the paths would take more memory than the whole analysis (24 bytes a point).
    pub fn path(&self, i: usize) -> Vec<[f64; 3]> {
        self.analysis.hierarchy.path(&self.analysis.complex, self.arcs()[i].ids[0], &self.rep)
    }

    /// [`Simplified::path`] of every live arc, in order.
    pub fn paths(&self) -> impl Iterator<Item = Vec<[f64; 3]>> + '_ {
        (0..self.arcs().len()).map(|i| self.path(i))
    }

    /// Whether critical point `i` is alive at this level.
    pub fn alive(&self, i: usize) -> bool {
        self.analysis.hierarchy.alive(i, self.steps)
    }

    /// The live critical points with their ids.
    pub fn live_points(&self) -> impl Iterator<Item = (usize, &CriticalPoint)> {
        self.analysis.complex.critical.iter().enumerate().filter(|(i, _)| self.alive(*i))
    }

    /// Live critical points by index.
    pub fn counts(&self) -> [usize; 4] {
        self.analysis.hierarchy.counts(&self.analysis.complex, self.steps)
    }
}

/// Label volumes of a simplified complex: critical point ids, -1 where none (a path that
/// leaves the domain).
pub struct LabelVolumes {
    /// Per voxel: the minimum whose basin (ascending manifold) holds it.
    pub basins: ScalarField,
    /// Per top-dimensional cell (the grid of cell centres, one smaller along each axis and
    /// half a voxel off): the maximum whose mountain (descending manifold) holds it. None when
    /// an axis has a single voxel.
    pub mountains: Option<ScalarField>,
    /// 2D fields: per square, its Morse-Smale cell (a label per pair of basin, taken at the
    /// square's lowest corner, and mountain), on the grid of the mountains.
    pub cells: Option<ScalarField>,
}

fn labels(v: &[u32]) -> Samples {
    Samples::I32(v.iter().map(|&l| if l == NO_LABEL { -1 } else { l as i32 }).collect())
}

impl Simplified<'_> {
    /// The label volumes at this level, with the source's affine (shifted half a voxel for the
    /// grid of cells).
    pub fn label_volumes(&self) -> Result<LabelVolumes, MscError> {
        let (field, a) = (self.field, self.analysis);
        let h = &a.hierarchy;
        let basin_labels = h.labels_at(&a.complex.basins, self.steps);
        let mut basins = field.with_samples(labels(&basin_labels))?;
        basins.labels = true;
        let dual: Vec<usize> = field.shape().iter().map(|&n| n - 1).collect();
        if dual.contains(&0) {
            return Ok(LabelVolumes { basins, mountains: None, cells: None });
        }
        let mountain_labels = h.labels_at(&a.complex.mountains, self.steps);
        let mut mountains =
            ScalarField::new(&dual, labels(&mountain_labels))?.with_spacing(field.spacing())?;
        // Cell centres sit half a voxel from the voxels along every axis of the field.
        let mut aff = field.affine_or_spacing();
        for row in aff.iter_mut().take(3) {
            row[3] += 0.5 * row[..field.ndim()].iter().sum::<f64>();
        }
        mountains.affine = Some(aff);
        mountains.labels = true;
        let cells = if field.ndim() == 2 {
            let order = vertex_order(field)?;
            let cells = ms_cells_2d(&a.complex.grid, &order, &basin_labels, &mountain_labels);
            let mut c = ScalarField::new(&dual, labels(&cells))?.with_spacing(field.spacing())?;
            c.affine = Some(aff);
            c.labels = true;
            Some(c)
        } else {
            None
        };
        Ok(LabelVolumes { basins, mountains: Some(mountains), cells })
    }
}
