//! Vietoris-Rips on the GPU (kernels/rips.cu, after Ripser++): the apparent pairs of a
//! dimension's columns (one thread a column), and the listing of the next dimension's columns
//! (one warp a simplex, each cofacet met once; the top dimension's apparent columns left out
//! there), with the distances, the binomial table and the neighbour lists resident on the
//! device for all of a barcode's dimensions. Equal to the CPU's (`tests/it/cuda.rs`).

use super::Kernels;
use super::{Gpu, GpuError};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use topoview_core::control::{Cancelled, Control};
use topoview_core::topo::rips::index::{Complex, Entry};
use topoview_core::topo::rips::stages::Stages;
use topoview_core::topo::rips::{Columns, Listed, Listing, Offload, RipsError};

/// Columns (or simplices) per launch, so that cancellation is checked between launches: 20
/// bytes each on the device for the apparent pairs (number, diameter, result), 12 for a
/// listing's simplices, whose cofacets go to outputs sized by what each launch counts.
const BATCH: usize = 1 << 22;

const BLOCK: u32 = 256;

/// A barcode's distances, binomial table and neighbour lists on the device.
pub struct RipsDevice {
    lower: CudaSlice<f32>,
    binom: CudaSlice<u64>,
    width: i32,
    n: i32,
    /// The neighbour lists as compressed rows (starts, vertices, distances), where the complex
    /// has them.
    neighbours: Option<(CudaSlice<u64>, CudaSlice<u32>, CudaSlice<f32>)>,
}

/// An empty slice cannot be allocated: one unused entry stands for none.
fn or_one<T: Default + Copy>(v: &[T]) -> std::borrow::Cow<'_, [T]> {
    if v.is_empty() { vec![T::default()].into() } else { v.into() }
}

impl Gpu {
    /// Puts the complex's distances, binomials and neighbour lists on the device (once a
    /// barcode).
    pub fn rips_upload(&self, c: &Complex) -> Result<RipsDevice, GpuError> {
        self.ctx.bind_to_thread()?;
        let (table, width) = c.table.raw();
        let n = c.d.len();
        if n >= i32::MAX as usize {
            return Err(GpuError::TooLarge(format!("{n} points: the GPU's Rips takes fewer than 2^31")));
        }
        let rows = c.neighbors.map(|nb| nb.rows());
        let lists = rows.as_ref().map_or(0, |r| r.0.len() * 8 + r.1.len() * 8);
        let need = c.d.lower().len() * 4 + table.len() * 8 + lists + BATCH * 20;
        let (free, _) = self.memory()?;
        if need > free {
            return Err(GpuError::TooLarge(format!(
                "the distances of {n} points need {need} bytes of GPU memory, {free} are free"
            )));
        }
        let st = &self.stream;
        let lower = match &rows {
            Some((starts, vertices, dists)) => {
                let lists = (
                    st.clone_htod(starts)?,
                    st.clone_htod(&*or_one(vertices))?,
                    st.clone_htod(&*or_one(dists))?,
                );
                let lower = self.lower_from_neighbours(n, c.d.lower().len(), &lists)?;
                return Ok(RipsDevice {
                    lower,
                    binom: st.clone_htod(table)?,
                    width: width as i32,
                    n: n as i32,
                    neighbours: Some(lists),
                });
            }
            None => st.clone_htod(&*or_one(c.d.lower()))?,
        };
        Ok(RipsDevice {
            lower,
            binom: st.clone_htod(table)?,
            width: width as i32,
            n: n as i32,
            neighbours: None,
        })
    }

