//! The command line: `topoview ecc | info | bench`.

mod bench;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "topoview", version, about = "The topology of images and volumes")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Throughput of the ECC and smoothing on synthetic fields.
    Bench(bench::BenchArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Bench(a)) => bench::run(a),
        None => Ok(()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("topoview: {e:#}");
            ExitCode::FAILURE
        }
    }
}
