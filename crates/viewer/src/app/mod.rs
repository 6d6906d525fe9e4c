//! The viewer: an eframe app that shows a field in slice views, its Euler characteristic curve,
//! and the threshold mask, with every computation on the [`topoview_compute`] worker.
//!
//! Layout: menu bar on top, status bar at the bottom, the side panel on the right (the field's
//! controls, then each analysis's section), the views and plots as tiles in the centre
//! ([`tiles`]). The field on screen and what the user set for it live here, in `TopoApp`; each
//! analysis (Betti curves and parts, the Morse-Smale complex, the scale-space, edges, layers,
//! point clouds) is a unit in [`analyses`] that holds its own state and draws its own part.

mod actions;
pub mod analyses;
mod curve_panel;
pub mod dataset;
pub mod exports;
pub mod file_dialog;
pub mod gesture;
pub mod numbers;
pub mod session;
pub mod settings;
mod side;
pub mod tiles;
mod transfer_editor;
pub mod view3d;
pub mod views;

use crate::render::colormap::Colormap;
use crate::render::gpu_volume::{GpuVolume, UploadProgress};
use crate::render::slice::SliceRenderer;
use crate::render::transfer::TransferFunction;
use crate::render::volume::{self, mask_threshold};
use crate::render::volume3d::VolumeRenderer;
use analyses::{Analyses, Arrival, Owner, Stop, cloud};
use crossbeam_channel::{Receiver, Sender};
use dataset::Dataset;
use settings::{Settings, View3dSettings};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use topoview_compute::jobs::{self, Ecc, Generate, Loaded, Open, Smooth, Smoothed};
use topoview_compute::{Curve, Event, Job, JobId, Lane, Outcome, Worker};
use topoview_core::io::OpenOptions;
use topoview_core::topo::ecc::{EccOptions, NanPolicy};
use views::ViewState;

/// How a field that arrives relates to the one on screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Continuity {
    /// Opened, generated or read from a session.
    NewField,
    /// A layer over the field became the field (the scene the user built stays).
    LayerMadeImage,
}

/// Progress of a job, for the status bar.
#[derive(Clone, Debug, Default)]
pub struct JobProgress {
    pub what: String,
    pub stage: &'static str,
    pub fraction: Option<f32>,
}

/// How the app was started.
#[derive(Default)]
pub struct Startup {
    pub file: Option<PathBuf>,
    pub open: OpenOptions,
    /// Benchmark mode: scroll the axial slice for this many frames, then print frame times and quit.
    pub bench_frames: Option<usize>,
    /// In benchmark mode, start smoothing with this sigma halfway through.
    pub bench_sigma: Option<f64>,
    pub launched: Option<Instant>,
    pub backend: topoview_compute::backend::Choice,
    /// Device memory the GPU ECC may use for a field's slabs.
    pub gpu_memory: Option<usize>,
    /// GPUs the ECC shares a field among.
    pub gpus: topoview_compute::backend::GpuCount,
    /// A session to restore (in place of `file`).
    pub session: Option<PathBuf>,
    /// Files to show as layers over the field.
    pub layers: Vec<PathBuf>,
}

