//! One shape for work that may run on the GPU. An [`Op`] is one step of an analysis: its CPU
//! reference, and its way on the GPU where the kernels cover it (by default none).
//! [`Backend::run`](crate::backend::Backend::run) is the one runner: the GPU when there is one and
//! the op takes the input, else the CPU; a GPU that fails gives way to the CPU, which says why.
//! Built without CUDA, `topoview_gpu`'s stand-in makes no device, so the same code runs on the
//! CPU with no `cfg` twin.
//!
//! An op's GPU result must equal its CPU result (exactly for integers, bit for bit for the
//! smoothing and the crack filter): `tests/it/cuda.rs` checks each on a machine with a GPU.

use topoview_core::control::Cancelled;
use topoview_gpu::{Gpu, GpuError};

/// One step that runs on the CPU, or on the GPU where it can.
pub trait Op {
    type Output;
    type Error: From<Cancelled>;

    /// The CPU reference.
    fn cpu(&self) -> Result<Self::Output, Self::Error>;

    /// The step on `devices`: `None` where the GPU has no way for it, or does not take this input
    /// (bad input then gets the CPU's error, which names what is wrong, not a fallback note).
    fn gpu(&self, devices: &Devices) -> Option<Result<Self::Output, GpuError>> {
        let _ = devices;
        None
    }
}

/// What an op may use on the GPU: this thread's handles on every device the backend holds
/// (most ops use the first), and the device memory the ECC may use for a field's slabs.
pub struct Devices<'a> {
    pub gpus: &'a [Gpu],
    pub memory: Option<usize>,
}

impl Devices<'_> {
    /// The device that runs every op but the ECC.
    pub fn first(&self) -> &Gpu {
        &self.gpus[0]
    }
}

/// An op from two closures, for steps that live inside another algorithm's callbacks (the
/// Morse-Smale stages) where a type of their own would only repeat the callback's arguments.
pub struct Steps<G, C> {
    pub gpu: G,
    pub cpu: C,
}

impl<T, E, G, C> Op for Steps<G, C>
where
    E: From<Cancelled>,
    G: Fn(&Devices) -> Option<Result<T, GpuError>>,
    C: Fn() -> Result<T, E>,
{
    type Output = T;
    type Error = E;

    fn cpu(&self) -> Result<T, E> {
        (self.cpu)()
    }

    fn gpu(&self, devices: &Devices) -> Option<Result<T, GpuError>> {
        (self.gpu)(devices)
    }
}
