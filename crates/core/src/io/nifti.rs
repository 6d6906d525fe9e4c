//! NIfTI-1 and NIfTI-2 (`.nii`, `.nii.gz`, and `.hdr`/`.img` pairs), either byte order.
//!
//! The header is parsed here for both versions (the `nifti` crate has no NIfTI-2). Axis i of the
//! file becomes x, j becomes y, k becomes z: the data are used in their on-disk (Fortran) order.
//! Scaling follows nibabel's `np.asarray(img.dataobj)`: a slope of 0 or a non-finite slope means
//! no scaling; slope 1 and intercept 0 keep the stored type; otherwise values become
//! `raw * slope + inter`, computed in numpy's result type of the stored type and the header's float
//! type (f32 for NIfTI-1, f64 for NIfTI-2; so i16 * f32 stays f32 but i32 * f32 is f64), with f64
//! used when the scaled range of an integer type would overflow f32.

use super::FormatError;
use super::{Endian, check_dims, make_field, open_file, read_samples, skip};
use crate::control::Control;
use crate::field::{Dtype, Sample, Samples, ScalarField};
use crate::with_samples;
use flate2::read::MultiGzDecoder;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What topoview needs from a NIfTI header.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub version: u8,
    pub endian: Endian,
    /// `dim[1..=dim[0]]`.
    pub dims: Vec<i64>,
    pub datatype: i16,
    /// NIFTI_INTENT_LABEL (1002) marks a label map.
    pub intent_code: i32,
    pub pixdim: [f64; 8],
    pub vox_offset: f64,
    pub scl_slope: f64,
    pub scl_inter: f64,
    pub qform_code: i32,
    pub sform_code: i32,
    pub quatern: [f64; 3],
    pub qoffset: [f64; 3],
    pub srow: [[f64; 4]; 3],
    /// True for `.hdr`/`.img` pairs (magic `ni1`/`ni2`).
    pub paired: bool,
}

/// Header size of `head` if it starts like a NIfTI-1 (348) or NIfTI-2 (540) header.
pub fn looks_like(head: &[u8]) -> bool {
    sniff(head).is_some()
}

fn sniff(head: &[u8]) -> Option<(u8, Endian)> {
    let b: [u8; 4] = head.get(..4)?.try_into().ok()?;
    match (i32::from_le_bytes(b), i32::from_be_bytes(b)) {
        (348, _) => Some((1, Endian::Little)),
        (_, 348) => Some((1, Endian::Big)),
        (540, _) => Some((2, Endian::Little)),
        (_, 540) => Some((2, Endian::Big)),
        _ => None,
    }
}

struct Fields<'a> {
    b: &'a [u8],
    e: Endian,
}

impl Fields<'_> {
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut a: [u8; N] = self.b[at..at + N].try_into().expect("offsets lie inside the header");
        if self.e != Endian::Little {
            a.reverse();
        }
        a
    }
    fn i16(&self, at: usize) -> i16 {
        i16::from_le_bytes(self.bytes(at))
    }
    fn i32(&self, at: usize) -> i32 {
        i32::from_le_bytes(self.bytes(at))
    }
    fn i64(&self, at: usize) -> i64 {
        i64::from_le_bytes(self.bytes(at))
    }
    fn f32(&self, at: usize) -> f64 {
        f32::from_le_bytes(self.bytes(at)) as f64
    }
    fn f64(&self, at: usize) -> f64 {
        f64::from_le_bytes(self.bytes(at))
    }
}

