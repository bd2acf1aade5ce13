"""Scaling of ``hearts-sim tournament --cluster`` on this machine, and a paper estimate for a
large cluster.

Measures, best of ``--repeats`` (the machine is shared), random against random (14
seatings per deal, the default 4,681 deals = 65,534 hands per shard):

- hands/s of a plain local run (``LocalRunner``) with 1 thread and with all cores;
- hands/s with ``DaskRunner("local:N")`` for each N of ``--workers`` (one single-threaded
  worker process each, 1 thread per task), on a warm cluster; its start-up time
  (LocalCluster plus the warm-up plugin) is reported separately;
- the per-shard overhead: tiny shards (1 deal = 14 hands) through ``local:1`` against
  the same shards in-process, (cluster time - local time) / shards;
- the client's ceiling: tallying (and, with ``--out``, writing Parquet) of precomputed
  shards, which a single client must do for every hand whatever the cluster size;
- ms per decision of a search agent (``--search ismcts``; ``--search hard`` for the CPU level)
  on one thread.

Then the estimate: 10^10 random hands and 10^7 search decisions on ``--nodes`` nodes of
``--cores`` cores each, from the per-core figures, the per-shard overhead and the client's
ceiling.

    python experiments/cluster_scaling.py                 # about 3 minutes on 2 cores
    python experiments/cluster_scaling.py --json
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agents.registry import parse_agent
from hearts_sim._numba import max_threads
from hearts_sim.apps.script import ScriptParser, number, run_script, whole
from hearts_sim.selfplay.simulate import set_threads
from hearts_sim.studies.cluster import DaskRunner
from hearts_sim.studies.tournament import (
    ChunkRecords,
    LocalRunner,
    TournamentConfig,
    chunk_records,
    run_tournament,
)


class ReplayRunner:
    """Yields precomputed shards: what is left is the client's own work per shard."""

    def __init__(self, shards: dict[int, ChunkRecords]):
        self.shards = shards

    def chunks(
        self, config: TournamentConfig, chunks: range, hands: bool = True
    ) -> Iterator[tuple[int, ChunkRecords]]:
        for chunk in chunks:
            yield chunk, self.shards[chunk]


def interleaved_best(repeats: int, runs: dict[str, Callable[[], Any]]) -> dict[str, float]:
    """The shortest wall time of each run over ``repeats`` rounds, the runs taking turns in
    every round so that a change in the shared machine's load hits them all alike."""
    best = dict.fromkeys(runs, math.inf)
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def search_ms_per_decision(spec: str, deals: int = 3) -> float:
    """ms per decision of ``spec`` in all four seats on one thread (passes and plays)."""
    set_threads(1)
    chunk_records(TournamentConfig((spec,), deals=1, chunk_deals=1), 0)  # compile / load
    config = TournamentConfig((spec,), deals=deals, chunk_deals=deals, seed=5)
    start = time.perf_counter()
    records, _ = chunk_records(config, 0)
    seconds = time.perf_counter() - start
    n = config.rules.n_players
    passes = int((records["pass_offset"] % n != 0).sum()) * n if config.rules.pass_count else 0
    decisions = len(records) * 13 * n + passes  # 13 tricks, every seat plays once in each
    return 1000 * seconds / decisions


