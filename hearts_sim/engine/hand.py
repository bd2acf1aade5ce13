"""The rules of one hand as numba kernels over a ``HAND_STATE`` record (state in, state out).

Order of events: ``deal_hand`` (or the caller fills ``hands``/``kitty`` and calls
``start_hand``), ``pass_cards`` once per seat when passing applies, then
``legal_moves`` / ``play_card`` until ``phase == PHASE_DONE``; the hand is scored
inside the last ``play_card``. Every rule switch is read from the rules array.

The rules themselves are pure functions of bitboards and scalars (``legal_mask``,
``breaks_hearts``, ``moon_shooter``, ``seat_score``, ``decision_stream``): the record
kernels here and the lean loops that keep a trick in registers (the self-play loop's
stateless playout, mc's random rollouts) call the same ones.
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import (
    AS,
    BLACK_MARIA_POINT_CARDS,
    CLUBS_MASK,
    FULL_DECK,
    HEARTS_AND_QS,
    HEARTS_MASK,
    JD_BIT,
    KS,
    NO_CARD,
    POINTS_AS,
    POINTS_KS,
    POINTS_QS,
    QS,
    QS_BIT,
    SUIT_MASKS,
    TWO_CLUBS_BIT,
    TWO_DIAMONDS_BIT,
    card_bit,
    has_card,
    highest_card,
    lowest_card,
    popcount,
    select_card_bit,
    suit_of,
)
from hearts_sim.core.rules import (
    CYCLE_RANDOM,
    DECK_KITTY,
    LEAD_ANY,
    LEAD_ANY_CLUB,
    MAX_PLAYERS,
    MOON_OFF,
    MOON_OTHERS_PLUS,
    Rules,
    RulesTuple,
    cycle_direction,
    cycle_period,
    direction_offset,
)
from hearts_sim.engine.rng import (
    GOLDEN_GAMMA,
    STREAM_DEAL,
    STREAM_DECISION,
    STREAM_PASS_DIRECTION,
    derive_seed,
    mix64,
    random_below,
)
from hearts_sim.engine.state import (
    MAX_TRICKS,
    NO_SEAT,
    NO_SUIT,
    NO_TRICK,
    PHASE_DONE,
    PHASE_PASS,
    PHASE_PLAY,
    TRICK_BITS,
)

_ZERO = np.uint64(0)
_BIT = np.uint64(1)
_QS, _KS, _AS = np.uint64(QS), np.uint64(KS), np.uint64(AS)


# ---------------------------------------------------------------- what the rules imply
@njit
def point_cards(rules: RulesTuple) -> np.uint64:
    """The penalty cards: hearts and QS, plus KS and AS under Black Maria."""
    return BLACK_MARIA_POINT_CARDS if rules.black_maria else HEARTS_AND_QS


@njit
def card_points(cards: np.uint64, rules: RulesTuple) -> np.int64:
    """Penalty points in a set of cards: 1 a heart, QS 13 (Black Maria: KS 10, AS 7).

    Branch-free: ``(cards >> QS) & 1`` is 1 exactly when the queen is in the set.
    """
    points = np.int64(popcount(cards & HEARTS_MASK)) + POINTS_QS * np.int64((cards >> _QS) & _BIT)
    if rules.black_maria:
        points += POINTS_KS * np.int64((cards >> _KS) & _BIT)
        points += POINTS_AS * np.int64((cards >> _AS) & _BIT)
    return points


@njit
def moon_total(rules: RulesTuple) -> np.int64:
    """The points in the deck (26, or 43 with Black Maria): shooting the moon, and the scale
    of every search value."""
    return np.int64(card_points(point_cards(rules), rules))


@njit
def deck_cards(rules: RulesTuple) -> np.uint64:
    """The cards in play: remove mode takes out 2D (3 players) or 2D and 2C (5 players)."""
    n = rules.n_players
    if rules.deck_mode == DECK_KITTY or n == 4:
        return FULL_DECK
    if n == 3:
        return FULL_DECK & ~TWO_DIAMONDS_BIT
    return FULL_DECK & ~TWO_DIAMONDS_BIT & ~TWO_CLUBS_BIT


# Cards dealt to each seat by table size (whatever the deck mode: 51 or 52 cards to 3 seats
# give 17, 50 or 52 to 5 give 10): a lookup, not a division on the dealing path.
HAND_SIZES = (0, 0, 0, 17, 13, 10)


@njit
def hand_size(rules: RulesTuple) -> np.int64:
    """Cards dealt to each seat."""
    return np.int64(HAND_SIZES[rules.n_players])


@njit
def pass_offset_for_hand(rules: RulesTuple, hand_number: np.int64, hand_seed: np.uint64) -> np.int64:
    """Receiver offset for hand ``hand_number`` (0-based) of a game: the direction of that hand in
    the rules' cycle (``core.rules.cycle_direction``); ``random`` draws the hand's place in the
    cycle uniformly from the hand's own stream."""
    if rules.pass_count == 0:
        return 0
    step = hand_number
    if rules.pass_cycle == CYCLE_RANDOM:
        period = cycle_period(rules.pass_cycle, rules.n_players)
        _, step = random_below(derive_seed(hand_seed, STREAM_PASS_DIRECTION), period)
    return direction_offset(cycle_direction(rules.pass_cycle, rules.n_players, step), rules.n_players)


