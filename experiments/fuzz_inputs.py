"""Odd values into every option of the command line, every agent parameter, every field of a
move request and the public Python API: each must be played or refused in one line, never a
traceback.

    python experiments/fuzz_inputs.py    # 1,200 commands, 4,000 requests, 3,900 API calls: ~13 min, 2 cores
    python experiments/fuzz_inputs.py --commands 40 --requests 200 --no-api

The options are read from ``hearts-sim``'s own parser and the parameters from the agent registry,
so a new option or parameter is fuzzed without an edit here. Each command is a small valid run
(``BASE``) with one value replaced by an odd one. A command is **refused** when it exits 1 or 2
with one line on stderr (``hearts-sim: error: ...``; argparse's usage line may precede it),
**played** when it exits 0, **running** when it outlasts ``--timeout`` (a valid value that
started a long run); anything else is **odd** and printed in full. A request is odd when the
server answers it with an ``internal error`` (an exception no check expected). An API call
(``api_calls``: one argument of one public call at a time, set to each of ``ODD_OBJECTS``) may
return or raise a one-line ``ValueError`` or ``TypeError``; any other exception, or a call still
running after ``--api-seconds``, is odd. Exits 1 if anything is odd.

The table of refused inputs that the test suite keeps (``tests/test_bad_input.py``) asserts each
message; this script looks wider and shallower, for what no one thought to put in that table.
"""

from __future__ import annotations

import argparse
import atexit
import copy
import functools
import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

import agents
from agents.registry import KINDS
from hearts_sim import (
    CardSet,
    Game,
    HandState,
    Observation,
    Rules,
    analysis,
    card_str,
    parse_card,
    simulate,
    simulate_games,
)
from hearts_sim.apps.cli import build_parser
from hearts_sim.apps.script import ScriptParser, master_seed, number, run_script, whole
from hearts_sim.apps.server import MoveServer
from hearts_sim.core.cards import cards_str, parse_cards
from hearts_sim.env.policy import PolicyAgent, observation_vector
from hearts_sim.env.vector import VectorEnv
from hearts_sim.studies.calibrate import decision_log
from hearts_sim.studies.stats import Sprt
from hearts_sim.studies.tournament import combine_runs, make_config, run_tournament

ODD_VALUES = ("-1", "0", "1e400", "nan", "-inf", "abc", "", "1.5", "18446744073709551616", "１")
# A small valid run of each command that takes options with values; {run} is a finished run.
# Every command runs in a temporary folder, and tune writes its levels there (--levels-dir), so
# a fuzzed --write-level never lands in agents/levels/.
BASE = {
    "bench": "--hands 1000 --openspiel-hands 0 --repeats 1 --quiet",
    "tournament": "random rule --deals 4 --quiet",
    "match": "random rule --deals 4 --quiet",
    "levels": "--ladder random,lowest --deals 2 --games 2 --table-deals 2 --search-deals 2 "
    "--search-games 2 --search-table-deals 2 --timing-hands 1 --quiet",
    "tune": "rule --param void_bonus=0:10 --budget 16 --candidates 2 --levels-dir levels",
    "play": "--level easy",
    "report": "{run}",
    "replay": "{run} --failed",
    "serve": "--agent rule",
}
MALFORMED_SPECS = ("rule(", "rule)", "rule(=1)", "rule(,)", "rule(shoot=1,shoot=2)", "RULE", " rule ",
                   "exec:", "exec:/nonexistent", "exec:true", "py:", "py:nosuch:Agent", "pass=,play=rule",
                   "pass=rule", "pass=rule,play=rule,pass=mc", "hard(iterations=1)", "nosuch", "()",
                   "ismcts(iterations=1)(c=1)")  # fmt: skip


