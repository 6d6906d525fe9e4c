//! Readers: one `open(path)` that sniffs the format, one module per format.
//!
//! Every reader returns an error naming the file and what is wrong with it; none panics on a
//! bad file (the parsers are fuzzed, see `docs/FUZZING.md`). Formats: PNG and JPEG
//! ([`image2d`]), TIFF pages and stacks ([`tiff`]), NIfTI-1 and NIfTI-2, plain or gzipped
//! ([`nifti`]), NRRD ([`nrrd`]), MetaImage ([`metaimage`]) and headerless raw data ([`raw`]).

mod block;
pub mod image2d;
pub mod metaimage;
pub mod nifti;
pub mod nrrd;
pub mod points;
pub mod raw;
pub mod tiff;

use crate::control::{Control, Watched};
use crate::field::{Dtype, Sample, Samples, ScalarField};
pub use block::{Block, BlockReader, block};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// A file that could not be read, and why; displays as `path: problem`.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReadError {
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("{}: reading cancelled", path.display())]
    Cancelled { path: PathBuf },
}

impl ReadError {
    pub fn new(path: &Path, message: impl Into<String>) -> Self {
        ReadError::Invalid { path: path.to_path_buf(), message: message.into() }
    }

    /// `e`, about the file at `path`.
    pub fn of(path: &Path, e: FormatError) -> Self {
        match e {
            FormatError::Invalid(m) => ReadError::new(path, m),
            FormatError::Cancelled => ReadError::Cancelled { path: path.to_path_buf() },
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Invalid { path, .. } | ReadError::Cancelled { path } => path,
        }
    }
}

/// What is wrong with a file's contents (or its reading), before [`open`] names the file.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FormatError {
    #[error("{0}")]
    Invalid(String),
    /// The read was stopped by its [`Control`].
    #[error("cancelled")]
    Cancelled,
}

impl From<String> for FormatError {
    fn from(m: String) -> Self {
        FormatError::Invalid(m)
    }
}

impl From<&str> for FormatError {
    fn from(m: &str) -> Self {
        FormatError::Invalid(m.to_string())
    }
}

impl From<crate::field::FieldError> for FormatError {
    fn from(e: crate::field::FieldError) -> Self {
        FormatError::Invalid(e.to_string())
    }
}

impl FormatError {
    /// A failed read: [`FormatError::Cancelled`] when a [`Control`] stopped it, else `what`
    /// and the error.
    pub(crate) fn read(e: &std::io::Error, what: impl std::fmt::Display) -> FormatError {
        if e.get_ref().is_some_and(|inner| inner.is::<crate::control::Cancelled>()) {
            FormatError::Cancelled
        } else {
            FormatError::Invalid(format!("{what}: {e}"))
        }
    }
}

/// Byte order of multi-byte samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Endian {
    #[default]
    Little,
    Big,
}

impl Endian {
    pub fn native() -> Endian {
        if cfg!(target_endian = "big") { Endian::Big } else { Endian::Little }
    }
}

/// How to read a headerless raw file.
#[derive(Clone, Debug, PartialEq)]
pub struct RawSpec {
    /// x first (fastest), 1 to 3 axes.
    pub dims: Vec<usize>,
    pub dtype: Dtype,
    pub endian: Endian,
    /// Bytes to skip before the samples.
    pub offset: u64,
}

