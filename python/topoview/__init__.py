"""topoview from Python: exact Euler characteristic curves, Gaussian smoothing and Morse-Smale
complexes of numpy arrays and image/volume files, on an NVIDIA GPU when there is one (the CUDA
driver is loaded at run time) and on all CPU cores otherwise.

Axis convention. topoview's fields are stored x fastest, as the command line reads files.
``open`` returns ``data`` indexed ``data[x, y, z]`` (Fortran order, like nibabel), without a
copy. Any 1D, 2D or 3D array is accepted (``msc``: 2D or 3D), in any memory layout: its first
axis is x, its last the slowest, so results depend on the array and never on its layout, and
for ``open``'s arrays they are the command line's. Every position ``msc`` returns is an index
into the array as given (``array[tuple(point["voxel"])] == point["value"]``).

Calls release the GIL, Ctrl+C interrupts them (KeyboardInterrupt), and ``progress`` (a callable
taking the fraction done, 0 to 1) is called about 20 times a second. ``last_ran()`` says where
the last call ran; a GPU that fails mid-call gives a RuntimeWarning and the CPU's result.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from . import _topoview
from ._topoview import ReadError, TopoviewError

__version__ = _topoview.__version__
__all__ = [
    "Volume",
    "MorseSmale",
    "open",
    "ecc",
    "zero_crossings",
    "smooth",
    "msc",
    "rips",
    "backend",
    "set_threads",
    "last_ran",
    "TopoviewError",
    "ReadError",
]

_CPU_NOTED = False


class Volume:
    """An image or volume read from a file.

    Attributes:
        data: the samples in the file's dtype, indexed ``data[x, y(, z)]`` (Fortran order).
        spacing: voxel size per axis (the file's units, usually mm).
        affine: 4x4 voxel-to-world matrix (NIfTI RAS+ mm), or None when the file has none.
        notes: what the reader did that you should know (one sentence each).
        path: the file read.
    """

    def __init__(self, data, spacing, affine, notes, path):
        self.data = data
        self.spacing = spacing
        self.affine = affine
        self.notes = notes
        self.path = path

    def __repr__(self):
        shape = "x".join(str(n) for n in self.data.shape)
        return f"Volume({self.path!r}, {shape} {self.data.dtype})"


def open(path, *, dims=None, dtype=None, endian="little", offset=0, volume=None) -> Volume:
    """Reads an image or volume (PNG, JPEG, TIFF stacks, NIfTI-1/2, NRRD, MetaImage, raw).

    For a headerless raw file give ``dims`` (x first, e.g. ``(256, 256, 128)``) and ``dtype``
    (``"u8"``, ``"i16"``, ``"f32"``, ...), optionally ``endian`` and ``offset`` (header bytes to
    skip). ``volume`` picks one volume of a 4D NIfTI file (default 0). Raises ``ReadError`` with
    the command line's message for a file that cannot be read.
    """
    path = os.fsdecode(path)
    flat, shape, spacing, affine, notes, _ = _topoview.open(
        path, None if dims is None else list(dims), dtype, endian, offset, volume
    )
    data = flat.reshape(shape, order="F")
    affine = None if affine is None else np.array(affine, dtype=np.float64)
    return Volume(data, tuple(spacing), affine, list(notes), path)


def _field(data, spacing=None, any_layout=False):
    """(flat samples, dims x first, c_order, spacing x first, array) of an array or a Volume.

    The field is the array with x its first axis: a Fortran-ordered array's samples go as they
    lie, a C-ordered one's are transposed while copied (``c_order``), other layouts are made
    Fortran-ordered first. ``any_layout``: the caller depends on the values only (the ECC
    without smoothing is the same for every axis order), so a C-ordered array goes as it lies,
    as the field whose x is its last axis: a plain copy instead of a transposing one.
    """
    if isinstance(data, Volume):
        spacing = data.spacing if spacing is None else spacing
        data = data.data
    a = np.asarray(data)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    elif a.dtype == np.float16:
        a = a.astype(np.float32)
    elif a.dtype in (np.int64, np.uint64):
        # numpy's default integers: exact in 32 bits when their values fit.
        lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
        if np.iinfo(np.int32).min <= lo and hi <= np.iinfo(np.int32).max:
            a = a.astype(np.int32)
        elif 0 <= lo and hi <= np.iinfo(np.uint32).max:
            a = a.astype(np.uint32)
        else:
            raise TopoviewError(
                f"unsupported dtype {a.dtype}: values {lo} to {hi} do not fit 32-bit integers "
                "(topoview reads u8, i8, u16, i16, u32, i32, f32, f64)"
            )
    if a.ndim < 1 or a.ndim > 3:
        raise TopoviewError(f"topoview takes 1D, 2D or 3D arrays, got {a.ndim}D of shape {a.shape}")
    if a.size == 0:
        raise TopoviewError(f"the array of shape {a.shape} is empty")
    if spacing is not None:
        given = tuple(spacing)
        spacing = [float(s) for s in given]
        if len(spacing) != a.ndim:
            raise TopoviewError(f"{len(spacing)} spacings for a {a.ndim}D array")
        if not all(np.isfinite(s) and s > 0 for s in spacing):
            raise TopoviewError(f"spacing {given} must be finite and positive")
    if a.flags.f_contiguous:
        return a.ravel(order="F"), list(a.shape), False, spacing, a
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a) if any_layout else np.asfortranarray(a)
        if a.flags.f_contiguous:
            return a.ravel(order="F"), list(a.shape), False, spacing, a
    if any_layout:
        return a.ravel(), list(a.shape[::-1]), False, None if spacing is None else spacing[::-1], a
    return a.ravel(), list(a.shape), True, spacing, a


_LAST_RAN = None


def _ran(where, backend: str):
    """Notes where a call ran: a GPU failure always warns (the result is the CPU's), and
    backend="auto" on the CPU warns once per process, as the command line notes it."""
    global _CPU_NOTED, _LAST_RAN
    where, fallback = where
    _LAST_RAN = where
    if fallback:
        warnings.warn(f"topoview: {fallback}", RuntimeWarning, stacklevel=3)
    elif backend == "auto" and where.startswith("CPU") and not _CPU_NOTED:
        _CPU_NOTED = True
        warnings.warn(f"topoview: computing on the {where}", RuntimeWarning, stacklevel=3)


def last_ran():
    """Where the last ``ecc``, ``smooth``, ``msc`` or ``rips`` call of this process ran, in words (``"CUDA: NVIDIA
    H100 80GB HBM3"``, ``"CPU, 16 threads"``), or None before the first."""
    return _LAST_RAN


def ecc(
    data,
    construction: str = "top-cells",
    superlevel: bool = False,
    nan: str = "reject",
    smooth=None,
    *,
    sigma_units: str = "voxels",
    truncate: float = 3.0,
    spacing=None,
    backend: str = "auto",
    progress=None,
):
    """The exact Euler characteristic curve of an array (or ``Volume``).

    Returns ``(thresholds, chi)``: the distinct values of the field in filtration order, in the
    data's dtype (float32 after smoothing), and the Euler characteristic (int64) of the sublevel
    set (``superlevel=True``: superlevel) at each.

    construction: ``"top-cells"`` (each voxel a closed unit square or cube, 8/26-connected
    foreground) or ``"vertices"`` (voxels are the vertices of the cubical complex, 4/6-connected).
    nan: ``"reject"`` (an error names the count) or ``"absent"`` (NaN voxels are in no set).
    smooth: a Gaussian sigma (in voxels, or in the spacing's units with
    ``sigma_units="physical"``) applied first, on the GPU together with the curve.
    backend: ``"auto"`` (CUDA when a device is usable, else all CPU cores), ``"cuda"``, ``"cpu"``.
    """
    flat, dims, c_order, sp, _ = _field(data, spacing, any_layout=smooth is None)
    t, chi, where = _topoview.ecc(
        flat, dims, c_order, sp, construction, bool(superlevel), nan,
        None if smooth is None else float(smooth), sigma_units, float(truncate), backend, progress,
    )
    _ran(where, backend)
    return t, chi


def zero_crossings(thresholds, chi):
    """Where the curve changes sign, in filtration order: a structured array with
    ``first_after`` (the first threshold with the new sign), ``last_before`` (the threshold
    just before it, with the old sign or chi = 0), ``chi_before``, ``chi_after`` and
    ``direction`` (+1 negative to positive, -1 positive to negative). Points where chi = 0 are
    skipped: a crossing is a change of sign between consecutive nonzero points, as the command
    line reports them (its suggested threshold is ``last_before`` of the first -1 crossing)."""
    before, after, cb, ca, d = _topoview.crossings(
        np.asarray(thresholds, dtype=np.float64).tolist(), np.asarray(chi, dtype=np.int64).tolist()
    )
    out = np.zeros(
        len(d),
        dtype=[("last_before", "f8"), ("first_after", "f8"), ("chi_before", "i8"), ("chi_after", "i8"), ("direction", "i1")],
    )
    out["last_before"], out["first_after"], out["chi_before"], out["chi_after"], out["direction"] = before, after, cb, ca, d
    return out


def smooth(data, sigma: float, *, sigma_units: str = "voxels", truncate: float = 3.0, spacing=None, backend: str = "auto", progress=None):
    """Gaussian smoothing (separable, reflecting borders, radius ``truncate`` sigmas) to a
    float32 array of the input's shape (Fortran-ordered, whatever the input's layout); the same
    bits on the GPU and the CPU, and for every layout of the same array."""
    flat, dims, c_order, sp, a = _field(data, spacing)
    out, where = _topoview.smooth(flat, dims, c_order, sp, float(sigma), sigma_units, float(truncate), backend, progress)
    _ran(where, backend)
    return out.reshape(a.shape, order="F")


class MorseSmale:
    """A discrete Morse-Smale complex at one simplification level (see ``msc``).

    Attributes:
        critical_points: structured array, one row per critical point of the unsimplified
            complex: ``index`` (0 minimum .. ndim maximum), ``cell`` (doubled-grid coordinates,
            as array indices times 2), ``voxel`` (array indices of the voxel whose
            lower star holds the cell: its value is the point's), ``position`` (cell centre as
            array indices, halves for edges/faces/cubes), ``value``, ``alive`` (at this level), ``death_level`` (the
            persistence threshold that cancels it, inf if none). Row numbers are the ids arcs,
            labels and the diagram refer to.
        arcs: structured array of the arcs at this level: ``upper`` and ``lower`` (ids of the ends,
            higher index first), ``multiplicity`` (number of V-paths).
        polylines: one (n, ndim) array of positions per arc, from ``upper`` to ``lower``.
        diagram: structured array ``dim``, ``birth``, ``death`` (inf for an essential class),
            ``birth_point``, ``death_point`` (ids, -1 for none).
        cancellations: structured array of the hierarchy: ``upper``, ``lower``, ``persistence``,
            ``level``; the first ``steps`` are applied at this level.
        basins: per voxel (the array's shape), the id of the minimum whose basin holds it.
        mountains: per top cell (one smaller along each axis), the id of the maximum whose
            mountain holds it, -1 where the path leaves the domain.
        threshold, steps, blocked: the level, the cancellations applied, and the persistence
            pairs below it that could not be cancelled.
    """

    def __repr__(self):
        names = ["minima", "1-saddles", "2-saddles", "maxima"] if self.ndim == 3 else ["minima", "saddles", "maxima"]
        alive = self.critical_points[self.critical_points["alive"]]
        counts = ", ".join(f"{(alive['index'] == k).sum()} {n}" for k, n in enumerate(names))
        return f"MorseSmale({counts}; {len(self.arcs)} arcs at persistence {self.threshold})"

    def counts(self):
        """Live critical points by index at this level."""
        alive = self.critical_points[self.critical_points["alive"]]
        return [int((alive["index"] == k).sum()) for k in range(self.ndim + 1)]


def msc(data, persistence=None, relative=None, *, spacing=None, backend: str = "auto", progress=None) -> MorseSmale:
    """The discrete Morse-Smale complex of a 2D or 3D array (lower-star filtration, ties broken
    by voxel index), its persistence diagram and simplification hierarchy, at the level
    ``persistence`` (in the data's units) or ``relative`` (a fraction of its value range);
    unsimplified when neither is given. The discrete gradient, the manifold labels and the
    saddle-saddle arcs run on the GPU when ``backend`` (``"auto"``, ``"cuda"``, ``"cpu"``) picks
    one, the rest on all CPU cores; the result is the same on either."""
    if persistence is not None and relative is not None:
        raise TopoviewError("give persistence or relative, not both")
    flat, dims, c_order, sp, a = _field(data, spacing)
    r, where = _topoview.msc(
        flat, dims, c_order, sp, None if persistence is None else float(persistence),
        None if relative is None else float(relative), backend, progress,
    )
    _ran(where, backend)
    nd = a.ndim
    # Positions come x first: the array's axes in order.
    n = len(r["index"])
    m = MorseSmale()
    m.ndim = nd
    pts = np.zeros(
        n,
        dtype=[("index", "u1"), ("cell", "i8", (nd,)), ("voxel", "i8", (nd,)), ("position", "f8", (nd,)),
               ("value", "f8"), ("alive", "?"), ("death_level", "f8")],
    )
    pts["index"] = r["index"]
    pts["cell"] = r["cell"].reshape(n, nd).astype(np.int64)
    # The voxel whose lower star holds the cell, a flat index x fastest.
    pts["voxel"] = np.stack(np.unravel_index(r["vertex"].astype(np.intp), dims, order="F"), axis=1)
    pts["position"] = r["position"].reshape(n, nd)
    pts["value"], pts["alive"], pts["death_level"] = r["value"], r["alive"], r["death_level"]
    m.critical_points = pts
    arcs = np.zeros(len(r["arc_upper"]), dtype=[("upper", "i8"), ("lower", "i8"), ("multiplicity", "u8")])
    arcs["upper"], arcs["lower"], arcs["multiplicity"] = r["arc_upper"], r["arc_lower"], r["arc_multiplicity"]
    m.arcs = arcs
    m.polylines = [p.reshape(-1, nd) for p in r["arc_polylines"]]
    dg = np.zeros(len(r["diagram_dim"]), dtype=[("dim", "u1"), ("birth", "f8"), ("death", "f8"), ("birth_point", "i8"), ("death_point", "i8")])
    dg["dim"], dg["birth"], dg["death"] = r["diagram_dim"], r["diagram_birth"], r["diagram_death"]
    dg["birth_point"], dg["death_point"] = r["diagram_birth_point"], r["diagram_death_point"]
    m.diagram = dg
    cx = np.zeros(len(r["cancel_upper"]), dtype=[("upper", "i8"), ("lower", "i8"), ("persistence", "f8"), ("level", "f8")])
    cx["upper"], cx["lower"], cx["persistence"], cx["level"] = r["cancel_upper"], r["cancel_lower"], r["cancel_persistence"], r["cancel_level"]
    m.cancellations = cx
    m.basins = r["basins"].reshape(a.shape, order="F")
    m.mountains = r["mountains"].reshape(tuple(s - 1 for s in a.shape), order="F")
    m.threshold, m.steps, m.blocked = r["threshold"], r["cancellations"], r["blocked"]
    return m


def rips(X, *, maxdim: int = 1, thresh: float = np.inf, distance_matrix: bool = False, backend: str = "auto") -> dict:
    """Vietoris-Rips persistence barcodes over Z/2, equal to Ripser's: ``X`` is an (N, D)
    array of points (Euclidean distances, computed in float64 and rounded to float32 as Ripser
    stores them) or, with ``distance_matrix=True``, an (N, N) distance matrix (its lower
    triangle is used). Returns ``{"dgms": [H0, H1, ...]}`` as ``ripser.ripser`` does: per
    dimension up to ``maxdim`` (at most 3) an (n, 2) float32 array of (birth, death) rows,
    ``inf`` for an essential class, bars of zero length left out. ``thresh`` leaves out longer
    edges. ``backend`` is "auto" (the apparent pairs and column listings on a CUDA GPU when
    there is one), "cuda" or "cpu"; the barcode is the same. Ctrl+C interrupts it."""
    a = np.asarray(X, dtype=np.float64)
    if distance_matrix:
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] == 0:
            raise TopoviewError(f"a distance matrix is square with at least one point: got shape {a.shape}")
        values, dim, lower = np.ascontiguousarray(a[np.tril_indices(a.shape[0], -1)]), 0, True
    else:
        if a.ndim == 1:
            a = a[:, None]
        if a.ndim != 2 or a.shape[1] == 0:
            raise TopoviewError(f"points are an (N, D) array: got shape {a.shape}")
        values, dim, lower = np.ascontiguousarray(a).ravel(), a.shape[1], False
    dims, births, deaths, where = _topoview.rips(values, int(dim), lower, int(maxdim), float(thresh), backend)
    _ran(where, backend)
    dgms = []
    for k in range(int(maxdim) + 1):
        at = dims == k
        dgms.append(np.stack([births[at], deaths[at]], axis=1).astype(np.float32).reshape(-1, 2))
    return {"dgms": dgms}


def set_threads(n: int) -> None:
    """Uses ``n`` CPU threads (default: every core) for the rest of the process; call it once,
    before the first computation (e.g. in each Dask worker, ``cores / workers``). Raises
    ``TopoviewError`` when the threads were already set or started, or for a count outside 1 to
    8 per core."""
    if int(n) < 1:
        raise TopoviewError(f"threads must be at least 1, got {n}")
    _topoview.set_threads(int(n))


def backend(name: str = "auto") -> str:
    """The backend ``name`` picks, in words: ``"CUDA: NVIDIA H100 80GB HBM3"`` or
    ``"CPU, 16 threads (no CUDA driver found (libcuda))"``."""
    return _topoview.describe_backend(name)
