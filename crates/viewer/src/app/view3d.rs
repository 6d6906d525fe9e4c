//! The 3D view: the volume ray-marched by [`crate::render::volume3d`], with its controls in a
//! header strip (mode, camera views, planes, clipping, isovalues) and an orientation marker.
//!
//! Mouse: left drag orbits, right or middle drag pans, the wheel zooms, a double click frames
//! the volume again. While the camera moves the view renders at half resolution or less (what
//! keeps frames at about 25 a second) with coarser steps, and at full quality once it has been
//! still for a moment. A frame that would draw the same image as the last one draws nothing.

use super::settings::View3dSettings;
use crate::render::camera::AxisView;
use crate::render::colormap::Colormap;
use crate::render::overlay3d::Marks;
use crate::render::scene3d::{Geometry, Mode, Scene};
use crate::render::volume::{self, TexelClass};
use crate::render::volume3d::View3dCallback;
use eframe::egui_wgpu;
use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use std::sync::Arc;
use std::time::{Duration, Instant};
use topoview_core::field::ScalarField;

const HEADER: f32 = 22.0;
/// How long after the last camera change the view stays at the moving quality.
const SETTLE: Duration = Duration::from_millis(200);

/// The 3D view's per-session state (what is saved lives in [`View3dSettings`]).
#[derive(Default)]
pub struct View3dState {
    /// The volume the camera was last framed on (by address).
    framed_for: Option<usize>,
    moved_at: Option<Instant>,
    frame: u32,
    /// The transfer-function table, the key it was built for, and its version.
    table: Arc<Vec<[u8; 4]>>,
    table_key: Option<(Vec<u32>, Colormap)>,
    table_version: u64,
    /// Resolution scale while the camera moves, adapted to the frame time (see [`show`]).
    moving_scale: f32,
    last_moving_frame: Option<Instant>,
    /// Isovalue and the second surface's value, per volume.
    pub iso: f64,
    pub iso2: f64,
}

/// What the analyses draw in the 3D view ([`super::analyses::Analysis::draw_volume`]): the
/// renderer draws one set of marks and one colouring of the threshold voxels, the first
/// offered of each.
pub struct VolumeCanvas {
    /// Every how many voxels along each axis the view samples (the voxel colours are per
    /// texel at this stride).
    pub stride: usize,
    /// Whether the view shows threshold voxels, the only mode that draws voxel colours.
    pub colours_shown: bool,
    /// The threshold mask's colour on the slices (colours keep clear of it there, and the
    /// same here).
    pub mask_rgb: [u8; 3],
    /// Points and lines, with their version ([`next_version`]) inside.
    pub marks: Option<Arc<Marks>>,
    /// An RGBA colour per texel of the threshold voxels, and its version.
    pub colours: Option<(u64, Arc<Vec<u8>>)>,
    /// What the analyses say in the view's caption.
    pub notes: Vec<String>,
}

impl VolumeCanvas {
    pub fn new(stride: usize, colours_shown: bool, mask_rgb: [u8; 3]) -> VolumeCanvas {
        VolumeCanvas { stride, colours_shown, mask_rgb, marks: None, colours: None, notes: Vec::new() }
    }
}

/// A version for marks or voxel colours made anew: the renderer uploads them again when it
/// changes (one counter for all, so two analyses' versions never meet).
pub fn next_version() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// What the 3D view draws this frame, besides its own settings.
pub struct Inputs<'a> {
    /// The field shown (the smoothed one, when it is shown).
    pub field: &'a ScalarField,
    /// The dataset's own field: the camera is framed once per dataset, not per smoothing.
    pub dataset: &'a Arc<ScalarField>,
    pub stride: usize,
    pub colormap: Colormap,
    pub window: (f64, f64),
    pub cursor: [usize; 3],
    /// The ECC panel's threshold and filtration.
    pub threshold: f64,
    pub filtration: topoview_core::topo::ecc::Filtration,
    /// What the analyses draw in it.
    pub overlay: VolumeCanvas,
}

impl View3dState {
    /// Frames a new volume (keeping the camera's direction) and picks its isovalues.
    /// Whether the camera has been framed on `dataset` (its camera and isovalues are its own).
    pub fn framed(&self, dataset: &Arc<ScalarField>) -> bool {
        self.framed_for == Some(Arc::as_ptr(dataset) as usize)
    }

    /// Keeps the camera in the settings and these isovalues for `dataset` (a session's), instead
    /// of framing it afresh when it is first drawn.
    pub fn keep(&mut self, dataset: &Arc<ScalarField>, iso: f64, iso2: f64) {
        self.framed_for = Some(Arc::as_ptr(dataset) as usize);
        (self.iso, self.iso2) = (iso, iso2);
    }

