"""A learned model of the other seats' suit lengths, from what they played and passed.

Design note. The hands' shape is what the hidden cards are worth to ``hard``'s search: told
every other seat's true suit lengths (cards dealt at random within them), it gains 0.64 points
per hand, where told the queen of spades' place it gains nothing (the diagnostics in docs/hard.md).
This model guesses the shape from public facts: for another seat ``t`` and a suit ``k``, a
few counts (cards of ``k`` that ``t`` led, discarded, followed above or below the winning card,
passed to this seat; the cards of ``k`` this seat passed to ``t``; ...) form the features
``x[t, k]`` (``shape_features``), and a sampled world in which ``t`` holds ``L`` cards of ``k`` is
tilted by

    log P(world | plays) = log P_uniform(world) + sum over t, k of x[t, k] . (a * L + b * [L == 0])

an exponential tilt of the uniform sampler's law, log-linear in the weights ``(a, b)`` (one
vector each, shared by every seat and suit). A seat's lengths add up to its hand size and a
suit's to the cards of it hidden, so a feature that is the same for every other seat (which
suit, how far the hand is, this seat's own cards) or for every suit can only tilt voids: its
length weight is fitted to zero. ``experiments/train_shape.py`` fits them to
self-play positions of ``hard`` by maximum likelihood of the true world among sampled ones
(a conditional logit: convex), on top of ``agents.belief``'s surprise model, and writes
``agents/shape_weights.py``. The search agents use it through ``agents.belief``
(``shape=1``: the tilt as fitted, added to the surprises' log-likelihood before tempering). The
features are defined at every table; the weights are fitted on the standard game.
"""

from __future__ import annotations

import numpy as np

from agents.shape_weights import WEIGHTS
from hearts_sim._numba import njit
from hearts_sim.core.cards import CLUBS, HEARTS, N_RANKS, N_SUITS, SPADES, SUIT_MASKS, popcount, suit_of
from hearts_sim.core.rules import MAX_PLAYERS, RulesTuple
from hearts_sim.engine.hand import hand_size, next_turn
from hearts_sim.engine.sampler import unseen_cards

FEATURES = (
    "bias",
    "hearts",
    "spades",
    "clubs",
    "passed_to_me",  # cards of the suit t passed to this seat
    "passed_by_me",  # cards of the suit this seat passed to t, not yet played
    "led",  # tricks t led in the suit
    "led_high",  # ... with a jack or higher
    "led_early",  # ... in the hand's first EARLY_TRICKS tricks
    "discarded",  # cards of the suit t played to a trick of another suit
    "discarded_high",  # ... a jack or higher
    "followed_over",  # cards of the suit t played above the card then winning
    "followed_under",  # ... below it
    "progress",  # share of the hand's cards played
    "other_voids",  # suits t is known void in, this one aside
    "own",  # this seat's cards of the suit, per 13
    "hidden",  # cards of the suit this seat has not seen, per 13
)
N_FEATURES = len(FEATURES)
(
    BIAS, IS_HEARTS, IS_SPADES, IS_CLUBS, PASSED_TO_ME, PASSED_BY_ME, LED, LED_HIGH, LED_EARLY, DISCARDED,
    DISCARDED_HIGH, FOLLOWED_OVER, FOLLOWED_UNDER, PROGRESS, OTHER_VOIDS, OWN, HIDDEN,
) = range(N_FEATURES)  # fmt: skip
TERMS = 2 * N_FEATURES  # a feature times the length, and times "void"
HIGH_RANK = 9  # a jack
EARLY_TRICKS = 4
assert len(WEIGHTS) in (0, TERMS), "agents/shape_weights.py does not fit FEATURES: re-run train_shape.py"
SHAPE_WEIGHTS = np.array(WEIGHTS if WEIGHTS else (0.0,) * TERMS, dtype=np.float64)


@njit
def shape_features(state, rules: RulesTuple, seat: np.int64, out) -> None:
    """``out[t, k, :]`` (shape ``(MAX_PLAYERS, N_SUITS, N_FEATURES)``): the public features of
    seat ``t``'s length in suit ``k``, seen by ``seat`` (zero rows for ``seat`` itself)."""
    out[:] = 0.0
    n = state.n_players
    giver = (seat - state.pass_offset + n) % n
    receiver = (seat + state.pass_offset) % n
    unseen = unseen_cards(state, rules, seat)
    dealt = np.float64(hand_size(rules) * n)
    player = state.trick_leaders[0]
    position = 0
    trick = 0
    led = np.int64(-1)
    winning = np.int64(-1)
    for i in range(state.n_played):
        card = state.history[i]
        suit = suit_of(card)
        high = card % N_RANKS >= HIGH_RANK
        if position == 0:
            led = suit
            winning = card
            out[player, suit, LED] += 1.0
            out[player, suit, LED_HIGH] += high
            out[player, suit, LED_EARLY] += trick < EARLY_TRICKS
        elif suit != led:
            out[player, suit, DISCARDED] += 1.0
            out[player, suit, DISCARDED_HIGH] += high
        elif card > winning:
            out[player, suit, FOLLOWED_OVER] += 1.0
            winning = card
        else:
            out[player, suit, FOLLOWED_UNDER] += 1.0
        player, position, trick = next_turn(state, i, player, position, trick)
    for t in range(n):
        if t == seat:
            out[t, :, :] = 0.0
            continue
        for k in range(N_SUITS):
            row = out[t, k]
            row[BIAS] = 1.0
            row[IS_HEARTS] = 1.0 if k == HEARTS else 0.0  # diamonds: none of the three
            row[IS_SPADES] = 1.0 if k == SPADES else 0.0
            row[IS_CLUBS] = 1.0 if k == CLUBS else 0.0
            if state.pass_offset != 0 and t == giver:
                row[PASSED_TO_ME] = popcount(state.received[seat] & SUIT_MASKS[k])
            if state.pass_offset != 0 and t == receiver:
                row[PASSED_BY_ME] = popcount(state.passed[seat] & SUIT_MASKS[k] & ~state.played)
            row[PROGRESS] = state.n_played / dealt
            row[OTHER_VOIDS] = popcount(np.uint64(state.void_suits[t]) & ~np.uint64(1 << k))
            row[OWN] = popcount(state.hands[seat] & SUIT_MASKS[k]) / N_RANKS
            row[HIDDEN] = popcount(unseen & SUIT_MASKS[k]) / N_RANKS


@njit
def shape_terms(world, features, seat: np.int64, out) -> None:
    """``out`` (``TERMS``): the world's sufficient statistics, the features times each other
    seat's length (first half) and times its being void (second half)."""
    out[:] = 0.0
    for t in range(world.n_players):
        if t == seat:
            continue
        for k in range(N_SUITS):
            length = np.float64(popcount(world.hands[t] & SUIT_MASKS[k]))
            void = 1.0 if length == 0.0 else 0.0
            for f in range(N_FEATURES):
                out[f] += features[t, k, f] * length
                out[N_FEATURES + f] += features[t, k, f] * void


@njit
def shape_log_weight(world, features, seat: np.int64, weights, terms) -> np.float64:
    """The model's log-likelihood of ``world`` up to a constant: ``weights . shape_terms``
    (``terms``: scratch of ``TERMS``, left holding the world's terms)."""
    shape_terms(world, features, seat, terms)
    total = np.float64(0.0)
    for i in range(TERMS):
        total += weights[i] * terms[i]
    return total


@njit
def new_shape_features():
    """Room for one decision's ``shape_features``."""
    return np.zeros((MAX_PLAYERS, N_SUITS, N_FEATURES), dtype=np.float64)
