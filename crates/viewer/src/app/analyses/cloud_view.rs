//! The point cloud in 3D (the 3D view's orbit camera), drawn with egui's painter: points
//! coloured by a coordinate or by distance from the centroid, the Rips complex's edges and
//! (for small clouds) triangles at the chosen radius, and the picked bar's creating and
//! killing simplices on top.

use super::barcode_plot::{KILLER, PICKED, axis_end};
use super::cloud::{CloudState, ColourBy};
use crate::app::TopoApp;
use crate::render::camera::{self, Camera};
use crate::render::colormap::Colormap;
use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, Vec2};
use topoview_compute::rips::RipsResult;
use topoview_core::io::points::PointData;

/// The most edges drawn (the shortest, when more are within the radius).
const MAX_EDGES: usize = 60_000;
/// Triangles are drawn for clouds of at most this many points, the first `MAX_TRIANGLES` of
/// them (more overlap into one flat fill and slow a software renderer).
const TRIANGLE_POINTS: usize = 1_000;
const MAX_TRIANGLES: usize = 5_000;

/// The complex at one radius, kept while the radius and the cloud stay.
pub struct Drawn {
    version: u64,
    radius: f32,
    /// The shortest edges within the radius, and how many there are in all.
    pub edges: Vec<(u32, u32)>,
    pub edges_total: usize,
    /// Triangles within the radius (none for large clouds), and how many in all.
    pub triangles: Vec<[u32; 3]>,
    pub triangles_total: usize,
}

/// Where point `i` is drawn: the chosen coordinates (0 for an axis the points lack), or a
/// distance matrix's embedding.
pub fn positions(r: &RipsResult, axes: [usize; 3]) -> Vec<[f64; 3]> {
    match (&r.cloud.data, &r.cloud.embedded) {
        (_, Some(e)) => e.clone(),
        (PointData::Points { coords, dim }, None) => coords
            .chunks(*dim)
            .map(|p| std::array::from_fn(|k| p.get(axes[k]).copied().unwrap_or(0.0)))
            .collect(),
        (PointData::LowerDistances(_), None) => vec![[0.0; 3]; r.cloud.distances.len()],
    }
}

/// The centre and radius of the drawn points' bounding box.
pub fn bounds(r: &RipsResult, axes: [usize; 3]) -> ([f64; 3], f64) {
    let p = positions(r, axes);
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for x in &p {
        for k in 0..3 {
            lo[k] = lo[k].min(x[k]);
            hi[k] = hi[k].max(x[k]);
        }
    }
    if p.is_empty() {
        return ([0.0; 3], 1.0);
    }
    let center = std::array::from_fn(|k| (lo[k] + hi[k]) / 2.0);
    let radius = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt() / 2.0;
    (center, radius.max(1e-6))
}

/// The edges (and triangles, for small clouds) of the Rips complex at `radius`.
pub fn complex_at(r: &RipsResult, radius: f32, version: u64) -> Drawn {
    let d = &r.cloud.distances;
    let n = d.len();
    // The shortest MAX_EDGES within the radius, held to at most twice that while counting.
    let mut all: Vec<(f32, u32, u32)> = Vec::new();
    let mut edges_total = 0;
    let shortest = |all: &mut Vec<(f32, u32, u32)>| {
        all.select_nth_unstable_by(MAX_EDGES, |a, b| a.0.total_cmp(&b.0));
        all.truncate(MAX_EDGES);
    };
    for i in 1..n {
        for j in 0..i {
            let x = d.get(i, j);
            if x <= radius {
                edges_total += 1;
                all.push((x, j as u32, i as u32));
                if all.len() == 2 * MAX_EDGES {
                    shortest(&mut all);
                }
            }
        }
    }
    if all.len() > MAX_EDGES {
        shortest(&mut all);
    }
    let edges: Vec<(u32, u32)> = all.iter().map(|e| (e.1, e.2)).collect();
    let (mut triangles, mut triangles_total) = (Vec::new(), 0);
    // Triangles of all the edges only (those of the shortest would be too few).
    if n <= TRIANGLE_POINTS && edges_total == all.len() {
        // Triangles i < j < k from each edge's common higher neighbours.
        let mut up: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(_, a, b) in &all {
            up[a as usize].push(b);
        }
        for l in &mut up {
            l.sort_unstable();
        }
        for i in 0..n {
            for (x, &j) in up[i].iter().enumerate() {
                for &k in &up[i][x + 1..] {
                    if up[j as usize].binary_search(&k).is_ok() {
                        triangles_total += 1;
                        if triangles.len() < MAX_TRIANGLES {
                            triangles.push([i as u32, j, k]);
                        }
                    }
                }
            }
        }
    }
    Drawn { version, radius, edges, edges_total, triangles, triangles_total }
}

