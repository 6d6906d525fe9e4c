//! The ECC on the GPU. Fields of at most 2^16 possible values (u8, i8, u16, i16): a histogram
//! of voxel counts and chi changes indexed by value, streamed through the device in slabs of
//! whole planes with a one-plane collar, so a field of any size fits any memory limit. Wider
//! types: [`super::wide`].

use super::Kernels;
use super::{DeviceSample, Gpu, GpuError};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use topoview_core::control::Control;
use topoview_core::field::{Dtype, ScalarField};
use topoview_core::topo::ecc::stream::{Planes, ValueSums};
use topoview_core::topo::ecc::{Construction, Ecc, EccOptions, Filtration};
use topoview_core::with_samples;

/// Threads per block along x and rows per block (`ROWS` in kernels/ecc.cu).
const BLOCK_X: u32 = 128;
pub(super) const ROWS: u32 = 8;
/// The most planes one launch covers (grid.z limit).
const MAX_PLANES: usize = 65_535;

/// Mirrors `struct Geo` in kernels/ecc.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(super) struct Geo {
    nx: i32,
    ny: i32,
    nz: i32,
    zs: i32,
    z0: i32,
    flags: i32,
}

// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for Geo {}

impl Geo {
    pub(super) fn new(dims: [usize; 3], zs: usize, z0: usize, flags: i32) -> Geo {
        let [nx, ny, nz] = dims.map(|d| d as i32);
        Geo { nx, ny, nz, zs: zs as i32, z0: z0 as i32, flags }
    }
}

/// Bytes of a slab's buffer before (and after) its samples: the packed kernels read the words
/// beside a row's first and last (and ignore what they hold).
const PAD: usize = 256;

/// The histogram kernel of a narrow type, launched over planes of a slab: for 8-bit samples in
/// rows of whole 32-bit words the packed one (kernels/ecc.cu: four voxels a thread, walking
/// along z, or y in 2D), else one voxel a thread.
struct Hist {
    func: CudaFunction,
    packed: bool,
    dims: [usize; 3],
    three_d: bool,
    lo: i32,
    flags: i32,
}

/// The packed kernels' blocks (`PW`, `PH`, `PSTEPS` in kernels/ecc.cu).
const PACKED_BLOCK: (u32, u32) = (32, 8);
const PACKED_STEPS: u32 = 8;

impl Hist {
    /// `packed`: None picks the packed kernel where it applies; Some(false) forces the other
    /// (the benchmark times both).
    fn new<T: DeviceSample>(
        gpu: &Gpu,
        shape: &[usize],
        opts: &EccOptions,
        packed: Option<bool>,
    ) -> Result<Hist, GpuError> {
        let (name, Some(lo)) = (T::NAME, T::LOWEST) else { return Err(GpuError::Unsupported(T::NAME)) };
        let dims = topoview_core::field::padded_dims(shape);
        // (Their x, rounded up to a block of 128 voxels, is a 32-bit int.)
        let fits =
            std::mem::size_of::<T>() == 1 && dims[0].is_multiple_of(4) && dims[0] + 128 <= i32::MAX as usize;
        let packed = packed.unwrap_or(true) && fits;
        let three_d = shape.len() == 3;
        let kind = if packed { "packed" } else { "ecc" };
        let func =
            gpu.function(Kernels::Ecc, &format!("{kind}_{name}_{}", if three_d { "3d" } else { "2d" }))?;
        let flags = (opts.filtration == Filtration::Superlevel) as i32
            | ((opts.construction == Construction::Vertices) as i32) << 1;
        Ok(Hist { func, packed, dims, three_d, lo, flags })
    }

