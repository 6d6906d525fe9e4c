//! topoview: the topology of images and volumes.
//!
//! Data flow one way: [`io`] reads a file into a [`field::ScalarField`]; [`topo`] holds the
//! mathematics as plain CPU code (the reference for every other backend); [`export`] writes
//! results; [`control`] carries progress and cancellation; [`cuda`] runs the ECC and smoothing
//! on an NVIDIA GPU (kernels in `kernels/`), equal to the CPU's results; [`compute`] picks the
//! backend and runs jobs on worker threads (one per lane) for the viewer ([`app`]), which draws with wgpu
//! through [`render`] (shaders in `shaders/`). The command line lives in the binary
//! (`src/main.rs`, `src/cli`). `docs/ARCHITECTURE.md` has the map of the modules and what each
//! may use.
//!
//! Features: `viewer` ([`app`], [`render`]) and `cuda` ([`cuda`]), both on by default; without
//! them the command line builds alone.

#[cfg(feature = "viewer")]
pub mod app;
pub mod bench;
pub mod compute;
pub mod control;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod export;
pub mod field;
pub mod io;
pub mod laps;
pub mod mem;
#[cfg(feature = "viewer")]
pub mod render;
pub mod synthetic;
pub mod topo;
// The Python module `topoview._topoview` (see python/topoview).
#[cfg(feature = "python")]
mod python;
