"""The two functions the self-play loop (``hearts_sim.selfplay.loops``) calls for every decision.

Each takes the seat's integer policy code (``agents.codes``) and parameter row and
branches to that policy's kernel: one branch per code. Search agents (``pimc``,
``ismcts``) have no pass policy of their own and pass like ``rule`` with its defaults.

The baseline play policies (random, lowest, highest) read nothing but the legal cards and
the decision's seed: ``reads_state`` tells the self-play loop so, and it then plays such
seats' cards without keeping the record current between cards.
"""

from __future__ import annotations

import numpy as np

from agents import rule
from agents.baseline import highest_play, lowest_play, pass_extremes, random_pass, random_play
from agents.codes import HIGHEST, ISMCTS, LOWEST, MC, PIMC, RANDOM, RULE
from agents.ismcts import ismcts_play
from agents.kinds import Params
from agents.mc import mc_pass, mc_play
from agents.pimc import pimc_play
from agents.rule import rule_pass, rule_play
from hearts_sim._numba import njit_inline
from hearts_sim.core.rules import RulesTuple


@njit_inline
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
    if code == RULE:
        return rule_play(params, state, rules, seat, legal, seed)
    if code == MC:
        return mc_play(params, state, rules, seat, legal, seed)
    if code == PIMC:
        return pimc_play(params, state, rules, seat, legal, seed)
    if code == ISMCTS:
        return ismcts_play(params, state, rules, seat, legal, seed)
    return choose_stateless_play(code, legal, seed)


@njit_inline
def reads_state(code: np.int64) -> bool:
    """Whether play policy ``code`` looks at the hand's record (all but random, lowest, highest)."""
    return code != RANDOM and code != LOWEST and code != HIGHEST


@njit_inline
def choose_stateless_play(code: np.int64, legal: np.uint64, seed: np.uint64) -> np.int64:
    """The card a policy that reads no state (``not reads_state(code)``) plays from ``legal``."""
    if code == RANDOM:
        return random_play(legal, seed)
    if code == LOWEST:
        return lowest_play(legal)
    return highest_play(legal)


@njit_inline
def choose_pass(
    code: np.int64, params: Params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64
) -> np.uint64:
    """The cards policy ``code`` passes from ``seat``'s dealt hand."""
    hand = state.dealt[seat]
    if code == RULE:
        return rule_pass(params, state, rules, seat, seed)
    if code == MC:
        return mc_pass(params, state, rules, seat, seed)
    if code in (PIMC, ISMCTS):
        return rule_pass(rule.DEFAULT_PARAMS, state, rules, seat, seed)
    if code == LOWEST:  # the lowest-playing agent passes its highest cards
        return pass_extremes(hand, rules, True)
    if code == HIGHEST:
        return pass_extremes(hand, rules, False)
    return random_pass(hand, rules, seed)
