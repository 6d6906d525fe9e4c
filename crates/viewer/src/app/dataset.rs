//! The field on screen and what has been computed from it: its curve, the smoothed field with
//! its curve, and the threshold the user picked.

use super::analyses::msc::LabelOverlay;
use super::analyses::msc_labels::LabelMap;
use std::path::PathBuf;
use std::sync::Arc;
use topoview_compute::msc_scene::Level;
use topoview_compute::{Curve, FieldSummary, Loaded, MscScene, Smoothed};
use topoview_core::field::{Sample, Samples, ScalarField};
use topoview_core::with_samples;

/// The smoothed field with its curve.
pub struct SmoothedView {
    pub sigma: f64,
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
    pub curve: Curve,
}

/// A Morse-Smale complex and the simplification level on screen.
pub struct MscView {
    pub scene: Arc<MscScene>,
    pub level: Level,
    /// How long the last change of level took (ms).
    pub level_ms: f64,
    /// The labels at the level on screen (cancellations applied, which manifolds), computed
    /// when the slices show them.
    labels: Option<(usize, LabelOverlay, Arc<LabelMap>)>,
}

impl MscView {
    /// Starts where the complex is readable: at the elbow of its persistence curve, within 1%
    /// (a 2D image) or 5% (a volume; below it, its complex is mostly noise) to 50% of the value
    /// range. A fixed 5% left thousands of points on a photograph and about 1,500 on a small
    /// MRI stack.
    pub fn new(scene: MscScene) -> MscView {
        let span = scene.range.1 - scene.range.0;
        let least = if scene.analysis.complex.grid.ndim == 2 { 0.01 } else { 0.05 };
        let threshold =
            elbow(&scene.analysis.diagram).map_or(0.05 * span, |t| t.clamp(least * span, 0.5 * span));
        let t = std::time::Instant::now();
        let level = scene.level(threshold);
        MscView { level_ms: t.elapsed().as_secs_f64() * 1e3, scene: Arc::new(scene), level, labels: None }
    }

    /// The manifolds `kind` at the level on screen as labels: per voxel (basins) or per top
    /// cell (mountains, 2D Morse-Smale cells) the live extremum (or cell) holding it. None for
    /// [`LabelOverlay::None`], and for cells of a 3D field.
    pub fn labels(&mut self, kind: LabelOverlay) -> Option<Arc<LabelMap>> {
        let steps = self.level.steps;
        if let Some((s, k, l)) = &self.labels
            && (*s, *k) == (steps, kind)
        {
            return Some(l.clone());
        }
        let (c, h) = (&self.scene.analysis.complex, &self.scene.analysis.hierarchy);
        let field = &self.scene.field;
        let dims = field.dims();
        let (ids, on_cells) = match kind {
            LabelOverlay::None => return None,
            LabelOverlay::Basins => (h.labels_at(&c.basins, steps), false),
            LabelOverlay::Mountains => (h.labels_at(&c.mountains, steps), true),
            LabelOverlay::Cells if field.ndim() == 2 => {
                let order = topoview_core::topo::msc::vertex_order(field).ok()?;
                let basins = h.labels_at(&c.basins, steps);
                let mountains = h.labels_at(&c.mountains, steps);
                (topoview_core::topo::msc::complex::ms_cells_2d(&c.grid, &order, &basins, &mountains), true)
            }
            LabelOverlay::Cells => return None,
        };
        let l =
            Arc::new(LabelMap::new(ids, super::analyses::msc_labels::grid_dims(dims, on_cells), on_cells));
        self.labels = Some((steps, kind, l.clone()));
        Some(l)
    }

    pub fn set_threshold(&mut self, threshold: f64) {
        let t = std::time::Instant::now();
        self.level = self.scene.level(threshold);
        self.level_ms = t.elapsed().as_secs_f64() * 1e3;
    }
}

