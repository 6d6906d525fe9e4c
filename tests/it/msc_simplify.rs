//! The simplification hierarchy against brute force: the Morse-Smale complex rewired explicitly,
//! every arc of every index, one cancellation at a time, as Gyulassy et al. (2008) describe it.

use crate::common::field_of;
use proptest::prelude::*;
use std::collections::BTreeMap;
use topoview_core::control::Control;
use topoview_core::field::Dtype;
use topoview_core::topo::msc::simplify::UNPAIRED;
use topoview_core::topo::msc::{Analysis, analyse};

/// Arcs by (end of higher index, end of lower index): V-path counts.
type Arcs = BTreeMap<(usize, usize), u128>;

fn persistence(a: &Analysis, u: usize, l: usize) -> f64 {
    let (x, y) = (a.complex.critical[u].value, a.complex.critical[l].value);
    if x == y { 0.0 } else { (x - y).abs() }
}

/// The hierarchy's persistence pairing is the diagram's: every diagram point's cells are
/// partners, and every other pair has zero persistence.
fn check_pairing(a: &Analysis) {
    let (c, h) = (&a.complex, &a.hierarchy);
    let id = |cell| c.critical.iter().position(|p| p.cell == cell).unwrap();
    let mut seen = vec![false; c.critical.len()];
    for d in &a.diagram {
        let b = id(d.birth_cell);
        seen[b] = true;
        match d.death_cell {
            Some(dc) => {
                assert_eq!(h.partner[b], id(dc), "{d:?}");
                seen[id(dc)] = true;
            }
            None => assert_eq!(h.partner[b], UNPAIRED),
        }
    }
    for (i, p) in c.critical.iter().enumerate().filter(|&(i, _)| !seen[i]) {
        assert_eq!(h.partner[h.partner[i]], i);
        assert_eq!(p.value, c.critical[h.partner[i]].value, "a pair not in the diagram has zero persistence");
    }
}

/// Replays the hierarchy's cancellations on the explicit complex and checks, before each, that
/// the hierarchy's live arcs equal the explicit ones (ends and counts), that the pair is a
/// persistence pair joined by exactly one V-path with the lowest persistence of all such pairs,
/// and that each pair reported blocked then is joined by none or several; after each, the
/// Morse equality. At the end no persistence pair joined by one V-path is left. Returns how
/// many saddle-saddle pairs were cancelled.
fn replay(a: &Analysis) -> usize {
    let (c, h) = (&a.complex, &a.hierarchy);
    let nd = c.grid.ndim;
    let paired = |u: usize, l: usize| h.partner[u] == l;
    let mut arcs: Arcs = Arcs::new();
    for arc in &c.arcs {
        *arcs.entry((arc.upper, arc.lower)).or_default() += arc.multiplicity.count;
    }
    let mut alive = vec![true; c.critical.len()];
    let mut saddle_pairs = 0;
    for step in 0..=h.cancellations.len() {
        let live: Arcs =
            h.arcs_at(c, step).into_iter().map(|r| ((r.upper, r.lower), r.multiplicity.count)).collect();
        assert_eq!(live, arcs, "live arcs after {step} cancellations");
        for b in h.blocked.iter().filter(|b| b.at_step == step) {
            let m = arcs.get(&(b.upper, b.lower)).copied().unwrap_or(0);
            assert!(paired(b.upper, b.lower) && m != 1, "blocked pair {b:?} is joined by {m} V-paths");
            assert_eq!(b.paths, m.to_string());
        }
        let cheapest = arcs
            .iter()
            .filter(|&(&(u, l), &m)| m == 1 && paired(u, l))
            .map(|(&(u, l), _)| persistence(a, u, l))
            .reduce(f64::min);
        let Some(x) = h.cancellations.get(step) else {
            assert_eq!(cheapest, None, "a persistence pair joined by one V-path is left");
            break;
        };
        let (q, p) = (x.upper, x.lower);
        assert!(alive[q] && alive[p]);
        assert_eq!(c.critical[q].index, c.critical[p].index + 1);
        assert!(paired(q, p), "step {step} cancels a persistence pair");
        assert_eq!(arcs.get(&(q, p)), Some(&1), "step {step} cancels a pair joined by one V-path");
        assert_eq!(x.persistence, persistence(a, q, p));
        assert_eq!(Some(x.persistence), cheapest, "step {step} cancels the lowest persistence");
        if step > 0 {
            assert!(x.level >= h.cancellations[step - 1].level);
        }
        let k = (c.critical[q].index, c.critical[p].index);
        if nd == 3 && k == (2, 1) {
            saddle_pairs += 1;
        }
        // Every cell above p but q now reaches every cell below q but p.
        let above: Vec<(usize, u128)> =
            arcs.iter().filter(|&(&(u, l), _)| l == p && u != q).map(|(&(u, _), &m)| (u, m)).collect();
        let below: Vec<(usize, u128)> =
            arcs.iter().filter(|&(&(u, l), _)| u == q && l != p).map(|(&(_, l), &m)| (l, m)).collect();
        arcs.retain(|&(u, l), _| ![u, l].iter().any(|&x| x == p || x == q));
        for &(r, mr) in &above {
            for &(t, mt) in &below {
                *arcs.entry((r, t)).or_default() += mr * mt;
            }
        }
        alive[p] = false;
        alive[q] = false;
        let counts = h.counts(c, step + 1);
        let chi: i64 =
            (0..=nd).map(|i| if i % 2 == 0 { counts[i] as i64 } else { -(counts[i] as i64) }).sum();
        assert_eq!(chi, 1, "Morse equality after {} cancellations", step + 1);
        for (i, &alive) in alive.iter().enumerate() {
            assert_eq!(h.alive(i, step + 1), alive);
        }
    }
    // A merged arc's polyline: its pieces end to end, from its 2-saddle to its 1-saddle
    // through incident cells.
    for (k, r) in h.added.iter().enumerate() {
        let path = h.saddle_path(c, c.arcs.len() + k, usize::MAX);
        assert_eq!(path.first(), Some(&c.critical[r.upper as usize].position));
        assert_eq!(path.last(), Some(&c.critical[r.lower as usize].position));
        for w in path.windows(2) {
            let d: f64 = (0..3).map(|i| (w[0][i] - w[1][i]).abs()).sum();
            assert!(d <= 0.5 + 1e-9, "path steps are between incident cells");
        }
    }
    saddle_pairs
}

