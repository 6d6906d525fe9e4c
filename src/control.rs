//! Progress reporting and cancellation for long computations, shared by the CLI's progress bars
//! and (later) the viewer's worker thread.

use std::sync::atomic::{AtomicBool, Ordering};

/// What a long computation reports to, and listens to. Both parts are optional.
#[derive(Clone, Copy, Default)]
pub struct Control<'a> {
    /// Called with the amount of work just finished (in the unit the computation documents,
    /// usually voxels); may be called from several threads at once.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// When set, the computation stops at its next check and returns `Cancelled`.
    pub cancel: Option<&'a AtomicBool>,
}

impl Control<'_> {
    pub fn tick(&self, amount: u64) {
        if let Some(p) = self.progress {
            p(amount);
        }
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }
}
