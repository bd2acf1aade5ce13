"""Train the ``net`` agent's policy on the batched ``VectorEnv`` and write its weights.

Two methods. ``--method dagger`` (the default) imitates: the learner plays its seat against the
``--opponents`` (``easy`` by default) on the vector env, and at every position it reaches, the
env also reports what the ``--teacher`` (``normal``) would pick there
(``info["teacher_action"]``); the network learns to pick the same (cross-entropy over the legal
cards). Early on the teacher's pick is played with probability ``beta`` (falling linearly to 0
over ``--guided`` of the decisions), so the learner first sees good positions, then its own.
Imitation learns a strong player in minutes on one core, where reward-only learning from
scratch needs far more hands.

``--method pg`` learns from the rewards alone, on top of imitation (``--init``): the learner
samples its cards from the network's softmax at groups of ``--group`` tables dealt the same
hands (``VectorEnv.reset(group=K)``); a hand's advantage is how much better it scored than the
group's other hands (card luck cancels, as in duplicate play), shared by every decision of the
hand, and the network takes PPO's clipped policy-gradient step once ``--batch`` decisions of
finished hands are in.

    python experiments/train_policy.py --out mine.npz       # imitate normal (the shipped ones: README)
    python experiments/train_policy.py --decisions 3000 --envs 16 --hidden 16 16 --out /tmp/p.npz   # smoke
    python experiments/train_policy.py --init /tmp/p.npz --guided 0 --lr 3e-4 --out /tmp/q.npz      # train on
    python experiments/train_policy.py --method pg --init /tmp/p.npz --opponents normal --out /tmp/r.npz

``--backend torch`` (the ``learn`` extra) or ``numpy`` (no extra dependency, the same network and
Adam in plain numpy); ``auto`` takes torch when it is installed. A file written into
``agents/weights/``, or into a folder named by ``$HEARTS_SIM_WEIGHTS``, plays as
``net(weights=NAME)`` (its stem) in the next process.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import shlex
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from agents.net import (
    FREEZE_LIMIT,
    LAYERS,
    SHIPPED_NAMES,
    TOO_LARGE,
    WEIGHTS_DIR,
    WeightsError,
    load_weights,
    network_policy,
)
from agents.registry import parse_agent
from hearts_sim.apps.script import ScriptParser, master_seed, out_file, run_script
from hearts_sim.core.cards import N_CARDS
from hearts_sim.core.errors import MissingExtra, interrupts_deferred, signal_exit_code, signals_unwrapped
from hearts_sim.core.files import shell_path, write_atomically
from hearts_sim.core.rules import resolve_rules
from hearts_sim.engine.encoding import OBS_SIZE
from hearts_sim.env import PolicyAgent, VectorEnv
from hearts_sim.env.vector import MAX_ENVS, LearnerTable
from hearts_sim.selfplay.simulate import set_threads
from hearts_sim.studies.tournament import Interrupted, make_config, run_tournament

NEG = -1e9  # added to the logits of the cards that may not be picked

METHODS = {"dagger": "DAgger", "pg": "policy gradient (PPO's clipped objective, group baseline)"}
# each method's own options and their defaults (kept in the weights' meta)
METHOD_OPTIONS: dict[str, dict[str, Any]] = {
    "dagger": {"teacher": "normal", "guided": 0.1},
    "pg": {"group": 8, "batch": 16384, "minibatch": 4096, "epochs": 2, "clip": 0.2},
}
LEARNING_RATES = {"dagger": 1e-3, "pg": 1e-4}


class Diverged(Exception):
    """Training blew up: a loss or a weight not finite, or too large for the file's float16."""


def finite_in_file(weights: list[np.ndarray]) -> bool:
    """Whether ``weights`` stay finite as the file holds them (float16: at most 65,504)."""
    with np.errstate(over="ignore"):
        return all(np.isfinite(w.astype(np.float16)).all() for w in weights)


