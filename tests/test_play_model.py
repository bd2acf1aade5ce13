"""The learned play model (agents/play_model.py): public features, a replay that follows the
real hand at every table, a likelihood that reads the plays, and a fit that recovers a policy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from agent_checks import CHECK_RULES, real_positions

from agents.belief import IGNORE_PLAYS, belief_pool
from agents.play_model import (
    MAX_LEGAL,
    MOVE_FEATURES,
    N_MOVE_FEATURES,
    PLAY_WEIGHTS,
    move_features,
    new_play_scratch,
    new_plays_replay,
    plays_log_likelihood,
    replay_plays,
)
from hearts_sim.core.cards import SUIT_MASKS, card_counts
from hearts_sim.core.rules import Rules
from hearts_sim.engine.hand import decision_seed
from hearts_sim.engine.inference import new_pool
from hearts_sim.engine.sampler import sample_world
from hearts_sim.engine.state import new_states
from hearts_sim.game.hand_state import HandState

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(EXPERIMENTS))
from train_play_model import fit, log_likelihood  # noqa: E402


def _rows(record: np.void, rules: Rules, legal: int) -> np.ndarray:
    rows = np.zeros((MAX_LEGAL, N_MOVE_FEATURES))
    count = move_features(record, rules.to_tuple(), np.uint64(legal), rows)
    assert count == legal.bit_count()
    return rows[:count]


@pytest.mark.parametrize("label", ["standard", "omnibus", "qdan3", "kitty5"])
def test_features_are_public(label: str) -> None:
    """The seat to play computes the same features in every world it cannot tell from the truth."""
    rules = CHECK_RULES[label]
    world = new_states(1)
    for i, (state, seat) in enumerate(real_positions(rules, 10, seed=41, spec="rule", pass_probability=0)):
        legal = int(state.legal_moves())
        truth = _rows(state.record, rules, legal)
        for draw in range(3):
            sample_world(state.record, rules.to_tuple(), seat, np.uint64(10 * i + draw), world[0])
            assert np.array_equal(_rows(world[0], rules, legal), truth)


def _independent_log_likelihood(state: HandState, seat: int, world: np.void) -> float:
    """The sum over the other seats' plays with a choice of log softmax(features . weights) at
    the card played, replaying the hand in ``world`` through the public ``HandState`` API."""
    rules = state.rules
    start = [int(world["hands"][s]) for s in range(rules.n_players)]
    for player, card in state.plays:
        start[player] |= 1 << card
    replay = HandState.from_deal(
        rules, start, kitty=int(world["kitty"]), dealer=int(world["dealer"]), seed=int(world["hand_seed"])
    )
    total = 0.0
    for player, card in state.plays:
        legal = int(replay.legal_moves())
        if player != seat and legal.bit_count() > 1:
            logits = _rows(replay.record, rules, legal) @ PLAY_WEIGHTS
            options = [c for c in range(64) if legal >> c & 1]
            total += float(logits[options.index(card)] - np.logaddexp.reduce(logits))
        replay.play(card)
    return total


@pytest.mark.parametrize("label", list(CHECK_RULES))
def test_likelihood_of_each_world_equals_its_own_replay(label: str) -> None:
    """The kernel replays the hand once, in one world, and puts every other world's hands into
    its records: in the true world and in sampled ones alike (kitty, three and five players, any
    first lead) its sum equals an independent replay of the hand in that world."""
    rules = CHECK_RULES[label]
    array = rules.to_tuple()
    rows, logits = new_play_scratch()
    worlds = new_states(4)
    checked = 0
    positions = real_positions(rules, 8, seed=42, spec="rule", pass_probability=0, stage=(0.3, 1.0))
    for i, (state, seat) in enumerate(positions):
        for w in range(1, len(worlds)):
            sample_world(state.record, array, seat, np.uint64(100 * i + w), worlds[w])
        worlds[0] = state.record
        before, cards, rest = new_plays_replay(state.record)
        kept = replay_plays(state.record, worlds[1], array, seat, before, cards, rest)
        for world in worlds:
            value = plays_log_likelihood(world, array, before, cards, rest, kept, rows, logits)
            expected = _independent_log_likelihood(state, seat, world)
            assert value == pytest.approx(expected, abs=1e-9)
            checked += expected < 0.0
    assert checked >= 24


def test_the_play_model_predicts_where_the_hidden_cards_are() -> None:
    """Against rule players (a model it was not fitted to), weighting by the play model alone puts
    more probability on the other seats' true suit lengths than the uniform sampler (the same pool,
    paired over positions)."""
    rules = CHECK_RULES["standard"]
    array = rules.to_tuple()
    pool, cumulative = new_pool(300)
    gains = []
    for state, seat in real_positions(rules, 40, seed=43, spec="rule", pass_probability=0, stage=(0.3, 0.8)):
        seed = np.uint64(decision_seed(state.record, seat))
        truth = [[int(card_counts(state.record["hands"][o] & m)) for m in SUIT_MASKS] for o in range(4)]
        scores = []
        for plays in (0.0, 1.0):
            belief_pool(state.record, array, seat, seed, pool, cumulative, IGNORE_PLAYS, 0.0, plays)
            weights = np.diff(cumulative, prepend=0.0)
            score = 0.0
            for o in (o for o in range(4) if o != seat):
                for suit, mask in enumerate(SUIT_MASKS):
                    lengths = card_counts(pool["hands"][:, o] & mask)
                    score += float(np.log(weights[lengths == truth[o][suit]].sum() + 1e-3))
            scores.append(score)
        gains.append(scores[1] - scores[0])
    mean, half = float(np.mean(gains)), 1.96 * float(np.std(gains, ddof=1)) / np.sqrt(len(gains))
    assert mean - half > 0, (mean, half)


def test_fit_recovers_a_planted_policy() -> None:
    """Cards drawn from a softmax with known weights over random features: the fit finds the
    weights again and scores the choices better than no weights."""
    generator = np.random.default_rng(5)
    planted = generator.normal(scale=0.7, size=N_MOVE_FEATURES)
    n = 6000
    counts = generator.integers(2, MAX_LEGAL + 1, size=n)
    features = generator.normal(size=(n, MAX_LEGAL, N_MOVE_FEATURES))
    data = {"features": features, "counts": counts, "chosen": np.zeros(n, dtype=np.int64)}
    logits = np.where(np.arange(MAX_LEGAL)[None, :] < counts[:, None], features @ planted, -np.inf)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    data["chosen"] = np.array([generator.choice(MAX_LEGAL, p=row) for row in p])
    weights = fit(data, ridge=0.0)
    assert np.abs(weights - planted).max() < 0.15
    assert log_likelihood(weights, data) > log_likelihood(np.zeros(N_MOVE_FEATURES), data) + 0.5


def test_train_play_model_fits_saved_hands(tmp_path: Path) -> None:
    hands = tmp_path / "hands.npz"
    player = str(EXPERIMENTS / "train_shape.py")
    subprocess.run([sys.executable, player, "play", "--agent", "rule", "--hands", "10", "--out", str(hands)],
                   check=True, capture_output=True)  # fmt: skip
    script = str(EXPERIMENTS / "train_play_model.py")
    out = tmp_path / "weights.py"
    run = subprocess.run([sys.executable, script, str(hands), "--out", str(out)],
                         check=True, capture_output=True, text=True)  # fmt: skip
    assert "held out): log-likelihood of the chosen card -" in run.stdout
    written: dict[str, object] = {}
    exec(out.read_text(), written)
    weights = written["WEIGHTS"]
    assert isinstance(weights, tuple) and len(weights) == len(MOVE_FEATURES)
    written_text = out.read_text()
    assert "--ridge 0.001``" in written_text and str(hands) in written_text
    bad_inputs = (
        [script],  # not a file of train_shape.py play's
        [str(hands), "--ridge", "-1"],
        [str(hands), "--out", str(tmp_path / "missing" / "weights.py")],
    )
    for bad_input in bad_inputs:
        bad = subprocess.run([sys.executable, script, *bad_input], capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stderr.startswith("train_play_model.py: error: "), bad.stderr
        assert bad.stderr.count("\n") == 1
    assert out.read_text() == written_text  # the refused runs wrote nothing
