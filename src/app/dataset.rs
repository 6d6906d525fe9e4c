//! The field on screen and what has been computed from it: its curve, the smoothed field with
//! its curve, and the threshold the user picked.

use crate::compute::{FieldSummary, Loaded, Smoothed};
use crate::field::ScalarField;
use crate::topo::ecc::crossings::{self, Crossing};
use crate::topo::ecc::{Ecc, Filtration};
use std::path::PathBuf;
use std::sync::Arc;

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
    pub fn new(ecc: Arc<Ecc>) -> Curve {
        let crossings = crossings::zero_crossings(&ecc);
        let suggested = crossings::suggested_threshold(&crossings);
        Curve { points: thin(&ecc.thresholds, &ecc.chi, PLOT_POINTS), ecc, crossings, suggested }
    }

    /// Euler characteristic at threshold `t`.
    pub fn chi_at(&self, t: f64) -> i64 {
        chi_at(&self.ecc, t)
    }
}

/// The smoothed field with its curve.
pub struct SmoothedView {
    pub sigma: f64,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
    pub curve: Curve,
}

/// `(t, chi)` points; runs of consecutive points are replaced by their first, lowest, highest
/// and last point (in curve order), so a plot keeps every spike and the ends.
pub fn thin(t: &[f64], chi: &[i64], max_points: usize) -> Vec<[f64; 2]> {
    let run = t.len().div_ceil(max_points / 4).max(1);
    if run <= 1 {
        return t.iter().zip(chi).map(|(&x, &c)| [x, c as f64]).collect();
    }
    let mut out = Vec::with_capacity(4 * t.len().div_ceil(run));
    for start in (0..t.len()).step_by(run) {
        let end = (start + run).min(t.len());
        let lo = (start..end).min_by_key(|&i| chi[i]).unwrap_or(start);
        let hi = (start..end).max_by_key(|&i| chi[i]).unwrap_or(start);
        let mut idx = [start, lo.min(hi), lo.max(hi), end - 1];
        idx.sort_unstable();
        let mut last = usize::MAX;
        for i in idx {
            if i != last {
                out.push([t[i], chi[i] as f64]);
                last = i;
            }
        }
    }
    out
}

pub struct Dataset {
    pub source: String,
    pub path: Option<PathBuf>,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
    pub curve: Option<Curve>,
    pub smoothed: Option<SmoothedView>,
    /// Show (and mask) the smoothed field instead of the original, when there is one.
    pub show_smoothed: bool,
    pub threshold: f64,
    /// Whether the user has moved the threshold (else it follows the suggested one).
    pub threshold_chosen: bool,
    /// Display window of the original and the smoothed field.
    pub window: (f64, f64),
    pub smoothed_window: Option<(f64, f64)>,
}

impl Dataset {
    pub fn new(l: Loaded) -> Dataset {
        let window = l.summary.window;
        let threshold = l.summary.range.map_or(0.0, |r| (r.0 + r.1) / 2.0);
        Dataset {
            source: l.source,
            path: l.path,
            field: l.field,
            summary: l.summary,
            curve: None,
            smoothed: None,
            show_smoothed: false,
            threshold,
            threshold_chosen: false,
            window,
            smoothed_window: None,
        }
    }

    fn showing_smoothed(&self) -> bool {
        self.show_smoothed && self.smoothed.is_some()
    }

    /// The field the views show and mask.
    pub fn displayed(&self) -> &Arc<ScalarField> {
        match &self.smoothed {
            Some(s) if self.show_smoothed => &s.field,
            _ => &self.field,
        }
    }

    pub fn displayed_summary(&self) -> &FieldSummary {
        match &self.smoothed {
            Some(s) if self.show_smoothed => &s.summary,
            _ => &self.summary,
        }
    }

    /// The curve of the displayed field.
    pub fn displayed_curve(&self) -> Option<&Curve> {
        if self.showing_smoothed() { self.smoothed.as_ref().map(|s| &s.curve) } else { self.curve.as_ref() }
    }

    /// The sigma of the displayed field (None: the original).
    pub fn displayed_sigma(&self) -> Option<f64> {
        if self.showing_smoothed() { self.smoothed.as_ref().map(|s| s.sigma) } else { None }
    }

    pub fn window_mut(&mut self) -> &mut (f64, f64) {
        if self.showing_smoothed() {
            self.smoothed_window.get_or_insert(self.window)
        } else {
            &mut self.window
        }
    }

