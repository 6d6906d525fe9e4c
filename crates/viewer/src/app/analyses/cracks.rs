//! The "edges between pixels" layer: crack strengths of the slice on screen (a 2D image, or a
//! volume's axial slice), computed on the worker's `cracks` lane, drawn as segments on the
//! pixel boundaries; optionally only the cracks on closed curves, and the boundary of the
//! threshold set, which lies exactly on cracks.

use super::{Analysis, Arrival, Depth, Owner, Stop, kept_settings, restored};
use crate::app::TopoApp;
use crate::app::views::SliceCanvas;
use egui::{Color32, Pos2, Rect};
use std::sync::Arc;
use topoview_compute::{Job, JobContext, JobError, JobId, Lane, Outcome};
use topoview_core::field::ScalarField;
use topoview_core::topo::cracks::boundaries::{self, Kept};
use topoview_core::topo::cracks::{CrackError, CrackOptions, Family};

/// The "edges between pixels" layer over the slice views (a 2D image, or a volume's axial
/// slices).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CrackSettings {
    pub show: bool,
    pub scales: Vec<f64>,
    pub orientations: usize,
    /// Cracks at least this strong are drawn, as a fraction of the slice's strongest.
    pub min_fraction: f32,
    pub color: CrackColor,
    /// Only the cracks on closed curves (dangling branches pruned).
    pub closed: bool,
    /// The boundary of the threshold set, on the cracks.
    pub set_boundary: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CrackColor {
    Strength,
    Orientation,
}

impl Default for CrackSettings {
    fn default() -> Self {
        CrackSettings {
            show: false,
            scales: vec![1.0, 2.0, 4.0],
            orientations: 8,
            min_fraction: 0.2,
            color: CrackColor::Strength,
            closed: false,
            set_boundary: false,
        }
    }
}

impl CrackSettings {
    pub fn options(&self) -> topoview_core::topo::cracks::CrackOptions {
        topoview_core::topo::cracks::CrackOptions {
            scales: self.scales.clone(),
            orientations: self.orientations,
            ..Default::default()
        }
    }
}

/// The worker's lane for the strengths of the slice on screen.
pub const CRACKS: Lane = Lane("cracks");

/// The crack strengths of one axial slice of a field (a 2D field is its own slice).
pub struct Cracks {
    pub field: Arc<ScalarField>,
    pub z: usize,
    pub opts: topoview_core::topo::cracks::CrackOptions,
}

/// A slice's crack strengths, with what they were computed from.
pub struct CrackSlice {
    pub field: Arc<ScalarField>,
    pub z: usize,
    pub opts: topoview_core::topo::cracks::CrackOptions,
    pub map: Arc<topoview_core::topo::cracks::CrackMap>,
    /// The slice's values, for the boundary of the threshold set on the cracks.
    pub values: Arc<Vec<f32>>,
}

impl Job for Cracks {
    type Output = CrackSlice;

    fn lane(&self) -> Lane {
        CRACKS
    }

    fn run(self, cx: &JobContext) -> Result<CrackSlice, JobError> {
        use topoview_core::field::Sample;
        let [w, h, _] = self.field.dims();
        let plane = w * h;
        let start = self.z * plane;
        let values: Vec<f32> = topoview_core::with_samples!(self.field.samples(), v => v[start..start + plane].iter().map(|x| x.to_f32()).collect());
        let img = topoview_core::topo::cracks::Image::grey(w, h, values);
        let total = (2 * plane * self.opts.scales.len()) as u64;
        let progress = |n: u64| cx.report("edges between pixels", n, total);
        let (map, ran) = cx
            .backend
            .cracks(&img, &self.opts, &cx.control(&progress))
            .map_err(|e| JobError::from_error(matches!(e, CrackError::Cancelled), e))?;
        cx.note(ran.fallback);
        let values = Arc::new(img.channels.into_iter().next().unwrap_or_default());
        Ok(CrackSlice { field: self.field, z: self.z, opts: self.opts, map: Arc::new(map), values })
    }
}

/// The most crack segments drawn in one view (beyond that, zoom in or raise the threshold).
const MAX_SEGMENTS: usize = 400_000;

