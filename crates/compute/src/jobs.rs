//! The viewer's basic jobs: opening a file, generating an example field, the ECC, smoothing +
//! ECC, the Morse-Smale complex and the crack filter of a slice. Each is its parameters, its lane
//! and a `run` that calls the backend. The others sit beside: `betti_jobs` (Betti curves, the
//! parts at a threshold, tunnels), `scale_space`, `layers`, `rips`.

use super::Curve;
use super::msc_scene::MscScene;
use super::{FieldSummary, Job, JobContext, JobError, Lane};
use std::path::PathBuf;
use std::sync::Arc;
use topoview_core::field::ScalarField;
use topoview_core::io::{self, OpenOptions};
use topoview_core::topo::ecc::EccOptions;
use topoview_core::topo::smooth::Smoothing;

/// Opening a file or generating an example field.
pub const LOAD: Lane = Lane("load");
/// The ECC of the loaded field.
pub const CURVE: Lane = Lane("curve");
/// Smoothing the loaded field, then its ECC.
pub const SMOOTH: Lane = Lane("smooth");
/// The Morse-Smale complex of the field on screen.
pub const MSC: Lane = Lane("msc");

/// A field ready to show, with what the views need to know about it.
pub struct Loaded {
    /// The file's path, or a description of a generated field.
    pub source: String,
    pub path: Option<PathBuf>,
    /// How to get the field again (a session records it).
    pub origin: Origin,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
}

/// Where a field came from: a file read with options, or the random-field generator.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    File { path: PathBuf, opts: OpenOptions },
    Generated { dims: Vec<usize>, corr: f64, seed: u64 },
}

/// Reads a file (cancellable between any two reads).
pub struct Open {
    pub path: PathBuf,
    pub opts: OpenOptions,
}

impl Job for Open {
    type Output = Loaded;

    fn lane(&self) -> Lane {
        LOAD
    }

    fn run(self, cx: &JobContext) -> Result<Loaded, JobError> {
        // Progress counts the bytes of every file read (a header and its data file).
        let total = io::read_set(&self.path).iter().map(|p| io::file_len(p)).sum();
        let progress = |n: u64| cx.report("reading", n, total);
        let field = io::open_with(&self.path, &self.opts, &cx.control(&progress))?;
        let summary = FieldSummary::of(&field);
        let source = self.path.display().to_string();
        let origin = Origin::File { path: self.path.clone(), opts: self.opts };
        Ok(Loaded { source, path: Some(self.path), origin, field: Arc::new(field), summary })
    }
}

/// A seeded Gaussian random field (white noise smoothed with `corr` voxels), for teaching.
pub struct Generate {
    pub dims: Vec<usize>,
    pub corr: f64,
    pub seed: u64,
}

impl Job for Generate {
    type Output = Loaded;

    fn lane(&self) -> Lane {
        LOAD
    }

    fn run(self, cx: &JobContext) -> Result<Loaded, JobError> {
        let Generate { dims, corr, seed } = self;
        let total = (dims.len() as u64 + 1) * dims.iter().product::<usize>() as u64;
        let progress = |n: u64| cx.report("generating", n, total);
        let field =
            topoview_core::synthetic::gaussian_random_field(&dims, corr, seed, &cx.control(&progress))?;
        let origin = Origin::Generated { dims: dims.clone(), corr, seed };
        let summary = FieldSummary::of(&field);
        let source = format!(
            "Gaussian random field {}, correlation {corr} voxels, seed {seed}",
            topoview_core::field::dims_string(&dims)
        );
        Ok(Loaded { source, path: None, origin, field: Arc::new(field), summary })
    }
}

/// The ECC of a field, prepared for the plot.
pub struct Ecc {
    pub field: Arc<ScalarField>,
    pub opts: EccOptions,
}

impl Job for Ecc {
    type Output = Curve;

    fn lane(&self) -> Lane {
        CURVE
    }

    fn run(self, cx: &JobContext) -> Result<Curve, JobError> {
        let total = self.field.len() as u64;
        let progress = |n: u64| cx.report("ECC", n, total);
        let (e, ran) = cx.backend.ecc(&self.field, &self.opts, &cx.control(&progress))?;
        cx.note(ran.fallback);
        Ok(Curve::new(Arc::new(e)))
    }
}

/// A field smoothed with `sigma` voxels, and its ECC.
pub struct Smoothed {
    pub sigma: f64,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
    pub curve: Curve,
}

/// Smoothing a field, then its ECC.
pub struct Smooth {
    pub field: Arc<ScalarField>,
    pub sigma: f64,
    pub opts: EccOptions,
}

impl Job for Smooth {
    type Output = Smoothed;