pub struct TopoApp {
    worker: Worker,
    pub settings: Settings,
    pub data: Option<Dataset>,
    pub views: ViewState,
    pub view3d: view3d::View3dState,
    /// Running jobs by lane.
    pub jobs: std::collections::HashMap<Lane, JobProgress>,
    /// The last failure, shown until dismissed.
    pub error: Option<String>,
    /// Information for the user from the last action (export written, display subsampled...).
    pub message: Option<String>,
    pub sigma: f64,
    pub mask_on: bool,
    last_job: Option<(String, f64)>,
    /// The job the user cancelled last (shown in the status bar until another one finishes).
    pub cancelled: Option<String>,
    /// The window title last set (it carries the file name).
    title: String,
    /// The field whose texture is on the GPU (by address) and its display stride.
    uploaded: Option<(usize, usize)>,
    /// How far the volume's upload to the GPU has come (it may take several frames).
    pub upload: Option<UploadProgress>,
    /// Whether eframe runs on wgpu (the slice views draw with it).
    has_renderer: bool,
    /// Why the GPU cannot draw the 3D view (the slice views still work), if it cannot.
    no_3d: Option<String>,
    /// The user's colormap while a signed field is shown with the diverging one in its place.
    auto_colormap: Option<Colormap>,
    exports_tx: Sender<exports::Written>,
    exports_rx: Receiver<exports::Written>,
    grf_dialog: bool,
    frames: FrameClock,
    /// Whether the status bar shows the readouts that change from run to run (memory, frame and
    /// job times); tests turn them off, so that a picture depends on the state alone.
    pub volatile_readouts: bool,
    bench: Option<bench::FrameBench>,
    /// The analyses beyond the field and its curve, each a unit with its own state.
    pub units: Analyses,
    /// Who asked for each job under way, and its lane (a result goes to its owner).
    routes: std::collections::HashMap<JobId, (Lane, Owner)>,
    /// A session's view, put on its field when the field has loaded.
    pending_view: Option<session::View>,
    /// A session's window for the smoothed field, applied when the smoothed field arrives.
    pending_smoothed_window: Option<(f64, f64)>,
    /// An error to show once the first field has loaded (loading clears the banner).
    deferred_error: Option<String>,
    /// The file dialogs: whether the desktop's works, and the in-app one while open.
    pub dialogs: file_dialog::Dialogs,
    /// The volume of a 4D file asked for with the slider, while it loads.
    pub volume_requested: Option<usize>,
    /// A file action a unit asked for, run after the frame's panels (its answer may go to a
    /// unit, which must be in place).
    deferred_action: Option<file_dialog::Action>,
    /// The central area's layouts, one per kind of data.
    pub layouts: tiles::Layouts,
    /// A field to show that a unit handed over (a layer made the image), taken at the next
    /// frame, when the units are back in place.
    handed_over: Option<Loaded>,
    /// Input held back to the next frame (a press and its release that came in one).
    pub held_input: gesture::HeldInput,
}

mod bench;

/// Frame-to-frame times and the process's memory, for the status bar.
#[derive(Default)]
struct FrameClock {
    last: Option<Instant>,
    recent: std::collections::VecDeque<f32>,
    first_frame: bool,
    /// Resident memory in MiB and when it was read (once a second, not per frame).
    resident: Option<(Instant, Option<f64>)>,
}

impl FrameClock {
    fn resident_mib(&mut self) -> Option<f64> {
        let stale = self.resident.is_none_or(|(at, _)| at.elapsed().as_secs_f32() >= 1.0);
        if stale {
            let mib = topoview_core::mem::resident_bytes().map(|b| b as f64 / (1 << 20) as f64);
            self.resident = Some((Instant::now(), mib));
        }
        self.resident.and_then(|(_, m)| m)
    }

    fn tick(&mut self) -> Option<f32> {
        let now = Instant::now();
        let dt = self.last.map(|l| (now - l).as_secs_f32() * 1000.0);
        self.last = Some(now);
        if let Some(d) = dt {
            self.recent.push_back(d);
            if self.recent.len() > 60 {
                self.recent.pop_front();
            }
        }
        dt
    }

    fn mean_ms(&self) -> Option<f32> {
        (!self.recent.is_empty()).then(|| self.recent.iter().sum::<f32>() / self.recent.len() as f32)
    }
}

/// Where the bundled data live: next to the executable's repository, or the working directory.
pub fn asset(name: &str) -> PathBuf {
    // The repository's assets, two levels above this crate.
    let mut candidates = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets").join(name)];
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.insert(0, dir.join("assets").join(name));
    }
    candidates.push(Path::new("assets").join(name));
    candidates.iter().find(|p| p.exists()).cloned().unwrap_or_else(|| candidates.remove(0))
}

