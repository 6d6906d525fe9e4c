//! Readers: the same voxels through every format give the same field.

use crate::common::{data, field_of};
use std::io::Write;
use std::path::Path;
use topoview_core::field::{Dtype, Samples, ScalarField};
use topoview_core::io::{Endian, OpenOptions, RawSpec, open};

fn read(p: &Path) -> ScalarField {
    open(p, &OpenOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn emri_is_identical_as_nifti_raw_and_tiff() {
    let nii = read(&data("pydicom_emri_small.nii.gz"));
    let raw = read(&data("pydicom_emri_small_64x64x10_uint16_le.raw"));
    let tif = read(&data("pydicom_emri_small_stack_uint16.tif"));
    assert_eq!(nii.shape(), &[64, 64, 10]);
    assert_eq!(nii.dtype(), Dtype::U16);
    assert_eq!(nii.samples(), raw.samples());
    assert_eq!(nii.samples(), tif.samples());
    assert_eq!(raw.shape(), tif.shape());
}

#[test]
fn axis_order_is_x_fastest() {
    // The TIFF holds 2 pages of 15 rows by 10 columns: x = column, y = row, z = page.
    let t = read(&data("multipage_2x15x10.tif"));
    assert_eq!(t.shape(), &[10, 15, 2]);
    let png = read(&data("coins.png"));
    assert_eq!(png.shape(), &[384, 303]);
    let nii = read(&data("mni152_t1_09a.nii.gz"));
    assert_eq!(nii.shape(), &[197, 233, 189]);
    assert_eq!(nii.dtype(), Dtype::U8);
    let blobs = read(&data("nipy_some_blobs.nii"));
    assert_eq!((blobs.shape(), blobs.dtype()), (&[27, 32, 23][..], Dtype::F32));
    // A raw file read with explicit flags, first axis x.
    let spec = RawSpec { dims: vec![64, 64, 10], dtype: Dtype::U16, endian: Endian::Little, offset: 0 };
    let raw = open(
        &data("pydicom_emri_small_64x64x10_uint16_le.raw"),
        &OpenOptions { raw: Some(spec), volume: None },
    )
    .unwrap();
    let nii_emri = read(&data("pydicom_emri_small.nii.gz"));
    assert_eq!(raw.samples(), nii_emri.samples());
    // Voxel (x=5, y=7, z=3) of the raw file is sample 5 + 64 * (7 + 64 * 3).
    let bytes = std::fs::read(data("pydicom_emri_small_64x64x10_uint16_le.raw")).unwrap();
    let i = 5 + 64 * (7 + 64 * 3);
    assert_eq!(
        raw.samples().get_f64(raw.index(5, 7, 3)),
        u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]) as f64
    );
}

#[test]
fn colour_becomes_luminance_with_a_note() {
    let h = read(&data("horse_rgba.png"));
    assert_eq!(h.dtype(), Dtype::U8);
    assert!(h.notes.iter().any(|n| n.contains("luminance")));
    assert!(read(&data("camera.png")).notes.is_empty());
}

/// A NIfTI file built byte by byte: version 1 or 2, either byte order.
struct Nifti {
    version: u8,
    big: bool,
    dims: Vec<i64>,
    datatype: i16,
    slope: f64,
    inter: f64,
    pixdim: [f64; 3],
}

