//! Sessions: the viewer's whole state as a versioned JSON file (File > Save session… / Open
//! session…, `topoview --session FILE`): the field (a file with how it was read, or the random
//! field's recipe), every setting (layout, camera, construction, filtration, colormap, transfer
//! function, complex and layer options), and the view (threshold, σ, window, crosshair, zoom,
//! simplification level, isovalues). A file that moved is looked for next to the session (the
//! path relative to it is saved too); if it is in neither place the session says which file,
//! and restores the rest.

use super::TopoApp;
use super::analyses::layers::LayerStyle;
use super::settings::Settings;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use topoview_compute::jobs::Origin;
use topoview_core::io::{Endian, OpenOptions, RawSpec};

/// What the `format` field says, and the version this viewer writes (and reads up to).
pub const FORMAT: &str = "topoview-session";
pub const VERSION: u32 = 1;
/// A session is a few kilobytes; a larger file is not one.
const MAX_BYTES: u64 = 16 << 20;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub format: String,
    pub version: u32,
    /// The field shown (None: nothing was loaded).
    pub data: Option<Source>,
    pub settings: Settings,
    pub view: View,
}

/// Where the session's field comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Source {
    File {
        /// As opened (absolute where it was opened so).
        path: PathBuf,
        /// Relative to the session file's folder, where it can be (tried when `path` is gone).
        relative: Option<PathBuf>,
        /// Read as headerless raw samples with this layout.
        raw: Option<Raw>,
        /// The volume of a 4D file.
        volume: Option<usize>,
    },
    Generated {
        dims: Vec<usize>,
        corr: f64,
        seed: u64,
    },
}

/// A raw file's layout (see [`RawSpec`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Raw {
    pub dims: Vec<usize>,
    pub dtype: String,
    pub big_endian: bool,
    pub offset: u64,
}

/// What the user looks at, beyond the settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct View {
    pub threshold: Option<f64>,
    /// Whether the threshold was picked by hand (else it follows the suggested zero-crossing).
    pub threshold_chosen: bool,
    pub sigma: f64,
    pub show_smoothed: bool,
    /// The original field's display window, and the smoothed field's.
    pub window: Option<[f64; 2]>,
    pub smoothed_window: Option<[f64; 2]>,
    pub cursor: [usize; 3],
    /// Per slice view: zoom, pan x, pan y.
    pub nav: [[f32; 3]; 3],
    pub mask_on: bool,
    /// The Morse-Smale complex's persistence threshold (of the field on screen: the smoothed
    /// one when `show_smoothed`).
    pub simplification: Option<f64>,
    /// The 3D view's isovalue and second surface's value, when the 3D view had been framed on
    /// this field (its camera is then kept as saved; else the view frames the field afresh).
    pub iso: Option<[f64; 2]>,
    /// The volumes over the field, the last on top.
    pub layers: Vec<SavedLayer>,
}

/// A layer: its file (found as the field's is), whether it holds labels, and its style.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedLayer {
    pub path: PathBuf,
    pub relative: Option<PathBuf>,
    pub labels: bool,
    pub style: LayerStyle,
}

