//! The textbook computation, for the tests: every simplex of the Rips complex up to one
//! dimension above the highest asked for, ordered by diameter (faces first on ties), the
//! boundary matrix reduced column by column over Z/2. Exponential in the dimension and
//! quadratic in the simplices: for a dozen points.

use super::{Bar, Barcode, Distances, RipsOptions};

/// The barcode of `d`, by the standard reduction of the whole boundary matrix.
pub fn barcode(d: &Distances, opts: &RipsOptions) -> Barcode {
    let n = d.len();
    let table = super::index::Binomials::new(n, opts.maxdim + 2).expect("a dozen points");
    let number = |s: &[usize]| {
        let mut v = s.to_vec();
        v.reverse();
        table.index_of(&v)
    };
    // Every vertex subset of up to maxdim + 2 vertices within the threshold.
    let mut simplices: Vec<(f32, Vec<usize>)> = Vec::new();
    let mut stack: Vec<Vec<usize>> = (0..n).map(|v| vec![v]).collect();
    while let Some(s) = stack.pop() {
        // Every ordered pair, not `Distances::diameter`: the reference shares no code it checks.
        let diameter = s
            .iter()
            .flat_map(|a| s.iter().map(move |b| (*a, *b)))
            .map(|(a, b)| d.get(a, b))
            .fold(0f32, f32::max);
        if diameter > opts.threshold {
            continue;
        }
        if s.len() < opts.maxdim + 2 {
            let last = *s.last().unwrap_or(&0);
            for v in last + 1..n {
                let mut t = s.clone();
                t.push(v);
                stack.push(t);
            }
        }
        simplices.push((diameter, s));
    }
    simplices.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.len().cmp(&b.1.len())).then(a.1.cmp(&b.1)));
    let position: std::collections::HashMap<Vec<usize>, usize> =
        simplices.iter().enumerate().map(|(i, s)| (s.1.clone(), i)).collect();
    // Columns as sorted row lists; `low` is the last row.
    let mut columns: Vec<Vec<usize>> = simplices
        .iter()
        .map(|(_, s)| {
            let mut rows: Vec<usize> = if s.len() == 1 {
                Vec::new()
            } else {
                (0..s.len())
                    .map(|k| {
                        let mut f = s.clone();
                        f.remove(k);
                        position[&f]
                    })
                    .collect()
            };
            rows.sort_unstable();
            rows
        })
        .collect();
    let mut owner: std::collections::HashMap<usize, usize> = Default::default();
    let mut paired = vec![false; simplices.len()];
    let mut bars = Vec::new();
    for j in 0..columns.len() {
        while let Some(&low) = columns[j].last() {
            match owner.get(&low) {
                Some(&k) => {
                    // Symmetric difference of two sorted lists.
                    let (a, b) = (&columns[j], &columns[k]);
                    let mut sum = Vec::with_capacity(a.len() + b.len());
                    let (mut x, mut y) = (0, 0);
                    while x < a.len() || y < b.len() {
                        if y == b.len() || (x < a.len() && a[x] < b[y]) {
                            sum.push(a[x]);
                            x += 1;
                        } else if x == a.len() || b[y] < a[x] {
                            sum.push(b[y]);
                            y += 1;
                        } else {
                            x += 1;
                            y += 1;
                        }
                    }
                    columns[j] = sum;
                }
                None => {
                    owner.insert(low, j);
                    paired[low] = true;
                    paired[j] = true;
                    let (birth, death) = (simplices[low].0, simplices[j].0);
                    if death > birth {
                        let (creator, killer) = (number(&simplices[low].1), Some(number(&simplices[j].1)));
                        bars.push(Bar { dim: simplices[low].1.len() - 1, birth, death, creator, killer });
                    }
                    break;
                }
            }
        }
    }
    for (i, (diameter, s)) in simplices.iter().enumerate() {
        if !paired[i] && s.len() <= opts.maxdim + 1 {
            let creator = number(s);
            bars.push(Bar {
                dim: s.len() - 1,
                birth: *diameter,
                death: f32::INFINITY,
                creator,
                killer: None,
            });
        }
    }
    Barcode { maxdim: opts.maxdim, points: n, bars }
}
