//! "Why χ changes": the Betti curves beside χ (worker lane `betti`), and the parts of the
//! threshold set (components, and the voids or holes they enclose) coloured over the slices,
//! relabelled on the worker's `explain` lane each time the threshold moves, with the tunnels
//! alive at the threshold marked where they are born (lane `tunnels`, once per field).

use super::{Analysis, Arrival, Depth, Owner, Stop, kept_settings, restored};
use crate::app::TopoApp;
use crate::app::curve_panel::PlotCurve;
use crate::app::view3d::VolumeCanvas;
use crate::app::views::{SliceCanvas, SliceTextures};
use egui::Color32;
use std::sync::Arc;
use topoview_compute::betti_jobs::{BettiCurves, BettiLines, Explain, Explained, TunnelList, Tunnels};
use topoview_compute::{JobId, Outcome};
use topoview_core::topo::betti::parts::{NO_PART, Parts};
use topoview_core::topo::betti::tunnels::Tunnel;
use topoview_core::topo::ecc::{Construction, Ecc, Filtration};

/// What the ECC panel shows of why χ changes.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ExplainSettings {
    /// β0, β1, β2 beside χ in the plot and the readout.
    pub betti: bool,
    /// The components and voids of the threshold set coloured on the slices.
    pub parts: bool,
}

/// Colours of β0, β1, β2 in the plot and the readout.
pub const BETTI_COLOURS: [Color32; 3] =
    [Color32::from_rgb(110, 215, 110), Color32::from_rgb(205, 120, 255), Color32::from_rgb(70, 215, 215)];

/// Components take the label palette's hues in turn ([`super::msc_labels::PALETTE`]); voids
/// (and 2D holes) are outlined, not filled: a void can be most of a volume (the brain inside
/// the dark background is one at a low threshold), and filled it would read as an object. The
/// outline is cyan, or yellow where the mask's own colour is near cyan.
const VOID_OUTLINES: [Color32; 2] = [Color32::from_rgb(0, 235, 255), Color32::from_rgb(255, 220, 0)];

/// The void outline's colour that stands apart from the mask's colour `mask`.
pub fn void_colour(mask: [u8; 3]) -> Color32 {
    let far = |c: &Color32| {
        let d = |a: u8, b: u8| (a as i32 - b as i32).pow(2);
        d(c.r(), mask[0]) + d(c.g(), mask[1]) + d(c.b(), mask[2])
    };
    VOID_OUTLINES.into_iter().max_by_key(far).unwrap_or(VOID_OUTLINES[0])
}

/// What the layer holds between frames.
#[derive(Default)]
pub struct ExplainLayer {
    /// The Betti curves last computed, for their curve.
    pub lines: Option<Arc<BettiLines>>,
    /// The curve (by address) whose Betti curves were last asked for, and the job.
    betti_asked: Option<usize>,
    betti_job: Option<JobId>,
    /// Why the last Betti curves or tunnels asked for did not come (cancelled, failed, or the
    /// field cannot have tunnels): shown with a Retry button instead of asking again each frame.
    betti_stopped: Option<String>,
    tunnels_stopped: Option<String>,
    tunnels_job: Option<JobId>,
    /// The parts last labelled.
    pub shown: Option<Explained>,
    /// What was last asked: field (by address), threshold bits, construction, filtration.
    asked: Option<(usize, u64, Construction, Filtration)>,
    /// The tunnels last computed, and what was last asked of them.
    pub tunnels: Option<TunnelList>,
    tunnels_asked: Option<(usize, Construction, Filtration)>,
    /// A field (by address) larger than [`TUNNEL_VOXELS`] whose tunnels the user asked for.
    tunnels_wanted: Option<usize>,
    /// The parts' image of the plane in each view, for the parts, plane, slice and mask colour.
    textures: SliceTextures<PartKey>,
    /// The parts' colours per texel of the 3D view (see [`PartTexels`]).
    texels: Option<PartTexels>,
    /// What the panel shows (kept between runs).
    pub settings: ExplainSettings,
}

