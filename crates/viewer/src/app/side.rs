//! The panels around the slice views: menu bar, status bar, the ECC panel with its controls,
//! the display controls with the histogram, and the random-field dialog.

use super::actions;
use super::file_dialog::Action;
use super::settings::Layout;
use super::views::VIEW_NAMES;
use super::{DEMO_VOLUME, TopoApp, asset, curve_panel};
use crate::render::colormap::Colormap;
use egui::{Color32, KeyboardShortcut, Rect, Sense, Stroke, Vec2};
use topoview_compute::jobs;
use topoview_core::export::format_threshold;
use topoview_core::io::OpenOptions;
use topoview_core::topo::ecc::Construction;

pub fn menu_bar(app: &mut TopoApp, ui: &mut egui::Ui) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            menu_item(app, ui, "Open…", Action::Open, Some(actions::OPEN));
            menu_item(app, ui, "Add layer…", Action::AddLayer, Some(actions::ADD_LAYER));
            ui.menu_button("Open recent", |ui| {
                if app.settings.recent.is_empty() {
                    ui.label("(nothing yet)");
                }
                for p in app.settings.recent.clone() {
                    if ui.button(p.display().to_string()).clicked() {
                        app.open(p, OpenOptions::default());
                    }
                }
            });
            ui.menu_button("Examples", |ui| {
                if ui.button("MNI152 T1 brain template (3D, u8)").clicked() {
                    app.open(asset(DEMO_VOLUME), OpenOptions::default());
                }
                if ui.button("Greek coins (2D, u8)").clicked() {
                    app.open(asset("coins.png"), OpenOptions::default());
                }
                if ui.button("Gaussian random field…").clicked() {
                    app.grf_dialog = true;
                }
            });
            ui.separator();
            session_menu(app, ui);
            ui.separator();
            export_menu(app, ui);
            ui.separator();
            if ui.button("Quit").clicked() {
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
        });
        ui.menu_button("View", |ui| {
            let cloud =
                app.units.cloud.result.is_some() || app.jobs.contains_key(&topoview_compute::rips::RIPS);
            ui.add_enabled_ui(app.data.is_some(), |ui| {
                ui.radio_value(&mut app.units.cloud.shown, false, "The image")
            });
            ui.add_enabled_ui(cloud, |ui| {
                ui.radio_value(&mut app.units.cloud.shown, true, "The point cloud and its barcode")
            });
            ui.separator();
            let three_d = app.data.as_ref().is_some_and(|d| d.field.ndim() == 3);
            ui.add_enabled_ui(three_d, |ui| {
                ui.radio_value(&mut app.settings.layout, Layout::Grid, "2x2 grid");
                ui.radio_value(&mut app.settings.layout, Layout::Volume, "3D view");
                for w in [2, 1, 0] {
                    ui.radio_value(&mut app.settings.layout, Layout::Single(w), VIEW_NAMES[w]);
                }
            });
            ui.separator();
            ui.checkbox(&mut app.settings.radiological, "Radiological (right on the left)").on_hover_text(
                "Volumes with an affine are shown in RAS axes with orientation letters; this \
                 mirrors left and right in the axial and coronal views, as radiologists read them",
            );
            if ui.button("Reset zoom and pan").clicked() {
                app.views.nav = Default::default();
            }
            if ui
                .button("Clear overlays")
                .on_hover_text(
                    "Hide the mask, the parts, the complex, the edges and the layers (their results stay)",
                )
                .clicked()
            {
                app.clear_overlays();
            }
            if ui
                .button("Reset layout")
                .on_hover_text("The views of this kind of data back where they start")
                .clicked()
            {
                let a = app.arrangement();
                app.layouts.reset(a);
            }
        });
        help_menu(ui);
    });
}

