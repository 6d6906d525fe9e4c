//! The ECC of a file read a slab at a time ([`topoview_core::topo::ecc::stream`]) equals the ECC of
//! the file read whole, for every sample type, byte order, shape, construction, filtration and
//! slab size, and for every format that stores its samples as one block; formats and files that
//! do not are left to the whole-file readers.

use crate::common::{field_of, topoview, xorshift_values};
use std::path::{Path, PathBuf};
use topoview_core::control::Control;
use topoview_core::field::{Dtype, ScalarField};
use topoview_core::io::BlockReader;
use topoview_core::io::{Endian, OpenOptions, RawSpec, block, open};
use topoview_core::topo::ecc::stream::{Helped, Helper, Planes, ecc_helped, ecc_in_slabs, value_sums};
use topoview_core::topo::ecc::{Construction, EccError, EccOptions, Filtration, NanPolicy, ecc};

const DTYPES: [Dtype; 8] =
    [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::F64];

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("topoview_ecc_stream_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The samples of `f` as bytes in byte order `endian`.
fn bytes(f: &ScalarField, endian: Endian) -> Vec<u8> {
    let size = f.dtype().size();
    let mut out = Vec::with_capacity(f.len() * size);
    for i in 0..f.len() {
        let v = f.samples().get_f64(i);
        let le: Vec<u8> = match f.dtype() {
            Dtype::U8 => vec![v as u8],
            Dtype::I8 => vec![v as i8 as u8],
            Dtype::U16 => (v as u16).to_le_bytes().to_vec(),
            Dtype::I16 => (v as i16).to_le_bytes().to_vec(),
            Dtype::U32 => (v as u32).to_le_bytes().to_vec(),
            Dtype::I32 => (v as i32).to_le_bytes().to_vec(),
            Dtype::F32 => (v as f32).to_le_bytes().to_vec(),
            Dtype::F64 => v.to_le_bytes().to_vec(),
        };
        match endian {
            Endian::Little => out.extend(le),
            Endian::Big => out.extend(le.into_iter().rev()),
        }
    }
    out
}

/// Values with ties for `dtype`: negative ones for signed types, signed zeros and infinities
/// for floats.
fn values(dtype: Dtype, n: usize, seed: u64) -> Vec<f64> {
    let v = xorshift_values(seed, n, 23);
    v.into_iter()
        .enumerate()
        .map(|(i, x)| match dtype {
            Dtype::U8 | Dtype::U16 | Dtype::U32 => x * 3.0,
            Dtype::I8 | Dtype::I16 | Dtype::I32 => x * 5.0 - 50.0,
            _ if i % 17 == 3 => [f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0][i / 17 % 4],
            _ => (x - 11.0) * 0.37,
        })
        .collect()
}

/// Every construction, filtration and chunk size; infinities kept as values.
fn all_options() -> Vec<EccOptions> {
    let mut v = Vec::new();
    for construction in [Construction::TopCells, Construction::Vertices] {
        for filtration in [Filtration::Sublevel, Filtration::Superlevel] {
            for chunk_voxels in [1 << 20, 50] {
                v.push(EccOptions { construction, filtration, nan: NanPolicy::Absent, chunk_voxels });
            }
        }
    }
    v
}

/// Slab sizes: one plane per slab, a few planes, and the whole field.
fn slab_sizes(f: &ScalarField) -> [usize; 3] {
    let plane = f.len() / f.shape().last().unwrap() * f.dtype().size();
    [1, 4 * plane, 1 << 30]
}

/// Streams `path` (read as `opts` says) in every slab size and option, against `want`.
fn check_streams(path: &Path, opts: &OpenOptions, want: &ScalarField) {
    let b = block(path, opts).unwrap().unwrap_or_else(|| panic!("{} is not one block", path.display()));
    assert_eq!(b.dims(), want.shape());
    assert_eq!(b.dtype(), want.dtype());
    assert_eq!(b.spacing, want.spacing());
    for o in all_options() {
        let whole = ecc(want, &o, &Control::default()).unwrap();
        for slab in slab_sizes(want) {
            let got = ecc_in_slabs(&b.reader().unwrap(), &o, slab, &Control::default()).unwrap();
            assert_eq!(got, whole, "{} {o:?} slabs of {slab} bytes", path.display());
        }
        // Five workers taking a plane each in turn, however many cores this machine has.
        let plane = want.len() / want.shape().last().unwrap() * want.dtype().size();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(5).build().unwrap();
        let got = pool.install(|| ecc_in_slabs(&b.reader().unwrap(), &o, 15 * plane, &Control::default()));
        assert_eq!(got.unwrap(), whole, "{} {o:?} five workers", path.display());
    }
}

#[test]
fn every_type_byte_order_and_shape_streams_to_the_whole_files_curve() {
    for (k, dtype) in DTYPES.into_iter().enumerate() {
        for (s, dims) in [vec![37], vec![13, 11], vec![7, 6, 9], vec![5, 4, 1]].into_iter().enumerate() {
            let n: usize = dims.iter().product();
            let f = field_of(dtype, &dims, &values(dtype, n, (k * 10 + s) as u64 + 1));
            for (endian, offset) in [(Endian::Little, 0), (Endian::Big, 17)] {
                let path = temp(&format!("t{k}_{s}_{offset}.bin"));
                let mut data = vec![0xAB; offset as usize];
                data.extend(bytes(&f, endian));
                std::fs::write(&path, data).unwrap();
                let opts = OpenOptions {
                    raw: Some(RawSpec { dims: dims.clone(), dtype, endian, offset }),
                    ..Default::default()
                };
                assert_eq!(open(&path, &opts).unwrap(), f);
                check_streams(&path, &opts, &f);
            }
        }
    }
}

#[test]
fn nifti_nrrd_and_metaimage_stream_when_uncompressed() {
    let f = field_of(Dtype::I16, &[9, 8, 7], &values(Dtype::I16, 9 * 8 * 7, 5))
        .with_spacing([0.5, 2.0, 1.5])
        .unwrap();
    let raw = bytes(&f, Endian::Little);
    let none = OpenOptions::default();

    let nii = temp("f.nii");
    std::fs::write(&nii, topoview_core::io::nifti::nifti1_bytes(&f, false).unwrap()).unwrap();
    check_streams(&nii, &none, &open(&nii, &none).unwrap());
    // A .hdr/.img pair (magic ni1, the data at vox_offset 0 of the .img), and a single file
    // whose header extension pushes the data to byte 400.
    let single = topoview_core::io::nifti::nifti1_bytes(&f, false).unwrap();
    let mut hdr = single[..348].to_vec();
    hdr[344..348].copy_from_slice(b"ni1\0");
    hdr[108..112].copy_from_slice(&0f32.to_le_bytes());
    std::fs::write(temp("pair.hdr"), &hdr).unwrap();
    std::fs::write(temp("pair.img"), &single[352..]).unwrap();
    check_streams(&temp("pair.hdr"), &none, &open(&temp("pair.hdr"), &none).unwrap());
    let mut extended = single[..348].to_vec();
    extended[108..112].copy_from_slice(&400f32.to_le_bytes());
    extended.extend([1u8, 0, 0, 0]);
    extended.extend([0u8; 48]);
    extended.extend(&single[352..]);
    let ext = temp("extended.nii");
    std::fs::write(&ext, extended).unwrap();
    check_streams(&ext, &none, &open(&ext, &none).unwrap());
    assert_eq!(block(&ext, &none).unwrap().unwrap().spec.offset, 400);
    let gz = temp("f.nii.gz");
    std::fs::write(&gz, topoview_core::io::nifti::nifti1_bytes(&f, true).unwrap()).unwrap();
    assert_eq!(block(&gz, &none).unwrap(), None, "gzip is read whole");
    // scl_slope 2: the reader scales the samples, so they are not streamed as stored.
    let mut scaled = topoview_core::io::nifti::nifti1_bytes(&f, false).unwrap();
    scaled[112..116].copy_from_slice(&2f32.to_le_bytes());
    let scaled_path = temp("scaled.nii");
    std::fs::write(&scaled_path, scaled).unwrap();
    assert_eq!(block(&scaled_path, &none).unwrap(), None, "scaled NIfTI is read whole");

    let header = |extra: &str| {
        format!(
            "NRRD0004\ntype: short\ndimension: 3\nsizes: 9 8 7\nspacings: 0.5 2 1.5\nendian: little\n{extra}"
        )
    };
    let attached = temp("attached.nrrd");
    let mut b = header("encoding: raw\n\n").into_bytes();
    b.extend(&raw);
    std::fs::write(&attached, b).unwrap();
    check_streams(&attached, &none, &open(&attached, &none).unwrap());
    std::fs::write(temp("detached.raw"), [vec![1u8; 5], raw.clone()].concat()).unwrap();
    let detached = temp("detached.nhdr");
    std::fs::write(&detached, header("encoding: raw\nbyte skip: -1\ndata file: detached.raw\n\n")).unwrap();
    check_streams(&detached, &none, &open(&detached, &none).unwrap());
    let gzipped = temp("gzipped.nrrd");
    std::fs::write(&gzipped, header("encoding: gzip\n\n")).unwrap();
    assert_eq!(block(&gzipped, &none).unwrap(), None, "gzip NRRD is read whole");

    let mha = |extra: &str| {
        format!(
            "ObjectType = Image\nNDims = 3\nDimSize = 9 8 7\nElementSpacing = 0.5 2 1.5\n\
             ElementType = MET_SHORT\nBinaryDataByteOrderMSB = False\n{extra}"
        )
    };
    let local = temp("local.mha");
    let mut b = mha("ElementDataFile = LOCAL\n").into_bytes();
    b.extend(&raw);
    std::fs::write(&local, b).unwrap();
    check_streams(&local, &none, &open(&local, &none).unwrap());
    // Seven bytes of something else before the samples of a detached file (HeaderSize 7), and
    // a NRRD's five skipped bytes.
    std::fs::write(temp("skipped.raw"), [vec![9u8; 7], raw.clone()].concat()).unwrap();
    let skipped = temp("skipped.mhd");
    std::fs::write(&skipped, mha("HeaderSize = 7\nElementDataFile = skipped.raw\n")).unwrap();
    check_streams(&skipped, &none, &open(&skipped, &none).unwrap());
    let nrrd_skip = temp("skip.nhdr");
    std::fs::write(&nrrd_skip, header("encoding: raw\nbyte skip: 5\ndata file: detached.raw\n\n")).unwrap();
    check_streams(&nrrd_skip, &none, &open(&nrrd_skip, &none).unwrap());
    std::fs::write(temp("mhd.raw"), &raw).unwrap();
    let mhd = temp("f.mhd");
    std::fs::write(&mhd, mha("ElementDataFile = mhd.raw\n")).unwrap();
    check_streams(&mhd, &none, &open(&mhd, &none).unwrap());
    let compressed = temp("compressed.mha");
    std::fs::write(&compressed, mha("CompressedData = True\nElementDataFile = LOCAL\n")).unwrap();
    assert_eq!(block(&compressed, &none).unwrap(), None, "compressed MetaImage is read whole");
}

#[test]
fn one_volume_of_a_4d_nifti_streams() {
    // The bundled 4D example, inflated: a .nii whose volumes follow one another.
    let gz = crate::common::data("nibabel_example4d.nii.gz");
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(gz).unwrap()),
        &mut inflated,
    )
    .unwrap();
    // pixdim[1] = 0: the reader notes the unusable spacing, before the volume it took.
    inflated[80..84].copy_from_slice(&0f32.to_le_bytes());
    let nii = temp("example4d.nii");
    std::fs::write(&nii, inflated).unwrap();
    for volume in [None, Some(1)] {
        let opts = OpenOptions { volume, ..Default::default() };
        let whole = open(&nii, &opts).unwrap();
        check_streams(&nii, &opts, &whole);
        let b = block(&nii, &opts).unwrap().unwrap();
        assert_eq!(b.notes, whole.notes_with_series());
        assert_eq!(b.notes.len(), 2, "{:?}", b.notes);
    }
}

