//! The Morse-Smale complex's stages on the GPU (kernels/msc.cu): the discrete gradient (one
//! thread per vertex pairs its lower star as the CPU does, so the codes are the CPU's bit for
//! bit), the manifold labels (pointer jumping on the codes, which stay on the device in between)
//! and the saddle-saddle arcs (every 2-saddle's DAG at once, in one hash table). Persistence and
//! the hierarchy run on the CPU on these results.

use super::{DeviceSample, Gpu, GpuError, Kernels};
use cudarc::driver::{CudaSlice, PushKernelArg};
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::topo::msc::complex::{CriticalPoint, Labels, SaddleArc};
use topoview_core::topo::msc::gradient::Gradient;
use topoview_core::topo::msc::grid::{Cell, CellGrid};
use topoview_core::topo::msc::vpaths::{Multiplicity, descending};
use topoview_core::with_samples;

/// Where the GPU's Morse-Smale time goes (`TOPOVIEW_MSC_STAGES`): the laps of
/// [`topoview_core::laps::Laps`], the stream waited on at each (only when they are printed).
struct Laps(topoview_core::laps::Laps);

impl Laps {
    fn new() -> Laps {
        Laps(topoview_core::laps::Laps::msc("msc gpu"))
    }

    fn lap(&mut self, gpu: &Gpu, what: impl FnOnce() -> String) -> Result<(), GpuError> {
        if self.0.on() {
            gpu.stream.synchronize()?;
        }
        self.0.lap(what);
        Ok(())
    }
}

/// Threads a block of the gradient kernel (`STAR_THREADS` in kernels/msc.cu).
const STAR_THREADS: u32 = 256;

/// A gradient's codes left on the device for the labels (32-bit words, 8 cells each).
pub struct DeviceGradient {
    codes: CudaSlice<u8>,
    grid: CellGrid,
}

impl Gpu {
    /// Loads the Morse-Smale kernels now, for a thread of their own to do while the field is
    /// checked and uploaded: loading their 2 MB of PTX took 13-44 ms on the H100 machine with the
    /// driver's cache warm (2026-11-27), as long as the rest of the gradient stage. A failure is
    /// left for the stage's own load to report.
    pub fn preload_msc(&self) {
        if self.ctx.bind_to_thread().is_ok() {
            let _ = self.module(Kernels::Msc);
        }
    }

    /// The discrete gradient of `field` on `grid` (its cell grid), equal to
    /// [`topoview_core::topo::msc::gradient::gradient`]'s, and its codes kept on the device for
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
        let mut laps = Laps::new();
        let field = self.upload_staged(v)?;
        let mut codes: CudaSlice<u8> = st.alloc_zeros(bytes)?;
        laps.lap(self, || format!("gradient: the field up ({} MiB)", std::mem::size_of_val(v) >> 20))?;
        let f = self.function(Kernels::Msc, &format!("gradient_{}", T::NAME))?;
        laps.lap(self, || "gradient: the kernel's module".into())?;
        let [nx, ny, nz] = grid.vdims.map(|d| d as i32);
        let mut l = st.launch_builder(&f);
        l.arg(&field).arg(&mut codes).arg(&nx).arg(&ny).arg(&nz);
        // Each thread of a block has a column of its shared G-order keys (STAR_THREADS).
        let launch = cudarc::driver::LaunchConfig { block_dim: (STAR_THREADS, 1, 1), ..self.grid(v.len()) };
        // SAFETY: `field` holds nx*ny*nz samples of T, `codes` a bit over 4 bits per cell of
        // the (2nx-1)(2ny-1)(2nz-1) grid (whole words); the kernel is a grid-stride loop over the
        // vertices and writes only cells of their lower stars, which lie on the grid; its blocks
        // have the STAR_THREADS threads its shared memory is laid out for.
        unsafe { l.launch(launch) }?;
        laps.lap(self, || "gradient: the kernel".into())?;
        let mut out = self.download(&codes.as_view())?;
        out.truncate(grid.n_cells().div_ceil(2));
        laps.lap(self, || format!("gradient: the codes down ({} MiB)", bytes >> 20))?;
        Ok((Gradient::from_codes(grid, out), DeviceGradient { codes, grid }))
    }

    /// Basins and mountains of the gradient `d`, whose critical points are `critical` (sorted
    /// by index, then cell, as the complex holds them): equal to
    /// [`topoview_core::topo::msc::complex::labels`]'s. `ctl` is checked between rounds.
    pub fn msc_labels(
        &self,
        d: &DeviceGradient,
        critical: &[CriticalPoint],
        ctl: &Control,
    ) -> Result<Labels, GpuError> {
        self.ctx.bind_to_thread()?;
        let mut laps = Laps::new();
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
        let basins = self.jump_to_labels(next, &minima, 0, ctl, &mut laps)?;
        laps.lap(self, || "labels: basins down".into())?;

        let n: usize = grid.dual_dims().iter().product();
        let mut next: CudaSlice<u32> = st.alloc_zeros(n)?;
        let f = self.function(Kernels::Msc, "mountain_next")?;
        let ndim = grid.ndim as i32;
        let mut l = st.launch_builder(&f);
        l.arg(&d.codes).arg(&mut next).arg(&nx).arg(&ny).arg(&nz).arg(&ndim);
        // SAFETY: as above, one entry per top cell (the dual grid's n elements).
        unsafe { l.launch(self.grid(n)) }?;
        let mountains = self.jump_to_labels(next, &maxima, first_max as u32, ctl, &mut laps)?;
        laps.lap(self, || "labels: mountains down".into())?;
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
        laps: &mut Laps,
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
        laps.lap(self, || format!("labels: {n} pointers jumped in {rounds} rounds, labelled"))?;
        self.download(&next.as_view())
    }
}