/// A File menu entry: enabled when its action can run, with its shortcut shown.
fn menu_item(
    app: &mut TopoApp,
    ui: &mut egui::Ui,
    label: &str,
    action: Action,
    key: Option<KeyboardShortcut>,
) {
    let mut button = egui::Button::new(label);
    if let Some(k) = key {
        button = button.shortcut_text(ui.ctx().format_shortcut(&k));
    }
    if ui.add_enabled(actions::available(app, action), button).clicked() {
        actions::ask(app, action, &ui.ctx().clone());
    }
}

/// File > Save session… and Open session….
fn session_menu(app: &mut TopoApp, ui: &mut egui::Ui) {
    let hint = "The field, the settings, the threshold, σ, the window, the camera and the simplification level, as JSON";
    ui.scope(|ui| {
        menu_item(app, ui, "Save session…", Action::SaveSession, Some(actions::SAVE_SESSION));
    })
    .response
    .on_hover_text(hint);
    menu_item(app, ui, "Open session…", Action::OpenSession, Some(actions::OPEN_SESSION));
}

fn export_menu(app: &mut TopoApp, ui: &mut egui::Ui) {
    if app.data.is_none() {
        ui.label("(open a file to export)");
    }
    menu_item(
        app,
        ui,
        "Export curve as CSV…",
        Action::ExportCurve { json: false },
        Some(actions::EXPORT_CURVE),
    );
    menu_item(app, ui, "Export curve as JSON…", Action::ExportCurve { json: true }, None);
    menu_item(app, ui, "Export mask as NIfTI…", Action::ExportMaskNifti, Some(actions::EXPORT_MASK));
    let three_d = app.data.as_ref().is_some_and(|d| d.field.ndim() == 3);
    // The slice of constant voxel z as stored (the axial view shows it only for axial scans).
    let png_label =
        if three_d { "Export mask of slice z (as stored) as PNG…" } else { "Export mask as PNG…" };
    menu_item(app, ui, png_label, Action::ExportMaskPng, None);
    menu_item(app, ui, "Save screenshot…", Action::Screenshot, Some(actions::SCREENSHOT));
    ui.checkbox(&mut app.settings.builtin_dialogs, "Use topoview's own file dialog")
        .on_hover_text("Instead of the desktop's (it is used anyway when the desktop's does not open)");
}

