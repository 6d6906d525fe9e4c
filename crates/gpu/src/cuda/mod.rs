//! The CUDA backend (feature `cuda`): the kernels' PTX embedded, launched through cudarc with
//! the driver loaded at run time.

pub mod bench;
mod betti;
mod cracks;
mod ecc;
pub mod grid;
mod msc;
mod rips;
mod smooth;
mod wide;

use crate::error::GpuError;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use cudarc::nvrtc::Ptx;
use std::sync::{Arc, OnceLock};
use topoview_core::field::Sample;

pub use ecc::{GpuEccTimes, block_value_sums, ecc_block_spread, ecc_spread};
pub use msc::DeviceGradient;
pub use rips::RipsOnGpu;

/// A sample type as the kernels know it: every kernel for it is named with its
/// [`topoview_core::field::Dtype::name`] (`ecc_u8_3d`, `pairs_f32_2d`, `to_f32_i16`), and the types of
/// at most 2^16 values ([`Sample::BINS`]) take the histogram kernels, with bin 0 at their lowest
/// value. This one table serves every launch, in place of a match per operation.
pub(crate) trait DeviceSample:
    Sample + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits
{
    /// The suffix of this type's kernels.
    const NAME: &'static str = Self::DTYPE.name();
    /// For the narrow types: the value of histogram bin 0.
    const LOWEST: Option<i32> = match Self::BINS {
        Some((lo, _)) => Some(lo as i32),
        None => None,
    };
}

impl<T: Sample + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits> DeviceSample for T {}

/// PTX of the kernels (see `scripts/build-ptx.py`; `tests/it/cuda_ptx.rs` checks they are current).
pub const ECC_PTX: &str = include_str!("../../../../kernels/ecc.ptx");
pub const SMOOTH_PTX: &str = include_str!("../../../../kernels/smooth.ptx");
pub const CRACKS_PTX: &str = include_str!("../../../../kernels/cracks.ptx");
pub const BETTI_PTX: &str = include_str!("../../../../kernels/betti.ptx");
pub const RIPS_PTX: &str = include_str!("../../../../kernels/rips.ptx");
pub const MSC_PTX: &str = include_str!("../../../../kernels/msc.ptx");

/// Loads (and, the first time on a machine, has the driver JIT-compile) one kernel file; a panic
/// in the driver binding becomes an error, as in [`Gpu::open`].
fn load_module(ctx: &Arc<CudaContext>, name: &str, kernels: Kernels) -> Result<Arc<CudaModule>, GpuError> {
    let loaded = std::panic::catch_unwind(|| ctx.load_module(Ptx::from_src(kernels.ptx())));
    match loaded {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(GpuError::Unavailable(format!(
            "{name}: the {} kernels do not load ({e}); the driver may be older than CUDA 12.4",
            kernels.what()
        ))),
        Err(_) => Err(GpuError::Unavailable(format!(
            "{name}: the driver failed while loading the {} kernels",
            kernels.what()
        ))),
    }
}

/// Each kernel file's module once loaded, or why it did not load.
type Modules = [OnceLock<Result<Arc<CudaModule>, GpuError>>; Kernels::ALL.len()];

/// The kernel files, one CUDA module each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernels {
    Ecc,
    Smooth,
    Cracks,
    Betti,
    Rips,
    Msc,
}

impl Kernels {
    const ALL: [Kernels; 6] =
        [Kernels::Ecc, Kernels::Smooth, Kernels::Cracks, Kernels::Betti, Kernels::Rips, Kernels::Msc];

    fn ptx(self) -> &'static str {
        match self {
            Kernels::Ecc => ECC_PTX,
            Kernels::Smooth => SMOOTH_PTX,
            Kernels::Cracks => CRACKS_PTX,
            Kernels::Betti => BETTI_PTX,
            Kernels::Rips => RIPS_PTX,
            Kernels::Msc => MSC_PTX,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kernels::Ecc => "ECC",
            Kernels::Smooth => "smoothing",
            Kernels::Cracks => "crack filter",
            Kernels::Betti => "Betti curve",
            Kernels::Rips => "Rips",
            Kernels::Msc => "Morse-Smale",
        }
    }
}

impl From<DriverError> for GpuError {
    fn from(e: DriverError) -> Self {
        GpuError::Driver(e.to_string())
    }
}

/// A CUDA device with the kernels loaded and a stream to run them on; one per thread that
/// uses the device ([`Gpu::fork`] makes another).
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The kernel files, loaded on first use and shared with forks.
    modules: Arc<Modules>,
    /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// The device's number among the visible ones.
    pub ordinal: usize,
    /// Streaming multiprocessors (132 on an H100 SXM), for sizing grid-stride launches.
    multiprocessors: u32,
    staging: std::sync::Mutex<ecc::Staging>,
}

impl Gpu {
    /// Opens device 0, or says why not (no driver library, no device, the PTX does not load).
    pub fn open() -> Result<Gpu, GpuError> {
        let mut one = Gpu::open_devices(Some(1))?;
        Ok(one.remove(0))
    }

