//! NRRD (`.nrrd` with attached data, `.nhdr` with a detached data file): raw, gzip and ascii
//! encodings, 1 to 3 axes, spacing from `spacings` or the lengths of `space directions`. A first
//! axis whose `kinds` entry is not spatial (`RGB-color`, `vector`, ...) holds channels, made one
//! value per voxel by [`super::one_channel`].

use super::FormatError;
use super::{Endian, check_dims, make_field, open_file, read_samples, skip};
use crate::control::Control;
use crate::field::{Dtype, Samples, ScalarField};
use flate2::read::MultiGzDecoder;
use std::io::BufRead;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Raw,
    Gzip,
    Ascii,
}

/// The fields of a NRRD header that topoview uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub dtype: Dtype,
    pub dims: Vec<usize>,
    pub encoding: Encoding,
    pub endian: Endian,
    pub spacing: Option<Vec<f64>>,
    /// Detached data file as written in the header (relative to the header's folder).
    pub data_file: Option<String>,
    /// Bytes to skip before the data; -1 (raw only) means "the data end the file".
    pub byte_skip: i64,
    pub line_skip: u64,
    /// Values per voxel: the size of a first axis of channels (`kinds`), else 1. `dims` and
    /// `spacing` leave that axis out.
    pub channels: usize,
    /// Whether those channels are colours (`RGB-color`, `RGBA-color`, `3-color`, `4-color`).
    pub colour: bool,
}

/// Whether a `kinds` entry names an axis of space or time (else it holds channels).
fn spatial_kind(kind: &str) -> bool {
    matches!(kind, "domain" | "space" | "time" | "none" | "???")
}

fn dtype(name: &str) -> Result<Dtype, FormatError> {
    Ok(match name {
        "uchar" | "unsigned char" | "uint8" | "uint8_t" => Dtype::U8,
        "signed char" | "int8" | "int8_t" => Dtype::I8,
        "short" | "short int" | "signed short" | "signed short int" | "int16" | "int16_t" => Dtype::I16,
        "ushort" | "unsigned short" | "unsigned short int" | "uint16" | "uint16_t" => Dtype::U16,
        "int" | "signed int" | "int32" | "int32_t" => Dtype::I32,
        "uint" | "unsigned int" | "uint32" | "uint32_t" => Dtype::U32,
        "float" => Dtype::F32,
        "double" => Dtype::F64,
        "block" => return Err("type 'block' is not supported".into()),
        _ if name.contains("long") || name.contains("64") => {
            return Err(format!("type '{name}' (64-bit integer) is not supported").into());
        }
        _ => return Err(format!("unknown NRRD type '{name}'").into()),
    })
}

