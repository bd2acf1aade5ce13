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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from agents import baseline, ismcts, mc, net, pimc, rule
from agents.external import EXEC, ExternalSpec, is_external, parse_external, wrap_object
from agents.kinds import EXTERNAL, MAX_PARAMS, AgentError, PolicyKind
from agents.levels import Level, LevelError, every_level, level_name_problem
from hearts_sim.core.checks import did_you_mean, shown
from hearts_sim.core.rules import MAX_PLAYERS, Rules, hands_play_alike, rules_label

KINDS: tuple[PolicyKind, ...] = (
    baseline.RANDOM,
    baseline.LOWEST,
    baseline.HIGHEST,
    rule.KIND,
    mc.KIND,
    pimc.KIND,
    ismcts.KIND,
    net.KIND,
)
KIND_BY_NAME: dict[str, PolicyKind] = {kind.name: kind for kind in KINDS}
CODES: dict[str, int] = {kind.name: code for code, kind in enumerate(KINDS)}  # the kernels' codes
EXTERNAL_CODE = -2  # a seat decided outside the compiled loop: the loop waits for it
TIME_BUDGET = "ms"  # the parameter by which search agents (mc, pimc, ismcts) think on the clock


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
    external: ExternalSpec | None = None  # kind EXTERNAL: what decides

    def __post_init__(self) -> None:
        """Every value checked against its parameter's declaration (``AgentError`` naming the
        agent, the parameter and the allowed range); parameters not given take their defaults."""
        given = dict(self.values)
        if len(given) != len(self.values):
            raise AgentError(f"{self.kind.name}: a parameter is given twice in {self.values!r}")
        for name in given:
            self.kind.parameter(name)  # an unknown name lists the valid ones
        checked = tuple(
            (p.name, p.check(given[p.name], self.kind.name) if p.name in given else p.default)
            for p in self.kind.parameters
        )
        object.__setattr__(self, "values", checked)

    @property
    def code(self) -> int:
        return EXTERNAL_CODE if self.kind.external else CODES[self.kind.name]

    def value(self, name: str) -> float | int:
        return dict(self.values)[name]

    def params_array(self) -> np.ndarray:
        row = np.zeros(MAX_PARAMS, dtype=np.float64)
        for i, (_, v) in enumerate(self.values):
            row[i] = v
        return row

    @property
    def time_budget(self) -> float:
        """Milliseconds per decision of a search on the clock (``ms=``), 0 for one that is not: a
        timed search decides by the speed of the machine, so its decisions do not replay."""
        return float(dict(self.values).get(TIME_BUDGET, 0))

    @cached_property
    def row(self) -> tuple[float, ...]:
        """The parameter row the dispatcher takes (``agents.dispatch.decide_play``): the values in
        declaration order, zero-padded to ``MAX_PARAMS``."""
        return tuple(float(x) for x in self.params_array())

    def __str__(self) -> str:
        if self.external is not None:
            return str(self.external)
        changed = [
            f"{k}={p.format(v)}"
            for (k, v), p in zip(self.values, self.kind.parameters, strict=True)
            if v != p.default
        ]
        return f"{self.kind.name}({','.join(changed)})" if changed else self.kind.name

    def __repr__(self) -> str:
        return f"Policy({str(self)!r})"


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

    @property
    def plays(self) -> str:
        """What it plays, spelled out: ``name``, but a level's spec in place of the level's name
        (``normal`` plays ``rule(void_bonus=...)``, as its file says now)."""
        return replace(self, label="").name if self.label else self.name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"AgentSpec({self.name!r})"

    @property
    def searches(self) -> bool:
        """Whether a decision takes milliseconds, not microseconds (a search policy plays or passes)."""
        return self.pass_policy.kind.searches or self.play_policy.kind.searches

    def kinds(self) -> set[PolicyKind]:
        """Every kind whose kernels this agent's decisions run (external ones have none)."""
        kinds = {pass_kind(self.pass_policy.kind), self.play_policy.kind}
        return {kind for kind in kinds if not kind.external}

    @property
    def external(self) -> bool:
        """Whether a decision of this agent is made outside the compiled loop."""
        return self.pass_policy.kind.external or self.play_policy.kind.external

    @property
    def engine(self) -> bool:
        """Whether an ``exec:`` engine decides: a pipe's round trip a decision, 0.6 ms at best."""
        return any(
            policy.external is not None and policy.external.kind == EXEC
            for policy in (self.pass_policy, self.play_policy)
        )

    @property
    def reproducible(self) -> bool:
        """Whether its decisions are a function of the seed, so that a hand it played replays: not
        an outside agent's (whose engine may ignore the seed) nor a search on the clock."""
        policies = (self.pass_policy, self.play_policy)
        return not self.external and not any(policy.time_budget for policy in policies)


