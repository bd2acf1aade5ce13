"""``mc``: flat Monte Carlo: every legal card (or candidate pass) scored by rollouts in sampled worlds.

Design note. For a play, ``samples`` worlds are drawn with the engine's determinization
sampler (the hidden cards re-dealt consistently with the seat's information set); in
each world every legal card is played and the hand is rolled out to the end with the
``rollout`` policy in every seat. A card's value is the seat's mean final hand score
(moons, the JD and every bonus included, since the engine scores the hand); the lowest
mean wins. All cards share the same worlds and rollout streams (common random
numbers), so the comparison between cards is far less noisy than their values.

A pass is chosen the same way among a few heuristic candidates (the rule agent's pass
under several parameter settings, and the highest cards), each scored from
``pass_samples`` deals of the unseen cards in which the other seats pass by the
rollout policy; a candidate must beat the rule agent's own pass by a margin.

With ``belief`` > 0 a play's worlds are drawn from a pool of that many sampled worlds
weighted by how likely the other seats' plays are in each (``agents.belief``).

Rollouts: the playout policies of ``agents.search`` (shared with ``pimc`` and ``ismcts``):
``rule`` (the heuristic player, the default: far more realistic), ``greedy`` (a cheap
heuristic), ``guard`` and ``race`` (greedy playouts that defend against a moon, or race for
one) or ``random``. A random rollout of a card is played by ``lean_random_value``,
which tracks only hands, points and tricks (several times cheaper than the engine) and
draws the same stream as the shared playout, hence scores the same. In the pass phase the
other seats pass by the rule agent (``rule``), their highest cards (``greedy``, ``guard``,
``race``) or at random (``random``).
"""

from __future__ import annotations

import numpy as np

from agents.belief import BELIEF_PARAMETERS, next_world, weighted_pool
from agents.kinds import Parameter, Params, PolicyKind, param_indices
from agents.passing import MAX_RULE_CANDIDATES, rule_candidates
from agents.search import (
    MAX_MS,
    MAX_SAMPLES,
    ROLLOUT_RANDOM,
    ROLLOUT_RULE,
    ROLLOUTS,
    SCRATCH_WORLDS,
    TRIAL,
    WORLD,
    budget_count,
    budget_deadline,
    card_count,
    lowest_mean_card,
    monotonic_ns,
    new_worlds,
    pass_and_play_out,
    play_out,
)
from hearts_sim._numba import njit
from hearts_sim.core.cards import (
    JD_BIT,
    N_CARDS,
    SUIT_MASKS,
    card_bit,
    highest_card,
    lowest_card,
    select_bit,
    suit_of,
)
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.hand import (
    breaks_hearts,
    card_points,
    legal_mask,
    moon_shooter,
    pass_cards,
    play_card,
    seat_score,
)
from hearts_sim.engine.rng import next_u64, random_below
from hearts_sim.engine.sampler import copy_state, new_sampler_scratch, sample_world_into
from hearts_sim.engine.state import NO_SEAT, NO_SUIT

PARAMETERS = (
    Parameter(
        "samples",
        50,
        "worlds sampled per play decision; every legal card is rolled out in each",
        low=1,
        high=MAX_SAMPLES,
    ),
    Parameter("rollout", ROLLOUT_RULE, "policy of every seat in the rollouts", ROLLOUTS),
    Parameter("pass_samples", 30, "deals sampled per candidate pass", low=2, high=MAX_SAMPLES),
    Parameter(
        "ms",
        0.0,
        "ms per play decision (0: use samples; a timed search is not reproducible)",
        low=0,
        high=MAX_MS,
    ),
    *BELIEF_PARAMETERS,
)
P = param_indices(PARAMETERS)

PASS_MARGIN_Z = 1.0  # standard errors a candidate pass must gain over the rule pass


