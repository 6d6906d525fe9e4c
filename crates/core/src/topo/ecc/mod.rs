//! The exact Euler characteristic curve (ECC) of a 1D, 2D or 3D field.
//!
//! The field is a cubical complex filtered by its values; the ECC lists `chi(K_t)` for every
//! distinct value `t`, where `K_t` is the sublevel (or superlevel) complex. Two constructions:
//!
//! * [`Construction::TopCells`]: each voxel is a top-dimensional cell (a square in 2D, a cube in
//!   3D); every lower cell takes the **minimum** of the voxels that contain it. Foreground voxels
//!   touching at an edge or a corner are connected: 8-connectivity in 2D, 26 in 3D. This is the
//!   setting of Wang, Wagner and Chen (SoCG 2022) and the default.
//! * [`Construction::Vertices`]: each voxel is a vertex; edges, squares and cubes between them
//!   take the **maximum** of their corners (the lower-star filtration of the Morse-Smale
//!   literature). Foreground voxels are connected only through faces: 4-connectivity in 2D, 6 in 3D.
//!
//! The superlevel ECC is the sublevel ECC of `-f`, listed from the largest value down.
//!
//! The computation follows the paper: each voxel adds to the histogram bin of its own value the
//! signed count of the cells it introduces ([`kernel`]); the curve is the prefix sum of that
//! histogram (u8 and i8 fields: in 3D on a CPU with AVX-512BW straight from their bytes, [`avx512`];
//! otherwise on 8-bit keys, [`narrow`]). The field is streamed in slabs of
//! whole planes with a one-voxel collar, slabs in parallel on all threads of the current rayon
//! pool. Memory beyond the field: per thread, one padded slab of keys (none for [`avx512`]) and (for fields of at
//! most 2^16 distinct possible values) a histogram; for
//! u32, i32, f32 and f64 fields, which may have as many distinct values as voxels, one packed
//! (key, change) entry per voxel (8 bytes, 16 for u32/i32/f64; see [`buckets`]) and the curve
//! itself (the threshold in the field's type and a chi of 4 bytes; 8 past 812^3 voxels in 3D and
//! 32767^2 pixels in 2D: see [`chi`]).

#[cfg(target_arch = "x86_64")]
mod avx512;
mod buckets;
pub mod chi;
pub mod crossings;
mod histogram;
mod kernel;
pub mod naive;
mod narrow;
mod runs;
pub mod stream;

use crate::control::Control;
pub use chi::Chi;

use crate::field::stats::count_non_finite_in;
use crate::field::{Dtype, Key, Sample, Samples, ScalarField};
use crate::with_samples;
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// How voxels become cells; see the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Construction {
    #[default]
    #[serde(rename = "top-cells")]
    TopCells,
    #[serde(rename = "vertices")]
    Vertices,
}

impl Construction {
    pub fn name(self) -> &'static str {
        match self {
            Construction::TopCells => "top-cells",
            Construction::Vertices => "vertices",
        }
    }

    /// One line for exports and help texts.
    pub fn description(self) -> &'static str {
        match self {
            Construction::TopCells => {
                "voxels are top-dimensional cells, lower cells take the minimum of the voxels \
                 containing them (8-connected in 2D, 26-connected in 3D)"
            }
            Construction::Vertices => {
                "voxels are vertices, higher cells take the maximum of their vertices \
                 (4-connected in 2D, 6-connected in 3D)"
            }
        }
    }
}

impl fmt::Display for Construction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An option value that names no choice.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} '{given}' (expected {expected})")]
pub struct UnknownChoice {
    pub what: &'static str,
    pub given: String,
    pub expected: &'static str,
}

impl FromStr for Construction {
    type Err = UnknownChoice;
    fn from_str(s: &str) -> Result<Self, UnknownChoice> {
        match s {
            "top-cells" | "top" => Ok(Construction::TopCells),
            "vertices" | "vertex" => Ok(Construction::Vertices),
            _ => Err(UnknownChoice {
                what: "construction",
                given: s.into(),
                expected: "top-cells or vertices",
            }),
        }
    }
}

