"""What every agent module declares: its policy kind, with typed, defaulted parameters and kernels.

Design note. An agent is a module that declares its ``PolicyKind`` (``KIND``; ``baseline``
declares three small ones) and is listed once in ``agents.registry.KINDS``; nothing else names
it. The kind carries everything the rest of the toolkit needs to know:

* its parameters (``Parameter``: name, default and with it the type, meaning, choices or
  allowed range), which spec strings set by name, ``Parameter.check`` validates wherever a
  value comes from, and kernels read by name: ``P = param_indices(PARAMETERS)`` gives
  ``params[P.c]``;
* its kernels, with the one signature every policy of that role has (see ``agents.dispatch``):
  ``play(params, state, rules, seat, legal, seed) -> card`` and
  ``pass_cards(params, state, rules, seat, seed) -> bitboard``; a policy that reads nothing
  but its legal cards and the decision's seed gives ``stateless_play(legal, seed)`` instead,
  which lets the self-play loop play a table of such policies a trick at a time; a search gives
  ``scored_play`` and ``scored_pass`` instead, which also fill in the statistics it chose from
  (``card_stats``, ``pass_stats``): the dispatcher calls them with fresh arrays (and plays a
  forced card without a search), ``Agent.card_values`` and ``pass_values`` with arrays they
  show, so a decision and its explanation are one kernel;
* ``passes_like``: a kind without a pass policy of its own passes like that kind, with its
  defaults (every built-in kind now has its own: the search agents search their pass);
* ``searches``: milliseconds, not microseconds, per decision, so tournaments, levels and
  benchmarks size their runs in tens of deals;
* ``data``: a digest of the data its kernels freeze in (a learned policy's weights). numba
  bakes a global array into the compiled code and its cache never looks at the array again,
  so the digest joins the source digests that key every compiled loop seating the kind.
"""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass
from typing import Any

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.cards import N_CARDS
from hearts_sim.core.checks import did_you_mean, is_real, shown
from hearts_sim.core.errors import InputError

MAX_PARAMS = 16  # width of the parameter row a kernel receives (selfplay.loops spells it out)
Params = tuple[float, ...]  # one policy's parameter row, as kernels receive it
MAX_PASS_CANDIDATES = 33  # the most candidate passes a ``scored_pass`` weighs (``agents.passing``)


@njit
def card_stats():  # type: ignore[no-untyped-def]
    """A search's statistics of its cards (``PolicyKind.scored_play``), by card index: each card's
    mean score for the seat (NaN: never tried) and how many playouts or worlds it is over."""
    return np.full(N_CARDS, np.nan), np.zeros(N_CARDS, dtype=np.int64)


@njit
def pass_stats():  # type: ignore[no-untyped-def]
    """A pass search's statistics (``PolicyKind.scored_pass``): its candidates' cards (0 past the
    last), each one's mean final score for the seat (NaN: never played out) and its number of
    playouts."""
    return (
        np.zeros(MAX_PASS_CANDIDATES, dtype=np.uint64),
        np.full(MAX_PASS_CANDIDATES, np.nan),
        np.zeros(MAX_PASS_CANDIDATES, dtype=np.int64),
    )


class AgentError(InputError):
    """An unknown agent or parameter, or a malformed spec; the message lists what is valid."""


@dataclass(frozen=True)
class Parameter:
    """A tunable knob: its type, its allowed range and its meaning, declared once where its kind is.

    The type is that of ``default`` (``int`` or ``float``), or an enumeration when ``choices``
    names the values (stored as the chosen name's index). A number must lie in ``low .. high``
    (inclusive); NaN never passes, and infinities only where ``finite`` is False. Kernels size
    their searches and compare with these values, so an unchecked one could crash a process.
    """

    name: str
    default: float | int
    description: str
    choices: tuple[str, ...] = ()
    low: float = -math.inf
    high: float = math.inf
    finite: bool = True

    def __post_init__(self) -> None:
        if self.choices:
            object.__setattr__(self, "low", 0)
            object.__setattr__(self, "high", len(self.choices) - 1)
        assert math.isfinite(self.low) and math.isfinite(self.high), f"{self.name}: declare its range"
        assert self.low <= self.default <= self.high, f"{self.name}: the default lies outside its range"

    @property
    def integer(self) -> bool:
        return bool(self.choices) or isinstance(self.default, int)

    def allowed(self) -> str:
        """What the parameter accepts, for messages: ``an integer in 1 .. 2000000``."""
        if self.choices:
            return f"one of {', '.join(self.choices)}"
        kind, show = ("an integer", "{:d}") if self.integer else ("a number", "{:.15g}")
        return f"{kind} in {show.format(self.low)} .. {show.format(self.high)}"

    def _refuse(self, value: object, agent: str) -> AgentError:
        return AgentError(
            f"{agent}: parameter {self.name}={shown(value)} is not valid: choose {self.allowed()}"
        )

    def parse(self, text: str, agent: str) -> float | int:
        """The value written ``text`` on a command line or in a spec string, checked."""
        if self.choices:
            if text in self.choices:
                return self.choices.index(text)
            raise self._refuse(text, agent)
        try:
            value: float | int = int(text) if self.integer else float(text)
        except ValueError:
            raise self._refuse(text, agent) from None
        return self.check(value, agent, written=text)

    def check(self, value: object, agent: str, written: object = None) -> float | int:
        """``value`` (a number, or a choice's name or index) as this parameter's type, if it is
        one and lies in the allowed range; else ``AgentError`` naming agent, parameter and range
        (and the value as ``written``, when it came from text)."""
        if self.choices and isinstance(value, str):
            return self.parse(value, agent)
        shown = value if written is None else written
        if not is_real(value):
            raise self._refuse(shown, agent)
        number = float(value) if isinstance(value, (float, np.floating)) else int(value)
        if math.isnan(number) or (self.finite and math.isinf(number)):
            raise self._refuse(shown, agent)
        if self.integer:
            if isinstance(number, float) and not number.is_integer():
                raise self._refuse(shown, agent)
            number = int(number)
        elif not math.isinf(number):
            number = float(number)
        if not self.low <= number <= self.high:
            raise self._refuse(shown, agent)
        return number

    def format(self, value: float | int) -> str:
        if self.choices:
            return self.choices[int(value)]
        return f"{value:g}" if isinstance(value, float) else str(value)


