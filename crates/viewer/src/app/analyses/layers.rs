//! Layers: volumes drawn over the image in the slice views (a statistical map over an
//! anatomy, a label map over an image), each resampled to the image's grid on the worker's
//! `layers` lane ([`topoview_compute::layers`]: nearest for labels, trilinear otherwise) and
//! drawn with its own colormap, window, opacity and threshold. The ECC and every other analysis
//! stay on the image; the layer list says so, and "Analyse" swaps a layer with the image.

use super::{Analysis, Arrival, Depth, Owner, Stop};
use crate::app::TopoApp;
use crate::app::numbers::short;
use crate::app::views::{SliceCanvas, SliceTextures};
use crate::render::colormap::{Colormap, label_colour};
use egui::Color32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use topoview_compute::layers::{LayerRequest, LayerSource, PlaceLayers, PlacedLayers};
use topoview_compute::{FieldSummary, JobId, Outcome};
use topoview_core::field::ScalarField;
use topoview_core::io::OpenOptions;

/// How a layer is drawn.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LayerStyle {
    pub visible: bool,
    /// Of intensities (a label layer has categorical colours).
    pub colormap: Colormap,
    pub window: (f64, f64),
    pub opacity: f32,
    /// Intensities whose magnitude is at most this are not drawn (a statistical map's
    /// threshold, both signs), nor are 0 labels.
    pub threshold: f64,
}

impl LayerStyle {
    /// What a layer starts with: label colours; or, for signed values (a statistical map),
    /// cool-warm centred on zero with the third of the window nearest zero hidden (cool-warm's
    /// pale middle would veil the anatomy); else inferno, which stands out on gray anatomy,
    /// with zeros hidden.
    pub fn initial(summary: &FieldSummary, labels: bool) -> LayerStyle {
        let (colormap, window, threshold) = if labels {
            (Colormap::Labels, summary.window, 0.0)
        } else if summary.signed {
            let m = summary.window.0.abs().max(summary.window.1.abs());
            (Colormap::CoolWarm, (-m, m), m / 3.0)
        } else {
            (Colormap::Inferno, summary.window, 0.0)
        };
        let opacity = if labels { 0.5 } else { 0.8 };
        LayerStyle { visible: true, colormap, window, opacity, threshold }
    }
}

/// A layer on the image's grid.
pub struct Layer {
    pub id: u64,
    pub path: PathBuf,
    /// As read, on its own grid (placed again from here when the image changes).
    pub source: Arc<ScalarField>,
    /// At the image's voxels, NaN outside the layer.
    pub field: Arc<ScalarField>,
    pub summary: FieldSummary,
    pub labels: bool,
    pub style: LayerStyle,
}

impl Layer {
    pub fn name(&self) -> String {
        file_name(&self.path)
    }

    /// The layer's value at an image voxel (NaN outside the layer).
    pub fn value_at(&self, voxel: [usize; 3]) -> f64 {
        let f = &self.field;
        f.samples().get_f64(f.index(voxel[0], voxel[1], voxel[2]))
    }

    /// "name: value 2.5", "name: label 12" or "name: outside" at an image voxel.
    pub fn readout(&self, voxel: [usize; 3]) -> String {
        let v = self.value_at(voxel);
        let what = if v.is_nan() {
            "outside".to_string()
        } else if self.labels {
            format!("label {}", v as i64)
        } else {
            format!("value {}", topoview_core::export::format_threshold(v, self.field.dtype()))
        };
        format!("{}: {what}", self.name())
    }

    /// Whether the layer's values could be labels: integers as stored (a float file is not
    /// offered as labels).
    pub fn integer(&self) -> bool {
        !self.source.dtype().is_float() || self.source.labels
    }

    /// The colour drawn for `value`: transparent outside the layer, at zero labels and at
    /// intensities within the threshold.
    pub fn colour(&self, value: f64) -> Color32 {
        let s = &self.style;
        let [r, g, b] = if value.is_nan() {
            return Color32::TRANSPARENT;
        } else if self.labels {
            if value <= 0.0 {
                return Color32::TRANSPARENT;
            }
            // As the image's label colours: id mod 256.
            label_colour(value as usize % 256)
        } else {
            if value.abs() <= s.threshold {
                return Color32::TRANSPARENT;
            }
            let (lo, hi) = s.window;
            s.colormap.rgb(((value - lo) / (hi - lo).max(f64::MIN_POSITIVE)) as f32)
        };
        Color32::from_rgba_unmultiplied(r, g, b, (s.opacity.clamp(0.0, 1.0) * 255.0).round() as u8)
    }

