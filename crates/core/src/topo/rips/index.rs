//! Simplices by number (the combinatorial number system, as Ripser): the simplex with vertices
//! `v_k > ... > v_1` is `C(v_k, k) + ... + C(v_1, 1)`, so simplices of one dimension are
//! numbered 0 to `C(n, k) - 1` in colexicographic order and never stored. Coboundaries are
//! enumerated from the number alone.

use super::Distances;

/// Binomial coefficients `C(v, k)` for `v` up to `n` and `k` up to `k_max`.
pub struct Binomials {
    k_max: usize,
    table: Vec<u64>,
}

impl Binomials {
    /// None when some `C(v, k)` needed overflows 64 bits.
    pub fn new(n: usize, k_max: usize) -> Option<Binomials> {
        let w = k_max + 1;
        let mut table = vec![0u64; (n + 1) * w];
        for v in 0..=n {
            table[v * w] = 1;
            for k in 1..=k_max.min(v) {
                let a = table[(v - 1) * w + k - 1];
                let b = if k < v { table[(v - 1) * w + k] } else { 0 };
                table[v * w + k] = a.checked_add(b)?;
            }
        }
        Some(Binomials { k_max, table })
    }

    /// The table, `C(v, k)` at `v * width + k`, and its width (`k_max + 1`): for the GPU.
    pub fn raw(&self) -> (&[u64], usize) {
        (&self.table, self.k_max + 1)
    }

    /// `C(v, k)` (0 when `k > v`).
    #[inline(always)]
    pub fn get(&self, v: usize, k: usize) -> u64 {
        debug_assert!(k <= self.k_max);
        self.table[v * (self.k_max + 1) + k]
    }

    /// The largest `v` in `[k - 1, top]` with `C(v, k) <= idx`.
    #[inline]
    fn max_vertex(&self, idx: u64, k: usize, top: usize) -> usize {
        if k == 1 {
            // C(v, 1) = v.
            return (idx as usize).min(top);
        }
        // C(v, k) grows with v and is about (v - (k - 1) / 2)^k / k!: a guess from the root,
        // within a step or two of the answer, then steps (a binary search over thousands of
        // points was a tenth of a reduction's time).
        let fact: f64 = (2..=k).map(|i| i as f64).product();
        let guess = (fact * idx as f64).powf(1.0 / k as f64) + (k - 1) as f64 / 2.0;
        debug_assert!(top + 1 >= k, "a simplex of {k} vertices among {} points", top + 1);
        let mut v = (guess as usize).clamp(k - 1, top.max(k - 1));
        while v > k - 1 && self.get(v, k) > idx {
            v -= 1;
        }
        while v < top && self.get(v + 1, k) <= idx {
            v += 1;
        }
        v
    }

    /// The vertices of simplex `idx` of dimension `dim`, largest first, into `out`; `n` points.
    pub fn vertices(&self, mut idx: u64, dim: usize, n: usize, out: &mut Vec<usize>) {
        out.clear();
        let mut top = n - 1;
        for k in (1..=dim + 1).rev() {
            let v = self.max_vertex(idx, k, top);
            out.push(v);
            idx -= self.get(v, k);
            top = v.saturating_sub(1);
        }
    }

    /// As [`Binomials::vertices`], into a slice of `dim + 1`.
    pub fn vertices_into(&self, mut idx: u64, dim: usize, n: usize, out: &mut [usize]) {
        let mut top = n - 1;
        for (slot, k) in out.iter_mut().zip((1..=dim + 1).rev()) {
            let v = self.max_vertex(idx, k, top);
            *slot = v;
            idx -= self.get(v, k);
            top = v.saturating_sub(1);
        }
    }

    /// The number of the simplex with vertices `vs`, largest first.
    pub fn index_of(&self, vs: &[usize]) -> u64 {
        let k = vs.len();
        vs.iter().enumerate().map(|(i, &v)| self.get(v, k - i)).sum()
    }
}

/// A simplex with its diameter (the radius at which it enters the filtration).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    pub diameter: f32,
    pub index: u64,
}