/// Where a header says its samples lie, uncompressed and unconverted: what NIfTI, NRRD and
/// MetaImage headers tell [`block`] for it to stream them (the readers know nothing of blocks).
#[derive(Clone, Debug)]
pub struct Stored {
    pub dims: Vec<usize>,
    pub dtype: Dtype,
    pub endian: Endian,
    /// The file holding the samples (the header's own, or a detached data file).
    pub data: PathBuf,
    /// Where the header ends in `data` (0 for a detached file).
    pub start: u64,
    /// Bytes between `start` and the samples; -1: the samples end the file.
    pub skip: i64,
    pub spacing: [f64; 3],
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpenOptions {
    /// Read the file as raw samples with this layout, whatever its name.
    pub raw: Option<RawSpec>,
    /// Which volume of a 4D file to read (default 0).
    pub volume: Option<usize>,
}

/// Reads the image or volume at `path`, recognising its format from its first bytes (and, for
/// headerless raw files, from its name or `opts.raw`).
pub fn open(path: &Path, opts: &OpenOptions) -> Result<ScalarField, ReadError> {
    open_with(path, opts, &Control::default())
}

/// [`open`] under a [`Control`]: progress in bytes of the file read (of [`file_len`]), and
/// cancellation between any two reads of the file (a read is at most 1 MiB).
pub fn open_with(path: &Path, opts: &OpenOptions, ctl: &Control) -> Result<ScalarField, ReadError> {
    let result = open_inner(path, opts, ctl);
    if ctl.cancelled() {
        return Err(ReadError::Cancelled { path: path.to_path_buf() });
    }
    result
}

/// The size of the file at `path` in bytes (0 when unknown): the total of [`open_with`]'s
/// progress.
pub fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The format of a file, as recognised from its first bytes or its name.
enum Format {
    /// Headerless samples with this layout.
    Raw(RawSpec),
    Image2d,
    Tiff,
    Nrrd,
    Nifti,
    MetaImage,
}

/// Recognises the format of `path` from its first bytes (and, for headerless raw files, from
/// its name or `opts.raw`), after checking that it is a regular file. A volume other than the
/// first is asked only of NIfTI, the one format of several volumes: elsewhere it is refused,
/// not ignored.
fn format_of(path: &Path, opts: &OpenOptions) -> Result<Format, ReadError> {
    let format = detect(path, opts)?;
    match opts.volume {
        Some(v) if v > 0 && !matches!(format, Format::Nifti) => Err(ReadError::of(
            path,
            format!("--volume {v}: this file holds one volume (only 4D NIfTI files hold several)").into(),
        )),
        _ => Ok(format),
    }
}

fn detect(path: &Path, opts: &OpenOptions) -> Result<Format, ReadError> {
    let err = |e: FormatError| ReadError::of(path, e);
    let meta = regular_file(path).map_err(|e| err(e.into()))?;
    if let Some(spec) = &opts.raw {
        return Ok(Format::Raw(spec.clone()));
    }
    if meta.len() == 0 {
        return Err(err("empty file (0 bytes)".into()));
    }
    let mut head = Vec::with_capacity(1024);
    File::open(path)
        .and_then(|f| f.take(1024).read_to_end(&mut head))
        .map_err(|e| err(io_message(&e).into()))?;
    let ext = extension(path);
    Ok(if head.starts_with(b"\x89PNG\r\n\x1a\n") || head.starts_with(&[0xff, 0xd8, 0xff]) {
        Format::Image2d
    } else if head.starts_with(b"II*\0")
        || head.starts_with(b"MM\0*")
        || head.starts_with(b"II+\0")
        || head.starts_with(b"MM\0+")
    {
        Format::Tiff
    } else if head.starts_with(b"NRRD000") {
        Format::Nrrd
    } else if head.starts_with(&[0x1f, 0x8b]) || nifti::looks_like(&head) {
        Format::Nifti
    } else if matches!(ext.as_str(), "mha" | "mhd") || metaimage::looks_like(&head) {
        Format::MetaImage
    } else if let Some(spec) = raw::spec_from_name(path) {
        Format::Raw(spec)
    } else if matches!(ext.as_str(), "raw" | "bin" | "dat" | "img") {
        return Err(err(format!(
            "headerless .{ext} file: give its layout with --dims XxYxZ --dtype TYPE, or name it \
             like name_256x256x256_uint8.raw"
        )
        .into()));
    } else {
        return Err(err("unrecognised format (not PNG, JPEG, TIFF, NIfTI, NRRD or MetaImage); for \
             headerless raw data pass --dims and --dtype"
            .into()));
    })
}

fn open_inner(path: &Path, opts: &OpenOptions, ctl: &Control) -> Result<ScalarField, ReadError> {
    let result = match format_of(path, opts)? {
        Format::Raw(spec) => raw::read(path, &spec, ctl),
        Format::Image2d => image2d::read(path, ctl),
        Format::Tiff => tiff::read(path, ctl),
        Format::Nrrd => nrrd::read(path, ctl),
        Format::Nifti => nifti::read(path, opts.volume, ctl),
        Format::MetaImage => metaimage::read(path, ctl),
    };
    result.map_err(|e| ReadError::of(path, e))
}

/// Every file that reading `path` may read: the file itself, the `.img` of a `.hdr`, and the
/// detached data file a NRRD or MetaImage header names. Outputs are checked against these, so
/// no export replaces its own input (see [`crate::export::outputs::check`]).
pub fn read_set(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    let s = path.to_string_lossy();
    if let Some(stem) = s.strip_suffix(".gz").unwrap_or(&s).strip_suffix(".hdr") {
        files.extend([format!("{stem}.img"), format!("{stem}.img.gz")].map(PathBuf::from));
    }
    let mut head = Vec::new();
    // Only a regular file is opened here: opening a pipe would wait for a writer.
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if regular && File::open(path).and_then(|f| f.take(64 << 10).read_to_end(&mut head)).is_ok() {
        let text = String::from_utf8_lossy(&head);
        let named = text.lines().find_map(|l| {
            let (key, value) = l.split_once([':', '='])?;
            let key = key.trim().to_ascii_lowercase();
            matches!(key.as_str(), "data file" | "datafile" | "elementdatafile")
                .then(|| value.trim().to_string())
        });
        if let Some(f) = named.filter(|f| !f.is_empty() && f != "LOCAL" && !f.starts_with("LIST")) {
            files.push(path.parent().unwrap_or(Path::new(".")).join(f));
        }
    }
    files
}

/// Lower-case extension, looking through a trailing `.gz`.
pub(crate) fn extension(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_ascii_lowercase();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.rsplit_once('.').map(|(_, e)| e.to_string()).unwrap_or_default()
}

/// A system error reading a file in words ("no such file", "permission denied", ...).
pub fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Opens `path` for buffered reading under `ctl`, with a message naming it on failure.
/// A file opened for reading under a [`Control`] (see [`open_file`]).
pub(crate) type FileReader<'a> = BufReader<Watched<'a, File>>;

/// The text of a small file the user names beside the data (a filter bank, a session): a
/// regular file of at most `most` bytes, read whole. A device or a pipe (`/dev/zero`, a FIFO)
/// is refused before any reading: it could be endless.
pub fn read_small_text(path: &Path, most: u64) -> Result<String, ReadError> {
    let err = |m: String| ReadError::new(path, m);
    let meta = regular_file(path).map_err(err)?;
    if meta.len() > most {
        return Err(err(format!("is {} bytes; a file of this kind is at most {most}", meta.len())));
    }
    let f = File::open(path).map_err(|e| err(io_message(&e)))?;
    let mut text = String::new();
    // `take`: a file that grows while it is read stops at the bound too.
    f.take(most + 1).read_to_string(&mut text).map_err(|e| err(io_message(&e)))?;
    if text.len() as u64 > most {
        return Err(err(format!("grew past {most} bytes while it was read")));
    }
    Ok(text)
}

/// A data file named by a header could be /dev/zero or a pipe: endless, and of no size to
/// check the header's claim against. Judged before opening and again on what was opened (the
/// name may have changed between the two).
pub(crate) fn open_file<'a>(path: &Path, ctl: &Control<'a>) -> Result<FileReader<'a>, FormatError> {
    let named = |why: String| FormatError::from(format!("{}: {why}", path.display()));
    regular_file(path).map_err(named)?;
    let f = File::open(path).map_err(|e| named(io_message(&e)))?;
    if let Some(why) = f.metadata().ok().and_then(|m| not_regular(&m)) {
        return Err(named(why.into()));
    }
    Ok(BufReader::with_capacity(1 << 20, ctl.watch(f)))
}

