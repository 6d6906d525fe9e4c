//! The command line: `topoview ecc | info | msc | rips | cracks | bench` (`ecc --scale-space` for
//! χ over threshold and σ), each a module here calling the core and the compute crate's backend.
//! Plain `topoview [FILE]` opens the viewer (on the bundled demo volume when no file is given),
//! when built with it.

/// Writes a line to standard output. A failure (a full disk) is an error of the command; a
/// closed pipe ends the process quietly (SIGPIPE, see `main`), as it ends `cat` or `ls`.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)
            .map_err(|e| anyhow::anyhow!("cannot write to standard output: {e}"))
    }};
}

/// Writes a line to standard error; when even that fails there is nobody left to tell.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

mod bench;
mod cracks;
mod ecc;
mod info;
mod msc;
mod progress;
mod rips;
mod scale_space;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use topoview_compute::backend::Choice;
use topoview_core::field::Dtype;
use topoview_core::io::{Endian, OpenOptions, RawSpec};

#[derive(Parser, Debug)]
#[command(
    name = "topoview",
    version,
    about = "The topology of images and volumes: Euler characteristic curves of 2D images and 3D volumes"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// A file to open in the viewer (default: the bundled MNI152 brain template).
    file: Option<PathBuf>,
    #[command(flatten)]
    view: ViewArgs,
}

/// Viewer options (raw-file layout as for the subcommands).
#[derive(Args, Debug)]
struct ViewArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// Restore a session saved from the viewer (File > Save session…): its field, settings,
    /// threshold, σ, window, camera and simplification level.
    #[arg(long, value_name = "FILE", conflicts_with = "file")]
    session: Option<PathBuf>,
    /// A volume to show over the file, resampled to its grid through both affines (a
    /// statistical map over an anatomy, a label map over an image); repeat for more.
    #[arg(long, value_name = "FILE")]
    layer: Vec<PathBuf>,
    /// Benchmark: scroll the axial slice for N frames, print frame times, quit.
    #[arg(long, value_name = "N", hide = true)]
    bench_frames: Option<usize>,
    /// Benchmark: then smooth with this sigma and time frames until the new curve arrives.
    #[arg(long, value_name = "SIGMA", hide = true, requires = "bench_frames")]
    bench_sigma: Option<f64>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Euler characteristic curves of one or more files.
    Ecc(ecc::EccArgs),
    /// Dims, type, spacing, value range, distinct values and memory of a file.
    Info(info::InfoArgs),
    /// Morse-Smale complex: critical points, arcs, manifolds and persistence diagram.
    Msc(msc::MscArgs),
    /// Vietoris-Rips persistence barcodes of a point cloud or distance matrix (as Ripser).
    Rips(rips::RipsArgs),
    /// Edge strength on the cracks between pixels (inter-pixel filtering), as float32 TIFFs.
    Cracks(cracks::CracksArgs),
    /// Throughput of the ECC and smoothing on synthetic fields.
    Bench(bench::BenchArgs),
}

/// Gaussian smoothing before an analysis (`ecc` and `msc` take the same options).
#[derive(Args, Debug, Clone)]
pub struct SmoothArgs {
    /// Gaussian smoothing first, sigma in voxels (or physical units with --sigma-units).
    #[arg(long, value_name = "SIGMA", allow_negative_numbers = true)]
    pub smooth: Option<f64>,
    #[arg(long, default_value = "voxels", value_parser = ["voxels", "physical"])]
    pub sigma_units: String,
    /// Kernel radius in sigmas.
    #[arg(long, default_value_t = topoview_core::topo::smooth::Smoothing::DEFAULT_TRUNCATE, allow_negative_numbers = true)]
    pub truncate: f64,
}

impl SmoothArgs {
    pub fn smoothing(&self) -> Option<topoview_core::topo::smooth::Smoothing> {
        use topoview_core::topo::smooth::{SigmaUnits, Smoothing};
        self.smooth.map(|sigma| Smoothing {
            sigma,
            units: if self.sigma_units == "physical" { SigmaUnits::Physical } else { SigmaUnits::Voxels },
            truncate: self.truncate,
        })
    }
}

