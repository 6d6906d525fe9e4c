//! The ECC changes of 3D 8-bit fields (u8, i8) with AVX-512BW, straight from the field's bytes.
//!
//! The same counting as [`super::kernel::line_3d`], 64 voxels a vector, each of the 26
//! neighbour comparisons one instruction into a mask register:
//!
//! * The bytes are compared in the filtration's order by the comparison's predicate (unsigned
//!   for u8, signed for i8, reversed for superlevel sets, negated for the vertices
//!   construction), so there is no slab of keys to fill.
//! * The conjunctions of the pairs and corners ride on the comparisons (a comparison under a
//!   mask ANDs with it), and the change is counted by masked byte adds.
//! * A neighbour outside the field gets its B by mask (top cells: the voxel precedes it;
//!   vertices: it never precedes the voxel). No key is set aside for the collar, so unlike
//!   [`super::narrow`] nothing is computed twice. Only the vectors of a line that touch the
//!   field's boundary (its ends, and every vector of a line on a face) pay for that.
//!
//! A voxel's histogram bin is its byte with bits flipped: the key's offset from the
//! filtration's smallest key ([`super::key_origin`]) is `byte ^ flip` for both types and both
//! filtrations.

use super::Geometry;
use super::histogram::Histogram;
use std::arch::x86_64::*;

/// Voxels a vector.
const W: usize = 64;

/// Whether this CPU runs [`add`].
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
}

/// The bytes of planes `base..` of a 3D 8-bit field, of which planes `p0..p1` are computed (the
/// planes either side of them that lie in the field are held too).
#[derive(Clone, Copy)]
pub(super) struct HeldBytes<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) base: usize,
    pub(super) p0: usize,
    pub(super) p1: usize,
}

/// Adds the changes of `planes` to `hist` (256 bins in the filtration's order). `SIGNED`:
/// the bytes are i8.
///
/// # Safety
/// The CPU has AVX-512BW ([`available`]).
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn add<const SIGNED: bool, const VERT: bool, const SUP: bool>(
    planes: HeldBytes<'_>,
    geo: &Geometry,
    hist: &mut Histogram,
) {
    debug_assert!(geo.three_d);
    let (nx, ny, nz) = (geo.x, geo.lines, geo.planes);
    let held = planes.bytes.len() / (nx * ny);
    let chunks = nx.div_ceil(W);
    // Each vector's (bin, change) pairs are added to the histogram after the next vector is
    // made: the core then adds one vector while it compares the next, and the pairs' loads
    // find the vector stores that wrote them done (reading them back at once stalled on
    // every load, perf showed).
    let mut pairs = [[0u16; W]; 2];
    let (mut made, mut waiting) = (0, 0);
    let flip = _mm512_set1_epi8((if SIGNED { 0x80u8 } else { 0 } ^ if SUP { 0xff } else { 0 }) as i8);
    let (shift, low) =
        (_mm512_set1_epi8(Histogram::CHANGE_SHIFT), _mm512_set1_epi8((1 << Histogram::CHANGE_BITS) - 1));
    for p in planes.p0..planes.p1 {
        for l in 0..ny {
            // The 3 x 3 lines around (p, l), `None` outside the field.
            let line = |dz: usize, dy: usize| {
                let (z, y) = ((p + dz).checked_sub(1)?, (l + dy).checked_sub(1)?);
                if z >= nz || y >= ny {
                    return None;
                }
                let z = z - planes.base;
                assert!(z < held, "plane {} is not held", z + planes.base);
                Some(&planes.bytes[(z * ny + y) * nx..][..nx])
            };
            let lines = [0, 1, 2].map(|dz| [0, 1, 2].map(|dy| line(dz, dy)));
            let face = lines.iter().flatten().any(Option::is_none);
            let own = lines[1][1].expect("the line itself lies in the field");
            let ptrs = lines.map(|z| z.map(|l| l.unwrap_or(own).as_ptr()));
            for k in 0..chunks {
                let x0 = k * W;
                // SAFETY: AVX-512BW (this function's); in a vector away from the line's ends
                // every neighbour's 64 bytes lie in its line (x0 - 1 .. x0 + 65 <= nx).
                unsafe {
                    let (change, centre) = if face {
                        let present = [0, 1, 2, 3, 4, 5, 6, 7, 8].map(|i| lines[i / 3][i % 3].is_some());
                        vector::<SIGNED, VERT, SUP, FACE>(&ptrs, x0, nx, present)
                    } else if x0 > 0 && x0 + W < nx {
                        vector::<SIGNED, VERT, SUP, INSIDE>(&ptrs, x0, nx, [true; 9])
                    } else {
                        vector::<SIGNED, VERT, SUP, ENDS>(&ptrs, x0, nx, [true; 9])
                    };
                    // The pair's index, as u16 (`Histogram::add_pairs`).
                    let bins = _mm512_xor_si512(centre, flip);
                    let change = _mm512_and_si512(_mm512_add_epi8(change, shift), low);
                    for (half, out) in pairs[made].chunks_exact_mut(W / 2).enumerate() {
                        let (b, c) = if half == 0 {
                            (_mm512_castsi512_si256(bins), _mm512_castsi512_si256(change))
                        } else {
                            (_mm512_extracti64x4_epi64::<1>(bins), _mm512_extracti64x4_epi64::<1>(change))
                        };
                        let b = _mm512_slli_epi16::<{ Histogram::CHANGE_BITS }>(_mm512_cvtepu8_epi16(b));
                        let idx = _mm512_or_si512(b, _mm512_cvtepu8_epi16(c));
                        _mm512_storeu_si512(out.as_mut_ptr().cast(), idx);
                    }
                }
                hist.add_pairs(&pairs[1 - made][..waiting]);
                (made, waiting) = (1 - made, W.min(nx - x0));
            }
        }
    }
    hist.add_pairs(&pairs[1 - made][..waiting]);
}