/// Why a file is not a regular one, None when it is.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    if meta.is_file() {
        None
    } else if meta.is_dir() {
        Some("is a directory")
    } else {
        Some("is not a regular file (a pipe, socket or device): save it to a file first")
    }
}

/// The metadata of `path` when it is a regular file, else why not in words ("is a directory",
/// "is not a regular file ..."). Every file topoview reads is judged so, by `stat` before it is
/// opened: opening a FIFO waits for a writer, and a device can be endless.
pub fn regular_file(path: &Path) -> Result<std::fs::Metadata, String> {
    let meta = std::fs::metadata(path).map_err(|e| io_message(&e))?;
    match not_regular(&meta) {
        None => Ok(meta),
        Some(why) => Err(why.into()),
    }
}

/// The data file a header names, resolved against the header's folder, and a note when it lies
/// outside that folder (an absolute path, or one that climbs out with `..`): a file from
/// elsewhere should not be able to read from anywhere without saying so.
/// A header that names itself as its data file is refused: its samples would be its own text.
pub(crate) fn detached(header: &Path, named: &str, notes: &mut Vec<String>) -> Result<PathBuf, FormatError> {
    let folder = header.parent().unwrap_or(Path::new("."));
    let p = folder.join(named);
    let inside = Path::new(named)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    if !inside {
        notes.push(format!("the data are read from {}, outside the header's folder", p.display()));
    }
    if same_file(header, &p) {
        return Err(format!("the data file '{named}' is this header itself").into());
    }
    Ok(p)
}

