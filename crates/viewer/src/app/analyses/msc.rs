//! The Morse-Smale panel: computing the complex of the field on screen, the simplification
//! slider with live counts, what is drawn, and the persistence diagram with the threshold.

use super::msc_overlay::{SliceOverlay, arc_color, draw, point_color, point_name, point_near};
use super::{Analysis, Arrival, Depth, Owner, kept_settings, restored};
use crate::app::TopoApp;
use crate::app::dataset::MscView;
use crate::app::numbers::{duration, group, short};
use crate::app::tiles::{Column, PaneData, PaneSpec};
use crate::app::view3d::VolumeCanvas;
use crate::app::views::{SliceCanvas, SliceTextures};
use crate::render::overlay3d::Marks;
use egui_plot::{Line, Plot, PlotPoints, Points};
use std::sync::Arc;
use topoview_compute::jobs;
use topoview_compute::msc_scene::ArcKind;
use topoview_compute::{JobId, MscScene, Outcome};

/// How the Morse-Smale complex is drawn over the views.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MscSettings {
    /// Whether the complex is drawn over the views at all.
    pub show: bool,
    /// Critical points shown, by index (minima, 1-saddles, 2-saddles, maxima; in 2D the
    /// maxima are index 2).
    pub points: [bool; 4],
    /// Arcs shown, in the order of [`topoview_compute::msc_scene::ArcKind::ALL`].
    pub arcs: [bool; 3],
    /// On a slice: what lies within this many slices of it, fading with distance.
    pub slab: usize,
    /// The simplification slider in percent of the value range (else in values).
    pub relative: bool,
    /// Fields of up to this many voxels get their complex as soon as they are on screen.
    pub auto_voxels: usize,
    /// Manifolds drawn as translucent labels over the slices: a choice for the field on
    /// screen, so each new file starts without (`arrived`); a session's field gets its own back.
    pub labels: LabelOverlay,
}

/// Which manifolds of the complex the slices show as labels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LabelOverlay {
    #[default]
    None,
    /// Basins: the ascending manifolds of the minima (a label per voxel).
    Basins,
    /// Mountains: the descending manifolds of the maxima (a label per top cell).
    Mountains,
    /// 2D fields: the Morse-Smale cells, a label per pair of basin and mountain (per square).
    Cells,
}

impl Default for MscSettings {
    fn default() -> Self {
        MscSettings {
            show: true,
            points: [true; 4],
            arcs: [true; 3],
            slab: 2,
            relative: true,
            auto_voxels: 1 << 21,
            labels: LabelOverlay::None,
        }
    }
}

/// Voxels a second per thread the complex is computed at (MNI template: 8.7M voxels in 5.9 s on
/// 2 threads of the developer VM), for the estimate on the button.
const VOXELS_PER_SECOND_PER_THREAD: f64 = 0.74e6;
/// Diagram points drawn at most (the most persistent ones).
const MAX_DIAGRAM_POINTS: usize = 20_000;

/// The Morse-Smale complex of the field on screen (kept in the [`crate::app::dataset::Dataset`],
/// beside the field it is of: the original's and the smoothed field's each).
#[derive(Debug, Default)]
pub struct MscUnit {
    /// The field (by address) whose complex was last started on its own (once per field, so
    /// a failure is not retried every frame).
    auto_for: Option<usize>,
    /// The field (by address) last judged for the complex, and why it cannot have one.
    check: Option<(usize, Option<String>)>,
    /// A session's simplification level, applied when the complex of the field it was saved
    /// for arrives (true: the smoothed field's).
    pub pending_level: Option<(f64, bool)>,
    /// The manifolds' image of the plane in each view, for the labels, plane and slice.
    textures: SliceTextures<LabelKey>,
    /// The marks of the 3D view, what they were built from, and whether every arc shown fit.
    marks: Option<(MarksKey, Arc<Marks>, bool)>,
    /// What is drawn, and when the complex is computed on its own (kept between runs).
    pub settings: MscSettings,
}

/// What a view's label image shows: the labels (held, so their address cannot be reused while
/// cached), its plane and slice.
type LabelKey = (Arc<super::msc_labels::LabelMap>, usize, usize);

/// What the 3D marks show: the complex (by address), the threshold, the kinds shown.
type MarksKey = (usize, u64, [bool; 4], [bool; 3]);

