//! Slice views: one or three orthogonal planes through the volume with linked crosshairs, zoom
//! and pan, drawn by [`crate::render::slice`].
//!
//! Conventions: a volume with an affine is shown in the world's RAS+ axes, each view on the
//! voxel axes closest to them ([`DisplayAxes`]; nothing is resampled), with orientation
//! letters at its edges: neurological (the subject's right on the screen's right) or, as a
//! setting, radiological. A view shows its plane axes left-to-right and bottom-to-top; a field
//! without an affine is shown as stored. Voxel coordinates under the cursor are the file's own,
//! and physical aspect comes from the voxel spacing.

use super::msc_labels;
use super::msc_overlay::{self, SliceOverlay};
use crate::render::slice::{SliceCallback, SliceParams};
use eframe::egui_wgpu;
use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use topoview_core::field::ScalarField;
use topoview_core::field::orientation::{NEGATIVE, Orientation, POSITIVE};

/// View names by normal axis (x, y, z).
pub const VIEW_NAMES: [&str; 3] = ["Sagittal", "Coronal", "Axial"];
const AXIS_LETTERS: [&str; 3] = ["x", "y", "z"];
const HEADER: f32 = 22.0;

/// The in-plane axes (u, v) of the view whose normal is `w`.
pub fn plane_axes(w: usize) -> (usize, usize) {
    match w {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    }
}

/// How the slice views lay a field's voxel axes on the screen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DisplayAxes {
    /// Per display axis (the world's R, A, S; voxel x, y, z for a field without an affine),
    /// the voxel axis shown along it and whether its index runs the other way.
    pub orientation: Orientation,
    /// Whether the field has an affine: view names and letters name world directions.
    pub world: bool,
    /// The subject's right on the screen's left in the axial and coronal views.
    pub radiological: bool,
}

/// One view's axes: the voxel axes along the screen's right (u) and up (v) and its normal (w),
/// whether u and v run against the screen, and the letters of its left, right, top and bottom
/// edges (with an affine).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneAxes {
    pub u: usize,
    pub v: usize,
    pub w: usize,
    pub flip: [bool; 2],
    /// Whether stepping the slice forward (towards R, A or S) lowers the voxel index.
    pub normal_flipped: bool,
    pub letters: Option<[char; 4]>,
}

impl DisplayAxes {
    pub fn of(field: &ScalarField, radiological: bool) -> DisplayAxes {
        match field.affine.filter(|_| field.ndim() == 3) {
            Some(a) => DisplayAxes { orientation: Orientation::of(&a), world: true, radiological },
            None => DisplayAxes { orientation: Orientation::IDENTITY, world: false, radiological: false },
        }
    }