# ---------------------------------------------------------------- set-up
@njit_inline
def seed_hand(state, hand_seed: np.uint64) -> None:
    """Give ``state`` the hand's seed and every seat's decision stream derived from it (where
    ``decision_seed`` starts): a decision is a function of the hand's seed, the seat and the cards
    played, wherever it is made (a run, ``Agent.act`` on an observation, a server)."""
    state.hand_seed = hand_seed  # stored, and mixed by derive_seed, as uint64 whatever its type
    for seat in range(MAX_PLAYERS):
        state.seat_seeds[seat] = derive_seed(hand_seed, STREAM_DECISION + seat)


@njit
def start_hand(
    state, rules: RulesTuple, pass_offset: np.int64, dealer: np.int64, hand_seed: np.uint64
) -> None:
    """Reset everything but ``hands`` and ``kitty`` (already dealt) and open the pass or play phase."""
    n = rules.n_players
    state.n_players = n
    state.pass_offset = pass_offset
    state.dealer = dealer
    seed_hand(state, hand_seed)
    state.played = _ZERO
    state.trick_mask = _ZERO
    state.n_in_trick = 0
    state.trick_number = 0
    state.n_played = 0
    state.hearts_broken = 0
    state.hearts_broken_trick = -1
    state.point_tricks = 0
    state.qs_trick = -1
    state.passes_made = 0
    state.moon_shooter = NO_SEAT
    state.qs_taker = NO_SEAT
    state.jd_taker = NO_SEAT
    state.leader = NO_SEAT
    state.to_play = NO_SEAT
    state.first_lead_card = NO_CARD
    # constant trip counts (the record's array sizes): the loops unroll into plain stores
    for seat in range(MAX_PLAYERS):
        if seat >= n:
            state.hands[seat] = _ZERO
        state.dealt[seat] = state.hands[seat]
        state.passed[seat] = _ZERO
        state.received[seat] = _ZERO
        state.taken[seat] = _ZERO
        state.trick_cards[seat] = NO_CARD
        state.void_suits[seat] = 0
        state.tricks_won[seat] = 0
        state.points[seat] = 0
        state.scores[seat] = 0
    for t in range(MAX_TRICKS):
        state.trick_leaders[t] = NO_SEAT
        state.trick_winners[t] = NO_SEAT
    if pass_offset % n != 0 and rules.pass_count > 0:
        state.phase = PHASE_PASS
    else:
        state.pass_offset = 0
        _begin_play(state, rules)


