//! Fields stored as one uncompressed block of samples: headerless raw files, uncompressed NIfTI
//! (single file or `.hdr`/`.img` pair), NRRD with raw encoding and uncompressed MetaImage. Their
//! samples can be read a slab at a time straight from the file, so computations that stream
//! (the ECC from the command line) need memory independent of the file's size.

use super::{
    Format, FormatError, OpenOptions, RawSpec, ReadError, Stored, check_dims, format_of, io_message,
    metaimage, nifti, nrrd, read_full,
};
use crate::field::{Dtype, Grid, SampleSource, SourceError};
use std::fs::File;
use std::path::{Path, PathBuf};

/// Where a field's samples lie, and what else its reader would tell.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// The file holding the samples (the header itself, or the data file it names).
    pub data: PathBuf,
    /// The samples' layout in `data`: x fastest, from byte `offset` on.
    pub spec: RawSpec,
    pub spacing: [f64; 3],
    /// What the reader would note (see [`crate::field::ScalarField::notes`]).
    pub notes: Vec<String>,
}

impl Block {
    pub fn dims(&self) -> &[usize] {
        &self.spec.dims
    }

    pub fn dtype(&self) -> Dtype {
        self.spec.dtype
    }

    pub fn grid(&self) -> Grid {
        Grid { shape: self.spec.dims.clone(), dtype: self.spec.dtype, spacing: self.spacing }
    }

    /// Opens the data file for reading samples.
    pub fn reader(&self) -> Result<BlockReader, ReadError> {
        super::regular_file(&self.data).map_err(|why| ReadError::new(&self.data, why))?;
        let file = File::open(&self.data).map_err(|e| ReadError::new(&self.data, io_message(&e)))?;
        Ok(BlockReader {
            grid: self.grid(),
            file,
            path: self.data.clone(),
            offset: self.spec.offset,
            swap: self.spec.endian != super::Endian::native(),
        })
    }
}

/// Reads runs of samples of a [`Block`] from its file, in native byte order.
#[derive(Debug)]
pub struct BlockReader {
    grid: Grid,
    file: File,
    path: PathBuf,
    offset: u64,
    swap: bool,
}

impl BlockReader {
    /// Fills `dst` with the samples from index `first` on. Reads are positional (the file has
    /// no cursor to share), so any number of threads may read through one reader at once.
    pub fn read<T: bytemuck::Pod>(&self, first: usize, dst: &mut [T]) -> Result<(), ReadError> {
        let size = std::mem::size_of::<T>();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(dst);
        self.read_bytes(self.offset + first as u64 * size as u64, bytes)?;
        self.to_native(bytes, size);
        Ok(())
    }

    /// [`BlockReader::read`] by several threads of the current rayon pool at once, each reading
    /// its own part of `dst`: one thread copies from the page cache at about 8 GB/s, below what
    /// a GPU takes in. For callers whose pool is otherwise idle (the GPU's staging).
    pub fn read_parallel<T: bytemuck::Pod + Send>(
        &self,
        first: usize,
        dst: &mut [T],
    ) -> Result<(), ReadError> {
        use rayon::prelude::*;
        let size = std::mem::size_of::<T>();
        let at = self.offset + first as u64 * size as u64;
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(dst);
        // A whole number of samples per part, so that each part is put in native order alone.
        let part = (4 << 20) / size * size;
        bytes.par_chunks_mut(part).enumerate().try_for_each(|(i, p)| {
            self.read_bytes(at + (i * part) as u64, p)?;
            self.to_native(p, size);
            Ok(())
        })
    }

    /// Fills `bytes` from byte `at` of the file, as stored.
    fn read_bytes(&self, at: u64, bytes: &mut [u8]) -> Result<(), ReadError> {
        let got = read_full(&mut Positional { file: &self.file, at }, bytes)
            .map_err(|e| ReadError::new(&self.path, format!("reading the samples at byte {at}: {e}")))?;
        if got < bytes.len() {
            // The file shrank since its size was checked.
            return Err(ReadError::new(
                &self.path,
                format!("truncated: the file ends {got} bytes into a read of {} at byte {at}", bytes.len()),
            ));
        }
        Ok(())
    }

    /// Swaps the bytes of each sample of `size` bytes when the file's order is not this machine's.
    fn to_native(&self, bytes: &mut [u8], size: usize) {
        if self.swap && size > 1 {
            for s in bytes.chunks_exact_mut(size) {
                s.reverse();
            }
        }
    }
}

/// A file read from a position of its own: `pread` on Unix, `seek_read` on Windows (which
/// moves the file's cursor, but no read here depends on it).
struct Positional<'a> {
    file: &'a File,
    at: u64,
}

impl std::io::Read for Positional<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.at)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

impl SampleSource for BlockReader {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn read_at(&self, first: usize, dst: &mut [u8]) -> Result<(), SourceError> {
        let size = self.grid.dtype.size();
        let at = self.offset + (first * size) as u64;
        self.read_bytes(at, dst).map_err(|e| SourceError(e.to_string()))?;
        self.to_native(dst, size);
        Ok(())
    }
}

/// The field at `path` as a [`Block`] when its format stores it as one (see the module docs)
/// and its reader would return the samples unchanged (no gzip or zlib, no colour, no NIfTI
/// scaling); `None` otherwise, and for data shorter than the header says, so that reading the
/// file whole reports what is wrong with it.
pub fn block(path: &Path, opts: &OpenOptions) -> Result<Option<Block>, ReadError> {
    let err = |e: FormatError| ReadError::of(path, e);
    let found = match format_of(path, opts)? {
        Format::Raw(spec) => {
            let n = check_dims(&spec.dims).map_err(err)?;
            let need = n as u128 * spec.dtype.size() as u128 + spec.offset as u128;
            // A size mismatch is for the raw reader to report.
            (super::file_len(path) as u128 == need).then(|| Block {
                data: path.to_path_buf(),
                spec,
                spacing: [1.0; 3],
                notes: Vec::new(),
            })
        }
        Format::Nifti => nifti::stored(path, opts.volume).map_err(err)?.and_then(Block::of_stored),
        Format::Nrrd => nrrd::stored(path).map_err(err)?.and_then(Block::of_stored),
        Format::MetaImage => metaimage::stored(path).map_err(err)?.and_then(Block::of_stored),
        Format::Image2d | Format::Tiff => None,
    };
    Ok(found)
}

impl Block {
    /// The block a header describes, when the file holds all of its samples (reading the file
    /// whole reports a short one, and a data file that is a folder or a pipe with the header's
    /// name).
    fn of_stored(s: Stored) -> Option<Block> {
        super::regular_file(&s.data).ok()?;
        let n: u64 = s.dims.iter().map(|&d| d as u64).product();
        let need = n.saturating_mul(s.dtype.size() as u64);
        let offset = samples_offset(&s.data, s.start, need, s.skip)?;
        let spec = RawSpec { dims: s.dims, dtype: s.dtype, endian: s.endian, offset };
        Some(Block { data: s.data, spec, spacing: s.spacing, notes: s.notes })
    }
}

/// Where `need` bytes of samples start in the file `data`, after a header of `start` bytes and
/// `skip` more (-1: the samples end the file, as NRRD's `byte skip: -1` and MetaImage's
/// `HeaderSize = -1` say); `None` when the file is too short to hold them there.
fn samples_offset(data: &Path, start: u64, need: u64, skip: i64) -> Option<u64> {
    let extra = super::file_len(data).saturating_sub(start).checked_sub(need)?;
    let skip = if skip == -1 { extra } else { u64::try_from(skip).ok()? };
    (skip <= extra).then_some(start + skip)
}