    /// The slice of constant `axes.2` at `slice` as an image: `axes.0` across, `axes.1` up
    /// (row 0 is the top, the last v), as the views lay textures with `Frame::image_rect`.
    pub fn slice_image(&self, axes: (usize, usize, usize), slice: usize) -> egui::ColorImage {
        let (u, v, w) = axes;
        let dims = self.field.dims();
        let (nu, nv) = (dims[u], dims[v]);
        let mut pixels = Vec::with_capacity(nu * nv);
        let mut p = [0; 3];
        p[w] = slice.min(dims[w] - 1);
        for row in 0..nv {
            p[v] = nv - 1 - row;
            for iu in 0..nu {
                p[u] = iu;
                pixels.push(self.colour(self.value_at(p)));
            }
        }
        egui::ColorImage::new([nu, nv], pixels)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// A layer waiting to be placed on the image on screen, with the style it keeps.
#[derive(Clone)]
struct Queued {
    request: LayerRequest,
    style: Option<LayerStyle>,
}

/// The layers over the image, and those on their way.
#[derive(Default)]
pub struct Layers {
    /// Drawn in order: the last on top.
    pub list: Vec<Layer>,
    queued: Vec<Queued>,
    /// The image the queued layers were last sent to be placed on, and the job's id.
    sent_for: Option<Arc<ScalarField>>,
    sent_id: Option<topoview_compute::JobId>,
    next_id: u64,
    /// Each layer's image of the plane in each view, by layer id.
    textures: std::collections::HashMap<u64, SliceTextures<LayerKey>>,
}

/// What a layer's image shows: its samples (held, so their address cannot be reused while
/// cached), plane, slice and style.
type LayerKey = (Arc<ScalarField>, usize, usize, LayerStyle);

impl std::fmt::Debug for Layers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Layers({} shown, {} queued)", self.list.len(), self.queued.len())
    }
}

/// Whether two fields lie on the same grid: a layer placed on one lines up with the other.
fn same_grid(a: &ScalarField, b: &ScalarField) -> bool {
    a.shape() == b.shape() && a.spacing() == b.spacing() && a.affine == b.affine
}

impl Layers {
    /// Forgets every layer, shown or on its way (their job's results are then ignored: the
    /// ids go on counting, so an old result never matches a new layer).
    pub fn clear(&mut self) {
        self.list.clear();
        self.queued.clear();
        self.sent_for = None;
        self.sent_id = None;
    }

    /// Job `id` was cancelled or failed: if it was the layers job last sent (not one a newer
    /// request superseded), the layers it was placing are dropped (they would otherwise wait
    /// for a job that never comes back). Says which, when any.
    fn dropped(&mut self, id: topoview_compute::JobId) -> Option<String> {
        if self.sent_id != Some(id) {
            return None;
        }
        self.sent_for = None;
        self.sent_id = None;
        let names = self.loading();
        self.queued.clear();
        (!names.is_empty()).then(|| format!("layers not placed: {}", names.join(", ")))
    }

    /// Names of the layers being read or placed.
    pub fn loading(&self) -> Vec<String> {
        self.queued.iter().map(|q| file_name(&q.request.path)).collect()
    }

    fn queue(&mut self, path: PathBuf, source: LayerSource, labels: Option<bool>, style: Option<LayerStyle>) {
        let id = self.next_id;
        self.next_id += 1;
        self.queued.push(Queued { request: LayerRequest { id, path, source, labels }, style });
        self.sent_for = None;
    }

    /// Takes a layer out of the list to be placed again (from the field held), keeping its
    /// style but for what `labels` changes.
    fn requeue(&mut self, index: usize, labels: bool) {
        let l = self.list.remove(index);
        let style = (labels == l.labels).then_some(l.style).or_else(|| {
            let mut s = LayerStyle::initial(&l.summary, labels);
            s.visible = l.style.visible;
            Some(s)
        });
        let source = LayerSource::Held(l.source);
        self.queued.push(Queued {
            request: LayerRequest { id: l.id, path: l.path, source, labels: Some(labels) },
            style,
        });
        self.sent_for = None;
    }

