"""Helpers for the tests that step a hand through ``HandState``: the dispatcher's decisions on
the real record compared with the batched loop (test_api, test_dispatch, test_observation,
test_server), an observation's history, and the observation encoder on a hand's record
(test_encoding, test_env)."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.dispatch import loop_pass, loop_play
from agents.registry import parse_agent
from hearts_sim.core.cards import cards_of
from hearts_sim.core.rules import Rules
from hearts_sim.engine.encoding import OBS_SIZE, action_cards, encode_observation
from hearts_sim.engine.hand import pack_trick_winners
from hearts_sim.game.hand_state import HandState
from hearts_sim.game.observation import Observation
from hearts_sim.selfplay.simulate import Table, run_hands


def history(obs: Observation) -> dict[str, Any]:
    """The keyword arguments of ``Observation.from_history`` that describe ``obs``."""
    return {
        "rules": obs.rules,
        "seat": obs.seat,
        "hand": obs.dealt,
        "pass_direction": obs.pass_direction,
        "passed": obs.passed,
        "received": obs.received,
        "plays": obs.plays,
        "scores": obs.game_scores,
        "points": obs.points,
        "kitty": obs.kitty if obs.kitty else None,
        "dealer": obs.dealer,
    }


def loop_hand(
    rules: Rules, seating: list[str], seed: int, deal: int
) -> tuple[HandState, int, list[tuple[Observation, list[int] | int]]]:
    """Deal ``deal`` of a run with ``seed`` stepped exactly as ``selfplay.play_out_hand`` does:
    every decision from the dispatcher on the real record with ``decision_seed``. Returns the
    finished hand, its hand seed and every decision as (observation of the decider, move)."""
    state = HandState.deal(rules, seed=seed, hand=deal)
    hand_seed = int(state.record["hand_seed"])
    specs = [parse_agent(s) for s in seating]
    array = rules.to_tuple()
    decisions: list[tuple[Observation, list[int] | int]] = []
    if state.phase == "pass":
        for seat in range(rules.n_players):
            mask = loop_pass(specs[seat].pass_policy, state.record, array, seat)
            decisions.append((state.observation(seat), cards_of(int(mask))))
            state.pass_cards(seat, int(mask))
    while state.phase == "play":
        seat = int(state.current_player)  # type: ignore[arg-type]
        card = loop_play(specs[seat].play_policy, state.record, array, seat)
        decisions.append((state.observation(seat), int(card)))
        state.play(int(card))
    return state, hand_seed, decisions


def assert_matches_loop(state: HandState, rules: Rules, seating: list[str], seed: int, deal: int) -> None:
    """The stepped hand is the one ``run_hands`` (the batched loop) plays for the same deal."""
    assert_record_is_hand(run_hands(Table.build(rules, [seating]), seed, deal, 1)[0], state, rules)


def assert_record_is_hand(record: np.ndarray, state: HandState, rules: Rules) -> None:
    """A HAND_RECORD of the batched loop describes the stepped hand ``state``."""
    n = rules.n_players
    assert record["hand_seed"] == state.record["hand_seed"]
    assert list(record["passed"][:n]) == list(state.record["passed"][:n])
    assert list(record["points"][:n]) == list(state.points())
    assert list(record["score"][:n]) == list(state.scores())
    assert record["trick_winners"] == pack_trick_winners(state.record)


def encode(
    state: HandState, seat: int, pending: int = 0, records: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """(observation, action cards) of ``seat`` on ``state``'s record, or on ``records[0]`` (a
    one-record array under the same rules)."""
    records = state._states if records is None else records
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    encode_observation(records[0], state._rules_array, seat, np.uint64(pending), out)
    return out, int(action_cards(records[0], state._rules_array, seat, np.uint64(pending)))