/// Parses a NIfTI-1 (348 bytes) or NIfTI-2 (540 bytes) header.
pub fn parse_header(b: &[u8]) -> Result<Header, FormatError> {
    let (version, endian) = sniff(b).ok_or("not a NIfTI file (sizeof_hdr is neither 348 nor 540)")?;
    let len = if version == 1 { 348 } else { 540 };
    if b.len() < len {
        return Err(format!("truncated NIfTI-{version} header: {} of {len} bytes", b.len()).into());
    }
    let f = Fields { b, e: endian };
    let (magic_at, ndim, dim_at) =
        if version == 1 { (344, f.i16(40) as i64, 42) } else { (4, f.i64(16), 24) };
    let magic = &b[magic_at..magic_at + 4];
    let paired = match (version, magic) {
        (1, b"n+1\0") | (2, b"n+2\0") => false,
        (1, b"ni1\0") | (2, b"ni2\0") => true,
        _ => return Err(format!("bad NIfTI-{version} magic {:?}", String::from_utf8_lossy(magic)).into()),
    };
    if !(1..=7).contains(&ndim) {
        return Err(format!("dim[0] = {ndim}: a NIfTI header has 1 to 7 dimensions").into());
    }
    let dims: Vec<i64> = (0..ndim as usize)
        .map(|i| if version == 1 { f.i16(dim_at + 2 * i) as i64 } else { f.i64(dim_at + 8 * i) })
        .collect();
    let pixdim: [f64; 8] =
        std::array::from_fn(|i| if version == 1 { f.f32(76 + 4 * i) } else { f.f64(104 + 8 * i) });
    let h = if version == 1 {
        Header {
            version,
            endian,
            dims,
            datatype: f.i16(70),
            intent_code: f.i16(68) as i32,
            pixdim,
            vox_offset: f.f32(108),
            scl_slope: f.f32(112),
            scl_inter: f.f32(116),
            qform_code: f.i16(252) as i32,
            sform_code: f.i16(254) as i32,
            quatern: [f.f32(256), f.f32(260), f.f32(264)],
            qoffset: [f.f32(268), f.f32(272), f.f32(276)],
            srow: std::array::from_fn(|r| std::array::from_fn(|c| f.f32(280 + 16 * r + 4 * c))),
            paired,
        }
    } else {
        Header {
            version,
            endian,
            dims,
            datatype: f.i16(12),
            intent_code: f.i32(504),
            pixdim,
            vox_offset: f.i64(168) as f64,
            scl_slope: f.f64(176),
            scl_inter: f.f64(184),
            qform_code: f.i32(344),
            sform_code: f.i32(348),
            quatern: [f.f64(352), f.f64(360), f.f64(368)],
            qoffset: [f.f64(376), f.f64(384), f.f64(392)],
            srow: std::array::from_fn(|r| std::array::from_fn(|c| f.f64(400 + 32 * r + 8 * c))),
            paired,
        }
    };
    Ok(h)
}

/// Stored sample layout of a datatype code: the dtype and whether samples are RGB(A) triples.
fn datatype(code: i16) -> Result<(Dtype, usize), FormatError> {
    Ok(match code {
        2 => (Dtype::U8, 1),
        4 => (Dtype::I16, 1),
        8 => (Dtype::I32, 1),
        16 => (Dtype::F32, 1),
        64 => (Dtype::F64, 1),
        256 => (Dtype::I8, 1),
        512 => (Dtype::U16, 1),
        768 => (Dtype::U32, 1),
        128 => (Dtype::U8, 3),
        2304 => (Dtype::U8, 4),
        1 => return Err("datatype 1 (1-bit binary) is not supported".into()),
        32 | 1792 | 2048 => return Err(format!("datatype {code} (complex) is not supported").into()),
        1024 | 1280 => return Err(format!("datatype {code} (64-bit integer) is not supported").into()),
        1536 => return Err("datatype 1536 (float128) is not supported".into()),
        _ => return Err(format!("unknown NIfTI datatype code {code}").into()),
    })
}

/// Where and how a NIfTI file stores the volume asked for, from its header alone.
struct Located {
    h: Header,
    /// The spatial axes (trailing axes of size 1 dropped), and their voxel count.
    spatial: Vec<usize>,
    n: usize,
    /// Volumes in the file, and the one asked for.
    vols: usize,
    vol: usize,
    stored: Dtype,
    channels: usize,
    /// The file holding the samples, whether it is gzipped, and where (in its inflated bytes)
    /// the volume asked for starts.
    data: PathBuf,
    gz: bool,
    offset: u64,
    notes: Vec<String>,
}