/// Which sets grow along the curve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Filtration {
    /// `{f <= t}` for increasing `t`.
    #[default]
    Sublevel,
    /// `{f >= t}` for decreasing `t`.
    Superlevel,
}

impl Filtration {
    pub fn name(self) -> &'static str {
        match self {
            Filtration::Sublevel => "sublevel",
            Filtration::Superlevel => "superlevel",
        }
    }
}

/// What to do with NaN (and infinite) samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NanPolicy {
    /// Refuse fields with NaN or infinite samples, reporting how many there are.
    #[default]
    Reject,
    /// NaN voxels are absent from every sublevel set (like voxels outside the grid); infinite
    /// samples are kept as ordinary values (-inf enters first, +inf last).
    Absent,
}

impl NanPolicy {
    pub fn name(self) -> &'static str {
        match self {
            NanPolicy::Reject => "reject",
            NanPolicy::Absent => "absent",
        }
    }
}

impl FromStr for NanPolicy {
    type Err = UnknownChoice;
    fn from_str(s: &str) -> Result<Self, UnknownChoice> {
        match s {
            "reject" => Ok(NanPolicy::Reject),
            "absent" => Ok(NanPolicy::Absent),
            _ => Err(UnknownChoice { what: "NaN policy", given: s.into(), expected: "reject or absent" }),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EccOptions {
    pub construction: Construction,
    pub filtration: Filtration,
    pub nan: NanPolicy,
    /// Voxels per streamed slab (rounded to whole planes, at least one plane). The result does
    /// not depend on it; tests vary it to prove that.
    pub chunk_voxels: usize,
}

impl Default for EccOptions {
    fn default() -> Self {
        EccOptions {
            construction: Construction::TopCells,
            filtration: Filtration::Sublevel,
            nan: NanPolicy::Reject,
            chunk_voxels: 1 << 20,
        }
    }
}

/// An Euler characteristic curve: `chi[i]` is the Euler characteristic of the sublevel set at
/// `thresholds[i]` (superlevel: thresholds decrease). Thresholds are the field's distinct values,
/// in the field's own type (exact, and half an f64's bytes for 32-bit types).
#[derive(Clone, Debug, PartialEq)]
pub struct Ecc {
    pub construction: Construction,
    pub filtration: Filtration,
    pub thresholds: Samples,
    pub chi: Chi,
}

impl Ecc {
    /// The field's sample type, which the thresholds keep.
    pub fn dtype(&self) -> Dtype {
        self.thresholds.dtype()
    }

    /// Number of points (distinct values).
    pub fn len(&self) -> usize {
        self.thresholds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Threshold `i` as f64 (exact).
    #[inline]
    pub fn threshold(&self, i: usize) -> f64 {
        self.thresholds.get_f64(i)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EccError {
    #[error(
        "{nan} NaN and {inf} infinite samples; pass --nan absent to leave NaN voxels out of every \
         sublevel set and keep infinities as ordinary values"
    )]
    NonFinite { nan: usize, inf: usize },
    #[error("cancelled")]
    Cancelled,
    /// A streamed field's file could not be read (the message names it).
    #[error("{0}")]
    Read(String),
}

impl From<crate::control::Cancelled> for EccError {
    fn from(_: crate::control::Cancelled) -> Self {
        EccError::Cancelled
    }
}

/// Computes the ECC of `field` on all threads of the current rayon pool.
pub fn ecc(field: &ScalarField, opts: &EccOptions, ctl: &Control) -> Result<Ecc, EccError> {
    if opts.nan == NanPolicy::Reject {
        let (nan, inf) = count_non_finite(field);
        if nan + inf > 0 {
            return Err(EccError::NonFinite { nan, inf });
        }
    }
    let geo = Geometry::of(field);
    let e = with_samples!(field.samples(), v => ecc_typed(Held::all(v, &geo), &geo, opts, ctl))?;
    // A flag raised during the last slab still means the caller no longer wants the curve.
    ctl.check()?;
    Ok(e)
}

/// Counts NaN and infinite samples (zero for integer fields).
pub fn count_non_finite(field: &ScalarField) -> (usize, usize) {
    with_samples!(field.samples(), v => count_non_finite_in(v))
}

/// Euler characteristic of the sublevel (superlevel) set at `t`: the curve's value at the last
/// of its thresholds that `t` has passed; 0 (the empty set) before the first.
pub fn chi_at(e: &Ecc, t: f64) -> i64 {
    match passed(e, t) {
        0 => 0,
        n => e.chi.get(n - 1),
    }
}

/// How many of the curve's thresholds `t` has passed.
pub fn passed(e: &Ecc, t: f64) -> usize {
    let sup = e.filtration == Filtration::Superlevel;
    with_samples!(&e.thresholds, v => v.partition_point(|&x| if sup { x.to_f64() >= t } else { x.to_f64() <= t }))
}

/// How the field is cut into lines, planes and slabs. 3D fields are streamed in slabs of
/// z-planes, each plane `lines` rows of `x`; 1D and 2D fields in slabs of rows (a "plane" is one
/// row), which the 2D kernel sees with absent rows above and below in 1D.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    x: usize,
    lines: usize,
    planes: usize,
    three_d: bool,
    /// Whether the curve's chi fits in 32 bits ([`chi::fits_i32`] of the field's shape).
    chi32: bool,
}

impl Geometry {
    fn of(field: &ScalarField) -> Self {
        Geometry::of_shape(field.shape())
    }

    /// The geometry of a field of `shape` (1 to 3 axes, x first).
    fn of_shape(shape: &[usize]) -> Self {
        let [x, y, z] = crate::field::padded_dims(shape);
        let chi32 = chi::fits_i32(shape);
        if shape.len() == 3 {
            Geometry { x, lines: y, planes: z, three_d: true, chi32 }
        } else {
            Geometry { x, lines: 1, planes: y, three_d: false, chi32 }
        }
    }

    fn plane_voxels(&self) -> usize {
        self.x * self.lines
    }

    /// Padded lines per padded plane, and the padding before the first line.
    fn padded_lines(&self) -> (usize, usize) {
        if self.three_d { (self.lines + 2, 1) } else { (1, 0) }
    }

    fn planes_per_chunk(&self, chunk_voxels: usize) -> usize {
        (chunk_voxels / self.plane_voxels()).clamp(1, self.planes)
    }
}

/// Samples of a field's planes `base..base + data.len() / plane voxels`, of which planes
/// `range` are to be computed: the planes either side of `range` that lie in the field must be
/// held too (the kernel looks at them).
#[derive(Clone, Copy)]
struct Held<'a, T> {
    data: &'a [T],
    base: usize,
    range: (usize, usize),
}

impl<'a, T> Held<'a, T> {
    /// The whole field.
    fn all(data: &'a [T], geo: &Geometry) -> Self {
        Held { data, base: 0, range: (0, geo.planes) }
    }

    /// Number of slabs of `pc` planes.
    fn n_chunks(&self, pc: usize) -> usize {
        (self.range.1 - self.range.0).div_ceil(pc)
    }

    /// Planes `p0..p1` of slab `c` of `pc` planes.
    fn chunk_planes(&self, pc: usize, c: usize) -> (usize, usize) {
        (self.range.0 + c * pc, (self.range.0 + (c + 1) * pc).min(self.range.1))
    }

    /// The samples of planes `p0..p1`.
    fn planes(&self, geo: &Geometry, p0: usize, p1: usize) -> &'a [T] {
        let pv = geo.plane_voxels();
        &self.data[(p0 - self.base) * pv..(p1 - self.base) * pv]
    }
}

/// Keys that pack with a per-voxel change into one entry, for fields with too many distinct
/// values for a direct histogram (see [`buckets`]).
trait EccKey: Key {
    type Entry: buckets::Packed + Default;
    fn pack(self, change: i8) -> Self::Entry;
    /// The key as order-preserving offset-binary bits.
    fn bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

macro_rules! impl_ecc_key_32 {
    ($t:ty) => {
        impl EccKey for $t {
            type Entry = u64;
            #[inline(always)]
            fn pack(self, change: i8) -> u64 {
                self.bits() << 32 | (change as u8 ^ 0x80) as u64
            }
            #[inline(always)]
            fn bits(self) -> u64 {
                ((self as i32 as u32) ^ 0x8000_0000) as u64
            }
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                ((bits as u32) ^ 0x8000_0000) as i32 as $t
            }
        }
    };
}
impl_ecc_key_32!(i16);
impl_ecc_key_32!(i32);

impl EccKey for i64 {
    type Entry = u128;
    #[inline(always)]
    fn pack(self, change: i8) -> u128 {
        (self.bits() as u128) << 64 | (change as u8 ^ 0x80) as u128
    }
    #[inline(always)]
    fn bits(self) -> u64 {
        self as u64 ^ (1 << 63)
    }
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        (bits ^ (1 << 63)) as i64
    }
}

