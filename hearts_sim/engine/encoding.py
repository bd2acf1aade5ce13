"""The observation of learning environments and learned agents: one kernel from a ``HAND_STATE``
record to a fixed-length float32 vector of what one seat may know, and the cards it may pick now.

Design note. Every environment of ``hearts_sim.env`` and the ``net`` agent call
``encode_observation``, so a policy trained in any of them plays the same inputs in the arena.
It reads only the seat's information set (docs/rules.md): its own hand, dealt, passed and
received cards, the kitty once it took it, the public history and tallies, and the rules; never
another hand, the kitty before it is taken, or another seat's pass. Seat blocks are relative:
slot k describes seat (seat + k) % n, so a policy sees itself in slot 0 whatever its seat and
table size, and the slots past n stay zero; one length serves 3, 4 and 5 players. Every value
lies in [0, 1] (tallies are divided by their largest value).

A pass is chosen card by card in the environments (as OpenSpiel does) but recorded by the
engine only when complete (``engine.hand.pass_cards``), so the cards picked so far travel
beside the record as ``pending``.

The layout, one row per field (``OBSERVATION_FIELDS``; the README documents it too):
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import N_CARDS, N_SUITS, NO_CARD, lowest_card
from hearts_sim.core.rules import (
    DECK_KITTY,
    MAX_PLAYERS,
    MIN_PLAYERS,
    MOON_OFF,
    MOON_SELF_MINUS,
    KernelRules,
    RulesTuple,
    offset_direction,
)
from hearts_sim.engine.hand import hand_size, legal_moves, moon_total, next_turn
from hearts_sim.engine.state import PHASE_PASS, PHASE_PLAY

# (name, length, meaning): the vector is these fields in this order
OBSERVATION_FIELDS: tuple[tuple[str, int, str], ...] = (
    ("hand", N_CARDS, "cards held now (while passing: less the cards picked to pass)"),
    ("passed", N_CARDS, "cards this seat passed (while passing: picked so far)"),
    ("received", N_CARDS, "cards this seat received (once every seat has passed)"),
    ("kitty", N_CARDS, "the kitty's cards, once this seat has taken it (kitty mode)"),
    ("played", MAX_PLAYERS * N_CARDS, "cards played this hand, 52 per relative seat (slot 0: this seat)"),
    ("trick", MAX_PLAYERS * N_CARDS, "cards in the current trick, 52 per relative seat"),
    ("leader", MAX_PLAYERS, "the relative seat that leads the current trick (one-hot)"),
    ("voids", MAX_PLAYERS * N_SUITS, "suits (C, D, S, H) each relative seat has shown void in"),
    ("points", MAX_PLAYERS, "raw penalty points taken this hand per relative seat / the moon total"),
    ("tricks", MAX_PLAYERS, "tricks won this hand per relative seat / the hand size"),
    ("pass_direction", 4, "this hand's pass direction: left, right, across, none (one-hot)"),
    ("phase", 2, "passing, playing (one-hot; zeros once the hand is over)"),
    ("hearts_broken", 1, "1 once hearts are broken"),
    ("trick_number", 1, "tricks completed / the hand size"),
    ("players", MAX_PLAYERS - MIN_PLAYERS + 1, "table size: 3, 4, 5 players (one-hot)"),
    (
        "rules",
        9,
        "switches: kitty deck, black_maria, jd_bonus on, avoid_all_tricks_bonus on, qs_breaks_hearts, "
        "must_break_hearts, no_points_first_trick, moon self_minus, moon off",
    ),
)


def _offsets() -> dict[str, int]:
    offsets, at = {}, 0
    for name, length, _ in OBSERVATION_FIELDS:
        offsets[name] = at
        at += length
    offsets["end"] = at
    return offsets


FIELD_OFFSETS = _offsets()
OBS_SIZE = FIELD_OFFSETS["end"]
__doc__ = (__doc__ or "") + "\n".join(
    f"    {name:<15}{FIELD_OFFSETS[name]:>4} +{length:>3}  {meaning}"
    for name, length, meaning in OBSERVATION_FIELDS
)

# the offsets as plain ints: numba freezes them into the kernels
_HAND, _PASSED, _RECEIVED, _KITTY = (FIELD_OFFSETS[k] for k in ("hand", "passed", "received", "kitty"))
_PLAYED, _TRICK, _LEADER, _VOIDS = (FIELD_OFFSETS[k] for k in ("played", "trick", "leader", "voids"))
_POINTS, _TRICKS, _DIRECTION, _PHASE = (
    FIELD_OFFSETS[k] for k in ("points", "tricks", "pass_direction", "phase")
)
_BROKEN, _TRICK_NUMBER = FIELD_OFFSETS["hearts_broken"], FIELD_OFFSETS["trick_number"]
_PLAYERS, _RULES = FIELD_OFFSETS["players"], FIELD_OFFSETS["rules"]
_ZERO, _ONE = np.uint64(0), np.uint64(1)


@njit_inline
def _write_cards(out, base: np.int64, cards: np.uint64) -> None:
    """1.0 at ``base + card`` for every card of a bitboard (one store per card, lowest first)."""
    while cards:
        out[base + lowest_card(cards)] = 1.0
        cards &= cards - _ONE  # drop the lowest card


@njit_inline
def _relative(seat: np.int64, observer: np.int64, n: np.int64) -> np.int64:
    """The slot of ``seat`` seen from ``observer``: 0 for the observer, then in play order."""
    return seat - observer if seat >= observer else seat - observer + n


@njit
def action_cards(state, rules: RulesTuple, seat: np.int64, pending: np.uint64) -> np.uint64:
    """The cards ``seat`` may pick now: while passing (and not yet passed), any card held and not
    picked yet; while playing, its legal cards when it is to play; otherwise none."""
    if state.phase == PHASE_PASS:
        if (state.passes_made >> seat) & 1:
            return _ZERO
        return state.hands[seat] & ~pending
    if state.phase == PHASE_PLAY and state.to_play == seat:
        return legal_moves(state, rules)
    return _ZERO


@njit
def encode_observation(state, rules: RulesTuple, seat: np.int64, pending: np.uint64, out) -> None:
    """Write ``seat``'s observation of ``state`` into the float32 row ``out`` (``OBS_SIZE`` long);
    ``pending`` holds the cards it has picked toward a pass not yet recorded."""
    out[:] = 0.0
    n = state.n_players
    passing = state.phase == PHASE_PASS
    exchanged = not passing
    _write_cards(out, _HAND, state.hands[seat] & ~(pending | (state.passed[seat] if passing else _ZERO)))
    _write_cards(out, _PASSED, state.passed[seat] | pending)
    if exchanged:
        _write_cards(out, _RECEIVED, state.received[seat])
        if state.trick_number > 0 and state.trick_winners[0] == seat:
            _write_cards(out, _KITTY, state.kitty)
        # every card played, by the seat that played it
        player, position, trick = state.trick_leaders[0], 0, 0
        for i in range(state.n_played):
            out[_PLAYED + _relative(player, seat, n) * N_CARDS + state.history[i]] = 1.0
            player, position, trick = next_turn(state, i, player, position, trick)
        for s in range(n):
            slot = _relative(s, seat, n)
            card = state.trick_cards[s]
            if card != NO_CARD:
                out[_TRICK + slot * N_CARDS + card] = 1.0
            for suit in range(N_SUITS):
                out[_VOIDS + slot * N_SUITS + suit] = (state.void_suits[s] >> suit) & 1
        if state.phase == PHASE_PLAY:
            out[_LEADER + _relative(state.leader, seat, n)] = 1.0
    total = np.float32(moon_total(rules))
    size = np.float32(hand_size(rules))
    for s in range(n):
        slot = _relative(s, seat, n)
        out[_POINTS + slot] = np.float32(state.points[s]) / total
        out[_TRICKS + slot] = np.float32(state.tricks_won[s]) / size
    out[_DIRECTION + offset_direction(state.pass_offset, n)] = 1.0
    if passing:
        out[_PHASE] = 1.0
    elif state.phase == PHASE_PLAY:
        out[_PHASE + 1] = 1.0
    out[_BROKEN] = state.hearts_broken
    out[_TRICK_NUMBER] = np.float32(state.trick_number) / size
    out[_PLAYERS + n - MIN_PLAYERS] = 1.0
    out[_RULES + 0] = rules.deck_mode == DECK_KITTY
    out[_RULES + 1] = rules.black_maria
    out[_RULES + 2] = rules.jd_bonus != 0
    out[_RULES + 3] = rules.avoid_all_tricks_bonus != 0
    out[_RULES + 4] = rules.qs_breaks_hearts
    out[_RULES + 5] = rules.must_break_hearts
    out[_RULES + 6] = rules.no_points_first_trick
    out[_RULES + 7] = rules.moon == MOON_SELF_MINUS
    out[_RULES + 8] = rules.moon == MOON_OFF


@njit
def write_action_mask(cards: np.uint64, out) -> None:
    """The 52 flags of a card set into the int8 row ``out``."""
    out[:] = 0
    while cards:
        out[lowest_card(cards)] = 1
        cards &= cards - _ONE


@njit
def encode_seats(states, rule_values, slots, seats, pending, observations, masks) -> None:
    """Row ``i`` of ``observations`` and ``masks``: seat ``seats[i]``'s view of ``states[slots[i]]``
    (``pending[i]`` picked toward its pass) and the cards it may pick, for a batch of tables'
    waiting seats at once (``hearts_sim.env.PolicyAgent`` at a table)."""
    rules = KernelRules(*rule_values)
    for i in range(slots.shape[0]):
        state = states[slots[i]]
        encode_observation(state, rules, seats[i], pending[i], observations[i])
        write_action_mask(action_cards(state, rules, seats[i], pending[i]), masks[i])
