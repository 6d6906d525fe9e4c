#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = topoview_core::io::nifti::parse_header(data);
});
