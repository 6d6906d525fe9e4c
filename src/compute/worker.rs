//! The worker thread. Jobs go in through one channel, events come out through another; the
//! worker holds no state the UI can see except through those events.
//!
//! Superseding: every submitted job gets a cancel flag; submitting a job raises the flags of the
//! older jobs of its lane. The worker skips a job whose flag is up before it starts, and a
//! running job stops at its next check, so a burst of slider moves costs one computation.

use super::backend::{Backend, Choice};
use super::{Event, Job, JobId, Lane, Loaded, Outcome, Smoothed, summary::FieldSummary};
use crate::control::Control;
use crate::io;
use crate::topo::smooth;
use crossbeam_channel::{Receiver, Sender, unbounded};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Called after every event, so a UI can wake up and drain them.
pub type Notify = Box<dyn Fn() + Send + Sync>;

struct Submitted {
    id: JobId,
    job: Job,
    cancel: Arc<AtomicBool>,
}

pub struct Worker {
    jobs: Option<Sender<Submitted>>,
    events: Receiver<Event>,
    /// The newest job of each lane and its cancel flag.
    latest: HashMap<Lane, (JobId, Arc<AtomicBool>)>,
    next_id: JobId,
    thread: Option<std::thread::JoinHandle<()>>,
    /// What runs the jobs, in words ("CPU, 16 threads").
    pub backend: String,
}

impl Worker {
    /// A worker on the best backend (CUDA when usable, else the CPU).
    pub fn spawn(notify: Notify) -> Worker {
        Worker::spawn_on(notify, Choice::Auto, None)
    }

    /// A worker on the chosen backend; `gpu_memory` caps the device memory of ECC slabs.
    pub fn spawn_on(notify: Notify, choice: Choice, gpu_memory: Option<usize>) -> Worker {
        let (jtx, jrx) = unbounded::<Submitted>();
        let (etx, erx) = unbounded::<Event>();
        let notify: Arc<Notify> = Arc::new(notify);
        let thread = std::thread::Builder::new()
            .name("topoview-worker".into())
            .spawn(move || {
                // The backend (and its CUDA context) belongs to this thread.
                let (backend, described) = match Backend::new(choice, gpu_memory) {
                    Ok(b) => {
                        let d = b.describe();
                        (b, d)
                    }
                    Err(why) => (
                        Backend::cpu(),
                        format!("CPU, {} threads (CUDA asked for: {why})", rayon::current_num_threads()),
                    ),
                };
                let _ = etx.send(Event::Backend(described));
                notify();
                for s in jrx {
                    if s.cancel.load(Ordering::Relaxed) {
                        let _ = etx.send(Event::Cancelled { id: s.id, lane: s.job.lane() });
                        notify();
                        continue;
                    }
                    run(s, &backend, &etx, &notify);
                }
            })
            .ok();
        let backend = "starting".to_string();
        Worker { jobs: Some(jtx), events: erx, latest: HashMap::new(), next_id: 1, thread, backend }
    }

    /// Queues `job`, superseding the older jobs of its lane. Returns its id.
    pub fn submit(&mut self, job: Job) -> JobId {
        let lane = job.lane();
        self.cancel(lane);
        let id = self.next_id;
        self.next_id += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        self.latest.insert(lane, (id, cancel.clone()));
        if let Some(tx) = &self.jobs {
            // A send fails only when the worker thread has died; the UI then sees no answer
            // for this id, and `alive` says why.
            let _ = tx.send(Submitted { id, job, cancel });
        }
        id
    }