@njit
def deal_hand(
    state, rules: RulesTuple, pass_offset: np.int64, dealer: np.int64, hand_seed: np.uint64
) -> None:
    """Deal the cards in play uniformly at random, then ``start_hand``.

    Seat by seat, each card is the k-th of the cards still undealt for a uniform k
    (one ``select_bit``): no card array, and the last seat (or the kitty) takes the rest.
    """
    n = rules.n_players
    undealt = deck_cards(rules)
    remaining = np.int64(popcount(undealt))
    size = hand_size(rules)
    has_kitty = remaining > size * n
    rng = derive_seed(hand_seed, STREAM_DEAL)
    for seat in range(n):
        if seat == n - 1 and not has_kitty:
            state.hands[seat] = undealt
            undealt = _ZERO
            break
        hand = _ZERO
        for _ in range(size):
            # the count is kept, not recounted: each card then waits only for the previous pdep
            rng, k = random_below(rng, remaining)
            bit = select_card_bit(undealt, k)
            hand |= bit
            undealt ^= bit
            remaining -= 1
        state.hands[seat] = hand
    state.kitty = undealt
    start_hand(state, rules, pass_offset, dealer, hand_seed)


@njit
def deal_numbered_hand(state, rules: RulesTuple, seed: np.uint64, number: np.int64) -> None:
    """Deal hand ``number`` (0-based) of the stream ``seed``: its seed ``derive_seed(seed,
    number)``, the direction of hand ``number`` in the pass cycle and dealer ``number`` mod n.
    The one numbering of hands that a run's deals, a game's hands, ``HandState.deal`` and the
    environments' episodes share: hand k of a seed is the same hand everywhere."""
    hand_seed = derive_seed(seed, number)  # derive_seed takes a Python int's int64 as unsigned
    offset = pass_offset_for_hand(rules, number, hand_seed)
    deal_hand(state, rules, offset, number % rules.n_players, hand_seed)


@njit_inline
def decision_stream(seat_seed: np.uint64, decision: np.int64) -> np.uint64:
    """Start of a seat's random stream for its ``decision``-th decision of the hand
    (0: its pass, k + 1: its play after k cards of the hand)."""
    return mix64(seat_seed + np.uint64(decision) * GOLDEN_GAMMA)  # streams a Weyl step apart


@njit
def decision_seed(state, seat: np.int64) -> np.uint64:
    """Start of the random stream for ``seat``'s next decision (``decision_stream``)."""
    decision = 0 if state.phase == PHASE_PASS else state.n_played + 1
    return decision_stream(state.seat_seeds[seat], decision)


# ---------------------------------------------------------------- passing
@njit
def pass_cards(state, rules: RulesTuple, seat: np.int64, cards: np.uint64) -> None:
    """Record ``seat``'s pass (cards from its dealt hand); the last pass triggers the exchange.

    Passes are simultaneous: nobody's hand changes until every seat has passed.
    """
    state.passed[seat] = cards
    state.passes_made |= 1 << seat
    n = state.n_players
    if state.passes_made == (1 << n) - 1:
        for giver in range(n):
            receiver = giver + state.pass_offset  # offsets lie in [0, n): no division needed
            receiver -= n if receiver >= n else 0
            state.received[receiver] = state.passed[giver]
        for s in range(n):
            state.hands[s] = (state.hands[s] & ~state.passed[s]) | state.received[s]
        _begin_play(state, rules)


@njit
def _begin_play(state, rules: RulesTuple) -> None:
    """Find the first leader: the holder of the lowest club dealt (2C; 3C in 5-player remove
    mode; in kitty mode the lowest club not in the kitty), or the seat left of the dealer
    under ``first_lead="any"``."""
    n = state.n_players
    state.phase = PHASE_PLAY
    if rules.first_lead == LEAD_ANY:
        state.leader = (state.dealer + 1) % n
        state.first_lead_card = NO_CARD
    else:
        held = _ZERO
        for s in range(n):
            held |= state.hands[s]
        card = lowest_card(held & CLUBS_MASK)  # never empty: at most 2 clubs are out of play
        state.first_lead_card = card
        leader = NO_SEAT
        for s in range(n):  # a select, not a branch: the holder is a random seat
            leader = s if has_card(state.hands[s], card) else leader
        state.leader = leader
    state.to_play = state.leader
    state.trick_leaders[0] = state.leader


