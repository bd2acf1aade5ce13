"""``ismcts``: single-observer information-set MCTS, a new world every iteration."""

from __future__ import annotations

import numpy as np

from agents import codes
from agents.baseline import random_play
from agents.kinds import Params, PolicyKind
from hearts_sim._numba import njit
from hearts_sim.rules import RulesTuple

KIND = PolicyKind("ismcts", codes.ISMCTS, "single-observer information-set MCTS, a new world every iteration")


@njit
def ismcts_play(
    params: Params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64
) -> np.int64:
    """Placeholder: a random legal card, until this policy is implemented."""
    return random_play(legal, seed)
