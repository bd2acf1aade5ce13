"""The per-hand state: one numpy record with named fields, shared by every kernel.

A record (not a tuple of locals) so that the batched loop, the Python ``HandState``
and the agents all read the same named layout; numba compiles field access to plain
loads and stores. Arrays are sized for the largest table (5 players, 17 tricks).
"""

from __future__ import annotations

import numpy as np

from hearts_sim.core.rules import MAX_PLAYERS

MAX_TRICKS = 17  # 3 players, kitty mode: 17 cards each
# The records pack every trick's winner into one integer (``pack_trick_winners``): trick t's
# seat in bits 3t .. 3t+2, NO_TRICK past the hand's last trick (17 x 3 bits fit 64).
TRICK_BITS, NO_TRICK = 3, 7
MAX_CARDS_PLAYED = 52

PHASE_PASS, PHASE_PLAY, PHASE_DONE = 0, 1, 2
PHASE_NAMES = ("pass", "play", "done")

NO_SEAT = -1
NO_SUIT = -1  # no suit led yet (the trick's first card is still to come)

u8, i8 = np.uint64, np.int64
HAND_STATE = np.dtype(
    [
        # cards, one bitboard per seat
        ("hands", u8, MAX_PLAYERS),  # held now
        ("dealt", u8, MAX_PLAYERS),  # as dealt, before passing
        ("passed", u8, MAX_PLAYERS),  # the cards this seat passed
        ("received", u8, MAX_PLAYERS),  # the cards this seat received
        ("taken", u8, MAX_PLAYERS),  # cards won in tricks, plus the kitty for its taker
        ("kitty", u8),  # face-down cards (kitty mode)
        ("played", u8),  # every card played so far
        ("trick_mask", u8),  # cards in the current trick
        # the current trick
        ("trick_cards", i8, MAX_PLAYERS),  # card of each seat in the current trick, or NO_CARD
        ("leader", i8),  # who led the current trick
        ("to_play", i8),  # whose turn it is (play phase)
        ("n_in_trick", i8),
        ("trick_number", i8),  # 0-based
        # history (public): cards in play order and the leader of every trick
        ("history", i8, MAX_CARDS_PLAYED),
        ("trick_leaders", i8, MAX_TRICKS),
        ("trick_winners", i8, MAX_TRICKS),
        ("n_played", i8),
        # public inferences and tallies
        ("void_suits", i8, MAX_PLAYERS),  # bit s: the seat failed to follow suit s
        ("tricks_won", i8, MAX_PLAYERS),
        ("points", i8, MAX_PLAYERS),  # raw penalty points taken
        ("scores", i8, MAX_PLAYERS),  # the hand's final score, set when the hand ends
        ("hearts_broken", i8),
        ("hearts_broken_trick", i8),  # trick in which hearts were broken, -1 if never
        ("point_tricks", i8),  # bit t: trick t (with the kitty, for trick 0) carried penalty points
        ("qs_trick", i8),  # the trick that took the queen of spades (0 if in the kitty), -1 if none yet
        # set-up
        ("n_players", i8),
        ("phase", i8),
        ("pass_offset", i8),  # the receiver of seat s is (s + pass_offset) % n; 0: no pass
        ("passes_made", i8),  # bit s: seat s has passed
        ("dealer", i8),
        ("first_lead_card", i8),  # the card that must open the hand, NO_CARD if any lead
        ("hand_seed", u8),
        ("seat_seeds", u8, MAX_PLAYERS),  # per-seat stream bases for agent decisions
        ("game_scores", i8, MAX_PLAYERS),  # totals before this hand (zero for single hands)
        # outcome
        ("moon_shooter", i8),
        ("qs_taker", i8),
        ("jd_taker", i8),
    ],
    align=True,
)


def new_states(count: int) -> np.ndarray:
    """``count`` zeroed hand states (kernels fill them with ``start_hand``)."""
    return np.zeros(count, dtype=HAND_STATE)
