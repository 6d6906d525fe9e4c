//! The ECC of a field read a slab at a time from a [`SampleSource`] (a file, through
//! [`crate::io::Block`]), equal to [`super::ecc`] of the field read whole.
//!
//! Fields of at most 2^16 possible values (u8, i8, u16, i16) are read by the workers themselves:
//! each takes the next few planes, reads them with the planes either side (the kernel looks at
//! them) at their own place in the file, and adds their changes to its own histogram. Reading
//! then goes at the speed of every core, and memory is a small constant whatever the file's
//! size: a task's planes per worker, and a histogram each.
//!
//! Wider types are read front to back by one reader thread, which fills a slab of whole planes
//! while the slab before it is computed on all threads. Each slab's changes are summed per
//! distinct value, and those sorted runs are merged a few at a time on all threads
//! ([`super::runs`]): memory is then near that of the curve itself, which for such fields can
//! have an entry per voxel.

use super::histogram::Histogram;
use super::runs::{Runs, merge};
use super::{
    EccError, EccKey, EccOptions, Geometry, Held, HistogramScratch, NanPolicy, PerValue, buckets, curve,
    empty_histogram, threshold, with_filtration,
};
use crate::control::Control;
use crate::field::Key;
use crate::field::stats::count_non_finite_in;
use crate::field::{Dtype, Sample, SampleSource};
use crossbeam_channel::bounded;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Bytes of samples held at a time: two slabs of a wide type, or the tasks of all workers
/// together (at least one plane with its collar each).
pub const SLAB_BYTES: usize = 32 << 20;

/// The ECC of the field `source` reads, holding about [`SLAB_BYTES`] of it at a time.
pub fn ecc(source: &dyn SampleSource, opts: &EccOptions, ctl: &Control) -> Result<super::Ecc, EccError> {
    ecc_in_slabs(source, opts, SLAB_BYTES, ctl)
}

/// Planes of a field handed out in turn to whoever computes next: the CPU's workers a task at
/// a time, and a helper (the GPUs, see [`ecc_helped`]) a slab at a time, or the rest once it
/// has taken them over.
pub struct Planes {
    next: AtomicUsize,
    count: usize,
    /// The CPU's workers take no more.
    handed_over: AtomicBool,
}

impl Planes {
    pub fn new(count: usize) -> Planes {
        Planes { next: AtomicUsize::new(0), count, handed_over: AtomicBool::new(false) }
    }

    /// The next `n` (at least one) planes not yet taken, fewer at the end; `None` once all are.
    pub fn take(&self, n: usize) -> Option<std::ops::Range<usize>> {
        let z0 = self.next.fetch_add(n.max(1), Ordering::Relaxed);
        (z0 < self.count).then(|| z0..(z0 + n.max(1)).min(self.count))
    }

    /// [`Planes::take`] for the CPU's workers: `None` once a helper has taken the rest over.
    fn take_for_cpu(&self, n: usize) -> Option<std::ops::Range<usize>> {
        if self.handed_over.load(Ordering::Relaxed) { None } else { self.take(n) }
    }

    /// Stops the CPU's workers taking planes (each finishes the task it has): the rest is for
    /// the caller, whose way is the faster (the GPUs, whose staging wants every core).
    pub fn hand_over(&self) {
        self.handed_over.store(true, Ordering::Relaxed);
    }

    /// How many planes have been taken (not necessarily computed yet), and how many there are.
    pub fn taken(&self) -> (usize, usize) {
        (self.next.load(Ordering::Relaxed).min(self.count), self.count)
    }

    /// Whether every plane has been taken.
    pub fn all_taken(&self) -> bool {
        self.next.load(Ordering::Relaxed) >= self.count
    }

    /// Leaves nothing more to take, so that every taker stops (after a failure).
    pub fn stop(&self) {
        self.next.fetch_max(self.count, Ordering::Relaxed);
    }
}