impl Default for View {
    fn default() -> Self {
        View {
            threshold: None,
            threshold_chosen: false,
            sigma: 0.0,
            show_smoothed: false,
            window: None,
            smoothed_window: None,
            cursor: [0; 3],
            nav: [[1.0, 0.0, 0.0]; 3],
            mask_on: true,
            simplification: None,
            iso: None,
            layers: Vec::new(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{}: {reason}", path.display())]
    Read { path: PathBuf, reason: String },
    #[error("{}: not a topoview session: {reason}", path.display())]
    Format { path: PathBuf, reason: String },
    #[error(
        "{}: written by a newer topoview (session version {found}; this one reads up to {VERSION})",
        path.display()
    )]
    Newer { path: PathBuf, found: u64 },
    #[error("{}: cannot save the session: {reason}", path.display())]
    Write { path: PathBuf, reason: String },
}

impl Session {
    /// The state of `app`, to be saved at `at` (for the field's path relative to it).
    pub fn of(app: &TopoApp, at: &Path) -> Session {
        let mut view = View { sigma: app.sigma, mask_on: app.mask_on, ..View::default() };
        for (n, s) in view.nav.iter_mut().zip(&app.views.nav) {
            *n = [s.zoom, s.pan[0], s.pan[1]];
        }
        let data = app.data.as_ref().map(|d| {
            if app.view3d.framed(&d.field) {
                view.iso = Some([app.view3d.iso, app.view3d.iso2]);
            }
            view.smoothed_window = d.smoothed_window.map(|w| [w.0, w.1]);
            view.threshold = Some(d.threshold);
            view.threshold_chosen = d.threshold_chosen;
            view.show_smoothed = d.show_smoothed;
            view.window = Some([d.window.0, d.window.1]);
            view.cursor = app.views.cursor;
            view.simplification = d.displayed_msc().map(|m| m.level.threshold);
            view.layers = app
                .units
                .layers
                .list
                .iter()
                .map(|l| {
                    let (path, relative) = located(&l.path, at);
                    SavedLayer { path, relative, labels: l.labels, style: l.style }
                })
                .collect();
            source(&d.origin, at)
        });
        Session { format: FORMAT.into(), version: VERSION, data, settings: app.settings_to_keep(), view }
    }

    pub fn to_json(&self) -> String {
        // Plain data throughout: serialising cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Parses and checks a session's text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Session, SessionError> {
        let format = |reason: String| SessionError::Format { path: path.to_path_buf(), reason };
        let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| format(e.to_string()))?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(format(format!("no \"format\": \"{FORMAT}\"")));
        }
        let found =
            value.get("version").and_then(|v| v.as_u64()).ok_or_else(|| format("no version".into()))?;
        if found > VERSION as u64 {
            return Err(SessionError::Newer { path: path.to_path_buf(), found });
        }
        move_analysis_settings(&mut value);
        let mut s: Session = serde_json::from_value(value).map_err(|e| format(e.to_string()))?;
        s.check().map_err(format)?;
        s.settings.view3d.transfer.sanitize();
        s.settings.mask_opacity = s.settings.mask_opacity.clamp(0.0, 1.0);
        Ok(s)
    }

    /// Values the viewer cannot show are refused, not carried into the views.
    fn check(&self) -> Result<(), String> {
        let v = &self.view;
        if v.threshold.is_some_and(|t| !t.is_finite()) {
            return Err("the threshold is not a finite number".into());
        }
        if !(0.0..=8.0).contains(&v.sigma) {
            return Err(format!("σ = {} is outside 0 to 8 voxels", v.sigma));
        }
        let finite = |w: &[f64]| w.iter().all(|x| x.is_finite());
        let bad = |w: &Option<[f64; 2]>| w.is_some_and(|w| !finite(&w) || w[0] > w[1]);
        if bad(&v.window) || bad(&v.smoothed_window) {
            return Err("the display window is not two increasing finite numbers".into());
        }
        if v.iso.is_some_and(|w| !finite(&w)) || v.simplification.is_some_and(|t| !t.is_finite()) {
            return Err("an isovalue or the simplification level is not a finite number".into());
        }
        if v.nav.iter().flatten().any(|x| !x.is_finite()) || v.nav.iter().any(|n| n[0] <= 0.0) {
            return Err("a view's zoom or pan is not a finite number".into());
        }
        let bad_style = |s: &LayerStyle| {
            // A window may be empty or crossed (a constant layer, boxes typed past each other):
            // the colours then saturate, as they did when the session was saved.
            let usable = finite(&[s.window.0, s.window.1, s.threshold]) && (0.0..=1.0).contains(&s.opacity);
            !usable
        };
        if v.layers.iter().any(|l| bad_style(&l.style)) {
            return Err("a layer's window, threshold or opacity is out of range".into());
        }
        if let Some(Source::File { raw: Some(r), .. }) = &self.data
            && topoview_core::field::Dtype::parse(&r.dtype).is_none()
        {
            return Err(format!("unknown raw dtype '{}'", r.dtype));
        }
        if let Some(Source::Generated { dims, corr, .. }) = &self.data {
            let sizes = if dims.len() == 3 { 16..=512 } else { 16..=4096 };
            let ok = (2..=3).contains(&dims.len())
                && dims.iter().all(|n| sizes.contains(n))
                && corr.is_finite()
                && *corr > 0.0;
            if !ok {
                return Err(format!(
                    "a random field of {dims:?} voxels with correlation {corr} cannot be generated"
                ));
            }
        }
        Ok(())
    }

    pub fn read(path: &Path) -> Result<Session, SessionError> {
        // A regular file of at most MAX_BYTES (/dev/zero or a FIFO would never end).
        let text = topoview_core::io::read_small_text(path, MAX_BYTES).map_err(|e| {
            let reason = match e {
                topoview_core::io::ReadError::Invalid { message, .. } => message,
                e => e.to_string(),
            };
            SessionError::Read { path: path.to_path_buf(), reason }
        })?;
        Session::parse(&text, path)
    }
}

