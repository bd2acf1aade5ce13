"""``rule``: a readable heuristic player: ducks, dumps the QS and high hearts, counts cards, handles moons.

Design note. Every decision is a handful of bitboard operations on the seat's information
set (its hand, the cards played, shown voids, points taken so far): no loops over cards
in play, so a rule-vs-rule hand costs little more than a random one and the policy can
serve as the rollout policy of the Monte Carlo agents. The plan, in order of priority:

* passing: the queen of spades and its guards (A, K) go when spades are short; a short
  suit is voided; otherwise the most dangerous cards (high hearts, high cards) go;
* following: duck with the highest card that still loses; when the trick is lost anyway
  (last to play with no points in it, or no card can duck) take it with the highest card;
* discarding: the QS (and Black Maria's KS, AS), the spade guards while the QS is out,
  then the highest heart or high card;
* leading: low, in the suit where the most unseen cards outrank it and nobody is void,
  or a low spade to flush the QS when the seat holds none of QS, KS, AS;
* moons: against an opponent holding every point taken (at least ``defend``): take a
  trick with points or the lead from it, lead the highest heart, keep hearts off its
  tricks; a seat holding ``commit`` points while nobody else scored, or dealt a hand of
  moon strength ``shoot``, plays to take every trick;
* Omnibus: the jack of diamonds is kept when passing and taken when a trick offers it;
* ``careless``: the chance, per card, of a beginner's play instead: the lowest card when
  leading or following (it looks safe, and wastes the low cards needed to duck later).
  Discards stay sensible (the QS and high hearts still go), so the slips are human-like,
  never absurd; the easy level is made of them.

Defaults were tuned in duplicate against the previous defaults and against random
(``void_bonus``, ``commit``, ``defend`` mattered most; see the report of this change).

``seed`` is only drawn on for ``careless`` > 0; otherwise the policy is deterministic.
"""

from __future__ import annotations

import numpy as np

from agents.kinds import Parameter, Params, PolicyKind, param_indices
from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import (
    ACE,
    AS_BIT,
    HEARTS,
    HEARTS_MASK,
    JACK,
    JD,
    JD_BIT,
    KS_BIT,
    N_RANKS,
    N_SUITS,
    POINTS_AS,
    POINTS_KS,
    POINTS_QS,
    QS,
    QS_BIT,
    RANK_COLUMN,
    SPADES,
    SPADES_MASK,
    SUIT_MASKS,
    card_bit,
    highest_card,
    highest_ranked_card,
    lowest_card,
    lowest_ranked_card,
    popcount,
    rank_of,
    suit_of,
)
from hearts_sim.core.rules import MAX_POINTS, MOON_OFF, RulesTuple
from hearts_sim.engine.hand import deck_cards, point_cards, point_holder
from hearts_sim.engine.rng import random_unit
from hearts_sim.engine.state import NO_SEAT

PARAMETERS = (
    Parameter(
        "spade_guard", 3, "spades below the queen needed to keep QS, KS, AS when passing", low=0, high=13
    ),
    Parameter(
        "void_bonus", 8.0, "passing: extra danger of a card whose suit the pass can void", low=-100, high=100
    ),
    Parameter(
        "heart_bonus", 1.0, "passing: extra danger of a heart over a card of equal rank", low=-100, high=100
    ),
    Parameter(
        "shoot", 99.0, "moon strength of the dealt hand to try shooting (above 41 = never)", low=0, high=100
    ),
    Parameter(
        "commit",
        8,
        "points held while nobody else has any, to play for every trick (0 = never)",
        low=0,
        high=MAX_POINTS,
    ),
    Parameter(
        "defend",
        16,
        "points one opponent holds, all those taken, to trigger defence (0 = off)",
        low=0,
        high=MAX_POINTS,
    ),
    Parameter(
        "flush", 1, "lead low spades to flush the QS when holding none of QS, KS, AS (0 = off)", low=0, high=1
    ),
    Parameter(
        "void_lead", 3.0, "leading: penalty of a suit per opponent shown void in it", low=-100, high=100
    ),
    Parameter(
        "careless",
        0.0,
        "chance per card of a beginner's play: the lowest card when leading or following",
        low=0,
        high=1,
    ),
)
P = param_indices(PARAMETERS)

