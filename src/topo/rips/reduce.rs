//! The reductions: dimension 0 by union-find over the edges, then, per dimension, Ripser's
//! implicit reduction of the coboundary matrix: columns (simplices) from the latest to enter
//! down, each column's coboundary summed in a [`Column`], pivots (the earliest cofacet) looked up
//! among those already paired; a column whose first cofacet of equal diameter is no pivot yet
//! pairs at once (an emergent pair), and simplices that are pivots of the dimension below are
//! never columns (clearing).
//!
//! Apparent pairs first, on all cores (Ripser++'s idea, on the CPU): a column whose earliest
//! cofacet has it as youngest facet, at the same diameter, pairs with that cofacet whatever
//! the other columns do; no column reduced before it can hold that cofacet (it is the first
//! column whose coboundary has it), so all of them enter the pivots before the reduction of
//! the rest. In dense data most columns are apparent. In the highest dimension, where no
//! pivot clears anything, they are not even listed (Ripser 1.2's way): a pivot that no
//! column has is tested for an apparent facet when it turns up, and that facet's coboundary
//! added.
//!
//! The rest are reduced chunk by chunk (after giotto-ph's parallel reduction, in a simpler
//! form): a chunk's columns first on all cores against the columns paired before it, then
//! finished in order against each other.

