//! The ECC scale-space in the ECC panel: χ as a heat map over (threshold, σ), computed on the
//! worker's `scale-space` lane on request, with each scale's suggested threshold (its first
//! positive-to-negative zero-crossing) traced across the scales. A click on a cell sets both the
//! threshold and σ (and shows the smoothed field).

use super::{Analysis, Arrival, Owner, Stop, kept_settings, restored};
use crate::app::TopoApp;
use crate::app::tiles::{Column, PaneData, PaneSpec};
use crate::render::colormap::Colormap;
use egui::{Color32, Pos2, Rect, Stroke};
use std::sync::Arc;
use topoview_compute::scale_space::{SCALE_SPACE, ScaleSpaceJob, ScaleSpaceMap, sigmas, threshold_grid};
use topoview_compute::{JobId, Outcome};

/// The scales and thresholds of the ECC scale-space heat map.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ScaleSpaceSettings {
    /// The largest σ (voxels); scales run from 0 in steps of `step`.
    pub sigma_max: f64,
    pub step: f64,
    /// Thresholds across the field's value range.
    pub thresholds: usize,
}

impl ScaleSpaceSettings {
    /// Back within the panel's ranges (settings files and sessions can hold anything).
    pub fn sanitize(&mut self) {
        let finite_or = |v: f64, d: f64| if v.is_finite() { v } else { d };
        self.sigma_max = finite_or(self.sigma_max, 8.0).clamp(0.5, 8.0);
        self.step = finite_or(self.step, 0.25).clamp(0.25, 2.0);
        self.thresholds = self.thresholds.clamp(16, 4096);
    }
}

impl Default for ScaleSpaceSettings {
    fn default() -> Self {
        ScaleSpaceSettings { sigma_max: 8.0, step: 0.25, thresholds: 256 }
    }
}

/// What the layer holds between frames.
#[derive(Default)]
pub struct ScaleSpaceLayer {
    /// The scale-space last computed.
    pub map: Option<Arc<ScaleSpaceMap>>,
    job: Option<JobId>,
    /// Why the last one asked for did not come (cancelled, failed, refused).
    stopped: Option<String>,
    /// The heat map's texture, for the map (by version) it shows.
    texture: Option<(u64, egui::TextureHandle)>,
    /// Counts the maps arrived (a texture key an address could not be: a dropped map's may be
    /// reused).
    version: u64,
    /// The panel's scales and thresholds (kept between runs).
    pub settings: ScaleSpaceSettings,
}

impl Analysis for ScaleSpaceLayer {
    fn name(&self) -> &'static str {
        "scale-space"
    }

    fn arrived(&mut self, app: &mut TopoApp, _arrival: Arrival) {
        // The scale-space of the last field is of no use now.
        if self.job.is_some() {
            app.cancel(SCALE_SPACE);
        }
        *self = ScaleSpaceLayer { settings: self.settings.clone(), ..ScaleSpaceLayer::default() };
    }

    fn accept(&mut self, _app: &mut TopoApp, _id: JobId, outcome: Outcome) -> Result<(), Outcome> {
        self.map = Some(Arc::new(outcome.take::<ScaleSpaceMap>()?));
        self.version += 1;
        self.job = None;
        Ok(())
    }

    fn stopped(&mut self, _app: &mut TopoApp, id: JobId, why: &Stop) {
        if self.job == Some(id) {
            self.job = None;
            self.stopped = Some(why.to_string());
        }
    }

    fn panel(&mut self, app: &mut TopoApp, ui: &mut egui::Ui) {
        panel(self, app, ui);
    }

    fn panes(&self) -> &'static [PaneSpec] {
        &[PaneSpec { id: "Scale-space", data: PaneData::Field, column: Column::Plots }]
    }

    fn pane(&mut self, app: &mut TopoApp, ui: &mut egui::Ui, _id: &str) {
        match current(self, app) {
            Some(m) => heat_map(self, app, ui, &m),
            None => {
                ui.label("No scale-space yet: compute it in the side panel (ECC scale-space).");
            }
        }
    }

    fn settings_key(&self) -> Option<&'static str> {
        Some("scale_space")
    }

    fn settings(&self) -> Option<serde_json::Value> {
        kept_settings(&self.settings)
    }

    fn restore_settings(&mut self, kept: &serde_json::Value) {
        self.settings = restored(kept);
        self.settings.sanitize();
    }
}

/// Starts the scale-space of the original field with the panel's scales and thresholds and the
/// current construction and filtration (superseding one under way).
fn start(layer: &mut ScaleSpaceLayer, app: &mut TopoApp) {
    let Some(d) = &app.data else { return };
    let s = &layer.settings;
    layer.stopped = None;
    let Some((lo, hi)) = d.summary.range else {
        layer.stopped = Some("the field has no finite values".into());
        return;
    };
    let grid = sigmas(s.sigma_max, s.step).and_then(|g| Ok((g, threshold_grid(lo, hi, s.thresholds)?)));
    let (sigmas, thresholds) = match grid {
        Ok(g) => g,
        Err(e) => {
            layer.stopped = Some(e.to_string());
            return;
        }
    };
    let what = format!("Scale-space, {} scales", sigmas.len());
    let job = ScaleSpaceJob { field: d.field.clone(), opts: app.ecc_options(), sigmas, thresholds };
    layer.job = Some(app.submit(Owner::Unit(layer.name()), job, Some(what)));
}