    /// The axes of the view whose display normal is `n` (0 sagittal, 1 coronal, 2 axial).
    pub fn plane(&self, n: usize) -> PlaneAxes {
        let (du, dv) = plane_axes(n);
        let o = &self.orientation;
        // Radiological mirrors left and right wherever they run across the screen.
        let mirror = self.radiological && du == 0;
        let right = if mirror { NEGATIVE[du] } else { POSITIVE[du] };
        let left = if mirror { POSITIVE[du] } else { NEGATIVE[du] };
        PlaneAxes {
            u: o.voxel_axis[du],
            v: o.voxel_axis[dv],
            w: o.voxel_axis[n],
            flip: [o.flipped[du] != mirror, o.flipped[dv]],
            normal_flipped: o.flipped[n],
            letters: self.world.then_some([left, right, POSITIVE[dv], NEGATIVE[dv]]),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nav {
    pub zoom: f32,
    /// Offset of the view centre from the plane centre, in voxels.
    pub pan: [f32; 2],
}

impl Default for Nav {
    fn default() -> Self {
        Nav { zoom: 1.0, pan: [0.0; 2] }
    }
}

/// The voxel of a field of `dims` nearest `position` (voxel centres at integers): where the
/// crosshair goes to show a critical point.
pub fn voxel_at(position: [f64; 3], dims: [usize; 3]) -> [usize; 3] {
    std::array::from_fn(|a| (position[a].round().max(0.0) as usize).min(dims[a] - 1))
}

/// What is under the mouse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hover {
    pub voxel: [usize; 3],
    pub value: f64,
}

#[derive(Clone, Debug, Default)]
pub struct ViewState {
    /// The crosshair's voxel; each view shows the plane through it.
    pub cursor: [usize; 3],
    pub nav: [Nav; 3],
    pub hover: Option<Hover>,
    /// Critical points picked (a click on one, or a diagram point's pair), with the complex
    /// they belong to (by address).
    pub picked: Option<(usize, Vec<usize>)>,
    /// Each view's label image and what it shows.
    labels: LabelTextures,
    /// Each view's image of the threshold set's parts, and which parts, plane and slice.
    parts: PartTextures,
    /// Each layer's image per view slot, by layer id.
    layers: LayerTextures,
    /// How many cracks the "edges between pixels" layer drew in the last frame.
    pub cracks_drawn: usize,
    /// A display window set by right-dragging on a view this frame, for the app to apply.
    pub window_dragged: Option<(f64, f64)>,
}

/// What a view's label image shows: the labels (held, so their address cannot be reused while
/// cached), its plane and slice.
type LabelKey = (std::sync::Arc<msc_labels::LabelMap>, usize, usize);

/// Per view slot, the texture of its label image (egui's handle frees it when dropped).
#[derive(Clone, Default)]
struct LabelTextures([Option<(LabelKey, egui::TextureHandle)>; 3]);

/// Per view slot, the texture of the parts of the threshold set over it.
type PartKey = (std::sync::Arc<topoview_core::topo::betti::parts::Parts>, usize, usize, [u8; 3]);
#[derive(Clone, Default)]
struct PartTextures([Option<(PartKey, egui::TextureHandle)>; 3]);

/// What a layer's image shows: its samples (held), plane, slice and style.
type LayerKey = (std::sync::Arc<ScalarField>, usize, usize, super::layers::LayerStyle);
#[derive(Clone, Default)]
struct LayerTextures(std::collections::HashMap<(u64, usize), (LayerKey, egui::TextureHandle)>);

impl std::fmt::Debug for LayerTextures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LayerTextures")
    }
}

impl std::fmt::Debug for PartTextures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PartTextures")
    }
}

impl std::fmt::Debug for LabelTextures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LabelTextures")
    }
}

impl ViewState {
    /// Centres the cursor in a new field's volume and resets zoom and pan.
    pub fn reset(&mut self, dims: [usize; 3]) {
        self.cursor = dims.map(|n| n / 2);
        self.nav = [Nav::default(); 3];
        self.hover = None;
        self.picked = None;
    }
}

/// What every view draws with, this frame.
pub struct Look<'a> {
    pub window: (f64, f64),
    /// The displayed field's value range (right-dragging moves the window through it).
    pub range: Option<(f64, f64)>,
    pub colormap: u32,
    pub mask_mode: u32,
    pub threshold_bits: u32,
    pub mask_color: [f32; 4],
    /// Radiological display (the subject's right on the screen's left).
    pub radiological: bool,
    /// The Morse-Smale complex over the slices, when it is computed for the field on screen.
    pub msc: Option<SliceOverlay<'a>>,
    /// Edges between pixels over the axial slice (or the 2D image) they were computed for.
    pub cracks: Option<super::crack_layer::Overlay>,
    /// The components and voids of the threshold set, coloured.
    pub parts: Option<std::sync::Arc<topoview_core::topo::betti::parts::Parts>>,
    /// The tunnels alive at the threshold, marked where they are born.
    pub tunnels: Vec<topoview_core::topo::betti::tunnels::Tunnel>,
    /// Volumes over the field, on its grid, the last on top.
    pub layers: &'a [super::layers::Layer],
}

/// Screen <-> plane mapping of one view.
struct Frame {
    rect: Rect,
    center: [f32; 2],
    /// Points per voxel along u and v.
    ppv: [f32; 2],
    /// +1 where the voxel index grows to the right (u) or up (v), -1 where it runs the other way.
    sign: [f32; 2],
}

