//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod naive_gradient;

use topoview_core::field::{Dtype, Samples, ScalarField};

/// A field of `dtype` holding `vals` (already in range for the type), x fastest.
pub fn field_of(dtype: Dtype, dims: &[usize], vals: &[f64]) -> ScalarField {
    let s = Samples::from_f64(dtype, vals);
    ScalarField::new(dims, s).expect("valid test field")
}

/// Path of a file in `tests/data`.
pub fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// The first `edge` voxels along each axis of `f` (a corner crop), as an f64 field.
pub fn crop(f: &ScalarField, edge: usize) -> ScalarField {
    let d = f.dims();
    let e: Vec<usize> = f.shape().iter().map(|&n| n.min(edge)).collect();
    let [ex, ey, ez] = [e[0], *e.get(1).unwrap_or(&1), *e.get(2).unwrap_or(&1)];
    let mut v = Vec::with_capacity(ex * ey * ez);
    for z in 0..ez {
        for y in 0..ey {
            for x in 0..ex {
                v.push(f.samples().get_f64(x + d[0] * (y + d[1] * z)));
            }
        }
    }
    field_of(f.dtype(), &e, &v)
}

/// `n` pseudo-random values in `0..modulo` (xorshift), as f64.
pub fn xorshift_values(seed: u64, n: usize, modulo: u64) -> Vec<f64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % modulo) as f64
        })
        .collect()
}

/// Random 2D and 3D fields: edges `min_edge..=max_2d` (2D) or `..=max_3d` (3D), values drawn
/// from `levels` (few levels: many ties).
pub fn small_field(
    min_edge: usize,
    max_2d: usize,
    max_3d: usize,
    levels: Vec<f64>,
) -> impl proptest::strategy::Strategy<Value = (Vec<usize>, Vec<f64>)> {
    use proptest::prelude::*;
    (2usize..=3)
        .prop_flat_map(move |nd| {
            prop::collection::vec(min_edge..=(if nd == 3 { max_3d } else { max_2d }), nd)
        })
        .prop_flat_map(move |dims| {
            let n: usize = dims.iter().product();
            (Just(dims), prop::collection::vec(prop::sample::select(levels.clone()), n))
        })
}

/// A TIFF of `pages` deflated `w`x`h` 8-bit pages of zeros whose strips all point at the one
/// strip the file holds: each page decodes to `w * h` bytes, all of them together to far more
/// than the file could hold.
pub fn shared_strip_tiff(path: &std::path::Path, pages: u32, w: u32, h: u32) {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&vec![0u8; (w * h) as usize]).unwrap();
    let strip = z.finish().unwrap();
    let mut f = b"II*\0".to_vec();
    let strip_at = 8u32;
    let first_ifd = strip_at + strip.len() as u32;
    f.extend_from_slice(&first_ifd.to_le_bytes());
    f.extend_from_slice(&strip);
    let ifd_len = 2 + 9 * 12 + 4;
    for p in 0..pages {
        let entries: [(u16, u16, u32); 9] = [
            (256, 4, w),
            (257, 4, h),
            (258, 3, 8),
            (259, 3, 8), // deflate
            (262, 3, 1), // black is zero
            (273, 4, strip_at),
            (277, 3, 1),
            (278, 4, h),
            (279, 4, strip.len() as u32),
        ];
        f.extend_from_slice(&9u16.to_le_bytes());
        for (tag, ty, v) in entries {
            f.extend_from_slice(&tag.to_le_bytes());
            f.extend_from_slice(&ty.to_le_bytes());
            f.extend_from_slice(&1u32.to_le_bytes());
            if ty == 3 {
                f.extend_from_slice(&(v as u16).to_le_bytes());
                f.extend_from_slice(&[0, 0]);
            } else {
                f.extend_from_slice(&v.to_le_bytes());
            }
        }
        let next = if p + 1 < pages { first_ifd + (p + 1) * ifd_len } else { 0 };
        f.extend_from_slice(&next.to_le_bytes());
    }
    std::fs::write(path, f).unwrap();
}

/// Runs the `topoview` binary with `args`: (success, standard output, standard error).
pub fn topoview(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_topoview"))
        .args(args)
        .output()
        .expect("topoview runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The sorted barcode Ripser computed (`tests/data/rips/NAME.expected.csv`: dim,birth,death).
pub fn ripser_bars(name: &str) -> Vec<topoview_core::topo::rips::Bar> {
    let text = std::fs::read_to_string(data(&format!("rips/{name}.expected.csv"))).expect("expected bars");
    let mut bars: Vec<topoview_core::topo::rips::Bar> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |s: &str| s.parse::<f32>().expect("a number");
            topoview_core::topo::rips::Bar::new(f[0].parse().expect("a dimension"), num(f[1]), num(f[2]))
        })
        .collect();
    bars.sort_by(|a, b| (a.dim, a.birth, a.death).partial_cmp(&(b.dim, b.birth, b.death)).expect("no NaN"));
    bars
}
