"""The searched pass (agents/passing.py): candidates, legality in every preset, count and
direction, blindness, reproducibility, and a tactical sanity check.

Budgets are small (a few hundred playouts a pass); strength is measured by the pass study
(experiments/pass_study.py), not here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.dispatch import decide_pass
from agents.kinds import MAX_PASS_CANDIDATES, pass_stats
from agents.passing import card_dangers, pass_candidates, searched_pass, subset_danger
from agents.registry import parse_agent
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULTS
from agents.rule import rule_pass
from agents.search import ROLLOUT_GREEDY, ROLLOUTS
from hearts_sim.core.cards import QS, CardSet
from hearts_sim.core.rules import Rules, pass_direction_cycle
from hearts_sim.engine.hand import decision_seed
from hearts_sim.game.hand_state import HandState

GREEDY = np.int64(ROLLOUT_GREEDY)  # hard's playout policy, which its searched pass plays out

try:
    from tests.agent_checks import CHECK_RULES, assert_no_peeking, assert_plays_legally, real_positions
except ImportError:  # tests/ itself on sys.path
    from agent_checks import (  # type: ignore[no-redef]
        CHECK_RULES,
        assert_no_peeking,
        assert_plays_legally,
        real_positions,
    )

SEARCHERS = ["ismcts(iterations=40,pass_rollouts=300)", "pimc(iterations=30,worlds=2,pass_rollouts=300)"]


def _directions(rules: Rules) -> list[str]:
    return [d for d in pass_direction_cycle(rules) if d != "none"]


def _pass_rows(spec: str) -> tuple[int, tuple[float, ...]]:
    policy = parse_agent(spec).pass_policy
    return policy.code, policy.row


@pytest.mark.parametrize("spec", SEARCHERS)
@pytest.mark.parametrize("label", list(CHECK_RULES))
def test_searched_pass_is_legal_for_every_direction(spec: str, label: str) -> None:
    """Every seat passes ``pass_count`` cards of its own dealt hand, in every direction of the
    preset's cycle (left, right, across where it exists), and the hand then plays on."""
    code, params = _pass_rows(spec)
    for direction in _directions(CHECK_RULES[label]):
        rules = CHECK_RULES[label].replace(pass_cycle=direction)
        array = rules.to_tuple()
        state = HandState.deal(rules, seed=3, hand=0)
        assert state.phase == "pass" and state.pass_direction == direction
        for seat in range(rules.n_players):
            seed = np.uint64(decision_seed(state.record, seat))
            cards = decide_pass(code, params, state.record, array, seat, seed)
            assert cards.bit_count() == rules.pass_count, (label, direction, CardSet(cards))
            assert cards & ~int(state.record["dealt"][seat]) == 0, (label, direction)
            state.pass_cards(seat, cards)  # raises on an invalid pass
        assert state.phase == "play"


@pytest.mark.parametrize("spec", SEARCHERS)
def test_no_pass_asked_without_passing(spec: str) -> None:
    """``pass_count=0`` and the ``none`` direction: no pass decision, and play stays legal."""
    for rules in (Rules(pass_count=0), Rules(pass_cycle="none"), Rules.preset("qdan5", pass_cycle="none")):
        assert HandState.deal(rules, seed=1).phase == "play"
        assert_plays_legally(spec, rules_set=[rules], hands=4, stepped_hands=1)


@pytest.mark.parametrize("label", list(CHECK_RULES))
def test_candidates_are_distinct_valid_passes_led_by_the_rule_pass(label: str) -> None:
    rules = CHECK_RULES[label]
    array = rules.to_tuple()
    for state, seat in real_positions(rules, 6, seed=2, pass_probability=1.0):
        dealt = int(state.record["dealt"][seat])
        out = np.zeros(MAX_PASS_CANDIDATES, dtype=np.uint64)
        count = int(pass_candidates(state.record, array, seat, np.uint64(0), out))
        passes = [int(x) for x in out[:count]]
        assert passes[0] == int(rule_pass(RULE_DEFAULTS, state.record, array, seat, np.uint64(0)))
        assert len(set(passes)) == count and count <= MAX_PASS_CANDIDATES
        assert count >= min(20, math.comb(dealt.bit_count(), rules.pass_count))
        for cards in passes:
            assert cards.bit_count() == rules.pass_count and cards & ~dealt == 0


def test_the_danger_score_ranks_an_unguarded_queen_first() -> None:
    """QS with one low spade goes before anything; with four low spades it is kept; emptying a
    short suit counts."""
    array = Rules().to_tuple()
    bare = CardSet("QS 3S 2C 5C 9D 10D JD 4H 6H 8H 10H 3D 7C").mask
    guarded = CardSet("QS 3S 4S 5S 6S 2C 5C 9D 10D JD 4H 6H 8H").mask
    for hand, queen_first in ((bare, True), (guarded, False)):
        dangers = np.zeros(52)
        card_dangers(np.uint64(hand), array, dangers)
        queen = CardSet("QS").mask
        best = max((c for c in CardSet(hand)), key=lambda c: dangers[c])
        assert (best == QS) is queen_first
        with_queen = subset_danger(np.uint64(hand), np.uint64(queen | CardSet("10H JD").mask), dangers)
        without = subset_danger(np.uint64(hand), np.uint64(CardSet("8H 10H JD").mask), dangers)
        assert (with_queen > without) is queen_first
    short_clubs = CardSet("2C 5C AS KD QD JD 10D 2H 3H 4H 5H 6H 7H").mask
    dangers = np.zeros(52)
    card_dangers(np.uint64(short_clubs), array, dangers)
    voiding = subset_danger(np.uint64(short_clubs), np.uint64(CardSet("2C 5C AS").mask), dangers)
    assert voiding > sum(dangers[c] for c in CardSet("2C 5C AS"))