/// The parts' colours per texel of the 3D view: the parts, stride and mask colour they were
/// made for, a version, the colours.
type PartTexels = (Arc<Parts>, usize, [u8; 3], u64, Arc<Vec<u8>>);

/// What a view's image of the parts shows: the parts (held, so their address cannot be reused
/// while cached), plane, slice and the mask's colour it keeps clear of.
type PartKey = (Arc<Parts>, usize, usize, [u8; 3]);

/// Fields up to this many voxels get their tunnels found on their own; larger ones on request
/// (the persistence diagram behind them took 9 to 37 s and 2.5 GiB for the 8.7 M voxels of the
/// MNI template on the 2-core VM).
pub const TUNNEL_VOXELS: usize = 1 << 21;

impl std::fmt::Debug for ExplainLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExplainLayer")
    }
}

impl ExplainLayer {
    /// The Betti curves of `ecc`, when they are here.
    pub fn lines_for(&self, ecc: &Arc<Ecc>) -> Option<&Arc<BettiLines>> {
        self.lines.as_ref().filter(|l| Arc::ptr_eq(&l.ecc, ecc))
    }
}

impl Analysis for ExplainLayer {
    fn name(&self) -> &'static str {
        "Betti numbers and parts"
    }

    fn arrived(&mut self, _app: &mut TopoApp, arrival: Arrival) {
        // What the layer holds of the last field (its fields included) goes with it.
        let settings = if arrival.keep_settings { self.settings.clone() } else { Default::default() };
        *self = ExplainLayer { settings, ..ExplainLayer::default() };
    }

    /// Asks the worker for what the panel shows and does not have: the Betti curves of the
    /// curve on screen, the parts of the set at the current threshold (a newer request
    /// supersedes an older one on each lane).
    fn request(&mut self, app: &mut TopoApp) {
        let Some(d) = &app.data else { return };
        let on = &self.settings;
        let me = Owner::Unit(self.name());
        if on.betti
            && let Some(c) = d.displayed_curve()
        {
            let key = Arc::as_ptr(&c.ecc) as usize;
            if self.lines_for(&c.ecc).is_none() && self.betti_asked != Some(key) {
                self.betti_asked = Some(key);
                self.betti_stopped = None;
                let job = BettiCurves { field: d.displayed().clone(), ecc: c.ecc.clone() };
                self.betti_job = Some(app.submit(me, job, Some("Betti curves".into())));
            }
        }
        let Some(d) = &app.data else { return };
        if self.settings.parts {
            let field = d.displayed().clone();
            let (construction, filtration) = (app.settings.construction, app.settings.filtration());
            let key = (Arc::as_ptr(&field) as usize, d.threshold.to_bits(), construction, filtration);
            if self.asked != Some(key) {
                self.asked = Some(key);
                let job = Explain { field: field.clone(), construction, filtration, threshold: d.threshold };
                app.submit(me, job, None);
            }
            let key = (key.0, construction, filtration);
            let wanted = field.len() <= TUNNEL_VOXELS || self.tunnels_wanted == Some(key.0);
            if wanted && field.ndim() >= 2 && self.tunnels_asked != Some(key) {
                self.tunnels_asked = Some(key);
                self.tunnels_stopped = None;
                // Judged once per field: NaN, infinities, a flat axis or a size the diagram cannot take.
                if let Err(e) = topoview_core::topo::betti::tunnels::check(&field) {
                    self.tunnels_stopped = Some(e.to_string());
                    return;
                }
                let job = Tunnels { field, construction, filtration };
                self.tunnels_job = Some(app.submit(me, job, Some("Tunnels".into())));
            }
        }
    }

    fn accept(&mut self, _app: &mut TopoApp, _id: JobId, outcome: Outcome) -> Result<(), Outcome> {
        let outcome = match outcome.take::<BettiLines>() {
            Ok(l) => {
                if self.betti_asked == Some(Arc::as_ptr(&l.ecc) as usize) {
                    self.lines = Some(Arc::new(l));
                }
                return Ok(());
            }
            Err(o) => o,
        };
        let outcome = match outcome.take::<TunnelList>() {
            Ok(t) => {
                let key = (Arc::as_ptr(&t.field) as usize, t.construction, t.filtration);
                if self.tunnels_asked == Some(key) {
                    self.tunnels = Some(t);
                }
                return Ok(());
            }
            Err(o) => o,
        };
        let e = outcome.take::<Explained>()?;
        if self.asked.is_some_and(|(f, ..)| f == Arc::as_ptr(&e.field) as usize) {
            self.shown = Some(e);
        }
        Ok(())
    }

    fn stopped(&mut self, _app: &mut TopoApp, id: JobId, why: &Stop) {
        if self.betti_job == Some(id) {
            self.betti_stopped = Some(why.to_string());
        }
        if self.tunnels_job == Some(id) {
            self.tunnels_stopped = Some(why.to_string());
        }
    }

    fn panel(&mut self, app: &mut TopoApp, ui: &mut egui::Ui) {
        panel(self, app, ui);
    }

    fn clear_overlays(&mut self, _app: &mut TopoApp) {
        self.settings.parts = false;
    }

    /// The components coloured and the voids outlined; the tunnels alive ringed where they
    /// are born.
    fn draw_slice(&mut self, app: &mut TopoApp, canvas: &mut SliceCanvas, depth: Depth) {
        let (axes, slice, mask) = ((canvas.u, canvas.v, canvas.w), canvas.slice, canvas.mask_rgb);
        match depth {
            Depth::Regions => {
                let Some(parts) = overlay(self, app) else { return };
                let key = (parts.clone(), canvas.w, slice, mask);
                let same =
                    |a: &PartKey, b: &PartKey| Arc::ptr_eq(&a.0, &b.0) && (a.1, a.2, a.3) == (b.1, b.2, b.3);
                self.textures.draw(canvas, key, same, || parts_image(&parts, axes, slice, mask), 0.0);
            }
            Depth::Marks => {
                let tunnels = alive_tunnels(self, app);
                draw_tunnels(&canvas.painter, &tunnels, canvas.w, slice, |p| canvas.voxel_to_screen(p));
            }
            Depth::Volumes => {}
        }
    }

    /// β0, β1 (and β2 in 3D) beside χ.
    fn plot_curves(&self, app: &TopoApp) -> Vec<PlotCurve<'_>> {
        let Some(d) = app.data.as_ref().filter(|_| self.settings.betti) else { return Vec::new() };
        let Some(lines) = d.displayed_curve().and_then(|c| self.lines_for(&c.ecc)) else { return Vec::new() };
        let n = if d.displayed().ndim() == 3 { 3 } else { 2 };
        (0..n)
            .map(|k| PlotCurve {
                name: format!("β{k}"),
                colour: BETTI_COLOURS[k],
                quantity: "Betti numbers β",
                points: &lines.points[k],
                value_at: Box::new(move |t| lines.at(t)[k].to_string()),
            })
            .collect()
    }

    /// The components' colours, in the 3D view's threshold voxels.
    fn draw_volume(&mut self, app: &TopoApp, canvas: &mut VolumeCanvas) {
        if !canvas.colours_shown || canvas.colours.is_some() {
            return;
        }
        let Some(parts) = overlay(self, app) else { return };
        let (stride, mask) = (canvas.stride, canvas.mask_rgb);
        if self
            .texels
            .as_ref()
            .is_none_or(|(p, s, m, ..)| !Arc::ptr_eq(p, &parts) || *s != stride || *m != mask)
        {
            let texels = Arc::new(parts_texels(&parts, stride, mask));
            self.texels = Some((parts, stride, mask, crate::app::view3d::next_version(), texels));
        }
        canvas.colours = self.texels.as_ref().map(|(.., v, t)| (*v, t.clone()));
    }

    fn settings_key(&self) -> Option<&'static str> {
        Some("explain")
    }

    fn settings(&self) -> Option<serde_json::Value> {
        kept_settings(&self.settings)
    }

    fn restore_settings(&mut self, kept: &serde_json::Value) {
        self.settings = restored(kept);
    }
}

