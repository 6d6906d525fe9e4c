//! Separable Gaussian smoothing on the CPU: the reference for the GPU version and a step of the
//! (smoothing + ECC) pipeline.
//!
//! Definition, per axis with standard deviation `s` voxels (`s = 0` leaves the axis alone):
//! * taps `w_k = exp(-k^2 / (2 s^2))` for `k = -r..=r`, `r = floor(truncate * s + 0.5)` (so
//!   `s = 2` with the default `truncate = 3` gives 13 taps), normalised to sum 1;
//! * boundary mode **reflect** (half-sample symmetric, `d c b a | a b c d | d c b a`), the
//!   default of scipy.ndimage, repeated as often as the kernel needs on short axes;
//! * arithmetic in f32, taps summed in the order `k = -r..=r`; axes filtered x, then y, then z.
//!
//! The result is an f32 field with the input's geometry, whatever the input type.

use crate::control::Control;
use crate::field::{Sample, Samples, ScalarField};
use crate::with_samples;
use rayon::prelude::*;

/// Units of a smoothing sigma.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SigmaUnits {
    /// The same sigma in voxels along every axis.
    #[default]
    Voxels,
    /// Sigma in the physical units of the voxel spacing (usually mm); divided by the spacing of
    /// each axis.
    Physical,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Smoothing {
    pub sigma: f64,
    pub units: SigmaUnits,
    pub truncate: f64,
}

impl Smoothing {
    pub const DEFAULT_TRUNCATE: f64 = 3.0;

    pub fn voxels(sigma: f64) -> Self {
        Smoothing { sigma, units: SigmaUnits::Voxels, truncate: Self::DEFAULT_TRUNCATE }
    }

    /// Sigma in voxels along x, y, z of `field` (0 on unused axes).
    pub fn sigma_voxels(&self, field: &ScalarField) -> [f64; 3] {
        self.sigma_voxels_of(&field.grid())
    }

    /// Sigma in voxels along x, y, z of a field on `grid` (0 on unused axes).
    pub fn sigma_voxels_of(&self, grid: &crate::field::Grid) -> [f64; 3] {
        std::array::from_fn(|a| {
            if a >= grid.shape.len() {
                0.0
            } else if self.units == SigmaUnits::Physical {
                self.sigma / grid.spacing[a]
            } else {
                self.sigma
            }
        })
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SmoothError {
    #[error("sigma must be finite and not negative, got {0}")]
    BadSigma(f64),
    #[error("truncate must be finite and positive, got {0}")]
    BadTruncate(f64),
    #[error("a kernel radius of {0} voxels is too large")]
    TooWide(f64),
    #[error(
        "smoothing is computed in f32, and this f64 field holds {0:e}, beyond f32's range \
         (about 3.4e38); rescale the data first"
    )]
    OutOfF32(f64),
    #[error("cancelled")]
    Cancelled,
}

impl From<crate::control::Cancelled> for SmoothError {
    fn from(_: crate::control::Cancelled) -> Self {
        SmoothError::Cancelled
    }
}

/// The largest kernel radius taken, in voxels. Kernels longer than twice the axis are folded
/// (see [`folded`]), so the cost of a wide kernel is bounded by the field, not by sigma; this
/// bound only keeps the folding itself (one Gaussian sample per tap) under a second or so.
const MAX_RADIUS: f64 = 1e8;

/// Whether smoothing along an axis of `n` samples with radius `r` folds the kernel: when it is
/// longer than twice the axis and so long (over 4096 voxels of radius) that applying it tap by
/// tap would be slow, on an axis of at most [`MAX_FOLDED_AXIS`] samples (the folded kernel is
/// an `n` x `n` matrix). Other kernels keep the tap-by-tap sum, which the GPU reproduces bit
/// for bit.
pub fn folds(r: usize, n: usize) -> bool {
    2 * r + 1 > 2 * n && r > 4096 && n <= MAX_FOLDED_AXIS
}

/// The longest axis whose kernel is folded: its matrix takes 64 MiB.
const MAX_FOLDED_AXIS: usize = 4096;

/// Whether any axis of `field` folds its kernel under `s` (the GPU kernels take taps only).
pub fn any_folds(field: &ScalarField, s: &Smoothing) -> bool {
    let sig = s.sigma_voxels(field);
    (0..field.ndim())
        .any(|a| sig[a] > 0.0 && folds((s.truncate * sig[a] + 0.5).floor() as usize, field.shape()[a]))
}

