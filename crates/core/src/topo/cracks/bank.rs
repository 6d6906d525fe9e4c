//! Filter banks as data: each kernel a list of (pixel offset, weight) per crack family, as the
//! paper stores them, so a bank can be written out, edited and loaded again. Offsets are
//! relative to the crack's first pixel: `(x, y)` for both `h(x, y)` (the other pixel is
//! `(x, y + 1)`) and `v(x, y)` (the other is `(x + 1, y)`). Applied directly, tap by tap (the
//! Gaussian bank's fast path is its separable form, [`super::cracks`]).

use super::separable::gaussian_1d;
use super::{CrackError, CrackMap, CrackOptions, Family, Image, check_image};
use crate::control::Control;
use rayon::prelude::*;

/// One weight at a pixel offset.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tap(pub i32, pub i32, pub f32);

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Kernel {
    pub name: String,
    /// Whether the kernel measures an edge: a crack's strength is the largest energy over the
    /// bank's edge kernels.
    #[serde(default)]
    pub edge: bool,
    /// The orientation of its normal (radians) and its scale, reported where it wins.
    #[serde(default)]
    pub angle: Option<f64>,
    #[serde(default)]
    pub scale: Option<f64>,
    pub h: Vec<Tap>,
    pub v: Vec<Tap>,
}

impl Kernel {
    pub fn taps(&self, f: Family) -> &[Tap] {
        match f {
            Family::H => &self.h,
            Family::V => &self.v,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bank {
    /// "topoview crack bank 1".
    pub format: String,
    pub kernels: Vec<Kernel>,
}

pub const FORMAT: &str = "topoview crack bank 1";

/// The largest bank accepted: taps over all kernels and both families.
pub const MAX_TAPS: usize = 1 << 24;

/// The most multiply-adds a bank may take on one image (every tap at every crack of every
/// channel): about 2^40, some 20 minutes at the 0.9 G a second measured on 16 cores. A bank of
/// 8 million taps a family on a 300x300 image (1.4 x 10^12) is refused at once.
pub const MAX_WORK: u64 = 1 << 40;

/// Angles that differ by less than this are one orientation: a bank written by hand with
/// 1.5707963 for pi/2 (2.7e-8 off) names the normal of the vertical cracks.
const ANGLE_TOLERANCE: f64 = 1e-6;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BankError {
    #[error("not a crack bank: {0}")]
    Json(String),
    #[error("the bank's format is '{0}', not '{FORMAT}'")]
    Format(String),
    #[error("the bank has no kernels")]
    Empty,
    #[error("kernel '{0}': {1}")]
    Kernel(String, String),
    #[error("the bank holds {0} taps, more than {MAX_TAPS} (use smaller scales)")]
    TooLarge(usize),
    #[error("no edge kernel has the normal of the {0} cracks ({1} degrees): their strength is not defined")]
    NoNormal(char, f64),
    #[error(
        "the bank's {taps} taps on {pixels} pixels of {channels} channel(s) are {work:.2e} multiply-adds, \
         more than the {:.2e} allowed (about 20 minutes on 16 cores): use fewer or smaller kernels, or a \
         smaller image", MAX_WORK as f64
    )]
    TooMuchWork { taps: usize, pixels: usize, channels: usize, work: f64 },
}

impl Bank {
    /// The Gaussian bank of `opts`, every kernel sampled directly (not steered): per scale,
    /// `D1` at each orientation (edge kernels) then `D2` at each.
    pub fn gaussian(opts: &CrackOptions) -> Result<Bank, CrackError> {
        opts.check()?;
        // Counted before anything is built: a wide scale makes millions of taps.
        let taps: usize = opts
            .scales
            .iter()
            .map(|&s| opts.radius(s))
            .map(|r| 2 * 2 * opts.orientations * 2 * (2 * r + 1) * 2 * r)
            .sum();
        if taps > MAX_TAPS {
            return Err(BankError::TooLarge(taps).into());
        }
        let mut kernels = Vec::new();
        for &s in &opts.scales {
            let r = opts.radius(s) as i32;
            for order in [1, 2] {
                for k in 0..opts.orientations {
                    let t = opts.angle(k);
                    let (c, sn) = (t.cos(), t.sin());
                    let weight = |px: f64, py: f64| {
                        let [gx, ..] = gaussian_1d(px, s);
                        let [gy, ..] = gaussian_1d(py, s);
                        let along = px * c + py * sn;
                        let g = gx * gy;
                        (if order == 1 { along / (s * s) } else { along * along / s.powi(4) - 1.0 / (s * s) }
                            * g) as f32
                    };
                    // h: centre (x, y + 0.5); v: centre (x + 0.5, y).
                    let mut h = Vec::new();
                    let mut v = Vec::new();
                    for a in -r..=r {
                        for b in (1 - r)..=r {
                            h.push(Tap(a, b, weight(a as f64, b as f64 - 0.5)));
                            v.push(Tap(b, a, weight(b as f64 - 0.5, a as f64)));
                        }
                    }
                    kernels.push(Kernel {
                        name: format!("d{order} scale {s} angle {:.1}", t.to_degrees()),
                        edge: order == 1,
                        angle: Some(t),
                        scale: Some(s),
                        h,
                        v,
                    });
                }
            }
        }
        Ok(Bank { format: FORMAT.into(), kernels })
    }

