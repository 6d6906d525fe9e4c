//! The compute side of the viewer: which backend runs the work ([`backend`]), the analyses it
//! runs as jobs ([`jobs`]), and the worker that runs them off the UI thread ([`worker`]). The UI
//! speaks to it only through messages, so the UI thread never waits on compute or on file
//! reading.
//!
//! An analysis becomes a job by implementing [`Job`]: its lane, and a `run` that takes the
//! backend and a [`Control`] and returns a typed output or a [`JobError`]. The worker runs each
//! lane on a thread of its own, so lanes never wait on each other; the output comes back as an
//! [`Outcome`] that the UI takes by type.

pub mod backend;
pub mod bench;
pub mod betti_jobs;
pub mod curve;
pub mod jobs;
pub mod layers;
pub mod msc_scene;
pub mod op;
pub mod opening;
pub mod rips;
pub mod scale_space;
pub mod summary;
pub mod worker;

use std::any::Any;
use topoview_core::control::{Cancelled, Control};

pub use curve::Curve;
pub use jobs::{Ecc, Generate, Loaded, Msc, Open, Smooth, Smoothed};
pub use msc_scene::MscScene;
pub use summary::FieldSummary;
pub use worker::Worker;

/// Jobs of one lane supersede each other: submitting a job cancels the lane's older ones, so
/// dragging a slider never queues stale work. Lanes run concurrently and never cancel each
/// other. A lane is named by the job kinds that share it (see `Job::lane`; the viewer's lanes
/// are the constants in [`jobs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lane(pub &'static str);

pub type JobId = u64;

/// A long-running analysis the worker can run.
pub trait Job: Send + 'static {
    /// What the job gives back, taken by the UI with [`Outcome::take`].
    type Output: Send + 'static;
    /// The lane the job runs in.
    fn lane(&self) -> Lane;
    /// Runs the job. `cx` has the backend, progress and cancellation; the job checks for
    /// cancellation at least every ~50 ms of work.
    fn run(self, cx: &JobContext) -> Result<Self::Output, JobError>;
}

/// Why a job gave no output.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

impl JobError {
    /// Cancelled when `cancelled`, else a failure with `e`'s message.
    pub fn from_error(cancelled: bool, e: impl std::error::Error + Send + Sync + 'static) -> JobError {
        if cancelled { JobError::Cancelled } else { JobError::Failed(Box::new(e)) }
    }
}

impl From<Cancelled> for JobError {
    fn from(_: Cancelled) -> Self {
        JobError::Cancelled
    }
}

impl From<topoview_core::io::ReadError> for JobError {
    fn from(e: topoview_core::io::ReadError) -> Self {
        JobError::from_error(matches!(e, topoview_core::io::ReadError::Cancelled { .. }), e)
    }
}

impl From<topoview_core::topo::ecc::EccError> for JobError {
    fn from(e: topoview_core::topo::ecc::EccError) -> Self {
        JobError::from_error(matches!(e, topoview_core::topo::ecc::EccError::Cancelled), e)
    }
}

impl From<backend::SmoothEccError> for JobError {
    fn from(e: backend::SmoothEccError) -> Self {
        JobError::from_error(e.is_cancelled(), e)
    }
}

impl From<topoview_core::synthetic::RandomFieldError> for JobError {
    fn from(e: topoview_core::synthetic::RandomFieldError) -> Self {
        use topoview_core::synthetic::RandomFieldError;
        let cancelled =
            matches!(e, RandomFieldError::Smooth(topoview_core::topo::smooth::SmoothError::Cancelled));
        JobError::from_error(cancelled, e)
    }
}

impl From<topoview_core::topo::msc::MscError> for JobError {
    fn from(e: topoview_core::topo::msc::MscError) -> Self {
        JobError::from_error(matches!(e, topoview_core::topo::msc::MscError::Cancelled(_)), e)
    }
}

impl From<topoview_core::topo::betti::BettiError> for JobError {
    fn from(e: topoview_core::topo::betti::BettiError) -> Self {
        JobError::from_error(matches!(e, topoview_core::topo::betti::BettiError::Cancelled), e)
    }
}

/// What a running job sees: the backend, and its progress and cancellation.
pub struct JobContext<'a> {
    pub backend: &'a backend::Backend,
    pub(crate) cancel: &'a std::sync::atomic::AtomicBool,
    pub(crate) report: &'a (dyn Fn(&'static str, u64, u64) + Sync),
    pub(crate) note: &'a std::sync::Mutex<Option<String>>,
}

impl<'a> JobContext<'a> {
    /// Reports `done` more units of `total` in the job's `stage`.
    pub fn report(&self, stage: &'static str, done: u64, total: u64) {
        (self.report)(stage, done, total)
    }

    /// A [`Control`] for a computation that ticks through `progress` (made with
    /// [`JobContext::report`]) and stops when the job is cancelled.
    pub fn control<'b>(&'b self, progress: &'b (dyn Fn(u64) + Sync)) -> Control<'b> {
        Control { progress: Some(progress), cancel: Some(self.cancel) }
    }

    /// Leaves a note for the user with the result (e.g. why the CPU ran instead of the GPU).
    pub fn note(&self, note: Option<String>) {
        if let Some(n) = note {
            *self.note.lock().unwrap_or_else(|p| p.into_inner()) = Some(n);
        }
    }
}

/// A finished job's output, of the type its [`Job::Output`] names.
pub struct Outcome(Box<dyn Any + Send>);

impl Outcome {
    pub fn new<T: Send + 'static>(value: T) -> Outcome {
        Outcome(Box::new(value))
    }

    /// The output as a `T`, or the outcome back when it holds another type.
    pub fn take<T: 'static>(self) -> Result<T, Outcome> {
        self.0.downcast::<T>().map(|b| *b).map_err(Outcome)
    }
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
}

impl Event {
    pub fn id(&self) -> JobId {
        match self {
            Event::Progress { id, .. }
            | Event::Done { id, .. }
            | Event::Failed { id, .. }
            | Event::Cancelled { id, .. } => *id,
        }
    }
}
