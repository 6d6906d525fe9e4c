"""topoview.ecc against a plain numpy count of cells (every dtype, both orders, both
constructions) and against the command line on every bundled file."""

import itertools
import time
import warnings

import numpy as np
import pytest

import topoview
from conftest import RAW, READABLE

DTYPES = ["u1", "i1", "u2", "i2", "u4", "i4", "f4", "f8"]


def _shifted_pair(c, axis):
    """c[..., :-1, ...] and c[..., 1:, ...] along axis."""
    lo = [slice(None)] * c.ndim
    hi = [slice(None)] * c.ndim
    lo[axis], hi[axis] = slice(None, -1), slice(1, None)
    return c[tuple(lo)], c[tuple(hi)]


def naive_ecc(a, construction="top-cells", superlevel=False):
    """chi at each distinct value: the alternating count of the cubical complex's cells present.

    vertices: voxels are the grid's vertices and a cell is present when all its vertices are.
    top-cells: voxels are the closed top cells and a lower cell is present when any voxel
    containing it is. NaN voxels are in no set; superlevel sets are sublevel sets of -a."""
    v = np.asarray(a, dtype=np.float64)
    if superlevel:
        v = -v
    v = np.where(np.isnan(v), np.inf, v)
    counts = []
    for spans in itertools.product([False, True], repeat=v.ndim):
        c = v
        for axis, span in enumerate(spans):
            if construction == "vertices" and span:
                c = np.maximum(*_shifted_pair(c, axis))
            elif construction == "top-cells" and not span:
                pad = [(0, 0)] * c.ndim
                pad[axis] = (1, 1)
                c = np.minimum(*_shifted_pair(np.pad(c, pad, constant_values=np.inf), axis))
        counts.append(((-1) ** sum(spans), np.sort(c.ravel())))
    t = np.unique(v[np.isfinite(v)])
    chi = sum(sign * np.searchsorted(vals, t, side="right") for sign, vals in counts)
    return (-t if superlevel else t), chi


def random_field(rng, shape, dtype):
    """Few distinct values (many ties), signed where the dtype is."""
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    lo = 0 if info is not None and info.min == 0 else -3
    a = rng.integers(lo, lo + 7, size=shape)
    if info is None:
        a = a * 0.37
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(13,), (7, 9), (4, 5, 6)])
def test_ecc_equals_cell_count(dtype, shape):
    rng = np.random.default_rng(sum(shape) * 31 + DTYPES.index(dtype))
    for _ in range(4):
        a = random_field(rng, shape, dtype)
        for construction, superlevel in itertools.product(["top-cells", "vertices"], [False, True]):
            want_t, want_chi = naive_ecc(a, construction, superlevel)
            for order, arr in [("C", a), ("F", np.asfortranarray(a))]:
                t, chi = topoview.ecc(arr, construction, superlevel, backend="cpu")
                assert t.dtype == a.dtype, (order, construction)
                assert chi.dtype == np.int64
                np.testing.assert_array_equal(t, want_t.astype(a.dtype), err_msg=f"{order} {construction}")
                np.testing.assert_array_equal(chi, want_chi, err_msg=f"{order} {construction} {superlevel}")


def test_views_and_transposes_are_the_fields_they_show():
    rng = np.random.default_rng(7)
    a = random_field(rng, (6, 10, 9), "f4")
    for view in [a[::2], a[:, 1:7, ::3], a.T, a.transpose(1, 0, 2), a[..., 4], np.asfortranarray(a)[1:, :, 2:]]:
        t, chi = topoview.ecc(view, backend="cpu")
        want_t, want_chi = naive_ecc(view)
        np.testing.assert_array_equal(t, want_t.astype(np.float32))
        np.testing.assert_array_equal(chi, want_chi)


@pytest.mark.parametrize("dtype", ["bool", "i8", "u8", "f2", ">f4", ">i2"])
def test_dtypes_converted_exactly(dtype):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2 if dtype == "bool" else 5, size=(8, 7)).astype(dtype)
    t, chi = topoview.ecc(a, backend="cpu")
    want_t, want_chi = naive_ecc(a.astype(np.float64))
    np.testing.assert_array_equal(t.astype(np.float64), want_t)
    np.testing.assert_array_equal(chi, want_chi)