/// The most a table holds (its slots are numbered with 32-bit integers, and its frontiers'
/// lengths are 32-bit counts).
const MOST_SLOTS: usize = 1 << 30;

/// Bytes of a node of the saddle-saddle table (`Node` in kernels/msc.cu), as u64 words.
const NODE_WORDS: usize = 4;

/// Bytes per slot of the saddle-saddle table: the node, and two frontiers of 4.
const SLOT_BYTES: usize = 8 * NODE_WORDS + 2 * 4;

/// Slots a saddle the saddle-saddle table starts with at least, and falls back to where a
/// larger start does not fit.
const SLOTS_A_SADDLE: usize = 32;

/// Every 2-saddle's DAG of edges on the device (see kernels/msc.cu): a hash table of (saddle,
/// edge) nodes and the two frontiers of the level-by-level passes.
struct Table {
    nodes: CudaSlice<u64>,
    frontier: CudaSlice<u32>,
    next: CudaSlice<u32>,
}

impl Table {
    fn slots(&self) -> usize {
        self.nodes.len() / NODE_WORDS
    }

    fn mask(&self) -> u64 {
        self.slots() as u64 - 1
    }
}

impl Gpu {
    /// An empty table of `slots` slots (a power of two), or why it does not fit in the free
    /// memory.
    fn table(&self, slots: usize) -> Result<Table, GpuError> {
        let (free, _) = self.memory()?;
        if slots > MOST_SLOTS || slots * SLOT_BYTES > free {
            return Err(GpuError::TooLarge(format!(
                "the saddle-saddle arcs need a table of {} MiB on the GPU, {} MiB are free",
                (slots * SLOT_BYTES) >> 20,
                free >> 20
            )));
        }
        let st = &self.stream;
        // SAFETY: `ss_clear` writes every node below before another kernel reads one; the
        // frontiers are written before they are read.
        let (mut nodes, frontier, next) =
            unsafe { (st.alloc(slots * NODE_WORDS)?, st.alloc(slots)?, st.alloc(slots)?) };
        let f = self.function(Kernels::Msc, "ss_clear")?;
        let n = slots as u64;
        let mut l = st.launch_builder(&f);
        l.arg(&mut nodes).arg(&n);
        // SAFETY: `nodes` holds `slots` nodes of 32 bytes; a grid-stride loop over them.
        unsafe { l.launch(self.grid(slots)) }?;
        Ok(Table { nodes, frontier, next })
    }

