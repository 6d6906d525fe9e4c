//! The parts of one threshold set: its components, and the bounded components of its
//! complement (voids in 3D, holes in 2D), each voxel labelled.
//!
//! Run-based labelling: each line of x is cut into runs of voxels in and out of the set (in
//! parallel over planes), runs are joined by a union-find where they touch runs of the lines
//! before them (with the construction's connectivity for the set, the dual one for the
//! complement; slabs of planes in parallel, then the planes between slabs), and each run gets
//! its part. Work and memory grow with the number of runs, not of voxels: the labels stay runs
//! ([`Parts::id_at`], [`Parts::line`]), and [`Parts::ids`] spells them out per voxel when a
//! caller wants that.

use super::Connectivity;
use crate::control::Control;
use crate::field::{Sample, ScalarField};
use crate::topo::ecc::{Construction, Filtration};
use crate::topo::union_find::find;
use crate::with_samples;
use rayon::prelude::*;

/// The label of voxels in no part: the complement's component that reaches the box's edge.
pub const NO_PART: u32 = u32::MAX;

/// Labelled parts of a threshold set, as runs along x.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    pub dims: [usize; 3],
    runs: Runs,
    /// Per run: `0..components` for the set's components, `components..components + voids` for
    /// the bounded components of the complement, [`NO_PART`] for the rest.
    run_id: Vec<u32>,
    pub components: u32,
    /// Bounded components of the complement: voids in 3D (β2), holes in 2D (β1).
    pub voids: u32,
    /// Voxels per part (components, then voids).
    pub sizes: Vec<u64>,
}

impl Parts {
    /// The part of voxel (x, y, z).
    pub fn id_at(&self, x: usize, y: usize, z: usize) -> u32 {
        let l = self.runs.line(y + self.dims[1] * z);
        let r = l.start + self.runs.end[l.clone()].partition_point(|&e| e as usize <= x);
        self.run_id[r.min(l.end - 1)]
    }

    /// The runs of line (y, z) as (first x, end x, part).
    pub fn line(&self, y: usize, z: usize) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
        self.runs
            .line(y + self.dims[1] * z)
            .map(|r| (self.runs.start[r] as usize, self.runs.end[r] as usize, self.run_id[r]))
    }

    /// The part of every voxel, x fastest.
    pub fn ids(&self) -> Vec<u32> {
        let nx = self.dims[0];
        let mut ids = vec![NO_PART; nx * self.dims[1] * self.dims[2]];
        ids.par_chunks_mut(nx).enumerate().for_each(|(line, out)| {
            for r in self.runs.line(line) {
                out[self.runs.start[r] as usize..self.runs.end[r] as usize].fill(self.run_id[r]);
            }
        });
        ids
    }

    /// How many runs hold the labels.
    pub fn runs(&self) -> usize {
        self.runs.start.len()
    }
}