use super::column::{Column, sum_mod2};
use super::index::{Coboundary, Complex, Entry};
use super::{Bar, RipsError, apparent};
use crate::control::Control;
use rayon::prelude::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Simplex numbers hashed by one multiplication (they are spread already; SipHash's
/// resistance to chosen keys buys nothing here and costs most of a lookup).
#[derive(Default)]
pub struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Cofacet (pivot) number to the column that has it as pivot.
pub type Pivots = HashMap<u64, usize, BuildHasherDefault<IndexHasher>>;

/// Columns in reduction order: the latest to enter first, ties by smaller number.
fn sort_columns(c: &mut [Entry]) {
    use rayon::slice::ParallelSliceMut;
    c.par_sort_unstable_by(|a, b| b.diameter.total_cmp(&a.diameter).then(a.index.cmp(&b.index)));
}

/// Dimension 0: components merge along the edges in order of length (union-find); every
/// merge at a positive radius ends a bar. Returns the dimension-1 columns (the edges that
/// merged nothing) and every edge within the threshold.
pub fn dim0(c: &Complex, bars: &mut Vec<Bar>) -> (Vec<Entry>, Vec<Entry>) {
    use rayon::prelude::*;
    let n = c.d.len();
    // Rows of the lower triangle on all cores (Ripser++'s filtration construction), in order.
    let row = |i: usize| -> Vec<Entry> {
        let edge = |j: usize, diameter: f32| Entry { diameter, index: (i * (i - 1) / 2 + j) as u64 };
        match c.neighbors {
            Some(nb) => {
                nb.of(i).iter().take_while(|e| (e.0 as usize) < i).map(|e| edge(e.0 as usize, e.1)).collect()
            }
            None => {
                let row = c.d.row(i).iter().enumerate();
                row.map(|(j, &x)| edge(j, x)).filter(|e| e.diameter <= c.threshold).collect()
            }
        }
    };
    let mut edges: Vec<Entry> = (1..n).into_par_iter().flat_map_iter(row).collect();
    edges.par_sort_unstable_by(|a, b| a.diameter.total_cmp(&b.diameter).then(b.index.cmp(&a.index)));
    let mut parent: Vec<usize> = (0..n).collect();
    let find = |parent: &mut Vec<usize>, mut x: usize| {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    };
    let mut columns = Vec::new();
    for e in &edges {
        let (i, j) = super::row_col(e.index as usize);
        let (a, b) = (find(&mut parent, i), find(&mut parent, j));
        if a != b {
            parent[a.max(b)] = a.min(b);
            if e.diameter > 0.0 {
                // All vertices enter at 0: the class of the younger root (the larger index)
                // dies, killed by this edge.
                let creator = a.max(b) as u64;
                bars.push(Bar { dim: 0, birth: 0.0, death: e.diameter, creator, killer: Some(e.index) });
            }
        } else {
            columns.push(*e);
        }
    }
    for x in 0..n {
        if find(&mut parent, x) == x {
            bars.push(Bar { dim: 0, birth: 0.0, death: f32::INFINITY, creator: x as u64, killer: None });
        }
    }
    sort_columns(&mut columns);
    (columns, edges)
}

/// A column is compacted once it holds this many entries, and then twice what was left.
const COMPACT_FROM: usize = 1 << 14;

/// The columns' reduction matrix V (without its diagonal): column i is
/// `entries[starts[i]..ends[i]]` (empty for apparent columns).
struct Reduction {
    starts: Vec<usize>,
    ends: Vec<usize>,
    entries: Vec<Entry>,
}

/// Adds the coboundary of `s` (cofacets within the threshold) to `column`.
fn push_coboundary(c: &Complex, dim: usize, s: Entry, vertices: &mut Vec<usize>, column: &mut Column) {
    c.table.vertices(s.index, dim, c.d.len(), vertices);
    let mut cob = Coboundary::new(c, s, vertices);
    while cob.has_next(true) {
        let e = cob.next_entry();
        if e.diameter <= c.threshold {
            column.push(e);
        }
    }
}

/// How a dimension's apparent pairs are paired.
pub enum Apparent<'a, 'f> {
    /// Found among the columns by the finder and entered in the pivots, where they clear
    /// the next dimension's columns.
    Found(&'a mut super::ApparentFinder<'f>),
    /// Left out of the columns when they were listed ([`next_columns`]); a pivot that no
    /// column has is tested for an apparent facet as it turns up.
    LeftOut,
}

/// Reduces the columns of dimension `dim` (in their order) and adds their bars; returns the
/// pivots found (cofacet number to column), which clear the next dimension's columns.
///
/// Chunk by chunk, each chunk's columns first reduced on all cores by the columns paired
/// before the chunk, then finished in order: a column's pivot depends only on the columns
/// before it, so the pairs are those of the sequential reduction.
pub fn reduce(
    c: &Complex,
    dim: usize,
    columns: &[Entry],
    bars: &mut Vec<Bar>,
    apparent: Apparent,
    ctl: &Control,
) -> Result<Pivots, RipsError> {
    let mut pivots = Pivots::default();
    let r = Reducer { c, dim, columns, on_the_fly: matches!(apparent, Apparent::LeftOut) };
    let todo: Vec<usize> = match apparent {
        Apparent::LeftOut => (0..columns.len()).collect(),
        Apparent::Found(finder) => {
            let found = finder(&super::Columns { complex: c, dim, columns })?;
            if found.len() != columns.len() {
                return Err(RipsError::Invalid(format!(
                    "{} apparent pairs were found for {} columns",
                    found.len(),
                    columns.len()
                )));
            }
            pivots.reserve(columns.len());
            for (i, t) in found.iter().enumerate() {
                if let Some(t) = t {
                    pivots.insert(t.index, i);
                }
            }
            ctl.tick(found.iter().filter(|a| a.is_some()).count() as u64);
            (0..columns.len()).filter(|&i| found[i].is_none()).collect()
        }
    };
    let mut v =
        Reduction { starts: vec![0; columns.len()], ends: vec![0; columns.len()], entries: Vec::new() };
    let mut scratch = Vec::with_capacity(dim + 2);
    for part in todo.chunks(CHUNK_PER_THREAD * rayon::current_num_threads()) {
        ctl.check()?;
        // On all cores: each column reduced by the columns paired before this chunk.
        let started: Vec<Working> = part
            .par_iter()
            .map_init(|| Vec::with_capacity(dim + 2), |sc, &i| r.start(i, &pivots, &v, sc))
            .collect();
        // In order: each finished with the columns of the chunk before it, then paired.
        for (mut w, &i) in started.into_iter().zip(part) {
            let col = columns[i];
            if w.shortcut && w.pivot.is_some_and(|p| pivots.contains_key(&p.index)) {
                // The emergent pair was taken by a column of this chunk: the whole coboundary.
                w.shortcut = false;
                push_coboundary(c, dim, col, &mut scratch, &mut w.column);
                w.pivot = w.column.pivot();
            }
            r.add_known(&mut w, &pivots, &v, &mut scratch);
            v.starts[i] = v.entries.len();
            let Some(p) = w.pivot else {
                bars.push(Bar {
                    dim,
                    birth: col.diameter,
                    death: f32::INFINITY,
                    creator: col.index,
                    killer: None,
                });
                v.ends[i] = v.starts[i];
                continue;
            };
            if p.diameter > col.diameter {
                let (birth, death) = (col.diameter, p.diameter);
                bars.push(Bar { dim, birth, death, creator: col.index, killer: Some(p.index) });
            }
            pivots.insert(p.index, i);
            // Column i of V: what was added, equal entries cancelling in pairs.
            sum_mod2(&mut w.added, |e| e.index);
            v.entries.extend_from_slice(&w.added);
            v.ends[i] = v.entries.len();
        }
        ctl.tick(part.len() as u64);
    }
    Ok(pivots)
}

/// Columns a thread starts reducing per chunk: enough to keep the cores busy, few enough
/// that columns rarely meet one of their own chunk's pivots (those are finished in order).
const CHUNK_PER_THREAD: usize = 64;

/// A column part way through its reduction: its coboundary with the columns added so far (a
/// [`Column`]), what was added, the pivot (None: the column is zero), and whether the pivot is an
/// emergent pair taken before the rest of the coboundary was summed.
struct Working {
    column: Column,
    added: Vec<Entry>,
    pivot: Option<Entry>,
    shortcut: bool,
}

/// One dimension's reduction: its columns, and whether apparent pivots are looked for as
/// they turn up ([`Apparent::LeftOut`]).
struct Reducer<'a> {
    c: &'a Complex<'a>,
    dim: usize,
    columns: &'a [Entry],
    on_the_fly: bool,
}

