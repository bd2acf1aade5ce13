"""Train the learned shape model (agents/shape.py) and write agents/shape_weights.py.

Two steps, so the slow one can run in several processes and be resumed:

* ``play``: ``--agent`` in every seat plays ``--hands`` hands of ``--seed`` from ``--first-hand``
  on (one ``HandState`` step per decision); every pass and card is saved to ``--out`` (an
  ``.npz``, rewritten every 20 hands, so a stopped run keeps what it played). A hand replays
  from its seed and index, so the files are small.
* ``fit``: from the saved hands, ``--per-hand`` play decisions of each hand (drawn at random
  after the first card and before the last trick), each seen by the seat to play: its
  features (``shape_features``), the true world's terms (``shape_terms``) and those of
  ``--pool`` worlds of the uniform sampler, with their surprises under ``agents.belief``'s model
  at ``--trust``. The weights maximise the likelihood of the true world among them (a
  conditional logit with the surprises as a fixed offset: the tilt is fitted on top of the
  surprise model ``hard`` uses), L2-penalised (``--l2``), by L-BFGS (scipy). One hand in five is
  held out: printed are the mean log-likelihood of the truth there (nats; the uniform sampler's is
  ``-log(pool + 1)``) under the surprise model alone and with the tilt, and the weights.

    python experiments/train_shape.py play --agent hard --seed 1000 --hands 800 --out runs/shape_a.npz
    python experiments/train_shape.py fit runs/shape_a.npz --pool 100 --dry-run
"""

from __future__ import annotations

import argparse
import io
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from agents.belief import surprises
from agents.dispatch import loop_pass, loop_play
from agents.registry import parse_agent
from agents.shape import FEATURES, N_FEATURES, TERMS, new_shape_features, shape_features, shape_terms
from hearts_sim._numba import njit
from hearts_sim.apps.script import ScriptParser, master_seed, number, out_file, run_script, whole
from hearts_sim.core.errors import InputError, interrupts_deferred
from hearts_sim.core.files import write_atomically
from hearts_sim.core.rules import resolve_rules
from hearts_sim.engine.inference import new_events, play_events
from hearts_sim.engine.sampler import new_sampler_scratch, sample_world_into
from hearts_sim.engine.state import HAND_STATE
from hearts_sim.game.hand_state import HandState

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "agents" / "shape_weights.py"
SAVE_EVERY = 20  # hands between rewrites of the ``play`` output
HELD_OUT_EVERY = 5  # one hand in this many is held out
MAX_PER_HAND = 47  # play decisions after the first card and before the last trick


# ---------------------------------------------------------------- play
def play(args: argparse.Namespace) -> None:
    agent = parse_agent(args.agent)
    rules = resolve_rules("standard")
    hands: list[int] = []
    passes: list[np.ndarray] = []
    history: list[list[int]] = []
    started = time.perf_counter()
    last = args.first_hand + args.hands - 1
    out = str(args.out) if args.out.suffix == ".npz" else f"{args.out}.npz"  # as np.savez names it
    for hand in range(args.first_hand, last + 1):
        state = HandState.deal(rules, seed=args.seed, hand=hand)
        record, array = state.record, state.rules.to_tuple()
        passed = np.zeros(rules.n_players, dtype=np.uint64)
        if state.phase == "pass":
            for s in range(rules.n_players):
                passed[s] = loop_pass(agent.pass_policy, record, array, s)
                state.pass_cards(s, int(passed[s]))
        cards = []
        while (seat := state.current_player) is not None:
            card = loop_play(agent.play_policy, record, array, seat)
            state.play(card)
            cards.append(card)
        hands.append(hand)
        passes.append(passed)
        history.append(cards)
        if len(hands) % SAVE_EVERY == 0 or hand == last:
            with interrupts_deferred():  # a Ctrl-C as it packs comes after the save
                save_hands(Path(out), args, hands, passes, history)
            print(f"{len(hands)} hands, {time.perf_counter() - started:.0f} s", flush=True)


def save_hands(
    out: Path, args: argparse.Namespace, hands: list[int], passes: list[np.ndarray], history: list[list[int]]
) -> None:
    """The recorded hands, packed, then written whole: a full disk keeps the last save."""
    saved = io.BytesIO()
    np.savez(
        saved,
        agent=args.agent,
        seed=args.seed,
        hands=np.array(hands),
        passes=np.array(passes),
        history=np.array(history, dtype=np.int8),
    )
    write_atomically(out, saved.getvalue())