# ---------------------------------------------------------------- rollouts
@njit
def lean_random_value(world, rules: RulesTuple, card: np.int64, me: np.int64, rng: np.uint64, scratch):
    """``me``'s final score after ``card`` then uniformly random legal cards, without touching
    ``world``: (rng, score). The same draws as the shared random playout (``play_out`` with
    ``ROLLOUT_RANDOM``) on a copy, hence the same result, but only hands, points and tricks
    are tracked (``scratch``: a record for them). Used after the hand's first lead (the
    only trick-0 lead is ``card`` itself)."""
    n = world.n_players
    jd_taker = np.int64(NO_SEAT)
    for s in range(n):
        scratch.hands[s] = world.hands[s]
        scratch.points[s] = world.points[s]
        scratch.tricks_won[s] = world.tricks_won[s]
        if world.taken[s] & JD_BIT:
            jd_taker = np.int64(s)
    trick = world.trick_number
    in_trick = world.n_in_trick
    trick_mask = world.trick_mask
    broken = world.hearts_broken
    led = np.int64(NO_SUIT)
    winner = np.int64(-1)
    winning = np.int64(-1)
    if in_trick > 0:
        led = suit_of(world.trick_cards[world.leader])
        winning = highest_card(trick_mask & SUIT_MASKS[led])
        for s in range(n):
            if world.trick_cards[s] == winning:
                winner = np.int64(s)
    seat = world.to_play
    while True:
        hand = scratch.hands[seat]
        if card < 0:  # the first lead is never drawn here: it is ``card`` itself
            legal = legal_mask(hand, led, trick == 0, broken, world.first_lead_card, rules)
            rng, k = random_below(rng, card_count(legal))
            card = select_bit(legal, k)
        bit = card_bit(card)
        suit = suit_of(card)
        scratch.hands[seat] = hand ^ bit
        trick_mask |= bit
        if in_trick == 0:
            led, winner, winning = suit, seat, card
        elif suit == led and card > winning:
            winner, winning = seat, card
        broken |= breaks_hearts(bit, rules)
        card = np.int64(-1)
        in_trick += 1
        if in_trick < n:
            seat = seat + 1 if seat + 1 < n else 0
            continue
        if trick == 0:
            trick_mask |= world.kitty
        scratch.points[winner] += card_points(trick_mask, rules)
        scratch.tricks_won[winner] += 1
        if trick_mask & JD_BIT:
            jd_taker = winner
        trick += 1
        in_trick = 0
        led = np.int64(NO_SUIT)
        trick_mask = np.uint64(0)
        seat = winner
        if scratch.hands[winner] == np.uint64(0):
            break
    shooter = moon_shooter(scratch.points, n, rules)
    return rng, seat_score(me, scratch.points[me], scratch.tricks_won[me], shooter, jd_taker, rules)