/// What the layer shows, with the cracks kept at the current settings (cached).
#[derive(Default)]
pub struct CrackLayer {
    /// The strengths on screen.
    pub slice: Option<CrackSlice>,
    /// What was last asked of the worker: the field (by address), slice and options.
    asked: Option<(usize, usize, CrackOptions)>,
    /// The cracks drawn, for (strengths, min fraction bits, closed).
    kept: Option<((usize, u32, bool), Arc<Kept>)>,
    /// The threshold set's boundary, for (values, threshold bits, superlevel).
    boundary: Option<((usize, u64, bool), Arc<Kept>)>,
    /// The scales as being typed (applied on Enter or when the field loses focus).
    scales_text: Option<String>,
    /// How many cracks the last frame drew.
    drawn: usize,
    /// The layer's settings (kept between runs).
    pub settings: CrackSettings,
}

impl std::fmt::Debug for CrackLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CrackLayer")
    }
}

impl CrackLayer {
    /// How many cracks the last frame drew.
    pub fn drawn(&self) -> usize {
        self.drawn
    }

    /// Whether the strengths on screen are those of `field` at slice `z` with `opts`.
    fn shows(&self, field: &Arc<ScalarField>, z: usize, opts: &CrackOptions) -> bool {
        self.slice.as_ref().is_some_and(|s| Arc::ptr_eq(&s.field, field) && s.z == z && &s.opts == opts)
    }
}

impl Analysis for CrackLayer {
    fn name(&self) -> &'static str {
        "edges between pixels"
    }

    fn arrived(&mut self, _app: &mut TopoApp, arrival: Arrival) {
        *self = CrackLayer { settings: self.settings.clone(), ..CrackLayer::default() };
        if !arrival.keep_settings {
            self.settings.show = false;
        }
    }

    /// Asks the worker for the strengths of the slice on screen when the layer is on and they
    /// are not there yet (a newer request supersedes an older one on the lane).
    fn request(&mut self, app: &mut TopoApp) {
        if !self.settings.show {
            return;
        }
        let Some(d) = &app.data else { return };
        let field = d.displayed().clone();
        if field.ndim() < 2 || field.dims()[0] < 2 || field.dims()[1] < 2 {
            return;
        }
        let z = slice_of(app, &field);
        let opts = self.settings.options();
        if opts.check().is_err() || self.shows(&field, z, &opts) {
            return;
        }
        let key = (Arc::as_ptr(&field) as usize, z, opts.clone());
        if self.asked.as_ref() == Some(&key) {
            return;
        }
        self.asked = Some(key);
        app.submit(Owner::Unit(self.name()), Cracks { field, z, opts }, Some("Edges between pixels".into()));
    }

    /// Takes the strengths if they are still those wanted.
    fn accept(&mut self, _app: &mut TopoApp, _id: JobId, outcome: Outcome) -> Result<(), Outcome> {
        let s = outcome.take::<CrackSlice>()?;
        let key = (Arc::as_ptr(&s.field) as usize, s.z, s.opts.clone());
        if self.asked.as_ref() == Some(&key) {
            self.slice = Some(s);
        }
        Ok(())
    }

    fn stopped(&mut self, _app: &mut TopoApp, _id: JobId, _why: &Stop) {
        // Asked again when the slice or the options change.
        self.asked = None;
    }

    fn panel(&mut self, app: &mut TopoApp, ui: &mut egui::Ui) {
        panel(self, app, ui);
    }

    fn clear_overlays(&mut self, _app: &mut TopoApp) {
        self.settings.show = false;
    }

    /// Draws the cracks over the axial view of the slice they were computed for.
    fn draw_slice(&mut self, app: &mut TopoApp, canvas: &mut SliceCanvas, depth: Depth) {
        if depth != Depth::Marks || canvas.w != 2 {
            return;
        }
        let Some(o) = overlay(self, app).filter(|o| canvas.ndim < 3 || o.slice_z == canvas.slice) else {
            return;
        };
        // The layer is in voxel x and y; the view may show y across (u = 1).
        let r = canvas.rect();
        let [a, b] = [canvas.to_plane(r.left_top()), canvas.to_plane(r.right_bottom())];
        let (xs, ys) = if canvas.u == 0 { (0, 1) } else { (1, 0) };
        let visible = [a[xs].min(b[xs]), a[xs].max(b[xs]), a[ys].min(b[ys]), a[ys].max(b[ys])];
        let across = canvas.u == 0;
        let to_screen = |x: f32, y: f32| if across { canvas.to_screen(x, y) } else { canvas.to_screen(y, x) };
        let (drawn, all) = draw(&canvas.painter, &o, to_screen, visible);
        self.drawn = drawn;
        if !all {
            canvas.note("edges: too many here, zoom in or raise the strength");
        }
    }

    fn settings_key(&self) -> Option<&'static str> {
        Some("cracks")
    }

    fn settings(&self) -> Option<serde_json::Value> {
        kept_settings(&self.settings)
    }

    fn restore_settings(&mut self, kept: &serde_json::Value) {
        self.settings = restored(kept);
    }
}

