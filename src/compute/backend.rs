//! Which backend runs an analysis: CUDA when a device and driver are usable (and the job is one
//! the kernels cover), else all CPU cores; every fallback says why. [`Backend::run`] is the one
//! place that decides: each operation hands it a GPU path and a CPU path.
//!
//! One `Backend` serves every lane of the worker at once. Each thread that uses the GPU gets a
//! handle of its own ([`Gpu::fork`]: the same device and kernels, its own stream and staging
//! buffers), so the lanes' GPU work runs concurrently and no lane waits on another's.

use crate::control::{Cancelled, Control};
#[cfg(feature = "cuda")]
use crate::cuda::{Gpu, GpuError};
use crate::field::ScalarField;
use crate::io::Block;
use crate::topo::betti::{self, Betti, BettiError};
use crate::topo::cracks::{self, CrackError, CrackMap, CrackOptions, Image};
use crate::topo::ecc::{self, Ecc, EccError, EccOptions, NanPolicy};
use crate::topo::msc::{self, Analysis, MscError};
use crate::topo::rips::{self, Barcode, Distances, RipsError, RipsOptions};
use crate::topo::smooth::{self, SmoothError, Smoothing};
#[cfg(feature = "cuda")]
use std::sync::Arc;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Choice {
    /// CUDA when a device is usable, else the CPU.
    #[default]
    Auto,
    /// CUDA, or an error saying why not.
    Cuda,
    Cpu,
}

/// How many GPUs the ECC shares a field's planes among (`--gpus N|all`; default 1). Other
/// jobs run on the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuCount {
    Count(usize),
    /// Every visible device (`CUDA_VISIBLE_DEVICES` chooses which).
    All,
}

impl Default for GpuCount {
    fn default() -> Self {
        GpuCount::Count(1)
    }
}

impl std::str::FromStr for GpuCount {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "all" => Ok(GpuCount::All),
            _ => match s.parse::<usize>() {
                Ok(n) if n > 0 => Ok(GpuCount::Count(n)),
                _ => Err(format!("expected a number of GPUs (1 or more) or 'all', got '{s}'")),
            },
        }
    }
}

/// `--backend cuda` on a machine (or a build) without a usable GPU.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoGpu(pub String);

/// Why the CPU backend's thread count could not be set.
#[derive(Debug, thiserror::Error)]
pub enum ThreadsError {
    #[error("threads must be 1 to {most} on this machine, got {asked}")]
    OutOfRange { asked: usize, most: usize },
    #[error("the CPU threads are already set for this process ({0})")]
    AlreadySet(String),
}

/// Sets the number of CPU worker threads (rayon's global pool) for the rest of the process:
/// once, before the first computation. Each thread reserves a stack, so thousands are no faster
/// and can exhaust memory: at most 8 per core (and at least 256 allowed).
pub fn set_threads(n: usize) -> Result<(), ThreadsError> {
    let most = 8 * std::thread::available_parallelism().map_or(1, |c| c.get()).max(32);
    if !(1..=most).contains(&n) {
        return Err(ThreadsError::OutOfRange { asked: n, most });
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| ThreadsError::AlreadySet(e.to_string()))
}

pub struct Backend {
    /// The devices as opened (the first runs every job but the ECC), and handles on them per
    /// thread that has used them.
    #[cfg(feature = "cuda")]
    gpu: Option<(Vec<Gpu>, GpuHandles)>,
    /// The devices' names, when there are some ("2 x NVIDIA H200").
    gpu_name: Option<String>,
    /// Why the CPU is used (no driver, no device, --backend cpu), when it is.
    why_cpu: Option<String>,
    /// Device memory the ECC may use for a field's slabs (default: 64 MiB, at least three
    /// planes, at most 40% of the free memory).
    pub gpu_memory: Option<usize>,
}

/// Handles on the devices per thread that has used them.
#[cfg(feature = "cuda")]
type GpuHandles = std::sync::Mutex<std::collections::HashMap<std::thread::ThreadId, Arc<Vec<Gpu>>>>;

/// What ran a computation, and why not the GPU when it was the CPU although one is there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ran {
    pub on_gpu: bool,
    pub fallback: Option<String>,
    /// The GPUs that took part of the work beside the CPU, and how much, in words.
    pub shared: Option<String>,
}

