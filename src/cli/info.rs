//! `topoview info FILE...`

use super::InputArgs;
use std::path::PathBuf;
use topoview_core::export::{format_stored, format_threshold, is_f32};
use topoview_core::field::dims_string;
use topoview_core::field::stats::stats;
use topoview_core::io::open;

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
}

/// Prints a description of each file; returns false when any could not be read.
pub fn run(args: &InfoArgs) -> anyhow::Result<bool> {
    args.input.init_threads()?;
    let opts = args.input.open_options()?;
    let mut ok = true;
    for path in &args.files {
        let field = match open(path, &opts) {
            Ok(f) => f,
            Err(e) => {
                say!("{}", super::error_line(&e.into()));
                ok = false;
                continue;
            }
        };
        let s = stats(&field);
        let sp = &field.spacing()[..field.ndim()];
        // Spacing stored as f32 gives its extent in f32 too (24 x 2.2 is 52.8, not 52.79997).
        let extent: Vec<String> = field
            .shape()
            .iter()
            .zip(sp)
            .map(
                |(&n, &d)| {
                    if is_f32(d) { format!("{}", n as f32 * d as f32) } else { format_stored(n as f64 * d) }
                },
            )
            .collect();
        out!("file:            {}", topoview_core::export::outputs::one_line(&path.display().to_string()))?;
        out!(
            "dims:            {} ({}D, {} voxels, x fastest)",
            dims_string(field.shape()),
            field.ndim(),
            field.len()
        )?;
        out!("dtype:           {}", field.dtype())?;
        out!(
            "spacing:         {} (extent {})",
            sp.iter().map(|&v| format_stored(v)).collect::<Vec<_>>().join(" x "),
            extent.join(" x ")
        )?;
        if let Some(a) = field.affine {
            let o = topoview_core::field::orientation::Orientation::of(&a);
            let oblique = if topoview_core::field::orientation::Orientation::is_oblique(&a) {
                " (oblique: the closest axes)"
            } else {
                ""
            };
            out!("orientation:     {}{oblique}", o.code())?;
            for (i, row) in a.iter().take(3).enumerate() {
                out!(
                    "{:<17}{}",
                    if i == 0 { "affine:" } else { "" },
                    row.iter().map(|v| format!("{v:>10.4}")).collect::<String>()
                )?;
            }
        }
        match s.range {
            Some((lo, hi)) => out!(
                "range:           {} to {}",
                format_threshold(lo, field.dtype()),
                format_threshold(hi, field.dtype())
            )?,
            None => out!("range:           none (every sample is NaN)")?,
        }
        out!("distinct values: {}", s.distinct)?;
        if field.dtype().is_float() {
            out!("non-finite:      {} NaN, {} infinite", s.nan, s.infinite)?;
        }
        out!(
            "memory:          {} bytes ({:.2} MiB)",
            field.samples().byte_len(),
            field.samples().byte_len() as f64 / 1048576.0
        )?;
        for n in &field.notes_with_series() {
            out!("note:            {n}")?;
        }
        if args.files.len() > 1 {
            out!()?;
        }
    }
    Ok(ok)
}
