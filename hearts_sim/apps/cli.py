"""The ``hearts-sim`` command line. Bad input gets one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tomllib
from collections.abc import Sequence
from typing import Any

from agents.external import EngineOptions
from agents.levels import LEVELS_DIR
from agents.registry import KINDS, AgentError, parse_agent
from hearts_sim._numba import max_threads
from hearts_sim.core.rules import PRESETS, SWITCHES, RulesError
from hearts_sim.selfplay.simulate import SimulationError
from hearts_sim.studies.calibrate import LADDER
from hearts_sim.studies.stats import format_summary, match_json
from hearts_sim.studies.tournament import (
    Interrupted,
    TournamentConfig,
    TournamentError,
    TournamentResult,
    make_config,
    resume_tournament,
    run_tournament,
)

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be positive")
    return value


def _non_negative(text: str) -> int:
    value = _positive(text) if text.strip() not in ("0",) else 0
    return value


def cmd_bench(args: argparse.Namespace) -> int:
    from hearts_sim.studies.bench import format_bench, run_bench

    result = run_bench(
        hands=args.hands,
        threads=args.threads,
        openspiel_hands=args.openspiel_hands,
        seed=args.seed,
        rules=args.rules,
        repeats=args.repeats,
        startup=args.startup,
    )
    print(json.dumps(result) if args.json else format_bench(result))
    return 0


DEFAULT_AGENTS = ("normal", "easy", "random")  # the CPU levels fast enough for a one-minute run


def _config_file(path: str) -> dict[str, Any]:
    """A tournament config (TOML): agents, hands, rules, rule (list of key=value), seed, games."""
    try:
        with open(path, "rb") as handle:
            values = tomllib.load(handle)
    except FileNotFoundError:
        raise UsageError(f"config file {path} does not exist") from None
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"cannot read config file {path}: {error}") from None
    known = {"agents", "hands", "rules", "rule", "seed", "games", "out", "threads"}
    unknown = sorted(set(values) - known)
    if unknown:
        raise UsageError(
            f"config file {path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})"
        )
    return values


def _tournament_config(args: argparse.Namespace, n_agents: int | None = None) -> TournamentConfig:
    """Command-line options over the config file's values over the defaults."""
    file_values = _config_file(args.config) if getattr(args, "config", None) else {}
    agents = list(args.agents) or list(file_values.get("agents", DEFAULT_AGENTS))
    if n_agents is not None and len(agents) != n_agents:
        raise UsageError(f"match takes exactly {n_agents} agents, got {len(agents)}")
    rule_overrides = list(file_values.get("rule", [])) + list(args.rule)
    return make_config(
        agents,
        rules=args.rules or file_values.get("rules", "standard"),
        rule_overrides=rule_overrides,
        deals=args.hands or int(file_values.get("hands", 20_000)),
        seed=args.seed if args.seed is not None else int(file_values.get("seed", 0)),
        games=args.games or bool(file_values.get("games", False)),
    )


