#![no_main]
//! Multi-page TIFFs built from the input: page count, sizes, sample type, compression, strips
//! that several pages share, byte counts that lie, then a few raw byte edits. Building the file
//! lets the fuzzer reach the page loop, the shared-data claim check and the stacking of pages,
//! which random bytes almost never do.
use libfuzzer_sys::fuzz_target;
use std::io::Write;

/// Takes bytes from the front of the input; zeros once it runs out.
struct Bytes<'a>(&'a [u8]);
impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else { return 0 };
        self.0 = rest;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
}

/// One IFD entry: tag, type (3 SHORT, 4 LONG), count 1, value.
fn entry(out: &mut Vec<u8>, tag: u16, long: bool, value: u32) {
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&(if long { 4u16 } else { 3u16 }).to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    if long {
        out.extend_from_slice(&value.to_le_bytes());
    } else {
        out.extend_from_slice(&(value as u16).to_le_bytes());
        out.extend_from_slice(&[0, 0]);
    }
}

fn build(data: &[u8]) -> Vec<u8> {
    let mut b = Bytes(data);
    let pages = 1 + (b.u8() % 12) as usize;
    let flags = b.u8();
    let (mut w, mut h) = (1 + (b.u8() % 48) as u32, 1 + (b.u8() % 48) as u32);
    if flags & 1 != 0 {
        // A size the file cannot hold: the claim checks must refuse it before allocating.
        w = 1 + b.u16() as u32 * 4;
        h = 1 + b.u16() as u32 * 4;
    }
    let (bits, format) = [(8, 1), (8, 2), (16, 1), (16, 2), (32, 1), (32, 3), (64, 3), (16, 3)][(b.u8() % 8) as usize];
    let spp = [1u32, 1, 2, 3, 4][(b.u8() % 5) as usize];
    let deflate = flags & 2 != 0;
    let shared = flags & 4 != 0;
    let ragged = flags & 8 != 0;
    let planar = if flags & 16 != 0 { 2 } else { 1 };
    let lie = flags & 32 != 0;
    let mutations = (b.u8() % 4) as usize;
    let mut edits = Vec::new();
    for _ in 0..mutations {
        edits.push((b.u16() as usize, b.u8()));
    }
    // The rest of the input is strip data, cut into one strip per page (or one shared strip).
    let payload = b.0;
    let strips: Vec<Vec<u8>> = if shared {
        vec![payload.to_vec()]
    } else {
        let n = payload.len() / pages;
        (0..pages).map(|i| payload[i * n..(i + 1) * n].to_vec()).collect()
    };
    let strips: Vec<Vec<u8>> = strips
        .into_iter()
        .map(|s| {
            if deflate {
                let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
                z.write_all(&s).expect("in memory");
                z.finish().expect("in memory")
            } else {
                s
            }
        })
        .collect();
    let mut file = b"II*\0".to_vec();
    file.extend_from_slice(&0u32.to_le_bytes()); // first IFD offset, patched below
    let mut offsets = Vec::new();
    for s in &strips {
        offsets.push(file.len() as u32);
        file.extend_from_slice(s);
    }
    if file.len() % 2 == 1 {
        file.push(0);
    }
    let first_ifd = file.len() as u32;
    file[4..8].copy_from_slice(&first_ifd.to_le_bytes());
    for p in 0..pages {
        let strip = if shared { 0 } else { p };
        let (pw, ph) = if ragged && p % 2 == 1 { (w + 1, h) } else { (w, h) };
        let count = if lie { strips[strip].len() as u32 * 3 + 7 } else { strips[strip].len() as u32 };
        let mut ifd = Vec::new();
        let n_entries: u16 = 11;
        ifd.extend_from_slice(&n_entries.to_le_bytes());
        entry(&mut ifd, 256, true, pw);
        entry(&mut ifd, 257, true, ph);
        entry(&mut ifd, 258, false, bits);
        entry(&mut ifd, 259, false, if deflate { 8 } else { 1 });
        entry(&mut ifd, 262, false, if spp >= 3 { 2 } else { 1 });
        entry(&mut ifd, 273, true, offsets[strip]);
        entry(&mut ifd, 277, false, spp);
        entry(&mut ifd, 278, true, ph);
        entry(&mut ifd, 279, true, count);
        entry(&mut ifd, 284, false, planar);
        entry(&mut ifd, 339, false, format);
        let next = if p + 1 < pages { file.len() as u32 + ifd.len() as u32 + 4 } else { 0 };
        ifd.extend_from_slice(&next.to_le_bytes());
        file.extend_from_slice(&ifd);
    }
    for (at, x) in edits {
        let len = file.len();
        file[at % len] ^= x;
    }
    file
}

fuzz_target!(|data: &[u8]| {
    let file = build(data);
    let dir = std::env::temp_dir().join(format!("topoview-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("f.tif");
    if std::fs::write(&path, &file).is_ok() {
        if let Ok(field) = topoview_core::io::open(&path, &Default::default()) {
            let _ = topoview_core::topo::ecc::ecc(&field, &Default::default(), &Default::default());
        }
    }
});
