"""backend="cuda" equals backend="cpu" through the Python API (skipped without a GPU). Each
GPU call is checked to have run on the GPU: a GPU failure falls back to the CPU with a warning,
an error here."""

import itertools

import numpy as np
import pytest

import topoview
from conftest import READABLE

try:
    GPU = topoview.backend("cuda")
except topoview.TopoviewError as e:
    pytest.skip(f"no CUDA device: {e}", allow_module_level=True)

DTYPES = ["u1", "i1", "u2", "i2", "u4", "i4", "f4", "f8"]
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def on_gpu(result):
    assert topoview.last_ran() == GPU, topoview.last_ran()
    return result


def test_the_backend_names_the_device():
    assert GPU.startswith("CUDA: ")
    assert topoview.backend("auto") == GPU


@pytest.mark.parametrize("dtype", DTYPES)
def test_ecc_on_the_gpu_equals_the_cpu(dtype):
    rng = np.random.default_rng(DTYPES.index(dtype))
    for shape in [(33, 47), (17, 20, 23), (64, 64, 64)]:
        if np.dtype(dtype).kind == "f":
            a = rng.standard_normal(shape).astype(dtype)
        else:
            info = np.iinfo(dtype)
            a = rng.integers(max(info.min, -(2**20)), min(info.max, 2**20), size=shape, endpoint=True).astype(dtype)
        for order, construction, superlevel in itertools.product("CF", ["top-cells", "vertices"], [False, True]):
            arr = np.asarray(a, order=order)
            t_gpu, chi_gpu = on_gpu(topoview.ecc(arr, construction, superlevel, backend="cuda"))
            t_cpu, chi_cpu = topoview.ecc(arr, construction, superlevel, backend="cpu")
            np.testing.assert_array_equal(t_gpu, t_cpu)
            np.testing.assert_array_equal(chi_gpu, chi_cpu)


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
def test_files_and_smoothing_on_the_gpu_equal_the_cpu(path):
    vol = topoview.open(path)
    for kwargs in [{}, dict(smooth=1.5), dict(smooth=2.0, sigma_units="physical", superlevel=True)]:
        t_gpu, chi_gpu = on_gpu(topoview.ecc(vol, backend="cuda", **kwargs))
        t_cpu, chi_cpu = topoview.ecc(vol, backend="cpu", **kwargs)
        np.testing.assert_array_equal(t_gpu, t_cpu)
        np.testing.assert_array_equal(chi_gpu, chi_cpu)
    s_gpu = on_gpu(topoview.smooth(vol, 2.5, backend="cuda"))
    s_cpu = topoview.smooth(vol, 2.5, backend="cpu")
    # Bit for bit, as the command line's CUDA tests check.
    np.testing.assert_array_equal(s_gpu.view(np.uint32), s_cpu.view(np.uint32))


@pytest.mark.parametrize("shape", [(40, 31), (17, 20, 23)])
def test_msc_on_the_gpu_equals_the_cpu(shape):
    a = np.random.default_rng(len(shape)).integers(0, 12, size=shape).astype(np.uint16)
    gpu = on_gpu(topoview.msc(a, relative=0.1, backend="cuda"))
    cpu = topoview.msc(a, relative=0.1, backend="cpu")
    np.testing.assert_array_equal(gpu.critical_points, cpu.critical_points)
    np.testing.assert_array_equal(gpu.arcs, cpu.arcs)
    np.testing.assert_array_equal(gpu.diagram, cpu.diagram)
    np.testing.assert_array_equal(gpu.basins, cpu.basins)
    np.testing.assert_array_equal(gpu.mountains, cpu.mountains)
