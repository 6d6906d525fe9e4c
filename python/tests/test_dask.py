"""examples/dask_batch.py on a 2-worker LocalCluster over the bundled files."""

import csv
import shutil
import subprocess
import sys

import numpy as np
import pytest

import topoview
from conftest import BAD, READABLE, REPO

pytest.importorskip("dask.distributed")
SCRIPT = REPO / "examples" / "dask_batch.py"


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A folder of the bundled files, good and bad, and the script's run over it (CSV)."""
    folder = tmp_path_factory.mktemp("batch")
    for p in READABLE + BAD[:4]:
        shutil.copy(p, folder / p.name)
    out = folder.parent / "ecc.csv"
    r = subprocess.run(
        [sys.executable, str(SCRIPT), str(folder), "--out", str(out), "--workers", "2", "--backend", "cpu"],
        capture_output=True, text=True, timeout=600,
    )
    return folder, out, r


def test_every_good_file_in_one_table(batch):
    folder, out, r = batch
    rows = {}
    with open(out, newline="") as f:
        for row in csv.DictReader(f):
            rows.setdefault(row["file"], []).append((row["threshold"], int(row["chi"])))
    good = [folder / p.name for p in READABLE]
    assert sorted(rows) == sorted(str(p) for p in good), r.stderr
    for p in good:
        vol = topoview.open(p)
        t, chi = topoview.ecc(vol, backend="cpu")
        got_t = np.array([x for x, _ in rows[str(p)]], dtype=t.dtype)
        np.testing.assert_array_equal(got_t, t)
        np.testing.assert_array_equal([c for _, c in rows[str(p)]], chi)
    assert "on 2 workers" in r.stderr and "files/s" in r.stderr


def test_failures_are_reported_per_file_without_stopping(batch):
    folder, out, r = batch
    assert r.returncode == 1, r.stderr
    with open(out.with_name("ecc.failures.csv"), newline="") as f:
        failures = {row["file"]: row["error"] for row in csv.DictReader(f)}
    assert sorted(failures) == sorted(str(folder / p.name) for p in BAD[:4])
    for path, error in failures.items():
        with pytest.raises(topoview.TopoviewError) as e:
            topoview.ecc(topoview.open(path), backend="cpu")
        assert error == str(e.value)
        assert f"{path}: {error}" in r.stderr


def test_parquet_holds_the_same_table(batch, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    folder, out, _ = batch
    good = tmp_path / "good"
    good.mkdir()
    for p in READABLE[1:4]:
        shutil.copy(folder / p.name, good / p.name)
    target = tmp_path / "ecc.parquet"
    r = subprocess.run(
        [sys.executable, str(SCRIPT), str(good), "--out", str(target), "--workers", "1", "--threads", "1"],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr
    table = pq.read_table(target).to_pydict()
    for p in sorted(good.iterdir()):
        t, chi = topoview.ecc(topoview.open(p), backend="cpu")
        mine = [i for i, f in enumerate(table["file"]) if f == str(p)]
        np.testing.assert_array_equal([table["threshold"][i] for i in mine], t.astype(np.float64))
        np.testing.assert_array_equal([table["chi"][i] for i in mine], chi)


def test_a_running_scheduler_by_address(batch, tmp_path):
    """--scheduler: the path a Slurm or Kubernetes cluster takes, here to a cluster started apart."""
    from dask.distributed import LocalCluster

    folder, out, _ = batch
    target = tmp_path / "by-address.csv"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        r = subprocess.run(
            [sys.executable, str(SCRIPT), str(folder), "--out", str(target), "--scheduler", cluster.scheduler_address,
             "--threads", "1", "--backend", "cpu"],
            capture_output=True, text=True, timeout=600,
        )
    assert r.returncode == 1 and "on 1 workers" in r.stderr, r.stderr
    assert target.read_text() == out.read_text()
