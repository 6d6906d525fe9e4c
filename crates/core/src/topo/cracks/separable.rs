//! The Gaussian bases as two 1D passes: pass A along the crack (integer offsets: value, first
//! and second derivative of the Gaussian), pass B across it (half-integer offsets, centred on
//! the crack). Each pass sums mirrored pairs, `w_k (I[p+k] + I[p-k])` (or `-` for the odd
//! derivative), in the order `k = 1..=r`, so a mirrored image gives the same sums exactly.

use super::Basis;
use super::Family;
use rayon::prelude::*;

/// 1D taps at scale `s`, radius `r`: `int[k]` at offset `k` (k = 0..=r) and `half[j]` at offset
/// `j + 0.5` (j = 0..r), for the value `g`, the derivative `gd = t / s^2 g` (the sign that makes
/// the response `+dI/dt`) and the second derivative `gdd = (t^2 / s^4 - 1 / s^2) g`.
#[derive(Clone, Debug)]
pub struct Taps {
    pub r: usize,
    pub int: [Vec<f32>; 3],
    pub half: [Vec<f32>; 3],
}

/// `g`, `gd` and `gdd` at `t`, scale `s`, in f64.
pub fn gaussian_1d(t: f64, s: f64) -> [f64; 3] {
    let g = (-t * t / (2.0 * s * s)).exp() / (s * (2.0 * std::f64::consts::PI).sqrt());
    [g, t / (s * s) * g, (t * t / s.powi(4) - 1.0 / (s * s)) * g]
}

impl Taps {
    pub fn new(s: f64, r: usize) -> Taps {
        let at = |t: f64| gaussian_1d(t, s);
        let int: Vec<[f64; 3]> = (0..=r).map(|k| at(k as f64)).collect();
        let half: Vec<[f64; 3]> = (0..r).map(|j| at(j as f64 + 0.5)).collect();
        let column = |v: &[[f64; 3]], i: usize| v.iter().map(|w| w[i] as f32).collect();
        Taps {
            r,
            int: [column(&int, 0), column(&int, 1), column(&int, 2)],
            half: [column(&half, 0), column(&half, 1), column(&half, 2)],
        }
    }
}

/// Pass A along x over every row into `out = [s, d, dd]` (`dd` left alone when empty):
/// value, derivative and second derivative (clamped ends).
fn pass_a_rows(img: &[f32], w: usize, h: usize, t: &Taps, out: &mut [Vec<f32>; 3]) {
    let r = t.r;
    let [s, d, dd] = out;
    let rows: Vec<_> = rows_of(s, w, h).into_iter().zip(rows_of(d, w, h)).zip(rows_of(dd, w, h)).collect();
    rows.into_par_iter().zip(img.par_chunks(w)).for_each(|(((s, d), dd), row)| {
        // The row with r clamped samples at each end.
        let mut p = Vec::with_capacity(w + 2 * r);
        p.extend(std::iter::repeat_n(row[0], r));
        p.extend_from_slice(row);
        p.extend(std::iter::repeat_n(row[w - 1], r));
        accumulate(s, d, dd, t, |k| (&p[r + k..r + k + w], &p[r - k..r - k + w]));
    });
}

/// Pass A along y over every column (clamped ends), rows processed whole.
fn pass_a_columns(img: &[f32], w: usize, h: usize, t: &Taps, out: &mut [Vec<f32>; 3]) {
    let [s, d, dd] = out;
    let rows: Vec<_> = rows_of(s, w, h).into_iter().zip(rows_of(d, w, h)).zip(rows_of(dd, w, h)).collect();
    rows.into_par_iter().enumerate().for_each(|(y, ((s, d), dd))| {
        let y = y as isize;
        accumulate(s, d, dd, t, |k| (row(img, y + k as isize, w, h), row(img, y - k as isize, w, h)));
    });
}

/// One output line of pass A: `lines(k)` gives the input lines at offsets `+k` and `-k`
/// (`lines(0)` the centre).
fn accumulate<'a>(
    s: &mut [f32],
    d: &mut [f32],
    dd: &mut [f32],
    t: &Taps,
    lines: impl Fn(usize) -> (&'a [f32], &'a [f32]),
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, just checked.
        return unsafe { accumulate_avx2(s, d, dd, t, lines) };
    }
    accumulate_body(s, d, dd, t, lines)
}

/// [`accumulate`] compiled for AVX2: eight lanes instead of four, the same operations in the
/// same order (no fused multiply-add), so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn accumulate_avx2<'a>(
    s: &mut [f32],
    d: &mut [f32],
    dd: &mut [f32],
    t: &Taps,
    lines: impl Fn(usize) -> (&'a [f32], &'a [f32]),
) {
    accumulate_body(s, d, dd, t, lines)
}