    /// Cancels the newest job of `lane`, queued or running.
    pub fn cancel(&mut self, lane: Lane) {
        if let Some((_, flag)) = self.latest.remove(&lane) {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// The id of the newest job of `lane` that has not finished.
    pub fn pending(&self, lane: Lane) -> Option<JobId> {
        self.latest.get(&lane).map(|(id, _)| *id)
    }

    /// The next event, if one is waiting. Events of superseded jobs are dropped here, so the
    /// caller only sees the current job of each lane.
    pub fn poll(&mut self) -> Option<Event> {
        while let Ok(e) = self.events.try_recv() {
            if let Event::Backend(b) = e {
                self.backend = b;
                continue;
            }
            let current = self.latest.values().any(|(id, _)| *id == e.id());
            if !current {
                continue;
            }
            if !matches!(e, Event::Progress { .. }) {
                self.latest.retain(|_, (id, _)| *id != e.id());
            }
            return Some(e);
        }
        None
    }

    /// Waits up to `timeout` for the next event of a current job (for tests and batch use).
    pub fn wait(&mut self, timeout: Duration) -> Option<Event> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(e) = self.poll() {
                return Some(e);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Whether the worker thread is still running (it stops only if a job panicked).
    pub fn alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        for (_, flag) in self.latest.values() {
            flag.store(true, Ordering::Relaxed);
        }
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sends progress at most every 50 ms so a fast job does not flood the UI.
struct Reporter<'a> {
    id: JobId,
    lane: Lane,
    tx: &'a Sender<Event>,
    notify: &'a Notify,
    done: AtomicU64,
    last: Mutex<Instant>,
}

impl Reporter<'_> {
    fn report(&self, stage: &'static str, amount: u64, total: u64) {
        let done = self.done.fetch_add(amount, Ordering::Relaxed) + amount;
        let Ok(mut last) = self.last.try_lock() else { return };
        if last.elapsed() >= Duration::from_millis(50) {
            *last = Instant::now();
            let _ = self.tx.send(Event::Progress { id: self.id, lane: self.lane, stage, done, total });
            (self.notify)();
        }
    }
}

fn run(s: Submitted, backend: &Backend, tx: &Sender<Event>, notify: &Notify) {
    let Submitted { id, job, cancel } = s;
    let lane = job.lane();
    let start = Instant::now();
    let rep = Reporter {
        id,
        lane,
        tx,
        notify,
        done: AtomicU64::new(0),
        last: Mutex::new(Instant::now() - Duration::from_secs(1)),
    };
    // A bug in a job must not take the worker (and every later job) down with it.
    let mut note = None;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        execute(job, backend, &cancel, &rep, &mut note)
    }))
    .unwrap_or_else(|p| {
        let what =
            p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(format!("internal error: {}", what.unwrap_or_else(|| "panic".into())))
    });
    let event = match result {
        Ok(outcome) => Event::Done { id, lane, outcome, seconds: start.elapsed().as_secs_f64(), note },
        Err(_) if cancel.load(Ordering::Relaxed) => Event::Cancelled { id, lane },
        Err(message) => Event::Failed { id, lane, message },
    };
    let _ = tx.send(event);
    notify();
}

