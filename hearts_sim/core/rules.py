"""Game rules: one frozen ``Rules`` value holds every variant switch (docs/rules.md).

Design note. The ``Rules`` dataclass *is* the switch table: each field is one switch, declared
once with its default, its one-line meaning and what values it takes (``switch(...)``). Every
other view derives from the fields:

* validation (type, allowed values or range; then the few rules that tie two switches);
* ``to_tuple()``: the ``KernelRules`` named tuple kernels receive, one int64 per switch in
  field order (enumerations as the index of their choice), read by name (``rules.moon``);
  a value type, so a kernel call costs no reference counting, and one compiled kernel
  serves every variant (numba's cache ignores module globals: switches travel as data);
* ``with_strings``: the ``--rule key=value`` parsing of the command line and config files.

So a new switch is one field here plus the kernel code that reads it plus its tests.

Pass directions (names, receiver offsets, the cycle of a game) live here too, once, as the
small kernels ``direction_offset`` and ``cycle_direction`` that Python and the engine share.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeAlias

from hearts_sim._numba import njit
from hearts_sim.core.checks import did_you_mean, is_integer, shown, store_plain
from hearts_sim.core.errors import InputError

# --- enumerations: the string a user writes -> the integer a kernel compares ---
DECK_MODES = ("remove", "kitty")
DECK_REMOVE, DECK_KITTY = range(len(DECK_MODES))

PASS_CYCLES = ("cycle", "left", "right", "across", "none", "random")
CYCLE_STANDARD, CYCLE_LEFT, CYCLE_RIGHT, CYCLE_ACROSS, CYCLE_NONE, CYCLE_RANDOM = range(len(PASS_CYCLES))

FIRST_LEADS = ("two_clubs", "any_club", "any")
LEAD_LOWEST_CLUB, LEAD_ANY_CLUB, LEAD_ANY = range(len(FIRST_LEADS))

MOON_RULES = ("others_plus", "self_minus", "off")
MOON_OTHERS_PLUS, MOON_SELF_MINUS, MOON_OFF = range(len(MOON_RULES))

TIE_RULES = ("continue", "share")
TIE_CONTINUE, TIE_SHARE = range(len(TIE_RULES))

# The pass directions in the order of the standard cycle (rule 2); a direction's code is its index.
PASS_DIRECTIONS = ("left", "right", "across", "none")
PASS_LEFT, PASS_RIGHT, PASS_ACROSS, PASS_NONE = range(len(PASS_DIRECTIONS))

MAX_PLAYERS = 5
MIN_PLAYERS = 3
POINTS_TOTAL = 26  # penalty points in a hand: 13 hearts and the QS
MAX_POINTS = 43  # under Black Maria the KS (10) and AS (7) count too: the most any rules deal out
GAME_SWITCHES = ("target_score", "tie_rule")  # count only in whole games: a hand plays the same under any


class RulesError(InputError):
    """An impossible rule value or combination; the message names the switch."""


@dataclass(frozen=True)
class Switch:
    """What one ``Rules`` field accepts: a choice of names, a set of integers, or an integer range."""

    doc: str
    choices: tuple[str, ...] = ()  # an enumeration: the kernel sees the index of the choice
    values: tuple[int, ...] = ()  # the integers allowed
    low: int = -(2**31)  # an integer range (inclusive), when ``values`` is empty
    high: int = 2**31 - 1


def switch(default: Any, doc: str, **accepts: Any) -> Any:
    """A ``Rules`` field: its default, its one-line meaning and what it accepts (``Switch``)."""
    return field(default=default, metadata={"switch": Switch(doc, **accepts)})


@dataclass(frozen=True)
class Rules:
    """Every variant switch of the game (docs/rules.md); defaults are the standard game.

    >>> Rules().n_players
    4
    >>> Rules.preset("omnibus").jd_bonus
    -10
    >>> Rules.preset("standard", n_players=6)
    Traceback (most recent call last):
    ...
    hearts_sim.core.rules.RulesError: n_players=6 is not supported: choose 3, 4 or 5
    >>> Rules().to_tuple().pass_count
    3
    """

    n_players: int = switch(4, "table size", values=(3, 4, 5))
    deck_mode: str = switch(
        "remove", "3/5 players: remove 2D (and 2C), or deal a face-down kitty", choices=DECK_MODES
    )
    pass_count: int = switch(3, "cards passed; 0 = no passing ever", values=(3, 0))
    pass_cycle: str = switch("cycle", "pass direction per hand within a game", choices=PASS_CYCLES)
    first_lead: str = switch("two_clubs", "who leads the first trick, and with what", choices=FIRST_LEADS)
    no_points_first_trick: bool = switch(True, "no heart or QS on the first trick unless forced (rule 5)")
    must_break_hearts: bool = switch(True, "no heart lead before hearts are broken (rule 6)")
    qs_breaks_hearts: bool = switch(False, "the queen of spades also breaks hearts")
    lead_hearts_instead_of_qs: bool = switch(False, "unbroken, holding only QS and hearts: may lead a heart")
    moon: str = switch("others_plus", "moon: others +total, shooter -total, or none", choices=MOON_RULES)
    jd_bonus: int = switch(0, "Omnibus: taking the jack of diamonds scores this (-10)", low=-100, high=0)
    black_maria: bool = switch(False, "KS (10) and AS (7) are point cards too")
    avoid_all_tricks_bonus: int = switch(0, "OpenSpiel: taking no trick scores this (-5)", low=-100, high=0)
    target_score: int = switch(
        100, "the game ends after a hand where someone reaches it", low=1, high=100_000
    )
    tie_rule: str = switch(
        "continue", "a tie for lowest at the end: deal on, or share first place", choices=TIE_RULES
    )

    def __new__(cls, *args: Any, **switches: Any) -> Rules:
        unknown = sorted(set(switches) - set(SWITCHES))
        if unknown:  # the generated __init__'s TypeError otherwise ("unexpected keyword argument")
            raise _unknown_switch(unknown[0])
        return super().__new__(cls)

    def __post_init__(self) -> None:
        store_plain(self)
        for f in dataclasses.fields(self):
            _check_switch(f, getattr(self, f.name))
        _check_combinations(self)

    # --- construction ---
    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """A named preset with any switch overridden: ``Rules.preset("qdan3", moon="off")``."""
        try:
            base = PRESETS[name]
        except (KeyError, TypeError):
            choices = ", ".join(PRESETS)
            raise RulesError(
                f"unknown rules preset {shown(name)}: choose one of {choices}{did_you_mean(name, PRESETS)}"
            ) from None
        return base.replace(**overrides)

    @classmethod
    def parse(cls, text: str) -> Rules:
        """Rules from any text the toolkit writes them as: a preset name, the switches that differ
        from the standard game (``describe()``, as a records' ``rules`` column holds them) or a
        display's label (``label()``, the same with the preset's name); a preset may lead switches.

        >>> Rules.parse("qdan3") == Rules.parse("n_players=3") == Rules.parse("qdan3 (n_players=3)")
        True
        >>> Rules.parse("qdan3, moon=off").label()
        'n_players=3, moon=off'
        """
        if not isinstance(text, str):
            raise RulesError(f"rules must be a preset name or switches as text, not {shown(text)}")
        name, _, inside = text.strip().partition(" (")
        if inside.endswith(")") and name in PRESETS:  # a label: its switches say it all
            if PRESETS[name].describe() != inside[:-1]:  # "qdan3 (moon=off)" played 4 players
                raise RulesError(f"{text.strip()!r} is no label: {name} is {PRESETS[name].label()}")
            text = inside[:-1]
        first, *switches = [part.strip() for part in text.split(",")]
        if "=" in first:
            first, switches = "standard", [first, *switches]
        return cls.preset(first).with_strings(switches)

    def replace(self, **overrides: Any) -> Rules:
        """A copy with some switches changed (validated again)."""
        unknown = sorted(set(overrides) - set(SWITCHES))
        if unknown:
            raise _unknown_switch(unknown[0])
        return dataclasses.replace(self, **overrides)

    def with_strings(self, assignments: str | Iterable[str]) -> Rules:
        """Apply ``key=value`` strings (from a command line or a config file), converting each
        value; one string is one assignment (it was read a character at a time: ``'m' is not of
        the form key=value``)."""
        overrides: dict[str, Any] = {}
        given: dict[str, str] = {}
        for text in [assignments] if isinstance(assignments, str) else assignments:
            key, sep, value = split_assignment(text)
            if not sep:
                raise RulesError(f"rule override {text!r} is not of the form key=value")
            if key not in SWITCHES:
                raise _unknown_switch(key)
            if key in given:  # the last one silently won
                raise RulesError(f"{key} is set twice ({given[key]} and {text}): set it once")
            given[key] = str(text)
            overrides[key] = _from_string(key, value.strip())
        return self.replace(**overrides)

    # --- derived facts ---
    @property
    def n_removed(self) -> int:
        """Cards taken out of the deck before dealing (remove mode)."""
        if self.deck_mode == "kitty":
            return 0
        return {3: 1, 4: 0, 5: 2}[self.n_players]

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player."""
        return (52 - self.n_removed) // self.n_players

    @property
    def kitty_size(self) -> int:
        """Cards laid face down (``deck_mode=kitty``: 1 for 3 players, 2 for 5); 0 otherwise."""
        return 52 - self.n_removed - self.hand_size * self.n_players

    @property
    def moon_total(self) -> int:
        """Points in the deck, which a moon shooter must take: 26, or 43 with Black Maria."""
        return MAX_POINTS if self.black_maria else POINTS_TOTAL

    @property
    def pass_directions(self) -> tuple[str, ...]:
        """The directions a game cycles through, hand 1 first (``random``: drawn per hand)."""
        return pass_direction_cycle(self)

    def to_tuple(self) -> RulesTuple:
        """The ``KernelRules`` kernels take: one integer per switch, read by name."""
        return self._kernel_rules

    @cached_property
    def _kernel_rules(self) -> RulesTuple:  # once per Rules (an immutable tuple): to_tuple is hot
        return KernelRules(*(_kernel_value(f, getattr(self, f.name)) for f in dataclasses.fields(self)))

    def to_dict(self) -> dict[str, Any]:
        """Every switch by name, as JSON takes it (``from_dict`` reads it back)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Rules:
        if not isinstance(values, dict):
            raise RulesError(f"rules must be a table of switches, not {shown(values)}")
        return cls().replace(**values)

    def describe(self) -> str:
        """The switches that differ from the standard game, e.g. ``n_players=3, deck_mode=kitty``."""
        default = Rules()
        changed = [f"{k}={v}" for k, v in self.to_dict().items() if getattr(default, k) != v]
        return ", ".join(changed) or "standard"

    def label(self) -> str:
        """``describe()`` for people, with the preset these rules are when they are one, as every
        display names them: ``qdan5 (n_players=5)``, ``quick (target_score=50)``, ``moon=off``."""
        return rules_label(self.describe())


_FIELDS = {f.name: f for f in dataclasses.fields(Rules)}
SWITCHES: dict[str, Switch] = {name: f.metadata["switch"] for name, f in _FIELDS.items()}
KernelRules = namedtuple("KernelRules", list(SWITCHES))  # type: ignore[misc]  # Rules.to_tuple()
# What kernels receive: a ``KernelRules`` (its fields are generated, so type checkers see ``Any``).
RulesTuple: TypeAlias = Any


def _unknown_switch(name: str) -> RulesError:
    valid = ", ".join(SWITCHES)
    return RulesError(
        f"unknown rule switch {name!r}: valid switches are {valid}{did_you_mean(name, SWITCHES)}"
    )


def _kernel_value(f: dataclasses.Field[Any], value: Any) -> int:
    choices = f.metadata["switch"].choices
    return choices.index(value) if choices else int(value)


def accepted(name: str) -> str:
    """What switch ``name`` accepts, in the words of its refusals and of ``hearts-sim rules``:
    ``one of remove, kitty``, ``true or false``, ``3, 4 or 5``, ``-100 .. 0``.

    >>> accepted("n_players"), accepted("moon")
    ('3, 4 or 5', 'one of others_plus, self_minus, off')
    """
    f = _FIELDS[name]
    spec: Switch = f.metadata["switch"]
    if spec.choices:
        return "one of " + ", ".join(spec.choices)
    if isinstance(f.default, bool):
        return "true or false"
    if spec.values:
        options = sorted(spec.values)
        return ", ".join(map(str, options[:-1])) + f" or {options[-1]}"
    return f"{spec.low} .. {spec.high}"


def _check_switch(f: dataclasses.Field[Any], value: Any) -> None:
    """One switch's value against its declaration (type, then the values it accepts)."""
    spec: Switch = f.metadata["switch"]
    name = f.name
    if spec.choices:
        if not isinstance(value, str) or value not in spec.choices:
            hint = did_you_mean(value, spec.choices)
            raise RulesError(f"{name}={shown(value)} is not valid: choose {accepted(name)}{hint}")
    elif isinstance(f.default, bool):
        if not isinstance(value, bool):
            raise RulesError(f"{name}={shown(value)} is not valid: choose {accepted(name)}")
    elif not is_integer(value):
        raise RulesError(f"{name}={shown(value)} is not valid: it must be an integer")
    elif spec.values and value not in spec.values:
        raise RulesError(f"{name}={value} is not supported: choose {accepted(name)}")
    elif not spec.low <= value <= spec.high:
        raise RulesError(f"{name}={value} is out of range: choose {accepted(name)}")


