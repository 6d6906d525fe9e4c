//! TIFF: one page is a 2D image, several pages of equal size and type a volume (pages are z).
//! Grayscale samples of every integer and float type are kept; RGB(A) 8/16-bit and float pages
//! are converted to luminance (with a note), f16 to f32.

use super::FormatError;
use super::{LUMINANCE_NOTE, luminance, make_field, open_file};
use crate::control::Control;
use crate::field::{Sample, Samples, ScalarField};
use crate::with_samples;
use std::path::Path;
use tiff::ColorType;
use tiff::decoder::{Decoder, DecodingResult, Limits};

pub fn read(path: &Path, ctl: &Control) -> Result<ScalarField, FormatError> {
    let f = open_file(path, ctl)?;
    let bad = |e: tiff::TiffError| format!("bad TIFF: {e}");
    // A page's buffer is allocated before its strips are read, so a lying header could ask for
    // gigabytes: allow what the file could hold at deflate's best ratio (about 1032:1).
    let len = std::fs::metadata(path).map(|m| m.len() as usize).unwrap_or(0);
    let budget = len.saturating_mul(1032).max(256 << 20);
    let mut limits = Limits::default();
    limits.decoding_buffer_size = budget;
    // Pages may share their strips, so each page can pass that cap while all of them together
    // claim far more than the file holds: add up what every page would decode to, from the
    // page headers alone, before decoding any.
    let mut dec = Decoder::new(f).map_err(bad)?.with_limits(limits.clone());
    let mut claimed = 0usize;
    let mut count = 0usize;
    loop {
        ctl.check().map_err(|_| FormatError::Cancelled)?;
        let (w, h) = dec.dimensions().map_err(bad)?;
        let ct = dec.colortype().map_err(bad)?;
        let planar = dec.find_tag_unsigned::<u16>(tiff::tags::Tag::PlanarConfiguration).map_err(bad)?;
        if planar == Some(2) && ct.num_samples() > 1 {
            return Err(format!(
                "page {}: planar (separate-plane) {} samples per pixel are not supported; save the \
                 image with interleaved samples (PlanarConfiguration 1)",
                count,
                ct.num_samples()
            )
            .into());
        }
        let bits = ct.bit_depth() as usize * ct.num_samples() as usize;
        claimed =
            claimed.saturating_add((w as usize).saturating_mul(h as usize).saturating_mul(bits.div_ceil(8)));
        count += 1;
        if claimed > budget {
            return Err(format!(
                "{count} pages claim {claimed} bytes of samples or more, more than a {len}-byte file can hold \
                 (pages that share their data?)"
            )
            .into());
        }
        if !dec.more_images() {
            break;
        }
        dec.next_image().map_err(bad)?;
    }
    let mut dec = Decoder::new(open_file(path, ctl)?).map_err(bad)?.with_limits(limits);
    let mut pages: Vec<Samples> = Vec::new();
    let mut notes = Vec::new();
    let mut size = None;
    loop {
        let (w, h) = dec.dimensions().map_err(bad)?;
        let ct = dec.colortype().map_err(bad)?;
        let img = dec.read_image().map_err(|e| format!("page {}: {}", pages.len(), bad(e)))?;
        let page = convert(img, ct, &mut notes).map_err(|e| format!("page {}: {e}", pages.len()))?;
        match size {
            None => size = Some((w, h, page.dtype())),
            Some(s) if s != (w, h, page.dtype()) => {
                return Err(format!(
                    "page {} is {w}x{h} {}, page 0 is {}x{} {}: pages of a stack must match",
                    pages.len(),
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
        if !dec.more_images() {
            break;
        }
        dec.next_image().map_err(bad)?;
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
