"""The two functions the engine's self-play loop calls for every decision.

The engine never imports agents: it receives ``choose_pass`` and ``choose_play`` as
compile-time arguments and hands them each seat's integer policy code (see
``agents.registry``) and parameter row. One branch per policy code.
"""

from __future__ import annotations

import numpy as np

from agents.baseline import highest_play, lowest_play, pass_extremes, random_pass, random_play
from agents.codes import HIGHEST, LOWEST
from agents.registry import Params
from hearts_sim._numba import njit
from hearts_sim.rules import RulesTuple


@njit
def choose_play(
    code: np.int64,
    params: Params,
    state,
    rules: RulesTuple,
    seat: np.int64,
    legal: np.uint64,
    seed: np.uint64,
) -> np.int64:
    """The card policy ``code`` plays from ``legal`` for ``seat``."""
    if code == LOWEST:
        return lowest_play(legal)
    if code == HIGHEST:
        return highest_play(legal)
    return random_play(legal, seed)


@njit
def choose_pass(
    code: np.int64, params: Params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64
) -> np.uint64:
    """The cards policy ``code`` passes from ``seat``'s dealt hand."""
    hand = state.dealt[seat]
    if code == LOWEST:  # the lowest-playing agent passes its highest cards
        return pass_extremes(hand, rules, True)
    if code == HIGHEST:
        return pass_extremes(hand, rules, False)
    return random_pass(hand, rules, seed)
