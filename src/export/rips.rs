//! Vietoris-Rips barcodes as CSV (exactly `dim,birth,death`, one row per bar, `inf` for an
//! essential class's death) and JSON (the run's parameters, counts and bars per dimension,
//! `null` for an essential class's death, JSON having no infinity). Values are written as the
//! shortest text that reads back to the same `f32`.

use crate::topo::rips::Barcode;
use std::io::Write;

pub fn write_csv(b: &Barcode, w: &mut dyn Write) -> std::io::Result<()> {
    writeln!(w, "dim,birth,death")?;
    for bar in &b.bars {
        writeln!(w, "{},{:?},{:?}", bar.dim, bar.birth, bar.death)?;
    }
    Ok(())
}

/// What a JSON export says besides the bars.
pub struct RipsRun<'a> {
    pub file: &'a str,
    pub points: usize,
    pub threshold: f32,
    pub seconds: f64,
}

pub fn write_json(b: &Barcode, run: &RipsRun, w: &mut dyn Write) -> std::io::Result<()> {
    let num =
        |x: f32| if x.is_finite() { serde_json::Value::from(x as f64) } else { serde_json::Value::Null };
    let dims: Vec<serde_json::Value> = (0..=b.maxdim)
        .map(|d| {
            let bars: Vec<serde_json::Value> =
                b.of_dim(d).map(|bar| serde_json::json!([num(bar.birth), num(bar.death)])).collect();
            serde_json::json!({ "dim": d, "bars": bars })
        })
        .collect();
    let doc = serde_json::json!({
        "topoview": env!("CARGO_PKG_VERSION"),
        "file": run.file,
        "points": run.points,
        "maxdim": b.maxdim,
        "threshold": num(run.threshold),
        "counts": b.counts(),
        "seconds": run.seconds,
        "dimensions": dims,
    });
    serde_json::to_writer_pretty(&mut *w, &doc)?;
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topo::rips::Bar;

    #[test]
    fn csv_rows_read_back_to_the_same_bars() {
        let b = Barcode {
            maxdim: 1,
            bars: vec![
                Bar { dim: 0, birth: 0.0, death: 0.1 + 0.2 },
                Bar { dim: 1, birth: 1.3, death: f32::INFINITY },
            ],
        };
        let mut out = Vec::new();
        write_csv(&b, &mut out).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8(out).unwrap_or_default();
        assert_eq!(text.lines().next(), Some("dim,birth,death"));
        let back: Vec<Bar> = text
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                Bar {
                    dim: f[0].parse().unwrap_or(9),
                    birth: f[1].parse().unwrap_or(-1.0),
                    death: f[2].parse().unwrap_or(-1.0),
                }
            })
            .collect();
        assert_eq!(back, b.bars);
        assert!(text.ends_with(",inf\n"));
    }
}
