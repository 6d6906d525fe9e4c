"""Times Ripser (ripser.py) and giotto-ph on the standard sets, as topoview rips runs them,
for docs/PERFORMANCE.md: python3 scripts/rips_peers.py [THREADS] [SET...]
Each peer gets the distance matrix (points through scipy's pdist, as tests/data/rips/
expected.py does); the time is that of its call alone (reading and distances not counted).
"""
import os, sys, time
import numpy as np
from scipy.spatial.distance import pdist, squareform

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rips")
threads = int(sys.argv[1]) if len(sys.argv) > 1 else os.cpu_count()


def lower(path):
    vals = [float(x) for x in open(path).read().replace(",", " ").split()]
    n = int(round((1 + (1 + 8 * len(vals)) ** 0.5) / 2))
    m = np.zeros((n, n))
    m[np.tril_indices(n, -1)] = vals
    return m + m.T


SETS = {
    "sphere_3_192": (lambda: lower(os.path.join(HERE, "sphere_3_192.lower_distance_matrix")), 2, np.inf),
    "celegans": (lambda: np.loadtxt(os.path.join(HERE, "celegans.distance_matrix")), 2, np.inf),
    "cyclooctane": (lambda: squareform(pdist(np.loadtxt(os.path.join(HERE, "cyclooctane.csv"), delimiter=","))), 1, 0.5),
    "o3_4096": (lambda: squareform(pdist(np.loadtxt(os.path.join(HERE, "o3_4096.point_cloud")))), 2, 1.4),
    "o3_4096_dim3": (lambda: squareform(pdist(np.loadtxt(os.path.join(HERE, "o3_4096.point_cloud")))), 3, 1.4),
}
names = sys.argv[2:] or [s for s in SETS if s != "o3_4096_dim3"]
from ripser import ripser
from gph import ripser_parallel

for name in names:
    load, maxdim, thresh = SETS[name]
    m = load()
    t = time.time()
    a = ripser(m, maxdim=maxdim, thresh=thresh, distance_matrix=True)["dgms"]
    t_ripser = time.time() - t
    t = time.time()
    b = ripser_parallel(m, maxdim=maxdim, thresh=thresh, metric="precomputed", n_threads=threads)["dgms"]
    t_gph = time.time() - t
    print(f"{name}: maxdim {maxdim}, threshold {thresh}: ripser {t_ripser:.2f} s {[len(x) for x in a]}, "
          f"giotto-ph ({threads} threads) {t_gph:.2f} s {[len(x) for x in b]}", flush=True)