impl MscUnit {
    /// Starts the Morse-Smale job for the field on screen (superseding one under way).
    fn run(&self, app: &mut TopoApp) {
        let Some(d) = &app.data else { return };
        let field = d.displayed().clone();
        let max_bytes = topoview_core::mem::default_budget().unwrap_or(u64::MAX);
        let job = topoview_compute::Msc { field, max_bytes };
        app.submit(Owner::Unit(self.name()), job, Some("Morse-Smale complex".into()));
    }
}

impl Analysis for MscUnit {
    fn name(&self) -> &'static str {
        "Morse-Smale complex"
    }

    fn arrived(&mut self, _app: &mut TopoApp, arrival: Arrival) {
        let level = self.pending_level.take();
        *self = MscUnit { pending_level: level, settings: self.settings.clone(), ..MscUnit::default() };
        if !arrival.keep_settings {
            let s = &mut self.settings;
            // What is drawn is the user's taste; which manifolds, of this field.
            s.labels = LabelOverlay::None;
            s.show = true;
        }
    }

    /// Starts the complex of a field small enough to compute at once (the user's setting),
    /// once per field on screen.
    fn request(&mut self, app: &mut TopoApp) {
        let Some(d) = app.data.as_ref().filter(|d| d.analysed()) else { return };
        let f = d.displayed();
        let key = std::sync::Arc::as_ptr(f) as usize;
        if self.auto_for == Some(key) {
            return;
        }
        self.auto_for = Some(key);
        let small = f.len() <= self.settings.auto_voxels;
        if small && d.displayed_msc().is_none() && topoview_core::topo::msc::check_field(f).is_ok() {
            self.run(app);
        }
    }

    /// Keeps the complex for the original or the smoothed field it was computed from (else
    /// drops it: another field is on screen).
    fn accept(&mut self, app: &mut TopoApp, _id: JobId, outcome: Outcome) -> Result<(), Outcome> {
        let scene = outcome.take::<MscScene>()?;
        let Some(d) = &mut app.data else { return Ok(()) };
        let smoothed = d.smoothed.as_ref().is_some_and(|s| Arc::ptr_eq(&scene.field, &s.field));
        if !smoothed && !Arc::ptr_eq(&scene.field, &d.field) {
            return Ok(());
        }
        let mut m = MscView::new(scene);
        if let Some((t, _)) = self.pending_level.filter(|l| l.1 == smoothed) {
            self.pending_level = None;
            m.set_threshold(t);
        }
        d.msc = Some(m);
        // Picked points named critical points of the complex just replaced.
        app.views.picked = None;
        Ok(())
    }

    fn panel(&mut self, app: &mut TopoApp, ui: &mut egui::Ui) {
        panel(self, app, ui);
    }

    fn clear_overlays(&mut self, _app: &mut TopoApp) {
        self.settings.show = false;
    }

    /// The manifolds as labels, then the points and arcs near the plane; a click on a
    /// critical point picks it and puts the crosshair on it.
    fn draw_slice(&mut self, app: &mut TopoApp, canvas: &mut SliceCanvas, depth: Depth) {
        let kind = self.settings.labels;
        if !self.settings.show || app.data.as_ref().and_then(|d| d.displayed_msc()).is_none() {
            return;
        }
        let (axes, slice) = ((canvas.u, canvas.v, canvas.w), canvas.slice);
        match depth {
            Depth::Regions if kind != LabelOverlay::None => {
                let Some(d) = app.data.as_mut() else { return };
                let dims = d.displayed().dims();
                let Some(labels) = d.displayed_msc_mut().and_then(|m| m.labels(kind)) else { return };
                let key = (labels.clone(), canvas.w, slice);
                let same = |a: &LabelKey, b: &LabelKey| Arc::ptr_eq(&a.0, &b.0) && (a.1, a.2) == (b.1, b.2);
                let off = if labels.on_cells { 0.5 } else { 0.0 };
                let image = || super::msc_labels::label_image(&labels, dims, axes, slice);
                self.textures.draw(canvas, key, same, image, off);
            }
            Depth::Marks => {
                let Some(m) = app.data.as_ref().and_then(|d| d.displayed_msc()) else { return };
                let o = SliceOverlay { scene: &m.scene, level: &m.level, settings: &self.settings };
                let scene = Arc::as_ptr(&m.scene) as usize;
                let to_screen = |p: [f64; 3]| canvas.voxel_to_screen(p);
                let near = canvas.click().and_then(|p| point_near(o, canvas.w, slice, p, to_screen));
                let picked = match (near, &app.views.picked) {
                    (Some(i), _) => vec![i],
                    (None, Some((s, ids))) if *s == scene => ids.clone(),
                    _ => Vec::new(),
                };
                let complete = draw(&canvas.painter, o, canvas.w, slice, &picked, to_screen);
                if !complete {
                    canvas.note("complex: too many arcs here, raise the persistence");
                }
                if let Some(i) = near {
                    let dims = app.data.as_ref().map_or([1; 3], |d| d.displayed().dims());
                    app.views.cursor =
                        crate::app::views::voxel_at(m.scene.analysis.complex.critical[i].position, dims);
                    app.views.picked = Some((scene, vec![i]));
                    canvas.take_click();
                    canvas.ctx.request_repaint();
                }
            }
            _ => {}
        }
    }

    /// The points and arcs shown, as marks of the 3D view.
    fn draw_volume(&mut self, app: &TopoApp, canvas: &mut VolumeCanvas) {
        let Some(m) = app.data.as_ref().and_then(|d| d.displayed_msc()).filter(|_| self.settings.show) else {
            return;
        };
        if canvas.marks.is_some() {
            return;
        }
        let s = &self.settings;
        let key = (Arc::as_ptr(&m.scene) as usize, m.level.threshold.to_bits(), s.points, s.arcs);
        if self.marks.as_ref().is_none_or(|k| k.0 != key) {
            let o = SliceOverlay { scene: &m.scene, level: &m.level, settings: s };
            let (marks, complete) = super::msc_overlay::marks(o, crate::app::view3d::next_version());
            self.marks = Some((key, Arc::new(marks), complete));
        }
        if let Some((_, marks, complete)) = &self.marks {
            canvas.marks = Some(marks.clone());
            if !complete {
                canvas.notes.push("complex: too many arcs to draw, raise the persistence".into());
            }
        }
    }

    fn panes(&self) -> &'static [PaneSpec] {
        &[PaneSpec { id: "Diagram", data: PaneData::Field, column: Column::Plots }]
    }

    fn pane(&mut self, app: &mut TopoApp, ui: &mut egui::Ui, _id: &str) {
        diagram_pane(app, ui);
    }

    fn settings_key(&self) -> Option<&'static str> {
        Some("msc")
    }

    fn settings(&self) -> Option<serde_json::Value> {
        kept_settings(&self.settings)
    }

    fn restore_settings(&mut self, kept: &serde_json::Value) {
        self.settings = restored(kept);
    }
}

