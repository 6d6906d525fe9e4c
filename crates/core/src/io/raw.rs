//! Headerless raw samples: the layout comes from `--dims/--dtype/--endian/--offset`, or from a
//! name in the Open SciVis style, `name_256x256x256_uint8.raw`, optionally with a byte order
//! token (`name_64x64x10_uint16_le.raw`). The first axis of the dims is x (fastest).

use super::FormatError;
use super::{Endian, RawSpec, check_dims, make_field, open_file, read_samples, skip};
use crate::control::Control;
use crate::field::{Dtype, ScalarField, dims_string};
use std::path::Path;

/// Parses `64x64x10` (1 to 3 positive sizes).
pub fn parse_dims(s: &str) -> Result<Vec<usize>, FormatError> {
    let dims: Result<Vec<usize>, _> = s.split(['x', 'X']).map(|t| t.trim().parse::<usize>()).collect();
    let dims = dims.map_err(|_| format!("bad dims '{s}' (expected X, XxY or XxYxZ)"))?;
    check_dims(&dims)?;
    Ok(dims)
}

/// The layout encoded in a file name, if it follows the convention.
pub fn spec_from_name(path: &Path) -> Option<RawSpec> {
    let stem = path.file_name()?.to_str()?;
    let stem = stem.strip_suffix(".raw").or_else(|| stem.strip_suffix(".RAW"))?;
    let tokens: Vec<&str> = stem.split('_').collect();
    let (endian, rest) = match *tokens.last()? {
        "le" => (Some(Endian::Little), &tokens[..tokens.len() - 1]),
        "be" => (Some(Endian::Big), &tokens[..tokens.len() - 1]),
        _ => (None, &tokens[..]),
    };
    if rest.len() < 2 {
        return None;
    }
    let dtype = Dtype::parse(rest[rest.len() - 1])?;
    let dims = parse_dims(rest[rest.len() - 2]).ok()?;
    Some(RawSpec { dims, dtype, endian: endian.unwrap_or(Endian::Little), offset: 0 })
}

pub fn read(path: &Path, spec: &RawSpec, ctl: &Control) -> Result<ScalarField, FormatError> {
    let n = check_dims(&spec.dims)?;
    let need = (n as u128) * spec.dtype.size() as u128 + spec.offset as u128;
    let len = std::fs::metadata(path).map_err(|e| super::io_message(&e))?.len() as u128;
    if len != need {
        return Err(format!(
            "raw size mismatch: {} {} after {} header bytes needs {need} bytes, the file has {len}",
            dims_string(&spec.dims),
            spec.dtype,
            spec.offset
        )
        .into());
    }
    let mut r = open_file(path, ctl)?;
    skip(&mut r, spec.offset, "the offset")?;
    let samples = read_samples(&mut r, spec.dtype, n, spec.endian)?;
    make_field(&spec.dims, samples, [1.0; 3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_convention() {
        let s = spec_from_name(Path::new("/x/bonsai_256x256x256_uint8.raw")).unwrap();
        assert_eq!((s.dims, s.dtype, s.endian), (vec![256, 256, 256], Dtype::U8, Endian::Little));
        let s = spec_from_name(Path::new("pydicom_emri_small_64x64x10_uint16_le.raw")).unwrap();
        assert_eq!((s.dims, s.dtype), (vec![64, 64, 10], Dtype::U16));
        let s = spec_from_name(Path::new("a_7x3_float64_be.raw")).unwrap();
        assert_eq!((s.dims, s.dtype, s.endian), (vec![7, 3], Dtype::F64, Endian::Big));
        assert!(spec_from_name(Path::new("plain.raw")).is_none());
        assert!(spec_from_name(Path::new("a_0x3_uint8.raw")).is_none());
        assert!(spec_from_name(Path::new("a_3x3_complex.raw")).is_none());
    }

    #[test]
    fn dims_are_checked() {
        assert_eq!(parse_dims("4x5x6").unwrap(), vec![4, 5, 6]);
        assert!(parse_dims("4x0").is_err());
        assert!(parse_dims("1x2x3x4").is_err());
        assert!(parse_dims("4xx").is_err());
        assert!(parse_dims("99999999999x99999999999x99999999999").is_err());
    }
}