impl Ran {
    const CPU: Ran = Ran { on_gpu: false, fallback: None, shared: None };

    /// On the CPU, because the GPU failed: why.
    pub fn fallen_back(why: String) -> Ran {
        Ran { fallback: Some(why), ..Ran::CPU }
    }

    /// On the CPU and on GPUs as `shared` says.
    pub fn shared(shared: String) -> Ran {
        Ran { shared: Some(shared), ..Ran::CPU }
    }

    /// Where a computation that did not run on the GPU alone ran, in words.
    pub fn cpu_words(&self) -> String {
        let cpu = format!("CPU, {} threads", rayon::current_num_threads());
        match &self.shared {
            Some(gpus) => format!("{cpu}, and {gpus}"),
            None => cpu,
        }
    }
}

/// Smoothing followed by the ECC of the result failed.
#[derive(Debug, thiserror::Error)]
pub enum SmoothEccError {
    #[error("smoothing: {0}")]
    Smooth(#[from] SmoothError),
    #[error(transparent)]
    Ecc(#[from] EccError),
}

impl From<Cancelled> for SmoothEccError {
    fn from(c: Cancelled) -> Self {
        SmoothEccError::Ecc(c.into())
    }
}

impl SmoothEccError {
    pub fn is_cancelled(&self) -> bool {
        matches!(
            self,
            SmoothEccError::Smooth(SmoothError::Cancelled) | SmoothEccError::Ecc(EccError::Cancelled)
        )
    }
}

/// The GPU path of an operation: given the device, a result or why not.
#[cfg(feature = "cuda")]
pub type GpuPath<'a, T> = Box<dyn FnOnce(&Gpu) -> Result<T, GpuError> + 'a>;

/// The GPU path of an operation that shares its work among the devices.
#[cfg(feature = "cuda")]
pub type DevicesPath<'a, T> = Box<dyn FnOnce(&[Gpu]) -> Result<T, GpuError> + 'a>;

impl Backend {
    /// The backend of `choice` with one GPU (the first visible).
    pub fn new(choice: Choice, gpu_memory: Option<usize>) -> Result<Backend, NoGpu> {
        Backend::with_gpus(choice, gpu_memory, GpuCount::default())
    }

    /// The backend of `choice` with `gpus` devices for the ECC. Without a usable device,
    /// `auto` takes the CPU; asking for more devices than are visible is an error (a usage
    /// error: under `auto` too, when some are visible).
    pub fn with_gpus(choice: Choice, gpu_memory: Option<usize>, gpus: GpuCount) -> Result<Backend, NoGpu> {
        let (gpu, why_cpu) = match choice {
            Choice::Cpu => (None, Some("--backend cpu".to_string())),
            Choice::Cuda => (Some(open_gpus(gpus)?), None),
            Choice::Auto => match open_gpus(gpus) {
                Ok(g) => (Some(g), None),
                Err(why) if matches!(gpus, GpuCount::Count(n) if (1..n).contains(&visible_devices())) => {
                    return Err(why);
                }
                Err(why) => (None, Some(why.0)),
            },
        };
        #[cfg(feature = "cuda")]
        {
            let gpu_name = gpu.as_ref().map(|g| names(g));
            Ok(Backend { gpu: gpu.map(|g| (g, Default::default())), gpu_name, why_cpu, gpu_memory })
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _: Option<()> = gpu;
            Ok(Backend { gpu_name: None, why_cpu, gpu_memory })
        }
    }

    /// The CPU, for the reason given (shown by [`Backend::describe`]).
    pub fn cpu_because(why: String) -> Backend {
        Backend {
            #[cfg(feature = "cuda")]
            gpu: None,
            gpu_name: None,
            why_cpu: Some(why),
            gpu_memory: None,
        }
    }

    pub fn has_gpu(&self) -> bool {
        self.gpu_name.is_some()
    }

    /// The backend in words: "CUDA: NVIDIA H100 80GB HBM3" or "CPU, 16 threads (no CUDA driver found)".
    pub fn describe(&self) -> String {
        match (&self.gpu_name, &self.why_cpu) {
            (Some(name), _) => format!("CUDA: {name}"),
            (None, Some(why)) => format!("CPU, {} threads ({why})", rayon::current_num_threads()),
            (None, None) => format!("CPU, {} threads", rayon::current_num_threads()),
        }
    }

    /// Why the CPU runs everything (no driver, `--backend cpu`), if it does.
    pub fn why_cpu(&self) -> Option<&str> {
        self.why_cpu.as_deref()
    }

    /// Where a computation that reported `ran` was done: the GPU's name, or the CPU's thread
    /// count (without [`Backend::why_cpu`], which a run says once, not per result).
    pub fn where_ran(&self, ran: &Ran) -> String {
        if ran.on_gpu { self.describe() } else { ran.cpu_words() }
    }

    /// Runs `gpu` on the first device when there is one and `use_gpu` holds, else `cpu`; when
    /// the GPU fails (other than by being cancelled), runs `cpu` and says why in [`Ran::fallback`].
    #[cfg(feature = "cuda")]
    pub fn run<T, E: From<Cancelled>>(
        &self,
        use_gpu: bool,
        gpu: GpuPath<'_, T>,
        cpu: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, Ran), E> {
        self.run_on_all(use_gpu, Box::new(|g: &[Gpu]| gpu(&g[0])), cpu)
    }

    /// [`Backend::run`] for a GPU path given every device.
    #[cfg(feature = "cuda")]
    pub fn run_on_all<T, E: From<Cancelled>>(
        &self,
        use_gpu: bool,
        gpu: DevicesPath<'_, T>,
        cpu: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, Ran), E> {
        if let Some(mine) = self.devices().filter(|_| use_gpu) {
            let result = mine.and_then(|g| gpu(&g));
            return match result {
                Ok(out) => Ok((out, Ran { on_gpu: true, ..Ran::CPU })),
                Err(GpuError::Cancelled) => Err(Cancelled.into()),
                Err(why) => Ok((cpu()?, Ran::fallen_back(format!("{why}; used the CPU")))),
            };
        }
        Ok((cpu()?, Ran::CPU))
    }

    /// This thread's handles on the devices, made on its first use; `None` without a GPU.
    #[cfg(feature = "cuda")]
    fn devices(&self) -> Option<Result<Arc<Vec<Gpu>>, GpuError>> {
        let (roots, handles) = self.gpu.as_ref()?;
        let thread = std::thread::current().id();
        // The map is held only to look up or add this thread's handles, never while they run.
        let mut h = handles.lock().unwrap_or_else(|p| p.into_inner());
        Some(match h.get(&thread) {
            Some(g) => Ok(g.clone()),
            None => roots
                .iter()
                .map(Gpu::fork)
                .collect::<Result<Vec<_>, _>>()
                .map(|g| h.entry(thread).or_insert(Arc::new(g)).clone()),
        })
    }

    /// The GPUs' share of a narrow-type block's planes: those they take from `planes` (see
    /// [`ecc::stream::ecc_helped`]).
    pub fn block_value_sums(
        &self,
        block: &Block,
        opts: &EccOptions,
        planes: &ecc::stream::Planes,
        ctl: &Control,
    ) -> ecc::stream::Helped {
        use ecc::stream::Helped;
        #[cfg(feature = "cuda")]
        {
            let Some(devices) = self.devices() else { return Helped::Nothing };
            // The staging buffers are filled on the global pool, whose threads the CPU's
            // workers give back once they have handed the planes over.
            let sums = devices
                .and_then(|g| crate::cuda::block_value_sums(&g, block, opts, self.gpu_memory, planes, ctl));
            // The helper's thread ends here, and a new one helps with the next file: its
            // handles (streams, pinned staging) go with it rather than pile up per file.
            if let Some((_, handles)) = &self.gpu {
                handles.lock().unwrap_or_else(|p| p.into_inner()).remove(&std::thread::current().id());
            }
            match sums {
                Ok(v) if v.planes > 0 => Helped::Sums(v),
                Ok(_) | Err(GpuError::Cancelled) => Helped::Nothing,
                Err(why) => Helped::Failed(why.to_string()),
            }
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = (block, opts, planes, ctl);
            Helped::Nothing
        }
    }

    /// The ECC of `field`, on the GPU when it can be; the CPU reference otherwise.
    pub fn ecc(&self, field: &ScalarField, opts: &EccOptions, ctl: &Control) -> Result<(Ecc, Ran), EccError> {
        // The kernels leave NaN out; rejecting is the CPU's check (ecc::ecc makes it), made
        // here before the GPU runs (not twice on the CPU: a pass over the field).
        if self.has_gpu() && opts.nan == NanPolicy::Reject {
            let (nan, inf) = ecc::count_non_finite(field);
            if nan + inf > 0 {
                return Err(EccError::NonFinite { nan, inf });
            }
        }
        let cpu = || ecc::ecc(field, opts, ctl);
        #[cfg(feature = "cuda")]
        {
            let gpu = |g: &[Gpu]| Ok(crate::cuda::ecc_spread(g, field, opts, self.gpu_memory, ctl)?.0);
            self.run_on_all(true, Box::new(gpu), cpu)
        }
        #[cfg(not(feature = "cuda"))]
        Ok((cpu()?, Ran::CPU))
    }

    /// The ECC of a field stored as one block in a file, read a slab at a time
    /// ([`ecc::stream`]): equal to [`Backend::ecc`] of the field read whole. Narrow types stream
    /// through the GPUs when there are some (each reading its share of the planes); wider types
    /// stream on the CPU (the GPU's path for them sorts the whole field at once).
    pub fn ecc_block(&self, block: &Block, opts: &EccOptions, ctl: &Control) -> Result<(Ecc, Ran), EccError> {
        let cpu = || {
            let reader = block.reader().map_err(|e| EccError::Read(e.to_string()))?;
            ecc::stream::ecc(&reader, opts, ctl)
        };
        #[cfg(feature = "cuda")]
        {
            let narrow = block.dtype().size() <= 2;
            let gpu = |g: &[Gpu]| Ok(crate::cuda::ecc_block_spread(g, block, opts, self.gpu_memory, ctl)?.0);
            self.run_on_all(narrow, Box::new(gpu), cpu)
        }
        #[cfg(not(feature = "cuda"))]
        Ok((cpu()?, Ran::CPU))
    }

    /// Smooths `field`, on the GPU when it can (the result is the same bit for bit).
    pub fn smooth(
        &self,
        field: &ScalarField,
        s: &Smoothing,
        ctl: &Control,
    ) -> Result<(ScalarField, Ran), SmoothError> {
        let cpu = || smooth::smooth(field, s, ctl);
        #[cfg(feature = "cuda")]
        {
            let gpu = |g: &Gpu| {
                let out = g.smooth(field, s)?;
                ctl.tick((field.len() * field.ndim()) as u64);
                Ok(out)
            };
            self.run(valid_smoothing(field, s), Box::new(gpu), cpu)
        }
        #[cfg(not(feature = "cuda"))]
        Ok((cpu()?, Ran::CPU))
    }

    /// Smooths `field` and computes the ECC of the result; on the GPU the smoothed field stays
    /// there for the ECC (it comes back once, with the curve).
    pub fn smooth_ecc(
        &self,
        field: &ScalarField,
        s: &Smoothing,
        opts: &EccOptions,
        ctl: &Control,
    ) -> Result<(ScalarField, Ecc, Ran), SmoothEccError> {
        let cpu = || -> Result<_, SmoothEccError> {
            let f = smooth::smooth(field, s, ctl)?;
            let e = ecc::ecc(&f, opts, ctl)?;
            Ok((f, e))
        };
        #[cfg(feature = "cuda")]
        let ((f, e), ran) = {
            let gpu = |g: &Gpu| {
                let out = g.smooth_ecc(field, s, opts, ctl)?;
                ctl.tick((field.len() * (field.ndim() + 1)) as u64);
                Ok(out)
            };
            self.run(valid_smoothing(field, s), Box::new(gpu), cpu)?
        };
        #[cfg(not(feature = "cuda"))]
        let ((f, e), ran) = (cpu()?, Ran::CPU);
        Ok((f, e, ran))
    }
}

impl Backend {
    /// For each of `sigmas` (> 0), χ at the ascending `grid` of `field` smoothed with σ voxels
    /// (the scale-space's rows): on the GPU the field is uploaded once and only the grid's sums
    /// come back per scale ([`Gpu::smoothed_chi_on_grid`]); on the CPU, each smoothed field's
    /// exact curve read at the grid. Equal either way.
    pub fn smoothed_chi_on_grid(
        &self,
        field: &ScalarField,
        sigmas: &[f64],
        opts: &EccOptions,
        grid: &[f64],
        ctl: &Control,
    ) -> Result<(Vec<Vec<i64>>, Ran), SmoothEccError> {
        let cpu = || -> Result<_, SmoothEccError> {
            let mut rows = Vec::with_capacity(sigmas.len());
            for &sigma in sigmas {
                let f = smooth::smooth(field, &Smoothing::voxels(sigma), ctl)?;
                let e = ecc::ecc(&f, opts, ctl)?;
                rows.push(grid.iter().map(|&t| super::curve::chi_at(&e, t)).collect());
            }
            Ok(rows)
        };
        #[cfg(feature = "cuda")]
        {
            // NaN under `Reject` is the CPU's error to give; the kernel leaves NaN out.
            let use_gpu = opts.nan == NanPolicy::Absent
                && grid.len() <= crate::cuda::grid::GRID_MAX
                && sigmas.iter().all(|&s| valid_smoothing(field, &Smoothing::voxels(s)));
            let gpu = |g: &Gpu| g.smoothed_chi_on_grid(field, sigmas, opts, grid, ctl);
            self.run(use_gpu, Box::new(gpu), cpu)
        }
        #[cfg(not(feature = "cuda"))]
        Ok((cpu()?, Ran::CPU))
    }
}

impl Backend {
    /// Strength, orientation and scale of every crack of `img` under the Gaussian bank `opts`,
    /// on the GPU when it can be (equal to the CPU's bit for bit).
    pub fn cracks(
        &self,
        img: &Image,
        opts: &CrackOptions,
        ctl: &Control,
    ) -> Result<(CrackMap, Ran), CrackError> {
        let cpu = || cracks::cracks(img, opts, ctl);
        #[cfg(feature = "cuda")]
        {
            // Bad input gets the CPU's error, not a fallback note.
            let valid = opts.check().is_ok() && cracks::check_image(img).is_ok();
            self.run(valid, Box::new(|g: &Gpu| g.cracks(img, opts, ctl)), cpu)
        }
        #[cfg(not(feature = "cuda"))]
        Ok((cpu()?, Ran::CPU))
    }
}

impl Backend {
    /// Loads the GPU's Morse-Smale kernels now (nothing without a GPU), so that a caller with
    /// other work first (reading a file) can do it beside; [`Backend::msc`] otherwise loads them
    /// beside its first checks and upload, which is shorter.
    pub fn preload_msc(&self) {
        #[cfg(feature = "cuda")]
        if let Some((roots, _)) = &self.gpu {
            roots[0].preload_msc();
        }
    }

    /// The Morse-Smale analysis of `field` ([`msc::analyse_within`]): the discrete gradient,
    /// the manifold labels and the saddle-saddle arcs on the GPU when there is one, equal to the
    /// CPU's, the stages on the critical points on all CPU cores; a stage the GPU fails (a
    /// field it cannot hold) takes the CPU, saying why.
    pub fn msc(
        &self,
        field: &ScalarField,
        ctl: &Control,
        max_bytes: u64,
    ) -> Result<(Analysis, Ran), MscError> {
        #[cfg(feature = "cuda")]
        {
            let mut stages = GpuStages { backend: self, field, ctl, device: None, ran: Ran::CPU };
            // (An early error, a field refused, waits for the load: 13-44 ms with the driver's
            // cache warm.) Without a thread the stage loads them itself.
            let analysis = std::thread::scope(|s| {
                let _ = std::thread::Builder::new()
                    .name("msc kernels".into())
                    .spawn_scoped(s, || self.preload_msc());
                msc::analyse_with(field, ctl, max_bytes, &mut stages)
            })?;
            Ok((analysis, stages.ran))
        }
        #[cfg(not(feature = "cuda"))]
        Ok((msc::analyse_within(field, ctl, max_bytes)?, Ran::CPU))
    }
}

/// The Morse-Smale stages of [`Backend::msc`]: on the GPU, each with the CPU's as its fallback.
#[cfg(feature = "cuda")]
struct GpuStages<'a> {
    backend: &'a Backend,
    field: &'a ScalarField,
    ctl: &'a Control<'a>,
    /// The gradient's codes on the device, for the labels and the saddle-saddle arcs.
    device: Option<crate::cuda::DeviceGradient>,
    /// Where the stages ran: on the GPU when the gradient did; why a stage took the CPU (the
    /// labels take it when the gradient did, without a reason of their own).
    ran: Ran,
}

#[cfg(feature = "cuda")]
impl msc::Stages for GpuStages<'_> {
    fn gradient(&mut self, order: &msc::order::FieldOrder) -> Result<msc::gradient::Gradient, MscError> {
        let (field, ctl) = (self.field, self.ctl);
        let gpu = |g: &Gpu| g.msc_gradient(field, msc::cell_grid(field)).map(|(gr, d)| (gr, Some(d)));
        let cpu = || msc::cpu_gradient(field, order, ctl).map(|gr| (gr, None));
        let ((gradient, device), ran) = self.backend.run(true, Box::new(gpu), cpu)?;
        self.device = device;
        self.ran = Ran { fallback: ran.fallback.map(|why| format!("gradient: {why}")), ..ran };
        Ok(gradient)
    }

