//! Arcs against brute-force V-path enumeration, labels, and closed forms.

use crate::common::field_of;
use proptest::prelude::*;
use std::collections::BTreeMap;
use topoview_core::control::Control;
use topoview_core::field::{Dtype, ScalarField};
use topoview_core::topo::msc::complex::NO_LABEL;
use topoview_core::topo::msc::gradient::Gradient;
use topoview_core::topo::msc::{Analysis, analyse};

fn run(dims: &[usize], vals: &[f64]) -> (ScalarField, Analysis) {
    let f = field_of(Dtype::F64, dims, vals);
    let a = analyse(&f, &Control::default()).unwrap();
    (f, a)
}

/// Counts every V-path from each critical cell down to critical cells, one path at a time.
fn enumerate_paths(g: &Gradient) -> BTreeMap<(usize, usize), u128> {
    let grid = g.grid;
    let mut out = BTreeMap::new();
    for sigma in 0..grid.n_cells() {
        if !g.is_critical(sigma) || grid.dim(sigma) == 0 {
            continue;
        }
        let mut stack: Vec<usize> = grid.facets(sigma).collect();
        while let Some(a) = stack.pop() {
            if g.is_critical(a) {
                *out.entry((sigma, a)).or_insert(0) += 1;
                continue;
            }
            if let Some(b) = g.partner(a).filter(|&b| grid.dim(b) > grid.dim(a)) {
                stack.extend(grid.facets(b).filter(|&f| f != a));
            }
        }
    }
    out
}

/// The path a saddle-saddle arc keeps, found by brute force: every V-path from `sigma` to
/// `target` enumerated, the shortest kept, and among them the one whose (k-1)-cells read from
/// the target back are least (the least parent at each step back: every parent one step less
/// deep leads on to `sigma` by a shortest path).
fn kept_path(g: &Gradient, sigma: usize, target: usize) -> Vec<usize> {
    let grid = g.grid;
    let mut best: Option<Vec<usize>> = None;
    let mut stack: Vec<Vec<usize>> = grid.facets(sigma).map(|f| vec![sigma, f]).collect();
    while let Some(path) = stack.pop() {
        let a = *path.last().unwrap();
        if a == target {
            // The path alternates (k-1)-cells and their partners; from the target back, every
            // other cell is a (k-1)-cell.
            let back = |p: &Vec<usize>| (p.len(), p.iter().rev().step_by(2).copied().collect::<Vec<_>>());
            if best.as_ref().is_none_or(|b| back(&path) < back(b)) {
                best = Some(path);
            }
            continue;
        }
        if g.is_critical(a) {
            continue;
        }
        if let Some(b) = g.partner(a).filter(|&b| grid.dim(b) > grid.dim(a)) {
            for f in grid.facets(b).filter(|&f| f != a) {
                let mut p = path.clone();
                p.extend([b, f]);
                stack.push(p);
            }
        }
    }
    best.unwrap()
}

fn check_arcs(dims: &[usize], vals: &[f64]) {
    let (_, a) = run(dims, vals);
    let g = &a.complex.gradient;
    let grid = g.grid;
    let c = &a.complex;
    let got: BTreeMap<(usize, usize), u128> = c
        .arcs
        .iter()
        .map(|arc| ((c.critical[arc.upper].cell, c.critical[arc.lower].cell), arc.multiplicity.count))
        .collect();
    assert_eq!(got, enumerate_paths(g), "{dims:?} {vals:?}");
    for arc in &c.arcs {
        let (u, l) = (&c.critical[arc.upper], &c.critical[arc.lower]);
        assert_eq!(u.index, l.index + 1);
        assert_eq!(arc.polyline(g).first(), Some(&u.position));
        assert_eq!(arc.polyline(g).last(), Some(&l.position));
        // A V-path alternates k-1 and k cells, each step a facet or its gradient partner.
        let cells = arc.cells(g);
        for w in cells.windows(2) {
            let (x, y) = (w[0], w[1]);
            let facet = grid.facets(x).any(|f| f == y);
            let partner = g.partner(x) == Some(y);
            assert!(facet || partner, "{dims:?}: {x} -> {y} is not a V-path step");
        }
        if let topoview_core::topo::msc::complex::Path::Cells(_) = arc.path {
            assert_eq!(cells, kept_path(g, u.cell, l.cell), "{dims:?} {vals:?}");
        }
    }
    // Every voxel reaches a minimum; minima label themselves.
    for (v, &l) in c.basins.iter().enumerate() {
        assert_ne!(l, NO_LABEL);
        let m = &c.critical[l as usize];
        assert_eq!(m.index, 0);
        if grid.vertex_cell(v) == m.cell {
            assert_eq!(m.vertex, v);
        }
    }
    for &l in &c.mountains {
        if l != NO_LABEL {
            assert_eq!(c.critical[l as usize].index as usize, grid.ndim);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn arcs_equal_enumerated_v_paths(
        (dims, vals) in crate::common::small_field(2, 7, 4, vec![0.0, 1.0, 2.0, 3.0, 5.5, 8.0, -1.0])
    ) {
        check_arcs(&dims, &vals);
    }
}

fn counts(a: &Analysis) -> [usize; 4] {
    let mut c = [0; 4];
    for p in &a.complex.critical {
        c[p.index as usize] += 1;
    }
    c
}

/// Sum of Gaussian bumps at `centres` (voxel coordinates) with width `w`.
fn bumps(dims: [usize; 3], centres: &[[f64; 3]], w: f64) -> Vec<f64> {
    let mut v = Vec::new();
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                v.push(
                    centres
                        .iter()
                        .map(|c| {
                            let d2 = (x as f64 - c[0]).powi(2)
                                + (y as f64 - c[1]).powi(2)
                                + (z as f64 - c[2]).powi(2);
                            (-d2 / (2.0 * w * w)).exp()
                        })
                        .sum(),
                );
            }
        }
    }
    v
}