    /// Queues the histogram of planes `z0..z1` of the volume on `st`; `slab` holds planes `zs..`
    /// (up to z1 and its collar) from its byte `PAD` on.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        st: &CudaStream,
        slab: &CudaSlice<u8>,
        zs: usize,
        z0: usize,
        z1: usize,
        counts: &mut CudaSlice<u64>,
        sums: &mut CudaSlice<u64>,
    ) -> Result<(), GpuError> {
        let [nx, ny, _] = self.dims;
        let geo = Geo::new(self.dims, zs, z0, self.flags);
        let planes = (z1 - z0) as u32;
        let (cfg, last) = if self.packed {
            let (w, h) = PACKED_BLOCK;
            let grid = if self.three_d {
                ((nx as u32 / 4).div_ceil(w), (ny as u32).div_ceil(h), planes.div_ceil(PACKED_STEPS))
            } else {
                ((nx as u32 / 4).div_ceil(w), (ny as u32).div_ceil(h * PACKED_STEPS), 1)
            };
            (LaunchConfig { grid_dim: grid, block_dim: (w, h, 1), shared_mem_bytes: 0 }, z1 as i32)
        } else {
            let grid = ((nx as u32).div_ceil(BLOCK_X), (ny as u32).div_ceil(ROWS), planes);
            (LaunchConfig { grid_dim: grid, block_dim: (BLOCK_X, 1, 1), shared_mem_bytes: 0 }, self.lo)
        };
        let data = slab.slice(PAD..);
        let mut b = st.launch_builder(&self.func);
        // The packed kernels take the end plane where the others take the lowest value.
        b.arg(&data).arg(&geo).arg(&last).arg(counts).arg(sums);
        // SAFETY: the arguments match the kernel's signature; the grid covers planes z0..z1 of a
        // slab holding zs..min(z1 + 1, nz) after PAD bytes, with PAD bytes after them: every
        // index the kernels form is clamped into the slab (the packed ones read at most 4 bytes
        // beyond a row).
        unsafe { b.launch(cfg) }?;
        Ok(())
    }
}

/// Where the time of one GPU ECC went (seconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuEccTimes {
    pub upload: f64,
    /// Device work (for wide types: listing the pairs and sorting them).
    pub kernels: f64,
    /// Wide types: summing runs and bringing the distinct values back, turned into the curve
    /// on the host as they arrive.
    pub download: f64,
    pub total: f64,
    pub chunks: usize,
}

impl Gpu {
    /// The ECC of `field`, exactly as [`topoview_core::topo::ecc::ecc`] computes it. `memory_limit`
    /// caps the device memory used for the field's slabs (default: 64 MiB, or three planes
    /// when those are larger, and never more than 40% of the free memory).
    pub fn ecc(
        &self,
        field: &ScalarField,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        ecc_spread(std::slice::from_ref(self), field, opts, memory_limit, ctl)
    }

    /// The ECC of a field stored as one uncompressed block of a narrow integer type, read slab
    /// by slab straight into pinned memory and streamed to the GPU: the field is never held in
    /// host memory, so files larger than RAM (and than `memory_limit` on the GPU) work.
    pub fn ecc_block(
        &self,
        block: &topoview_core::io::Block,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        ecc_block_spread(std::slice::from_ref(self), block, opts, memory_limit, ctl)
    }

    /// Median seconds of the ECC kernel alone over `field` resident on the GPU (narrow types,
    /// the whole field one slab): the "data resident" figure of the benchmark. For 8-bit fields
    /// whose rows are whole words, the packed kernel's and then the one-voxel-a-thread kernel's,
    /// each with its name.
    pub fn time_ecc_kernel(
        &self,
        field: &ScalarField,
        opts: &EccOptions,
        reps: usize,
    ) -> Result<Vec<(&'static str, f64)>, GpuError> {
        with_samples!(field.samples(), v => self.time_kernel(field.shape(), v, opts, reps))
    }

    fn time_kernel<T: DeviceSample>(
        &self,
        shape: &[usize],
        data: &[T],
        opts: &EccOptions,
        reps: usize,
    ) -> Result<Vec<(&'static str, f64)>, GpuError> {
        self.ctx.bind_to_thread()?;
        let s = &self.stream;
        let dims = topoview_core::field::padded_dims(shape);
        if dims[1] > 65_535 * ROWS as usize || dims[2] > MAX_PLANES {
            return Err(GpuError::TooLarge("too large for one launch".into()));
        }
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut d: CudaSlice<u8> = s.alloc_zeros(bytes.len() + 2 * PAD)?;
        s.memcpy_htod(bytes, &mut d.slice_mut(PAD..PAD + bytes.len()))?;
        let bins = 1usize << (8 * std::mem::size_of::<T>());
        let mut counts: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let mut sums: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let mut out = Vec::new();
        for packed in [true, false] {
            let hist = Hist::new::<T>(self, shape, opts, Some(packed))?;
            if hist.packed != packed {
                continue;
            }
            let mut times = Vec::new();
            for r in 0..=reps.max(1) {
                s.memset_zeros(&mut counts)?;
                s.memset_zeros(&mut sums)?;
                s.synchronize()?;
                let t = Instant::now();
                hist.launch(s, &d, 0, 0, dims[2], &mut counts, &mut sums)?;
                s.synchronize()?;
                if r > 0 {
                    times.push(t.elapsed().as_secs_f64()); // the first run is the warm-up
                }
            }
            times.sort_by(f64::total_cmp);
            out.push((if packed { "packed" } else { "one voxel a thread" }, times[times.len() / 2]));
        }
        Ok(out)
    }

