//! Inter-pixel filtering: the separable, steered Gaussian bank against the same bank sampled
//! directly and applied tap by tap in f64, and the properties the issue names (step edges,
//! quarter turns, linearity, channels).

use proptest::prelude::*;
use topoview_core::control::Control;
use topoview_core::topo::cracks::{Bank, CrackError, CrackOptions, Family, Image, cracks, responses};

fn noise(w: usize, h: usize, seed: u64) -> Vec<f32> {
    let mut next = topoview_core::synthetic::noise(seed);
    (0..w * h).map(|_| (next() % 1000) as f32 / 10.0).collect()
}

/// The image turned a quarter turn: `out(x', y') = in(y', H - 1 - x')`, `H` x `W`.
fn rotate(img: &[f32], w: usize, h: usize) -> Vec<f32> {
    let (w2, h2) = (h, w);
    (0..w2 * h2).map(|i| (i % w2, i / w2)).map(|(x2, y2)| img[(h - 1 - x2) * w + y2]).collect()
}

fn close(a: &[f32], b: &[f32], tol: f32) -> Result<(), String> {
    let scale = a.iter().chain(b).fold(0f32, |m, v| m.max(v.abs())).max(1e-6);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if (x - y).abs() > tol * scale {
            return Err(format!("at {i}: {x} vs {y} (scale {scale})"));
        }
    }
    if a.len() != b.len() {
        return Err(format!("lengths {} and {}", a.len(), b.len()));
    }
    Ok(())
}

#[test]
fn a_vertical_step_is_strongest_on_the_cracks_along_it() {
    // Left half 0, right half 10: the step lies on the v cracks between columns 11 and 12.
    let (w, h) = (24, 16);
    let v: Vec<f32> = (0..w * h).map(|i| if i % w >= 12 { 10.0 } else { 0.0 }).collect();
    let m = cracks(&Image::grey(w, h, v), &CrackOptions::default(), &Control::default()).unwrap();
    let (vs, hs) = (&m.strength[Family::V as usize], &m.strength[Family::H as usize]);
    for y in 0..h {
        let row = &vs[y * (w - 1)..(y + 1) * (w - 1)];
        let best = row.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
        assert_eq!(best, 11, "row {y}: {row:?}");
        // Normal along +x (angle 0), at the finest scale.
        assert_eq!(m.angle[Family::V as usize][y * (w - 1) + 11], 0.0);
        assert_eq!(m.scale[Family::V as usize][y * (w - 1) + 11], 1.0);
    }
    // Across the step the h cracks see no change at all (clamped edges, a constant column).
    assert!(hs.iter().all(|&s| s < 1e-4), "{:?}", hs.iter().fold(0f32, |a, &b| a.max(b)));
    // The strength is the derivative: 10 over a step, seen at scale 1 through the Gaussian.
    let s = vs[11];
    assert!(s > 3.0 && s < 4.5, "{s}");
}

