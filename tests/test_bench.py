"""``hearts-sim bench``: the figures it promises, with OpenSpiel measured in the same run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


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
    assert result["ratio_vs_openspiel"] == pytest.approx(ratio, rel=0.01)
    assert result["invariants_checked"] == 2 * 2 * 2000  # 2 timed runs, 1 thread and "all" (1) threads


def test_bench_rejects_a_bad_hand_count() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "bench", "--hands", "-5"], capture_output=True, text=True
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr and run.stderr.count("\n") == 1
