//! The Euler characteristics of a curve, in 32 bits wherever the field's size guarantees they
//! fit: a float field's curve can hold one value per voxel, and halving its bytes halves what a
//! GPU brings back and what the host writes (#15 item 2).

use rayon::prelude::*;

/// The curve's chi values: 32 bits when [`fits_i32`] holds for the field's shape, else 64.
/// The choice depends on the shape alone, so the CPU and GPU backends give the same
/// representation; equality compares values either way.
#[derive(Clone, Debug)]
pub enum Chi {
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// Whether every Euler characteristic of a field of `shape` fits in an i32. A complex's chi
/// lies between minus its odd-dimensional cells and plus its even-dimensional ones, and every
/// threshold set of either construction is a subcomplex of the cubical complex of top cells on
/// the field's box, whose cells are counted here (a missing axis has extent 0: a 2D field's
/// box is a rectangle, not a slab of one voxel).
pub fn fits_i32(shape: &[usize]) -> bool {
    let [a, b, c] = [0, 1, 2].map(|i| shape.get(i).copied().unwrap_or(0) as u128);
    let (a1, b1, c1) = (a + 1, b + 1, c + 1);
    let vertices = a1 * b1 * c1;
    let edges = a * b1 * c1 + a1 * b * c1 + a1 * b1 * c;
    let faces = a * b * c1 + a * b1 * c + a1 * b * c;
    let cubes = a * b * c;
    (vertices + faces).max(edges + cubes) <= i32::MAX as u128
}

/// Runs `$body` with `$v` bound to the typed values (`&Vec<i32>` or `&Vec<i64>`) of a [`Chi`].
#[macro_export]
macro_rules! with_chi {
    ($chi:expr, $v:ident => $body:expr) => {
        match $chi {
            $crate::topo::ecc::Chi::I32($v) => $body,
            $crate::topo::ecc::Chi::I64($v) => $body,
        }
    };
}

impl Chi {
    /// The running sums of per-threshold `changes` (each widened by `wide`), in 32 bits when
    /// `narrow` (see [`fits_i32`]): in parallel, chunk totals first, then each chunk from its
    /// offset.
    pub fn running<S: Copy + Sync>(changes: &[S], narrow: bool, wide: impl Fn(S) -> i64 + Sync) -> Chi {
        let n = changes.len();
        if narrow {
            let mut out = crate::mem::with_capacity::<i32>(n);
            running_into(&mut out.spare_capacity_mut()[..n], changes, 0, &wide, narrow_chi);
            // SAFETY: running_into wrote all n entries.
            unsafe { out.set_len(n) };
            Chi::I32(out)
        } else {
            let mut out = crate::mem::with_capacity::<i64>(n);
            running_into(&mut out.spare_capacity_mut()[..n], changes, 0, &wide, |x| x);
            // SAFETY: as above.
            unsafe { out.set_len(n) };
            Chi::I64(out)
        }
    }

    /// `n` values, their slots given to [`Chi::fill`] in order, a part at a time: a curve that
    /// arrives in pieces (from a GPU) is summed as each piece arrives.
    pub fn with_len(n: usize, narrow: bool) -> Chi {
        if narrow { Chi::I32(vec![0; n]) } else { Chi::I64(vec![0; n]) }
    }

