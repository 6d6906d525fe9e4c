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
        let (nan, infinite) = crate::topo::ecc::count_non_finite_in(v);
        Stats { range, distinct: keys.len(), nan, infinite }
    }
    with_samples!(field.samples(), v => typed(v))
}
