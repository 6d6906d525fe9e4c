//! Separable smoothing against a direct convolution with the product kernel.

use crate::common::field_of;
use proptest::prelude::*;
use topoview_core::control::Control;
use topoview_core::field::{Dtype, Samples, ScalarField};
use topoview_core::topo::smooth::{SigmaUnits, Smoothing, reflect, smooth, taps};

/// Direct convolution: every output voxel sums the product kernel over its whole neighbourhood.
fn direct(f: &ScalarField, sigma: [f64; 3], truncate: f64) -> Vec<f64> {
    let [nx, ny, nz] = f.dims();
    let w: Vec<Vec<f64>> =
        sigma.iter().map(|&s| taps(s, truncate).iter().map(|&x| x as f64).collect()).collect();
    let r: Vec<i64> = w.iter().map(|k| (k.len() / 2) as i64).collect();
    let mut out = Vec::with_capacity(f.len());
    for z in 0..nz as i64 {
        for y in 0..ny as i64 {
            for x in 0..nx as i64 {
                let mut acc = 0.0;
                for (c, wz) in w[2].iter().enumerate() {
                    for (b, wy) in w[1].iter().enumerate() {
                        for (a, wx) in w[0].iter().enumerate() {
                            let (xx, yy, zz) = (
                                reflect(x + a as i64 - r[0], nx),
                                reflect(y + b as i64 - r[1], ny),
                                reflect(z + c as i64 - r[2], nz),
                            );
                            acc += wx * wy * wz * f.samples().get_f64(f.index(xx, yy, zz));
                        }
                    }
                }
                out.push(acc);
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    #[test]
    fn separable_equals_direct(
        dims in prop::collection::vec(1usize..=9, 1..=3),
        sigma in 0.0f64..3.0,
        truncate in prop::sample::select(vec![1.0, 3.0, 4.0]),
        seed in any::<u64>(),
    ) {
        let n: usize = dims.iter().product();
        let mut s = seed | 1;
        let vals: Vec<f64> = (0..n).map(|_| { s ^= s << 13; s ^= s >> 7; s ^= s << 17; (s % 1000) as f64 - 300.0 }).collect();
        let f = field_of(Dtype::I16, &dims, &vals);
        let sm = Smoothing { sigma, units: SigmaUnits::Voxels, truncate };
        let got = smooth(&f, &sm, &Control::default()).unwrap();
        let want = direct(&f, sm.sigma_voxels(&f), truncate);
        let Samples::F32(g) = got.samples() else { panic!("smoothing gives f32") };
        for (a, b) in g.iter().zip(&want) {
            prop_assert!((*a as f64 - b).abs() <= 1e-5 * b.abs().max(300.0), "{a} vs {b}");
        }
    }
}

#[test]
fn physical_sigma_uses_spacing_and_constant_stays_constant() {
    let f = field_of(Dtype::U8, &[6, 5, 4], &[7.0; 120]).with_spacing([0.5, 1.0, 2.0]).unwrap();
    let sm = Smoothing { sigma: 2.0, units: SigmaUnits::Physical, truncate: 3.0 };
    assert_eq!(sm.sigma_voxels(&f), [4.0, 2.0, 1.0]);
    let g = smooth(&f, &sm, &Control::default()).unwrap();
    let Samples::F32(v) = g.samples() else { panic!() };
    assert!(v.iter().all(|x| (x - 7.0).abs() < 1e-5));
    assert_eq!(g.spacing(), f.spacing());
    assert!(smooth(&f, &Smoothing::voxels(-1.0), &Control::default()).is_err());
    assert!(smooth(&f, &Smoothing::voxels(f64::NAN), &Control::default()).is_err());
}