/// The colour of each point, as `c.colour` says.
/// The colour of each point, as `c.colour` says, and the range of values the colormap spans.
fn colours(c: &CloudState, r: &RipsResult, pos: &[[f64; 3]]) -> (Vec<Color32>, Option<(f64, f64)>) {
    let values: Vec<f64> = match (c.colour, &r.cloud.data) {
        (ColourBy::Plain, _) => return (vec![Color32::from_rgb(220, 220, 220); pos.len()], None),
        (ColourBy::Column(k), PointData::Points { coords, dim }) if k < *dim => {
            coords.chunks(*dim).map(|p| p[k]).collect()
        }
        (ColourBy::Column(k), _) => pos.iter().map(|p| p[k.min(2)]).collect(),
        (ColourBy::Centroid, PointData::Points { coords, dim }) => {
            let n = (coords.len() / dim).max(1) as f64;
            let mean: Vec<f64> =
                (0..*dim).map(|k| coords.iter().skip(k).step_by(*dim).sum::<f64>() / n).collect();
            coords
                .chunks(*dim)
                .map(|p| p.iter().zip(&mean).map(|(a, m)| (a - m).powi(2)).sum::<f64>().sqrt())
                .collect()
        }
        (ColourBy::Centroid, _) => {
            let n = pos.len().max(1) as f64;
            let mean: [f64; 3] = std::array::from_fn(|k| pos.iter().map(|p| p[k]).sum::<f64>() / n);
            pos.iter().map(|p| (0..3).map(|k| (p[k] - mean[k]).powi(2)).sum::<f64>().sqrt()).collect()
        }
    };
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(*v), h.max(*v)));
    let span = if hi > lo { hi - lo } else { 1.0 };
    let colours = values
        .iter()
        .map(|v| {
            let [r, g, b] = Colormap::Viridis.rgb(((v - lo) / span) as f32);
            Color32::from_rgb(r, g, b)
        })
        .collect();
    (colours, lo.is_finite().then_some((lo, hi)))
}

/// Screen positions and depths of world points, through `cam` into `image`.
struct Projector {
    m: camera::Mat4,
    image: Rect,
}

impl Projector {
    fn new(cam: &Camera, image: Rect, center: [f64; 3], radius: f64) -> Projector {
        let aspect = image.width() as f64 / image.height().max(1.0) as f64;
        Projector { m: camera::mul(&cam.projection(aspect, center, radius), &cam.view()), image }
    }

    /// Screen position and depth (clip w), or None behind the eye.
    fn at(&self, p: [f64; 3]) -> Option<(Pos2, f64)> {
        let m = &self.m;
        let c: [f64; 4] = std::array::from_fn(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3]);
        if c[3] <= 1e-9 {
            return None;
        }
        let (x, y) = (c[0] / c[3], c[1] / c[3]);
        let s = self.image.center()
            + Vec2::new(
                (x * self.image.width() as f64 / 2.0) as f32,
                (-y * self.image.height() as f64 / 2.0) as f32,
            );
        Some((s, c[3]))
    }
}

/// The central area while the cloud is shown: controls above, the scatter below.
pub fn show(app: &TopoApp, cloud: &mut CloudState, ui: &mut egui::Ui) {
    // Held apart while drawing, so that the state can change beside it.
    let Some(r) = cloud.result.take() else {
        ui.centered_and_justified(|ui| {
            ui.label(if app.jobs.contains_key(&topoview_compute::rips::RIPS) {
                "Computing the barcode…"
            } else {
                "Open a point cloud (File > Open: .csv, .txt, .xyz, .npy, .ply, distance matrices)."
            });
        });
        return;
    };
    draw(ui, cloud, &r);
    cloud.result = Some(r);
}

