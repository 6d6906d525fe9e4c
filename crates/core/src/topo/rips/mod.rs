//! Vietoris-Rips persistence barcodes over Z/2, as Ripser computes them (Bauer, "Ripser:
//! efficient computation of Vietoris-Rips persistence barcodes", 2021): persistent
//! cohomology of the Rips filtration of a finite metric space, simplices named by the
//! combinatorial number system ([`index`]) and never stored, coboundaries enumerated on the
//! fly, dimension 0 by union-find, higher dimensions by the implicit matrix reduction with
//! clearing and emergent pairs ([`reduce`]).
//!
//! Distances are `f32`, as Ripser's: a point cloud's are computed in `f64` and rounded once,
//! so bars equal Ripser's bar for bar when it is given the same distances. [`naive`] is the
//! textbook boundary-matrix reduction the tests hold this against.

pub mod apparent;
mod column;
pub mod embed;
pub mod image_points;
pub mod index;
pub mod naive;
mod reduce;
pub mod stages;

use crate::control::{Cancelled, Control};
use reduce::Apparent;
use std::sync::atomic::{AtomicBool, Ordering};

/// A finite metric space: the distances between `n` points, lower triangle stored row by row
/// (`d(i, j)` for `i > j` at `i (i - 1) / 2 + j`).
#[derive(Clone, Debug, PartialEq)]
pub struct Distances {
    n: usize,
    lower: Vec<f32>,
}

#[derive(Debug, PartialEq, thiserror::Error)]
pub enum RipsError {
    #[error("{0}")]
    Invalid(String),
    /// The system refused a thread (the input was fine).
    #[error("a thread for the Rips reduction could not start: {0}")]
    Thread(String),
    #[error("cancelled")]
    Cancelled(#[from] Cancelled),
}

impl Distances {
    /// From the lower triangle, row by row (Ripser's `lower-distance` format): its length must
    /// be `n (n - 1) / 2` for some `n`; entries must be finite and non-negative.
    pub fn from_lower(lower: Vec<f32>) -> Result<Distances, RipsError> {
        let n = points_for_entries(lower.len()).ok_or_else(|| {
            RipsError::Invalid(format!(
                "{} distances are not the lower triangle of a square matrix (n (n - 1) / 2 entries)",
                lower.len()
            ))
        })?;
        if let Some(i) = lower.iter().position(|d| !d.is_finite() || *d < 0.0) {
            let (r, c) = row_col(i);
            return Err(RipsError::Invalid(format!(
                "the distance between points {r} and {c} is {}: distances are finite and non-negative",
                lower[i]
            )));
        }
        // -0 is 0 (Ripser compares distances as numbers; the order here compares bits).
        let lower = lower.into_iter().map(|d| d + 0.0).collect();
        Ok(Distances { n, lower })
    }