def _check_combinations(r: Rules) -> None:
    """The rules that tie two switches together."""
    if r.deck_mode == "kitty" and r.n_players == 4:
        raise RulesError("deck_mode='kitty' needs 3 or 5 players: 52 cards deal evenly to 4 players")
    if r.pass_cycle == "across" and r.n_players != 4:
        raise RulesError(f"pass_cycle='across' needs 4 players (there is no seat across with {r.n_players})")
    if r.pass_count == 0 and r.pass_cycle != Rules.pass_cycle:  # one game as two rules, two labels
        raise RulesError(
            f"pass_cycle={r.pass_cycle!r} directs no pass: pass_count=0 never passes (drop pass_cycle)"
        )


_BOOLEAN_WORDS = {
    "true": True,
    "1": True,
    "yes": True,
    "on": True,
    "false": False,
    "0": False,
    "no": False,
    "off": False,
}


def _from_string(key: str, text: str) -> Any:
    """A command-line string as the type of switch ``key``."""
    default = Rules.__dataclass_fields__[key].default
    if isinstance(default, bool):
        try:
            return _BOOLEAN_WORDS[text.lower()]
        except KeyError:
            raise RulesError(f"{key}={shown(text)} is not valid: choose {accepted(key)}") from None
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise RulesError(f"{key}={shown(text)} is not valid: it must be an integer") from None
    return text


