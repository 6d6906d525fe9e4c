//! Seeded synthetic fields: white noise and Gaussian random fields (white noise smoothed), for
//! teaching examples, tests and benchmarks. The same seed gives the same field on every machine
//! and thread count.

use crate::control::Control;
use crate::field::{self, FieldError, Samples, ScalarField};
use crate::topo::smooth::{self, SmoothError, Smoothing};

/// A xorshift64* generator: fast, and good enough for test fields.
pub fn noise(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RandomFieldError {
    #[error(transparent)]
    Dims(#[from] FieldError),
    #[error(transparent)]
    Smooth(#[from] SmoothError),
}

impl From<crate::control::Cancelled> for RandomFieldError {
    fn from(c: crate::control::Cancelled) -> Self {
        RandomFieldError::Smooth(c.into())
    }
}

/// Gaussian white noise (approximately: a sum of four uniforms, centred), f32. Progress: one
/// unit per voxel.
pub fn white_noise(dims: &[usize], seed: u64, ctl: &Control) -> Result<ScalarField, RandomFieldError> {
    use rayon::prelude::*;
    let n = field::checked_voxels(dims).ok_or_else(|| FieldError::TooLarge(field::dims_string(dims)))?;
    let mut v = vec![0f32; n];
    v.par_chunks_mut(1 << 16).enumerate().try_for_each(|(c, chunk)| {
        ctl.check()?;
        let mut r = noise(seed.wrapping_mul(1_000_003) + c as u64);
        for x in chunk.iter_mut() {
            // Sum of uniforms: close enough to Gaussian for a test field.
            let s: f64 = (0..4).map(|_| (r() >> 11) as f64 / (1u64 << 53) as f64).sum();
            *x = (s - 2.0) as f32;
        }
        ctl.tick(chunk.len() as u64);
        Ok::<(), crate::control::Cancelled>(())
    })?;
    Ok(ScalarField::new(dims, Samples::F32(v))?)
}

/// A smoothed Gaussian random field: [`white_noise`] smoothed with sigma `corr` voxels (f32).
/// Progress: the noise (one unit per voxel), then the smoothing passes.
pub fn gaussian_random_field(
    dims: &[usize],
    corr: f64,
    seed: u64,
    ctl: &Control,
) -> Result<ScalarField, RandomFieldError> {
    let white = white_noise(dims, seed, ctl)?;
    Ok(smooth::smooth(&white, &Smoothing::voxels(corr), ctl)?)
}
