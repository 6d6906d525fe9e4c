//! Zero-crossings of an ECC, for threshold selection.
//!
//! Definition. Walk the curve in filtration order (increasing thresholds for sublevel sets,
//! decreasing for superlevel sets) and skip points where `chi = 0`. A **zero-crossing** is a pair
//! of consecutive non-zero points `a < b` (indices into the curve) whose signs differ. It is
//! reported with `last_before = thresholds[b - 1]` (the last threshold before the sign is
//! reached: a point with the old sign, or with `chi = 0`) and `first_after = thresholds[b]` (the
//! first threshold with the new sign). The **suggested threshold** is `last_before` of the first
//! positive-to-negative crossing: the largest sublevel set, at the crossing where holes start to
//! outnumber components, whose Euler characteristic is not yet negative.

use super::Ecc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    PositiveToNegative,
    NegativeToPositive,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Crossing {
    pub direction: Direction,
    /// Index into the curve of `first_after`.
    pub index: usize,
    pub last_before: f64,
    pub first_after: f64,
    pub chi_before: i64,
    pub chi_after: i64,
}

/// All zero-crossings of `ecc`, in filtration order.
pub fn zero_crossings(ecc: &Ecc) -> Vec<Crossing> {
    crate::with_chi!(&ecc.chi, v => crossings_of(ecc, v))
}

/// [`zero_crossings`] of `ecc` whose chi values are `chi`.
fn crossings_of<C: Copy + Into<i64>>(ecc: &Ecc, chi: &[C]) -> Vec<Crossing> {
    let mut out = Vec::new();
    let mut last_sign = 0i64;
    for (b, &c) in chi.iter().enumerate() {
        let c: i64 = c.into();
        let s = c.signum();
        if s == 0 {
            continue;
        }
        if last_sign != 0 && s != last_sign {
            out.push(Crossing {
                direction: if s < 0 { Direction::PositiveToNegative } else { Direction::NegativeToPositive },
                index: b,
                last_before: ecc.threshold(b - 1),
                first_after: ecc.threshold(b),
                chi_before: chi[b - 1].into(),
                chi_after: c,
            });
        }
        last_sign = s;
    }
    out
}

/// `last_before` of the first positive-to-negative crossing, if any.
pub fn suggested_threshold(crossings: &[Crossing]) -> Option<f64> {
    crossings.iter().find(|c| c.direction == Direction::PositiveToNegative).map(|c| c.last_before)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Samples;
    use crate::topo::ecc::{Chi, Construction, Filtration};

    fn curve(chi: &[i64]) -> Ecc {
        Ecc {
            construction: Construction::TopCells,
            filtration: Filtration::Sublevel,
            thresholds: Samples::U8((0..chi.len()).map(|i| i as u8 * 10).collect()),
            chi: Chi::I64(chi.to_vec()),
        }
    }

    #[test]
    fn finds_crossings_through_zero_and_direct() {
        let c = zero_crossings(&curve(&[1, 3, 0, 0, -2, -1, 4, 1]));
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].direction, Direction::PositiveToNegative);
        assert_eq!((c[0].last_before, c[0].first_after), (30.0, 40.0));
        assert_eq!((c[0].chi_before, c[0].chi_after), (0, -2));
        assert_eq!(c[1].direction, Direction::NegativeToPositive);
        assert_eq!((c[1].last_before, c[1].first_after), (50.0, 60.0));
        assert_eq!(suggested_threshold(&c), Some(30.0));
    }

    #[test]
    fn touching_zero_is_not_a_crossing() {
        let c = zero_crossings(&curve(&[2, 0, 1, -0, 5]));
        assert!(c.is_empty());
        assert_eq!(suggested_threshold(&c), None);
        let c = zero_crossings(&curve(&[-1, 2]));
        assert_eq!(c[0].direction, Direction::NegativeToPositive);
        assert_eq!(suggested_threshold(&c), None);
    }
}
