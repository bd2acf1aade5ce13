"""Train the learned evaluation (agents/evaluation.py) and write agents/evaluation_weights.py.

Self-play hands from the fast core: every seat passes like the rule agent and plays the search
agents' playout policy (``--rollout``, with ``--epsilon`` random cards), as the playouts the
evaluation cuts short do. In each hand one trick is drawn uniformly (the first excepted), and
at its start every seat's features (``seat_features``) are recorded with the seat's final
score of the hand, in units of the moon total. A ridge regression (scikit-learn; ``pip install
-e ".[learn]"``) fits one weight per feature; the held-out share of the hands reports how much
of the variance of the final score the evaluation explains, against the features' baseline of
the points already taken (what a search knows without any model), and of the weights shipped now.

With ``--saved FILE ...`` the hands are instead those a search agent played against itself and
``experiments/train_shape.py play`` saved: the evaluation then predicts the outcome under that
agent's play, not the playouts' (the value step of expert iteration). Every trick start after
the first is recorded (these hands are dear), and one hand in five is held out.

    python experiments/train_evaluation.py                          # 1,000,000 hands, standard
    python experiments/train_evaluation.py --hands 200000 --dry-run # fit and report, write nothing
    python experiments/train_shape.py play --agent "ismcts(iterations=2000)" --hands 6000 --out runs/ev.npz
    python experiments/train_evaluation.py --saved runs/ev.npz --dry-run
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from agents.evaluation import FEATURES, N_FEATURES, seat_features
from agents.evaluation_weights import WEIGHTS
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULTS
from agents.rule import rule_pass
from agents.search import ROLLOUTS, playout_card
from hearts_sim._numba import njit
from hearts_sim.apps.script import ScriptParser, master_seed, number, run_script, whole
from hearts_sim.core.errors import MissingExtra
from hearts_sim.core.files import write_atomically
from hearts_sim.core.rules import resolve_rules
from hearts_sim.engine.hand import (
    deal_numbered_hand,
    hand_size,
    legal_moves,
    moon_total,
    pass_cards,
    play_card,
)
from hearts_sim.engine.rng import derive_seed, random_below
from hearts_sim.engine.state import PHASE_PASS, PHASE_PLAY, new_states

sys.path.insert(0, str(Path(__file__).resolve().parent))  # train_shape.py beside it, also when imported
from train_shape import HELD_OUT_EVERY, SavedHandsError, saved_hands  # noqa: E402

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "agents" / "evaluation_weights.py"


@njit
def _trick_start_rows(state, rules, out):  # type: ignore[no-untyped-def]
    """Every seat's features (one row a seat of ``out``) in ``state``, at the start of a trick."""
    for s in range(state.n_players):
        seat_features(state, rules, s, out[s])


@njit
def _samples(rules, rollout, epsilon, seed, hands, states, features, targets):  # type: ignore[no-untyped-def]
    """Fill ``features`` (hands * n rows) and ``targets`` from ``hands`` self-play hands (``states``:
    one scratch record); returns the rows written."""
    n = rules.n_players
    total = moon_total(rules)
    tricks = hand_size(rules)
    row = 0
    for hand in range(hands):
        state = states[0]
        deal_numbered_hand(state, rules, np.uint64(seed), hand)
        hand_seed = state.hand_seed
        if state.phase == PHASE_PASS:
            for s in range(n):
                pass_cards(state, rules, s, rule_pass(RULE_DEFAULTS, state, rules, s, hand_seed))
        rng = derive_seed(hand_seed, 7)
        rng, pick = random_below(rng, tricks - 1)
        snapshot = pick + 1  # the trick at whose start the features are taken
        first_row = row
        while state.phase == PHASE_PLAY:
            if state.n_in_trick == 0 and state.trick_number == snapshot:
                _trick_start_rows(state, rules, features[row : row + n])
                row += n
            legal = legal_moves(state, rules)
            rng, card = playout_card(state, rules, legal, rng, rollout, epsilon)
            play_card(state, rules, card)
        for s in range(n):
            if row > first_row:
                targets[first_row + s] = state.scores[s] / total
    return row


@njit
def _saved_hand_rows(state, rules, cards, out):  # type: ignore[no-untyped-def]
    """Play a saved hand's ``cards`` on the record ``state`` (its passes made), writing every seat's
    features at each trick start after the first into the rows of ``out``; returns how many."""
    n = state.n_players
    row = 0
    for card in cards:
        if state.n_in_trick == 0 and state.trick_number >= 1:
            _trick_start_rows(state, rules, out[row : row + n])
            row += n
        play_card(state, rules, card)
    return row


