//! Progress reporting and cancellation for long computations, shared by the CLI's progress bars
//! and the viewer's worker lanes. Every long-running operation (reading a file, the ECC,
//! smoothing, the Morse-Smale stages) takes a [`Control`] and, when its flag is raised, stops at
//! its next check (at most ~50 ms of work later) with [`Cancelled`] inside its own error type.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};

/// The error of a computation stopped by its [`Control`]; each module's error type has a
/// variant that wraps it, so callers match on a type, never on a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

/// What a long computation reports to, and listens to. Both parts are optional.
#[derive(Clone, Copy, Default)]
pub struct Control<'a> {
    /// Called with the amount of work just finished (in the unit the computation documents,
    /// usually voxels); may be called from several threads at once.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// When set, the computation stops at its next check and returns `Cancelled`.
    pub cancel: Option<&'a AtomicBool>,
}

impl<'a> Control<'a> {
    pub fn tick(&self, amount: u64) {
        if let Some(p) = self.progress {
            p(amount);
        }
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// `Err(Cancelled)` once the flag is up: `ctl.check()?` at each check point.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.cancelled() { Err(Cancelled) } else { Ok(()) }
    }

    /// `r`, reporting each read's bytes as progress and failing reads once cancelled, so a
    /// reader that only sees an `io::Read` is cancellable between any two reads.
    pub fn watch<R: Read>(&self, r: R) -> Watched<'a, R> {
        Watched { inner: r, ctl: *self, ticks: true }
    }

    /// `r`, failing reads once cancelled but reporting nothing: for a decompressor over a
    /// watched file, whose output can be a thousand times its input (the file's bytes are the
    /// progress), so that a highly compressed file is checked as often as a plain one.
    pub fn guard<R: Read>(&self, r: R) -> Watched<'a, R> {
        Watched { inner: r, ctl: *self, ticks: false }
    }
}

/// A reader under a [`Control`] (see [`Control::watch`]).
pub struct Watched<'a, R> {
    inner: R,
    ctl: Control<'a>,
    ticks: bool,
}

impl<R: Read> Read for Watched<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.ctl.cancelled() {
            return Err(std::io::Error::other(Cancelled));
        }
        // At most 1 MiB a read, so a caller asking for a whole volume at once still passes a
        // check every few milliseconds.
        let n = buf.len().min(1 << 20);
        let n = self.inner.read(&mut buf[..n])?;
        if self.ticks {
            self.ctl.tick(n as u64);
        }
        Ok(n)
    }
}

impl<R: std::io::Seek> std::io::Seek for Watched<'_, R> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watched_reader_stops_once_cancelled() {
        let flag = AtomicBool::new(false);
        let ctl = Control { progress: None, cancel: Some(&flag) };
        let mut r = ctl.watch(&[1u8, 2, 3, 4][..]);
        let mut b = [0u8; 2];
        assert_eq!(r.read(&mut b).ok(), Some(2));
        flag.store(true, Ordering::Relaxed);
        assert!(r.read(&mut b).is_err());
        assert_eq!(ctl.check(), Err(Cancelled));
    }
}
