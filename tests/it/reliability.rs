//! What a file or a user cannot make topoview do (issue "nothing a file or a user can do makes
//! topoview hang, abort, eat the machine's memory or destroy data"), driven through the command
//! line where the user meets it. The inputs are made here, at test time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs topoview with `args`, killing it (and failing) if it runs past `limit`.
fn run(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_topoview"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("topoview {args:?} still running after {limit:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A 2D ASCII NRRD of `kind` ("double", "uchar", ...) with `rows` of text.
fn nrrd(dir: &Path, name: &str, kind: &str, w: usize, h: usize, values: &str) -> PathBuf {
    let p = dir.join(name);
    let text = format!("NRRD0004\ntype: {kind}\ndimension: 2\nsizes: {w} {h}\nencoding: ascii\n\n{values}\n");
    std::fs::write(&p, text).unwrap();
    p
}

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn morse_smale_of_a_field_with_infinities_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let p = nrrd(dir.path(), "inf.nrrd", "double", 3, 3, "inf 0 1 2 inf 3 4 5 6");
    let p = p.to_str().unwrap();
    let o = run(&["msc", p], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["msc", p, "--persistence", "0.5"], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    let neg = nrrd(dir.path(), "neg.nrrd", "double", 3, 3, "-inf 0 1 2 -inf 3 4 5 -inf");
    let o = run(&["msc", neg.to_str().unwrap(), "--persistence", "10"], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    // --relative needs a finite range: refused with a reason, not a NaN level.
    let o = run(&["msc", p, "--relative", "0.5"], MINUTE);
    assert!(!o.status.success() && stderr(&o).contains("finite value range"), "{}", stderr(&o));
}

#[test]
fn bad_simplification_options_are_refused_before_the_analysis() {
    // A field whose analysis takes a while: the refusal must come first, at once.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("grf_160x160x160_uint8.raw");
    let v: Vec<u8> = (0..160 * 160 * 160u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    std::fs::write(&p, v).unwrap();
    for (opt, value) in [("--relative", "2"), ("--persistence", "NaN"), ("--persistence", "-1")] {
        let start = Instant::now();
        let o = run(&["msc", p.to_str().unwrap(), opt, value], MINUTE);
        assert!(!o.status.success(), "{opt} {value} accepted");
        assert!(stderr(&o).contains(opt), "{}", stderr(&o));
        assert!(start.elapsed() < Duration::from_secs(5), "{opt} {value} judged after the analysis");
    }
}

#[test]
fn no_output_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = nrrd(dir.path(), "a.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let before = std::fs::read(&a).unwrap();
    let s = a.to_str().unwrap();
    let other = dir.path().join(".").join("a.nrrd");
    for args in [
        vec!["ecc", s, "--csv", s],
        vec!["ecc", s, "--json", s],
        vec!["ecc", s, "--json", other.to_str().unwrap()],
        vec!["msc", s, "--json", s],
        vec!["msc", s, "--labels", s],
    ] {
        let o = run(&args, MINUTE);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains("is also an input"), "{args:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(&a).unwrap(), before, "{args:?} changed the input");
    }
    // A .hdr/.img pair: the .img is an input too.
    let nii = topoview_core::io::nifti::nifti1_bytes(
        &topoview_core::field::ScalarField::new(
            &[3, 3],
            topoview_core::field::Samples::U8(vec![0, 2, 0, 2, 1, 2, 0, 2, 0]),
        )
        .unwrap(),
        false,
    )
    .unwrap();
    let mut hdr = nii[..348].to_vec();
    hdr[344..348].copy_from_slice(b"ni1\0");
    hdr[108..112].copy_from_slice(&0f32.to_le_bytes());
    std::fs::write(dir.path().join("p.hdr"), &hdr).unwrap();
    std::fs::write(dir.path().join("p.img"), &nii[352..]).unwrap();
    let h = dir.path().join("p.hdr");
    let img = dir.path().join("p.img");
    let o = run(&["msc", h.to_str().unwrap(), "--labels", img.to_str().unwrap()], MINUTE);
    assert!(stderr(&o).contains("is also an input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&img).unwrap(), &nii[352..]);
}

#[test]
fn one_output_path_named_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = nrrd(dir.path(), "a.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let o_txt = dir.path().join("o.txt");
    let o = run(
        &["ecc", a.to_str().unwrap(), "--csv", o_txt.to_str().unwrap(), "--json", o_txt.to_str().unwrap()],
        MINUTE,
    );
    assert!(!o.status.success() && stderr(&o).contains("named as two outputs"), "{}", stderr(&o));
    assert!(!o_txt.exists());
}

#[cfg(unix)]
#[test]
fn a_refused_batch_creates_no_folder() {
    let dir = tempfile::tempdir().unwrap();
    let a = nrrd(dir.path(), "a.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let b = nrrd(dir.path(), "b.nrrd", "uchar", 3, 3, "1 2 0 2 1 2 0 2 1");
    let (csv, json) = (dir.path().join("new/csv"), dir.path().join("json"));
    std::fs::create_dir(&json).unwrap();
    std::os::unix::fs::symlink(&a, json.join("b.ecc.json")).unwrap();
    let args = |json: &Path| {
        let mut v = vec!["ecc".to_string(), a.display().to_string(), b.display().to_string()];
        v.extend(["--csv".into(), csv.display().to_string(), "--json".into(), json.display().to_string()]);
        v
    };
    let refused = args(&json);
    let o = run(&refused.iter().map(String::as_str).collect::<Vec<_>>(), MINUTE);
    assert!(!o.status.success() && stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert!(!dir.path().join("new").exists(), "a folder made for a refused batch");
    // Accepted, the folders are made and filled.
    let fine = args(&dir.path().join("json2"));
    let o = run(&fine.iter().map(String::as_str).collect::<Vec<_>>(), MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(csv.join("a.ecc.csv").is_file() && dir.path().join("json2/b.ecc.json").is_file());
    // A folder no file can be made in (as a user's read-only folder; /proc/sys refuses root
    // too): refused before any folder is made (access(2) says so), or, where it cannot tell,
    // every file fails and the folder made for the other outputs is removed again.
    let fresh = dir.path().join("fresh/csv");
    let v = [
        "ecc",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--csv",
        fresh.to_str().unwrap(),
        "--json",
        "/proc/sys",
    ];
    let o = run(&v, MINUTE);
    let e = stderr(&o);
    assert!(
        !o.status.success() && (e.contains("/proc/sys is not writable") || e.contains("2 of 2 files failed")),
        "{e}"
    );
    assert!(!dir.path().join("fresh").exists(), "an empty folder left by a failed batch");
}

#[test]
fn outputs_are_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = nrrd(dir.path(), "a.nrrd", "uchar", 4, 4, "0 2 0 1 2 1 2 3 0 2 0 1 5 4 3 2");
    let json = dir.path().join("m.json");
    let vtk = dir.path().join("m");
    // msc with all three outputs, the labels going to `labels`.
    let msc_to = |labels: &Path| {
        let args = [
            "--json",
            json.to_str().unwrap(),
            "--vtk",
            vtk.to_str().unwrap(),
            "--labels",
            labels.to_str().unwrap(),
        ];
        run(&[&["msc", a.to_str().unwrap()][..], &args].concat(), MINUTE)
    };
    let o = msc_to(&dir.path().join("no_such_folder").join("l.nii.gz"));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("a.nrrd")], "outputs or temporaries left behind");
    // All of them when all can be written.
    let o = msc_to(&dir.path().join("l.nii.gz"));
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "m.json",
        "m_critical_points.vtp",
        "m_separatrices.vtp",
        "l.nii.gz",
        "l_mountains.nii.gz",
        "l_cells.nii.gz",
    ] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
}

#[test]
fn json_dash_is_standard_output_and_names_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = nrrd(dir.path(), "we\nird.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let o = run(&["ecc", a.to_str().unwrap(), "--json", "-"], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["chi"].as_array().map(|c| c.len()), Some(3), "{v}");
    // (topoview runs in this test's working directory: a file named "-" would appear here.)
    assert!(!Path::new("-").exists());
    let o = run(&["msc", a.to_str().unwrap(), "--json", "-"], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(serde_json::from_slice::<serde_json::Value>(&o.stdout).is_ok());
    // A newline in the file's name stays inside its header line.
    let o = run(&["ecc", a.to_str().unwrap(), "--csv", "-"], MINUTE);
    let csv = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(csv.lines().all(|l| l.starts_with('#') || l == "threshold,chi" || l.contains(',')), "{csv}");
    assert!(csv.contains("we\\nird.nrrd"), "{csv}");
}

#[test]
fn tiff_pages_sharing_one_strip_are_refused_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    // 64 pages of 4096^2 (1 GiB decoded) from a file of about 25 KB.
    let p = dir.path().join("shared.tif");
    crate::common::shared_strip_tiff(&p, 64, 4096, 4096);
    let len = std::fs::metadata(&p).unwrap().len();
    assert!(len < 64 << 10, "{len}");
    let o = run(&["ecc", p.to_str().unwrap()], MINUTE);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("shared.tif") && e.contains("pages claim"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    // A few such pages are a fine (if odd) stack.
    let ok = dir.path().join("few.tif");
    crate::common::shared_strip_tiff(&ok, 3, 64, 32);
    let o = run(&["ecc", ok.to_str().unwrap()], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("64x32x3 u8"));
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly_and_a_full_disk_is_an_error() {
    use std::io::BufRead;
    let data = |n: &str| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(n);
    let files: Vec<PathBuf> =
        ["coins.png", "camera.png", "pydicom_emri_small.nii.gz"].iter().map(|n| data(n)).collect();
    // `topoview info a b c | head -1`
    let mut child = Command::new(env!("CARGO_BIN_EXE_topoview"))
        .arg("info")
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.starts_with("file:"), "{first}");
    // The reader is gone: the rest of the output meets a closed pipe.
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert!(!e.contains("panicked") && !e.contains("Broken pipe"), "{e}");
    assert_ne!(o.status.code(), Some(101), "a panic's exit status");
    // `topoview info a > /dev/full`, and the same for ecc.
    let bench = ["bench", "--size", "4", "--repeat", "1", "--threads", "1"];
    for args in
        [vec!["info", files[0].to_str().unwrap()], vec!["ecc", files[0].to_str().unwrap()], bench.to_vec()]
    {
        let o = Command::new(env!("CARGO_BIN_EXE_topoview"))
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("cannot write") && !e.contains("panicked"), "{e}");
    }
}

#[test]
fn corrupt_compressed_data_is_refused() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<u8> = (0..40 * 30 * 20u32).map(|i| (i * 7 % 251) as u8).collect();
    let field = topoview_core::field::ScalarField::new(
        &[40, 30, 20],
        topoview_core::field::Samples::U8(values.clone()),
    )
    .unwrap();
    let good = topoview_core::io::nifti::nifti1_bytes(&field, true).unwrap();
    let n = good.len();
    let mut crc = good.clone();
    crc[n - 8] ^= 0x5a; // the CRC-32 of the trailer
    let mut length = good.clone();
    length[n - 3] ^= 0x01; // ISIZE, the length modulo 2^32
    let no_trailer = good[..n - 8].to_vec();
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    zlib.write_all(&values).unwrap();
    let zlib = zlib.finish().unwrap();
    let mha = |data: &[u8]| {
        let mut f = b"ObjectType = Image\nNDims = 3\nDimSize = 40 30 20\nElementType = MET_UCHAR\nCompressedData = True\nElementDataFile = LOCAL\n".to_vec();
        f.extend_from_slice(data);
        f
    };
    let mut adler = zlib.clone();
    let z = adler.len();
    adler[z - 1] ^= 0x11;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&values).unwrap();
    let mut gz = gz.finish().unwrap();
    let g = gz.len();
    gz[g - 6] ^= 0x22;
    let mut nrrd = b"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 40 30 20\nencoding: gzip\n\n".to_vec();
    nrrd.extend_from_slice(&gz);
    let cases: [(&str, Vec<u8>); 7] = [
        ("good.nii.gz", good),
        ("good.mha", mha(&zlib)),
        ("crc.nii.gz", crc),
        ("length.nii.gz", length),
        ("no_trailer.nii.gz", no_trailer),
        ("adler.mha", mha(&adler)),
        ("crc.nrrd", nrrd),
    ];
    for (name, bytes) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = run(&["ecc", p.to_str().unwrap()], MINUTE);
        if name.starts_with("good") {
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            continue;
        }
        let e = stderr(&o);
        assert!(!o.status.success(), "{name} was read without complaint");
        assert!(e.contains(name) && e.lines().count() == 1 && !e.contains("panicked"), "{name}: {e}");
    }
}

/// Runs topoview and returns its output and its peak resident memory in MiB, as it measured
/// it itself (VmHWM; see TOPOVIEW_PEAK_MEMORY in src/cli/mod.rs).
#[cfg(target_os = "linux")]
fn run_measured(args: &[&str]) -> (Output, f64) {
    let o = Command::new(env!("CARGO_BIN_EXE_topoview"))
        .args(args)
        .env("TOPOVIEW_PEAK_MEMORY", "1")
        .output()
        .unwrap();
    let e = stderr(&o);
    let line = e.lines().find(|l| l.starts_with("peak resident memory:")).unwrap_or_else(|| panic!("{e}"));
    let mib = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    (o, mib)
}

#[cfg(target_os = "linux")]
#[test]
fn lying_files_are_refused_in_little_memory() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // A baseline: a small honest file.
    let small = nrrd(dir.path(), "small.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let (o, base) = run_measured(&["info", small.to_str().unwrap()]);
    assert!(o.status.success());
    let gz = |bytes: usize| {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let chunk = vec![0u8; 1 << 20];
        let mut left = bytes;
        while left > 0 {
            let k = left.min(chunk.len());
            z.write_all(&chunk[..k]).unwrap();
            left -= k;
        }
        z.finish().unwrap()
    };
    // A .nii.gz whose header claims 32767^3 voxels, with 256 MiB of zeros behind it.
    let mut hdr = topoview_core::io::nifti::nifti1_bytes(
        &topoview_core::field::ScalarField::new(&[2, 2, 2], topoview_core::field::Samples::U8(vec![0; 8]))
            .unwrap(),
        false,
    )
    .unwrap();
    for (i, d) in [32767i16, 32767, 32767].iter().enumerate() {
        hdr[42 + 2 * i..44 + 2 * i].copy_from_slice(&d.to_le_bytes());
    }
    hdr.truncate(352);
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&hdr).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..256 {
        z.write_all(&zeros).unwrap();
    }
    std::fs::write(dir.path().join("claims.nii.gz"), z.finish().unwrap()).unwrap();
    // A gzip NRRD claiming 30000^3, and a compressed MetaImage claiming 2^33 voxels.
    let mut n = b"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 30000 30000 30000\nencoding: gzip\n\n".to_vec();
    n.extend(gz(256 << 20));
    std::fs::write(dir.path().join("claims.nrrd"), n).unwrap();
    let mut m = b"NDims = 3\nDimSize = 2048 2048 2048\nElementType = MET_UCHAR\nCompressedData = True\nElementDataFile = LOCAL\n".to_vec();
    let mut zl = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    zl.write_all(&vec![0u8; 64 << 20]).unwrap();
    m.extend(zl.finish().unwrap());
    std::fs::write(dir.path().join("claims.mha"), m).unwrap();
    // Detached data that are endless, and an ascii file claiming more samples than it has.
    std::fs::write(
        dir.path().join("zero.nhdr"),
        "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 4096 4096 4096\nencoding: raw\ndata file: /dev/zero\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("zero.mhd"),
        "NDims = 3\nDimSize = 4096 4096 4096\nElementType = MET_UCHAR\nElementDataFile = /dev/zero\n",
    )
    .unwrap();
    let mut a = b"NRRD0004\ntype: uchar\ndimension: 3\nsizes: 4096 4096 4096\nencoding: ascii\n\n".to_vec();
    a.extend(b"1 ".repeat(1 << 20));
    std::fs::write(dir.path().join("ascii.nrrd"), a).unwrap();
    for (name, expect) in [
        ("claims.nii.gz", "can inflate to"),
        ("claims.nrrd", "can inflate to"),
        ("claims.mha", "can inflate to"),
        ("zero.nhdr", "not a regular file"),
        ("zero.mhd", "not a regular file"),
        ("ascii.nrrd", "truncated"),
    ] {
        let (o, peak) = run_measured(&["ecc", dir.path().join(name).to_str().unwrap()]);
        let e = stderr(&o);
        let first = e.lines().next().unwrap_or_default();
        assert!(!o.status.success() && first.contains(name) && first.contains(expect), "{name}: {e}");
        assert!(peak - base < 64.0, "{name}: {peak:.0} MiB at the peak, {base:.0} MiB for a small file");
    }
}

#[test]
fn unclear_errors_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    // A NRRD header with no blank line before its binary data.
    let mut n = b"NRRD0004\ntype: uchar\ndimension: 2\nsizes: 4 4\nencoding: raw\n".to_vec();
    n.extend((0..16u8).map(|i| i * 13 + 1));
    std::fs::write(dir.path().join("noblank.nrrd"), n).unwrap();
    // A .mha with no ElementDataFile line.
    let mut m = b"NDims = 2\nDimSize = 4 4\nElementType = MET_UCHAR\n".to_vec();
    m.extend((0..16u8).map(|i| i * 13 + 1));
    std::fs::write(dir.path().join("nodata.mha"), m).unwrap();
    // A header in Latin-1 (a comment with "µm" as the byte 0xB5) is text, not binary data.
    let mut latin =
        b"NRRD0004\n# spacing in \xb5m\ntype: uchar\ndimension: 2\nsizes: 2 2\nencoding: ascii\n\n".to_vec();
    latin.extend(b"1 2 3 4\n");
    std::fs::write(dir.path().join("latin1.nrrd"), latin).unwrap();
    let o = run(&["ecc", dir.path().join("latin1.nrrd").to_str().unwrap()], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    for (name, expect) in
        [("noblank.nrrd", "without the blank line"), ("nodata.mha", "before an ElementDataFile line")]
    {
        let o = run(&["ecc", dir.path().join(name).to_str().unwrap()], MINUTE);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(expect), "{name}: {e}");
    }
    // A pipe is not read as an empty file.
    #[cfg(unix)]
    {
        let fifo = dir.path().join("pipe.nrrd");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path and a mode.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let o = run(&["ecc", fifo.to_str().unwrap()], MINUTE);
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    }
    // Smoothing an f64 field beyond f32's range says so, instead of counting infinities.
    let big = nrrd(dir.path(), "big.nrrd", "double", 3, 3, "1e39 0 1 2 3 4 5 6 7");
    for nan in ["reject", "absent"] {
        let o = run(&["ecc", big.to_str().unwrap(), "--smooth", "1", "--nan", nan], MINUTE);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains("beyond f32's range") && !e.contains("infinite"), "{e}");
    }
    let small = nrrd(dir.path(), "s.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let o = run(&["ecc", small.to_str().unwrap(), "--smooth", "-1"], MINUTE);
    assert!(stderr(&o).contains("sigma must be finite and not negative"), "{}", stderr(&o));
    let o = run(&["ecc", small.to_str().unwrap(), "--threads", "5000"], MINUTE);
    assert!(!o.status.success() && stderr(&o).contains("--threads must be 1 to"), "{}", stderr(&o));
}