    /// The Euclidean distances between the rows of `points` (`n` rows of `dim` coordinates),
    /// computed in `f64` and rounded to `f32` once.
    pub fn euclidean(points: &[f64], dim: usize, ctl: &Control) -> Result<Distances, RipsError> {
        use rayon::prelude::*;
        if dim == 0 || !points.len().is_multiple_of(dim) {
            return Err(RipsError::Invalid(format!("{} coordinates are not rows of {dim}", points.len())));
        }
        if let Some(i) = points.iter().position(|x| !x.is_finite()) {
            return Err(RipsError::Invalid(format!(
                "point {} has a coordinate that is not a finite number ({})",
                i / dim,
                points[i]
            )));
        }
        if points.is_empty() {
            return Err(RipsError::Invalid("no points".into()));
        }
        let n = points.len() / dim;
        let entries = n * n.saturating_sub(1) / 2;
        let bytes = entries as u64 * 4;
        if let Some(budget) = crate::mem::default_budget().filter(|&budget| bytes > budget) {
            return Err(RipsError::Invalid(format!(
                "{n} points need {:.1} GiB of pairwise distances; {:.1} GiB may be used (90% of the memory this process can take)",
                bytes as f64 / (1u64 << 30) as f64,
                budget as f64 / (1u64 << 30) as f64
            )));
        }
        let mut lower = vec![0f32; entries];
        // Row i holds i entries: rows in parallel, each a slice of its own.
        let mut rows: Vec<&mut [f32]> = Vec::with_capacity(n);
        let mut rest = lower.as_mut_slice();
        for i in 0..n {
            let (row, tail) = rest.split_at_mut(i);
            rows.push(row);
            rest = tail;
        }
        rows.into_par_iter().enumerate().try_for_each(|(i, row)| {
            if i % 256 == 0 {
                ctl.check()?;
            }
            let p = &points[i * dim..(i + 1) * dim];
            for (j, d) in row.iter_mut().enumerate() {
                let q = &points[j * dim..(j + 1) * dim];
                *d = p.iter().zip(q).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt() as f32;
            }
            ctl.tick(i as u64);
            Ok::<(), Cancelled>(())
        })?;
        // Finite coordinates can still be too far apart for an f32 distance.
        if let Some(i) = lower.iter().position(|d| !d.is_finite()) {
            let (r, c) = row_col(i);
            return Err(RipsError::Invalid(format!(
                "points {r} and {c} are farther apart than single precision holds (distances are f32, as Ripser's)"
            )));
        }
        Ok(Distances { n, lower })
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The distance between points `i` and `j`.
    #[inline(always)]
    pub fn get(&self, i: usize, j: usize) -> f32 {
        match i.cmp(&j) {
            std::cmp::Ordering::Greater => self.lower[i * (i - 1) / 2 + j],
            std::cmp::Ordering::Less => self.lower[j * (j - 1) / 2 + i],
            std::cmp::Ordering::Equal => 0.0,
        }
    }

    /// The least, over the points, of the largest distance from the point: at this radius one
    /// point is joined to all (infinity for no points).
    pub fn enclosing_radius(&self) -> f32 {
        use rayon::prelude::*;
        let n = self.n;
        // Row i of the lower triangle holds the distances from i to the points before it; its
        // entries are also the columns of those points. One pass over the rows in order, on
        // all cores, each band of rows with its own column maxima.
        let bands = 4 * rayon::current_num_threads();
        let farthest = (1..n)
            .into_par_iter()
            .with_min_len((n / bands).max(1))
            .fold(
                || vec![0f32; n],
                |mut m, i| {
                    let row = self.row(i);
                    let mut own = 0f32;
                    for (mj, &d) in m.iter_mut().zip(row) {
                        *mj = mj.max(d);
                        own = own.max(d);
                    }
                    m[i] = m[i].max(own);
                    m
                },
            )
            .reduce(
                || vec![0f32; n],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x = x.max(*y));
                    a
                },
            );
        farthest.into_iter().fold(f32::INFINITY, f32::min)
    }

    /// The diameter of the simplex with vertices `vs`: its longest edge (0 for a vertex).
    #[inline]
    pub fn diameter(&self, vs: &[usize]) -> f32 {
        let mut m = 0f32;
        for (i, &a) in vs.iter().enumerate() {
            for &b in &vs[i + 1..] {
                m = m.max(self.get(a, b));
            }
        }
        m
    }

    /// The distances from point `i` to the points before it.
    #[inline]
    pub fn row(&self, i: usize) -> &[f32] {
        let start = i * i.saturating_sub(1) / 2;
        &self.lower[start..start + i]
    }

    /// How many of the distances (each pair once) are at most `threshold`, and the shortest
    /// (+inf when none is), on all cores.
    pub fn within(&self, threshold: f32) -> (usize, f32) {
        use rayon::prelude::*;
        let part = |c: &[f32]| {
            c.iter().filter(|&&x| x <= threshold).fold((0, f32::INFINITY), |(k, m), &x| (k + 1, m.min(x)))
        };
        let both = |a: (usize, f32), b: (usize, f32)| (a.0 + b.0, a.1.min(b.1));
        self.lower.par_chunks(1 << 16).map(part).reduce(|| (0, f32::INFINITY), both)
    }

    /// The whole matrix, row by row (`d(i, j)` at `i * n + j`): twice the lower triangle.
    pub fn square(&self) -> Vec<f32> {
        let n = self.len();
        let mut m = vec![0f32; n * n];
        for i in 0..n {
            for (j, &x) in self.row(i).iter().enumerate() {
                m[i * n + j] = x;
                m[j * n + i] = x;
            }
        }
        m
    }

    /// The lower triangle, row by row.
    pub fn lower(&self) -> &[f32] {
        &self.lower
    }
}

/// How many of `len` items one task takes: about eight tasks per thread (their costs vary),
/// at least `least`, so that a few tens of thousands of columns still reach every core.
pub(crate) fn chunk_for(len: usize, least: usize) -> usize {
    (len / (8 * rayon::current_num_threads())).max(least)
}

