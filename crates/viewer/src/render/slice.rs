//! Slice views drawn by wgpu inside egui. The renderer holds what lives as long as the window
//! (pipelines per texel class, the colormap table, one uniform buffer per view) and reads the
//! volume from the shared [`GpuVolume`]; what changes per frame is each view's 112-byte
//! uniform block (which slice, where, window, colormap, mask) in [`SliceCallback`].

use super::colormap::Colormap;
use super::gpu_volume::GpuVolume;
use super::volume::TexelClass;
use eframe::egui_wgpu::{self, wgpu};
use std::collections::HashMap;

/// Uniforms of one view; layout matches `Params` in `shaders/slice.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SliceParams {
    pub center: [f32; 2],
    pub half_extent: [f32; 2],
    /// u axis, v axis, normal axis, slice index.
    pub axes: [u32; 4],
    /// dims x, y, z and the display stride (filled in by the renderer).
    pub dims: [u32; 4],
    pub window: [f32; 2],
    pub colormap: u32,
    pub mask_mode: u32,
    /// Threshold bits in the texel type, in `.x`.
    pub threshold: [u32; 4],
    pub mask_color: [f32; 4],
    pub background: [f32; 4],
}

/// The volume's bind group, for one generation of the shared volume.
struct Bound {
    generation: u64,
    class: TexelClass,
    bind_group: wgpu::BindGroup,
}

/// What the slice renderer needs of the shared volume (cloned out of it, so both can be
/// borrowed from the callback resources in turn).
struct VolumeRef {
    generation: u64,
    class: TexelClass,
    view: wgpu::TextureView,
    /// Field dims and display stride, as the shader's `dims`.
    dims: [u32; 4],
}

impl VolumeRef {
    fn of(resources: &egui_wgpu::CallbackResources) -> Option<VolumeRef> {
        let v = resources.get::<GpuVolume>().filter(|v| v.complete())?;
        Some(VolumeRef {
            generation: v.generation,
            class: v.class,
            view: v.view.clone(),
            dims: [v.dims[0] as u32, v.dims[1] as u32, v.dims[2] as u32, v.layout.stride as u32],
        })
    }
}

struct ViewSlot {
    buffer: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
}

/// Everything the slice callbacks need, kept in egui_wgpu's callback resources.
pub struct SliceRenderer {
    target: wgpu::TextureFormat,
    shader_source: &'static str,
    params_layout: wgpu::BindGroupLayout,
    volume_layouts: HashMap<&'static str, wgpu::BindGroupLayout>,
    pipelines: HashMap<&'static str, wgpu::RenderPipeline>,
    lut_view: wgpu::TextureView,
    slots: Vec<ViewSlot>,
    bound: Option<Bound>,
}

impl SliceRenderer {
    /// Installs the renderer into `rs` (once; later calls keep the existing one).
    pub fn install(rs: &egui_wgpu::RenderState) {
        let mut renderer = rs.renderer.write();
        if renderer.callback_resources.get::<SliceRenderer>().is_some() {
            return;
        }
        let me = SliceRenderer::new(&rs.device, &rs.queue, rs.target_format);
        renderer.callback_resources.insert(me);
    }

    fn new(device: &wgpu::Device, queue: &wgpu::Queue, target: wgpu::TextureFormat) -> SliceRenderer {
        let params_layout = super::uniform_layout(device, "slice params", wgpu::ShaderStages::FRAGMENT);
        // The colormap rows are sRGB bytes: an sRGB target needs them decoded to linear first.
        let lut_format = if target.is_srgb() {
            wgpu::TextureFormat::Rgba8UnormSrgb
        } else {
            wgpu::TextureFormat::Rgba8Unorm
        };
        let rows = Colormap::ALL.len() as u32;
        let lut = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("colormaps"),
            size: wgpu::Extent3d { width: 256, height: rows, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: lut_format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        queue.write_texture(
            lut.as_image_copy(),
            &Colormap::lut_texels(),
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(256 * 4),
                rows_per_image: Some(rows),
            },
            wgpu::Extent3d { width: 256, height: rows, depth_or_array_layers: 1 },
        );
        SliceRenderer {
            target,
            shader_source: include_str!("../../../../shaders/slice.wgsl"),
            params_layout,
            volume_layouts: HashMap::new(),
            pipelines: HashMap::new(),
            lut_view: lut.create_view(&Default::default()),
            slots: Vec::new(),
            bound: None,
        }
    }