BYTE, BYTE_MASK = 8, 0xFF  # void_counts packs one count per byte
NO_MOON, SHOOTING = -1, -2  # moon_status, besides the seat of a threatening opponent
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
TEN = 8  # rank index of the ten: cards above it count towards a moon
MAX_MOON_STRENGTH = 41  # the strongest 13 cards (AH KH AS AD AC QH KS KD KC JH QS QD QC)
SPADE_DANGER = 8.0  # passing: AS/KS/QS with too few guards outrank every other card
LOW_SPADE_KEEP = 6.0  # passing: spades below the queen protect it: keep them
QS_PASS_DANGER = 30.0  # passing: the unguarded queen goes first
JD_KEEP = -100.0  # Omnibus: the jack of diamonds is worth keeping


# ---------------------------------------------------------------- small bit helpers
@njit
def below(card: np.int64) -> np.uint64:
    """The cards of ``card``'s suit ranked below it."""
    return (card_bit(card) - _ONE) & SUIT_MASKS[suit_of(card)]


@njit
def above(card: np.int64) -> np.uint64:
    """The cards of ``card``'s suit ranked above it."""
    return ~((card_bit(card) << _ONE) - _ONE) & SUIT_MASKS[suit_of(card)]


@njit
def prefer(cards: np.uint64, avoid: np.uint64) -> np.uint64:
    """``cards`` without ``avoid``, unless that leaves nothing."""
    rest = cards & ~avoid
    return rest if rest else cards


@njit
def moon_strength(hand: np.uint64) -> np.int64:
    """High cards (J=1 .. A=4 in every suit) plus the number of hearts: the shooting potential."""
    strength = np.int64(popcount(hand & HEARTS_MASK))
    for rank in range(JACK, ACE + 1):
        strength += (rank - TEN) * np.int64(popcount(hand & (RANK_COLUMN << np.uint64(rank))))
    return strength


@njit
def void_counts(state, seat: np.int64) -> np.int64:
    """How many other seats have shown void in each suit: one byte per suit (suit s at bits 8s..8s+7).

    Each seat's 4-bit void set is spread to one bit per byte, so a plain sum counts per suit."""
    counts = np.int64(0)
    for o in range(state.n_players):
        if o != seat:
            v = state.void_suits[o]
            counts += (v & 1) | ((v & 2) << 7) | ((v & 4) << 14) | ((v & 8) << 21)
    return counts


@njit
def void_count(counts: np.int64, suit: np.int64) -> np.int64:
    """One suit's entry of ``void_counts``."""
    return (counts >> (BYTE * suit)) & BYTE_MASK


@njit
def value_of(cards: np.uint64, points: np.uint64, jd_bonus: np.int64) -> np.int64:
    """Penalty points in ``cards`` (``points`` names the point cards) plus the Omnibus jack."""
    value = np.int64(popcount(cards & HEARTS_MASK))
    if cards & points & ~HEARTS_MASK:
        value += POINTS_QS * np.int64((cards & QS_BIT) != 0)
        value += POINTS_KS * np.int64((cards & points & KS_BIT) != 0)
        value += POINTS_AS * np.int64((cards & points & AS_BIT) != 0)
    if cards & JD_BIT:
        value += jd_bonus
    return value


@njit
def moon_status(state, seat: np.int64, shoot: np.float64, commit: np.float64, defend: np.float64) -> np.int64:
    """One pass over the points taken: ``SHOOTING`` when this seat plays for the moon (a strong
    dealt hand or ``commit`` points, and nobody else has scored); the seat of an opponent
    holding every point taken, at least ``defend`` of them; else ``NO_MOON``."""
    mine = state.points[seat]
    holder, total = point_holder(state)
    if total == mine:  # nobody else has scored
        if (commit > 0 and mine >= commit) or (
            shoot <= MAX_MOON_STRENGTH and moon_strength(state.dealt[seat]) >= shoot
        ):
            return np.int64(SHOOTING)
        return np.int64(NO_MOON)
    if defend > 0 and mine == 0 and total >= defend and holder != NO_SEAT:
        return holder
    return np.int64(NO_MOON)