/// Parses the header lines (everything up to the blank line that precedes attached data).
pub fn parse_header(text: &str) -> Result<Header, FormatError> {
    let mut lines = text.lines();
    let magic = lines.next().unwrap_or("");
    if !magic.starts_with("NRRD000") {
        return Err("not a NRRD file (no NRRD000x magic)".into());
    }
    let (mut ty, mut dimension, mut sizes, mut encoding) = (None, None, None, None);
    let mut h = Header {
        dtype: Dtype::U8,
        dims: Vec::new(),
        encoding: Encoding::Raw,
        endian: Endian::Little,
        spacing: None,
        data_file: None,
        byte_skip: 0,
        line_skip: 0,
        channels: 1,
        colour: false,
    };
    let mut endian = None;
    let mut directions = None;
    let mut kinds: Option<Vec<String>> = None;
    for line in lines {
        if line.is_empty() {
            break;
        }
        if line.starts_with('#') || line.contains(":=") {
            continue;
        }
        let Some((key, value)) = line.split_once(": ") else {
            return Err(format!("bad header line '{}'", line.chars().take(60).collect::<String>()).into());
        };
        let value = value.trim();
        match key.to_ascii_lowercase().as_str() {
            "type" => ty = Some(dtype(value)?),
            "dimension" => {
                dimension = Some(value.parse::<usize>().map_err(|_| format!("bad dimension '{value}'"))?)
            }
            "sizes" => {
                let s: Result<Vec<usize>, _> = value.split_whitespace().map(str::parse).collect();
                sizes = Some(s.map_err(|_| format!("bad sizes '{value}'"))?);
            }
            "encoding" => {
                encoding = Some(match value {
                    "raw" => Encoding::Raw,
                    "gzip" | "gz" => Encoding::Gzip,
                    "ascii" | "text" | "txt" => Encoding::Ascii,
                    _ => {
                        return Err(
                            format!("encoding '{value}' is not supported (raw, gzip, ascii are)").into()
                        );
                    }
                })
            }
            "endian" => {
                endian = Some(match value {
                    "little" => Endian::Little,
                    "big" => Endian::Big,
                    _ => return Err(format!("bad endian '{value}'").into()),
                })
            }
            "spacings" => {
                let s: Result<Vec<f64>, _> = value.split_whitespace().map(str::parse).collect();
                h.spacing = Some(s.map_err(|_| format!("bad spacings '{value}'"))?);
            }
            "space directions" => directions = Some(parse_directions(value)?),
            "kinds" => kinds = Some(value.split_whitespace().map(str::to_string).collect()),
            "data file" | "datafile" => {
                if value.starts_with("LIST") || value.contains('%') {
                    return Err("multi-file data ('data file: LIST' or a pattern) is not supported".into());
                }
                h.data_file = Some(value.to_string());
            }
            "byte skip" | "byteskip" => {
                h.byte_skip = value.parse().map_err(|_| format!("bad byte skip '{value}'"))?;
                if h.byte_skip < -1 {
                    return Err(format!("bad byte skip {}", h.byte_skip).into());
                }
            }
            "line skip" | "lineskip" => {
                h.line_skip = value.parse().map_err(|_| format!("bad line skip '{value}'"))?
            }
            _ => {}
        }
    }
    h.dtype = ty.ok_or("header has no 'type' field")?;
    let dimension = dimension.ok_or("header has no 'dimension' field")?;
    h.dims = sizes.ok_or("header has no 'sizes' field")?;
    h.encoding = encoding.ok_or("header has no 'encoding' field")?;
    if h.dims.len() != dimension {
        return Err(format!("dimension {dimension} but {} sizes", h.dims.len()).into());
    }
    let channel_axis = match kinds {
        Some(k) if k.len() != dimension => {
            return Err(format!("dimension {dimension} but {} kinds", k.len()).into());
        }
        Some(k) => match k.iter().position(|k| !spatial_kind(k)) {
            Some(0) if dimension > 1 => {
                if let Some(a) = k.iter().skip(1).position(|k| !spatial_kind(k)) {
                    return Err(
                        format!("axes 0 and {} both hold channels (kinds {})", a + 1, k.join(" ")).into()
                    );
                }
                h.colour = matches!(k[0].as_str(), "RGB-color" | "RGBA-color" | "3-color" | "4-color");
                true
            }
            Some(a) if dimension > 1 => {
                return Err(format!(
                    "axis {a} holds channels (kind {}): topoview reads channels on the first axis only",
                    k[a]
                )
                .into());
            }
            _ => false,
        },
        None => false,
    };
    if h.dtype.size() > 1 && h.encoding != Encoding::Ascii {
        h.endian = endian.ok_or("header has no 'endian' field for multi-byte samples")?;
    }
    if h.byte_skip == -1 && h.encoding != Encoding::Raw {
        return Err("byte skip -1 is only allowed with raw encoding".into());
    }
    if let Some(dirs) = directions {
        if dirs.len() != dimension {
            return Err(format!("{} space directions for {dimension} axes", dirs.len()).into());
        }
        h.spacing = Some(
            dirs.iter()
                .map(|d| d.as_ref().map_or(f64::NAN, |v| v.iter().map(|x| x * x).sum::<f64>().sqrt()))
                .collect(),
        );
    }
    if channel_axis {
        h.channels = h.dims.remove(0);
        if let Some(s) = h.spacing.as_mut().filter(|s| s.len() == dimension) {
            s.remove(0);
        }
    }
    let n = check_dims(&h.dims)?;
    if n.checked_mul(h.channels).and_then(|v| v.checked_mul(h.dtype.size())).is_none() {
        return Err(format!("{n} voxels of {} channels overflow", h.channels).into());
    }
    Ok(h)
}

