//! The Morse-Smale complex prepared for drawing: built once on the worker from an
//! [`Analysis`], then asked per frame which critical points and arcs live at the simplification
//! threshold under the user's slider. A threshold costs one pass over the critical points (who
//! is alive, where merged extrema went) and nothing per arc until an arc is drawn.

use std::sync::Arc;
use topoview_core::field::ScalarField;
use topoview_core::topo::msc::Analysis;
use topoview_core::topo::msc::complex::NO_LABEL;
use topoview_core::topo::msc::grid::Cell;

/// Arcs by the indices of their two ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArcKind {
    /// A 1-saddle and a minimum.
    SaddleMin,
    /// A (d-1)-saddle and a maximum.
    SaddleMax,
    /// A 1-saddle and a 2-saddle (3D only).
    SaddleSaddle,
}

impl ArcKind {
    pub const ALL: [ArcKind; 3] = [ArcKind::SaddleMax, ArcKind::SaddleMin, ArcKind::SaddleSaddle];

    pub fn name(self) -> &'static str {
        match self {
            ArcKind::SaddleMin => "saddle-minimum",
            ArcKind::SaddleMax => "saddle-maximum",
            ArcKind::SaddleSaddle => "saddle-saddle",
        }
    }
}

/// The complex of one field with what drawing it at any threshold needs.
pub struct MscScene {
    /// The field it was computed from (the views show its overlays only while they show it).
    pub field: Arc<ScalarField>,
    pub analysis: Analysis,
    /// Per critical point: the simplification level that cancels it (infinity: never).
    pub death: Vec<f64>,
    /// Death levels by index, sorted: live counts at a threshold are four binary searches.
    sorted_death: [Vec<f64>; 4],
    /// Per critical point: the persistence of its pair in the diagram (infinity: essential or
    /// unpaired; 0 for a pair of equal values), what its glyph's size shows.
    pub persistence: Vec<f64>,
    /// Per arc id (the complex's arcs, then the saddle-saddle arcs the hierarchy made): its
    /// ends (higher index, lower index), kind and the box of its polyline (voxel coordinates:
    /// min x, y, z, max x, y, z).
    pub ends: Vec<(u32, u32)>,
    pub arc_kind: Vec<ArcKind>,
    pub arc_box: Vec<[f32; 6]>,
    /// Per arc id: whether it is a made arc and an arc of lower id joins the same ends. Such an
    /// arc is never drawn: the earlier one exists from an earlier step and dies with the same
    /// ends, so it is alive whenever this one is.
    pub twin: Vec<bool>,
    /// Polylines of every arc id (the complex's, walked through the gradient, and those the
    /// hierarchy made), built when first drawn and kept: the overlay redraws the same arcs every
    /// frame.
    paths: Vec<std::sync::OnceLock<Vec<[f64; 3]>>>,
    /// Per dimension of the diagram, its persistence curve: points (persistence p, number of
    /// finite pairs with persistence at least p), p falling, as TTK's PersistenceCurve.
    pub persistence_curves: Vec<Vec<[f64; 2]>>,
    /// The field's value range (the slider's scale).
    pub range: (f64, f64),
    /// Critical point ids by cell (a diagram point names its cells).
    point_of_cell: std::collections::HashMap<Cell, usize>,
}

/// The complex at one threshold.
pub struct Level {
    pub threshold: f64,
    /// Cancellations applied.
    pub steps: usize,
    /// Live critical points by index (minima, 1-saddles, 2-saddles, maxima).
    pub counts: [usize; 4],
    /// Persistence pairs below the threshold that could not be cancelled (joined by no V-path
    /// or by several).
    pub blocked: usize,
    /// Per critical point, the live extremum it stands for ([`NO_LABEL`] when its manifold has
    /// flowed out of the domain).
    rep: Vec<u32>,
    /// The routes of merged extrema to their survivors drawn so far (see
    /// [`MscScene::merged_route`]), by extremum.
    routes: std::sync::Mutex<std::collections::HashMap<usize, Arc<Vec<[f64; 3]>>>>,
}

