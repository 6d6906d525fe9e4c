//! The components of a growing set of voxels, counted as the voxels come one at a time, on all
//! cores.
//!
//! Components once t voxels are in = t − merges among them, and the merges are those of Kruskal's
//! algorithm on the grid graph, an edge coming with the later of its two voxels. That count does
//! not depend on the order in which the edges of one time are taken, so the work can be cut up:
//!
//! 1. The grid is cut into slabs of planes (z in 3D, y in 2D). Each slab grows its own union-find
//!    over its own voxels, in time order, all slabs at once. A merge inside a slab merges
//!    components of the whole set unless both sides reach the slab's cut faces: only then can the
//!    slabs beyond have joined them already. Those merges are kept as edges between the two
//!    sides' face voxels (a component that reaches a face keeps a face voxel as its root), with
//!    their time; the rest are counted at once.
//! 2. One sequential Kruskal over the kept edges and the edges across the cuts, on the face
//!    voxels alone, counts the merges the slabs could not decide.
//!
//! A diagonal edge across a cut is left out when another voxel of the box it spans (the 2x2 or
//! 2x2x2 voxels between its ends, all neighbours of both) comes no later than it does: by the
//! cycle property it can merge nothing, since its ends are joined by then through edges that are
//! straighter (by induction down to the straight edges, which are always kept) or inside a slab.
//! That leaves few diagonal edges on smooth fields. A slab's union-find is a few MiB, near a core's cache, where a single
//! sweep's neighbour checks miss all the way to memory.

use super::{BettiError, CHECK_EVERY, Connectivity, Grid, Order};
use crate::control::Control;
use crate::topo::union_find::find;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// The voxels of a sweep in the order they come, one at a time. Ties between voxels of one value
/// are broken by this order: the counts after each whole value do not depend on it.
pub(crate) enum Seq<'a> {
    /// The finite voxels in filtration order; NaN voxels never come.
    Forward(&'a Order),
    /// The NaN voxels, then the others in reverse filtration order.
    Backward(&'a Order),
}

impl Seq<'_> {
    fn len(&self) -> usize {
        match self {
            Seq::Forward(o) => o.starts[o.groups()],
            Seq::Backward(o) => o.voxels.len(),
        }
    }

    #[inline(always)]
    fn get(&self, t: usize) -> u32 {
        match self {
            Seq::Forward(o) => o.voxels[t],
            Seq::Backward(o) => {
                let (finite, nan) = (o.starts[o.groups()], o.absent().len());
                if t < nan { o.voxels[finite + t] } else { o.voxels[finite - 1 - (t - nan)] }
            }
        }
    }
}

/// What a sweep counts: the voxels' order, the connectivity, and whether one extra node stands
/// for the space around the box (in from the start, joined to every voxel on the box's boundary).
pub(crate) struct Sweep<'a> {
    pub(crate) grid: &'a Grid,
    pub(crate) seq: Seq<'a>,
    pub(crate) conn: Connectivity,
    pub(crate) around: bool,
}

/// A time no voxel reaches: never added.
const NEVER: u32 = u32::MAX;

/// A merge left to the last pass: when the voxel at `time` came, between face voxels `a` and `b`
/// (numbered as in [`Cuts::id`]).
#[derive(Clone, Copy, Debug)]
struct Edge {
    time: u32,
    a: u32,
    b: u32,
}

/// How the grid is cut: `bounds[s]..bounds[s + 1]` are slab `s`'s voxels, whole planes.
struct Cuts {
    plane: usize,
    /// The plane's size along x and y (y is 1 in 2D).
    plane_dims: [usize; 2],
    bounds: Vec<usize>,
    /// The slab of each plane.
    slab_of_plane: Vec<u32>,
}

impl Cuts {
    fn new(grid: &Grid, slabs: usize) -> Cuts {
        let plane = if grid.three_d { grid.n[0] * grid.n[1] } else { grid.n[0] };
        let plane_dims = if grid.three_d { [grid.n[0], grid.n[1]] } else { [grid.n[0], 1] };
        let planes = grid.len() / plane.max(1);
        // Slabs of at least two planes, so that no plane faces two cuts.
        let slabs = slabs.clamp(1, (planes / 2).max(1));
        let bounds: Vec<usize> = (0..=slabs).map(|s| s * planes / slabs * plane).collect();
        let slab_of_plane = (0..slabs)
            .flat_map(|s| std::iter::repeat_n(s as u32, (bounds[s + 1] - bounds[s]) / plane))
            .collect();
        Cuts { plane, plane_dims, bounds, slab_of_plane }
    }

