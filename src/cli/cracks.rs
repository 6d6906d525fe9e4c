//! `topoview cracks FILE`: edge strength on the cracks between pixels (inter-pixel filtering),
//! written as float32 TIFFs.

use super::progress::Progress;
use super::{BackendArgs, InputArgs};
use anyhow::Context;
use std::path::{Path, PathBuf};
use topoview_core::control::Control;
use topoview_core::export::outputs;
use topoview_core::export::tiff::write_f32_pages;
use topoview_core::topo::cracks::{Bank, CrackMap, CrackOptions, Family, Image, boundaries, responses};

#[derive(clap::Args, Debug)]
pub struct CracksArgs {
    pub file: PathBuf,
    /// Scales of the Gaussian derivative bank, in pixels.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4", allow_negative_numbers = true)]
    pub scales: Vec<f64>,
    /// Orientations of the steered kernels over half a turn (even).
    #[arg(long, default_value_t = 8)]
    pub orientations: usize,
    /// Kernel radius in scales.
    #[arg(long, default_value_t = 3.0, allow_negative_numbers = true)]
    pub truncate: f64,
    /// Apply this bank (JSON, as --save-bank writes it) tap by tap instead of the Gaussian
    /// bank; its "edge" kernels give the strength. Runs on the CPU.
    #[arg(long, value_name = "BANK.json", conflicts_with_all = ["scales", "orientations", "truncate"])]
    pub bank: Option<PathBuf>,
    /// Write PREFIX.h.tif ((H-1) x W) and PREFIX.v.tif (H x (W-1)): the strength of the
    /// horizontal and vertical cracks; PREFIX.{h,v}.angle.tif and .scale.tif: where it is
    /// reached. Volumes: one page per axial slice.
    #[arg(long, value_name = "PREFIX")]
    pub out: Option<PathBuf>,
    /// Also write PREFIX.complex.tif: the (2H-1) x (2W-1) Cartesian complex, cracks at their
    /// cells, corners the largest strength meeting there, pixels 0.
    #[arg(long, requires = "out")]
    pub complex: bool,
    /// Also write every kernel's response: PREFIX.{h,v}.responses.tif, one page per slice,
    /// channel and kernel (in that nesting), and the bank as PREFIX.bank.json.
    #[arg(long, requires = "out")]
    pub responses: bool,
    /// Write the Gaussian bank of these options as JSON to OUT (to edit and load with --bank).
    #[arg(long, value_name = "OUT.json", conflicts_with = "bank")]
    pub save_bank: Option<PathBuf>,
    /// Filter colour images as their luminance (default: every colour channel, energies added).
    #[arg(long)]
    pub luminance: bool,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub backend: BackendArgs,
}

fn path(prefix: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(format!("{}{suffix}", prefix.display()))
}

/// Every file the options name.
fn output_paths(args: &CracksArgs) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = args.save_bank.iter().cloned().collect();
    if let Some(p) = &args.out {
        for f in ["h", "v"] {
            out.extend([".tif", ".angle.tif", ".scale.tif"].map(|s| path(p, &format!(".{f}{s}"))));
        }
        if args.complex {
            out.push(path(p, ".complex.tif"));
        }
        if args.responses {
            out.extend([path(p, ".h.responses.tif"), path(p, ".v.responses.tif"), path(p, ".bank.json")]);
        }
    }
    out
}

/// The images to filter: one per axial slice (a 2D file is one slice).
fn images(args: &CracksArgs, name: &str) -> anyhow::Result<(Vec<Image>, usize)> {
    let ctl = Control::default();
    if !args.luminance
        && let Some((w, h, channels)) = topoview_core::io::image2d::read_channels(&args.file, &ctl)?
    {
        return Ok((vec![Image { width: w, height: h, channels }], 1));
    }
    let field = topoview_core::io::open(&args.file, &args.input.open_options()?)?;
    for n in &field.notes_with_series() {
        say!("note: {name}: {n}");
    }
    let [w, h, d] = field.dims();
    let plane = w * h;
    let values: Vec<f32> = topoview_core::with_samples!(field.samples(), v => v.iter().map(|x| topoview_core::field::Sample::to_f32(*x)).collect());
    let slices = values.chunks(plane).map(|v| Image::grey(w, h, v.to_vec())).collect();
    Ok((slices, d))
}

