//! The ECC on the GPU for u32, i32, f32 and f64 fields, exact for any number of distinct values:
//! each voxel's (key, change) pair is listed on the GPU, the list is sorted by key with a stable
//! LSD radix sort (8 bits a pass), and the changes of equal keys are summed; only the distinct
//! values and their sums come back. Keys are those of kernels/ecc.cu (`Keys<T>`).

use super::Kernels;
use super::{DeviceSample, Gpu, GpuError};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, LaunchConfig, PushKernelArg};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;
use topoview_core::control::Control;
use topoview_core::field::ScalarField;
use topoview_core::topo::ecc::{Chi, Construction, Ecc, EccOptions, Filtration};

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
        // Room for the field as well as the lists, before uploading it.
        self.check_room(data.len(), bytes_per_voxel(std::mem::size_of::<T>()), field.dtype())?;
        let t = Instant::now();
        let d = self.upload_staged(data)?;
        let upload = t.elapsed().as_secs_f64();
        let (ecc, mut times) = self.ecc_resident(&d, field.shape(), opts, ctl)?;
        times.upload = upload;
        times.total = start.elapsed().as_secs_f64();
        Ok((ecc, times))
    }

    /// Whether `n` voxels needing `bytes_each` bytes of GPU memory apiece fit in what is free
    /// (and their list indices in u32).
    fn check_room(
        &self,
        n: usize,
        bytes_each: usize,
        dtype: topoview_core::field::Dtype,
    ) -> Result<(), GpuError> {
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
        let dims = topoview_core::field::padded_dims(shape);
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
        let narrow = topoview_core::topo::ecc::chi::fits_i32(shape);
        let (thresholds, chi) = if m > 0 {
            let (ukeys, sums) = self.sum_runs(&keys, &vals, m, key_bits)?;
            drop((keys, vals));
            self.curve_back::<T>(&ukeys, &sums, narrow, sup)?
        } else {
            (Vec::new(), Chi::with_len(0, narrow))
        };
        // Summing runs, copying the distinct values back and making the curve of them overlap.
        let download = t.elapsed().as_secs_f64();
        ctl.tick(n as u64 - n as u64 / 2);
        let total = start.elapsed().as_secs_f64();
        let times = super::GpuEccTimes { upload: 0.0, kernels, download, total, chunks: 1 };
        Ok((
            Ecc {
                construction: opts.construction,
                filtration: opts.filtration,
                thresholds: T::wrap(thresholds),
                chi,
            },
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

    /// The distinct keys of the sorted list and the sum of the changes of each, on the device
    /// in as few bytes as they fit.
    fn sum_runs(
        &self,
        keys: &CudaSlice<u64>,
        vals: &CudaSlice<i8>,
        m: usize,
        key_bits: u32,
    ) -> Result<(KeysOn, SumsOn), GpuError> {
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
            KeysOn::K32(k32)
        } else {
            KeysOn::K64(ukeys)
        };
        let mut s32: CudaSlice<i32> = s.alloc_zeros(segments)?;
        let mut overflow: CudaSlice<u32> = s.alloc_zeros(1)?;
        let f = self.function(Kernels::Ecc, "narrow_sums")?;
        let mut b = s.launch_builder(&f);
        b.arg(&sums).arg(&mut s32).arg(&n32).arg(&mut overflow);
        // SAFETY: sums and s32 hold `segments` entries, overflow one.
        unsafe { b.launch(cfg) }?;
        let sums_on = if s.clone_dtoh(&overflow)?[0] == 0 { SumsOn::S32(s32) } else { SumsOn::S64(sums) };
        Ok((keys_back, sums_on))
    }

    /// The curve of the distinct keys and their sums: copied back a chunk at a time through the
    /// pinned staging buffers, each chunk turned into thresholds (in the field's type) and
    /// running chi (32-bit if `narrow`) on all cores while the next one crosses.
    fn curve_back<T: DeviceSample>(
        &self,
        keys: &KeysOn,
        sums: &SumsOn,
        narrow: bool,
        sup: bool,
    ) -> Result<(Vec<T>, Chi), GpuError> {
        let n = match keys {
            KeysOn::K32(k) => k.len(),
            KeysOn::K64(k) => k.len(),
        };
        // Zeroed by the allocator (pages mapped on first write, by the threads that fill them).
        let mut thresholds = bytemuck::zeroed_vec::<T>(n);
        let mut chi = Chi::with_len(n, narrow);
        let mut acc = 0i64;
        macro_rules! back {
            ($k:expr, $s:expr, $wide:expr) => {
                self.download_staged($k, $s, |first, k, s| {
                    let t = &mut thresholds[first..first + k.len()];
                    t.par_iter_mut().zip(k.par_iter()).for_each(|(t, &k)| *t = value_of_key(k as u64, sup));
                    acc = chi.fill(first, s, acc, $wide);
                })
            };
        }
        match (keys, sums) {
            (KeysOn::K32(k), SumsOn::S32(s)) => back!(k, s, |x: i32| x as i64),
            (KeysOn::K32(k), SumsOn::S64(s)) => back!(k, s, |x: u64| x as i64),
            (KeysOn::K64(k), SumsOn::S32(s)) => back!(k, s, |x: i32| x as i64),
            (KeysOn::K64(k), SumsOn::S64(s)) => back!(k, s, |x: u64| x as i64),
        }?;
        Ok((thresholds, chi))
    }

    /// `data` copied into a new device buffer through the pinned staging buffers, 64 MiB at a
    /// time: each chunk filled on all cores while the one before crosses (a pageable copy of
    /// the whole field runs at a fraction of the bus's speed).
    pub(super) fn upload_staged<T: DeviceSample>(&self, data: &[T]) -> Result<CudaSlice<T>, GpuError> {
        let s = &self.stream;
        // SAFETY: every element is written by the copies below before a kernel reads it.
        let mut d: CudaSlice<T> = unsafe { s.alloc(data.len()) }?;
        s.synchronize()?;
        let mut staged = self.staged()?;
        let stage = stage_bytes(std::mem::size_of_val(data));
        staged.buffers.ensure_pinned(self, stage)?;
        let per = stage / std::mem::size_of::<T>();
        for (k, chunk) in data.chunks(per).enumerate() {
            let (st, i) = (&staged.streams[k % 2], k % 2);
            // The copy out of this buffer two chunks ago must be done before it is refilled.
            st.synchronize()?;
            let bytes = std::mem::size_of_val(chunk);
            let host: &mut [T] =
                bytemuck::cast_slice_mut(&mut staged.buffers.pinned[i].as_mut_slice()?[..bytes]);
            super::ecc::copy_parallel(host, chunk);
            let mut dst = d.slice_mut(k * per..k * per + chunk.len());
            st.memcpy_htod(&*host, &mut dst)?;
        }
        for st in &staged.streams {
            st.synchronize()?;
        }
        Ok(d)
    }

    /// Copies `keys` and `sums` (of one length) back through the pinned staging buffers, a
    /// chunk at a time, handing each to `each(first index, keys, sums)` while the next crosses.
    fn download_staged<K: Plain, S: Plain>(
        &self,
        keys: &CudaSlice<K>,
        sums: &CudaSlice<S>,
        mut each: impl FnMut(usize, &[K], &[S]),
    ) -> Result<(), GpuError> {
        let n = keys.len().min(sums.len());
        let (kb, sb) = (std::mem::size_of::<K>(), std::mem::size_of::<S>());
        // A multiple of 64 entries, so that the sums' part of a buffer is aligned.
        let per = STAGE_BYTES / (kb + sb) / 64 * 64;
        let enqueue = |r: Range<usize>, buffer: &mut [u8], st: &Arc<CudaStream>| -> Result<(), GpuError> {
            let (kh, sh) = buffer.split_at_mut(per * kb);
            st.memcpy_dtoh(
                &keys.slice(r.clone()),
                bytemuck::cast_slice_mut::<u8, K>(&mut kh[..r.len() * kb]),
            )?;
            st.memcpy_dtoh(
                &sums.slice(r.clone()),
                bytemuck::cast_slice_mut::<u8, S>(&mut sh[..r.len() * sb]),
            )?;
            Ok(())
        };
        self.stream_down(n, per, STAGE_BYTES, enqueue, |r, buffer| {
            let (kh, sh) = buffer.split_at(per * kb);
            each(
                r.start,
                bytemuck::cast_slice(&kh[..r.len() * kb]),
                bytemuck::cast_slice(&sh[..r.len() * sb]),
            );
        })
    }

    /// `src` copied into a new vector through the pinned staging buffers, a chunk at a time,
    /// each copied out on all cores (which also touch the vector's fresh pages) while the next
    /// crosses. A pageable copy of 64 MiB took 55 ms on the H100 machine (2026-11-27).
    pub(super) fn download<T: Plain>(&self, src: &CudaView<T>) -> Result<Vec<T>, GpuError> {
        let (n, size) = (src.len(), std::mem::size_of::<T>());
        let mut out: Vec<T> = Vec::with_capacity(n);
        let stage = stage_bytes(n * size);
        let per = stage / size;
        let spare = &mut out.spare_capacity_mut()[..n];
        let enqueue = |r: Range<usize>, buffer: &mut [u8], st: &Arc<CudaStream>| -> Result<(), GpuError> {
            st.memcpy_dtoh(
                &src.slice(r.clone()),
                bytemuck::cast_slice_mut::<u8, T>(&mut buffer[..r.len() * size]),
            )?;
            Ok(())
        };
        self.stream_down(n, per, stage, enqueue, |r, buffer| {
            let from: &[T] = bytemuck::cast_slice(&buffer[..r.len() * size]);
            spare[r].par_chunks_mut(1 << 18).zip(from.par_chunks(1 << 18)).for_each(|(d, s)| {
                d.write_copy_of_slice(s);
            });
        })?;
        // SAFETY: the n entries were written above (every chunk of 0..n was handed over).
        unsafe { out.set_len(n) };
        Ok(out)
    }

    /// Streams `n` entries down through the two pinned staging buffers of at least `stage`
    /// bytes, `per` a chunk (at most `stage` bytes): `enqueue(range, buffer, stream)` queues a
    /// chunk's copies into a buffer, and `take(range, buffer)` is given the buffer once they
    /// have crossed, while the next chunk crosses into the other.
    fn stream_down(
        &self,
        n: usize,
        per: usize,
        stage: usize,
        enqueue: impl Fn(Range<usize>, &mut [u8], &Arc<CudaStream>) -> Result<(), GpuError>,
        mut take: impl FnMut(Range<usize>, &[u8]),
    ) -> Result<(), GpuError> {
        let mut staged = self.staged()?;
        staged.buffers.ensure_pinned(self, stage)?;
        let super::ecc::Staged { streams, buffers } = &mut staged;
        // What is copied was made on the main stream.
        self.stream.synchronize()?;
        let range = |k: usize| k * per..((k + 1) * per).min(n);
        let chunks = n.div_ceil(per);
        if chunks > 0 {
            enqueue(range(0), buffers.pinned[0].as_mut_slice()?, &streams[0])?;
        }
        for k in 0..chunks {
            if k + 1 < chunks {
                // Its buffer's last chunk (k - 1) was handed over before this one was waited on.
                enqueue(range(k + 1), buffers.pinned[(k + 1) % 2].as_mut_slice()?, &streams[(k + 1) % 2])?;
            }
            streams[k % 2].synchronize()?;
            take(range(k), buffers.pinned[k % 2].as_slice()?);
        }
        Ok(())
    }
}

/// What crosses the bus as it is.
pub(super) trait Plain: bytemuck::Pod + cudarc::driver::DeviceRepr + Send + Sync {}
impl<T: bytemuck::Pod + cudarc::driver::DeviceRepr + Send + Sync> Plain for T {}

/// Bytes of a pinned staging buffer that a wide field's upload or its curve's download moves
/// per chunk.
const STAGE_BYTES: usize = 64 << 20;

/// Bytes of a pinned staging buffer for a transfer of `total` bytes: an eighth of it (a MiB at
/// least, `STAGE_BYTES` at most), as pinning costs about 0.4 ms a MiB on the H100 machine (two
/// buffers of 64 MiB: 50-60 ms, 2026-11-27), more than a chunk's copy. The buffers are kept,
/// so a handle pins once for its largest transfer.
fn stage_bytes(total: usize) -> usize {
    (total / 8).next_multiple_of(1 << 20).clamp(1 << 20, STAGE_BYTES)
}

/// The distinct keys on the device: 32 bits for 32-bit types.
enum KeysOn {
    K32(CudaSlice<u32>),
    K64(CudaSlice<u64>),
}

/// The change sums per key on the device: i32 unless one does not fit.
enum SumsOn {
    S32(CudaSlice<i32>),
    S64(CudaSlice<u64>),
}

/// The sample value of a key made by `Keys<T>` in kernels/ecc.cu: the order-preserving bits
/// (NOT for superlevel sets) turned back into the type's own.
fn value_of_key<T: topoview_core::field::Sample>(k: u64, sup: bool) -> T {
    use topoview_core::field::Dtype;
    let o = if sup { !k } else { k };
    let bits = match T::DTYPE {
        Dtype::U32 => o as u32 as u64,
        Dtype::I32 => (o as u32 ^ 0x8000_0000) as u64,
        Dtype::F32 => {
            let o = o as u32;
            (if o & 0x8000_0000 != 0 { o & 0x7fff_ffff } else { !o }) as u64
        }
        Dtype::F64 => {
            if o >> 63 != 0 {
                o & 0x7fff_ffff_ffff_ffff
            } else {
                !o
            }
        }
        // Narrow types never take the wide path.
        _ => unreachable!("no wide keys for {}", T::DTYPE),
    };
    if std::mem::size_of::<T>() == 4 {
        bytemuck::pod_read_unaligned(&(bits as u32).to_ne_bytes())
    } else {
        bytemuck::pod_read_unaligned(&bits.to_ne_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::value_of_key;

    /// The host inverse of the kernels' key for a few values (the GPU tests check the rest).
    #[test]
    fn keys_invert() {
        let f32_key = |v: f32, sup: bool| {
            let b = (v + 0.0).to_bits();
            let o = if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 };
            if sup { (!o) as u64 } else { o as u64 }
        };
        for v in [-3.5f32, -0.0, 0.0, 1e-30, 7.25, f32::INFINITY, f32::NEG_INFINITY] {
            for sup in [false, true] {
                assert_eq!(value_of_key::<f32>(f32_key(v, sup), sup).to_bits(), (v + 0.0).to_bits());
            }
        }
        assert!(f32_key(-1.0, false) < f32_key(-0.5, false) && f32_key(-0.5, false) < f32_key(2.0, false));
        assert_eq!(value_of_key::<i32>((((-7i32) as u32) ^ 0x8000_0000) as u64, false), -7);
        assert_eq!(value_of_key::<u32>((!5u32) as u64, true), 5);
        let f64_key = |v: f64| {
            let b = (v + 0.0).to_bits();
            if b >> 63 != 0 { !b } else { b | 1 << 63 }
        };
        assert_eq!(value_of_key::<f64>(f64_key(-2.5), false), -2.5);
        assert_eq!(value_of_key::<f64>(!f64_key(1e300), true), 1e300);
    }
}
