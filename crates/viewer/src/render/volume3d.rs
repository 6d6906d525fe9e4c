//! The 3D view's renderer: rays cast through the shared [`GpuVolume`] texture by a compute
//! kernel (`shaders/volume3d.wgsl`) into an offscreen colour image and a depth image, then drawn
//! into the egui window (`shaders/blit.wgsl`). The offscreen images let the view render at a
//! lower resolution while the camera moves, keep the depth (NDC z) for overlays drawn into the
//! same scene later, and are what the headless benchmark renders into.
//!
//! Per volume generation it builds the min/max grid of 8^3-texel bricks (`shaders/bricks.wgsl`,
//! a compute pass) that the ray marcher uses to skip empty space.

use super::gpu_volume::GpuVolume;
use super::overlay3d::{Marks, OverlayRenderer};
use super::scene3d::RayParams;
use super::volume::TexelClass;
use eframe::egui_wgpu::{self, wgpu};
use std::collections::HashMap;

/// The offscreen colour format. The shader writes colormap bytes as they are (sRGB-encoded);
/// the blit reads them through an sRGB view when the window's target is sRGB.
const COLOR: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
const COLOR_SRGB: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
/// The depth image: NDC z of what each pixel shows (1 where the ray hit nothing), written by the
/// kernel as a storage image (a depth attachment cannot be written from a compute kernel).
pub const DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::R32Float;
/// Pixels a workgroup of the kernel covers along x and y (`@workgroup_size` in the shader).
const TILE: u32 = 8;
const BRICK: u32 = 8;
const COMPUTE: wgpu::ShaderStages = wgpu::ShaderStages::COMPUTE;

/// What the renderer needs of the shared volume, cloned out of it.
#[derive(Clone)]
pub struct VolumeRef {
    pub generation: u64,
    pub class: TexelClass,
    pub view: wgpu::TextureView,
    pub texture_dims: [u32; 3],
}

impl VolumeRef {
    pub fn of(v: &GpuVolume) -> Option<VolumeRef> {
        v.complete().then(|| VolumeRef {
            generation: v.generation,
            class: v.class,
            view: v.view.clone(),
            texture_dims: v.layout.dims.map(|n| n as u32),
        })
    }
}

struct Bound {
    generation: u64,
    class: TexelClass,
    bind_group: wgpu::BindGroup,
    bricks: wgpu::Texture,
    /// What the group is rebuilt from when the parts texture comes or goes.
    volume_view: wgpu::TextureView,
    bricks_view: wgpu::TextureView,
    texture_dims: [u32; 3],
}

/// The colours of the threshold set's components, one RGBA8 texel per volume texel (alpha 0:
/// not in a component), drawn on the voxels mode's faces; a 1-texel stand-in when none is shown.
struct PartsTexture {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    dims: [u32; 3],
    /// The version of the colours written into it (None: the stand-in).
    version: Option<u64>,
}

impl PartsTexture {
    fn new(device: &wgpu::Device, dims: [u32; 3]) -> PartsTexture {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("threshold-set components"),
            size: wgpu::Extent3d { width: dims[0], height: dims[1], depth_or_array_layers: dims[2] },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D3,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let view = texture.create_view(&Default::default());
        PartsTexture { texture, view, dims, version: None }
    }
}

/// What one image shows: the frame, the volume generation, the table and marks versions.
#[derive(Clone, Copy, PartialEq)]
struct Drawn {
    params: RayParams,
    size: [u32; 2],
    generation: u64,
    table: Option<u64>,
    marks: Option<u64>,
    parts: Option<u64>,
}

/// One frame of the 3D view: its size in pixels, the rays' uniforms, the marks drawn over it.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    pub size: [u32; 2],
    pub params: &'a RayParams,
    pub marks: Option<&'a Marks>,
}

/// The offscreen image and depth of one size.
pub struct Targets {
    pub size: [u32; 2],
    pub color: wgpu::Texture,
    pub depth: wgpu::Texture,
    color_view: wgpu::TextureView,
    depth_view: wgpu::TextureView,
    /// Both as the kernel's storage images.
    outputs: wgpu::BindGroup,
    blit: Option<wgpu::BindGroup>,
}

