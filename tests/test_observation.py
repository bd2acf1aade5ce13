"""``Observation.to_state`` builds its hidden cards with the engine's sampler: the worlds agree with
the real hand wherever the seat can know it and are complete and consistent everywhere, under
every preset and kitty variant, at every stage of a hand; impossible observations are rejected."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import agents
from hearts_sim.core.cards import CardSet, parse_card
from hearts_sim.core.rules import PRESETS, Rules
from hearts_sim.game.hand_state import HandState
from hearts_sim.game.observation import HistoryError, Observation

try:
    from tests.agent_checks import check_world
    from tests.hand_checks import assert_matches_loop, history, loop_hand
except ImportError:  # tests/ on sys.path instead of the repository root
    from agent_checks import check_world  # type: ignore[no-redef]
    from hand_checks import assert_matches_loop, history, loop_hand  # type: ignore[no-redef]

RULES: dict[str, Rules] = {
    **{name: Rules.preset(name) for name in PRESETS},
    "qdan3_kitty": Rules.preset("qdan3", deck_mode="kitty"),
    "qdan5_kitty": Rules.preset("qdan5", deck_mode="kitty"),
    "qdan5_kitty_any_club": Rules.preset("qdan5", deck_mode="kitty", first_lead="any_club"),
    "any_lead": Rules(first_lead="any", must_break_hearts=False, pass_cycle="across"),
}
# What a seat cannot know before the first card (who holds the opening club; in kitty mode,
# which club it is), nor with any_club before the leader's lowest club is played.
OPENING = ("leader", "to_play", "trick_leaders", "first_lead_card")


def positions(rules: Rules, count: int, seed: int) -> Iterator[tuple[str, HandState]]:
    """``count`` random points of random hands: passing (some seats passed), before the first
    card, mid-hand (often mid-trick) and after the last card."""
    chooser = random.Random(seed)
    total = rules.hand_size * rules.n_players
    for hand in range(count):
        state = HandState.deal(rules, seed=seed, hand=hand)
        stage = chooser.choice(["pass", "start", "mid", "mid", "end"])
        if state.phase == "pass":
            passing = chooser.randrange(rules.n_players) if stage == "pass" else rules.n_players
            for s in range(passing):
                state.pass_cards(s, chooser.sample(list(state.hand(s)), rules.pass_count))
            if stage == "pass":
                yield stage, state
                continue
        stop = {"start": 0, "end": total}.get(stage, chooser.randrange(1, total))
        for _ in range(stop):
            state.play(chooser.choice(list(state.legal_moves())))
        yield stage, state


def _check(state: HandState, obs: Observation, rules: Rules) -> None:
    real, seat = state.record, obs.seat
    hand_seed = int(real["hand_seed"]) + 1  # any seed: check_world wants the world's to differ
    world = obs.to_state(hand_seed)[0]
    reference = real.copy()
    lead = int(real["first_lead_card"])
    unknown_lead = rules.first_lead == "any_club" and lead >= 0 and not int(real["played"]) >> lead & 1
    if int(real["phase"]) != 0 and (int(real["n_played"]) == 0 or unknown_lead):
        for name in OPENING:  # the world's guess, checked for consistency by check_world
            reference[name] = world[name]
    check_world(reference, world, rules, seat)
    assert int(world["hand_seed"]) == hand_seed
    if state.phase == "done":  # scored again once the hidden kitty is dealt
        for name in ("scores", "moon_shooter", "qs_taker", "jd_taker"):
            assert np.array_equal(world[name], real[name]), name


@pytest.mark.parametrize("label", list(RULES))
def test_to_state_worlds_are_consistent(label: str) -> None:
    """Every seat's observation, from ``HandState`` and from the plain history, rebuilds into a
    complete world that agrees with the real hand on everything the seat may know."""
    rules = RULES[label]
    stages = set()
    for stage, state in positions(rules, 30, seed=len(label)):
        stages.add(stage if stage != "pass" or state.phase == "pass" else "mid")
        for seat in range(rules.n_players):
            obs = state.observation(seat)
            _check(state, obs, rules)
            _check(state, Observation.from_history(**history(obs)), rules)
    assert stages >= {"start", "mid", "end"} | ({"pass"} if rules.pass_count else set())


# Every agent kind (small searches) and the stored levels but the slow one.
SPECS = [
    "mc(samples=4,pass_samples=4)",
    "pimc(iterations=20,worlds=2)",
    "ismcts(iterations=40)",
    "rule",
    "easy",
    "normal",
    "random",
    "lowest",
    "highest",
]


@pytest.mark.parametrize("label", list(RULES))
def test_every_agent_decides_from_the_rebuilt_world_as_in_the_loop(label: str) -> None:
    """The hidden cards ``to_state`` deals differ from the real ones, yet every agent's decision
    from the plain history equals the batched loop's on the real record: no agent peeks."""
    rules = RULES[label]
    offset = sorted(RULES).index(label)
    seating = [SPECS[(offset + s) % len(SPECS)] for s in range(rules.n_players)]
    loaded = {spec: agents.load(spec) for spec in seating}
    state, hand_seed, decisions = loop_hand(rules, seating, seed=offset, deal=offset % 3)
    assert_matches_loop(state, rules, seating, offset, offset % 3)
    for obs, move in decisions:
        replayed = Observation.from_history(**history(obs))
        assert loaded[seating[obs.seat]].act(replayed, hand_seed=hand_seed) == move, (
            obs.seat,
            len(obs.plays),
        )


