//! What the viewer remembers between runs (through eframe's storage).

use crate::render::camera::Camera;
use crate::render::colormap::Colormap;
use crate::render::scene3d::Mode;
use crate::render::transfer::TransferFunction;
use std::path::PathBuf;
use topoview_core::topo::ecc::{Construction, Filtration};

const MAX_RECENT: usize = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Layout {
    /// One view along the given display axis (0: sagittal, 1: coronal, 2: axial; the world's
    /// R, A, S for a volume with an affine, voxel x, y, z otherwise).
    Single(usize),
    /// Axial, coronal and sagittal views and the 3D view, 2x2.
    Grid,
    /// The 3D view alone.
    Volume,
}

/// What the 3D view remembers: how it draws, the transfer function, the camera's direction
/// and field of view (its target and distance follow each new volume), planes and clipping.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct View3dSettings {
    pub mode: Mode,
    pub transfer: TransferFunction,
    pub camera: Camera,
    pub planes: bool,
    /// Clipping box as fractions of each axis: low corner, high corner.
    pub clip: [[f32; 3]; 2],
    /// Isosurfaces coloured through the transfer function's colours instead of one colour.
    pub color_by_value: bool,
    /// The second, translucent isosurface and its opacity.
    pub second_surface: bool,
    pub second_opacity: f32,
    /// Skip bricks that cannot contribute (off only to compare).
    pub skipping: bool,
    /// Surfaces closed where the set meets the box (see [`crate::render::scene3d::Scene::caps`]).
    pub caps: bool,
    /// Ray samples per voxel when the camera is still (half as many while it moves).
    pub samples_per_voxel: f32,
}

impl Default for View3dSettings {
    fn default() -> Self {
        View3dSettings {
            mode: Mode::Composite,
            transfer: TransferFunction::default(),
            camera: Camera::default(),
            planes: false,
            clip: [[0.0; 3], [1.0; 3]],
            color_by_value: false,
            second_surface: false,
            second_opacity: 0.3,
            skipping: true,
            caps: false,
            samples_per_voxel: 1.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    pub last_dir: Option<PathBuf>,
    pub recent: Vec<PathBuf>,
    pub colormap: Colormap,
    pub layout: Layout,
    #[serde(with = "construction_name")]
    pub construction: Construction,
    pub superlevel: bool,
    pub mask_opacity: f32,
    /// The mask's colour; None: the colour that stands out most on the colormap.
    pub mask_color: Option<[u8; 3]>,
    /// The threshold set's boundary drawn over the slices, opaque.
    pub mask_outline: bool,
    /// File > Open and the exports use topoview's own dialog, not the desktop's.
    pub builtin_dialogs: bool,
    /// Each curve of the ECC plot divided by its largest |value|.
    pub normalise_curves: bool,
    /// Slices of volumes with an affine show the subject's right on the screen's left (as
    /// radiologists read them) instead of on the right (neurological).
    pub radiological: bool,
    /// Seed, edge length and correlation length of the last generated example field.
    pub grf: GrfSettings,
    pub view3d: View3dSettings,
    /// Each analysis's own settings, by its key ([`super::analyses::Analysis::settings`]):
    /// gathered from the units when saved, given back to them when read.
    pub analyses: std::collections::BTreeMap<String, serde_json::Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct GrfSettings {
    pub size: usize,
    pub three_d: bool,
    pub corr: f64,
    pub seed: u64,
}

impl Default for GrfSettings {
    fn default() -> Self {
        GrfSettings { size: 128, three_d: true, corr: 4.0, seed: 1 }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            last_dir: None,
            recent: Vec::new(),
            colormap: Colormap::Gray,
            layout: Layout::Grid,
            construction: Construction::TopCells,
            superlevel: false,
            mask_opacity: 0.45,
            mask_color: None,
            mask_outline: false,
            radiological: false,
            normalise_curves: false,
            builtin_dialogs: false,
            grf: GrfSettings::default(),
            view3d: View3dSettings::default(),
            analyses: Default::default(),
        }
    }
}

impl Settings {
    /// The mask's colour on the colormap in use.
    pub fn mask_rgb(&self) -> [u8; 3] {
        self.mask_color.unwrap_or_else(|| self.colormap.contrasting())
    }

    pub fn filtration(&self) -> Filtration {
        if self.superlevel { Filtration::Superlevel } else { Filtration::Sublevel }
    }

    /// Puts `path` first in the recent list and remembers its folder.
    pub fn opened(&mut self, path: &std::path::Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_path_buf());
        self.recent.truncate(MAX_RECENT);
        self.last_dir = path.parent().map(|p| p.to_path_buf());
    }
}

/// The analyses' settings as a build before the analyses kept their own stored them in eframe's
/// storage, beside the others: read once at start and moved under [`Settings::analyses`] (by the
/// same keys), so that an upgrade keeps them.
#[derive(Default, serde::Deserialize)]
pub struct LegacyAnalysisSettings {
    // Present or not (RON writes a struct where an `Option` would be `Some(..)`).
    #[serde(default, deserialize_with = "present")]
    msc: Option<super::analyses::msc::MscSettings>,
    #[serde(default, deserialize_with = "present")]
    cracks: Option<super::analyses::cracks::CrackSettings>,
    #[serde(default, deserialize_with = "present")]
    explain: Option<super::analyses::explain::ExplainSettings>,
    #[serde(default, deserialize_with = "present")]
    scale_space: Option<super::analyses::scale_space::ScaleSpaceSettings>,
}

/// A field that is there, read as its type.
fn present<'de, D: serde::Deserializer<'de>, T: serde::Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

impl LegacyAnalysisSettings {
    /// Puts each into `analyses` under its key, unless a newer one is there.
    pub fn move_into(self, analyses: &mut std::collections::BTreeMap<String, serde_json::Value>) {
        let mut put = |key: &str, v: Option<serde_json::Value>| {
            if let Some(v) = v {
                analyses.entry(key.to_string()).or_insert(v);
            }
        };
        put("msc", self.msc.and_then(|v| serde_json::to_value(v).ok()));
        put("cracks", self.cracks.and_then(|v| serde_json::to_value(v).ok()));
        put("explain", self.explain.and_then(|v| serde_json::to_value(v).ok()));
        put("scale_space", self.scale_space.and_then(|v| serde_json::to_value(v).ok()));
    }
}

mod construction_name {
    use serde::{Deserialize, Deserializer, Serializer};
    use topoview_core::topo::ecc::Construction;

