"""``hearts-sim bench``: random-vs-random throughput, against its peers measured in the same run.

Figures: hands/s of the self-play kernel on one thread (the per-core figure) and on
all threads, hands/s of ``simulate`` on one thread including its records and DataFrame, the
first call's compile/cache-load time; two peers, each in the same run: the minimal reference
playout (``reference_playout``: the floor of what a standard hand costs on this CPU, the
engine's ratio to it judges the engine on whatever CPU runs the benchmark) and OpenSpiel's
``hearts`` with four uniform random bots through ``pyspiel.evaluate_bots``. ``--startup``
times, in fresh processes with an empty numba cache, what a new user waits for: the default
``hearts-sim tournament`` and this benchmark's own kernels. Every benchmarked hand is checked
against the invariants of docs/rules.md (untimed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from hearts_sim._numba import max_threads
from hearts_sim.core.rules import Rules, resolve_rules, rules_label
from hearts_sim.engine.rng import MAX_SEED, check_seed
from hearts_sim.selfplay.invariants import check_hand_records
from hearts_sim.selfplay.simulate import Table, compile_seconds, run_hands, set_threads, simulate
from hearts_sim.studies.openspiel_peer import openspiel_random_hands_per_second
from hearts_sim.studies.reference_playout import reference_hands

# What a new user starts, each timed from process start to exit: the default tournament (a few
# deals: the time is the start, not the play) and a short run of this benchmark's kernels.
STARTUP_COMMANDS = {
    "tournament": ["tournament", "--deals", "20", "--quiet"],
    "bench": ["bench", "--hands", "1000", "--repeats", "1", "--openspiel-hands", "0", "--quiet"],
}


def repeat_seed(seed: int, repeat: int) -> int:
    """The seed of timed run ``repeat``: the next seeds after ``seed``, wrapping at 2**64."""
    return (seed + repeat) & MAX_SEED


def timed_kernel(table: Table, seed: int, hands: int, repeats: int) -> tuple[float, int]:
    """Best hands/s over ``repeats`` kernel runs (the machine is shared: the best is the
    least disturbed), and the number of hands whose invariants were checked."""
    best, checked = 0.0, 0
    for repeat in range(repeats):
        start = time.perf_counter()
        records = run_hands(table, repeat_seed(seed, repeat), 0, hands)
        best = max(best, hands / (time.perf_counter() - start))
        checked += check_hand_records(records, table.rules)
    return best, checked


def timed_reference(seed: int, hands: int, repeats: int) -> float:
    """Best hands/s of the minimal reference playout over ``repeats`` runs, on the calling thread."""
    reference_hands(np.uint64(seed), 10)  # compile or load the cache, untimed
    best = 0.0
    for repeat in range(repeats):
        start = time.perf_counter()
        reference_hands(np.uint64(repeat_seed(seed, repeat)), hands)
        best = max(best, hands / (time.perf_counter() - start))
    return best


def timed_simulate(rules: Rules, seed: int, hands: int, repeats: int) -> float:
    """Best hands/s of ``simulate`` (records and DataFrame) over ``repeats`` runs on one thread
    (a single run of a million hands swings by a third with the first touch of its memory)."""
    # untimed: the first call loads its kernels and warms pandas (0.9 s here, more than 1,000 hands)
    simulate(rules, "random", hands=10, seed=seed, threads=1, progress=False)
    best = 0.0
    for repeat in range(repeats):
        start = time.perf_counter()
        simulate(rules, "random", hands=hands, seed=repeat_seed(seed, repeat), threads=1, progress=False)
        best = max(best, hands / (time.perf_counter() - start))
    return best


def startup_times() -> dict[str, tuple[float, float]]:
    """``{command: (cold, warm)}``: seconds from a fresh process's start to its exit for each of
    ``STARTUP_COMMANDS``, compiling into an empty numba cache, then loading that cache. Each
    command gets its own empty cache, so neither profits from the other's compiling."""
    times = {}
    for name, arguments in STARTUP_COMMANDS.items():
        with tempfile.TemporaryDirectory() as scratch:
            env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(scratch, "cache")}
            seconds = []
            for _ in range(2):
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "hearts_sim", *arguments],
                    env=env,
                    cwd=scratch,  # the tournament writes its run folder here
                    check=True,
                    capture_output=True,
                )
                seconds.append(time.perf_counter() - start)
        times[name] = (seconds[0], seconds[1])
    return times


