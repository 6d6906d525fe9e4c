//! The ECC scale-space on the GPU: χ at a grid of thresholds of a field smoothed at each of a
//! range of scales, with the field uploaded once and only the grid's sums coming back per scale
//! (kernels/ecc.cu, `grid_f32_*`): no sort of the smoothed values and no curve of millions of
//! points, which is what the exact ECC of a smoothed (all-distinct) field spends its time on.

use super::Kernels;
use super::{Gpu, GpuError};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::topo::ecc::{Construction, EccOptions, Filtration};
use topoview_core::topo::smooth::Smoothing;
use topoview_core::with_samples;

/// Most grid thresholds the kernel takes (its shared-memory histogram).
pub const GRID_MAX: usize = 1024;

impl Gpu {
    /// For each of `sigmas` (voxels, > 0), χ at the ascending `grid` of `field` smoothed as
    /// [`topoview_core::topo::smooth::smooth`] does: what `chi_at` reads off the exact curve of the
    /// smoothed field, at each grid threshold. Progress: `(ndim + 1) * voxels` ticks per scale.
    pub fn smoothed_chi_on_grid(
        &self,
        field: &ScalarField,
        sigmas: &[f64],
        opts: &EccOptions,
        grid: &[f64],
        ctl: &Control,
    ) -> Result<Vec<Vec<i64>>, GpuError> {
        if grid.is_empty() || grid.len() > GRID_MAX || grid.windows(2).any(|w| w[0] > w[1]) {
            return Err(GpuError::TooLarge(format!("a grid of 1 to {GRID_MAX} ascending thresholds")));
        }
        self.ctx.bind_to_thread()?;
        let st = &self.stream;
        let n = field.len();
        let need = n * (12 + field.dtype().size());
        let (free, _) = self.memory()?;
        if need > free {
            return Err(GpuError::TooLarge(format!(
                "the scale-space needs {need} bytes of GPU memory, {free} are free"
            )));
        }
        let mut original: CudaSlice<f32> = st.alloc_zeros(n)?;
        with_samples!(field.samples(), v => self.to_f32(v, &mut original))?;
        let (mut a, mut b): (CudaSlice<f32>, CudaSlice<f32>) = (st.alloc_zeros(n)?, st.alloc_zeros(n)?);
        let grid_d = st.clone_htod(grid)?;
        let mut hist: CudaSlice<u64> = st.alloc_zeros(grid.len())?;
        let [nx, ny, nz] = topoview_core::field::padded_dims(field.shape());
        let sup = opts.filtration == Filtration::Superlevel;
        let flags = sup as i32 | ((opts.construction == Construction::Vertices) as i32) << 1;
        let name = if field.ndim() == 3 { "grid_f32_3d" } else { "grid_f32_2d" };
        let func = self.function(Kernels::Ecc, name)?;
        let bins = grid.len() as i32;
        let mut rows = Vec::with_capacity(sigmas.len());
        for &sigma in sigmas {
            st.memcpy_dtod(&original, &mut a)?;
            self.smooth_resident(&mut a, &mut b, field, &Smoothing::voxels(sigma))?;
            st.memset_zeros(&mut hist)?;
            let mut z0 = 0;
            while z0 < nz {
                let z1 = (z0 + 65_535).min(nz);
                let geo = super::ecc::Geo::new([nx, ny, nz], 0, z0, flags);
                let cfg = LaunchConfig {
                    grid_dim: (
                        (nx as u32).div_ceil(128),
                        (ny as u32).div_ceil(super::ecc::ROWS),
                        (z1 - z0) as u32,
                    ),
                    block_dim: (128, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut l = st.launch_builder(&func);
                l.arg(&a).arg(&geo).arg(&grid_d).arg(&bins).arg(&mut hist);
                // SAFETY: a holds the whole field, grid_d and hist `bins` entries (<= GRID_MAX,
                // the kernel's shared arrays).
                unsafe { l.launch(cfg) }?;
                z0 = z1;
            }
            // Two's-complement sums: the u64 atomics added each block's signed total.
            let sums: Vec<i64> = st.clone_dtoh(&hist)?.into_iter().map(|s| s as i64).collect();
            rows.push(cumulate(&sums, sup));
            ctl.tick((field.ndim() as u64 + 1) * n as u64);
            if ctl.cancelled() {
                return Err(GpuError::Cancelled);
            }
        }
        Ok(rows)
    }
}

/// χ at each grid threshold from the changes binned at it: running sums upwards for sublevel
/// sets (a voxel is in the sets of every larger threshold), downwards for superlevel sets.
fn cumulate(sums: &[i64], sup: bool) -> Vec<i64> {
    let mut out = vec![0; sums.len()];
    let mut run = 0;
    let order: Box<dyn Iterator<Item = usize>> =
        if sup { Box::new((0..sums.len()).rev()) } else { Box::new(0..sums.len()) };
    for i in order {
        run += sums[i];
        out[i] = run;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums_run_up_for_sublevel_and_down_for_superlevel() {
        assert_eq!(super::cumulate(&[1, -2, 3], false), vec![1, -1, 2]);
        assert_eq!(super::cumulate(&[1, -2, 3], true), vec![2, 1, 3]);
    }
}