/// At any threshold, the critical points of each index are at least as many as the persistence
/// diagram requires: the pairs born or dying there that persist longer, and the essential
/// classes.
fn check_diagram_bound(a: &Analysis) {
    let (c, h) = (&a.complex, &a.hierarchy);
    let nd = c.grid.ndim;
    let span = c.critical.iter().map(|p| p.value).fold(f64::NEG_INFINITY, f64::max)
        - c.critical.iter().map(|p| p.value).fold(f64::INFINITY, f64::min);
    for frac in [0.0, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0] {
        let t = frac * span;
        let counts = h.counts(c, h.steps_at(t));
        let mut need = [0usize; 4];
        for d in &a.diagram {
            match d.death {
                None => need[d.dim] += 1,
                Some(death) if (death - d.birth).abs() > t => {
                    need[d.dim] += 1;
                    need[d.dim + 1] += 1;
                }
                Some(_) => {}
            }
        }
        for k in 0..=nd {
            assert!(counts[k] >= need[k], "index {k} at {t}: {counts:?} below the diagram's {need:?}");
        }
        if h.blocked_at(t).next().is_none() {
            assert_eq!(counts[..=nd], need[..=nd], "nothing blocked at {t}");
        }
    }
}

fn run(dims: &[usize], vals: &[f64]) -> Analysis {
    analyse(&field_of(Dtype::F64, dims, vals), &Control::default()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn hierarchy_equals_explicit_rewiring(
        (dims, vals) in crate::common::small_field(2, 9, 6, (-50..50).map(f64::from).collect())
    ) {
        let a = run(&dims, &vals);
        check_pairing(&a);
        replay(&a);
        check_diagram_bound(&a);
    }
}

/// Random 3D fields large enough to cancel many saddle-saddle pairs, some of them through arcs
/// that earlier cancellations made.
#[test]
fn saddle_pairs_cancel_on_random_volumes() {
    let mut total = 0;
    for seed in 0..6u64 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let vals: Vec<f64> = (0..9 * 8 * 7)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 1000) as f64
            })
            .collect();
        let a = run(&[9, 8, 7], &vals);
        total += replay(&a);
        check_diagram_bound(&a);
        let made_from_made =
            a.hierarchy.added.iter().any(|r| r.pieces.iter().any(|&p| p as usize >= a.complex.arcs.len()));
        assert!(made_from_made, "a cancellation through an arc an earlier one made");
    }
    assert!(total > 100, "{total} saddle-saddle cancellations");
}

