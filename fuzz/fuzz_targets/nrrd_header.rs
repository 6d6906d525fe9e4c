#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = topoview_core::io::nrrd::parse_header(&text);
    let _ = topoview_core::io::metaimage::parse_header(&text);
});
