//! Where a barcode's time goes, on standard error when `TOPOVIEW_RIPS_STAGES` is set (the
//! breakdowns in docs/PERFORMANCE.md come from it); nothing is measured otherwise.

use std::time::{Duration, Instant};

pub struct Stages {
    on: bool,
    /// The last mark (a stage's start) and the last lap (a part's within a stage).
    mark: Instant,
    lap: Instant,
}

impl Stages {
    pub fn from_env() -> Stages {
        let now = Instant::now();
        Stages { on: std::env::var_os("TOPOVIEW_RIPS_STAGES").is_some(), mark: now, lap: now }
    }

    /// Whether stages are timed.
    pub fn on(&self) -> bool {
        self.on
    }

    /// The time since the last lap or mark, or zero when off.
    pub fn lap(&mut self) -> Duration {
        if !self.on {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let lap = now - self.lap;
        self.lap = now;
        lap
    }

    /// Prints the time since the last mark with `what` (made only when on).
    pub fn mark(&mut self, what: impl FnOnce() -> String) {
        if self.on {
            let now = Instant::now();
            let ms = (now - self.mark).as_secs_f64() * 1e3;
            (self.mark, self.lap) = (now, now);
            eprintln!("rips stage {ms:9.1} ms  {}", what());
        }
    }
}
