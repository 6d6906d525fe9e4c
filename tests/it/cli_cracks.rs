//! `topoview cracks` as a user runs it: the TIFFs it writes read back (with this crate's TIFF
//! reader) equal to the library's strengths, volumes page by page, colour images by channel,
//! banks written and loaded, and bad input refused with nothing written.

use std::path::Path;
use topoview_core::control::Control;
use topoview_core::topo::cracks::{CrackOptions, Family, Image, boundaries, cracks};

use crate::common::topoview;

fn read_f32(p: &Path) -> (Vec<usize>, Vec<f32>) {
    let f = topoview_core::io::open(p, &Default::default()).unwrap();
    let v = (0..f.len()).map(|i| f.samples().get_f64(i) as f32).collect();
    (f.shape().to_vec(), v)
}

fn grey(p: &Path) -> Image {
    let f = topoview_core::io::open(p, &Default::default()).unwrap();
    let [w, h, _] = f.dims();
    Image::grey(w, h, (0..f.len()).map(|i| f.samples().get_f64(i) as f32).collect())
}

#[test]
fn the_tiffs_hold_the_strengths_of_both_families_and_the_complex() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("cam");
    let input = crate::common::data("camera.png");
    let (ok, out, err) = topoview(&[
        "cracks",
        input.to_str().unwrap(),
        "--scales",
        "1,2",
        "--orientations",
        "6",
        "--out",
        prefix.to_str().unwrap(),
        "--complex",
        "--backend",
        "cpu",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("strongest crack"), "{out}");
    let img = grey(&input);
    let (w, h) = (img.width, img.height);
    let opts = CrackOptions { scales: vec![1.0, 2.0], orientations: 6, truncate: 3.0 };
    let m = cracks(&img, &opts, &Control::default()).unwrap();
    let file = |s: &str| tmp.path().join(format!("cam{s}"));
    // (H-1) x W for horizontal cracks, H x (W-1) for vertical ones.
    assert_eq!(read_f32(&file(".h.tif")), (vec![w, h - 1], m.strength[Family::H as usize].clone()));
    assert_eq!(read_f32(&file(".v.tif")), (vec![w - 1, h], m.strength[Family::V as usize].clone()));
    assert_eq!(read_f32(&file(".h.angle.tif")).1, m.angle[0]);
    assert_eq!(read_f32(&file(".v.scale.tif")).1, m.scale[1]);
    let (cw, ch, complex) = boundaries::complex_image(&m);
    assert_eq!(read_f32(&file(".complex.tif")), (vec![cw, ch], complex));
}

#[test]
fn volumes_are_filtered_slice_by_slice_and_colour_by_channel() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("vol");
    let input = crate::common::data("nibabel_standard_4x5x7.nii.gz");
    let (ok, out, err) = topoview(&["cracks", input.to_str().unwrap(), "--out", prefix.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("4 x 5 x 7 (per axial slice)"), "{out}");
    let f = topoview_core::io::open(&input, &Default::default()).unwrap();
    let (shape, pages) = read_f32(&tmp.path().join("vol.h.tif"));
    assert_eq!(shape, vec![4, 4, 7]);
    for z in 0..7 {
        let v = (0..20).map(|i| f.samples().get_f64(z * 20 + i) as f32).collect();
        let m = cracks(&Image::grey(4, 5, v), &CrackOptions::default(), &Control::default()).unwrap();
        assert_eq!(&pages[z * 16..(z + 1) * 16], &m.strength[0][..], "slice {z}");
    }
    // A colour PNG is filtered by channel (energies added) unless --luminance.
    let horse = crate::common::data("horse_rgba.png");
    let (ok, out, err) = topoview(&["cracks", horse.to_str().unwrap()]);
    assert!(ok && out.contains("3 channels"), "{out}{err}");
    let (ok, out, _) = topoview(&["cracks", horse.to_str().unwrap(), "--luminance"]);
    assert!(ok && out.contains("1 channel;"), "{out}");
}

