//! The cubical complex of a grid whose voxels are its **vertices** (the lower-star setting of the
//! Morse-Smale literature), addressed on the doubled grid: vertex (x, y, z) is the cell at
//! (2x, 2y, 2z), and a cell's dimension is its number of odd coordinates. Unused axes have one
//! coordinate, 0.

/// Cell id = cx + CX * (cy + CY * cz) on the doubled grid.
pub type Cell = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellGrid {
    /// Vertices per axis (the field's dims).
    pub vdims: [usize; 3],
    /// Cells per axis: 2n - 1.
    pub cdims: [usize; 3],
    pub ndim: usize,
}

impl CellGrid {
    pub fn new(vdims: [usize; 3], ndim: usize) -> Self {
        CellGrid { vdims, cdims: vdims.map(|n| 2 * n - 1), ndim }
    }

    pub fn n_cells(&self) -> usize {
        self.cdims.iter().product()
    }

    #[inline]
    pub fn coords(&self, c: Cell) -> [usize; 3] {
        let [cx, cy, _] = self.cdims;
        [c % cx, (c / cx) % cy, c / (cx * cy)]
    }

    #[inline]
    pub fn id(&self, p: [usize; 3]) -> Cell {
        p[0] + self.cdims[0] * (p[1] + self.cdims[1] * p[2])
    }

    #[inline]
    pub fn dim(&self, c: Cell) -> usize {
        self.coords(c).iter().filter(|&&x| x % 2 == 1).count()
    }

    /// The cell of vertex (voxel) `v` (linear voxel index).
    #[inline]
    pub fn vertex_cell(&self, v: usize) -> Cell {
        let [nx, ny, _] = self.vdims;
        self.id([2 * (v % nx), 2 * ((v / nx) % ny), 2 * (v / (nx * ny))])
    }

    /// The voxel index of a vertex cell.
    #[inline]
    pub fn cell_vertex(&self, c: Cell) -> usize {
        let p = self.coords(c);
        p[0] / 2 + self.vdims[0] * (p[1] / 2 + self.vdims[1] * (p[2] / 2))
    }

    /// Top cells per axis (the dual grid: one fewer than the vertices along each used axis, 1
    /// along an unused one).
    pub fn dual_dims(&self) -> [usize; 3] {
        std::array::from_fn(|a| if a < self.ndim { self.vdims[a] - 1 } else { 1 })
    }

    /// The index on the dual grid of the top cell `c` (x fastest).
    #[inline]
    pub fn dual_index(&self, c: Cell) -> usize {
        let [dx, dy, _] = self.dual_dims();
        let p = self.coords(c);
        let q: [usize; 3] = std::array::from_fn(|a| if a < self.ndim { p[a] / 2 } else { 0 });
        q[0] + dx * (q[1] + dy * q[2])
    }

    /// Step from `c` by `sign` (+1 or -1) along `axis`, if it stays on the grid.
    #[inline]
    pub fn step(&self, c: Cell, axis: usize, sign: i8) -> Option<Cell> {
        let p = self.coords(c);
        let stride = [1, self.cdims[0], self.cdims[0] * self.cdims[1]][axis];
        if sign > 0 {
            (p[axis] + 1 < self.cdims[axis]).then(|| c + stride)
        } else {
            (p[axis] > 0).then(|| c - stride)
        }
    }

    /// Facets of `c` (one step along each odd axis, both ways).
    pub fn facets(&self, c: Cell) -> impl Iterator<Item = Cell> + '_ {
        let p = self.coords(c);
        (0..3)
            .filter(move |&a| p[a] % 2 == 1)
            .flat_map(move |a| [-1i8, 1].map(|s| self.step(c, a, s)))
            .flatten()
    }

    /// Cofacets of `c` (one step along each even axis, both ways, inside the grid).
    pub fn cofacets(&self, c: Cell) -> impl Iterator<Item = Cell> + '_ {
        let p = self.coords(c);
        (0..self.ndim)
            .filter(move |&a| p[a].is_multiple_of(2))
            .flat_map(move |a| [-1i8, 1].map(|s| self.step(c, a, s)))
            .flatten()
    }

    /// Voxel indices of the corners of `c`.
    pub fn corners(&self, c: Cell) -> impl Iterator<Item = usize> + '_ {
        let p = self.coords(c);
        let odd: Vec<usize> = (0..3).filter(|&a| p[a] % 2 == 1).collect();
        (0..1usize << odd.len()).map(move |m| {
            let mut q = p;
            for (i, &a) in odd.iter().enumerate() {
                q[a] = if m >> i & 1 == 1 { q[a] + 1 } else { q[a] - 1 };
            }
            q[0] / 2 + self.vdims[0] * (q[1] / 2 + self.vdims[1] * (q[2] / 2))
        })
    }
}
