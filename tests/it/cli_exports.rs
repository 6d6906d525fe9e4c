//! The command line's exports, as a user would read them.

use crate::common::topoview;

#[test]
fn csv_and_json_record_their_provenance() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("c.csv");
    let json = tmp.path().join("c.json");
    let input = crate::common::data("pydicom_emri_small.nii.gz");
    let (ok, out, err) = topoview(&[
        "ecc",
        input.to_str().unwrap(),
        "--construction",
        "vertices",
        "--smooth",
        "1.5",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("vertices sublevel ECC"), "{out}");
    assert!(out.contains("smoothed with σ = 1.5 voxels"), "the summary names σ: {out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains("# construction: vertices"));
    assert!(text.contains("# smoothing: gaussian sigma=1.5"));
    assert!(text.contains("# file: "));
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows[0], "threshold,chi");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["construction"], "vertices");
    assert_eq!(v["dims"], serde_json::json!([64, 64, 10]));
    assert_eq!(v["smoothing"]["truncate"], 3.0);
    let chi = v["chi"].as_array().unwrap();
    assert_eq!(chi.len(), rows.len() - 1);
    assert_eq!(chi.len(), v["distinct_values"].as_u64().unwrap() as usize);
    // The CSV and the JSON hold the same curve.
    for (row, (t, c)) in rows[1..].iter().zip(v["threshold"].as_array().unwrap().iter().zip(chi)) {
        let (a, b) = row.split_once(',').unwrap();
        assert_eq!(a.parse::<f64>().unwrap(), t.as_f64().unwrap());
        assert_eq!(b.parse::<i64>().unwrap(), c.as_i64().unwrap());
    }
    assert!(v["zero_crossings"].is_array());
}

