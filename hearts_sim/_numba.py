"""The one place numba flags are set; every kernel is decorated with one of the ``njit`` flavours
at the end of this module.

``cache=True``: only the first run on a machine pays for compiling (the cache lives in
``NUMBA_CACHE_DIR``, ``__pycache__`` or the user's cache folder; where none can be written,
``CACHING`` is False, every process compiles, and a warning says so; a cache that cannot be read
or written, a full disk, costs only the cache). Numba's cache ignores the
values of module globals, so no kernel may switch behaviour on a global: rule switches arrive
as data.

numba stamps a cached function with its own file only, and a cached function holds the code of
every function it calls: edit ``agents/passing.py`` and ``agents/ismcts.py``'s cached pass kept
running the old searched pass in every later process. So a project function's stamp here also
carries the sources of every project module its file imports, transitively
(``ProjectStampLocator``): a cached function goes stale exactly when something it could have
compiled in changes.

Hot per-card kernels take value types only (records, tuples, scalars): every array
argument costs an atomic reference-count increment and decrement per call, which
measured at about 5x the cost of the rules logic itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import re
import warnings
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any


def _check_thread_variable() -> None:
    """``NUMBA_NUM_THREADS`` of 0 or less made numba's own import fail with a traceback, and
    one not a number printed numba's traceback as a warning and went on with every core."""
    value = os.environ.get("NUMBA_NUM_THREADS")
    if value is None:
        return
    try:
        if int(value) >= 1:
            return
    except ValueError:
        pass
    raise ImportError(
        f"NUMBA_NUM_THREADS={value!r} is not valid: set it to a whole number of threads, 1 or more "
        "(or unset it for every core)",
        name=__name__,
    )


_check_thread_variable()  # before numba reads it on import

import numba  # noqa: E402
from llvmlite import binding as llvm_binding  # noqa: E402
from numba.core import caching  # noqa: E402

if numba.config.DISABLE_JIT:  # type: ignore[attr-defined]
    # The kernels cannot run as plain Python (LLVM intrinsics, generated dispatch code): say so
    # here, once, rather than fail somewhere inside with an AttributeError.
    raise ImportError(
        "NUMBA_DISABLE_JIT is set, and hearts_sim's kernels need numba's compiler: unset it (to step "
        "through one kernel in Python, call its .py_func without it: its callees stay compiled)",
        name=__name__,
    )


def target_cpu_features() -> frozenset[str]:
    """The CPU features numba compiles for (``+bmi2``, ``-avx512f``, ...), as its code generator
    chooses them: ``NUMBA_CPU_FEATURES`` if set (numba sets none for ``NUMBA_CPU_NAME=generic``,
    the portable cache), otherwise the host's. A kernel may use an instruction only where this
    set enables it: LLVM aborts the process on an intrinsic its target lacks."""
    features = numba.config.CPU_FEATURES  # type: ignore[attr-defined]
    if features is None:
        features = llvm_binding.get_host_cpu_features().flatten()
    return frozenset(feature.strip() for feature in str(features).split(",") if feature.strip())


def max_threads() -> int:
    """The most threads the loops may use on this machine (numba's ``NUMBA_NUM_THREADS``: the
    cores, unless that variable says fewer)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def threads_bound() -> str:
    """What bounds ``max_threads()``, for a message: this machine's cores, or the
    ``NUMBA_NUM_THREADS`` variable where it says fewer (the cap blamed on the cores misled)."""
    cores = int(numba.config.NUMBA_DEFAULT_NUM_THREADS)  # type: ignore[attr-defined]
    if max_threads() != cores:  # fewer, or more than the cores (oversubscribed)
        return f"NUMBA_NUM_THREADS={max_threads()}, on a machine of {cores} cores"
    return "this machine's cores"


# ---------------------------------------------------------------- what a cached function is built from
PROJECT_PACKAGES = ("hearts_sim", "agents")
_PROJECT_ROOT = Path(__file__).resolve().parent.parent
# The registry imports every agent to look kinds up by name; code compiled against a set of
# kinds carries that set's own digest in its numba type (``agents.dispatch.KindSet``), so the
# import walk takes the registry's own source but does not follow its imports (otherwise every
# edit to any agent would recompile the loops of tables that do not seat it).
IMPORT_WALK_STOPS = frozenset({"agents.registry"})


@cache
def _module_file(module: str) -> Path | None:
    """The source file of project module ``module`` (a package's ``__init__``: None, so that no
    kernel may live in one: an edit there is in no stamp), found on disk: what a stamp covers
    never depends on what a process imported."""
    parts = module.split(".")
    if parts[0] not in PROJECT_PACKAGES:
        return None
    path = _PROJECT_ROOT.joinpath(*parts).with_suffix(".py")
    return path if path.is_file() else None


@cache
def module_source(module: str) -> tuple[str, frozenset[str]]:
    """A project module's source digest and the project modules it imports."""
    path = _module_file(module)
    if path is None:
        raise ValueError(f"{module} is not a project module with a source file")
    return _source_and_imports(path)


