//! Python bindings: the native module `topoview._topoview` that the package in
//! `python/topoview` wraps. Arrays cross as flat, contiguous numpy arrays with the field's
//! dims (x first, x fastest); the Python side maps numpy's axis orders onto that, so this module
//! knows nothing of C or Fortran order. Every computation runs on one worker thread with the GIL
//! released while the calling thread polls for Ctrl+C (which raises the computation's cancel
//! flag) and reports progress to an optional callback.

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use topoview_compute::backend::{Backend, Choice, SmoothEccError};
use topoview_core::control::Control;
use topoview_core::field::{Dtype, Samples, ScalarField};
use topoview_core::io::{Endian, OpenOptions, RawSpec};
use topoview_core::topo::ecc::crossings::{Direction, zero_crossings};
use topoview_core::topo::ecc::{Chi, Construction, Ecc, EccError, EccOptions, Filtration, NanPolicy};
use topoview_core::topo::msc::Analysis;
use topoview_core::topo::msc::complex::NO_LABEL;
use topoview_core::topo::msc::simplified::{Simplified, threshold_of};
use topoview_core::topo::smooth::{SigmaUnits, Smoothing};

pyo3::create_exception!(_topoview, TopoviewError, PyException, "An error topoview reports about its input.");
pyo3::create_exception!(_topoview, ReadError, TopoviewError, "A file topoview cannot read.");

fn error(e: impl std::fmt::Display) -> PyErr {
    TopoviewError::new_err(e.to_string())
}