/// The elbow of a diagram's persistence curve: sorting the finite pairs' persistences from the
/// highest, the one farthest below the chord from (0, all pairs) to (the largest, one pair),
/// persistence scaled by the largest and the count by its logarithm. None for fewer than three
/// pairs or no positive persistence.
pub fn elbow(diagram: &[topoview_core::topo::msc::DiagramPoint]) -> Option<f64> {
    let mut p: Vec<f64> = diagram
        .iter()
        .filter_map(|d| d.death.map(|death| (death - d.birth).abs()))
        .filter(|p| p.is_finite())
        .collect();
    p.sort_by(|a, b| b.total_cmp(a));
    let (top, n) = (*p.first()?, p.len());
    if n < 3 || top <= 0.0 {
        return None;
    }
    let ln_n = (n as f64).ln();
    let below = |i: usize| 1.0 - p[i] / top - ((i + 1) as f64).ln() / ln_n;
    let best = (0..n).max_by(|&a, &b| below(a).total_cmp(&below(b)))?;
    Some(p[best])
}

pub struct Dataset {
    pub source: String,
    pub path: Option<PathBuf>,
    pub origin: topoview_compute::jobs::Origin,
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
    /// The Morse-Smale complex of the original or the smoothed field (shown while that field
    /// is on screen).
    pub msc: Option<MscView>,
    /// Shown as a label map (the file says so, or it looks like one and the user did not say
    /// otherwise): categorical colours, a label readout, and no analysis over label ids
    /// unless asked for.
    pub labels: bool,
    /// The user asked for the ECC of the label map anyway.
    pub analyse_labels: bool,
}

impl Dataset {
    pub fn new(l: Loaded) -> Dataset {
        let window = l.summary.window;
        let threshold = l.summary.range.map_or(0.0, |r| (r.0 + r.1) / 2.0);
        let labels = l.field.labels || l.summary.label_like;
        Dataset {
            source: l.source,
            path: l.path,
            origin: l.origin,
            field: l.field,
            summary: l.summary,
            curve: None,
            smoothed: None,
            show_smoothed: false,
            threshold,
            threshold_chosen: false,
            window,
            smoothed_window: None,
            msc: None,
            labels,
            analyse_labels: false,
        }
    }

