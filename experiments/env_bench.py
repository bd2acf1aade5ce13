"""Speed of the learning environments, against OpenSpiel's ``hearts`` stepped through pyspiel in
the same run.

Figures (one thread):

* ``VectorEnv`` learner decisions/s with random, then ``normal`` opponents: the time of
  ``env.step`` alone (the opponents' moves, rewards, auto-reset and observations included),
  and with a uniform random learner choosing in numpy (``argmax(random * mask)``) as well;
* ``aec_env`` steps/s (PettingZoo's ``agent_iter``/``last``/``step``, a random legal card per step)
  and ``SeatEnv`` steps/s against random opponents;
* OpenSpiel ``hearts`` through pyspiel, a random legal action per step: with the information
  state written into a numpy buffer each step (``make_observation``, the learner's input), and
  bare (``legal_actions`` and ``apply_action`` only); chance nodes (the deal) are not counted.

    python experiments/env_bench.py                  # ~1 minute
    python experiments/env_bench.py --seconds 1 --envs 256 --json

Every figure is the best of ``--repeats`` timed runs, per second of wall-clock time and per
second of this process's CPU time: on a shared machine the wall-clock figure counts the other
processes' turns on the core, the CPU figure does not (it still feels their cache traffic).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from hearts_sim.apps.script import ScriptParser, number, run_script, whole
from hearts_sim.env import VectorEnv
from hearts_sim.env.vector import MAX_ENVS
from hearts_sim.selfplay.simulate import set_threads

Rate = tuple[float, float]  # (per wall-clock second, per CPU second)


class Clock:
    """Wall-clock and CPU time, started and read together."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def best_rate(run: Callable[[float], tuple[int, float, float]], seconds: float, repeats: int) -> Rate:
    """The best of ``repeats`` calls of ``run(seconds) -> (count, wall, cpu)``, as counts per second."""
    results = [run(seconds) for _ in range(repeats)]
    return max(count / wall for count, wall, _ in results), max(count / cpu for count, _, cpu in results)


def vector_env_rates(opponents: str, n_envs: int, seconds: float, repeats: int) -> tuple[Rate, Rate]:
    """Decisions/s of env.step alone, and with the numpy random learner choosing too."""
    env = VectorEnv(n_envs, opponents, copy=False)
    _, mask = env.reset(seed=0)
    rng = np.random.default_rng(0)

    def learner(mask: np.ndarray) -> np.ndarray:
        return np.argmax(rng.random(mask.shape, dtype=np.float32) * mask, axis=1)

    for _ in range(20):  # compile or load the kernels, reach mid-hand positions
        _, mask, *_ = env.step(learner(mask))
    stepping = [0.0, 0.0]

    def run(budget: float) -> tuple[int, float, float]:
        nonlocal mask
        steps, stepping[:], clock = 0, [0.0, 0.0], Clock()
        while clock.elapsed()[0] < budget:
            actions = learner(mask)
            step_clock = Clock()
            _, mask, *_ = env.step(actions)
            wall, cpu = step_clock.elapsed()
            stepping[0] += wall
            stepping[1] += cpu
            steps += 1
        return steps * n_envs, *clock.elapsed()

    alone, total = [0.0, 0.0], [0.0, 0.0]
    for _ in range(repeats):
        count, wall, cpu = run(seconds)
        alone = [max(alone[0], count / stepping[0]), max(alone[1], count / stepping[1])]
        total = [max(total[0], count / wall), max(total[1], count / cpu)]
    return (alone[0], alone[1]), (total[0], total[1])


def aec_rate(aec_env: Callable[..., Any], seconds: float, repeats: int) -> Rate:
    env = aec_env("standard")
    chooser = random.Random(0)
    env.reset(seed=0)

    def run(budget: float) -> tuple[int, float, float]:
        steps, clock = 0, Clock()
        while clock.elapsed()[0] < budget:
            env.reset()
            for _ in env.agent_iter():
                observation, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                env.step(chooser.choice(np.flatnonzero(observation["action_mask"]).tolist()))
                steps += 1
        return steps, *clock.elapsed()

    run(0.2)
    return best_rate(run, seconds, repeats)


def seat_env_rate(seat_env: Callable[..., Any], seconds: float, repeats: int) -> Rate:
    env = seat_env("random")
    chooser = random.Random(0)
    env.reset(seed=0)

    def run(budget: float) -> tuple[int, float, float]:
        steps, clock = 0, Clock()
        while clock.elapsed()[0] < budget:
            observation, _ = env.reset()
            done = False
            while not done:
                card = chooser.choice(np.flatnonzero(observation["action_mask"]).tolist())
                observation, _, done, _, _ = env.step(card)
                steps += 1
        return steps, *clock.elapsed()

    run(0.2)
    return best_rate(run, seconds, repeats)