/// The key of a sample in the filtration's order: NOT of the key for superlevel sets (absent
/// stays absent).
#[inline(always)]
pub(crate) fn filtration_key<T: Sample, const SUP: bool>(s: T) -> T::Key {
    let k = s.to_key();
    if SUP && k != T::Key::ABSENT { !k } else { k }
}

/// The threshold (sample value) of a filtration key.
#[inline(always)]
pub(crate) fn threshold<T: Sample, const SUP: bool>(k: T::Key) -> T {
    T::from_key(if SUP { !k } else { k })
}

fn ecc_typed<T: Sample>(
    held: Held<T>,
    geo: &Geometry,
    opts: &EccOptions,
    ctl: &Control,
) -> Result<Ecc, EccError>
where
    T::Key: EccKey,
{
    if T::BINS.is_none() {
        let pc = geo.planes_per_chunk(opts.chunk_voxels);
        let (thresholds, chi) = with_filtration!(opts, wide_curve::<T>(held, geo, pc, ctl))?;
        let (construction, filtration) = (opts.construction, opts.filtration);
        return Ok(Ecc { construction, filtration, thresholds: T::wrap(thresholds), chi });
    }
    let per_value = with_filtration!(opts, per_value::<T>(held, geo, opts, ctl))?;
    Ok(curve(opts, geo, per_value))
}