impl Frame {
    fn new(rect: Rect, n: [usize; 2], sp: [f64; 2], nav: &Nav, flip: [bool; 2]) -> Frame {
        let phys = [n[0] as f64 * sp[0], n[1] as f64 * sp[1]];
        let fit = (rect.width() as f64 / phys[0]).min(rect.height() as f64 / phys[1]);
        let scale = fit * nav.zoom as f64;
        Frame {
            rect,
            center: [n[0] as f32 / 2.0 + nav.pan[0], n[1] as f32 / 2.0 + nav.pan[1]],
            ppv: [(scale * sp[0]) as f32, (scale * sp[1]) as f32],
            sign: flip.map(|f| if f { -1.0 } else { 1.0 }),
        }
    }

    fn to_plane(&self, p: Pos2) -> [f32; 2] {
        let c = self.rect.center();
        [
            self.center[0] + self.sign[0] * (p.x - c.x) / self.ppv[0],
            self.center[1] - self.sign[1] * (p.y - c.y) / self.ppv[1],
        ]
    }

    fn to_screen(&self, u: f32, v: f32) -> Pos2 {
        let c = self.rect.center();
        Pos2::new(
            c.x + self.sign[0] * (u - self.center[0]) * self.ppv[0],
            c.y - self.sign[1] * (v - self.center[1]) * self.ppv[1],
        )
    }

    /// Pans by a screen drag of `d`: the image follows the pointer.
    fn pan(&self, nav: &mut Nav, d: Vec2) {
        nav.pan[0] -= self.sign[0] * d.x / self.ppv[0];
        nav.pan[1] += self.sign[1] * d.y / self.ppv[1];
    }

    /// Where an image of `n` texels per plane axis, row 0 at the top of v and offset `off`
    /// voxels, lies on the screen, and the texture coordinates that put it the right way
    /// round on a mirrored axis.
    fn image_rect(&self, n: [f32; 2], off: f32) -> (Rect, Rect) {
        let rect = Rect::from_two_pos(self.to_screen(off, off + n[1]), self.to_screen(off + n[0], off));
        let [fu, fv] = self.sign.map(|s| if s < 0.0 { 1.0 } else { 0.0 });
        (rect, Rect::from_min_max(Pos2::new(fu, fv), Pos2::new(1.0 - fu, 1.0 - fv)))
    }
}

impl ViewState {
    /// Forgets what the views reported last frame (the hover, a window dragged), before they
    /// draw again.
    pub fn new_frame(&mut self) {
        self.hover = None;
        self.window_dragged = None;
    }
}

