//! The field on screen and what has been computed from it: its curve, the smoothed field with
//! its curve, and the threshold the user picked.

use crate::compute::{FieldSummary, Loaded, Smoothed};
use crate::field::ScalarField;
use crate::topo::ecc::{Ecc, Filtration, crossings};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Dataset {
    pub source: String,
    pub path: Option<PathBuf>,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
    pub curve: Option<Arc<Ecc>>,
    pub smoothed: Option<Smoothed>,
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
    pub fn displayed_curve(&self) -> Option<&Ecc> {
        if self.showing_smoothed() { self.smoothed.as_ref().map(|s| &*s.ecc) } else { self.curve.as_deref() }
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
        self.curve = Some(ecc);
        self.follow_suggestion();
    }

    pub fn set_smoothed(&mut self, s: Smoothed) {
        if self.smoothed_window.is_none() || self.smoothed.is_none() {
            self.smoothed_window = Some(s.summary.window);
        }
        self.smoothed = Some(s);
        self.follow_suggestion();
    }

    /// Until the user picks a threshold, it sits at the suggested zero-crossing of the curve on
    /// screen.
    fn follow_suggestion(&mut self) {
        if self.threshold_chosen {
            return;
        }
        if let Some(t) = self.displayed_curve().and_then(suggested) {
            self.threshold = t;
        }
    }

    /// Sets the threshold to the curve's value nearest `x` (a value the field takes).
    pub fn pick_threshold(&mut self, x: f64) {
        self.threshold = self.displayed_curve().and_then(|e| nearest(&e.thresholds, x)).unwrap_or(x);
        self.threshold_chosen = true;
    }
}

/// The suggested threshold of a curve (the last value before its first + to - zero-crossing).
pub fn suggested(e: &Ecc) -> Option<f64> {
    crossings::suggested_threshold(&crossings::zero_crossings(e))
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
    fn nearest_value_wins() {
        assert_eq!(nearest(&[1.0, 5.0, 9.0], 6.9), Some(5.0));
        assert_eq!(nearest(&[9.0, 5.0, 1.0], 7.1), Some(9.0));
        assert_eq!(nearest(&[], 7.1), None);
    }
}
