//! The worker: a thread per lane, so a long job of one lane (a Morse-Smale run, a large file
//! being read) never holds up the others (the ECC under the user's slider). Jobs go in through
//! each lane's channel, events come out through one channel; the worker holds no state the UI
//! can see except through those events.
//!
//! Superseding: every submitted job gets a cancel flag; submitting a job raises the flags of the
//! older jobs of its lane. A lane skips a job whose flag is up before it starts, and a running
//! job stops at its next check, so a burst of slider moves costs one computation.

use super::backend::{Backend, Choice, GpuCount};
use super::{Event, Job, JobContext, JobError, JobId, Lane, Outcome};
use crossbeam_channel::{Receiver, Sender, unbounded};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Called after every event, so a UI can wake up and drain them.
pub type Notify = Box<dyn Fn() + Send + Sync>;

type RunJob = Box<dyn FnOnce(&JobContext) -> Result<Outcome, JobError> + Send>;

struct Submitted {
    id: JobId,
    lane: Lane,
    run: RunJob,
    cancel: Arc<AtomicBool>,
}

/// What every lane thread shares: the backend (opened once, by whichever thread needs it
/// first), the event channel and the UI's wake-up call.
struct Shared {
    backend: OnceLock<Backend>,
    /// The backend in words, once it is open (the UI reads it each frame).
    described: OnceLock<String>,
    choice: Choice,
    gpu_memory: Option<usize>,
    gpus: GpuCount,
    events: Sender<Event>,
    notify: Notify,
}

impl Shared {
    fn backend(&self) -> &Backend {
        self.backend.get_or_init(|| match Backend::with_gpus(self.choice, self.gpu_memory, self.gpus) {
            Ok(b) => b,
            // Asked for CUDA (or more GPUs than there are) without them: say so, and compute
            // on the CPU.
            Err(why) if self.choice == Choice::Cuda => Backend::cpu_because(format!("CUDA asked for: {why}")),
            Err(why) => Backend::cpu_because(why.to_string()),
        })
    }

    fn send(&self, e: Event) {
        // A send fails only once the Worker (the receiver) is gone; nobody is left to tell.
        let _ = self.events.send(e);
        (self.notify)();
    }
}

struct LaneThread {
    jobs: Sender<Submitted>,
    thread: JoinHandle<()>,
}

pub struct Worker {
    shared: Arc<Shared>,
    lanes: HashMap<Lane, LaneThread>,
    events: Receiver<Event>,
    /// The newest job of each lane and its cancel flag.
    latest: HashMap<Lane, (JobId, Arc<AtomicBool>)>,
    next_id: JobId,
    /// Opens the backend at start, so its description arrives before the first job needs it.
    opener: Option<JoinHandle<()>>,
}

impl Worker {
    /// A worker on the best backend (CUDA when usable, else the CPU).
    pub fn spawn(notify: Notify) -> Worker {
        Worker::spawn_on(notify, Choice::Auto, None, GpuCount::default())
    }

    /// A worker on the chosen backend; `gpu_memory` caps the device memory of ECC slabs, which
    /// are shared among `gpus` devices.
    pub fn spawn_on(notify: Notify, choice: Choice, gpu_memory: Option<usize>, gpus: GpuCount) -> Worker {
        let (etx, erx) = unbounded::<Event>();
        let shared = Arc::new(Shared {
            backend: OnceLock::new(),
            described: OnceLock::new(),
            choice,
            gpu_memory,
            gpus,
            events: etx,
            notify,
        });
        let s = shared.clone();
        let opener = std::thread::Builder::new()
            .name("topoview-backend".into())
            .spawn(move || {
                let _ = s.described.set(s.backend().describe());
                // A frame, so that the UI shows it.
                (s.notify)();
            })
            .ok();
        Worker { shared, lanes: HashMap::new(), events: erx, latest: HashMap::new(), next_id: 1, opener }
    }

