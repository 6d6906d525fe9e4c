//! MetaImage (ITK): `.mha` with the data after the header (`ElementDataFile = LOCAL`) and `.mhd`
//! with a separate data file; zlib-compressed data (`CompressedData = True`) too.

use super::FormatError;
use super::{Endian, check_dims, make_field, open_file, read_samples, skip};
use crate::control::Control;
use crate::field::{Dtype, ScalarField};
use flate2::read::ZlibDecoder;
use std::io::BufRead;
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub dims: Vec<usize>,
    pub dtype: Dtype,
    pub endian: Endian,
    pub spacing: Option<Vec<f64>>,
    pub compressed: bool,
    /// Bytes to skip in the data file; -1 means the data end the file.
    pub header_size: i64,
    /// `LOCAL` or a file name relative to the header.
    pub data_file: String,
    /// Values per voxel (`ElementNumberOfChannels`), stored together.
    pub channels: usize,
}

/// Whether the first bytes look like a MetaImage header.
pub fn looks_like(head: &[u8]) -> bool {
    let t = String::from_utf8_lossy(head);
    let first = t.trim_start().split(['=', ' ']).next().unwrap_or("");
    matches!(first, "ObjectType" | "NDims" | "Comment" | "ObjectSubType")
}

fn dtype(name: &str) -> Result<Dtype, FormatError> {
    Ok(match name {
        "MET_UCHAR" => Dtype::U8,
        "MET_CHAR" => Dtype::I8,
        "MET_USHORT" => Dtype::U16,
        "MET_SHORT" => Dtype::I16,
        "MET_UINT" | "MET_ULONG" => Dtype::U32,
        "MET_INT" | "MET_LONG" => Dtype::I32,
        "MET_FLOAT" => Dtype::F32,
        "MET_DOUBLE" => Dtype::F64,
        _ => return Err(format!("ElementType {name} is not supported").into()),
    })
}

fn flag(v: &str) -> bool {
    v.eq_ignore_ascii_case("true") || v == "1"
}

/// Parses header lines up to and including `ElementDataFile`.
pub fn parse_header(text: &str) -> Result<Header, FormatError> {
    let (mut ndims, mut dims, mut ty, mut data_file) = (None, None, None, None);
    let mut h = Header {
        dims: Vec::new(),
        dtype: Dtype::U8,
        endian: Endian::Little,
        spacing: None,
        compressed: false,
        header_size: 0,
        data_file: String::new(),
        channels: 1,
    };
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(format!("bad header line '{}'", line.chars().take(60).collect::<String>()).into());
        };
        let (key, value) = (key.trim(), value.trim());
        let floats = |v: &str| -> Result<Vec<f64>, String> {
            v.split_whitespace().map(|t| t.parse::<f64>().map_err(|_| format!("bad {key} '{v}'"))).collect()
        };
        match key {
            "ObjectType" if value != "Image" => {
                return Err(format!("ObjectType {value} is not an image").into());
            }
            "NDims" => ndims = Some(value.parse::<usize>().map_err(|_| format!("bad NDims '{value}'"))?),
            "DimSize" => {
                let d: Result<Vec<usize>, _> = value.split_whitespace().map(str::parse).collect();
                dims = Some(d.map_err(|_| format!("bad DimSize '{value}'"))?);
            }
            "ElementType" => ty = Some(dtype(value)?),
            "ElementSpacing" => h.spacing = Some(floats(value)?),
            "ElementSize" if h.spacing.is_none() => h.spacing = Some(floats(value)?),
            "ElementByteOrderMSB" | "BinaryDataByteOrderMSB" => {
                h.endian = if flag(value) { Endian::Big } else { Endian::Little }
            }
            "CompressedData" => h.compressed = flag(value),
            "HeaderSize" => h.header_size = value.parse().map_err(|_| format!("bad HeaderSize '{value}'"))?,
            "ElementNumberOfChannels" => {
                h.channels = value
                    .parse::<usize>()
                    .ok()
                    .filter(|&c| c >= 1)
                    .ok_or_else(|| format!("bad ElementNumberOfChannels '{value}'"))?;
            }
            "ElementDataFile" => {
                if value.starts_with("LIST") || value.contains('%') {
                    return Err("multi-file data (ElementDataFile LIST or a pattern) is not supported".into());
                }
                data_file = Some(value.to_string());
                break;
            }
            _ => {}
        }
    }
    h.data_file = data_file.ok_or("header has no ElementDataFile")?;
    h.dtype = ty.ok_or("header has no ElementType")?;
    h.dims = dims.ok_or("header has no DimSize")?;
    if let Some(n) = ndims
        && n != h.dims.len()
    {
        return Err(format!("NDims {n} but DimSize has {} sizes", h.dims.len()).into());
    }
    let n = check_dims(&h.dims)?;
    if n.checked_mul(h.channels).and_then(|v| v.checked_mul(h.dtype.size())).is_none() {
        return Err(format!("{n} voxels of {} channels overflow", h.channels).into());
    }
    if h.header_size < -1 || (h.header_size == -1 && h.compressed) {
        return Err(format!("bad HeaderSize {}", h.header_size).into());
    }
    Ok(h)
}

