//! `topoview msc FILE`: the Morse-Smale complex, its persistence diagram and its exports.

use super::InputArgs;
use super::progress::Progress;
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use topoview_compute::backend::Backend;
use topoview_core::control::Control;
use topoview_core::export::msc::{summary, vtp_critical_points, vtp_separatrices, write_json};
use topoview_core::export::outputs;
use topoview_core::io::nifti::nifti1_bytes;
use topoview_core::topo::msc::simplified::{LevelError, Simplified, threshold_of};

#[derive(clap::Args, Debug)]
pub struct MscArgs {
    pub file: PathBuf,
    /// Simplify: cancel the persistence pairs of persistence up to P (in the field's units) whose
    /// critical points one V-path joins.
    #[arg(long, value_name = "P", conflicts_with = "relative", allow_negative_numbers = true)]
    pub persistence: Option<f64>,
    /// Simplify up to R times the field's value range (0 to 1).
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    pub relative: Option<f64>,
    /// Write critical points, arcs (with polylines) and the persistence diagram as JSON (`-` for
    /// standard output).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Leave the arcs' polylines out of the JSON (for batch use: ends and multiplicities stay).
    #[arg(long, requires = "json")]
    pub no_geometry: bool,
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
    /// Refuse a field whose complex would need more memory than this (e.g. 8G), from an
    /// estimate made after the gradient. Default: 90% of the memory available when it starts
    /// (the least of the free memory, `ulimit -v` and the control group's limit).
    #[arg(long, value_name = "SIZE", value_parser = topoview_core::mem::parse_size)]
    pub max_memory: Option<usize>,
    /// Where the discrete gradient, the manifold labels and the saddle-saddle arcs run; the others
    /// run on all CPU cores. auto: CUDA when a device is usable, else the CPU; cuda: fail if no
    /// device; cpu. The result is the same on either.
    #[arg(long, value_enum, default_value_t = super::BackendChoice::Auto)]
    pub backend: super::BackendChoice,
    #[command(flatten)]
    pub smoothing: super::SmoothArgs,
    #[command(flatten)]
    pub input: InputArgs,
}

/// `OUT.nii.gz` -> `OUT_mountains.nii.gz`.
/// The two files of `--vtk PREFIX`.
fn vtk_paths(prefix: &Path) -> (PathBuf, PathBuf) {
    let p = prefix.display();
    (PathBuf::from(format!("{p}_critical_points.vtp")), PathBuf::from(format!("{p}_separatrices.vtp")))
}

