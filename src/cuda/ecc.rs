//! The ECC on the GPU. Fields of at most 2^16 possible values (u8, i8, u16, i16): a histogram
//! of voxel counts and chi changes indexed by value, streamed through the device in slabs of
//! whole planes with a one-plane collar, so a field of any size fits any memory limit. Wider
//! types: [`super::wide`].

use super::Kernels;
use super::{DeviceSample, Gpu, GpuError};
use crate::control::Control;
use crate::field::{Dtype, ScalarField};
use crate::topo::ecc::{Construction, Ecc, EccOptions, Filtration};
use crate::with_samples;
use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};
use std::time::Instant;

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

/// Where the time of one GPU ECC went (seconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuEccTimes {
    pub upload: f64,
    /// Device work (for wide types: listing the pairs and sorting them).
    pub kernels: f64,
    /// Wide types: summing runs and bringing the distinct values back; turning them into the
    /// curve on the host.
    pub download: f64,
    pub host: f64,
    pub total: f64,
    pub chunks: usize,
}

impl Gpu {
    /// The ECC of `field`, exactly as [`crate::topo::ecc::ecc`] computes it. `memory_limit`
    /// caps the device memory used for the field's slabs (default: 64 MiB, or three planes
    /// when those are larger, and never more than 40% of the free memory).
    pub fn ecc(
        &self,
        field: &ScalarField,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        with_samples!(field.samples(), v => self.ecc_typed(field, v, opts, memory_limit, ctl))
    }

    /// Narrow types by histogram, wide ones by sorting (see the module docs).
    fn ecc_typed<T: DeviceSample>(
        &self,
        field: &ScalarField,
        v: &[T],
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        match T::LOWEST {
            Some(_) => self.ecc_narrow(field.shape(), Source::Memory(v), opts, memory_limit, ctl),
            None => self.ecc_wide(field, v, opts, ctl),
        }
    }

