"""Inference about hidden hands: worlds from the sampler, weighted by what the plays say.

Design note. The determinization sampler (``engine.sampler``) deals the unseen cards uniformly
among the deals consistent with the hard facts (hand sizes, voids, passes, the kitty). Plays say
more: a seat that ducked under the king of spades probably holds no higher spade. A *weighted*
sampler draws a pool of worlds from the uniform sampler and weights each by the likelihood of
the observed plays (and the pass this seat received) under a model of the other players:
sampling-importance-resampling, whose draws approach the posterior as the pool grows. A search
then takes its worlds from the pool in proportion to the weights (``draw_world``).

What lives here is model-free: ``rewind`` rebuilds a world as it stood when play began, so a
model can be asked, card by card, how likely each observed play was (the models are policies,
which live in ``agents``: see ``agents.belief``); ``temper`` turns log-likelihoods into
cumulative weights. A model is never trusted blindly: the weights are tempered (raised to
the largest power <= 1) until the pool keeps an effective sample size of ``min_ess`` worlds,
so one lucky world cannot stand for the whole information set and a wrong model degrades
towards the uniform sampler rather than past it. Equal log-likelihoods (a model that ignores
the plays) give equal weights: the draws are then exactly the uniform sampler's law.
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.rules import MAX_PLAYERS, RulesTuple
from hearts_sim.engine.hand import start_hand
from hearts_sim.engine.rng import random_unit
from hearts_sim.engine.sampler import cards_played_by, copy_state
from hearts_sim.engine.state import HAND_STATE

TEMPER_STEPS = 12  # bisection steps on the tempering power (2**-12: finer than it matters)


@njit
def new_pool(count: np.int64):
    """Room for ``count`` worlds and their cumulative weights (allocate once per decision)."""
    return np.empty(count, dtype=HAND_STATE), np.empty(count, dtype=np.float64)


@njit
def rewind(world, rules: RulesTuple, out, played_by) -> None:
    """``out``: ``world`` as it stood when play began (after the passes), ready to replay
    ``world.history`` with ``play_card`` (``played_by``: a zeroed scratch row per seat).

    Every seat holds its cards then (held now plus played since); deals, passes, the kitty,
    the dealer and the game scores are the world's."""
    copy_state(world, out)
    cards_played_by(world, played_by)
    for s in range(world.n_players):
        out.hands[s] = world.hands[s] | played_by[s]
    start_hand(out, rules, np.int64(0), world.dealer, world.hand_seed)
    for s in range(MAX_PLAYERS):  # start_hand took the held cards for the deals: restore them
        out.dealt[s] = world.dealt[s]
        out.passed[s] = world.passed[s]
        out.received[s] = world.received[s]
        out.seat_seeds[s] = world.seat_seeds[s]
    out.pass_offset = world.pass_offset
    out.passes_made = world.passes_made


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