/// The neighbours of every point within the threshold, by increasing index, with their
/// distances (Ripser's sparse distance matrix): cofacets then come from intersecting the
/// vertices' lists instead of trying every point.
pub struct Neighbors {
    lists: Vec<Vec<(u32, f32)>>,
}

impl Neighbors {
    pub fn new(d: &Distances, threshold: f32) -> Neighbors {
        use rayon::prelude::*;
        let n = d.len();
        // The points before each point from its row of the lower triangle (in order, on all
        // cores), then the points after it from the later rows, which name it.
        let before: Vec<Vec<(u32, f32)>> = (0..n)
            .into_par_iter()
            .map(|i| {
                let row = d.row(i).iter().enumerate();
                row.filter(|e| *e.1 <= threshold).map(|(j, &x)| (j as u32, x)).collect()
            })
            .collect();
        let mut after = vec![0usize; n];
        for &(j, _) in before.iter().flatten() {
            after[j as usize] += 1;
        }
        let mut lists: Vec<Vec<(u32, f32)>> =
            before.iter().zip(&after).map(|(b, &a)| Vec::with_capacity(b.len() + a)).collect();
        for (list, b) in lists.iter_mut().zip(&before) {
            list.extend_from_slice(b);
        }
        for (k, b) in before.iter().enumerate() {
            for &(j, x) in b {
                lists[j as usize].push((k as u32, x));
            }
        }
        Neighbors { lists }
    }

    /// The neighbours of `v`, by increasing index.
    pub fn of(&self, v: usize) -> &[(u32, f32)] {
        &self.lists[v]
    }

    /// The lists end to end (compressed sparse rows, for the GPU): `starts` (one more than the
    /// points) delimits each point's neighbours and their distances.
    pub fn rows(&self) -> (Vec<u64>, Vec<u32>, Vec<f32>) {
        let mut starts = Vec::with_capacity(self.lists.len() + 1);
        starts.push(0u64);
        let all = self.lists.iter().flatten();
        for l in &self.lists {
            starts.push(starts[starts.len() - 1] + l.len() as u64);
        }
        (starts, all.clone().map(|e| e.0).collect(), all.map(|e| e.1).collect())
    }
}

/// The Rips complex up to a threshold: the distances, the numbering, and (when the threshold
/// leaves out enough edges to pay) the neighbour lists.
pub struct Complex<'a> {
    pub d: &'a Distances,
    pub table: &'a Binomials,
    pub threshold: f32,
    pub neighbors: Option<&'a Neighbors>,
    /// The whole distance matrix, row by row, when the complex is dense and small enough
    /// ([`SQUARE_MOST_POINTS`]): [`cofacets_within`] reads it along rows.
    pub square: Option<&'a [f32]>,
    /// The shortest edge within the threshold: no simplex above dimension 0 is shorter, so
    /// a column's keys need only the diameters from it to the threshold ([`Column`]).
    ///
    /// [`Column`]: super::column::Column
    pub shortest: f32,
    /// Bytes the columns and simplices of one dimension may take (the memory available).
    pub budget: u64,
}

/// The most points for which a dense complex keeps the whole matrix beside the lower triangle
/// (16 MiB).
pub const SQUARE_MOST_POINTS: usize = 2048;

/// The most vertices of a simplex whose cofacets are enumerated.
const MAX_VERTICES: usize = super::MAX_DIM + 1;

/// The cofacets of a simplex, from the one whose added vertex is largest down (Ripser's
/// `simplex_coboundary_enumerator`, dense and sparse), within the threshold.
pub struct Coboundary<'a> {
    c: &'a Complex<'a>,
    diameter: f32,
    vertices: &'a [usize],
    idx_below: u64,
    idx_above: u64,
    /// How many of the simplex's vertices lie above the next vertex tried.
    above: usize,
    /// Dense: the next vertex to try.
    next: isize,
    /// Sparse: per simplex vertex, how many entries of its list are still to be passed (from
    /// the end), and the common neighbour found by `has_next`.
    cursors: [usize; MAX_VERTICES],
    pending: Option<(usize, f32)>,
}

