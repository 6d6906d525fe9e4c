//! Point clouds in the viewer: a cloud read from a file (File > Open, drag and drop) or taken
//! from the image on screen, its Vietoris-Rips barcode computed on the worker
//! ([`topoview_compute::rips`]), shown as a barcode and a persistence diagram beside a 3D
//! scatter ([`super::cloud_view`]) with the complex drawn at a chosen radius.

use super::barcode_plot;
pub use super::barcode_plot::PICKED;
use super::{Analysis, Arrival, Owner};
use crate::app::TopoApp;
use crate::app::numbers::{duration, group, short};
use crate::app::tiles::{Column, PaneData, PaneSpec};
use crate::render::camera::Camera;
use egui::RichText;
use std::path::PathBuf;
use std::sync::Arc;
use topoview_compute::rips::{CloudJob, CloudPoints, CloudSource, FirstBarcode, RIPS, RipsJob, RipsResult};
use topoview_compute::{JobId, Outcome};
use topoview_core::io::points::PointFormat;
use topoview_core::topo::ecc::Filtration;
use topoview_core::topo::rips::Barcode;
use topoview_core::topo::rips::RipsOptions;
use topoview_core::topo::rips::image_points::ImageTake;

/// What the point-cloud view shows and how.
pub struct CloudState {
    /// The last barcode computed, with its cloud.
    pub result: Option<RipsResult>,
    /// Whether the window shows the cloud (else the image).
    pub shown: bool,
    /// The options of the next computation.
    pub maxdim: usize,
    pub threshold: Option<f32>,
    /// The filtration radius the complex is drawn at.
    pub radius: f32,
    /// The bar picked (index into the result's sorted bars).
    pub selected: Option<usize>,
    pub camera: Camera,
    /// The coordinates drawn as x, y and z (columns of the points).
    pub axes: [usize; 3],
    pub colour: ColourBy,
    pub point_size: f32,
    pub edges: bool,
    pub triangles: bool,
    /// How to take points from the image.
    pub take: TakeForm,
    /// Bumped with every new result (caches of the drawing follow it).
    pub version: u64,
    /// The complex last drawn.
    pub drawn: Option<super::cloud_view::Drawn>,
    /// The cloud the view was last framed on (a new one is framed afresh).
    framed: Option<Arc<topoview_compute::rips::Cloud>>,
    /// The points are drawn and their barcode is being computed.
    pub pending: bool,
    /// The threshold chosen for a large cloud's first barcode, when one was.
    pub first: Option<FirstBarcode>,
    /// When the barcode under way was asked for, and how long the last one took (s).
    asked_at: Option<std::time::Instant>,
    seconds: Option<f64>,
}

/// Edges a cloud's first barcode keeps at most. On the 2-core VM, cyclooctane's 6,040 points
/// took 0.6 s at 0.7 M edges, 6.6 s at 3.0 M and 32 s at 9.0 M; all 11.2 M took 99 s as #54
/// reports it.
const FIRST_EDGES: usize = 1_000_000;

/// How the barcode's time grows with its edges (from the timings of [`FIRST_EDGES`]: 1.46
/// to 1.63), for the full barcode's estimate.
const TIME_EXPONENT: f64 = 1.6;

/// What colours the points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ColourBy {
    /// One coordinate of the points.
    Column(usize),
    /// Distance from the cloud's centroid (in the space of all its coordinates).
    Centroid,
    /// One colour for all.
    Plain,
}

/// The form for points taken from the image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TakeForm {
    pub kind: TakeKind,
    /// Critical points of this index only.
    pub index: Option<u8>,
    /// Simplification of the complex, as a fraction of the value range.
    pub relative: f64,
    pub count: usize,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TakeKind {
    Critical,
    Set,
    Components,
}

impl Default for CloudState {
    fn default() -> Self {
        CloudState {
            result: None,
            shown: false,
            maxdim: 1,
            threshold: None,
            radius: 0.0,
            selected: None,
            camera: Camera::default(),
            axes: [0, 1, 2],
            colour: ColourBy::Centroid,
            point_size: 3.0,
            edges: true,
            triangles: true,
            take: TakeForm { kind: TakeKind::Set, index: None, relative: 0.05, count: 500, seed: 1 },
            version: 0,
            drawn: None,
            framed: None,
            pending: false,
            first: None,
            asked_at: None,
            seconds: None,
        }
    }
}

