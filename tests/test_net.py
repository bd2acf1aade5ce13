"""The ``net`` agent: legal play and no peeking under every preset, numba inference equal to the
network's plain numpy forward pass, the weights' digest in the compiled loops' key, malformed
weights refused, weights from the folders of ``$HEARTS_SIM_WEIGHTS`` (each name its own network,
a bad file left out with why), and the shipped policies' strength (the default beats ``normal``)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents import net
from agents.dispatch import KindSet, loop_play, source_modules
from agents.kinds import AgentError
from agents.registry import KIND_BY_NAME, parse_agent
from hearts_sim.engine.encoding import OBS_SIZE, encode_observation
from hearts_sim.engine.hand import legal_moves

ROOT = Path(__file__).resolve().parents[1]

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
    not_finite = tmp_path / "nan.npz"
    np.savez(not_finite, **dict(zip(net.LAYERS, (*good[:3], good[3] * np.nan, *good[4:]), strict=True)))
    with pytest.raises(net.WeightsError, match="nan.npz: b2 holds values that are not finite"):
        net.load_weights(not_finite)


def test_logits_that_do_not_compare_play_the_lowest_legal_card() -> None:
    """Finite weights can still overflow float32 into NaN logits: the lowest legal card is played,
    never no card."""
    cards = np.uint64((1 << 7) | (1 << 20) | (1 << 40))
    for temperature in (0.0, 1.0):
        assert net.choose_card(np.full(52, np.nan, np.float32), cards, temperature, np.uint64(5)) == 7


def test_the_shipped_policies_beat_random_in_duplicate() -> None:
    for name in [path.stem for path in net.WEIGHT_FILES if path.parent == net.WEIGHTS_DIR]:
        mean, half_width = duplicate_difference(f"net(weights={name})", "random", deals=200, seed=3)
        assert mean + half_width < -3.0, (name, mean, half_width)  # A minus B: fewer points is better


def test_the_default_policy_beats_normal_in_duplicate() -> None:
    """Plain ``net`` (``DEFAULT_WEIGHTS``: distilled from ``mc``, then policy gradient) plays
    stronger than the rule level it is measured against, on deals it was never tuned on."""
    assert net.DEFAULT_WEIGHTS == "pg_selfplay"
    mean, half_width = duplicate_difference("net", "normal", deals=300, seed=4)
    assert mean + half_width < 0.0, (mean, half_width)


def test_policy_gradient_improved_on_the_imitation_it_started_from() -> None:
    """``pg_selfplay`` is ``dagger_mc`` taken on by ``train_policy.py --method pg``: it beats it."""
    mean, half_width = duplicate_difference(
        "net(weights=pg_selfplay)", "net(weights=dagger_mc)", deals=300, seed=4
    )
    assert mean + half_width < 0.0, (mean, half_width)


def tiny_network(seed: int, hidden: tuple[int, int] = (16, 8)) -> dict[str, np.ndarray]:
    """A random network over the observation, small and of its own widths (seeded: the same
    file, so the same digest and cached loops, every run)."""
    rng = np.random.default_rng(seed)
    widths = (OBS_SIZE, *hidden, 52)
    layers = {}
    for i, (inputs, outputs) in enumerate(itertools.pairwise(widths), start=1):
        layers[f"w{i}"] = rng.normal(0, 1, (inputs, outputs)).astype(np.float32)
        layers[f"b{i}"] = rng.normal(0, 1, outputs).astype(np.float32)
    return layers


def test_weight_folders_add_files_and_leave_out_what_cannot_be_played(tmp_path: Path) -> None:
    """``gather_weights`` takes the folders in order, each sorted by name; a broken file, a
    name already taken or a missing folder is left out with its reason, and a later good file
    of a left-out name takes the name."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    np.savez(first / "tiny.npz", **tiny_network(1))
    (first / "broken.npz").write_text("not an archive")
    np.savez(second / "tiny.npz", **tiny_network(2))  # the name is taken by first/tiny.npz
    np.savez(second / "broken.npz", **tiny_network(3))  # a good file of a left-out name
    missing = tmp_path / "missing"
    files, networks, left_out = net.gather_weights([first, second, missing])
    assert files == [first / "tiny.npz", second / "broken.npz"]
    assert [w1.shape for w1, *_ in networks] == [(OBS_SIZE, 16), (OBS_SIZE, 16)]
    np.testing.assert_array_equal(networks[0][0], tiny_network(1)["w1"])
    assert left_out == {
        "tiny": f"{second / 'tiny.npz'}: the name tiny is taken by {first / 'tiny.npz'}",
        str(missing): f"HEARTS_SIM_WEIGHTS names {missing}, which is not a folder",
    }
    assert net.weight_folders(os.pathsep.join([str(first), "", str(second)])) == [
        net.WEIGHTS_DIR,
        first,
        second,
    ]


