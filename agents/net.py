"""``net``: a small neural policy trained in ``hearts_sim.env``; its inference runs in numba.

Design note. The network reads the observation every learning environment produces
(``hearts_sim.engine.encoding``), so a policy trained there plays the same inputs in the arena:
two ReLU layers and 52 logits, the most likely legal card played (or one sampled with
``temperature`` > 0); a pass is ``pass_count`` picks, each observed with the cards picked so far,
as the environments pass. ``experiments/train_policy.py`` trains it and writes its weights.

Weights are ``.npz`` files (arrays ``w1, b1, w2, b2, w3, b3``, each ``w`` shaped (inputs,
outputs)), chosen by name: ``net(weights=dagger_normal)``. The shipped ones are in
``agents/weights/``; the folders named by the environment variable ``HEARTS_SIM_WEIGHTS``
(separated like ``PATH``) add a user's own, so an installed package needs no writing into. A
file that cannot be played (unreadable, other shapes, a name already taken) is left out, and
naming it says why: one bad file never stops the toolkit from importing.

They are loaded once at import, each layer's arrays in one tuple that the kernel indexes, so
one kernel serves every file whatever its hidden widths. numba freezes each array into the code
that plays ``net`` (up to its limit of 1 MB an array, a first layer of at most 319 units: a
larger array is read through a pointer and the loop is compiled afresh in every process) and
its cache never looks at them again, so the kind declares their digest (``PolicyKind.data``),
which keys every compiled loop that seats it; the two kernels that read the arrays are compiled
inside those loops (``njit_generated``: no cache of their own). A new or retrained file is
picked up by the next process. ``play_prior`` gives a search (``ismcts(prior=...)``) a network's
policy from the shipped files only, keyed by their digest alone (``SHIPPED_DIGEST``).
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.kinds import AgentError, Parameter, PolicyKind, param_indices
from hearts_sim._numba import njit, njit_generated, njit_inline
from hearts_sim.core.cards import N_CARDS, card_bit, lowest_card
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.encoding import OBS_SIZE, action_cards, encode_observation
from hearts_sim.engine.rng import random_unit

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"  # the shipped weights
WEIGHTS_VARIABLE = "HEARTS_SIM_WEIGHTS"  # more folders of weights, separated as in PATH
LAYERS = ("w1", "b1", "w2", "b2", "w3", "b3")


class WeightsError(ValueError):
    """A weights file that is not a network over this toolkit's observation."""


def load_weights(path: Path | str) -> tuple[np.ndarray, ...]:
    """The six float32 arrays of a weights file, checked against the observation and the 52 cards."""
    path = Path(path)
    if path.is_file() and not zipfile.is_zipfile(path):  # np.load would try it as a pickle
        raise WeightsError(f"{path}: not a net weights file (not an .npz archive)")
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
    for name, array in zip(LAYERS, arrays, strict=True):
        if not np.isfinite(array).all():
            raise WeightsError(f"{path}: {name} holds values that are not finite (NaN or infinite)")
    return arrays


def weight_folders(variable: str | None = None) -> list[Path]:
    """``agents/weights/``, then the folders ``variable`` (``$HEARTS_SIM_WEIGHTS``) names."""
    extra = os.environ.get(WEIGHTS_VARIABLE, "") if variable is None else variable
    return [WEIGHTS_DIR, *(Path(folder).expanduser() for folder in extra.split(os.pathsep) if folder)]


def gather_weights(
    folders: list[Path],
) -> tuple[list[Path], list[tuple[np.ndarray, ...]], dict[str, str]]:
    """The playable weights files of ``folders`` in order (each folder's sorted by name), their
    arrays, and what was left out: a file's name (or a folder's path) with the reason."""
    files: list[Path] = []
    networks: list[tuple[np.ndarray, ...]] = []
    left_out: dict[str, str] = {}
    for folder in folders:
        if not folder.is_dir():
            left_out[str(folder)] = f"{WEIGHTS_VARIABLE} names {folder}, which is not a folder"
            continue
        for path in sorted(folder.glob("*.npz")):
            taken = next((f for f in files if f.stem == path.stem), None)
            if taken is not None:
                left_out.setdefault(path.stem, f"{path}: the name {path.stem} is taken by {taken}")
                continue
            try:
                networks.append(load_weights(path))
            except WeightsError as error:
                left_out[path.stem] = str(error)
                continue
            files.append(path)
            left_out.pop(path.stem, None)
    return files, networks, left_out


