//! Betti curves: β0, β1 and β2 of the sublevel (superlevel) set at every threshold of an ECC.
//!
//! * **β0** counts the components of the set: a union-find over the voxels in filtration order,
//!   with the construction's connectivity (top cells: 8 in 2D, 26 in 3D, since cubes sharing a
//!   corner share that corner; vertices: 4 and 6, since a cell needs all its vertices).
//! * **β2** (3D) counts the voids, by Alexander duality the bounded components of the complement
//!   of the set in space: a union-find over the voxels *outside* the set, in reverse filtration
//!   order, with the dual connectivity (top cells: 6, since only a shared face keeps two outside
//!   cubes' interiors apart from the set; vertices: 26, since the open cube of a cell not in the
//!   set joins all of its outside vertices), and one extra node for the unbounded outside of the
//!   box, which every outside voxel on the box's boundary touches. NaN voxels (absent from every
//!   set) are outside from the start.
//! * **β1** follows from χ = β0 − β1 + β2.
//!
//! Both passes share one sort of the voxels and run concurrently, each cut into slabs swept in
//! parallel ([`sweep`]), or on the GPU (`kernels/betti.cu`, through
//! `topoview_compute::backend::Backend::betti`). Memory beyond the field, on the CPU: four bytes a
//! voxel for the order and per pass ten (union-find five, the slabs' lists of times four, the
//! merges one) and the edges at the cuts (a few per voxel of a cut's two planes); a transient
//! key+index pair per voxel while sorting wide types; the curves, 24 bytes per threshold. On the
//! GPU, 25 bytes a voxel of device memory. Fields of 2^32 - 1 voxels or more are refused.

pub mod parts;
mod sweep;
pub mod tunnels;

use crate::control::Control;
use crate::field::{Key, Sample, ScalarField};
use crate::topo::ecc::{Construction, Ecc, Filtration, filtration_key, threshold};
use crate::with_samples;
use rayon::prelude::*;
use sweep::{Seq, Sweep};

/// β0, β1, β2 at each threshold of the curve they were computed for (β2 is zero in 1D and 2D).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Betti {
    pub b0: Vec<i64>,
    pub b1: Vec<i64>,
    pub b2: Vec<i64>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BettiError {
    #[error(
        "{voxels} voxels: Betti curves and the labelling of components index voxels with 32 bits \
         (at most {} voxels); crop or downsample the field",
        u32::MAX - 1
    )]
    TooLarge { voxels: usize },
    #[error(
        "the curve's {curve} thresholds are not the field's {field} distinct values: it was not \
         computed from this field"
    )]
    NotThisField { curve: usize, field: usize },
    #[error("cancelled")]
    Cancelled,
}

impl From<crate::control::Cancelled> for BettiError {
    fn from(_: crate::control::Cancelled) -> Self {
        BettiError::Cancelled
    }
}

/// The Betti curves of `field` at the thresholds of `ecc`, its Euler characteristic curve (with
/// the construction and filtration it was computed with), on all CPU cores
/// (`topoview_compute::backend::Backend::betti` uses the GPU where there is one). Progress:
/// [`work`] ticks in all.
pub fn betti(field: &ScalarField, ecc: &Ecc, ctl: &Control) -> Result<Betti, BettiError> {
    betti_in_slabs(field, ecc, default_slabs(field), ctl)
}

/// [`betti`] with each pass's grid cut into (at most) `slabs` slabs of planes, swept in
/// parallel; the counts do not depend on it (tests and benchmarks vary it).
pub fn betti_in_slabs(
    field: &ScalarField,
    ecc: &Ecc,
    slabs: usize,
    ctl: &Control,
) -> Result<Betti, BettiError> {
    let plan = Plan::new(field, ecc, ctl)?;
    let merges = plan.merges_on_cpu(slabs, ctl)?;
    Ok(plan.betti(ecc, &merges))
}

/// What both passes work from: the voxels in filtration order, the grid, and which neighbours
/// join in the set and in its complement.
pub struct Plan {
    pub order: Order,
    pub grid: Grid,
    pub set: Connectivity,
    pub outside: Connectivity,
}

/// The merges of each pass, per voxel in its sweep's order ([`sweep`]): the set's, and the
/// complement's in 3D.
pub struct Merges {
    pub set: Vec<u8>,
    pub outside: Option<Vec<u8>>,
}