/// Reads the header of `path` and works out where the volume `volume` (default the first)
/// lies, checking every size on the way.
fn locate(path: &Path, volume: Option<usize>) -> Result<Located, FormatError> {
    // The header is read apart from the data, outside any progress: a read's progress counts
    // the data file once.
    let (mut r, header_gz) = reader(path, &Control::default())?;
    let mut head = vec![0u8; 4];
    r.read_exact(&mut head).map_err(|_| "truncated NIfTI header".to_string())?;
    let (version, _) = sniff(&head).ok_or(if path.to_string_lossy().ends_with(".gz") {
        "gzip file that does not hold a NIfTI header (sizeof_hdr is neither 348 nor 540)"
    } else {
        "not a NIfTI file"
    })?;
    let len = if version == 1 { 348 } else { 540 };
    head.resize(len, 0);
    let got = super::read_full(&mut r, &mut head[4..])?;
    head.truncate(4 + got);
    drop(r);
    let h = parse_header(&head)?;
    let mut notes = Vec::new();

    let mut dims = Vec::with_capacity(3);
    for (i, &d) in h.dims.iter().enumerate() {
        if d < 0 {
            return Err(format!("dim[{}] = {d} is negative", i + 1).into());
        }
        dims.push(usize::try_from(d).map_err(|_| format!("dim[{}] = {d} is too large", i + 1))?);
    }
    while dims.len() > 3 && dims.last() == Some(&1) {
        dims.pop();
    }
    let (vols, spatial) = match dims.len() {
        0..=3 => (1, dims.clone()),
        4 => (dims[3], dims[..3].to_vec()),
        n => {
            return Err(format!(
                "{n}D NIfTI (dims {}): topoview reads 1D-3D volumes and one volume of a 4D file",
                crate::field::dims_string(&dims)
            )
            .into());
        }
    };
    let mut spatial = spatial;
    while spatial.len() > 1 && spatial.last() == Some(&1) {
        spatial.pop();
    }
    let n = check_dims(&spatial)?;
    if vols == 0 {
        return Err("the time axis (dim[4]) has size 0".into());
    }
    let vol = volume.unwrap_or(0);
    if vol >= vols {
        return Err(format!("volume {vol} requested, but the file has {vols} volumes").into());
    }
    let (stored, channels) = datatype(h.datatype)?;
    let voxel_bytes = stored.size() * channels;
    let vol_bytes =
        n.checked_mul(voxel_bytes).and_then(|b| u64::try_from(b).ok()).ok_or("volume size overflows")?;

    let header_end = (len + 4) as f64;
    let v = h.vox_offset;
    if !(v.fract() == 0.0 && v >= 0.0) {
        return Err(
            format!("vox_offset {v} is not a whole number of bytes from the start of the data file").into()
        );
    }
    if v >= 1e15 {
        return Err(format!("vox_offset {v} lies past the end of any file (10^15 bytes or more)").into());
    }
    // In a .hdr/.img pair the data start vox_offset bytes into the .img (as nibabel reads them).
    let offset = if h.paired {
        v
    } else if v == 0.0 {
        notes.push(format!("vox_offset is 0; reading data after the header at byte {header_end}"));
        header_end
    } else if v < header_end {
        return Err(format!("vox_offset {v} points inside the {len}-byte header").into());
    } else {
        v
    } as u64;
    let (data, gz) = if h.paired {
        let img = paired_image(path)?;
        let (_, gz) =
            reader(&img, &Control::default()).map_err(|e| format!("data file of the header pair: {e}"))?;
        (img, gz)
    } else {
        (path.to_path_buf(), header_gz)
    };
    if gz {
        super::check_inflatable(offset + vol_bytes * (vol as u64 + 1), super::file_len(&data))?;
    }
    let vol_skip = vol_bytes.checked_mul(vol as u64).ok_or("volume offset overflows")?;
    let offset = offset.checked_add(vol_skip).ok_or("volume offset overflows")?;
    Ok(Located { h, spatial, n, vols, vol, stored, channels, data, gz, offset, notes })
}