/// [`buckets::curve`] (a function of its own for [`with_filtration`]).
fn wide_curve<T: Sample, const VERT: bool, const SUP: bool>(
    held: Held<T>,
    geo: &Geometry,
    pc: usize,
    ctl: &Control,
) -> Result<(Vec<T>, Chi), EccError>
where
    T::Key: EccKey,
{
    buckets::curve::<T, VERT, SUP>(held, geo, pc, ctl)
}

/// Calls `$f::<.., VERT, SUP>($args)` with the flags of `$opts`' construction and filtration.
macro_rules! with_filtration {
    ($opts:expr, $f:ident::<$t:ty>($($arg:expr),*)) => {
        match ($opts.construction, $opts.filtration) {
            ($crate::topo::ecc::Construction::TopCells, $crate::topo::ecc::Filtration::Sublevel) => $f::<$t, false, false>($($arg),*),
            ($crate::topo::ecc::Construction::TopCells, $crate::topo::ecc::Filtration::Superlevel) => $f::<$t, false, true>($($arg),*),
            ($crate::topo::ecc::Construction::Vertices, $crate::topo::ecc::Filtration::Sublevel) => $f::<$t, true, false>($($arg),*),
            ($crate::topo::ecc::Construction::Vertices, $crate::topo::ecc::Filtration::Superlevel) => $f::<$t, true, true>($($arg),*),
        }
    };
}
use with_filtration;