# ---------------------------------------------------------------- fit
@njit
def position_rows(state, rules, seat, rng, terms, surprise_counts):  # type: ignore[no-untyped-def]
    """Row 0: the true world's terms and surprises; rows 1..: the uniform sampler's worlds'."""
    features = new_shape_features()
    shape_features(state, rules, seat, features)
    events = new_events()
    n_events = play_events(state, rules, seat, events)
    shape_terms(state, features, seat, terms[0])
    surprise_counts[0] = surprises(state, rules, seat, events, n_events)
    plan, card_rows = new_sampler_scratch()
    world = np.empty(1, dtype=HAND_STATE)
    for i in range(1, terms.shape[0]):
        rng = sample_world_into(state, rules, seat, rng, world[0], plan, card_rows)
        shape_terms(world[0], features, seat, terms[i])
        surprise_counts[i] = surprises(world[0], rules, seat, events, n_events)
    return rng


class SavedHandsError(InputError):
    """A file given to ``fit`` (or to ``belief_likelihood.py --hands``) that ``play`` did not write."""


def saved_hands(files: list[str]):  # type: ignore[no-untyped-def]
    """(hand index, the hand's state once everyone has passed, its cards in play order) of every
    hand saved by ``play``; ``SavedHandsError`` for a file that is not one of ``play``'s."""
    rules = resolve_rules("standard")
    for name in files:
        not_play = f"{name}: not a file of train_shape.py play"
        try:
            loaded = np.load(name)
            if not isinstance(loaded, np.lib.npyio.NpzFile):  # a .npy: one array
                raise SavedHandsError(f"{not_play} (a single array, not an .npz of arrays)")
            with loaded as saved:
                missing = {"seed", "hands", "passes", "history"} - set(saved.files)
                arrays = {key: saved[key] for key in saved.files if not missing}
        except OSError as error:
            raise SavedHandsError(f"{name}: cannot read it ({error.strerror or error})") from None
        except SavedHandsError:
            raise
        except ValueError:  # numpy's advice on pickles, for a file that is no .npz at all
            raise SavedHandsError(f"{not_play} (not an .npz of arrays)") from None
        except (EOFError, zipfile.BadZipFile, zlib.error) as error:  # empty, cut short, damaged
            raise SavedHandsError(f"{not_play} (not a whole .npz of arrays: {error})") from None
        if missing:
            absent = ", ".join(sorted(missing))
            raise SavedHandsError(f"{name}: not a file of train_shape.py play (no {absent})")
        for hand, passed, cards in zip(arrays["hands"], arrays["passes"], arrays["history"], strict=True):
            state = HandState.deal(rules, seed=int(arrays["seed"]), hand=int(hand))
            if state.phase == "pass":
                for s in range(rules.n_players):
                    state.pass_cards(s, int(passed[s]))
            yield int(hand), state, cards


def training_rows(files: list[str], per_hand: int, pool: int, seed: int):  # type: ignore[no-untyped-def]
    """(terms, surprises, held-out mask) of every drawn position of the saved hands."""
    chooser = np.random.default_rng(seed)
    rng = np.uint64(seed)
    terms, counts, held = [], [], []
    for hand, state, cards in saved_hands(files):
        record, array = state.record, state.rules.to_tuple()
        last_trick = len(cards) - state.n_players
        picks = set(chooser.choice(np.arange(1, last_trick), size=per_hand, replace=False).tolist())
        for i, card in enumerate(cards):
            if i in picks:
                row = np.zeros((pool + 1, TERMS))
                count = np.zeros(pool + 1)
                rng = position_rows(record, array, state.current_player, rng, row, count)
                terms.append(row.astype(np.float32))
                counts.append(count.astype(np.float32))
                held.append(hand % HELD_OUT_EVERY == 0)
            state.play(int(card))
    return np.array(terms, dtype=np.float64), np.array(counts, dtype=np.float64), np.array(held)


def truth_log_likelihood(weights, terms, counts, offset: float) -> float:  # type: ignore[no-untyped-def]
    """Mean log-probability of the true world (row 0) among each position's rows."""
    z = terms @ weights + offset * counts
    return float(np.mean(z[:, 0] - logsumexp(z, axis=1)))


