//! `topoview bench --render`: the 3D view rendered offscreen (no window, no egui) at a given
//! resolution, on whatever GPU wgpu finds (the NVIDIA Vulkan driver on the GPU machine,
//! lavapipe here), with frame times per volume size, mode and camera state.
//!
//! A frame is one ray-marching pass into the offscreen target, submitted and waited for, so
//! the time includes the submission; the volume and its brick grid are built before timing.

use super::camera::Camera;
use super::gpu_volume::GpuVolume;
use super::scene3d::{Geometry, Mode, Scene};
use super::transfer::Preset;
use super::volume::{MASK_BELOW, TexelClass};
use super::volume3d::{Frame, VolumeRef, VolumeRenderer};
use eframe::egui_wgpu::wgpu;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;
use topoview_core::field::{Samples, ScalarField};

/// Why the render benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum RenderBenchError {
    #[error("no GPU adapter for offscreen rendering: {0}")]
    Adapter(String),
    #[error("cannot open the GPU device: {0}")]
    Device(String),
    #[error("the GPU failed while rendering: {0}")]
    Gpu(String),
    #[error("cannot write the results: {0}")]
    Write(#[from] std::io::Error),
}

pub struct RenderBenchConfig {
    pub sizes: Vec<usize>,
    pub width: u32,
    pub height: u32,
    pub frames: usize,
}

/// A u8 test volume of edge `n`: a ball of smooth, folded structure in empty space, so both
/// empty-space skipping and the transfer function have something to do.
pub fn test_volume(n: usize) -> ScalarField {
    let c = (n as f64 - 1.0) / 2.0;
    let v: Vec<u8> = (0..n * n * n)
        .into_par_iter()
        .map(|i| {
            let (x, y, z) = ((i % n) as f64, ((i / n) % n) as f64, (i / (n * n)) as f64);
            let r = ((x - c).powi(2) + (y - c).powi(2) + (z - c).powi(2)).sqrt() / c;
            if r > 0.9 {
                return 0;
            }
            let k = 2.0 * std::f64::consts::PI * 6.0 / n as f64;
            let folds = (k * x).sin() * (k * 1.3 * y).sin() * (k * 0.8 * z).sin();
            (128.0 + 120.0 * folds * (1.0 - r)).clamp(1.0, 255.0) as u8
        })
        .collect();
    ScalarField::new(&[n, n, n], Samples::U8(v)).expect("test volume dims are valid")
}

/// A GPU device without a window: the high-performance adapter wgpu finds (lavapipe where
/// there is no GPU), with that adapter's limits.
pub fn headless() -> Result<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo), RenderBenchError> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| RenderBenchError::Adapter(e.to_string()))?;
    let info = adapter.get_info();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("topoview bench"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| RenderBenchError::Device(e.to_string()))?;
    Ok((device, queue, info))
}

pub fn run(cfg: &RenderBenchConfig, out: &mut dyn std::io::Write) -> Result<(), RenderBenchError> {
    let (device, queue, info) = headless()?;
    writeln!(
        out,
        "adapter: {} ({:?}, driver {} {})",
        info.name, info.backend, info.driver, info.driver_info
    )?;
    writeln!(
        out,
        "{:>6} {:<36} {:<7} {:>11} {:>9} {:>9} {:>9}",
        "volume", "mode", "camera", "pixels", "mean ms", "min ms", "max ms"
    )?;
    let mut renderer = VolumeRenderer::new(&device, None);
    let table = Preset::Ramp.function().table(super::colormap::Colormap::Gray);
    for (generation, &n) in (1u64..).zip(&cfg.sizes) {
        let field = Arc::new(test_volume(n));
        let mut volume = GpuVolume::create(&device, field.clone(), generation);
        volume.upload_all(&queue);
        let vref = VolumeRef::of(&volume).ok_or_else(|| RenderBenchError::Gpu("upload incomplete".into()))?;
        let mut encoder = device.create_command_encoder(&Default::default());
        renderer.set_table(&queue, generation, &table);
        renderer.bind_volume(&device, &mut encoder, &vref);
        queue.submit([encoder.finish()]);
        wait(&device)?;
        let geo =
            Geometry { dims: field.dims(), stride: volume.layout.stride, affine: field.affine_or_spacing() };
        let (center, radius) = geo.bounds();
        // (mode, empty-space skipping, samples per voxel with the camera still)
        let cases = [
            (Mode::Composite, true, 1.0),
            (Mode::Composite, true, 2.0),
            (Mode::Composite, false, 1.0),
            (Mode::Isosurface, true, 1.0),
            (Mode::MaxIntensity, true, 1.0),
            (Mode::ThresholdVoxels, true, 1.0),
        ];
        for (mode, skipping, per_voxel) in cases {
            for moving in [false, true] {
                let scale = if moving { 2 } else { 1 };
                let size = [cfg.width / scale, cfg.height / scale];
                let mut times = Vec::with_capacity(cfg.frames);
                for f in 0..cfg.frames + 3 {
                    let mut camera = Camera::default().framing(center, radius);
                    if moving {
                        camera.orbit(3.0 * f as f64, 0.0);
                    }
                    let step = super::scene3d::step(per_voxel, moving);
                    let scene = Scene { skipping, step, ..bench_scene(camera, mode, f as u32) };
                    let params = scene
                        .params(&geo, TexelClass::Uint, cfg.width as f64 / cfg.height as f64)
                        .ok_or_else(|| RenderBenchError::Gpu("singular camera".into()))?;
                    let t = Instant::now();
                    let mut encoder = device.create_command_encoder(&Default::default());
                    renderer.render(
                        &device,
                        &queue,
                        &mut encoder,
                        Frame { size, params: &params, marks: None },
                        true,
                    );
                    queue.submit([encoder.finish()]);
                    wait(&device)?;
                    // The first frames at a new size create targets and warm caches.
                    if f >= 3 {
                        times.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                }
                let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
                let min = times.iter().copied().fold(f64::INFINITY, f64::min);
                let max = times.iter().copied().fold(0.0, f64::max);
                writeln!(
                    out,
                    "{:>6} {:<36} {:<7} {:>11} {:>9.2} {:>9.2} {:>9.2}",
                    format!("{n}^3"),
                    format!("{}{}, {per_voxel}/voxel", mode.name(), if skipping { "" } else { ", no skip" }),
                    if moving { "moving" } else { "still" },
                    format!("{}x{}", size[0], size[1]),
                    mean,
                    min,
                    max
                )?;
            }
        }
    }
    Ok(())
}

fn wait(device: &wgpu::Device) -> Result<(), RenderBenchError> {
    device
        .poll(wgpu::PollType::Wait { submission_index: None, timeout: None })
        .map(|_| ())
        .map_err(|e| RenderBenchError::Gpu(e.to_string()))
}

fn bench_scene(camera: Camera, mode: Mode, frame: u32) -> Scene {
    Scene {
        camera,
        mode,
        clip: [[0.0; 3], [1.0; 3]],
        planes: None,
        window: (0.0, 255.0),
        step: 1.0,
        iso: 160.0,
        iso2: None,
        mask: (MASK_BELOW, 90),
        threshold: 90.0,
        color_by_value: false,
        caps: false,
        parts: false,
        surface: [0.9; 3],
        background: [0.1; 3],
        frame,
        skipping: true,
    }
}
