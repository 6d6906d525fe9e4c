//! `cargo bench`: the same table as `topoview bench`. The edge of the test volumes comes from
//! TOPOVIEW_BENCH_SIZE (default 256, so that a plain `cargo bench` stays quick; the issue's
//! figures use 512: `topoview bench` or TOPOVIEW_BENCH_SIZE=512 cargo bench).
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

fn main() {
    let size = std::env::var("TOPOVIEW_BENCH_SIZE").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    let cfg = topoview_compute::bench::BenchConfig { size, repeat: 3, threads: Vec::new() };
    if let Err(e) = topoview_compute::bench::run(&cfg, &mut std::io::stdout()) {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}