# ---------------------------------------------------------------- pass directions
@njit
def direction_offset(direction: int, n_players: int) -> int:
    """From a seat to the receiver of its pass: left 1, right n-1, across 2, none 0 (rule 2)."""
    if direction == PASS_LEFT:
        return 1
    if direction == PASS_RIGHT:
        return n_players - 1
    if direction == PASS_ACROSS:
        return 2
    return 0


@njit
def cycle_period(cycle: int, n_players: int) -> int:
    """Hands before the directions of a game repeat: 4 with 4 players (left, right, across,
    none), 3 with 3 or 5 (no seat across); 1 for a fixed direction."""
    if cycle in (CYCLE_STANDARD, CYCLE_RANDOM):
        return 4 if n_players == 4 else 3
    return 1


@njit
def cycle_direction(cycle: int, n_players: int, step: int) -> int:
    """The direction of hand ``step`` (0-based, modulo the period) of a game under ``pass_cycle``
    (``random`` draws ``step`` uniformly per hand)."""
    if cycle == CYCLE_LEFT:
        return PASS_LEFT
    if cycle == CYCLE_RIGHT:
        return PASS_RIGHT
    if cycle == CYCLE_ACROSS:
        return PASS_ACROSS
    if cycle == CYCLE_NONE:
        return PASS_NONE
    step = step & 3 if n_players == 4 else step % 3  # constant divisors: no division instruction
    return PASS_NONE if step == 2 and n_players != 4 else step


