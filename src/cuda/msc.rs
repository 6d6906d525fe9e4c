//! The Morse-Smale complex's grid-sized stages on the GPU (kernels/msc.cu): the discrete
//! gradient (one thread per vertex pairs its lower star as the CPU does, so the codes are the
//! CPU's bit for bit) and the manifold labels (pointer jumping on the codes, which stay on the
//! device in between). The stages on the critical points (arcs, persistence, hierarchy) run on
//! the CPU on these results.

use super::{DeviceSample, Gpu, GpuError, Kernels};
use crate::control::Control;
use crate::field::ScalarField;
use crate::topo::msc::complex::{CriticalPoint, Labels};
use crate::topo::msc::gradient::Gradient;
use crate::topo::msc::grid::CellGrid;
use crate::with_samples;
use cudarc::driver::{CudaSlice, PushKernelArg};

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
    ) -> Result<(Gradient, DeviceGradient), GpuError> {
        // The kernels index cells with 64-bit integers but take the grid's sides as 32-bit
        // ones; the complex's ids are 32-bit (see `MscError::TooLarge`).
        if grid.n_cells() > i32::MAX as usize {
            return Err(GpuError::TooLarge(format!("{} cells: more than 2^31", grid.n_cells())));
        }
        with_samples!(field.samples(), v => self.gradient_of(v, grid))
    }

    fn gradient_of<T: DeviceSample>(
        &self,
        v: &[T],
        grid: CellGrid,
    ) -> Result<(Gradient, DeviceGradient), GpuError> {
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
        let field = st.clone_htod(v)?;
        let mut codes: CudaSlice<u8> = st.alloc_zeros(bytes)?;
        let f = self.function(Kernels::Msc, &format!("gradient_{}", T::NAME))?;
        let [nx, ny, nz] = grid.vdims.map(|d| d as i32);
        let mut l = st.launch_builder(&f);
        l.arg(&field).arg(&mut codes).arg(&nx).arg(&ny).arg(&nz);
        // SAFETY: `field` holds nx*ny*nz samples of T, `codes` a bit over 4 bits per cell of
        // the (2nx-1)(2ny-1)(2nz-1) grid (whole words); the kernel is a grid-stride loop over the
        // vertices and writes only cells of their lower stars, which lie on the grid.
        unsafe { l.launch(self.grid(v.len())) }?;
        let mut out = st.clone_dtoh(&codes)?;
        out.truncate(grid.n_cells().div_ceil(2));
        Ok((Gradient::from_codes(grid, out), DeviceGradient { codes, grid }))
    }

    /// Basins and mountains of the gradient `d`, whose critical points are `critical` (sorted
    /// by index, then cell, as the complex holds them): equal to
    /// [`crate::topo::msc::complex::labels`]'s. `ctl` is checked between rounds.
    pub fn msc_labels(
        &self,
        d: &DeviceGradient,
        critical: &[CriticalPoint],
        ctl: &Control,
    ) -> Result<Labels, GpuError> {
        self.ctx.bind_to_thread()?;
        let st = &self.stream;
        let grid = d.grid;
        let [nx, ny, nz] = grid.vdims.map(|n| n as i32);
        // Extrema in cell order are in vertex (dual) order too: the grids are nested.
        let minima: Vec<u32> =
            critical.iter().take_while(|p| p.index == 0).map(|p| grid.cell_vertex(p.cell) as u32).collect();
        let first_max = critical.iter().position(|p| p.index as usize == grid.ndim).unwrap_or(critical.len());
        let maxima: Vec<u32> = critical[first_max..].iter().map(|p| grid.dual_index(p.cell) as u32).collect();

        let n: usize = grid.vdims.iter().product();
        let mut next: CudaSlice<u32> = st.alloc_zeros(n)?;
        let f = self.function(Kernels::Msc, "basin_next")?;
        let mut l = st.launch_builder(&f);
        l.arg(&d.codes).arg(&mut next).arg(&nx).arg(&ny).arg(&nz);
        // SAFETY: `codes` holds the grid's codes, `next` one entry per vertex; the kernel is a
        // grid-stride loop over the vertices.
        unsafe { l.launch(self.grid(n)) }?;
        let basins = self.jump_to_labels(next, &minima, 0, ctl)?;

        let n: usize = grid.dual_dims().iter().product();
        let mut next: CudaSlice<u32> = st.alloc_zeros(n)?;
        let f = self.function(Kernels::Msc, "mountain_next")?;
        let ndim = grid.ndim as i32;
        let mut l = st.launch_builder(&f);
        l.arg(&d.codes).arg(&mut next).arg(&nx).arg(&ny).arg(&nz).arg(&ndim);
        // SAFETY: as above, one entry per top cell (the dual grid's n elements).
        unsafe { l.launch(self.grid(n)) }?;
        let mountains = self.jump_to_labels(next, &maxima, first_max as u32, ctl)?;
        Ok((basins, mountains))
    }

    /// Pointer-jumps the successors `next` (each an index into it, itself at an extremum, or
    /// NO_LABEL) to their extrema, which become `base` plus their place in `roots`.
    fn jump_to_labels(
        &self,
        mut next: CudaSlice<u32>,
        roots: &[u32],
        base: u32,
        ctl: &Control,
    ) -> Result<Vec<u32>, GpuError> {
        let st = &self.stream;
        let n = next.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let jump = self.function(Kernels::Msc, "jump")?;
        let n64 = n as i64;
        let mut changed: CudaSlice<i32> = st.alloc_zeros(1)?;
        // Each round halves every path, and a path of the grid has fewer than 2^32 steps: 33
        // rounds end with one that changes nothing.
        let mut rounds = 0;
        loop {
            ctl.check()?;
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