/// Which of a line's vectors [`vector`] computes: one whose neighbours all lie in the field, one
/// at an end of a line that lies inside the field's faces, one of a line on a face.
const INSIDE: u8 = 0;
const ENDS: u8 = 1;
const FACE: u8 = 2;

/// Lanes `0..n` (all for n >= 64).
#[inline(always)]
fn lanes(n: usize) -> u64 {
    if n >= W { !0 } else { (1u64 << n) - 1 }
}

/// The changes of voxels `x0..x0 + 64` of a line (lanes past the line's end are garbage), and
/// the line's bytes there. `ptrs[dz][dy]` starts the line at (z + dz - 1, y + dy - 1).
///
/// `EDGE` says where the vector lies ([`INSIDE`], [`ENDS`], [`FACE`]). Away from the field's
/// boundary every line is present and `x0 - 1 .. x0 + 65` lies in it. Otherwise the loads are
/// masked to the bytes of the lines, and the comparisons' results are replaced by those towards
/// "outside" for the lanes whose neighbour is outside: past an end of the line, and on a face
/// every lane towards a line outside the field (`present[dz * 3 + dy]` false).
///
/// # Safety
/// AVX-512BW, and `ptrs` as above: each line readable for `nx` bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn vector<const SIGNED: bool, const VERT: bool, const SUP: bool, const EDGE: u8>(
    ptrs: &[[*const u8; 3]; 3],
    x0: usize,
    nx: usize,
    present: [bool; 9],
) -> (__m512i, __m512i) {
    // Lanes whose neighbour at dx - 1 lies in the line: x0 + i + dx - 1 in 0..nx.
    let in_line = [if x0 == 0 { !1 } else { !0 }, !0, lanes(nx - x0 - 1)];
    let valid = lanes(nx - x0);
    let load = |dz: usize, dy: usize, dx: usize| {
        let p = ptrs[dz][dy].wrapping_add(x0 + dx).wrapping_sub(1);
        if EDGE == INSIDE {
            // SAFETY: the 64 bytes lie in the line (this function's contract).
            unsafe { _mm512_loadu_si512(p.cast()) }
        } else {
            let m = if present[dz * 3 + dy] { valid & in_line[dx] } else { 0 };
            // SAFETY: the lanes loaded are bytes of the line (the lanes outside it are masked,
            // and a masked load does not touch them).
            unsafe { _mm512_maskz_loadu_epi8(m, p.cast()) }
        }
    };
    let c = load(1, 1, 1);
    // B towards the neighbour at (dz, dy, dx) - 1, ANDed with `pre`. Outside the field, top
    // cells precede the neighbour, and under vertices it never precedes the voxel.
    let b = |pre: u64, dz: usize, dy: usize, dx: usize| -> u64 {
        let later = (dz, dy, dx) > (1, 1, 1);
        let n = load(dz, dy, dx);
        let keep = match EDGE {
            INSIDE => return precedes::<SIGNED, VERT, SUP>(later, pre, c, n),
            // A line's ends: only the neighbours along x can be outside.
            ENDS if dx == 1 => return precedes::<SIGNED, VERT, SUP>(later, pre, c, n),
            ENDS => in_line[dx],
            _ if present[dz * 3 + dy] => in_line[dx],
            _ => 0,
        };
        let inside = precedes::<SIGNED, VERT, SUP>(later, pre & keep, c, n);
        if VERT { inside } else { inside | (pre & !keep) }
    };
    let all = !0;
    // Naming as in `kernel::line_3d`: z in {d, u}, y in {n, s}, x in {w, e}.
    let (d, u) = (b(all, 0, 1, 1), b(all, 2, 1, 1));
    let (no, so) = (b(all, 1, 0, 1), b(all, 1, 2, 1));
    let (w, e) = (b(all, 1, 1, 0), b(all, 1, 1, 2));
    let nw = b(no & w, 1, 0, 0);
    let ne = b(no & e, 1, 0, 2);
    let sw = b(so & w, 1, 2, 0);
    let se = b(so & e, 1, 2, 2);
    let dw = b(d & w, 0, 1, 0);
    let de = b(d & e, 0, 1, 2);
    let uw = b(u & w, 2, 1, 0);
    let ue = b(u & e, 2, 1, 2);
    let dn = b(d & no, 0, 0, 1);
    let ds = b(d & so, 0, 2, 1);
    let un = b(u & no, 2, 0, 1);
    let us = b(u & so, 2, 2, 1);
    let corners = [
        b(nw & dw & dn, 0, 0, 0),
        b(ne & de & dn, 0, 0, 2),
        b(sw & dw & ds, 0, 2, 0),
        b(se & de & ds, 0, 2, 2),
        b(nw & uw & un, 2, 0, 0),
        b(ne & ue & un, 2, 0, 2),
        b(sw & uw & us, 2, 2, 0),
        b(se & ue & us, 2, 2, 2),
    ];
    // f = 1 - singles + pairs - corners; the change is f for vertices and -f for top cells.
    let one = _mm512_set1_epi8(1);
    // Spelt out term by term: a loop over the masks would keep them in memory.
    let up =
        |f, m| if VERT { _mm512_mask_add_epi8(f, m, f, one) } else { _mm512_mask_sub_epi8(f, m, f, one) };
    let down =
        |f, m| if VERT { _mm512_mask_sub_epi8(f, m, f, one) } else { _mm512_mask_add_epi8(f, m, f, one) };
    let mut f = _mm512_set1_epi8(if VERT { 1 } else { -1 });
    macro_rules! tally {
        ($op:ident: $($m:expr),*) => { $( f = $op(f, $m); )* };
    }
    tally!(down: d, u, no, so, w, e);
    tally!(up: nw, ne, sw, se, dw, de, uw, ue, dn, ds, un, us);
    tally!(down: corners[0], corners[1], corners[2], corners[3], corners[4], corners[5], corners[6], corners[7]);
    (f, c)
}

