//! `topoview ecc FILE...`: curves, zero-crossings and exports, one file after another.

use super::BackendChoice;
use super::InputArgs;
use super::progress::Progress;
use anyhow::Context;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use topoview_compute::backend::{Backend, Ran as BackendRan};
use topoview_compute::opening::Opening;
use topoview_core::control::Control;
use topoview_core::export::{EccReport, format_threshold, outputs};
use topoview_core::field::{Grid, dims_string};
use topoview_core::io::open;
use topoview_core::topo::betti;
use topoview_core::topo::ecc::crossings::{suggested_threshold, zero_crossings};
use topoview_core::topo::ecc::{self, Construction, EccOptions, Filtration, NanPolicy};
use topoview_core::topo::smooth::{SigmaUnits, Smoothing};

#[derive(clap::Args, Debug)]
pub struct EccArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// top-cells: voxels are squares/cubes, lower cells take the minimum (8/26-connected);
    /// vertices: voxels are vertices, higher cells take the maximum (4/6-connected).
    #[arg(long, default_value = "top-cells", value_parser = ["top-cells", "vertices"])]
    pub construction: String,
    /// Superlevel sets {f >= t} (the sublevel ECC of -f), thresholds decreasing.
    #[arg(long)]
    pub superlevel: bool,
    #[command(flatten)]
    pub smoothing: super::SmoothArgs,
    /// NaN samples: reject the file (default), or treat NaN voxels as absent.
    #[arg(long, default_value = "reject", value_parser = ["reject", "absent"])]
    pub nan: String,
    /// Betti curves too: b0, b1 (and b2 in 3D) at every threshold, added to the CSV columns,
    /// the JSON and the summary (on the GPU where the backend has one, else on all CPU cores;
    /// b1 = b0 + b2 - chi).
    #[arg(long, conflicts_with = "scale_space")]
    pub betti: bool,
    /// The ECC scale-space instead of one curve: chi at a grid of thresholds for sigma = 0,
    /// STEP, 2 STEP, ... SIGMA_MAX (voxels; STEP 0.25 when left out); the CSV has rows
    /// `sigma,threshold,chi`.
    #[arg(long, value_name = "SIGMA_MAX[:STEP]", conflicts_with = "smooth", allow_negative_numbers = true)]
    pub scale_space: Option<String>,
    /// With --scale-space: how many thresholds, evenly spaced over the field's range.
    #[arg(long, value_name = "N", default_value_t = 256, requires = "scale_space")]
    pub scale_space_thresholds: usize,
    /// Write the curve as CSV (`-` for standard output; a folder when several files are given).
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
    /// Write the curve and its zero-crossings as JSON (`-` for standard output; a folder when
    /// several files are given).
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub backend: super::BackendArgs,
}

/// A file's name without its extensions (`a.nii.gz` -> `a`).
fn stem(p: &Path) -> String {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.rsplit_once('.').map_or(name, |(s, _)| s).to_string()
}

/// Where the export of `file` goes: `out` itself for one input, `out/<stem>.ecc.<ext>` for many.
/// Whether an output option is `-`, standard output.
fn is_stdout(out: &Option<PathBuf>) -> bool {
    out.as_deref() == Some(Path::new("-"))
}

fn target(out: &Path, file: &Path, batch: bool, ext: &str) -> PathBuf {
    if batch { out.join(format!("{}.ecc.{ext}", stem(file))) } else { out.to_path_buf() }
}

