"""hearts_sim: a bitboard, numba-accelerated Hearts engine for game-AI research.

The folders are the layers, lowest first; a module imports only from its own layer and the
ones below it (``tests/test_structure.py`` enforces it)::

    hearts_sim._numba      the numba flags, set once
    hearts_sim.core        the vocabulary: cards as bits, the rules and their switches
    hearts_sim.engine      numba kernels: a hand's rules on a record, seeding, the sampler
    hearts_sim.game        the Python stepping API: HandState, Game, Observation
    agents                 policies (a top-level package), dispatched by integer code
    hearts_sim.selfplay    batched self-play loops, their records, simulate()
    hearts_sim.env         learning environments (PettingZoo, Gymnasium, a batched numba VectorEnv)
    hearts_sim.studies     tournaments, statistics, tuning, levels, analysis, reports, bench
                           (its analysis also by the short name hearts_sim.analysis)
    hearts_sim.apps        the command line, the move server, the terminal game

The names below are exported lazily (PEP 562), so importing a low layer (``agents`` imports
``hearts_sim.core``) never loads a high one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# every run's manifest keeps it (README, Compatibility of runs): 0.2.0 since manifests keep
# played_as and resumes check a whole chunk (2026-12-07); 0.1.0 before, for every earlier format
__version__ = "0.3.0"

_EXPORTS = {
    "CardSet": "hearts_sim.core.cards",
    "card_str": "hearts_sim.core.cards",
    "parse_card": "hearts_sim.core.cards",
    "PRESETS": "hearts_sim.core.rules",
    "Rules": "hearts_sim.core.rules",
    "RulesError": "hearts_sim.core.rules",
    "Game": "hearts_sim.game.hand_state",
    "HandState": "hearts_sim.game.hand_state",
    "IllegalMoveError": "hearts_sim.game.hand_state",
    "HistoryError": "hearts_sim.game.observation",
    "Observation": "hearts_sim.game.observation",
    "simulate": "hearts_sim.selfplay.simulate",
    "simulate_games": "hearts_sim.selfplay.simulate",
    "combine_runs": "hearts_sim.studies.tournament",
    "make_config": "hearts_sim.studies.tournament",
    "run_tournament": "hearts_sim.studies.tournament",
}
_MODULES = {"analysis": "hearts_sim.analysis"}  # ``hearts_sim.studies.analysis`` by its short name

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the lazy names, for type checkers
    from hearts_sim.core.cards import CardSet, card_str, parse_card  # noqa: F401
    from hearts_sim.core.rules import PRESETS, Rules, RulesError  # noqa: F401
    from hearts_sim.game.hand_state import Game, HandState, IllegalMoveError  # noqa: F401
    from hearts_sim.game.observation import HistoryError, Observation  # noqa: F401
    from hearts_sim.selfplay.simulate import simulate, simulate_games  # noqa: F401
    from hearts_sim.studies import analysis  # noqa: F401
    from hearts_sim.studies.tournament import combine_runs, make_config, run_tournament  # noqa: F401


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    raise AttributeError(f"module 'hearts_sim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS, *_MODULES])