/// The curve from the summed change at each threshold (its prefix sums).
fn curve<T: Sample>(opts: &EccOptions, geo: &Geometry, (thresholds, changes): PerValue<T>) -> Ecc {
    let chi = Chi::running(&changes, geo.chi32, |c| c);
    Ecc { construction: opts.construction, filtration: opts.filtration, thresholds: T::wrap(thresholds), chi }
}

/// The thresholds present (in filtration order) and the summed change at each.
type PerValue<T> = (Vec<T>, Vec<i64>);

/// [`PerValue`] of a type with [`Sample::BINS`], from its histogram (wide types go through
/// [`buckets::curve`] in [`ecc_typed`]).
fn per_value<T: Sample, const VERT: bool, const SUP: bool>(
    held: Held<T>,
    geo: &Geometry,
    opts: &EccOptions,
    ctl: &Control,
) -> Result<PerValue<T>, EccError>
where
    T::Key: EccKey,
{
    let pc = geo.planes_per_chunk(opts.chunk_voxels);
    let hist = histogram_of::<T, VERT, SUP>(held, geo, pc, ctl)?;
    Ok(hist.into_per_value(|k| threshold::<T, SUP>(k)))
}

/// The histogram of the changes of `held`'s planes, for types with [`Sample::BINS`].
fn histogram_of<T: Sample, const VERT: bool, const SUP: bool>(
    held: Held<T>,
    geo: &Geometry,
    pc: usize,
    ctl: &Control,
) -> Result<histogram::Histogram, EccError>
where
    T::Key: EccKey,
{
    slab_histograms::<T, SUP, HistogramScratch<T::Key>>(held, geo, pc, ctl, |scratch, hist, p0, p1| {
        scratch.add::<T, VERT, SUP>(held, geo, p0, p1, hist)
    })
}

/// Per-thread buffers of the kernel that adds planes' changes to a histogram: 8-bit keys for
/// 8-bit types (none for 3D ones with AVX-512), the type's own keys for 16-bit ones (only one
/// is ever filled).
#[derive(Default)]
struct HistogramScratch<K> {
    narrow: narrow::Scratch8,
    wide: Scratch<K>,
}

impl<K: EccKey> HistogramScratch<K> {
    /// Adds the changes of `held`'s planes `p0..p1` to `hist`.
    fn add<T: Sample<Key = K>, const VERT: bool, const SUP: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        p0: usize,
        p1: usize,
        hist: &mut histogram::Histogram,
    ) {
        if T::BINS.is_some_and(|(_, bins)| bins == 256) {
            #[cfg(target_arch = "x86_64")]
            if geo.three_d && avx512::available() {
                let bytes: &[u8] = bytemuck::cast_slice(held.data);
                let planes = avx512::HeldBytes { bytes, base: held.base, p0, p1 };
                let signed = T::BINS.is_some_and(|(lo, _)| lo < 0);
                // SAFETY: the CPU has AVX-512BW, checked just above.
                return unsafe {
                    if signed {
                        avx512::add::<true, VERT, SUP>(planes, geo, hist)
                    } else {
                        avx512::add::<false, VERT, SUP>(planes, geo, hist)
                    }
                };
            }
            self.narrow.run::<T, VERT, SUP>(held, geo, p0, p1, |keys, changes| hist.add_8bit(keys, changes));
        } else {
            self.wide.run::<T, VERT, SUP>(held, geo, p0, p1, |_, keys, changes| hist.add(keys, changes));
        }
    }
}

