//! The ECC changes of 3D 8-bit fields (u8, i8) with AVX-512, straight from the field's bytes.
//!
//! The same counting as [`super::kernel::line_3d`], 64 voxels a vector, each of the 26
//! neighbour comparisons one instruction into a mask register:
//!
//! * The bytes are compared in the filtration's order by the comparison's predicate (unsigned
//!   for u8, signed for i8, reversed for superlevel sets, negated for the vertices
//!   construction), so there is no slab of keys to fill.
//! * A neighbour outside the field gets its B by mask (top cells: the voxel precedes it;
//!   vertices: it never precedes the voxel). No key is set aside for the collar, so unlike
//!   [`super::narrow`] nothing is computed twice. Only the vectors of a line that touch the
//!   field's boundary (its ends, and every vector of a line on a face) pay for that.
//!
//! Two ways to count the 26 comparisons, by what the CPU has:
//!
//! * **Packed** (AVX-512 VBMI, VBMI2, GFNI and BITALG: Ice Lake, Sapphire Rapids, Zen 4 and
//!   later). The masks go to memory and come back eight to a vector, so that the conjunctions
//!   of the pairs and corners take one logic instruction for eight masks, and the count per
//!   voxel is a byte transpose, a bit transpose and a popcount for each eight. Only the voxels
//!   whose change is not 0 are counted (on noise 58% of them, on smooth data few): the values
//!   that only the voxels whose change is 0 hold are found afterwards by a scan of the planes'
//!   bytes.
//! * **Masked** (AVX-512BW alone: Skylake-X, Cascade Lake). The conjunctions ride on the
//!   comparisons (a comparison under a mask ANDs with it), and the change is counted by masked
//!   byte adds; every voxel is counted.
//!
//! A voxel's histogram bin is its byte with bits flipped: the key's offset from the
//! filtration's smallest key ([`super::key_origin`]) is `byte ^ flip` for both types and both
//! filtrations.

use super::Geometry;
use super::histogram::Histogram;
use std::arch::x86_64::*;

/// Voxels a vector.
const W: usize = 64;

/// Whether this CPU runs [`add`] (every CPU with AVX-512BW has the scalar extensions too; they
/// are asked for so that the compiler may use them).
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("popcnt")
        && is_x86_feature_detected!("bmi1")
        && is_x86_feature_detected!("bmi2")
        && is_x86_feature_detected!("lzcnt")
}