    /// The ECC of a field stored as one uncompressed block of a narrow integer type, read slab
    /// by slab straight into pinned memory and streamed to the GPU: the field is never held in
    /// host memory, so files larger than RAM (and than `memory_limit` on the GPU) work.
    pub fn ecc_block(
        &self,
        block: &crate::io::Block,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        let reader = block.reader().map_err(|e| GpuError::Read(e.to_string()))?;
        let sh = block.dims();
        macro_rules! go {
            ($t:ty) => {{
                let src: Source<'_, $t> = Source::File(reader);
                self.ecc_narrow(sh, src, opts, memory_limit, ctl)
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

    /// Median seconds of the ECC kernel alone over `field` resident on the GPU (narrow types,
    /// the whole field one slab): the "data resident" figure of the benchmark.
    pub fn time_ecc_kernel(
        &self,
        field: &ScalarField,
        opts: &EccOptions,
        reps: usize,
    ) -> Result<f64, GpuError> {
        with_samples!(field.samples(), v => self.time_kernel(field.shape(), v, opts, reps))
    }

    fn time_kernel<T: DeviceSample>(
        &self,
        shape: &[usize],
        data: &[T],
        opts: &EccOptions,
        reps: usize,
    ) -> Result<f64, GpuError> {
        let (name, Some(lo)) = (T::NAME, T::LOWEST) else { return Err(GpuError::Unsupported(T::NAME)) };
        self.ctx.bind_to_thread()?;
        let s = &self.stream;
        let dims = crate::field::padded_dims(shape);
        if dims[1] > 65_535 * ROWS as usize || dims[2] > MAX_PLANES {
            return Err(GpuError::TooLarge("too large for one launch".into()));
        }
        let func = self
            .function(Kernels::Ecc, &format!("ecc_{name}_{}", if shape.len() == 3 { "3d" } else { "2d" }))?;
        let d = s.clone_htod(data)?;
        let bins = 1usize << (8 * std::mem::size_of::<T>());
        let mut counts: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let mut sums: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let flags = (opts.filtration == Filtration::Superlevel) as i32
            | ((opts.construction == Construction::Vertices) as i32) << 1;
        let geo = Geo::new(dims, 0, 0, flags);
        let cfg = LaunchConfig {
            grid_dim: ((dims[0] as u32).div_ceil(BLOCK_X), (dims[1] as u32).div_ceil(ROWS), dims[2] as u32),
            block_dim: (BLOCK_X, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut times = Vec::new();
        for r in 0..=reps.max(1) {
            s.memset_zeros(&mut counts)?;
            s.memset_zeros(&mut sums)?;
            s.synchronize()?;
            let t = Instant::now();
            let mut b = s.launch_builder(&func);
            b.arg(&d).arg(&geo).arg(&lo).arg(&mut counts).arg(&mut sums);
            // SAFETY: as in ecc_narrow, with the whole field as one slab.
            unsafe { b.launch(cfg) }?;
            s.synchronize()?;
            if r > 0 {
                times.push(t.elapsed().as_secs_f64()); // the first run is the warm-up
            }
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }

    fn ecc_narrow<T: DeviceSample>(
        &self,
        shape: &[usize],
        mut data: Source<'_, T>,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        let (name, Some(lo)) = (T::NAME, T::LOWEST) else { return Err(GpuError::Unsupported(T::NAME)) };
        let start = Instant::now();
        let mut times = GpuEccTimes::default();
        self.ctx.bind_to_thread()?;
        let s = &self.stream;
        let three_d = shape.len() == 3;
        let dims = crate::field::padded_dims(shape);
        let func =
            self.function(Kernels::Ecc, &format!("ecc_{name}_{}", if three_d { "3d" } else { "2d" }))?;
        let [nx, ny, nz] = dims;
        if nx > i32::MAX as usize || ny > 65_535 * ROWS as usize || nz > i32::MAX as usize {
            return Err(GpuError::TooLarge(format!(
                "{} is too large for the GPU grid",
                crate::field::dims_string(shape)
            )));
        }
        let plane = nx * ny;
        let bins = 1usize << (8 * std::mem::size_of::<T>());
        let plane_bytes = plane * std::mem::size_of::<T>();
        // Slabs of at most 64 MiB by default: pinning a large staging buffer costs more than the
        // overlap gains (1 GiB u8 on an H100 host: 0.86 s in one slab, 0.35 s in 256 MiB slabs).
        // (At least the three planes a slab needs, or the whole of a 2D field.)
        let default = (64usize << 20).max(3.min(nz) * plane_bytes).min(self.memory()?.0 / 10 * 4);
        let budget = memory_limit.unwrap_or(default);
        // A slab holds its planes and a collar plane on each side (a field of at most the
        // budget is one slab with no collar).
        let fit = budget / plane_bytes.max(1);
        let planes = if fit >= nz { nz } else { fit.saturating_sub(2) }.min(MAX_PLANES);
        if planes == 0 {
            return Err(GpuError::TooLarge(format!(
                "three planes of {} ({} bytes) do not fit in {} bytes of GPU memory",
                crate::field::dims_string(shape),
                3 * plane_bytes,
                budget
            )));
        }
        let held = (planes + 2).min(nz);
        let mut counts: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let mut sums: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let sup = opts.filtration == Filtration::Superlevel;
        let flags = sup as i32 | ((opts.construction == Construction::Vertices) as i32) << 1;
        // Two streams, each with its pinned staging buffer and device slab: while one slab's
        // planes are copied in (host to pinned, pinned to device), the other's kernel runs.
        let streams = [self.ctx.new_stream()?, self.ctx.new_stream()?];
        let slab_bytes = held * plane_bytes;
        let mut guard =
            // A panic while they were held leaves the buffers usable: they are refilled each call.
            self.staging.lock().unwrap_or_else(|p| p.into_inner());
        guard.ensure(self, slab_bytes)?;
        let Staging { slabs, pinned: staging } = &mut *guard;
        s.synchronize()?;
        let mut z0 = 0;
        let mut k = 0;
        while z0 < nz {
            if ctl.cancelled() {
                return Err(GpuError::Cancelled);
            }
            let z1 = (z0 + planes).min(nz);
            let zs = z0.saturating_sub(1);
            let ze = (z1 + 1).min(nz);
            let (st, i) = (&streams[k % 2], k % 2);
            // This buffer's previous copy (and kernel) must be done before it is refilled; the
            // copy below is asynchronous (the buffer is pinned).
            st.synchronize()?;
            let host: &mut [T] = bytemuck::cast_slice_mut(&mut staging[i].as_mut_slice()?[..slab_bytes]);
            data.fill(&mut host[..(ze - zs) * plane], zs * plane)?;
            let mut dst = slabs[i].slice_mut(0..slab_bytes);
            st.memcpy_htod(&staging[i].as_slice()?[..slab_bytes], &mut dst)?;
            let geo = Geo::new(dims, zs, z0, flags);
            let cfg = LaunchConfig {
                grid_dim: ((nx as u32).div_ceil(BLOCK_X), (ny as u32).div_ceil(ROWS), (z1 - z0) as u32),
                block_dim: (BLOCK_X, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = st.launch_builder(&func);
            b.arg(&slabs[i]).arg(&geo).arg(&lo).arg(&mut counts).arg(&mut sums);
            // SAFETY: the arguments match the kernel's signature; the grid covers planes
            // z0..z1 of a slab holding zs..ze, and every index the kernel forms is bounds-checked.
            unsafe { b.launch(cfg) }?;
            times.chunks += 1;
            ctl.tick(((z1 - z0) * plane) as u64);
            z0 = z1;
            k += 1;
        }
        for st in &streams {
            st.synchronize()?;
        }
        let counts = s.clone_dtoh(&counts)?;
        let sums = s.clone_dtoh(&sums)?;
        let order: Box<dyn Iterator<Item = usize>> =
            if sup { Box::new((0..bins).rev()) } else { Box::new(0..bins) };
        let (mut thresholds, mut chi) = (Vec::new(), Vec::new());
        let mut acc = 0i64;
        for i in order.filter(|&i| counts[i] > 0) {
            acc += sums[i] as i64;
            thresholds.push((lo as i64 + i as i64) as f64);
            chi.push(acc);
        }
        times.total = start.elapsed().as_secs_f64();
        Ok((
            Ecc {
                dtype: T::DTYPE,
                construction: opts.construction,
                filtration: opts.filtration,
                thresholds,
                chi,
            },
            times,
        ))
    }
}

/// Where the planes of a narrow-type field come from.
enum Source<'a, T> {
    Memory(&'a [T]),
    /// A file holding the field as one block of samples.
    File(crate::io::BlockReader),
}

impl<T: bytemuck::Pod + Send + Sync> Source<'_, T> {
    /// Writes the samples from index `first` on into `dst`.
    fn fill(&mut self, dst: &mut [T], first: usize) -> Result<(), GpuError> {
        use rayon::prelude::*;
        match self {
            Source::Memory(data) => {
                // Parallel: one thread's memcpy into pinned memory is slower than the copy engine.
                let src = &data[first..first + dst.len()];
                dst.par_chunks_mut(1 << 20)
                    .zip(src.par_chunks(1 << 20))
                    .for_each(|(d, s)| d.copy_from_slice(s));
            }
            Source::File(reader) => {
                reader.read_parallel(first, dst).map_err(|e| GpuError::Read(e.to_string()))?
            }
        }
        Ok(())
    }
}

/// Pinned staging buffers and device slabs of the streamed ECC, two of each (one per stream),
/// kept between calls: pinning host memory costs about as much as copying it.
#[derive(Default)]
pub(super) struct Staging {
    slabs: Vec<CudaSlice<u8>>,
    pinned: Vec<cudarc::driver::PinnedHostSlice<u8>>,
}

impl Staging {
    /// Makes both pairs of buffers at least `bytes` long.
    fn ensure(&mut self, gpu: &Gpu, bytes: usize) -> Result<(), GpuError> {
        if self.pinned.first().is_none_or(|p| p.len() < bytes) {
            self.slabs.clear();
            self.pinned.clear();
            let size = bytes;
            for _ in 0..2 {
                self.slabs.push(gpu.stream.alloc_zeros(size)?);
                // SAFETY: pinned host memory; what the ECC reads of it is written by `fill` first.
                self.pinned.push(unsafe { gpu.ctx.alloc_pinned::<u8>(size) }?);
            }
        }
        Ok(())
    }
}
