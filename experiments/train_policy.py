"""Train the ``net`` agent's policy on the batched ``VectorEnv`` and write its weights.

The method is DAgger: the learner plays its seat against the ``--opponents`` (``easy`` by
default) on the vector env, and at every position it reaches, the env also reports what the
``--teacher`` (``normal``) would pick there (``info["teacher_action"]``); the network learns to
pick the same (cross-entropy over the legal cards). Early on the teacher's pick is played with
probability ``beta`` (falling linearly to 0 over ``--guided`` of the decisions), so the learner
first sees good positions, then its own. Imitation learns a strong player in minutes on one
core, where reward-only learning from scratch needs far more hands; the env's per-hand rewards
are reported as the measure of play.

    python experiments/train_policy.py --out mine.npz       # imitate normal (the shipped ones: README)
    python experiments/train_policy.py --decisions 3000 --envs 16 --hidden 16 16 --out /tmp/p.npz   # smoke
    python experiments/train_policy.py --init /tmp/p.npz --guided 0 --lr 3e-4 --out /tmp/q.npz      # train on

``--backend torch`` (the ``learn`` extra) or ``numpy`` (no extra dependency, the same network and
Adam in plain numpy); ``auto`` takes torch when it is installed. A file written into
``agents/weights/``, or into a folder named by ``$HEARTS_SIM_WEIGHTS``, plays as
``net(weights=NAME)`` (its stem) in the next process.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.net import LAYERS, WeightsError, load_weights, network_policy
from agents.registry import parse_agent
from hearts_sim.core.rules import resolve_rules
from hearts_sim.env import PolicyAgent, VectorEnv
from hearts_sim.selfplay.simulate import set_threads
from hearts_sim.studies.tournament import make_config, run_tournament

NEG = -1e9  # added to the logits of the cards that may not be picked


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

    def train_step(self, x: np.ndarray, mask: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, float]:
        """One Adam step on the cross-entropy of the masked logits; returns (logits before, loss)."""
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
        d3 /= len(target)
        d2 = (d3 @ w3.T) * (h2 > 0)
        d1 = (d2 @ w2.T) * (h1 > 0)
        grads = [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]
        self.step_count += 1
        t = self.step_count
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            p -= self.lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        return logits, loss

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

    def train_step(self, x: np.ndarray, mask: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, float]:
        torch = self.torch
        logits = self.model(torch.from_numpy(x)) + torch.from_numpy((1 - mask).astype(np.float32)) * NEG
        loss = torch.nn.functional.cross_entropy(logits, torch.from_numpy(target))
        self.optimizer.zero_grad()
        loss.backward()
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
                sys.exit("train_policy: --backend torch needs torch: pip install -e '.[learn]'")
    return "numpy", NumpyPolicy(sizes, lr, seed, init)


def train(args: argparse.Namespace, checkpoint: Any = None) -> dict[str, Any]:
    """Run DAgger for ``args.decisions`` learner decisions; returns the figures and the weights.
    ``checkpoint(result)`` is called at every progress line (the run can be stopped any time)."""
    set_threads(1)
    env = VectorEnv(args.envs, args.opponents, args.rules, teacher=args.teacher, copy=False)
    sizes = [env.observation_size, *args.hidden, env.n_actions]
    backend, policy = make_policy(args.backend, sizes, args.lr, args.seed, args.init_weights)
    rng = np.random.default_rng(args.seed)
    obs, mask = env.reset(args.seed)
    info = {"teacher_action": env.teacher_actions}
    steps = max(1, args.decisions // args.envs)
    guided_steps = max(1, int(steps * args.guided))
    start = time.perf_counter()
    window: dict[str, list[float]] = {"loss": [], "agree": [], "score": []}
    report_at = {round(steps * k / args.reports) for k in range(1, args.reports + 1)}  # equal windows
    for step in range(steps):
        target = info["teacher_action"].copy()
        logits, loss = policy.train_step(obs, mask.astype(np.float32), target)
        own = logits.argmax(axis=1)
        beta = max(0.0, 1.0 - step / guided_steps)
        actions = np.where(rng.random(args.envs) < beta, target, own)
        window["loss"].append(loss)
        window["agree"].append(float((own == target).mean()))
        obs, mask, _, terminated, _, info = env.step(actions)
        if beta == 0.0:
            window["score"].extend(info["score"][terminated].tolist())
        if step + 1 in report_at:
            seconds = time.perf_counter() - start
            score = f"{np.mean(window['score']):6.2f}" if window["score"] else "     -"
            loss, agree = np.mean(window["loss"]), np.mean(window["agree"])
            print(
                f"{(step + 1) * args.envs:>11,} decisions {seconds:7.1f} s  loss {loss:.3f}  "
                f"agrees with {args.teacher} {agree:.3f}  own-play score/hand {score}  beta {beta:.2f}",
                flush=True,
            )
            last = {key: (float(np.mean(v)) if v else None) for key, v in window.items()}
            window = {key: [] for key in window}
            result = {
                "weights": policy.weights(),
                "backend": backend,
                "seconds": round(seconds, 1),
                "decisions": (step + 1) * args.envs,
                "final_loss": last["loss"],
                "final_agreement": last["agree"],
                "final_score_per_hand": last["score"],
            }
            if checkpoint is not None:
                checkpoint(result)
    return result


def evaluate(weights: list[np.ndarray], args: argparse.Namespace) -> dict[str, Any]:
    """The trained network against ``--opponents`` in a duplicate match of ``--eval-deals`` deals
    (every deal in the seatings that mix the two), played in this process as a ``PolicyAgent``
    exactly as the weights file plays as ``net``: its float16 weights, ``net``'s own kernel for
    the logits, the legal card with the highest."""
    agent = PolicyAgent(network_policy([np.asarray(w, dtype=np.float16) for w in weights]), name="trained")
    config = make_config([agent, args.opponents], rules=args.rules, deals=args.eval_deals, seed=args.seed)
    pair = run_tournament(config, progress=False).pairs().iloc[0]
    return {
        "opponent": args.opponents,
        "deals": args.eval_deals,
        "seed": args.seed,
        "minus_opponent": round(float(pair["a_minus_b"]), 4),
        "ci95": [round(float(pair["low"]), 4), round(float(pair["high"]), 4)],
    }


def save(path: Path, result: dict[str, Any], args: argparse.Namespace) -> None:
    """The weights (float16: half the size, no measurable change in play) and how they were made."""
    meta = {
        "command": "python experiments/train_policy.py " + " ".join(shlex.quote(a) for a in args.argv),
        "method": "DAgger",
        **{
            key: getattr(args, key)
            for key in ("opponents", "teacher", "rules", "envs", "hidden", "lr", "seed")
        },
        **{key: value for key, value in result.items() if key != "weights"},
    }
    if args.init is not None:  # the weights it started from (their own meta says how they were made)
        meta["init"] = {"file": str(args.init), "sha256": hashlib.sha256(args.init.read_bytes()).hexdigest()}
    arrays = {name: w.astype(np.float16) for name, w in zip(LAYERS, result["weights"], strict=True)}
    partial = path.with_name(f".{path.name}.tmp")  # not *.npz: agents.net never loads it
    with open(partial, "wb") as file:
        np.savez_compressed(file, **arrays, meta=np.array(json.dumps(meta)))
    os.replace(partial, path)  # atomic: a process loading the weights never sees half a file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--opponents", default="easy", help="agent spec in the other seats")
    parser.add_argument("--teacher", default="normal", help="agent spec imitated")
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--envs", type=int, default=256, help="tables stepped together (the batch)")
    parser.add_argument("--decisions", type=int, default=20_000_000, help="learner decisions in all")
    parser.add_argument(
        "--guided", type=float, default=0.1, help="share of the run over which beta falls to 0"
    )
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
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--backend", choices=("auto", "torch", "numpy"), default="auto")
    parser.add_argument("--seed", type=int, default=0)
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
    for name in ("envs", "decisions", "reports"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name} must be positive")
    if args.eval_deals < 0:
        parser.error("--eval-deals must be 0 or more")
    args.init_weights = None
    if args.init is not None:
        try:
            args.init_weights = list(load_weights(args.init))
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
    try:  # a bad spec or preset is one line, not a traceback
        parse_agent(args.opponents), parse_agent(args.teacher), resolve_rules(args.rules)
    except ValueError as error:
        parser.error(str(error))
    if args.out.suffix != ".npz":
        parser.error("--out must name a .npz file")
    try:  # refuse an unwritable path now, not after the training
        args.out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        parser.error(f"--out {args.out}: cannot create its folder ({error.strerror})")
    if not os.access(args.out.parent, os.W_OK) or (args.out.exists() and not os.access(args.out, os.W_OK)):
        parser.error(f"--out {args.out}: cannot be written")
    result = train(args, checkpoint=lambda partial: save(args.out, partial, args))
    if args.eval_deals:
        result["evaluation"] = found = evaluate(result["weights"], args)
        low, high = found["ci95"]
        print(
            f"against {args.opponents} in duplicate ({args.eval_deals} deals): "
            f"{found['minus_opponent']:+.3f} points per hand [{low:+.3f}, {high:+.3f}] (negative: better)"
        )
        save(args.out, result, args)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes; {result['backend']}, {result['seconds']} s)")


if __name__ == "__main__":
    main()
