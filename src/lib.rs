//! topoview: the topology of images and volumes.
//!
//! Data flow one way: [`io`] reads a file into a [`field::ScalarField`]; [`topo`] holds the
//! mathematics as plain CPU code (the reference for every other backend); [`export`] writes
//! results; [`control`] carries progress and cancellation. The command line lives in the binary
//! (`src/main.rs`, `src/cli`). Rooms for later work: `compute` (backend choice and the worker
//! thread), `cuda` (kernels from `kernels/`), `app` and `render` (the viewer, shaders in
//! `shaders/`).

pub mod bench;
pub mod control;
pub mod export;
pub mod field;
pub mod io;
pub mod mem;
pub mod topo;