def pass_direction_cycle(rules: Rules) -> tuple[str, ...]:
    """Directions of hands 1, 2, ... of a game (``random``: the directions it draws from)."""
    if rules.pass_count == 0:
        return ("none",)
    cycle = PASS_CYCLES.index(rules.pass_cycle)
    n = rules.n_players
    return tuple(PASS_DIRECTIONS[cycle_direction(cycle, n, step)] for step in range(cycle_period(cycle, n)))


def check_n_players(n_players: Any) -> None:
    """A ``RulesError`` unless ``n_players`` is a table size these rules are played at."""
    _check_switch(_FIELDS["n_players"], n_players)


def pass_offset(direction: str, n_players: int) -> int:
    """The receiver offset of a direction name (``left`` 1, ``right`` n-1, ``across`` 2, ``none`` 0)."""
    check_n_players(n_players)
    if not isinstance(direction, str) or direction not in PASS_DIRECTIONS:
        raise RulesError(f"unknown pass direction {shown(direction)}: choose {', '.join(PASS_DIRECTIONS)}")
    if direction == "across" and n_players != 4:
        raise RulesError(f"pass direction 'across' needs 4 players, not {n_players}")
    return int(direction_offset(PASS_DIRECTIONS.index(direction), n_players))


@njit
def offset_direction(offset: int, n_players: int) -> int:
    """The direction (``PASS_LEFT`` .. ``PASS_NONE``) of a receiver offset: the inverse of
    ``direction_offset``."""
    offset %= n_players
    if offset == 0:
        return PASS_NONE
    if offset == 1:
        return PASS_LEFT
    if offset == n_players - 1:
        return PASS_RIGHT
    return PASS_ACROSS  # 2 with 4 players (with 5, offsets 2 and 3 never occur: no pass across)


