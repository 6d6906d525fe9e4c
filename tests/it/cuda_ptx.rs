//! The embedded PTX is the compilation of the current kernels: each .ptx records the SHA-256 of
//! its .cu source (scripts/build-ptx.py), so editing a kernel without regenerating the PTX
//! fails here, on any machine, GPU or not.

use std::path::Path;

fn sha256_hex(bytes: &[u8]) -> String {
    // The tests have no hashing crate; sha256sum is on every Linux machine this runs on.
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child =
        Command::new("sha256sum").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("sha256sum");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string()
}

/// A kernel file followed by the headers it includes (`#include "x.cuh"`, from kernels/), in
/// order, as scripts/build-ptx.py hashes it.
fn source_with_headers(cu: &Path) -> Vec<u8> {
    let src = std::fs::read(cu).unwrap();
    let mut all = src.clone();
    for line in String::from_utf8(src).unwrap().lines() {
        if let Some(name) = line.strip_prefix("#include \"").and_then(|l| l.split('"').next()) {
            all.extend(std::fs::read(cu.with_file_name(name)).unwrap());
        }
    }
    all
}

#[test]
fn ptx_is_generated_from_the_current_kernels() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let cu = entry.unwrap().path();
        if cu.extension().is_none_or(|e| e != "cu") {
            continue;
        }
        let ptx = std::fs::read_to_string(cu.with_extension("ptx"))
            .unwrap_or_else(|_| panic!("{} has no PTX: run python3 scripts/build-ptx.py", cu.display()));
        let recorded = ptx.lines().next().and_then(|l| l.strip_prefix("// source-sha256: ")).unwrap_or("");
        let actual = sha256_hex(&source_with_headers(&cu));
        assert_eq!(
            recorded,
            actual,
            "{} changed since its PTX was made: run python3 scripts/build-ptx.py",
            cu.display()
        );
        assert!(ptx.contains(".target sm_70"), "PTX must target compute_70 (see scripts/build-ptx.py)");
        seen += 1;
    }
    assert!(seen >= 2, "expected kernels/ecc.cu and kernels/smooth.cu");
}
