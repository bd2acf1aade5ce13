"""Passing for the search agents: candidate passes, and the searched pass that rolls them out.

Design note. A pass is chosen once per hand from a small set: the dealt hand has 286 three-card
subsets (680 with 17 cards), too many to roll out, and most are plainly bad (passing low
clubs while keeping the bare queen). So candidates come from two heuristics:

* the rule agent's pass under several parameter settings (``PASS_VARIANTS``: its own first)
  and the highest cards (``mc``'s candidates), and the lowest cards (a hand going for the moon);
* every subset ranked by an additive danger score (``subset_danger``: high cards, hearts, an
  unguarded QS or its guards, suits the pass voids), the best ``MAX_HEURISTIC`` kept.

Every subset as a candidate (286, with twice the rollouts) gained nothing on these at most 33:
+0.03 [-0.09, +0.15] points per hand over 400 deals passed to a neighbour at 2,000 iterations of
play (docs/hard_experiments.md): where a wider search differed, it often picked a pass the
greedy playouts favour among many, low cards passed and high ones kept.

``searched_pass`` scores the candidates by sequential halving (Karnin, Koren and Somekh 2013,
best-arm identification for a fixed budget): each round samples fresh deals of the unseen
cards (the engine's one sampler), lets the other seats pass by the rule agent's pass (the
model of how they pass), plays every surviving candidate's hand out with the searching agent's
own playout policy (its ``rollout``, greedy for ``hard``) in every seat, and keeps the better
half; the rounds share the ``rollouts`` budget equally. All candidates of a round see the same
deals and playout streams (common random numbers), so what separates them is the pass, not the
deal. The playouts were the rule agent's until 2026-12-03: the rule agent commits to moons its
greedy opponents never stop, so passes that keep points looked good, and the search kept the
queen of spades and high cards it should have passed. With greedy playouts, in duplicate at
2,000 iterations of play against the same search passing by rule playouts (200 deals each):
-0.32 [-0.75, +0.11] points per hand passing left, -1.15 [-1.53, -0.77] passing right.

Only to a neighbour. Passing across, the searched pass lost to the rule agent's pass in all
three measurements with play fixed to ``hard`` (points per hand, searched minus rule pass, 95%
over deals): the pass study +0.68 +- 1.58 (7 across deals in 24 seatings), ``hard`` against
``hard`` with the rule pass +1.49 +- 1.46 (17 across deals in 14 seatings), the previous
``hard`` with and without a searched pass +0.44 +- 1.40 (13 deals); pooled by inverse
variance +0.87 +- 0.85. Passing left (-1.49, -0.18, -0.51) and right (-2.14, -0.65, +0.20) it
mostly gained. Those were rule playouts; with greedy ones the searched pass across is no longer
worse, and not measurably better: -0.14 [-0.54, +0.26] (200 across deals, the screen above);
nor with ``hard``'s play since it took the learned play model: +0.16 [-0.26, +0.58] against
``hard`` over 120 deals all passed across (2026-12-04). Why across differs is not established
(there the seat that receives the pass is also the one that passes to us). So across, the
search agents still pass like ``rule``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents import rule
from agents.baseline import pass_extremes
from agents.kinds import MAX_PASS_CANDIDATES, Parameter, Params, param_indices
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULTS
from agents.rule import rule_pass
from agents.search import (
    MAX_ITERATIONS,
    ROLLOUT_RULE,
    SCRATCH_WORLDS,
    TRIAL,
    WORLD,
    budget_count,
    new_worlds,
    pass_and_play_out,
)
from hearts_sim._numba import njit
from hearts_sim.core.cards import (
    AS,
    HEARTS,
    JD,
    KS,
    N_CARDS,
    N_SUITS,
    QS,
    QUEEN,
    SPADES,
    SUIT_MASKS,
    card_bit,
    lowest_card,
    popcount,
    rank_of,
    select_card_bit,
    suit_of,
)
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.hand import pass_cards
from hearts_sim.engine.rng import next_u64
from hearts_sim.engine.sampler import copy_state, new_sampler_scratch, sample_world_into

# pimc's and ismcts's searched pass, declared once
PASS_ROLLOUTS = Parameter(
    "pass_rollouts",
    0,
    "searched pass to a neighbour: playouts (its rollout policy) over all candidates (0, across: rule pass)",
    low=0,
    high=MAX_ITERATIONS,
)

MAX_RULE_CANDIDATES = 8  # distinct passes of the rule variants and the highest cards
# best-ranked subsets added by ``subset_danger``, after those and the lowest cards (24)
MAX_HEURISTIC = MAX_PASS_CANDIDATES - MAX_RULE_CANDIDATES - 1
# subset_danger's weights, in ranks (the rule agent's pass uses the same scale)
HEART_EXTRA = 1.0  # a heart over another card of equal rank
UNGUARDED_QS = 30.0  # the queen with fewer than SPADE_GUARDS low spades goes first
UNGUARDED_HIGH_SPADE = 8.0  # AS, KS without the queen and without guards: it may be dumped on them
KEPT_SPADE = -6.0  # guarded high spades and the low spades that guard them are worth keeping
VOID_BONUS = float(RULE_DEFAULTS[rule.P.void_bonus])  # a non-heart suit the pass empties (rule's)
JD_KEEP = -100.0  # Omnibus: the jack of diamonds is worth keeping
SPADE_GUARDS = int(RULE_DEFAULTS[rule.P.spade_guard])  # the rule agent's: its pass and these agree


def _rule_row(**values: float) -> Params:
    """The rule agent's parameter row with some values changed by name."""
    row = list(RULE_DEFAULTS)
    for name, value in values.items():
        row[getattr(rule.P, name)] = value
    return tuple(row)


