//! TIFF: one page is a 2D image, several pages of equal size and type a volume (pages are z).
//! Grayscale samples of every integer and float type are kept; RGB(A) 8/16-bit and float pages
//! are converted to luminance (with a note), f16 to f32. MinIsWhite pages keep their stored
//! values; an ImageJ hyperstack gives its first channel and frame (both with a note).

use super::FormatError;
use super::{LUMINANCE_NOTE, luminance, make_field, open_file};
use crate::control::Control;
use crate::field::{Sample, Samples, ScalarField};
use crate::with_samples;
use std::path::Path;
use tiff::ColorType;
use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::tags::Tag;

pub fn read(path: &Path, ctl: &Control) -> Result<ScalarField, FormatError> {
    let f = open_file(path, ctl)?;
    let bad = |e: tiff::TiffError| format!("bad TIFF: {e}");
    // A page's buffer is allocated before its strips are read, so a lying header could ask for
    // gigabytes: allow what the file could hold at its compression's best ratio.
    let len = std::fs::metadata(path).map(|m| m.len() as usize).unwrap_or(0);
    let budget_at = |ratio: usize| len.saturating_mul(ratio).max(256 << 20);
    let mut limits = Limits::default();
    limits.decoding_buffer_size = budget_at(MOST_RATIO);
    // Pages may share their strips, so each page can pass that cap while all of them together
    // claim far more than the file holds: add up what every page would decode to, from the
    // page headers alone, before decoding any.
    let mut dec = Decoder::new(f).map_err(bad)?.with_limits(limits.clone());
    let description = dec.get_tag_ascii_string(Tag::ImageDescription).ok();
    let mut claimed = 0usize;
    let mut count = 0usize;
    let mut ratio = 1;
    loop {
        ctl.check().map_err(|_| FormatError::Cancelled)?;
        let (w, h) = dec.dimensions().map_err(bad)?;
        let ct = dec.colortype().map_err(bad)?;
        let planar = dec.find_tag_unsigned::<u16>(Tag::PlanarConfiguration).map_err(bad)?;
        if planar == Some(2) && ct.num_samples() > 1 {
            return Err(format!(
                "page {}: planar (separate-plane) {} samples per pixel are not supported; save the \
                 image with interleaved samples (PlanarConfiguration 1)",
                count,
                ct.num_samples()
            )
            .into());
        }
        ratio = ratio.max(best_ratio(dec.find_tag_unsigned::<u16>(Tag::Compression).map_err(bad)?));
        let bits = ct.bit_depth() as usize * ct.num_samples() as usize;
        claimed =
            claimed.saturating_add((w as usize).saturating_mul(h as usize).saturating_mul(bits.div_ceil(8)));
        count += 1;
        if claimed > budget_at(ratio) {
            return Err(format!(
                "{count} pages claim {claimed} bytes of samples or more, more than a {len}-byte file can hold \
                 at {ratio}:1 (pages that share their data?)"
            )
            .into());
        }
        if !dec.more_images() {
            break;
        }
        dec.next_image().map_err(bad)?;
    }
    let mut notes = Vec::new();
    let keep = imagej_pages(description.as_deref(), count, &mut notes);
    limits.decoding_buffer_size = budget_at(ratio);
    let mut dec = Decoder::new(open_file(path, ctl)?).map_err(bad)?.with_limits(limits);
    let mut pages: Vec<Samples> = Vec::new();
    let mut size = None;
    for (index, keep) in keep.into_iter().enumerate() {
        if index > 0 {
            dec.next_image().map_err(bad)?;
        }
        if !keep {
            continue;
        }
        let (w, h) = dec.dimensions().map_err(bad)?;
        let ct = dec.colortype().map_err(bad)?;
        let white_is_zero =
            dec.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(bad)? == Some(0);
        let img = dec.read_image().map_err(|e| format!("page {index}: {}", bad(e)))?;
        let img = if white_is_zero { as_stored(img, &mut notes) } else { img };
        let page = convert(img, ct, &mut notes).map_err(|e| format!("page {index}: {e}"))?;
        match size {
            None => size = Some((w, h, page.dtype())),
            Some(s) if s != (w, h, page.dtype()) => {
                return Err(format!(
                    "page {index} is {w}x{h} {}, page 0 is {}x{} {}: pages of a stack must match",
                    page.dtype(),
                    s.0,
                    s.1,
                    s.2
                )
                .into());
            }
            _ => {}
        }
        pages.push(page);
    }
    let (w, h, _) = size.ok_or("TIFF without pages")?;
    let (w, h) = (w as usize, h as usize);
    let dims = if pages.len() == 1 { vec![w, h] } else { vec![w, h, pages.len()] };
    notes.sort();
    notes.dedup();
    let samples = concat(pages);
    let mut field = make_field(&dims, samples, [1.0; 3])?;
    field.notes = notes;
    Ok(field)
}

/// The most a compression's output can exceed its input (LZW's, at most 4096 bytes from one
/// 12-bit code, is the largest topoview allows).
const MOST_RATIO: usize = 4096 * 8 / 12;

/// The best ratio a page's compression can reach: none 1, PackBits 64 (128 bytes from 2),
/// deflate about 1032, LZW and any other [`MOST_RATIO`].
fn best_ratio(compression: Option<u16>) -> usize {
    match compression {
        None | Some(1) => 1,
        Some(32773) => 64,
        Some(8 | 32946) => 1032,
        _ => MOST_RATIO,
    }
}

