//! Python bindings (feature `python`): the native module `topoview._topoview` that the package in
//! `python/topoview` wraps. Arrays cross as flat, contiguous numpy arrays with the field's
//! dims (x first, x fastest); the Python side maps numpy's axis orders onto that, so this module
//! knows nothing of C or Fortran order. Every computation runs on one worker thread with the GIL
//! released while the calling thread polls for Ctrl+C (which raises the computation's cancel
//! flag) and reports progress to an optional callback.

use crate::compute::backend::{Backend, Choice};
use crate::control::Control;
use crate::field::{Dtype, Samples, ScalarField};
use crate::io::{Endian, OpenOptions, RawSpec};
use crate::topo::ecc::crossings::{Direction, zero_crossings};
use crate::topo::ecc::{Construction, Ecc, EccError, EccOptions, Filtration, NanPolicy};
use crate::topo::msc::complex::NO_LABEL;
use crate::topo::msc::simplified::{Simplified, threshold_of};
use crate::topo::smooth::{SigmaUnits, Smoothing};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

pyo3::create_exception!(_topoview, TopoviewError, PyException, "An error topoview reports about its input.");
pyo3::create_exception!(_topoview, ReadError, TopoviewError, "A file topoview cannot read.");

fn error(e: impl std::fmt::Display) -> PyErr {
    TopoviewError::new_err(e.to_string())
}

/// The backends, opened once per process (opening CUDA costs a context).
fn backend(choice: &str) -> PyResult<&'static Backend> {
    static AUTO: OnceLock<Backend> = OnceLock::new();
    static CPU: OnceLock<Backend> = OnceLock::new();
    static CUDA: OnceLock<Result<Backend, String>> = OnceLock::new();
    match choice {
        "auto" => Ok(AUTO
            .get_or_init(|| Backend::new(Choice::Auto, None).unwrap_or_else(|e| Backend::cpu_because(e.0)))),
        "cpu" => Ok(CPU.get_or_init(|| Backend::cpu_because("backend=\"cpu\"".into()))),
        "cuda" => CUDA
            .get_or_init(|| Backend::new(Choice::Cuda, None).map_err(|e| e.0))
            .as_ref()
            .map_err(|e| error(format!("no CUDA device: {e}"))),
        other => Err(error(format!("unknown backend '{other}' (expected auto, cuda or cpu)"))),
    }
}

/// A unit of work for the worker thread.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// The one worker thread that runs every call's computation, started on first use. One thread
/// for the process's lifetime, not one per call: the CUDA backend keeps a device handle (a
/// stream and staging buffers) per thread that uses it, so a thread per call would leave a
/// handle behind at each call. Calls from several Python threads run one after another (each
/// uses every core, or the GPU).
fn worker() -> PyResult<&'static crossbeam_channel::Sender<Job>> {
    static WORKER: OnceLock<Result<crossbeam_channel::Sender<Job>, String>> = OnceLock::new();
    WORKER
        .get_or_init(|| {
            let (tx, rx) = crossbeam_channel::unbounded::<Job>();
            std::thread::Builder::new()
                .name("topoview-python".into())
                .spawn(move || {
                    for job in rx {
                        job();
                    }
                })
                .map(|_| tx)
                .map_err(|e| format!("cannot start topoview's worker thread: {e}"))
        })
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(e.clone()))
}