    fn follow(
        &mut self,
        s: &mut View3dSettings,
        dataset: &Arc<ScalarField>,
        geo: &Geometry,
        window: (f64, f64),
    ) {
        let key = Arc::as_ptr(dataset) as usize;
        if self.framed_for == Some(key) {
            return;
        }
        self.framed_for = Some(key);
        let (center, radius) = geo.bounds();
        s.camera = s.camera.framing(center, radius);
        self.iso = window.0 + 0.5 * (window.1 - window.0);
        self.iso2 = window.0 + 0.3 * (window.1 - window.0);
    }

    fn table(&mut self, s: &View3dSettings, colormap: Colormap) {
        let key: Vec<u32> =
            s.transfer.points().iter().flat_map(|p| [p.x.to_bits(), p.alpha.to_bits()]).collect();
        if self.table_key.as_ref().is_some_and(|(k, c)| *k == key && *c == colormap) {
            return;
        }
        self.table = Arc::new(s.transfer.table(colormap));
        self.table_key = Some((key, colormap));
        self.table_version += 1;
    }

    fn moving(&self) -> bool {
        self.moved_at.is_some_and(|t| t.elapsed() < SETTLE)
    }
}

pub fn geometry(field: &ScalarField, stride: usize) -> Geometry {
    Geometry { dims: field.dims(), stride, affine: field.affine_or_spacing() }
}

pub fn show(ui: &mut egui::Ui, rect: Rect, s: &mut View3dSettings, state: &mut View3dState, input: &Inputs) {
    let geo = geometry(input.field, input.stride);
    state.follow(s, input.dataset, &geo, input.window);
    state.table(s, input.colormap);
    // The controls on one row, or two in a narrow view (a quarter of a small window).
    let rows = if rect.width() < 330.0 { 2.0 } else { 1.0 };
    let header = Rect::from_min_size(rect.min, Vec2::new(rect.width(), rows * HEADER));
    let image = Rect::from_min_max(Pos2::new(rect.min.x, header.max.y), rect.max);
    let mut changed = controls(ui, header, s, state, input);
    if image.height() < 8.0 || image.width() < 8.0 {
        return;
    }
    let resp = ui.allocate_rect(image, Sense::click_and_drag());
    changed |= steer(ui, &resp, &mut s.camera, image.height(), || geo.bounds());
    if changed {
        state.moved_at = Some(Instant::now());
        state.frame = state.frame.wrapping_add(1);
    }
    let moving = state.moving();
    if moving {
        ui.ctx().request_repaint_after(SETTLE);
    }

    let (_, class) = volume::texel_format(input.field.dtype());
    let mut scene = scene(s, state, input, class, moving);
    let parts = input.overlay.colours.clone().filter(|_| s.mode == Mode::ThresholdVoxels);
    scene.parts = parts.is_some();
    let ppp = ui.ctx().pixels_per_point();
    // The frame budget: while the camera moves, fewer pixels when frames come slower than
    // 25 a second (a software renderer, a huge window), more again when they come fast.
    if moving {
        // Only the time between two frames of one movement counts (the first frame of a drag
        // follows an idle pause).
        let now = Instant::now();
        if let Some(prev) = state.last_moving_frame.filter(|p| now.duration_since(*p) < SETTLE) {
            let dt = now.duration_since(prev).as_secs_f32();
            let s = if state.moving_scale > 0.0 { state.moving_scale } else { 0.5 };
            state.moving_scale = if dt > 0.04 {
                s * 0.8
            } else if dt < 0.02 {
                s * 1.1
            } else {
                s
            }
            .clamp(0.15, 0.5);
        }
        state.last_moving_frame = Some(now);
    }
    let scale = if moving { state.moving_scale.max(0.15) } else { 1.0 };
    let size = [
        ((image.width() * ppp * scale).round() as u32).max(1),
        ((image.height() * ppp * scale).round() as u32).max(1),
    ];
    let painter = ui.painter_at(image);
    match scene.params(&geo, class, image.width() as f64 / image.height() as f64) {
        Some(params) => {
            let cb = View3dCallback {
                params,
                size,
                table_version: state.table_version,
                table: state.table.clone(),
                marks: input.overlay.marks.clone(),
                parts,
            };
            painter.add(egui_wgpu::Callback::new_paint_callback(image, cb));
        }
        None => {
            painter.text(
                image.center(),
                egui::Align2::CENTER_CENTER,
                "The file's affine is singular: no 3D view.",
                egui::FontId::proportional(14.0),
                Color32::LIGHT_RED,
            );
        }
    }
    orientation_marker(&painter, image, s);
    let mut note = s.mode.name().to_string();
    if matches!(s.mode, Mode::ThresholdSurface | Mode::ThresholdVoxels) {
        let t = topoview_core::export::format_threshold(input.threshold, input.field.dtype());
        note += &format!(" at {t}");
    }
    if input.stride > 1 {
        note += &format!(" · every {}th voxel", input.stride);
    }
    if moving {
        note += &format!(" · moving: {:.0}% resolution", 100.0 * scale);
    }
    for n in &input.overlay.notes {
        note += &format!(" · {n}");
    }
    painter.text(
        image.left_bottom() + Vec2::new(6.0, -6.0),
        egui::Align2::LEFT_BOTTOM,
        note,
        egui::FontId::monospace(11.0),
        Color32::from_gray(200),
    );
    resp.on_hover_text("Left drag: rotate. Right drag: pan. Wheel: zoom. Double click: frame the volume.");
}