    fn lane(&self) -> Lane {
        SMOOTH
    }

    fn run(self, cx: &JobContext) -> Result<Smoothed, JobError> {
        let Smooth { field, sigma, opts } = self;
        // Progress: the smoothing passes, then the ECC.
        let total = (field.ndim() as u64 + 1) * field.len() as u64;
        let progress = |n: u64| cx.report("smoothing + ECC", n, total);
        let (smoothed, e, ran) =
            cx.backend.smooth_ecc(&field, &Smoothing::voxels(sigma), &opts, &cx.control(&progress))?;
        cx.note(ran.fallback);
        let summary = FieldSummary::of(&smoothed);
        Ok(Smoothed { sigma, field: Arc::new(smoothed), summary, curve: Curve::new(Arc::new(e)) })
    }
}

/// The Morse-Smale complex of a field (the original or the smoothed one), prepared for the
/// views. Refused before the complex is built when [`topoview_core::topo::msc::memory_estimate`] passes
/// `max_bytes`.
pub struct Msc {
    pub field: Arc<ScalarField>,
    pub max_bytes: u64,
}

impl Job for Msc {
    type Output = MscScene;

    fn lane(&self) -> Lane {
        MSC
    }

    fn run(self, cx: &JobContext) -> Result<MscScene, JobError> {
        // `analyse` ticks once after each stage; the stage named is the one under way.
        const STAGES: [&str; 7] = [
            "Morse-Smale: gradient",
            "Morse-Smale: arcs",
            "Morse-Smale: arcs",
            "Morse-Smale: manifolds",
            "Morse-Smale: persistence",
            "Morse-Smale: simplification",
            "Morse-Smale: preparing the view",
        ];
        let ticks = std::sync::atomic::AtomicUsize::new(0);
        let progress = |n: u64| {
            let k = ticks.fetch_add(n as usize, std::sync::atomic::Ordering::Relaxed) + n as usize;
            cx.report(STAGES[k.min(STAGES.len() - 1)], n, STAGES.len() as u64);
        };
        cx.report(STAGES[0], 0, STAGES.len() as u64);
        // The gradient, the labels and the saddle-saddle arcs run on the GPU when there is one,
        // the rest on the CPU.
        let (analysis, ran) = cx.backend.msc(&self.field, &cx.control(&progress), self.max_bytes)?;
        cx.note(ran.fallback);
        Ok(MscScene::new(self.field, analysis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, Choice};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Runs `job` with its cancel flag raised at the job's first progress report.
    fn cancelled_at_first_report<J: Job>(job: J) -> Result<J::Output, JobError> {
        let backend = Backend::new(Choice::Cpu, None).unwrap();
        let cancel = AtomicBool::new(false);
        let report = |_: &'static str, _: u64, _: u64| cancel.store(true, Ordering::Relaxed);
        let note = Default::default();
        let cx = JobContext { backend: &backend, cancel: &cancel, report: &report, note: &note };
        job.run(&cx)
    }

    fn field() -> Arc<ScalarField> {
        let f = topoview_core::synthetic::gaussian_random_field(&[64, 64, 64], 2.0, 1, &Default::default());
        Arc::new(f.unwrap())
    }

    #[test]
    fn every_job_kind_stops_with_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big_256x256x128_uint8.raw");
        std::fs::write(&path, vec![1u8; 256 * 256 * 128]).unwrap();
        let open = cancelled_at_first_report(Open { path, opts: Default::default() });
        assert!(matches!(open, Err(JobError::Cancelled)));
        let generate = cancelled_at_first_report(Generate { dims: vec![128; 3], corr: 2.0, seed: 1 });
        assert!(matches!(generate, Err(JobError::Cancelled)));
        let ecc = cancelled_at_first_report(Ecc { field: field(), opts: EccOptions::default() });
        assert!(matches!(ecc, Err(JobError::Cancelled)));
        let smooth =
            cancelled_at_first_report(Smooth { field: field(), sigma: 2.0, opts: EccOptions::default() });
        assert!(matches!(smooth, Err(JobError::Cancelled)));
        let msc = cancelled_at_first_report(Msc { field: field(), max_bytes: u64::MAX });
        assert!(matches!(msc, Err(JobError::Cancelled)));
        let f = Arc::new(topoview_core::synthetic::noise_u8(&[128, 128, 128]));
        let e = topoview_core::topo::ecc::ecc(&f, &EccOptions::default(), &Default::default()).unwrap();
        let betti =
            cancelled_at_first_report(super::super::betti_jobs::BettiCurves { field: f, ecc: Arc::new(e) });
        assert!(matches!(betti, Err(JobError::Cancelled)));
    }
}
