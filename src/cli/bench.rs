//! `topoview bench`: see [`topoview::bench`].

use topoview::bench::{BenchConfig, run as run_bench};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Edge of the 3D test volumes (the 2D image has 16 times the edge, squared).
    #[arg(long, default_value_t = 512)]
    pub size: usize,
    /// Timed runs per case; the best is reported.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Thread counts to measure (default: 1 and all cores).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
}

pub fn run(a: &BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        a.size >= 4 && a.size <= 512,
        "--size must be 4 to 512 (the f32 case needs at most 2^28 voxels)"
    );
    run_bench(&BenchConfig { size: a.size, repeat: a.repeat, threads: a.threads.clone() })?;
    Ok(())
}
