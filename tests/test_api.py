"""``agents.load`` and ``Observation``: histories rebuild the information set exactly, impossible
ones are rejected naming the first inconsistency, and decisions equal the batched loop's."""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
from agents.kinds import AgentError
from hearts_sim import simulate, simulate_games
from hearts_sim.core.cards import CardSet, card_str, cards_of, cards_str
from hearts_sim.core.errors import InputError
from hearts_sim.core.rules import Rules
from hearts_sim.engine.hand import decision_seed
from hearts_sim.game.hand_state import Game, HandState, IllegalMoveError
from hearts_sim.game.observation import HistoryError, Observation
from hearts_sim.selfplay.simulate import UndecidedGamesWarning

try:
    from tests.hand_checks import assert_matches_loop, history, loop_hand
except ImportError:  # tests/ itself on sys.path
    from hand_checks import assert_matches_loop, history, loop_hand  # type: ignore[no-redef]

# Every table size, both deck modes, every first-lead rule.
RULES = {
    "standard": Rules(),
    "kitty3": Rules.preset("qdan3", deck_mode="kitty"),
    "kitty5_any_club": Rules.preset("qdan5", deck_mode="kitty", first_lead="any_club"),
    "qdan5": Rules.preset("qdan5"),
    "maria_kitty": Rules.preset("black_maria", deck_mode="kitty"),
    "any_lead": Rules(first_lead="any", must_break_hearts=False, pass_cycle="across"),
}

# The information-set fields of a HAND_STATE record (per-seat arrays: the seat's entry where private).
PUBLIC = (
    "history",
    "trick_leaders",
    "trick_winners",
    "trick_cards",
    "leader",
    "to_play",
    "n_in_trick",
    "trick_number",
    "n_played",
    "void_suits",
    "tricks_won",
    "points",
    "hearts_broken",
    "hearts_broken_trick",
    "point_tricks",
    "qs_trick",
    "pass_offset",
    "dealer",
    "first_lead_card",
    "game_scores",
    "phase",
    "played",
    "trick_mask",
    "n_players",
    "seat_seeds",
    "hand_seed",
)
PRIVATE = ("hands", "dealt", "passed", "received")


# ---------------------------------------------------------------- observations
def _check_rebuild(state: HandState, seat: int) -> None:
    obs = state.observation(seat)
    assert type(obs.to_move) is bool  # a seat waiting in the play phase was np.False_
    rebuilt = Observation.from_history(**history(obs))
    if rebuilt != obs:
        # The one thing a history cannot tell before the first card: in kitty mode a seat
        # holding the lowest club it can see may lead (the lower clubs in the kitty) or not.
        assert not obs.plays and obs.rules.kitty_size
        assert dataclasses.replace(rebuilt, to_move=obs.to_move) == obs
        obs.validate()
        return
    if not obs.to_move:
        obs.validate()  # every real observation is consistent
        return
    hand_seed = int(state.record["hand_seed"])
    for observation in (obs, rebuilt):  # from a HandState, and from the plain history
        record = observation.to_state(hand_seed)[0]
        real = state.record
        for name in PUBLIC:
            assert np.array_equal(record[name], real[name]), name
        for name in PRIVATE:
            assert record[name][seat] == real[name][seat], name
        if obs.kitty:
            assert record["taken"][seat] == real["taken"][seat]
        assert decision_seed(record, seat) == decision_seed(real, seat)


@pytest.mark.parametrize("name", list(RULES))
def test_history_rebuilds_the_information_set(name: str) -> None:
    """At every decision the rebuilt record's information-set fields equal the real ones; any
    seat's observation from the plain history equals ``HandState.observation``."""
    rules = RULES[name]
    chooser = random.Random(name)
    for deal in range(2):
        state = HandState.deal(rules, seed=3, hand=deal)
        state.record["game_scores"][: rules.n_players] = [
            chooser.randrange(90) for _ in range(rules.n_players)
        ]
        if state.phase == "pass":
            for seat in range(rules.n_players):
                _check_rebuild(state, seat)
                state.pass_cards(seat, chooser.sample(list(state.hand(seat)), rules.pass_count))
        while state.phase == "play":
            seat = int(state.current_player)  # type: ignore[arg-type]
            _check_rebuild(state, seat)
            _check_rebuild(state, (seat + 1 + chooser.randrange(rules.n_players - 1)) % rules.n_players)
            state.play(chooser.choice(list(state.legal_moves())))
        _check_rebuild(state, 0)


@pytest.mark.parametrize("kitty_card", ["QS", "AH"])
def test_rebuilt_timeline_credits_an_unseen_kitty_to_the_first_trick(kitty_card: str) -> None:
    """A seat that did not take the kitty rebuilds the timeline from the public points: the
    first trick carried points, and with the queen in the kitty it is the queen's trick."""
    rules = Rules.preset("qdan3", deck_mode="kitty")  # a one-card kitty
    chooser = random.Random(kitty_card)
    hand = next(h for h in range(500) if HandState.deal(rules, seed=5, hand=h).kitty == CardSet(kitty_card))
    state = HandState.deal(rules, seed=5, hand=hand)
    if state.phase == "pass":
        for seat in range(rules.n_players):
            state.pass_cards(seat, chooser.sample(list(state.hand(seat)), rules.pass_count))
    while state.phase == "play" and int(state.record["trick_number"]) < 2:
        state.play(chooser.choice(list(state.legal_moves())))
    assert int(state.record["point_tricks"]) & 1
    assert (int(state.record["qs_trick"]) == 0) == (kitty_card == "QS")
    for seat in range(rules.n_players):  # the kitty's taker knows it; the others rebuild it
        _check_rebuild(state, seat)


