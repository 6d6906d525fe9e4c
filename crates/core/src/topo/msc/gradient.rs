//! The discrete gradient of a lower-star filtration, vertex by vertex (ProcessLowerStars of
//! Robins, Wood and Sheppard, "Theory and algorithms for constructing discrete Morse complexes
//! from grayscale digital images", IEEE TPAMI 2011).
//!
//! Vertices are ordered by (value, voxel index): ties in value go to the lower index, so the
//! gradient is deterministic. A cell belongs to the lower star of its highest corner. Within a
//! lower star, cells are ordered by the descending list of their other corners (compared
//! lexicographically, a prefix first), and paired greedily: the vertex with its lowest edge, then
//! every cell with exactly one unpaired face in the star with that face; cells left with no
//! unpaired face become critical. Robins et al. prove the result minimal in 2D and 3D: it has as
//! many critical cells of each dimension as the persistent homology of the filtration requires.

use super::grid::{Cell, CellGrid};
use super::order::VertexOrder;
use crate::control::{Cancelled, Control};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};

/// Per cell, 4 bits: 0 while unassigned, [`CRITICAL`], or `PAIRED + 2 * axis + (sign > 0)`
/// naming the partner one step away. Two cells share a byte (cell `c` in the low nibble of byte
/// `c / 2` when `c` is even): 4 bytes a voxel in 3D.
pub const CRITICAL: u8 = 1;
const PAIRED: u8 = 2;

/// A discrete gradient on the cells of a grid.
pub struct Gradient {
    pub grid: CellGrid,
    codes: Vec<u8>,
}

/// Cells per chunk when the critical cells are listed in parallel.
const LIST_CHUNK: usize = 1 << 20;

impl Gradient {
    /// A gradient from its codes, as [`gradient`] lays them out (computed elsewhere: the GPU).
    pub fn from_codes(grid: CellGrid, codes: Vec<u8>) -> Gradient {
        assert_eq!(codes.len(), grid.n_cells().div_ceil(2), "4 bits a cell");
        Gradient { grid, codes }
    }

    /// The codes, 4 bits a cell (cell `c` in the low nibble of byte `c / 2` when `c` is even).
    pub fn codes(&self) -> &[u8] {
        &self.codes
    }

    #[inline]
    fn code(&self, c: Cell) -> u8 {
        self.codes[c / 2] >> (4 * (c % 2)) & 0xf
    }

    /// The partner of `c` in its gradient pair, or None when `c` is critical.
    #[inline]
    pub fn partner(&self, c: Cell) -> Option<Cell> {
        let code = self.code(c);
        if code < PAIRED {
            return None;
        }
        let k = code - PAIRED;
        self.grid.step(c, (k / 2) as usize, if k % 2 == 1 { 1 } else { -1 })
    }

    pub fn is_critical(&self, c: Cell) -> bool {
        self.code(c) == CRITICAL
    }

    /// How many cells are critical (without listing them).
    pub fn count_critical(&self) -> usize {
        // Whole words, 16 cells each; the last bytes (fewer than 8) alone. A nibble past the last
        // cell is zero (the codes start zeroed), never CRITICAL.
        let words = self.codes.par_chunks_exact(8).map(|w| critical_nibbles(word(w)).count_ones() as usize);
        let tail = self.codes.chunks_exact(8).remainder();
        words.sum::<usize>()
            + tail
                .iter()
                .map(|&b| (b & 0xf == CRITICAL) as usize + (b >> 4 == CRITICAL) as usize)
                .sum::<usize>()
    }

    /// Critical cells by dimension, in cell-id order (listed on all threads). The codes are read
    /// 16 cells a word: on a 256^3 field (134 M cells, 41 K critical) on the H100 machine's 16
    /// cores the list took 21 ms a cell at a time.
    pub fn critical_cells(&self) -> [Vec<Cell>; 4] {
        let n = self.grid.n_cells();
        let parts: Vec<[Vec<Cell>; 4]> = self
            .codes
            .par_chunks(LIST_CHUNK / 2)
            .enumerate()
            .map(|(k, bytes)| {
                let mut out: [Vec<Cell>; 4] = Default::default();
                let first = k * LIST_CHUNK;
                let mut push = |c: Cell| {
                    if c < n {
                        out[self.grid.dim(c)].push(c);
                    }
                };
                let whole = bytes.chunks_exact(8);
                let tail = whole.remainder();
                for (i, w) in whole.enumerate() {
                    let mut hits = critical_nibbles(word(w));
                    while hits != 0 {
                        push(first + 16 * i + hits.trailing_zeros() as usize / 4);
                        hits &= hits - 1;
                    }
                }
                let at = first + 2 * (bytes.len() - tail.len());
                for (i, &b) in tail.iter().enumerate() {
                    for (j, code) in [b & 0xf, b >> 4].into_iter().enumerate() {
                        if code == CRITICAL {
                            push(at + 2 * i + j);
                        }
                    }
                }
                out
            })
            .collect();
        std::array::from_fn(|d| parts.iter().flat_map(|p| p[d].iter().copied()).collect())
    }
}

