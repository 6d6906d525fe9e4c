//! Morse-Smale exports: JSON (critical points, arcs, diagram) and VTK XML PolyData (`.vtp`) of
//! critical points and arcs with TTK's array names, so ParaView users can load them beside
//! TTK's own outputs.

use crate::field::{ScalarField, dims_string};
use crate::topo::msc::Analysis;
use crate::topo::msc::complex::{CriticalPoint, MorseSmale};
use std::fmt::Write;

/// Physical coordinates of a voxel-space position: through the affine when the file had one,
/// else scaled by the spacing.
pub fn physical(field: &ScalarField, p: [f64; 3]) -> [f64; 3] {
    match field.affine {
        Some(a) => std::array::from_fn(|r| a[r][0] * p[0] + a[r][1] * p[1] + a[r][2] * p[2] + a[r][3]),
        None => std::array::from_fn(|i| p[i] * field.spacing()[i]),
    }
}

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

pub fn json(file: &str, field: &ScalarField, a: &Analysis) -> serde_json::Value {
    let c = &a.complex;
    let nd = field.ndim();
    let mut counts = [0usize; 4];
    for p in &c.critical {
        counts[p.index as usize] += 1;
    }
    let names = ["minima", "1-saddles", "2-saddles", "maxima"];
    let mut count_obj = serde_json::Map::new();
    for k in 0..=nd {
        let name = if k == nd { "maxima" } else { names[k] };
        count_obj.insert(name.into(), counts[k].into());
    }
    let index_of: std::collections::HashMap<usize, usize> =
        c.critical.iter().enumerate().map(|(i, p)| (p.cell, i)).collect();
    serde_json::json!({
        "topoview_version": env!("CARGO_PKG_VERSION"),
        "file": file,
        "dims": field.shape(),
        "spacing": &field.spacing()[..nd],
        "setting": "lower-star: voxels are the vertices of the cubical grid, every cell takes the maximum of its vertices; ties in value broken by voxel index",
        "counts": count_obj,
        "critical_points": c.critical.iter().enumerate().map(|(i, p)| serde_json::json!({
            "id": i,
            "index": p.index,
            "critical_type": ttk_type(p, nd),
            "cell": &p.cell_coords[..nd],
            "position": &p.position[..nd],
            "physical": &physical(field, p.position)[..nd],
            "vertex": p.vertex,
            "value": p.value,
        })).collect::<Vec<_>>(),
        "arcs": c.arcs.iter().map(|arc| serde_json::json!({
            "upper": arc.upper,
            "lower": arc.lower,
            "multiplicity": arc.multiplicity.count.to_string(),
            "multiplicity_overflowed": arc.multiplicity.overflowed,
            "polyline": arc.polyline.iter().map(|p| p[..nd].to_vec()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "diagram": a.diagram.iter().map(|d| serde_json::json!({
            "dim": d.dim,
            "birth": d.birth,
            "death": d.death,
            "birth_point": index_of[&d.birth_cell],
            "death_point": d.death_cell.map(|c| index_of[&c]),
        })).collect::<Vec<_>>(),
        "seconds": {"gradient": a.seconds[0], "complex": a.seconds[1], "persistence": a.seconds[2]},
    })
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

/// Critical points as vertices, with TTK's point data names.
pub fn vtp_critical_points(field: &ScalarField, c: &MorseSmale) -> String {
    let nd = field.ndim();
    let n = c.critical.len();
    let mut s = String::new();
    header(&mut s, n, n, 0);
    s.push_str("<PointData Scalars=\"CriticalType\">\n");
    data_array(&mut s, "Int32", "CriticalType", 1, c.critical.iter().map(|p| ttk_type(p, nd)));
    data_array(&mut s, "Int32", "CellDimension", 1, c.critical.iter().map(|p| p.index as i32));
    data_array(&mut s, "Int64", "CellId", 1, c.critical.iter().map(|p| p.cell as i64));
    data_array(&mut s, "Float64", "Value", 1, c.critical.iter().map(|p| p.value));
    let on_boundary = |p: &CriticalPoint| {
        (0..nd).any(|a| p.cell_coords[a] == 0 || p.cell_coords[a] + 1 == c.grid.cdims[a]) as i32
    };
    data_array(&mut s, "Int32", "IsOnBoundary", 1, c.critical.iter().map(on_boundary));
    s.push_str("</PointData>\n<Points>\n");
    data_array(&mut s, "Float64", "Points", 3, c.critical.iter().flat_map(|p| physical(field, p.position)));
    s.push_str("</Points>\n<Verts>\n");
    data_array(&mut s, "Int64", "connectivity", 1, 0..n as i64);
    data_array(&mut s, "Int64", "offsets", 1, 1..=n as i64);
    s.push_str("</Verts>\n");
    s.push_str(FOOTER);
    s
}

/// Arcs as polylines (TTK's "1-separatrices"), one cell per arc with its ends and type.
pub fn vtp_separatrices(field: &ScalarField, c: &MorseSmale) -> String {
    let nd = field.ndim();
    let points: usize = c.arcs.iter().map(|a| a.polyline.len()).sum();
    let mut s = String::new();
    header(&mut s, points, 0, c.arcs.len());
    s.push_str("<CellData Scalars=\"SeparatrixType\">\n");
    data_array(&mut s, "Int64", "SeparatrixId", 1, 0..c.arcs.len() as i64);
    data_array(
        &mut s,
        "Int32",
        "SeparatrixType",
        1,
        c.arcs.iter().map(|a| separatrix_type(c.critical[a.upper].index, nd)),
    );
    data_array(&mut s, "Int64", "SourceId", 1, c.arcs.iter().map(|a| a.upper as i64));
    data_array(&mut s, "Int64", "DestinationId", 1, c.arcs.iter().map(|a| a.lower as i64));
    data_array(&mut s, "Float64", "Multiplicity", 1, c.arcs.iter().map(|a| a.multiplicity.count as f64));
    let (hi, lo) = (
        |a: &crate::topo::msc::complex::Arc| c.critical[a.upper].value,
        |a: &crate::topo::msc::complex::Arc| c.critical[a.lower].value,
    );
    data_array(&mut s, "Float64", "SeparatrixFunctionMaximum", 1, c.arcs.iter().map(hi));
    data_array(&mut s, "Float64", "SeparatrixFunctionMinimum", 1, c.arcs.iter().map(lo));
    data_array(&mut s, "Float64", "SeparatrixFunctionDifference", 1, c.arcs.iter().map(|a| hi(a) - lo(a)));
    s.push_str("</CellData>\n<Points>\n");
    data_array(
        &mut s,
        "Float64",
        "Points",
        3,
        c.arcs.iter().flat_map(|a| a.polyline.iter().flat_map(|&p| physical(field, p))),
    );
    s.push_str("</Points>\n<Lines>\n");
    data_array(&mut s, "Int64", "connectivity", 1, 0..points as i64);
    let mut at = 0i64;
    data_array(
        &mut s,
        "Int64",
        "offsets",
        1,
        c.arcs.iter().map(|a| {
            at += a.polyline.len() as i64;
            at
        }),
    );
    s.push_str("</Lines>\n");
    s.push_str(FOOTER);
    s
}

/// One line for the terminal.
pub fn summary(file: &str, field: &ScalarField, a: &Analysis) -> String {
    let mut counts = [0usize; 4];
    for p in &a.complex.critical {
        counts[p.index as usize] += 1;
    }
    let nd = field.ndim();
    let names: Vec<String> = (0..=nd)
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
            format!("{} {name}", counts[k])
        })
        .collect();
    format!(
        "{file}: {} {}, {}; {} arcs; {} persistence pairs; {:.2} s gradient, {:.2} s arcs and manifolds, {:.2} s persistence",
        dims_string(field.shape()),
        field.dtype(),
        names.join(", "),
        a.complex.arcs.len(),
        a.diagram.len(),
        a.seconds[0],
        a.seconds[1],
        a.seconds[2]
    )
}
