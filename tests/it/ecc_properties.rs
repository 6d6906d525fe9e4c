//! The fast ECC against the naive cell-counting reference on small random fields.

use crate::common::field_of;
use proptest::prelude::*;
use topoview_core::control::Control;
use topoview_core::field::Dtype;
use topoview_core::topo::ecc::{self, Construction, EccOptions, Filtration, NanPolicy, naive};

fn dtype() -> impl Strategy<Value = Dtype> {
    prop::sample::select(Dtype::ALL.to_vec())
}

/// Values in range for `dtype`, drawn from `levels` distinct values (many ties when small),
/// spread over the type's range so that sign handling and extremes are exercised.
fn values(dtype: Dtype, n: usize, levels: u32) -> impl Strategy<Value = Vec<f64>> {
    let (lo, hi): (f64, f64) = match dtype {
        Dtype::U8 => (0.0, 255.0),
        Dtype::I8 => (-128.0, 127.0),
        Dtype::U16 => (0.0, 65535.0),
        Dtype::I16 => (-32768.0, 32767.0),
        Dtype::U32 => (0.0, 4294967295.0),
        Dtype::I32 => (-2147483648.0, 2147483647.0),
        Dtype::F32 | Dtype::F64 => (-1e6, 1e6),
    };
    let levels = levels.max(1);
    prop::collection::vec(0..levels, n).prop_map(move |v| {
        v.into_iter()
            .map(|l| {
                let t = if levels == 1 { 0.5 } else { l as f64 / (levels - 1) as f64 };
                let x = lo + t * (hi - lo);
                if dtype.is_float() { x } else { x.round() }
            })
            .collect()
    })
}

fn case() -> impl Strategy<Value = (Dtype, Vec<usize>, Vec<f64>)> {
    (dtype(), 1usize..=3, prop::sample::select(vec![1u32, 2, 3, 5, 40, 100_000])).prop_flat_map(
        |(dt, ndim, levels)| {
            let max = if ndim == 3 { 4 } else { 6 };
            prop::collection::vec(1usize..=max, ndim).prop_flat_map(move |dims| {
                let n = dims.iter().product();
                (Just(dt), Just(dims), values(dt, n, levels))
            })
        },
    )
}

fn all_options(chunk_voxels: usize) -> Vec<EccOptions> {
    let mut v = Vec::new();
    for construction in [Construction::TopCells, Construction::Vertices] {
        for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
            v.push(EccOptions { construction, filtration, nan: NanPolicy::Absent, chunk_voxels });
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn fast_equals_naive((dt, dims, vals) in case(), chunk in 1usize..40) {
        let f = field_of(dt, &dims, &vals);
        for opts in all_options(chunk) {
            let fast = ecc::ecc(&f, &opts, &Control::default()).unwrap();
            let slow = naive::ecc(&f, opts.construction, opts.filtration);
            prop_assert_eq!(&fast, &slow, "{:?} {:?} {:?}", dt, dims, opts);
        }
    }

    #[test]
    fn eight_bit_fields_full_of_extremes_equal_naive(
        (dt, dims, vals) in (prop::sample::select(vec![Dtype::U8, Dtype::I8]), 1usize..=3, 2u32..=3)
            .prop_flat_map(|(dt, ndim, levels)| {
                // Rows up to 140 long: the vector kernels (32 and 64 voxels at a time), the rest, and
                // with AVX-512 the vectors away from both ends of a row (from 129 voxels).
                let max = if ndim == 3 { 4 } else { 6 };
                (1usize..=140, prop::collection::vec(1usize..=max, ndim - 1)).prop_flat_map(move |(x, rest)| {
                    let dims: Vec<usize> = std::iter::once(x).chain(rest).collect();
                    let n = dims.iter().product();
                    (Just(dt), Just(dims), values(dt, n, levels))
                })
            }),
        chunk in 1usize..60,
    ) {
        // The 8-bit kernel shares its largest key with the collar (crates/core/src/topo/ecc/narrow.rs): two
        // or three levels spread over the type's range put the extremes beside every face.
        let f = field_of(dt, &dims, &vals);
        for opts in all_options(chunk) {
            let fast = ecc::ecc(&f, &opts, &Control::default()).unwrap();
            let slow = naive::ecc(&f, opts.construction, opts.filtration);
            prop_assert_eq!(&fast, &slow, "{:?} {:?} {:?}", dt, dims, opts);
        }
    }

    #[test]
    fn nan_voxels_are_absent(
        (dims, vals, nan_mask) in (1usize..=3).prop_flat_map(|nd| prop::collection::vec(1usize..=4, nd))
            .prop_flat_map(|dims| {
                let n: usize = dims.iter().product();
                (Just(dims), prop::collection::vec(-3i32..3, n), prop::collection::vec(prop::bool::weighted(0.3), n))
            }),
        f64_type in any::<bool>(),
    ) {
        let vals: Vec<f64> = vals.iter().zip(&nan_mask)
            .map(|(&v, &nan)| if nan { f64::NAN } else if v == 2 { f64::INFINITY } else { v as f64 })
            .collect();
        let f = field_of(if f64_type { Dtype::F64 } else { Dtype::F32 }, &dims, &vals);
        for opts in all_options(7) {
            let fast = ecc::ecc(&f, &opts, &Control::default()).unwrap();
            prop_assert_eq!(fast, naive::ecc(&f, opts.construction, opts.filtration));
        }
    }
}
