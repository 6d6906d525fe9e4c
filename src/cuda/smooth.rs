//! Gaussian smoothing on the GPU, bit for bit the CPU's (see kernels/smooth.cu).

use super::Kernels;
use super::{DeviceSample, Gpu, GpuError};
use crate::field::{Samples, ScalarField};
use crate::topo::smooth::{Smoothing, taps};
use crate::with_samples;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

const THREADS: u32 = 256;

impl Gpu {
    /// Smooths `field` as [`crate::topo::smooth::smooth`] does (same taps, boundary, order and
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
        opts: &crate::topo::ecc::EccOptions,
        ctl: &crate::control::Control,
    ) -> Result<(ScalarField, crate::topo::ecc::Ecc), GpuError> {
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
    ) -> Result<(f64, crate::topo::ecc::Ecc), GpuError> {
        let (mut a, mut b) = self.smooth_on_device(field, s)?;
        let opts = crate::topo::ecc::EccOptions::default();
        let ctl = crate::control::Control::default();
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
        if let Some(same) =
            bytemuck::try_cast_slice::<T, f32>(v).ok().filter(|_| T::DTYPE == crate::field::Dtype::F32)
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
        // One thread per voxel of an (x, y, z) grid where the grid's limits allow it.
        let gridded = field.dims()[1] <= 65_535 && field.dims()[2] <= 65_535;
        let f = self.function(Kernels::Smooth, if gridded { "smooth_pass_3d" } else { "smooth_pass" })?;
        let [nx, ny, nz] = field.dims().map(|d| d as i32);
        let cfg = if gridded {
            LaunchConfig {
                grid_dim: ((nx as u32).div_ceil(THREADS), ny as u32, nz as u32),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: 0,
            }
        } else {
            self.grid(field.len())
        };
        let sig = s.sigma_voxels(field);
        for (axis, &sigma) in sig.iter().enumerate().take(field.ndim()) {
            let w = taps(sigma, s.truncate);
            if w.len() == 1 {
                continue;
            }
            let wd = st.clone_htod(&w)?;
            let (axis, nt) = (axis as i32, w.len() as i32);
            let mut l = st.launch_builder(&f);
            l.arg(&*a).arg(&mut *b).arg(&nx).arg(&ny).arg(&nz).arg(&axis).arg(&wd).arg(&nt);
            // SAFETY: a and b hold nx*ny*nz floats, wd holds nt taps; both kernels bound-check.
            unsafe { l.launch(cfg) }?;
            std::mem::swap(a, b);
        }
        st.synchronize()?;
        Ok(())
    }
}

impl Gpu {
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
