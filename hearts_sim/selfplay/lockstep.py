"""Tables with external seats (Python agents, engines), played in lockstep blocks.

The compiled loop (``loops.advance_hand_block`` / ``advance_game_block``, on threads) plays
every job of a block until an external seat must decide and copies that seat's information set
out (``engine.observe``); the waiting positions are grouped by agent and phase, each agent
decides its group in one call (``act_batch``, or one call per position; one batch of requests
spread over an engine's processes), every move is checked against the rules, and
``apply_moves`` plays them; and again, until every job of the block is done. Compiled seats
make exactly the decisions, with exactly the seeds, of the all-compiled loop, so a Python
re-implementation of a built-in agent gives bit-identical records (tests/test_external.py).

A failure (an agent that raises, answers garbage or an illegal move, times out or dies) stops
the run with ``ExternalAgentError`` naming the agent, the deal (or game), the seat and what it
did; what was finished before (earlier chunks of a tournament) stays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.external import (
    AGENT_FAILURES,
    EngineOptions,
    ExternalAgentError,
    ExternalSpec,
    PythonDecider,
    agent_cause,
    batch_failed,
    decider,
    external_moves,
    located,
)
from hearts_sim.core.rules import Rules
from hearts_sim.engine.observe import OBSERVED
from hearts_sim.engine.state import PHASE_PASS, new_states
from hearts_sim.env.policy import PolicyAgent
from hearts_sim.game.observation import observations_from
from hearts_sim.selfplay.loops import (
    SLOT_ACTIVE,
    SLOT_DONE,
    SLOT_HAND_OVER,
    SLOT_NEW,
    advance_game_block,
    advance_hand_block,
    apply_moves,
    blocks_for,
    in_blocks,
    observe_slots,
    write_game_hand_records,
    write_hand_records,
)
from hearts_sim.selfplay.records import GAME_HAND_RECORD

BLOCK = 2048  # jobs played in lockstep: the batch an external agent decides at once


def run_lockstep(
    table: Any,
    seed: int,
    first: int,
    count: int,
    out: np.ndarray,
    games: bool,
    options: EngineOptions,
    keep_hands: bool = False,
) -> np.ndarray:
    """``count`` deals (or games) from ``first``, each in every seating of ``table``, into ``out``
    (HAND_RECORDs or GAME_RECORDs in job order), with the external seats decided in lockstep.
    Returns the GAME_HAND_RECORDs of every hand of the games with ``keep_hands`` (in job order,
    then hand order), else an empty array."""
    kinds, rules_tuple, pass_codes, pass_params, play_codes, play_params = table.kernel_arguments()
    rules: Rules = table.rules
    n_seatings = len(table.seatings)
    agents = external_seats(table)
    first_job, n_jobs = first * n_seatings, count * n_seatings
    size = min(BLOCK, n_jobs)
    states = new_states(size)
    observed = np.zeros(size, dtype=OBSERVED)
    status = np.full(size, SLOT_DONE, dtype=np.int64)
    jobs = np.full(size, -1, dtype=np.int64)
    hands_played = np.zeros(size, dtype=np.int64)
    seeds = np.zeros(size, dtype=np.uint64)  # the loop's decision seed of each waiting seat
    game_records = np.zeros(size, dtype=out.dtype) if games else out[:0]
    hands: list[np.ndarray] = []  # the finished hands of games, in the order they finished
    next_job = first_job
    while True:
        done = np.flatnonzero(status == SLOT_DONE)
        if games:  # finished games leave their slot: copy their records out
            finished = done[jobs[done] >= 0]
            out[jobs[finished] - first_job] = game_records[finished]
        elif len(done):
            finished = done[jobs[done] >= 0]
            write_hand_records(states, jobs, n_seatings, finished, out, first_job)
        jobs[done] = -1
        fresh = done[: max(0, min(len(done), first_job + n_jobs - next_job))]
        jobs[fresh] = np.arange(next_job, next_job + len(fresh))
        status[fresh] = SLOT_NEW
        next_job += len(fresh)
        if not (status != SLOT_DONE).any():
            return _in_job_order(hands, out, first_job, n_seatings)
        arguments = (kinds, rules_tuple, np.uint64(seed), pass_codes, pass_params, play_codes, play_params)
        if games:
            slots = (jobs, states, status, hands_played, game_records, keep_hands)
            in_blocks(advance_game_block, blocks_for(size), *arguments, *slots)
            over = np.flatnonzero(status == SLOT_HAND_OVER)
            if len(over):
                hands.append(np.zeros(len(over), dtype=GAME_HAND_RECORD))
                write_game_hand_records(states, jobs, n_seatings, over, hands_played, hands[-1])
        else:
            in_blocks(advance_hand_block, blocks_for(size), *arguments, jobs, states, status)
        waiting = np.flatnonzero(status >= 0)
        if len(waiting):
            observe_slots(states, rules_tuple, waiting, status, observed, seeds)
            positions = (observed, seeds, status, jobs, hands_played, waiting)
            moves = _decide(states, rules, positions, agents, n_seatings, games, options)
            apply_moves(states, rules_tuple, waiting, moves, status)
            status[waiting] = SLOT_ACTIVE


def _in_job_order(hands: list[np.ndarray], games: np.ndarray, first_job: int, n_seatings: int) -> np.ndarray:
    """The hands of ``games`` (their GAME_RECORDs, by job from ``first_job``) as
    ``play_game_block`` writes them: by game, seating, then hand, each with its game's winners."""
    if not hands:
        return np.zeros(0, dtype=GAME_HAND_RECORD)
    every = np.concatenate(hands)
    every = every[np.lexsort((every["game_hand"], every["seating"], every["game"]))]
    every["game_winners"] = games["winners"][every["game"] * n_seatings + every["seating"] - first_job]
    return every