/// The distance to a ring, tilted along it: the sublevel sets grow around the ring from its
/// low side and close it into a loop at its high side (a 1-saddle at value 2a), a loop that the
/// disc inside fills at the ring's centre (a 2-saddle at value R). The diagram has one such
/// 1-dimensional pair of persistence about R - 2a; simplifying past it cancels those two
/// saddles, a saddle-saddle pair, and no other saddles.
#[test]
fn a_ring_has_one_saddle_pair_that_cancels_at_its_persistence() {
    let (n, c, r, a) = (19usize, 9.0, 6.0, 1.0);
    let mut vals = Vec::new();
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let (dx, dy, dz) = (x as f64 - c, y as f64 - c, z as f64 - c);
                let rho = (dx * dx + dy * dy).sqrt();
                vals.push(((rho - r).powi(2) + dz * dz).sqrt() + a * (rho + dx) / r);
            }
        }
    }
    let an = run(&[n, n, n], &vals);
    replay(&an);
    check_diagram_bound(&an);
    let loops: Vec<_> =
        an.diagram.iter().filter(|d| d.dim == 1 && d.death.is_some_and(|e| e - d.birth > 1.0)).collect();
    assert_eq!(loops.len(), 1, "{loops:?}");
    let pair = loops[0];
    let p = pair.death.unwrap() - pair.birth;
    assert!((p - (r - 2.0 * a)).abs() < 0.5, "persistence {p}");
    let (cx, h) = (&an.complex, &an.hierarchy);
    let id = |cell| cx.critical.iter().position(|q| q.cell == cell).unwrap();
    let (born, died) = (id(pair.birth_cell), id(pair.death_cell.unwrap()));
    assert_eq!((cx.critical[born].index, cx.critical[died].index), (1, 2));
    assert!((cx.critical[died].position[0] - c).abs() <= 1.0, "the 2-saddle at the centre");
    assert!(cx.critical[born].position[0] > c + r - 1.5, "the 1-saddle on the ring's high side");
    let (below, above) = (h.steps_at(0.98 * p), h.steps_at(1.02 * p));
    assert!(h.alive(born, below) && h.alive(died, below));
    let (k0, k1) = (h.counts(cx, below), h.counts(cx, above));
    assert_eq!((k0[1] - k1[1], k0[2] - k1[2]), (1, 1), "{k0:?} then {k1:?}");
    assert!(h.cancellations[below..above].iter().any(|x| (x.upper, x.lower) == (died, born)));
}

/// A 3x3x4 field (found by the property test) where cancelling the cheapest pair joined by one
/// V-path, persistence pair or not, re-pairs saddles around a pair blocked by three V-paths and
/// leaves no 1-saddle at threshold 43 though a 1-cycle of persistence 55 (born at -19, filled
/// at 36) exists: only persistence pairs are cancelled, so the cycle's saddles stay.
#[test]
fn a_cycle_outlives_thresholds_below_its_persistence() {
    let vals = [
        -49.0, -49.0, -49.0, -49.0, -49.0, 36.0, -49.0, -49.0, -49.0, -49.0, 36.0, -49.0, -49.0, -49.0, -6.0,
        -49.0, -49.0, -49.0, 20.0, -49.0, -49.0, -49.0, -6.0, -49.0, -49.0, -49.0, -6.0, -49.0, -19.0, -6.0,
        -19.0, -6.0, -50.0, -50.0, -50.0, -7.0,
    ];
    let a = run(&[3, 3, 4], &vals);
    let cycle = a.diagram.iter().find(|d| d.dim == 1 && d.death == Some(36.0)).unwrap();
    assert_eq!(cycle.birth, -19.0);
    let (c, h) = (&a.complex, &a.hierarchy);
    for t in [43.0, 54.9] {
        let counts = h.counts(c, h.steps_at(t));
        assert!(counts[1] >= 1 && counts[2] >= 1, "at {t}: {counts:?}");
    }
    replay(&a);
    check_diagram_bound(&a);
}
