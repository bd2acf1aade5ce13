"""Stopping a command the way a person or a scheduler does: Ctrl-C at a terminal, SIGTERM at a
job's time limit, once it is under way (used by the Ctrl-C tests of tournaments, tunes and
calibrations)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

# Ctrl-C as at a terminal: a child inherits an ignored SIGINT (a suite started in the background,
# `nohup pytest &`), and Python then leaves it ignored, so the command runs behind Python's own
# handler, installed first.
AS_AT_A_TERMINAL = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('hearts_sim', run_name='__main__', alter_sys=True)"
)


def default_ctrl_c() -> None:
    """A ``preexec_fn`` for a child that must take Ctrl-C as at a terminal, whatever this process
    inherited (an ignored SIGINT stays ignored in the child, and in Python there)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def started(*arguments: str) -> subprocess.Popen[str]:
    """``hearts-sim ARGUMENTS`` running as at a terminal, its output captured. ``-X faulthandler``:
    should it hang, SIGABRT prints where every thread is."""
    command = [sys.executable, "-X", "faulthandler", "-c", AS_AT_A_TERMINAL, *arguments]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_a_chunk(manifest: Path, timeout: float = 240) -> None:
    """Until the run whose manifest this is has committed a chunk (or ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if manifest.exists() and json.loads(manifest.read_text())["chunks_done"] >= 1:
            return
        time.sleep(0.1)


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (Linux: ``/proc``); a zombie, dead but not yet reaped, does not."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def ends_within(pid: int, seconds: float = 10.0) -> bool:
    """Whether process ``pid`` has stopped running within ``seconds``."""
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not running(pid)
