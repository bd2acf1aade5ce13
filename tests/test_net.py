"""The ``net`` agent: legal play and no peeking under every preset, numba inference equal to the
network's plain numpy forward pass, the weights' digest in the compiled loops' key, malformed
weights refused, and the shipped policy's strength."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents import net
from agents.dispatch import KindSet, loop_play, source_modules
from agents.registry import parse_agent
from hearts_sim.engine.encoding import OBS_SIZE, encode_observation
from hearts_sim.engine.hand import legal_moves

try:
    from tests.agent_checks import (
        assert_no_peeking,
        assert_plays_legally,
        duplicate_difference,
        real_positions,
    )
except ImportError:  # tests/ itself on sys.path
    from agent_checks import (  # type: ignore[no-redef]
        assert_no_peeking,
        assert_plays_legally,
        duplicate_difference,
        real_positions,
    )


@pytest.mark.parametrize("spec", ["net", "net(temperature=1)"])
def test_plays_legally_under_every_rules_set(spec: str) -> None:
    assert_plays_legally(spec, hands=100, stepped_hands=3)


@pytest.mark.parametrize("spec", ["net", "net(temperature=1)"])
def test_decisions_ignore_hidden_cards(spec: str) -> None:
    assert assert_no_peeking(spec, per_rules=6) > 0


def numpy_logits(x: np.ndarray, weights: tuple[np.ndarray, ...]) -> np.ndarray:
    w1, b1, w2, b2, w3, b3 = (w.astype(np.float64) for w in weights)
    h1 = np.maximum(x @ w1 + b1, 0.0)
    h2 = np.maximum(h1 @ w2 + b2, 0.0)
    return h2 @ w3 + b3


def test_numba_inference_plays_the_numpy_forward_pass() -> None:
    """The card ``net`` plays is the legal card with the highest logit of its network computed
    in plain numpy (float64) on the same observation."""
    weights = net.network(0)
    policy = parse_agent(f"net(weights={net.WEIGHT_NAMES[0]})").play_policy
    checked = 0
    for state, seat in real_positions("standard", 60, seed=8, pass_probability=0.0):
        record, rules = state.record, state._rules_array
        x = np.zeros(OBS_SIZE, dtype=np.float32)
        encode_observation(record, rules, seat, np.uint64(0), x)
        legal = int(legal_moves(record, rules))
        logits = numpy_logits(x.astype(np.float64), weights)
        ranked = sorted((c for c in range(52) if legal >> c & 1), key=lambda c: -logits[c])
        card = loop_play(policy, record, rules, seat)
        if len(ranked) > 1 and logits[ranked[0]] - logits[ranked[1]] < 1e-4:
            continue  # a near tie: float32 and float64 may order it differently
        assert card == ranked[0]
        checked += 1
    assert checked > 40


def test_the_weights_digest_keys_the_compiled_loops() -> None:
    assert source_modules(("net",))["net data"] == net.WEIGHTS_DIGEST
    assert KindSet.of(["net"]).stamp != KindSet.of(["rule"]).stamp


def test_malformed_weights_are_refused(tmp_path: Path) -> None:
    good = net.load_weights(net.WEIGHT_FILES[0])
    bad = tmp_path / "bad.npz"
    np.savez(bad, **dict(zip(net.LAYERS, (good[0][:-1], *good[1:]), strict=True)))
    with pytest.raises(net.WeightsError, match="bad.npz: layers .* do not map 783 inputs to 52 logits"):
        net.load_weights(bad)
    missing = tmp_path / "missing.npz"
    np.savez(missing, w1=good[0])
    with pytest.raises(net.WeightsError, match="missing.npz: not a net weights file"):
        net.load_weights(missing)


def test_the_shipped_policy_beats_random_in_duplicate() -> None:
    mean, half_width = duplicate_difference("net", "random", "standard", deals=200, seed=3)
    assert mean + half_width < -3.0, (mean, half_width)  # A minus B: fewer points is better
