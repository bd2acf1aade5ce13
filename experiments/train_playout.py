"""Fit the learned playout policy (agents/playout_model.py) to a teacher's plays and write
agents/playout_weights.py.

The teacher (``--teacher``, default ``hard``) plays ``--hands`` hands in every seat, one decision
at a time; at each play with more than one legal card the features of every legal card
(``move_features``: what the seat to play sees) are recorded with the card the teacher chose.
A conditional logit (a softmax over the legal cards, one weight per feature) is fitted by
maximum likelihood with a small ridge penalty (scipy's L-BFGS), on all but a held-out fifth of
the hands; the report compares, on that fifth, the model's log-likelihood of the teacher's
cards with a uniform pick's, and how often the model's likeliest card and greedy's card are the
teacher's.

    python experiments/train_playout.py --hands 150 --data runs/playout_data.npz   # then recompiles
    python experiments/train_playout.py --data runs/playout_data.npz --dry-run     # refit, report only
"""

from __future__ import annotations

import argparse
import textwrap
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from tqdm import tqdm

from agents.dispatch import decide_pass, decide_play
from agents.playout_model import MAX_LEGAL, MOVE_FEATURES, N_MOVE_FEATURES, move_features
from agents.registry import parse_agent
from agents.search import greedy_play
from hearts_sim.core.rules import resolve_rules
from hearts_sim.engine.hand import decision_seed
from hearts_sim.game.hand_state import HandState

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "agents" / "playout_weights.py"


def record_decisions(teacher: str, rules_name: str, hands: int, seed: int) -> dict[str, np.ndarray]:
    """The teacher's plays with a choice over ``hands`` self-play hands: per decision the
    features of each legal card (padded to MAX_LEGAL), how many there are, the chosen one's
    index, greedy's index and the hand number."""
    rules = resolve_rules(rules_name)
    rules_tuple = rules.to_tuple()
    agent = parse_agent(teacher)
    features, counts, chosen, greedy, hand_of = [], [], [], [], []
    for hand in tqdm(range(hands), desc=f"{teacher} self-play", unit="hand"):
        state = HandState.deal(rules, seed=seed, hand=hand)
        record = state.record
        if state.phase == "pass":
            for seat in range(rules.n_players):
                pass_policy = agent.pass_policy
                cards = decide_pass(
                    pass_policy.code, pass_policy.row, record, rules_tuple, seat, decision_seed(record, seat)
                )
                state.pass_cards(seat, int(cards))
        while state.phase == "play":
            seat = state.current_player
            assert seat is not None
            legal = np.uint64(int(state.legal_moves()))
            card = int(
                decide_play(
                    agent.play_policy.code,
                    agent.play_policy.row,
                    record,
                    rules_tuple,
                    seat,
                    legal,
                    decision_seed(record, seat),
                )
            )
            cards = [c for c in range(64) if (int(legal) >> c) & 1]
            if len(cards) > 1:
                rows = np.zeros((MAX_LEGAL, N_MOVE_FEATURES))
                move_features(record, rules_tuple, legal, rows)
                _, greedy_card = greedy_play(record, rules_tuple, legal, np.uint64(hand * 64 + seat + 1))
                features.append(rows)
                counts.append(len(cards))
                chosen.append(cards.index(card))
                greedy.append(cards.index(int(greedy_card)))
                hand_of.append(hand)
            state.play(card)
    return {
        "features": np.array(features),
        "counts": np.array(counts),
        "chosen": np.array(chosen),
        "greedy": np.array(greedy),
        "hand": np.array(hand_of),
    }


def _logits(weights: np.ndarray, data: dict[str, np.ndarray]) -> np.ndarray:
    logits = data["features"] @ weights
    padding = np.arange(MAX_LEGAL)[None, :] >= data["counts"][:, None]
    return np.where(padding, -np.inf, logits)


