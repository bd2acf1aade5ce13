"""The one place numba flags are set; every kernel is decorated with ``njit`` or ``njit_parallel``.

``cache=True``: only the first run on a machine pays for compiling (the cache lives
in ``__pycache__`` or ``NUMBA_CACHE_DIR``). Numba's cache ignores the values of module
globals, so no kernel may switch behaviour on a global: rule switches arrive as data.

Hot per-card kernels take value types only (records, tuples, scalars): every array
argument costs an atomic reference-count increment and decrement per call, which
measured at about 5x the cost of the rules logic itself.
"""

from __future__ import annotations

import numba

_FLAGS = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}

njit = numba.njit(**_FLAGS)  # type: ignore[call-overload]
njit_parallel = numba.njit(parallel=True, **_FLAGS)  # type: ignore[call-overload]
# Inlined at numba-IR level, so the caller's reference-count pruning sees through it:
# for the tiny helpers that take arrays inside a hot loop.
njit_inline = numba.njit(inline="always", **_FLAGS)  # type: ignore[call-overload]
# For functions generated while a caller compiles (agents.dispatch composes them per set of
# policy kinds): always inlined into that caller, whose cache holds them, so no cache of their own.
njit_generated = numba.njit(inline="always", **{**_FLAGS, "cache": False})  # type: ignore[call-overload]
prange = numba.prange


def max_threads() -> int:
    """The number of threads numba may use on this machine (``NUMBA_NUM_THREADS``)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]