#[test]
fn non_finite_samples_are_rejected_or_left_out_as_when_read_whole() {
    let mut v = values(Dtype::F32, 6 * 5 * 8, 9);
    v[7] = f64::NAN;
    v[100] = f64::NAN;
    let f = field_of(Dtype::F32, &[6, 5, 8], &v);
    let path = temp("nan.raw");
    std::fs::write(&path, bytes(&f, Endian::Little)).unwrap();
    let opts = OpenOptions {
        raw: Some(RawSpec { dims: vec![6, 5, 8], dtype: Dtype::F32, endian: Endian::Little, offset: 0 }),
        ..Default::default()
    };
    let b = block(&path, &opts).unwrap().unwrap();
    for nan in [NanPolicy::Reject, NanPolicy::Absent] {
        let o = EccOptions { nan, ..Default::default() };
        let whole = ecc(&f, &o, &Control::default());
        assert!(whole.is_ok() == (nan == NanPolicy::Absent), "{whole:?}");
        for slab in slab_sizes(&f) {
            assert_eq!(
                ecc_in_slabs(&b.reader().unwrap(), &o, slab, &Control::default()),
                whole,
                "{nan:?} {slab}"
            );
        }
    }
}

#[test]
fn short_files_are_left_to_the_readers_and_a_file_cut_while_read_names_itself() {
    let f = field_of(Dtype::U8, &[10, 10, 10], &values(Dtype::U8, 1000, 3));
    let path = temp("short_10x10x10_uint8.raw");
    std::fs::write(&path, &bytes(&f, Endian::Little)[..999]).unwrap();
    assert_eq!(block(&path, &OpenOptions::default()).unwrap(), None);
    let err = open(&path, &OpenOptions::default()).unwrap_err().to_string();
    assert!(err.contains("raw size mismatch"), "{err}");

    std::fs::write(&path, bytes(&f, Endian::Little)).unwrap();
    let b = block(&path, &OpenOptions::default()).unwrap().unwrap();
    std::fs::write(&path, &bytes(&f, Endian::Little)[..500]).unwrap();
    match ecc_in_slabs(&b.reader().unwrap(), &EccOptions::default(), 100, &Control::default()) {
        Err(EccError::Read(m)) => {
            assert!(m.contains("short_10x10x10_uint8.raw") && m.contains("truncated"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_command_line_streams_and_writes_the_whole_files_curve() {
    let f = field_of(Dtype::U16, &[20, 30, 40], &values(Dtype::U16, 24_000, 11));
    let path = temp("cli_20x30x40_uint16.raw");
    std::fs::write(&path, bytes(&f, Endian::Little)).unwrap();
    let csv = temp("cli.csv");
    let (ok, out, err) =
        topoview(&["ecc", path.to_str().unwrap(), "--backend", "cpu", "--csv", csv.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("read from the file a slab at a time"), "{out}");
    let want = ecc(&f, &EccOptions::default(), &Control::default()).unwrap();
    let rows: Vec<String> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("threshold"))
        .map(String::from)
        .collect();
    let want_rows: Vec<String> =
        want.thresholds.to_f64_vec().iter().zip(want.chi.iter()).map(|(t, c)| format!("{t},{c}")).collect();
    assert_eq!(rows, want_rows);
    // Betti curves need the whole field: it is read whole, with the same curve.
    let (ok, out, err) = topoview(&["ecc", path.to_str().unwrap(), "--backend", "cpu", "--betti"]);
    assert!(ok, "{err}");
    assert!(!out.contains("a slab at a time"), "{out}");
}

#[test]
fn parallel_reads_equal_sequential_reads_and_name_a_short_file() {
    // 6 MiB of big-endian u16: two 4 MiB parts and a partial one.
    let n = 3 << 20;
    let path = temp("parallel.bin");
    let bytes: Vec<u8> = (0..n as u32).flat_map(|i| ((i * 7919) as u16).to_be_bytes()).collect();
    std::fs::write(&path, &bytes).unwrap();
    let opts = OpenOptions {
        raw: Some(RawSpec { dims: vec![n], dtype: Dtype::U16, endian: Endian::Big, offset: 0 }),
        ..Default::default()
    };
    let b = block(&path, &opts).unwrap().unwrap();
    let r = b.reader().unwrap();
    let (mut seq, mut par) = (vec![0u16; n - 5], vec![0u16; n - 5]);
    r.read(5, &mut seq).unwrap();
    r.read_parallel(5, &mut par).unwrap();
    assert_eq!(seq, par);
    assert_eq!(par[0], (5u32 * 7919) as u16);
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = r.read_parallel(0, &mut par).unwrap_err().to_string();
    assert!(err.contains("parallel.bin") && err.contains("truncated"), "{err}");
}

/// A helper that takes planes beside the workers on a pool of its own thread, as the GPUs do.
fn cpu_helper<'a>(reader: &'a BlockReader, o: &'a EccOptions) -> Helper<'a> {
    Box::new(move |planes: &Planes| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        match pool.install(|| value_sums(reader, o, planes, &Control::default())) {
            Ok(v) if v.planes > 0 => Helped::Sums(v),
            Ok(_) => Helped::Nothing,
            Err(e) => Helped::Failed(e.to_string()),
        }
    })
}

#[test]
fn planes_shared_with_a_helper_give_the_whole_files_curve() {
    for dtype in [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16] {
        let dims = [9, 7, 40];
        let f = field_of(dtype, &dims, &values(dtype, 9 * 7 * 40, dtype.size() as u64 + 7));
        let path = temp(&format!("helped_{}.raw", dtype.name()));
        std::fs::write(&path, bytes(&f, Endian::Little)).unwrap();
        let opts = OpenOptions {
            raw: Some(RawSpec { dims: dims.to_vec(), dtype, endian: Endian::Little, offset: 0 }),
            ..Default::default()
        };
        let b = block(&path, &opts).unwrap().unwrap();
        let r = b.reader().unwrap();
        let mut helped = 0;
        for o in all_options() {
            let whole = ecc(&f, &o, &Control::default()).unwrap();
            // Three workers beside the helper, whatever this machine's cores, slowed down (at
            // each progress tick) so that the helper's thread has started before they finish.
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let slow = |_: u64| std::thread::sleep(std::time::Duration::from_millis(2));
            let ctl = Control { progress: Some(&slow), cancel: None };
            let (got, by) = pool.install(|| ecc_helped(&r, &o, &ctl, cpu_helper(&r, &o))).unwrap();
            assert_eq!(got, whole, "{dtype:?} {o:?}, {} planes helped", by.planes);
            assert_eq!(by.failed, None);
            helped += by.planes;
            // A helper that fails after taking planes: the curve is made again without it.
            let failing: Helper = Box::new(|planes: &Planes| {
                let _ = planes.take(5);
                Helped::Failed("the device fell off the bus".into())
            });
            let (got, by) = ecc_helped(&r, &o, &Control::default(), failing).unwrap();
            assert_eq!(got, whole, "{dtype:?} {o:?} after a failed helper");
            assert_eq!((by.planes, by.failed.as_deref()), (0, Some("the device fell off the bus")));
        }
        assert!(helped > 0, "{dtype:?}: the helper never took a plane");
    }
}
