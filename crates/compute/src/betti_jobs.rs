//! The jobs behind "why χ changes": the Betti curves of a curve's field, and the labelled parts
//! (components, voids) of the set at the threshold on screen, and the tunnels of the field.

use super::curve::thin;
use super::{Job, JobContext, JobError, Lane};
use std::sync::Arc;
use topoview_core::field::ScalarField;
use topoview_core::topo::betti::parts::{Parts, parts};
use topoview_core::topo::betti::tunnels::{Tunnel, tunnels};
use topoview_core::topo::betti::{self, Betti};
use topoview_core::topo::ecc::{Construction, Ecc, Filtration};

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
        let points = [&betti.b0, &betti.b1, &betti.b2].map(|b| thin(&ecc.thresholds, |i| b[i], PLOT_POINTS));
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
        let (b, ran) = cx.backend.betti(&self.field, &self.ecc, &cx.control(&progress))?;
        cx.note(ran.fallback);
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

/// The explain lane's own thread pool (as many threads as cores), made on first use; None if
/// the system refused threads (the shared pool then serves).
fn explain_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new().thread_name(|i| format!("topoview-explain-{i}")).build().ok()
    })
    .as_ref()
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
        let label =
            || parts(&self.field, self.construction, self.filtration, self.threshold, &cx.control(&progress));
        // On threads of its own: the shared pool may be held for seconds by a long job (the
        // Betti curves' two passes, the tunnels' gradient) while the user drags the threshold.
        let p = match explain_pool() {
            Some(pool) => pool.install(label)?,
            None => label()?,
        };
        let Explain { field, construction, filtration, threshold } = self;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(Explained { field, construction, filtration, threshold, parts: Arc::new(p), ms })
    }
}

/// The tunnels of the field on screen (once per field, construction and filtration).
pub const TUNNELS: Lane = Lane("tunnels");

/// The dimension-1 persistence pairs of a field's filtration, with where each is born.
pub struct Tunnels {
    pub field: Arc<ScalarField>,
    pub construction: Construction,
    pub filtration: Filtration,
}

/// Tunnels with what they were computed from.
pub struct TunnelList {
    pub field: Arc<ScalarField>,
    pub construction: Construction,
    pub filtration: Filtration,
    pub tunnels: Arc<Vec<Tunnel>>,
}

impl Job for Tunnels {
    type Output = TunnelList;

    fn lane(&self) -> Lane {
        TUNNELS
    }

    fn run(self, cx: &JobContext) -> Result<TunnelList, JobError> {
        let progress = |_: u64| {};
        let t = tunnels(&self.field, self.construction, self.filtration, &cx.control(&progress))?;
        let Tunnels { field, construction, filtration } = self;
        Ok(TunnelList { field, construction, filtration, tunnels: Arc::new(t) })
    }
}
