//! The Morse-Smale complex drawn over a slice view: critical points as discs coloured by index
//! (minimum blue, 1-saddle light green, 2-saddle dark green, maximum red, as TTK and the gmSC
//! paper draw them), sized by persistence, and arcs as polylines, both within a few slices of
//! the view's plane and fading with their distance from it. An arc whose extremum has merged
//! into another is its V-path and then a thin straight segment on to the surviving extremum
//! (as `topoview msc` exports it), drawn where both its ends lie within the slices shown.

use super::settings::MscSettings;
use crate::compute::msc_scene::{ArcKind, Level, MscScene};
use egui::{Color32, Pos2, Shape, Stroke};

/// Segments drawn per view at most: beyond it the overlay would cost more than a frame.
const MAX_SEGMENTS: usize = 20_000;

/// What a slice view draws of the complex.
#[derive(Clone, Copy)]
pub struct SliceOverlay<'a> {
    pub scene: &'a MscScene,
    pub level: &'a Level,
    pub settings: &'a MscSettings,
}

/// A critical point's colour by its index in a complex of dimension `ndim`.
pub fn point_color(index: u8, ndim: usize) -> Color32 {
    match index as usize {
        0 => Color32::from_rgb(50, 110, 255),
        i if i == ndim => Color32::from_rgb(235, 40, 40),
        1 => Color32::from_rgb(140, 235, 140),
        _ => Color32::from_rgb(20, 130, 50),
    }
}

/// The name of index `index` in a complex of dimension `ndim`.
pub fn point_name(index: usize, ndim: usize) -> &'static str {
    match index {
        0 => "minima",
        i if i == ndim => "maxima",
        1 if ndim == 2 => "saddles",
        1 => "1-saddles",
        _ => "2-saddles",
    }
}

pub fn arc_color(kind: ArcKind) -> Color32 {
    match kind {
        ArcKind::SaddleMax => Color32::from_rgb(255, 140, 60),
        ArcKind::SaddleMin => Color32::from_rgb(90, 170, 255),
        ArcKind::SaddleSaddle => Color32::from_rgb(120, 220, 120),
    }
}

fn faded(c: Color32, alpha: f32) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), (alpha.clamp(0.0, 1.0) * 255.0) as u8)
}

/// Draws the overlay on the view of normal axis `w` at slice `slice`; `to_screen` maps a point
/// in voxel coordinates (voxel centres at integers) onto the view. Returns whether everything
/// within the slab was drawn (false when the segment budget ran out).
pub fn draw(
    painter: &egui::Painter,
    o: SliceOverlay,
    w: usize,
    slice: usize,
    to_screen: impl Fn([f64; 3]) -> Pos2,
) -> bool {
    let c = &o.scene.analysis.complex;
    let ndim = c.grid.ndim;
    // A 2D field is its own slice: everything is at distance 0.
    let half = if ndim == 2 { f64::INFINITY } else { o.settings.slab as f64 + 0.5 };
    let dist = |p: [f64; 3]| if ndim == 2 { 0.0 } else { (p[w] - slice as f64).abs() };
    let fade = |d: f64| if ndim == 2 { 1.0 } else { (1.0 - d / (half + 0.5)) as f32 };
    let (lo, hi) = (slice as f64 - half, slice as f64 + half);

    let mut segments = 0;
    let mut complete = true;
    let mut run: Vec<Pos2> = Vec::new();
    'arcs: for (i, &kind) in o.scene.arc_kind.iter().enumerate() {
        let k = ArcKind::ALL.iter().position(|&x| x == kind).unwrap_or(0);
        if !o.settings.arcs[k] {
            continue;
        }
        let b = &o.scene.arc_box[i];
        if ndim == 3 && ((b[w + 3] as f64) < lo || (b[w] as f64) > hi) {
            continue;
        }
        if !o.scene.arc_alive(i, o.level) {
            continue;
        }
        let points = &c.arcs[i].polyline;
        let color = arc_color(kind);
        if let Some((to, first)) = o.scene.merged_end(i, o.level) {
            let from = if first { points.first() } else { points.last() };
            if let Some(&from) = from.filter(|f| dist(**f) <= half && dist(to) <= half) {
                let alpha = 0.5 * fade(dist(from).min(dist(to)));
                painter.line_segment([to_screen(from), to_screen(to)], Stroke::new(0.8, faded(color, alpha)));
                segments += 1;
            }
        }
        // Runs of consecutive points inside the slab, each drawn faded by its nearest point.
        let mut nearest = f64::INFINITY;
        // None ends the last run.
        for p in points.iter().map(Some).chain(std::iter::once(None)) {
            if let Some(p) = p.filter(|p| dist(**p) <= half) {
                run.push(to_screen(*p));
                nearest = nearest.min(dist(*p));
                continue;
            }
            if run.len() >= 2 {
                segments += run.len() - 1;
                let stroke = Stroke::new(1.5, faded(color, 0.9 * fade(nearest)));
                painter.add(Shape::line(std::mem::take(&mut run), stroke));
                if segments > MAX_SEGMENTS {
                    complete = false;
                    break 'arcs;
                }
            }
            run.clear();
            nearest = f64::INFINITY;
        }
    }

    let span = (o.scene.range.1 - o.scene.range.0).max(f64::MIN_POSITIVE);
    for (i, p) in c.critical.iter().enumerate() {
        if !o.settings.points[(p.index as usize).min(3)] || !o.scene.alive(i, o.level) {
            continue;
        }
        let d = dist(p.position);
        if d > half {
            continue;
        }
        // Larger for longer-lived points: sqrt of their pair's persistence as a fraction of
        // the range (essential ones largest).
        let persistence = o.scene.persistence[i];
        let r = 1.5 + 4.0 * (persistence / span).clamp(0.0, 1.0).sqrt() as f32;
        let color = faded(point_color(p.index, ndim), fade(d));
        let at = to_screen(p.position);
        painter.circle(at, r, color, Stroke::new(0.8, faded(Color32::BLACK, fade(d))));
    }
    complete
}
