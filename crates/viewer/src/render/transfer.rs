//! The transfer function of the 3D view: a colormap for colour and a piecewise-linear opacity
//! curve over the display window, both sampled into one 256-entry table the ray marcher reads.
//!
//! Control points sit at positions 0..=1 across the window (0 is the window's low end). The
//! first and last points are pinned to positions 0 and 1, so the curve always covers the whole
//! window; the user moves, adds and removes the points between them.

use super::colormap::Colormap;

/// Entries of the table the shader reads.
pub const TABLE: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    /// Position across the display window, 0..=1.
    pub x: f32,
    /// Opacity per voxel of ray, 0..=1.
    pub alpha: f32,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TransferFunction {
    /// Sorted by `x`; the first at 0, the last at 1.
    points: Vec<Point>,
}

impl Default for TransferFunction {
    fn default() -> Self {
        Preset::Ramp.function()
    }
}

/// Starting points for common data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Opacity rising linearly over the window.
    Ramp,
    /// Soft tissue faint, the brightest part (bone in CT) opaque.
    CtBone,
    /// Background clear, tissue of medium and high intensity translucent (T1 brain MRI).
    Mri,
    /// One band in the middle of the window: a soft isosurface.
    Band,
}

impl Preset {
    pub const ALL: [Preset; 4] = [Preset::Ramp, Preset::CtBone, Preset::Mri, Preset::Band];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Ramp => "ramp",
            Preset::CtBone => "CT bone",
            Preset::Mri => "MRI",
            Preset::Band => "band",
        }
    }

    pub fn function(self) -> TransferFunction {
        let p = |x: f32, alpha: f32| Point { x, alpha };
        let points = match self {
            Preset::Ramp => vec![p(0.0, 0.0), p(1.0, 0.35)],
            Preset::CtBone => vec![p(0.0, 0.0), p(0.55, 0.0), p(0.62, 0.02), p(0.75, 0.6), p(1.0, 0.9)],
            Preset::Mri => vec![p(0.0, 0.0), p(0.2, 0.0), p(0.35, 0.04), p(0.7, 0.12), p(1.0, 0.4)],
            Preset::Band => vec![p(0.0, 0.0), p(0.45, 0.0), p(0.5, 0.8), p(0.55, 0.0), p(1.0, 0.0)],
        };
        TransferFunction { points }
    }
}

impl TransferFunction {
    /// For signed data (a statistical map): clear around zero, at `zero` across the window,
    /// and rising towards both ends, so that the background of zeros is not a lit cube.
    pub fn both_tails(zero: f32) -> TransferFunction {
        const EDGE: f32 = 0.35;
        let z = if zero.is_finite() { zero.clamp(0.0, 1.0) } else { 0.5 };
        let (a, b) = ((z - 0.1).max(0.0), (z + 0.1).min(1.0));
        let p = |x: f32, alpha: f32| Point { x, alpha };
        let mut points = vec![p(0.0, if a > 0.0 { EDGE } else { 0.0 })];
        if a > 0.0 {
            points.push(p(a, 0.0));
        }
        if b < 1.0 {
            points.push(p(b, 0.0));
        }
        points.push(p(1.0, if b < 1.0 { EDGE } else { 0.0 }));
        TransferFunction { points }
    }

    pub fn points(&self) -> &[Point] {
        &self.points
    }