#[test]
fn gaussian_bumps() {
    let (_, a) = run(&[15, 13, 11], &bumps([15, 13, 11], &[[7.0, 6.0, 5.0]], 3.0));
    assert_eq!(counts(&a)[3], 1, "one bump, one maximum");
    assert_eq!(counts(&a)[0], 8, "the bump falls off towards the eight corners of the box");
    let centres = [[4.0, 4.0, 4.0], [14.0, 5.0, 6.0], [6.0, 14.0, 5.0], [15.0, 15.0, 12.0]];
    let (_, a) = run(&[20, 20, 16], &bumps([20, 20, 16], &centres, 1.8));
    let c = counts(&a);
    assert_eq!(c[3], 4, "four separated bumps: four maxima");
    assert_eq!(c[0] as i64 - c[1] as i64 + c[2] as i64 - c[3] as i64, 1);
    // In a box (contractible) every maximum fills a void born at a 2-saddle.
    let d2 = a.diagram.iter().filter(|p| p.dim == 2).count();
    assert_eq!(d2, 4, "one dimension-2 pair per maximum");
}

#[test]
fn saddle_and_egg_crate_in_2d() {
    // x^2 - y^2 (slightly tilted to break ties): one saddle inside, the extrema on the boundary.
    let (n, m) = (11usize, 11usize);
    let vals: Vec<f64> = (0..n * m)
        .map(|i| {
            let (x, y) = ((i % n) as f64 - 5.0, (i / n) as f64 - 5.0);
            x * x - y * y + 0.001 * x + 0.0007 * y
        })
        .collect();
    let (_, a) = run(&[n, m], &vals);
    let interior_saddles = a
        .complex
        .critical
        .iter()
        .filter(|p| p.index == 1 && p.position.iter().take(2).all(|&q| q > 0.0 && q < 10.0))
        .count();
    assert_eq!(interior_saddles, 1);
    // Egg crate: sin x sin y over two periods in each direction: 4 interior maxima.
    let (n, m) = (41usize, 41usize);
    let vals: Vec<f64> = (0..n * m)
        .map(|i| {
            let (x, y) =
                ((i % n) as f64 * std::f64::consts::PI / 10.0, (i / n) as f64 * std::f64::consts::PI / 10.0);
            x.sin() * y.sin() + 1e-6 * (i as f64).sin()
        })
        .collect();
    let (_, a) = run(&[n, m], &vals);
    let c = counts(&a);
    assert_eq!(c[2], 8, "sin x sin y on [0, 4 pi]^2 has 16 lobes, 8 of them positive");
    assert_eq!(c[0] as i64 - c[1] as i64 + c[2] as i64, 1);
}

