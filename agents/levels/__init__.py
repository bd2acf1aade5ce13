"""CPU levels as data: each ``<name>.toml`` here names an agent spec and how it was tuned.

A level is usable anywhere an agent name is (``hearts-sim match hard random``,
``simulate(seats=["easy", ...])``). A level file holds::

    description = "one line"
    agent = "rule(...)"             # any agent spec
    max_ms_per_decision = 10        # the budget the level promises a game site
    [provenance]                    # how the settings were produced (commands, figures)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from agents.kinds import AgentError

LEVELS_DIR = Path(__file__).resolve().parent
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "description": str,
    "agent": str,
    "max_ms_per_decision": (int, float),
}


class LevelError(AgentError):
    """A malformed level file; the message names the file and the problem."""


@dataclass(frozen=True)
class Level:
    name: str
    description: str
    agent: str
    max_ms_per_decision: float
    provenance: dict[str, Any] = field(default_factory=dict, compare=False)
    path: Path | None = field(default=None, compare=False)


def read_level(path: Path) -> Level:
    """One level file, validated."""
    try:
        values = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise LevelError(f"cannot read level file {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise LevelError(f"level file {path} is not valid TOML: {error}") from None
    for key, kind in REQUIRED.items():
        if key not in values:
            raise LevelError(f"level file {path} lacks {key!r}")
        if not isinstance(values[key], kind) or isinstance(values[key], bool):
            raise LevelError(f"level file {path}: {key!r} has the wrong type")
    unknown = sorted(set(values) - set(REQUIRED) - {"provenance"})
    if unknown:
        raise LevelError(f"level file {path}: unknown key {unknown[0]!r}")
    return Level(
        path.stem,
        values["description"],
        values["agent"],
        float(values["max_ms_per_decision"]),
        values.get("provenance", {}),
        path,
    )


@cache
def levels(directory: Path = LEVELS_DIR) -> dict[str, Level]:
    """Every level in ``directory``, by name (easy, normal, hard, ...)."""
    return {path.stem: read_level(path) for path in sorted(directory.glob("*.toml"))}
