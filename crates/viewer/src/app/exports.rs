//! Exports from the viewer: the curve (the CLI's CSV and JSON formats), the threshold mask as
//! NIfTI (with the source's affine) or PNG, and screenshots. Files are written on a helper thread
//! through a temporary file and a rename, so the UI never waits on the disk and a failed write
//! never leaves half a file.

use crossbeam_channel::Sender;
use std::path::PathBuf;
use std::sync::Arc;
use topoview_core::export::outputs::OutputError;
use topoview_core::export::{EccReport, write_atomic_with};
use topoview_core::field::{Samples, ScalarField};
use topoview_core::topo::ecc::{Ecc, Filtration, NanPolicy};
use topoview_core::topo::smooth::Smoothing;

/// The sublevel (superlevel) set of `field` at `t` as a u8 0/1 field with the field's geometry.
/// NaN samples are never in the set.
pub fn mask(field: &ScalarField, filtration: Filtration, t: f64) -> ScalarField {
    let inside = |x: f64| match filtration {
        Filtration::Sublevel => x <= t,
        Filtration::Superlevel => x >= t,
    };
    let s = field.samples();
    let v: Vec<u8> = (0..s.len()).map(|i| inside(s.get_f64(i)) as u8).collect();
    field.with_samples(Samples::U8(v)).expect("same geometry")
}

/// The mask as an 8-bit PNG: a 2D field as it is (row 0 = y 0, as the image readers read it),
/// a volume's axial slice `z` with y up (as the axial view shows it).
pub fn mask_png(mask: &ScalarField, z: usize) -> image::GrayImage {
    let [nx, ny, _] = mask.dims();
    let flip = mask.ndim() == 3;
    image::GrayImage::from_fn(nx as u32, ny as u32, |x, row| {
        let y = if flip { ny - 1 - row as usize } else { row as usize };
        image::Luma([mask.samples().get_f64(mask.index(x as usize, y, z)) as u8 * 255])
    })
}

pub enum Export {
    Curve {
        path: PathBuf,
        json: bool,
        source: String,
        field: Arc<ScalarField>,
        ecc: Arc<Ecc>,
        sigma: Option<f64>,
    },
    MaskNifti {
        path: PathBuf,
        field: Arc<ScalarField>,
        filtration: Filtration,
        threshold: f64,
    },
    MaskPng {
        path: PathBuf,
        field: Arc<ScalarField>,
        filtration: Filtration,
        threshold: f64,
        z: usize,
    },
}

/// What an export thread sends back: the path written, or why not.
pub type Written = Result<std::path::PathBuf, OutputError>;

/// Writes `job` on a helper thread; the result (the path written, or the error naming it)
/// comes back through `done`, after which `notify` wakes the UI.
pub fn spawn(job: Export, done: Sender<Written>, notify: impl Fn() + Send + 'static) {
    let failed = done.clone();
    let started = std::thread::Builder::new().name("topoview-export".into()).spawn(move || {
        let _ = done.send(write(job));
        notify();
    });
    if let Err(e) = started {
        let reason = format!("cannot start the export thread: {e}");
        let _ = failed.send(Err(OutputError::Write { path: "(export)".into(), reason }));
    }
}

fn write(job: Export) -> Written {
    let (path, r) = match job {
        Export::Curve { path, json, source, field, ecc, sigma } => {
            let smoothing = sigma.map(Smoothing::voxels);
            let report = EccReport {
                file: &source,
                field: &field.grid(),
                ecc: &ecc,
                smoothing: smoothing.as_ref(),
                nan: NanPolicy::Absent,
                betti: None,
            };
            let r = if json {
                write_atomic_with(&path, |w| report.write_json(&mut *w))
            } else {
                write_atomic_with(&path, |w| report.write_csv(w))
            };
            (path, r)
        }
        Export::MaskNifti { path, field, filtration, threshold } => {
            let m = mask(&field, filtration, threshold);
            let r = topoview_core::io::nifti::write_nifti1(&path, &m);
            (path, r)
        }
        Export::MaskPng { path, field, filtration, threshold, z } => {
            let m = mask(&field, filtration, threshold);
            let r = write_atomic_with(&path, |w| {
                let mut bytes = Vec::new();
                mask_png(&m, z)
                    .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
                    .map_err(std::io::Error::other)?;
                w.write_all(&bytes)
            });
            (path, r)
        }
    };
    r.map(|()| path)
}

/// Saves a screenshot (from egui's screenshot callback) as PNG.
pub fn save_screenshot(path: &std::path::Path, img: &egui::ColorImage) -> Written {
    let [w, h] = img.size;
    let rgba: Vec<u8> = img.pixels.iter().flat_map(|c| c.to_array()).collect();
    let Some(buf) = image::RgbaImage::from_raw(w as u32, h as u32, rgba) else {
        let reason = "the screenshot has the wrong size".into();
        return Err(OutputError::Write { path: path.to_path_buf(), reason });
    };
    write_atomic_with(path, |w| {
        let mut bytes = Vec::new();
        buf.write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
            .map_err(std::io::Error::other)?;
        w.write_all(&bytes)
    })
    .map(|()| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_matches_the_filtration_and_skips_nan() {
        let f = ScalarField::new(&[4], Samples::F32(vec![1.0, 2.0, f32::NAN, 3.0])).unwrap();
        let sub = mask(&f, Filtration::Sublevel, 2.0);
        assert_eq!(sub.samples(), &Samples::U8(vec![1, 1, 0, 0]));
        let sup = mask(&f, Filtration::Superlevel, 2.0);
        assert_eq!(sup.samples(), &Samples::U8(vec![0, 1, 0, 1]));
    }

    #[test]
    fn volume_png_is_the_axial_slice_with_y_up() {
        let v: Vec<u8> = (0..2 * 3 * 2).map(|i| (i == 2 * 3 + 1) as u8).collect(); // (1, 0, 1)
        let f = ScalarField::new(&[2, 3, 2], Samples::U8(v)).unwrap();
        let img = mask_png(&f, 1);
        assert_eq!(img.get_pixel(1, 2).0, [255]);
        assert_eq!(img.get_pixel(1, 0).0, [0]);
    }
}