    pub fn from_json(text: &str) -> Result<Bank, BankError> {
        let bank: Bank = serde_json::from_str(text).map_err(|e| BankError::Json(e.to_string()))?;
        bank.check()?;
        Ok(bank)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a bank serialises")
    }

    pub fn check(&self) -> Result<(), BankError> {
        if self.format != FORMAT {
            return Err(BankError::Format(self.format.clone()));
        }
        if self.kernels.is_empty() {
            return Err(BankError::Empty);
        }
        let mut total = 0usize;
        for k in &self.kernels {
            for f in Family::BOTH {
                let taps = k.taps(f);
                if taps.is_empty() {
                    return Err(BankError::Kernel(
                        k.name.clone(),
                        format!("no taps for {} cracks", f.letter()),
                    ));
                }
                if let Some(t) = taps.iter().find(|t| !t.2.is_finite()) {
                    return Err(BankError::Kernel(k.name.clone(), format!("weight {} is not finite", t.2)));
                }
                if let Some(t) = taps.iter().find(|t| t.0.unsigned_abs() > 4096 || t.1.unsigned_abs() > 4096)
                {
                    return Err(BankError::Kernel(
                        k.name.clone(),
                        format!("offset ({}, {}) is over 4096 pixels", t.0, t.1),
                    ));
                }
                total += taps.len();
            }
        }
        if total > MAX_TAPS {
            return Err(BankError::TooLarge(total));
        }
        if !self.kernels.iter().any(|k| k.edge) {
            return Err(BankError::Kernel(
                self.kernels[0].name.clone(),
                "no kernel is marked \"edge\"".into(),
            ));
        }
        Ok(())
    }

    /// Refuses an image on which the bank would take more than [`MAX_WORK`].
    pub fn check_work(&self, img: &Image) -> Result<(), BankError> {
        let taps: usize = self.kernels.iter().map(|k| k.h.len() + k.v.len()).sum();
        let (pixels, channels) = (img.width * img.height, img.channels.len());
        let work = taps as f64 * pixels as f64 * channels as f64;
        if work > MAX_WORK as f64 {
            return Err(BankError::TooMuchWork { taps, pixels, channels, work });
        }
        Ok(())
    }

    /// The response of kernel `k` on channel `img` at every crack of `family`, tap by tap in
    /// f64 (the reference for anything steered or separable).
    pub fn apply(&self, k: usize, img: &[f32], w: usize, h: usize, family: Family) -> Vec<f32> {
        self.apply_under(k, img, w, h, family, &Control::default()).unwrap_or_default()
    }

