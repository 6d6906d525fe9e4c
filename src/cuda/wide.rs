//! The ECC on the GPU for u32, i32, f32 and f64 fields, exact for any number of distinct values:
//! each voxel's (key, change) pair is listed on the GPU, the list is sorted by key with a stable
//! LSD radix sort (8 bits a pass), and the changes of equal keys are summed; only the distinct
//! values and their sums come back. Keys are those of kernels/ecc.cu (`Keys<T>`).

use super::Kernels;
use super::{DeviceSample, Gpu, GpuError};
use crate::control::Control;
use crate::field::ScalarField;
use crate::topo::ecc::{Construction, Ecc, EccOptions, Filtration};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use rayon::prelude::*;
use std::time::Instant;

const TILE: usize = 256 * 16;
const ROWS: u32 = 8;

/// Bytes of device memory per voxel: the field, two (key, change) lists, head flags.
fn bytes_per_voxel(sample: usize) -> usize {
    sample + 2 * 9 + 4 + 16
}

impl Gpu {
    pub(super) fn ecc_wide<T: DeviceSample>(
        &self,
        field: &ScalarField,
        data: &[T],
        opts: &EccOptions,
        ctl: &Control,
    ) -> Result<(Ecc, super::GpuEccTimes), GpuError> {
        let start = Instant::now();
        self.ctx.bind_to_thread()?;
        let s = &self.stream;
        // Room for the field as well as the lists, before uploading it.
        self.check_room(data.len(), bytes_per_voxel(std::mem::size_of::<T>()), field.dtype())?;
        let t = Instant::now();
        let d = s.clone_htod(data)?;
        s.synchronize()?;
        let upload = t.elapsed().as_secs_f64();
        let (ecc, mut times) = self.ecc_resident(&d, field.shape(), opts, ctl)?;
        times.upload = upload;
        times.total = start.elapsed().as_secs_f64();
        Ok((ecc, times))
    }

    /// Whether `n` voxels needing `bytes_each` bytes of GPU memory apiece fit in what is free
    /// (and their list indices in u32).
    fn check_room(&self, n: usize, bytes_each: usize, dtype: crate::field::Dtype) -> Result<(), GpuError> {
        let (free, _) = self.memory()?;
        if n >= (u32::MAX as usize) - TILE || n * bytes_each > free / 10 * 9 {
            return Err(GpuError::TooLarge(format!(
                "the exact ECC of {n} {} voxels needs {} MiB of GPU memory ({} MiB free)",
                dtype.name(),
                (n * bytes_each) >> 20,
                free >> 20
            )));
        }
        Ok(())
    }

