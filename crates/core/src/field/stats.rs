//! Summary statistics of a field: value range, distinct values, non-finite counts.

use super::{Key, Sample, ScalarField};
use crate::with_samples;
use rayon::prelude::*;

#[derive(Clone, Debug, PartialEq)]
pub struct Stats {
    /// Smallest and largest non-NaN value (None when every sample is NaN).
    pub range: Option<(f64, f64)>,
    /// Distinct non-NaN values (-0.0 and +0.0 count once).
    pub distinct: usize,
    pub nan: usize,
    pub infinite: usize,
}

pub fn stats(field: &ScalarField) -> Stats {
    fn typed<T: Sample>(v: &[T]) -> Stats {
        let mut keys: Vec<T::Key> =
            v.par_iter().map(|s| s.to_key()).filter(|&k| k != T::Key::ABSENT).collect();
        keys.par_sort_unstable();
        keys.dedup();
        let range = keys
            .first()
            .map(|&lo| (T::from_key(lo).to_f64(), T::from_key(*keys.last().expect("non-empty")).to_f64()));
        let (nan, infinite) = count_non_finite_in(v);
        Stats { range, distinct: keys.len(), nan, infinite }
    }
    with_samples!(field.samples(), v => typed(v))
}

/// The NaN and infinite samples of a slice, (nan, infinite): `topo::ecc::count_non_finite` of a
/// whole field, and the streamed ECC per slab.
pub fn count_non_finite_in<T: Sample>(v: &[T]) -> (usize, usize) {
    if !T::DTYPE.is_float() {
        return (0, 0);
    }
    v.par_iter()
        .fold(|| (0, 0), |(n, i), s| (n + s.is_nan() as usize, i + s.is_infinite() as usize))
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}