pub fn run(args: &CracksArgs) -> anyhow::Result<bool> {
    args.input.init_threads()?;
    let name = args.file.display().to_string();
    let mut inputs = topoview_core::io::read_set(&args.file);
    inputs.extend(args.bank.iter().cloned());
    outputs::check(&inputs, &output_paths(args), &[])?;
    let opts = CrackOptions {
        scales: args.scales.clone(),
        orientations: args.orientations,
        truncate: args.truncate,
    };
    let bank = match &args.bank {
        Some(p) => {
            let text = topoview_core::io::read_small_text(p, MAX_BANK_BYTES)?;
            Some(Bank::from_json(&text).with_context(|| format!("{}", p.display()))?)
        }
        None => {
            opts.check()?;
            None
        }
    };
    let (slices, depth) = images(args, &name)?;
    check_sizes(args, &slices, bank.as_ref(), &opts).with_context(|| name.clone())?;
    // A loaded bank runs on the CPU: no device is opened for it.
    let backend = match &bank {
        Some(_) => topoview_compute::backend::Backend::cpu_because("a loaded bank runs tap by tap".into()),
        None => args.backend.open()?,
    };
    // A loaded bank is judged on the whole stack before any slice is filtered.
    if let Some(b) = &bank {
        for img in &slices {
            b.check_work(img).with_context(|| name.clone())?;
        }
    }
    let progress = Progress::new();
    let total = slices.iter().map(|i| (i.width * i.height * i.channels.len()) as u64).sum::<u64>();
    // Both families, each scale (the Gaussian bank) or each edge kernel (a loaded bank).
    let passes = bank.as_ref().map_or(opts.scales.len(), |b| b.kernels.iter().filter(|k| k.edge).count());
    let bar = progress.bar(total * 2 * passes as u64, "cracks");
    let tick = |n: u64| progress.inc(&bar, n);
    let ctl = Control { progress: Some(&tick), cancel: None };
    let started = std::time::Instant::now();
    let mut maps = Vec::with_capacity(slices.len());
    let mut ran = None;
    for (z, img) in slices.iter().enumerate() {
        let at = |e| {
            anyhow::anyhow!(
                "{name}{}: {e}",
                if depth > 1 { format!(" (slice z = {z})") } else { String::new() }
            )
        };
        let m = match &bank {
            Some(b) => b.cracks(img, &ctl).map_err(at)?,
            None => {
                let (m, r) = backend.cracks(img, &opts, &ctl).map_err(at)?;
                if let Some(why) = r.fallback.as_ref().filter(|_| ran.is_none()) {
                    progress.println(&format!("note: {why}"));
                }
                ran.get_or_insert(r);
                args.backend.note_cpu(&backend, &progress);
                m
            }
        };
        maps.push(m);
    }
    let seconds = started.elapsed().as_secs_f64();
    bar.finish_and_clear();

    let mut staged = outputs::Staged::new();
    if let Some(p) = &args.save_bank {
        let b = Bank::gaussian(&opts)?;
        staged.add(p, |w| w.write_all(b.to_json().as_bytes()))?;
    }
    if let Some(prefix) = &args.out {
        let (w, h) = (maps[0].width, maps[0].height);
        for f in Family::BOTH {
            let (cw, ch) = f.dims(w, h);
            let fi = f as usize;
            let l = f.letter();
            staged.add(&path(prefix, &format!(".{l}.tif")), |o| {
                write_f32_pages(o, cw, ch, maps.iter().map(|m| m.strength[fi].as_slice()))
            })?;
            staged.add(&path(prefix, &format!(".{l}.angle.tif")), |o| {
                write_f32_pages(o, cw, ch, maps.iter().map(|m| m.angle[fi].as_slice()))
            })?;
            staged.add(&path(prefix, &format!(".{l}.scale.tif")), |o| {
                write_f32_pages(o, cw, ch, maps.iter().map(|m| m.scale[fi].as_slice()))
            })?;
        }
        if args.complex {
            let images: Vec<(usize, usize, Vec<f32>)> = maps.iter().map(boundaries::complex_image).collect();
            let (cw, ch, _) = images[0];
            staged.add(&path(prefix, ".complex.tif"), |o| {
                write_f32_pages(o, cw, ch, images.iter().map(|i| i.2.as_slice()))
            })?;
        }
        if args.responses {
            let b = match &bank {
                Some(b) => b.clone(),
                None => Bank::gaussian(&opts)?,
            };
            for f in Family::BOTH {
                let (cw, ch) = f.dims(w, h);
                let mut pages: Vec<Vec<f32>> = Vec::new();
                for img in &slices {
                    if bank.is_some() {
                        for c in &img.channels {
                            pages.extend((0..b.kernels.len()).map(|k| b.apply(k, c, w, h, f)));
                        }
                    } else {
                        pages.extend(responses(img, &opts, f, &Control::default())?.into_iter().flatten());
                    }
                }
                staged.add(&path(prefix, &format!(".{}.responses.tif", f.letter())), |o| {
                    write_f32_pages(o, cw, ch, pages.iter().map(|p| p.as_slice()))
                })?;
            }
            staged.add(&path(prefix, ".bank.json"), |o| o.write_all(b.to_json().as_bytes()))?;
        }
    }
    let written = staged.commit()?;
    out!("{}", summary(&name, &slices, &maps, &opts, bank.as_ref(), depth))?;
    let place = match (&bank, &ran) {
        (Some(_), _) => {
            format!("CPU, {} threads (a loaded bank runs tap by tap)", rayon::current_num_threads())
        }
        (None, Some(r)) => backend.where_ran(r),
        (None, None) => backend.describe(),
    };
    out!("ran on {place} in {:.1} ms", seconds * 1e3)?;
    if !written.is_empty() {
        let names: Vec<String> =
            written.iter().map(|p| outputs::one_line(&p.display().to_string())).collect();
        out!("wrote {}", names.join(", "))?;
    }
    Ok(true)
}