/// Whether two paths name one file (the same device and inode), through links and `..`.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Samples stored with `channels` interleaved values per voxel (the first, fastest axis), made
/// one value per voxel, with a note: three or four colour channels (`colour`) become their
/// luminance (alpha dropped), other channels (vectors, lists) the first of them.
pub(crate) fn one_channel(
    samples: Samples,
    channels: usize,
    colour: bool,
    notes: &mut Vec<String>,
) -> Samples {
    if channels <= 1 {
        return samples;
    }
    if colour && (channels == 3 || channels == 4) {
        notes.push(LUMINANCE_NOTE.into());
        if channels == 4 {
            notes.push("alpha channel ignored".into());
        }
        return match samples {
            Samples::U8(v) => Samples::U8(luminance(&v, channels, |l| l as u8)),
            Samples::U16(v) => Samples::U16(luminance(&v, channels, |l| l as u16)),
            other => {
                let l: Vec<f64> = (0..other.len() / channels)
                    .map(|i| {
                        let c = |k| other.get_f64(i * channels + k);
                        0.2126 * c(0) + 0.7152 * c(1) + 0.0722 * c(2)
                    })
                    .collect();
                let dtype = if other.dtype() == Dtype::F64 { Dtype::F64 } else { Dtype::F32 };
                Samples::from_f64(dtype, &l)
            }
        };
    }
    notes.push(format!("{channels} values per voxel: the first is read"));
    fn first<T: Sample>(v: &[T], channels: usize) -> Samples {
        T::wrap(v.chunks_exact(channels).map(|p| p[0]).collect())
    }
    crate::with_samples!(&samples, v => first(v, channels))
}

/// Skips `n` bytes of a stream; errors when it ends first.
pub(crate) fn skip(r: &mut impl Read, n: u64, what: &str) -> Result<(), FormatError> {
    let got = std::io::copy(&mut r.take(n), &mut std::io::sink()).map_err(|e| e.to_string())?;
    if got < n {
        return Err(format!("truncated: file ends {} bytes into the {n} bytes of {what}", got).into());
    }
    Ok(())
}