/// Draws the view whose display normal is `n` (0 sagittal, 1 coronal, 2 axial) into `rect`;
/// `slot` (0 to 2) names the textures it keeps.
pub fn view(
    ui: &mut egui::Ui,
    rect: Rect,
    n: usize,
    field: &ScalarField,
    state: &mut ViewState,
    look: &Look,
    slot: usize,
) {
    let dims = field.dims();
    let sp = field.spacing();
    let axes = DisplayAxes::of(field, look.radiological).plane(n);
    let PlaneAxes { u, v, w, .. } = axes;
    let header = Rect::from_min_size(rect.min, Vec2::new(rect.width(), HEADER));
    let image = Rect::from_min_max(Pos2::new(rect.min.x, rect.min.y + HEADER), rect.max);
    if field.ndim() == 3 {
        // The file's own index, running towards R, A or S left to right; named by its axis
        // letter (the view's tab names the view), as wide as the view leaves room for.
        let last = dims[w] - 1;
        let range = if axes.normal_flipped { last..=0 } else { 0..=last };
        let slider = egui::Slider::new(&mut state.cursor[w], range).text(AXIS_LETTERS[w]);
        let strip = header.shrink2(Vec2::new(4.0, 1.0));
        ui.scope_builder(egui::UiBuilder::new().max_rect(strip), |ui| {
            ui.spacing_mut().slider_width = (strip.width() - 90.0).max(30.0);
            ui.add(slider).on_hover_text(format!("{} slice", VIEW_NAMES[n]));
        });
    } else {
        ui.painter().text(
            header.left_center() + Vec2::new(4.0, 0.0),
            egui::Align2::LEFT_CENTER,
            format!("{} x {} image", dims[0], dims[1]),
            egui::FontId::proportional(13.0),
            ui.visuals().text_color(),
        );
    }
    if image.height() < 8.0 || image.width() < 8.0 {
        return;
    }
    let resp = ui.allocate_rect(image, Sense::click_and_drag());
    let nav = &mut state.nav[w];
    let mut fr = Frame::new(image, [dims[u], dims[v]], [sp[u], sp[v]], nav, axes.flip);

    // Navigation: middle drag pans, ctrl+wheel zooms, double-click resets; right drag sets
    // window and level as in ITK-SNAP (across: width, up and down: level).
    if resp.dragged_by(egui::PointerButton::Middle) {
        fr.pan(nav, resp.drag_delta());
    }
    if resp.dragged_by(egui::PointerButton::Secondary)
        && let Some((lo, hi)) = look.range.filter(|r| r.1 > r.0)
    {
        state.window_dragged = Some(window_level(
            state.window_dragged.unwrap_or(look.window),
            hi - lo,
            resp.drag_delta(),
            image.size(),
        ));
    }
    if resp.double_clicked() {
        *nav = Nav::default();
    }
    if resp.hovered() {
        let (zoom, scroll, ctrl, keys) = ui.input(|i| {
            let up = i.key_pressed(egui::Key::ArrowUp) || i.key_pressed(egui::Key::PageUp);
            let down = i.key_pressed(egui::Key::ArrowDown) || i.key_pressed(egui::Key::PageDown);
            // Whole wheel events, not smoothed deltas: one notch is one slice.
            let wheel: f32 = i
                .events
                .iter()
                .filter_map(|e| match e {
                    egui::Event::MouseWheel { delta, .. } => Some(delta.y),
                    _ => None,
                })
                .sum();
            (i.zoom_delta(), wheel, i.modifiers.command || i.modifiers.ctrl, up as i32 - down as i32)
        });
        if zoom != 1.0 {
            // About the pointer: the voxel under it stays under it.
            let pointer = resp.hover_pos();
            let before = pointer.map(|p| fr.to_plane(p));
            nav.zoom = (nav.zoom * zoom).clamp(0.25, 64.0);
            if let (Some(p), Some(b)) = (pointer, before) {
                let after = Frame::new(image, [dims[u], dims[v]], [sp[u], sp[v]], nav, axes.flip).to_plane(p);
                nav.pan[0] += b[0] - after[0];
                nav.pan[1] += b[1] - after[1];
            }
        }
        let mut step = if ctrl || scroll == 0.0 { keys } else { scroll.signum() as i32 + keys };
        if axes.normal_flipped {
            step = -step;
        }
        if field.ndim() == 3 && step != 0 {
            state.cursor[w] = (state.cursor[w] as i64 + step as i64).clamp(0, dims[w] as i64 - 1) as usize;
        }
    }
    fr = Frame::new(image, [dims[u], dims[v]], [sp[u], sp[v]], nav, axes.flip);

    // A click on a critical point picks it and puts the crosshair on it; else a click or drag
    // moves the crosshair, to where the button was released when a slow frame held it all.
    let gesture = super::gesture::follow(ui, resp.id.with("crosshair"), image);
    let picked =
        resp.clicked().then(|| resp.interact_pointer_pos()).flatten().zip(look.msc).and_then(|(p, o)| {
            let to_screen = |q: [f64; 3]| fr.to_screen(q[u] as f32 + 0.5, q[v] as f32 + 0.5);
            msc_overlay::point_near(o, w, state.cursor[w], p, to_screen).map(|i| (o, i))
        });
    if let Some((o, i)) = picked {
        state.cursor = voxel_at(o.scene.analysis.complex.critical[i].position, dims);
        state.picked = Some((o.scene as *const _ as usize, vec![i]));
    } else if let Some(g) = gesture {
        let [pu, pv] = fr.to_plane(g.pos);
        state.cursor[u] = (pu.max(0.0) as usize).min(dims[u] - 1);
        state.cursor[v] = (pv.max(0.0) as usize).min(dims[v] - 1);
    }
    if let Some(p) = resp.hover_pos() {
        let [pu, pv] = fr.to_plane(p);
        if pu >= 0.0 && pv >= 0.0 && (pu as usize) < dims[u] && (pv as usize) < dims[v] {
            let mut voxel = state.cursor;
            voxel[u] = pu as usize;
            voxel[v] = pv as usize;
            let value = field.samples().get_f64(field.index(voxel[0], voxel[1], voxel[2]));
            state.hover = Some(Hover { voxel, value });
        }
    }

    let params = SliceParams {
        center: fr.center,
        half_extent: [
            fr.sign[0] * image.width() / 2.0 / fr.ppv[0],
            fr.sign[1] * image.height() / 2.0 / fr.ppv[1],
        ],
        axes: [u as u32, v as u32, w as u32, state.cursor[w] as u32],
        dims: [0; 4],
        window: [look.window.0 as f32, look.window.1 as f32],
        colormap: look.colormap,
        mask_mode: look.mask_mode,
        threshold: [look.threshold_bits, 0, 0, 0],
        mask_color: look.mask_color,
        background: [0.0, 0.0, 0.0, 1.0],
    };
    let painter = ui.painter_at(image);
    painter.add(egui_wgpu::Callback::new_paint_callback(image, SliceCallback { slot, params }));
    draw_layers(ui, &painter, &fr, look.layers, &mut state.layers, (u, v, w), state.cursor[w], slot);
    if let Some(labels) = look.msc.and_then(|o| o.labels) {
        let cached = &mut state.labels.0[slot];
        let same = |k: &LabelKey| std::sync::Arc::ptr_eq(&k.0, labels) && (k.1, k.2) == (w, state.cursor[w]);
        if cached.as_ref().is_none_or(|c| !same(&c.0)) {
            let key = (labels.clone(), w, state.cursor[w]);
            let img = msc_labels::label_image(labels, dims, (u, v, w), state.cursor[w]);
            let tex = ui.ctx().load_texture(format!("labels {slot}"), img, egui::TextureOptions::NEAREST);
            *cached = Some((key, tex));
        }
        if let Some((_, tex)) = cached {
            let off = if labels.on_cells { 0.5 } else { 0.0 };
            let (rect, uv) = fr.image_rect(tex.size().map(|n| n as f32), off);
            painter.image(tex.id(), rect, uv, Color32::WHITE);
        }
    }

    if let Some(parts) = &look.parts {
        let cached = &mut state.parts.0[slot];
        let mask = look.mask_color.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8);
        let mask = [mask[0], mask[1], mask[2]];
        let same = |k: &PartKey| {
            std::sync::Arc::ptr_eq(&k.0, parts) && (k.1, k.2, k.3) == (w, state.cursor[w], mask)
        };
        if cached.as_ref().is_none_or(|c| !same(&c.0)) {
            let img = super::explain::parts_image(parts, (u, v, w), state.cursor[w], mask);
            let tex = ui.ctx().load_texture(format!("parts {slot}"), img, egui::TextureOptions::NEAREST);
            *cached = Some(((parts.clone(), w, state.cursor[w], mask), tex));
        }
        if let Some((_, tex)) = cached {
            let (rect, uv) = fr.image_rect(tex.size().map(|n| n as f32), 0.0);
            painter.image(tex.id(), rect, uv, Color32::WHITE);
        }
    }

    if !look.tunnels.is_empty() {
        let to_screen = |p: [f64; 3]| fr.to_screen(p[u] as f32 + 0.5, p[v] as f32 + 0.5);
        super::explain::draw_tunnels(&painter, &look.tunnels, w, state.cursor[w], to_screen);
    }

    let mut cracks_complete = true;
    if let Some(o) =
        look.cracks.as_ref().filter(|o| w == 2 && (field.ndim() < 3 || o.slice_z == state.cursor[2]))
    {
        // The layer is in voxel x and y; the view may show y across (u = 1).
        let [a, b] = [fr.to_plane(image.left_top()), fr.to_plane(image.right_bottom())];
        let (xs, ys) = if u == 0 { (0, 1) } else { (1, 0) };
        let visible = [a[xs].min(b[xs]), a[xs].max(b[xs]), a[ys].min(b[ys]), a[ys].max(b[ys])];
        let to_screen = |x: f32, y: f32| if u == 0 { fr.to_screen(x, y) } else { fr.to_screen(y, x) };
        let (drawn, all) = super::crack_layer::draw(&painter, o, to_screen, visible);
        state.cracks_drawn = drawn;
        cracks_complete = all;
    }
    if field.ndim() == 3 {
        let c = fr.to_screen(state.cursor[u] as f32 + 0.5, state.cursor[v] as f32 + 0.5);
        let stroke = Stroke::new(1.0, Color32::from_rgba_unmultiplied(80, 200, 255, 170));
        painter.line_segment([Pos2::new(image.min.x, c.y), Pos2::new(image.max.x, c.y)], stroke);
        painter.line_segment([Pos2::new(c.x, image.min.y), Pos2::new(c.x, image.max.y)], stroke);
    }
    let mut complete = true;
    if let Some(o) = look.msc {
        let to_screen = |p: [f64; 3]| fr.to_screen(p[u] as f32 + 0.5, p[v] as f32 + 0.5);
        let picked = match &state.picked {
            Some((scene, ids)) if *scene == o.scene as *const _ as usize => ids.as_slice(),
            _ => &[],
        };
        complete = msc_overlay::draw(&painter, o, w, state.cursor[w], picked, to_screen);
    }
    let mut label =
        if field.ndim() == 3 { format!("{} = {}", AXIS_LETTERS[w], state.cursor[w]) } else { String::new() };
    if !complete {
        label += "  (complex: too many arcs here, raise the persistence)";
    }
    if !cracks_complete {
        label += "  (edges: too many here, zoom in or raise the strength)";
    }
    if let Some(letters) = axes.letters {
        orientation_letters(&painter, image, letters);
    }
    // On a dark band, so it reads over any image (a pale map once hid it).
    // Wrapped to the view's width: a narrow view must not spill its caption over the next.
    let galley = painter.layout(
        format!("{label}  zoom {:.2}x", nav.zoom),
        egui::FontId::monospace(11.0),
        Color32::from_gray(220),
        (image.width() - 16.0).max(40.0),
    );
    let at = image.left_bottom() + Vec2::new(6.0, -6.0 - galley.size().y);
    painter.rect_filled(
        Rect::from_min_size(at, galley.size()).expand(2.0),
        2.0,
        Color32::from_black_alpha(150),
    );
    painter.galley(at, galley, Color32::from_gray(220));
}

