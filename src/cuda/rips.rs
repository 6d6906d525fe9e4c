//! Vietoris-Rips apparent pairs on the GPU (kernels/rips.cu, Ripser++'s parallel apparent
//! pairs): one thread a column, the distances and the binomial table resident on the device
//! for all of a barcode's dimensions. Equal to the CPU's (`tests/cuda.rs`).

use super::Kernels;
use super::{Gpu, GpuError};
use crate::control::Control;
use crate::topo::rips::Columns;
use crate::topo::rips::index::Entry;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// Columns per launch (20 bytes each on the device: number, diameter, result), so that
/// cancellation is checked between launches of a few milliseconds.
const BATCH: usize = 1 << 22;

const BLOCK: u32 = 256;

/// A barcode's distances and binomial table on the device.
pub struct RipsDevice {
    lower: CudaSlice<f32>,
    binom: CudaSlice<u64>,
    width: i32,
    n: i32,
}

impl Gpu {
    /// Puts `cols`' distances and binomials on the device (once a barcode).
    pub fn rips_upload(&self, cols: &Columns) -> Result<RipsDevice, GpuError> {
        self.ctx.bind_to_thread()?;
        let c = cols.complex;
        let (table, width) = c.table.raw();
        let n = c.d.len();
        if n >= i32::MAX as usize {
            return Err(GpuError::TooLarge(format!("{n} points: the GPU's Rips takes fewer than 2^31")));
        }
        let need = c.d.lower().len() * 4 + table.len() * 8 + BATCH * 20;
        let (free, _) = self.memory()?;
        if need > free {
            return Err(GpuError::TooLarge(format!(
                "the distances of {n} points need {need} bytes of GPU memory, {free} are free"
            )));
        }
        // An empty slice cannot be allocated: one unused entry for a single point.
        let one = [0f32];
        let lower = if c.d.lower().is_empty() { &one[..] } else { c.d.lower() };
        Ok(RipsDevice {
            lower: self.stream.clone_htod(lower)?,
            binom: self.stream.clone_htod(table)?,
            width: width as i32,
            n: n as i32,
        })
    }

    /// The apparent pair of each of `cols`' columns, as [`crate::topo::rips::apparent_on_cpu`]
    /// finds them.
    pub fn rips_apparent(
        &self,
        dev: &RipsDevice,
        cols: &Columns,
        ctl: &Control,
    ) -> Result<Vec<Option<Entry>>, GpuError> {
        self.ctx.bind_to_thread()?;
        let st = &self.stream;
        let func = self.function(Kernels::Rips, "rips_apparent")?;
        let dim = cols.dim as i32;
        let mut found = Vec::with_capacity(cols.columns.len());
        for batch in cols.columns.chunks(BATCH) {
            ctl.check()?;
            let numbers: Vec<u64> = batch.iter().map(|e| e.index).collect();
            let diameters: Vec<f32> = batch.iter().map(|e| e.diameter).collect();
            let numbers_d = st.clone_htod(&numbers)?;
            let diameters_d = st.clone_htod(&diameters)?;
            let mut out: CudaSlice<u64> = st.alloc_zeros(batch.len())?;
            let count = batch.len() as u64;
            let blocks = (batch.len() as u32).div_ceil(BLOCK).min(self.multiprocessors * 64).max(1);
            let cfg =
                LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
            let mut launch = st.launch_builder(&func);
            launch
                .arg(&dev.lower)
                .arg(&dev.binom)
                .arg(&dev.width)
                .arg(&dev.n)
                .arg(&dim)
                .arg(&numbers_d)
                .arg(&diameters_d)
                .arg(&count)
                .arg(&mut out);
            // SAFETY: the arguments match rips_apparent's signature in kernels/rips.cu, and
            // every buffer holds `count` entries (the distances and table, the whole complex).
            unsafe { launch.launch(cfg) }?;
            let cofacets = st.clone_dtoh(&out)?;
            found.extend(
                cofacets
                    .iter()
                    .zip(batch)
                    .map(|(&t, s)| (t != u64::MAX).then_some(Entry { diameter: s.diameter, index: t })),
            );
        }
        Ok(found)
    }
}
