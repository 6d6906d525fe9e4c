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

// Fields of the benchmarks (`topoview bench`, `bench --cuda`): their shapes are the benchmarks' own,
// known to be valid, hence the expects.

/// Uniform u8 noise (the SoCG paper's "uniform noise" data).
pub fn noise_u8(dims: &[usize]) -> ScalarField {
    use rayon::prelude::*;
    let n: usize = dims.iter().product();
    let mut v = vec![0u8; n];
    v.par_chunks_mut(1 << 16).enumerate().for_each(|(c, chunk)| {
        let mut r = noise(c as u64 + 1);
        for x in chunk {
            *x = (r() >> 56) as u8;
        }
    });
    ScalarField::new(dims, Samples::U8(v)).expect("bench dims are valid")
}

/// f32 noise quantised to `levels` values in [0, 1) (the SoCG paper's GRFs have 1024 levels).
pub fn levels_f32(dims: &[usize], levels: u32) -> ScalarField {
    use rayon::prelude::*;
    let n: usize = dims.iter().product();
    let mut v = vec![0f32; n];
    v.par_chunks_mut(1 << 16).enumerate().for_each(|(c, chunk)| {
        let mut r = noise(c as u64 + 7);
        for x in chunk {
            *x = (r() % levels as u64) as f32 / levels as f32;
        }
    });
    ScalarField::new(dims, Samples::F32(v)).expect("bench dims are valid")
}

/// f32 values that are all distinct and scattered: voxel i holds the float with bits
/// 0x3f80_0000 + (i * odd mod 2^k), an injective map onto finite positive floats.
pub fn distinct_f32(dims: &[usize]) -> ScalarField {
    use rayon::prelude::*;
    let n: usize = dims.iter().product();
    let k = n.next_power_of_two().trailing_zeros().max(1);
    assert!(k <= 28, "at most 2^28 voxels keep the bits inside finite floats");
    let mask = (1u64 << k) - 1;
    let v: Vec<f32> = (0..n as u64)
        .into_par_iter()
        .map(|i| f32::from_bits(0x3f80_0000 + ((i.wrapping_mul(0x9E37_79B1) & mask) as u32)))
        .collect();
    ScalarField::new(dims, Samples::F32(v)).expect("bench dims are valid")
}

/// A smoothed Gaussian random field for benchmarks (see [`crate::field::random`]); `dims`
/// and `corr` are the benchmark's own, known to be valid.
pub fn bench_grf(dims: &[usize], corr: f64, seed: u64) -> ScalarField {
    gaussian_random_field(dims, corr, seed, &Control::default())
        .expect("benchmark fields have valid dims and sigma")
}

/// The image the crack benchmarks filter: a smoothed Gaussian random field (the filter's work
/// does not depend on the values).
pub fn crack_image(w: usize, h: usize) -> crate::topo::cracks::Image {
    let f = bench_grf(&[w, h], 2.0, 5);
    let v = match f.samples() {
        Samples::F32(v) => v.clone(),
        _ => unreachable!("random fields are f32"),
    };
    crate::topo::cracks::Image::grey(w, h, v)
}
