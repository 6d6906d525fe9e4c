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
struct Polyline<'a>(&'a [[f64; 3]], usize);

impl serde::Serialize for Polyline<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|p| &p[..self.1]))
    }
}

#[derive(serde::Serialize)]
struct JsonArc<'a> {
    upper: usize,
    lower: usize,
    multiplicity: String,
    multiplicity_overflowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    polyline: Option<Polyline<'a>>,
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
        arcs: Vec<JsonArc<'a>>,
        hierarchy: serde_json::Value,
        diagram: Vec<JsonDiagramPoint>,
        seconds: serde_json::Value,
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
            .arcs
            .iter()
            .map(|(arc, poly)| JsonArc {
                upper: arc.upper,
                lower: arc.lower,
                multiplicity: arc.multiplicity.count.to_string(),
                multiplicity_overflowed: arc.multiplicity.overflowed,
                polyline: geometry.then_some(Polyline(poly, nd)),
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
        seconds: serde_json::json!({
            "gradient": a.seconds[0], "complex": a.seconds[1], "persistence": a.seconds[2], "hierarchy": a.seconds[3],
        }),
    };
    serde_json::to_writer(out, &doc)
}

fn data_array<T: std::fmt::Display>(
    out: &mut String,
    ty: &str,
    name: &str,
    comps: usize,
    vals: impl Iterator<Item = T>,
) {
    let _ = write!(
        out,
        "<DataArray type=\"{ty}\" Name=\"{name}\" NumberOfComponents=\"{comps}\" format=\"ascii\">"
    );
    for v in vals {
        let _ = write!(out, "{v} ");
    }
    out.push_str("</DataArray>\n");
}

fn header(out: &mut String, points: usize, verts: usize, lines: usize) {
    out.push_str("<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n<PolyData>\n");
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
    data_array(&mut s, "Int32", "CriticalType", 1, pts.iter().map(|(_, p)| ttk_type(p, nd)));
    data_array(&mut s, "Int32", "CellDimension", 1, pts.iter().map(|(_, p)| p.index as i32));
    data_array(&mut s, "Int64", "CellId", 1, pts.iter().map(|(_, p)| p.cell as i64));
    data_array(&mut s, "Int64", "PointId", 1, pts.iter().map(|(i, _)| *i as i64));
    data_array(&mut s, "Float64", "Value", 1, pts.iter().map(|(_, p)| p.value));
    let on_boundary = |p: &CriticalPoint| {
        (0..nd).any(|a| p.cell_coords[a] == 0 || p.cell_coords[a] + 1 == c.grid.cdims[a]) as i32
    };
    data_array(&mut s, "Int32", "IsOnBoundary", 1, pts.iter().map(|(_, p)| on_boundary(p)));
    s.push_str("</PointData>\n<Points>\n");
    data_array(&mut s, "Float64", "Points", 3, pts.iter().flat_map(|(_, p)| field.world(p.position)));
    s.push_str("</Points>\n<Verts>\n");
    data_array(&mut s, "Int64", "connectivity", 1, 0..n as i64);
    data_array(&mut s, "Int64", "offsets", 1, 1..=n as i64);
    s.push_str("</Verts>\n");
    s.push_str(FOOTER);
    s
}

/// Live arcs as polylines (TTK's "1-separatrices"), one cell per arc with its ends and type.
pub fn vtp_separatrices(v: &Simplified) -> String {
    let (field, c) = (v.field, &v.analysis.complex);
    let nd = field.ndim();
    let points: usize = v.arcs.iter().map(|(_, p)| p.len()).sum();
    let mut s = String::new();
    header(&mut s, points, 0, v.arcs.len());
    s.push_str("<CellData Scalars=\"SeparatrixType\">\n");
    data_array(&mut s, "Int64", "SeparatrixId", 1, 0..v.arcs.len() as i64);
    data_array(
        &mut s,
        "Int32",
        "SeparatrixType",
        1,
        v.arcs.iter().map(|(a, _)| separatrix_type(c.critical[a.upper].index, nd)),
    );
    data_array(&mut s, "Int64", "SourceId", 1, v.arcs.iter().map(|(a, _)| a.upper as i64));
    data_array(&mut s, "Int64", "DestinationId", 1, v.arcs.iter().map(|(a, _)| a.lower as i64));
    data_array(&mut s, "Float64", "Multiplicity", 1, v.arcs.iter().map(|(a, _)| a.multiplicity.count as f64));
    let hi = |a: &LiveArc| c.critical[a.upper].value;
    let lo = |a: &LiveArc| c.critical[a.lower].value;
    data_array(&mut s, "Float64", "SeparatrixFunctionMaximum", 1, v.arcs.iter().map(|(a, _)| hi(a)));
    data_array(&mut s, "Float64", "SeparatrixFunctionMinimum", 1, v.arcs.iter().map(|(a, _)| lo(a)));
    data_array(
        &mut s,
        "Float64",
        "SeparatrixFunctionDifference",
        1,
        v.arcs.iter().map(|(a, _)| hi(a) - lo(a)),
    );
    s.push_str("</CellData>\n<Points>\n");
    data_array(
        &mut s,
        "Float64",
        "Points",
        3,
        v.arcs.iter().flat_map(|(_, p)| p.iter().flat_map(|&q| field.world(q))),
    );
    s.push_str("</Points>\n<Lines>\n");
    data_array(&mut s, "Int64", "connectivity", 1, 0..points as i64);
    let mut at = 0i64;
    data_array(
        &mut s,
        "Int64",
        "offsets",
        1,
        v.arcs.iter().map(|(_, p)| {
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
            "; simplified at persistence {t}: {}, {} arcs ({} cancellations, {} pairs blocked by several V-paths)",
            names(v.counts()),
            v.arcs.len(),
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
