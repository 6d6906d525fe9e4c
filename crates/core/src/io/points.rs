//! Point clouds and distance matrices, for Vietoris-Rips persistence: text tables of N rows of
//! D numbers (`.csv`, `.tsv`, `.txt`, `.xyz`, Ripser's `.point_cloud`), NumPy `.npy` (2D,
//! float or integer), PLY (ASCII or binary; the vertices' x, y and z), and Ripser's distance
//! formats: the lower triangle row by row (`lower-distance`) or the full matrix (`distance`,
//! whose lower triangle is used, as Ripser does). Every error names the file and, in text, the
//! line (or the point or distance, for values Rips persistence cannot take).

use super::{FormatError, ReadError, io_message};
use crate::control::Control;
use crate::topo::rips::{Distances, RipsError};
use std::io::Read;
use std::path::Path;

/// How to read a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PointFormat {
    /// From the name: `.npy`, `.ply`, `*lower_distance*`, `*distance_matrix*`, else a
    /// point-cloud table.
    #[default]
    Auto,
    PointCloud,
    LowerDistance,
    Distance,
    Npy,
    Ply,
}

impl PointFormat {
    pub fn parse(s: &str) -> Option<PointFormat> {
        Some(match s {
            "auto" => PointFormat::Auto,
            "point-cloud" => PointFormat::PointCloud,
            "lower-distance" => PointFormat::LowerDistance,
            "distance" => PointFormat::Distance,
            "npy" => PointFormat::Npy,
            "ply" => PointFormat::Ply,
            _ => return None,
        })
    }

    /// The format `Auto` takes for `path`.
    pub fn of(path: &Path) -> PointFormat {
        let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
        if name.ends_with(".npy") {
            PointFormat::Npy
        } else if name.ends_with(".ply") {
            PointFormat::Ply
        } else if name.contains("lower_distance") || name.contains("lower-distance") {
            PointFormat::LowerDistance
        } else if name.contains("distance_matrix") || name.contains("distance-matrix") {
            PointFormat::Distance
        } else {
            PointFormat::PointCloud
        }
    }
}

/// What a file holds.
#[derive(Clone, Debug, PartialEq)]
pub enum PointData {
    /// `coords.len() / dim` points of `dim` coordinates each, row after row.
    Points { coords: Vec<f64>, dim: usize },
    /// The lower triangle of a distance matrix, row by row (row 0 is empty).
    LowerDistances(Vec<f64>),
}

impl PointData {
    /// How many points it holds.
    pub fn count(&self) -> usize {
        match self {
            PointData::Points { coords, dim } => coords.len() / (*dim).max(1),
            // n (n - 1) / 2 distances below the diagonal.
            PointData::LowerDistances(d) => {
                ((1.0 + (1.0 + 8.0 * d.len() as f64).sqrt()) / 2.0).round() as usize
            }
        }
    }
}

/// The most a file may be: its numbers are held as `f64` (8 bytes per number, about 2 to 20
/// characters each), so 4 GiB of text is tens of GiB in memory.
const MAX_BYTES: u64 = 4 << 30;

