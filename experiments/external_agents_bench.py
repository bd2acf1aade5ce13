"""What an agent outside the compiled loop costs: Python agents and engines at a table.

Prints, one thread:
- a Python random agent in one seat of a table of random agents: its decisions per second,
  with ``act_batch`` and one call per position (the whole table's time, per decision it made);
- ``exec:hearts-sim serve --agent random`` in one seat: decisions per second with 1 and 2
  engine processes; and the protocol's cost per decision, in process (median and p99 of a
  ``MoveServer``'s own ``ms`` for each request: parsing, checking and answering it, without the
  pipe);
- the compiled seats of a mixed table: the time of three rule (then mc) seats beside a Python
  agent, that is the table's time minus the time spent asking the Python agent (observations,
  the calls, checking its moves), against the same three seats beside the built-in agent in
  its place: the cost of playing in lockstep blocks, large beside seats that decide in a
  fraction of a microsecond, negligible beside a search.

    python experiments/external_agents_bench.py [--hands 20000]
"""

from __future__ import annotations

import json
import random
import shlex
import sys
import time
from typing import Any

import numpy as np

from agents.external import EngineOptions, close_all
from hearts_sim.apps.script import ScriptParser, run_script, whole
from hearts_sim.apps.server import MoveServer
from hearts_sim.game.hand_state import HandState
from hearts_sim.game.protocol import request_for
from hearts_sim.selfplay import lockstep
from hearts_sim.selfplay.simulate import Table, run_hands, set_threads


class PythonRandom:
    """Uniform over the legal cards, one call per position."""

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def choose_pass(self, obs: Any) -> list[int]:
        return self.rng.sample(sorted(obs.hand), obs.rules.pass_count)

    def choose_play(self, obs: Any) -> int:
        return self.rng.choice(list(obs.legal_moves()))


class BatchRandom(PythonRandom):
    """The same, deciding a block of positions per call."""

    def act_batch(self, observations: list[Any]) -> list[Any]:
        return [self.choose_pass(o) if o.phase == "pass" else self.choose_play(o) for o in observations]


def timed(
    seats: list[Any], hands: int, engines: EngineOptions | None = None, started: Any = None
) -> tuple[float, int]:
    """(seconds, decisions of seat 0) for ``hands`` hands (after warm-up hands; ``started()``
    is called as the timing starts)."""
    table = Table.build("standard", [seats])
    run_hands(table, 99, 0, 4, engines=engines)
    if started is not None:
        started()
    start = time.perf_counter()
    run_hands(table, 1, 0, hands, engines=engines)
    seconds = time.perf_counter() - start
    return seconds, hands * 14  # seat 0: one pass (3 hands in 4) and 13 plays per hand, about


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--hands",
        type=whole("--hands", 1, 10_000_000),
        default=20_000,
        help="hands per Python-agent measurement",
    )
    parser.add_argument(
        "--engine-hands",
        type=whole("--engine-hands", 1, 1_000_000),
        default=400,
        help="hands per engine measurement",
    )
    args = parser.parse_args(argv)
    set_threads(1)
    for label, agent in (("with act_batch", BatchRandom()), ("one call per position", PythonRandom())):
        seconds, decisions = timed([agent, "random", "random", "random"], args.hands)
        print(f"Python random, {label:<22} {decisions / seconds:>10,.0f} decisions/s")
    serve = f"exec:{shlex.quote(sys.executable)} -m hearts_sim serve --agent random"
    for procs in (1, 2):
        options = EngineOptions(procs, 60)
        seconds, decisions = timed([serve, "random", "random", "random"], args.engine_hands, options)
        print(f"engine (hearts-sim serve), {procs} proc(s)  {decisions / seconds:>10,.0f} decisions/s")
        close_all()
    server, ms = MoveServer("random"), []
    for hand in range(50):
        state = HandState.deal("standard", seed=hand)
        if state.phase == "pass":
            for seat in range(4):
                state.pass_cards(seat, sorted(state.hand(seat))[:3])
        while state.phase == "play":
            line = json.dumps(request_for(state.observation(int(state.current_player or 0)), 0, hand))
            answer = server.answer(line)
            ms.append(answer["ms"])
            state.play(answer["play"])
    median, p99 = np.median(ms), np.percentile(ms, 99)
    print(f"protocol cost per decision (in process)   median {median:.2f} ms, p99 {p99:.2f} ms")
    asking = [0.0]
    decide = lockstep._decide

    def timed_decide(*arguments: Any) -> Any:
        start = time.perf_counter()
        try:
            return decide(*arguments)
        finally:
            asking[0] += time.perf_counter() - start

    # cheap seats (rule: ~0.2 us a decision) show the lockstep's cost per external decision
    # (resuming the hand, copying the observation out, the move in); search seats hide it
    for agent, hands in (("rule", args.hands), ("mc", max(args.hands // 50, 10))):
        own, _ = timed([agent, agent, agent, "random"], hands)
        lockstep._decide = timed_decide  # type: ignore[assignment]
        mixed, _ = timed(
            [agent, agent, agent, BatchRandom()], hands, started=lambda: asking.__setitem__(0, 0.0)
        )
        lockstep._decide = decide  # type: ignore[assignment]
        compiled = mixed - asking[0]
        print(f"three {agent} seats beside built-in random {hands / own:>10,.0f} hands/s")
        print(
            f"the same beside a Python random (batched) {hands / compiled:>10,.0f} hands/s of compiled time "
            f"({own / compiled:.0%} of their own speed; {hands / mixed:,.0f} hands/s in all)"
        )


if __name__ == "__main__":
    run_script(main)