def test_same_observation_same_world() -> None:
    rules = RULES["qdan5_kitty"]
    for _, state in positions(rules, 6, seed=3):
        obs = state.observation(2)
        first = obs.to_state(9)
        assert first.tobytes() == obs.to_state(9).tobytes()
        assert first.tobytes() == Observation.from_history(**history(obs)).to_state(9).tobytes()


# ---------------------------------------------------------------- impossible observations
DIAMONDS = "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD"
# Seats 1 and 2 show void in spades: the 12 unseen spades must all lie with seat 3, which has
# 11 cards left.
SPADES_NOWHERE = [(1, "2C"), (2, "3C"), (3, "4C"), (0, "2D"), (3, "2S"), (0, "3D"), (1, "5C"), (2, "6C")]
IMPOSSIBLE: list[tuple[dict[str, Any], str]] = [
    (
        {"rules": "standard", "seat": 0, "hand": DIAMONDS, "plays": SPADES_NOWHERE},
        "no deal of the unseen cards fits the hand sizes and the voids shown",
    ),
    (  # seat 3's side: seats 0, 1 and 2 show void in spades and AS is unseen
        {
            "rules": "standard",
            "seat": 3,
            "hand": "4C 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS",
            "plays": SPADES_NOWHERE[:5] + [(0, "3D"), (1, "5C"), (2, "6C")],
        },
        "no deal of the unseen cards fits the hand sizes and the voids shown",
    ),
    (  # 3 players, kitty of one card: 2C and 3C cannot both lie in it (the kitty takes 2C)
        {
            "rules": Rules.preset("qdan3", deck_mode="kitty"),
            "seat": 1,
            "hand": "2D 3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD 2S 3S 4S 5S",
            "pass_direction": "none",
            "plays": [(0, "4C")],
        },
        "the first trick must be opened with the lowest club in play, 3C (the kitty is full), not 4C",
    ),
    (  # any_club, 5 players: the leader later shows void in clubs, so it held no lower club
        # than the 9C it led, and 2C..8C do not fit in the two-card kitty (it takes 2C, 3C)
        {
            "rules": Rules.preset("qdan5", deck_mode="kitty", first_lead="any_club"),
            "seat": 1,
            "hand": "2D 3D 4D 5D 6D 7D 8D 9D 10D JD",
            "pass_direction": "none",
            "plays": [(0, "9C"), (1, "2D"), (2, "10C"), (3, "JC"), (4, "QC"), (4, "KC"), (0, "2S")],
        },
        "play 1: seat 0 cannot lead the first trick: it cannot hold 4C, the lowest club in play",
    ),
]


@pytest.mark.parametrize(("history_", "message"), IMPOSSIBLE, ids=[str(i) for i in range(len(IMPOSSIBLE))])
def test_impossible_observations_raise(history_: dict[str, Any], message: str) -> None:
    with pytest.raises(HistoryError, match=re.escape(message)):
        Observation.from_history(**history_)


def test_an_impossible_observation_from_a_state_is_rejected_by_to_state() -> None:
    """``to_state`` checks an ``Observation`` made directly (not from a history) the same way."""
    possible = Observation.from_history("standard", seat=0, hand=DIAMONDS, plays=SPADES_NOWHERE[:4])
    plays = tuple((seat, parse_card(card)) for seat, card in SPADES_NOWHERE)
    impossible = dataclasses.replace(possible, plays=plays, hand=CardSet(DIAMONDS) - CardSet("2D 3D"))
    with pytest.raises(HistoryError, match="no deal of the unseen cards fits"):
        impossible.to_state(0)