def measure(args: argparse.Namespace) -> dict[str, Any]:
    base = TournamentConfig(("random", "random"), seed=1)
    config = TournamentConfig(base.agents, deals=args.shards * base.chunk_deals, seed=1)
    tiny = TournamentConfig(config.agents, deals=args.tiny_shards, chunk_deals=1, seed=1)
    hands = config.deals * len(config.seatings())
    quiet: dict[str, Any] = {"progress": False}
    result: dict[str, Any] = {
        "hands": hands,
        "shards": config.n_chunks,
        "hands_per_shard": hands // config.n_chunks,
        "load_average_before": os.getloadavg()[0],
    }
    with contextlib.ExitStack() as stack:
        runners: dict[int, DaskRunner] = {}
        startup: dict[int, float] = {}
        for n in args.workers:  # start-up: LocalCluster, then warm-up plugin and one shard
            start = time.perf_counter()
            runners[n] = stack.enter_context(DaskRunner(f"local:{n}", threads=1))
            run_tournament(
                TournamentConfig(config.agents, deals=n, chunk_deals=1), runner=runners[n], **quiet
            )
            startup[n] = time.perf_counter() - start

        def local(threads: int, which: TournamentConfig) -> Callable[[], Any]:
            return lambda: run_tournament(which, threads=threads, runner=LocalRunner(), **quiet)

        def on(n: int, which: TournamentConfig) -> Callable[[], Any]:
            return lambda: run_tournament(which, runner=runners[n], **quiet)

        runs = {f"local threads={t}": local(t, config) for t in sorted({1, args.local_threads})}
        runs |= {f"--cluster local:{n}": on(n, config) for n in args.workers}
        for run in runs.values():  # warm every path once
            run()
        best = interleaved_best(args.repeats, runs)
        result["hands_per_s"] = {name: hands / seconds for name, seconds in best.items()}
        result["startup_s"] = {f"local:{n}": startup[n] for n in args.workers}
        result["warm_up"] = {f"local:{n}": list(runners[n].workers().values()) for n in args.workers}

        # tiny shards (14 hands): what a shard costs beyond its hands
        n = min(args.workers)
        tiny_best = interleaved_best(args.repeats, {"local": local(1, tiny), "cluster": on(n, tiny)})
        result["overhead_ms_per_shard"] = {
            f"local:{n}": 1000 * (tiny_best["cluster"] - tiny_best["local"]) / tiny.n_chunks,
            "local_ms_per_tiny_shard": 1000 * tiny_best["local"] / tiny.n_chunks,
        }

    # the client's ceiling: tally (and Parquet) of precomputed shards
    set_threads(None)
    replay = ReplayRunner({c: chunk_records(config, c) for c in range(config.n_chunks)})
    with tempfile.TemporaryDirectory() as tmp:
        outs = (Path(tmp) / f"r{i}" for i in itertools.count())
        client = interleaved_best(
            args.repeats,
            {
                "tally": lambda: run_tournament(config, runner=replay, **quiet),
                "tally+parquet": lambda: run_tournament(config, next(outs), runner=replay, **quiet),
            },
        )
    result["client_hands_per_s"] = {name: hands / seconds for name, seconds in client.items()}
    result["record_bytes_per_hand"] = replay.shards[0][0].itemsize  # (records, hands of games)

    if args.search:
        result["search"] = {"agent": args.search, "ms_per_decision": search_ms_per_decision(args.search)}
    result["load_average_after"] = os.getloadavg()[0]
    return result


def estimate(result: dict[str, Any], nodes: int, cores: int, default_ms: float) -> dict[str, Any]:
    """Seconds for 10^10 random hands and 10^7 search decisions on ``nodes`` x ``cores`` single-
    threaded workers, from one worker's rate here (``local:1``: shard transfer and Dask's
    per-shard cost included), and the single client's ceiling (it tallies every hand)."""
    rates = result["hands_per_s"]
    per_worker = rates.get("--cluster local:1", rates["local threads=1"])
    workers = nodes * cores
    hands, decisions = 1e10, 1e7
    ms = result.get("search", {}).get("ms_per_decision", default_ms)
    return {
        "cluster": f"{nodes} nodes x {cores} cores",
        "hands_per_s_per_worker": per_worker,
        "random_1e10_workers_s": hands / (per_worker * workers),
        "random_1e10_shards": math.ceil(hands / result["hands_per_shard"]),
        "random_1e10_client_tally_s": hands / result["client_hands_per_s"]["tally"],
        "random_1e10_client_parquet_s": hands / result["client_hands_per_s"]["tally+parquet"],
        "random_1e10_gathered_bytes": hands * result["record_bytes_per_hand"],
        "search_ms_per_decision": ms,
        "search_ms_measured": "search" in result,
        "search_1e7_decisions_s": decisions * ms / 1000 / workers,
    }


