//! Apparent pairs (Ripser++'s; Bauer's "zero apparent pairs" in Ripser 1.2): a simplex `s` and
//! its cofacet `t` of the same diameter such that `t` is the first cofacet of `s` in
//! coboundary order with that diameter (its zero pivot) and `s` the smallest numbered facet of
//! `t` with it. No reduction changes such a pair, and it makes no bar.
//!
//! Both tests work on vertices, not numbers: a cofacet of `s` of the diameter of `s` adds a
//! vertex within that diameter of every vertex of `s`, and coboundary order tries the added
//! vertex from the largest down; the facet of `s + w` that trades `s`'s vertex `v` for `w` is
//! numbered below `s` exactly when `w < v` (colexicographic order).

use super::index::{Complex, Entry};

/// The most vertices of a simplex tested (a cofacet of the highest dimension computed).
const MAX_VERTICES: usize = super::MAX_DIM + 2;

/// Whether `w` is within `diameter` of every vertex of `vs`.
#[inline]
fn joins(c: &Complex, w: usize, vs: &[usize], diameter: f32) -> bool {
    vs.iter().all(|&v| c.d.get(w, v) <= diameter)
}

/// The largest vertex, not one of `vs` (largest first) and not below `floor`, within
/// `diameter` of every vertex of `vs`: the vertex added by the first cofacet of diameter
/// `diameter` in coboundary order. `diameter` is within the complex's threshold (it is a
/// simplex's), so with neighbour lists every candidate is in them.
fn first_joining(c: &Complex, vs: &[usize], diameter: f32, floor: usize) -> Option<usize> {
    match c.neighbors {
        Some(nb) => {
            // The vertices' lists (by increasing index) walked down together, as the sparse
            // coboundary does: a candidate is in every list (a vertex of `vs` is in none of
            // its own), reading lists in order rather than the matrix at random.
            let mut cursors = [0usize; MAX_VERTICES];
            for (k, &v) in vs.iter().enumerate() {
                cursors[k] = nb.of(v).len();
            }
            let first = nb.of(vs[0]);
            'candidates: while cursors[0] > 0 {
                cursors[0] -= 1;
                let (w, dw) = first[cursors[0]];
                let w = w as usize;
                if w < floor {
                    return None;
                }
                if dw > diameter {
                    continue;
                }
                for (t, &v) in vs.iter().enumerate().skip(1) {
                    let list = nb.of(v);
                    while cursors[t] > 0 && list[cursors[t] - 1].0 as usize > w {
                        cursors[t] -= 1;
                    }
                    if cursors[t] == 0 {
                        return None;
                    }
                    let (u, du) = list[cursors[t] - 1];
                    if u as usize != w || du > diameter {
                        continue 'candidates;
                    }
                }
                return Some(w);
            }
            None
        }
        None => {
            let mut own = vs.iter().copied().peekable();
            (floor..c.d.len()).rev().find(|&w| {
                // `vs` is largest first, as the candidates: pass those above `w`.
                while own.next_if(|&v| v > w).is_some() {}
                own.peek() != Some(&w) && joins(c, w, vs, diameter)
            })
        }
    }
}

/// The vertices `vs` with `vs[skip]` left out, into `out`; returns how many.
#[inline]
fn without(vs: &[usize], skip: usize, out: &mut [usize; MAX_VERTICES]) -> usize {
    out[..skip].copy_from_slice(&vs[..skip]);
    out[skip..vs.len() - 1].copy_from_slice(&vs[skip + 1..]);
    vs.len() - 1
}

/// The diameter of the vertices `vs` with `vs[skip]` left out.
#[inline]
fn diameter_without(c: &Complex, vs: &[usize], skip: usize) -> f32 {
    let mut f = [0usize; MAX_VERTICES];
    let k = without(vs, skip, &mut f);
    c.d.diameter(&f[..k])
}

/// `vs` (largest first) with `w` (not among them) put in its place.
#[inline]
pub fn with_vertex(vs: &[usize], w: usize, out: &mut [usize; MAX_VERTICES]) -> usize {
    let at = vs.iter().take_while(|&&v| v > w).count();
    out[..at].copy_from_slice(&vs[..at]);
    out[at] = w;
    out[at + 1..=vs.len()].copy_from_slice(&vs[at..]);
    vs.len() + 1
}

/// The vertex that the apparent cofacet of the simplex `vs` (largest first, of diameter
/// `diameter`) adds, if the simplex has one.
pub fn cofacet_vertex(c: &Complex, vs: &[usize], diameter: f32) -> Option<usize> {
    let w = first_joining(c, vs, diameter, 0)?;
    // Every facet of `vs + w` is within `diameter`: `vs` must be the smallest numbered of
    // those that reach it. Trading `v` for `w` numbers the facet below `vs` when `w < v`.
    let mut tv = [0usize; MAX_VERTICES];
    let k = with_vertex(vs, w, &mut tv);
    let at = vs.iter().take_while(|&&v| v > w).count();
    // The facet leaving out `vs[i]` is `tv` without position `i` (`i < at`: above `w`).
    (0..at).all(|i| diameter_without(c, &tv[..k], i) < diameter).then_some(w)
}

/// The apparent cofacet of simplex `s` of dimension `dim`, if it has one.
pub fn cofacet(c: &Complex, s: Entry, dim: usize) -> Option<Entry> {
    let mut vs = Vec::with_capacity(dim + 1);
    c.table.vertices(s.index, dim, c.d.len(), &mut vs);
    let w = cofacet_vertex(c, &vs, s.diameter)?;
    let mut tv = [0usize; MAX_VERTICES];
    let k = with_vertex(&vs, w, &mut tv);
    Some(Entry { diameter: s.diameter, index: c.table.index_of(&tv[..k]) })
}