/// The tunnels alive at the threshold, for the field on screen with the current construction
/// and filtration.
pub fn alive_tunnels(layer: &ExplainLayer, app: &TopoApp) -> Vec<Tunnel> {
    let (Some(d), Some(l)) = (&app.data, &layer.tunnels) else { return Vec::new() };
    let same = Arc::ptr_eq(&l.field, d.displayed())
        && l.construction == app.settings.construction
        && l.filtration == app.settings.filtration();
    if !layer.settings.parts || !same {
        return Vec::new();
    }
    let t = d.threshold;
    let sup = l.filtration == Filtration::Superlevel;
    l.tunnels
        .iter()
        .filter(|x| if sup { x.birth >= t && t > x.death } else { x.birth <= t && t < x.death })
        .copied()
        .collect()
}

/// Colour of the tunnel marks.
pub const TUNNEL: Color32 = Color32::from_rgb(255, 235, 60);

/// Marks the tunnels born in the plane at `slice` (normal `w`; a cell between two planes shows
/// on both) with a ring, `to_screen` mapping voxel coordinates to the view.
pub fn draw_tunnels(
    painter: &egui::Painter,
    tunnels: &[Tunnel],
    w: usize,
    slice: usize,
    to_screen: impl Fn([f64; 3]) -> egui::Pos2,
) {
    let stroke = egui::Stroke::new(2.0, TUNNEL);
    for x in tunnels.iter().filter(|x| (x.at[w] - slice as f64).abs() < 1.0) {
        painter.circle_stroke(to_screen(x.at), 5.0, stroke);
    }
}