# The rule agent's pass under several settings (the first is its own).
PASS_VARIANTS = (
    _rule_row(),
    _rule_row(void_bonus=0.0),
    _rule_row(void_bonus=12.0),
    _rule_row(heart_bonus=6.0),
    _rule_row(spade_guard=0.0),
    _rule_row(spade_guard=6.0),
)


@njit
def _add_candidate(cards: np.uint64, out, count: np.int64, limit: np.int64) -> np.int64:
    """Append ``cards`` to ``out[:count]`` unless it is there or ``limit`` is reached; the new count."""
    for j in range(count):
        if out[j] == cards:
            return count
    if count < limit:
        out[count] = cards
        count += 1
    return count


@njit
def rule_candidates(state, rules: RulesTuple, seat: np.int64, seed: np.uint64, out) -> np.int64:
    """Distinct passes of the rule variants (the rule agent's own first), then the highest cards,
    into ``out``; returns how many (at most ``MAX_RULE_CANDIDATES``)."""
    count = np.int64(0)
    for i in range(len(PASS_VARIANTS)):
        cards = rule_pass(PASS_VARIANTS[i], state, rules, seat, seed)
        count = _add_candidate(cards, out, count, MAX_RULE_CANDIDATES)
    return _add_candidate(pass_extremes(state.dealt[seat], rules, True), out, count, MAX_RULE_CANDIDATES)


@njit
def card_dangers(hand: np.uint64, rules: RulesTuple, out) -> None:
    """``out[card]``: how much passing each card of ``hand`` is worth on its own (see the weights)."""
    low_spades = np.int64(popcount(hand & SUIT_MASKS[SPADES] & (card_bit(QS) - np.uint64(1))))
    guarded = low_spades >= SPADE_GUARDS
    has_queen = hand & card_bit(QS) != np.uint64(0)
    for card in range(N_CARDS):
        if not hand & card_bit(card):
            continue
        danger = float(rank_of(card))
        suit = suit_of(card)
        if suit == HEARTS:
            danger += HEART_EXTRA
        elif suit == SPADES:
            if card == QS:
                danger = UNGUARDED_QS if not guarded else QUEEN + KEPT_SPADE
            elif card in (KS, AS):
                if not guarded and not has_queen:
                    danger += UNGUARDED_HIGH_SPADE
                else:
                    danger += KEPT_SPADE
            else:
                danger += KEPT_SPADE
        if card == JD and rules.jd_bonus != 0:
            danger = JD_KEEP
        out[card] = danger


@njit
def subset_danger(hand: np.uint64, cards: np.uint64, dangers) -> float:
    """The additive score of passing ``cards`` from ``hand``: the cards' dangers, plus
    ``VOID_BONUS`` per non-heart suit the pass empties."""
    score = 0.0
    rest = cards
    while rest:
        score += dangers[lowest_card(rest)]
        rest &= rest - np.uint64(1)  # drop the lowest card
    for suit in range(N_SUITS):
        held = hand & SUIT_MASKS[suit]
        if suit != HEARTS and held and held & ~cards == np.uint64(0):
            score += VOID_BONUS
    return score


