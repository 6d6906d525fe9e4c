//! Which backend runs an analysis: CUDA when a device and driver are usable (and the job is one
//! the kernels cover), else all CPU cores; every fallback says why. [`Backend::run`] is the one
//! place that decides: each operation is an [`Op`], its CPU reference and its GPU way.
//!
//! One `Backend` serves every lane of the worker at once. Each thread that uses the GPU gets a
//! handle of its own ([`Gpu::fork`]: the same device and kernels, its own stream and staging
//! buffers), so the lanes' GPU work runs concurrently and no lane waits on another's.

use crate::op::{Devices, Op, Steps};
use std::sync::Arc;
use topoview_core::control::{Cancelled, Control};
use topoview_core::field::ScalarField;
use topoview_core::io::Block;
use topoview_core::topo::betti::{self, Betti, BettiError};
use topoview_core::topo::cracks::{self, CrackError, CrackMap, CrackOptions, Image};
use topoview_core::topo::ecc::{self, Ecc, EccError, EccOptions, NanPolicy};
use topoview_core::topo::msc::{self, Analysis, MscError};
use topoview_core::topo::rips::{self, Barcode, Distances, RipsError, RipsOptions};
use topoview_core::topo::scale_space;
use topoview_core::topo::smooth::{self, SmoothError, Smoothing};
use topoview_gpu::{Gpu, GpuError};

pub use topoview_core::topo::scale_space::SmoothEccError;

/// Which backend runs the work (the command line's `--backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    #[error(
        "the environment variable RAYON_NUM_THREADS={value:?} is not a thread count: 0 (all \
         cores) or 1 to {most} on this machine, or unset it"
    )]
    Environment { value: String, most: usize },
}

/// The most CPU threads a computation may take. Each thread reserves a stack, so thousands
/// are no faster and can exhaust memory: at most 8 per core (and at least 256 allowed).
pub fn most_threads() -> usize {
    8 * std::thread::available_parallelism().map_or(1, |c| c.get()).max(32)
}

/// Whether `n` threads may be asked for.
pub fn check_threads(n: usize) -> Result<(), ThreadsError> {
    let most = most_threads();
    if (1..=most).contains(&n) { Ok(()) } else { Err(ThreadsError::OutOfRange { asked: n, most }) }
}

/// Whether `RAYON_NUM_THREADS`, which sizes the CPU threads when `--threads` does not, holds a
/// count topoview can take (rayon itself would start any number, or fail later and hang).
pub fn check_thread_env() -> Result<(), ThreadsError> {
    let Some(value) = std::env::var_os("RAYON_NUM_THREADS") else { return Ok(()) };
    let value = value.to_string_lossy().into_owned();
    let most = most_threads();
    match value.trim().parse::<usize>() {
        Ok(n) if n <= most => Ok(()),
        _ => Err(ThreadsError::Environment { value, most }),
    }
}

/// Sets the number of CPU worker threads (rayon's global pool) for the rest of the process:
/// once, before the first computation (at most [`most_threads`]).
pub fn set_threads(n: usize) -> Result<(), ThreadsError> {
    check_threads(n)?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| ThreadsError::AlreadySet(e.to_string()))
}