# An import statement, read from the source text (its backslash continuations joined): ``import
# a.b as c, d`` (group 3) or ``from a.b import c, d`` (group 1, the names in group 2, parenthesised
# over lines, comments and all, or not), at the start of a line or after ``;`` or ``:`` (``if c:
# import x``). Parsing every module (``ast``) took a quarter of a second of every command,
# ``--help`` too; the text is read in a millisecond. Where the pattern sees an import that does
# not run (in a string), a stamp covers one module more; tests/test_dispatch.py checks that it
# misses none the parser sees.
_IMPORT = re.compile(
    r"(?:^|[;:])[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\((?:[^)#]|#[^\n]*\n)*\)|[^\n;]*)"
    r"|import[ \t]+([^\n;]*))",
    re.MULTILINE,
)


def _source_and_imports(path: Path) -> tuple[str, frozenset[str]]:
    source = path.read_bytes()
    imports: set[str] = set()
    for found in _IMPORT.finditer(source.decode("utf-8", "replace").replace("\\\n", " ")):
        module, names, plain = found.groups()
        if plain is not None:
            imports.update(_imported_names(plain))
        elif not module.startswith("."):  # relative imports: the project writes none
            imports.add(module)
            imports.update(f"{module}.{name}" for name in _imported_names(names.strip("()")))
    modules = frozenset(name for name in imports if _module_file(name) is not None)
    return hashlib.sha256(source).hexdigest()[:16], modules


def _imported_names(text: str) -> list[str]:
    """The names of an import list (``a.b as c, d  # comment``), without their aliases."""
    lines = (line.split("#", 1)[0] for line in text.splitlines())
    return [item.split()[0] for item in " ".join(lines).replace("\\", " ").split(",") if item.strip()]


def source_closure(modules: Iterable[str]) -> dict[str, str]:
    """Source digests of ``modules`` and every project module they import, transitively (not
    past ``IMPORT_WALK_STOPS``)."""
    seen: dict[str, str] = {}
    todo = list(modules)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        digest, imports = module_source(module)
        seen[module] = digest
        if module not in IMPORT_WALK_STOPS:
            todo.extend(imports)
    return seen


@cache
def module_stamp(module: str) -> str:
    """One digest of ``source_closure([module])``."""
    return _closure_digest([module])


def _closure_digest(modules: Iterable[str]) -> str:
    return hashlib.sha256(repr(sorted(source_closure(modules).items())).encode()).hexdigest()[:16]


@cache
def script_stamp(path: str) -> str | None:
    """The ``module_stamp`` of a file in the project tree outside the packages (a script of
    ``experiments/``, run as ``__main__`` or imported by a test): one digest of the project
    modules it imports, transitively; None if it imports none (a file of another package, where
    the project is installed beside it). Its own source numba's stamp already covers."""
    _, imports = _source_and_imports(Path(path))
    return _closure_digest(imports) if imports else None


class _ProjectStamp:
    """A numba cache locator whose source stamp for a project function adds the ``module_stamp``
    of its module, and for a function of a script in the project tree the ``script_stamp`` of
    its file (for any other function: numba's own stamp)."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        super().__init__(py_func, py_file)  # type: ignore[call-arg]
        self._module = py_func.__module__
        self._file = str(Path(py_file).resolve())

    def get_source_stamp(self) -> Any:
        stamp = super().get_source_stamp()  # type: ignore[misc]
        if _module_file(self._module):
            return stamp, module_stamp(self._module)
        if Path(self._file).is_relative_to(_PROJECT_ROOT) and self._file.endswith(".py"):
            script = script_stamp(self._file)
            return stamp if script is None else (stamp, script)
        return stamp


def _numba_locator(name: str) -> Any:
    """numba's locator class ``name`` (numba before 0.60 names it with a leading underscore)."""
    return getattr(caching, name, None) or getattr(caching, f"_{name}")


class ProjectStampLocator(_ProjectStamp, _numba_locator("InTreeCacheLocator")):  # type: ignore[misc]
    """The cache in ``__pycache__``, stamped with the sources a function is built from."""


class ProjectStampUserLocator(_ProjectStamp, _numba_locator("UserProvidedCacheLocator")):  # type: ignore[misc]
    """The cache in ``NUMBA_CACHE_DIR``, stamped with the sources a function is built from."""


class ProjectStampUserWideLocator(_ProjectStamp, _numba_locator("UserWideCacheLocator")):  # type: ignore[misc]
    """The user's cache folder (``~/.cache/numba``) where ``__pycache__`` cannot be written (an
    install owned by another user), stamped with the sources a function is built from."""


# numba tries its locators in order; ours go first, in numba's own order (the user's directory,
# then __pycache__, then the user-wide folder), and numba's stay behind them for what ours decline.
caching.CacheImpl._locator_classes[:0] = [
    ProjectStampUserLocator,
    ProjectStampLocator,
    ProjectStampUserWideLocator,
]


# numba's own guard (Windows' spurious EACCES); a numba without it: none, and no patch below
_numba_cache_io = getattr(caching.Cache, "_guard_against_spurious_io_errors", None)
_cache_io_failed = False


