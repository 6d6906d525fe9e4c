//! The ECC of a field read a slab at a time from a [`SampleSource`] (a file, through
//! [`crate::io::Block`]), equal to [`super::ecc`] of the field read whole.
//!
//! A reader thread fills one slab of whole planes (with the collar planes either side) while
//! the slab before it is computed on all threads, so the file is read once, front to back, and
//! two slabs are all the samples ever held. Fields of at most 2^16 possible values (u8, i8, u16,
//! i16) add each slab into one histogram: memory is a small constant whatever the file's size.
//! Wider types sum each slab's changes per distinct value and merge those sorted runs as a
//! binary counter merges (runs of like length, so each entry is merged O(log slabs) times):
//! memory is then that of the curve itself, which for such fields can have an entry per voxel.

use super::{
    EccError, EccKey, EccOptions, Geometry, Held, NanPolicy, PerValue, buckets, count_non_finite_in, curve,
    empty_histogram, histogram_of, threshold, with_filtration,
};
use crate::control::Control;
use crate::field::{Dtype, Sample, SampleSource};
use crossbeam_channel::bounded;

/// Bytes of samples per slab read (at least one plane with its collar).
pub const SLAB_BYTES: usize = 32 << 20;

/// The ECC of the field `source` reads, holding at most two slabs of it at a time.
pub fn ecc(source: &mut dyn SampleSource, opts: &EccOptions, ctl: &Control) -> Result<super::Ecc, EccError> {
    ecc_in_slabs(source, opts, SLAB_BYTES, ctl)
}

/// [`ecc`] in slabs of about `slab_bytes` (whole planes, at least one): the curve does not
/// depend on it; tests vary it to prove that.
pub fn ecc_in_slabs(
    source: &mut dyn SampleSource,
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
    source: &mut dyn SampleSource,
    opts: &EccOptions,
    slab_bytes: usize,
    ctl: &Control,
) -> Result<super::Ecc, EccError>
where
    T::Key: EccKey,
{
    let geo = Geometry::of_shape(&source.grid().shape);
    let per_value = with_filtration!(opts, per_value::<T>(source, &geo, opts, slab_bytes, ctl))?;
    Ok(curve(opts, &geo, per_value))
}

/// A slab as read: samples of planes `base..` holding the computed planes `range`.
struct Slab<T> {
    data: Vec<T>,
    base: usize,
    range: (usize, usize),
}

fn per_value<T: Sample, const VERT: bool, const SUP: bool>(
    source: &mut dyn SampleSource,
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
    let mut sums = Sums::<T, SUP>::new();
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
                let len = (ze - zs) * pv;
                if data.try_reserve(len.saturating_sub(data.len())).is_err() {
                    let bytes = len * size_of::<T>();
                    let _ =
                        full.send(Err(EccError::Read(format!("cannot allocate {bytes} bytes for a slab"))));
                    return;
                }
                data.resize(len, T::zeroed());
                let slab = source
                    .read_into(zs * pv, bytemuck::cast_slice_mut(&mut data))
                    .map(|_| Slab { data, base: zs, range: (z0, z1) })
                    .map_err(EccError::Read);
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
                sums.add::<VERT>(held, geo, pc, ctl)?;
            }
            // The reader has stopped when this fails; the loop then ends.
            let _ = give_back.send(slab.data);
        }
        Ok::<_, EccError>(())
    })?;
    if non_finite != (0, 0) {
        return Err(EccError::NonFinite { nan: non_finite.0, inf: non_finite.1 });
    }
    Ok(sums.finish())
}

/// The change sums of the slabs seen so far: a histogram, or sorted runs of (threshold, sum).
enum Sums<T: Sample, const SUP: bool> {
    Histogram(super::histogram::Histogram),
    Runs(Vec<PerValue<T>>),
}

impl<T: Sample, const SUP: bool> Sums<T, SUP>
where
    T::Key: EccKey,
{
    fn new() -> Self {
        match T::BINS {
            Some(_) => Sums::Histogram(empty_histogram::<T, SUP>()),
            None => Sums::Runs(Vec::new()),
        }
    }

    fn add<const VERT: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        pc: usize,
        ctl: &Control,
    ) -> Result<(), EccError> {
        match self {
            Sums::Histogram(h) => {
                let slab = histogram_of::<T, VERT, SUP>(held, geo, pc, ctl)?;
                let h0 = std::mem::replace(h, empty_histogram::<T, SUP>());
                *h = h0.merge(slab);
            }
            Sums::Runs(runs) => {
                runs.push(buckets::per_value::<T, VERT, SUP>(held, geo, pc, ctl)?);
                // Merge while the newest run is at least half the one before it.
                while runs.len() >= 2 && 2 * runs[runs.len() - 1].0.len() >= runs[runs.len() - 2].0.len() {
                    let b = runs.pop().expect("two runs");
                    let a = runs.pop().expect("two runs");
                    runs.push(merge::<T, SUP>(a, b));
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> PerValue<T> {
        match self {
            Sums::Histogram(h) => h.into_per_value(|k| threshold::<T, SUP>(k)),
            Sums::Runs(runs) => runs.into_iter().reduce(merge::<T, SUP>).unwrap_or_default(),
        }
    }
}

/// Two runs of distinct thresholds in the filtration's order (increasing, or decreasing for
/// superlevel sets), merged, the sums of a threshold in both added. Thresholds are exact
/// sample values, one per key (-0.0 is folded into 0.0), so comparing them compares keys.
fn merge<T: Sample, const SUP: bool>(a: PerValue<T>, b: PerValue<T>) -> PerValue<T> {
    let before = |x: T, y: T| if SUP { x > y } else { x < y };
    let n = a.0.len() + b.0.len();
    let (mut t, mut s) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut i, mut j) = (0, 0);
    while i < a.0.len() || j < b.0.len() {
        if j == b.0.len() || (i < a.0.len() && before(a.0[i], b.0[j])) {
            t.push(a.0[i]);
            s.push(a.1[i]);
            i += 1;
        } else if i == a.0.len() || before(b.0[j], a.0[i]) {
            t.push(b.0[j]);
            s.push(b.1[j]);
            j += 1;
        } else {
            t.push(a.0[i]);
            s.push(a.1[i] + b.1[j]);
            i += 1;
            j += 1;
        }
    }
    (t, s)
}