pub struct Backend {
    /// The devices as opened (the first runs every job but the ECC), and handles on them per
    /// thread that has used them.
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
        let gpu_name = gpu.as_ref().map(|g| names(g));
        Ok(Backend { gpu: gpu.map(|g| (g, Default::default())), gpu_name, why_cpu, gpu_memory })
    }

    /// The CPU, for the reason given (shown by [`Backend::describe`]).
    pub fn cpu_because(why: String) -> Backend {
        Backend { gpu: None, gpu_name: None, why_cpu: Some(why), gpu_memory: None }
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

    /// Runs `op` on the GPU when there is one and the op takes its input, else on the CPU; when
    /// the GPU fails (other than by being cancelled), runs the CPU and says why in
    /// [`Ran::fallback`].
    pub fn run<O: Op>(&self, op: &O) -> Result<(O::Output, Ran), O::Error> {
        if let Some(handles) = self.devices() {
            let attempt = match handles {
                Ok(gpus) => op.gpu(&Devices { gpus: &gpus, memory: self.gpu_memory }),
                Err(why) => Some(Err(why)),
            };
            match attempt {
                Some(Ok(out)) => return Ok((out, Ran { on_gpu: true, ..Ran::CPU })),
                Some(Err(GpuError::Cancelled)) => return Err(Cancelled.into()),
                Some(Err(why)) => return Ok((op.cpu()?, Ran::fallen_back(format!("{why}; used the CPU")))),
                None => {}
            }
        }
        Ok((op.cpu()?, Ran::CPU))
    }

    /// This thread's handles on the devices, made on its first use; `None` without a GPU.
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
        let Some(devices) = self.devices() else { return Helped::Nothing };
        // The staging buffers are filled on the global pool, whose threads the CPU's
        // workers give back once they have handed the planes over.
        let sums = devices
            .and_then(|g| topoview_gpu::block_value_sums(&g, block, opts, self.gpu_memory, planes, ctl));
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
        self.run(&EccOp { field, opts, ctl })
    }

    /// The ECC of a field stored as one block in a file, read a slab at a time
    /// ([`ecc::stream`]): equal to [`Backend::ecc`] of the field read whole. Narrow types stream
    /// through the GPUs when there are some (each reading its share of the planes); wider types
    /// stream on the CPU (the GPU's path for them sorts the whole field at once).
    pub fn ecc_block(&self, block: &Block, opts: &EccOptions, ctl: &Control) -> Result<(Ecc, Ran), EccError> {
        self.run(&EccBlockOp { block, opts, ctl })
    }

    /// Smooths `field`, on the GPU when it can (the result is the same bit for bit).
    pub fn smooth(
        &self,
        field: &ScalarField,
        s: &Smoothing,
        ctl: &Control,
    ) -> Result<(ScalarField, Ran), SmoothError> {
        self.run(&SmoothOp { field, s, ctl })
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
        let ((f, e), ran) = self.run(&SmoothEccOp { field, s, opts, ctl })?;
        Ok((f, e, ran))
    }

    /// For each of `sigmas` (> 0), χ at the ascending `grid` of `field` smoothed with σ voxels
    /// (the scale-space's rows): on the GPU the field is uploaded once and only the grid's sums
    /// come back per scale; on the CPU, each smoothed field's exact curve read at the grid
    /// ([`scale_space::chi_on_grid`]). Equal either way.
    pub fn smoothed_chi_on_grid(
        &self,
        field: &ScalarField,
        sigmas: &[f64],
        opts: &EccOptions,
        grid: &[f64],
        ctl: &Control,
    ) -> Result<(Vec<Vec<i64>>, Ran), SmoothEccError> {
        self.run(&ChiOnGridOp { field, sigmas, opts, grid, ctl })
    }

    /// Strength, orientation and scale of every crack of `img` under the Gaussian bank `opts`,
    /// on the GPU when it can be (equal to the CPU's bit for bit).
    pub fn cracks(
        &self,
        img: &Image,
        opts: &CrackOptions,
        ctl: &Control,
    ) -> Result<(CrackMap, Ran), CrackError> {
        self.run(&CracksOp { img, opts, ctl })
    }

    /// The Vietoris-Rips barcode of `d`: the apparent pairs and the listings of columns on the
    /// GPU (Ripser++'s) when it can be, the reductions on the CPU; all on the CPU otherwise.
    /// Equal either way. A GPU that fails part way gives way to the CPU, which starts again.
    pub fn rips(
        &self,
        d: &Distances,
        opts: &RipsOptions,
        ctl: &Control,
    ) -> Result<(Barcode, Ran), RipsError> {
        let (result, ran) = self.run(&RipsOp { d, opts, ctl })?;
        Ok((result?, ran))
    }

    /// The Betti curves of `field` at the thresholds of `ecc` (its ECC): the voxels sorted on the
    /// CPU, then each pass's merges on the GPU (Borůvka) when it can be, on all CPU cores
    /// otherwise. Equal either way.
    pub fn betti(&self, field: &ScalarField, ecc: &Ecc, ctl: &Control) -> Result<(Betti, Ran), BettiError> {
        let plan = betti::Plan::new(field, ecc, ctl)?;
        let (merges, ran) =
            self.run(&BettiMergesOp { plan: &plan, slabs: betti::default_slabs(field), ctl })?;
        Ok((plan.betti(ecc, &merges), ran))
    }

    /// Loads the GPU's Morse-Smale kernels now (nothing without a GPU), so that a caller with
    /// other work first (reading a file) can do it beside; [`Backend::msc`] otherwise loads them
    /// beside its first checks and upload, which is shorter.
    pub fn preload_msc(&self) {
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
        if !self.has_gpu() {
            return Ok((msc::analyse_within(field, ctl, max_bytes)?, Ran::CPU));
        }
        let mut stages = GpuStages { backend: self, field, ctl, device: None, ran: Ran::CPU };
        // (An early error, a field refused, waits for the load: 13-44 ms with the driver's
        // cache warm.) Without a thread the stage loads them itself.
        let analysis = std::thread::scope(|s| {
            let _ =
                std::thread::Builder::new().name("msc kernels".into()).spawn_scoped(s, || self.preload_msc());
            msc::analyse_with(field, ctl, max_bytes, &mut stages)
        })?;
        Ok((analysis, stages.ran))
    }
}