fn draw(ui: &mut egui::Ui, c: &mut CloudState, r: &RipsResult) {
    let reframe = controls(ui, c, r);
    let rect = ui.available_rect_before_wrap();
    if rect.width() < 8.0 || rect.height() < 8.0 {
        return;
    }
    let resp = ui.allocate_rect(rect, Sense::click_and_drag());
    let (center, radius) = bounds(r, c.axes);
    crate::app::view3d::steer(ui, &resp, &mut c.camera, rect.height(), || (center, radius));
    if reframe {
        c.camera = c.camera.framing(center, radius);
    }
    let pos = positions(r, c.axes);
    let proj = Projector::new(&c.camera, rect, center, radius);
    let screen: Vec<Option<(Pos2, f64)>> = pos.iter().map(|p| proj.at(*p)).collect();
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::from_gray(12));
    let stale = c.drawn.as_ref().is_none_or(|d| d.version != c.version || d.radius != c.radius);
    if (c.edges || c.triangles) && stale {
        c.drawn = Some(complex_at(r, c.radius, c.version));
    }
    let drawn = c.drawn.as_ref().filter(|_| c.edges || c.triangles);
    let xy = |i: u32| screen[i as usize].map(|s| s.0);
    if let Some(d) = drawn.filter(|_| c.triangles) {
        let mut mesh = egui::Mesh::default();
        let fill = Color32::from_rgba_unmultiplied(120, 170, 255, 28);
        for t in &d.triangles {
            if let (Some(a), Some(b), Some(cc)) = (xy(t[0]), xy(t[1]), xy(t[2])) {
                let base = mesh.vertices.len() as u32;
                for p in [a, b, cc] {
                    mesh.colored_vertex(p, fill);
                }
                mesh.add_triangle(base, base + 1, base + 2);
            }
        }
        painter.add(Shape::mesh(mesh));
    }
    if let Some(d) = drawn.filter(|_| c.edges) {
        let alpha = if d.edges.len() > 5_000 { 40 } else { 110 };
        let stroke = Stroke::new(1.0, Color32::from_rgba_unmultiplied(200, 200, 210, alpha));
        for &(a, b) in &d.edges {
            if let (Some(p), Some(q)) = (xy(a), xy(b)) {
                painter.line_segment([p, q], stroke);
            }
        }
    }
    // Points far to near, so nearer ones cover farther ones.
    let (cols, range) = colours(c, r, &pos);
    let mut order: Vec<usize> = (0..pos.len()).filter(|&i| screen[i].is_some()).collect();
    order.sort_by(|&a, &b| {
        screen[b].map(|s| s.1).unwrap_or(0.0).total_cmp(&screen[a].map(|s| s.1).unwrap_or(0.0))
    });
    for &i in &order {
        if let Some((p, _)) = screen[i] {
            painter.circle_filled(p, c.point_size, cols[i]);
        }
    }
    picked(&painter, c, r, &xy);
    // The point under the pointer, named.
    let mut hovered = None;
    if let Some(h) = resp.hover_pos() {
        hovered = order
            .iter()
            .rev()
            .copied()
            .find(|&i| screen[i].is_some_and(|s| s.0.distance(h) <= c.point_size + 3.0));
    }
    let mut note = format!("{} points", pos.len());
    if let Some(d) = drawn {
        note += &format!(
            " · at r = {}: {} edge{}",
            crate::app::numbers::short(c.radius.into()),
            d.edges_total,
            if d.edges_total == 1 { "" } else { "s" }
        );
        if d.edges.len() < d.edges_total {
            note += &format!(" (the {} shortest drawn)", d.edges.len());
        }
        if pos.len() <= TRIANGLE_POINTS && d.edges.len() < d.edges_total {
            note += ", triangles not counted (too many edges)";
        } else if pos.len() <= TRIANGLE_POINTS {
            note += &format!(", {} triangles", d.triangles_total);
            if c.triangles && d.triangles.len() < d.triangles_total {
                note += &format!(" ({MAX_TRIANGLES} drawn)");
            }
        } else if c.triangles {
            note += &format!(" · triangles drawn for clouds of at most {TRIANGLE_POINTS} points");
        }
    }
    if let Some((lo, hi)) = range {
        note +=
            &format!(" · colour {} to {}", crate::app::numbers::short(lo), crate::app::numbers::short(hi));
    }
    if r.cloud.embedded.is_some() {
        note += " · MDS placement";
    }
    // Wrapped to the view's width (a narrow tile would cut it).
    let colour = Color32::from_gray(210);
    let galley = painter.layout(note, egui::FontId::monospace(11.0), colour, (rect.width() - 12.0).max(40.0));
    painter.galley(rect.left_bottom() + Vec2::new(6.0, -6.0 - galley.size().y), galley, colour);
    let mut tip =
        "Left drag: rotate. Right drag: pan. Wheel: zoom. Double click: frame the cloud.".to_string();
    if r.cloud.embedded.is_some() {
        tip += "\nThe points of a distance matrix are placed by classical MDS (the barcode is of the matrix's own distances).";
    }
    match hovered {
        Some(i) => {
            let p = pos[i];
            resp.on_hover_text(format!("point {i} ({:.4}, {:.4}, {:.4})", p[0], p[1], p[2]));
        }
        None => {
            resp.on_hover_text(tip);
        }
    }
}

