import os
from typing import Callable, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

class TopoviewError(Exception): ...
class ReadError(TopoviewError): ...

Progress = Optional[Callable[[float], object]]
Backend = Literal["auto", "cuda", "cpu"]

class Volume:
    data: np.ndarray
    spacing: Tuple[float, ...]
    affine: Optional[npt.NDArray[np.float64]]
    notes: list[str]
    path: str

class MorseSmale:
    ndim: int
    critical_points: np.ndarray
    arcs: np.ndarray
    polylines: list[npt.NDArray[np.float64]]
    diagram: np.ndarray
    cancellations: np.ndarray
    basins: npt.NDArray[np.int32]
    mountains: npt.NDArray[np.int32]
    threshold: Optional[float]
    steps: int
    blocked: int
    def counts(self) -> list[int]: ...

ArrayLike = Union[npt.ArrayLike, Volume]

def open(
    path: Union[str, bytes, os.PathLike[str]],
    *,
    dims: Optional[Sequence[int]] = ...,
    dtype: Optional[str] = ...,
    endian: Literal["little", "big"] = ...,
    offset: int = ...,
    volume: Optional[int] = ...,
) -> Volume: ...
def ecc(
    data: ArrayLike,
    construction: Literal["top-cells", "vertices"] = ...,
    superlevel: bool = ...,
    nan: Literal["reject", "absent"] = ...,
    smooth: Optional[float] = ...,
    *,
    sigma_units: Literal["voxels", "physical"] = ...,
    truncate: float = ...,
    spacing: Optional[Sequence[float]] = ...,
    backend: Backend = ...,
    progress: Progress = ...,
) -> Tuple[np.ndarray, npt.NDArray[np.int64]]: ...
def zero_crossings(thresholds: npt.ArrayLike, chi: npt.ArrayLike) -> np.ndarray: ...
def smooth(
    data: ArrayLike,
    sigma: float,
    *,
    sigma_units: Literal["voxels", "physical"] = ...,
    truncate: float = ...,
    spacing: Optional[Sequence[float]] = ...,
    backend: Backend = ...,
    progress: Progress = ...,
) -> npt.NDArray[np.float32]: ...
def msc(
    data: ArrayLike,
    persistence: Optional[float] = ...,
    relative: Optional[float] = ...,
    *,
    spacing: Optional[Sequence[float]] = ...,
    backend: Backend = ...,
    progress: Progress = ...,
) -> MorseSmale: ...
def rips(
    X: ArrayLike,
    *,
    maxdim: int = ...,
    thresh: float = ...,
    distance_matrix: bool = ...,
    backend: Backend = ...,
) -> dict[str, list[npt.NDArray[np.float32]]]: ...
def backend(name: Backend = ...) -> str: ...
def set_threads(n: int) -> None: ...
def last_ran() -> Optional[str]: ...
