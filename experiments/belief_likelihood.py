"""How well the weighted sampler predicts the hidden hands: log-likelihood of the truth, weighted vs uniform.

From self-play positions (``--agent`` in every seat, a play decision after a random share of
the hand), a pool of ``--pool`` worlds is drawn from the engine's sampler and weighted by the
belief model (``agents.belief``: the rule agent trusted with probability ``trust``); the
uniform sampler is the same pool with equal weights. For every hidden card the pool gives the
probability of each place it may lie in (another seat's hand or the kitty); the score of a
position is the sum over its hidden cards of the log-probability of the card's true place
(the pool's marginals, smoothed with half a world per place). Printed per trust value: the
mean score per position and per hidden card, and the mean gain over the uniform sampler with
a 95% interval over positions (paired: the same pool, only the weights differ); and the queen
of spades alone, over the positions where it is hidden: the mean probability the pool gives its
true place, and the gain in its log-probability (docs/hard.md sets it beside what knowing the
queen's place is worth to ``hard``'s search); and the suit lengths: the sum over the other seats
and the suits of the log-probability of the seat's true number of cards in the suit. With
``--shape W ...`` every trust value is scored again with the learned suit-length tilt
(``agents/shape.py``) at each weight ``W`` on top, and with ``--plays W ...`` with the learned
play model's likelihood (``agents/play_model.py``) at each weight ``W`` on top. ``--hands FILE ...``
takes the positions from the hands ``experiments/train_shape.py play`` saved, the ones its fit
holds out (one position a hand; far faster than playing ``hard`` again).

    python experiments/belief_likelihood.py --positions 300 --agent rule
    python experiments/belief_likelihood.py --agent "ismcts(iterations=1500)" --positions 200
    python experiments/belief_likelihood.py --agent hard --positions 100 --pool 1000 --trust 0.449 --shape 1
    python experiments/belief_likelihood.py --hands runs/shape_hard_a.npz runs/shape_hard_b.npz \
        --positions 300 --pool 1000 --trust 0.449 --shape 0.25 0.5 0.75 1
    python experiments/belief_likelihood.py --hands runs/hard_play1.npz --positions 300 --pool 1000 \
        --trust 0.449 --shape 0.5 --plays 0.5 1
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from agents.belief import (
    IGNORE_PLAYS,
    MAX_PLAYS,
    MAX_POOL,
    MAX_SHAPE,
    MAX_TRUST,
    belief_pool,
    marginal_owners,
)
from agents.registry import parse_agent
from hearts_sim.apps.script import ScriptParser, master_seed, number, run_script, whole
from hearts_sim.core.cards import QS, SUIT_MASKS, card_counts
from hearts_sim.core.rules import resolve_rules
from hearts_sim.engine.hand import decision_seed
from hearts_sim.engine.inference import new_pool
from hearts_sim.engine.sampler import unseen_cards
from hearts_sim.game.hand_state import HandState
from hearts_sim.studies.positions import real_positions
from hearts_sim.studies.stats import mean_interval

sys.path.insert(0, str(Path(__file__).resolve().parent))  # train_shape.py beside it, also when imported
from train_shape import HELD_OUT_EVERY, saved_hands  # noqa: E402

SMOOTHING = 0.5  # worlds added to every possible place of a card before taking the log
LENGTHS = 14  # a seat holds 0 to 13 cards of a suit


def truth_log_likelihood(state, seat: int, pool, cumulative, rules) -> tuple[float, int, float | None]:  # type: ignore[no-untyped-def]
    """(sum over hidden cards of log P(true place), number of hidden cards, log P(the queen of
    spades' true place) or None when the seat sees where it is) under the pool's weights."""
    n = rules.n_players
    array = rules.to_tuple()
    count = len(pool)
    marginals = np.zeros((n + 1, 52))
    marginal_owners(pool, cumulative, count, n, marginals)
    record = state.record
    hidden = int(unseen_cards(record, array, seat))
    places = [o for o in range(n) if o != seat] + (
        [n] if rules.kitty_size and hidden & int(record["kitty"]) else []
    )
    total, cards, queen = 0.0, 0, None
    for card in range(52):
        if not hidden >> card & 1:
            continue
        owner = next((o for o in range(n) if int(record["hands"][o]) >> card & 1), n)
        smoothed = (marginals[owner, card] * count + SMOOTHING) / (count + SMOOTHING * len(places))
        total += float(np.log(smoothed))
        cards += 1
        if card == QS:
            queen = float(np.log(smoothed))
    return total, cards, queen


def lengths_log_likelihood(state, seat: int, pool, cumulative, rules) -> float:  # type: ignore[no-untyped-def]
    """Sum over the other seats and the suits of log P(the seat's true number of cards in the suit)
    under the pool's weights (smoothed like the cards, over the 14 possible lengths)."""
    weights = np.diff(cumulative[: len(pool)], prepend=0.0)
    hands = pool["hands"][:, : rules.n_players]
    true_hands = state.record["hands"]
    total = 0.0
    for other in (o for o in range(rules.n_players) if o != seat):
        for mask in SUIT_MASKS:
            lengths = card_counts(hands[:, other] & mask)
            truth = int(card_counts(true_hands[other] & mask))
            share = weights[lengths == truth].sum()
            total += float(np.log((share * len(pool) + SMOOTHING) / (len(pool) + SMOOTHING * LENGTHS)))
    return total


def saved_positions(files: list[str], count: int, seed: int) -> list[tuple[HandState, int]]:
    """Up to ``count`` positions, one per held-out hand (``train_shape.HELD_OUT_EVERY``) of saved
    standard hands: a play decision after a uniformly drawn number of cards, as self-play gives."""
    chooser = np.random.default_rng(seed)
    positions: list[tuple[HandState, int]] = []
    for hand, state, cards in saved_hands(files):
        if len(positions) == count:
            break
        if hand % HELD_OUT_EVERY == 0:
            for card in cards[: int(chooser.integers(1, len(cards) - 4))]:
                state.play(int(card))
            positions.append((state, int(state.current_player)))  # type: ignore[arg-type]
    return positions


Model = tuple[float, float, float]  # the belief model's (trust, shape, plays)


def _name(model: Model) -> str:
    trust, shape, plays = model
    return (
        f"trust {trust:.2f}"
        + (f" + shape {shape:g}" if shape else "")
        + (f" + plays {plays:g}" if plays else "")
    )


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="rule", help="the agent in every seat of the self-play positions")
    parser.add_argument("--rules", default=None, help="rules of the self-play positions (default standard)")
    parser.add_argument("--positions", type=whole("--positions", 1, 1_000_000), default=200)
    parser.add_argument("--pool", type=whole("--pool", 1, MAX_POOL), default=2000, help="worlds per position")
    parser.add_argument(
        "--trust",
        type=number("--trust", 0, MAX_TRUST),
        nargs="+",
        default=[0.25, 0.5, 0.75, 0.9],
        help="0 is the uniform line",
    )
    parser.add_argument(
        "--shape",
        type=number("--shape", 0, MAX_SHAPE),
        nargs="+",
        default=[],
        help="also score each trust with the learned shape tilt at each of these weights",
    )
    parser.add_argument(
        "--plays",
        type=number("--plays", 0, MAX_PLAYS),
        nargs="+",
        default=[],
        help="also score each trust with the learned play model at each of these weights",
    )
    parser.add_argument(
        "--hands",
        nargs="+",
        metavar="FILE",
        help="positions from the held-out hands of train_shape.py play files instead of self-play",
    )
    parser.add_argument("--seed", type=master_seed(), default=0)
    args = parser.parse_args(argv)
    if args.hands and args.rules is not None:  # they were scored under the rules given, silently
        parser.error("--hands are the standard hands train_shape.py play saved: drop --rules")
    args.trust = [t for t in args.trust if t != IGNORE_PLAYS]  # trust 0 is the uniform line itself
    rules = resolve_rules(args.rules or "standard")
    if not args.hands:
        parse_agent(args.agent)  # an unknown name before any position is played
    array = rules.to_tuple()
    started = time.perf_counter()
    if args.hands:
        positions = saved_positions(
            args.hands, args.positions, args.seed
        )  # a file not train_shape.py play's: one line (an InputError)
        source = f"the held-out hands of {' '.join(args.hands)}"
    else:
        positions = real_positions(
            rules, args.positions, seed=args.seed, spec=args.agent, pass_probability=0.0
        )
        source = f"{args.agent} self-play ({rules.describe()})"
    print(
        f"{len(positions)} positions of {source}, {time.perf_counter() - started:.0f} s; "
        f"pool {args.pool} worlds",
        flush=True,
    )
    pool, cumulative = new_pool(args.pool)
    models: list[Model] = [(trust, shape, 0.0) for shape in [0.0, *args.shape] for trust in args.trust]
    models += [(trust, 0.0, plays) for plays in args.plays for trust in args.trust]
    uniform_model = (IGNORE_PLAYS, 0.0, 0.0)
    scores: dict[Model, list[float]] = {m: [] for m in [uniform_model, *models]}
    queens: dict[Model, list[float]] = {m: [] for m in scores}  # the queen hidden
    powers: dict[Model, list[float]] = {m: [] for m in models}
    shapes: dict[Model, list[float]] = {m: [] for m in scores}  # the suit lengths
    hidden_cards = 0
    for state, seat in positions:
        seed = np.uint64(decision_seed(state.record, seat))
        for model in scores:  # the same seed: the same pool for every model
            _, power = belief_pool(state.record, array, seat, seed, pool, cumulative, *model)
            value, cards, queen = truth_log_likelihood(state, seat, pool, cumulative, rules)
            scores[model].append(value)
            shapes[model].append(lengths_log_likelihood(state, seat, pool, cumulative, rules))
            if queen is not None:
                queens[model].append(queen)
            if model != uniform_model:
                powers[model].append(power)
        hidden_cards += cards
    uniform = np.array(scores[uniform_model])
    per_card = uniform.sum() / hidden_cards
    print(f"uniform sampler: {uniform.mean():.3f} per position, {per_card:.4f} per hidden card")
    for model in models:
        values = np.array(scores[model])
        mean_gain, half = mean_interval(values - uniform)
        per_card = values.sum() / hidden_cards
        print(
            f"{_name(model)}: {values.mean():.3f} per position, {per_card:.4f} per hidden card; "
            f"gain over uniform {mean_gain:+.3f} ± {half:.3f} nats per position; "
            f"mean tempering power {np.mean(powers[model]):.2f}"
        )
    uniform_shape = np.array(shapes[uniform_model])
    print(f"suit lengths of the other seats, uniform sampler: {uniform_shape.mean():.3f} per position")
    for model in models:
        mean_gain, half = mean_interval(np.array(shapes[model]) - uniform_shape)
        print(
            f"suit lengths, {_name(model)}: {np.mean(shapes[model]):.3f} per position; "
            f"gain over uniform {mean_gain:+.3f} ± {half:.3f} nats"
        )
    uniform_queen = np.array(queens[uniform_model])
    if len(uniform_queen) > 1:
        print(
            f"queen of spades, hidden in {len(uniform_queen)} positions: P(true place) "
            f"{np.exp(uniform_queen).mean():.3f} uniform"
        )
        for model in models:
            mean_gain, half = mean_interval(np.array(queens[model]) - uniform_queen)
            print(
                f"queen, {_name(model)}: P(true place) {np.exp(queens[model]).mean():.3f}; "
                f"gain over uniform {mean_gain:+.3f} ± {half:.3f} nats"
            )
    print(f"{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    run_script(main)