/// The parts to draw over the slices: those of the field on screen with the current
/// construction and filtration (at the last threshold labelled, while a newer one is under way).
fn overlay(layer: &ExplainLayer, app: &TopoApp) -> Option<Arc<Parts>> {
    if !layer.settings.parts {
        return None;
    }
    let d = app.data.as_ref()?;
    let e = layer.shown.as_ref()?;
    let same = Arc::ptr_eq(&e.field, d.displayed())
        && e.construction == app.settings.construction
        && e.filtration == app.settings.filtration();
    same.then(|| e.parts.clone())
}

/// The components' colours, in turn by id: the label palette's hues but those near the mask's
/// colour `mask` (a component must not look like the mask, nor the mask like a component); the
/// same on the slices and in the 3D view, so that a component is matched across them.
fn part_hues(mask: [u8; 3]) -> Vec<[u8; 3]> {
    let near = |c: &[u8; 3]| (0..3).map(|k| (c[k] as i32 - mask[k] as i32).pow(2)).sum::<i32>() < 90 * 90;
    let hues: Vec<[u8; 3]> = super::msc_labels::PALETTE.iter().filter(|c| !near(c)).copied().collect();
    if hues.is_empty() { super::msc_labels::PALETTE.to_vec() } else { hues }
}

/// The plane at `slice` (normal axis `w`, in-plane axes `u`, `v`) of the parts, row 0 at the top.
pub fn parts_image(
    parts: &Parts,
    axes: (usize, usize, usize),
    slice: usize,
    mask: [u8; 3],
) -> egui::ColorImage {
    let void = void_colour(mask);
    let hues = part_hues(mask);
    let (u, v, w) = axes;
    let dims = parts.dims;
    let (nu, nv) = (dims[u], dims[v]);
    let mut pixels = vec![Color32::TRANSPARENT; nu * nv];
    // Voids are marked here and outlined below.
    const VOID_MARK: Color32 = Color32::from_rgba_premultiplied(1, 2, 3, 4);
    let colour = |id: u32| {
        if id == NO_PART {
            Color32::TRANSPARENT
        } else if id >= parts.components {
            VOID_MARK
        } else {
            let [r, g, b] = hues[id as usize % hues.len()];
            Color32::from_rgba_unmultiplied(r, g, b, 120)
        }
    };
    let layer = slice.min(dims[w] - 1);
    if (u, v, w) == (0, 1, 2) {
        // Planes of constant z, x across: whole lines of runs.
        for y in 0..nv {
            let row = nv - 1 - y;
            for (x0, x1, id) in parts.line(y, layer) {
                pixels[row * nu + x0..row * nu + x1].fill(colour(id));
            }
        }
    } else {
        for row in 0..nv {
            for iu in 0..nu {
                let mut p = [0; 3];
                p[u] = iu;
                p[v] = nv - 1 - row;
                p[w] = layer;
                pixels[row * nu + iu] = colour(parts.id_at(p[0], p[1], p[2]));
            }
        }
    }
    // A void's pixels on its edge in the plane (a neighbour across a side is not void, or is
    // off the image) are its outline; the rest of it shows what lies beneath.
    let marked = pixels.clone();
    let is_void = |x: isize, y: isize| {
        x >= 0
            && y >= 0
            && (x as usize) < nu
            && (y as usize) < nv
            && marked[y as usize * nu + x as usize] == VOID_MARK
    };
    for y in 0..nv {
        for x in 0..nu {
            let i = y * nu + x;
            if marked[i] != VOID_MARK {
                continue;
            }
            let (x, y) = (x as isize, y as isize);
            let edge = !(is_void(x - 1, y) && is_void(x + 1, y) && is_void(x, y - 1) && is_void(x, y + 1));
            pixels[i] = if edge { void } else { Color32::TRANSPARENT };
        }
    }
    egui::ColorImage::new([nu, nv], pixels)
}