SEEDED = f"py:{Path(__file__).resolve().parent / 'python_agents.py'}:SeededRandom"  # plays from its seed


def test_a_loaded_python_agent_decides_as_it_did_at_the_table() -> None:
    """``agents.load("py:...")`` (what ``hearts-sim play --level`` and ``serve --agent`` load) asks
    the agent with the seed the batched loop gave it: a hand stepped with loaded agents ends as
    the one ``simulate`` recorded. Before, any outside spec raised ``KeyError: 'external'``."""
    seating = [SEEDED, "rule", "random", SEEDED]
    loaded = [agents.load(spec) for spec in seating]
    frame = simulate("standard", seating, hands=6, seed=3)
    for deal in range(6):
        state = HandState.deal("standard", seed=3, hand=deal)
        hand_seed = int(state.record["hand_seed"])
        if state.phase == "pass":
            for seat in range(4):
                state.pass_cards(seat, loaded[seat].act(state.observation(seat), hand_seed=hand_seed))
        while state.phase == "play":
            seat = int(state.current_player)  # type: ignore[arg-type]
            state.play(loaded[seat].act(state.observation(seat), hand_seed=hand_seed))
        assert list(state.points()) == [frame[f"points_{s}"].iloc[deal] for s in range(4)]
        assert list(state.record["passed"][:4]) == [frame[f"passed_{s}"].iloc[deal] for s in range(4)]


@pytest.mark.parametrize(
    "seating",
    [["random"] * 4, ["lowest"] * 4, ["highest"] * 4, ["rule"] * 4, ["rule", "random", "lowest", "highest"]],
)
def test_agent_decisions_equal_the_batched_loop(seating: list[str]) -> None:
    """With the hand seed, ``agents.load(spec)`` decides exactly as the batched loop did."""
    rules = Rules()
    loaded = {spec: agents.load(spec, seed=99) for spec in set(seating)}
    for deal in range(3):  # left, right, across
        state, hand_seed, decisions = loop_hand(rules, seating, seed=11, deal=deal)
        assert_matches_loop(state, rules, seating, 11, deal)
        for obs, move in decisions:
            assert loaded[seating[obs.seat]].act(obs, hand_seed=hand_seed) == move


@pytest.mark.parametrize("name", ["kitty3", "kitty5_any_club", "any_lead"])
def test_agent_decisions_equal_the_batched_loop_in_variants(name: str) -> None:
    rules, seating = RULES[name], ["rule", "random", "lowest", "highest", "rule"][: RULES[name].n_players]
    state, hand_seed, decisions = loop_hand(rules, seating, seed=5, deal=0)
    assert_matches_loop(state, rules, seating, 5, 0)
    for obs, move in decisions:
        replayed = Observation.from_history(**history(obs))
        assert agents.load(seating[obs.seat]).act(replayed, hand_seed=hand_seed) == move


@pytest.mark.parametrize("spec", ["pimc(iterations=50,worlds=2)", "ismcts(iterations=100)"])
def test_search_agents_reproduce_too(spec: str) -> None:
    """Agents that sample worlds from the record read only its information set: same decisions."""
    rules = RULES["kitty3"]
    seating = [spec] * rules.n_players
    state, hand_seed, decisions = loop_hand(rules, seating, seed=4, deal=1)
    assert_matches_loop(state, rules, seating, 4, 1)
    agent = agents.load(spec)
    for obs, move in decisions:
        assert agent.act(Observation.from_history(**history(obs)), hand_seed=hand_seed) == move


@pytest.mark.parametrize(
    ("spec", "budget"),
    [
        ("mc(samples=12)", lambda row: row.weight == 12),  # every card in every world
        ("pimc(iterations=60,worlds=3)", lambda row: 1 <= row.weight <= 3),  # worlds that tried it
        ("ismcts(iterations=150)", lambda row: row.weight >= 1),  # playouts through it
        ("ismcts(iterations=150,final=mean)", lambda row: row.weight >= 1),
    ],
)
def test_card_values_are_what_a_search_plays_by(spec: str, budget: Any) -> None:
    """``Agent.card_values``: one row per legal card, best first, and the card marked chosen is
    the one the batched loop played; it is the lowest mean for ``mc`` and ``pimc``, the most
    visited for ``ismcts`` (its default ``final``). A forced card gets one row and no search."""
    rules = Rules()
    state, hand_seed, decisions = loop_hand(rules, [spec] * 4, seed=8, deal=0)
    agent = agents.load(spec)
    searched = forced = 0
    for obs, move in decisions:
        if obs.phase == "pass":
            continue
        table = agent.card_values(obs, hand_seed=hand_seed)
        assert sorted(table["card"]) == sorted(card_str(c) for c in obs.legal_moves())
        assert table.loc[table["chosen"], "card"].tolist() == [card_str(move)]
        if len(table) == 1:
            forced += 1
            assert np.isnan(table["points"].iloc[0]) and table["weight"].iloc[0] == 0
            continue
        searched += 1
        assert all(budget(row) for row in table.itertuples())
        assert table["points"].is_monotonic_increasing and table["points"].between(-26, 26).all()
        best = table[table["chosen"]].iloc[0]
        if spec.startswith("ismcts") and "final" not in spec:
            assert best.weight == table["weight"].max()
        elif not spec.startswith("ismcts"):
            assert best.points == table["points"].min()
    assert searched >= 20 and forced >= 1