/// The `n` whose lower triangle has `entries` entries, if any.
pub fn points_for_entries(entries: usize) -> Option<usize> {
    // n (n - 1) / 2 = entries: n = (1 + sqrt(1 + 8 entries)) / 2, checked exactly.
    let n = ((1.0 + (1.0 + 8.0 * entries as f64).sqrt()) / 2.0).round() as usize;
    (n.max(1)..=n + 1).find(|m| m * (m - 1) / 2 == entries)
}

/// Row and column of entry `i` of the lower triangle (the vertices, larger first, of edge
/// number `i`).
pub(super) fn row_col(i: usize) -> (usize, usize) {
    let mut r = ((1.0 + (1.0 + 8.0 * i as f64).sqrt()) / 2.0).floor() as usize;
    while r * (r - 1) / 2 > i {
        r -= 1;
    }
    while (r + 1) * r / 2 <= i {
        r += 1;
    }
    (r, i - r * (r - 1) / 2)
}

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RipsOptions {
    /// The highest homology dimension (0 to [`MAX_DIM`]).
    pub maxdim: usize,
    /// Edges longer than this are left out of the filtration (infinity: none are).
    pub threshold: f32,
}

/// The highest dimension computed: beyond 3, the simplices of a few hundred points outnumber
/// any memory (and their indices overflow 64 bits sooner).
pub const MAX_DIM: usize = 3;

impl Default for RipsOptions {
    fn default() -> Self {
        RipsOptions { maxdim: 1, threshold: f32::INFINITY }
    }
}

impl RipsOptions {
    /// The options' own faults, judged before any data is read.
    pub fn check(&self) -> Result<(), RipsError> {
        if self.maxdim > MAX_DIM {
            return Err(RipsError::Invalid(format!(
                "dimension {} is above the highest computed, {MAX_DIM}",
                self.maxdim
            )));
        }
        if self.threshold.is_nan() || self.threshold < 0.0 {
            return Err(RipsError::Invalid(format!(
                "the threshold {} is not a non-negative radius",
                self.threshold
            )));
        }
        Ok(())
    }

    /// Whether the simplices of `n` points can be numbered up to dimension `maxdim + 1` (judged
    /// once the points are counted, before their distances are built).
    pub fn check_points(&self, n: usize) -> Result<(), RipsError> {
        index::Binomials::new(n, self.maxdim + 2).map(|_| ()).ok_or_else(|| {
            RipsError::Invalid(format!(
                "{n} points: the simplices of dimension {} cannot be numbered in 64 bits",
                self.maxdim + 1
            ))
        })
    }
}

/// One bar: a class born at `birth` and dying at `death` (infinity for an essential class),
/// with the pair of simplices that make it: `creator` (of dimension `dim`: the vertex, edge or
/// triangle whose entry creates the class) and `killer` (of dimension `dim + 1`, none for an
/// essential class), by their numbers ([`Barcode::vertices`] names their vertices).
///
/// Bars are equal when their dimension, birth and death are: where distances tie, another
/// computation (Ripser's, the textbook one) may pair other simplices for the same bar.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bar {
    pub dim: usize,
    pub birth: f32,
    pub death: f32,
    pub creator: u64,
    pub killer: Option<u64>,
}

impl PartialEq for Bar {
    fn eq(&self, o: &Bar) -> bool {
        (self.dim, self.birth, self.death) == (o.dim, o.birth, o.death)
    }
}

impl Bar {
    /// A bar with no simplices named (read from elsewhere: Ripser's output, a CSV).
    pub fn new(dim: usize, birth: f32, death: f32) -> Bar {
        Bar { dim, birth, death, ..Default::default() }
    }
}

/// The barcode: bars of every dimension up to `maxdim`, as found (see [`Barcode::sorted`]), of
/// a space of `points` points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Barcode {
    pub maxdim: usize,
    pub points: usize,
    pub bars: Vec<Bar>,
}

impl Barcode {
    /// The vertices of simplex number `simplex` of dimension `dim` (a bar's creator or
    /// killer), largest first.
    pub fn vertices(&self, simplex: u64, dim: usize) -> Vec<usize> {
        let mut out = Vec::new();
        // The numbers of a barcode's simplices were within 64 bits when it was computed.
        if let Some(t) = index::Binomials::new(self.points, dim + 1) {
            t.vertices(simplex, dim, self.points, &mut out);
        }
        out
    }