/// The picked bar's simplices: the killer as a translucent outline, the creator bold over it.
fn picked(painter: &egui::Painter, c: &CloudState, r: &RipsResult, xy: &dyn Fn(u32) -> Option<Pos2>) {
    let Some(bar) = c.selected.and_then(|i| r.barcode.bars.get(i)) else { return };
    let draw = |vs: Vec<usize>, colour: Color32, width: f32| {
        let pts: Vec<Pos2> = vs.iter().filter_map(|&v| xy(v as u32)).collect();
        if pts.len() == 3 {
            painter.add(Shape::convex_polygon(pts.clone(), colour.gamma_multiply(0.35), Stroke::NONE));
        }
        for (k, a) in pts.iter().enumerate() {
            for b in &pts[k + 1..] {
                painter.line_segment([*a, *b], Stroke::new(width, colour));
            }
            painter.circle_filled(*a, c.point_size + width, colour);
        }
    };
    if let Some(k) = bar.killer {
        draw(r.barcode.vertices(k, bar.dim + 1), KILLER, 1.5);
    }
    draw(r.barcode.vertices(bar.creator, bar.dim), PICKED, 3.0);
}

/// The row above the scatter: axes, colour, point size, what of the complex is drawn, and the
/// radius. True when the axes changed (the view is framed again).
fn controls(ui: &mut egui::Ui, c: &mut CloudState, r: &RipsResult) -> bool {
    let mut reframe = false;
    let dim = r.cloud.dim();
    ui.horizontal_wrapped(|ui| {
        if let Some(dim) = dim.filter(|&d| d > 1) {
            for (k, name) in ["x", "y", "z"].into_iter().enumerate() {
                let text = |a: usize| if a < dim { format!("column {a}") } else { "none".into() };
                egui::ComboBox::from_id_salt(("cloud axis", k))
                    .selected_text(format!("{name}: {}", text(c.axes[k])))
                    .show_ui(ui, |ui| {
                        for a in (0..dim).chain((k == 2).then_some(usize::MAX)) {
                            reframe |= ui.selectable_value(&mut c.axes[k], a, text(a)).changed();
                        }
                    });
            }
        }
        let columns = dim.unwrap_or(3);
        let word = |b: ColourBy| match b {
            ColourBy::Column(k) if dim.is_some() => format!("column {k}"),
            ColourBy::Column(k) => format!("MDS axis {k}"),
            ColourBy::Centroid => "distance from the centroid".into(),
            ColourBy::Plain => "one colour".into(),
        };
        egui::ComboBox::from_id_salt("cloud colour")
            .selected_text(format!("colour: {}", word(c.colour)))
            .show_ui(ui, |ui| {
                for b in [ColourBy::Centroid, ColourBy::Plain]
                    .into_iter()
                    .chain((0..columns).map(ColourBy::Column))
                {
                    ui.selectable_value(&mut c.colour, b, word(b));
                }
            });
        ui.add(egui::DragValue::new(&mut c.point_size).range(1.0..=12.0).speed(0.1).prefix("size "));
        ui.checkbox(&mut c.edges, "edges");
        ui.checkbox(&mut c.triangles, "triangles");
    });
    ui.horizontal(|ui| {
        ui.label("Radius");
        let end = axis_end(&r.barcode, r.opts.threshold);
        ui.spacing_mut().slider_width = (ui.available_width() - 140.0).max(120.0);
        // No edge past the threshold is in the complex.
        let top = end.min(r.opts.threshold);
        ui.add(egui::Slider::new(&mut c.radius, 0.0..=top)).on_hover_text(
            "The Rips complex at this radius: every edge no longer than it, and the triangles of those edges",
        );
    });
    reframe
}