pub fn run(args: &EccArgs) -> anyhow::Result<bool> {
    args.input.init_threads()?;
    let opts = args.input.open_options()?;
    let batch = args.files.len() > 1;
    if batch {
        anyhow::ensure!(
            args.csv.as_deref() != Some(Path::new("-")),
            "--csv - writes one curve; give a folder for several files"
        );
        let mut seen = HashSet::new();
        for f in &args.files {
            anyhow::ensure!(
                seen.insert(stem(f)),
                "two inputs are named {}: their exports would collide; export them in separate runs",
                stem(f)
            );
        }
        anyhow::ensure!(
            args.json.as_deref() != Some(Path::new("-")),
            "--json - writes one curve; give a folder for several files"
        );
    }
    anyhow::ensure!(
        !(is_stdout(&args.csv) && is_stdout(&args.json)),
        "--csv - and --json - would both print to standard output; send one of them to a file"
    );
    // Every output is judged before any file is read: none may be an input or named twice.
    let inputs: Vec<PathBuf> = args.files.iter().flat_map(|f| topoview_core::io::read_set(f)).collect();
    let outputs: Vec<PathBuf> = args
        .files
        .iter()
        .flat_map(|f| {
            [(&args.csv, "csv"), (&args.json, "json")]
                .into_iter()
                .filter(|(o, _)| !is_stdout(o))
                .filter_map(move |(o, ext)| o.as_ref().map(|o| target(o, f, batch, ext)))
        })
        .collect();
    // A batch writes into folders, made only once every output has passed.
    let folders: Vec<PathBuf> =
        if batch { [&args.csv, &args.json].into_iter().flatten().cloned().collect() } else { Vec::new() };
    outputs::check(&inputs, &outputs, &folders)?;
    // The folders this run makes, deepest first: those it leaves empty are removed at the end.
    let mut made: Vec<PathBuf> = Vec::new();
    for out in &folders {
        made.extend(
            out.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).map(Path::to_path_buf),
        );
        std::fs::create_dir_all(out)
            .with_context(|| format!("cannot create output folder {}", out.display()))?;
    }
    let ecc_opts = EccOptions {
        construction: args.construction.parse::<Construction>().map_err(anyhow::Error::msg)?,
        filtration: if args.superlevel { Filtration::Superlevel } else { Filtration::Sublevel },
        nan: args.nan.parse::<NanPolicy>().map_err(anyhow::Error::msg)?,
        ..EccOptions::default()
    };
    let smoothing = args.smoothing.smoothing();
    let sigmas = args.scale_space.as_deref().map(super::scale_space::parse).transpose()?;
    let backend = args.backend.opening()?;
    let progress = Progress::new();
    let files_bar = batch.then(|| progress.bar(args.files.len() as u64, "files"));
    let mut failures = 0;
    for file in &args.files {
        let setup = Setup {
            open: &opts,
            ecc: &ecc_opts,
            smoothing: smoothing.as_ref(),
            sigmas: sigmas.as_deref(),
            backend: &backend,
        };
        if let Err(e) = one(file, &setup, args, batch, &progress) {
            progress.println(&super::error_line(&e));
            failures += 1;
        }
        if let Some(b) = &files_bar {
            progress.inc(b, 1);
        }
    }
    if batch && failures > 0 {
        progress.println(&format!("topoview: {failures} of {} files failed", args.files.len()));
        // Only empty folders go (remove_dir refuses others): a run that wrote nothing into a
        // folder it made leaves no folder behind.
        for folder in &made {
            let _ = std::fs::remove_dir(folder);
        }
    }
    // The process ends next, and the driver reclaims a CUDA context at exit anyway: tearing it
    // down first (freeing pinned and device memory, destroying the context) only delays the exit.
    std::mem::forget(backend);
    Ok(failures == 0)
}

/// How every file of a run is read and computed.
struct Setup<'a> {
    open: &'a topoview_core::io::OpenOptions,
    ecc: &'a EccOptions,
    smoothing: Option<&'a Smoothing>,
    /// The scales of a scale-space run.
    sigmas: Option<&'a [f64]>,
    /// Opened when first asked for, on a thread of its own (see [`Opening`]).
    backend: &'a Opening,
}

impl Setup<'_> {
    /// The backend, once it has opened.
    fn backend(&self) -> anyhow::Result<&Backend> {
        self.backend.wait().as_ref().map_err(|e| anyhow::anyhow!("{e}"))
    }
}