# ---------------------------------------------------------------- play
@njit
def mc_play(
    params: Params,
    state,
    rules: RulesTuple,
    seat: np.int64,
    legal: np.uint64,
    seed: np.uint64,
    values,
    weights,
) -> np.int64:
    """The legal card (of two or more) with the lowest mean final score over sampled worlds and
    rollouts; ``values[card]`` every legal card's mean for ``seat`` over the sampled worlds (the
    same worlds and rollout streams for every card), ``weights[card]`` their number.

    With ``ms`` > 0 it samples worlds until the time is up (at least one) instead."""
    deadline = budget_deadline(np.float64(params[P.ms]))
    samples = budget_count(params[P.samples], 1, MAX_SAMPLES) if deadline == 0 else np.int64(1) << 62
    kind = np.int64(params[P.rollout])
    worlds = new_worlds(SCRATCH_WORLDS)
    totals = np.zeros(N_CARDS, dtype=np.float64)
    plan, card_rows = new_sampler_scratch()
    rng = seed
    rng, pool, cumulative, pool_size = weighted_pool(
        state, rules, seat, rng, params[P.belief], params[P.trust], params[P.shape], params[P.plays]
    )
    done = np.int64(0)
    for sample in range(samples):
        if deadline > 0 and sample > 0 and monotonic_ns() >= deadline:
            break
        done += 1
        rng = next_world(state, rules, seat, rng, pool, cumulative, pool_size, worlds[WORLD], plan, card_rows)
        rng, stream = next_u64(rng)  # one rollout stream per world, shared by every card
        cards = legal
        while cards:
            card = lowest_card(cards)
            cards &= cards - np.uint64(1)
            if kind == ROLLOUT_RANDOM:
                _, value = lean_random_value(worlds[WORLD], rules, card, seat, stream, worlds[TRIAL])
                totals[card] += value
            else:
                copy_state(worlds[WORLD], worlds[TRIAL])
                play_card(worlds[TRIAL], rules, card)
                play_out(worlds[TRIAL], rules, stream, kind, 0.0)
                totals[card] += worlds[TRIAL].scores[seat]
    cards = legal
    while cards:
        card = lowest_card(cards)
        cards &= cards - np.uint64(1)
        values[card] = totals[card] / np.float64(done)
        weights[card] = done
    return lowest_mean_card(legal, values, weights)


# ---------------------------------------------------------------- pass
@njit
def mc_pass(
    params: Params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64, candidates, values, weights
) -> np.uint64:
    """The heuristic candidate pass with the lowest mean final score over sampled deals; the
    candidates in ``candidates``, each one's mean final score for ``seat`` over the deals in
    ``values``, their number in ``weights``.

    Candidate 0 is the rule agent's own pass; another replaces it only when its mean gain,
    paired over the same deals and rollout streams, exceeds ``PASS_MARGIN_Z`` standard
    errors (the minimum of several noisy means is biased towards luck)."""
    count = rule_candidates(state, rules, seat, seed, candidates)
    if count == 1:
        return candidates[0]
    samples = budget_count(params[P.pass_samples], 2, MAX_SAMPLES)
    kind = np.int64(params[P.rollout])
    worlds = new_worlds(SCRATCH_WORLDS)
    gains = np.zeros(MAX_RULE_CANDIDATES, dtype=np.float64)  # sum of (score of 0 - score of i)
    squares = np.zeros(MAX_RULE_CANDIDATES, dtype=np.float64)
    totals = np.zeros(MAX_RULE_CANDIDATES, dtype=np.float64)
    plan, card_rows = new_sampler_scratch()
    rng = seed
    for _ in range(samples):
        rng = sample_world_into(state, rules, seat, rng, worlds[WORLD], plan, card_rows)
        rng, stream = next_u64(rng)
        reference = 0.0
        for i in range(count):
            trial = worlds[TRIAL]
            copy_state(worlds[WORLD], trial)
            if not (trial.passes_made >> seat) & 1:
                pass_cards(trial, rules, seat, candidates[i])
            pass_and_play_out(trial, rules, kind, kind, stream)
            if i == 0:
                reference = np.float64(trial.scores[seat])
            gain = reference - trial.scores[seat]
            gains[i] += gain
            squares[i] += gain * gain
            totals[i] += trial.scores[seat]
    best = 0
    best_gain = 0.0
    for i in range(1, count):
        mean = gains[i] / samples
        error = np.sqrt(max(squares[i] / samples - mean * mean, 0.0) / (samples - 1))
        if mean > best_gain and mean > PASS_MARGIN_Z * error:
            best, best_gain = i, mean
    for i in range(count):
        values[i] = totals[i] / samples
        weights[i] = samples
    return candidates[best]


KIND = PolicyKind(
    "mc",
    "flat Monte Carlo: every legal card (or candidate pass) scored by rollouts in sampled worlds",
    PARAMETERS,
    scored_play=mc_play,
    scored_pass=mc_pass,
    searches=True,
)
DEFAULT_PARAMS = KIND.default_params()
