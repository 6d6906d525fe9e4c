//! A field as a 3D texture: which texel format holds each sample type, how far a volume too
//! large for the GPU is subsampled, and the mask threshold in the texture's own type.

use eframe::egui_wgpu::wgpu;
use topoview_core::field::{Dtype, Samples, ScalarField};
use topoview_core::topo::ecc::Filtration;

/// The shader's view of a texel: compared as unsigned, signed or float numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexelClass {
    Uint,
    Sint,
    Float,
}

impl TexelClass {
    pub fn wgsl(self) -> &'static str {
        match self {
            TexelClass::Uint => "u32",
            TexelClass::Sint => "i32",
            TexelClass::Float => "f32",
        }
    }

    pub fn sample_type(self) -> wgpu::TextureSampleType {
        match self {
            TexelClass::Uint => wgpu::TextureSampleType::Uint,
            TexelClass::Sint => wgpu::TextureSampleType::Sint,
            TexelClass::Float => wgpu::TextureSampleType::Float { filterable: false },
        }
    }
}

/// Texture format of each sample type: the native width where the GPU has one, so integer data
/// are shown and masked exactly; f64 is shown as f32 (the only lossy case).
pub fn texel_format(dtype: Dtype) -> (wgpu::TextureFormat, TexelClass) {
    use wgpu::TextureFormat as F;
    match dtype {
        Dtype::U8 => (F::R8Uint, TexelClass::Uint),
        Dtype::I8 => (F::R8Sint, TexelClass::Sint),
        Dtype::U16 => (F::R16Uint, TexelClass::Uint),
        Dtype::I16 => (F::R16Sint, TexelClass::Sint),
        Dtype::U32 => (F::R32Uint, TexelClass::Uint),
        Dtype::I32 => (F::R32Sint, TexelClass::Sint),
        Dtype::F32 | Dtype::F64 => (F::R32Float, TexelClass::Float),
    }
}

/// How a field is laid out on the GPU: every `stride`-th voxel along each axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub stride: usize,
    pub dims: [usize; 3],
}

/// The smallest stride that fits `dims` into `max_dim` texels per axis and `max_bytes` in all.
pub fn layout(dims: [usize; 3], bytes_per_texel: usize, max_dim: usize, max_bytes: u64) -> Layout {
    let mut stride = 1;
    loop {
        let d = dims.map(|n| n.div_ceil(stride));
        let bytes = d.iter().map(|&n| n as u64).product::<u64>() * bytes_per_texel as u64;
        if d.iter().all(|&n| n <= max_dim) && bytes <= max_bytes {
            return Layout { stride, dims: d };
        }
        stride += 1;
    }
}

/// The texels of planes `z0..z1` of the layout, as bytes in the texture's format. Borrowed
/// straight from the field when no conversion or subsampling is needed.
pub fn slab_bytes<'a>(
    field: &'a ScalarField,
    lay: &Layout,
    z0: usize,
    z1: usize,
) -> std::borrow::Cow<'a, [u8]> {
    use std::borrow::Cow;
    let [nx, ny, _] = field.dims();
    let plane = nx * ny;
    if lay.stride == 1 {
        let r = z0 * plane..z1 * plane;
        return match field.samples() {
            Samples::U8(v) => Cow::Borrowed(bytemuck::cast_slice(&v[r])),
            Samples::I8(v) => Cow::Borrowed(bytemuck::cast_slice(&v[r])),
            Samples::U16(v) => Cow::Borrowed(bytemuck::cast_slice(&v[r])),
            Samples::I16(v) => Cow::Borrowed(bytemuck::cast_slice(&v[r])),
            Samples::U32(v) => Cow::Borrowed(bytemuck::cast_slice(&v[r])),
            Samples::I32(v) => Cow::Borrowed(bytemuck::cast_slice(&v[r])),
            Samples::F32(v) => Cow::Borrowed(bytemuck::cast_slice(&v[r])),
            Samples::F64(v) => Cow::Owned(v[r].iter().flat_map(|&x| (x as f32).to_ne_bytes()).collect()),
        };
    }
    fn pick<T: Copy>(v: &[T], lay: &Layout, nx: usize, ny: usize, z0: usize, z1: usize) -> Vec<T> {
        let s = lay.stride;
        let mut out = Vec::with_capacity(lay.dims[0] * lay.dims[1] * (z1 - z0));
        for z in z0..z1 {
            for y in 0..lay.dims[1] {
                let row = (z * s * ny + y * s) * nx;
                out.extend((0..lay.dims[0]).map(|x| v[row + x * s]));
            }
        }
        out
    }
    // Subsampled slabs are small (a GPU's texture limit); one more copy to bytes is cheap.
    fn bytes<T: bytemuck::Pod>(v: Vec<T>) -> Vec<u8> {
        bytemuck::cast_slice(&v).to_vec()
    }
    Cow::Owned(match field.samples() {
        Samples::U8(v) => pick(v, lay, nx, ny, z0, z1),
        Samples::I8(v) => bytes(pick(v, lay, nx, ny, z0, z1)),
        Samples::U16(v) => bytes(pick(v, lay, nx, ny, z0, z1)),
        Samples::I16(v) => bytes(pick(v, lay, nx, ny, z0, z1)),
        Samples::U32(v) => bytes(pick(v, lay, nx, ny, z0, z1)),
        Samples::I32(v) => bytes(pick(v, lay, nx, ny, z0, z1)),
        Samples::F32(v) => bytes(pick(v, lay, nx, ny, z0, z1)),
        Samples::F64(v) => {
            pick(v, lay, nx, ny, z0, z1).iter().flat_map(|&x| (x as f32).to_ne_bytes()).collect()
        }
    })
}

