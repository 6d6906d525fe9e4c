"""Ripser's barcodes of the standard sets, the expected outputs of tests/it/rips.rs.

Run with Ripser's Python package (pip install ripser; made with ripser 0.6.15, numpy 2.4,
scipy 1.17): python3 tests/data/rips/expected.py. Point clouds go to Ripser as distance
matrices made by scipy's pdist (the plain formula in float64, as topoview computes them) so
that both round the same float64 distances to float32; ripser(X) on points would use
scikit-learn's dot-product formula, whose float64 distances differ in the last bits.
mni152_set150_400.csv: 400 voxels of the MNI template's superlevel set at 150 in world
millimetres, written by `topoview rips tests/data/mni152_t1_09a.nii.gz --points set --level 150
--superlevel --count 400 --seed 3 --maxdim 2 --save-points ...` (tests/it/rips.rs checks topoview
still takes these points).
Each output: dim,birth,death, one row per bar (death inf for essential classes), float32
values written so that they read back exactly.
"""
import os
import numpy as np
from ripser import ripser
from scipy.spatial.distance import pdist, squareform

HERE = os.path.dirname(os.path.abspath(__file__))


def lower(path):
    vals = [float(x) for x in open(path).read().replace(",", " ").split()]
    n = int(round((1 + (1 + 8 * len(vals)) ** 0.5) / 2))
    m = np.zeros((n, n))
    m[np.tril_indices(n, -1)] = vals  # row by row: (1,0), (2,0), (2,1), ...
    return m + m.T


RUNS = [
    ("sphere_3_192_dim2", lambda: lower(os.path.join(HERE, "sphere_3_192.lower_distance_matrix")), 2, np.inf),
    ("celegans_dim2", lambda: np.loadtxt(os.path.join(HERE, "celegans.distance_matrix")), 2, np.inf),
    ("cyclooctane_dim1_t0.5", lambda: squareform(pdist(np.loadtxt(os.path.join(HERE, "cyclooctane.csv"), delimiter=","))), 1, 0.5),
    ("mni152_set150_400_dim2", lambda: squareform(pdist(np.loadtxt(os.path.join(HERE, "mni152_set150_400.csv"), delimiter=",", skiprows=1))), 2, np.inf),
    ("o3_4096_dim1_t1.4", lambda: squareform(pdist(np.loadtxt(os.path.join(HERE, "o3_4096.point_cloud")))), 1, 1.4),
]

for name, load, maxdim, thresh in RUNS:
    dgms = ripser(load(), maxdim=maxdim, thresh=thresh, distance_matrix=True)["dgms"]
    with open(os.path.join(HERE, name + ".expected.csv"), "w") as f:
        f.write("dim,birth,death\n")
        for dim, dgm in enumerate(dgms):
            for birth, death in sorted(map(tuple, dgm.astype(np.float32).tolist())):
                f.write("%d,%r,%s\n" % (dim, float(np.float32(birth)), "inf" if np.isinf(death) else repr(float(np.float32(death)))))
    print(name, [len(d) for d in dgms])