#[test]
fn a_data_file_outside_the_headers_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("h")).unwrap();
    std::fs::write(dir.path().join("d.raw"), [1u8, 2, 3, 4]).unwrap();
    let h = dir.path().join("h").join("up.nhdr");
    std::fs::write(
        &h,
        "NRRD0004\ntype: uchar\ndimension: 2\nsizes: 2 2\nencoding: raw\ndata file: ../d.raw\n",
    )
    .unwrap();
    let o = run(&["ecc", h.to_str().unwrap()], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("outside the header's folder"), "{}", stderr(&o));
}

#[test]
fn morse_smale_of_noise_is_refused_with_an_estimate_before_memory_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("noise_64x64x64_uint8.raw");
    let v: Vec<u8> =
        (0..64 * 64 * 64u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8).collect();
    std::fs::write(&p, v).unwrap();
    let start = Instant::now();
    let o = run(&["msc", p.to_str().unwrap(), "--max-memory", "100M"], MINUTE);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("would need about") && e.contains("--max-memory"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(20), "refused only after {:?}", start.elapsed());
    // With room enough it runs.
    let o = run(&["msc", p.to_str().unwrap(), "--max-memory", "4G"], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_kernel_wider_than_the_field_costs_what_the_field_costs() {
    let coins = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/coins.png");
    let start = Instant::now();
    let o = run(&["ecc", coins.to_str().unwrap(), "--smooth", "300000"], MINUTE);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(start.elapsed() < Duration::from_secs(30), "took {:?}", start.elapsed());
    // (What so wide a kernel computes is checked against the taps in topo::smooth's tests.)
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("384x303 f32"), "{out}");
}