@contextlib.contextmanager
def _cache_io_or_compile(self: caching.Cache) -> Iterator[None]:
    """numba reads and writes a cache entry inside this guard, and lets an ``OSError`` there end
    the process after the compile succeeded: a full disk or a spent quota (``No space left on
    device``) killed every command. Here a failed save keeps the kernel compiled for this process
    only, and a failed load compiles it again; one warning per process says so."""
    global _cache_io_failed
    try:
        with _numba_cache_io(self):  # type: ignore[misc]
            yield
    except OSError as error:
        if not _cache_io_failed:
            _cache_io_failed = True
            folder = numba.config.CACHE_DIR or self._cache_path  # type: ignore[attr-defined]
            warnings.warn(
                f"numba cannot use its cache in {folder} "
                f"({error.strerror or error}): kernels compile in every process until it can; free "
                "space there or set NUMBA_CACHE_DIR to another folder",
                RuntimeWarning,
                stacklevel=1,
            )


if _numba_cache_io is not None:
    caching.Cache._guard_against_spurious_io_errors = _cache_io_or_compile  # type: ignore[method-assign]


# What unpickling a damaged entry raises (truncated by a full disk mid-copy, overwritten): numba
# let it end every later process that loaded the function, until the file was deleted by hand
DAMAGED_ENTRY = (
    EOFError,
    pickle.UnpicklingError,
    ValueError,
    TypeError,
    AttributeError,
    IndexError,
    KeyError,
)
_numba_load = caching.Cache._load_overload
_damaged_seen = False


def _load_or_compile(self: caching.Cache, sig: Any, target_context: Any) -> Any:
    """numba's load of a cache entry; a damaged one (``DAMAGED_ENTRY``) is removed and read as
    missing, so the kernel compiles again and is written anew, with one warning naming it. Loads
    only: a failure while saving is numba's to raise."""
    global _damaged_seen
    try:
        return _numba_load(self, sig, target_context)
    except DAMAGED_ENTRY as error:
        index = Path(self._cache_file._index_path)  # type: ignore[attr-defined]
        with contextlib.suppress(OSError):  # its data files are found through it: gone with it
            index.unlink()
        if not _damaged_seen:
            _damaged_seen = True
            warnings.warn(
                f"numba's cache entry {index} (or its data beside it) was damaged "
                f"({type(error).__name__}: {error}): compiled again, and written anew",
                RuntimeWarning,
                stacklevel=1,
            )
        return None


caching.Cache._load_overload = _load_or_compile  # type: ignore[method-assign]


def _probe() -> None:
    """A function of this file, for numba's locators to be asked about (``_cache_folder``)."""


def _cache_folder() -> bool:
    """Whether numba finds a folder to cache in (``NUMBA_CACHE_DIR``, the install's
    ``__pycache__``, the user's cache folder): its own locators asked about this file, as they
    will be about every kernel's. Where none can be written (a read-only container, a serverless
    function without a writable home) numba would refuse every ``cache=True`` kernel on import."""
    locators: list[Any] = caching.CacheImpl._locator_classes
    return any(locator.from_function(_probe, __file__) is not None for locator in locators)


CACHING = _cache_folder()
_GIVEN_CACHE = os.environ.get("NUMBA_CACHE_DIR")
if CACHING and _GIVEN_CACHE and ProjectStampUserLocator.from_function(_probe, __file__) is None:
    warnings.warn(  # numba passes it over without a word: a container recompiled at every start
        f"NUMBA_CACHE_DIR={_GIVEN_CACHE} is not a folder numba can write: it caches in the next one "
        "it can (the install's __pycache__, or ~/.cache/numba); point it at a writable folder",
        RuntimeWarning,
        stacklevel=1,
    )
if not CACHING:
    warnings.warn(
        "numba has no writable folder to cache compiled kernels in (NUMBA_CACHE_DIR, the install's "
        "__pycache__, the user's cache folder): every process compiles them again; set "
        "NUMBA_CACHE_DIR to a writable folder",
        RuntimeWarning,
        stacklevel=1,  # this module: which importer came first says nothing
    )

# nogil: the loops run their blocks side by side on Python threads (``selfplay.loops.in_blocks``)
_FLAGS = {"cache": CACHING, "nogil": True, "fastmath": False, "error_model": "numpy"}

njit = numba.njit(**_FLAGS)  # type: ignore[call-overload]
# Inlined at numba-IR level, so the caller's reference-count pruning sees through it:
# for the tiny helpers that take arrays inside a hot loop.
njit_inline = numba.njit(inline="always", **_FLAGS)  # type: ignore[call-overload]
# For functions generated while a caller compiles (agents.dispatch composes them per set of
# policy kinds): always inlined into that caller, whose cache holds them, so no cache of their own.
njit_generated = numba.njit(inline="always", **{**_FLAGS, "cache": False})  # type: ignore[call-overload]
# For kernels that freeze a kind's data (``PolicyKind.data``: a network's weights) and are called
# with arguments the inliner cannot take (``*args``): no cache of their own, which would keep the
# old data, so the loops that call them, cached under the data's digest, hold their code.
njit_uncached = numba.njit(**{**_FLAGS, "cache": False})  # type: ignore[call-overload]
