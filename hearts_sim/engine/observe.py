"""A seat's information set copied out of a hand's record: what an agent outside the compiled
loop (Python code, an external engine) is given, in bulk.

``OBSERVED`` holds only what the seat may know (docs/rules.md): its own cards now, as dealt,
passed and received (once every seat has passed), the kitty if it took it, every card played
and by whom, each seat's points, the game scores, the public set-up, and its legal cards. No
field can hold another hand, so a row is safe to hand to any code (``Observation`` objects are
built from rows: ``hearts_sim.game.observation.observations_from``).
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.rules import MAX_PLAYERS, RulesTuple
from hearts_sim.engine.hand import legal_moves, next_turn
from hearts_sim.engine.state import MAX_CARDS_PLAYED, PHASE_PASS, PHASE_PLAY

i8, u8 = np.int64, np.uint64
OBSERVED = np.dtype(
    [
        ("seat", i8),
        ("phase", i8),  # PHASE_PASS or PHASE_PLAY: what the seat is asked for
        ("hand", u8),  # held now (in the pass phase: as dealt)
        ("dealt", u8),
        ("passed", u8),  # what it passed (0 until it has)
        ("received", u8),  # what it received (0 until every seat has passed)
        ("kitty", u8),  # the kitty's cards, once this seat has taken it
        ("legal", u8),  # the cards it may play now (play phase)
        ("pass_offset", i8),
        ("dealer", i8),
        ("hearts_broken", i8),
        ("n_played", i8),
        ("cards", i8, MAX_CARDS_PLAYED),  # the cards played, in order
        ("players", i8, MAX_CARDS_PLAYED),  # who played each
        ("points", i8, MAX_PLAYERS),
        ("game_scores", i8, MAX_PLAYERS),
    ]
)


@njit
def observe(state, rules: RulesTuple, seat: np.int64, out) -> None:
    """Write ``seat``'s information set in ``state`` into the ``OBSERVED`` record ``out``."""
    out.seat = seat
    out.phase = state.phase
    out.hand = state.hands[seat]
    out.dealt = state.dealt[seat]
    out.passed = state.passed[seat]
    exchanged = state.phase != PHASE_PASS
    out.received = state.received[seat] if exchanged else np.uint64(0)
    took_kitty = state.trick_number > 0 and state.trick_winners[0] == seat
    out.kitty = state.kitty if took_kitty else np.uint64(0)
    out.legal = legal_moves(state, rules) if state.phase == PHASE_PLAY else np.uint64(0)
    out.pass_offset = state.pass_offset
    out.dealer = state.dealer
    out.hearts_broken = state.hearts_broken
    out.n_played = state.n_played
    player = state.trick_leaders[0]
    position = 0
    trick = 0
    for i in range(state.n_played):
        out.cards[i] = state.history[i]
        out.players[i] = player
        player, position, trick = next_turn(state, i, player, position, trick)
    for s in range(MAX_PLAYERS):
        out.points[s] = state.points[s]
        out.game_scores[s] = state.game_scores[s]
