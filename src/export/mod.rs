//! Writing results, always atomically (a temporary file in the target's folder, renamed over
//! the target once complete), so an interrupted export never leaves a half-written file behind:
//! ECC curves as CSV and JSON (here), Morse-Smale complexes as JSON and VTK ([`msc`]), float32
//! TIFF pages ([`tiff`]).

pub mod msc;
pub mod outputs;
pub mod rips;
pub mod tiff;

use crate::field::{Dtype, Grid, dims_string};
use crate::topo::betti::Betti;
use crate::topo::ecc::crossings::{Crossing, suggested_threshold, zero_crossings};
use crate::topo::ecc::{Ecc, NanPolicy};
use crate::topo::smooth::Smoothing;
use outputs::OutputError;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Streams an export into `path` through a temporary file and a rename (see
/// [`outputs::Staged`], which writes several files together).
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), OutputError> {
    let mut staged = outputs::Staged::new();
    staged.add(path, fill)?;
    staged.commit().map(|_| ())
}

/// Everything an export records about where a curve came from.
pub struct EccReport<'a> {
    pub file: &'a str,
    pub field: &'a Grid,
    pub ecc: &'a Ecc,
    pub smoothing: Option<&'a Smoothing>,
    pub nan: NanPolicy,
    /// Betti curves at the curve's thresholds, when asked for.
    pub betti: Option<&'a Betti>,
}

/// A threshold printed exactly and briefly: integers as integers, f32 values as the shortest
/// f32 that reads back the same.
pub fn format_threshold(t: f64, dtype: Dtype) -> String {
    let mut s = String::new();
    push_threshold(&mut s, t, dtype);
    s
}

/// [`format_threshold`] appended to `out`.
fn push_threshold(out: &mut String, t: f64, dtype: Dtype) {
    use std::fmt::Write as _;
    // Writing into a String cannot fail.
    let _ = match dtype {
        Dtype::F32 => write!(out, "{:?}", t as f32),
        Dtype::F64 => write!(out, "{t:?}"),
        _ => write!(out, "{}", t as i64),
    };
}

/// A header value (spacing, origin) at the precision it was stored with: a value that is
/// exactly an f32 (NIfTI's pixdim, say) in f32's shortest digits, so 2.2f32 reads "2.2" and not
/// "2.1999990940093994"; any other value in f64's.
pub fn format_stored(v: f64) -> String {
    if is_f32(v) { format!("{}", v as f32) } else { format!("{v}") }
}

/// Whether `v` is exactly an f32 (a header field stored in single precision).
pub fn is_f32(v: f64) -> bool {
    (v as f32) as f64 == v
}