def run_bench(
    hands: int = 2_000_000,
    threads: int | None = None,
    openspiel_hands: int = 2000,
    seed: int = 0,
    rules: Rules | str = "standard",
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
    say(f"bench: the minimal reference playout (standard rules), 1 thread: best of {repeats} runs")
    reference = timed_reference(seed, hands, repeats)
    set_threads(all_threads)
    many_threads, more = one_thread, 0  # one thread in all: one figure, not two noisy ones
    if all_threads > 1:
        say(f"bench: self-play kernel, {all_threads} threads: best of {repeats} runs of {hands:,} hands")
        many_threads, more = timed_kernel(table, seed, hands, repeats)
    say(f"bench: simulate() with its records and DataFrame, 1 thread: best of {repeats} runs")
    with_records = timed_simulate(rules_value, seed, hands, repeats)
    set_threads(all_threads)
    # the reference plays the standard game only: a ratio is meaningful for standard rules
    comparable = rules_value == resolve_rules("standard")
    # OpenSpiel plays its own game, the openspiel preset (standard, but the queen breaks hearts and
    # each hand passes a random way): a hand of it costs what a standard one does
    like_openspiel = comparable or rules_value == resolve_rules("openspiel")

    if openspiel_hands:
        say(f"bench: OpenSpiel hearts, {openspiel_hands:,} hands")
    # OpenSpiel's seeds are C ints: fold ours into 0 .. 2**30 (plus the hand index stays below 2**31)
    peer = openspiel_random_hands_per_second(openspiel_hands, seed % 2**30) if openspiel_hands else None
    if startup:
        say("bench: cold and warm start of tournament and bench in fresh processes (the cold ones compile)")
    starts = startup_times() if startup else {}
    return {
        "rules": rules_value.describe(),
        "hands": hands,
        "threads": all_threads,
        "random_hands_per_s": round(one_thread),
        "random_hands_per_s_all_threads": round(many_threads),
        "hands_per_s_with_records": round(with_records),
        "reference_hands_per_s": round(reference),
        "ratio_kernel_vs_reference": round(one_thread / reference, 3) if comparable else None,
        "ratio_records_vs_reference": round(with_records / reference, 3) if comparable else None,
        "openspiel_hands": openspiel_hands,
        "openspiel_hands_per_s": None if peer is None else round(peer),
        # a ratio under other rules compares two games (5 players against its 4 read as 119.6x)
        "ratio_vs_openspiel": None if peer is None or not like_openspiel else round(one_thread / peer, 1),
        "first_call_s": round(first_call, 2),
        **{
            f"{when}_start_{name}_s": round(seconds, 2)
            for name, pair in starts.items()
            for when, seconds in zip(("cold", "warm"), pair, strict=True)
        },
        "invariants_checked": checked + more,
        "numba_threads_available": max_threads(),
    }


def format_bench(result: dict[str, Any]) -> str:
    """The figures as an aligned table for the terminal."""

    def rate(value: float | None) -> str:
        return "not installed" if value is None else f"{value:>12,.0f} hands/s"

    def row(label: str, value: str) -> str:
        return f"{label:<34} {value}"

    threads = result["threads"]
    skipped = not result["openspiel_hands"]
    peer = "skipped (--openspiel-hands 0)" if skipped else rate(result["openspiel_hands_per_s"])
    lines = [
        f"rules: {rules_label(result['rules'])}   hands per run: {result['hands']:,}",
        row("hearts_sim kernel, 1 thread", rate(result["random_hands_per_s"])),
    ]
    if threads > 1:
        all_threads = rate(result["random_hands_per_s_all_threads"])
        lines.append(row(f"hearts_sim kernel, {threads} threads", all_threads))
    lines += [
        row("simulate() with records, 1 thread", rate(result["hands_per_s_with_records"])),
        row("minimal reference, 1 thread", rate(result["reference_hands_per_s"])),
        row("OpenSpiel hearts (C++), 1 core", peer),
    ]
    if result["ratio_kernel_vs_reference"] is not None:
        kernel, records = result["ratio_kernel_vs_reference"], result["ratio_records_vs_reference"]
        lines.append(row("ratio to the reference", f"{kernel:>12.0%} kernel, {records:.0%} simulate()"))
    if result["ratio_vs_openspiel"] is not None:
        lines.append(row("ratio, 1 thread vs OpenSpiel", f"{result['ratio_vs_openspiel']:>12}x"))
    if result["ratio_kernel_vs_reference"] is None:
        why = "the reference plays standard rules"
        if result["ratio_vs_openspiel"] is None and not skipped:
            why += ", OpenSpiel standard or its own (--rules openspiel)"
        lines.append(
            row(
                "ratio to the reference" if result["ratio_vs_openspiel"] else "ratios", f"{'none':>12}: {why}"
            )
        )
    lines.append(row("first call (compile or cache)", f"{result['first_call_s']:>12} s"))
    for name in STARTUP_COMMANDS:
        if f"cold_start_{name}_s" in result:
            cold, warm = result[f"cold_start_{name}_s"], result[f"warm_start_{name}_s"]
            lines.append(row(f"hearts-sim {name}, cold / warm", f"{cold:>10} s / {warm} s"))
    lines.append(row("invariants checked on", f"{result['invariants_checked']:>12,} hands: ok"))
    return "\n".join(lines)