/// Which pages are the slices of an ImageJ hyperstack: its description (`channels=2`,
/// `slices=5`, `frames=3`) orders pages channel fastest, then slice, then frame. The first
/// channel of the first frame is read, with a note; a description that does not match the
/// pages is said and every page read as a slice.
fn imagej_pages(description: Option<&str>, count: usize, notes: &mut Vec<String>) -> Vec<bool> {
    let every = vec![true; count];
    let Some(d) = description.filter(|d| d.starts_with("ImageJ=")) else { return every };
    let value = |key: &str| -> usize {
        d.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=')?.trim().parse().ok()).unwrap_or(1)
    };
    let (c, z, t) = (value("channels"), value("slices"), value("frames"));
    if c == 1 && t == 1 {
        return every;
    }
    if c.checked_mul(z).and_then(|v| v.checked_mul(t)) != Some(count) {
        notes.push(format!(
            "ImageJ description of {c} channels, {z} slices and {t} frames does not match the {count} pages: every page read as a slice"
        ));
        return every;
    }
    notes.push(format!(
        "ImageJ hyperstack of {c} channel{}, {z} slice{} and {t} frame{}: channel 1, frame 1 read",
        if c == 1 { "" } else { "s" },
        if z == 1 { "" } else { "s" },
        if t == 1 { "" } else { "s" }
    ));
    (0..count).map(|i| i % c == 0 && i / (c * z) == 0).collect()
}

/// A MinIsWhite page as stored: the decoder turns it to MinIsBlack (`max - v`, or `1 - v` for
/// floats); topoview keeps the stored values, as tifffile and ImageJ do.
fn as_stored(img: DecodingResult, notes: &mut Vec<String>) -> DecodingResult {
    let mut note =
        "PhotometricInterpretation MinIsWhite: values read as stored (0 is white in the file's own display)";
    let img = match img {
        DecodingResult::U8(v) => DecodingResult::U8(v.into_iter().map(|x| u8::MAX - x).collect()),
        DecodingResult::U16(v) => DecodingResult::U16(v.into_iter().map(|x| u16::MAX - x).collect()),
        DecodingResult::U32(v) => DecodingResult::U32(v.into_iter().map(|x| u32::MAX - x).collect()),
        // 1 - (1 - v) rounds: the decoder's values are kept, and said.
        other => {
            note = "PhotometricInterpretation MinIsWhite: float values read as 1 - stored (the TIFF decoder's inversion)";
            other
        }
    };
    notes.push(note.into());
    img
}

/// Joins pages of one type into one sample vector.
fn concat(mut pages: Vec<Samples>) -> Samples {
    if pages.len() == 1 {
        return pages.pop().expect("one page");
    }
    /// `_type` only selects `T`: the type of the first page.
    fn join<T: Sample>(_type: &[T], pages: &[Samples]) -> Samples {
        let mut out = Vec::with_capacity(pages.iter().map(Samples::len).sum());
        for p in pages {
            out.extend_from_slice(T::slice(p).expect("pages share one type"));
        }
        T::wrap(out)
    }
    with_samples!(&pages[0], first => join(first, &pages))
}

fn convert(img: DecodingResult, ct: ColorType, notes: &mut Vec<String>) -> Result<Samples, FormatError> {
    let channels = match ct {
        ColorType::Gray(_) => 1,
        ColorType::GrayA(_) => 2,
        ColorType::RGB(_) => 3,
        ColorType::RGBA(_) => 4,
        other => return Err(format!("colour type {other:?} is not supported").into()),
    };
    if ![8, 16, 32, 64].contains(&ct.bit_depth()) {
        return Err(format!("{}-bit samples are not supported", ct.bit_depth()).into());
    }
    if channels == 2 {
        notes.push("alpha channel ignored".into());
    }
    if channels >= 3 {
        notes.push(LUMINANCE_NOTE.into());
    }
    Ok(match (img, channels) {
        (DecodingResult::U8(v), 1) => Samples::U8(v),
        (DecodingResult::U16(v), 1) => Samples::U16(v),
        (DecodingResult::U32(v), 1) => Samples::U32(v),
        (DecodingResult::I8(v), 1) => Samples::I8(v),
        (DecodingResult::I16(v), 1) => Samples::I16(v),
        (DecodingResult::I32(v), 1) => Samples::I32(v),
        (DecodingResult::F32(v), 1) => Samples::F32(v),
        (DecodingResult::F64(v), 1) => Samples::F64(v),
        (DecodingResult::F16(v), 1) => {
            notes.push("f16 samples widened to f32".into());
            Samples::F32(v.iter().map(|x| x.to_f32()).collect())
        }
        (DecodingResult::U8(v), 2) => Samples::U8(v.chunks_exact(2).map(|p| p[0]).collect()),
        (DecodingResult::U16(v), 2) => Samples::U16(v.chunks_exact(2).map(|p| p[0]).collect()),
        (DecodingResult::U8(v), c) => Samples::U8(luminance(&v, c, |l| l as u8)),
        (DecodingResult::U16(v), c) => Samples::U16(luminance(&v, c, |l| l as u16)),
        (DecodingResult::F32(v), c) if c >= 3 => Samples::F32(super::image2d::luminance_f32(&v, c)),
        (DecodingResult::U64(_) | DecodingResult::I64(_), _) => {
            return Err("64-bit integer samples are not supported".into());
        }
        (_, c) => return Err(format!("{c}-channel pages of this sample type are not supported").into()),
    })
}
