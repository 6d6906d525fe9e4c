//! Gaussian smoothing on the GPU, bit for bit the CPU's (see kernels/smooth.cu).

use super::Kernels;
use super::{DeviceSample, Gpu, GpuError};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use topoview_core::field::{Samples, ScalarField};
use topoview_core::topo::smooth::{Smoothing, taps};
use topoview_core::with_samples;

const THREADS: u32 = 256;

impl Gpu {
    /// Smooths `field` as [`topoview_core::topo::smooth::smooth`] does (same taps, boundary, order and
    /// f32 rounding); the field must fit in GPU memory (two f32 copies and the input).
    pub fn smooth(&self, field: &ScalarField, s: &Smoothing) -> Result<ScalarField, GpuError> {
        let (a, _) = self.smooth_on_device(field, s)?;
        let out = self.stream.clone_dtoh(&a)?;
        Ok(field.with_samples(Samples::F32(out)).expect("same shape"))
    }

    /// Smooths `field` and computes the ECC of the result without bringing the smoothed field
    /// back in between (it comes back once, at the end, for the caller to show).
    pub fn smooth_ecc(
        &self,
        field: &ScalarField,
        s: &Smoothing,
        opts: &topoview_core::topo::ecc::EccOptions,
        ctl: &topoview_core::control::Control,
    ) -> Result<(ScalarField, topoview_core::topo::ecc::Ecc), GpuError> {
        let (a, _) = self.smooth_on_device(field, s)?;
        let (e, _) = self.ecc_resident(&a, field.shape(), opts, ctl)?;
        let out = self.stream.clone_dtoh(&a)?;
        Ok((field.with_samples(Samples::F32(out)).expect("same shape"), e))
    }

    /// Uploads `field` as f32 and smooths it; the result stays on the GPU (with its scratch).
    fn smooth_on_device(
        &self,
        field: &ScalarField,
        s: &Smoothing,
    ) -> Result<(CudaSlice<f32>, CudaSlice<f32>), GpuError> {
        self.ctx.bind_to_thread()?;
        let st = &self.stream;
        let n = field.len();
        let need = n * (8 + field.dtype().size());
        let (free, _) = self.memory()?;
        if need > free {
            return Err(GpuError::TooLarge(format!(
                "smoothing needs {need} bytes of GPU memory, {free} are free"
            )));
        }
        let mut a: CudaSlice<f32> = st.alloc_zeros(n)?;
        let mut b: CudaSlice<f32> = st.alloc_zeros(n)?;
        with_samples!(field.samples(), v => self.to_f32(v, &mut a))?;
        self.smooth_resident(&mut a, &mut b, field, s)?;
        Ok((a, b))
    }

    /// The iterated pipeline of the ECC paper's Table 2, resident: `iters` times, smooth the
    /// field on the GPU and take the ECC of the result; only the curves come back. Returns the
    /// median seconds of one iteration and the last curve.
    pub fn time_pipeline(
        &self,
        field: &ScalarField,
        s: &Smoothing,
        iters: usize,
    ) -> Result<(f64, topoview_core::topo::ecc::Ecc), GpuError> {
        let (mut a, mut b) = self.smooth_on_device(field, s)?;
        let opts = topoview_core::topo::ecc::EccOptions::default();
        let ctl = topoview_core::control::Control::default();
        let mut last = None;
        let mut times = Vec::new();
        for _ in 0..iters.max(1) {
            let t = std::time::Instant::now();
            self.smooth_resident(&mut a, &mut b, field, s)?;
            let (e, _) = self.ecc_resident(&a, field.shape(), &opts, &ctl)?;
            times.push(t.elapsed().as_secs_f64());
            last = Some(e);
        }
        times.sort_by(f64::total_cmp);
        Ok((times[times.len() / 2], last.expect("at least one iteration")))
    }

    /// Uploads `v` into `dst` as f32 (converted on the GPU; f32 copied as it is).
    pub(super) fn to_f32<T: DeviceSample>(&self, v: &[T], dst: &mut CudaSlice<f32>) -> Result<(), GpuError> {
        let st = &self.stream;
        if let Some(same) = bytemuck::try_cast_slice::<T, f32>(v)
            .ok()
            .filter(|_| T::DTYPE == topoview_core::field::Dtype::F32)
        {
            st.memcpy_htod(same, dst)?;
            return Ok(());
        }
        let src = st.clone_htod(v)?;
        let f = self.function(Kernels::Smooth, &format!("to_f32_{}", T::NAME))?;
        let n = v.len() as i64;
        let mut l = st.launch_builder(&f);
        l.arg(&src).arg(dst).arg(&n);
        // SAFETY: src and dst hold n elements; the kernel is a grid-stride loop over n.
        unsafe { l.launch(self.grid(v.len())) }?;
        Ok(())
    }

