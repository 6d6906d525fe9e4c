//! The jobs behind "why χ changes": the Betti curves of a curve's field, and the labelled parts
//! (components, voids) of the set at the threshold on screen.

use super::curve::thin;
use super::{Job, JobContext, JobError, Lane};
use crate::field::ScalarField;
use crate::topo::betti::parts::{Parts, parts};
use crate::topo::betti::{self, Betti};
use crate::topo::ecc::{Construction, Ecc, Filtration};
use std::sync::Arc;

/// Betti curves of the curve on screen.
pub const BETTI: Lane = Lane("betti");
/// The parts of the threshold set on screen (superseded by every move of the threshold).
pub const EXPLAIN: Lane = Lane("explain");

/// Most points a Betti curve is drawn with (as for the ECC).
const PLOT_POINTS: usize = 4096;

/// The Betti curves of `field` at the thresholds of its curve `ecc`.
pub struct BettiCurves {
    pub field: Arc<ScalarField>,
    pub ecc: Arc<Ecc>,
}

/// Betti curves ready to plot: β0, β1, β2 thinned as the ECC is.
pub struct BettiLines {
    pub ecc: Arc<Ecc>,
    pub betti: Betti,
    pub points: [Vec<[f64; 2]>; 3],
}

impl BettiLines {
    pub fn new(ecc: Arc<Ecc>, betti: Betti) -> BettiLines {
        let points = [&betti.b0, &betti.b1, &betti.b2].map(|b| thin(&ecc.thresholds, b, PLOT_POINTS));
        BettiLines { ecc, betti, points }
    }

    /// β0, β1, β2 of the set at `t` (zero before the first threshold: the empty set).
    pub fn at(&self, t: f64) -> [i64; 3] {
        match super::curve::passed(&self.ecc, t) {
            0 => [0; 3],
            n => [self.betti.b0[n - 1], self.betti.b1[n - 1], self.betti.b2[n - 1]],
        }
    }
}

impl Job for BettiCurves {
    type Output = BettiLines;

    fn lane(&self) -> Lane {
        BETTI
    }

    fn run(self, cx: &JobContext) -> Result<BettiLines, JobError> {
        let total = betti::work(&self.field);
        let progress = |n: u64| cx.report("Betti curves", n, total);
        let b = betti::betti(&self.field, &self.ecc, &cx.control(&progress))?;
        Ok(BettiLines::new(self.ecc, b))
    }
}

/// The parts of `{f <= threshold}` (or `>=`) of `field`.
pub struct Explain {
    pub field: Arc<ScalarField>,
    pub construction: Construction,
    pub filtration: Filtration,
    pub threshold: f64,
}

/// Labelled parts with what they were computed from.
pub struct Explained {
    pub field: Arc<ScalarField>,
    pub construction: Construction,
    pub filtration: Filtration,
    pub threshold: f64,
    pub parts: Arc<Parts>,
    /// How long the labelling took (ms).
    pub ms: f64,
}

impl Job for Explain {
    type Output = Explained;

    fn lane(&self) -> Lane {
        EXPLAIN
    }

    fn run(self, cx: &JobContext) -> Result<Explained, JobError> {
        let t = std::time::Instant::now();
        let progress = |_: u64| {};
        let p =
            parts(&self.field, self.construction, self.filtration, self.threshold, &cx.control(&progress))?;
        let Explain { field, construction, filtration, threshold } = self;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(Explained { field, construction, filtration, threshold, parts: Arc::new(p), ms })
    }
}