def param_indices(parameters: tuple[Parameter, ...]) -> Any:
    """The row positions of ``parameters`` by name, for kernels: ``params[P.iterations]``.

    A named tuple of ints: numba freezes it as a constant, so reading a parameter by name costs
    nothing over ``params[0]``.

    >>> samples, ms = Parameter("samples", 50, "", low=1, high=99), Parameter("ms", 0.0, "", low=0, high=9)
    >>> P = param_indices((samples, ms))
    >>> P.samples, P.ms
    (0, 1)
    """
    assert len(parameters) <= MAX_PARAMS, f"at most {MAX_PARAMS} parameters"
    names = [p.name for p in parameters]
    return namedtuple("ParameterIndex", names)(*range(len(names)))  # type: ignore[misc]


@dataclass(frozen=True)
class PolicyKind:
    """A family of policies (``random``, ``rule``, ``mc`` ...): its parameters and kernels."""

    name: str
    description: str
    parameters: tuple[Parameter, ...] = ()
    play: Any = None  # njit (params, state, rules, seat, legal, seed) -> card
    pass_cards: Any = None  # njit (params, state, rules, seat, seed) -> bitboard of cards to pass
    # a search's play instead of ``play``: njit (params, state, rules, seat, legal, seed, values,
    # weights) -> card, given two or more legal cards, filling in ``card_stats`` arrays
    scored_play: Any = None
    # ... and its pass instead of ``pass_cards``: njit (params, state, rules, seat, seed, cards,
    # values, weights) -> bitboard, filling in ``pass_stats`` arrays
    scored_pass: Any = None
    stateless_play: Any = None  # njit (legal, seed) -> card: a play reading nothing else
    passes_like: str = ""  # no pass policy of its own: pass as this kind does with its defaults
    searches: bool = False  # milliseconds per decision: runs are sized in tens of deals
    data: str = ""  # digest of the data its kernels freeze in (weights): keys the compiled loops
    uncached: str = ""  # why the loops that seat it cannot be cached (its data too large to freeze)
    external: bool = False  # decided outside the compiled loop (agents.external): no kernels
    # stateless only: a loop of its own for tables where it plays every seat (the benchmark's
    # random self-play); other tables of stateless kinds share one loop over their chain
    own_loop: bool = False

    def __post_init__(self) -> None:
        assert len(self.parameters) <= MAX_PARAMS, f"{self.name}: at most {MAX_PARAMS} parameters"
        if not self.external:
            plays = (self.play, self.stateless_play, self.scored_play)
            assert sum(k is not None for k in plays) == 1, f"{self.name}: one play kernel"
            passes = (self.pass_cards, self.scored_pass, self.passes_like or None)
            assert sum(k is not None for k in passes) == 1, f"{self.name}: one pass policy"
            assert not (self.own_loop and self.reads_state), f"{self.name}: own_loop is for stateless kinds"

    def __repr__(self) -> str:  # not its kernels and every parameter's declaration
        return f"PolicyKind({self.name!r})"

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        names = [p.name for p in self.parameters]
        raise AgentError(
            f"agent {self.name!r} has no parameter {name!r} (valid: {', '.join(names) or 'none'})"
            + did_you_mean(name, names)
        )

    def default_params(self) -> Params:
        """The kernel parameter row of this kind with every default."""
        row = [float(p.default) for p in self.parameters]
        return tuple(row + [0.0] * (MAX_PARAMS - len(row)))

    @property
    def kernels(self) -> tuple[Any, ...]:
        """Its kernels, whichever it declares (their modules key the loops that seat it)."""
        every = (self.play, self.stateless_play, self.scored_play, self.pass_cards, self.scored_pass)
        return tuple(kernel for kernel in every if kernel is not None)

    @property
    def reads_state(self) -> bool:
        """Whether its play looks at the hand's record (all but the stateless policies)."""
        return self.stateless_play is None


# The kind of every external policy (a Python object, a ``py:`` class, an ``exec:`` engine).
EXTERNAL = PolicyKind(
    "external", "decided outside the compiled loop: a Python agent or an engine", external=True
)