    /// Opens the first `count` visible devices (all of them for `None`), several each in a
    /// thread of its own (creating a context takes a few tenths of a second); the devices are
    /// those `CUDA_VISIBLE_DEVICES` shows, in its order.
    pub fn open_devices(count: Option<usize>) -> Result<Vec<Gpu>, GpuError> {
        let visible = Gpu::device_count()?;
        let n = count.unwrap_or(visible);
        if visible == 0 {
            return Err(GpuError::Unavailable("no CUDA device".into()));
        }
        if n == 0 || n > visible {
            return Err(GpuError::Unavailable(format!(
                "{n} GPUs asked for, {visible} visible (CUDA_VISIBLE_DEVICES chooses which)"
            )));
        }
        if n == 1 {
            return Ok(vec![Gpu::open_device(0)?]);
        }
        std::thread::scope(|s| {
            let opening: Vec<_> = (0..n).map(|i| s.spawn(move || Gpu::open_device(i))).collect();
            opening
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        Err(GpuError::Unavailable("the CUDA driver failed to initialise".into()))
                    })
                })
                .collect()
        })
    }

    /// How many devices are visible (0 without a driver).
    pub fn device_count() -> Result<usize, GpuError> {
        // SAFETY: only looks for the library; the driver calls would panic without it.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::Unavailable("no CUDA driver found (libcuda)".into()));
        }
        std::panic::catch_unwind(CudaContext::device_count)
            .map_err(|_| GpuError::Unavailable("the CUDA driver failed to initialise".into()))?
            .map(|n| n.max(0) as usize)
            .map_err(|e| GpuError::Unavailable(format!("no CUDA device: {e}")))
    }

    /// Opens visible device `ordinal` (the driver found and the device counted by
    /// [`Gpu::device_count`] first).
    fn open_device(ordinal: usize) -> Result<Gpu, GpuError> {
        let unavailable = GpuError::Unavailable;
        let guard = |r: std::thread::Result<Result<Gpu, GpuError>>| {
            r.unwrap_or_else(|_| Err(unavailable("the CUDA driver failed to initialise".into())))
        };
        // cudarc panics on some unexpected driver states; keep that from taking the caller down.
        guard(std::panic::catch_unwind(|| {
            let ctx = CudaContext::new(ordinal)
                .map_err(|e| unavailable(format!("cannot open CUDA device {ordinal}: {e}")))?;
            let name = ctx.name().unwrap_or_else(|_| format!("CUDA device {ordinal}"));
            // The smallest kernel file is loaded now, so that a driver too old for the PTX is
            // found when the device is opened (`--backend cuda` then fails, `auto` takes the
            // CPU); the others load on first use.
            let modules: Arc<Modules> = Default::default();
            let probe = load_module(&ctx, &name, Kernels::Rips);
            if let Err(why) = &probe {
                return Err(why.clone());
            }
            let _ = modules[Kernels::Rips as usize].set(probe);
            let stream = ctx.default_stream();
            // The driver sets up host-to-device copies at a context's first (11-13 ms on the
            // H100 machine, whatever the size): done here, where the device is opened, rather
            // than inside the first job's time.
            let first_copy = stream.clone_htod(&[0u8]).and_then(|b| stream.synchronize().map(|()| drop(b)));
            first_copy.map_err(|e| unavailable(format!("{name}: cannot copy to the device ({e})")))?;
            let multiprocessors = ctx
                .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(|e| unavailable(format!("{name}: cannot read the multiprocessor count ({e})")))?
                .max(1) as u32;
            Ok(Gpu { ctx, stream, modules, name, ordinal, multiprocessors, staging: Default::default() })
        }))
    }

    /// Another handle on the same device and kernels with a stream (and staging buffers) of its
    /// own, for another thread: work of two handles runs concurrently on the device, and
    /// cudarc's event tracking orders the uses of a buffer across streams.
    pub fn fork(&self) -> Result<Gpu, GpuError> {
        self.ctx.bind_to_thread()?;
        Ok(Gpu {
            ctx: self.ctx.clone(),
            stream: self.ctx.new_stream()?,
            modules: self.modules.clone(),
            name: self.name.clone(),
            ordinal: self.ordinal,
            multiprocessors: self.multiprocessors,
            staging: Default::default(),
        })
    }

    /// The module of `kernels`, loaded (and, the first time on a machine, JIT-compiled by the
    /// driver) on first use: a command pays for the kernels it runs alone (the ECC's file takes
    /// seconds to compile, the others less).
    fn module(&self, kernels: Kernels) -> Result<&Arc<CudaModule>, GpuError> {
        let loaded =
            self.modules[kernels as usize].get_or_init(|| load_module(&self.ctx, &self.name, kernels));
        // A file that failed to load is not tried again: the fallback note says why each time.
        loaded.as_ref().map_err(GpuError::clone)
    }

    fn function(&self, kernels: Kernels, name: &str) -> Result<CudaFunction, GpuError> {
        self.module(kernels)?.load_function(name).map_err(|e| GpuError::Driver(format!("kernel {name}: {e}")))
    }

    /// Loads every kernel file now (the tests check that all load; the benchmark times them),
    /// returning the seconds each took, by name.
    pub fn load_all(&self) -> Result<Vec<(&'static str, f64)>, GpuError> {
        Kernels::ALL
            .iter()
            .map(|&k| {
                let t = std::time::Instant::now();
                self.module(k).map(|_| (k.what(), t.elapsed().as_secs_f64()))
            })
            .collect()
    }

    /// Free and total device memory in bytes.
    pub fn memory(&self) -> Result<(usize, usize), GpuError> {
        self.ctx.bind_to_thread()?;
        Ok(self.ctx.mem_get_info()?)
    }
}