    /// The lower triangle (`len` entries) of `n` points built on the device from their
    /// neighbour lists, +inf beyond the threshold (see kernels/rips.cu): the lists are
    /// uploaded anyway, and they hold only the edges within the threshold (2 MB for
    /// cyclooctane, whose whole triangle is 73 MB).
    fn lower_from_neighbours(
        &self,
        n: usize,
        len: usize,
        (starts, vertices, dists): &(CudaSlice<u64>, CudaSlice<u32>, CudaSlice<f32>),
    ) -> Result<CudaSlice<f32>, GpuError> {
        let st = &self.stream;
        let mut lower: CudaSlice<f32> = st.alloc_zeros(len.max(1))?;
        let count = len.max(1) as u64;
        let most = self.multiprocessors as usize * 64;
        let blocks = |items: usize| items.div_ceil(BLOCK as usize).clamp(1, most) as u32;
        let cfg = |items| LaunchConfig {
            grid_dim: (blocks(items), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let fill = self.function(Kernels::Rips, "rips_fill")?;
        let mut launch = st.launch_builder(&fill);
        launch.arg(&mut lower).arg(&count).arg(&f32::INFINITY);
        // SAFETY: rips_fill(float*, u64, float) writes `count` entries, `lower`'s length.
        unsafe { launch.launch(cfg(len)) }?;
        let scatter = self.function(Kernels::Rips, "rips_scatter_neighbours")?;
        let n32 = n as i32;
        let mut launch = st.launch_builder(&scatter);
        launch.arg(&mut lower).arg(&n32).arg(starts).arg(vertices).arg(dists);
        // SAFETY: the arguments match rips_scatter_neighbours's signature; `starts` has n + 1
        // offsets into `vertices` and `dists`, and each entry below its point lands inside the
        // triangle of n points (`lower` holds all of it).
        unsafe { launch.launch(cfg(n)) }?;
        Ok(lower)
    }

    /// The apparent pair of each of `cols`' columns, as [`topoview_core::topo::rips::apparent_on_cpu`]
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
        let null = 0u64;
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
            launch.arg(&dev.lower).arg(&dev.binom).arg(&dev.width).arg(&dev.n).arg(&dim);
            match &dev.neighbours {
                Some((starts, vertices, dists)) => launch.arg(starts).arg(vertices).arg(dists),
                // Null pointers: every point is tried.
                None => launch.arg(&null).arg(&null).arg(&null),
            };
            launch.arg(&numbers_d).arg(&diameters_d).arg(&count).arg(&mut out);
            // SAFETY: the arguments match rips_apparent's signature in kernels/rips.cu, and
            // every buffer holds `count` entries (the distances, table and neighbour lists, the
            // whole complex; null lists mean none).
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

    /// The columns of dimension `l.dim + 1` and, unless it is the top, its simplices, as
    /// [`topoview_core::topo::rips::list_on_cpu`] lists them but in no order.
    pub fn rips_next_columns(
        &self,
        dev: &RipsDevice,
        l: &Listing,
        ctl: &Control,
    ) -> Result<(Vec<Entry>, Vec<Entry>), GpuError> {
        self.ctx.bind_to_thread()?;
        let st = &self.stream;
        let func = self.function(Kernels::Rips, "rips_columns")?;
        let cleared = l.cleared();
        let cleared_d = st.clone_htod(&*or_one(&cleared))?;
        let cleared_count = cleared.len() as u64;
        let (dim, top, threshold) = (l.dim as i32, i32::from(l.top), l.complex.threshold);
        // The outputs' lengths are not known before: each launch counts what it would append,
        // writes what fits, and runs again with room for all when some did not.
        let mut out = [Appended::new(self, 1 << 20)?, Appended::new(self, if l.top { 1 } else { 1 << 22 })?];
        let (mut columns, mut next) = (Vec::new(), Vec::new());
        let null = 0u64;
        for batch in l.simplices.chunks(BATCH) {
            ctl.check()?;
            let numbers: Vec<u64> = batch.iter().map(|e| e.index).collect();
            let diameters: Vec<f32> = batch.iter().map(|e| e.diameter).collect();
            let numbers_d = st.clone_htod(&numbers)?;
            let diameters_d = st.clone_htod(&diameters)?;
            let count = batch.len() as u64;
            // A warp a simplex.
            let blocks = (batch.len() as u32).div_ceil(BLOCK / 32).min(self.multiprocessors * 64).max(1);
            let cfg =
                LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
            loop {
                for o in &mut out {
                    st.memset_zeros(&mut o.count)?;
                }
                let mut launch = st.launch_builder(&func);
                launch.arg(&dev.lower).arg(&dev.binom).arg(&dev.width).arg(&dev.n).arg(&dim).arg(&threshold);
                match &dev.neighbours {
                    Some((starts, vertices, dists)) => launch.arg(starts).arg(vertices).arg(dists),
                    // Null pointers: every point is tried.
                    None => launch.arg(&null).arg(&null).arg(&null),
                };
                launch
                    .arg(&numbers_d)
                    .arg(&diameters_d)
                    .arg(&count)
                    .arg(&cleared_d)
                    .arg(&cleared_count)
                    .arg(&top);
                let [cols, nexts] = &mut out;
                launch.arg(&mut cols.index).arg(&mut cols.diameter).arg(&mut cols.count).arg(&cols.cap);
                launch.arg(&mut nexts.index).arg(&mut nexts.diameter).arg(&mut nexts.count).arg(&nexts.cap);
                // SAFETY: the arguments match rips_columns's signature in kernels/rips.cu; the
                // simplices hold `count` entries, `cleared` `cleared_count` (sorted), each output
                // `cap`, and the neighbour lists (or nulls) and distances the whole complex.
                unsafe { launch.launch(cfg) }?;
                let wanted = [st.clone_dtoh(&out[0].count)?[0], st.clone_dtoh(&out[1].count)?[0]];
                if wanted.iter().zip(&out).all(|(&w, o)| w <= o.cap) {
                    out[0].append(self, wanted[0], &mut columns)?;
                    out[1].append(self, wanted[1], &mut next)?;
                    // Refused as the CPU's listing refuses, before host memory runs out.
                    l.fits(columns.len(), next.len()).map_err(|e| GpuError::TooLarge(e.to_string()))?;
                    break;
                }
                for (o, &w) in out.iter_mut().zip(&wanted) {
                    if w > o.cap {
                        // The old buffers go before the new are made.
                        *o = Appended::empty(self)?;
                        *o = Appended::new(self, w)?;
                    }
                }
            }
        }
        Ok((columns, next))
    }
}

/// An output list of the listing kernel on the device: numbers, diameters, how many were
/// appended (past `cap`, only counted).
struct Appended {
    index: CudaSlice<u64>,
    diameter: CudaSlice<f32>,
    count: CudaSlice<u64>,
    cap: u64,
}

impl Appended {
    fn new(g: &Gpu, cap: u64) -> Result<Appended, GpuError> {
        let (free, _) = g.memory()?;
        if cap.saturating_mul(12) > free as u64 {
            return Err(GpuError::TooLarge(format!(
                "{cap} simplices need {} bytes of GPU memory, {free} are free",
                cap.saturating_mul(12)
            )));
        }
        let st = &g.stream;
        let len = cap as usize;
        Ok(Appended {
            index: st.alloc_zeros(len)?,
            diameter: st.alloc_zeros(len)?,
            count: st.alloc_zeros(1)?,
            cap,
        })
    }

    /// Room for none, in place of buffers being replaced.
    fn empty(g: &Gpu) -> Result<Appended, GpuError> {
        Appended::new(g, 1)
    }

    /// The first `k` entries appended to `to`.
    fn append(&self, g: &Gpu, k: u64, to: &mut Vec<Entry>) -> Result<(), GpuError> {
        if k == 0 {
            return Ok(());
        }
        let k = k as usize;
        let index = g.stream.clone_dtoh(&self.index.slice(..k))?;
        let diameter = g.stream.clone_dtoh(&self.diameter.slice(..k))?;
        to.extend(index.into_iter().zip(diameter).map(|(index, diameter)| Entry { diameter, index }));
        Ok(())
    }
}

/// The GPU's part of a barcode ([`Offload`]): the distances go to the device once, at the
/// first call. A failure is kept for the backend, which computes the barcode on the CPU
/// instead.
pub struct RipsOnGpu<'g> {
    gpu: &'g Gpu,
    ctl: &'g Control<'g>,
    device: Option<RipsDevice>,
    failed: Option<GpuError>,
    /// The upload and each call timed apart, the stream waited on (`TOPOVIEW_RIPS_STAGES`).
    stages: Stages,
}

impl<'g> RipsOnGpu<'g> {
    pub fn new(gpu: &'g Gpu, ctl: &'g Control<'g>) -> RipsOnGpu<'g> {
        RipsOnGpu { gpu, ctl, device: None, failed: None, stages: Stages::from_env() }
    }

    /// The device's failure, if one stopped the barcode.
    pub fn failure(self) -> Option<GpuError> {
        self.failed
    }

    /// `f` with the complex on the device; a failure kept, as the error the barcode stops with.
    fn on_device<T>(
        &mut self,
        c: &Complex,
        f: impl FnOnce(&Gpu, &RipsDevice) -> Result<T, GpuError>,
    ) -> Result<T, RipsError> {
        let gpu = self.gpu;
        let stages = &mut self.stages;
        let device = &mut self.device;
        // With stages on: the stream waited on, then the time since the last lap printed
        // (none for the lap that starts the call, once the GPU's earlier work is done).
        let mut timed = |what: Option<&str>| -> Result<(), GpuError> {
            if stages.on() {
                gpu.stream.synchronize()?;
                let lap = stages.lap();
                if let Some(what) = what {
                    eprintln!("rips gpu   {:9.1} ms  {what}", lap.as_secs_f64() * 1e3);
                }
            }
            Ok(())
        };
        let result = timed(None).and_then(|()| {
            let dev = match device {
                Some(dev) => dev,
                None => {
                    let dev = gpu.rips_upload(c)?;
                    timed(Some("distances (or neighbour lists) and binomials to the device"))?;
                    device.insert(dev)
                }
            };
            let out = f(gpu, dev)?;
            timed(Some("the kernel's part, launches and transfers"))?;
            Ok(out)
        });
        result.map_err(|e| match e {
            GpuError::Cancelled => RipsError::Cancelled(Cancelled),
            e => {
                let message = e.to_string();
                self.failed = Some(e);
                RipsError::Invalid(message)
            }
        })
    }
}

impl Offload for RipsOnGpu<'_> {
    fn apparent(&mut self, cols: &Columns) -> Result<Vec<Option<Entry>>, RipsError> {
        let ctl = self.ctl;
        self.on_device(cols.complex, |g, dev| g.rips_apparent(dev, cols, ctl))
    }

    fn next_columns(&mut self, l: &Listing) -> Result<Option<Listed>, RipsError> {
        let ctl = self.ctl;
        self.on_device(l.complex, |g, dev| g.rips_next_columns(dev, l, ctl)).map(Some)
    }
}
