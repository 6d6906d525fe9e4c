//! The 3D view's GPU pieces that can be checked without looking at pixels, on the device wgpu
//! finds (lavapipe in CI): the min/max brick grid the ray marcher skips empty space with,
//! against a brute-force one on the CPU.

use eframe::egui_wgpu::wgpu;
use std::sync::Arc;
use topoview_core::field::{Samples, ScalarField};
use topoview_viewer::render::bench3d::headless;
use topoview_viewer::render::gpu_volume::GpuVolume;
use topoview_viewer::render::volume3d::{Frame, VolumeRef, VolumeRenderer};

/// The grid as the shader defines it: brick b covers texels 8b ..= 8b + 8 (clamped), finite
/// samples only; a brick without one is (3.4e38, -3.4e38).
fn brute_force(values: &[f32], dims: [usize; 3]) -> Vec<[f32; 2]> {
    let nb = dims.map(|n| n.div_ceil(8));
    let mut out = Vec::new();
    for bz in 0..nb[2] {
        for by in 0..nb[1] {
            for bx in 0..nb[0] {
                let (mut lo, mut hi) = (3.4e38f32, -3.4e38f32);
                for z in 8 * bz..=(8 * bz + 8).min(dims[2] - 1) {
                    for y in 8 * by..=(8 * by + 8).min(dims[1] - 1) {
                        for x in 8 * bx..=(8 * bx + 8).min(dims[0] - 1) {
                            let v = values[x + dims[0] * (y + dims[1] * z)];
                            if !v.is_nan() {
                                lo = lo.min(v);
                                hi = hi.max(v);
                            }
                        }
                    }
                }
                out.push([lo, hi]);
            }
        }
    }
    out
}

/// Builds the brick grid of `field` on the GPU and reads it back.
fn gpu_bricks(device: &wgpu::Device, queue: &wgpu::Queue, field: ScalarField) -> Vec<[f32; 2]> {
    let mut volume = GpuVolume::create(device, Arc::new(field), 1);
    volume.upload_all(queue);
    let mut renderer = VolumeRenderer::new(device, None);
    let mut encoder = device.create_command_encoder(&Default::default());
    renderer.bind_volume(device, &mut encoder, &VolumeRef::of(&volume).unwrap());
    let bricks = renderer.bricks().unwrap();
    let size = bricks.size();
    // Rows of 8-byte texels padded to wgpu's 256-byte copy alignment.
    let row = (size.width * 8).div_ceil(256) * 256;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: (row * size.height * size.depth_or_array_layers) as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    encoder.copy_texture_to_buffer(
        bricks.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: Some(size.height),
            },
        },
        size,
    );
    queue.submit([encoder.finish()]);
    buffer.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).unwrap();
    let bytes = buffer.slice(..).get_mapped_range().unwrap().to_vec();
    let mut out = Vec::new();
    for z in 0..size.depth_or_array_layers {
        for y in 0..size.height {
            let start = ((z * size.height + y) * row) as usize;
            let texels: &[[f32; 2]] = bytemuck::cast_slice(&bytes[start..start + size.width as usize * 8]);
            out.extend_from_slice(texels);
        }
    }
    out
}

/// A small deterministic generator (no rand dependency in the library's tests).
fn noise(n: usize, seed: u64) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}