#[inline(always)]
fn accumulate_body<'a>(
    s: &mut [f32],
    d: &mut [f32],
    dd: &mut [f32],
    t: &Taps,
    lines: impl Fn(usize) -> (&'a [f32], &'a [f32]),
) {
    // Every slice cut to the output's length first, so the loops carry no bounds checks and
    // vectorise.
    let n = s.len();
    let (s, d) = (&mut s[..n], &mut d[..n]);
    let c = &lines(0).0[..n];
    for x in 0..n {
        s[x] = t.int[0][0] * c[x];
        d[x] = 0.0;
    }
    if !dd.is_empty() {
        let dd = &mut dd[..n];
        for x in 0..n {
            dd[x] = t.int[2][0] * c[x];
        }
    }
    for k in 1..=t.r {
        let (plus, minus) = lines(k);
        let (plus, minus) = (&plus[..n], &minus[..n]);
        let (g, gd, gdd) = (t.int[0][k], t.int[1][k], t.int[2][k]);
        for x in 0..n {
            s[x] += g * (plus[x] + minus[x]);
            d[x] += gd * (plus[x] - minus[x]);
        }
        if !dd.is_empty() {
            let dd = &mut dd[..n];
            for x in 0..n {
                dd[x] += gdd * (plus[x] + minus[x]);
            }
        }
    }
}

/// Which outputs of pass B to make: the five bases, or the first derivatives alone.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    All,
    First,
}

/// Pass B across the cracks of `family` from pass A's `[s, d, dd]`. Along/across names: `a`
/// the axis of pass A, `b` the axis across the crack. Returns `(da, db, daa, dab, dbb)`.
fn pass_b(
    a: &[Vec<f32>; 3],
    w: usize,
    h: usize,
    family: Family,
    t: &Taps,
    want: Want,
    out: &mut [Vec<f32>; 5],
) {
    let r = t.r;
    let (cw, ch) = family.dims(w, h);
    let all = want == Want::All;
    for (i, o) in out.iter_mut().enumerate() {
        o.resize(if all || i < 2 { cw * ch } else { 0 }, 0.0);
    }
    let rows: Vec<[&mut [f32]; 5]> = {
        let mut lines = out.each_mut().map(|v| rows_of(v, cw, ch).into_iter());
        (0..ch).map(|_| lines.each_mut().map(|l| l.next().expect("one line per row"))).collect()
    };
    let [s, d, dd] = a;
    rows.into_par_iter().enumerate().for_each(|(y, o)| {
        match family {
            // Across = y: the crack between rows y and y + 1, offsets +-(j + 0.5) are rows
            // y + 1 + j and y - j (clamped).
            Family::H => {
                let y = y as isize;
                across(o, cw, r, t, all, |j, k| {
                    let (hi, lo) = (y + 1 + j as isize, y - j as isize);
                    let v = [s, d, dd][k];
                    if v.is_empty() { (&[][..], &[][..]) } else { (row(v, hi, w, h), row(v, lo, w, h)) }
                });
            }
            // Across = x: within row y, crack x between padded positions r + x and r + x + 1.
            Family::V => {
                let pad = |v: &[f32]| {
                    if v.is_empty() {
                        return Vec::new();
                    }
                    let line = &v[y * w..(y + 1) * w];
                    let mut p = Vec::with_capacity(w + 2 * r);
                    p.extend(std::iter::repeat_n(line[0], r));
                    p.extend_from_slice(line);
                    p.extend(std::iter::repeat_n(line[w - 1], r));
                    p
                };
                let padded = [pad(s), pad(d), if all { pad(dd) } else { Vec::new() }];
                across(o, cw, r, t, all, |j, k| {
                    let p = &padded[k];
                    if p.is_empty() {
                        (&[][..], &[][..])
                    } else {
                        (&p[r + 1 + j..r + 1 + j + cw], &p[r - j..r - j + cw])
                    }
                });
            }
        }
    });
}

/// Row `y` of a `w` x `h` image, clamped into it.
fn row(v: &[f32], y: isize, w: usize, h: usize) -> &[f32] {
    let y = y.clamp(0, h as isize - 1) as usize;
    &v[y * w..(y + 1) * w]
}

/// `v` cut into `ch` rows of `cw` (or `ch` empty rows for an output not made).
fn rows_of(v: &mut [f32], cw: usize, ch: usize) -> Vec<&mut [f32]> {
    if v.is_empty() { (0..ch).map(|_| &mut [][..]).collect() } else { v.chunks_mut(cw).collect() }
}

/// One row of pass B: `lines(j, k)` gives the lines of pass A's output `k` (s, d, dd) at
/// offsets `+(j + 0.5)` and `-(j + 0.5)` across the cracks.
fn across<'a>(
    o: [&mut [f32]; 5],
    cw: usize,
    r: usize,
    t: &Taps,
    all: bool,
    lines: impl Fn(usize, usize) -> (&'a [f32], &'a [f32]),
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, just checked.
        return unsafe { across_avx2(o, cw, r, t, all, lines) };
    }
    across_body(o, cw, r, t, all, lines)
}