/// Draws the visible layers' slices over the field, the last on top (each slice's image is
/// kept until its layer, plane, slice or style changes); forgets the images of layers gone.
#[allow(clippy::too_many_arguments)]
fn draw_layers(
    ui: &egui::Ui,
    painter: &egui::Painter,
    fr: &Frame,
    layers: &[super::layers::Layer],
    cache: &mut LayerTextures,
    axes: (usize, usize, usize),
    slice: usize,
    slot: usize,
) {
    cache.0.retain(|(id, s), _| *s != slot || layers.iter().any(|l| l.id == *id));
    for l in layers.iter().filter(|l| l.style.visible) {
        let key = (l.field.clone(), axes.2, slice, l.style);
        let cached = cache.0.get(&(l.id, slot));
        let fresh = cached.is_some_and(|(k, _)| {
            std::sync::Arc::ptr_eq(&k.0, &l.field) && (k.1, k.2, k.3) == (key.1, key.2, key.3)
        });
        if !fresh {
            let img = l.slice_image(axes, slice);
            let tex =
                ui.ctx().load_texture(format!("layer {} {slot}", l.id), img, egui::TextureOptions::NEAREST);
            cache.0.insert((l.id, slot), (key, tex));
        }
        if let Some((_, tex)) = cache.0.get(&(l.id, slot)) {
            let (rect, uv) = fr.image_rect(tex.size().map(|n| n as f32), 0.0);
            painter.image(tex.id(), rect, uv, Color32::WHITE);
        }
    }
}