_USER_WEIGHTS = """
import numpy as np
from agents import net
from agents.dispatch import loop_play
from agents.registry import KIND_BY_NAME, parse_agent
from tests.agent_checks import real_positions
from tests.test_net import numpy_logits
from hearts_sim.engine.encoding import OBS_SIZE, encode_observation
from hearts_sim.engine.hand import legal_moves

assert net.WEIGHT_NAMES[-1] == "tiny" and net.WEIGHT_FILES[-2].parent == net.WEIGHTS_DIR, net.WEIGHT_FILES
assert set(net.WEIGHTS_LEFT_OUT) == {"broken"}, net.WEIGHTS_LEFT_OUT
for name in range(len(net.WEIGHT_NAMES)):
    policy = parse_agent(f"net(weights={net.WEIGHT_NAMES[name]})").play_policy
    for state, seat in real_positions("standard", 20, seed=4, pass_probability=0.0):
        record, rules = state.record, state._rules_array
        x = np.zeros(OBS_SIZE, dtype=np.float32)
        encode_observation(record, rules, seat, np.uint64(0), x)
        legal = int(legal_moves(record, rules))
        logits = numpy_logits(x.astype(np.float64), net.network(name))
        assert loop_play(policy, record, rules, seat) == max(
            (c for c in range(52) if legal >> c & 1), key=lambda c: logits[c]
        )
print("ok", KIND_BY_NAME["ismcts"].data, KIND_BY_NAME["net"].data)
"""


def test_user_weights_play_beside_the_shipped_ones(tmp_path: Path) -> None:
    """With ``HEARTS_SIM_WEIGHTS`` naming a folder, its files play by name beside the shipped
    ones, each network the one its name picks (other widths than the shipped one); a broken file
    there is left out, and naming it is a one-line error with the reason, while every other
    agent plays on. They key the loops that seat ``net``, never those that seat ``ismcts``, whose
    prior takes the shipped files only."""
    folder = tmp_path / "weights"
    folder.mkdir()
    np.savez(folder / "tiny.npz", **tiny_network(1))
    (folder / "broken.npz").write_text("not an archive")
    env = {**os.environ, "HEARTS_SIM_WEIGHTS": str(folder)}
    checked = subprocess.run(
        [sys.executable, "-c", _USER_WEIGHTS], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert checked.stdout.startswith("ok "), checked.stderr[-2000:]
    _, ismcts_data, net_data = checked.stdout.split()
    assert ismcts_data == net.SHIPPED_DIGEST == KIND_BY_NAME["ismcts"].data and net_data != net.SHIPPED_DIGEST
    for spec, error in [
        (
            "net(weights=broken)",
            f"net: weights=broken cannot be played: {folder / 'broken.npz'}: not a net "
            "weights file (not an .npz archive)",
        ),
        (
            "net(weights=nope)",
            "net: parameter weights='nope' is not valid: choose one of "
            f"{', '.join((*net.WEIGHT_NAMES, 'tiny'))} (left out: {folder / 'broken.npz'}: not a net weights "
            "file (not an .npz archive))",
        ),
        (
            "ismcts(prior=1,prior_weights=tiny)",
            "ismcts: parameter prior_weights='tiny' is not valid: choose one of "
            + ", ".join(net.SHIPPED_NAMES),
        ),
    ]:
        refused = subprocess.run(
            [sys.executable, "-m", "hearts_sim", "match", spec, "random", "--deals", "2"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert (refused.returncode, refused.stderr) == (2, f"hearts-sim: error: {error}\n")
    played = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "match", "lowest", "random", "--deals", "2", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert played.returncode == 0 and json.loads(played.stdout)["deals"] == 2, played.stderr[-2000:]


def test_a_weights_file_too_large_to_freeze_is_named_where_the_loops_compile(tmp_path: Path) -> None:
    """numba freezes an array of up to 1 MB into a loop it can cache; a file with a larger layer
    (a first layer of 320 units) leaves every loop that seats ``net`` to compile in each process.
    The compile line says so and names the file (it promised "one time"), in place of numba's
    warning, which came in terminal escape codes; a table without ``net`` compiles as before."""
    folder = tmp_path / "weights"
    folder.mkdir()
    np.savez(folder / "wide.npz", **tiny_network(1, hidden=(net.FREEZE_LIMIT // (4 * OBS_SIZE) + 1, 8)))
    env = {**os.environ, "HEARTS_SIM_WEIGHTS": str(folder)}
    command = [sys.executable, "-m", "hearts_sim", "match", "net(weights=wide)", "random", "--deals", "1"]
    played = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    assert played.returncode == 0, played.stderr[-2000:]
    assert played.stderr.splitlines()[0] == (
        "hearts-sim: compiling the kernels for these agents (about 20 s, in every process: "
        f"{folder / 'wide.npz'} holds a layer over the 1 MB numba can freeze into a cached loop "
        "(float32: a first layer of more than 319 units))"
    )
    assert "Cannot cache" not in played.stderr and "\x1b" not in played.stderr
    probe = "from hearts_sim.selfplay.simulate import Table\n"
    probe += "print(repr(Table.build('standard', [['rule'] * 4]).uncached()))"
    assert (
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env).stdout
        == "''\n"
    )


def test_naming_a_file_after_the_weights_variable_changed_says_it_is_read_at_import(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A notebook that sets ``HEARTS_SIM_WEIGHTS`` after importing hearts_sim gets weights read
    before it: naming a file of the new folder says why it is not there."""
    monkeypatch.setenv(net.WEIGHTS_VARIABLE, str(tmp_path))
    with pytest.raises(
        AgentError, match=r"changed after hearts_sim was imported, and the weights are read at import"
    ):
        parse_agent("net(weights=mine)")
    monkeypatch.setenv(net.WEIGHTS_VARIABLE, net._VARIABLE_READ)
    with pytest.raises(AgentError) as refused:
        parse_agent("net(weights=mine)")
    assert "changed after" not in str(refused.value)