/// The ECC of a field in memory (every device takes its share of the planes).
struct EccOp<'a> {
    field: &'a ScalarField,
    opts: &'a EccOptions,
    ctl: &'a Control<'a>,
}

impl Op for EccOp<'_> {
    type Output = Ecc;
    type Error = EccError;

    fn cpu(&self) -> Result<Ecc, EccError> {
        ecc::ecc(self.field, self.opts, self.ctl)
    }

    fn gpu(&self, d: &Devices) -> Option<Result<Ecc, GpuError>> {
        Some(topoview_gpu::ecc_spread(d.gpus, self.field, self.opts, d.memory, self.ctl).map(|(e, _)| e))
    }
}

/// The ECC of a block file, streamed a slab at a time.
struct EccBlockOp<'a> {
    block: &'a Block,
    opts: &'a EccOptions,
    ctl: &'a Control<'a>,
}

impl Op for EccBlockOp<'_> {
    type Output = Ecc;
    type Error = EccError;

    fn cpu(&self) -> Result<Ecc, EccError> {
        let reader = self.block.reader().map_err(|e| EccError::Read(e.to_string()))?;
        ecc::stream::ecc(&reader, self.opts, self.ctl)
    }

    fn gpu(&self, d: &Devices) -> Option<Result<Ecc, GpuError>> {
        let narrow = self.block.dtype().size() <= 2;
        narrow.then(|| {
            topoview_gpu::ecc_block_spread(d.gpus, self.block, self.opts, d.memory, self.ctl).map(|(e, _)| e)
        })
    }
}

/// Gaussian smoothing.
struct SmoothOp<'a> {
    field: &'a ScalarField,
    s: &'a Smoothing,
    ctl: &'a Control<'a>,
}

impl Op for SmoothOp<'_> {
    type Output = ScalarField;
    type Error = SmoothError;

    fn cpu(&self) -> Result<ScalarField, SmoothError> {
        smooth::smooth(self.field, self.s, self.ctl)
    }

    fn gpu(&self, d: &Devices) -> Option<Result<ScalarField, GpuError>> {
        valid_smoothing(self.field, self.s).then(|| {
            let out = d.first().smooth(self.field, self.s)?;
            self.ctl.tick((self.field.len() * self.field.ndim()) as u64);
            Ok(out)
        })
    }
}

/// Smoothing and the ECC of the result (on the GPU the smoothed field stays there between).
struct SmoothEccOp<'a> {
    field: &'a ScalarField,
    s: &'a Smoothing,
    opts: &'a EccOptions,
    ctl: &'a Control<'a>,
}