impl<'a> Coboundary<'a> {
    /// `vertices` are the simplex's (largest first), `simplex` its entry.
    pub fn new(c: &'a Complex<'a>, simplex: Entry, vertices: &'a [usize]) -> Self {
        let mut cursors = [0; MAX_VERTICES];
        if let Some(nb) = c.neighbors {
            for (k, &v) in vertices.iter().enumerate() {
                cursors[k] = nb.of(v).len();
            }
        }
        Coboundary {
            c,
            diameter: simplex.diameter,
            vertices,
            idx_below: simplex.index,
            idx_above: 0,
            above: 0,
            next: c.d.len() as isize - 1,
            cursors,
            pending: None,
        }
    }

    /// Whether another cofacet within the threshold comes; with `all` false, only those whose
    /// added vertex is larger than every vertex of the simplex (each simplex of the next
    /// dimension is then met once, from the facet without its largest vertex).
    #[inline]
    pub fn has_next(&mut self, all: bool) -> bool {
        let Some(nb) = self.c.neighbors else {
            // Dense: some vertex below `next` that is not the simplex's (and, without `all`,
            // above all of them).
            let k = self.vertices.len() - self.above;
            return self.next >= k as isize
                && (all || self.c.table.get(self.next as usize, k) > self.idx_below)
                && self.skip_to_dense_cofacet();
        };
        if self.pending.is_some() {
            return true;
        }
        let k = self.vertices.len();
        loop {
            let first = nb.of(self.vertices[0]);
            if self.cursors[0] == 0 {
                return false;
            }
            let (w, dw) = first[self.cursors[0] - 1];
            let w = w as usize;
            if !all && w < self.vertices[0] {
                return false;
            }
            self.cursors[0] -= 1;
            let mut diameter = self.diameter.max(dw);
            let mut common = true;
            for t in 1..k {
                let list = nb.of(self.vertices[t]);
                while self.cursors[t] > 0 && list[self.cursors[t] - 1].0 as usize > w {
                    self.cursors[t] -= 1;
                }
                if self.cursors[t] == 0 {
                    return false;
                }
                let (u, du) = list[self.cursors[t] - 1];
                if u as usize != w {
                    common = false;
                    break;
                }
                diameter = diameter.max(du);
            }
            if common {
                self.pending = Some((w, diameter));
                return true;
            }
        }
    }

    /// Dense: moves `next` past the simplex's own vertices; true when a vertex is left.
    #[inline]
    fn skip_to_dense_cofacet(&mut self) -> bool {
        let table = self.c.table;
        loop {
            let k = self.vertices.len() - self.above;
            if self.next < k as isize {
                return false;
            }
            let v = self.next as usize;
            if table.get(v, k) > self.idx_below {
                return true;
            }
            // `v` is the simplex's next vertex: its term moves from below to above.
            self.idx_below -= table.get(v, k);
            self.idx_above += table.get(v, k + 1);
            self.above += 1;
            self.next -= 1;
        }
    }

    /// The next cofacet (call after `has_next` said there is one). Dense enumeration also
    /// yields cofacets beyond the threshold (the caller skips them); sparse, none.
    #[inline]
    pub fn next_entry(&mut self) -> Entry {
        self.next_cofacet().0
    }

    /// As [`Coboundary::next_entry`], with the vertex the cofacet adds to the simplex.
    #[inline]
    pub fn next_cofacet(&mut self) -> (Entry, usize) {
        let table = self.c.table;
        let n_vertices = self.vertices.len();
        let (w, diameter) = match self.pending.take() {
            Some(p) => {
                // Pass the simplex's vertices above w.
                while self.above < n_vertices && self.vertices[self.above] > p.0 {
                    let (v, k) = (self.vertices[self.above], n_vertices - self.above);
                    self.idx_below -= table.get(v, k);
                    self.idx_above += table.get(v, k + 1);
                    self.above += 1;
                }
                p
            }
            None => {
                let v = self.next as usize;
                self.next -= 1;
                let d = self.c.d;
                (v, self.vertices.iter().fold(self.diameter, |m, &u| m.max(d.get(v, u))))
            }
        };
        let k = n_vertices - self.above;
        (Entry { diameter, index: self.idx_above + table.get(w, k + 1) + self.idx_below }, w)
    }
}

