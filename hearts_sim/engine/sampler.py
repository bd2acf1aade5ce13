"""The determinization sampler: deal the cards one seat cannot see, consistently with all it knows.

Design note. Search agents (mc, pimc, ismcts) play on *worlds*: full states whose hidden
cards are a random deal that agrees with the seat's information set (docs/rules.md). What a
seat knows about the unseen cards, and how each fact is honoured:

* hand sizes: each other seat holds ``hand_size - cards it has played`` (public counts);
* shown voids: a seat that failed to follow suit s holds no card of s (``void_suits``);
* its own pass: the cards it passed sit with the receiver until played;
* the first lead: the leader holds ``first_lead_card`` until it is played, and in kitty
  mode every club below it lies in the kitty. Not so with ``first_lead="any_club"`` and a
  kitty: the leader may open with any club, so which club is the lowest dealt out (and so
  which low clubs lie in the kitty) is hidden; the seat knows only who leads, i.e. that the
  leader held the lowest club any player held. The record's ``first_lead_card`` is then never
  read: worlds are dealt without it, those that break that fact are rejected (about 1 in 2 to
  4 in 3- and 5-player kitty play), and each world carries its own ``first_lead_card``;
* the kitty: face down, so unseen, until the first trick's winner takes it; after that
  its point value is public (``points`` minus the points of the tricks played), so the
  sampled kitty carries exactly that many points; a seat that took it knows its cards.

Soft inferences from the legal-move rules (a heart led before hearts broke means the
leader held only hearts) are not used.

Algorithm, over *slots* (the other seats, and the kitty while unknown), index = seat
number with the sampling seat's own index standing for the kitty:

1. must-hold cards (passed cards, the first-lead card, low clubs in the kitty, the
   kitty's decoded point cards) are placed first;
2. every remaining unseen card may go to the slots whose seat is not void in its suit.
   Suits whose allowed slots are not all slots are *constrained*: their cards are dealt
   first, most constrained suit first, each card to a slot with probability
   proportional to the slot's free room; then the unconstrained cards fill the rest
   uniformly (``select_bit`` draws).
3. Exactness: this proposal gives a deal probability proportional to 1 / prod A_i,
   where A_i is the free room among the allowed slots when constrained card i is
   placed. Accepting with probability prod A_i / B_i, where B_i bounds A_i for every
   deal, makes the accepted deals exactly uniform over all consistent worlds. When the
   allowed slot sets of the constrained suits are nested (no void, one void, several
   voids of one seat: 70-75% of positions from rule-vs-rule play) A_i = B_i and every
   attempt is accepted. With crossing voids (seat a void in spades, seat b void in
   hearts) the placement checks Hall's condition so it never dead-ends; 1.1-1.6
   attempts on average (measured on rule-vs-rule positions, 3, 4 and 5 players). Where
   ``MAX_EXACT_ATTEMPTS`` attempts in a row fail (under 0.1% of samples: e.g. three
   seats void in three different suits) the last proposal is mixed by random valid
   swaps of two cards, a chain that leaves the uniform law invariant: close to uniform,
   not exactly. Everything else is exactly uniform (tests/test_sampler.py checks it by
   chi-square against enumerated endgames).

Infeasible information sets: ``sample_world`` always returns a world. Positions from play
always admit a deal; an information set from outside (a game site's history, rebuilt by
``game.observation``) may not, e.g. voids that leave the unseen cards no room. Then no
proposal is accepted, the last one (broken) is returned after ``MAX_ATTEMPTS``, and
``world_fits`` says so: it checks every fact above on the result.

Cost: one record copy plus about one random draw per unseen card, about 1 us per world
in mid-hand; no Python objects. ``sample_world_into`` with caller-owned scratch
(``new_sampler_scratch``) avoids the two small allocations of ``sample_world``.
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.cards import (
    CLUBS_MASK,
    HEARTS,
    HEARTS_MASK,
    N_SUITS,
    NO_CARD,
    QS_BIT,
    SUIT_MASKS,
    card_bit,
    highest_ranked_card,
    lowest_card,
    popcount,
    select_bit,
    suit_of,
)
from hearts_sim.core.rules import DECK_KITTY, LEAD_ANY_CLUB, MAX_PLAYERS, RulesTuple
from hearts_sim.engine.hand import card_points, deck_cards, hand_size, next_turn, point_cards
from hearts_sim.engine.rng import next_u64, random_below, random_unit, uniform_below
from hearts_sim.engine.state import MAX_CARDS_PLAYED, MAX_TRICKS, PHASE_PASS

MAX_EXACT_ATTEMPTS = 64  # crossing voids: attempts with the exactness test before accepting any
MAX_ATTEMPTS = 4096  # kitty point value: a hard constraint, retried until met
SWAPS_PER_CARD = 8  # mixing steps per free card when the exact test keeps failing
ALL_SUITS = (1 << N_SUITS) - 1  # a slot that may hold every suit
NO_SUBSETS = 1 << N_SUITS  # subsets of the (at most four) constrained suits, for Hall's condition

# Scratch rows of one sample_world call (two allocations, named views). Per suit or subset:
PLAN_SLOTS, PLAN_ORDER, PLAN_BASE, PLAN_OUTSIDE, PLAN_SUBSETS, PLAN_ROOM_OF_SUIT, PLAN_SLACK = range(7)
# per slot:
PLAN_CAPACITY, PLAN_ALLOWED_SUITS, PLAN_ROOM = range(7, 10)
PLAN_ROWS = 10
CARDS_MUST, CARDS_DEALT, CARDS_PLAYED_BY, CARDS_TAKEN = range(4)
CARD_ROWS = 4

_ZERO = np.uint64(0)
_ONE = np.uint64(1)


# ---------------------------------------------------------------- copying
@njit
def copy_state(source, target) -> None:
    """Copy every field of a ``HAND_STATE`` record into another (tests check none is missed)."""
    for s in range(MAX_PLAYERS):
        target.hands[s] = source.hands[s]
        target.dealt[s] = source.dealt[s]
        target.passed[s] = source.passed[s]
        target.received[s] = source.received[s]
        target.taken[s] = source.taken[s]
        target.trick_cards[s] = source.trick_cards[s]
        target.void_suits[s] = source.void_suits[s]
        target.tricks_won[s] = source.tricks_won[s]
        target.points[s] = source.points[s]
        target.scores[s] = source.scores[s]
        target.seat_seeds[s] = source.seat_seeds[s]
        target.game_scores[s] = source.game_scores[s]
    for i in range(MAX_CARDS_PLAYED):
        target.history[i] = source.history[i]
    for t in range(MAX_TRICKS):
        target.trick_leaders[t] = source.trick_leaders[t]
        target.trick_winners[t] = source.trick_winners[t]
    target.kitty = source.kitty
    target.played = source.played
    target.trick_mask = source.trick_mask
    target.leader = source.leader
    target.to_play = source.to_play
    target.n_in_trick = source.n_in_trick
    target.trick_number = source.trick_number
    target.n_played = source.n_played
    target.hearts_broken = source.hearts_broken
    target.hearts_broken_trick = source.hearts_broken_trick
    target.point_tricks = source.point_tricks
    target.qs_trick = source.qs_trick
    target.n_players = source.n_players
    target.phase = source.phase
    target.pass_offset = source.pass_offset
    target.passes_made = source.passes_made
    target.dealer = source.dealer
    target.first_lead_card = source.first_lead_card
    target.hand_seed = source.hand_seed
    target.moon_shooter = source.moon_shooter
    target.qs_taker = source.qs_taker
    target.jd_taker = source.jd_taker


# ---------------------------------------------------------------- what the seat knows
@njit
def cards_left(state, size: np.int64, seat: np.int64) -> np.int64:
    """How many cards ``seat`` holds now, from public counts only (``size``: cards dealt to each)."""
    if state.phase == PHASE_PASS:
        return size
    return size - state.trick_number - np.int64(state.trick_cards[seat] != NO_CARD)


@njit
def unseen_cards(state, rules: RulesTuple, seat: np.int64) -> np.uint64:
    """The cards in play that ``seat`` has not seen: other hands and the unknown kitty.

    Its own pile (``taken``) holds only played cards, plus the kitty when it took it."""
    return deck_cards(rules) & ~state.hands[seat] & ~state.played & ~state.taken[seat]


@njit
def kitty_points(state, rules: RulesTuple) -> np.int64:
    """The kitty's point value once taken: every point scored minus those of the tricks played."""
    total = np.int64(0)
    for s in range(state.n_players):
        total += state.points[s]
    return total - card_points(state.played & ~state.trick_mask, rules)


