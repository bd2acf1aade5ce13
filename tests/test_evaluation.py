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
from train_evaluation import _samples  # noqa: E402


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
    r2, alone = map(
        float, re.search(r"R\^2 ([\d.-]+) \(points taken alone: ([\d.-]+)\)", run.stdout).groups()
    )
    assert r2 > alone
    assert all(name in run.stdout for name in FEATURES)