    fn labels(
        &mut self,
        g: &msc::gradient::Gradient,
        critical: &[msc::complex::CriticalPoint],
    ) -> Result<msc::complex::Labels, Cancelled> {
        let cpu = || msc::complex::labels(g, critical, self.ctl);
        // The codes leave the device with this stage, the last to use them (`labels_last`).
        debug_assert!(self.device.is_none() || self.labels_last(), "the labels come last on the GPU");
        let Some(device) = self.device.take() else { return cpu() };
        let gpu = |gpu: &Gpu| gpu.msc_labels(&device, critical, self.ctl);
        let (labels, ran) = self.backend.run(true, Box::new(gpu), cpu)?;
        if let Some(why) = ran.fallback {
            let earlier = self.ran.fallback.take().map_or(String::new(), |e| format!("{e}; "));
            self.ran.fallback = Some(format!("{earlier}manifold labels: {why}"));
        }
        Ok(labels)
    }

    fn labels_last(&self) -> bool {
        // On the GPU they take one CPU thread, which mostly waits on the device, from
        // persistence and the hierarchy. The labels are then the codes' last use: they take
        // them, where `saddle_arcs` only borrows them.
        self.device.is_some()
    }

    fn saddle_arcs_here(&self) -> bool {
        self.device.is_some()
    }