@njit
def _decode_kitty(points: np.int64, candidates: np.uint64, room: np.int64, rules: RulesTuple):
    """Which non-heart point cards (QS; KS, AS with Black Maria) a kitty of ``points`` must hold,
    and how many hearts: (cards, hearts), or (0, -1) unless exactly one split fits ``room``."""
    specials = candidates & point_cards(rules) & ~HEARTS_MASK
    found = 0
    chosen = _ZERO
    hearts = np.int64(-1)
    subset = specials
    while True:  # every subset of the specials, the empty one last
        h = points - card_points(subset, rules)
        if h >= 0 and np.int64(popcount(subset)) + h <= room:
            found += 1
            chosen = subset
            hearts = h
        if subset == _ZERO:
            break
        subset = (subset - _ONE) & specials
    if found != 1:
        return _ZERO, np.int64(-1)
    return chosen, hearts


@njit
def first_lead_hidden(rules: RulesTuple) -> bool:
    """Whether the club that had to open the hand is hidden from the other seats: with
    ``any_club`` the leader may open with any club, and with a kitty the lowest club dealt out
    is not fixed by the rules (docs/rules.md, the information set)."""
    return rules.first_lead == LEAD_ANY_CLUB and rules.deck_mode == DECK_KITTY


@njit
def cards_played_by(state, out) -> None:
    """Each seat's cards played so far, from the public history, into ``out`` (zeroed rows)."""
    trick = 0
    player = state.trick_leaders[0]
    position = 0
    for i in range(state.n_played):
        out[player] |= card_bit(state.history[i])
        player, position, trick = next_turn(state, i, player, position, trick)