/// The slice the layer follows: the axial one through the crosshair (0 for a 2D field).
fn slice_of(app: &TopoApp, field: &ScalarField) -> usize {
    if field.ndim() == 3 { app.views.cursor[2].min(field.dims()[2] - 1) } else { 0 }
}

/// What one view draws of the layer.
#[derive(Clone)]
struct Overlay {
    pub slice_z: usize,
    pub width: usize,
    pub height: usize,
    pub map: Arc<topoview_core::topo::cracks::CrackMap>,
    pub kept: Arc<Kept>,
    pub boundary: Option<Arc<Kept>>,
    pub color: CrackColor,
    /// The drawn range of strengths: the threshold and the strongest.
    pub lowest: f32,
    pub top: f32,
}

/// The overlay for the field on screen at its current settings, if the layer is on and its
/// strengths are those of this field.
fn overlay(layer: &mut CrackLayer, app: &TopoApp) -> Option<Overlay> {
    let c = &layer.settings;
    if !c.show {
        return None;
    }
    let d = app.data.as_ref()?;
    let field = d.displayed();
    let slice = layer.slice.as_ref().filter(|s| Arc::ptr_eq(&s.field, field))?;
    let map = slice.map.clone();
    let top = map.max_strength();
    let lowest = c.min_fraction * top;
    let key = (Arc::as_ptr(&map) as usize, c.min_fraction.to_bits(), c.closed);
    let kept = match &layer.kept {
        Some((k, kept)) if *k == key => kept.clone(),
        _ => {
            let mut kept = boundaries::above(&map, lowest.max(f32::MIN_POSITIVE));
            if c.closed {
                kept = boundaries::closed(map.width, map.height, kept);
            }
            let kept = Arc::new(kept);
            layer.kept = Some((key, kept.clone()));
            kept
        }
    };
    let boundary = if c.set_boundary {
        let superlevel = app.settings.superlevel;
        let key = (Arc::as_ptr(&slice.values) as usize, d.threshold.to_bits(), superlevel);
        Some(match &layer.boundary {
            Some((k, b)) if *k == key => b.clone(),
            _ => {
                let b = Arc::new(boundaries::set_boundary(
                    map.width,
                    map.height,
                    &slice.values,
                    d.threshold as f32,
                    superlevel,
                ));
                layer.boundary = Some((key, b.clone()));
                b
            }
        })
    } else {
        None
    };
    Some(Overlay {
        slice_z: slice.z,
        width: map.width,
        height: map.height,
        map,
        kept,
        boundary,
        color: c.color,
        lowest,
        top,
    })
}

/// The colour of a crack of strength `s` at `angle` radians.
fn color(o: &Overlay, s: f32, angle: f32) -> Color32 {
    match o.color {
        CrackColor::Strength => {
            // Yellow at the threshold to red at the strongest.
            let t = ((s - o.lowest) / (o.top - o.lowest).max(f32::MIN_POSITIVE)).clamp(0.0, 1.0);
            Color32::from_rgb(255, (230.0 - 190.0 * t) as u8, 0)
        }
        CrackColor::Orientation => {
            let hue = (angle / std::f32::consts::PI).rem_euclid(1.0);
            egui::ecolor::Hsva::new(hue, 0.85, 1.0, 1.0).into()
        }
    }
}

