"""Game rules: one frozen ``Rules`` value holds every variant switch of RULES.md.

Kernels never see a ``Rules`` object: ``Rules.to_array()`` turns it into int64 values
indexed by the ``R_*`` constants below (``to_tuple()`` is the same values as the tuple
kernels take), so one compiled kernel serves every variant (numba's cache ignores
module globals, so switches must travel as data).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

# --- enumerations: the string a user writes -> the integer a kernel compares ---
DECK_MODES = ("remove", "kitty")
DECK_REMOVE, DECK_KITTY = 0, 1

PASS_CYCLES = ("cycle", "left", "right", "across", "none", "random")
CYCLE_STANDARD, CYCLE_LEFT, CYCLE_RIGHT, CYCLE_ACROSS, CYCLE_NONE, CYCLE_RANDOM = range(6)

FIRST_LEADS = ("two_clubs", "any_club", "any")
LEAD_LOWEST_CLUB, LEAD_ANY_CLUB, LEAD_ANY = 0, 1, 2

MOON_RULES = ("others_plus", "self_minus", "off")
MOON_OTHERS_PLUS, MOON_SELF_MINUS, MOON_OFF = 0, 1, 2

TIE_RULES = ("continue", "share")
TIE_CONTINUE, TIE_SHARE = 0, 1

# --- layout of Rules.to_array() ---
(
    R_N_PLAYERS,
    R_DECK_MODE,
    R_PASS_COUNT,
    R_PASS_CYCLE,
    R_FIRST_LEAD,
    R_NO_POINTS_FIRST_TRICK,
    R_MUST_BREAK_HEARTS,
    R_QS_BREAKS_HEARTS,
    R_LEAD_HEARTS_INSTEAD_OF_QS,
    R_MOON,
    R_JD_BONUS,
    R_BLACK_MARIA,
    R_AVOID_ALL_TRICKS_BONUS,
    R_TARGET_SCORE,
    R_TIE_RULE,
    R_SIZE,
) = range(16)

RulesTuple = tuple[int, ...]  # Rules.to_tuple(): what kernels receive

MAX_PLAYERS = 5
MIN_PLAYERS = 3


class RulesError(ValueError):
    """An impossible rule value or combination; the message names the switch."""


@dataclass(frozen=True)
class Rules:
    """Every variant switch of the game (see RULES.md); defaults are the standard game.

    >>> Rules().n_players
    4
    >>> Rules.preset("omnibus").jd_bonus
    -10
    >>> Rules.preset("standard", n_players=6)
    Traceback (most recent call last):
    ...
    hearts_sim.core.rules.RulesError: n_players=6 is not supported: choose 3, 4 or 5
    """

    n_players: int = 4
    deck_mode: str = "remove"  # 3/5 players: remove 2D (and 2C) or deal a face-down kitty
    pass_count: int = 3  # 0 = no passing ever
    pass_cycle: str = "cycle"  # direction per hand within a game
    first_lead: str = "two_clubs"  # who leads the first trick, and with what
    no_points_first_trick: bool = True  # rule 5
    must_break_hearts: bool = True  # rule 6
    qs_breaks_hearts: bool = False  # the queen of spades also breaks hearts
    lead_hearts_instead_of_qs: bool = False  # unbroken, only QS + hearts: may lead a heart
    moon: str = "others_plus"  # others +T, shooter -T, or no moon
    jd_bonus: int = 0  # Omnibus: the jack of diamonds scores this (-10)
    black_maria: bool = False  # KS (10) and AS (7) are point cards too
    avoid_all_tricks_bonus: int = 0  # OpenSpiel: taking no trick scores this (-5)
    target_score: int = 100  # the game ends after a hand where someone reaches it
    tie_rule: str = "continue"  # tie for lowest at the end: deal on, or share first place

    def __post_init__(self) -> None:
        _validate(self)

    # --- construction ---
    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """A named preset with any switch overridden: ``Rules.preset("qdan3", moon="off")``."""
        try:
            base = PRESETS[name]
        except KeyError:
            raise RulesError(f"unknown rules preset {name!r}: choose one of {', '.join(PRESETS)}") from None
        return base.replace(**overrides)

    def replace(self, **overrides: Any) -> Rules:
        """A copy with some switches changed (validated again)."""
        unknown = sorted(set(overrides) - set(SWITCHES))
        if unknown:
            raise RulesError(f"unknown rule switch {unknown[0]!r}: valid switches are {', '.join(SWITCHES)}")
        return dataclasses.replace(self, **overrides)

    def with_strings(self, assignments: list[str]) -> Rules:
        """Apply ``key=value`` strings (from a command line), converting each value."""
        overrides: dict[str, Any] = {}
        for text in assignments:
            key, sep, value = text.partition("=")
            key = key.strip().replace("-", "_")
            if not sep:
                raise RulesError(f"rule override {text!r} is not of the form key=value")
            if key not in SWITCHES:
                raise RulesError(f"unknown rule switch {key!r}: valid switches are {', '.join(SWITCHES)}")
            overrides[key] = _convert(key, value.strip())
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
        return 52 - self.n_removed - self.hand_size * self.n_players

    @property
    def moon_total(self) -> int:
        """Points in the deck, which a moon shooter must take: 26, or 43 with Black Maria."""
        return 43 if self.black_maria else 26

    @property
    def pass_directions(self) -> tuple[str, ...]:
        """The directions a game cycles through, hand 1 first (``random``: drawn per hand)."""
        return pass_direction_cycle(self)

    def to_array(self) -> np.ndarray:
        """The int64 array the kernels take, indexed by the ``R_*`` constants."""
        a = np.zeros(R_SIZE, dtype=np.int64)
        a[R_N_PLAYERS] = self.n_players
        a[R_DECK_MODE] = DECK_MODES.index(self.deck_mode)
        a[R_PASS_COUNT] = self.pass_count
        a[R_PASS_CYCLE] = PASS_CYCLES.index(self.pass_cycle)
        a[R_FIRST_LEAD] = FIRST_LEADS.index(self.first_lead)
        a[R_NO_POINTS_FIRST_TRICK] = self.no_points_first_trick
        a[R_MUST_BREAK_HEARTS] = self.must_break_hearts
        a[R_QS_BREAKS_HEARTS] = self.qs_breaks_hearts
        a[R_LEAD_HEARTS_INSTEAD_OF_QS] = self.lead_hearts_instead_of_qs
        a[R_MOON] = MOON_RULES.index(self.moon)
        a[R_JD_BONUS] = self.jd_bonus
        a[R_BLACK_MARIA] = self.black_maria
        a[R_AVOID_ALL_TRICKS_BONUS] = self.avoid_all_tricks_bonus
        a[R_TARGET_SCORE] = self.target_score
        a[R_TIE_RULE] = TIE_RULES.index(self.tie_rule)
        return a

    def to_tuple(self) -> tuple[int, ...]:
        """``to_array()`` as the tuple kernels take: a value type, so a call costs no
        reference counting (see ``hearts_sim._numba``)."""
        return tuple(int(x) for x in self.to_array())

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Rules:
        return cls().replace(**values)

    def describe(self) -> str:
        """The switches that differ from the standard game, e.g. ``n_players=3, deck_mode=kitty``."""
        default = Rules()
        changed = [f"{k}={v}" for k, v in self.to_dict().items() if getattr(default, k) != v]
        return ", ".join(changed) or "standard"


SWITCHES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules))

# Offsets from the passer to the receiver, by direction name.
PASS_OFFSETS = {"none": 0, "left": 1, "right": -1, "across": 2}


def pass_direction_cycle(rules: Rules) -> tuple[str, ...]:
    """Directions of hands 1, 2, ... of a game; ``random`` and no passing are handled here too."""
    if rules.pass_count == 0 or rules.pass_cycle == "none":
        return ("none",)
    if rules.pass_cycle == "cycle":
        if rules.n_players == 4:
            return ("left", "right", "across", "none")
        return ("left", "right", "none")
    if rules.pass_cycle == "random":
        return ("left", "right", "across", "none") if rules.n_players == 4 else ("left", "right", "none")
    return (rules.pass_cycle,)


def _choice(name: str, value: Any, options: tuple[str, ...]) -> None:
    if value not in options:
        raise RulesError(f"{name}={value!r} is not valid: choose one of {', '.join(options)}")


def _validate(r: Rules) -> None:
    if not isinstance(r.n_players, int) or r.n_players not in (3, 4, 5):
        raise RulesError(f"n_players={r.n_players} is not supported: choose 3, 4 or 5")
    _choice("deck_mode", r.deck_mode, DECK_MODES)
    _choice("pass_cycle", r.pass_cycle, PASS_CYCLES)
    _choice("first_lead", r.first_lead, FIRST_LEADS)
    _choice("moon", r.moon, MOON_RULES)
    _choice("tie_rule", r.tie_rule, TIE_RULES)
    for name in (
        "no_points_first_trick",
        "must_break_hearts",
        "qs_breaks_hearts",
        "lead_hearts_instead_of_qs",
        "black_maria",
    ):
        if not isinstance(getattr(r, name), bool):
            raise RulesError(f"{name}={getattr(r, name)!r} is not valid: choose true or false")
    for name in ("pass_count", "jd_bonus", "avoid_all_tricks_bonus", "target_score"):
        if isinstance(getattr(r, name), bool) or not isinstance(getattr(r, name), int):
            raise RulesError(f"{name}={getattr(r, name)!r} is not valid: it must be an integer")
    if r.pass_count not in (0, 3):
        raise RulesError(f"pass_count={r.pass_count} is not supported: choose 3 or 0")
    if r.deck_mode == "kitty" and r.n_players == 4:
        raise RulesError("deck_mode='kitty' needs 3 or 5 players: 52 cards deal evenly to 4 players")
    if r.pass_cycle == "across" and r.n_players != 4:
        raise RulesError(f"pass_cycle='across' needs 4 players (there is no seat across with {r.n_players})")
    if r.target_score <= 0:
        raise RulesError(f"target_score={r.target_score} must be positive")
    if r.jd_bonus > 0:
        raise RulesError(f"jd_bonus={r.jd_bonus} must be zero or negative (a bonus, e.g. -10)")
    if r.avoid_all_tricks_bonus > 0:
        raise RulesError(
            f"avoid_all_tricks_bonus={r.avoid_all_tricks_bonus} must be zero or negative (e.g. -5)"
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


def _convert(key: str, text: str) -> Any:
    """A command-line string as the type of switch ``key``."""
    kind = type(getattr(Rules(), key))
    if kind is bool:
        try:
            return _BOOLEAN_WORDS[text.lower()]
        except KeyError:
            raise RulesError(f"{key}={text!r} is not valid: choose true or false") from None
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise RulesError(f"{key}={text!r} is not valid: it must be an integer") from None
    return text


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


def resolve_rules(rules: Rules | str | None, overrides: dict[str, Any] | None = None) -> Rules:
    """A ``Rules`` from a value, a preset name or ``None`` (standard), plus overrides."""
    if rules is None:
        rules = "standard"
    if isinstance(rules, str):
        return Rules.preset(rules, **(overrides or {}))
    if not isinstance(rules, Rules):
        raise RulesError(f"rules must be a Rules value or a preset name, not {type(rules).__name__}")
    return rules.replace(**overrides) if overrides else rules
