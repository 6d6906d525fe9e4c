//! topoview's core: fields, readers, the mathematics and the exports, with no GUI, no GPU, no
//! threads of a job system and no argument parser (the crates above add those).
//!
//! Data flow one way: [`io`] reads a file into a [`field::ScalarField`]; [`topo`] holds the
//! mathematics as plain CPU code (the reference for every other backend); [`export`] writes
//! results; [`control`] carries progress and cancellation; [`synthetic`] makes seeded fields for
//! examples, tests and benchmarks; [`mem`] and [`laps`] measure memory and time.
//! `docs/ARCHITECTURE.md` has the map of the crates and what each may use.

pub mod control;
pub mod export;
pub mod field;
pub mod io;
pub mod laps;
pub mod mem;
pub mod synthetic;
pub mod topo;
