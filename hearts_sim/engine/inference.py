"""Inference about hidden hands: worlds from the sampler, weighted by what the plays say.

Design note. The determinization sampler (``engine.sampler``) deals the unseen cards uniformly
among the deals consistent with the hard facts (hand sizes, voids, passes, the kitty). Plays say
more: a seat that covered a trick holding points probably had no card to duck under it. A
*weighted* sampler draws a pool of worlds from the uniform sampler and weights each by the
likelihood of the observed plays under a model of the other players: sampling-importance-
resampling, whose draws approach the model's posterior as the pool grows. A search then takes
its worlds from the pool in proportion to the weights (``draw_world``).

What lives here is model-free. ``play_events`` lists, once per decision, the public facts about
every card another seat played to a trick already led (who, what, the suit led, the card then
winning, whether the trick held points, and the cards that seat played from then on), so a model
can judge a world's hand at each of those moments in a few bit operations
(``held_then``: the cards the seat held then, in that world). The models are policies, which
live in ``agents`` (see ``agents.belief``). ``temper`` turns log-likelihoods into cumulative
weights; a model is never trusted blindly: the weights are tempered (raised to the largest
power <= 1) until the pool keeps an effective sample size of ``min_ess`` worlds, so one lucky
world cannot stand for the whole information set and a wrong model degrades towards the
uniform sampler rather than past it. Equal log-likelihoods (a model that ignores the plays)
give equal weights: the draws are then exactly the uniform sampler's law.
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.cards import card_bit, suit_of
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.hand import next_turn, point_cards
from hearts_sim.engine.rng import random_unit
from hearts_sim.engine.sampler import copy_state
from hearts_sim.engine.state import HAND_STATE, MAX_CARDS_PLAYED

_ZERO = np.uint64(0)
TEMPER_STEPS = 12  # bisection steps on the tempering power (2**-12: finer than it matters)


@njit
def new_pool(count: np.int64):
    """Room for ``count`` worlds and their cumulative weights (allocate once per decision)."""
    return np.empty(count, dtype=HAND_STATE), np.empty(count, dtype=np.float64)


# One row per play event (``play_events``); every field is public.
EVENT_MOVER, EVENT_CARD, EVENT_LED, EVENT_WINNING, EVENT_POINTS, EVENT_LATER = range(6)
EVENT_FIELDS = 6


@njit
def new_events():
    """Room for the play events of one decision (at most every card of a hand)."""
    return np.zeros((MAX_CARDS_PLAYED, EVENT_FIELDS), dtype=np.uint64)


@njit
def play_events(state, rules: RulesTuple, seat: np.int64, events) -> np.int64:
    """The public facts about every card another seat played to a trick already led, into
    ``events`` rows (mover, card, suit led, card winning the trick before it, 1 if the trick
    held point cards then, the cards the mover played from that card on); returns how many."""
    points = point_cards(rules)
    count = np.int64(0)
    trick = 0
    player = state.trick_leaders[0]
    position = 0
    led = np.int64(-1)
    winning = np.int64(-1)
    in_trick = _ZERO
    for i in range(state.n_played):
        card = state.history[i]
        if position == 0:
            led = suit_of(card)
            winning = card
            in_trick = _ZERO
        elif player != seat:
            events[count, EVENT_MOVER] = np.uint64(player)
            events[count, EVENT_CARD] = np.uint64(card)
            events[count, EVENT_LED] = np.uint64(led)
            events[count, EVENT_WINNING] = np.uint64(winning)
            events[count, EVENT_POINTS] = np.uint64(1) if in_trick & points else _ZERO
            events[count, EVENT_LATER] = _ZERO
            count += 1
        for e in range(count):  # the card joins its player's later plays of every earlier event
            if events[e, EVENT_MOVER] == np.uint64(player):
                events[e, EVENT_LATER] |= card_bit(card)
        if position > 0 and suit_of(card) == led and card > winning:
            winning = card
        in_trick |= card_bit(card)
        player, position, trick = next_turn(state, i, player, position, trick)
    return count


@njit
def held_then(world, events, e: np.int64) -> np.uint64:
    """The cards event ``e``'s player held when it played, in ``world``."""
    return world.hands[np.int64(events[e, EVENT_MOVER])] | events[e, EVENT_LATER]


@njit
def effective_size(log_weights, count: np.int64, power: np.float64) -> np.float64:
    """Kish's effective sample size of the weights ``exp(power * log_weights)``."""
    top = log_weights[0]
    for i in range(1, count):
        top = max(top, log_weights[i])
    total = 0.0
    squares = 0.0
    for i in range(count):
        w = np.exp(power * (log_weights[i] - top))
        total += w
        squares += w * w
    return total * total / squares


@njit
def temper(log_weights, count: np.int64, min_ess: np.float64, cumulative) -> np.float64:
    """Cumulative normalised weights of ``exp(power * log_weights)`` into ``cumulative``, with the
    largest power in [0, 1] that keeps the effective sample size at least ``min_ess``
    (bisection); returns the power."""
    power = 1.0
    if effective_size(log_weights, count, 1.0) < min_ess:
        low, high = 0.0, 1.0
        for _ in range(TEMPER_STEPS):
            middle = 0.5 * (low + high)
            if effective_size(log_weights, count, middle) >= min_ess:
                low = middle
            else:
                high = middle
        power = low
    top = log_weights[0]
    for i in range(1, count):
        top = max(top, log_weights[i])
    running = 0.0
    for i in range(count):
        running += np.exp(power * (log_weights[i] - top))
        cumulative[i] = running
    for i in range(count):
        cumulative[i] /= running
    return power


@njit
def draw_index(cumulative, count: np.int64, rng: np.uint64):
    """(rng, i): index ``i`` drawn with probability ``cumulative[i] - cumulative[i - 1]``."""
    rng, u = random_unit(rng)
    low, high = np.int64(0), count - 1
    while low < high:  # the first index whose cumulative weight exceeds u
        middle = (low + high) // 2
        if cumulative[middle] > u:
            high = middle
        else:
            low = middle + 1
    return rng, low


@njit
def draw_world(pool, cumulative, count: np.int64, rng: np.uint64, out) -> np.uint64:
    """Copy a world of the pool, drawn by weight, into ``out``; returns the rng."""
    rng, i = draw_index(cumulative, count, rng)
    copy_state(pool[i], out)
    return rng
