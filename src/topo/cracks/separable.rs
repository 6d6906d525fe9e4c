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

/// Pass A along x over every row: value, derivative and second derivative (clamped ends).
fn pass_a_rows(img: &[f32], w: usize, h: usize, t: &Taps) -> [Vec<f32>; 3] {
    let r = t.r;
    let mut out = [vec![0f32; w * h], vec![0f32; w * h], vec![0f32; w * h]];
    let [s, d, dd] = &mut out;
    (s.par_chunks_mut(w), d.par_chunks_mut(w), dd.par_chunks_mut(w), img.par_chunks(w))
        .into_par_iter()
        .for_each(|(s, d, dd, row)| {
            // The row with r clamped samples at each end.
            let mut p = Vec::with_capacity(w + 2 * r);
            p.extend(std::iter::repeat_n(row[0], r));
            p.extend_from_slice(row);
            p.extend(std::iter::repeat_n(row[w - 1], r));
            let c = &p[r..r + w];
            for x in 0..w {
                s[x] = t.int[0][0] * c[x];
                d[x] = 0.0;
                dd[x] = t.int[2][0] * c[x];
            }
            for k in 1..=r {
                let (plus, minus) = (&p[r + k..r + k + w], &p[r - k..r - k + w]);
                let (g, gd, gdd) = (t.int[0][k], t.int[1][k], t.int[2][k]);
                for x in 0..w {
                    let (sum, diff) = (plus[x] + minus[x], plus[x] - minus[x]);
                    s[x] += g * sum;
                    d[x] += gd * diff;
                    dd[x] += gdd * sum;
                }
            }
        });
    out
}

/// Pass A along y over every column (clamped ends), rows processed whole.
fn pass_a_columns(img: &[f32], w: usize, h: usize, t: &Taps) -> [Vec<f32>; 3] {
    let r = t.r as isize;
    let row = |y: isize| &img[(y.clamp(0, h as isize - 1) as usize) * w..][..w];
    let mut out = [vec![0f32; w * h], vec![0f32; w * h], vec![0f32; w * h]];
    let [s, d, dd] = &mut out;
    (s.par_chunks_mut(w), d.par_chunks_mut(w), dd.par_chunks_mut(w)).into_par_iter().enumerate().for_each(
        |(y, (s, d, dd))| {
            let y = y as isize;
            let c = row(y);
            for x in 0..w {
                s[x] = t.int[0][0] * c[x];
                d[x] = 0.0;
                dd[x] = t.int[2][0] * c[x];
            }
            for k in 1..=r {
                let (plus, minus) = (row(y + k), row(y - k));
                let k = k as usize;
                let (g, gd, gdd) = (t.int[0][k], t.int[1][k], t.int[2][k]);
                for x in 0..w {
                    let (sum, diff) = (plus[x] + minus[x], plus[x] - minus[x]);
                    s[x] += g * sum;
                    d[x] += gd * diff;
                    dd[x] += gdd * sum;
                }
            }
        },
    );
    out
}

/// Which outputs of pass B to make: the five bases, or the first derivatives alone.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    All,
    First,
}

/// Pass B across the cracks of `family` from pass A's `[s, d, dd]`. Along/across names: `a`
/// the axis of pass A, `b` the axis across the crack. Returns `(da, db, daa, dab, dbb)`.
fn pass_b(a: &[Vec<f32>; 3], w: usize, h: usize, family: Family, t: &Taps, want: Want) -> [Vec<f32>; 5] {
    let r = t.r;
    let (cw, ch) = family.dims(w, h);
    let all = want == Want::All;
    let mut out: [Vec<f32>; 5] =
        std::array::from_fn(|i| if all || i < 2 { vec![0f32; cw * ch] } else { Vec::new() });
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
    out
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
    let [oa, ob, oaa, oab, obb] = o;
    for j in 0..r {
        let (g, gd, gdd) = (t.half[0][j], t.half[1][j], t.half[2][j]);
        let ((s_hi, s_lo), (d_hi, d_lo)) = (lines(j, 0), lines(j, 1));
        for x in 0..cw {
            let (dsum, sdiff) = (d_hi[x] + d_lo[x], s_hi[x] - s_lo[x]);
            if j == 0 {
                (oa[x], ob[x]) = (g * dsum, gd * sdiff);
            } else {
                oa[x] += g * dsum;
                ob[x] += gd * sdiff;
            }
        }
        if all {
            let (dd_hi, dd_lo) = lines(j, 2);
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

/// Pass A along the crack: along x for horizontal cracks, along y for vertical ones.
fn pass_a(img: &[f32], w: usize, h: usize, family: Family, t: &Taps) -> [Vec<f32>; 3] {
    match family {
        Family::H => pass_a_rows(img, w, h, t),
        Family::V => pass_a_columns(img, w, h, t),
    }
}

/// The five bases of one channel for the cracks of `family`.
pub fn basis(img: &[f32], w: usize, h: usize, family: Family, t: &Taps) -> Basis {
    let a = pass_a(img, w, h, family, t);
    let [da, db, daa, dab, dbb] = pass_b(&a, w, h, family, t, Want::All);
    match family {
        Family::H => Basis { gx: da, gy: db, gxx: daa, gxy: dab, gyy: dbb },
        Family::V => Basis { gx: db, gy: da, gxx: dbb, gxy: dab, gyy: daa },
    }
}

/// `(gx, gy)` of one channel for the cracks of `family`.
pub fn first_derivatives(img: &[f32], w: usize, h: usize, family: Family, t: &Taps) -> (Vec<f32>, Vec<f32>) {
    let a = pass_a(img, w, h, family, t);
    let [da, db, ..] = pass_b(&a, w, h, family, t, Want::First);
    match family {
        Family::H => (da, db),
        Family::V => (db, da),
    }
}