    /// The bars of dimension `dim`.
    pub fn of_dim(&self, dim: usize) -> impl Iterator<Item = &Bar> {
        self.bars.iter().filter(move |b| b.dim == dim)
    }

    /// Bars ordered by dimension, birth, then death: one order to compare barcodes in.
    pub fn sorted(mut self) -> Barcode {
        self.bars.sort_by(|a, b| {
            (a.dim, a.birth, a.death)
                .partial_cmp(&(b.dim, b.birth, b.death))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        self
    }

    /// How many bars each dimension has (0 to `maxdim`).
    pub fn counts(&self) -> Vec<usize> {
        (0..=self.maxdim).map(|d| self.of_dim(d).count()).collect()
    }
}

/// One dimension's columns (simplices by number, in the order they are reduced), for finding
/// their apparent pairs.
pub struct Columns<'a> {
    pub complex: &'a index::Complex<'a>,
    pub dim: usize,
    pub columns: &'a [index::Entry],
}

/// One dimension's simplices, for listing the next dimension's columns: those of dimension
/// `dim` within the threshold, the pivots of their reduction (cofacets that are no columns:
/// clearing), and whether `dim + 1` is the highest dimension (`top`: its simplices are not
/// kept and its apparent columns are left out).
pub struct Listing<'a> {
    pub complex: &'a index::Complex<'a>,
    pub dim: usize,
    pub simplices: &'a [index::Entry],
    pub top: bool,
    pivots: &'a reduce::Pivots,
}

impl Listing<'_> {
    /// Whether `columns` columns and `simplices` simplices of dimension `dim + 1` fit the
    /// memory a dimension may take (the CPU's listing refuses past it as it goes).
    pub fn fits(&self, columns: usize, simplices: usize) -> Result<(), RipsError> {
        reduce::within_budget(self.complex, self.dim + 1, columns, simplices)
    }

    /// The cleared simplices of dimension `dim + 1` (the pivots), by increasing number.
    pub fn cleared(&self) -> Vec<u64> {
        use rayon::prelude::*;
        let mut v: Vec<u64> = self.pivots.keys().copied().collect();
        v.par_sort_unstable();
        v
    }
}

/// A dimension's columns and its simplices (see [`Offload::next_columns`]).
pub type Listed = (Vec<index::Entry>, Vec<index::Entry>);

/// The parts of a barcode a backend may take over from the CPU's cores: the apparent pairs of
/// a dimension's columns, and listing the next dimension's columns. Each must give what the
/// CPU gives ([`OnCpu`]); the GPU backend has its own.
pub trait Offload {
    /// The apparent pair of every column (the cofacet it pairs with at zero persistence,
    /// Ripser++'s apparent pairs), or None; as [`apparent_on_cpu`].
    fn apparent(&mut self, cols: &Columns) -> Result<Vec<Option<index::Entry>>, RipsError>;

    /// The columns of dimension `dim + 1`, in any order, and unless `top` all its simplices
    /// within the threshold, in any order (the sets [`list_on_cpu`] gives); None leaves
    /// the listing to the CPU.
    fn next_columns(&mut self, l: &Listing) -> Result<Option<Listed>, RipsError>;
}

/// Everything on the CPU's cores.
pub struct OnCpu<'c>(pub &'c Control<'c>);

impl Offload for OnCpu<'_> {
    fn apparent(&mut self, cols: &Columns) -> Result<Vec<Option<index::Entry>>, RipsError> {
        apparent_on_cpu(cols, self.0)
    }

    fn next_columns(&mut self, _: &Listing) -> Result<Option<Listed>, RipsError> {
        Ok(None)
    }
}

/// The next dimension's columns (in reduction order) and simplices of `l`, on all cores.
pub fn list_on_cpu(l: &Listing, ctl: &Control) -> Result<Listed, RipsError> {
    reduce::next_columns(l.complex, l.dim, l.simplices, l.pivots, l.top, ctl)
}

/// The apparent pairs of `cols` on all cores, checking `ctl` between batches.
pub fn apparent_on_cpu(cols: &Columns, ctl: &Control) -> Result<Vec<Option<index::Entry>>, RipsError> {
    use rayon::prelude::*;
    let c = cols.complex;
    Ok(cols
        .columns
        .par_chunks(chunk_for(cols.columns.len(), 256))
        .map(|chunk| {
            ctl.check()?;
            Ok(chunk.iter().map(|s| apparent::cofacet(c, *s, cols.dim)).collect::<Vec<_>>())
        })
        .collect::<Result<Vec<_>, Cancelled>>()?
        .concat())
}