/// Points a merged extremum's route takes at most (past them it stops short of the survivor).
const MAX_ROUTE_POINTS: usize = 50_000;

/// Appends `line` to `route`, walked from its end nearer `route`'s last point (whose copy it
/// skips).
fn continue_with(route: &mut Vec<[f64; 3]>, line: &[[f64; 3]]) {
    let (Some(&end), Some(first), Some(last)) = (route.last(), line.first(), line.last()) else { return };
    let d = |p: &[f64; 3]| (0..3).map(|a| (p[a] - end[a]).powi(2)).sum::<f64>();
    if d(first) <= d(last) {
        route.extend_from_slice(&line[1..]);
    } else {
        route.extend(line.iter().rev().skip(1));
    }
}

impl MscScene {
    pub fn new(field: Arc<ScalarField>, analysis: Analysis) -> MscScene {
        let c = &analysis.complex;
        let nd = c.grid.ndim;
        let h = &analysis.hierarchy;
        let ends: Vec<(u32, u32)> = (0..h.arc_count())
            .map(|i| {
                let (u, l, _, _) = h.arc(c, i);
                (u as u32, l as u32)
            })
            .collect();
        let arc_kind = ends
            .iter()
            .map(|&(u, l)| {
                match (c.critical[l as usize].index as usize, c.critical[u as usize].index as usize) {
                    (0, _) => ArcKind::SaddleMin,
                    (_, u) if u == nd => ArcKind::SaddleMax,
                    _ => ArcKind::SaddleSaddle,
                }
            })
            .collect();
        let mut arc_box: Vec<[f32; 6]> = (0..c.arcs.len()).map(|i| bounds(&c.polyline(i))).collect();
        // An added arc is its pieces (made earlier, so their boxes are known).
        for a in &h.added {
            let b = a.pieces.iter().fold(bounds(&[]), |b, &p| {
                let q = arc_box[p as usize];
                std::array::from_fn(|k| if k < 3 { b[k].min(q[k]) } else { b[k].max(q[k]) })
            });
            arc_box.push(b);
        }
        let mut seen = std::collections::HashSet::with_capacity(ends.len());
        // Only made arcs: two original arcs with the same ends (a saddle whose two V-paths reach
        // one extremum) have different paths, both drawn.
        let twin = ends.iter().enumerate().map(|(i, &e)| !seen.insert(e) && i >= c.arcs.len()).collect();
        let paths = (0..h.arc_count()).map(|_| std::sync::OnceLock::new()).collect();
        let death = analysis.hierarchy.death_levels();
        let mut sorted_death: [Vec<f64>; 4] = Default::default();
        for (p, &d) in c.critical.iter().zip(&death) {
            sorted_death[p.index as usize].push(d);
        }
        for d in &mut sorted_death {
            d.sort_unstable_by(f64::total_cmp);
        }
        let mut of_cell: std::collections::HashMap<Cell, f64> =
            std::collections::HashMap::with_capacity(2 * analysis.diagram.len());
        for p in &analysis.diagram {
            let pers = p.death.map_or(f64::INFINITY, |d| (d - p.birth).abs());
            of_cell.insert(p.birth_cell, pers);
            if let Some(dc) = p.death_cell {
                of_cell.insert(dc, pers);
            }
        }
        // Cells missing from the diagram were paired at zero persistence (left out of it).
        let persistence = c.critical.iter().map(|p| of_cell.get(&p.cell).copied().unwrap_or(0.0)).collect();
        let range = c
            .critical
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.value), hi.max(p.value)));
        let persistence_curves = persistence_curves(&analysis.diagram, nd);
        let point_of_cell = c.critical.iter().enumerate().map(|(i, p)| (p.cell, i)).collect();
        MscScene {
            field,
            analysis,
            death,
            sorted_death,
            persistence,
            ends,
            arc_kind,
            arc_box,
            twin,
            paths,
            persistence_curves,
            range,
            point_of_cell,
        }
    }

    /// The complex after every cancellation of level up to `threshold`.
    pub fn level(&self, threshold: f64) -> Level {
        let h = &self.analysis.hierarchy;
        let steps = h.steps_at(threshold);
        let counts = std::array::from_fn(|k| {
            let d = &self.sorted_death[k];
            d.len() - d.partition_point(|&x| x <= threshold)
        });
        let blocked = h.blocked_at(threshold).count();
        Level { threshold, steps, counts, blocked, rep: h.representatives(steps), routes: Default::default() }
    }

    /// The critical point at `cell`, if it is one.
    pub fn point_of(&self, cell: Cell) -> Option<usize> {
        self.point_of_cell.get(&cell).copied()
    }

    /// Whether critical point `i` is alive at `level`.
    pub fn alive(&self, i: usize, level: &Level) -> bool {
        self.death[i] > level.threshold
    }

    /// Whether arc `i` lives at `level`: made by then, its saddle ends alive, its extremum end
    /// (moved to the extremum it merged into) still inside the domain.
    pub fn arc_alive(&self, i: usize, level: &Level) -> bool {
        let (u, l) = (self.ends[i].0 as usize, self.ends[i].1 as usize);
        let (saddle, extremum) = match self.arc_kind[i] {
            ArcKind::SaddleSaddle => {
                let h = &self.analysis.hierarchy;
                return h.arc(&self.analysis.complex, i).3 <= level.steps
                    && self.alive(u, level)
                    && self.alive(l, level);
            }
            ArcKind::SaddleMin => (u, l),
            ArcKind::SaddleMax => (l, u),
        };
        self.alive(saddle, level) && level.rep[extremum] != NO_LABEL
    }

    /// The polyline of arc `i` from its upper end (cached): an extremum arc's V-path to the
    /// extremum it first reached (see [`MscScene::merged_route`]), a saddle-saddle arc's whole
    /// path.
    pub fn polyline(&self, i: usize) -> &[[f64; 3]] {
        let c = &self.analysis.complex;
        self.paths[i].get_or_init(|| match i.checked_sub(c.arcs.len()) {
            None => c.polyline(i),
            Some(_) => {
                self.analysis.hierarchy.saddle_path(c, i, topoview_core::topo::msc::simplify::MAX_PATH_POINTS)
            }
        })
    }

    /// An extremum arc's extremum, and whether it is the polyline's first point.
    fn extremum_end(&self, i: usize) -> Option<(usize, bool)> {
        match self.arc_kind[i] {
            ArcKind::SaddleSaddle => None,
            ArcKind::SaddleMin => Some((self.ends[i].1 as usize, false)),
            ArcKind::SaddleMax => Some((self.ends[i].0 as usize, true)),
        }
    }

    /// Appends to `route` (which ends at extremum `x`) the way from `x` to the extremum it
    /// stands for after `steps` cancellations. Each cancellation that merged it joined it to a
    /// saddle by an arc whose V-path reaches an extremum merged into `x` earlier (walked back to
    /// `x` first), and the saddle's other arc reaches an extremum that had merged into the
    /// survivor (walked on to it): so the route is made of V-paths end to end. `budget` bounds
    /// the points, `depth` the nesting; past either the route stops short.
    fn walk(&self, x: usize, steps: usize, route: &mut Vec<[f64; 3]>, budget: &mut usize, depth: usize) {
        const MAX_DEPTH: usize = 48;
        let (c, h) = (&self.analysis.complex, &self.analysis.hierarchy);
        if depth >= MAX_DEPTH {
            return;
        }
        let mut at = x;
        loop {
            let step = h.cancelled_at[at];
            if step == 0 || step > steps || *budget == 0 {
                return;
            }
            let k = &h.cancellations[step - 1];
            let (Some(next), (pair, Some(onward))) = (k.merged_into, k.arcs) else { return };
            let (Some((e1, _)), Some((e2, _))) = (self.extremum_end(pair), self.extremum_end(onward)) else {
                return;
            };
            // From `at` back to e1 (e1's own way to `at`, reversed), up e1's arc to the saddle,
            // down the other arc to e2, and on from e2 to `next`.
            // Each point counts against the budget once, where it is first appended.
            let mut back = vec![c.critical[e1].position];
            self.walk(e1, step - 1, &mut back, budget, depth + 1);
            back.reverse();
            continue_with(route, &back);
            for line in [self.polyline(pair), self.polyline(onward)] {
                let before = route.len();
                continue_with(route, line);
                *budget = budget.saturating_sub(route.len() - before);
            }
            self.walk(e2, step - 1, route, budget, depth + 1);
            at = next;
        }
    }

    /// For a live arc whose extremum has merged into another: the way on from that extremum to
    /// the one it stands for at `level`, along the arcs of the cancellations that merged it
    /// (back to each cancelled saddle, then on to the extremum the saddle's other arc reaches),
    /// and whether the merged end is the polyline's first point. The viewer draws it where a
    /// straight segment would cut across the field (a fan from one survivor at high levels).
    /// Cached per level; past [`MAX_ROUTE_POINTS`] it stops short.
    pub fn merged_route(&self, i: usize, level: &Level) -> Option<(Arc<Vec<[f64; 3]>>, bool)> {
        let (extremum, first) = self.extremum_end(i)?;
        let rep = level.rep[extremum];
        if rep == NO_LABEL || rep as usize == extremum {
            return None;
        }
        let mut cache = level.routes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = cache.get(&extremum) {
            return Some((r.clone(), first));
        }
        let c = &self.analysis.complex;
        let mut route = vec![c.critical[extremum].position];
        let mut budget = MAX_ROUTE_POINTS;
        self.walk(extremum, level.steps, &mut route, &mut budget, 0);
        // A route cut short (its budget or nesting) ends where it was cut: a straight segment
        // on to the survivor would cut across the field.
        let survivor = c.critical[rep as usize].position;
        let near = |p: &[f64; 3]| (0..3).map(|k| (p[k] - survivor[k]).powi(2)).sum::<f64>() <= 1.0;
        if route.last().is_some_and(near) && route.last() != Some(&survivor) {
            route.push(survivor);
        }
        let route = Arc::new(route);
        cache.insert(extremum, route.clone());
        Some((route, first))
    }
}

