"""topoview.msc against the command line's JSON export, and the axis convention."""

import warnings

import numpy as np
import pytest

import topoview
from conftest import ASSETS, DATA

FILES = [DATA / "nipy_some_blobs.nii", ASSETS / "coins.png", DATA / "nibabel_standard_4x5x7.nii.gz"]
# The command line's JSON keys for the counts by index.
NAMES = {3: ["minima", "1-saddles", "2-saddles", "maxima"], 2: ["minima", "1-saddles", "maxima"]}


def _inf(x):
    return np.inf if x is None else x


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_msc_equals_the_command_line(path, cli_json):
    want = cli_json("msc", path, "--relative", "0.05")
    vol = topoview.open(path)
    m = topoview.msc(vol, relative=0.05)
    nd = vol.data.ndim
    pts = m.critical_points
    assert len(pts) == len(want["critical_points"])
    for p, w in zip(pts, want["critical_points"]):
        assert p["index"] == w["index"]
        assert p["cell"].tolist() == w["cell"][:nd]
        assert p["position"].tolist() == w["position"][:nd]
        assert p["value"] == w["value"] and p["alive"] == w["alive"]
        assert p["death_level"] == _inf(w["cancelled_at_level"])
        assert np.ravel_multi_index(tuple(p["voxel"]), vol.data.shape, order="F") == w["vertex"]
    assert len(m.arcs) == len(want["arcs"]) == len(m.polylines)
    for a, line, w in zip(m.arcs, m.polylines, want["arcs"]):
        assert (a["upper"], a["lower"], str(a["multiplicity"])) == (w["upper"], w["lower"], w["multiplicity"])
        np.testing.assert_array_equal(line, np.array(w["polyline"])[:, :nd])
    assert len(m.diagram) == len(want["diagram"])
    for d, w in zip(m.diagram, want["diagram"]):
        assert (d["dim"], d["birth"], d["death"]) == (w["dim"], w["birth"], _inf(w["death"]))
        assert (d["birth_point"], d["death_point"]) == (w["birth_point"], -1 if w["death_point"] is None else w["death_point"])
    cx = want["hierarchy"]["cancellations"]
    assert m.cancellations.tolist() == [
        (c["upper"], c["lower"], c["persistence"], c["level"]) for c in cx
    ]
    s = want["simplification"]
    assert (m.threshold, m.steps, m.blocked) == (s["threshold"], s["cancellations"], s["blocked"])
    assert m.counts() == [s["counts"][n] for n in NAMES[nd]]
    assert repr(m).startswith(f"MorseSmale({s['counts'][NAMES[nd][0]]} minima")


def test_a_transposed_array_gives_transposed_points():
    """The transpose of an array with distinct values has the same critical points, each at the
    reversed position (ties aside, the complex does not depend on the axes' order); ids follow
    each array's own x-fastest cell order."""
    f = np.random.default_rng(4).random((13, 17, 9))
    mf, mt = topoview.msc(f), topoview.msc(f.T)
    key = lambda p, flip: (int(p["index"]), float(p["value"]), tuple(p["cell"][::-1] if flip else p["cell"]))  # noqa: E731
    assert sorted(key(p, False) for p in mf.critical_points) == sorted(key(p, True) for p in mt.critical_points)
    np.testing.assert_array_equal(np.sort(mf.diagram[["dim", "birth", "death"]]), np.sort(mt.diagram[["dim", "birth", "death"]]))


def test_results_depend_on_the_array_not_its_memory_layout():
    """Ties (voxel-index tie-breaking) and the order of smoothing's passes follow the array's
    axes: the same array in C order, Fortran order or as a strided view gives the same bits."""
    rng = np.random.default_rng(9)
    a = rng.integers(0, 3, (12, 10, 7)).astype(np.uint8)
    layouts = [a, np.asfortranarray(a), np.pad(a, 1)[1:-1, 1:-1, 1:-1]]
    ms = [topoview.msc(x, relative=0.4) for x in layouts]
    for m in ms[1:]:
        np.testing.assert_array_equal(m.critical_points, ms[0].critical_points)
        np.testing.assert_array_equal(m.arcs, ms[0].arcs)
        np.testing.assert_array_equal(m.basins, ms[0].basins)
        np.testing.assert_array_equal(m.diagram, ms[0].diagram)
    f = rng.random((20, 24, 16)).astype(np.float32)
    for x in [np.asfortranarray(f), f[:, :, ::-1][:, :, ::-1]]:
        np.testing.assert_array_equal(topoview.smooth(x, 1.5, backend="cpu"), topoview.smooth(f, 1.5, backend="cpu"))
        for got, want in zip(topoview.ecc(x, smooth=1.5, backend="cpu"), topoview.ecc(f, smooth=1.5, backend="cpu")):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("order", ["C", "F"])
