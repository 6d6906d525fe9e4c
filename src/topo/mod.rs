//! The mathematics, as plain CPU code: the reference every other backend is tested against.

pub mod cracks;
pub mod ecc;
pub mod msc;
pub mod smooth;
