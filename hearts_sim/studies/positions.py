"""Decision points from self-play, for studies of what agents see (``real_positions``) and for
the agent checks of the test suite, which deal the same positions.

``spec_decider(spec)`` decides on a raw ``HAND_STATE`` record through the dispatcher, as the
self-play loops do; ``real_positions(rules, count, seed)`` plays hands with it and stops each at
a pass or a play decision.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from agents.dispatch import decide_pass, decide_play
from agents.registry import AgentSpec, parse_agent
from hearts_sim.core.rules import Rules, resolve_rules
from hearts_sim.engine.hand import decision_seed, legal_moves
from hearts_sim.engine.state import PHASE_PASS
from hearts_sim.game.hand_state import HandState

Decide = Callable[[np.void, tuple[int, ...], int, np.uint64], int]  # (record, rules, seat, seed) -> move


# ---------------------------------------------------------------- deciding through the dispatcher
def spec_decider(spec: str | AgentSpec) -> Decide:
    """The agent's decision on a raw record: a card while playing, a pass mask while passing."""
    agent = parse_agent(spec)
    passer, player = agent.pass_policy, agent.play_policy

    def decide(record: np.void, rules: tuple[int, ...], seat: int, seed: np.uint64) -> int:
        if record["phase"] == PHASE_PASS:
            return int(decide_pass(passer.code, passer.row, record, rules, seat, seed))
        legal = _legal(record, rules)
        return int(decide_play(player.code, player.row, record, rules, seat, legal, seed))

    return decide


def _legal(record: np.void, rules: tuple[int, ...]) -> np.uint64:
    return np.uint64(legal_moves(record, rules))


def decision_seed_of(record: np.void, seat: int) -> np.uint64:
    """The seed of ``seat``'s next decision on a raw record, as the self-play loops give it."""
    return np.uint64(decision_seed(record, seat))


# ---------------------------------------------------------------- positions from self-play
def real_positions(
    rules: Rules | str,
    count: int,
    seed: int = 0,
    spec: str | AgentSpec = "random",
    pass_probability: float = 0.15,
    stage: tuple[float, float] = (0.0, 1.0),
) -> list[tuple[HandState, int]]:
    """``count`` (state, seat to decide) pairs from hands played by ``spec`` in every seat.

    One position per hand: a pass decision with ``pass_probability`` (where the hand has
    a pass), else a play decision after a uniformly drawn fraction ``stage`` of the cards."""
    rules = resolve_rules(rules)
    decide = spec_decider(spec)
    chooser = random.Random(seed)
    out: list[tuple[HandState, int]] = []
    hand = 0
    while len(out) < count:
        state = HandState.deal(rules, seed=seed, hand=hand)
        hand += 1
        array = state.rules.to_tuple()
        if state.phase == "pass":
            if chooser.random() < pass_probability:
                seat = chooser.randrange(rules.n_players)
                for s in range(seat):  # earlier seats have passed (their cards stay hidden)
                    state.pass_cards(s, decide(state.record, array, s, decision_seed_of(state.record, s)))
                out.append((state, seat))
                continue
            for s in range(rules.n_players):
                state.pass_cards(s, decide(state.record, array, s, decision_seed_of(state.record, s)))
        total = rules.hand_size * rules.n_players
        stop = min(total - 1, int(total * chooser.uniform(*stage)))
        for _ in range(stop):
            player = int(state.current_player)  # type: ignore[arg-type]  # a hand stopped short of its end
            state.play(decide(state.record, array, player, decision_seed_of(state.record, player)))
        out.append((state, int(state.current_player)))  # type: ignore[arg-type]
    return out