pub struct VolumeRenderer {
    source: &'static str,
    bricks_source: &'static str,
    params_layout: wgpu::BindGroupLayout,
    params_buffer: wgpu::Buffer,
    params_group: wgpu::BindGroup,
    layouts: HashMap<&'static str, wgpu::BindGroupLayout>,
    pipelines: HashMap<&'static str, wgpu::ComputePipeline>,
    outputs_layout: wgpu::BindGroupLayout,
    brick_layouts: HashMap<&'static str, wgpu::BindGroupLayout>,
    brick_pipelines: HashMap<&'static str, wgpu::ComputePipeline>,
    table: wgpu::Texture,
    table_view: wgpu::TextureView,
    visible: wgpu::Buffer,
    table_version: Option<u64>,
    bound: Option<Bound>,
    pub targets: Option<Targets>,
    /// What the image in `targets` shows: a frame that would draw the same is not drawn again
    /// (moving a slice or the ECC threshold leaves the 3D view alone unless it shows them).
    drawn: Option<Drawn>,
    /// Critical points and arcs drawn over the volume.
    overlay: OverlayRenderer,
    /// The components' colours (or the stand-in).
    parts: PartsTexture,
    /// Drawing the image into the window: pipeline and layout, for the window's format.
    blit: Option<(wgpu::RenderPipeline, wgpu::BindGroupLayout, wgpu::Sampler, bool)>,
}

