"""A learned evaluation: each seat's expected final hand score in a full (determinized) world.

Design note. A search playout plays a sampled world to the end of the hand; an evaluation can
stop it early and guess the rest (``ismcts(cutoff=k)``: after k tricks of playout). The guess
is linear in a few features of each seat's position, computed from bitboards at the start of
a trick (``seat_features``), with one set of weights shared by every seat; values are in
units of the moon total (26, or 43 with Black Maria), so one model serves every table. The
weights live in ``agents/evaluation_weights.py``, written by
``experiments/train_evaluation.py`` (ridge regression, scikit-learn, ``pip install -e
".[learn]"``), which fits them to the final scores of millions of self-play hands of the
playout policy from the fast core: the evaluation predicts what the rest of the playout
would have scored, with far less noise. Evaluated in numba: a dot product per seat.

A world here is a full ``HAND_STATE``: the evaluation sees every hand, as the playout does.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from agents.evaluation_weights import WEIGHTS
from hearts_sim._numba import njit
from hearts_sim.core.cards import HEARTS_MASK, JACK, QS_BIT, RANK_COLUMN, SPADES_MASK, SUIT_MASKS, popcount
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.hand import card_points, moon_total, point_cards, point_holder

FEATURES = (
    "bias",
    "own_points",  # raw points taken so far
    "others_points",
    "unplayed_points",  # still to be taken, kitty included
    "holds_point_spade",  # holds QS (or KS, AS with Black Maria), unplayed
    "hearts_held",
    "high_hearts_held",  # J, Q, K, A of hearts
    "high_cards_held",  # J, Q, K, A of any suit
    "high_share",  # unplayed points times this seat's share of the unplayed high cards
    "guards_exposed",  # holds AS or KS while QS is with another seat
    "low_spades_exposed",  # spades below the queen while QS is with another seat
    "voids",  # suits this seat holds none of (discards to come)
    "on_lead",
    "moon_open",  # every point taken so far is this seat's (and there are some)
    "moon_points",  # moon_open times the points already taken
    "tricks_left",
)
N_FEATURES = len(FEATURES)
F: Any = namedtuple("FeatureIndex", FEATURES)(*range(N_FEATURES))  # type: ignore[misc]  # F.bias == 0
_ZERO = np.uint64(0)
_HIGH = (RANK_COLUMN << np.uint64(JACK)) | (RANK_COLUMN << np.uint64(JACK + 1))
_HIGH |= (RANK_COLUMN << np.uint64(JACK + 2)) | (RANK_COLUMN << np.uint64(JACK + 3))
_LOW_SPADES = SPADES_MASK & (QS_BIT - np.uint64(1))
assert len(WEIGHTS) == N_FEATURES, "agents/evaluation_weights.py does not match FEATURES: retrain"


@njit
def seat_features(state, rules: RulesTuple, seat: np.int64, out) -> None:
    """The features of ``seat``'s position in a full world at the start of a trick, into ``out``
    (points in units of the moon total)."""
    scale = 1.0 / moon_total(rules)
    n = state.n_players
    hand = state.hands[seat]
    points = point_cards(rules)
    holder, taken = point_holder(state)
    unplayed_high = _ZERO
    for s in range(n):
        unplayed_high |= state.hands[s] & _HIGH
    unplayed = moon_total(rules) - taken
    queen_elsewhere = not hand & QS_BIT and not state.played & QS_BIT
    out[F.bias] = 1.0
    out[F.own_points] = state.points[seat] * scale
    out[F.others_points] = (taken - state.points[seat]) * scale
    out[F.unplayed_points] = unplayed * scale
    out[F.holds_point_spade] = card_points(hand & points & SPADES_MASK, rules) * scale
    out[F.hearts_held] = np.float64(popcount(hand & HEARTS_MASK)) / 13.0
    out[F.high_hearts_held] = np.float64(popcount(hand & HEARTS_MASK & _HIGH)) / 4.0
    out[F.high_cards_held] = np.float64(popcount(hand & _HIGH)) / 16.0
    share = np.float64(popcount(hand & _HIGH)) / max(np.float64(popcount(unplayed_high)), 1.0)
    out[F.high_share] = unplayed * scale * share
    exposed = 1.0 if queen_elsewhere else 0.0
    out[F.guards_exposed] = exposed * np.float64(popcount(hand & SPADES_MASK & ~_LOW_SPADES & ~QS_BIT))
    out[F.low_spades_exposed] = exposed * np.float64(popcount(hand & _LOW_SPADES)) / 4.0
    voids = 0.0
    for suit in range(4):
        if hand & SUIT_MASKS[suit] == _ZERO:
            voids += 1.0
    out[F.voids] = voids / 4.0
    out[F.on_lead] = 1.0 if state.to_play == seat else 0.0
    moon_open = 1.0 if holder == seat else 0.0
    out[F.moon_open] = moon_open
    out[F.moon_points] = moon_open * state.points[seat] * scale
    out[F.tricks_left] = np.float64(popcount(hand)) / 13.0


@njit
def evaluate(state, rules: RulesTuple, features, values) -> None:
    """Every seat's expected final score (points, moon and bonuses included) into ``values``
    (``features``: scratch of ``N_FEATURES``)."""
    total = np.float64(moon_total(rules))
    for s in range(state.n_players):
        seat_features(state, rules, s, features)
        value = 0.0
        for i in range(N_FEATURES):
            value += WEIGHTS[i] * features[i]
        values[s] = value * total