/// Voxels counted (not 0 exactly where the value occurs: the CPU's packed 8-bit count leaves
/// out voxels whose change is 0) and change sums per value of a narrow type, value `lo + i` at
/// index `i`, over the planes a helper computed.
pub struct ValueSums {
    pub lo: i64,
    pub counts: Vec<u64>,
    pub sums: Vec<i64>,
    /// How many planes they cover.
    pub planes: usize,
}

/// What a helper did.
pub enum Helped {
    /// It took no planes (it was not ready before the CPU's workers had taken them all, it
    /// declined, or the work was cancelled).
    Nothing,
    Sums(ValueSums),
    /// It failed, why: the planes it took are lost, so the curve is computed again without it.
    Failed(String),
}

/// Computes planes beside the CPU's workers, on a thread of its own: takes planes from the
/// shared [`Planes`] until none are left.
pub type Helper<'a> = Box<dyn FnOnce(&Planes) -> Helped + Send + 'a>;

/// The planes a helper computed, and why it failed when it did.
#[derive(Debug, Default, PartialEq)]
pub struct HelpedBy {
    pub planes: usize,
    pub failed: Option<String>,
}

/// [`ecc`] with `helper` taking planes beside the CPU's workers: for 3D fields of types of at
/// most 2^16 values (others are computed without it; the GPU's slab of a 2D field is the whole
/// image). When the helper fails, the curve is computed again on the CPU alone, and the result
/// says why.
pub fn ecc_helped(
    source: &dyn SampleSource,
    opts: &EccOptions,
    ctl: &Control,
    helper: Helper,
) -> Result<(super::Ecc, HelpedBy), EccError> {
    let mut helper = Some(helper);
    if source.grid().shape.len() != 3 {
        return Ok((ecc(source, opts, ctl)?, HelpedBy::default()));
    }
    let e = match source.grid().dtype {
        Dtype::U8 => helped::<u8>(source, opts, SLAB_BYTES, ctl, &mut helper),
        Dtype::I8 => helped::<i8>(source, opts, SLAB_BYTES, ctl, &mut helper),
        Dtype::U16 => helped::<u16>(source, opts, SLAB_BYTES, ctl, &mut helper),
        Dtype::I16 => helped::<i16>(source, opts, SLAB_BYTES, ctl, &mut helper),
        _ => return Ok((ecc(source, opts, ctl)?, HelpedBy::default())),
    };
    let (e, by) = match e? {
        (_, HelpedBy { failed: Some(why), .. }) => {
            (ecc(source, opts, ctl)?, HelpedBy { planes: 0, failed: Some(why) })
        }
        done => done,
    };
    ctl.check()?;
    Ok((e, by))
}

fn helped<T: Sample>(
    source: &dyn SampleSource,
    opts: &EccOptions,
    slab_bytes: usize,
    ctl: &Control,
    helper: &mut Option<Helper>,
) -> Result<(super::Ecc, HelpedBy), EccError>
where
    T::Key: EccKey,
{
    let geo = Geometry::of_shape(&source.grid().shape);
    let (per_value, by) =
        with_filtration!(opts, histogram_read_by_workers::<T>(source, &geo, opts, slab_bytes, ctl, helper))?;
    Ok((curve(opts, &geo, per_value), by))
}

/// [`ecc`] in slabs of about `slab_bytes` (whole planes, at least one): the curve does not
/// depend on it; tests vary it to prove that.
pub fn ecc_in_slabs(
    source: &dyn SampleSource,
    opts: &EccOptions,
    slab_bytes: usize,
    ctl: &Control,
) -> Result<super::Ecc, EccError> {
    let e = match source.grid().dtype {
        Dtype::U8 => streamed::<u8>(source, opts, slab_bytes, ctl),
        Dtype::I8 => streamed::<i8>(source, opts, slab_bytes, ctl),
        Dtype::U16 => streamed::<u16>(source, opts, slab_bytes, ctl),
        Dtype::I16 => streamed::<i16>(source, opts, slab_bytes, ctl),
        Dtype::U32 => streamed::<u32>(source, opts, slab_bytes, ctl),
        Dtype::I32 => streamed::<i32>(source, opts, slab_bytes, ctl),
        Dtype::F32 => streamed::<f32>(source, opts, slab_bytes, ctl),
        Dtype::F64 => streamed::<f64>(source, opts, slab_bytes, ctl),
    }?;
    ctl.check()?;
    Ok(e)
}

