//! Morse-Smale exports: JSON (critical points, arcs, diagram) and VTK XML PolyData (`.vtp`) of
//! critical points and arcs with TTK's array names, so ParaView users can load them beside
//! TTK's own outputs.

use crate::field::dims_string;
use crate::topo::msc::complex::CriticalPoint;
use crate::topo::msc::simplified::Simplified;
use crate::topo::msc::simplify::LiveArc;
use std::fmt::Write;

/// TTK's CriticalType: 0 minimum, 1 1-saddle, 2 2-saddle, 3 maximum (whatever the dimension).
pub fn ttk_type(p: &CriticalPoint, ndim: usize) -> i32 {
    if p.index as usize == ndim { 3 } else { p.index as i32 }
}

/// TTK's SeparatrixType of an arc from index `upper_index`: 0 saddle-minimum, 1 saddle-saddle,
/// 2 saddle-maximum.
fn separatrix_type(upper_index: u8, ndim: usize) -> i32 {
    if upper_index == 1 {
        0
    } else if upper_index as usize == ndim {
        2
    } else {
        1
    }
}

fn count_names(nd: usize, counts: [usize; 4]) -> Vec<(&'static str, usize)> {
    (0..=nd)
        .map(|k| {
            let name = if k == 0 {
                "minima"
            } else if k == nd {
                "maxima"
            } else if k == 1 {
                "1-saddles"
            } else {
                "2-saddles"
            };
            (name, counts[k])
        })
        .collect()
}

#[derive(serde::Serialize)]
struct JsonPoint<'a> {
    id: usize,
    index: u8,
    critical_type: i32,
    cell: &'a [usize],
    position: &'a [f64],
    physical: Vec<f64>,
    vertex: usize,
    value: f64,
    alive: bool,
    cancelled_at_level: Option<f64>,
}

/// A polyline of 3D points written with the field's number of coordinates.
struct Polyline(Vec<[f64; 3]>, usize);

impl serde::Serialize for Polyline {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|p| &p[..self.1]))
    }
}

#[derive(serde::Serialize)]
struct JsonArc {
    upper: usize,
    lower: usize,
    multiplicity: String,
    multiplicity_overflowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    polyline: Option<Polyline>,
}

#[derive(serde::Serialize)]
struct JsonDiagramPoint {
    dim: usize,
    birth: f64,
    death: Option<f64>,
    birth_point: usize,
    death_point: Option<usize>,
}