/// The status bar: two rows whatever is shown, so that the tiles above keep their height (a
/// readout that came and went moved every view). The first row has the jobs with their
/// progress and Cancel, then the run's figures and the backend; the second what lies under the
/// pointer, in the field and in each visible layer. Each row is one line, cut at its end.
pub fn status_bar(app: &mut TopoApp, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        let mut cancel = None;
        // Every running job, whatever its lane, in a stable order.
        let mut lanes: Vec<_> = app.jobs.keys().copied().collect();
        lanes.sort();
        for lane in lanes {
            if let Some(j) = app.jobs.get(&lane) {
                let text =
                    if j.stage.is_empty() { j.what.clone() } else { format!("{}: {}", j.what, j.stage) };
                let bar = match j.fraction {
                    Some(f) => egui::ProgressBar::new(f).text(text).desired_width(220.0),
                    None => egui::ProgressBar::new(0.0).text(text).animate(true).desired_width(220.0),
                };
                ui.add(bar);
                if ui.small_button("Cancel").clicked() {
                    cancel = Some(lane);
                }
                ui.separator();
            }
        }
        if let Some(l) = cancel {
            app.cancel_by_user(l);
        }
        if let Some(what) = &app.cancelled {
            ui.colored_label(ui.visuals().warn_fg_color, format!("{what}: cancelled"));
            ui.separator();
        }
        if let Some(p) = app.upload.filter(|p| p.planes < p.of) {
            ui.label(format!("uploading the volume to the GPU: {} of {} planes", p.planes, p.of));
            ui.add(egui::ProgressBar::new(p.planes as f32 / p.of.max(1) as f32).desired_width(120.0));
            ui.separator();
        }
        if app.volatile_readouts {
            if let Some((what, s)) = &app.last_job {
                ui.label(format!("last job: {what} {:.2} s", s));
                ui.separator();
            }
            if let Some(mib) = app.frames.resident_mib() {
                ui.label(format!("memory {mib:.0} MiB"));
                ui.separator();
            }
            if let Some(ms) = app.frames.mean_ms() {
                ui.label(format!("frame {ms:.1} ms"));
                ui.separator();
            }
        }
        let backend = format!("Backend: {}", app.backend());
        ui.add(egui::Label::new(backend.as_str()).truncate()).on_hover_text(backend);
    });
    ui.horizontal(|ui| {
        let mut line = String::new();
        if let (Some(h), Some(d)) = (app.views.hover, &app.data) {
            let f = d.displayed();
            let [x, y, z] = h.voxel;
            let pos = if f.ndim() == 3 { format!("({x}, {y}, {z})") } else { format!("({x}, {y})") };
            let [wx, wy, wz] = f.world([x as f64, y as f64, z as f64]);
            let world = match f.affine {
                Some(_) => format!("  world ({wx:.1}, {wy:.1}, {wz:.1}) mm"),
                None => format!("  at ({wx:.1}, {wy:.1}, {wz:.1})"),
            };
            let what = if d.labels { "label" } else { "value" };
            line = format!("voxel {pos}{world}  {what} {}", format_threshold(h.value, f.dtype()));
            // Each visible layer's value under the pointer, the top one first.
            for l in app.units.layers.list.iter().rev().filter(|l| l.style.visible) {
                line += &format!("  |  {}", l.readout(h.voxel));
            }
        }
        if line.is_empty() {
            // The row keeps its height either way.
            ui.weak(if app.units.cloud.shown || app.data.is_none() {
                ""
            } else {
                "Point at a view to read the voxel and its value."
            });
        } else {
            ui.add(egui::Label::new(egui::RichText::new(line.as_str()).monospace()).truncate())
                .on_hover_text(line);
        }
    });
}

pub fn ecc_panel(app: &mut TopoApp, ui: &mut egui::Ui) {
    ui.heading("Euler characteristic curve");
    let mut changed = false;
    ui.horizontal_wrapped(|ui| {
        egui::ComboBox::from_label("Construction").selected_text(app.settings.construction.name()).show_ui(
            ui,
            |ui| {
                for c in [Construction::TopCells, Construction::Vertices] {
                    changed |= ui
                        .selectable_value(&mut app.settings.construction, c, c.name())
                        .on_hover_text(c.description())
                        .changed();
                }
            },
        );
        changed |= ui.checkbox(&mut app.settings.superlevel, "Superlevel").changed();
        // These persist between runs: say so, and offer the command line's defaults back.
        let defaults = (Construction::TopCells, false);
        if (app.settings.construction, app.settings.superlevel) != defaults
            && ui
                .small_button("Defaults")
                .on_hover_text(
                    "Kept from your last run. Back to what `topoview ecc` computes by default: \
                     top-cells, sublevel",
                )
                .clicked()
        {
            (app.settings.construction, app.settings.superlevel) = defaults;
            changed = true;
        }
    });
    if changed {
        if let Some(d) = &mut app.data {
            // A threshold the user chose stays where it still lies in the value range.
            let inside = d.displayed_summary().range.is_some_and(|(lo, hi)| (lo..=hi).contains(&d.threshold));
            d.threshold_chosen &= inside;
            d.curve = None;
            d.smoothed = None;
        }
        app.recompute();
    }
    ui.horizontal_wrapped(|ui| {
        let r = ui.add(egui::Slider::new(&mut app.sigma, 0.0..=8.0).step_by(0.25).text("σ (voxels)"));
        if r.changed() {
            app.resmooth();
        }
    });
    if let Some(d) = &mut app.data {
        let r = ui.add_enabled(
            d.smoothed.is_some(),
            egui::Checkbox::new(&mut d.show_smoothed, "Show smoothed field"),
        );
        if r.changed() {
            // An unchosen threshold moves to the suggestion of the curve now on screen.
            d.follow_suggestion();
        }
    }
    let Some(d) = &mut app.data else {
        ui.label("No field loaded.");
        return;
    };
    if !d.analysed() {
        label_map_note(app, ui);
        return;
    }
    if d.curve.is_none() && d.smoothed.is_none() {
        ui.label("Computing the curve…");
    }
    curve_panel::readout(ui, d);
    mask_controls(app, ui);
    ui.separator();
    display_controls(app, ui);
    // Each analysis's section, in the order of the list.
    app.with_units(|units, app| {
        for u in units.all_mut() {
            ui.separator();
            u.panel(app, ui);
        }
    });
    ui.separator();
    dataset_info(app, ui);
}

