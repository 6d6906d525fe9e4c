//! The manifolds of the Morse-Smale complex as translucent labels over the slices: basins,
//! mountains, or (2D) Morse-Smale cells, coloured so that labels that touch differ.

use egui::Color32;
use topoview_core::topo::msc::complex::NO_LABEL;

/// A label per voxel (or per top cell) with each label's colour.
pub struct LabelMap {
    /// Per voxel, or per top cell when `on_cells`: a label, [`NO_LABEL`] for none.
    pub ids: Vec<u32>,
    /// Whether the labels are on the grid of top cells (one smaller along every axis, half a
    /// voxel in): mountains and Morse-Smale cells.
    pub on_cells: bool,
    /// Per label id: its index into [`PALETTE`].
    colour: Vec<u8>,
}

impl LabelMap {
    /// Labels `ids` on a grid of `dims` (of the cells when `on_cells`), coloured.
    pub fn new(ids: Vec<u32>, dims: [usize; 3], on_cells: bool) -> LabelMap {
        let colour = colouring(&ids, dims, PALETTE.len());
        LabelMap { ids, on_cells, colour }
    }

    fn color(&self, label: u32) -> Color32 {
        match self.colour.get(label as usize) {
            Some(&k) if label != NO_LABEL => {
                let [r, g, b] = PALETTE[k as usize];
                Color32::from_rgba_unmultiplied(r, g, b, 90)
            }
            _ => Color32::TRANSPARENT,
        }
    }
}

/// Twelve categorical hues (Tableau's ten and two more), drawn translucent.
pub const PALETTE: [[u8; 3]; 12] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [188, 189, 34],
    [23, 190, 207],
    [255, 220, 80],
    [120, 120, 255],
    [120, 255, 160],
];