def log_likelihood(weights: np.ndarray, data: dict[str, np.ndarray]) -> float:
    """Mean log-probability of the teacher's cards under the model."""
    logits = _logits(weights, data)
    top = logits.max(axis=1, keepdims=True)
    log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    return float(np.mean(logits[np.arange(len(logits)), data["chosen"]] - log_z))


def fit(data: dict[str, np.ndarray], ridge: float) -> np.ndarray:
    """The maximum-likelihood weights with a ridge penalty of ``ridge`` per weight squared."""
    rows = np.arange(len(data["chosen"]))

    def loss(weights: np.ndarray) -> tuple[float, np.ndarray]:
        logits = _logits(weights, data)
        top = logits.max(axis=1, keepdims=True)
        p = np.exp(logits - top)
        p /= p.sum(axis=1, keepdims=True)
        nll = -np.mean(np.log(p[rows, data["chosen"]]))
        expected = np.einsum("dc,dcf->df", p, data["features"])
        gradient = -np.mean(data["features"][rows, data["chosen"]] - expected, axis=0)
        return nll + ridge * weights @ weights, gradient + 2 * ridge * weights

    result = minimize(loss, np.zeros(N_MOVE_FEATURES), jac=True, method="L-BFGS-B")
    return np.asarray(result.x)


def _subset(data: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {key: value[mask] for key, value in data.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--teacher", default="hard")
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--hands", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ridge", type=float, default=1e-3)
    parser.add_argument("--data", type=Path, help="the recorded decisions: read if it exists, else written")
    parser.add_argument("--dry-run", action="store_true", help="fit and report, write no weights")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.data is not None and args.data.exists():
        data = dict(np.load(args.data))
    else:
        data = record_decisions(args.teacher, args.rules, args.hands, args.seed)
        if args.data is not None:
            np.savez_compressed(args.data, **data)
    hands = int(data["hand"].max()) + 1
    held_out = data["hand"] % 5 == 4
    train, test = _subset(data, ~held_out), _subset(data, held_out)
    weights = fit(train, args.ridge)
    uniform = float(np.mean(-np.log(test["counts"])))
    model = log_likelihood(weights, test)
    top = np.argmax(_logits(weights, test), axis=1)
    report = (
        f"{len(data['chosen']):,} decisions ({len(test['chosen']):,} held out): log-likelihood of the "
        f"teacher's card {model:.3f} nats against {uniform:.3f} uniform; likeliest card the teacher's "
        f"{np.mean(top == test['chosen']):.1%}, greedy's {np.mean(test['greedy'] == test['chosen']):.1%}"
    )
    print(report)
    for name, weight in zip(MOVE_FEATURES, weights, strict=True):
        print(f"  {name:24s} {weight:+.3f}")
    if args.dry_run:
        return
    command = (
        f"python experiments/train_playout.py --teacher {args.teacher} --rules {args.rules}"
        f" --hands {hands} --seed {args.seed} --ridge {args.ridge}"
    )
    lines = [
        '"""Weights of the learned playout policy (agents/playout_model.py), one per feature.',
        "",
        "Written by",
        f"``{command}``",
        f"({time.perf_counter() - started:.0f} s):",
        *textwrap.wrap(report + ".", 96),
        '"""',
        "",
        "import numpy as np",
        "",
        "WEIGHTS = np.array(",
        "    [",
        *[f"        {w:+.6f},  # {n}" for n, w in zip(MOVE_FEATURES, weights, strict=True)],
        "    ]",
        ")",
        "",
    ]
    WEIGHTS_FILE.write_text("\n".join(lines))
    # numba caches each kernel by its own file: the playouts would not notice new weights
    stale = list((WEIGHTS_FILE.parent / "__pycache__").glob("*.nb[ic]"))
    for path in stale:
        path.unlink()
    print(f"wrote {WEIGHTS_FILE}; deleted {len(stale)} cached agent kernels (they recompile on next use)")


if __name__ == "__main__":
    main()