impl Op for SmoothEccOp<'_> {
    type Output = (ScalarField, Ecc);
    type Error = SmoothEccError;

    fn cpu(&self) -> Result<(ScalarField, Ecc), SmoothEccError> {
        scale_space::smooth_ecc(self.field, self.s, self.opts, self.ctl)
    }

    fn gpu(&self, d: &Devices) -> Option<Result<(ScalarField, Ecc), GpuError>> {
        valid_smoothing(self.field, self.s).then(|| {
            let out = d.first().smooth_ecc(self.field, self.s, self.opts, self.ctl)?;
            self.ctl.tick((self.field.len() * (self.field.ndim() + 1)) as u64);
            Ok(out)
        })
    }
}

/// The scale-space's rows: χ at a grid of thresholds for each of several scales.
struct ChiOnGridOp<'a> {
    field: &'a ScalarField,
    sigmas: &'a [f64],
    opts: &'a EccOptions,
    grid: &'a [f64],
    ctl: &'a Control<'a>,
}

impl Op for ChiOnGridOp<'_> {
    type Output = Vec<Vec<i64>>;
    type Error = SmoothEccError;

    fn cpu(&self) -> Result<Vec<Vec<i64>>, SmoothEccError> {
        scale_space::chi_on_grid(self.field, self.sigmas, self.opts, self.grid, self.ctl)
    }

    fn gpu(&self, d: &Devices) -> Option<Result<Vec<Vec<i64>>, GpuError>> {
        // NaN under `Reject` is the CPU's error to give; the kernel leaves NaN out.
        let takes = self.opts.nan == NanPolicy::Absent
            && self.grid.len() <= topoview_gpu::grid::GRID_MAX
            && self.sigmas.iter().all(|&s| valid_smoothing(self.field, &Smoothing::voxels(s)));
        takes.then(|| d.first().smoothed_chi_on_grid(self.field, self.sigmas, self.opts, self.grid, self.ctl))
    }
}

/// The inter-pixel crack filter.
struct CracksOp<'a> {
    img: &'a Image,
    opts: &'a CrackOptions,
    ctl: &'a Control<'a>,
}

impl Op for CracksOp<'_> {
    type Output = CrackMap;
    type Error = CrackError;

    fn cpu(&self) -> Result<CrackMap, CrackError> {
        cracks::cracks(self.img, self.opts, self.ctl)
    }

    fn gpu(&self, d: &Devices) -> Option<Result<CrackMap, GpuError>> {
        // Bad input gets the CPU's error, not a fallback note.
        let valid = self.opts.check().is_ok() && cracks::check_image(self.img).is_ok();
        valid.then(|| d.first().cracks(self.img, self.opts, self.ctl))
    }
}

/// A Vietoris-Rips barcode: the apparent pairs and the listings offloaded, the reductions on
/// the CPU. The outer result is the device's; the inner one the barcode's own.
struct RipsOp<'a> {
    d: &'a Distances,
    opts: &'a RipsOptions,
    ctl: &'a Control<'a>,
}

impl Op for RipsOp<'_> {
    type Output = Result<Barcode, RipsError>;
    type Error = RipsError;

    fn cpu(&self) -> Result<Result<Barcode, RipsError>, RipsError> {
        Ok(rips::barcode(self.d, self.opts, self.ctl))
    }

    fn gpu(&self, d: &Devices) -> Option<Result<Result<Barcode, RipsError>, GpuError>> {
        let mut on_gpu = topoview_gpu::RipsOnGpu::new(d.first(), self.ctl);
        let result = rips::barcode_with(self.d, self.opts, &mut on_gpu, self.ctl);
        Some(match on_gpu.failure() {
            Some(e) => Err(e),
            None => Ok(result),
        })
    }
}

/// The merges of the Betti curves' two passes over a plan's sorted voxels.
struct BettiMergesOp<'a> {
    plan: &'a betti::Plan,
    slabs: usize,
    ctl: &'a Control<'a>,
}

