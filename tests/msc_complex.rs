//! Arcs against brute-force V-path enumeration, labels, and closed forms.

mod common;

use common::field_of;
use proptest::prelude::*;
use std::collections::BTreeMap;
use topoview::control::Control;
use topoview::field::{Dtype, ScalarField};
use topoview::topo::msc::complex::NO_LABEL;
use topoview::topo::msc::gradient::Gradient;
use topoview::topo::msc::{Analysis, analyse};

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

fn check_arcs(dims: &[usize], vals: &[f64]) {
    let (_, a) = run(dims, vals);
    let g = &a.gradient;
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
        assert_eq!(arc.polyline.first(), Some(&u.position));
        assert_eq!(arc.polyline.last(), Some(&l.position));
        // A V-path alternates k-1 and k cells, each step a facet or its gradient partner.
        let cells: Vec<usize> = arc.polyline.iter().map(|p| grid.id(p.map(|x| (x * 2.0) as usize))).collect();
        for w in cells.windows(2) {
            let (x, y) = (w[0], w[1]);
            let facet = grid.facets(x).any(|f| f == y);
            let partner = g.partner(x) == Some(y);
            assert!(facet || partner, "{dims:?}: {x} -> {y} is not a V-path step");
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
        (dims, vals) in (2usize..=3).prop_flat_map(|nd| prop::collection::vec(2usize..=(if nd == 3 { 4 } else { 7 }), nd))
            .prop_flat_map(|dims| {
                let n: usize = dims.iter().product();
                (Just(dims), prop::collection::vec(prop::sample::select(vec![0.0, 1.0, 2.0, 3.0, 5.5, 8.0, -1.0]), n))
            })
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