@pytest.mark.parametrize(
    "spec",
    [
        "mc(samples=4,pass_samples=10)",
        "pimc(iterations=40,worlds=2,pass_rollouts=600)",
        "ismcts(iterations=60,pass_rollouts=600)",
    ],
)
def test_pass_values_are_what_a_search_passes_by(spec: str) -> None:
    """``Agent.pass_values``: the candidate passes, each of the seat's cards, and the one marked
    chosen is the pass the batched loop made; the searched pass's last survivor has the most
    playouts, ``mc`` plays every candidate on every deal, and across (no search) is one row."""
    rules, agent = Rules(), agents.load(spec)
    for deal in range(3):  # left, right, across
        _, hand_seed, decisions = loop_hand(rules, [spec] * 4, seed=9, deal=deal)
        for obs, move in decisions[:4]:  # the four passes
            table = agent.pass_values(obs, hand_seed=hand_seed)
            chosen = table[table["chosen"]]
            assert len(chosen) == 1 and chosen["cards"].iloc[0] == cards_str(sum(1 << c for c in move))
            assert all(
                len(cards.split()) == 3 and set(cards.split()) <= set(obs.hand.to_list())
                for cards in table["cards"]
            )
            if obs.pass_direction == "across" and not spec.startswith("mc"):
                assert len(table) == 1 and np.isnan(table["points"].iloc[0]) and table["weight"].iloc[0] == 0
            elif spec.startswith("mc"):
                assert (table["weight"] == 10).all() or len(table) == 1
            else:
                assert len(table) > 1 and chosen["weight"].iloc[0] == table["weight"].max()
                assert table["points"].is_monotonic_increasing


def test_card_values_explain_search_agents_only() -> None:
    obs = HandState.deal("standard", seed=4).observation(1)
    with pytest.raises(AgentError, match="rule, which scores no cards: card_values explains the search"):
        agents.load("rule").card_values(obs)
    with pytest.raises(AgentError, match="scores no cards"):  # a composite plays by its play policy
        agents.load("pass=mc,play=lowest").card_values(obs)
    with pytest.raises(IllegalMoveError, match="seat 1 is to pass, not to play"):
        agents.load("mc").card_values(obs)
    assert agents.load("hard").scores_cards and not agents.load("normal").scores_cards
    with pytest.raises(AgentError, match="rule passes by rule, which scores no passes: pass_values explains"):
        agents.load("rule").pass_values(obs)
    with pytest.raises(AgentError, match="scores no passes"):
        agents.load("pass=rule,play=hard").pass_values(obs)
    state = HandState.deal("standard", seed=4, hand=3)  # no pass: the play phase
    with pytest.raises(IllegalMoveError, match="no passing now"):
        agents.load("hard").pass_values(state.observation(state.current_player))
    with pytest.raises(AgentError, match=r"SeededRandom passes by its own code, which scores no passes"):
        agents.load(SEEDED).pass_values(obs)  # not by the kind "external", a name of the internals


def test_an_agent_shows_as_its_spec() -> None:
    """Its repr names the agent and its seed, not every parameter declaration and kernel of its
    kinds (4,000 characters in a notebook before)."""
    assert repr(agents.load("hard", seed=3)) == "Agent('hard', seed=3)"
    agent = agents.load("pass=random,play=mc(samples=10)")
    assert repr(agent) == "Agent('pass=random,play=mc(samples=10)', seed=0)"
    assert repr(agent.spec) == "AgentSpec('pass=random,play=mc(samples=10)')"
    assert repr(agent.spec.play_policy) == "Policy('mc(samples=10)')"
    assert repr(agent.spec.play_policy.kind) == "PolicyKind('mc')"
    assert repr(agents.load(SEEDED)) == f"Agent({SEEDED!r}, seed=0)"


def test_without_hand_seed_decisions_depend_on_the_observation_only() -> None:
    state = HandState.deal("standard", seed=4)
    obs = state.observation(2)
    agent = agents.load("random", seed=1)
    first = agent.choose_pass(obs)
    assert agents.load("random", seed=1).choose_pass(Observation.from_history(**history(obs))) == first
    assert len({tuple(agents.load("random", seed=s).choose_pass(obs)) for s in range(8)}) > 1