/// Refuses, before any filtering, outputs that classic TIFF cannot hold (4 GiB a file).
/// The largest bank file read: a bank is kilobytes (the default's 48 kernels of up to 25 x 25
/// taps are about 300 KB of JSON); 64 MiB is already hours of filtering.
const MAX_BANK_BYTES: u64 = 64 << 20;

fn check_sizes(
    args: &CracksArgs,
    slices: &[Image],
    bank: Option<&Bank>,
    opts: &CrackOptions,
) -> anyhow::Result<()> {
    if args.out.is_none() {
        return Ok(());
    }
    let (w, h, c) = (slices[0].width as u64, slices[0].height as u64, slices[0].channels.len() as u64);
    let pages = slices.len() as u64;
    let kernels = bank.map_or(2 * opts.scales.len() * opts.orientations, |b| b.kernels.len()) as u64;
    let limit = u32::MAX as u64;
    let mut files = vec![("strengths", pages * w * h * 4)];
    if args.complex {
        files.push(("the complex", pages * (2 * w - 1) * (2 * h - 1) * 4));
    }
    if args.responses {
        files.push(("the responses", pages * c * kernels * w * h * 4));
    }
    for (what, bytes) in files {
        anyhow::ensure!(
            bytes < limit,
            "{what} would take {bytes} bytes in one TIFF, over classic TIFF's 4 GiB: filter fewer slices, \
             scales or orientations"
        );
    }
    Ok(())
}

fn summary(
    name: &str,
    slices: &[Image],
    maps: &[CrackMap],
    opts: &CrackOptions,
    bank: Option<&Bank>,
    depth: usize,
) -> String {
    let (w, h) = (slices[0].width, slices[0].height);
    let c = slices[0].channels.len();
    let dims =
        if depth > 1 { format!("{w} x {h} x {depth} (per axial slice)") } else { format!("{w} x {h}") };
    let what = match bank {
        Some(b) => format!(
            "bank of {} kernels ({} edge)",
            b.kernels.len(),
            b.kernels.iter().filter(|k| k.edge).count()
        ),
        None => format!(
            "Gaussian bank: scales {:?}, {} orientations ({} kernels)",
            opts.scales,
            opts.orientations,
            2 * opts.scales.len() * opts.orientations
        ),
    };
    let best = maps
        .iter()
        .enumerate()
        .filter_map(|(z, m)| m.strongest().map(|s| (z, m, s)))
        .max_by(|a, b| a.2.2.total_cmp(&b.2.2));
    let strongest = match best {
        Some((z, m, (f, i, s))) => {
            let (cw, _) = f.dims(w, h);
            let at = if depth > 1 {
                format!("{}, {}, {z}", i % cw, i / cw)
            } else {
                format!("{}, {}", i % cw, i / cw)
            };
            format!(
                "strongest crack {}({at}): {s} at {:.1} degrees, scale {}",
                f.letter(),
                (m.angle[f as usize][i] as f64).to_degrees(),
                m.scale[f as usize][i]
            )
        }
        None => "no cracks".into(),
    };
    format!(
        "{}: {dims}, {c} channel{}; {what}; {strongest}",
        outputs::one_line(name),
        if c == 1 { "" } else { "s" }
    )
}