/// The Vietoris-Rips barcode of `d` in dimensions 0 to `opts.maxdim`: bars of positive length
/// (a class born and killed at the same radius is no bar), essential classes dying at
/// infinity. Progress ticks with the columns passed, in batches (apparent ones included, but
/// for those of the highest dimension, which are never listed).
pub fn barcode(d: &Distances, opts: &RipsOptions, ctl: &Control) -> Result<Barcode, RipsError> {
    barcode_with(d, opts, &mut OnCpu(ctl), ctl)
}

/// As [`barcode`], with the apparent pairs and the listings `offload` takes over (the GPU's,
/// on the CUDA backend).
pub fn barcode_with(
    d: &Distances,
    opts: &RipsOptions,
    offload: &mut dyn Offload,
    ctl: &Control,
) -> Result<Barcode, RipsError> {
    scheduled(d, opts, offload, reduce::Schedule::default(), ctl)
}

/// What a tail's thread gives: its bars, its pivots (sorted) and the dimension's pivot table.
type Finished = (Vec<Bar>, Vec<u64>, reduce::Pivots);

/// A dimension's tail being finished beside the next dimension: its thread (bars, late pivots
/// sorted, all its pivots) and the thread guessing its waiting columns' pivots, the pivots
/// both name as they find them, those guessed when the next dimension was listed, and the
/// dimension's simplices (to list the next again if a guess fails).
struct Pending<'s> {
    tail: std::thread::ScopedJoinHandle<'s, Result<Finished, RipsError>>,
    speculation: std::thread::ScopedJoinHandle<'s, Result<(), RipsError>>,
    late: std::sync::Arc<std::sync::Mutex<Vec<u64>>>,
    provisional: Vec<u64>,
    simplices: Vec<index::Entry>,
    stops: Stops,
}

/// The flags that end a tail's two threads early: the copy's once the next dimension is
/// reduced (what it names later could only fail a check), both when the barcode stops before
/// waiting for them (an error), which dropping these does.
struct Stops {
    tail: std::sync::Arc<AtomicBool>,
    guess: std::sync::Arc<AtomicBool>,
}

impl Drop for Stops {
    fn drop(&mut self) {
        self.tail.store(true, Ordering::Relaxed);
        self.guess.store(true, Ordering::Relaxed);
    }
}

/// A named thread of `scope`; failing to start one is an error of the barcode.
fn spawn_in<'s, 'e, T: Send + 's>(
    scope: &'s std::thread::Scope<'s, 'e>,
    name: &str,
    f: impl FnOnce() -> T + Send + 's,
) -> Result<std::thread::ScopedJoinHandle<'s, T>, RipsError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(scope, f)
        .map_err(|e| RipsError::Thread(e.to_string()))
}

/// The next dimension's columns and simplices of `l`, from `offload` or on the CPU's cores.
fn list(offload: &mut dyn Offload, l: &Listing, ctl: &Control) -> Result<Listed, RipsError> {
    match offload.next_columns(l)? {
        Some((mut columns, next)) => {
            l.fits(columns.len(), next.len())?;
            reduce::sort_columns(&mut columns);
            Ok((columns, next))
        }
        None => list_on_cpu(l, ctl),
    }
}

