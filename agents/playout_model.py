"""A learned playout policy: a softmax over the legal cards fitted to a strong player's plays.

Design note. The playouts model how the other seats play; greedy's few rules duck well but know
nothing of moons, and the rule agent, a stronger player, is a worse model (it commits to moons
its greedy opponents never stop; the README's playout screens). This is the apprentice step of
expert iteration: a conditional logit (McFadden) over ``N_MOVE_FEATURES`` features of each
legal card, what the seat to play sees (its hand, the trick, the cards out, the points taken),
fitted by maximum likelihood to ``hard``'s own cards (``experiments/train_playout.py``). A
playout samples its card from the model, so it plays as often as ``hard`` would, not just its
likeliest card. The weights are plain numbers in ``agents.playout_weights``.
"""

from __future__ import annotations

import numpy as np

from agents.playout_weights import WEIGHTS
from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import (
    AS_BIT,
    FULL_DECK,
    HEARTS_MASK,
    KS_BIT,
    QS_BIT,
    SPADES_MASK,
    SUIT_MASKS,
    highest_card,
    lowest_card,
    popcount,
    rank_of,
    suit_of,
)
from hearts_sim.core.rules import MOON_OFF, RulesTuple
from hearts_sim.engine.hand import (
    card_points,
    legal_moves,
    moon_total,
    next_turn,
    play_card,
    point_holder,
    start_hand,
)
from hearts_sim.engine.rng import random_unit
from hearts_sim.engine.state import NO_SEAT

MOVE_FEATURES = (
    "lead_rank",  # leading: the card's rank / 12
    "lead_surely_loses",  # leading: no unseen card of its suit is lower
    "lead_higher_out",  # leading: unseen cards of its suit above it / 12
    "lead_heart",
    "lead_spade_under_queen",  # leading a spade below the queen while she is out
    "lead_queen",
    "lead_high_spade",  # leading KS or AS while the queen is out
    "lead_suit_length",  # leading: cards held in its suit / 13
    "follow_wins",  # following suit with a card above the trick's best so far
    "follow_wins_points",  # ... times the points in the trick / 13
    "follow_wins_last",  # ... as the last to play
    "follow_duck_rank",  # following under the trick's best: rank / 12
    "follow_win_rank",  # following over it: rank / 12
    "follow_queen",
    "follow_high_spade",  # KS or AS while the queen is out
    "discard_queen",
    "discard_heart_rank",  # a heart discarded: rank / 12
    "discard_heart",
    "discard_high_spade",
    "discard_rank",
    "discard_voids",  # the last card of its suit
    "discard_suit_length",
    "shooting_rank",  # the seat holds every point taken: rank / 12
    "defend_wins",  # another seat holds every point taken: following over the trick's best
    "defend_gives_points",  # ... discarding points on a trick that seat is winning / 13
    "points_taken_rank",  # the seat's own points / 26, times rank / 12
)
N_MOVE_FEATURES = len(MOVE_FEATURES)
MAX_LEGAL = 13  # a hand never holds more legal cards

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@njit_inline
def _is_set(mask: np.uint64) -> float:
    return 1.0 if mask != _ZERO else 0.0


