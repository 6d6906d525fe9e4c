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
}

impl Colormap {
    pub const ALL: [Colormap; 5] =
        [Colormap::Gray, Colormap::Viridis, Colormap::Magma, Colormap::Inferno, Colormap::CoolWarm];

    pub fn name(self) -> &'static str {
        match self {
            Colormap::Gray => "gray",
            Colormap::Viridis => "viridis",
            Colormap::Magma => "magma",
            Colormap::Inferno => "inferno",
            Colormap::CoolWarm => "cool-warm (diverging)",
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
        }
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

    #[test]
    fn lut_rows_follow_all() {
        let lut = Colormap::lut_texels();
        assert_eq!(lut.len(), 256 * 4 * 5);
        let row = Colormap::Inferno.row() as usize;
        assert_eq!(&lut[row * 1024..row * 1024 + 3], &Colormap::Inferno.rgb(0.0));
    }
}
