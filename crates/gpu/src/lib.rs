//! The GPU side of topoview: CUDA kernels (`kernels/*.cu`, compiled to PTX by
//! `scripts/build-ptx.py` and embedded in the binary) launched through cudarc with the driver
//! loaded at run time, so one binary runs everywhere: without a driver or a device,
//! [`Gpu::open`] says why and the caller uses the CPU.
//!
//! Built without the `cuda` feature, the same names are a stand-in ([`dummy`]) whose `Gpu` can
//! never be made: opening says why, and every GPU path above is written once, with no `cfg` twin
//! (candle's dummy backend is the model).
//!
//! Every result is checked against the CPU reference in `tests/it/cuda.rs` (exactly for the ECC
//! and the Morse-Smale gradient, labels and saddle-saddle arcs, bit for bit for smoothing and the
//! crack filter); those tests skip, saying why, where no device is usable.

mod error;

pub use error::GpuError;

#[cfg(feature = "cuda")]
mod cuda;
#[cfg(feature = "cuda")]
pub use cuda::*;

#[cfg(not(feature = "cuda"))]
pub mod dummy;
#[cfg(not(feature = "cuda"))]
pub use dummy::*;
