#!/usr/bin/env python3
"""Compares variants of the packed 8-bit ECC kernels (kernels/ecc.cu) on a GPU: each variant's
histograms against the first one's, then their times. How the 2026-11-29 figures in
docs/PERFORMANCE.md ("the packed kernels' terms summed by shift-and-adds") were measured.

Here, with NVRTC as scripts/build-ptx.py (compute_70, as the binary embeds):
    python3 scripts/packed-variants.py build DIR v0=OLD/ecc.cu v1=kernels/ecc.cu ...
        (each .cu beside its keys.cuh; writes DIR/NAME.ptx)
On the GPU machine (CuPy), from the repository root:
    python3 scripts/packed-variants.py check DIR [--time]
        the packed u8/i8 kernels, 2D and 3D, all four flag combinations, on fields with ties,
        extremes, constant rows and slabs, against the first variant (sorted by name); --time
        adds medians of CUDA events around each launch (3 rounds of 20, variants alternated) on
        512^3, 1024^3 and 8192^2 u8 noise; an idle stream's events also hold the launch itself,
        a few microseconds, so ncu's kernel times (below) are the ones to quote
    ncu --clock-control none --metrics ... -k regex:packed_u8_3d \\
        python3 scripts/packed-variants.py ncu DIR     (one 512^3 launch of each variant)
"""
import glob
import os
import sys

PAD = 256  # bytes before and after a slab's samples (crates/gpu/src/cuda/ecc.rs PAD)


def build(out_dir, specs):
    here = os.path.dirname(os.path.abspath(__file__))
    src = open(os.path.join(here, "build-ptx.py")).read().replace("\nmain()\n", "\n")
    env = {"__file__": os.path.join(here, "build-ptx.py"), "__name__": "build_ptx"}
    exec(compile(src, "build-ptx.py", "exec"), env)
    os.makedirs(out_dir, exist_ok=True)
    for spec in specs:
        name, path = spec.split("=", 1)
        open(os.path.join(out_dir, name + ".ptx"), "w").write(env["compile_ptx"](path))
        print(f"wrote {out_dir}/{name}.ptx from {path}")


