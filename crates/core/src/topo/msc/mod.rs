//! The discrete Morse-Smale complex of a 2D or 3D field: the discrete gradient ([`gradient`]),
//! critical points, arcs and manifolds ([`complex`]), persistence on the Morse complex
//! ([`morse`], with the brute-force reference in [`persistence`]) and the simplification
//! hierarchy ([`simplify`]); [`analyse`] runs them all.
//!
//! Setting: voxels are the **vertices** of the cubical grid and every higher cell takes the
//! maximum of its vertices (the lower-star filtration), with ties in value broken by voxel index
//! (a higher index is higher).

pub mod complex;
pub mod gradient;
pub mod grid;
pub mod morse;
pub mod order;
pub mod persistence;
pub mod saddles;
pub mod simplified;
pub mod simplify;
pub mod vpaths;

use crate::control::Cancelled;
use crate::field::ScalarField;
use crate::with_vertex_order;
use gradient::Gradient;
use grid::CellGrid;
use order::{FieldOrder, VertexOrder};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MscError {
    #[error("{0} NaN samples: the Morse-Smale complex needs a value at every vertex")]
    Nan(usize),
    #[error("{0} infinite samples: tunnels (through the dual filtration) need finite values")]
    Infinite(usize),
    #[error(
        "axis {0} has a single voxel: critical points would be classified as in {1}D; store the \
         field without that axis"
    )]
    FlatAxis(usize, usize),
    #[error("the Morse-Smale complex needs a 2D or 3D field")]
    Rank,
    #[error(transparent)]
    Cancelled(#[from] Cancelled),
    #[error(
        "{cells} cells: the Morse-Smale complex numbers voxels and critical points with 32-bit ids \
         (at most 2^31 cells, about 640^3 voxels in 3D); crop or downsample the field"
    )]
    TooLarge { cells: usize },
    #[error(transparent)]
    Field(#[from] crate::field::FieldError),
    #[error(
        "the complex would need about {} MiB ({critical} critical cells in {voxels} voxels), more \
         than the {} MiB allowed; smooth the field first (noise has critical cells nearly \
         everywhere), or raise the limit (`topoview msc --max-memory`)",
        .estimate >> 20, .budget >> 20
    )]
    TooMuchMemory { estimate: u64, budget: u64, critical: usize, voxels: usize },
}

/// Peak memory of [`analyse`] for a field of `voxels` voxels whose gradient has `critical`
/// critical cells: per voxel its gradient codes (4 bits a cell) and basin and mountain labels;
/// per critical cell its point, arcs, persistence columns and hierarchy entries. Measured on
/// 2026-11-25 (`topoview bench --msc`, resident peak per run, field included): the MNI
/// template (8.7 M voxels, 163,531 critical cells) 306 MiB on one thread and 634 MiB on 16
/// (allocator arenas per thread), white noise 128^3 (1.53 M critical cells) 4.0-4.5 GiB, i.e.
/// 2.7-3.0 KiB a critical cell; with a margin.
pub fn memory_estimate(voxels: usize, critical: usize) -> u64 {
    voxels as u64 * 32 + critical as u64 * 3300
}

/// The order of the voxels of `field` (see [`order`]); NaN samples are refused.
pub fn vertex_order(field: &ScalarField) -> Result<FieldOrder<'_>, MscError> {
    let (nan, _) = crate::topo::ecc::count_non_finite(field);
    if nan > 0 {
        return Err(MscError::Nan(nan));
    }
    Ok(FieldOrder::new(field))
}

/// The grid of cells of `field`.
pub fn cell_grid(field: &ScalarField) -> CellGrid {
    CellGrid::new(field.dims(), field.ndim())
}

/// The discrete gradient of `field` (see [`gradient`]).
pub fn discrete_gradient(field: &ScalarField) -> Result<Gradient, MscError> {
    cpu_gradient(field, &vertex_order(field)?, &Default::default())
}

/// The alternating sum of critical cells, which equals chi of the domain (1 for a box).
pub fn morse_sum(g: &Gradient) -> i64 {
    g.critical_cells()
        .iter()
        .enumerate()
        .map(|(k, c)| if k % 2 == 0 { c.len() as i64 } else { -(c.len() as i64) })
        .sum()
}

