//! `topoview bench --cuda`: GPU figures for docs/PERFORMANCE.md, each with the CPU's on the same
//! input where that is quick, and a check that the curves agree.

use super::{Gpu, GpuError};
use std::time::Instant;
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::mem::peak_rss_mib;
use topoview_core::synthetic::noise_u8;
use topoview_core::topo::ecc::{EccOptions, ecc};
use topoview_core::topo::smooth::Smoothing;

fn gvox(n: usize, s: f64) -> f64 {
    n as f64 / s / 1e9
}

/// Best-of-`reps` kernel time of the GPU ECC of `f` (slabs resident: one slab when it fits).
/// Why a GPU benchmark stopped.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Read(#[from] topoview_core::io::ReadError),
    #[error(transparent)]
    Ecc(#[from] topoview_core::topo::ecc::EccError),
    #[error("cannot write the results: {0}")]
    Write(#[from] std::io::Error),
}

fn ecc_case(
    out: &mut dyn std::io::Write,
    g: &Gpu,
    label: &str,
    f: &ScalarField,
    reps: usize,
    cpu: bool,
) -> Result<(), BenchError> {
    let opts = EccOptions::default();
    let (first, _) = g.ecc(f, &opts, None, &Control::default())?;
    let mut best = f64::MAX;
    let mut total = f64::MAX;
    let mut stages = String::new();
    for _ in 0..reps {
        let (_, t) = g.ecc(f, &opts, None, &Control::default())?;
        if t.kernels > 0.0 {
            best = best.min(t.kernels);
        }
        if t.total < total {
            total = t.total;
            if t.download > 0.0 {
                stages = format!(
                    " [upload {:.1} ms, pairs+sort {:.1}, run sums+download+curve {:.1}]",
                    t.upload * 1e3,
                    t.kernels * 1e3,
                    t.download * 1e3,
                );
            }
        }
    }
    let mut others = String::new();
    if best == f64::MAX {
        // Narrow types: the kernel alone, the field resident on the GPU (median of reps); for
        // 8-bit fields the packed kernel's, with the one-voxel-a-thread kernel's beside it.
        let kernels = g.time_ecc_kernel(f, &opts, reps.max(5))?;
        best = kernels[0].1;
        for (name, t) in &kernels[1..] {
            others += &format!(" [{name}: {:.3} ms, {:.1} GVox/s]", t * 1e3, gvox(f.len(), *t));
        }
    }
    let mut line = format!(
        "{label:<34} kernel {:>8.3} ms {:>8.1} GVox/s | from host memory {:>8.3} ms {:>6.1} GVox/s",
        best * 1e3,
        gvox(f.len(), best),
        total * 1e3,
        gvox(f.len(), total)
    );
    if cpu {
        let t = Instant::now();
        let c = ecc(f, &opts, &Control::default())?;
        let s = t.elapsed().as_secs_f64();
        line += &format!(" | CPU {:.1} ms {} ", s * 1e3, if c == first { "equal" } else { "DIFFERENT" });
    }
    writeln!(out, "{line}{stages}{others}")?;
    Ok(())
}

/// Times the GPU ECC on generated volumes (and `file`), writing one row per case to `out`.
pub fn run(
    g: &Gpu,
    reps: usize,
    file: Option<&std::path::Path>,
    limit: Option<usize>,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    writeln!(out, "device: {}", g.name)?;
    ecc_case(out, g, "ECC 512^3 u8 (256 levels)", &noise_u8(&[512, 512, 512]), reps, true)?;
    ecc_case(out, g, "ECC 1024^3 u8 (256 levels)", &noise_u8(&[1024, 1024, 1024]), reps, false)?;
    ecc_case(out, g, "ECC 8192^2 u8 (256 levels)", &noise_u8(&[8192, 8192]), reps, true)?;
    ecc_case(
        out,
        g,
        "ECC 512^3 f32 (all distinct)",
        &topoview_core::synthetic::distinct_f32(&[512, 512, 512]),
        reps,
        true,
    )?;
    ecc_case(
        out,
        g,
        "ECC 256^3 f32 (all distinct)",
        &topoview_core::synthetic::distinct_f32(&[256, 256, 256]),
        reps,
        true,
    )?;
    if let Some(p) = file {
        if let Some(block) = topoview_core::io::block(p, &Default::default()).ok().flatten() {
            for (label, lim) in
                [("raw file streamed to the GPU", None), ("raw file streamed, --gpu-memory", limit)]
            {
                if label.contains("memory") && lim.is_none() {
                    continue;
                }
                let t = Instant::now();
                let (_, times) = g.ecc_block(&block, &EccOptions::default(), lim, &Control::default())?;
                writeln!(
                    out,
                    "{label:<34} {}: {:.3} s ({} slabs, reads, copies and kernels overlapped on 2 streams)",
                    p.display(),
                    t.elapsed().as_secs_f64(),
                    times.chunks
                )?;
            }
        }
        for (label, lim) in [("file to curve", None), ("file to curve, --gpu-memory", limit)] {
            if label.contains("memory") && lim.is_none() {
                continue;
            }
            let t = Instant::now();
            let f = topoview_core::io::open(p, &Default::default())?;
            let read = t.elapsed().as_secs_f64();
            let (_, times) = g.ecc(&f, &EccOptions::default(), lim, &Control::default())?;
            writeln!(
                out,
                "{label:<34} {}: {:.3} s (read {:.3} s, GPU {:.3} s in {} slabs)",
                p.display(),
                t.elapsed().as_secs_f64(),
                read,
                times.total,
                times.chunks
            )?;
        }
    }
    let grf = topoview_core::synthetic::bench_grf(&[512, 512, 512], 1.0, 5);
    let s = Smoothing::voxels(2.0);
    let secs = g.time_smoothing(&grf, &s, reps)?;
    writeln!(
        out,
        "{:<34} {:>8.3} ms {:>8.1} GVox/s (13 taps x 3 axes, resident)",
        "smoothing 512^3 f32 sigma 2",
        secs * 1e3,
        gvox(grf.len(), secs)
    )?;
    // The iterated pipeline of the paper's Table 2, resident: smooth on the GPU, take the ECC of
    // the result there, N times; only the curves come back.
    for dims in [vec![1024, 1024], vec![512, 512, 512]] {
        let f = topoview_core::synthetic::bench_grf(&dims, 1.0, 9);
        let (secs, e) = g.time_pipeline(&f, &Smoothing::voxels(1.0), 10)?;
        writeln!(
            out,
            "{:<34} {:>8.3} ms per iteration (median of 10, resident; curves of {} points)",
            format!("(smoothing + ECC) x N {}", topoview_core::field::dims_string(&dims)),
            secs * 1e3,
            e.thresholds.len()
        )?;
    }
    if let Some(m) = peak_rss_mib() {
        writeln!(out, "peak host RSS {m:.0} MiB")?;
    }
    Ok(())
}

/// Device-to-device copy bandwidth (bytes read plus written per second) of a 1 GiB buffer:
/// the memory ceiling the crack filter is measured against.
pub fn copy_bandwidth(g: &Gpu) -> Result<f64, GpuError> {
    g.ctx.bind_to_thread()?;
    let n = 1usize << 28;
    let a: cudarc::driver::CudaSlice<f32> = g.stream.alloc_zeros(n)?;
    let mut b: cudarc::driver::CudaSlice<f32> = g.stream.alloc_zeros(n)?;
    g.stream.memcpy_dtod(&a, &mut b)?;
    g.stream.synchronize()?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        g.stream.memcpy_dtod(&a, &mut b)?;
        g.stream.synchronize()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(2.0 * 4.0 * n as f64 / best)
}

/// The crack filter on the GPU: resident time (image on the device, results left there),
/// the whole call (upload, filter, download), and the floor of reading the image once per
/// scale at the measured copy bandwidth. Returns the whole-call seconds per case.
pub fn run_cracks(
    g: &Gpu,
    sizes: &[usize],
    opts: &topoview_core::topo::cracks::CrackOptions,
    reps: usize,
    out: &mut dyn std::io::Write,
) -> Result<Vec<f64>, BenchError> {
    let bw = copy_bandwidth(g)?;
    writeln!(out, "device: {} (copy bandwidth {:.0} GB/s, read + write)", g.name, bw / 1e9)?;
    writeln!(
        out,
        "{:<22} {:>12} {:>12} {:>12} {:>10}",
        "GPU crack filter", "resident ms", "call ms", "floor ms", "x floor"
    )?;
    let mut calls = Vec::new();
    for &n in sizes {
        let img = topoview_core::synthetic::crack_image(n, n);
        let resident = g.time_cracks(&img, opts, reps)?;
        let mut whole = f64::INFINITY;
        for _ in 0..reps.max(1) {
            let t = std::time::Instant::now();
            g.cracks(&img, opts, &topoview_core::control::Control::default())?;
            whole = whole.min(t.elapsed().as_secs_f64());
        }
        let floor = (opts.scales.len() * n * n * 4) as f64 / bw;
        writeln!(
            out,
            "{:<22} {:>12.3} {:>12.3} {:>12.4} {:>10.1}",
            format!("{n}x{n}"),
            resident * 1e3,
            whole * 1e3,
            floor * 1e3,
            resident / floor
        )?;
        calls.push(whole);
    }
    Ok(calls)
}

/// `topoview bench --gpus`: the ECC of a 1024^3 u8 field from host memory, and of `file`
/// streamed from disk when given, on the first 1, 2, ... of every visible device (opened
/// once); each row's curve is checked against the single device's.
pub fn run_devices(
    reps: usize,
    file: Option<&std::path::Path>,
    out: &mut dyn std::io::Write,
) -> Result<(), BenchError> {
    let t = Instant::now();
    let devices = Gpu::open_devices(None)?;
    writeln!(
        out,
        "{} devices ({}) opened in {:.3} s",
        devices.len(),
        devices.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(", "),
        t.elapsed().as_secs_f64()
    )?;
    for g in &devices {
        let t = Instant::now();
        g.module(super::Kernels::Ecc)?;
        writeln!(out, "device {}: ECC kernels loaded in {:.3} s", g.ordinal, t.elapsed().as_secs_f64())?;
    }
    let opts = EccOptions::default();
    let ctl = Control::default();
    let block = file.map(|p| topoview_core::io::block(p, &Default::default()).map(|b| (p, b))).transpose()?;
    let field = noise_u8(&[1024, 1024, 1024]);
    let mut reference = None;
    let mut file_reference = None;
    for k in 1..=devices.len() {
        let on = &devices[..k];
        let mut best = f64::MAX;
        let mut curve = None;
        for _ in 0..reps.max(1) {
            let t = Instant::now();
            let (e, _) = super::ecc_spread(on, &field, &opts, None, &ctl)?;
            best = best.min(t.elapsed().as_secs_f64());
            curve = Some(e);
        }
        let same = agreement(&mut reference, curve);
        writeln!(
            out,
            "{:<34} {k} GPU(s): {:>8.1} ms {:>6.1} GVox/s from host memory ({same})",
            "ECC 1024^3 u8 (256 levels)",
            best * 1e3,
            gvox(field.len(), best)
        )?;
        if let Some((p, Some(b))) = &block {
            let mut best = f64::MAX;
            let mut curve = None;
            for _ in 0..reps.max(1) {
                let t = Instant::now();
                let (e, _) = super::ecc_block_spread(on, b, &opts, None, &ctl)?;
                best = best.min(t.elapsed().as_secs_f64());
                curve = Some(e);
            }
            let voxels: usize = b.dims().iter().product();
            let same = agreement(&mut file_reference, curve);
            writeln!(
                out,
                "{:<34} {k} GPU(s): {:>8.3} s {:>6.1} GVox/s streamed from the file ({same})",
                p.display(),
                best,
                gvox(voxels, best)
            )?;
        }
    }
    Ok(())
}

/// "first" for the first curve (kept), else whether `curve` equals it.
fn agreement(
    reference: &mut Option<topoview_core::topo::ecc::Ecc>,
    curve: Option<topoview_core::topo::ecc::Ecc>,
) -> &'static str {
    match reference {
        None => {
            *reference = curve;
            "the reference"
        }
        Some(r) if Some(&*r) == curve.as_ref() => "equal to 1 GPU's",
        Some(_) => "DIFFERENT from 1 GPU's",
    }
}