/// Runs `work` on the worker thread with the GIL released; meanwhile polls for signals (Ctrl+C
/// raises the cancel flag, waits for the work to stop, and raises KeyboardInterrupt) and calls
/// `progress(fraction)` with the share of `total` work units done.
fn run<R: Send + 'static>(
    py: Python<'_>,
    total: u64,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Control) -> R + Send + 'static,
) -> PyResult<R> {
    let done = Arc::new(AtomicU64::new(0));
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = crossbeam_channel::bounded::<std::thread::Result<R>>(1);
    let (d, c) = (done.clone(), cancel.clone());
    let job: Job = Box::new(move || {
        let tick = |n: u64| {
            d.fetch_add(n, Ordering::Relaxed);
        };
        let ctl = Control { progress: Some(&tick), cancel: Some(&c) };
        // A panic stays in this call (its error below); the worker lives on for the next.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&ctl)));
        // The caller may have stopped listening: fine.
        let _ = tx.send(r);
    });
    worker()?.send(job).map_err(|_| PyRuntimeError::new_err("topoview's worker thread has stopped"))?;
    let stop = |e: PyErr| {
        cancel.store(true, Ordering::Relaxed);
        e
    };
    let mut failed = None;
    let result = loop {
        let polled = py.detach(|| rx.recv_timeout(std::time::Duration::from_millis(50)));
        match polled {
            Ok(r) => break Some(r),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break None,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
        }
        if let Err(e) = py.check_signals() {
            failed = Some(stop(e));
            break None;
        }
        if let Some(cb) = progress {
            let f = (done.load(Ordering::Relaxed) as f64 / total.max(1) as f64).min(1.0);
            if let Err(e) = cb.call1((f,)) {
                failed = Some(stop(e));
                break None;
            }
        }
    };
    if let Some(e) = failed {
        // The work stops at its next check point; wait for it, so the next call starts clean.
        let _ = py.detach(|| rx.recv());
        return Err(e);
    }
    let r = result
        .ok_or_else(|| PyRuntimeError::new_err("topoview's worker thread has stopped"))?
        .map_err(|_| PyRuntimeError::new_err("topoview's computation panicked"))?;
    if let Some(cb) = progress {
        cb.call1((1.0,))?;
    }
    Ok(r)
}

/// A failed computation's error: KeyboardInterrupt when it was cancelled (by Ctrl+C; the
/// signal itself was consumed while polling), else a TopoviewError with the library's message.
fn failed(cancelled: bool, e: impl std::fmt::Display) -> PyErr {
    if cancelled { PyKeyboardInterrupt::new_err("cancelled") } else { error(e) }
}

/// `s` mapped by `f` on all cores into a new buffer, in huge pages where the kernel allows: the
/// copy of a call's input (a field owns its samples) and the conversion of a curve's thresholds
/// to the data's type. On one core into fresh pages, converting the 2^24 thresholds of a 256^3
/// f32 field took longer than a third of its ECC (16 cores).
fn mapped<S: Copy + Sync, T: Send>(s: &[S], f: impl Fn(S) -> T + Sync + Send) -> Vec<T> {
    use rayon::prelude::*;
    let mut v = crate::mem::with_capacity(s.len());
    v.par_extend(s.par_iter().map(|&x| f(x)));
    v
}

/// A curve's thresholds (exact values of the field) as a numpy array of the field's type.
fn thresholds_as(py: Python<'_>, t: Vec<f64>, dtype: Dtype) -> Bound<'_, PyAny> {
    macro_rules! as_type {
        ($($d:ident => $t:ty),*) => {
            match dtype {
                $(Dtype::$d => mapped(&t, |x| x as $t).into_pyarray(py).into_any(),)*
                Dtype::F64 => t.into_pyarray(py).into_any(),
            }
        };
    }
    as_type!(U8 => u8, I8 => i8, U16 => u16, I16 => i16, U32 => u32, I32 => i32, F32 => f32)
}

/// The samples of a flat, contiguous numpy array of a dtype topoview reads.
fn samples(a: &Bound<'_, PyAny>) -> PyResult<Samples> {
    macro_rules! try_dtype {
        ($t:ty, $v:ident) => {
            if let Ok(x) = a.extract::<PyReadonlyArray1<'_, $t>>() {
                return Ok(Samples::$v(mapped(x.as_slice().map_err(error)?, |v| v)));
            }
        };
    }
    try_dtype!(u8, U8);
    try_dtype!(i8, I8);
    try_dtype!(u16, U16);
    try_dtype!(i16, I16);
    try_dtype!(u32, U32);
    try_dtype!(i32, I32);
    try_dtype!(f32, F32);
    try_dtype!(f64, F64);
    let dtype = a.getattr("dtype").map_or_else(|_| "?".to_string(), |d| d.to_string());
    Err(error(format!("unsupported dtype {dtype} (topoview reads u8, i8, u16, i16, u32, i32, f32, f64)")))
}

/// The field of flat samples `data` with `dims` (x first) and voxel `spacing`.
fn field(data: &Bound<'_, PyAny>, dims: Vec<usize>, spacing: Option<Vec<f64>>) -> PyResult<ScalarField> {
    let f = ScalarField::new(&dims, samples(data)?).map_err(error)?;
    match spacing {
        Some(s) => {
            let mut sp = [1.0; 3];
            for (a, v) in s.iter().take(3).enumerate() {
                sp[a] = *v;
            }
            f.with_spacing(sp).map_err(error)
        }
        None => Ok(f),
    }
}

