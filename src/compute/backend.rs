//! Which backend runs the ECC and smoothing: CUDA when a device and driver are usable (and the
//! job is one the kernels cover), else all CPU cores; every fallback says why.

use crate::control::Control;
use crate::cuda::{Gpu, GpuError};
use crate::field::ScalarField;
use crate::topo::ecc::{self, Ecc, EccError, EccOptions, NanPolicy};
use crate::topo::smooth::{self, Smoothing};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Choice {
    /// CUDA when a device is usable, else the CPU.
    #[default]
    Auto,
    /// CUDA, or an error saying why not.
    Cuda,
    Cpu,
}

pub struct Backend {
    gpu: Option<Gpu>,
    /// Why the CPU is used (no driver, no device, --backend cpu), when it is.
    why_cpu: Option<String>,
    /// Device memory the ECC may use for a field's slabs (default: 80% of the free memory).
    pub gpu_memory: Option<usize>,
}

/// What ran a computation, and why not the GPU when it was the CPU although one is there.
#[derive(Clone, Debug, PartialEq)]
pub struct Ran {
    pub on_gpu: bool,
    pub fallback: Option<String>,
}

impl Backend {
    pub fn new(choice: Choice, gpu_memory: Option<usize>) -> Result<Backend, String> {
        let (gpu, why_cpu) = match choice {
            Choice::Cpu => (None, Some("--backend cpu".to_string())),
            Choice::Cuda => (Some(Gpu::open()?), None),
            Choice::Auto => match Gpu::open() {
                Ok(g) => (Some(g), None),
                Err(why) => (None, Some(why)),
            },
        };
        Ok(Backend { gpu, why_cpu, gpu_memory })
    }

    pub fn cpu() -> Backend {
        Backend { gpu: None, why_cpu: Some("CPU chosen".into()), gpu_memory: None }
    }

    pub fn has_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    /// The backend in words: "CUDA: NVIDIA H100 80GB HBM3" or "CPU, 16 threads (no CUDA driver found)".
    pub fn describe(&self) -> String {
        match (&self.gpu, &self.why_cpu) {
            (Some(g), _) => format!("CUDA: {}", g.name),
            (None, Some(why)) => format!("CPU, {} threads ({why})", rayon::current_num_threads()),
            (None, None) => format!("CPU, {} threads", rayon::current_num_threads()),
        }
    }

    /// The ECC of `field`, on the GPU when it can be; the CPU reference otherwise.
    pub fn ecc(&self, field: &ScalarField, opts: &EccOptions, ctl: &Control) -> Result<(Ecc, Ran), EccError> {
        if let Some(g) = &self.gpu {
            // The kernels leave NaN out; rejecting is the CPU's check, made before either runs.
            if opts.nan == NanPolicy::Reject {
                let (nan, inf) = ecc::count_non_finite(field);
                if nan + inf > 0 {
                    return Err(EccError::NonFinite { nan, inf });
                }
            }
            match g.ecc(field, opts, self.gpu_memory, ctl) {
                Ok((e, _)) => return Ok((e, Ran { on_gpu: true, fallback: None })),
                Err(GpuError::Cancelled) => return Err(EccError::Cancelled),
                Err(why) => {
                    let e = ecc::ecc(field, opts, ctl)?;
                    return Ok((e, Ran { on_gpu: false, fallback: Some(format!("{why}; used the CPU")) }));
                }
            }
        }
        Ok((ecc::ecc(field, opts, ctl)?, Ran { on_gpu: false, fallback: None }))
    }

    /// Smooths `field`, on the GPU when it can (the result is the same bit for bit).
    pub fn smooth(
        &self,
        field: &ScalarField,
        s: &Smoothing,
        ctl: &Control,
    ) -> Result<(ScalarField, Ran), smooth::SmoothError> {
        if let Some(g) = &self.gpu
            && valid_smoothing(field, s)
        {
            match g.smooth(field, s) {
                Ok(out) => {
                    ctl.tick((field.len() * field.ndim()) as u64);
                    return Ok((out, Ran { on_gpu: true, fallback: None }));
                }
                Err(why) => {
                    let out = smooth::smooth(field, s, ctl)?;
                    return Ok((out, Ran { on_gpu: false, fallback: Some(format!("{why}; used the CPU")) }));
                }
            }
        }
        Ok((smooth::smooth(field, s, ctl)?, Ran { on_gpu: false, fallback: None }))
    }

    /// Smooths `field` and computes the ECC of the result; on the GPU the smoothed field stays
    /// there for the ECC (it comes back once, with the curve).
    pub fn smooth_ecc(
        &self,
        field: &ScalarField,
        s: &Smoothing,
        opts: &EccOptions,
        ctl: &Control,
    ) -> Result<(ScalarField, Ecc, Ran), String> {
        if let Some(g) = &self.gpu
            && valid_smoothing(field, s)
        {
            match g.smooth_ecc(field, s, opts, ctl) {
                Ok((f, e)) => {
                    ctl.tick((field.len() * (field.ndim() + 1)) as u64);
                    return Ok((f, e, Ran { on_gpu: true, fallback: None }));
                }
                Err(GpuError::Cancelled) => return Err("cancelled".into()),
                Err(why) => {
                    let f = smooth::smooth(field, s, ctl).map_err(|e| e.to_string())?;
                    let e = ecc::ecc(&f, opts, ctl).map_err(|e| e.to_string())?;
                    return Ok((f, e, Ran { on_gpu: false, fallback: Some(format!("{why}; used the CPU")) }));
                }
            }
        }
        let f = smooth::smooth(field, s, ctl).map_err(|e| e.to_string())?;
        let (e, ran) = self.ecc(&f, opts, ctl).map_err(|e| e.to_string())?;
        Ok((f, e, ran))
    }
}

/// Parameters the GPU path accepts; others go to the CPU, which reports what is wrong.
fn valid_smoothing(field: &ScalarField, s: &Smoothing) -> bool {
    s.sigma.is_finite()
        && s.sigma >= 0.0
        && s.truncate.is_finite()
        && s.truncate > 0.0
        && s.sigma_voxels(field).iter().all(|&v| s.truncate * v <= 1e6)
}