/// What the ECC panel says of a label map: why there is no curve, and the two ways out.
fn label_map_note(app: &mut TopoApp, ui: &mut egui::Ui) {
    let Some(d) = &app.data else { return };
    let why = if d.field.labels {
        "The file marks it as a label map (NIfTI intent code 1002)."
    } else {
        "It looks like a label map: a few non-negative integers."
    };
    ui.label(format!("{why} Its values name regions, so a curve over them means little: none is computed."));
    ui.horizontal_wrapped(|ui| {
        if ui.button("Compute the curve anyway").clicked() {
            app.analyse_labels();
        }
        if ui.button("Treat as intensities").clicked() {
            app.set_labels(false);
        }
    });
    ui.separator();
    display_controls(app, ui);
    ui.separator();
    dataset_info(app, ui);
}

/// Whether and how the threshold set shows on the slices: fill opacity, colour (chosen against
/// the colormap until the user picks one) and the boundary.
fn mask_controls(app: &mut TopoApp, ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.checkbox(&mut app.mask_on, "Show mask");
        ui.add(egui::Slider::new(&mut app.settings.mask_opacity, 0.0..=1.0).text("opacity"));
    });
    ui.horizontal_wrapped(|ui| {
        let mut rgb = app.settings.mask_rgb();
        let picked = ui.color_edit_button_srgb(&mut rgb).on_hover_text("The mask's colour");
        if picked.changed() {
            app.settings.mask_color = Some(rgb);
        }
        let auto = app.settings.mask_color.is_none();
        if ui
            .selectable_label(auto, "Auto colour")
            .on_hover_text("The colour that stands out most on the colormap")
            .clicked()
        {
            app.settings.mask_color = None;
        }
        ui.checkbox(&mut app.settings.mask_outline, "Outline").on_hover_text(
            "The boundary of the threshold set, opaque, over the fill (opacity 0: outline only)",
        );
    });
}