/// Reads a NIfTI file; `volume` picks one volume of a 4D file (default the first).
pub fn read(path: &Path, volume: Option<usize>, ctl: &Control) -> Result<ScalarField, FormatError> {
    let Located { h, spatial, n, vols, vol, stored, channels, data, gz, offset, mut notes } =
        locate(path, volume)?;
    let (mut r, _) = reader(&data, ctl).map_err(|e| match h.paired {
        true => format!("data file of the header pair: {e}").into(),
        false => e,
    })?;
    skip(&mut r, offset, "the data before the volume (vox_offset and earlier volumes)")?;
    let samples = read_samples(&mut r, stored, n * channels, h.endian)?;
    if gz {
        super::finish_compressed(&mut r)?;
    }
    let samples = match (channels, samples) {
        (1, s) => s,
        (c, Samples::U8(rgb)) => {
            notes.push(super::LUMINANCE_NOTE.into());
            Samples::U8(super::luminance(&rgb, c, |l| l as u8))
        }
        _ => unreachable!("colour datatypes are stored as u8"),
    };
    let samples = scale(samples, &h, &mut notes)?;

    let spacing = spacing(&h, spatial.len(), &mut notes);
    let mut field = make_field(&spatial, samples, spacing)?;
    field.affine = affine(&h, spacing, &mut notes);
    field.notes = notes;
    field.series = (vols > 1).then_some(crate::field::Series { index: vol, count: vols });
    field.labels = h.intent_code == NIFTI_INTENT_LABEL;
    Ok(field)
}

/// The spacing of the spatial axes (pixdim's magnitudes).
fn spacing(h: &Header, ndim: usize, notes: &mut Vec<String>) -> [f64; 3] {
    let pixdim: Vec<f64> = h.pixdim[1..4].iter().map(|p| p.abs()).collect();
    super::spacing_from(&pixdim, ndim, notes)
}

/// Where the volume asked for is stored as one uncompressed block of samples that need no
/// conversion (no colour, no scaling), for readers that stream it ([`super::block`]); `None`
/// when it is not stored so.
pub fn stored(path: &Path, volume: Option<usize>) -> Result<Option<super::Stored>, FormatError> {
    let Located { h, spatial, stored, channels, data, gz, offset, mut notes, vols, vol, .. } =
        locate(path, volume)?;
    if gz || channels != 1 || scaling(&h)?.is_some() {
        return Ok(None);
    }
    // In the order the whole-file read gives them (`ScalarField::notes_with_series`).
    let spacing = spacing(&h, spatial.len(), &mut notes);
    if vols > 1 {
        notes.push(crate::field::Series { index: vol, count: vols }.note());
    }
    Ok(Some(super::Stored {
        dims: spatial,
        dtype: stored,
        endian: h.endian,
        data,
        start: offset,
        skip: 0,
        spacing,
        notes,
    }))
}

/// The file's bytes, inflated when it is gzipped (and whether it is).
fn reader<'a>(path: &Path, ctl: &Control<'a>) -> Result<(Box<dyn Read + 'a>, bool), FormatError> {
    let mut f = open_file(path, ctl)?;
    let gz = std::io::BufRead::fill_buf(&mut f).map_err(|e| e.to_string())?.starts_with(&[0x1f, 0x8b]);
    Ok(if gz { (Box::new(ctl.guard(MultiGzDecoder::new(f))), true) } else { (Box::new(f), false) })
}

/// The `.img` (or `.img.gz`) next to a `.hdr`.
fn paired_image(hdr: &Path) -> Result<PathBuf, FormatError> {
    let s = hdr.to_string_lossy();
    let stem = s.strip_suffix(".gz").unwrap_or(&s);
    let stem =
        stem.strip_suffix(".hdr").ok_or("a ni1/ni2 header must be a .hdr file with its .img beside it")?;
    let candidates = [format!("{stem}.img"), format!("{stem}.img.gz")];
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| format!("data file {stem}.img not found beside the header").into())
}