#[test]
fn csv_to_stdout_and_info() {
    let input = crate::common::data("coins.png");
    let (ok, out, _) = topoview(&["ecc", input.to_str().unwrap(), "--csv", "-", "--superlevel"]);
    assert!(ok);
    assert!(out.contains("# filtration: superlevel"));
    let t: Vec<i64> = out
        .lines()
        .filter(|l| !l.starts_with('#') && *l != "threshold,chi")
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(t.len(), 250);
    assert!(t.windows(2).all(|w| w[0] > w[1]), "superlevel thresholds decrease");
    let (ok, out, _) = topoview(&["info", input.to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("384x303") && out.contains("distinct values: 250"), "{out}");
}

/// A reason to use the CPU that holds for the whole run is said once, not per file; `info`
/// prints header floats at the precision they were stored with (f32 pixdim 2.199999, not
/// 2.1999990940093994) and float ranges in the field's type.
#[test]
fn notes_once_per_run_and_stored_precision() {
    let a = crate::common::data("coins.png");
    let b = crate::common::data("camera.png");
    let (ok, out, err) = topoview(&["ecc", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note:")).collect();
    assert!(notes.len() <= 1, "{err}");
    assert!(!out.contains("no CUDA driver"), "the summaries do not repeat the note: {out}");
    let (ok, out, _) = topoview(&["info", crate::common::data("nibabel_example4d.nii.gz").to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("spacing:         2 x 2 x 2.199999 (extent 256 x 192 x 52.79998)"), "{out}");
    let (ok, out, _) = topoview(&["info", crate::common::data("nipy_some_blobs.nii").to_str().unwrap()]);
    assert!(ok);
    assert!(out.contains("range:           -5.0293913 to 7.4155498"), "{out}");
}

#[test]
fn threads_option_gives_the_same_curve() {
    let input = crate::common::data("nipy_some_blobs.nii");
    let (_, a, _) = topoview(&["ecc", input.to_str().unwrap(), "--csv", "-", "--threads", "1"]);
    let (_, b, _) = topoview(&["ecc", input.to_str().unwrap(), "--csv", "-"]);
    assert_eq!(a, b);
    assert!(a.lines().count() > 7000);
}

#[test]
fn msc_exports_agree_with_each_other() {
    use topoview_core::io::{OpenOptions, open};
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).to_string_lossy().into_owned();
    let input = crate::common::data("nipy_some_blobs.nii");
    let (ok, out, err) = topoview(&[
        "msc",
        input.to_str().unwrap(),
        "--relative",
        "0.1",
        "--json",
        &p("m.json"),
        "--vtk",
        &p("m"),
        "--labels",
        &p("l.nii.gz"),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("simplified at persistence"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p("m.json")).unwrap()).unwrap();
    let alive = v["critical_points"].as_array().unwrap().iter().filter(|c| c["alive"] == true).count();
    let counts = &v["simplification"]["counts"];
    let total: u64 =
        ["minima", "1-saddles", "2-saddles", "maxima"].iter().map(|k| counts[k].as_u64().unwrap()).sum();
    assert_eq!(alive as u64, total);
    let chi = counts["minima"].as_i64().unwrap() - counts["1-saddles"].as_i64().unwrap()
        + counts["2-saddles"].as_i64().unwrap()
        - counts["maxima"].as_i64().unwrap();
    assert_eq!(chi, 1);
    let vtp = std::fs::read_to_string(p("m_critical_points.vtp")).unwrap();
    assert!(vtp.contains(&format!("NumberOfPoints=\"{alive}\"")));
    assert!(
        std::fs::read_to_string(p("m_separatrices.vtp"))
            .unwrap()
            .contains(&format!("NumberOfLines=\"{}\"", v["arcs"].as_array().unwrap().len()))
    );
    let basins = open(std::path::Path::new(&p("l.nii.gz")), &OpenOptions::default()).unwrap();
    assert_eq!(basins.shape(), &[27, 32, 23]);
    // Every basin label is a live minimum.
    for i in 0..basins.len() {
        let id = basins.samples().get_f64(i) as usize;
        assert_eq!(v["critical_points"][id]["index"], 0);
        assert_eq!(v["critical_points"][id]["alive"], true);
    }
    let mountains = open(std::path::Path::new(&p("l_mountains.nii.gz")), &OpenOptions::default()).unwrap();
    assert_eq!(mountains.shape(), &[26, 31, 22]);
    for i in 0..mountains.len() {
        let id = mountains.samples().get_f64(i);
        if id >= 0.0 {
            assert_eq!(v["critical_points"][id as usize]["index"], 3);
            assert_eq!(v["critical_points"][id as usize]["alive"], true);
        }
    }
}

#[test]
fn msc_cells_in_2d_pair_basins_with_mountains() {
    use std::collections::HashMap;
    use topoview_core::io::{OpenOptions, open};
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c.nii.gz");
    let input = crate::common::data("coins.png");
    let (ok, _, err) =
        topoview(&["msc", input.to_str().unwrap(), "--relative", "0.1", "--labels", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    let read = |n: &str| open(&tmp.path().join(n), &OpenOptions::default()).unwrap();
    let (f, basins, mountains, cells) =
        (read_field(&input), read("c.nii.gz"), read("c_mountains.nii.gz"), read("c_cells.nii.gz"));
    assert_eq!(cells.shape(), &[383, 302]);
    // Each cell id stands for exactly one (basin of the square's lowest corner, mountain) pair.
    let mut pair_of: HashMap<i64, (i64, i64)> = HashMap::new();
    let mut id_of: HashMap<(i64, i64), i64> = HashMap::new();
    let nx = 384;
    for y in 0..302 {
        for x in 0..383 {
            let i = x + 383 * y;
            let m = mountains.samples().get_f64(i) as i64;
            let c = cells.samples().get_f64(i) as i64;
            if m < 0 {
                assert_eq!(c, -1);
                continue;
            }
            let corners = [x + nx * y, x + 1 + nx * y, x + nx * (y + 1), x + 1 + nx * (y + 1)];
            let low = *corners
                .iter()
                .min_by(|&&a, &&b| {
                    (f.samples().get_f64(a), a).partial_cmp(&(f.samples().get_f64(b), b)).unwrap()
                })
                .unwrap();
            let pair = (basins.samples().get_f64(low) as i64, m);
            assert_eq!(*pair_of.entry(c).or_insert(pair), pair);
            assert_eq!(*id_of.entry(pair).or_insert(c), c);
        }
    }
    assert!(pair_of.len() > 100);
}

fn read_field(p: &std::path::Path) -> topoview_core::field::ScalarField {
    topoview_core::io::open(p, &Default::default()).unwrap()
}

#[test]
fn msc_smooths_first_lists_its_files_and_can_leave_geometry_out() {
    use topoview_core::control::Control;
    use topoview_core::topo::smooth::{Smoothing, smooth};
    let tmp = tempfile::tempdir().unwrap();
    let input = crate::common::data("pydicom_emri_small.nii.gz");
    let json = tmp.path().join("m.json");
    let vtk = tmp.path().join("m");
    let (ok, out, err) = topoview(&[
        "msc",
        input.to_str().unwrap(),
        "--smooth",
        "1.5",
        "--json",
        json.to_str().unwrap(),
        "--no-geometry",
        "--vtk",
        vtk.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let wrote = out.lines().find(|l| l.starts_with("wrote ")).expect("a line listing the files");
    for f in ["m.json", "m_critical_points.vtp", "m_separatrices.vtp"] {
        assert!(wrote.contains(f), "{wrote}");
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let arcs = doc["arcs"].as_array().unwrap();
    assert!(!arcs.is_empty() && arcs.iter().all(|a| a.get("polyline").is_none() && a.get("upper").is_some()));
    assert_eq!(doc["smoothing"]["sigma"], 1.5);
    // The complex is that of the field smoothed as `ecc --smooth` smooths it.
    let smoothed = smooth(&read_field(&input), &Smoothing::voxels(1.5), &Control::default()).unwrap();
    let a = topoview_core::topo::msc::analyse(&smoothed, &Control::default()).unwrap();
    assert_eq!(doc["critical_points"].as_array().unwrap().len(), a.complex.critical.len());
    // --no-geometry needs --json.
    let (ok, _, _) = topoview(&["msc", input.to_str().unwrap(), "--no-geometry"]);
    assert!(!ok);
}

#[test]
fn betti_columns_in_2d_and_3d() {
    let tmp = tempfile::tempdir().unwrap();
    for (input, header) in [
        (crate::common::data("coins.png"), "threshold,chi,b0,b1"),
        (crate::common::data("nibabel_standard_4x5x7.nii.gz"), "threshold,chi,b0,b1,b2"),
    ] {
        let csv = tmp.path().join("b.csv");
        let json = tmp.path().join("b.json");
        let (ok, out, err) = topoview(&[
            "ecc",
            input.to_str().unwrap(),
            "--betti",
            "--csv",
            csv.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(ok, "{err}");
        assert!(out.contains("max b0 "), "{out}");
        let text = std::fs::read_to_string(&csv).unwrap();
        let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(rows[0], header);
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let col =
            |k: &str| -> Vec<i64> { v[k].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect() };
        let (chi, b0, b1, b2) = (col("chi"), col("b0"), col("b1"), col("b2"));
        assert_eq!(b0.len(), rows.len() - 1);
        for (i, row) in rows[1..].iter().enumerate() {
            // Columns and arrays agree, and chi = b0 - b1 + b2 on every row.
            let cells: Vec<i64> = row.split(',').skip(1).map(|c| c.parse().unwrap()).collect();
            let want = [chi[i], b0[i], b1[i], b2[i]];
            assert_eq!(cells, want[..cells.len()], "row {row}");
            assert_eq!(chi[i], b0[i] - b1[i] + b2[i]);
        }
        // The whole image or box at the top threshold: one component, no hole.
        assert_eq!((b0[b0.len() - 1], b1[b1.len() - 1], b2[b2.len() - 1]), (1, 0, 0));
    }
}

#[test]
fn scale_space_rows_are_chi_of_each_smoothed_field() {
    use topoview_compute::curve::chi_at;
    use topoview_core::control::Control;
    use topoview_core::topo::ecc::{EccOptions, ecc};
    use topoview_core::topo::smooth::{Smoothing, smooth};
    let input = crate::common::data("coins.png");
    let (ok, out, err) = topoview(&[
        "ecc",
        input.to_str().unwrap(),
        "--scale-space",
        "2:0.5",
        "--scale-space-thresholds",
        "9",
        "--csv",
        "-",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("5 scales (sigma 0 to 2 voxels) x 9 thresholds"), "{err}");
    let rows: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows[0], "sigma,threshold,chi");
    assert_eq!(rows.len(), 1 + 5 * 9);
    let f = topoview_core::io::open(&input, &Default::default()).unwrap();
    for row in &rows[1..] {
        let v: Vec<f64> = row.split(',').map(|x| x.parse().unwrap()).collect();
        let (sigma, t, chi) = (v[0], v[1], v[2] as i64);
        let g = if sigma == 0.0 {
            f.clone()
        } else {
            smooth(&f, &Smoothing::voxels(sigma), &Control::default()).unwrap()
        };
        let e = ecc(&g, &EccOptions::default(), &Control::default()).unwrap();
        assert_eq!(chi, chi_at(&e, t), "sigma {sigma} threshold {t}");
    }
    let (ok, _, err) = topoview(&["ecc", input.to_str().unwrap(), "--scale-space", "2:0"]);
    assert!(!ok && err.contains("must be positive"), "{err}");
}
