"""What each agent costs on one thread: the figures the agents issue asks for.

* hands/s with ``rule`` in every seat and with ``random``, against the minimal reference
  playout measured in the same run (``hearts_sim.studies.reference_playout``: the floor of what
  a random standard hand costs on this CPU), so each figure is also a ratio that travels
  between machines;
* rollouts/s inside ``mc``: every play decision rolls each legal card out in every sampled
  world, so a decision makes ``samples x legal cards`` rollouts (each to the end of the hand,
  world sampling included); measured for the rule and the random rollout policy;
* decisions/s, the median / 99th percentile ms per decision and the iterations per second of
  the search agents at their default budgets and of the ``hard`` level (plays with more than
  one legal card; a forced card costs no search).

    python experiments/agent_costs.py                 # ~2 min on one core
    python experiments/agent_costs.py --hands 4 --rule-hands 50000

Run it on a quiet machine: every figure is wall-clock time on one thread.
"""

from __future__ import annotations

import sys

import numpy as np

from agents.registry import KINDS, parse_agent
from hearts_sim.apps.script import ScriptParser, run_script, whole
from hearts_sim.core.rules import Rules
from hearts_sim.selfplay.simulate import Table, run_hands, set_threads
from hearts_sim.studies.bench import timed_kernel, timed_reference
from hearts_sim.studies.calibrate import decision_log

SEARCH_AGENTS = (*(kind.name for kind in KINDS if kind.searches), "hard")
MC_ROLLOUTS = ("mc", "mc(rollout=random)")


def hands_per_second(agent: str, hands: int) -> float:
    """Best of three runs of ``hands`` hands with ``agent`` in every seat (the benchmark's timing)."""
    table = Table.build("standard", [[agent] * 4])
    run_hands(table, 0, 0, 100)  # compile or load the cache
    return timed_kernel(table, 1, hands, repeats=3)[0]


def real_choices(log: np.ndarray) -> np.ndarray:
    """The play decisions with more than one legal card (a forced card costs no search)."""
    return log[~log["passing"] & (log["choices"] > 1)]


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rule-hands",
        type=whole("--rule-hands", 1, 10_000_000),
        default=1_000_000,
        help="hands per timed random/rule run (the size of the README's bench run, --hands 1000000)",
    )
    parser.add_argument(
        "--hands", type=whole("--hands", 1, 100_000), default=6, help="hands timed per search agent"
    )
    args = parser.parse_args(argv)
    set_threads(1)

    reference = timed_reference(1, args.rule_hands, repeats=3)
    print(f"minimal reference      {reference:>12,.0f} hands/s  (random standard hands, no record)")
    for agent in ("random", "rule"):
        rate = hands_per_second(agent, args.rule_hands)
        label = f"{agent} in all seats"
        print(f"{label:<22} {rate:>12,.0f} hands/s  ({rate / reference:.1%} of the reference)")
    plays = {}
    for spec in MC_ROLLOUTS + SEARCH_AGENTS:  # minutes in all: say which, as bench does
        print(
            f"agent_costs.py: timing {spec} ({args.hands} hands; a first use compiles it)",
            file=sys.stderr,
            flush=True,
        )
        plays[spec] = real_choices(decision_log(spec, Rules(), args.hands))
    for spec in MC_ROLLOUTS:  # a decision rolls every legal card out in each of `samples` worlds
        samples = parse_agent(spec).play_policy.value("samples")
        rollouts = samples * plays[spec]["choices"].sum() / plays[spec]["seconds"].sum()
        print(f"{spec:<22} {rollouts:>12,.0f} rollouts/s inside the search")
    for spec in SEARCH_AGENTS:
        ms = plays[spec]["seconds"] * 1000
        # tree searches: iterations per decision at the base budget (ismcts's stretch may spend more)
        iterations = dict(parse_agent(spec).play_policy.values).get("iterations")
        per_second = (
            "" if iterations is None else f"; at least {iterations * 1000 / ms.mean():,.0f} iterations/s"
        )
        print(
            f"{spec:<22} {1000 / ms.mean():>12,.1f} decisions/s  "
            f"(median {np.median(ms):.1f} ms, p99 {np.percentile(ms, 99):.1f} ms, "
            f"{len(ms)} real choices{per_second})"
        )


if __name__ == "__main__":
    run_script(main)
