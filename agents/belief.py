"""What the other seats' plays say about their hands: the model that weights sampled worlds.

Design note. ``hearts_sim.engine.inference`` weights the sampler's worlds by the likelihood of
what was observed; the likelihood needs a model of how the other seats play, and models are
policies, so this part lives with the agents. The model asks little of a player, only what
strong and weak players alike do: under a trick that holds points, duck if you can; when void,
dump the queen of spades; and pass the dangerous cards, as the rule agent's pass picks them.
A world in which a seat's observed play breaks one of these is a *surprise*, as is every card
passed to this seat that the rule agent's pass from the giver's dealt hand in that world would
have kept (that dealt hand rests on the sampler's guess of the passes this seat never saw);
each surprise multiplies the world's likelihood by ``1 - trust``:

    P(plays | world) ∝ (1 - trust) ** surprises(world)

A model that asks for a player's exact card (the rule agent's, trusted with some probability)
was measured too: it predicts rule players' hands far better, strong players' worse than this
one (the inference figures in docs/hard.md).

Two learned terms can be added to that log-likelihood, each with its weight: ``plays`` times
the learned play model's log-probability of every card the other seats chose in that world
(``agents.play_model``: what a strong player would have played, not only whether a rule was
broken), and ``shape`` times the learned suit-length tilt (``agents.shape``).

``trust = 0`` with both weights 0 ignores the plays (every world weighs the same: the uniform
sampler's law, which the tests check). The search agents take their worlds from a pool of
``belief`` worlds weighted so (``belief = 0``: straight from the uniform sampler, one world per
draw).
"""

from __future__ import annotations

import numpy as np

from agents.kinds import Parameter
from agents.play_model import new_play_scratch, new_plays_replay, plays_log_likelihood, replay_plays
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULTS
from agents.rule import rule_pass
from agents.search import budget_count
from agents.shape import SHAPE_WEIGHTS, TERMS, new_shape_features, shape_features, shape_log_weight
from hearts_sim._numba import njit
from hearts_sim.core.cards import QS, QS_BIT, SUIT_MASKS, card_bit, popcount, suit_of
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.inference import (
    EVENT_CARD,
    EVENT_LED,
    EVENT_POINTS,
    EVENT_WINNING,
    draw_world,
    held_then,
    new_events,
    new_pool,
    play_events,
    temper,
)
from hearts_sim.engine.sampler import new_sampler_scratch, sample_world_into
from hearts_sim.engine.state import PHASE_PASS

MIN_ESS_FRACTION = 0.1  # the weights are tempered until the pool is worth this share of its size
IGNORE_PLAYS = 0.0  # the ``trust`` of a model under which every world is as likely
MAX_TRUST = 0.999  # a surprise is never impossible: a world keeps some weight
MAX_POOL = 100_000  # worlds in a pool: 133 MB of HAND_STATE rows
MAX_SHAPE = 4.0  # the learned tilt's weight (1: as fitted)
MAX_PLAYS = 4.0  # the learned play model's weight (1: as fitted)

# the search agents' inference knobs, declared once (mc, pimc and ismcts each take all four)
BELIEF_PARAMETERS = (
    Parameter(
        "belief", 0, "worlds in the pool weighted by the plays (0: the uniform sampler)", low=0, high=MAX_POOL
    ),
    Parameter(
        "trust", 0.5, "belief model: chance another seat plays the rule agent's card", low=0, high=MAX_TRUST
    ),
    Parameter(
        "shape",
        0.0,
        "belief model: weight of the learned suit-length tilt (agents.shape)",
        low=0,
        high=MAX_SHAPE,
    ),
    Parameter(
        "plays",
        0.0,
        "belief model: weight of the learned play model's likelihood of the other seats' cards",
        low=0,
        high=MAX_PLAYS,
    ),
)


@njit
def surprises(world, rules: RulesTuple, seat: np.int64, events, count: np.int64) -> np.int64:
    """How many of the other seats' observed plays (``events``, from ``play_events``) and of the
    pass this seat received break the model in ``world``."""
    found = np.int64(0)
    for e in range(count):
        card = np.int64(events[e, EVENT_CARD])
        led = np.int64(events[e, EVENT_LED])
        held = held_then(world, events, e)
        if suit_of(card) == led:
            winning = np.int64(events[e, EVENT_WINNING])
            ducks = held & SUIT_MASKS[led] & (card_bit(winning) - np.uint64(1))
            if card > winning and events[e, EVENT_POINTS] and ducks:
                found += 1  # covered a trick holding points while holding a card to duck with
        elif held & QS_BIT and card != QS:
            found += 1  # void, holding the queen, and kept it
    if world.phase != PHASE_PASS and world.pass_offset != 0 and rules.pass_count > 0:
        n = world.n_players
        giver = (seat - world.pass_offset + n) % n
        expected = rule_pass(RULE_DEFAULTS, world, rules, giver, np.uint64(0))
        found += np.int64(popcount(world.received[seat] & ~expected))  # passed, not as rule would
    return found