fn display_controls(app: &mut TopoApp, ui: &mut egui::Ui) {
    ui.heading("Display");
    egui::ComboBox::from_label("Colormap").selected_text(app.settings.colormap.name()).show_ui(ui, |ui| {
        for c in Colormap::ALL {
            if ui.selectable_value(&mut app.settings.colormap, c, c.name()).changed() {
                app.auto_colormap = None; // the user's own choice from now on
            }
        }
    });
    let integer = app.data.as_ref().is_some_and(|d| !d.displayed().dtype().is_float());
    if let Some(labels) = app.data.as_ref().map(|d| d.labels).filter(|_| integer) {
        let mut l = labels;
        let hint = "Each value names a region: categorical colours, the label under the cursor, \
                    and no curve over the ids unless asked for";
        if ui.checkbox(&mut l, "Label map").on_hover_text(hint).changed() {
            app.set_labels(l);
        }
    }
    let Some(d) = &mut app.data else { return };
    let summary = d.displayed_summary().clone();
    let dtype = d.displayed().dtype();
    let w = d.window_mut();
    let speed = summary.range.map_or(1.0, |(lo, hi)| (hi - lo) / 500.0);
    if app.settings.colormap == Colormap::Labels {
        // The slices colour ids, unwindowed: a window here would change nothing on screen.
        ui.weak("Labels are coloured by id (id mod 256, 0 black), without a window.");
    } else {
        ui.horizontal_wrapped(|ui| {
            ui.label("Window");
            ui.add(egui::DragValue::new(&mut w.0).speed(speed).prefix("min "));
            ui.add(egui::DragValue::new(&mut w.1).speed(speed).prefix("max "));
            if ui.button("Auto").on_hover_text("0.5th to 99.5th percentile").clicked() {
                *w = summary.window;
            }
            if ui.button("Full").on_hover_text("Whole value range").clicked()
                && let Some(r) = summary.range
            {
                *w = r;
            }
        });
    }
    histogram(ui, &summary, w, app.settings.colormap);
    let window = *w;
    let shows_3d = d.displayed().ndim() == 3 && matches!(app.settings.layout, Layout::Grid | Layout::Volume);
    if shows_3d {
        super::transfer_editor::editor(
            ui,
            &mut app.settings.view3d.transfer,
            &summary,
            window,
            app.settings.colormap,
        );
    }
    if let Some((lo, hi)) = summary.range {
        ui.small(format!(
            "{} {}, values {} to {}",
            d.displayed()
                .dims()
                .iter()
                .take(d.displayed().ndim())
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" x "),
            dtype.name(),
            format_threshold(lo, dtype),
            format_threshold(hi, dtype)
        ));
    }
}

/// Dragging on the histogram moves the window line nearest where the drag began (min or
/// max), as in ITK-SNAP's contrast dialog; the lines never cross.
fn drag_window_lines(
    ui: &egui::Ui,
    resp: &egui::Response,
    rect: Rect,
    range: Option<(f64, f64)>,
    window: &mut (f64, f64),
) {
    let Some((lo, hi)) = range.filter(|r| r.1 > r.0) else { return };
    let value_at = |x: f32| lo + ((x - rect.min.x) / rect.width()) as f64 * (hi - lo);
    let x_of = |v: f64| rect.min.x + ((v - lo) / (hi - lo)) as f32 * rect.width();
    if resp.hovered() {
        ui.ctx().set_cursor_icon(egui::CursorIcon::ResizeHorizontal);
    }
    let which = resp.id.with("window line");
    // A click or a drag (a slow frame may hold all of it); the line is the one nearer the press.
    let Some(g) = super::gesture::follow(ui, resp.id.with("window drag"), rect) else { return };
    if g.began {
        let p = g.pressed_at;
        let upper = (p.x - x_of(window.1)).abs() < (p.x - x_of(window.0)).abs();
        ui.data_mut(|d| d.insert_temp(which, upper));
    }
    let v = value_at(g.pos.x.clamp(rect.min.x, rect.max.x));
    let gap = (hi - lo) * 1e-3;
    if ui.data(|d| d.get_temp::<bool>(which)).unwrap_or(false) {
        window.1 = v.max(window.0 + gap);
    } else {
        window.0 = v.min(window.1 - gap);
    }
}

