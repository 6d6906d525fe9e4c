//! The GPU built without CUDA: the names the CUDA backend has, where a [`Gpu`] cannot be made
//! (it holds an uninhabited field), so every method is unreachable and the compiler proves it;
//! opening one says this build has no CUDA.

use crate::GpuError;
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::io::Block;
use topoview_core::topo::betti::{Merges, Plan};
use topoview_core::topo::cracks::{CrackMap, CrackOptions, Image};
use topoview_core::topo::ecc::stream::{Planes, ValueSums};
use topoview_core::topo::ecc::{Ecc, EccOptions};
use topoview_core::topo::msc::complex::{CriticalPoint, Labels, SaddleArc};
use topoview_core::topo::msc::gradient::Gradient;
use topoview_core::topo::msc::grid::CellGrid;
use topoview_core::topo::rips::index::Entry;
use topoview_core::topo::rips::{Columns, Listed, Listing, Offload, RipsError};
use topoview_core::topo::smooth::Smoothing;

/// No value: what a [`Gpu`] would hold.
#[derive(Debug)]
enum Never {}

const WHY: &str = "this topoview was built without CUDA (the `cuda` feature)";

fn unavailable<T>() -> Result<T, GpuError> {
    Err(GpuError::Unavailable(WHY.into()))
}

/// A device that cannot exist in this build.
pub struct Gpu {
    pub name: String,
    pub ordinal: usize,
    never: Never,
}

/// The gradient's codes on a device: none in this build.
pub struct DeviceGradient {
    never: Never,
}

/// The kernels' timings: none in this build.
pub enum GpuEccTimes {}

/// The scale-space's grid on a device (the CUDA backend's limit, so that both builds send the
/// same grids to the GPU path).
pub mod grid {
    pub const GRID_MAX: usize = 1024;
}

pub fn ecc_spread(
    _: &[Gpu],
    _: &ScalarField,
    _: &EccOptions,
    _: Option<usize>,
    _: &Control,
) -> Result<(Ecc, GpuEccTimes), GpuError> {
    unavailable()
}

pub fn ecc_block_spread(
    _: &[Gpu],
    _: &Block,
    _: &EccOptions,
    _: Option<usize>,
    _: &Control,
) -> Result<(Ecc, GpuEccTimes), GpuError> {
    unavailable()
}

pub fn block_value_sums(
    _: &[Gpu],
    _: &Block,
    _: &EccOptions,
    _: Option<usize>,
    _: &Planes,
    _: &Control,
) -> Result<ValueSums, GpuError> {
    unavailable()
}

impl Gpu {
    pub fn open() -> Result<Gpu, GpuError> {
        unavailable()
    }

    pub fn open_devices(_: Option<usize>) -> Result<Vec<Gpu>, GpuError> {
        unavailable()
    }

    pub fn device_count() -> Result<usize, GpuError> {
        Ok(0)
    }

    pub fn fork(&self) -> Result<Gpu, GpuError> {
        match self.never {}
    }

    pub fn smooth(&self, _: &ScalarField, _: &Smoothing) -> Result<ScalarField, GpuError> {
        match self.never {}
    }

    pub fn smooth_ecc(
        &self,
        _: &ScalarField,
        _: &Smoothing,
        _: &EccOptions,
        _: &Control,
    ) -> Result<(ScalarField, Ecc), GpuError> {
        match self.never {}
    }

    pub fn smoothed_chi_on_grid(
        &self,
        _: &ScalarField,
        _: &[f64],
        _: &EccOptions,
        _: &[f64],
        _: &Control,
    ) -> Result<Vec<Vec<i64>>, GpuError> {
        match self.never {}
    }

    pub fn cracks(&self, _: &Image, _: &CrackOptions, _: &Control) -> Result<CrackMap, GpuError> {
        match self.never {}
    }

    pub fn betti_merges(&self, _: &Plan, _: &Control) -> Result<Merges, GpuError> {
        match self.never {}
    }

    pub fn preload_msc(&self) {
        match self.never {}
    }

    pub fn msc_gradient(&self, _: &ScalarField, _: CellGrid) -> Result<(Gradient, DeviceGradient), GpuError> {
        match self.never {}
    }

    pub fn msc_labels(
        &self,
        d: &DeviceGradient,
        _: &[CriticalPoint],
        _: &Control,
    ) -> Result<Labels, GpuError> {
        match d.never {}
    }

    pub fn msc_saddle_arcs(
        &self,
        _: &Gradient,
        d: &DeviceGradient,
        _: &[u32],
        _: &Control,
    ) -> Result<Vec<SaddleArc>, GpuError> {
        match d.never {}
    }
}

/// The Rips offload of a device that cannot exist in this build.
pub struct RipsOnGpu<'g> {
    gpu: &'g Gpu,
}

impl<'g> RipsOnGpu<'g> {
    pub fn new(gpu: &'g Gpu, _: &'g Control<'g>) -> RipsOnGpu<'g> {
        RipsOnGpu { gpu }
    }

    pub fn failure(self) -> Option<GpuError> {
        match self.gpu.never {}
    }
}

impl Offload for RipsOnGpu<'_> {
    fn apparent(&mut self, _: &Columns) -> Result<Vec<Option<Entry>>, RipsError> {
        match self.gpu.never {}
    }

    fn next_columns(&mut self, _: &Listing) -> Result<Option<Listed>, RipsError> {
        match self.gpu.never {}
    }
}
