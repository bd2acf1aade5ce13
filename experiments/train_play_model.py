"""Fit the learned play model (agents/play_model.py) to a player's cards and write
agents/play_model_weights.py.

The hands come from ``experiments/train_shape.py play`` (a search agent's self-play, every pass
and card saved). Each hand is replayed; at every play with more than one legal card the
features of each legal card (``move_features``: what the seat to play sees) are kept with the
card the player chose. A softmax over the legal cards of each card's score (linear in its
features plus ``--hidden`` tanh units; 0 gives a conditional logit) is fitted by maximum
likelihood with a small ridge penalty (``--ridge``, scipy's L-BFGS) on the hands not held out
(one in ``train_shape.HELD_OUT_EVERY``). Printed, on the held-out hands: the model's mean
log-likelihood of the chosen card against a uniform pick's (and a linear model's), and how often
the model's likeliest card and greedy's card are the one chosen.

    python experiments/train_shape.py play --agent hard --seed 0 --hands 200 --out runs/hard_play0.npz
    python experiments/train_play_model.py runs/hard_play0.npz                # writes the weights
    python experiments/train_play_model.py runs/hard_play0.npz --dry-run      # fit and report only
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from agents.play_model import MAX_LEGAL, MOVE_FEATURES, N_MOVE_FEATURES, move_features
from agents.search import greedy_play

sys.path.insert(0, str(Path(__file__).resolve().parent))  # train_shape.py beside it, also when imported
from train_shape import HELD_OUT_EVERY, SavedHandsError, saved_hands  # noqa: E402

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "agents" / "play_model_weights.py"


def saved_decisions(files: list[str]) -> dict[str, np.ndarray]:
    """Every play with a choice in the saved hands: the features of each legal card (padded to
    ``MAX_LEGAL`` rows), how many there are, the chosen card's row, greedy's row and the hand."""
    features, counts, chosen, greedy, hand_of = [], [], [], [], []
    for hand, state, cards in saved_hands(files):
        record, rules = state.record, state._rules_array
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


@dataclass(frozen=True)
class PlayModel:
    """The play model's weights (``agents/play_model.py``): ``linear``, one per feature; ``hidden``,
    one row per hidden unit (its weights on the features, its bias last); ``out``, each unit's
    weight in the card's score."""

    linear: np.ndarray
    hidden: np.ndarray = field(default_factory=lambda: np.zeros((0, N_MOVE_FEATURES + 1)))
    out: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def flat(self) -> np.ndarray:
        return np.concatenate([self.linear, self.hidden.ravel(), self.out])

    @staticmethod
    def unflat(values: np.ndarray, n_hidden: int) -> PlayModel:
        n = N_MOVE_FEATURES
        hidden = values[n : n + n_hidden * (n + 1)].reshape(n_hidden, n + 1)
        return PlayModel(values[:n], hidden, values[n + n_hidden * (n + 1) :])

    def units(self, features: np.ndarray) -> np.ndarray:
        """Each hidden unit's value for each card: (..., hidden units)."""
        return np.tanh(features @ self.hidden[:, :-1].T + self.hidden[:, -1])

    def scores(self, features: np.ndarray) -> np.ndarray:
        """Each card's score, as ``agents.play_model.card_logit`` computes it."""
        return features @ self.linear + self.units(features) @ self.out


def _logits(model: PlayModel, data: dict[str, np.ndarray]) -> np.ndarray:
    padding = np.arange(MAX_LEGAL)[None, :] >= data["counts"][:, None]
    return np.where(padding, -np.inf, model.scores(data["features"]))


def _probabilities(model: PlayModel, data: dict[str, np.ndarray]) -> np.ndarray:
    logits = _logits(model, data)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def log_likelihood(model: PlayModel, data: dict[str, np.ndarray]) -> float:
    """Mean log-probability of the chosen cards under the model (nats per decision)."""
    p = _probabilities(model, data)
    return float(np.mean(np.log(p[np.arange(len(p)), data["chosen"]])))