    /// The histogram of voxel counts and chi changes of the planes of a narrow-type field of
    /// `shape` this device takes from `planes` (a slab at a time, at most a `devices`th of
    /// them, until none are left; other devices take the rest, and the CPU's workers until
    /// this device is set up), streamed through it with each slab's collar planes; stops
    /// early when `stop` is set (another device failed).
    #[allow(clippy::too_many_arguments)]
    fn narrow_bins<T: DeviceSample>(
        &self,
        shape: &[usize],
        mut data: Source<'_, T>,
        planes: &Planes,
        devices: usize,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
        stop: &AtomicBool,
    ) -> Result<Bins, GpuError> {
        self.ctx.bind_to_thread()?;
        let s = &self.stream;
        let hist = Hist::new::<T>(self, shape, opts, None)?;
        let dims = topoview_core::field::padded_dims(shape);
        let [nx, ny, nz] = dims;
        let plane = nx * ny;
        let bins = 1usize << (8 * std::mem::size_of::<T>());
        let plane_bytes = plane * std::mem::size_of::<T>();
        // Slabs of at most 64 MiB by default: pinning a large staging buffer costs more than the
        // overlap gains (1 GiB u8 on an H100 host: 0.86 s in one slab, 0.35 s in 256 MiB slabs).
        // (At least the three planes a slab needs, or the whole of a 2D field.)
        let default = (64usize << 20).max(3.min(nz) * plane_bytes).min(self.memory()?.0 / 10 * 4);
        let budget = memory_limit.unwrap_or(default);
        // A slab holds its planes and a collar plane on each side (the whole field, which has
        // none, when it fits the budget).
        let fit = budget / plane_bytes.max(1);
        // (Never more than a device's share, so that several devices share the field.)
        let per_slab = if fit >= nz { nz } else { fit.saturating_sub(2).min(nz) }
            .min(nz.div_ceil(devices))
            .min(MAX_PLANES);
        if per_slab == 0 {
            return Err(GpuError::TooLarge(format!(
                "three planes of {} ({} bytes) do not fit in {budget} bytes of GPU memory",
                topoview_core::field::dims_string(shape),
                3 * plane_bytes,
            )));
        }
        // Never more than the field.
        let held = (per_slab + 2).min(nz);
        let mut counts: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let mut sums: CudaSlice<u64> = s.alloc_zeros(bins)?;
        // Two streams, each with its pinned staging buffer and device slab: while one slab's
        // planes are copied in (host to pinned, pinned to device), the other's kernel runs.
        let slab_bytes = held * plane_bytes;
        let mut staged = self.staged()?;
        staged.buffers.ensure(self, slab_bytes)?;
        let streams = &staged.streams;
        let Staging { slabs, pinned: staging } = &mut *staged.buffers;
        s.synchronize()?;
        // Set up: the CPU's workers, if any, leave the rest to the devices from here.
        planes.hand_over();
        let (mut chunks, mut computed) = (0, 0);
        while let Some(taken) = planes.take(per_slab) {
            if ctl.cancelled() || stop.load(Ordering::Relaxed) {
                return Err(GpuError::Cancelled);
            }
            let (z0, z1) = (taken.start, taken.end);
            let zs = z0.saturating_sub(1);
            let ze = (z1 + 1).min(nz);
            let (st, i) = (&streams[chunks % 2], chunks % 2);
            // This buffer's previous copy (and kernel) must be done before it is refilled; the
            // copy below is asynchronous (the buffer is pinned).
            st.synchronize()?;
            let bytes = (ze - zs) * plane_bytes;
            let host: &mut [T] = bytemuck::cast_slice_mut(&mut staging[i].as_mut_slice()?[..bytes]);
            data.fill(host, zs * plane)?;
            let mut dst = slabs[i].slice_mut(PAD..PAD + bytes);
            st.memcpy_htod(&staging[i].as_slice()?[..bytes], &mut dst)?;
            hist.launch(st, &slabs[i], zs, z0, z1, &mut counts, &mut sums)?;
            chunks += 1;
            computed += z1 - z0;
            ctl.tick(((z1 - z0) * plane) as u64);
        }
        for st in streams {
            st.synchronize()?;
        }
        Ok(Bins { counts: s.clone_dtoh(&counts)?, sums: s.clone_dtoh(&sums)?, chunks, planes: computed })
    }
}