/// Eight bytes of codes as one little-endian word: cell `c` of the word in bits `4c..4c+4`.
#[inline]
fn word(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().expect("8 bytes"))
}

/// The top bit of every nibble of `w` that holds CRITICAL (no carry crosses nibbles).
#[inline]
fn critical_nibbles(w: u64) -> u64 {
    const LOW: u64 = 0x7777_7777_7777_7777;
    const TOP: u64 = 0x8888_8888_8888_8888;
    let x = w ^ (CRITICAL as u64 * 0x1111_1111_1111_1111);
    // A nibble of x is zero exactly when neither its low three bits (which, plus 7, carry into
    // the top bit) nor its top bit is set.
    !(((x & LOW) + LOW) | x) & TOP
}

/// Lower-star cells are addressed by their offset from the vertex on the doubled grid,
/// `d` in {-1, 0, 1}^3, as the slot `(dx + 1) + 3 (dy + 1) + 9 (dz + 1)`; the vertex is slot 13.
/// A star cell's facets inside the star are its offsets with one non-zero entry zeroed (the other
/// facet along that axis does not contain the vertex), so sets of slots are u32 bit masks.
const CENTER: usize = 13;

fn offset(slot: usize) -> [i64; 3] {
    [(slot % 3) as i64 - 1, ((slot / 3) % 3) as i64 - 1, (slot / 9) as i64 - 1]
}

fn slot(d: [i64; 3]) -> usize {
    ((d[0] + 1) + 3 * (d[1] + 1) + 9 * (d[2] + 1)) as usize
}

/// FACETS[s]: mask of the slots of the facets of slot s that contain the vertex.
const fn facet_masks() -> [u32; 27] {
    let mut m = [0u32; 27];
    let mut s = 0;
    while s < 27 {
        let d = [(s % 3) as i64 - 1, ((s / 3) % 3) as i64 - 1, (s / 9) as i64 - 1];
        let mut a = 0;
        while a < 3 {
            if d[a] != 0 {
                let mut e = d;
                e[a] = 0;
                m[s] |= 1 << ((e[0] + 1) + 3 * (e[1] + 1) + 9 * (e[2] + 1));
            }
            a += 1;
        }
        s += 1;
    }
    m
}
const FACETS: [u32; 27] = facet_masks();

/// COFACETS[s]: mask of the slots whose facets include slot s.
const fn cofacet_masks() -> [u32; 27] {
    let mut m = [0u32; 27];
    let mut s = 0;
    while s < 27 {
        let mut t = 0;
        while t < 27 {
            if FACETS[t] & (1 << s) != 0 {
                m[s] |= 1 << t;
            }
            t += 1;
        }
        s += 1;
    }
    m
}
const COFACETS: [u32; 27] = cofacet_masks();

/// CORNERS[s]: mask of the slots of the corners of slot s other than the vertex (as
/// neighbouring vertices: the offsets e != 0 with each e_a in {0, d_a}).
const fn corner_masks() -> [u32; 27] {
    let mut m = [0u32; 27];
    let mut s = 0;
    while s < 27 {
        let d = [(s % 3) as i64 - 1, ((s / 3) % 3) as i64 - 1, (s / 9) as i64 - 1];
        let mut k = 1;
        while k < 8 {
            let e = [(k & 1) as i64 * d[0], ((k >> 1) & 1) as i64 * d[1], ((k >> 2) & 1) as i64 * d[2]];
            let t = ((e[0] + 1) + 3 * (e[1] + 1) + 9 * (e[2] + 1)) as usize;
            if t != CENTER {
                m[s] |= 1 << t;
            }
            k += 1;
        }
        s += 1;
    }
    m
}
const CORNERS: [u32; 27] = corner_masks();

/// Slots of edges: one non-zero offset, one other corner.
const fn edge_slots() -> u32 {
    let mut m = 0u32;
    let mut s = 0;
    while s < 27 {
        if CORNERS[s].count_ones() == 1 {
            m |= 1 << s;
        }
        s += 1;
    }
    m
}
const EDGES: u32 = edge_slots();

/// The lower star of one vertex.
struct Star {
    /// Slots present.
    present: u32,
    /// Per slot, its place in the G-order as one integer: the ranks (1 for the lowest) of its
    /// other corners among the vertex's lower neighbours, highest first, one byte each from the
    /// top, then zeros. Integer order is then the lexicographic order of the descending corner
    /// lists, a prefix first (its zeros are below any rank).
    order: [u64; 27],
}