/// One point of a persistence diagram, with the critical cells that create and destroy it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct DiagramPoint {
    pub dim: usize,
    pub birth: f64,
    /// None for an essential class (it never dies).
    pub death: Option<f64>,
    pub birth_cell: grid::Cell,
    pub death_cell: Option<grid::Cell>,
}

/// The persistence diagram of the lower-star filtration of `field` (computed on the Morse
/// complex of `g`), sorted by dimension and birth; pairs whose values are equal (zero
/// persistence, possible with ties) are left out, as persistence libraries do.
pub fn diagram(field: &ScalarField, g: &Gradient, order: &(impl VertexOrder + ?Sized)) -> Vec<DiagramPoint> {
    diagram_of_pairs(field, g, order, morse::persistence(g, order))
}

/// [`diagram`] from the field alone, under a [`Control`](crate::control::Control) (checked
/// through the gradient and the reduction), without building the Morse-Smale complex.
pub fn diagram_with(
    field: &ScalarField,
    ctl: &crate::control::Control,
) -> Result<Vec<DiagramPoint>, MscError> {
    check_shape(field)?;
    check_size(field.shape())?;
    let order = vertex_order(field)?;
    ctl.check()?;
    with_vertex_order!(order, o => {
        let g = gradient::gradient_with(cell_grid(field), o, ctl)?;
        let boundary = |c| {
            vpaths::descending(&g, c).into_iter().filter(|(_, m, _)| m.is_odd()).map(|(t, _, _)| t).collect()
        };
        let pairs = morse::persistence_with(&g, o, boundary, ctl)?;
        Ok(diagram_of_pairs(field, &g, o, pairs))
    })
}

/// Diagram points (values, zero-persistence pairs left out, sorted) of persistence pairs.
fn diagram_of_pairs(
    field: &ScalarField,
    g: &Gradient,
    order: &(impl VertexOrder + ?Sized),
    pairs: Vec<persistence::CellPair>,
) -> Vec<DiagramPoint> {
    let value = |c: grid::Cell| field.samples().get_f64(persistence::top_vertex(&g.grid, order, c));
    use rayon::prelude::*;
    let mut out: Vec<DiagramPoint> = pairs
        .into_par_iter()
        .map(|p| DiagramPoint {
            dim: p.dim,
            birth: value(p.birth),
            death: p.death.map(value),
            birth_cell: p.birth,
            death_cell: p.death,
        })
        .filter(|p| p.death != Some(p.birth))
        .collect();
    // Stable: points of equal values keep the cell order of `pairs`.
    out.par_sort_by(|a, b| {
        (a.dim, a.birth, a.death.unwrap_or(f64::INFINITY))
            .partial_cmp(&(b.dim, b.birth, b.death.unwrap_or(f64::INFINITY)))
            .expect("finite values")
    });
    out
}

/// Everything `topoview msc` computes for a field.
pub struct Analysis {
    /// The complex, with the gradient it was built from.
    pub complex: complex::MorseSmale,
    pub diagram: Vec<DiagramPoint>,
    pub hierarchy: simplify::Hierarchy,
    /// Seconds spent per stage: gradient, arcs and manifolds, persistence, simplification
    /// hierarchy (the rest of the wait: its set-up where that outlasts persistence beside it,
    /// the diagram's assembly beside it, and the manifold labels where
    /// [`Stages::labels_last`]).
    pub seconds: [f64; 4],
}

/// Whether [`analyse`] takes `field` (2D or 3D, no axis of size 1); an error says why not.
fn check_shape(field: &ScalarField) -> Result<(), MscError> {
    if field.ndim() < 2 {
        return Err(MscError::Rank);
    }
    if let Some(a) = field.shape().iter().position(|&n| n == 1) {
        return Err(MscError::FlatAxis(a, field.ndim()));
    }
    Ok(())
}