fn one(file: &Path, setup: &Setup, args: &EccArgs, batch: bool, progress: &Progress) -> anyhow::Result<()> {
    let Setup { open: opts, ecc: ecc_opts, smoothing, sigmas, .. } = *setup;
    let name = file.display().to_string();
    // The terminal's one-line messages escape a newline in the name; outputs keep the name.
    let shown = outputs::one_line(&name);
    if let Some(block) = streams(file, setup, args)? {
        return streamed(file, &block, setup, args, batch, progress);
    }
    let backend = setup.backend()?;
    let mut field = open(file, opts)?;
    let mut smoothed_on = None;
    for n in &field.notes_with_series() {
        progress.println(&format!("note: {shown}: {n}"));
    }
    if let Some(sigmas) = sigmas {
        return scale_space(file, &field, sigmas, setup, args, batch, progress);
    }
    if let Some(s) = smoothing {
        // Smoothing spreads NaN to the neighbourhood: judge the file's own samples.
        if ecc_opts.nan == NanPolicy::Reject {
            let (nan, inf) = ecc::count_non_finite(&field);
            if nan + inf > 0 {
                return Err(ecc::EccError::NonFinite { nan, inf }).with_context(|| name.clone());
            }
        }
        let total = (field.len() * field.ndim()) as u64;
        let (smoothed, ran) = step(progress, &shown, "smoothing", Some("smoothing"), total, |ctl| {
            backend.smooth(&field, s, ctl).with_context(|| format!("{shown}: smoothing"))
        })?;
        field = smoothed;
        smoothed_on = Some(ran);
    }
    let (curve, ran) = step(progress, &shown, "ECC", None, field.len() as u64, |ctl| {
        backend.ecc(&field, ecc_opts, ctl).with_context(|| name.clone())
    })?;
    args.backend.note_cpu(backend, progress);
    let betti = if args.betti {
        let b = step(progress, &shown, "Betti", Some("Betti curves"), betti::work(&field), |ctl| {
            backend.betti(&field, &curve, ctl).with_context(|| format!("{shown}: Betti curves"))
        })?;
        Some(b)
    } else {
        None
    };

    let grid = field.grid();
    let ran = Ran {
        ecc: &ran,
        smoothing: smoothed_on.as_ref(),
        betti: betti.as_ref().map(|b| &b.1),
        streamed: false,
    };
    let curves = Curves { ecc: &curve, betti: betti.as_ref().map(|b| &b.0) };
    report(file, &grid, curves, ran, setup, args, batch)
}

/// Whether `file` is read a slab at a time: when its format stores the samples as one
/// uncompressed block and only its curve is asked for (smoothing, Betti curves and the
/// scale-space need the whole field). Wide types on the GPU are read whole, for the GPU's
/// sort, unless they would take more than half the free memory.
fn streams(file: &Path, setup: &Setup, args: &EccArgs) -> anyhow::Result<Option<topoview_core::io::Block>> {
    if setup.smoothing.is_some() || setup.sigmas.is_some() || args.betti {
        return Ok(None);
    }
    let Some(block) = topoview_core::io::block(file, setup.open)? else { return Ok(None) };
    let bytes = block.dims().iter().product::<usize>() as u64 * block.dtype().size() as u64;
    let fits = topoview_core::mem::available_bytes().is_some_and(|free| bytes < free / 2);
    Ok((block.dtype().size() <= 2 || !fits || !setup.backend()?.has_gpu()).then_some(block))
}

/// `one` for a file read a slab at a time: its curve, exports and summary.
fn streamed(
    file: &Path,
    block: &topoview_core::io::Block,
    setup: &Setup,
    args: &EccArgs,
    batch: bool,
    progress: &Progress,
) -> anyhow::Result<()> {
    let name = file.display().to_string();
    // The terminal's one-line messages escape a newline in the name; outputs keep the name.
    let shown = outputs::one_line(&name);
    for n in &block.notes {
        progress.println(&format!("note: {shown}: {n}"));
    }
    let grid = block.grid();
    let voxels = grid.shape.iter().product::<usize>() as u64;
    let (curve, ran) = step(progress, &shown, "ECC", None, voxels, |ctl| {
        // Under auto the CPU starts while the GPU opens; a backend asked for runs alone.
        let computed = match args.backend.backend {
            BackendChoice::Auto => setup.backend.ecc_block(block, setup.ecc, ctl),
            _ => setup.backend()?.ecc_block(block, setup.ecc, ctl),
        };
        match computed {
            // A read error names the file it was reading (the data file a header names, say).
            Err(e @ ecc::EccError::Read(_)) => Err(e.into()),
            r => r.with_context(|| name.clone()),
        }
    })?;
    // Said once the backend has opened (a later file, if this one did not wait for it).
    if let Some(Ok(b)) = setup.backend.ready() {
        args.backend.note_cpu(b, progress);
    }
    let ran = Ran { ecc: &ran, smoothing: None, betti: None, streamed: true };
    report(file, &grid, Curves { ecc: &curve, betti: None }, ran, setup, args, batch)
}

