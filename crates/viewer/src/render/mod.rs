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
pub mod overlay3d;
pub mod scene3d;
pub mod slice;
pub mod transfer;
pub mod volume;
pub mod volume3d;

use eframe::egui_wgpu::wgpu;

/// The layout of a bind group holding one uniform buffer for the shader `stages` (each
/// renderer's per-view parameters).
pub(crate) fn uniform_layout(
    device: &wgpu::Device,
    label: &str,
    stages: wgpu::ShaderStages,
) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: stages,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    })
}

/// A texture binding of a bind group layout (not multisampled), seen by `stages`.
pub(crate) fn texture_entry(
    binding: u32,
    stages: wgpu::ShaderStages,
    sample_type: wgpu::TextureSampleType,
    dim: wgpu::TextureViewDimension,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: stages,
        ty: wgpu::BindingType::Texture { sample_type, view_dimension: dim, multisampled: false },
        count: None,
    }
}

/// A pipeline that draws one full-screen triangle strip (4 vertices, no vertex buffers) with the
/// `vs_main` and `fs_main` of `source` into `target`: the shape of the slice views and of the
/// step that draws the 3D view's image into the window.
pub(crate) fn fullscreen_pipeline(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    layouts: &[&wgpu::BindGroupLayout],
    target: wgpu::TextureFormat,
) -> wgpu::RenderPipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let layouts: Vec<Option<&wgpu::BindGroupLayout>> = layouts.iter().map(|l| Some(*l)).collect();
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &layouts,
        immediate_size: 0,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: Some(&layout),
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleStrip,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(target.into())],
        }),
        multiview_mask: None,
        cache: None,
    })
}

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
            ("slice.wgsl", include_str!("../../../../shaders/slice.wgsl")),
            ("volume3d.wgsl", include_str!("../../../../shaders/volume3d.wgsl")),
            ("bricks.wgsl", include_str!("../../../../shaders/bricks.wgsl")),
        ];
        for (name, source) in templated {
            for texel in ["u32", "i32", "f32"] {
                validate(&format!("{name} ({texel})"), &source.replace("TEXEL", texel));
            }
        }
        validate("blit.wgsl", include_str!("../../../../shaders/blit.wgsl"));
        validate("overlay3d.wgsl", include_str!("../../../../shaders/overlay3d.wgsl"));
    }
}