    fn saddle_arcs(
        &mut self,
        g: &msc::gradient::Gradient,
        saddles: &[u32],
    ) -> Result<Option<Vec<msc::complex::SaddleArc>>, Cancelled> {
        let Some(device) = &self.device else { return Ok(None) };
        let gpu = |gpu: &Gpu| gpu.msc_saddle_arcs(g, device, saddles, self.ctl).map(Some);
        // The CPU's fallback is the complex's own, once the device's side of the complex is back
        // (`None`).
        let (arcs, ran) = self.backend.run(true, Box::new(gpu), || Ok(None))?;
        if let Some(why) = ran.fallback {
            let earlier = self.ran.fallback.take().map_or(String::new(), |e| format!("{e}; "));
            self.ran.fallback = Some(format!("{earlier}saddle-saddle arcs: {why}"));
        }
        Ok(arcs)
    }
}

#[cfg(feature = "cuda")]
fn open_gpus(count: GpuCount) -> Result<Vec<Gpu>, NoGpu> {
    let n = match count {
        GpuCount::Count(n) => Some(n),
        GpuCount::All => None,
    };
    Gpu::open_devices(n).map_err(|e| NoGpu(e.to_string()))
}

#[cfg(not(feature = "cuda"))]
fn open_gpus(_: GpuCount) -> Result<(), NoGpu> {
    Err(NoGpu("this topoview was built without CUDA (the `cuda` feature)".into()))
}