/// The ECC of `field` with its planes shared among `devices` (each streams its run of planes
/// through its own slabs; their histograms are summed on the host): equal to [`Gpu::ecc`] on
/// any one of them. Wide types run on the first device alone.
pub fn ecc_spread(
    devices: &[Gpu],
    field: &ScalarField,
    opts: &EccOptions,
    memory_limit: Option<usize>,
    ctl: &Control,
) -> Result<(Ecc, GpuEccTimes), GpuError> {
    with_samples!(field.samples(), v => spread_typed(devices, field, v, opts, memory_limit, ctl))
}

/// Narrow types by histogram, wide ones by sorting (see the module docs).
fn spread_typed<T: DeviceSample>(
    devices: &[Gpu],
    field: &ScalarField,
    v: &[T],
    opts: &EccOptions,
    memory_limit: Option<usize>,
    ctl: &Control,
) -> Result<(Ecc, GpuEccTimes), GpuError> {
    let first = devices.first().ok_or_else(|| GpuError::Unavailable("no CUDA device".into()))?;
    match T::LOWEST {
        Some(_) => ecc_narrow(devices, field.shape(), &|| Ok(Source::Memory(v)), opts, memory_limit, ctl),
        None => first.ecc_wide(field, v, opts, ctl),
    }
}

/// [`Gpu::ecc_block`] with the planes shared among `devices`, each reading its own run of
/// planes from the file.
pub fn ecc_block_spread(
    devices: &[Gpu],
    block: &topoview_core::io::Block,
    opts: &EccOptions,
    memory_limit: Option<usize>,
    ctl: &Control,
) -> Result<(Ecc, GpuEccTimes), GpuError> {
    let sh = block.dims();
    macro_rules! go {
        ($t:ty) => {{
            let reader = || -> Result<Source<'_, $t>, GpuError> {
                Ok(Source::File(block.reader().map_err(|e| GpuError::Read(e.to_string()))?))
            };
            ecc_narrow(devices, sh, &reader, opts, memory_limit, ctl)
        }};
    }
    match block.dtype() {
        Dtype::U8 => go!(u8),
        Dtype::I8 => go!(i8),
        Dtype::U16 => go!(u16),
        Dtype::I16 => go!(i16),
        other => Err(GpuError::Unsupported(other.name())),
    }
}

/// One device's histogram: voxel counts and chi changes (two's complement) per value.
struct Bins {
    counts: Vec<u64>,
    sums: Vec<u64>,
    chunks: usize,
    /// How many planes they cover.
    planes: usize,
}

/// A narrow-type field's planes shared among `devices`, each in a thread of its own taking
/// slabs until none are left (a 2D field is one plane, so one device); the histograms summed
/// into the curve.
fn ecc_narrow<'a, T: DeviceSample>(
    devices: &[Gpu],
    shape: &[usize],
    source: &(dyn Fn() -> Result<Source<'a, T>, GpuError> + Sync),
    opts: &EccOptions,
    memory_limit: Option<usize>,
    ctl: &Control,
) -> Result<(Ecc, GpuEccTimes), GpuError> {
    let Some(lo) = T::LOWEST else { return Err(GpuError::Unsupported(T::NAME)) };
    let start = Instant::now();
    let planes = Planes::new(topoview_core::field::padded_dims(shape)[2]);
    let Bins { counts, sums, chunks, .. } =
        narrow_sums(devices, shape, source, opts, memory_limit, &planes, ctl)?;
    let order: Box<dyn Iterator<Item = usize>> = if opts.filtration == Filtration::Superlevel {
        Box::new((0..counts.len()).rev())
    } else {
        Box::new(0..counts.len())
    };
    let (mut thresholds, mut changes) = (Vec::new(), Vec::new());
    for i in order.filter(|&i| counts[i] > 0) {
        thresholds.push((lo as i64 + i as i64) as f64);
        changes.push(sums[i] as i64);
    }
    let times = GpuEccTimes { chunks, total: start.elapsed().as_secs_f64(), ..Default::default() };
    Ok((
        Ecc {
            construction: opts.construction,
            filtration: opts.filtration,
            thresholds: topoview_core::field::Samples::from_f64(T::DTYPE, &thresholds),
            chi: topoview_core::topo::ecc::Chi::running(
                &changes,
                topoview_core::topo::ecc::chi::fits_i32(shape),
                |c| c,
            ),
        },
        times,
    ))
}

