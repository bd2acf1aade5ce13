"""What runs where CI does not: Windows and macOS, emulated on Linux where a piece can be.

The emulation removes what Windows' Python lacks (``fcntl``, ``os.fork``, ``os.register_at_fork``,
``os.killpg``, ``os.fchmod``, ``os.O_NOFOLLOW``) before hearts_sim is imported, in a fresh
interpreter; what cannot be emulated (an ``exec:`` engine's non-blocking pipes) is refused on
Windows in one line, and the README's Platforms section says which parts are checked where."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agents.external as external
from agents.api import load
from agents.kinds import AgentError

# Windows' standard library, approximately: the third-party libraries load first (as on Windows,
# they have their own ways there), then the POSIX-only pieces go
WITHOUT_POSIX = """
import os, sys, runpy
import numpy, numba, pandas, pyarrow, tqdm  # noqa: F401
for name in ("register_at_fork", "fork", "killpg", "setpgid", "pread", "fchmod", "O_NOFOLLOW"):
    if hasattr(os, name):
        delattr(os, name)
sys.modules["fcntl"] = None
sys.argv = ["hearts-sim", *sys.argv[1:]]
runpy.run_module("hearts_sim", run_name="__main__")
"""


def _without_posix(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_POSIX, *args], capture_output=True, text=True, input=stdin, timeout=600
    )


def test_the_command_line_runs_without_posix(tmp_path: Path) -> None:
    """``import agents`` called ``os.register_at_fork`` unguarded: on Windows every command
    died at import with ``AttributeError``. A match with ``--out`` runs (unlocked) and reads back."""
    assert _without_posix("rules").returncode == 0
    out = tmp_path / "run"
    played = _without_posix("match", "rule", "random", "--deals", "3", "--out", str(out), "--json", "--quiet")
    assert played.returncode == 0, played.stderr[-2000:]
    assert json.loads(played.stdout)["deals"] == 3
    status = _without_posix("status", str(out))
    assert status.returncode == 0 and "finished" in status.stdout, status.stderr[-2000:]
    # a lock file that is a link is refused here too (no O_NOFOLLOW: looked at before the open)
    (out / ".lock").unlink(missing_ok=True)
    (out / ".lock").symlink_to(tmp_path / "elsewhere")
    resumed = _without_posix("match", "--resume", str(out), "--quiet")
    refused = f"hearts-sim: error: {out / '.lock'} is a symbolic link"
    assert resumed.returncode == 2 and resumed.stderr.startswith(refused), resumed.stderr[-2000:]
    assert not (tmp_path / "elsewhere").exists()


def test_serve_says_when_its_time_limit_cannot_hold() -> None:
    """Without ``fork()`` a served decision has no worker to kill at its time limit: the limit
    was dropped without a word, and an agent that hung hung the server."""
    served = _without_posix("serve", "--agent", "random", "--time-limit", "5")
    assert served.returncode == 0, served.stderr[-2000:]
    assert served.stderr.startswith(
        "hearts-sim serve: warning: no fork() here (Windows): --time-limit 5 is not enforced"
    )
    assert "warning" not in _without_posix("serve", "--agent", "random", "--time-limit", "0").stderr


def test_an_engine_on_windows_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its pipes are read without blocking through ``select()``, which takes sockets only on
    Windows: ``os.set_blocking`` was an ``AttributeError`` traceback (Python 3.11), every first
    decision an ``OSError`` (3.12)."""
    monkeypatch.setattr(external.sys, "platform", "win32")
    with pytest.raises(AgentError, match=r"an exec: engine needs Linux or macOS .*run hearts-sim under WSL"):
        load("exec:python -c 'pass'").warm_up()


SEARCH_CLOCK_ON_WINDOWS = """
import ctypes, time
import numba
from llvmlite import binding
import agents.search as search

@ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_int64))
def counter(slot):  # Windows' performance counter, at its usual 10 MHz
    slot[0] = time.perf_counter_ns() // 100 + 10**13  # 11.6 days up: ticks * 10**9 overflows
    return 1

binding.add_symbol(search._PERFORMANCE_COUNTER, ctypes.cast(counter, ctypes.c_void_p).value)
search._WINDOWS_CLOCK, search._performance_frequency = True, lambda: 10_000_000

@numba.njit(cache=False)
def read():
    return search._monotonic_ns()

first, reference = read(), time.perf_counter_ns() + 10**15
time.sleep(0.05)
print(first - reference, read() - first)
"""


def test_the_searches_clock_reads_windows_performance_counter() -> None:
    """The searches' clock called ``clock_gettime``, which Windows' C runtime lacks: every
    search agent (``hard`` too) failed to link there. On Windows it reads kernel32's
    ``QueryPerformanceCounter``; here a stand-in for it, through the same compiled code."""
    ran = subprocess.run(
        [sys.executable, "-c", SEARCH_CLOCK_ON_WINDOWS], capture_output=True, text=True, timeout=600
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    offset, slept = (int(value) for value in ran.stdout.split())
    assert abs(offset) < 10**7  # ns: the counter's time, scaled without overflowing
    assert 4 * 10**7 < slept < 10**10
