"""``net``: a small neural policy trained in ``hearts_sim.env``; its inference runs in numba.

Design note. The network reads the observation every learning environment produces
(``hearts_sim.engine.encoding``), so a policy trained there plays the same inputs in the arena:
two ReLU layers and 52 logits, the most likely legal card played (or one sampled with
``temperature`` > 0); a pass is ``pass_count`` picks, each observed with the cards picked so far,
as the environments pass. ``experiments/train_policy.py`` trains it and writes its weights.

Weights are the ``.npz`` files of ``agents/weights/`` (arrays ``w1, b1, w2, b2, w3, b3``, each
``w`` shaped (inputs, outputs)), chosen by name: ``net(weights=dagger_normal)``. They are loaded
once at import, zero-padded to the widest file and stacked, so one kernel serves every file
(padded units stay at zero through the ReLUs: the padding changes no output). numba freezes
the stacked arrays into the code that plays ``net`` and its cache never looks at them again,
so the kind declares their digest (``PolicyKind.data``), which keys every compiled loop that
seats it; the two kernels that read the arrays are compiled inside those loops
(``njit_generated``: no cache of their own). A new or retrained file is picked up by the next
process.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from agents.kinds import Parameter, PolicyKind, param_indices
from hearts_sim._numba import njit, njit_generated, njit_inline
from hearts_sim.core.cards import N_CARDS, card_bit
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.encoding import OBS_SIZE, action_cards, encode_observation
from hearts_sim.engine.rng import random_unit

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
LAYERS = ("w1", "b1", "w2", "b2", "w3", "b3")


class WeightsError(ValueError):
    """A weights file that is not a network over this toolkit's observation."""


