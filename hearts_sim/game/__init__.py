"""Layer 3, the Python stepping API on the engine's kernels: ``HandState`` (one hand), ``Game``
(hands to the target score) and ``Observation`` (what one seat may know)."""

from hearts_sim.game.hand_state import Game, HandState, IllegalMoveError
from hearts_sim.game.observation import HistoryError, Observation

__all__ = ["Game", "HandState", "HistoryError", "IllegalMoveError", "Observation"]