pub const DEMO_VOLUME: &str = "mni152_t1_09a.nii.gz";

/// Time a frame may spend uploading the volume to the GPU; the rest follows in later frames.
const UPLOAD_BUDGET: std::time::Duration = std::time::Duration::from_millis(8);

impl TopoApp {
    pub fn new(cc: &eframe::CreationContext<'_>, startup: Startup) -> TopoApp {
        let mut settings: Settings =
            cc.storage.and_then(|s| eframe::get_value(s, eframe::APP_KEY)).unwrap_or_default();
        if let Some(older) =
            cc.storage.and_then(|s| eframe::get_value::<settings::LegacyAnalysisSettings>(s, eframe::APP_KEY))
        {
            older.move_into(&mut settings.analyses);
        }
        settings.view3d.transfer.sanitize();
        install_fonts(&cc.egui_ctx);
        let mut no_3d = None;
        let has_renderer = cc
            .wgpu_render_state
            .as_ref()
            .map(|rs| {
                SliceRenderer::install(rs);
                no_3d = VolumeRenderer::unsupported(&rs.adapter, &rs.device.limits());
                if no_3d.is_none() {
                    VolumeRenderer::install(rs);
                }
            })
            .is_some();
        let ctx = cc.egui_ctx.clone();
        let worker = Worker::spawn_on(
            Box::new(move || ctx.request_repaint()),
            startup.backend,
            startup.gpu_memory,
            startup.gpus,
        );
        let (exports_tx, exports_rx) = crossbeam_channel::unbounded();
        let bench =
            startup.bench_frames.map(|n| bench::FrameBench::new(n, startup.bench_sigma, startup.launched));
        let mut app = TopoApp {
            worker,
            settings,
            data: None,
            views: ViewState::default(),
            view3d: Default::default(),
            jobs: Default::default(),
            error: None,
            message: None,
            sigma: 0.0,
            mask_on: true,
            last_job: None,
            cancelled: None,
            title: String::new(),
            uploaded: None,
            upload: None,
            has_renderer,
            no_3d,
            auto_colormap: None,
            exports_tx,
            exports_rx,
            grf_dialog: false,
            frames: FrameClock { first_frame: true, ..Default::default() },
            volatile_readouts: true,
            bench,
            units: Default::default(),
            routes: Default::default(),
            pending_view: None,
            pending_smoothed_window: None,
            deferred_error: None,
            dialogs: Default::default(),
            volume_requested: None,
            handed_over: None,
            deferred_action: None,
            layouts: tiles::Layouts::load(cc.storage),
            held_input: Default::default(),
        };
        app.units.restore_settings(&app.settings.analyses);
        if let Some(s) = startup.session {
            match session::open(&mut app, &s) {
                Ok(()) => return app,
                Err(e) => app.error = Some(e.to_string()),
            }
        }
        let file = startup.file.unwrap_or_else(|| asset(DEMO_VOLUME));
        app.open(file, startup.open);
        for l in startup.layers {
            app.units.layers.add(l);
        }
        // A refused session: said once the demo volume has loaded (loading clears the banner).
        app.deferred_error = app.error.take();
        app
    }

    /// What runs the computations, in words.
    pub fn backend(&self) -> &str {
        self.worker.backend()
    }

    pub fn open(&mut self, path: PathBuf, opts: OpenOptions) {
        if cloud::is_point_file(&path) {
            return self.with_units(|u, app| u.cloud.open(app, path));
        }
        // A session's view belongs to the field it opened, not to one opened since.
        self.pending_view = None;
        let what = format!("Opening {}", path.display());
        self.submit(Owner::App, Open { path, opts }, Some(what));
    }

    /// Treats the field on screen as intensities (`false`) or as a label map (`true`), with the
    /// colours that go with it; intensities get their curve.
    pub fn set_labels(&mut self, labels: bool) {
        let Some(d) = &mut self.data else { return };
        d.labels = labels;
        d.analyse_labels = false;
        if labels {
            self.auto_colormap.get_or_insert(self.settings.colormap);
            self.settings.colormap = Colormap::Labels;
        } else {
            if let Some(own) = self.auto_colormap.take() {
                self.settings.colormap = own;
            }
            self.recompute();
        }
    }