impl Reducer<'_> {
    /// Column `i`'s coboundary, stopping at the first cofacet of the column's own diameter
    /// when no column has it as pivot yet (the column pairs with it as it stands), reduced by
    /// the columns of `pivots`.
    fn start(&self, i: usize, pivots: &Pivots, v: &Reduction, scratch: &mut Vec<usize>) -> Working {
        let (c, dim) = (self.c, self.dim);
        let col = self.columns[i];
        let mut vertices = Vec::with_capacity(dim + 1);
        c.table.vertices(col.index, dim, c.d.len(), &mut vertices);
        let mut w = Working { column: Column::default(), added: Vec::new(), pivot: None, shortcut: false };
        let mut check_emergent = true;
        let mut cofacets = Vec::new();
        let mut cob = Coboundary::new(c, col, &vertices);
        while cob.has_next(true) {
            let (e, added) = cob.next_cofacet();
            if e.diameter > c.threshold {
                continue;
            }
            cofacets.push(e);
            if check_emergent && e.diameter == col.diameter {
                if !pivots.contains_key(&e.index) && !self.apparent_pivot(&vertices, added, e) {
                    w.pivot = Some(e);
                    w.shortcut = true;
                    return w;
                }
                check_emergent = false;
            }
        }
        for &e in &cofacets {
            w.column.push(e);
        }
        w.pivot = w.column.pivot();
        self.add_known(&mut w, pivots, v, scratch);
        w
    }

    /// Whether cofacet `e`, the simplex `vertices` with `added`, is the pivot of a left-out
    /// apparent pair.
    fn apparent_pivot(&self, vertices: &[usize], added: usize, e: Entry) -> bool {
        if !self.on_the_fly {
            return false;
        }
        let mut us = [0; super::MAX_DIM + 2];
        let k = apparent::with_vertex(vertices, added, &mut us);
        apparent::facet_of_vertices(self.c, &us[..k], e.diameter).is_some()
    }

    /// Adds to `w` the columns of `pivots` (their simplices and their reductions), and the
    /// left-out apparent columns, while its pivot is one of theirs.
    fn add_known(&self, w: &mut Working, pivots: &Pivots, v: &Reduction, scratch: &mut Vec<usize>) {
        let (c, dim) = (self.c, self.dim);
        let mut at = COMPACT_FROM;
        while let Some(p) = w.pivot {
            if let Some(&j) = pivots.get(&p.index) {
                w.added.push(self.columns[j]);
                push_coboundary(c, dim, self.columns[j], scratch, &mut w.column);
                for &s in &v.entries[v.starts[j]..v.ends[j]] {
                    w.added.push(s);
                    push_coboundary(c, dim, s, scratch, &mut w.column);
                }
            } else if let Some(f) = self.on_the_fly.then(|| apparent::facet(c, p, dim + 1)).flatten() {
                // An apparent column's reduced column is its coboundary.
                w.added.push(f);
                push_coboundary(c, dim, f, scratch, &mut w.column);
            } else {
                return;
            }
            if w.column.held() >= at {
                w.column.compact();
                at = (2 * w.column.held()).max(COMPACT_FROM);
            }
            w.pivot = w.column.pivot();
        }
    }
}

