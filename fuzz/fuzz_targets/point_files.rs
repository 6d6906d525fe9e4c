#![no_main]
//! Point clouds and distance matrices: the first byte picks the reader (a table, Ripser's
//! lower-distance and full distance matrices, `.npy`, PLY), the rest is the file. What reads is
//! checked as Rips persistence would take it: its distances when there are few points.
use libfuzzer_sys::fuzz_target;
use topoview_core::control::Control;
use topoview_core::io::points::{PointData, PointFormat, distances, read};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    let (name, format) = match pick % 6 {
        0 => ("cloud.csv", PointFormat::Auto),
        1 => ("cloud.tsv", PointFormat::PointCloud),
        2 => ("m.lower_distance_matrix", PointFormat::Auto),
        3 => ("m.distance_matrix", PointFormat::Distance),
        4 => ("cloud.npy", PointFormat::Auto),
        _ => ("cloud.ply", PointFormat::Auto),
    };
    // One file per process, in memory where the machine has /dev/shm.
    let dir = if std::path::Path::new("/dev/shm").is_dir() { "/dev/shm" } else { "/tmp" };
    let path = std::path::PathBuf::from(format!("{dir}/topoview-fuzz-{}-{name}", std::process::id()));
    if std::fs::write(&path, body).is_err() {
        return;
    }
    if let Ok(points) = read(&path, format, &Control::default()) {
        let n = points.count();
        // A table has whole rows; a distance matrix may be of one point (no distances).
        if let PointData::Points { coords, dim } = &points {
            assert!(*dim > 0 && coords.len() % dim == 0 && n > 0);
        }
        if n <= 512 {
            let _ = distances(&points, &Control::default());
        }
    }
    let _ = std::fs::remove_file(&path);
});