/// The session's record of where a field came from.
fn source(origin: &Origin, at: &Path) -> Source {
    match origin {
        Origin::File { path, opts } => {
            let (absolute, relative) = located(path, at);
            let raw = opts.raw.as_ref().map(|r| Raw {
                dims: r.dims.clone(),
                dtype: r.dtype.name().into(),
                big_endian: r.endian == Endian::Big,
                offset: r.offset,
            });
            Source::File { path: absolute, relative, raw, volume: opts.volume }
        }
        Origin::Generated { dims, corr, seed } => {
            Source::Generated { dims: dims.clone(), corr: *corr, seed: *seed }
        }
    }
}

/// `path` made absolute, and relative to the folder of the session saved at `at`.
fn located(path: &Path, at: &Path) -> (PathBuf, Option<PathBuf>) {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = at.parent().map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf()));
    let relative = dir.and_then(|d| relative_to(&absolute, &d));
    (absolute, relative)
}

/// Where a saved file is now: where it was, or at its path relative to the session `path`
/// (a folder moved with its session); else both places tried, for the error.
fn find(file: &Path, relative: Option<PathBuf>, path: &Path) -> Result<PathBuf, String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let beside = relative.map(|r| dir.join(r));
    let found = std::iter::once(file.to_path_buf()).chain(beside.clone()).find(|p| p.exists());
    found.ok_or_else(|| {
        let also = beside.map(|b| format!(" (nor at {})", b.display())).unwrap_or_default();
        format!("the file {} has moved or is gone{also}", file.display())
    })
}

/// `path` relative to the folder `dir` (with `..` where they part), when both are absolute.
fn relative_to(path: &Path, dir: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let p: Vec<Component> = path.components().collect();
    let d: Vec<Component> = dir.components().collect();
    // Different roots (drives) share no relative path.
    if p.first() != d.first() {
        return None;
    }
    let common = p.iter().zip(&d).take_while(|(a, b)| a == b).count();
    let mut out: PathBuf = d[common..].iter().map(|_| Component::ParentDir).collect();
    out.extend(&p[common..]);
    Some(out)
}

/// Writes `app`'s session to `path` (through a temporary file: a failed save leaves an older
/// session whole).
pub fn save(app: &TopoApp, path: &Path) -> Result<(), SessionError> {
    let text = Session::of(app, path).to_json();
    topoview_core::export::write_atomic(path, text.as_bytes())
        .map_err(|e| SessionError::Write { path: path.to_path_buf(), reason: e.to_string() })
}

