"""The command line's options, each declared once: its type, range, default and help.

Design note. A value can reach a run from the command line or from a tournament config file
(TOML). Both go through the same ``Option``: ``add_to`` gives argparse the option with a
``type`` that parses and range-checks the text, and ``check`` validates a config file's value
against the same declaration, strictly typed (TOML knows integers from floats and strings:
``deals = 2.7`` or ``games = "no"`` are errors, never coerced). So a value means the same,
and is refused with the same one line, wherever it is written, before any work starts.

>>> DEALS.parse("2_000"), DEALS.parse("1e6")
(2000, 1000000)
>>> DEALS.parse("0")
Traceback (most recent call last):
...
hearts_sim.apps.options.UsageError: --deals 0 is not valid: choose a whole number in 1 .. 1000000000000
>>> SEED.check(-1, "seed")
Traceback (most recent call last):
...
hearts_sim.apps.options.UsageError: seed = -1 is not valid: choose a whole number in 0 .. 2**64-1
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tomllib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from hearts_sim._numba import max_threads, threads_bound
from hearts_sim.core.checks import did_you_mean, is_integer, is_real
from hearts_sim.core.files import toml_text
from hearts_sim.engine.rng import MAX_DEALS, MAX_SEED

COUNT, NUMBER, SEED_KIND, TEXT, FLAG, TEXTS = "count", "number", "seed", "text", "flag", "texts"
# a file or folder (a list of them): a leading ``~`` is the home folder wherever it is written,
# as the shell makes it of ``--out ~/r`` but not of ``--out=~/r``, a quoted one or a config's
PATH, PATHS = "path", "paths"
_WHAT = {
    COUNT: "a whole number",
    SEED_KIND: "a whole number",
    NUMBER: "a number",
    TEXT: "a string",
    FLAG: "true or false",
    TEXTS: "a list of strings",
    PATH: "a path",
    PATHS: "a list of paths",
}


class UsageError(Exception):
    """Bad command-line or config-file input: printed as one line, exit code 2. Not a
    ``ValueError``: argparse would catch that from a ``type`` and replace its message."""


@dataclass(frozen=True)
class Option:
    """One option: ``name`` is its argparse destination and its config-file key."""

    name: str
    kind: str  # COUNT, NUMBER, SEED_KIND, TEXT, FLAG, TEXTS, PATH or PATHS
    help: str
    default: Any = None
    low: float = -math.inf  # the range of a count or number, its ends included unless open
    high: float = math.inf
    flags: tuple[str, ...] = ()  # ("--deals", "--hands"); none: a positional argument
    metavar: str | None = None
    high_text: str = ""  # how ``high`` reads in messages (``2**64-1``)
    open_low: bool = False  # ``low`` itself is refused (an error rate above 0)
    open_high: bool = False
    given_twice: str = ""  # set: a second value is refused, with this hint (it silently won)

    @property
    def flag(self) -> str:
        return self.flags[0] if self.flags else self.name.upper()

    def allowed(self) -> str:
        """What the option accepts: ``a whole number in 1 .. 1000000``."""
        what = _WHAT[self.kind]
        if self.kind not in (COUNT, SEED_KIND, NUMBER):
            return what

        def show(value: float) -> str:
            return f"{int(value):d}" if self.kind != NUMBER else f"{value:.15g}"

        high = self.high_text or (show(self.high) if math.isfinite(self.high) else "")
        low = show(self.low) if math.isfinite(self.low) else ""
        above, below = ("above" if self.open_low else "from"), ("below" if self.open_high else "at most")
        if not (low or high):
            return "a finite number" if self.kind == NUMBER else what
        if not high:  # "a number above 0"
            return f"{what} {above} {low}"
        if not low:
            return f"{what} {below} {high}"
        if self.open_low or self.open_high:  # "a number above 0 and below 0.5"
            return f"{what} {above} {low} and {below} {high}"
        return f"{what} in {low} .. {high}"

    def _refuse(self, shown: str) -> UsageError:
        return UsageError(f"{shown} is not valid: choose {self.allowed()}")

    def _in_range(self, value: Any, shown: str) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            raise self._refuse(shown)
        above = value > self.low if self.open_low else value >= self.low
        below = value < self.high if self.open_high else value <= self.high
        if not (above and below):
            raise self._refuse(shown)
        return value

    def parse(self, text: str, flag: str | None = None) -> Any:
        """The value of a command-line argument (argparse's ``type``, or ``_Once``'s with the
        ``flag`` it was written by); ``UsageError`` if invalid."""
        shown = f"{flag or self.flag} {text}"
        try:
            if self.kind in (COUNT, SEED_KIND):
                return self._in_range(_whole_number(text), shown)
            if self.kind == NUMBER:
                return self._in_range(float(text), shown)
        except ValueError:
            raise self._refuse(shown) from None
        if not text.strip():
            raise UsageError(f"{self.flag} needs a value")
        return os.path.expanduser(text) if self.kind in (PATH, PATHS) else text

    def check(self, value: Any, where: str) -> Any:
        """A config file's ``value`` (as TOML read it), strictly typed and in range; ``where``
        names the file and key for the message."""
        shown = f"{where} = {value!r}"
        if self.kind in (COUNT, SEED_KIND):
            if not is_integer(value):
                raise self._refuse(shown)
            return self._in_range(value, shown)
        if self.kind == NUMBER:
            if not is_real(value):
                raise self._refuse(shown)
            return self._in_range(float(value), shown)
        if self.kind == FLAG:
            if not isinstance(value, bool):
                raise self._refuse(shown)
            return value
        if self.kind in (TEXTS, PATHS):
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise self._refuse(shown)
            return [os.path.expanduser(v) for v in value] if self.kind == PATHS else list(value)
        if not isinstance(value, str) or not value.strip():
            raise self._refuse(shown)
        return os.path.expanduser(value) if self.kind == PATH else value

    def help_text(self) -> str:
        if self.kind == FLAG or self.default is None or self.default == []:
            return self.help
        return f"{self.help} (default {self.default})"

    def add_to(self, parser: argparse.ArgumentParser, default: Any = ..., **extra: Any) -> None:
        """Declare the option on ``parser`` (``default``: what argparse stores when it is absent,
        if not the option's own default; None lets a config file fill it in)."""
        stored = self.default if default is ... else default
        if self.kind == FLAG:
            parser.add_argument(*self.flags, dest=self.name, action="store_true", help=self.help, **extra)
            return
        options: dict[str, Any] = {"help": self.help_text(), "metavar": self.metavar, **extra}
        if self.kind in (TEXTS, PATHS):
            if self.kind == PATHS:
                options.update(type=self.parse)
            if self.flags:
                options.update(action="append", default=[] if stored is None else list(stored))
            else:  # a positional list without a default needs at least one value
                options.update(nargs="*" if stored is not None else "+")
        elif len(self.flags) > 1 or self.given_twice:  # the flags after the first: old names
            # parsed by the action, which knows the flag written: --hands 1e6 was "--deals 1e6"
            options.update(action=_Once, option=self, default=stored)
        else:
            options.update(type=self.parse, default=stored)
        if self.flags:
            parser.add_argument(*self.flags, dest=self.name, **options)
        else:
            parser.add_argument(self.name, **options)


def _whole_number(text: str) -> int:
    """A count or seed as written: ``2000``, ``2_000``, or ``1e6`` where it is exact (``1.5e0`` is
    not); ``ValueError`` otherwise. ``--deals 1e6`` was refused as "not a whole number"."""
    try:
        return int(text)
    except ValueError:
        try:
            value = Decimal(text.strip())
        except InvalidOperation:
            raise ValueError(text) from None
        if not value.is_finite() or value.adjusted() > 40 or value != value.to_integral_value():
            raise ValueError(text) from None  # 1e999999999 as an int took minutes
        return int(value)


class _Once(argparse.Action):
    """Stores the value, refusing a second one by any of the option's names with its hint
    (``--rules qdan5 --rules quick`` played ``quick`` alone, where both were likely meant;
    ``--deals 10 --hands 50`` played 50 deals), and says so on stderr when the option was written
    by an old name (a deprecated alias: ``--hands`` counts deals, each played in every seating)."""

    def __init__(self, *args: Any, option: Option, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.option = option
        self.hint = option.given_twice or "give it once"

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, flag: Any = None
    ) -> None:
        name, written = self.option_strings[0], values  # the messages quote what was written (1e1)
        values = self.option.parse(values, flag)
        given = namespace.__dict__.setdefault("_given_once", {})
        if self.dest in given:
            before, value = given[self.dest]
            if before == flag:
                raise UsageError(f"{flag} is given twice ({value} and {written}): {self.hint}")
            raise UsageError(f"{before} {value} and {flag} {written} are one option ({name}): {self.hint}")
        given[self.dest] = (flag, written)
        if flag is not None and flag != name:
            what = (self.help or "").split(";")[0].split(" (")[0]
            print(
                f"hearts-sim: warning: {flag} is the old name of {name} ({what}): write {name}",
                file=sys.stderr,
            )
        setattr(namespace, self.dest, values)


MAX_SHARD_THREADS = 1024  # --threads with --cluster: per shard on the workers, capped by each at its cores


def threads_option(help: str = "threads (default: all)", cluster: bool = False) -> Option:
    """``--threads``, at most this machine's cores or ``NUMBA_NUM_THREADS``, the bound named in its
    message; a command with ``--cluster`` takes up to ``MAX_SHARD_THREADS`` (its run here is held
    to the cores later: ``threads_range``)."""
    high = MAX_SHARD_THREADS if cluster else max_threads()
    return Option("threads", COUNT, help, None, 1, high, ("--threads",), high_text=threads_range(cluster))


def threads_range(cluster: bool = False) -> str:
    """The top of ``--threads``'s range, and what sets it, for its message (a command with
    ``--cluster`` said ``1 .. 1024`` to ``--threads 0`` where it said ``1 .. 2 (this machine's
    cores)`` to ``--threads 3``)."""
    on_cluster = f"; with --cluster, up to {MAX_SHARD_THREADS:,} per shard on the workers" if cluster else ""
    return f"{max_threads()} ({threads_bound()}{on_cluster})"


# ---------------------------------------------------------------------------- shared options
SEED = Option("seed", SEED_KIND, "master seed", 0, 0, MAX_SEED, ("--seed",), high_text="2**64-1")
THREADS = threads_option()
RULES = Option(
    "rules",
    TEXT,
    "rules preset",
    "standard",
    flags=("--rules",),
    metavar="PRESET",
    given_twice='give it once, a preset and its switches together if need be ("qdan5, target_score=50")',
)
RULE = Option(
    "rule", TEXTS, "override one rule switch (repeatable)", [], flags=("--rule",), metavar="KEY=VALUE"
)
JSON = Option("json", FLAG, "print one JSON object", False, flags=("--json",))

# ---------------------------------------------------------------------------- tournament and match
AGENTS = Option("agents", TEXTS, "agent specs", [], metavar="AGENT")
DEALS = Option(
    "deals",
    COUNT,
    "deals, each played in every seating (14 with two agents at 4 seats; with --games, whole "
    "games); --hands is the old name of this option, deprecated: it always counted deals, not hands",
    20_000,
    1,
    MAX_DEALS,
    ("--deals", "--hands"),
)
GAMES = Option(
    "games",
    FLAG,
    "whole games to the target score, --deals of them in every seating (with --out, every hand of "
    "them in DIR/hands)",
    False,
    flags=("--games",),
)
OUT = Option("out", PATH, "directory for Parquet records and the manifest", flags=("--out",), metavar="DIR")
CHUNK_DEALS = Option(
    "chunk_deals",
    COUNT,
    "deals a chunk (default: by the agents' speed); progress, Ctrl-C, --sprt and --out's records "
    "act between chunks, so a slow agent's run is given fewer; the results are the same",
    0,  # automatic (``TournamentConfig.chunk_deals``)
    1,
    MAX_DEALS,
    ("--chunk-deals",),
)
TOURNAMENT_THREADS = threads_option()

# What a tournament config file may hold: the same declarations as the command line's.
CONFIG_OPTIONS: dict[str, Option] = {
    option.name: option
    for option in (AGENTS, DEALS, RULES, RULE, SEED, GAMES, OUT, CHUNK_DEALS, TOURNAMENT_THREADS)
}
CONFIG_ALIASES = {"hands": "deals"}  # the old key, deprecated: it counted deals


def read_config(path: str) -> dict[str, Any]:
    """A tournament config file's values, each checked against its option; unknown keys,
    wrong types and values out of range are ``UsageError``s naming the file and the key."""
    try:
        values = tomllib.loads(toml_text(Path(path)))
    except FileNotFoundError:
        raise UsageError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"cannot read config file {path}: {error}") from None
    checked: dict[str, Any] = {}
    for key, value in values.items():
        name = CONFIG_ALIASES.get(key, key)
        option = CONFIG_OPTIONS.get(name)
        if option is None:
            known = sorted([*CONFIG_OPTIONS, *CONFIG_ALIASES])
            hint = did_you_mean(key, known)
            raise UsageError(f"config file {path}: unknown key {key!r} (known: {', '.join(known)}){hint}")
        if name in checked:
            raise UsageError(f"config file {path}: {key!r} sets {name!r} a second time")
        checked[name] = option.check(value, f"config file {path}: {key}")
        if key != name:
            print(
                f"hearts-sim: warning: config file {path}: {key!r} is the old name of {name!r}: write {name}",
                file=sys.stderr,
            )
    return checked