/// The components' colours for the 3D view's voxels mode: RGBA8, one texel per `stride`-th
/// voxel along each axis (the volume texture's layout), x fastest; components in the label
/// palette's hues, opaque; everything else (outside the set, voids) alpha 0.
pub fn parts_texels(parts: &Parts, stride: usize, mask: [u8; 3]) -> Vec<u8> {
    use rayon::prelude::*;
    let s = stride.max(1);
    let [nx, ny, nz] = parts.dims.map(|n| n.div_ceil(s));
    let mut out = vec![0u8; nx * ny * nz * 4];
    let hues = part_hues(mask);
    out.par_chunks_mut(nx * 4).enumerate().for_each(|(line, row)| {
        let (j, k) = (line % ny, line / ny);
        for (x0, x1, id) in parts.line(j * s, k * s) {
            if id == NO_PART || id >= parts.components {
                continue;
            }
            let [r, g, b] = hues[id as usize % hues.len()];
            // Texels i with i * s in [x0, x1).
            for i in x0.div_ceil(s)..x1.div_ceil(s).min(nx) {
                row[4 * i..4 * i + 4].copy_from_slice(&[r, g, b, 255]);
            }
        }
    });
    out
}

/// The panel's controls and readouts, under the ECC plot.
fn panel(layer: &mut ExplainLayer, app: &mut TopoApp, ui: &mut egui::Ui) {
    let three_d = app.data.as_ref().is_some_and(|d| d.displayed().ndim() == 3);
    let s = &mut layer.settings;
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut s.betti, "Betti curves").on_hover_text(
            "β0 components, β1 tunnels (holes in 2D), β2 voids: χ = β0 − β1 + β2 at every threshold",
        );
        ui.checkbox(&mut s.parts, if three_d { "Components and voids" } else { "Components and holes" })
            .on_hover_text(
                "Colour each component of the threshold set on the slices, and the voids it encloses",
            );
    });
    let Some(d) = &app.data else { return };
    let t = d.threshold;
    if layer.settings.betti {
        match d.displayed_curve().and_then(|c| layer.lines_for(&c.ecc)) {
            Some(l) => {
                let b = l.at(t);
                ui.horizontal_wrapped(|ui| {
                    let n = if three_d { 3 } else { 2 };
                    for k in 0..n {
                        ui.label(
                            egui::RichText::new(format!("β{k} = {}", b[k]))
                                .size(16.0)
                                .color(BETTI_COLOURS[k]),
                        );
                    }
                });
            }
            None => match layer.betti_stopped.clone() {
                Some(why) => {
                    ui.horizontal_wrapped(|ui| {
                        ui.small(format!("Betti curves: {why}"));
                        if ui.small_button("Retry").clicked() {
                            layer.betti_asked = None;
                            layer.betti_stopped = None;
                        }
                    });
                }
                None => {
                    ui.small("Computing the Betti curves…");
                }
            },
        }
    }
    if layer.settings.parts {
        match &layer.shown {
            Some(e) if overlay(layer, app).is_some() => {
                let p = &e.parts;
                let group = crate::app::numbers::group;
                let plural = |n: u32, one: &str, many: &str| {
                    format!("{} {}", group(n as usize), if n == 1 { one } else { many })
                };
                let voids =
                    if three_d { plural(p.voids, "void", "voids") } else { plural(p.voids, "hole", "holes") };
                let largest =
                    group(p.sizes[..p.components as usize].iter().max().copied().unwrap_or(0) as usize);
                let stale = if e.threshold.to_bits() != t.to_bits() { " (updating)" } else { "" };
                ui.small(format!(
                    "At {}: {} (largest {largest} voxels), {voids} (outlined){stale}; labelled in {:.0} ms",
                    topoview_core::export::format_threshold(e.threshold, d.displayed().dtype()),
                    plural(p.components, "component", "components"),
                    e.ms
                ));
            }
            _ => {
                ui.small("Labelling the components…");
            }
        }
        tunnel_list(layer, app, ui);
    }
}