@njit
def pass_candidates(state, rules: RulesTuple, seat: np.int64, seed: np.uint64, out) -> np.int64:
    """The rule candidates, the lowest cards, then the ``MAX_HEURISTIC`` subsets of the dealt hand
    with the highest ``subset_danger`` (every ``pass_count``-subset is scored); returns how many
    are in ``out``."""
    count = rule_candidates(state, rules, seat, seed, out)
    hand = state.dealt[seat]
    count = _add_candidate(pass_extremes(hand, rules, False), out, count, MAX_PASS_CANDIDATES)
    size = np.int64(popcount(hand))
    k = rules.pass_count
    dangers = np.zeros(N_CARDS, dtype=np.float64)
    card_dangers(hand, rules, dangers)
    best = np.zeros(MAX_HEURISTIC, dtype=np.uint64)
    best_score = np.full(MAX_HEURISTIC, -np.inf)
    # every k-subset of the hand's positions, as a k-bit mask over 0..size-1 (Gosper's hack)
    positions = (np.int64(1) << k) - 1
    while positions < (np.int64(1) << size):
        cards = np.uint64(0)
        rest = positions
        while rest:
            low = rest & -rest
            cards |= select_card_bit(hand, np.int64(popcount(np.uint64(low - 1))))
            rest ^= low
        score = subset_danger(hand, cards, dangers)
        if score > best_score[MAX_HEURISTIC - 1]:  # insertion into the sorted best list
            i = MAX_HEURISTIC - 1
            while i > 0 and best_score[i - 1] < score:
                best_score[i] = best_score[i - 1]
                best[i] = best[i - 1]
                i -= 1
            best_score[i] = score
            best[i] = cards
        low = positions & -positions
        ripple = positions + low
        positions = (((ripple ^ positions) >> 2) // low) | ripple
    for i in range(MAX_HEURISTIC):
        if best_score[i] > -np.inf:
            count = _add_candidate(best[i], out, count, MAX_PASS_CANDIDATES)
    return count


@njit
def passes_to_neighbour(state) -> bool:
    """Whether this hand's pass goes to the seat on the left or right (not across)."""
    return state.pass_offset == 1 or state.pass_offset == state.n_players - 1


@njit
def searched_pass(
    state,
    rules: RulesTuple,
    seat: np.int64,
    seed: np.uint64,
    rollouts: np.int64,
    playout: np.int64,
    cards,
    values,
    weights,
) -> np.uint64:
    """The candidate pass with the lowest mean final score of ``seat`` after sequential halving
    with ``rollouts`` playouts in all, each played out by the playout policy ``playout``
    (ROLLOUT_*, the searching agent's own) once the other seats have passed like the rule agent;
    the rule agent's pass with no rollouts, and across (see the module's note). The candidates
    go in ``cards``, each one's mean score over its playouts in ``values``, their number in
    ``weights`` (a candidate halved out early has fewer): the ``pass_stats`` arrays, which stay
    empty when the pass is the rule agent's without a search."""
    if rollouts <= 0 or not passes_to_neighbour(state):
        return rule_pass(PASS_VARIANTS[0], state, rules, seat, seed)
    count = pass_candidates(state, rules, seat, seed, cards)
    if count == 1:
        return cards[0]
    totals = np.zeros(MAX_PASS_CANDIDATES, dtype=np.float64)
    alive = np.arange(count)
    n_alive = count
    rounds = np.int64(0)
    while (np.int64(1) << rounds) < count:
        rounds += 1
    worlds = new_worlds(SCRATCH_WORLDS)
    plan, card_rows = new_sampler_scratch()
    rng = seed
    for _ in range(rounds):
        deals = max(rollouts // (rounds * n_alive), np.int64(1))
        for _ in range(deals):
            rng = sample_world_into(state, rules, seat, rng, worlds[WORLD], plan, card_rows)
            rng, stream = next_u64(rng)
            for i in range(n_alive):
                trial = worlds[TRIAL]
                copy_state(worlds[WORLD], trial)
                pass_cards(trial, rules, seat, cards[alive[i]])
                pass_and_play_out(trial, rules, ROLLOUT_RULE, playout, stream)
                totals[alive[i]] += trial.scores[seat]
                weights[alive[i]] += 1
        # every survivor has seen the same deals: keep the half with the lowest totals
        order = np.argsort(totals[alive[:n_alive]], kind="mergesort")
        kept = alive[:n_alive][order]
        n_alive = (n_alive + 1) // 2
        alive[:n_alive] = kept[:n_alive]
    for i in range(count):
        values[i] = totals[i] / np.float64(weights[i])
    return cards[alive[0]]


def searched_pass_kernel(parameters: tuple[Parameter, ...]) -> Any:
    """The ``scored_pass`` of a search kind declaring ``parameters`` (``PASS_ROLLOUTS`` and a
    ``rollout`` among them): ``pass_rollouts`` playouts of its own ``rollout`` over the candidate
    passes (``searched_pass``), with their statistics. One kernel per kind: the two parameters'
    row positions are frozen in as constants (and key numba's cache of the closure), where pimc
    and ismcts each wrote the same kernel with its own indices."""
    at = param_indices(parameters)
    rollouts_at, rollout_at = at.pass_rollouts, at.rollout

    @njit
    def scored_pass(
        params: Params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64, cards, values, weights
    ) -> np.uint64:
        rollouts = budget_count(params[rollouts_at], 0, MAX_ITERATIONS)
        playout = np.int64(params[rollout_at])
        return searched_pass(state, rules, seat, seed, rollouts, playout, cards, values, weights)

    return scored_pass
