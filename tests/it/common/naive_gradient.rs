//! ProcessLowerStars (Robins, Wood and Sheppard 2011) written as plainly as possible, with sets
//! and sorted lists instead of the library's bit masks and packed keys: the reference the
//! library's gradient must equal cell for cell (same pairs, same critical cells, ties included).

use std::collections::{BTreeMap, BTreeSet};
use topoview_core::topo::msc::grid::{Cell, CellGrid};
use topoview_core::topo::msc::order::VertexOrder;

/// Per cell: None if critical, else its partner.
pub fn gradient(grid: &CellGrid, order: &impl VertexOrder) -> Vec<Option<Cell>> {
    let n: usize = grid.vdims.iter().product();
    let mut by_order: Vec<usize> = (0..n).collect();
    by_order.sort_by_key(|&v| (order.key(v), v));
    let mut rank = vec![0usize; n];
    for (r, &v) in by_order.iter().enumerate() {
        rank[v] = r;
    }
    let mut out: Vec<Option<Option<Cell>>> = vec![None; grid.n_cells()];
    for v in 0..n {
        let vc = grid.vertex_cell(v);
        // The lower star: cells around v whose corners other than v all come before v.
        let p = grid.coords(vc);
        let mut key: BTreeMap<Cell, Vec<usize>> = BTreeMap::new();
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let q = [p[0] as i64 + dx, p[1] as i64 + dy, p[2] as i64 + dz];
                    if (0..3).any(|a| q[a] < 0 || q[a] >= grid.cdims[a] as i64) {
                        continue;
                    }
                    let c = grid.id(q.map(|x| x as usize));
                    let mut others: Vec<usize> =
                        grid.corners(c).filter(|&u| u != v).map(|u| rank[u]).collect();
                    if others.iter().all(|&r| r < rank[v]) {
                        others.sort_by(|a, b| b.cmp(a));
                        key.insert(c, others);
                    }
                }
            }
        }
        let in_star = |c: &Cell| key.contains_key(c);
        let mut assigned: BTreeSet<Cell> = BTreeSet::new();
        let unpaired_faces = |c: Cell, assigned: &BTreeSet<Cell>| -> Vec<Cell> {
            grid.facets(c).filter(|f| in_star(f) && !assigned.contains(f)).collect()
        };
        let by_key = |c: Cell| (key[&c].clone(), c);
        if key.len() == 1 {
            out[vc] = Some(None);
            continue;
        }
        let edges: Vec<Cell> = key.keys().copied().filter(|&c| grid.dim(c) == 1).collect();
        let delta = *edges.iter().min_by_key(|&&e| by_key(e)).unwrap();
        out[vc] = Some(Some(delta));
        out[delta] = Some(Some(vc));
        assigned.extend([vc, delta]);
        let mut pq_zero: BTreeSet<(Vec<usize>, Cell)> =
            edges.iter().filter(|&&e| e != delta).map(|&e| by_key(e)).collect();
        let mut pq_one: BTreeSet<(Vec<usize>, Cell)> = BTreeSet::new();
        let ready = |of: Cell, assigned: &BTreeSet<Cell>, pq_one: &mut BTreeSet<(Vec<usize>, Cell)>| {
            for c in grid.cofacets(of).filter(|c| in_star(c) && !assigned.contains(c)) {
                if unpaired_faces(c, assigned).len() == 1 {
                    pq_one.insert(by_key(c));
                }
            }
        };
        ready(delta, &assigned, &mut pq_one);
        while !pq_one.is_empty() || !pq_zero.is_empty() {
            while let Some((k, a)) = pq_one.pop_first() {
                if assigned.contains(&a) {
                    continue;
                }
                let faces = unpaired_faces(a, &assigned);
                if faces.is_empty() {
                    pq_zero.insert((k, a));
                    continue;
                }
                let face = *faces.iter().min().unwrap();
                out[face] = Some(Some(a));
                out[a] = Some(Some(face));
                assigned.extend([face, a]);
                pq_zero.remove(&by_key(face));
                ready(a, &assigned, &mut pq_one);
                ready(face, &assigned, &mut pq_one);
            }
            if let Some((_, g)) = pq_zero.pop_first() {
                if assigned.contains(&g) {
                    continue;
                }
                out[g] = Some(None);
                assigned.insert(g);
                ready(g, &assigned, &mut pq_one);
            }
        }
    }
    out.into_iter().map(|c| c.expect("every cell is in one lower star")).collect()
}
