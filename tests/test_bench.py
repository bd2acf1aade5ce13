"""``hearts-sim bench``: the figures it promises, with its peers (OpenSpiel, the minimal reference
playout) measured in the same run."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from hearts_sim.engine.rng import derive_seed
from hearts_sim.selfplay.simulate import simulate
from hearts_sim.studies import bench
from hearts_sim.studies.reference_playout import reference_hand


def test_bench_json_reports_every_figure_and_checks_the_invariants() -> None:
    pytest.importorskip("pyspiel")
    run = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "bench", "--hands", "2000", "--openspiel-hands", "20",
         "--repeats", "2", "--threads", "1", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    result = json.loads(run.stdout)
    assert result["hands"] == 2000 and result["threads"] == 1
    assert result["random_hands_per_s"] > 0 and result["hands_per_s_with_records"] > 0
    assert result["openspiel_hands_per_s"] > 0
    ratio = result["random_hands_per_s"] / result["openspiel_hands_per_s"]
    # the ratio is rounded to 0.1 from the unrounded rates; the rates are printed to whole hands
    rates_rounding = ratio * (0.5 / result["random_hands_per_s"] + 0.5 / result["openspiel_hands_per_s"])
    assert result["ratio_vs_openspiel"] == pytest.approx(ratio, abs=0.05 + rates_rounding + 1e-9)
    # 2 timed runs on 1 thread; with 1 thread in all, that figure is the all-threads one too
    assert result["invariants_checked"] == 2 * 2000
    assert result["random_hands_per_s_all_threads"] == result["random_hands_per_s"]
    assert result["reference_hands_per_s"] > 0
    for figure, key in (("random_hands_per_s", "kernel"), ("hands_per_s_with_records", "records")):
        ratio = result[figure] / result["reference_hands_per_s"]
        assert result[f"ratio_{key}_vs_reference"] == pytest.approx(ratio, rel=0.01)
    assert not any(key.startswith(("cold_start", "warm_start")) for key in result)  # no --startup


def test_bench_prints_no_reference_ratio_for_other_rules() -> None:
    result = bench.run_bench(hands=200, threads=1, openspiel_hands=0, rules="omnibus", repeats=1)
    assert result["reference_hands_per_s"] > 0  # still timed: the floor of a standard hand here
    assert result["ratio_kernel_vs_reference"] is None and result["ratio_records_vs_reference"] is None
    assert "ratio to the reference" not in bench.format_bench(result)
    assert "OpenSpiel hearts (C++), 1 core     skipped (--openspiel-hands 0)" in bench.format_bench(result)
    assert bench.format_bench(result).count("hearts_sim kernel, 1 thread") == 1  # one thread in all: one row
    two = bench.format_bench({**result, "threads": 2, "random_hands_per_s_all_threads": 1})
    assert "hearts_sim kernel, 2 threads" in two and "hearts_sim kernel, 1 thread" in two


def test_bench_takes_rule_switches_as_every_command_does(capsys: pytest.CaptureFixture[str]) -> None:
    """``--rule`` after ``--rules``, as tournament, match, levels, tune, play and serve take it (bench
    refused it: a variant's speed needed the switches spelt into the preset's text)."""
    from hearts_sim.apps.cli import main

    argv = ["bench", "--hands", "100", "--openspiel-hands", "0", "--repeats", "1", "--threads", "1"]
    assert main([*argv, "--rules", "qdan5", "--rule", "moon=off", "--rule", "jd_bonus=-10", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["rules"] == "n_players=5, moon=off, jd_bonus=-10"
    assert result["invariants_checked"] == 100  # the variant's hands were played and checked


def test_bench_gives_no_ratio_to_openspiel_for_a_game_it_does_not_play() -> None:
    """OpenSpiel plays 4-player hearts (its own rules, the openspiel preset): a 5-player preset's
    ratio to it (119.6x) compared two games."""
    pytest.importorskip("pyspiel")
    result = bench.run_bench(hands=200, threads=1, openspiel_hands=20, rules="qdan5", repeats=1)
    assert result["openspiel_hands_per_s"] > 0 and result["ratio_vs_openspiel"] is None
    printed = bench.format_bench(result)
    assert printed.startswith("rules: qdan5 (n_players=5)") and "vs OpenSpiel" not in printed
    assert (
        "ratios                                     none: the reference plays standard rules, OpenSpiel "
        "standard or its own (--rules openspiel)" in printed
    )


def test_bench_gives_the_ratio_to_openspiel_under_its_own_rules() -> None:
    """Under ``--rules openspiel``, the one game OpenSpiel plays exactly, the ratio to it was
    withheld, and the line said OpenSpiel plays standard rules."""
    pytest.importorskip("pyspiel")
    result = bench.run_bench(hands=200, threads=1, openspiel_hands=20, rules="openspiel", repeats=1)
    assert result["ratio_vs_openspiel"] == pytest.approx(
        result["random_hands_per_s"] / result["openspiel_hands_per_s"], rel=0.01
    )
    assert result["ratio_kernel_vs_reference"] is None
    printed = bench.format_bench(result)
    assert "ratio, 1 thread vs OpenSpiel" in printed
    assert "ratio to the reference                     none: the reference plays standard rules" in printed


def test_the_largest_seed_benchmarks_too() -> None:
    """Timed runs take the seeds after ``seed``: at 2**64-1 they wrap instead of overflowing."""
    result = bench.run_bench(hands=50, threads=1, openspiel_hands=0, repeats=2, seed=2**64 - 1)
    assert result["invariants_checked"] == 2 * 50 and result["reference_hands_per_s"] > 0


def test_the_reference_playout_plays_the_standard_game() -> None:
    """Every hand hands out the 26 points; seat 0's mean score matches the engine's random
    play (different random streams: 20,000 hands each, the means within 5 standard errors)."""
    hands, passed, points = (np.zeros(4, dtype=dtype) for dtype in (np.uint64, np.uint64, np.int64))
    scores = []
    for h in range(20_000):
        scores.append(reference_hand(h, np.uint64(derive_seed(np.uint64(7), h)), hands, passed, points))
        assert points.sum() == 26 and (hands == 0).all()  # every card played, every point taken
    engine = simulate("standard", "random", hands=20_000, seed=7, threads=1, progress=False)["score_0"]
    standard_error = np.sqrt(np.var(scores) / len(scores) + engine.var() / len(engine))
    assert abs(np.mean(scores) - engine.mean()) < 5 * standard_error


def test_startup_times_each_command_cold_then_warm_in_fresh_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the real commands compile for a minute with an empty cache: time two quick ones the same way
    monkeypatch.setattr(bench, "STARTUP_COMMANDS", {"rules": ["rules"], "agents": ["agents"]})
    result = bench.run_bench(hands=100, threads=1, openspiel_hands=0, repeats=1, startup=True)
    for name in ("rules", "agents"):
        cold, warm = result[f"cold_start_{name}_s"], result[f"warm_start_{name}_s"]
        assert cold > 0 and warm > 0
        assert f"hearts-sim {name}, cold / warm" in bench.format_bench(result)