/// Every cofacet of the simplex `s` (vertices largest first) within the threshold, to `f`, as
/// [`Coboundary`] enumerates them. With the whole matrix, the cofacets that add the vertices
/// between two of the simplex's are one run: one column of binomials, and each of the
/// simplex's vertices read along its row (the enumerator reads the lower triangle across rows,
/// a cofacet at a time). A column that sums thousands of coboundaries spends its time here.
pub fn cofacets_within(c: &Complex, s: Entry, vertices: &[usize], mut f: impl FnMut(Entry)) {
    if let (None, Some(square)) = (c.neighbors, c.square) {
        match vertices.len() {
            1 => return dense_runs::<1>(c, square, s, vertices, &mut f),
            2 => return dense_runs::<2>(c, square, s, vertices, &mut f),
            3 => return dense_runs::<3>(c, square, s, vertices, &mut f),
            4 => return dense_runs::<4>(c, square, s, vertices, &mut f),
            _ => {}
        }
    }
    let mut cob = Coboundary::new(c, s, vertices);
    while cob.has_next(true) {
        let e = cob.next_entry();
        if e.diameter <= c.threshold {
            f(e);
        }
    }
}

/// [`cofacets_within`] for a simplex of `K` vertices, with the whole matrix.
fn dense_runs<const K: usize>(
    c: &Complex,
    square: &[f32],
    s: Entry,
    vs: &[usize],
    f: &mut impl FnMut(Entry),
) {
    let n = c.d.len();
    let rows: [&[f32]; K] = std::array::from_fn(|i| &square[vs[i] * n..(vs[i] + 1) * n]);
    let (table, width) = c.table.raw();
    // The cofacet adding v, with `a` of the simplex's vertices above v, is numbered
    // above + C(v, K - a + 1) + below, `above` and `below` the terms of the vertices above
    // and below v (see `Coboundary::next_cofacet`).
    let (mut above, mut below) = (0u64, s.index);
    let mut top = n;
    // The runs end at each of the simplex's vertices, the last at 0.
    for (a, end) in vs.iter().map(Some).chain([None]).enumerate() {
        let bottom = end.map_or(0, |&v| v + 1);
        let k = K - a + 1;
        for v in (bottom..top).rev() {
            let diameter = rows.iter().fold(s.diameter, |m, r| m.max(r[v]));
            if diameter <= c.threshold {
                f(Entry { diameter, index: above + table[v * width + k] + below });
            }
        }
        if let Some(&v) = end {
            below -= table[v * width + k - 1];
            above += table[v * width + k];
            top = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_vertices_invert_each_other_in_colex_order() {
        let n = 9;
        let t = Binomials::new(n, 5).unwrap();
        let mut vs = Vec::new();
        for dim in 0..4 {
            let count = t.get(n, dim + 1);
            let mut last: Option<Vec<usize>> = None;
            for idx in 0..count {
                t.vertices(idx, dim, n, &mut vs);
                assert_eq!(vs.len(), dim + 1);
                assert!(vs.windows(2).all(|w| w[0] > w[1]) && vs[0] < n);
                assert_eq!(t.index_of(&vs), idx);
                // Colex: compared from the largest vertex down, each next simplex is larger.
                if let Some(l) = &last {
                    assert!(l < &vs, "{l:?} then {vs:?}");
                }
                last = Some(vs.clone());
            }
        }
        assert!(Binomials::new(100_000, 5).is_none(), "C(100000, 5) > 2^64");
        // Thousands of points (the vertices found from a guess by floating point, then steps):
        // random numbers, and both ends of each dimension's range.
        let n = 6000;
        let t = Binomials::new(n, 5).unwrap();
        let mut next = crate::synthetic::noise(3);
        for dim in 0..4 {
            let count = t.get(n, dim + 1);
            let ends = [0, 1, count / 2, count - 2, count - 1];
            for idx in ends.into_iter().chain((0..2000).map(|_| next() % count)) {
                t.vertices(idx, dim, n, &mut vs);
                assert!(vs.windows(2).all(|w| w[0] > w[1]) && vs[0] < n, "{idx}: {vs:?}");
                assert_eq!(t.index_of(&vs), idx);
            }
        }
    }

    #[test]
    fn the_coboundary_holds_every_cofacet_once_with_its_diameter() {
        let pts: Vec<f64> = (0..7).flat_map(|i| [(i * i % 7) as f64, (i * 3 % 5) as f64]).collect();
        let d = Distances::euclidean(&pts, 2, &Default::default()).unwrap();
        let n = d.len();
        let t = Binomials::new(n, 4).unwrap();
        let diam = |vs: &[usize]| d.diameter(vs);
        let mut vs = Vec::new();
        let dense = Complex {
            d: &d,
            table: &t,
            threshold: f32::INFINITY,
            neighbors: None,
            square: None,
            shortest: 0.0,
            budget: u64::MAX,
        };
        let nb = Neighbors::new(&d, f32::INFINITY);
        let sparse = Complex { neighbors: Some(&nb), ..dense };
        for cx in [&dense, &sparse] {
            for idx in 0..t.get(n, 2) {
                t.vertices(idx, 1, n, &mut vs);
                let e = Entry { diameter: diam(&vs), index: idx };
                let mut got = Vec::new();
                let mut c = Coboundary::new(cx, e, &vs);
                while c.has_next(true) {
                    got.push(c.next_entry());
                }
                let mut want = Vec::new();
                for w in (0..n).rev().filter(|w| !vs.contains(w)) {
                    let mut f = vs.clone();
                    f.push(w);
                    f.sort_unstable_by(|a, b| b.cmp(a));
                    want.push(Entry { diameter: diam(&f), index: t.index_of(&f) });
                }
                assert_eq!(got, want);
                // Only the cofacets adding a vertex above the simplex's largest.
                let mut c = Coboundary::new(cx, e, &vs);
                let mut above = 0;
                while c.has_next(false) {
                    c.next_entry();
                    above += 1;
                }
                assert_eq!(above, n - 1 - vs[0]);
            }
        }
    }

    /// The runs read along the whole matrix give the enumerator's cofacets within the
    /// threshold, in its order, for every simplex of dimensions 0 to 3.
    #[test]
    fn cofacets_within_are_the_enumerators() {
        let mut next = crate::synthetic::noise(31);
        for round in 0..6 {
            let n = 6 + round;
            // A coarse grid: ties and equal points.
            let pts: Vec<f64> = (0..2 * n).map(|_| (next() % 4) as f64).collect();
            let d = Distances::euclidean(&pts, 2, &Default::default()).unwrap();
            let t = Binomials::new(n, 5).unwrap();
            let square = d.square();
            for threshold in [f32::INFINITY, 2.0, 0.0] {
                let dense = Complex {
                    d: &d,
                    table: &t,
                    threshold,
                    neighbors: None,
                    square: None,
                    shortest: 0.0,
                    budget: u64::MAX,
                };
                let rows = Complex { square: Some(&square), ..dense };
                let mut vs = Vec::new();
                for dim in 0..4 {
                    for idx in 0..t.get(n, dim + 1) {
                        t.vertices(idx, dim, n, &mut vs);
                        let e = Entry { diameter: d.diameter(&vs), index: idx };
                        let mut want = Vec::new();
                        let mut c = Coboundary::new(&dense, e, &vs);
                        while c.has_next(true) {
                            want.push(c.next_entry());
                        }
                        want.retain(|f| f.diameter <= threshold);
                        for cx in [&dense, &rows] {
                            let mut got = Vec::new();
                            cofacets_within(cx, e, &vs, |f| got.push(f));
                            assert_eq!(got, want, "{n} points, dimension {dim}, simplex {idx}");
                        }
                    }
                }
            }
        }
    }
}