def external_seats(table: Any) -> dict[tuple[int, int, bool], ExternalSpec]:
    """(seating, seat, passing) -> the external agent deciding it."""
    agents = {}
    for i, seating in enumerate(table.seatings):
        for seat, agent in enumerate(seating):
            for passing, policy in ((True, agent.pass_policy), (False, agent.play_policy)):
                if policy.external is not None:
                    agents[(i, seat, passing)] = policy.external
    return agents


def _decide(
    states: np.ndarray,
    rules: Rules,
    positions: tuple[np.ndarray, ...],
    agents: dict[tuple[int, int, bool], ExternalSpec],
    n_seatings: int,
    games: bool,
    options: EngineOptions,
) -> np.ndarray:
    """The moves of the waiting slots (cards, or pass bitboards), asked of each agent in one batch.
    ``positions``: the observed records, the decision seeds, the slots' status and jobs, the
    waiting slots (and the hand each slot's game is in: ``hands_played``)."""
    observed, decision_seeds, status, jobs, hands_played, waiting = positions  # observed[k]: waiting[k]'s
    passing = states["phase"][waiting] == PHASE_PASS
    keys = (jobs[waiting] % n_seatings) * 64 + status[waiting] * 2 + passing  # (seating, seat, passing)
    unique, group_of = np.unique(keys, return_inverse=True)
    groups: dict[tuple[ExternalSpec, bool], list[np.ndarray]] = {}
    for g, key in enumerate(unique.tolist()):
        spec = agents[(key // 64, key % 64 // 2, bool(key % 2))]
        groups.setdefault((spec, bool(key % 2)), []).append(np.flatnonzero(group_of == g))
    moves = np.zeros(len(waiting), dtype=np.uint64)
    for (spec, is_pass), parts in groups.items():
        members = np.sort(np.concatenate(parts))
        slots = waiting[members]

        def where(i: int, slots: np.ndarray = slots, is_pass: bool = is_pass) -> str:
            doing, slot = ("passing" if is_pass else "playing"), slots[i]
            job = int(jobs[slot])
            # a game's hand too, as replay --game G --hand H reads it (it named the game only)
            unit = (
                f"game {job // n_seatings}, hand {hands_played[slot]}"
                if games
                else f"deal {job // n_seatings}"
            )
            return f"{unit}, seating {job % n_seatings}, seat {status[slot]}, {doing}"

        policy = _policy_agent(spec, options)
        if policy is not None:  # encoded from the records, no Observation built
            moves[members] = _record_moves(policy, spec, states, rules, slots, status[slots], is_pass, where)
            continue
        observations = observations_from(observed[members], rules)
        seeds, hand_seeds = decision_seeds[members].tolist(), states["hand_seed"][slots].tolist()
        asked = external_moves(spec, observations, is_pass, seeds, hand_seeds, rules, options, where)
        moves[members] = asked
    return moves


def _policy_agent(spec: ExternalSpec, options: EngineOptions) -> tuple[PythonDecider, PolicyAgent] | None:
    """The ``PolicyAgent`` deciding for ``spec``, with its decider (which keeps the time limit),
    or None for any other agent, or a subclass that decides its own way (``act_batch``)."""
    running = decider(spec, options)
    agent = getattr(running, "agent", None)
    if not isinstance(running, PythonDecider) or not isinstance(agent, PolicyAgent):
        return None
    return (running, agent) if type(agent).act_batch is PolicyAgent.act_batch else None


def _record_moves(
    policy: tuple[PythonDecider, PolicyAgent],
    spec: ExternalSpec,
    states: np.ndarray,
    rules: Rules,
    slots: np.ndarray,
    seats: np.ndarray,
    is_pass: bool,
    where: Callable[[int], str],
) -> np.ndarray:
    """A ``PolicyAgent``'s moves in the waiting ``slots`` (``PolicyAgent.decide_records``), with
    ``external_moves``'s time limit and one-line failures."""
    running, agent = policy
    try:
        return running.timed(len(slots), lambda _: agent.decide_records(states, rules, slots, seats, is_pass))
    except ExternalAgentError as error:
        raise located(error, len(slots), where) from None
    except AGENT_FAILURES as error:  # the policy raised, or chose a card it may not
        raise batch_failed(spec, error, len(slots), where) from agent_cause(error)
