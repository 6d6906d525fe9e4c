//! `topoview rips FILE`: Vietoris-Rips persistence barcodes of a point cloud or distance
//! matrix, as Ripser computes them.

use anyhow::Context;
use std::path::{Path, PathBuf};
use topoview_core::control::Control;
use topoview_core::export::outputs;
use topoview_core::export::rips::{RipsRun, write_csv, write_json};
use topoview_core::io::points::{self, PointFormat};
use topoview_core::topo::rips::RipsOptions;

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
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub threshold: Option<f32>,
    /// Write the bars as CSV (header dim,birth,death; death inf for essential classes); `-`
    /// for standard output.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Write the run and its bars as JSON (death null for essential classes); `-` for
    /// standard output.
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// Worker threads for the distances, the neighbour lists and the apparent pairs (default:
    /// all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Take the points from an image or volume (FILE is then one, read as `topoview ecc`
    /// reads it), in its world coordinates: `critical` (the Morse-Smale complex's critical
    /// points), `set` (voxels of the threshold set at --level), `components` (centroids of
    /// its components).
    #[arg(long, value_enum)]
    pub points: Option<FromImage>,
    /// Critical points of this Morse index only (0: minima ... the image's dimension: maxima).
    #[arg(long, requires = "points")]
    pub index: Option<u8>,
    /// Critical points of the complex simplified up to this persistence (field units).
    #[arg(
        long,
        value_name = "P",
        requires = "points",
        conflicts_with = "relative",
        allow_negative_numbers = true
    )]
    pub persistence: Option<f64>,
    /// As --persistence, as a fraction of the value range (0 to 1).
    #[arg(long, value_name = "R", requires = "points", allow_negative_numbers = true)]
    pub relative: Option<f64>,
    /// The threshold set's level: {f <= level}, or {f >= level} with --superlevel.
    #[arg(long, requires = "points", allow_negative_numbers = true)]
    pub level: Option<f64>,
    #[arg(long, requires = "level")]
    pub superlevel: bool,
    /// At most this many voxels of the set, drawn uniformly with --seed.
    #[arg(long, default_value_t = 2000)]
    pub count: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the points taken from the image as CSV (x,y[,z] in world coordinates).
    #[arg(long, value_name = "OUT.csv", requires = "points")]
    pub save_points: Option<PathBuf>,
    /// Where the apparent pairs are found (the rest of the reduction is on the CPU).
    #[command(flatten)]
    pub backend: super::BackendArgs,
}

/// What points an image gives.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum FromImage {
    Critical,
    Set,
    Components,
}

/// The points `args` asks of the image at `args.file`, and what they are in words.
fn image_points(args: &RipsArgs, kind: FromImage) -> anyhow::Result<(points::PointData, String)> {
    use topoview_core::topo::ecc::{Construction, Filtration};
    use topoview_core::topo::rips::image_points::ImageTake;
    topoview_core::topo::msc::simplified::check_levels(args.persistence, args.relative)?;
    let field = topoview_core::io::open(&args.file, &Default::default())?;
    let filtration = if args.superlevel { Filtration::Superlevel } else { Filtration::Sublevel };
    let level = || args.level.ok_or_else(|| anyhow::anyhow!("--points {kind:?} needs --level", kind = kind));
    let take = match kind {
        FromImage::Critical => {
            let t =
                topoview_core::topo::msc::simplified::threshold_of(&field, args.persistence, args.relative)
                    .with_context(|| outputs::one_line(&args.file.display().to_string()))?;
            ImageTake::Critical { index: args.index, persistence: t }
        }
        FromImage::Set => ImageTake::Set { level: level()?, filtration, count: args.count, seed: args.seed },
        FromImage::Components => {
            ImageTake::Components { level: level()?, filtration, construction: Construction::TopCells }
        }
    };
    let name = outputs::one_line(&args.file.display().to_string());
    let (p, what) = topoview_core::topo::rips::image_points::image_points(&field, take, &Control::default())
        .with_context(|| name.clone())?;
    if p.is_empty() {
        anyhow::bail!("{name}: no {what}");
    }
    Ok((points::PointData::Points { coords: p.coords, dim: p.dim }, what))
}

fn parse_format(s: &str) -> Result<PointFormat, String> {
    PointFormat::parse(s).ok_or_else(|| "one of auto, point-cloud, lower-distance, distance, npy, ply".into())
}

fn stdout(p: &Option<PathBuf>) -> bool {
    p.as_deref() == Some(Path::new("-"))
}

pub fn run(args: &RipsArgs) -> anyhow::Result<bool> {
    if let Some(n) = args.threads {
        topoview_compute::backend::set_threads(n)?;
    }
    if stdout(&args.csv) && stdout(&args.json) {
        anyhow::bail!("--csv and --json cannot both go to standard output");
    }
    let files: Vec<PathBuf> = [&args.csv, &args.json, &args.save_points]
        .into_iter()
        .flatten()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    outputs::check(&topoview_core::io::read_set(&args.file), &files, &[])?;
    let backend = args.backend.open()?;
    let name = args.file.display().to_string();
    let opts = RipsOptions { maxdim: args.maxdim, threshold: args.threshold.unwrap_or(f32::INFINITY) };
    // What needs no data is judged before any is read, what needs the count before the
    // distances are built.
    opts.check()?;
    let ctl = Control::default();
    let started = std::time::Instant::now();
    let (data, from) = match args.points {
        Some(kind) => {
            let (data, what) = image_points(args, kind)?;
            (data, Some(what))
        }
        None => (points::read(&args.file, args.format, &ctl)?, None),
    };
    let mut staged = outputs::Staged::new();
    if let (Some(out), points::PointData::Points { coords, dim }) = (&args.save_points, &data) {
        staged.add(out, |w| {
            let names = ["x", "y", "z"];
            writeln!(w, "{}", names[..*dim].join(","))?;
            for p in coords.chunks(*dim) {
                writeln!(w, "{}", p.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>().join(","))?;
            }
            Ok(())
        })?;
    }
    opts.check_points(data.count()).with_context(|| name.clone())?;
    let d = topoview_core::io::points::distances(&data, &ctl).with_context(|| name.clone())?;
    let mut what = topoview_core::io::points::describe(&data, &d);
    if let Some(from) = from {
        what = format!("{what} ({from})");
    }
    drop(data);
    let read = started.elapsed().as_secs_f64();
    let (barcode, ran) = backend.rips(&d, &opts, &ctl).with_context(|| name.clone())?;
    let barcode = barcode.sorted();
    if let Some(why) = &ran.fallback {
        say!("note: {why}");
    }
    let seconds = started.elapsed().as_secs_f64();
    let counts: Vec<String> = barcode
        .counts()
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let essential = barcode.of_dim(k).filter(|b| b.death.is_infinite()).count();
            format!("H{k} {c} bar{} ({essential} essential)", if *c == 1 { "" } else { "s" })
        })
        .collect();
    let threshold = args.threshold.map_or(String::new(), |t| format!(", threshold {t}"));
    say!(
        "{}: {what}, Rips up to dimension {}{threshold}: {}; {seconds:.2} s ({read:.2} s reading, points and distances, {:.2} s barcode; apparent pairs and listings on {})",
        outputs::one_line(&name),
        opts.maxdim,
        counts.join(", "),
        seconds - read,
        backend.where_ran(&ran)
    );
    let run = RipsRun { file: &name, points: d.len(), threshold: opts.threshold, seconds };
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