/// The histograms of `held`'s slabs of `pc` planes, each added by `slab(scratch, histogram,
/// p0, p1)` on a thread with its own scratch `S`, summed.
fn slab_histograms<T: Sample, const SUP: bool, S: Default + Send>(
    held: Held<T>,
    geo: &Geometry,
    pc: usize,
    ctl: &Control,
    slab: impl Fn(&mut S, &mut histogram::Histogram, usize, usize) + Sync,
) -> Result<histogram::Histogram, EccError> {
    let new = || empty_histogram::<T, SUP>();
    (0..held.n_chunks(pc))
        .into_par_iter()
        .try_fold(
            || (S::default(), new()),
            |(mut scratch, mut hist), c| {
                if ctl.cancelled() {
                    return Err(EccError::Cancelled);
                }
                let (p0, p1) = held.chunk_planes(pc, c);
                slab(&mut scratch, &mut hist, p0, p1);
                ctl.tick(((p1 - p0) * geo.plane_voxels()) as u64);
                Ok((scratch, hist))
            },
        )
        .map(|r| r.map(|(_, h)| h))
        .try_reduce(new, |a, b| Ok(a.merge(b)))
}

/// An empty histogram over every key of `T` in the filtration's order.
fn empty_histogram<T: Sample, const SUP: bool>() -> histogram::Histogram {
    let (_, bins) = T::BINS.expect("a type with a histogram");
    histogram::Histogram::new(key_origin::<T, SUP>(), bins)
}

/// The smallest key of `T` in the filtration's order: histogram bin 0.
fn key_origin<T: Sample, const SUP: bool>() -> i64 {
    let (lo, bins) = T::BINS.expect("a type with a histogram");
    // Superlevel keys are bitwise NOTs, which maps [lo, lo + bins) onto [-lo - bins, -lo).
    if SUP { -lo - bins as i64 } else { lo }
}

/// A method `$name` of [`Scratch`]: [`Scratch::run_generic`] compiled for the CPU features
/// `$features` (the caller checks that the CPU has them).
macro_rules! run_compiled_for {
    ($(#[$doc:meta])* $name:ident, $features:literal) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        fn $name<T: Sample<Key = K>, const VERT: bool, const SUP: bool>(
            &mut self, held: Held<T>, geo: &Geometry, p0: usize, p1: usize,
            emit: impl FnMut(usize, &[K], &[i8]),
        ) {
            self.run_generic::<T, VERT, SUP>(held, geo, p0, p1, emit)
        }
    };
}

/// Per-thread buffers: one padded slab of keys and one line of changes.
#[derive(Default)]
struct Scratch<K> {
    slab: Vec<K>,
    changes: Vec<i8>,
}

