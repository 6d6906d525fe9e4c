//! topoview's viewer: the eframe app ([`app`]) and the wgpu renderers it draws with
//! ([`render`], shaders in `shaders/`). It submits jobs to `topoview_compute`'s worker and never
//! waits on compute or on file reading.

pub mod app;
pub mod render;