_TERM = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$")


def _apart(parts: list[str]) -> str:
    """A hint where every part of a malformed spec is an agent of its own (``normal,easy``: two
    agents were meant, given as one word)."""
    try:
        for part in parts:
            parse_agent(part)
    except AgentError:
        return ""
    return f"; to name {len(parts)} agents, give them apart: {' '.join(parts)}"


_ENGINE_PART = re.compile(r"\s*((pass|play)\s*=\s*)?exec:")  # a part that is an engine's command
_NEXT_ROLE = re.compile(r",\s*(pass|play)\s*=")  # where an engine's command ends in a combination


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses. An engine's command (``exec:``, or
    ``pass=exec:``) keeps its commas, quotes and brackets up to the next role of a combination
    (``,play=``) or the end (``exec:python -c 'import sys, time'`` was refused as a malformed
    combination): ``pass=exec:eng --w a,b,play=rule`` is two parts."""

    def end_of_part(start: int) -> int:
        if _ENGINE_PART.match(text, start):
            role = _NEXT_ROLE.search(text, start)
            return role.start() if role else len(text)
        return _top_level_comma(text, start)

    return _split(text, end_of_part)


def split_specs(text: str, keep_empty: bool = False) -> list[str]:
    """Agent specs listed in one word, between commas outside parentheses (``--ladder``):
    ``random,mc(samples=5,pass_samples=3)`` is two (split at every comma it was three, and an
    "unbalanced parentheses" refusal). An ``exec:`` step's command cannot hold a comma here.
    An empty part (``random,,easy``, a comma at an end) is dropped, or kept as ``""`` with
    ``keep_empty``, for a caller that refuses it."""
    parts = _split(text, lambda start: _top_level_comma(text, start))
    return parts if keep_empty else [spec for spec in parts if spec]


def _split(text: str, end_of_part: Callable[[int], int]) -> list[str]:
    """``text`` in parts, each from where the last ended (past its comma) to ``end_of_part``."""
    parts, start = [], 0
    while start <= len(text):
        end = end_of_part(start)
        parts.append(text[start:end].strip())
        start = end + 1
    return parts


def _top_level_comma(text: str, start: int) -> int:
    """The index of the first comma outside parentheses from ``start`` (the end if none)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth < 0:
                raise AgentError(f"unbalanced parentheses in agent spec {text!r}")
        elif text[i] == "," and depth == 0:
            return i
    if depth:
        raise AgentError(f"unbalanced parentheses in agent spec {text!r}")
    return len(text)


def _convert(kind: PolicyKind, name: str, text: str) -> float | int:
    return kind.parameter(name).parse(text, kind.name)


