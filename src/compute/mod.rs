//! The compute side of the viewer: which backend runs the work, the jobs it takes, the events it
//! sends back, and the worker thread that owns it ([`worker`]). The UI speaks to it only through
//! messages, so the UI thread never waits on compute or on file reading.

pub mod backend;
pub mod summary;
pub mod worker;

use crate::field::ScalarField;
use crate::io::OpenOptions;
use crate::topo::ecc::{Ecc, EccOptions};
use std::path::PathBuf;
use std::sync::Arc;

pub use summary::FieldSummary;
pub use worker::Worker;

/// Jobs of one lane supersede each other: submitting a job cancels the lane's older ones, so
/// dragging a slider never queues stale work. Jobs of different lanes do not interfere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// Opening a file or generating an example field.
    Load,
    /// The ECC of the loaded field.
    Curve,
    /// Smoothing the loaded field, then its ECC.
    Smooth,
}

pub type JobId = u64;

pub enum Job {
    Open {
        path: PathBuf,
        opts: OpenOptions,
    },
    /// A seeded Gaussian random field (white noise smoothed with `corr` voxels), for teaching.
    Generate {
        dims: Vec<usize>,
        corr: f64,
        seed: u64,
    },
    Curve {
        field: Arc<ScalarField>,
        opts: EccOptions,
    },
    Smooth {
        field: Arc<ScalarField>,
        sigma: f64,
        opts: EccOptions,
    },
}

impl Job {
    pub fn lane(&self) -> Lane {
        match self {
            Job::Open { .. } | Job::Generate { .. } => Lane::Load,
            Job::Curve { .. } => Lane::Curve,
            Job::Smooth { .. } => Lane::Smooth,
        }
    }
}

/// A field ready to show, with what the views need to know about it.
pub struct Loaded {
    /// The file's path, or a description of a generated field.
    pub source: String,
    pub path: Option<PathBuf>,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
}

pub struct Smoothed {
    pub sigma: f64,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
    pub ecc: Arc<Ecc>,
}

pub enum Outcome {
    Loaded(Loaded),
    Curve(Arc<Ecc>),
    Smoothed(Smoothed),
}

pub enum Event {
    /// `done` of `total` units of the job's current `stage`.
    Progress {
        id: JobId,
        lane: Lane,
        stage: &'static str,
        done: u64,
        total: u64,
    },
    /// `note`: why the CPU ran (part of) a job the GPU could not, when it did.
    Done {
        id: JobId,
        lane: Lane,
        outcome: Outcome,
        seconds: f64,
        note: Option<String>,
    },
    Failed {
        id: JobId,
        lane: Lane,
        message: String,
    },
    Cancelled {
        id: JobId,
        lane: Lane,
    },
    /// The worker's backend, in words (sent once, when the worker has opened it).
    Backend(String),
}

impl Event {
    pub fn id(&self) -> JobId {
        match self {
            Event::Progress { id, .. }
            | Event::Done { id, .. }
            | Event::Failed { id, .. }
            | Event::Cancelled { id, .. } => *id,
            Event::Backend(_) => 0,
        }
    }
}