/// How many CUDA devices are visible (0 without a driver), so that a `--gpus` count they cannot
/// meet is the user's error.
fn visible_devices() -> usize {
    #[cfg(feature = "cuda")]
    return Gpu::device_count().unwrap_or(0);
    #[cfg(not(feature = "cuda"))]
    0
}

/// The devices in words: "NVIDIA H100 80GB HBM3", "2 x NVIDIA H200".
#[cfg(feature = "cuda")]
fn names(gpus: &[Gpu]) -> String {
    match gpus {
        [one] => one.name.clone(),
        [first, rest @ ..] if rest.iter().all(|g| g.name == first.name) => {
            format!("{} x {}", gpus.len(), first.name)
        }
        _ => gpus.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(" + "),
    }
}

/// Parameters the GPU path accepts; others go to the CPU, which reports what is wrong.
#[cfg(feature = "cuda")]
fn valid_smoothing(field: &ScalarField, s: &Smoothing) -> bool {
    smooth::check(field, s).is_ok() && !smooth::any_folds(field, s)
}

impl Backend {
    /// The Vietoris-Rips barcode of `d`: the apparent pairs and the listings of columns on the
    /// GPU (Ripser++'s) when it can be, the reductions on the CPU; all on the CPU otherwise. Equal either way. A GPU that
    /// fails part way gives way to the CPU, which starts again.
    pub fn rips(
        &self,
        d: &Distances,
        opts: &RipsOptions,
        ctl: &Control,
    ) -> Result<(Barcode, Ran), RipsError> {
        let cpu = || Ok::<_, RipsError>(rips::barcode(d, opts, ctl));
        #[cfg(feature = "cuda")]
        let (result, ran) = self.run(
            true,
            Box::new(|g: &Gpu| {
                let mut on_gpu = crate::cuda::RipsOnGpu::new(g, ctl);
                let result = rips::barcode_with(d, opts, &mut on_gpu, ctl);
                match on_gpu.failure() {
                    Some(e) => Err(e),
                    None => Ok(result),
                }
            }),
            cpu,
        )?;
        #[cfg(not(feature = "cuda"))]
        let (result, ran) = (cpu()?, Ran::CPU);
        Ok((result?, ran))
    }

