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

use super::kernel::{Lines2, Lines3, line_2d, line_3d};
use super::{Geometry, Held, fill_slab, filtration_key, key_origin};
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

/// The 3D line kernel on 8-bit keys: by hand with AVX2 where the caller runs with it (`AVX2`).
#[inline(always)]
fn kernel_3d<const VERT: bool, const AVX2: bool>(lines: Lines3<'_, i8>, out: &mut [i8]) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: AVX2 is there (the caller's promise).
        return unsafe { avx2::line_3d::<VERT>(lines, out) };
    }
    line_3d::<i8, VERT>(lines, out)
}

/// The 2D line kernel on 8-bit keys, as [`kernel_3d`].
#[inline(always)]
fn kernel_2d<const VERT: bool, const AVX2: bool>(rows: Lines2<'_, i8>, out: &mut [i8]) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: as in `kernel_3d`.
        return unsafe { avx2::line_2d::<VERT>(rows, out) };
    }
    line_2d::<i8, VERT>(rows, out)
}

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
                if geo.three_d {
                    let lines = [0, 1, 2].map(|dp| [0, 1, 2].map(|dl| line(p + dp - 1, l + dl - 1)));
                    kernel_3d::<VERT, AVX2>(lines, &mut self.changes);
                } else {
                    kernel_2d::<VERT, AVX2>([0, 1, 2].map(|dp| line(p + dp - 1, l)), &mut self.changes);
                }
                // Collar voxels earlier in memory: the plane before, the line before, and in 3D
                // the line after in the plane before; the ends of every line. (The last plane's
                // collar is all later in memory, where the comparison is right.)
                let face = plane == 0 || (geo.three_d && (li == 0 || li + 1 == geo.lines));
                let start = (p * lp + l) * row + 1;
                if face {
                    if self.slab[start..start + n].contains(&TOP) {
                        self.exact::<VERT>(geo, plane, p, l, 0..n);
                    }
                } else {
                    for x in [0, n - 1] {
                        if self.slab[start + x] == TOP {
                            self.exact::<VERT>(geo, plane, p, l, x..x + 1);
                        }
                    }
                }
                emit(&self.slab[start..start + n], &self.changes);
            }
        }
    }

    /// The changes of voxels `xs` of padded line `l` of slab plane `p` (the field's plane
    /// `plane`) on i16 keys, with the collar `i16::MAX`, into `changes`.
    fn exact<const VERT: bool>(
        &mut self,
        geo: &Geometry,
        plane: usize,
        p: usize,
        l: usize,
        xs: std::ops::Range<usize>,
    ) {
        let (row, n) = (geo.x + 2, geo.x);
        let (lp, pad) = geo.padded_lines();
        // The padded window of the run: its voxels and one either side.
        let width = xs.len() + 2;
        // 2D fields have one line a plane: only the planes around count.
        let lines = if geo.three_d { 0..3 } else { 1..2 };
        self.wide.clear();
        for dp in 0..3 {
            for dl in lines.clone() {
                let plane_out = plane + dp < 1 || plane + dp > geo.planes;
                let line_out = l + dl < pad + 1 || l + dl > pad + geo.lines;
                let src = ((p + dp - 1) * lp + l + dl - 1) * row;
                for px in xs.start..xs.end + 2 {
                    let collar = plane_out || line_out || px == 0 || px == n + 1;
                    self.wide.push(if collar { i16::ABSENT } else { self.slab[src + px] as i16 });
                }
            }
        }
        let w = &self.wide;
        let out = &mut self.changes[xs];
        if geo.three_d {
            line_3d::<i16, VERT>(
                [0, 1, 2].map(|dp| [0, 1, 2].map(|dl| &w[(dp * 3 + dl) * width..][..width])),
                out,
            );
        } else {
            line_2d::<i16, VERT>([0, 1, 2].map(|dp| &w[dp * width..][..width]), out);
        }
    }

    /// Copies planes `p0 - 1 ..= p1` as 8-bit keys into the slab, `TOP` for the collar.
    #[inline(always)]
    fn fill<T: Sample, const SUP: bool>(&mut self, held: Held<T>, geo: &Geometry, p0: usize, p1: usize) {
        // Key k is bin k - origin of the histogram; as i8, bin - 128.
        let origin = key_origin::<T, SUP>() + 128;
        fill_slab(&mut self.slab, held, geo, p0, p1, TOP, |s| {
            (filtration_key::<T, SUP>(s).to_i64() - origin) as i8
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of 8-bit keys from few levels (ties), the extremes among them.
    fn lines(seed: u64, len: usize) -> Vec<Vec<i8>> {
        let mut s = seed | 1;
        let levels = [-128i8, -1, 0, 5, 127];
        (0..9)
            .map(|_| {
                (0..len)
                    .map(|_| {
                        s ^= s << 13;
                        s ^= s >> 7;
                        s ^= s << 17;
                        levels[(s % levels.len() as u64) as usize]
                    })
                    .collect()
            })
            .collect()
    }

    /// The AVX2 kernels equal the portable ones on 8-bit keys, voxel for voxel, for lines of
    /// every length up to three vectors and a half (the portable kernel finishes each line).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_vector_kernels_equal_the_portable_ones() {
        if !std::is_x86_feature_detected!("avx2") {
            eprintln!("skipped: no AVX2 here");
            return;
        }
        fn check<const VERT: bool>(n: usize, seed: u64) {
            let l = lines(seed, n + 2);
            let l3: Lines3<'_, i8> = [0, 1, 2].map(|z| [0, 1, 2].map(|y| &l[z * 3 + y][..]));
            let l2: Lines2<'_, i8> = [0, 1, 2].map(|y| &l[y][..]);
            let (mut a, mut b) = (vec![0i8; n], vec![0i8; n]);
            kernel_3d::<VERT, true>(l3, &mut a);
            kernel_3d::<VERT, false>(l3, &mut b);
            assert_eq!(a, b, "3D, n {n}, VERT {VERT}");
            kernel_2d::<VERT, true>(l2, &mut a);
            kernel_2d::<VERT, false>(l2, &mut b);
            assert_eq!(a, b, "2D, n {n}, VERT {VERT}");
        }
        for n in 1..=112 {
            check::<true>(n, n as u64);
            check::<false>(n, 1000 + n as u64);
        }
    }
}
