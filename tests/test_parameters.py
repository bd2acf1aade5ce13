"""Agent parameters declare their type and range where their kind does; a value is either
accepted (and then plays) or refused with an ``AgentError`` naming agent, parameter and range.
The kernels clamp again, so no value that slipped past could size a search or crash a process.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.kinds import AgentError, Parameter
from agents.registry import KINDS, Policy, parse_agent
from agents.search import MAX_ITERATIONS, MAX_MS, budget_count, budget_deadline, budget_ms, monotonic_ns
from hearts_sim import simulate

# A hand with a search agent stays cheap: its budget parameters at small values; the one fuzzed
# overrides its own.
CHEAP_BASE = {
    "mc": {"samples": 4, "pass_samples": 2},
    "pimc": {"iterations": 40, "worlds": 2},
    "ismcts": {"iterations": 40},
}
# Values above these (still accepted) would make a hand take seconds to minutes: for them the
# test checks acceptance only; the kernels' clamps are tested below.
CHEAP_LIMIT = {
    "iterations": 400,
    "samples": 20,
    "worlds": 20,
    "pass_samples": 20,
    "ms": 1.0,
    "belief": 2000,
    "pass_rollouts": 2000,
    "stretch": 10,
}
PARAMETERS = [(kind, parameter) for kind in KINDS for parameter in kind.parameters]


def acceptable(parameter: Parameter, value: Any) -> bool:
    """What the declaration admits, worked out independently of ``Parameter.check``."""
    if isinstance(value, bool):
        return False
    if parameter.choices:
        if isinstance(value, str):
            return value in parameter.choices
        return float(value).is_integer() and 0 <= value < len(parameter.choices)
    if isinstance(value, str):
        try:
            value = int(value) if parameter.integer else float(value)
        except ValueError:
            return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if parameter.integer and isinstance(value, float) and not value.is_integer():
        return False
    return bool(parameter.low <= value <= parameter.high)


def spec_text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def values(parameter: Parameter) -> st.SearchStrategy[Any]:
    """Anything a user might write, and the values at and just beyond the declared range."""
    low, high = parameter.low, parameter.high
    step = 1 if parameter.integer else 1e-9
    return st.one_of(
        st.integers(min_value=-(10**25), max_value=10**25),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.sampled_from(
            ["nan", "-inf", "1e400", "abc", "", "1_0", "0x10", "1.5", "  7 ", *parameter.choices]
        ),
        st.sampled_from([low, high, low - step, high + step, (low + high) / 2, -high, high * 10]),
    )


def play_one_hand(spec: str) -> None:
    frame = simulate(
        "standard", [spec, "random", "random", "random"], hands=1, seed=11, threads=1, progress=False
    )
    assert int(frame[[f"points_{s}" for s in range(4)]].to_numpy().sum()) == 26


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_value_plays_a_hand_or_is_refused_naming_agent_parameter_and_range(data: Any) -> None:
    kind, parameter = data.draw(st.sampled_from(PARAMETERS))
    value = data.draw(values(parameter))
    text = spec_text(value).strip()  # a spec's values are read stripped
    chosen = {**CHEAP_BASE.get(kind.name, {}), parameter.name: text}
    spec = f"{kind.name}({','.join(f'{name}={value}' for name, value in chosen.items())})"
    try:
        parsed = parse_agent(spec)
    except AgentError as error:
        assert not acceptable(parameter, text), spec
        message = str(error)
        assert kind.name in message and parameter.name in message and parameter.allowed() in message
        return
    assert acceptable(parameter, text), spec
    accepted = parsed.play_policy.value(parameter.name)
    if parameter.name in CHEAP_LIMIT and accepted > CHEAP_LIMIT[parameter.name]:
        return  # acceptance only: a hand would take seconds (the clamps are tested below)
    play_one_hand(spec)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_programmatic_construction_checks_the_same_declaration(data: Any) -> None:
    kind, parameter = data.draw(st.sampled_from(PARAMETERS))
    value = data.draw(values(parameter).filter(lambda v: not isinstance(v, str) or parameter.choices))
    try:
        policy = Policy(kind, ((parameter.name, value),))
    except AgentError as error:
        assert not acceptable(parameter, value), (kind.name, parameter.name, value)
        assert parameter.allowed() in str(error)
        return
    assert acceptable(parameter, value), (kind.name, parameter.name, value)
    assert np.isfinite(policy.params_array()).all()


def test_every_parameter_declares_a_finite_range_around_its_default() -> None:
    for kind, parameter in PARAMETERS:
        assert math.isfinite(parameter.low) and math.isfinite(parameter.high), (kind.name, parameter.name)
        assert parameter.low <= parameter.default <= parameter.high


@pytest.mark.parametrize(
    ("value", "expected"),
    [(math.nan, 1), (-5.0, 1), (0.0, 1), (7.9, 7), (1e30, MAX_ITERATIONS), (math.inf, MAX_ITERATIONS)],
)
def test_kernels_clamp_counts_before_sizing_anything(value: float, expected: int) -> None:
    assert budget_count(value, 1, MAX_ITERATIONS) == expected


def test_kernels_clamp_time_budgets() -> None:
    assert [budget_ms(ms) for ms in (math.nan, -1.0, 0.0, 2.5, 1e30, math.inf)] == [
        0,
        0,
        0,
        2.5,
        MAX_MS,
        MAX_MS,
    ]
    assert budget_deadline(math.nan) == 0 and budget_deadline(-1.0) == 0 and budget_deadline(0.0) == 0
    start = monotonic_ns()
    assert start < budget_deadline(1e30) <= monotonic_ns() + int(MAX_MS * 1e6)


@pytest.mark.parametrize("kind", ["pimc", "ismcts"])
def test_a_search_kernel_given_an_unchecked_nan_still_plays(kind: str) -> None:
    """A parameter row that bypassed the checks (c = NaN: no child's value compares) used to
    index node -1 and corrupt memory; the descent now stops there."""
    from agents.dispatch import decide_play
    from agents.registry import code_of
    from hearts_sim import HandState
    from hearts_sim.engine.hand import decision_seed

    state = HandState.deal("standard", seed=5, hand=3)  # no pass: play starts at once
    row = list(parse_agent(f"{kind}(iterations=60)").play_policy.params_array())
    row[[p.name for p in parse_agent(kind).play_policy.kind.parameters].index("c")] = math.nan
    record = state.record
    seat = state.current_player
    assert seat is not None
    for _ in range(3):
        legal = np.uint64(int(state.legal_moves()))
        card = decide_play(
            code_of(kind),
            tuple(row),
            record,
            state.rules.to_tuple(),
            seat,
            legal,
            np.uint64(decision_seed(record, seat)),
        )
        assert (int(legal) >> int(card)) & 1
        state.play(int(card))
        seat = state.current_player
        assert seat is not None
