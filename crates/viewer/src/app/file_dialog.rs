//! Choosing files: the desktop's dialog (rfd through the XDG portal) when it works, else
//! topoview's own, drawn with egui, so File > Open and every export always open something.
//!
//! The portal gives no error when it is missing: `pick_file` just returns None at once. A None
//! that comes back faster than a person can cancel a dialog (or no D-Bus session at all) is
//! taken as "the portal is absent or failed"; from then on the in-app dialog is used, and the
//! user is told once.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a chosen path is for: the app acts on it when the (possibly in-app) dialog returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Open,
    AddLayer,
    OpenSession,
    SaveSession,
    ExportCurve { json: bool },
    ExportMaskNifti,
    ExportMaskPng,
    Screenshot,
}

impl Action {
    pub fn title(self) -> &'static str {
        match self {
            Action::Open => "Open an image or volume",
            Action::AddLayer => "Add a layer over the image",
            Action::OpenSession => "Open a session",
            Action::SaveSession => "Save the session",
            Action::ExportCurve { json: false } => "Export the curve as CSV",
            Action::ExportCurve { json: true } => "Export the curve as JSON",
            Action::ExportMaskNifti => "Export the mask as NIfTI",
            Action::ExportMaskPng => "Export the mask as PNG",
            Action::Screenshot => "Save a screenshot",
        }
    }

    pub fn saves(self) -> bool {
        !matches!(self, Action::Open | Action::AddLayer | Action::OpenSession)
    }
}

/// A request for a path: what for, which file types, and the name to suggest when saving.
#[derive(Clone, Debug)]
pub struct Request {
    pub action: Action,
    pub filter: Option<(&'static str, &'static [&'static str])>,
    pub file_name: Option<String>,
}

/// A None from the native dialog sooner than this was not a person cancelling.
const TOO_FAST: Duration = Duration::from_millis(150);

/// Which dialog to use, and the in-app one while it is open.
#[derive(Default)]
pub struct Dialogs {
    /// The desktop's dialog failed (or cannot work here): use the in-app one.
    pub native_failed: bool,
    pub open: Option<InApp>,
}

/// How a native dialog call ended.
pub enum Native {
    Chosen(PathBuf),
    Cancelled,
    /// It returned nothing at once, or cannot run: the in-app dialog takes over.
    Unavailable,
}

/// Runs the desktop's dialog for `req` (blocking, as rfd does).
pub fn native(req: &Request, dir: Option<&Path>) -> Native {
    // On Linux the portal needs a D-Bus session bus: its address, or the usual socket.
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some()
        || std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| Path::new(&d).join("bus").exists());
    if cfg!(target_os = "linux") && !bus {
        return Native::Unavailable;
    }
    let mut d = rfd::FileDialog::new().set_title(req.action.title());
    if let Some(dir) = dir {
        d = d.set_directory(dir);
    }
    if let Some((name, exts)) = req.filter {
        d = d.add_filter(name, exts);
    }
    if let Some(n) = &req.file_name {
        d = d.set_file_name(n);
    }
    let asked = Instant::now();
    let chosen = if req.action.saves() { d.save_file() } else { d.pick_file() };
    match chosen {
        Some(p) => Native::Chosen(p),
        None if asked.elapsed() < TOO_FAST => Native::Unavailable,
        None => Native::Cancelled,
    }
}

/// One entry of a folder's listing.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    name: String,
    dir: bool,
}

/// The in-app dialog: a folder, its listing, the name typed or clicked.
pub struct InApp {
    pub request: Request,
    pub dir: PathBuf,
    /// The folder field as typed (Enter goes there).
    dir_text: String,
    pub name: String,
    entries: Vec<Entry>,
    error: Option<String>,
    /// Every file, not only the filter's types.
    all_files: bool,
    /// Said at the top of the dialog (why this dialog and not the desktop's).
    pub note: Option<String>,
}

/// What the in-app dialog did this frame.
pub enum Outcome {
    Open,
    Chosen(PathBuf),
    Closed,
}

impl InApp {
    pub fn new(request: Request, dir: PathBuf) -> InApp {
        let name = request.file_name.clone().unwrap_or_default();
        let mut d = InApp {
            request,
            dir_text: dir.display().to_string(),
            dir,
            name,
            entries: Vec::new(),
            error: None,
            all_files: false,
            note: None,
        };
        d.list();
        d
    }

