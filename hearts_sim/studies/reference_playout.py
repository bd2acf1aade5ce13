"""A minimal random playout of the standard game: the floor of what a hand costs on this CPU.

``hearts-sim bench`` times it beside the engine in the same run and prints the engine's ratio
to it, so the engine's speed is judged against the machine, not against a figure measured on
another CPU. It is written for speed and nothing else: standard rules only (4 players, passes
left, right, across, none by hand number, 2C leads, no points on the first trick, hearts must be
broken, the queen does not break them, the moon: others +26), uniform random passes and plays,
one splitmix stream per hand, and only the points kept: no record, no history, no agents, no
rule switches. It shares the engine's bit helpers and random draws (``select_card_bit``,
``random_below``), so the difference is the engine's bookkeeping, not its primitives.
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.cards import (
    FULL_DECK,
    HEARTS_AND_QS,
    HEARTS_MASK,
    N_RANKS,
    QS_BIT,
    SUIT_MASKS,
    TWO_CLUBS_BIT,
    lowest_card,
    popcount,
    select_card_bit,
)
from hearts_sim.engine.rng import derive_seed, random_below

N_SEATS, HAND_SIZE, MOON = 4, 13, 26
PASS_OFFSETS = (1, 3, 2, 0)  # left, right, across, none: hand h passes by PASS_OFFSETS[h % 4]


@njit
def _random_cards(hand: np.uint64, count: np.int64, rng: np.uint64):
    """``count`` cards of ``hand`` drawn uniformly without replacement: (rng, cards)."""
    chosen = np.uint64(0)
    left = np.int64(popcount(hand))
    for _ in range(count):
        rng, k = random_below(rng, left)
        bit = select_card_bit(hand, k)
        chosen |= bit
        hand ^= bit
        left -= 1
    return rng, chosen


@njit
def reference_hand(hand_number: np.int64, rng: np.uint64, hands, passed, points) -> np.int64:
    """Deal, pass and play one standard hand at random; returns seat 0's score (scratch arrays
    of 4: ``hands``, ``passed``, ``points``)."""
    undealt = FULL_DECK
    for seat in range(N_SEATS - 1):
        rng, hands[seat] = _random_cards(undealt, HAND_SIZE, rng)
        undealt ^= hands[seat]
    hands[N_SEATS - 1] = undealt
    offset = PASS_OFFSETS[hand_number % 4]
    if offset:
        for seat in range(N_SEATS):
            rng, passed[seat] = _random_cards(hands[seat], 3, rng)
        for seat in range(N_SEATS):
            giver = (seat - offset) & 3
            hands[seat] = (hands[seat] & ~passed[seat]) | passed[giver]
    leader = 0
    for seat in range(N_SEATS):
        points[seat] = 0
        if hands[seat] & TWO_CLUBS_BIT:
            leader = seat
    broken = False
    for trick in range(HAND_SIZE):
        seat, winner, winning, led = leader, leader, np.int64(-1), np.int64(-1)
        cards = np.uint64(0)
        for i in range(N_SEATS):
            hand = hands[seat]
            if i == 0:  # the lead: 2C first, no heart before hearts broke unless only hearts
                legal = TWO_CLUBS_BIT if trick == 0 else hand
                if trick > 0 and not broken and hand & ~HEARTS_MASK:
                    legal = hand & ~HEARTS_MASK
            else:  # follow suit if able; no points on the first trick unless forced
                follow = hand & SUIT_MASKS[led]
                legal = follow if follow else hand
                if trick == 0 and legal & ~HEARTS_AND_QS:
                    legal &= ~HEARTS_AND_QS
            rng, k = random_below(rng, np.int64(popcount(legal)))
            bit = select_card_bit(legal, k)
            hands[seat] ^= bit
            cards |= bit
            card = lowest_card(bit)
            if i == 0:
                led, winning = card // N_RANKS, card
            elif card // N_RANKS == led and card > winning:
                winner, winning = seat, card
            seat = (seat + 1) & 3
        broken |= (cards & HEARTS_MASK) != 0
        points[winner] += np.int64(popcount(cards & HEARTS_MASK)) + 13 * np.int64((cards & QS_BIT) != 0)
        leader = winner
    for seat in range(N_SEATS):
        if points[seat] == MOON:
            return np.int64(0 if seat == 0 else MOON)
    return points[0]


@njit
def reference_hands(seed: np.uint64, n_hands: np.int64) -> np.int64:
    """Play ``n_hands`` reference hands; returns seat 0's total score (so no work is optimised
    away; 6.5 points a hand on average)."""
    hands = np.empty(N_SEATS, dtype=np.uint64)
    passed = np.empty(N_SEATS, dtype=np.uint64)
    points = np.empty(N_SEATS, dtype=np.int64)
    total = np.int64(0)
    for h in range(n_hands):
        total += reference_hand(h, derive_seed(seed, h), hands, passed, points)
    return total