/// [`across`] for AVX2 (the same bits, as [`accumulate_avx2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn across_avx2<'a>(
    o: [&mut [f32]; 5],
    cw: usize,
    r: usize,
    t: &Taps,
    all: bool,
    lines: impl Fn(usize, usize) -> (&'a [f32], &'a [f32]),
) {
    across_body(o, cw, r, t, all, lines)
}

#[inline(always)]
fn across_body<'a>(
    o: [&mut [f32]; 5],
    cw: usize,
    r: usize,
    t: &Taps,
    all: bool,
    lines: impl Fn(usize, usize) -> (&'a [f32], &'a [f32]),
) {
    let [oa, ob, oaa, oab, obb] = o;
    // Slices cut to the row's length first: no bounds checks in the loops, which vectorise.
    let (oa, ob) = (&mut oa[..cw], &mut ob[..cw]);
    for j in 0..r {
        let (g, gd, gdd) = (t.half[0][j], t.half[1][j], t.half[2][j]);
        let ((s_hi, s_lo), (d_hi, d_lo)) = (lines(j, 0), lines(j, 1));
        let (s_hi, s_lo, d_hi, d_lo) = (&s_hi[..cw], &s_lo[..cw], &d_hi[..cw], &d_lo[..cw]);
        if j == 0 {
            for x in 0..cw {
                oa[x] = g * (d_hi[x] + d_lo[x]);
                ob[x] = gd * (s_hi[x] - s_lo[x]);
            }
        } else {
            for x in 0..cw {
                oa[x] += g * (d_hi[x] + d_lo[x]);
                ob[x] += gd * (s_hi[x] - s_lo[x]);
            }
        }
        if all {
            let (dd_hi, dd_lo) = lines(j, 2);
            let (dd_hi, dd_lo) = (&dd_hi[..cw], &dd_lo[..cw]);
            let (oaa, oab, obb) = (&mut oaa[..cw], &mut oab[..cw], &mut obb[..cw]);
            for x in 0..cw {
                let v = [g * (dd_hi[x] + dd_lo[x]), gd * (d_hi[x] - d_lo[x]), gdd * (s_hi[x] + s_lo[x])];
                if j == 0 {
                    (oaa[x], oab[x], obb[x]) = (v[0], v[1], v[2]);
                } else {
                    oaa[x] += v[0];
                    oab[x] += v[1];
                    obb[x] += v[2];
                }
            }
        }
    }
}

/// Pass A's buffers, reused from one scale, channel and family to the next (fresh
/// multi-megabyte buffers cost page faults on every call).
#[derive(Default)]
pub struct Scratch {
    a: [Vec<f32>; 3],
}

/// Pass A along the crack: along x for horizontal cracks, along y for vertical ones.
fn pass_a(img: &[f32], w: usize, h: usize, family: Family, t: &Taps, want: Want, out: &mut [Vec<f32>; 3]) {
    for (i, o) in out.iter_mut().enumerate() {
        o.resize(if want == Want::All || i < 2 { w * h } else { 0 }, 0.0);
    }
    match family {
        Family::H => pass_a_rows(img, w, h, t, out),
        Family::V => pass_a_columns(img, w, h, t, out),
    }
}

/// The five bases of one channel for the cracks of `family`.
pub fn basis(img: &[f32], w: usize, h: usize, family: Family, t: &Taps) -> Basis {
    let mut a = Default::default();
    let mut b = Default::default();
    pass_a(img, w, h, family, t, Want::All, &mut a);
    pass_b(&a, w, h, family, t, Want::All, &mut b);
    let [da, db, daa, dab, dbb] = b;
    match family {
        Family::H => Basis { gx: da, gy: db, gxx: daa, gxy: dab, gyy: dbb },
        Family::V => Basis { gx: db, gy: da, gxx: dbb, gxy: dab, gyy: daa },
    }
}

/// `(gx, gy)` of one channel for the cracks of `family`, as slices of `out` (kept from call
/// to call, as `x`, so its buffers are reused).
pub fn first_derivatives<'a>(
    img: &[f32],
    w: usize,
    h: usize,
    family: Family,
    t: &Taps,
    x: &mut Scratch,
    out: &'a mut [Vec<f32>; 5],
) -> (&'a [f32], &'a [f32]) {
    pass_a(img, w, h, family, t, Want::First, &mut x.a);
    pass_b(&x.a, w, h, family, t, Want::First, out);
    let [da, db, ..] = out;
    match family {
        Family::H => (da, db),
        Family::V => (db, da),
    }
}