    /// Computes the curve of a label map's ids, which the user asked for.
    pub fn analyse_labels(&mut self) {
        if let Some(d) = &mut self.data {
            d.analyse_labels = true;
        }
        self.recompute();
    }

    /// Shows volume `index` of the 4D file on screen (read again from the file, on the worker;
    /// the view stays where it is).
    pub fn show_volume(&mut self, index: usize) {
        let Some(d) = &self.data else { return };
        let topoview_compute::jobs::Origin::File { path, opts } = &d.origin else { return };
        let opts = OpenOptions { volume: Some(index), ..opts.clone() };
        self.open(path.clone(), opts);
        self.volume_requested = Some(index);
    }

    pub fn generate(&mut self) {
        let g = self.settings.grf;
        let dims = if g.three_d { vec![g.size; 3] } else { vec![g.size; 2] };
        self.generate_field(dims, g.corr, g.seed);
    }

    /// Generates a seeded Gaussian random field on the worker.
    pub fn generate_field(&mut self, dims: Vec<usize>, corr: f64, seed: u64) {
        self.pending_view = None;
        self.submit(Owner::App, Generate { dims, corr, seed }, Some("Generating a random field".into()));
    }

    pub fn ecc_options(&self) -> EccOptions {
        EccOptions {
            construction: self.settings.construction,
            filtration: self.settings.filtration(),
            nan: NanPolicy::Absent,
            ..Default::default()
        }
    }

    /// (Re)computes the curves after the field or the curve options changed.
    pub fn recompute(&mut self) {
        let opts = self.ecc_options();
        let Some(d) = &mut self.data else { return };
        if !d.analysed() {
            return;
        }
        let field = d.field.clone();
        self.submit(Owner::App, Ecc { field, opts }, Some("ECC".into()));
        self.resmooth();
    }

    /// Starts smoothing with the current sigma (superseding any smoothing under way), or drops
    /// the smoothed field when sigma is 0.
    pub fn resmooth(&mut self) {
        let opts = self.ecc_options();
        let Some(d) = &mut self.data else { return };
        if self.sigma <= 0.0 {
            self.worker.cancel(jobs::SMOOTH);
            self.jobs.remove(&jobs::SMOOTH);
            d.smoothed = None;
            return;
        }
        let field = d.field.clone();
        let sigma = self.sigma;
        self.submit(Owner::App, Smooth { field, sigma, opts }, Some(format!("Smoothing, σ = {sigma}")));
    }

    /// Queues `job` for `owner` (its result goes there), superseding the lane's older job;
    /// `what` names it in the status bar (None: too quick to list).
    pub fn submit<J: Job>(&mut self, owner: Owner, job: J, what: Option<String>) -> JobId {
        let lane = job.lane();
        // A superseded job's events never come (the worker drops them): its route goes.
        self.routes.retain(|_, (l, _)| *l != lane);
        let id = self.worker.submit(job);
        self.routes.insert(id, (lane, owner));
        if let Some(what) = what {
            self.jobs.insert(lane, JobProgress { what, ..Default::default() });
        }
        id
    }

    /// Cancels the lane's job; its owner hears of it.
    pub fn cancel(&mut self, lane: Lane) {
        let id = self.worker.pending(lane);
        self.worker.cancel(lane);
        self.jobs.remove(&lane);
        if let Some(id) = id {
            let owner = self.routes.remove(&id).map(|r| r.1);
            self.route_stopped(owner, id, Stop::Cancelled);
        }
    }

    /// The status bar's Cancel: stops the lane's job and says so until another job finishes.
    pub fn cancel_by_user(&mut self, lane: Lane) {
        if let Some(j) = self.jobs.get(&lane) {
            self.cancelled = Some(j.what.clone());
        }
        self.cancel(lane);
    }

