#!/usr/bin/env python3
"""Expected persistence diagrams from GUDHI, an independent library, for tests/it/msc_gudhi.rs, and
expected Betti curves for tests/it/betti.rs.

Run from this folder with `pip install gudhi numpy` (tested with gudhi 3.13.0, numpy 2.4.6):
python3 make.py. It writes <name>.json for each field: the lower-star persistence pairs of the
cubical complex whose vertices are the voxels (gudhi.CubicalComplex(vertices=...)), as
[dim, birth, death] with death null for essential classes, pairs of zero persistence left out
(GUDHI's default). And betti_<name>.json: for each construction (top-cells:
CubicalComplex(top_dimensional_cells=...), vertices: CubicalComplex(vertices=...)) and filtration
(superlevel: the sublevel persistence of -a), the Betti numbers of the set at every distinct
value, listed as [threshold, b0, b1, b2] in filtration order where they change (and at the first
value), computed from GUDHI's persistence pairs as b_k(t) = #{pairs of dim k: birth <= t < death}.
"""
import gzip
import json
import struct

import gudhi
import numpy as np

DATA = "../"


def nifti1(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    dims = struct.unpack_from("<8h", raw, 40)
    code = struct.unpack_from("<h", raw, 70)[0]
    off = int(struct.unpack_from("<f", raw, 108)[0])
    dtype = {2: np.uint8, 4: np.int16, 16: np.float32, 512: np.uint16}[code]
    shape = dims[1 : dims[0] + 1]
    n = int(np.prod(shape))
    a = np.frombuffer(raw, dtype=dtype, count=n, offset=off)
    return a.reshape(tuple(reversed(shape)))  # x fastest: numpy shape (z, y, x)


def diagram(a):
    cc = gudhi.CubicalComplex(vertices=a.astype(np.float64))
    out = []
    for dim, (b, d) in cc.persistence():
        out.append([dim, float(b), None if d == float("inf") else float(d)])
    out.sort(key=lambda p: (p[0], p[1], float("inf") if p[2] is None else p[2]))
    return out


def write(name, source, a):
    json.dump({"source": source, "shape_zyx": list(a.shape), "gudhi": gudhi.__version__, "pairs": diagram(a)},
              open(name + ".json", "w"), indent=0)
    write_betti(name, source, a)


def betti_changes(cc, values):
    """[t, b0, b1, b2] at each of the sorted distinct filtration values where a number changes."""
    cc.compute_persistence(homology_coeff_field=2, min_persistence=-1)
    curves = []
    for dim in range(3):
        iv = cc.persistence_intervals_in_dimension(dim).reshape(-1, 2)
        births = np.sort(iv[:, 0])
        deaths = np.sort(iv[:, 1])
        curves.append(np.searchsorted(births, values, side="right") - np.searchsorted(deaths, values, side="right"))
    out, last = [], None
    for i, t in enumerate(values):
        b = [int(c[i]) for c in curves]
        if b != last:
            out.append([float(t)] + b)
            last = b
    return out


def write_betti(name, source, a):
    a = a.astype(np.float64)
    curves = {}
    for construction, key in (("top-cells", "top_dimensional_cells"), ("vertices", "vertices")):
        curves[construction] = {}
        for filtration, sign in (("sublevel", 1.0), ("superlevel", -1.0)):
            b = sign * a
            cc = gudhi.CubicalComplex(**{key: b})
            changes = betti_changes(cc, np.unique(b))
            # Thresholds in the field's own values: superlevel sets are listed from the top down.
            curves[construction][filtration] = [[sign * c[0]] + c[1:] for c in changes]
    doc = {"source": source, "shape_zyx": list(a.shape), "gudhi": gudhi.__version__, "curves": curves}
    with open("betti_" + name + ".json", "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


write("nipy_some_blobs", "tests/data/nipy_some_blobs.nii", nifti1(DATA + "nipy_some_blobs.nii"))
write("nibabel_standard", "tests/data/nibabel_standard_4x5x7.nii.gz", nifti1(DATA + "nibabel_standard_4x5x7.nii.gz"))
emri = np.fromfile(DATA + "pydicom_emri_small_64x64x10_uint16_le.raw", dtype="<u2").reshape(10, 64, 64)
write("pydicom_emri_small", "tests/data/pydicom_emri_small_64x64x10_uint16_le.raw", emri)
rng = np.random.default_rng(20261121)
r2 = np.round(rng.normal(size=(30, 40)) * 4) / 4  # ties
r2.astype("<f8").tofile("random2d_40x30_float64.raw")
write("random2d", "tests/data/gudhi/random2d_40x30_float64.raw", r2)
r3 = np.round(rng.normal(size=(8, 10, 12)) * 8) / 8
r3.astype("<f8").tofile("random3d_12x10x8_float64.raw")
write("random3d", "tests/data/gudhi/random3d_12x10x8_float64.raw", r3)