/// Points at which to draw a curve with at most this many steps per dimension.
const CURVE_POINTS: usize = 2000;

/// The persistence curve of each dimension of `diagram` (finite pairs), as points: for the
/// persistences sorted from high to low, (p_i, i); subsampled to [`CURVE_POINTS`] steps, the
/// last (the lowest persistence, all pairs) kept.
fn persistence_curves(diagram: &[topoview_core::topo::msc::DiagramPoint], ndim: usize) -> Vec<Vec<[f64; 2]>> {
    (0..ndim)
        .map(|dim| {
            let mut p: Vec<f64> = diagram
                .iter()
                .filter(|d| d.dim == dim)
                .filter_map(|d| Some((d.death? - d.birth).abs()).filter(|p| p.is_finite()))
                .collect();
            p.sort_unstable_by(|a, b| b.total_cmp(a));
            let step = p.len().div_ceil(CURVE_POINTS).max(1);
            let mut out: Vec<[f64; 2]> =
                p.iter().enumerate().step_by(step).map(|(i, &x)| [x, (i + 1) as f64]).collect();
            if let Some(&last) = p.last()
                && out.last().is_some_and(|q| q[1] as usize != p.len())
            {
                out.push([last, p.len() as f64]);
            }
            out
        })
        .collect()
}

