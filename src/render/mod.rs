//! Drawing with wgpu inside the egui window: slice views of a volume texture with colormaps and
//! the threshold mask ([`slice`]), the 3D view ([`volume3d`], with its [`camera`], [`scene3d`]
//! uniforms and [`transfer`] function), the one copy of the volume on the GPU that every
//! renderer reads ([`gpu_volume`]), and what decides how a field becomes a texture ([`volume`]).
//! Shaders live in `shaders/`.

pub mod colormap;
#[rustfmt::skip]
mod colormap_tables;
pub mod bench3d;
pub mod camera;
pub mod gpu_volume;
pub mod scene3d;
pub mod slice;
pub mod transfer;
pub mod volume;
pub mod volume3d;

/// Every shader, for every texel type it is instantiated with, parses and validates: CI has no
/// GPU, so this is where a WGSL mistake is caught before a user's driver sees it.
#[cfg(test)]
mod shader_tests {
    fn validate(name: &str, source: &str) {
        let module = naga::front::wgsl::parse_str(source)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::default(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }

    #[test]
    fn shaders_validate_for_every_texel_type() {
        let templated = [
            ("slice.wgsl", include_str!("../../shaders/slice.wgsl")),
            ("volume3d.wgsl", include_str!("../../shaders/volume3d.wgsl")),
            ("bricks.wgsl", include_str!("../../shaders/bricks.wgsl")),
        ];
        for (name, source) in templated {
            for texel in ["u32", "i32", "f32"] {
                validate(&format!("{name} ({texel})"), &source.replace("TEXEL", texel));
            }
        }
        validate("blit.wgsl", include_str!("../../shaders/blit.wgsl"));
    }
}