    /// [`Bank::apply`], cancellable and counting progress row by row (`w * h` in all): a kernel
    /// of millions of taps takes minutes.
    fn apply_under(
        &self,
        k: usize,
        img: &[f32],
        w: usize,
        h: usize,
        family: Family,
        ctl: &Control,
    ) -> Result<Vec<f32>, crate::control::Cancelled> {
        let taps = self.kernels[k].taps(family);
        let (cw, ch) = family.dims(w, h);
        let mut out = vec![0f32; cw * ch];
        out.par_chunks_mut(cw.max(1)).enumerate().try_for_each(|(y, row)| {
            ctl.check()?;
            for (x, o) in row.iter_mut().enumerate() {
                let mut sum = 0f64;
                for t in taps {
                    let px = (x as i64 + t.0 as i64).clamp(0, w as i64 - 1) as usize;
                    let py = (y as i64 + t.1 as i64).clamp(0, h as i64 - 1) as usize;
                    sum += t.2 as f64 * img[py * w + px] as f64;
                }
                *o = sum as f32;
            }
            ctl.tick(cw as u64);
            Ok(())
        })?;
        // The rest of the image's `w * h`: a family has a row or a column of cracks fewer.
        ctl.tick((w * h - cw * ch) as u64);
        Ok(out)
    }

    /// Strength, orientation and scale of every crack from this bank's edge kernels applied
    /// directly, defined as for the Gaussian bank ([`super`]): edge kernels are grouped by
    /// scale; a crack's strength is the largest energy of a kernel whose angle is the crack's
    /// normal or that has no angle (any edge kernel when the bank gives no angles; an error when
    /// it gives angles but none along a family's normal), its scale that kernel's, and
    /// its orientation the angle of the most energetic edge kernel of that scale (NaN for a
    /// kernel that gives none).
    pub fn cracks(&self, img: &Image, ctl: &Control) -> Result<CrackMap, CrackError> {
        self.check()?;
        check_image(img)?;
        self.check_work(img)?;
        let (w, h) = (img.width, img.height);
        let edge: Vec<usize> = (0..self.kernels.len()).filter(|&k| self.kernels[k].edge).collect();
        let angled = edge.iter().any(|&k| self.kernels[k].angle.is_some());
        // A kernel without an angle counts as across every crack.
        let is_across = |a: Option<f64>, f: Family| {
            a.is_none_or(|a| {
                let d = (a - f.normal()).rem_euclid(std::f64::consts::PI);
                d.min(std::f64::consts::PI - d) < ANGLE_TOLERANCE
            })
        };
        for f in Family::BOTH {
            if angled && !edge.iter().any(|&k| is_across(self.kernels[k].angle, f)) {
                return Err(BankError::NoNormal(f.letter(), f.normal().to_degrees()).into());
            }
        }
        let mut groups: Vec<(Option<f64>, Vec<usize>)> = Vec::new();
        for &k in &edge {
            let s = self.kernels[k].scale;
            match groups.iter_mut().find(|g| g.0.map(f64::to_bits) == s.map(f64::to_bits)) {
                Some(g) => g.1.push(k),
                None => groups.push((s, vec![k])),
            }
        }
        let mut maps = Vec::new();
        for f in Family::BOTH {
            let (cw, ch) = f.dims(w, h);
            let n = cw * ch;
            let (mut best, mut angle, mut scale) = (vec![-1f32; n], vec![f32::NAN; n], vec![f32::NAN; n]);
            for (s, kernels) in &groups {
                let mut across = vec![-1f32; n];
                let mut oriented = vec![(-1f32, f32::NAN); n];
                for &k in kernels {
                    let mut energy = vec![0f32; n];
                    for c in &img.channels {
                        let r = self.apply_under(k, c, w, h, f, ctl)?;
                        energy.iter_mut().zip(&r).for_each(|(e, v)| *e += v * v);
                    }
                    let a = self.kernels[k].angle;
                    let normal = is_across(a, f);
                    for i in 0..n {
                        if (normal || !angled) && energy[i] > across[i] {
                            across[i] = energy[i];
                        }
                        if energy[i] > oriented[i].0 {
                            oriented[i] = (energy[i], a.map_or(f32::NAN, |a| a as f32));
                        }
                    }
                }
                for i in 0..n {
                    if across[i] > best[i] {
                        best[i] = across[i];
                        scale[i] = s.map_or(f32::NAN, |s| s as f32);
                        angle[i] = oriented[i].1;
                    }
                }
            }
            maps.push((best.into_iter().map(|e| e.max(0.0).sqrt()).collect(), angle, scale));
        }
        let mut maps = maps.into_iter();
        let (hs, ha, hsc) = maps.next().expect("two families");
        let (vs, va, vsc) = maps.next().expect("two families");
        Ok(CrackMap { width: w, height: h, strength: [hs, vs], angle: [ha, va], scale: [hsc, vsc] })
    }
}