impl Nifti {
    fn bytes(&self, data_le: &[u8], elem: usize) -> Vec<u8> {
        let v1 = self.version == 1;
        let (len, off): (i32, usize) = if v1 { (348, 352) } else { (540, 544) };
        let mut h = vec![0u8; off];
        let big = self.big;
        let put = |h: &mut Vec<u8>, at: usize, mut b: Vec<u8>| {
            if big {
                b.reverse();
            }
            h[at..at + b.len()].copy_from_slice(&b);
        };
        put(&mut h, 0, len.to_le_bytes().to_vec());
        let mut dim = vec![self.dims.len() as i64];
        dim.extend(&self.dims);
        dim.resize(8, 1);
        let pix = [1.0, self.pixdim[0], self.pixdim[1], self.pixdim[2], 1.0, 1.0, 1.0, 1.0];
        if v1 {
            for (i, d) in dim.iter().enumerate() {
                put(&mut h, 40 + 2 * i, (*d as i16).to_le_bytes().to_vec());
            }
            put(&mut h, 70, self.datatype.to_le_bytes().to_vec());
            for (i, p) in pix.iter().enumerate() {
                put(&mut h, 76 + 4 * i, (*p as f32).to_le_bytes().to_vec());
            }
            put(&mut h, 108, (off as f32).to_le_bytes().to_vec());
            put(&mut h, 112, (self.slope as f32).to_le_bytes().to_vec());
            put(&mut h, 116, (self.inter as f32).to_le_bytes().to_vec());
            h[344..348].copy_from_slice(b"n+1\0");
        } else {
            h[4..12].copy_from_slice(b"n+2\0\r\n\x1a\n");
            put(&mut h, 12, self.datatype.to_le_bytes().to_vec());
            for (i, d) in dim.iter().enumerate() {
                put(&mut h, 16 + 8 * i, d.to_le_bytes().to_vec());
            }
            for (i, p) in pix.iter().enumerate() {
                put(&mut h, 104 + 8 * i, p.to_le_bytes().to_vec());
            }
            put(&mut h, 168, (off as i64).to_le_bytes().to_vec());
            put(&mut h, 176, self.slope.to_le_bytes().to_vec());
            put(&mut h, 184, self.inter.to_le_bytes().to_vec());
        }
        for c in data_le.chunks(elem) {
            let mut c = c.to_vec();
            if big {
                c.reverse();
            }
            h.extend(c);
        }
        h
    }
}

fn le_bytes(s: &Samples) -> (Vec<u8>, usize) {
    topoview_core::with_samples!(s, v => (v.iter().flat_map(|x| bytemuck::bytes_of(x).to_vec()).collect(), s.dtype().size()))
}

fn code(d: Dtype) -> i16 {
    match d {
        Dtype::U8 => 2,
        Dtype::I16 => 4,
        Dtype::I32 => 8,
        Dtype::F32 => 16,
        Dtype::F64 => 64,
        Dtype::I8 => 256,
        Dtype::U16 => 512,
        Dtype::U32 => 768,
    }
}

#[test]
fn nifti_every_dtype_version_byte_order_and_gzip() {
    let tmp = tempfile::tempdir().unwrap();
    let vals: Vec<f64> = (0..60).map(|i| ((i * 37) % 101) as f64 - 20.0).collect();
    for dt in Dtype::ALL {
        let vals: Vec<f64> = vals
            .iter()
            .map(|v| if matches!(dt, Dtype::U8 | Dtype::U16 | Dtype::U32) { v.abs() } else { *v })
            .collect();
        let want = field_of(dt, &[3, 4, 5], &vals);
        let (bytes, elem) = le_bytes(want.samples());
        for version in [1, 2] {
            for big in [false, true] {
                let n = Nifti {
                    version,
                    big,
                    dims: vec![3, 4, 5],
                    datatype: code(dt),
                    slope: 0.0,
                    inter: 0.0,
                    pixdim: [0.5, 2.0, 3.0],
                };
                let file = n.bytes(&bytes, elem);
                let p = tmp.path().join(format!("{dt}_{version}_{big}.nii"));
                std::fs::write(&p, &file).unwrap();
                let got = read(&p);
                assert_eq!(got.samples(), want.samples(), "{dt} v{version} big={big}");
                assert_eq!(got.shape(), &[3, 4, 5]);
                assert_eq!(got.spacing(), [0.5, 2.0, 3.0]);
                let gz = tmp.path().join(format!("{dt}_{version}_{big}.nii.gz"));
                let mut enc = flate2::write::GzEncoder::new(
                    std::fs::File::create(&gz).unwrap(),
                    flate2::Compression::fast(),
                );
                enc.write_all(&file).unwrap();
                enc.finish().unwrap();
                assert_eq!(read(&gz).samples(), want.samples(), "{dt} v{version} big={big} gz");
            }
        }
    }
}