    /// The Betti curves of `field` at the thresholds of `ecc` (its ECC): the voxels sorted on the
    /// CPU, then each pass's merges on the GPU (Borůvka) when it can be, on all CPU cores
    /// otherwise. Equal either way.
    pub fn betti(&self, field: &ScalarField, ecc: &Ecc, ctl: &Control) -> Result<(Betti, Ran), BettiError> {
        let plan = betti::Plan::new(field, ecc, ctl)?;
        let cpu = || plan.merges_on_cpu(betti::default_slabs(field), ctl);
        #[cfg(feature = "cuda")]
        let (merges, ran) = self.run(true, Box::new(|g: &Gpu| g.betti_merges(&plan, ctl)), cpu)?;
        #[cfg(not(feature = "cuda"))]
        let (merges, ran) = (cpu()?, Ran::CPU);
        Ok((plan.betti(ecc, &merges), ran))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_counts_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!("all".parse::<GpuCount>(), Ok(GpuCount::All));
        assert_eq!("2".parse::<GpuCount>(), Ok(GpuCount::Count(2)));
        for bad in ["0", "-1", "two", ""] {
            let err = bad.parse::<GpuCount>().unwrap_err();
            assert!(err.contains("1 or more") && err.contains(&format!("'{bad}'")), "{err}");
        }
    }

    #[test]
    fn the_cpu_backend_ignores_the_gpu_count_and_auto_without_a_device_takes_the_cpu() {
        let cpu = Backend::with_gpus(Choice::Cpu, None, GpuCount::Count(8)).unwrap();
        assert!(!cpu.has_gpu());
        // Where no device is visible (CI, this build without CUDA), asking for several is no error.
        if visible_devices() == 0 {
            let auto = Backend::with_gpus(Choice::Auto, None, GpuCount::Count(4)).unwrap();
            assert!(!auto.has_gpu() && auto.why_cpu().is_some());
        }
    }
}
