//! `topoview bench`: see [`topoview_compute::bench`].

use anyhow::Context;
use std::io::stdout;
use topoview_compute::bench::{BenchConfig, run as run_bench};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Edge of the 3D test volumes (the 2D image has 16 times the edge, squared).
    #[arg(long, default_value_t = 512)]
    pub size: usize,
    /// Timed runs per case; the best is reported.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Thread counts to measure (default: 1 and all cores; with --msc: all cores).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// Time the Morse-Smale pipeline instead (FILE when given, then random fields smoothed at
    /// sigma 4: 2048^2, 128^3, 256^3; and the stress fields: 256^3 at sigma 1, 128^3 white
    /// noise), at each of --threads (default: all cores).
    #[arg(long)]
    pub msc: bool,
    /// With --msc: only the random fields whose names hold this text (as the table names them:
    /// "sigma=4 256x256x256", "noise"); FILE is timed whatever it is.
    #[arg(long, requires = "msc")]
    pub only: Option<String>,
    /// Time the crack filter (inter-pixel filtering, the Gaussian bank of `topoview cracks`)
    /// instead, on the CPU (all cores) and on the GPU when there is one.
    #[arg(long)]
    pub cracks: bool,
    /// Time the Betti curves and the labelled parts of a threshold set instead (256^3 random
    /// field and noise, and FILE when given).
    #[arg(long)]
    pub betti: bool,
    /// Time the ECC scale-space instead (32 scales of a 256^3 f32 random field, and FILE when
    /// given), on the CPU (all cores) and on the GPU when there is one.
    #[arg(long)]
    pub scale_space: bool,
    /// With --cracks: edges of the square test images.
    #[arg(long, value_delimiter = ',', default_value = "500,8192")]
    pub crack_sizes: Vec<usize>,
    /// Time the in-memory ECC and smoothing of this file instead of the synthetic fields; with
    /// --msc: also time this file; with --cuda: time this file from disk to curve.
    #[arg(long)]
    pub file: Option<std::path::PathBuf>,
    /// Time the CUDA backend (device 0) instead.
    #[arg(long)]
    pub cuda: bool,
    /// Time the ECC on 1, 2, ... of every visible GPU instead (a 1024^3 u8 field from host
    /// memory, and FILE streamed from disk when given).
    #[arg(long)]
    pub gpus: bool,
    /// Time the 3D view instead, rendered offscreen (no window) on the GPU wgpu finds.
    #[arg(long)]
    pub render: bool,
    /// With --render: edges of the test volumes.
    #[arg(long, value_delimiter = ',', default_value = "128,256,512")]
    pub volumes: Vec<usize>,
    /// With --render: the image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1920x1080")]
    pub resolution: String,
    /// With --render: timed frames per case.
    #[arg(long, default_value_t = 20)]
    pub frames: usize,
    /// With --cuda and --file: also stream the file through at most this much GPU memory.
    #[arg(long, value_name = "LIMIT", value_parser = topoview_core::mem::parse_size)]
    pub gpu_memory: Option<usize>,
}