# ---------------------------------------------------------------- legal moves
@njit
def _first_trick_filter(candidates: np.uint64, rules: RulesTuple) -> np.uint64:
    """Rule 5: no point card on the first trick, unless nothing else is playable."""
    if rules.no_points_first_trick:
        safe = candidates & ~point_cards(rules)
        if safe:
            return safe
    return candidates


@njit_inline
def legal_mask(
    hand: np.uint64,
    led_suit: np.int64,
    first_trick: bool,
    hearts_broken: np.int64,
    first_lead_card: np.int64,
    rules: RulesTuple,
) -> np.uint64:
    """The cards of ``hand`` that may be played, as one rule per early return.

    ``led_suit`` is the suit led to the current trick, ``NO_SUIT`` when leading it.
    """
    if led_suit != NO_SUIT:
        # Following: play the led suit if able, else anything (rule 4).
        follow = hand & SUIT_MASKS[led_suit]
        candidates = follow if follow else hand
        return _first_trick_filter(candidates, rules) if first_trick else candidates
    if first_trick:
        # The first lead (rule 3): the lowest club itself, or any club with any_club.
        first_lead = rules.first_lead
        if first_lead != LEAD_ANY:
            if first_lead == LEAD_ANY_CLUB:
                return hand & CLUBS_MASK
            return card_bit(first_lead_card)
    if rules.must_break_hearts and not hearts_broken:
        # Rule 6: no heart lead before hearts are broken, unless the leader holds only
        # hearts (or only QS and hearts, with lead_hearts_instead_of_qs).
        non_hearts = hand & ~HEARTS_MASK
        if non_hearts and not (rules.lead_hearts_instead_of_qs and non_hearts == QS_BIT):
            hand = non_hearts
    return _first_trick_filter(hand, rules) if first_trick else hand


@njit_inline
def led_suit_of(state) -> np.int64:
    """The suit led to the current trick, or ``NO_SUIT`` before its lead."""
    return suit_of(state.trick_cards[state.leader]) if state.n_in_trick > 0 else NO_SUIT


@njit_inline
def legal_moves(state, rules: RulesTuple) -> np.uint64:
    """The cards the player to move may play."""
    return legal_mask(
        state.hands[state.to_play],
        led_suit_of(state),
        state.trick_number == 0,
        state.hearts_broken,
        state.first_lead_card,
        rules,
    )


# ---------------------------------------------------------------- play
@njit_inline
def breaks_hearts(cards: np.uint64, rules: RulesTuple) -> np.int64:
    """1 if playing ``cards`` breaks hearts (a heart, or QS with ``qs_breaks_hearts``), else 0."""
    return np.int64(cards & HEARTS_MASK != _ZERO) | (np.int64((cards >> _QS) & _BIT) & rules.qs_breaks_hearts)


@njit_inline
def place_card(state, seat: np.int64, card: np.int64, led_suit: np.int64, index: np.int64) -> None:
    """The marks a card leaves on the finished hand's record: out of ``seat``'s hand and into
    the history at ``index``; a card off the led suit shows the seat void in it. (The trick
    in progress, ``trick_cards``, is the caller's: a loop that keeps it in registers skips it.)"""
    state.hands[seat] &= ~card_bit(card)
    state.history[index] = card
    if led_suit != NO_SUIT:
        state.void_suits[seat] |= np.int64(suit_of(card) != led_suit) << led_suit


@njit_inline
def note_hearts_broken(state, breaks: np.int64) -> None:
    """Record that hearts are broken now if ``breaks`` (0 or 1), remembering the first trick."""
    newly_broken = breaks & (1 - state.hearts_broken)
    state.hearts_broken |= breaks
    state.hearts_broken_trick += newly_broken * (state.trick_number + 1)  # from -1