@njit
def lowest_club_holder(own_seat: np.int64, own_hand: np.uint64, dealt, played_by, n: np.int64):
    """(seat, card): who held the lowest club any player held when play began, in a world whose
    other hands are ``dealt`` (slot ``own_seat`` is the kitty there; ``own_hand``: that seat's)."""
    lowest = np.int64(64)
    holder = np.int64(-1)
    for o in range(n):
        held = (own_hand if o == own_seat else dealt[o]) | played_by[o]
        club = lowest_card(held & CLUBS_MASK)
        if club < lowest:
            lowest, holder = club, np.int64(o)
    return holder, lowest


# ---------------------------------------------------------------- the deal
@njit
def _order_key(room: np.int64, slots: np.int64) -> np.int64:
    """Most constrained first: less room, then fewer slots (so a subset precedes its superset)."""
    return room * (MAX_PLAYERS + 1) + np.int64(popcount(np.uint64(slots)))


@njit
def _deal_once(free, must, capacity, slots, plan, n_constrained, nested, rng, dealt, room, slack):
    """One proposal: constrained suits card by card, then the rest uniformly.

    Writes the slots' cards into ``dealt`` (``room``, ``slack``: scratch); returns
    (rng, ok, ratio) where ratio is prod A_i / B_i, the probability with which this
    proposal is to be accepted. ``plan`` holds the rows made by ``_plan``."""
    allowed_slots, order, base, outside, subset_slots = (
        plan[PLAN_SLOTS],
        plan[PLAN_ORDER],
        plan[PLAN_BASE],
        plan[PLAN_OUTSIDE],
        plan[PLAN_SUBSETS],
    )
    for o in range(MAX_PLAYERS):
        room[o] = capacity[o]
        dealt[o] = must[o]
    subsets = 1 << n_constrained
    if not nested:  # slack[T]: room in the slots T's suits may use minus T's cards (Hall: >= 0)
        for subset in range(1, subsets):
            slack[subset] = 0
            for o in range(MAX_PLAYERS):
                slack[subset] += room[o] * ((subset_slots[subset] >> o) & 1)
            for i in range(n_constrained):
                if (subset >> i) & 1:
                    slack[subset] -= np.int64(popcount(free & SUIT_MASKS[order[i]]))
    ratio = 1.0
    left = np.int64(popcount(free))  # cards still to place, all suits
    for i in range(n_constrained):
        suit = order[i]
        cards = free & SUIT_MASKS[suit]
        k = 0
        while cards:
            bit = cards & (~cards + _ONE)  # the lowest card of the suit left
            cards ^= bit
            open_slots = allowed_slots[suit]
            if not nested:  # a tight set of other suits keeps its slots for itself
                for subset in range(1, subsets):
                    if not (subset >> i) & 1 and slack[subset] <= 0:
                        open_slots &= ~subset_slots[subset]
            total = 0
            for o in range(MAX_PLAYERS):
                if (open_slots >> o) & 1:
                    total += room[o]
            if total == 0:
                return rng, False, 0.0
            ratio *= total / min(base[suit] - k, left - outside[suit])
            k += 1
            left -= 1
            rng, pick = random_below(rng, total)
            slot = 0
            for o in range(MAX_PLAYERS):
                if (open_slots >> o) & 1:
                    if pick < room[o]:
                        slot = o
                        break
                    pick -= room[o]
            dealt[slot] |= bit
            room[slot] -= 1
            if not nested:
                for subset in range(1, subsets):
                    slack[subset] += ((subset >> i) & 1) - ((subset_slots[subset] >> slot) & 1)
    rest = free
    for i in range(n_constrained):
        rest &= ~SUIT_MASKS[order[i]]
    for o in range(MAX_PLAYERS):
        if not (slots >> o) & 1:
            continue
        if popcount(rest) == room[o]:  # the last slot takes what is left
            dealt[o] |= rest
            rest = _ZERO
            continue
        for _ in range(room[o]):
            rng, k = random_below(rng, np.int64(popcount(rest)))
            bit = card_bit(select_bit(rest, k))
            dealt[o] |= bit
            rest ^= bit
    return rng, True, ratio


