//! PNG and JPEG through the `image` crate: 8- and 16-bit grayscale kept as u8/u16, colour
//! converted to luminance (with a note), alpha dropped (with a note). x is the column, y the row
//! from the top.

use super::FormatError;
use super::{LUMINANCE_NOTE, luminance, make_field};
use crate::control::Control;
use crate::field::{Samples, ScalarField};
use image::DynamicImage;
use std::path::Path;

pub fn read(path: &Path, ctl: &Control) -> Result<ScalarField, FormatError> {
    let img = decode(path, ctl)?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let mut notes = Vec::new();
    let alpha = "alpha channel ignored".to_string();
    let samples = match img {
        DynamicImage::ImageLuma8(b) => Samples::U8(b.into_raw()),
        DynamicImage::ImageLuma16(b) => Samples::U16(b.into_raw()),
        DynamicImage::ImageLumaA8(b) => {
            notes.push(alpha);
            Samples::U8(b.into_raw().chunks_exact(2).map(|p| p[0]).collect())
        }
        DynamicImage::ImageLumaA16(b) => {
            notes.push(alpha);
            Samples::U16(b.into_raw().chunks_exact(2).map(|p| p[0]).collect())
        }
        DynamicImage::ImageRgb8(b) => {
            notes.push(LUMINANCE_NOTE.into());
            Samples::U8(luminance(&b.into_raw(), 3, |l| l as u8))
        }
        DynamicImage::ImageRgba8(b) => {
            notes.extend([LUMINANCE_NOTE.into(), alpha]);
            Samples::U8(luminance(&b.into_raw(), 4, |l| l as u8))
        }
        DynamicImage::ImageRgb16(b) => {
            notes.push(LUMINANCE_NOTE.into());
            Samples::U16(luminance(&b.into_raw(), 3, |l| l as u16))
        }
        DynamicImage::ImageRgba16(b) => {
            notes.extend([LUMINANCE_NOTE.into(), alpha]);
            Samples::U16(luminance(&b.into_raw(), 4, |l| l as u16))
        }
        DynamicImage::ImageRgb32F(b) => {
            notes.push(LUMINANCE_NOTE.into());
            Samples::F32(luminance_f32(&b.into_raw(), 3))
        }
        DynamicImage::ImageRgba32F(b) => {
            notes.extend([LUMINANCE_NOTE.into(), alpha]);
            Samples::F32(luminance_f32(&b.into_raw(), 4))
        }
        other => return Err(format!("unsupported pixel type {:?}", other.color()).into()),
    };
    let mut field = make_field(&[w, h], samples, [1.0; 3])?;
    field.notes = notes;
    Ok(field)
}

/// Decodes a PNG or JPEG whose samples fit what its file could hold: a PNG's deflate stream
/// expands at most about 1032 times (the `image` crate's own 512 MiB cap refused valid large
/// images without saying their size); other formats keep that cap. Refusals give the size.
fn decode(path: &Path, ctl: &Control) -> Result<DynamicImage, FormatError> {
    use image::ImageDecoder;
    let mut reader = image::ImageReader::new(super::open_file(path, ctl)?)
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let len = super::file_len(path);
    let most = if reader.format() == Some(image::ImageFormat::Png) {
        len.saturating_mul(1032).max(DEFAULT_CAP)
    } else {
        DEFAULT_CAP
    };
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(most);
    reader.limits(limits);
    let decoder = reader.into_decoder().map_err(|e| format!("cannot decode image: {e}"))?;
    let (w, h) = decoder.dimensions();
    let need = decoder.total_bytes();
    if need > most {
        return Err(format!(
            "{w}x{h} {:?} is {need} bytes of samples, more than the {most} bytes a {len}-byte file of this format may decode to",
            decoder.color_type()
        )
        .into());
    }
    crate::mem::check_fits(need, "the decoded image").map_err(|e| e.to_string())?;
    DynamicImage::from_decoder(decoder).map_err(|e| format!("cannot decode image ({w}x{h}): {e}").into())
}

/// The `image` crate's own default allocation cap.
const DEFAULT_CAP: u64 = 512 << 20;

pub(crate) fn luminance_f32(rgb: &[f32], channels: usize) -> Vec<f32> {
    rgb.chunks_exact(channels).map(|p| 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]).collect()
}

/// An image's width, height and channels (each `width * height` f32 values, x fastest).
pub type Planes = (usize, usize, Vec<Vec<f32>>);

/// The colour channels of a PNG or JPEG, each as f32 in the file's own units (0-255 for 8-bit,
/// 0-65535 for 16-bit), alpha dropped, as `(width, height, planes)`: `Ok(None)` for any other file or a grey image (read
/// those with [`super::open_with`]).
pub fn read_channels(path: &Path, ctl: &Control) -> Result<Option<Planes>, super::ReadError> {
    use image::ImageFormat;
    let fail = |m: String| super::ReadError::new(path, m);
    let reader =
        image::ImageReader::new(super::open_file(path, ctl).map_err(|e| super::ReadError::of(path, e))?)
            .with_guessed_format()
            .map_err(|e| fail(e.to_string()))?;
    if !matches!(reader.format(), Some(ImageFormat::Png | ImageFormat::Jpeg)) {
        return Ok(None);
    }
    // The colour type is in the header: a grey image is left to `open_with`, not decoded twice.
    use image::{ColorType, ImageDecoder};
    let decoder = reader.into_decoder().map_err(|e| fail(format!("cannot decode image: {e}")))?;
    if !matches!(
        decoder.color_type(),
        ColorType::Rgb8
            | ColorType::Rgba8
            | ColorType::Rgb16
            | ColorType::Rgba16
            | ColorType::Rgb32F
            | ColorType::Rgba32F
    ) {
        return Ok(None);
    }
    let img = DynamicImage::from_decoder(decoder).map_err(|e| fail(format!("cannot decode image: {e}")))?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    let planes = |v: Vec<f32>, n: usize| -> Vec<Vec<f32>> {
        (0..3).map(|c| v.chunks_exact(n).map(|p| p[c]).collect()).collect()
    };
    let channels = match img {
        DynamicImage::ImageRgb8(b) => planes(b.into_raw().into_iter().map(f32::from).collect(), 3),
        DynamicImage::ImageRgba8(b) => planes(b.into_raw().into_iter().map(f32::from).collect(), 4),
        DynamicImage::ImageRgb16(b) => planes(b.into_raw().into_iter().map(f32::from).collect(), 3),
        DynamicImage::ImageRgba16(b) => planes(b.into_raw().into_iter().map(f32::from).collect(), 4),
        DynamicImage::ImageRgb32F(b) => planes(b.into_raw(), 3),
        DynamicImage::ImageRgba32F(b) => planes(b.into_raw(), 4),
        _ => return Ok(None),
    };
    Ok(Some((w, h, channels)))
}
