//! The CUDA backend against the CPU reference: exactly equal curves for every supported dtype,
//! both constructions, sub- and superlevel, 1D/2D/3D, odd sizes, many ties and many values, and
//! slabs forced small by a memory limit; smoothing and the crack filter equal bit for bit.
//! Skipped, with the reason printed, where no CUDA device is usable (as on CI).

use crate::common::{field_of, xorshift_values};
use topoview_core::control::Control;
use topoview_core::field::{Dtype, ScalarField};
use topoview_core::topo::ecc::{Construction, EccOptions, Filtration, NanPolicy, ecc};
use topoview_core::topo::msc::gradient::Gradient;
use topoview_core::topo::msc::{analyse, cell_grid, discrete_gradient};
use topoview_core::topo::smooth::{Smoothing, smooth};
use topoview_gpu::Gpu;

fn gpu() -> Option<Gpu> {
    match Gpu::open() {
        Ok(g) => {
            println!("CUDA device: {}", g.name);
            // Every kernel file loads (they load on first use otherwise).
            g.load_all().unwrap();
            Some(g)
        }
        Err(why) => {
            println!("skipped: {why}");
            None
        }
    }
}

/// Values for `dtype`: `levels` distinct values around the type's range (negative ones too).
fn values(dtype: Dtype, seed: u64, n: usize, levels: u64) -> Vec<f64> {
    let (lo, span) = match dtype {
        Dtype::U8 => (0.0, 256),
        Dtype::I8 => (-128.0, 256),
        Dtype::U16 => (0.0, 65536),
        Dtype::I16 => (-32768.0, 65536),
        Dtype::U32 => (0.0, 1 << 32),
        _ => (-1000.0, 1 << 31),
    };
    let step = (span / levels.min(span)) as f64;
    xorshift_values(seed, n, levels.min(span)).into_iter().map(|v| lo + v * step).collect()
}

const SHAPES: &[&[usize]] = &[
    &[1],
    &[1000],
    &[1, 1],
    &[7, 1],
    &[1, 9],
    &[37, 23],
    &[256, 3],
    &[3, 3, 3],
    &[17, 9, 13],
    &[1, 5, 7],
    &[64, 33, 21],
    // Rows of whole 32-bit words: the packed kernels for 8-bit types (both x edges in one word;
    // several blocks along x, y and z; runs of planes and rows cut short).
    &[4, 1],
    &[4, 4, 4],
    &[8, 5, 3],
    &[132, 17, 19],
    &[16, 70],
];

