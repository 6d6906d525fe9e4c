//! From what a point file holds ([`crate::io::points`]) to the distances Rips persistence is
//! computed over ([`crate::topo::rips`]).

use crate::control::Control;
use crate::io::points::PointData;
use crate::topo::rips::{Distances, RipsError};

/// The distances of the points (Euclidean), or the matrix itself.
pub fn distances(data: &PointData, ctl: &Control) -> Result<Distances, RipsError> {
    match data {
        PointData::Points { coords, dim } => Distances::euclidean(coords, *dim, ctl),
        PointData::LowerDistances(l) => Distances::from_lower(l.iter().map(|&d| d as f32).collect()),
    }
}

/// What the data are, in words: "4096 points in 9 dimensions", "297 x 297 distance matrix".
pub fn describe(data: &PointData, d: &Distances) -> String {
    match data {
        PointData::Points { dim, .. } => {
            format!("{} points in {dim} dimension{}", d.len(), if *dim == 1 { "" } else { "s" })
        }
        PointData::LowerDistances(_) => format!("{0} x {0} distance matrix", d.len()),
    }
}