def device(mode, d):
    import cupy as cp
    import numpy as np

    geo_t = np.dtype([(k, "<i4") for k in ("nx", "ny", "nz", "zs", "z0", "flags")], align=True)
    mods = {os.path.basename(p)[:-4]: cp.RawModule(path=p) for p in sorted(glob.glob(f"{d}/*.ptx"))}
    names = sorted(mods)
    print("variants", names, "(reference:", names[0] + ")", flush=True)

    def upload(a):
        buf = cp.zeros(a.size + 2 * PAD, cp.uint8)
        buf[PAD:PAD + a.size] = cp.asarray(a.ravel().view(np.uint8))
        return buf

    def launch(fn, buf, dims, zs, z0, z1, flags, three_d, counts, sums):
        # As crates/gpu/src/cuda/ecc.rs launches them: blocks of 32 x 8 threads, 8 planes (rows) a thread.
        nx, ny, _ = dims
        geo = np.array((*dims, zs, z0, flags), dtype=geo_t)[()]
        grid = ((nx // 4 + 31) // 32, (ny + 7) // 8, (z1 - z0 + 7) // 8) if three_d else ((nx // 4 + 31) // 32, (ny + 63) // 64, 1)
        fn(grid, (32, 8, 1), (np.uint64(buf.data.ptr + PAD), geo, np.int32(z1), counts, sums))

    def hist(mod, kind, a, flags, split):
        three_d = a.ndim == 3
        dims = a.shape[::-1] if three_d else (a.shape[1], a.shape[0], 1)
        fn = mod.get_function(f'packed_{kind}_{"3d" if three_d else "2d"}')
        counts, sums = cp.zeros(256, cp.uint64), cp.zeros(256, cp.uint64)
        nz = dims[2]
        for z0 in range(0, nz, split or nz):
            # A slab holds its planes and the ones beside them, as the streamed path's do.
            z1 = min(nz, z0 + (split or nz))
            zs, ze = max(0, z0 - 1), min(nz, z1 + 1)
            launch(fn, upload(a[zs:ze] if split else a), dims, zs if split else 0, z0, z1, flags, three_d, counts, sums)
        return counts.get(), sums.get()

    if mode == "ncu":
        a = cp.random.randint(0, 256, size=(512,) * 3, dtype=cp.uint8)
        buf = upload(a.get())
        counts, sums = cp.zeros(256, cp.uint64), cp.zeros(256, cp.uint64)
        for n in names:
            launch(mods[n].get_function("packed_u8_3d"), buf, (512,) * 3, 0, 0, 512, 0, True, counts, sums)
        cp.cuda.runtime.deviceSynchronize()
        return 0

    rng = np.random.default_rng(7)
    pick = lambda values, shape: rng.choice(np.array(values, np.uint8), shape)
    fields = [
        ("noise 128^3", rng.integers(0, 256, (128,) * 3, dtype=np.uint8), None),
        ("ties 19x37x36", rng.integers(0, 4, (19, 37, 36), dtype=np.uint8), None),
        ("ties 40x37x36 in slabs of 13 planes", rng.integers(0, 3, (40, 37, 36), dtype=np.uint8), 13),
        ("extremes 9x5x4", pick([0, 1, 127, 128, 255], (9, 5, 4)), None),
        ("extremes 7x9x132", pick([0, 1, 126, 127, 128, 129, 255], (7, 9, 132)), None),
        ("constant 12x16x256", np.full((12, 16, 256), 200, np.uint8), None),
        ("half constant 16x16x512", np.where(np.arange(512) < 256, 3, rng.integers(0, 256, (16, 16, 512))).astype(np.uint8), None),
        ("2D ties 53x36", rng.integers(0, 4, (53, 36), dtype=np.uint8), None),
        ("2D noise 1000x1024", rng.integers(0, 256, (1000, 1024), dtype=np.uint8), None),
        ("2D extremes 70x8", pick([0, 127, 128, 255], (70, 8)), None),
    ]
    bad = 0
    for label, a, split in fields:
        for kind in ("u8", "i8"):
            for flags in range(4):
                ref = hist(mods[names[0]], kind, a, flags, split)
                assert ref[0].sum() == a.size, (label, kind, flags)
                for n in names[1:]:
                    got = hist(mods[n], kind, a, flags, split)
                    if not (np.array_equal(ref[0], got[0]) and np.array_equal(ref[1], got[1])):
                        bad += 1
                        print(f"DIFFERENT: {n}, {label}, {kind}, flags {flags}", flush=True)
    print(f"{len(fields)} fields x u8, i8 x 4 flag combinations x {len(names) - 1} variants against {names[0]}: {bad} different")
    if "--time" in sys.argv:
        for shape in ((512,) * 3, (1024,) * 3, (8192,) * 2):
            a = cp.random.randint(0, 256, size=shape, dtype=cp.uint8)
            buf = cp.zeros(a.size + 2 * PAD, cp.uint8)
            buf[PAD:PAD + a.size] = a.ravel()
            del a
            three_d = len(shape) == 3
            dims = shape[::-1] if three_d else (shape[1], shape[0], 1)
            counts, sums = cp.zeros(256, cp.uint64), cp.zeros(256, cp.uint64)
            times = {n: [] for n in names}
            for _ in range(3):
                for n in names:
                    fn = mods[n].get_function(f'packed_u8_{"3d" if three_d else "2d"}')
                    for _ in range(20):
                        s, e = cp.cuda.Event(), cp.cuda.Event()
                        s.record()
                        launch(fn, buf, dims, 0, 0, dims[2], 0, three_d, counts, sums)
                        e.record()
                        e.synchronize()
                        times[n].append(cp.cuda.get_elapsed_time(s, e))
            for n in names:
                t = sorted(times[n])
                med = t[len(t) // 2]
                print(f'{"x".join(map(str, dims[:len(shape)]))} {n}: median {med * 1e3:.1f} us '
                      f"({np.prod(shape) / med / 1e6:.1f} GVox/s), min {t[0] * 1e3:.1f} us", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("build", "check", "ncu"):
        sys.exit(__doc__)
    if sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(device(sys.argv[1], sys.argv[2]))
