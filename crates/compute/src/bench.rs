//! The figures behind `topoview bench` and `cargo bench`: the ECC and smoothing in memory on
//! synthetic fields (or a file's field, in memory or streamed), the Morse-Smale analysis, the
//! Betti curves, the crack filter on the CPU and the scale-space, through the backend where it
//! has a GPU. Figures are printed, never asserted. (`bench --cuda` is `topoview_gpu::bench`.)

use std::time::Instant;
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::topo::ecc::{self, EccOptions};
use topoview_core::topo::msc::MscError;
use topoview_core::topo::smooth::{self, Smoothing};

#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Edge of the 3D test volumes (the 2D image has 16 times the edge, squared).
    pub size: usize,
    /// Timed runs per case; the best is reported.
    pub repeat: usize,
    /// Thread counts to measure (empty: 1 and all cores).
    pub threads: Vec<usize>,
}

pub use topoview_core::mem::peak_rss_mib;
pub use topoview_core::synthetic::{bench_grf, crack_image, distinct_f32, levels_f32, noise, noise_u8};

fn best_of(repeat: usize, mut f: impl FnMut()) -> f64 {
    (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Why a benchmark stopped.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("cannot write the results: {0}")]
    Write(#[from] std::io::Error),
    #[error(transparent)]
    Threads(#[from] rayon::ThreadPoolBuildError),
    #[error(transparent)]
    Msc(#[from] MscError),
    #[error(transparent)]
    Ecc(#[from] ecc::EccError),
    #[error(transparent)]
    Betti(#[from] topoview_core::topo::betti::BettiError),
    #[error(transparent)]
    ScaleSpace(#[from] crate::scale_space::ScaleSpaceError),
}

/// Times the CPU ECC and smoothing, writing one row per case and thread count to `out`.
pub fn run(args: &BenchConfig, out: &mut dyn std::io::Write) -> Result<(), BenchError> {
    let e = args.size;
    let cases: Vec<(String, ScalarField, Option<Smoothing>)> = vec![
        (format!("ECC 3D u8 noise {e}^3"), noise_u8(&[e, e, e]), None),
        (format!("ECC 3D f32 all-distinct {e}^3"), distinct_f32(&[e, e, e]), None),
        (format!("ECC 3D f32 1024 levels {e}^3"), levels_f32(&[e, e, e], 1024), None),
        (format!("ECC 2D u8 noise {}^2", 16 * e), noise_u8(&[16 * e, 16 * e]), None),
        (format!("smooth 3D f32 sigma=2 {e}^3"), distinct_f32(&[e, e, e]), Some(Smoothing::voxels(2.0))),
    ];
    time_cases(&cases, args, out)
}

/// Times the in-memory ECC (default options) and smoothing (sigma 2 voxels) of a field read
/// from a file: the figures a binding or a batch of that file adds its overhead to.
pub fn run_file(
    name: &str,
    field: ScalarField,
    args: &BenchConfig,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    // NaN or infinities: refused before any row, as the ECC would refuse them.
    ecc::ecc(&field, &EccOptions::default(), &Control::default())?;
    let cases = vec![
        (format!("ECC {name}"), field.clone(), None),
        (format!("smooth sigma=2 {name}"), field, Some(Smoothing::voxels(2.0))),
    ];
    time_cases(&cases, args, out)
}

/// Times reading `block` front to back in the streaming ECC's slabs (the I/O alone, one
/// thread), then the streamed ECC of it at each thread count: what `topoview ecc` does with a
/// file that stores its samples as one block.
pub fn run_stream(
    name: &str,
    block: &topoview_core::io::Block,
    args: &BenchConfig,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    let voxels: usize = block.dims().iter().product();
    let bytes = voxels * block.dtype().size();
    let reader = block.reader().map_err(|e| ecc::EccError::Read(e.to_string()))?;
    let mut buf = vec![0u8; ecc::stream::SLAB_BYTES.min(bytes)];
    let read = best_of(args.repeat, || {
        for at in (0..bytes).step_by(buf.len()) {
            let n = buf.len().min(bytes - at);
            // A file cut short since it was opened shows in the ECC rows' error.
            let _ = reader.read::<u8>(at, &mut buf[..n]);
        }
    });
    writeln!(
        out,
        "read {name} in {} MiB slabs: {read:.4} s, {:.2} GB/s",
        buf.len() >> 20,
        bytes as f64 / read / 1e9
    )?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if args.threads.is_empty() { vec![1, cores] } else { args.threads.clone() };
    for &t in &threads {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build()?;
        let mut failed = None;
        let secs = pool.install(|| {
            best_of(args.repeat, || {
                let streamed = block
                    .reader()
                    .map_err(|e| ecc::EccError::Read(e.to_string()))
                    .and_then(|r| ecc::stream::ecc(&r, &EccOptions::default(), &Control::default()));
                if let Err(e) = streamed {
                    failed = Some(e);
                }
            })
        });
        if let Some(e) = failed {
            return Err(e.into());
        }
        let gvox = voxels as f64 / secs / 1e9;
        writeln!(out, "ECC streamed from {name}: {t} threads {secs:.4} s, {gvox:.3} GVox/s")?;
    }
    Ok(())
}

fn time_cases(
    cases: &[(String, ScalarField, Option<Smoothing>)],
    args: &BenchConfig,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if args.threads.is_empty() { vec![1, cores] } else { args.threads.clone() };
    writeln!(
        out,
        "topoview {} bench: {} logical cores, best of {}",
        env!("CARGO_PKG_VERSION"),
        cores,
        args.repeat
    )?;
    let width = cases.iter().map(|c| c.0.len()).max().unwrap_or(0).max(34);
    writeln!(
        out,
        "{:<width$} {:>7} {:>10} {:>10} {:>12}",
        "case", "threads", "seconds", "GVox/s", "GVox/s/core"
    )?;
    for (name, field, smoothing) in cases {
        for &t in &threads {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build()?;
            let secs = pool.install(|| {
                best_of(args.repeat, || match smoothing {
                    None => {
                        ecc::ecc(field, &EccOptions::default(), &Control::default())
                            .expect("bench fields are finite (a file's is checked first)");
                    }
                    Some(s) => {
                        smooth::smooth(field, s, &Control::default()).expect("valid sigma");
                    }
                })
            });
            let gvox = field.len() as f64 / secs / 1e9;
            writeln!(out, "{name:<width$} {t:>7} {secs:>10.4} {gvox:>10.3} {:>12.3}", gvox / t as f64)?;
        }
    }
    if let Some(mib) = peak_rss_mib() {
        writeln!(out, "peak resident memory: {mib:.0} MiB")?;
    }
    Ok(())
}

/// The fields `bench --msc` times: smooth random fields (every Morse-Smale implementation's
/// favourite), and two with critical points nearly everywhere (white noise, and a field smoothed
/// at sigma 1), which show what the pipeline costs per critical point.
/// Each is made when the iterator reaches it, so a run's peak memory holds its own field only;
/// those whose names `wanted` refuses are not made.
pub fn msc_fields(wanted: impl Fn(&str) -> bool + Clone) -> impl Iterator<Item = (String, ScalarField)> {
    let smooth = [
        (vec![2048, 2048], 4.0),
        (vec![128, 128, 128], 4.0),
        (vec![256, 256, 256], 4.0),
        (vec![256, 256, 256], 1.0),
    ];
    let want = wanted.clone();
    let grf = smooth.into_iter().filter_map(move |(dims, sigma): (Vec<usize>, f64)| {
        let name = format!("GRF sigma={sigma} {}", topoview_core::field::dims_string(&dims));
        want(&name).then(|| (name, bench_grf(&dims, sigma, 1)))
    });
    let noise =
        std::iter::once("white noise 128x128x128".to_string()).filter(move |n| wanted(n)).map(|name| {
            let f = topoview_core::synthetic::white_noise(&[128; 3], 1, &Control::default())
                .expect("the benchmark's dims are valid");
            (name, f)
        });
    grf.chain(noise)
}

/// Resets the process's peak resident memory (Linux 4.0+), so that the next reading is the
/// peak of what runs in between; false where the kernel does not allow it.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Per-stage times of the Morse-Smale pipeline on `fields` at each of `threads` (all cores when
/// empty), with the number of critical points and arcs, the saddle-saddle arcs the hierarchy
/// made, and the peak resident memory of each run (the field included); then what one
/// position of the viewer's simplification slider costs.
///
/// A file the Morse-Smale complex cannot take (NaN, 1D, a flat axis) is refused before any row.
///
/// With `gpu`, each field also runs once more through [`Backend::msc`](crate::backend::Backend::msc)
/// (the gradient, the labels and the saddle-saddle arcs on the GPU, the rest on the largest
/// thread count), the row named `cuda+N`.
///
/// The columns are [`topoview_core::topo::msc::Analysis::seconds`]: "hierarchy" is the wait after
/// persistence, the diagram's assembly beside the hierarchy included (and in `cuda+N` rows the
/// manifold labels, made beside them), where "ext only" times the hierarchy alone.
pub fn run_msc(
    fields: impl IntoIterator<Item = (String, ScalarField)>,
    threads: &[usize],
    gpu: Option<&crate::backend::Backend>,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    use topoview_core::topo::msc::simplify::{Pairs, Prepared, hierarchy_of};
    use topoview_core::topo::msc::{analyse, check_field};
    let all = [rayon::current_num_threads()];
    let threads = if threads.is_empty() { &all[..] } else { threads };
    writeln!(
        out,
        "{:<30} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>9} {:>9} {:>9}",
        "field",
        "threads",
        "gradient",
        "arcs+man",
        "persist",
        "hierarchy",
        "ext only",
        "total s",
        "critical",
        "arcs",
        "made",
        "peak MiB",
        "B/voxel"
    )?;
    for (name, f) in fields {
        check_field(&f)?;
        let mut last = None;
        let most = threads.iter().copied().max().unwrap_or(1);
        let runs = threads.iter().map(|&t| (t, None)).chain(gpu.map(|g| (most, Some(g))));
        for (t, gpu) in runs {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build()?;
            // The previous run's complex goes first, or this run's peak would hold it too.
            drop(last.take());
            let reset = reset_peak_rss();
            let t0 = Instant::now();
            let a = match gpu {
                Some(g) => {
                    let (a, ran) = pool.install(|| g.msc(&f, &Control::default(), u64::MAX))?;
                    if let Some(why) = ran.fallback {
                        writeln!(out, "{name}: the GPU was not used: {why}")?;
                    }
                    a
                }
                None => pool.install(|| analyse(&f, &Control::default()))?,
            };
            let total = t0.elapsed().as_secs_f64();
            let peak = if reset { peak_rss_mib().unwrap_or(f64::NAN) } else { f64::NAN };
            // The hierarchy again, cancelling extremum-saddle pairs only: what saddle-saddle pairs
            // cost, measured in the same run.
            let t0 = Instant::now();
            pool.install(|| {
                hierarchy_of(
                    Prepared::new(&a.complex),
                    a.hierarchy.partner.clone(),
                    Pairs::ExtremumSaddle,
                    &Control::default(),
                )
            })
            .map_err(MscError::from)?;
            let extrema_only = t0.elapsed().as_secs_f64();
            let label = if gpu.is_some() { format!("cuda+{t}") } else { t.to_string() };
            writeln!(
                out,
                "{name:<30} {label:>7} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>10} {:>8} {:>9} {:>9.0} {:>9.1}",
                a.seconds[0],
                a.seconds[1],
                a.seconds[2],
                a.seconds[3],
                extrema_only,
                total,
                a.complex.critical.len(),
                a.complex.arcs.len(),
                a.hierarchy.added.len(),
                peak,
                peak * (1 << 20) as f64 / f.len() as f64,
            )?;
            last = Some(a);
        }
        let Some(a) = last else { continue };
        // What the viewer's simplification slider costs: one level, best of 5, and the live
        // critical points by index there.
        let ndim = f.ndim();
        let scene = crate::MscScene::new(std::sync::Arc::new(f), a);
        let span = scene.range.1 - scene.range.0;
        for pct in [1.0, 5.0, 10.0] {
            let mut best = f64::INFINITY;
            let mut counts = [0; 4];
            for _ in 0..5 {
                let t = Instant::now();
                let level = scene.level(pct / 100.0 * span);
                best = best.min(t.elapsed().as_secs_f64() * 1e3);
                counts = level.counts;
            }
            let k = &counts[..=ndim];
            writeln!(out, "  slider at {pct:>4}% of the range: {best:.2} ms, live by index {k:?}")?;
        }
    }
    Ok(())
}

/// Median seconds of `repeat` CPU crack filters of a `w` x `h` image under `opts` (all cores).
pub fn time_cracks_cpu(
    img: &topoview_core::topo::cracks::Image,
    opts: &topoview_core::topo::cracks::CrackOptions,
    repeat: usize,
) -> Result<f64, topoview_core::topo::cracks::CrackError> {
    let mut t = Vec::new();
    for _ in 0..repeat.max(1) {
        let s = Instant::now();
        topoview_core::topo::cracks::cracks(img, opts, &Control::default())?;
        t.push(s.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

/// `topoview bench --betti`: the ECC, the Betti curves (both passes, in slabs on all cores,
/// uncut (one union-find per pass, the sort still parallel), and on `gpu` when given, of which
/// the sort on the CPU) and the labelled parts at
/// the middle threshold (what the viewer's "explain" overlay computes per threshold), best of
/// `repeat`, for top cells and vertices, on a 256^3 random field, 256^3 u8 noise (the most
/// runs a labelling can meet) and, when given, a file; and the tunnels (dimension-1 pairs), once,
/// but not of the noise.
pub fn run_betti(
    gpu: Option<&crate::backend::Backend>,
    repeat: usize,
    extra: Option<(&str, &ScalarField)>,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    use topoview_core::topo::betti::{self, parts::parts};
    use topoview_core::topo::ecc::{Construction, NanPolicy};
    writeln!(
        out,
        "{:<34} {:<10} {:>9} {:>10} {:>12} {:>12} {:>9} {:>10} {:>11} {:>8} {:>7} {:>11} {:>8}",
        "field",
        "cells",
        "ECC ms",
        "Betti ms",
        "1 slab ms",
        "GPU ms",
        "sort ms",
        "parts ms",
        "threshold",
        "comps",
        "voids",
        "tunnels ms",
        "tunnels"
    )?;
    let best = |f: &mut dyn FnMut() -> Result<(), BenchError>| -> Result<f64, BenchError> {
        let mut best = f64::INFINITY;
        for _ in 0..repeat.max(1) {
            let t = Instant::now();
            f()?;
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
        }
        Ok(best)
    };
    let mut row = |name: &str, f: &ScalarField, with_tunnels: bool| -> Result<(), BenchError> {
        for construction in [Construction::TopCells, Construction::Vertices] {
            let opts = EccOptions { construction, nan: NanPolicy::Absent, ..EccOptions::default() };
            let ctl = Control::default();
            let e = ecc::ecc(f, &opts, &ctl)?;
            let t_ecc = best(&mut || Ok(ecc::ecc(f, &opts, &ctl).map(|_| ())?))?;
            let t_betti = best(&mut || Ok(betti::betti(f, &e, &ctl).map(|_| ())?))?;
            // The same sweeps uncut, one union-find per pass: what the slabs buy.
            let t_one = best(&mut || Ok(betti::betti_in_slabs(f, &e, 1, &ctl).map(|_| ())?))?;
            // The GPU's, from the host's field (the sort is on the CPU), where it ran there.
            let t_gpu = match gpu {
                Some(g) => {
                    let mut on_gpu = true;
                    let t = best(&mut || {
                        on_gpu &= g.betti(f, &e, &ctl)?.1.on_gpu;
                        Ok(())
                    })?;
                    if on_gpu { format!("{t:.1}") } else { "CPU".into() }
                }
                None => "-".into(),
            };
            // Of which, both ways: the sort of the voxels into filtration order, on the CPU.
            let t_sort = best(&mut || Ok(betti::Plan::new(f, &e, &ctl).map(|_| ())?))?;
            // A field without a finite value has no middle threshold: nothing to time.
            if e.is_empty() {
                continue;
            }
            let t = e.threshold(e.len() / 2);
            let mut p = None;
            let t_parts = best(&mut || {
                p = Some(parts(f, construction, opts.filtration, t, &ctl)?);
                Ok(())
            })?;
            let (c, v) = p.map_or((0, 0), |p| (p.components, p.voids));
            // Once: the persistence diagram behind them is the slow part.
            let (t_tun, n_tun) = if with_tunnels {
                let s = Instant::now();
                let n = topoview_core::topo::betti::tunnels::tunnels(f, construction, opts.filtration, &ctl)?
                    .len();
                (format!("{:.0}", s.elapsed().as_secs_f64() * 1e3), n.to_string())
            } else {
                ("-".into(), "-".into())
            };
            writeln!(
                out,
                "{name:<34} {:<10} {t_ecc:>9.1} {t_betti:>10.1} {t_one:>12.1} {t_gpu:>12} {t_sort:>9.1} {t_parts:>10.1} {t:>11.4} {c:>8} {v:>7} {t_tun:>11} {n_tun:>8}",
                construction.name()
            )?;
        }
        Ok(())
    };
    row("GRF sigma=4 256x256x256 f32", &bench_grf(&[256, 256, 256], 4.0, 1), true)?;
    // Noise has critical cells nearly everywhere: its diagram would not fit this machine.
    row("noise 256x256x256 u8", &noise_u8(&[256, 256, 256]), false)?;
    if let Some((name, f)) = extra {
        row(name, f, true)?;
    }
    Ok(())
}

/// `topoview bench --scale-space`: the ECC scale-space of a 256^3 f32 random field (and FILE
/// when given), 32 scales (σ = 0 to 7.75 in steps of 0.25) at 256 thresholds, best of `repeat`,
/// on each backend given (the CPU, and CUDA where there is one).
pub fn run_scale_space(
    backends: &[crate::backend::Backend],
    repeat: usize,
    extra: Option<(&str, &ScalarField)>,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    use crate::scale_space::{scale_space, sigmas, threshold_grid};
    writeln!(
        out,
        "{:<34} {:<28} {:>7} {:>10} {:>12}",
        "field", "backend", "scales", "total s", "ms per scale"
    )?;
    let sig = sigmas(7.75, 0.25)?;
    let mut row = |name: &str, f: &ScalarField| -> Result<(), BenchError> {
        let Some((lo, hi)) = crate::FieldSummary::of(f).range else { return Ok(()) };
        let grid = threshold_grid(lo, hi, 256)?;
        let opts = EccOptions { nan: ecc::NanPolicy::Absent, ..EccOptions::default() };
        for b in backends {
            let mut best = f64::INFINITY;
            let mut ran = String::new();
            for _ in 0..repeat.max(1) {
                let t = Instant::now();
                let m = scale_space(b, f, &opts, &sig, &grid, &Control::default())?;
                best = best.min(t.elapsed().as_secs_f64());
                ran = m.ran.last().map(|r| b.where_ran(r)).unwrap_or_default();
            }
            let per = best * 1e3 / sig.len() as f64;
            writeln!(out, "{name:<34} {ran:<28} {:>7} {best:>10.2} {per:>12.1}", sig.len())?;
        }
        Ok(())
    };
    row("GRF sigma=4 256x256x256 f32", &bench_grf(&[256, 256, 256], 4.0, 1))?;
    if let Some((name, f)) = extra {
        row(name, f)?;
    }
    Ok(())
}
