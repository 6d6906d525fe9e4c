//! What the views need to know about a field to show it: value range, a histogram, and a default
//! display window from percentiles.

use rayon::prelude::*;
use topoview_core::field::{Dtype, Sample, ScalarField};
use topoview_core::with_samples;

/// Histogram bins; integer fields with a narrower range get one bin per value.
const BINS: usize = 4096;

#[derive(Clone, Debug, PartialEq)]
pub struct FieldSummary {
    /// Smallest and largest finite value; None when no sample is finite.
    pub range: Option<(f64, f64)>,
    /// Counts of finite values in equal bins from `range.0`, `bin_width` wide (a whole number
    /// of values for integer data).
    pub histogram: Vec<u64>,
    pub bin_width: f64,
    /// Default display window: the 0.5th and 99.5th percentiles (the full range when they meet).
    pub window: (f64, f64),
    pub non_finite: usize,
    /// Signed data (negative values present): shown with a diverging colormap centred on zero.
    pub signed: bool,
    /// Non-negative integers taking 3 to [`LABEL_VALUES`] values: most likely a label map
    /// (a segmentation, an atlas), which the viewer proposes to show as one.
    pub label_like: bool,
}

/// The most distinct values a field the viewer proposes as a label map takes.
pub const LABEL_VALUES: usize = 64;

impl FieldSummary {
    pub fn of(field: &ScalarField) -> FieldSummary {
        with_samples!(field.samples(), v => summarise(v, field.dtype()))
    }

    /// The value at the lower edge of histogram bin `b`.
    pub fn bin_value(&self, b: f64) -> f64 {
        self.range.map_or(0.0, |r| r.0) + b * self.bin_width
    }
}

fn summarise<T: Sample>(v: &[T], dtype: Dtype) -> FieldSummary {
    let (lo, hi, non_finite) = v
        .par_chunks(1 << 16)
        .map(|c| {
            let mut m = (f64::INFINITY, f64::NEG_INFINITY, 0usize);
            for s in c {
                let x = s.to_f64();
                if x.is_finite() {
                    m.0 = m.0.min(x);
                    m.1 = m.1.max(x);
                } else {
                    m.2 += 1;
                }
            }
            m
        })
        .reduce(|| (f64::INFINITY, f64::NEG_INFINITY, 0), |a, b| (a.0.min(b.0), a.1.max(b.1), a.2 + b.2));
    if lo > hi {
        return FieldSummary {
            range: None,
            histogram: vec![0],
            bin_width: 1.0,
            window: (0.0, 1.0),
            non_finite,
            signed: false,
            label_like: false,
        };
    }
    let (bins, width) = if dtype.is_float() {
        (BINS, (hi - lo) / BINS as f64)
    } else {
        let values = hi - lo + 1.0;
        let width = (values / BINS as f64).ceil();
        ((values / width).ceil() as usize, width)
    };
    let scale = 1.0 / width.max(f64::MIN_POSITIVE);
    let bin = |x: f64| (((x - lo) * scale) as usize).min(bins - 1);
    let histogram = v
        .par_chunks(1 << 16)
        .map(|c| {
            let mut h = vec![0u64; bins];
            for s in c {
                let x = s.to_f64();
                if x.is_finite() {
                    h[bin(x)] += 1;
                }
            }
            h
        })
        .reduce(
            || vec![0u64; bins],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    let mut s = FieldSummary {
        range: Some((lo, hi)),
        histogram,
        bin_width: width,
        window: (lo, hi),
        non_finite,
        signed: lo < 0.0,
        label_like: false,
    };
    // Occupied bins count distinct values exactly when a bin is one value wide, and from below
    // otherwise (an intensity image fills hundreds of bins either way).
    let occupied = s.histogram.iter().filter(|&&c| c > 0).count();
    s.label_like = !dtype.is_float() && lo >= 0.0 && (3..=LABEL_VALUES).contains(&occupied);
    let (p_lo, p_hi) = (s.percentile(0.005), s.percentile(0.995));
    if p_hi > p_lo {
        s.window = (p_lo, p_hi);
    }
    if s.signed {
        let m = s.window.0.abs().max(s.window.1.abs());
        s.window = (-m, m);
    }
    s
}

impl FieldSummary {
    /// The value below which a fraction `q` of the finite samples lie, to a bin's width.
    pub fn percentile(&self, q: f64) -> f64 {
        let total: u64 = self.histogram.iter().sum();
        let target = (q * total as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (b, &c) in self.histogram.iter().enumerate() {
            acc += c;
            if acc >= target {
                return self.bin_value(b as f64);
            }
        }
        self.range.map_or(0.0, |r| r.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topoview_core::field::Samples;

    #[test]
    fn integer_bins_are_exact_and_window_skips_outliers() {
        let mut v = vec![10u8; 1000];
        v[0] = 0;
        v[1] = 255;
        v[2..500].iter_mut().for_each(|x| *x = 20);
        let f = ScalarField::new(&[1000], Samples::U8(v)).unwrap();
        let s = FieldSummary::of(&f);
        assert_eq!(s.range, Some((0.0, 255.0)));
        assert_eq!(s.histogram.len(), 256);
        assert_eq!(s.histogram[10], 500);
        assert_eq!(s.window, (10.0, 20.0));
        assert!(!s.signed);
    }

    #[test]
    fn signed_window_is_symmetric_and_nan_is_counted() {
        let f = ScalarField::new(&[4], Samples::F32(vec![-1.0, 0.5, f32::NAN, 2.0])).unwrap();
        let s = FieldSummary::of(&f);
        assert_eq!(s.non_finite, 1);
        assert_eq!(s.range, Some((-1.0, 2.0)));
        assert!(s.signed);
        assert_eq!(s.window.0, -s.window.1);
    }

    #[test]
    fn all_nan_has_no_range() {
        let f = ScalarField::new(&[2], Samples::F64(vec![f64::NAN; 2])).unwrap();
        assert_eq!(FieldSummary::of(&f).range, None);
    }
}
