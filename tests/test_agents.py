"""The rule and mc agents: specs, legality, no peeking, the lean rollout, and strength.

Legality and no-peeking use the reusable checks of tests/agent_checks.py, which the
search agents' tests share. Budgets are small so the module stays fast.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import mc, rule
from agents.kinds import AgentError
from agents.registry import parse_agent
from hearts_sim.engine.hand import legal_moves, play_card
from hearts_sim.engine.sampler import copy_state
from hearts_sim.engine.state import PHASE_PASS, new_states

try:
    from tests.agent_checks import (
        CHECK_RULES,
        assert_no_peeking,
        assert_plays_legally,
        duplicate_difference,
        duplicate_seatings,
        real_positions,
        spec_decider,
    )
except ImportError:  # tests/ itself on sys.path
    from agent_checks import (  # type: ignore[no-redef]
        CHECK_RULES,
        assert_no_peeking,
        assert_plays_legally,
        duplicate_difference,
        duplicate_seatings,
        real_positions,
        spec_decider,
    )

SMALL_MC = "mc(samples=3,pass_samples=2)"
SMALL_MC_RANDOM = "mc(samples=4,rollout=random,pass_samples=2)"
AGENTS = ["random", "lowest", "highest", "rule", SMALL_MC, SMALL_MC_RANDOM]


# ---------------------------------------------------------------- specs
def test_rule_parameters_have_defaults_and_descriptions() -> None:
    assert 1 <= len(rule.KIND.parameters) <= 8
    assert all(p.description for p in rule.KIND.parameters)
    spec = parse_agent("rule")
    assert spec.play_policy.params_array()[: len(rule.KIND.parameters)].tolist() == list(
        rule.DEFAULT_PARAMS[: len(rule.KIND.parameters)]
    )
    tuned = parse_agent("rule(shoot=30,flush=0)")
    assert tuned.play_policy.value("shoot") == 30.0 and tuned.play_policy.value("flush") == 0
    assert str(tuned) == "rule(shoot=30,flush=0)"


def test_mc_spec_parsing() -> None:
    spec = parse_agent("mc(samples=10,rollout=random)")
    assert spec.play_policy.value("samples") == 10
    assert spec.play_policy.value("rollout") == mc.ROLLOUTS.index("random")
    assert str(spec) == "mc(samples=10,rollout=random)"
    assert parse_agent("mc").play_policy.value("rollout") == mc.ROLLOUTS.index("rule")
    combined = parse_agent("pass=rule,play=mc(samples=5)")
    assert combined.pass_policy.kind.name == "rule" and combined.play_policy.value("samples") == 5


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("mc(depth=3)", ["depth", "samples", "rollout", "pass_samples"]),
        ("rule(bogus=1)", ["bogus", "spade_guard", "shoot"]),
        ("mc(rollout=greedy)", ["rule", "random"]),
        ("mc(samples=many)", ["integer"]),
        ("rule(shoot=high)", ["number"]),
    ],
)
def test_bad_parameters_are_named(spec: str, words: list[str]) -> None:
    with pytest.raises(AgentError) as error:
        parse_agent(spec)
    for word in words:
        assert word in str(error.value)


# ---------------------------------------------------------------- legality and information
@pytest.mark.parametrize("spec", AGENTS)
def test_plays_legally_under_every_rules_set(spec: str) -> None:
    heavy = spec.startswith("mc")
    assert_plays_legally(spec, hands=40 if heavy else 150, stepped_hands=2 if heavy else 4)


@pytest.mark.parametrize("spec", AGENTS)
def test_decisions_ignore_hidden_cards(spec: str) -> None:
    assert assert_no_peeking(spec, per_rules=5, alternatives=2) >= 80


def test_the_no_peeking_check_catches_a_peeking_agent() -> None:
    def peeks(record: np.void, rules: tuple[int, ...], seat: int, seed: np.uint64) -> int:
        if record["phase"] == PHASE_PASS:
            return _lowest_three(record, seat)
        legal = int(legal_moves(record, rules))
        following = (seat + 1) % int(record["n_players"])
        bias = int(record["hands"][following])  # another seat's hand: forbidden
        cards = [c for c in range(52) if legal >> c & 1]
        return cards[bias % len(cards)]

    with pytest.raises(AssertionError, match="decision changed"):
        assert_no_peeking(peeks, per_rules=5, alternatives=2)


def _lowest_three(record: np.void, seat: int) -> int:
    hand = int(record["dealt"][seat])
    chosen = 0
    for _ in range(3):
        low = hand & -hand
        chosen |= low
        hand ^= low
    return chosen


# ---------------------------------------------------------------- the lean random rollout
def test_lean_rollout_scores_like_the_engine() -> None:
    """Same random stream, same cards: the lean rollout's score equals a full engine playout's."""
    compared = 0
    for label in ("standard", "omnibus", "kitty3_maria", "kitty5", "openspiel"):
        rules = CHECK_RULES[label]
        array = rules.to_tuple()
        scratch = new_states(2)
        for i, (state, seat) in enumerate(real_positions(rules, 25, seed=3, pass_probability=0)):
            legal = int(legal_moves(state.record, array))
            card = (legal & -legal).bit_length() - 1
            stream = np.uint64(1000 + i)
            _, lean = mc.lean_random_value(state.record, array, card, seat, stream, scratch[0])
            copy_state(state.record, scratch[1])
            play_card(scratch[1], array, card)
            mc.random_rollout(scratch[1], array, stream)
            assert lean == int(scratch[1]["scores"][seat]), (label, i)
            compared += 1
    assert compared == 125


@pytest.mark.parametrize("spec", ["rule", SMALL_MC, SMALL_MC_RANDOM])
def test_decisions_are_deterministic_for_a_seed(spec: str) -> None:
    decide = spec_decider(spec)
    for state, seat in real_positions("qdan5", 12, seed=9, pass_probability=0.3):
        args = (state.record, state._rules_array, seat, np.uint64(77))
        assert decide(*args) == decide(*args)


# ---------------------------------------------------------------- strength
def test_rule_beats_random_in_duplicate() -> None:
    mean, half_width = duplicate_difference("rule", "random", "standard", deals=300, seed=5)
    assert mean + half_width < -4.0, (mean, half_width)  # A minus B: fewer points is better


def test_duplicate_seatings_cover_every_mix() -> None:
    seatings = duplicate_seatings("a", "b", 4)
    assert len(seatings) == 14 and len({tuple(s) for s in seatings}) == 14
    assert all("a" in s and "b" in s for s in seatings)
