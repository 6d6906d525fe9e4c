//! What the 3D view shows, as the ray marcher's uniform block: the camera and the file's affine
//! folded into one index-to-clip matrix, the clipping box, the slice planes, the mode and its
//! values. Pure arithmetic, so it is tested without a GPU.

use super::camera::{self, Camera, Mat4};
use super::volume::TexelClass;

/// Uniforms of the ray marcher; layout matches `Params` in `shaders/volume3d.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RayParams {
    pub inv_mvp: [[f32; 4]; 4],
    pub mvp: [[f32; 4]; 4],
    pub normal_mat: [[f32; 4]; 4],
    pub model: [[f32; 4]; 4],
    pub dims: [u32; 4],
    pub clip_min: [f32; 4],
    pub clip_max: [f32; 4],
    pub planes: [f32; 4],
    pub window: [f32; 4],
    pub iso: [f32; 4],
    pub mode: [u32; 4],
    pub threshold: [u32; 4],
    pub threshold_f: [f32; 4],
    pub surface: [f32; 4],
    pub surface2: [f32; 4],
    pub background: [f32; 4],
}

/// How the 3D view draws the volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    /// Direct volume rendering through the transfer function.
    Composite,
    MaxIntensity,
    MinIntensity,
    Isosurface,
    /// The ECC panel's threshold set, as a smooth surface.
    ThresholdSurface,
    /// The ECC panel's threshold set, as the boundary faces of its voxels: exactly the set
    /// the top-cell construction counts.
    ThresholdVoxels,
}

impl Mode {
    pub const ALL: [Mode; 6] = [
        Mode::Composite,
        Mode::MaxIntensity,
        Mode::MinIntensity,
        Mode::Isosurface,
        Mode::ThresholdSurface,
        Mode::ThresholdVoxels,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Composite => "composite",
            Mode::MaxIntensity => "maximum intensity",
            Mode::MinIntensity => "minimum intensity",
            Mode::Isosurface => "isosurface",
            Mode::ThresholdSurface => "threshold set (smooth)",
            Mode::ThresholdVoxels => "threshold set (voxels)",
        }
    }

    fn code(self) -> u32 {
        self as u32
    }
}

/// The ray step in voxels: 1 / samples per voxel, twice that while the camera moves.
pub fn step(samples_per_voxel: f32, moving: bool) -> f32 {
    let s = 1.0 / samples_per_voxel.clamp(0.25, 8.0);
    if moving { 2.0 * s } else { s }
}

/// Where the volume sits: field dims, the display stride of its texture, and the affine from
/// voxel indices (centres) to world coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    pub dims: [usize; 3],
    pub stride: usize,
    pub affine: Mat4,
}

impl Geometry {
    /// Index space (voxel i spans [i, i + 1)) to world: the affine applied to p - 0.5.
    pub fn model(&self) -> Mat4 {
        let shift =
            [[1.0, 0.0, 0.0, -0.5], [0.0, 1.0, 0.0, -0.5], [0.0, 0.0, 1.0, -0.5], [0.0, 0.0, 0.0, 1.0]];
        camera::mul(&self.affine, &shift)
    }

    /// The world-space centre of the volume and the radius of a sphere around it: the farthest
    /// corner from the centre (the four diagonals differ under a sheared affine).
    pub fn bounds(&self) -> ([f64; 3], f64) {
        let m = self.model();
        let n = self.dims.map(|d| d as f64);
        let center = camera::transform_point(&m, [n[0] / 2.0, n[1] / 2.0, n[2] / 2.0]);
        let r = (0..8)
            .map(|c| {
                let corner = [0, 1, 2].map(|a| if c >> a & 1 == 1 { n[a] } else { 0.0 });
                let p = camera::transform_point(&m, corner);
                (0..3).map(|i| (p[i] - center[i]).powi(2)).sum::<f64>().sqrt()
            })
            .fold(0.0, f64::max);
        (center, r.max(1e-9))
    }
}

