//! Analyses as units. Each analysis the viewer offers beyond the field and its curve (Betti
//! curves and parts, the scale-space, the Morse-Smale complex, edges between pixels, layers,
//! point clouds) is one type that implements [`Analysis`]: it owns its state, asks the worker
//! for its jobs through [`TopoApp::submit`], takes their results, hears of their failure or
//! cancellation, draws its section of the side panel, and forgets what it held when another
//! dataset arrives. The app keeps them in [`Analyses`] and routes each finished job to the
//! unit that submitted it; a result no unit takes is reported as an error, never dropped.
//!
//! A unit also draws over the slices ([`Analysis::draw_slice`]) and the 3D view
//! ([`Analysis::draw_volume`]), adds curves to the ECC plot ([`Analysis::plot_curves`]) and its
//! own panes to the central tiles ([`Analysis::panes`]),
//! and keeps its settings between runs and in sessions ([`Analysis::settings`]).
//!
//! A new analysis is its algorithm (in core), its unit (a module here, with its job when the
//! worker runs it), and one line in the `analyses!` list below.

pub mod cloud;
pub mod cracks;
pub mod explain;
pub mod layers;
pub mod msc;
pub mod scale_space;

mod barcode_plot;
mod cloud_view;
pub mod msc_labels;
pub mod msc_overlay;

use super::TopoApp;
use super::curve_panel::PlotCurve;
use super::tiles::PaneSpec;
use super::view3d::VolumeCanvas;
use super::views::SliceCanvas;
use topoview_compute::{JobId, Outcome};

/// Who submitted a job: the app itself (the field, its curve, its smoothing) or a unit, by
/// its [`Analysis::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    App,
    Unit(&'static str),
}

/// What the units hear when a field arrives (what kind it is, they read from `app.data`).
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    /// Another volume of the series on screen, or a session's field: the user's analysis
    /// settings stay (results of the last field still go).
    pub keep_settings: bool,
}

/// Why a unit's job gave nothing.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    Cancelled,
    /// Failed with this message (the app shows it as an error too).
    Failed(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Cancelled => f.write_str("cancelled"),
            Stop::Failed(m) => f.write_str(m),
        }
    }
}

/// One analysis of the viewer (see the module's comment).
pub trait Analysis {
    /// Its name: the owner of its jobs, how errors name it, and its panes' owner in the
    /// layouts kept between runs (so it does not change from one version to the next).
    fn name(&self) -> &'static str;
    /// A field arrived: forget every result and overlay of the last one; set the defaults that
    /// suit it (`app.data`) unless `arrival.keep_settings`.
    fn arrived(&mut self, app: &mut TopoApp, arrival: Arrival);
    /// Asks the worker for what it shows and does not have yet (called every frame).
    fn request(&mut self, _app: &mut TopoApp) {}
    /// A job it submitted finished: takes the output, or gives it back when it is of no type
    /// the unit takes (the app then reports it).
    fn accept(&mut self, app: &mut TopoApp, id: JobId, outcome: Outcome) -> Result<(), Outcome>;
    /// A job it submitted was cancelled or failed.
    fn stopped(&mut self, _app: &mut TopoApp, _id: JobId, _why: &Stop) {}
    /// Its section of the side panel, while an image is shown.
    fn panel(&mut self, app: &mut TopoApp, ui: &mut egui::Ui);
    /// Clears what it draws over the views (File > Clear overlays); results stay.
    fn clear_overlays(&mut self, _app: &mut TopoApp) {}
    /// Draws its part of `depth` over one slice view (each unit in turn, once per depth).
    fn draw_slice(&mut self, _app: &mut TopoApp, _canvas: &mut SliceCanvas, _depth: Depth) {}
    /// Offers what the 3D view draws of it (the view draws the first marks and the first
    /// voxel colours offered).
    fn draw_volume(&mut self, _app: &TopoApp, _canvas: &mut VolumeCanvas) {}
    /// Curves it adds to the ECC plot, beside χ.
    fn plot_curves(&self, _app: &TopoApp) -> Vec<PlotCurve<'_>> {
        Vec::new()
    }
    /// The panes it adds to the central tiles.
    fn panes(&self) -> &'static [PaneSpec] {
        &[]
    }
    /// Draws its pane `id` (one of [`Analysis::panes`]).
    fn pane(&mut self, _app: &mut TopoApp, _ui: &mut egui::Ui, _id: &str) {}
    /// The key its settings are kept under in sessions and between runs; None when it keeps
    /// none.
    fn settings_key(&self) -> Option<&'static str> {
        None
    }
    /// Its settings to keep, under [`Analysis::settings_key`] (see [`kept_settings`]).
    fn settings(&self) -> Option<serde_json::Value> {
        None
    }
    /// Takes back settings kept under its key (from an older or edited file too: what does not
    /// read keeps its default).
    fn restore_settings(&mut self, _kept: &serde_json::Value) {}
}

