"""Repository hygiene run by the suite: lint, types, numba flags set in one place only, and the
documents' headings, section links and quoted commands."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hearts_sim", "agents")


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff not installed (pip install -e '.[dev]')")
def test_ruff_lint_passes() -> None:
    result = _run("ruff", "check", *PACKAGES, "tests", "experiments")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(
    int(np.__version__.split(".")[0]) < 2,
    reason="the code is typed against numpy 2's stubs (numpy 1.26's type np.clip and max differently)",
)
def test_mypy_passes() -> None:
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_minimum_versions_file_pins_the_floors_pyproject_declares() -> None:
    """``.ci/minimum-versions.txt`` installs the oldest versions ``pyproject.toml`` allows (the
    suite passed against it on 2026-12-06, README Development): a floor raised or added in one
    and not the other fails here."""
    declared = {}
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name, _, floor = requirement.partition(">=")
        assert floor, f"{requirement}: every runtime dependency has a floor (>=)"
        declared[name.strip()] = floor.strip()
    pinned = {}
    for line in (ROOT / ".ci" / "minimum-versions.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[name.strip()] = version.strip()
    assert pinned.keys() == declared.keys()
    for name, floor in declared.items():
        parts = pinned[name].split(".")
        padded = floor.split(".") + ["0"] * (len(parts) - len(floor.split(".")))  # 3 is 3.0.0
        assert parts == padded, f"{name}: pyproject.toml says >={floor}, the file pins {pinned[name]}"


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


# ---------------------------------------------------------------------------- the documents' links
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _headings(path: Path) -> list[str]:
    """The slugs of ``path``'s headings in order (lines in fenced code are not headings)."""
    slugs, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6} (.+)", line)):
            slugs.append(_slug(match.group(1)))
    return slugs


def test_no_document_repeats_a_heading() -> None:
    """A heading stands once in its document, so that its anchor is unambiguous (GitHub sends a
    link to the first of two) and a section pasted in twice is caught."""
    for path in DOCUMENTS:
        slugs = _headings(path)
        repeated = sorted({s for s in slugs if slugs.count(s) > 1})
        assert not repeated, f"{path.name}: headings stand twice: {repeated}"


def test_every_link_to_a_section_finds_it() -> None:
    """Each ``[...](#anchor)`` and ``[...](file.md#anchor)`` between the documents names a heading
    of its target, so a renamed section cannot leave a dead link behind."""
    dead = []
    for path in DOCUMENTS:
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", path.read_text()):
            linked = (path.parent / target).resolve() if target else path
            if linked.suffix == ".md" and anchor not in _headings(linked):
                dead.append(f"{path.name} -> {target}#{anchor}")
    assert not dead, dead


def _quoted_commands(path: Path) -> list[str]:
    """The ``hearts-sim`` command lines ``path`` quotes, inline or in a shell block; none with a
    placeholder (``--seed S``, ``DIR``, ``...``) or a shell pipe, and none that only names a
    command."""
    text = path.read_text()
    lines = re.findall(r"`(hearts-sim [^`]+)`", text)
    for block in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", text, re.S):
        lines += [line.split("  #")[0].strip() for line in block.splitlines()]
    placeholder = re.compile(r"\.\.\.|<|>|\||&&|=[A-Z]\b|(^|\s)[A-Z]{1,5}(\s|$)")
    return [
        line
        for line in lines
        if line.startswith("hearts-sim ") and len(line.split()) > 2 and not placeholder.search(line)
    ]


def test_every_command_the_documents_quote_parses() -> None:
    """Each ``hearts-sim`` command the README and docs/ quote is accepted by today's parser
    (its subcommand, options and their values) and, in the README, its agent specs by the
    registry, so a renamed option or parameter cannot leave a recipe behind that fails when
    pasted (docs/ also records builds that were reverted, with their parameters)."""
    from agents.registry import parse_agent
    from hearts_sim.apps.cli import build_parser
    from hearts_sim.apps.options import UsageError

    quoted = [(path.name, line) for path in DOCUMENTS for line in _quoted_commands(path)]
    refused = []
    for name, line in quoted:
        try:
            args = build_parser().parse_args(shlex.split(line)[1:])
            specs = (getattr(args, "agents", None) or []) if name == "README.md" else []
            for spec in specs:
                parse_agent(spec)
        except SystemExit as stop:  # --help
            if stop.code:
                refused.append(f"{name}: {line}")
        except (UsageError, ValueError) as error:
            refused.append(f"{name}: {line}: {error}")
    assert len(quoted) > 30 and not refused, refused


# ---------------------------------------------------------------------------- the README's examples
def _readme_examples() -> list[str]:
    """The README's Python blocks that run as they stand: not its doctests (``>>>``, run by
    ``--doctest-glob``), not the one that needs a Dask scheduler at an address."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [b for b in blocks if not b.lstrip().startswith(">>>") and "tcp://" not in b]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_readme_examples())))
def test_a_readme_example_runs_as_pasted(index: int, tmp_path: Path) -> None:
    """Each example block of the README runs in a fresh interpreter from a scratch folder (the
    repository importable, as after ``pip install -e .``), so an example cannot drift from the
    API it shows or lean on a file it does not make."""
    example = tmp_path / "example.py"
    example.write_text(_readme_examples()[index])
    result = subprocess.run(
        [sys.executable, str(example)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_hearts_sim_version_names_the_toolkit_and_what_compiles_it() -> None:
    """There was no ``--version``, though a cluster's mismatch is told in versions; the version
    was written twice (pyproject.toml and ``hearts_sim.__version__``), now once."""
    import importlib.metadata
    import platform

    import numba

    import hearts_sim

    run = subprocess.run([sys.executable, "-m", "hearts_sim", "--version"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    python = platform.python_version()
    assert run.stdout == (
        f"hearts-sim {hearts_sim.__version__} (Python {python}, numpy {np.__version__}, "
        f"numba {numba.__version__})\n"
    )
    assert importlib.metadata.version("hearts-sim") == hearts_sim.__version__
    assert "version" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dynamic"]