def openspiel_rates(seconds: float, repeats: int) -> tuple[Rate, Rate] | None:
    """(steps/s with the information-state tensor written each step, bare steps/s), or None
    without pyspiel."""
    try:
        import pyspiel
        from open_spiel.python.observation import make_observation
    except ImportError:
        return None
    game = pyspiel.load_game("hearts")
    observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    chooser = random.Random(0)

    def runner(observe: bool) -> Callable[[float], tuple[int, float, float]]:
        def run(budget: float) -> tuple[int, float, float]:
            steps, clock = 0, Clock()
            while clock.elapsed()[0] < budget:
                state = game.new_initial_state()
                while not state.is_terminal():
                    if state.is_chance_node():
                        state.apply_action(chooser.choice(state.chance_outcomes())[0])
                        continue
                    if observe:
                        observer.set_from(state, state.current_player())
                    state.apply_action(chooser.choice(state.legal_actions()))
                    steps += 1
            return steps, *clock.elapsed()

        return run

    return best_rate(runner(True), seconds, repeats), best_rate(runner(False), seconds, repeats)


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--envs", type=whole("--envs", 1, MAX_ENVS), default=1024, help="tables of the VectorEnv"
    )
    parser.add_argument(
        "--seconds",
        type=number("--seconds", 0, 3600, open_low=True),
        default=3.0,
        help="length of one timed run",
    )
    parser.add_argument(
        "--repeats",
        type=whole("--repeats", 1, 1000),
        default=3,
        help="timed runs per figure (the best is kept)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    from hearts_sim.env import SeatEnv, aec_env  # the extra learn: without it one line, before any work

    set_threads(1)
    figures: dict[str, Any] = {"envs": args.envs}

    def say(what: str) -> None:  # a minute or more in all: what it measures, as bench says it
        if not args.json:
            print(f"env_bench.py: {what}", file=sys.stderr, flush=True)

    for opponents in ("random", "normal"):
        say(f"VectorEnv, {args.envs:,} tables against {opponents} (a first use compiles its kernels)")
        stepping, total = vector_env_rates(opponents, args.envs, args.seconds, args.repeats)
        figures[f"vector_env_{opponents}"] = stepping
        figures[f"vector_env_{opponents}_with_learner"] = total
    say("the PettingZoo environment")
    figures["aec_env"] = aec_rate(aec_env, args.seconds, args.repeats)
    say("SeatEnv")
    figures["seat_env"] = seat_env_rate(SeatEnv, args.seconds, args.repeats)
    say("OpenSpiel's hearts, the peer")
    peer = openspiel_rates(args.seconds, args.repeats)
    figures["openspiel"], figures["openspiel_bare"] = peer if peer else (None, None)
    if args.json:
        print(json.dumps(figures))
        return
    peer = figures["openspiel"]
    print(f"{'':<42}{'per wall s':>14}{'per CPU s':>14}   CPU time vs OpenSpiel")
    rows = [
        ("VectorEnv, random opponents (env.step)", "vector_env_random", "decisions"),
        ("  with the numpy random learner", "vector_env_random_with_learner", "decisions"),
        ("VectorEnv, normal opponents (env.step)", "vector_env_normal", "decisions"),
        ("  with the numpy random learner", "vector_env_normal_with_learner", "decisions"),
        ("aec_env (PettingZoo)", "aec_env", "steps"),
        ("SeatEnv (Gymnasium), random opponents", "seat_env", "steps"),
        ("OpenSpiel hearts via pyspiel, info state", "openspiel", "steps"),
        ("OpenSpiel hearts via pyspiel, bare", "openspiel_bare", "steps"),
    ]
    for label, key, unit in rows:
        if figures[key] is None:
            continue
        wall, cpu = figures[key]
        ratio = f"{cpu / peer[1]:8.1f}x" if peer and not key.startswith("openspiel") else ""
        print(f"{label:<42}{wall:>14,.0f}{cpu:>14,.0f}   {ratio} {unit}/s")
    if peer is None:
        print("OpenSpiel: pyspiel is not installed (pip install open-spiel): no peer figure")
    print(f"(VectorEnv: {args.envs} tables, one thread; best of {args.repeats} runs of {args.seconds:g} s)")


if __name__ == "__main__":
    run_script(main)