    /// Applies every event the worker has sent since the last frame.
    fn drain_events(&mut self) {
        while let Some(e) = self.worker.poll() {
            match e {
                Event::Progress { lane, stage, done, total, .. } => {
                    if let Some(j) = self.jobs.get_mut(&lane) {
                        j.stage = stage;
                        j.fraction = (total > 0).then(|| (done as f64 / total as f64).min(1.0) as f32);
                    }
                }
                Event::Done { id, lane, outcome, seconds, note } => {
                    let what = self.jobs.remove(&lane).map_or_else(|| lane.0.to_string(), |j| j.what);
                    self.cancelled = None;
                    if note.is_some() {
                        self.message = note;
                    }
                    self.last_job = Some((what, seconds));
                    let owner = self.routes.remove(&id).map(|r| r.1);
                    self.route_done(owner, id, lane.0, outcome);
                }
                Event::Failed { id, lane, message } => {
                    self.jobs.remove(&lane);
                    if lane == jobs::LOAD {
                        // A session's view was for the field that did not come.
                        self.pending_view = None;
                    }
                    self.error = Some(message.clone());
                    let owner = self.routes.remove(&id).map(|r| r.1);
                    self.route_stopped(owner, id, Stop::Failed(message));
                }
                Event::Cancelled { id, lane } => {
                    self.jobs.remove(&lane);
                    if lane == jobs::LOAD {
                        self.pending_view = None;
                    }
                    let owner = self.routes.remove(&id).map(|r| r.1);
                    self.route_stopped(owner, id, Stop::Cancelled);
                }
            }
        }
        while let Ok(r) = self.exports_rx.try_recv() {
            match r {
                Ok(path) => self.message = Some(format!("wrote {}", path.display())),
                Err(e) => self.error = Some(e.to_string()),
            }
        }
    }

    /// Takes the output of a job of the app's own (the field, its curve, its smoothing), or
    /// gives it back when it is none of those.
    fn finished(&mut self, outcome: Outcome) -> Result<(), Outcome> {
        let outcome = match outcome.take::<Loaded>() {
            Ok(l) => {
                self.loaded(l, Continuity::NewField);
                return Ok(());
            }
            Err(o) => o,
        };
        let outcome = match outcome.take::<Curve>() {
            Ok(e) => {
                self.curve(e);
                return Ok(());
            }
            Err(o) => o,
        };
        self.smoothed(outcome.take::<Smoothed>()?);
        Ok(())
    }

    /// Shows a field that arrived. Every unit forgets what it held of the last one; another
    /// volume of the series on screen keeps the view, the window, a threshold the user chose
    /// and the analysis settings, as do a session's field and a layer made the image.
    fn loaded(&mut self, l: Loaded, continuity: Continuity) {
        if let Some(p) = &l.path {
            self.settings.opened(p);
        }
        let same_series = self.data.as_ref().filter(|d| {
            d.path.is_some()
                && d.path == l.path
                && d.field.series.is_some()
                && l.field.series.is_some()
                && d.field.dims() == l.field.dims()
        });
        self.volume_requested = None;
        let kept = same_series.map(|d| (d.window, d.threshold_chosen.then_some(d.threshold)));
        if kept.is_none() {
            self.views.reset(l.field.dims());
        }
        // Label maps get the label palette and signed data the diverging map in place of
        // gray, for this field only: the user's own choice comes back with the next field and
        // is what gets saved.
        if let Some(own) = self.auto_colormap.take() {
            self.settings.colormap = own;
        }
        self.message = load_message(&l.field.notes, l.summary.non_finite);
        let mut data = Dataset::new(l);
        if data.labels && self.settings.colormap != Colormap::Labels {
            self.auto_colormap = Some(self.settings.colormap);
            self.settings.colormap = Colormap::Labels;
        } else if data.summary.signed && self.settings.colormap == Colormap::Gray {
            self.auto_colormap = Some(Colormap::Gray);
            self.settings.colormap = Colormap::CoolWarm;
        }
        if let Some((window, threshold)) = kept {
            data.window = window;
            if let Some(t) = threshold {
                data.threshold = t;
                data.threshold_chosen = true;
            }
        }
        let keep_settings =
            kept.is_some() || self.pending_view.is_some() || continuity == Continuity::LayerMadeImage;
        if !keep_settings {
            // The analysis settings of the last field go; the user's preferences stay.
            self.sigma = 0.0;
            self.mask_on = true;
            let v = &mut self.settings.view3d;
            v.clip = View3dSettings::default().clip;
            v.transfer = if data.summary.signed {
                let (lo, hi) = data.window;
                TransferFunction::both_tails(((0.0 - lo) / (hi - lo)) as f32)
            } else {
                TransferFunction::default()
            };
        }
        self.data = Some(data);
        self.error = self.deferred_error.take();
        self.pending_smoothed_window = None;
        self.units_arrived(Arrival { keep_settings });
        if let Some(v) = self.pending_view.take() {
            session::apply(self, v);
        }
        self.recompute();
    }

