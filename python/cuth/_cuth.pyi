"""Type stub of cuth's native module (see cuth/__init__.py)."""

import os
from typing import Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str

FloatArray = npt.NDArray[np.float64]
#: Block name → W, or layer name → map (ndarray (ny, nx), W per cell).
Power = Mapping[str, Union[float, npt.ArrayLike]]

class CuthError(Exception):
    """Any error of cuth."""

class InputError(CuthError):
    """Bad input: a stack, a power, a trace or an option (the CLI's exit code 2)."""

class SolverError(CuthError):
    """A solve that failed: no convergence, a device error (the CLI's exit code 1)."""

class BlockTemps(TypedDict):
    layer: str
    #: W; None where the layer's map was set whole.
    power: Optional[float]
    #: K; None for a block outside the grid.
    min: Optional[float]
    avg: Optional[float]
    max: Optional[float]

class Report(TypedDict):
    time: float
    dt: Optional[float]
    iterations: int
    relative_residual: float
    power: float

class Hottest(TypedDict):
    layer: str
    x: float
    y: float
    t: float

class SeriesTemps(TypedDict):
    min: FloatArray
    avg: FloatArray
    max: FloatArray

class TransientRecord(TypedDict):
    #: s, after each step.
    time: FloatArray
    blocks: dict[str, SeriesTemps]
    probes: dict[str, FloatArray]
    hottest: FloatArray

class SolveResult:
    """A steady solve's outcome."""

    #: Layer name → map (ny, nx), K (mean over the layer's z cells).
    layers: dict[str, FloatArray]
    #: Block name (``layer.block`` where shared by layers) → temperatures.
    blocks: dict[str, BlockTemps]
    #: Probe name → K.
    probes: dict[str, float]
    #: ``summary.json``'s content.
    summary: dict
    #: Every cell, (nz, ny, nx), K.
    temperature: FloatArray
    @property
    def max_k(self) -> float:
        """The hottest temperature, K."""

class Stack:
    """A checked stack with its grid, solver options and device."""

    @staticmethod
    def from_toml(
        path: Union[str, os.PathLike[str]],
        *,
        grid: Optional[Tuple[int, int]] = None,
        device: str = "auto",
        rtol: Optional[float] = None,
        precond: Optional[Literal["none", "jacobi", "chebyshev", "mg"]] = None,
        max_iter: Optional[int] = None,
    ) -> Stack:
        """Reads and checks a stack file. ``grid`` is (nx, ny); ``device``
        ``"auto"`` (CUDA when usable, else the CPU), ``"cpu"``, ``"cuda"``
        or ``"cuda:N"``."""
    @staticmethod
    def from_dict(
        d: Mapping[str, object],
        *,
        base_dir: Optional[Union[str, os.PathLike[str]]] = None,
        grid: Optional[Tuple[int, int]] = None,
        device: str = "auto",
        rtol: Optional[float] = None,
        precond: Optional[Literal["none", "jacobi", "chebyshev", "mg"]] = None,
        max_iter: Optional[int] = None,
    ) -> Stack:
        """Checks a dict in the stack file's schema through the stack
        file's own parser (the same errors); relative paths are taken from
        ``base_dir`` (default: the working directory)."""
    @property
    def grid_shape(self) -> Tuple[int, int]:
        """(nx, ny)."""
    @property
    def device(self) -> str:
        """``cpu`` or ``cuda:N``."""
    @property
    def layers(self) -> list[str]:
        """Layer names, bottom to top."""
    @property
    def ambient_k(self) -> float: ...
    def solve(self, power: Optional[Power] = None) -> SolveResult:
        """The steady field, as ``cuth solve``; ``power`` None for the
        stack's own."""
    def transient(
        self,
        trace: Union[str, os.PathLike[str], Mapping[str, npt.ArrayLike]],
        dt: float,
        *,
        steps: Optional[int] = None,
        sample_interval: Optional[float] = None,
        init: Literal["ambient", "steady"] = "ambient",
    ) -> TransientRecord:
        """Backward-Euler steps of ``dt`` s under a trace (a file, or block →
        powers per row, rows ``sample_interval`` s apart, default ``dt``), as
        ``cuth transient --trace``; step k takes the row in force at
        ``(k + 1/2) dt``."""
    def session(self) -> Session:
        """A stepping session at ambient, t = 0, under the stack's power."""

class Session:
    """A stepping session, as ``cuth serve`` holds one. Use it from the
    thread that created it."""

    @property
    def time(self) -> float:
        """Simulated time, s."""
    @property
    def power(self) -> float:
        """Power in, W."""
    def set_power(self, power: Power) -> None:
        """Sets block powers and layer maps from the next solve on."""
    def step(self, dt: float, steps: int = 1) -> Report:
        """``steps`` backward-Euler steps of ``dt`` s."""
    def steady(self) -> Report:
        """The steady field of the power now set (the time stays)."""
    def blocks(self) -> dict[str, BlockTemps]: ...
    def probes(self) -> dict[str, float]: ...
    def hottest(self) -> Hottest: ...
    def layer(self, name: str) -> FloatArray:
        """Layer ``name``'s map, (ny, nx), K."""
    def temperature(self) -> FloatArray:
        """Every cell, (nz, ny, nx), K."""

def sweep(
    stack: Stack,
    powers: Union[npt.ArrayLike, Sequence[Power]],
    *,
    layer: Optional[str] = None,
    out_layer: Optional[str] = None,
    batch: Optional[int] = None,
) -> FloatArray:
    """Many power cases, as ``cuth sweep``: an ndarray (cases, ny, nx) of W
    per cell for ``layer`` (default: the first powered layer), or a list of
    power dicts. Returns ``out_layer``'s map (default ``layer``) per case,
    (cases, ny, nx), K. ``batch``: cases solved together (default 32 on a
    GPU, 1 on the CPU)."""
