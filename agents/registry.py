"""Agent specs, and the registry of policy kinds: every kind is listed here once.

An agent is a pass policy plus a play policy. The same spec string works in Python
and on the command line::

    random                      both policies uniform random
    lowest                      plays its lowest card, passes its three highest
    pass=lowest,play=random     any pass policy with any play policy

Kernels see a policy as an integer code (its position in ``KINDS``) and a float64 row of
parameter values in declaration order. A new built-in agent is its module (which declares a
``PolicyKind``, see ``agents.kinds``) plus one line in ``KINDS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from agents import baseline, ismcts, mc, pimc, rule
from agents.kinds import MAX_PARAMS, AgentError, PolicyKind
from agents.levels import LevelError, levels
from hearts_sim.core.rules import MAX_PLAYERS

KINDS: tuple[PolicyKind, ...] = (
    baseline.RANDOM,
    baseline.LOWEST,
    baseline.HIGHEST,
    rule.KIND,
    mc.KIND,
    pimc.KIND,
    ismcts.KIND,
)
KIND_BY_NAME: dict[str, PolicyKind] = {kind.name: kind for kind in KINDS}
CODES: dict[str, int] = {kind.name: code for code, kind in enumerate(KINDS)}  # the kernels' codes


def code_of(name: str) -> int:
    """The integer code kernels know policy kind ``name`` by."""
    return CODES[name]


def pass_kind(kind: PolicyKind) -> PolicyKind:
    """The kind whose pass policy ``kind`` passes with (itself, or its ``passes_like``)."""
    return KIND_BY_NAME[kind.passes_like] if kind.passes_like else kind


@dataclass(frozen=True)
class Policy:
    """One configured policy: a kind and its parameter values (defaults filled in)."""

    kind: PolicyKind
    values: tuple[tuple[str, float | int], ...] = ()

    @property
    def code(self) -> int:
        return CODES[self.kind.name]

    def value(self, name: str) -> float | int:
        return dict(self.values)[name]

    def params_array(self) -> np.ndarray:
        row = np.zeros(MAX_PARAMS, dtype=np.float64)
        for i, (_, v) in enumerate(self.values):
            row[i] = v
        return row

    def __str__(self) -> str:
        changed = [
            f"{k}={p.format(v)}"
            for (k, v), p in zip(self.values, self.kind.parameters, strict=True)
            if v != p.default
        ]
        return f"{self.kind.name}({','.join(changed)})" if changed else self.kind.name


@dataclass(frozen=True)
class AgentSpec:
    """What sits in a seat: how it passes and how it plays."""

    pass_policy: Policy
    play_policy: Policy
    label: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        """The canonical spec string (or the level name it was loaded as)."""
        if self.label:
            return self.label
        if self.pass_policy == self.play_policy:
            return str(self.play_policy)
        return f"pass={self.pass_policy},play={self.play_policy}"

    def __str__(self) -> str:
        return self.name

    @property
    def searches(self) -> bool:
        """Whether a decision takes milliseconds, not microseconds (a search policy plays or passes)."""
        return self.pass_policy.kind.searches or self.play_policy.kind.searches

    def kinds(self) -> set[PolicyKind]:
        """Every kind whose kernels this agent's decisions run."""
        return {pass_kind(self.pass_policy.kind), self.play_policy.kind}


_TERM = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$")


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise AgentError(f"unbalanced parentheses in agent spec {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise AgentError(f"unbalanced parentheses in agent spec {text!r}")
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _convert(kind: PolicyKind, name: str, text: str) -> float | int:
    return kind.parameter(name).parse(text, kind.name)


def parse_policy(text: str) -> Policy:
    """``name`` or ``name(param=value, ...)`` as a ``Policy`` with defaults filled in."""
    match = _TERM.match(text)
    if not match:
        raise AgentError(f"malformed agent spec {text!r}: write name or name(param=value,...)")
    name, arguments = match.group(1), match.group(2)
    kind = KIND_BY_NAME.get(name)
    if kind is None:
        raise AgentError(f"unknown agent {name!r}: valid agents are {', '.join(agent_names())}")
    values = {p.name: p.default for p in kind.parameters}
    for assignment in _split_top_level(arguments) if arguments and arguments.strip() else []:
        key, sep, value = assignment.partition("=")
        if not sep:
            raise AgentError(f"{kind.name}: parameter {assignment!r} is not of the form name=value")
        values[key.strip()] = _convert(kind, key.strip(), value.strip())
    return Policy(kind, tuple(values.items()))


def parse_agent(spec: str | AgentSpec) -> AgentSpec:
    """An ``AgentSpec`` from a spec string such as ``lowest`` or ``pass=lowest,play=random``."""
    if isinstance(spec, AgentSpec):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise AgentError(f"an agent spec must be a non-empty string, not {spec!r}")
    level = levels().get(spec.strip())
    if level is not None:
        try:
            resolved = parse_agent(level.agent)
        except AgentError as error:
            raise LevelError(f"level file {level.path}: {error}") from None
        return AgentSpec(resolved.pass_policy, resolved.play_policy, label=level.name)
    parts = _split_top_level(spec)
    roles: dict[str, Policy] = {}
    for part in parts:
        role, sep, rest = part.partition("=")
        if sep and role.strip() in ("pass", "play") and "(" not in role:
            if role.strip() in roles:
                raise AgentError(f"agent spec {spec!r} names the {role.strip()} policy twice")
            if rest.strip() in levels():  # a level's policy of that role: pass=hard,play=rule
                leveled = parse_agent(rest.strip())
                roles[role.strip()] = leveled.pass_policy if role.strip() == "pass" else leveled.play_policy
                continue
            roles[role.strip()] = parse_policy(rest)
        elif len(parts) == 1:
            policy = parse_policy(part)
            return AgentSpec(policy, policy)
        else:
            raise AgentError(f"malformed agent spec {spec!r}: combine policies as pass=NAME,play=NAME")
    pass_policy = roles.get("pass") or roles["play"]
    play_policy = roles.get("play") or roles["pass"]
    return AgentSpec(pass_policy, play_policy)


def agent_names() -> list[str]:
    """Every name an agent spec may start with: the policy kinds, then the levels."""
    return [*KIND_BY_NAME, *levels()]


def seat_arrays(seatings: list[list[AgentSpec]]) -> tuple[np.ndarray, ...]:
    """Codes and parameter rows for the kernels: (pass codes, pass params, play codes, play params),
    shaped (seatings, MAX_PLAYERS) and (seatings, MAX_PLAYERS, MAX_PARAMS)."""
    n_seatings, n_seats = len(seatings), MAX_PLAYERS  # padded: kernels read fixed-width rows
    pass_codes = np.zeros((n_seatings, n_seats), dtype=np.int64)
    play_codes = np.zeros((n_seatings, n_seats), dtype=np.int64)
    pass_params = np.zeros((n_seatings, n_seats, MAX_PARAMS), dtype=np.float64)
    play_params = np.zeros((n_seatings, n_seats, MAX_PARAMS), dtype=np.float64)
    for i, seating in enumerate(seatings):
        for s, agent in enumerate(seating):
            pass_codes[i, s] = agent.pass_policy.code
            play_codes[i, s] = agent.play_policy.code
            pass_params[i, s] = agent.pass_policy.params_array()
            play_params[i, s] = agent.play_policy.params_array()
    return pass_codes, pass_params, play_codes, play_params