def test_load_names_and_errors() -> None:
    agent = agents.load("pass=lowest,play=random")
    assert agent.name == "pass=lowest,play=random"
    with pytest.raises(AgentError, match="unknown agent"):
        agents.load("no_such_agent")
    levels = pytest.importorskip("agents.levels").levels()
    for level in levels:  # stored levels resolve through the same spec parser
        assert agents.load(level).name == level


def test_turn_is_checked() -> None:
    state = HandState.deal("standard", seed=4)
    agent = agents.load("lowest")
    with pytest.raises(IllegalMoveError, match="seat 0 is to pass, not to play"):
        agent.choose_play(state.observation(0))
    state.pass_cards(0, list(state.hand(0))[:3])
    with pytest.raises(IllegalMoveError, match="has passed and waits"):
        agent.choose_pass(state.observation(0))
    for seat in range(1, 4):
        state.pass_cards(seat, list(state.hand(seat))[:3])
    other = (int(state.current_player) + 1) % 4  # type: ignore[arg-type]
    with pytest.raises(IllegalMoveError, match=f"seat {other} is not to move: the holder of 2C leads"):
        agent.choose_play(state.observation(other))
    state.play("2C")
    other = (other + 1) % 4
    with pytest.raises(IllegalMoveError, match=f"seat {other} is not to move: seat .* is to play"):
        agent.choose_play(state.observation(other))
    with pytest.raises(IllegalMoveError, match="no passing now"):
        agent.choose_pass(state.observation(int(state.current_player)))  # type: ignore[arg-type]


# ---------------------------------------------------------------- impossible histories
CLUBS = "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC"
DIAMONDS = "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD"
MIXED = "2C 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD 2H"  # seat 0: leads 2C, holds one heart
TRICK1 = [(0, "2C"), (1, "3C"), (2, "4C"), (3, "5C")]  # seat 3 wins with 5C


def _history(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"rules": "standard", "seat": 0, "hand": MIXED, "pass_direction": "none"}
    return {**base, **overrides}


BAD = [
    ({"seat": 4}, "seat 4 does not exist"),
    ({"hand": MIXED.replace("2H", "")}, "hand: 12 cards given"),
    ({"hand": "2C"}, "hand: 1 card given; these rules deal 13"),
    ({"hand": MIXED.replace("2H", "2C")}, "hand: 2C is given twice"),
    ({"hand": MIXED.replace("2H", "ZZ")}, "malformed card 'ZZ'"),
    ({"pass_direction": "up"}, "unknown pass direction 'up'"),
    ({"rules": "qdan3", "hand": CLUBS + " 2S 3S 4S 5S", "pass_direction": "across"}, "across"),
    ({"pass_direction": "left", "passed": "2C 2S 3S"}, "passed: 2S is not in the hand"),
    ({"pass_direction": "left", "passed": "2C 3D 4D", "received": "5D 2S 3S"}, "received: 5D is in the seat"),
    ({"pass_direction": "left", "plays": [(0, "2C")]}, "played before the pass was complete"),
    ({"plays": [(1, "2C")]}, "play 1: seat 1 played 2C, which seat 0 holds"),
    ({"seat": 1, "hand": DIAMONDS, "plays": [(0, "3C")]}, "must be opened with the lowest club in play, 2C"),
    ({"plays": [(0, "2C"), (2, "3C")]}, "play 2: seat 2 played out of turn; seat 1 is to play"),
    ({"plays": [(0, "2C"), (1, "2C")]}, "play 2: 2C was already played (play 1)"),
    ({"plays": [(0, "2C"), (1, "XX")]}, "play 2: malformed card 'XX'"),
    (
        {
            "seat": 1,
            "hand": DIAMONDS,
            "plays": [(0, "2C"), (1, "2D"), (2, "3H"), (3, "4C"), (3, "2S"), (0, "3H")],
        },
        "play 6: 3H was already played (play 3)",
    ),
    (
        {
            "seat": 1,
            "hand": DIAMONDS,
            "plays": [(0, "2C"), (1, "2D"), (2, "2S"), (3, "4C"), (3, "6C"), (0, "7C"), (1, "3D"), (2, "8C")],
        },
        "play 8: seat 2 played 8C after showing void in clubs (play 3)",
    ),
    (
        {
            "seat": 1,
            "hand": DIAMONDS,
            "plays": [
                *[(0, "2C"), (1, "2D"), (2, "3C"), (3, "4C")],
                *[(3, "5H"), (0, "6H"), (1, "3D"), (2, "7H")],
                *[(2, "8H"), (3, "9C")],
            ],
        },
        "play 5: seat 3 may not play 5H (hearts are not broken: it holds 9C, played later",
    ),
    (
        {"seat": 1, "hand": DIAMONDS, "pass_direction": "left", "passed": "2D 3D 4D", "received": "2S 3S 4S"},
        None,  # valid: waiting for seat 0 to lead
    ),
    (
        {
            "seat": 1,
            "hand": DIAMONDS,
            "pass_direction": "left",
            "passed": "2D 3D 4D",
            "received": "2S 3S 4S",
            "plays": [(0, "2C"), (1, "5D"), (2, "2D"), (3, "2D")],
        },
        "play 4: 2D was already played (play 3)",
    ),
    (
        {
            "seat": 1,
            "hand": DIAMONDS,
            "pass_direction": "left",
            "passed": "2D 3D 4D",
            "received": "2S 3S 4S",
            "plays": [(0, "2C"), (1, "5D"), (2, "3C"), (3, "2D")],
        },
        "play 4: seat 3 played 2D, which seat 1 passed to seat 2",
    ),
    (
        {
            "seat": 1,
            "hand": "2D 3D 4D 5D 6D 7D 8D 9D 10D 2S 3S 4S 5S",
            "pass_direction": "left",
            "passed": "2D 3D 4D",
            "received": "6S 7S 8S",
            "plays": [(0, "2C"), (1, "5S"), (2, "3C"), (3, "4C"), (3, "JD"), (0, "QD"), (1, "5D"), (2, "5C")],
        },
        "play 8: seat 2 showed void in diamonds while holding 2D, passed to it by seat 1",
    ),
    ({"plays": [*TRICK1, (3, "6C")], "points": [0, 0, 0, 1]}, "points: seat 3 has taken 0 points"),
    ({"scores": [0, 0, 0]}, "scores must list 4 integers"),
]