    /// The image on screen changed: layers placed on another grid are placed again on this
    /// one (a volume of the same series, or the smoothed field, keeps them as they are).
    pub fn image_changed(&mut self, image: &ScalarField) {
        while let Some(i) = self.list.iter().position(|l| !same_grid(&l.field, image)) {
            let labels = self.list[i].labels;
            self.requeue(i, labels);
        }
    }
}

impl Layers {
    /// Adds the file at `path` as a layer over the image (read and placed on the worker).
    pub fn add(&mut self, path: PathBuf) {
        self.queue(path, LayerSource::File { opts: OpenOptions::default() }, None, None);
    }

    /// Adds the file at `path` as a layer with a session's label choice and style.
    pub fn restore(&mut self, path: PathBuf, labels: bool, style: LayerStyle) {
        self.queue(path, LayerSource::File { opts: OpenOptions::default() }, Some(labels), Some(style));
    }
}

impl Analysis for Layers {
    fn name(&self) -> &'static str {
        "layers"
    }

    /// A new image takes the layers of the last one away (those asked for since it was
    /// opened stay queued for it); the scene the user built stays for another volume of the
    /// series or a layer made the image, placed again where the grid changed.
    fn arrived(&mut self, app: &mut TopoApp, arrival: Arrival) {
        if !arrival.keep_settings {
            self.list.clear();
        }
        if let Some(d) = &app.data {
            self.image_changed(&d.field);
        }
    }

    /// Sends the queued layers to be placed on the image on screen, once it has loaded (one
    /// job for all of them: a newer job on the lane supersedes an older one).
    fn request(&mut self, app: &mut TopoApp) {
        let Some(d) = &app.data else { return };
        let fresh = self.sent_for.as_ref().is_none_or(|g| !Arc::ptr_eq(g, &d.field));
        if self.queued.is_empty() || !fresh || app.jobs.contains_key(&topoview_compute::jobs::LOAD) {
            return;
        }
        self.sent_for = Some(d.field.clone());
        let requests: Vec<LayerRequest> = self.queued.iter().map(|q| q.request.clone()).collect();
        let what = format!("Placing layer {}", self.loading().join(", "));
        let job = PlaceLayers { grid: d.field.clone(), layers: requests };
        self.sent_id = Some(app.submit(Owner::Unit(self.name()), job, Some(what)));
    }

    /// Takes placed layers, if they were placed on the grid of the image on screen.
    fn accept(&mut self, app: &mut TopoApp, _id: JobId, outcome: Outcome) -> Result<(), Outcome> {
        let placed = outcome.take::<PlacedLayers>()?;
        let Some(d) = &app.data else { return Ok(()) };
        if !same_grid(&placed.grid, &d.field) {
            return Ok(()); // `request` sends them again for this image
        }
        let mut errors = Vec::new();
        for r in placed.layers {
            let id = match &r {
                Ok(l) => l.id,
                Err(e) => e.id,
            };
            let Some(q) = self.queued.iter().position(|q| q.request.id == id) else { continue };
            let style = self.queued.remove(q).style;
            match r {
                Ok(p) => {
                    let style = style.unwrap_or_else(|| LayerStyle::initial(&p.summary, p.labels));
                    let layer = Layer {
                        id,
                        path: p.path,
                        source: p.source,
                        field: p.field,
                        summary: p.summary,
                        labels: p.labels,
                        style,
                    };
                    self.list.push(layer);
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        if !errors.is_empty() {
            app.error = Some(errors.join("; "));
        }
        Ok(())
    }

    fn stopped(&mut self, app: &mut TopoApp, id: JobId, why: &Stop) {
        if let Some(d) = self.dropped(id) {
            match why {
                Stop::Cancelled => app.message = Some(d),
                Stop::Failed(m) => app.error = Some(format!("{m} ({d})")),
            }
        }
    }

    fn panel(&mut self, app: &mut TopoApp, ui: &mut egui::Ui) {
        panel(self, app, ui);
    }

    /// Draws the visible layers' planes over the field, the last on top; forgets the images
    /// of layers gone.
    fn draw_slice(&mut self, _app: &mut TopoApp, canvas: &mut SliceCanvas, depth: Depth) {
        if depth != Depth::Volumes {
            return;
        }
        self.textures.retain(|id, _| self.list.iter().any(|l| l.id == *id));
        let (axes, slice) = ((canvas.u, canvas.v, canvas.w), canvas.slice);
        for l in self.list.iter().filter(|l| l.style.visible) {
            let key = (l.field.clone(), canvas.w, slice, l.style);
            let same =
                |a: &LayerKey, b: &LayerKey| Arc::ptr_eq(&a.0, &b.0) && (a.1, a.2, a.3) == (b.1, b.2, b.3);
            let textures = self.textures.entry(l.id).or_default();
            textures.draw(canvas, key, same, || l.slice_image(axes, slice), 0.0);
        }
    }

    fn clear_overlays(&mut self, _app: &mut TopoApp) {
        for l in &mut self.list {
            l.style.visible = false;
        }
    }
}

/// Treats a layer as labels (nearest-neighbour, categorical colours) or intensities
/// (trilinear, a colormap): placed again from the field held.
fn set_labels(layers: &mut Layers, index: usize, labels: bool) {
    if index < layers.list.len() {
        layers.requeue(index, labels);
    }
}

/// Makes layer `index` the image (the field as read, at its own resolution: nothing is read
/// again, so a file moved since cannot lose it; the ECC and the other analyses now on it) and
/// the image a layer over it.
fn analyse(layers: &mut Layers, app: &mut TopoApp, index: usize) {
    let Some(d) = &app.data else { return };
    if index >= layers.list.len() {
        return;
    }
    let layer = layers.list.remove(index);
    let path = d.path.clone().unwrap_or_else(|| PathBuf::from(&d.source));
    let image = LayerSource::Held(d.field.clone());
    // The image goes over the field now analysed: as context, in gray and faint, so that
    // what the user chose to analyse stays in view (labels keep their colours, faint too).
    let colormap = if d.labels { Colormap::Labels } else { Colormap::Gray };
    let style = LayerStyle { visible: true, colormap, window: d.window, opacity: 0.35, threshold: 0.0 };
    layers.queue(path, image, Some(d.labels), Some(style));
    let loaded = topoview_compute::Loaded {
        source: layer.path.display().to_string(),
        path: Some(layer.path.clone()),
        origin: topoview_compute::jobs::Origin::File { path: layer.path, opts: OpenOptions::default() },
        summary: FieldSummary::of(&layer.source),
        field: layer.source,
    };
    // Shown at the next frame, once this unit is back among the others.
    app.handed_over = Some(loaded);
}

/// Draws the layer list: the image (which the ECC analyses) and each layer with its controls.
fn panel(layers: &mut Layers, app: &mut TopoApp, ui: &mut egui::Ui) {
    let Some(d) = &app.data else { return };
    let image = d.path.as_deref().map_or_else(|| d.source.clone(), file_name);
    let empty = layers.list.is_empty() && layers.queued.is_empty();
    ui.horizontal_wrapped(|ui| {
        ui.strong("Layers");
        if empty {
            ui.weak("none over the image");
        }
        if ui
            .small_button("Add layer…")
            .on_hover_text("A volume over the image, resampled to its grid")
            .clicked()
        {
            // Asked once this unit is back among the others: the desktop's dialog may answer at
            // once, and the answer goes to the layers.
            app.deferred_action = Some(crate::app::file_dialog::Action::AddLayer);
        }
    });
    if empty {
        return;
    }
    ui.label(format!("Image: {image} (the ECC and the analyses are of this one)"));
    for name in layers.loading() {
        ui.label(format!("{name}: being read and resampled…"));
    }
    let mut remove = None;
    let mut labels_to = None;
    let mut analyse_it = None;
    let count = layers.list.len();
    for (i, l) in layers.list.iter_mut().enumerate().rev() {
        let name = l.name();
        ui.push_id(l.id, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.checkbox(&mut l.style.visible, &name).on_hover_text(l.path.display().to_string());
                let top = if i + 1 == count && count > 1 { " (top)" } else { "" };
                ui.weak(format!("layer{top}"));
                if ui.small_button("Remove").clicked() {
                    remove = Some(i);
                }
            });
            ui.horizontal_wrapped(|ui| {
                ui.add(egui::Slider::new(&mut l.style.opacity, 0.0..=1.0).text("opacity"));
                let mut as_labels = l.labels;
                if l.integer()
                    && ui
                        .checkbox(&mut as_labels, "Labels")
                        .on_hover_text("Categorical colours, nearest-neighbour resampling and a label readout")
                        .changed()
                {
                    labels_to = Some((i, as_labels));
                }
                if ui.small_button("Analyse").on_hover_text("Make this the image: the ECC and the analyses move to it, and the image becomes a faint gray layer over it").clicked() {
                    analyse_it = Some(i);
                }
            });
            if !l.labels {
                intensity_controls(ui, l);
            }
        });
    }
    if let Some(i) = remove {
        layers.list.remove(i);
    }
    if let Some((i, labels)) = labels_to {
        set_labels(layers, i, labels);
    }
    if let Some(i) = analyse_it {
        analyse(layers, app, i);
    }
}