def parse_policy(text: str) -> Policy:
    """``name`` or ``name(param=value, ...)`` as a ``Policy`` with defaults filled in; or an external
    agent, ``py:module:Name(k=v)`` or ``exec:COMMAND``."""
    if is_external(text):
        return Policy(EXTERNAL, external=parse_external(text))
    match = _TERM.match(text)
    if not match:
        raise AgentError(f"malformed agent spec {text!r}: write name or name(param=value,...)")
    name, arguments = match.group(1), match.group(2)
    kind = KIND_BY_NAME.get(name)
    level = stored_levels().get(name) if kind is None else None
    if level is not None:  # "easy(careless=0.5)" said: unknown agent 'easy' ...; did you mean 'easy'?
        raise AgentError(
            f"{name!r} is a level and takes no parameters: it is {level.agent}; "
            "write that spec with the values you want changed"
        )
    if kind is None:
        names = agent_names()
        raise AgentError(
            f"unknown agent {name!r}: valid agents are {', '.join(names)}{did_you_mean(name, names)}"
        )
    values: dict[str, float | int] = {}
    for assignment in _split_top_level(arguments) if arguments and arguments.strip() else []:
        key, sep, value = assignment.partition("=")
        if not sep:
            raise AgentError(f"{kind.name}: parameter {assignment!r} is not of the form name=value")
        if key.strip() in values:
            raise AgentError(f"{kind.name}: parameter {key.strip()!r} is given twice")
        values[key.strip()] = _convert(kind, key.strip(), value.strip())
    return Policy(kind, tuple(values.items()))


def parse_agent(spec: str | AgentSpec | Any) -> AgentSpec:
    """An ``AgentSpec`` from a spec string such as ``lowest``, ``pass=lowest,play=random``,
    ``py:my_agents.py:Greedy`` or a level name, or from a Python agent object (``agents.external``)."""
    return _parse_agent(spec, ())


def _parse_agent(spec: str | AgentSpec | Any, resolving: tuple[str, ...]) -> AgentSpec:
    """``parse_agent``; ``resolving``: the levels whose specs are being resolved (a level may
    name another level, never itself through any chain)."""
    if isinstance(spec, AgentSpec):
        return spec
    if not isinstance(spec, str) and (hasattr(spec, "choose_play") or hasattr(spec, "act_batch")):
        policy = Policy(EXTERNAL, external=wrap_object(spec))
        return AgentSpec(policy, policy)
    if not isinstance(spec, str):
        raise AgentError(
            f"{shown(spec)} is neither an agent spec (a string such as 'rule') nor an agent "
            "(an object with choose_pass and choose_play, or act_batch)"
        )
    if not spec.strip():
        raise AgentError(f"an agent spec must be a non-empty string, not {shown(spec)}")
    level = stored_levels().get(spec.strip())
    if level is not None:
        if level.name in resolving:
            chain = " -> ".join([*resolving, level.name])
            raise LevelError(f"level file {level.path}: the level refers to itself ({chain})")
        try:
            resolved = _parse_agent(level.agent, (*resolving, level.name))
        except LevelError:
            raise
        except AgentError as error:
            raise LevelError(f"level file {level.path}: {error}") from None
        return AgentSpec(resolved.pass_policy, resolved.play_policy, label=level.name)
    parts = _split_top_level(spec)
    roles: dict[str, Policy] = {}
    for part in parts:
        role, sep, rest = part.partition("=")
        if sep and role.strip() in ("pass", "play") and "(" not in role:
            role = role.strip()
            if role in roles:
                raise AgentError(f"agent spec {spec!r} names the {role} policy twice")
            if not rest.strip():  # it read "malformed agent spec '': ...", naming neither
                raise AgentError(
                    f"agent spec {spec!r} names no {role} policy after {role}=: write {role}=NAME"
                )
            if rest.strip() in stored_levels():  # a level's policy of that role: pass=hard,play=rule
                leveled = _parse_agent(rest.strip(), resolving)  # a cycle through a role is refused too
                roles[role] = leveled.pass_policy if role == "pass" else leveled.play_policy
                continue
            roles[role] = parse_policy(rest)
        elif len(parts) == 1:
            policy = parse_policy(part)
            return AgentSpec(policy, policy)
        else:
            raise AgentError(
                f"malformed agent spec {spec!r}: combine policies as pass=NAME,play=NAME{_apart(parts)}"
            )
    if len(roles) == 1:  # "pass=lowest" played lowest too, under the label of a plain lowest
        role, _, named = (text.strip() for text in parts[0].partition("="))
        other = "play" if role == "pass" else "pass"
        pair = f"pass={named},play=NAME" if role == "pass" else f"pass=NAME,play={named}"
        raise AgentError(f"agent spec {spec!r} names no {other} policy: write {pair} (or {named} for both)")
    # named by what its roles play, a level's spec spelled out (pass=normal,play=rule is named
    # pass=rule(...),play=rule): the records of every run so far name it so, and a resume checks
    # its replayed first chunk against them
    return AgentSpec(roles["pass"], roles["play"])


