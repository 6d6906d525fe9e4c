//! The ECC kernel of 8-bit fields (u8, i8) on 8-bit keys: the same changes as the generic path
//! (whose keys are i16, to hold `ABSENT` above every value), with twice the lanes in each vector
//! comparison.
//!
//! The 256 values fill every i8 key, so the collar's `ABSENT` (`i8::MAX`) equals the largest
//! value's key. Only one comparison can then differ from the exact one: "precedes" towards a
//! collar voxel earlier in memory is `key < ABSENT`, true for every value but the largest. So a
//! voxel next to the collar that holds the largest key is computed again on i16 keys, where the
//! collar is `i16::MAX` (the whole line for lines along the field's faces, the end voxels for
//! the others); every other voxel's change is already exact.

use super::kernel::{line_2d, line_3d};
use super::{Geometry, Held, filtration_key, key_origin};
use crate::field::{Key, Sample};

/// Per-thread buffers: one padded slab of 8-bit keys, one line of changes, and the i16 lines
/// of the voxels computed again.
#[derive(Default)]
pub(super) struct Scratch8 {
    slab: Vec<i8>,
    changes: Vec<i8>,
    wide: Vec<i16>,
}

/// The largest 8-bit key, which the collar shares.
const TOP: i8 = i8::MAX;

impl Scratch8 {
    /// Computes the changes of planes `p0..p1` and hands each line to `emit` as (8-bit keys of
    /// the line, changes of the line); key `k` is bin `k + 128` of the type's histogram.
    pub(super) fn run<T: Sample, const VERT: bool, const SUP: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        p0: usize,
        p1: usize,
        emit: impl FnMut(&[i8], &[i8]),
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { self.run_avx2::<T, VERT, SUP>(held, geo, p0, p1, emit) };
        }
        self.run_generic::<T, VERT, SUP, false>(held, geo, p0, p1, emit)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn run_avx2<T: Sample, const VERT: bool, const SUP: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        p0: usize,
        p1: usize,
        emit: impl FnMut(&[i8], &[i8]),
    ) {
        self.run_generic::<T, VERT, SUP, true>(held, geo, p0, p1, emit)
    }

    /// `AVX2`: the caller runs with AVX2 (the kernel's comparisons by explicit vector
    /// instructions; the compiler leaves the portable kernel on 8-bit keys scalar).
    #[inline(always)]
    fn run_generic<T: Sample, const VERT: bool, const SUP: bool, const AVX2: bool>(
        &mut self,
        held: Held<T>,
        geo: &Geometry,
        p0: usize,
        p1: usize,
        mut emit: impl FnMut(&[i8], &[i8]),
    ) {
        self.fill::<T, SUP>(held, geo, p0, p1);
        let (n, row) = (geo.x, geo.x + 2);
        let (lp, pad) = geo.padded_lines();
        self.changes.resize(n, 0);
        for p in 1..=(p1 - p0) {
            let plane = p0 + p - 1;
            for li in 0..geo.lines {
                let l = li + pad;
                let slab = &self.slab;
                let line = |p: usize, l: usize| &slab[(p * lp + l) * row..][..row];
                let out = &mut self.changes;
                if geo.three_d {
                    let lines = [0, 1, 2].map(|dp| [0, 1, 2].map(|dl| line(p + dp - 1, l + dl - 1)));
                    #[cfg(target_arch = "x86_64")]
                    if AVX2 {
                        // SAFETY: AVX2 is there (the caller's promise).
                        unsafe { avx2::line_3d::<VERT>(lines, out) };
                    } else {
                        line_3d::<i8, VERT>(lines, out);
                    }
                    #[cfg(not(target_arch = "x86_64"))]
                    line_3d::<i8, VERT>(lines, out);
                } else {
                    let rows = [0, 1, 2].map(|dp| line(p + dp - 1, l));
                    #[cfg(target_arch = "x86_64")]
                    if AVX2 {
                        // SAFETY: as above.
                        unsafe { avx2::line_2d::<VERT>(rows, out) };
                    } else {
                        line_2d::<i8, VERT>(rows, out);
                    }
                    #[cfg(not(target_arch = "x86_64"))]
                    line_2d::<i8, VERT>(rows, out);
                }
                let face = plane == 0
                    || plane + 1 == geo.planes
                    || (geo.three_d && (li == 0 || li + 1 == geo.lines));
                let start = (p * lp + l) * row + 1;
                // Lines along a face touch the collar everywhere, the others at their ends.
                let ends = [0, n - 1];
                let touching: &mut dyn Iterator<Item = usize> =
                    if face { &mut (0..n) } else { &mut ends.into_iter().take(if n > 1 { 2 } else { 1 }) };
                for x in touching {
                    if self.slab[start + x] == TOP {
                        self.changes[x] = self.exact::<VERT>(geo, plane, p, l, x);
                    }
                }
                let slab = &self.slab;
                emit(&slab[(p * lp + l) * row + 1..][..n], &self.changes);
            }
        }
    }

    /// The change of voxel `x` of padded line `l` of slab plane `p` (the field's plane `plane`)
    /// on i16 keys, with the collar `i16::MAX`.
    fn exact<const VERT: bool>(&mut self, geo: &Geometry, plane: usize, p: usize, l: usize, x: usize) -> i8 {
        let (row, n) = (geo.x + 2, geo.x);
        let (lp, pad) = geo.padded_lines();
        // 2D fields have one line a plane: only the planes around count.
        let lines = if geo.three_d { 0..3 } else { 1..2 };
        self.wide.clear();
        for dp in 0..3 {
            for dl in lines.clone() {
                let plane_out = plane + dp < 1 || plane + dp > geo.planes;
                let line_out = l + dl < pad + 1 || l + dl > pad + geo.lines;
                let src = ((p + dp - 1) * lp + l + dl - 1) * row;
                for px in x..x + 3 {
                    let collar = plane_out || line_out || px == 0 || px == n + 1;
                    self.wide.push(if collar { i16::ABSENT } else { self.slab[src + px] as i16 });
                }
            }
        }
        let w = &self.wide;
        let mut out = [0i8];
        if geo.three_d {
            line_3d::<i16, VERT>(
                [0, 1, 2].map(|dp| [0, 1, 2].map(|dl| &w[(dp * 3 + dl) * 3..][..3])),
                &mut out,
            );
        } else {
            line_2d::<i16, VERT>([0, 1, 2].map(|dp| &w[dp * 3..][..3]), &mut out);
        }
        out[0]
    }

    /// Copies planes `p0 - 1 ..= p1` as 8-bit keys into the slab, `TOP` for the collar.
    #[inline(always)]
    fn fill<T: Sample, const SUP: bool>(&mut self, held: Held<T>, geo: &Geometry, p0: usize, p1: usize) {
        let row = geo.x + 2;
        let (lp, pad) = geo.padded_lines();
        // Key k is bin k - origin of the histogram; as i8, bin - 128.
        let origin = key_origin::<T, SUP>() + 128;
        self.slab.clear();
        self.slab.resize(row * lp * (p1 - p0 + 2), TOP);
        for (pi, p) in (p0 as isize - 1..=p1 as isize).enumerate() {
            if p < 0 || p as usize >= geo.planes {
                continue;
            }
            for l in 0..geo.lines {
                let src = &held.data[((p as usize - held.base) * geo.lines + l) * geo.x..][..geo.x];
                let dst = &mut self.slab[(pi * lp + l + pad) * row + 1..][..geo.x];
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = (filtration_key::<T, SUP>(s).to_i64() - origin) as i8;
                }
            }
        }
    }
}

