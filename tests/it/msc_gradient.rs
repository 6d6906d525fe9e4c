//! The discrete gradient: a valid acyclic matching inside lower stars, the Morse equality, and
//! minimality against brute-force persistence of the whole complex.

use crate::common::field_of;
use proptest::prelude::*;
use topoview_core::field::Dtype;
use topoview_core::topo::msc::gradient::Gradient;
use topoview_core::topo::msc::grid::CellGrid;
use topoview_core::topo::msc::order::VertexOrder;
use topoview_core::topo::msc::persistence::{brute_force, top_vertex};
use topoview_core::topo::msc::{discrete_gradient, morse_sum, vertex_order};

fn check_matching(g: &Gradient, keys: &impl VertexOrder) {
    let grid = g.grid;
    for c in 0..grid.n_cells() {
        if let Some(p) = g.partner(c) {
            assert_eq!(g.partner(p), Some(c), "pairs are mutual");
            assert_eq!(grid.dim(p).abs_diff(grid.dim(c)), 1);
            assert_eq!(
                top_vertex(&grid, keys, p),
                top_vertex(&grid, keys, c),
                "pairs stay in one lower star"
            );
        } else {
            assert!(g.is_critical(c));
        }
    }
}

/// No closed V-path: the graph alpha -> alpha' (alpha paired up with beta, alpha' another facet
/// of beta) has no cycle, in every dimension.
fn check_acyclic(g: &Gradient) {
    let grid = g.grid;
    let n = grid.n_cells();
    let next = |a: usize| -> Vec<usize> {
        match g.partner(a) {
            Some(b) if grid.dim(b) > grid.dim(a) => grid.facets(b).filter(|&f| f != a).collect(),
            _ => Vec::new(),
        }
    };
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    for s in 0..n {
        if state[s] != 0 {
            continue;
        }
        let mut stack = vec![(s, next(s), 0usize)];
        state[s] = 1;
        while let Some((v, succ, i)) = stack.last_mut() {
            if *i < succ.len() {
                let w = succ[*i];
                *i += 1;
                assert_ne!(state[w], 1, "closed V-path through cell {w}");
                if state[w] == 0 {
                    state[w] = 1;
                    let nw = next(w);
                    stack.push((w, nw, 0));
                }
            } else {
                state[*v] = 2;
                stack.pop();
            }
        }
    }
}

/// Critical cells per dimension required by the persistence of the lower-star filtration: both
/// cells of every pair created and destroyed in different lower stars, and every essential cell.
fn required(grid: &CellGrid, keys: &impl VertexOrder) -> [usize; 4] {
    let mut need = [0; 4];
    for p in brute_force(grid, keys) {
        match p.death {
            None => need[p.dim] += 1,
            Some(d) if top_vertex(grid, keys, p.birth) != top_vertex(grid, keys, d) => {
                need[p.dim] += 1;
                need[p.dim + 1] += 1;
            }
            _ => {}
        }
    }
    need
}

fn check_all(dims: &[usize], vals: &[f64]) {
    let f = field_of(Dtype::F64, dims, vals);
    let g = discrete_gradient(&f).unwrap();
    let keys = vertex_order(&f).unwrap();
    check_matching(&g, &keys);
    check_acyclic(&g);
    assert_eq!(morse_sum(&g), 1);
    let crit = g.critical_cells().map(|c| c.len());
    assert_eq!(crit, required(&g.grid, &keys), "minimal gradient for {dims:?} {vals:?}");
    equals_the_naive_gradient(&g, &keys);
}

