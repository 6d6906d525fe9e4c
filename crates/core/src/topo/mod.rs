//! The mathematics, as plain CPU code: the reference every other backend is tested against.

pub mod betti;
pub mod cracks;
pub mod ecc;
pub mod msc;
pub mod rips;
pub mod scale_space;
pub mod smooth;
pub(crate) mod union_find;