def fit_weights(terms, counts, offset: float, l2: float):  # type: ignore[no-untyped-def]
    """The weights maximising the truth's mean log-likelihood, minus ``l2 / 2 |w|^2`` per position."""

    def loss(weights):  # type: ignore[no-untyped-def]
        z = terms @ weights + offset * counts
        p = softmax(z, axis=1)
        value = np.mean(logsumexp(z, axis=1) - z[:, 0]) + 0.5 * l2 * weights @ weights
        gradient = np.mean(np.einsum("pm,pmk->pk", p, terms) - terms[:, 0], axis=0) + l2 * weights
        return value, gradient

    result = minimize(loss, np.zeros(TERMS), jac=True, method="L-BFGS-B", options={"maxiter": 1000})
    return result.x, result


def fit(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    terms, counts, held = training_rows(args.files, args.per_hand, args.pool, args.seed)
    if held.all() or not held.any():  # it fitted to nothing, or scored on nothing, and wrote the weights
        raise SavedHandsError(
            f"{', '.join(args.files)}: need hands both held out and not "
            f"(one in {HELD_OUT_EVERY}): give more hands"
        )
    print(
        f"{len(terms):,} positions ({held.sum():,} held out), {args.pool} uniform worlds each, "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    offset = float(np.log(1.0 - args.trust))
    weights, result = fit_weights(terms[~held], counts[~held], offset, args.l2)
    zero = np.zeros(TERMS)
    uniform = -np.log(args.pool + 1)
    surprise_only = truth_log_likelihood(zero, terms[held], counts[held], offset)
    tilted = truth_log_likelihood(weights, terms[held], counts[held], offset)
    print(
        f"held out: log P(true world) uniform {uniform:.4f}, surprises (trust {args.trust}) "
        f"{surprise_only:.4f}, with the tilt {tilted:.4f} ({result.message})"
    )
    for i, name in enumerate(FEATURES):
        print(f"  {name:<16} length {weights[i]:+.4f}  void {weights[N_FEATURES + i]:+.4f}")
    if args.dry_run:
        return
    lines = "".join(
        f"    {w:+.6f},  # {FEATURES[i % N_FEATURES]}{'' if i < N_FEATURES else ' (void)'}\n"
        for i, w in enumerate(weights)
    )
    source = (
        '"""Weights of the learned shape model (agents/shape.py): ``FEATURES`` times the length, then\n'
        "times being void.\n\n"
        f"Written by ``python experiments/train_shape.py fit {' '.join(args.files)} --per-hand "
        f"{args.per_hand}\n--pool {args.pool} --trust {args.trust} --l2 {args.l2} --seed {args.seed}``: "
        f"{len(terms):,} positions;\nheld-out log P(true world) {tilted:.4f} against {surprise_only:.4f} "
        f"with the surprises alone\n(uniform: {uniform:.4f}).\n"
        '"""\n\n'
        f"WEIGHTS: tuple[float, ...] = (\n{lines})\n"
    )
    write_atomically(WEIGHTS_FILE, source.encode())  # a failed write keeps the module importable
    print(f"wrote {WEIGHTS_FILE}")


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    playing = steps.add_parser("play", help="self-play hands, saved for fit")
    playing.add_argument("--agent", default="hard")
    playing.add_argument("--seed", type=master_seed(), default=1000)
    playing.add_argument("--first-hand", type=whole("--first-hand", 0, 2**40), default=0)
    playing.add_argument("--hands", type=whole("--hands", 1, 10_000_000), default=100)
    playing.add_argument("--out", type=out_file("--out"), required=True)
    fitting = steps.add_parser("fit", help="fit the weights to saved hands")
    fitting.add_argument("files", nargs="+")
    fitting.add_argument(
        "--per-hand",
        type=whole("--per-hand", 1, MAX_PER_HAND),
        default=12,
        help="positions drawn from each hand",
    )
    fitting.add_argument(
        "--pool", type=whole("--pool", 1, 1_000_000), default=100, help="uniform worlds beside the truth"
    )
    fitting.add_argument(
        "--trust",
        type=number("--trust", 0, 1, open_high=True),
        default=0.449,
        help="the surprise model's, as hard's",
    )
    fitting.add_argument("--l2", type=number("--l2", 0), default=1e-4, help="penalty on the squared weights")
    fitting.add_argument("--seed", type=master_seed(), default=0)
    fitting.add_argument("--dry-run", action="store_true", help="fit and report; do not write the weights")
    args = parser.parse_args(argv)
    (play if args.step == "play" else fit)(args)


if __name__ == "__main__":
    run_script(main)
