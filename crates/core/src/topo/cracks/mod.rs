//! Inter-pixel filtering: edge responses on the cracks between pixels (the 1-cells of the image's
//! Cartesian complex), after Valero's GPU paper (`../shared/papers/interpixel-filtering-gpu.txt`).
//!
//! Definitions (the README's "Edges between pixels" has a worked example):
//! * An image of `W` x `H` pixels (x the column, y the row, pixel centres at integers) has
//!   **horizontal cracks** `h(x, y)` between pixels `(x, y)` and `(x, y + 1)`, centred at
//!   `(x, y + 0.5)`: `W` x `(H - 1)` of them; and **vertical cracks** `v(x, y)` between `(x, y)`
//!   and `(x + 1, y)`, centred at `(x + 0.5, y)`: `(W - 1)` x `H`.
//! * The **bank** at scale `s` is the first and second derivatives of the Gaussian
//!   `G(p) = g(p_x) g(p_y)`, `g(t) = exp(-t^2 / 2s^2) / (s sqrt(2 pi))`, sampled at the pixel
//!   centres `p` relative to the crack's centre, on the square `|p_x|, |p_y| <= r`,
//!   `r = max(1, floor(truncate * s + 0.5))` (for a crack the offsets across it are
//!   half-integers, so `2r` of them). Oriented by the unit normal `n = (cos t, sin t)`,
//!   `t = k pi / N` for `k < N` (`t = 0` is +x, `t = pi / 2` is +y, down the rows):
//!   `D1_t(p) = (p.n) / s^2 G(p)` and `D2_t(p) = ((p.n)^2 / s^4 - 1 / s^2) G(p)`.
//!   A kernel's response is `sum_p w(p) I(c + p)`: `D1_t` measures the derivative along `n`
//!   (1 for the ramp `I = x.n`, up to sampling and truncation), `D2_t` the second.
//! * **Boundary**: pixels outside the image take the value of the nearest pixel (clamp), so a
//!   constant image has no edges, at the border either.
//! * Both are exactly **steerable**: `D1_t = cos t Gx + sin t Gy`,
//!   `D2_t = cos^2 t Gxx + 2 cos t sin t Gxy + sin^2 t Gyy`, and the five bases are separable,
//!   so they are computed as two 1D passes (the second at half-integer offsets) and steered.
//! * **Strength** of a crack: the first-derivative energy *across* it (`D1` along the crack's
//!   normal, `t = pi / 2` for `h`, `0` for `v`; both are in every bank since `N` is even),
//!   `sqrt(sum over channels of D1^2)` (`|D1|` for one channel), the largest over the scales;
//!   its **scale** is where that is reached, and its **orientation** the `t` of the largest
//!   oriented energy at that scale: the direction of the edge's normal, which a staircase of
//!   cracks follows. (The largest oriented energy itself is nearly as large on the cracks
//!   beside an edge as on those it crosses, which would draw every edge two cracks thick; the
//!   energy across a crack is largest exactly on the cracks the edge passes through.) Ties go
//!   to the first scale, then orientation.
//!
//! Arithmetic is f32 with each 1D pass summed in mirrored pairs (`w_k (I[p+k] + I[p-k])`), so
//! mirroring or rotating the image by 90 degrees gives the same strengths bit for bit.

pub mod bank;
pub mod boundaries;
pub mod separable;

use crate::control::Control;
use rayon::prelude::*;

pub use bank::{Bank, BankError, Kernel, Tap};

/// The two families of cracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Between a pixel and the one below it: `W` x `(H - 1)`.
    H,
    /// Between a pixel and the one to its right: `(W - 1)` x `H`.
    V,
}

impl Family {
    pub const BOTH: [Family; 2] = [Family::H, Family::V];

    /// Columns and rows of this family's cracks in an image of `w` x `h` pixels.
    pub fn dims(self, w: usize, h: usize) -> (usize, usize) {
        match self {
            Family::H => (w, h.saturating_sub(1)),
            Family::V => (w.saturating_sub(1), h),
        }
    }

    /// The angle of the normal of this family's cracks: +y for `h`, +x for `v`.
    pub fn normal(self) -> f64 {
        match self {
            Family::H => std::f64::consts::FRAC_PI_2,
            Family::V => 0.0,
        }
    }

    pub fn letter(self) -> char {
        match self {
            Family::H => 'h',
            Family::V => 'v',
        }
    }
}

/// A 2D image of one or more channels, each `width * height` f32 values, x fastest.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub width: usize,
    pub height: usize,
    pub channels: Vec<Vec<f32>>,
}

impl Image {
    pub fn grey(width: usize, height: usize, values: Vec<f32>) -> Image {
        Image { width, height, channels: vec![values] }
    }
}