impl Plan {
    /// Sorts the voxels of `field` into the order of `ecc`'s filtration; refuses a curve not
    /// computed from this field, and fields too large to index with 32 bits.
    pub fn new(field: &ScalarField, ecc: &Ecc, ctl: &Control) -> Result<Plan, BettiError> {
        if field.len() >= u32::MAX as usize {
            return Err(BettiError::TooLarge { voxels: field.len() });
        }
        let sup = ecc.filtration == Filtration::Superlevel;
        let order = with_samples!(field.samples(), v => {
            if sup { Order::of::<_, true>(v) } else { Order::of::<_, false>(v) }
        });
        ctl.check()?;
        if order.thresholds != ecc.thresholds {
            return Err(BettiError::NotThisField { curve: ecc.chi.len(), field: order.groups() });
        }
        let (set, outside) = match ecc.construction {
            Construction::TopCells => (Connectivity::Full, Connectivity::Faces),
            Construction::Vertices => (Connectivity::Faces, Connectivity::Full),
        };
        Ok(Plan { order, grid: Grid::of(field), set, outside })
    }

    /// The set's sweep: its voxels in filtration order.
    fn set_sweep(&self) -> Sweep<'_> {
        Sweep { grid: &self.grid, seq: Seq::Forward(&self.order), conn: self.set, around: false }
    }

    /// The complement's sweep (3D only): NaN voxels, then the others from the last, with the
    /// node around the box.
    fn outside_sweep(&self) -> Option<Sweep<'_>> {
        let s = Sweep { grid: &self.grid, seq: Seq::Backward(&self.order), conn: self.outside, around: true };
        self.grid.three_d.then_some(s)
    }

    /// Both passes on the CPU, side by side, each in (at most) `slabs` slabs.
    pub fn merges_on_cpu(&self, slabs: usize, ctl: &Control) -> Result<Merges, BettiError> {
        let (set, outside) = rayon::join(
            || {
                let m = sweep::merges(&self.set_sweep(), slabs, ctl);
                // NaN voxels, never added, count as done: the bar reaches its end.
                ctl.tick(self.order.absent().len() as u64);
                m
            },
            || self.outside_sweep().map(|s| sweep::merges(&s, slabs, ctl)).transpose(),
        );
        Ok(Merges { set: set?, outside: outside? })
    }

    /// The curves from the passes' merges: components = voxels in − merges among them.
    pub fn betti(&self, ecc: &Ecc, merges: &Merges) -> Betti {
        let (starts, groups) = (&self.order.starts, self.order.groups());
        let sum = |m: &[u8]| m.iter().map(|&x| i64::from(x)).sum::<i64>();
        let mut merged = 0;
        let b0: Vec<i64> = (0..groups)
            .map(|g| {
                merged += sum(&merges.set[starts[g]..starts[g + 1]]);
                starts[g + 1] as i64 - merged
            })
            .collect();
        let mut b2 = vec![0; groups];
        if let Some(m) = &merges.outside {
            // The NaN voxels come first, then the groups from the last; at threshold g those
            // above g are in. With the node around the box (not a void), components - 1 =
            // voxels in - merges.
            let mut n = self.order.absent().len();
            let mut merged = sum(&m[..n]);
            for g in (0..groups).rev() {
                b2[g] = n as i64 - merged;
                let len = starts[g + 1] - starts[g];
                merged += sum(&m[n..n + len]);
                n += len;
            }
        }
        let b1 = b0.iter().zip(&b2).zip(ecc.chi.iter()).map(|((b0, b2), chi)| b0 + b2 - chi).collect();
        Betti { b0, b1, b2 }
    }
}

/// Slabs per pass: at least one per thread, and enough that a slab's union-find (5 bytes a
/// voxel) stays near a core's cache. More slabs make the sequential join of their faces longer:
/// on the developer VM (2 cores, 4 MiB L2 each) a 256^3 field took 6.4 s in 8 slabs, 7.9 s in 32,
/// 11.0 s in 128 and 13.0 s in one; on the GPU machine's 16 cores, 1.8 s in 16, 2.0-2.4 s in 32,
/// 3.1-3.6 s in 128 and 8.9-9.5 s in one.
pub fn default_slabs(field: &ScalarField) -> usize {
    const SLAB_BYTES: usize = 8 << 20;
    rayon::current_num_threads().max(field.len() * 5 / SLAB_BYTES)
}

/// The progress ticks of [`betti`]: one per voxel and pass.
pub fn work(field: &ScalarField) -> u64 {
    work_of(&Grid::of(field))
}

pub fn work_of(grid: &Grid) -> u64 {
    (grid.len() * if grid.three_d { 2 } else { 1 }) as u64
}

/// The voxels in filtration order, cut into groups of equal value; NaN voxels last, in no group.
pub struct Order {
    pub voxels: Vec<u32>,
    /// Group `g` is `voxels[starts[g]..starts[g + 1]]`.
    pub starts: Vec<usize>,
    /// The value of each group.
    pub thresholds: crate::field::Samples,
}

