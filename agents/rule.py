"""``rule``: a readable heuristic player: ducks, dumps the QS and high hearts, counts cards, handles moons."""

from __future__ import annotations

import numpy as np

from agents import codes
from agents.baseline import random_pass, random_play
from agents.kinds import Params, PolicyKind
from hearts_sim._numba import njit
from hearts_sim.rules import RulesTuple

KIND = PolicyKind(
    "rule",
    codes.RULE,
    "a readable heuristic player: ducks, dumps QS and high hearts, counts cards, handles moons",
)
DEFAULT_PARAMS = KIND.default_params()


@njit
def rule_play(
    params: Params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64
) -> np.int64:
    """Placeholder: a random legal card, until this policy is implemented."""
    return random_play(legal, seed)


@njit
def rule_pass(params: Params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64) -> np.uint64:
    """Placeholder: the rule-free random pass, until this policy is implemented."""
    return random_pass(state.dealt[seat], rules, seed)