/// A 6x4 RGB TIFF stored plane by plane (PlanarConfiguration 2).
fn planar_rgb_tiff(path: &Path) {
    let (w, h) = (6u32, 4u32);
    let plane = (w * h) as usize;
    let mut f = b"II*\0".to_vec();
    let data_at = 8u32;
    let arrays_at = data_at + 3 * plane as u32;
    let ifd_at = arrays_at + 6 + 12 + 12;
    f.extend_from_slice(&ifd_at.to_le_bytes());
    for c in 0..3u8 {
        f.extend(std::iter::repeat_n(40 * c + 10, plane));
    }
    for _ in 0..3 {
        f.extend_from_slice(&8u16.to_le_bytes()); // BitsPerSample
    }
    for c in 0..3u32 {
        f.extend_from_slice(&(data_at + c * plane as u32).to_le_bytes()); // StripOffsets
    }
    for _ in 0..3 {
        f.extend_from_slice(&(plane as u32).to_le_bytes()); // StripByteCounts
    }
    let entries: [(u16, u16, u32, u32); 10] = [
        (256, 4, 1, w),
        (257, 4, 1, h),
        (258, 3, 3, arrays_at),
        (259, 3, 1, 1),
        (262, 3, 1, 2),
        (273, 4, 3, arrays_at + 6),
        (277, 3, 1, 3),
        (278, 4, 1, h),
        (279, 4, 3, arrays_at + 18),
        (284, 3, 1, 2),
    ];
    f.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, ty, count, v) in entries {
        f.extend_from_slice(&tag.to_le_bytes());
        f.extend_from_slice(&ty.to_le_bytes());
        f.extend_from_slice(&count.to_le_bytes());
        if ty == 3 && count == 1 {
            f.extend_from_slice(&(v as u16).to_le_bytes());
            f.extend_from_slice(&[0, 0]);
        } else {
            f.extend_from_slice(&v.to_le_bytes());
        }
    }
    f.extend_from_slice(&0u32.to_le_bytes());
    std::fs::write(path, f).unwrap();
}

