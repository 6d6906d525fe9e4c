//! Cracks as a complex: the whole Cartesian complex as one image, closed curves of strong
//! cracks, and the boundary of a threshold set, which lies exactly on cracks.
//!
//! The 0-cells (corners) are indexed `(i, j)`, `0 <= i <= W`, `0 <= j <= H`, at
//! `(i - 0.5, j - 0.5)`: crack `h(x, y)` joins corners `(x, y + 1)` and `(x + 1, y + 1)`, crack
//! `v(x, y)` joins `(x + 1, y)` and `(x + 1, y + 1)`.

use super::{CrackMap, Family};

/// The complex as a `(2W - 1)` x `(2H - 1)` image (x fastest): at `(2x, 2y)` pixel `(x, y)`
/// (0: the 2-cells carry no edge), at `(2x, 2y + 1)` crack `h(x, y)`, at `(2x + 1, 2y)` crack
/// `v(x, y)`, and at `(2x + 1, 2y + 1)` the inner corner between them: the largest strength of
/// the (up to four) cracks that meet there, so a threshold of the image keeps curves connected.
pub fn complex_image(m: &CrackMap) -> (usize, usize, Vec<f32>) {
    let (w, h) = (m.width, m.height);
    let (cw, ch) = (2 * w - 1, 2 * h - 1);
    let mut out = vec![0f32; cw * ch];
    let hs = &m.strength[Family::H as usize];
    let vs = &m.strength[Family::V as usize];
    for y in 0..h - 1 {
        for x in 0..w {
            out[(2 * y + 1) * cw + 2 * x] = hs[y * w + x];
        }
    }
    for y in 0..h {
        for x in 0..w - 1 {
            out[2 * y * cw + 2 * x + 1] = vs[y * (w - 1) + x];
        }
    }
    for y in 0..h - 1 {
        for x in 0..w - 1 {
            let around = [hs[y * w + x], hs[y * w + x + 1], vs[y * (w - 1) + x], vs[(y + 1) * (w - 1) + x]];
            out[(2 * y + 1) * cw + 2 * x + 1] = around.into_iter().fold(0.0, f32::max);
        }
    }
    (cw, ch, out)
}

/// Per family, whether each crack is kept.
pub type Kept = [Vec<bool>; 2];

/// The cracks at least `threshold` strong.
pub fn above(m: &CrackMap, threshold: f32) -> Kept {
    Family::BOTH.map(|f| m.strength[f as usize].iter().map(|&s| s >= threshold).collect())
}

/// The cracks of `kept` that lie on closed curves: dangling branches are pruned (repeatedly
/// removing a crack that ends at a corner no other kept crack meets), which leaves the curves
/// that close, and the paths between them. A curve that reaches the image's edge counts as
/// closed there (the frame of the image closes it), as the boundary of a threshold set does.
pub fn closed(w: usize, h: usize, mut kept: Kept) -> Kept {
    let corner = |i: usize, j: usize| j * (w + 1) + i;
    let ends = |f: Family, idx: usize| -> (usize, usize) {
        match f {
            Family::H => {
                let (x, y) = (idx % w, idx / w);
                (corner(x, y + 1), corner(x + 1, y + 1))
            }
            Family::V => {
                let (x, y) = (idx % (w - 1), idx / (w - 1));
                (corner(x + 1, y), corner(x + 1, y + 1))
            }
        }
    };
    let on_frame = |c: usize| {
        let (i, j) = (c % (w + 1), c / (w + 1));
        i == 0 || j == 0 || i == w || j == h
    };
    // The cracks meeting a corner: the h cracks to its left and right, the v cracks above and below.
    let incident = |c: usize| -> [(Family, Option<usize>); 4] {
        let (i, j) = (c % (w + 1), c / (w + 1));
        let hc = |x: usize| (j >= 1 && j < h && x < w).then(|| (j - 1) * w + x);
        let vc = |y: usize| (i >= 1 && i < w && y < h).then(|| y * (w - 1) + i - 1);
        [
            (Family::H, i.checked_sub(1).and_then(hc)),
            (Family::H, hc(i)),
            (Family::V, j.checked_sub(1).and_then(vc)),
            (Family::V, vc(j)),
        ]
    };
    let mut degree = vec![0u8; (w + 1) * (h + 1)];
    for f in Family::BOTH {
        for (idx, _) in kept[f as usize].iter().enumerate().filter(|(_, k)| **k) {
            let (a, b) = ends(f, idx);
            degree[a] += 1;
            degree[b] += 1;
        }
    }
    let mut stack: Vec<usize> = (0..degree.len()).filter(|&c| degree[c] == 1 && !on_frame(c)).collect();
    while let Some(c) = stack.pop() {
        if degree[c] != 1 {
            continue;
        }
        let Some((f, idx)) =
            incident(c).into_iter().find_map(|(f, i)| i.filter(|&i| kept[f as usize][i]).map(|i| (f, i)))
        else {
            continue;
        };
        kept[f as usize][idx] = false;
        let (a, b) = ends(f, idx);
        let other = if a == c { b } else { a };
        degree[c] -= 1;
        degree[other] -= 1;
        if degree[other] == 1 && !on_frame(other) {
            stack.push(other);
        }
    }
    kept
}

