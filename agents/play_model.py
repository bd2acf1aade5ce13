"""A learned model of how a strong player chooses its card: the belief model's likelihood of a play.

Design note. ``agents.belief`` weighs a sampled world by how likely the other seats' observed
plays are had they held that world's hands. Its surprises ask only whether a play broke a rule
every player keeps; this model asks what a strong player would have played. It is a conditional
logit (McFadden): each legal card gets ``N_MOVE_FEATURES`` features of what the seat to play sees
(its hand, the trick, the cards out, the points taken; ``move_features``) and the probability

    P(card | what the seat saw) = exp(w . x[card]) / sum over legal c of exp(w . x[c])

with one weight vector ``w`` fitted by maximum likelihood to ``hard``'s own cards in self-play
(``experiments/train_play_model.py``, which writes ``agents/play_model_weights.py``). In a world
the other seats' hands at the start of play are known, so every card another seat chose among two
or more adds its log-probability (``plays_log_likelihood``). The course of the hand (who played
when, the tricks, the points) is public, so it is replayed once per pool (``replay_plays``) and
each world only puts its hands into the records of that replay. The features are defined at every
table; the weights are fitted on the standard game.
"""

from __future__ import annotations

import numpy as np

from agents.play_model_weights import WEIGHTS
from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import (
    AS_BIT,
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
from hearts_sim.core.rules import MAX_PLAYERS, MOON_OFF, RulesTuple
from hearts_sim.engine.hand import (
    card_points,
    deck_cards,
    legal_moves,
    moon_total,
    play_card,
    point_holder,
    start_hand,
)
from hearts_sim.engine.sampler import cards_played_by
from hearts_sim.engine.state import HAND_STATE, MAX_TRICKS, NO_SEAT

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
(
    LEAD_RANK, LEAD_SURELY_LOSES, LEAD_HIGHER_OUT, LEAD_HEART, LEAD_SPADE_UNDER_QUEEN, LEAD_QUEEN,
    LEAD_HIGH_SPADE, LEAD_SUIT_LENGTH, FOLLOW_WINS, FOLLOW_WINS_POINTS, FOLLOW_WINS_LAST,
    FOLLOW_DUCK_RANK, FOLLOW_WIN_RANK, FOLLOW_QUEEN, FOLLOW_HIGH_SPADE, DISCARD_QUEEN,
    DISCARD_HEART_RANK, DISCARD_HEART, DISCARD_HIGH_SPADE, DISCARD_RANK, DISCARD_VOIDS,
    DISCARD_SUIT_LENGTH, SHOOTING_RANK, DEFEND_WINS, DEFEND_GIVES_POINTS, POINTS_TAKEN_RANK,
) = range(N_MOVE_FEATURES)  # fmt: skip
MAX_LEGAL = MAX_TRICKS  # a seat never holds more cards than there are tricks
assert len(WEIGHTS) == N_MOVE_FEATURES, (
    "agents/play_model_weights.py does not fit MOVE_FEATURES: re-run train_play_model.py"
)
PLAY_WEIGHTS = np.array(WEIGHTS, dtype=np.float64)

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
    unseen = deck_cards(rules) & ~(hand | state.played | state.trick_mask)
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
            row[LEAD_RANK] = rank
            row[LEAD_SURELY_LOSES] = 1.0 if below == _ZERO else 0.0
            row[LEAD_HIGHER_OUT] = np.float64(popcount(above)) / 12.0
            row[LEAD_HEART] = _is_set(bit & HEARTS_MASK)
            row[LEAD_SPADE_UNDER_QUEEN] = (
                1.0 if queen_out and (bit & SPADES_MASK) != _ZERO and bit < QS_BIT else 0.0
            )
            row[LEAD_QUEEN] = _is_set(bit & QS_BIT)
            row[LEAD_HIGH_SPADE] = high_spade if queen_out else 0.0
            row[LEAD_SUIT_LENGTH] = length / 13.0
        elif suit == led:
            if card > best:  # it takes the trick so far
                row[FOLLOW_WINS] = 1.0
                row[FOLLOW_WINS_POINTS] = trick_points
                row[FOLLOW_WINS_LAST] = 1.0 if last else 0.0
                row[FOLLOW_WIN_RANK] = rank
                row[DEFEND_WINS] = 1.0 if threat else 0.0
            else:
                row[FOLLOW_DUCK_RANK] = rank
            row[FOLLOW_QUEEN] = _is_set(bit & QS_BIT)
            row[FOLLOW_HIGH_SPADE] = high_spade if queen_out else 0.0
        else:
            row[DISCARD_QUEEN] = _is_set(bit & QS_BIT)
            row[DISCARD_HEART_RANK] = rank if (bit & HEARTS_MASK) != _ZERO else 0.0
            row[DISCARD_HEART] = _is_set(bit & HEARTS_MASK)
            row[DISCARD_HIGH_SPADE] = high_spade
            row[DISCARD_RANK] = rank
            row[DISCARD_VOIDS] = 1.0 if length == 1.0 else 0.0
            row[DISCARD_SUIT_LENGTH] = length / 13.0
            if threat and best_seat == holder:
                row[DEFEND_GIVES_POINTS] = np.float64(card_points(bit, rules)) / 13.0
        if shooting:
            row[SHOOTING_RANK] = rank
        row[POINTS_TAKEN_RANK] = rank * own_points
        count += 1
    return count


@njit
def new_play_scratch():
    """Scratch for ``card_log_probability``, allocated once per pool: (feature rows, logits)."""
    rows = np.empty((MAX_LEGAL, N_MOVE_FEATURES), dtype=np.float64)
    return rows, np.empty(MAX_LEGAL, dtype=np.float64)


@njit
def card_log_probability(state, rules: RulesTuple, legal: np.uint64, card: np.int64, rows, logits) -> float:
    """log P(``card`` | the seat to play in ``state``, choosing among ``legal``) under the model
    (``rows``, ``logits``: scratch from ``new_play_scratch``)."""
    count = move_features(state, rules, legal, rows)
    top = -np.inf
    below = legal & ((_ONE << np.uint64(card)) - _ONE)
    for k in range(count):  # a plain loop: a BLAS call costs more than a few short dot products
        logit = 0.0
        for f in range(N_MOVE_FEATURES):
            logit += rows[k, f] * PLAY_WEIGHTS[f]
        logits[k] = logit
        top = max(top, logit)
    chosen = popcount(below)  # the rows go lowest card first
    norm = 0.0
    for k in range(count):
        norm += np.exp(logits[k] - top)
    return logits[chosen] - top - np.log(norm)


@njit
def new_plays_replay(state):
    """The other seats' plays so far, to weigh many worlds by (``replay_plays`` fills it):
    (``before``: the record just before each play, ``cards``: the card, ``rest``: the cards its
    seat played from then on, that one included)."""
    size = state.n_played + 1  # and one to replay in
    return np.empty(size, dtype=HAND_STATE), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.uint64)