/// Reads a point cloud or distance matrix (cancellable between reads; progress in bytes).
pub fn read(path: &Path, format: PointFormat, ctl: &Control) -> Result<PointData, ReadError> {
    let err = |e: FormatError| ReadError::of(path, e);
    let meta = super::regular_file(path).map_err(|why| err(why.into()))?;
    if meta.len() == 0 {
        return Err(err("empty file (0 bytes)".into()));
    }
    if meta.len() > MAX_BYTES {
        return Err(err(format!(
            "{} bytes: larger than the {} GiB point files may be",
            meta.len(),
            MAX_BYTES >> 30
        )
        .into()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    let file = std::fs::File::open(path).map_err(|e| err(io_message(&e).into()))?;
    ctl.watch(file).read_to_end(&mut bytes).map_err(|e| err(FormatError::read(&e, "reading")))?;
    let format = if format == PointFormat::Auto { PointFormat::of(path) } else { format };
    let data = match format {
        PointFormat::Npy => npy(&bytes),
        PointFormat::Ply => ply(&bytes),
        text_format => {
            let text = std::str::from_utf8(&bytes).map_err(|e| {
                err(format!(
                    "not text (byte {} is not UTF-8); .npy and .ply files are read by their extension",
                    e.valid_up_to()
                )
                .into())
            })?;
            // A byte order mark (spreadsheets write one) is not part of the first number.
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            match text_format {
                PointFormat::LowerDistance => lower_distance(text),
                PointFormat::Distance => full_distance(text),
                _ => table(text),
            }
        }
    };
    let data = data.map_err(err)?;
    check(&data).map_err(err)?;
    Ok(data)
}

/// Values Rips persistence cannot take: no points, NaN or infinite coordinates, negative or
/// non-finite distances.
fn check(data: &PointData) -> Result<(), FormatError> {
    match data {
        PointData::Points { coords, dim } => {
            if coords.is_empty() {
                return Err("no points".into());
            }
            if let Some(i) = coords.iter().position(|x| !x.is_finite()) {
                return Err(FormatError::Invalid(format!(
                    "point {} (row {}) has coordinate {}: coordinates must be finite",
                    i / dim,
                    i / dim + 1,
                    coords[i]
                )));
            }
        }
        PointData::LowerDistances(l) => {
            if let Some(i) = l.iter().position(|d| !d.is_finite() || *d < 0.0) {
                return Err(FormatError::Invalid(format!(
                    "distance number {} is {}: distances must be finite and non-negative",
                    i + 1,
                    l[i]
                )));
            }
        }
    }
    Ok(())
}

/// The numbers of one line: separated by commas, semicolons or white space. A line with both
/// semicolons and commas is refused: spreadsheets in many languages write `1,5;2,5` for 1.5
/// and 2.5, which read with commas as separators would be four numbers.
fn numbers(line: &str, at: usize) -> Result<Vec<f64>, FormatError> {
    if line.contains(';') && line.contains(',') {
        return Err(FormatError::Invalid(format!(
            "line {at} has both ';' and ',': decimal commas are not read (write 1.5, not 1,5); \
             numbers are separated by commas, semicolons or white space"
        )));
    }
    line.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<f64>().map_err(|_| FormatError::Invalid(format!("line {at}: '{t}' is not a number")))
        })
        .collect()
}

/// The lines that hold data: not empty, not `#` comments.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// A table of points: one per line, all with the same number of coordinates; a first line
/// none of whose fields is a number is a header (`x,y,z`). A first line with some numbers and
/// some words is an error, not a header: `0x10,1` is a point written wrongly.
fn table(text: &str) -> Result<PointData, FormatError> {
    let mut coords = Vec::new();
    let mut dim = None;
    for (k, (at, line)) in data_lines(text).enumerate() {
        let row = match numbers(line, at) {
            Ok(r) => r,
            Err(_) if k == 0 && is_header(line) => continue,
            Err(e) => return Err(e),
        };
        match dim {
            None => dim = Some(row.len()),
            Some(d) if d != row.len() => {
                return Err(FormatError::Invalid(format!(
                    "line {at} has {} numbers where the rows before have {d}",
                    row.len()
                )));
            }
            _ => {}
        }
        coords.extend(row);
    }
    let dim = dim.ok_or("no rows of numbers")?;
    Ok(PointData::Points { coords, dim })
}

/// Whether a table's first line is column names: no field of it is a number, and it is not a
/// line of mixed separators (which `numbers` explains).
fn is_header(line: &str) -> bool {
    !(line.contains(';') && line.contains(','))
        && line
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .all(|t| t.parse::<f64>().is_err())
}

/// Ripser's lower-distance format: every number in order, any separators (whether their
/// count is triangular is judged with the distances, by `topo::rips::Distances::from_lower`).
fn lower_distance(text: &str) -> Result<PointData, FormatError> {
    let mut all = Vec::new();
    for (at, line) in data_lines(text) {
        all.extend(numbers(line, at)?);
    }
    if all.is_empty() {
        return Err("no distances (a lower-triangular matrix of at least 2 points has some)".into());
    }
    Ok(PointData::LowerDistances(all))
}

/// A full distance matrix, one row per line: square; the lower triangle is used.
fn full_distance(text: &str) -> Result<PointData, FormatError> {
    let rows: Vec<(usize, Vec<f64>)> =
        data_lines(text).map(|(at, l)| numbers(l, at).map(|r| (at, r))).collect::<Result<_, _>>()?;
    let n = rows.len();
    let mut lower = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for (i, (at, row)) in rows.iter().enumerate() {
        if row.len() != n {
            return Err(FormatError::Invalid(format!(
                "line {at} has {} numbers: a distance matrix of {n} rows has {n} in each",
                row.len()
            )));
        }
        lower.extend_from_slice(&row[..i]);
    }
    if n == 0 {
        return Err("no rows of numbers".into());
    }
    Ok(PointData::LowerDistances(lower))
}

/// NumPy's format: a magic string, a header (a Python dict literal) and the array, here 1D
/// (points on a line) or 2D (rows of points), little-endian floats or integers, C or Fortran
/// order.
fn npy(b: &[u8]) -> Result<PointData, FormatError> {
    if !b.starts_with(b"\x93NUMPY") || b.len() < 10 {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (len, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        v => {
            return Err(FormatError::Invalid(format!(
                ".npy version {v} is not one topoview reads (1, 2, 3)"
            )));
        }
    };
    let header = b.get(start..start + len).ok_or("the .npy header runs past the end of the file")?;
    let header = String::from_utf8_lossy(header);
    let field = |key: &str| -> Option<String> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        if let Some(r) = rest.strip_prefix('(') {
            r.find(')').map(|e| r[..e].to_string())
        } else if let Some(r) = rest.strip_prefix('\'') {
            r.find('\'').map(|e| r[..e].to_string())
        } else {
            Some(rest.split([',', '}']).next().unwrap_or("").trim().to_string())
        }
    };
    let descr = field("descr").ok_or("the .npy header has no 'descr'")?;
    let fortran = match field("fortran_order").ok_or("the .npy header has no 'fortran_order'")?.as_str() {
        "True" => true,
        "False" => false,
        // numpy itself refuses anything else (`1`, `'yes'`): no order is guessed.
        v => {
            return Err(FormatError::Invalid(format!(
                "the .npy header's 'fortran_order' is {v}, not True or False"
            )));
        }
    };
    let shape: Vec<usize> = field("shape")
        .ok_or("the .npy header has no 'shape'")?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|_| format!("the .npy shape has '{s}'")))
        .collect::<Result<_, _>>()?;
    let (n, dim) = match shape[..] {
        [n] => (n, 1),
        [n, d] => (n, d),
        _ => {
            return Err(FormatError::Invalid(format!(
                "a .npy array of shape {shape:?}: points are a 2D array (rows of coordinates)"
            )));
        }
    };
    if dim == 0 {
        return Err("a .npy array with 0 columns: points need coordinates".into());
    }
    let size = match descr.as_str() {
        "<f8" | "<i8" | "<u8" => 8,
        "<f4" | "<i4" | "<u4" => 4,
        "<i2" | "<u2" => 2,
        "|u1" | "|i1" => 1,
        d => {
            return Err(FormatError::Invalid(format!(
                "a .npy array of dtype '{d}': topoview reads little-endian floats and integers"
            )));
        }
    };
    let count = n.checked_mul(dim).ok_or("the .npy shape overflows")?;
    let data = &b[start + len..];
    if count.checked_mul(size) != Some(data.len()) {
        return Err(FormatError::Invalid(format!(
            "the .npy data is {} bytes where shape {shape:?} of '{descr}' needs {}",
            data.len(),
            count.saturating_mul(size)
        )));
    }
    let value = |i: usize| -> f64 {
        let c = &data[i * size..(i + 1) * size];
        match descr.as_str() {
            "<f8" => f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
            "<i8" => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            "<u8" => u64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            "<f4" => f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
            "<i4" => i32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
            "<u4" => u32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
            "<i2" => i16::from_le_bytes(c.try_into().unwrap_or([0; 2])) as f64,
            "<u2" => u16::from_le_bytes(c.try_into().unwrap_or([0; 2])) as f64,
            "|i1" => c[0] as i8 as f64,
            _ => c[0] as f64,
        }
    };
    // Fortran order stores columns one after another.
    let coords =
        (0..count).map(|k| if fortran { value((k % dim) * n + k / dim) } else { value(k) }).collect();
    Ok(PointData::Points { coords, dim })
}