/// Every file the options name (the label files a 2D or 3D field may get).
fn output_paths(args: &MscArgs) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = args.json.iter().filter(|p| p.as_os_str() != "-").cloned().collect();
    if let Some(prefix) = &args.vtk {
        let (a, b) = vtk_paths(prefix);
        out.extend([a, b]);
    }
    if let Some(l) = &args.labels {
        out.extend([l.clone(), with_suffix(l, "_mountains"), with_suffix(l, "_cells")]);
    }
    out
}

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
    // The terminal's one-line messages escape a newline in the name; outputs keep the name.
    let shown = outputs::one_line(&name);
    // What the summary calls the field (the JSON's `file` stays the file's name).
    let mut what = shown.clone();
    // Every output is judged before the file is read: none may be an input or named twice.
    outputs::check(&topoview_core::io::read_set(&args.file), &output_paths(args), &[])?;
    // The backend (a CUDA context, and the Morse-Smale kernels loaded) starts while the file
    // is read; a file that cannot be read is still the first error, said once the backend has
    // started (a missing file at once).
    std::fs::metadata(&args.file)
        .map_err(|e| anyhow::anyhow!("{shown}: {}", topoview_core::io::io_message(&e)))?;
    let (backend, field) = std::thread::scope(|s| {
        let start = || {
            let b = Backend::new(args.backend.into(), None);
            if let Ok(b) = &b {
                b.preload_msc();
            }
            b
        };
        let backend = std::thread::Builder::new().name("backend".into()).spawn_scoped(s, start);
        let field = topoview_core::io::open(&args.file, &opts);
        let backend = match backend {
            Ok(handle) => handle.join().map_err(|_| anyhow::anyhow!("starting the backend panicked")),
            Err(_) => Ok(start()),
        };
        (backend, field)
    });
    let mut field = field?;
    let backend = backend?;
    for n in &field.notes_with_series() {
        say!("note: {shown}: {n}");
    }
    let progress = Progress::new();
    let smoothing = args.smoothing.smoothing();
    if let Some(s) = &smoothing {
        // The complex needs a value at every vertex, and smoothing spreads NaN: judge the file's
        // own samples first.
        topoview_core::topo::msc::check_field(&field).with_context(|| name.clone())?;
        let bar = progress.bar((field.len() * field.ndim()) as u64, "smoothing");
        let tick = |n: u64| progress.inc(&bar, n);
        field =
            topoview_core::topo::smooth::smooth(&field, s, &Control { progress: Some(&tick), cancel: None })
                .with_context(|| format!("{shown}: smoothing"))?;
        bar.finish_and_clear();
        let units = if args.smoothing.sigma_units == "physical" { "" } else { " voxels" };
        what = format!("{shown} smoothed with sigma {}{units}", s.sigma);
    }
    // Options are judged before the analysis, which can take minutes.
    let threshold = match threshold_of(&field, args.persistence, args.relative) {
        Err(e @ LevelError::Range(..)) => Err(anyhow::anyhow!("{shown}: {e} (--persistence)")),
        Err(e @ LevelError::Relative(_)) => Err(anyhow::anyhow!("--relative: {e}")),
        Err(e @ LevelError::Persistence(_)) => Err(anyhow::anyhow!("--persistence: {e}")),
        Ok(t) => Ok(t),
    }?;
    let backend = backend?;
    let bar = progress.bar(6, "Morse-Smale");
    let tick = |n: u64| progress.inc(&bar, n);
    let budget = match args.max_memory {
        Some(m) => m as u64,
        None => topoview_core::mem::default_budget().unwrap_or(u64::MAX),
    };
    let (a, ran) = backend
        .msc(&field, &Control { progress: Some(&tick), cancel: None }, budget)
        .with_context(|| name.clone())?;
    bar.finish_and_clear();
    if let Some(why) = &ran.fallback {
        say!("note: {shown}: {why}");
    } else if args.backend == super::BackendChoice::Auto
        && let Some(why) = backend.why_cpu()
    {
        say!("note: {why}: the gradient, the labels and the saddle-saddle arcs ran on the CPU");
    }
    let view = Simplified::new(&field, &a, threshold);
    // The outputs appear together, or none does.
    let mut staged = outputs::Staged::new();
    let json = |w: &mut dyn std::io::Write| {
        write_json(&name, &view, smoothing.as_ref(), !args.no_geometry, &mut *w)
            .map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    };
    let json_to_stdout = args.json.as_deref() == Some(Path::new("-"));
    if let Some(out) = args.json.as_ref().filter(|_| !json_to_stdout) {
        staged.add(out, json)?;
    }
    if let Some(prefix) = &args.vtk {
        let (points, lines) = vtk_paths(prefix);
        staged.add(&points, |w| w.write_all(vtp_critical_points(&view).as_bytes()))?;
        staged.add(&lines, |w| w.write_all(vtp_separatrices(&view).as_bytes()))?;
    }
    if let Some(out) = &args.labels {
        let volumes = view.label_volumes().with_context(|| name.clone())?;
        let named = [
            (out.clone(), Some(&volumes.basins)),
            (with_suffix(out, "_mountains"), volumes.mountains.as_ref()),
            (with_suffix(out, "_cells"), volumes.cells.as_ref()),
        ];
        for (p, v) in named.iter().filter_map(|(p, v)| v.map(|v| (p, v))) {
            let gz = p.to_string_lossy().ends_with(".gz");
            staged.add(p, |w| w.write_all(&nifti1_bytes(v, gz)?))?;
        }
    }
    let written = staged.commit()?;
    // Printed once every file is in place, so a failed output leaves no JSON behind either.
    if json_to_stdout {
        let mut w = std::io::BufWriter::new(std::io::stdout().lock());
        json(&mut w)?;
        w.flush()?;
    }
    let mut lines = vec![
        summary(&what, &view),
        format!("gradient, labels and saddle-saddle arcs on {}", backend.where_ran(&ran)),
    ];
    if !written.is_empty() {
        let names: Vec<String> =
            written.iter().map(|p| outputs::one_line(&p.display().to_string())).collect();
        lines.push(format!("wrote {}", names.join(", ")));
    }
    lines.extend(topoview_core::mem::peak_rss_mib().map(|mib| format!("peak resident memory: {mib:.0} MiB")));
    for line in lines {
        // Standard output holds the JSON alone when it goes there.
        if args.json.as_deref() == Some(Path::new("-")) {
            say!("{line}");
        } else {
            out!("{line}")?;
        }
    }
    Ok(true)
}