    /// `t` moved into a table of `slots` slots (a larger power of two), its first `n` frontier
    /// entries with it.
    fn grow(&self, t: Table, n: usize, slots: usize) -> Result<Table, GpuError> {
        let st = &self.stream;
        let mut bigger = self.table(slots)?;
        let mut full: CudaSlice<i32> = st.alloc_zeros(1)?;
        let f = self.function(Kernels::Msc, "ss_rehash")?;
        let (slots, mask) = (t.slots() as u64, bigger.mask());
        let mut l = st.launch_builder(&f);
        l.arg(&t.nodes).arg(&slots).arg(&mut bigger.nodes).arg(&mask).arg(&mut full);
        // SAFETY: the old table holds `slots` nodes, the new one more (a larger power of two);
        // the kernel is a grid-stride loop over the old slots.
        unsafe { l.launch(self.grid(t.slots())) }?;
        // Checked before the frontier is looked up in the new table, where a key left out
        // would never be found.
        if st.clone_dtoh(&full)?[0] != 0 {
            return Err(GpuError::Driver("the saddle-saddle table overflowed while growing".into()));
        }
        if n > 0 {
            let f = self.function(Kernels::Msc, "ss_remap")?;
            let n32 = n as i32;
            let mut l = st.launch_builder(&f);
            l.arg(&t.frontier)
                .arg(&n32)
                .arg(&t.nodes)
                .arg(&bigger.nodes)
                .arg(&mask)
                .arg(&mut bigger.frontier);
            // SAFETY: the first n frontier entries are slots of the old table, whose keys are all
            // in the new one.
            unsafe { l.launch(self.grid(n)) }?;
        }
        Ok(bigger)
    }

    /// The saddle-saddle arcs of the 3D gradient `g`, whose codes `d` holds, from the 2-saddles
    /// `saddles` (cells, ascending): each 1-saddle their V-paths reach, with the number of paths
    /// and the kept path, equal to [`topoview_core::topo::msc::vpaths::descending`]'s. A saddle whose
    /// counts pass 2^64 is counted again on the CPU (to 128 bits, as the CPU counts).
    pub fn msc_saddle_arcs(
        &self,
        g: &Gradient,
        d: &DeviceGradient,
        saddles: &[u32],
        ctl: &Control,
    ) -> Result<Vec<SaddleArc>, GpuError> {
        // Start at 32 slots a saddle, or room for a node a vertex (a slot per 0.7 of a vertex)
        // up to 2^26 slots (2.5 GiB), growing as needed. The DAGs measured on the H100 machine
        // held 28 (noise) to 890 (a smooth 256^3 field) nodes a saddle, 0.8 to 6 a vertex; a
        // table too large costs memory the GPU may not have, and each growth costs an
        // allocation and a rehash: the smooth 256^3 field grew 6 times from 32 slots a saddle,
        // 9-10 ms of its 23 ms exploration, and twice from half a slot a vertex, 7-8 ms.
        let vertices: usize = g.grid.vdims.iter().product();
        let slots = (saddles.len() * SLOTS_A_SADDLE).max((vertices * 10 / 7).min(1 << 26));
        self.saddle_arcs_within(g, d, saddles, u64::MAX, slots, ctl)
    }