/// B: the voxel `c` precedes its neighbour `n` in the filtration (by value, ties to the one
/// earlier in memory: `later` says the neighbour is), NOT B for vertices; ANDed with `pre`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn precedes<const SIGNED: bool, const VERT: bool, const SUP: bool>(
    later: bool,
    pre: u64,
    c: __m512i,
    n: __m512i,
) -> u64 {
    // As values (a superlevel filtration reverses their order): top cells take c < n towards an
    // earlier neighbour and c <= n towards a later one; vertices take the negations.
    macro_rules! cmp {
        ($imm:expr) => {
            if SIGNED {
                _mm512_mask_cmp_epi8_mask::<$imm>(pre, c, n)
            } else {
                _mm512_mask_cmp_epu8_mask::<$imm>(pre, c, n)
            }
        };
    }
    match (SUP, VERT, later) {
        (false, false, false) | (true, true, true) => cmp!(_MM_CMPINT_LT),
        (false, false, true) | (true, true, false) => cmp!(_MM_CMPINT_LE),
        (false, true, false) | (true, false, true) => cmp!(_MM_CMPINT_NLT),
        (false, true, true) | (true, false, false) => cmp!(_MM_CMPINT_NLE),
    }
}

#[cfg(test)]
mod tests {
    use super::super::narrow::Scratch8;
    use super::super::{Held, empty_histogram};
    use super::*;
    use crate::field::Sample;

