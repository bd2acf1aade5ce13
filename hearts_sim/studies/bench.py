"""``hearts-sim bench``: random-vs-random throughput, against OpenSpiel measured in the same run.

Figures: hands/s of the self-play kernel on one thread (the per-core figure) and on
all threads, hands/s of ``simulate`` including the DataFrame, the first call's
compile/cache-load time, and OpenSpiel's ``hearts`` with four uniform random bots
through ``pyspiel.evaluate_bots``. Every benchmarked hand is checked against the
invariants of docs/rules.md (untimed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from hearts_sim._numba import max_threads
from hearts_sim.core.rules import resolve_rules
from hearts_sim.engine.rng import check_seed
from hearts_sim.selfplay.invariants import check_hand_records
from hearts_sim.selfplay.simulate import Table, compile_seconds, run_hands, set_threads, simulate
from hearts_sim.studies.openspiel_peer import openspiel_random_hands_per_second

_STARTUP_SCRIPT = (
    "import time; t = time.perf_counter(); "
    "from hearts_sim.selfplay.simulate import Table, run_hands; "
    "run_hands(Table.build('standard', [['random'] * 4]), 0, 0, 1000); "
    "print(time.perf_counter() - t)"
)


def timed_kernel(table: Table, seed: int, hands: int, repeats: int) -> tuple[float, int]:
    """Best hands/s over ``repeats`` kernel runs (the machine is shared: the best is the
    least disturbed), and the number of hands whose invariants were checked."""
    best, checked = 0.0, 0
    for repeat in range(repeats):
        start = time.perf_counter()
        records = run_hands(table, seed + repeat, 0, hands)
        best = max(best, hands / (time.perf_counter() - start))
        checked += check_hand_records(records, table.rules)
    return best, checked


def startup_times() -> tuple[float, float]:
    """(cold, warm) seconds for a fresh process's first 1000 hands: compiling into an empty
    numba cache, then loading that cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = [
            subprocess.run(
                [sys.executable, "-c", _STARTUP_SCRIPT],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            for _ in range(2)
        ]
    cold, warm = (float(r.stdout.strip().splitlines()[-1]) for r in runs)
    return cold, warm


def run_bench(
    hands: int = 2_000_000,
    threads: int | None = None,
    openspiel_hands: int = 2000,
    seed: int = 0,
    rules: str = "standard",
    repeats: int = 3,
    startup: bool = False,
    report: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """All figures as one dict (the ``--json`` output); ``report`` hears a line as each phase
    starts (the first call may compile the kernels for a minute)."""
    say = report or (lambda line: None)
    rules_value = resolve_rules(rules)
    table = Table.build(rules_value, [["random"] * rules_value.n_players])
    all_threads = set_threads(threads)
    seed = check_seed(seed)
    cold_seconds = compile_seconds(table)
    say(
        f"bench: first call: compiling the kernels (one time, about {cold_seconds:.0f} s)"
        if cold_seconds is not None
        else "bench: first call (kernels from numba's cache)"
    )
    start = time.perf_counter()
    run_hands(table, seed, 0, 1000)
    first_call = time.perf_counter() - start

    set_threads(1)
    say(f"bench: self-play kernel, 1 thread: best of {repeats} runs of {hands:,} hands")
    one_thread, checked = timed_kernel(table, seed, hands, repeats)
    set_threads(all_threads)
    say(f"bench: self-play kernel, {all_threads} threads: best of {repeats} runs of {hands:,} hands")
    many_threads, more = timed_kernel(table, seed, hands, repeats)
    say(f"bench: simulate() with its DataFrame, {hands:,} hands")
    start = time.perf_counter()
    simulate(rules_value, "random", hands=hands, seed=seed, threads=all_threads, progress=False)
    with_records = hands / (time.perf_counter() - start)

    if openspiel_hands:
        say(f"bench: OpenSpiel hearts, {openspiel_hands:,} hands")
    # OpenSpiel's seeds are C ints: fold ours into 0 .. 2**30 (plus the hand index stays below 2**31)
    peer = openspiel_random_hands_per_second(openspiel_hands, seed % 2**30) if openspiel_hands else None
    if startup:
        say("bench: cold and warm start in fresh processes (the cold one compiles into an empty cache)")
    cold, warm = startup_times() if startup else (None, None)
    return {
        "rules": rules_value.describe(),
        "hands": hands,
        "threads": all_threads,
        "random_hands_per_s": round(one_thread),
        "random_hands_per_s_all_threads": round(many_threads),
        "hands_per_s_with_records": round(with_records),
        "openspiel_hands_per_s": None if peer is None else round(peer),
        "ratio_vs_openspiel": None if peer is None else round(one_thread / peer, 1),
        "first_call_s": round(first_call, 2),
        "cold_start_s": None if cold is None else round(cold, 2),
        "warm_start_s": None if warm is None else round(warm, 2),
        "invariants_checked": checked + more,
        "numba_threads_available": max_threads(),
    }


def format_bench(result: dict[str, Any]) -> str:
    """The figures as an aligned table for the terminal."""

    def rate(value: float | None) -> str:
        return "not installed" if value is None else f"{value:>12,.0f} hands/s"

    lines = [
        f"rules: {result['rules']}   hands per run: {result['hands']:,}",
        f"hearts_sim kernel, 1 thread     {rate(result['random_hands_per_s'])}",
        f"hearts_sim kernel, {result['threads']} threads    {rate(result['random_hands_per_s_all_threads'])}",
        f"simulate() with DataFrame       {rate(result['hands_per_s_with_records'])}",
        f"OpenSpiel hearts (C++), 1 core  {rate(result['openspiel_hands_per_s'])}",
    ]
    if result["ratio_vs_openspiel"] is not None:
        lines.append(f"ratio, 1 thread vs OpenSpiel    {result['ratio_vs_openspiel']:>12}x")
    lines.append(f"first call (compile or cache)   {result['first_call_s']:>12} s")
    if result["cold_start_s"] is not None:
        lines.append(
            f"cold start / warm start          {result['cold_start_s']:>8} s / {result['warm_start_s']} s"
        )
    lines.append(f"invariants checked on           {result['invariants_checked']:>12,} hands: ok")
    return "\n".join(lines)