/// Voxel and critical point ids are `u32` (labels) and are exported as `i32`: every cell of
/// the grid (a bound on the critical points) must have an id below 2^31.
fn check_size(shape: &[usize]) -> Result<(), MscError> {
    let cells = shape.iter().try_fold(1usize, |n, &d| n.checked_mul((2 * d).checked_sub(1)?));
    match cells {
        Some(c) if c <= i32::MAX as usize => Ok(()),
        c => Err(MscError::TooLarge { cells: c.unwrap_or(usize::MAX) }),
    }
}

/// Whether [`analyse`] takes `field`: its shape and size, and no NaN; cheap next to the
/// analysis.
pub fn check_field(field: &ScalarField) -> Result<(), MscError> {
    check_shape(field)?;
    check_size(field.shape())?;
    match crate::topo::ecc::count_non_finite(field) {
        (0, _) => Ok(()),
        (nan, _) => Err(MscError::Nan(nan)),
    }
}

/// Gradient, Morse-Smale complex and persistence diagram of a 2D or 3D field. Progress is
/// reported in 6 ticks: the gradient, 3 for the complex, persistence, the simplification
/// hierarchy.
/// Refuses, as [`analyse_within`] does, what would need more than the memory plan
/// ([`crate::mem::default_budget`]): every path that builds a complex has a budget.
pub fn analyse(field: &ScalarField, ctl: &crate::control::Control) -> Result<Analysis, MscError> {
    analyse_within(field, ctl, crate::mem::default_budget().unwrap_or(u64::MAX))
}

/// [`analyse`], refusing (before building the complex) a field whose complex would need more
/// than `max_bytes` by [`memory_estimate`], so noise fails with a reason instead of exhausting
/// the machine.
pub fn analyse_within(
    field: &ScalarField,
    ctl: &crate::control::Control,
    max_bytes: u64,
) -> Result<Analysis, MscError> {
    analyse_with(field, ctl, max_bytes, &mut CpuStages { field, ctl })
}

/// The stages of [`analyse_with`] that may run elsewhere than on the CPU (the GPU's, see
/// `topoview_compute::backend::Backend::msc`). Each must give exactly what the CPU's does:
/// the rest of the pipeline runs on its results. The labels and the saddle-saddle arcs run
/// beside the saddle-extremum arcs, on another thread; or the saddle-saddle arcs do, and the
/// labels run beside persistence and the hierarchy ([`Stages::labels_last`]).
pub trait Stages: Send {
    /// The discrete gradient of the field, in the vertex order `order` ([`cpu_gradient`]).
    fn gradient(&mut self, order: &FieldOrder) -> Result<Gradient, MscError>;
    /// Basins and mountains of `g`, whose critical points are `critical`
    /// ([`complex::labels`]).
    fn labels(
        &mut self,
        g: &Gradient,
        critical: &[complex::CriticalPoint],
    ) -> Result<complex::Labels, Cancelled>;
    /// Whether the labels are made after the arcs, beside persistence and the hierarchy (which
    /// do not need them), rather than beside the arcs: where they take little of the CPU (the
    /// GPU's: one thread waiting on the device), so that their time hides behind the CPU's
    /// stages.
    fn labels_last(&self) -> bool {
        false
    }
    /// Whether [`Stages::saddle_arcs`] is to find the saddle-saddle arcs (else the CPU's
    /// threads find them beside the labels).
    fn saddle_arcs_here(&self) -> bool {
        false
    }
    /// The saddle-saddle arcs of the 3D gradient `g` from its 2-saddles `saddles` (cells,
    /// ascending), as [`vpaths::descending`] finds them, in any order; None (a failure, said in
    /// the stages' report) leaves them to the CPU's threads. Called when
    /// [`Stages::saddle_arcs_here`], after [`Stages::labels`] unless [`Stages::labels_last`].
    fn saddle_arcs(
        &mut self,
        _g: &Gradient,
        _saddles: &[u32],
    ) -> Result<Option<Vec<complex::SaddleArc>>, Cancelled> {
        Ok(None)
    }
}

/// Every stage on all CPU threads.
pub struct CpuStages<'a> {
    pub field: &'a ScalarField,
    pub ctl: &'a crate::control::Control<'a>,
}

