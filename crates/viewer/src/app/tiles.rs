//! The central area as tiles (egui_tiles): each view (a slice, the 3D view, the ECC plot, the
//! persistence diagram, the scale-space map, the point cloud, its barcode and diagram) is a
//! pane that can be resized, dragged by its tab into another place, and maximised (the tab
//! bar's Maximise, or a double-click on the tab) and restored. Each kind of data (a 2D image,
//! a volume in each of the View menu's arrangements, a point cloud) has its own layout, kept
//! between runs; View > Reset layout brings back the default.

use super::analyses::{Analyses, Depth};
use super::settings::Layout;
use super::{TopoApp, views};
use egui_tiles::{Behavior, Container, Grid, GridLayout, Linear, LinearDir, TileId, Tiles, Tree, UiResponse};
use std::collections::BTreeMap;

/// One view of the central area.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Pane {
    /// The slice whose display normal is the axis (0 sagittal, 1 coronal, 2 axial; a 2D
    /// image is its axial slice).
    Slice(usize),
    View3d,
    /// The Euler characteristic curve, with the Betti curves when they are asked for.
    Curve,
    /// A pane of an analysis: its unit's [`super::analyses::Analysis::name`] and the pane's
    /// [`PaneSpec::id`].
    Of {
        unit: String,
        pane: String,
    },
}

impl Pane {
    /// Pane `id` of the unit called `unit`.
    pub fn of(unit: &str, id: &str) -> Pane {
        Pane::Of { unit: unit.into(), pane: id.into() }
    }

    fn title(&self, two_d: bool) -> &str {
        match self {
            Pane::Slice(_) if two_d => "Image",
            Pane::Slice(n) => ["Sagittal", "Coronal", "Axial"][(*n).min(2)],
            Pane::View3d => "3D",
            Pane::Curve => "Curves",
            Pane::Of { pane, .. } => pane,
        }
    }
}

/// A pane an analysis adds ([`super::analyses::Analysis::panes`]).
#[derive(Clone, Copy, Debug)]
pub struct PaneSpec {
    /// Its title, which also names it in the layouts kept (so it does not change).
    pub id: &'static str,
    /// The data it belongs with: its default layouts are those of this kind of data.
    pub data: PaneData,
    /// Where the default layouts put it.
    pub column: Column,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneData {
    /// An image or a volume.
    Field,
    /// A point cloud.
    Cloud,
}

/// The default layouts' two columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// The views, on the left.
    Views,
    /// The plots, on the right: the first on top, the others as tabs below it.
    Plots,
}

/// Every analysis's panes, with the unit they belong to, in the units' order.
pub fn unit_panes(units: &Analyses) -> Vec<(Pane, PaneSpec)> {
    units
        .all()
        .into_iter()
        .flat_map(|u| u.panes().iter().map(move |s| (Pane::of(u.name(), s.id), *s)))
        .collect()
}

/// Which layout the central area shows: one for each kind of data and arrangement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrangement {
    Image,
    Volume(Layout),
    Cloud,
}

impl Arrangement {
    fn key(self) -> String {
        match self {
            Arrangement::Image => "image".into(),
            Arrangement::Volume(Layout::Grid) => "volume grid".into(),
            Arrangement::Volume(Layout::Volume) => "volume 3d".into(),
            Arrangement::Volume(Layout::Single(w)) => format!("volume slice {w}"),
            Arrangement::Cloud => "cloud".into(),
        }
    }

    /// The default: the views on the left, the plots on the right (the first above, the
    /// others as tabs below); `extra` are the analyses' panes.
    fn default_tree(self, extra: &[(Pane, PaneSpec)]) -> Tree<Pane> {
        let mut tiles = Tiles::default();
        let id = egui::Id::unique(("topoview tiles", self.key()));
        let data = if self == Arrangement::Cloud { PaneData::Cloud } else { PaneData::Field };
        let theirs = |column: Column| {
            extra.iter().filter(move |(_, s)| s.data == data && s.column == column).map(|(p, _)| p.clone())
        };
        let (mut views, mut plots) = match self {
            Arrangement::Image => (vec![Pane::Slice(2)], vec![Pane::Curve]),
            Arrangement::Volume(Layout::Grid) => {
                (vec![Pane::Slice(2), Pane::Slice(1), Pane::Slice(0), Pane::View3d], vec![Pane::Curve])
            }
            Arrangement::Volume(Layout::Volume) => (vec![Pane::View3d], vec![Pane::Curve]),
            Arrangement::Volume(Layout::Single(w)) => (vec![Pane::Slice(w.min(2))], vec![Pane::Curve]),
            Arrangement::Cloud => (Vec::new(), Vec::new()),
        };
        views.extend(theirs(Column::Views));
        plots.extend(theirs(Column::Plots));
        let views: Vec<TileId> = views.into_iter().map(|p| tiles.insert_pane(p)).collect();
        let views = match views.len() {
            0 | 1 => views.first().copied(),
            // Slices and the 3D view two by two, as the View menu's grid.
            _ if self == Arrangement::Volume(Layout::Grid) => {
                let mut grid = Grid::new(views);
                grid.layout = GridLayout::Columns(2);
                Some(tiles.insert_container(grid))
            }
            _ => Some(tiles.insert_tab_tile(views)),
        };
        let plots = match plots.len() {
            0 => None,
            1 => Some(tiles.insert_pane(plots.remove(0))),
            _ => {
                let top = tiles.insert_pane(plots.remove(0));
                let below: Vec<TileId> = plots.into_iter().map(|p| tiles.insert_pane(p)).collect();
                let tabs = tiles.insert_tab_tile(below);
                Some(tiles.insert_vertical_tile(vec![top, tabs]))
            }
        };
        let root = match (views, plots) {
            (Some(views), Some(plots)) => {
                let mut linear = Linear::new(LinearDir::Horizontal, vec![views, plots]);
                linear.shares.set_share(views, 0.62);
                linear.shares.set_share(plots, 0.38);
                tiles.insert_container(Container::Linear(linear))
            }
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => tiles.insert_tab_tile(Vec::new()),
        };
        Tree::new(id, root, tiles)
    }
}