/// Whether this CPU counts packed (the module's doc).
fn packs() -> bool {
    available()
        && is_x86_feature_detected!("avx512vbmi")
        && is_x86_feature_detected!("avx512vbmi2")
        && is_x86_feature_detected!("gfni")
        && is_x86_feature_detected!("avx512bitalg")
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
/// [`available`] holds.
pub(super) unsafe fn add<const SIGNED: bool, const VERT: bool, const SUP: bool>(
    planes: HeldBytes<'_>,
    geo: &Geometry,
    hist: &mut Histogram,
) {
    // SAFETY: AVX-512BW (the caller's), and the packed count's extensions where checked.
    unsafe {
        if packs() {
            add_packed::<SIGNED, VERT, SUP>(planes, geo, hist);
        } else {
            add_masked::<SIGNED, VERT, SUP>(planes, geo, hist);
        }
    }
}

/// [`add`] counting packed.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,gfni,avx512bitalg,popcnt,bmi1,bmi2,lzcnt")]
unsafe fn add_packed<const SIGNED: bool, const VERT: bool, const SUP: bool>(
    planes: HeldBytes<'_>,
    geo: &Geometry,
    hist: &mut Histogram,
) {
    // SAFETY: the features `lines::<.., true>` needs, this function's.
    unsafe { lines::<SIGNED, VERT, SUP, true>(planes, geo, hist) };
    let pv = geo.x * geo.lines;
    let computed = &planes.bytes[(planes.p0 - planes.base) * pv..(planes.p1 - planes.base) * pv];
    // SAFETY: VBMI and BW, this function's.
    unsafe { mark_present(computed, flip::<SIGNED, SUP>(), hist) };
}

/// [`add`] counting by masked adds.
#[target_feature(enable = "avx512f,avx512bw,popcnt,bmi1,bmi2,lzcnt")]
unsafe fn add_masked<const SIGNED: bool, const VERT: bool, const SUP: bool>(
    planes: HeldBytes<'_>,
    geo: &Geometry,
    hist: &mut Histogram,
) {
    // SAFETY: AVX-512BW, this function's.
    unsafe { lines::<SIGNED, VERT, SUP, false>(planes, geo, hist) };
}

/// What a voxel's byte is XORed with to make its bin.
fn flip<const SIGNED: bool, const SUP: bool>() -> u8 {
    (if SIGNED { 0x80 } else { 0 }) ^ if SUP { 0xff } else { 0 }
}

/// The line by line walk of [`add`]; `PACKED`: count packed.
///
/// # Safety
/// AVX-512BW, and with `PACKED` the packed count's extensions. Inlined into
/// [`add_packed`] and [`add_masked`], which are compiled for them.
#[inline(always)]
unsafe fn lines<const SIGNED: bool, const VERT: bool, const SUP: bool, const PACKED: bool>(
    planes: HeldBytes<'_>,
    geo: &Geometry,
    hist: &mut Histogram,
) {
    // SAFETY: the features (this function's contract).
    unsafe {
        debug_assert!(geo.three_d);
        let (nx, ny, nz) = (geo.x, geo.lines, geo.planes);
        let held = planes.bytes.len() / (nx * ny);
        let chunks = nx.div_ceil(W);
        // Each vector's (bin, change) pairs are added to the histogram after the next vector is
        // made: the core then adds one vector while it compares the next, and the pairs' loads
        // find the vector stores that wrote them done (reading them back at once stalled on
        // every load, perf showed). Packed, only the pairs of nonzero changes are kept, at the
        // front (the second half's 32 stored at most 32 in).
        let mut pairs = [[0u16; W]; 2];
        let (mut made, mut waiting) = (0, 0);
        let flip_v = _mm512_set1_epi8(flip::<SIGNED, SUP>() as i8);
        let (shift, low) =
            (_mm512_set1_epi8(Histogram::CHANGE_SHIFT), _mm512_set1_epi8((1 << Histogram::CHANGE_BITS) - 1));
        for p in planes.p0..planes.p1 {
            // The planes around p that lie in the field must be held (checked once a plane; the
            // lines' pointers below are then in `planes.bytes`).
            let (z0, z1) = (p.saturating_sub(1), (p + 2).min(nz));
            assert!(z0 >= planes.base && z1 - planes.base <= held, "planes {z0}..{z1} are not all held");
            let z_in = [p > 0, true, p + 1 < nz];
            for l in 0..ny {
                // Which of the 3 x 3 lines around (p, l) lie in the field, and where they start
                // (the line itself stands in for those outside).
                let y_in = [l > 0, true, l + 1 < ny];
                let inside = |dz: usize, dy: usize| z_in[dz] && y_in[dy];
                // Spelt out: an array's `map` here is a call a line.
                #[rustfmt::skip]
                let present = [
                    inside(0, 0), inside(0, 1), inside(0, 2),
                    inside(1, 0), true, inside(1, 2),
                    inside(2, 0), inside(2, 1), inside(2, 2),
                ];
                let face = present.contains(&false);
                let start =
                    |z: usize, y: usize| planes.bytes[((z - planes.base) * ny + y) * nx..][..nx].as_ptr();
                let own = start(p, l);
                let at =
                    |dz: usize, dy: usize| if inside(dz, dy) { start(p + dz - 1, l + dy - 1) } else { own };
                let ptrs = [
                    [at(0, 0), at(0, 1), at(0, 2)],
                    [at(1, 0), own, at(1, 2)],
                    [at(2, 0), at(2, 1), at(2, 2)],
                ];
                for k in 0..chunks {
                    let x0 = k * W;
                    let n = W.min(nx - x0);
                    // In a vector away from the line's ends every neighbour's 64 bytes lie in
                    // its line (x0 - 1 .. x0 + 65 <= nx).
                    let (change, centre) = if face {
                        vector::<SIGNED, VERT, SUP, FACE, PACKED>(&ptrs, x0, nx, present)
                    } else if x0 > 0 && x0 + W < nx {
                        vector::<SIGNED, VERT, SUP, INSIDE, PACKED>(&ptrs, x0, nx, [true; 9])
                    } else {
                        vector::<SIGNED, VERT, SUP, ENDS, PACKED>(&ptrs, x0, nx, [true; 9])
                    };
                    // The pairs' indices, as u16 (`Histogram::add_pairs`): the first half's
                    // and the second's.
                    let bins = _mm512_xor_si512(centre, flip_v);
                    let code = _mm512_and_si512(_mm512_add_epi8(change, shift), low);
                    let index = |b: __m256i, c: __m256i| {
                        let b = _mm512_slli_epi16::<{ Histogram::CHANGE_BITS }>(_mm512_cvtepu8_epi16(b));
                        _mm512_or_si512(b, _mm512_cvtepu8_epi16(c))
                    };
                    let first = index(_mm512_castsi512_si256(bins), _mm512_castsi512_si256(code));
                    let second =
                        index(_mm512_extracti64x4_epi64::<1>(bins), _mm512_extracti64x4_epi64::<1>(code));
                    let out = pairs[made].as_mut_ptr();
                    let next = if PACKED {
                        let keep = _mm512_test_epi8_mask(change, change) & lanes(n);
                        let kept = (keep as u32).count_ones() as usize;
                        _mm512_storeu_si512(out.cast(), _mm512_maskz_compress_epi16(keep as u32, first));
                        let rest = _mm512_maskz_compress_epi16((keep >> 32) as u32, second);
                        _mm512_storeu_si512(out.add(kept).cast(), rest);
                        keep.count_ones() as usize
                    } else {
                        _mm512_storeu_si512(out.cast(), first);
                        _mm512_storeu_si512(out.add(W / 2).cast(), second);
                        n
                    };
                    // Spread over two copies only when the zero changes (flat runs) are counted.
                    hist.add_pairs(&pairs[1 - made][..waiting], !PACKED);
                    (made, waiting) = (1 - made, next);
                }
            }
        }
        hist.add_pairs(&pairs[1 - made][..waiting], !PACKED);
    }
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
/// every lane towards a line outside the field (`present[dz * 3 + dy]` false). `PACKED`: count
/// packed (the module's doc).
///
/// # Safety
/// AVX-512BW, with `PACKED` the packed count's extensions (inlined into functions compiled for
/// them), and `ptrs` as above: each line readable for `nx` bytes.
#[inline(always)]
unsafe fn vector<
    const SIGNED: bool,
    const VERT: bool,
    const SUP: bool,
    const EDGE: u8,
    const PACKED: bool,
>(
    ptrs: &[[*const u8; 3]; 3],
    x0: usize,
    nx: usize,
    present: [bool; 9],
) -> (__m512i, __m512i) {
    // SAFETY: the features and `ptrs` (this function's contract).
    unsafe {
        // Lanes whose neighbour at dx - 1 lies in the line: x0 + i + dx - 1 in 0..nx.
        let in_line = [if x0 == 0 { !1 } else { !0 }, !0, lanes(nx - x0 - 1)];
        let valid = lanes(nx - x0);
        let load = |dz: usize, dy: usize, dx: usize| {
            let p = ptrs[dz][dy].wrapping_add(x0 + dx).wrapping_sub(1);
            if EDGE == INSIDE {
                // The 64 bytes lie in the line (this function's contract).
                _mm512_loadu_si512(p.cast())
            } else {
                let m = if present[dz * 3 + dy] { valid & in_line[dx] } else { 0 };
                // The lanes loaded are bytes of the line (the lanes outside it are masked,
                // and a masked load does not touch them).
                _mm512_maskz_loadu_epi8(m, p.cast())
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
        let f = if PACKED { packed_count::<VERT>(b) } else { masked_count::<VERT>(b) };
        (f, c)
    }
}

/// The change of each voxel from the B masks of its 26 neighbours, `b(pre, dz, dy, dx)` (B
/// towards the neighbour at (dz, dy, dx) - 1, ANDed with `pre`): 1 - singles + pairs - corners
/// for vertices and its negation for top cells, counted by masked byte adds.
///
/// # Safety
/// AVX-512BW (inlined into a function compiled for it).
#[inline(always)]
unsafe fn masked_count<const VERT: bool>(b: impl Fn(u64, usize, usize, usize) -> u64) -> __m512i {
    // SAFETY: AVX-512BW (this function's contract).
    unsafe {
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
        f
    }
}

/// [`masked_count`] packed: the 26 masks, as they come, go to memory and come back as four
/// vectors of eight (singles; the pairs' own B in two; the corners' own B). Each pair is then
/// one three-way AND of a vector with two permutations of the singles, the corners one of three
/// permutations of the pairs with their own B, and each voxel's count of a vector's eight
/// masks a byte transpose, a bit transpose and a popcount. Masked compares need the
/// conjunctions first, in 28 mask ANDs on the port the comparisons leave free, and keep more
/// masks live than there are mask registers: this way has 26 comparisons and 27 vector
/// operations a vector of voxels instead of 80 operations and the masks' spills.
///
/// # Safety
/// AVX-512BW, VBMI, GFNI and BITALG (inlined into a function compiled for them).
#[inline(always)]
unsafe fn packed_count<const VERT: bool>(b: impl Fn(u64, usize, usize, usize) -> u64) -> __m512i {
    // SAFETY: the features (this function's contract).
    unsafe {
        #[repr(align(64))]
        struct Masks([u64; 32]);
        let mut m = Masks([0; 32]);
        let all = !0;
        // Each mask to its slot, spelt out (a loop over a table of the neighbours stays a loop,
        // with the comparisons' predicates chosen at run time). Volatile: the compiler would
        // otherwise assemble the vectors from the masks in registers, a shuffle each, on the
        // port the comparisons need.
        let mp = m.0.as_mut_ptr();
        macro_rules! slots {
            ($($slot:literal: $dz:literal $dy:literal $dx:literal),*) => {
                $( std::ptr::write_volatile(mp.add($slot), b(all, $dz, $dy, $dx)); )*
            };
        }
        // Naming as in `kernel::line_3d`, z in {d, u}, y in {n, s}, x in {w, e}: singles d u n
        // s w e; pairs nw ne sw se dw de uw ue, then dn ds un us; corners dnw dne dsw dse unw une
        // usw use. Slots 6, 7 and 20 to 23 stay 0.
        slots!(0: 0 1 1, 1: 2 1 1, 2: 1 0 1, 3: 1 2 1, 4: 1 1 0, 5: 1 1 2);
        slots!(8: 1 0 0, 9: 1 0 2, 10: 1 2 0, 11: 1 2 2, 12: 0 1 0, 13: 0 1 2, 14: 2 1 0, 15: 2 1 2);
        slots!(16: 0 0 1, 17: 0 2 1, 18: 2 0 1, 19: 2 2 1);
        slots!(24: 0 0 0, 25: 0 0 2, 26: 0 2 0, 27: 0 2 2, 28: 2 0 0, 29: 2 0 2, 30: 2 2 0, 31: 2 2 2);
        // 64-byte aligned and within `m`.
        let reload = |i: usize| std::ptr::read_volatile(m.0.as_ptr().add(i).cast::<__m512i>());
        let (singles, own1, own2, own_corners) = (reload(0), reload(8), reload(16), reload(24));
        let perm = |v: __m512i, i: [i64; 8]| {
            _mm512_permutexvar_epi64(_mm512_set_epi64(i[7], i[6], i[5], i[4], i[3], i[2], i[1], i[0]), v)
        };
        let and3 = |a, b, c| _mm512_ternarylogic_epi64::<0x80>(a, b, c);
        // Pairs nw ne sw se dw de uw ue, then dn ds un us: their singles and their own B.
        let pairs1 =
            and3(perm(singles, [2, 2, 3, 3, 0, 0, 1, 1]), perm(singles, [4, 5, 4, 5, 4, 5, 4, 5]), own1);
        let pairs2 =
            and3(perm(singles, [0, 0, 1, 1, 0, 0, 1, 1]), perm(singles, [2, 3, 2, 3, 2, 3, 2, 3]), own2);
        // Corners dnw dne dsw dse unw une usw use: their xy, xz and yz pairs and their own B.
        let xy = perm(pairs1, [0, 1, 2, 3, 0, 1, 2, 3]);
        let xz = perm(pairs1, [4, 5, 4, 5, 6, 7, 6, 7]);
        let yz = perm(pairs2, [0, 0, 1, 1, 2, 2, 3, 3]);
        let corners = _mm512_and_si512(and3(xy, xz, yz), own_corners);
        // How many of a vector's eight masks hold at each voxel: byte k of every mask to the
        // voxels 8k.. 8k + 7's qword, then that 8 x 8 bit matrix transposed (GF(2) affine with the
        // unit bytes), so that each voxel's byte holds its eight bits; then a popcount.
        let count = |v: __m512i| {
            let to_qwords = _mm512_set_epi8(
                63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22, 14, 6, 61, 53, 45, 37, 29, 21, 13, 5,
                60, 52, 44, 36, 28, 20, 12, 4, 59, 51, 43, 35, 27, 19, 11, 3, 58, 50, 42, 34, 26, 18, 10, 2,
                57, 49, 41, 33, 25, 17, 9, 1, 56, 48, 40, 32, 24, 16, 8, 0,
            );
            let units = _mm512_set1_epi64(0x8040_2010_0804_0201u64 as i64);
            let matrices = _mm512_permutexvar_epi8(to_qwords, v);
            _mm512_popcnt_epi8(_mm512_gf2p8affine_epi64_epi8::<0>(units, matrices))
        };
        let pairs = _mm512_add_epi8(count(pairs1), count(pairs2));
        let singles_corners = _mm512_add_epi8(count(singles), count(corners));
        // f = 1 - singles + pairs - corners; the change is f for vertices and -f for top cells.
        if VERT {
            _mm512_sub_epi8(_mm512_add_epi8(_mm512_set1_epi8(1), pairs), singles_corners)
        } else {
            _mm512_sub_epi8(_mm512_add_epi8(_mm512_set1_epi8(-1), singles_corners), pairs)
        }
    }
}

/// Marks present in `hist` the values of `bytes` (bins `byte ^ flip`) that no voxel counted
/// there holds: the packed count leaves out the voxels whose change is 0, and a value held by
/// those alone must still be a threshold of the curve. Nothing is read while every bin is
/// counted (noise); otherwise the bytes are looked up 64 at a time in a table of the bins
/// still missing, until none is.
///
/// # Safety
/// AVX-512BW and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi1")]
unsafe fn mark_present(bytes: &[u8], flip: u8, hist: &mut Histogram) {
    let mut missing = hist.uncounted();
    let mut left = missing.iter().filter(|&&m| m).count();
    if left == 0 {
        return;
    }
    // The 256 bins' bytes in four vectors: 0xff for a bin missing.
    let table = |missing: &[bool; 256]| {
        let bytes = missing.map(|m| if m { 0xffu8 } else { 0 });
        // SAFETY: 256 bytes, four unaligned loads.
        [0, 64, 128, 192].map(|i| unsafe { _mm512_loadu_si512(bytes.as_ptr().add(i).cast()) })
    };
    let mut t = table(&missing);
    let flip_v = _mm512_set1_epi8(flip as i8);
    for chunk in bytes.chunks(W) {
        let n = lanes(chunk.len());
        // SAFETY: the lanes loaded lie in `chunk` (a masked load does not touch the others).
        let bins = _mm512_xor_si512(unsafe { _mm512_maskz_loadu_epi8(n, chunk.as_ptr().cast()) }, flip_v);
        // Bits 0..6 pick a byte of two tables, bit 7 which two.
        let low = _mm512_permutex2var_epi8(t[0], bins, t[1]);
        let high = _mm512_permutex2var_epi8(t[2], bins, t[3]);
        let hit = _mm512_mask_blend_epi8(_mm512_movepi8_mask(bins), low, high);
        let mut found = _mm512_test_epi8_mask(hit, hit) & n;
        if found == 0 {
            continue;
        }
        while found != 0 {
            let bin = (chunk[found.trailing_zeros() as usize] ^ flip) as usize;
            if missing[bin] {
                missing[bin] = false;
                hist.mark_present(bin);
                left -= 1;
            }
            found &= found - 1;
        }
        if left == 0 {
            return;
        }
        t = table(&missing);
    }
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
        if levels == RAMP {
            // Mostly values that only voxels with no change hold: the packed count's scan.
            return (0..n).map(|i| (i * 7 % 251) as u8 ^ (seed as u8 & 3)).collect();
        }
        let mut next = crate::synthetic::noise(seed);
        (0..n)
            .map(|_| {
                let s = next();
                if levels.is_empty() { (s >> 24) as u8 } else { levels[(s % levels.len() as u64) as usize] }
            })
            .collect()
    }

    /// The histogram of planes `p0..p1` of `field` by this kernel, counted both ways where the
    /// CPU has them, and by the 8-bit-key kernel of [`super::super::narrow`], each given only
    /// the planes it may read. The packed count counts only the voxels whose change is not 0,
    /// so the counts are compared as what they are read for: whether a value occurs. (`ecc`'s
    /// tests check this kernel against the naive count where the CPU has AVX-512, and the
    /// other where it has not: with this test both are checked on either CPU.)
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
        let present = |(lo, counts, sums): (i64, Vec<u64>, Vec<i64>)| {
            (lo, counts.iter().map(|&n| n > 0).collect::<Vec<_>>(), sums)
        };
        let exact = want.into_bins();
        let planes = HeldBytes { bytes: bytemuck::cast_slice(data), base, p0, p1 };
        let what =
            format!("{} {shape:?} planes {p0}..{p1} VERT {VERT} SUP {SUP}", std::any::type_name::<T>());
        let mut masked = empty_histogram::<T, SUP>();
        // SAFETY: the caller checked AVX-512BW.
        unsafe { add_masked::<SIGNED, VERT, SUP>(planes, &geo, &mut masked) };
        // The masked count counts every voxel: its counts are compared as they are.
        let masked = masked.into_bins();
        assert_eq!(masked, exact, "masked: {what}");
        if packs() {
            let mut packed = empty_histogram::<T, SUP>();
            // SAFETY: checked just above.
            unsafe { add_packed::<SIGNED, VERT, SUP>(planes, &geo, &mut packed) };
            assert_eq!(present(packed.into_bins()), present(exact), "packed: {what}");
        }
    }

    fn all_options<T: Sample, const SIGNED: bool>(field: &[T], shape: [usize; 3], planes: (usize, usize)) {
        check::<T, SIGNED, false, false>(field, shape, planes);
        check::<T, SIGNED, false, true>(field, shape, planes);
        check::<T, SIGNED, true, false>(field, shape, planes);
        check::<T, SIGNED, true, true>(field, shape, planes);
    }

    /// A marker for [`bytes`]: steps of 7 along the bytes (mod 251) rather than levels.
    const RAMP: &[u8] = &[1, 2, 3];

    /// Every line length around the vectors' edges (one vector, a vector and a voxel, the
    /// first vector away from both ends at 129), lines and planes from one up, slabs within
    /// the field, for u8 and i8, with ties and the extreme values everywhere.
    #[test]
    fn both_counts_equal_the_key_kernel() {
        if !available() {
            eprintln!("skipped: no AVX-512BW here");
            return;
        }
        let xs = [1, 2, 3, 31, 63, 64, 65, 66, 127, 128, 129, 130, 131, 192, 200, 257];
        let level_sets: [&[u8]; 5] = [&[0, 255], &[0, 127, 128, 255], &[5, 6], &[], RAMP];
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
