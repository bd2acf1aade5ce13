"""The two expected ways a request to the toolkit fails, which the command line reports as one line.

Each module raises its own subclass (``RulesError``, ``AgentError``, ``TournamentError``, ...),
whose message names what is wrong and what is accepted; ``hearts-sim`` prints any of them as
``hearts-sim: error: <message>`` and exits with code 2 (``InputError``) or 1 (``StorageError``)
without importing the module that raised it, and anything else keeps its traceback: a bug.
A command stopped by a signal (Ctrl-C, SIGTERM: ``Terminated``) exits with the shell's code for
it, in one line that says what was kept (``Stopped``); ``signal_handlers`` sets the handlers that
raise or hold them.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

Handler = Callable[[int, Any], Any] | signal.Handlers  # a Python handler, SIG_IGN or SIG_DFL

# the shell's exit codes for a command stopped by a signal: 128 + the signal's number
EXIT_INTERRUPTED = 128 + signal.SIGINT  # Ctrl-C: 130
EXIT_TERMINATED = 128 + signal.SIGTERM  # SIGTERM: 143


class InputError(ValueError):
    """Input that cannot be used: an unknown name, a value of the wrong type or out of range, an
    impossible combination, a damaged run. Nothing has been computed or written because of it."""


def install_hint(library: str, extra: str) -> str:
    """How to install ``library``, an optional dependency: the extra of ``hearts-sim`` that
    brings it, or the library alone."""
    checkout = f'pip install -e ".[{extra}]"'
    return f'pip install "hearts-sim[{extra}]" (in a checkout: {checkout}), or pip install {library}'


class MissingExtra(InputError, ModuleNotFoundError):
    """A feature whose optional library is not installed (``what`` needs ``library``, which the
    extra ``extra`` installs): an ``InputError``, printed in one line by the command line and the
    scripts, and a ``ModuleNotFoundError`` whose ``name`` is the library."""

    def __init__(self, what: str, library: str, extra: str):
        super().__init__(f"{what} needs {library}: {install_hint(library, extra)}")
        self.name, self.needed = library, (what, library, extra)

    def __reduce__(self) -> tuple[type[MissingExtra], tuple[str, str, str]]:
        return type(self), self.needed  # as raised (across a process: a Dask worker, a pool)


class StorageError(OSError):
    """Results that could not be written (a full disk, ...): everything saved before is kept, and
    the message says how to go on; ``failure``, where given: the write alone, without how."""

    failure: str | None = None


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's time limit, ``docker stop``, ``kill``), raised by ``hearts-sim``'s
    handler: handled as Ctrl-C is (finished chunks kept, the resume command said), with exit code
    143 instead of 130."""


class Stopped(Exception):
    """A long job (a tournament, a tune, a calibration) stopped by Ctrl-C or SIGTERM between two of
    its steps, raised in place of the ``KeyboardInterrupt``: its message says what was kept and
    how to go on, and ``hearts-sim`` prints it as one line and exits with ``exit_code``.
    ``story``: that after the word for the signal (``after 2 of 5 chunks; resume with: ...``)."""

    def __init__(self, story: str, terminated: bool = False):
        super().__init__(f"{'terminated' if terminated else 'interrupted'} {story}")
        self.terminated = terminated

    @property
    def exit_code(self) -> int:
        """The shell's code for the signal: 143 (SIGTERM) or 130 (Ctrl-C)."""
        return signal_exit_code(self)


def signal_exit_code(stop: BaseException) -> int:
    """The shell's code for what stopped a job: 143 for SIGTERM (``Terminated``, or a ``Stopped``
    that says so), 130 for Ctrl-C."""
    terminated = isinstance(stop, Terminated) or (isinstance(stop, Stopped) and stop.terminated)
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


@contextmanager
def signal_handlers(handlers: Mapping[signal.Signals, Handler]) -> Iterator[None]:
    """These handlers (a Python function, ``SIG_IGN``, ``SIG_DFL``) for these signals during the
    block, the ones they had restored after it.
    Only the main thread receives signals and may set handlers: elsewhere the block runs with
    the handlers there are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


_terminations = [0]  # SIGTERMs taken by ``sigterm_as_interrupt``'s handler in this process


def _raise_terminated(signum: int, frame: object) -> None:
    _terminations[0] += 1
    raise Terminated


def terminations() -> int:
    """How many SIGTERMs ``sigterm_as_interrupt``'s handler has taken: one whose ``Terminated`` a
    callback swallowed (numba's compiler) is known to have come all the same."""
    return _terminations[0]


# numba's error for a compile stopped inside a callback of llvmlite's, which swallowed the
# signal's exception there ("Exception ignored on calling ctypes callback function")
NUMBA_STOPPED_COMPILING = "no compiled object yet for "


@contextmanager
def signals_unwrapped(compile_stops: bool = False) -> Iterator[None]:
    """A Ctrl-C (or SIGTERM) that numba turned into another error during the block is raised as
    the ``KeyboardInterrupt`` (``Terminated``) it was, so that ``except KeyboardInterrupt`` sees
    it (a job then says what it kept, where it was a bare "interrupted", or a traceback):
    - one that arrives as a kernel is called (its globals unpickled) is wrapped in a
      ``SystemError`` ("returned a result with an exception set"), raised from it;
    - with ``compile_stops`` (the command line's last handler), one that falls in llvmlite's
      callback during a compile is swallowed there, and numba fails with ``RuntimeError: no
      compiled object yet`` (``NUMBA_STOPPED_COMPILING``): SIGTERM if one was taken during the
      block, else Ctrl-C. Nothing then shows the signal, so a job does not guess it (a numba
      failure of that text would read as a stop, "resume with").
    Any other error passes as it is."""
    terminations_before = terminations()
    try:
        yield
    except (SystemError, RuntimeError) as error:
        stop = _signal_within(error)
        compile_stopped = isinstance(error, RuntimeError) and str(error).startswith(NUMBA_STOPPED_COMPILING)
        if stop is None and compile_stops and compile_stopped:
            stop = Terminated() if terminations() > terminations_before else KeyboardInterrupt()
        if stop is None:
            raise
        raise stop from None


def _signal_within(error: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM) an error was raised from, through its causes; None if none."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def sigterm_as_interrupt() -> Any:
    """A context manager: SIGTERM (a scheduler's time limit, ``docker stop``) raises
    ``Terminated`` during the block, handled as Ctrl-C is (a job keeps what it finished and says
    how to go on; its exit code 143), where Python's default killed the process without a word.
    ``hearts-sim`` and every script of ``experiments/`` (``run_script``) run under it."""
    return signal_handlers({signal.SIGTERM: _raise_terminated})


HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM until the block is done, then deliver them to the handlers they
    had (Ctrl-C's raises ``KeyboardInterrupt``; SIGTERM's kills the process, or under
    ``hearts-sim`` raises ``Terminated``): a chunk's Parquet part and the manifest that counts it
    are written together or not at all; a trainer's checkpoint is packed and written whole (a
    Ctrl-C inside ``np.savez`` was a traceback from its zip file). (Only the main thread receives
    signals; elsewhere this does nothing.)"""
    received: list[int] = []
    with signal_handlers({held: lambda signum, frame: received.append(signum) for held in HELD_SIGNALS}):
        yield
    for signum in dict.fromkeys(received):
        signal.raise_signal(signum)