/// The box of a polyline (empty: infinities, the identity of union).
fn bounds(line: &[[f64; 3]]) -> [f32; 6] {
    let mut b = [
        f32::INFINITY,
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    for p in line {
        for k in 0..3 {
            b[k] = b[k].min(p[k] as f32);
            b[k + 3] = b[k + 3].max(p[k] as f32);
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use topoview_core::field::Samples;

    /// Arcs drawn at a level are exactly those of `Hierarchy::arcs_at` (which merges parallel
    /// ones), and counts are `Hierarchy::counts`.
    #[test]
    fn levels_agree_with_the_hierarchy() {
        let f = topoview_core::synthetic::gaussian_random_field(&[20, 18, 16], 1.5, 7, &Default::default())
            .unwrap();
        let Samples::F32(v) = f.samples() else { panic!("f32 field") };
        assert!(!v.is_empty());
        let a = topoview_core::topo::msc::analyse(&f, &Default::default()).unwrap();
        let scene = MscScene::new(Arc::new(f), a);
        let (c, h) = (&scene.analysis.complex, &scene.analysis.hierarchy);
        let span = scene.range.1 - scene.range.0;
        assert!(scene.level(span).steps > 0, "the test field must simplify");
        for frac in [0.0, 0.01, 0.05, 0.2, 1.0] {
            let level = scene.level(frac * span);
            assert_eq!(level.counts, h.counts(c, level.steps), "{frac}");
            let mut drawn: Vec<usize> = (0..h.arc_count()).filter(|&i| scene.arc_alive(i, &level)).collect();
            let mut live: Vec<usize> = h.arcs_at(c, level.steps).into_iter().flat_map(|a| a.ids).collect();
            drawn.sort_unstable();
            live.sort_unstable();
            assert_eq!(drawn, live, "{frac}");
            // The curves count the diagram's finite pairs per dimension.
            for (dim, curve) in scene.persistence_curves.iter().enumerate() {
                let n = scene.analysis.diagram.iter().filter(|d| d.dim == dim && d.death.is_some()).count();
                assert_eq!(curve.last().map_or(0, |q| q[1] as usize), n);
                assert!(curve.windows(2).all(|w| w[0][0] >= w[1][0] && w[0][1] < w[1][1]));
            }
            // A twin left undrawn has an earlier arc with its ends drawn in its place.
            for &i in drawn.iter().filter(|&&i| scene.twin[i]) {
                assert!(drawn.iter().any(|&j| j < i && !scene.twin[j] && scene.ends[j] == scene.ends[i]));
            }
        }
    }

    /// The way from a merged extremum to its survivor is V-paths end to end: no step longer
    /// than a diagonal of a voxel (a straight segment across the field was what fanned out
    /// from one survivor before), and it ends at the survivor.
    #[test]
    fn merged_routes_run_along_v_paths_to_the_survivor() {
        for dims in [vec![48, 40], vec![16, 14, 12]] {
            let f =
                topoview_core::synthetic::gaussian_random_field(&dims, 1.5, 3, &Default::default()).unwrap();
            let a = topoview_core::topo::msc::analyse(&f, &Default::default()).unwrap();
            let scene = MscScene::new(Arc::new(f), a);
            let span = scene.range.1 - scene.range.0;
            let level = scene.level(0.3 * span);
            let mut routes = 0;
            for i in 0..scene.arc_kind.len() {
                if !scene.arc_alive(i, &level) {
                    continue;
                }
                let Some((route, _)) = scene.merged_route(i, &level) else { continue };
                routes += 1;
                let (extremum, _) = scene.extremum_end(i).unwrap();
                let c = &scene.analysis.complex;
                let survivor = c.critical[level.rep[extremum] as usize].position;
                assert_eq!(route.first(), Some(&c.critical[extremum].position));
                assert_eq!(route.last(), Some(&survivor));
                for w in route.windows(2) {
                    let d = (0..3).map(|k| (w[0][k] - w[1][k]).powi(2)).sum::<f64>().sqrt();
                    assert!(d <= 1.0 + 1e-9, "{dims:?} arc {i}: a step of {d} from {:?} to {:?}", w[0], w[1]);
                }
            }
            assert!(routes > 0, "{dims:?}: no merged route to check");
        }
    }
}
