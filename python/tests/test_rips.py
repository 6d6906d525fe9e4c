"""topoview.rips: Ripser's barcodes (tests/data/rips/*.expected.csv, made by Ripser) from points
and from distance matrices, and ripser's result layout."""

import os

import numpy as np
import pytest

import topoview

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "rips")


def expected(name):
    rows = np.genfromtxt(os.path.join(DATA, name + ".expected.csv"), delimiter=",", skip_header=1)
    return rows


def as_rows(dgms):
    rows = [(k, b, d) for k, dgm in enumerate(dgms) for b, d in dgm]
    return np.array(sorted(rows), dtype=np.float64)


def test_points_from_the_mri_equal_ripser():
    pts = np.loadtxt(os.path.join(DATA, "mni152_set150_400.csv"), delimiter=",", skiprows=1)
    r = topoview.rips(pts, maxdim=2)
    assert len(r["dgms"]) == 3 and all(d.dtype == np.float32 and d.shape[1] == 2 for d in r["dgms"])
    want = expected("mni152_set150_400_dim2")
    got = as_rows(r["dgms"])
    assert got.shape == want.shape
    # float32 values compared exactly (both read back from the same float32s).
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_a_distance_matrix_equals_ripser():
    m = np.loadtxt(os.path.join(DATA, "celegans.distance_matrix"))
    got = as_rows(topoview.rips(m, maxdim=2, distance_matrix=True)["dgms"])
    np.testing.assert_array_equal(got.astype(np.float32), expected("celegans_dim2").astype(np.float32))


def test_a_square_and_bad_input():
    sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    d = topoview.rips(sq)["dgms"]
    assert d[0].tolist() == [[0, 1], [0, 1], [0, 1], [0, np.inf]]
    assert d[1].tolist() == [[1, np.float32(np.sqrt(2))]]
    with pytest.raises(topoview.TopoviewError, match="square"):
        topoview.rips(np.zeros((3, 4)), distance_matrix=True)
    with pytest.raises(topoview.TopoviewError, match="at least one point"):
        topoview.rips(np.zeros((0, 0)), distance_matrix=True)
    with pytest.raises(topoview.TopoviewError, match="no points"):
        topoview.rips(np.zeros((0, 2)))
    with pytest.raises(topoview.TopoviewError, match="finite"):
        topoview.rips(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(topoview.TopoviewError, match="above the highest"):
        topoview.rips(sq, maxdim=4)