#[test]
fn nifti_scaling_follows_nibabel() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, n: Nifti, s: &Samples| {
        let (b, e) = le_bytes(s);
        let p = tmp.path().join(name);
        std::fs::write(&p, n.bytes(&b, e)).unwrap();
        read(&p)
    };
    let base = |dt: Dtype, version: u8, slope: f64, inter: f64| Nifti {
        version,
        big: false,
        dims: vec![4],
        datatype: code(dt),
        slope,
        inter,
        pixdim: [1.0; 3],
    };
    let i16s = Samples::I16(vec![-3, 0, 7, 1000]);
    // Identity scaling keeps integers.
    assert_eq!(write("a.nii", base(Dtype::I16, 1, 1.0, 0.0), &i16s).samples(), &i16s);
    // Slope 0 means "no scaling".
    assert_eq!(write("b.nii", base(Dtype::I16, 1, 0.0, 5.0), &i16s).samples(), &i16s);
    // i16 with an f32 slope: f32, computed in f32.
    let f = write("c.nii", base(Dtype::I16, 1, 0.1, 1.5), &i16s);
    let want: Vec<f32> = [-3i16, 0, 7, 1000].iter().map(|&x| x as f32 * 0.1f32 + 1.5f32).collect();
    assert_eq!(f.samples(), &Samples::F32(want));
    assert!(f.notes.iter().any(|n| n.contains("scl_slope")));
    // i32 with an f32 slope: numpy promotes to f64.
    let f = write("d.nii", base(Dtype::I32, 1, 2.0, 0.0), &Samples::I32(vec![1, -2, 3, 4]));
    assert_eq!(f.samples(), &Samples::F64(vec![2.0, -4.0, 6.0, 8.0]));
    // NIfTI-2 stores an f64 slope: f64.
    let f = write("e.nii", base(Dtype::U8, 2, 0.5, 0.0), &Samples::U8(vec![1, 2, 3, 4]));
    assert_eq!(f.samples(), &Samples::F64(vec![0.5, 1.0, 1.5, 2.0]));
    // A valid slope with a non-finite intercept is an error, as in nibabel.
    let (b, e) = le_bytes(&i16s);
    let p = tmp.path().join("f.nii");
    std::fs::write(&p, base(Dtype::I16, 1, 2.0, f64::NAN).bytes(&b, e)).unwrap();
    assert!(open(&p, &OpenOptions::default()).unwrap_err().to_string().contains("scl_inter"));
}

#[test]
fn nifti_4d_picks_a_volume() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Samples::U8((0..16).collect());
    let (b, e) = le_bytes(&s);
    let n = Nifti {
        version: 1,
        big: false,
        dims: vec![2, 2, 2, 2],
        datatype: 2,
        slope: 0.0,
        inter: 0.0,
        pixdim: [1.0; 3],
    };
    let p = tmp.path().join("four.nii");
    std::fs::write(&p, n.bytes(&b, e)).unwrap();
    let first = read(&p);
    assert_eq!(first.samples(), &Samples::U8((0..8).collect()));
    assert_eq!(first.series, Some(topoview_core::field::Series { index: 0, count: 2 }));
    assert!(first.notes_with_series().iter().any(|n| n.contains("2 volumes") && n.contains("volume 0")));
    let second = open(&p, &OpenOptions { raw: None, volume: Some(1) }).unwrap();
    assert_eq!(second.samples(), &Samples::U8((8..16).collect()));
    assert!(
        open(&p, &OpenOptions { raw: None, volume: Some(2) }).unwrap_err().to_string().contains("2 volumes")
    );
}

#[test]
fn nifti_written_by_topoview_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let f = read(&data("nipy_some_blobs.nii"));
    let p = tmp.path().join("copy.nii");
    topoview_core::io::nifti::write_nifti1(&p, &f).unwrap();
    let g = read(&p);
    assert_eq!((g.samples(), g.shape(), g.spacing()), (f.samples(), f.shape(), f.spacing()));
}

#[test]
fn nrrd_attached_detached_gzip_ascii() {
    let tmp = tempfile::tempdir().unwrap();
    let emri = read(&data("pydicom_emri_small.nii.gz"));
    let (bytes, _) = le_bytes(emri.samples());
    let head = |enc: &str, extra: &str| {
        format!(
            "NRRD0004\n# a comment\ntype: unsigned short\ndimension: 3\nsizes: 64 64 10\nendian: little\nencoding: {enc}\nspace directions: (0.5,0,0) (0,0.5,0) (0,0,3)\nkey:=value\n{extra}"
        )
    };
    let p = tmp.path().join("a.nrrd");
    std::fs::write(&p, [head("raw", "\n").as_bytes(), &bytes].concat()).unwrap();
    let a = read(&p);
    assert_eq!(a.samples(), emri.samples());
    assert_eq!(a.spacing(), [0.5, 0.5, 3.0]);

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let gz = gz.finish().unwrap();
    std::fs::write(tmp.path().join("b.raw.gz"), &gz).unwrap();
    let p = tmp.path().join("b.nhdr");
    std::fs::write(&p, head("gzip", "data file: b.raw.gz\n")).unwrap();
    assert_eq!(read(&p).samples(), emri.samples());

    let p = tmp.path().join("c.nrrd");
    std::fs::write(&p, [head("raw", "byte skip: -1\n\n").as_bytes(), b"junk", &bytes].concat()).unwrap();
    assert_eq!(read(&p).samples(), emri.samples());

    let p = tmp.path().join("d.nrrd");
    std::fs::write(&p, "NRRD0004\ntype: float\ndimension: 2\nsizes: 3 2\nencoding: ascii\nspacings: 1.5 2\n\n1 2.5 -3\n4e2, 5 6\n").unwrap();
    let d = read(&p);
    assert_eq!(d.samples(), &Samples::F32(vec![1.0, 2.5, -3.0, 400.0, 5.0, 6.0]));
    assert_eq!(d.spacing(), [1.5, 2.0, 1.0]);
}