def fit(data: dict[str, np.ndarray], ridge: float, hidden: int = 0, seed: int = 0) -> PlayModel:
    """The maximum-likelihood weights with a penalty of ``ridge`` times the squared weights; with
    ``hidden`` units, from small random weights drawn from ``seed`` (the likelihood is then not
    concave: L-BFGS finds a local optimum)."""
    rows = np.arange(len(data["chosen"]))
    features = data["features"]
    padding = np.arange(MAX_LEGAL)[None, :] >= data["counts"][:, None]

    def loss(values: np.ndarray) -> tuple[float, np.ndarray]:
        model = PlayModel.unflat(values, hidden)
        p = _probabilities(model, data)
        # d(mean negative log-likelihood) / d(score of each card): (p - chosen) / decisions
        d_score = np.where(padding, 0.0, p)
        d_score[rows, data["chosen"]] -= 1.0
        d_score /= len(rows)
        units = model.units(features)
        d_unit = d_score[:, :, None] * model.out * (1.0 - units**2)
        gradient = PlayModel(
            linear=np.einsum("dc,dcf->f", d_score, features),
            hidden=np.concatenate(
                [np.einsum("dcf,dch->hf", features, d_unit), d_unit.sum(axis=(0, 1))[:, None]], axis=1
            ),
            out=np.einsum("dc,dch->h", d_score, units),
        ).flat()
        nll = -np.mean(np.log(p[rows, data["chosen"]]))
        return nll + ridge * values @ values, gradient + 2 * ridge * values

    size = N_MOVE_FEATURES + hidden * (N_MOVE_FEATURES + 1) + hidden
    start = np.random.default_rng(seed).normal(scale=0.1, size=size)
    start[:N_MOVE_FEATURES] = 0.0  # the linear part from zero; the units from small random weights
    result = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 3000})
    return PlayModel.unflat(np.asarray(result.x), hidden)


def _subset(data: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {key: value[mask] for key, value in data.items()}


def weights_source(model: PlayModel, command: str, report: str) -> str:
    """The text of ``agents/play_model_weights.py``."""

    def numbers(values: np.ndarray, indent: str) -> list[str]:
        text = ", ".join(f"{v:+.6f}" for v in values) + ","
        return textwrap.wrap(text, 96, initial_indent=indent, subsequent_indent=indent)

    lines = [
        '"""Weights of the learned play model (agents/play_model.py): WEIGHTS, one per feature of',
        "MOVE_FEATURES; HIDDEN, one row per hidden unit (a weight per feature, then its bias);",
        "HIDDEN_OUT, each unit's weight in a card's score.",
        "",
        *textwrap.wrap(f"Written by ``{command}``: {report}.", 96, break_on_hyphens=False),
        '"""',
        "",
        "WEIGHTS: tuple[float, ...] = (",
        *[f"    {w:+.6f},  # {name}" for name, w in zip(MOVE_FEATURES, model.linear, strict=True)],
        ")",
        "# fmt: off",
        "HIDDEN: tuple[tuple[float, ...], ...] = (",
        *[line for unit in model.hidden for line in ["    (", *numbers(unit, " " * 8), "    ),"]],
        ")",
        "HIDDEN_OUT: tuple[float, ...] = (",
        *numbers(model.out, " " * 4),
        ")",
        "# fmt: on",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="+", help="hands saved by train_shape.py play")
    parser.add_argument("--ridge", type=float, default=1e-3, help="penalty on the squared weights")
    parser.add_argument("--hidden", type=int, default=4, help="hidden units (0: a linear model)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hidden units' first weights")
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE, help="the weights module to write")
    parser.add_argument("--dry-run", action="store_true", help="fit and report; write no weights")
    args = parser.parse_args()
    if not args.ridge >= 0:
        sys.exit("error: --ridge must be at least 0")
    if not args.hidden >= 0:
        sys.exit("error: --hidden must be at least 0")
    if not args.dry_run and not (args.out.parent.is_dir() and args.out.suffix == ".py"):
        sys.exit(f"error: --out {args.out}: not a .py file in an existing folder")
    try:
        data = saved_decisions(args.files)
    except SavedHandsError as error:
        sys.exit(f"error: {error}")
    held_out = data["hand"] % HELD_OUT_EVERY == 0
    if held_out.all() or not held_out.any():
        sys.exit(f"error: need hands both held out and not (one in {HELD_OUT_EVERY}); give more hands")
    train, test = _subset(data, ~held_out), _subset(data, held_out)
    model = fit(train, args.ridge, args.hidden, args.seed)
    top = np.argmax(_logits(model, test), axis=1)
    uniform = np.mean(-np.log(test["counts"]))
    report = (
        f"{len(data['chosen']):,} decisions ({len(test['chosen']):,} held out): log-likelihood of the "
        f"chosen card {log_likelihood(model, test):.3f} nats against {uniform:.3f} "
        f"uniform; likeliest card the chosen one {np.mean(top == test['chosen']):.1%}, "
        f"greedy's {np.mean(test['greedy'] == test['chosen']):.1%}"
    )
    if args.hidden:
        linear = fit(train, args.ridge)
        report += f"; a linear model: {log_likelihood(linear, test):.3f} nats"
    print(report)
    for name, weight in zip(MOVE_FEATURES, model.linear, strict=True):
        print(f"  {name:28s} {weight:+.3f}")
    if args.dry_run:
        return
    files = " ".join(args.files)
    command = (
        f"python experiments/train_play_model.py {files} --ridge {args.ridge:g} --hidden {args.hidden}"
        f" --seed {args.seed}"
    )
    try:
        args.out.write_text(weights_source(model, command, report))
    except OSError as error:
        sys.exit(f"error: cannot write {args.out}: {error.strerror}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