WEIGHT_FILES, _networks, WEIGHTS_LEFT_OUT = gather_weights(weight_folders())
WEIGHT_NAMES = tuple(path.stem for path in WEIGHT_FILES)
# the variable as this import read it: the files are frozen into the kernels, so a later change
# is seen by the next process only (``WeightsParameter`` says so to a notebook that set it late)
_VARIABLE_READ = os.environ.get(WEIGHTS_VARIABLE, "")
FREEZE_LIMIT = 10**6  # bytes: numba reads a larger constant array through a pointer, uncacheable
TOO_LARGE = (
    f"a layer over the 1 MB numba can freeze into a cached loop (float32: a first layer of more than "
    f"{FREEZE_LIMIT // (4 * OBS_SIZE)} units)"
)
TOO_WIDE = tuple(  # files with such an array: every loop seating ``net`` compiles in each process
    path
    for path, arrays in zip(WEIGHT_FILES, _networks, strict=True)
    if max(a.nbytes for a in arrays) > FREEZE_LIMIT
)
DEFAULT_WEIGHTS = "pg_selfplay"  # what plain ``net`` plays: the strongest shipped policy
assert WEIGHT_FILES[WEIGHT_NAMES.index(DEFAULT_WEIGHTS)].parent == WEIGHTS_DIR, "net ships its default"
# one tuple per layer, a network's array at its index: numba freezes each array into the compiled
# code apart (a stacked array over every file would pass its 1 MB limit for freezing, and a loop
# holding an unfrozen array cannot be cached) and indexes the tuple at run time
_W1, _B1, _W2, _B2, _W3, _B3 = (tuple(layer) for layer in zip(*_networks, strict=True))
del _networks


def files_digest(files: Sequence[Path]) -> str:
    """The digest of ``files``' bytes that keys the compiled loops freezing them (``PolicyKind.data``)."""
    return hashlib.sha256(b"".join(path.read_bytes() for path in files)).hexdigest()[:16]


WEIGHTS_DIGEST = files_digest(WEIGHT_FILES)
# The shipped files come first. A search's prior reads only those (``play_prior``), so a user's
# files never key the loops that seat a search (``hard``'s): nor can one too wide to freeze leave
# them uncached, compiling again in every process.
SHIPPED_NAMES = tuple(path.stem for path in WEIGHT_FILES if path.parent == WEIGHTS_DIR)
assert all(path.parent == WEIGHTS_DIR for path in WEIGHT_FILES[: len(SHIPPED_NAMES)]), "shipped first"
SHIPPED_DIGEST = files_digest(WEIGHT_FILES[: len(SHIPPED_NAMES)])
_SW1, _SB1, _SW2, _SB2, _SW3, _SB3 = (layer[: len(SHIPPED_NAMES)] for layer in (_W1, _B1, _W2, _B2, _W3, _B3))


def network(index: int) -> tuple[np.ndarray, ...]:
    """The arrays the kernels play for weights file ``WEIGHT_FILES[index]``, as loaded at import."""
    return tuple(array[index] for array in (_W1, _B1, _W2, _B2, _W3, _B3))


