"""OpenSpiel's ``hearts`` as a speed peer: random-bot hands per second through ``pyspiel.evaluate_bots``."""

from __future__ import annotations

import time


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
