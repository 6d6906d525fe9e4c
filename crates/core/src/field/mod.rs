//! The scalar field: a 1D, 2D or 3D grid of samples kept in their native type.
//!
//! Axis order is fixed for every reader: `dims = [x, y, z]` with **x varying fastest** in memory
//! (`index = x + X * (y + Y * z)`). This is NIfTI's and NRRD's on-disk (Fortran) order, so their
//! data are used as stored; a TIFF stack maps columns to x, rows to y (top row first) and pages to
//! z; a raw file's first axis in `--dims` is x. Unused axes have size 1.

pub mod affine;
pub mod orientation;
pub mod resample;
mod sample;
pub mod stats;

pub use sample::{Dtype, Key, Sample};

use std::fmt;

/// Samples of one field, in their native type.
#[derive(Clone, Debug, PartialEq)]
pub enum Samples {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Runs `$body` with `$v` bound to the typed sample slice (`&Vec<T>`) of a [`Samples`].
#[macro_export]
macro_rules! with_samples {
    ($samples:expr, $v:ident => $body:expr) => {
        match $samples {
            $crate::field::Samples::U8($v) => $body,
            $crate::field::Samples::I8($v) => $body,
            $crate::field::Samples::U16($v) => $body,
            $crate::field::Samples::I16($v) => $body,
            $crate::field::Samples::U32($v) => $body,
            $crate::field::Samples::I32($v) => $body,
            $crate::field::Samples::F32($v) => $body,
            $crate::field::Samples::F64($v) => $body,
        }
    };
}

impl Samples {
    pub fn dtype(&self) -> Dtype {
        match self {
            Samples::U8(_) => Dtype::U8,
            Samples::I8(_) => Dtype::I8,
            Samples::U16(_) => Dtype::U16,
            Samples::I16(_) => Dtype::I16,
            Samples::U32(_) => Dtype::U32,
            Samples::I32(_) => Dtype::I32,
            Samples::F32(_) => Dtype::F32,
            Samples::F64(_) => Dtype::F64,
        }
    }

    pub fn len(&self) -> usize {
        with_samples!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held by the samples.
    pub fn byte_len(&self) -> usize {
        self.len() * self.dtype().size()
    }

    /// Sample `i` as f64 (exact for every supported dtype).
    #[inline]
    pub fn get_f64(&self, i: usize) -> f64 {
        with_samples!(self, v => v[i].to_f64())
    }

    /// Every sample as f64 (exact).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        with_samples!(self, v => v.iter().map(|x| x.to_f64()).collect())
    }

    /// Values of type `dtype` given as f64 (each converted with `as`: exact for values of that
    /// type, which is what callers hold).
    pub fn from_f64(dtype: Dtype, v: &[f64]) -> Samples {
        match dtype {
            Dtype::U8 => Samples::U8(v.iter().map(|&x| x as u8).collect()),
            Dtype::I8 => Samples::I8(v.iter().map(|&x| x as i8).collect()),
            Dtype::U16 => Samples::U16(v.iter().map(|&x| x as u16).collect()),
            Dtype::I16 => Samples::I16(v.iter().map(|&x| x as i16).collect()),
            Dtype::U32 => Samples::U32(v.iter().map(|&x| x as u32).collect()),
            Dtype::I32 => Samples::I32(v.iter().map(|&x| x as i32).collect()),
            Dtype::F32 => Samples::F32(v.iter().map(|&x| x as f32).collect()),
            Dtype::F64 => Samples::F64(v.to_vec()),
        }
    }
}

/// Why a field could not be built.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FieldError {
    #[error("a field has 1 to 3 axes, got {0}")]
    BadRank(usize),
    #[error("axis {axis} has size 0 (dims {dims})")]
    EmptyAxis { axis: usize, dims: String },
    #[error("dims {0} hold more voxels than this machine can address")]
    TooLarge(String),
    #[error("dims {dims} need {expected} samples, got {got}")]
    LengthMismatch { dims: String, expected: usize, got: usize },
    #[error("voxel spacing {0:?} must be finite and positive")]
    BadSpacing([f64; 3]),
}

/// `64x64x10`-style rendering of a dims list.
pub fn dims_string(dims: &[usize]) -> String {
    dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x")
}

/// The sizes of x, y, z for the sizes of the used axes (at most 3): unused axes are 1.
pub fn padded_dims(shape: &[usize]) -> [usize; 3] {
    std::array::from_fn(|a| shape.get(a).copied().unwrap_or(1))
}

/// Number of voxels of `dims`, or `None` when the product overflows `usize`.
pub fn checked_voxels(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// A 1D, 2D or 3D scalar field. See the module docs for the axis order.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarField {
    dims: [usize; 3],
    ndim: usize,
    spacing: [f64; 3],
    samples: Samples,
    /// Voxel index (x, y, z, 1) to world coordinates (NIfTI RAS+ millimetres), when the file had one.
    pub affine: Option<[[f64; 4]; 4]>,
    /// Things the reader did that the user should know about (colour converted to luminance,
    /// one volume of a 4D file chosen, ...), one sentence each.
    pub notes: Vec<String>,
    /// Which volume of a 4D series (of how many) this field is, when the file held several.
    pub series: Option<Series>,
    /// The file says its samples are labels (NIfTI intent NIFTI_INTENT_LABEL), not
    /// intensities. Not carried to new samples ([`ScalarField::with_samples`]).
    pub labels: bool,
}