/// The scale-space of the field loaded, with the current construction and filtration.
fn current(layer: &ScaleSpaceLayer, app: &TopoApp) -> Option<Arc<ScaleSpaceMap>> {
    let d = app.data.as_ref()?;
    let m = layer.map.as_ref()?;
    let opts = app.ecc_options();
    let same = Arc::ptr_eq(&m.field, &d.field)
        && m.opts.construction == opts.construction
        && m.opts.filtration == opts.filtration;
    same.then(|| m.clone())
}

/// Where χ sits on the diverging map: sign(χ) log(1 + |χ|), scaled by the largest |χ|, so that
/// counts from one to millions all show and zero is the map's white middle.
fn shade(chi: i64, largest: f64) -> Color32 {
    let v = (chi as f64).signum() * (chi.unsigned_abs() as f64).ln_1p() / largest.ln_1p().max(1e-9);
    let [r, g, b] = Colormap::CoolWarm.rgb(((v + 1.0) / 2.0) as f32);
    Color32::from_rgb(r, g, b)
}

/// The heat map's image: one pixel per (threshold, σ) cell, the largest σ in the top row.
pub fn heat_image(m: &ScaleSpaceMap) -> egui::ColorImage {
    let (nt, ns) = (m.map.thresholds.len(), m.map.sigmas.len());
    let largest = m.map.chi.iter().flatten().map(|c| c.unsigned_abs()).max().unwrap_or(0) as f64;
    let mut pixels = Vec::with_capacity(nt * ns);
    for row in m.map.chi.iter().rev() {
        pixels.extend(row.iter().map(|&c| shade(c, largest)));
    }
    egui::ColorImage::new([nt, ns], pixels)
}

/// The heat map's accessible name.
pub const HEAT_MAP: &str = "ECC scale-space heat map";

/// Screen geometry of the heat map: cell centres for grid positions, and back.
struct Geometry {
    rect: Rect,
    lo: f64,
    hi: f64,
    sigmas: Vec<f64>,
    columns: usize,
}

impl Geometry {
    /// The x of threshold `t` (column centres at the grid's thresholds).
    fn x(&self, t: f64) -> f32 {
        let n = self.columns as f64;
        let f = if self.hi > self.lo { (t - self.lo) / (self.hi - self.lo) } else { 0.5 };
        let c = (f * (n - 1.0) + 0.5) / n;
        self.rect.left() + (c.clamp(0.0, 1.0) as f32) * self.rect.width()
    }

    /// The y of scale `sigma` (row centres at the scales, linear between them; σ grows upwards).
    fn y(&self, sigma: f64) -> f32 {
        let n = self.sigmas.len() as f64;
        let last = *self.sigmas.last().unwrap_or(&0.0);
        let k = if last > 0.0 { sigma / last * (n - 1.0) } else { 0.0 };
        let from_top = (n - 1.0 - k + 0.5) / n;
        self.rect.top() + (from_top.clamp(0.0, 1.0) as f32) * self.rect.height()
    }

    /// The (scale, threshold) cell under `p`.
    fn cell(&self, p: Pos2) -> (usize, usize) {
        let ns = self.sigmas.len();
        let fx = ((p.x - self.rect.left()) / self.rect.width()).clamp(0.0, 0.9999);
        let fy = ((p.y - self.rect.top()) / self.rect.height()).clamp(0.0, 0.9999);
        let column = (fx * self.columns as f32) as usize;
        let row = ns - 1 - (fy * ns as f32) as usize;
        (row, column)
    }
}

/// The panel section: scales, thresholds, the Compute button, and the heat map.
fn panel(layer: &mut ScaleSpaceLayer, app: &mut TopoApp, ui: &mut egui::Ui) {
    egui::CollapsingHeader::new("ECC scale-space (χ over threshold and σ)").id_salt("scale-space").show(
        ui,
        |ui| {
            let loaded = app.data.is_some();
            let s = &mut layer.settings;
            ui.horizontal_wrapped(|ui| {
                ui.add(egui::Slider::new(&mut s.sigma_max, 0.5..=8.0).step_by(0.5).text("σ max"));
                ui.add(egui::Slider::new(&mut s.step, 0.25..=2.0).step_by(0.25).text("step"));
            });
            let running = app.jobs.contains_key(&SCALE_SPACE);
            let mut go = false;
            ui.horizontal_wrapped(|ui| {
                ui.add(egui::DragValue::new(&mut s.thresholds).range(16..=4096).suffix(" thresholds"));
                let scales = (s.sigma_max / s.step + 1e-9).floor() as usize + 1;
                let hint = "Smooth the field at each σ and compute its ECC (on the GPU where there is one)";
                let label = format!("Compute {scales} scales");
                if ui.add_enabled(!running && loaded, egui::Button::new(label)).on_hover_text(hint).clicked()
                {
                    go = true;
                }
            });
            if go {
                start(layer, app);
            }
            if let Some(why) = layer.stopped.clone() {
                ui.small(format!("Scale-space: {why}"));
            }
            match current(layer, app) {
                Some(_) => {
                    ui.small("The map is in the Scale-space view; a click on it sets the threshold and σ.");
                }
                None if layer.map.is_some() && !running => {
                    ui.small("The scale-space shown was for another field, construction or filtration: compute it again.");
                }
                None => {}
            }
        },
    );
}