# ---------------------------------------------------------------- passing
@njit
def _pass_candidate(
    cards: np.uint64,
    suit: np.int64,
    picks_left: np.int64,
    spade_guard: np.float64,
    void_bonus: np.float64,
    heart_bonus: np.float64,
    keep_jd: bool,
):
    """The card of ``suit`` (``cards``) most worth passing, and how much: (card, danger)."""
    top = highest_card(cards)
    danger = np.float64(rank_of(top))
    if suit == SPADES:
        short = np.float64(popcount(cards & below(QS))) < spade_guard
        if cards & QS_BIT and short:
            return np.int64(QS), QS_PASS_DANGER
        if top > QS and short and not cards & QS_BIT:
            danger += SPADE_DANGER
        else:  # guarded high spades stay: the candidate is a low spade, kept as a guard
            top = highest_card(cards & below(QS))
            if top < 0:
                return top, -np.inf
            danger = rank_of(top) - LOW_SPADE_KEEP
    elif suit == HEARTS:
        danger += heart_bonus
    if keep_jd and top == JD:
        return top, JD_KEEP
    if suit != HEARTS and np.int64(popcount(cards)) <= picks_left:
        danger += void_bonus
    return top, danger


@njit
def _choose_pass(
    hand: np.uint64,
    count: np.int64,
    spade_guard: np.float64,
    void_bonus: np.float64,
    heart_bonus: np.float64,
    shoot: np.float64,
    keep_jd: bool,
) -> np.uint64:
    chosen = _ZERO
    if moon_strength(hand) >= shoot:  # keep the hearts and high cards: pass low ones
        for _ in range(count):
            card = lowest_ranked_card(prefer(hand, HEARTS_MASK))
            chosen |= card_bit(card)
            hand ^= card_bit(card)
        return chosen
    for pick in range(count):
        best_card = np.int64(-1)
        best = -np.inf
        for suit in range(N_SUITS):
            cards = hand & SUIT_MASKS[suit]
            if cards:
                card, danger = _pass_candidate(
                    cards, suit, count - pick, spade_guard, void_bonus, heart_bonus, keep_jd
                )
                if card >= 0 and danger > best:
                    best, best_card = danger, card
        if best_card < 0:
            best_card = highest_ranked_card(hand)
        chosen |= card_bit(best_card)
        hand ^= card_bit(best_card)
    return chosen


@njit_inline
def rule_pass(params: Params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64) -> np.uint64:
    """``pass_count`` cards of the dealt hand, the most dangerous first (see the module note).

    Inlined into the dispatcher, so only scalars cross a call (tuple arguments cost ~30 ns)."""
    return _choose_pass(
        state.dealt[seat],
        rules.pass_count,
        params[P.spade_guard],
        params[P.void_bonus],
        params[P.heart_bonus],
        params[P.shoot] if rules.moon != MOON_OFF else np.inf,
        rules.jd_bonus != 0,
    )


# ---------------------------------------------------------------- playing
@njit
def _lead(
    state,
    seat: np.int64,
    legal: np.uint64,
    deck: np.uint64,
    moon: np.int64,
    flush: np.float64,
    void_lead: np.float64,
) -> np.int64:
    """Lead low where the most unseen cards outrank it; flush the QS with low spades when safe."""
    hand = state.hands[seat]
    unseen = deck & ~state.played & ~hand
    if moon == SHOOTING:  # cash a sure winner, else the highest card
        winners = _ZERO
        for suit in range(N_SUITS):
            top = highest_card(legal & SUIT_MASKS[suit])
            if top >= 0 and not unseen & above(top):
                winners |= card_bit(top)
        return highest_ranked_card(winners if winners else legal)
    if moon >= 0:  # the highest heart: whoever beats the shooter stops it
        hearts = legal & HEARTS_MASK
        return highest_card(hearts) if hearts else highest_ranked_card(legal)
    spades = legal & SPADES_MASK
    voids = void_counts(state, seat)
    if (
        flush > 0
        and spades
        and not hand & (QS_BIT | KS_BIT | AS_BIT)
        and unseen & QS_BIT
        and void_count(voids, SPADES) == 0
    ):
        return lowest_card(spades)
    best_card = np.int64(-1)
    best = -np.inf
    for suit in range(N_SUITS):
        cards = legal & SUIT_MASKS[suit]
        if not cards:
            continue
        low = lowest_card(cards)
        outranking = np.float64(popcount(unseen & above(low)))
        score = outranking - void_lead * void_count(voids, suit)
        if outranking == 0:
            score -= N_RANKS  # a sure winner: whoever is void dumps points on it
        if suit == SPADES and hand & QS_BIT:
            score -= N_RANKS  # leading into the queen's suit invites it back
        if suit == HEARTS:
            score -= 1.0
        if score > best:
            best, best_card = score, low
    return best_card