    fn curve(&mut self, e: Curve) {
        if let Some(d) = &mut self.data {
            d.set_curve(e);
        }
    }

    fn smoothed(&mut self, s: Smoothed) {
        if let Some(b) = &mut self.bench {
            b.smoothed();
        }
        if let Some(d) = &mut self.data {
            d.set_smoothed(s);
            if let Some(w) = self.pending_smoothed_window.take() {
                d.smoothed_window = Some(w);
            }
        }
    }

    /// Starts uploading the displayed field when it changed (once per data change), and goes
    /// on with an upload under way: at most [`UPLOAD_BUDGET`] of it per frame.
    fn sync_texture(&mut self, frame: &eframe::Frame, ctx: &egui::Context) {
        let (Some(d), Some(rs)) = (&self.data, frame.wgpu_render_state()) else { return };
        let f = d.displayed();
        let key = Arc::as_ptr(f) as usize;
        if self.uploaded.is_some_and(|(k, _)| k == key) {
            if self.upload.is_some_and(|p| p.planes < p.of) {
                self.step_upload(rs, ctx);
            }
            return;
        }
        let up = GpuVolume::begin(rs, f.clone());
        if up.stride > 1 {
            self.message = Some(format!(
                "The volume is larger than the GPU's 3D texture limits: shown at every {}th voxel \
                 ({} MiB on the GPU); analysis uses every voxel.",
                up.stride,
                up.bytes >> 20
            ));
        }
        self.uploaded = Some((key, up.stride));
        self.step_upload(rs, ctx);
    }

    fn step_upload(&mut self, rs: &eframe::egui_wgpu::RenderState, ctx: &egui::Context) {
        self.upload = GpuVolume::step(rs, UPLOAD_BUDGET);
        match self.upload {
            Some(p) if p.planes < p.of => ctx.request_repaint(),
            _ => {
                if let Some(b) = &mut self.bench {
                    b.uploaded();
                }
            }
        }
    }

