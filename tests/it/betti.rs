//! Betti curves against a naive flood fill on small random fields and against GUDHI's cubical
//! persistence (an independent library; tests/data/gudhi/make.py) on real and random fields.

use crate::common::field_of;
use proptest::prelude::*;
use topoview_core::control::Control;
use topoview_core::field::{Dtype, ScalarField};
use topoview_core::io::{OpenOptions, open};
use topoview_core::topo::betti::parts::{NO_PART, parts};
use topoview_core::topo::betti::{Betti, betti, betti_in_slabs};
use topoview_core::topo::ecc::{self, Construction, EccOptions, Filtration, NanPolicy};

fn options(construction: Construction, filtration: Filtration) -> EccOptions {
    EccOptions { construction, filtration, nan: NanPolicy::Absent, ..EccOptions::default() }
}

const ALL: [(Construction, Filtration); 4] = [
    (Construction::TopCells, Filtration::Sublevel),
    (Construction::TopCells, Filtration::Superlevel),
    (Construction::Vertices, Filtration::Sublevel),
    (Construction::Vertices, Filtration::Superlevel),
];

/// Components of the voxels where `member` holds, by breadth-first search over a grid padded
/// with one layer all around (`pad` gives the padding's membership), `full` for 8/26 neighbours.
fn flood_components(
    dims: [usize; 3],
    three_d: bool,
    member: &dyn Fn(usize) -> bool,
    pad: bool,
    full: bool,
) -> usize {
    let p = |n: usize, on: bool| if on { n + 2 } else { n };
    let (px, py, pz) = (p(dims[0], true), p(dims[1], true), p(dims[2], three_d));
    let inside = |x: usize, y: usize, z: usize| -> Option<usize> {
        let (x, y) = (x.checked_sub(1)?, y.checked_sub(1)?);
        let z = if three_d { z.checked_sub(1)? } else { z };
        (x < dims[0] && y < dims[1] && z < dims[2]).then(|| x + dims[0] * (y + dims[1] * z))
    };
    let is_in = |x: usize, y: usize, z: usize| inside(x, y, z).map_or(pad, member);
    let mut seen = vec![false; px * py * pz];
    let mut count = 0;
    for start in 0..seen.len() {
        let (x, y, z) = (start % px, start / px % py, start / (px * py));
        if seen[start] || !is_in(x, y, z) {
            continue;
        }
        count += 1;
        seen[start] = true;
        let mut stack = vec![(x, y, z)];
        while let Some((x, y, z)) = stack.pop() {
            let dz: &[i64] = if three_d { &[-1, 0, 1] } else { &[0] };
            for &oz in dz {
                for oy in -1..=1i64 {
                    for ox in -1..=1i64 {
                        let steps = (ox != 0) as u8 + (oy != 0) as u8 + (oz != 0) as u8;
                        if steps == 0 || (!full && steps > 1) {
                            continue;
                        }
                        let (nx, ny, nz) = (x as i64 + ox, y as i64 + oy, z as i64 + oz);
                        if nx < 0 || ny < 0 || nz < 0 || nx >= px as i64 || ny >= py as i64 || nz >= pz as i64
                        {
                            continue;
                        }
                        let (nx, ny, nz) = (nx as usize, ny as usize, nz as usize);
                        let j = nx + px * (ny + py * nz);
                        if !seen[j] && is_in(nx, ny, nz) {
                            seen[j] = true;
                            stack.push((nx, ny, nz));
                        }
                    }
                }
            }
        }
    }
    count
}

/// β0 and the number of bounded components of the complement (β2 in 3D, β1 in 2D and 1D) of the
/// set at `t`, by flood fill: no union-find, no sort.
fn naive(f: &ScalarField, c: Construction, filt: Filtration, t: f64) -> (usize, usize) {
    let three_d = f.ndim() == 3;
    let v = |i: usize| f.samples().get_f64(i);
    let in_set = |i: usize| if filt == Filtration::Sublevel { v(i) <= t } else { v(i) >= t };
    let out = |i: usize| !in_set(i);
    let full_set = c == Construction::TopCells;
    let b0 = flood_components(f.dims(), three_d, &in_set, false, full_set);
    let outside = flood_components(f.dims(), three_d, &out, true, !full_set);
    (b0, outside - 1)
}