impl CloudState {
    fn options(&self) -> RipsOptions {
        RipsOptions { maxdim: self.maxdim, threshold: self.threshold.unwrap_or(f32::INFINITY) }
    }
}

/// Whether `path` names a point cloud or distance matrix (by its extension or, for Ripser's
/// files, its name) rather than an image.
pub fn is_point_file(path: &std::path::Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    POINT_TYPES.contains(&ext) || name.contains("distance_matrix")
}

/// The extensions of point clouds and distance matrices.
pub const POINT_TYPES: &[&str] =
    &["csv", "tsv", "txt", "xyz", "npy", "ply", "point_cloud", "lower_distance_matrix", "distance_matrix"];

impl CloudState {
    /// Reads the cloud at `path` and computes its barcode.
    pub fn open(&mut self, app: &mut TopoApp, path: PathBuf) {
        let what = format!("Rips persistence of {}", path.display());
        self.new_points();
        app.settings.opened(&path);
        self.submit(app, CloudSource::File { path, format: PointFormat::Auto }, what);
    }

    /// Takes points from the image on screen as the form says, and computes their barcode.
    fn take_from_image(&mut self, app: &mut TopoApp) {
        let Some(d) = &app.data else { return };
        let f = self.take;
        let filtration = app.settings.filtration();
        let take = match f.kind {
            TakeKind::Critical => {
                let (lo, hi) = d.displayed_summary().range.unwrap_or((0.0, 0.0));
                ImageTake::Critical { index: f.index, persistence: Some(f.relative * (hi - lo)) }
            }
            TakeKind::Set => ImageTake::Set { level: d.threshold, filtration, count: f.count, seed: f.seed },
            TakeKind::Components => ImageTake::Components {
                level: d.threshold,
                filtration,
                construction: app.settings.construction,
            },
        };
        let name = d.path.as_ref().map_or(d.source.clone(), |p| p.display().to_string());
        let source = CloudSource::Image { field: d.displayed().clone(), name, take };
        self.new_points();
        self.submit(app, source, "Rips persistence of points from the image".into());
    }

    /// Computes the barcode of the cloud on screen again, with the options set now.
    fn recompute(&mut self, app: &mut TopoApp) {
        if let Some(r) = &self.result {
            let what = format!("Rips persistence up to dimension {}", self.maxdim);
            self.submit(app, CloudSource::Held(r.cloud.clone()), what);
        }
    }

    /// Other points are coming: the last cloud's threshold (a radius of its own) is forgotten,
    /// and its barcode leaves the screen rather than stand for theirs meanwhile.
    fn new_points(&mut self) {
        self.threshold = None;
        self.result = None;
        self.selected = None;
        self.framed = None;
        self.drawn = None;
        self.pending = false;
        self.first = None;
    }

    /// Reads or takes the points (drawn as soon as they are in), then computes their barcode.
    fn submit(&mut self, app: &mut TopoApp, source: CloudSource, what: String) {
        if let CloudSource::Held(cloud) = source {
            let opts = self.options();
            self.asked_at = Some(std::time::Instant::now());
            app.submit(
                Owner::Unit(self.name()),
                RipsJob { source: CloudSource::Held(cloud), opts },
                Some(what),
            );
        } else {
            // A first barcode of a few seconds, unless the user set a threshold.
            let first_edges = self.threshold.is_none().then_some(FIRST_EDGES);
            app.submit(Owner::Unit(self.name()), CloudJob { source, first_edges }, Some(what));
        }
        self.shown = true;
    }

    /// The points arrived: drawn at once, with no barcode yet, whose computation starts (with
    /// the threshold of a first barcode when the job chose one).
    fn points_arrived(&mut self, app: &mut TopoApp, p: CloudPoints) {
        let CloudPoints { cloud, first } = p;
        let points = cloud.distances.len();
        let none = Barcode { maxdim: self.maxdim, points, bars: Vec::new() };
        self.show_result(RipsResult { cloud: cloud.clone(), opts: self.options(), barcode: none }, false);
        self.pending = true;
        // A threshold the user typed while the points were read stands.
        if let Some(f) = first.filter(|_| self.threshold.is_none()) {
            self.threshold = Some(f.threshold);
            self.first = Some(f);
        }
        let what = format!("Rips persistence of {} points", points);
        self.submit(app, CloudSource::Held(cloud), what);
    }

