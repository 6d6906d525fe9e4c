//! The crack filter on the GPU, bit for bit the CPU's (see kernels/cracks.cu): per scale and
//! family, pass A along the cracks and pass B across them for each channel, then the running
//! best of each crack; only the three per-crack results come back.

use super::Kernels;
use super::{Gpu, GpuError};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;
use topoview_core::control::Control;
use topoview_core::topo::cracks::separable::Taps;
use topoview_core::topo::cracks::{CrackMap, CrackOptions, Family, Image};

/// Threads of a 2D block: 32 along x (coalesced rows), 8 rows.
const BLOCK: (u32, u32) = (32, 8);
/// The fused kernel's tile of cracks (TX, TY in kernels/cracks.cu); its blocks are 32 x 8
/// threads, four rows of cracks a thread.
const TILE: (i32, i32) = (32, 32);
/// The fused kernel takes kernels up to this radius (its tiles fit in 32 KiB of shared memory)
/// and images of up to this many channels (MAXC); others take the three separate kernels.
const FUSED_MAX_RADIUS: i32 = 16;
const FUSED_MAX_CHANNELS: usize = 4;

fn grid_2d(w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((w as u32).div_ceil(BLOCK.0), (h as u32).div_ceil(BLOCK.1), 1),
        block_dim: (BLOCK.0, BLOCK.1, 1),
        shared_mem_bytes: 0,
    }
}

/// Device buffers for one image: its channels, pass A's outputs (the strengths need no second
/// derivative) and the first
/// derivatives of every channel for one family.
struct Buffers {
    /// The channels one after another.
    img: CudaSlice<f32>,
    s: CudaSlice<f32>,
    d: CudaSlice<f32>,
    first: CudaSlice<f32>,
}

impl Gpu {
    /// As [`topoview_core::topo::cracks::cracks`] (the image and options already checked).
    pub fn cracks(&self, img: &Image, opts: &CrackOptions, ctl: &Control) -> Result<CrackMap, GpuError> {
        let mut b = self.crack_buffers(img)?;
        let best = self.crack_best(img, opts, &mut b, ctl)?;
        let st = &self.stream;
        let dirs_angle = |k: u16| opts.angle(k as usize) as f32;
        let mut out: [(Vec<f32>, Vec<f32>, Vec<f32>); 2] = Default::default();
        for (f, (e, o, sc)) in best.into_iter().enumerate() {
            let (mut e, o, sc) = (st.clone_dtoh(&e)?, st.clone_dtoh(&o)?, st.clone_dtoh(&sc)?);
            e.par_iter_mut().for_each(|e| *e = e.max(0.0).sqrt());
            out[f] = (
                e,
                o.par_iter().map(|&k| dirs_angle(k)).collect(),
                sc.par_iter().map(|&s| opts.scales[s as usize] as f32).collect(),
            );
        }
        let [(hs, ha, hsc), (vs, va, vsc)] = out;
        Ok(CrackMap {
            width: img.width,
            height: img.height,
            strength: [hs, vs],
            angle: [ha, va],
            scale: [hsc, vsc],
        })
    }

    fn crack_buffers(&self, img: &Image) -> Result<Buffers, GpuError> {
        self.ctx.bind_to_thread()?;
        let st = &self.stream;
        let n = img.width * img.height;
        let c = img.channels.len();
        // Channels, s, d, the first derivatives and the best of both families.
        let need = 4 * n * (c + 2 + 2 * c) + 2 * 8 * n;
        let (free, _) = self.memory()?;
        if need > free {
            return Err(GpuError::TooLarge(format!(
                "the crack filter needs {need} bytes of GPU memory, {free} are free"
            )));
        }
        let mut all = st.alloc_zeros::<f32>(c * n)?;
        for (i, v) in img.channels.iter().enumerate() {
            st.memcpy_htod(v, &mut all.slice_mut(i * n..(i + 1) * n))?;
        }
        Ok(Buffers {
            img: all,
            s: st.alloc_zeros(n)?,
            d: st.alloc_zeros(n)?,
            first: st.alloc_zeros(2 * c * n)?,
        })
    }