fn streamed<T: Sample>(
    source: &dyn SampleSource,
    opts: &EccOptions,
    slab_bytes: usize,
    ctl: &Control,
) -> Result<super::Ecc, EccError>
where
    T::Key: EccKey,
{
    let geo = Geometry::of_shape(&source.grid().shape);
    let per_value = if T::BINS.is_some() {
        with_filtration!(
            opts,
            histogram_read_by_workers::<T>(source, &geo, opts, slab_bytes, ctl, &mut None)
        )?
        .0
    } else {
        with_filtration!(opts, per_value::<T>(source, &geo, opts, slab_bytes, ctl))?
    };
    Ok(curve(opts, &geo, per_value))
}

/// A slab as read: samples of planes `base..` holding the computed planes `range`.
struct Slab<T> {
    data: Vec<T>,
    base: usize,
    range: (usize, usize),
}

/// The sums per value of a type with a histogram, each worker reading its own planes, and
/// `helper`, when there is one, taking planes beside them on a thread of its own.
fn histogram_read_by_workers<T: Sample, const VERT: bool, const SUP: bool>(
    source: &dyn SampleSource,
    geo: &Geometry,
    opts: &EccOptions,
    slab_bytes: usize,
    ctl: &Control,
    helper: &mut Option<Helper>,
) -> Result<(PerValue<T>, HelpedBy), EccError>
where
    T::Key: EccKey,
{
    let planes = Planes::new(geo.planes);
    let cpu = || workers_histogram::<T, VERT, SUP>(source, geo, opts, slab_bytes, &planes, ctl);
    let (hist, helped) = match helper.take() {
        None => (cpu(), Helped::Nothing),
        Some(h) => std::thread::scope(|s| {
            let helping =
                std::thread::Builder::new().name("ecc-helper".into()).spawn_scoped(s, || h(&planes));
            let hist = cpu();
            let helped = match helping.map(|t| t.join()) {
                Ok(Ok(h)) => h,
                Ok(Err(_)) => Helped::Failed("the helper's thread panicked".into()),
                // It took nothing: the workers computed every plane.
                Err(_) => Helped::Nothing,
            };
            (hist, helped)
        }),
    };
    let cpu = hist?.0.into_per_value(|k| threshold::<T, SUP>(k));
    Ok(match helped {
        Helped::Nothing => (cpu, HelpedBy::default()),
        Helped::Failed(why) => (cpu, HelpedBy { planes: 0, failed: Some(why) }),
        Helped::Sums(v) => {
            let planes = v.planes;
            (merge::<T, SUP>(&[cpu, per_value_of::<T, SUP>(v)]), HelpedBy { planes, failed: None })
        }
    })
}