def format_result(result: dict[str, Any], paper: dict[str, Any]) -> str:
    lines = [
        f"{result['hands']:,} hands in {result['shards']} shards of {result['hands_per_shard']:,} "
        "(random vs random, 14 seatings); best of the repeats, runs interleaved; "
        f"load average {result['load_average_before']:.1f} before, {result['load_average_after']:.1f} after",
        "",
        f"{'run':<24} {'hands/s':>10}   vs local 1 thread",
    ]
    base = result["hands_per_s"]["local threads=1"]
    for name, rate in result["hands_per_s"].items():
        extra = name.removeprefix("--cluster ")
        startup = result["startup_s"].get(extra)
        note = f"   (start-up {startup:.1f} s)" if startup is not None else ""
        lines.append(f"{name:<24} {rate:>10,.0f}   {rate / base:5.2f}x{note}")
    overhead = result["overhead_ms_per_shard"]
    tiny_ms = overhead["local_ms_per_tiny_shard"]
    for name, ms in overhead.items():
        if name.startswith("local:"):
            lines.append(
                f"per-shard overhead ({name}): {ms:.1f} ms (a 14-hand shard in-process: {tiny_ms:.1f} ms)"
            )
    client = result["client_hands_per_s"]
    lines.append(
        f"client ceiling: tally {client['tally']:,.0f} hands/s, with Parquet {client['tally+parquet']:,.0f} "
        f"hands/s ({result['record_bytes_per_hand']} bytes gathered per hand)"
    )
    if "search" in result:
        s = result["search"]
        lines.append(f"{s['agent']}: {s['ms_per_decision']:.1f} ms per decision on one thread")
    hours = 3600
    assumed = "" if paper["search_ms_measured"] else " (assumed)"
    lines += [
        "",
        f"paper estimate on {paper['cluster']}, {paper['hands_per_s_per_worker']:,.0f} hands/s per worker:",
        f"  10^10 random hands: workers {paper['random_1e10_workers_s'] / 60:.1f} min "
        f"({paper['random_1e10_shards']:,} shards); the one client needs "
        f"{paper['random_1e10_client_tally_s'] / hours:.1f} h to tally, "
        f"{paper['random_1e10_client_parquet_s'] / hours:.1f} h with --out "
        f"({paper['random_1e10_gathered_bytes'] / 1e12:.2f} TB gathered)",
        f"  10^7 search decisions at {paper['search_ms_per_decision']:.0f} ms{assumed}: "
        f"{paper['search_1e7_decisions_s'] / 60:.1f} min",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shards", type=whole("--shards", 1, 10_000), default=8, help="shards of 65,534 hands per timed run"
    )
    parser.add_argument(
        "--workers", type=whole("--workers", 1, 1024), nargs="+", default=[1, 2], help="LocalCluster sizes"
    )
    parser.add_argument(
        "--local-threads",
        type=whole("--local-threads", 1, max_threads()),
        default=min(2, max_threads()),
        help="threads of the local run",
    )
    parser.add_argument(
        "--tiny-shards",
        type=whole("--tiny-shards", 1, 100_000),
        default=200,
        help="1-deal shards for the overhead",
    )
    parser.add_argument("--repeats", type=whole("--repeats", 1, 1000), default=3)
    parser.add_argument("--search", default="ismcts", help="search agent to time ('' to skip)")
    parser.add_argument(
        "--assume-ms",
        type=number("--assume-ms", 0, open_low=True),
        default=50.0,
        help="ms per decision without --search",
    )
    parser.add_argument("--nodes", type=whole("--nodes", 1, 1_000_000), default=100)
    parser.add_argument(
        "--cores", type=whole("--cores", 1, 1_000_000), default=32, help="cores per node for the estimate"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.search:
        parse_agent(args.search)  # an unknown agent before minutes of timing
    result = measure(args)
    paper = estimate(result, args.nodes, args.cores, args.assume_ms)
    print(json.dumps({**result, "estimate": paper}) if args.json else format_result(result, paper))


if __name__ == "__main__":
    run_script(main)