impl VolumeRenderer {
    /// Why this adapter cannot run the renderer (it needs compute kernels and write-only
    /// storage images of the colour, depth and brick formats: not in WebGL2 or GLES 3.0), or
    /// None when it can.
    pub fn unsupported(adapter: &wgpu::Adapter, limits: &wgpu::Limits) -> Option<String> {
        let info = adapter.get_info();
        let name = format!("{} ({:?})", info.name, info.backend);
        if !adapter.get_downlevel_capabilities().flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
            return Some(format!("The 3D view needs compute shaders, which {name} does not offer."));
        }
        // The device egui opened may have lower limits than the adapter (WebGL2 defaults on GL).
        let (tile, storage) = (TILE, 2);
        if limits.max_storage_textures_per_shader_stage < storage
            || limits.max_compute_workgroup_size_x < tile
            || limits.max_compute_workgroup_size_y < tile
            || limits.max_compute_invocations_per_workgroup < tile * tile
        {
            return Some(format!(
                "The 3D view needs {storage} storage images and {tile}x{tile} compute workgroups, \
                 more than the device opened on {name} allows."
            ));
        }
        let formats = [COLOR, DEPTH, wgpu::TextureFormat::Rg32Float];
        let missing: Vec<String> = formats
            .iter()
            .filter(|f| {
                let usages = adapter.get_texture_format_features(**f).allowed_usages;
                !usages.contains(wgpu::TextureUsages::STORAGE_BINDING)
            })
            .map(|f| format!("{f:?}"))
            .collect();
        (!missing.is_empty()).then(|| {
            format!(
                "The 3D view needs storage images of {}, which {name} does not offer.",
                missing.join(", ")
            )
        })
    }

    /// Installs the renderer into egui's callback resources (once).
    pub fn install(rs: &egui_wgpu::RenderState) {
        let mut renderer = rs.renderer.write();
        if renderer.callback_resources.get::<VolumeRenderer>().is_some() {
            return;
        }
        let me = VolumeRenderer::new(&rs.device, Some(rs.target_format));
        renderer.callback_resources.insert(me);
    }

    /// A renderer; `window` is the format of the window it is drawn into (None offscreen).
    pub fn new(device: &wgpu::Device, window: Option<wgpu::TextureFormat>) -> VolumeRenderer {
        let params_layout = super::uniform_layout(device, "volume3d params", wgpu::ShaderStages::COMPUTE);
        let storage = |binding, format| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::StorageTexture {
                access: wgpu::StorageTextureAccess::WriteOnly,
                format,
                view_dimension: wgpu::TextureViewDimension::D2,
            },
            count: None,
        };
        let outputs_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("volume3d image"),
            entries: &[storage(0, COLOR), storage(1, DEPTH)],
        });
        let params_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("volume3d params"),
            size: std::mem::size_of::<RayParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("volume3d params"),
            layout: &params_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: params_buffer.as_entire_binding() }],
        });
        let table = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("transfer function"),
            size: wgpu::Extent3d { width: 256, height: 1, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let visible = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("transfer function visible prefix"),
            size: 256 * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let blit = window.map(|format| Self::blit_pipeline(device, format));
        VolumeRenderer {
            source: include_str!("../../../../shaders/volume3d.wgsl"),
            bricks_source: include_str!("../../../../shaders/bricks.wgsl"),
            params_layout,
            params_buffer,
            params_group,
            layouts: HashMap::new(),
            pipelines: HashMap::new(),
            outputs_layout,
            brick_layouts: HashMap::new(),
            brick_pipelines: HashMap::new(),
            table_view: table.create_view(&Default::default()),
            table,
            visible,
            table_version: None,
            bound: None,
            targets: None,
            drawn: None,
            overlay: OverlayRenderer::new(device, COLOR),
            parts: PartsTexture::new(device, [1, 1, 1]),
            blit,
        }
    }

    fn blit_pipeline(
        device: &wgpu::Device,
        format: wgpu::TextureFormat,
    ) -> (wgpu::RenderPipeline, wgpu::BindGroupLayout, wgpu::Sampler, bool) {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("volume3d blit"),
            entries: &[
                super::texture_entry(
                    0,
                    wgpu::ShaderStages::FRAGMENT,
                    wgpu::TextureSampleType::Float { filterable: true },
                    wgpu::TextureViewDimension::D2,
                ),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let source = include_str!("../../../../shaders/blit.wgsl");
        let pipeline = super::fullscreen_pipeline(device, "volume3d blit", source, &[&layout], format);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("volume3d blit"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        (pipeline, layout, sampler, format.is_srgb())
    }

    fn layout(&mut self, device: &wgpu::Device, class: TexelClass) -> wgpu::BindGroupLayout {
        self.layouts
            .entry(class.wgsl())
            .or_insert_with(|| {
                let nonfilter = wgpu::TextureSampleType::Float { filterable: false };
                device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("volume3d volume"),
                    entries: &[
                        super::texture_entry(0, COMPUTE, class.sample_type(), wgpu::TextureViewDimension::D3),
                        super::texture_entry(1, COMPUTE, nonfilter, wgpu::TextureViewDimension::D2),
                        wgpu::BindGroupLayoutEntry {
                            binding: 2,
                            visibility: wgpu::ShaderStages::COMPUTE,
                            ty: wgpu::BindingType::Buffer {
                                ty: wgpu::BufferBindingType::Storage { read_only: true },
                                has_dynamic_offset: false,
                                min_binding_size: None,
                            },
                            count: None,
                        },
                        super::texture_entry(3, COMPUTE, nonfilter, wgpu::TextureViewDimension::D3),
                        super::texture_entry(4, COMPUTE, nonfilter, wgpu::TextureViewDimension::D3),
                    ],
                })
            })
            .clone()
    }

    fn pipeline(&mut self, device: &wgpu::Device, class: TexelClass) {
        if self.pipelines.contains_key(class.wgsl()) {
            return;
        }
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("volume3d.wgsl"),
            source: wgpu::ShaderSource::Wgsl(self.source.replace("TEXEL", class.wgsl()).into()),
        });
        let volume_layout = self.layout(device, class);
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("volume3d"),
            bind_group_layouts: &[
                Some(&self.params_layout),
                Some(&volume_layout),
                Some(&self.outputs_layout),
            ],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("volume3d"),
            layout: Some(&layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        self.pipelines.insert(class.wgsl(), pipeline);
    }

    fn brick_pipeline(
        &mut self,
        device: &wgpu::Device,
        class: TexelClass,
    ) -> (wgpu::ComputePipeline, wgpu::BindGroupLayout) {
        if let (Some(p), Some(l)) =
            (self.brick_pipelines.get(class.wgsl()), self.brick_layouts.get(class.wgsl()))
        {
            return (p.clone(), l.clone());
        }
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("bricks"),
            entries: &[
                super::texture_entry(0, COMPUTE, class.sample_type(), wgpu::TextureViewDimension::D3),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::StorageTexture {
                        access: wgpu::StorageTextureAccess::WriteOnly,
                        format: wgpu::TextureFormat::Rg32Float,
                        view_dimension: wgpu::TextureViewDimension::D3,
                    },
                    count: None,
                },
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("bricks.wgsl"),
            source: wgpu::ShaderSource::Wgsl(self.bricks_source.replace("TEXEL", class.wgsl()).into()),
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("bricks"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("bricks"),
            layout: Some(&pl),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        self.brick_pipelines.insert(class.wgsl(), pipeline.clone());
        self.brick_layouts.insert(class.wgsl(), layout.clone());
        (pipeline, layout)
    }

    /// Binds a new volume generation: builds its brick grid on the GPU (recorded into
    /// `encoder`) and the bind group the ray marcher reads. Nothing when it is bound already.
    pub fn bind_volume(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        volume: &VolumeRef,
    ) {
        if self.bound.as_ref().is_some_and(|b| b.generation == volume.generation) {
            return;
        }
        self.pipeline(device, volume.class);
        let nb = volume.texture_dims.map(|n| n.div_ceil(BRICK).max(1));
        let bricks = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("bricks"),
            size: wgpu::Extent3d { width: nb[0], height: nb[1], depth_or_array_layers: nb[2] },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D3,
            format: wgpu::TextureFormat::Rg32Float,
            usage: wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::STORAGE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let bricks_view = bricks.create_view(&Default::default());
        let (compute, compute_layout) = self.brick_pipeline(device, volume.class);
        let compute_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("bricks"),
            layout: &compute_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&volume.view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&bricks_view),
                },
            ],
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("bricks"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&compute);
            pass.set_bind_group(0, &compute_group, &[]);
            pass.dispatch_workgroups(nb[0].div_ceil(4), nb[1].div_ceil(4), nb[2].div_ceil(4));
        }
        // A new volume's texels: the old volume's component colours do not fit it.
        if self.parts.version.is_some() {
            self.parts = PartsTexture::new(device, [1, 1, 1]);
        }
        let bind_group = self.volume_group(device, volume.class, &volume.view, &bricks_view);
        self.bound = Some(Bound {
            generation: volume.generation,
            class: volume.class,
            bind_group,
            bricks,
            volume_view: volume.view.clone(),
            bricks_view,
            texture_dims: volume.texture_dims,
        });
    }

    fn volume_group(
        &mut self,
        device: &wgpu::Device,
        class: TexelClass,
        volume: &wgpu::TextureView,
        bricks: &wgpu::TextureView,
    ) -> wgpu::BindGroup {
        let layout = self.layout(device, class);
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("volume3d volume"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(volume) },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&self.table_view),
                },
                wgpu::BindGroupEntry { binding: 2, resource: self.visible.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: wgpu::BindingResource::TextureView(bricks) },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: wgpu::BindingResource::TextureView(&self.parts.view),
                },
            ],
        })
    }

    /// Writes the components' colours (`texels`: RGBA8, one per texel of the bound volume, x
    /// fastest) when their version changed; None goes back to the stand-in. Nothing without a
    /// bound volume or when the texels do not fit it.
    pub fn set_parts(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, parts: Option<(u64, &[u8])>) {
        let Some(b) = &self.bound else { return };
        let dims = b.texture_dims;
        let texels = dims.iter().map(|&n| n as usize).product::<usize>() * 4;
        let parts = parts.filter(|(_, t)| t.len() == texels);
        if parts.map(|p| p.0) == self.parts.version {
            return;
        }
        let rebuild = match parts {
            Some((version, t)) => {
                let fresh = self.parts.dims != dims || self.parts.version.is_none();
                if fresh {
                    self.parts = PartsTexture::new(device, dims);
                }
                queue.write_texture(
                    self.parts.texture.as_image_copy(),
                    t,
                    wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(dims[0] * 4),
                        rows_per_image: Some(dims[1]),
                    },
                    wgpu::Extent3d { width: dims[0], height: dims[1], depth_or_array_layers: dims[2] },
                );
                self.parts.version = Some(version);
                fresh
            }
            None => {
                self.parts = PartsTexture::new(device, [1, 1, 1]);
                true
            }
        };
        if rebuild && let Some(b) = &self.bound {
            let (class, volume, bricks) = (b.class, b.volume_view.clone(), b.bricks_view.clone());
            let group = self.volume_group(device, class, &volume, &bricks);
            if let Some(b) = &mut self.bound {
                b.bind_group = group;
            }
        }
    }

    /// The min/max grid of the bound volume (Rg32Float, one texel per 8^3 brick), for tests.
    pub fn bricks(&self) -> Option<&wgpu::Texture> {
        self.bound.as_ref().map(|b| &b.bricks)
    }

    /// Uploads the transfer-function table when its version changed.
    pub fn set_table(&mut self, queue: &wgpu::Queue, version: u64, table: &[[u8; 4]]) {
        if self.table_version == Some(version) || table.len() != 256 {
            return;
        }
        queue.write_texture(
            self.table.as_image_copy(),
            bytemuck::cast_slice(table),
            wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(256 * 4), rows_per_image: Some(1) },
            wgpu::Extent3d { width: 256, height: 1, depth_or_array_layers: 1 },
        );
        let prefix = super::transfer::TransferFunction::visible_prefix(table);
        queue.write_buffer(&self.visible, 0, bytemuck::cast_slice(&prefix));
        self.table_version = Some(version);
    }

    fn targets(&mut self, device: &wgpu::Device, size: [u32; 2]) {
        if self.targets.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        let extent = wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 };
        let color = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("volume3d colour"),
            size: extent,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: COLOR,
            usage: wgpu::TextureUsages::STORAGE_BINDING
                | wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[COLOR_SRGB],
        });
        let depth = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("volume3d depth"),
            size: extent,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DEPTH,
            usage: wgpu::TextureUsages::STORAGE_BINDING
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let color_view = color.create_view(&Default::default());
        let depth_view = depth.create_view(&Default::default());
        let outputs = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("volume3d image"),
            layout: &self.outputs_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&color_view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&depth_view),
                },
            ],
        });
        let blit = self.blit.as_ref().map(|(_, layout, sampler, srgb)| {
            let view = color.create_view(&wgpu::TextureViewDescriptor {
                format: Some(if *srgb { COLOR_SRGB } else { COLOR }),
                ..Default::default()
            });
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("volume3d blit"),
                layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
                    wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(sampler) },
                ],
            })
        });
        self.targets = Some(Targets { size, color, depth, color_view, depth_view, outputs, blit });
    }

    /// Records the ray marching of `params` into the offscreen images of `size` pixels, unless
    /// the target already shows exactly that (`force` draws anyway: benchmarks). The volume must
    /// be bound ([`VolumeRenderer::bind_volume`]); false when it is not.
    pub fn render(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        frame: Frame,
        force: bool,
    ) -> bool {
        let Frame { size, params, marks } = frame;
        let size = [size[0].max(1), size[1].max(1)];
        self.targets(device, size);
        let (Some(bound), Some(t)) = (&self.bound, &self.targets) else { return false };
        let Some(pipeline) = self.pipelines.get(bound.class.wgsl()) else { return false };
        let what = Drawn {
            params: *params,
            size,
            generation: bound.generation,
            table: self.table_version,
            marks: marks.map(|m| m.version),
            parts: self.parts.version,
        };
        if self.drawn == Some(what) && !force {
            return true;
        }
        self.drawn = Some(what);
        queue.write_buffer(&self.params_buffer, 0, bytemuck::bytes_of(params));
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("volume3d"),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &self.params_group, &[]);
        pass.set_bind_group(1, &bound.bind_group, &[]);
        pass.set_bind_group(2, &t.outputs, &[]);
        pass.dispatch_workgroups(size[0].div_ceil(TILE), size[1].div_ceil(TILE), 1);
        drop(pass);
        if let Some(m) = marks {
            let (color, depth) = (&t.color_view, &t.depth_view);
            self.overlay.draw(device, queue, encoder, color, depth, size, params, m);
        }
        true
    }

    /// Draws the last rendered image into the window's pass.
    fn paint(&self, pass: &mut wgpu::RenderPass<'static>) {
        let (Some((pipeline, ..)), Some(t)) = (&self.blit, &self.targets) else { return };
        let Some(group) = &t.blit else { return };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..4, 0..1);
    }
}