def test_64_bit_integers_that_fit_32_bits():
    big = np.array([[0, 2**31 + 5], [7, 2**32 - 1]], dtype=np.uint64)
    t, _ = topoview.ecc(big, backend="cpu")
    assert t.dtype == np.uint32 and t.tolist() == [0, 7, 2**31 + 5, 2**32 - 1]
    t, _ = topoview.ecc(np.array([[-3, 4]]), backend="cpu")
    assert t.dtype == np.int32 and t.tolist() == [-3, 4]
    with pytest.raises(topoview.TopoviewError, match="values -1 to 4294967296 do not fit"):
        topoview.ecc(np.array([-1, 2**32]), backend="cpu")


def test_set_threads_refuses_bad_counts():
    with pytest.raises(topoview.TopoviewError, match="at least 1"):
        topoview.set_threads(-1)
    with pytest.raises(topoview.TopoviewError, match="threads must be 1 to"):
        topoview.set_threads(10**6)


def test_nan_absent_and_reject():
    a = np.arange(30, dtype=np.float32).reshape(5, 6)
    a[2, 3] = np.nan
    a[0, 0] = np.nan
    with pytest.raises(topoview.TopoviewError, match='2 NaN and 0 infinite samples; pass nan="absent"'):
        topoview.ecc(a, backend="cpu")
    # Smoothing spreads NaN first: the count is the smoothed field's, as on the command line.
    with pytest.raises(topoview.TopoviewError, match='30 NaN and 0 infinite samples; pass nan="absent"'):
        topoview.ecc(a, smooth=1.0, backend="cpu")
    for construction in ["top-cells", "vertices"]:
        t, chi = topoview.ecc(a, construction, nan="absent", backend="cpu")
        want_t, want_chi = naive_ecc(a, construction)
        np.testing.assert_array_equal(t, want_t.astype(np.float32))
        np.testing.assert_array_equal(chi, want_chi)


def _file(path):
    if path == RAW[0]:
        return topoview.open(path, **RAW[1]), ["--dims", "64x64x10", "--dtype", "u16"]
    return topoview.open(path), []


@pytest.mark.parametrize("path", READABLE + [RAW[0]], ids=lambda p: p.name)
def test_ecc_equals_the_command_line(path, cli_json):
    vol, extra = _file(path)
    want = cli_json("ecc", path, *extra, "--backend", "cpu")
    t, chi = topoview.ecc(vol, backend="cpu")
    assert list(vol.data.shape) == want["dims"]
    np.testing.assert_array_equal(t, np.array(want["threshold"], dtype=vol.data.dtype))
    np.testing.assert_array_equal(chi, want["chi"])
    crossings = topoview.zero_crossings(t, chi)
    assert len(crossings) == len(want["zero_crossings"])
    for mine, theirs in zip(crossings, want["zero_crossings"]):
        assert mine["last_before"] == pytest.approx(theirs["last_before"], rel=1e-7)
        assert mine["first_after"] == pytest.approx(theirs["first_after"], rel=1e-7)
        assert (mine["chi_before"], mine["chi_after"]) == (theirs["chi_before"], theirs["chi_after"])
        assert mine["direction"] == (1 if theirs["direction"] == "negative-to-positive" else -1)


@pytest.mark.parametrize(
    "options, flags",
    [
        (dict(construction="vertices", superlevel=True), ["--construction", "vertices", "--superlevel"]),
        (dict(smooth=1.5), ["--smooth", "1.5"]),
        (dict(smooth=2.0, sigma_units="physical", truncate=2.0), ["--smooth", "2", "--sigma-units", "physical", "--truncate", "2"]),
    ],
)
def test_options_equal_the_command_line(options, flags, cli_json):
    path = READABLE[0] if "smooth" not in options else READABLE[7]
    want = cli_json("ecc", path, *flags, "--backend", "cpu")
    t, chi = topoview.ecc(topoview.open(path), backend="cpu", **options)
    if "smooth" in options:
        assert t.dtype == np.float32
    np.testing.assert_array_equal(t, np.array(want["threshold"], dtype=t.dtype))
    np.testing.assert_array_equal(chi, want["chi"])


