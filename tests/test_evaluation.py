"""The learned evaluation (agents/evaluation.py): its shipped weights carry information, and the
training script fits and reports.

The evaluation is judged as a predictor here (the search's use of it is measured in the README's
figures, not by a test): on fresh self-play positions of the playout policy it predicts each
seat's final score better than the best linear guess from the points already taken.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.evaluation import FEATURES, N_FEATURES, F, evaluate, seat_features
from agents.evaluation_weights import WEIGHTS
from agents.search import ROLLOUT_GREEDY
from hearts_sim.core.rules import Rules
from hearts_sim.engine.state import new_states

try:
    from tests.agent_checks import qs_dump_position
except ImportError:  # tests/ itself on sys.path
    from agent_checks import qs_dump_position  # type: ignore[no-redef]

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))
from train_evaluation import _samples, saved_samples  # noqa: E402


def test_weights_match_the_features() -> None:
    assert len(WEIGHTS) == N_FEATURES == len(FEATURES) and len(set(FEATURES)) == N_FEATURES
    assert F.bias == 0 and F.tricks_left == N_FEATURES - 1


def test_shipped_weights_predict_better_than_the_points_taken() -> None:
    rules = Rules()
    hands = 20_000
    features = np.zeros((hands * 4, N_FEATURES))
    targets = np.zeros(hands * 4)
    rows = _samples(rules.to_tuple(), ROLLOUT_GREEDY, 0.086, 12345, hands, new_states(1), features, targets)
    features, targets = features[:rows], targets[:rows]
    learned = np.mean((features @ np.array(WEIGHTS) - targets) ** 2)
    baseline_x = features[:, [F.bias, F.own_points]]
    coefficients, *_ = np.linalg.lstsq(baseline_x, targets, rcond=None)  # fitted on the test data itself
    baseline = np.mean((baseline_x @ coefficients - targets) ** 2)
    assert learned < 0.9 * baseline, (learned, baseline)


def test_evaluate_scores_every_seat_in_points() -> None:
    """A seat that has taken the queen and holds nothing dangerous is worse off than the others."""
    state, _ = qs_dump_position()
    for card in ("QS", "9C"):  # seat 1 dumps the queen on seat 3's KC
        state.play(card)
    values = np.zeros(5)
    evaluate(state.record, state._rules_array, np.zeros(N_FEATURES), values)
    assert values[3] == max(values[:4]) and values[3] > 10
    row = np.zeros(N_FEATURES)
    seat_features(state.record, state._rules_array, 3, row)
    assert row[F.own_points] == pytest.approx(13 / 26) and row[F.moon_open] == 1.0


def test_training_script_fits_and_reports() -> None:
    pytest.importorskip("sklearn")
    run = subprocess.run(
        [sys.executable, str(EXPERIMENTS / "train_evaluation.py"), "--hands", "5000", "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    )
    r2, alone = map(float, re.search(r"R\^2 ([\d.-]+) \(points taken alone: ([\d.-]+);", run.stdout).groups())
    assert r2 > alone
    assert all(name in run.stdout for name in FEATURES)


def test_saved_hands_give_every_trick_start_with_the_final_scores(tmp_path: Path) -> None:
    """``--saved``: the rows of a search agent's saved self-play (here the rule agent's, which is
    quick), one per seat at the start of tricks 2 to 13, each with that hand's final score."""
    saved = tmp_path / "rule.npz"
    play = [sys.executable, str(EXPERIMENTS / "train_shape.py"), "play", "--agent", "rule"]
    subprocess.run([*play, "--hands", "10", "--out", str(saved)], check=True, capture_output=True)
    features, targets, held = saved_samples([str(saved)])
    assert features.shape == (10 * 12 * 4, N_FEATURES)
    by_hand = targets.reshape(10, 12, 4)
    assert (by_hand == by_hand[:, :1]).all()  # the same final score at every trick start
    assert set(np.round(by_hand[:, 0].sum(axis=1) * 26).astype(int)) <= {26, 78}  # points, or a moon
    rows = features.reshape(10, 12, 4, N_FEATURES)
    assert np.allclose(rows[:, :, :, F.tricks_left], (12 - np.arange(12))[None, :, None] / 13)
    assert (rows[:, 0, :, F.own_points] <= rows[:, -1, :, F.own_points]).all()  # points only grow
    assert held.tolist() == [hand % 5 == 0 for hand in range(10) for _ in range(48)]


def test_saved_rejects_a_file_that_play_did_not_write(tmp_path: Path) -> None:
    stray = tmp_path / "stray.npz"
    np.savez(stray, x=np.zeros(3))
    run = subprocess.run(
        [sys.executable, str(EXPERIMENTS / "train_evaluation.py"), "--saved", str(stray), "--dry-run"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr  # bad input, as in every script
    assert run.stderr.strip() == (
        f"train_evaluation.py: error: {stray}: not a file of train_shape.py play "
        "(no hands, history, passes, seed)"
    )
