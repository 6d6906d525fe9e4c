//! A backend opened on a thread of its own while work starts on the CPU. Creating a CUDA
//! context takes 0.2-0.3 s on the H100 and H200 machines, longer than its 16 cores need for the curve of
//! a whole 1 GiB 8-bit file: the command line's streamed ECC starts on every core at once and
//! the GPUs take planes too from when they are ready. Under `--backend auto` the GPU is not even
//! opened for a file the CPU will finish before a GPU could start ([`Opening::deferred`]): a
//! context being made beside 16 busy workers slowed them by 0.1 s.

use super::backend::{Backend, Choice, GpuCount, NoGpu, Ran};
use crossbeam_channel::{Receiver, TryRecvError, bounded};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use topoview_core::control::Control;
use topoview_core::io::Block;
use topoview_core::topo::ecc::stream::{self, Helped, Helper};
use topoview_core::topo::ecc::{Ecc, EccError, EccOptions};

/// Seconds a GPU spends on a file besides its context and the streaming itself: the kernels
/// loaded, the staging pinned, the first copies. On the H200 machine (2026-11-28) the command
/// line took 0.46-0.53 s for a 1 GiB u8 file on the GPU alone, of which the context is about
/// 0.2 s and the streaming 0.06 s; joining the CPU for the last 4-12% of the planes made it
/// 0.42-0.46 s against 0.30-0.33 s on the CPU alone.
const GPU_START_S: f64 = 0.25;

/// Seconds a CUDA context takes to make (0.2-0.3 s on the H100 and H200 machines).
const CONTEXT_S: f64 = 0.2;

/// Seconds the CPU's workers run before their pace says whether to open the GPUs at all.
const PACE_S: f64 = 0.02;

/// A backend being opened (or opened).
pub struct Opening {
    done: OnceLock<Result<Backend, NoGpu>>,
    /// Where the opening thread sends it; locked by whoever takes it from there.
    arriving: Mutex<Option<Receiver<Result<Backend, NoGpu>>>>,
    /// What to open, until it is begun ([`Opening::deferred`]); held while it is being begun.
    asked: Mutex<Option<Asked>>,
}

/// The arguments of [`Backend::with_gpus`].
type Asked = (Choice, Option<usize>, GpuCount);