@njit
def _slot_of(card_bit_: np.uint64, dealt, slots: np.int64) -> np.int64:
    for o in range(MAX_PLAYERS):
        if (slots >> o) & 1 and dealt[o] & card_bit_:
            return o
    return np.int64(-1)


@njit
def _mix_by_swaps(free, dealt, slots, allowed_suits, kitty_slot, kitty_fixed, rng) -> np.uint64:
    """Random transpositions of two freely dealt cards, kept when both seats may hold the
    other's card: a symmetric chain whose stationary law is uniform over consistent deals,
    so it moves a biased proposal towards uniform (``SWAPS_PER_CARD`` tries per card)."""
    count = np.int64(popcount(free))
    for _ in range(SWAPS_PER_CARD * count):
        rng, bits = next_u64(rng)
        a = card_bit(select_bit(free, uniform_below(bits, count)))
        b = card_bit(select_bit(free, uniform_below(bits << np.uint64(32), count)))
        slot_a, slot_b = _slot_of(a, dealt, slots), _slot_of(b, dealt, slots)
        if slot_a == slot_b or (kitty_fixed and (slot_a == kitty_slot or slot_b == kitty_slot)):
            continue
        suit_a, suit_b = suit_of(lowest_card(a)), suit_of(lowest_card(b))
        if (allowed_suits[slot_a] >> suit_b) & 1 and (allowed_suits[slot_b] >> suit_a) & 1:
            dealt[slot_a] ^= a | b
            dealt[slot_b] ^= a | b
    return rng