/// The flat samples of `f` as a numpy array that owns them (no copy).
fn to_numpy<'py>(py: Python<'py>, s: Samples) -> Bound<'py, PyAny> {
    macro_rules! owned {
        ($($v:ident),*) => {
            match s {
                $(Samples::$v(v) => v.into_pyarray(py).into_any(),)*
            }
        };
    }
    owned!(U8, I8, U16, I16, U32, I32, F32, F64)
}

/// `topoview.open`'s work: the samples (flat, x fastest), dims, spacing, affine (or None),
/// the reader's notes and the dtype's name.
#[pyfunction]
#[pyo3(signature = (path, dims=None, dtype=None, endian="little", offset=0, volume=None))]
#[allow(clippy::type_complexity)]
fn open<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    dims: Option<Vec<usize>>,
    dtype: Option<&str>,
    endian: &str,
    offset: u64,
    volume: Option<usize>,
) -> PyResult<(Bound<'py, PyAny>, Vec<usize>, Vec<f64>, Option<[[f64; 4]; 4]>, Vec<String>, &'static str)> {
    let raw = match (dims, dtype) {
        (Some(dims), Some(d)) => Some(RawSpec {
            dims,
            dtype: Dtype::parse(d).ok_or_else(|| {
                error(format!("unknown dtype '{d}' (u8, i8, u16, i16, u32, i32, f32, f64)"))
            })?,
            endian: match endian {
                "little" => Endian::Little,
                "big" => Endian::Big,
                e => return Err(error(format!("unknown endian '{e}' (little or big)"))),
            },
            offset,
        }),
        (None, None) => None,
        _ => return Err(error("a raw file needs both dims and dtype")),
    };
    let opts = OpenOptions { raw, volume };
    let total = crate::io::file_len(&path);
    let f = run(py, total, None, move |ctl| crate::io::open_with(&path, &opts, ctl))?
        .map_err(|e| ReadError::new_err(e.to_string()))?;
    let (shape, spacing) = (f.shape().to_vec(), f.spacing()[..f.ndim()].to_vec());
    let (affine, notes, dtype) = (f.affine, f.notes.clone(), f.dtype().name());
    Ok((to_numpy(py, f.into_samples()), shape, spacing, affine, notes, dtype))
}

fn ecc_options(construction: &str, superlevel: bool, nan: &str) -> PyResult<EccOptions> {
    Ok(EccOptions {
        construction: construction.parse::<Construction>().map_err(error)?,
        filtration: if superlevel { Filtration::Superlevel } else { Filtration::Sublevel },
        nan: nan.parse::<NanPolicy>().map_err(error)?,
        ..EccOptions::default()
    })
}

fn smoothing(sigma: f64, units: &str, truncate: f64) -> PyResult<Smoothing> {
    let units = match units {
        "voxels" => SigmaUnits::Voxels,
        "physical" => SigmaUnits::Physical,
        u => return Err(error(format!("unknown sigma units '{u}' (voxels or physical)"))),
    };
    Ok(Smoothing { sigma, units, truncate })
}

/// `topoview.ecc`'s work: thresholds (in the field's type: f32 after smoothing), chi (i64) and
/// where it ran.
#[pyfunction]
#[pyo3(signature = (data, dims, spacing, construction, superlevel, nan, sigma, sigma_units, truncate, backend, progress))]
#[allow(clippy::too_many_arguments)]
fn ecc<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dims: Vec<usize>,
    spacing: Option<Vec<f64>>,
    construction: &str,
    superlevel: bool,
    nan: &str,
    sigma: Option<f64>,
    sigma_units: &str,
    truncate: f64,
    backend: &str,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, String)> {
    let f = field(data, dims, spacing)?;
    let opts = ecc_options(construction, superlevel, nan)?;
    let b = self::backend(backend)?;
    let smooth = sigma.map(|s| smoothing(s, sigma_units, truncate)).transpose()?;
    let n = f.len() as u64;
    let (e, ran) = match smooth {
        Some(s) => {
            let total = n * (f.ndim() as u64 + 1);
            let (_, e, ran) = run(py, total, progress, move |ctl| b.smooth_ecc(&f, &s, &opts, ctl))?
                .map_err(|e| failed(e.is_cancelled(), e))?;
            (e, ran)
        }
        None => run(py, n, progress, move |ctl| b.ecc(&f, &opts, ctl))?.map_err(|e| match e {
            // The library's message names the command line's flag; say it in Python.
            EccError::NonFinite { nan, inf } => error(format!(
                "{nan} NaN and {inf} infinite samples; pass nan=\"absent\" to leave NaN voxels out \
                 of every sublevel set and keep infinities as ordinary values"
            )),
            e => failed(e == EccError::Cancelled, e),
        })?,
    };
    let Ecc { thresholds, chi, dtype, .. } = e;
    Ok((thresholds_as(py, thresholds, dtype), chi.into_pyarray(py).into_any(), b.where_ran(&ran)))
}