@pytest.mark.parametrize(("overrides", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_impossible_histories_name_the_first_inconsistency(
    overrides: dict[str, Any], message: str | None
) -> None:
    if message is None:
        Observation.from_history(**_history(**overrides))
        return
    with pytest.raises(HistoryError, match=_escape(message)):
        Observation.from_history(**_history(**overrides))


def _escape(text: str) -> str:
    import re

    return re.escape(text)


def test_observer_must_follow_suit_with_its_own_cards() -> None:
    hand = "2C 3C 4D 5D 6D 7D 8D 9D 10D JD QD KD 2H"
    plays = [(0, "2C"), (1, "5C"), (2, "6C"), (3, "7C"), (3, "8C"), (0, "4D")]
    with pytest.raises(
        HistoryError, match=r"play 6: seat 0 may not play 4D \(must follow clubs: it holds 3C\)"
    ):
        Observation.from_history("standard", seat=0, hand=hand, plays=plays)


def test_kitty_needs_points_or_cards() -> None:
    """Kitty mode: the kitty's points are public once taken, its cards only to its taker."""
    rules = RULES["kitty3"]
    state = HandState.deal(rules, seed=1, hand=2)  # the third hand of a 3-player cycle: no pass
    assert state.phase == "play"
    while state.trick_number == 0:
        state.play(min(state.legal_moves(), key=lambda c: c % 13))
    taker = state.trick_winners[0]
    other = (taker + 1) % 3
    seen = history(state.observation(other))
    with pytest.raises(HistoryError, match=f"seat {taker} took the kitty: give every seat's points"):
        Observation.from_history(**{**seen, "points": None})
    Observation.from_history(**seen)
    own = history(state.observation(taker))
    assert own["kitty"] is not None
    with pytest.raises(HistoryError, match="give its cards"):
        Observation.from_history(**{**own, "kitty": None})
    wrong = list(seen["points"])
    wrong[taker] += 14  # the one kitty card carries at most 13 points (the QS)
    assert wrong[taker] <= 26
    with pytest.raises(HistoryError, match="gives the kitty"):
        Observation.from_history(**{**seen, "points": wrong})
    wrong[taker] += 100  # more than a hand holds
    with pytest.raises(HistoryError, match="is out of range 0 .. 26"):
        Observation.from_history(**{**seen, "points": wrong})


def test_observation_is_reexported_from_game() -> None:
    from hearts_sim import Observation as Exported
    from hearts_sim.game.hand_state import Observation as FromGame

    assert Exported is Observation and FromGame is Observation
    assert CardSet(Observation.from_history("standard", 0, CLUBS).hand) == CardSet(CLUBS)
    assert card_str(agents.load("lowest").choose_play(Observation.from_history("standard", 0, CLUBS))) == "2C"


REFUSED = {
    "deal seed -1": lambda: HandState.deal("standard", seed=-1),
    "deal seed 2**64": lambda: HandState.deal("standard", seed=2**64),
    "deal seed 1.5": lambda: HandState.deal("standard", seed=1.5),  # type: ignore[arg-type]
    "deal hand -1": lambda: HandState.deal("standard", hand=-1),
    "deal hand True": lambda: HandState.deal("standard", hand=True),
    "simulate seed 1.5": lambda: simulate(hands=1, seed=1.5),  # type: ignore[arg-type]
    "simulate seed -1": lambda: simulate(hands=1, seed=-1),
    "simulate first_hand -1": lambda: simulate(hands=1, first_hand=-1),
    # the last hand past 2**62: its row could not be dealt again (HandState.deal refuses it)
    "simulate hands past 2**62": lambda: simulate(hands=2, first_hand=2**62),
    "simulate_games games past 2**62": lambda: simulate_games(games=2, first_game=2**62),
    "simulate threads 0": lambda: simulate(hands=1, threads=0),
    "load seed -1": lambda: agents.load("rule", seed=-1),
    "load seed 2**64": lambda: agents.load("rule", seed=2**64),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_seeds_and_indices_outside_their_range_are_refused(name: str) -> None:
    """Seeds are 0 .. 2**64-1 and indices 0 .. 2**62: nothing else is wrapped around, truncated
    or silently accepted; the error is an InputError naming the value."""
    with pytest.raises(InputError, match="is not valid"):
        REFUSED[name]()


def test_the_hands_of_games_are_asked_for_with_true_not_a_count() -> None:
    """``simulate`` counts hands; ``simulate_games(hands=...)`` asks for every hand of the games."""
    from hearts_sim import simulate_games

    for hands in (1000, "yes", None):
        with pytest.raises(InputError, match=f"hands must be True or False .*, not {hands!r}"):
            simulate_games("quick", games=1, hands=hands)  # type: ignore[arg-type]


def test_whole_games_refuse_a_target_no_game_can_reach() -> None:
    """Each game was cut off undecided after 1,000 hands, at no win for anyone: the largest target
    plays (26,000 points under standard, 43,000 under Black Maria), one more is refused."""
    from hearts_sim import simulate_games
    from hearts_sim.studies.tournament import make_config

    for preset, most in (("standard", 26_000), ("black_maria", 43_000)):
        with pytest.warns(UndecidedGamesWarning, match="1 of 1 games cut off undecided after 1,000 hands"):
            assert len(simulate_games(Rules.preset(preset, target_score=most), games=1)) == 1
        message = f"target_score={most + 1} cannot be reached: .* at most {most // 1000} points a hand"
        with pytest.raises(InputError, match=message):
            simulate_games(Rules.preset(preset, target_score=most + 1), games=1)
        with pytest.raises(InputError, match=message):  # a RulesError: one line from hearts-sim play
            Game(Rules.preset(preset, target_score=most + 1))
        with pytest.raises(InputError, match=message):
            make_config(
                ["random", "lowest"], rules=preset, rule_overrides=[f"target_score={most + 1}"], games=True
            )
        make_config(["random", "lowest"], rules=preset, rule_overrides=[f"target_score={most + 1}"])  # hands


def test_games_cut_off_undecided_are_told_and_a_game_ends_there_too() -> None:
    """A target these agents reach in more than 1,000 hands: every game was cut off, winner -1 in
    every row and win rates of 0, without a word (now a warning counting them); ``Game`` went on
    past the cut-off (now over there, no one winning, as the run's game)."""
    from hearts_sim import simulate_games

    rules = Rules(target_score=10_000)
    with pytest.warns(
        UndecidedGamesWarning, match="2 of 2 games cut off undecided after 1,000 hands"
    ) as told:
        rows = simulate_games(rules, "random", games=2, seed=1)
    assert len(told) == 1 and (rows["n_winners"] == 0).all() and (rows["hands"] == 1000).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # games that end: not a word
        simulate_games("quick", "random", games=20, seed=1)
    game = Game(Rules(target_score=26_000, pass_count=0), seed=5)
    while not game.over:
        state = game.next_hand()
        while state.phase == "play":
            state.play(min(state.legal_moves()))
        game.finish_hand(state)
    assert game.hands_played == 1000 and game.cut_off and game.winners == []
    assert repr(game).endswith(", cut off undecided>")
    with pytest.raises(IllegalMoveError, match="the game is over: cut off undecided after 1,000 hands"):
        game.next_hand()


def test_more_records_than_memory_holds_are_refused_before_a_hand_is_played(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``hands=10**12`` was numpy's ``MemoryError`` quoting the record dtype, and what fits only
    in swap took the machine down: refused in one line, naming the size and the memory."""
    import os

    from hearts_sim import simulate_games
    from hearts_sim.selfplay import simulate as simulate_module

    if hasattr(os, "sysconf"):  # what this process can still have: no more than the machine's
        assert (
            0 < simulate_module.available_memory() <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        )  # type: ignore[operator]
    with pytest.raises(
        InputError, match=r"^1,000,000,000,000 hands need 142,492.4 GiB for their records, and"
    ):
        simulate(hands=10**12)
    monkeypatch.setattr(simulate_module, "available_memory", lambda: 2**20)  # 1 MiB left
    with pytest.raises(
        InputError,
        match=r"^20,000 games need 1.5 MiB for their records, and 1.0 MiB is available here: play fewer "
        r".*\(first_game=",
    ):
        simulate_games(games=20_000)
    assert len(simulate(hands=1000)) == 1000  # 0.1 MiB: fits
    # the hands of games, whose number no one knows before the games end, were never counted:
    # 400,000 games took 1.7 GB past 512 MiB; refused after the first chunk at its games' length
    with pytest.raises(
        InputError,
        match=r"^the hands of 2,000 games need about [0-9.]+ MiB at the length of the first 100, and "
        r"1.0 MiB is available here: play fewer games at a time \(first_game=",
    ):
        simulate_games(games=2000, hands=True, chunk_size=100)
    assert len(simulate_games(games=2000, chunk_size=100)) == 2000  # the games alone: 0.15 MiB
    monkeypatch.setattr(simulate_module, "available_memory", lambda: None)  # not known: numpy's refusal
    with pytest.raises(InputError, match=r"^1,000,000,000,000 hands need 142,492.4 GiB for their records: "):
        simulate(hands=10**12)


def test_a_containers_memory_left_counts_the_cache_it_can_drop(tmp_path: Path) -> None:
    """cgroup v2's ``memory.current`` counts the page cache: a container that had read much Parquet
    sat near its limit, and records or tables that fit were refused."""
    from hearts_sim.selfplay.simulate import available_memory

    gib = 2**30
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text(
        f"MemTotal: {64 * gib // 1024} kB\nMemAvailable: {10 * gib // 1024} kB\n"
    )
    cgroup = tmp_path / "sys/fs/cgroup"
    cgroup.mkdir(parents=True)
    (cgroup / "memory.max").write_text(f"{4 * gib}\n")
    (cgroup / "memory.current").write_text(f"{int(3.5 * gib)}\n")
    assert available_memory(tmp_path) == gib // 2  # the limit less what it uses
    (cgroup / "memory.stat").write_text(f"anon 1\ninactive_file {gib}\nactive_file 5\n")
    assert available_memory(tmp_path) == gib + gib // 2  # and the cache it can drop
    (cgroup / "memory.max").write_text("max\n")  # no limit: what the machine has
    assert available_memory(tmp_path) == 10 * gib


def test_every_refused_move_is_an_illegal_move_error() -> None:
    """A loop asking a person for moves catches ``IllegalMoveError``: a typo or a card listed
    twice escaped it as a plain ``ValueError``, ``None`` as a ``TypeError``, and a pass naming a
    card twice read "pass exactly 3 cards, not 2"."""
    state = HandState.deal("standard", seed=1)
    held = list(state.hand(0))
    for cards, message in (
        (None, "seat 0's pass: not a card set: None"),
        ([held[0], held[0], held[1]], f"seat 0's pass lists {card_str(held[0])} twice"),
        (f"ZZ {card_str(held[0])} {card_str(held[1])}", "seat 0's pass: malformed card 'ZZ'"),
        # a generator was read by the first check, so the duplicate went unseen and 3 of 4 passed
        ((c for c in [held[0], held[0], held[1], held[2]]), f"seat 0's pass lists {card_str(held[0])} twice"),
        (itertools.cycle(held), "seat 0's pass: more than 52 cards listed"),  # it hung
    ):
        with pytest.raises(IllegalMoveError, match=re.escape(message)):
            state.pass_cards(0, cards)  # type: ignore[arg-type]
    for seat in range(4):
        state.pass_cards(seat, list(state.hand(seat))[:3])
    with pytest.raises(IllegalMoveError, match="malformed card 'QX'"):
        state.play("QX")
    with pytest.raises(
        ValueError, match=r"from_deal takes a hand per seat \(4 of them\), not one set of cards"
    ):
        HandState.from_deal("standard", " ".join(card_str(c) for c in range(52)))


def test_a_seat_must_be_a_seat() -> None:
    state = HandState.deal("standard", seed=1)
    for seat in (1.7, -1, 4, True):
        with pytest.raises(ValueError, match="does not exist with 4 players"):
            state.pass_cards(seat, "2C 3C 4C")  # type: ignore[arg-type]


def test_a_card_index_must_be_a_whole_number_in_range() -> None:
    assert card_str(np.int64(50)) == "KH" and card_str(0, symbols=True) == "♣2"
    for card in (True, 1.5, 51.0, float("inf"), "QS", None):
        with pytest.raises(ValueError, match="not a card index"):
            card_str(card)  # type: ignore[arg-type]
    for card in (-1, 52):
        with pytest.raises(ValueError, match="out of range 0..51"):
            card_str(card)


def test_a_suit_is_named_or_indexed() -> None:
    assert CardSet.suit("Hearts") == CardSet.suit(3) == CardSet("2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH")
    assert CardSet.suit(np.int64(0)) == CardSet.suit("clubs")
    for name in (True, -1, 4, 1.0, "cups", None):
        with pytest.raises(ValueError, match="not a suit"):
            CardSet.suit(name)  # type: ignore[arg-type]


def test_a_bitboard_must_hold_only_the_52_cards() -> None:
    assert cards_of(np.uint64(5)) == [0, 2] and cards_str(1 << 50) == "KH"
    # -1 has low bits without end: listing its cards ran forever
    for mask in (-1, 1 << 52, 1.5, True, None):
        with pytest.raises(ValueError, match="not a bitboard of the 52 cards"):
            cards_of(mask)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="not a bitboard of the 52 cards"):
            cards_str(mask)  # type: ignore[arg-type]


def test_an_agent_decides_from_an_observation_only() -> None:
    agent = agents.load("rule")
    state = HandState.deal("standard", seed=1)
    for decide in (agent.choose_pass, agent.choose_play, agent.act, agent.hand_seed, agent.state):
        for wrong in (state, 3, None, "QS"):
            with pytest.raises(TypeError, match="rule decides from an Observation"):
                decide(wrong)  # type: ignore[arg-type]
    observation = state.observation(0)
    with pytest.raises(ValueError, match="hand_seed=inf is not valid"):
        observation.to_state(float("inf"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hand_seed=-1 is not valid"):
        observation.to_state(-1)


def test_a_game_adds_each_hand_once_in_order() -> None:
    """``Game.finish_hand`` took any object with ``scores()``, the same hand twice, or a hand of
    another game, and added it to the totals."""
    game, other = Game("quick", seed=3), Game("quick", seed=4)
    totals = [0] * 4
    while not game.over:
        state = game.next_hand()
        play_out(state)
        with pytest.raises(IllegalMoveError, match="is not hand"):
            game.finish_hand(other.next_hand())
        with pytest.raises(TypeError, match="finish_hand takes the HandState next_hand\\(\\) dealt, not int"):
            game.finish_hand(3)  # type: ignore[arg-type]
        game.finish_hand(state)
        totals = [t + int(s) for t, s in zip(totals, state.scores(), strict=True)]
        counted = game.hands_played - 1  # it said "this is not hand N", N the next one
        with pytest.raises(IllegalMoveError, match=f"hand {counted} of this game is counted already"):
            game.finish_hand(state)  # twice
    assert game.totals == totals and max(totals) >= Rules.preset("quick").target_score
    assert game.winners == [s for s in range(4) if totals[s] == min(totals)]


def play_out(state: HandState) -> None:
    """Every seat passes and plays its lowest legal cards to the end of the hand."""
    if state.phase == "pass":
        for seat in range(4):
            state.pass_cards(seat, list(state.hand(seat))[:3])
    while state.phase == "play":
        state.play(next(iter(state.legal_moves())))


def test_the_main_job_is_one_import_away() -> None:
    """A tournament's three calls come from ``hearts_sim`` itself, lazily (importing the package
    loads no study module)."""
    import subprocess
    import sys

    import hearts_sim
    from hearts_sim.studies import tournament

    for name in ("make_config", "run_tournament", "combine_runs"):
        assert getattr(hearts_sim, name) is getattr(tournament, name) and name in dir(hearts_sim)
    lazy = "import sys, hearts_sim; print('hearts_sim.studies.tournament' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True).stdout == "False\n"


def test_a_deal_given_card_by_card_names_its_first_fault() -> None:
    """A card listed twice in one hand read as a hand of 12 ("seat 0 holds 12 cards")."""
    hands = [
        "2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC",
        "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD",
        "2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS",
        "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH",
    ]
    assert HandState.from_deal("standard", iter(hands)).current_player == 0  # any iterable of hands
    for edited, message in (
        ([hands[0].replace("3C", "2C"), *hands[1:]], "seat 0's hand lists 2C twice"),
        ([hands[0], ["2D", "2D", *hands[1].split()[2:]], *hands[2:]], "seat 1's hand lists 2D twice"),
        ([hands[0].replace("3C", "2D"), *hands[1:]], "card 2D is dealt twice"),
        ([hands[0].replace(" KC", ""), *hands[1:]], "seat 0 holds 12 cards; these rules deal 13"),
    ):
        with pytest.raises(ValueError, match=message):
            HandState.from_deal("standard", edited)


def test_a_hand_state_names_its_dealer_as_its_observations_do() -> None:
    """``Observation.dealer`` was public, ``HandState`` had none, though under ``first_lead=any``
    it decides who leads."""
    rules = Rules(first_lead="any", pass_cycle="none")
    for hand in range(8):
        state = HandState.deal(rules, seed=5, hand=hand)
        assert state.dealer == state.observation(2).dealer == hand % 4  # it moves on each hand
        assert state.current_player == (state.dealer + 1) % 4


@pytest.mark.parametrize("make", ["copy.copy", "copy.deepcopy", "pickle", "method"])
def test_a_copied_hand_is_independent_and_whole(make: str) -> None:
    """``copy.copy`` shared the original's record (a play on the copy moved the original), and
    after ``copy.deepcopy`` or pickling the copy's own view and record parted: its play reached
    the view alone, so what read the record (its observations, the kernels) saw no play."""
    import copy
    import pickle

    original = HandState.deal("standard", 1, hand=3)  # hand 3: no pass, play at once
    copied = {
        "copy.copy": copy.copy,
        "copy.deepcopy": copy.deepcopy,
        "pickle": lambda s: pickle.loads(pickle.dumps(s)),
        "method": HandState.copy,
    }[make](original)
    first = min(copied.legal_moves())
    copied.play(first)
    assert original.plays == [] and copied.plays == [(copied.plays[0][0], first)]
    assert copied._states[0] == copied._state  # one record, read and written through the view
    seat = copied.current_player
    assert seat is not None and list(copied.observation(seat).plays) == copied.plays
    twice = copy.deepcopy([original, original])  # one hand twice: one copy, twice
    assert twice[0] is twice[1] and twice[0] is not original