    fn volume_layout(&mut self, device: &wgpu::Device, class: TexelClass) -> &wgpu::BindGroupLayout {
        self.volume_layouts.entry(class.wgsl()).or_insert_with(|| {
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("slice volume"),
                entries: &[
                    super::texture_entry(
                        0,
                        wgpu::ShaderStages::FRAGMENT,
                        class.sample_type(),
                        wgpu::TextureViewDimension::D3,
                    ),
                    super::texture_entry(
                        1,
                        wgpu::ShaderStages::FRAGMENT,
                        wgpu::TextureSampleType::Float { filterable: false },
                        wgpu::TextureViewDimension::D2,
                    ),
                ],
            })
        })
    }

    fn ensure_pipeline(&mut self, device: &wgpu::Device, class: TexelClass) {
        if self.pipelines.contains_key(class.wgsl()) {
            return;
        }
        let source = self.shader_source.replace("TEXEL", class.wgsl());
        let volume_layout = self.volume_layout(device, class).clone();
        let layouts = [&self.params_layout, &volume_layout];
        let pipeline = super::fullscreen_pipeline(device, "slice", &source, &layouts, self.target);
        self.pipelines.insert(class.wgsl(), pipeline);
    }

    /// The bind group of the shared volume (and the colormaps) for generation `volume`,
    /// rebuilt only when the volume changed.
    fn bind_volume(&mut self, device: &wgpu::Device, volume: &VolumeRef) {
        if self.bound.as_ref().is_some_and(|b| b.generation == volume.generation) {
            return;
        }
        self.ensure_pipeline(device, volume.class);
        let layout = self.volume_layout(device, volume.class).clone();
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("slice volume"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&volume.view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&self.lut_view),
                },
            ],
        });
        self.bound = Some(Bound { generation: volume.generation, class: volume.class, bind_group });
    }

    fn slot(&mut self, device: &wgpu::Device, i: usize) -> &ViewSlot {
        while self.slots.len() <= i {
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("slice params"),
                size: std::mem::size_of::<SliceParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("slice params"),
                layout: &self.params_layout,
                entries: &[wgpu::BindGroupEntry { binding: 0, resource: buffer.as_entire_binding() }],
            });
            self.slots.push(ViewSlot { buffer, bind_group });
        }
        &self.slots[i]
    }
}

/// One slice view's draw call. `slot` must be unique among the views drawn in one frame.
pub struct SliceCallback {
    pub slot: usize,
    pub params: SliceParams,
}

impl egui_wgpu::CallbackTrait for SliceCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen: &egui_wgpu::ScreenDescriptor,
        _encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        let volume = VolumeRef::of(resources);
        if let Some(me) = resources.get_mut::<SliceRenderer>() {
            let mut p = self.params;
            if let Some(v) = &volume {
                p.dims = v.dims;
                me.bind_volume(device, v);
            }
            let slot = me.slot(device, self.slot);
            queue.write_buffer(&slot.buffer, 0, bytemuck::bytes_of(&p));
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        let Some(me) = resources.get::<SliceRenderer>() else { return };
        let Some(volume) = resources.get::<GpuVolume>().filter(|v| v.complete()) else { return };
        let (Some(v), Some(slot)) = (&me.bound, me.slots.get(self.slot)) else { return };
        if v.generation != volume.generation {
            return;
        }
        let Some(pipeline) = me.pipelines.get(v.class.wgsl()) else { return };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &slot.bind_group, &[]);
        pass.set_bind_group(1, &v.bind_group, &[]);
        pass.draw(0..4, 0..1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_match_the_wgsl_layout() {
        // center 0, half_extent 8, axes 16, dims 32, window 48, colormap 56, mask_mode 60,
        // threshold 64, mask_color 80, background 96.
        assert_eq!(std::mem::size_of::<SliceParams>(), 112);
        assert_eq!(std::mem::offset_of!(SliceParams, threshold), 64);
        assert_eq!(std::mem::offset_of!(SliceParams, background), 96);
    }
}