    /// Reads the folder: subfolders first, then the files the filter admits, each by name.
    fn list(&mut self) {
        self.entries.clear();
        self.error = None;
        let read = match std::fs::read_dir(&self.dir) {
            Ok(r) => r,
            Err(e) => {
                self.error = Some(format!("cannot read {}: {e}", self.dir.display()));
                return;
            }
        };
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let dir = entry.path().is_dir();
            if dir || self.all_files || self.admits(&name) {
                self.entries.push(Entry { name, dir });
            }
        }
        self.entries.sort_by(|a, b| {
            b.dir.cmp(&a.dir).then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
        });
    }

    /// Whether the filter takes a file name (".nii.gz" matches "gz"; no filter takes all).
    fn admits(&self, name: &str) -> bool {
        match self.request.filter {
            None => true,
            Some((_, exts)) => {
                let lower = name.to_lowercase();
                exts.iter().any(|e| lower.ends_with(&format!(".{e}")))
            }
        }
    }

    pub fn go(&mut self, dir: PathBuf) {
        self.dir = dir;
        self.dir_text = self.dir.display().to_string();
        self.list();
    }

    /// The path the dialog would return now, if the name is not empty.
    fn target(&self) -> Option<PathBuf> {
        let name = self.name.trim();
        if name.is_empty() {
            return None;
        }
        let p = Path::new(name);
        Some(if p.is_absolute() { p.to_path_buf() } else { self.dir.join(p) })
    }

    /// Draws the dialog; says whether it is still open, was closed, or chose a path.
    pub fn show(&mut self, ctx: &egui::Context, places: &[(String, PathBuf)]) -> Outcome {
        let mut outcome = Outcome::Open;
        let mut open = true;
        let saves = self.request.action.saves();
        egui::Window::new(self.request.action.title())
            .open(&mut open)
            .collapsible(false)
            .default_size([560.0, 420.0])
            .show(ctx, |ui| {
                if let Some(n) = &self.note {
                    ui.colored_label(ui.visuals().warn_fg_color, n);
                }
                ui.horizontal(|ui| {
                    if ui.button("Up").on_hover_text("The parent folder").clicked()
                        && let Some(parent) = self.dir.parent().map(Path::to_path_buf)
                    {
                        self.go(parent);
                    }
                    let field = ui.add(
                        egui::TextEdit::singleline(&mut self.dir_text)
                            .desired_width(f32::INFINITY)
                            .hint_text("folder"),
                    );
                    if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        self.go(PathBuf::from(self.dir_text.trim()));
                    }
                });
                ui.horizontal_wrapped(|ui| {
                    for (label, path) in places {
                        if ui.small_button(label).on_hover_text(path.display().to_string()).clicked() {
                            self.go(path.clone());
                        }
                    }
                });
                ui.separator();
                if let Some(e) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                let mut go_to = None;
                egui::ScrollArea::vertical().max_height(260.0).auto_shrink([false, false]).show(ui, |ui| {
                    for e in &self.entries {
                        let text = if e.dir { format!("{}/", e.name) } else { e.name.clone() };
                        let r = ui.selectable_label(!e.dir && e.name == self.name, text);
                        if e.dir && r.clicked() {
                            go_to = Some(self.dir.join(&e.name));
                        } else if r.clicked() {
                            self.name = e.name.clone();
                        }
                        if !e.dir && r.double_clicked() {
                            outcome = Outcome::Chosen(self.dir.join(&e.name));
                        }
                    }
                    if self.entries.is_empty() && self.error.is_none() {
                        ui.weak("(nothing here the filter admits)");
                    }
                });
                if let Some(d) = go_to {
                    self.go(d);
                }
                ui.separator();
                let mut entered = false;
                ui.horizontal(|ui| {
                    ui.label(if saves { "Save as" } else { "File" });
                    let field = ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(300.0));
                    // Enter in the name field is the Open (Save) button.
                    entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                    if let Some((name, _)) = self.request.filter
                        && ui.checkbox(&mut self.all_files, "all files").on_hover_text(name).changed()
                    {
                        self.list();
                    }
                });
                let target = self.target();
                let exists = target.as_ref().is_some_and(|p| p.is_file());
                if saves && exists {
                    ui.colored_label(
                        ui.visuals().warn_fg_color,
                        "A file of that name exists: it will be replaced.",
                    );
                }
                ui.horizontal(|ui| {
                    let verb = match (saves, exists) {
                        (false, _) => "Open",
                        (true, false) => "Save",
                        (true, true) => "Replace",
                    };
                    let ok = target.is_some() && (saves || exists);
                    if (ui.add_enabled(ok, egui::Button::new(verb)).clicked() || (entered && ok))
                        && let Some(p) = target
                    {
                        outcome = Outcome::Chosen(p);
                    }
                    if ui.button("Cancel").clicked() {
                        outcome = Outcome::Closed;
                    }
                });
            });
        if !open {
            outcome = Outcome::Closed;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_puts_folders_first_and_filters_files() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for f in ["b.nii.gz", "a.png", "notes.txt", ".hidden.png"] {
            std::fs::write(tmp.path().join(f), b"x").unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::create_dir(tmp.path().join("zfolder")).unwrap_or_else(|e| panic!("{e}"));
        const TYPES: &[&str] = &["nii", "gz", "png"];
        let req = Request { action: Action::Open, filter: Some(("images", TYPES)), file_name: None };
        let mut d = InApp::new(req, tmp.path().to_path_buf());
        let names: Vec<&str> = d.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["zfolder", "a.png", "b.nii.gz"]);
        d.all_files = true;
        d.list();
        assert_eq!(d.entries.len(), 4);
        d.name = "a.png".into();
        assert_eq!(d.target(), Some(tmp.path().join("a.png")));
        d.go(tmp.path().join("missing"));
        assert!(d.error.as_deref().is_some_and(|e| e.contains("missing")));
    }
}