/// One step of a file's work under a progress bar of `total` units labelled `label`, then the
/// note of a GPU fallback, if any (naming the step `what`; the ECC's note names none).
fn step<T>(
    progress: &Progress,
    name: &str,
    label: &str,
    what: Option<&str>,
    total: u64,
    run: impl FnOnce(&Control) -> anyhow::Result<(T, BackendRan)>,
) -> anyhow::Result<(T, BackendRan)> {
    let bar = progress.bar(total, label);
    let tick = |n: u64| progress.inc(&bar, n);
    let (out, ran) = run(&Control { progress: Some(&tick), cancel: None })?;
    if let Some(why) = &ran.fallback {
        let what = what.map_or(String::new(), |w| format!("{w}: "));
        progress.println(&format!("note: {name}: {what}{why}"));
    }
    bar.finish_and_clear();
    Ok((out, ran))
}

/// What was computed for a file.
struct Curves<'a> {
    ecc: &'a ecc::Ecc,
    betti: Option<&'a betti::Betti>,
}

/// Where each part of a file's computation ran.
struct Ran<'a> {
    ecc: &'a BackendRan,
    smoothing: Option<&'a BackendRan>,
    betti: Option<&'a BackendRan>,
    /// The file was read a slab at a time, never whole.
    streamed: bool,
}

/// Writes a file's exports and prints its summary.
fn report(
    file: &Path,
    grid: &Grid,
    curves: Curves,
    ran: Ran,
    setup: &Setup,
    args: &EccArgs,
    batch: bool,
) -> anyhow::Result<()> {
    let (name, backend, smoothing) = (file.display().to_string(), setup.backend, setup.smoothing);
    let shown = outputs::one_line(&name);
    let report = EccReport {
        file: &name,
        field: grid,
        ecc: curves.ecc,
        smoothing,
        nan: setup.ecc.nan,
        betti: curves.betti,
    };
    let write_json = |w: &mut dyn std::io::Write| {
        report.write_json(&mut *w)?;
        w.write_all(b"\n")
    };
    let to_stdout = write_outputs(file, args, batch, &|w| report.write_csv(w), &write_json)?;
    // Smoothing may run where the ECC does not (a kernel folded on the CPU, say): name both.
    let on = match ran.smoothing {
        Some(s) if s.on_gpu != ran.ecc.on_gpu => {
            format!("smoothed on {}, ECC computed on {}", backend.where_ran(s), backend.where_ran(ran.ecc))
        }
        _ => format!("computed on {}", backend.where_ran(ran.ecc)),
    } + if ran.streamed { ", read from the file a slab at a time" } else { "" };
    let mut summary = format!("{}; {on}", summary(&shown, grid, curves.ecc, smoothing));
    if let (Some(b), Some(b_ran)) = (curves.betti, ran.betti) {
        let elsewhere = (b_ran.on_gpu != ran.ecc.on_gpu).then(|| backend.where_ran(b_ran));
        summary += &betti_summary(grid, curves.ecc, b, elsewhere.as_deref());
    }
    print_summary(&summary, to_stdout)
}