/// A field's shape, sample type and spacing: what exports record of it, known from a header
/// before (or without) reading the samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// Sizes of the used axes, x first.
    pub shape: Vec<usize>,
    pub dtype: Dtype,
    pub spacing: [f64; 3],
}

impl Grid {
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}

/// A field's samples read from storage a run at a time, for computations that stream them
/// rather than hold the field (`io::BlockReader` reads a file's).
pub trait SampleSource: Send + Sync {
    fn grid(&self) -> &Grid;
    /// Fills `dst` with the samples from index `first` on, as native-endian bytes (a whole
    /// number of samples). Several threads may read at once, each into its own `dst`.
    fn read_at(&self, first: usize, dst: &mut [u8]) -> Result<(), SourceError>;
}

/// Samples a [`SampleSource`] could not read; the message names the file and the place (the
/// source's own error, `io::ReadError` for a file, said in words: the field knows no readers).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SourceError(pub String);

/// The place of a field in a series of volumes (a 4D file's time axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Series {
    pub index: usize,
    pub count: usize,
}

impl Series {
    /// What the reader tells the user about the volume it took.
    pub fn note(&self) -> String {
        format!("4D file with {} volumes: using volume {}", self.count, self.index)
    }
}

impl ScalarField {
    /// Builds a field from `dims` (1 to 3 axes, x first) and samples in x-fastest order.
    pub fn new(dims: &[usize], samples: Samples) -> Result<Self, FieldError> {
        if dims.is_empty() || dims.len() > 3 {
            return Err(FieldError::BadRank(dims.len()));
        }
        if let Some(axis) = dims.iter().position(|&d| d == 0) {
            return Err(FieldError::EmptyAxis { axis, dims: dims_string(dims) });
        }
        let expected = checked_voxels(dims).ok_or_else(|| FieldError::TooLarge(dims_string(dims)))?;
        if expected != samples.len() {
            return Err(FieldError::LengthMismatch { dims: dims_string(dims), expected, got: samples.len() });
        }
        Ok(ScalarField {
            dims: padded_dims(dims),
            ndim: dims.len(),
            spacing: [1.0; 3],
            samples,
            affine: None,
            notes: Vec::new(),
            series: None,
            labels: false,
        })
    }

    /// Sets the voxel spacing (physical size of a voxel along x, y, z).
    pub fn with_spacing(mut self, spacing: [f64; 3]) -> Result<Self, FieldError> {
        if spacing.iter().any(|s| !s.is_finite() || *s <= 0.0) {
            return Err(FieldError::BadSpacing(spacing));
        }
        self.spacing = spacing;
        Ok(self)
    }

    /// Sizes of the x, y, z axes; axes beyond [`Self::ndim`] are 1.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// Sizes of the used axes only.
    pub fn shape(&self) -> &[usize] {
        &self.dims[..self.ndim]
    }

    pub fn ndim(&self) -> usize {
        self.ndim
    }

    pub fn spacing(&self) -> [f64; 3] {
        self.spacing
    }

    pub fn grid(&self) -> Grid {
        Grid { shape: self.shape().to_vec(), dtype: self.dtype(), spacing: self.spacing }
    }

    pub fn samples(&self) -> &Samples {
        &self.samples
    }

    pub fn into_samples(self) -> Samples {
        self.samples
    }

    pub fn dtype(&self) -> Dtype {
        self.samples.dtype()
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Linear index of voxel (x, y, z).
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        x + self.dims[0] * (y + self.dims[1] * z)
    }

    /// The voxel-to-world transform: the file's affine when it had one, else the spacing
    /// along the axes (4x4, last row 0 0 0 1).
    pub fn affine_or_spacing(&self) -> [[f64; 4]; 4] {
        let s = self.spacing;
        self.affine.unwrap_or([
            [s[0], 0.0, 0.0, 0.0],
            [0.0, s[1], 0.0, 0.0],
            [0.0, 0.0, s[2], 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ])
    }

    /// World (physical) coordinates of a position in voxel coordinates (fractions allowed).
    pub fn world(&self, p: [f64; 3]) -> [f64; 3] {
        let a = self.affine_or_spacing();
        std::array::from_fn(|r| a[r][0] * p[0] + a[r][1] * p[1] + a[r][2] * p[2] + a[r][3])
    }

    /// The reader's notes, with which volume of a series this is (what the command line and
    /// Python say; the viewer has a slider instead).
    pub fn notes_with_series(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if let Some(s) = self.series {
            notes.push(s.note());
        }
        notes
    }

    /// A field with the same geometry (dims, spacing, affine, notes, series) and new samples.
    pub fn with_samples(&self, samples: Samples) -> Result<Self, FieldError> {
        let mut f = ScalarField::new(self.shape(), samples)?;
        f.spacing = self.spacing;
        f.affine = self.affine;
        f.notes = self.notes.clone();
        f.series = self.series;
        Ok(f)
    }
}

impl fmt::Display for ScalarField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", dims_string(self.shape()), self.dtype())
    }
}