fn check_naive(f: &ScalarField) -> Result<(), TestCaseError> {
    for (c, filt) in ALL {
        let e = ecc::ecc(f, &options(c, filt), &Control::default()).unwrap();
        let b = betti(f, &e, &Control::default()).unwrap();
        // The slabs swept in parallel and joined along their cuts count as one sweep does.
        for slabs in 1..=4 {
            let in_slabs = betti_in_slabs(f, &e, slabs, &Control::default()).unwrap();
            prop_assert_eq!(&in_slabs, &b, "{:?} {} {:?} in {} slabs", f.shape(), c, filt, slabs);
        }
        for (i, t) in e.thresholds.to_f64_vec().into_iter().enumerate() {
            let (b0, bounded) = naive(f, c, filt, t);
            let at = format!("{:?} {c} {filt:?} t={t}", f.shape());
            prop_assert_eq!(b.b0[i], b0 as i64, "b0 {}", at);
            if f.ndim() == 3 {
                prop_assert_eq!(b.b2[i], bounded as i64, "b2 {}", at);
            } else {
                // Planar duality gives β1 independently of χ.
                prop_assert_eq!(b.b1[i], bounded as i64, "b1 {}", at);
                prop_assert_eq!(b.b2[i], 0);
            }
            prop_assert!(b.b1[i] >= 0, "b1 {}", at);
            prop_assert_eq!(b.b0[i] - b.b1[i] + b.b2[i], e.chi.get(i), "chi {}", at);
        }
    }
    Ok(())
}

