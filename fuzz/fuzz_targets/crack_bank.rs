#![no_main]
//! Crack banks as JSON (`topoview cracks --bank`): parsed and checked, and a bank that passes
//! applied to a small image when its work is small.
use libfuzzer_sys::fuzz_target;
use topoview_core::control::Control;
use topoview_core::topo::cracks::Image;
use topoview_core::topo::cracks::bank::Bank;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(bank) = Bank::from_json(&text) else { return };
    let taps: usize = bank.kernels.iter().map(|k| k.h.len() + k.v.len()).sum();
    if taps <= 4096 {
        let img = Image::grey(7, 5, (0..35).map(|i| (i * 37 % 11) as f32).collect());
        if let Ok(map) = bank.cracks(&img, &Control::default()) {
            assert_eq!((map.width, map.height), (7, 5));
        }
    }
});