/// The histogram of the planes that the current pool's workers take from `planes`, each
/// reading its own, and how many planes that was.
fn workers_histogram<T: Sample, const VERT: bool, const SUP: bool>(
    source: &dyn SampleSource,
    geo: &Geometry,
    opts: &EccOptions,
    slab_bytes: usize,
    planes: &Planes,
    ctl: &Control,
) -> Result<(Histogram, usize), EccError>
where
    T::Key: EccKey,
{
    let pv = geo.plane_voxels();
    let plane_bytes = pv * size_of::<T>();
    // Fewer workers than threads when even one plane and its collar each would not fit.
    let workers = (slab_bytes / (3 * plane_bytes)).clamp(1, rayon::current_num_threads());
    // A task's planes are read with a plane either side, so a longer task reads less twice;
    // but four tasks a worker at least, so that the workers (and a helper) share the field.
    let per_task =
        (slab_bytes / workers / plane_bytes).saturating_sub(2).min(geo.planes.div_ceil(4 * workers)).max(1);
    let pc = geo.planes_per_chunk(opts.chunk_voxels);
    let work = || -> Result<_, EccError> {
        let (mut data, mut scratch) = (Vec::<T>::new(), HistogramScratch::<T::Key>::default());
        let (mut hist, mut done) = (empty_histogram::<T, SUP>(), 0);
        while let Some(task) = planes.take_for_cpu(per_task) {
            ctl.check()?;
            let (z0, z1) = (task.start, task.end);
            let (zs, ze) = (z0.saturating_sub(1), (z1 + 1).min(geo.planes));
            slab_buffer(&mut data, (ze - zs) * pv)?;
            source.read_at(zs * pv, bytemuck::cast_slice_mut(&mut data)).map_err(|e| EccError::Read(e.0))?;
            let held = Held { data: &data, base: zs, range: (z0, z1) };
            for c in 0..held.n_chunks(pc) {
                let (p0, p1) = held.chunk_planes(pc, c);
                scratch.add::<T, VERT, SUP>(held, geo, p0, p1, &mut hist);
                ctl.tick(((p1 - p0) * pv) as u64);
            }
            done += z1 - z0;
        }
        Ok((hist, done))
    };
    let per_worker = rayon::broadcast(|ctx| {
        if ctx.index() >= workers {
            return Ok(None);
        }
        // The others stop at their next task when one fails.
        work().map(Some).inspect_err(|_| planes.stop())
    });
    let (mut sum, mut done) = (empty_histogram::<T, SUP>(), 0);
    for w in per_worker {
        if let Some((h, d)) = w? {
            sum = sum.merge(h);
            done += d;
        }
    }
    Ok((sum, done))
}

/// The sums per value of the planes of `source` (a 3D field of a type of at most 2^16 values)
/// that the current pool's workers take from `planes`, as [`ecc_helped`]'s own workers compute
/// them: a helper's share made on the CPU (the tests' helper).
pub fn value_sums(
    source: &dyn SampleSource,
    opts: &EccOptions,
    planes: &Planes,
    ctl: &Control,
) -> Result<ValueSums, EccError> {
    let geo = Geometry::of_shape(&source.grid().shape);
    macro_rules! go {
        ($t:ty) => {
            with_filtration!(opts, value_sums_typed::<$t>(source, &geo, opts, planes, ctl))
        };
    }
    match source.grid().dtype {
        Dtype::U8 => go!(u8),
        Dtype::I8 => go!(i8),
        Dtype::U16 => go!(u16),
        Dtype::I16 => go!(i16),
        other => Err(EccError::Read(format!("{} samples have no histogram", other.name()))),
    }
}

fn value_sums_typed<T: Sample, const VERT: bool, const SUP: bool>(
    source: &dyn SampleSource,
    geo: &Geometry,
    opts: &EccOptions,
    planes: &Planes,
    ctl: &Control,
) -> Result<ValueSums, EccError>
where
    T::Key: EccKey,
{
    let (hist, done) = workers_histogram::<T, VERT, SUP>(source, geo, opts, SLAB_BYTES, planes, ctl)?;
    let (lo_key, counts, sums) = hist.into_bins();
    let (lo, bins) = T::BINS.expect("a type with a histogram");
    let mut v = ValueSums { lo, counts: vec![0; bins], sums: vec![0; bins], planes: done };
    for b in (0..counts.len()).filter(|&b| counts[b] > 0) {
        let value = threshold::<T, SUP>(T::Key::from_i64(lo_key + b as i64)).to_f64() as i64;
        let i = (value - lo) as usize;
        (v.counts[i], v.sums[i]) = (counts[b], sums[b]);
    }
    Ok(v)
}

/// A helper's sums as a run in the filtration's order.
fn per_value_of<T: Sample, const SUP: bool>(v: ValueSums) -> PerValue<T> {
    let mut present: Vec<usize> = (0..v.counts.len()).filter(|&i| v.counts[i] > 0).collect();
    if SUP {
        present.reverse();
    }
    let values: Vec<f64> = present.iter().map(|&i| (v.lo + i as i64) as f64).collect();
    let samples = crate::field::Samples::from_f64(T::DTYPE, &values);
    let thresholds = T::slice(&samples).expect("samples of the type asked for").to_vec();
    (thresholds, present.iter().map(|&i| v.sums[i]).collect())
}

