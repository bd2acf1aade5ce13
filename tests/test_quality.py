"""Repository hygiene run by the suite: lint, types, and numba flags set in one place only."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hearts_sim", "agents")


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff not installed (pip install -e '.[dev]')")
def test_ruff_lint_passes() -> None:
    result = _run("ruff", "check", *PACKAGES, "tests", "experiments")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes() -> None:
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_numba_flags_live_in_one_place() -> None:
    """Every kernel uses the decorators of hearts_sim/_numba.py; none sets its own flags."""
    stray = []
    pattern = re.compile(r"numba\.(njit|jit)\s*\(|@(numba\.)?(njit|jit)\s*\(")
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if path.name == "_numba.py":
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    stray.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not stray, "numba decorators with their own flags:\n" + "\n".join(stray)