/// Where a PLY header ends: the bytes before its `end_header` line, and the body after it.
/// The line must be `end_header` itself: a comment that mentions it ends nothing.
fn ply_header(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut start = 0;
    while start < b.len() {
        let end = b[start..].iter().position(|&c| c == b'\n').map(|i| start + i)?;
        let line = &b[start..end];
        if line.strip_suffix(b"\r").unwrap_or(line) == b"end_header" {
            return Some((&b[..start], &b[end + 1..]));
        }
        start = end + 1;
    }
    None
}

/// A PLY file's vertices: x, y (and z when present) of the first element, `vertex`.
fn ply(b: &[u8]) -> Result<PointData, FormatError> {
    let (header, body) = ply_header(b).ok_or("not a PLY file (no end_header line)")?;
    let header = String::from_utf8_lossy(header);
    let mut lines = header.lines().map(str::trim);
    if lines.next() != Some("ply") {
        return Err("not a PLY file (its first line is not 'ply')".into());
    }
    let mut format = None;
    let mut count = None;
    let mut props: Vec<(String, String)> = Vec::new();
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["format", f, _] => format = Some(f.to_string()),
            ["element", "vertex", c] if count.is_none() && props.is_empty() => {
                count =
                    Some(c.parse::<usize>().map_err(|_| format!("PLY vertex count '{c}' is not a number"))?);
            }
            ["element", name, _] if count.is_none() => {
                return Err(FormatError::Invalid(format!(
                    "PLY element '{name}' comes before 'vertex': topoview reads files whose first element is the vertices"
                )));
            }
            ["element", ..] => break,
            ["property", "list", ..] => {
                return Err("PLY vertices with a list property: not a point cloud topoview reads".into());
            }
            ["property", t, name] if count.is_some() => props.push((t.to_string(), name.to_string())),
            _ => {}
        }
    }
    let n = count.ok_or("the PLY file has no vertex element")?;
    let format = format.ok_or("the PLY header has no format line")?;
    let size = |t: &str| -> Result<usize, FormatError> {
        Ok(match t {
            "char" | "uchar" | "int8" | "uint8" => 1,
            "short" | "ushort" | "int16" | "uint16" => 2,
            "int" | "uint" | "float" | "int32" | "uint32" | "float32" => 4,
            "double" | "float64" => 8,
            _ => return Err(FormatError::Invalid(format!("PLY property type '{t}' is unknown"))),
        })
    };
    let sizes: Vec<usize> = props.iter().map(|(t, _)| size(t)).collect::<Result<_, _>>()?;
    let axes: Vec<usize> =
        ["x", "y", "z"].iter().filter_map(|a| props.iter().position(|(_, n)| n == a)).collect();
    if axes.len() < 2 || props.iter().position(|(_, n)| n == "x") != Some(axes[0]) {
        return Err("the PLY vertices have no x and y properties".into());
    }
    let dim = axes.len();
    // The header's count is checked against the data below: reserve no more than the data holds.
    let mut coords = Vec::with_capacity(n.min(body.len()).saturating_mul(dim));
    match format.as_str() {
        "ascii" => {
            let text = String::from_utf8_lossy(body);
            let mut rows = text.lines().map(str::trim).filter(|l| !l.is_empty());
            for v in 0..n {
                let row =
                    rows.next().ok_or_else(|| format!("the PLY file ends after {v} of its {n} vertices"))?;
                let vals = numbers(row, v + 1).map_err(|e| format!("PLY vertex {e}"))?;
                if vals.len() < props.len() {
                    return Err(FormatError::Invalid(format!(
                        "PLY vertex {v} has {} values where the header lists {}",
                        vals.len(),
                        props.len()
                    )));
                }
                coords.extend(axes.iter().map(|&a| vals[a]));
            }
        }
        "binary_little_endian" | "binary_big_endian" => {
            let big = format == "binary_big_endian";
            let stride: usize = sizes.iter().sum();
            let need = n.checked_mul(stride).ok_or("the PLY vertex count overflows")?;
            if body.len() < need {
                return Err(FormatError::Invalid(format!(
                    "the PLY file ends after {} of its {n} vertices",
                    body.len() / stride.max(1)
                )));
            }
            let offsets: Vec<usize> = sizes
                .iter()
                .scan(0, |o, s| {
                    let at = *o;
                    *o += s;
                    Some(at)
                })
                .collect();
            for v in 0..n {
                for &a in &axes {
                    let at = v * stride + offsets[a];
                    let mut c = body[at..at + sizes[a]].to_vec();
                    if big {
                        c.reverse();
                    }
                    coords.push(scalar(&props[a].0, &c));
                }
            }
        }
        f => return Err(FormatError::Invalid(format!("PLY format '{f}' is unknown"))),
    }
    Ok(PointData::Points { coords, dim })
}

