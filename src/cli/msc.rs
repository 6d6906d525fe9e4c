//! `topoview msc FILE`: the Morse-Smale complex, its persistence diagram and its exports.

use super::InputArgs;
use super::progress::Progress;
use anyhow::Context;
use std::path::{Path, PathBuf};
use topoview::control::Control;
use topoview::export::msc::{summary, vtp_critical_points, vtp_separatrices, write_json};
use topoview::export::{write_atomic, write_atomic_with};
use topoview::io::nifti::write_nifti1;
use topoview::topo::msc::analyse;
use topoview::topo::msc::simplified::Simplified;

#[derive(clap::Args, Debug)]
pub struct MscArgs {
    pub file: PathBuf,
    /// Simplify: cancel extremum-saddle pairs of persistence up to P (in the field's units).
    #[arg(long, value_name = "P", conflicts_with = "relative")]
    pub persistence: Option<f64>,
    /// Simplify up to R times the field's value range (0 to 1).
    #[arg(long, value_name = "R")]
    pub relative: Option<f64>,
    /// Write critical points, arcs (with polylines) and the persistence diagram as JSON.
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Write PREFIX_critical_points.vtp and PREFIX_separatrices.vtp (VTK PolyData for ParaView,
    /// arrays named as TTK names them).
    #[arg(long, value_name = "PREFIX")]
    pub vtk: Option<PathBuf>,
    /// Write the basins (ascending manifolds of minima) to OUT and the mountains (descending
    /// manifolds of maxima, on the grid of cell centres) to OUT with "_mountains" before the
    /// extension, as NIfTI (gzipped for .nii.gz); labels are critical point ids, -1 for none.
    /// For 2D fields also the Morse-Smale cells (basin x mountain) in OUT_cells.
    #[arg(long, value_name = "OUT.nii.gz")]
    pub labels: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
}

/// `OUT.nii.gz` -> `OUT_mountains.nii.gz`.
fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let s = p.to_string_lossy();
    for ext in [".nii.gz", ".nii"] {
        if let Some(stem) = s.strip_suffix(ext) {
            return PathBuf::from(format!("{stem}{suffix}{ext}"));
        }
    }
    PathBuf::from(format!("{s}{suffix}"))
}

pub fn run(args: &MscArgs) -> anyhow::Result<bool> {
    args.input.init_threads()?;
    let opts = args.input.open_options()?;
    let name = args.file.display().to_string();
    let field = topoview::io::open(&args.file, &opts)?;
    for n in &field.notes {
        eprintln!("note: {name}: {n}");
    }
    let progress = Progress::new();
    let bar = progress.bar(6, "Morse-Smale");
    let tick = |n: u64| progress.inc(&bar, n);
    let a =
        analyse(&field, &Control { progress: Some(&tick), cancel: None }).with_context(|| name.clone())?;
    bar.finish_and_clear();
    let threshold = match (args.persistence, args.relative) {
        (Some(p), _) => {
            anyhow::ensure!(p.is_finite() && p >= 0.0, "--persistence must be finite and not negative");
            Some(p)
        }
        (None, Some(r)) => {
            anyhow::ensure!((0.0..=1.0).contains(&r), "--relative must lie in 0..1");
            let (lo, hi) = topoview::field::stats::stats(&field).range.unwrap_or((0.0, 0.0));
            Some(r * (hi - lo))
        }
        (None, None) => None,
    };
    let view = Simplified::new(&field, &a, threshold);
    if let Some(out) = &args.json {
        write_atomic_with(out, |w| {
            write_json(&name, &view, &mut *w).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
        .with_context(|| format!("cannot write {}", out.display()))?;
    }
    if let Some(prefix) = &args.vtk {
        for (suffix, text) in [
            ("_critical_points.vtp", vtp_critical_points(&view)),
            ("_separatrices.vtp", vtp_separatrices(&view)),
        ] {
            let p = PathBuf::from(format!("{}{suffix}", prefix.display()));
            write_atomic(&p, text.as_bytes()).with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    if let Some(out) = &args.labels {
        let volumes = view.label_volumes().with_context(|| name.clone())?;
        let named = [
            (out.clone(), Some(&volumes.basins)),
            (with_suffix(out, "_mountains"), volumes.mountains.as_ref()),
            (with_suffix(out, "_cells"), volumes.cells.as_ref()),
        ];
        for (p, v) in named.iter().filter_map(|(p, v)| v.map(|v| (p, v))) {
            write_nifti1(p, v).with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    println!("{}", summary(&name, &view));
    if let Some(mib) = topoview::bench::peak_rss_mib() {
        println!("peak resident memory: {mib:.0} MiB");
    }
    Ok(true)
}