pub fn run(a: &BenchArgs) -> anyhow::Result<()> {
    for &t in &a.threads {
        topoview_compute::backend::check_threads(t).map_err(|e| anyhow::anyhow!("--{e}"))?;
    }
    if a.gpus {
        #[cfg(feature = "cuda")]
        return topoview_gpu::bench::run_devices(a.repeat.max(1), a.file.as_deref(), &mut stdout())
            .map_err(anyhow::Error::msg);
        #[cfg(not(feature = "cuda"))]
        anyhow::bail!("this topoview was built without CUDA (the `cuda` feature)");
    }
    if a.cuda {
        #[cfg(feature = "cuda")]
        {
            let t = std::time::Instant::now();
            let g = topoview_gpu::Gpu::open().map_err(anyhow::Error::msg)?;
            // The fixed costs a command that uses the GPU pays first: the context, then each
            // kernel file it runs (loaded on first use).
            println!("CUDA context created in {:.3} s", t.elapsed().as_secs_f64());
            for (what, secs) in g.load_all().map_err(anyhow::Error::msg)? {
                println!("{what} kernels loaded in {secs:.3} s");
            }
            topoview_gpu::bench::run(&g, a.repeat.max(1), a.file.as_deref(), a.gpu_memory, &mut stdout())
                .map_err(anyhow::Error::msg)?;
            return Ok(());
        }
        #[cfg(not(feature = "cuda"))]
        anyhow::bail!("this topoview was built without CUDA (the `cuda` feature)");
    }
    if a.render {
        #[cfg(feature = "viewer")]
        {
            let (w, h) = a
                .resolution
                .split_once('x')
                .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
                .filter(|&(w, h)| (1..=16384).contains(&w) && (1..=16384).contains(&h))
                .ok_or_else(|| anyhow::anyhow!("--resolution must be WIDTHxHEIGHT, e.g. 1920x1080"))?;
            anyhow::ensure!(
                a.volumes.iter().all(|&n| (8..=1024).contains(&n)),
                "--volumes edges must be 8 to 1024"
            );
            let cfg = topoview_viewer::render::bench3d::RenderBenchConfig {
                sizes: a.volumes.clone(),
                width: w,
                height: h,
                frames: a.frames.max(1),
            };
            topoview_viewer::render::bench3d::run(&cfg, &mut stdout())?;
            return Ok(());
        }
        #[cfg(not(feature = "viewer"))]
        anyhow::bail!("this topoview was built without the viewer (the `viewer` feature)");
    }
    if a.cracks {
        return cracks(a);
    }
    if a.betti || a.scale_space {
        use topoview_compute::backend::{Backend, Choice};
        let field = match &a.file {
            Some(p) => Some(topoview_core::io::open(p, &Default::default())?),
            None => None,
        };
        let name = a.file.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let extra = field.as_ref().map(|f| (name.as_str(), f));
        let gpu = Backend::new(Choice::Cuda, None).ok();
        if a.betti {
            topoview_compute::bench::run_betti(gpu.as_ref(), a.repeat, extra, &mut stdout())?;
        } else {
            let mut backends = vec![Backend::new(Choice::Cpu, None)?];
            backends.extend(gpu);
            topoview_compute::bench::run_scale_space(&backends, a.repeat, extra, &mut stdout())?;
        }
        return Ok(());
    }
    if a.msc {
        // The file first: a file the complex cannot take is refused before any random field
        // is made.
        let file = match &a.file {
            Some(p) => {
                let name = p.display().to_string();
                let f = topoview_core::io::open(p, &Default::default())?;
                topoview_core::topo::msc::check_field(&f).with_context(|| name.clone())?;
                Some((name, f))
            }
            None => None,
        };
        let only = a.only.clone().unwrap_or_default();
        let fields =
            file.into_iter().chain(topoview_compute::bench::msc_fields(move |name| name.contains(&only)));
        // With a GPU, each field runs once more with the gradient and the labels there.
        // Its kernels are loaded before the timed runs, as its context is made before them.
        let gpu = match topoview_compute::backend::Backend::new(topoview_compute::backend::Choice::Cuda, None)
        {
            Ok(b) => {
                b.preload_msc();
                Some(b)
            }
            Err(why) => {
                println!("no cuda+N rows: {why}");
                None
            }
        };
        topoview_compute::bench::run_msc(fields, &a.threads, gpu.as_ref(), &mut stdout())?;
        return Ok(());
    }
    anyhow::ensure!(
        a.size >= 4 && a.size <= 512,
        "--size must be 4 to 512 (the f32 case needs at most 2^28 voxels)"
    );
    let cfg = BenchConfig { size: a.size, repeat: a.repeat, threads: a.threads.clone() };
    if let Some(p) = &a.file {
        let name = p.display().to_string();
        if let Some(block) = topoview_core::io::block(p, &Default::default())? {
            topoview_compute::bench::run_stream(&name, &block, &cfg, &mut stdout())
                .with_context(|| name.clone())?;
        }
        let field = topoview_core::io::open(p, &Default::default()).with_context(|| name.clone())?;
        topoview_compute::bench::run_file(&name, field, &cfg, &mut stdout()).with_context(|| name.clone())?;
        return Ok(());
    }
    run_bench(&cfg, &mut stdout())?;
    Ok(())
}

/// `bench --cracks`: CPU rows, then GPU rows, and what splitting the work between them could
/// save at best (the paper's scheme), from the two measured times.
fn cracks(a: &BenchArgs) -> anyhow::Result<()> {
    use std::io::Write;
    use topoview_core::topo::cracks::CrackOptions;
    anyhow::ensure!(
        a.crack_sizes.iter().all(|&n| (2..=16384).contains(&n)),
        "--crack-sizes must be 2 to 16384"
    );
    let opts = CrackOptions::default();
    let mut o = stdout();
    writeln!(
        o,
        "bank: scales {:?}, {} orientations, D1 and D2 ({} kernels; the strengths timed here need the D1 alone, \
         steered from Gx and Gy); radius {} sigma",
        opts.scales,
        opts.orientations,
        2 * opts.scales.len() * opts.orientations,
        opts.truncate
    )?;
    writeln!(o, "{:<22} {:>8} {:>12} {:>12}", "CPU crack filter", "threads", "median ms", "Mpixel/s")?;
    let mut cpu = Vec::new();
    for &n in &a.crack_sizes {
        let img = topoview_compute::bench::crack_image(n, n);
        let t = topoview_compute::bench::time_cracks_cpu(&img, &opts, a.repeat)?;
        writeln!(
            o,
            "{:<22} {:>8} {:>12.2} {:>12.1}",
            format!("{n}x{n}"),
            rayon::current_num_threads(),
            t * 1e3,
            (n * n) as f64 / t / 1e6
        )?;
        cpu.push(t);
    }
    #[cfg(feature = "cuda")]
    match topoview_gpu::Gpu::open() {
        Ok(g) => {
            let gpu = topoview_gpu::bench::run_cracks(&g, &a.crack_sizes, &opts, a.repeat.max(1), &mut o)
                .map_err(anyhow::Error::msg)?;
            for ((n, c), g) in a.crack_sizes.iter().zip(&cpu).zip(&gpu) {
                // Work split in proportion to speed finishes both at 1 / (1/cpu + 1/gpu).
                let split = 1.0 / (1.0 / c + 1.0 / g);
                writeln!(
                    o,
                    "{n}x{n}: CPU + GPU split at best {:.3} ms vs GPU call {:.3} ms ({:.1}% saved, before the cost of splitting)",
                    split * 1e3,
                    g * 1e3,
                    100.0 * (1.0 - split / g)
                )?;
            }
        }
        Err(e) => writeln!(o, "GPU: none ({e})")?,
    }
    Ok(())
}
