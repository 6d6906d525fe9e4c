//! Point clouds taken from an image, in its world coordinates (the affine, else the spacing),
//! for Rips persistence of what the image holds: the critical points of its Morse-Smale
//! complex, voxels of a threshold set, or the centroids of the set's components.

use crate::control::Control;
use crate::field::{Sample, ScalarField};
use crate::topo::betti::parts::parts;
use crate::topo::ecc::{Construction, Filtration};
use crate::topo::msc::{self, simplified::Simplified};

/// Points of `dim` coordinates (the image's dimension), row after row.
#[derive(Clone, Debug, PartialEq)]
pub struct Points {
    pub coords: Vec<f64>,
    pub dim: usize,
}

impl Points {
    fn of(field: &ScalarField, positions: impl IntoIterator<Item = [f64; 3]>) -> Points {
        // World coordinates are 3D when the file has an affine (a coronal 2D slice lies in x
        // and z); a constant coordinate changes no distance.
        let dim = if field.affine.is_some() { 3 } else { field.ndim().max(1) };
        let coords = positions.into_iter().flat_map(|p| field.world(p).into_iter().take(dim)).collect();
        Points { coords, dim }
    }

    pub fn len(&self) -> usize {
        self.coords.len() / self.dim
    }

    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImagePointsError {
    #[error(transparent)]
    Msc(#[from] msc::MscError),
    #[error(transparent)]
    Betti(#[from] crate::topo::betti::BettiError),
}

/// The critical points of the complex simplified up to persistence `threshold` (None: all),
/// of Morse index `index` only when given, at their cells' centres.
pub fn critical_points(
    field: &ScalarField,
    index: Option<u8>,
    threshold: Option<f64>,
    ctl: &Control,
) -> Result<Points, ImagePointsError> {
    let analysis = msc::analyse(field, ctl)?;
    let s = Simplified::new(field, &analysis, threshold);
    let positions =
        s.live_points().filter(|(_, c)| index.is_none_or(|k| c.index == k)).map(|(_, c)| c.position);
    Ok(Points::of(field, positions))
}

/// Up to `count` voxels of the threshold set `{f <= level}` (`{f >= level}` superlevel),
/// chosen uniformly at random with `seed` (every voxel when the set has no more), in storage
/// order.
pub fn set_voxels(
    field: &ScalarField,
    level: f64,
    filtration: Filtration,
    count: usize,
    seed: u64,
) -> Points {
    let sup = filtration == Filtration::Superlevel;
    let inside = |x: f64| if sup { x >= level } else { x <= level };
    // Reservoir sampling (Vitter's algorithm R): one pass, `count` indices held.
    let mut rng = SplitMix(seed);
    let mut kept: Vec<usize> = Vec::with_capacity(count.min(1 << 20));
    let mut seen = 0u64;
    crate::with_samples!(field.samples(), v => {
        for (i, x) in v.iter().enumerate() {
            if !inside(x.to_f64()) {
                continue;
            }
            seen += 1;
            if kept.len() < count {
                kept.push(i);
            } else {
                let j = rng.below(seen);
                if (j as usize) < count {
                    kept[j as usize] = i;
                }
            }
        }
    });
    kept.sort_unstable();
    Points::of(field, kept.into_iter().map(|i| voxel_of(field, i)))
}

/// The centroids of the components of the threshold set (with `construction`'s
/// connectivity), largest component first.
pub fn component_centroids(
    field: &ScalarField,
    level: f64,
    construction: Construction,
    filtration: Filtration,
    ctl: &Control,
) -> Result<Points, ImagePointsError> {
    let p = parts(field, construction, filtration, level, ctl)?;
    let k = p.components as usize;
    let mut sums = vec![[0f64; 4]; k];
    let [_, ny, nz] = p.dims;
    for z in 0..nz {
        for y in 0..ny {
            for (x0, x1, id) in p.line(y, z) {
                if (id as usize) < k {
                    let n = (x1 - x0) as f64;
                    let s = &mut sums[id as usize];
                    // The run's x centres sum to n times their middle.
                    s[0] += n * (x0 + x1 - 1) as f64 / 2.0;
                    s[1] += n * y as f64;
                    s[2] += n * z as f64;
                    s[3] += n;
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|a, b| sums[*b][3].total_cmp(&sums[*a][3]).then(a.cmp(b)));
    Ok(Points::of(
        field,
        order.into_iter().map(|c| {
            let s = sums[c];
            [s[0] / s[3], s[1] / s[3], s[2] / s[3]]
        }),
    ))
}

fn voxel_of(field: &ScalarField, i: usize) -> [f64; 3] {
    let [nx, ny, _] = field.dims();
    [(i % nx) as f64, ((i / nx) % ny) as f64, (i / (nx * ny)) as f64]
}

/// SplitMix64 (Steele, Lea, Flood 2014): a seeded stream of well-mixed 64-bit numbers.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; its bias is below 2^-32 for any n here).
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

/// Which points of an image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImageTake {
    /// The critical points of the complex simplified up to `persistence`, of one index or all.
    Critical { index: Option<u8>, persistence: Option<f64> },
    /// At most `count` voxels of the threshold set, drawn with `seed`.
    Set { level: f64, filtration: Filtration, count: usize, seed: u64 },
    /// The centroids of the set's components.
    Components { level: f64, filtration: Filtration, construction: Construction },
}

/// The points `take` asks of `field`, and what they are in words.
pub fn image_points(
    field: &ScalarField,
    take: ImageTake,
    ctl: &Control,
) -> Result<(Points, String), ImagePointsError> {
    Ok(match take {
        ImageTake::Critical { index, persistence } => {
            let p = critical_points(field, index, persistence, ctl)?;
            let which =
                index.map_or("critical points".to_string(), |k| format!("critical points of index {k}"));
            let at = persistence.map_or(String::new(), |t| format!(" at persistence {t}"));
            (p, format!("{which}{at}"))
        }
        ImageTake::Set { level, filtration, count, seed } => {
            let p = set_voxels(field, level, filtration, count, seed);
            (p, format!("voxels of the set at level {level} (at most {count}, seed {seed})"))
        }
        ImageTake::Components { level, filtration, construction } => {
            let p = component_centroids(field, level, construction, filtration, ctl)?;
            (p, format!("centroids of the components of the set at level {level}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Samples;

    fn field() -> ScalarField {
        // Two blobs of low values in a 6 x 4 image: a 2 x 2 square and a single pixel.
        let v = [9, 9, 9, 9, 9, 9, 0, 0, 9, 9, 9, 9, 0, 0, 9, 9, 1, 9, 9, 9, 9, 9, 9, 9];
        ScalarField::new(&[6, 4], Samples::U8(v.to_vec()))
            .unwrap_or_else(|e| panic!("{e}"))
            .with_spacing([2.0, 1.0, 1.0])
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn centroids_of_components_in_world_coordinates() {
        let p = component_centroids(
            &field(),
            1.0,
            Construction::Vertices,
            Filtration::Sublevel,
            &Control::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // The square's centre (x 0.5, y 1.5) at 2 mm per x; then the pixel (4, 2).
        assert_eq!(p, Points { coords: vec![1.0, 1.5, 8.0, 2.0], dim: 2 });
    }

    #[test]
    fn set_voxels_are_all_taken_or_a_seeded_sample() {
        let all = set_voxels(&field(), 1.0, Filtration::Sublevel, 100, 1);
        assert_eq!(all.len(), 5);
        let some = set_voxels(&field(), 1.0, Filtration::Sublevel, 3, 7);
        assert_eq!(some.len(), 3);
        assert_eq!(
            some,
            set_voxels(&field(), 1.0, Filtration::Sublevel, 3, 7),
            "the same seed, the same points"
        );
        for p in some.coords.chunks(2) {
            assert!(all.coords.chunks(2).any(|q| q == p));
        }
        let high = set_voxels(&field(), 9.0, Filtration::Superlevel, 100, 1);
        assert_eq!(high.len(), 24 - 5);
    }

    #[test]
    fn the_critical_points_of_two_minima() {
        let p =
            critical_points(&field(), Some(0), None, &Control::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.len(), 2, "{p:?}");
    }
}