fn execute(
    job: Job,
    backend: &Backend,
    cancel: &AtomicBool,
    rep: &Reporter,
    note: &mut Option<String>,
) -> Result<Outcome, String> {
    let cancelled = || cancel.load(Ordering::Relaxed);
    match job {
        Job::Open { path, opts } => {
            rep.report("reading", 0, 0);
            let field = io::open(&path, &opts).map_err(|e| e.to_string())?;
            if cancelled() {
                return Err("cancelled".into());
            }
            let summary = FieldSummary::of(&field);
            let source = path.display().to_string();
            Ok(Outcome::Loaded(Loaded { source, path: Some(path), field: Arc::new(field), summary }))
        }
        Job::Generate { dims, corr, seed } => {
            rep.report("generating", 0, 0);
            let field = crate::bench::gaussian_random_field(&dims, corr, seed);
            let summary = FieldSummary::of(&field);
            let source = format!(
                "Gaussian random field {}, correlation {corr} voxels, seed {seed}",
                crate::field::dims_string(&dims)
            );
            Ok(Outcome::Loaded(Loaded { source, path: None, field: Arc::new(field), summary }))
        }
        Job::Curve { field, opts } => {
            let total = field.len() as u64;
            let progress = |n: u64| rep.report("ECC", n, total);
            let ctl = Control { progress: Some(&progress), cancel: Some(cancel) };
            let (e, ran) = backend.ecc(&field, &opts, &ctl).map_err(|e| e.to_string())?;
            *note = ran.fallback;
            Ok(Outcome::Curve(Arc::new(e)))
        }
        Job::Smooth { field, sigma, opts } => {
            // Progress: the smoothing passes, then the ECC.
            let total = (field.ndim() as u64 + 1) * field.len() as u64;
            let progress = |n: u64| rep.report("smoothing + ECC", n, total);
            let ctl = Control { progress: Some(&progress), cancel: Some(cancel) };
            let (smoothed, e, ran) =
                backend.smooth_ecc(&field, &smooth::Smoothing::voxels(sigma), &opts, &ctl)?;
            *note = ran.fallback;
            let summary = FieldSummary::of(&smoothed);
            Ok(Outcome::Smoothed(Smoothed { sigma, field: Arc::new(smoothed), summary, ecc: Arc::new(e) }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::{Samples, ScalarField};
    use crate::topo::ecc::EccOptions;

    fn field() -> Arc<ScalarField> {
        let v: Vec<u8> = (0..64 * 64 * 16).map(|i| ((i * 7919) % 251) as u8).collect();
        Arc::new(ScalarField::new(&[64, 64, 16], Samples::U8(v)).unwrap())
    }

    #[test]
    fn a_newer_job_of_a_lane_supersedes_the_older_ones() {
        let mut w = Worker::spawn(Box::new(|| {}));
        let f = field();
        let ids: Vec<JobId> = (1..=5)
            .map(|k| w.submit(Job::Smooth { field: f.clone(), sigma: k as f64, opts: EccOptions::default() }))
            .collect();
        let mut done = Vec::new();
        while let Some(e) = w.wait(Duration::from_secs(60)) {
            match e {
                Event::Done { id, outcome: Outcome::Smoothed(s), .. } => done.push((id, s.sigma)),
                Event::Progress { .. } => continue,
                Event::Done { .. } | Event::Failed { .. } | Event::Cancelled { .. } | Event::Backend(_) => {
                    panic!("unexpected event")
                }
            }
            if w.pending(Lane::Smooth).is_none() {
                break;
            }
        }
        // Only the newest job's result reaches the caller.
        assert_eq!(done, vec![(ids[4], 5.0)]);
    }

    #[test]
    fn lanes_do_not_cancel_each_other_and_errors_come_back() {
        let mut w = Worker::spawn(Box::new(|| {}));
        let c = w.submit(Job::Curve { field: field(), opts: EccOptions::default() });
        let o = w.submit(Job::Open { path: "/no/such/file.nii".into(), opts: Default::default() });
        let mut seen = Vec::new();
        while seen.len() < 2 {
            match w.wait(Duration::from_secs(60)).expect("an event") {
                Event::Done { id, outcome: Outcome::Curve(_), .. } => seen.push((id, String::new())),
                Event::Failed { id, message, .. } => seen.push((id, message)),
                Event::Progress { .. } => {}
                _ => panic!("unexpected event"),
            }
        }
        seen.sort();
        assert_eq!(seen[0].0, c);
        assert_eq!(seen[1].0, o);
        assert!(seen[1].1.contains("/no/such/file.nii"), "{}", seen[1].1);
    }

    #[test]
    fn cancelling_a_running_job_stops_it() {
        let mut w = Worker::spawn(Box::new(|| {}));
        let v: Vec<f32> = (0..256 * 256 * 64).map(|i| (i % 977) as f32).collect();
        let f = Arc::new(ScalarField::new(&[256, 256, 64], Samples::F32(v)).unwrap());
        w.submit(Job::Smooth { field: f, sigma: 4.0, opts: EccOptions::default() });
        w.cancel(Lane::Smooth);
        assert!(w.pending(Lane::Smooth).is_none());
        // No event of a cancelled job reaches the caller.
        assert!(w.wait(Duration::from_millis(300)).is_none());
    }
}