/// Labels the sublevel (superlevel) set `{f <= t}` (`{f >= t}`) of `field` with `construction`'s
/// connectivity. NaN voxels are outside the set. Fields of 2^32 - 1 voxels or more are refused.
pub fn parts(
    field: &ScalarField,
    construction: Construction,
    filtration: Filtration,
    t: f64,
    ctl: &Control,
) -> Result<Parts, super::BettiError> {
    if field.len() >= u32::MAX as usize {
        return Err(super::BettiError::TooLarge { voxels: field.len() });
    }
    let grid = super::Grid::of(field);
    let sup = filtration == Filtration::Superlevel;
    let runs = with_samples!(field.samples(), v => Runs::of(v, &grid, |s| {
        let x = s.to_f64();
        if sup { x >= t } else { x <= t }
    }));
    ctl.check()?;
    let (set, outside) = match construction {
        Construction::TopCells => (Connectivity::Full, Connectivity::Faces),
        Construction::Vertices => (Connectivity::Faces, Connectivity::Full),
    };
    let mut parent: Vec<u32> = (0..runs.len() as u32).collect();
    runs.join(&grid, &mut parent, set, outside);
    ctl.check()?;
    // Compact ids: components first, then the complement's roots off the box's edge.
    let n = runs.len();
    let [_, ny, nz] = grid.n;
    let mut root = vec![0u32; n];
    let mut edge = vec![false; n];
    for l in 0..ny * nz {
        let (y, z) = (l % ny, l / ny);
        let edge_line = y == 0 || y + 1 == ny || (grid.three_d && (z == 0 || z + 1 == nz));
        let line = runs.line(l);
        for r in line.clone() {
            root[r] = find(&mut parent, r) as u32;
            let on_edge = edge_line || r == line.start || r + 1 == line.end;
            if on_edge && !runs.inside[r] {
                edge[root[r] as usize] = true;
            }
        }
    }
    let mut id_of_root = vec![NO_PART; n];
    let mut next = 0u32;
    let mut number = |k: usize| {
        if id_of_root[k] == NO_PART {
            id_of_root[k] = next;
            next += 1;
        }
        next
    };
    let mut components = 0;
    for r in (0..n).filter(|&r| runs.inside[r]) {
        components = number(root[r] as usize);
    }
    let mut total = components;
    for r in (0..n).filter(|&r| !runs.inside[r] && !edge[root[r] as usize]) {
        total = number(root[r] as usize);
    }
    let run_id: Vec<u32> = root.iter().map(|&k| id_of_root[k as usize]).collect();
    let mut sizes = vec![0u64; total as usize];
    for (r, &id) in run_id.iter().enumerate() {
        if id != NO_PART {
            sizes[id as usize] += (runs.end[r] - runs.start[r]) as u64;
        }
    }
    Ok(Parts { dims: grid.n, runs, run_id, components, voids: total - components, sizes })
}

/// Joins the sets of runs `a` and `b`; `parent` may be a window onto the runs from `base` on.
fn union(parent: &mut [u32], base: usize, a: usize, b: usize) {
    let local = |p: &mut [u32], r: usize| {
        let mut r = r - base;
        while p[r] as usize - base != r {
            let grand = p[p[r] as usize - base];
            p[r] = grand;
            r = grand as usize - base;
        }
        r
    };
    let (ra, rb) = (local(parent, a), local(parent, b));
    if ra != rb {
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[lo] = (hi + base) as u32;
    }
}

/// One plane's runs (first x, end x, in the set) and the number of runs of each of its lines.
type PlaneRuns = (Vec<(u32, u32, bool)>, Vec<usize>);

/// Runs of voxels in and out of the set, line by line (lines x-fastest, then y, then z).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Runs {
    start: Vec<u32>,
    end: Vec<u32>,
    inside: Vec<bool>,
    /// Line `l`'s runs are `first[l]..first[l + 1]`.
    first: Vec<usize>,
}

impl Runs {
    fn of<T: Sample>(data: &[T], grid: &super::Grid, member: impl Fn(T) -> bool + Sync) -> Runs {
        let nx = grid.n[0];
        let plane = nx * grid.n[1];
        // Per plane: its runs and the number of runs of each of its lines.
        let planes: Vec<PlaneRuns> = data
            .par_chunks(plane)
            .map(|p| {
                let mut runs = Vec::new();
                let mut counts = Vec::with_capacity(grid.n[1]);
                for line in p.chunks(nx) {
                    let before = runs.len();
                    let mut s = 0;
                    let mut state = member(line[0]);
                    for (x, &v) in line.iter().enumerate().skip(1) {
                        let m = member(v);
                        if m != state {
                            runs.push((s as u32, x as u32, state));
                            s = x;
                            state = m;
                        }
                    }
                    runs.push((s as u32, nx as u32, state));
                    counts.push(runs.len() - before);
                }
                (runs, counts)
            })
            .collect();
        let total: usize = planes.iter().map(|p| p.0.len()).sum();
        let mut r = Runs {
            start: Vec::with_capacity(total),
            end: Vec::with_capacity(total),
            inside: Vec::with_capacity(total),
            first: vec![0],
        };
        for (runs, counts) in planes {
            for (s, e, m) in runs {
                r.start.push(s);
                r.end.push(e);
                r.inside.push(m);
            }
            for c in counts {
                let last = r.first[r.first.len() - 1];
                r.first.push(last + c);
            }
        }
        r
    }