/// The columns of dimension `dim + 1`: its simplices within the threshold (each met once,
/// from its facet without the largest vertex) that are no pivot of dimension `dim`; and all
/// those simplices, for the dimension after. When `dim + 1` is the highest (`top`), the
/// simplices are not kept and apparent columns are left out ([`Apparent::LeftOut`]).
pub fn next_columns(
    c: &Complex,
    dim: usize,
    simplices: &[Entry],
    pivots: &Pivots,
    top: bool,
    ctl: &Control,
) -> Result<(Vec<Entry>, Vec<Entry>), RipsError> {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    // Chunks of simplices on all cores, their cofacets concatenated in order; the bytes held
    // so far are counted across chunks, to refuse (not swap or be killed) past the budget.
    let held = AtomicU64::new(0);
    let chunk = |part: &[Entry]| -> Result<(Vec<Entry>, Vec<Entry>), RipsError> {
        ctl.check()?;
        let (mut columns, mut next) = (Vec::new(), Vec::new());
        let mut vertices = Vec::with_capacity(dim + 2);
        let mut cofacet = [0; super::MAX_DIM + 2];
        for s in part {
            c.table.vertices(s.index, dim, c.d.len(), &mut vertices);
            cofacet[1..=dim + 1].copy_from_slice(&vertices);
            let mut cob = Coboundary::new(c, *s, &vertices);
            while cob.has_next(false) {
                let (e, added) = cob.next_cofacet();
                if e.diameter <= c.threshold {
                    if !top {
                        next.push(e);
                    }
                    // The added vertex is above the simplex's: the cofacet's vertices are it
                    // and then theirs.
                    cofacet[0] = added;
                    let cleared = pivots.contains_key(&e.index);
                    if !cleared
                        && (!top || apparent::cofacet_vertex(c, &cofacet[..dim + 2], e.diameter).is_none())
                    {
                        columns.push(e);
                    }
                }
            }
        }
        // A column costs its entry, its apparent-pair slot and its pivot's hash slot.
        let bytes = (columns.len() * 48 + next.len() * 16) as u64;
        if held.fetch_add(bytes, Ordering::Relaxed) + bytes > c.budget {
            return Err(RipsError::Invalid(format!(
                "the simplices of dimension {} within the threshold need more than the {:.1} GiB of \
                 memory available: give a smaller threshold or a lower highest dimension",
                dim + 1,
                c.budget as f64 / (1u64 << 30) as f64
            )));
        }
        Ok((columns, next))
    };
    let parts: Vec<(Vec<Entry>, Vec<Entry>)> =
        simplices.par_chunks(super::chunk_for(simplices.len(), 64)).map(chunk).collect::<Result<_, _>>()?;
    let mut columns = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
    let mut next = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
    for (c, n) in parts {
        columns.extend(c);
        next.extend(n);
    }
    sort_columns(&mut columns);
    Ok((columns, next))
}