    /// The exact ECC of a field already on the GPU (`d`, of `shape`): only the distinct values
    /// and their chi come back.
    pub(super) fn ecc_resident<T: DeviceSample>(
        &self,
        d: &CudaSlice<T>,
        shape: &[usize],
        opts: &EccOptions,
        ctl: &Control,
    ) -> Result<(Ecc, super::GpuEccTimes), GpuError> {
        let (dtype, name) = (T::DTYPE, T::NAME);
        let start = Instant::now();
        self.ctx.bind_to_thread()?;
        let s = &self.stream;
        let n = d.len();
        let dims = crate::field::padded_dims(shape);
        self.check_room(n, bytes_per_voxel(0), dtype)?;
        let t = Instant::now();
        let mut keys: CudaSlice<u64> = s.alloc_zeros(n)?;
        let mut vals: CudaSlice<i8> = s.alloc_zeros(n)?;
        let mut count: CudaSlice<u32> = s.alloc_zeros(1)?;
        let [nx, ny, nz] = dims;
        let sup = opts.filtration == Filtration::Superlevel;
        let flags = sup as i32 | ((opts.construction == Construction::Vertices) as i32) << 1;
        let func = self.function(
            Kernels::Ecc,
            &format!("pairs_{name}_{}", if shape.len() == 3 { "3d" } else { "2d" }),
        )?;
        let mut z0 = 0;
        while z0 < nz {
            let z1 = (z0 + 65_535).min(nz);
            let geo = super::ecc::Geo::new([nx, ny, nz], 0, z0, flags);
            let cfg = LaunchConfig {
                grid_dim: ((nx as u32).div_ceil(128), (ny as u32).div_ceil(ROWS), (z1 - z0) as u32),
                block_dim: (128, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = s.launch_builder(&func);
            b.arg(d).arg(&geo).arg(&mut keys).arg(&mut vals).arg(&mut count);
            // SAFETY: d holds the whole field; keys and vals hold one entry per voxel.
            unsafe { b.launch(cfg) }?;
            z0 = z1;
        }
        let m = s.clone_dtoh(&count)?[0] as usize;
        if ctl.cancelled() {
            return Err(GpuError::Cancelled);
        }
        let key_bits = if std::mem::size_of::<T>() == 8 { 64 } else { 32 };
        if m > 0 {
            self.radix_sort(&mut keys, &mut vals, m, key_bits)?;
        }
        s.synchronize()?;
        let kernels = t.elapsed().as_secs_f64();
        ctl.tick(n as u64 / 2);
        let t = Instant::now();
        let (ukeys, sums) = if m > 0 {
            self.sum_runs(&keys, &vals, m, key_bits)?
        } else {
            (KeysBack::K64(Vec::new()), SumsBack::S64(Vec::new()))
        };
        let download = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let thresholds = ukeys.thresholds(dtype, sup);
        let chi = sums.chi();
        let host = t.elapsed().as_secs_f64();
        ctl.tick(n as u64 - n as u64 / 2);
        let total = start.elapsed().as_secs_f64();
        let times = super::GpuEccTimes { upload: 0.0, kernels, download, host, total, chunks: 1 };
        Ok((
            Ecc { dtype, construction: opts.construction, filtration: opts.filtration, thresholds, chi },
            times,
        ))
    }

    fn radix_sort(
        &self,
        keys: &mut CudaSlice<u64>,
        vals: &mut CudaSlice<i8>,
        m: usize,
        bits: u32,
    ) -> Result<(), GpuError> {
        let s = &self.stream;
        let blocks = m.div_ceil(TILE);
        let count_f = self.function(Kernels::Ecc, "radix_count")?;
        let scatter_f = self.function(Kernels::Ecc, "radix_scatter")?;
        let mut counts: CudaSlice<u32> = s.alloc_zeros(256 * blocks)?;
        let mut keys_b: CudaSlice<u64> = s.alloc_zeros(m)?;
        let mut vals_b: CudaSlice<i8> = s.alloc_zeros(m)?;
        let cfg =
            LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let m32 = m as u32;
        let mut in_a = true;
        for shift in (0..bits as i32).step_by(8) {
            let (src_k, src_v, dst_k, dst_v) = if in_a {
                (&*keys, &*vals, &mut keys_b, &mut vals_b)
            } else {
                (&keys_b, &vals_b, &mut *keys, &mut *vals)
            };
            let mut b = s.launch_builder(&count_f);
            b.arg(src_k).arg(&m32).arg(&shift).arg(&mut counts);
            // SAFETY: src_k holds m keys; counts holds 256 per block.
            unsafe { b.launch(cfg) }?;
            self.scan(&mut counts, 256 * blocks, true)?;
            let mut b = s.launch_builder(&scatter_f);
            b.arg(src_k).arg(src_v).arg(&m32).arg(&shift).arg(&counts).arg(dst_k).arg(dst_v);
            // SAFETY: the offsets are an exclusive scan of this pass's counts, so every element
            // lands at a distinct index below m.
            unsafe { b.launch(cfg) }?;
            in_a = !in_a;
        }
        if !in_a {
            s.memcpy_dtod(&keys_b, keys)?;
            s.memcpy_dtod(&vals_b, vals)?;
        }
        Ok(())
    }

    /// In-place scan of the first `n` entries of `data` (exclusive or inclusive).
    fn scan(&self, data: &mut CudaSlice<u32>, n: usize, exclusive: bool) -> Result<(), GpuError> {
        let s = &self.stream;
        let blocks = n.div_ceil(1024);
        let mut sums: CudaSlice<u32> = s.alloc_zeros(blocks.max(1))?;
        let f = self.function(Kernels::Ecc, "scan_u32")?;
        let (n32, ex) = (n as u32, exclusive as i32);
        let cfg =
            LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
        let mut b = s.launch_builder(&f);
        b.arg(&mut *data).arg(&n32).arg(&ex).arg(&mut sums);
        // SAFETY: data holds n entries, sums one per block.
        unsafe { b.launch(cfg) }?;
        if blocks > 1 {
            self.scan(&mut sums, blocks, true)?;
            let add = self.function(Kernels::Ecc, "scan_add")?;
            let mut b = s.launch_builder(&add);
            b.arg(&mut *data).arg(&n32).arg(&sums);
            // SAFETY: as above.
            unsafe { b.launch(cfg) }?;
        }
        Ok(())
    }

    /// The distinct keys of the sorted list and the sum of the changes of each.
    fn sum_runs(
        &self,
        keys: &CudaSlice<u64>,
        vals: &CudaSlice<i8>,
        m: usize,
        key_bits: u32,
    ) -> Result<(KeysBack, SumsBack), GpuError> {
        let s = &self.stream;
        let mut head: CudaSlice<u32> = s.alloc_zeros(m)?;
        let m32 = m as u32;
        let cfg = LaunchConfig {
            grid_dim: (m.div_ceil(256) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mark = self.function(Kernels::Ecc, "mark_heads")?;
        let mut b = s.launch_builder(&mark);
        b.arg(keys).arg(&m32).arg(&mut head);
        // SAFETY: keys and head hold m entries.
        unsafe { b.launch(cfg) }?;
        self.scan(&mut head, m, false)?;
        let segments = s.clone_dtoh(&head.slice(m - 1..m))?[0] as usize;
        let mut ukeys: CudaSlice<u64> = s.alloc_zeros(segments)?;
        let mut sums: CudaSlice<u64> = s.alloc_zeros(segments)?;
        let reduce = self.function(Kernels::Ecc, "reduce_segments")?;
        let mut b = s.launch_builder(&reduce);
        b.arg(keys).arg(vals).arg(&m32).arg(&head).arg(&mut ukeys).arg(&mut sums);
        // SAFETY: head holds segment numbers 1..=segments for m entries.
        unsafe { b.launch(cfg) }?;
        drop(head);
        // Bring back half the bytes where the values allow it.
        let n32 = segments as u32;
        let cfg = LaunchConfig {
            grid_dim: (segments.div_ceil(256) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let keys_back = if key_bits == 32 {
            let mut k32: CudaSlice<u32> = s.alloc_zeros(segments)?;
            let f = self.function(Kernels::Ecc, "narrow_keys")?;
            let mut b = s.launch_builder(&f);
            b.arg(&ukeys).arg(&mut k32).arg(&n32);
            // SAFETY: both hold `segments` entries.
            unsafe { b.launch(cfg) }?;
            KeysBack::K32(s.clone_dtoh(&k32)?)
        } else {
            KeysBack::K64(s.clone_dtoh(&ukeys)?)
        };
        let mut s32: CudaSlice<i32> = s.alloc_zeros(segments)?;
        let mut overflow: CudaSlice<u32> = s.alloc_zeros(1)?;
        let f = self.function(Kernels::Ecc, "narrow_sums")?;
        let mut b = s.launch_builder(&f);
        b.arg(&sums).arg(&mut s32).arg(&n32).arg(&mut overflow);
        // SAFETY: sums and s32 hold `segments` entries, overflow one.
        unsafe { b.launch(cfg) }?;
        let sums_back = if s.clone_dtoh(&overflow)?[0] == 0 {
            SumsBack::S32(s.clone_dtoh(&s32)?)
        } else {
            SumsBack::S64(s.clone_dtoh(&sums)?)
        };
        Ok((keys_back, sums_back))
    }
}

/// The distinct keys as they come back: 32 bits for 32-bit types.
enum KeysBack {
    K32(Vec<u32>),
    K64(Vec<u64>),
}

/// The change sums per key as they come back: i32 unless one does not fit.
enum SumsBack {
    S32(Vec<i32>),
    S64(Vec<u64>),
}

impl KeysBack {
    fn thresholds(&self, dtype: crate::field::Dtype, sup: bool) -> Vec<f64> {
        match self {
            KeysBack::K32(k) => k.par_iter().map(|&k| value_of_key(dtype, k as u64, sup)).collect(),
            KeysBack::K64(k) => k.par_iter().map(|&k| value_of_key(dtype, k, sup)).collect(),
        }
    }
}

impl SumsBack {
    fn chi(&self) -> Vec<i64> {
        match self {
            SumsBack::S32(v) => prefix_sums(v, |x| x as i64),
            SumsBack::S64(v) => prefix_sums(v, |x| x as i64),
        }
    }
}

/// Running sums of the per-value changes (as i64), in parallel: chunk totals, then each chunk
/// from its offset.
fn prefix_sums<T: Copy + Sync>(sums: &[T], wide: impl Fn(T) -> i64 + Sync) -> Vec<i64> {
    const CHUNK: usize = 1 << 16;
    let totals: Vec<i64> = sums.par_chunks(CHUNK).map(|c| c.iter().map(|&x| wide(x)).sum()).collect();
    let mut offsets = Vec::with_capacity(totals.len());
    let mut acc = 0i64;
    for t in totals {
        offsets.push(acc);
        acc += t;
    }
    let mut out = vec![0i64; sums.len()];
    out.par_chunks_mut(CHUNK).zip(sums.par_chunks(CHUNK)).zip(offsets).for_each(|((o, c), mut acc)| {
        for (o, &x) in o.iter_mut().zip(c) {
            acc += wide(x);
            *o = acc;
        }
    });
    out
}

/// The sample value of a key made by `Keys<T>` in kernels/ecc.cu.
fn value_of_key(dtype: crate::field::Dtype, k: u64, sup: bool) -> f64 {
    use crate::field::Dtype;
    match dtype {
        Dtype::U32 => (if sup { !(k as u32) } else { k as u32 }) as f64,
        Dtype::I32 => ((if sup { !(k as u32) } else { k as u32 }) ^ 0x8000_0000) as i32 as f64,
        Dtype::F32 => {
            let o = if sup { !(k as u32) } else { k as u32 };
            let b = if o & 0x8000_0000 != 0 { o & 0x7fff_ffff } else { !o };
            f32::from_bits(b) as f64
        }
        _ => {
            let o = if sup { !k } else { k };
            let b = if o >> 63 != 0 { o & 0x7fff_ffff_ffff_ffff } else { !o };
            f64::from_bits(b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::value_of_key;
    use crate::field::Dtype;

    /// The host inverse of the kernels' key for a few values (the GPU tests check the rest).
    #[test]
    fn prefix_sums_run_across_chunks() {
        let v: Vec<u64> = (0..200_000i64).map(|i| ((i % 7) - 3) as u64).collect();
        let mut acc = 0i64;
        let want: Vec<i64> = v
            .iter()
            .map(|&x| {
                acc += x as i64;
                acc
            })
            .collect();
        assert_eq!(super::prefix_sums(&v, |x| x as i64), want);
    }

    #[test]
    fn keys_invert() {
        let f32_key = |v: f32, sup: bool| {
            let b = (v + 0.0).to_bits();
            let o = if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 };
            if sup { (!o) as u64 } else { o as u64 }
        };
        for v in [-3.5f32, -0.0, 0.0, 1e-30, 7.25, f32::INFINITY, f32::NEG_INFINITY] {
            for sup in [false, true] {
                assert_eq!(value_of_key(Dtype::F32, f32_key(v, sup), sup), (v + 0.0) as f64);
            }
        }
        assert!(f32_key(-1.0, false) < f32_key(-0.5, false) && f32_key(-0.5, false) < f32_key(2.0, false));
        assert_eq!(value_of_key(Dtype::I32, (((-7i32) as u32) ^ 0x8000_0000) as u64, false), -7.0);
        assert_eq!(value_of_key(Dtype::U32, (!5u32) as u64, true), 5.0);
    }
}
