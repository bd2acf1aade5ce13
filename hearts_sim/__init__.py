"""hearts_sim: a bitboard, numba-accelerated Hearts engine for game-AI research."""

from hearts_sim.cards import CardSet, card_str, parse_card
from hearts_sim.game import HandState, IllegalMoveError, Observation
from hearts_sim.rules import PRESETS, Rules, RulesError
from hearts_sim.simulate import simulate, simulate_games

__version__ = "0.1.0"

__all__ = [
    "PRESETS",
    "CardSet",
    "HandState",
    "IllegalMoveError",
    "Observation",
    "Rules",
    "RulesError",
    "card_str",
    "parse_card",
    "simulate",
    "simulate_games",
]