impl<K: EccKey> Scratch<K> {
    /// Computes the changes of planes `p0..p1` and hands each line to `emit` as
    /// (offset of the line within the slab, keys of the line, changes of the line).
    fn run<T: Sample<Key = K>, const VERT: bool, const SUP: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        p0: usize,
        p1: usize,
        emit: impl FnMut(usize, &[K], &[i8]),
    ) {
        #[cfg(target_arch = "x86_64")]
        if avx512::available()
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx2")
        {
            // SAFETY: the CPU has AVX2 and AVX-512F, BW and VL, checked just above.
            return unsafe { self.run_avx512::<T, VERT, SUP>(held, geo, p0, p1, emit) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { self.run_avx2::<T, VERT, SUP>(held, geo, p0, p1, emit) };
        }
        self.run_generic::<T, VERT, SUP>(held, geo, p0, p1, emit)
    }

    run_compiled_for! {
        /// [`Self::run`] compiled for AVX-512: the comparisons go into mask registers, which
        /// saves the packing of wide comparison results down to bytes that AVX2 needs.
        run_avx512, "avx2,avx512f,avx512bw,avx512vl"
    }

    run_compiled_for! {
        /// [`Self::run`] compiled for AVX2, which doubles the lanes of the kernel's comparisons;
        /// the portable build targets SSE2 only.
        run_avx2, "avx2"
    }

    #[inline(always)]
    fn run_generic<T: Sample<Key = K>, const VERT: bool, const SUP: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        p0: usize,
        p1: usize,
        mut emit: impl FnMut(usize, &[K], &[i8]),
    ) {
        self.fill::<T, SUP>(held, geo, p0, p1);
        let row = geo.x + 2;
        let (lp, pad) = geo.padded_lines();
        self.changes.resize(geo.x, 0);
        let slab = &self.slab;
        let line = |p: usize, l: usize| &slab[(p * lp + l) * row..][..row];
        for p in 1..=(p1 - p0) {
            for l in 0..geo.lines {
                let l = l + pad;
                if geo.three_d {
                    let lines = [0, 1, 2].map(|dp| [0, 1, 2].map(|dl| line(p + dp - 1, l + dl - 1)));
                    kernel::line_3d::<K, VERT>(lines, &mut self.changes);
                } else {
                    let rows = [0, 1, 2].map(|dp| line(p + dp - 1, l));
                    kernel::line_2d::<K, VERT>(rows, &mut self.changes);
                }
                let offset = ((p - 1) * geo.lines + l - pad) * geo.x;
                emit(offset, &line(p, l)[1..=geo.x], &self.changes);
            }
        }
    }

    /// Copies planes `p0 - 1 ..= p1` as keys into the slab, with absent keys for the collar.
    #[inline(always)]
    fn fill<T: Sample<Key = K>, const SUP: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        p0: usize,
        p1: usize,
    ) {
        fill_slab(&mut self.slab, held, geo, p0, p1, K::ABSENT, filtration_key::<T, SUP>);
    }
}

/// Copies planes `p0 - 1 ..= p1` of `held` into `slab` as keys (`key` of each sample), padded
/// lines with `collar` around and for the planes outside the field.
#[inline(always)]
fn fill_slab<T: Copy, K: Copy>(
    slab: &mut Vec<K>,
    held: Held<T>,
    geo: &Geometry,
    p0: usize,
    p1: usize,
    collar: K,
    key: impl Fn(T) -> K,
) {
    let row = geo.x + 2;
    let (lp, pad) = geo.padded_lines();
    slab.clear();
    slab.resize(row * lp * (p1 - p0 + 2), collar);
    for (pi, p) in (p0 as isize - 1..=p1 as isize).enumerate() {
        if p < 0 || p as usize >= geo.planes {
            continue;
        }
        for l in 0..geo.lines {
            let src = &held.data[((p as usize - held.base) * geo.lines + l) * geo.x..][..geo.x];
            let dst = &mut slab[(pi * lp + l + pad) * row + 1..][..geo.x];
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = key(s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(f: Filtration, t: &[f64], chi: &[i64]) -> Ecc {
        Ecc {
            construction: Construction::TopCells,
            filtration: f,
            thresholds: Samples::F64(t.to_vec()),
            chi: Chi::I32(chi.iter().map(|&c| c as i32).collect()),
        }
    }

    #[test]
    fn chi_at_steps_at_the_field_values() {
        let e = curve(Filtration::Sublevel, &[1.0, 5.0, 9.0], &[2, -1, 1]);
        assert_eq!(chi_at(&e, 0.5), 0);
        assert_eq!(chi_at(&e, 1.0), 2);
        assert_eq!(chi_at(&e, 4.9), 2);
        assert_eq!(chi_at(&e, 5.0), -1);
        assert_eq!(chi_at(&e, 100.0), 1);
        let s = curve(Filtration::Superlevel, &[9.0, 5.0, 1.0], &[1, 3, 1]);
        assert_eq!(chi_at(&s, 10.0), 0);
        assert_eq!(chi_at(&s, 6.0), 1);
        assert_eq!(chi_at(&s, 5.0), 3);
    }
}