/// `topoview.smooth`'s work: the smoothed samples (f32, flat) and where it ran.
#[pyfunction]
#[pyo3(signature = (data, dims, spacing, sigma, sigma_units, truncate, backend, progress))]
#[allow(clippy::too_many_arguments)]
fn smooth<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dims: Vec<usize>,
    spacing: Option<Vec<f64>>,
    sigma: f64,
    sigma_units: &str,
    truncate: f64,
    backend: &str,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let f = field(data, dims, spacing)?;
    let s = smoothing(sigma, sigma_units, truncate)?;
    let b = self::backend(backend)?;
    let total = (f.len() * f.ndim()) as u64;
    let (out, ran) = run(py, total, progress, move |ctl| b.smooth(&f, &s, ctl))?
        .map_err(|e| failed(e == crate::topo::smooth::SmoothError::Cancelled, e))?;
    Ok((to_numpy(py, out.into_samples()), b.where_ran(&ran)))
}

/// `topoview.zero_crossings`'s work: per crossing, the last threshold before it, the first
/// after it, chi there, and +1 (negative to positive) or -1.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn crossings(
    thresholds: Vec<f64>,
    chi: Vec<i64>,
) -> PyResult<(Vec<f64>, Vec<f64>, Vec<i64>, Vec<i64>, Vec<i8>)> {
    if thresholds.len() != chi.len() {
        return Err(error(format!("{} thresholds but {} chi values", thresholds.len(), chi.len())));
    }
    let e = Ecc {
        dtype: Dtype::F64,
        construction: Construction::TopCells,
        filtration: Filtration::Sublevel,
        thresholds,
        chi,
    };
    let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in zero_crossings(&e) {
        out.0.push(c.last_before);
        out.1.push(c.first_after);
        out.2.push(c.chi_before);
        out.3.push(c.chi_after);
        out.4.push(if c.direction == Direction::NegativeToPositive { 1 } else { -1 });
    }
    Ok(out)
}