@functools.cache
def subcommands() -> dict[str, argparse.ArgumentParser]:
    """``hearts-sim``'s commands and their parsers, as the command line declares them."""
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def option_values(command: str) -> list[str]:
    """The options of ``hearts-sim COMMAND`` that take a value (each by its first long flag)."""
    return [
        next(flag for flag in action.option_strings if flag.startswith("--"))
        for action in subcommands()[command]._actions
        if action.option_strings and action.nargs != 0
    ]


def command_lines() -> list[list[str]]:
    """Every command the fuzz runs: each option of each command with each odd value, each
    agent parameter with each odd value, and the malformed agent specs."""
    missing = [name for name in subcommands() if option_values(name) and name not in BASE]
    if missing:
        raise SystemExit(f"fuzz_inputs.py: no BASE run for {', '.join(missing)}: add one")
    lines = []
    for command, base in BASE.items():
        for option in option_values(command):
            for value in ODD_VALUES:
                args = base.split()
                if option in args:
                    args[args.index(option) + 1] = value
                else:
                    args += [option, value]
                lines.append([command, *args])
    match = ["random", "--deals", "1", "--quiet"]
    for kind in KINDS:
        for parameter in kind.parameters:
            for value in ODD_VALUES:
                lines.append(["match", f"{kind.name}({parameter.name}={value})", *match])
    lines += [["match", spec, *match] for spec in MALFORMED_SPECS]
    return lines


HEARTS_SIM = (sys.executable, "-m", "hearts_sim")