fn scheduled(
    d: &Distances,
    opts: &RipsOptions,
    offload: &mut dyn Offload,
    schedule: reduce::Schedule,
    ctl: &Control,
) -> Result<Barcode, RipsError> {
    opts.check()?;
    let mut stages = stages::Stages::from_env();
    let n = d.len();
    let table = index::Binomials::new(n, opts.maxdim + 2).ok_or_else(|| {
        RipsError::Invalid(format!(
            "{n} points: the simplices of dimension {} cannot be numbered in 64 bits",
            opts.maxdim + 1
        ))
    })?;
    // Beyond the enclosing radius (the least, over the points, of the farthest distance from
    // one) the complex is a cone and every class has died: edges longer than it change no bar.
    let threshold = opts.threshold.min(d.enclosing_radius());
    // Neighbour lists pay once the threshold leaves out most edges (Ripser's sparse matrix).
    let (within, shortest) = d.within(threshold);
    let neighbors = (within < d.lower().len() / 2).then(|| index::Neighbors::new(d, threshold));
    // A dimension's columns and simplices are held at once: refused, not swapped or killed,
    // past 80% of the memory available.
    let budget = crate::mem::available_bytes().map_or(u64::MAX, |a| a / 10 * 8);
    let square = (neighbors.is_none() && n <= index::SQUARE_MOST_POINTS).then(|| d.square());
    let c = index::Complex {
        d,
        table: &table,
        threshold,
        neighbors: neighbors.as_ref(),
        square: square.as_deref(),
        shortest,
        budget,
    };
    stages.mark(|| {
        let kept = if neighbors.is_some() { "neighbour lists" } else { "dense" };
        format!("{n} points: enclosing radius, {within} edges within {threshold}, {kept}")
    });
    let mut bars = Vec::new();
    let (mut columns, mut simplices) = reduce::dim0(&c, &mut bars);
    stages.mark(|| {
        format!("dim 0: {} edges sorted, union-find, {} columns of dim 1", simplices.len(), columns.len())
    });
    ctl.check()?;
    // The highest dimension's apparent pairs clear nothing: above dimension 1 (whose columns
    // come listed from dimension 0) they are left out as its columns are listed, and looked
    // for among the pivots as they turn up. One test for both, which must agree.
    let left_out = |dim: usize| dim == opts.maxdim && dim > 1;
    // A dimension's last few long columns (its essential classes, mostly) are finished on
    // threads of their own while the next dimension is listed and reduced (see
    // [`reduce::Tail`]), and waited for when that reduction ends.
    std::thread::scope(|scope| -> Result<(), RipsError> {
        let mut pending: Option<Pending> = None;
        let mut dim = 1;
        while dim <= opts.maxdim {
            let apparent = if left_out(dim) { Apparent::LeftOut } else { Apparent::Found(&mut *offload) };
            let cols = Columns { complex: &c, dim, columns: &columns };
            let dropped = pending.as_ref().map(|p| &*p.late);
            // Not while the tail below is pending: its late pivots must reach every column of
            // this dimension, and a tail of its own would take some out of their reach.
            let may_leave_tail = dim < opts.maxdim && pending.is_none();
            let reduced = reduce::reduce(
                &cols,
                &mut bars,
                apparent,
                schedule,
                reduce::Overlap { may_leave_tail, dropped },
                &mut stages,
                ctl,
            )?;
            if let Some(p) = pending.take() {
                p.stops.guess.store(true, Ordering::Relaxed);
                let guessed = p.speculation.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                let (tail_bars, late, pivots) =
                    p.tail.join().unwrap_or_else(|e| std::panic::resume_unwind(e))?;
                guessed?;
                bars.extend(tail_bars);
                let published = p.late.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let is_late = |x: &u64| late.binary_search(x).is_ok();
                if p.provisional.iter().chain(&published).all(is_late) {
                    // A late pivot is a simplex this dimension reduced to zero for want of
                    // clearing: the end of a bar below, not an essential class.
                    bars.retain(|b| b.dim != dim || b.killer.is_some() || !is_late(&b.creator));
                } else {
                    // A pivot the copy named is not the tail's (a column still being reduced when
                    // the tail was left took it, or one that took its pivot): this dimension
                    // again, cleared as it should be. (The pivots the listing guessed are always
                    // the tail's: whichever column takes one makes it a pivot; checked all the
                    // same.)
                    bars.retain(|b| b.dim != dim);
                    let l = Listing {
                        complex: &c,
                        dim: dim - 1,
                        simplices: &p.simplices,
                        top: left_out(dim),
                        pivots: &pivots,
                    };
                    (columns, simplices) = list(offload, &l, ctl)?;
                    stages.mark(|| format!("dim {dim}: listed again, a guessed clearing having failed"));
                    continue;
                }
            }
            if dim == opts.maxdim {
                break;
            }
            let top = left_out(dim + 1);
            let mut pivots = reduced.pivots;
            let mut provisional = reduced.tail.as_ref().map(|t| t.provisional(&pivots)).unwrap_or_default();
            if schedule.fail_guess && reduced.tail.is_some() {
                provisional.push(u64::MAX);
            }
            for &x in &provisional {
                pivots.entry(x).or_insert(usize::MAX);
            }
            let l = Listing { complex: &c, dim, simplices: &simplices, top, pivots: &pivots };
            let (next_columns, next_simplices) = list(offload, &l, ctl)?;
            let done_columns = std::mem::replace(&mut columns, next_columns);
            let done_simplices = std::mem::replace(&mut simplices, next_simplices);
            stages.mark(|| {
                let kept = if top {
                    "apparent ones left out".to_string()
                } else {
                    format!("{} simplices", simplices.len())
                };
                format!("dim {}: {} columns listed and sorted ({kept})", dim + 1, columns.len())
            });
            if let Some(tail) = reduced.tail {
                pivots.retain(|_, &mut j| j != usize::MAX);
                // Two threads: the tail itself, and a copy of its waiting columns paired at
                // once (a guess at their pivots), both naming the pivots they find for the
                // next dimension to drop; every name is checked when both are done.
                let late = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
                let done_columns = std::sync::Arc::new(done_columns);
                let (c, published, cols) = (&c, late.clone(), done_columns.clone());
                let (guess, mut guess_pivots) = (tail.speculate(&pivots), pivots.clone());
                let stops = Stops { tail: Default::default(), guess: Default::default() };
                let (stop_tail, stop_guess) = (stops.tail.clone(), stops.guess.clone());
                // The copy's columns are the tail's: only the tail reports them as progress.
                let quiet = Control { progress: None, ..*ctl };
                let speculation = spawn_in(scope, "rips-guess", move || {
                    let mut no_bars = Vec::new();
                    let done = guess.finish(
                        c,
                        &cols,
                        &mut guess_pivots,
                        &mut no_bars,
                        reduce::Shared { published: &published, stop: &stop_guess },
                        &quiet,
                    );
                    done.map(|_| ())
                })?;
                let published = late.clone();
                let tail = spawn_in(scope, "rips-tail", move || {
                    let mut stages = stages::Stages::from_env();
                    let mut bars = Vec::new();
                    let done = tail.finish(
                        c,
                        &done_columns,
                        &mut pivots,
                        &mut bars,
                        reduce::Shared { published: &published, stop: &stop_tail },
                        ctl,
                    )?;
                    stages.mark(|| {
                        format!(
                            "dim {dim}: its last columns finished beside the next dimension in {} rounds ({} pivots)",
                            done.rounds,
                            done.late.len()
                        )
                    });
                    let mut late = done.late;
                    late.sort_unstable();
                    Ok((bars, late, pivots))
                })?;
                pending =
                    Some(Pending { tail, speculation, late, provisional, simplices: done_simplices, stops });
            }
            dim += 1;
        }
        Ok(())
    })?;
    Ok(Barcode { maxdim: opts.maxdim, points: n, bars })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_triangles_have_triangular_lengths() {
        assert_eq!(points_for_entries(0), Some(1));
        assert_eq!(points_for_entries(1), Some(2));
        assert_eq!(points_for_entries(3), Some(3));
        assert_eq!(points_for_entries(18336), Some(192));
        assert_eq!(points_for_entries(4), None);
        for i in 0..100 {
            let (r, c) = row_col(i);
            assert!(c < r && r * (r - 1) / 2 + c == i);
        }
    }

    #[test]
    fn the_enclosing_radius_and_the_count_within_are_those_of_the_matrix() {
        for n in [0usize, 1, 2, 3, 17, 200] {
            let pts: Vec<f64> = (0..n).flat_map(|i| [((i * 37) % 11) as f64, ((i * i) % 7) as f64]).collect();
            let d = if n == 0 {
                Distances { n: 0, lower: Vec::new() }
            } else {
                Distances::euclidean(&pts, 2, &Control::default()).unwrap()
            };
            let want = (0..n)
                .map(|i| (0..n).map(|j| d.get(i, j)).fold(0f32, f32::max))
                .fold(f32::INFINITY, f32::min);
            assert_eq!(d.enclosing_radius(), want, "{n} points");
            let within =
                (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).filter(|&(i, j)| d.get(i, j) <= 3.0);
            let shortest = within.clone().map(|(i, j)| d.get(i, j)).fold(f32::INFINITY, f32::min);
            assert_eq!(d.within(3.0), (within.count(), shortest));
        }
        let zero = Distances::from_lower(vec![-0.0]).unwrap();
        assert!(zero.get(1, 0).is_sign_positive(), "-0 is read as 0");
    }

    #[test]
    fn points_no_f32_distance_holds_are_refused() {
        let far = Distances::euclidean(&[3e38, 0.0, -3e38, 0.0], 2, &Control::default());
        assert!(matches!(far, Err(RipsError::Invalid(m)) if m.contains("single precision")));
        assert!(matches!(Distances::euclidean(&[], 2, &Control::default()), Err(RipsError::Invalid(_))));
    }

    /// The pairs are the sequential reduction's whatever the rounds: one column open at a
    /// time, a few, columns cut off after one coboundary or two a round; against the default
    /// schedule and the textbook reduction, on clouds with ties and equal points, dense and
    /// under a threshold (neighbour lists).
    #[test]
    fn the_bars_do_not_depend_on_the_window_or_the_budget() {
        let ctl = Control::default();
        let mut next = crate::synthetic::noise(11);
        for round in 0..60 {
            let dim = 2 + round % 2;
            let n = if round % 2 == 0 { 12 + (next() % 28) as usize } else { 8 + (next() % 10) as usize };
            let p: Vec<f64> = (0..n * dim).map(|_| (next() % 4) as f64).collect();
            let d = Distances::euclidean(&p, dim, &ctl).expect("finite points");
            let threshold = if round % 3 == 0 { 2.0 } else { f32::INFINITY };
            let opts = RipsOptions { maxdim: 2 + round % 2, threshold };
            // Bars equal by dimension, birth and death; the pairs of simplices too, since each
            // schedule computes the sequential reduction's.
            let pairs = |b: &Barcode| {
                let mut p: Vec<_> = b
                    .bars
                    .iter()
                    .map(|x| (x.dim, x.birth.to_bits(), x.death.to_bits(), x.creator, x.killer))
                    .collect();
                p.sort_unstable();
                p
            };
            let want = barcode(&d, &opts, &ctl).expect("a barcode");
            assert_eq!(want.clone().sorted(), naive::barcode(&d, &opts).sorted(), "round {round}");
            let schedules = [
                (1, 1, 0, false),
                (1, 2, 1, false),
                (3, 1, 2, true),
                (2, 5, usize::MAX, false),
                (2, 5, 4, true),
            ];
            for (window_per_thread, budget, tail, fail_guess) in schedules {
                let schedule = reduce::Schedule { window_per_thread, budget, tail, fail_guess };
                let b = scheduled(&d, &opts, &mut OnCpu(&ctl), schedule, &ctl).expect("a barcode");
                assert_eq!(pairs(&b), pairs(&want), "round {round}, {schedule:?}");
            }
        }
    }

    #[test]
    fn four_points_on_a_square_have_one_loop() {
        // Unit square: sides 1, diagonals sqrt 2. H0: three bars dying at 1, one essential.
        // H1: one loop born at 1 and filled at sqrt 2.
        let p = [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        let d = Distances::euclidean(&p, 2, &Control::default()).unwrap();
        let b = barcode(&d, &RipsOptions::default(), &Control::default()).unwrap().sorted();
        let s2 = 2f64.sqrt() as f32;
        let want = vec![
            Bar::new(0, 0.0, 1.0),
            Bar::new(0, 0.0, 1.0),
            Bar::new(0, 0.0, 1.0),
            Bar::new(0, 0.0, f32::INFINITY),
            Bar::new(1, 1.0, s2),
        ];
        assert_eq!(b.bars, want);
        // The loop is created by the last side to enter (an edge of length 1) and filled by
        // a triangle over a diagonal.
        let lp = b.bars[4];
        assert_eq!(b.vertices(lp.creator, 1).len(), 2);
        let killer = b.vertices(lp.killer.unwrap(), 2);
        assert_eq!(killer.len(), 3);
        let (u, v) = (b.vertices(lp.creator, 1)[0], b.vertices(lp.creator, 1)[1]);
        assert_eq!(d.get(u, v), 1.0);
        assert!(killer.contains(&u) && killer.contains(&v));
        // Each finite H0 bar dies at its own edge of length 1; the four components' creators
        // are the four points, the essential one's the oldest root (point 0).
        let mut creators: Vec<u64> = b.bars[..4].iter().map(|bar| bar.creator).collect();
        let mut killers: Vec<u64> = b.bars[..3].iter().map(|bar| bar.killer.unwrap()).collect();
        for &k in &killers {
            let e = b.vertices(k, 1);
            assert_eq!(d.get(e[0], e[1]), 1.0);
        }
        assert_eq!((b.bars[3].creator, b.bars[3].killer), (0, None));
        creators.sort();
        killers.sort();
        killers.dedup();
        assert_eq!((creators, killers.len()), (vec![0, 1, 2, 3], 3));
    }
}
