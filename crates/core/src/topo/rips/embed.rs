//! Places a distance matrix's points in 3D to be looked at: classical multidimensional scaling
//! (Torgerson), the top three eigenvectors of the double-centred squared distances
//! `B = -1/2 J D² J`, found by subspace iteration with `B` applied on the fly (never stored).
//! Euclidean distances of points in up to 3 dimensions come back exactly (up to a rigid
//! motion); others are the best 3D approximation in that sense. Only for display: the barcode
//! is always of the matrix itself.

use super::{Distances, RipsError};
use crate::control::Control;
use rayon::prelude::*;

/// Iterations of the subspace iteration at most; it stops sooner once the subspace settles.
const ITERATIONS: usize = 200;

/// Three coordinates for each point of `d`.
pub fn classical_mds(d: &Distances, ctl: &Control) -> Result<Vec<[f64; 3]>, RipsError> {
    let n = d.len();
    if n < 2 {
        return Ok(vec![[0.0; 3]; n]);
    }
    let sq = |i: usize, j: usize| (d.get(i, j) as f64).powi(2);
    // Row means of D² and their mean, for the double centring.
    let rows: Vec<f64> =
        (0..n).into_par_iter().map(|i| (0..n).map(|j| sq(i, j)).sum::<f64>() / n as f64).collect();
    let all = rows.iter().sum::<f64>() / n as f64;
    // B v for three vectors at once: -1/2 (D² v - r (1·v) - 1 (r·v) + m 1 (1·v)).
    let apply = |v: &[[f64; 3]]| -> Vec<[f64; 3]> {
        let sum: [f64; 3] = std::array::from_fn(|k| v.iter().map(|x| x[k]).sum());
        let rv: [f64; 3] = std::array::from_fn(|k| v.iter().zip(&rows).map(|(x, r)| x[k] * r).sum());
        (0..n)
            .into_par_iter()
            .map(|i| {
                let mut y = [0.0; 3];
                for (j, x) in v.iter().enumerate() {
                    let s = sq(i, j);
                    for k in 0..3 {
                        y[k] += s * x[k];
                    }
                }
                std::array::from_fn(|k| -0.5 * (y[k] - rows[i] * sum[k] - rv[k] + all * sum[k]))
            })
            .collect()
    };
    // A fixed start (deterministic pictures), orthonormalised.
    let mut v: Vec<[f64; 3]> = (0..n)
        .map(|i| {
            let t = i as f64;
            [(t * 0.7).sin() + 0.1, (t * 1.3177).cos(), (t * 2.5).sin() * (t * 0.31).cos()]
        })
        .collect();
    orthonormalise(&mut v);
    let mut values = [0.0; 3];
    for _ in 0..ITERATIONS {
        ctl.check()?;
        let mut w = apply(&v);
        // Rayleigh quotients before orthonormalising: the eigenvalue estimates.
        let next: [f64; 3] = std::array::from_fn(|k| v.iter().zip(&w).map(|(a, b)| a[k] * b[k]).sum());
        orthonormalise(&mut w);
        let moved =
            (0..3).map(|k| (next[k] - values[k]).abs() / next[k].abs().max(1e-300)).fold(0.0, f64::max);
        values = next;
        v = w;
        if moved < 1e-10 {
            break;
        }
    }
    Ok(v.iter().map(|x| std::array::from_fn(|k| x[k] * values[k].max(0.0).sqrt())).collect())
}

/// Gram-Schmidt on the three columns of `v` (a column that vanishes is left at zero).
fn orthonormalise(v: &mut [[f64; 3]]) {
    for k in 0..3 {
        for prev in 0..k {
            let dot: f64 = v.iter().map(|x| x[k] * x[prev]).sum();
            for x in v.iter_mut() {
                x[k] -= dot * x[prev];
            }
        }
        let norm = v.iter().map(|x| x[k] * x[k]).sum::<f64>().sqrt();
        if norm > 1e-300 {
            for x in v.iter_mut() {
                x[k] /= norm;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euclidean_points_in_3d_come_back_up_to_a_rigid_motion() {
        // Distances between the embedded points equal the originals'.
        let p: Vec<f64> = (0..40)
            .flat_map(|i| {
                let t = i as f64;
                [t.sin() * 3.0, (t * 0.37).cos() * 2.0, (t * 0.11).sin()]
            })
            .collect();
        let ctl = Control::default();
        let d = Distances::euclidean(&p, 3, &ctl).unwrap();
        let e = classical_mds(&d, &ctl).unwrap();
        for i in 0..40 {
            for j in 0..i {
                let got = (0..3).map(|k| (e[i][k] - e[j][k]).powi(2)).sum::<f64>().sqrt();
                assert!((got - d.get(i, j) as f64).abs() < 1e-4, "{i} {j}: {got} vs {}", d.get(i, j));
            }
        }
    }

    #[test]
    fn a_planar_cloud_has_no_third_coordinate() {
        let p: Vec<f64> = (0..30).flat_map(|i| [(i % 6) as f64, (i / 6) as f64 * 1.5]).collect();
        let ctl = Control::default();
        let d = Distances::euclidean(&p, 2, &ctl).unwrap();
        let e = classical_mds(&d, &ctl).unwrap();
        assert!(e.iter().all(|x| x[2].abs() < 1e-3), "{e:?}");
    }
}
