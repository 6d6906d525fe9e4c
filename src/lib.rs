//! topoview: the topology of images and volumes.
//!
//! Data flow one way: [`io`] reads a file into a [`field::ScalarField`]; [`topo`] holds the
//! mathematics as plain CPU code (the reference for every other backend); [`export`] writes
//! results; the command line lives in the binary (`src/main.rs`, `src/cli`).

pub mod control;
pub mod field;
pub mod topo;