/// The tunnels alive at the threshold, longest-lived first; a click puts the crosshair on one.
fn tunnel_list(layer: &mut ExplainLayer, app: &mut TopoApp, ui: &mut egui::Ui) {
    let Some(d) = &app.data else { return };
    let (dtype, ndim) = (d.displayed().dtype(), d.displayed().ndim());
    let key = Arc::as_ptr(d.displayed()) as usize;
    let asked = layer.tunnels_asked.is_some_and(|k| k.0 == key);
    if !asked && d.displayed().len() > TUNNEL_VOXELS {
        let label = if ndim == 3 { "Find the tunnels" } else { "Find the holes" };
        let hint = "Their birth and death thresholds, from the persistence diagram: a minute and a few GiB for 10 M voxels";
        if ui.button(label).on_hover_text(hint).clicked() {
            layer.tunnels_wanted = Some(key);
        }
        return;
    }
    if let Some(why) = layer.tunnels_stopped.clone() {
        ui.horizontal_wrapped(|ui| {
            ui.small(format!("Tunnels: {why}"));
            if ui.small_button("Retry").clicked() {
                layer.tunnels_asked = None;
                layer.tunnels_stopped = None;
            }
        });
        return;
    }
    let (construction, filtration) = (app.settings.construction, app.settings.filtration());
    let ready = layer.tunnels.as_ref().is_some_and(|l| {
        Arc::as_ptr(&l.field) as usize == key && l.construction == construction && l.filtration == filtration
    });
    if !ready {
        ui.small("Finding the tunnels…");
        return;
    }
    let dims = d.displayed().dims();
    let mut alive = alive_tunnels(layer, app);
    alive.sort_by(|a, b| (b.death - b.birth).abs().total_cmp(&(a.death - a.birth).abs()));
    let what = if ndim == 3 { "Tunnels" } else { "Holes" };
    let fmt = |v: f64| topoview_core::export::format_threshold(v, dtype);
    egui::CollapsingHeader::new(format!(
        "{what} at the threshold: {} (yellow rings where born)",
        alive.len()
    ))
    .id_salt("tunnels")
    .show(ui, |ui| {
        egui::ScrollArea::vertical().max_height(140.0).show(ui, |ui| {
            for x in alive.iter().take(200) {
                let at = crate::app::views::voxel_at(x.at, dims);
                let label = format!(
                    "born {} dies {} at ({}, {}, {})",
                    fmt(x.birth),
                    fmt(x.death),
                    at[0],
                    at[1],
                    at[2]
                );
                if ui.small_button(label).on_hover_text("Move the crosshair here").clicked() {
                    app.views.cursor = at;
                }
            }
            if alive.len() > 200 {
                ui.small(format!("and {} shorter-lived", alive.len() - 200));
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use topoview_core::topo::betti::parts::parts;
    use topoview_core::topo::ecc::{Construction, Filtration};

    /// A ring's hole is outlined (its inside shows through) in a colour apart from the mask's,
    /// and the ring's colour is none near the mask's either.
    #[test]
    fn holes_are_outlined_and_no_part_takes_the_mask_colour() {
        use topoview_core::field::{Samples, ScalarField};
        let n = 9;
        // A ring of zeros two pixels wide around a 3x3 hole of tens, tens outside it.
        let v: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as i32 - 4, (i / n) as i32 - 4);
                if x.abs().max(y.abs()) >= 2 && x.abs().max(y.abs()) <= 3 { 0.0 } else { 10.0 }
            })
            .collect();
        let f = ScalarField::new(&[n, n], Samples::F32(v)).unwrap_or_else(|e| panic!("{e}"));
        let p = parts(&f, Construction::TopCells, Filtration::Sublevel, 5.0, &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.components, p.voids), (1, 1));
        for mask in [[255, 0, 255], [0, 235, 255], [31, 119, 180]] {
            let img = parts_image(&p, (0, 1, 2), 0, mask);
            let void = void_colour(mask);
            let at = |x: usize, y: usize| img.pixels[(n - 1 - y) * n + x];
            assert_eq!(at(4, 4), Color32::TRANSPARENT, "the hole's inside shows through");
            assert_eq!(at(3, 4), void, "its edge is outlined");
            assert_eq!(at(0, 0), Color32::TRANSPARENT, "outside the set and the hole");
            let ring = at(1, 1);
            let far = |c: Color32, m: [u8; 3]| {
                let d = |a: u8, b: u8| (a as i32 - b as i32).pow(2);
                d(c.r(), m[0]) + d(c.g(), m[1]) + d(c.b(), m[2])
            };
            assert!(far(void, mask) > 100 * 100, "{mask:?}: outline {void:?}");
            let opaque = Color32::from_rgb(ring.r(), ring.g(), ring.b());
            assert!(ring.a() > 0 && far(opaque, mask) >= 90 * 90 / 4, "{mask:?}: ring {ring:?}");
        }
    }

    /// Each texel is the colour of the voxel it stands for (every `stride`-th), opaque for a
    /// component and clear elsewhere.
    #[test]
    fn texels_colour_the_sampled_voxels_components() {
        let f = topoview_core::synthetic::gaussian_random_field(&[23, 17, 11], 1.5, 4, &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut v: Vec<f64> = (0..f.len()).map(|i| f.samples().get_f64(i)).collect();
        v.sort_by(f64::total_cmp);
        // The lowest fifth: many small components.
        let t = v[v.len() / 5];
        let p = parts(&f, Construction::TopCells, Filtration::Sublevel, t, &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(p.components > 3);
        // The slices' hues, without those near the mask's colour.
        let mask = [40, 170, 50];
        let hues = part_hues(mask);
        assert!(hues.len() < super::super::msc_labels::PALETTE.len(), "a hue near green left out");
        for s in [1, 2, 3] {
            let t = parts_texels(&p, s, mask);
            let [nx, ny, nz] = p.dims.map(|n| n.div_ceil(s));
            assert_eq!(t.len(), nx * ny * nz * 4);
            for k in 0..nz {
                for j in 0..ny {
                    for i in 0..nx {
                        let id = p.id_at(i * s, j * s, k * s);
                        let want = if id == NO_PART || id >= p.components {
                            [0; 4]
                        } else {
                            let [r, g, b] = hues[id as usize % hues.len()];
                            [r, g, b, 255]
                        };
                        let at = 4 * (i + nx * (j + ny * k));
                        assert_eq!(t[at..at + 4], want, "stride {s} texel ({i}, {j}, {k})");
                    }
                }
            }
        }
    }
}