fn panel(unit: &mut MscUnit, app: &mut TopoApp, ui: &mut egui::Ui) {
    ui.heading("Morse-Smale complex");
    let running = app.jobs.contains_key(&jobs::MSC);
    // Whether the complex can be had for the field on screen: judged once per field (a NaN scan
    // of a large float field is too slow for every frame).
    if let Some(field) = app.data.as_ref().map(|d| d.displayed().clone()) {
        let key = std::sync::Arc::as_ptr(&field) as usize;
        if unit.check.as_ref().is_none_or(|c| c.0 != key) {
            let refusal = topoview_core::topo::msc::check_field(&field).err().map(|e| e.to_string());
            unit.check = Some((key, refusal));
        }
    }
    let refusal = unit.check.as_ref().and_then(|c| c.1.clone());
    let Some(d) = &mut app.data else { return };
    let field = d.displayed().clone();
    if d.displayed_msc().is_none() {
        let mut start = false;
        if running {
            ui.label("Computing… (progress and Cancel in the status bar)");
        } else if let Some(e) = &refusal {
            ui.label(format!("Not available for this field: {e}"));
        } else {
            let threads = rayon::current_num_threads();
            let seconds = field.len() as f64 / (VOXELS_PER_SECOND_PER_THREAD * threads as f64);
            let mib = topoview_core::topo::msc::memory_estimate(field.len(), 0) >> 20;
            let what = if d.displayed_sigma().is_some() { "the smoothed field" } else { "this field" };
            ui.horizontal_wrapped(|ui| {
                start = ui.button("Compute").clicked();
                ui.label(format!(
                    "{what}: about {} on {threads} threads, {mib} MiB or more (noisy data have more \
                     critical points)",
                    duration(seconds)
                ));
            });
        }
        if start {
            unit.run(app);
        }
        auto_setting(&mut unit.settings, ui);
        return;
    }
    let Some(m) = d.msc.as_mut() else { return };
    let s = &mut unit.settings;
    let span = (m.scene.range.1 - m.scene.range.0).max(f64::MIN_POSITIVE);
    let ndim = m.scene.analysis.complex.grid.ndim;

    // The slider: logarithmic, in percent of the range or in values.
    ui.horizontal_wrapped(|ui| {
        let mut t = m.level.threshold;
        let changed = if s.relative {
            let mut pct = 100.0 * t / span;
            let r = ui.add(
                egui::Slider::new(&mut pct, 0.0..=100.0)
                    .logarithmic(true)
                    .smallest_positive(0.01)
                    .suffix(" %")
                    .text("persistence"),
            );
            t = pct / 100.0 * span;
            r.changed()
        } else {
            let r = ui.add(
                egui::Slider::new(&mut t, 0.0..=span)
                    .logarithmic(true)
                    .smallest_positive(span * 1e-4)
                    .text("persistence"),
            );
            r.changed()
        };
        ui.checkbox(&mut s.relative, "% of range");
        if changed {
            m.set_threshold(t);
        }
    });
    let counts: Vec<String> =
        (0..=ndim).map(|k| format!("{} {}", group(m.level.counts[k]), point_name(k, ndim))).collect();
    ui.label(counts.join(" · "));
    let blocked = if m.level.blocked > 0 {
        format!(", {} blocked (not joined by one V-path)", group(m.level.blocked))
    } else {
        String::new()
    };
    ui.small(format!("{} pairs cancelled{blocked}; level in {:.2} ms", group(m.level.steps), m.level_ms));

    ui.checkbox(&mut s.show, "Draw over the slices");
    ui.horizontal_wrapped(|ui| {
        ui.label("Points");
        for k in 0..=ndim {
            let text = egui::RichText::new(point_name(k, ndim)).color(point_color(k as u8, ndim));
            ui.checkbox(&mut s.points[k], text);
        }
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("Arcs");
        for (k, kind) in ArcKind::ALL.into_iter().enumerate() {
            if kind == ArcKind::SaddleSaddle && ndim == 2 {
                continue;
            }
            ui.checkbox(&mut s.arcs[k], egui::RichText::new(kind.name()).color(arc_color(kind)));
        }
    });
    if ndim == 3 {
        ui.add(egui::Slider::new(&mut s.slab, 0..=20).text("slices either side"));
    }
    ui.horizontal_wrapped(|ui| {
        ui.label("Labels");
        ui.radio_value(&mut s.labels, LabelOverlay::None, "none");
        ui.radio_value(&mut s.labels, LabelOverlay::Basins, "basins")
            .on_hover_text("Ascending manifolds of the minima");
        ui.radio_value(&mut s.labels, LabelOverlay::Mountains, "mountains")
            .on_hover_text("Descending manifolds of the maxima");
        if ndim == 2 {
            ui.radio_value(&mut s.labels, LabelOverlay::Cells, "cells")
                .on_hover_text("Morse-Smale cells: where a basin and a mountain overlap");
        }
    });
    for i in picked(&app.views, m) {
        ui.small(describe(m, i));
    }
    auto_setting(&mut unit.settings, ui);
}