impl Stages for CpuStages<'_> {
    fn gradient(&mut self, order: &FieldOrder) -> Result<Gradient, MscError> {
        cpu_gradient(self.field, order, self.ctl)
    }

    fn labels(
        &mut self,
        g: &Gradient,
        critical: &[complex::CriticalPoint],
    ) -> Result<complex::Labels, Cancelled> {
        complex::labels(g, critical, self.ctl)
    }
}

/// [`analyse_within`] with the gradient, the manifold labels and the saddle-saddle arcs made by
/// `stages`.
pub fn analyse_with(
    field: &ScalarField,
    ctl: &crate::control::Control,
    max_bytes: u64,
    stages: &mut impl Stages,
) -> Result<Analysis, MscError> {
    check_shape(field)?;
    check_size(field.shape())?;
    let t = std::time::Instant::now();
    let mut laps = crate::laps::Laps::msc("msc");
    let order = vertex_order(field)?;
    ctl.check()?;
    laps.lap(|| "the field checked".into());
    let g = stages.gradient(&order)?;
    laps.lap(|| "the gradient".into());
    debug_assert_eq!(morse_sum(&g), 1, "Morse equality on a box");
    let mut a = with_vertex_order!(order, o => analyse_ordered(field, g, o, stages, ctl, max_bytes))?;
    a.seconds[0] += t.elapsed().as_secs_f64() - a.seconds.iter().sum::<f64>();
    Ok(a)
}

/// The discrete gradient of `field` in the vertex order `order`, on all CPU threads, with the
/// Morse equality checked in debug builds.
pub fn cpu_gradient(
    field: &ScalarField,
    order: &FieldOrder,
    ctl: &crate::control::Control,
) -> Result<Gradient, MscError> {
    let g = with_vertex_order!(order, o => gradient::gradient_with(cell_grid(field), o, ctl))?;
    debug_assert_eq!(morse_sum(&g), 1, "Morse equality on a box");
    Ok(g)
}