/// The same pairs and critical cells as the plain ProcessLowerStars, cell for cell.
fn equals_the_naive_gradient(g: &Gradient, order: &impl VertexOrder) {
    let want = crate::common::naive_gradient::gradient(&g.grid, order);
    for (c, w) in want.into_iter().enumerate() {
        assert_eq!(g.partner(c), w, "cell {c} of {:?}", g.grid.vdims);
        assert_eq!(g.is_critical(c), w.is_none(), "cell {c} of {:?}", g.grid.vdims);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn gradient_is_valid_and_minimal(
        (dims, vals) in crate::common::small_field(1, 7, 4, vec![0.0, 1.0, 2.0, 3.0, 5.5, 8.0, -1.0, 13.0, 21.0, 34.0])
    ) {
        check_all(&dims, &vals);
    }
}

#[test]
fn distinct_values_on_larger_grids() {
    for (k, dims) in [vec![9, 8], vec![6, 5, 4], vec![5, 5, 5]].into_iter().enumerate() {
        let vals = crate::common::xorshift_values(12345 + k as u64, dims.iter().product(), 100_000);
        check_all(&dims, &vals);
    }
}

#[test]
fn single_bump_has_one_maximum() {
    // A Gaussian bump: one maximum, one minimum on the boundary corner... the counts follow from
    // minimality: a function with one interior maximum on a box has 1 min and 1 max in 2D here.
    let (nx, ny) = (9, 7);
    let vals: Vec<f64> = (0..nx * ny)
        .map(|i| {
            let (x, y) = ((i % nx) as f64 - 4.0, (i / nx) as f64 - 3.0);
            (-(x * x + y * y) / 6.0).exp()
        })
        .collect();
    let g = discrete_gradient(&field_of(Dtype::F64, &[nx, ny], &vals)).unwrap();
    let c = g.critical_cells().map(|c| c.len());
    assert_eq!(c[2], 1, "one maximum");
    assert_eq!(c[0] - c[1] + c[2], 1);
}

/// Persistence through the Morse complex equals brute-force persistence of the whole complex,
/// pair for pair (as lower-star vertices), leaving out pairs inside one lower star.
fn check_persistence(dims: &[usize], vals: &[f64]) {
    use topoview_core::topo::msc::morse;
    let f = field_of(Dtype::F64, dims, vals);
    let g = discrete_gradient(&f).unwrap();
    let keys = vertex_order(&f).unwrap();
    let grid = g.grid;
    let as_vertices = |pairs: Vec<topoview_core::topo::msc::persistence::CellPair>| {
        let mut v: Vec<(usize, usize, Option<usize>)> = pairs
            .into_iter()
            .map(|p| (p.dim, top_vertex(&grid, &keys, p.birth), p.death.map(|d| top_vertex(&grid, &keys, d))))
            .filter(|&(_, b, d)| d != Some(b))
            .collect();
        v.sort();
        v
    };
    let want = as_vertices(brute_force(&grid, &keys));
    let on_cells = morse::persistence(&g, &keys);
    assert_eq!(as_vertices(on_cells.clone()), want, "{dims:?} {vals:?}");
    // The complex's own path (positions by critical point id, columns from the arcs) gives the
    // same pairs, zero-persistence ones included, and partners to match.
    // (The complex refuses an axis of size 1, which the gradient takes.)
    if dims.contains(&1) {
        return;
    }
    let a = topoview_core::topo::msc::analyse(&f, &topoview_core::control::Control::default()).unwrap();
    let (partner, on_ids) = morse::complex_persistence(&a.complex, &keys, &Default::default()).unwrap();
    assert_eq!(on_ids, on_cells, "{dims:?} {vals:?}");
    for p in &on_ids {
        let id = |c| a.complex.id_of(c).unwrap();
        let want = p.death.map_or(topoview_core::topo::msc::simplify::UNPAIRED, id);
        assert_eq!(partner[id(p.birth)], want, "{dims:?} {vals:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn morse_complex_persistence_equals_brute_force(
        (dims, vals) in crate::common::small_field(1, 7, 4, vec![0.0, 1.0, 2.0, 3.0, 5.5, 8.0, -1.0, 13.0])
    ) {
        check_persistence(&dims, &vals);
    }
}

#[test]
fn morse_persistence_on_larger_grids() {
    for (k, dims) in [vec![12, 9], vec![7, 6, 5], vec![6, 6, 6]].into_iter().enumerate() {
        let vals = crate::common::xorshift_values(777 + k as u64, dims.iter().product(), 50);
        check_persistence(&dims, &vals);
    }
}

#[test]
fn equals_the_naive_gradient_on_random_fields_with_plateaus() {
    // Smooth fields rounded to a few levels: large plateaus, where only the index breaks ties.
    for (dims, levels) in [(vec![24, 20, 16], 6.0), (vec![60, 50], 5.0), (vec![17, 13, 11], 1000.0)] {
        let grf =
            topoview_core::synthetic::gaussian_random_field(&dims, 2.0, 11, &Default::default()).unwrap();
        let vals: Vec<f64> =
            (0..grf.len()).map(|i| (grf.samples().get_f64(i) * levels * 4.0).round()).collect();
        let f = field_of(Dtype::F64, &dims, &vals);
        let g = discrete_gradient(&f).unwrap();
        equals_the_naive_gradient(&g, &vertex_order(&f).unwrap());
    }
}
