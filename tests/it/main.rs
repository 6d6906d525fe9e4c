//! Every integration test in one binary: each test binary links the whole crate with the
//! viewer's dependencies (about 260 MB in release), so one binary instead of two dozen saves
//! most of the test build's links and about 6 GB of disk. The modules are the former test
//! files, named after what they check; `common` holds their helpers.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod bad_input;
mod betti;
mod cancellation;
mod cli_cracks;
mod cli_exports;
mod cracks;
#[cfg(feature = "cuda")]
mod cuda;
#[cfg(feature = "cuda")]
mod cuda_ptx;
mod ecc_closed_forms;
mod ecc_paths;
mod ecc_properties;
mod ecc_stream;
mod io_readers;
mod msc_complex;
mod msc_gradient;
mod msc_gudhi;
mod msc_simplify;
mod reliability;
#[cfg(feature = "viewer")]
mod render3d;
mod rips;
mod smooth;
#[cfg(feature = "viewer")]
mod viewer;
#[cfg(feature = "viewer")]
mod viewer_tiles;