/// The critical points picked, if they are of this complex (the picked list names the complex
/// by address).
fn picked(views: &crate::app::views::ViewState, m: &MscView) -> Vec<usize> {
    let key = std::sync::Arc::as_ptr(&m.scene) as usize;
    let n = m.scene.analysis.complex.critical.len();
    let ids = views.picked.as_ref().filter(|p| p.0 == key);
    ids.map(|p| p.1.iter().copied().filter(|&i| i < n).collect()).unwrap_or_default()
}

/// The persistence diagram and the persistence curves of the complex on screen, as a pane of
/// the central area: the diagram square and as large as the pane leaves room for, the curves
/// below it. A click on a diagram point picks its pair; a click on the curves sets the level.
fn diagram_pane(app: &mut TopoApp, ui: &mut egui::Ui) {
    let Some(d) = &mut app.data else { return };
    let Some(m) = d.displayed_msc_mut() else {
        ui.label("No Morse-Smale complex yet: compute it in the side panel (Morse-Smale complex).");
        return;
    };
    let key = std::sync::Arc::as_ptr(&m.scene) as usize;
    let picked = picked(&app.views, m);
    let width = ui.available_width();
    let ndim = m.scene.analysis.complex.grid.ndim;
    let mut keys: Vec<crate::app::curve_panel::Key> = (0..ndim)
        .map(|k| crate::app::curve_panel::Key {
            name: format!("H{k}"),
            colour: point_color(k as u8, ndim),
            dot: true,
        })
        .collect();
    let threshold = egui::Color32::from_rgb(255, 80, 80);
    keys.push(crate::app::curve_panel::Key {
        name: format!("persistence {}", short(m.level.threshold)),
        colour: threshold,
        dot: false,
    });
    crate::app::curve_panel::legend(ui, &keys);
    // What is left, shared: the curves below a third of it (150 points at most), the caption
    // under the diagram a line; the diagram square in the rest, as wide as the pane allows.
    // Nothing has a floor that would push the curves out of a short pane.
    let caption = ui.text_style_height(&egui::TextStyle::Small) + 2.0 * ui.spacing().item_spacing.y;
    let left = (ui.available_height() - caption).max(0.0);
    let below = (left / 3.0).min(150.0);
    let side = (left - below - ui.spacing().item_spacing.y).min(width).max(0.0);
    if let Some(pair) = diagram(ui, m, &picked, side) {
        // The pair's cells as critical points; the crosshair goes to the first.
        let ids: Vec<usize> = pair.into_iter().flatten().filter_map(|c| m.scene.point_of(c)).collect();
        if let Some(&first) = ids.first() {
            let at = m.scene.analysis.complex.critical[first].position;
            app.views.cursor = crate::app::views::voxel_at(at, m.scene.field.dims());
        }
        app.views.picked = Some((key, ids));
    }
    if let Some(t) = persistence_curve(ui, m, egui::vec2(width, below)) {
        m.set_threshold(t);
    }
}