#[test]
fn a_planar_rgb_tiff_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("planar.tif");
    planar_rgb_tiff(&p);
    let o = run(&["ecc", p.to_str().unwrap()], MINUTE);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("planar") && e.contains("planar.tif"), "{e}");
}

/// Negative values of numeric options reach topoview's own checks (not the argument parser's
/// tip to write `-- -1`, which would make the value a file name), and options that need no
/// data are judged before the file is read.
#[test]
fn negative_option_values_get_topoviews_own_message_before_any_reading() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.csv");
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["rips", missing, "--threshold", "-1"], "the threshold -1 is not a non-negative radius"),
        (&["rips", missing, "--threshold", "NaN"], "the threshold NaN is not a non-negative radius"),
        (&["rips", missing, "--maxdim", "9"], "dimension 9 is above the highest computed"),
        (&["rips", missing, "--points", "critical", "--persistence", "-1"], "not negative, got -1"),
        (&["rips", missing, "--points", "critical", "--relative", "-0.5"], "must lie in 0..1, got -0.5"),
        (&["ecc", missing, "--scale-space", "-1"], "SIGMA_MAX (-1) and STEP (0.25) must be positive"),
    ];
    for (args, want) in cases {
        let o = run(args, MINUTE);
        assert!(!o.status.success(), "{args:?} accepted");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// Thread counts, from `--threads` or from RAYON_NUM_THREADS, are bounded and named when
/// refused (5,000 threads took 70 s and 7.8 GB on a 336-voxel file, or panicked in rayon and
/// hung; `bench --threads 100000` hung, `--threads 0` printed "inf GVox/s/core").
#[test]
fn thread_counts_from_options_and_the_environment_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = nrrd(dir.path(), "a.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let p = p.to_str().unwrap();
    for value in ["5000", "many", "-3"] {
        let o = Command::new(env!("CARGO_BIN_EXE_topoview"))
            .args(["ecc", p])
            .env("RAYON_NUM_THREADS", value)
            .output()
            .unwrap();
        assert!(!o.status.success(), "RAYON_NUM_THREADS={value} accepted");
        assert!(stderr(&o).contains(&format!("RAYON_NUM_THREADS=\"{value}\"")), "{}", stderr(&o));
    }
    let o =
        Command::new(env!("CARGO_BIN_EXE_topoview")).args(["ecc", p]).env("RAYON_NUM_THREADS", "2").output();
    assert!(o.unwrap().status.success(), "a sensible RAYON_NUM_THREADS is taken");
    for t in ["0", "100000"] {
        let o = run(&["bench", "--threads", t, "--size", "8"], MINUTE);
        assert!(!o.status.success() && stderr(&o).contains("--threads must be 1 to"), "{t}: {}", stderr(&o));
    }
}

/// Every file topoview reads is a regular file or refused at once: a crack bank that is
/// /dev/zero grew to 4 GB, a FIFO hung.
#[test]
fn a_bank_that_is_a_device_or_a_pipe_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let img = nrrd(dir.path(), "a.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let fifo = dir.path().join("bank.json");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for bank in [Path::new("/dev/zero"), fifo.as_path()] {
        let o = run(&["cracks", img.to_str().unwrap(), "--bank", bank.to_str().unwrap()], MINUTE);
        let want = format!("{}: is not a regular file", bank.display());
        assert!(!o.status.success() && stderr(&o).contains(&want), "{}", stderr(&o));
    }
}