def agent_names() -> list[str]:
    """Every name an agent spec may start with: the policy kinds, then the levels."""
    return [*KIND_BY_NAME, *stored_levels()]


# names Windows keeps for devices, with any extension: ``con.toml`` is the console there
WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul", *(f"{port}{i}" for port in ("com", "lpt") for i in range(1, 10))]
)


def check_level_name(name: str) -> str:
    """``name`` if it may name a new level: a plain identifier (never a path) in lowercase that is
    not the name of a built-in agent nor of a Windows device; else ``LevelError`` saying why."""
    problem = level_name_problem(name)
    if problem is None and name in KIND_BY_NAME:
        problem = f"it is the name of the built-in agent {name!r}"
    elif problem is None and name != name.lower():  # Hard.toml replaced hard.toml on macOS
        problem = (
            f"a new level's name is in lowercase ({name.lower()!r}): a filesystem that ignores case "
            "(macOS's, Windows') takes another name's file for it"
        )
    elif problem is None and name in WINDOWS_DEVICES:
        problem = f"{name!r} names a device on Windows, not a file"
    if problem is not None:
        raise LevelError(f"{name!r} cannot name a level: {problem}")
    return name


def stored_levels() -> dict[str, Level]:
    """The levels in ``agents/levels`` and the folders of ``$HEARTS_SIM_LEVELS``; a file named
    like a built-in agent is an error, since a level must never silently replace one."""
    found = every_level()
    for name, level in found.items():
        if name in KIND_BY_NAME:
            raise LevelError(
                f"level file {level.path}: a level cannot take the name of the built-in agent {name!r}"
            )
    return found


def levels_named(spec: object, seen: tuple[str, ...] = ()) -> list[Level]:
    """The levels an agent spec names: itself (``hard``), or its roles' (``pass=hard,play=rule``),
    and the levels those name in turn, each once (a level that refers to itself through others is
    the spec's parsing to refuse, in one line: it was a ``RecursionError`` here); none for other
    specs and for objects."""
    if not isinstance(spec, str):
        return []
    found = stored_levels()
    named = [spec.strip()] if spec.strip() in found else []
    if not named:
        for part in _split_top_level(spec):
            role, sep, rest = part.partition("=")
            if sep and role.strip() in ("pass", "play") and rest.strip() in found:
                named.append(rest.strip())
    levels = [found[name] for name in dict.fromkeys(named) if name not in seen]
    inside = (*seen, *(level.name for level in levels))
    return levels + [
        inner for level in levels for inner in levels_named(level.agent, inside) if inner not in levels
    ]


def tuned_for_other_rules(specs: Iterable[object], rules: Rules) -> list[str]:
    """A line for each level among ``specs`` (``levels_named``) whose provenance says it was tuned
    under rules a hand plays otherwise than by ``rules`` (a whole game's switches aside: tuning
    plays hands): a level tuned for three players played the standard game without a word until
    2026-12-08. A level that names no rules, or rules this version cannot read, is taken as it is."""
    said = []
    for level in dict.fromkeys(level for spec in specs for level in levels_named(spec)):
        tuned = level.tuned_under()
        if tuned is None or hands_play_alike(tuned, rules):
            continue
        said.append(
            f"level {level.name} was tuned under {rules_label(tuned.describe())}, not these rules "
            f"({rules_label(rules.describe())}): its settings may not suit them"
        )
    return said


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