    pub fn serialize<S: Serializer>(c: &Construction, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(c.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Construction, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_tolerate_missing_fields() {
        let mut s = Settings::default();
        s.opened(std::path::Path::new("/data/a.nii"));
        s.opened(std::path::Path::new("/data/b.nii"));
        s.opened(std::path::Path::new("/data/a.nii"));
        s.construction = Construction::Vertices;
        assert_eq!(s.recent[0], PathBuf::from("/data/a.nii"));
        assert_eq!(s.recent.len(), 2);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), s);
        let partial: Settings = serde_json::from_str(r#"{"colormap":"Magma"}"#).unwrap();
        assert_eq!(partial.colormap, Colormap::Magma);
        assert_eq!(partial.layout, Layout::Grid);
        // The 3D view's choices come back too.
        let mut s = Settings::default();
        s.view3d.mode = Mode::Isosurface;
        s.view3d.transfer = crate::render::transfer::Preset::CtBone.function();
        s.view3d.camera.yaw = 12.5;
        s.layout = Layout::Volume;
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), s);
    }

    /// Settings an older build stored in eframe's storage (RON), with the analyses' beside the
    /// others, reach the units.
    #[test]
    fn an_older_builds_stored_settings_reach_the_units() {
        use crate::app::analyses::{Analyses, cracks::CrackSettings, msc::MscSettings};
        #[derive(serde::Serialize)]
        struct Older {
            colormap: Colormap,
            msc: MscSettings,
            cracks: CrackSettings,
        }
        let msc = MscSettings { auto_voxels: 5_000_000, slab: 4, ..Default::default() };
        let cracks = CrackSettings { min_fraction: 0.55, closed: true, ..Default::default() };
        let older = Older { colormap: Colormap::Magma, msc: msc.clone(), cracks: cracks.clone() };
        let text = ron::ser::to_string_pretty(&older, ron::ser::PrettyConfig::default()).unwrap();
        let mut settings: Settings = ron::from_str(&text).unwrap();
        assert_eq!(settings.colormap, Colormap::Magma);
        assert!(settings.analyses.is_empty());
        ron::from_str::<LegacyAnalysisSettings>(&text).unwrap().move_into(&mut settings.analyses);
        let mut units = Analyses::default();
        units.restore_settings(&settings.analyses);
        assert_eq!((units.msc.settings, units.cracks.settings), (msc, cracks));
    }
}