impl Op for BettiMergesOp<'_> {
    type Output = betti::Merges;
    type Error = BettiError;

    fn cpu(&self) -> Result<betti::Merges, BettiError> {
        self.plan.merges_on_cpu(self.slabs, self.ctl)
    }

    fn gpu(&self, d: &Devices) -> Option<Result<betti::Merges, GpuError>> {
        Some(d.first().betti_merges(self.plan, self.ctl))
    }
}

/// The Morse-Smale stages of [`Backend::msc`]: on the GPU, each with the CPU's as its fallback.
struct GpuStages<'a> {
    backend: &'a Backend,
    field: &'a ScalarField,
    ctl: &'a Control<'a>,
    /// The gradient's codes on the device, for the labels and the saddle-saddle arcs.
    device: Option<topoview_gpu::DeviceGradient>,
    /// Where the stages ran: on the GPU when the gradient did; why a stage took the CPU (the
    /// labels take it when the gradient did, without a reason of their own).
    ran: Ran,
}

impl GpuStages<'_> {
    /// Adds a later stage's fallback to the reasons said.
    fn fell_back(&mut self, stage: &str, ran: Ran) {
        if let Some(why) = ran.fallback {
            let earlier = self.ran.fallback.take().map_or(String::new(), |e| format!("{e}; "));
            self.ran.fallback = Some(format!("{earlier}{stage}: {why}"));
        }
    }
}

impl msc::Stages for GpuStages<'_> {
    fn gradient(&mut self, order: &msc::order::FieldOrder) -> Result<msc::gradient::Gradient, MscError> {
        let (field, ctl) = (self.field, self.ctl);
        let op = Steps {
            gpu: |d: &Devices| {
                Some(d.first().msc_gradient(field, msc::cell_grid(field)).map(|(gr, dev)| (gr, Some(dev))))
            },
            cpu: || msc::cpu_gradient(field, order, ctl).map(|gr| (gr, None)),
        };
        let ((gradient, device), ran) = self.backend.run(&op)?;
        self.device = device;
        self.ran = Ran { fallback: ran.fallback.map(|why| format!("gradient: {why}")), ..ran };
        Ok(gradient)
    }

    fn labels(
        &mut self,
        g: &msc::gradient::Gradient,
        critical: &[msc::complex::CriticalPoint],
    ) -> Result<msc::complex::Labels, Cancelled> {
        let ctl = self.ctl;
        let cpu = || msc::complex::labels(g, critical, ctl);
        // The codes leave the device with this stage, the last to use them (`labels_last`).
        debug_assert!(self.device.is_none() || self.labels_last(), "the labels come last on the GPU");
        let Some(device) = self.device.take() else { return cpu() };
        let op = Steps { gpu: |d: &Devices| Some(d.first().msc_labels(&device, critical, ctl)), cpu };
        let (labels, ran) = self.backend.run(&op)?;
        self.fell_back("manifold labels", ran);
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
        let ctl = self.ctl;
        let op = Steps {
            gpu: |d: &Devices| Some(d.first().msc_saddle_arcs(g, device, saddles, ctl).map(Some)),
            // The CPU's fallback is the complex's own, once the device's side of the complex is
            // back (`None`).
            cpu: || Ok::<_, Cancelled>(None),
        };
        let (arcs, ran) = self.backend.run(&op)?;
        self.fell_back("saddle-saddle arcs", ran);
        Ok(arcs)
    }
}

fn open_gpus(count: GpuCount) -> Result<Vec<Gpu>, NoGpu> {
    let n = match count {
        GpuCount::Count(n) => Some(n),
        GpuCount::All => None,
    };
    Gpu::open_devices(n).map_err(|e| NoGpu(e.to_string()))
}

/// How many CUDA devices are visible (0 without a driver), so that a `--gpus` count they cannot
/// meet is the user's error.
fn visible_devices() -> usize {
    Gpu::device_count().unwrap_or(0)
}

/// The devices in words: "NVIDIA H100 80GB HBM3", "2 x NVIDIA H200".
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
fn valid_smoothing(field: &ScalarField, s: &Smoothing) -> bool {
    smooth::check(field, s).is_ok() && !smooth::any_folds(field, s)
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