/// The summed histograms of the planes `devices` take from `planes`, each device in a thread
/// of its own (one device: this thread).
fn narrow_sums<'a, T: DeviceSample>(
    devices: &[Gpu],
    shape: &[usize],
    source: &(dyn Fn() -> Result<Source<'a, T>, GpuError> + Sync),
    opts: &EccOptions,
    memory_limit: Option<usize>,
    planes: &Planes,
    ctl: &Control,
) -> Result<Bins, GpuError> {
    if devices.is_empty() {
        return Err(GpuError::Unavailable("no CUDA device".into()));
    }
    let dims = topoview_core::field::padded_dims(shape);
    let [nx, ny, nz] = dims;
    if nx > i32::MAX as usize || ny > 65_535 * ROWS as usize || nz > i32::MAX as usize {
        return Err(GpuError::TooLarge(format!(
            "{} is too large for the GPU grid",
            topoview_core::field::dims_string(shape)
        )));
    }
    let parts = devices.len().min(nz);
    let stop = AtomicBool::new(false);
    let run = |i: usize| {
        // A panic (in the driver binding) stops the other devices as an error does.
        let bins = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            source().and_then(|src| {
                devices[i].narrow_bins(shape, src, planes, parts, opts, memory_limit, ctl, &stop)
            })
        }))
        .unwrap_or_else(|_| Err(GpuError::Driver("the device's thread panicked".into())));
        if bins.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        bins
    };
    let results: Vec<Result<Bins, GpuError>> = if parts == 1 {
        vec![run(0)]
    } else {
        std::thread::scope(|s| {
            let run = &run;
            let threads: Vec<_> = (0..parts).map(|i| (i, s.spawn(move || run(i)))).collect();
            threads
                .into_iter()
                .map(|(i, t)| {
                    let g = &devices[i];
                    let on = |m: String| format!("{} (device {}): {m}", g.name, g.ordinal);
                    t.join()
                        .unwrap_or_else(|_| Err(GpuError::Driver("the device's thread panicked".into())))
                        .map_err(|e| match e {
                            GpuError::Driver(m) => GpuError::Driver(on(m)),
                            GpuError::TooLarge(m) => GpuError::TooLarge(on(m)),
                            GpuError::Unavailable(m) => GpuError::Unavailable(on(m)),
                            e => e,
                        })
                })
                .collect()
        })
    };
    // A device's own failure, not the stop it caused in the others, is the error to give.
    let mut total: Option<Bins> = None;
    let mut cancelled = false;
    for r in results {
        match r {
            Err(GpuError::Cancelled) => cancelled = true,
            Err(e) => return Err(e),
            Ok(b) => match &mut total {
                None => total = Some(b),
                Some(t) => {
                    t.counts.iter_mut().zip(&b.counts).for_each(|(a, b)| *a += b);
                    t.sums.iter_mut().zip(&b.sums).for_each(|(a, b)| *a = a.wrapping_add(*b));
                    t.chunks += b.chunks;
                    t.planes += b.planes;
                }
            },
        }
    }
    total.filter(|_| !cancelled).ok_or(GpuError::Cancelled)
}

/// The histogram of the planes of `block` that `devices` take from `planes`, while others (the
/// CPU's workers) take the rest: see [`topoview_core::topo::ecc::stream::ecc_helped`].
pub fn block_value_sums(
    devices: &[Gpu],
    block: &topoview_core::io::Block,
    opts: &EccOptions,
    memory_limit: Option<usize>,
    planes: &Planes,
    ctl: &Control,
) -> Result<ValueSums, GpuError> {
    let sh = block.dims();
    macro_rules! go {
        ($t:ty) => {{
            let reader = || -> Result<Source<'_, $t>, GpuError> {
                Ok(Source::File(block.reader().map_err(|e| GpuError::Read(e.to_string()))?))
            };
            let b = narrow_sums(devices, sh, &reader, opts, memory_limit, planes, ctl)?;
            let lo = <$t as DeviceSample>::LOWEST.expect("a narrow type") as i64;
            ValueSums {
                lo,
                counts: b.counts,
                sums: b.sums.iter().map(|&s| s as i64).collect(),
                planes: b.planes,
            }
        }};
    }
    Ok(match block.dtype() {
        Dtype::U8 => go!(u8),
        Dtype::I8 => go!(i8),
        Dtype::U16 => go!(u16),
        Dtype::I16 => go!(i16),
        other => return Err(GpuError::Unsupported(other.name())),
    })
}