/// A colour (out of `k`) per label id such that labels touching along a grid axis differ
/// wherever a label has fewer than `k` neighbours: greedy colouring of the label adjacency
/// graph, most connected labels first (Welsh and Powell). A label whose neighbours already
/// hold every colour takes the one they use least.
pub fn colouring(ids: &[u32], dims: [usize; 3], k: usize) -> Vec<u8> {
    let n = ids.iter().filter(|&&l| l != NO_LABEL).map(|&l| l as usize + 1).max().unwrap_or(0);
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let strides = [1, dims[0], dims[0] * dims[1]];
    for (axis, &stride) in strides.iter().enumerate() {
        if dims[axis] < 2 {
            continue;
        }
        for (i, &a) in ids.iter().enumerate() {
            let at = (i / stride) % dims[axis];
            if at + 1 == dims[axis] {
                continue;
            }
            let b = ids[i + stride];
            if a != b && a != NO_LABEL && b != NO_LABEL {
                let p = (a.min(b), a.max(b));
                if pairs.last() != Some(&p) {
                    pairs.push(p);
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    let mut degree = vec![0u32; n];
    for &(a, b) in &pairs {
        degree[a as usize] += 1;
        degree[b as usize] += 1;
    }
    let mut start = vec![0usize; n + 1];
    for l in 0..n {
        start[l + 1] = start[l] + degree[l] as usize;
    }
    let mut fill = start.clone();
    let mut adjacent = vec![0u32; start[n]];
    for &(a, b) in &pairs {
        adjacent[fill[a as usize]] = b;
        fill[a as usize] += 1;
        adjacent[fill[b as usize]] = a;
        fill[b as usize] += 1;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&l| std::cmp::Reverse(degree[l]));
    const UNSET: u8 = u8::MAX;
    let mut colour = vec![UNSET; n];
    let mut used = vec![0usize; k];
    for l in order {
        used.iter_mut().for_each(|u| *u = 0);
        for &m in &adjacent[start[l]..start[l + 1]] {
            if let Some(u) = used.get_mut(colour[m as usize] as usize) {
                *u += 1;
            }
        }
        let free = used.iter().position(|&u| u == 0);
        let least = || (0..k).min_by_key(|&c| used[c]).unwrap_or(0);
        colour[l] = free.unwrap_or_else(least) as u8;
    }
    colour
}

/// The plane at `slice` (normal axis `w`, in-plane axes `u`, `v`) of `labels` over a field of
/// `voxel_dims`, as an image with row 0 at the top (highest v). Labels per voxel cover the plane
/// from 0 to n in voxel units (voxel i spans [i, i + 1)); labels per top cell, a grid one
/// smaller along every axis and half a voxel in, cover 0.5 to n - 0.5.
pub fn label_image(
    labels: &LabelMap,
    voxel_dims: [usize; 3],
    axes: (usize, usize, usize),
    slice: usize,
) -> egui::ColorImage {
    let (u, v, w) = axes;
    let dims = grid_dims(voxel_dims, labels.on_cells);
    let layer = slice.min(dims[w].saturating_sub(1));
    let (nu, nv) = (dims[u], dims[v]);
    let mut pixels = Vec::with_capacity(nu * nv);
    for row in 0..nv {
        let iv = nv - 1 - row;
        for iu in 0..nu {
            let mut p = [0; 3];
            p[u] = iu;
            p[v] = iv;
            p[w] = layer;
            let i = p[0] + dims[0] * (p[1] + dims[1] * p[2]);
            pixels.push(labels.ids.get(i).map_or(Color32::TRANSPARENT, |&l| labels.color(l)));
        }
    }
    egui::ColorImage::new([nu, nv], pixels)
}

/// The dimensions of the grid of voxels or (`on_cells`) of top cells of a field of
/// `voxel_dims` (a 2D field's third axis stays 1).
pub fn grid_dims(voxel_dims: [usize; 3], on_cells: bool) -> [usize; 3] {
    let ndim = if voxel_dims[2] == 1 { 2 } else { 3 };
    std::array::from_fn(|a| if on_cells && a < ndim { voxel_dims[a] - 1 } else { voxel_dims[a] })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels that touch get different colours when each has fewer neighbours than colours,
    /// whatever their ids; checked on random Voronoi-like label volumes.
    #[test]
    fn touching_labels_differ() {
        let dims = [24, 20, 9];
        let mut x = 7u64;
        let mut rand = |m: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize % m
        };
        for _ in 0..5 {
            let seeds: Vec<([usize; 3], u32)> =
                (0..30).map(|_| ([rand(24), rand(20), rand(9)], rand(1000) as u32)).collect();
            let mut ids = Vec::new();
            for z in 0..dims[2] {
                for y in 0..dims[1] {
                    for x in 0..dims[0] {
                        let d = |s: &[usize; 3]| {
                            [x, y, z]
                                .iter()
                                .zip(s)
                                .map(|(a, b): (&usize, &usize)| a.abs_diff(*b).pow(2))
                                .sum::<usize>()
                        };
                        let near = seeds.iter().min_by_key(|(s, _)| d(s)).unwrap();
                        // A few holes: voxels without a label.
                        ids.push(if (x * 7 + y * 3 + z) % 53 == 0 { NO_LABEL } else { near.1 });
                    }
                }
            }
            let colour = colouring(&ids, dims, PALETTE.len());
            let idx = |p: [usize; 3]| p[0] + dims[0] * (p[1] + dims[1] * p[2]);
            for z in 0..dims[2] {
                for y in 0..dims[1] {
                    for x in 0..dims[0] {
                        let a = ids[idx([x, y, z])];
                        for next in [[x + 1, y, z], [x, y + 1, z], [x, y, z + 1]] {
                            if next.iter().zip(&dims).any(|(p, d)| p >= d) {
                                continue;
                            }
                            let b = ids[idx(next)];
                            if a != b && a != NO_LABEL && b != NO_LABEL {
                                assert_ne!(colour[a as usize], colour[b as usize], "labels {a} and {b}");
                            }
                        }
                    }
                }
            }
        }
    }
}
