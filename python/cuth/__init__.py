"""cuth: thermal simulation of 3D IC stacks, from Python.

Open a stack (a TOML stack file, or a dict in its schema) on a device and
solve it: ``Stack.solve`` (steady state, as ``cuth solve``),
``Stack.transient`` (a power trace, as ``cuth transient``),
``Stack.session`` (step by step, as ``cuth serve``) and ``sweep`` (many
power cases, as ``cuth sweep``). Temperatures are K, powers W; maps are
numpy float64 arrays indexed ``[y, x]`` with ``y = 0`` the bottom edge
(min y), fields ``[z, y, x]``.

Errors raise ``CuthError``: ``InputError`` for bad input (a stack, a
power, a trace, an option; the CLI's exit code 2) and ``SolverError`` for a
failed solve (exit code 1), with the messages the CLI prints.
"""

from ._cuth import (
    CuthError,
    InputError,
    Session,
    SolveResult,
    SolverError,
    Stack,
    __version__,
    sweep,
)

__all__ = [
    "CuthError",
    "InputError",
    "Session",
    "SolveResult",
    "SolverError",
    "Stack",
    "__version__",
    "sweep",
]