#[test]
fn the_brick_grid_equals_a_brute_force_one() {
    let (device, queue, info) = headless().unwrap();
    eprintln!("adapter: {}", info.name);
    // Edges that are not multiples of 8, a flat axis, NaN samples and a brick of NaN only.
    for (dims, seed) in [([37, 21, 19], 1), ([8, 9, 1], 2), ([17, 3, 40], 3)] {
        let n = dims.iter().product();
        let mut f: Vec<f32> =
            noise(n, seed).iter().map(|&r| ((r >> 40) as f32 / 16777216.0) * 200.0 - 100.0).collect();
        for (i, v) in f.iter_mut().enumerate() {
            if i % 11 == 3 {
                *v = f32::NAN;
            }
        }
        if dims == [37, 21, 19] {
            // Brick (4, 0, 0) is x 32..=36, y 0..=8, z 0..=8: all NaN.
            for z in 0..=8 {
                for y in 0..=8 {
                    for x in 32..37 {
                        f[x + 37 * (y + 21 * z)] = f32::NAN;
                    }
                }
            }
        }
        let want = brute_force(&f, dims);
        assert!(dims != [37, 21, 19] || want[4] == [3.4e38, -3.4e38]);
        let got = gpu_bricks(&device, &queue, ScalarField::new(&dims, Samples::F32(f)).unwrap());
        assert_eq!(got, want, "{dims:?}");
    }
    // Integer texels: u16 and i16 (the shader converts to f32, exact for 16-bit values).
    let dims = [33, 16, 9];
    let n: usize = dims.iter().product();
    let u: Vec<u16> = noise(n, 7).iter().map(|&r| (r >> 48) as u16).collect();
    let want = brute_force(&u.iter().map(|&v| v as f32).collect::<Vec<_>>(), dims);
    assert_eq!(gpu_bricks(&device, &queue, ScalarField::new(&dims, Samples::U16(u)).unwrap()), want);
    let i: Vec<i16> = noise(n, 8).iter().map(|&r| (r >> 48) as u16 as i16).collect();
    let want = brute_force(&i.iter().map(|&v| v as f32).collect::<Vec<_>>(), dims);
    assert_eq!(gpu_bricks(&device, &queue, ScalarField::new(&dims, Samples::I16(i)).unwrap()), want);
}

/// Reads an Rgba8 texture back as rows of pixels.
fn read_rgba(device: &wgpu::Device, queue: &wgpu::Queue, texture: &wgpu::Texture) -> Vec<Vec<[u8; 4]>> {
    let size = texture.size();
    let row = (size.width * 4).div_ceil(256) * 256;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: (row * size.height) as u64,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row), rows_per_image: None },
        },
        size,
    );
    queue.submit([encoder.finish()]);
    buffer.slice(..).map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).unwrap();
    let bytes = buffer.slice(..).get_mapped_range().unwrap().to_vec();
    (0..size.height as usize)
        .map(|y| {
            let start = y * row as usize;
            bytemuck::cast_slice::<u8, [u8; 4]>(&bytes[start..start + 4 * size.width as usize]).to_vec()
        })
        .collect()
}

/// `m` (column-major, as WGSL reads it) applied to a point, divided by w.
fn apply(m: &[[f32; 4]; 4], p: [f64; 3]) -> [f64; 3] {
    let v = [p[0], p[1], p[2], 1.0];
    let o: [f64; 4] = std::array::from_fn(|r| (0..4).map(|c| m[c][r] as f64 * v[c]).sum());
    [o[0] / o[3], o[1] / o[3], o[2] / o[3]]
}