    /// [`Gpu::msc_saddle_arcs`] with the saddles whose counts pass `most` counted again on the
    /// CPU, starting from a table of about `slots` slots: the tests pass a small `most` and a
    /// small table, so that the recount and the growth are exercised.
    #[doc(hidden)]
    pub fn saddle_arcs_within(
        &self,
        g: &Gradient,
        d: &DeviceGradient,
        saddles: &[u32],
        most: u64,
        slots: usize,
        ctl: &Control,
    ) -> Result<Vec<SaddleArc>, GpuError> {
        self.ctx.bind_to_thread()?;
        if saddles.is_empty() {
            return Ok(Vec::new());
        }
        let st = &self.stream;
        let mut laps = Laps::new();
        let grid = d.grid;
        let (cx, cy) = (grid.cdims[0] as i64, grid.cdims[1] as i64);
        let saddles_d = st.clone_htod(saddles)?;
        let mut count: CudaSlice<u32> = st.alloc_zeros(1)?;
        let mut full: CudaSlice<i32> = st.alloc_zeros(1)?;
        // The seeds (4 a saddle) fill at most half of it. A start larger than 32 slots a saddle
        // takes at most half the free memory, leaving room for the arcs' buffers and for
        // growing; otherwise it starts there instead (and grows as far as it can).
        let least = (saddles.len() * 8).max(1 << 16);
        let fewer = (saddles.len() * SLOTS_A_SADDLE).max(least).next_power_of_two();
        let (free, _) = self.memory()?;
        let start = match slots.max(least).next_power_of_two() {
            s if s > fewer && s * SLOT_BYTES > free / 2 => fewer,
            s => s,
        };
        let mut t = match self.table(start) {
            Err(GpuError::TooLarge(_)) if fewer < start => self.table(fewer)?,
            t => t?,
        };
        let n_saddles = saddles.len() as i32;
        let f = self.function(Kernels::Msc, "ss_seed")?;
        let mask = t.mask();
        let mut l = st.launch_builder(&f);
        l.arg(&saddles_d).arg(&n_saddles).arg(&mut t.nodes).arg(&mask);
        l.arg(&cx).arg(&cy).arg(&mut t.frontier).arg(&mut count).arg(&mut full);
        // SAFETY: `saddles_d` holds n_saddles cells of the grid; the table has room for their 4
        // facets each (8 slots a saddle at least); the frontier has a slot per table slot.
        unsafe { l.launch(self.grid(saddles.len())) }?;
        let mut n = st.clone_dtoh(&count)?[0] as usize;
        let mut entries = n;

        // Level by level, growing the table before a level could fill it past 70%: each node
        // inserts at most 3 successors (the other edges of its square).
        let expand = self.function(Kernels::Msc, "ss_expand")?;
        let mut level: u32 = 0;
        let (mut growths, mut growing) = (0, std::time::Duration::ZERO);
        while n > 0 {
            ctl.check()?;
            // Straight to the size the level needs: one rehash where it more than doubles.
            let need = (entries + 3 * n) * 10 / 7 + 1;
            if need > t.slots() {
                let start = std::time::Instant::now();
                t = self.grow(t, n, need.next_power_of_two())?;
                if laps.0.on() {
                    st.synchronize()?;
                }
                (growths, growing) = (growths + 1, growing + start.elapsed());
            }
            st.memset_zeros(&mut count)?;
            let (mask, n32) = (t.mask(), n as i32);
            let mut l = st.launch_builder(&expand);
            l.arg(&d.codes).arg(&t.frontier).arg(&n32).arg(&mut t.nodes).arg(&mask).arg(&cx).arg(&cy);
            l.arg(&level).arg(&mut t.next).arg(&mut count).arg(&mut full);
            // SAFETY: the frontier's n entries are slots of the table; at most 3n new nodes fit
            // in the table (kept under 70% full) and in `next` (one entry per slot).
            unsafe { l.launch(self.grid(n)) }?;
            n = st.clone_dtoh(&count)?[0] as usize;
            entries += n;
            std::mem::swap(&mut t.frontier, &mut t.next);
            level += 1;
        }
        if st.clone_dtoh(&full)?[0] != 0 {
            return Err(GpuError::Driver("the saddle-saddle table overflowed".into()));
        }
        laps.lap(self, || {
            format!(
                "saddle-saddle: {} saddles' DAGs explored, {level} levels, {entries} nodes in {} slots \
                 ({growths} growths: {:.1} ms)",
                saddles.len(),
                t.slots(),
                growing.as_secs_f64() * 1e3
            )
        })?;

        // Counting, in rounds of the nodes whose predecessors have all been counted.
        let slots = t.slots();
        let slots64 = slots as u64;
        st.memset_zeros(&mut count)?;
        let f = self.function(Kernels::Msc, "ss_sources")?;
        let mut l = st.launch_builder(&f);
        l.arg(&mut t.nodes).arg(&slots64).arg(&mut t.frontier).arg(&mut count);
        // SAFETY: the table has `slots` nodes and the frontier as many entries; the kernel is a
        // grid-stride loop over the nodes.
        unsafe { l.launch(self.grid(slots)) }?;
        let mut n = st.clone_dtoh(&count)?[0] as usize;
        let counting = self.function(Kernels::Msc, "ss_count")?;
        let mask = t.mask();
        let mut rounds = 0;
        while n > 0 {
            rounds += 1;
            ctl.check()?;
            st.memset_zeros(&mut count)?;
            let n32 = n as i32;
            let mut l = st.launch_builder(&counting);
            l.arg(&d.codes).arg(&t.frontier).arg(&n32).arg(&mut t.nodes).arg(&mask).arg(&cx).arg(&cy);
            l.arg(&most).arg(&mut t.next).arg(&mut count);
            // SAFETY: the n ready entries are slots of the table, whose successors are in it;
            // each slot becomes ready once, so `next` (a slot each) has room.
            unsafe { l.launch(self.grid(n)) }?;
            n = st.clone_dtoh(&count)?[0] as usize;
            std::mem::swap(&mut t.frontier, &mut t.next);
        }

        laps.lap(self, || format!("saddle-saddle: paths counted in {rounds} rounds"))?;
        // The arcs (critical cells reached) and their kept paths.
        st.memset_zeros(&mut count)?;
        let cap = entries;
        let (mut arc_key, mut arc_paths, mut arc_over, mut arc_depth): (
            CudaSlice<u64>,
            CudaSlice<u64>,
            CudaSlice<u8>,
            CudaSlice<u32>,
        ) = (st.alloc_zeros(cap)?, st.alloc_zeros(cap)?, st.alloc_zeros(cap)?, st.alloc_zeros(cap)?);
        let f = self.function(Kernels::Msc, "ss_arcs")?;
        let mut l = st.launch_builder(&f);
        l.arg(&d.codes).arg(&t.nodes).arg(&slots64);
        l.arg(&mut arc_key).arg(&mut arc_paths).arg(&mut arc_over).arg(&mut arc_depth).arg(&mut count);
        // SAFETY: at most `entries` slots are used, so at most that many arcs are written.
        unsafe { l.launch(self.grid(slots)) }?;
        let m = st.clone_dtoh(&count)?[0] as usize;
        if m == 0 {
            // No V-path reached a 1-saddle (nor can a zero-length buffer be allocated).
            return Ok(Vec::new());
        }
        laps.lap(self, || format!("saddle-saddle: {m} arcs found"))?;
        // (A few MiB: copied as they are, not through the staging buffers.)
        let keys = st.clone_dtoh(&arc_key.slice(..m))?;
        let counts = st.clone_dtoh(&arc_paths.slice(..m))?;
        let flagged = st.clone_dtoh(&arc_over.slice(..m))?;
        let depths = st.clone_dtoh(&arc_depth.slice(..m))?;
        laps.lap(self, || "saddle-saddle: the arcs down".into())?;
        let mut offsets = Vec::with_capacity(m + 1);
        let mut total = 0u64;
        for &dp in &depths {
            offsets.push(total);
            total += 2 * dp as u64 + 2;
        }
        let offsets_d = st.clone_htod(&offsets)?;
        let mut cells: CudaSlice<u32> = st.alloc_zeros(total as usize)?;
        {
            let f = self.function(Kernels::Msc, "ss_paths")?;
            let m32 = m as i32;
            let mut l = st.launch_builder(&f);
            l.arg(&d.codes).arg(&t.nodes).arg(&mask).arg(&cx).arg(&cy);
            l.arg(&arc_key).arg(&offsets_d).arg(&m32).arg(&mut cells);
            // SAFETY: arc i's path has 2 depth + 2 cells from offsets[i], which `cells` holds;
            // its parents are in the table down to depth 0.
            unsafe { l.launch(self.grid(m)) }?;
        }
        laps.lap(self, || format!("saddle-saddle: the {total} cells of their paths walked"))?;
        let cells = self.download(&cells.as_view())?;
        drop(t);
        laps.lap(self, || "saddle-saddle: the cells down".into())?;
        let arcs = saddle_arcs(g, saddles, &keys, &counts, &flagged, &offsets, &cells);
        laps.lap(self, || format!("saddle-saddle: {} arcs assembled on the host", arcs.len()))?;
        Ok(arcs)
    }
}

