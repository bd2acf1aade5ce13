"""Train the learned evaluation (agents/evaluation.py) and write agents/evaluation_weights.py.

Self-play hands from the fast core: every seat passes like the rule agent and plays the search
agents' playout policy (``--rollout``, with ``--epsilon`` random cards), as the playouts the
evaluation cuts short do. In each hand one trick is drawn uniformly (the first excepted), and
at its start every seat's features (``seat_features``) are recorded with the seat's final
score of the hand, in units of the moon total. A ridge regression (scikit-learn; ``pip install
-e ".[learn]"``) fits one weight per feature; the held-out share of the hands reports how much
of the variance of the final score the evaluation explains, against the features' baseline of
the points already taken (what a search knows without any model).

    python experiments/train_evaluation.py                          # 1,000,000 hands, standard
    python experiments/train_evaluation.py --hands 200000 --dry-run # fit and report, write nothing
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from agents.evaluation import FEATURES, N_FEATURES, seat_features
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULTS
from agents.rule import rule_pass
from agents.search import ROLLOUTS, playout_card
from hearts_sim._numba import njit
from hearts_sim.core.rules import resolve_rules
from hearts_sim.engine.hand import (
    deal_hand,
    hand_size,
    legal_moves,
    moon_total,
    pass_cards,
    pass_offset_for_hand,
    play_card,
)
from hearts_sim.engine.rng import derive_seed, random_below
from hearts_sim.engine.state import PHASE_PASS, PHASE_PLAY, new_states

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "agents" / "evaluation_weights.py"


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
        hand_seed = derive_seed(np.uint64(seed), hand)
        deal_hand(state, rules, pass_offset_for_hand(rules, hand, hand_seed), hand % n, hand_seed)
        if state.phase == PHASE_PASS:
            for s in range(n):
                pass_cards(state, rules, s, rule_pass(RULE_DEFAULTS, state, rules, s, hand_seed))
        rng = derive_seed(hand_seed, 7)
        rng, pick = random_below(rng, tricks - 1)
        snapshot = pick + 1  # the trick at whose start the features are taken
        first_row = row
        while state.phase == PHASE_PLAY:
            if state.n_in_trick == 0 and state.trick_number == snapshot:
                for s in range(n):
                    seat_features(state, rules, s, features[row + s])
                row += n
            legal = legal_moves(state, rules)
            rng, card = playout_card(state, rules, legal, rng, rollout, epsilon)
            play_card(state, rules, card)
        for s in range(n):
            if row > first_row:
                targets[first_row + s] = state.scores[s] / total
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=1_000_000)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--rollout", default="greedy", choices=ROLLOUTS)
    parser.add_argument("--epsilon", type=float, default=0.086, help="the playouts' random-card chance")
    parser.add_argument("--alpha", type=float, default=1.0, help="ridge penalty")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dry-run", action="store_true", help="fit and report; do not write the weights")
    args = parser.parse_args(argv)
    from sklearn.linear_model import Ridge  # the optional `train` extra

    rules = resolve_rules(args.rules)
    n = rules.n_players
    started = time.perf_counter()
    features = np.zeros((args.hands * n, N_FEATURES), dtype=np.float64)
    targets = np.zeros(args.hands * n, dtype=np.float64)
    rollout = ROLLOUTS.index(args.rollout)
    array = rules.to_tuple()
    rows = _samples(array, rollout, args.epsilon, args.seed, args.hands, new_states(1), features, targets)
    features, targets = features[:rows], targets[:rows]
    print(f"{rows:,} rows from {args.hands:,} hands in {time.perf_counter() - started:.1f} s", flush=True)
    held_out = rows // 10 // n * n  # whole hands
    model = Ridge(alpha=args.alpha, fit_intercept=False).fit(features[held_out:], targets[held_out:])
    test_x, test_y = features[:held_out], targets[:held_out]
    residual = float(np.mean((model.predict(test_x) - test_y) ** 2))
    baseline = Ridge(alpha=args.alpha).fit(features[held_out:, 1:2], targets[held_out:])
    base_residual = float(np.mean((baseline.predict(test_x[:, 1:2]) - test_y) ** 2))
    variance = float(np.var(test_y))
    total = rules.moon_total
    print(
        f"held out ({held_out:,} rows): R^2 {1 - residual / variance:.3f} "
        f"(points taken alone: {1 - base_residual / variance:.3f}); RMSE {np.sqrt(residual) * total:.2f} "
        f"points (alone: {np.sqrt(base_residual) * total:.2f})"
    )
    for name, weight in zip(FEATURES, model.coef_, strict=True):
        print(f"  {name:<20} {weight:+.4f}")
    if args.dry_run:
        return
    lines = "".join(f"    {w:+.6f},  # {name}\n" for name, w in zip(FEATURES, model.coef_, strict=True))
    WEIGHTS_FILE.write_text(
        '"""Weights of the learned evaluation (agents/evaluation.py), one per ``FEATURES`` entry.\n\n'
        f"Written by ``python experiments/train_evaluation.py --hands {args.hands} --rules {args.rules}\n"
        f"--rollout {args.rollout} --epsilon {args.epsilon} --alpha {args.alpha} --seed {args.seed}``:\n"
        f"held-out R^2 {1 - residual / variance:.3f} over {held_out:,} rows.\n"
        '"""\n\n'
        f"WEIGHTS = (\n{lines})\n"
    )
    print(f"wrote {WEIGHTS_FILE} (the agents that use it recompile on their next run)")


if __name__ == "__main__":
    main()