/// Replays the hierarchy: every cancellation joins two live critical points of adjacent index
/// by exactly one V-path (`msc_simplify` replays it against explicit rewiring), the Morse equality holds after every step, labels and arcs only name live cells,
/// and paths run through the grid from saddle to current extremum.
fn check_hierarchy(a: &Analysis) {
    let c = &a.complex;
    let h = &a.hierarchy;
    let nd = c.grid.ndim;
    // The one-pass table of representatives agrees with walking each merge chain.
    for steps in [0, h.cancellations.len() / 2, h.cancellations.len()] {
        let table = h.representatives(steps);
        for (i, &r) in table.iter().enumerate() {
            assert_eq!(
                r,
                h.representative(i, steps).map_or(NO_LABEL, |x| x as u32),
                "point {i}, {steps} steps"
            );
        }
    }
    for (s, x) in h.cancellations.iter().enumerate() {
        assert!(h.alive(x.upper, s) && h.alive(x.lower, s));
        assert_eq!(c.critical[x.upper].index, c.critical[x.lower].index + 1, "a pair of adjacent index");
        let live: Vec<_> =
            h.arcs_at(c, s).into_iter().filter(|r| (r.upper, r.lower) == (x.upper, x.lower)).collect();
        assert_eq!(live.len(), 1, "one live arc joins the pair");
        assert_eq!({ live[0].multiplicity.count }, 1, "only pairs joined by one V-path are cancelled");
        assert!(x.persistence >= 0.0);
        if s > 0 {
            assert!(x.level >= h.cancellations[s - 1].level);
        }
        let k = h.counts(c, s + 1);
        let chi: i64 = (0..=nd).map(|i| if i % 2 == 0 { k[i] as i64 } else { -(k[i] as i64) }).sum();
        assert_eq!(chi, 1, "Morse equality after {} cancellations", s + 1);
    }
    for b in &h.blocked {
        assert_ne!(b.paths, "1");
    }
    let steps = h.cancellations.len();
    for r in h.arcs_at(c, steps) {
        assert!(h.alive(r.upper, steps) && h.alive(r.lower, steps));
        assert_eq!(c.critical[r.upper].index, c.critical[r.lower].index + 1);
    }
    for &l in h.labels_at(&c.basins, steps).iter() {
        assert!(h.alive(l as usize, steps) && c.critical[l as usize].index == 0);
    }
    for &l in h.labels_at(&c.mountains, steps).iter().filter(|&&l| l != NO_LABEL) {
        assert!(h.alive(l as usize, steps) && c.critical[l as usize].index as usize == nd);
    }
    for (i, arc) in c.arcs.iter().enumerate().take(60) {
        let (sd, ex) = if c.critical[arc.lower].index == 0 {
            (arc.upper, arc.lower)
        } else if c.critical[arc.upper].index as usize == nd {
            (arc.lower, arc.upper)
        } else {
            continue;
        };
        if !h.alive(sd, steps) {
            continue;
        }
        let Some(rep) = h.representative(ex, steps) else { continue };
        let p = h.extremum_path(c, i, steps);
        assert_eq!(p.first(), Some(&c.critical[sd].position));
        assert_eq!(p.last(), Some(&c.critical[rep].position));
        // Steps are between incident cells, but for the last when the extremum has merged.
        let n = p.len() - usize::from(rep != ex);
        for w in p[..n].windows(2) {
            let d: f64 = (0..3).map(|k| (w[0][k] - w[1][k]).abs()).sum();
            assert!(d <= 0.5 + 1e-9, "path steps are between incident cells");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    #[test]
    fn hierarchy_is_consistent(
        (dims, vals) in crate::common::small_field(2, 9, 5, (-50..50).map(f64::from).collect())
    ) {
        let (_, a) = run(&dims, &vals);
        check_hierarchy(&a);
    }
}

#[test]
fn simplifying_above_the_smallest_bump_removes_its_maximum() {
    let centres = [[4.0, 4.0, 4.0], [14.0, 5.0, 6.0], [6.0, 14.0, 5.0], [15.0, 15.0, 12.0]];
    let dims = [20, 20, 16];
    let mut vals = bumps(dims, &centres[..3], 1.8);
    // The fourth bump is half as high.
    for (v, w) in vals.iter_mut().zip(bumps(dims, &centres[3..], 1.8)) {
        *v += 0.5 * w;
    }
    let (_, a) = run(&[20, 20, 16], &vals);
    check_hierarchy(&a);
    let h = &a.hierarchy;
    assert_eq!(h.counts(&a.complex, 0)[3], 4);
    // The small bump's maximum dies in the diagram at its persistence p (the lowest of the
    // four): simplifying below p keeps it, above p removes it.
    let m4 = a
        .complex
        .critical
        .iter()
        .position(|p| {
            p.index == 3 && (p.position[0] - 15.0).abs() < 2.0 && (p.position[1] - 15.0).abs() < 2.0
        })
        .unwrap();
    let pair = a.diagram.iter().find(|d| d.death_cell == Some(a.complex.critical[m4].cell)).unwrap();
    let p = pair.death.unwrap() - pair.birth;
    assert!(p > 0.3 && p < 0.5, "persistence of the small bump {p}");
    assert_eq!(h.counts(&a.complex, h.steps_at(p * 0.99))[3], 4, "below its persistence it stays");
    assert_eq!(h.counts(&a.complex, h.steps_at(p * 1.01))[3], 3, "above it, it is gone");
    assert!(h.alive(m4, h.steps_at(p * 0.99)) && !h.alive(m4, h.steps_at(p * 1.01)));
    check_arcs(&[20, 20, 16], &vals);
}
