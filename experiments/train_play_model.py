"""Fit the learned play model (agents/play_model.py) to a player's cards and write
agents/play_model_weights.py.

The hands come from ``experiments/train_shape.py play`` (a search agent's self-play, every pass
and card saved). Each hand is replayed; at every play with more than one legal card the
features of each legal card (``move_features``: what the seat to play sees) are kept with the
card the player chose. A conditional logit (a softmax over the legal cards, one weight per
feature) is fitted by maximum likelihood with a small ridge penalty (``--ridge``, scipy's
L-BFGS) on the hands not held out (one in ``train_shape.HELD_OUT_EVERY``). Printed, on the
held-out hands: the model's mean log-likelihood of the chosen card against a uniform pick's,
and how often the model's likeliest card and greedy's card are the one chosen.

    python experiments/train_shape.py play --agent hard --seed 0 --hands 200 --out runs/hard_play0.npz
    python experiments/train_play_model.py runs/hard_play0.npz                # writes the weights
    python experiments/train_play_model.py runs/hard_play0.npz --dry-run      # fit and report only
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from agents.play_model import MAX_LEGAL, MOVE_FEATURES, N_MOVE_FEATURES, move_features
from agents.search import greedy_play
from hearts_sim.apps.script import ScriptParser, number, run_script
from hearts_sim.core.errors import StorageError
from hearts_sim.core.files import write_atomically

sys.path.insert(0, str(Path(__file__).resolve().parent))  # train_shape.py beside it, also when imported
from train_shape import HELD_OUT_EVERY, saved_hands  # noqa: E402

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "agents" / "play_model_weights.py"


def saved_decisions(files: list[str]) -> dict[str, np.ndarray]:
    """Every play with a choice in the saved hands: the features of each legal card (padded to
    ``MAX_LEGAL`` rows), how many there are, the chosen card's row, greedy's row and the hand."""
    features, counts, chosen, greedy, hand_of = [], [], [], [], []
    for hand, state, cards in saved_hands(files):
        record, rules = state.record, state.rules.to_tuple()
        for card in cards:
            legal = int(state.legal_moves())
            options = [c for c in range(64) if legal >> c & 1]
            if len(options) > 1:
                rows = np.zeros((MAX_LEGAL, N_MOVE_FEATURES))
                move_features(record, rules, np.uint64(legal), rows)
                seed = np.uint64(hand * 64 + int(record["to_play"]) + 1)
                _, greedy_card = greedy_play(record, rules, np.uint64(legal), seed)
                features.append(rows)
                counts.append(len(options))
                chosen.append(options.index(int(card)))
                greedy.append(options.index(int(greedy_card)))
                hand_of.append(hand)
            state.play(int(card))
    return {
        "features": np.array(features).reshape(-1, MAX_LEGAL, N_MOVE_FEATURES),
        "counts": np.array(counts, dtype=np.int64),
        "chosen": np.array(chosen, dtype=np.int64),
        "greedy": np.array(greedy, dtype=np.int64),
        "hand": np.array(hand_of, dtype=np.int64),
    }


def _logits(weights: np.ndarray, data: dict[str, np.ndarray]) -> np.ndarray:
    logits = data["features"] @ weights
    padding = np.arange(MAX_LEGAL)[None, :] >= data["counts"][:, None]
    return np.where(padding, -np.inf, logits)


def _probabilities(weights: np.ndarray, data: dict[str, np.ndarray]) -> np.ndarray:
    logits = _logits(weights, data)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def log_likelihood(weights: np.ndarray, data: dict[str, np.ndarray]) -> float:
    """Mean log-probability of the chosen cards under the model (nats per decision)."""
    p = _probabilities(weights, data)
    return float(np.mean(np.log(p[np.arange(len(p)), data["chosen"]])))


def fit(data: dict[str, np.ndarray], ridge: float) -> np.ndarray:
    """The maximum-likelihood weights with a penalty of ``ridge`` times the squared weights."""
    rows = np.arange(len(data["chosen"]))
    chosen_features = data["features"][rows, data["chosen"]]

    def loss(weights: np.ndarray) -> tuple[float, np.ndarray]:
        p = _probabilities(weights, data)
        expected = np.einsum("dc,dcf->df", p, data["features"])
        gradient = -np.mean(chosen_features - expected, axis=0)
        nll = -np.mean(np.log(p[rows, data["chosen"]]))
        return nll + ridge * weights @ weights, gradient + 2 * ridge * weights

    result = minimize(loss, np.zeros(N_MOVE_FEATURES), jac=True, method="L-BFGS-B")
    return np.asarray(result.x)


def _subset(data: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {key: value[mask] for key, value in data.items()}


def weights_source(weights: np.ndarray, command: str, report: str) -> str:
    """The text of ``agents/play_model_weights.py``."""
    lines = [
        '"""Weights of the learned play model (agents/play_model.py), one per feature of MOVE_FEATURES.',
        "",
        "Written by",
        f"``{command}``:",
        *textwrap.wrap(report + ".", 96),
        '"""',
        "",
        "WEIGHTS: tuple[float, ...] = (",
        *[f"    {w:+.6f},  # {name}" for name, w in zip(MOVE_FEATURES, weights, strict=True)],
        ")",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = ScriptParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="hands saved by train_shape.py play")
    parser.add_argument(
        "--ridge", type=number("--ridge", 0), default=1e-3, help="penalty on the squared weights"
    )
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE, help="the weights module to write")
    parser.add_argument("--dry-run", action="store_true", help="fit and report; write no weights")
    args = parser.parse_args()
    if not args.dry_run and not (args.out.parent.is_dir() and args.out.suffix == ".py"):
        parser.error(f"--out {args.out}: not a .py file in an existing folder")
    data = saved_decisions(args.files)  # a file not train_shape.py play's: one line (an InputError)
    held_out = data["hand"] % HELD_OUT_EVERY == 0
    if held_out.all() or not held_out.any():
        parser.error(f"need hands both held out and not (one in {HELD_OUT_EVERY}); give more hands")
    train, test = _subset(data, ~held_out), _subset(data, held_out)
    weights = fit(train, args.ridge)
    top = np.argmax(_logits(weights, test), axis=1)
    uniform = np.mean(-np.log(test["counts"]))
    report = (
        f"{len(data['chosen']):,} decisions ({len(test['chosen']):,} held out): log-likelihood of the "
        f"chosen card {log_likelihood(weights, test):.3f} nats against {uniform:.3f} "
        f"uniform; likeliest card the chosen one {np.mean(top == test['chosen']):.1%}, "
        f"greedy's {np.mean(test['greedy'] == test['chosen']):.1%}"
    )
    print(report)
    for name, weight in zip(MOVE_FEATURES, weights, strict=True):
        print(f"  {name:24s} {weight:+.3f}")
    if args.dry_run:
        return
    files = " ".join(args.files)
    command = f"python experiments/train_play_model.py {files} --ridge {args.ridge:g}"
    try:
        write_atomically(args.out, weights_source(weights, command, report).encode())
    except OSError as error:
        raise StorageError(f"cannot write {args.out}: {error.strerror}") from None
    print(f"wrote {args.out}")


if __name__ == "__main__":
    run_script(main)