/// `(1,0,0) (0,1,0) none` into vectors (None for non-spatial axes).
fn parse_directions(value: &str) -> Result<Vec<Option<Vec<f64>>>, String> {
    value
        .split_whitespace()
        .map(|t| {
            if t == "none" {
                return Ok(None);
            }
            let inner = t
                .strip_prefix('(')
                .and_then(|t| t.strip_suffix(')'))
                .ok_or(format!("bad space direction '{t}'"))?;
            let v: Result<Vec<f64>, _> = inner.split(',').map(|x| x.trim().parse::<f64>()).collect();
            v.map(Some).map_err(|_| format!("bad space direction '{t}'"))
        })
        .collect()
}

/// The header of `path`, the reader left at the first byte after it, the header's length in
/// bytes, and whether it ended with the blank line that starts attached data.
fn read_header<'a>(
    path: &Path,
    ctl: &Control<'a>,
) -> Result<(super::FileReader<'a>, Header, u64, bool), FormatError> {
    let mut r = open_file(path, ctl)?;
    let mut text = String::new();
    let mut line = Vec::new();
    let mut blank = false;
    let mut consumed = 0u64; // header bytes, for `byte skip: -1`
    while text.len() < 1 << 20 {
        line.clear();
        let k = r.read_until(b'\n', &mut line).map_err(|e| e.to_string())?;
        if k == 0 {
            break;
        }
        consumed += k as u64;
        if !super::is_text_line(&line) {
            return Err(format!(
                "the header ends without the blank line that separates it from the data (binary data \
                 after {} header lines)",
                text.lines().count()
            )
            .into());
        }
        let l = String::from_utf8_lossy(&line);
        let l = l.trim_end_matches(['\n', '\r']);
        if l.is_empty() {
            blank = true;
            break;
        }
        text.push_str(l);
        text.push('\n');
    }
    Ok((r, parse_header(&text)?, consumed, blank))
}

pub fn read(path: &Path, ctl: &Control) -> Result<ScalarField, FormatError> {
    let (r, h, consumed, blank) = read_header(path, ctl)?;
    let n = check_dims(&h.dims)?;
    let mut notes = Vec::new();
    // Channels are stored with the voxel: `channels` values each.
    let n = n * h.channels;
    let samples = match &h.data_file {
        Some(f) => {
            let data_path: PathBuf = super::detached(path, f, &mut notes)?;
            let d = open_file(&data_path, ctl).map_err(|e| format!("data file: {e}"))?;
            let len = super::file_len(&data_path);
            read_data(d, &h, n, len, ctl).map_err(|e| format!("data file {}: {e}", data_path.display()))?
        }
        None if !blank => return Err("header has no data file and no attached data".into()),
        None => {
            let available = super::file_len(path).saturating_sub(consumed);
            read_data(r, &h, n, available, ctl)?
        }
    };
    let samples = super::one_channel(samples, h.channels, h.colour, &mut notes);
    let spacing = super::spacing_or_unit(h.spacing.as_deref(), h.dims.len(), &mut notes);
    let mut field = make_field(&h.dims, samples, spacing)?;
    field.notes = notes;
    Ok(field)
}

/// Where the samples are stored uncompressed (raw encoding, no skipped lines), for readers that
/// stream them ([`super::block`]); `None` when they are not stored so.
pub fn stored(path: &Path) -> Result<Option<super::Stored>, FormatError> {
    let (_, h, consumed, blank) = read_header(path, &Control::default())?;
    check_dims(&h.dims)?;
    if h.encoding != Encoding::Raw || h.line_skip != 0 || h.channels > 1 {
        return Ok(None);
    }
    let mut notes = Vec::new();
    let (data, start) = match &h.data_file {
        Some(f) => (super::detached(path, f, &mut notes)?, 0),
        None if blank => (path.to_path_buf(), consumed),
        None => return Ok(None),
    };
    let spacing = super::spacing_or_unit(h.spacing.as_deref(), h.dims.len(), &mut notes);
    Ok(Some(super::Stored {
        dims: h.dims,
        dtype: h.dtype,
        endian: h.endian,
        data,
        start,
        skip: h.byte_skip,
        spacing,
        notes,
    }))
}