/// Point tables are read as written or refused with the line: a byte order mark is not part
/// of the first number, a first line of numbers and words is no header, decimal commas are
/// not split into more numbers, a `.npy` order numpy refuses is refused, and a PLY comment that
/// mentions `end_header` ends nothing.
#[test]
fn point_tables_are_read_as_written_or_refused_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let rips = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = run(&["rips", p.to_str().unwrap(), "--maxdim", "0"], MINUTE);
        (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o)))
    };
    let (ok, out) = rips("bom.csv", b"\xef\xbb\xbf1,2\n3,4\n5,6\n");
    assert!(ok && out.contains("3 points in 2 dimensions"), "{out}");
    let (ok, out) = rips("hex.csv", b"0x10,1\n2,3\n");
    assert!(!ok && out.contains("hex.csv") && out.contains("line 1: '0x10' is not a number"), "{out}");
    let (ok, out) = rips("header.csv", b"x,y\n2,3\n4,5\n");
    assert!(ok && out.contains("2 points in 2 dimensions"), "{out}");
    let (ok, out) = rips("comma.csv", b"1,5;2,5\n3,5;4,5\n");
    assert!(!ok && out.contains("line 1 has both ';' and ','"), "{out}");
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    let h = "{'descr': '<f8', 'fortran_order': 1, 'shape': (2, 1), }\n";
    npy.extend((h.len() as u16).to_le_bytes());
    npy.extend(h.as_bytes());
    npy.extend([1.0f64, 2.0].iter().flat_map(|v| v.to_le_bytes()));
    let (ok, out) = rips("f.npy", &npy);
    assert!(!ok && out.contains("'fortran_order' is 1, not True or False"), "{out}");
    let ply = b"ply\nformat ascii 1.0\ncomment end_header\nelement vertex 2\nproperty float x\nproperty float y\nend_header\n1 2\n3 4\n";
    let (ok, out) = rips("c.ply", ply);
    assert!(ok && out.contains("2 points in 2 dimensions"), "{out}");
}

/// Runs topoview with `args` (under `ulimit -v kib` when given) and returns whether it
/// succeeded, with its standard output and error together.
fn run_all(args: &[&str], limit_kib: Option<u64>) -> (bool, String) {
    let o = match limit_kib {
        None => run(args, MINUTE),
        Some(kib) => Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib}; exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_topoview"))
            .args(args)
            .output()
            .unwrap(),
    };
    (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o)))
}

