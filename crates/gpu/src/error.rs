//! How a GPU path fails: shared by the CUDA backend and the stand-in built without it.

#[derive(Clone, Debug, thiserror::Error)]
pub enum GpuError {
    #[error("CUDA: {0}")]
    Driver(String),
    #[error("the CUDA backend has no ECC for {0} fields yet")]
    Unsupported(&'static str),
    #[error("{0}")]
    TooLarge(String),
    #[error("cancelled")]
    Cancelled,
    /// The field's file could not be read (the message names it).
    #[error("{0}")]
    Read(String),
    /// No usable device: no driver, no device, or kernels the driver cannot load.
    #[error("{0}")]
    Unavailable(String),
}

impl From<topoview_core::control::Cancelled> for GpuError {
    fn from(_: topoview_core::control::Cancelled) -> Self {
        GpuError::Cancelled
    }
}