/// How to read input files; the raw options apply to headerless files.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Read the files as headerless raw samples with these dims (x fastest), e.g. 256x256x128.
    #[arg(long, value_name = "XxYxZ", requires = "dtype")]
    pub dims: Option<String>,
    /// Raw sample type: u8, i8, u16, i16, u32, i32, f32, f64.
    #[arg(long, value_parser = parse_dtype, requires = "dims")]
    pub dtype: Option<Dtype>,
    /// Raw byte order.
    #[arg(long, value_parser = ["little", "big"], default_value = "little")]
    pub endian: String,
    /// Raw header bytes to skip.
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub offset: u64,
    /// Volume of a 4D NIfTI file to read (default 0).
    #[arg(long)]
    pub volume: Option<usize>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// `--backend`: the compute crate's [`Choice`], as the command line spells it (the compute crate
/// knows no argument parser).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// CUDA when a device is usable, else the CPU.
    Auto,
    /// CUDA, or an error saying why not.
    Cuda,
    Cpu,
}

impl From<BackendChoice> for Choice {
    fn from(c: BackendChoice) -> Choice {
        match c {
            BackendChoice::Auto => Choice::Auto,
            BackendChoice::Cuda => Choice::Cuda,
            BackendChoice::Cpu => Choice::Cpu,
        }
    }
}

/// Where the ECC and smoothing run.
#[derive(Args, Debug, Clone)]
pub struct BackendArgs {
    /// auto: CUDA when a device is usable, else all CPU cores; cuda: fail if no device; cpu.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// GPU memory the ECC may use for a field's slabs (e.g. 256M, 2G); larger fields stream
    /// through it in slabs. Default: 64 MiB (at least three planes), at most 40% of the free memory.
    #[arg(long, value_name = "LIMIT", value_parser = topoview_core::mem::parse_size)]
    pub gpu_memory: Option<usize>,
    /// GPUs the ECC shares a field's planes among: a number, or all (those CUDA_VISIBLE_DEVICES
    /// shows). Other jobs run on the first.
    #[arg(long, value_name = "N|all", default_value = "1")]
    pub gpus: topoview_compute::backend::GpuCount,
}

impl BackendArgs {
    pub fn open(&self) -> anyhow::Result<topoview_compute::backend::Backend> {
        Ok(topoview_compute::backend::Backend::with_gpus(self.backend.into(), self.gpu_memory, self.gpus)?)
    }

    /// [`BackendArgs::open`] under `--backend auto` with one GPU, where opening cannot fail
    /// (without a GPU it is the CPU): deferred until something asks for it, then on a thread of
    /// its own, so work can start on the CPU meanwhile (see [`topoview_compute::opening::Opening::deferred`]); otherwise
    /// opened here, its error given now.
    pub fn opening(&self) -> anyhow::Result<topoview_compute::opening::Opening> {
        use topoview_compute::backend::GpuCount;
        use topoview_compute::opening::Opening;
        Ok(if self.backend == BackendChoice::Auto && self.gpus == GpuCount::Count(1) {
            Opening::deferred(self.backend.into(), self.gpu_memory, self.gpus)
        } else {
            Opening::opened(Ok(self.open()?))
        })
    }

    /// Without a GPU under `--backend auto`, says why once per run, when the first result has
    /// been computed (each result then names only the CPU it ran on; a file that cannot be read
    /// gets its error alone).
    pub fn note_cpu(&self, backend: &topoview_compute::backend::Backend, progress: &progress::Progress) {
        use std::sync::atomic::{AtomicBool, Ordering};
        static SAID: AtomicBool = AtomicBool::new(false);
        if self.backend == BackendChoice::Auto
            && let Some(why) = backend.why_cpu()
            && !SAID.swap(true, Ordering::Relaxed)
        {
            progress.println(&format!(
                "note: {why}: computing on the CPU, {} threads",
                rayon::current_num_threads()
            ));
        }
    }
}

fn parse_dtype(s: &str) -> Result<Dtype, String> {
    Dtype::parse(s).ok_or_else(|| format!("unknown dtype '{s}' (u8, i8, u16, i16, u32, i32, f32, f64)"))
}

impl InputArgs {
    pub fn open_options(&self) -> anyhow::Result<OpenOptions> {
        let raw = match (&self.dims, self.dtype) {
            (Some(d), Some(dtype)) => Some(RawSpec {
                dims: topoview_core::io::raw::parse_dims(d).map_err(anyhow::Error::msg)?,
                dtype,
                endian: if self.endian == "big" { Endian::Big } else { Endian::Little },
                offset: self.offset,
            }),
            _ => None,
        };
        Ok(OpenOptions { raw, volume: self.volume })
    }

    pub fn init_threads(&self) -> anyhow::Result<()> {
        if let Some(n) = self.threads {
            use topoview_compute::backend::{ThreadsError, set_threads};
            set_threads(n).map_err(|e| match e {
                ThreadsError::OutOfRange { .. } => anyhow::anyhow!("--{e}"),
                e => e.into(),
            })?;
        }
        Ok(())
    }
}