def test_zero_rollouts_is_the_rule_pass_and_a_budget_is_reproducible() -> None:
    rules = Rules()
    array = rules.to_tuple()
    differs = 0
    for state, seat in real_positions(rules, 12, seed=5, pass_probability=1.0):
        seed = np.uint64(decision_seed(state.record, seat))
        rule_cards = int(rule_pass(RULE_DEFAULTS, state.record, array, seat, seed))
        assert int(searched_pass(state.record, array, seat, seed, 0, GREEDY, *pass_stats())) == rule_cards
        searched = int(searched_pass(state.record, array, seat, seed, 600, GREEDY, *pass_stats()))
        assert searched == int(searched_pass(state.record, array, seat, seed, 600, GREEDY, *pass_stats()))
        differs += searched != rule_cards
    assert differs > 0, "the search never departs from the rule pass: it decides nothing"


@pytest.mark.parametrize("searcher", ["ismcts(iterations=40", "pimc(iterations=30,worlds=2"])
def test_the_searched_pass_plays_out_the_agents_own_rollout(searcher: str) -> None:
    """An agent's pass is ``searched_pass`` with its own ``rollout`` as the playout policy, and
    the policy matters: greedy and rule playouts pick different passes somewhere."""
    rules = Rules()
    array = rules.to_tuple()
    picks: dict[str, list[int]] = {"greedy": [], "rule": []}
    for rollout, chosen in picks.items():
        code, params = _pass_rows(f"{searcher},pass_rollouts=600,rollout={rollout})")
        kind = np.int64(ROLLOUTS.index(rollout))
        for state, seat in real_positions(rules, 12, seed=5, pass_probability=1.0):
            seed = np.uint64(decision_seed(state.record, seat))
            cards = decide_pass(code, params, state.record, array, seat, seed)
            assert cards == int(searched_pass(state.record, array, seat, seed, 600, kind, *pass_stats()))
            chosen.append(cards)
    assert picks["greedy"] != picks["rule"], "the playout policy never changes the pass"


def test_across_the_search_agents_pass_like_rule() -> None:
    """Passing across the searched pass lost to the rule pass (agents/passing.py's note): every
    across pass is the rule agent's, whatever the budget, while left and right passes are
    searched (some depart from it)."""
    rules = Rules()
    array = rules.to_tuple()
    departs = {"left": 0, "right": 0}
    for step, direction in enumerate(("left", "right", "across")):  # the cycle's first three hands
        for hand in range(step, 64, 4):
            state = HandState.deal(rules, seed=70, hand=hand)
            assert state.pass_direction == direction
            seed = np.uint64(decision_seed(state.record, 0))
            rule_cards = int(rule_pass(RULE_DEFAULTS, state.record, array, 0, seed))
            searched = int(searched_pass(state.record, array, 0, seed, 600, GREEDY, *pass_stats()))
            if direction == "across":
                assert searched == rule_cards, (hand, CardSet(searched), CardSet(rule_cards))
            else:
                departs[direction] += searched != rule_cards
    assert departs["left"] > 0 and departs["right"] > 0, departs


@pytest.mark.parametrize("playout", ["greedy", "rule"])
def test_searched_pass_sheds_the_bare_queen_and_aces(playout: str) -> None:
    """Holding QS with no guard, and AS KS: passing three low clubs would be a blunder, whichever
    policy plays the candidates out."""
    state = HandState.from_deal(
        "standard",
        [
            "QS KS AS 2C 3C 4C 2D 5D 8D 3H 5H 7H 9H",
            "2S 3S 4S 5C 6C 7C 3D 4D 6D 2H 4H 6H 8H",
            "5S 6S 7S 8C 9C 10C 7D 9D 10D 10H JH QH KH",
            "8S 9S 10S JS JC QC KC AC JD QD KD AD AH",
        ],
        pass_direction="left",
    )
    array = state.rules.to_tuple()
    kind = np.int64(ROLLOUTS.index(playout))
    for seed in range(3):
        cards = int(searched_pass(state.record, array, 0, np.uint64(seed), 2000, kind, *pass_stats()))
        assert cards & CardSet("QS").mask, CardSet(cards)
        assert cards & CardSet("2C 3C 4C").mask == 0, CardSet(cards)


@pytest.mark.parametrize("spec", SEARCHERS)
def test_searched_pass_never_peeks(spec: str) -> None:
    """Pass decisions only (every position a pass): re-dealing what the seat cannot see (the
    other hands, and the passes of seats that passed before it) never changes the pass."""
    positions = [
        pos
        for i, rules in enumerate(CHECK_RULES.values())
        if rules.pass_count
        for pos in real_positions(rules, 4, seed=40 + i, pass_probability=1.0)
        if pos[0].phase == "pass"  # hands of the cycle's ``none`` direction have no pass
    ]
    assert assert_no_peeking(spec, positions=positions, alternatives=2) >= 2 * len(positions)