    fn slabs(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The number of face voxels: two planes per cut, then the node around the box.
    fn faces(&self) -> usize {
        (self.slabs() - 1) * 2 * self.plane + 1
    }

    fn around(&self) -> u32 {
        (self.faces() - 1) as u32
    }

    /// The number of slab `s`'s local node `l` (its voxel `lo + l`, or `len` for the node around
    /// the box) among the face voxels, if it is one.
    #[inline(always)]
    fn id(&self, s: usize, len: usize, l: usize) -> Option<u32> {
        let p = self.plane;
        if l == len {
            Some(self.around())
        } else if s > 0 && l < p {
            Some(((s - 1) * 2 * p + p + l) as u32)
        } else if s + 1 < self.slabs() && l >= len - p {
            Some((s * 2 * p + l - (len - p)) as u32)
        } else {
            None
        }
    }
}

/// The merges when each voxel of `sweep` came, cutting the grid into (at most) `slabs` slabs.
/// Progress: one tick per voxel.
pub(crate) fn merges(sweep: &Sweep, slabs: usize, ctl: &Control) -> Result<Vec<u8>, BettiError> {
    let cuts = Cuts::new(sweep.grid, slabs);
    let times = bucket(sweep, &cuts);
    // At most one per neighbour, and the node around: 27.
    let merges: Vec<AtomicU8> = (0..sweep.seq.len()).map(|_| AtomicU8::new(0)).collect();
    let slabs: Vec<Slab> = (0..cuts.slabs())
        .into_par_iter()
        .map(|s| grow_slab(sweep, &cuts, s, times.iter().flat_map(|chunk| &chunk[s]), &merges, ctl))
        .collect::<Result<_, _>>()?;
    let mut merges: Vec<u8> = merges.into_iter().map(AtomicU8::into_inner).collect();
    join_faces(sweep, &cuts, &slabs, &mut merges, ctl)?;
    Ok(merges)
}

/// The times of each slab's voxels, ascending: chunk by chunk of the sweep (`[chunk][slab]`).
fn bucket(sweep: &Sweep, cuts: &Cuts) -> Vec<Vec<Vec<u32>>> {
    let len = sweep.seq.len();
    let chunk = len.div_ceil(rayon::current_num_threads() * 4).max(1 << 16);
    (0..len.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let mut out = vec![Vec::new(); cuts.slabs()];
            for t in c * chunk..len.min((c + 1) * chunk) {
                let plane = sweep.seq.get(t) as usize / cuts.plane;
                out[cuts.slab_of_plane[plane] as usize].push(t as u32);
            }
            out
        })
        .collect()
}

/// What a slab leaves to the last pass: its undecided merges and when its face voxels came.
struct Slab {
    edges: Vec<Edge>,
    /// The time at which each voxel of the slab's first plane came (empty for the first slab).
    first: Vec<u32>,
    /// The same for its last plane (empty for the last slab).
    last: Vec<u32>,
}

fn grow_slab<'t>(
    sweep: &Sweep,
    cuts: &Cuts,
    s: usize,
    times: impl Iterator<Item = &'t u32>,
    merges: &[AtomicU8],
    ctl: &Control,
) -> Result<Slab, BettiError> {
    let (lo, hi) = (cuts.bounds[s], cuts.bounds[s + 1]);
    let len = hi - lo;
    let p = cuts.plane;
    let offsets = sweep.grid.offsets(sweep.conn);
    let mut uf = SlabForest { parent: vec![NEVER; len + 1], added: vec![false; len + 1], cuts, s, len };
    if sweep.around {
        uf.parent[len] = len as u32;
        uf.added[len] = true;
    }
    let mut first = if s > 0 { vec![NEVER; p] } else { Vec::new() };
    let mut last = if s + 1 < cuts.slabs() { vec![NEVER; p] } else { Vec::new() };
    let mut edges = Vec::new();
    let mut since = 0usize;
    for &t in times {
        let i = sweep.seq.get(t as usize) as usize;
        let l = i - lo;
        uf.parent[l] = l as u32;
        uf.added[l] = true;
        let mut merged = 0u8;
        let mut join = |uf: &mut SlabForest, b: usize| match uf.union(l, b) {
            Union::Same => {}
            Union::Merged => merged += 1,
            Union::Undecided(a, b) => edges.push(Edge { time: t, a, b }),
        };
        let boundary = sweep.grid.neighbours(i, &offsets, |j| {
            let m = j.wrapping_sub(lo);
            if m < len && uf.added[m] {
                join(&mut uf, m);
            }
        });
        if boundary && sweep.around {
            join(&mut uf, len);
        }
        if merged > 0 {
            merges[t as usize].store(merged, Relaxed);
        }
        if l < first.len() {
            first[l] = t;
        }
        if !last.is_empty() && l >= len - p {
            last[l - (len - p)] = t;
        }
        since += 1;
        if since == CHECK_EVERY {
            ctl.check()?;
            ctl.tick(since as u64);
            since = 0;
        }
    }
    ctl.tick(since as u64);
    Ok(Slab { edges, first, last })
}

