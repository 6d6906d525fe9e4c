#![no_main]
//! The gzip and zlib paths: a `.nii.gz`, a gzip-encoded NRRD (one or two members) or a
//! zlib-compressed `.mha` whose header is valid and whose compressed stream is built from the
//! input, then damaged by the input: bytes flipped, the stream cut short, garbage appended.
//! Random bytes rarely get past the gzip framing; this reaches the CRC and length checks, the
//! inflation bound and the truncation errors.
use flate2::Compression;
use flate2::write::{GzEncoder, ZlibEncoder};
use libfuzzer_sys::fuzz_target;
use std::io::Write;

struct Bytes<'a>(&'a [u8]);
impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else { return 0 };
        self.0 = rest;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut z = GzEncoder::new(Vec::new(), Compression::fast());
    z.write_all(data).expect("in memory");
    z.finish().expect("in memory")
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::fast());
    z.write_all(data).expect("in memory");
    z.finish().expect("in memory")
}

/// A NIfTI-1 single-file header (348 bytes + 4 extension bytes) for `dims` of `datatype`.
fn nifti_header(dims: [u16; 3], datatype: i16, bitpix: i16) -> Vec<u8> {
    let mut h = vec![0u8; 352];
    h[0..4].copy_from_slice(&348i32.to_le_bytes());
    let dim = [3i16, dims[0] as i16, dims[1] as i16, dims[2] as i16, 1, 1, 1, 1];
    for (i, d) in dim.iter().enumerate() {
        h[40 + 2 * i..42 + 2 * i].copy_from_slice(&d.to_le_bytes());
    }
    h[70..72].copy_from_slice(&datatype.to_le_bytes());
    h[72..74].copy_from_slice(&bitpix.to_le_bytes());
    for i in 0..8 {
        h[76 + 4 * i..80 + 4 * i].copy_from_slice(&1f32.to_le_bytes());
    }
    h[108..112].copy_from_slice(&352f32.to_le_bytes());
    h[344..348].copy_from_slice(b"n+1\0");
    h
}

fn build(data: &[u8]) -> (&'static str, Vec<u8>) {
    let mut b = Bytes(data);
    let kind = b.u8() % 4;
    let ty = (b.u8() % 3) as usize;
    let dims = [1 + (b.u8() % 16) as u16, 1 + (b.u8() % 16) as u16, 1 + (b.u8() % 16) as u16];
    let damage: Vec<(u8, u16, u8)> = (0..b.u8() % 4).map(|_| (b.u8() % 3, b.u16(), b.u8())).collect();
    let payload = b.0;
    let (nifti_type, bitpix, nrrd_type, met_type) =
        [(2i16, 8i16, "uint8", "MET_UCHAR"), (4, 16, "int16", "MET_SHORT"), (16, 32, "float", "MET_FLOAT")][ty];
    let sizes = format!("{} {} {}", dims[0], dims[1], dims[2]);
    let (ext, head, mut stream) = match kind {
        0 => {
            let mut whole = nifti_header(dims, nifti_type, bitpix);
            whole.extend_from_slice(payload);
            ("nii.gz", Vec::new(), gzip(&whole))
        }
        1 | 2 => {
            let head = format!(
                "NRRD0004\ntype: {nrrd_type}\ndimension: 3\nsizes: {sizes}\nencoding: gzip\nendian: little\n\n"
            );
            // Two gzip members, as `cat a.gz b.gz` makes: both must be read and checked.
            let stream = if kind == 2 {
                let (a, c) = payload.split_at(payload.len() / 2);
                [gzip(a), gzip(c)].concat()
            } else {
                gzip(payload)
            };
            ("nrrd", head.into_bytes(), stream)
        }
        _ => {
            let stream = zlib(payload);
            let head = format!(
                "ObjectType = Image\nNDims = 3\nDimSize = {sizes}\nElementType = {met_type}\n\
                 CompressedData = True\nCompressedDataSize = {}\nElementDataFile = LOCAL\n",
                stream.len()
            );
            ("mha", head.into_bytes(), stream)
        }
    };
    for (op, at, x) in damage {
        let len = stream.len().max(1);
        match op {
            0 if !stream.is_empty() => stream[at as usize % len] ^= x.max(1),
            1 => stream.truncate(at as usize % len),
            _ => stream.extend(std::iter::repeat_n(x, 1 + at as usize % 64)),
        }
    }
    (ext, [head, stream].concat())
}

fuzz_target!(|data: &[u8]| {
    let (ext, file) = build(data);
    let dir = std::env::temp_dir().join(format!("topoview-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("f.{ext}"));
    if std::fs::write(&path, &file).is_ok() {
        if let Ok(field) = topoview_core::io::open(&path, &Default::default()) {
            let _ = topoview_core::topo::ecc::ecc(&field, &Default::default(), &Default::default());
        }
    }
});