/// The "voxels" mode draws exactly the voxel set the ECC counts. One plane of voxels is cut out
/// by the clipping box and seen from above through a narrow lens, with caps, so each pixel whose
/// ray stays within one voxel of the plane shows a surface exactly when that voxel is in the set.
/// Integer data, thresholds between integers, sub- and superlevel sets.
#[test]
fn the_voxel_mode_draws_exactly_the_threshold_set() {
    use topoview_core::topo::ecc::Filtration;
    use topoview_viewer::render::camera::{AxisView, Camera};
    use topoview_viewer::render::scene3d::{Geometry, Mode, Scene};
    use topoview_viewer::render::volume::{TexelClass, mask_threshold};
    let (device, queue, _) = headless().unwrap();
    let dims = [24usize, 20, 6];
    let n: usize = dims.iter().product();
    let values: Vec<u16> = noise(n, 11).iter().map(|&r| (r >> 52) as u16).collect(); // 0..4095
    let field = ScalarField::new(&dims, Samples::U16(values.clone())).unwrap();
    let geo = Geometry { dims, stride: 1, affine: field.affine_or_spacing() };
    let mut volume = GpuVolume::create(&device, Arc::new(field), 1);
    volume.upload_all(&queue);
    let mut renderer = VolumeRenderer::new(&device, None);
    let mut encoder = device.create_command_encoder(&Default::default());
    renderer.bind_volume(&device, &mut encoder, &VolumeRef::of(&volume).unwrap());
    queue.submit([encoder.finish()]);
    let (center, radius) = geo.bounds();
    let mut camera = Camera { fov: 4.0, ..Camera::default() }.framing(center, radius);
    camera.look_from(AxisView::Superior);
    let k = 2usize; // the plane of voxels shown
    let size = [240u32, 200];
    let background = [0.1f32, 0.11, 0.14];
    let mut checked = 0;
    // Thresholds equal to a voxel of the plane test the ties (<= and >= include them).
    let tie = values[5 + dims[0] * (7 + dims[1] * k)] as f64;
    // Last, the components' colours ("why χ changes"): green on the voxels of even x, none (the
    // set's own orange) on odd x, to prove each face takes its own texel's colour.
    let cases = [
        (Filtration::Sublevel, 2047.5, false),
        (Filtration::Superlevel, 1000.2, false),
        (Filtration::Sublevel, tie, false),
        (Filtration::Superlevel, tie, false),
        (Filtration::Sublevel, 2047.5, true),
    ];
    let texels: Vec<u8> = (0..n)
        .flat_map(|i| if (i % dims[0]).is_multiple_of(2) { [0, 255, 0, 255] } else { [0; 4] })
        .collect();
    for (filtration, t, coloured) in cases {
        renderer.set_parts(&device, &queue, coloured.then_some((1, texels.as_slice())));
        let mask = mask_threshold(TexelClass::Uint, filtration, t);
        let scene = Scene {
            camera,
            mode: Mode::ThresholdVoxels,
            clip: [[0.0, 0.0, k as f32 / 6.0], [1.0, 1.0, (k + 1) as f32 / 6.0]],
            planes: None,
            window: (0.0, 4095.0),
            step: 1.0,
            iso: 0.0,
            iso2: None,
            mask,
            threshold: t,
            color_by_value: false,
            caps: true,
            parts: coloured,
            surface: [1.0, 0.35, 0.15],
            background,
            frame: 0,
            skipping: true,
        };
        let params = scene.params(&geo, TexelClass::Uint, size[0] as f64 / size[1] as f64).unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        assert!(renderer.render(
            &device,
            &queue,
            &mut encoder,
            Frame { size, params: &params, marks: None },
            true
        ));
        queue.submit([encoder.finish()]);
        let image = read_rgba(&device, &queue, &renderer.targets.as_ref().unwrap().color);
        let bg = background.map(|c| (c * 255.0).round() as u8);
        let member = |v: u16| match filtration {
            Filtration::Sublevel => (v as f64) <= t,
            Filtration::Superlevel => (v as f64) >= t,
        };
        for (py, row) in image.iter().enumerate() {
            for (px, rgba) in row.iter().enumerate() {
                let ndc = [
                    (px as f64 + 0.5) / size[0] as f64 * 2.0 - 1.0,
                    1.0 - (py as f64 + 0.5) / size[1] as f64 * 2.0,
                ];
                let o = apply(&params.inv_mvp, [ndc[0], ndc[1], 0.0]);
                let e = apply(&params.inv_mvp, [ndc[0], ndc[1], 1.0]);
                // Where the ray crosses the top and bottom of the plane of voxels.
                let at = |z: f64| {
                    let s = (z - o[2]) / (e[2] - o[2]);
                    [o[0] + s * (e[0] - o[0]), o[1] + s * (e[1] - o[1])]
                };
                let (top, bottom) = (at(k as f64 + 1.0), at(k as f64));
                let cell = |p: [f64; 2]| [p[0].floor(), p[1].floor()];
                let near_edge = |p: [f64; 2]| p.iter().any(|c| (c - c.round()).abs() < 0.02);
                if cell(top) != cell(bottom) || near_edge(top) || near_edge(bottom) {
                    continue; // the ray crosses from one voxel to another within the plane
                }
                let [x, y] = cell(top);
                let drawn = rgba[..3] != bg;
                let inside = x >= 0.0 && y >= 0.0 && (x as usize) < dims[0] && (y as usize) < dims[1];
                let want = inside && member(values[x as usize + dims[0] * (y as usize + dims[1] * k)]);
                assert_eq!(drawn, want, "{filtration:?} at {t}: pixel ({px}, {py}), voxel ({x}, {y}, {k})");
                if want && coloured {
                    let green = rgba[1] > rgba[0];
                    assert_eq!(
                        green,
                        (x as usize).is_multiple_of(2),
                        "components: pixel ({px}, {py}), voxel ({x}, {y}, {k})"
                    );
                }
                checked += 1;
            }
        }
    }
    // More than half the pixels of each image are judged (the plane fills most of the view).
    assert!(checked > 4 * 240 * 200 / 2, "only {checked} pixels checked");
}