@njit
def move_features(state, rules: RulesTuple, legal: np.uint64, out) -> int:
    """Write the features (MOVE_FEATURES) of the seat to play playing each card of ``legal``,
    lowest card first, into the rows of ``out``; returns how many. Only what that seat sees:
    its own hand and the public cards."""
    seat = state.to_play
    hand = state.hands[seat]
    unseen = FULL_DECK & ~(hand | state.played | state.trick_mask)
    queen_out = (unseen & QS_BIT) != _ZERO
    holder, _ = point_holder(state)
    moon_open = rules.moon != MOON_OFF and holder != NO_SEAT
    shooting = moon_open and holder == seat
    threat = moon_open and holder != seat
    own_points = np.float64(state.points[seat]) / np.float64(moon_total(rules))
    leading = state.n_in_trick == 0
    led, best, best_seat, last, trick_points = -1, -1, state.leader, False, 0.0
    if not leading:
        led = suit_of(state.trick_cards[state.leader])
        best = highest_card(state.trick_mask & SUIT_MASKS[led])
        for s in range(state.n_players):
            if state.trick_cards[s] == best:
                best_seat = s
        last = state.n_in_trick == state.n_players - 1
        trick_points = np.float64(card_points(state.trick_mask, rules)) / 13.0
    count = 0
    remaining = legal
    while remaining != _ZERO:
        card = lowest_card(remaining)
        remaining &= remaining - _ONE
        row = out[count]
        row[:] = 0.0
        bit = _ONE << np.uint64(card)
        suit, rank = suit_of(card), np.float64(rank_of(card)) / 12.0
        suit_mask = SUIT_MASKS[suit]
        length = np.float64(popcount(hand & suit_mask))
        high_spade = _is_set(bit & (KS_BIT | AS_BIT))
        if leading:
            below = unseen & suit_mask & (bit - _ONE)
            above = unseen & suit_mask & ~((bit << _ONE) - _ONE)
            row[0] = rank
            row[1] = 1.0 if below == _ZERO else 0.0
            row[2] = np.float64(popcount(above)) / 12.0
            row[3] = _is_set(bit & HEARTS_MASK)
            row[4] = 1.0 if queen_out and (bit & SPADES_MASK) != _ZERO and bit < QS_BIT else 0.0
            row[5] = _is_set(bit & QS_BIT)
            row[6] = high_spade if queen_out else 0.0
            row[7] = length / 13.0
        elif suit == led:
            if card > best:  # it takes the trick so far
                row[8] = 1.0
                row[9] = trick_points
                row[10] = 1.0 if last else 0.0
                row[12] = rank
                row[23] = 1.0 if threat else 0.0
            else:
                row[11] = rank
            row[13] = _is_set(bit & QS_BIT)
            row[14] = high_spade if queen_out else 0.0
        else:
            row[15] = _is_set(bit & QS_BIT)
            row[16] = rank if (bit & HEARTS_MASK) != _ZERO else 0.0
            row[17] = _is_set(bit & HEARTS_MASK)
            row[18] = high_spade
            row[19] = rank
            row[20] = 1.0 if length == 1.0 else 0.0
            row[21] = length / 13.0
            if threat and best_seat == holder:
                row[24] = np.float64(card_points(bit, rules)) / 13.0
        if shooting:
            row[22] = rank
        row[25] = rank * own_points
        count += 1
    return count


@njit
def learned_play(state, rules: RulesTuple, legal: np.uint64, rng: np.uint64, likeliest: bool):
    """A card drawn from the learned model's softmax over ``legal``: returns (rng, card)."""
    features = np.empty((MAX_LEGAL, N_MOVE_FEATURES), dtype=np.float64)
    count = move_features(state, rules, legal, features)
    logits = np.empty(count, dtype=np.float64)
    for i in range(count):  # a plain loop: a BLAS call costs more than 13 short dot products
        logit = 0.0
        for f in range(N_MOVE_FEATURES):
            logit += features[i, f] * WEIGHTS[f]
        logits[i] = logit
    remaining = legal
    if likeliest:
        for _ in range(np.argmax(logits)):
            remaining &= remaining - _ONE
        return rng, lowest_card(remaining)
    logits = np.exp(logits - logits.max())
    rng, u = random_unit(rng)
    u *= logits.sum()
    for i in range(count - 1):
        u -= logits[i]
        if u < 0.0:
            return rng, lowest_card(remaining)
        remaining &= remaining - _ONE
    return rng, lowest_card(remaining)


@njit
def policy_log_likelihood(state, world, scratch, rules: RulesTuple, seat: np.int64, features) -> float:
    """Screen build: the log-probability under the learned softmax of every card the other seats
    played this hand, their hands as in ``world`` (``scratch``: a one-record state array)."""
    n = state.n_players
    played_by = np.zeros(n, dtype=np.uint64)
    player, position, trick = state.trick_leaders[0], 0, 0
    for i in range(state.n_played):
        played_by[player] |= _ONE << np.uint64(state.history[i])
        player, position, trick = next_turn(state, i, player, position, trick)
    scratch[0] = world
    replay = scratch[0]
    for s in range(n):
        replay.hands[s] = world.hands[s] | played_by[s]
    start_hand(replay, rules, np.int64(0), world.dealer, world.hand_seed)
    total = 0.0
    for i in range(state.n_played):
        card = np.int64(state.history[i])
        mover = replay.to_play
        if mover != seat:
            legal = legal_moves(replay, rules)
            if legal & (legal - _ONE):  # a choice
                count = move_features(replay, rules, legal, features)
                best = -np.inf
                logits = np.empty(count, dtype=np.float64)
                chosen = 0
                remaining = legal
                for k in range(count):
                    logit = 0.0
                    for f in range(N_MOVE_FEATURES):
                        logit += features[k, f] * WEIGHTS[f]
                    logits[k] = logit
                    best = max(best, logit)
                    if lowest_card(remaining) == card:
                        chosen = k
                    remaining &= remaining - _ONE
                norm = 0.0
                for k in range(count):
                    norm += np.exp(logits[k] - best)
                total += logits[chosen] - best - np.log(norm)
        play_card(replay, rules, card)
    return total