@njit
def belief_pool(
    state,
    rules: RulesTuple,
    seat: np.int64,
    rng: np.uint64,
    pool,
    cumulative,
    trust: np.float64,
    shape: np.float64,
    plays: np.float64,
):
    """Fill ``pool`` with worlds from the sampler and ``cumulative`` with their tempered weights
    under the model (the surprises' ``trust``, ``shape`` times the learned suit-length tilt of
    ``agents.shape``, ``plays`` times the play model's log-likelihood of ``agents.play_model``);
    returns (rng, tempering power)."""
    count = np.int64(pool.shape[0])
    plan, card_rows = new_sampler_scratch()
    events = new_events()
    n_events = play_events(state, rules, seat, events) if state.phase != PHASE_PASS else np.int64(0)
    log_weights = np.zeros(count, dtype=np.float64)
    log_surprise = np.log(1.0 - (min(trust, MAX_TRUST) if trust > 0.0 else 0.0))  # NaN: 0
    features = new_shape_features()
    terms = np.empty(TERMS, dtype=np.float64)
    tilt = min(shape, MAX_SHAPE) if state.phase != PHASE_PASS else 0.0
    if tilt > 0.0:
        shape_features(state, rules, seat, features)
    imitation = min(plays, MAX_PLAYS) if state.phase != PHASE_PASS else 0.0
    for i in range(count):
        rng = sample_world_into(state, rules, seat, rng, pool[i], plan, card_rows)
        if log_surprise < 0.0:
            log_weights[i] = log_surprise * surprises(pool[i], rules, seat, events, n_events)
        if tilt > 0.0:
            log_weights[i] += tilt * shape_log_weight(pool[i], features, seat, SHAPE_WEIGHTS, terms)
    if imitation > 0.0:  # the hand replayed once, then each world's hands put into its records
        before, cards, rest = new_plays_replay(state)
        kept = replay_plays(state, pool[0], rules, seat, before, cards, rest)
        rows, logits = new_play_scratch()
        for i in range(count):
            log_weights[i] += imitation * plays_log_likelihood(
                pool[i], rules, before, cards, rest, kept, rows, logits
            )
    power = temper(log_weights, count, MIN_ESS_FRACTION * count, cumulative)
    return rng, power


@njit
def weighted_pool(
    state,
    rules: RulesTuple,
    seat: np.int64,
    rng: np.uint64,
    belief: np.float64,
    trust: np.float64,
    shape: np.float64,
    plays: np.float64,
):
    """A search decision's worlds: (rng, pool, cumulative weights, pool size) for ``draw_world``.
    The size is ``belief`` clamped to ``0 .. MAX_POOL``, and 0 (draw from the uniform sampler)
    before anything was seen: no card played and no pass received."""
    size = np.int64(0)
    if state.n_played > 0 or state.pass_offset != 0:
        size = budget_count(belief, np.int64(0), np.int64(MAX_POOL))
    pool, cumulative = new_pool(max(size, np.int64(1)))
    if size > 0:
        rng, _ = belief_pool(state, rules, seat, rng, pool, cumulative, trust, shape, plays)
    return rng, pool, cumulative, size


@njit
def next_world(
    state,
    rules: RulesTuple,
    seat: np.int64,
    rng: np.uint64,
    pool,
    cumulative,
    size: np.int64,
    world,
    plan,
    card_rows,
) -> np.uint64:
    """Fill ``world`` with the decision's next world: drawn by weight from the pool of
    ``weighted_pool`` when it has one (``size`` > 0), else fresh from the uniform sampler
    (``plan``, ``card_rows``: scratch from ``new_sampler_scratch``, allocated once per decision)."""
    if size > 0:
        return draw_world(pool, cumulative, size, rng, world)
    return sample_world_into(state, rules, seat, rng, world, plan, card_rows)


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
