//! `topoview rips FILE`: Vietoris-Rips persistence barcodes of a point cloud or distance
//! matrix, as Ripser computes them.

use anyhow::Context;
use std::path::{Path, PathBuf};
use topoview::control::Control;
use topoview::export::outputs;
use topoview::export::rips::{RipsRun, write_csv, write_json};
use topoview::io::points::{self, PointFormat};
use topoview::topo::rips::{self, RipsOptions};

#[derive(clap::Args, Debug)]
pub struct RipsArgs {
    pub file: PathBuf,
    /// point-cloud (rows of coordinates: .csv, .txt, .xyz), lower-distance, distance (a full
    /// matrix; its lower triangle is used), npy, ply; auto: from the file name.
    #[arg(long, value_parser = parse_format, default_value = "auto")]
    pub format: PointFormat,
    /// Highest homology dimension (0 to 3).
    #[arg(long, default_value_t = 1)]
    pub maxdim: usize,
    /// Leave out edges longer than this (default: none).
    #[arg(long, value_name = "R")]
    pub threshold: Option<f32>,
    /// Write the bars as CSV (header dim,birth,death; death inf for essential classes); `-`
    /// for standard output.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Write the run and its bars as JSON (death null for essential classes); `-` for
    /// standard output.
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// Worker threads for the distances (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

fn parse_format(s: &str) -> Result<PointFormat, String> {
    PointFormat::parse(s).ok_or_else(|| "one of auto, point-cloud, lower-distance, distance, npy, ply".into())
}

fn stdout(p: &Option<PathBuf>) -> bool {
    p.as_deref() == Some(Path::new("-"))
}

pub fn run(args: &RipsArgs) -> anyhow::Result<bool> {
    if let Some(n) = args.threads {
        topoview::compute::backend::set_threads(n)?;
    }
    if stdout(&args.csv) && stdout(&args.json) {
        anyhow::bail!("--csv and --json cannot both go to standard output");
    }
    let files: Vec<PathBuf> =
        [&args.csv, &args.json].into_iter().flatten().filter(|p| p.as_os_str() != "-").cloned().collect();
    outputs::check(std::slice::from_ref(&args.file), &files, &[])?;
    let name = args.file.display().to_string();
    let opts = RipsOptions { maxdim: args.maxdim, threshold: args.threshold.unwrap_or(f32::INFINITY) };
    let ctl = Control::default();
    let started = std::time::Instant::now();
    let data = points::read(&args.file, args.format, &ctl)?;
    let d = topoview::compute::rips::distances(&data, &ctl).with_context(|| name.clone())?;
    let what = topoview::compute::rips::describe(&data, &d);
    drop(data);
    let read = started.elapsed().as_secs_f64();
    let barcode = rips::barcode(&d, &opts, &ctl).with_context(|| name.clone())?.sorted();
    let seconds = started.elapsed().as_secs_f64();
    let counts: Vec<String> = barcode
        .counts()
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let essential = barcode.of_dim(k).filter(|b| b.death.is_infinite()).count();
            format!("H{k} {c} bars ({essential} essential)")
        })
        .collect();
    let threshold = args.threshold.map_or(String::new(), |t| format!(", threshold {t}"));
    say!(
        "{}: {what}, Rips up to dimension {}{threshold}: {}; {seconds:.2} s ({read:.2} s reading and distances, {:.2} s barcode)",
        outputs::one_line(&name),
        opts.maxdim,
        counts.join(", "),
        seconds - read
    );
    let run = RipsRun { file: &name, points: d.len(), threshold: opts.threshold, seconds };
    let mut staged = outputs::Staged::new();
    for (path, json) in [(&args.csv, false), (&args.json, true)] {
        let Some(path) = path else { continue };
        let fill = |w: &mut dyn std::io::Write| {
            if json { write_json(&barcode, &run, w) } else { write_csv(&barcode, w) }
        };
        if path.as_os_str() == "-" {
            fill(&mut std::io::stdout().lock())?;
        } else {
            staged.add(path, fill)?;
        }
    }
    for p in staged.commit()? {
        say!("wrote {}", p.display());
    }
    Ok(true)
}
