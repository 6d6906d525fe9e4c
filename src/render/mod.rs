//! Drawing with wgpu inside the egui window: slice views of a volume texture with colormaps and
//! the threshold mask ([`slice`]), and what decides how a field becomes a texture ([`volume`]).
//! Shaders live in `shaders/`.

pub mod colormap;
#[rustfmt::skip]
mod colormap_tables;
pub mod slice;
pub mod volume;