@njit_inline
def play_card(state, rules: RulesTuple, card: np.int64) -> None:
    """Play ``card`` (assumed legal) for the player to move; resolve the trick and the hand.

    Random play makes every data-dependent branch unpredictable, so the bookkeeping
    below is written as arithmetic (a mispredicted branch costs more than the rest).
    """
    seat = state.to_play
    bit = card_bit(card)
    place_card(state, seat, card, led_suit_of(state), state.n_played)
    state.trick_cards[seat] = card
    state.played |= bit
    state.trick_mask |= bit
    state.n_played += 1
    note_hearts_broken(state, breaks_hearts(bit, rules))
    state.n_in_trick += 1
    if state.n_in_trick < state.n_players:
        # next seat without `%`: a 64-bit division costs ~40 cycles, more than the rest
        state.to_play = seat + 1 if seat + 1 < state.n_players else 0
    else:
        finish_trick(state, rules)


@njit_inline
def finish_trick(state, rules: RulesTuple) -> None:
    """The highest card of the led suit takes the full trick in ``trick_cards``/``trick_mask``."""
    n = state.n_players
    led_suit = suit_of(state.trick_cards[state.leader])
    best = highest_card(state.trick_mask & SUIT_MASKS[led_suit])
    winner = np.int64(0)
    for s in range(n):
        winner += s * np.int64(state.trick_cards[s] == best)  # exactly one seat matches
        state.trick_cards[s] = NO_CARD
    cards = state.trick_mask
    state.trick_mask = _ZERO
    state.n_in_trick = 0
    take_trick(state, rules, winner, cards)


@njit_inline
def take_trick(state, rules: RulesTuple, winner: np.int64, cards: np.uint64) -> None:
    """``winner`` takes a finished trick's ``cards`` (with the first trick, the kitty too) and
    leads the next trick; after the last trick the hand is scored."""
    if state.trick_number == 0:
        cards |= state.kitty
    state.taken[winner] |= cards
    points = card_points(cards, rules)
    state.points[winner] += points
    # when it happened, branch-free: a point trick's bit; the queen's trick counted up from -1
    state.point_tricks |= np.int64(points > 0) << state.trick_number
    state.qs_trick += np.int64((cards >> _QS) & _BIT) * (state.trick_number + 1)
    state.tricks_won[winner] += 1
    state.trick_winners[state.trick_number] = winner
    state.trick_number += 1
    state.leader = winner
    state.to_play = winner
    if state.hands[winner] == _ZERO:  # hands are all the same size
        finish_hand(state, rules)
    else:
        state.trick_leaders[state.trick_number] = winner


@njit_inline
def point_holder(state) -> tuple[np.int64, np.int64]:
    """(seat, points taken so far): the seat holding every point taken so far, a moon still open
    to it, or ``NO_SEAT`` when none is taken or they are shared. Mid-hand, what ``moon_shooter``
    is at its end."""
    total = np.int64(0)
    holder = np.int64(NO_SEAT)
    for s in range(state.n_players):
        if state.points[s] > 0:
            holder = np.int64(s) if total == 0 else np.int64(NO_SEAT)
            total += state.points[s]
    return holder, total


@njit
def moon_shooter(points, n: np.int64, rules: RulesTuple) -> np.int64:
    """The seat that took every point card (rule 8), or ``NO_SEAT``: raw points come only
    from point cards, so it is the seat whose raw ``points`` are the deck's total."""
    if rules.moon == MOON_OFF:
        return NO_SEAT
    total = moon_total(rules)
    for s in range(n):
        if points[s] == total:
            return s
    return NO_SEAT


