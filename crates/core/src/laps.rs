//! Where a computation's time goes, on standard error when an environment variable is set (the
//! breakdowns in docs/PERFORMANCE.md come from it); nothing is printed otherwise. (The GPU's
//! laps wait for the device's stream when they are printed: `cuda::msc`.)

use std::time::Instant;

pub struct Laps {
    on: bool,
    name: &'static str,
    last: Instant,
}

impl Laps {
    /// Laps printed as `name` when the variable `var` is set.
    pub fn from_env(var: &str, name: &'static str) -> Laps {
        Laps { on: std::env::var_os(var).is_some(), name, last: Instant::now() }
    }

    /// The Morse-Smale pipeline's laps (`TOPOVIEW_MSC_STAGES`).
    pub fn msc(name: &'static str) -> Laps {
        Laps::from_env("TOPOVIEW_MSC_STAGES", name)
    }

    /// Whether laps are printed.
    pub fn on(&self) -> bool {
        self.on
    }

    /// Prints the time since the last lap with `what` (made only when on).
    pub fn lap(&mut self, what: impl FnOnce() -> String) {
        if self.on {
            let now = Instant::now();
            eprintln!("{} {:9.1} ms  {}", self.name, (now - self.last).as_secs_f64() * 1e3, what());
            self.last = now;
        }
    }
}