/// Uniform noise in 0..1 from a fixed seed (a 64-bit LCG's top bits).
fn noise(n: usize, seed: u64) -> Vec<f32> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// A raw little-endian f32 NRRD of `dims` holding `values`.
fn f32_nrrd(path: &Path, dims: &[usize], values: &[f32]) {
    let sizes: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    let mut b = format!(
        "NRRD0004\ntype: float\ndimension: {}\nsizes: {}\nencoding: raw\nendian: little\n\n",
        dims.len(),
        sizes.join(" ")
    )
    .into_bytes();
    b.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    std::fs::write(path, b).unwrap();
}

/// The process's own memory limits are honoured: under `ulimit -v`, Rips distances that do
/// not fit and a Morse-Smale complex for `--points critical` are refused with the figures,
/// where they aborted ("memory allocation of ... bytes failed", SIGABRT). (The control
/// group's `memory.max` is read the same way: `mem::tests`.)
#[test]
fn memory_limits_of_the_process_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("cloud.csv");
    let text: String =
        noise(3 * 30_000, 1).chunks(3).map(|p| format!("{},{},{}\n", p[0], p[1], p[2])).collect();
    std::fs::write(&csv, text).unwrap();
    let (ok, out) = run_all(&["rips", csv.to_str().unwrap(), "--maxdim", "1"], Some(1_000_000));
    assert!(!ok && out.contains("30000 points need 1.7 GiB of pairwise distances"), "{out}");
    let field = dir.path().join("noise.nrrd");
    f32_nrrd(&field, &[64, 64, 64], &noise(64 * 64 * 64, 2));
    let (ok, out) =
        run_all(&["rips", field.to_str().unwrap(), "--points", "critical", "--maxdim", "0"], Some(400_000));
    assert!(!ok && out.contains("noise.nrrd: the complex would need about"), "{out}");
}

/// A loaded crack bank is judged by its work on the image before any filtering: 300,000 taps
/// on 2000 x 2000 pixels (1.2 x 10^12 multiply-adds, some 20 minutes on 16 cores) is refused
/// at once with the figures.
#[test]
fn a_bank_too_long_for_the_image_is_refused_with_its_work() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("big.nrrd");
    let mut b = b"NRRD0004\ntype: uchar\ndimension: 2\nsizes: 2000 2000\nencoding: raw\n\n".to_vec();
    b.resize(b.len() + 2000 * 2000, 9);
    std::fs::write(&img, b).unwrap();
    let taps: Vec<String> = (0..150_000).map(|i| format!("[{},{},0.5]", i % 300, i / 300 % 300)).collect();
    let taps = taps.join(",");
    let bank = dir.path().join("bank.json");
    let json = format!(
        "{{\"format\":\"topoview crack bank 1\",\"kernels\":[{{\"name\":\"wide\",\"edge\":true,\"h\":[{taps}],\"v\":[{taps}]}}]}}"
    );
    std::fs::write(&bank, json).unwrap();
    let start = Instant::now();
    let (ok, out) = run_all(&["cracks", img.to_str().unwrap(), "--bank", bank.to_str().unwrap()], None);
    assert!(
        !ok && out.contains("300000 taps on 4000000 pixels of 1 channel(s) are 1.20e12 multiply-adds"),
        "{out}"
    );
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
}