/// The 3D view's draw call: ray marching in `prepare`, the image drawn in `paint`.
pub struct View3dCallback {
    pub params: RayParams,
    /// Offscreen size in pixels (lower than the view's while the camera moves).
    pub size: [u32; 2],
    pub table_version: u64,
    pub table: std::sync::Arc<Vec<[u8; 4]>>,
    /// Critical points and arcs to draw over the volume.
    pub marks: Option<std::sync::Arc<Marks>>,
    /// The threshold set's component colours (version, RGBA8 per volume texel), when shown.
    pub parts: Option<(u64, std::sync::Arc<Vec<u8>>)>,
}

impl egui_wgpu::CallbackTrait for View3dCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen: &egui_wgpu::ScreenDescriptor,
        _egui_encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        let Some(volume) = resources.get::<GpuVolume>().and_then(VolumeRef::of) else { return Vec::new() };
        if let Some(me) = resources.get_mut::<VolumeRenderer>() {
            // Our own encoder, submitted here: egui drops its encoder unsubmitted when a frame's
            // surface cannot be had (a resize), and the renderer has by then recorded the brick
            // grid and the image as done.
            let mut encoder = device.create_command_encoder(&Default::default());
            me.set_table(queue, self.table_version, &self.table);
            me.bind_volume(device, &mut encoder, &volume);
            me.set_parts(device, queue, self.parts.as_ref().map(|(v, t)| (*v, t.as_slice())));
            let frame = Frame { size: self.size, params: &self.params, marks: self.marks.as_deref() };
            me.render(device, queue, &mut encoder, frame, false);
            queue.submit([encoder.finish()]);
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        let ready = resources.get::<GpuVolume>().is_some_and(|v| v.complete());
        if let (true, Some(me)) = (ready, resources.get::<VolumeRenderer>()) {
            me.paint(pass);
        }
    }
}