/// Where the planes of a narrow-type field come from.
enum Source<'a, T> {
    Memory(&'a [T]),
    /// A file holding the field as one block of samples.
    File(topoview_core::io::BlockReader),
}

impl<T: bytemuck::Pod + Send + Sync> Source<'_, T> {
    /// Writes the samples from index `first` on into `dst`.
    fn fill(&mut self, dst: &mut [T], first: usize) -> Result<(), GpuError> {
        match self {
            Source::Memory(data) => copy_parallel(dst, &data[first..first + dst.len()]),
            Source::File(reader) => {
                reader.read_parallel(first, dst).map_err(|e| GpuError::Read(e.to_string()))?
            }
        }
        Ok(())
    }
}

/// `src` copied into `dst` (of the same length) on all cores: one thread's memcpy into pinned
/// memory is slower than the copy engine.
pub(super) fn copy_parallel<T: bytemuck::Pod + Send + Sync>(dst: &mut [T], src: &[T]) {
    use rayon::prelude::*;
    dst.par_chunks_mut(1 << 20).zip(src.par_chunks(1 << 20)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// Pinned staging buffers and device slabs of the streamed ECC, two of each (one per stream),
/// kept between calls: pinning host memory costs about as much as copying it.
#[derive(Default)]
pub(super) struct Staging {
    slabs: Vec<CudaSlice<u8>>,
    pub(super) pinned: Vec<cudarc::driver::PinnedHostSlice<u8>>,
}

impl Staging {
    /// Makes both pairs of buffers (pinned and device) at least `bytes` long.
    pub(super) fn ensure(&mut self, gpu: &Gpu, bytes: usize) -> Result<(), GpuError> {
        self.ensure_pinned(gpu, bytes)?;
        if self.slabs.first().is_none_or(|s| s.len() < bytes + 2 * PAD) {
            self.slabs.clear();
            for _ in 0..2 {
                self.slabs.push(gpu.stream.alloc_zeros(bytes + 2 * PAD)?);
            }
        }
        Ok(())
    }

    /// Makes both pinned buffers at least `bytes` long (the wide types' transfers need no slabs).
    pub(super) fn ensure_pinned(&mut self, gpu: &Gpu, bytes: usize) -> Result<(), GpuError> {
        if self.pinned.first().is_none_or(|p| p.len() < bytes) {
            self.pinned.clear();
            for _ in 0..2 {
                // SAFETY: pinned host memory; what is read of it is written first (by `fill`,
                // a host copy or a device-to-host copy).
                self.pinned.push(unsafe { gpu.ctx.alloc_pinned::<u8>(bytes) }?);
            }
        }
        Ok(())
    }
}

/// A call's hold on its handle's staging buffers, with two streams of its own to copy through
/// them on (while one buffer's copy crosses, the other is filled or emptied on the host).
pub(super) struct Staged<'a> {
    pub(super) streams: [Arc<cudarc::driver::CudaStream>; 2],
    pub(super) buffers: std::sync::MutexGuard<'a, Staging>,
}

impl Gpu {
    pub(super) fn staged(&self) -> Result<Staged<'_>, GpuError> {
        Ok(Staged {
            streams: [self.ctx.new_stream()?, self.ctx.new_stream()?],
            // A panic while they were held leaves the buffers usable: they are refilled each call.
            buffers: self.staging.lock().unwrap_or_else(|p| p.into_inner()),
        })
    }
}

impl Drop for Staged<'_> {
    /// Waits for the streams before the buffers are released, whether the call returned early
    /// or not, so that no copy still uses a pinned buffer the next call refills or frees.
    /// Errors are left to the call's own synchronizations.
    fn drop(&mut self) {
        for st in &self.streams {
            let _ = st.synchronize();
        }
    }
}