/// The line kernels on 8-bit keys with AVX2: 32 voxels a vector, each comparison one
/// instruction; the same changes as [`super::kernel`] (which finishes the line's last voxels).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::super::kernel::{Lines2, Lines3};
    use std::arch::x86_64::*;

    const W: usize = 32;

    /// B for each voxel of `c` towards the neighbours `n` (as masks, all ones for true), for a
    /// neighbour earlier in memory: key c < key n, NOT for the vertices construction.
    #[inline(always)]
    fn earlier<const VERT: bool>(c: __m256i, n: __m256i) -> __m256i {
        // SAFETY: register-only AVX2 operations, and AVX2 is there (the callers' promise).
        unsafe {
            let lt = _mm256_cmpgt_epi8(n, c);
            if VERT { _mm256_xor_si256(lt, _mm256_set1_epi8(-1)) } else { lt }
        }
    }

    /// The same for a neighbour later in memory: key c <= key n, i.e. NOT key c > key n.
    #[inline(always)]
    fn later<const VERT: bool>(c: __m256i, n: __m256i) -> __m256i {
        // SAFETY: as in `earlier`.
        unsafe {
            let gt = _mm256_cmpgt_epi8(c, n);
            if VERT { gt } else { _mm256_xor_si256(gt, _mm256_set1_epi8(-1)) }
        }
    }

    /// Loads the 32 keys at `r[x..]`.
    #[inline(always)]
    fn load(r: &[i8], x: usize) -> __m256i {
        let r = &r[x..x + W];
        // SAFETY: 32 readable bytes (just sliced); unaligned loads are allowed.
        unsafe { _mm256_loadu_si256(r.as_ptr().cast()) }
    }

    /// Changes of one line of a 3D field, as [`super::super::kernel::line_3d`].
    #[target_feature(enable = "avx2")]
    pub(super) fn line_3d<const VERT: bool>(lines: Lines3<'_, i8>, out: &mut [i8]) {
        let n = out.len();
        let l = lines.map(|p| p.map(|r| &r[..n + 2]));
        let full = n / W * W;
        for x in (0..full).step_by(W) {
            let ld = |z: usize, y: usize, dx: usize| load(l[z][y], x + dx);
            let c = ld(1, 1, 1);
            let (e, lt) =
                (|z, y, dx| earlier::<VERT>(c, ld(z, y, dx)), |z, y, dx| later::<VERT>(c, ld(z, y, dx)));
            let and = |a, b| _mm256_and_si256(a, b);
            let and3 = |a, b, c| and(and(a, b), c);
            let (d, u) = (e(0, 1, 1), lt(2, 1, 1));
            let (no, so) = (e(1, 0, 1), lt(1, 2, 1));
            let (w, ea) = (e(1, 1, 0), lt(1, 1, 2));
            let nw = and3(e(1, 0, 0), no, w);
            let ne = and3(e(1, 0, 2), no, ea);
            let sw = and3(lt(1, 2, 0), so, w);
            let se = and3(lt(1, 2, 2), so, ea);
            let dw = and3(e(0, 1, 0), d, w);
            let de = and3(e(0, 1, 2), d, ea);
            let uw = and3(lt(2, 1, 0), u, w);
            let ue = and3(lt(2, 1, 2), u, ea);
            let dn = and3(e(0, 0, 1), d, no);
            let ds = and3(e(0, 2, 1), d, so);
            let un = and3(lt(2, 0, 1), u, no);
            let us = and3(lt(2, 2, 1), u, so);
            let corners = [
                and(and3(e(0, 0, 0), nw, dw), dn),
                and(and3(e(0, 0, 2), ne, de), dn),
                and(and3(e(0, 2, 0), sw, dw), ds),
                and(and3(e(0, 2, 2), se, de), ds),
                and(and3(lt(2, 0, 0), nw, uw), un),
                and(and3(lt(2, 0, 2), ne, ue), un),
                and(and3(lt(2, 2, 0), sw, uw), us),
                and(and3(lt(2, 2, 2), se, ue), us),
            ];
            // Masks are -1 where true: f = 1 - singles + pairs - corners is 1 plus the singles'
            // and corners' masks, minus the pairs'.
            let mut f = _mm256_set1_epi8(1);
            for m in [d, u, no, so, w, ea].into_iter().chain(corners) {
                f = _mm256_add_epi8(f, m);
            }
            for m in [nw, ne, sw, se, dw, de, uw, ue, dn, ds, un, us] {
                f = _mm256_sub_epi8(f, m);
            }
            let change = if VERT { f } else { _mm256_sub_epi8(_mm256_setzero_si256(), f) };
            let o = &mut out[x..x + W];
            // SAFETY: 32 writable bytes (just sliced).
            unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), change) };
        }
        super::line_3d::<i8, VERT>(l.map(|p| p.map(|r| &r[full..])), &mut out[full..]);
    }

    /// Changes of one line of a 2D field, as [`super::super::kernel::line_2d`].
    #[target_feature(enable = "avx2")]
    pub(super) fn line_2d<const VERT: bool>(rows: Lines2<'_, i8>, out: &mut [i8]) {
        let n = out.len();
        let r = rows.map(|r| &r[..n + 2]);
        let full = n / W * W;
        for x in (0..full).step_by(W) {
            let ld = |y: usize, dx: usize| load(r[y], x + dx);
            let c = ld(1, 1);
            let (e, lt) = (|y, dx| earlier::<VERT>(c, ld(y, dx)), |y, dx| later::<VERT>(c, ld(y, dx)));
            let and3 = |a, b, c| _mm256_and_si256(_mm256_and_si256(a, b), c);
            let (t, le, ri, b) = (e(0, 1), e(1, 0), lt(1, 2), lt(2, 1));
            let pairs =
                [and3(e(0, 0), t, le), and3(e(0, 2), t, ri), and3(lt(2, 0), b, le), and3(lt(2, 2), b, ri)];
            let mut f = _mm256_set1_epi8(1);
            for m in [t, le, ri, b] {
                f = _mm256_add_epi8(f, m);
            }
            for m in pairs {
                f = _mm256_sub_epi8(f, m);
            }
            let o = &mut out[x..x + W];
            // SAFETY: 32 writable bytes (just sliced).
            unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), f) };
        }
        super::line_2d::<i8, VERT>(r.map(|r| &r[full..]), &mut out[full..]);
    }
}
