"""What the other seats' plays say about their hands: the model that weights sampled worlds.

Design note. ``hearts_sim.engine.inference`` weights the sampler's worlds by the likelihood
of what was observed; the likelihood needs a model of how the other seats play, and models are
policies, so this part lives with the agents. The model is the rule agent (its defaults)
trusted with probability ``trust``, a uniformly random legal card otherwise:

    P(card | world) = trust * [card == rule's card in that world] + (1 - trust) / legal cards

evaluated at every play another seat made with a choice, on the world rewound to the start of
play (``engine.inference.rewind``). The pass this seat received says something too: each
passed card is the rule agent's choice from the giver's dealt hand in that world with
probability ``trust``, or any card of the hand (the sampler fills the passes the seat never
saw with a guess, so outside 4-player ``across`` the giver's dealt hand is approximate).

``trust = 0`` is the random-player model; ``belief_pool`` with ``trust < 0`` gives every world
the same weight (a model that ignores the plays: the uniform sampler's law, which the tests
check). The search agents take their worlds from a pool of ``belief`` worlds weighted so
(``belief = 0``: straight from the uniform sampler, one world per draw, as before).
"""

from __future__ import annotations

import numpy as np

from agents.rule import DEFAULT_PARAMS as RULE_DEFAULTS
from agents.rule import rule_pass, rule_play
from hearts_sim._numba import njit
from hearts_sim.core.cards import card_bit, popcount
from hearts_sim.core.rules import MAX_PLAYERS, RulesTuple
from hearts_sim.engine.hand import legal_moves, play_card
from hearts_sim.engine.inference import rewind, temper
from hearts_sim.engine.sampler import new_sampler_scratch, sample_world_into
from hearts_sim.engine.state import HAND_STATE, PHASE_PASS

MIN_ESS_FRACTION = 0.1  # the weights are tempered until the pool is worth this share of its size
IGNORE_PLAYS = -1.0  # ``trust`` of a model whose likelihood is the same for every world


@njit
def log_likelihood(world, rules: RulesTuple, seat: np.int64, trust: np.float64, scratch, played_by):
    """Log-probability of the other seats' plays (and of the pass ``seat`` received) in ``world``
    under the rule-with-noise model (``scratch``: a record; ``played_by``: zeroed seat rows)."""
    n = world.n_players
    total = 0.0
    if world.pass_offset != 0 and rules.pass_count > 0:
        giver = (seat - world.pass_offset + n) % n
        predicted = rule_pass(RULE_DEFAULTS, world, rules, giver, np.uint64(0))
        size = np.float64(popcount(world.dealt[giver]))
        passed = world.passed[giver]
        while passed:
            bit = passed & (~passed + np.uint64(1))
            passed ^= bit
            hit = 1.0 if predicted & bit else 0.0
            total += np.log(trust * hit + (1.0 - trust) / size)
    rewind(world, rules, scratch, played_by)
    for i in range(world.n_played):
        card = world.history[i]
        mover = scratch.to_play
        if mover != seat:
            legal = legal_moves(scratch, rules)
            count = np.float64(popcount(legal))
            if count > 1:
                predicted = rule_play(RULE_DEFAULTS, scratch, rules, mover, legal, np.uint64(0))
                hit = 1.0 if predicted == card else 0.0
                total += np.log(trust * hit + (1.0 - trust) / count)
        play_card(scratch, rules, card)
    return total


@njit
def belief_pool(
    state, rules: RulesTuple, seat: np.int64, rng: np.uint64, pool, cumulative, trust: np.float64
):
    """Fill ``pool`` with worlds from the sampler and ``cumulative`` with their tempered weights
    under the model (``trust < 0``: equal weights); returns (rng, tempering power)."""
    count = np.int64(pool.shape[0])
    plan, card_rows = new_sampler_scratch()
    scratch = np.empty(1, dtype=HAND_STATE)
    played_by = np.zeros(MAX_PLAYERS, dtype=np.uint64)
    log_weights = np.zeros(count, dtype=np.float64)
    informative = trust >= 0.0 and state.phase != PHASE_PASS
    for i in range(count):
        rng = sample_world_into(state, rules, seat, rng, pool[i], plan, card_rows)
        if informative:
            played_by[:] = 0
            log_weights[i] = log_likelihood(pool[i], rules, seat, trust, scratch[0], played_by)
    power = temper(log_weights, count, MIN_ESS_FRACTION * count, cumulative)
    return rng, power


@njit
def marginal_owners(pool, cumulative, count: np.int64, n: np.int64, out) -> None:
    """``out[slot, card]``: the pool's weighted probability that ``card`` lies in seat ``slot``'s
    hand (slot ``n``: the kitty), for measuring how well the weights predict."""
    out[:] = 0.0
    previous = 0.0
    for i in range(count):
        weight = cumulative[i] - previous
        previous = cumulative[i]
        for s in range(n):
            hand = pool[i].hands[s]
            for card in range(52):
                if hand & card_bit(card):
                    out[s, card] += weight
        kitty = pool[i].kitty
        for card in range(52):
            if kitty & card_bit(card):
                out[n, card] += weight