/// The apparent facet of the simplex `us` (largest first, of diameter `diameter`), if it has
/// one.
pub fn facet_of_vertices(c: &Complex, us: &[usize], diameter: f32) -> Option<Entry> {
    facet_and_vertices(c, us, diameter, None)
}

/// As [`facet_of_vertices`], with the facet's vertices (largest first) left in `vertices` if
/// given.
fn facet_and_vertices(
    c: &Complex,
    us: &[usize],
    diameter: f32,
    vertices: Option<&mut Vec<usize>>,
) -> Option<Entry> {
    // The smallest numbered facet of the same diameter: leaving out the largest vertex gives
    // the smallest number, then the next largest, and so on.
    let skip = (0..us.len()).find(|&i| diameter_without(c, us, i) == diameter)?;
    let mut f = [0usize; MAX_VERTICES];
    let k = without(us, skip, &mut f);
    // Its first cofacet of this diameter must be `us`: no larger vertex joins it.
    if first_joining(c, &f[..k], diameter, us[skip]) != Some(us[skip]) {
        return None;
    }
    if let Some(vertices) = vertices {
        vertices.clear();
        vertices.extend_from_slice(&f[..k]);
    }
    Some(Entry { diameter, index: c.table.index_of(&f[..k]) })
}

/// The apparent facet of simplex `t` of dimension `dim`, if it has one.
pub fn facet(c: &Complex, t: Entry, dim: usize) -> Option<Entry> {
    facet_of(c, t, dim, None)
}

/// As [`facet`], with the facet's vertices (largest first) left in `vertices` (for its
/// coboundary, without decoding its number again).
pub fn facet_into(c: &Complex, t: Entry, dim: usize, vertices: &mut Vec<usize>) -> Option<Entry> {
    facet_of(c, t, dim, Some(vertices))
}

/// [`facet`] and [`facet_into`]: `t`'s vertices decoded, then its apparent facet's.
fn facet_of(c: &Complex, t: Entry, dim: usize, vertices: Option<&mut Vec<usize>>) -> Option<Entry> {
    let mut us = [0usize; MAX_VERTICES];
    c.table.vertices_into(t.index, dim, c.d.len(), &mut us[..dim + 1]);
    facet_and_vertices(c, &us[..dim + 1], t.diameter, vertices)
}

#[cfg(test)]
mod tests {
    use super::super::index::{Binomials, Coboundary, Neighbors};
    use super::super::{Distances, MAX_DIM};
    use super::*;

    /// The definition, by numbers: the first cofacet of equal diameter in coboundary order,
    /// whose smallest numbered facet of that diameter is `s`.
    fn cofacet_by_definition(c: &Complex, s: Entry, dim: usize) -> Option<Entry> {
        let mut vs = Vec::new();
        c.table.vertices(s.index, dim, c.d.len(), &mut vs);
        let mut cob = Coboundary::new(c, s, &vs);
        let t = loop {
            if !cob.has_next(true) {
                return None;
            }
            let t = cob.next_entry();
            if t.diameter == s.diameter {
                break t;
            }
        };
        let smallest = facets_of_diameter(c, t, dim + 1).into_iter().min();
        (smallest == Some(s.index)).then_some(t)
    }

    fn facets_of_diameter(c: &Complex, t: Entry, dim: usize) -> Vec<u64> {
        let mut tv = Vec::new();
        c.table.vertices(t.index, dim, c.d.len(), &mut tv);
        (0..tv.len())
            .map(|skip| tv.iter().enumerate().filter(|e| e.0 != skip).map(|e| *e.1).collect::<Vec<usize>>())
            .filter(|f| c.d.diameter(f) == t.diameter)
            .map(|f| c.table.index_of(&f))
            .collect()
    }

    #[test]
    fn the_vertex_tests_equal_the_definition_dense_and_sparse() {
        let mut random = crate::synthetic::noise(11);
        let mut pairs = 0;
        for round in 0..12 {
            let n = 6 + round;
            // Coordinates on a coarse grid: ties and equal points.
            let pts: Vec<f64> = (0..2 * n).map(|_| (random() % 4) as f64).collect();
            let d = Distances::euclidean(&pts, 2, &Default::default()).unwrap();
            let table = Binomials::new(n, MAX_DIM + 2).unwrap();
            for threshold in [f32::INFINITY, 2.0] {
                let dense = Complex {
                    d: &d,
                    table: &table,
                    threshold,
                    neighbors: None,
                    square: None,
                    shortest: 0.0,
                    budget: u64::MAX,
                };
                let nb = Neighbors::new(&d, threshold);
                let sparse = Complex { neighbors: Some(&nb), ..dense };
                for c in [&dense, &sparse] {
                    for dim in 0..=MAX_DIM {
                        for index in 0..table.get(n, dim + 1) {
                            let mut vs = Vec::new();
                            table.vertices(index, dim, n, &mut vs);
                            let s = Entry { diameter: c.d.diameter(&vs), index };
                            if s.diameter > threshold {
                                continue;
                            }
                            let want = cofacet_by_definition(c, s, dim);
                            assert_eq!(cofacet(c, s, dim), want, "{vs:?}");
                            pairs += want.is_some() as usize;
                            if let Some(t) = want {
                                assert_eq!(facet(c, t, dim + 1), Some(s));
                            }
                            // A simplex has an apparent facet only as the other half of its pair.
                            if dim > 0 {
                                let f = facet(c, s, dim);
                                if let Some(f) = f {
                                    assert_eq!(cofacet_by_definition(c, f, dim - 1), Some(s));
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(pairs > 1000, "{pairs} apparent pairs met");
    }
}