/// Shader mask modes (see `shaders/slice.wgsl`).
pub const MASK_OFF: u32 = 0;
pub const MASK_BELOW: u32 = 1;
pub const MASK_ABOVE: u32 = 2;
pub const MASK_ALL: u32 = 3;
/// Or'ed into a mode: the set's boundary is drawn too, opaque.
pub const MASK_OUTLINE: u32 = 4;

/// The shader's mask mode and threshold bits for "the sublevel (superlevel) set at `t`", in the
/// texel type of `class`: integer textures compare with the integer that selects exactly the
/// same samples as `t` does; a threshold beyond the type's range selects all or nothing.
pub fn mask_threshold(class: TexelClass, filtration: Filtration, t: f64) -> (u32, u32) {
    if t.is_nan() {
        return (MASK_OFF, 0);
    }
    let below = filtration == Filtration::Sublevel;
    let int = |lo: f64, hi: f64, bits: &dyn Fn(f64) -> u32| {
        let k = if below { t.floor() } else { t.ceil() };
        match (below, k < lo, k > hi) {
            (true, true, _) | (false, _, true) => (MASK_OFF, 0),
            (true, _, true) | (false, true, _) => (MASK_ALL, 0),
            _ => (if below { MASK_BELOW } else { MASK_ABOVE }, bits(k)),
        }
    };
    match class {
        TexelClass::Uint => int(0.0, u32::MAX as f64, &|k| k as u32),
        TexelClass::Sint => int(i32::MIN as f64, i32::MAX as f64, &|k| (k as i32) as u32),
        // The f32 on the safe side of t: the largest not above it for a sublevel set, the
        // smallest not below it for a superlevel one (f32 rounding to nearest could take in a
        // sample just beyond t: 0.1f32 > 0.1).
        TexelClass::Float => {
            let mut f = t as f32;
            if below && f as f64 > t {
                f = f.next_down();
            } else if !below && (f as f64) < t {
                f = f.next_up();
            }
            (if below { MASK_BELOW } else { MASK_ABOVE }, f.to_bits())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_subsamples_only_when_needed() {
        assert_eq!(layout([512, 512, 512], 1, 2048, 1 << 30), Layout { stride: 1, dims: [512; 3] });
        assert_eq!(layout([4097, 10, 10], 1, 2048, 1 << 30).stride, 3);
        assert_eq!(layout([1024; 3], 4, 2048, 1 << 30), Layout { stride: 2, dims: [512; 3] });
    }

    #[test]
    fn subsampled_slab_picks_every_stride_th_voxel() {
        let v: Vec<u16> = (0..5 * 4 * 3).collect();
        let f = ScalarField::new(&[5, 4, 3], Samples::U16(v)).unwrap();
        let lay = Layout { stride: 2, dims: [3, 2, 2] };
        let bytes = slab_bytes(&f, &lay, 0, 2);
        let got: Vec<u16> = bytemuck::pod_collect_to_vec(&bytes);
        // z = 0: rows y = 0, 2; z = 2 (slab index 1): the same rows 40 further on.
        assert_eq!(got, vec![0, 2, 4, 10, 12, 14, 40, 42, 44, 50, 52, 54]);
    }

    #[test]
    fn integer_masks_select_the_same_samples_as_the_threshold() {
        use Filtration::*;
        assert_eq!(mask_threshold(TexelClass::Uint, Sublevel, 12.0), (MASK_BELOW, 12));
        assert_eq!(mask_threshold(TexelClass::Uint, Sublevel, 12.7), (MASK_BELOW, 12));
        assert_eq!(mask_threshold(TexelClass::Uint, Superlevel, 12.2), (MASK_ABOVE, 13));
        assert_eq!(mask_threshold(TexelClass::Uint, Sublevel, -1.0), (MASK_OFF, 0));
        assert_eq!(mask_threshold(TexelClass::Uint, Superlevel, -1.0), (MASK_ALL, 0));
        assert_eq!(mask_threshold(TexelClass::Sint, Sublevel, -3.5), (MASK_BELOW, (-4i32) as u32));
        assert_eq!(mask_threshold(TexelClass::Sint, Sublevel, 3e9), (MASK_ALL, 0));
        assert_eq!(mask_threshold(TexelClass::Float, Superlevel, 0.5), (MASK_ABOVE, 0.5f32.to_bits()));
        assert_eq!(mask_threshold(TexelClass::Float, Superlevel, f64::NAN).0, MASK_OFF);
        // f32 samples are compared with the f32 on the safe side of an f64 threshold.
        let below = f32::from_bits(mask_threshold(TexelClass::Float, Sublevel, 0.1).1);
        assert!((below as f64) <= 0.1 && below.next_up() as f64 > 0.1);
        let above = f32::from_bits(mask_threshold(TexelClass::Float, Superlevel, 0.1).1);
        assert!((above as f64) >= 0.1 && (above.next_down() as f64) < 0.1);
        assert_eq!(f32::from_bits(mask_threshold(TexelClass::Float, Sublevel, 0.5).1), 0.5);
    }
}