/// Moves `cam` as the pointer says over the view `resp` (`height` points tall): left drag
/// orbits, right or middle drag pans, a double click frames `bounds` (centre, radius), the
/// wheel or a pinch zooms. True when the camera moved.
pub(super) fn steer(
    ui: &egui::Ui,
    resp: &egui::Response,
    cam: &mut crate::render::camera::Camera,
    height: f32,
    bounds: impl FnOnce() -> ([f64; 3], f64),
) -> bool {
    let mut changed = false;
    if resp.dragged_by(egui::PointerButton::Primary) {
        let d = resp.drag_delta();
        cam.orbit(d.x as f64, d.y as f64);
        changed = true;
    }
    if resp.dragged_by(egui::PointerButton::Secondary) || resp.dragged_by(egui::PointerButton::Middle) {
        let d = resp.drag_delta();
        cam.pan(d.x as f64, d.y as f64, height as f64);
        changed = true;
    }
    if resp.double_clicked() {
        let (center, radius) = bounds();
        *cam = cam.framing(center, radius);
        changed = true;
    }
    if resp.hovered() {
        // Smoothed scrolling (lines and trackpad points alike) and pinch; egui turns ctrl+wheel
        // into the zoom delta, not into scrolling, so nothing is counted twice.
        let (dy, pinch) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
        if dy != 0.0 || pinch != 1.0 {
            cam.zoom((dy as f64 / 200.0).exp() * pinch as f64);
            changed = true;
        }
    }
    changed
}

fn scene(s: &View3dSettings, state: &View3dState, input: &Inputs, class: TexelClass, moving: bool) -> Scene {
    // Only the threshold modes depend on the threshold: the others keep their image (and draw
    // nothing new) while it is dragged.
    let shows_set = matches!(s.mode, Mode::ThresholdSurface | Mode::ThresholdVoxels);
    let mask =
        if shows_set { volume::mask_threshold(class, input.filtration, input.threshold) } else { (0, 0) };
    Scene {
        camera: s.camera,
        mode: s.mode,
        clip: s.clip,
        planes: s.planes.then_some(input.cursor),
        window: input.window,
        step: crate::render::scene3d::step(s.samples_per_voxel, moving),
        iso: state.iso,
        iso2: (s.mode == Mode::Isosurface && s.second_surface).then_some((state.iso2, s.second_opacity)),
        mask,
        threshold: if shows_set { input.threshold } else { 0.0 },
        color_by_value: s.color_by_value,
        caps: s.caps,
        parts: false,
        surface: match s.mode {
            Mode::ThresholdSurface | Mode::ThresholdVoxels => [1.0, 0.35, 0.15],
            _ => [0.93, 0.9, 0.85],
        },
        // Dark slate, not black: black slice-plane regions and empty space stay apart.
        background: [0.1, 0.11, 0.14],
        frame: if moving { state.frame } else { 0 },
        skipping: s.skipping,
    }
}

/// The header strip; true when something that moves the camera changed.
fn controls(
    ui: &mut egui::Ui,
    header: Rect,
    s: &mut View3dSettings,
    state: &mut View3dState,
    input: &Inputs,
) -> bool {
    let mut moved = false;
    let mut strip = ui.new_child(egui::UiBuilder::new().max_rect(header.shrink2(Vec2::new(4.0, 1.0))));
    strip.horizontal_wrapped(|ui| {
        egui::ComboBox::from_label("mode").width(84.0).selected_text(s.mode.name()).show_ui(ui, |ui| {
            for m in Mode::ALL {
                ui.selectable_value(&mut s.mode, m, m.name());
            }
        });
        ui.menu_button("view", |ui| {
            for v in AxisView::ALL {
                if ui.button(format!("{}: from {}", v.name(), view_word(v))).clicked() {
                    s.camera.look_from(v);
                    moved = true;
                }
            }
        });
        let speed = ((input.window.1 - input.window.0) / 500.0).max(1e-12);
        if s.mode == Mode::Isosurface {
            ui.add(egui::DragValue::new(&mut state.iso).speed(speed).prefix("iso "));
        }
        // The rest in one menu, so that the strip fits a quarter of a 1280-point window.
        ui.menu_button("options", |ui| options(ui, s, state, speed));
    });
    moved
}

