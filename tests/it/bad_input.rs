//! Every file of the bad-input corpus makes `topoview ecc` exit non-zero with one line that
//! names the file and the problem, and never panic.

use std::path::Path;
use std::process::Command;

fn run_ecc(path: &Path, extra: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_topoview"))
        .arg("ecc")
        .arg(path)
        .args(extra)
        .output()
        .expect("the binary runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_one_clear_line(path: &Path, expect: &str) {
    let (ok, err) = run_ecc(path, &[]);
    assert!(!ok, "{} was accepted", path.display());
    assert!(!err.contains("panicked"), "{}: {err}", path.display());
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{}: expected one line, got {err}", path.display());
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(lines[0].contains(name.as_ref()), "{}: the error does not name the file: {err}", path.display());
    assert!(lines[0].contains(expect), "{}: expected '{expect}' in: {err}", path.display());
}

#[test]
fn corpus_gives_clear_errors() {
    let cases = [
        ("truncated.nii.gz", "deflate"),
        ("lying_dims.nii", "truncated: expected 1000000 bytes"),
        ("zero_axis.nii", "size 0"),
        ("five_d.nii", "5D NIfTI"),
        ("bad_datatype.nii", "datatype code 999"),
        ("complex.nii", "complex"),
        ("nan.nii", "1 NaN"),
        ("inside_header_offset.nii", "vox_offset"),
        ("empty.nii", "empty file"),
        ("size_mismatch_8x8x8_uint16.raw", "raw size mismatch"),
        ("overflow_dims.nrrd", "overflow"),
        ("inf.nrrd", "1 infinite"),
        ("bad_gzip.nrrd", "gzip"),
        ("no_dims.mha", "DimSize"),
        ("not_an_image.png", "cannot decode image"),
        ("unknown.xyz", "unrecognised format"),
    ];
    let dir = crate::common::data("bad");
    let listed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "make.py")
        .collect();
    assert_eq!(listed.len(), cases.len(), "every corpus file has a case: {listed:?}");
    for (name, expect) in cases {
        assert_one_clear_line(&dir.join(name), expect);
    }
}

#[test]
fn missing_file_and_directory() {
    assert_one_clear_line(&crate::common::data("bad/does_not_exist.nii"), "no such file");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("a_folder.nii");
    std::fs::create_dir(&d).unwrap();
    assert_one_clear_line(&d, "is a directory");
}

#[test]
fn nan_is_counted_before_smoothing_spreads_it() {
    let (ok, err) = run_ecc(&crate::common::data("bad/nan.nii"), &["--smooth", "1"]);
    assert!(!ok);
    assert!(err.contains("1 NaN and 0 infinite"), "{err}");
}

#[test]
fn nan_can_be_treated_as_absent() {
    let (ok, err) = run_ecc(&crate::common::data("bad/nan.nii"), &["--nan", "absent"]);
    assert!(ok, "{err}");
}

#[test]
fn batch_goes_on_after_a_bad_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_topoview"))
        .args(["ecc", "--csv"])
        .arg(tmp.path())
        .arg(crate::common::data("bad/empty.nii"))
        .arg(crate::common::data("coins.png"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(tmp.path().join("coins.ecc.csv").is_file(), "the good file was still exported");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("empty.nii") && err.contains("1 of 2 files failed"), "{err}");
}

/// `bench --msc --file F` on a field the Morse-Smale complex refuses ends with that error,
/// naming the file, before any benchmark row (it used to panic after minutes of rows).
#[test]
fn msc_bench_refuses_a_field_msc_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "line.nrrd",
            "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 5\nencoding: ascii\n\n1 2 3 4 5\n",
            "2D or 3D",
        ),
        (
            "flat.nrrd",
            "NRRD0004\ntype: uchar\ndimension: 2\nsizes: 4 1\nencoding: ascii\n\n1 2 3 4\n",
            "single voxel",
        ),
        (
            "nan.nrrd",
            "NRRD0004\ntype: float\ndimension: 2\nsizes: 2 2\nencoding: ascii\n\n1 nan 3 4\n",
            "NaN",
        ),
    ];
    for (name, text, expect) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_topoview"))
            .args(["bench", "--msc", "--file"])
            .arg(&p)
            .output()
            .expect("the binary runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(name) && err.contains(expect), "{name}: {err}");
        assert!(
            String::from_utf8_lossy(&out.stdout).lines().count() <= 1,
            "{name}: rows ran before the error"
        );
    }
}