@dataclass(frozen=True)
class WeightsParameter(Parameter):
    """``weights``: one of the playable files by name; naming a file that was left out, or any
    name while something was, says what and why."""

    left_out: tuple[tuple[str, str], ...] = ()  # (file name or folder, reason)

    def parse(self, text: str, agent: str) -> float | int:
        if text not in self.choices:
            why = dict(self.left_out).get(text)
            if why is not None:
                raise AgentError(f"{agent}: weights={text} cannot be played: {why}")
            if os.environ.get(WEIGHTS_VARIABLE, "") != _VARIABLE_READ:
                raise AgentError(
                    f"{self._refuse(text, agent)} (${WEIGHTS_VARIABLE} changed after hearts_sim was "
                    "imported, and the weights are read at import: set it before, or restart)"
                )
            if self.left_out:
                reasons = "; ".join(reason for _, reason in self.left_out)
                raise AgentError(f"{self._refuse(text, agent)} (left out: {reasons})")
        return super().parse(text, agent)


PARAMETERS = (
    WeightsParameter(
        "weights",
        WEIGHT_NAMES.index(DEFAULT_WEIGHTS),
        f"the weights file to play, from agents/weights/ and the folders of ${WEIGHTS_VARIABLE}"
        + (f"; left out: {'; '.join(WEIGHTS_LEFT_OUT.values())}" if WEIGHTS_LEFT_OUT else ""),
        choices=WEIGHT_NAMES,
        left_out=tuple(WEIGHTS_LEFT_OUT.items()),
    ),
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


def network_policy(network: Sequence[np.ndarray]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A network (``LAYERS``' arrays) as ``net`` plays it, as a batched policy for
    ``hearts_sim.env.PolicyAgent``: each row's logits by ``policy_logits`` (the same float sums
    as the compiled agent), then the allowed card with the highest, the lower card of a tie
    (``choose_card`` at temperature 0, for finite logits)."""
    layers = [np.asarray(array, dtype=np.float32) for array in network]

    def policy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = np.empty(masks.shape, dtype=np.float32)
        for x, row in zip(observations, logits, strict=True):
            policy_logits(x, *layers, row)
        return np.where(masks == 1, logits, -np.inf).argmax(axis=1)

    return policy


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


@njit_inline
def _best_legal(logits, cards: np.uint64) -> tuple[int, float]:
    """The card of ``cards`` with the highest logit (the lower card of a tie) and that logit;
    (-1, -inf) if no logit compares (NaN)."""
    best, best_logit = -1, -np.inf
    for card in range(N_CARDS):
        if cards & card_bit(card) and logits[card] > best_logit:
            best, best_logit = card, logits[card]
    return best, best_logit


@njit
def choose_card(logits, cards: np.uint64, temperature: float, seed: np.uint64) -> int:
    """The legal card (of ``cards``) with the highest logit, or with ``temperature`` > 0 one drawn
    with probability proportional to exp(logit / temperature)."""
    best, best_logit = _best_legal(logits, cards)
    if best < 0:  # no logit compares (NaN: finite weights can still overflow float32)
        return lowest_card(cards)
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
def play_prior(k: np.int64, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, out) -> None:
    """Shipped network ``SHIPPED_NAMES[k]``'s probabilities of ``seat``'s ``legal`` cards, the
    softmax of its logits over them, into ``out`` (0 for the other cards): a search's prior
    (``ismcts(prior=...)``)."""
    x = np.empty(OBS_SIZE, dtype=np.float32)
    encode_observation(state, rules, seat, np.uint64(0), x)
    logits = np.empty(N_CARDS, dtype=np.float32)
    policy_logits(x, _SW1[k], _SB1[k], _SW2[k], _SB2[k], _SW3[k], _SB3[k], logits)
    _, top = _best_legal(logits, legal)
    total = 0.0
    for card in range(N_CARDS):
        out[card] = np.exp(np.float64(logits[card]) - top) if legal & card_bit(card) else 0.0
        total += out[card]
    if not 0.0 < total < np.inf:  # logits that do not compare (NaN: float32 overflow): uniform
        total = 0.0
        for card in range(N_CARDS):
            out[card] = 1.0 if legal & card_bit(card) else 0.0
            total += out[card]
    for card in range(N_CARDS):
        out[card] /= total


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
    uncached=f"{', '.join(map(str, TOO_WIDE))} holds {TOO_LARGE}" if TOO_WIDE else "",
)
