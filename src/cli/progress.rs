//! Progress bars that appear only once work has run for a second, so quick commands print
//! nothing but their results.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub struct Progress {
    multi: MultiProgress,
    start: Instant,
    shown: AtomicBool,
}

impl Progress {
    pub fn new() -> Self {
        Progress {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
            start: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    /// A bar of `total` units (voxels, files) labelled `label`.
    pub fn bar(&self, total: u64, label: &str) -> ProgressBar {
        let pb = self.multi.add(ProgressBar::new(total));
        pb.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:40}] {percent:>3}% {msg} ({eta} left)")
                .expect("valid template")
                .progress_chars("=> "),
        );
        pb.set_prefix(label.to_string());
        pb
    }

    /// Advances `pb`, making the bars visible once a second has passed.
    pub fn inc(&self, pb: &ProgressBar, n: u64) {
        pb.inc(n);
        if !self.shown.load(Ordering::Relaxed) && self.start.elapsed() > Duration::from_secs(1) {
            self.shown.store(true, Ordering::Relaxed);
            self.multi.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Prints a line above the bars (or plainly, when they are hidden).
    pub fn println(&self, line: &str) {
        if self.shown.load(Ordering::Relaxed) {
            let _ = self.multi.println(line);
        } else {
            say!("{line}");
        }
    }
}
