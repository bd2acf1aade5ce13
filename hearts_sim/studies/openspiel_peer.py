"""OpenSpiel's ``hearts`` as a peer: random-bot hands per second through ``pyspiel.evaluate_bots``,
and its encoding of cards and pass directions as actions, which the conformance tests and the
match against its IS-MCTS (``experiments/openspiel_ismcts_match.py``) translate with."""

from __future__ import annotations

import time

# our suit index -> OpenSpiel's (self-inverse: it orders spades and hearts the other way)
_SUIT_SWAP = (0, 1, 3, 2)
# a pass direction -> OpenSpiel's chance action choosing it at the start of a hand
DIRECTION_TO_ACTION = {"none": 0, "left": 1, "across": 2, "right": 3}
ACTION_TO_DIRECTION = {action: direction for direction, action in DIRECTION_TO_ACTION.items()}


def our_to_os(card: int) -> int:
    """Our card id (suit*13+rank, S=2, H=3) -> OpenSpiel action id (rank*4+suit, H=2, S=3)."""
    suit, rank = divmod(int(card), 13)
    return rank * 4 + _SUIT_SWAP[suit]


def os_to_our(action: int) -> int:
    """OpenSpiel card action id -> our card id."""
    rank, os_suit = divmod(int(action), 4)
    return _SUIT_SWAP[os_suit] * 13 + rank


def openspiel_random_hands_per_second(n_hands: int, seed: int = 0) -> float | None:
    """Hands/s of OpenSpiel ``hearts`` with four uniform random bots (timing only the n_hands
    ``evaluate_bots`` calls); None if ``pyspiel`` is not importable."""
    try:
        import pyspiel
    except ImportError:
        return None
    if n_hands <= 0:
        raise ValueError(f"n_hands={n_hands}: need at least one hand")
    game = pyspiel.load_game("hearts")
    bots = [pyspiel.make_uniform_random_bot(p, seed + p) for p in range(game.num_players())]
    start = time.perf_counter()
    for i in range(n_hands):
        pyspiel.evaluate_bots(game.new_initial_state(), bots, seed + i)
    return n_hands / (time.perf_counter() - start)