def test_smooth_is_separable_along_the_arrays_axes():
    """A huge spacing along one axis leaves only the other axis smoothed: the array's axes,
    not the command line's x-first order, whatever the memory order."""
    rng = np.random.default_rng(11)
    a = rng.random((9, 12)).astype(np.float32)
    columns = np.stack([topoview.smooth(a[:, j], 1.0, backend="cpu") for j in range(a.shape[1])], axis=1)
    for arr in [a, np.asfortranarray(a)]:
        s = topoview.smooth(arr, 1.0, sigma_units="physical", spacing=(1.0, 1e9), backend="cpu")
        assert s.shape == a.shape and s.dtype == np.float32
        np.testing.assert_array_equal(s, columns)
    t, chi = topoview.ecc(a, smooth=1.0, sigma_units="physical", spacing=(1.0, 1e9), backend="cpu")
    want_t, want_chi = naive_ecc(columns)
    np.testing.assert_array_equal(t, want_t.astype(np.float32))
    np.testing.assert_array_equal(chi, want_chi)


def test_progress_reaches_one():
    seen = []
    # Long enough (a second or more) for several reports, on 2 cores or 16.
    a = np.random.default_rng(0).random((256, 256, 256)).astype(np.float32)
    topoview.ecc(a, smooth=12.0, backend="cpu", progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert any(0.0 < f < 1.0 for f in seen), seen  # reported while running, not only at the end
    assert all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)


def test_a_failing_progress_callback_stops_the_call():
    a = np.random.default_rng(0).random((256, 256, 256)).astype(np.float32)
    started = time.perf_counter()
    topoview.ecc(a, smooth=12.0, backend="cpu")
    whole = time.perf_counter() - started

    def fail(f):
        if f > 0:
            raise ValueError("stop here")

    started = time.perf_counter()
    with pytest.raises(ValueError, match="stop here"):
        topoview.ecc(a, smooth=12.0, backend="cpu", progress=fail)
    assert time.perf_counter() - started < 0.8 * whole, "the call ran to its end"


def test_auto_on_the_cpu_warns_once():
    if not topoview.backend("auto").startswith("CPU"):
        pytest.skip("a GPU is in use")
    topoview._CPU_NOTED = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        topoview.ecc(np.zeros((3, 3), np.uint8))
        topoview.ecc(np.zeros((3, 3), np.uint8))
    assert [str(x.message) for x in w if x.category is RuntimeWarning] == [
        f"topoview: computing on the {topoview.backend('auto')}"
    ]


@pytest.mark.parametrize(
    "data, kwargs, message",
    [
        (np.zeros((2, 2, 2, 2), np.uint8), {}, "1D, 2D or 3D arrays, got 4D"),
        (np.zeros((3, 3), np.complex64), {}, "unsupported dtype complex64"),
        (np.array([[2**40, 0]]), {}, "values 0 to 1099511627776 do not fit 32-bit integers"),
        (np.zeros((0, 3), np.uint8), {}, r"the array of shape \(0, 3\) is empty"),
        (np.zeros((3, 3), np.uint8), dict(construction="voxels"), "unknown construction 'voxels'"),
        (np.zeros((3, 3), np.uint8), dict(nan="ignore"), "unknown NaN policy 'ignore'"),
        (np.zeros((3, 3), np.uint8), dict(backend="gpu"), "unknown backend 'gpu'"),
        (np.zeros((3, 3), np.uint8), dict(smooth=-1.0), "sigma must be finite and not negative, got -1"),
        (np.zeros((3, 3), np.uint8), dict(spacing=(1.0,)), "1 spacings for a 2D array"),
        (np.zeros((3, 3), np.uint8), dict(spacing=(1.0, 0.0)), r"spacing \(1.0, 0.0\) must be finite and positive"),
        (np.zeros((3, 3), np.uint8), dict(smooth=float("nan")), "sigma must be finite and not negative, got NaN"),
    ],
)
def test_bad_input_raises_a_clear_error(data, kwargs, message):
    with pytest.raises(topoview.TopoviewError, match=message):
        topoview.ecc(data, **kwargs)


def test_zero_crossings_of_a_known_curve():
    c = topoview.zero_crossings([0, 1, 2, 3, 4, 5], [1, 0, -2, -1, 0, 3])
    # Zeros are skipped; last_before is the point just before the new sign (here chi = 0).
    assert c["last_before"].tolist() == [1.0, 4.0]
    assert c["first_after"].tolist() == [2.0, 5.0]
    assert c["chi_before"].tolist() == [0, 0] and c["chi_after"].tolist() == [-2, 3]
    assert c["direction"].tolist() == [-1, 1]
    with pytest.raises(topoview.TopoviewError, match="3 thresholds but 2 chi values"):
        topoview.zero_crossings([0, 1, 2], [1, 2])