/// Reads into `buf` until it is full or the stream ends; returns the bytes read.
pub(crate) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, FormatError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(FormatError::read(
                    &e,
                    format_args!("read failed after {got} bytes of voxel data"),
                ));
            }
        }
    }
    Ok(got)
}

/// Deflate inflates at most about 1032 bytes out of one (RFC 1951's longest match per
/// 2-bit code); a compressed stream of `len` bytes that must yield more cannot be honest.
pub(crate) fn check_inflatable(need: u64, len: u64) -> Result<(), FormatError> {
    if need > len.saturating_mul(1032) {
        return Err(format!(
            "the header claims {need} bytes of voxel data, more than {len} bytes of compressed data \
             can inflate to (at most {})",
            len.saturating_mul(1032)
        )
        .into());
    }
    Ok(())
}

/// Whether a header line is text: no control characters but tabs and line ends (any other
/// bytes, Latin-1 "µm" included, are text). Binary data where a header line should be means
/// the header never ended.
pub(crate) fn is_text_line(line: &[u8]) -> bool {
    line.iter().all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r'))
}

/// Reads a compressed stream to its end: a gzip or zlib decoder checks the stream's checksum
/// and length only there, and the samples are complete before it (nibabel and Python's gzip
/// check them too). Memory stays flat; time is bounded by what the file can inflate to.
pub(crate) fn finish_compressed(r: &mut impl Read) -> Result<(), FormatError> {
    std::io::copy(r, &mut std::io::sink())
        .map(|_| ())
        .map_err(|e| FormatError::read(&e, "corrupt compressed data (checksum, length or end of stream)"))
}

/// Reads `n` samples of `dtype` in byte order `endian`.
///
/// Memory grows with the data actually read (in steps of 64 MiB), so a header that lies about
/// its dims makes a "truncated" error, not an allocation of the claimed size.
pub(crate) fn read_samples(
    r: &mut impl Read,
    dtype: Dtype,
    n: usize,
    endian: Endian,
) -> Result<Samples, FormatError> {
    fn typed<T: Sample>(r: &mut impl Read, n: usize, swap: bool) -> Result<Samples, FormatError> {
        let size = std::mem::size_of::<T>();
        let total = n.checked_mul(size).ok_or("voxel data size overflows")?;
        let step = ((64 << 20) / size).max(1);
        let mut v: Vec<T> = Vec::new();
        while v.len() < n {
            let old = v.len();
            let want = step.min(n - old);
            v.try_reserve(want).map_err(|_| format!("cannot allocate {total} bytes for the voxel data"))?;
            v.resize(old + want, T::zeroed());
            let got = read_full(r, bytemuck::cast_slice_mut(&mut v[old..]))?;
            if got < want * size {
                return Err(format!(
                    "truncated: expected {total} bytes of voxel data, found {}",
                    old * size + got
                )
                .into());
            }
        }
        if swap && size > 1 {
            for s in bytemuck::cast_slice_mut::<T, u8>(&mut v).chunks_exact_mut(size) {
                s.reverse();
            }
        }
        Ok(T::wrap(v))
    }
    let swap = endian != Endian::native();
    match dtype {
        Dtype::U8 => typed::<u8>(r, n, swap),
        Dtype::I8 => typed::<i8>(r, n, swap),
        Dtype::U16 => typed::<u16>(r, n, swap),
        Dtype::I16 => typed::<i16>(r, n, swap),
        Dtype::U32 => typed::<u32>(r, n, swap),
        Dtype::I32 => typed::<i32>(r, n, swap),
        Dtype::F32 => typed::<f32>(r, n, swap),
        Dtype::F64 => typed::<f64>(r, n, swap),
    }
}