    /// The full barcode's time, scaled from the first one's by its edges.
    pub fn full_estimate(&self) -> Option<f64> {
        let f = self.first?;
        Some(self.seconds? * (f.all as f64 / f.edges.max(1) as f64).powf(TIME_EXPONENT))
    }

    /// A barcode (or the points without one) arrived: shown, with the view framed on a new cloud
    /// and the radius where the bars say (`first_bars`: the points' own were shown before).
    fn show_result(&mut self, r: RipsResult, first_bars: bool) {
        let c = self;
        let same = c.framed.as_ref().is_some_and(|old| Arc::ptr_eq(old, &r.cloud));
        c.framed = Some(r.cloud.clone());
        c.selected = None;
        c.version += 1;
        if first_bars || !same {
            c.radius = default_radius(&r);
        }
        if !same {
            let dim = r.cloud.dim().unwrap_or(3);
            c.axes = [0, 1.min(dim - 1), 2.min(dim - 1)];
            if dim < 3 {
                c.axes[2] = usize::MAX;
            }
            c.colour = ColourBy::Centroid;
            let (center, radius) = super::cloud_view::bounds(&r, c.axes);
            // Planar points and a matrix's placement (its first two axes hold the most) are seen
            // from above.
            let flat = dim < 3 || r.cloud.embedded.is_some();
            c.camera = Camera { yaw: -90.0, pitch: if flat { 90.0 } else { 20.0 }, ..Camera::default() }
                .framing(center, radius);
        }
        if r.opts.threshold.is_finite() {
            // Nothing is drawn past the threshold: no edge is in the complex there.
            c.radius = c.radius.min(r.opts.threshold);
        }
        // The view was switched to the cloud when the job was asked for; an image opened since
        // keeps the window.
        c.result = Some(r);
    }
}

impl Analysis for CloudState {
    fn name(&self) -> &'static str {
        "point cloud"
    }

    /// An image arrived: the cloud (a file's, or taken from the last image) goes, and the
    /// image is shown.
    fn arrived(&mut self, app: &mut TopoApp, _arrival: Arrival) {
        if app.jobs.contains_key(&RIPS) {
            app.cancel(RIPS);
        }
        let take = self.take;
        *self = CloudState { take, ..CloudState::default() };
    }

    fn stopped(&mut self, _app: &mut TopoApp, _id: JobId, _why: &crate::app::Stop) {
        // The points stay drawn; the panel offers to compute the barcode again.
        self.pending = false;
        self.asked_at = None;
    }

    fn accept(&mut self, app: &mut TopoApp, _id: JobId, outcome: Outcome) -> Result<(), Outcome> {
        let outcome = match outcome.take::<CloudPoints>() {
            Ok(p) => {
                self.points_arrived(app, p);
                return Ok(());
            }
            Err(o) => o,
        };
        let r = outcome.take::<RipsResult>()?;
        self.seconds = self.asked_at.take().map(|t| t.elapsed().as_secs_f64());
        let first_bars = std::mem::take(&mut self.pending);
        self.show_result(r, first_bars);
        Ok(())
    }

    /// The image panel's section: points taken from the image, for Rips persistence.
    fn panel(&mut self, app: &mut TopoApp, ui: &mut egui::Ui) {
        image_section(self, app, ui);
    }

    fn panes(&self) -> &'static [PaneSpec] {
        &[
            PaneSpec { id: "Point cloud", data: PaneData::Cloud, column: Column::Views },
            PaneSpec { id: "Barcode", data: PaneData::Cloud, column: Column::Plots },
            PaneSpec { id: "Diagram", data: PaneData::Cloud, column: Column::Plots },
        ]
    }

    fn pane(&mut self, app: &mut TopoApp, ui: &mut egui::Ui, id: &str) {
        match id {
            "Point cloud" => super::cloud_view::show(app, self, ui),
            "Barcode" => barcode_pane(self, ui),
            "Diagram" => diagram_pane(self, ui),
            other => {
                ui.label(format!("The point cloud has no view called {other}."));
            }
        }
    }
}

