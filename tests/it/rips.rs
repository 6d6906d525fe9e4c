//! Vietoris-Rips barcodes: the Ripser-style reduction against the textbook one on small
//! random clouds (integer coordinates, so ties and duplicate points are common), and against
//! Ripser's own barcodes on the standard sets (tests/data/rips, made by
//! tests/data/rips/expected.py).

use proptest::prelude::*;
use topoview_core::control::Control;
use topoview_core::topo::rips::{self, Distances, RipsOptions};

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
    fn equals_the_textbook_reduction_in_3d(p in cloud(8, 3), maxdim in 0usize..=3, cut in 0usize..4) {
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
    // Each bar's creator enters at its birth and its killer at its death.
    let diameter = |s: u64, k: usize| {
        let v = fast.vertices(s, k);
        assert_eq!(v.len(), k + 1);
        v.iter().flat_map(|&a| v.iter().map(move |&b| (a, b))).map(|(a, b)| d.get(a, b)).fold(0f32, f32::max)
    };
    for bar in &fast.bars {
        assert_eq!(diameter(bar.creator, bar.dim), bar.birth, "{bar:?}");
        assert_eq!(bar.killer.map(|k| diameter(k, bar.dim + 1)), bar.death.is_finite().then_some(bar.death));
    }
}

fn equals_ripser(file: &str, name: &str, maxdim: usize, threshold: f32) {
    use topoview_core::io::points::{self, PointFormat};
    let data = points::read(
        std::path::Path::new(&format!("tests/data/rips/{file}")),
        PointFormat::Auto,
        &Control::default(),
    )
    .unwrap();
    let d = topoview_core::io::points::distances(&data, &Control::default()).unwrap();
    let b = rips::barcode(&d, &RipsOptions { maxdim, threshold }, &Control::default()).unwrap().sorted();
    let want = crate::common::ripser_bars(name);
    assert_eq!(b.bars.len(), want.len(), "{name}: {:?} bars per dimension", b.counts());
    for (got, want) in b.bars.iter().zip(&want) {
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn equals_ripser_on_the_sphere_and_celegans_to_dimension_2() {
    equals_ripser("sphere_3_192.lower_distance_matrix", "sphere_3_192_dim2", 2, f32::INFINITY);
    equals_ripser("celegans.distance_matrix", "celegans_dim2", 2, f32::INFINITY);
}

#[test]
fn equals_ripser_on_cyclooctane_and_o3_with_their_thresholds() {
    equals_ripser("cyclooctane.csv", "cyclooctane_dim1_t0.5", 1, 0.5);
    equals_ripser("o3_4096.point_cloud", "o3_4096_dim1_t1.4", 1, 1.4);
}

/// Points taken from the bundled MRI (400 voxels of a superlevel set, in world millimetres)
/// are still the ones whose barcode Ripser computed, and the barcodes are equal.
#[test]
fn equals_ripser_on_points_taken_from_the_mri() {
    use topoview_core::topo::ecc::Filtration;
    let mni =
        topoview_core::io::open(std::path::Path::new("tests/data/mni152_t1_09a.nii.gz"), &Default::default())
            .unwrap();
    let taken = rips::image_points::set_voxels(&mni, 150.0, Filtration::Superlevel, 400, 3);
    let text = std::fs::read_to_string("tests/data/rips/mni152_set150_400.csv").unwrap();
    let saved: Vec<f64> = text
        .lines()
        .skip(1)
        .flat_map(|l| l.split(',').map(|c| c.parse::<f64>().unwrap()).collect::<Vec<_>>())
        .collect();
    assert_eq!(taken.coords, saved);
    equals_ripser("mni152_set150_400.csv", "mni152_set150_400_dim2", 2, f32::INFINITY);
}