/// Colormap, window and threshold of an intensity layer.
fn intensity_controls(ui: &mut egui::Ui, l: &mut Layer) {
    let s = &mut l.style;
    let speed = l.summary.range.map_or(1.0, |(lo, hi)| (hi - lo) / 500.0);
    ui.horizontal_wrapped(|ui| {
        egui::ComboBox::from_id_salt("colormap").selected_text(s.colormap.name()).show_ui(ui, |ui| {
            for c in Colormap::ALL.into_iter().filter(|c| *c != Colormap::Labels) {
                ui.selectable_value(&mut s.colormap, c, c.name());
            }
        });
        ui.add(egui::DragValue::new(&mut s.window.0).speed(speed).prefix("min "));
        ui.add(egui::DragValue::new(&mut s.window.1).speed(speed).prefix("max "));
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("hide |value| ≤");
        ui.add(egui::DragValue::new(&mut s.threshold).speed(speed).range(0.0..=f64::MAX));
        if let Some((lo, hi)) = l.summary.range {
            ui.weak(format!("values {} to {}", short(lo), short(hi)));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use topoview_core::field::Samples;

    fn layer(values: Vec<f32>, labels: bool) -> Layer {
        let f = Arc::new(ScalarField::new(&[values.len()], Samples::F32(values)).unwrap());
        let summary = FieldSummary::of(&f);
        let style = LayerStyle::initial(&summary, labels);
        Layer { id: 0, path: "l.nii".into(), source: f.clone(), field: f, summary, labels, style }
    }

    #[test]
    fn intensities_within_the_threshold_zero_labels_and_outside_are_transparent() {
        let mut l = layer(vec![-3.0, -1.0, 0.0, 2.0, 3.0], false);
        assert_eq!(l.style.colormap, Colormap::CoolWarm);
        assert!(l.style.window.0 == -l.style.window.1 && l.style.window.1 > 0.0);
        l.style.threshold = 1.5;
        let alpha = |l: &Layer, v: f64| l.colour(v).a();
        assert_eq!([-3.0, -1.0, 0.0, 1.5, 2.0, f64::NAN].map(|v| alpha(&l, v)), [204, 0, 0, 0, 204, 0]);
        // Both signs at the window's ends get the diverging map's two ends.
        l.style.opacity = 1.0;
        let (lo, hi) = l.style.window;
        let rgb = |c: Color32| [c.r(), c.g(), c.b()];
        assert_eq!(rgb(l.colour(lo)), Colormap::CoolWarm.rgb(0.0));
        assert_eq!(rgb(l.colour(hi)), Colormap::CoolWarm.rgb(1.0));
        let mut ids = layer(vec![0.0, 1.0, 2.0, 3.0], true);
        ids.style.opacity = 1.0;
        assert_eq!(ids.colour(0.0), Color32::TRANSPARENT);
        assert_eq!(rgb(ids.colour(2.0)), label_colour(2));
    }

    #[test]
    fn a_slice_image_puts_the_top_row_at_the_last_v() {
        // 2 x 3 x 1: value = x + 2y; the axial image has y = 2 on its first row.
        let f = ScalarField::new(&[2, 3, 1], Samples::F32(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])).unwrap();
        let mut l = layer(vec![1.0], false);
        l.field = Arc::new(f);
        l.style = LayerStyle {
            visible: true,
            colormap: Colormap::Gray,
            window: (0.0, 6.0),
            opacity: 1.0,
            threshold: 0.0,
        };
        let img = l.slice_image((0, 1, 2), 0);
        assert_eq!(img.size, [2, 3]);
        let grey: Vec<u8> = img.pixels.iter().map(|c| c.r()).collect();
        let want: Vec<u8> =
            [5.0, 6.0, 3.0, 4.0, 1.0, 2.0].iter().map(|v| Colormap::Gray.rgb(v / 6.0)[0]).collect();
        assert_eq!(grey, want);
    }
}