def load_weights(path: Path | str) -> tuple[np.ndarray, ...]:
    """The six float32 arrays of a weights file, checked against the observation and the 52 cards."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = tuple(np.asarray(data[name], dtype=np.float32) for name in LAYERS)
    except (OSError, KeyError, ValueError) as error:
        raise WeightsError(f"{path}: not a net weights file ({error})") from None
    w1, b1, w2, b2, w3, b3 = arrays
    shapes_fit = (
        w1.ndim == w2.ndim == w3.ndim == 2
        and w1.shape[0] == OBS_SIZE
        and w3.shape[1] == N_CARDS
        and w2.shape[0] == w1.shape[1] == b1.shape[0]
        and w3.shape[0] == w2.shape[1] == b2.shape[0]
        and b3.shape == (N_CARDS,)
    )
    if not shapes_fit:
        shapes = ", ".join(f"{name} {a.shape}" for name, a in zip(LAYERS, arrays, strict=True))
        raise WeightsError(f"{path}: layers {shapes} do not map {OBS_SIZE} inputs to {N_CARDS} logits")
    return arrays


def _stack(networks: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """The networks zero-padded to the widest hidden layers and stacked (network index first)."""
    h1 = max(w1.shape[1] for w1, *_ in networks)
    h2 = max(w2.shape[1] for _, _, w2, *_ in networks)
    k = len(networks)
    stacked = (
        np.zeros((k, OBS_SIZE, h1), np.float32),
        np.zeros((k, h1), np.float32),
        np.zeros((k, h1, h2), np.float32),
        np.zeros((k, h2), np.float32),
        np.zeros((k, h2, N_CARDS), np.float32),
        np.zeros((k, N_CARDS), np.float32),
    )
    for i, (w1, b1, w2, b2, w3, b3) in enumerate(networks):
        stacked[0][i, :, : w1.shape[1]] = w1
        stacked[1][i, : b1.shape[0]] = b1
        stacked[2][i, : w2.shape[0], : w2.shape[1]] = w2
        stacked[3][i, : b2.shape[0]] = b2
        stacked[4][i, : w3.shape[0]] = w3
        stacked[5][i] = b3
    return stacked


WEIGHT_FILES = sorted(WEIGHTS_DIR.glob("*.npz"))
assert WEIGHT_FILES, f"no weights in {WEIGHTS_DIR}: the net agent ships at least one file"
WEIGHT_NAMES = tuple(path.stem for path in WEIGHT_FILES)
_W1, _B1, _W2, _B2, _W3, _B3 = _stack([load_weights(path) for path in WEIGHT_FILES])
WEIGHTS_DIGEST = hashlib.sha256(b"".join(path.read_bytes() for path in WEIGHT_FILES)).hexdigest()[:16]


def network(index: int) -> tuple[np.ndarray, ...]:
    """The arrays the kernels play for weights file ``WEIGHT_FILES[index]``, as loaded at import
    (zero-padded to the widest file)."""
    return tuple(array[index] for array in (_W1, _B1, _W2, _B2, _W3, _B3))


PARAMETERS = (
    Parameter("weights", 0, "the weights file of agents/weights/ to play", choices=WEIGHT_NAMES),
    Parameter(
        "temperature",
        0.0,
        "0: the most likely legal card; above 0: sample softmax(logits / t)",
        low=0.0,
        high=1e6,
    ),
)
P = param_indices(PARAMETERS)


@njit
def policy_logits(x, w1, b1, w2, b2, w3, b3, logits) -> None:
    """The network's 52 logits for observation ``x`` into ``logits``.

    Each layer adds the weight rows of its nonzero inputs (an observation has a few dozen of its
    783 values set; a ReLU zeroes about half its units), element by element: an array
    expression here would allocate a temporary per row."""
    h1 = b1.copy()
    _add_rows(x, w1, h1)
    _relu(h1)
    h2 = b2.copy()
    _add_rows(h1, w2, h2)
    _relu(h2)
    logits[:] = b3
    _add_rows(h2, w3, logits)


@njit_inline
def _add_rows(inputs, weights, out) -> None:
    """out += inputs @ weights, skipping the rows of zero inputs."""
    for i in range(inputs.shape[0]):
        value = inputs[i]
        if value != 0.0:
            for j in range(out.shape[0]):
                out[j] += value * weights[i, j]


@njit_inline
def _relu(values) -> None:
    for j in range(values.shape[0]):
        values[j] = max(values[j], np.float32(0.0))


@njit
def choose_card(logits, cards: np.uint64, temperature: float, seed: np.uint64) -> int:
    """The legal card (of ``cards``) with the highest logit, or with ``temperature`` > 0 one drawn
    with probability proportional to exp(logit / temperature)."""
    best, best_logit = -1, -np.inf
    for card in range(N_CARDS):
        if cards & card_bit(card) and logits[card] > best_logit:
            best, best_logit = card, logits[card]
    if temperature <= 0.0:
        return best
    total = 0.0
    for card in range(N_CARDS):
        if cards & card_bit(card):
            total += np.exp((logits[card] - best_logit) / temperature)
    _, u = random_unit(seed)
    u *= total
    for card in range(N_CARDS):
        if cards & card_bit(card):
            u -= np.exp((logits[card] - best_logit) / temperature)
            if u <= 0.0:
                return card
    return best


@njit_generated
def _pick(
    params, state, rules: RulesTuple, seat: np.int64, pending: np.uint64, cards: np.uint64, seed: np.uint64
):
    """One of ``cards`` for ``seat``: a play, or a pick toward its pass (``pending`` picked so far)."""
    k = np.int64(params[P.weights])
    x = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(state, rules, seat, pending, x)
    logits = np.empty(N_CARDS, dtype=np.float32)
    policy_logits(x, _W1[k], _B1[k], _W2[k], _B2[k], _W3[k], _B3[k], logits)
    return choose_card(logits, cards, params[P.temperature], seed)


@njit_generated
def net_play(params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64) -> np.int64:
    return _pick(params, state, rules, seat, np.uint64(0), legal, seed)


@njit_generated
def net_pass(params, state, rules: RulesTuple, seat: np.int64, seed: np.uint64) -> np.uint64:
    """``pass_count`` picks, each seeing the cards picked before it (as the environments pass)."""
    pending = np.uint64(0)
    for i in range(rules.pass_count):
        cards = action_cards(state, rules, seat, pending)
        pending |= card_bit(_pick(params, state, rules, seat, pending, cards, seed + np.uint64(i)))
    return pending


KIND = PolicyKind(
    "net",
    "a neural policy trained in hearts_sim.env (experiments/train_policy.py), played in numba",
    PARAMETERS,
    play=net_play,
    pass_cards=net_pass,
    data=WEIGHTS_DIGEST,
)