/// A critical point in words: kind, voxel and world position, value, persistence, whether it
/// lives at the level on screen.
fn describe(m: &MscView, i: usize) -> String {
    let c = &m.scene.analysis.complex;
    let p = &c.critical[i];
    let ndim = c.grid.ndim;
    let name = match (p.index as usize, ndim) {
        (0, _) => "minimum",
        (k, n) if k == n => "maximum",
        (_, 2) => "saddle",
        (1, _) => "1-saddle",
        _ => "2-saddle",
    };
    let coords = |q: [f64; 3]| q[..ndim].iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(", ");
    let persistence = m.scene.persistence[i];
    let state = if m.scene.alive(i, &m.level) {
        "alive here".to_string()
    } else {
        format!("cancelled from {}", short(m.scene.death[i]))
    };
    format!(
        "{name} at ({}) · world ({}) · value {} · persistence {} · {state}",
        coords(p.position),
        coords(m.scene.field.world(p.position)),
        short(p.value),
        if persistence.is_finite() { short(persistence) } else { "∞ (essential)".into() }
    )
}

/// The cells of a diagram point: the critical cell that creates the class and the one that
/// destroys it (none for an essential class).
type PairCells = [Option<topoview_core::topo::msc::grid::Cell>; 2];

/// The persistence diagram of the field (birth against death, by dimension) with the line
/// above which pairs outlive the threshold; `picked` critical points' pairs are ringed. Returns
/// the cells of the pair clicked, if one was.
fn diagram(ui: &mut egui::Ui, m: &MscView, picked: &[usize], side: f32) -> Option<PairCells> {
    let diag = &m.scene.analysis.diagram;
    let ndim = m.scene.analysis.complex.grid.ndim;
    let (lo, hi) = m.scene.range;
    let mut finite: Vec<_> = diag.iter().filter_map(|p| p.death.map(|d| (p.dim, p.birth, d, p))).collect();
    let shown = finite.len().min(MAX_DIAGRAM_POINTS);
    if finite.len() > shown {
        finite.select_nth_unstable_by(shown, |a, b| (b.2 - b.1).total_cmp(&(a.2 - a.1)));
        finite.truncate(shown);
    }
    let t = m.level.threshold;
    let cells: Vec<_> = picked.iter().map(|&i| m.scene.analysis.complex.critical[i].cell).collect();
    let ringed: Vec<[f64; 2]> = finite
        .iter()
        .filter(|p| cells.contains(&p.3.birth_cell) || p.3.death_cell.is_some_and(|d| cells.contains(&d)))
        .map(|p| [p.1, p.2])
        .collect();
    let pad = 0.05 * (hi - lo);
    let response = Plot::new("persistence diagram")
        .width(side)
        .height(side)
        .include_x(lo - pad)
        .include_x(hi + pad)
        .include_y(lo - pad)
        .include_y(hi + pad)
        .x_axis_label("birth")
        .y_axis_label("death")
        .show(ui, |plot| {
            plot.line(
                Line::new("diagonal", PlotPoints::new(vec![[lo, lo], [hi, hi]])).color(egui::Color32::GRAY),
            );
            plot.line(
                Line::new(
                    format!("persistence {}", short(t)),
                    PlotPoints::new(vec![[lo, lo + t], [hi - t, hi]]),
                )
                .color(egui::Color32::from_rgb(255, 80, 80)),
            );
            for dim in 0..ndim {
                let pts: Vec<[f64; 2]> = finite.iter().filter(|p| p.0 == dim).map(|p| [p.1, p.2]).collect();
                // A pair of dimension k joins a critical point of index k and one of index k+1:
                // coloured by the lower one (a minimum for H0).
                let color = point_color(dim as u8, ndim);
                plot.points(Points::new(format!("H{dim}"), PlotPoints::new(pts)).radius(1.5).color(color));
            }
            if !ringed.is_empty() {
                plot.points(
                    Points::new("picked", PlotPoints::new(ringed))
                        .radius(6.0)
                        .filled(false)
                        .color(egui::Color32::WHITE),
                );
            }
            // The pair nearest the pointer, within 8 points on screen.
            let pointer = plot.pointer_coordinate()?;
            let at = plot.screen_from_plot(pointer);
            finite
                .iter()
                .map(|p| (p.3, plot.screen_from_plot(egui_plot::PlotPoint::new(p.1, p.2)).distance(at)))
                .filter(|(_, d)| *d <= 8.0)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(p, _)| [Some(p.birth_cell), p.death_cell])
        });
    let clicked = response.response.clicked().then_some(response.inner).flatten();
    let essential = diag.iter().filter(|p| p.death.is_none()).count();
    ui.small(format!(
        "{} pairs{}; {essential} essential (never die)",
        group(diag.len() - essential),
        if shown < diag.len() - essential {
            format!(", the {shown} most persistent drawn")
        } else {
            String::new()
        }
    ));
    clicked
}