/// The window after a right-drag of `d` points over a view of `size`: dragging across the
/// whole view changes the width by the value range `span`, dragging down its whole height
/// lowers the level (the window's centre) by `span`. The width stays positive.
pub fn window_level(window: (f64, f64), span: f64, d: Vec2, size: Vec2) -> (f64, f64) {
    let width = ((window.1 - window.0) + d.x as f64 / size.x.max(1.0) as f64 * span).max(span * 1e-3);
    let level = (window.0 + window.1) / 2.0 - d.y as f64 / size.y.max(1.0) as f64 * span;
    (level - width / 2.0, level + width / 2.0)
}

/// The world directions at a view's left, right, top and bottom edges, as ITK-SNAP and Slicer
/// write them, on a dark halo so they read on any image.
fn orientation_letters(painter: &egui::Painter, image: Rect, [left, right, top, bottom]: [char; 4]) {
    let font = egui::FontId::proportional(16.0);
    let m = 12.0;
    let at = [
        (Pos2::new(image.min.x + m, image.center().y), left),
        (Pos2::new(image.max.x - m, image.center().y), right),
        (Pos2::new(image.center().x, image.min.y + m), top),
        (Pos2::new(image.center().x, image.max.y - m - 14.0), bottom),
    ];
    for (p, c) in at {
        let text = c.to_string();
        painter.text(
            p + Vec2::new(1.0, 1.0),
            egui::Align2::CENTER_CENTER,
            &text,
            font.clone(),
            Color32::BLACK,
        );
        painter.text(p, egui::Align2::CENTER_CENTER, &text, font.clone(), Color32::from_rgb(255, 220, 90));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn screen_and_plane_coordinates_invert_each_other_with_physical_aspect() {
        let rect = Rect::from_min_size(Pos2::new(10.0, 20.0), Vec2::new(400.0, 200.0));
        let nav = Nav { zoom: 2.0, pan: [3.0, -1.0] };
        let fr = Frame::new(rect, [100, 50], [1.0, 2.0], &nav, [false, false]);
        // 100 mm by 100 mm fits 200 points tall: 2 points/mm, then zoom 2.
        assert_eq!(fr.ppv, [4.0, 8.0]);
        let p = fr.to_screen(37.5, 12.25);
        let q = fr.to_plane(p);
        assert!((q[0] - 37.5).abs() < 1e-4 && (q[1] - 12.25).abs() < 1e-4);
        // The plane's v axis points up the screen.
        assert!(fr.to_screen(0.0, 10.0).y < fr.to_screen(0.0, 0.0).y);
    }

    #[test]
    fn right_drag_widens_across_and_raises_the_level_upwards() {
        let size = Vec2::new(200.0, 100.0);
        assert_eq!(window_level((10.0, 20.0), 100.0, Vec2::new(20.0, 0.0), size), (5.0, 25.0));
        assert_eq!(window_level((10.0, 20.0), 100.0, Vec2::new(0.0, -10.0), size), (20.0, 30.0));
        let narrow = window_level((10.0, 20.0), 100.0, Vec2::new(-400.0, 0.0), size);
        assert!(narrow.1 > narrow.0 && (narrow.0 + narrow.1) / 2.0 == 15.0);
    }

    #[test]
    fn plane_axes_leave_out_the_normal() {
        for w in 0..3 {
            let (u, v) = plane_axes(w);
            assert!(u != w && v != w && u < v);
        }
    }
}