def _run(args: argparse.Namespace, config: TournamentConfig | None) -> TournamentResult:
    progress = False if args.quiet or args.json else None
    engines = _engines(args)
    options: dict[str, Any] = {"threads": args.threads, "progress": progress, "engines": engines}
    runner = None
    if args.cluster:  # chunks on Dask workers; --threads: numba threads per worker task
        from hearts_sim.studies.cluster import DaskRunner

        runner = DaskRunner(args.cluster, threads=args.threads or 1, engines=engines)
        options.update(threads=None, runner=runner)
    try:
        if args.resume:
            return resume_tournament(args.resume, **options)
        assert config is not None
        return run_tournament(config, args.out, command=["hearts-sim", *sys.argv[1:]], **options)
    except Interrupted as stop:
        print(f"hearts-sim: {stop}", file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        if runner is not None:
            runner.close()


def cmd_tournament(args: argparse.Namespace) -> int:
    config = None if args.resume else _tournament_config(args)
    result = _run(args, config)
    print(json.dumps(result.summary) if args.json else format_summary(result.summary))
    if result.out is not None and not args.json:
        print(f"records and manifest: {result.out}")
    return 0


def cmd_match(args: argparse.Namespace) -> int:
    config = None if args.resume else _tournament_config(args, n_agents=2)
    result = _run(args, config)
    if len(result.summary["agents"]) != 2:
        raise UsageError(
            f"{args.resume} holds a tournament of {len(result.summary['agents'])} agents, not a match"
        )
    print(json.dumps(match_json(result.summary)) if args.json else format_summary(result.summary))
    return 0


def _add_tournament_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--hands", type=_positive, default=None, help="deals (each played in every seating; default 20000)"
    )
    command.add_argument("--rules", default=None, help="rules preset (default standard)")
    command.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one rule switch (repeatable)",
    )
    command.add_argument("--seed", type=int, default=None, help="master seed (default 0)")
    command.add_argument("--games", action="store_true", help="whole games to the target score")
    command.add_argument("--out", default=None, help="directory for Parquet records and the manifest")
    command.add_argument("--resume", default=None, metavar="DIR", help="continue an interrupted run")
    command.add_argument("--config", default=None, help="TOML file with these options")
    command.add_argument("--threads", type=_positive, default=None, help="numba threads (default: all)")
    command.add_argument(
        "--cluster",
        default=None,
        metavar="ADDRESS",
        help="play the chunks on Dask: a scheduler (tcp://HOST:8786) or local:N worker processes",
    )
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_engine_options(command)


def _add_engine_options(command: argparse.ArgumentParser) -> None:
    """How external agents (py:..., exec:...) run."""
    command.add_argument(
        "--engine-procs",
        type=_positive,
        default=None,
        metavar="N",
        help="processes per exec: engine (default: the number of threads)",
    )
    command.add_argument(
        "--engine-timeout",
        type=_non_negative_seconds,
        default=30.0,
        metavar="SECONDS",
        help="time limit per decision of an external agent (0: none; default 30)",
    )


def _non_negative_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value < 1e6:
        raise argparse.ArgumentTypeError(f"{text} must be between 0 and 1e6 seconds")
    return value


def _engines(args: argparse.Namespace) -> EngineOptions:
    """The ``--engine-*`` options (processes default to the threads in use)."""
    procs = args.engine_procs or args.threads or max_threads()
    return EngineOptions(procs=procs, timeout=args.engine_timeout or None)