/// The backends, opened once per process (opening CUDA costs a context).
fn backend(choice: &str) -> PyResult<&'static Backend> {
    static AUTO: OnceLock<Backend> = OnceLock::new();
    static CPU: OnceLock<Backend> = OnceLock::new();
    static CUDA: OnceLock<Result<Backend, topoview_compute::backend::NoGpu>> = OnceLock::new();
    match choice {
        "auto" => Ok(AUTO
            .get_or_init(|| Backend::new(Choice::Auto, None).unwrap_or_else(|e| Backend::cpu_because(e.0)))),
        "cpu" => Ok(CPU.get_or_init(|| Backend::cpu_because("backend=\"cpu\"".into()))),
        "cuda" => CUDA
            .get_or_init(|| Backend::new(Choice::Cuda, None))
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
/// uses every core, or the GPU). A process forked after its parent used topoview has neither
/// this thread nor rayon's: it gets an error that says so, not a hang.
fn worker() -> PyResult<crossbeam_channel::Sender<Job>> {
    static WORKER: std::sync::Mutex<Option<(u32, crossbeam_channel::Sender<Job>)>> =
        std::sync::Mutex::new(None);
    let mut w = WORKER.lock().unwrap_or_else(|p| p.into_inner());
    match &*w {
        Some((pid, tx)) if *pid == std::process::id() => return Ok(tx.clone()),
        Some(_) => {
            return Err(error(
                "topoview was used in this process's parent before it forked, and its threads \
                 do not survive a fork: start worker processes with the 'spawn' method \
                 (multiprocessing.set_start_method('spawn'); Dask does by default)",
            ));
        }
        None => {}
    }
    let (tx, rx) = crossbeam_channel::unbounded::<Job>();
    std::thread::Builder::new()
        .name("topoview-python".into())
        .spawn(move || {
            for job in rx {
                job();
            }
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start topoview's worker thread: {e}")))?;
    *w = Some((std::process::id(), tx.clone()));
    Ok(tx)
}

/// Runs `work` on the worker thread with the GIL released; meanwhile polls for signals (Ctrl+C
/// raises the cancel flag and KeyboardInterrupt) and calls `progress(fraction)` with the share
/// of `total` work units done.
fn run<R: Send + 'static>(
    py: Python<'_>,
    total: u64,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Control) -> R + Send + 'static,
) -> PyResult<R> {
    let done = Arc::new(AtomicU64::new(0));
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = crossbeam_channel::bounded::<Result<R, String>>(1);
    let (d, c) = (done.clone(), cancel.clone());
    let job: Job = Box::new(move || {
        let tick = |n: u64| {
            d.fetch_add(n, Ordering::Relaxed);
        };
        let ctl = Control { progress: Some(&tick), cancel: Some(&c) };
        // A panic stays in this call (its error below); the worker lives on for the next.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&ctl))).map_err(|p| {
            p.downcast_ref::<&str>()
                .map(|m| m.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        });
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
            // 1.0 is said once, when the result is in.
            if f >= 1.0 {
                continue;
            }
            if let Err(e) = cb.call1((f,)) {
                failed = Some(stop(e));
                break None;
            }
        }
    };
    if let Some(e) = failed {
        // The work owns its data and stops at its next check point (or, still queued, at its
        // first): no need to wait for it here.
        return Err(e);
    }
    let r = result
        .ok_or_else(|| PyRuntimeError::new_err("topoview's worker thread has stopped"))?
        .map_err(|m| PyRuntimeError::new_err(format!("topoview's computation panicked: {m}")))?;
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
/// copy of a call's input (a field owns its samples). On one core into fresh pages, a map of
/// 2^24 values (a 256^3 f32 curve's thresholds, when they were converted here) took longer
/// than a third of that field's ECC on 16 cores.
fn mapped<S: Copy + Sync, T: Send>(s: &[S], f: impl Fn(S) -> T + Sync + Send) -> Vec<T> {
    use rayon::prelude::*;
    let mut v = topoview_core::mem::with_capacity(s.len());
    v.par_extend(s.par_iter().map(|&x| f(x)));
    v
}

/// The x-fastest samples of an array of shape `dims` (x = axis 0) laid out in C order (its last
/// axis fastest): a transposing copy on all cores. Each task fills the output planes of a few
/// consecutive last-axis indices, a tile at a time (several cache lines of input per row read,
/// whole runs written).
fn transposed<T: Copy + Default + Send + Sync>(c: &[T], dims: &[usize]) -> Vec<T> {
    use rayon::prelude::*;
    let (n0, n1, n2) = match *dims {
        [a, b] => (a, 1, b),
        [a, b, d] => (a, b, d),
        _ => return mapped(c, |v| v),
    };
    // Planes per task: up to 256 bytes of each input row per read (measured on the dev VM,
    // 256^3 f32: 87 ms with 64-byte reads, 33 ms with 256), fewer when that would leave
    // threads without a task.
    let widest = (256 / std::mem::size_of::<T>()).max(16);
    let b = (n2 / (2 * rayon::current_num_threads())).clamp(16, widest);
    let plane = n0 * n1;
    let mut out = topoview_core::mem::with_capacity(c.len());
    out.par_extend(rayon::iter::repeat_n(T::default(), c.len()));
    out.par_chunks_mut(plane * b).enumerate().for_each(|(k, chunk)| {
        let (first, count) = (k * b, chunk.len() / plane);
        let mut tile = vec![T::default(); b * b];
        for i1 in 0..n1 {
            for i0 in (0..n0).step_by(b) {
                let w = b.min(n0 - i0);
                for r in 0..w {
                    let row = &c[((i0 + r) * n1 + i1) * n2 + first..][..count];
                    for (j, &v) in row.iter().enumerate() {
                        tile[j * b + r] = v;
                    }
                }
                for j in 0..count {
                    chunk[j * plane + i1 * n0 + i0..][..w].copy_from_slice(&tile[j * b..j * b + w]);
                }
            }
        }
    });
    out
}

/// The samples of a flat, contiguous numpy array of a dtype topoview reads: copied as they lie
/// (x fastest), or transposed from C order when `c_order`; without the GIL, so a copy waiting
/// for cores another call is using holds up no Python thread.
fn samples(py: Python<'_>, a: &Bound<'_, PyAny>, dims: &[usize], c_order: bool) -> PyResult<Samples> {
    macro_rules! try_dtype {
        ($t:ty, $v:ident) => {
            if let Ok(x) = a.extract::<PyReadonlyArray1<'_, $t>>() {
                let s = x.as_slice().map_err(error)?;
                return Ok(Samples::$v(
                    py.detach(|| if c_order { transposed(s, dims) } else { mapped(s, |v| v) }),
                ));
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

/// The field of flat samples `data` with `dims` (x first; the samples x fastest, or in C order
/// when `c_order`) and voxel `spacing`.
fn field(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    dims: Vec<usize>,
    c_order: bool,
    spacing: Option<Vec<f64>>,
) -> PyResult<ScalarField> {
    // The copy below runs on rayon's threads, which a forked child lacks: refuse first.
    worker()?;
    let n: usize = dims.iter().product();
    if data.len()? != n {
        return Err(error(format!("{} samples for dims {dims:?}", data.len()?)));
    }
    let f = ScalarField::new(&dims, samples(py, data, &dims, c_order)?).map_err(error)?;
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
    worker()?;
    let total = topoview_core::io::file_len(&path);
    let f = run(py, total, None, move |ctl| topoview_core::io::open_with(&path, &opts, ctl))?
        .map_err(|e| ReadError::new_err(e.to_string()))?;
    let (shape, spacing) = (f.shape().to_vec(), f.spacing()[..f.ndim()].to_vec());
    let (affine, notes, dtype) = (f.affine, f.notes_with_series(), f.dtype().name());
    Ok((to_numpy(py, f.into_samples()), shape, spacing, affine, notes, dtype))
}

/// Where a call ran, with why the CPU does everything (no driver...), as the first call's
/// warning says it.
fn where_ran(b: &topoview_compute::backend::Backend, ran: &topoview_compute::backend::Ran) -> String {
    match b.why_cpu().filter(|_| !ran.on_gpu) {
        Some(why) => format!("{} ({why})", b.where_ran(ran)),
        None => b.where_ran(ran),
    }
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

/// An ECC error, in Python's words where the library's name the command line's flag.
fn ecc_error(e: EccError) -> PyErr {
    match e {
        EccError::NonFinite { nan, inf } => error(format!(
            "{nan} NaN and {inf} infinite samples; pass nan=\"absent\" to leave NaN voxels out of \
             every sublevel set and keep infinities as ordinary values"
        )),
        e => failed(e == EccError::Cancelled, e),
    }
}

/// Where a computation ran, in words, and why not on the GPU when that failed (None otherwise).
type Where = (String, Option<String>);

/// `topoview.ecc`'s work: thresholds (in the field's type: f32 after smoothing), chi (i64) and
/// where it ran.
#[pyfunction]
#[pyo3(signature = (data, dims, c_order, spacing, construction, superlevel, nan, sigma, sigma_units, truncate, backend, progress))]
#[allow(clippy::too_many_arguments)]
fn ecc<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dims: Vec<usize>,
    c_order: bool,
    spacing: Option<Vec<f64>>,
    construction: &str,
    superlevel: bool,
    nan: &str,
    sigma: Option<f64>,
    sigma_units: &str,
    truncate: f64,
    backend: &str,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Where)> {
    let f = field(py, data, dims, c_order, spacing)?;
    let opts = ecc_options(construction, superlevel, nan)?;
    let b = self::backend(backend)?;
    let smooth = sigma.map(|s| smoothing(s, sigma_units, truncate)).transpose()?;
    let n = f.len() as u64;
    let (e, ran) = match smooth {
        Some(s) => {
            let total = n * (f.ndim() as u64 + 1);
            let (_, e, ran) = run(py, total, progress, move |ctl| b.smooth_ecc(&f, &s, &opts, ctl))?
                .map_err(|e| match e {
                    SmoothEccError::Ecc(e) => ecc_error(e),
                    e => failed(e.is_cancelled(), e),
                })?;
            (e, ran)
        }
        None => run(py, n, progress, move |ctl| b.ecc(&f, &opts, ctl))?.map_err(ecc_error)?,
    };
    // The thresholds come in the field's dtype; chi stays int64 in Python (the documented
    // type, and the one numpy's arithmetic on it expects).
    let Ecc { thresholds, chi, .. } = e;
    let chi = py.detach(move || chi.into_i64());
    Ok((to_numpy(py, thresholds), chi.into_pyarray(py).into_any(), (where_ran(b, &ran), ran.fallback)))
}

/// `topoview.smooth`'s work: the smoothed samples (f32, flat) and where it ran.
#[pyfunction]
#[pyo3(signature = (data, dims, c_order, spacing, sigma, sigma_units, truncate, backend, progress))]
#[allow(clippy::too_many_arguments)]
fn smooth<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dims: Vec<usize>,
    c_order: bool,
    spacing: Option<Vec<f64>>,
    sigma: f64,
    sigma_units: &str,
    truncate: f64,
    backend: &str,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Where)> {
    let f = field(py, data, dims, c_order, spacing)?;
    let s = smoothing(sigma, sigma_units, truncate)?;
    let b = self::backend(backend)?;
    let total = (f.len() * f.ndim()) as u64;
    let (out, ran) = run(py, total, progress, move |ctl| b.smooth(&f, &s, ctl))?
        .map_err(|e| failed(e == topoview_core::topo::smooth::SmoothError::Cancelled, e))?;
    Ok((to_numpy(py, out.into_samples()), (where_ran(b, &ran), ran.fallback)))
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
        construction: Construction::TopCells,
        filtration: Filtration::Sublevel,
        thresholds: Samples::F64(thresholds),
        chi: Chi::I64(chi),
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

/// What `msc` computes off the GIL: the analysis and, at the level, what the dict needs.
struct MscLevel {
    analysis: Analysis,
    nd: usize,
    threshold: Option<f64>,
    steps: usize,
    blocked: usize,
    alive: Vec<bool>,
    /// Live arcs: upper, lower, multiplicity (u64::MAX when it overflowed).
    arcs: Vec<(i64, i64, u64)>,
    /// Per live arc, its cell centres flattened (nd per point), upper end first.
    polylines: Vec<Vec<f64>>,
    basins: Vec<i32>,
    mountains: Vec<i32>,
}

/// The Morse-Smale complex of `f` at the level `persistence` or `relative`: the level is judged
/// first, then the analysis runs, and the level's arcs and labels are drawn from it.
fn msc_level(
    f: &ScalarField,
    persistence: Option<f64>,
    relative: Option<f64>,
    backend: &Backend,
    ctl: &Control,
) -> Result<(MscLevel, topoview_compute::backend::Ran), (bool, String)> {
    let threshold = threshold_of(f, persistence, relative).map_err(|e| (false, e.to_string()))?;
    let budget = topoview_core::mem::default_budget().unwrap_or(u64::MAX);
    let (analysis, ran) = backend
        .msc(f, ctl, budget)
        .map_err(|e| (matches!(e, topoview_core::topo::msc::MscError::Cancelled(_)), e.to_string()))?;
    let v = Simplified::new(f, &analysis, threshold);
    let (c, h) = (&analysis.complex, &analysis.hierarchy);
    let nd = f.ndim();
    let labels = |l: Vec<u32>| -> Vec<i32> {
        l.into_iter().map(|x| if x == NO_LABEL { -1 } else { x as i32 }).collect()
    };
    let mult = |a: &topoview_core::topo::msc::simplify::LiveArc| {
        if a.multiplicity.overflowed {
            u64::MAX
        } else {
            u64::try_from(a.multiplicity.count).unwrap_or(u64::MAX)
        }
    };
    let (steps, blocked) = (v.steps, threshold.map_or(0, |t| h.blocked_at(t).count()));
    let alive = (0..c.critical.len()).map(|i| v.alive(i)).collect();
    let arcs = v.arcs().iter().map(|a| (a.upper as i64, a.lower as i64, mult(a))).collect();
    let polylines = v.paths().map(|p| p.iter().flat_map(|q| q[..nd].to_vec()).collect()).collect();
    let basins = labels(h.labels_at(&c.basins, steps));
    let mountains = labels(h.labels_at(&c.mountains, steps));
    drop(v);
    Ok((MscLevel { analysis, nd, threshold, steps, blocked, alive, arcs, polylines, basins, mountains }, ran))
}

/// `topoview.msc`'s work: a dict of flat arrays (critical points, arcs at the level, the
/// diagram, the hierarchy, labels) and the level's threshold, and where its gradient ran.
#[pyfunction]
#[pyo3(signature = (data, dims, c_order, spacing, persistence, relative, backend, progress))]
#[allow(clippy::too_many_arguments)]
fn msc<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    dims: Vec<usize>,
    c_order: bool,
    spacing: Option<Vec<f64>>,
    persistence: Option<f64>,
    relative: Option<f64>,
    backend: &str,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, Where)> {
    let f = field(py, data, dims, c_order, spacing)?;
    let b = self::backend(backend)?;
    let (m, ran) = run(py, 6, progress, move |ctl| msc_level(&f, persistence, relative, b, ctl))?
        .map_err(|(cancelled, e)| failed(cancelled, e))?;
    let (c, h, nd) = (&m.analysis.complex, &m.analysis.hierarchy, m.nd);
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
    d.set_item("alive", m.alive.into_pyarray(py))?;
    d.set_item("death_level", h.death_levels().into_pyarray(py))?;
    d.set_item("arc_upper", m.arcs.iter().map(|a| a.0).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("arc_lower", m.arcs.iter().map(|a| a.1).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("arc_multiplicity", m.arcs.iter().map(|a| a.2).collect::<Vec<_>>().into_pyarray(py))?;
    let polylines: Vec<Bound<'py, PyAny>> =
        m.polylines.into_iter().map(|p| p.into_pyarray(py).into_any()).collect();
    d.set_item("arc_polylines", polylines)?;
    let id: std::collections::HashMap<_, _> =
        points.iter().enumerate().map(|(i, p)| (p.cell, i as i64)).collect();
    let dg = &m.analysis.diagram;
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
    d.set_item("basins", m.basins.into_pyarray(py))?;
    d.set_item("mountains", m.mountains.into_pyarray(py))?;
    d.set_item("blocked", m.blocked)?;
    d.set_item("threshold", m.threshold)?;
    d.set_item("cancellations", m.steps)?;
    Ok((d, (where_ran(b, &ran), ran.fallback)))
}

/// `topoview.rips`'s work: the bars as arrays of dimension, birth and death (`inf` for an
/// essential class), of points (`values` flat, rows of `dim`) or of the lower triangle of a
/// distance matrix (`lower`, row by row).
#[pyfunction]
#[pyo3(signature = (values, dim, lower, maxdim, threshold, backend="auto"))]
#[allow(clippy::type_complexity)]
fn rips<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    dim: usize,
    lower: bool,
    maxdim: usize,
    threshold: f32,
    backend: &str,
) -> PyResult<(
    Bound<'py, numpy::PyArray1<u8>>,
    Bound<'py, numpy::PyArray1<f32>>,
    Bound<'py, numpy::PyArray1<f32>>,
    Where,
)> {
    use topoview_core::topo::rips::{Distances, RipsError, RipsOptions};
    let v = values.as_slice()?.to_vec();
    let backend = self::backend(backend)?;
    let (b, ran) = run(py, 0, None, move |ctl| -> Result<_, RipsError> {
        let d = if lower {
            Distances::from_lower(v.iter().map(|&x| x as f32).collect())?
        } else {
            Distances::euclidean(&v, dim, ctl)?
        };
        let (barcode, ran) = backend.rips(&d, &RipsOptions { maxdim, threshold }, ctl)?;
        Ok((barcode.sorted(), ran))
    })?
    .map_err(|e| failed(matches!(e, RipsError::Cancelled(_)), e))?;
    Ok((
        b.bars.iter().map(|x| x.dim as u8).collect::<Vec<_>>().into_pyarray(py),
        b.bars.iter().map(|x| x.birth).collect::<Vec<_>>().into_pyarray(py),
        b.bars.iter().map(|x| x.death).collect::<Vec<_>>().into_pyarray(py),
        (where_ran(backend, &ran), ran.fallback),
    ))
}

/// `topoview.set_threads`: the CPU worker threads for the rest of the process.
#[pyfunction]
fn set_threads(n: usize) -> PyResult<()> {
    topoview_compute::backend::set_threads(n).map_err(error)
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
    m.add_function(wrap_pyfunction!(rips, m)?)?;
    m.add_function(wrap_pyfunction!(describe_backend, m)?)?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    Ok(())
}
