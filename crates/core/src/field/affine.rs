//! 4x4 affine matrices in `f64`, row-major (`m[row][col]`, acting on column vectors): the
//! voxel-to-world transforms of fields, and the 3D view's camera (which re-exports them).

pub type Mat4 = [[f64; 4]; 4];

pub const IDENTITY: Mat4 =
    [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];

pub fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    std::array::from_fn(|r| std::array::from_fn(|c| (0..4).map(|k| a[r][k] * b[k][c]).sum()))
}

/// `m` applied to the point `p` (w = 1), divided by the resulting w.
pub fn transform_point(m: &Mat4, p: [f64; 3]) -> [f64; 3] {
    let v = [p[0], p[1], p[2], 1.0];
    let o: [f64; 4] = std::array::from_fn(|r| (0..4).map(|k| m[r][k] * v[k]).sum());
    [o[0] / o[3], o[1] / o[3], o[2] / o[3]]
}

/// The inverse of `m` by cofactors; None when `m` is singular.
pub fn inverse(m: &Mat4) -> Option<Mat4> {
    // Minor of the 3x3 left after removing row r and column c.
    let minor = |r: usize, c: usize| {
        let rows: Vec<usize> = (0..4).filter(|&i| i != r).collect();
        let cols: Vec<usize> = (0..4).filter(|&j| j != c).collect();
        let a = |i: usize, j: usize| m[rows[i]][cols[j]];
        a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1)) - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
            + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0))
    };
    let cof: Mat4 = std::array::from_fn(|r| {
        std::array::from_fn(|c| if (r + c) % 2 == 0 { minor(r, c) } else { -minor(r, c) })
    });
    let det: f64 = (0..4).map(|c| m[0][c] * cof[0][c]).sum();
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    // The inverse is the transposed cofactor matrix over the determinant.
    Some(std::array::from_fn(|r| std::array::from_fn(|c| cof[c][r] / det)))
}
