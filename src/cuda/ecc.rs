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
        let sh = field.shape();
        match field.samples() {
            Samples::U8(v) => self.ecc_narrow(sh, Source::Memory(v), "u8", 0, opts, memory_limit, ctl),
            Samples::I8(v) => self.ecc_narrow(sh, Source::Memory(v), "i8", -128, opts, memory_limit, ctl),
            Samples::U16(v) => self.ecc_narrow(sh, Source::Memory(v), "u16", 0, opts, memory_limit, ctl),
            Samples::I16(v) => self.ecc_narrow(sh, Source::Memory(v), "i16", -32768, opts, memory_limit, ctl),
            _ => self.ecc_wide_dispatch(field, opts, ctl),
        }
    }

    /// The ECC of a headerless raw file of a narrow integer type, read slab by slab straight
    /// into pinned memory and streamed to the GPU: the field is never held in host memory, so
    /// files larger than RAM (and than `memory_limit` on the GPU) work.
    pub fn ecc_raw_file(
        &self,
        path: &std::path::Path,
        spec: &crate::io::RawSpec,
        opts: &EccOptions,
        memory_limit: Option<usize>,
        ctl: &Control,
    ) -> Result<(Ecc, GpuEccTimes), GpuError> {
        let err = |m: String| GpuError::Driver(format!("{}: {m}", path.display()));
        let n = crate::io::check_dims(&spec.dims).map_err(err)?;
        let need = n as u128 * spec.dtype.size() as u128 + spec.offset as u128;
        let len = std::fs::metadata(path).map_err(|e| err(e.to_string()))?.len() as u128;
        if len != need {
            return Err(err(format!("raw size mismatch: {need} bytes expected, the file has {len}")));
        }
        let mut file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(spec.offset))
            .map_err(|e| err(e.to_string()))?;
        let swap = spec.endian != crate::io::Endian::native();
        let sh = &spec.dims;
        macro_rules! go {
            ($t:ty, $name:expr, $lo:expr) => {{
                let src: Source<'_, $t> = Source::File { file, swap, pinned: None, held: (0, 0) };
                self.ecc_narrow(sh, src, $name, $lo, opts, memory_limit, ctl)
            }};
        }
        match spec.dtype {
            Dtype::U8 => go!(u8, "u8", 0),
            Dtype::I8 => go!(i8, "i8", -128),
            Dtype::U16 => go!(u16, "u16", 0),
            Dtype::I16 => go!(i16, "i16", -32768),
            other => Err(GpuError::Unsupported(other.name())),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn ecc_narrow<T: DeviceRepr + cudarc::driver::ValidAsZeroBits + bytemuck::Pod>(
        &self,
        shape: &[usize],
        mut data: Source<'_, T>,
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
        let three_d = shape.len() == 3;
        let dims: [usize; 3] = std::array::from_fn(|a| shape.get(a).copied().unwrap_or(1));
        let func = Self::function(&self.ecc, &format!("ecc_{name}_{}", if three_d { "3d" } else { "2d" }))?;
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
        // Files stream through pinned slabs of at most 128 MiB by default: pinning a large
        // buffer costs more than the overlap gains (1 GiB u8 on an H100 host: 0.86 s in one
        // slab, 0.35 s in 256 MiB slabs).
        let default = if matches!(data, Source::File { .. }) { 128 << 20 } else { self.memory()?.0 / 10 * 8 };
        let budget = memory_limit.unwrap_or(default);
        // A slab holds its planes and a collar plane on each side.
        let planes = (budget / plane_bytes.max(1)).saturating_sub(2).min(nz).min(MAX_PLANES);
        if planes == 0 {
            return Err(GpuError::TooLarge(format!(
                "three planes of {} ({} bytes) do not fit in {} bytes of GPU memory",
                crate::field::dims_string(shape),
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
            data.upload(s, &mut slab, plane, held, zs, ze)?;
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
        let dtype = match name {
            "u8" => Dtype::U8,
            "i8" => Dtype::I8,
            "u16" => Dtype::U16,
            _ => Dtype::I16,
        };
        Ok((
            Ecc { dtype, construction: opts.construction, filtration: opts.filtration, thresholds, chi },
            times,
        ))
    }
}

/// Where the planes of a narrow-type field come from.
enum Source<'a, T: DeviceRepr> {
    Memory(&'a [T]),
    /// A raw file positioned at its first sample; `pinned` holds planes `held.0..held.1`.
    File {
        file: std::fs::File,
        swap: bool,
        pinned: Option<cudarc::driver::PinnedHostSlice<T>>,
        held: (usize, usize),
    },
}

impl<T: DeviceRepr + bytemuck::Pod + cudarc::driver::ValidAsZeroBits> Source<'_, T> {
    /// Copies planes `zs..ze` to the start of `slab` (which holds `cap` planes).
    fn upload(
        &mut self,
        s: &std::sync::Arc<cudarc::driver::CudaStream>,
        slab: &mut CudaSlice<T>,
        plane: usize,
        cap: usize,
        zs: usize,
        ze: usize,
    ) -> Result<(), GpuError> {
        match self {
            Source::Memory(data) => {
                let mut dst = slab.slice_mut(0..(ze - zs) * plane);
                s.memcpy_htod(&data[zs * plane..ze * plane], &mut dst)?;
            }
            Source::File { file, swap, pinned, held } => {
                if pinned.is_none() {
                    // SAFETY: pinned host memory of cap planes, written below before any read.
                    *pinned = Some(unsafe { s.context().alloc_pinned::<T>(cap * plane) }?);
                }
                let buf = pinned.as_mut().expect("allocated above");
                let host = buf.as_mut_slice()?;
                // Planes already read (the collar of the previous slab) move to the front.
                let keep_from = zs.max(held.0).min(held.1);
                let kept = held.1 - keep_from;
                host.copy_within((keep_from - held.0) * plane..(held.1 - held.0) * plane, 0);
                let fresh = &mut host[kept * plane..(ze - zs) * plane];
                std::io::Read::read_exact(file, bytemuck::cast_slice_mut(fresh))
                    .map_err(|e| GpuError::Driver(format!("reading the raw file: {e}")))?;
                if *swap {
                    for v in fresh.iter_mut() {
                        let b: &mut [u8] = bytemuck::bytes_of_mut(v);
                        b.reverse();
                    }
                }
                *held = (zs, ze);
                s.memcpy_htod(&*buf, slab)?;
            }
        }
        Ok(())
    }
}