/// The device's arcs (in no particular order: the complex sorts its arcs); a saddle with a
/// flagged count is counted again on the CPU.
fn saddle_arcs(
    g: &Gradient,
    saddles: &[u32],
    keys: &[u64],
    counts: &[u64],
    flagged: &[u8],
    offsets: &[u64],
    cells: &[u32],
) -> Vec<SaddleArc> {
    use rayon::prelude::*;
    let mut recount = vec![false; saddles.len()];
    for (i, &k) in keys.iter().enumerate() {
        if flagged[i] != 0 {
            recount[(k >> 32) as usize] = true;
        }
    }
    let mut out: Vec<SaddleArc> = (0..keys.len())
        .into_par_iter()
        .filter(|&i| !recount[(keys[i] >> 32) as usize])
        .map(|i| {
            let end = offsets.get(i + 1).map_or(cells.len(), |&e| e as usize);
            SaddleArc {
                upper: saddles[(keys[i] >> 32) as usize],
                lower: keys[i] as u32,
                multiplicity: Multiplicity { count: counts[i] as u128, overflowed: false },
                cells: cells[offsets[i] as usize..end].into(),
            }
        })
        .collect();
    let again: Vec<u32> = recount.iter().zip(saddles).filter(|(r, _)| **r).map(|(_, &s)| s).collect();
    out.par_extend(again.par_iter().flat_map_iter(|&s| {
        descending(g, s as Cell).into_iter().map(move |(t, m, path)| SaddleArc {
            upper: s,
            lower: t as u32,
            multiplicity: m,
            cells: path.into_iter().map(|c| c as u32).collect(),
        })
    }));
    out
}