/// The kernel of radius `r` applied with the reflect boundary to a line of `n` samples, as an
/// `n` x `n` matrix (row i: the weight of each input sample in output i). With reflection the
/// line repeats with period `2n`, so the taps fold into `2n` sums first, each tap counted once:
/// exact for any radius, at a cost of `r + n^2` instead of `r` per output sample.
pub fn folded(sigma: f64, r: usize, n: usize) -> Vec<f32> {
    let period = 2 * n;
    let mut per_offset = vec![0f64; period];
    let mut sum = 0.0;
    for k in 0..=2 * r {
        let d = k as f64 - r as f64;
        let g = (-(d * d) / (2.0 * sigma * sigma)).exp();
        per_offset[k % period] += g;
        sum += g;
    }
    let mut m = vec![0f32; n * n];
    for i in 0..n {
        let mut row = vec![0f64; n];
        for (o, &w) in per_offset.iter().enumerate() {
            row[reflect(i as i64 + o as i64 - r as i64, n)] += w;
        }
        for (j, w) in row.into_iter().enumerate() {
            m[i * n + j] = (w / sum) as f32;
        }
    }
    m
}

/// The normalised taps for one axis (a single tap of 1 when `sigma` is 0).
pub fn taps(sigma: f64, truncate: f64) -> Vec<f32> {
    if sigma == 0.0 {
        return vec![1.0];
    }
    let r = (truncate * sigma + 0.5).floor() as i64;
    let w: Vec<f64> = (-r..=r).map(|k| (-(k * k) as f64 / (2.0 * sigma * sigma)).exp()).collect();
    let sum: f64 = w.iter().sum();
    w.iter().map(|x| (x / sum) as f32).collect()
}

/// Index `i` (possibly outside `0..n`) reflected into `0..n`.
pub fn reflect(i: i64, n: usize) -> usize {
    let n = n as i64;
    let m = i.rem_euclid(2 * n);
    (if m < n { m } else { 2 * n - 1 - m }) as usize
}

/// Whether `field` can be smoothed with `s`: sigma, truncate and radius in range, and values
/// f32 can hold (smoothing is computed in f32, as scipy.ndimage does for f32 input; an f64
/// value beyond f32's range would turn into an infinity the file does not hold).
pub fn check(field: &ScalarField, s: &Smoothing) -> Result<(), SmoothError> {
    if !s.sigma.is_finite() || s.sigma < 0.0 {
        return Err(SmoothError::BadSigma(s.sigma));
    }
    if !s.truncate.is_finite() || s.truncate <= 0.0 {
        return Err(SmoothError::BadTruncate(s.truncate));
    }
    let sig = s.sigma_voxels(field);
    for (a, &sv) in sig.iter().enumerate().take(field.ndim()) {
        let r = s.truncate * sv;
        // Kernels are folded only on axes short enough for an n x n matrix; elsewhere they are
        // applied tap by tap, which a radius of more than a million voxels makes too slow.
        let foldable = sv > 0.0 && folds((r + 0.5).floor() as usize, field.shape()[a]);
        if r > MAX_RADIUS || (r > 1e6 && !foldable) {
            return Err(SmoothError::TooWide(r));
        }
    }
    if let Samples::F64(v) = field.samples() {
        let too_big = v.par_iter().copied().filter(|x| x.is_finite() && x.abs() > f32::MAX as f64);
        if let Some(x) = too_big.max_by(|a, b| a.abs().total_cmp(&b.abs())) {
            return Err(SmoothError::OutOfF32(x));
        }
    }
    Ok(())
}