    /// Queues `job` on its lane, superseding the older jobs of that lane. Returns its id.
    pub fn submit<J: Job>(&mut self, job: J) -> JobId {
        let lane = job.lane();
        self.cancel(lane);
        let id = self.next_id;
        self.next_id += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        self.latest.insert(lane, (id, cancel.clone()));
        let run: RunJob = Box::new(move |cx| job.run(cx).map(Outcome::new));
        let submitted = Submitted { id, lane, run, cancel };
        let lane_thread = match self.lanes.entry(lane) {
            std::collections::hash_map::Entry::Occupied(o) => Some(o.into_mut()),
            std::collections::hash_map::Entry::Vacant(v) => {
                spawn_lane(lane, self.shared.clone()).map(|t| v.insert(t))
            }
        };
        // A send fails only when the lane's thread has died (its loop panicked); the job then
        // fails at once and the next job of the lane starts a new thread.
        let sent = lane_thread.map(|t| t.jobs.send(submitted).is_ok());
        if sent != Some(true) {
            self.lanes.remove(&lane);
            self.shared.send(Event::Failed {
                id,
                lane,
                message: format!("the thread for the {} jobs is not running; submit the job again", lane.0),
            });
        }
        id
    }

    /// Cancels the newest job of `lane`, queued or running.
    pub fn cancel(&mut self, lane: Lane) {
        if let Some((_, flag)) = self.latest.remove(&lane) {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// What runs the jobs, in words ("CPU, 16 threads"); "starting" until the backend is open.
    pub fn backend(&self) -> &str {
        self.shared.described.get().map_or("starting", String::as_str)
    }

    /// The id of the newest job of `lane` that has not finished.
    pub fn pending(&self, lane: Lane) -> Option<JobId> {
        self.latest.get(&lane).map(|(id, _)| *id)
    }

    /// The next event, if one is waiting. Events of superseded jobs are dropped here, so the
    /// caller only sees the current job of each lane.
    pub fn poll(&mut self) -> Option<Event> {
        while let Ok(e) = self.events.try_recv() {
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

    /// Whether every lane's thread is still running (one stops only if its loop panicked;
    /// a job's panic is caught and reported as a failure).
    pub fn alive(&self) -> bool {
        self.lanes.values().all(|t| !t.thread.is_finished())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        for (_, flag) in self.latest.values() {
            flag.store(true, Ordering::Relaxed);
        }
        for (_, t) in self.lanes.drain() {
            drop(t.jobs);
            let _ = t.thread.join();
        }
        if let Some(t) = self.opener.take() {
            let _ = t.join();
        }
    }
}

fn spawn_lane(lane: Lane, shared: Arc<Shared>) -> Option<LaneThread> {
    let (tx, rx) = unbounded::<Submitted>();
    let thread = std::thread::Builder::new()
        .name(format!("topoview-{}", lane.0))
        .spawn(move || {
            for s in rx {
                if s.cancel.load(Ordering::Relaxed) {
                    shared.send(Event::Cancelled { id: s.id, lane: s.lane });
                    continue;
                }
                run(s, &shared);
            }
        })
        .ok()?;
    Some(LaneThread { jobs: tx, thread })
}

/// Sends progress at most every 50 ms so a fast job does not flood the UI.
struct Reporter<'a> {
    id: JobId,
    lane: Lane,
    shared: &'a Shared,
    done: AtomicU64,
    last: Mutex<Instant>,
}

impl Reporter<'_> {
    fn report(&self, stage: &'static str, amount: u64, total: u64) {
        let done = self.done.fetch_add(amount, Ordering::Relaxed) + amount;
        let Ok(mut last) = self.last.try_lock() else { return };
        if last.elapsed() >= Duration::from_millis(50) {
            *last = Instant::now();
            self.shared.send(Event::Progress { id: self.id, lane: self.lane, stage, done, total });
        }
    }
}

fn run(s: Submitted, shared: &Shared) {
    let Submitted { id, lane, run, cancel } = s;
    let start = Instant::now();
    let rep = Reporter {
        id,
        lane,
        shared,
        done: AtomicU64::new(0),
        last: Mutex::new(Instant::now() - Duration::from_secs(1)),
    };
    let report = |stage, amount, total| rep.report(stage, amount, total);
    let note = Mutex::new(None);
    // A bug in a job (or in opening the backend) must not take the lane, and every later job
    // of it, down with it.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let cx = JobContext { backend: shared.backend(), cancel: &cancel, report: &report, note: &note };
        run(&cx)
    }))
    .unwrap_or_else(|p| {
        let what =
            p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(JobError::Failed(format!("internal error: {}", what.unwrap_or_else(|| "panic".into())).into()))
    });
    let note = note.into_inner().unwrap_or_else(|p| p.into_inner());
    let event = match result {
        Ok(outcome) => Event::Done { id, lane, outcome, seconds: start.elapsed().as_secs_f64(), note },
        Err(JobError::Cancelled) => Event::Cancelled { id, lane },
        Err(_) if cancel.load(Ordering::Relaxed) => Event::Cancelled { id, lane },
        Err(JobError::Failed(e)) => Event::Failed { id, lane, message: e.to_string() },
    };
    shared.send(event);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Curve;
    use crate::jobs::{self, Ecc, Open, Smooth, Smoothed};
    use topoview_core::field::{Samples, ScalarField};
    use topoview_core::topo::ecc::EccOptions;

    fn field() -> Arc<ScalarField> {
        let v: Vec<u8> = (0..64 * 64 * 16).map(|i| ((i * 7919) % 251) as u8).collect();
        Arc::new(ScalarField::new(&[64, 64, 16], Samples::U8(v)).unwrap())
    }

    #[test]
    fn a_newer_job_of_a_lane_supersedes_the_older_ones() {
        let mut w = Worker::spawn(Box::new(|| {}));
        let f = field();
        let ids: Vec<JobId> = (1..=5)
            .map(|k| w.submit(Smooth { field: f.clone(), sigma: k as f64, opts: EccOptions::default() }))
            .collect();
        let mut done = Vec::new();
        while let Some(e) = w.wait(Duration::from_secs(60)) {
            match e {
                Event::Done { id, outcome, .. } => {
                    let s = outcome.take::<Smoothed>().ok().expect("a smoothed field");
                    done.push((id, s.sigma))
                }
                Event::Progress { .. } => continue,
                Event::Failed { .. } | Event::Cancelled { .. } => {
                    panic!("unexpected event")
                }
            }
            if w.pending(jobs::SMOOTH).is_none() {
                break;
            }
        }
        // Only the newest job's result reaches the caller.
        assert_eq!(done, vec![(ids[4], 5.0)]);
    }

    #[test]
    fn lanes_do_not_cancel_each_other_and_errors_come_back() {
        let mut w = Worker::spawn(Box::new(|| {}));
        let c = w.submit(Ecc { field: field(), opts: EccOptions::default() });
        let o = w.submit(Open { path: "/no/such/file.nii".into(), opts: Default::default() });
        let mut seen = Vec::new();
        while seen.len() < 2 {
            match w.wait(Duration::from_secs(60)).expect("an event") {
                Event::Done { id, outcome, .. } => {
                    assert!(outcome.take::<Curve>().is_ok());
                    seen.push((id, String::new()))
                }
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

    /// A job that runs until it is cancelled (or 60 s pass), checking like a real analysis.
    struct Spin;

    impl Job for Spin {
        type Output = ();
        fn lane(&self) -> Lane {
            Lane("spin")
        }
        fn run(self, cx: &JobContext) -> Result<(), JobError> {
            let end = Instant::now() + Duration::from_secs(60);
            while Instant::now() < end {
                cx.control(&|_| {}).check()?;
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }
    }

    #[test]
    fn a_lane_finishes_while_a_long_job_of_another_lane_runs() {
        let mut w = Worker::spawn(Box::new(|| {}));
        let long = w.submit(Spin);
        let c = w.submit(Ecc { field: field(), opts: EccOptions::default() });
        loop {
            match w.wait(Duration::from_secs(60)).expect("the ECC finishes while the long job runs") {
                Event::Done { id, .. } => {
                    assert_eq!(id, c);
                    break;
                }
                Event::Progress { .. } => {}
                _ => panic!("unexpected event"),
            }
        }
        assert_eq!(w.pending(Lane("spin")), Some(long), "the long job is still running");
        w.cancel(Lane("spin"));
    }

    #[test]
    fn cancelling_a_running_job_stops_it() {
        let mut w = Worker::spawn(Box::new(|| {}));
        let v: Vec<f32> = (0..256 * 256 * 64).map(|i| (i % 977) as f32).collect();
        let f = Arc::new(ScalarField::new(&[256, 256, 64], Samples::F32(v)).unwrap());
        w.submit(Smooth { field: f, sigma: 4.0, opts: EccOptions::default() });
        w.cancel(jobs::SMOOTH);
        assert!(w.pending(jobs::SMOOTH).is_none());
        // No event of a cancelled job reaches the caller.
        assert!(w.wait(Duration::from_millis(300)).is_none());
    }
}