/// One little-endian PLY scalar of type `t` as `f64`.
fn scalar(t: &str, c: &[u8]) -> f64 {
    let a = |n: usize| -> [u8; 8] {
        let mut x = [0u8; 8];
        x[..n].copy_from_slice(&c[..n]);
        x
    };
    match t {
        "char" | "int8" => c[0] as i8 as f64,
        "uchar" | "uint8" => c[0] as f64,
        "short" | "int16" => i16::from_le_bytes([c[0], c[1]]) as f64,
        "ushort" | "uint16" => u16::from_le_bytes([c[0], c[1]]) as f64,
        "int" | "int32" => i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
        "uint" | "uint32" => u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
        "float" | "float32" => f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
        _ => f64::from_le_bytes(a(8)),
    }
}

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
            let points = if d.len() == 1 { "point" } else { "points" };
            format!("{} {points} in {dim} dimension{}", d.len(), if *dim == 1 { "" } else { "s" })
        }
        PointData::LowerDistances(_) => format!("{0} x {0} distance matrix", d.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_bytes(name: &str, bytes: &[u8]) -> Result<PointData, ReadError> {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        read(&path, PointFormat::Auto, &Control::default())
    }

    fn points(coords: &[f64], dim: usize) -> PointData {
        PointData::Points { coords: coords.to_vec(), dim }
    }

    #[test]
    fn tables_with_headers_commas_tabs_and_comments() {
        let csv = read_bytes("p.csv", b"x,y,z\n1,2,3\n# note\n\n4.5, -6, 7e1\n").unwrap();
        assert_eq!(csv, points(&[1.0, 2.0, 3.0, 4.5, -6.0, 70.0], 3));
        let xyz = read_bytes("p.xyz", b"1\t2\n3   4\n").unwrap();
        assert_eq!(xyz, points(&[1.0, 2.0, 3.0, 4.0], 2));
    }

    #[test]
    fn distance_matrices_in_ripsers_two_forms() {
        let lower = read_bytes("a.lower_distance_matrix", b"\n1,\n2,3,\n").unwrap();
        assert_eq!(lower, PointData::LowerDistances(vec![1.0, 2.0, 3.0]));
        let full = read_bytes("a.distance_matrix", b"0 1 2\n1 0 3\n2 3 0\n").unwrap();
        assert_eq!(full, PointData::LowerDistances(vec![1.0, 2.0, 3.0]));
    }

    #[test]
    fn npy_in_c_and_fortran_order() {
        let npy = |descr: &str, fortran: bool, data: &[u8]| {
            let mut h = format!(
                "{{'descr': '{descr}', 'fortran_order': {}, 'shape': (2, 3), }}",
                if fortran { "True" } else { "False" }
            );
            while (10 + h.len() + 1) % 64 != 0 {
                h.push(' ');
            }
            h.push('\n');
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend((h.len() as u16).to_le_bytes());
            b.extend(h.as_bytes());
            b.extend(data);
            b
        };
        let c: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            read_bytes("p.npy", &npy("<f8", false, &c)).unwrap(),
            points(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3)
        );
        let f: Vec<u8> = [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            read_bytes("p.npy", &npy("<f4", true, &f)).unwrap(),
            points(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3)
        );
        let e = read_bytes("p.npy", &npy("<f8", false, &c[..40])).unwrap_err().to_string();
        assert!(e.contains("p.npy") && e.contains("40 bytes"), "{e}");
        let e = read_bytes("p.npy", &npy(">f8", false, &c)).unwrap_err().to_string();
        assert!(e.contains("little-endian"), "{e}");
    }

    #[test]
    fn ply_ascii_and_binary() {
        let ascii = b"ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nelement face 0\nproperty list uchar int vertex_indices\nend_header\n1 2 3 255\n4 5 6 0\n";
        assert_eq!(read_bytes("m.ply", ascii).unwrap(), points(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3));
        let mut bin = b"ply\nformat binary_little_endian 1.0\nelement vertex 2\nproperty double x\nproperty uchar k\nproperty double y\nend_header\n".to_vec();
        for (x, y) in [(1.5f64, -2.0f64), (3.0, 4.0)] {
            bin.extend(x.to_le_bytes());
            bin.push(9);
            bin.extend(y.to_le_bytes());
        }
        assert_eq!(read_bytes("m.ply", &bin).unwrap(), points(&[1.5, -2.0, 3.0, 4.0], 2));
        let e = read_bytes("m.ply", &bin[..bin.len() - 4]).unwrap_err().to_string();
        assert!(e.contains("m.ply") && e.contains("ends after 1 of its 2"), "{e}");
    }

    #[test]
    fn bad_files_name_the_file_and_the_line() {
        let e = |name: &str, b: &[u8]| read_bytes(name, b).unwrap_err().to_string();
        assert!(e("p.csv", b"1,2\n3,4,5\n").contains("line 2 has 3 numbers"));
        assert!(e("p.csv", b"1,2\n3,x\n").contains("line 2: 'x' is not a number"));
        assert!(e("p.csv", b"1,2\nnan,4\n").contains("must be finite"));
        assert!(e("p.csv", b"").contains("empty file"));
        assert!(e("p.csv", b"a,b\n").contains("no rows"));
        assert!(e("a.lower_distance_matrix", b"1,-2,3\n").contains("non-negative"));
        assert!(e("a.lower_distance_matrix", b"# only a comment\n").contains("no distances"));
        assert!(e("a.distance_matrix", b"0 1\n1 0 3\n").contains("line 2 has 3 numbers"));
        assert!(e("p.csv", &[0xff, 0xfe, 0]).contains("not text"));
        assert!(e("m.ply", b"ply\nformat ascii 1.0\nend_header\n").contains("no vertex element"));
        assert!(e("p.npy", b"\x93NUMPY\x01\x00\xff\xff{").contains("header runs past"));
        // Counts in headers that no file could hold: an error, never an allocation or a panic.
        let huge = b"ply\nformat binary_little_endian 1.0\nelement vertex 9999999999999999999\nproperty float x\nproperty float y\nend_header\n";
        let m = e("m.ply", huge);
        assert!(m.contains("overflows") || m.contains("ends after 0"), "{m}");
        let big = b"ply\nformat binary_little_endian 1.0\nelement vertex 999999999999999\nproperty double x\nproperty double y\nend_header\n\0\0";
        assert!(e("m.ply", big).contains("ends after 0"));
        let big_ascii = b"ply\nformat ascii 1.0\nelement vertex 999999999999999\nproperty double x\nproperty double y\nend_header\n1 2\n";
        assert!(e("m.ply", big_ascii).contains("ends after 1 of its"));
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }\n";
        npy.extend((h.len() as u16).to_le_bytes());
        npy.extend(h.as_bytes());
        assert!(e("p.npy", &npy).contains("overflows") || e("p.npy", &npy).contains("needs"));
    }
}
