//! The volume on the GPU, one copy for every renderer: the field as a 3D texture in its native
//! texel type, with its layout (display stride) and value class. Slice views read it today; a
//! ray marcher or an overlay reads the same texture, never a second upload.
//!
//! It lives in egui_wgpu's callback resources beside the renderers. Each new field bumps
//! [`GpuVolume::generation`], so a renderer knows when to rebuild its bind groups. A large
//! volume is uploaded a slab of planes at a time across frames ([`GpuVolume::step`], a time
//! budget per frame), so a frame never stalls on a whole volume.

use super::volume::{self, Layout, TexelClass};
use eframe::egui_wgpu::{self, wgpu};
use std::sync::Arc;
use std::time::{Duration, Instant};
use topoview_core::field::ScalarField;

/// Volumes above this many bytes on the GPU are subsampled for display (the analysis always
/// uses every voxel).
const MAX_TEXTURE_BYTES: u64 = 1 << 30;
/// Planes are written in pieces of at most this size, so one piece fits a frame's budget.
const PIECE_BYTES: usize = 8 << 20;

/// What the renderers read.
pub struct GpuVolume {
    pub view: wgpu::TextureView,
    pub class: TexelClass,
    pub layout: Layout,
    /// The field's own dims (the texture's are `layout.dims`).
    pub dims: [usize; 3],
    /// Bumped for every new field: renderers rebuild what refers to the texture.
    pub generation: u64,
    texture: wgpu::Texture,
    texel_bytes: usize,
    /// The field still being uploaded, and the first plane not yet on the GPU.
    pending: Option<(Arc<ScalarField>, usize)>,
}

/// What starting an upload did, for the UI to tell the user.
pub struct Uploaded {
    pub stride: usize,
    pub bytes: u64,
}

/// How far an upload has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadProgress {
    pub planes: usize,
    pub of: usize,
}

impl GpuVolume {
    /// Makes `field` the volume every renderer shows: creates its texture (the old one is
    /// dropped) and queues its planes for [`GpuVolume::step`].
    pub fn begin(rs: &egui_wgpu::RenderState, field: Arc<ScalarField>) -> Uploaded {
        let mut renderer = rs.renderer.write();
        let resources = &mut renderer.callback_resources;
        let generation = resources.get::<GpuVolume>().map_or(1, |v| v.generation + 1);
        let me = GpuVolume::create(&rs.device, field, generation);
        let up = Uploaded {
            stride: me.layout.stride,
            bytes: me.layout.dims.iter().map(|&n| n as u64).product::<u64>() * me.texel_bytes as u64,
        };
        resources.insert(me);
        up
    }

    /// The texture for `field`, its planes still to be written ([`GpuVolume::upload_all`] or
    /// [`GpuVolume::step`]). Used directly by offscreen rendering, which has no egui.
    pub fn create(device: &wgpu::Device, field: Arc<ScalarField>, generation: u64) -> GpuVolume {
        let (format, class) = volume::texel_format(field.dtype());
        let texel_bytes = format.block_copy_size(None).unwrap_or(4) as usize;
        let max_dim = device.limits().max_texture_dimension_3d as usize;
        let layout = volume::layout(field.dims(), texel_bytes, max_dim, MAX_TEXTURE_BYTES);
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("volume"),
            size: extent(&layout, layout.dims[2]),
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D3,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        GpuVolume {
            view: texture.create_view(&Default::default()),
            class,
            layout,
            dims: field.dims(),
            generation,
            texture,
            texel_bytes,
            pending: Some((field, 0)),
        }
    }

    /// Writes every pending plane now.
    pub fn upload_all(&mut self, queue: &wgpu::Queue) {
        self.write_pending(queue, None);
    }

    /// Whether every plane is on the GPU. Renderers draw nothing from a volume still arriving
    /// (its unwritten planes would show, and be masked, as zeros).
    pub fn complete(&self) -> bool {
        self.pending.is_none()
    }

    /// Writes pending planes for up to `budget` (at least one piece), and says how far the
    /// upload has come; None when there is no volume.
    pub fn step(rs: &egui_wgpu::RenderState, budget: Duration) -> Option<UploadProgress> {
        let mut renderer = rs.renderer.write();
        let me = renderer.callback_resources.get_mut::<GpuVolume>()?;
        Some(me.write_pending(&rs.queue, Some(budget)))
    }

    fn write_pending(&mut self, queue: &wgpu::Queue, budget: Option<Duration>) -> UploadProgress {
        let total = self.layout.dims[2];
        let Some((field, mut z0)) = self.pending.take() else {
            return UploadProgress { planes: total, of: total };
        };
        let start = Instant::now();
        let plane_bytes = self.layout.dims[0] * self.layout.dims[1] * self.texel_bytes;
        let planes_per_piece = (PIECE_BYTES / plane_bytes.max(1)).max(1);
        while z0 < total {
            let z1 = (z0 + planes_per_piece).min(total);
            let bytes = volume::slab_bytes(&field, &self.layout, z0, z1);
            queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: &self.texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d { x: 0, y: 0, z: z0 as u32 },
                    aspect: wgpu::TextureAspect::All,
                },
                &bytes,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some((self.layout.dims[0] * self.texel_bytes) as u32),
                    rows_per_image: Some(self.layout.dims[1] as u32),
                },
                extent(&self.layout, z1 - z0),
            );
            z0 = z1;
            if budget.is_some_and(|b| start.elapsed() >= b) {
                break;
            }
        }
        if z0 < total {
            self.pending = Some((field, z0));
        }
        UploadProgress { planes: z0, of: total }
    }
}

fn extent(layout: &Layout, planes: usize) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width: layout.dims[0] as u32,
        height: layout.dims[1] as u32,
        depth_or_array_layers: planes as u32,
    }
}