@njit
def _plan(free, capacity, allowed_suits, slots, plan) -> tuple[np.int64, bool]:
    """Rows of ``plan`` for the deal: the slots each suit may use, the constrained suits
    (most constrained first), the bounds B_i and Hall's subsets; returns (count, nested)."""
    allowed_slots, order, base, outside, subset_slots, room_of_suit = (
        plan[PLAN_SLOTS],
        plan[PLAN_ORDER],
        plan[PLAN_BASE],
        plan[PLAN_OUTSIDE],
        plan[PLAN_SUBSETS],
        plan[PLAN_ROOM_OF_SUIT],
    )
    n_constrained = 0
    for suit in range(N_SUITS):
        for o in range(MAX_PLAYERS):
            if (slots >> o) & 1 and (allowed_suits[o] >> suit) & 1:
                allowed_slots[suit] |= 1 << o
                room_of_suit[suit] += capacity[o]
        if free & SUIT_MASKS[suit] and allowed_slots[suit] != slots:
            i = n_constrained  # insertion sort by room, then by number of slots (subsets first)
            key = _order_key(room_of_suit[suit], allowed_slots[suit])
            while i > 0 and _order_key(room_of_suit[order[i - 1]], allowed_slots[order[i - 1]]) > key:
                order[i] = order[i - 1]
                i -= 1
            order[i] = suit
            n_constrained += 1
    # B_i bounds the room A_i of card i's slots: their room minus the earlier cards bound to
    # lie inside them, and the cards left minus the later cards bound to lie outside them
    nested = True
    for i in range(n_constrained):
        a = allowed_slots[order[i]]
        base[order[i]] = room_of_suit[order[i]]
        for j in range(n_constrained):
            b = allowed_slots[order[j]]
            count = np.int64(popcount(free & SUIT_MASKS[order[j]]))
            if j < i and b & ~a == 0:
                base[order[i]] -= count
            if j > i and b & a == 0:
                outside[order[i]] += count
            if j < i and b & ~a != 0 and a & ~b != 0:
                nested = False
    if not nested:
        for subset in range(1, 1 << n_constrained):
            for i in range(n_constrained):
                if (subset >> i) & 1:
                    subset_slots[subset] |= allowed_slots[order[i]]
    return n_constrained, nested


@njit
def sample_world(state, rules: RulesTuple, seat: np.int64, rng: np.uint64, world) -> np.uint64:
    """Copy ``state`` into ``world`` and re-deal every card ``seat`` cannot see; returns the rng.

    Reads only ``seat``'s information set. The world's other hands, kitty, piles, passes
    and seeds are rewritten to be mutually consistent, so any policy can play it out.
    Hot loops call ``sample_world_into`` with scratch from ``new_sampler_scratch`` instead.
    """
    plan, card_rows = new_sampler_scratch()
    return sample_world_into(state, rules, seat, rng, world, plan, card_rows)


@njit
def new_sampler_scratch():
    """The scratch arrays of ``sample_world_into`` (allocate once per decision, not per world)."""
    return np.zeros((PLAN_ROWS, NO_SUBSETS), dtype=np.int64), np.zeros(
        (CARD_ROWS, MAX_PLAYERS), dtype=np.uint64
    )


