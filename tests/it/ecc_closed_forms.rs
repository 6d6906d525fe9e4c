//! ECCs known in closed form, and the three copies of the emri volume.

use crate::common::{data, field_of};
use topoview_core::control::Control;
use topoview_core::field::Dtype;
use topoview_core::io::{OpenOptions, open};
use topoview_core::topo::ecc::{Construction, Ecc, EccOptions, Filtration, NanPolicy, ecc};

const BOTH: [Construction; 2] = [Construction::TopCells, Construction::Vertices];

fn curve(dims: &[usize], vals: &[f64], c: Construction) -> Ecc {
    let f = field_of(Dtype::U8, dims, vals);
    ecc(&f, &EccOptions { construction: c, ..EccOptions::default() }, &Control::default()).unwrap()
}

/// Voxel values of an (x, y, z) grid from a function of the coordinates.
fn grid(dims: [usize; 3], f: impl Fn(usize, usize, usize) -> f64) -> Vec<f64> {
    let mut v = Vec::new();
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                v.push(f(x, y, z));
            }
        }
    }
    v
}

#[test]
fn constant_field_is_one_contractible_piece() {
    for c in BOTH {
        for dims in [&[7][..], &[5, 3], &[4, 3, 2]] {
            let n = dims.iter().product();
            let e = curve(dims, &vec![42.0; n], c);
            assert_eq!((e.thresholds.to_f64_vec(), e.chi.to_i64()), (vec![42.0], vec![1]), "{c} {dims:?}");
        }
    }
}

#[test]
fn one_bright_voxel_leaves_a_hole_or_a_void() {
    for c in BOTH {
        let e = curve(&[5, 5], &grid([5, 5, 1], |x, y, _| if (x, y) == (2, 2) { 9.0 } else { 1.0 }), c);
        assert_eq!(e.chi, vec![0, 1], "2D {c}: an annulus, then a disc");
        let e =
            curve(&[5, 5, 5], &grid([5, 5, 5], |x, y, z| if (x, y, z) == (2, 2, 2) { 9.0 } else { 1.0 }), c);
        assert_eq!(e.chi, vec![2, 1], "3D {c}: a shell around a void, then a ball");
        let e =
            curve(&[5, 5, 5], &grid([5, 5, 5], |x, y, z| if (x, y, z) == (0, 2, 2) { 9.0 } else { 1.0 }), c);
        assert_eq!(e.chi, vec![1, 1], "3D {c}: a dent on the boundary");
    }
}

#[test]
fn checkerboards() {
    for n in [2usize, 4, 6, 8] {
        let v = grid([n, n, 1], |x, y, _| ((x + y) % 2) as f64);
        let nn = (n * n) as i64;
        // Top-cells: the dark squares touch at corners; V - E + F = (n+1)^2 - 2 - 2n^2 + n^2/2.
        assert_eq!(
            curve(&[n, n], &v, Construction::TopCells).chi,
            vec![-nn / 2 + 2 * n as i64 - 1, 1],
            "n={n}"
        );
        // Vertices: the dark pixels are isolated points.
        assert_eq!(curve(&[n, n], &v, Construction::Vertices).chi, vec![nn / 2, 1], "n={n}");
        let v3 = grid([n, n, n], |x, y, z| ((x + y + z) % 2) as f64);
        assert_eq!(curve(&[n, n, n], &v3, Construction::Vertices).chi, vec![(n * n * n / 2) as i64, 1]);
    }
}

#[test]
fn hollow_cube_is_a_sphere() {
    // A shell of value 0 (the boundary of the box 1..=5), value 1 inside, 2 outside.
    let v = grid([7, 7, 7], |x, y, z| {
        let inside = |a: usize| (1..=5).contains(&a);
        let on = |a: usize| a == 1 || a == 5;
        if inside(x) && inside(y) && inside(z) {
            if on(x) || on(y) || on(z) { 0.0 } else { 1.0 }
        } else {
            2.0
        }
    });
    for c in BOTH {
        assert_eq!(curve(&[7, 7, 7], &v, c).chi, vec![2, 1, 1], "{c}");
    }
}

