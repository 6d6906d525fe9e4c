//! Which way a volume's voxel axes point in the world (RAS+: x to the subject's right, y
//! anterior, z superior), to the closest canonical axes, for the same purpose as nibabel's
//! `io_orientation` and `as_closest_canonical` (its rule orthogonalises first; this one pairs
//! the largest direction cosines, which agrees except near 45 degrees). The viewer shows every volume with an affine in this one
//! convention; analyses keep the data as stored (nothing here resamples).

/// Letters of the positive (R, A, S) and negative (L, P, I) directions of each world axis.
pub const POSITIVE: [char; 3] = ['R', 'A', 'S'];
pub const NEGATIVE: [char; 3] = ['L', 'P', 'I'];

/// For each world axis (R, A, S) the voxel axis closest to it and whether that voxel axis runs
/// the opposite way (towards L, P or I).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Orientation {
    pub voxel_axis: [usize; 3],
    pub flipped: [bool; 3],
}

impl Orientation {
    /// Voxel axes as stored: x along R, y along A, z along S.
    pub const IDENTITY: Orientation = Orientation { voxel_axis: [0, 1, 2], flipped: [false; 3] };

    /// The closest canonical axes of a voxel-to-world `affine` (rows: world x, y, z). Each voxel
    /// axis's direction is normalised by its length (voxel size); the world axis and voxel axis
    /// with the largest |cosine| are paired first, then the largest of what remains, so an oblique
    /// acquisition goes to the axes it is nearest. A degenerate column (zero) pairs last.
    pub fn of(affine: &[[f64; 4]; 4]) -> Orientation {
        let mut cos = [[0.0f64; 3]; 3];
        for c in 0..3 {
            let norm = (0..3).map(|r| affine[r][c] * affine[r][c]).sum::<f64>().sqrt();
            for r in 0..3 {
                cos[r][c] = if norm > 0.0 && norm.is_finite() { affine[r][c] / norm } else { 0.0 };
            }
        }
        let mut o = Orientation::IDENTITY;
        let (mut rows, mut cols) = ([false; 3], [false; 3]);
        for _ in 0..3 {
            let mut best: Option<(usize, usize)> = None;
            for r in (0..3).filter(|&r| !rows[r]) {
                for c in (0..3).filter(|&c| !cols[c]) {
                    // Ties (and NaN) go to the lower axes, so the result never depends on order.
                    if best.is_none_or(|(br, bc)| cos[r][c].abs() > cos[br][bc].abs()) {
                        best = Some((r, c));
                    }
                }
            }
            if let Some((r, c)) = best {
                rows[r] = true;
                cols[c] = true;
                o.voxel_axis[r] = c;
                o.flipped[r] = cos[r][c] < 0.0;
            }
        }
        o
    }

    /// The orientation code of the voxel axes, nibabel's `aff2axcodes`: for voxel x, y, z the
    /// world direction each increases towards ("LAS": x runs to the left).
    pub fn code(&self) -> String {
        let mut letters = ['?'; 3];
        for world in 0..3 {
            let letter = if self.flipped[world] { NEGATIVE[world] } else { POSITIVE[world] };
            letters[self.voxel_axis[world]] = letter;
        }
        letters.iter().collect()
    }

    /// Whether the axes are within a small angle of the world's (one entry per voxel column
    /// dominates): else the display is only the closest canonical approximation.
    pub fn is_oblique(affine: &[[f64; 4]; 4]) -> bool {
        (0..3).any(|c| {
            let col: Vec<f64> = (0..3).map(|r| affine[r][c].abs()).collect();
            let norm = col.iter().map(|v| v * v).sum::<f64>().sqrt();
            let max = col.iter().copied().fold(0.0, f64::max);
            norm > 0.0 && max / norm < 0.9999
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn affine(m: [[f64; 3]; 3]) -> [[f64; 4]; 4] {
        let mut a = [[0.0; 4]; 4];
        for r in 0..3 {
            a[r][..3].copy_from_slice(&m[r]);
        }
        a[3][3] = 1.0;
        a
    }

    #[test]
    fn codes_match_nibabel() {
        // nibabel.aff2axcodes of each: RAS, LAS, and a PIR-like permutation.
        assert_eq!(
            Orientation::of(&affine([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])).code(),
            "RAS"
        );
        let las = Orientation::of(&affine([[-3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]]));
        assert_eq!(las.code(), "LAS");
        assert_eq!(las, Orientation { voxel_axis: [0, 1, 2], flipped: [true, false, false] });
        // Voxel x runs posterior, y inferior, z right.
        let pir = Orientation::of(&affine([[0.0, 0.0, 1.2], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]));
        assert_eq!(pir.code(), "PIR");
        assert_eq!(pir.voxel_axis, [2, 0, 1]);
        assert_eq!(pir.flipped, [false, true, true]);
    }

    /// nibabel's example4d.nii.gz: an oblique affine whose closest axes are LAS.
    #[test]
    fn oblique_goes_to_the_closest_axes() {
        let a = affine([[-2.0, 0.0, 0.0], [0.0, 1.9737, -0.3555], [0.0, 0.3232, 2.1711]]);
        assert_eq!(Orientation::of(&a).code(), "LAS");
        assert!(Orientation::is_oblique(&a));
        assert!(!Orientation::is_oblique(&affine([[-3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]])));
        // A degenerate affine still gives a permutation.
        let o = Orientation::of(&affine([[0.0; 3]; 3]));
        let mut axes = o.voxel_axis;
        axes.sort();
        assert_eq!(axes, [0, 1, 2]);
    }
}
