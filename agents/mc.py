"""``mc``: flat Monte Carlo: every legal card (or candidate pass) scored by rollouts in sampled worlds."""

from __future__ import annotations

import numpy as np

from agents import codes
from agents.baseline import random_pass, random_play
from agents.kinds import Params, PolicyKind
from hearts_sim._numba import njit
from hearts_sim.rules import RulesTuple

KIND = PolicyKind(
    "mc",
    codes.MC,
    "flat Monte Carlo: every legal card (or candidate pass) scored by rollouts in sampled worlds",
)


@njit
def mc_play(
    params: Params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64
) -> np.int64:
    """Placeholder: a random legal card, until this policy is implemented."""
    return random_play(legal, seed)


@njit
def mc_pass(params: Params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64) -> np.uint64:
    """Placeholder: the rule-free random pass, until this policy is implemented."""
    return random_pass(state.dealt[seat], rules, seed)