/// The slope and intercept that change the samples, if any (see the module docs).
fn scaling(h: &Header) -> Result<Option<(f64, f64)>, FormatError> {
    let (slope, inter) = (h.scl_slope, h.scl_inter);
    if slope == 0.0 || !slope.is_finite() {
        return Ok(None);
    }
    if !inter.is_finite() {
        return Err(format!("scl_slope {slope} is valid but scl_inter {inter} is not finite").into());
    }
    Ok((slope != 1.0 || inter != 0.0).then_some((slope, inter)))
}

/// Applies scl_slope / scl_inter as nibabel does (see the module docs).
fn scale(s: Samples, h: &Header, notes: &mut Vec<String>) -> Result<Samples, FormatError> {
    let Some((slope, inter)) = scaling(h)? else { return Ok(s) };
    let dt = s.dtype();
    // numpy's result type of the stored type and the header's float type.
    let mut f64_out = match dt {
        Dtype::F64 | Dtype::U32 | Dtype::I32 => true,
        Dtype::F32 => h.version == 2,
        _ => h.version == 2,
    };
    if !dt.is_float() && !f64_out {
        let (lo, hi) = match dt {
            Dtype::U8 => (0.0, 255.0),
            Dtype::I8 => (-128.0, 127.0),
            Dtype::U16 => (0.0, 65535.0),
            _ => (-32768.0, 32767.0),
        };
        f64_out = [lo, hi].iter().any(|v: &f64| ((v * slope) as f32 + inter as f32).is_infinite());
    }
    notes.push(format!("scaled by scl_slope {slope} and scl_inter {inter} (as nibabel does)"));
    fn apply<T: Sample, U: Copy + std::ops::Mul<Output = U> + std::ops::Add<Output = U>>(
        v: &[T],
        conv: impl Fn(T) -> U + Sync,
        slope: Option<U>,
        inter: Option<U>,
    ) -> Vec<U> {
        v.iter()
            .map(|&x| {
                let mut y = conv(x);
                if let Some(s) = slope {
                    y = y * s;
                }
                if let Some(i) = inter {
                    y = y + i;
                }
                y
            })
            .collect()
    }
    let (sl, it) = ((slope != 1.0).then_some(slope), (inter != 0.0).then_some(inter));
    Ok(if f64_out {
        Samples::F64(with_samples!(&s, v => apply(v, |x| x.to_f64(), sl, it)))
    } else {
        let (sl, it) = (sl.map(|x| x as f32), it.map(|x| x as f32));
        Samples::F32(with_samples!(&s, v => apply(v, |x| x.to_f32(), sl, it)))
    })
}

/// Voxel-to-world matrix: the sform if set, else the qform, else none (the field's world
/// coordinates are then its spacing's, [`crate::field::ScalarField::affine_or_spacing`]).
/// An sform that maps the grid to no volume (all zeros, or flat) is passed over, with a note:
/// it has no orientation to tell.
fn affine(h: &Header, spacing: [f64; 3], notes: &mut Vec<String>) -> Option<[[f64; 4]; 4]> {
    let mut m = [[0.0; 4]; 4];
    m[3][3] = 1.0;
    if h.sform_code > 0 && h.srow.iter().flatten().all(|v| v.is_finite()) {
        let r = &h.srow;
        let det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1])
            - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
            + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
        if det != 0.0 {
            m[..3].copy_from_slice(&h.srow);
            return Some(m);
        }
        notes.push(format!(
            "the sform (code {}) is singular (determinant 0): passed over{}",
            h.sform_code,
            if h.qform_code > 0 { ", the qform used" } else { "; no orientation" }
        ));
    }
    if h.qform_code > 0 {
        let [b, c, d] = h.quatern;
        let a = (1.0 - (b * b + c * c + d * d)).max(0.0).sqrt();
        let r = [
            [a * a + b * b - c * c - d * d, 2.0 * (b * c - a * d), 2.0 * (b * d + a * c)],
            [2.0 * (b * c + a * d), a * a + c * c - b * b - d * d, 2.0 * (c * d - a * b)],
            [2.0 * (b * d - a * c), 2.0 * (c * d + a * b), a * a + d * d - b * b - c * c],
        ];
        let qfac = if h.pixdim[0] < 0.0 { -1.0 } else { 1.0 };
        let scale = [spacing[0], spacing[1], spacing[2] * qfac];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] = r[i][j] * scale[j];
            }
            m[i][3] = h.qoffset[i];
        }
        if m.iter().flatten().all(|v| v.is_finite()) {
            return Some(m);
        }
    }
    // Neither form usable: the file does not say how it lies in the world (NIfTI's "method
    // 1"), so the field gets no affine and is shown as stored, without orientation letters.
    None
}