def test_positions_index_the_array(order):
    rng = np.random.default_rng(5)
    a = np.asarray(rng.random((11, 17, 6)), order=order)
    m = topoview.msc(a, persistence=0.2)
    pts = m.critical_points
    np.testing.assert_array_equal(a[tuple(pts["voxel"].T)], pts["value"])
    np.testing.assert_array_equal(pts["cell"] / 2, pts["position"])
    assert m.basins.shape == a.shape and m.mountains.shape == (10, 16, 5)
    minima = pts[(pts["index"] == 0) & pts["alive"]]
    ids = np.flatnonzero((pts["index"] == 0) & pts["alive"])
    # Each live minimum lies in its own basin; every voxel is in a live minimum's basin.
    np.testing.assert_array_equal(m.basins[tuple(minima["voxel"].T)], ids)
    assert set(np.unique(m.basins)) == set(ids.tolist())
    # An unsimplified complex has every point alive, and none blocked.
    full = topoview.msc(a)
    assert full.critical_points["alive"].all() and full.threshold is None and full.steps == 0


def test_levels():
    a = np.random.default_rng(2).random((20, 30)).astype(np.float32)
    rel = topoview.msc(a, relative=0.1)
    assert rel.threshold == pytest.approx(0.1 * float(a.max() - a.min()))
    absolute = topoview.msc(a, persistence=rel.threshold)
    np.testing.assert_array_equal(rel.critical_points, absolute.critical_points)
    np.testing.assert_array_equal(rel.arcs, absolute.arcs)
    # Euler: minima - saddles + maxima of a 2D complex with boundary equals 1 at every level.
    for level in [None, 0.05, 0.3, 1.0]:
        counts = topoview.msc(a, persistence=level).counts()
        assert counts[0] - counts[1] + counts[2] == 1, (level, counts)


@pytest.mark.parametrize(
    "data, kwargs, message",
    [
        (np.zeros((3, 3)), dict(persistence=1.0, relative=0.1), "not both"),
        (np.zeros((3, 3)), dict(relative=1.5), "the relative level must lie in 0..1, got 1.5"),
        (np.zeros((3, 3)), dict(persistence=-1.0), "the persistence level must be finite and not negative, got -1"),
        (np.array([[0.0, np.inf], [1.0, 2.0]]), dict(relative=0.1), "a relative level needs a finite value range"),
        (np.zeros(5), {}, "2D or 3D"),
        (np.array([[0.0, np.nan], [1.0, 2.0]]), {}, "NaN"),
    ],
)
def test_bad_levels_and_fields(data, kwargs, message):
    with pytest.raises(topoview.TopoviewError, match=message):
        topoview.msc(data, **kwargs)


def test_msc_takes_a_backend():
    a = np.random.default_rng(3).integers(0, 9, size=(21, 17, 9)).astype(np.uint8)
    cpu = topoview.msc(a, relative=0.05, backend="cpu")
    assert topoview.last_ran().startswith("CPU")
    with warnings.catch_warnings():
        # Without a GPU, "auto" notes once that it computes on the CPU.
        warnings.simplefilter("ignore", RuntimeWarning)
        auto = topoview.msc(a, relative=0.05)
    np.testing.assert_array_equal(auto.critical_points, cpu.critical_points)
    np.testing.assert_array_equal(auto.basins, cpu.basins)
    with pytest.raises(topoview.TopoviewError, match="unknown backend"):
        topoview.msc(a, backend="gpu")
