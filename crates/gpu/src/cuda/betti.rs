//! Betti curves on the GPU (kernels/betti.cu): each pass's merges per voxel as the edges of the
//! minimum spanning forest of the grid graph, found by Borůvka's algorithm, with the order
//! sorted on the host ([`topoview_core::topo::betti`]'s plan) and only the merge counts coming back.
//! Equal to the CPU's sweeps (`tests/it/cuda.rs`).

use super::Kernels;
use super::{Gpu, GpuError};
use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};
use topoview_core::control::Control;
use topoview_core::topo::betti::{Connectivity, Merges, Plan};

/// Mirrors `struct Grid` in kernels/betti.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct GridArgs {
    nx: i32,
    ny: i32,
    nz: i32,
    three_d: i32,
    full: i32,
    around: i32,
}

// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for GridArgs {}

/// Device bytes per voxel: order, time, component, best edge, target, merges.
const BYTES_PER_VOXEL: usize = 4 + 4 + 4 + 8 + 4 + 1;

const BLOCK: u32 = 256;

fn blocks(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(BLOCK), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl Gpu {
    /// The merges of both of `plan`'s passes. Progress: one tick per voxel and pass, at the end.
    pub fn betti_merges(&self, plan: &Plan, ctl: &Control) -> Result<Merges, GpuError> {
        let n = plan.grid.len();
        if n >= i32::MAX as usize {
            return Err(GpuError::TooLarge(format!(
                "{n} voxels: the GPU's Betti curves take fewer than 2^31"
            )));
        }
        self.ctx.bind_to_thread()?;
        let need = (n + 1) * BYTES_PER_VOXEL;
        let (free, _) = self.memory()?;
        if need > free {
            return Err(GpuError::TooLarge(format!(
                "the Betti curves need {need} bytes of GPU memory, {free} are free"
            )));
        }
        let st = &self.stream;
        let order = st.clone_htod(&plan.order.voxels)?;
        let finite = plan.order.starts[plan.order.groups()];
        let mut time: CudaSlice<u32> = st.alloc_zeros(n)?;
        let mut comp: CudaSlice<u32> = st.alloc_zeros(n + 1)?;
        let mut best: CudaSlice<u64> = st.alloc_zeros(n + 1)?;
        let mut target: CudaSlice<u32> = st.alloc_zeros(n + 1)?;
        let mut flag: CudaSlice<u32> = st.alloc_zeros(1)?;
        let [nx, ny, nz] = plan.grid.n.map(|d| d as i32);
        let mut pass = |backward: bool, conn: Connectivity| -> Result<Vec<u8>, GpuError> {
            let g = GridArgs {
                nx,
                ny,
                nz,
                three_d: plan.grid.three_d as i32,
                full: (conn == Connectivity::Full) as i32,
                around: backward as i32,
            };
            let vertices = n + backward as usize;
            let (n32, finite32, vertices32) = (n as u32, finite as u32, vertices as u32);
            let len = if backward { n } else { finite };
            let mut merges: CudaSlice<u32> = st.alloc_zeros(len.div_ceil(4).max(1))?;
            let func = |name| self.function(Kernels::Betti, name);
            let (times, init, reset) = (func("betti_times")?, func("betti_init")?, func("betti_reset")?);
            let (best_k, target_k, hook, jump) =
                (func("betti_best")?, func("betti_target")?, func("betti_hook")?, func("betti_jump")?);
            let back = backward as i32;
            // SAFETY: the buffers hold n + 1 entries (merges: one byte per time, times < len), and
            // each kernel checks its index against the count it is given; so every launch below.
            unsafe {
                let mut l = st.launch_builder(&times);
                l.arg(&order).arg(&n32).arg(&finite32).arg(&back).arg(&mut time);
                l.launch(blocks(n))?;
                let mut l = st.launch_builder(&init);
                l.arg(&vertices32).arg(&mut comp);
                l.launch(blocks(vertices))?;
            }
            loop {
                st.memset_zeros(&mut flag)?;
                // SAFETY: as above.
                unsafe {
                    let mut l = st.launch_builder(&reset);
                    l.arg(&vertices32).arg(&mut best);
                    l.launch(blocks(vertices))?;
                    let mut l = st.launch_builder(&best_k);
                    l.arg(&g).arg(&time).arg(&comp).arg(&mut best).arg(&mut flag);
                    l.launch(blocks(n))?;
                }
                if st.clone_dtoh(&flag)?[0] == 0 {
                    break;
                }
                // SAFETY: as above.
                unsafe {
                    let mut l = st.launch_builder(&target_k);
                    l.arg(&g).arg(&time).arg(&comp).arg(&best).arg(&mut target);
                    l.launch(blocks(n))?;
                    let mut l = st.launch_builder(&hook);
                    l.arg(&vertices32).arg(&best).arg(&target).arg(&mut comp).arg(&mut merges);
                    l.launch(blocks(vertices))?;
                }
                loop {
                    st.memset_zeros(&mut flag)?;
                    // SAFETY: as above.
                    unsafe {
                        let mut l = st.launch_builder(&jump);
                        l.arg(&vertices32).arg(&mut comp).arg(&mut flag);
                        l.launch(blocks(vertices))?;
                    }
                    if st.clone_dtoh(&flag)?[0] == 0 {
                        break;
                    }
                }
                if ctl.cancelled() {
                    return Err(GpuError::Cancelled);
                }
            }
            let words = st.clone_dtoh(&merges)?;
            Ok(words.iter().flat_map(|w| w.to_le_bytes()).take(len).collect())
        };
        let set = pass(false, plan.set)?;
        let outside = if plan.grid.three_d { Some(pass(true, plan.outside)?) } else { None };
        // At the end only: a failure half-way leaves the bar to the CPU's passes.
        ctl.tick(topoview_core::topo::betti::work_of(&plan.grid));
        Ok(Merges { set, outside })
    }
}
