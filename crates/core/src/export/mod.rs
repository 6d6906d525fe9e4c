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

    /// The CSV's rows.
    fn write_rows(&self, w: &mut dyn Write) -> std::io::Result<()> {
        use std::fmt::Write as _;
        let (e, three_d) = (self.ecc, self.field.ndim() == 3);
        write_blocks(w, e.len(), |out, i| {
            push_threshold(out, e.threshold(i), e.dtype());
            // Writing into a String cannot fail.
            let _ = write!(out, ",{}", e.chi.get(i));
            if let Some(b) = self.betti {
                let _ = write!(out, ",{},{}", b.b0[i], b.b1[i]);
                if three_d {
                    let _ = write!(out, ",{}", b.b2[i]);
                }
            }
            out.push('\n');
        })
    }

    /// The JSON document of [`Self::json`], pretty-printed, its per-threshold arrays written
    /// as [`write_blocks`] writes rows: built as `serde_json` values, a curve of 134M points
    /// would take tens of GB.
    pub fn write_json(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let e = self.ecc;
        let head = serde_json::to_string_pretty(&self.header_json()).map_err(std::io::Error::other)?;
        // The header is an object: everything but its closing brace, then the arrays.
        let open = head.trim_end().strip_suffix('}').expect("a JSON object ends in a brace");
        w.write_all(open.trim_end().as_bytes())?;
        let array = |w: &mut dyn Write, name: &str, each: &(dyn Fn(&mut String, usize) + Sync)| {
            write!(w, ",\n  \"{name}\": [")?;
            write_blocks(w, e.len(), |out, i| {
                out.push_str(if i == 0 { "\n    " } else { ",\n    " });
                each(out, i);
            })?;
            w.write_all(if e.is_empty() { b"]" } else { b"\n  ]" })
        };
        array(w, "threshold", &|out, i| push_json_threshold(out, e.threshold(i), e.dtype()))?;
        array(w, "chi", &|out, i| push_int(out, e.chi.get(i)))?;
        if let Some(b) = self.betti {
            // b2 is zero below 3D, and written anyway: every reader finds the three arrays.
            array(w, "b0", &|out, i| push_int(out, b.b0[i]))?;
            array(w, "b1", &|out, i| push_int(out, b.b1[i]))?;
            array(w, "b2", &|out, i| push_int(out, b.b2[i]))?;
        }
        w.write_all(b"\n}")
    }

    /// The JSON document as `serde_json` values: written and parsed back, so a long curve costs
    /// tens of bytes a point here (tests and small curves; exports stream it with
    /// [`Self::write_json`]).
    pub fn json(&self) -> serde_json::Value {
        let mut out = Vec::new();
        self.write_json(&mut out).expect("writing to memory");
        serde_json::from_slice(&out).expect("the document just written")
    }

    /// Everything of the JSON document but the per-threshold arrays.
    fn header_json(&self) -> serde_json::Value {
        let e = self.ecc;
        let num = |t: f64| -> serde_json::Value {
            let mut s = String::new();
            push_json_threshold(&mut s, t, e.dtype());
            serde_json::from_str(&s).unwrap_or(serde_json::Value::Null)
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
        serde_json::json!({
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
            "distinct_values": e.len(),
            "zero_crossings": crossings.iter().map(cross).collect::<Vec<_>>(),
            "suggested_threshold": suggested_threshold(&crossings).map(num),
        })
    }
}

/// A threshold as a JSON value: [`format_threshold`]'s digits (a JSON number), or the strings
/// "Infinity" and "-Infinity", which JSON has no number for.
fn push_json_threshold(out: &mut String, t: f64, dtype: Dtype) {
    if t.is_finite() {
        push_threshold(out, t, dtype);
    } else {
        out.push_str(if t > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    }
}

fn push_int(out: &mut String, v: i64) {
    use std::fmt::Write as _;
    // Writing into a String cannot fail.
    let _ = write!(out, "{v}");
}

/// Writes `n` items, each appended to a text by `item(text, index)`: formatted on all cores a
/// block at a time and written in order. A float field's curve can have a point per voxel
/// (134M for 512^3 all distinct: 29 s to format on one core of the H100 machine).
fn write_blocks(
    w: &mut dyn Write,
    n: usize,
    item: impl Fn(&mut String, usize) + Sync,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 14;
    // Blocks formatted between writes: a few MiB of text per thread.
    let batch = BLOCK * 4 * rayon::current_num_threads();
    for first in (0..n).step_by(batch) {
        let last = (first + batch).min(n);
        let starts: Vec<usize> = (first..last).step_by(BLOCK).collect();
        let texts: Vec<String> = starts
            .into_par_iter()
            .map(|s| {
                let mut out = String::with_capacity(BLOCK * 24);
                for i in s..(s + BLOCK).min(last) {
                    item(&mut out, i);
                }
                out
            })
            .collect();
        for t in texts {
            w.write_all(t.as_bytes())?;
        }
    }
    Ok(())
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
        // More rows than one batch of blocks, whatever the number of threads.
        let n = 2 * (1 << 14) * 4 * rayon::current_num_threads() + 7;
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

    /// The streamed JSON document parses, its arrays whole and in order, infinities as strings.
    #[test]
    fn json_streams_its_arrays() {
        let n = 300_003;
        let mut t: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        t[n - 1] = f64::INFINITY;
        let chi: Vec<i64> = (0..n).map(|i| i as i64 % 5 - 2).collect();
        let ecc = Ecc {
            construction: Construction::TopCells,
            filtration: Filtration::Sublevel,
            thresholds: Samples::F64(t.clone()),
            chi: Chi::I64(chi.clone()),
        };
        let field = Grid { shape: vec![n], dtype: Dtype::F64, spacing: [1.0; 3] };
        let betti = Betti { b0: chi.clone(), b1: vec![0; n], b2: vec![0; n] };
        for betti in [None, Some(&betti)] {
            let r = EccReport {
                file: "f",
                field: &field,
                ecc: &ecc,
                smoothing: None,
                nan: NanPolicy::Reject,
                betti,
            };
            let doc = r.json();
            assert_eq!(doc["threshold"][1], serde_json::json!(0.5));
            assert_eq!(doc["threshold"][n - 1], serde_json::json!("Infinity"));
            assert_eq!(doc["threshold"].as_array().unwrap().len(), n);
            assert_eq!(doc["chi"], serde_json::json!(chi));
            assert_eq!(doc["distinct_values"], serde_json::json!(n));
            assert_eq!(doc.get("b0").is_some(), betti.is_some());
        }
        let empty = Ecc { thresholds: Samples::F64(vec![]), chi: Chi::I64(vec![]), ..ecc };
        let r = EccReport {
            file: "f",
            field: &field,
            ecc: &empty,
            smoothing: None,
            nan: NanPolicy::Reject,
            betti: None,
        };
        assert_eq!(r.json()["chi"], serde_json::json!([]));
    }
}