def classify(
    command: list[str], run_dir: Path, timeout: float, program: tuple[str, ...] = HEARTS_SIM
) -> tuple[str, str]:
    """``(outcome, detail)`` of ``program`` (``hearts-sim``) run with ``command``'s arguments in
    ``run_dir``, stdin closed."""
    args = [arg.replace("{run}", str(run_dir / "run")) for arg in command]
    try:
        done = subprocess.run(
            [*program, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            cwd=run_dir,
        )
    except subprocess.TimeoutExpired:
        return "running", ""
    err = done.stderr.strip().splitlines()
    messages = [line for line in err if not line.startswith(("usage:", " "))]
    if done.returncode == 0 and "Traceback" not in done.stderr:
        return "played", ""
    if done.returncode in (1, 2) and len(messages) == 1 and "Traceback" not in done.stderr:
        return "refused", messages[0]
    return "odd", f"exit {done.returncode}: " + "\n".join(err[-12:])


def request_outcomes(n: int, seed: int) -> tuple[int, list[str]]:
    """Mutate three valid requests (leading, following, passing) ``n`` times, one to three
    fields each set to an odd value or dropped; the requests answered with an internal error."""
    server = MoveServer("rule", time_limit=None)
    clubs = [f"{rank}C" for rank in "23456789TJQKA"]
    diamonds = [f"{rank}D" for rank in "23456789TJQKA"]
    valid = [
        {"id": 1, "seat": 0, "hand": clubs, "pass_direction": "hold", "plays": []},
        {"id": 2, "seat": 1, "hand": diamonds, "pass_direction": "hold", "plays": [[0, "2C"]]},
        {"id": 3, "seat": 0, "hand": clubs, "pass_direction": "left", "passed": [], "received": []},
    ]
    fields = ("id", "rules", "seat", "hand", "pass_direction", "passed", "received", "plays",
              "scores", "points", "kitty", "dealer", "seed")  # fmt: skip
    odd = (None, -1, 0, 1.5, 2**64, -(2**63), "", "x", [], {}, [[]], True, "QS", ["QS"], [0, "QS"],
           [[0]], [[0, "QS", 1]], float("inf"), "10S", "♠Q", {"preset": "nosuch"}, {"n_players": 3},
           {"moon": "none"}, "qdan3", [[5, "2C"]], [["0", "2C"]], [[0, 51]], [[0, 52]], [0, 0, 0],
           [1e308] * 4, ["a"] * 4)  # fmt: skip
    rng = random.Random(seed)
    internal = []
    for _ in range(n):
        request = copy.deepcopy(rng.choice(valid))
        for _ in range(rng.randint(1, 3)):
            field = rng.choice(fields)
            if rng.random() < 0.2:
                request.pop(field, None)
            else:
                request[field] = rng.choice(odd)
        line = json.dumps(request)
        answer = server.reply(line.encode())
        if answer is not None and "internal error" in answer.decode():
            internal.append(f"{line} -> {answer.decode().strip()}")
    return n, internal


# Odd Python values for the API: numbers at and past every edge, wrong types, card-like strings,
# a table and an array where neither belongs (their repr spans lines).
ODD_OBJECTS = (-1, 0, 3, 52, 2**64, -(2**63), 2**53 + 1, 1.5, -0.0, float("nan"), float("inf"), "x", "",
               None, True, np.int64(3), np.float32(2.5), np.bool_(True), [], {}, "QS", ["QS", "QS"],
               [[0, "2C"]], "2C 2C", "10S", "1S", b"QS", object(), pd.DataFrame({"x": [1, 2]}),
               np.zeros((2, 2)))  # fmt: skip


def api_calls() -> dict[str, Callable[[Any], object]]:
    """The public Python API, one argument of one call at a time."""
    clubs, diamonds = CardSet.suit("clubs"), CardSet.suit("diamonds")
    suits = [CardSet.suit(s) for s in range(4)]

    def dealt() -> HandState:
        return HandState.deal("standard", seed=1)

    def history(**fields: Any) -> Observation:
        return Observation.from_history("standard", **{"seat": 0, "hand": clubs, **fields})

    def vector(n: int = 2) -> VectorEnv:
        return VectorEnv(n)

    return {
        "parse_card": parse_card,
        "parse_cards": parse_cards,
        "card_str": card_str,
        "cards_str": cards_str,
        "CardSet": CardSet,
        "CardSet.suit": CardSet.suit,
        "CardSet.__contains__": lambda v: v in clubs,
        "CardSet.__or__": lambda v: clubs | v,
        "Rules(n_players=)": lambda v: Rules(n_players=v),
        "Rules(moon=)": lambda v: Rules(moon=v),
        "Rules.preset": Rules.preset,
        "Rules.from_dict": Rules.from_dict,
        "HandState.deal(rules)": HandState.deal,
        "HandState.deal(seed=)": lambda v: HandState.deal("standard", seed=v),
        "HandState.deal(hand=)": lambda v: HandState.deal("standard", hand=v),
        "HandState.from_deal(hands)": lambda v: HandState.from_deal("standard", v),
        "HandState.from_deal(pass_direction=)": lambda v: HandState.from_deal(
            "standard", suits, pass_direction=v
        ),
        "HandState.from_deal(dealer=)": lambda v: HandState.from_deal("standard", suits, dealer=v),
        "HandState.hand": lambda v: dealt().hand(v),
        "HandState.observation": lambda v: dealt().observation(v),
        "HandState.pass_cards(seat)": lambda v: dealt().pass_cards(v, "2C 3C 4C"),
        "HandState.pass_cards(cards)": lambda v: dealt().pass_cards(0, v),
        "HandState.play": lambda v: HandState.deal("standard", seed=1, hand=3).play(v),
        "Game(rules)": Game,
        "Game(seed=)": lambda v: Game("standard", seed=v),
        "Game(game=)": lambda v: Game("standard", game=v),
        "Game.finish_hand": lambda v: Game("standard").finish_hand(v),
        "analysis.load_records": analysis.load_records,
        "Observation.from_history(seat=)": lambda v: history(seat=v),
        "Observation.from_history(hand=)": lambda v: history(hand=v),
        "Observation.from_history(pass_direction=)": lambda v: history(pass_direction=v),
        "Observation.from_history(plays=)": lambda v: history(seat=1, hand=diamonds, plays=v),
        "Observation.from_history(scores=)": lambda v: history(scores=v),
        "Observation.from_history(dealer=)": lambda v: history(dealer=v),
        "Observation.to_state": lambda v: history().to_state(v),
        "agents.load": agents.load,
        "agents.load(seed=)": lambda v: agents.load("rule", seed=v),
        "Agent.act": lambda v: agents.load("rule").act(v),
        "Agent.hand_seed": lambda v: agents.load("rule").hand_seed(v),
        "Agent.state(hand_seed=)": lambda v: agents.load("rule").state(history(), hand_seed=v),
        "Agent.choose_play(hand_seed=)": lambda v: agents.load("rule").choose_play(history(), hand_seed=v),
        "Agent.card_values": lambda v: agents.load("mc(samples=2)").card_values(v),
        "Agent.pass_values": lambda v: agents.load("mc(pass_samples=2)").pass_values(v),
        "Agent.card_values(hand_seed=)": lambda v: agents.load("mc(samples=2)").card_values(
            history(), hand_seed=v
        ),
        "simulate(hands=)": lambda v: simulate("standard", "random", hands=v, progress=False),
        "simulate(seats)": lambda v: simulate("standard", v, hands=2, progress=False),
        "simulate(seed=)": lambda v: simulate("standard", "random", hands=2, seed=v, progress=False),
        "simulate(threads=)": lambda v: simulate("standard", "random", hands=2, threads=v, progress=False),
        "simulate(engine_timeout=)": lambda v: simulate(hands=2, engine_timeout=v, progress=False),
        "simulate_games(games=)": lambda v: simulate_games("standard", "random", games=v, progress=False),
        "simulate_games(hands=)": lambda v: simulate_games("quick", games=2, hands=v, progress=False),
        "make_config(agents)": make_config,
        "make_config(rules=)": lambda v: make_config(["random", "rule"], rules=v),
        "make_config(rule_overrides=)": lambda v: make_config(["random", "rule"], rule_overrides=v),
        "make_config(deals=)": lambda v: make_config(["random", "rule"], deals=v),
        "make_config(seed=)": lambda v: make_config(["random", "rule"], seed=v),
        "Sprt(gain)": Sprt,
        "Sprt(alpha=)": lambda v: Sprt(0.3, alpha=v),
        "combine_runs": combine_runs,
        "MoveServer(agent)": MoveServer,
        "MoveServer(time_limit=)": lambda v: MoveServer("rule", time_limit=v),
        "MoveServer(max_line=)": lambda v: MoveServer("rule", max_line=v),
        "run_tournament(config)": lambda v: run_tournament(v, progress=False),
        "decision_log(spec)": lambda v: decision_log(v, "standard", hands=1),
        "decision_log(rules)": lambda v: decision_log("rule", v, hands=1),
        "decision_log(hands=)": lambda v: decision_log("rule", "standard", hands=v),
        "decision_log(seed=)": lambda v: decision_log("rule", "standard", hands=1, seed=v),
        "VectorEnv(n_envs)": VectorEnv,
        "VectorEnv(opponents)": lambda v: VectorEnv(2, v),
        "VectorEnv(seat=)": lambda v: VectorEnv(2, seat=v),
        "VectorEnv.reset(seed=)": lambda v: vector().reset(seed=v),
        "VectorEnv.reset(episode=)": lambda v: vector().reset(episode=v),
        "VectorEnv.step": lambda v: (lambda env: (env.reset(), env.step(v)))(vector()),
        "observation_vector(observation)": observation_vector,
        "observation_vector(pending=)": lambda v: observation_vector(dealt().observation(0), v),
        "PolicyAgent(policy)": PolicyAgent,
        "PolicyAgent(name=)": lambda v: PolicyAgent(lambda o, m: m.argmax(axis=1), name=v),
        "PolicyAgent answers": lambda v: PolicyAgent(lambda o, m: v).choose_play(
            HandState.deal("standard", seed=1, hand=3).observation(0)
        ),
        **environment_calls(),
        **analysis_calls(),
    }


def environment_calls() -> dict[str, Callable[[Any], object]]:
    """The Gymnasium and PettingZoo environments: a seed, a table count, an action, an agent."""
    from hearts_sim.env import GymVectorEnv, SeatEnv, aec_env

    def started(env: Any) -> Any:
        env.reset(seed=1)
        return env

    return {
        "SeatEnv(opponents)": SeatEnv,
        "SeatEnv(on_illegal=)": lambda v: SeatEnv(on_illegal=v),
        "SeatEnv(reward=)": lambda v: SeatEnv(reward=v),
        "aec_env(reward=)": lambda v: aec_env(reward=v),
        "aec_env(render_mode=)": lambda v: aec_env(render_mode=v),
        "SeatEnv(seat=)": lambda v: SeatEnv(seat=v),
        "SeatEnv.reset(seed=)": lambda v: SeatEnv().reset(seed=v),
        "SeatEnv.step": lambda v: started(SeatEnv()).step(v),
        "SeatEnv(on_illegal='raise').step": lambda v: started(SeatEnv(on_illegal="raise")).step(v),
        "GymVectorEnv(num_envs)": GymVectorEnv,
        "GymVectorEnv.reset(seed=)": lambda v: GymVectorEnv(2).reset(seed=v),
        "GymVectorEnv.step": lambda v: started(GymVectorEnv(2)).step(v),
        "aec_env(rules)": aec_env,
        "aec_env.reset(seed=)": lambda v: aec_env().reset(seed=v),
        "aec_env.step": lambda v: started(aec_env()).step(v),
        "aec_env.observe": lambda v: started(aec_env()).observe(v),
    }


def analysis_calls() -> dict[str, Callable[[Any], object]]:
    """The analysis functions: each table given an odd object for its records, its records less
    a column, an odd grouping and odd options; the helpers on bitboards, the Parquet readers, and
    the replay of a record row (odd rows, a row with an odd field)."""
    wide = simulate("standard", ["random", "rule", "random", "rule"], hands=8, seed=1, progress=False)
    long = analysis.to_long(wide)
    replayed = analysis.replay(wide.iloc[0])
    tables = (
        "moon_rates",
        "failed_moons",
        "moons_suffered",
        "points_distribution",
        "qs_capture_rates",
        "stopping_tricks",
        "qs_tricks",
    )
    calls: dict[str, Callable[[Any], object]] = {}
    for name in tables:
        table = getattr(analysis, name)
        calls[f"analysis.{name}(data)"] = table
        calls[f"analysis.{name}(by=)"] = lambda v, table=table: table(wide, by=v)
        calls[f"analysis.{name}(wide records without a column)"] = lambda v, table=table: table(
            _without(wide, v)
        )
        calls[f"analysis.{name}(long records without a column)"] = lambda v, table=table: table(
            _without(long, v)
        )
    for name in ("moon_rates", "failed_moons", "moons_suffered", "qs_capture_rates"):
        calls[f"analysis.{name}(scale=)"] = lambda v, name=name: getattr(analysis, name)(wide, scale=v)
    return {
        **calls,
        "analysis.moon_rates(per=)": lambda v: analysis.moon_rates(wide, per=v),
        "analysis.failed_moons(min_points=)": lambda v: analysis.failed_moons(wide, min_points=v),
        "analysis.stopping_tricks(min_points=)": lambda v: analysis.stopping_tricks(wide, min_points=v),
        "analysis.points_distribution(column=)": lambda v: analysis.points_distribution(wide, column=v),
        "analysis.to_long": analysis.to_long,
        "analysis.to_long(features=)": lambda v: analysis.to_long(wide, features=v),
        "analysis.add_features(stages=)": lambda v: analysis.add_features(long, v),
        "analysis.hand_features": analysis.hand_features,
        "analysis.popcount": analysis.popcount,
        "analysis.source_offset(n_players)": lambda v: analysis.source_offset("left", v),
        "analysis.wilson_interval(trials)": lambda v: analysis.wilson_interval(3, v),
        "analysis.replay": analysis.replay,
        "analysis.replay(a field of the row)": lambda v: analysis.replay(_edited(wide.iloc[0], v)),
        "analysis.replay(rules=)": lambda v: analysis.replay(wide.iloc[0], rules=v),
        "analysis.Replay.state_at": lambda v: replayed.state_at(v),
        "analysis.Replay.moon_stopped": lambda v: replayed.moon_stopped(v),
        "analysis.Replay.searches": lambda v: replayed.searches(v),
        "analysis.Replay.card_values(trick)": lambda v: replayed.card_values(v, 0, "mc(samples=2)"),
        "analysis.Replay.card_values(seat)": lambda v: replayed.card_values(0, v, "mc(samples=2)"),
        "analysis.Replay.card_values(agent=)": lambda v: replayed.card_values(0, 0, v),
        "analysis.Replay.pass_values(seat)": lambda v: replayed.pass_values(v, "mc(pass_samples=2)"),
        "analysis.Replay.mark(trick)": lambda v: replayed.mark(v, "x")._repr_html_(),
        "analysis.Replay.mark(note)": lambda v: replayed.mark(0, v)._repr_html_(),
        "analysis.RecordSummary.from_frame": analysis.RecordSummary.from_frame,
        "analysis.RecordSummary.moon_rates(table)": lambda v: analysis.RecordSummary.from_frame(
            wide
        ).moon_rates(v),
        "analysis.RecordSummary.from_records": analysis.RecordSummary.from_records,
        "analysis.iter_records(batch_size=)": lambda v: list(
            analysis.iter_records(_records_run(), batch_size=v)
        ),
        "analysis.load_records(columns=)": lambda v: analysis.load_records(_records_run(), columns=v),
        "analysis.find_hand": lambda v: analysis.find_hand(v, moon=True),
        "analysis.find_hand(row=)": lambda v: analysis.find_hand(_records_run(), row=v),
        "analysis.find_hand(nth=)": lambda v: analysis.find_hand(_records_run(), failed=True, nth=v),
        "analysis.find_hand(agent=)": lambda v: analysis.find_hand(_records_run(), moon=True, agent=v),
        "analysis.replay(agents=)": lambda v: analysis.replay(wide.iloc[0], agents=v),
        "analysis.deal_differences(data)": lambda v: analysis.deal_differences(v, "random", "rule"),
        "analysis.deal_differences(a)": lambda v: analysis.deal_differences(wide, v, "rule"),
        "analysis.deal_differences(column=)": lambda v: analysis.deal_differences(wide, "random", "rule", v),
        "analysis.worst_deal(a)": lambda v: analysis.worst_deal(_records_run(), v),
        "analysis.worst_deal(nth=)": lambda v: analysis.worst_deal(_records_run(), "random", nth=v),
    }


def _picked(columns: pd.Index, value: Any) -> Any:
    """One of ``columns``, a different one for each odd value."""
    return columns[zlib.crc32(repr(value).encode()) % len(columns)]


def _without(frame: pd.DataFrame, value: Any) -> pd.DataFrame:
    """``frame`` less one column (records read with a narrower ``columns=``, or cut down by hand)."""
    return frame.drop(columns=_picked(frame.columns, value))


def _edited(row: pd.Series, value: Any) -> pd.Series:
    """A record row with ``value`` in one of its fields (a row edited or built by hand)."""
    edited = row.astype(object)
    edited[_picked(row.index, value)] = value
    return edited


@functools.cache
def _records_run() -> str:
    """A small finished tournament run for the Parquet readers (in a folder removed at exit)."""
    folder = tempfile.mkdtemp(prefix="fuzz_records_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    run_tournament(make_config(["random", "rule"], deals=4), folder, progress=False)
    return folder


class _Hung(Exception):
    pass


def api_outcomes(seconds: int) -> tuple[int, list[str]]:
    """Every API call with every odd value. A call may return or raise ``ValueError`` or
    ``TypeError`` (one line, not numba's); anything else, or a call that runs past ``seconds``
    (a loop without end), is odd."""

    def hang(signum: int, frame: Any) -> None:
        raise _Hung

    previous = signal.signal(signal.SIGALRM, hang)
    odd = []
    calls = api_calls()
    try:
        for name, call in tqdm(calls.items(), desc="API calls"):
            for value in ODD_OBJECTS:
                signal.alarm(seconds)
                try:
                    call(value)
                except _Hung:
                    odd.append(f"{name}({value!r:.40}): still running after {seconds} s")
                except (ValueError, TypeError) as error:
                    if type(error).__module__.startswith("numba") or "\n" in str(error).strip():
                        odd.append(f"{name}({value!r:.40}): {type(error).__name__}: {error}")
                except Exception as error:  # noqa: BLE001 (what the fuzz looks for)
                    odd.append(f"{name}({value!r:.40}): {type(error).__name__}: {error}")
                finally:
                    signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return len(calls) * len(ODD_OBJECTS), odd


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--commands",
        type=whole("--commands", 0, 10**6),
        default=0,
        help="run this many commands, drawn at random (0: all)",
    )
    parser.add_argument(
        "--requests", type=whole("--requests", 0, 10**7), default=4000, help="mutated move requests"
    )
    parser.add_argument("--workers", type=whole("--workers", 1, 256), default=2, help="commands run at once")
    parser.add_argument(
        "--timeout",
        type=number("--timeout", 0, 3600, open_low=True),
        default=40.0,
        help="seconds before a command counts as running",
    )
    parser.add_argument("--seed", type=master_seed(), default=0, help="draws the commands and the requests")
    parser.add_argument("--no-api", dest="api", action="store_false", help="skip the Python API calls")
    parser.add_argument(
        "--api-seconds",
        type=whole("--api-seconds", 1, 3600),
        default=60,
        help="seconds before an API call is odd",
    )
    args = parser.parse_args(argv)

    lines = command_lines()
    if 0 < args.commands < len(lines):
        lines = random.Random(args.seed).sample(lines, args.commands)
    outcomes: Counter[str] = Counter()
    odd = []
    with tempfile.TemporaryDirectory() as folder:
        run_dir = Path(folder)
        (run_dir / "levels").mkdir()  # where tune's --write-level lands
        subprocess.run(
            [*HEARTS_SIM, "tournament", "random", "rule", "--deals", "8", "--out", "run", "--quiet"],
            cwd=run_dir, check=True, capture_output=True,
        )  # fmt: skip
        with ThreadPoolExecutor(args.workers) as pool:
            results = pool.map(lambda line: classify(line, run_dir, args.timeout), lines)
            shown = tqdm(results, total=len(lines), desc="commands")
            for line, (outcome, detail) in zip(lines, shown, strict=True):
                outcomes[outcome] += 1
                if outcome == "odd":
                    odd.append(f"hearts-sim {' '.join(map(repr, line))}\n  {detail}")
    requests, internal = request_outcomes(args.requests, args.seed)
    api_count, api_odd = api_outcomes(args.api_seconds) if args.api else (0, [])

    print(f"commands: {len(lines):,}")
    for outcome in ("played", "refused", "running", "odd"):
        print(f"  {outcome:<8} {outcomes[outcome]:>6,}")
    print(f"requests: {requests:,}, internal errors: {len(internal):,}")
    print(f"API calls: {api_count:,}, odd: {len(api_odd):,}")
    for text in odd + internal + api_odd:
        print(text)
    return 1 if odd or internal or api_odd else 0


if __name__ == "__main__":
    run_script(main)