/// Where the complex is first drawn: in the middle of the longest bar of the highest
/// dimension that has finite bars (a loop shows as a ring of edges), else where the last
/// components join.
fn default_radius(r: &RipsResult) -> f32 {
    let finite = |d: usize| r.barcode.of_dim(d).filter(|b| b.death.is_finite());
    for dim in (1..=r.barcode.maxdim).rev() {
        if let Some(b) = finite(dim).max_by(|a, b| (a.death - a.birth).total_cmp(&(b.death - b.birth))) {
            return (b.birth + b.death) / 2.0;
        }
    }
    finite(0).map(|b| b.death).fold(0.0, f32::max)
}

/// The right-hand panel while the cloud is shown: what it is, the computation's options, the
/// barcode and the persistence diagram, the bar picked.
pub fn cloud_panel(c: &mut CloudState, app: &mut TopoApp, ui: &mut egui::Ui) {
    ui.heading("Vietoris-Rips persistence");
    let mut compute = false;
    ui.horizontal_wrapped(|ui| {
        ui.label("Up to dimension");
        for k in 0..=2 {
            ui.selectable_value(&mut c.maxdim, k, format!("H{k}"));
        }
    });
    ui.horizontal_wrapped(|ui| {
        let mut limited = c.threshold.is_some();
        ui.checkbox(&mut limited, "Edges no longer than")
            .on_hover_text("Ripser's threshold: longer edges are left out (classes alive then never die)");
        if limited && c.threshold.is_none() {
            c.threshold = Some(c.radius.max(f32::MIN_POSITIVE));
        } else if !limited {
            c.threshold = None;
        }
        if let Some(t) = &mut c.threshold {
            ui.add(egui::DragValue::new(t).speed(0.01).range(0.0..=f32::MAX));
        }
    });
    let busy = app.jobs.contains_key(&RIPS);
    let image = app.data.is_some();
    ui.horizontal_wrapped(|ui| {
        let stale = c.pending || c.result.as_ref().is_some_and(|r| r.opts != c.options());
        compute = ui
            .add_enabled(stale && !busy, egui::Button::new("Compute with these options"))
            .on_disabled_hover_text("The barcode shown has these options")
            .clicked();
        if ui.add_enabled(image, egui::Button::new("Back to the image")).clicked() {
            c.shown = false;
        }
    });
    if compute {
        c.recompute(app);
    }
    let Some(r) = &c.result else {
        ui.label(if busy { "Computing…" } else { "No point cloud yet: open one (File > Open)." });
        return;
    };
    ui.label(RichText::new(&r.cloud.what).strong());
    if let Some(p) = &r.cloud.path {
        let name = p.file_name().map_or(p.display().to_string(), |n| n.to_string_lossy().into_owned());
        ui.weak(name).on_hover_text(p.display().to_string());
    }
    let mut full = false;
    if c.pending {
        ui.label(if busy {
            "Computing the barcode… (the points are drawn)"
        } else {
            "No barcode: compute it."
        });
        return;
    }
    if let Some(f) = c.first.filter(|f| f.threshold == r.opts.threshold) {
        ui.label(format!(
            "A first barcode: edges up to {} ({} of the {} that matter), so that it came in seconds; \
             classes alive at that length never die here.",
            short(f.threshold.into()),
            group(f.edges),
            group(f.all)
        ));
        let estimate = c.full_estimate().map_or(String::new(), |s| format!(" (about {})", duration(s)));
        if ui
            .add_enabled(!busy, egui::Button::new(format!("Compute the full barcode{estimate}")))
            .on_hover_text(
                "Every edge up to the enclosing radius; the estimate scales this barcode's time by the edges",
            )
            .clicked()
        {
            full = true;
        }
    }
    let counts: Vec<String> = r
        .barcode
        .counts()
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let inf = r.barcode.of_dim(k).filter(|b| b.death.is_infinite()).count();
            let alive = if r.opts.threshold.is_finite() { "alive at the threshold" } else { "essential" };
            format!("H{k}: {n} bar{} ({inf} {alive})", if *n == 1 { "" } else { "s" })
        })
        .collect();
    ui.label(counts.join(" · "));
    let t = r.opts.threshold;
    ui.weak(if t.is_finite() {
        format!("threshold {}", short(t.into()))
    } else {
        "no threshold".to_string()
    });
    ui.separator();
    barcode_plot::legend(ui, r.barcode.maxdim);
    ui.label("The barcode and the diagram are views beside the cloud: click a bar or a point.");
    if let Some(bar) = c.selected.and_then(|i| r.barcode.bars.get(i)) {
        let names = |s: u64, k: usize| {
            let v: Vec<String> = r.barcode.vertices(s, k).iter().map(|v| v.to_string()).collect();
            format!("[{}]", v.join(", "))
        };
        let death = short(bar.death.into());
        ui.label(RichText::new(format!("H{} bar [{}, {death})", bar.dim, short(bar.birth.into()))).strong());
        ui.label(format!("created by {} (points {})", simplex_word(bar.dim), names(bar.creator, bar.dim)));
        match bar.killer {
            Some(k) => ui.label(format!(
                "killed by {} (points {})",
                simplex_word(bar.dim + 1),
                names(k, bar.dim + 1)
            )),
            None if t.is_finite() => ui.label(format!(
                "still alive at the threshold {} (no longer edge is in the complex)",
                short(t.into())
            )),
            None => ui.label("never killed (an essential class)"),
        };
    }
    if full {
        c.threshold = None;
        c.first = None;
        c.recompute(app);
    }
}