    /// Bytes from a few levels (ties), the extremes among them, or any byte.
    fn bytes(seed: u64, n: usize, levels: &[u8]) -> Vec<u8> {
        let mut next = crate::synthetic::noise(seed);
        (0..n)
            .map(|_| {
                let s = next();
                if levels.is_empty() { (s >> 24) as u8 } else { levels[(s % levels.len() as u64) as usize] }
            })
            .collect()
    }

    /// The histogram of planes `p0..p1` of `field` by this kernel and by the 8-bit-key kernel
    /// of [`super::super::narrow`], each given only the planes it may read. (`ecc`'s tests
    /// check this kernel against the naive count where the CPU has AVX-512, and the other
    /// where it has not: with this test both are checked on either CPU.)
    fn check<T: Sample, const SIGNED: bool, const VERT: bool, const SUP: bool>(
        field: &[T],
        shape: [usize; 3],
        (p0, p1): (usize, usize),
    ) {
        let geo = Geometry::of_shape(&shape);
        let pv = shape[0] * shape[1];
        let base = p0.saturating_sub(1);
        let data = &field[base * pv..(p1 + 1).min(shape[2]) * pv];
        let held = Held { data, base, range: (p0, p1) };
        let mut want = empty_histogram::<T, SUP>();
        Scratch8::default().run::<T, VERT, SUP>(held, &geo, p0, p1, |k, c| want.add_8bit(k, c));
        let mut got = empty_histogram::<T, SUP>();
        let planes = HeldBytes { bytes: bytemuck::cast_slice(data), base, p0, p1 };
        // SAFETY: the caller checked AVX-512BW.
        unsafe { add::<SIGNED, VERT, SUP>(planes, &geo, &mut got) };
        let what =
            format!("{} {shape:?} planes {p0}..{p1} VERT {VERT} SUP {SUP}", std::any::type_name::<T>());
        assert_eq!(got.into_bins(), want.into_bins(), "{what}");
    }

    fn all_options<T: Sample, const SIGNED: bool>(field: &[T], shape: [usize; 3], planes: (usize, usize)) {
        check::<T, SIGNED, false, false>(field, shape, planes);
        check::<T, SIGNED, false, true>(field, shape, planes);
        check::<T, SIGNED, true, false>(field, shape, planes);
        check::<T, SIGNED, true, true>(field, shape, planes);
    }

    /// Every line length around the vectors' edges (one vector, a vector and a voxel, the
    /// first vector away from both ends at 129), lines and planes from one up, slabs within
    /// the field, for u8 and i8, with ties and the extreme values everywhere.
    #[test]
    fn the_mask_kernel_equals_the_key_kernel() {
        if !available() {
            eprintln!("skipped: no AVX-512BW here");
            return;
        }
        let xs = [1, 2, 3, 31, 63, 64, 65, 66, 127, 128, 129, 130, 131, 192, 200, 257];
        let level_sets: [&[u8]; 4] = [&[0, 255], &[0, 127, 128, 255], &[5, 6], &[]];
        let mut seed = 1;
        for &nx in &xs {
            for (ny, nz) in [(1, 1), (1, 3), (2, 2), (3, 4), (5, 3)] {
                for levels in level_sets {
                    seed += 1;
                    let shape = [nx, ny, nz];
                    let raw = bytes(seed, nx * ny * nz, levels);
                    let signed: Vec<i8> = raw.iter().map(|&b| b as i8).collect();
                    let slabs = [(0, nz), (0, 1), (nz - 1, nz), (nz / 2, nz.div_ceil(2).max(nz / 2 + 1))];
                    for planes in slabs {
                        all_options::<u8, false>(&raw, shape, planes);
                        all_options::<i8, true>(&signed, shape, planes);
                    }
                }
            }
        }
    }
}