#[test]
fn metaimage_local_detached_and_compressed() {
    let tmp = tempfile::tempdir().unwrap();
    let emri = read(&data("pydicom_emri_small.nii.gz"));
    let (bytes, _) = le_bytes(emri.samples());
    let head = |extra: &str, file: &str| {
        format!(
            "ObjectType = Image\nNDims = 3\nDimSize = 64 64 10\nElementType = MET_USHORT\nElementSpacing = 1 1 2.5\nElementByteOrderMSB = False\n{extra}ElementDataFile = {file}\n"
        )
    };
    let p = tmp.path().join("a.mha");
    std::fs::write(&p, [head("", "LOCAL").as_bytes(), &bytes].concat()).unwrap();
    let a = read(&p);
    assert_eq!(a.samples(), emri.samples());
    assert_eq!(a.spacing(), [1.0, 1.0, 2.5]);

    std::fs::write(tmp.path().join("b.raw"), &bytes).unwrap();
    let p = tmp.path().join("b.mhd");
    std::fs::write(&p, head("", "b.raw")).unwrap();
    assert_eq!(read(&p).samples(), emri.samples());

    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&bytes).unwrap();
    let p = tmp.path().join("c.mha");
    std::fs::write(&p, [head("CompressedData = True\n", "LOCAL").as_bytes(), &z.finish().unwrap()].concat())
        .unwrap();
    assert_eq!(read(&p).samples(), emri.samples());

    // Big-endian samples.
    let be: Vec<u8> = bytes.chunks(2).flat_map(|c| [c[1], c[0]]).collect();
    let p = tmp.path().join("d.mha");
    std::fs::write(&p, [head("", "LOCAL").replace("MSB = False", "MSB = True").as_bytes(), &be].concat())
        .unwrap();
    assert_eq!(read(&p).samples(), emri.samples());
}

#[test]
fn raw_flags_offset_and_big_endian() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("x.bin");
    let mut b = vec![9u8; 5];
    for v in [1.5f32, -2.0, 3.25, 0.0, 7.0, 8.5] {
        b.extend(v.to_be_bytes());
    }
    std::fs::write(&p, &b).unwrap();
    let spec = RawSpec { dims: vec![3, 2], dtype: Dtype::F32, endian: Endian::Big, offset: 5 };
    let f = open(&p, &OpenOptions { raw: Some(spec.clone()), volume: None }).unwrap();
    assert_eq!(f.samples(), &Samples::F32(vec![1.5, -2.0, 3.25, 0.0, 7.0, 8.5]));
    let err = open(&p, &OpenOptions { raw: Some(RawSpec { offset: 4, ..spec }), volume: None }).unwrap_err();
    assert!(err.to_string().contains("raw size mismatch"), "{err}");
    assert!(open(&p, &OpenOptions::default()).unwrap_err().to_string().contains("--dims"));
}

