//! Slice views: one or three orthogonal planes through the volume with linked crosshairs, zoom
//! and pan, drawn by [`crate::render::slice`].
//!
//! Conventions: a volume with an affine is shown in the world's RAS+ axes, each view on the
//! voxel axes closest to them ([`DisplayAxes`]; nothing is resampled), with orientation
//! letters at its edges: neurological (the subject's right on the screen's right) or, as a
//! setting, radiological. A view shows its plane axes left-to-right and bottom-to-top; a field
//! without an affine is shown as stored. Voxel coordinates under the cursor are the file's own,
//! and physical aspect comes from the voxel spacing.

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
    /// A display window set by right-dragging on a view this frame, for the app to apply.
    pub window_dragged: Option<(f64, f64)>,
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

/// What every view draws the field with, this frame (the analyses draw over it through
/// [`SliceCanvas`]).
pub struct Look {
    pub window: (f64, f64),
    /// The displayed field's value range (right-dragging moves the window through it).
    pub range: Option<(f64, f64)>,
    pub colormap: u32,
    pub mask_mode: u32,
    pub threshold_bits: u32,
    pub mask_color: [f32; 4],
    /// Radiological display (the subject's right on the screen's left).
    pub radiological: bool,
}

/// One slice view as the analyses see it while they draw over it
/// ([`super::analyses::Analysis::draw_slice`]): where its voxels lie on the screen, which
/// plane it shows, and the click it has not used.
pub struct SliceCanvas {
    pub painter: egui::Painter,
    pub ctx: egui::Context,
    frame: Frame,
    /// The in-plane axes and the normal: the view shows axis `u` across, `v` up, at `slice`
    /// along `w`.
    pub u: usize,
    pub v: usize,
    pub w: usize,
    pub slice: usize,
    /// Which of the three views' texture slots it draws with.
    pub slot: usize,
    /// The field's dimensions and number of dimensions.
    pub dims: [usize; 3],
    pub ndim: usize,
    /// The threshold mask's colour (an overlay keeps clear of it).
    pub mask_rgb: [u8; 3],
    /// A click on the view this frame, until a unit takes it ([`SliceCanvas::take_click`]).
    click: Option<Pos2>,
    /// A press, drag or release that moves the crosshair unless a unit took the click.
    gesture: Option<super::gesture::Gesture>,
    /// What the units say in the view's caption.
    notes: Vec<String>,
    /// The orientation letters at its left, right, top and bottom.
    letters: Option<[char; 4]>,
}

impl SliceCanvas {
    /// Where the centre of the voxel at `p` (voxel coordinates) lies on the screen.
    pub fn voxel_to_screen(&self, p: [f64; 3]) -> Pos2 {
        self.frame.to_screen(p[self.u] as f32 + 0.5, p[self.v] as f32 + 0.5)
    }

    /// Where the plane point (`a` along `u`, `b` along `v`, in voxels) lies on the screen.
    pub fn to_screen(&self, a: f32, b: f32) -> Pos2 {
        self.frame.to_screen(a, b)
    }

    /// The plane point under the screen point `p`.
    pub fn to_plane(&self, p: Pos2) -> [f32; 2] {
        self.frame.to_plane(p)
    }

    /// The part of the screen the view's image takes.
    pub fn rect(&self) -> Rect {
        self.frame.rect
    }

    /// Draws `texture`, an image of the plane (one texel per voxel, row 0 at the top of `v`),
    /// offset by `off` voxels (0.5 for an image of cells between voxels).
    pub fn image(&self, texture: &egui::TextureHandle, off: f32) {
        let (rect, uv) = self.frame.image_rect(texture.size().map(|n| n as f32), off);
        self.painter.image(texture.id(), rect, uv, Color32::WHITE);
    }

    /// The click on the view this frame, taken so that it does not also move the crosshair.
    pub fn take_click(&mut self) -> Option<Pos2> {
        self.click.take().inspect(|_| self.gesture = None)
    }

    /// The click on the view this frame, if no unit took it yet.
    pub fn click(&self) -> Option<Pos2> {
        self.click
    }

    /// Adds `note` to the view's caption (say, that not all of an overlay could be drawn).
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }
}

/// Per view slot, an image of the plane shown and what it was made from (`K`); made again when
/// that changes (egui's handle frees a texture dropped).
pub struct SliceTextures<K>([Option<(K, egui::TextureHandle)>; 3]);

impl<K> Default for SliceTextures<K> {
    fn default() -> Self {
        SliceTextures([None, None, None])
    }
}