    /// Opacity at `x` (0..=1 across the window), linear between control points; constant
    /// beyond the ends.
    pub fn alpha(&self, x: f32) -> f32 {
        let pts = &self.points;
        let Some(first) = pts.first() else { return 0.0 };
        if x <= first.x {
            return first.alpha;
        }
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            if x <= b.x {
                let t = if b.x > a.x { (x - a.x) / (b.x - a.x) } else { 1.0 };
                return a.alpha + t * (b.alpha - a.alpha);
            }
        }
        pts.last().map_or(0.0, |p| p.alpha)
    }

    /// Moves point `i` to (x, alpha), clamped between its neighbours (the end points keep
    /// their positions and change only their opacity); returns its index (unchanged).
    pub fn move_point(&mut self, i: usize, x: f32, alpha: f32) -> usize {
        let n = self.points.len();
        if i >= n || !x.is_finite() || !alpha.is_finite() {
            return i;
        }
        let alpha = alpha.clamp(0.0, 1.0);
        let x = if i == 0 {
            0.0
        } else if i + 1 == n {
            1.0
        } else {
            x.clamp(self.points[i - 1].x, self.points[i + 1].x)
        };
        self.points[i] = Point { x, alpha };
        i
    }

    /// Adds a point at (x, alpha) in order; returns its index (None for a non-finite point).
    pub fn insert(&mut self, x: f32, alpha: f32) -> Option<usize> {
        if !x.is_finite() || !alpha.is_finite() {
            return None;
        }
        let x = x.clamp(0.0, 1.0);
        // Strictly inside: the pinned ends stay first and last.
        let i = self.points.iter().position(|p| p.x > x).unwrap_or(self.points.len() - 1).max(1);
        self.points.insert(i, Point { x, alpha: alpha.clamp(0.0, 1.0) });
        Some(i)
    }

    /// Removes point `i` unless it is one of the two pinned ends.
    pub fn remove(&mut self, i: usize) -> bool {
        if i == 0 || i + 1 >= self.points.len() {
            return false;
        }
        self.points.remove(i);
        true
    }

    /// Brings points loaded from settings back to a valid curve: sorted, in range, ends pinned.
    pub fn sanitize(&mut self) {
        self.points.retain(|p| p.x.is_finite() && p.alpha.is_finite());
        for p in &mut self.points {
            p.x = p.x.clamp(0.0, 1.0);
            p.alpha = p.alpha.clamp(0.0, 1.0);
        }
        self.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        if self.points.len() < 2 {
            *self = TransferFunction::default();
            return;
        }
        self.points[0].x = 0.0;
        let n = self.points.len();
        self.points[n - 1].x = 1.0;
    }

    /// The table the shader reads: entry k is the colour of `colormap` and the opacity of this
    /// curve at the window position k / 255, as RGBA bytes (colour in the colormap's sRGB).
    pub fn table(&self, colormap: Colormap) -> Vec<[u8; 4]> {
        (0..TABLE)
            .map(|k| {
                let x = k as f32 / (TABLE - 1) as f32;
                let [r, g, b] = colormap.rgb(x);
                [r, g, b, (self.alpha(x) * 255.0).round() as u8]
            })
            .collect()
    }

    /// For each table entry k, how many entries 0..=k have opacity above zero: a range of
    /// entries is wholly transparent when the count does not change across it, which is how
    /// the ray marcher skips empty bricks in one lookup.
    pub fn visible_prefix(table: &[[u8; 4]]) -> Vec<u32> {
        table
            .iter()
            .scan(0u32, |n, e| {
                *n += (e[3] > 0) as u32;
                Some(*n)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opacity_is_linear_between_points_and_constant_beyond() {
        let tf = Preset::Band.function();
        assert_eq!(tf.alpha(0.2), 0.0);
        assert!((tf.alpha(0.5) - 0.8).abs() < 1e-6);
        assert!((tf.alpha(0.475) - 0.4).abs() < 1e-5);
        assert_eq!(tf.alpha(-1.0), 0.0);
        let ramp = Preset::Ramp.function();
        assert!((ramp.alpha(0.5) - 0.175).abs() < 1e-6);
        assert!((ramp.alpha(3.0) - 0.35).abs() < 1e-6);
    }

    #[test]
    fn editing_keeps_the_points_ordered_and_the_ends_pinned() {
        let mut tf = Preset::Ramp.function();
        assert_eq!(tf.insert(f32::NAN, 0.5), None);
        tf.move_point(0, 0.0, f32::NAN);
        assert_eq!(tf.points()[0].alpha, 0.0);
        let i = tf.insert(0.4, 0.9);
        assert_eq!(i, Some(1));
        assert_eq!(tf.points().len(), 3);
        // A middle point cannot pass its neighbours.
        tf.move_point(1, 1.5, 2.0);
        assert_eq!(tf.points()[1], Point { x: 1.0, alpha: 1.0 });
        tf.move_point(1, 0.3, 0.5);
        // The ends move only up and down.
        tf.move_point(0, 0.7, 0.2);
        assert_eq!(tf.points()[0], Point { x: 0.0, alpha: 0.2 });
        assert!(!tf.remove(0) && !tf.remove(2));
        assert!(tf.remove(1));
        assert_eq!(tf.points().len(), 2);
        // Inserting at an end lands inside.
        assert_eq!(tf.insert(0.0, 0.5), Some(1));
        assert_eq!(tf.insert(1.0, 0.5), Some(2));
        let xs: Vec<f32> = tf.points().iter().map(|p| p.x).collect();
        assert!(xs.windows(2).all(|w| w[0] <= w[1]), "{xs:?}");
        assert_eq!((xs[0], xs[xs.len() - 1]), (0.0, 1.0));
    }

    #[test]
    fn sanitize_repairs_stored_curves() {
        let mut tf = TransferFunction {
            points: vec![
                Point { x: 0.8, alpha: 3.0 },
                Point { x: f32::NAN, alpha: 0.0 },
                Point { x: 0.2, alpha: 0.1 },
            ],
        };
        tf.sanitize();
        assert_eq!(tf.points(), &[Point { x: 0.0, alpha: 0.1 }, Point { x: 1.0, alpha: 1.0 }]);
        let mut empty = TransferFunction { points: vec![] };
        empty.sanitize();
        assert_eq!(empty, TransferFunction::default());
    }

    #[test]
    fn the_table_carries_colormap_colour_and_curve_opacity() {
        let tf = Preset::Band.function();
        let t = tf.table(Colormap::Gray);
        assert_eq!(t.len(), TABLE);
        assert_eq!(t[0], [0, 0, 0, 0]);
        assert_eq!(t[128][3], (tf.alpha(128.0 / 255.0) * 255.0).round() as u8);
        let prefix = TransferFunction::visible_prefix(&t);
        // Transparent below the band: no visible entry up to 0.45.
        assert_eq!(prefix[100], 0);
        assert!(prefix[128] > 0);
        // And nothing new after it.
        assert_eq!(prefix[200], prefix[255]);
        // Brute force: a range is transparent exactly when every entry in it is.
        for (a, b) in [(0, 100), (100, 140), (150, 255), (128, 128)] {
            let brute = t[a..=b].iter().all(|e| e[3] == 0);
            let before = if a == 0 { 0 } else { prefix[a - 1] };
            assert_eq!(prefix[b] == before, brute, "{a}..={b}");
        }
    }
}