/// What a slice view draws, in this order: the field, then each depth's overlays of every
/// unit, then the crosshair and the caption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Whole volumes over the field (layers).
    Volumes,
    /// Translucent colourings of regions (manifolds, components).
    Regions,
    /// Lines and points (critical points and arcs, edges, tunnels).
    Marks,
}

impl Depth {
    pub const ALL: [Depth; 3] = [Depth::Volumes, Depth::Regions, Depth::Marks];
}

/// A unit's settings as kept, for [`Analysis::settings`].
pub fn kept_settings<T: serde::Serialize>(settings: &T) -> Option<serde_json::Value> {
    // Plain data: serialising cannot fail (a failure keeps nothing rather than aborting).
    serde_json::to_value(settings).ok()
}

/// Settings kept as `kept`, or the defaults when they do not read (fields missing from them
/// take their defaults through `#[serde(default)]`).
pub fn restored<T: serde::de::DeserializeOwned + Default>(kept: &serde_json::Value) -> T {
    serde_json::from_value(kept.clone()).unwrap_or_default()
}

/// Declares [`Analyses`] from one list of `field: Type` (see the foot of this file).
macro_rules! analyses {
    ($($field:ident: $unit:ty),* $(,)?) => {
        /// The viewer's analyses, in the order of their panels.
        #[derive(Default)]
        pub struct Analyses {
            $(pub $field: $unit,)*
        }

        impl Analyses {
            /// Every unit, for what the app does to all of them.
            pub fn all_mut(&mut self) -> Vec<&mut dyn Analysis> {
                vec![$(&mut self.$field as &mut dyn Analysis),*]
            }

            /// Every unit, to read.
            pub fn all(&self) -> Vec<&dyn Analysis> {
                vec![$(&self.$field as &dyn Analysis),*]
            }
        }
    };
}

analyses! {
    explain: explain::ExplainLayer,
    msc: msc::MscUnit,
    scale_space: scale_space::ScaleSpaceLayer,
    cracks: cracks::CrackLayer,
    layers: layers::Layers,
    cloud: cloud::CloudState,
}

impl Analyses {
    /// The unit called `name`.
    pub fn named(&mut self, name: &str) -> Option<&mut dyn Analysis> {
        self.all_mut().into_iter().find(|u| u.name() == name)
    }

    /// Every unit's settings, by key.
    pub fn settings(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        self.all().into_iter().filter_map(|u| Some((u.settings_key()?.to_string(), u.settings()?))).collect()
    }

    /// Gives each unit its settings kept in `kept` (a unit whose key is missing keeps its own).
    pub fn restore_settings(&mut self, kept: &std::collections::BTreeMap<String, serde_json::Value>) {
        for u in self.all_mut() {
            if let Some(key) = u.settings_key()
                && let Some(v) = kept.get(key)
            {
                u.restore_settings(v);
            }
        }
    }
}

impl std::fmt::Debug for Analyses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyses")
    }
}

impl TopoApp {
    /// Runs `f` with the units beside the app (they are taken out for the call, so that a
    /// unit can have the app mutably). Meanwhile `self.units` is an empty stand-in: nothing in
    /// `f` may reach a unit through it (what must is deferred to after the frame's panels).
    pub fn with_units<R>(&mut self, f: impl FnOnce(&mut Analyses, &mut TopoApp) -> R) -> R {
        let mut units = std::mem::take(&mut self.units);
        let r = f(&mut units, self);
        self.units = units;
        r
    }