/// The layouts, by arrangement, and the pane maximised.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Layouts {
    trees: BTreeMap<String, Tree<Pane>>,
    #[serde(skip)]
    maximised: Option<TileId>,
}

impl std::fmt::Debug for Layouts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Layouts({} kept)", self.trees.len())
    }
}

/// The key layouts are stored under in eframe's storage.
pub const STORAGE_KEY: &str = "topoview-layouts";

impl Layouts {
    /// The layouts saved in `storage`, or the defaults (also when the saved ones do not read).
    pub fn load(storage: Option<&dyn eframe::Storage>) -> Layouts {
        storage.and_then(|s| eframe::get_value(s, STORAGE_KEY)).unwrap_or_default()
    }

    /// The tree of `a`, made from its default the first time (`extra`: the analyses' panes).
    fn tree(&mut self, a: Arrangement, extra: &[(Pane, PaneSpec)]) -> &mut Tree<Pane> {
        self.trees.entry(a.key()).or_insert_with(|| a.default_tree(extra))
    }

    /// Puts `a`'s layout back to its default (made again when next drawn).
    pub fn reset(&mut self, a: Arrangement) {
        self.trees.remove(&a.key());
        self.maximised = None;
    }

    /// The pane maximised, if one is.
    pub fn maximised(&self, a: Arrangement) -> Option<Pane> {
        let tree = self.trees.get(&a.key())?;
        self.maximised.and_then(|id| tree.tiles.get_pane(&id)).cloned()
    }

    /// Where each pane of `a`'s layout was drawn last frame (panes in a tab behind another
    /// are left out).
    pub fn pane_rects(&self, a: Arrangement) -> Vec<(Pane, egui::Rect)> {
        let Some(tree) = self.trees.get(&a.key()) else { return Vec::new() };
        tree.active_tiles()
            .into_iter()
            .filter_map(|id| Some((tree.tiles.get_pane(&id)?.clone(), tree.tiles.rect(id)?)))
            .collect()
    }
}

/// Draws the central area in `arrangement`'s layout.
pub fn show(app: &mut TopoApp, units: &mut Analyses, arrangement: Arrangement, ui: &mut egui::Ui) {
    let two_d = app.data.as_ref().is_some_and(|d| d.displayed().ndim() < 3);
    let mut layouts = std::mem::take(&mut app.layouts);
    let maximised = layouts.maximised(arrangement);
    let tree = layouts.tree(arrangement, &unit_panes(units));
    let mut panes = Panes { app, units, two_d, maximise: None };
    if let Some(pane) = maximised {
        let mut restore = false;
        ui.horizontal(|ui| {
            ui.strong(pane.title(two_d));
            restore = ui.button("Restore").on_hover_text("Back to the tiles (Esc)").clicked();
        });
        restore |= ui.input(|i| i.key_pressed(egui::Key::Escape));
        let rect = ui.available_rect_before_wrap();
        ui.scope_builder(egui::UiBuilder::new().max_rect(rect), |ui| draw_pane(&mut panes, ui, &pane));
        if restore {
            layouts.maximised = None;
        }
    } else {
        tree.ui(&mut panes, ui);
        if let Some(id) = panes.maximise {
            layouts.maximised = Some(id);
        }
    }
    panes.app.layouts = layouts;
}

/// The tiles' view of the app while they draw.
struct Panes<'a> {
    app: &'a mut TopoApp,
    units: &'a mut Analyses,
    two_d: bool,
    /// A pane whose tab asked to be maximised this frame.
    maximise: Option<TileId>,
}