@njit
def sample_world_into(
    state, rules: RulesTuple, seat: np.int64, rng: np.uint64, world, plan, card_rows
) -> np.uint64:
    """``sample_world`` with caller-owned scratch (``new_sampler_scratch``): no allocation."""
    plan[:] = 0
    card_rows[:] = _ZERO
    copy_state(state, world)
    n = state.n_players
    size = hand_size(rules)
    playing = state.phase != PHASE_PASS
    kitty_slot = seat  # the seat's own slot stands for the kitty
    kitty_size = np.int64(popcount(deck_cards(rules))) - size * n
    kitty_taken = playing and state.trick_number > 0
    kitty_known = kitty_taken and state.trick_winners[0] == seat
    unseen = unseen_cards(state, rules, seat)

    must, dealt = card_rows[CARDS_MUST], card_rows[CARDS_DEALT]
    capacity, allowed_suits = plan[PLAN_CAPACITY], plan[PLAN_ALLOWED_SUITS]
    slots = 0
    for o in range(n):
        if o != seat:
            slots |= 1 << o
            capacity[o] = cards_left(state, size, o)
            allowed_suits[o] = ALL_SUITS & ~state.void_suits[o]
    kitty_open = kitty_size > 0 and not kitty_known
    if kitty_open:
        slots |= 1 << kitty_slot
        capacity[kitty_slot] = kitty_size
        allowed_suits[kitty_slot] = ALL_SUITS

    if playing and state.pass_offset != 0 and rules.pass_count > 0:
        must[(seat + state.pass_offset) % n] |= state.passed[seat] & unseen
    lead_hidden = playing and first_lead_hidden(rules)
    played_by = card_rows[CARDS_PLAYED_BY]
    if lead_hidden:  # checked on every proposal; the seat's own lowest club is all it knows
        cards_played_by(state, played_by)
        if state.trick_leaders[0] == seat and kitty_open:
            own_lowest = card_bit(lowest_card((state.hands[seat] | played_by[seat]) & CLUBS_MASK))
            must[kitty_slot] |= (own_lowest - _ONE) & CLUBS_MASK & unseen
    elif playing and state.first_lead_card != NO_CARD:
        lead_bit = card_bit(state.first_lead_card)
        must[state.trick_leaders[0]] |= lead_bit & unseen
        if kitty_open:  # the lowest club held opened the hand: lower clubs are in the kitty
            must[kitty_slot] |= (lead_bit - _ONE) & CLUBS_MASK & unseen
    points_in_kitty = np.int64(-1)
    if kitty_open and kitty_taken:
        points_in_kitty = kitty_points(state, rules)
        room = kitty_size - np.int64(popcount(must[kitty_slot]))
        cards, hearts = _decode_kitty(points_in_kitty, unseen & ~must[kitty_slot], room, rules)
        if hearts >= 0:
            must[kitty_slot] |= cards
            if hearts == 0:
                allowed_suits[kitty_slot] &= ~(1 << HEARTS)
            elif hearts == room - np.int64(popcount(cards)):
                allowed_suits[kitty_slot] = 1 << HEARTS

    free = unseen
    for o in range(MAX_PLAYERS):
        free &= ~must[o]
        capacity[o] -= np.int64(popcount(must[o]))
    n_constrained, nested = _plan(free, capacity, allowed_suits, slots, plan)

    for attempt in range(MAX_ATTEMPTS):
        rng, ok, ratio = _deal_once(
            free,
            must,
            capacity,
            slots,
            plan,
            n_constrained,
            nested,
            rng,
            dealt,
            plan[PLAN_ROOM],
            plan[PLAN_SLACK],
        )
        if not ok:
            continue
        if points_in_kitty >= 0 and card_points(dealt[kitty_slot], rules) != points_in_kitty:
            continue
        if (
            lead_hidden
            and lowest_club_holder(seat, state.hands[seat], dealt, played_by, n)[0]
            != (state.trick_leaders[0])
        ):
            continue  # rejection keeps the law uniform over the deals where the leader held it
        if nested:
            break
        if attempt >= MAX_EXACT_ATTEMPTS:  # rare: shuffle the proposal towards uniform instead
            rng = _mix_by_swaps(free, dealt, slots, allowed_suits, kitty_slot, points_in_kitty >= 0, rng)
            if (
                lead_hidden
                and lowest_club_holder(seat, state.hands[seat], dealt, played_by, n)[0]
                != (state.trick_leaders[0])
            ):
                continue
            break
        rng, u = random_unit(rng)
        if u < ratio:
            break

    for o in range(n):
        if o != seat:
            world.hands[o] = dealt[o]
    if lead_hidden:  # the world's own opening club, never the real one
        world.first_lead_card = lowest_club_holder(seat, state.hands[seat], dealt, played_by, n)[1]
    if kitty_open:
        world.kitty = dealt[kitty_slot]
    elif kitty_known:
        world.kitty = state.taken[seat] & ~state.played
    else:
        world.kitty = _ZERO
    _rewrite_hidden_fields(state, rules, seat, world, card_rows[CARDS_PLAYED_BY], card_rows[CARDS_TAKEN])
    rng, bits = next_u64(rng)  # fresh seeds: the real ones are hidden
    world.hand_seed = bits
    for s in range(MAX_PLAYERS):
        rng, bits = next_u64(rng)
        world.seat_seeds[s] = bits
    return rng