/// Sessions written before the analyses kept their own settings held them beside the others
/// (`settings.msc`, `.cracks`, `.explain`, `.scale_space`): moves them under
/// `settings.analyses`, where the units look for them by the same keys.
fn move_analysis_settings(session: &mut serde_json::Value) {
    let Some(settings) = session.get_mut("settings").and_then(|s| s.as_object_mut()) else { return };
    for key in ["msc", "cracks", "explain", "scale_space"] {
        if let Some(v) = settings.remove(key) {
            let analyses = settings.entry("analyses").or_insert_with(|| serde_json::json!({}));
            if let Some(a) = analyses.as_object_mut() {
                a.entry(key).or_insert(v);
            }
        }
    }
}

/// Reads the session at `path` and restores it into `app`: settings at once, the view when its
/// field has loaded. A field that cannot be found is reported (by name), the rest restored.
pub fn open(app: &mut TopoApp, path: &Path) -> Result<(), SessionError> {
    let s = Session::read(path)?;
    let (last_dir, recent) = (app.settings.last_dir.take(), std::mem::take(&mut app.settings.recent));
    app.settings = s.settings;
    (app.settings.last_dir, app.settings.recent) = (last_dir, recent);
    app.units.restore_settings(&app.settings.analyses);
    app.auto_colormap = None;
    app.sigma = s.view.sigma;
    app.mask_on = s.view.mask_on;
    app.error = None;
    app.message = Some(format!("session {}", path.display()));
    // The session's layers replace those on screen; each is placed once its field is in.
    app.units.layers.clear();
    app.cancel(topoview_compute::layers::LAYERS);
    let mut missing = Vec::new();
    for l in &s.view.layers {
        match find(&l.path, l.relative.clone(), path) {
            Ok(p) => app.units.layers.restore(p, l.labels, l.style),
            Err(why) => missing.push(format!("layer: {why}")),
        }
    }
    match s.data {
        None => {
            app.message = Some(format!("session {}: no field was loaded in it", path.display()));
            // The field on screen follows the session's construction, filtration and σ.
            app.recompute();
        }
        Some(Source::Generated { dims, corr, seed }) => {
            app.generate_field(dims, corr, seed);
            app.pending_view = Some(s.view);
        }
        Some(Source::File { path: file, relative, raw, volume }) => {
            let opts = OpenOptions {
                raw: raw.map(|r| RawSpec {
                    dims: r.dims,
                    // Checked by `parse`.
                    dtype: topoview_core::field::Dtype::parse(&r.dtype)
                        .unwrap_or(topoview_core::field::Dtype::U8),
                    endian: if r.big_endian { Endian::Big } else { Endian::Little },
                    offset: r.offset,
                }),
                volume,
            };
            match find(&file, relative, path) {
                Ok(p) => {
                    app.open(p, opts);
                    app.pending_view = Some(s.view);
                }
                Err(why) => {
                    app.error = Some(format!("session {}: {why}; the settings are restored", path.display()));
                    app.recompute();
                }
            }
        }
    }
    if !missing.is_empty() {
        // Said once the field is in (loading clears the banner), or now when none loads.
        let said = format!("session {}: {}", path.display(), missing.join("; "));
        match app.error.take() {
            Some(e) => app.error = Some(format!("{e}; {}", missing.join("; "))),
            None if app.jobs.contains_key(&topoview_compute::jobs::LOAD) => app.deferred_error = Some(said),
            None => app.error = Some(said),
        }
    }
    Ok(())
}

