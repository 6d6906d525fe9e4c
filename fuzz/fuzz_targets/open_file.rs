#![no_main]
//! Whole files through `open`: the first byte picks an extension, the rest is the content, so
//! sniffing, every reader and the sample reading all see hostile input.
use libfuzzer_sys::fuzz_target;

const EXT: [&str; 8] = ["nii", "nii.gz", "nrrd", "mha", "raw", "tif", "png", "x_4x4x2_uint16.raw"];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else { return };
    let dir = std::env::temp_dir().join(format!("topoview-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("f.{}", EXT[sel as usize % EXT.len()]));
    if std::fs::write(&path, body).is_ok() {
        if let Ok(field) = topoview_core::io::open(&path, &Default::default()) {
            let _ = topoview_core::topo::ecc::ecc(&field, &Default::default(), &Default::default());
        }
    }
});