#[test]
fn tiff_stacks_of_every_sample_type() {
    use tiff::encoder::{TiffEncoder, colortype};
    let tmp = tempfile::tempdir().unwrap();
    macro_rules! stack {
        ($name:expr, $ct:ty, $variant:ident, $vals:expr) => {{
            let vals = $vals;
            let p = tmp.path().join($name);
            let mut enc = TiffEncoder::new(std::fs::File::create(&p).unwrap()).unwrap();
            for page in vals.chunks(12) {
                enc.write_image::<$ct>(4, 3, page).unwrap();
            }
            drop(enc);
            let f = read(&p);
            assert_eq!(f.shape(), &[4, 3, vals.len() / 12], "{}", $name);
            assert_eq!(f.samples(), &Samples::$variant(vals.to_vec()), "{}", $name);
        }};
    }
    stack!("f32.tif", colortype::Gray32Float, F32, (0..24).map(|i| i as f32 * -0.5).collect::<Vec<_>>());
    stack!("f64.tif", colortype::Gray64Float, F64, (0..36).map(|i| i as f64 * 1e-3).collect::<Vec<_>>());
    stack!("i16.tif", colortype::GrayI16, I16, (0..24).map(|i| i as i16 * -1000).collect::<Vec<_>>());
    stack!("i8.tif", colortype::GrayI8, I8, (0..24).map(|i| i as i8 - 6).collect::<Vec<_>>());
    stack!("u16.tif", colortype::Gray16, U16, (0..24).map(|i| i as u16 * 2000).collect::<Vec<_>>());
    stack!("i32.tif", colortype::GrayI32, I32, (0..24).map(|i| i * -100000).collect::<Vec<_>>());
    stack!("u32.tif", colortype::Gray32, U32, (0..24).map(|i| i * 100000).collect::<Vec<_>>());
    // Pages of different sizes are refused.
    let p = tmp.path().join("mixed.tif");
    let mut enc = TiffEncoder::new(std::fs::File::create(&p).unwrap()).unwrap();
    enc.write_image::<colortype::Gray8>(2, 2, &[1, 2, 3, 4]).unwrap();
    enc.write_image::<colortype::Gray8>(1, 2, &[1, 2]).unwrap();
    drop(enc);
    assert!(
        open(&p, &OpenOptions::default()).unwrap_err().to_string().contains("pages of a stack must match")
    );
}

#[test]
fn png_16_bit_and_jpeg() {
    let tmp = tempfile::tempdir().unwrap();
    let vals: Vec<u16> = (0..35).map(|i| i * 1871).collect();
    let img = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(7, 5, vals.clone()).unwrap();
    let p = tmp.path().join("a.png");
    img.save(&p).unwrap();
    let f = read(&p);
    assert_eq!((f.shape(), f.samples()), (&[7, 5][..], &Samples::U16(vals)));
    let gray = image::GrayImage::from_fn(16, 8, |x, y| image::Luma([(x * 16 + y) as u8]));
    let p = tmp.path().join("b.jpg");
    gray.save(&p).unwrap();
    let f = read(&p);
    assert_eq!((f.shape(), f.dtype()), (&[16, 8][..], Dtype::U8));
}

#[test]
fn nifti_header_and_image_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Samples::I16(vec![5, -6, 7, -8, 9, -10]);
    let (b, e) = le_bytes(&s);
    let n = Nifti {
        version: 1,
        big: true,
        dims: vec![3, 2],
        datatype: 4,
        slope: 1.0,
        inter: 0.0,
        pixdim: [1.0; 3],
    };
    let mut file = n.bytes(&[], e);
    file.truncate(348);
    file[344..348].copy_from_slice(b"ni1\0");
    // A pair's data start vox_offset bytes into the .img: 0 here, as pairs are written.
    file[108..112].copy_from_slice(&0f32.to_be_bytes());
    std::fs::write(tmp.path().join("p.hdr"), &file).unwrap();
    let be: Vec<u8> = b.chunks(2).flat_map(|c| [c[1], c[0]]).collect();
    std::fs::write(tmp.path().join("p.img"), &be).unwrap();
    assert_eq!(read(&tmp.path().join("p.hdr")).samples(), &s);
    // vox_offset 16: 16 bytes of something else come first in the .img, and are skipped, as
    // nibabel skips them.
    file[108..112].copy_from_slice(&16f32.to_be_bytes());
    std::fs::write(tmp.path().join("q.hdr"), &file).unwrap();
    let junk: Vec<u8> = (0..16u8).map(|i| 0xA0 + i).chain(be.iter().copied()).collect();
    std::fs::write(tmp.path().join("q.img"), junk).unwrap();
    assert_eq!(read(&tmp.path().join("q.hdr")).samples(), &s);
    // A fractional vox_offset says what is wrong with it.
    file[108..112].copy_from_slice(&16.5f32.to_be_bytes());
    std::fs::write(tmp.path().join("r.hdr"), &file).unwrap();
    std::fs::write(tmp.path().join("r.img"), &be).unwrap();
    let err = open(&tmp.path().join("r.hdr"), &OpenOptions::default()).unwrap_err().to_string();
    assert!(err.contains("vox_offset 16.5 is not a whole number"), "{err}");
}