impl<K> std::fmt::Debug for SliceTextures<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SliceTextures")
    }
}

impl<K> SliceTextures<K> {
    /// Draws on `canvas` the image made for `key` (by `make`, when the slot holds another
    /// key's), offset by `off` voxels; `same` tells whether two keys make the same image.
    pub fn draw(
        &mut self,
        canvas: &SliceCanvas,
        key: K,
        same: impl Fn(&K, &K) -> bool,
        make: impl FnOnce() -> egui::ColorImage,
        off: f32,
    ) {
        let cached = &mut self.0[canvas.slot.min(2)];
        if cached.as_ref().is_none_or(|(k, _)| !same(k, &key)) {
            let name = format!("overlay {}", canvas.slot);
            let texture = canvas.ctx.load_texture(name, make(), egui::TextureOptions::NEAREST);
            *cached = Some((key, texture));
        }
        if let Some((_, texture)) = cached {
            canvas.image(texture, off);
        }
    }
}

/// Screen <-> plane mapping of one view.
#[derive(Clone, Copy)]
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

    fn to_plane(self, p: Pos2) -> [f32; 2] {
        let c = self.rect.center();
        [
            self.center[0] + self.sign[0] * (p.x - c.x) / self.ppv[0],
            self.center[1] - self.sign[1] * (p.y - c.y) / self.ppv[1],
        ]
    }

    fn to_screen(self, u: f32, v: f32) -> Pos2 {
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

/// Draws the view whose display normal is `n` (0 sagittal, 1 coronal, 2 axial) into `rect`,
/// and gives the canvas the analyses draw over before [`finish`] (None: no room for it);
/// `slot` (0 to 2) names the textures it keeps.
pub fn view(
    ui: &mut egui::Ui,
    rect: Rect,
    n: usize,
    field: &ScalarField,
    state: &mut ViewState,
    look: &Look,
    slot: usize,
) -> Option<SliceCanvas> {
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
        return None;
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

    // A click may be taken by an analysis (a critical point picked); else a click or drag
    // moves the crosshair, to where the button was released when a slow frame held it all
    // (in `finish`, once the analyses have seen the click).
    let gesture = super::gesture::follow(ui, resp.id.with("crosshair"), image);
    let click = resp.clicked().then(|| resp.interact_pointer_pos()).flatten();
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
    let mask = look.mask_color.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8);
    Some(SliceCanvas {
        painter,
        ctx: ui.ctx().clone(),
        frame: fr,
        u,
        v,
        w,
        slice: state.cursor[w],
        slot,
        dims,
        ndim: field.ndim(),
        mask_rgb: [mask[0], mask[1], mask[2]],
        click,
        gesture,
        notes: Vec::new(),
        letters: axes.letters,
    })
}

/// Ends a view the analyses have drawn over: moves the crosshair by a click or drag no unit
/// took, draws it, the orientation letters and the caption with the units' notes.
pub fn finish(canvas: SliceCanvas, field: &ScalarField, state: &mut ViewState) {
    let SliceCanvas { painter, frame: fr, u, v, w, dims, gesture, notes, letters, .. } = canvas;
    let image = fr.rect;
    if let Some(g) = gesture {
        let [pu, pv] = fr.to_plane(g.pos);
        state.cursor[u] = (pu.max(0.0) as usize).min(dims[u] - 1);
        state.cursor[v] = (pv.max(0.0) as usize).min(dims[v] - 1);
    }
    if field.ndim() == 3 {
        let c = fr.to_screen(state.cursor[u] as f32 + 0.5, state.cursor[v] as f32 + 0.5);
        let stroke = Stroke::new(1.0, Color32::from_rgba_unmultiplied(80, 200, 255, 170));
        painter.line_segment([Pos2::new(image.min.x, c.y), Pos2::new(image.max.x, c.y)], stroke);
        painter.line_segment([Pos2::new(c.x, image.min.y), Pos2::new(c.x, image.max.y)], stroke);
    }
    let mut label =
        if field.ndim() == 3 { format!("{} = {}", AXIS_LETTERS[w], state.cursor[w]) } else { String::new() };
    for note in notes {
        label += &format!("  ({note})");
    }
    if let Some(letters) = letters {
        orientation_letters(&painter, image, letters);
    }
    // On a dark band, so it reads over any image (a pale map once hid it).
    // Wrapped to the view's width: a narrow view must not spill its caption over the next.
    let galley = painter.layout(
        format!("{label}  zoom {:.2}x", state.nav[w].zoom),
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