    /// The running best (energy, orientation index, scale index) of each family's cracks.
    #[allow(clippy::type_complexity)]
    fn crack_best(
        &self,
        img: &Image,
        opts: &CrackOptions,
        b: &mut Buffers,
        ctl: &Control,
    ) -> Result<[(CudaSlice<f32>, CudaSlice<u16>, CudaSlice<u16>); 2], GpuError> {
        let st = &self.stream;
        let (w, h) = (img.width, img.height);
        let dirs: Vec<f32> = opts.directions().into_iter().flatten().collect();
        let dirs = st.clone_htod(&dirs)?;
        let pass_a = self.function(Kernels::Cracks, "cracks_pass_a")?;
        let pass_b = self.function(Kernels::Cracks, "cracks_pass_b")?;
        let fold = self.function(Kernels::Cracks, "cracks_best")?;
        let fused = self.function(Kernels::Cracks, "cracks_fused")?;
        let mut best = Vec::new();
        for f in Family::BOTH {
            let (cw, ch) = f.dims(w, h);
            // Scale 0 writes every crack, so zeros are as good a start as any.
            best.push((
                st.alloc_zeros::<f32>(cw * ch)?,
                st.alloc_zeros::<u16>(cw * ch)?,
                st.alloc_zeros::<u16>(cw * ch)?,
            ));
        }
        let (wi, hi) = (w as i32, h as i32);
        for (si, &s) in opts.scales.iter().enumerate() {
            let t = Taps::new(s, opts.radius(s));
            let int: Vec<f32> = t.int.iter().flatten().copied().collect();
            let half: Vec<f32> = t.half.iter().flatten().copied().collect();
            let (int, half) = (st.clone_htod(&int)?, st.clone_htod(&half)?);
            let r = t.r as i32;
            for (fi, f) in Family::BOTH.into_iter().enumerate() {
                let (cw, ch) = f.dims(w, h);
                let n = cw * ch;
                let (along_y, family, all) = (fi as i32, fi as i32, 0i32);
                // The strengths need no second derivatives: pass A writes none (a null pointer)
                // and pass B reads none (all = 0).
                let no_dd = 0u64;
                let channels = img.channels.len();
                let (e, o, sc) = &mut best[fi];
                let (k, sii) = (opts.orientations as i32, si as i32);
                if r <= FUSED_MAX_RADIUS && channels <= FUSED_MAX_CHANNELS {
                    ctl.check()?;
                    let (ci, ri) = (channels as i32, r);
                    // The image tile and pass A's s and d tile (see the kernel).
                    let (arows, acols) =
                        if fi == 0 { (TILE.1 + 2 * ri - 1, TILE.0) } else { (TILE.1, TILE.0 + 2 * ri - 1) };
                    let (irows, icols) =
                        if fi == 0 { (arows, TILE.0 + 2 * ri) } else { (TILE.1 + 2 * ri, acols) };
                    let shared = (4 * (irows * icols + 2 * arows * acols)) as u32;
                    let cfg = LaunchConfig {
                        grid_dim: (
                            (cw as u32).div_ceil(TILE.0 as u32),
                            (ch as u32).div_ceil(TILE.1 as u32),
                            1,
                        ),
                        block_dim: (TILE.0 as u32, 8, 1),
                        shared_mem_bytes: shared,
                    };
                    let mut l = st.launch_builder(&fused);
                    l.arg(&b.img)
                        .arg(&ci)
                        .arg(&wi)
                        .arg(&hi)
                        .arg(&family)
                        .arg(&int)
                        .arg(&half)
                        .arg(&r)
                        .arg(&dirs)
                        .arg(&k)
                        .arg(&sii)
                        .arg(&mut *e)
                        .arg(&mut *o)
                        .arg(&mut *sc);
                    // SAFETY: img holds `channels` w * h floats (at most MAXC), the taps 3 (r + 1)
                    // and 3 r floats, dirs 2 k, the outputs cw * ch each; the shared memory is
                    // sized for r as the kernel lays it out, and the kernel bound-checks.
                    unsafe { l.launch(cfg) }?;
                    ctl.tick((w * h * channels) as u64);
                    continue;
                }
                for c in 0..channels {
                    ctl.check()?;
                    let chan = b.img.slice(c * w * h..(c + 1) * w * h);
                    let mut l = st.launch_builder(&pass_a);
                    l.arg(&chan)
                        .arg(&mut b.s)
                        .arg(&mut b.d)
                        .arg(&no_dd)
                        .arg(&wi)
                        .arg(&hi)
                        .arg(&along_y)
                        .arg(&int)
                        .arg(&r);
                    // SAFETY: every buffer holds w * h floats, `int` 3 (r + 1) taps, dd is null (the
                    // kernel then writes none); the kernel bound-checks its pixel.
                    unsafe { l.launch(grid_2d(w, h)) }?;
                    let mut out = b.first.slice_mut(2 * c * n..2 * (c + 1) * n);
                    let mut l = st.launch_builder(&pass_b);
                    l.arg(&b.s)
                        .arg(&b.d)
                        .arg(&no_dd)
                        .arg(&mut out)
                        .arg(&wi)
                        .arg(&hi)
                        .arg(&family)
                        .arg(&half)
                        .arg(&r)
                        .arg(&all);
                    // SAFETY: s, d hold w * h floats (dd, null, is not read with all = 0), `out` 2 n, `half` 3 r taps; the kernel
                    // bound-checks its crack and writes gx, gy only (all = 0).
                    unsafe { l.launch(grid_2d(cw, ch)) }?;
                    ctl.tick((w * h) as u64);
                }
                let (ci, nl) = (channels as i32, n as i64);
                let mut l = st.launch_builder(&fold);
                l.arg(&b.first)
                    .arg(&ci)
                    .arg(&nl)
                    .arg(&family)
                    .arg(&dirs)
                    .arg(&k)
                    .arg(&sii)
                    .arg(e)
                    .arg(o)
                    .arg(sc);
                // SAFETY: `first` holds 2 n floats per channel, `dirs` 2 k, the outputs n each; a
                // grid-stride loop over n.
                unsafe { l.launch(self.grid(n)) }?;
            }
        }
        st.synchronize()?;
        let mut it = best.into_iter();
        Ok([it.next().expect("two families"), it.next().expect("two families")])
    }

    /// Median seconds of `reps` crack filters of `img` with the image resident on the GPU
    /// (upload and the download of the results not counted), after one warm-up.
    pub fn time_cracks(&self, img: &Image, opts: &CrackOptions, reps: usize) -> Result<f64, GpuError> {
        let mut b = self.crack_buffers(img)?;
        let ctl = Control::default();
        self.crack_best(img, opts, &mut b, &ctl)?;
        let mut times = Vec::new();
        for _ in 0..reps.max(1) {
            let t = std::time::Instant::now();
            self.crack_best(img, opts, &mut b, &ctl)?;
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}
