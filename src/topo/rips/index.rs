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

    /// `C(v, k)` (0 when `k > v`).
    #[inline(always)]
    pub fn get(&self, v: usize, k: usize) -> u64 {
        debug_assert!(k <= self.k_max);
        self.table[v * (self.k_max + 1) + k]
    }

    /// The largest `v` in `[k - 1, top]` with `C(v, k) <= idx`.
    #[inline]
    fn max_vertex(&self, idx: u64, k: usize, top: usize) -> usize {
        // C(v, k) grows with v: binary search for the last v with C(v, k) <= idx.
        let (mut lo, mut hi) = (k - 1, top);
        while lo < hi {
            let mid = hi - (hi - lo) / 2;
            if self.get(mid, k) <= idx { lo = mid } else { hi = mid - 1 }
        }
        lo
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

/// The cofacets of a simplex, from the one whose added vertex is largest down (Ripser's
/// `simplex_coboundary_enumerator`).
pub struct Coboundary<'a> {
    table: &'a Binomials,
    dist: &'a Distances,
    diameter: f32,
    vertices: &'a [usize],
    idx_below: u64,
    idx_above: u64,
    /// The next vertex to try adding, and the number of simplex vertices above it plus one.
    v: isize,
    k: usize,
}

impl<'a> Coboundary<'a> {
    /// `vertices` are the simplex's (largest first), `simplex` its entry.
    pub fn new(table: &'a Binomials, dist: &'a Distances, simplex: Entry, vertices: &'a [usize]) -> Self {
        Coboundary {
            table,
            dist,
            diameter: simplex.diameter,
            vertices,
            idx_below: simplex.index,
            idx_above: 0,
            v: dist.len() as isize - 1,
            k: vertices.len(),
        }
    }

    /// Whether another cofacet comes; with `all` false, only those whose added vertex is
    /// larger than every vertex of the simplex (each simplex of the next dimension is then
    /// met once, from the facet without its largest vertex).
    #[inline]
    pub fn has_next(&self, all: bool) -> bool {
        self.v >= self.k as isize && (all || self.table.get(self.v as usize, self.k) > self.idx_below)
    }

    /// The next cofacet (call after `has_next`).
    #[inline]
    pub fn next_entry(&mut self) -> Entry {
        // Skip the simplex's own vertices, moving their terms from below to above.
        while self.table.get(self.v as usize, self.k) <= self.idx_below {
            self.idx_below -= self.table.get(self.v as usize, self.k);
            self.idx_above += self.table.get(self.v as usize, self.k + 1);
            self.v -= 1;
            self.k -= 1;
        }
        let v = self.v as usize;
        let diameter = self.vertices.iter().fold(self.diameter, |m, &w| m.max(self.dist.get(v, w)));
        let index = self.idx_above + self.table.get(v, self.k + 1) + self.idx_below;
        self.v -= 1;
        Entry { diameter, index }
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
    }

    #[test]
    fn the_coboundary_holds_every_cofacet_once_with_its_diameter() {
        let pts: Vec<f64> = (0..7).flat_map(|i| [(i * i % 7) as f64, (i * 3 % 5) as f64]).collect();
        let d = Distances::euclidean(&pts, 2, &Default::default()).unwrap();
        let n = d.len();
        let t = Binomials::new(n, 4).unwrap();
        let diam = |vs: &[usize]| {
            let mut m = 0f32;
            for a in vs {
                for b in vs {
                    m = m.max(d.get(*a, *b));
                }
            }
            m
        };
        let mut vs = Vec::new();
        for idx in 0..t.get(n, 2) {
            t.vertices(idx, 1, n, &mut vs);
            let e = Entry { diameter: diam(&vs), index: idx };
            let mut got = Vec::new();
            let mut c = Coboundary::new(&t, &d, e, &vs);
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
            let mut c = Coboundary::new(&t, &d, e, &vs);
            let mut above = 0;
            while c.has_next(false) {
                c.next_entry();
                above += 1;
            }
            assert_eq!(above, n - 1 - vs[0]);
        }
    }
}