/// SIGINT or SIGTERM during a write removes the temporary files (16-33 MB of `.topoview-*`
/// were left by `ecc --csv --json` on noise), and the process still ends by the signal.
#[test]
fn a_signal_during_a_write_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let field = dir.path().join("noise.nrrd");
    f32_nrrd(&field, &[128, 128, 128], &noise(128 * 128 * 128, 3));
    let out = dir.path().join("out");
    let mut caught = 0;
    for (attempt, signal) in ["INT", "TERM", "INT", "TERM"].into_iter().enumerate() {
        std::fs::create_dir_all(&out).unwrap();
        let (csv, json) = (out.join("n.csv"), out.join("n.json"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_topoview"))
            .args(["ecc", field.to_str().unwrap(), "--backend", "cpu"])
            .args(["--csv", csv.to_str().unwrap(), "--json", json.to_str().unwrap()])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let staged = || {
            std::fs::read_dir(&out)
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().starts_with(".topoview-"))
        };
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() && !staged() && start.elapsed() < MINUTE {
            std::thread::sleep(Duration::from_micros(500));
        }
        if child.try_wait().unwrap().is_none() && staged() {
            assert!(
                Command::new("kill")
                    .args([&format!("-{signal}"), &child.id().to_string()])
                    .status()
                    .unwrap()
                    .success()
            );
            let status = child.wait().unwrap();
            use std::os::unix::process::ExitStatusExt;
            let left: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
            if status.signal().is_some() {
                assert!(left.is_empty(), "attempt {attempt} (SIG{signal}) left {left:?}");
                caught += 1;
            } else {
                // The run finished between the look and the signal: its outputs, and nothing else.
                assert!(status.success() && left.len() == 2, "attempt {attempt}: {status:?}, {left:?}");
            }
        } else {
            child.wait().unwrap();
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
    assert!(caught >= 2, "a write was under way at only {caught} of 4 signals");
}

/// A smoothed field stays within the field's range: a constant field of 7s, or a plateau of
/// 7s, has chi 1 at threshold 7 at every scale (sigma 0.5 gave 0: 7.0000005 lay above it).
#[test]
fn the_scale_space_top_threshold_holds_the_whole_field() {
    let dir = tempfile::tempdir().unwrap();
    let constant = nrrd(dir.path(), "seven.nrrd", "float", 6, 6, &["7"; 36].join(" "));
    let plateau: Vec<&str> = (0..64 * 64)
        .map(|i| if (10..54).contains(&(i % 64)) && (10..54).contains(&(i / 64)) { "7" } else { "2" })
        .collect();
    let plateau = nrrd(dir.path(), "plateau.nrrd", "uchar", 64, 64, &plateau.join(" "));
    for f in [constant, plateau] {
        let args = [
            "ecc",
            f.to_str().unwrap(),
            "--scale-space",
            "2:0.5",
            "--scale-space-thresholds",
            "3",
            "--csv",
            "-",
        ];
        let o = run(&args, MINUTE);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        // sigma,threshold,chi rows at the field's maximum, 7.
        let top: Vec<Vec<f64>> = text
            .lines()
            .filter_map(|l| l.split(',').map(|x| x.parse::<f64>().ok()).collect::<Option<Vec<f64>>>())
            .filter(|r| r[1] == 7.0)
            .collect();
        assert!(top.len() == 5 && top.iter().all(|r| r[2] == 1.0), "{f:?}: {top:?}\n{text}");
    }
}

/// A grey TIFF colour type whose PhotometricInterpretation is MinIsWhite (the encoder knows
/// only MinIsBlack).
struct WhiteIsZero8;
impl tiff::encoder::colortype::ColorType for WhiteIsZero8 {
    type Inner = u8;
    const TIFF_VALUE: tiff::tags::PhotometricInterpretation =
        tiff::tags::PhotometricInterpretation::WhiteIsZero;
    const BITS_PER_SAMPLE: &'static [u16] = &[8];
    const SAMPLE_FORMAT: &'static [tiff::tags::SampleFormat] = &[tiff::tags::SampleFormat::Uint];
    fn horizontal_predict(row: &[u8], result: &mut Vec<u8>) {
        result.extend_from_slice(row);
    }
}

/// Valid files are read as their writers meant, or said: an LZW TIFF beyond deflate's ratio,
/// an ImageJ hyperstack's channels, NRRD and MetaImage channels, MinIsWhite values, a PNG
/// too large for the decoder's cap, a header that names itself as its data.
#[test]
fn valid_files_are_read_as_their_writers_meant() {
    use image::ImageEncoder;
    use tiff::encoder::{Compression, TiffEncoder, colortype};
    let dir = tempfile::tempdir().unwrap();
    let info = |p: &Path| run_all(&["info", p.to_str().unwrap()], None);
    // 18000^2 zeros in LZW: 1357:1, past deflate's 1032:1 but within LZW's 2730:1.
    let lzw = dir.path().join("lzw.tif");
    let mut e =
        TiffEncoder::new(std::fs::File::create(&lzw).unwrap()).unwrap().with_compression(Compression::Lzw);
    e.write_image::<colortype::Gray8>(18000, 18000, &vec![0u8; 18000 * 18000]).unwrap();
    drop(e);
    let (ok, out) = info(&lzw);
    assert!(ok && out.contains("18000x18000 (2D"), "{out}");
    // ImageJ: 2 channels x 5 slices, channel fastest; channel 0 holds the slice's number.
    let hyper = dir.path().join("hyper.tif");
    let mut e = TiffEncoder::new(std::fs::File::create(&hyper).unwrap()).unwrap();
    for page in 0..10u8 {
        let value = if page % 2 == 0 { page / 2 } else { 200 };
        let mut image = e.new_image::<colortype::Gray8>(4, 3).unwrap();
        if page == 0 {
            let d = "ImageJ=1.54f\nimages=10\nchannels=2\nslices=5\nhyperstack=true\nmode=grayscale\n";
            image.encoder().write_tag(tiff::tags::Tag::ImageDescription, d).unwrap();
        }
        image.write_data(&[value; 12]).unwrap();
    }
    drop(e);
    let (ok, out) = info(&hyper);
    assert!(ok && out.contains("4x3x5 (3D") && out.contains("range:           0 to 4"), "{out}");
    assert!(
        out.contains("ImageJ hyperstack of 2 channels, 5 slices and 1 frame: channel 1, frame 1 read"),
        "{out}"
    );
    // MinIsWhite: the stored values 0..5, as tifffile reads them.
    let white = dir.path().join("white.tif");
    let mut e = TiffEncoder::new(std::fs::File::create(&white).unwrap()).unwrap();
    e.write_image::<WhiteIsZero8>(6, 1, &[0, 1, 2, 3, 4, 5]).unwrap();
    drop(e);
    let (ok, out) = info(&white);
    assert!(ok && out.contains("range:           0 to 5") && out.contains("MinIsWhite"), "{out}");
    // NRRD colour on the first axis, MetaImage channels: luminance, with the note.
    let rgb = dir.path().join("rgb.nrrd");
    std::fs::write(
        &rgb,
        "NRRD0004\ntype: uchar\ndimension: 3\nsizes: 3 2 1\nkinds: RGB-color domain domain\nencoding: ascii\n\n100 100 100 0 0 0\n",
    )
    .unwrap();
    let (ok, out) = info(&rgb);
    assert!(ok && out.contains("2x1 (2D") && out.contains("range:           0 to 100"), "{out}");
    assert!(out.contains("converted to luminance"), "{out}");
    let mha = dir.path().join("rgb.mha");
    let mut b = b"ObjectType = Image\nNDims = 2\nDimSize = 2 1\nElementType = MET_UCHAR\nElementNumberOfChannels = 3\nElementDataFile = LOCAL\n".to_vec();
    b.extend([50, 50, 50, 10, 10, 10]);
    std::fs::write(&mha, b).unwrap();
    let (ok, out) = info(&mha);
    assert!(
        ok && out.contains("range:           10 to 50") && out.contains("converted to luminance"),
        "{out}"
    );
    // A PNG whose samples pass the decoder's cap: the size and the limit, not "Memory limit
    // exceeded" (a valid 30000^2 PNG is read: its file is large enough to hold them).
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&[0u8; 4], 2, 2, image::ExtendedColorType::L8)
        .unwrap();
    png[16..20].copy_from_slice(&30000u32.to_be_bytes());
    png[20..24].copy_from_slice(&30000u32.to_be_bytes());
    let crc = crc32(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    let big = dir.path().join("big.png");
    std::fs::write(&big, png).unwrap();
    let (ok, out) = info(&big);
    assert!(!ok && out.contains("30000x30000") && out.contains("900000000 bytes"), "{out}");
    // A detached header that names itself.
    let own = dir.path().join("own.nhdr");
    std::fs::write(
        &own,
        "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 8\nencoding: raw\ndata file: own.nhdr\n",
    )
    .unwrap();
    let (ok, out) = info(&own);
    assert!(!ok && out.contains("the data file 'own.nhdr' is this header itself"), "{out}");
}

/// CRC-32 (PNG's), bit by bit.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

/// A newline in a file name stays escaped in the one-line summaries and errors of `ecc`, `msc`
/// and `info`; `--volume` of a file of one volume is refused, not ignored.
#[test]
fn file_names_stay_on_one_line_and_a_missing_volume_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = nrrd(dir.path(), "two\nlines.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let p = p.to_str().unwrap();
    for args in [
        &["ecc", p][..],
        &["msc", p],
        &["info", p],
        &["ecc", p, "--smooth", "1e9"],
        &["ecc", p, "--volume", "3"],
    ] {
        let (_, out) = run_all(args, None);
        assert!(out.contains("two\\nlines.nrrd"), "{args:?}: {out}");
        assert!(!out.lines().any(|l| l.starts_with("lines.nrrd")), "{args:?}: {out}");
    }
    let png = dir.path().join("a.png");
    image::GrayImage::from_raw(2, 2, vec![0, 1, 2, 3]).unwrap().save(&png).unwrap();
    let (ok, out) = run_all(&["ecc", png.to_str().unwrap(), "--volume", "3"], None);
    assert!(!ok && out.contains("--volume 3: this file holds one volume"), "{out}");
}

/// Messages say what is wrong: a vox_offset past any file, an sform of zeros (no orientation,
/// not RAS), errors of `rips --points critical` with the file's name, a bank angle written to
/// seven decimals.
#[test]
fn messages_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let nifti2 = |name: &str, edit: &dyn Fn(&mut Vec<u8>)| {
        // A NIfTI-2 header: 540 bytes, 4 of extension flags, then 8 voxels of u8.
        let mut h = vec![0u8; 544];
        h[0..4].copy_from_slice(&540i32.to_le_bytes());
        h[4..12].copy_from_slice(b"n+2\0\r\n\x1a\n");
        h[12..14].copy_from_slice(&2i16.to_le_bytes()); // datatype u8
        h[14..16].copy_from_slice(&8i16.to_le_bytes());
        for (i, d) in [3i64, 2, 2, 2, 1, 1, 1, 1].iter().enumerate() {
            h[16 + 8 * i..24 + 8 * i].copy_from_slice(&d.to_le_bytes());
        }
        for i in 0..8 {
            h[104 + 8 * i..112 + 8 * i].copy_from_slice(&1f64.to_le_bytes());
        }
        h[168..176].copy_from_slice(&544i64.to_le_bytes());
        h[176..184].copy_from_slice(&1f64.to_le_bytes()); // scl_slope
        edit(&mut h);
        h.extend([1, 2, 3, 4, 5, 6, 7, 8]);
        let p = dir.path().join(name);
        std::fs::write(&p, h).unwrap();
        p
    };
    let far = nifti2("far.nii", &|h| h[168..176].copy_from_slice(&(1i64 << 62).to_le_bytes()));
    let (ok, out) = run_all(&["info", far.to_str().unwrap()], None);
    assert!(!ok && out.contains("lies past the end of any file") && !out.contains("whole number"), "{out}");
    let zero = nifti2("zero.nii", &|h| h[348..352].copy_from_slice(&2i32.to_le_bytes())); // sform_code 2, srow 0
    let (ok, out) = run_all(&["info", zero.to_str().unwrap()], None);
    assert!(
        ok && !out.contains("orientation:     RAS") && out.contains("sform (code 2) is singular"),
        "{out}"
    );
    // A streamed header whose data file is a folder: both named.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let nhdr = dir.path().join("a.nhdr");
    std::fs::write(&nhdr, "NRRD0004\ntype: uchar\ndimension: 1\nsizes: 8\nencoding: raw\ndata file: sub\n")
        .unwrap();
    let (ok, out) = run_all(&["ecc", nhdr.to_str().unwrap()], None);
    assert!(!ok && out.contains("a.nhdr: data file:") && out.contains("sub: is a directory"), "{out}");
    let line = nrrd(dir.path(), "line.nrrd", "float", 4, 1, "0 1 nan 2");
    let (ok, out) = run_all(&["rips", line.to_str().unwrap(), "--points", "critical"], None);
    assert!(!ok && out.contains("line.nrrd"), "{out}");
    // pi/2 written as 1.5707963 (2.7e-8 short) is the normal of the vertical cracks.
    let img = nrrd(dir.path(), "a.nrrd", "uchar", 3, 3, "0 2 0 2 1 2 0 2 0");
    let bank = dir.path().join("bank.json");
    let k = |name: &str, angle: &str| {
        format!(
            "{{\"name\":\"{name}\",\"edge\":true,\"angle\":{angle},\"h\":[[0,0,-1],[0,1,1]],\"v\":[[0,0,-1],[1,0,1]]}}"
        )
    };
    let json = format!(
        "{{\"format\":\"topoview crack bank 1\",\"kernels\":[{},{}]}}",
        k("x", "0"),
        k("y", "1.5707963")
    );
    std::fs::write(&bank, json).unwrap();
    let (ok, out) = run_all(&["cracks", img.to_str().unwrap(), "--bank", bank.to_str().unwrap()], None);
    assert!(ok, "{out}");
}
