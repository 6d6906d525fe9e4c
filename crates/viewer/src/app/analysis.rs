//! Analyses as units. Each analysis the viewer offers beyond the field and its curve (Betti
//! curves and parts, the scale-space, the Morse-Smale complex, edges between pixels, layers,
//! point clouds) is one type that implements [`Analysis`]: it owns its state, asks the worker
//! for its jobs through [`TopoApp::submit`], takes their results, hears of their failure or
//! cancellation, draws its section of the side panel, and forgets what it held when another
//! dataset arrives. The app keeps them in [`Analyses`] and routes each finished job to the
//! unit that submitted it; a result no unit takes is reported as an error, never dropped.
//!
//! A new analysis is its algorithm (core, and a job in compute), its unit (a module here), and
//! one field in [`Analyses`] with its entry in [`Analyses::all_mut`].

use super::TopoApp;
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
    /// Its name: the owner of its jobs, and how errors name it.
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
}

/// The viewer's analyses, in the order of their panels.
#[derive(Default)]
pub struct Analyses {
    pub explain: super::explain::ExplainLayer,
    pub scale_space: super::scale_space::ScaleSpaceLayer,
    pub msc: super::msc_panel::MscUnit,
    pub cracks: super::crack_layer::CrackLayer,
    pub layers: super::layers::Layers,
    pub cloud: super::cloud::CloudState,
}

impl Analyses {
    /// Every unit, for what the app does to all of them.
    pub fn all_mut(&mut self) -> [&mut dyn Analysis; 6] {
        [
            &mut self.explain,
            &mut self.scale_space,
            &mut self.msc,
            &mut self.cracks,
            &mut self.layers,
            &mut self.cloud,
        ]
    }

    /// The unit called `name`.
    pub fn named(&mut self, name: &str) -> Option<&mut dyn Analysis> {
        self.all_mut().into_iter().find(|u| u.name() == name)
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