impl Order {
    pub fn of<T: Sample, const SUP: bool>(data: &[T]) -> Order {
        let key = |s: T| filtration_key::<T, SUP>(s);
        let mut voxels: Vec<u32>;
        let mut starts = Vec::new();
        let mut thresholds = Vec::new();
        if let Some((lo, bins)) = T::BINS {
            // A counting sort: keys of narrow types index a histogram directly.
            let lo = if SUP { -lo - bins as i64 } else { lo };
            let bin = |s: T| (key(s).to_i64() - lo) as usize;
            let mut count = vec![0usize; bins + 1];
            for &s in data {
                count[bin(s) + 1] += 1;
            }
            for b in 0..bins {
                if count[b + 1] > 0 {
                    starts.push(count[b]);
                    thresholds.push(threshold::<T, SUP>(T::Key::from_i64(lo + b as i64)));
                }
                count[b + 1] += count[b];
            }
            starts.push(data.len());
            voxels = vec![0; data.len()];
            for (i, &s) in data.iter().enumerate() {
                let b = bin(s);
                voxels[count[b]] = i as u32;
                count[b] += 1;
            }
        } else {
            let mut pairs: Vec<(T::Key, u32)> =
                data.par_iter().enumerate().map(|(i, &s)| (key(s), i as u32)).collect();
            pairs.par_sort_unstable();
            // NaN (ABSENT, the largest key) sorts last.
            let finite = pairs.partition_point(|p| p.0 != T::Key::ABSENT);
            starts =
                (0..finite).into_par_iter().filter(|&j| j == 0 || pairs[j].0 != pairs[j - 1].0).collect();
            thresholds = starts.par_iter().map(|&j| threshold::<T, SUP>(pairs[j].0)).collect();
            starts.push(finite);
            voxels = pairs.into_par_iter().map(|(_, i)| i).collect();
        }
        Order { voxels, starts, thresholds: T::wrap(thresholds) }
    }

    pub fn groups(&self) -> usize {
        self.thresholds.len()
    }

    /// The NaN voxels, in no set.
    fn absent(&self) -> &[u32] {
        &self.voxels[self.starts[self.groups()]..]
    }
}

/// Which neighbours of a voxel are joined to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connectivity {
    /// Across faces only: 4 in 2D, 6 in 3D.
    Faces,
    /// Across faces, edges and corners: 8 in 2D, 26 in 3D.
    Full,
}

/// The voxel grid, x fastest; 1D and 2D fields are one plane.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub n: [usize; 3],
    pub three_d: bool,
}

impl Grid {
    pub fn of(field: &ScalarField) -> Grid {
        Grid { n: field.dims(), three_d: field.ndim() == 3 }
    }

    pub fn len(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The neighbour offsets of a connectivity, each as (dx, dy, dz).
    pub fn offsets(&self, conn: Connectivity) -> Vec<[isize; 3]> {
        let dz: &[isize] = if self.three_d { &[-1, 0, 1] } else { &[0] };
        let mut out = Vec::new();
        for &z in dz {
            for y in -1..=1isize {
                for x in -1..=1isize {
                    let steps = (x != 0) as u8 + (y != 0) as u8 + (z != 0) as u8;
                    if steps > 0 && (conn == Connectivity::Full || steps == 1) {
                        out.push([x, y, z]);
                    }
                }
            }
        }
        out
    }

    /// Calls `f` with the index of each neighbour of voxel `i` inside the grid; returns whether
    /// `i` lies on the box's boundary.
    #[inline(always)]
    pub fn neighbours(&self, i: usize, offsets: &[[isize; 3]], mut f: impl FnMut(usize)) -> bool {
        let [nx, ny, nz] = self.n;
        let (x, y, z) = (i % nx, i / nx % ny, i / (nx * ny));
        let stride = [1, nx as isize, (nx * ny) as isize];
        let boundary =
            x == 0 || x + 1 == nx || y == 0 || y + 1 == ny || (self.three_d && (z == 0 || z + 1 == nz));
        for o in offsets {
            if boundary {
                let inside =
                    |c: usize, d: isize, n: usize| (c as isize + d) >= 0 && ((c as isize + d) as usize) < n;
                if !(inside(x, o[0], nx) && inside(y, o[1], ny) && inside(z, o[2], nz)) {
                    continue;
                }
            }
            f((i as isize + o[0] * stride[0] + o[1] * stride[1] + o[2] * stride[2]) as usize);
        }
        boundary
    }
}

/// Voxels between two looks at the cancel flag (and progress reports).
const CHECK_EVERY: usize = 1 << 18;