/// The labelled parts at every threshold: as many components and bounded complement components
/// as the curves count, every label used, neighbours (under the connectivity) labelled alike.
fn check_parts(f: &ScalarField) -> Result<(), TestCaseError> {
    let [nx, ny, nz] = f.dims();
    for (c, filt) in ALL {
        let e = ecc::ecc(f, &options(c, filt), &Control::default()).unwrap();
        let b = betti(f, &e, &Control::default()).unwrap();
        for (i, t) in e.thresholds.to_f64_vec().into_iter().enumerate() {
            let p = parts(f, c, filt, t, &Control::default()).unwrap();
            let bounded = if f.ndim() == 3 { b.b2[i] } else { b.b1[i] };
            prop_assert_eq!(
                (p.components as i64, p.voids as i64),
                (b.b0[i], bounded),
                "{:?} {} t={}",
                f.shape(),
                c,
                t
            );
            let ids = p.ids();
            let mut used = vec![0u64; (p.components + p.voids) as usize];
            for &id in ids.iter().filter(|&&id| id != NO_PART) {
                used[id as usize] += 1;
            }
            prop_assert_eq!(&used, &p.sizes);
            prop_assert!(used.iter().all(|&n| n > 0));
            let v = |i: usize| f.samples().get_f64(i);
            let in_set = |i: usize| if filt == Filtration::Sublevel { v(i) <= t } else { v(i) >= t };
            for z in 0..nz {
                for y in 0..ny {
                    for x in 0..nx {
                        let a = x + nx * (y + ny * z);
                        prop_assert_eq!(in_set(a), ids[a] != NO_PART && ids[a] < p.components);
                        prop_assert_eq!(p.id_at(x, y, z), ids[a]);
                        for (dx, dy, dz) in
                            [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 0, 1), (1, 1, 1), (1, -1, 1)]
                        {
                            let (x2, y2, z2) = (x as i64 + dx, y as i64 + dy, z as i64 + dz);
                            if x2 >= nx as i64 || y2 < 0 || y2 >= ny as i64 || z2 >= nz as i64 {
                                continue;
                            }
                            let bb = x2 as usize + nx * (y2 as usize + ny * z2 as usize);
                            let steps = dx.abs() + dy.abs() + dz.abs();
                            let set_joins = c == Construction::TopCells || steps == 1;
                            let out_joins = c == Construction::Vertices || steps == 1;
                            if in_set(a) && in_set(bb) && set_joins || !in_set(a) && !in_set(bb) && out_joins
                            {
                                prop_assert_eq!(ids[a], ids[bb]);
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn parts_match_the_curves(
        (dims, vals) in (2usize..=3).prop_flat_map(|nd| {
            let max = if nd == 3 { 6 } else { 10 };
            prop::collection::vec(1usize..=max, nd)
        }).prop_flat_map(|dims| {
            let n: usize = dims.iter().product();
            (Just(dims), prop::collection::vec(0u8..4, n))
        }),
    ) {
        let vals: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
        check_parts(&field_of(Dtype::U8, &dims, &vals))?;
    }

    #[test]
    fn union_find_equals_flood_fill(
        (dims, vals) in (1usize..=3, 2u8..=40).prop_flat_map(|(nd, levels)| {
            let max = if nd == 3 { 8 } else { 12 };
            (prop::collection::vec(1usize..=max, nd), Just(levels))
        }).prop_flat_map(|(dims, levels)| {
            let n: usize = dims.iter().product();
            (Just(dims), prop::collection::vec(0u8..levels, n))
        }),
        dtype in prop::sample::select(vec![Dtype::U8, Dtype::I16, Dtype::F32, Dtype::F64]),
    ) {
        let vals: Vec<f64> = vals.iter().map(|&v| v as f64).collect();
        check_naive(&field_of(dtype, &dims, &vals))?;
    }

    #[test]
    fn nan_voxels_are_outside_every_set(
        (dims, vals) in prop::collection::vec(1usize..=7, 3).prop_flat_map(|dims| {
            let n: usize = dims.iter().product();
            (Just(dims), prop::collection::vec(-1i8..3, n))
        }),
    ) {
        let vals: Vec<f64> = vals.iter().map(|&v| if v < 0 { f64::NAN } else { v as f64 }).collect();
        let f = field_of(Dtype::F32, &dims, &vals);
        // NaN compares false both ways: the flood fill's `in_set` leaves it out of every set.
        check_naive(&f)?;
    }
}

#[test]
fn a_hollow_cube_has_one_void_and_a_ring_one_tunnel() {
    // A 5x5x5 box of 0 with a 1 at the centre: {f <= 0} is a shell around one void.
    let mut v = vec![0.0; 125];
    v[62] = 1.0;
    let f = field_of(Dtype::U8, &[5, 5, 5], &v);
    for c in [Construction::TopCells, Construction::Vertices] {
        let e = ecc::ecc(&f, &options(c, Filtration::Sublevel), &Control::default()).unwrap();
        let b = betti(&f, &e, &Control::default()).unwrap();
        assert_eq!(b, Betti { b0: vec![1, 1], b1: vec![0, 0], b2: vec![1, 0] }, "{c}");
    }
    // A square ring of 0 in a plane of 1 inside a 5x5x3 box: one component, one tunnel.
    let mut v = vec![1.0; 75];
    for (x, y) in [(1, 1), (2, 1), (3, 1), (1, 2), (3, 2), (1, 3), (2, 3), (3, 3)] {
        v[x + 5 * (y + 5)] = 0.0;
    }
    let f = field_of(Dtype::U8, &[5, 5, 3], &v);
    let e =
        ecc::ecc(&f, &options(Construction::Vertices, Filtration::Sublevel), &Control::default()).unwrap();
    let b = betti(&f, &e, &Control::default()).unwrap();
    assert_eq!(b, Betti { b0: vec![1, 1], b1: vec![1, 0], b2: vec![0, 0] });
}

/// β at every threshold of our curve against GUDHI's, whose file lists them where they change.
fn check_gudhi(field_file: &str, expected: &str) {
    let f = open(&crate::common::data(field_file), &OpenOptions::default()).unwrap();
    let text = std::fs::read_to_string(crate::common::data(&format!("gudhi/betti_{expected}.json"))).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (c, filt) in ALL {
        let e = ecc::ecc(&f, &options(c, filt), &Control::default()).unwrap();
        let b = betti(&f, &e, &Control::default()).unwrap();
        let changes = doc["curves"][c.name()][filt.name()].as_array().unwrap();
        let mut k = 0;
        for (i, t) in e.thresholds.to_f64_vec().into_iter().enumerate() {
            let row = |k: usize| changes[k].as_array().unwrap();
            while k + 1 < changes.len() && row(k + 1)[0].as_f64().unwrap() == t {
                k += 1;
            }
            let want: Vec<i64> = row(k)[1..].iter().map(|v| v.as_i64().unwrap()).collect();
            assert_eq!(vec![b.b0[i], b.b1[i], b.b2[i]], want, "{field_file} {c} {filt:?} at {t}");
        }
        assert_eq!(k + 1, changes.len(), "{field_file} {c} {filt:?}: GUDHI lists values the curve lacks");
    }
}

#[test]
fn gudhi_real_fields() {
    check_gudhi("nipy_some_blobs.nii", "nipy_some_blobs");
    check_gudhi("nibabel_standard_4x5x7.nii.gz", "nibabel_standard");
    check_gudhi("pydicom_emri_small_64x64x10_uint16_le.raw", "pydicom_emri_small");
}

#[test]
fn gudhi_random_fields_with_ties() {
    check_gudhi("gudhi/random2d_40x30_float64.raw", "random2d");
    check_gudhi("gudhi/random3d_12x10x8_float64.raw", "random3d");
}

#[test]
fn a_curve_of_another_field_is_refused() {
    let f = field_of(Dtype::U8, &[3, 3], &[0., 1., 2., 3., 4., 5., 6., 7., 8.]);
    let g = field_of(Dtype::U8, &[3, 3], &[0.; 9]);
    let e = ecc::ecc(&g, &EccOptions::default(), &Control::default()).unwrap();
    let err = betti(&f, &e, &Control::default()).unwrap_err();
    assert!(err.to_string().contains("not the field's 9 distinct values"), "{err}");
}

/// The tunnels alive at each threshold are β1 there, for both constructions and filtrations.
fn check_tunnels(f: &ScalarField) {
    use topoview_core::topo::betti::tunnels::tunnels;
    for (c, filt) in ALL {
        let e = ecc::ecc(f, &options(c, filt), &Control::default()).unwrap();
        let b = betti(f, &e, &Control::default()).unwrap();
        let tun = tunnels(f, c, filt, &Control::default()).unwrap();
        for (i, t) in e.thresholds.to_f64_vec().into_iter().enumerate() {
            let alive = tun
                .iter()
                .filter(|x| {
                    if filt == Filtration::Sublevel {
                        x.birth <= t && t < x.death
                    } else {
                        x.birth >= t && t > x.death
                    }
                })
                .count();
            assert_eq!(alive as i64, b.b1[i], "{:?} {c} {filt:?} at {t}", f.shape());
        }
        // Each is marked inside the box.
        for x in &tun {
            assert!((0..3).all(|a| x.at[a] >= 0.0 && x.at[a] <= (f.dims()[a] - 1) as f64), "{x:?}");
        }
    }
}

#[test]
fn tunnels_alive_are_b1() {
    check_tunnels(
        &open(&crate::common::data("gudhi/random2d_40x30_float64.raw"), &OpenOptions::default()).unwrap(),
    );
    check_tunnels(
        &open(&crate::common::data("gudhi/random3d_12x10x8_float64.raw"), &OpenOptions::default()).unwrap(),
    );
    check_tunnels(
        &open(&crate::common::data("nibabel_standard_4x5x7.nii.gz"), &OpenOptions::default()).unwrap(),
    );
    check_tunnels(&open(&crate::common::data("nipy_some_blobs.nii"), &OpenOptions::default()).unwrap());
}

#[test]
fn tunnels_refuse_infinities_and_nan_with_the_reason() {
    use topoview_core::topo::betti::tunnels::tunnels;
    let f = field_of(Dtype::F32, &[3, 3], &[0., 1., 2., 3., f64::INFINITY, 5., 6., 7., 8.]);
    let e = tunnels(&f, Construction::TopCells, Filtration::Sublevel, &Control::default()).unwrap_err();
    assert!(e.to_string().contains("1 infinite samples"), "{e}");
    let f = field_of(Dtype::F32, &[3, 3], &[0., 1., 2., 3., f64::NAN, 5., 6., 7., 8.]);
    let e = tunnels(&f, Construction::Vertices, Filtration::Sublevel, &Control::default()).unwrap_err();
    assert!(e.to_string().contains("1 NaN samples"), "{e}");
}