    /// Writes the running sums of `changes` from `start` into entries `first..first +
    /// changes.len()`; returns the last sum.
    pub fn fill<S: Copy + Sync>(
        &mut self,
        first: usize,
        changes: &[S],
        start: i64,
        wide: impl Fn(S) -> i64 + Sync,
    ) -> i64 {
        let range = first..first + changes.len();
        match self {
            Chi::I32(v) => running_into(as_uninit(&mut v[range]), changes, start, &wide, narrow_chi),
            Chi::I64(v) => running_into(as_uninit(&mut v[range]), changes, start, &wide, |x| x),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Chi::I32(v) => v.len(),
            Chi::I64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `i`.
    #[inline]
    pub fn get(&self, i: usize) -> i64 {
        match self {
            Chi::I32(v) => v[i] as i64,
            Chi::I64(v) => v[i],
        }
    }

    /// The values in order (one dispatch per value: loops over long curves use
    /// [`crate::with_chi`]).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The smallest and largest values.
    pub fn min_max(&self) -> Option<(i64, i64)> {
        crate::with_chi!(self, v => {
            let lo = v.par_iter().min().map(|&x| widen(x));
            lo.zip(v.par_iter().max().map(|&x| widen(x)))
        })
    }

    /// The values as i64: a copy made on all cores into huge pages where the kernel allows.
    pub fn to_i64(&self) -> Vec<i64> {
        let mut out = crate::mem::with_capacity(self.len());
        crate::with_chi!(self, v => out.par_extend(v.par_iter().map(|&x| widen(x))));
        out
    }

    /// The values as i64, taking them where they are i64 already.
    pub fn into_i64(self) -> Vec<i64> {
        match self {
            Chi::I64(v) => v,
            c => c.to_i64(),
        }
    }

    /// The last value, chi of the whole field.
    pub fn last(&self) -> Option<i64> {
        self.len().checked_sub(1).map(|i| self.get(i))
    }
}

impl PartialEq for Chi {
    fn eq(&self, other: &Chi) -> bool {
        match (self, other) {
            (Chi::I32(a), Chi::I32(b)) => a == b,
            (Chi::I64(a), Chi::I64(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl PartialEq<Vec<i64>> for Chi {
    fn eq(&self, other: &Vec<i64>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

/// A value of either representation as i64 (for code written once for both, in [`crate::with_chi`]).
#[inline(always)]
pub fn widen<C: Into<i64>>(x: C) -> i64 {
    x.into()
}

/// A chi stored in 32 bits, which [`fits_i32`] promised.
#[inline(always)]
pub(crate) fn narrow_chi(x: i64) -> i32 {
    debug_assert!(i32::try_from(x).is_ok(), "chi {x} past the bound of fits_i32");
    x as i32
}

fn as_uninit<T>(v: &mut [T]) -> &mut [std::mem::MaybeUninit<T>] {
    // SAFETY: MaybeUninit<T> has T's layout, and only initialised values are written back.
    unsafe { &mut *(v as *mut [T] as *mut [std::mem::MaybeUninit<T>]) }
}

/// Writes into `out` the running sums of `changes` from `start` (each widened by `wide`, each
/// sum stored through `store`), in parallel; returns the last sum.
fn running_into<S: Copy + Sync, O: Send>(
    out: &mut [std::mem::MaybeUninit<O>],
    changes: &[S],
    start: i64,
    wide: &(impl Fn(S) -> i64 + Sync),
    store: impl Fn(i64) -> O + Sync,
) -> i64 {
    const CHUNK: usize = 1 << 16;
    let totals: Vec<i64> = changes.par_chunks(CHUNK).map(|c| c.iter().map(|&x| wide(x)).sum()).collect();
    let mut offsets = Vec::with_capacity(totals.len());
    let mut acc = start;
    for t in totals {
        offsets.push(acc);
        acc += t;
    }
    out.par_chunks_mut(CHUNK).zip(changes.par_chunks(CHUNK)).zip(offsets).for_each(|((o, c), mut acc)| {
        for (o, &x) in o.iter_mut().zip(c) {
            acc += wide(x);
            o.write(store(acc));
        }
    });
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_sums_cross_chunks_and_parts() {
        let v: Vec<u64> = (0..200_000i64).map(|i| ((i % 7) - 3) as u64).collect();
        let mut acc = 0i64;
        let want: Vec<i64> = v
            .iter()
            .map(|&x| {
                acc += x as i64;
                acc
            })
            .collect();
        for narrow in [false, true] {
            let whole = Chi::running(&v, narrow, |x| x as i64);
            assert_eq!(whole.to_i64(), want);
            assert_eq!(matches!(whole, Chi::I32(_)), narrow);
            // Continued from a start, as the pieces of a download are.
            let (a, b) = v.split_at(70_001);
            let mut parts = Chi::with_len(v.len(), narrow);
            let mid = parts.fill(0, a, 0, |x| x as i64);
            assert_eq!(parts.fill(a.len(), b, mid, |x| x as i64), *want.last().unwrap());
            assert_eq!(parts, whole);
        }
        assert_eq!(Chi::I32(vec![1, -2]), Chi::I64(vec![1, -2]));
        assert_ne!(Chi::I32(vec![1, -2]), Chi::I64(vec![1, -3]));
    }

    #[test]
    fn the_bound_counts_cells() {
        // 512^3: 513^3 vertices + 3 * 512^2 * 513 faces = 538M, under 2^31.
        assert!(fits_i32(&[512, 512, 512]));
        // 1024^3 has about 4.3G cells of each parity.
        assert!(!fits_i32(&[1024, 1024, 1024]));
        assert!(fits_i32(&[8192, 8192]));
        // The last cube that fits: 813^3 has 2,152M vertices and faces.
        assert!(fits_i32(&[812, 812, 812]) && !fits_i32(&[813, 813, 813]));
        // A square of n^2 pixels has about 2 n^2 cells of each parity (not the 6 n^2 of a
        // slab one voxel thick): 32767^2 = 1.07G pixels fit.
        assert!(fits_i32(&[32_767, 32_767]) && !fits_i32(&[32_768, 32_768]));
        // A line of n voxels has n + 1 vertices.
        assert!(fits_i32(&[i32::MAX as usize - 1]) && !fits_i32(&[i32::MAX as usize]));
    }
}