    /// Whether the analyses (ECC, smoothing, the complex) run on this field: not over the ids
    /// of a label map, unless the user asked.
    pub fn analysed(&self) -> bool {
        !self.labels || self.analyse_labels
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

    /// The complex of the field on screen, if it has been computed.
    pub fn displayed_msc(&self) -> Option<&MscView> {
        self.msc.as_ref().filter(|m| Arc::ptr_eq(&m.scene.field, self.displayed()))
    }

    pub fn displayed_msc_mut(&mut self) -> Option<&mut MscView> {
        let shown = self.displayed().clone();
        self.msc.as_mut().filter(|m| Arc::ptr_eq(&m.scene.field, &shown))
    }

    pub fn display_window(&self) -> (f64, f64) {
        if self.showing_smoothed() { self.smoothed_window.unwrap_or(self.window) } else { self.window }
    }

    pub fn set_curve(&mut self, curve: Curve) {
        self.curve = Some(curve);
        self.follow_suggestion();
    }

    pub fn set_smoothed(&mut self, s: Smoothed) {
        if self.smoothed_window.is_none() || self.smoothed.is_none() {
            self.smoothed_window = Some(s.summary.window);
        }
        let Smoothed { sigma, field, summary, curve } = s;
        self.smoothed = Some(SmoothedView { sigma, field, summary, curve });
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

/// The element of `values` (sorted either way, as a curve's thresholds are) nearest `x`, by
/// binary search: it runs on every frame of a drag, on curves of millions of points.
pub fn nearest(values: &Samples, x: f64) -> Option<f64> {
    with_samples!(values, v => nearest_in(v, x))
}

fn nearest_in<T: Sample>(values: &[T], x: f64) -> Option<f64> {
    let ascending = values.first() <= values.last();
    let i = values.partition_point(|&v| if ascending { v.to_f64() < x } else { v.to_f64() > x });
    let candidates = [i.checked_sub(1), Some(i)];
    candidates
        .into_iter()
        .flatten()
        .filter_map(|k| values.get(k).map(|v| v.to_f64()))
        .min_by(|a, b| (a - x).abs().total_cmp(&(b - x).abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Noise (many pairs of small persistence) and a few features: the elbow lies between
    /// them, above the noise and below the features.
    #[test]
    fn the_elbow_leaves_the_features_and_drops_the_noise() {
        let cell = topoview_core::topo::msc::grid::Cell::default();
        let pair = |p: f64| topoview_core::topo::msc::DiagramPoint {
            dim: 0,
            birth: 0.0,
            death: Some(p),
            birth_cell: cell,
            death_cell: Some(cell),
        };
        let mut d: Vec<_> = (0..2000).map(|i| pair(0.01 + 0.09 * (i as f64 / 2000.0))).collect();
        d.extend((0..8).map(|i| pair(5.0 + i as f64)));
        d.push(topoview_core::topo::msc::DiagramPoint { death: None, ..pair(0.0) });
        let t = elbow(&d).unwrap_or(f64::NAN);
        assert!((0.09..5.0).contains(&t), "elbow at {t}");
        let kept = d.iter().filter(|p| p.death.is_some_and(|x| x > t)).count();
        assert_eq!(kept, 8);
        assert_eq!(elbow(&d[..2]), None);
    }

    #[test]
    fn nearest_value_wins() {
        assert_eq!(nearest_in(&[1.0, 5.0, 9.0], 6.9), Some(5.0));
        assert_eq!(nearest_in(&[9.0, 5.0, 1.0], 7.1), Some(9.0));
        assert_eq!(nearest(&Samples::F64(vec![]), 7.1), None);
        assert_eq!(nearest_in(&[1.0, 5.0, 9.0], -3.0), Some(1.0));
        assert_eq!(nearest_in(&[1.0, 5.0, 9.0], 30.0), Some(9.0));
        assert_eq!(nearest_in(&[9.0, 5.0, 1.0], 30.0), Some(9.0));
        assert_eq!(nearest_in(&[9.0, 5.0, 1.0], 2.0), Some(1.0));
        // Against the plain scan, on a long sorted curve.
        let v: Vec<f64> = (0..1000).map(|i| (i * i) as f64 / 7.0).collect();
        let scan = |x: f64| v.iter().copied().min_by(|a, b| (a - x).abs().total_cmp(&(b - x).abs()));
        for x in [-5.0, 0.3, 17.2, 5000.5, 142_000.0, 1e9] {
            assert_eq!(nearest_in(&v, x), scan(x), "{x}");
        }
    }

    /// The label overlays: basins per voxel, mountains and (2D) Morse-Smale cells per square,
    /// each naming live points (cells: one label per basin and mountain pair), none for cells
    /// of a volume.
    #[test]
    fn label_overlays_name_live_manifolds() {
        use topoview_core::topo::msc::complex::NO_LABEL;
        let f =
            topoview_core::synthetic::gaussian_random_field(&[30, 26], 2.0, 5, &Default::default()).unwrap();
        let a = topoview_core::topo::msc::analyse(&f, &Default::default()).unwrap();
        let mut v = MscView::new(MscScene::new(Arc::new(f), a));
        let steps = v.level.steps;
        let basins = v.labels(LabelOverlay::Basins).unwrap();
        let mountains = v.labels(LabelOverlay::Mountains).unwrap();
        let cells = v.labels(LabelOverlay::Cells).unwrap();
        assert!(v.labels(LabelOverlay::None).is_none());
        assert_eq!((basins.ids.len(), mountains.ids.len(), cells.ids.len()), (30 * 26, 29 * 25, 29 * 25));
        assert!(!basins.on_cells && mountains.on_cells && cells.on_cells);
        let h = &v.scene.analysis.hierarchy;
        for &l in basins.ids.iter().chain(mountains.ids.iter()).filter(|&&l| l != NO_LABEL) {
            assert!(h.alive(l as usize, steps));
        }
        // Squares share a cell label exactly when they share their mountain and basin.
        let live_mountains: std::collections::HashSet<u32> = mountains.ids.iter().copied().collect();
        let cell_ids: std::collections::HashSet<u32> = cells.ids.iter().copied().collect();
        assert!(cell_ids.len() >= live_mountains.len());
        let mut of_cell = std::collections::HashMap::new();
        for (&c, &m) in cells.ids.iter().zip(&mountains.ids) {
            assert_eq!(*of_cell.entry(c).or_insert(m), m, "a cell lies in one mountain");
        }
        let g = topoview_core::synthetic::gaussian_random_field(&[12, 10, 8], 2.0, 5, &Default::default())
            .unwrap();
        let a = topoview_core::topo::msc::analyse(&g, &Default::default()).unwrap();
        assert!(MscView::new(MscScene::new(Arc::new(g), a)).labels(LabelOverlay::Cells).is_none());
    }
}