/// Smooths `field`; progress is reported in voxels per axis pass (3 passes of `len` voxels for a
/// 3D field).
pub fn smooth(field: &ScalarField, s: &Smoothing, ctl: &Control) -> Result<ScalarField, SmoothError> {
    check(field, s)?;
    let sig = s.sigma_voxels(field);
    let mut data: Vec<f32> = with_samples!(field.samples(), v => v.par_iter().map(|x| x.to_f32()).collect());
    let range = value_range(&data);
    let mut tmp = vec![0f32; data.len()];
    let [nx, ny, nz] = field.dims();
    for (axis, &sigma) in sig.iter().enumerate().take(field.ndim()) {
        if ctl.cancelled() {
            return Err(SmoothError::Cancelled);
        }
        let r = if sigma == 0.0 { 0 } else { (s.truncate * sigma + 0.5).floor() as usize };
        if r == 0 {
            continue;
        }
        let n = field.dims()[axis];
        if folds(r, n) {
            let m = folded(sigma, r, n);
            match axis {
                0 => pass_x_matrix(&data, &mut tmp, nx, &m, ctl),
                1 => pass_strided_matrix(&data, &mut tmp, nx, ny, &m, ctl),
                _ => pass_strided_matrix(&data, &mut tmp, nx * ny, nz, &m, ctl),
            }
        } else {
            let w = taps(sigma, s.truncate);
            match axis {
                0 => pass_x(&data, &mut tmp, nx, &w, ctl),
                1 => pass_strided(&data, &mut tmp, nx, ny, nz, &w, ctl),
                _ => pass_strided(&data, &mut tmp, nx * ny, nz, 1, &w, ctl),
            }
        }
        ctl.check()?;
        std::mem::swap(&mut data, &mut tmp);
        ctl.tick(data.len() as u64);
    }
    if let Some((lo, hi)) = range {
        data.par_iter_mut().for_each(|v| *v = clamp(*v, lo, hi));
    }
    Ok(field.with_samples(Samples::F32(data)).expect("smoothing keeps the field's shape"))
}

/// The least and greatest of `values`, NaN left out (None when all are NaN): the range a
/// smoothed field is kept in. Its weights sum to 1, so each value lies in that range, but
/// rounding can carry one past it by an ulp (a plateau of 7s gave 7.0000005, beyond the
/// field's maximum, and left the top threshold's set short of the whole field).
pub fn value_range(values: &[f32]) -> Option<(f32, f32)> {
    values
        .par_iter()
        .filter(|v| !v.is_nan())
        .fold(|| None, |r: Option<(f32, f32)>, &v| Some(r.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v)))))
        .reduce(
            || None,
            |a, b| match (a, b) {
                (Some((l1, h1)), Some((l2, h2))) => Some((l1.min(l2), h1.max(h2))),
                (a, None) => a,
                (None, b) => b,
            },
        )
}

/// `v` within `lo..=hi`; NaN stays NaN (as in kernels/smooth.cu's `clamp_f32`).
pub fn clamp(v: f32, lo: f32, hi: f32) -> f32 {
    if v > hi {
        hi
    } else if v < lo {
        lo
    } else {
        v
    }
}

/// Filters every row along x with the folded kernel `m` (see [`folded`]).
fn pass_x_matrix(src: &[f32], dst: &mut [f32], nx: usize, m: &[f32], ctl: &Control) {
    dst.par_chunks_mut(nx).zip(src.par_chunks(nx)).for_each(|(out, row)| {
        if ctl.cancelled() {
            return;
        }
        for (i, o) in out.iter_mut().enumerate() {
            *o = m[i * nx..(i + 1) * nx].iter().zip(row).map(|(w, v)| w * v).sum();
        }
    });
}

/// Filters along a strided axis (lines `line` samples apart, `n` of them per block) with the
/// folded kernel `m`.
fn pass_strided_matrix(src: &[f32], dst: &mut [f32], line: usize, n: usize, m: &[f32], ctl: &Control) {
    let block = line * n;
    dst.par_chunks_mut(line).enumerate().for_each(|(li, out)| {
        if ctl.cancelled() {
            return;
        }
        let (b, i) = (li / n, li % n);
        out.fill(0.0);
        for (j, &w) in m[i * n..(i + 1) * n].iter().enumerate() {
            let inp = &src[b * block + j * line..][..line];
            for (o, &v) in out.iter_mut().zip(inp) {
                *o += w * v;
            }
        }
    });
}

