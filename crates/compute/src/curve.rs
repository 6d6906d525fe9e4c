//! What the viewer shows of a curve, prepared on the worker when the curve is computed, so a
//! curve of millions of points costs the UI thread nothing when it arrives: the plot's thinned
//! points, the zero-crossings and the suggested threshold.

use std::sync::Arc;
use topoview_core::field::Samples;
use topoview_core::topo::ecc::Ecc;
use topoview_core::topo::ecc::crossings::{self, Crossing};

/// Most points a curve is drawn with: a float field can have a curve of millions of points,
/// which no plot needs and egui_plot would redraw every frame.
const PLOT_POINTS: usize = 4096;

/// A curve and what the panel shows of it, computed once when it arrives.
pub struct Curve {
    pub ecc: Arc<Ecc>,
    /// The curve thinned to at most about [`PLOT_POINTS`] points, keeping each run's extremes.
    pub points: Vec<[f64; 2]>,
    pub crossings: Vec<Crossing>,
    pub suggested: Option<f64>,
}

impl Curve {
    /// Thins and scans `ecc` (linear in its length: call it off the UI thread).
    pub fn new(ecc: Arc<Ecc>) -> Curve {
        let crossings = crossings::zero_crossings(&ecc);
        let suggested = crossings::suggested_threshold(&crossings);
        let points = topoview_core::with_chi!(&ecc.chi, v => thin(&ecc.thresholds, |i| topoview_core::topo::ecc::chi::widen(v[i]), PLOT_POINTS));
        Curve { points, ecc, crossings, suggested }
    }

    /// Euler characteristic at threshold `t`.
    pub fn chi_at(&self, t: f64) -> i64 {
        chi_at(&self.ecc, t)
    }
}

// The curve read at a threshold is the core's: the scale-space and the exports read it too.
pub use topoview_core::topo::ecc::{chi_at, passed};

/// `(t, chi(i))` points; runs of consecutive points are replaced by their first, lowest,
/// highest and last point (in curve order), so a plot keeps every spike and the ends.
pub fn thin(t: &Samples, chi: impl Fn(usize) -> i64, max_points: usize) -> Vec<[f64; 2]> {
    let n = t.len();
    let point = |i: usize| [t.get_f64(i), chi(i) as f64];
    let run = n.div_ceil(max_points / 4).max(1);
    if run <= 1 {
        return (0..n).map(point).collect();
    }
    let mut out = Vec::with_capacity(4 * n.div_ceil(run));
    for start in (0..n).step_by(run) {
        let end = (start + run).min(n);
        let lo = (start..end).min_by_key(|&i| chi(i)).unwrap_or(start);
        let hi = (start..end).max_by_key(|&i| chi(i)).unwrap_or(start);
        let mut idx = [start, lo.min(hi), lo.max(hi), end - 1];
        idx.sort_unstable();
        let mut last = usize::MAX;
        for i in idx {
            if i != last {
                out.push(point(i));
                last = i;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_ends_and_extremes() {
        let t: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
        let mut chi: Vec<i64> = (0..10_000).map(|i| (i % 7) as i64).collect();
        chi[5_555] = -1_000;
        chi[7_777] = 1_000;
        let p = thin(&Samples::F64(t.clone()), |i| chi[i], 400);
        assert!(p.len() <= 400 + 4, "{}", p.len());
        assert_eq!(p[0], [0.0, 0.0]);
        assert_eq!(*p.last().unwrap(), [9_999.0, (9_999 % 7) as f64]);
        assert!(p.contains(&[5_555.0, -1_000.0]) && p.contains(&[7_777.0, 1_000.0]));
        assert!(p.windows(2).all(|w| w[0][0] < w[1][0]));
        assert_eq!(thin(&Samples::F64(t[..10].to_vec()), |i| chi[i], 400).len(), 10);
    }
}