/// One slab's union-find: its voxels `0..len` (local numbers) and the node around the box, `len`.
/// A component that reaches a cut face has a face voxel (or the node around) as its root.
struct SlabForest<'c> {
    parent: Vec<u32>,
    /// Whether each node is in: a quarter of `parent`'s bytes, so that the neighbour checks that
    /// find nothing (most of them) stay in cache longer.
    added: Vec<bool>,
    cuts: &'c Cuts,
    s: usize,
    len: usize,
}

enum Union {
    Same,
    /// Two components merged that no other slab can have joined.
    Merged,
    /// Two components merged that both reach a face: these face voxels, for the last pass.
    Undecided(u32, u32),
}

impl SlabForest<'_> {
    #[inline(always)]
    fn union(&mut self, a: usize, b: usize) -> Union {
        let (ra, rb) = (find(&mut self.parent, a), find(&mut self.parent, b));
        if ra == rb {
            return Union::Same;
        }
        match (self.cuts.id(self.s, self.len, ra), self.cuts.id(self.s, self.len, rb)) {
            (Some(fa), Some(fb)) => {
                self.parent[rb] = ra as u32;
                Union::Undecided(fa, fb)
            }
            (Some(_), None) => {
                self.parent[rb] = ra as u32;
                Union::Merged
            }
            (None, Some(_)) => {
                self.parent[ra] = rb as u32;
                Union::Merged
            }
            (None, None) => {
                // The larger index becomes the root: deterministic and as good as any on grids.
                let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
                self.parent[lo] = hi as u32;
                Union::Merged
            }
        }
    }
}

/// The last pass: Kruskal over the slabs' undecided merges and the edges across the cuts, in
/// time order, adding its merges to `merges`.
fn join_faces(
    sweep: &Sweep,
    cuts: &Cuts,
    slabs: &[Slab],
    merges: &mut [u8],
    ctl: &Control,
) -> Result<(), BettiError> {
    if cuts.slabs() == 1 {
        return Ok(());
    }
    let mut edges: Vec<Edge> = slabs.iter().flat_map(|s| s.edges.iter().copied()).collect();
    for c in 0..cuts.slabs() - 1 {
        across(sweep.conn, cuts, c, &slabs[c].last, &slabs[c + 1].first, &mut edges);
    }
    edges.par_sort_unstable_by_key(|e| e.time);
    let mut parent: Vec<u32> = (0..cuts.faces() as u32).collect();
    for (k, e) in edges.into_iter().enumerate() {
        if k % CHECK_EVERY == 0 {
            ctl.check()?;
        }
        let (ra, rb) = (find(&mut parent, e.a as usize), find(&mut parent, e.b as usize));
        if ra != rb {
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            parent[lo] = hi as u32;
            merges[e.time as usize] += 1;
        }
    }
    Ok(())
}

/// The edges across cut `c`, from its lower plane (`below`: each voxel's time) to its upper one
/// (`above`), less those a voxel next to both ends makes redundant.
fn across(conn: Connectivity, cuts: &Cuts, c: usize, below: &[u32], above: &[u32], edges: &mut Vec<Edge>) {
    let [nx, ny] = cuts.plane_dims;
    let p = cuts.plane;
    let (id_below, id_above) = ((c * 2 * p) as u32, (c * 2 * p + p) as u32);
    let reach: isize = if conn == Connectivity::Full { 1 } else { 0 };
    let ys: &[isize] = if ny > 1 { &[-1, 0, 1] } else { &[0] };
    for y in 0..ny {
        for x in 0..nx {
            let u = x + nx * y;
            let tu = below[u];
            if tu == NEVER {
                continue;
            }
            for &dy in ys.iter().filter(|d| d.abs() <= reach) {
                for dx in -reach..=reach {
                    let (vx, vy) = (x as isize + dx, y as isize + dy);
                    if vx < 0 || vy < 0 || vx >= nx as isize || vy >= ny as isize {
                        continue;
                    }
                    let v = vx as usize + nx * vy as usize;
                    let tv = above[v];
                    if tv == NEVER {
                        continue;
                    }
                    let time = tu.max(tv);
                    // A voxel in the box spanned by u and v (other than they) is a neighbour of
                    // both; if it comes no later than the edge, the edge closes a cycle it tops.
                    let mut redundant = false;
                    for ey in [0, dy] {
                        for ex in [0, dx] {
                            let w = (x as isize + ex) as usize + nx * (y as isize + ey) as usize;
                            if (ex, ey) != (0, 0) && below[w] <= time {
                                redundant = true;
                            }
                            if (ex, ey) != (dx, dy) && above[w] <= time {
                                redundant = true;
                            }
                        }
                    }
                    if !redundant {
                        edges.push(Edge { time, a: id_below + u as u32, b: id_above + v as u32 });
                    }
                }
            }
        }
    }
}
