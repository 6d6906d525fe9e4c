//! Float32 TIFF pages: uncompressed, one strip per page, little-endian, streamed (no seeking),
//! read by ImageJ/Fiji, tifffile, GDAL and `io::tiff`. Several pages stack as z.

use std::io::{Error, Write};

/// The entries of each page's directory (tag, type, value): SHORT = 3, LONG = 4.
const ENTRIES: u16 = 10;
/// Bytes of one directory: count, entries, next-directory offset.
const IFD_BYTES: u64 = 2 + 12 * ENTRIES as u64 + 4;

/// Writes `pages` (each `width * height` values, x fastest) as one float32 TIFF. Classic TIFF
/// holds at most 4 GiB; a larger file is refused before anything is written.
pub fn write_f32_pages<'a>(
    w: &mut dyn Write,
    width: usize,
    height: usize,
    pages: impl ExactSizeIterator<Item = &'a [f32]>,
) -> std::io::Result<()> {
    let count = pages.len() as u64;
    let page_bytes = (width * height * 4) as u64;
    let total = 8 + count * (page_bytes + IFD_BYTES);
    if total > u32::MAX as u64 {
        return Err(Error::other(format!(
            "a float32 TIFF of {count} pages of {width} x {height} takes {total} bytes, over classic \
             TIFF's 4 GiB (write fewer slices or scales)"
        )));
    }
    if width == 0 || height == 0 || width > u32::MAX as usize || height > u32::MAX as usize {
        return Err(Error::other(format!("a TIFF page cannot be {width} x {height}")));
    }
    // Header: byte order, magic, offset of the first directory (after the first page's data).
    w.write_all(b"II*\0")?;
    w.write_all(&((8 + page_bytes) as u32).to_le_bytes())?;
    let mut at = 8u64;
    for (i, page) in pages.enumerate() {
        if page.len() != width * height {
            return Err(Error::other(format!(
                "page {i} holds {} values, not {width} x {height}",
                page.len()
            )));
        }
        // The page's samples: f32 in little-endian order, in bounded chunks.
        for chunk in page.chunks(1 << 16) {
            let bytes: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
            w.write_all(&bytes)?;
        }
        let data = at;
        at += page_bytes;
        let next = if (i as u64) + 1 < count { at + IFD_BYTES + page_bytes } else { 0 };
        let entry = |tag: u16, kind: u16, value: u32| {
            let mut e = Vec::with_capacity(12);
            e.extend(tag.to_le_bytes());
            e.extend(kind.to_le_bytes());
            e.extend(1u32.to_le_bytes());
            if kind == 3 {
                e.extend((value as u16).to_le_bytes());
                e.extend([0, 0]);
            } else {
                e.extend(value.to_le_bytes());
            }
            e
        };
        let mut ifd = Vec::with_capacity(IFD_BYTES as usize);
        ifd.extend(ENTRIES.to_le_bytes());
        for e in [
            entry(256, 4, width as u32),      // ImageWidth
            entry(257, 4, height as u32),     // ImageLength
            entry(258, 3, 32),                // BitsPerSample
            entry(259, 3, 1),                 // Compression: none
            entry(262, 3, 1),                 // PhotometricInterpretation: black is zero
            entry(273, 4, data as u32),       // StripOffsets
            entry(277, 3, 1),                 // SamplesPerPixel
            entry(278, 4, height as u32),     // RowsPerStrip
            entry(279, 4, page_bytes as u32), // StripByteCounts
            entry(339, 3, 3),                 // SampleFormat: IEEE float
        ] {
            ifd.extend(e);
        }
        ifd.extend((next as u32).to_le_bytes());
        w.write_all(&ifd)?;
        at += IFD_BYTES;
    }
    Ok(())
}