/// The Gaussian bank: its scales (pixels), orientations and truncation.
#[derive(Clone, Debug, PartialEq)]
pub struct CrackOptions {
    pub scales: Vec<f64>,
    pub orientations: usize,
    /// Kernel radius in scales.
    pub truncate: f64,
}

impl Default for CrackOptions {
    fn default() -> Self {
        CrackOptions { scales: vec![1.0, 2.0, 4.0], orientations: 8, truncate: 3.0 }
    }
}

/// The largest kernel radius accepted, in pixels (a 4097-tap pass per output is already slow).
pub const MAX_RADIUS: usize = 2048;
/// The smallest scale accepted, in pixels.
pub const MIN_SCALE: f64 = 0.1;
/// The most scales in one bank.
pub const MAX_SCALES: usize = 64;

impl CrackOptions {
    /// The kernel radius at scale `s`.
    pub fn radius(&self, s: f64) -> usize {
        ((self.truncate * s + 0.5).floor() as usize).max(1)
    }

    pub fn check(&self) -> Result<(), CrackError> {
        if self.scales.is_empty() {
            return Err(CrackError::Options("at least one scale is needed".into()));
        }
        if let Some(&s) = self.scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(CrackError::Options(format!("scales must be finite and positive, got {s}")));
        }
        if let Some(&s) = self.scales.iter().find(|s| **s < MIN_SCALE) {
            return Err(CrackError::Options(format!(
                "scales must be at least {MIN_SCALE} pixels (below, the kernels are one pixel wide), got {s}"
            )));
        }
        if self.scales.len() > MAX_SCALES {
            return Err(CrackError::Options(format!(
                "at most {MAX_SCALES} scales, got {}",
                self.scales.len()
            )));
        }
        if !(self.truncate.is_finite() && self.truncate > 0.0) {
            return Err(CrackError::Options(format!(
                "truncate must be finite and positive, got {}",
                self.truncate
            )));
        }
        if let Some(&s) = self.scales.iter().find(|s| self.truncate * **s > MAX_RADIUS as f64) {
            return Err(CrackError::Options(format!(
                "scale {s} gives a kernel radius over {MAX_RADIUS} pixels"
            )));
        }
        if self.orientations == 0 || self.orientations % 2 == 1 || self.orientations > 180 {
            return Err(CrackError::Options(format!(
                "orientations must be even, 2 to 180 (a quarter turn maps the set onto itself), got {}",
                self.orientations
            )));
        }
        Ok(())
    }

    /// `(cos t, sin t)` of each orientation. The second half is the first turned a quarter
    /// turn exactly (`(-sin, cos)`), so a rotated image meets the same products.
    pub fn directions(&self) -> Vec<[f32; 2]> {
        let n = self.orientations;
        let first: Vec<[f32; 2]> = (0..n / 2)
            .map(|k| {
                let t = k as f64 * std::f64::consts::PI / n as f64;
                [t.cos() as f32, t.sin() as f32]
            })
            .collect();
        first.iter().copied().chain(first.iter().map(|&[c, s]| [-s, c])).collect()
    }

    /// The angle of orientation `k`, radians.
    pub fn angle(&self, k: usize) -> f64 {
        k as f64 * std::f64::consts::PI / self.orientations as f64
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CrackError {
    #[error("{0}")]
    Options(String),
    #[error("an image of {0} x {1} pixels has no cracks in one direction (2 x 2 at least)")]
    TooSmall(usize, usize),
    #[error("channel {channel} holds {got} values, not {want}")]
    Shape { channel: usize, got: usize, want: usize },
    #[error("the image holds {0} NaN or infinite values: edges are not defined there")]
    NonFinite(usize),
    #[error("{0}")]
    Bank(#[from] BankError),
    #[error("cancelled")]
    Cancelled,
}

impl From<crate::control::Cancelled> for CrackError {
    fn from(_: crate::control::Cancelled) -> Self {
        CrackError::Cancelled
    }
}

/// Per family (index `Family as usize`), per crack: strength, orientation (radians) and scale.
#[derive(Clone, Debug, PartialEq)]
pub struct CrackMap {
    pub width: usize,
    pub height: usize,
    pub strength: [Vec<f32>; 2],
    pub angle: [Vec<f32>; 2],
    pub scale: [Vec<f32>; 2],
}

impl CrackMap {
    /// The strongest crack: (family, index, strength).
    pub fn strongest(&self) -> Option<(Family, usize, f32)> {
        Family::BOTH
            .iter()
            .flat_map(|&f| self.strength[f as usize].iter().enumerate().map(move |(i, &s)| (f, i, s)))
            .max_by(|a, b| a.2.total_cmp(&b.2))
    }

    /// The largest strength (0 for an image without edges).
    pub fn max_strength(&self) -> f32 {
        self.strongest().map_or(0.0, |s| s.2)
    }
}

/// The five basis responses of one family at one scale for one channel, `n` cracks each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Basis {
    pub gx: Vec<f32>,
    pub gy: Vec<f32>,
    pub gxx: Vec<f32>,
    pub gxy: Vec<f32>,
    pub gyy: Vec<f32>,
}

/// Checks the image: its shape and that every value is finite.
pub fn check_image(img: &Image) -> Result<(), CrackError> {
    if img.width < 2 || img.height < 2 {
        return Err(CrackError::TooSmall(img.width, img.height));
    }
    let want = img.width * img.height;
    for (channel, c) in img.channels.iter().enumerate() {
        if c.len() != want {
            return Err(CrackError::Shape { channel, got: c.len(), want });
        }
    }
    if img.channels.is_empty() {
        return Err(CrackError::Shape { channel: 0, got: 0, want });
    }
    let bad: usize = img.channels.par_iter().map(|c| c.iter().filter(|v| !v.is_finite()).count()).sum();
    if bad > 0 {
        return Err(CrackError::NonFinite(bad));
    }
    Ok(())
}

/// Strength, orientation and scale of every crack (the CPU reference, on all cores).
pub fn cracks(img: &Image, opts: &CrackOptions, ctl: &Control) -> Result<CrackMap, CrackError> {
    opts.check()?;
    check_image(img)?;
    let dirs = opts.directions();
    let channels = img.channels.len();
    let mut best: [Best; 2] = Family::BOTH.map(|f| {
        let (w, h) = f.dims(img.width, img.height);
        Best::new(w * h, channels)
    });
    let mut scratch = separable::Scratch::default();
    // Each channel's pass B outputs, kept while the next channel is filtered.
    let mut outs: Vec<[Vec<f32>; 5]> = vec![Default::default(); channels];
    for (si, &s) in opts.scales.iter().enumerate() {
        let taps = separable::Taps::new(s, opts.radius(s));
        for f in Family::BOTH {
            let mut first = Vec::with_capacity(channels);
            for (values, out) in img.channels.iter().zip(outs.iter_mut()) {
                ctl.check()?;
                first.push(separable::first_derivatives(
                    values,
                    img.width,
                    img.height,
                    f,
                    &taps,
                    &mut scratch,
                    out,
                ));
                ctl.tick((img.width * img.height) as u64);
            }
            best[f as usize].update(&first, si, f);
        }
    }
    let [h, v] = best.map(|b| b.finish(opts, &dirs));
    Ok(CrackMap {
        width: img.width,
        height: img.height,
        strength: [h.0, v.0],
        angle: [h.1, v.1],
        scale: [h.2, v.2],
    })
}

/// Per crack, the largest energy across it so far, the scale where it was reached and the
/// first derivatives of every channel there (for its orientation, found once at the end).
struct Best {
    energy: Vec<f32>,
    scale: Vec<u32>,
    g: Vec<(Vec<f32>, Vec<f32>)>,
    /// Per crack, all ones where the scale being folded in wins (masks, not branches, so the
    /// loops vectorise).
    better: Vec<u32>,
}

/// Cracks per parallel task.
const CHUNK: usize = 4096;

impl Best {
    fn new(n: usize, channels: usize) -> Best {
        Best {
            energy: vec![-1.0; n],
            scale: vec![0; n],
            g: vec![(vec![0.0; n], vec![0.0; n]); channels],
            better: vec![0; n],
        }
    }

    /// Folds in one scale: `first[c] = (gx, gy)` of channel `c`.
    fn update(&mut self, first: &[(&[f32], &[f32])], si: usize, family: Family) {
        let si = si as u32;
        let better = &mut self.better;
        (self.energy.par_chunks_mut(CHUNK), self.scale.par_chunks_mut(CHUNK), better.par_chunks_mut(CHUNK))
            .into_par_iter()
            .enumerate()
            .for_each(|(chunk, (e, sc, b))| {
                let base = chunk * CHUNK;
                let mut across = vec![0f32; e.len()];
                for &(gx, gy) in first {
                    let g = if family == Family::H { gy } else { gx };
                    for (a, r) in across.iter_mut().zip(&g[base..base + e.len()]) {
                        *a += r * r;
                    }
                }
                // The first scale always writes (a NaN energy, from absurd values, included), as
                // the GPU does; later ones where they are larger.
                let first = si == 0;
                for (((e, sc), b), &a) in e.iter_mut().zip(sc.iter_mut()).zip(b.iter_mut()).zip(&across) {
                    *b = 0u32.wrapping_sub((first || a > *e) as u32);
                    *e = f32::from_bits((e.to_bits() & !*b) | (a.to_bits() & *b));
                    *sc = (*sc & !*b) | (si & *b);
                }
            });
        let pick = |old: f32, new: f32, m: u32| f32::from_bits((old.to_bits() & !m) | (new.to_bits() & m));
        for ((bx, by), &(gx, gy)) in self.g.iter_mut().zip(first) {
            (bx.par_chunks_mut(CHUNK), by.par_chunks_mut(CHUNK), better.par_chunks(CHUNK))
                .into_par_iter()
                .enumerate()
                .for_each(|(chunk, (bx, by, b))| {
                    let base = chunk * CHUNK;
                    let (gx, gy) = (&gx[base..base + b.len()], &gy[base..base + b.len()]);
                    for ((((bx, by), &m), &x), &y) in bx.iter_mut().zip(by.iter_mut()).zip(b).zip(gx).zip(gy)
                    {
                        *bx = pick(*bx, x, m);
                        *by = pick(*by, y, m);
                    }
                });
        }
    }

    /// Strength, orientation (the most energetic steered direction at the winning scale) and
    /// scale of each crack.
    fn finish(self, opts: &CrackOptions, dirs: &[[f32; 2]]) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let n = self.energy.len();
        // The outputs reuse the buffers they are made from where the types allow.
        let mut strength = self.energy;
        strength.par_iter_mut().for_each(|e| *e = e.max(0.0).sqrt());
        let angles: Vec<f32> = (0..dirs.len()).map(|k| opts.angle(k) as f32).collect();
        let mut orientation = vec![0f32; n];
        orientation.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, o)| {
            let (base, len) = (chunk * CHUNK, o.len());
            let g: Vec<(&[f32], &[f32])> =
                self.g.iter().map(|(x, y)| (&x[base..base + len], &y[base..base + len])).collect();
            let mut best = vec![-1f32; len];
            // u32, not u16: the select then vectorises with the f32 compare.
            let mut at = vec![0u32; len];
            let mut sum = vec![0f32; len];
            for (k, &[c, s]) in dirs.iter().enumerate() {
                let k = k as u32;
                if let [(gx, gy)] = g[..] {
                    // One channel (the common case): one pass.
                    for (((best, at), &x), &y) in best.iter_mut().zip(at.iter_mut()).zip(gx).zip(gy) {
                        let r = c * x + s * y;
                        let e = r * r;
                        // Masks, not branches: LLVM makes stores under a condition otherwise.
                        let mask = 0u32.wrapping_sub((e > *best) as u32);
                        *best = best.max(e);
                        *at = (*at & !mask) | (k & mask);
                    }
                    continue;
                }
                sum.iter_mut().for_each(|v| *v = 0.0);
                for &(gx, gy) in &g {
                    for ((sum, &x), &y) in sum.iter_mut().zip(gx).zip(gy) {
                        let r = c * x + s * y;
                        *sum += r * r;
                    }
                }
                for ((best, at), &e) in best.iter_mut().zip(at.iter_mut()).zip(&sum) {
                    let mask = 0u32.wrapping_sub((e > *best) as u32);
                    *best = best.max(e);
                    *at = (*at & !mask) | (k & mask);
                }
            }
            o.iter_mut().zip(&at).for_each(|(o, &k)| *o = angles[k as usize]);
        });
        let mut scale = self.scale;
        scale.par_iter_mut().for_each(|s| *s = (opts.scales[*s as usize] as f32).to_bits());
        (strength, orientation, bytemuck::cast_vec(scale))
    }
}