#[test]
fn the_readmes_worked_example_holds() {
    // A step from 0 to 10 between rows 7 and 8, scale 1 (radius 3): the README's 4.1402.
    let (w, h) = (24, 16);
    let v: Vec<f32> = (0..w * h).map(|i| if i / w >= 8 { 10.0 } else { 0.0 }).collect();
    let opts = CrackOptions { scales: vec![1.0], orientations: 8, truncate: 3.0 };
    let m = cracks(&Image::grey(w, h, v), &opts, &Control::default()).unwrap();
    let g = |t: f64| (-t * t / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let want = 10.0
        * (-3..=3).map(|a| g(a as f64)).sum::<f64>()
        * (1..=3).map(|b| (b as f64 - 0.5) * g(b as f64 - 0.5)).sum::<f64>();
    assert!((want - 4.1402).abs() < 1e-4, "{want}");
    for x in 0..w {
        let s = m.strength[Family::H as usize][7 * w + x];
        assert!((s as f64 - want).abs() < 1e-5, "h({x}, 7): {s} vs {want}");
        assert_eq!(m.angle[Family::H as usize][7 * w + x], std::f32::consts::FRAC_PI_2);
    }
    assert!(m.strength[Family::V as usize].iter().all(|&s| s == 0.0));
}

#[test]
fn a_constant_image_has_no_edges_even_at_its_border() {
    let m = cracks(&Image::grey(9, 7, vec![3.5; 63]), &CrackOptions::default(), &Control::default()).unwrap();
    assert_eq!(m.max_strength(), 0.0);
}

#[test]
fn a_quarter_turn_swaps_and_turns_the_families_exactly() {
    let (w, h) = (37, 23);
    let v = noise(w, h, 7);
    let opts = CrackOptions { scales: vec![1.0, 1.5, 3.0], orientations: 8, truncate: 3.0 };
    let a = cracks(&Image::grey(w, h, v.clone()), &opts, &Control::default()).unwrap();
    let b = cracks(&Image::grey(h, w, rotate(&v, w, h)), &opts, &Control::default()).unwrap();
    // h(x, y) of the original is v'(H - 2 - y, x) of the turned image (W' - 1 = H - 1 wide).
    let (ah, bv) = (&a.strength[Family::H as usize], &b.strength[Family::V as usize]);
    let (av, bh) = (&a.strength[Family::V as usize], &b.strength[Family::H as usize]);
    for y in 0..h - 1 {
        for x in 0..w {
            assert_eq!(ah[y * w + x].to_bits(), bv[x * (h - 1) + (h - 2 - y)].to_bits(), "h({x}, {y})");
            let same = a.scale[0][y * w + x] == b.scale[1][x * (h - 1) + (h - 2 - y)];
            assert!(same, "scale of h({x}, {y})");
        }
    }
    // v(x, y) between (x, y) and (x + 1, y) becomes h'(H - 1 - y, x) between rows x and x + 1.
    for y in 0..h {
        for x in 0..w - 1 {
            assert_eq!(av[y * (w - 1) + x].to_bits(), bh[x * h + (h - 1 - y)].to_bits(), "v({x}, {y})");
        }
    }
}

#[test]
fn responses_are_linear_in_the_image() {
    let (w, h) = (20, 18);
    let (p, q) = (noise(w, h, 1), noise(w, h, 2));
    let mix: Vec<f32> = p.iter().zip(&q).map(|(a, b)| 2.0 * a - 0.5 * b).collect();
    let opts = CrackOptions { scales: vec![1.0, 2.0], orientations: 4, truncate: 3.0 };
    let ctl = Control::default();
    for f in Family::BOTH {
        let rp = responses(&Image::grey(w, h, p.clone()), &opts, f, &ctl).unwrap();
        let rq = responses(&Image::grey(w, h, q.clone()), &opts, f, &ctl).unwrap();
        let rm = responses(&Image::grey(w, h, mix.clone()), &opts, f, &ctl).unwrap();
        assert_eq!(rm[0].len(), 2 * 2 * 4, "kernels: scales x (D1, D2) x orientations");
        for k in 0..rm[0].len() {
            let want: Vec<f32> = rp[0][k].iter().zip(&rq[0][k]).map(|(a, b)| 2.0 * a - 0.5 * b).collect();
            close(&rm[0][k], &want, 1e-5).unwrap();
        }
    }
}

#[test]
fn steered_responses_equal_the_oriented_kernels_applied_directly() {
    let (w, h) = (31, 26);
    let v = noise(w, h, 3);
    let opts = CrackOptions { scales: vec![0.8, 1.7, 3.0], orientations: 6, truncate: 3.0 };
    let bank = Bank::gaussian(&opts).unwrap();
    let img = Image::grey(w, h, v.clone());
    for f in Family::BOTH {
        let steered = responses(&img, &opts, f, &Control::default()).unwrap();
        assert_eq!(steered[0].len(), bank.kernels.len());
        for (k, r) in steered[0].iter().enumerate() {
            let direct = bank.apply(k, &v, w, h, f);
            close(r, &direct, 2e-5).map_err(|e| format!("{} ({f:?}): {e}", bank.kernels[k].name)).unwrap();
        }
    }
    // The strengths from the bank as data (the edge kernels, tap by tap) equal the fast path's.
    let fast = cracks(&img, &opts, &Control::default()).unwrap();
    let slow = bank.cracks(&img, &Control::default()).unwrap();
    for f in 0..2 {
        close(&fast.strength[f], &slow.strength[f], 2e-5).unwrap();
    }
    // And a bank written out and read back is the same bank.
    assert_eq!(Bank::from_json(&bank.to_json()).unwrap(), bank);
}

#[test]
fn channels_add_their_energies() {
    let (w, h) = (16, 12);
    let v = noise(w, h, 4);
    let opts = CrackOptions::default();
    let ctl = Control::default();
    let one = cracks(&Image::grey(w, h, v.clone()), &opts, &ctl).unwrap();
    let two = Image { width: w, height: h, channels: vec![v.clone(), v.clone()] };
    let two = cracks(&two, &opts, &ctl).unwrap();
    let with_zero = Image { width: w, height: h, channels: vec![vec![0.0; w * h], v.clone()] };
    let with_zero = cracks(&with_zero, &opts, &ctl).unwrap();
    for f in 0..2 {
        let scaled: Vec<f32> = one.strength[f].iter().map(|s| s * 2f32.sqrt()).collect();
        close(&two.strength[f], &scaled, 1e-6).unwrap();
        assert_eq!(with_zero.strength[f], one.strength[f]);
    }
}

#[test]
fn bad_images_options_and_banks_are_refused_with_the_reason() {
    let ctl = Control::default();
    let opts = CrackOptions::default();
    assert_eq!(cracks(&Image::grey(1, 5, vec![0.0; 5]), &opts, &ctl), Err(CrackError::TooSmall(1, 5)));
    let mut v = vec![0.0; 16];
    v[3] = f32::NAN;
    v[5] = f32::INFINITY;
    assert_eq!(cracks(&Image::grey(4, 4, v), &opts, &ctl), Err(CrackError::NonFinite(2)));
    let odd = CrackOptions { orientations: 5, ..CrackOptions::default() };
    assert!(cracks(&Image::grey(4, 4, vec![0.0; 16]), &odd, &ctl).unwrap_err().to_string().contains("even"));
    let neg = CrackOptions { scales: vec![1.0, -2.0], ..CrackOptions::default() };
    assert!(matches!(cracks(&Image::grey(4, 4, vec![0.0; 16]), &neg, &ctl), Err(CrackError::Options(_))));
    for (text, says) in [
        ("{", "not a crack bank"),
        (r#"{"format": "other", "kernels": []}"#, "format"),
        (r#"{"format": "topoview crack bank 1", "kernels": []}"#, "no kernels"),
        (
            r#"{"format": "topoview crack bank 1", "kernels": [{"name": "a", "h": [[0,0,1]], "v": []}]}"#,
            "no taps",
        ),
        (
            r#"{"format": "topoview crack bank 1", "kernels": [{"name": "a", "h": [[0,0,1]], "v": [[0,0,1]]}]}"#,
            "edge",
        ),
    ] {
        let e = Bank::from_json(text).unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Small random images and banks: the fast path equals the direct one.
    #[test]
    fn the_separable_path_equals_the_direct_one(
        w in 2usize..12, h in 2usize..12, seed in 0u64..1000,
        scale in 0.5f64..3.0, half_orientations in 1usize..5,
    ) {
        let v = noise(w, h, seed);
        let opts = CrackOptions { scales: vec![scale], orientations: 2 * half_orientations, truncate: 2.5 };
        let img = Image::grey(w, h, v);
        let fast = cracks(&img, &opts, &Control::default()).unwrap();
        let slow = Bank::gaussian(&opts).unwrap().cracks(&img, &Control::default()).unwrap();
        for f in 0..2 {
            prop_assert!(close(&fast.strength[f], &slow.strength[f], 2e-5).is_ok(),
                "{:?}", close(&fast.strength[f], &slow.strength[f], 2e-5));
        }
    }
}