/// Writes the JSON export, streaming (the complex of a large volume runs to hundreds of MB).
pub fn write_json(
    file: &str,
    v: &Simplified,
    smoothing: Option<&crate::topo::smooth::Smoothing>,
    geometry: bool,
    out: impl std::io::Write,
) -> serde_json::Result<()> {
    let (field, a) = (v.field, v.analysis);
    let (c, h) = (&a.complex, &a.hierarchy);
    let nd = field.ndim();
    let counts = |k: [usize; 4]| -> serde_json::Map<String, serde_json::Value> {
        count_names(nd, k).into_iter().map(|(name, n)| (name.to_string(), n.into())).collect()
    };
    let index_of: std::collections::HashMap<usize, usize> =
        c.critical.iter().enumerate().map(|(i, p)| (p.cell, i)).collect();
    let level = |i: usize| {
        let s = h.cancelled_at[i];
        (s != usize::MAX).then(|| h.cancellations[s - 1].level)
    };
    #[derive(serde::Serialize)]
    struct Out<'a> {
        topoview_version: &'static str,
        file: &'a str,
        dims: &'a [usize],
        spacing: &'a [f64],
        setting: &'static str,
        counts_unsimplified: serde_json::Map<String, serde_json::Value>,
        simplification: serde_json::Value,
        critical_points: Vec<JsonPoint<'a>>,
        arcs: Vec<JsonArc>,
        hierarchy: serde_json::Value,
        diagram: Vec<JsonDiagramPoint>,
        seconds: serde_json::Value,
        /// The smoothing applied before the complex (as `topoview ecc` records it).
        smoothing: Option<serde_json::Value>,
    }
    let spacing = field.spacing();
    let doc = Out {
        topoview_version: env!("CARGO_PKG_VERSION"),
        file,
        dims: field.shape(),
        spacing: &spacing[..nd],
        setting: "lower-star: voxels are the vertices of the cubical grid, every cell takes the maximum of its vertices; ties in value broken by voxel index",
        counts_unsimplified: counts(h.counts(c, 0)),
        simplification: serde_json::json!({
            "threshold": v.threshold,
            "cancellations": v.steps,
            "counts": counts(v.counts()),
            "blocked": v.threshold.map_or(0, |t| h.blocked_at(t).count()),
        }),
        critical_points: c
            .critical
            .iter()
            .enumerate()
            .map(|(i, p)| JsonPoint {
                id: i,
                index: p.index,
                critical_type: ttk_type(p, nd),
                cell: &p.cell_coords[..nd],
                position: &p.position[..nd],
                physical: field.world(p.position)[..nd].to_vec(),
                vertex: p.vertex,
                value: p.value,
                alive: v.alive(i),
                cancelled_at_level: level(i),
            })
            .collect(),
        arcs: v
            .arcs()
            .iter()
            .enumerate()
            .map(|(i, arc)| JsonArc {
                upper: arc.upper,
                lower: arc.lower,
                multiplicity: { arc.multiplicity.count }.to_string(),
                multiplicity_overflowed: arc.multiplicity.overflowed,
                polyline: geometry.then(|| Polyline(v.path(i), nd)),
            })
            .collect(),
        hierarchy: serde_json::json!({ "cancellations": &h.cancellations, "blocked": &h.blocked }),
        diagram: a
            .diagram
            .iter()
            .map(|d| JsonDiagramPoint {
                dim: d.dim,
                birth: d.birth,
                death: d.death,
                birth_point: index_of[&d.birth_cell],
                death_point: d.death_cell.map(|c| index_of[&c]),
            })
            .collect(),
        smoothing: smoothing.map(|s| {
            serde_json::json!({
                "sigma": s.sigma,
                "units": s.units,
                "sigma_voxels": &s.sigma_voxels(field)[..nd],
                "truncate": s.truncate,
                "boundary": "reflect",
            })
        }),
        seconds: serde_json::json!({
            "gradient": a.seconds[0], "complex": a.seconds[1], "persistence": a.seconds[2], "hierarchy": a.seconds[3],
        }),
    };
    serde_json::to_writer(out, &doc)
}

/// A value of a VTK data array: its VTK type name and little-endian bytes.
trait VtkValue {
    const TYPE: &'static str;
    fn put(&self, out: &mut Vec<u8>);
}