/// Everything the user chose for the 3D view this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scene {
    pub camera: Camera,
    pub mode: Mode,
    /// Clipping box as fractions of each axis, low and high.
    pub clip: [[f32; 3]; 2],
    /// The crosshair voxel, when the slice planes are drawn.
    pub planes: Option<[usize; 3]>,
    pub window: (f64, f64),
    /// Ray step in voxels.
    pub step: f32,
    pub iso: f64,
    /// The second, translucent isosurface: value and opacity.
    pub iso2: Option<(f64, f32)>,
    /// Threshold-set modes: the mask mode and bits of [`super::volume::mask_threshold`], and
    /// the threshold itself.
    pub mask: (u32, u32),
    pub threshold: f64,
    /// Colour isosurfaces by the transfer function's colour at the surface, not `surface`.
    pub color_by_value: bool,
    /// First-hit modes: close the set where it meets the volume's or the clipping box (else
    /// only faces between the set and its complement are drawn, and a ray that starts inside
    /// the set shows where it leaves it).
    pub caps: bool,
    /// Voxels mode: colour each face by its component (the renderer's parts texture).
    pub parts: bool,
    pub surface: [f32; 3],
    pub background: [f32; 3],
    /// Changes every frame while the camera moves, so the sample jitter is not frozen in.
    pub frame: u32,
    pub skipping: bool,
}