/// Reads the samples from a stream positioned at the data; `available` is the number of bytes
/// the stream holds (for `byte skip: -1`, and to judge the header's claim before reading).
fn read_data(
    mut r: impl BufRead,
    h: &Header,
    n: usize,
    available: u64,
    ctl: &Control,
) -> Result<Samples, FormatError> {
    for _ in 0..h.line_skip {
        let mut l = Vec::new();
        if r.read_until(b'\n', &mut l).map_err(|e| e.to_string())? == 0 {
            return Err("data end inside the skipped lines".into());
        }
    }
    match h.encoding {
        Encoding::Raw => {
            if h.byte_skip == -1 {
                let need = (n * h.dtype.size()) as u64;
                let have = available;
                let extra = have
                    .checked_sub(need)
                    .ok_or_else(|| format!("truncated: expected {need} bytes of voxel data, found {have}"))?;
                skip(&mut r, extra, "the skipped bytes")?;
            } else {
                skip(&mut r, h.byte_skip as u64, "the skipped bytes")?;
            }
            read_samples(&mut r, h.dtype, n, h.endian)
        }
        Encoding::Gzip => {
            super::check_inflatable((n * h.dtype.size()) as u64, available)?;
            let mut z = ctl.guard(MultiGzDecoder::new(r));
            skip(&mut z, h.byte_skip as u64, "the skipped bytes")?;
            let samples = read_samples(&mut z, h.dtype, n, h.endian).map_err(|e| match e {
                FormatError::Invalid(m) if m.contains("invalid") || m.contains("corrupt") => {
                    format!("bad gzip data: {m}").into()
                }
                e => e,
            })?;
            super::finish_compressed(&mut z)?;
            Ok(samples)
        }
        Encoding::Ascii => {
            // Each sample takes a character and a separator, the last no separator.
            if (n as u64).saturating_mul(2) > available + 1 {
                return Err(format!(
                    "truncated: {n} ascii samples need at least {} bytes, the data have {available}",
                    2 * n as u64 - 1
                )
                .into());
            }
            skip(&mut r, h.byte_skip as u64, "the skipped bytes")?;
            read_ascii(r, h.dtype, n)
        }
    }
}

/// Whitespace- or comma-separated numbers.
/// Parses `n` numbers separated by white space or commas, reading the text a piece at a time
/// (never the whole file at once) and stopping at the `n`-th.
fn read_ascii(mut r: impl BufRead, dtype: Dtype, n: usize) -> Result<Samples, FormatError> {
    let mut vals = Vec::with_capacity(n.min(1 << 24));
    let mut token = Vec::new();
    let separator = |b: u8| b.is_ascii_whitespace() || b == b',';
    let push = |token: &mut Vec<u8>, vals: &mut Vec<f64>| -> Result<(), FormatError> {
        if !token.is_empty() && vals.len() < n {
            let t = String::from_utf8_lossy(token);
            vals.push(t.parse::<f64>().map_err(|_| format!("bad ascii sample '{t}'"))?);
        }
        token.clear();
        Ok(())
    };
    while vals.len() < n {
        let buf = r.fill_buf().map_err(|e| FormatError::read(&e, "ascii data"))?;
        if buf.is_empty() {
            break;
        }
        let used = buf.len();
        for &b in buf {
            if separator(b) {
                push(&mut token, &mut vals)?;
            } else if token.len() < 64 {
                token.push(b);
            } else {
                return Err("an ascii sample of more than 64 characters".into());
            }
        }
        r.consume(used);
    }
    push(&mut token, &mut vals)?;
    if vals.len() < n {
        return Err(format!("truncated: expected {n} ascii samples, found {}", vals.len()).into());
    }
    super::samples_from_f64(dtype, &vals)
}
