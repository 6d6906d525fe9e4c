//! What the File menu and its keyboard shortcuts do: ask for a path (the desktop's dialog or
//! the in-app one, see [`super::file_dialog`]) and act on it when it comes.

use super::exports::Export;
use super::file_dialog::{Action, InApp, Native, Outcome, Request};
use super::{TopoApp, asset};
use egui::{Key, KeyboardShortcut, Modifiers};
use std::path::PathBuf;
use topoview_core::io::OpenOptions;

pub const FILE_TYPES: &[&str] =
    &["nii", "gz", "hdr", "nrrd", "nhdr", "mha", "mhd", "png", "jpg", "jpeg", "tif", "tiff", "raw"];
/// What File > Open takes: images and volumes, point clouds and distance matrices.
static OPEN_TYPES: std::sync::LazyLock<&'static [&'static str]> = std::sync::LazyLock::new(|| {
    Box::leak([FILE_TYPES, super::analyses::cloud::POINT_TYPES].concat().into_boxed_slice())
});
pub const OPEN: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
pub const ADD_LAYER: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::L);
pub const OPEN_SESSION: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::O);
pub const SAVE_SESSION: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
pub const EXPORT_CURVE: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::E);
pub const EXPORT_MASK: KeyboardShortcut =
    KeyboardShortcut::new(Modifiers::COMMAND.plus(Modifiers::SHIFT), Key::E);
pub const SCREENSHOT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::NONE, Key::F12);

/// The shortcuts, each with its action (longest modifiers first, so Ctrl+Shift+O is not
/// taken for Ctrl+O).
const SHORTCUTS: [(KeyboardShortcut, Action); 7] = [
    (OPEN_SESSION, Action::OpenSession),
    (EXPORT_MASK, Action::ExportMaskNifti),
    (OPEN, Action::Open),
    (ADD_LAYER, Action::AddLayer),
    (SAVE_SESSION, Action::SaveSession),
    (EXPORT_CURVE, Action::ExportCurve { json: false }),
    (SCREENSHOT, Action::Screenshot),
];

/// The field's file name without its extensions, for suggested export names.
fn stem(app: &TopoApp) -> String {
    let d = app.data.as_ref();
    d.and_then(|d| d.path.as_ref()).and_then(|p| p.file_name()).map_or("field".to_string(), |n| {
        let n = n.to_string_lossy();
        n.trim_end_matches(".gz").rsplit_once('.').map_or(n.to_string(), |(s, _)| s.to_string())
    })
}

/// Whether `action` can run now (exports need a field, the curve export its curve).
pub fn available(app: &TopoApp, action: Action) -> bool {
    match action {
        Action::Open | Action::OpenSession | Action::Screenshot => true,
        Action::AddLayer | Action::SaveSession | Action::ExportMaskNifti | Action::ExportMaskPng => {
            app.data.is_some()
        }
        Action::ExportCurve { .. } => app.data.as_ref().is_some_and(|d| d.displayed_curve().is_some()),
    }
}

/// The request for `action`: its file types and suggested name.
fn request(app: &TopoApp, action: Action) -> Request {
    const SESSION: (&str, &[&str]) = ("topoview session", &["json"]);
    let (filter, file_name) = match action {
        Action::Open => (Some(("images, volumes, point clouds", *OPEN_TYPES)), None),
        Action::AddLayer => (Some(("images and volumes", FILE_TYPES)), None),
        Action::OpenSession => (Some(SESSION), None),
        Action::SaveSession => (Some(SESSION), Some("session.json".to_string())),
        Action::ExportCurve { json } => {
            (None, Some(format!("{}_ecc.{}", stem(app), if json { "json" } else { "csv" })))
        }
        Action::ExportMaskNifti => (None, Some(format!("{}_mask.nii.gz", stem(app)))),
        Action::ExportMaskPng => (None, Some(format!("{}_mask.png", stem(app)))),
        Action::Screenshot => (None, Some("topoview.png".to_string())),
    };
    Request { action, filter, file_name }
}