def cmd_agents(args: argparse.Namespace) -> int:
    from agents.levels import levels

    if args.json:
        print(
            json.dumps(
                {
                    "agents": [
                        {
                            "name": k.name,
                            "description": k.description,
                            "parameters": {
                                p.name: {
                                    "default": p.format(p.default),
                                    "description": p.description,
                                    **({"choices": list(p.choices)} if p.choices else {}),
                                }
                                for p in k.parameters
                            },
                        }
                        for k in KINDS
                    ],
                    "levels": {
                        name: {
                            "agent": level.agent,
                            "description": level.description,
                            "max_ms_per_decision": level.max_ms_per_decision,
                        }
                        for name, level in levels().items()
                    },
                }
            )
        )
        return 0
    for kind in KINDS:
        print(f"{kind.name}: {kind.description}")
        for p in kind.parameters:
            choices = f" (one of {', '.join(p.choices)})" if p.choices else ""
            setting = f"{p.name}={p.format(p.default)}"
            print(f"    {setting:<20} {p.description}{choices}")
    print("\nlevels (usable wherever an agent is):")
    for name, level in levels().items():
        print(f"    {name:<8} {level.agent}: {level.description}")
    print("\nset parameters as NAME(k=v,...); combine policies per seat as pass=NAME,play=NAME")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    for name, rules in PRESETS.items():
        print(f"{name:<12} {rules.describe()}")
    print(f"\nswitches (override with --rule key=value): {', '.join(SWITCHES)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from hearts_sim.studies.report import ReportError, write_report

    try:
        written = write_report(args.dir, args.out, min_points=args.min_points)
    except ReportError as error:
        raise UsageError(str(error)) from None
    print(f"wrote {len(written)} files to {written[-1].parent} (summary: {written[-1]})")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from hearts_sim.apps.server import serve_command

    return serve_command(args)


def cmd_levels(args: argparse.Namespace) -> int:
    from hearts_sim.studies.calibrate import Budget, calibrate, format_calibration

    rules = make_config(["random"], rules=args.rules or "standard", rule_overrides=args.rule).rules
    ladder = [name.strip() for name in args.ladder.split(",") if name.strip()]
    if len(ladder) < 2:
        raise UsageError(f"--ladder {args.ladder!r} needs at least two agents, lowest first")
    for spec in ladder:
        parse_agent(spec)  # an unknown name is a one-line error before anything runs
    result = calibrate(
        ladder,
        rules,
        deals=Budget(args.hands, args.search_hands),
        games=Budget(args.games, args.search_games),
        table_deals=Budget(args.table_hands, args.search_table_hands),
        timing_hands=args.timing_hands,
        seed=args.seed,
        threads=args.threads,
        report=None if args.quiet else lambda line: print(line, file=sys.stderr, flush=True),
        engines=_engines(args),
    )
    print(json.dumps(result) if args.json else format_calibration(result))
    return 0


def cmd_tune(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hearts_sim.studies.tune import TuneError, parse_ranges, tune, write_level

    rules = make_config(["random"], rules=args.rules or "standard", rule_overrides=args.rule).rules
    try:
        result = tune(
            args.agent,
            parse_ranges(args.param),
            args.budget,
            reference=args.against,
            rules=rules,
            candidates=args.candidates,
            seed=args.seed,
            threads=args.threads,
            report=None if args.json else lambda line: print(line, file=sys.stderr),
            weaker_by=args.weaker_by,
            engines=_engines(args),
        )
        if args.write_level:
            path = Path(args.levels_dir) / f"{args.write_level}.toml"
            write_level(
                path,
                result,
                args.description or f"tuned {args.agent}",
                args.max_ms,
                "hearts-sim " + shlex.join(sys.argv[1:]),
            )
    except TuneError as error:
        raise UsageError(str(error)) from None
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print(f"best: {result.best.spec}")
        print(
            f"gain over {result.reference}: {result.gain:+.3f} points/hand, 95% CI "
            f"[{result.ci95[0]:+.3f}, {result.ci95[1]:+.3f}] "
            f"(fresh deals; {result.deals_played:,} deals in all)"
        )
        if args.write_level:
            print(f"wrote level {args.write_level}")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from hearts_sim.apps.terminal import InputEnded, play_in_terminal

    rules = make_config(["random"], rules=args.rules or "standard", rule_overrides=args.rule).rules
    if not 0 <= args.seat < rules.n_players:
        raise UsageError(f"--seat {args.seat} does not exist with {rules.n_players} players")
    try:
        play_in_terminal(rules, args.level, seed=args.seed, seat=args.seat)
    except InputEnded as error:
        raise UsageError(str(error)) from None
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hearts-sim", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    bench = commands.add_parser("bench", help="random-vs-random hands/s against OpenSpiel")
    bench.add_argument("--hands", type=_positive, default=2_000_000, help="hands per timed run")
    bench.add_argument("--threads", type=_positive, default=None, help="numba threads (default: all)")
    bench.add_argument(
        "--openspiel-hands",
        type=_non_negative,
        default=2000,
        help="hands for the OpenSpiel measurement (0 to skip)",
    )
    bench.add_argument("--rules", default="standard", help="rules preset")
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--repeats", type=_positive, default=3, help="timed runs; the best counts")
    bench.add_argument(
        "--startup",
        action="store_true",
        help="also time cold (empty numba cache) and warm start in fresh processes",
    )
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.set_defaults(run=cmd_bench)

    tournament = commands.add_parser("tournament", help="duplicate tournament between agents")
    tournament.add_argument(
        "agents", nargs="*", metavar="AGENT", help=f"agent specs (default: {' '.join(DEFAULT_AGENTS)})"
    )
    _add_tournament_options(tournament)
    tournament.set_defaults(run=cmd_tournament)

    match = commands.add_parser("match", help="two agents in duplicate: A minus B with CI and p-value")
    match.add_argument("agents", nargs="*", metavar="AGENT", help="exactly two agent specs")
    _add_tournament_options(match)
    match.set_defaults(run=cmd_match)

    agents = commands.add_parser("agents", help="list the agents, their parameters and defaults")
    agents.add_argument("--json", action="store_true")
    agents.set_defaults(run=cmd_agents)

    rules = commands.add_parser("rules", help="list the rules presets and switches")
    rules.set_defaults(run=cmd_rules)

    levels = commands.add_parser("levels", help="calibrate the easy/normal/hard ladder")
    levels.add_argument(
        "--ladder",
        default=",".join(LADDER),
        help="agents or levels to compare, lowest first (default %(default)s)",
    )
    levels.add_argument("--hands", type=_positive, default=2000, help="deals per adjacent pair")
    levels.add_argument("--games", type=_positive, default=200, help="games to 100 per adjacent pair")
    levels.add_argument("--table-hands", type=_positive, default=500, help="deals per one-vs-three cell")
    levels.add_argument(
        "--search-hands", type=_positive, default=60, help="deals per pair when hard (a search agent) plays"
    )
    levels.add_argument("--search-games", type=_positive, default=10, help="games per pair when hard plays")
    levels.add_argument(
        "--search-table-hands", type=_positive, default=20, help="deals per one-vs-three cell with hard"
    )
    levels.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    levels.add_argument("--timing-hands", type=_positive, default=10, help="hands timed per level")
    levels.add_argument("--rules", default=None)
    levels.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    levels.add_argument("--seed", type=int, default=0)
    levels.add_argument("--threads", type=_positive, default=None)
    levels.add_argument("--json", action="store_true")
    _add_engine_options(levels)
    levels.set_defaults(run=cmd_levels)

    tune = commands.add_parser("tune", help="search an agent's parameters (successive halving)")
    tune.add_argument("agent", help="the policy kind to tune, e.g. rule")
    tune.add_argument("--param", action="append", default=[], metavar="NAME=LO:HI", help="a range to search")
    tune.add_argument("--budget", type=_positive, default=20_000, help="deals in all (each in 14 seatings)")
    tune.add_argument("--against", default=None, help="the reference field (default: the agent's defaults)")
    tune.add_argument("--candidates", type=_positive, default=16)
    tune.add_argument(
        "--weaker-by",
        type=float,
        default=None,
        metavar="POINTS",
        help="aim for an agent this many points per hand behind --against (an easier level)",
    )
    tune.add_argument("--rules", default=None)
    tune.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    tune.add_argument("--seed", type=int, default=0)
    tune.add_argument("--threads", type=_positive, default=None)
    tune.add_argument("--write-level", default=None, metavar="NAME", help="save the winner as level NAME")
    tune.add_argument("--levels-dir", default=str(LEVELS_DIR), help="where level files live")
    tune.add_argument("--description", default=None, help="the level's one-line description")
    tune.add_argument("--max-ms", type=float, default=10.0, help="the level's per-decision budget")
    tune.add_argument("--json", action="store_true")
    _add_engine_options(tune)
    tune.set_defaults(run=cmd_tune)

    play = commands.add_parser("play", help="play a game in the terminal against CPU opponents")
    play.add_argument("--level", default="normal", help="the opponents: a level or any agent spec")
    play.add_argument("--rules", default=None)
    play.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE")
    play.add_argument("--seed", type=int, default=0, help="replays the same game")
    play.add_argument("--seat", type=int, default=0, help="your seat")
    play.set_defaults(run=cmd_play)

    report = commands.add_parser("report", help="moon-shot figures and summary.md from tournament records")
    report.add_argument("dir", metavar="DIR", help="a tournament --out directory (or its records/)")
    report.add_argument("--out", default=None, metavar="PATH", help="output directory (default DIR/report)")
    report.add_argument(
        "--min-points", type=_positive, default=20, help="raw points of a failed moon attempt (default 20)"
    )
    report.set_defaults(run=cmd_report)

    from hearts_sim.apps.server import add_arguments as add_serve_arguments

    serve = commands.add_parser("serve", help="answer move requests (JSON lines) on stdin/stdout or a port")
    add_serve_arguments(serve)
    serve.set_defaults(run=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.run(args))
    except (UsageError, RulesError, AgentError, SimulationError, TournamentError) as error:
        print(f"hearts-sim: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hearts-sim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