/// [`analyse_with`] once the gradient and the vertex order are known (monomorphised per key
/// width). Its first stage's seconds are the memory check's; the caller adds the gradient's.
fn analyse_ordered(
    field: &ScalarField,
    gradient: Gradient,
    order: &(impl VertexOrder + ?Sized),
    stages: &mut impl Stages,
    ctl: &crate::control::Control,
    max_bytes: u64,
) -> Result<Analysis, MscError> {
    let t = std::time::Instant::now();
    let mut laps = crate::laps::Laps::msc("msc");
    let critical = gradient.count_critical();
    laps.lap(|| format!("{critical} critical cells counted"));
    let estimate = memory_estimate(field.len(), critical);
    if estimate > max_bytes {
        return Err(MscError::TooMuchMemory { estimate, budget: max_bytes, critical, voxels: field.len() });
    }
    ctl.tick(1);
    let t1 = t.elapsed().as_secs_f64();
    let device_arcs = gradient.grid.ndim == 3 && stages.saddle_arcs_here();
    let labels_last = stages.labels_last();
    let device = |g: &Gradient, critical: &[complex::CriticalPoint]| {
        let labels = if labels_last { None } else { Some(stages.labels(g, critical)?) };
        if !device_arcs {
            return Ok((labels, None));
        }
        let saddles: Vec<u32> = critical.iter().filter(|p| p.index == 2).map(|p| p.cell as u32).collect();
        Ok((labels, stages.saddle_arcs(g, &saddles)?))
    };
    let mut complex =
        complex::build(gradient, order, |v| field.samples().get_f64(v), device, device_arcs, ctl)?;
    let t2 = t.elapsed().as_secs_f64();
    laps.lap(|| format!("the complex: {} arcs", complex.arcs.len()));
    // On the CPU, what the arcs' threads freed is given back before persistence and the
    // hierarchy allocate on others, and what persistence freed before the hierarchy's loop: the
    // MNI's peak on 16 threads (the 2-core VM) 373 -> 337 MiB after the arcs alone, 322 with
    // both. (Some ms each; the GPU's path, labels last, skips them.)
    let give_back = || {
        if !labels_last {
            crate::mem::give_back_freed()
        }
    };
    give_back();
    laps.lap(|| "freed memory given back".into());
    let c = &complex;
    // Persistence and the hierarchy, and the seconds each took.
    // (The diagram is assembled beside the hierarchy, which needs only the partners.)
    let topology = || -> Result<_, Cancelled> {
        // What the hierarchy needs of the complex alone is made beside persistence (timed on
        // its own: the set-up's wait, where it is longer, counts as the hierarchy's).
        let timed = || {
            let t = std::time::Instant::now();
            (morse::complex_persistence(c, order, ctl), t.elapsed().as_secs_f64())
        };
        let ((pairing, persistence), prepared) = rayon::join(timed, || simplify::Prepared::new(c));
        let (partner, pairs) = pairing?;
        ctl.tick(1);
        ctl.check()?;
        give_back();
        let (diagram, hierarchy) = rayon::join(
            || diagram_of_pairs(field, &c.gradient, order, pairs),
            || simplify::hierarchy_of(prepared, partner, simplify::Pairs::All, ctl),
        );
        ctl.tick(1);
        Ok((diagram, hierarchy?, persistence))
    };
    let (labels, topology) = if labels_last {
        let (labels, topology) = rayon::join(|| stages.labels(&c.gradient, &c.critical), topology);
        (Some(labels?), topology?)
    } else {
        (None, topology()?)
    };
    laps.lap(|| match labels_last {
        true => "persistence and the hierarchy, the labels beside them".into(),
        false => "persistence and the hierarchy".into(),
    });
    let (diagram, hierarchy, persistence) = topology;
    if let Some((basins, mountains)) = labels {
        (complex.basins, complex.mountains) = (basins, mountains);
    }
    // The hierarchy's seconds are the rest of the wait, labels made beside it included.
    let t4 = t.elapsed().as_secs_f64();
    let seconds = [t1, t2 - t1, persistence, t4 - t2 - persistence];
    Ok(Analysis { complex, diagram, hierarchy, seconds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_past_2_31_cells_are_refused() {
        assert_eq!(check_size(&[640, 640, 640]), Ok(()));
        // (2n - 1)^3 passes 2^31 between 645 and 646.
        assert_eq!(check_size(&[645, 645, 645]), Ok(()));
        assert!(matches!(check_size(&[646, 646, 646]), Err(MscError::TooLarge { .. })));
        assert!(matches!(check_size(&[32_768, 32_768]), Err(MscError::TooLarge { .. })));
        assert!(matches!(check_size(&[usize::MAX / 2, 3]), Err(MscError::TooLarge { .. })));
    }

    /// The CPU's stages, with the labels made last (as the GPU's are).
    struct LabelsLast<'a>(CpuStages<'a>);

    impl Stages for LabelsLast<'_> {
        fn gradient(&mut self, order: &FieldOrder) -> Result<Gradient, MscError> {
            self.0.gradient(order)
        }

        fn labels(
            &mut self,
            g: &Gradient,
            critical: &[complex::CriticalPoint],
        ) -> Result<complex::Labels, Cancelled> {
            self.0.labels(g, critical)
        }

        fn labels_last(&self) -> bool {
            true
        }
    }

    #[test]
    fn labels_made_last_are_the_labels() {
        let ctl = crate::control::Control::default();
        for dims in [&[40, 33][..], &[17, 20, 23]] {
            for f in [
                crate::synthetic::white_noise(dims, 3, &ctl).unwrap(),
                crate::synthetic::gaussian_random_field(dims, 2.0, 5, &ctl).unwrap(),
            ] {
                let want = analyse(&f, &ctl).unwrap();
                let got =
                    analyse_with(&f, &ctl, u64::MAX, &mut LabelsLast(CpuStages { field: &f, ctl: &ctl }))
                        .unwrap();
                let (w, g) = (&want.complex, &got.complex);
                assert!(!g.basins.is_empty() && !g.mountains.is_empty());
                assert_eq!((&g.basins, &g.mountains), (&w.basins, &w.mountains));
                assert_eq!((&g.critical, &g.arcs), (&w.critical, &w.arcs));
                assert_eq!(got.diagram, want.diagram);
                assert_eq!(got.hierarchy.cancellations, want.hierarchy.cancellations);
            }
        }
    }
}