#[test]
fn a_saved_bank_loads_back_and_gives_the_same_strengths() {
    let tmp = tempfile::tempdir().unwrap();
    let bank = tmp.path().join("bank.json");
    let input = crate::common::data("coins.png");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (ok, _, err) = topoview(&[
        "cracks",
        &s(&input),
        "--scales",
        "1.5",
        "--orientations",
        "4",
        "--save-bank",
        &s(&bank),
        "--out",
        &s(&tmp.path().join("a")),
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = topoview(&[
        "cracks",
        &s(&input),
        "--bank",
        &s(&bank),
        "--out",
        &s(&tmp.path().join("b")),
        "--responses",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("bank of 8 kernels (4 edge)"), "{out}");
    let (a, b) = (read_f32(&tmp.path().join("a.h.tif")).1, read_f32(&tmp.path().join("b.h.tif")).1);
    let top = a.iter().fold(0f32, |m, &x| m.max(x));
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 2e-5 * top));
    // One response page per kernel.
    let (shape, _) = read_f32(&tmp.path().join("b.v.responses.tif"));
    assert_eq!(shape[2], 8);
}

#[test]
fn bad_input_is_refused_with_the_reason_and_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("x");
    let input = crate::common::data("coins.png");
    let (ok, _, err) = topoview(&[
        "cracks",
        input.to_str().unwrap(),
        "--orientations",
        "5",
        "--out",
        prefix.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("orientations must be even"), "{err}");
    let (ok, _, err) = topoview(&["cracks", input.to_str().unwrap(), "--scales", "1,-2"]);
    assert!(!ok && err.contains("scales must be finite and positive"), "{err}");
    let junk = tmp.path().join("junk.json");
    std::fs::write(&junk, "{\"format\": \"topoview crack bank 1\", \"kernels\": []}").unwrap();
    let (ok, _, err) = topoview(&["cracks", input.to_str().unwrap(), "--bank", junk.to_str().unwrap()]);
    assert!(!ok && err.contains("junk.json") && err.contains("no kernels"), "{err}");
    // A 1-pixel-wide image has no vertical cracks.
    let thin = tmp.path().join("thin.raw");
    std::fs::write(&thin, [1u8, 2, 3, 4]).unwrap();
    let (ok, _, err) = topoview(&[
        "cracks",
        thin.to_str().unwrap(),
        "--dims",
        "1x4",
        "--dtype",
        "u8",
        "--out",
        prefix.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("2 x 2 at least"), "{err}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2, "only the inputs are left");
}

#[test]
fn a_bank_is_an_input_and_sizes_are_judged_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let input = crate::common::data("coins.png");
    // Named as `--out x --responses` would name its copy of the bank.
    let bank = tmp.path().join("x.bank.json");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (ok, _, err) = topoview(&["cracks", &s(&input), "--save-bank", &s(&bank)]);
    assert!(ok, "{err}");
    let before = std::fs::read(&bank).unwrap();
    // --save-bank cannot overwrite the bank being loaded, nor can an output.
    let (ok, _, err) = topoview(&["cracks", &s(&input), "--bank", &s(&bank), "--save-bank", &s(&bank)]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    let prefix = tmp.path().join("x");
    let (ok, _, err) =
        topoview(&["cracks", &s(&input), "--bank", &s(&bank), "--out", &s(&prefix), "--responses"]);
    assert!(!ok && err.contains("x.bank.json"), "{err}");
    assert_eq!(std::fs::read(&bank).unwrap(), before, "the bank is untouched");
    // Scales too small, too many, or too wide for a bank of taps are refused up front.
    let (ok, _, err) = topoview(&["cracks", &s(&input), "--scales", "0.01"]);
    assert!(!ok && err.contains("at least 0.1"), "{err}");
    let (ok, _, err) =
        topoview(&["cracks", &s(&input), "--scales", "600", "--save-bank", &s(&tmp.path().join("w.json"))]);
    assert!(!ok && err.contains("taps"), "{err}");
    // A bank with angles but none across the vertical cracks says so.
    let tilted = tmp.path().join("t.json");
    std::fs::write(
        &tilted,
        r#"{"format": "topoview crack bank 1", "kernels": [{"name": "d", "edge": true, "angle": 1.5707963267948966,
            "h": [[0,0,-1],[0,1,1]], "v": [[0,0,-1],[1,0,1]]}]}"#,
    )
    .unwrap();
    let (ok, _, err) = topoview(&["cracks", &s(&input), "--bank", &s(&tilted)]);
    assert!(!ok && err.contains("normal of the v cracks"), "{err}");
}
