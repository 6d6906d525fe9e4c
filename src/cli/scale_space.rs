//! `topoview ecc FILE --scale-space SIGMA_MAX[:STEP]`: χ over (threshold, σ) as CSV rows
//! `sigma,threshold,chi` (and JSON), see [`topoview_compute::scale_space`].

use super::progress::Progress;
use anyhow::Context;
use std::io::Write;
use topoview_compute::backend::Backend;
use topoview_compute::scale_space::{self, ScaleSpace};
use topoview_core::control::Control;
use topoview_core::export::{format_threshold, outputs};
use topoview_core::field::ScalarField;
use topoview_core::topo::ecc::EccOptions;

/// `SIGMA_MAX[:STEP]` (STEP 0.25 when left out) as the list of scales, 0 first.
pub fn parse(spec: &str) -> anyhow::Result<Vec<f64>> {
    let (max, step) = match spec.split_once(':') {
        Some((m, s)) => (m, s),
        None => (spec, "0.25"),
    };
    let num = |s: &str| {
        s.trim().parse::<f64>().with_context(|| format!("--scale-space {spec}: '{s}' is not a number"))
    };
    Ok(scale_space::sigmas(num(max)?, num(step)?)?)
}

/// What one scale-space run needs besides the field.
pub struct Request<'a> {
    pub name: &'a str,
    pub sigmas: &'a [f64],
    pub thresholds: usize,
    pub opts: &'a EccOptions,
    pub backend: &'a Backend,
}

/// Computes the scale-space of `field`; returns it with the summary line.
pub fn run(field: &ScalarField, r: &Request, progress: &Progress) -> anyhow::Result<(ScaleSpace, String)> {
    let range = topoview_compute::FieldSummary::of(field).range;
    let (lo, hi) = range.with_context(|| format!("{}: no finite value", r.name))?;
    let thresholds = scale_space::threshold_grid(lo, hi, r.thresholds)?;
    let bar = progress.bar(scale_space::work(field, r.sigmas), "scale-space");
    let tick = |n: u64| progress.inc(&bar, n);
    let s = scale_space::scale_space(
        r.backend,
        field,
        r.opts,
        r.sigmas,
        &thresholds,
        &Control { progress: Some(&tick), cancel: None },
    )
    .with_context(|| r.name.to_string())?;
    bar.finish_and_clear();
    let on_gpu = s.ran.iter().filter(|x| x.on_gpu).count();
    let fmt = |t: f64| format_threshold(t, field.dtype());
    let first = s.suggested.first().copied().flatten().map_or("none".into(), fmt);
    let last = s.suggested.last().copied().flatten().map_or("none".into(), fmt);
    let summary = format!(
        "{}: ECC scale-space, {} scales (sigma 0 to {} voxels) x {} thresholds ({} to {}); suggested \
         threshold {first} at sigma 0, {last} at sigma {}; {on_gpu} of {} scales on the GPU",
        r.name,
        s.sigmas.len(),
        s.sigmas[s.sigmas.len() - 1],
        s.thresholds.len(),
        fmt(lo),
        fmt(hi),
        s.sigmas[s.sigmas.len() - 1],
        s.sigmas.len(),
    );
    Ok((s, summary))
}

/// `# key: value` lines, then `sigma,threshold,chi`, sigma by sigma.
pub fn write_csv(
    w: &mut dyn Write,
    name: &str,
    field: &ScalarField,
    opts: &EccOptions,
    s: &ScaleSpace,
) -> std::io::Result<()> {
    writeln!(w, "# topoview {} ECC scale-space", env!("CARGO_PKG_VERSION"))?;
    writeln!(w, "# file: {}", outputs::one_line(name))?;
    writeln!(w, "# field: {} {}", topoview_core::field::dims_string(field.shape()), field.dtype())?;
    writeln!(w, "# construction: {} ({})", opts.construction, opts.construction.description())?;
    writeln!(w, "# filtration: {}", opts.filtration.name())?;
    writeln!(
        w,
        "# smoothing: gaussian per sigma (voxels), truncate=3, boundary=reflect; sigma 0 is the field"
    )?;
    writeln!(w, "# thresholds: {} evenly spaced over the field's range", s.thresholds.len())?;
    writeln!(w, "sigma,threshold,chi")?;
    for (sigma, row) in s.sigmas.iter().zip(&s.chi) {
        for (t, c) in s.thresholds.iter().zip(row) {
            writeln!(w, "{sigma},{t:?},{c}")?;
        }
    }
    Ok(())
}

pub fn json(name: &str, field: &ScalarField, opts: &EccOptions, s: &ScaleSpace) -> serde_json::Value {
    serde_json::json!({
        "topoview_version": env!("CARGO_PKG_VERSION"),
        "file": name,
        "dims": field.shape(),
        "dtype": field.dtype(),
        "construction": opts.construction,
        "filtration": opts.filtration,
        "sigma": s.sigmas,
        "threshold": s.thresholds,
        "chi": s.chi,
        "suggested_threshold": s.suggested,
    })
}