/// The header of `path`, the reader left at the first byte after it, and the header's length.
fn read_header<'a>(
    path: &Path,
    ctl: &Control<'a>,
) -> Result<(super::FileReader<'a>, Header, u64), FormatError> {
    let mut r = open_file(path, ctl)?;
    let mut text = String::new();
    let mut consumed = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let k = r.read_until(b'\n', &mut line).map_err(|e| e.to_string())?;
        if k == 0 || consumed > 1 << 20 {
            break;
        }
        consumed += k as u64;
        if !super::is_text_line(&line) {
            return Err(format!(
                "binary data after {} header lines before an ElementDataFile line (it must end the header)",
                text.lines().count()
            )
            .into());
        }
        let l = String::from_utf8_lossy(&line).into_owned();
        text.push_str(&l);
        if l.trim_start().starts_with("ElementDataFile") {
            break;
        }
    }
    Ok((r, parse_header(&text)?, consumed))
}

pub fn read(path: &Path, ctl: &Control) -> Result<ScalarField, FormatError> {
    let (r, h, consumed) = read_header(path, ctl)?;
    // Channels are stored with the voxel: `channels` values each.
    let n = check_dims(&h.dims)? * h.channels;
    let mut notes = Vec::new();
    let need = (n * h.dtype.size()) as u64;
    let (mut data, available): (Box<dyn BufRead>, u64) = if h.data_file == "LOCAL" {
        let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
        (Box::new(r), len.saturating_sub(consumed))
    } else {
        let p = super::detached(path, &h.data_file, &mut notes)?;
        let len = std::fs::metadata(&p)
            .map_err(|e| format!("data file {}: {}", p.display(), super::io_message(&e)))?
            .len();
        (Box::new(open_file(&p, ctl)?), len)
    };
    let skip_bytes = if h.header_size == -1 {
        available
            .checked_sub(need)
            .ok_or_else(|| format!("truncated: expected {need} bytes of voxel data, found {available}"))?
    } else {
        h.header_size as u64
    };
    skip(&mut data, skip_bytes, "HeaderSize bytes")?;
    let samples = if h.compressed {
        super::check_inflatable(need, available.saturating_sub(skip_bytes))?;
        let mut z = ctl.guard(ZlibDecoder::new(data));
        let samples = read_samples(&mut z, h.dtype, n, h.endian)?;
        super::finish_compressed(&mut z)?;
        samples
    } else {
        read_samples(&mut data, h.dtype, n, h.endian)?
    };
    // MetaImage names no kind of channel: three or four are taken as colour (ITK writes RGB
    // and RGBA images so).
    let samples = super::one_channel(samples, h.channels, true, &mut notes);
    let spacing = super::spacing_or_unit(h.spacing.as_deref(), h.dims.len(), &mut notes);
    let mut field = make_field(&h.dims, samples, spacing)?;
    field.notes = notes;
    Ok(field)
}

/// Where the samples are stored uncompressed, for readers that stream them ([`super::block`]);
/// `None` when they are compressed or hold several channels.
pub fn stored(path: &Path) -> Result<Option<super::Stored>, FormatError> {
    let (_, h, consumed) = read_header(path, &Control::default())?;
    check_dims(&h.dims)?;
    if h.compressed || h.channels > 1 {
        return Ok(None);
    }
    let mut notes = Vec::new();
    let (data, start) = if h.data_file == "LOCAL" {
        (path.to_path_buf(), consumed)
    } else {
        (super::detached(path, &h.data_file, &mut notes)?, 0)
    };
    let spacing = super::spacing_or_unit(h.spacing.as_deref(), h.dims.len(), &mut notes);
    Ok(Some(super::Stored {
        dims: h.dims,
        dtype: h.dtype,
        endian: h.endian,
        data,
        start,
        skip: h.header_size,
        spacing,
        notes,
    }))
}