#[test]
fn rings_are_circles() {
    let ring = |x: usize, y: usize| {
        (1..=5).contains(&x) && (1..=5).contains(&y) && (x == 1 || x == 5 || y == 1 || y == 5)
    };
    let v = grid([7, 7, 1], |x, y, _| if ring(x, y) { 0.0 } else { 1.0 });
    let v3 = grid([7, 7, 3], |x, y, z| if z == 1 && ring(x, y) { 0.0 } else { 1.0 });
    for c in BOTH {
        assert_eq!(curve(&[7, 7], &v, c).chi, vec![0, 1], "annulus {c}");
        assert_eq!(curve(&[7, 7, 3], &v3, c).chi, vec![0, 1], "solid torus {c}");
    }
    // A diagonal ring is closed only with 8-connectivity (top-cells).
    let diamond =
        grid([5, 5, 1], |x, y, _| if (x as i32 - 2).abs() + (y as i32 - 2).abs() == 2 { 0.0 } else { 1.0 });
    assert_eq!(curve(&[5, 5], &diamond, Construction::TopCells).chi, vec![0, 1]);
    assert_eq!(curve(&[5, 5], &diamond, Construction::Vertices).chi, vec![8, 1]);
}

#[test]
fn superlevel_is_sublevel_of_the_negation() {
    let f = open(&data("nipy_some_blobs.nii"), &OpenOptions::default()).unwrap();
    let neg = f
        .with_samples(topoview_core::field::Samples::F64(
            (0..f.len()).map(|i| -f.samples().get_f64(i)).collect(),
        ))
        .unwrap();
    for c in BOTH {
        let sup = ecc(
            &f,
            &EccOptions { construction: c, filtration: Filtration::Superlevel, ..EccOptions::default() },
            &Control::default(),
        )
        .unwrap();
        let sub =
            ecc(&neg, &EccOptions { construction: c, ..EccOptions::default() }, &Control::default()).unwrap();
        assert_eq!(sup.chi, sub.chi);
        assert_eq!(
            sup.thresholds.to_f64_vec(),
            sub.thresholds.to_f64_vec().iter().map(|t| -t).collect::<Vec<_>>()
        );
    }
}

#[test]
fn emri_copies_give_identical_curves() {
    let names = [
        "pydicom_emri_small.nii.gz",
        "pydicom_emri_small_64x64x10_uint16_le.raw",
        "pydicom_emri_small_stack_uint16.tif",
    ];
    for c in BOTH {
        for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
            let opts = EccOptions { construction: c, filtration, nan: NanPolicy::Reject, chunk_voxels: 4096 };
            let curves: Vec<Ecc> = names
                .iter()
                .map(|n| {
                    ecc(&open(&data(n), &OpenOptions::default()).unwrap(), &opts, &Control::default())
                        .unwrap()
                })
                .collect();
            assert_eq!(curves[0], curves[1]);
            assert_eq!(curves[0], curves[2]);
            assert_eq!(curves[0].chi.last().unwrap(), 1, "the whole box is contractible");
        }
    }
}

#[test]
fn every_bundled_file_matches_the_naive_count() {
    // The naive reference allocates per cell, so the 8.7M-voxel MNI template is cropped.
    use topoview_core::topo::ecc::naive;
    for name in [
        "camera.png",
        "coins.png",
        "mpl_jacksboro_dem_int16.tif",
        "mni152_t1_09a.nii.gz",
        "nipy_some_blobs.nii",
        "pydicom_emri_small.nii.gz",
        "multipage_2x15x10.tif",
        "nibabel_standard_4x5x7.nii.gz",
    ] {
        let f = open(&data(name), &OpenOptions::default()).unwrap();
        let crop = if f.len() > 1 << 20 { crate::common::crop(&f, 48) } else { f };
        for c in BOTH {
            for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                let opts = EccOptions { construction: c, filtration, ..EccOptions::default() };
                assert_eq!(
                    ecc(&crop, &opts, &Control::default()).unwrap(),
                    naive::ecc(&crop, c, filtration),
                    "{name} {c}"
                );
            }
        }
    }
}

#[test]
fn long_1d_lines_do_not_overflow_the_packed_histogram() {
    // A constant line of 2^28 + 1 samples: each adds 16 to the low half of the packed bin, which
    // would carry into the count if the line were not split at the flush interval (2^26).
    let n = (1usize << 28) + 1;
    let f =
        topoview_core::field::ScalarField::new(&[n], topoview_core::field::Samples::U8(vec![7; n])).unwrap();
    let e = ecc(&f, &EccOptions::default(), &Control::default()).unwrap();
    assert_eq!((e.thresholds.to_f64_vec(), e.chi.to_i64()), (vec![7.0], vec![1]));
}
