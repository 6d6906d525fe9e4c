//! The Morse-Smale complex's grid-sized stages on the GPU (kernels/msc.cu): the discrete
//! gradient (one thread per vertex pairs its lower star as the CPU does, so the codes are the
//! CPU's bit for bit) and the manifold labels (pointer jumping on the codes, which stay on the
//! device in between). The stages on the critical points (arcs, persistence, hierarchy) run on
//! the CPU on these results.

use super::{DeviceSample, Gpu, GpuError, Kernels};
use crate::field::ScalarField;
use crate::topo::msc::complex::{CriticalPoint, Labels};
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

/// A gradient's codes left on the device for the labels (32-bit words, 8 cells each).
pub struct DeviceGradient {
    codes: CudaSlice<u8>,
    grid: CellGrid,
}

impl Gpu {
    /// The discrete gradient of `field` on `grid` (its cell grid), equal to
    /// [`crate::topo::msc::gradient::gradient`]'s, and its codes kept on the device for
    /// [`Gpu::msc_labels`]. The caller has checked the field (2D or 3D, no NaN, fewer than 2^31
    /// cells); it must fit in GPU memory with its codes (4 bits a cell).
    pub fn msc_gradient(
        &self,
        field: &ScalarField,
        grid: CellGrid,
    ) -> Result<(Gradient, DeviceGradient, GradientTimes), GpuError> {
        with_samples!(field.samples(), v => self.gradient_of(v, grid))
    }

    fn gradient_of<T: DeviceSample>(
        &self,
        v: &[T],
        grid: CellGrid,
    ) -> Result<(Gradient, DeviceGradient, GradientTimes), GpuError> {
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
        Ok((Gradient::from_codes(grid, out), DeviceGradient { codes, grid }, times))
    }

    /// Basins and mountains of the gradient `d`, whose critical points are `critical` (sorted
    /// by index, then cell, as the complex holds them): equal to
    /// [`crate::topo::msc::complex::labels`]'s.
    pub fn msc_labels(&self, d: &DeviceGradient, critical: &[CriticalPoint]) -> Result<Labels, GpuError> {
        self.ctx.bind_to_thread()?;
        let grid = d.grid;
        let nd = grid.ndim;
        // Extrema in cell order are in vertex (dual) order too: the grids are nested.
        let minima: Vec<u32> =
            critical.iter().take_while(|p| p.index == 0).map(|p| grid.cell_vertex(p.cell) as u32).collect();
        let first_max = critical.iter().position(|p| p.index as usize == nd).unwrap_or(critical.len());
        let dual: [usize; 3] = std::array::from_fn(|a| if a < nd { grid.vdims[a] - 1 } else { 1 });
        let maxima: Vec<u32> = critical[first_max..]
            .iter()
            .map(|p| {
                let c = grid.coords(p.cell);
                let q: [usize; 3] = std::array::from_fn(|a| if a < nd { c[a] / 2 } else { 0 });
                (q[0] + dual[0] * (q[1] + dual[1] * q[2])) as u32
            })
            .collect();
        let basins = self.jump_to_labels("basin_next", d, grid.vdims.iter().product(), &minima, 0)?;
        let mountains =
            self.jump_to_labels("mountain_next", d, dual.iter().product(), &maxima, first_max as u32)?;
        Ok((basins, mountains))
    }

    /// One label array: the successors by `kernel` on `n` elements, pointer-jumped to their
    /// extrema, which become `base` plus their place in `roots`.
    fn jump_to_labels(
        &self,
        kernel: &str,
        d: &DeviceGradient,
        n: usize,
        roots: &[u32],
        base: u32,
    ) -> Result<Vec<u32>, GpuError> {
        let st = &self.stream;
        if n == 0 {
            return Ok(Vec::new());
        }
        let [nx, ny, nz] = d.grid.vdims.map(|v| v as i32);
        let ndim = d.grid.ndim as i32;
        let mut next: CudaSlice<u32> = st.alloc_zeros(n)?;
        let f = self.function(Kernels::Msc, kernel)?;
        let mut l = st.launch_builder(&f);
        l.arg(&d.codes).arg(&mut next).arg(&nx).arg(&ny).arg(&nz);
        if kernel == "mountain_next" {
            l.arg(&ndim);
        }
        // SAFETY: `codes` holds the grid's codes, `next` one entry per vertex (basin_next) or
        // top cell (mountain_next); both kernels are grid-stride loops over those elements.
        unsafe { l.launch(self.grid(n)) }?;
        let jump = self.function(Kernels::Msc, "jump")?;
        let n64 = n as i64;
        let mut changed: CudaSlice<i32> = st.alloc_zeros(1)?;
        // Each round halves every path, and a path of the grid has fewer than 2^32 steps: 33
        // rounds end with one that changes nothing.
        let mut rounds = 0;
        loop {
            if rounds == 33 {
                return Err(GpuError::Driver("pointer jumping did not converge".into()));
            }
            rounds += 1;
            st.memset_zeros(&mut changed)?;
            let mut l = st.launch_builder(&jump);
            l.arg(&mut next).arg(&n64).arg(&mut changed);
            // SAFETY: `next` holds n entries, each an index below n or NO_LABEL.
            unsafe { l.launch(self.grid(n)) }?;
            if st.clone_dtoh(&changed)?[0] == 0 {
                break;
            }
        }
        let roots_d = st.clone_htod(roots)?;
        let m = roots.len() as i32;
        let label = self.function(Kernels::Msc, "label")?;
        let mut l = st.launch_builder(&label);
        l.arg(&mut next).arg(&n64).arg(&roots_d).arg(&m).arg(&base);
        // SAFETY: `next` holds n entries, `roots_d` m.
        unsafe { l.launch(self.grid(n)) }?;
        Ok(st.clone_dtoh(&next)?)
    }
}