/// The sums per value of a wide type, read front to back by one reader thread.
fn per_value<T: Sample, const VERT: bool, const SUP: bool>(
    source: &dyn SampleSource,
    geo: &Geometry,
    opts: &EccOptions,
    slab_bytes: usize,
    ctl: &Control,
) -> Result<PerValue<T>, EccError>
where
    T::Key: EccKey,
{
    let pv = geo.plane_voxels();
    let per_slab = (slab_bytes / (pv * size_of::<T>())).saturating_sub(2).clamp(1, geo.planes);
    let pc = geo.planes_per_chunk(opts.chunk_voxels);
    let mut runs = Runs::<T>::new();
    let mut spare = Vec::new();
    let mut non_finite = (0, 0);
    std::thread::scope(|s| {
        let (full, slabs) = bounded::<Result<Slab<T>, EccError>>(1);
        let (give_back, returned) = bounded::<Vec<T>>(2);
        // Named, as every thread of the program is, for profilers and panic messages.
        let spawned = std::thread::Builder::new().name("ecc-slab-reader".into()).spawn_scoped(s, move || {
            let mut made = 0;
            for z0 in (0..geo.planes).step_by(per_slab) {
                let z1 = (z0 + per_slab).min(geo.planes);
                let (zs, ze) = (z0.saturating_sub(1), (z1 + 1).min(geo.planes));
                // Two buffers in all: one computed while the other is filled.
                let mut data = if made < 2 {
                    made += 1;
                    Vec::new()
                } else {
                    match returned.recv() {
                        Ok(d) => d,
                        Err(_) => return,
                    }
                };
                if let Err(e) = slab_buffer(&mut data, (ze - zs) * pv) {
                    let _ = full.send(Err(e));
                    return;
                }
                let slab = source
                    .read_at(zs * pv, bytemuck::cast_slice_mut(&mut data))
                    .map(|_| Slab { data, base: zs, range: (z0, z1) })
                    .map_err(|e| EccError::Read(e.0));
                let failed = slab.is_err();
                if full.send(slab).is_err() || failed {
                    return;
                }
            }
        });
        spawned.map_err(|e| EccError::Read(format!("cannot start the slab reader: {e}")))?;
        for slab in slabs {
            let slab = slab?;
            ctl.check()?;
            let held = Held { data: &slab.data, base: slab.base, range: slab.range };
            if opts.nan == NanPolicy::Reject && T::DTYPE.is_float() {
                let (nan, inf) = count_non_finite_in(held.planes(geo, slab.range.0, slab.range.1));
                non_finite = (non_finite.0 + nan, non_finite.1 + inf);
            }
            // Once a rejected sample is seen the curve is not wanted: the rest is only counted.
            if non_finite == (0, 0) {
                runs.add::<SUP>(buckets::per_value::<T, VERT, SUP>(held, geo, pc, ctl, &mut spare)?);
            }
            // The reader has stopped when this fails; the loop then ends.
            let _ = give_back.send(slab.data);
        }
        Ok::<_, EccError>(())
    })?;
    if non_finite != (0, 0) {
        return Err(EccError::NonFinite { nan: non_finite.0, inf: non_finite.1 });
    }
    // A slab's entries (8 or 16 bytes a voxel) are not wanted at the final merge, the peak.
    drop(spare);
    Ok(runs.finish::<SUP>())
}

/// `data` resized to `len` samples, or an error saying the memory is not there.
fn slab_buffer<T: Sample>(data: &mut Vec<T>, len: usize) -> Result<(), EccError> {
    if data.try_reserve(len.saturating_sub(data.len())).is_err() {
        let bytes = len * size_of::<T>();
        return Err(EccError::Read(format!("cannot allocate {bytes} bytes for a slab")));
    }
    data.resize(len, T::zeroed());
    Ok(())
}
