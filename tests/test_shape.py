"""The learned shape model (agents/shape.py): public features only, one tilt, a fit that recovers it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from agent_checks import CHECK_RULES, real_positions

from agents.shape import (
    FEATURES,
    N_FEATURES,
    SHAPE_WEIGHTS,
    TERMS,
    new_shape_features,
    shape_features,
    shape_log_weight,
    shape_terms,
)
from hearts_sim.core.cards import SUIT_MASKS, card_counts
from hearts_sim.core.rules import Rules
from hearts_sim.engine.sampler import sample_world
from hearts_sim.engine.state import new_states

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))
from train_shape import fit_weights, truth_log_likelihood  # noqa: E402


def _features(record: np.void, rules: Rules, seat: int) -> np.ndarray:
    out = new_shape_features()
    shape_features(record, rules.to_tuple(), seat, out)
    return out


@pytest.mark.parametrize("label", ["standard", "omnibus", "qdan3", "kitty5"])
def test_features_are_public(label: str) -> None:
    """The features a seat computes are the same in every world it cannot tell from the truth."""
    rules = CHECK_RULES[label]
    positions = real_positions(rules, 10, seed=31, spec="rule", pass_probability=0, stage=(0.1, 0.9))
    world = new_states(1)
    for i, (state, seat) in enumerate(positions):
        truth = _features(state.record, rules, seat)
        assert truth[seat].sum() == 0 and truth[[o for o in range(rules.n_players) if o != seat], :, 0].all()
        for draw in range(3):
            sample_world(state.record, rules.to_tuple(), seat, np.uint64(100 * i + draw), world[0])
            assert np.array_equal(_features(world[0], rules, seat), truth)


def test_features_count_what_was_played() -> None:
    """Every card another seat played is counted once: led, discarded, or followed over or under."""
    rules = CHECK_RULES["standard"]
    for state, seat in real_positions(rules, 10, seed=32, spec="rule", pass_probability=0, stage=(0.3, 0.9)):
        features = _features(state.record, rules, seat)
        played = [(p, c) for p, c in state.plays if p != seat]
        per_suit = np.zeros((4, 4))
        for player, card in played:
            per_suit[player, card // 13] += 1
        counted = features[
            :4, :, [FEATURES.index(f) for f in ("led", "discarded", "followed_over", "followed_under")]
        ]
        assert np.array_equal(counted.sum(axis=2)[[o for o in range(4) if o != seat]],
                              per_suit[[o for o in range(4) if o != seat]])  # fmt: skip


def test_log_weight_is_the_weights_times_the_terms() -> None:
    rules = CHECK_RULES["standard"]
    generator = np.random.default_rng(3)
    weights = generator.normal(size=TERMS)
    world = new_states(1)
    terms = np.zeros(TERMS)
    scratch = np.zeros(TERMS)
    for i, (state, seat) in enumerate(real_positions(rules, 6, seed=33, spec="rule", pass_probability=0)):
        features = _features(state.record, rules, seat)
        sample_world(state.record, rules.to_tuple(), seat, np.uint64(i), world[0])
        shape_terms(world[0], features, seat, terms)
        assert shape_log_weight(world[0], features, seat, weights, scratch) == pytest.approx(weights @ terms)
        assert np.array_equal(scratch, terms)
        lengths = [
            int(card_counts(world[0]["hands"][o] & m)) for o in range(4) if o != seat for m in SUIT_MASKS
        ]
        assert terms[0] == sum(lengths)  # the bias times every other seat's length: its hand sizes
    assert SHAPE_WEIGHTS.shape == (2 * N_FEATURES,)


def test_fit_recovers_a_planted_tilt() -> None:
    """Positions whose truth is drawn from their candidates with probability exp(w . terms): the fit
    finds w again, and scores the truth better than the weights it started from."""
    generator = np.random.default_rng(4)
    planted = generator.normal(scale=0.5, size=TERMS)
    terms = generator.normal(size=(4000, 30, TERMS))
    counts = generator.integers(0, 3, size=(4000, 30)).astype(np.float64)
    logits = terms @ planted - 0.5 * counts
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    for p in range(len(terms)):  # the truth goes to row 0
        truth = generator.choice(30, p=probabilities[p])
        terms[p, [0, truth]] = terms[p, [truth, 0]]
        counts[p, [0, truth]] = counts[p, [truth, 0]]
    weights, _ = fit_weights(terms, counts, -0.5, l2=1e-6)
    assert np.abs(weights - planted).max() < 0.15
    assert (
        truth_log_likelihood(weights, terms, counts, -0.5)
        > truth_log_likelihood(np.zeros(TERMS), terms, counts, -0.5) + 0.5
    )


def test_train_shape_plays_and_fits(tmp_path: Path) -> None:
    hands = tmp_path / "hands.npz"
    script = str(EXPERIMENTS / "train_shape.py")
    out = str(tmp_path / "hands")  # np.savez's way, kept: NAME.npz
    subprocess.run([sys.executable, script, "play", "--agent", "rule", "--hands", "10", "--out", out],
                   check=True, capture_output=True)  # fmt: skip
    saved = np.load(hands)
    assert saved["history"].shape == (10, 52) and saved["passes"].shape == (10, 4)
    run = subprocess.run([sys.executable, script, "fit", str(hands), "--pool", "20", "--dry-run"],
                         check=True, capture_output=True, text=True)  # fmt: skip
    assert "120 positions (24 held out), 20 uniform worlds each" in run.stdout
    assert "held out: log P(true world) uniform -3.0445, surprises (trust 0.449) -" in run.stdout
    assert sum(line.startswith("  ") for line in run.stdout.splitlines()) == N_FEATURES
    scored = subprocess.run([sys.executable, str(EXPERIMENTS / "belief_likelihood.py"), "--hands", str(hands),
                             "--pool", "50", "--trust", "0.5", "--shape", "0.5"],
                            check=True, capture_output=True, text=True)  # fmt: skip
    assert f"2 positions of the held-out hands of {hands}" in scored.stdout  # hands 0 and 5 of 10
    assert "suit lengths, trust 0.50 + shape 0.5: -" in scored.stdout
    bad_inputs = (
        ["play", "--agent", "nobody", "--out", str(hands)],
        ["play", "--hands", "-3", "--out", str(hands)],
        ["play", "--out", str(tmp_path / "missing" / "hands.npz")],
        ["fit", script],  # not a file of play's
        ["fit", str(hands), "--per-hand", "48"],
    )
    for bad_input in bad_inputs:
        bad = subprocess.run([sys.executable, script, *bad_input], capture_output=True, text=True)
        assert (
            bad.returncode == 2
            and bad.stderr.startswith("train_shape.py: error:")
            and bad.stderr.count("\n") == 1
        )
    scorer = str(EXPERIMENTS / "belief_likelihood.py")
    unscored = subprocess.run([sys.executable, scorer, "--hands", script], capture_output=True, text=True)
    assert unscored.returncode != 0 and unscored.stderr.count("\n") == 1
    refusal = f"{script}: not a file of train_shape.py play (not an .npz of arrays)"
    assert unscored.stderr == f"belief_likelihood.py: error: {refusal}\n"
    assert np.array_equal(np.load(hands)["history"], saved["history"])  # nothing lost