@njit
def _follow(
    state,
    seat: np.int64,
    legal: np.uint64,
    led: np.int64,
    points: np.uint64,
    jd_bonus: np.int64,
    moon: np.int64,
) -> np.int64:
    """Duck with the highest card that still loses; else take the trick as cheaply as it allows."""
    winning = highest_card(state.trick_mask & SUIT_MASKS[led])
    ducks = legal & below(winning)
    last = state.n_in_trick == state.n_players - 1
    value = value_of(state.trick_mask, points, jd_bonus)
    if moon == SHOOTING:
        winners = legal & ~ducks
        return highest_card(winners) if winners else lowest_card(legal)
    if moon >= 0 and legal & ~ducks and (value > 0 or state.trick_cards[moon] == winning):
        return highest_card(legal)  # take the trick from the shooter: a point stops it, the lead helps
    if value < 0 and legal & ~ducks:
        return highest_card(legal)  # Omnibus: the jack of diamonds is in it, worth taking
    if last and value <= 0:
        return highest_card(prefer(legal, points))  # nothing to lose: shed the highest card
    if jd_bonus != 0 and legal & JD_BIT and winning < JD and last and value < -jd_bonus:
        return np.int64(JD)  # Omnibus: the jack wins the trick, worth more than its points
    if ducks:
        if ducks & QS_BIT:
            return np.int64(QS)  # under the king or ace of spades
        return highest_card(ducks)
    if state.trick_number == 0 or last or (value <= 0 and void_count(void_counts(state, seat), led) == 0):
        return highest_card(prefer(legal, points))  # the trick is ours anyway: shed the highest card
    return lowest_card(legal)  # points may come: leave room to be overtaken


@njit
def _discard(
    state,
    seat: np.int64,
    legal: np.uint64,
    points: np.uint64,
    jd_bonus: np.int64,
    moon: np.int64,
) -> np.int64:
    """Void in the led suit: dump the QS, then the dangerous spades, then the highest heart or card."""
    if moon == SHOOTING:
        return lowest_ranked_card(prefer(legal, points))
    if moon >= 0:
        led = suit_of(state.trick_cards[state.leader])
        winning = highest_card(state.trick_mask & SUIT_MASKS[led])
        if state.trick_cards[moon] != winning and state.trick_cards[moon] >= 0 and legal & HEARTS_MASK:
            return highest_card(legal & HEARTS_MASK)  # a heart to another seat splits the points
        return highest_ranked_card(prefer(legal, points))  # no points for the shooter
    if legal & QS_BIT:
        return np.int64(QS)
    penalty_spades = legal & points & (KS_BIT | AS_BIT)  # Black Maria
    if penalty_spades:
        return highest_card(penalty_spades)
    guards = legal & (KS_BIT | AS_BIT)
    if guards and not state.played & QS_BIT:
        return highest_card(guards)
    options = prefer(legal, JD_BIT) if jd_bonus != 0 else legal
    heart = highest_card(options & HEARTS_MASK)
    other = highest_ranked_card(options & ~HEARTS_MASK)
    if other < 0 or (heart >= 0 and rank_of(heart) >= rank_of(other)):
        return heart
    return other


@njit_inline
def rule_play(
    params: Params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64
) -> np.int64:
    """The heuristic card (see the module note); deterministic.

    Inlined into the dispatcher, so only scalars cross a call (tuple arguments cost ~30 ns)."""
    if popcount(legal) == 1:
        return lowest_card(legal)
    points = point_cards(rules)
    moon = NO_MOON
    if rules.moon != MOON_OFF:
        moon = moon_status(state, seat, params[P.shoot], params[P.commit], params[P.defend])
    careless = params[P.careless] > 0 and random_unit(seed)[1] < params[P.careless]
    if state.n_in_trick == 0:
        if careless:
            return lowest_ranked_card(legal)
        return _lead(state, seat, legal, deck_cards(rules), moon, params[P.flush], params[P.void_lead])
    led = suit_of(state.trick_cards[state.leader])
    if legal & SUIT_MASKS[led]:
        if careless:
            return lowest_card(legal)
        return _follow(state, seat, legal, led, points, rules.jd_bonus, moon)
    return _discard(state, seat, legal, points, rules.jd_bonus, moon)


KIND = PolicyKind(
    "rule",
    "a readable heuristic player: ducks, dumps QS and high hearts, counts cards, handles moons",
    PARAMETERS,
    play=rule_play,
    pass_cards=rule_pass,
)
DEFAULT_PARAMS = KIND.default_params()
