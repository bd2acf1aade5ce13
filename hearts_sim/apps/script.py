"""What a script shares with ``hearts-sim``: its failures reported in one line, its numbers checked.

Design note. ``reported`` is the command line's own handling of a failure: the toolkit's
``InputError`` (and ``UsageError``) as ``PROG: error: <message>`` with exit code 2, a write that
found no room as one line with code 1, a job stopped by Ctrl-C or SIGTERM as what it kept (130,
143), a closed pipe quietly; anything else is a bug and keeps its traceback. The scripts of
``experiments/`` run their ``main`` through ``run_script``, and declare their numbers with
``whole`` and ``number``, argparse types that refuse a bad value before any work starts, in the
words ``hearts-sim`` uses (``--hands 0 is not valid: choose a whole number in 1 .. ...``): a
script that printed a traceback for ``--threads 0``, or timed a million hands before refusing
``--hands 0``, says so in one line.

>>> whole("--hands")("0")
Traceback (most recent call last):
...
hearts_sim.apps.options.UsageError: --hands 0 is not valid: choose a whole number in 1 .. 1000000000000
>>> number("--trust", 0, 1, open_high=True)("1")
Traceback (most recent call last):
...
hearts_sim.apps.options.UsageError: --trust 1 is not valid: choose a number from 0 and below 1
"""

from __future__ import annotations

import argparse
import codecs
import errno
import math
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from hearts_sim.apps.options import COUNT, NUMBER, SEED, Option, UsageError, threads_option
from hearts_sim.core.cards import SUIT_LETTERS, SUIT_SYMBOLS
from hearts_sim.core.errors import (
    InputError,
    Stopped,
    StorageError,
    Terminated,
    signal_exit_code,
    signals_unwrapped,
    sigterm_as_interrupt,
)
from hearts_sim.core.files import unwritable
from hearts_sim.engine.rng import MAX_DEALS

EXIT_FAILURE, EXIT_USAGE = 1, 2
# what a write fails with on a full disk, a spent quota, a file past its size limit, a dying disk
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


class ScriptParser(argparse.ArgumentParser):
    """argparse's parser with ``hearts-sim``'s manners: a refusal is a ``UsageError``, one line
    from ``reported`` (argparse printed its whole usage above the line), and no abbreviated
    options (``--rule`` taken for ``--rules``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def whole(flag: str, low: int = 1, high: int = MAX_DEALS) -> Callable[[str], int]:
    """The argparse ``type`` of a whole number in ``low .. high``, refused in one line."""
    parse: Callable[[str], int] = Option(flag, COUNT, "", low=low, high=high, flags=(flag,)).parse
    return parse


def number(
    flag: str, low: float = -math.inf, high: float = math.inf, open_low: bool = False, open_high: bool = False
) -> Callable[[str], float]:
    """The argparse ``type`` of a finite number from ``low`` to ``high`` (either end left out
    with ``open_low``, ``open_high``), refused in one line."""
    option = Option(
        flag, NUMBER, "", low=low, high=high, flags=(flag,), open_low=open_low, open_high=open_high
    )
    parse: Callable[[str], float] = option.parse
    return parse


def threads() -> Callable[[str], int]:
    """The argparse ``type`` of ``--threads``: the command line's own (at most this machine's
    cores, or ``NUMBA_NUM_THREADS``, the bound named in its refusal)."""
    parse: Callable[[str], int] = threads_option().parse
    return parse


def master_seed() -> Callable[[str], int]:
    """The argparse ``type`` of ``--seed``: the command line's own (``SEED``), 0 .. 2**64-1."""
    parse: Callable[[str], int] = SEED.parse
    return parse


def out_file(flag: str, make_folder: bool = False) -> Callable[[str], Path]:
    """The argparse ``type`` of a file to write at the end: its folder must exist (or, with
    ``make_folder``, is made) and take it, checked before the work whose results it would lose."""

    def parse(text: str) -> Path:
        path = Path(text).expanduser()
        if not text.strip() or path.is_dir():
            raise UsageError(f"{flag} {text!r} is not valid: name a file to write (not a folder)")
        if path.parent.exists() and not path.parent.is_dir():
            raise UsageError(f"{flag} {text}: {path.parent} is a file, not a folder")
        if make_folder:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise UsageError(f"{flag} {text}: cannot create its folder ({error.strerror})") from None
        if not path.parent.is_dir():
            raise UsageError(f"{flag} {text}: its folder {path.parent} does not exist")
        why = unwritable(path.parent)
        if why is not None or (path.exists() and not os.access(path, os.W_OK)):
            raise UsageError(f"{flag} {text}: cannot be written ({why or 'Permission denied'})")
        return path

    return parse


