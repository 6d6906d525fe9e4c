//! The Morse-Smale complex drawn over a slice view: critical points as discs coloured by index
//! (minimum blue, 1-saddle light green, 2-saddle dark green, maximum red, as TTK and the gmSC
//! paper draw them), sized by persistence, and arcs as polylines, both within a few slices of
//! the view's plane and fading with their distance from it. An arc whose extremum has merged
//! into another is its V-path and then, thin and faint, the way on to the surviving extremum
//! along the arcs of the cancellations that merged it ([`MscScene::merged_route`]; a straight
//! segment there fanned across the image from one survivor at high levels).

use super::msc::MscSettings;
use crate::render::overlay3d::{LineVertex, Marks, PointMark};
use egui::{Color32, Pos2, Shape, Stroke};
use topoview_compute::msc_scene::{ArcKind, Level, MscScene};

/// Segments drawn per view at most: beyond it the overlay would cost more than a frame.
const MAX_SEGMENTS: usize = 60_000;

/// What a slice view draws of the complex.
#[derive(Clone, Copy)]
pub struct SliceOverlay<'a> {
    pub scene: &'a MscScene,
    pub level: &'a Level,
    pub settings: &'a MscSettings,
}

impl SliceOverlay<'_> {
    /// Whether critical point `i` is drawn: its kind is shown and it is alive at the level.
    pub fn shows_point(&self, i: usize) -> bool {
        let index = self.scene.analysis.complex.critical[i].index as usize;
        self.settings.points[index.min(3)] && self.scene.alive(i, self.level)
    }

    /// Whether arcs of `kind` are shown.
    pub fn shows_arcs(&self, kind: ArcKind) -> bool {
        let k = ArcKind::ALL.iter().position(|&x| x == kind).unwrap_or(0);
        self.settings.arcs[k]
    }
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
    picked: &[usize],
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
    let mut routes = std::collections::HashSet::new();
    'arcs: for (i, &kind) in o.scene.arc_kind.iter().enumerate() {
        // The arcs of a picked pair: white and wide, whatever kinds are shown.
        if o.scene.twin[i] {
            continue;
        }
        let (u, l) = o.scene.ends[i];
        let highlit = picked.len() > 1 && picked.contains(&(u as usize)) && picked.contains(&(l as usize));
        if !o.shows_arcs(kind) && !highlit {
            continue;
        }
        let b = &o.scene.arc_box[i];
        if ndim == 3 && ((b[w + 3] as f64) < lo || (b[w] as f64) > hi) {
            continue;
        }
        if !o.scene.arc_alive(i, o.level) && !highlit {
            continue;
        }
        let points = o.scene.polyline(i);
        let (color, width) = if highlit { (Color32::WHITE, 3.0) } else { (arc_color(kind), 1.5) };
        // On from a merged extremum to the one it stands for now, along the cancelled arcs
        // (once per extremum: many arcs share a route), thin and faint; within half the
        // budget, so that the arcs themselves are drawn first.
        if let Some((route, _)) = o.scene.merged_route(i, o.level)
            && segments < MAX_SEGMENTS / 2
            && routes.insert(std::sync::Arc::as_ptr(&route))
        {
            for piece in route.split(|p| dist(*p) > half).filter(|r| r.len() >= 2) {
                let nearest = piece.iter().map(|p| dist(*p)).fold(f64::INFINITY, f64::min);
                let line: Vec<[f64; 3]> = piece
                    .iter()
                    .map(|p| {
                        let q = to_screen(*p);
                        [q.x as f64, q.y as f64, 0.0]
                    })
                    .collect();
                let line: Vec<Pos2> =
                    decimate(&line, 0.5).into_iter().map(|p| Pos2::new(p[0] as f32, p[1] as f32)).collect();
                segments += line.len() - 1;
                painter.add(egui::Shape::line(line, Stroke::new(0.8, faded(color, 0.5 * fade(nearest)))));
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
                // Half-voxel steps are a pixel or less at most zooms: a point where the run
                // turns by more than half a pixel draws the same line.
                let line: Vec<[f64; 3]> = run.iter().map(|p| [p.x as f64, p.y as f64, 0.0]).collect();
                let line: Vec<Pos2> =
                    decimate(&line, 0.5).into_iter().map(|p| Pos2::new(p[0] as f32, p[1] as f32)).collect();
                segments += line.len() - 1;
                let stroke = Stroke::new(width, faded(color, 0.9 * fade(nearest)));
                painter.add(Shape::line(line, stroke));
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
        if !o.shows_point(i) {
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
    // Picked points: a ring, shown whatever their distance from the plane or their state.
    for &i in picked {
        if let Some(p) = c.critical.get(i) {
            painter.circle_stroke(to_screen(p.position), 9.0, Stroke::new(2.0, Color32::WHITE));
        }
    }
    complete
}

/// The live critical point drawn nearest `pointer` (within 8 points) on the view of normal
/// axis `w` at `slice`, if any.
pub fn point_near(
    o: SliceOverlay,
    w: usize,
    slice: usize,
    pointer: Pos2,
    to_screen: impl Fn([f64; 3]) -> Pos2,
) -> Option<usize> {
    let c = &o.scene.analysis.complex;
    let half = if c.grid.ndim == 2 { f64::INFINITY } else { o.settings.slab as f64 + 0.5 };
    c.critical
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            let near = c.grid.ndim == 2 || (p.position[w] - slice as f64).abs() <= half;
            near && o.shows_point(*i)
        })
        .map(|(i, p)| (i, to_screen(p.position).distance(pointer)))
        .filter(|(_, d)| *d <= 8.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// The points of `line` that keep every other point within `tolerance` of the polyline through
/// them (Ramer-Douglas-Peucker), ends included.
fn decimate(line: &[[f64; 3]], tolerance: f64) -> Vec<[f64; 3]> {
    if line.len() < 3 {
        return line.to_vec();
    }
    let mut keep = vec![false; line.len()];
    keep[0] = true;
    keep[line.len() - 1] = true;
    let mut spans = vec![(0, line.len() - 1)];
    while let Some((a, b)) = spans.pop() {
        let (p, q) = (line[a], line[b]);
        let d: [f64; 3] = std::array::from_fn(|k| q[k] - p[k]);
        let len2: f64 = d.iter().map(|x| x * x).sum();
        let distance2 = |r: [f64; 3]| {
            let v: [f64; 3] = std::array::from_fn(|k| r[k] - p[k]);
            let t = if len2 > 0.0 { (0..3).map(|k| v[k] * d[k]).sum::<f64>() / len2 } else { 0.0 };
            let t = t.clamp(0.0, 1.0);
            (0..3).map(|k| (v[k] - t * d[k]).powi(2)).sum::<f64>()
        };
        let far = (a + 1..b).map(|i| (i, distance2(line[i]))).max_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((i, _)) = far.filter(|&(_, d2)| d2 > tolerance * tolerance) {
            keep[i] = true;
            spans.extend([(a, i), (i, b)]);
        }
    }
    line.iter().zip(keep).filter(|(_, k)| *k).map(|(p, _)| *p).collect()
}

/// Line segments the 3D view draws at most (a volume's complex at a low threshold has millions).
const MAX_3D_SEGMENTS: usize = 400_000;

/// The complex at `o.level` as marks for the 3D view: live critical points of the kinds shown,
/// then arcs of the kinds shown until [`MAX_3D_SEGMENTS`]; positions in voxel-index space (a
/// voxel's centre at i + 0.5). Returns the marks and whether every shown arc is in them.
pub fn marks(o: SliceOverlay, version: u64) -> (Marks, bool) {
    let c = &o.scene.analysis.complex;
    let ndim = c.grid.ndim;
    let at = |p: [f64; 3]| [p[0] as f32 + 0.5, p[1] as f32 + 0.5, p[2] as f32 + 0.5];
    let rgba = |c: Color32, a: u8| [c.r(), c.g(), c.b(), a];
    let span = (o.scene.range.1 - o.scene.range.0).max(f64::MIN_POSITIVE);
    let points = c
        .critical
        .iter()
        .enumerate()
        .filter(|(i, _)| o.shows_point(*i))
        .map(|(i, p)| PointMark {
            position: at(p.position),
            radius: 2.0 + 3.5 * (o.scene.persistence[i] / span).clamp(0.0, 1.0).sqrt() as f32,
            color: rgba(point_color(p.index, ndim), 255),
        })
        .collect();
    let mut lines = Vec::new();
    let mut complete = true;
    let mut routes = std::collections::HashSet::new();
    for (i, &kind) in o.scene.arc_kind.iter().enumerate() {
        if o.scene.twin[i] || !o.shows_arcs(kind) || !o.scene.arc_alive(i, o.level) {
            continue;
        }
        // V-paths step half a voxel at a time; in 3D, a point every few voxels where the path
        // runs straight draws the same picture with far fewer segments.
        let line = decimate(o.scene.polyline(i), 0.5);
        if lines.len() / 2 + line.len() > MAX_3D_SEGMENTS {
            complete = false;
            break;
        }
        let color = rgba(arc_color(kind), 220);
        for pair in line.windows(2) {
            lines.push(LineVertex { position: at(pair[0]), color });
            lines.push(LineVertex { position: at(pair[1]), color });
        }
        if let Some((route, _)) = o.scene.merged_route(i, o.level)
            && routes.insert(std::sync::Arc::as_ptr(&route))
        {
            let faint = rgba(arc_color(kind), 110);
            for pair in decimate(&route, 0.5).windows(2) {
                lines.push(LineVertex { position: at(pair[0]), color: faint });
                lines.push(LineVertex { position: at(pair[1]), color: faint });
            }
        }
    }
    (Marks { version, points, lines }, complete)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_click_picks_the_nearest_live_point_within_reach() {
        let f =
            topoview_core::synthetic::gaussian_random_field(&[24, 20], 1.5, 3, &Default::default()).unwrap();
        let a = topoview_core::topo::msc::analyse(&f, &Default::default()).unwrap();
        let scene = MscScene::new(Arc::new(f), a);
        let level = scene.level(0.1 * (scene.range.1 - scene.range.0));
        let settings = MscSettings::default();
        let o = SliceOverlay { scene: &scene, level: &level, settings: &settings };
        let to_screen = |p: [f64; 3]| Pos2::new(10.0 * p[0] as f32, 10.0 * p[1] as f32);
        let live: Vec<usize> =
            (0..scene.analysis.complex.critical.len()).filter(|&i| scene.alive(i, &level)).collect();
        assert!(!live.is_empty());
        for &i in &live {
            let at = to_screen(scene.analysis.complex.critical[i].position) + egui::vec2(3.0, 0.0);
            let j = point_near(o, 2, 0, at, to_screen).expect("a point 3 px away is in reach");
            assert!(scene.alive(j, &level));
            assert!(to_screen(scene.analysis.complex.critical[j].position).distance(at) <= 3.0 + 1e-4);
        }
        assert_eq!(point_near(o, 2, 0, Pos2::new(-100.0, -100.0), to_screen), None);
    }

    /// Distance from `r` to the segment `p`-`q`.
    fn to_segment(r: [f64; 3], p: [f64; 3], q: [f64; 3]) -> f64 {
        let d: [f64; 3] = std::array::from_fn(|k| q[k] - p[k]);
        let len2: f64 = d.iter().map(|x| x * x).sum();
        let t = ((0..3).map(|k| (r[k] - p[k]) * d[k]).sum::<f64>() / len2).clamp(0.0, 1.0);
        (0..3).map(|k| (r[k] - p[k] - t * d[k]).powi(2)).sum::<f64>().sqrt()
    }

    #[test]
    fn decimated_lines_stay_within_the_tolerance() {
        // A staircase of half-voxel steps along a diagonal: its ends suffice.
        let stairs: Vec<[f64; 3]> = (0..40)
            .map(|i| [(i / 2) as f64 * 0.5 + (i % 2) as f64 * 0.5, (i / 2) as f64 * 0.5, 0.0])
            .collect();
        assert_eq!(decimate(&stairs, 0.5), vec![stairs[0], stairs[39]]);
        // An L keeps its corner; a random walk keeps every dropped point within the tolerance.
        let l = [[0.0, 0.0, 0.0], [5.0, 0.0, 0.0], [5.0, 5.0, 0.0]];
        assert_eq!(decimate(&l, 0.5), l.to_vec());
        let mut x = 12345u64;
        let mut p = [0.0; 3];
        let walk: Vec<[f64; 3]> = (0..500)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                p[((x >> 33) % 3) as usize] += if (x >> 40) & 1 == 1 { 0.5 } else { -0.5 };
                p
            })
            .collect();
        let kept = decimate(&walk, 0.5);
        assert!(kept.len() < walk.len() && kept.first() == walk.first() && kept.last() == walk.last());
        let mut at = 0;
        for w in kept.windows(2) {
            let j = at + walk[at..].iter().position(|q| *q == w[1]).unwrap();
            for &r in &walk[at..=j] {
                assert!(to_segment(r, w[0], w[1]) <= 0.5 + 1e-9);
            }
            at = j;
        }
    }
}
