//! Helpers shared by the integration tests.
#![allow(dead_code)]

use topoview::field::{Dtype, Samples, ScalarField};

/// A field of `dtype` holding `vals` (already in range for the type), x fastest.
pub fn field_of(dtype: Dtype, dims: &[usize], vals: &[f64]) -> ScalarField {
    let s = match dtype {
        Dtype::U8 => Samples::U8(vals.iter().map(|&v| v as u8).collect()),
        Dtype::I8 => Samples::I8(vals.iter().map(|&v| v as i8).collect()),
        Dtype::U16 => Samples::U16(vals.iter().map(|&v| v as u16).collect()),
        Dtype::I16 => Samples::I16(vals.iter().map(|&v| v as i16).collect()),
        Dtype::U32 => Samples::U32(vals.iter().map(|&v| v as u32).collect()),
        Dtype::I32 => Samples::I32(vals.iter().map(|&v| v as i32).collect()),
        Dtype::F32 => Samples::F32(vals.iter().map(|&v| v as f32).collect()),
        Dtype::F64 => Samples::F64(vals.to_vec()),
    };
    ScalarField::new(dims, s).expect("valid test field")
}

/// Path of a file in `tests/data`.
pub fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}