    /// "file.nii.gz (volume 3 of 10) - topoview": the window title names the field on screen.
    fn set_title(&mut self, ctx: &egui::Context) {
        let cloud = self.units.cloud.result.as_ref().filter(|_| self.units.cloud.shown);
        let title = match &self.data {
            _ if cloud.is_some() => {
                let c = &cloud.map(|r| &r.cloud);
                let name =
                    c.and_then(|c| c.path.as_ref()?.file_name()).map(|n| n.to_string_lossy().into_owned());
                format!("{} - topoview", name.unwrap_or_else(|| "points from the image".into()))
            }
            Some(d) => {
                let name = d
                    .path
                    .as_ref()
                    .and_then(|p| p.file_name())
                    .map_or(d.source.clone(), |n| n.to_string_lossy().into_owned());
                let volume =
                    d.field.series.map_or(String::new(), |s| format!(" (volume {} of {})", s.index, s.count));
                format!("{name}{volume} - topoview")
            }
            None => "topoview".to_string(),
        };
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    /// View > Clear overlays: the mask and what every analysis draws over the views go (their
    /// results stay, to be shown again).
    pub fn clear_overlays(&mut self) {
        self.mask_on = false;
        self.with_units(|units, app| {
            for u in units.all_mut() {
                u.clear_overlays(app);
            }
        });
    }

    /// The layout the central area shows: the cloud's, the 2D image's, or the volume's in the
    /// arrangement the View menu chose.
    pub fn arrangement(&self) -> tiles::Arrangement {
        match &self.data {
            _ if self.units.cloud.shown => tiles::Arrangement::Cloud,
            Some(d) if d.displayed().ndim() == 3 => tiles::Arrangement::Volume(self.settings.layout),
            _ => tiles::Arrangement::Image,
        }
    }

    /// The window's title now.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// Starts a job to write an export; the result appears in the status bar.
    fn export(&self, job: exports::Export, ctx: &egui::Context) {
        let ctx = ctx.clone();
        exports::spawn(job, self.exports_tx.clone(), move || ctx.request_repaint());
    }

    /// Opens the files dropped on the window (the first one; a volume viewer shows one field).
    fn take_dropped(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> =
            ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if let Some(p) = dropped.into_iter().next() {
            self.open(p, OpenOptions::default());
        }
    }

    /// The settings to keep, the units' own among them.
    pub fn settings_to_keep(&self) -> Settings {
        Settings { analyses: self.units.settings(), ..self.settings.clone() }
    }

    /// What the slice views draw the field with (a function of the fields it reads, so the
    /// views' own state can be borrowed beside it).
    fn look(settings: &Settings, mask_on: bool, d: &Dataset) -> views::Look {
        let (_, class) = volume::texel_format(d.displayed().dtype());
        // No threshold set over label ids (nothing is analysed there unless asked).
        let (mut mode, bits) = if mask_on && d.analysed() {
            mask_threshold(class, settings.filtration(), d.threshold)
        } else {
            (volume::MASK_OFF, 0)
        };
        if settings.mask_outline && mode != volume::MASK_OFF {
            mode |= volume::MASK_OUTLINE;
        }
        let [r, g, b] = settings.mask_rgb().map(|c| c as f32 / 255.0);
        views::Look {
            window: d.display_window(),
            range: d.displayed_summary().range,
            colormap: settings.colormap.row(),
            mask_mode: mode,
            threshold_bits: bits,
            mask_color: [r, g, b, settings.mask_opacity],
            radiological: settings.radiological,
        }
    }
}

impl eframe::App for TopoApp {
    /// A press and its release that came in one frame are given in two ([`gesture::HeldInput`]).
    fn raw_input_hook(&mut self, ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        if self.held_input.split(&mut raw_input.events) {
            ctx.request_repaint();
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let started = Instant::now();
        let dt = self.frames.tick();
        if std::mem::take(&mut self.frames.first_frame)
            && let Some(b) = &mut self.bench
        {
            b.first_frame();
        }
        let ctx = ui.ctx().clone();
        gesture::allow_slow_clicks(&ctx, ctx.input(|i| i.unstable_dt));
        self.drain_events();
        self.take_dropped(&ctx);
        if let Some(l) = self.handed_over.take() {
            self.loaded(l, Continuity::LayerMadeImage);
        }
        if let Some(b) = &mut self.bench {
            let depth = self.data.as_ref().filter(|_| self.uploaded.is_some()).map(|d| d.field.dims()[2]);
            b.step(dt, &mut self.views, &mut self.sigma, depth, &ctx);
            if b.wants_smoothing() {
                self.resmooth();
            }
        }
        self.with_units(|units, app| {
            for u in units.all_mut() {
                u.request(app);
            }
        });
        let sync = Instant::now();
        let uploading = self.upload.is_none_or(|p| p.planes < p.of);
        self.sync_texture(frame, &ctx);
        if let Some(b) = self.bench.as_mut().filter(|_| uploading && self.uploaded.is_some()) {
            b.uploading(dt, sync.elapsed().as_secs_f32() * 1000.0);
        }

        self.set_title(&ctx);
        egui::Panel::top("menu").show(ui, |ui| side::menu_bar(self, ui));
        egui::Panel::bottom("status").show(ui, |ui| side::status_bar(self, ui));
        let cloud = self.units.cloud.shown;
        egui::Panel::right("ecc").resizable(true).default_size(420.0).min_size(300.0).show(ui, |ui| {
            // Not shrunk to its rows (they wrap): the panel keeps the width the user gave it.
            egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
                if cloud {
                    self.with_units(|u, app| cloud::cloud_panel(&mut u.cloud, app, ui))
                } else {
                    side::ecc_panel(self, ui)
                }
            });
        });
        egui::CentralPanel::default().show(ui, |ui| side::central(self, ui));
        // A right-drag on a slice set window and level.
        if let (Some(w), Some(d)) = (self.views.window_dragged.take(), &mut self.data) {
            *d.window_mut() = w;
        }
        if let Some(a) = self.deferred_action.take() {
            actions::ask(self, a, &ctx);
        }
        side::grf_window(self, &ctx);
        actions::shortcuts(self, &ctx);
        actions::show_dialog(self, &ctx);
        if let Some(b) = &mut self.bench {
            b.ui_time(started.elapsed().as_secs_f32() * 1000.0);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        let mut saved = self.settings_to_keep();
        if let Some(own) = self.auto_colormap {
            saved.colormap = own;
        }
        eframe::set_value(storage, eframe::APP_KEY, &saved);
        eframe::set_value(storage, tiles::STORAGE_KEY, &self.layouts);
    }
}

/// Puts DejaVu Sans's Greek letters before egui's fonts (egui's default font draws χ much like
/// an x, and χ is on every readout; see assets/NOTICE.md), and makes small captions legible
/// at the default scale (egui's are 9 points).
pub fn install_fonts(ctx: &egui::Context) {
    const GREEK: &[u8] = include_bytes!("../../../../assets/fonts/dejavu_sans_greek.ttf");
    let mut fonts = egui::FontDefinitions::default();
    fonts.font_data.insert("dejavu-greek".into(), Arc::new(egui::FontData::from_static(GREEK)));
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        fonts.families.entry(family).or_default().insert(0, "dejavu-greek".into());
    }
    ctx.set_fonts(fonts);
    ctx.all_styles_mut(|style| {
        style.text_styles.insert(egui::TextStyle::Small, egui::FontId::proportional(11.0));
    });
}

/// What the user is told about a field just loaded: the reader's notes and the NaN warning,
/// both (neither hides the other).
fn load_message(notes: &[String], non_finite: usize) -> Option<String> {
    let mut all = notes.to_vec();
    if non_finite > 0 {
        all.push(format!("{non_finite} NaN or infinite samples: NaN voxels are left out of every set."));
    }
    (!all.is_empty()).then(|| all.join(" "))
}

/// Runs the viewer window (blocking until it is closed).
pub fn run(startup: Startup) -> Result<(), eframe::Error> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("topoview")
            .with_inner_size([1400.0, 900.0])
            .with_drag_and_drop(true),
        renderer: eframe::Renderer::Wgpu,
        multisampling: 0,
        depth_buffer: 0,
        ..Default::default()
    };
    eframe::run_native("topoview", options, Box::new(|cc| Ok(Box::new(TopoApp::new(cc, startup)))))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_nan_warning_keeps_the_readers_notes() {
        let notes = vec!["colour image converted to luminance".to_string()];
        let m = super::load_message(&notes, 3).unwrap_or_default();
        assert!(m.contains("luminance") && m.contains("3 NaN"), "{m}");
        assert_eq!(super::load_message(&[], 0), None);
    }
}
