//! The central area as tiles (egui_tiles): each view (a slice, the 3D view, the ECC plot, the
//! persistence diagram, the scale-space map, the point cloud, its barcode and diagram) is a
//! pane that can be resized, dragged by its tab into another place, and maximised (the tab
//! bar's Maximise, or a double-click on the tab) and restored. Each kind of data (a 2D image,
//! a volume in each of the View menu's arrangements, a point cloud) has its own layout, kept
//! between runs; View > Reset layout brings back the default.

use super::analysis::Analyses;
use super::settings::Layout;
use super::{TopoApp, views};
use egui_tiles::{Behavior, Container, Grid, GridLayout, Linear, LinearDir, TileId, Tiles, Tree, UiResponse};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One view of the central area.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Pane {
    /// The slice whose display normal is the axis (0 sagittal, 1 coronal, 2 axial; a 2D
    /// image is its axial slice).
    Slice(usize),
    View3d,
    /// The Euler characteristic curve, with the Betti curves when they are asked for.
    Curve,
    /// The Morse-Smale complex's persistence diagram and persistence curves.
    Diagram,
    ScaleSpace,
    /// The point cloud and the complex at the radius.
    Scatter,
    Barcode,
    CloudDiagram,
}

impl Pane {
    fn title(self, two_d: bool) -> &'static str {
        match self {
            Pane::Slice(_) if two_d => "Image",
            Pane::Slice(n) => ["Sagittal", "Coronal", "Axial"][n.min(2)],
            Pane::View3d => "3D",
            Pane::Curve => "Curves",
            Pane::Diagram => "Diagram",
            Pane::ScaleSpace => "Scale-space",
            Pane::Scatter => "Point cloud",
            Pane::Barcode => "Barcode",
            Pane::CloudDiagram => "Diagram",
        }
    }
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

    /// The default: the views on the left, the plots on the right (the curve above, the
    /// diagram and the scale-space as tabs below).
    fn default_tree(self) -> Tree<Pane> {
        let mut tiles = Tiles::default();
        let id = egui::Id::unique(("topoview tiles", self.key()));
        let column = |tiles: &mut Tiles<Pane>, top: Pane, below: &[Pane]| {
            let top = tiles.insert_pane(top);
            let below: Vec<TileId> = below.iter().map(|p| tiles.insert_pane(*p)).collect();
            let tabs = tiles.insert_tab_tile(below);
            tiles.insert_vertical_tile(vec![top, tabs])
        };
        let (views, plots) = match self {
            Arrangement::Image => (
                tiles.insert_pane(Pane::Slice(2)),
                column(&mut tiles, Pane::Curve, &[Pane::Diagram, Pane::ScaleSpace]),
            ),
            Arrangement::Volume(layout) => {
                let views = match layout {
                    Layout::Grid => {
                        let panes = [Pane::Slice(2), Pane::Slice(1), Pane::Slice(0), Pane::View3d];
                        let ids = panes.iter().map(|p| tiles.insert_pane(*p)).collect();
                        let mut grid = Grid::new(ids);
                        grid.layout = GridLayout::Columns(2);
                        tiles.insert_container(grid)
                    }
                    Layout::Volume => tiles.insert_pane(Pane::View3d),
                    Layout::Single(w) => tiles.insert_pane(Pane::Slice(w.min(2))),
                };
                (views, column(&mut tiles, Pane::Curve, &[Pane::Diagram, Pane::ScaleSpace]))
            }
            Arrangement::Cloud => {
                (tiles.insert_pane(Pane::Scatter), column(&mut tiles, Pane::Barcode, &[Pane::CloudDiagram]))
            }
        };
        let mut linear = Linear::new(LinearDir::Horizontal, vec![views, plots]);
        linear.shares.set_share(views, 0.62);
        linear.shares.set_share(plots, 0.38);
        let root = tiles.insert_container(Container::Linear(linear));
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

    /// The tree of `a`, made from its default the first time.
    fn tree(&mut self, a: Arrangement) -> &mut Tree<Pane> {
        self.trees.entry(a.key()).or_insert_with(|| a.default_tree())
    }

    /// Puts `a`'s layout back to its default.
    pub fn reset(&mut self, a: Arrangement) {
        self.trees.insert(a.key(), a.default_tree());
        self.maximised = None;
    }

    /// The pane maximised, if one is.
    pub fn maximised(&self, a: Arrangement) -> Option<Pane> {
        let tree = self.trees.get(&a.key())?;
        self.maximised.and_then(|id| tree.tiles.get_pane(&id)).copied()
    }

    /// Where each pane of `a`'s layout was drawn last frame (panes in a tab behind another
    /// are left out).
    pub fn pane_rects(&self, a: Arrangement) -> Vec<(Pane, egui::Rect)> {
        let Some(tree) = self.trees.get(&a.key()) else { return Vec::new() };
        tree.active_tiles()
            .into_iter()
            .filter_map(|id| Some((*tree.tiles.get_pane(&id)?, tree.tiles.rect(id)?)))
            .collect()
    }
}