def saved_samples(files: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, targets, held-out mask) at every trick start after the first of the hands that
    ``train_shape.py play`` saved in ``files``: each seat's row with its final score of the hand,
    in units of the moon total; the rows of one hand in ``HELD_OUT_EVERY`` held out."""
    features, targets, held = [], [], []
    for hand, state, cards in saved_hands(files):
        n = state.rules.n_players
        rows = np.zeros((len(cards), N_FEATURES))  # at most a row per seat and trick: fewer than cards
        count = _saved_hand_rows(state.record, state.rules.to_tuple(), cards.astype(np.int64), rows)
        final = state.scores() / state.rules.moon_total
        features.append(rows[:count])
        targets.append(np.tile(final, count // n))
        held += [hand % HELD_OUT_EVERY == 0] * count
    if not features:
        raise SavedHandsError(f"{', '.join(files)}: no hands saved")
    return np.concatenate(features), np.concatenate(targets), np.array(held)


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--hands",
        type=whole("--hands", 10, 100_000_000),
        default=1_000_000,
        help="hands played (a tenth held out)",
    )
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--rollout", default="greedy", choices=ROLLOUTS)
    parser.add_argument(
        "--epsilon", type=number("--epsilon", 0, 1), default=0.086, help="the playouts' random-card chance"
    )
    parser.add_argument("--alpha", type=number("--alpha", 0), default=1.0, help="ridge penalty")
    parser.add_argument("--seed", type=master_seed(), default=0)
    parser.add_argument(
        "--saved",
        nargs="+",
        metavar="FILE",
        help="fit to the hands train_shape.py play saved (a search agent's self-play), not to playouts",
    )
    parser.add_argument("--dry-run", action="store_true", help="fit and report; do not write the weights")
    args = parser.parse_args(argv)
    if args.saved and args.rules != "standard":
        parser.error("--saved: train_shape.py play saves hands of the standard rules only; drop --rules")
    try:
        from sklearn.linear_model import Ridge
    except ModuleNotFoundError:  # the optional extra learn
        raise MissingExtra("train_evaluation.py", "scikit-learn", "learn") from None

    rules = resolve_rules(args.rules)
    n = rules.n_players
    started = time.perf_counter()
    if args.saved:
        features, targets, held = saved_samples(
            args.saved
        )  # a file not train_shape.py play's: one line (an InputError)
        source = f"{len(targets) // n:,} trick starts of {', '.join(args.saved)}"
    else:
        features = np.zeros((args.hands * n, N_FEATURES), dtype=np.float64)
        targets = np.zeros(args.hands * n, dtype=np.float64)
        rollout = ROLLOUTS.index(args.rollout)
        array = rules.to_tuple()
        rows = _samples(array, rollout, args.epsilon, args.seed, args.hands, new_states(1), features, targets)
        features, targets = features[:rows], targets[:rows]
        held = np.arange(rows) < rows // 10 // n * n  # whole hands
        source = f"{args.hands:,} hands"
    print(f"{len(targets):,} rows from {source} in {time.perf_counter() - started:.1f} s", flush=True)
    if held.all() or not held.any():  # Ridge's ValueError on an empty side, after all the play
        parser.error(f"{source}: too few to hold a tenth out and fit to the rest; give more hands")
    model = Ridge(alpha=args.alpha, fit_intercept=False).fit(features[~held], targets[~held])
    test_x, test_y = features[held], targets[held]
    residual = float(np.mean((model.predict(test_x) - test_y) ** 2))
    baseline = Ridge(alpha=args.alpha).fit(features[~held, 1:2], targets[~held])
    base_residual = float(np.mean((baseline.predict(test_x[:, 1:2]) - test_y) ** 2))
    shipped_residual = float(np.mean((test_x @ np.array(WEIGHTS) - test_y) ** 2))
    variance = float(np.var(test_y))
    total = rules.moon_total
    print(
        f"held out ({len(test_y):,} rows): R^2 {1 - residual / variance:.3f} "
        f"(points taken alone: {1 - base_residual / variance:.3f}; the shipped weights: "
        f"{1 - shipped_residual / variance:.3f}); RMSE {np.sqrt(residual) * total:.2f} "
        f"points (alone: {np.sqrt(base_residual) * total:.2f})"
    )
    for name, weight in zip(FEATURES, model.coef_, strict=True):
        print(f"  {name:<20} {weight:+.4f}")
    if args.dry_run:
        return
    lines = "".join(f"    {w:+.6f},  # {name}\n" for name, w in zip(FEATURES, model.coef_, strict=True))
    if args.saved:
        command = f"--saved {' '.join(args.saved)} --alpha {args.alpha}"
    else:
        command = f"--hands {args.hands} --rules {args.rules}\n--rollout {args.rollout} "
        command += f"--epsilon {args.epsilon} --alpha {args.alpha} --seed {args.seed}"
    source = (
        '"""Weights of the learned evaluation (agents/evaluation.py), one per ``FEATURES`` entry.\n\n'
        f"Written by ``python experiments/train_evaluation.py {command}``:\n"
        f"held-out R^2 {1 - residual / variance:.3f} over {len(test_y):,} rows.\n"
        '"""\n\n'
        f"WEIGHTS = (\n{lines})\n"
    )
    write_atomically(WEIGHTS_FILE, source.encode())  # a failed write keeps the module importable
    print(f"wrote {WEIGHTS_FILE} (the agents that use it recompile on their next run)")


if __name__ == "__main__":
    run_script(main)