@njit
def world_fits(state, rules: RulesTuple, seat: np.int64, world) -> bool:
    """Whether ``world`` (from ``sample_world(state, rules, seat, ...)``) deals the cards ``seat``
    cannot see consistently with what it knows in ``state`` (the facts of the design note).

    Hands, kitty and played cards partition the deck; every other seat holds as many cards as
    it has left and none of a suit it showed void in; the kitty has its size; the seat's pass
    lies with the receiver until played; the first leader holds the first-lead card until it
    is played and every lower club lies in the kitty; a taken kitty carries its public points.
    ``sample_world`` cannot report an impossible information set itself: this is the check.
    """
    n = state.n_players
    size = hand_size(rules)
    deck = deck_cards(rules)
    seen = world.played | world.kitty
    count = np.int64(popcount(world.played)) + np.int64(popcount(world.kitty))
    for o in range(n):
        seen |= world.hands[o]
        count += np.int64(popcount(world.hands[o]))
        if o == seat:
            continue
        if np.int64(popcount(world.hands[o])) != cards_left(state, size, o):
            return False
        for suit in range(N_SUITS):
            if (state.void_suits[o] >> suit) & 1 and world.hands[o] & SUIT_MASKS[suit] != _ZERO:
                return False
    if seen != deck or count != np.int64(popcount(deck)):  # a card twice, missing or out of play
        return False
    if np.int64(popcount(world.kitty)) != np.int64(popcount(deck)) - size * n:
        return False
    if state.phase == PHASE_PASS:
        return True
    if state.pass_offset != 0 and rules.pass_count > 0:
        receiver = (seat + state.pass_offset) % n
        if state.passed[seat] & ~state.played & ~world.hands[receiver] != _ZERO:
            return False
    if first_lead_hidden(rules):
        played_by = np.zeros(MAX_PLAYERS, dtype=np.uint64)
        cards_played_by(state, played_by)
        holder, club = lowest_club_holder(seat, world.hands[seat], world.hands, played_by, n)
        if holder != state.trick_leaders[0] or world.first_lead_card != club:
            return False
    elif state.first_lead_card != NO_CARD:
        lead_bit = card_bit(state.first_lead_card)
        if (state.played | world.hands[state.trick_leaders[0]]) & lead_bit == _ZERO:
            return False
        if (lead_bit - _ONE) & CLUBS_MASK & deck & ~world.kitty != _ZERO:
            return False
    return state.trick_number == 0 or card_points(world.kitty, rules) == kitty_points(state, rules)


@njit
def _rewrite_hidden_fields(state, rules: RulesTuple, seat: np.int64, world, played_by, taken) -> None:
    """Piles, deals and passes of the other seats that agree with the world's hands
    (``played_by``, ``taken``: zeroed scratch rows)."""
    n = state.n_players
    if state.phase == PHASE_PASS:
        for o in range(n):
            if o != seat:
                world.dealt[o] = world.hands[o]
                world.passed[o] = _ZERO
                world.received[o] = _ZERO
        world.passes_made = state.passes_made & (1 << seat)  # the others pass in the world
        return
    trick = 0
    player = state.trick_leaders[0]
    position = 0
    for i in range(state.n_played):  # history is public: who played what, who won each trick
        bit = card_bit(state.history[i])
        played_by[player] |= bit
        if trick < state.trick_number:
            taken[state.trick_winners[trick]] |= bit
        player, position, trick = next_turn(state, i, player, position, trick)
    if state.trick_number > 0:
        taken[state.trick_winners[0]] |= world.kitty
        # the kitty went with the first trick: its points and its queen on the world's timeline
        # (the same as the state's, whose kitty carried the same public points, unless the state
        # was replayed from a history that did not know the kitty)
        world.point_tricks |= np.int64(card_points(world.kitty, rules) > 0)
        if world.kitty & QS_BIT:
            world.qs_trick = 0
    for o in range(n):
        world.taken[o] = taken[o]
    offset = state.pass_offset
    if offset == 0 or rules.pass_count == 0:
        for o in range(n):
            if o != seat:
                world.dealt[o] = world.hands[o] | played_by[o]
        return
    giver = (seat - offset) % n
    receiver = (seat + offset) % n
    world.received[receiver] = state.passed[seat]
    world.passed[giver] = state.received[seat]
    for r in range(n):
        g = (r - offset) % n
        if r == seat or g == seat:
            continue
        # unknown pass g -> r: say r received its highest-ranked cards (held or played since)
        holding = world.hands[r] | played_by[r]
        received = _ZERO
        for _ in range(rules.pass_count):
            bit = card_bit(highest_ranked_card(holding))
            received |= bit
            holding ^= bit
        world.received[r] = received
        world.passed[g] = received
    for o in range(n):
        if o != seat:
            world.dealt[o] = (world.hands[o] | played_by[o] | world.passed[o]) & ~world.received[o]
