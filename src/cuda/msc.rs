//! The discrete gradient of the Morse-Smale complex on the GPU (kernels/msc.cu): one thread per
//! vertex pairs its lower star as the CPU does, so the codes are the CPU's bit for bit and every
//! later stage (arcs, manifolds, persistence, hierarchy) runs on them unchanged.

use super::{DeviceSample, Gpu, GpuError, Kernels};
use crate::field::ScalarField;
use crate::topo::msc::gradient::Gradient;
use crate::topo::msc::grid::CellGrid;
use crate::with_samples;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// Seconds spent by [`Gpu::msc_gradient`]: the field's upload, the kernel, the codes' download.
#[derive(Clone, Copy, Debug, Default)]
pub struct GradientTimes {
    pub upload: f64,
    pub kernel: f64,
    pub download: f64,
}

impl Gpu {
    /// The discrete gradient of `field` on `grid` (its cell grid), equal to
    /// [`crate::topo::msc::gradient::gradient`]'s. The caller has checked the field (2D or 3D,
    /// no NaN, fewer than 2^31 cells); it must fit in GPU memory with its codes (4 bits a cell).
    pub fn msc_gradient(
        &self,
        field: &ScalarField,
        grid: CellGrid,
    ) -> Result<(Gradient, GradientTimes), GpuError> {
        with_samples!(field.samples(), v => self.gradient_of(v, grid))
    }

    fn gradient_of<T: DeviceSample>(
        &self,
        v: &[T],
        grid: CellGrid,
    ) -> Result<(Gradient, GradientTimes), GpuError> {
        self.ctx.bind_to_thread()?;
        let st = &self.stream;
        // The kernel ors 4-bit codes into 32-bit words: the buffer is whole words, of which the
        // first n_cells / 2 bytes (rounded up) are the CPU's layout on a little-endian host.
        let bytes = grid.n_cells().div_ceil(8) * 4;
        let need = bytes + std::mem::size_of_val(v);
        let (free, _) = self.memory()?;
        if need > free {
            return Err(GpuError::TooLarge(format!(
                "the Morse-Smale gradient needs {} MiB of GPU memory, {} MiB are free",
                need >> 20,
                free >> 20
            )));
        }
        let mut times = GradientTimes::default();
        let t = std::time::Instant::now();
        let field = st.clone_htod(v)?;
        let mut codes: CudaSlice<u8> = st.alloc_zeros(bytes)?;
        st.synchronize()?;
        times.upload = t.elapsed().as_secs_f64();

        let t = std::time::Instant::now();
        let f = self.function(Kernels::Msc, &format!("gradient_{}", T::NAME))?;
        let [nx, ny, nz] = grid.vdims.map(|d| d as i32);
        let mut l = st.launch_builder(&f);
        l.arg(&field).arg(&mut codes).arg(&nx).arg(&ny).arg(&nz);
        // SAFETY: `field` holds nx*ny*nz samples of T, `codes` a bit over 4 bits per cell of
        // the (2nx-1)(2ny-1)(2nz-1) grid (whole words); the kernel is a grid-stride loop over the
        // vertices and writes only cells of their lower stars, which lie on the grid.
        unsafe { l.launch(self.grid(v.len())) }?;
        st.synchronize()?;
        times.kernel = t.elapsed().as_secs_f64();

        let t = std::time::Instant::now();
        let mut out = st.clone_dtoh(&codes)?;
        out.truncate(grid.n_cells().div_ceil(2));
        times.download = t.elapsed().as_secs_f64();
        Ok((Gradient::from_codes(grid, out), times))
    }
}