/// The cracks between a pixel in the set `{value <= t}` (or `>= t` for superlevel sets) and
/// one outside it: the set's boundary, on the cracks.
pub fn set_boundary(w: usize, h: usize, values: &[f32], t: f32, superlevel: bool) -> Kept {
    let inside = |v: f32| if superlevel { v >= t } else { v <= t };
    let hk = (0..w * (h - 1)).map(|i| inside(values[i]) != inside(values[i + w])).collect();
    let vk = (0..(w - 1) * h)
        .map(|i| {
            let (x, y) = (i % (w - 1), i / (w - 1));
            inside(values[y * w + x]) != inside(values[y * w + x + 1])
        })
        .collect();
    [hk, vk]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(w: usize, h: usize, hs: Vec<f32>, vs: Vec<f32>) -> CrackMap {
        let n = [hs.len(), vs.len()];
        CrackMap {
            width: w,
            height: h,
            strength: [hs, vs],
            angle: n.map(|n| vec![0.0; n]),
            scale: n.map(|n| vec![1.0; n]),
        }
    }

    #[test]
    fn a_closed_square_stays_and_its_tail_goes() {
        // 6 x 6 pixels: the boundary of the 2 x 2 block of pixels (2..4, 2..4), plus a tail:
        // one v crack going on from its top-right corner, away from the square.
        let (w, h) = (6, 6);
        let mut hs = vec![0f32; w * (h - 1)];
        let mut vs = vec![0f32; (w - 1) * h];
        for x in 2..4 {
            hs[w + x] = 1.0; // between rows 1 and 2
            hs[3 * w + x] = 1.0; // between rows 3 and 4
        }
        for y in 2..4 {
            vs[y * (w - 1) + 1] = 1.0; // between columns 1 and 2
            vs[y * (w - 1) + 3] = 1.0; // between columns 3 and 4
        }
        vs[(w - 1) + 3] = 1.0; // the tail: above the square's right side, row 1
        let m = map(w, h, hs.clone(), vs.clone());
        let kept = closed(w, h, above(&m, 0.5));
        assert_eq!(kept[0], hs.iter().map(|&s| s > 0.5).collect::<Vec<_>>());
        let mut square = vs.clone();
        square[(w - 1) + 3] = 0.0;
        assert_eq!(kept[1], square.iter().map(|&s| s > 0.5).collect::<Vec<_>>());
        // The complex image puts the cracks at odd/even positions.
        let (cw, ch, img) = complex_image(&m);
        assert_eq!((cw, ch), (11, 11));
        assert_eq!(img[3 * cw + 4], 1.0, "h(2, 1)");
        assert_eq!(img[4 * cw + 3], 1.0, "v(1, 2)");
        assert_eq!(img[0], 0.0, "a pixel");
    }

    #[test]
    fn the_boundary_of_a_set_is_the_cracks_between_inside_and_outside() {
        let (w, h) = (3, 2);
        let v = [0.0, 5.0, 0.0, 0.0, 0.0, 0.0];
        let [hk, vk] = set_boundary(w, h, &v, 1.0, false);
        assert_eq!(hk, vec![false, true, false]);
        assert_eq!(vk, vec![true, true, false, false]);
        // Its curve (open only at the image's edge) survives pruning.
        assert_eq!(closed(w, h, [hk.clone(), vk.clone()]), [hk, vk]);
    }
}