/// The barcode as a pane of the central area.
fn barcode_pane(c: &mut CloudState, ui: &mut egui::Ui) {
    let Some(r) = &c.result else {
        ui.label("No barcode yet.");
        return;
    };
    barcode_plot::barcode(ui, &r.barcode, r.opts.threshold, &mut c.radius, &mut c.selected);
}

/// The persistence diagram of the barcode as a pane of the central area.
fn diagram_pane(c: &mut CloudState, ui: &mut egui::Ui) {
    let Some(r) = &c.result else {
        ui.label("No barcode yet.");
        return;
    };
    barcode_plot::diagram(ui, &r.barcode, r.opts.threshold, &mut c.radius, &mut c.selected);
}

fn simplex_word(dim: usize) -> &'static str {
    ["the point", "the edge", "the triangle", "the tetrahedron", "the 4-simplex"][dim.min(4)]
}

/// The image panel's section: points taken from the image, for Rips persistence.
fn image_section(c: &mut CloudState, app: &mut TopoApp, ui: &mut egui::Ui) {
    let Some(d) = &app.data else { return };
    let level = d.threshold;
    let mut go = false;
    egui::CollapsingHeader::new("Rips persistence of points from the image").show(ui, |ui| {
        let f = &mut c.take;
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut f.kind, TakeKind::Set, "Set voxels");
            ui.selectable_value(&mut f.kind, TakeKind::Components, "Component centroids");
            ui.selectable_value(&mut f.kind, TakeKind::Critical, "Critical points");
        });
        let filtration = app.settings.filtration();
        let set = if filtration == Filtration::Superlevel { "≥" } else { "≤" };
        match f.kind {
            TakeKind::Set => {
                ui.horizontal_wrapped(|ui| {
                    ui.label(format!("Voxels with value {set} {level:.4}, at most"));
                    ui.add(egui::DragValue::new(&mut f.count).range(2..=20_000));
                    ui.label("seed");
                    ui.add(egui::DragValue::new(&mut f.seed));
                });
            }
            TakeKind::Components => {
                ui.label(format!("Centroids of the components of the set {set} {level:.4}"));
            }
            TakeKind::Critical => {
                ui.horizontal_wrapped(|ui| {
                    ui.label("Simplified to");
                    ui.add(egui::Slider::new(&mut f.relative, 0.0..=0.5).show_value(true));
                    ui.label("of the range");
                });
                ui.horizontal_wrapped(|ui| {
                    ui.label("Index");
                    ui.selectable_value(&mut f.index, None, "all");
                    for k in 0..=3u8 {
                        ui.selectable_value(&mut f.index, Some(k), k.to_string());
                    }
                });
            }
        }
        ui.label("In world coordinates (the affine, else the spacing); the threshold is the one on screen.");
        go =
            ui.add_enabled(!app.jobs.contains_key(&RIPS), egui::Button::new("Compute the barcode")).clicked();
    });
    if go {
        c.take_from_image(app);
    }
}