class NumpyPolicy:
    """The net agent's network (two ReLU layers, 52 logits) with Adam, in plain numpy."""

    def __init__(self, sizes: list[int], lr: float, seed: int, init: list[np.ndarray] | None = None):
        rng = np.random.default_rng(seed)
        self.params: list[np.ndarray] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            self.params += [
                (rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(np.float32),
                np.zeros(fan_out, np.float32),
            ]
        if init is not None:  # the same shapes (``sizes`` are its widths), its values
            self.params = [np.array(array, dtype=np.float32) for array in init]
        self.lr, self.step_count = lr, 0
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The network's logits for a batch of observations (no mask)."""
        w1, b1, w2, b2, w3, b3 = self.params
        return np.maximum(np.maximum(x @ w1 + b1, 0.0) @ w2 + b2, 0.0) @ w3 + b3

    def train_step(
        self, x: np.ndarray, mask: np.ndarray, target: np.ndarray, weight: np.ndarray | None = None
    ) -> tuple[np.ndarray, float]:
        """One Adam step on the cross-entropy of the masked logits, each row's term times its
        ``weight`` when given (a policy gradient's advantage); returns (logits before, loss)."""
        logits, loss, grads = self.gradients(x, mask, target, weight)
        self.step_count += 1
        t = self.step_count
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= self.lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        return logits, loss

    def gradients(
        self, x: np.ndarray, mask: np.ndarray, target: np.ndarray, weight: np.ndarray | None = None
    ) -> tuple[np.ndarray, float, list[np.ndarray]]:
        """The masked logits, the mean cross-entropy and the gradient of the mean of the rows'
        cross-entropies (times their ``weight``) in every parameter, by backpropagation."""
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = np.maximum(x @ w1 + b1, 0.0)
        h2 = np.maximum(h1 @ w2 + b2, 0.0)
        logits = h2 @ w3 + b3 + (1 - mask) * NEG
        shifted = logits - logits.max(axis=1, keepdims=True)
        probabilities = np.exp(shifted)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
        rows = np.arange(len(target))
        loss = float(-np.log(probabilities[rows, target] + 1e-12).mean())
        d3 = probabilities
        d3[rows, target] -= 1.0
        if weight is not None:
            d3 *= weight[:, None]
        d3 /= len(target)
        d2 = (d3 @ w3.T) * (h2 > 0)
        d1 = (d2 @ w2.T) * (h1 > 0)
        return logits, loss, [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]

    def weights(self) -> list[np.ndarray]:
        return [p.copy() for p in self.params]


class TorchPolicy:
    """The same network and loss in torch (one CPU thread: the env has the other core)."""

    def __init__(self, sizes: list[int], lr: float, seed: int, init: list[np.ndarray] | None = None):
        import torch

        self.torch = torch
        torch.manual_seed(seed)
        torch.set_num_threads(1)
        layers: list[Any] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            layers += [torch.nn.Linear(fan_in, fan_out), torch.nn.ReLU()]
        self.model = torch.nn.Sequential(*layers[:-1])
        if init is not None:  # (inputs, outputs) arrays into Linear's (outputs, inputs) weights
            with torch.no_grad():
                linears = [layer for layer in self.model if isinstance(layer, torch.nn.Linear)]
                for linear, w, b in zip(linears, init[0::2], init[1::2], strict=True):
                    linear.weight.copy_(torch.from_numpy(np.array(w.T, dtype=np.float32)))
                    linear.bias.copy_(torch.from_numpy(np.array(b, dtype=np.float32)))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

    def logits(self, x: np.ndarray) -> np.ndarray:
        with self.torch.no_grad():
            return self.model(self.torch.from_numpy(x)).numpy()

    def train_step(
        self, x: np.ndarray, mask: np.ndarray, target: np.ndarray, weight: np.ndarray | None = None
    ) -> tuple[np.ndarray, float]:
        torch = self.torch
        logits = self.model(torch.from_numpy(x)) + torch.from_numpy((1 - mask).astype(np.float32)) * NEG
        terms = torch.nn.functional.cross_entropy(logits, torch.from_numpy(target), reduction="none")
        loss = terms.mean()
        objective = loss if weight is None else (terms * torch.from_numpy(weight.astype(np.float32))).mean()
        self.optimizer.zero_grad()
        objective.backward()
        self.optimizer.step()
        return logits.detach().numpy(), float(loss.detach())

    def weights(self) -> list[np.ndarray]:
        out = []
        for layer in self.model:
            if isinstance(layer, self.torch.nn.Linear):
                out += [layer.weight.detach().numpy().T.copy(), layer.bias.detach().numpy().copy()]
        return out


def make_policy(
    backend: str, sizes: list[int], lr: float, seed: int, init: list[np.ndarray] | None = None
) -> tuple[str, Any]:
    """The network to train (its weights from ``init`` when given) on ``backend``."""
    if backend in ("auto", "torch"):
        try:
            return "torch", TorchPolicy(sizes, lr, seed, init)
        except ImportError:
            if backend == "torch":
                raise MissingExtra("--backend torch", "torch", "learn") from None
    return "numpy", NumpyPolicy(sizes, lr, seed, init)


class Run:
    """What both methods share: the learner's tables, the network, the progress lines at equal
    windows of the run and a checkpoint at each (the run can be stopped any time)."""

    def __init__(self, args: argparse.Namespace, checkpoint: Any, **env_options: Any):
        set_threads(1)
        # one BLAS thread, as torch gets one: the env has the other core, and the numpy
        # backend's sums then come out the same on any machine (a thread count sums in its order)
        threadpool_limits(1, user_api="blas")
        self.args, self.checkpoint = args, checkpoint
        opponents = args.opponents[0] if len(args.opponents) == 1 else args.opponents
        self.env = VectorEnv(args.envs, opponents, args.rules, copy=False, **env_options)
        sizes = [self.env.observation_size, *args.hidden, self.env.n_actions]
        self.backend, self.policy = make_policy(args.backend, sizes, args.lr, args.seed, args.init_weights)
        self.rng = np.random.default_rng(args.seed)
        self.steps = max(1, args.decisions // args.envs)
        self.report_at = {round(self.steps * k / args.reports) for k in range(1, args.reports + 1)}
        self.window: dict[str, list[float]] = defaultdict(list)
        self.start = 0.0
        self.result: dict[str, Any] = {}

    def reset(self, **options: Any) -> tuple[np.ndarray, np.ndarray]:
        """The tables' first positions (``VectorEnv.reset(seed, **options)``); the clock starts
        after it, which compiles the env's kernels in a new process."""
        first = self.env.reset(self.args.seed, **options)
        self.start = time.perf_counter()
        return first

    def check(self, step: int, sound: bool) -> None:
        """``Diverged`` unless ``sound`` (the loss and the network's outputs finite, its picks
        legal): past that point the network picks no legal card, and its weights play none."""
        if not sound:
            raise Diverged(f"after {step * self.args.envs:,} decisions")

    def end_step(self, step: int, line: Callable[[dict[str, float | None]], str]) -> None:
        """At the end of a window: print ``line(the means of the window's figures)`` (None for a
        figure with no values), checkpoint the weights with them, and open a new window."""
        if step + 1 not in self.report_at:
            return
        weights = self.policy.weights()
        if not finite_in_file(weights):
            raise Diverged(f"after {(step + 1) * self.args.envs:,} decisions (weights past float16's range)")
        means = {key: (float(np.mean(v)) if v else None) for key, v in self.window.items()}
        self.window.clear()
        seconds = time.perf_counter() - self.start
        print(f"{(step + 1) * self.args.envs:>11,} decisions {seconds:7.1f} s  {line(means)}", flush=True)
        self.result = {
            "weights": weights,
            "backend": self.backend,
            "seconds": round(seconds, 1),
            "decisions": (step + 1) * self.args.envs,
            **{f"final_{key}": value for key, value in means.items()},
        }
        if self.checkpoint is not None:
            self.checkpoint(self.result)


def own_score(score: float | None) -> str:
    return f"{score:6.2f}" if score is not None else "     -"


def dagger_line(m: dict[str, float | None], teacher: str, beta: float) -> str:
    return (
        f"loss {m['loss']:.3f}  agrees with {teacher} {m['agreement']:.3f}  "
        f"own-play score/hand {own_score(m['score_per_hand'])}  beta {beta:.2f}"
    )


def pg_line(m: dict[str, float | None]) -> str:
    return (
        f"sampled-play score/hand {own_score(m.get('score_per_hand'))}  clipped {m.get('clipped') or 0.0:.3f}"
    )


def train_dagger(args: argparse.Namespace, checkpoint: Any = None) -> dict[str, Any]:
    """Run DAgger for ``args.decisions`` learner decisions; returns the figures and the weights.
    ``checkpoint(result)`` is called at every progress line."""
    run = Run(args, checkpoint, teacher=args.teacher)
    env, policy, window = run.env, run.policy, run.window
    obs, mask = run.reset()
    info = {"teacher_action": env.teacher_actions}
    guided_steps = max(1, int(run.steps * args.guided))
    for step in range(run.steps):
        target = info["teacher_action"].copy()
        logits, loss = policy.train_step(obs, mask.astype(np.float32), target)
        own = logits.argmax(axis=1)
        # logits past the mask's reach (NEG) pick a card that is not legal: the run has diverged
        run.check(step, math.isfinite(loss) and bool(mask[np.arange(args.envs), own].all()))
        beta = max(0.0, 1.0 - step / guided_steps)
        actions = np.where(run.rng.random(args.envs) < beta, target, own)
        window["loss"].append(loss)
        window["agreement"].append(float((own == target).mean()))
        obs, mask, _, terminated, _, info = env.step(actions)
        window["score_per_hand"].extend(info["score"][terminated].tolist() if beta == 0.0 else [])
        run.end_step(step, partial(dagger_line, teacher=args.teacher, beta=beta))
    return run.result


def masked_probabilities(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The softmax of each row's logits over its allowed cards (0 elsewhere)."""
    z = np.where(mask == 1, logits, -np.inf)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def sample_cards(probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One card per row, drawn from the row's probabilities (a point in (0, total] of the
    cumulative sums lands on a card of positive probability)."""
    cumulative = probabilities.cumsum(axis=1)
    point = (1.0 - rng.random(len(probabilities)))[:, None] * cumulative[:, -1:]
    return (cumulative < point).sum(axis=1)


def group_advantages(groups: np.ndarray, scores: np.ndarray, baseline: float) -> np.ndarray:
    """How much better each hand scored than the other hands of its group (the same deal, played
    at the group's other tables): their mean score less its own. A hand alone in its group is
    measured against ``baseline``."""
    sums = np.bincount(groups, weights=scores)[groups]
    counts = np.bincount(groups)[groups]
    others = np.where(counts > 1, (sums - scores) / np.maximum(counts - 1, 1), baseline)
    return others - scores


class GroupHands:
    """The learner's decisions at ``n_envs`` tables in groups of ``group`` (``VectorEnv.reset(
    group=K)``), each kept until its hand ends, then handed out with the hand's advantage against
    its group (``group_advantages``).

    Each step: ``add`` the positions, masks, cards played and their probabilities before
    ``env.step``, then ``end_step`` with its ``terminated`` and ``info["score"]``; ``take`` the
    finished hands' decisions once ``size`` is enough."""

    def __init__(self, n_envs: int, group: int):
        self.group, self.step = group, 0
        self.history: dict[int, tuple[np.ndarray, ...]] = {}  # each step's rows, until its hands end
        self.hand_start = np.zeros(n_envs, dtype=np.int64)  # the step of each table's hand's first decision
        self.finished: list[tuple[np.ndarray, ...]] = []
        self.mean_score = 0.0  # the baseline of a hand alone in its group (an average of recent hands)

    def add(self, obs: np.ndarray, mask: np.ndarray, cards: np.ndarray, probability: np.ndarray) -> None:
        self.history[self.step] = (obs.copy(), mask.copy(), cards, probability)

    def end_step(self, terminated: np.ndarray, score: np.ndarray) -> np.ndarray:
        """Close the step: the hands that ended give their decisions their advantage. Returns
        those hands' scores."""
        step, self.step = self.step, self.step + 1
        ended = np.flatnonzero(terminated)
        scores = score[ended].astype(np.float64)
        if not len(ended):
            return scores
        advantage = np.zeros(len(self.hand_start))
        advantage[ended] = group_advantages(ended // self.group, scores, self.mean_score)
        self.mean_score += 0.01 * (scores.mean() - self.mean_score)
        for past in range(self.hand_start[ended].min(), step + 1):  # the ended hands' decisions
            tables = ended[self.hand_start[ended] <= past]
            self.finished.append((*(part[tables] for part in self.history[past]), advantage[tables]))
        self.hand_start[ended] = step + 1
        for old in [s for s in self.history if s < self.hand_start.min()]:
            del self.history[old]
        return scores

    @property
    def size(self) -> int:
        """Decisions of finished hands not taken yet."""
        return sum(len(rows[2]) for rows in self.finished)

    def take(self) -> tuple[np.ndarray, ...]:
        """(observations, masks, cards, their probabilities when played, advantages) of every
        finished hand's decisions since the last ``take``."""
        columns = zip(*self.finished, strict=True)
        self.finished = []
        return tuple(np.concatenate(column) for column in columns)


def ppo_update(
    policy: Any,
    rows: tuple[np.ndarray, ...],
    rng: np.random.Generator,
    *,
    epochs: int = 2,
    minibatch: int = 4096,
    clip: float = 0.2,
) -> float:
    """PPO's clipped policy gradient over ``GroupHands.take()``'s rows, in minibatches: each
    row's cross-entropy weighted by its advantage times the probability ratio of the card played
    (the policy now over the one that played it), and by 0 where the ratio has moved past the
    clip in the advantage's direction (``ppo_weights``). Returns the share of rows clipped."""
    x, mask, cards, played_probability, advantage = rows
    advantage = advantage / (advantage.std() + 1e-8)
    clipped_rows = 0
    for _ in range(epochs):
        for chunk in np.array_split(rng.permutation(len(cards)), max(1, len(cards) // minibatch)):
            probability = masked_probabilities(policy.logits(x[chunk]), mask[chunk])
            ratio = probability[np.arange(len(chunk)), cards[chunk]] / played_probability[chunk]
            weight, clipped = ppo_weights(ratio, advantage[chunk], clip)
            clipped_rows += int(clipped.sum())
            policy.train_step(x[chunk], mask[chunk].astype(np.float32), cards[chunk], weight)
    return clipped_rows / (epochs * len(cards))


def ppo_weights(ratio: np.ndarray, advantage: np.ndarray, clip: float) -> tuple[np.ndarray, np.ndarray]:
    """The weights of the rows' cross-entropies whose mean has the gradient of PPO's clipped
    surrogate loss, ``-mean(min(ratio * A, clip(ratio, 1 - clip, 1 + clip) * A))``: the gradient
    of ``-ratio * A`` is ``ratio * A`` times the cross-entropy's (both are ``-log p`` of the card
    played, scaled), and a row whose ratio is past the clip in its advantage's direction (returned
    as ``clipped``) adds none."""
    clipped = ((advantage > 0) & (ratio > 1 + clip)) | ((advantage < 0) & (ratio < 1 - clip))
    return np.where(clipped, 0.0, advantage * ratio).astype(np.float32), clipped


def train_pg(args: argparse.Namespace, checkpoint: Any = None) -> dict[str, Any]:
    """Policy gradient from the env's rewards for ``args.decisions`` learner decisions: the
    learner samples its cards from the network's softmax at ``--group`` tables dealt the same
    hands (``VectorEnv.reset(group=K)``), each hand's advantage is its score against the mean of
    its group's other hands (the card luck cancels, as in duplicate play), and every decision of
    the hand shares it. Updates by PPO's clipped objective once ``--batch`` decisions of finished
    hands are in. ``checkpoint(result)`` is called at every progress line."""
    run = Run(args, checkpoint)
    env, policy, n = run.env, run.policy, args.envs
    obs, mask = run.reset(group=args.group)
    hands = GroupHands(n, args.group)
    updates = 0
    for step in range(run.steps):
        probabilities = masked_probabilities(policy.logits(obs), mask)
        run.check(step, bool(np.isfinite(probabilities).all()))
        cards = sample_cards(probabilities, run.rng)
        hands.add(obs, mask, cards, probabilities[np.arange(n), cards])
        obs, mask, _, terminated, _, info = env.step(cards)
        run.window["score_per_hand"].extend(hands.end_step(terminated, info["score"]).tolist())
        if hands.size >= args.batch:
            options = {"epochs": args.epochs, "minibatch": args.minibatch, "clip": args.clip}
            run.window["clipped"].append(ppo_update(policy, hands.take(), run.rng, **options))
            updates += 1
        run.end_step(step, pg_line)
    if not updates:  # the weights written are the ones it began with
        print(
            f"warning: no update made: fewer than --batch {args.batch:,} decisions of finished hands "
            f"in the {run.steps * n:,} decisions (make --decisions several times --batch)",
            file=sys.stderr,
        )
    return {**run.result, "updates": updates}


def evaluate(weights: list[np.ndarray], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The trained network against each of the ``--opponents`` in turn, in a duplicate match of
    ``--eval-deals`` deals (every deal in the seatings that mix the two), played in this process
    as a ``PolicyAgent`` exactly as the weights file plays as ``net``: its float16 weights,
    ``net``'s own kernel for the logits, the legal card with the highest."""
    agent = PolicyAgent(network_policy([np.asarray(w, dtype=np.float16) for w in weights]), name="trained")
    found = []
    for opponent in dict.fromkeys(args.opponents):  # each once, in the order given
        config = make_config([agent, opponent], rules=args.rules, deals=args.eval_deals, seed=args.seed)
        pair = run_tournament(config).pairs().iloc[0]  # a bar on a terminal, as hearts-sim match
        low, high = round(float(pair["low"]), 4), round(float(pair["high"]), 4)
        minus = round(float(pair["a_minus_b"]), 4)
        print(
            f"against {opponent} in duplicate ({args.eval_deals} deals): "
            f"{minus:+.3f} points per hand [{low:+.3f}, {high:+.3f}] (negative: better)",
            flush=True,
        )
        found.append(
            {
                "opponent": opponent,
                "deals": args.eval_deals,
                "seed": args.seed,
                "minus_opponent": minus,
                "ci95": [low, high],
            }
        )
    return found


def save_command(args: argparse.Namespace) -> str:
    """The command line that made a weights file (its meta's ``command``)."""
    return "python experiments/train_policy.py " + " ".join(shlex.quote(a) for a in args.argv)


def save(path: Path, result: dict[str, Any], args: argparse.Namespace, finished: bool = True) -> None:
    """The weights (float16: half the size, no measurable change in play) and how they were made
    (``finished``: whether the run's decisions were all made; False for a checkpoint)."""
    meta = {
        "command": save_command(args),
        "method": METHODS[args.method],
        **{key: getattr(args, key) for key in ("opponents", "rules", "envs", "hidden", "lr", "seed")},
        **{key: getattr(args, key) for key in METHOD_OPTIONS[args.method]},
        **{key: value for key, value in result.items() if key != "weights"},
        "finished": finished,
    }
    if args.init is not None:  # the weights it started from (their own meta says how they were made)
        meta["init"] = {"file": str(args.init), "sha256": args.init_sha256}
    arrays = {name: w.astype(np.float16) for name, w in zip(LAYERS, result["weights"], strict=True)}
    packed = io.BytesIO()
    np.savez_compressed(packed, **arrays, meta=np.array(json.dumps(meta)))
    write_atomically(path, packed.getvalue())  # a process loading the weights never sees half a file


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--method",
        choices=tuple(METHODS),
        default="dagger",
        help="dagger: imitate --teacher; pg: policy gradient from the rewards (PPO, group baseline)",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=["easy"],
        metavar="SPEC",
        help="agent spec for every other seat, or one per other seat in seat order (default easy)",
    )
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--envs", type=int, default=256, help="tables stepped together (the batch)")
    parser.add_argument("--decisions", type=int, default=20_000_000, help="learner decisions in all")
    dagger = parser.add_argument_group("dagger")
    dagger.add_argument("--teacher", help="agent spec imitated (default normal)")
    dagger.add_argument(
        "--guided", type=float, help="share of the run over which beta falls to 0 (default 0.1)"
    )
    pg = parser.add_argument_group("pg")
    pg.add_argument("--group", type=int, help="tables dealt the same hands (default 8; --envs a multiple)")
    pg.add_argument("--batch", type=int, help="decisions of finished hands per update (default 16384)")
    pg.add_argument("--minibatch", type=int, help="decisions per Adam step (default 4096)")
    pg.add_argument("--epochs", type=int, help="passes over each batch (default 2)")
    pg.add_argument("--clip", type=float, help="PPO's clip of the probability ratio (default 0.2)")
    parser.add_argument(
        "--hidden",
        type=int,
        nargs=2,
        help="hidden layer widths (default 256 128; a first one of at most 319 lets the loops that "
        "play it be cached)",
    )
    parser.add_argument(
        "--init",
        type=Path,
        help="start from this weights file (its widths) instead of random weights: train on, or fine-tune",
    )
    parser.add_argument("--lr", type=float, help="Adam's step size (default 1e-3 for dagger, 1e-4 for pg)")
    parser.add_argument("--backend", choices=("auto", "torch", "numpy"), default="auto")
    parser.add_argument("--seed", type=master_seed(), default=0)
    parser.add_argument("--reports", type=int, default=20, help="progress lines")
    parser.add_argument(
        "--eval-deals",
        type=int,
        default=0,
        help="then play the trained network against --opponents in duplicate over this many deals (0: no)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the .npz to write")
    args = parser.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else argv
    for method, options in METHOD_OPTIONS.items():
        given = [name for name in options if getattr(args, name) is not None]
        if method != args.method and given:
            parser.error(f"--{given[0]} is an option of --method {method}, not {args.method}")
        for name, default in options.items():
            setattr(args, name, default if getattr(args, name) is None else getattr(args, name))
    args.lr = LEARNING_RATES[args.method] if args.lr is None else args.lr
    for name in ("envs", "decisions", "reports", "group", "batch", "minibatch", "epochs"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive")
    if not 0 <= args.guided <= 1:  # NaN too
        parser.error(f"--guided {args.guided} is not valid: a share of the run, 0 to 1")
    if args.method == "pg":
        if args.envs % args.group:
            parser.error(f"--envs {args.envs} is not a multiple of --group {args.group}")
        if not 0 < args.clip < math.inf:
            parser.error(f"--clip {args.clip} is not valid: a positive bound on the ratio's change")
    if args.envs > MAX_ENVS:
        parser.error(f"--envs {args.envs:,} is too many: at most {MAX_ENVS:,} tables")
    if args.method == "pg" and args.decisions < args.batch:
        parser.error(
            f"--decisions {args.decisions:,} is fewer than --batch {args.batch:,}: no update would be made "
            "(make --decisions several times --batch)"
        )
    if args.eval_deals < 0:
        parser.error("--eval-deals must be 0 or more")
    args.init_weights = None
    if args.init is not None:
        try:
            args.init_weights = list(load_weights(args.init))
            # read now: the file may be moved, or overwritten by this run's own checkpoints (--out)
            args.init_sha256 = hashlib.sha256(args.init.read_bytes()).hexdigest()
        except WeightsError as error:
            parser.error(f"--init {error}")
        widths = [w.shape[1] for w in args.init_weights[0:3:2]]
        if args.hidden is not None and args.hidden != widths:
            given, held = " ".join(map(str, args.hidden)), " ".join(map(str, widths))
            parser.error(f"--hidden {given}: --init {args.init} has widths {held}")
        args.hidden = widths
    args.hidden = args.hidden or [256, 128]
    if min(args.hidden) <= 0:
        parser.error("--hidden widths must be positive")
    if not 0 < args.lr < math.inf:  # NaN too
        parser.error(f"--lr {args.lr} is not valid: a positive learning rate")
    try:  # a bad spec or preset, or an agent the env cannot seat, is one line, not a traceback
        rules = resolve_rules(args.rules)
        for spec in args.opponents:
            parse_agent(spec)
        if len(args.opponents) not in (1, rules.n_players - 1):
            parser.error(
                f"--opponents: {len(args.opponents)} specs for the {rules.n_players - 1} other seats: "
                "name one for all, or one per seat"
            )
        opponents = args.opponents[0] if len(args.opponents) == 1 else args.opponents
        LearnerTable(opponents, rules, 0, "hand", args.teacher if args.method == "dagger" else None)
    except ValueError as error:
        parser.error(str(error))
    if args.out.suffix != ".npz":
        parser.error("--out must name a .npz file")
    # refuse an unwritable path now, not after the training (its folder made, as a run's is)
    args.out = out_file("--out", make_folder=True)(str(args.out))  # ~ expanded, as written to

    saved: list[int] = []  # the decisions of each checkpoint written

    def checkpoint(partial: dict[str, Any]) -> None:  # a full disk costs this checkpoint, not the run
        try:
            with interrupts_deferred():  # a Ctrl-C as it packs comes after the file is written and counted
                save(args.out, partial, args, finished=False)
                saved.append(partial["decisions"])
        except OSError as error:
            print(f"warning: checkpoint not saved to {args.out}: {error.strerror or error}", file=sys.stderr)

    for warning in playing_warnings(args):
        print(f"warning: {warning}", file=sys.stderr)
    trainer = train_dagger if args.method == "dagger" else train_pg
    try:
        # a run that diverges is told in one line; a Ctrl-C that numba wrapped is one too
        with np.errstate(over="ignore", invalid="ignore"), signals_unwrapped():
            result = trainer(args, checkpoint=checkpoint)
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (Terminated, from run_script's handler)
        note = stopped_note(args, saved[-1] if saved else None)
        parser.exit(signal_exit_code(stop), f"{parser.prog}: stopped: {note}\n")
    except Diverged as error:  # only finite checkpoints were written: the last one is kept
        note = stopped_note(args, saved[-1] if saved else None)
        parser.exit(1, f"{parser.prog}: error: training diverged {error}; lower --lr ({args.lr:g}); {note}\n")

    def write(result: dict[str, Any]) -> None:
        try:
            with interrupts_deferred():  # a Ctrl-C as it packs comes after the file is written
                save(args.out, result, args)
        except OSError as error:
            parser.exit(1, f"{parser.prog}: error: cannot write {args.out}: {error.strerror or error}\n")

    if args.eval_deals:
        write(result)  # the trained weights are kept whatever becomes of the evaluation
        try:
            with signals_unwrapped():
                result["evaluation"] = evaluate(result["weights"], args)
        except (KeyboardInterrupt, Interrupted) as stop:
            parser.exit(
                signal_exit_code(stop),
                f"{parser.prog}: stopped in the evaluation: {args.out} holds the trained weights\n",
            )
    write(result)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes; {result['backend']}, {result['seconds']} s)")


def playing_warnings(args: argparse.Namespace) -> list[str]:
    """What will be slow or out of reach when the written file is played as ``net``."""
    found = []
    sizes = [OBS_SIZE, *args.hidden, N_CARDS]
    largest = max(4 * fan_in * fan_out for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True))
    if largest > FREEZE_LIMIT:
        found.append(
            f"--hidden {' '.join(map(str, args.hidden))}: {TOO_LARGE}: with this file in a weights "
            "folder, every process that seats net compiles its loops afresh"
        )
    if args.out.stem in SHIPPED_NAMES and args.out.resolve().parent != WEIGHTS_DIR:
        found.append(
            f"--out {args.out}: net(weights={args.out.stem}) is the shipped file of that name; "
            "this one will be left out of net's choices (name it otherwise to play it)"
        )
    return found


def stopped_note(args: argparse.Namespace, saved: int | None) -> str:
    """Where a run stopped by Ctrl-C leaves its weights: the last checkpoint written (after
    ``saved`` decisions, None: none), and how to train on from it."""
    if saved is None:
        return f"no weights written (none before its first progress line; {args.out} is as it was)"
    init = shell_path(args.out)
    again = f"--method pg --init {init}" if args.method == "pg" else f"--init {init} --guided 0"
    return (
        f"{args.out} holds the weights after {saved:,} of the {args.decisions:,} decisions "
        f"(its last progress line); train on from them with {again}"
    )


if __name__ == "__main__":
    run_script(main)
