"""The host-side ceilings of a field streamed to the GPUs from host memory (docs/PERFORMANCE.md,
#15 item 4): pinned host-to-device copies on each device alone and on all at once, and the
host's copy of pageable memory into pinned buffers on 1 to all cores (what
crates/gpu/src/cuda/ecc.rs's `copy_parallel` does before each slab crosses). CuPy, on the GPU machine:
    python3 scripts/transfer_ceilings.py [GiB, default 1]
Each figure is the median of 5 runs after a warm-up, in GB/s (10^9 bytes a second).
"""
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import cupy as cp
import numpy as np

size = int(float(sys.argv[1]) * (1 << 30)) if len(sys.argv) > 1 else 1 << 30
chunk = 64 << 20  # the ECC's staging buffers are 64 MiB
devices = cp.cuda.runtime.getDeviceCount()


def median_rate(run, nbytes, repeat=5):
    run()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return nbytes / sorted(times)[len(times) // 2] / 1e9


def pinned(nbytes):
    mem = cp.cuda.alloc_pinned_memory(nbytes)
    a = np.frombuffer(mem, dtype=np.uint8, count=nbytes)
    a[:] = np.random.default_rng(1).integers(0, 256, nbytes, dtype=np.uint8)
    return mem, a


host_mem, host = pinned(size)
targets = []
for d in range(devices):
    with cp.cuda.Device(d):
        targets.append((cp.empty(size, dtype=cp.uint8), cp.cuda.Stream(non_blocking=True)))


def h2d(ds):
    # Each device copies the whole buffer's share for it: size / len(ds) bytes, 64 MiB at a time.
    share = size // len(ds)
    for i, d in enumerate(ds):
        with cp.cuda.Device(d):
            dev, st = targets[d]
            for at in range(0, share, chunk):
                n = min(chunk, share - at)
                src = host.ctypes.data + i * share + at
                cp.cuda.runtime.memcpyAsync(dev.data.ptr + at, src, n, cp.cuda.runtime.memcpyHostToDevice, st.ptr)
    for d in ds:
        with cp.cuda.Device(d):
            targets[d][1].synchronize()


for d in range(devices):
    print(f"pinned host to device {d} alone: {median_rate(lambda: h2d([d]), size):6.1f} GB/s", flush=True)
if devices > 1:
    every = list(range(devices))
    print(f"pinned host to all {devices} devices at once: {median_rate(lambda: h2d(every), size):6.1f} GB/s", flush=True)

pageable = np.random.default_rng(2).integers(0, 256, size, dtype=np.uint8)
for threads in sorted({1, 2, 4, 8, 16, os.cpu_count()}):
    parts = np.array_split(np.arange(size // (1 << 20)), threads)

    def copy_with(pool):
        def part(ix):
            lo, hi = ix[0] << 20, (ix[-1] + 1) << 20
            np.copyto(host[lo:hi], pageable[lo:hi])  # numpy lets go of the GIL for this copy

        list(pool.map(part, [p for p in parts if len(p)]))

    with ThreadPoolExecutor(threads) as pool:
        rate = median_rate(lambda: copy_with(pool), size)
    print(f"pageable to pinned host copy, {threads:3d} threads: {rate:6.1f} GB/s copied", flush=True)