/// The lock's value even if a thread panicked holding it (every value left is consistent).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Opening {
    /// Opens the backend of `choice` on a thread of its own (on the asking one when no thread
    /// can be started) when something first asks for it: [`Opening::wait`] at once, and
    /// [`Opening::ecc_block`] of a 3D narrow-type field once the CPU's pace says the GPUs could
    /// take over planes before the CPU finishes them.
    pub fn deferred(choice: Choice, gpu_memory: Option<usize>, gpus: GpuCount) -> Opening {
        Opening {
            done: OnceLock::new(),
            arriving: Mutex::new(None),
            asked: Mutex::new(Some((choice, gpu_memory, gpus))),
        }
    }

    /// Starts opening the backend, unless that has begun.
    fn begin(&self) {
        // Held until the receiver is in place: a `wait` meanwhile waits here for it.
        let mut asked = lock(&self.asked);
        let Some((choice, gpu_memory, gpus)) = asked.take() else { return };
        let (send, arriving) = bounded(1);
        let spawned = std::thread::Builder::new().name("gpu-open".into()).spawn(move || {
            // The receiver is gone only when the process is ending.
            let _ = send.send(Backend::with_gpus(choice, gpu_memory, gpus));
        });
        match spawned {
            Ok(_) => *lock(&self.arriving) = Some(arriving),
            Err(_) => {
                let _ = self.done.set(Backend::with_gpus(choice, gpu_memory, gpus));
            }
        }
    }

    /// Whether opening the backend has begun.
    fn begun(&self) -> bool {
        lock(&self.asked).is_none()
    }

    /// A backend already opened (or that could not be).
    pub fn opened(backend: Result<Backend, NoGpu>) -> Opening {
        Opening { done: OnceLock::from(backend), arriving: Mutex::new(None), asked: Mutex::new(None) }
    }

    /// The backend, waiting for it to open.
    pub fn wait(&self) -> &Result<Backend, NoGpu> {
        if let Some(b) = self.done.get() {
            return b;
        }
        self.begin();
        let mut arriving = lock(&self.arriving);
        if let Some(rx) = arriving.take() {
            let b = rx.recv().unwrap_or_else(|_| Err(NoGpu("the thread opening the GPU stopped".into())));
            let _ = self.done.set(b);
        }
        self.done.get().expect("set by this thread or the one that held the lock before")
    }

    /// The backend when it has opened, without waiting (nor beginning to open it).
    pub fn ready(&self) -> Option<&Result<Backend, NoGpu>> {
        if let Some(b) = self.done.get() {
            return Some(b);
        }
        // Held by a thread waiting in `wait`, which will set it.
        let mut arriving = self.arriving.try_lock().ok()?;
        let b = match arriving.as_ref()?.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => Err(NoGpu("the thread opening the GPU stopped".into())),
        };
        *arriving = None;
        let _ = self.done.set(b);
        self.done.get()
    }

    /// Where `ran` ran, in words (see [`Backend::where_ran`]), without waiting for a backend
    /// the work did not use.
    pub fn where_ran(&self, ran: &Ran) -> String {
        match self.ready() {
            Some(Ok(b)) => b.where_ran(ran),
            _ => Ran::cpu_words(ran),
        }
    }

    /// [`Backend::ecc_block`], started on every CPU core at once. For a 3D field of a narrow
    /// type the GPUs take the planes left over from when they are ready, unless the CPU would
    /// finish them sooner (the CPU's workers then stop: the GPUs' staging wants every core);
    /// other fields (wide types; 2D, whose GPU slab is the whole image) wait for the backend.
    pub fn ecc_block(&self, block: &Block, opts: &EccOptions, ctl: &Control) -> Result<(Ecc, Ran), EccError> {
        if block.dtype().size() > 2 || block.dims().len() != 3 {
            return match self.wait() {
                Ok(b) => b.ecc_block(block, opts, ctl),
                // Only a backend that was asked for can fail to open, and its caller has said so.
                Err(_) => Ok((stream::ecc(&reader(block)?, opts, ctl)?, Ran::default())),
            };
        }
        let start = Instant::now();
        let helper: Helper = Box::new(move |planes| {
            // Waits for the backend while there are planes left for it.
            let mut waited = false;
            let backend = loop {
                if planes.all_taken() {
                    return Helped::Nothing;
                }
                if !self.begun() {
                    // Opens the GPUs only when the CPU would need longer for the rest than they
                    // need to start, by the workers' pace so far.
                    let (taken, count) = planes.taken();
                    let t = start.elapsed().as_secs_f64();
                    if taken == 0 || t < PACE_S {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                    let cpu_left = t / taken as f64 * (count - taken) as f64;
                    if cpu_left < CONTEXT_S + GPU_START_S {
                        return Helped::Nothing;
                    }
                    self.begin();
                }
                match self.ready() {
                    Some(Ok(b)) if b.has_gpu() => break b,
                    Some(_) => return Helped::Nothing,
                    None => std::thread::sleep(Duration::from_millis(1)),
                }
                waited = true;
            };
            // A backend that was waited for takes the rest over when the CPU would need longer
            // for it than the GPUs need to start (planes taken stand for planes done: the
            // workers hold a task or two each, a few percent of the planes by then). One open
            // from the start (a batch's later files) takes it all, as the GPU alone would.
            let (taken, count) = planes.taken();
            let cpu_left = start.elapsed().as_secs_f64() / taken.max(1) as f64 * (count - taken) as f64;
            if waited && cpu_left < GPU_START_S {
                return Helped::Nothing;
            }
            // The devices hand the planes over once they are set up (`Planes::hand_over`).
            backend.block_value_sums(block, opts, planes, ctl)
        });
        let (ecc, by) = stream::ecc_helped(&reader(block)?, opts, ctl, helper)?;
        let device = self.ready().and_then(|b| b.as_ref().ok()).map(|b| b.describe());
        let ran = match (by.failed, device) {
            (Some(why), _) => Ran::fallen_back(format!("{why}; used the CPU")),
            (None, Some(d)) if by.planes > 0 => {
                Ran::shared(format!("{d} ({} of {} planes)", by.planes, block.dims()[2]))
            }
            _ => Ran::default(),
        };
        Ok((ecc, ran))
    }
}

fn reader(block: &Block) -> Result<topoview_core::io::BlockReader, EccError> {
    block.reader().map_err(|e| EccError::Read(e.to_string()))
}