/// `topoview.msc`'s work: a dict of flat arrays (critical points, arcs at the level, the
/// diagram, the hierarchy, labels) and the level's threshold.
#[pyfunction]
#[pyo3(signature = (data, dims, spacing, persistence, relative, progress))]
fn msc<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dims: Vec<usize>,
    spacing: Option<Vec<f64>>,
    persistence: Option<f64>,
    relative: Option<f64>,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let f = field(data, dims, spacing)?;
    let threshold = threshold_of(&f, persistence, relative).map_err(error)?;
    let budget = crate::mem::available_bytes().map_or(u64::MAX, |a| a / 10 * 9);
    let (a, f) = run(py, 6, progress, move |ctl| (crate::topo::msc::analyse_within(&f, ctl, budget), f))?;
    let a = a.map_err(|e| failed(matches!(e, crate::topo::msc::MscError::Cancelled(_)), e))?;
    let v = Simplified::new(&f, &a, threshold);
    let (c, h) = (&a.complex, &a.hierarchy);
    let nd = f.ndim();
    let d = PyDict::new(py);
    let points = &c.critical;
    let coords = |get: &dyn Fn(usize) -> f64| -> Vec<f64> {
        (0..points.len()).flat_map(|i| (0..nd).map(move |k| (i, k))).map(|(i, k)| get(i * 3 + k)).collect()
    };
    d.set_item("index", points.iter().map(|p| p.index).collect::<Vec<u8>>().into_pyarray(py))?;
    d.set_item("cell", coords(&|j| points[j / 3].cell_coords[j % 3] as f64).into_pyarray(py))?;
    d.set_item("position", coords(&|j| points[j / 3].position[j % 3]).into_pyarray(py))?;
    d.set_item("value", points.iter().map(|p| p.value).collect::<Vec<f64>>().into_pyarray(py))?;
    d.set_item("vertex", points.iter().map(|p| p.vertex as u64).collect::<Vec<u64>>().into_pyarray(py))?;
    d.set_item("alive", (0..points.len()).map(|i| v.alive(i)).collect::<Vec<bool>>().into_pyarray(py))?;
    d.set_item("death_level", h.death_levels().into_pyarray(py))?;
    d.set_item("arc_upper", v.arcs.iter().map(|(a, _)| a.upper as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("arc_lower", v.arcs.iter().map(|(a, _)| a.lower as i64).collect::<Vec<_>>().into_pyarray(py))?;
    let mult = |a: &crate::topo::msc::simplify::LiveArc| {
        if a.multiplicity.overflowed {
            u64::MAX
        } else {
            u64::try_from(a.multiplicity.count).unwrap_or(u64::MAX)
        }
    };
    d.set_item("arc_multiplicity", v.arcs.iter().map(|(a, _)| mult(a)).collect::<Vec<_>>().into_pyarray(py))?;
    let polylines: Vec<Bound<'py, PyAny>> = v
        .arcs
        .iter()
        .map(|(_, p)| {
            p.iter().flat_map(|q| q[..nd].to_vec()).collect::<Vec<f64>>().into_pyarray(py).into_any()
        })
        .collect();
    d.set_item("arc_polylines", polylines)?;
    let id: std::collections::HashMap<_, _> =
        points.iter().enumerate().map(|(i, p)| (p.cell, i as i64)).collect();
    let dg = &a.diagram;
    d.set_item("diagram_dim", dg.iter().map(|p| p.dim as u8).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("diagram_birth", dg.iter().map(|p| p.birth).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item(
        "diagram_death",
        dg.iter().map(|p| p.death.unwrap_or(f64::INFINITY)).collect::<Vec<_>>().into_pyarray(py),
    )?;
    d.set_item(
        "diagram_birth_point",
        dg.iter().map(|p| id[&p.birth_cell]).collect::<Vec<_>>().into_pyarray(py),
    )?;
    d.set_item(
        "diagram_death_point",
        dg.iter().map(|p| p.death_cell.map_or(-1, |c| id[&c])).collect::<Vec<_>>().into_pyarray(py),
    )?;
    let x = &h.cancellations;
    d.set_item("cancel_upper", x.iter().map(|c| c.upper as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("cancel_lower", x.iter().map(|c| c.lower as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("cancel_persistence", x.iter().map(|c| c.persistence).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("cancel_level", x.iter().map(|c| c.level).collect::<Vec<_>>().into_pyarray(py))?;
    let labels = |l: Vec<u32>| -> Vec<i32> {
        l.into_iter().map(|x| if x == NO_LABEL { -1 } else { x as i32 }).collect()
    };
    d.set_item("basins", labels(h.labels_at(&c.basins, v.steps)).into_pyarray(py))?;
    d.set_item("mountains", labels(h.labels_at(&c.mountains, v.steps)).into_pyarray(py))?;
    d.set_item("blocked", threshold.map_or(0, |t| h.blocked_at(t).count()))?;
    d.set_item("threshold", threshold)?;
    d.set_item("cancellations", v.steps)?;
    Ok(d)
}

/// `topoview.set_threads`: the CPU worker threads for the rest of the process.
#[pyfunction]
fn set_threads(n: usize) -> PyResult<()> {
    crate::compute::backend::set_threads(n).map_err(error)
}

/// The backend `backend` names, in words ("CUDA: NVIDIA H100" or "CPU, 16 threads (why)").
#[pyfunction]
#[pyo3(signature = (backend="auto"))]
fn describe_backend(backend: &str) -> PyResult<String> {
    Ok(self::backend(backend)?.describe())
}

#[pymodule]
#[pyo3(name = "_topoview")]
fn topoview_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TopoviewError", m.py().get_type::<TopoviewError>())?;
    m.add("ReadError", m.py().get_type::<ReadError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(ecc, m)?)?;
    m.add_function(wrap_pyfunction!(smooth, m)?)?;
    m.add_function(wrap_pyfunction!(crossings, m)?)?;
    m.add_function(wrap_pyfunction!(msc, m)?)?;
    m.add_function(wrap_pyfunction!(describe_backend, m)?)?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    Ok(())
}
