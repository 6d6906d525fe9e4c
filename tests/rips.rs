//! Vietoris-Rips barcodes: the Ripser-style reduction against the textbook one on small
//! random clouds (integer coordinates, so ties and duplicate points are common), and against
//! Ripser's own barcodes on the standard sets (tests/data/rips, made by
//! tests/data/rips/expected.py).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use topoview::control::Control;
use topoview::topo::rips::{self, Distances, RipsOptions};

fn cloud(max_points: usize, dim: usize) -> impl Strategy<Value = Vec<f64>> {
    (1..=max_points)
        .prop_flat_map(move |n| proptest::collection::vec(0i32..4, n * dim))
        .prop_map(|v| v.into_iter().map(f64::from).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn equals_the_textbook_reduction_in_2d(p in cloud(9, 2), maxdim in 0usize..=2, cut in 0usize..4) {
        check(&p, 2, maxdim, cut);
    }

    #[test]
    fn equals_the_textbook_reduction_in_3d(p in cloud(8, 3), maxdim in 0usize..=2, cut in 0usize..4) {
        check(&p, 3, maxdim, cut);
    }
}

fn check(p: &[f64], dim: usize, maxdim: usize, cut: usize) {
    let d = Distances::euclidean(p, dim, &Control::default()).unwrap();
    // Thresholds at a distance that occurs (ties at the cut), or none.
    let threshold = [f32::INFINITY, 1.0, 2f64.sqrt() as f32, 2.0][cut];
    let opts = RipsOptions { maxdim, threshold };
    let fast = rips::barcode(&d, &opts, &Control::default()).unwrap().sorted();
    let slow = rips::naive::barcode(&d, &opts).sorted();
    assert_eq!(fast, slow, "{} points {p:?}, {opts:?}", d.len());
}