/// Draws the layer on a view of the slice: `to_screen(u, v)` maps plane coordinates (pixel
/// `x` spans `u` from `x` to `x + 1`) onto the view, `visible` is the part of the plane on
/// screen. Returns the number of cracks drawn and whether all of them were.
fn draw(
    painter: &egui::Painter,
    o: &Overlay,
    to_screen: impl Fn(f32, f32) -> Pos2,
    visible: [f32; 4],
) -> (usize, bool) {
    let (w, h) = (o.width, o.height);
    let [u0, u1, v0, v1] = visible;
    let range = |lo: f32, hi: f32, n: usize| -> (usize, usize) {
        ((lo.floor().max(0.0) as usize).min(n), (hi.ceil().max(0.0) as usize + 1).min(n))
    };
    let (x0, x1) = range(u0, u1, w);
    let (y0, y1) = range(v0, v1, h);
    let mut mesh = egui::Mesh::default();
    // Lines a pixel wide on screen, whatever the zoom.
    let half = 0.5;
    let mut drawn = 0;
    let mut complete = true;
    let segment = |mesh: &mut egui::Mesh, a: Pos2, b: Pos2, c: Color32| {
        let r = Rect::from_two_pos(a, b).expand(half);
        mesh.add_colored_rect(r, c);
    };
    'families: for f in Family::BOTH {
        let (cw, ch) = f.dims(w, h);
        let fi = f as usize;
        for y in y0..y1.min(ch) {
            for x in x0..x1.min(cw) {
                let i = y * cw + x;
                let strong = o.kept[fi][i];
                let edge = o.boundary.as_ref().is_some_and(|b| b[fi][i]);
                if !strong && !edge {
                    continue;
                }
                if drawn >= MAX_SEGMENTS {
                    complete = false;
                    break 'families;
                }
                // h(x, y) lies at v = y + 1 from u = x to x + 1; v(x, y) at u = x + 1.
                let (a, b) = match f {
                    Family::H => {
                        (to_screen(x as f32, y as f32 + 1.0), to_screen(x as f32 + 1.0, y as f32 + 1.0))
                    }
                    Family::V => {
                        (to_screen(x as f32 + 1.0, y as f32), to_screen(x as f32 + 1.0, y as f32 + 1.0))
                    }
                };
                let c = if edge && !strong {
                    Color32::from_rgb(0, 220, 255)
                } else {
                    color(o, o.map.strength[fi][i], o.map.angle[fi][i])
                };
                segment(&mut mesh, a, b, c);
                drawn += 1;
            }
        }
    }
    painter.add(egui::Shape::mesh(mesh));
    (drawn, complete)
}

/// The layer's controls, in the side panel.
fn panel(layer: &mut CrackLayer, app: &mut TopoApp, ui: &mut egui::Ui) {
    ui.heading("Edges between pixels");
    let c = &mut layer.settings;
    ui.checkbox(&mut c.show, "Show edges on the cracks between pixels").on_hover_text(
        "Steered Gaussian derivative filters at each crack between two pixels (topoview cracks); \
         on a volume, the axial slice through the crosshair",
    );
    if !c.show {
        return;
    }
    ui.add(egui::Slider::new(&mut c.min_fraction, 0.0..=1.0).text("min strength (of the strongest)"));
    ui.horizontal_wrapped(|ui| {
        ui.label("Colour by");
        ui.selectable_value(&mut c.color, CrackColor::Strength, "strength");
        ui.selectable_value(&mut c.color, CrackColor::Orientation, "orientation");
    });
    ui.checkbox(&mut c.closed, "Closed boundaries only")
        .on_hover_text("Drop the dangling branches: what stays lies on closed curves of cracks");
    ui.checkbox(&mut c.set_boundary, "Threshold set boundary (cyan)")
        .on_hover_text("The cracks between a pixel in the threshold set and one outside it");
    ui.horizontal_wrapped(|ui| {
        ui.label("Scales");
        let text = layer
            .scales_text
            .get_or_insert_with(|| c.scales.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(","));
        let r = ui
            .add(egui::TextEdit::singleline(text).desired_width(90.0))
            .on_hover_text("Gaussian scales in pixels, comma-separated (0.1 to 64); Enter applies them");
        if r.lost_focus() {
            let parsed: Result<Vec<f64>, _> = text.split(',').map(|s| s.trim().parse::<f64>()).collect();
            match parsed {
                Ok(v) if !v.is_empty() && v.len() <= 16 && v.iter().all(|s| (0.1..=64.0).contains(s)) => {
                    c.scales = v
                }
                _ => {
                    app.error =
                        Some(format!("scales: '{text}' is not a list of 1 to 16 numbers from 0.1 to 64"))
                }
            }
            layer.scales_text = None;
        }
        ui.add(egui::DragValue::new(&mut c.orientations).range(2..=32).speed(0.1).prefix("orientations "));
        c.orientations = (c.orientations / 2 * 2).max(2);
    });
    let working = app.jobs.contains_key(&CRACKS);
    match &layer.slice {
        Some(s) => {
            let z = if s.field.ndim() == 3 { format!("slice z = {}: ", s.z) } else { String::new() };
            ui.label(format!(
                "{z}strongest {:.4}; {} cracks drawn{}",
                s.map.max_strength(),
                layer.drawn,
                if working { " (updating…)" } else { "" }
            ));
        }
        None if working => {
            ui.label("Filtering…");
        }
        None => {}
    }
}