/// The 3D view's less used controls: the slice planes, the clipping box, the quality, and the
/// surfaces' options.
fn options(ui: &mut egui::Ui, s: &mut View3dSettings, state: &mut View3dState, speed: f64) {
    ui.checkbox(&mut s.planes, "planes").on_hover_text("Draw the three slice planes at the crosshair");
    if s.mode == Mode::Isosurface {
        ui.horizontal(|ui| {
            ui.checkbox(&mut s.second_surface, "second surface");
            if s.second_surface {
                ui.add(egui::DragValue::new(&mut state.iso2).speed(speed).prefix("iso "));
                ui.add(egui::DragValue::new(&mut s.second_opacity).speed(0.01).range(0.0..=1.0).prefix("α "));
            }
        });
        ui.checkbox(&mut s.color_by_value, "colour by value");
    }
    if matches!(s.mode, Mode::Isosurface | Mode::ThresholdSurface | Mode::ThresholdVoxels) {
        let why = if s.mode == Mode::Isosurface {
            "Close the surface where it meets the volume's edge or the clipping box. Off: \
             only the isosurface itself is drawn."
        } else {
            "Close the set where it meets the volume's edge or the clipping box. Off: only \
             faces between the set and the rest are drawn; orange faces are the set seen from \
             outside, blue ones seen from inside it. Voxels are those of the displayed field \
             (every stride-th one when it is subsampled); their faces are the top-cell \
             complex's."
        };
        ui.checkbox(&mut s.caps, "caps").on_hover_text(why);
    }
    ui.separator();
    ui.label("Clipping box (fraction of each axis)");
    for (a, name) in ["x", "y", "z"].iter().enumerate() {
        ui.horizontal(|ui| {
            let [lo, hi] = &mut s.clip;
            ui.label(*name);
            ui.add(egui::Slider::new(&mut lo[a], 0.0..=1.0).text("from"));
            ui.add(egui::Slider::new(&mut hi[a], 0.0..=1.0).text("to"));
            hi[a] = hi[a].max(lo[a]);
        });
    }
    if ui.button("Reset clipping").clicked() {
        s.clip = [[0.0; 3], [1.0; 3]];
    }
    ui.separator();
    ui.add(egui::Slider::new(&mut s.samples_per_voxel, 0.5..=4.0).text("samples per voxel"))
        .on_hover_text("Ray samples per voxel with the camera still (half as many while it moves)");
    ui.checkbox(&mut s.skipping, "skip empty space")
        .on_hover_text("Skip bricks of 8^3 voxels that cannot show anything (off only to compare)");
}

fn view_word(v: AxisView) -> &'static str {
    match v {
        AxisView::Right => "the right",
        AxisView::Left => "the left",
        AxisView::Anterior => "the front (anterior)",
        AxisView::Posterior => "the back (posterior)",
        AxisView::Superior => "above (superior)",
        AxisView::Inferior => "below (inferior)",
    }
}

/// World axes as the camera sees them, bottom right: R, A, S at the positive ends (the RAS
/// convention of NIfTI world coordinates), L, P, I at the negative ones.
fn orientation_marker(painter: &egui::Painter, image: Rect, s: &View3dSettings) {
    let [right, up, back] = s.camera.basis();
    let origin = image.right_bottom() + Vec2::new(-42.0, -42.0);
    let len = 28.0;
    let letters = [("R", "L"), ("A", "P"), ("S", "I")];
    let colors =
        [Color32::from_rgb(230, 80, 80), Color32::from_rgb(80, 200, 80), Color32::from_rgb(90, 140, 255)];
    // Draw the axes pointing away from the viewer first.
    let mut order: Vec<usize> = (0..3).collect();
    order.sort_by(|&a, &b| back[a].total_cmp(&back[b]));
    for i in order {
        let dir = Vec2::new(right[i] as f32, -(up[i] as f32));
        let tip = origin + dir * len;
        painter.line_segment([origin, tip], Stroke::new(2.0, colors[i]));
        let font = egui::FontId::proportional(12.0);
        painter.text(
            origin + dir * (len + 8.0),
            egui::Align2::CENTER_CENTER,
            letters[i].0,
            font.clone(),
            colors[i],
        );
        painter.text(
            origin - dir * (len * 0.6 + 6.0),
            egui::Align2::CENTER_CENTER,
            letters[i].1,
            font,
            colors[i].gamma_multiply(0.6),
        );
    }
}