def pass_direction_name(offset: int, n_players: int) -> str:
    """``left``/``right``/``across``/``none`` for a receiver offset (the inverse of ``pass_offset``)."""
    return PASS_DIRECTIONS[offset_direction(offset, n_players)]


PRESETS: dict[str, Rules] = {
    "standard": Rules(),
    # OpenSpiel's hearts defaults: the queen breaks hearts, a random pass direction per hand.
    "openspiel": Rules(qs_breaks_hearts=True, pass_cycle="random"),
    "omnibus": Rules(jd_bonus=-10),
    "black_maria": Rules(n_players=3, black_maria=True),
    "qdan3": Rules(n_players=3),
    "qdan5": Rules(n_players=5),
    "quick": Rules(target_score=50),
}


def split_assignment(text: object) -> tuple[str, str, str]:
    """A ``key=value`` rule string as (switch name, ``=`` or ``""``, value): the name stripped,
    ``-`` read as ``_`` (``--rule pass-count=0``)."""
    key, sep, value = str(text).partition("=")
    return key.strip().replace("-", "_"), sep, value


def hands_play_alike(first: Rules, second: Rules) -> bool:
    """Whether a hand plays the same under both rules: they differ at most in a whole game's
    switches (``GAME_SWITCHES``)."""
    return first.replace(**{name: getattr(second, name) for name in GAME_SWITCHES}) == second


def rules_label(description: str) -> str:
    """A ``Rules.describe()`` text for people, with the preset it is when it is one.

    >>> rules_label(Rules.preset("quick").describe()), rules_label("standard"), rules_label("moon=off")
    ('quick (target_score=50)', 'standard', 'moon=off')
    """
    for name, preset in PRESETS.items():
        if preset.describe() == description:
            return description if description == name else f"{name} ({description})"
    return description


def resolve_rules(rules: Rules | str | None, overrides: dict[str, Any] | None = None) -> Rules:
    """A ``Rules`` from a value, a text ``Rules.parse`` reads (a preset name, ``describe()``'s
    switches, a ``label()``) or ``None`` (standard), plus overrides."""
    if rules is None:
        rules = "standard"
    if isinstance(rules, str):
        return Rules.parse(rules).replace(**(overrides or {}))
    if not isinstance(rules, Rules):
        raise RulesError(f"rules must be a Rules value or a preset name, not {type(rules).__name__}")
    return rules.replace(**overrides) if overrides else rules
