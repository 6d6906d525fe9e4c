//! Marks drawn into the 3D view after the ray marcher (`shaders/overlay3d.wgsl`): discs facing
//! the camera (critical points) and lines (arcs), hidden where the ray marcher's depth image says
//! the volume shows something nearer. The marks are built on the CPU once per change of what
//! they show ([`Marks::version`]) and uploaded once per version.

use eframe::egui_wgpu::wgpu;

/// A disc: centre in voxel-index space, radius in pixels, colour (sRGB bytes, alpha).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PointMark {
    pub position: [f32; 3],
    pub radius: f32,
    pub color: [u8; 4],
}

/// One end of a line segment (segments are consecutive pairs).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LineVertex {
    pub position: [f32; 3],
    pub color: [u8; 4],
}

/// What the 3D view draws over the volume.
#[derive(Debug, Default, PartialEq)]
pub struct Marks {
    /// Changes whenever the marks do (the renderer uploads once per version).
    pub version: u64,
    pub points: Vec<PointMark>,
    pub lines: Vec<LineVertex>,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    mvp: [[f32; 4]; 4],
    viewport: [f32; 4],
    clip_min: [f32; 4],
    clip_max: [f32; 4],
}

pub struct OverlayRenderer {
    points_pipeline: wgpu::RenderPipeline,
    lines_pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    params: wgpu::Buffer,
    uploaded: Option<Uploaded>,
}

/// Marks on the GPU: their version, and the points' and line vertices' buffers with counts.
struct Uploaded {
    version: u64,
    points: Option<(wgpu::Buffer, u32)>,
    lines: Option<(wgpu::Buffer, u32)>,
}

impl OverlayRenderer {
    /// Pipelines drawing into `color` (the 3D view's image format).
    pub fn new(device: &wgpu::Device, color: wgpu::TextureFormat) -> OverlayRenderer {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("overlay3d"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                super::texture_entry(
                    1,
                    wgpu::ShaderStages::FRAGMENT,
                    wgpu::TextureSampleType::Float { filterable: false },
                    wgpu::TextureViewDimension::D2,
                ),
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("overlay3d.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../../../shaders/overlay3d.wgsl").into()),
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("overlay3d"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let target = [Some(wgpu::ColorTargetState {
            format: color,
            blend: Some(wgpu::BlendState::ALPHA_BLENDING),
            write_mask: wgpu::ColorWrites::ALL,
        })];
        let pipeline = |vs: &str, fs: &str, buffer: wgpu::VertexBufferLayout, topology| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some("overlay3d"),
                layout: Some(&pl),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(vs),
                    compilation_options: Default::default(),
                    buffers: &[Some(buffer)],
                },
                primitive: wgpu::PrimitiveState { topology, ..Default::default() },
                depth_stencil: None,
                multisample: wgpu::MultisampleState::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(fs),
                    compilation_options: Default::default(),
                    targets: &target,
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let point_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32, 2 => Unorm8x4];
        let line_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Unorm8x4];
        let points_pipeline = pipeline(
            "vs_point",
            "fs_point",
            wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<PointMark>() as u64,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &point_attrs,
            },
            wgpu::PrimitiveTopology::TriangleStrip,
        );
        let lines_pipeline = pipeline(
            "vs_line",
            "fs_line",
            wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<LineVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &line_attrs,
            },
            wgpu::PrimitiveTopology::LineList,
        );
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("overlay3d params"),
            size: std::mem::size_of::<Params>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        OverlayRenderer { points_pipeline, lines_pipeline, layout, params, uploaded: None }
    }

    fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, marks: &Marks) {
        if self.uploaded.as_ref().is_some_and(|u| u.version == marks.version) {
            return;
        }
        let buffer = |bytes: &[u8], n: usize| {
            (n > 0).then(|| {
                let b = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("overlay3d marks"),
                    size: bytes.len() as u64,
                    usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                queue.write_buffer(&b, 0, bytes);
                (b, n as u32)
            })
        };
        let points = buffer(bytemuck::cast_slice(&marks.points), marks.points.len());
        let lines = buffer(bytemuck::cast_slice(&marks.lines), marks.lines.len());
        self.uploaded = Some(Uploaded { version: marks.version, points, lines });
    }

    /// Records the marks' pass into `color`, tested against `depth` (the ray marcher's depth
    /// image of the same size), with the ray marcher's camera and clipping box (`rays`).
    #[allow(clippy::too_many_arguments)]
    pub fn draw(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        color: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        size: [u32; 2],
        rays: &super::scene3d::RayParams,
        marks: &Marks,
    ) {
        self.upload(device, queue, marks);
        let Some(Uploaded { points, lines, .. }) = &self.uploaded else { return };
        if points.is_none() && lines.is_none() {
            return;
        }
        let p = Params {
            mvp: rays.mvp,
            viewport: [size[0] as f32, size[1] as f32, 0.0, 0.0],
            clip_min: rays.clip_min,
            clip_max: rays.clip_max,
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&p));
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("overlay3d"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: self.params.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::TextureView(depth) },
            ],
        });
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("overlay3d"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: color,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations { load: wgpu::LoadOp::Load, store: wgpu::StoreOp::Store },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &group, &[]);
        if let Some((b, n)) = lines {
            pass.set_pipeline(&self.lines_pipeline);
            pass.set_vertex_buffer(0, b.slice(..));
            pass.draw(0..*n, 0..1);
        }
        if let Some((b, n)) = points {
            pass.set_pipeline(&self.points_pipeline);
            pass.set_vertex_buffer(0, b.slice(..));
            pass.draw(0..4, 0..*n);
        }
    }
}