    pub fn display_window(&self) -> (f64, f64) {
        if self.showing_smoothed() { self.smoothed_window.unwrap_or(self.window) } else { self.window }
    }

    pub fn set_curve(&mut self, ecc: Arc<Ecc>) {
        self.curve = Some(Curve::new(ecc));
        self.follow_suggestion();
    }

    pub fn set_smoothed(&mut self, s: Smoothed) {
        if self.smoothed_window.is_none() || self.smoothed.is_none() {
            self.smoothed_window = Some(s.summary.window);
        }
        let Smoothed { sigma, field, summary, ecc } = s;
        self.smoothed = Some(SmoothedView { sigma, field, summary, curve: Curve::new(ecc) });
        self.follow_suggestion();
    }

    /// Until the user picks a threshold, it sits at the suggested zero-crossing of the curve on
    /// screen.
    pub fn follow_suggestion(&mut self) {
        if self.threshold_chosen {
            return;
        }
        if let Some(t) = self.displayed_curve().and_then(|c| c.suggested) {
            self.threshold = t;
        }
    }

    /// Sets the threshold to the curve's value nearest `x` (a value the field takes).
    pub fn pick_threshold(&mut self, x: f64) {
        self.threshold = self.displayed_curve().and_then(|c| nearest(&c.ecc.thresholds, x)).unwrap_or(x);
        self.threshold_chosen = true;
    }
}

/// Euler characteristic of the sublevel (superlevel) set at `t`: the curve's value at the last
/// of its thresholds that `t` has passed; 0 (the empty set) before the first.
pub fn chi_at(e: &Ecc, t: f64) -> i64 {
    let passed = match e.filtration {
        Filtration::Sublevel => e.thresholds.partition_point(|&x| x <= t),
        Filtration::Superlevel => e.thresholds.partition_point(|&x| x >= t),
    };
    if passed == 0 { 0 } else { e.chi[passed - 1] }
}

/// The element of `values` (sorted either way) nearest `x`.
fn nearest(values: &[f64], x: f64) -> Option<f64> {
    values.iter().copied().min_by(|a, b| (a - x).abs().total_cmp(&(b - x).abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Dtype;
    use crate::topo::ecc::Construction;

    fn curve(f: Filtration, t: &[f64], chi: &[i64]) -> Ecc {
        Ecc {
            dtype: Dtype::U8,
            construction: Construction::TopCells,
            filtration: f,
            thresholds: t.to_vec(),
            chi: chi.to_vec(),
        }
    }

    #[test]
    fn chi_at_steps_at_the_field_values() {
        let e = curve(Filtration::Sublevel, &[1.0, 5.0, 9.0], &[2, -1, 1]);
        assert_eq!(chi_at(&e, 0.5), 0);
        assert_eq!(chi_at(&e, 1.0), 2);
        assert_eq!(chi_at(&e, 4.9), 2);
        assert_eq!(chi_at(&e, 5.0), -1);
        assert_eq!(chi_at(&e, 100.0), 1);
        let s = curve(Filtration::Superlevel, &[9.0, 5.0, 1.0], &[1, 3, 1]);
        assert_eq!(chi_at(&s, 10.0), 0);
        assert_eq!(chi_at(&s, 6.0), 1);
        assert_eq!(chi_at(&s, 5.0), 3);
    }

    #[test]
    fn thinning_keeps_ends_and_extremes() {
        let t: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
        let mut chi: Vec<i64> = (0..10_000).map(|i| (i % 7) as i64).collect();
        chi[5_555] = -1_000;
        chi[7_777] = 1_000;
        let p = thin(&t, &chi, 400);
        assert!(p.len() <= 400 + 4, "{}", p.len());
        assert_eq!(p[0], [0.0, 0.0]);
        assert_eq!(*p.last().unwrap(), [9_999.0, (9_999 % 7) as f64]);
        assert!(p.contains(&[5_555.0, -1_000.0]) && p.contains(&[7_777.0, 1_000.0]));
        assert!(p.windows(2).all(|w| w[0][0] < w[1][0]));
        assert_eq!(thin(&t[..10], &chi[..10], 400).len(), 10);
    }

    #[test]
    fn nearest_value_wins() {
        assert_eq!(nearest(&[1.0, 5.0, 9.0], 6.9), Some(5.0));
        assert_eq!(nearest(&[9.0, 5.0, 1.0], 7.1), Some(9.0));
        assert_eq!(nearest(&[], 7.1), None);
    }
}
