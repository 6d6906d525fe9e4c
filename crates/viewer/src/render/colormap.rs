//! Colormaps: 256-entry tables from matplotlib (see `scripts/colormaps.py`), looked up by the
//! slice shader from one small texture, one row per map.

use super::colormap_tables as t;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Colormap {
    Gray,
    Viridis,
    Magma,
    Inferno,
    /// Diverging blue-white-red (Moreland's cool-warm), for signed data centred on zero.
    CoolWarm,
    /// Categorical, for label maps: the slice shader colours sample k with entry k mod 256
    /// (no window), 0 and negative ids black; see [`label_colour`].
    Labels,
}

/// The colour of label `k` (1..=255; 0 is the background, black): hues a golden angle apart,
/// so consecutive ids (often neighbouring regions) differ strongly, with saturation and value
/// alternating so the hues that come round again still differ.
pub fn label_colour(k: usize) -> [u8; 3] {
    if k == 0 {
        return [0, 0, 0];
    }
    let hue = (k as f64 * 0.618_033_988_749_895).fract() * 6.0;
    let sat = if k.is_multiple_of(2) { 0.55 } else { 0.9 };
    let val = if (k / 2).is_multiple_of(2) { 1.0 } else { 0.8 };
    let c = val * sat;
    let x = c * (1.0 - (hue % 2.0 - 1.0).abs());
    let (r, g, b) = match hue as usize {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = val - c;
    [r, g, b].map(|v| ((v + m) * 255.0).round() as u8)
}

/// How far apart two colours look, roughly: RGB distance with red, green and blue weighted 2,
/// 4 and 3 (the eye tells greens apart best; a common quick approximation).
pub fn distance(a: [u8; 3], b: [u8; 3]) -> f32 {
    let d = |i: usize| a[i] as f32 - b[i] as f32;
    (2.0 * d(0) * d(0) + 4.0 * d(1) * d(1) + 3.0 * d(2) * d(2)).sqrt()
}

impl Colormap {
    pub const ALL: [Colormap; 6] = [
        Colormap::Gray,
        Colormap::Viridis,
        Colormap::Magma,
        Colormap::Inferno,
        Colormap::CoolWarm,
        Colormap::Labels,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Colormap::Gray => "gray",
            Colormap::Viridis => "viridis",
            Colormap::Magma => "magma",
            Colormap::Inferno => "inferno",
            Colormap::CoolWarm => "cool-warm (diverging)",
            Colormap::Labels => "labels (categorical)",
        }
    }

    /// The row of this map in the lookup texture.
    pub fn row(self) -> u32 {
        self as u32
    }

    /// The colour at `t` in [0, 1] (clamped), as the shader computes it.
    pub fn rgb(self, t: f32) -> [u8; 3] {
        let i = (t.clamp(0.0, 1.0) * 255.0 + 0.5) as usize;
        match self {
            Colormap::Gray => [i as u8; 3],
            Colormap::Viridis => t::VIRIDIS[i],
            Colormap::Magma => t::MAGMA[i],
            Colormap::Inferno => t::INFERNO[i],
            Colormap::CoolWarm => t::COOLWARM[i],
            Colormap::Labels => label_colour(i),
        }
    }

    /// The mask colour that stands out most against this map: of a few saturated candidates,
    /// the one farthest (in RGB, weighted by the eye's sensitivity) from the map's nearest
    /// colour. A red mask vanishes on cool-warm's red half and on magma's; this picks per map.
    pub fn contrasting(self) -> [u8; 3] {
        const CANDIDATES: [[u8; 3]; 9] = [
            [255, 255, 255],
            [255, 60, 40],
            [255, 150, 0],
            [255, 240, 0],
            [60, 255, 60],
            [0, 230, 255],
            [40, 90, 255],
            [255, 0, 255],
            [0, 255, 170],
        ];
        let nearest =
            |c: [u8; 3]| (0..256).map(|i| distance(c, self.rgb(i as f32 / 255.0))).fold(f32::MAX, f32::min);
        CANDIDATES.into_iter().max_by(|a, b| nearest(*a).total_cmp(&nearest(*b))).unwrap_or(CANDIDATES[0])
    }

    /// RGBA8 texels of the lookup texture: 256 wide, one row per map in [`Colormap::ALL`] order.
    pub fn lut_texels() -> Vec<u8> {
        let mut out = Vec::with_capacity(256 * 4 * Self::ALL.len());
        for map in Self::ALL {
            for i in 0..256 {
                let [r, g, b] = map.rgb(i as f32 / 255.0);
                out.extend_from_slice(&[r, g, b, 255]);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_matplotlib_endpoints() {
        // matplotlib 3.11: viridis(0) = (0.267004, 0.004874, 0.329415), viridis(1) =
        // (0.993248, 0.906157, 0.143936); coolwarm(0.5) = (0.8674, 0.8644, 0.8626).
        assert_eq!(Colormap::Viridis.rgb(0.0), [68, 1, 84]);
        assert_eq!(Colormap::Viridis.rgb(1.0), [253, 231, 37]);
        assert_eq!(Colormap::CoolWarm.rgb(0.5), [221, 220, 220]);
        assert_eq!(Colormap::Gray.rgb(0.5), [128; 3]);
    }

    /// The mask colour of each map stays well away from every colour of the map, and farther
    /// than the fixed red the viewer used before, which vanished on cool-warm and magma.
    #[test]
    fn the_mask_colour_stands_out_on_every_map() {
        let nearest = |m: Colormap, c: [u8; 3]| {
            (0..256).map(|i| distance(c, m.rgb(i as f32 / 255.0))).fold(f32::MAX, f32::min)
        };
        let red = [255, 89, 38];
        // The label palette spans every hue: its mask only needs to beat the old red.
        for m in Colormap::ALL.into_iter().filter(|&m| m != Colormap::Labels) {
            let c = m.contrasting();
            assert!(nearest(m, c) >= 150.0, "{}: {c:?} is {} from the map", m.name(), nearest(m, c));
            assert!(nearest(m, c) >= nearest(m, red), "{}", m.name());
        }
        let labels = Colormap::Labels;
        assert!(nearest(labels, labels.contrasting()) >= nearest(labels, red));
        assert!(nearest(Colormap::CoolWarm, red) < 100.0 && nearest(Colormap::Magma, red) < 100.0);
    }

    /// Consecutive ids and ids 2 apart look clearly different; none but 0 is black.
    #[test]
    fn label_colours_tell_neighbouring_ids_apart() {
        for k in 1..255 {
            assert!(distance(label_colour(k), label_colour(k + 1)) > 120.0, "{k}");
            assert!(distance(label_colour(k), [0, 0, 0]) > 200.0, "{k}");
        }
        let worst = (1..254).map(|k| distance(label_colour(k), label_colour(k + 2))).fold(f32::MAX, f32::min);
        assert!(worst > 60.0, "{worst}");
    }

    #[test]
    fn lut_rows_follow_all() {
        let lut = Colormap::lut_texels();
        assert_eq!(lut.len(), 256 * 4 * Colormap::ALL.len());
        // The slice shader knows the label row by number.
        assert_eq!(Colormap::Labels.row(), 5);
        let row = Colormap::Inferno.row() as usize;
        assert_eq!(&lut[row * 1024..row * 1024 + 3], &Colormap::Inferno.rgb(0.0));
    }
}
