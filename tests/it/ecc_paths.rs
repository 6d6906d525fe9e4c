//! The two accumulation paths agree on fields too large for the naive reference: the bucketed
//! path of many-valued types (f32, f64, u32, i32) against the direct histogram of u16 ranks of
//! the same values. Ranks keep the order, so the curves must match point for point.

use crate::common::field_of;
use topoview_core::control::Control;
use topoview_core::field::{Dtype, Samples, ScalarField};
use topoview_core::topo::ecc::{Construction, EccOptions, Filtration, NanPolicy, ecc};

fn noise(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// u16 ranks of the values (ties share a rank).
fn ranks(vals: &[f64]) -> Vec<f64> {
    let mut sorted = vals.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    assert!(sorted.len() <= 65536);
    vals.iter().map(|v| sorted.binary_search_by(|x| x.total_cmp(v)).unwrap() as f64).collect()
}

fn check(dtype: Dtype, dims: &[usize], vals: &[f64]) {
    let f = field_of(dtype, dims, vals);
    // Ranks of the values as the field stores them (casts may merge values).
    let stored: Vec<f64> = (0..f.len()).map(|i| f.samples().get_f64(i)).collect();
    let r: ScalarField = field_of(Dtype::U16, dims, &ranks(&stored));
    assert!(matches!(r.samples(), Samples::U16(_)));
    for construction in [Construction::TopCells, Construction::Vertices] {
        for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
            for chunk_voxels in [1 << 20, 1000] {
                let o = EccOptions { construction, filtration, nan: NanPolicy::Reject, chunk_voxels };
                let a = ecc(&f, &o, &Control::default()).unwrap();
                let b = ecc(&r, &o, &Control::default()).unwrap();
                assert_eq!(a.chi, b.chi, "{dtype} {dims:?} {construction} {filtration:?}");
                let mut want = stored.clone();
                want.sort_by(f64::total_cmp);
                want.dedup();
                if filtration == Filtration::Superlevel {
                    want.reverse();
                }
                assert_eq!(a.thresholds.to_f64_vec(), want);
            }
        }
    }
}

#[test]
fn bucketed_path_equals_histogram_path() {
    let mut r = noise(7);
    let n = 40 * 40 * 40;
    let uniform: Vec<f64> = (0..n).map(|_| r() * 2e6 - 1e6).collect();
    let narrow: Vec<f64> = (0..n).map(|_| 1.0 + r() * 1e-3).collect();
    let ties: Vec<f64> = (0..n).map(|_| (r() * 300.0).floor() - 150.0).collect();
    let skewed: Vec<f64> = (0..n).map(|_| if r() < 0.99 { r() } else { 1e30 * r() }).collect();
    for (name, vals) in [("uniform", &uniform), ("narrow", &narrow), ("ties", &ties), ("skewed", &skewed)] {
        for dtype in [Dtype::F32, Dtype::F64] {
            eprintln!("{name} {dtype}");
            check(dtype, &[40, 40, 40], vals);
            check(dtype, &[320, 200], vals);
        }
    }
    let ints: Vec<f64> = (0..n).map(|_| (r() * 4e9).floor()).collect();
    check(Dtype::U32, &[40, 40, 40], &ints);
    let signed: Vec<f64> = ints.iter().map(|v| v - 2e9).collect();
    check(Dtype::I32, &[40, 40, 40], &signed);
}