    /// Smooths the f32 field in `a` in place (`b` is scratch of the same size), leaving the
    /// result on the GPU.
    pub(super) fn smooth_resident(
        &self,
        a: &mut CudaSlice<f32>,
        b: &mut CudaSlice<f32>,
        field: &ScalarField,
        s: &Smoothing,
    ) -> Result<(), GpuError> {
        let st = &self.stream;
        let dims = field.dims();
        let sig = s.sigma_voxels(field);
        // The input's range, from the samples as the GPU converts them (round to nearest).
        let range = with_samples!(field.samples(), v => {
            use rayon::prelude::*;
            use topoview_core::field::Sample;
            let f: Vec<f32> = v.par_iter().map(|x| x.to_f32()).collect();
            topoview_core::topo::smooth::value_range(&f)
        });
        for (axis, &sigma) in sig.iter().enumerate().take(field.ndim()) {
            let w = taps(sigma, s.truncate);
            if w.len() == 1 {
                continue;
            }
            let wd = st.clone_htod(&w)?;
            let (name, cfg) = self.pass(dims, axis, w.len() / 2);
            let f = self.function(Kernels::Smooth, name)?;
            let [nx, ny, nz] = dims.map(|d| d as i32);
            let (axis, nt) = (axis as i32, w.len() as i32);
            let mut l = st.launch_builder(&f);
            l.arg(&*a).arg(&mut *b).arg(&nx).arg(&ny);
            if name != "smooth_rows" {
                l.arg(&nz).arg(&axis);
            }
            l.arg(&wd).arg(&nt);
            // SAFETY: a and b hold nx*ny*nz floats, wd holds nt taps, the arguments are those of
            // the kernel `name`; every kernel bound-checks its indices (the tiled ones reflect
            // them into the field, within the shared memory `pass` sizes).
            unsafe { l.launch(cfg) }?;
            std::mem::swap(a, b);
        }
        if let Some((lo, hi)) = range {
            let f = self.function(Kernels::Smooth, "clamp_f32")?;
            let (len, cfg) = (a.len(), self.grid(a.len()));
            let n = len as i64;
            let mut l = st.launch_builder(&f);
            l.arg(&mut *a).arg(&n).arg(&lo).arg(&hi);
            // SAFETY: a holds n floats; the kernel is a grid-stride loop over n.
            unsafe { l.launch(cfg) }?;
        }
        st.synchronize()?;
        Ok(())
    }
}

/// Threads per block of the tiled passes, outputs per thread of `smooth_columns` and of
/// `smooth_rows`, and the largest radius they take (as in kernels/smooth.cu).
const TILE_X: u32 = 128;
const TILE_SEG: u32 = 32;
const TILE_ROW_OUT: u32 = 4;
const TILE_MAX_R: usize = 30;

impl Gpu {
    /// The kernel and launch of one pass along `axis` with taps of radius `r`: a tiled one
    /// (samples read once into shared memory, at most 46 KiB of it at the largest radius)
    /// where the radius and the grid's limits allow, else one thread per voxel.
    fn pass(&self, dims: [usize; 3], axis: usize, r: usize) -> (&'static str, LaunchConfig) {
        let [nx, ny, nz] = dims;
        let blocks_x = (nx as u32).div_ceil(TILE_X);
        let row_blocks = (nx as u32).div_ceil(TILE_X * TILE_ROW_OUT);
        let fits = |a: usize, b: usize| a <= 65_535 && b <= 65_535;
        let tiled = |name, grid_dim, rows: usize| {
            let shared_mem_bytes = (rows * 4) as u32 * if name == "smooth_rows" { 1 } else { TILE_X };
            (name, LaunchConfig { grid_dim, block_dim: (TILE_X, 1, 1), shared_mem_bytes })
        };
        let seg = TILE_SEG as usize;
        match axis {
            _ if r > TILE_MAX_R => {}
            0 if fits(ny, nz) => {
                let run = (TILE_X * TILE_ROW_OUT) as usize + 2 * r;
                return tiled("smooth_rows", (row_blocks, ny as u32, nz as u32), run);
            }
            1 if fits(ny.div_ceil(seg), nz) => {
                return tiled("smooth_columns", (blocks_x, ny.div_ceil(seg) as u32, nz as u32), seg + 2 * r);
            }
            2 if fits(nz.div_ceil(seg), ny) => {
                return tiled("smooth_columns", (blocks_x, nz.div_ceil(seg) as u32, ny as u32), seg + 2 * r);
            }
            _ => {}
        }
        if fits(ny, nz) {
            let grid_dim = ((nx as u32).div_ceil(THREADS), ny as u32, nz as u32);
            ("smooth_pass_3d", LaunchConfig { grid_dim, block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 })
        } else {
            ("smooth_pass", self.grid(nx * ny * nz))
        }
    }

    /// A grid-stride launch over `n` elements: enough blocks to fill every multiprocessor of
    /// this device 32 times over, no more.
    pub(super) fn grid(&self, n: usize) -> LaunchConfig {
        let most = (self.multiprocessors as u64 * 32).max(1);
        let blocks = (n as u64).div_ceil(THREADS as u64).clamp(1, most) as u32;
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 }
    }

    /// Median seconds of `reps` smoothings of `field` with the data resident on the GPU
    /// (upload and download not counted), after one warm-up.
    pub fn time_smoothing(&self, field: &ScalarField, s: &Smoothing, reps: usize) -> Result<f64, GpuError> {
        // Uploads and smooths once: the warm-up.
        let (mut a, mut b) = self.smooth_on_device(field, s)?;
        let mut times: Vec<f64> = (0..reps.max(1))
            .map(|_| {
                let t = std::time::Instant::now();
                self.smooth_resident(&mut a, &mut b, field, s).map(|_| t.elapsed().as_secs_f64())
            })
            .collect::<Result<_, _>>()?;
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}
