"""What every agent module declares: its policy kind, with typed, defaulted parameters and kernels.

Design note. An agent is one module that declares one ``PolicyKind`` (``KIND``) and is listed
once in ``agents.registry.KINDS``; nothing else names it. The kind carries everything the rest
of the toolkit needs to know:

* its parameters (``Parameter``: name, default, meaning, choices), which spec strings set by
  name and kernels read by name: ``P = param_indices(PARAMETERS)`` gives ``params[P.c]``;
* its kernels, with the one signature every policy of that role has (see ``agents.dispatch``):
  ``play(params, state, rules, seat, legal, seed) -> card`` and
  ``pass_cards(params, state, rules, seat, seed) -> bitboard``; a policy that reads nothing
  but its legal cards and the decision's seed gives ``stateless_play(legal, seed)`` instead,
  which lets the self-play loop play a table of such policies a trick at a time;
* ``passes_like``: a kind without a pass policy of its own passes like that kind, with its
  defaults (every built-in kind now has its own: the search agents search their pass);
* ``searches``: milliseconds, not microseconds, per decision, so tournaments, levels and
  benchmarks size their runs in tens of deals.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

MAX_PARAMS = 10  # width of the parameter row a kernel receives (selfplay.loops spells it out)
Params = tuple[float, ...]  # one policy's parameter row, as kernels receive it


class AgentError(ValueError):
    """An unknown agent or parameter, or a malformed spec; the message lists what is valid."""


@dataclass(frozen=True)
class Parameter:
    """A tunable knob. ``choices`` names the values of an enumerated parameter (stored as its index)."""

    name: str
    default: float | int
    description: str
    choices: tuple[str, ...] = ()

    def parse(self, text: str, agent: str) -> float | int:
        """The value written ``text`` on a command line or in a spec string."""
        if self.choices:
            if text in self.choices:
                return self.choices.index(text)
            raise AgentError(
                f"{agent}: parameter {self.name}={text!r} must be one of {', '.join(self.choices)}"
            )
        try:
            return int(text) if isinstance(self.default, int) else float(text)
        except ValueError:
            kind = "an integer" if isinstance(self.default, int) else "a number"
            raise AgentError(f"{agent}: parameter {self.name}={text!r} must be {kind}") from None

    def format(self, value: float | int) -> str:
        if self.choices:
            return self.choices[int(value)]
        return f"{value:g}" if isinstance(value, float) else str(value)


def param_indices(parameters: tuple[Parameter, ...]) -> Any:
    """The row positions of ``parameters`` by name, for kernels: ``params[P.iterations]``.

    A named tuple of ints: numba freezes it as a constant, so reading a parameter by name costs
    nothing over ``params[0]``.

    >>> P = param_indices((Parameter("samples", 50, ""), Parameter("ms", 0.0, "")))
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
    stateless_play: Any = None  # njit (legal, seed) -> card: a play reading nothing else
    passes_like: str = ""  # no pass policy of its own: pass as this kind does with its defaults
    searches: bool = False  # milliseconds per decision: runs are sized in tens of deals

    def __post_init__(self) -> None:
        assert len(self.parameters) <= MAX_PARAMS, f"{self.name}: at most {MAX_PARAMS} parameters"
        assert (self.play is None) != (self.stateless_play is None), f"{self.name}: one play kernel"
        assert (self.pass_cards is None) != (not self.passes_like), f"{self.name}: one pass policy"

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        valid = ", ".join(p.name for p in self.parameters) or "none"
        raise AgentError(f"agent {self.name!r} has no parameter {name!r} (valid: {valid})")

    def default_params(self) -> Params:
        """The kernel parameter row of this kind with every default."""
        row = [float(p.default) for p in self.parameters]
        return tuple(row + [0.0] * (MAX_PARAMS - len(row)))

    @property
    def reads_state(self) -> bool:
        """Whether its play looks at the hand's record (all but the stateless policies)."""
        return self.stateless_play is None