@njit
def replay_plays(state, world, rules: RulesTuple, seat: np.int64, before, cards, rest) -> np.int64:
    """Replay the hand from the start of play in ``world`` and keep every play by a seat other
    than ``seat`` in ``before``, ``cards`` and ``rest`` (``new_plays_replay``); returns how many.
    Who plays when, the tricks and the points are public, the same in every world ``seat`` cannot
    tell from the truth, so ``plays_log_likelihood`` puts each world's hands into these records
    instead of replaying every world."""
    played = np.zeros(MAX_PLAYERS, dtype=np.uint64)
    cards_played_by(state, played)
    remaining = played.copy()  # each seat's cards still to be played
    before[0] = world
    live = before[0]  # the replay: moves one slot on at each kept play, leaving its record behind
    for s in range(state.n_players):
        live.hands[s] = world.hands[s] | played[s]
    start_hand(live, rules, np.int64(0), world.dealer, world.hand_seed)
    count = np.int64(0)
    for i in range(state.n_played):
        card = np.int64(state.history[i])
        player = live.to_play
        if player != seat:
            before[count + 1] = live
            live = before[count + 1]
            cards[count] = card
            rest[count] = remaining[player]
            count += 1
        remaining[player] &= ~(_ONE << np.uint64(card))
        play_card(live, rules, card)
    return count


@njit
def plays_log_likelihood(
    world, rules: RulesTuple, before, cards, rest, count: np.int64, rows, logits
) -> float:
    """log P(the other seats' plays so far | their hands as in ``world``) under the model: every
    card another seat chose among two or more (the ``count`` plays of ``replay_plays``) adds its
    log-probability, the seat's hand then being its hand in ``world`` and the cards it has
    played since."""
    total = 0.0
    for k in range(count):
        then = before[k]
        player = then.to_play
        then.hands[player] = world.hands[player] | rest[k]
        legal = legal_moves(then, rules)
        if legal & (legal - _ONE):  # a choice
            total += card_log_probability(then, rules, legal, cards[k], rows, logits)
    return total
