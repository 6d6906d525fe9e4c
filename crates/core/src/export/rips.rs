//! Vietoris-Rips barcodes as CSV (exactly `dim,birth,death`, one row per bar, `inf` for an
//! essential class's death) and JSON (the run's parameters, counts and bars per dimension,
//! `null` for an essential class's death, JSON having no infinity, and the vertices of the
//! simplices that create and kill each bar). Values are written as the
//! shortest text that reads back to the same `f32`.

use crate::topo::rips::Barcode;
use crate::topo::rips::index::Binomials;
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
    // The simplices pairing each bar, by their vertices (as giotto-ph's generators).
    let table = Binomials::new(b.points, b.maxdim + 2);
    let vertices = |simplex: u64, dim: usize| {
        let mut out = Vec::new();
        if let Some(t) = &table {
            t.vertices(simplex, dim, b.points, &mut out);
        }
        out
    };
    let dims: Vec<serde_json::Value> = (0..=b.maxdim)
        .map(|d| {
            let bars: Vec<serde_json::Value> =
                b.of_dim(d).map(|bar| serde_json::json!([num(bar.birth), num(bar.death)])).collect();
            let simplices: Vec<serde_json::Value> = b
                .of_dim(d)
                .map(|bar| {
                    serde_json::json!([vertices(bar.creator, d), bar.killer.map(|k| vertices(k, d + 1))])
                })
                .collect();
            serde_json::json!({ "dim": d, "bars": bars, "simplices": simplices })
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
            points: 3,
            bars: vec![Bar::new(0, 0.0, 0.1 + 0.2), Bar::new(1, 1.3, f32::INFINITY)],
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
                Bar::new(
                    f[0].parse().unwrap_or(9),
                    f[1].parse().unwrap_or(-1.0),
                    f[2].parse().unwrap_or(-1.0),
                )
            })
            .collect();
        assert_eq!(back, b.bars);
        assert!(text.ends_with(",inf\n"));
    }
}
