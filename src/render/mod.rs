//! Drawing with wgpu inside the egui window: slice views of a volume texture with colormaps and
//! the threshold mask ([`slice`]), the one copy of the volume on the GPU that every renderer
//! reads ([`gpu_volume`]), and what decides how a field becomes a texture ([`volume`]).
//! Shaders live in `shaders/`.

pub mod colormap;
#[rustfmt::skip]
mod colormap_tables;
pub mod gpu_volume;
pub mod slice;
pub mod volume;
