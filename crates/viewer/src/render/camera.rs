//! The 3D view's camera: an orbit around a target in world coordinates (millimetres, the file's
//! affine), with the world's +z (superior in RAS data) up on screen when the camera is level.
//!
//! Matrices are row-major 4x4 `f64` (`m[row][col]`, acting on column vectors); the shader gets
//! the inverse of the whole index-to-clip transform as `f32`, and unprojects each pixel's ray
//! into voxel-index space with it.

pub use topoview_core::field::affine::{IDENTITY, Mat4, inverse, mul, transform_point};

/// Row-major `f64` to the column-major `f32` array WGSL's `mat4x4<f32>` expects.
pub fn to_gpu(m: &Mat4) -> [[f32; 4]; 4] {
    std::array::from_fn(|c| std::array::from_fn(|r| m[r][c] as f32))
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// The six views along the world axes, named by where the camera stands (RAS: right, left,
/// anterior, posterior, superior, inferior).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisView {
    Right,
    Left,
    Anterior,
    Posterior,
    Superior,
    Inferior,
}

impl AxisView {
    pub const ALL: [AxisView; 6] = [
        AxisView::Right,
        AxisView::Left,
        AxisView::Anterior,
        AxisView::Posterior,
        AxisView::Superior,
        AxisView::Inferior,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AxisView::Right => "R",
            AxisView::Left => "L",
            AxisView::Anterior => "A",
            AxisView::Posterior => "P",
            AxisView::Superior => "S",
            AxisView::Inferior => "I",
        }
    }

    /// Yaw and pitch in degrees. Views from above and below keep anterior up on screen.
    fn angles(self) -> (f64, f64) {
        match self {
            AxisView::Right => (0.0, 0.0),
            AxisView::Left => (180.0, 0.0),
            AxisView::Anterior => (90.0, 0.0),
            AxisView::Posterior => (-90.0, 0.0),
            AxisView::Superior => (-90.0, 90.0),
            AxisView::Inferior => (90.0, -90.0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Camera {
    /// The point orbited, in world coordinates.
    pub target: [f64; 3],
    /// Degrees about the world's z axis; 0 looks from +x.
    pub yaw: f64,
    /// Degrees above the horizontal plane, -90..=90.
    pub pitch: f64,
    /// From the eye to the target, in world units.
    pub distance: f64,
    /// Vertical field of view, degrees.
    pub fov: f64,
}

impl Default for Camera {
    fn default() -> Self {
        Camera { target: [0.0; 3], yaw: 60.0, pitch: 20.0, distance: 400.0, fov: 30.0 }
    }
}

impl Camera {
    /// A camera that frames a box of `radius` (half its diagonal) around `center`, from its
    /// current direction: the view's half-height at the target is 0.85 `radius`, since a box
    /// seen from any direction spans less than its diagonal.
    pub fn framing(&self, center: [f64; 3], radius: f64) -> Camera {
        let half = (self.fov.to_radians() / 2.0).tan();
        Camera { target: center, distance: 0.85 * radius.max(1e-9) / half, ..*self }
    }

    pub fn look_from(&mut self, view: AxisView) {
        (self.yaw, self.pitch) = view.angles();
    }

    /// The camera's right, up and back (from target to eye) directions in world coordinates.
    pub fn basis(&self) -> [[f64; 3]; 3] {
        let (y, p) = (self.yaw.to_radians(), self.pitch.to_radians());
        let back = [p.cos() * y.cos(), p.cos() * y.sin(), p.sin()];
        // Horizontal whatever the pitch, so looking straight down is as well defined as level.
        let right = [-y.sin(), y.cos(), 0.0];
        let up = cross(back, right);
        [right, up, back]
    }

    pub fn eye(&self) -> [f64; 3] {
        let b = self.basis()[2];
        std::array::from_fn(|i| self.target[i] + self.distance * b[i])
    }

    /// World to camera coordinates (the camera looks down its -z).
    pub fn view(&self) -> Mat4 {
        let [r, u, b] = self.basis();
        let e = self.eye();
        [
            [r[0], r[1], r[2], -dot(r, e)],
            [u[0], u[1], u[2], -dot(u, e)],
            [b[0], b[1], b[2], -dot(b, e)],
            [0.0, 0.0, 0.0, 1.0],
        ]
    }

    /// Camera to clip coordinates, wgpu's depth range 0..1, near and far planes around a scene
    /// of `radius` about `center` (not the target: the camera may have panned away from it).
    pub fn projection(&self, aspect: f64, center: [f64; 3], radius: f64) -> Mat4 {
        let f = 1.0 / (self.fov.to_radians() / 2.0).tan();
        let e = self.eye();
        let d = (0..3).map(|i| (e[i] - center[i]).powi(2)).sum::<f64>().sqrt();
        let far = d + 1.01 * radius.max(1e-9);
        let near = (d - 1.01 * radius).max(far * 1e-4);
        [
            [f / aspect.max(1e-9), 0.0, 0.0, 0.0],
            [0.0, f, 0.0, 0.0],
            [0.0, 0.0, far / (near - far), near * far / (near - far)],
            [0.0, 0.0, -1.0, 0.0],
        ]
    }

    /// Turns by a drag of (dx, dy) points: 0.4 degrees a point, pitch kept within +-90.
    pub fn orbit(&mut self, dx: f64, dy: f64) {
        self.yaw = (self.yaw - 0.4 * dx).rem_euclid(360.0);
        self.pitch = (self.pitch + 0.4 * dy).clamp(-90.0, 90.0);
    }

    /// Moves the target across the screen by a drag of (dx, dy) points in a view `height`
    /// points tall, so that the scene follows the pointer.
    pub fn pan(&mut self, dx: f64, dy: f64, height: f64) {
        let [r, u, _] = self.basis();
        let per_point = 2.0 * self.distance * (self.fov.to_radians() / 2.0).tan() / height.max(1.0);
        for i in 0..3 {
            self.target[i] += (-dx * r[i] + dy * u[i]) * per_point;
        }
    }

    /// Zooms by `factor` (> 1 comes closer).
    pub fn zoom(&mut self, factor: f64) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance / factor).max(1e-6);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        (0..3).all(|i| (a[i] - b[i]).abs() < 1e-9)
    }

    #[test]
    fn inverse_undoes_the_matrix() {
        let m: Mat4 =
            [[2.0, 0.5, 0.0, 3.0], [0.0, 1.0, -1.0, 2.0], [1.0, 0.0, 4.0, -1.0], [0.0, 0.0, 0.0, 1.0]];
        let i = inverse(&m).unwrap();
        let p = mul(&m, &i);
        for (r, row) in p.iter().enumerate() {
            for (c, &x) in row.iter().enumerate() {
                assert!((x - IDENTITY[r][c]).abs() < 1e-12, "{p:?}");
            }
        }
        let singular: Mat4 = [[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [0.0; 4], [0.0, 0.0, 0.0, 1.0]];
        assert!(inverse(&singular).is_none());
    }

    #[test]
    fn the_target_is_at_the_centre_of_the_screen_and_depth_is_ordered() {
        let cam = Camera { target: [10.0, -5.0, 3.0], yaw: 33.0, pitch: -12.0, distance: 50.0, fov: 30.0 };
        let vp = mul(&cam.projection(1.5, cam.target, 10.0), &cam.view());
        let c = transform_point(&vp, cam.target);
        assert!(c[0].abs() < 1e-9 && c[1].abs() < 1e-9 && c[2] > 0.0 && c[2] < 1.0, "{c:?}");
        // A point nearer the eye has a smaller depth.
        let b = cam.basis()[2];
        let near: [f64; 3] = std::array::from_fn(|i| cam.target[i] + 5.0 * b[i]);
        assert!(transform_point(&vp, near)[2] < c[2]);
        // The scene's sphere lies within the depth range.
        for s in [-9.9, 9.9] {
            let p: [f64; 3] = std::array::from_fn(|i| cam.target[i] + s * b[i]);
            let d = transform_point(&vp, p)[2];
            assert!((0.0..=1.0).contains(&d), "{d}");
        }
    }

    #[test]
    fn axis_views_look_along_the_axes_with_the_expected_up() {
        let mut cam = Camera { target: [0.0; 3], distance: 10.0, ..Default::default() };
        let cases = [
            (AxisView::Right, [10.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
            (AxisView::Left, [-10.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
            (AxisView::Anterior, [0.0, 10.0, 0.0], [0.0, 0.0, 1.0]),
            (AxisView::Posterior, [0.0, -10.0, 0.0], [0.0, 0.0, 1.0]),
            (AxisView::Superior, [0.0, 0.0, 10.0], [0.0, 1.0, 0.0]),
            (AxisView::Inferior, [0.0, 0.0, -10.0], [0.0, 1.0, 0.0]),
        ];
        for (v, eye, up) in cases {
            cam.look_from(v);
            assert!(close(cam.eye(), eye), "{v:?}: eye {:?}", cam.eye());
            assert!(close(cam.basis()[1], up), "{v:?}: up {:?}", cam.basis()[1]);
            // Right-handed: right x up = back.
            let [r, u, b] = cam.basis();
            assert!(close(cross(r, u), b));
        }
    }

    #[test]
    fn pan_follows_the_pointer_and_orbit_keeps_the_distance() {
        let mut cam = Camera { target: [0.0; 3], yaw: 0.0, pitch: 0.0, distance: 100.0, fov: 30.0 };
        let vp = |c: &Camera| mul(&c.projection(1.0, [0.0; 3], 10.0), &c.view());
        let before = transform_point(&vp(&cam), [0.0; 3]);
        // A drag of 100 points in a 400-point view is half the NDC half-width: the scene
        // moves with the pointer, to the right.
        cam.pan(100.0, 0.0, 400.0);
        let after = transform_point(&vp(&cam), [0.0; 3]);
        assert!((after[0] - before[0] - 0.5).abs() < 1e-9, "{before:?} {after:?}");
        cam.orbit(120.0, 500.0);
        assert_eq!(cam.pitch, 90.0);
        let e = cam.eye();
        let d: f64 = (0..3).map(|i| (e[i] - cam.target[i]).powi(2)).sum::<f64>().sqrt();
        assert!((d - 100.0).abs() < 1e-9);
        cam.zoom(2.0);
        assert!((cam.distance - 50.0).abs() < 1e-12);
        cam.zoom(f64::NAN);
        assert!((cam.distance - 50.0).abs() < 1e-12);
    }

    #[test]
    fn framing_fits_the_box_in_the_view() {
        let cam = Camera::default().framing([1.0, 2.0, 3.0], 100.0);
        let half = (cam.fov.to_radians() / 2.0).tan();
        assert!((cam.distance * half - 85.0).abs() < 1e-9);
        assert_eq!(cam.target, [1.0, 2.0, 3.0]);
    }
}