/// Samples of `dtype` from numbers parsed out of a text format; integers must be exact and in range.
pub(crate) fn samples_from_f64(dtype: Dtype, vals: &[f64]) -> Result<Samples, FormatError> {
    fn ints<T: TryFrom<i64>>(vals: &[f64], dtype: Dtype) -> Result<Vec<T>, String> {
        vals.iter()
            .map(|&v| {
                let i = v as i64;
                if i as f64 != v {
                    return Err(format!("sample {v} is not a {dtype} value"));
                }
                T::try_from(i).map_err(|_| format!("sample {v} is out of range for {dtype}"))
            })
            .collect()
    }
    Ok(match dtype {
        Dtype::U8 => Samples::U8(ints(vals, dtype)?),
        Dtype::I8 => Samples::I8(ints(vals, dtype)?),
        Dtype::U16 => Samples::U16(ints(vals, dtype)?),
        Dtype::I16 => Samples::I16(ints(vals, dtype)?),
        Dtype::U32 => Samples::U32(ints(vals, dtype)?),
        Dtype::I32 => Samples::I32(ints(vals, dtype)?),
        Dtype::F32 => Samples::F32(vals.iter().map(|&v| v as f32).collect()),
        Dtype::F64 => Samples::F64(vals.to_vec()),
    })
}

/// Checks a dims list read from a header: 1 to 3 axes, none empty, product addressable.
pub(crate) fn check_dims(dims: &[usize]) -> Result<usize, FormatError> {
    use crate::field::{checked_voxels, dims_string};
    if dims.is_empty() || dims.len() > 3 {
        return Err(format!("{} axes: topoview reads 1D, 2D and 3D data", dims.len()).into());
    }
    if let Some(a) = dims.iter().position(|&d| d == 0) {
        return Err(format!("axis {a} has size 0 (dims {})", dims_string(dims)).into());
    }
    checked_voxels(dims).ok_or_else(|| format!("dims {} overflow: too many voxels", dims_string(dims)).into())
}

/// [`spacing_from`] a header's values where it has some; unit spacing where it has none.
pub(crate) fn spacing_or_unit(values: Option<&[f64]>, ndim: usize, notes: &mut Vec<String>) -> [f64; 3] {
    values.map_or([1.0; 3], |s| spacing_from(s, ndim, notes))
}

/// Voxel spacing from a header's per-axis values: a value that is not finite and positive
/// becomes 1, with a note.
pub(crate) fn spacing_from(values: &[f64], ndim: usize, notes: &mut Vec<String>) -> [f64; 3] {
    let mut spacing = [1.0; 3];
    for (a, &v) in values.iter().enumerate().take(ndim.min(3)) {
        if v.is_finite() && v > 0.0 {
            spacing[a] = v;
        } else {
            notes.push(format!("axis {a} has no usable spacing ({v}); using 1"));
        }
    }
    spacing
}

/// Builds the field, turning a geometry error into a message.
pub(crate) fn make_field(
    dims: &[usize],
    samples: Samples,
    spacing: [f64; 3],
) -> Result<ScalarField, FormatError> {
    Ok(ScalarField::new(dims, samples)?.with_spacing(spacing)?)
}

/// Rec. 709 luminance of 8- or 16-bit RGB pixels with integer truncation, as the `image` crate
/// computes it, so PNG and TIFF colour images convert alike.
pub(crate) fn luminance<T: Copy + Into<u32>>(rgb: &[T], channels: usize, from: impl Fn(u32) -> T) -> Vec<T> {
    rgb.chunks_exact(channels)
        .map(|p| from((2126 * p[0].into() + 7152 * p[1].into() + 722 * p[2].into()) / 10000))
        .collect()
}

/// The note attached to fields converted from colour.
pub(crate) const LUMINANCE_NOTE: &str =
    "colour image converted to luminance (Rec. 709 weights 0.2126 R + 0.7152 G + 0.0722 B)";