macro_rules! vtk_value {
    ($t:ty, $name:literal) => {
        impl VtkValue for $t {
            const TYPE: &'static str = $name;
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    };
}
vtk_value!(i32, "Int32");
vtk_value!(i64, "Int64");
vtk_value!(f64, "Float64");

/// A data array in VTK's compressed binary form: zlib in one block, the UInt64 header
/// (blocks, block size, size of the last block, compressed sizes) and the data each in base64,
/// as `vtkXMLPolyDataReader` (ParaView) reads them.
fn data_array<T: VtkValue>(out: &mut String, name: &str, comps: usize, vals: impl Iterator<Item = T>) {
    use std::io::Write as _;
    let mut raw = Vec::new();
    for v in vals {
        v.put(&mut raw);
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = z.write_all(&raw);
    let compressed = z.finish().unwrap_or_default();
    let n = raw.len() as u64;
    let head: Vec<u64> = if n == 0 { vec![0, 0, 0] } else { vec![1, n, n, compressed.len() as u64] };
    let head: Vec<u8> = head.iter().flat_map(|h| h.to_le_bytes()).collect();
    let _ = write!(
        out,
        "<DataArray type=\"{}\" Name=\"{name}\" NumberOfComponents=\"{comps}\" format=\"binary\">",
        T::TYPE
    );
    out.push_str(&base64(&head));
    if n > 0 {
        out.push_str(&base64(&compressed));
    }
    out.push_str("</DataArray>\n");
}

/// Standard base64 with padding (RFC 4648), as VTK's binary arrays are written.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                s.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn header(out: &mut String, points: usize, verts: usize, lines: usize) {
    out.push_str("<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\" header_type=\"UInt64\" compressor=\"vtkZLibDataCompressor\">\n<PolyData>\n");
    let _ = writeln!(
        out,
        "<Piece NumberOfPoints=\"{points}\" NumberOfVerts=\"{verts}\" NumberOfLines=\"{lines}\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">"
    );
}

const FOOTER: &str = "</Piece>\n</PolyData>\n</VTKFile>\n";

/// Live critical points as vertices, with TTK's point data names.
pub fn vtp_critical_points(v: &Simplified) -> String {
    let (field, c) = (v.field, &v.analysis.complex);
    let nd = field.ndim();
    let pts: Vec<(usize, &CriticalPoint)> = v.live_points().collect();
    let n = pts.len();
    let mut s = String::new();
    header(&mut s, n, n, 0);
    s.push_str("<PointData Scalars=\"CriticalType\">\n");
    data_array(&mut s, "CriticalType", 1, pts.iter().map(|(_, p)| ttk_type(p, nd)));
    data_array(&mut s, "CellDimension", 1, pts.iter().map(|(_, p)| p.index as i32));
    data_array(&mut s, "CellId", 1, pts.iter().map(|(_, p)| p.cell as i64));
    data_array(&mut s, "PointId", 1, pts.iter().map(|(i, _)| *i as i64));
    data_array(&mut s, "Value", 1, pts.iter().map(|(_, p)| p.value));
    let on_boundary = |p: &CriticalPoint| {
        (0..nd).any(|a| p.cell_coords[a] == 0 || p.cell_coords[a] + 1 == c.grid.cdims[a]) as i32
    };
    data_array(&mut s, "IsOnBoundary", 1, pts.iter().map(|(_, p)| on_boundary(p)));
    s.push_str("</PointData>\n<Points>\n");
    data_array(&mut s, "Points", 3, pts.iter().flat_map(|(_, p)| field.world(p.position)));
    s.push_str("</Points>\n<Verts>\n");
    data_array(&mut s, "connectivity", 1, 0..n as i64);
    data_array(&mut s, "offsets", 1, 1..=n as i64);
    s.push_str("</Verts>\n");
    s.push_str(FOOTER);
    s
}

/// Live arcs as polylines (TTK's "1-separatrices"), one cell per arc with its ends and type.
pub fn vtp_separatrices(v: &Simplified) -> String {
    let (field, c) = (v.field, &v.analysis.complex);
    let nd = field.ndim();
    let paths: Vec<Vec<[f64; 3]>> = v.paths().collect();
    let points: usize = paths.iter().map(|p| p.len()).sum();
    let mut s = String::new();
    header(&mut s, points, 0, v.arcs().len());
    s.push_str("<CellData Scalars=\"SeparatrixType\">\n");
    data_array(&mut s, "SeparatrixId", 1, 0..v.arcs().len() as i64);
    data_array(
        &mut s,
        "SeparatrixType",
        1,
        v.arcs().iter().map(|a| separatrix_type(c.critical[a.upper].index, nd)),
    );
    data_array(&mut s, "SourceId", 1, v.arcs().iter().map(|a| a.upper as i64));
    data_array(&mut s, "DestinationId", 1, v.arcs().iter().map(|a| a.lower as i64));
    data_array(&mut s, "Multiplicity", 1, v.arcs().iter().map(|a| a.multiplicity.count as f64));
    let hi = |a: &LiveArc| c.critical[a.upper].value;
    let lo = |a: &LiveArc| c.critical[a.lower].value;
    data_array(&mut s, "SeparatrixFunctionMaximum", 1, v.arcs().iter().map(&hi));
    data_array(&mut s, "SeparatrixFunctionMinimum", 1, v.arcs().iter().map(&lo));
    data_array(&mut s, "SeparatrixFunctionDifference", 1, v.arcs().iter().map(|a| hi(a) - lo(a)));
    s.push_str("</CellData>\n<Points>\n");
    data_array(&mut s, "Points", 3, paths.iter().flat_map(|p| p.iter().flat_map(|&q| field.world(q))));
    s.push_str("</Points>\n<Lines>\n");
    data_array(&mut s, "connectivity", 1, 0..points as i64);
    let mut at = 0i64;
    data_array(
        &mut s,
        "offsets",
        1,
        paths.iter().map(|p| {
            at += p.len() as i64;
            at
        }),
    );
    s.push_str("</Lines>\n");
    s.push_str(FOOTER);
    s
}

/// One line for the terminal.
pub fn summary(file: &str, v: &Simplified) -> String {
    let (field, a) = (v.field, v.analysis);
    let nd = field.ndim();
    let names = |counts| {
        count_names(nd, counts).iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ")
    };
    let mut s = format!(
        "{file}: {} {}, {}; {} arcs; {} persistence pairs",
        dims_string(field.shape()),
        field.dtype(),
        names(a.hierarchy.counts(&a.complex, 0)),
        a.complex.arcs.len(),
        a.diagram.len(),
    );
    if let Some(t) = v.threshold {
        s += &format!(
            "; simplified at persistence {t}: {}, {} arcs ({} cancellations, {} pairs blocked: not joined by one V-path)",
            names(v.counts()),
            v.arcs().len(),
            v.steps,
            a.hierarchy.blocked_at(t).count()
        );
    }
    s += &format!(
        "; {:.2} s gradient, {:.2} s arcs and manifolds, {:.2} s persistence, {:.2} s hierarchy",
        a.seconds[0], a.seconds[1], a.seconds[2], a.seconds[3]
    );
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc_4648() {
        let cases: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
        ];
        for (raw, encoded) in cases {
            assert_eq!(super::base64(raw), encoded);
        }
        assert_eq!(super::base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    fn unbase64(s: &str) -> Vec<u8> {
        const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut n = 0;
        let mut out = Vec::new();
        for ch in s.chars().filter(|&c| c != '=') {
            bits = bits << 6 | ALPHABET.find(ch).unwrap() as u32;
            n += 6;
            if n >= 8 {
                n -= 8;
                out.push((bits >> n) as u8);
            }
        }
        out
    }

    /// A data array decodes, as VTK reads it, to the values written: the UInt64 header (one
    /// block) in its own base64 run, then the zlib stream of the little-endian values.
    #[test]
    fn binary_arrays_decode_to_their_values() {
        use std::io::Read;
        let values = [1i64, -2, 3, i64::MAX, 0];
        let mut s = String::new();
        super::data_array(&mut s, "x", 1, values.iter().copied());
        assert!(
            s.starts_with("<DataArray type=\"Int64\" Name=\"x\" NumberOfComponents=\"1\" format=\"binary\">")
        );
        let body = &s[s.find('>').unwrap() + 1..s.find("</DataArray>").unwrap()];
        // 32 header bytes are 44 base64 characters.
        let (head, data) = body.split_at(44);
        let head: Vec<u64> =
            unbase64(head).chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let compressed = unbase64(data);
        assert_eq!(head, vec![1, raw.len() as u64, raw.len() as u64, compressed.len() as u64]);
        let mut back = Vec::new();
        flate2::read::ZlibDecoder::new(compressed.as_slice()).read_to_end(&mut back).unwrap();
        assert_eq!(back, raw);
    }
}