    fn len(&self) -> usize {
        self.start.len()
    }

    fn line(&self, l: usize) -> std::ops::Range<usize> {
        self.first[l]..self.first[l + 1]
    }

    /// Joins the runs that touch: runs in the set under `set`, runs outside it under `outside`
    /// (each line with the lines before it, one walk for both). Slabs of planes are joined in
    /// parallel, each in its own window of `parent`, then each slab's first plane with the plane
    /// before it.
    fn join(&self, grid: &super::Grid, parent: &mut [u32], set: Connectivity, outside: Connectivity) {
        let [_, ny, nz] = grid.n;
        let ext = [outside, set].map(|c| (c == Connectivity::Full) as u32);
        let slabs = rayon::current_num_threads().clamp(1, nz);
        let bounds: Vec<usize> = (0..=slabs).map(|s| s * nz / slabs).collect();
        let first_run = |z: usize| self.first[z * ny];
        {
            let mut windows = Vec::with_capacity(slabs);
            let mut rest = &mut *parent;
            for s in 0..slabs {
                let (base, end) = (first_run(bounds[s]), first_run(bounds[s + 1]));
                let (w, r) = rest.split_at_mut(end - base);
                windows.push((base, bounds[s], bounds[s + 1], w));
                rest = r;
            }
            windows.into_par_iter().for_each(|(base, z0, z1, w)| {
                for z in z0..z1 {
                    for y in 0..ny {
                        if y > 0 {
                            let (a, b) = (self.line(y + ny * z), self.line(y - 1 + ny * z));
                            self.join_lines(w, base, a, b, ext.map(Some));
                        }
                        if z > z0 {
                            self.join_across(ny, w, base, y, z, ext);
                        }
                    }
                }
            });
        }
        for &z in &bounds[1..slabs] {
            for y in 0..ny {
                self.join_across(ny, parent, 0, y, z, ext);
            }
        }
    }

    /// Joins line (y, z) with the lines of plane z - 1 its runs can touch: the one below it, and
    /// (for a membership joined at corners, `ext` 1) its two diagonal neighbours.
    fn join_across(&self, ny: usize, parent: &mut [u32], base: usize, y: usize, z: usize, ext: [u32; 2]) {
        for dy in [-1isize, 0, 1] {
            let by = y as isize + dy;
            if by < 0 || by >= ny as isize {
                continue;
            }
            let reach = ext.map(|e| if dy != 0 && e == 0 { None } else { Some(e) });
            let (a, b) = (self.line(y + ny * z), self.line(by as usize + ny * (z - 1)));
            self.join_lines(parent, base, a, b, reach);
        }
    }

    /// Joins runs of lines `a` and `b` of the same membership that overlap (reach 0) or touch at
    /// a corner (reach 1); `reach` per membership (out, in), None: not joined across these lines.
    fn join_lines(
        &self,
        parent: &mut [u32],
        base: usize,
        a: std::ops::Range<usize>,
        b: std::ops::Range<usize>,
        reach: [Option<u32>; 2],
    ) {
        let joins = |i: usize, j: usize| {
            let m = self.inside[i];
            if m != self.inside[j] {
                return None;
            }
            reach[m as usize]
        };
        let (mut i, mut j) = (a.start, b.start);
        while i < a.end && j < b.end {
            if let Some(e) = joins(i, j)
                && self.start[i] < self.end[j] + e
                && self.start[j] < self.end[i] + e
            {
                union(parent, base, i, j);
            }
            // Runs tile their lines, so the run that ends first can touch nothing further along
            // the other line; except, at a corner, the run that starts where it ends.
            let (ei, ej) = (self.end[i], self.end[j]);
            if ei == ej {
                if j + 1 < b.end && joins(i, j + 1) == Some(1) {
                    union(parent, base, i, j + 1);
                }
                if i + 1 < a.end && joins(i + 1, j) == Some(1) {
                    union(parent, base, i + 1, j);
                }
            }
            if ei <= ej {
                i += 1;
            }
            if ej <= ei {
                j += 1;
            }
        }
    }
}
