//! Cancellation of every long operation a user can start: a flag raised from the operation's
//! own first progress report stops it part way, with the operation's typed Cancelled error
//! (never a message to match on, never a result).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use topoview_compute::backend::{Backend, Choice};
use topoview_core::control::Control;
use topoview_core::io::{OpenOptions, ReadError, open_with};
use topoview_core::synthetic::gaussian_random_field;
use topoview_core::topo::ecc::{EccError, EccOptions};
use topoview_core::topo::msc::{MscError, analyse};
use topoview_core::topo::smooth::{SmoothError, Smoothing};

/// A control whose flag goes up at the first progress report, and what was reported.
struct Stopper {
    flag: AtomicBool,
    done: AtomicU64,
}

impl Stopper {
    fn new() -> Stopper {
        Stopper { flag: AtomicBool::new(false), done: AtomicU64::new(0) }
    }

    fn run<T>(&self, f: impl FnOnce(&Control) -> T) -> T {
        let progress = |n: u64| {
            self.done.fetch_add(n, Ordering::Relaxed);
            self.flag.store(true, Ordering::Relaxed);
        };
        f(&Control { progress: Some(&progress), cancel: Some(&self.flag) })
    }

    fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }
}

#[test]
fn reading_a_file_stops_between_reads() {
    // 16 MiB of raw samples: many 1 MiB reads.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big_256x256x256_uint8.raw");
    std::fs::write(&path, vec![7u8; 256 * 256 * 256]).unwrap();
    let s = Stopper::new();
    let r = s.run(|ctl| open_with(&path, &OpenOptions::default(), ctl));
    assert!(matches!(r, Err(ReadError::Cancelled { .. })), "{:?}", r.map(|f| f.len()));
    assert!(s.done() < 4 << 20, "read {} bytes after the flag went up", s.done());
    // Compressed and image formats read through the same watched file.
    for name in ["mni152_t1_09a.nii.gz", "pydicom_emri_small_stack_uint16.tif", "camera.png"] {
        let s = Stopper::new();
        let r = s.run(|ctl| open_with(&crate::common::data(name), &OpenOptions::default(), ctl));
        assert!(matches!(r, Err(ReadError::Cancelled { .. })), "{name}: {:?}", r.map(|f| f.len()));
    }
}

#[test]
fn the_ecc_and_smoothing_stop_part_way() {
    let field = gaussian_random_field(&[160, 160, 160], 2.0, 3, &Control::default()).unwrap();
    let backend = Backend::new(Choice::Cpu, None).unwrap();
    let opts = EccOptions::default();
    let s = Stopper::new();
    let r = s.run(|ctl| backend.ecc(&field, &opts, ctl));
    assert!(matches!(r, Err(EccError::Cancelled)));
    assert!(s.done() < field.len() as u64);
    let s = Stopper::new();
    let r = s.run(|ctl| backend.smooth(&field, &Smoothing::voxels(2.0), ctl));
    assert!(matches!(r, Err(SmoothError::Cancelled)));
    let s = Stopper::new();
    let r = s.run(|ctl| backend.smooth_ecc(&field, &Smoothing::voxels(2.0), &opts, ctl));
    assert!(r.is_err_and(|e| e.is_cancelled()));
}

#[test]
fn generating_a_random_field_stops_part_way() {
    let s = Stopper::new();
    let r = s.run(|ctl| gaussian_random_field(&[128, 128, 128], 3.0, 1, ctl));
    assert!(r.is_err());
    assert!(s.done() < 3 * 128 * 128 * 128);
}

#[test]
fn the_morse_smale_stages_stop_part_way() {
    let field = gaussian_random_field(&[48, 48, 48], 2.0, 5, &Control::default()).unwrap();
    let s = Stopper::new();
    let r = s.run(|ctl| analyse(&field, ctl));
    assert!(matches!(r, Err(MscError::Cancelled(_))));
    // analyse reports 6 ticks when it runs to the end.
    assert!(s.done() < 6, "{} ticks", s.done());
}