impl Scene {
    /// The uniform block for a view of `aspect` (width / height) onto the volume `geo`, whose
    /// texture holds samples of `class`.
    pub fn params(&self, geo: &Geometry, class: TexelClass, aspect: f64) -> Option<RayParams> {
        let model = geo.model();
        let (center, radius) = geo.bounds();
        let vp = camera::mul(&self.camera.projection(aspect, center, radius), &self.camera.view());
        let mvp = camera::mul(&vp, &model);
        let inv = camera::inverse(&mvp)?;
        // Normals: the inverse transpose of the affine's linear part.
        let mut linear = geo.affine;
        for row in linear.iter_mut().take(3) {
            row[3] = 0.0;
        }
        let inv_linear = camera::inverse(&linear)?;
        let normal: Mat4 = std::array::from_fn(|r| std::array::from_fn(|c| inv_linear[c][r]));
        let n = geo.dims.map(|d| d as f32);
        let lo: [f32; 4] =
            [0, 1, 2, 3].map(|i| if i < 3 { self.clip[0][i].clamp(0.0, 1.0) * n[i] } else { 0.0 });
        let hi: [f32; 4] =
            [0, 1, 2, 3].map(|i| if i < 3 { self.clip[1][i].clamp(0.0, 1.0) * n[i] } else { 0.0 });
        let planes = match self.planes {
            Some(c) => [c[0] as f32 + 0.5, c[1] as f32 + 0.5, c[2] as f32 + 0.5, 1.0],
            None => [0.0; 4],
        };
        let (iso2, a2, on2) = self.iso2.map_or((0.0, 0.0, 0.0), |(v, a)| (v as f32, a, 1.0));
        // The smooth threshold surface of integer data lies halfway between the last integer
        // in the set and the first outside it, so voxel centres fall on the right side.
        let level = match (class, self.mask.0) {
            (TexelClass::Float, _) => self.threshold as f32,
            (_, super::volume::MASK_BELOW) => self.threshold.floor() as f32 + 0.5,
            (_, _) => self.threshold.ceil() as f32 - 0.5,
        };
        let rgb = |c: [f32; 3], a: f32| [c[0], c[1], c[2], a];
        Some(RayParams {
            inv_mvp: camera::to_gpu(&inv),
            mvp: camera::to_gpu(&mvp),
            normal_mat: camera::to_gpu(&normal),
            model: camera::to_gpu(&model),
            dims: [geo.dims[0] as u32, geo.dims[1] as u32, geo.dims[2] as u32, geo.stride as u32],
            clip_min: lo,
            clip_max: hi,
            planes,
            // Steps in voxels of the field; a subsampled texture has `stride` voxels per texel,
            // and the table's opacity is per texel then.
            window: [
                self.window.0 as f32,
                self.window.1 as f32,
                self.step.max(0.05) * geo.stride as f32,
                geo.stride as f32,
            ],
            iso: [self.iso as f32, iso2, a2, on2],
            mode: [self.mode.code(), self.mask.0, self.frame, self.skipping as u32],
            threshold: [self.mask.1, 0, 0, 0],
            threshold_f: [level, if self.caps { 1.0 } else { 0.0 }, if self.parts { 1.0 } else { 0.0 }, 0.0],
            surface: rgb(self.surface, if self.color_by_value { 0.0 } else { 1.0 }),
            surface2: [0.55, 0.75, 1.0, 1.0],
            background: rgb(self.background, 1.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene() -> Scene {
        Scene {
            camera: Camera::default(),
            mode: Mode::Composite,
            clip: [[0.0; 3], [1.0; 3]],
            planes: None,
            window: (0.0, 255.0),
            step: 0.5,
            iso: 100.0,
            iso2: None,
            mask: (super::super::volume::MASK_BELOW, 12),
            threshold: 12.3,
            color_by_value: false,
            caps: false,
            parts: false,
            surface: [1.0; 3],
            background: [0.0; 3],
            frame: 0,
            skipping: true,
        }
    }

    fn apply(m: &[[f32; 4]; 4], p: [f32; 3]) -> [f32; 3] {
        // Column-major: m[c][r].
        let v = [p[0], p[1], p[2], 1.0];
        let o: [f32; 4] = std::array::from_fn(|r| (0..4).map(|c| m[c][r] * v[c]).sum());
        [o[0] / o[3], o[1] / o[3], o[2] / o[3]]
    }

    #[test]
    fn params_match_the_wgsl_layout() {
        assert_eq!(std::mem::size_of::<RayParams>(), 448);
        assert_eq!(std::mem::offset_of!(RayParams, dims), 256);
        assert_eq!(std::mem::offset_of!(RayParams, mode), 352);
        assert_eq!(std::mem::offset_of!(RayParams, background), 432);
    }

    #[test]
    fn the_volume_centre_is_at_the_screen_centre_and_rays_unproject_into_index_space() {
        // An anisotropic, translated volume.
        let affine =
            [[2.0, 0.0, 0.0, -50.0], [0.0, 1.0, 0.0, 10.0], [0.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let geo = Geometry { dims: [40, 80, 20], stride: 1, affine };
        let (center, radius) = geo.bounds();
        assert_eq!(center, [-50.0 + 2.0 * 19.5, 10.0 + 39.5, 3.0 * 9.5]);
        // World extents 80 x 80 x 60 mm.
        assert!((radius - (80.0f64 * 80.0 * 2.0 + 60.0 * 60.0).sqrt() / 2.0).abs() < 1e-9);
        let mut s = scene();
        s.camera = s.camera.framing(center, radius);
        let p = s.params(&geo, TexelClass::Uint, 1.6).unwrap();
        // Index-space centre of the volume -> NDC (0, 0).
        let c = apply(&p.mvp, [20.0, 40.0, 10.0]);
        assert!(c[0].abs() < 1e-4 && c[1].abs() < 1e-4 && c[2] > 0.0 && c[2] < 1.0, "{c:?}");
        // And the inverse brings it back.
        let back = apply(&p.inv_mvp, c);
        assert!(
            (back[0] - 20.0).abs() < 1e-2 && (back[1] - 40.0).abs() < 1e-2 && (back[2] - 10.0).abs() < 1e-2
        );
        // Every corner of the box lies within the depth range.
        for corner in [[0.0, 0.0, 0.0], [40.0, 80.0, 20.0], [40.0, 0.0, 0.0], [0.0, 80.0, 20.0]] {
            let z = apply(&p.mvp, corner)[2];
            assert!((0.0..=1.0).contains(&z), "{corner:?}: {z}");
        }
    }

    #[test]
    fn normals_follow_the_inverse_transpose_of_the_affine() {
        // Voxels twice as long in x: a gradient along x is half as steep in world units.
        let affine = [[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
        let geo = Geometry { dims: [8, 8, 8], stride: 1, affine };
        let p = scene().params(&geo, TexelClass::Float, 1.0).unwrap();
        assert_eq!(p.normal_mat[0][0], 0.5);
        assert_eq!(p.normal_mat[1][1], 1.0);
        let singular = Geometry { affine: [[0.0; 4]; 4], ..geo };
        assert!(scene().params(&singular, TexelClass::Float, 1.0).is_none());
    }

    #[test]
    fn clip_box_and_smooth_threshold_level() {
        let geo = Geometry { dims: [10, 20, 30], stride: 2, affine: camera::IDENTITY };
        let mut s = scene();
        s.clip = [[0.1, -1.0, 0.5], [0.9, 2.0, 0.5]];
        let p = s.params(&geo, TexelClass::Uint, 1.0).unwrap();
        assert_eq!(&p.clip_min[..3], &[1.0, 0.0, 15.0]);
        assert_eq!(&p.clip_max[..3], &[9.0, 20.0, 15.0]);
        assert_eq!(p.dims, [10, 20, 30, 2]);
        // Sublevel set of integers at 12.3: {v <= 12}, surface at 12.5.
        assert_eq!(p.threshold_f[0], 12.5);
        s.mask = (super::super::volume::MASK_ABOVE, 13);
        assert_eq!(s.params(&geo, TexelClass::Sint, 1.0).unwrap().threshold_f[0], 12.5);
        assert_eq!(s.params(&geo, TexelClass::Float, 1.0).unwrap().threshold_f[0], 12.3);
    }
}
