"""The ``hearts-sim`` command line. Bad input gets one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from agents.registry import KINDS, AgentError
from hearts_sim.rules import PRESETS, SWITCHES, RulesError
from hearts_sim.simulate import SimulationError

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
    from hearts_sim.bench import format_bench, run_bench

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


def cmd_agents(args: argparse.Namespace) -> int:
    rows = []
    for kind in KINDS.values():
        params = ", ".join(f"{p.name}={p.default}" for p in kind.parameters) or "-"
        rows.append((kind.name, params, kind.description))
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": k.name,
                        "description": k.description,
                        "parameters": {
                            p.name: {"default": p.default, "description": p.description} for p in k.parameters
                        },
                    }
                    for k in KINDS.values()
                ]
            )
        )
        return 0
    width = max(len(r[0]) for r in rows)
    pwidth = max(len(r[1]) for r in rows)
    for name, params, description in rows:
        print(f"{name:<{width}}  {params:<{pwidth}}  {description}")
    print("\ncombine policies per seat as pass=NAME,play=NAME; set parameters as NAME(k=v,...)")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    for name, rules in PRESETS.items():
        print(f"{name:<12} {rules.describe()}")
    print(f"\nswitches (override with --rule key=value): {', '.join(SWITCHES)}")
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

    agents = commands.add_parser("agents", help="list the agents, their parameters and defaults")
    agents.add_argument("--json", action="store_true")
    agents.set_defaults(run=cmd_agents)

    rules = commands.add_parser("rules", help="list the rules presets and switches")
    rules.set_defaults(run=cmd_rules)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.run(args))
    except (UsageError, RulesError, AgentError, SimulationError) as error:
        print(f"hearts-sim: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("hearts-sim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
