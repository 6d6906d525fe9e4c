//! The ECC on the GPU. Fields of at most 2^16 possible values (u8, i8, u16, i16): a histogram
//! of voxel counts and chi changes indexed by value, streamed through the device in slabs of
//! whole planes with a one-plane collar, so a field of any size fits any memory limit. Wider
//! types: [`super::wide`].

use super::{Gpu, GpuError};
use crate::control::Control;
use crate::field::{Dtype, Samples, ScalarField};
use crate::topo::ecc::{Construction, Ecc, EccOptions, Filtration};
use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};
use std::time::Instant;

/// Threads per block along x and rows per block (`ROWS` in kernels/ecc.cu).
const BLOCK_X: u32 = 128;
const ROWS: u32 = 8;
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
    /// caps the device memory used for the field's slabs (default: 80% of the free memory).
    pub fn ecc(
        &self,
        field: &ScalarField,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        match field.samples() {
            Samples::U8(v) => self.ecc_narrow(field, v, "u8", 0, opts, memory_limit, ctl),
            Samples::I8(v) => self.ecc_narrow(field, v, "i8", -128, opts, memory_limit, ctl),
            Samples::U16(v) => self.ecc_narrow(field, v, "u16", 0, opts, memory_limit, ctl),
            Samples::I16(v) => self.ecc_narrow(field, v, "i16", -32768, opts, memory_limit, ctl),
            _ => self.ecc_wide_dispatch(field, opts, ctl),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn ecc_narrow<T: DeviceRepr + cudarc::driver::ValidAsZeroBits + bytemuck::Pod>(
        &self,
        field: &ScalarField,
        data: &[T],
        name: &str,
        lo: i32,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        let start = Instant::now();
        let mut times = GpuEccTimes::default();
        self.ctx.bind_to_thread()?;
        let s = &self.stream;
        let three_d = field.ndim() == 3;
        let func = Self::function(&self.ecc, &format!("ecc_{name}_{}", if three_d { "3d" } else { "2d" }))?;
        let [nx, ny, nz] = field.dims();
        if nx > i32::MAX as usize || ny > 65_535 * ROWS as usize || nz > i32::MAX as usize {
            return Err(GpuError::TooLarge(format!(
                "{} is too large for the GPU grid",
                crate::field::dims_string(field.shape())
            )));
        }
        let plane = nx * ny;
        let bins = 1usize << (8 * std::mem::size_of::<T>());
        let plane_bytes = plane * std::mem::size_of::<T>();
        let budget = match memory_limit {
            Some(l) => l,
            None => self.memory()?.0 / 10 * 8,
        };
        // A slab holds its planes and a collar plane on each side.
        let planes = (budget / plane_bytes.max(1)).saturating_sub(2).min(nz).min(MAX_PLANES);
        if planes == 0 {
            return Err(GpuError::TooLarge(format!(
                "three planes of {} ({} bytes) do not fit in {} bytes of GPU memory",
                crate::field::dims_string(field.shape()),
                3 * plane_bytes,
                budget
            )));
        }
        let held = (planes + 2).min(nz);
        let mut slab: CudaSlice<T> = s.alloc_zeros(held * plane)?;
        let mut counts: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let mut sums: CudaSlice<u64> = s.alloc_zeros(bins)?;
        let sup = opts.filtration == Filtration::Superlevel;
        let flags = sup as i32 | ((opts.construction == Construction::Vertices) as i32) << 1;
        let mut z0 = 0;
        while z0 < nz {
            if ctl.cancelled() {
                return Err(GpuError::Cancelled);
            }
            let z1 = (z0 + planes).min(nz);
            let zs = z0.saturating_sub(1);
            let ze = (z1 + 1).min(nz);
            let t = Instant::now();
            let mut dst = slab.slice_mut(0..(ze - zs) * plane);
            s.memcpy_htod(&data[zs * plane..ze * plane], &mut dst)?;
            s.synchronize()?;
            times.upload += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let geo =
                Geo { nx: nx as i32, ny: ny as i32, nz: nz as i32, zs: zs as i32, z0: z0 as i32, flags };
            let cfg = LaunchConfig {
                grid_dim: ((nx as u32).div_ceil(BLOCK_X), (ny as u32).div_ceil(ROWS), (z1 - z0) as u32),
                block_dim: (BLOCK_X, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = s.launch_builder(&func);
            b.arg(&slab).arg(&geo).arg(&lo).arg(&mut counts).arg(&mut sums);
            // SAFETY: the arguments match the kernel's signature; the grid covers planes
            // z0..z1 of a slab holding zs..ze, and every index the kernel forms is bounds-checked.
            unsafe { b.launch(cfg) }?;
            s.synchronize()?;
            times.kernels += t.elapsed().as_secs_f64();
            times.chunks += 1;
            ctl.tick(((z1 - z0) * plane) as u64);
            z0 = z1;
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
        let dtype = field.dtype();
        debug_assert!(matches!(dtype, Dtype::U8 | Dtype::I8 | Dtype::U16 | Dtype::I16));
        Ok((
            Ecc { dtype, construction: opts.construction, filtration: opts.filtration, thresholds, chi },
            times,
        ))
    }
}