impl EccReport<'_> {
    fn smoothing_text(&self) -> String {
        match self.smoothing {
            None => "none".into(),
            Some(s) => format!(
                "gaussian sigma={} {:?} (per axis in voxels: {:?}), truncate={}, boundary=reflect",
                s.sigma,
                s.units,
                &s.sigma_voxels_of(self.field)[..self.field.ndim()],
                s.truncate
            )
            .to_lowercase(),
        }
    }

    /// `# key: value` header lines, then `threshold,chi`, with `,b0,b1` (2D) or `,b0,b1,b2` (3D)
    /// when the report has Betti curves.
    pub fn write_csv(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let e = self.ecc;
        writeln!(w, "# topoview {} Euler characteristic curve", env!("CARGO_PKG_VERSION"))?;
        writeln!(w, "# file: {}", outputs::one_line(self.file))?;
        writeln!(w, "# field: {} {}", dims_string(&self.field.shape), self.field.dtype)?;
        writeln!(w, "# construction: {} ({})", e.construction, e.construction.description())?;
        writeln!(w, "# filtration: {}", e.filtration.name())?;
        writeln!(w, "# smoothing: {}", self.smoothing_text())?;
        writeln!(w, "# nan: {}", self.nan.name())?;
        let three_d = self.field.ndim() == 3;
        match self.betti {
            None => writeln!(w, "threshold,chi")?,
            Some(_) if three_d => writeln!(w, "threshold,chi,b0,b1,b2")?,
            Some(_) => writeln!(w, "threshold,chi,b0,b1")?,
        }
        self.write_rows(w)
    }

    /// The CSV's rows, formatted on all cores a block at a time and written in order: a float
    /// field's curve can have a row per voxel (134M for 512^3 all distinct, 29 s to format on
    /// one core of the H100 machine).
    fn write_rows(&self, w: &mut dyn Write) -> std::io::Result<()> {
        use rayon::prelude::*;
        use std::fmt::Write as _;
        const BLOCK: usize = 1 << 14;
        // Blocks formatted between writes: a few MiB of text per thread.
        let batch = BLOCK * 4 * rayon::current_num_threads();
        let (e, three_d) = (self.ecc, self.field.ndim() == 3);
        let block = |start: usize, end: usize| {
            let mut out = String::with_capacity((end - start) * 24);
            for i in start..end {
                push_threshold(&mut out, e.threshold(i), e.dtype());
                // Writing into a String cannot fail.
                let _ = write!(out, ",{}", e.chi.get(i));
                if let Some(b) = self.betti {
                    let _ = write!(out, ",{},{}", b.b0[i], b.b1[i]);
                    if three_d {
                        let _ = write!(out, ",{}", b.b2[i]);
                    }
                }
                out.push('\n');
            }
            out
        };
        for first in (0..e.len()).step_by(batch) {
            let last = (first + batch).min(e.len());
            let starts: Vec<usize> = (first..last).step_by(BLOCK).collect();
            let texts: Vec<String> =
                starts.into_par_iter().map(|s| block(s, (s + BLOCK).min(last))).collect();
            for t in texts {
                w.write_all(t.as_bytes())?;
            }
        }
        Ok(())
    }

    pub fn json(&self) -> serde_json::Value {
        let e = self.ecc;
        let num = |t: f64| -> serde_json::Value {
            if t.is_finite() {
                serde_json::from_str(&format_threshold(t, e.dtype())).unwrap_or(serde_json::Value::Null)
            } else {
                serde_json::Value::String(if t > 0.0 { "Infinity".into() } else { "-Infinity".into() })
            }
        };
        let crossings = zero_crossings(e);
        let cross = |c: &Crossing| {
            serde_json::json!({
                "direction": c.direction,
                "last_before": num(c.last_before),
                "first_after": num(c.first_after),
                "chi_before": c.chi_before,
                "chi_after": c.chi_after,
            })
        };
        let mut doc = serde_json::json!({
            "topoview_version": env!("CARGO_PKG_VERSION"),
            "file": self.file,
            "dims": self.field.shape,
            "dtype": self.field.dtype,
            "spacing": &self.field.spacing[..self.field.ndim()],
            "construction": e.construction,
            "construction_description": e.construction.description(),
            "filtration": e.filtration,
            "smoothing": self.smoothing.map(|s| serde_json::json!({
                "sigma": s.sigma,
                "units": s.units,
                "sigma_voxels": &s.sigma_voxels_of(self.field)[..self.field.ndim()],
                "truncate": s.truncate,
                "boundary": "reflect",
            })),
            "nan": self.nan,
            "distinct_values": e.thresholds.len(),
            "threshold": (0..e.len()).map(|i| num(e.threshold(i))).collect::<Vec<_>>(),
            "chi": e.chi,
            "zero_crossings": crossings.iter().map(cross).collect::<Vec<_>>(),
            "suggested_threshold": suggested_threshold(&crossings).map(num),
        });
        if let Some(b) = self.betti {
            // b2 is zero below 3D, and written anyway: every reader finds the three arrays.
            doc["b0"] = serde_json::json!(b.b0);
            doc["b1"] = serde_json::json!(b.b1);
            doc["b2"] = serde_json::json!(b.b2);
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Samples;
    use crate::topo::ecc::{Chi, Construction, Filtration};

    /// The rows formatted in parallel blocks, across several batches, are the rows written one
    /// by one.
    #[test]
    fn rows_are_written_in_order_across_blocks() {
        let n = 700_001;
        let t: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 3.0).collect();
        let chi: Vec<i32> = (0..n).map(|i| (i as i32 % 97) - 40).collect();
        let ecc = Ecc {
            construction: Construction::TopCells,
            filtration: Filtration::Sublevel,
            thresholds: Samples::F32(t.clone()),
            chi: Chi::I32(chi.clone()),
        };
        let field = Grid { shape: vec![n], dtype: Dtype::F32, spacing: [1.0; 3] };
        let report = EccReport {
            file: "f",
            field: &field,
            ecc: &ecc,
            smoothing: None,
            nan: NanPolicy::Reject,
            betti: None,
        };
        let mut out = Vec::new();
        report.write_rows(&mut out).unwrap();
        let want: String = t.iter().zip(&chi).map(|(t, c)| format!("{t:?},{c}\n")).collect();
        assert!(out == want.as_bytes());
    }
}