/// What the slice views draw over the field this frame, computed once for all of them.
#[derive(Default)]
pub struct Overlays {
    pub labels: Option<Arc<super::msc_labels::LabelMap>>,
    pub cracks: Option<super::crack_layer::Overlay>,
    pub parts: Option<Arc<topoview_core::topo::betti::parts::Parts>>,
    pub tunnels: Vec<topoview_core::topo::betti::tunnels::Tunnel>,
}

/// Draws the central area in `arrangement`'s layout.
pub fn show(
    app: &mut TopoApp,
    units: &mut Analyses,
    overlays: &Overlays,
    arrangement: Arrangement,
    ui: &mut egui::Ui,
) {
    let two_d = app.data.as_ref().is_some_and(|d| d.displayed().ndim() < 3);
    let mut layouts = std::mem::take(&mut app.layouts);
    let maximised = layouts.maximised(arrangement);
    let tree = layouts.tree(arrangement);
    let mut panes = Panes { app, units, overlays, two_d, maximise: None };
    if let Some(pane) = maximised {
        let mut restore = false;
        ui.horizontal(|ui| {
            ui.strong(pane.title(two_d));
            restore = ui.button("Restore").on_hover_text("Back to the tiles (Esc)").clicked();
        });
        restore |= ui.input(|i| i.key_pressed(egui::Key::Escape));
        let rect = ui.available_rect_before_wrap();
        ui.scope_builder(egui::UiBuilder::new().max_rect(rect), |ui| draw_pane(&mut panes, ui, pane));
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
    overlays: &'a Overlays,
    two_d: bool,
    /// A pane whose tab asked to be maximised this frame.
    maximise: Option<TileId>,
}

impl Behavior<Pane> for Panes<'_> {
    fn pane_ui(&mut self, ui: &mut egui::Ui, _tile: TileId, pane: &mut Pane) -> UiResponse {
        draw_pane(self, ui, *pane);
        UiResponse::None
    }

    fn tab_title_for_pane(&mut self, pane: &Pane) -> egui::WidgetText {
        pane.title(self.two_d).into()
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
fn draw_pane(p: &mut Panes, ui: &mut egui::Ui, pane: Pane) {
    let app = &mut *p.app;
    let units = &mut *p.units;
    match pane {
        Pane::Slice(n) => slice(app, units, p.overlays, ui, n),
        Pane::View3d => view3d(app, p.overlays, ui),
        Pane::Curve => super::curve_panel::pane(app, units, ui),
        Pane::Diagram => super::msc_panel::diagram_pane(app, ui),
        Pane::ScaleSpace => super::scale_space::map_pane(&mut units.scale_space, app, ui),
        Pane::Scatter => super::cloud_view::show(app, &mut units.cloud, ui),
        Pane::Barcode => super::cloud::barcode_pane(&mut units.cloud, ui),
        Pane::CloudDiagram => super::cloud::diagram_pane(&mut units.cloud, ui),
    }
}

/// A slice view (slot: which of the three view textures it draws with).
fn slice(app: &mut TopoApp, units: &Analyses, overlays: &Overlays, ui: &mut egui::Ui, n: usize) {
    let Some(d) = &app.data else { return };
    if !app.has_renderer {
        ui.label("No wgpu renderer: slice views are unavailable in this window.");
        return;
    }
    let field = d.displayed().clone();
    let n = if field.ndim() < 3 { 2 } else { n.min(2) };
    let mut look = TopoApp::look(
        &app.settings,
        app.mask_on,
        d,
        overlays.labels.as_ref(),
        overlays.cracks.clone(),
        &units.layers.list,
    );
    look.parts = overlays.parts.clone();
    look.tunnels = overlays.tunnels.clone();
    let rect = ui.available_rect_before_wrap();
    views::view(ui, rect, n, &field, &mut app.views, &look, 2 - n);
}

/// The 3D view, or why the GPU cannot draw it.
fn view3d(app: &mut TopoApp, overlays: &Overlays, ui: &mut egui::Ui) {
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
    let input = super::view3d::Inputs {
        field: &field,
        dataset: &d.field,
        stride: app.uploaded.map_or(1, |(_, s)| s),
        colormap: app.settings.colormap,
        window: d.display_window(),
        cursor: app.views.cursor,
        threshold: d.threshold,
        filtration: app.settings.filtration(),
        msc: d.displayed_msc().filter(|_| app.settings.msc.show).map(|m| super::msc_overlay::SliceOverlay {
            scene: &m.scene,
            level: &m.level,
            settings: &app.settings.msc,
            labels: None,
        }),
        parts: overlays.parts.clone(),
    };
    super::view3d::show(ui, rect, &mut app.settings.view3d, &mut app.view3d, &input);
}