#[test]
fn ecc_equals_the_cpu_reference() {
    let Some(g) = gpu() else { return };
    let mut checked = 0;
    for dtype in
        [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::F64]
    {
        for (s, dims) in SHAPES.iter().enumerate() {
            let n: usize = dims.iter().product();
            for levels in [3, 64, 70_000] {
                let f = field_of(dtype, dims, &values(dtype, 7 + s as u64 * 31 + levels, n, levels));
                for construction in [Construction::TopCells, Construction::Vertices] {
                    for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                        let opts = EccOptions { construction, filtration, ..Default::default() };
                        let cpu = ecc(&f, &opts, &Control::default()).unwrap();
                        // Unlimited, and slabs of a single plane (three held with the collar).
                        let plane = dims[0] * dims.get(1).unwrap_or(&1) * dtype.size();
                        for limit in [None, Some(3 * plane)] {
                            let (gpu, _) = g.ecc(&f, &opts, limit, &Control::default()).unwrap();
                            assert_eq!(
                                gpu, cpu,
                                "{dtype:?} {dims:?} {levels} levels {opts:?} limit {limit:?}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    println!("{checked} GPU curves equal to the CPU's");
}

#[test]
fn constant_and_two_level_8_bit_fields_match() {
    // Whole warps of one value take the packed kernels' one-add path; a field constant in the
    // left half of each row and of three levels in the right half mixes it with the per-voxel
    // path within a block.
    let Some(g) = gpu() else { return };
    for dtype in [Dtype::U8, Dtype::I8] {
        for dims in [&[512, 20, 9][..], &[1024, 70], &[256, 8, 8]] {
            let n: usize = dims.iter().product();
            for half in [false, true] {
                let mut v = values(dtype, 5, n, 3);
                let constant = v[0];
                v.iter_mut()
                    .enumerate()
                    .filter(|(i, _)| !half || i % dims[0] < dims[0] / 2)
                    .for_each(|(_, x)| *x = constant);
                let f = field_of(dtype, dims, &v);
                for construction in [Construction::TopCells, Construction::Vertices] {
                    for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                        let opts = EccOptions { construction, filtration, ..Default::default() };
                        let cpu = ecc(&f, &opts, &Control::default()).unwrap();
                        // Whole, and in slabs of a plane (three held with the collar).
                        let plane = dims[0] * dims.get(1).unwrap_or(&1);
                        for limit in [None, Some(3 * plane)] {
                            let (gpu, _) = g.ecc(&f, &opts, limit, &Control::default()).unwrap();
                            assert_eq!(
                                gpu, cpu,
                                "{dtype:?} {dims:?} half constant {half} {opts:?} {limit:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_packed_kernels_take_8_bit_rows_of_whole_words() {
    // The tests above pass on either kernel; this one checks which ran.
    let Some(g) = gpu() else { return };
    let kernels = |dtype: Dtype, dims: &[usize]| -> Vec<&'static str> {
        let f = field_of(dtype, dims, &values(dtype, 3, dims.iter().product(), 50));
        g.time_ecc_kernel(&f, &EccOptions::default(), 1).unwrap().into_iter().map(|(name, _)| name).collect()
    };
    assert_eq!(kernels(Dtype::U8, &[64, 33, 21]), ["packed", "one voxel a thread"]);
    assert_eq!(kernels(Dtype::I8, &[1024, 70]), ["packed", "one voxel a thread"]);
    assert_eq!(kernels(Dtype::U8, &[37, 23]), ["one voxel a thread"]);
    assert_eq!(kernels(Dtype::U16, &[64, 33, 21]), ["one voxel a thread"]);
}

#[test]
fn bundled_volume_and_larger_fields_match() {
    let Some(g) = gpu() else { return };
    let mni =
        topoview_core::io::open(&crate::common::data("mni152_t1_09a.nii.gz"), &Default::default()).unwrap();
    let emri =
        topoview_core::io::open(&crate::common::data("pydicom_emri_small.nii.gz"), &Default::default())
            .unwrap();
    let big = field_of(Dtype::U8, &[160, 150, 140], &values(Dtype::U8, 3, 160 * 150 * 140, 256));
    for f in [&mni, &emri, &big] {
        for construction in [Construction::TopCells, Construction::Vertices] {
            for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                let opts = EccOptions { construction, filtration, ..Default::default() };
                let cpu = ecc(f, &opts, &Control::default()).unwrap();
                // A slab of two planes (four held) forces several slabs on each field.
                let plane = f.dims()[0] * f.dims()[1] * f.dtype().size();
                for limit in [None, Some(4 * plane)] {
                    let (gpu, t) = g.ecc(f, &opts, limit, &Control::default()).unwrap();
                    assert_eq!(gpu, cpu, "{:?} {opts:?} limit {limit:?}", f.shape());
                    if limit.is_some() {
                        assert!(t.chunks > 1, "the limit must force several slabs");
                    }
                }
            }
        }
    }
}

#[test]
fn floats_all_distinct_with_nan_infinities_and_signed_zeros_match() {
    let Some(g) = gpu() else { return };
    // The last two have more distinct values than one staging buffer brings back (8 Mi for f32,
    // 5.6 Mi for f64): the curve arrives in several chunks.
    for (dtype, dims) in [
        (Dtype::F32, vec![97, 61, 33]),
        (Dtype::F64, vec![45, 37, 29]),
        (Dtype::F32, vec![300, 211]),
        (Dtype::F32, vec![260, 250, 140]),
        (Dtype::F64, vec![200, 200, 150]),
    ] {
        let n: usize = dims.iter().product();
        let mut v: Vec<f64> =
            xorshift_values(99, n, 1 << 40).iter().map(|x| (x - (1u64 << 39) as f64) * 1e-7).collect();
        for (i, special) in
            [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, f64::NAN, 0.0, -0.0].iter().enumerate()
        {
            v[i * 97 % n] = *special;
        }
        let f = field_of(dtype, &dims, &v);
        for construction in [Construction::TopCells, Construction::Vertices] {
            for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                let opts =
                    EccOptions { construction, filtration, nan: NanPolicy::Absent, ..Default::default() };
                let cpu = ecc(&f, &opts, &Control::default()).unwrap();
                let (gpu, _) = g.ecc(&f, &opts, None, &Control::default()).unwrap();
                assert_eq!(gpu, cpu, "{dtype:?} {dims:?} {opts:?}");
            }
        }
    }
}

#[test]
fn smoothing_equals_the_cpu_bit_for_bit() {
    let Some(g) = gpu() else { return };
    let mut checked = 0;
    for dtype in [Dtype::U8, Dtype::I16, Dtype::U32, Dtype::F32, Dtype::F64] {
        // Several tiles along every axis (130 x 70 x 45), and radii tiled (up to 30) and not (36).
        for dims in [&[1000][..], &[37, 23], &[5, 1], &[17, 9, 13], &[64, 33, 21], &[3, 3, 2], &[130, 70, 45]]
        {
            let n: usize = dims.iter().product();
            let f: ScalarField = field_of(dtype, dims, &values(dtype, 11, n, 1000));
            for sigma in [0.6, 2.0, 7.5, 12.0] {
                let s = Smoothing::voxels(sigma);
                let cpu = smooth(&f, &s, &Control::default()).unwrap();
                let gpu = g.smooth(&f, &s).unwrap();
                assert_eq!(gpu.samples(), cpu.samples(), "{dtype:?} {dims:?} sigma {sigma}");
                checked += 1;
            }
        }
    }
    // A plateau of 7s, where rounding carried smoothed values an ulp above 7 before both kept
    // them within the field's range.
    let plateau: Vec<f64> = (0..64 * 64)
        .map(|i| if (10..54).contains(&(i % 64)) && (10..54).contains(&(i / 64)) { 7.0 } else { 3.0 })
        .collect();
    for dtype in [Dtype::U8, Dtype::F32] {
        let f = field_of(dtype, &[64, 64], &plateau);
        for sigma in [0.5, 1.3] {
            let s = Smoothing::voxels(sigma);
            let (cpu, gpu) = (smooth(&f, &s, &Control::default()).unwrap(), g.smooth(&f, &s).unwrap());
            assert_eq!(gpu.samples(), cpu.samples(), "plateau {dtype:?} sigma {sigma}");
            let top = (0..cpu.len()).map(|i| cpu.samples().get_f64(i)).fold(f64::MIN, f64::max);
            assert_eq!(top, 7.0, "plateau {dtype:?} sigma {sigma}");
            checked += 1;
        }
    }
    println!("{checked} GPU smoothings equal to the CPU's");
}

#[test]
fn files_stream_to_the_same_curve() {
    let Some(g) = gpu() else { return };
    use topoview_core::io::{Endian, OpenOptions, RawSpec};
    // The bundled raw file, and every narrow type written big-endian after a 13-byte header.
    let mut files =
        vec![(crate::common::data("pydicom_emri_small_64x64x10_uint16_le.raw"), OpenOptions::default())];
    for (k, dtype) in [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16].into_iter().enumerate() {
        let dims = vec![33, 17, 12];
        let f = field_of(dtype, &dims, &values(dtype, k as u64 + 3, 33 * 17 * 12, 40));
        let mut bytes = vec![7u8; 13];
        for i in 0..f.len() {
            let v = f.samples().get_f64(i);
            match dtype.size() {
                1 => bytes.push(v as i64 as u8),
                _ => bytes.extend((v as i64 as u16).to_be_bytes()),
            }
        }
        let path = std::env::temp_dir().join(format!("topoview_cuda_stream_{k}.bin"));
        std::fs::write(&path, bytes).unwrap();
        let raw = Some(RawSpec { dims, dtype, endian: Endian::Big, offset: 13 });
        files.push((path, OpenOptions { raw, ..Default::default() }));
    }
    let mut checked = 0;
    for (path, open) in &files {
        let block = topoview_core::io::block(path, open).unwrap().unwrap();
        let field = topoview_core::io::open(path, open).unwrap();
        let plane = field.len() / field.shape()[2] * field.dtype().size();
        for construction in [Construction::TopCells, Construction::Vertices] {
            for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                let opts = EccOptions { construction, filtration, ..Default::default() };
                let cpu = ecc(&field, &opts, &Control::default()).unwrap();
                let streamed = topoview_core::topo::ecc::stream::ecc(
                    &block.reader().unwrap(),
                    &opts,
                    &Control::default(),
                );
                assert_eq!(streamed.unwrap(), cpu, "{} {opts:?} streamed on the CPU", path.display());
                for limit in [None, Some(4 * plane), Some(3 * plane)] {
                    let (gpu, t) = g.ecc_block(&block, &opts, limit, &Control::default()).unwrap();
                    assert_eq!(gpu, cpu, "{} {opts:?} limit {limit:?} ({} slabs)", path.display(), t.chunks);
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} streamed GPU curves equal to the CPU's");
}

#[test]
fn planes_shared_by_the_cpu_and_the_gpu_give_the_cpus_curve() {
    if gpu().is_none() {
        return;
    }
    use topoview_compute::backend::{Backend, Choice};
    use topoview_compute::opening::Opening;
    use topoview_core::io::{Endian, OpenOptions, RawSpec};
    let (mut checked, mut on_gpu) = (0, 0);
    for (k, dtype) in [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16].into_iter().enumerate() {
        let dims = vec![33, 17, 40];
        let f = field_of(dtype, &dims, &values(dtype, k as u64 + 11, 33 * 17 * 40, 300));
        let path = std::env::temp_dir().join(format!("topoview_cuda_shared_{k}.bin"));
        let bytes: Vec<u8> = (0..f.len())
            .flat_map(|i| {
                let v = f.samples().get_f64(i) as i64;
                if dtype.size() == 1 { vec![v as u8] } else { (v as u16).to_le_bytes().to_vec() }
            })
            .collect();
        std::fs::write(&path, bytes).unwrap();
        let open = OpenOptions {
            raw: Some(RawSpec { dims, dtype, endian: Endian::Little, offset: 0 }),
            ..Default::default()
        };
        let block = topoview_core::io::block(&path, &open).unwrap().unwrap();
        // Slabs of two planes on the GPU (with their collars), so that it takes several.
        let backend =
            Opening::opened(Ok(Backend::new(Choice::Cuda, Some(4 * 33 * 17 * dtype.size())).unwrap()));
        for construction in [Construction::TopCells, Construction::Vertices] {
            for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                let opts = EccOptions { construction, filtration, ..Default::default() };
                let cpu = ecc(&f, &opts, &Control::default()).unwrap();
                // The CPU's workers slowed at each plane, so that the GPU takes some.
                let slow = |_: u64| std::thread::sleep(std::time::Duration::from_millis(2));
                let ctl = Control { progress: Some(&slow), cancel: None };
                let (got, ran) = backend.ecc_block(&block, &opts, &ctl).unwrap();
                assert_eq!(got, cpu, "{dtype:?} {opts:?} shared: {ran:?}");
                assert_eq!(ran.fallback, None);
                on_gpu += ran.shared.is_some() as usize;
                checked += 1;
            }
        }
    }
    assert!(on_gpu > 0, "the GPU never took a plane");
    println!("{checked} curves shared by the CPU and the GPU equal to the CPU's ({on_gpu} with GPU planes)");
}

/// The devices to share planes among: every visible one when there are several; else two
/// handles on device 0 (each with its own streams and staging), which run the same split.
fn devices(g: &Gpu) -> Vec<Gpu> {
    match Gpu::open_devices(None).unwrap() {
        all if all.len() > 1 => all,
        _ => vec![g.fork().unwrap(), g.fork().unwrap()],
    }
}

#[test]
fn planes_shared_among_devices_give_the_cpus_curve() {
    let Some(g) = gpu() else { return };
    let devices = devices(&g);
    println!(
        "{} devices: {}",
        devices.len(),
        devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>().join(", ")
    );
    use topoview_gpu::{ecc_block_spread, ecc_spread};
    let mut checked = 0;
    // Fewer planes than devices, one plane each, several, and a 2D field (one plane: one device).
    let shapes: &[&[usize]] = &[&[9, 7, 1], &[9, 7, 2], &[31, 17, 3], &[40, 29, 23], &[64, 48], &[1000]];
    for dtype in [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16] {
        for (s, dims) in shapes.iter().enumerate() {
            let n: usize = dims.iter().product();
            let f = field_of(dtype, dims, &values(dtype, 11 + s as u64, n, 50));
            let plane = dims[0] * dims.get(1).unwrap_or(&1) * dtype.size();
            for construction in [Construction::TopCells, Construction::Vertices] {
                for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                    let opts = EccOptions { construction, filtration, ..Default::default() };
                    let cpu = ecc(&f, &opts, &Control::default()).unwrap();
                    for k in 1..=devices.len() {
                        for limit in [None, Some(3 * plane)] {
                            let (gpu, _) =
                                ecc_spread(&devices[..k], &f, &opts, limit, &Control::default()).unwrap();
                            assert_eq!(
                                gpu, cpu,
                                "{dtype:?} {dims:?} {opts:?} on {k} devices, limit {limit:?}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    // A file, each device reading its own planes.
    let dims = vec![45, 38, 29];
    let f = field_of(Dtype::U16, &dims, &values(Dtype::U16, 5, 45 * 38 * 29, 300));
    let bytes: Vec<u8> = (0..f.len()).flat_map(|i| (f.samples().get_f64(i) as u16).to_le_bytes()).collect();
    let path = std::env::temp_dir().join("topoview_cuda_devices_45x38x29_uint16.raw");
    std::fs::write(&path, bytes).unwrap();
    let block = topoview_core::io::block(&path, &Default::default()).unwrap().unwrap();
    for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
        let opts = EccOptions { filtration, ..Default::default() };
        let cpu = ecc(&f, &opts, &Control::default()).unwrap();
        for k in 1..=devices.len() {
            for limit in [None, Some(5 * 45 * 38 * 2)] {
                let (gpu, t) =
                    ecc_block_spread(&devices[..k], &block, &opts, limit, &Control::default()).unwrap();
                assert_eq!(gpu, cpu, "the file on {k} devices, limit {limit:?} ({} slabs)", t.chunks);
                checked += 1;
            }
        }
    }
    // Cancelled: every device stops, and the error says so.
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let ctl = Control { cancel: Some(&cancel), ..Default::default() };
    let big = field_of(Dtype::U8, &[64, 64, 64], &values(Dtype::U8, 1, 64 * 64 * 64, 256));
    let r = ecc_spread(&devices, &big, &EccOptions::default(), Some(3 * 64 * 64), &ctl);
    assert!(matches!(r, Err(topoview_gpu::GpuError::Cancelled)), "{:?}", r.map(|_| ()));
    println!("{checked} curves over shared planes equal to the CPU's");
}

#[test]
fn the_backend_shares_the_ecc_among_every_gpu() {
    use topoview_compute::backend::{Backend, Choice, GpuCount};
    let Some(_) = gpu() else { return };
    let visible = Gpu::device_count().unwrap();
    let all = Backend::with_gpus(Choice::Cuda, Some(3 * 70 * 60), GpuCount::All).unwrap();
    println!("{}", all.describe());
    let f = field_of(Dtype::U8, &[70, 60, 50], &values(Dtype::U8, 2, 70 * 60 * 50, 256));
    let opts = EccOptions::default();
    let (e, ran) = all.ecc(&f, &opts, &Control::default()).unwrap();
    assert!(ran.on_gpu && ran.fallback.is_none(), "{ran:?}");
    assert_eq!(e, ecc(&f, &opts, &Control::default()).unwrap());
    // More GPUs than are visible is the user's error, under auto too.
    for choice in [Choice::Cuda, Choice::Auto] {
        let asked = GpuCount::Count(visible + 1);
        let err = Backend::with_gpus(choice, None, asked).err().unwrap().to_string();
        assert!(err.contains(&format!("{} GPUs asked for, {visible} visible", visible + 1)), "{err}");
    }
}

#[test]
fn smoothing_then_ecc_on_the_device_matches() {
    let Some(g) = gpu() else { return };
    let emri =
        topoview_core::io::open(&crate::common::data("pydicom_emri_small.nii.gz"), &Default::default())
            .unwrap();
    let noise = field_of(Dtype::U8, &[61, 47, 29], &values(Dtype::U8, 5, 61 * 47 * 29, 256));
    for f in [&emri, &noise] {
        for sigma in [0.8, 2.0] {
            let s = Smoothing::voxels(sigma);
            let opts = EccOptions { nan: NanPolicy::Absent, ..Default::default() };
            let cpu_field = smooth(f, &s, &Control::default()).unwrap();
            let cpu = ecc(&cpu_field, &opts, &Control::default()).unwrap();
            let (gpu_field, gpu) = g.smooth_ecc(f, &s, &opts, &Control::default()).unwrap();
            assert_eq!(gpu_field, cpu_field, "{:?} sigma {sigma}", f.shape());
            assert_eq!(gpu, cpu, "{:?} sigma {sigma}", f.shape());
        }
    }
}

/// Lanes share one backend, each thread with its own GPU stream: concurrent ECC and
/// smoothing + ECC jobs on the device give the CPU's curves, none waiting for another's lock.
#[test]
fn concurrent_threads_share_the_device_and_match_the_cpu() {
    use topoview_compute::backend::{Backend, Choice};
    if gpu().is_none() {
        return;
    }
    let backend = Backend::new(Choice::Cuda, Some(8 << 20)).unwrap();
    let fields: Vec<ScalarField> = (0..4u64)
        .map(|k| {
            let dims = [96 + k as usize, 80, 70];
            let dtype = [Dtype::U8, Dtype::I16, Dtype::F32, Dtype::U16][k as usize];
            field_of(dtype, &dims, &values(dtype, 40 + k, dims.iter().product(), 200))
        })
        .collect();
    let opts = EccOptions::default();
    std::thread::scope(|s| {
        let jobs: Vec<_> = fields
            .iter()
            .map(|f| {
                let backend = &backend;
                std::thread::Builder::new()
                    .name("gpu-lane-test".into())
                    .spawn_scoped(s, move || {
                        let ctl = Control::default();
                        let mut out = Vec::new();
                        for _ in 0..3 {
                            let (e, ran) = backend.ecc(f, &opts, &ctl).unwrap();
                            assert!(ran.on_gpu, "{:?}", ran.fallback);
                            out.push(e);
                            let (sm, e2, ran) =
                                backend.smooth_ecc(f, &Smoothing::voxels(1.5), &opts, &ctl).unwrap();
                            assert!(ran.on_gpu, "{:?}", ran.fallback);
                            assert_eq!(e2, ecc(&sm, &opts, &ctl).unwrap());
                        }
                        out
                    })
                    .unwrap()
            })
            .collect();
        for (f, j) in fields.iter().zip(jobs) {
            let cpu = ecc(f, &opts, &Control::default()).unwrap();
            for e in j.join().unwrap() {
                assert_eq!(e, cpu);
            }
        }
    });
    println!("24 concurrent GPU curves equal to the CPU's");
}

/// The crack filter on the GPU equals the CPU's bit for bit: strengths, orientations and
/// scales, for odd sizes, several channels, scales wider than the image and the bundled coins.
#[test]
fn the_crack_filter_equals_the_cpu_bit_for_bit() {
    use topoview_core::topo::cracks::{CrackOptions, Image, cracks};
    let Some(g) = gpu() else { return };
    let ctl = Control::default();
    let noise = |w: usize, h: usize, seed: u64| -> Vec<f32> {
        xorshift_values(seed, w * h, 1000).into_iter().map(|v| v as f32 / 7.0).collect()
    };
    let mut cases: Vec<(String, Image, CrackOptions)> = Vec::new();
    for &(w, h) in &[(2, 2), (2, 9), (37, 23), (130, 67), (500, 500)] {
        cases.push((format!("{w}x{h} grey"), Image::grey(w, h, noise(w, h, 1)), CrackOptions::default()));
    }
    let rgb = Image { width: 61, height: 40, channels: (0..3).map(|c| noise(61, 40, 10 + c)).collect() };
    cases.push(("61x40 RGB".into(), rgb, CrackOptions::default()));
    let wide = CrackOptions { scales: vec![0.5, 3.0, 9.5], orientations: 12, truncate: 4.0 };
    cases.push(("33x17 wide kernels".into(), Image::grey(33, 17, noise(33, 17, 3)), wide));
    let coins =
        topoview_core::io::open(&crate::common::data("../../assets/coins.png"), &Default::default()).unwrap();
    let [w, h, _] = coins.dims();
    let v = (0..coins.len()).map(|i| coins.samples().get_f64(i) as f32).collect();
    cases.push(("coins".into(), Image::grey(w, h, v), CrackOptions::default()));
    for (name, img, opts) in &cases {
        let cpu = cracks(img, opts, &ctl).unwrap();
        let gpu = g.cracks(img, opts, &ctl).unwrap();
        for f in 0..2 {
            let same = |a: &[f32], b: &[f32]| {
                a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()) && a.len() == b.len()
            };
            assert!(same(&cpu.strength[f], &gpu.strength[f]), "{name}: strength of family {f}");
            assert!(same(&cpu.angle[f], &gpu.angle[f]), "{name}: angle of family {f}");
            assert!(same(&cpu.scale[f], &gpu.scale[f]), "{name}: scale of family {f}");
        }
        println!("cracks {name}: equal to the CPU bit for bit");
    }
}

#[test]
fn the_scale_space_on_the_device_equals_the_cpus() {
    use topoview_compute::backend::{Backend, Choice};
    use topoview_compute::scale_space::{scale_space, sigmas, threshold_grid};
    if gpu().is_none() {
        return;
    }
    let (cuda, cpu) = (Backend::new(Choice::Cuda, None).unwrap(), Backend::new(Choice::Cpu, None).unwrap());
    let sig = sigmas(3.0, 0.5).unwrap();
    for dims in [vec![64, 48, 40], vec![300, 200]] {
        let f = topoview_core::synthetic::gaussian_random_field(&dims, 2.0, 7, &Control::default()).unwrap();
        let (lo, hi) = topoview_compute::FieldSummary::of(&f).range.unwrap();
        let grid = threshold_grid(lo, hi, 200).unwrap();
        for (construction, filtration) in [
            (Construction::TopCells, Filtration::Sublevel),
            (Construction::Vertices, Filtration::Sublevel),
            (Construction::TopCells, Filtration::Superlevel),
            (Construction::Vertices, Filtration::Superlevel),
        ] {
            let opts = EccOptions { construction, filtration, nan: NanPolicy::Absent, ..Default::default() };
            let g = scale_space(&cuda, &f, &opts, &sig, &grid, &Control::default()).unwrap();
            let c = scale_space(&cpu, &f, &opts, &sig, &grid, &Control::default()).unwrap();
            assert!(g.ran.iter().all(|r| r.on_gpu), "{dims:?}: ran on the GPU");
            assert_eq!(
                (g.chi, g.suggested),
                (c.chi, c.suggested),
                "{dims:?} {construction:?} {filtration:?}"
            );
        }
    }
    // Grids of values the smoothed field takes (a `<` for `<=` in the kernel shows there), ties
    // and NaN (integer values as f32; NaN voxels left out), on the GPU; and a grid finer than
    // the kernel's histogram (the exact curve per scale).
    let mut v: Vec<f32> = xorshift_values(9, 40 * 30 * 20, 7).iter().map(|&x| x as f32).collect();
    v[123] = f32::NAN;
    let f = ScalarField::new(&[40, 30, 20], topoview_core::field::Samples::F32(v)).unwrap();
    let taken = |sigma: f64| -> Vec<f64> {
        let s = smooth(&f, &Smoothing::voxels(sigma), &Control::default()).unwrap();
        let mut values: Vec<f64> =
            (0..s.len()).step_by(97).map(|i| s.samples().get_f64(i)).filter(|x| x.is_finite()).collect();
        values.sort_by(f64::total_cmp);
        values
    };
    for (sigmas, grid, on_gpu) in [
        (vec![0.0, 1.0], taken(1.0), true),
        (vec![0.0, 0.5, 2.0], taken(0.5), true),
        (sig.clone(), threshold_grid(0.0, 6.0, 50).unwrap(), true),
        (sig.clone(), threshold_grid(0.0, 6.0, 2000).unwrap(), false),
    ] {
        assert!(grid.len() > 10);
        for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
            let opts = EccOptions { filtration, nan: NanPolicy::Absent, ..Default::default() };
            let g = scale_space(&cuda, &f, &opts, &sigmas, &grid, &Control::default()).unwrap();
            let c = scale_space(&cpu, &f, &opts, &sigmas, &grid, &Control::default()).unwrap();
            let smoothed_on_gpu = g.ran.iter().zip(&sigmas).filter(|(_, s)| **s > 0.0).all(|(r, _)| r.on_gpu);
            assert_eq!(smoothed_on_gpu, on_gpu, "{} thresholds: where it ran", grid.len());
            assert_eq!(
                (g.chi, g.suggested),
                (c.chi, c.suggested),
                "{} thresholds {filtration:?}",
                grid.len()
            );
        }
    }
    println!("scale-space: equal to the CPU");
}

/// Betti curves on the device (Borůvka's forest) equal the CPU's sweeps: every shape above with
/// few and many values, ties and NaN (voxels outside every set), a smooth field, the bundled
/// volume; both constructions and filtrations.
#[test]
fn betti_curves_on_the_device_equal_the_cpus() {
    use topoview_compute::backend::{Backend, Choice};
    use topoview_core::topo::betti::betti;
    if gpu().is_none() {
        return;
    }
    let cuda = Backend::new(Choice::Cuda, None).unwrap();
    let mut fields = Vec::new();
    for (k, &shape) in SHAPES.iter().enumerate() {
        let n: usize = shape.iter().product();
        fields.push(field_of(Dtype::U8, shape, &values(Dtype::U8, k as u64, n, 4)));
        fields.push(field_of(Dtype::I16, shape, &values(Dtype::I16, k as u64 + 50, n, 300)));
        let mut v = values(Dtype::F32, k as u64 + 100, n, 1 << 30);
        v[n / 2] = f64::NAN;
        fields.push(field_of(Dtype::F32, shape, &v));
    }
    fields.push(
        topoview_core::synthetic::gaussian_random_field(&[96, 80, 72], 3.0, 5, &Control::default()).unwrap(),
    );
    fields.push(
        topoview_core::io::open(&crate::common::data("mni152_t1_09a.nii.gz"), &Default::default()).unwrap(),
    );
    let mut curves = 0;
    for f in &fields {
        for construction in [Construction::TopCells, Construction::Vertices] {
            for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
                let opts =
                    EccOptions { construction, filtration, nan: NanPolicy::Absent, ..Default::default() };
                let e = ecc(f, &opts, &Control::default()).unwrap();
                let (g, ran) = cuda.betti(f, &e, &Control::default()).unwrap();
                assert!(ran.on_gpu, "{:?}: ran on the GPU ({:?})", f.shape(), ran.fallback);
                let c = betti(f, &e, &Control::default()).unwrap();
                assert_eq!(g, c, "{:?} {:?} {construction:?} {filtration:?}", f.shape(), f.dtype());
                curves += 1;
            }
        }
    }
    println!("Betti curves: {curves} equal to the CPU");
}

/// The GPU's apparent pairs (Ripser++'s) equal the CPU's column for column in every dimension,
/// and its listings of each next dimension's columns and simplices equal the CPU's, on random
/// clouds with ties and duplicate points (dense, and sparse under a threshold) and on the
/// standard sets; the barcodes computed with them equal the CPU's (and, for the sets,
/// Ripser's) bar for bar.
#[test]
fn rips_apparent_pairs_and_listings_on_the_device_equal_the_cpus() {
    use topoview_compute::backend::{Backend, Choice};
    use topoview_core::io::points::{self, PointFormat};
    use topoview_core::topo::rips::index::Entry;
    use topoview_core::topo::rips::{self, Columns, Distances, Listing, Offload, RipsError, RipsOptions};
    let Some(g) = gpu() else { return };
    let ctl = Control::default();
    /// The GPU's results, each held against the CPU's before it is used.
    struct Checked<'g> {
        on_gpu: topoview_gpu::RipsOnGpu<'g>,
        ctl: &'g Control<'g>,
        compared: usize,
        listed: usize,
    }
    impl Offload for Checked<'_> {
        fn apparent(&mut self, cols: &Columns) -> Result<Vec<Option<Entry>>, RipsError> {
            let found = self.on_gpu.apparent(cols)?;
            assert_eq!(found, rips::apparent_on_cpu(cols, self.ctl).unwrap(), "dimension {}", cols.dim);
            self.compared += found.len();
            Ok(found)
        }

        fn next_columns(&mut self, l: &Listing) -> Result<Option<rips::Listed>, RipsError> {
            let (mut columns, mut next) = self.on_gpu.next_columns(l)?.expect("the GPU lists");
            let (mut want_columns, mut want_next) = rips::list_on_cpu(l, self.ctl).unwrap();
            for v in [&mut columns, &mut next, &mut want_columns, &mut want_next] {
                v.sort_unstable_by_key(|e| e.index);
            }
            let what = format!("dimension {} (top: {})", l.dim + 1, l.top);
            assert_eq!(columns, want_columns, "the columns of {what}");
            assert_eq!(next, want_next, "the simplices of {what}");
            self.listed += columns.len() + next.len();
            Ok(Some((columns, next)))
        }
    }
    let mut compared = 0usize;
    let mut listed = 0usize;
    let mut check = |d: &Distances, opts: RipsOptions| {
        let mut checked =
            Checked { on_gpu: topoview_gpu::RipsOnGpu::new(&g, &ctl), ctl: &ctl, compared: 0, listed: 0 };
        let b = rips::barcode_with(d, &opts, &mut checked, &ctl).unwrap().sorted();
        compared += checked.compared;
        listed += checked.listed;
        assert_eq!(b, rips::barcode(d, &opts, &ctl).unwrap().sorted(), "{opts:?}");
        b
    };
    for seed in 1..40u64 {
        let n = 8 + (seed as usize * 7) % 40;
        let dim = 1 + seed as usize % 3;
        // Coordinates on a coarse grid: many equal distances and some equal points.
        let p: Vec<f64> = xorshift_values(seed, n * dim, 5).into_iter().collect();
        let d = Distances::euclidean(&p, dim, &ctl).unwrap();
        for (maxdim, threshold) in [(2, f32::INFINITY), (3, 2.0), (1, 1.5)] {
            check(&d, RipsOptions { maxdim, threshold });
        }
    }
    let backend = Backend::new(Choice::Cuda, None).unwrap();
    for (file, name, maxdim, threshold) in [
        ("sphere_3_192.lower_distance_matrix", "sphere_3_192_dim2", 2, f32::INFINITY),
        ("celegans.distance_matrix", "celegans_dim2", 2, f32::INFINITY),
        ("o3_4096.point_cloud", "o3_4096_dim1_t1.4", 1, 1.4),
        ("mni152_set150_400.csv", "mni152_set150_400_dim2", 2, f32::INFINITY),
    ] {
        let data =
            points::read(&crate::common::data(&format!("rips/{file}")), PointFormat::Auto, &ctl).unwrap();
        let d = topoview_core::io::points::distances(&data, &ctl).unwrap();
        let opts = RipsOptions { maxdim, threshold };
        assert_eq!(check(&d, opts).bars, crate::common::ripser_bars(name), "{file}");
        let (b, ran) = backend.rips(&d, &opts, &ctl).unwrap();
        assert!(ran.on_gpu && ran.fallback.is_none(), "{file}: {ran:?}");
        assert_eq!(b.sorted().bars, crate::common::ripser_bars(name), "{file} through the backend");
    }
    // The top dimension listed from neighbour lists on a standard set (held against the CPU's
    // bars: Ripser's expected file is for dimension 1).
    let o3 = points::read(&crate::common::data("rips/o3_4096.point_cloud"), PointFormat::Auto, &ctl).unwrap();
    let d = topoview_core::io::points::distances(&o3, &ctl).unwrap();
    check(&d, RipsOptions { maxdim: 2, threshold: 1.4 });
    println!("{compared} apparent pairs and {listed} listed columns and simplices compared");
}

/// The first cell whose gradient code differs between `gpu` and `cpu`, with both codes.
fn first_difference(gpu: &Gradient, cpu: &Gradient) -> Option<(usize, u8, u8)> {
    let (a, b) = (gpu.codes(), cpu.codes());
    assert_eq!(a.len(), b.len(), "code arrays of different lengths");
    let i = a.iter().zip(b).position(|(x, y)| x != y)?;
    let nibble = if a[i] & 0xf != b[i] & 0xf { 0 } else { 1 };
    Some((2 * i + nibble, a[i] >> (4 * nibble) & 0xf, b[i] >> (4 * nibble) & 0xf))
}

fn gradients_equal(g: &Gpu, f: &ScalarField, what: &str) {
    let cpu = discrete_gradient(f).unwrap();
    let (gpu, _) = g.msc_gradient(f, cell_grid(f)).unwrap();
    if let Some((cell, a, b)) = first_difference(&gpu, &cpu) {
        panic!("{what} {:?} {}: cell {cell} has code {a} on the GPU, {b} on the CPU", f.shape(), f.dtype());
    }
}

#[test]
fn the_morse_smale_gradient_equals_the_cpus_code_for_code() {
    let Some(g) = gpu() else { return };
    let shapes: &[&[usize]] = &[
        &[2, 2],
        &[2, 9],
        &[37, 23],
        &[256, 3],
        &[2, 2, 2],
        &[3, 3, 3],
        &[2, 5, 3],
        &[17, 9, 13],
        &[64, 33, 21],
    ];
    let mut checked = 0;
    for dtype in Dtype::ALL {
        for (k, &shape) in shapes.iter().enumerate() {
            let n = shape.iter().product();
            // Few levels (plateaus: the index breaks the ties) and many.
            for levels in [3, 1 << 20] {
                let f = field_of(dtype, shape, &values(dtype, 31 + k as u64, n, levels));
                gradients_equal(&g, &f, &format!("{levels} levels"));
                checked += 1;
            }
        }
    }
    // Smooth fields rounded to a few levels: large plateaus; floats with signed zeros and
    // infinities; the bundled volumes.
    for dims in [vec![24, 20, 16], vec![60, 50], vec![31, 17, 23]] {
        let grf =
            topoview_core::synthetic::gaussian_random_field(&dims, 2.0, 11, &Default::default()).unwrap();
        let vals: Vec<f64> = (0..grf.len()).map(|i| (grf.samples().get_f64(i) * 24.0).round()).collect();
        gradients_equal(&g, &field_of(Dtype::F64, &dims, &vals), "rounded GRF");
        checked += 1;
    }
    let special = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -1.5, f64::MIN_POSITIVE, 1e300];
    for dtype in [Dtype::F32, Dtype::F64] {
        let vals: Vec<f64> =
            xorshift_values(5, 19 * 11 * 7, 8).iter().map(|&i| special[i as usize]).collect();
        gradients_equal(&g, &field_of(dtype, &[19, 11, 7], &vals), "signed zeros and infinities");
        checked += 1;
    }
    for name in ["mni152_t1_09a.nii.gz", "pydicom_emri_small.nii.gz"] {
        let f = topoview_core::io::open(&crate::common::data(name), &Default::default()).unwrap();
        gradients_equal(&g, &f, name);
        checked += 1;
    }
    println!("{checked} GPU gradients equal to the CPU's");
}

#[test]
fn the_backends_morse_smale_analysis_on_the_gpu_equals_the_cpus() {
    let Some(_g) = gpu() else { return };
    use topoview_compute::backend::{Backend, Choice};
    let backend = Backend::new(Choice::Cuda, None).unwrap();
    let mni =
        topoview_core::io::open(&crate::common::data("mni152_t1_09a.nii.gz"), &Default::default()).unwrap();
    let mut fields = vec![mni];
    // Plateaus and noise, 2D and 3D, paths that leave the domain (mountains without a label).
    for (k, shape) in
        [vec![40, 30, 20], vec![2, 2, 2], vec![3, 7], vec![200, 150], vec![9, 2, 5]].iter().enumerate()
    {
        let n = shape.iter().product();
        fields.push(field_of(Dtype::U16, shape, &values(Dtype::U16, 9 + k as u64, n, 50)));
        fields.push(field_of(Dtype::F32, shape, &values(Dtype::F32, 90 + k as u64, n, 1 << 20)));
    }
    let grf =
        topoview_core::synthetic::gaussian_random_field(&[64, 48, 40], 3.0, 7, &Default::default()).unwrap();
    fields.push(grf);
    for f in &fields {
        let cpu = analyse(f, &Control::default()).unwrap();
        let (gpu, ran) = backend.msc(f, &Control::default(), u64::MAX).unwrap();
        assert!(ran.on_gpu && ran.fallback.is_none(), "{ran:?}");
        assert!(first_difference(&gpu.complex.gradient, &cpu.complex.gradient).is_none());
        assert_eq!(gpu.complex.critical, cpu.complex.critical);
        assert_eq!(gpu.complex.arcs, cpu.complex.arcs);
        assert_eq!(gpu.complex.basins, cpu.complex.basins);
        assert_eq!(gpu.complex.mountains, cpu.complex.mountains);
        assert_eq!(gpu.diagram, cpu.diagram);
        assert_eq!(gpu.hierarchy.cancelled_at, cpu.hierarchy.cancelled_at);
        assert_eq!(gpu.hierarchy.partner, cpu.hierarchy.partner);
    }
    println!(
        "{} analyses with the GPU's gradient, labels and saddle-saddle arcs equal to the CPU's",
        fields.len()
    );
}

#[test]
fn saddle_saddle_arcs_recounted_or_grown_equal_the_cpus() {
    use topoview_core::topo::msc::complex::SaddleArc;
    use topoview_core::topo::msc::vpaths::descending;
    let Some(g) = gpu() else { return };
    let mni =
        topoview_core::io::open(&crate::common::data("mni152_t1_09a.nii.gz"), &Default::default()).unwrap();
    let grf =
        topoview_core::synthetic::gaussian_random_field(&[64, 48, 40], 3.0, 7, &Default::default()).unwrap();
    let noise = field_of(Dtype::U16, &[40, 30, 20], &values(Dtype::U16, 5, 40 * 30 * 20, 50));
    let key = |a: &SaddleArc| (a.upper, a.lower);
    let mut checked = 0;
    for f in [&mni, &grf, &noise] {
        let (gradient, device) = g.msc_gradient(f, cell_grid(f)).unwrap();
        let saddles: Vec<u32> = gradient.critical_cells()[2].iter().map(|&c| c as u32).collect();
        let mut cpu: Vec<SaddleArc> = saddles
            .iter()
            .flat_map(|&s| {
                descending(&gradient, s as usize).into_iter().map(move |(t, m, path)| SaddleArc {
                    upper: s,
                    lower: t as u32,
                    multiplicity: m,
                    cells: path.into_iter().map(|c| c as u32).collect(),
                })
            })
            .collect();
        cpu.sort_by_key(key);
        let most_paths = cpu.iter().map(|a| a.multiplicity.count).max().unwrap();
        assert!(most_paths > 1, "some saddles are joined by several V-paths");
        // Counts above 1 recounted on the CPU; a table grown from 16 slots; both.
        for (most, slots) in [(1, 1 << 20), (u64::MAX, 16), (2, 16)] {
            let mut got =
                g.saddle_arcs_within(&gradient, &device, &saddles, most, slots, &Control::default()).unwrap();
            got.sort_by_key(key);
            assert_eq!(got, cpu, "{:?}: counts to {most}, from {slots} slots", f.shape());
            checked += 1;
        }
    }
    println!("{checked} sets of saddle-saddle arcs (recounted, grown) equal to the CPU's");
}
