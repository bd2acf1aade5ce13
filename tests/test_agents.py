"""The rule and mc agents: specs, legality, no peeking, the lean rollout, and strength.

Legality and no-peeking use the reusable checks of tests/agent_checks.py, which the
search agents' tests share. Budgets are small so the module stays fast.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents import mc, rule, search
from agents.kinds import MAX_PARAMS, AgentError
from agents.registry import parse_agent, split_specs
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
SMALL_MC_GREEDY = "mc(samples=3,rollout=greedy,pass_samples=2)"
CARELESS_RULE = "rule(careless=0.5)"
AGENTS = ["random", "lowest", "highest", "rule", CARELESS_RULE, SMALL_MC, SMALL_MC_RANDOM, SMALL_MC_GREEDY]


# ---------------------------------------------------------------- specs
def test_rule_parameters_have_defaults_and_descriptions() -> None:
    assert 1 <= len(rule.KIND.parameters) <= MAX_PARAMS
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
    assert spec.play_policy.value("rollout") == search.ROLLOUT_RANDOM
    assert str(spec) == "mc(samples=10,rollout=random)"
    assert parse_agent("mc").play_policy.value("rollout") == search.ROLLOUT_RULE
    combined = parse_agent("pass=rule,play=mc(samples=5)")
    assert combined.pass_policy.kind.name == "rule" and combined.play_policy.value("samples") == 5


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("mc(depth=3)", ["depth", "samples", "rollout", "pass_samples"]),
        ("rule(bogus=1)", ["bogus", "spade_guard", "shoot"]),
        ("mc(rollout=smart)", ["random", "greedy", "rule"]),
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
    """Same random stream, same cards: the lean rollout's score equals the shared random playout's
    (the engine's), so ``mc(rollout=random)`` scores cards as that playout would."""
    compared = 0
    for label in ("standard", "omnibus", "kitty3_maria", "kitty5", "openspiel"):
        rules = CHECK_RULES[label]
        array = rules.to_tuple()
        scratch = new_states(2)
        for i, (state, seat) in enumerate(real_positions(rules, 25, seed=3, pass_probability=0)):
            legal = int(legal_moves(state.record, array))
            card = (legal & -legal).bit_length() - 1
            stream = np.uint64(1000 + i)
            lean_rng, lean = mc.lean_random_value(state.record, array, card, seat, stream, scratch[0])
            copy_state(state.record, scratch[1])
            play_card(scratch[1], array, card)
            engine_rng = search.play_out(scratch[1], array, stream, search.ROLLOUT_RANDOM, 0.0)
            assert lean == int(scratch[1]["scores"][seat]), (label, i)
            assert lean_rng == engine_rng, (label, i)  # the very same draws
            compared += 1
    assert compared == 125


@pytest.mark.parametrize("spec", ["rule", CARELESS_RULE, SMALL_MC, SMALL_MC_RANDOM])
def test_decisions_are_deterministic_for_a_seed(spec: str) -> None:
    decide = spec_decider(spec)
    for state, seat in real_positions("qdan5", 12, seed=9, pass_probability=0.3):
        args = (state.record, state._rules_array, seat, np.uint64(77))
        assert decide(*args) == decide(*args)


def test_careless_slips_are_the_lowest_card_and_never_a_bad_discard() -> None:
    """careless=1: every lead and follow is the lowest card (a beginner's slip); a discard when
    void is still the rule player's (the QS and high hearts go). careless=0: never a slip."""
    always, never, sober = (spec_decider(s) for s in ("rule(careless=1)", "rule(careless=0)", "rule"))
    slips = differences = 0
    for state, seat in real_positions("standard", 400, seed=4, pass_probability=0):
        record, rules = state.record, state._rules_array
        legal = int(legal_moves(record, rules))
        args = (record, rules, seat, np.uint64(5))
        led = int(record["trick_cards"][record["leader"]]) // 13 if record["n_in_trick"] else -1
        following = led >= 0 and legal & (0x1FFF << (13 * led))
        if record["n_in_trick"] == 0:
            lowest = min((c for c in range(52) if legal >> c & 1), key=lambda c: (c % 13, c))
            assert always(*args) == lowest
        elif following:
            assert always(*args) == (legal & -legal).bit_length() - 1
        else:
            assert always(*args) == sober(*args)  # discards stay sensible
        slips += always(*args) != sober(*args)
        differences += never(*args) != sober(*args)
    assert slips > 50 and differences == 0


def test_replay_finds_a_level_in_a_role_by_the_spec_it_was_given(tmp_path: Path) -> None:
    """``pass=normal,play=rule`` is recorded by what it plays, normal's spec spelled out (a run
    begun by any version so far names it so, and its resume checks a replayed chunk against that),
    and ``replay --worst pass=normal,play=rule`` did not find it (until 2026-12-08)."""
    from hearts_sim.apps.cli import main

    spec = parse_agent("pass=normal,play=rule")
    normal = parse_agent("normal")
    assert spec.pass_policy == normal.pass_policy and spec.name == f"pass={normal.plays},play=rule"
    run = tmp_path / "run"
    assert main(["match", "normal", "pass=normal,play=rule", "--deals", "4", "--out", str(run)]) == 0
    assert main(["replay", str(run), "--worst", "pass=normal,play=rule", "--against", "normal"]) == 0
    assert main(["replay", str(run), "--worst", spec.name]) == 0


# ---------------------------------------------------------------- strength
def test_rule_beats_random_in_duplicate() -> None:
    mean, half_width = duplicate_difference("rule", "random", "standard", deals=300, seed=5)
    assert mean + half_width < -4.0, (mean, half_width)  # A minus B: fewer points is better


def test_duplicate_seatings_cover_every_mix() -> None:
    seatings = duplicate_seatings("a", "b", 4)
    assert len(seatings) == 14 and len({tuple(s) for s in seatings}) == 14
    assert all("a" in s and "b" in s for s in seatings)


def test_agents_listed_in_one_word_keep_their_parameters() -> None:
    """``levels --ladder random,mc(samples=5,pass_samples=3)`` was split at every comma and refused
    as "unbalanced parentheses in agent spec 'mc(samples=5'"."""
    listed = split_specs("random, mc(samples=5,pass_samples=3) ,easy,")
    assert listed == ["random", "mc(samples=5,pass_samples=3)", "easy"]
    assert parse_agent(listed[1]).name == "mc(samples=5,pass_samples=3)"
    assert split_specs(",random,,easy,", keep_empty=True) == ["", "random", "", "easy", ""]
    with pytest.raises(AgentError, match="unbalanced parentheses"):
        split_specs("random,mc(samples=5")
