"""The search agents ``pimc`` and ``ismcts`` (agents/pimc.py, agents/ismcts.py) and the pieces
every search agent shares (agents/search.py).

Tiny budgets throughout: the checks are about interface, legality, blindness and
reproducibility, plus one small duplicate match against random with a fixed seed.
Tests never assert wall-clock times; the time budget is only checked to finish legally.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

# isort: off

from agents import ismcts, mc, net, pimc, rule, search
from agents.kinds import MAX_PARAMS, AgentError
from agents.registry import KIND_BY_NAME, parse_agent
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULT_PARAMS
from agents.rule import rule_play
from hearts_sim.core.cards import HEARTS, QS, cards_of, suit_of
from hearts_sim.core.rules import Rules
from hearts_sim.engine.hand import point_holder
from hearts_sim.engine.rng import random_unit
from hearts_sim.engine.state import NO_SEAT
from hearts_sim.game.hand_state import HandState
from hearts_sim.selfplay.simulate import Table, run_hands

# isort: on

try:
    from tests.agent_checks import (
        CHECK_RULES,
        assert_no_peeking,
        assert_plays_legally,
        qs_dump_position,
        spec_decider,
    )
except ImportError:  # tests/ itself on sys.path
    from agent_checks import (  # type: ignore[no-redef]
        CHECK_RULES,
        assert_no_peeking,
        assert_plays_legally,
        qs_dump_position,
        spec_decider,
    )

# tiny budgets: a few hundred microseconds a decision
SMALL = {
    "pimc": "pimc(iterations=48,worlds=3)",
    "ismcts": "ismcts(iterations=60)",
}
ROLLOUT_VARIANTS = [
    "pimc(iterations=30,worlds=2,rollout=random)",
    "ismcts(iterations=40,rollout=rule,c=1.5)",
    "pimc(iterations=30,worlds=2,rollout=guard)",
    "ismcts(iterations=40,rollout=race)",
]
# the new hard's pieces at tiny budgets: weighted worlds, time by need, the searched pass
HARD_PIECES = {
    "ismcts": "ismcts(iterations=60,belief=12,trust=0.3,shape=1,plays=1,stretch=3,pass_rollouts=150)",
    "pimc": "pimc(iterations=48,worlds=3,belief=12,shape=2,pass_rollouts=150)",
    "mc": "mc(samples=3,pass_samples=2,belief=12,plays=0.5)",
    "ismcts_cutoff": "ismcts(iterations=60,cutoff=2)",
    "ismcts_mean": "ismcts(iterations=60,final=mean)",
    "ismcts_prior": "ismcts(iterations=60,prior=1)",
}


# ---------------------------------------------------------------- specs
@pytest.mark.parametrize("name", ["pimc", "ismcts"])
def test_spec_parses_with_defaults(name: str) -> None:
    kind = KIND_BY_NAME[name]
    assert 1 <= len(kind.parameters) <= MAX_PARAMS
    names = [p.name for p in kind.parameters]
    assert len(set(names)) == len(names)
    agent = parse_agent(name)
    assert agent.play_policy.kind is kind
    assert dict(agent.play_policy.values) == {p.name: p.default for p in kind.parameters}
    assert str(agent) == name
    row = kind.default_params()
    assert len(row) == MAX_PARAMS and all(isinstance(x, float) for x in row)


def test_spec_values_and_round_trip() -> None:
    agent = parse_agent("pimc(iterations=500, worlds=4, rollout=random, c=1.2, ms=30)")
    policy = agent.play_policy
    assert policy.value("iterations") == 500 and policy.value("worlds") == 4
    assert policy.value("rollout") == search.ROLLOUT_RANDOM
    assert policy.value("c") == 1.2 and policy.value("ms") == 30.0
    assert parse_agent(str(agent)) == agent
    assert parse_agent("ismcts(rollout=rule)").play_policy.value("rollout") == search.ROLLOUT_RULE


def test_search_agents_share_one_rollout_enumeration() -> None:
    for kind in (mc.KIND, pimc.KIND, ismcts.KIND):
        assert kind.parameter("rollout").choices == search.ROLLOUTS
    assert search.ROLLOUTS == ("random", "greedy", "rule", "guard", "race")
    assert parse_agent("mc").play_policy.value("rollout") == search.ROLLOUT_RULE
    assert parse_agent("pimc").play_policy.value("rollout") == search.ROLLOUT_GREEDY


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "pimc(iterations=many)",
            "pimc: parameter iterations='many' is not valid: choose an integer in 1 ..",
        ),
        ("pimc(depth=3)", "has no parameter 'depth'"),
        ("ismcts(rollout=smart)", "choose one of random, greedy, rule, guard, race"),
        ("ismcts(c=wide)", "choose a number in 0 .. 100"),
        ("ismcts(final=best)", "choose one of visits, mean"),
        ("ismcts(iterations)", "not of the form name=value"),
    ],
)
def test_spec_errors_name_the_problem(spec: str, message: str) -> None:
    with pytest.raises(AgentError, match=message):
        parse_agent(spec)


# ---------------------------------------------------------------- legality and blindness
@pytest.mark.parametrize("spec", [*SMALL.values(), *ROLLOUT_VARIANTS, *HARD_PIECES.values()])
def test_plays_legally_under_every_rules_set(spec: str) -> None:
    """3, 4 and 5 players, remove and kitty modes, Black Maria, Omnibus, any first lead."""
    assert_plays_legally(spec, hands=40, stepped_hands=2)


@pytest.mark.parametrize("spec", [*SMALL.values(), *HARD_PIECES.values()])
def test_never_peeks(spec: str) -> None:
    """Re-dealing everything the seat cannot see never changes its decision (same stream)."""
    assert assert_no_peeking(spec, per_rules=6, alternatives=2) >= 6 * len(CHECK_RULES)


@pytest.mark.parametrize("spec", ["pimc(ms=1,worlds=4)", "ismcts(ms=1)"])
def test_time_budget_plays_legally(spec: str) -> None:
    assert_plays_legally(spec, rules_set=[CHECK_RULES["kitty3_maria"]], hands=2, stepped_hands=1)


def test_clock_agrees_with_python() -> None:
    assert abs(int(search.monotonic_ns()) - time.monotonic_ns()) < 1_000_000_000


# ---------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("spec", [*SMALL.values(), *HARD_PIECES.values()])
def test_deterministic_for_a_seed(spec: str) -> None:
    table = Table.build("qdan5", [[spec, "random", spec, "rule", "random"]])
    first = run_hands(table, 11, 0, 6)
    second = run_hands(table, 11, 0, 6)
    assert first.tobytes() == second.tobytes()
    other_seed = run_hands(table, 12, 0, 6)
    assert first.tobytes() != other_seed.tobytes()


# ---------------------------------------------------------------- play
@pytest.mark.parametrize("spec", ["pimc(iterations=20000,worlds=20)", "ismcts(iterations=12000)"])
def test_dumps_the_queen_when_void(spec: str) -> None:
    """A tactical sanity check at about the default budgets (small ones still miss it)."""
    state, seat = qs_dump_position()
    decide = spec_decider(spec)
    played = [decide(state.record, state._rules_array, seat, np.uint64(seed)) for seed in range(3)]
    assert played == [QS] * 3, f"{spec} played {played}"


def _duplicate(a: str, b: str, deals: int, seed: int) -> tuple[float, float]:
    """A minus B mean score per hand over ``deals`` deals, each in all 14 seatings of A and B."""
    seatings = [[a if bit else b for bit in mix] for mix in itertools.product((0, 1), repeat=4)]
    seatings = [s for s in seatings if 0 < s.count(a) < 4]
    records = run_hands(Table.build("standard", seatings), seed, 0, deals)
    is_a = np.array([[agent == a for agent in seating] for seating in seatings])[records["seating"]]
    score = records["score"][:, :4].astype(float)
    diffs = np.array(
        [
            score[m][is_a[m]].mean() - score[m][~is_a[m]].mean()
            for m in (records["deal"] == d for d in range(deals))
        ]
    )
    return float(diffs.mean()), float(1.96 * diffs.std(ddof=1) / np.sqrt(deals))


@pytest.mark.parametrize("spec", ["pimc(iterations=200,worlds=5)", "ismcts(iterations=200)"])
def test_beats_random_in_duplicate(spec: str) -> None:
    mean, half_width = _duplicate(spec, "random", deals=8, seed=5)
    assert mean + half_width < -2.0, f"{spec} vs random: {mean:+.2f} ± {half_width:.2f} points/hand"


def test_search_kinds_declared_in_registry() -> None:
    assert KIND_BY_NAME["pimc"] is pimc.KIND and KIND_BY_NAME["ismcts"] is ismcts.KIND


# ---------------------------------------------------------------- the root card
def _root(visits_and_means: list[tuple[int, float]], seat: int = 2) -> np.ndarray:
    """A searched root whose children are the cards 0, 1, ... with these visits and mean scores
    for ``seat``, linked in that order."""
    tree = np.zeros(len(visits_and_means) + 1, dtype=search.TREE_NODE)
    tree["next"] = search.NO_NODE
    tree[0]["first_child"] = 1
    for card, (visits, mean) in enumerate(visits_and_means):
        node = tree[card + 1]
        node["card"], node["visits"], node["first_child"] = card, visits, search.NO_NODE
        node["sums"][seat] = visits * mean
        if card + 1 < len(visits_and_means):
            node["next"] = card + 2
    return tree


def test_root_card_by_visits_or_by_mean_among_the_well_visited() -> None:
    legal = np.uint64(0b111)
    tree = _root([(100, 5.0), (60, 3.0), (40, 1.0)])
    assert ismcts.root_card(tree, legal, 2, ismcts.FINAL_VISITS) == 0  # the most visited
    # the lowest mean among the cards with half the top visits: not 2, with only 40 of 100
    assert ismcts.root_card(tree, legal, 2, ismcts.FINAL_MEAN) == 1
    assert ismcts.root_card(_root([(100, 5.0), (49, 3.0), (40, 1.0)]), legal, 2, ismcts.FINAL_MEAN) == 0
    assert ismcts.root_card(_root([(100, 5.0), (50, 3.0)]), legal, 2, ismcts.FINAL_MEAN) == 1
    # ties in visits go to the lower mean under both rules
    tied = _root([(70, 4.0), (70, 2.0)])
    assert ismcts.root_card(tied, legal, 2, ismcts.FINAL_VISITS) == 1
    assert ismcts.root_card(tied, legal, 2, ismcts.FINAL_MEAN) == 1


@pytest.mark.parametrize("weights", [net.DEFAULT_WEIGHTS, "dagger_mc"])
def test_root_prior_is_a_nets_policy_and_a_heavy_one_plays_its_card(weights: str) -> None:
    """``prior``: the softmax over the legal cards of the shipped network ``prior_weights`` names
    (plain ``net``'s by default), whose most likely card is the one ``net`` plays with those
    weights; at the heaviest weight the root's visits follow it, so the search plays that card
    wherever it leads the runner-up clearly."""
    rules = Rules()
    array = rules.to_tuple()
    k = net.SHIPPED_NAMES.index(weights)
    net_card = spec_decider(f"net(weights={weights})")
    named = "" if weights == net.DEFAULT_WEIGHTS else f",prior_weights={weights}"
    heavy = spec_decider(f"ismcts(iterations=200,prior={ismcts.MAX_PRIOR:g}{named})")
    positions = clear = 0
    for deal in range(3):
        state = HandState.deal(rules, seed=deal, hand=3)  # the fourth hand: no pass
        while state.current_player is not None:
            seat, legal = state.current_player, np.uint64(int(state.legal_moves()))
            legal_cards = cards_of(int(legal))
            if len(legal_cards) > 1:
                prior = np.full(52, np.nan)
                net.play_prior(k, state.record, array, seat, legal, prior)
                assert prior.sum() == pytest.approx(1.0) and (prior[legal_cards] > 0).all()
                assert np.count_nonzero(prior) == len(legal_cards)
                top, second = np.sort(prior)[::-1][:2]
                assert int(np.argmax(prior)) == net_card(state.record, array, seat, np.uint64(deal))
                if top > 1.5 * second:
                    clear += 1
                    assert heavy(state.record, array, seat, np.uint64(deal)) == int(np.argmax(prior))
                positions += 1
            state.play(int(net_card(state.record, array, seat, np.uint64(deal))))
    assert positions >= 60 and clear >= 30


# ---------------------------------------------------------------- time by need
def test_stakes_name_the_queen_and_the_moon() -> None:
    """The queen out and not in hand, and every point in one pile, each raise a decision's stakes."""
    state, seat = qs_dump_position()  # seat 1 holds QS; no points taken yet
    rules = state._rules_array
    assert ismcts.decision_stakes(state.record, rules, seat) == 0.0
    assert ismcts.decision_stakes(state.record, rules, 0) == ismcts.STAKE_QUEEN
    state.play("QS")
    state.play("9C")  # seat 3's KC takes the queen: a moon is open to it
    assert state.record["points"][3] > 0 and sum(state.record["points"]) == state.record["points"][3]
    assert ismcts.decision_stakes(state.record, rules, state.current_player) == ismcts.STAKE_MOON
    assert ismcts.decision_stakes(state.record, Rules(moon="off").to_tuple(), state.current_player) == 0.0


def test_stretch_never_changes_a_clear_decision_and_stays_legal() -> None:
    """The dump of the bare queen is clear: the stretched search finds it too, and a forced card
    costs no search at any stretch."""
    state, seat = qs_dump_position()
    decide = spec_decider("ismcts(iterations=12000,stretch=4)")
    assert decide(state.record, state._rules_array, seat, np.uint64(1)) == QS


# ---------------------------------------------------------------- guard and race playouts
def _noisy_greedy_decisions(seed: int, deals: int = 200):  # type: ignore[no-untyped-def]
    """Every play decision of ``deals`` standard hands (the fourth of each seed: no pass) played
    greedily with a random card one time in five, so that points pile up on one seat now and
    then: yields (state, legal cards, random stream, greedy card) before the card is played."""
    array = Rules().to_tuple()
    rng = np.random.default_rng(seed)
    for deal in range(deals):
        state = HandState.deal(Rules(), seed=deal, hand=3)
        while state.current_player is not None:
            legal = np.uint64(int(state.legal_moves()))
            stream = np.uint64(deal)
            # playout_card first draws whether to play at random (never, with epsilon 0)
            _, greedy = search.greedy_play(state.record, array, legal, random_unit(stream)[0])
            yield state, legal, stream, greedy
            card = greedy if rng.random() < 0.8 else rng.choice(cards_of(int(legal)))
            state.play(int(card))


def test_point_holder_names_the_one_seat_with_every_point_taken() -> None:
    """``point_holder``, which the rule agent's moon play, ``guard``/``race`` playouts, the stakes of
    a decision and the learned evaluation share: the seat holding every point taken so far, else
    ``NO_SEAT``, and the points taken, at every decision of noisy greedy hands (some piled on one
    seat, some shared, some none)."""
    seen = set()
    for state, *_ in _noisy_greedy_decisions(7, deals=60):
        points = [int(p) for p in state.record["points"]]
        total = sum(points)
        holder = points.index(total) if total > 0 and max(points) == total else NO_SEAT
        assert point_holder(state.record) == (holder, total)
        seen.add("none" if total == 0 else "shared" if holder == NO_SEAT else "one pile")
    assert seen == {"none", "shared", "one pile"}


def test_guard_playouts_take_the_trick_from_a_would_be_shooter() -> None:
    """``guard`` plays the greedy card, except where one opponent holds every point taken (at
    least the rule agent's ``defend``): there it plays the rule agent's defence, which takes a
    trick with points in it whenever a card of the led suit can, where greedy ducks under it."""
    array = Rules().to_tuple()
    threats = point_tricks = ducked = 0
    for state, legal, stream, greedy in _noisy_greedy_decisions(5):  # 30 defended point tricks,
        raw = state.record  # 12 of them ducked by greedy
        _, guard = search.playout_card(raw, array, legal, stream, search.ROLLOUT_GUARD, 0.0)
        if not search.moon_threat(raw, array):
            assert guard == greedy
            continue
        threats += 1
        assert guard == rule_play(RULE_DEFAULT_PARAMS, raw, array, raw["to_play"], legal, stream)
        trick = state.trick
        if trick:
            led = suit_of(trick[0][1])
            follows = [card for seat, card in trick if suit_of(card) == led]
            can_beat = any(suit_of(c) == led and c > max(follows) for c in cards_of(int(legal)))
            if any(suit_of(c) == HEARTS or c == QS for _, c in trick) and can_beat:
                point_tricks += 1
                ducked += greedy < max(follows)
                assert guard > max(follows)
    assert threats > 0 and point_tricks > 0 and ducked > 0


def test_race_playouts_run_the_moon_race_on_both_sides() -> None:
    """``race`` plays the greedy card, except where one seat holds every point taken (at least the
    rule agent's ``defend``): there every seat plays the rule agent's card, so the holder takes
    the trick whenever a card of the led suit can (greedy ducks under it) and so do the others
    when the trick holds points."""
    array = Rules().to_tuple()
    holder_can_win = holder_wins = defender_can_win = defender_wins = 0
    for state, legal, stream, greedy in _noisy_greedy_decisions(6):
        raw = state.record
        _, race = search.playout_card(raw, array, legal, stream, search.ROLLOUT_RACE, 0.0)
        points = [int(p) for p in raw["points"]]
        on = sum(points) >= RULE_DEFAULT_PARAMS[rule.P.defend] and max(points) == sum(points)
        assert search.moon_race(raw, array) == on
        if not on:
            assert race == greedy
            continue
        seat = int(raw["to_play"])
        assert race == rule_play(RULE_DEFAULT_PARAMS, raw, array, seat, legal, stream)
        trick = state.trick
        if trick:
            led = suit_of(trick[0][1])
            top = max(card for _, card in trick if suit_of(card) == led)
            if any(suit_of(c) == led and c > top for c in cards_of(int(legal))):
                if points[seat] == sum(points):  # the holder: every trick
                    holder_can_win += 1
                    holder_wins += race > top
                elif any(suit_of(c) == HEARTS or c == QS for _, c in trick):
                    defender_can_win += 1
                    defender_wins += race > top
    assert holder_can_win > 0 and holder_wins == holder_can_win
    assert defender_can_win > 0 and defender_wins == defender_can_win