    /// Tells every unit that a dataset arrived.
    pub(super) fn units_arrived(&mut self, arrival: Arrival) {
        self.with_units(|units, app| {
            for u in units.all_mut() {
                u.arrived(app, arrival);
            }
        });
    }

    /// Routes a finished job's output to the unit that asked for it; an output nobody takes
    /// becomes an error the user sees.
    pub(super) fn route_done(&mut self, owner: Option<Owner>, id: JobId, lane: &str, outcome: Outcome) {
        let refused = match owner {
            Some(Owner::App) => self.finished(outcome).err().map(|_| "the viewer".to_string()),
            Some(Owner::Unit(name)) => self.with_units(|units, app| match units.named(name) {
                Some(u) => u.accept(app, id, outcome).err().map(|_| format!("the {name} analysis")),
                None => Some(format!("an analysis called {name}, which the viewer does not have")),
            }),
            None => Some("no analysis (none asked for it)".to_string()),
        };
        if let Some(who) = refused {
            self.error = Some(format!(
                "a result of the {lane} job reached {who} and was not shown; please report this"
            ));
        }
    }

    /// Tells the unit that asked for job `id` that it stopped.
    pub(super) fn route_stopped(&mut self, owner: Option<Owner>, id: JobId, why: Stop) {
        if let Some(Owner::Unit(name)) = owner {
            self.with_units(|units, app| {
                if let Some(u) = units.named(name) {
                    u.stopped(app, id, &why);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::settings::Settings;
    use cracks::CrackColor;
    use msc::LabelOverlay;

    /// The units' settings go out with the others and come back to fresh units, through RON
    /// (eframe's storage) and JSON (sessions) alike.
    #[test]
    fn the_units_settings_come_back_through_ron_and_json() {
        let mut units = Analyses::default();
        units.msc.settings.labels = LabelOverlay::Basins;
        units.msc.settings.auto_voxels = 12_345;
        units.cracks.settings.scales = vec![0.5, 3.0];
        units.cracks.settings.color = CrackColor::Orientation;
        units.explain.settings.betti = true;
        units.scale_space.settings.thresholds = 100;
        let kept = Settings { analyses: units.settings(), ..Settings::default() };
        let keys: Vec<&str> = kept.analyses.keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["cracks", "explain", "msc", "scale_space"]);
        let ron_text = ron::ser::to_string_pretty(&kept, ron::ser::PrettyConfig::default()).unwrap();
        let json_text = serde_json::to_string(&kept).unwrap();
        for back in [ron::from_str::<Settings>(&ron_text).unwrap(), serde_json::from_str(&json_text).unwrap()]
        {
            let mut fresh = Analyses::default();
            fresh.restore_settings(&back.analyses);
            assert_eq!(fresh.msc.settings, units.msc.settings);
            assert_eq!(fresh.cracks.settings, units.cracks.settings);
            assert_eq!(fresh.explain.settings, units.explain.settings);
            assert_eq!(fresh.scale_space.settings, units.scale_space.settings);
        }
    }

    /// Settings that do not read leave the defaults; missing fields take theirs; values out of
    /// range are brought back into it.
    #[test]
    fn unreadable_settings_leave_the_defaults() {
        let mut units = Analyses::default();
        let kept = serde_json::json!({
            "msc": "not an object",
            "cracks": {"orientations": 4},
            "scale_space": {"thresholds": 1_000_000, "step": -1.0},
        });
        let kept = kept.as_object().unwrap().clone().into_iter().collect();
        units.restore_settings(&kept);
        let defaults = Analyses::default();
        assert_eq!(units.msc.settings, defaults.msc.settings);
        assert_eq!(units.cracks.settings.orientations, 4);
        assert_eq!(units.cracks.settings.scales, defaults.cracks.settings.scales);
        assert_eq!(units.scale_space.settings.thresholds, 4096);
        assert_eq!(units.scale_space.settings.step, 0.25);
    }
}
