"""The training script's smoke run (it learns, and writes weights the net agent loads) and the
environment benchmark's figures, at tiny sizes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.net import load_weights

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def run(script: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXPERIMENTS / script), *arguments], capture_output=True, text=True, timeout=900
    )


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_training_smoke_run_learns_and_writes_weights(backend: str, tmp_path: Path) -> None:
    if backend == "torch":
        pytest.importorskip(
            "torch", reason="torch is in the learn extra, not dev: the numpy run covers the script"
        )
    out = tmp_path / "policy.npz"
    result = run(
        "train_policy.py", "--decisions", "20000", "--envs", "64", "--hidden", "16", "16", "--lr", "3e-3",
        "--reports", "3", "--backend", backend, "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    agreement = [float(a) for a in re.findall(r"agrees with normal (\d\.\d+)", result.stdout)]
    assert len(agreement) >= 3 and agreement[-1] > agreement[0] + 0.05, result.stdout  # it learns
    w1, b1, w2, b2, w3, b3 = load_weights(out)
    assert w1.shape == (783, 16) and w3.shape == (16, 52)
    with np.load(out) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["method"] == "DAgger" and meta["backend"] == backend and meta["decisions"] == 19968


def test_training_ends_with_the_duplicate_match_its_weights_play_as_net(tmp_path: Path) -> None:
    """``--eval-deals`` plays the trained network in this process (a ``PolicyAgent``) against the
    opponents; the figure is the one the written file gets as ``net`` in a new process."""
    out = tmp_path / "student.npz"
    result = run(
        "train_policy.py", "--decisions", "6400", "--envs", "64", "--hidden", "16", "16", "--lr", "3e-3",
        "--reports", "1", "--backend", "numpy", "--eval-deals", "12", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with np.load(out) as data:
        evaluation = json.loads(str(data["meta"]))["evaluation"]
    assert evaluation["opponent"] == "easy" and evaluation["deals"] == 12
    assert f"against easy in duplicate (12 deals): {evaluation['minus_opponent']:+.3f}" in result.stdout
    command = ["match", "net(weights=student)", "easy", "--deals", "12", "--json"]
    match = subprocess.run(
        [sys.executable, "-m", "hearts_sim", *command], capture_output=True, text=True, timeout=900,
        env={**os.environ, "HEARTS_SIM_WEIGHTS": str(tmp_path)},
    )  # fmt: skip
    assert match.returncode == 0, match.stderr
    pair = json.loads(match.stdout)  # a match: one pair
    assert pair["a_minus_b"] == pytest.approx(evaluation["minus_opponent"], abs=1e-4)
    assert pair["ci95"] == pytest.approx(evaluation["ci95"], abs=1e-4)


def test_training_goes_on_from_init_weights(tmp_path: Path) -> None:
    """``--init`` starts from a weights file, with its widths: at a learning rate too small to move
    them, the run plays (and writes back) the network it was given, and records where it began."""
    first = tmp_path / "first.npz"
    trained = run(
        "train_policy.py", "--decisions", "20000", "--envs", "64", "--hidden", "16", "8", "--lr", "3e-3",
        "--reports", "1", "--backend", "numpy", "--out", str(first),
    )  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    again = tmp_path / "again.npz"
    resumed = run(
        "train_policy.py", "--decisions", "640", "--envs", "64", "--lr", "1e-12", "--guided", "0",
        "--reports", "1", "--backend", "numpy", "--init", str(first), "--out", str(again),
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    learned = float(re.findall(r"agrees with normal (\d\.\d+)", trained.stdout)[-1])
    kept = float(re.findall(r"agrees with normal (\d\.\d+)", resumed.stdout)[-1])
    assert abs(kept - learned) < 0.1, (learned, kept)  # a fresh network agrees far less
    for given, written in zip(load_weights(first), load_weights(again), strict=True):
        np.testing.assert_allclose(written, given, atol=1e-3)
    with np.load(again) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["hidden"] == [16, 8] and meta["init"]["file"] == str(first)


def test_training_refuses_bad_arguments_before_training(tmp_path: Path) -> None:
    for arguments, words in [
        (["--decisions", "0", "--out", str(tmp_path / "p.npz")], "--decisions must be positive"),
        (["--out", str(tmp_path / "p.txt")], "--out must name a .npz file"),
        (["--out", "/proc/forbidden/p.npz"], "--out /proc/forbidden/p.npz: cannot"),
        (["--opponents", "nobody", "--out", str(tmp_path / "p.npz")], "unknown agent 'nobody'"),
        (["--rules", "chess", "--out", str(tmp_path / "p.npz")], "unknown rules preset 'chess'"),
        (["--lr", "-0.001", "--out", str(tmp_path / "p.npz")], "--lr -0.001 is not valid"),
        (["--lr", "nan", "--out", str(tmp_path / "p.npz")], "--lr nan is not valid"),
        (["--eval-deals", "-1", "--out", str(tmp_path / "p.npz")], "--eval-deals must be 0 or more"),
        (["--init", str(tmp_path / "none.npz"), "--out", str(tmp_path / "p.npz")], "--init "),
        (
            [
                "--init",
                str(EXPERIMENTS.parent / "agents/weights/dagger_normal.npz"),
                "--hidden",
                "8",
                "8",
                "--out",
                str(tmp_path / "p.npz"),
            ],
            "--hidden 8 8: --init ",
        ),
    ]:
        result = run("train_policy.py", *arguments)
        assert result.returncode == 2 and words in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_env_bench_prints_every_figure() -> None:
    result = run("env_bench.py", "--seconds", "0.05", "--repeats", "1", "--envs", "8", "--json")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    for key in ("vector_env_random", "vector_env_normal", "aec_env", "seat_env"):
        wall, cpu = figures[key]  # per wall-clock second, per CPU second
        assert wall > 0 and cpu > 0, key
    assert figures["openspiel"] is None or min(figures["openspiel"]) > 0