/// Filters every row along x (contiguous).
/// Once `ctl` is cancelled, the remaining lines are skipped (the caller discards the pass).
fn pass_x(src: &[f32], dst: &mut [f32], nx: usize, w: &[f32], ctl: &Control) {
    let r = (w.len() / 2) as i64;
    dst.par_chunks_mut(nx).zip(src.par_chunks(nx)).for_each_init(Vec::new, |padded, (out, row)| {
        if ctl.cancelled() {
            return;
        }
        padded.clear();
        padded.extend((-r..nx as i64 + r).map(|i| row[reflect(i, nx)]));
        // Tap by tap over the whole row: the same sums in the same order as a per-voxel loop
        // (the same bits), but they vectorize across x instead of waiting on one addition
        // after another. Measured on 256^3 f32, sigma 2, 2 threads: the whole smoothing
        // 0.163 s -> 0.121 s; the per-voxel loop also ran up to 25% slower in some processes
        // than in others, depending on where its buffers lay.
        out.fill(0.0);
        for (k, &wk) in w.iter().enumerate() {
            for (o, &v) in out.iter_mut().zip(&padded[k..k + nx]) {
                *o += wk * v;
            }
        }
    });
}

/// Filters along an axis whose neighbours are `line` samples apart: the data are `outer` blocks
/// of `n` lines of `line` samples, and each output line is a weighted sum of whole input lines
/// (contiguous, so the inner loop vectorizes).
/// Cancellation as in [`pass_x`].
fn pass_strided(src: &[f32], dst: &mut [f32], line: usize, n: usize, outer: usize, w: &[f32], ctl: &Control) {
    let r = (w.len() / 2) as i64;
    let block = line * n;
    debug_assert_eq!(src.len(), block * outer);
    dst.par_chunks_mut(line).enumerate().for_each(|(li, out)| {
        if ctl.cancelled() {
            return;
        }
        let (b, i) = (li / n, li % n);
        let base = b * block;
        out.fill(0.0);
        for (k, &wk) in w.iter().enumerate() {
            let j = reflect(i as i64 + k as i64 - r, n);
            let inp = &src[base + j * line..][..line];
            for (o, &v) in out.iter_mut().zip(inp) {
                *o += wk * v;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_match_definition() {
        let w = taps(2.0, 3.0);
        assert_eq!(w.len(), 13);
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(w[0], w[12]);
        assert!(w[6] > w[5]);
        assert_eq!(taps(0.0, 3.0), vec![1.0]);
        assert_eq!(taps(0.1, 3.0), vec![1.0]);
    }

    #[test]
    fn a_folded_kernel_equals_the_taps_applied_with_reflection() {
        for (n, sigma) in [(1usize, 0.7), (2, 1.0), (5, 2.0), (7, 9.0), (3, 40.0), (10, 3.5)] {
            let r = (3.0 * sigma + 0.5f64).floor() as usize;
            let w = taps(sigma, 3.0);
            let m = folded(sigma, r, n);
            let x: Vec<f32> = (0..n).map(|i| ((i * 37 + 11) % 17) as f32 - 8.0).collect();
            for i in 0..n {
                let direct: f64 = w
                    .iter()
                    .enumerate()
                    .map(|(k, &wk)| wk as f64 * x[reflect(i as i64 + k as i64 - r as i64, n)] as f64)
                    .sum();
                let via: f64 = (0..n).map(|j| m[i * n + j] as f64 * x[j] as f64).sum();
                assert!((direct - via).abs() < 1e-5, "n {n} sigma {sigma} i {i}: {direct} vs {via}");
            }
            // Rows sum to 1: smoothing keeps the mean.
            for i in 0..n {
                let s: f32 = m[i * n..(i + 1) * n].iter().sum();
                assert!((s - 1.0).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn wide_kernels_fold_on_short_axes_only() {
        let field = |n: usize| ScalarField::new(&[n], Samples::U8(vec![0; n])).unwrap();
        let wide = Smoothing::voxels(400_000.0);
        // 4000 samples: folded (a 4000^2 matrix); 5000: too long to fold, too wide for taps.
        assert!(check(&field(4000), &wide).is_ok() && any_folds(&field(4000), &wide));
        assert!(matches!(check(&field(5000), &wide), Err(SmoothError::TooWide(_))));
        // A kernel that fits tap by tap is never folded, whatever the axis.
        assert!(!any_folds(&field(10), &Smoothing::voxels(1000.0)));
    }

    #[test]
    fn reflect_is_half_sample_symmetric() {
        let got: Vec<usize> = (-5..9).map(|i| reflect(i, 4)).collect();
        assert_eq!(got, vec![3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]);
        assert_eq!(reflect(-3, 1), 0);
    }
}