pub fn main() -> ExitCode {
    let launched = std::time::Instant::now();
    // Rust ignores SIGPIPE, which turns `topoview info a b | head -1` into a panic on the next
    // print; the default action ends the process quietly, as for every other Unix tool.
    #[cfg(unix)]
    // SAFETY: resetting a signal's disposition to the default, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    remove_temporaries_on_signals();
    let cli = Cli::parse();
    // Before any computation starts rayon's threads (`--threads` sizes them itself later).
    if let Err(e) = topoview_compute::backend::check_thread_env() {
        say!("topoview: {e}");
        return ExitCode::FAILURE;
    }
    let result = match &cli.command {
        Some(Command::Ecc(a)) => ecc::run(a),
        Some(Command::Info(a)) => info::run(a),
        Some(Command::Msc(a)) => msc::run(a),
        Some(Command::Cracks(a)) => cracks::run(a),
        Some(Command::Rips(a)) => rips::run(a),
        Some(Command::Bench(a)) => bench::run(a).map(|_| true),
        None => view(&cli.file, &cli.view, launched),
    };
    // For the reliability tests: how much memory a run took, measured from inside (a parent's
    // rusage of its child also counts the parent's pages the child held before exec).
    if std::env::var_os("TOPOVIEW_PEAK_MEMORY").is_some()
        && let Some(mib) = topoview_core::mem::peak_rss_mib()
    {
        let space = topoview_core::mem::peak_address_space_mib().unwrap_or(f64::NAN);
        say!("peak resident memory: {mib:.1} MiB (address space {space:.1} MiB)");
    }
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            say!("{}", error_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// An error as topoview prints it: one line, whatever a file name in it holds (a newline
/// would split it).
pub fn error_line(e: &anyhow::Error) -> String {
    format!("topoview: {}", topoview_core::export::outputs::one_line(&format!("{e:#}")))
}

/// SIGINT, SIGTERM and SIGHUP end the process as before, but first remove the temporary file of
/// every export under way (`outputs::remove_pending`). The signals are blocked in every thread
/// (threads inherit the mask: this runs before any is started) and taken by one thread that
/// waits for them, where removing files is safe, unlike in a signal handler.
#[cfg(unix)]
fn remove_temporaries_on_signals() {
    // SAFETY: sigset_t is plain data that sigemptyset initialises; the calls only read and
    // write this set and the calling thread's mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // A signal the process was started ignoring (`nohup`, a shell's background job)
            // stays ignored: a blocked one would still be queued and taken here.
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(s, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_DFL {
                libc::sigaddset(&mut set, s);
            }
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let waiter = std::thread::Builder::new().name("signals".into()).spawn(move || {
        let mut signal = 0;
        // SAFETY: sigwait reads the set and writes one integer this frame owns.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            return;
        }
        topoview_core::export::outputs::remove_pending();
        // SAFETY: the signal's default action (ending the process) is restored and the signal
        // raised again on this thread, unblocked here, so the exit status tells the signal.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
        }
    });
    if waiter.is_err() {
        // No thread to take them: the signals act as before.
        // SAFETY: as above, on the calling thread's mask.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

#[cfg(not(unix))]
fn remove_temporaries_on_signals() {}

#[cfg(not(feature = "viewer"))]
fn view(_: &Option<PathBuf>, _: &ViewArgs, _: std::time::Instant) -> anyhow::Result<bool> {
    anyhow::bail!(
        "this topoview was built without the viewer (the `viewer` feature); the command line \
         works: topoview ecc | msc | cracks | info | bench (see topoview --help)"
    )
}

#[cfg(feature = "viewer")]
fn view(file: &Option<PathBuf>, a: &ViewArgs, launched: std::time::Instant) -> anyhow::Result<bool> {
    a.input.init_threads()?;
    let startup = topoview_viewer::app::Startup {
        file: file.clone(),
        open: a.input.open_options()?,
        bench_frames: a.bench_frames,
        bench_sigma: a.bench_sigma,
        launched: Some(launched),
        backend: a.backend.backend.into(),
        gpu_memory: a.backend.gpu_memory,
        gpus: a.backend.gpus,
        session: a.session.clone(),
        layers: a.layer.clone(),
    };
    topoview_viewer::app::run(startup).map_err(|e| anyhow::anyhow!("cannot open the viewer window: {e}"))?;
    Ok(true)
}
