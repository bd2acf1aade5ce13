"""CPU levels as data: each ``<name>.toml`` here names an agent spec and how it was tuned.

A level is usable anywhere an agent name is (``hearts-sim match hard random``,
``simulate(seats=["easy", ...])``): the shipped ones here, then those of the folders the
environment variable ``HEARTS_SIM_LEVELS`` names (``level_folders``; levels of your own, written
by ``hearts-sim tune --write-level NAME --levels-dir DIR``). A level file holds::

    description = "one line"
    agent = "rule(...)"             # any agent spec
    max_ms_per_decision = 10        # the budget the level promises a game site
    [provenance]                    # how the settings were produced (commands, figures)
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from agents.kinds import AgentError
from agents.search import MAX_MS
from hearts_sim.core.files import toml_text
from hearts_sim.core.rules import Rules, RulesError

LEVELS_DIR = Path(__file__).resolve().parent
LEVELS_VARIABLE = "HEARTS_SIM_LEVELS"  # more folders of level files, separated as in PATH
LADDER = ("random", "easy", "normal", "hard")  # the levels from the weakest, with random below them
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "description": str,
    "agent": str,
    "max_ms_per_decision": (int, float),
}
# what each required key holds, for a message
REQUIRED_WHAT = {
    "description": "a string",
    "agent": "an agent spec, a string",
    "max_ms_per_decision": f"a number of ms above 0, at most {MAX_MS:g}",
}


NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # a level's name: a plain identifier, never a path


class LevelError(AgentError):
    """A malformed level file or level name; the message names the file and the problem."""


def level_name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a level file (None if it can): it must be a plain identifier."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        return "a level name is a plain identifier (letters, digits, _; at most 64), never a path"
    return None


@dataclass(frozen=True)
class Level:
    name: str
    description: str
    agent: str
    max_ms_per_decision: float
    provenance: dict[str, Any] = field(default_factory=dict, compare=False)
    path: Path | None = field(default=None, compare=False)

    def tuned_under(self) -> Rules | None:
        """The rules its provenance says it was tuned under (``tune --write-level`` writes them
        since 2026-12-06); None where it names none, or rules this version cannot read."""
        text = self.provenance.get("rules")
        try:
            return Rules.parse(text) if isinstance(text, str) else None
        except RulesError:
            return None


def read_level(path: Path) -> Level:
    """One level file, validated."""
    problem = level_name_problem(path.stem)
    if problem is not None:
        raise LevelError(f"level file {path}: {problem}")
    try:
        values = tomllib.loads(toml_text(path))
    except (OSError, UnicodeDecodeError) as error:
        raise LevelError(f"cannot read level file {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise LevelError(f"level file {path} is not valid TOML: {error}") from None
    missing = [key for key in REQUIRED if key not in values]  # all of them at once, with what they hold
    if missing:
        wanted = "; ".join(f"{key} ({REQUIRED_WHAT[key]})" for key in missing)
        raise LevelError(f"level file {path} lacks {wanted}")
    for key, kind in REQUIRED.items():
        if not isinstance(values[key], kind) or isinstance(values[key], bool):
            raise LevelError(f"level file {path}: {key!r} = {values[key]!r} is not {REQUIRED_WHAT[key]}")
    unknown = sorted(set(values) - set(REQUIRED) - {"provenance"})
    if unknown:
        raise LevelError(f"level file {path}: unknown key {unknown[0]!r}")
    budget = values["max_ms_per_decision"]
    if not (math.isfinite(budget) and 0 < budget <= MAX_MS):  # NaN went out as JSON no parser reads
        what = REQUIRED_WHAT["max_ms_per_decision"]  # the bound tune --max-ms writes within
        raise LevelError(f"level file {path}: 'max_ms_per_decision' = {budget} is not {what}")
    if not isinstance(values.get("provenance", {}), dict):  # a traceback in `hearts-sim agents`
        raise LevelError(f"level file {path}: 'provenance' is a table ([provenance]), not a single value")
    return Level(
        path.stem,
        values["description"],
        values["agent"],
        float(values["max_ms_per_decision"]),
        values.get("provenance", {}),
        path,
    )


def levels(directory: Path = LEVELS_DIR) -> dict[str, Level]:
    """Every level in ``directory``, by name (easy, normal, hard, ...): read again once a file is
    added, removed, replaced or written in place there (``tune --write-level`` in this process, an
    editor beside a notebook)."""
    try:
        stamp = _folder_stamp(directory)
    except OSError:
        return {}
    return _levels_read(directory, stamp)


def _folder_stamp(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """(name, mtime, size) of each level file in ``directory``: what changes with any of them. The
    folder's own mtime missed a file written in place (an editor's save, ``write_text``), so a
    process that had read the level played it as it was."""
    stamps = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(".toml"):
                try:
                    status = entry.stat()
                except OSError:  # a broken link: read_level names it
                    stamps.append((entry.name, -1, -1))
                else:
                    stamps.append((entry.name, status.st_mtime_ns, status.st_size))
    return tuple(sorted(stamps))


@cache
def _levels_read(directory: Path, stamp: tuple[tuple[str, int, int], ...]) -> dict[str, Level]:
    return {path.stem: read_level(path) for path in sorted(directory.glob("*.toml"))}


def level_folders(variable: str | None = None) -> list[Path]:
    """``agents/levels/``, then the folders ``variable`` (``$HEARTS_SIM_LEVELS``) names."""
    extra = os.environ.get(LEVELS_VARIABLE, "") if variable is None else variable
    return [LEVELS_DIR, *(Path(folder).expanduser() for folder in extra.split(os.pathsep) if folder)]


def every_level(folders: list[Path] | None = None) -> dict[str, Level]:
    """The levels of ``folders`` (default ``level_folders()``), by name; ``LevelError`` for a
    folder that is not one, and for a name found twice (a level never silently replaces another)."""
    found: dict[str, Level] = {}
    read: set[Path] = set()  # a folder named twice (or the shipped one named again) is read once
    for folder in level_folders() if folders is None else folders:
        if not folder.is_dir():
            raise LevelError(f"{LEVELS_VARIABLE} names {folder}, which is not a folder")
        if folder.resolve() in read:
            continue
        read.add(folder.resolve())
        for name, level in levels(folder.resolve()).items():
            if name in found:
                raise LevelError(
                    f"level file {level.path}: the level {name} is in {found[name].path} already "
                    "(a level never replaces another: rename one)"
                )
            found[name] = level
    return found
