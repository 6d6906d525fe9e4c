//! Tunnels (holes in 2D): the persistence pairs of dimension 1 of the sublevel (superlevel)
//! filtration, each with where it is born, for both constructions.
//!
//! Vertices is the lower-star filtration, whose diagram the Morse complex gives
//! ([`crate::topo::msc::diagram_with`]). Top cells come by duality (Garin, Heiss, Maggs, Bleile,
//! Robins, "Duality in persistent homology of images", 2020): the dimension-1 pairs `(b, d)` of
//! the top-cell filtration of `f` in 3D are the pairs `(-d', -b')` of the vertex filtration of
//! `-f` padded with one layer below every value; in 2D those of dimension 0. Checked against the
//! Betti curves: the pairs alive at each threshold are β1 there.

use crate::control::Control;
use crate::field::{Samples, ScalarField};
use crate::topo::ecc::{Construction, Filtration};
use crate::topo::msc::{self, MscError};

/// A tunnel: the threshold it appears at, the one it fills at, and where it appears (voxel
/// coordinates of the cell that closes it, x, y, z).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tunnel {
    pub birth: f64,
    pub death: f64,
    pub at: [f64; 3],
}

/// The tunnels of `field`'s filtration, in order of birth (in filtration order), longest-lived
/// first among equal births. Every one dies (a box has no tunnel).
pub fn tunnels(
    field: &ScalarField,
    construction: Construction,
    filtration: Filtration,
    ctl: &Control,
) -> Result<Vec<Tunnel>, MscError> {
    check(field)?;
    let sup = filtration == Filtration::Superlevel;
    let ndim = field.ndim();
    let mut out: Vec<Tunnel> = match construction {
        Construction::Vertices => {
            // Superlevel sets of f are sublevel sets of -f.
            let g = if sup { signed(field, -1.0, false)? } else { signed(field, 1.0, false)? };
            let grid = msc::cell_grid(&g);
            msc::diagram_with(&g, ctl)?
                .into_iter()
                .filter(|p| p.dim == 1)
                .filter_map(|p| {
                    let death = p.death?;
                    let s = if sup { -1.0 } else { 1.0 };
                    Some(Tunnel { birth: s * p.birth, death: s * death, at: centre(&grid, p.birth_cell, 0) })
                })
                .collect()
        }
        Construction::TopCells => {
            // Sublevel: -f padded; superlevel (sublevel of -f): f padded.
            let g = signed(field, if sup { 1.0 } else { -1.0 }, true)?;
            let pad = g.samples().get_f64(0);
            let grid = msc::cell_grid(&g);
            let dual = ndim - 2;
            msc::diagram_with(&g, ctl)?
                .into_iter()
                .filter(|p| p.dim == dual && p.birth != pad)
                .filter_map(|p| {
                    let (b, d) = (p.birth, p.death?);
                    // (b', d') of the dual is (-d', -b') of the sublevel filtration of +-f.
                    let s = if sup { -1.0 } else { 1.0 };
                    Some(Tunnel { birth: -s * d, death: -s * b, at: centre(&grid, p.death_cell?, 1) })
                })
                .collect()
        }
    };
    let key = |t: &Tunnel| if sup { -t.birth } else { t.birth };
    out.sort_by(|a, b| {
        key(a).total_cmp(&key(b)).then((b.death - b.birth).abs().total_cmp(&(a.death - a.birth).abs()))
    });
    Ok(out)
}

/// Whether [`tunnels`] takes `field`: what the lower-star diagram takes (2D or 3D, no flat
/// axis, no NaN, a size its 32-bit cell ids reach), and no infinite sample (the duality pads
/// below every value).
pub fn check(field: &ScalarField) -> Result<(), MscError> {
    msc::check_field(field)?;
    match crate::topo::ecc::count_non_finite(field) {
        (_, 0) => Ok(()),
        (_, inf) => Err(MscError::Infinite(inf)),
    }
}

/// `s * field` as f64 (exact: every sample type converts without rounding), padded with one
/// layer of a value below all others when `pad`.
fn signed(field: &ScalarField, s: f64, pad: bool) -> Result<ScalarField, MscError> {
    let dims = field.dims();
    let ndim = field.ndim();
    let v = |i: usize| s * field.samples().get_f64(i);
    if !pad {
        let vals = (0..field.len()).map(v).collect();
        return Ok(ScalarField::new(field.shape(), Samples::F64(vals))?);
    }
    // Strictly below every value (finite: `check` refused infinities), whatever its magnitude.
    let min = (0..field.len()).map(v).fold(f64::INFINITY, f64::min);
    let low = (min - 1.0).min(min.next_down());
    let p: Vec<usize> = (0..3).map(|a| if a < ndim { dims[a] + 2 } else { 1 }).collect();
    let off = |a: usize| usize::from(a < ndim);
    let mut vals = vec![low; p[0] * p[1] * p[2]];
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                let (px, py, pz) = (x + off(0), y + off(1), z + off(2));
                vals[px + p[0] * (py + p[1] * pz)] = v(x + dims[0] * (y + dims[1] * z));
            }
        }
    }
    Ok(ScalarField::new(&p[..ndim], Samples::F64(vals))?)
}

/// The centre of `cell` in voxel coordinates of the unpadded field (`shift` 1 for a padded grid).
fn centre(grid: &msc::grid::CellGrid, cell: msc::grid::Cell, shift: usize) -> [f64; 3] {
    let c = grid.coords(cell);
    std::array::from_fn(|a| if a < grid.ndim { c[a] as f64 / 2.0 - shift as f64 } else { 0.0 })
}