/// Puts a session's view on the field just loaded (from [`TopoApp`]'s `loaded`, before its
/// curves are asked for, so the threshold and σ are the session's from the start).
pub fn apply(app: &mut TopoApp, v: View) {
    // The colormap is the session's, even gray on signed data.
    if app.auto_colormap.take().is_some() {
        app.settings.colormap = super::Colormap::Gray;
    }
    let Some(d) = &mut app.data else { return };
    if let Some(t) = v.threshold {
        d.threshold = t;
        d.threshold_chosen = v.threshold_chosen;
    }
    if let Some([lo, hi]) = v.window {
        d.window = (lo, hi);
    }
    app.pending_smoothed_window = v.smoothed_window.map(|w| (w[0], w[1]));
    d.show_smoothed = v.show_smoothed;
    app.sigma = v.sigma;
    let dims = d.field.dims();
    app.views.cursor = std::array::from_fn(|k| v.cursor[k].min(dims[k].saturating_sub(1)));
    for (n, s) in app.views.nav.iter_mut().zip(v.nav) {
        n.zoom = s[0];
        n.pan = [s[1], s[2]];
    }
    if let Some([iso, iso2]) = v.iso {
        app.view3d.keep(&d.field, iso, iso2);
    }
    app.units.msc.pending_level = v.simplification.map(|t| (t, v.show_smoothed && v.sigma > 0.0));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        let r = |p: &str, d: &str| relative_to(Path::new(p), Path::new(d));
        assert_eq!(r("/a/b/f.nii", "/a/b"), Some(PathBuf::from("f.nii")));
        assert_eq!(r("/a/b/f.nii", "/a/c/d"), Some(PathBuf::from("../../b/f.nii")));
        assert_eq!(r("/x.png", "/a"), Some(PathBuf::from("../x.png")));
    }

    #[test]
    fn bad_sessions_are_refused_with_the_file_and_the_reason() {
        let p = Path::new("/tmp/s.json");
        let good = Session {
            format: FORMAT.into(),
            version: VERSION,
            data: Some(Source::Generated { dims: vec![64, 64], corr: 2.0, seed: 3 }),
            settings: Settings::default(),
            view: View { threshold: Some(0.5), sigma: 1.5, ..View::default() },
        };
        let text = good.to_json();
        assert_eq!(Session::parse(&text, p).unwrap_or_else(|e| panic!("{e}")), good);
        let err = |t: &str| Session::parse(t, p).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err("{").starts_with("/tmp/s.json: not a topoview session"), "{}", err("{"));
        assert!(err(r#"{"format": "other", "version": 1}"#).contains("no \"format\""));
        let newer = text.replace("\"version\": 1", "\"version\": 7");
        assert!(err(&newer).contains("newer topoview (session version 7"), "{}", err(&newer));
        let far = text.replace("\"sigma\": 1.5", "\"sigma\": 80.0");
        assert!(err(&far).contains("σ = 80"), "{}", err(&far));
        let huge = text.replace("64,\n", "100000,\n");
        assert!(err(&huge).contains("cannot be generated"), "{}", err(&huge));
        // Settings left out take their defaults (older sessions, hand-written ones).
        let bare =
            r#"{"format": "topoview-session", "version": 1, "data": null, "settings": {}, "view": {}}"#;
        let s = Session::parse(bare, p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.settings, s.view), (Settings::default(), View::default()));
    }

    /// A session written before the analyses kept their own settings has them beside the
    /// others: they arrive under `analyses`, by the same keys.
    #[test]
    fn older_sessions_give_the_analyses_their_settings() {
        let old = r#"{"format": "topoview-session", "version": 1, "data": null, "view": {},
            "settings": {"colormap": "Magma", "msc": {"labels": "Basins"}, "scale_space": {"thresholds": 64}}}"#;
        let s = Session::parse(old, Path::new("/tmp/old.json")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.settings.colormap, super::super::Colormap::Magma);
        assert_eq!(s.settings.analyses["msc"], serde_json::json!({"labels": "Basins"}));
        assert_eq!(s.settings.analyses["scale_space"], serde_json::json!({"thresholds": 64}));
    }

    /// A device or a pipe named as the session is refused before reading (it would not end).
    #[test]
    fn a_device_or_a_pipe_is_no_session() {
        let e = Session::read(Path::new("/dev/zero")).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with("/dev/zero: is not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("s.json");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let e = Session::read(&fifo).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("is not a regular file"), "{e}");
    }
}