@njit
def seat_score(
    seat: np.int64,
    points: np.int64,
    tricks_won: np.int64,
    shooter: np.int64,
    jd_taker: np.int64,
    rules: RulesTuple,
) -> np.int64:
    """``seat``'s score for the hand from its raw points and tricks: the moon (rule 8), the JD
    bonus, the bonus for taking no trick (not when the moon was shot)."""
    score = points
    if shooter != NO_SEAT:
        total = moon_total(rules)
        if rules.moon == MOON_OTHERS_PLUS:
            score = 0 if seat == shooter else total
        else:
            score = -total if seat == shooter else 0
    if jd_taker == seat:
        score += rules.jd_bonus
    if shooter == NO_SEAT and tricks_won == 0:
        score += rules.avoid_all_tricks_bonus
    return score


@njit
def finish_hand(state, rules: RulesTuple) -> None:
    """Score the hand: who shot the moon and took QS and JD, then every seat's score.

    ``take_trick`` calls it after the last trick; a record whose ``points`` or ``taken`` were
    completed afterwards (a rebuilt record's hidden kitty, ``game.observation``) is scored
    again with it."""
    n = state.n_players
    state.phase = PHASE_DONE
    state.to_play = NO_SEAT
    qs_taker, jd_taker = state.qs_taker, state.jd_taker
    for s in range(n):  # selects, not branches: the takers are random seats
        taken = state.taken[s]
        qs_taker = s if taken & QS_BIT else qs_taker
        jd_taker = s if taken & JD_BIT else jd_taker
    state.qs_taker, state.jd_taker = qs_taker, jd_taker
    shooter = moon_shooter(state.points, n, rules)
    state.moon_shooter = shooter
    for s in range(n):
        state.scores[s] = seat_score(s, state.points[s], state.tricks_won[s], shooter, jd_taker, rules)


@njit
def pack_trick_winners(state) -> np.uint64:
    """Every trick's winner in one integer for the records: trick t's seat in bits
    ``TRICK_BITS * t`` up, ``NO_TRICK`` for the tricks not played (``unpack_trick_winners``)."""
    packed = _ZERO
    for t in range(MAX_TRICKS):
        seat = state.trick_winners[t] if t < state.trick_number else NO_TRICK
        packed |= np.uint64(seat) << np.uint64(TRICK_BITS * t)
    return packed


MAX_HANDS_PER_GAME = 1000  # a game still undecided after this many hands is cut off: no one wins it


def unreachable_target(rules: Rules) -> str | None:
    """Why no game to ``rules.target_score`` can end within ``MAX_HANDS_PER_GAME`` hands (every
    one would be cut off undecided, at no win for anyone); None where one can."""
    most = MAX_HANDS_PER_GAME * rules.moon_total  # a player takes at most the deck's points a hand
    if rules.target_score <= most:
        return None
    return (
        f"target_score={rules.target_score} cannot be reached: a game is cut off undecided after "
        f"{MAX_HANDS_PER_GAME:,} hands, and a player takes at most {rules.moon_total} points a hand "
        f"(choose at most {most:,})"
    )


@njit
def game_winners(totals: np.ndarray, n: np.int64, target: np.int64, share_ties: bool) -> np.int64:
    """Bitmask of the game's winners after a hand, or 0 if the game goes on (rule 9)."""
    highest = totals[0]
    lowest = totals[0]
    for s in range(1, n):
        highest = max(highest, totals[s])
        lowest = min(lowest, totals[s])
    if highest < target:
        return 0
    winners = 0
    for s in range(n):
        if totals[s] == lowest:
            winners |= 1 << s
    if not share_ties and winners & (winners - 1):  # more than one bit set
        return 0
    return winners


@njit_inline
def next_turn(state, i: np.int64, player: np.int64, position: np.int64, trick: np.int64):
    """Walking the public history: who plays card ``i + 1``, at which position of which trick,
    after ``player`` played card ``i`` at ``position`` of trick ``trick`` (from
    ``state.trick_leaders[0]``, 0, 0). Counters, not ``%``: a division is slow."""
    position += 1
    player = player + 1 if player + 1 < state.n_players else 0
    if position == state.n_players:
        position = 0
        trick += 1
        if i + 1 < state.n_played:
            player = state.trick_leaders[trick]
    return player, position, trick
