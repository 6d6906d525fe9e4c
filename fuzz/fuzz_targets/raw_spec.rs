#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = topoview_core::io::raw::parse_dims(&text);
    let _ = topoview_core::io::raw::spec_from_name(std::path::Path::new(&format!("{text}.raw")));
});