/// The heat map, its zero-crossing line, the current (threshold, σ), the hover readout; a click
/// sets the threshold and σ.
fn heat_map(layer: &mut ScaleSpaceLayer, app: &mut TopoApp, ui: &mut egui::Ui, m: &Arc<ScaleSpaceMap>) {
    let key = layer.version;
    if layer.texture.as_ref().is_none_or(|(k, _)| *k != key) {
        let t = ui.ctx().load_texture("scale-space", heat_image(m), egui::TextureOptions::NEAREST);
        layer.texture = Some((key, t));
    }
    let Some((_, texture)) = &layer.texture else { return };
    let map = &m.map;
    // The pane's height less two lines of caption.
    let caption = 2.0 * ui.text_style_height(&egui::TextStyle::Small) + 3.0 * ui.spacing().item_spacing.y;
    let height = (ui.available_height() - caption).max(60.0);
    let (rect, response) =
        ui.allocate_exact_size(egui::vec2(ui.available_width(), height), egui::Sense::click());
    let painter = ui.painter_at(rect);
    painter.image(texture.id(), rect, Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)), Color32::WHITE);
    let (lo, hi) = (map.thresholds[0], *map.thresholds.last().unwrap_or(&map.thresholds[0]));
    let g = Geometry { rect, lo, hi, sigmas: map.sigmas.clone(), columns: map.thresholds.len() };
    // The suggested threshold of each scale, joined where neighbouring scales both have one.
    let points: Vec<Option<Pos2>> =
        map.suggested.iter().zip(&map.sigmas).map(|(t, &s)| t.map(|t| Pos2::new(g.x(t), g.y(s)))).collect();
    for pair in points.windows(2) {
        if let [Some(a), Some(b)] = pair {
            painter.line_segment([*a, *b], Stroke::new(3.5, Color32::BLACK));
            painter.line_segment([*a, *b], Stroke::new(1.5, Color32::WHITE));
        }
    }
    for p in points.iter().flatten() {
        painter.circle_filled(*p, 1.5, Color32::WHITE);
    }
    let dtype = m.field.dtype();
    let fmt = |v: f64| topoview_core::export::format_threshold(v, dtype);
    if let Some(d) = &app.data {
        let sigma = d.displayed_sigma().unwrap_or(0.0);
        let at = Pos2::new(g.x(d.threshold), g.y(sigma));
        painter.circle_stroke(at, 5.0, Stroke::new(2.0, super::explain::TUNNEL));
    }
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, HEAT_MAP));
    let response = response.on_hover_cursor(egui::CursorIcon::Crosshair);
    if let Some(p) = response.hover_pos() {
        let (s, t) = g.cell(p);
        response.clone().on_hover_text_at_pointer(format!(
            "σ = {}, threshold {}: χ = {}\nclick: set the threshold and σ",
            map.sigmas[s],
            fmt(map.thresholds[t]),
            map.chi[s][t]
        ));
    }
    if response.clicked()
        && let Some(p) = response.interact_pointer_pos().or(response.hover_pos())
    {
        let (s, t) = g.cell(p);
        pick(app, map.sigmas[s], map.thresholds[t]);
    }
    let largest = map.chi.iter().flatten().map(|c| c.abs()).max().unwrap_or(0);
    let gpu = map.ran.iter().filter(|r| r.on_gpu).count();
    let ran = if gpu == map.ran.len() {
        "on the GPU"
    } else if gpu == 0 {
        "on the CPU"
    } else {
        "partly on the GPU"
    };
    ui.small(format!(
        "threshold {} to {} (left to right), σ 0 to {} (bottom to top); blue χ < 0, white 0, red χ > 0 \
         (log scale, |χ| up to {largest}); white line: each σ's suggested threshold; computed {ran}",
        fmt(lo),
        fmt(hi),
        map.sigmas.last().copied().unwrap_or(0.0)
    ));
}

/// Sets σ (smoothing when it changed; σ = 0 shows the original) and the threshold.
pub fn pick(app: &mut TopoApp, sigma: f64, threshold: f64) {
    let Some(d) = &mut app.data else { return };
    let have = d.smoothed.as_ref().map(|s| s.sigma);
    d.show_smoothed = sigma > 0.0;
    d.threshold = threshold;
    d.threshold_chosen = true;
    app.sigma = sigma;
    // Also when a smoothing for another σ is under way: it would land after this pick.
    if sigma == 0.0 || have != Some(sigma) || app.jobs.contains_key(&topoview_compute::jobs::SMOOTH) {
        app.resmooth();
    }
}