/// Log-scaled histogram of the displayed field with the window drawn over it and the colormap
/// underneath.
fn histogram(ui: &mut egui::Ui, s: &topoview_compute::FieldSummary, window: &mut (f64, f64), cmap: Colormap) {
    let (rect, resp) = ui.allocate_exact_size(Vec2::new(ui.available_width(), 90.0), Sense::click_and_drag());
    drag_window_lines(ui, &resp, rect, s.range, window);
    let window = *window;
    let p = ui.painter_at(rect);
    p.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    let Some((lo, hi)) = s.range else { return };
    let cols = (rect.width() as usize).clamp(1, 256);
    let per = s.histogram.len().div_ceil(cols);
    let sums: Vec<u64> = s.histogram.chunks(per).map(|c| c.iter().sum()).collect();
    let top = sums.iter().map(|&c| ((c + 1) as f32).ln()).fold(0.0f32, f32::max).max(1e-6);
    let bw = rect.width() / sums.len() as f32;
    let bar_area = rect.height() - 10.0;
    for (i, &c) in sums.iter().enumerate() {
        let h = ((c + 1) as f32).ln() / top * bar_area;
        let x = rect.min.x + i as f32 * bw;
        p.rect_filled(
            Rect::from_min_max(
                egui::pos2(x, rect.min.y + bar_area - h),
                egui::pos2(x + bw, rect.min.y + bar_area),
            ),
            0.0,
            Color32::from_gray(150),
        );
        let v = lo + (hi - lo) * (i as f64 + 0.5) / sums.len() as f64;
        let t = ((v - window.0) / (window.1 - window.0).max(f64::MIN_POSITIVE)) as f32;
        // Labels are coloured by id, unwindowed, as the slices show them.
        let [r, g, b] = match cmap {
            Colormap::Labels => crate::render::colormap::label_colour(v.max(0.0) as usize % 256),
            _ => cmap.rgb(t),
        };
        p.rect_filled(
            Rect::from_min_max(egui::pos2(x, rect.max.y - 8.0), egui::pos2(x + bw + 0.5, rect.max.y)),
            0.0,
            Color32::from_rgb(r, g, b),
        );
    }
    let x_of = |v: f64| rect.min.x + ((v - lo) / (hi - lo).max(f64::MIN_POSITIVE)) as f32 * rect.width();
    for v in [window.0, window.1] {
        let x = x_of(v).clamp(rect.min.x, rect.max.x);
        p.line_segment(
            [egui::pos2(x, rect.min.y), egui::pos2(x, rect.max.y)],
            Stroke::new(1.5, Color32::YELLOW),
        );
    }
}

/// The error and the message, above whatever the central area shows.
pub fn banners(app: &mut TopoApp, ui: &mut egui::Ui) {
    if let Some(e) = app.error.clone() {
        egui::Frame::new().fill(Color32::from_rgb(90, 20, 20)).inner_margin(6.0).show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.colored_label(Color32::WHITE, format!("Error: {e}"));
                if ui.small_button("Dismiss").clicked() {
                    app.error = None;
                }
            });
        });
    }
    if let Some(m) = app.message.clone() {
        ui.horizontal_wrapped(|ui| {
            ui.label(m);
            if ui.small_button("OK").clicked() {
                app.message = None;
            }
        });
    }
}

pub fn central(app: &mut TopoApp, ui: &mut egui::Ui) {
    let arrangement = app.arrangement();
    app.with_units(|units, app| central_with(app, units, arrangement, ui));
}

fn central_with(
    app: &mut TopoApp,
    units: &mut super::analyses::Analyses,
    arrangement: super::tiles::Arrangement,
    ui: &mut egui::Ui,
) {
    banners(app, ui);
    app.views.new_frame();
    if arrangement == super::tiles::Arrangement::Cloud {
        super::tiles::show(app, units, arrangement, ui);
        return;
    }
    let Some(d) = &app.data else {
        ui.centered_and_justified(|ui| {
            ui.label(if app.jobs.contains_key(&jobs::LOAD) {
                "Loading…"
            } else {
                "Open a file (File > Open, or drop it here)."
            });
        });
        return;
    };
    if let Some(series) = d.field.series {
        volume_slider(app, ui, series);
    }
    super::tiles::show(app, units, arrangement, ui);
}