/// Computes the gradient of a field given by its vertex order, on all threads.
pub fn gradient(grid: CellGrid, order: &(impl VertexOrder + ?Sized)) -> Gradient {
    match gradient_with(grid, order, &Control::default()) {
        Ok(g) => g,
        Err(Cancelled) => unreachable!("no cancel flag was given"),
    }
}

/// [`gradient`] under a [`Control`], checked every [`CHECK_VERTICES`] vertices per thread.
pub fn gradient_with(
    grid: CellGrid,
    order: &(impl VertexOrder + ?Sized),
    ctl: &Control,
) -> Result<Gradient, Cancelled> {
    // Zeroed pages come from the system untouched, so the threads that write a page first
    // fault it in, in parallel.
    let mut codes = vec![0u8; grid.n_cells().div_ceil(2)];
    {
        // SAFETY: AtomicU8 has the size, alignment and bit validity of u8, and `codes` is
        // borrowed mutably (no other access) while the atomics are used.
        let cells: &[AtomicU8] = unsafe { &*(codes.as_mut_slice() as *mut [u8] as *const [AtomicU8]) };
        let n: usize = grid.vdims.iter().product();
        (0..n.div_ceil(CHECK_VERTICES)).into_par_iter().try_for_each(|chunk| {
            ctl.check()?;
            let vs = chunk * CHECK_VERTICES..((chunk + 1) * CHECK_VERTICES).min(n);
            vs.for_each(|v| process_lower_star(&grid, order, v, cells));
            Ok(())
        })?;
    }
    Ok(Gradient { grid, codes })
}

/// Sets the code of cell `c`. Every cell is set once, by the lower star holding it, so or-ing
/// its nibble into the shared byte is the whole write.
#[inline]
fn set(codes: &[AtomicU8], c: Cell, code: u8) {
    codes[c / 2].fetch_or(code << (4 * (c % 2)), Ordering::Relaxed);
}

/// Vertices between two cancellation checks: a few milliseconds of lower stars.
const CHECK_VERTICES: usize = 1 << 15;

fn process_lower_star(grid: &CellGrid, order: &(impl VertexOrder + ?Sized), v: usize, codes: &[AtomicU8]) {
    let star = lower_star(grid, order, v);
    let vc = grid.vertex_cell(v);
    let cell = |s: usize| -> Cell {
        let d = offset(s);
        (vc as i64 + d[0] + grid.cdims[0] as i64 * (d[1] + grid.cdims[1] as i64 * d[2])) as Cell
    };
    // Pairs a facet slot with a slot one dimension up; codes name the partner's direction.
    let pair = |f: usize, s: usize| {
        let (df, ds) = (offset(f), offset(s));
        let axis = (0..3).find(|&a| df[a] != ds[a]).expect("paired slots differ along one axis");
        let up = (ds[axis] > df[axis]) as u8;
        set(codes, cell(f), PAIRED + 2 * axis as u8 + up);
        set(codes, cell(s), PAIRED + 2 * axis as u8 + (1 - up));
    };
    let critical = |s: usize| set(codes, cell(s), CRITICAL);
    if star.present == 1 << CENTER {
        critical(CENTER);
        return;
    }
    // G-order: lexicographic on the other corners, highest first; a prefix comes first.
    let less = |i: usize, j: usize| -> bool { star.order[i] < star.order[j] };
    let min_of = |mask: u32| -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut m = mask;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            if best.is_none_or(|b| less(s, b)) {
                best = Some(s);
            }
        }
        best
    };
    let mut assigned: u32 = 0;
    let unpaired = |assigned: u32, s: usize| FACETS[s] & !assigned;
    // Star slots with exactly one unpaired facet among the cofacets of slot `of`.
    let ready_cofacets = |assigned: u32, of: usize| -> u32 {
        let mut m = star.present & !assigned & COFACETS[of];
        let mut out = 0;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            if unpaired(assigned, s).count_ones() == 1 {
                out |= 1 << s;
            }
        }
        out
    };

    let edges = star.present & EDGES;
    // The lowest edge pairs with the vertex.
    let delta = min_of(edges).expect("a non-trivial lower star has an edge");
    pair(CENTER, delta);
    assigned |= 1 << CENTER | 1 << delta;
    let mut pq_zero: u32 = edges & !(1 << delta);
    let mut pq_one: u32 = ready_cofacets(assigned, delta);
    while pq_one != 0 || pq_zero != 0 {
        while let Some(a) = min_of(pq_one) {
            pq_one &= !(1 << a);
            if assigned & (1 << a) != 0 {
                continue;
            }
            let faces = unpaired(assigned, a);
            if faces == 0 {
                pq_zero |= 1 << a;
                continue;
            }
            let face = faces.trailing_zeros() as usize;
            pair(face, a);
            assigned |= 1 << face | 1 << a;
            pq_zero &= !(1 << face);
            pq_one |= ready_cofacets(assigned, a) | ready_cofacets(assigned, face);
        }
        if let Some(g) = min_of(pq_zero) {
            pq_zero &= !(1 << g);
            if assigned & (1 << g) != 0 {
                continue;
            }
            critical(g);
            assigned |= 1 << g;
            pq_one |= ready_cofacets(assigned, g);
        }
    }
    debug_assert_eq!(assigned, star.present, "every cell of the lower star is assigned");
}

