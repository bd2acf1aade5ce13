"""The training script's smoke run (it learns, and writes weights the net agent loads) and the
environment benchmark's figures, at tiny sizes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.net import load_weights

try:
    from tests.signals import default_ctrl_c
except ImportError:  # run from inside tests/
    from signals import default_ctrl_c  # type: ignore[no-redef]

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def script_module(script: str):  # type: ignore[no-untyped-def]
    """An experiments script imported as a module (they are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(Path(script).stem, EXPERIMENTS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    """``--eval-deals`` plays the trained network in this process (a ``PolicyAgent``) against each
    of the opponents (here one per seat, two of them alike); the figure is the one the written
    file gets as ``net`` in a new process."""
    out = tmp_path / "student.npz"
    result = run(
        "train_policy.py", "--decisions", "6400", "--envs", "64", "--hidden", "16", "16", "--lr", "3e-3",
        "--opponents", "easy", "random", "easy", "--reports", "1", "--backend", "numpy",
        "--eval-deals", "12", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with np.load(out) as data:
        meta = json.loads(str(data["meta"]))
    evaluation, against_random = meta["evaluation"]  # one per distinct opponent, in their order
    assert meta["opponents"] == ["easy", "random", "easy"] and against_random["opponent"] == "random"
    assert f"against random in duplicate (12 deals): {against_random['minus_opponent']:+.3f}" in result.stdout
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
    assert meta["hidden"] == [16, 8] and meta["init"]["file"] == str(first) and meta["finished"] is True
    assert meta["init"]["sha256"] == hashlib.sha256(first.read_bytes()).hexdigest()
    # in place (--out its --init): the digest is the starting file's, read before the first
    # checkpoint overwrote it (until 2026-12-06 each save read the file again: the last checkpoint's
    # digest, and a run whose --init was moved away lost every save)
    started = hashlib.sha256(again.read_bytes()).hexdigest()
    in_place = run(
        "train_policy.py", "--decisions", "640", "--envs", "64", "--guided", "0", "--reports", "2",
        "--backend", "numpy", "--init", str(again), "--out", str(again),
    )  # fmt: skip
    assert in_place.returncode == 0, in_place.stderr
    with np.load(again) as data:
        assert (
            json.loads(str(data["meta"]))["init"]["sha256"] == started != hashlib.sha256(again.read_bytes())
        )


@pytest.mark.parametrize(
    ("method", "options", "kept"),
    [
        # dagger at lr 1000: logits past the mask's reach picked an illegal card, a traceback
        ("dagger", ["--lr", "1000"], False),
        # pg at lr 1e10: weights past float16's range, written as inf and "finished", exit code 0
        ("pg", ["--lr", "1e10", "--batch", "256", "--minibatch", "64"], True),
    ],
)
def test_a_diverging_run_is_one_line_and_keeps_only_finite_weights(
    tmp_path: Path, method: str, options: list[str], kept: bool
) -> None:
    out = tmp_path / "p.npz"
    found = run(
        "train_policy.py", "--method", method, "--decisions", "3000", "--envs", "16", "--hidden", "16", "16",
        "--backend", "numpy", *options, "--out", str(out),
    )  # fmt: skip
    assert found.returncode == 1, found.stderr
    assert found.stderr.startswith("train_policy.py: error: training diverged after "), found.stderr
    assert "lower --lr" in found.stderr and "Traceback" not in found.stderr and "Warning" not in found.stderr
    assert found.stderr.count("\n") == 1
    assert out.exists() == kept
    if kept:  # the last checkpoint before it blew up, loadable, marked unfinished
        assert all(np.isfinite(w).all() for w in load_weights(out))
        with np.load(out) as data:
            assert json.loads(str(data["meta"]))["finished"] is False


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_keeps_the_last_checkpoint_and_says_how_to_train_on(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    """Ctrl-C in training is one line (it was a traceback): which decisions the file at --out
    holds, marked unfinished in its meta, and the command's options that train on from it.
    SIGTERM (a scheduler's time limit) the same, with exit code 143: it killed the process
    without a word until 2026-12-06 (run_script now handles it for every script)."""
    out = tmp_path / "stopped.npz"
    arguments = ["--decisions", "50000000", "--envs", "64", "--hidden", "8", "8", "--reports", "200000"]
    arguments += ["--backend", "numpy"]
    training = subprocess.Popen(
        [sys.executable, str(EXPERIMENTS / "train_policy.py"), *arguments, "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_ctrl_c,
    )  # fmt: skip
    assert training.stdout is not None
    training.stdout.readline()  # the first progress line: a checkpoint is being written
    training.stdout.readline()  # ... and the one after it, so the first is whole
    training.send_signal(signum)
    _, stderr = training.communicate(timeout=120)
    assert training.returncode == code, stderr
    with np.load(out) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["finished"] is False and meta["decisions"] < 50_000_000
    assert stderr.splitlines() == [
        f"train_policy.py: stopped: {out} holds the weights after {meta['decisions']:,} of the 50,000,000 "
        f"decisions (its last progress line); train on from them with --init {out} --guided 0"
    ]


def test_ctrl_c_while_a_checkpoint_is_packed_comes_after_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C that lands inside ``np.savez_compressed`` (the Ctrl-C test above hit it now and
    then) was a traceback and exit code 1: the zip file's close refused its open member as the
    interrupt unwound. It is held until the checkpoint is written, then stops the run as any
    Ctrl-C does, the file whole."""
    train_policy = script_module("train_policy.py")
    packed = np.savez_compressed

    def interrupted(*args: Any, **kwargs: Any) -> None:
        signal.raise_signal(signal.SIGINT)  # delivered at once where it is not held
        packed(*args, **kwargs)

    monkeypatch.setattr(train_policy.np, "savez_compressed", interrupted)
    out = tmp_path / "stopped.npz"
    arguments = ["--decisions", "6400", "--envs", "64", "--hidden", "8", "8", "--reports", "2"]
    with pytest.raises(SystemExit) as exited:
        train_policy.main([*arguments, "--backend", "numpy", "--out", str(out)])
    assert exited.value.code == 130
    with np.load(out) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["finished"] is False
    assert capsys.readouterr().err.endswith(  # the checkpoint written, counted (it said "no weights written")
        f": stopped: {out} holds the weights after {meta['decisions']:,} of the 6,400 decisions (its last "
        f"progress line); train on from them with --init {out} --guided 0\n"
    )


@pytest.mark.parametrize("numba_wrapped", [False, True])
def test_the_weights_are_written_before_the_evaluation_that_ctrl_c_may_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], numba_wrapped: bool
) -> None:
    """Also a Ctrl-C that numba wrapped in a ``SystemError`` (it arrived as a kernel was called):
    it was a bare "interrupted", without what was kept."""
    train_policy = script_module("train_policy.py")

    def stopped(weights: Any, args: Any) -> None:
        assert train_policy.load_weights(args.out)  # written already
        if not numba_wrapped:
            raise KeyboardInterrupt
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as signalled:
            wrapped = "CPUDispatcher(<function _chunk_sums>) returned a result with an exception set"
            raise SystemError(wrapped) from signalled

    monkeypatch.setattr(train_policy, "evaluate", stopped)
    out = tmp_path / "trained.npz"
    arguments = ["--decisions", "640", "--envs", "64", "--hidden", "8", "8", "--reports", "1"]
    with pytest.raises(SystemExit) as exited:
        train_policy.main([*arguments, "--backend", "numpy", "--eval-deals", "4", "--out", str(out)])
    assert exited.value.code == 130
    err = capsys.readouterr().err  # the program's name is argv[0]
    assert err.endswith(f": stopped in the evaluation: {out} holds the trained weights\n")
    with np.load(out) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["finished"] is True and meta["decisions"] == 640 and "evaluation" not in meta


def test_training_warns_of_a_file_that_will_play_slowly_or_not_by_its_name(tmp_path: Path) -> None:
    """A layer too large for numba to freeze (a first layer of more than 319 units) leaves every
    loop that seats net to compile in each process; a shipped file's name is taken. Both are
    said before the training, not discovered at the first match."""
    out = tmp_path / "dagger_mc.npz"
    result = run(
        "train_policy.py", "--decisions", "64", "--envs", "64", "--hidden", "320", "8", "--reports", "1",
        "--backend", "numpy", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: --hidden 320 8: a layer over the 1 MB numba can freeze into a cached loop (float32: a "
        "first layer of more than 319 units): with this file in a weights folder, every process that "
        "seats net compiles its loops afresh",
        f"warning: --out {out}: net(weights=dagger_mc) is the shipped file of that name; this one will be "
        "left out of net's choices (name it otherwise to play it)",
    ]


def test_policy_gradient_says_when_no_update_was_made(tmp_path: Path) -> None:
    """Fewer decisions of finished hands than --batch: the weights written are the ones it began
    with, which the run says (it wrote them as if trained)."""
    result = run(
        "train_policy.py", "--method", "pg", "--decisions", "1000", "--batch", "1000", "--envs", "16",
        "--hidden", "8", "8", "--reports", "1", "--backend", "numpy", "--out", str(tmp_path / "pg.npz"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: no update made: fewer than --batch 1,000 decisions of finished hands in the 992 "
        "decisions (make --decisions several times --batch)"
    ]


def test_numpy_training_is_the_same_whatever_the_blas_threads(tmp_path: Path) -> None:
    """The numpy backend trains on one BLAS thread (the env has the other core), so a run's weights
    are bit for bit the same on a machine whose BLAS would take one thread or two: a thread count
    sums the matrix products in its own order."""
    weights = []
    for threads in ("1", "2"):
        out = tmp_path / f"blas_{threads}.npz"
        blas = {name: threads for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        result = subprocess.run(
            [sys.executable, str(EXPERIMENTS / "train_policy.py"), "--decisions", "20000", "--envs", "256",
             "--reports", "1", "--backend", "numpy", "--out", str(out)],
            capture_output=True, text=True, timeout=900, env={**os.environ, **blas},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        weights.append(load_weights(out))
    for one, two in zip(*weights, strict=True):
        np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_policy_gradient_learns_from_the_rewards(backend: str, tmp_path: Path) -> None:
    """``--method pg`` from a fresh network against ``random``: no teacher, only the hands'
    scores, and its sampled play gets better by more than a point per hand (it starts at
    random play, about 6.5)."""
    if backend == "torch":
        pytest.importorskip("torch", reason="torch is in the learn extra, not dev")
    out = tmp_path / "pg.npz"
    result = run(
        "train_policy.py", "--method", "pg", "--opponents", "random", "--decisions", "600000",
        "--envs", "256", "--hidden", "32", "32", "--lr", "1e-3", "--reports", "6",
        "--backend", backend, "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    scores = [float(a) for a in re.findall(r"sampled-play score/hand +(\d+\.\d+)", result.stdout)]
    assert len(scores) == 6 and scores[-1] < scores[0] - 1.0, result.stdout
    with np.load(out) as data:
        meta = json.loads(str(data["meta"]))
    assert meta["method"].startswith("policy gradient") and meta["group"] == 8 and "teacher" not in meta
    assert meta["final_score_per_hand"] == pytest.approx(scores[-1], abs=0.01)


def test_ppo_weights_give_the_clipped_surrogates_gradient() -> None:
    """The weighted cross-entropy ``ppo_update`` descends has the gradient of PPO's clipped
    surrogate in every parameter (finite differences, float64), clipped rows included; with no
    weight, that of the mean cross-entropy DAgger descends."""
    train_policy = script_module("train_policy.py")
    rng = np.random.default_rng(5)
    policy = train_policy.NumpyPolicy([6, 5, 4, 52], lr=1e-3, seed=5)
    # float64, and biases away from 0 (a ReLU exactly at its kink has no derivative to compare)
    policy.params = [
        p.astype(np.float64) + (p.ndim == 1) * rng.uniform(0.1, 0.3, p.shape) for p in policy.params
    ]
    x = rng.standard_normal((40, 6))
    mask = (rng.random((40, 52)) < 0.3).astype(np.float64)
    mask[np.arange(40), rng.integers(0, 52, 40)] = 1
    cards = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    advantage = rng.standard_normal(40)

    def chosen() -> np.ndarray:  # the probability of each row's card under the policy now
        return train_policy.masked_probabilities(policy.logits(x), mask)[np.arange(40), cards]

    played = chosen() * np.exp(rng.uniform(-0.5, 0.5, 40))  # the policy moved since they were played
    clip = 0.2

    def surrogate() -> float:
        ratio = chosen() / played
        return float(-np.minimum(ratio * advantage, np.clip(ratio, 1 - clip, 1 + clip) * advantage).mean())

    def cross_entropy() -> float:
        return float(policy.gradients(x, mask, cards)[1])

    weight, clipped = train_policy.ppo_weights(chosen() / played, advantage, clip)
    assert 0 < clipped.sum() < 40  # both kinds of rows are checked
    for objective, weights in ((surrogate, weight.astype(np.float64)), (cross_entropy, None)):
        gradients = policy.gradients(x, mask, cards, weights)[2]
        for parameter, gradient in zip(policy.params, gradients, strict=True):
            for index in [(0,) * parameter.ndim, tuple(s - 1 for s in parameter.shape)]:
                kept = parameter[index]
                parameter[index] = kept + 1e-6
                above = objective()
                parameter[index] = kept - 1e-6
                below = objective()
                parameter[index] = kept
                assert gradient[index] == pytest.approx((above - below) / 2e-6, rel=1e-4, abs=1e-8)


def test_group_advantages_and_sampled_cards() -> None:
    train_policy = script_module("train_policy.py")
    # each hand against the mean of its group's other hands; one alone against the baseline
    groups, scores = np.array([0, 0, 0, 3, 3, 5]), np.array([2.0, 8.0, 26.0, 0.0, 4.0, 7.0])
    advantages = train_policy.group_advantages(groups, scores, baseline=6.5)
    np.testing.assert_allclose(advantages, [17 - 2, 14 - 8, 5 - 26, 4 - 0, 0 - 4, 6.5 - 7])
    # cards are drawn by their probabilities, never one the mask leaves out
    rng = np.random.default_rng(1)
    mask = np.zeros((200_000, 52), dtype=np.int8)
    mask[:, [3, 17, 40]] = 1
    logits = np.zeros((200_000, 52))
    logits[:, 17], logits[:, 40] = np.log(2.0), np.log(5.0)  # probabilities 1/8, 2/8, 5/8
    cards = train_policy.sample_cards(train_policy.masked_probabilities(logits, mask), rng)
    counts = np.bincount(cards, minlength=52)
    assert counts.sum() == counts[[3, 17, 40]].sum()
    np.testing.assert_allclose(counts[[3, 17, 40]] / 200_000, [1 / 8, 2 / 8, 5 / 8], atol=0.005)


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
        (["--seed", "-1", "--out", str(tmp_path / "p.npz")], "--seed -1 is not valid"),  # the CLI's words
        (["--envs", "2000000", "--out", str(tmp_path / "p.npz")], "--envs 2,000,000 is too many"),
        (["--opponents", "py:x.py:X", "--out", str(tmp_path / "p.npz")], "an external agent"),
        (["--teacher", "exec:./engine", "--out", str(tmp_path / "p.npz")], "an external agent"),
        (
            ["--out", str(EXPERIMENTS / "train_policy.py" / "p.npz")],
            "train_policy.py is a file, not a folder",
        ),
        (
            ["--method", "pg", "--decisions", "3000", "--out", str(tmp_path / "p.npz")],
            "--decisions 3,000 is fewer than --batch 16,384: no update would be made",
        ),
        (["--opponents", "easy", "rule", "--out", str(tmp_path / "p.npz")], "2 specs for the 3 other seats"),
        (
            ["--opponents", "easy", "hardest", "rule", "--out", str(tmp_path / "p.npz")],
            "unknown agent 'hardest'",
        ),
        (["--method", "pg", "--teacher", "rule", "--out", str(tmp_path / "p.npz")], "--teacher is an option"),
        (["--guided", "0", "--group", "4", "--out", str(tmp_path / "p.npz")], "--group is an option"),
        (["--method", "pg", "--group", "3", "--out", str(tmp_path / "p.npz")], "not a multiple of --group 3"),
        (["--method", "pg", "--epochs", "0", "--out", str(tmp_path / "p.npz")], "--epochs must be positive"),
        (["--method", "pg", "--clip", "nan", "--out", str(tmp_path / "p.npz")], "--clip nan is not valid"),
        (["--guided", "nan", "--out", str(tmp_path / "p.npz")], "--guided nan is not valid"),
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
        assert result.stderr.startswith("train_policy.py: error: ") and result.stderr.count("\n") == 1


def test_env_bench_refuses_more_tables_than_the_env_takes_in_one_line() -> None:
    result = run("env_bench.py", "--envs", "2000000")  # a ValueError traceback from VectorEnv
    assert (
        result.returncode == 2
        and "--envs 2000000 is not valid: choose a whole number in 1 .. 1048576" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_env_bench_prints_every_figure() -> None:
    result = run("env_bench.py", "--seconds", "0.05", "--repeats", "1", "--envs", "8", "--json")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    for key in ("vector_env_random", "vector_env_normal", "aec_env", "seat_env"):
        wall, cpu = figures[key]  # per wall-clock second, per CPU second
        assert wall > 0 and cpu > 0, key
    assert figures["openspiel"] is None or min(figures["openspiel"]) > 0
    assert not result.stderr  # --json: the figures alone
    shown = run("env_bench.py", "--seconds", "0.05", "--repeats", "1", "--envs", "8")
    assert shown.returncode == 0, shown.stderr
    # what it measures, as each phase starts: a first run compiled for a minute in silence
    phases = [line.split(": ", 1)[1].split(" (")[0] for line in shown.stderr.splitlines()]
    assert phases[:2] == ["VectorEnv, 8 tables against random", "VectorEnv, 8 tables against normal"]
    assert phases[2:] == ["the PettingZoo environment", "SeatEnv", "OpenSpiel's hearts, the peer"]


def test_training_writes_to_the_home_folder_a_leading_tilde_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--out=~/nets/x.npz`` (which the shell leaves as it is): the folder was made under home,
    and every checkpoint and the weights written to ``./~/nets``, which was not (a review)."""
    train_policy = script_module("train_policy.py")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    arguments = ["--decisions", "640", "--envs", "64", "--hidden", "8", "8", "--reports", "1"]
    train_policy.main([*arguments, "--backend", "numpy", "--out=~/nets/x.npz"])
    assert train_policy.load_weights(home / "nets" / "x.npz") and not (work / "~").exists()