/// Writes an input's exports: the file outputs together (or none), then the one sent to
/// standard output. Returns whether one was, so the summary goes to standard error instead.
fn write_outputs(
    file: &Path,
    args: &EccArgs,
    batch: bool,
    csv: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
    json: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<bool> {
    let mut staged = outputs::Staged::new();
    if let Some(out) = args.csv.as_ref().filter(|_| !is_stdout(&args.csv)) {
        staged.add(&target(out, file, batch, "csv"), csv)?;
    }
    if let Some(out) = args.json.as_ref().filter(|_| !is_stdout(&args.json)) {
        staged.add(&target(out, file, batch, "json"), json)?;
    }
    staged.commit()?;
    let to_stdout = is_stdout(&args.csv) || is_stdout(&args.json);
    if to_stdout {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        if is_stdout(&args.csv) {
            csv(&mut out)?;
        } else {
            json(&mut out)?;
        }
        std::io::Write::flush(&mut out)?;
    }
    Ok(to_stdout)
}

/// The summary line: on standard output, or standard error when an export took standard output.
fn print_summary(summary: &str, to_stdout: bool) -> anyhow::Result<()> {
    if to_stdout {
        say!("{summary}")
    } else {
        out!("{summary}")?
    }
    Ok(())
}

/// `one` for --scale-space: the scale-space of `field`, its exports and summary.
fn scale_space(
    file: &Path,
    field: &topoview_core::field::ScalarField,
    sigmas: &[f64],
    setup: &Setup,
    args: &EccArgs,
    batch: bool,
    progress: &Progress,
) -> anyhow::Result<()> {
    use super::scale_space as ss;
    let name = file.display().to_string();
    // The terminal's one-line messages escape a newline in the name; outputs keep the name.
    let shown = outputs::one_line(&name);
    let request = ss::Request {
        name: &shown,
        sigmas,
        thresholds: args.scale_space_thresholds,
        opts: setup.ecc,
        backend: setup.backend()?,
    };
    let (s, summary) = ss::run(field, &request, progress)?;
    args.backend.note_cpu(request.backend, progress);
    let csv = |w: &mut dyn std::io::Write| ss::write_csv(w, &name, field, setup.ecc, &s);
    let json = |w: &mut dyn std::io::Write| {
        serde_json::to_writer_pretty(&mut *w, &ss::json(&name, field, setup.ecc, &s))
            .map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    };
    let to_stdout = write_outputs(file, args, batch, &csv, &json)?;
    print_summary(&summary, to_stdout)
}

/// Where each Betti number peaks: `; Betti numbers: max b0 12 at 40, max b1 ...`, with where
/// they were computed (`on`) when that is not where the ECC was.
fn betti_summary(field: &Grid, c: &ecc::Ecc, b: &betti::Betti, on: Option<&str>) -> String {
    let mut s = String::new();
    let curves: &[(&str, &Vec<i64>)] = if field.ndim() == 3 {
        &[("b0", &b.b0), ("b1", &b.b1), ("b2", &b.b2)]
    } else {
        &[("b0", &b.b0), ("b1", &b.b1)]
    };
    for (i, (name, v)) in curves.iter().enumerate() {
        // The first threshold where the maximum is reached.
        if let Some((at, max)) = v.iter().enumerate().rev().max_by_key(|&(_, x)| *x) {
            s += &format!(
                "{}max {name} {max} at {}",
                match (i, on) {
                    (0, Some(on)) => format!("; Betti numbers (on {on}): "),
                    (0, None) => "; Betti numbers: ".into(),
                    _ => ", ".into(),
                },
                format_threshold(c.threshold(at), c.dtype())
            );
        }
    }
    s
}

fn summary(name: &str, field: &Grid, c: &ecc::Ecc, smoothing: Option<&Smoothing>) -> String {
    let fmt = |t: f64| format_threshold(t, c.dtype());
    let crossings = zero_crossings(c);
    let smoothed = smoothing.map_or(String::new(), |s| {
        let units = match s.units {
            SigmaUnits::Voxels => "voxels",
            SigmaUnits::Physical => "in spacing units",
        };
        format!(" smoothed with σ = {} {units}", s.sigma)
    });
    let mut s = format!(
        "{name}: {} {}{smoothed}, {} {} ECC over {} distinct values",
        dims_string(&field.shape),
        field.dtype,
        c.construction,
        c.filtration.name(),
        c.len()
    );
    if let Some((lo, hi)) = c.chi.min_max() {
        s += &format!("; chi from {} to {} (min {lo}, max {hi})", c.chi.get(0), c.chi.get(c.chi.len() - 1));
    }
    s += &format!("; {} zero-crossing{}", crossings.len(), if crossings.len() == 1 { "" } else { "s" });
    match (
        suggested_threshold(&crossings),
        crossings.iter().find(|x| Some(x.last_before) == suggested_threshold(&crossings)),
    ) {
        (Some(t), Some(x)) => {
            s += &format!(
                "; suggested threshold {} (chi {} then {} at {})",
                fmt(t),
                x.chi_before,
                x.chi_after,
                fmt(x.first_after)
            )
        }
        _ => s += "; no positive-to-negative crossing",
    }
    s
}