/// Asks for a path for `action`: the desktop's dialog, else (it failed once, or the user chose
/// so) the in-app one, whose answer comes frames later through [`show_dialog`].
pub fn ask(app: &mut TopoApp, action: Action, ctx: &egui::Context) {
    if !available(app, action) {
        return;
    }
    let req = request(app, action);
    let dir = app.settings.last_dir.clone();
    let mut first_fallback = false;
    if !app.dialogs.native_failed && !app.settings.builtin_dialogs {
        match super::file_dialog::native(&req, dir.as_deref()) {
            Native::Chosen(p) => return act(app, action, p, ctx),
            Native::Cancelled => return,
            Native::Unavailable => {
                app.dialogs.native_failed = true;
                first_fallback = true;
                app.message = Some(
                    "The desktop's file dialog (the XDG portal) did not open here: topoview's own \
                     file dialog is used instead."
                        .into(),
                );
            }
        }
    }
    let start = dir
        .filter(|d| d.is_dir())
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let mut dialog = InApp::new(req, start);
    // The banner saying so lies behind the dialog: the dialog says it too, the first time.
    if first_fallback {
        dialog.note = Some(
            "The desktop's file dialog did not open here (no XDG portal): this is topoview's own.".into(),
        );
    }
    app.dialogs.open = Some(dialog);
    // Asked from a shortcut at the end of a frame, the dialog would wait for the next input.
    ctx.request_repaint();
}

/// Draws the in-app dialog while it is open and acts on its answer.
pub fn show_dialog(app: &mut TopoApp, ctx: &egui::Context) {
    let Some(d) = &mut app.dialogs.open else { return };
    let mut places: Vec<(String, PathBuf)> = Vec::new();
    if let Some(home) = std::env::var_os("HOME") {
        places.push(("Home".into(), PathBuf::from(home)));
    }
    if let Ok(cwd) = std::env::current_dir() {
        places.push(("Working folder".into(), cwd));
    }
    if let Some(last) = &app.settings.last_dir {
        places.push(("Last used".into(), last.clone()));
    }
    if let Some(examples) = asset(super::DEMO_VOLUME).parent() {
        places.push(("Examples".into(), examples.to_path_buf()));
    }
    match d.show(ctx, &places) {
        Outcome::Open => {}
        Outcome::Closed => app.dialogs.open = None,
        Outcome::Chosen(p) => {
            let action = d.request.action;
            app.dialogs.open = None;
            act(app, action, p, ctx);
        }
    }
}

/// Runs the File menu's shortcuts pressed this frame (not while a text field has the keys).
pub fn shortcuts(app: &mut TopoApp, ctx: &egui::Context) {
    if ctx.egui_wants_keyboard_input() {
        return;
    }
    for (shortcut, action) in SHORTCUTS {
        if ctx.input_mut(|i| i.consume_shortcut(&shortcut)) {
            ask(app, action, ctx);
        }
    }
}

/// Does what `action` is for with the chosen `path`.
pub fn act(app: &mut TopoApp, action: Action, mut path: PathBuf, ctx: &egui::Context) {
    // The next dialog starts where this file went (opening a file records its folder too).
    if action.saves() {
        app.settings.last_dir = path.parent().filter(|p| p.is_dir()).map(|p| p.to_path_buf());
    }
    match action {
        Action::Open => app.open(path, OpenOptions::default()),
        Action::AddLayer => app.units.layers.add(path),
        Action::OpenSession => {
            if let Err(e) = super::session::open(app, &path) {
                app.error = Some(e.to_string());
            }
        }
        Action::SaveSession => {
            if path.extension().is_none() {
                path.set_extension("json");
            }
            match super::session::save(app, &path) {
                Ok(()) => app.message = Some(format!("saved the session to {}", path.display())),
                Err(e) => app.error = Some(e.to_string()),
            }
        }
        Action::Screenshot => {
            let tx = app.exports_tx.clone();
            let c = ctx.clone();
            ctx.request_screenshot(move |img| {
                let _ = tx.send(super::exports::save_screenshot(&path, &img));
                c.request_repaint();
            });
        }
        Action::ExportCurve { .. } | Action::ExportMaskNifti | Action::ExportMaskPng => {
            let Some(d) = &app.data else { return };
            let (field, filtration, threshold) =
                (d.displayed().clone(), app.settings.filtration(), d.threshold);
            let job = match action {
                Action::ExportCurve { json } => {
                    let Some(c) = d.displayed_curve() else { return };
                    Export::Curve {
                        path,
                        json,
                        source: d.source.clone(),
                        field,
                        ecc: c.ecc.clone(),
                        sigma: d.displayed_sigma(),
                    }
                }
                Action::ExportMaskNifti => Export::MaskNifti { path, field, filtration, threshold },
                _ => {
                    let z = if field.ndim() == 3 { app.views.cursor[2] } else { 0 };
                    Export::MaskPng { path, field, filtration, threshold, z }
                }
            };
            app.export(job, ctx);
        }
    }
}