/// The steered responses of the Gaussian bank (kernel order as [`Bank::gaussian`]: per scale,
/// `D1` at each orientation then `D2` at each), per channel: `out[channel][kernel][crack]`.
pub fn responses(
    img: &Image,
    opts: &CrackOptions,
    family: Family,
    ctl: &Control,
) -> Result<Vec<Vec<Vec<f32>>>, CrackError> {
    opts.check()?;
    check_image(img)?;
    let dirs = opts.directions();
    let mut out = vec![Vec::new(); img.channels.len()];
    for &s in &opts.scales {
        let taps = separable::Taps::new(s, opts.radius(s));
        for (c, values) in img.channels.iter().enumerate() {
            ctl.check()?;
            let b = &separable::basis(values, img.width, img.height, family, &taps);
            ctl.tick((img.width * img.height) as u64);
            for &[co, si] in &dirs {
                out[c].push(b.gx.iter().zip(&b.gy).map(|(x, y)| co * x + si * y).collect());
            }
            for &[co, si] in &dirs {
                let (cc, cs, ss) = (co * co, 2.0 * co * si, si * si);
                out[c]
                    .push((0..b.gxx.len()).map(|i| cc * b.gxx[i] + cs * b.gxy[i] + ss * b.gyy[i]).collect());
            }
        }
    }
    Ok(out)
}