impl Behavior<Pane> for Panes<'_> {
    fn pane_ui(&mut self, ui: &mut egui::Ui, _tile: TileId, pane: &mut Pane) -> UiResponse {
        draw_pane(self, ui, pane);
        UiResponse::None
    }

    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        pane.title(self.two_d).to_string().into()
    }

    fn top_bar_right_ui(
        &mut self,
        _tiles: &Tiles<Pane>,
        ui: &mut egui::Ui,
        _tile: TileId,
        tabs: &egui_tiles::Tabs,
        _scroll: &mut f32,
    ) {
        if ui.small_button("Maximise").on_hover_text("This view alone (double-click its tab too)").clicked() {
            self.maximise = tabs.active;
        }
    }

    fn on_tab_button(
        &mut self,
        _tiles: &mut Tiles<Pane>,
        tile: TileId,
        response: egui::Response,
    ) -> egui::Response {
        if response.double_clicked() {
            self.maximise = Some(tile);
        }
        response
    }

    fn simplification_options(&self) -> egui_tiles::SimplificationOptions {
        // Every pane has a tab: its title, the handle to drag it by, and Maximise.
        egui_tiles::SimplificationOptions { all_panes_must_have_tabs: true, ..Default::default() }
    }
}

/// Draws one pane into the space `ui` has.
fn draw_pane(p: &mut Panes, ui: &mut egui::Ui, pane: &Pane) {
    let app = &mut *p.app;
    let units = &mut *p.units;
    // Plots keep a few points from the pane's left edge: a rotated axis label's glyphs reach
    // past the plot's own rectangle, and were cut by the tile.
    let inset = |ui: &mut egui::Ui, draw: &mut dyn FnMut(&mut egui::Ui)| {
        let r = ui.available_rect_before_wrap();
        ui.scope_builder(egui::UiBuilder::new().max_rect(r.with_min_x(r.min.x + 6.0)), |ui| draw(ui));
    };
    match pane {
        Pane::Slice(n) => slice(app, units, ui, *n),
        Pane::View3d => view3d(app, units, ui),
        Pane::Curve => inset(ui, &mut |ui| super::curve_panel::pane(app, units, ui)),
        Pane::Of { unit, pane } => match units.named(unit) {
            Some(u) => inset(ui, &mut |ui| u.pane(app, ui, pane)),
            None => {
                // A layout kept by another version of topoview.
                ui.label(format!("No analysis called {unit} here: View > Reset layout."));
            }
        },
    }
}

/// A slice view: the field, each unit's overlays depth by depth, the crosshair and caption.
fn slice(app: &mut TopoApp, units: &mut Analyses, ui: &mut egui::Ui, n: usize) {
    let Some(d) = &app.data else { return };
    if !app.has_renderer {
        ui.label("No wgpu renderer: slice views are unavailable in this window.");
        return;
    }
    let field = d.displayed().clone();
    let n = if field.ndim() < 3 { 2 } else { n.min(2) };
    let look = TopoApp::look(&app.settings, app.mask_on, d);
    let rect = ui.available_rect_before_wrap();
    // Slot: which of the three view textures it draws with.
    let Some(mut canvas) = views::view(ui, rect, n, &field, &mut app.views, &look, 2 - n) else { return };
    for depth in Depth::ALL {
        for u in units.all_mut() {
            u.draw_slice(app, &mut canvas, depth);
        }
    }
    views::finish(canvas, &field, &mut app.views);
}

/// The 3D view, or why the GPU cannot draw it.
fn view3d(app: &mut TopoApp, units: &mut Analyses, ui: &mut egui::Ui) {
    let Some(d) = &app.data else { return };
    let rect = ui.available_rect_before_wrap();
    if d.displayed().ndim() < 3 {
        ui.label("The 3D view shows volumes.");
        return;
    }
    if let Some(why) = &app.no_3d {
        ui.painter().text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            why,
            egui::FontId::proportional(14.0),
            egui::Color32::LIGHT_RED,
        );
        return;
    }
    let field = d.displayed().clone();
    let stride = app.uploaded.map_or(1, |(_, s)| s);
    let voxels = app.settings.view3d.mode == crate::render::scene3d::Mode::ThresholdVoxels;
    let mut overlay = super::view3d::VolumeCanvas::new(stride, voxels, app.settings.mask_rgb());
    for u in units.all_mut() {
        u.draw_volume(app, &mut overlay);
    }
    let input = super::view3d::Inputs {
        field: &field,
        dataset: &d.field,
        stride,
        colormap: app.settings.colormap,
        window: d.display_window(),
        cursor: app.views.cursor,
        threshold: d.threshold,
        filtration: app.settings.filtration(),
        overlay,
    };
    super::view3d::show(ui, rect, &mut app.settings.view3d, &mut app.view3d, &input);
}
