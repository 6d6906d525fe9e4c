//! One field sampled at the voxels of another through their voxel-to-world transforms: how a
//! layer (a statistical map, a label map) is put on the grid of the image it lies over, as
//! ITK-SNAP and FSLeyes do. Nearest-neighbour keeps label ids intact; trilinear suits
//! intensities. Where the grid's voxel lies outside the layer, the result is NaN (nothing to
//! draw there).
//!
//! A field without an affine is placed by its spacing, its voxel 0 at the world's origin
//! ([`ScalarField::affine_or_spacing`]): two such fields of the same shape line up voxel for
//! voxel.

use super::affine::{self, Mat4};
use super::{Dtype, Sample, Samples, ScalarField};
use crate::control::{Cancelled, Control};
use rayon::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// The value of the voxel containing the point: for labels.
    Nearest,
    /// Trilinear between the eight voxel centres around the point: for intensities.
    Linear,
}

#[derive(Debug, PartialEq, thiserror::Error)]
pub enum ResampleError {
    #[error("its voxel-to-world transform cannot be inverted")]
    Singular,
    #[error("it does not overlap the image: no voxel of the image lies inside it in world coordinates")]
    NoOverlap,
    #[error("cancelled")]
    Cancelled(#[from] Cancelled),
}

/// The transform from `grid`'s voxel indices to `moving`'s.
pub fn grid_to_moving(moving: &ScalarField, grid: &ScalarField) -> Result<Mat4, ResampleError> {
    let to_moving = affine::inverse(&moving.affine_or_spacing()).ok_or(ResampleError::Singular)?;
    Ok(affine::mul(&to_moving, &grid.affine_or_spacing()))
}

/// `moving` sampled at every voxel of `grid`, on `grid`'s geometry (dims, spacing, affine).
/// Samples are `f32`, or `f64` where nearest-neighbour keeps values `f32` cannot hold exactly
/// (32-bit integers, `f64`); NaN outside `moving`. Progress ticks one per grid voxel.
pub fn resample(
    moving: &ScalarField,
    grid: &ScalarField,
    how: Interpolation,
    ctl: &Control,
) -> Result<ScalarField, ResampleError> {
    let m = grid_to_moving(moving, grid)?;
    let wide =
        how == Interpolation::Nearest && matches!(moving.dtype(), Dtype::U32 | Dtype::I32 | Dtype::F64);
    let (n, g) = (moving.dims(), grid.dims());
    let samples = if wide {
        Samples::F64(crate::with_samples!(moving.samples(), v => fill(v, n, g, &m, how, ctl, |x| x)?))
    } else {
        Samples::F32(crate::with_samples!(moving.samples(), v => fill(v, n, g, &m, how, ctl, |x| x as f32)?))
    };
    let out = grid.with_samples(samples).expect("the grid's own shape");
    let inside = match out.samples() {
        Samples::F32(v) => v.iter().any(|x| !x.is_nan()),
        Samples::F64(v) => v.iter().any(|x| !x.is_nan()),
        _ => unreachable!("resampled fields are floating point"),
    };
    // NaN samples of `moving` itself come out NaN too: all NaN over the grid means no
    // overlap unless `moving` holds nothing but NaN.
    let has_values = || crate::with_samples!(moving.samples(), v => v.iter().any(|x| !x.is_nan()));
    if !inside && has_values() {
        return Err(ResampleError::NoOverlap);
    }
    Ok(ScalarField { notes: Vec::new(), series: None, labels: false, ..out })
}

/// The samples at every grid voxel, plane by plane on all cores.
#[allow(clippy::too_many_arguments)]
fn fill<T: Sample, O: Copy + Send>(
    v: &[T],
    n: [usize; 3],
    grid: [usize; 3],
    m: &Mat4,
    how: Interpolation,
    ctl: &Control,
    convert: impl Fn(f64) -> O + Sync,
) -> Result<Vec<O>, Cancelled> {
    let mut out = vec![convert(f64::NAN); grid[0] * grid[1] * grid[2]];
    let plane = grid[0] * grid[1];
    out.par_chunks_mut(plane).enumerate().try_for_each(|(z, dst)| {
        ctl.check()?;
        for y in 0..grid[1] {
            let row = &mut dst[y * grid[0]..(y + 1) * grid[0]];
            for (x, o) in row.iter_mut().enumerate() {
                let p = affine::transform_point(m, [x as f64, y as f64, z as f64]);
                *o = convert(match how {
                    Interpolation::Nearest => nearest(v, n, p),
                    Interpolation::Linear => linear(v, n, p),
                });
            }
        }
        ctl.tick(plane as u64);
        Ok(())
    })?;
    Ok(out)
}

/// Whether the point lies in the voxel cells of a grid of `n` (voxel i spans [i - 0.5, i + 0.5)).
fn inside(n: [usize; 3], p: [f64; 3]) -> bool {
    (0..3).all(|a| p[a] >= -0.5 && p[a] < n[a] as f64 - 0.5)
}

fn nearest<T: Sample>(v: &[T], n: [usize; 3], p: [f64; 3]) -> f64 {
    if !inside(n, p) {
        return f64::NAN;
    }
    let i: [usize; 3] = std::array::from_fn(|a| ((p[a] + 0.5).floor() as usize).min(n[a] - 1));
    v[i[0] + n[0] * (i[1] + n[1] * i[2])].to_f64()
}

/// Trilinear interpolation; within half a voxel of the edge the edge voxels' values extend
/// outwards. A NaN corner of positive weight makes the result NaN (one of weight 0, on a
/// voxel centre's own plane, does not).
fn linear<T: Sample>(v: &[T], n: [usize; 3], p: [f64; 3]) -> f64 {
    if !inside(n, p) {
        return f64::NAN;
    }
    let mut lo = [0usize; 3];
    let mut hi = [0usize; 3];
    let mut t = [0.0f64; 3];
    for a in 0..3 {
        let q = p[a].clamp(0.0, (n[a] - 1) as f64);
        let f = q.floor();
        lo[a] = f as usize;
        hi[a] = (lo[a] + 1).min(n[a] - 1);
        t[a] = q - f;
    }
    let at = |x: usize, y: usize, z: usize| v[x + n[0] * (y + n[1] * z)].to_f64();
    let lerp = |a: f64, b: f64, t: f64| if t == 0.0 { a } else { a + (b - a) * t };
    let plane = |z: usize| {
        let y0 = lerp(at(lo[0], lo[1], z), at(hi[0], lo[1], z), t[0]);
        let y1 = lerp(at(lo[0], hi[1], z), at(hi[0], hi[1], z), t[0]);
        lerp(y0, y1, t[1])
    };
    lerp(plane(lo[2]), plane(hi[2]), t[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(dims: &[usize], values: Vec<f32>, affine: Option<Mat4>) -> ScalarField {
        let mut f = ScalarField::new(dims, Samples::F32(values)).unwrap();
        f.affine = affine;
        f
    }

    fn values(f: &ScalarField) -> Vec<f64> {
        (0..f.len()).map(|i| f.samples().get_f64(i)).collect()
    }

    fn ramp(dims: [usize; 3]) -> Vec<f32> {
        (0..dims[0] * dims[1] * dims[2]).map(|i| i as f32).collect()
    }

    #[test]
    fn the_same_grid_gives_the_same_samples() {
        let a =
            Some([[2.0, 0.0, 0.0, -10.0], [0.0, 0.0, -3.0, 5.0], [0.0, 1.5, 0.0, 7.0], [0.0, 0.0, 0.0, 1.0]]);
        let f = field(&[4, 5, 3], ramp([4, 5, 3]), a);
        for how in [Interpolation::Nearest, Interpolation::Linear] {
            let r = resample(&f, &f, how, &Control::default()).unwrap();
            let got = values(&r);
            let want = values(&f);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-9, "{how:?}: {g} vs {w}");
            }
            assert_eq!(r.affine, f.affine);
        }
    }

    /// A layer stored flipped along x and with y and z swapped, at twice the image's voxel
    /// size: every image voxel reads the layer voxel at the same world point.
    #[test]
    fn nearest_follows_both_affines_against_a_direct_lookup() {
        let image = field(&[8, 6, 4], vec![0.0; 8 * 6 * 4], Some(affine::IDENTITY));
        let n = [4, 2, 3];
        // Layer voxel (i, j, k) at world (6 - 2i, 2k, 2j).
        let la = [[-2.0, 0.0, 0.0, 6.0], [0.0, 0.0, 2.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let layer = field(&n, ramp(n), Some(la));
        let r = resample(&layer, &image, Interpolation::Nearest, &Control::default()).unwrap();
        for z in 0..4 {
            for y in 0..6 {
                for x in 0..8 {
                    // Naive: search every layer voxel for the one whose cell holds the point.
                    let mut want = f64::NAN;
                    for k in 0..n[2] {
                        for j in 0..n[1] {
                            for i in 0..n[0] {
                                let w = [6.0 - 2.0 * i as f64, 2.0 * k as f64, 2.0 * j as f64];
                                let d = [x as f64 - w[0], y as f64 - w[1], z as f64 - w[2]];
                                // The cell spans one voxel (2 mm) around the centre; the
                                // flipped x axis makes its half-open side the other one.
                                let inx = d[0] > -1.0 && d[0] <= 1.0;
                                let iny = d[1] >= -1.0 && d[1] < 1.0;
                                let inz = d[2] >= -1.0 && d[2] < 1.0;
                                if inx && iny && inz {
                                    want = (i + n[0] * (j + n[1] * k)) as f64;
                                }
                            }
                        }
                    }
                    let got = r.samples().get_f64(r.index(x, y, z));
                    assert!(got == want || (got.is_nan() && want.is_nan()), "({x},{y},{z}): {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn linear_interpolates_a_linear_field_exactly() {
        // f = 3x - 2y + 5z + 1 on a 5x4x3 layer with 1 mm voxels, read on a grid of 0.5 mm
        // voxels shifted by 0.25 mm: inside, trilinear interpolation is exact.
        let n = [5, 4, 3];
        let f: Vec<f32> = (0..60)
            .map(|i| {
                let (x, y, z) = (i % 5, (i / 5) % 4, i / 20);
                (3 * x - 2 * y + 5 * z + 1) as f32
            })
            .collect();
        let layer = field(&n, f, None);
        let ga = [[0.5, 0.0, 0.0, 0.25], [0.0, 0.5, 0.0, 0.25], [0.0, 0.0, 0.5, 0.25], [0.0, 0.0, 0.0, 1.0]];
        let grid = field(&[8, 6, 4], vec![0.0; 8 * 6 * 4], Some(ga));
        let r = resample(&layer, &grid, Interpolation::Linear, &Control::default()).unwrap();
        for z in 0..4 {
            for y in 0..6 {
                for x in 0..8 {
                    let p = [0.25 + 0.5 * x as f64, 0.25 + 0.5 * y as f64, 0.25 + 0.5 * z as f64];
                    let got = r.samples().get_f64(r.index(x, y, z));
                    let want = 3.0 * p[0] - 2.0 * p[1] + 5.0 * p[2] + 1.0;
                    assert!((got - want).abs() < 1e-4, "({x},{y},{z}): {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn outside_is_nan_and_no_overlap_is_an_error() {
        let layer = field(&[2, 2, 2], vec![1.0; 8], None);
        let grid = field(&[4, 4, 4], vec![0.0; 64], None);
        let r = resample(&layer, &grid, Interpolation::Linear, &Control::default()).unwrap();
        let inside = values(&r).iter().filter(|v| !v.is_nan()).count();
        assert_eq!(inside, 8);
        let mut far = affine::IDENTITY;
        far[0][3] = 100.0;
        let away = field(&[2, 2, 2], vec![1.0; 8], Some(far));
        let e = resample(&away, &grid, Interpolation::Nearest, &Control::default()).unwrap_err();
        assert_eq!(e, ResampleError::NoOverlap);
        let mut flat = affine::IDENTITY;
        flat[2][2] = 0.0;
        let singular = field(&[2, 2, 2], vec![1.0; 8], Some(flat));
        let e = resample(&singular, &grid, Interpolation::Nearest, &Control::default()).unwrap_err();
        assert_eq!(e, ResampleError::Singular);
    }

    #[test]
    fn nearest_keeps_wide_label_ids_exact() {
        let ids = vec![16_777_217u32, 4_000_000_001, 7, 0];
        let layer = ScalarField::new(&[4], Samples::U32(ids.clone())).unwrap();
        let r = resample(&layer, &layer, Interpolation::Nearest, &Control::default()).unwrap();
        assert_eq!(values(&r), ids.iter().map(|&i| i as f64).collect::<Vec<_>>());
    }

    #[test]
    fn a_nan_corner_makes_the_interpolated_value_nan() {
        let layer = field(&[2], vec![1.0, f32::NAN], None);
        let ga = [[0.5, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let grid = field(&[3], vec![0.0; 3], Some(ga));
        let r = resample(&layer, &grid, Interpolation::Linear, &Control::default()).unwrap();
        let v = values(&r);
        assert_eq!(v[0], 1.0);
        assert!(v[1].is_nan() && v[2].is_nan());
    }
}