/// The volume (time point) of a 4D file on screen; moving it reads that volume.
fn volume_slider(app: &mut TopoApp, ui: &mut egui::Ui, series: topoview_core::field::Series) {
    // While a volume loads, the slider shows the one asked for, not the one on screen.
    let loading = app.jobs.contains_key(&jobs::LOAD);
    let mut index = app.volume_requested.filter(|_| loading).unwrap_or(series.index);
    ui.horizontal_wrapped(|ui| {
        let slider = egui::Slider::new(&mut index, 0..=series.count - 1)
            .text(format!("volume (of {}, 4D file)", series.count));
        let r = ui
            .add(slider)
            .on_hover_text("Time point of the 4D file: each is read from the file as it is chosen");
        if r.changed() && index != series.index {
            app.show_volume(index);
        }
    });
}

/// The file, its geometry and the value under the crosshair.
fn dataset_info(app: &TopoApp, ui: &mut egui::Ui) {
    let Some(d) = &app.data else { return };
    let f = &d.field;
    let name =
        d.path.as_ref().and_then(|p| p.file_name()).map_or(d.source.clone(), |n| n.to_string_lossy().into());
    let mut lines = vec![
        name,
        format!("dims {}  {}", topoview_core::field::dims_string(f.shape()), f.dtype().name()),
        format!("spacing {:.3} x {:.3} x {:.3}", f.spacing()[0], f.spacing()[1], f.spacing()[2]),
    ];
    let [x, y, z] = app.views.cursor;
    let shown = d.displayed();
    lines.push(format!(
        "cursor ({x}, {y}, {z})  value {}",
        format_threshold(shown.samples().get_f64(shown.index(x, y, z)), shown.dtype())
    ));
    lines.extend(f.notes.iter().cloned());
    ui.heading("Dataset");
    ui.add(egui::Label::new(lines.join("\n")).wrap());
}

/// The mouse and keys of the views, for the Help menu.
const MOUSE_HELP: &[(&str, &str)] = &[
    (
        "Slices",
        "left click or drag: the crosshair · wheel or arrow keys: the slice · ctrl+wheel: zoom about the pointer · middle drag: pan · right drag: window (across) and level (up and down) · double-click: zoom and pan reset",
    ),
    ("3D view", "left drag: rotate · right drag: pan · wheel: zoom · double-click: frame the volume"),
    (
        "Curves",
        "click or drag: the threshold · wheel: zoom about the pointer (the value axis fits the curves in view) · double-click: the whole curve",
    ),
    (
        "Tiles",
        "drag a tab to move its view · drag an edge to resize · Maximise or double-click a tab: the view alone (Restore or Esc) · View > Reset layout",
    ),
];

/// Help > Mouse and keys.
fn help_menu(ui: &mut egui::Ui) {
    ui.menu_button("Help", |ui| {
        ui.menu_button("Mouse and keys", |ui| {
            ui.set_max_width(420.0);
            for (what, how) in MOUSE_HELP {
                ui.label(egui::RichText::new(*what).strong());
                ui.add(egui::Label::new(*how).wrap());
            }
        });
    });
}

pub fn grf_window(app: &mut TopoApp, ctx: &egui::Context) {
    let mut open = app.grf_dialog;
    let mut go = false;
    egui::Window::new("Gaussian random field").open(&mut open).resizable(false).show(ctx, |ui| {
        let g = &mut app.settings.grf;
        ui.label("White noise smoothed with a Gaussian: a field whose ECC has a known shape.");
        ui.horizontal_wrapped(|ui| {
            ui.radio_value(&mut g.three_d, false, "2D");
            ui.radio_value(&mut g.three_d, true, "3D");
        });
        ui.add(
            egui::Slider::new(&mut g.size, 16..=if g.three_d { 512 } else { 4096 })
                .text("size (voxels per axis)"),
        );
        ui.add(
            egui::Slider::new(&mut g.corr, 0.5..=32.0).logarithmic(true).text("correlation length (voxels)"),
        );
        ui.add(egui::DragValue::new(&mut g.seed).prefix("seed "));
        go = ui.button("Generate").clicked();
    });
    app.grf_dialog = open && !go;
    if go {
        app.generate();
    }
}