/// The persistence curves (pairs of each dimension persisting at least x, count on a log
/// scale) with the threshold; returns the persistence clicked, the new threshold.
fn persistence_curve(ui: &mut egui::Ui, m: &MscView, size: egui::Vec2) -> Option<f64> {
    let ndim = m.scene.analysis.complex.grid.ndim;
    let response = Plot::new("persistence curve")
        .width(size.x)
        .height(size.y)
        .include_x(0.0)
        .include_y(0.0)
        .x_axis_label("persistence")
        .y_axis_label("pairs")
        .y_axis_formatter(|mark, _| {
            let n = 10f64.powf(mark.value);
            if (n - n.round()).abs() < 1e-6 { group(n.round() as usize) } else { String::new() }
        })
        .show(ui, |plot| {
            for (dim, curve) in m.scene.persistence_curves.iter().enumerate().take(ndim) {
                let pts: Vec<[f64; 2]> = curve.iter().map(|&[x, n]| [x, n.log10()]).collect();
                let color = point_color(dim as u8, ndim);
                plot.line(Line::new(format!("H{dim}"), PlotPoints::new(pts)).color(color));
            }
            plot.vline(
                egui_plot::VLine::new("threshold", m.level.threshold)
                    .color(egui::Color32::from_rgb(255, 80, 80)),
            );
            plot.pointer_coordinate().map(|p| p.x.max(0.0))
        });
    response.response.clicked().then_some(response.inner).flatten()
}

fn auto_setting(settings: &mut MscSettings, ui: &mut egui::Ui) {
    let mut mvox = settings.auto_voxels as f64 / 1e6;
    ui.horizontal_wrapped(|ui| {
        ui.label("Compute at once for fields up to");
        if ui.add(egui::DragValue::new(&mut mvox).range(0.0..=1000.0).speed(0.1).suffix(" Mvoxels")).changed()
        {
            settings.auto_voxels = (mvox * 1e6) as usize;
        }
    });
}