/// The cells whose highest corner is `v`, by slot.
fn lower_star(grid: &CellGrid, order: &(impl VertexOrder + ?Sized), v: usize) -> Star {
    let [nx, ny, _] = grid.vdims;
    let p = [v % nx, (v / nx) % ny, v / (nx * ny)];
    let axis_range = |a: usize| -> std::ops::RangeInclusive<i64> {
        if a >= grid.ndim {
            return 0..=0;
        }
        let lo = if p[a] == 0 { 0 } else { -1 };
        let hi = if p[a] + 1 == grid.vdims[a] { 0 } else { 1 };
        lo..=hi
    };
    // The neighbours below v, each key read once, sorted: the key (sign bit flipped, so
    // unsigned order is signed order), the index and the slot packed in one u128 (indices are
    // below 2^31, see `MscError::TooLarge`, so index and slot fit the low 64 bits in order).
    let pack =
        |u: usize, sl: usize| (((order.key(u) as u64 ^ (1 << 63)) as u128) << 64) | (u << 5 | sl) as u128;
    let mut lower = [0u128; 26];
    let mut n = 0;
    let kv = pack(v, CENTER);
    for dz in axis_range(2) {
        for dy in axis_range(1) {
            for dx in axis_range(0) {
                let sl = slot([dx, dy, dz]);
                if sl == CENTER {
                    continue;
                }
                let u = (v as i64 + dx + nx as i64 * (dy + ny as i64 * dz)) as usize;
                let ku = pack(u, sl);
                if ku < kv {
                    lower[n] = ku;
                    n += 1;
                }
            }
        }
    }
    let lower = &mut lower[..n];
    lower.sort_unstable();
    let mut rank = [0u8; 27];
    let mut below: u32 = 0;
    for (r, &k) in lower.iter().enumerate() {
        let sl = (k & 31) as usize;
        rank[sl] = r as u8 + 1;
        below |= 1 << sl;
    }
    let mut s = Star { present: 1 << CENTER, order: [0; 27] };
    // A cell is in the lower star when every other corner is a lower neighbour (corners off
    // the grid are not neighbours, so cells off the grid drop out too).
    let mut m: u32 = ((1 << 27) - 1) & !(1 << CENTER);
    while m != 0 {
        let sl = m.trailing_zeros() as usize;
        m &= m - 1;
        if CORNERS[sl] & !below != 0 {
            continue;
        }
        let mut ranks = [0u8; 7];
        let mut k = 0;
        let mut c = CORNERS[sl];
        while c != 0 {
            ranks[k] = rank[c.trailing_zeros() as usize];
            c &= c - 1;
            k += 1;
        }
        ranks[..k].sort_unstable_by(|a, b| b.cmp(a));
        s.present |= 1 << sl;
        s.order[sl] = ranks.iter().fold(0u64, |acc, &r| acc << 8 | r as u64) << 8;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The word-at-a-time count and list equal a cell-at-a-time scan, on random codes where
        /// CRITICAL is common (runs of it across words and chunks) and grids of odd cell counts
        /// (a padding nibble) and of more than one list chunk.
        #[test]
        fn critical_cells_word_at_a_time(
            dims in prop_oneof![
                (1usize..40, 1usize..40, 1usize..12).prop_map(|(x, y, z)| [x, y, z]),
                Just([400, 400, 4]),
            ],
            seed in any::<u64>(),
            weight in 1u64..16,
        ) {
            let grid = CellGrid::new(dims, 3);
            let n = grid.n_cells();
            let mut s = seed | 1;
            let mut nibble = || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                if s % 16 < weight { CRITICAL } else { (s >> 8) as u8 & 0xf }
            };
            let mut codes: Vec<u8> = (0..n.div_ceil(2)).map(|_| nibble() | nibble() << 4).collect();
            if n % 2 == 1 {
                *codes.last_mut().unwrap() &= 0xf;
            }
            let g = Gradient::from_codes(grid, codes);
            let mut want: [Vec<Cell>; 4] = Default::default();
            for c in (0..n).filter(|&c| g.is_critical(c)) {
                want[grid.dim(c)].push(c);
            }
            prop_assert_eq!(g.count_critical(), want.iter().map(Vec::len).sum::<usize>());
            prop_assert_eq!(g.critical_cells(), want);
        }
    }
}