def quiet_stdout() -> None:
    """After a closed pipe (``hearts-sim ... | head -1``) or a full disk under stdout: point
    stdout at /dev/null, so that Python's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def reported(prog: str, work: Callable[[], int | None]) -> int:
    """Run ``work`` and return its exit code, its expected failures printed as one line
    prefixed with ``prog`` (see the module's note)."""
    try:
        with signals_unwrapped(compile_stops=True):  # numba's wrapping of a signal: Ctrl-C, not a traceback
            code = work()
            sys.stdout.flush()  # here, where a failure is reported, not at the interpreter's exit
        return int(code or 0)
    except StorageError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except (InputError, UsageError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        quiet_stdout()
        return 0
    except OSError as error:  # stdout on a full disk (> results.json), or a write no one caught
        if error.errno == errno.ENAMETOOLONG:  # a path given: a part over 255 bytes, anywhere
            where = error.filename or "a path"
            print(f"{prog}: error: {where}: a name in it is too long for the file system", file=sys.stderr)
            return EXIT_USAGE
        if error.errno not in NO_ROOM:
            raise
        quiet_stdout()
        where = error.filename or "the output"
        print(f"{prog}: error: cannot write {where}: {error.strerror}", file=sys.stderr)
        return EXIT_FAILURE
    except Stopped as stop:  # a long job between two steps: what it kept, how to go on
        print(f"{prog}: {stop}", file=sys.stderr)
        return stop.exit_code
    except KeyboardInterrupt as stop:  # Terminated (SIGTERM) among them
        print(f"{prog}: {'terminated' if isinstance(stop, Terminated) else 'interrupted'}", file=sys.stderr)
        return signal_exit_code(stop)


def with_signals_as_stops(work: Callable[[], int]) -> int:
    """``work()`` (a ``reported`` command) with SIGTERM, a scheduler's time limit, handled as
    Ctrl-C, so that a job says what it kept (exit code 143); a signal landing after its stop line
    (a storm of them a few ms apart, as the handlers are put back) gives its exit code, where it
    was a traceback under that line. The command line's ``main`` and ``run_script`` run under it."""
    try:
        with sigterm_as_interrupt():
            return work()
    except KeyboardInterrupt as stop:
        return signal_exit_code(stop)


def said_if_slow(work: Callable[[], object], line: str, seconds: float) -> None:
    """``work()``, with ``line`` on stderr once it has run ``seconds``: a warm-up that compiles
    on a first run (``serve``, ``play``) sat silent for a minute, as if hung. The timer's thread is
    gone when it returns (a server forks its zygote after)."""
    notice = threading.Timer(seconds, lambda: print(line, file=sys.stderr, flush=True))
    notice.daemon = True
    notice.start()
    try:
        work()
    finally:
        notice.cancel()
        notice.join()


SUIT_LETTER_ERRORS = "hearts_sim.suit_letters"


def _suits_as_letters(error: UnicodeError) -> tuple[str | bytes, int]:
    """An encoding error handler: the suit symbols as letters (``♠Q`` -> ``SQ``), a file name's
    bytes that a locale which is not UTF-8 decoded to surrogates as those bytes (a run's folder
    printed as ``c ??`` under ``LC_ALL=C``, so its printed commands failed), anything else the
    stream cannot encode as ``?``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    if all("\udc80" <= c <= "\udcff" for c in text):  # Python's surrogateescape, undone
        return bytes(ord(c) - 0xDC00 for c in text), error.end
    letters = "".join(SUIT_LETTERS[SUIT_SYMBOLS.index(c)] if c in SUIT_SYMBOLS else "?" for c in text)
    return letters, error.end


codecs.register_error(SUIT_LETTER_ERRORS, _suits_as_letters)


def letters_where_symbols_cannot_print() -> None:
    """Where stdout or stderr cannot encode ``♣♦♠♥`` (``PYTHONIOENCODING=ascii``, a Windows
    console redirected to a file), print suits as letters instead of failing with a
    ``UnicodeEncodeError`` after the work is done; on any strict stream, a file name's bytes that
    are not UTF-8 as those bytes (``_suits_as_letters``), where printing the run's folder failed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            SUIT_SYMBOLS.encode(getattr(stream, "encoding", None) or "utf-8")
            fits = getattr(stream, "errors", "strict") != "strict"  # a UTF-8 one: a name not UTF-8 failed
        except (UnicodeEncodeError, LookupError):
            fits = False
        reconfigure = getattr(stream, "reconfigure", None)
        if not fits and reconfigure is not None:
            reconfigure(errors=SUIT_LETTER_ERRORS)


def run_script(main: Callable[[], int | None]) -> NoReturn:
    """A script's entry point: ``sys.exit(reported(its name, main))``, signals as stops, and suits
    as letters where the streams cannot print their symbols (a script's cards were a
    ``UnicodeEncodeError`` there, where the command line's printed)."""
    letters_where_symbols_cannot_print()
    sys.exit(with_signals_as_stops(lambda: reported(Path(sys.argv[0]).name, main)))  # as argparse names it