/// Writes a NIfTI-1 single file (gzipped when the name ends in `.gz`) with the field's spacing
/// and, when it has one, its affine as the sform: exports of masks and label fields.
/// The intent code of a label map (each sample names a region).
pub const NIFTI_INTENT_LABEL: i32 = 1002;

pub fn write_nifti1(path: &Path, field: &ScalarField) -> Result<(), crate::export::outputs::OutputError> {
    let gz = path.to_string_lossy().ends_with(".gz");
    let bytes = nifti1_bytes(field, gz).map_err(|e| crate::export::outputs::OutputError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    crate::export::write_atomic(path, &bytes)
}

/// `field` as a NIfTI-1 file (gzipped when `gz`): header, then the samples.
pub fn nifti1_bytes(field: &ScalarField, gz: bool) -> std::io::Result<Vec<u8>> {
    let (code, bitpix) = match field.dtype() {
        Dtype::U8 => (2i16, 8i16),
        Dtype::I16 => (4, 16),
        Dtype::I32 => (8, 32),
        Dtype::F32 => (16, 32),
        Dtype::F64 => (64, 64),
        Dtype::I8 => (256, 8),
        Dtype::U16 => (512, 16),
        Dtype::U32 => (768, 32),
    };
    let mut h = vec![0u8; 352];
    h[0..4].copy_from_slice(&348i32.to_le_bytes());
    let dims = field.shape();
    h[40..42].copy_from_slice(&(dims.len() as i16).to_le_bytes());
    for (i, &d) in dims.iter().enumerate() {
        let d =
            i16::try_from(d).map_err(|_| std::io::Error::other("NIfTI-1 axes hold at most 32767 voxels"))?;
        h[42 + 2 * i..44 + 2 * i].copy_from_slice(&d.to_le_bytes());
    }
    for i in dims.len()..7 {
        h[42 + 2 * i..44 + 2 * i].copy_from_slice(&1i16.to_le_bytes());
    }
    h[70..72].copy_from_slice(&code.to_le_bytes());
    if field.labels {
        h[68..70].copy_from_slice(&(NIFTI_INTENT_LABEL as i16).to_le_bytes());
    }
    h[72..74].copy_from_slice(&bitpix.to_le_bytes());
    h[76..80].copy_from_slice(&1f32.to_le_bytes());
    for (i, s) in field.spacing().iter().enumerate() {
        h[80 + 4 * i..84 + 4 * i].copy_from_slice(&(*s as f32).to_le_bytes());
    }
    h[108..112].copy_from_slice(&352f32.to_le_bytes());
    h[112..116].copy_from_slice(&1f32.to_le_bytes());
    if let Some(a) = field.affine {
        h[254..256].copy_from_slice(&1i16.to_le_bytes());
        for (r, row) in a.iter().take(3).enumerate() {
            for (c, v) in row.iter().enumerate() {
                let at = 280 + 16 * r + 4 * c;
                h[at..at + 4].copy_from_slice(&(*v as f32).to_le_bytes());
            }
        }
    }
    h[344..348].copy_from_slice(b"n+1\0");
    let mut bytes = h;
    with_samples!(field.samples(), v => bytes.extend_from_slice(bytemuck::cast_slice(v)));
    if cfg!(target_endian = "big") {
        return Err(std::io::Error::other("writing NIfTI on big-endian hosts is not supported"));
    }
    if gz {
        use std::io::Write;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&bytes)?;
        bytes = z.finish()?;
    }
    Ok(bytes)
}
