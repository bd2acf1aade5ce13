"""The sanity anchors of every comparison: uniform random, always-lowest, always-highest.

Policies follow the one interface every agent kernel implements (see ``agents.dispatch``):
a play policy returns one card of ``legal``; a pass policy returns a bitboard of
``rules.pass_count`` cards from the seat's hand. ``seed`` is 64 random bits for the
decision: use them directly (``uniform_below``) or as the state of a splitmix stream.
"""

from __future__ import annotations

import numpy as np

from agents.kinds import PolicyKind
from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import (
    card_bit,
    highest_ranked_card,
    lowest_ranked_card,
    popcount,
    select_bit,
    select_card_bit,
)
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.rng import random_below, uniform_below


@njit
def random_play(legal: np.uint64, seed: np.uint64) -> np.int64:
    """A uniformly random legal card (the seed's own bits are the draw: no extra mixing)."""
    return select_bit(legal, uniform_below(seed, np.int64(popcount(legal))))


@njit
def random_pass(hand: np.uint64, rules: RulesTuple, seed: np.uint64) -> np.uint64:
    """``pass_count`` cards drawn uniformly without replacement."""
    rng = seed
    chosen = np.uint64(0)
    count = np.int64(popcount(hand))
    for _ in range(rules.pass_count):
        rng, k = random_below(rng, count)
        bit = select_card_bit(hand, k)
        chosen |= bit
        hand ^= bit
        count -= 1
    return chosen


@njit
def lowest_play(legal: np.uint64, seed: np.uint64) -> np.int64:
    """The legal card of lowest rank."""
    return lowest_ranked_card(legal)


@njit
def highest_play(legal: np.uint64, seed: np.uint64) -> np.int64:
    """The legal card of highest rank."""
    return highest_ranked_card(legal)


@njit
def pass_extremes(hand: np.uint64, rules: RulesTuple, highest: bool) -> np.uint64:
    """The ``pass_count`` highest-ranked (or lowest-ranked) cards of the hand."""
    chosen = np.uint64(0)
    for _ in range(rules.pass_count):
        card = highest_ranked_card(hand) if highest else lowest_ranked_card(hand)
        chosen |= card_bit(card)
        hand ^= card_bit(card)
    return chosen


# ---------------------------------------------------------------- the pass policies, as kinds declare them
@njit_inline
def pass_random_cards(params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64) -> np.uint64:
    return random_pass(state.dealt[seat], rules, seed)


@njit_inline
def pass_highest_cards(params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64) -> np.uint64:
    return pass_extremes(state.dealt[seat], rules, True)


@njit_inline
def pass_lowest_cards(params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64) -> np.uint64:
    return pass_extremes(state.dealt[seat], rules, False)


RANDOM = PolicyKind(
    "random",
    "uniform over legal cards; passes random cards",
    stateless_play=random_play,
    pass_cards=pass_random_cards,
    own_loop=True,
)
LOWEST = PolicyKind(
    "lowest",
    "plays its lowest legal card; passes its highest",
    stateless_play=lowest_play,
    pass_cards=pass_highest_cards,  # the lowest-playing agent keeps its low cards to duck with
)
HIGHEST = PolicyKind(
    "highest",
    "plays its highest legal card; passes its lowest",
    stateless_play=highest_play,
    pass_cards=pass_lowest_cards,
)
