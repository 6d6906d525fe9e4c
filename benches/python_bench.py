#!/usr/bin/env python3
"""Figures for the Python package (docs/PERFORMANCE.md), printed, never asserted.

    python benches/python_bench.py [--cli target/release/topoview] [--size 256] [--repeat 5]
                                   [--files 300] [--edge 64] [--no-dask]

1. The overhead of a Python call: topoview.ecc and topoview.smooth on a size^3 array, against
   `topoview bench --file` (the command line's in-memory time) on the same field, written as
   NRRD (best of 5 alternating rounds of --repeat runs each, all cores, each round in fresh
   processes). "entry" is what a call costs before computing (the array's checks and the copy
   of its samples), measured by a call refused right after them, as a share of the CLI time.
2. Dask batches of --files generated volumes through examples/dask_batch.py on a LocalCluster
   of 1 and of 2 workers (the machine's cores split between them), against a plain loop in one
   process: u8 volumes of (2 edge)^3 to CSV (compute-bound: few thresholds), and f32 volumes of
   edge^3 to Parquet (table-bound: a threshold per voxel).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import topoview

REPO = Path(__file__).resolve().parents[1]
ROUNDS = 5


def write_nrrd(path, a):
    """A C-ordered array as NRRD: its last axis is x (NRRD's sizes go fastest first)."""
    kind = {"uint8": "uint8", "float32": "float"}[a.dtype.name]
    sizes = " ".join(str(n) for n in a.shape[::-1])
    header = f"NRRD0004\ntype: {kind}\ndimension: {a.ndim}\nsizes: {sizes}\nencoding: raw\nendian: little\n\n"
    with open(path, "wb") as f:
        f.write(header.encode())
        f.write(np.ascontiguousarray(a).tobytes())


def distinct_f32(edge):
    """The command line benchmark's all-distinct f32 field (crates/compute/src/bench.rs, distinct_f32)."""
    n = edge**3
    k = max(1, (n - 1).bit_length())
    i = np.arange(n, dtype=np.uint64)
    bits = np.uint64(0x3F80_0000) + ((i * np.uint64(0x9E37_79B1)) & np.uint64((1 << k) - 1))
    return bits.astype(np.uint32).view(np.float32).reshape(edge, edge, edge)


def best(repeat, f):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def cli_seconds(cli, path, repeat, threads):
    out = subprocess.run(
        [cli, "bench", "--file", str(path), "--repeat", str(repeat), "--threads", str(threads)],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"(ECC|smooth sigma=2) .*\s(\d+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+$", line)
        if m:
            rows[m.group(1)] = float(m.group(3))
    return rows


PYTHON_SIDE = """
import sys
import numpy as np
import topoview
path, repeat = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from python_bench import best
vol = topoview.open(path)
a = np.ascontiguousarray(vol.data)  # the same array, in numpy's usual C order
del vol
def refused():
    # Refused after the array's checks and the input copy, before any computation.
    try:
        topoview.ecc(a, construction="?", backend="cpu")
    except topoview.TopoviewError:
        pass
print(*(best(repeat, f) for f in [lambda: topoview.ecc(a, backend="cpu"), lambda: topoview.smooth(a, 2.0, backend="cpu"), refused]))
"""


def python_seconds(path, repeat):
    """(ECC, smoothing) seconds of Python calls on the file's array, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", PYTHON_SIDE, str(path), str(repeat), str(Path(__file__).parent)],
        capture_output=True, text=True, check=True,
    ).stdout
    e, s, entry = out.split()
    return float(e), float(s), float(entry)


def overhead(cli, size, repeat, tmp):
    threads = os.cpu_count() or 1
    rng = np.random.default_rng(1)
    cases = [("u8 noise", rng.integers(0, 256, (size,) * 3, dtype=np.uint8)), ("f32 all-distinct", distinct_f32(size))]
    print(f"Python call against the command line's in-memory time, {size}^3, {threads} threads, best of {ROUNDS}x{repeat}")
    print(f"{'case':<34} {'CLI s':>8} {'Python s':>9} {'overhead':>9} {'entry':>9}")
    for name, a in cases:
        path = tmp / f"{name.split()[0]}.nrrd"
        write_nrrd(path, a)
        del a  # each side reads the file in a fresh process, as a user's script would
        # Alternating rounds, the best of each side kept: this machine's noise hits both alike.
        cli_t, py_ecc, py_smooth, entry = {"ECC": np.inf, "smooth sigma=2": np.inf}, np.inf, np.inf, np.inf
        for _ in range(ROUNDS):
            for k, v in cli_seconds(cli, path, repeat, threads).items():
                cli_t[k] = min(cli_t[k], v)
            e, s, n = python_seconds(path, repeat)
            py_ecc, py_smooth, entry = min(py_ecc, e), min(py_smooth, s), min(entry, n)
        for what, c, p in [("ECC", cli_t["ECC"], py_ecc), ("smooth sigma=2", cli_t["smooth sigma=2"], py_smooth)]:
            print(f"{what + ' ' + name:<34} {c:>8.4f} {p:>9.4f} {100 * (p / c - 1):>8.1f}% {100 * entry / c:>8.1f}%")


def dask_batch(files, kind, edge, suffix, tmp):
    """--files volumes of edge^3 (u8: smoothed noise, few rows per curve; f32: white noise, a
    row per voxel) through examples/dask_batch.py with 1 and 2 workers, and a plain loop."""
    folder = tmp / f"batch-{kind}"
    folder.mkdir()
    rng = np.random.default_rng(2)
    for i in range(files):
        a = rng.random((edge,) * 3, dtype=np.float32)
        if kind == "u8":
            a = (topoview.smooth(a, 2.0, backend="cpu") * 255).astype(np.uint8)
        write_nrrd(folder / f"v{i:04d}.nrrd", a)
    paths = sorted(folder.iterdir())
    loop = best(1, lambda: [topoview.ecc(topoview.open(p), backend="cpu") for p in paths])
    rows = sum(len(topoview.ecc(topoview.open(p), backend="cpu")[1]) for p in paths[:10]) / 10
    cores = os.cpu_count() or 1
    size = edge**3 * (1 if kind == "u8" else 4) / 2**20
    print(f"\nDask batch: {files} {kind} files of {edge}^3 ({size:.1f} MiB, ~{rows:.0f} rows each) to {suffix}, {cores} cores")
    print(f"{'how':<38} {'seconds':>8} {'files/s':>8}")
    print(f"{'a loop in one process, no table':<38} {loop:>8.2f} {files / loop:>8.1f}")
    for workers in (1, 2):
        threads = max(1, cores // workers)
        r = subprocess.run(
            [sys.executable, str(REPO / "examples" / "dask_batch.py"), str(folder), "--out", str(tmp / f"ecc-{kind}-{workers}.{suffix}"),
             "--workers", str(workers), "--threads", str(threads), "--backend", "cpu"],
            capture_output=True, text=True, check=True,
        )
        m = re.search(r"([\d.]+) s, ([\d.]+) files/s", r.stderr)
        print(f"{f'dask, {workers} worker(s) x {threads} threads':<38} {float(m.group(1)):>8.2f} {float(m.group(2)):>8.1f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", default=str(REPO / "target" / "release" / "topoview"))
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--files", type=int, default=300)
    p.add_argument("--edge", type=int, default=64)
    p.add_argument("--no-dask", action="store_true")
    a = p.parse_args()
    print(f"topoview {topoview.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}; {topoview.backend('cpu')}")
    with tempfile.TemporaryDirectory() as tmp:
        overhead(a.cli, a.size, a.repeat, Path(tmp))
        if not a.no_dask:
            dask_batch(a.files, "u8", 2 * a.edge, "csv", Path(tmp))
            dask_batch(a.files, "f32", a.edge, "parquet", Path(tmp))


if __name__ == "__main__":
    main()
