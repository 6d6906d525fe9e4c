//! Per-voxel changes of the Euler characteristic: the "faces introduced by a voxel" counting of
//! Wang, Wagner and Chen (SoCG 2022, Algorithm 1), written line by line so that the compiler can
//! vectorize it along x.
//!
//! Each voxel `v` compares itself with its 3^d - 1 neighbours `n`. `B(o)` says that `v` precedes
//! its neighbour at offset `o` in the filtration order (value, then linear index):
//! `v < n`, or `v == n` and `n` comes later in memory. The collar and absent (NaN) voxels hold
//! `Key::ABSENT`, larger than every valid key, so `B` is true towards them.
//!
//! * **top-cells** construction: a lower cell belongs to the voxels around it and takes their
//!   minimum, so `v` introduces the face of itself in direction `e` (a vector in {-1,0,1}^d) when it
//!   precedes every other voxel around that face, i.e. `A(e) = AND of B(e')` over the non-zero
//!   `e'` below `e` (same non-zero entries or zero). That face has dimension `d - |e|`.
//! * **vertices** construction: a cell belongs to the voxels at its corners and takes their
//!   maximum, so `v` introduces the cell spanned towards `e` when every other corner precedes `v`:
//!   `B'(o) = NOT B(o)` (an absent corner never precedes, so such a cell is never introduced), and
//!   that cell has dimension `|e|`.
//!
//! With `F(B) = sum over e (including 0) of (-1)^|e| A(e)`, the change is `(-1)^d F(B)` for
//! top-cells and `F(NOT B)` for vertices.

use crate::field::Key;

/// Loads the 3 (2D) or 9 (3D) padded lines around one line; each has `len + 2` keys.
pub(super) type Lines2<'a, K> = [&'a [K]; 3];
pub(super) type Lines3<'a, K> = [[&'a [K]; 3]; 3];

/// Changes for one line of a 2D field: `rows[dy]` is the padded row at y + dy - 1.
#[inline(always)]
pub(super) fn line_2d<K: Key, const VERT: bool>(rows: Lines2<'_, K>, out: &mut [i8]) {
    let n = out.len();
    let [r0, r1, r2] = rows.map(|r| &r[..n + 2]);
    for (x, o) in out.iter_mut().enumerate() {
        let c = r1[x + 1];
        // Offsets are (dy, dx) in 0..3; "later" in memory means (dy, dx) > (1, 1).
        let earlier = |n: K| ((c < n) != VERT) as i8;
        let later = |n: K| ((c <= n) != VERT) as i8;
        let (t, l, r, b) = (earlier(r0[x + 1]), earlier(r1[x]), later(r1[x + 2]), later(r2[x + 1]));
        let tl = earlier(r0[x]) & t & l;
        let tr = earlier(r0[x + 2]) & t & r;
        let bl = later(r2[x]) & b & l;
        let br = later(r2[x + 2]) & b & r;
        *o = 1 - (t + l + r + b) + (tl + tr + bl + br);
    }
}

/// Changes for one line of a 3D field: `lines[dz][dy]` is the padded line at (y + dy - 1, z + dz - 1).
#[inline(always)]
pub(super) fn line_3d<K: Key, const VERT: bool>(lines: Lines3<'_, K>, out: &mut [i8]) {
    let n = out.len();
    let l = lines.map(|p| p.map(|r| &r[..n + 2]));
    for (x, o) in out.iter_mut().enumerate() {
        let c = l[1][1][x + 1];
        let earlier = |n: K| ((c < n) != VERT) as i8;
        let later = |n: K| ((c <= n) != VERT) as i8;
        // Naming: z in {d(own), u(p)}, y in {n(orth), s(outh)}, x in {w(est), e(ast)}; d, n, w are
        // the lower coordinates and so earlier in memory.
        let (d, u) = (earlier(l[0][1][x + 1]), later(l[2][1][x + 1]));
        let (no, so) = (earlier(l[1][0][x + 1]), later(l[1][2][x + 1]));
        let (w, e) = (earlier(l[1][1][x]), later(l[1][1][x + 2]));
        let singles = d + u + no + so + w + e;
        // Edges of the own plane (x, y) and of the two others.
        let nw = earlier(l[1][0][x]) & no & w;
        let ne = earlier(l[1][0][x + 2]) & no & e;
        let sw = later(l[1][2][x]) & so & w;
        let se = later(l[1][2][x + 2]) & so & e;
        let dw = earlier(l[0][1][x]) & d & w;
        let de = earlier(l[0][1][x + 2]) & d & e;
        let uw = later(l[2][1][x]) & u & w;
        let ue = later(l[2][1][x + 2]) & u & e;
        let dn = earlier(l[0][0][x + 1]) & d & no;
        let ds = earlier(l[0][2][x + 1]) & d & so;
        let un = later(l[2][0][x + 1]) & u & no;
        let us = later(l[2][2][x + 1]) & u & so;
        let pairs = nw + ne + sw + se + dw + de + uw + ue + dn + ds + un + us;
        // Corners: the corner voxel itself, and the three edges around it cover all seven others.
        let dnw = earlier(l[0][0][x]) & nw & dw & dn;
        let dne = earlier(l[0][0][x + 2]) & ne & de & dn;
        let dsw = earlier(l[0][2][x]) & sw & dw & ds;
        let dse = earlier(l[0][2][x + 2]) & se & de & ds;
        let unw = later(l[2][0][x]) & nw & uw & un;
        let une = later(l[2][0][x + 2]) & ne & ue & un;
        let usw = later(l[2][2][x]) & sw & uw & us;
        let use_ = later(l[2][2][x + 2]) & se & ue & us;
        let corners = dnw + dne + dsw + dse + unw + une + usw + use_;
        let f = 1 - singles + pairs - corners;
        *o = if VERT { f } else { -f };
    }
}
