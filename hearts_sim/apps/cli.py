"""The ``hearts-sim`` command line: subcommands over the studies, the server and the terminal game.

Every option is declared once, as an ``Option`` (type, range, default, help): the shared ones
and the config-file keys in ``hearts_sim.apps.options``, each command's own ones here next to
the command, the server's in ``hearts_sim.apps.server``; config files are checked against the
same declarations. Everything a run is given (numbers,
seeds, paths, addresses, agent specs, rules) is validated before any work starts; bad input
is one line on stderr and exit code 2, a failed write of results exit code 1.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import secrets
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from agents.external import MAX_ENGINE_TIMEOUT, TRUST_FLAG
from agents.kinds import AgentError
from agents.levels import LADDER, LEVELS_DIR, LEVELS_VARIABLE, level_folders
from agents.registry import KINDS, parse_agent, split_specs, tuned_for_other_rules
from agents.search import MAX_MS
from hearts_sim.apps.options import (
    AGENTS,
    CHUNK_DEALS,
    CONFIG_OPTIONS,
    COUNT,
    DEALS,
    FLAG,
    GAMES,
    JSON,
    NUMBER,
    OUT,
    PATH,
    PATHS,
    RULE,
    RULES,
    SEED,
    TEXT,
    TEXTS,
    Option,
    UsageError,
    read_config,
    threads_option,
    threads_range,
)
from hearts_sim.apps.script import (
    EXIT_FAILURE,
    EXIT_USAGE,
    ScriptParser,
    letters_where_symbols_cannot_print,
    reported,
    said_if_slow,
    with_signals_as_stops,
)
from hearts_sim.core.cards import CardSet, card_str
from hearts_sim.core.checks import did_you_mean
from hearts_sim.core.errors import (
    InputError,
    Stopped,
    StorageError,
    Terminated,
    signals_unwrapped,
)
from hearts_sim.core.files import shell_path, unwritable
from hearts_sim.core.rules import (
    GAME_SWITCHES,
    MAX_POINTS,
    PRESETS,
    SWITCHES,
    Rules,
    accepted,
    hands_play_alike,
    pass_direction_cycle,
    rules_label,
    split_assignment,
)
from hearts_sim.engine.rng import MAX_DEALS

if TYPE_CHECKING:
    from hearts_sim.studies.kept import KeptJob
    from hearts_sim.studies.stats import Sprt
    from hearts_sim.studies.tournament import TournamentConfig, TournamentResult
    from hearts_sim.studies.tune import TuneResult

# The studies (pandas, pyarrow, scipy) are imported by the commands that run them, so that
# `--help` and a refused argument answer without loading them.


DESCRIPTION = """\
hearts-sim plays the card game Hearts at millions of hands per second: it pits agents (rule-based,
Monte Carlo, PIMC, ISMCTS, the CPU levels easy/normal/hard) against each other in duplicate
tournaments with confidence intervals, tunes and calibrates them, analyses moon shots, serves
moves to a game site and lets you play a game in the terminal.

examples:
  hearts-sim match rule random --deals 2000             # A minus B in points per hand, 95% CI, p-value
  hearts-sim tournament normal easy random --out runs/r1 # duplicate tournament, Parquet records
  hearts-sim play --level hard                           # a whole game against three CPU players

`hearts-sim COMMAND --help` lists a command's options; `hearts-sim agents` the agents."""

DEFAULT_AGENTS = ("normal", "easy", "random")  # the CPU levels fast enough for a one-minute run


class _Parser(ScriptParser):
    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._words = list(sys.argv[1:] if args is None else args)  # the command, for ``_hint``
        return super().parse_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message + self._hint(message))

    def _hint(self, message: str) -> str:
        """For an option the command does not take: its own option that is a near miss of it
        (``bench --hand``: ``--hands``; until 2026-12-07 only replay's ``--hand`` was named), then
        the commands that take it (``tournament --sprt``: match); for a stray word after
        ``--ladder``, that its agents are one word; for no command at all, where they are listed."""
        if message == "the following arguments are required: COMMAND":
            return " (hearts-sim --help lists them; hearts-sim tournament plays a default tournament)"
        if not message.startswith("unrecognized arguments: "):
            return ""
        flag = next((word for word in message.split()[2:] if word.startswith("--")), "").split("=")[0]
        if not flag:
            return self._stray_hint(message.split()[2:])
        commands = next((a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction)), {})
        command = next((commands[word] for word in getattr(self, "_words", ()) if word in commands), None)
        own = [name for name in command._option_string_actions if name.startswith("--")] if command else []
        owners = [name for name, parser in commands.items() if flag in parser._option_string_actions]
        return did_you_mean(flag, own) + (
            f" ({flag} is an option of {' and '.join(owners)})" if owners else ""
        )

    def _stray_hint(self, stray: list[str]) -> str:
        """``levels --ladder random easy``: the ladder is one word, its agents between commas."""
        words = getattr(self, "_words", [])
        # argparse names the stray words last: the first of them from the end (an --out easy before)
        first = next((i for i in range(len(words) - len(stray), -1, -1) if words[i] == stray[0]), None)
        if first is None or first < 2 or words[first - 2] != "--ladder":
            return ""
        steps = [words[first - 1]]
        for word, extra in zip(words[first:], stray, strict=False):  # the stray words right after it
            if word != extra:
                break
            steps.append(word)
        return f" (--ladder takes its agents as one word, commas between: --ladder {','.join(steps)})"

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's check of a choice (a subcommand), with the one most likely meant."""
        try:
            super()._check_value(action, value)  # type: ignore[misc]
        except argparse.ArgumentError as error:
            hint = did_you_mean(value, [str(c) for c in action.choices or ()])
            raise argparse.ArgumentError(action, f"{error.message}{hint}") from None


def _quiet(args: argparse.Namespace) -> bool:
    """No progress bar nor progress lines: ``--quiet``, or ``--json`` (whose reader wants the data
    alone; ``levels --json`` drew its bar and lines)."""
    return bool(args.quiet or getattr(args, "json", False))


def _say(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Progress lines on stderr, unless ``_quiet``; above a progress bar, where one is drawn."""
    from tqdm import tqdm

    return None if _quiet(args) else (lambda line: tqdm.write(line, file=sys.stderr))


def _progress(args: argparse.Namespace) -> bool | None:
    """A long run's ``progress``: off when ``_quiet``, else as the terminal allows (None)."""
    return False if _quiet(args) else None


def _rules(args: argparse.Namespace) -> Rules:
    return Rules.parse(args.rules or "standard").with_strings(args.rule)


# ---------------------------------------------------------------------------- bench
BENCH_HANDS = Option("hands", COUNT, "hands per timed run", 2_000_000, 1, 10_000_000, ("--hands",))
OPENSPIEL_HANDS = Option(
    "openspiel_hands",
    COUNT,
    "hands for the OpenSpiel measurement (0 to skip)",
    2000,
    0,
    10_000_000,
    ("--openspiel-hands",),
)
REPEATS = Option("repeats", COUNT, "timed runs; the best counts", 3, 1, 100, ("--repeats",))
STARTUP = Option(
    "startup",
    FLAG,
    "also time cold (empty numba cache) and warm start of tournament and bench in fresh processes",
    flags=("--startup",),
)
QUIET = Option("quiet", FLAG, "no progress on stderr", False, flags=("--quiet",))
# --quiet of the long jobs (tournament, match, levels, tune): their bars and their lines in a log
QUIET_PROGRESS = Option("quiet", FLAG, "no progress bar or progress lines", False, flags=("--quiet",))


def cmd_bench(args: argparse.Namespace) -> int:
    from hearts_sim.studies.bench import format_bench, run_bench

    result = run_bench(
        hands=args.hands,
        threads=args.threads,
        openspiel_hands=args.openspiel_hands,
        seed=args.seed,
        rules=_rules(args),  # a bad preset or switch is one line before any work
        repeats=args.repeats,
        startup=args.startup,
        report=_say(args),
    )
    print(json.dumps(result) if args.json else format_bench(result))
    return 0


# ---------------------------------------------------------------------------- tournament and match
RESUME = Option("resume", PATH, "continue an interrupted run in DIR", flags=("--resume",), metavar="DIR")
REPAIR = Option(
    "repair",
    FLAG,
    "with --resume: re-play the chunks whose records do not match the manifest, from their seeds",
    flags=("--repair",),
)
TRUST_AGENTS = Option(
    "trust_agents",
    FLAG,
    "with --resume: run the outside agents (py:, exec:) the folder names; they run code on this "
    "machine, so only for a folder you trust",
    False,
    flags=(TRUST_FLAG,),
)
CONFIG = Option("config", PATH, "TOML file with these options", flags=("--config",), metavar="FILE")
CLUSTER = Option(
    "cluster",
    TEXT,
    "play the chunks on Dask: a scheduler (tcp://HOST:8786) or local:N worker processes",
    flags=("--cluster",),
    metavar="ADDRESS",
)
ENGINE_PROCS = Option(
    "engine_procs",
    COUNT,
    "processes per exec: engine (default: the number of threads)",
    None,
    1,
    1024,
    ("--engine-procs",),
    metavar="N",
)
ENGINE_TIMEOUT = Option(
    "engine_timeout",
    NUMBER,
    "seconds per decision of a py: or exec: agent (0: no limit; default 30; an engine's first answer: "
    "300 at least; a resumed tournament or match: the run's)",
    None,
    0,
    MAX_ENGINE_TIMEOUT,
    ("--engine-timeout",),
    metavar="SECONDS",
)
ENGINE_OPTIONS = (ENGINE_PROCS, ENGINE_TIMEOUT)


def _engines(args: argparse.Namespace) -> Any:
    """How agents outside the compiled loop run: ``--engine-procs`` (default: the threads in use)
    and ``--engine-timeout``."""
    from agents.external import EngineOptions
    from hearts_sim._numba import max_threads

    procs = args.engine_procs or args.threads or max_threads()
    if args.engine_timeout is None and args.command in ("tournament", "match") and args.resume:  # the run's
        from hearts_sim.studies.tournament import recorded_engines

        return recorded_engines(Path(args.resume), procs)
    timeout = EngineOptions.timeout if args.engine_timeout is None else args.engine_timeout or None
    return EngineOptions(procs=procs, timeout=timeout)


# What a run's manifest already fixes: none of these may be given beside --resume.
RUN_SETTINGS = ("agents", "deals", "rules", "rule", "seed", "games", "out", "chunk_deals", "config")


def _tournament_config(
    args: argparse.Namespace, n_agents: int | None = None, sprt: Sprt | None = None
) -> TournamentConfig:
    """Command-line options over the config file's values over the options' defaults."""
    from hearts_sim.studies.tournament import make_config

    file_values = read_config(args.config) if args.config else {}

    def value(name: str) -> Any:
        given = getattr(args, name)
        if given is not None and given != [] and given is not False:
            return given
        return file_values.get(name, CONFIG_OPTIONS[name].default)

    given = list(value("agents"))
    if n_agents is not None and len(given) != n_agents:  # not the tournament's default three
        raise UsageError(f"match takes exactly {n_agents} agents, got {len(given) or 'none'}")
    agents = given or list(DEFAULT_AGENTS)
    args.out = value("out")
    args.threads = value("threads")
    config = make_config(
        agents,
        rules=value("rules"),
        rule_overrides=_rules_over(list(file_values.get("rule", [])), list(args.rule)),
        deals=value("deals"),
        seed=value("seed"),
        games=value("games"),
        sprt=sprt,
        chunk_deals=value("chunk_deals"),
    )
    _warn_tuned_for_other_rules(config.agents, config.rules)
    if not config.games:  # --rules quick over hands: a user likely meant games to 50
        _warn_game_switches(config.rules, " (--games)")
    specs = config.specs()
    if (
        pass_direction_cycle(config.rules) == ("none",)
        and len({str(spec.play_policy) for spec in specs}) == 1
        and len({str(spec.pass_policy) for spec in specs}) > 1
    ):  # a pass study under no-pass rules reported +0.000 [+0.000, +0.000] without a word
        print(
            "hearts-sim: warning: these agents differ only in how they pass, and these rules never "
            "pass: every hand plays alike",
            file=sys.stderr,
        )
    return config


def _warn_game_switches(rules: Rules, games_flag: str = "") -> None:
    """A warning line where ``rules`` set what counts only in whole games (``target_score``,
    ``tie_rule``) for a command that plays hands (``games_flag``: how it would play games)."""
    standard = Rules()
    unused = [
        f"{name}={getattr(rules, name)}"
        for name in GAME_SWITCHES
        if getattr(rules, name) != getattr(standard, name)
    ]
    if unused:
        one = len(unused) == 1
        print(
            f"hearts-sim: warning: {' and '.join(unused)} {'counts' if one else 'count'} only in whole "
            f"games{games_flag}: these hands play the same without {'it' if one else 'them'}",
            file=sys.stderr,
        )


def _warn_tuned_for_other_rules(specs: Sequence[object], rules: Rules) -> None:
    """A warning line for each level among ``specs`` tuned under rules that play otherwise."""
    for line in tuned_for_other_rules(specs, rules):
        print(f"hearts-sim: warning: {line}", file=sys.stderr)


def _rules_over(base: list[str], over: list[str]) -> list[str]:
    """The config file's ``rule`` switches (``base``) with the command line's (``over``) in place of
    those they set again: the command line wins, as for every other option. Within either, a
    switch set twice is refused (``Rules.with_strings``)."""
    again = {split_assignment(text)[0] for text in over}
    return [text for text in base if split_assignment(text)[0] not in again] + over


def _given(value: object) -> bool:
    """Whether an option was given: argparse leaves None, [] or False (a flag) for one that was
    not. By identity, not equality: ``--seed 0`` is given (0 == False let it through, ignored)."""
    return not (value is None or value is False or value == [])


def _check_resume(args: argparse.Namespace) -> None:
    """``--resume DIR`` continues a run as it was started: its settings may not be given again."""
    if args.repair and not args.resume:
        raise UsageError("--repair works with --resume DIR: it repairs that run's records")
    _check_trust(args)
    if not args.resume:
        return
    given = [name for name in RUN_SETTINGS if _given(getattr(args, name))]
    if given:
        shown = "AGENT" if given[0] == "agents" else "--" + given[0].replace("_", "-")
        raise UsageError(
            f"--resume continues {args.resume} with the settings it was started with "
            f"(in its manifest): drop {shown}"
        )


def _check_trust(args: argparse.Namespace) -> None:
    """``--trust-agents`` answers for the agents a folder names: those of a resumed job."""
    if args.trust_agents and not args.resume:
        raise UsageError(f"{TRUST_FLAG} works with --resume DIR: the agents you name yourself run without it")


def _runner(args: argparse.Namespace) -> Any:
    """The Dask runner of ``--cluster`` (checked before any work), or None to run here."""
    if not args.cluster:
        from hearts_sim._numba import max_threads

        if args.threads is not None and args.threads > max_threads():  # here, at most the cores
            bound = threads_range(cluster=True)
            raise UsageError(f"--threads {args.threads} is not valid: choose a whole number in 1 .. {bound}")
        return None
    from hearts_sim.studies.cluster import DaskRunner

    return DaskRunner(args.cluster, threads=args.threads or 1, engines=_engines(args))


def _run(args: argparse.Namespace, config: TournamentConfig | None) -> TournamentResult:
    from hearts_sim.studies.tournament import resume_tournament, run_tournament

    runner = _runner(args)
    options: dict[str, Any] = {
        "threads": None if runner is not None else args.threads,
        "progress": _progress(args),
        "runner": runner,
        "report": _say(args),
        "engines": _engines(args),
        "pace_note": True,
    }
    try:
        if args.resume:
            trust = args.trust_agents
            return resume_tournament(args.resume, repair=args.repair, trust_agents=trust, **options)
        assert config is not None
        return run_tournament(config, args.out, command=["hearts-sim", *args.argv], **options)
    finally:
        if runner is not None:
            runner.close()


@contextmanager
def _finished_run_kept(args: argparse.Namespace) -> Iterator[None]:
    """Ctrl-C (or SIGTERM) after a kept run's last chunk, before its results are printed, was a
    bare "hearts-sim: interrupted": the run is whole on disk, and ``status`` prints its results."""
    try:
        with signals_unwrapped():  # one that numba wrapped too
            yield
    except KeyboardInterrupt as stop:
        from hearts_sim.studies.tournament import run_status

        out = args.resume or args.out
        try:
            finished = out is not None and run_status(out).state == "finished"
        except Exception:  # not a run, or unreadable: the stop is what to say (one inside scipy's
            finished = False  # import left it half made, and reading the run failed: NameError)
        if not finished:
            raise
        story = f"after the run finished: hearts-sim status {shell_path(out)} prints its results"
        raise Stopped(story, isinstance(stop, Terminated)) from None


def cmd_tournament(args: argparse.Namespace) -> int:
    from hearts_sim.studies.stats import format_summary

    _check_resume(args)
    config = None if args.resume else _tournament_config(args)
    with _finished_run_kept(args):
        result = _run(args, config)
        print(json.dumps(result.summary) if args.json else format_summary(result.summary))
        if not args.json:
            _where_the_records_are(result)
    return 0


def _where_the_records_are(result: Any) -> None:
    """After a run with --out: where its records are and, for two agents over hands, how to see
    the deal the worse one played worst."""
    if result.out is None:
        return
    print(f"records and manifest: {result.out}")
    summary = result.summary
    if summary.get("unit") == "games":
        out = shell_path(result.out)
        print(f"every hand of its games: hearts-sim report {out}; hearts-sim replay {out} --moon")
    if summary.get("unit") == "hands" and len(summary["agents"]) == 2 and summary.get("pairs"):
        pair = summary["pairs"][0]
        worse = pair["a"] if pair["a_minus_b"] > 0 else pair["b"]
        replay = f"hearts-sim replay {shell_path(result.out)} --worst {shlex.quote(worse)}"
        print(f"the deal {worse} played worst against the other: {replay}")


SPRT = Option(
    "sprt",
    NUMBER,
    "stop once a sequential test (SPRT) decides between H0, no gain, and H1, a gain of GAIN "
    "points per hand for the first agent (read at each chunk's end); --deals is then the most it plays",
    None,
    0,
    MAX_POINTS,  # no agent gains more points per hand than any rules deal out
    ("--sprt",),
    metavar="GAIN",
    open_low=True,
)
SPRT_NULL = Option(
    "sprt_null",
    NUMBER,
    "the gain H0 says instead of 0 (below GAIN: --sprt 1 --sprt-null 0.75 asks whether the gain reaches 1)",
    None,
    -MAX_POINTS,
    MAX_POINTS,
    ("--sprt-null",),
    metavar="GAIN0",
)
SPRT_ALPHA = Option(
    "sprt_alpha",
    NUMBER,
    "the SPRT's chance of accepting H1 where H0 holds (default 0.05)",
    None,
    0,
    0.5,
    ("--sprt-alpha",),
    metavar="RATE",
    open_low=True,
    open_high=True,
)
SPRT_BETA = Option(
    "sprt_beta",
    NUMBER,
    "the SPRT's chance of accepting H0 where H1 holds (default 0.05)",
    None,
    0,
    0.5,
    ("--sprt-beta",),
    metavar="RATE",
    open_low=True,
    open_high=True,
)
SPRT_OPTIONS = (SPRT, SPRT_NULL, SPRT_ALPHA, SPRT_BETA)


def _sprt(args: argparse.Namespace) -> Sprt | None:
    """The sequential test ``--sprt GAIN`` asks for (``--sprt-null``: 0; ``--sprt-alpha`` and
    ``--sprt-beta``: 0.05)."""
    from hearts_sim.studies.stats import Sprt

    given = [option.flag for option in SPRT_OPTIONS if getattr(args, option.name) is not None]
    if given and args.resume:
        raise UsageError(
            f"--resume continues {args.resume} with the test it was started with: drop {given[0]}"
        )
    if given and args.sprt is None:
        raise UsageError(f"{given[0]} sets up a sequential test: give --sprt GAIN too")
    if args.sprt is None:
        return None
    if args.sprt_null is not None and args.sprt_null >= args.sprt:
        raise UsageError(
            f"--sprt-null {args.sprt_null:g} is not valid: choose a gain below --sprt {args.sprt:g}"
        )
    settings = {name: getattr(args, f"sprt_{name}") for name in ("null", "alpha", "beta")}
    return Sprt(args.sprt, **{name: value for name, value in settings.items() if value is not None})


def cmd_match(args: argparse.Namespace) -> int:
    from hearts_sim.studies.stats import format_summary, match_json

    _check_resume(args)
    sprt = _sprt(args)
    config = None if args.resume else _tournament_config(args, n_agents=2, sprt=sprt)
    if args.resume:
        _check_resumed_match(args.resume)
    with _finished_run_kept(args):
        result = _run(args, config)
        print(json.dumps(match_json(result.summary)) if args.json else format_summary(result.summary))
        if not args.json:
            _where_the_records_are(result)
    return 0


def _check_resumed_match(out: str) -> None:
    """``match --resume`` of a run of more than two agents is refused before a deal is played (it
    finished the whole tournament, then said it was not a match)."""
    from hearts_sim.studies.tournament import load_manifest

    config = load_manifest(Path(out)).get("config")
    agents = config.get("agents") if isinstance(config, dict) else None
    if isinstance(agents, list) and len(agents) != 2:  # a malformed manifest: the resume says so
        raise UsageError(
            f"{out} holds a tournament of {len(agents)} agents, not a match: resume it with "
            f"hearts-sim tournament --resume {shell_path(out)}"
        )


def _add_tournament_options(command: argparse.ArgumentParser, agents_help: str) -> None:
    """The options of ``tournament`` and ``match``; a config file may give those it names, so
    argparse stores None for them and ``_tournament_config`` fills them in."""
    AGENTS.add_to(command, help=agents_help)
    DEALS.add_to(command, default=None)
    RULES.add_to(command, default=None)
    RULE.add_to(command)
    SEED.add_to(command, default=None)
    GAMES.add_to(command)
    OUT.add_to(command)
    CHUNK_DEALS.add_to(command, default=None)
    RESUME.add_to(command)
    REPAIR.add_to(command)
    TRUST_AGENTS.add_to(command)
    CONFIG.add_to(command)
    # checked against this machine's cores only where the run plays here (``_runner``)
    threads_help = "threads (default: all; with --cluster, per shard on the workers, default 1)"
    threads_option(threads_help, cluster=True).add_to(command)
    CLUSTER.add_to(command)
    JSON.add_to(command)
    QUIET_PROGRESS.add_to(command)
    for option in ENGINE_OPTIONS:
        option.add_to(command)


# ---------------------------------------------------------------------------- agents, rules, report
MAX_ROW = 10**15  # a row or count of hands: far past any run


AGENT_NAMES = Option(
    "names",
    TEXTS,
    "agents or levels to show (default: all; a level also shows how it was tuned)",
    [],
    metavar="NAME",
)


def _parameter_json(parameter: Any) -> dict[str, Any]:
    """A parameter for ``agents --json``: its values as values (a choice by its name, a number as a
    number, with its type and range), beside the prose the text listing shows."""
    if parameter.choices:
        shape: dict[str, Any] = {"choices": list(parameter.choices)}
    else:
        shape = {
            "type": "integer" if parameter.integer else "number",
            "low": parameter.low,
            "high": parameter.high,
        }
    return {
        "default": parameter.format(parameter.default) if parameter.choices else parameter.default,
        "description": parameter.description,
        "allowed": parameter.allowed(),
        **shape,
    }


def _level_problem(name: str) -> str | None:
    """Why the level ``name`` cannot be played (its spec refused), None if it can."""
    try:
        parse_agent(name)
    except AgentError as error:
        return str(error)
    return None


def _plain(value: Any) -> Any:
    """A level file's TOML ``value`` as strict JSON holds it: a date, time or date-time as its ISO
    text (``2026-12-07``), NaN or an infinity as None (null), within tables and arrays too. Until
    2026-12-08 a date in ``[provenance]`` was a traceback in ``hearts-sim agents``, and NaN went
    out of ``--json`` as ``NaN``, which strict parsers refuse."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, datetime.date | datetime.time):  # a datetime is a date
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _provenance_text(value: Any) -> str:
    """A ``[provenance]`` value as ``hearts-sim agents NAME`` shows it: a string, date or time as
    it reads, anything else as JSON writes it (NaN as ``NaN``: text, not JSON)."""
    shown = _plain(value) if isinstance(value, str | datetime.date | datetime.time) else value
    return shown if isinstance(shown, str) else json.dumps(shown, default=_plain)


def cmd_agents(args: argparse.Namespace) -> int:
    from agents.registry import stored_levels

    levels = stored_levels()
    known = [kind.name for kind in KINDS] + list(levels)
    for name in args.names:
        if name not in known:
            hint = did_you_mean(name, known)
            raise UsageError(f"unknown agent or level {name!r}: valid agents are {', '.join(known)}{hint}")
    chosen = set(args.names or known)
    kinds = [kind for kind in KINDS if kind.name in chosen]
    shown_levels = {name: level for name, level in levels.items() if name in chosen}
    # a level whose spec does not parse (a parameter misspelt or out of range, a loop of levels)
    # was listed as any other, exit code 0, and failed in every match
    problems = {name: _level_problem(name) for name in shown_levels}
    for name in args.names:
        if problems.get(name) is not None:
            raise UsageError(str(problems[name]))
    if args.json:
        print(
            json.dumps(
                {
                    "agents": [
                        {
                            "name": k.name,
                            "description": k.description,
                            "parameters": {p.name: _parameter_json(p) for p in k.parameters},
                        }
                        for k in kinds
                    ],
                    "levels": {
                        name: {
                            "agent": level.agent,
                            "description": level.description,
                            "max_ms_per_decision": level.max_ms_per_decision,
                            "provenance": _plain(level.provenance),
                            "problem": problems[name],  # None: it plays
                        }
                        for name, level in shown_levels.items()
                    },
                },
                allow_nan=False,  # a guard: _plain made every number finite
            )
        )
        return 0
    for kind in kinds:
        print(f"{kind.name}: {kind.description}")
        for p in kind.parameters:
            setting = f"{p.name}={p.format(p.default)}"
            print(f"    {setting:<20} {p.description} ({p.allowed()})")
    if not args.names:
        print("\nlevels (usable wherever an agent is):")
        for name, level in levels.items():
            broken = f" (CANNOT BE PLAYED: {problems[name]})" if problems[name] else ""
            print(f"    {name:<8} {level.agent}: {level.description}{broken}")
        print(
            "\nset parameters as NAME(k=v,...); combine policies per seat as pass=NAME,play=NAME; "
            "quote them in a shell: 'rule(shoot=50)'"
        )
        print("hearts-sim agents NAME shows one agent, or one level with how it was tuned")
        return 0
    for name, level in shown_levels.items():
        print(f"{name} (a level): {level.description}")
        print(f"    agent                {level.agent}")
        print(f"    max ms per decision  {level.max_ms_per_decision:g}")
        print(f"    file                 {level.path}")
        if level.provenance:
            print("    how it was tuned (the file's [provenance]):")
            for key, value in level.provenance.items():
                print(f"        {key} = {_provenance_text(value)}")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    print("presets (--rules NAME): the switches each sets apart from the standard game")
    for name, rules in PRESETS.items():
        print(f"    {name:<12} {rules.describe()}")
    print("\nswitches (--rule key=value, repeatable), at the standard game's values:")
    standard = Rules()
    for name, spec in SWITCHES.items():
        value = getattr(standard, name)
        setting = f"{name}={str(value).lower() if isinstance(value, bool) else value}"  # as --rule takes it
        print(f"    {setting:<32} {spec.doc} ({accepted(name)})")
    return 0


MIN_POINTS = Option(
    "min_points",
    COUNT,
    "raw points of a failed moon attempt (default 20 of 26, the same share of Black Maria's 43: 33)",
    None,
    1,
    MAX_POINTS,
    ("--min-points",),
)


def cmd_report(args: argparse.Namespace) -> int:
    from hearts_sim.studies.report import write_report

    written = write_report(args.dirs, args.out, min_points=args.min_points, progress=_progress(args))
    print(f"wrote {len(written)} files to {written[-1].parent} (summary: {written[-1]})")
    return 0


REPLAY_OPTIONS = (
    Option("dir", PATH, "a tournament --out directory (or its records/)", metavar="DIR"),
    Option(
        "row",
        COUNT,
        "the hand in row N of the records (from 0, as load_records numbers them)",
        None,
        0,
        MAX_ROW,
        ("--row",),
        metavar="N",
    ),
    Option("moon", FLAG, "the first hand in which the moon was shot", False, flags=("--moon",)),
    Option(
        "failed",
        FLAG,
        "the first failed moon attempt, the trick that stopped it marked",
        False,
        flags=("--failed",),
    ),
    Option("agent", TEXT, "with --moon or --failed: by this agent", flags=("--agent",), metavar="NAME"),
    Option(
        "worst",
        TEXT,
        "the deal in which this agent did worst against --against on the same cards: its worst "
        "hand in it, then the same seat's cards in the other's",
        flags=("--worst",),
        metavar="NAME",
    ),
    Option(
        "against",
        TEXT,
        "with --worst: the agent to compare with (default: the other one of a two-agent run)",
        flags=("--against",),
        metavar="NAME",
    ),
    Option(
        "nth",
        COUNT,
        "with --moon, --failed or --worst: the Nth such hand (deal)",
        1,
        1,
        MAX_ROW,
        ("--nth",),
        metavar="N",
    ),
    MIN_POINTS,
    Option(
        "game",
        COUNT,
        "a run of --games: game G hand by hand (scores, totals, moons), or with --hand one of its hands",
        None,
        0,
        MAX_ROW,
        ("--game",),
        metavar="G",
    ),
    Option(
        "seating",
        COUNT,
        "with --game: the seating it was played in",
        0,
        0,
        MAX_ROW,
        ("--seating",),
        metavar="S",
    ),
    Option(
        "hand", COUNT, "with --game: its hand H (the first is 1)", None, 1, MAX_ROW, ("--hand",), metavar="H"
    ),
    Option(
        "why",
        COUNT,
        "after the hand: what each search agent weighed when it played to trick T (the first is 1), "
        "the mean points it expected after each legal card",
        None,
        1,
        MAX_ROW,
        ("--why",),
        metavar="T",
    ),
    Option(
        "why_pass",
        FLAG,
        "after the hand: what each search agent weighed when it passed, its best candidate passes",
        False,
        flags=("--why-pass",),
    ),
    Option(
        "ask",
        TEXT,
        "with --why or --why-pass: ask this agent (a spec or level) in every seat's place instead, "
        "e.g. --ask hard",
        flags=("--ask",),
        metavar="AGENT",
    ),
    Option(
        "trust_agents",
        FLAG,
        "run the outside agents (py:, exec:) the records name, to play their hands again; they run "
        "code on this machine, so only for records you trust",
        False,
        flags=(TRUST_FLAG,),
    ),
    QUIET,
)
WHY_PASSES = 5  # candidate passes --why-pass shows a seat, best first (and the one it made)


def cmd_replay(args: argparse.Namespace) -> int:
    from agents.api import load as load_agent
    from agents.external import agents_found_in
    from hearts_sim.selfplay.records import run_folder
    from hearts_sim.studies.tournament import recorded_folder

    selectors = (
        ("--row", args.row is not None),
        ("--moon", args.moon),
        ("--failed", args.failed),
        ("--worst", args.worst is not None),
        ("--game", args.game is not None),
    )
    picked = [flag for flag, given in selectors if given]
    if args.game is None and (args.hand is not None or args.seating != 0):
        raise UsageError("--hand and --seating pick within a game: add --game G")
    if not picked:
        raise UsageError("say which hand: --row N, --moon, --failed, --worst NAME or --game G")
    if len(picked) > 1:
        raise UsageError(f"{' and '.join(picked)} pick different hands: give one")
    among = [flag for flag, given in (("--agent", args.agent is not None), ("--nth", args.nth != 1)) if given]
    if args.row is not None and among:  # named as given: --nth alone was told "--agent and --nth"
        raise UsageError(
            f"{' and '.join(among)} pick{'' if len(among) > 1 else 's'} among the moon shots or the "
            "failed attempts: add --moon or --failed"
        )
    if args.min_points is not None and not args.failed:  # it was ignored in silence
        raise UsageError("--min-points is the size of a failed attempt: add --failed")
    if args.worst is not None and args.agent is not None:
        raise UsageError("--worst names the agent itself: drop --agent")
    if args.against is not None and args.worst is None:
        raise UsageError("--against is the agent --worst compares with: add --worst NAME")
    if args.ask is not None and args.why is None and not args.why_pass:
        raise UsageError("--ask is the agent --why or --why-pass asks: add --why T or --why-pass")
    if (args.why is not None or args.why_pass) and args.game is not None and args.hand is None:
        raise UsageError("--why and --why-pass look into one hand: add --hand H")
    if args.ask is not None:
        asked = load_agent(args.ask)  # an unknown name is one line too
        if args.why is not None and not asked.scores_cards:
            raise UsageError(
                f"--ask {args.ask}: it plays without scoring its cards; ask a search agent (hard, mc, ...)"
            )
        if args.why_pass and not asked.searches_passes:  # rule, or ismcts without pass_rollouts
            raise UsageError(
                f"--ask {args.ask}: it passes without a search; ask a search agent (hard, mc, ...)"
            )
    if args.game is None or args.hand is not None:  # a hand is played again: its agents run
        recorded = _recorded_specs(run_folder(args.dir))  # before a scan of the records, too
        _check_replay_trusted(args, recorded)
    with agents_found_in(recorded_folder(run_folder(args.dir))):  # py: files named from where it began
        for name in ("worst", "against", "agent"):
            setattr(args, name, _as_recorded(getattr(args, name)))
        return _replay_picked(args)


def _as_recorded(text: str | None) -> str | None:
    """An agent as records name it: a spec written otherwise than its name there (``pass=normal,
    play=rule``, recorded with normal's spec spelled out) as that name, which ``replay --worst
    pass=normal,play=rule`` did not find until 2026-12-08; any other text as it is (its check
    names the run's agents)."""
    if text is None:
        return None
    try:
        return parse_agent(text).name
    except AgentError:  # a level removed since, an object's label: the records may still name it
        return text


def _recorded_specs(folder: Path) -> list[str]:
    """The agents a run's manifest lists (none where it has no readable one: its records name them)."""
    from hearts_sim.studies.tournament import MANIFEST, load_manifest

    try:
        specs = load_manifest(folder).get("agent_specs") if (folder / MANIFEST).is_file() else None
    except InputError:
        return []
    return [str(spec) for spec in specs] if isinstance(specs, list) else []


def _check_replay_trusted(args: argparse.Namespace, agents: Sequence[str]) -> None:
    """Replaying a hand runs its agents: ``agents.external.check_trusted`` of its outside ones."""
    from agents.external import check_trusted, names_outside_agent

    outside = [agent for agent in agents if names_outside_agent(agent)]
    check_trusted(outside, str(args.dir), args.trust_agents, from_python=False)  # an.replay runs its row


def _replayed(row: Any, args: argparse.Namespace) -> Any:
    """``analysis.replay`` of a row of the records in ``args.dir``, its outside agents trusted."""
    from hearts_sim.studies import analysis as an

    _check_replay_trusted(args, [str(row[name]) for name in row.index if str(name).startswith("agent_")])
    return an.replay(row)


def _replay_picked(args: argparse.Namespace) -> int:
    """The hand ``replay``'s options pick (checked by ``cmd_replay``), replayed and printed."""
    from hearts_sim.studies import analysis as an

    if args.game is not None:
        return _replay_game(args)
    if args.worst is not None:
        worse = an.worst_deal(args.dir, args.worst, args.against, args.nth, progress=_progress(args))
        return _replay_worst(worse, args)
    found = an.find_hand(
        args.dir,
        row=args.row,
        moon=args.moon,
        failed=args.failed,
        agent=args.agent,
        nth=args.nth,
        min_points=args.min_points,
        progress=_progress(args),
    )
    hand = _replayed(found.row, args)
    what, seat = f"row {found.index:,}", found.seat
    if seat is not None and args.failed:
        stopped = hand.moon_stopped(seat)
        if stopped is not None:  # always, in a failed attempt: another seat took points
            taker = hand.tricks[stopped].winner
            hand = hand.mark(stopped, f"seat {taker} takes points: seat {seat}'s moon is off")
        what += f", seat {seat} ({hand.agents[seat]}) takes {hand.points[seat]} points and no moon"
    elif seat is not None:
        what += f", seat {seat} ({hand.agents[seat]}) shoots the moon"
    lines = _hand_lines(hand, args)
    print(f"{what}; {_hand_name(found.row)}, seating {int(found.row['seating'])}")
    print("\n".join(lines))
    return 0


def _hand_lines(hand: Any, args: argparse.Namespace) -> list[str]:
    """A replayed hand's lines, then what its search agents (or ``--ask``) weighed: their passes
    with ``--why-pass``, their cards in trick T with ``--why T``; worked out before anything is
    printed, so that a refusal prints only its own line."""
    why = [] if args.why is None else _why_lines(hand, args.why, args.ask)
    return [str(hand), *(_why_pass_lines(hand, args.ask) if args.why_pass else []), *why]


def _why_pass_lines(hand: Any, ask: str | None) -> list[str]:
    """``--why-pass``: each search's best candidate passes, with the mean points after each."""
    if hand.pass_direction == "none":
        return ["\nthe pass: none in this hand"]
    asked = [
        (seat, hand.pass_values(seat, ask))
        for seat in range(len(hand.agents))
        if ask is not None or hand.searches_passes(seat)
    ]
    if not asked:
        return ["\nthe pass: no seat passed by a search agent; ask one with --ask hard"]
    lines = ["\nthe pass: the points each search expected this hand after its best passes (playouts)"]
    for seat, table in asked:
        chosen = _symbols(table.loc[table["chosen"], "cards"].iloc[0])
        answer = "" if ask is None else f"; {ask} would pass {chosen}"
        made = _symbols(hand.passed[seat])
        lines.append(
            f"  seat {seat} {hand.agents[seat]} passed {made}{answer}: {_weighed(table, WHY_PASSES)}"
        )
    return lines


def _weighed(table: Any, most: int | None = None) -> str:
    """A table of ``card_values`` or ``pass_values`` in one line, best first: each move (its first
    column), its mean points and playouts, ``-`` for a move made without a search; with ``most``
    only that many, and how many more there were."""
    best = table if most is None else table.head(most)
    weighed = ", ".join(
        f"{_symbols(move)} {points:.2f} ({weight:,})" if weight else f"{_symbols(move)} -"
        for move, points, weight in zip(best.iloc[:, 0], best["points"], best["weight"], strict=True)
    )
    return weighed + (f", ... ({len(table) - len(best)} more)" if len(table) > len(best) else "")


def _symbols(cards: str | CardSet) -> str:
    """Cards as the replayed hand above shows them, suit symbol first (``♦Q ♠Q``), where the
    tables of ``card_values``/``pass_values`` name them as ``CardSet.parse`` reads (``QD QS``)."""
    return str(cards if isinstance(cards, CardSet) else CardSet.parse(cards))


def _why_lines(hand: Any, number: int, ask: str | None) -> list[str]:
    """``--why``: each search's mean points after each legal card in trick ``number`` (from 1)."""
    if number > len(hand.tricks):
        raise UsageError(f"--why {number}: this hand has tricks 1 .. {len(hand.tricks)}")
    trick = number - 1
    asked = [
        (seat, card, hand.card_values(trick, seat, ask))
        for seat, card in hand.tricks[trick].cards
        if ask is not None or hand.searches(seat)
    ]
    if not asked:
        return [f"\ntrick {number}: no seat played by a search agent; ask one with --ask hard"]
    lines = [f"\ntrick {number}: the points each search expected this hand after each card (playouts)"]
    for seat, card, table in asked:
        chosen = _symbols(table.loc[table["chosen"], "card"].iloc[0])
        answer = "" if ask is None else f"; {ask} would play {chosen}"
        played = card_str(card, symbols=True)
        lines.append(f"  seat {seat} {hand.agents[seat]} played {played}{answer}: {_weighed(table)}")
    return lines


def _replay_game(args: argparse.Namespace) -> int:
    """``replay --game G``: the game hand by hand, or with ``--hand H`` that hand trick by trick."""
    from hearts_sim.studies import analysis as an

    rows = an.game_rows(args.dir, args.game, args.seating)
    if args.hand is not None:
        if args.hand > len(rows):
            raise UsageError(
                f"game {args.game:,} in seating {args.seating} lasted {len(rows)} hands, not {args.hand}"
            )
        row = rows.iloc[args.hand - 1]
        lines = _hand_lines(_replayed(row, args), args)
        print(f"{_hand_name(row)}, seating {args.seating}")
        print("\n".join(lines))
        return 0
    n = an.n_seats(rows)
    seats = ", ".join(f"seat {s} {rows[f'agent_{s}'].iloc[0]}" for s in range(n))
    result = f"{len(rows)} hands"
    if "game_won_0" in rows.columns:  # hands kept since 2026-12-05 say who won
        won = [str(s) for s in range(n) if bool(rows[f"game_won_{s}"].iloc[0])]
        result += f", won by seat {' and seat '.join(won)}" if won else ", cut off undecided"
    print(f"game {args.game:,}, seating {args.seating}: {seats}; {result}")
    table = an.game_summary(rows)
    table["moon"] = [f"seat {seat}" if seat >= 0 else "-" for seat in table["moon"]]
    print(table.to_string(index=False))
    command = f"hearts-sim replay {shell_path(args.dir)} --game {args.game} --seating {args.seating}"
    print(f"one hand trick by trick: {command} --hand H")
    return 0


def _hand_name(row: Any) -> str:
    """Which hand a record row is: its deal, or its game and its number in it (the replay's
    caption gives the game's totals before it)."""
    if "game_hand" not in row.index:
        return f"deal {int(row['deal']):,}"
    return f"game {int(row['game']):,}, its hand {int(row['game_hand']) + 1}"


def _replay_worst(worse: Any, args: argparse.Namespace) -> int:
    """The two hands of a ``DealComparison``: the worse agent's, then the other's on the same cards."""

    a_mean, b_mean = worse.means
    lines = [
        f"deal {worse.deal:,} (pass {worse.pass_direction}), number {worse.rank:,} of {worse.deals:,} "
        f"by how much worse {worse.a} did: {worse.a} {a_mean:.2f} points a hand, {worse.b} "
        f"{b_mean:.2f} ({a_mean - b_mean:+.2f})"
    ]
    for agent, found in ((worse.a, worse.a_hand), (worse.b, worse.b_hand)):
        hand = _replayed(found.row, args)
        where = f"seat {found.seat} (row {found.index:,}, seating {int(found.row['seating'])})"
        lines += [f"\n{agent} in {where}: score {hand.scores[found.seat]}", *_hand_lines(hand, args)]
    print("\n".join(lines))
    return 0


def cmd_combine(args: argparse.Namespace) -> int:
    from hearts_sim.studies.stats import format_summary
    from hearts_sim.studies.tournament import combine_runs

    summary = combine_runs(args.dirs)
    print(json.dumps(summary) if args.json else format_summary(summary))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Where each run, tune or calibration kept in a folder stands (its manifest or settings
    file alone: fast, and safe while a process writes it)."""
    from hearts_sim.selfplay.records import HELD_BY
    from hearts_sim.studies.calibrate import LEVELS_FILE, kept_levels
    from hearts_sim.studies.tournament import MANIFEST, run_status
    from hearts_sim.studies.tune import TUNE_FILE, kept_tune

    kept = {TUNE_FILE: kept_tune, LEVELS_FILE: kept_levels}  # a kept job's folder, by its settings file

    def holds(folder: Path) -> bool:
        return any((folder / name).exists() for name in HELD_BY)

    def statuses(folder: Path) -> list[Any]:
        if folder.name in HELD_BY and folder.is_file():  # the file named, not its folder
            folder = folder.parent
        job = next((kept[name] for name in kept if (folder / name).exists()), None)
        if (folder / MANIFEST).exists():
            return [run_status(folder)]
        if job is not None:
            return [job(folder).status()]
        inside = sorted(p for p in folder.iterdir() if p.is_dir() and holds(p)) if folder.is_dir() else []
        if not inside:  # a folder of runs (runs/) shows each run in it
            raise UsageError(
                f"{folder} holds no tournament run, tune or calibration "
                f"(no {MANIFEST}, {TUNE_FILE} or {LEVELS_FILE}, nor a folder that does)"
            )
        return [status for run in inside for status in statuses(run)]

    found: list[Any] = []
    refused: list[str] = []  # one folder's error does not hide the others' status
    for folder in map(Path, args.dirs):
        try:
            found += statuses(folder)
        except (InputError, UsageError) as error:
            refused.append(str(error))
        except OSError as error:  # a folder that cannot be listed
            refused.append(f"cannot read {error.filename or folder}: {error.strerror or error}")
    if found:
        print(json.dumps([s.as_dict() for s in found]) if args.json else "\n\n".join(map(str, found)))
        sys.stdout.flush()
    for reason in refused:
        print(f"hearts-sim: error: {reason}", file=sys.stderr)
    return EXIT_USAGE if refused else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from hearts_sim.apps.server import serve_command

    return serve_command(args)


# ---------------------------------------------------------------------------- levels
LADDER_OPTION = Option(
    "ladder", TEXT, "agents or levels to compare, lowest first", ",".join(LADDER), flags=("--ladder",)
)


def _deals_option(name: str, flag: str, help: str, default: int) -> Option:
    """A count of deals whose flag once said hands (``--table-hands``): the old flag is kept
    as a deprecated alias."""
    old = flag.replace("deals", "hands")
    return Option(
        name, COUNT, f"{help}; {old} is its old name, deprecated", default, 1, MAX_DEALS, (flag, old)
    )


LEVELS_OPTIONS = (
    LADDER_OPTION,
    _deals_option(
        "deals", "--deals", "deals per adjacent pair, each in every seating (14 at four players)", 2000
    ),
    Option("games", COUNT, "games to the target score per adjacent pair", 200, 1, MAX_DEALS, ("--games",)),
    _deals_option("table_deals", "--table-deals", "deals per one-vs-three cell", 500),
    _deals_option("search_deals", "--search-deals", "deals per pair when hard (a search agent) plays", 60),
    Option("search_games", COUNT, "games per pair when hard plays", 10, 1, MAX_DEALS, ("--search-games",)),
    _deals_option("search_table_deals", "--search-table-deals", "deals per one-vs-three cell with hard", 20),
    Option("timing_hands", COUNT, "hands timed per level", 10, 1, 100_000, ("--timing-hands",)),
    RULES,
    RULE,
    SEED,
    Option(
        "out", PATH, "keep the calibration in DIR, so that it can be resumed", flags=("--out",), metavar="DIR"
    ),
)
# What a calibration is started with, and ``--resume DIR`` takes from DIR/levels.json instead.
LEVELS_SETTINGS = {option.name: option for option in LEVELS_OPTIONS}
LEVELS_RUNTIME = (
    Option(
        "resume", PATH, "continue the calibration kept in DIR (--out DIR)", flags=("--resume",), metavar="DIR"
    ),
    TRUST_AGENTS,
    QUIET_PROGRESS,
    threads_option(),
    JSON,
    *ENGINE_OPTIONS,
)


def _ladder(text: str) -> list[str]:
    steps = split_specs(text, keep_empty=True)
    ladder = [spec for spec in steps if spec]
    if len(ladder) < 2:
        raise UsageError(f"--ladder {text!r} needs at least two agents, lowest first")
    if "" in steps:  # "random,,q3c" played random against q3c, a step silently gone
        raise UsageError(
            f"--ladder {text!r} has an empty step (two commas together, or one at an end): "
            "name an agent between every two commas"
        )
    for spec in ladder:
        parse_agent(spec)  # an unknown name is a one-line error before anything runs
    twice = next((spec for i, spec in enumerate(ladder) if spec in ladder[:i]), None)
    if twice is not None:  # it measured "easy over easy +0.000"
        raise UsageError(f"--ladder {text!r} names {twice} twice: a ladder's steps are different agents")
    return ladder


def cmd_levels(args: argparse.Namespace) -> int:
    from hearts_sim.studies.calibrate import (
        Budget,
        calibrate,
        format_calibration,
        kept_levels,
        resume_calibration,
    )

    _check_trust(args)
    settings = _kept_settings(args, LEVELS_SETTINGS, kept_levels(args.resume) if args.resume else None)
    runtime = {
        "threads": args.threads,
        "report": _say(args),
        "progress": _progress(args),
        "engines": _engines(args),
    }
    if args.resume:
        result = resume_calibration(args.resume, trust_agents=args.trust_agents, **runtime)
    else:
        args.rules, args.rule = settings["rules"], settings["rule"]
        ladder = _ladder(settings["ladder"])
        _warn_tuned_for_other_rules(ladder, _rules(args))
        result = calibrate(
            ladder,
            _rules(args),
            deals=Budget(settings["deals"], settings["search_deals"]),
            games=Budget(settings["games"], settings["search_games"]),
            table_deals=Budget(settings["table_deals"], settings["search_table_deals"]),
            timing_hands=settings["timing_hands"],
            seed=settings["seed"],
            out=settings["out"],
            note={**settings, "command": "hearts-sim " + shlex.join(args.argv)},
            **runtime,
        )
    print(json.dumps(result) if args.json else format_calibration(result))
    return 0


# ---------------------------------------------------------------------------- tune
TUNE_OPTIONS = (
    Option("agent", TEXT, "the policy kind to tune, e.g. rule"),
    Option("param", TEXTS, "a range to search (repeatable)", [], flags=("--param",), metavar="NAME=LO:HI"),
    Option(
        "budget",
        COUNT,
        "the most deals it plays (each in every seating: 14 at four players): half in its rounds, "
        "a quarter (two candidates: a half) to confirm the winner on fresh deals",
        20_000,
        1,
        MAX_DEALS,
        ("--budget",),
    ),
    Option("against", TEXT, "the reference field (default: the agent's defaults)", flags=("--against",)),
    Option("candidates", COUNT, "candidate settings in the first round", 16, 2, 4096, ("--candidates",)),
    Option(
        "weaker_by",
        NUMBER,
        "aim for an agent this many points per hand behind --against (an easier level)",
        None,
        0.001,
        MAX_POINTS,
        ("--weaker-by",),
        metavar="POINTS",
    ),
    RULES,
    RULE,
    SEED,
    Option("write_level", TEXT, "save the winner as level NAME", flags=("--write-level",), metavar="NAME"),
    Option(
        "levels_dir",
        PATH,
        f"where to write the level (a folder of your own plays through ${LEVELS_VARIABLE})",
        str(LEVELS_DIR),
        flags=("--levels-dir",),
    ),
    Option("description", TEXT, "the level's one-line description", flags=("--description",)),
    Option("max_ms", NUMBER, "the level's per-decision budget in ms", 10.0, 0.001, MAX_MS, ("--max-ms",)),
    Option(
        "out",
        PATH,
        "keep the tune's matches in DIR, so that it can be resumed",
        flags=("--out",),
        metavar="DIR",
    ),
)
# What a tune is started with, and ``--resume DIR`` takes from DIR/tune.json instead.
TUNE_SETTINGS = {option.name: option for option in TUNE_OPTIONS}
LEVEL_SETTINGS = {"description": "describes", "levels_dir": "is the folder of", "max_ms": "is the budget of"}
TUNE_RUNTIME = (
    Option(
        "resume",
        PATH,
        "continue the tune kept in DIR (started with --out DIR)",
        flags=("--resume",),
        metavar="DIR",
    ),
    TRUST_AGENTS,
    QUIET_PROGRESS,
    threads_option(),
    JSON,
    *ENGINE_OPTIONS,
)


def _add_kept_options(
    command: argparse.ArgumentParser, settings: Sequence[Option], runtime: Sequence[Option]
) -> None:
    """The options of a command whose job can be kept and resumed (``tune``, ``levels``): its
    ``settings`` store None when absent, so that ``--resume`` can tell them given, and a
    positional one is optional for the same reason (``_kept_settings`` fills in the defaults)."""
    for option in settings:
        extra = {"nargs": "?"} if not option.flags else {}
        option.add_to(command, default=None if option.kind not in (TEXTS, PATHS) else [], **extra)
    for option in runtime:
        option.add_to(command)


def _level_target(write_level: str | None, levels_dir: str) -> Path | None:
    """The level file ``--write-level`` will write, checked before any tuning: a plain name that
    is not a built-in agent's, in an existing, writable levels directory."""
    if not write_level:
        return None
    from agents.registry import check_level_name

    check_level_name(write_level)
    directory = Path(levels_dir).expanduser()  # a tune kept before paths were expanded
    if not directory.is_dir():
        raise UsageError(f"--levels-dir {directory} is not a directory")
    if (why := unwritable(directory)) is not None:
        raise UsageError(f"--levels-dir {directory} is not writable ({why})")
    for folder in level_folders():  # a name is one level's across the folders: a second broke them all
        held = folder / f"{write_level}.toml"
        if folder.resolve() != directory.resolve() and held.is_file():
            raise UsageError(
                f"--write-level {write_level}: the level {write_level} is in {held} already, and a level "
                f"is named once across {LEVELS_VARIABLE}: choose another name"
            )
    return directory / f"{write_level}.toml"


def _tuned_rules_replaced(target: Path, rules: Rules) -> str | None:
    """What a tune under ``rules`` that writes ``target`` replaces, where that level was tuned under
    rules that play otherwise (a level tuned for three players was replaced by one tuned for four,
    the only warning "not surely better", until 2026-12-08); None otherwise."""
    from agents.levels import LevelError, read_level

    try:
        earlier = read_level(target).tuned_under() if target.is_file() else None
    except LevelError:
        return None  # the tune replaces it; its error is what every command says of it
    if earlier is None or hands_play_alike(earlier, rules):
        return None
    return (
        f"level {target.stem} in {target} was tuned under {rules_label(earlier.describe())}: this tune, "
        f"under {rules_label(rules.describe())}, replaces it"
    )


def _kept_settings(
    args: argparse.Namespace, settings: Mapping[str, Option], job: KeptJob | None
) -> dict[str, Any]:
    """A kept job's settings (``settings``): as given, each absent one its default; or with
    ``--resume DIR`` as its file there keeps them (``job``), where giving any of them again is
    refused."""
    if job is None:
        return {
            name: option.default if getattr(args, name) is None else getattr(args, name)
            for name, option in settings.items()
        }
    again = [option for name, option in settings.items() if _given(getattr(args, name))]
    if again:
        raise UsageError(
            f"--resume continues {job.out} with the settings it was started with (in its {job.file}): "
            f"drop {again[0].flag}"
        )
    note = job.read()["note"]
    if not isinstance(note, dict) or set(note) != set(settings) | {"command"}:
        raise UsageError(
            f"{job.out} was not started by hearts-sim {job.command} --out: resume it from Python"
        )
    return note


LEVEL_TIMING_HANDS = 4  # a level's decisions timed before it is written: about 200 of them


def _level_timing(spec: str, rules: Rules, max_ms: float) -> dict[str, float | int]:
    """The tuned spec's time per decision on this machine (one thread), for the level's provenance;
    a warning where its 99th percentile passes the budget the level promises (--max-ms)."""
    from hearts_sim.studies.calibrate import decision_timing

    measured = decision_timing(spec, rules, LEVEL_TIMING_HANDS)
    timing = {
        "median_ms": measured["median_ms"],
        "p99_ms": measured["p99_ms"],
        "timed_decisions": measured["decisions"],
    }
    if timing["p99_ms"] > max_ms:
        print(
            f"hearts-sim: warning: {spec} takes {timing['p99_ms']:g} ms a decision at the 99th percentile "
            f"here (over {timing['timed_decisions']} decisions), more than the --max-ms {max_ms:g} the level "
            "promises",
            file=sys.stderr,
        )
    return timing


def cmd_tune(args: argparse.Namespace) -> int:
    from hearts_sim.studies.tune import kept_tune, parse_ranges, resume_tune, tune

    _check_trust(args)
    settings = _kept_settings(args, TUNE_SETTINGS, kept_tune(args.resume) if args.resume else None)
    if settings["agent"] is None:
        raise UsageError("tune needs AGENT, the policy kind to tune (e.g. rule), or --resume DIR")
    if settings["write_level"] is None:  # the level's own settings: --levels-dir and --max-ms were ignored
        given = next((name for name in LEVEL_SETTINGS if getattr(args, name) is not None), None)
        if given is not None:
            raise UsageError(
                f"{TUNE_SETTINGS[given].flag} {LEVEL_SETTINGS[given]} the level that --write-level NAME "
                "writes: give that too"
            )
    try:
        target = _level_target(settings["write_level"], settings["levels_dir"])
    except UsageError as error:
        if not args.resume:
            raise
        # its advice named options --resume refuses ("choose another name"), and the folder as given
        raise UsageError(
            f"the tune kept in {args.resume} was started to write level {settings['write_level']} into "
            f"{settings['levels_dir']}, and cannot now: {str(error).removeprefix('--levels-dir ')}; resume "
            f"it once it can (that folder there and writable, no other level {settings['write_level']} in "
            f"{LEVELS_VARIABLE})"
        ) from None
    runtime = {
        "threads": args.threads,
        "report": _say(args),
        "progress": _progress(args),
        "engines": _engines(args),
    }
    if args.resume:
        result = resume_tune(args.resume, trust_agents=args.trust_agents, **runtime)
    else:
        args.rules, args.rule = settings["rules"], settings["rule"]
        _warn_game_switches(_rules(args))  # tuning plays hands (it was silent until 2026-12-08)
        _warn_tuned_for_other_rules([settings["agent"], settings["against"]], _rules(args))
        if target is not None and (replaced := _tuned_rules_replaced(target, _rules(args))) is not None:
            print(f"hearts-sim: warning: {replaced}", file=sys.stderr)
        # kept absolute: a resume from another folder writes the level where this one would
        settings["levels_dir"] = str(Path(settings["levels_dir"]).absolute())
        command = "hearts-sim " + shlex.join(args.argv)
        result = tune(
            settings["agent"],
            parse_ranges(settings["param"]),
            settings["budget"],
            reference=settings["against"],
            rules=_rules(args),
            candidates=settings["candidates"],
            seed=settings["seed"],
            weaker_by=settings["weaker_by"],
            out=settings["out"],
            note={**settings, "command": command},
            **runtime,
        )
        settings["command"] = command
    unshown: OSError | None = None  # stdout on a full disk: the level is written all the same
    try:  # the result first: a level that cannot be written loses nothing
        print(json.dumps(result.as_dict()) if args.json else result, flush=True)
    except OSError as error:
        unshown = error
    if target is not None:
        shown_at = sys.stderr if args.json or unshown is not None else sys.stdout
        if _write_tuned_level(args, settings, result, target, shown_at, unshown is None) != 0:
            return EXIT_FAILURE
    if unshown is not None:
        raise unshown
    return 0


def _write_tuned_level(
    args: argparse.Namespace,
    settings: dict[str, Any],
    result: TuneResult,
    target: Path,
    shown_at: TextIO,
    printed: bool,
) -> int:
    """Time the tune's best spec and write it as the level ``--write-level`` names (``target``),
    its agent found from the folder the tune began in (``py:mine.py``); 0, or 1 where it cannot
    be written. A stop as it is timed says how to write it yet, where it was a bare
    "interrupted" after the tune's result."""
    from agents.external import agents_found_in
    from hearts_sim.studies.kept import job_resume
    from hearts_sim.studies.tune import TuneError, kept_tune, write_level

    name = settings["write_level"]
    rules = Rules.parse(settings["rules"] or "standard").with_strings(settings["rule"] or [])
    kept = kept_tune(args.resume or settings["out"]) if args.resume or settings["out"] else None
    if kept is not None and kept.progress().get("level_written") == str(target) and target.is_file():
        # a finished tune's resume rewrote it, undoing an edit or a later tune's level, until 2026-12-08
        print(
            f"level {name} was written when this tune ended ({target}), and is left as it is: "
            "remove it to write it again",
            file=shown_at,
        )
        return 0
    try:
        with signals_unwrapped(), agents_found_in(kept.folder() if args.resume and kept else None):
            timing = _level_timing(result.best.spec, rules, settings["max_ms"])
            needs = write_level(
                target,
                result,
                settings["description"] or f"tuned {settings['agent']}",
                settings["max_ms"],
                settings["command"],  # the command that started the tune, also when resumed
                timing,
            )
    except TuneError as error:
        print(f"hearts-sim: error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt as stop:
        out = args.resume or settings["out"]
        result_said = "the tune's result is above" if printed else "the tune's result could not be printed"
        then = f"{job_resume('tune', Path(out))} writes it" if out else result_said
        raise Stopped(f"before level {name} was written: {then}", isinstance(stop, Terminated)) from None
    print(f"wrote level {name} ({target})", file=shown_at)
    if kept is not None:  # its resume then leaves the level as it is (above)
        with suppress(StorageError):
            kept.record(level_written=str(target))
    for doubt in (needs, _unconfirmed(result, settings["weaker_by"])):
        if doubt is not None:
            print(f"hearts-sim: warning: level {name}: {doubt}", file=sys.stderr)
    if target.parent.resolve() not in {folder.resolve() for folder in level_folders()}:
        # under the rules it was tuned under: the line played a 3-player level at four until 2026-12-08
        under = ([f"--rules {settings['rules']}"] if settings["rules"] else []) + [
            f"--rule {shlex.quote(text)}" for text in settings["rule"] or []
        ]
        print(
            f"to play it, name its folder in {LEVELS_VARIABLE}: "
            f"{LEVELS_VARIABLE}={shell_path(target.parent)} hearts-sim match {name} normal"
            + "".join(f" {option}" for option in under),
            file=shown_at,
        )
    return 0


def _unconfirmed(result: TuneResult, weaker_by: float | None) -> str | None:
    """What the tune's fresh deals leave in doubt about the level it writes, or None: a gain whose
    95% interval holds 0, or with ``--weaker-by`` one that leaves out the distance asked for (a
    level was written in silence on -0.071 [-0.746, +0.603], no measurable gain)."""
    low, high = result.ci95
    interval = f"95% CI [{low:+.3f}, {high:+.3f}]"
    gain = f"{result.gain:+.3f} points/hand over {result.reference} on fresh deals, {interval}"
    if weaker_by is None:
        return None if low > 0 else f"{gain}: not surely better; written all the same"
    if low <= -weaker_by <= high:
        return None
    return f"{gain}: not the {-weaker_by:+.3f} --weaker-by asked for; written all the same"


# ---------------------------------------------------------------------------- play
PLAY_OPTIONS = (
    Option("level", TEXT, "the opponents: a level or any agent spec", "normal", flags=("--level",)),
    RULES,
    RULE,
    Option(
        "seed",
        SEED.kind,
        "replays the game of that seed (default: a new game each time, its seed in the first line)",
        None,
        0,
        SEED.high,
        ("--seed",),
        high_text="2**64-1",
    ),
    # any whole number here; cmd_play checks it against the rules' players (it said 0 .. 4 for 4)
    Option("seat", COUNT, "your seat (0 .. players - 1)", 0, -(10**9), 10**9, ("--seat",)),
)


def cmd_play(args: argparse.Namespace) -> int:
    from agents.external import EngineOptions, decider
    from hearts_sim.apps.terminal import InputEnded, play_in_terminal
    from hearts_sim.engine.hand import unreachable_target

    rules = _rules(args)
    n = rules.n_players
    if not 0 <= args.seat < n:
        raise UsageError(
            f"--seat {args.seat} is not valid: choose a whole number in 0 .. {n - 1} for {n} players"
        )
    opponent = parse_agent(args.level)  # an unknown opponent is one line before the game starts
    _warn_tuned_for_other_rules([args.level], rules)
    problem = unreachable_target(rules)  # as the game would refuse it: before the opponents warm up
    if problem is not None:
        raise UsageError(problem)
    outside = [policy.external for policy in (opponent.pass_policy, opponent.play_policy) if policy.external]
    for external in outside:  # a py: file or engine that cannot load: before the banner
        decider(external, EngineOptions())
    if not outside:
        _warm_up_saying_so(opponent, rules)
    try:
        # a new deal each time by default (seed 0 dealt every game alike); the banner names the seed
        seed = secrets.randbits(63) if args.seed is None else args.seed
        play_in_terminal(rules, args.level, seed=seed, seat=args.seat)
    except InputEnded as error:
        print(flush=True)  # off the prompt's line
        raise UsageError(str(error)) from None
    return 0


COMPILE_NOTICE_SECONDS = 2.0  # a warm-up that takes longer is said (compiling, or a busy machine)


def _warm_up_saying_so(opponent: Any, rules: Rules) -> None:
    """The CPU opponents' kernels compiled (or loaded from numba's cache) before the game, and
    said on stderr once that takes over ``COMPILE_NOTICE_SECONDS``: a first game sat silent for
    29 s (``hard``: 43 s) after its first line, as if hung."""
    from agents import load

    said_if_slow(
        lambda: load(opponent).warm_up(rules),
        "hearts-sim: loading the CPU opponents' kernels (compiling them the first time: a minute or two)",
        COMPILE_NOTICE_SECONDS,
    )


# ---------------------------------------------------------------------------- the parser
def _command(
    commands: Any, name: str, help: str, run: Callable[[argparse.Namespace], int], options: Sequence[Option]
) -> argparse.ArgumentParser:
    command = commands.add_parser(name, help=help, description=help)
    for option in options:
        option.add_to(command)
    command.set_defaults(run=run)
    return command


def _versions() -> str:
    """``hearts-sim 0.1.0 (Python 3.11.7, numpy 2.3.4, numba 0.62.1)``: what a bug report, or a
    cluster's version mismatch, needs."""
    import platform

    import numba
    import numpy as np

    from hearts_sim import __version__

    python = platform.python_version()
    return f"hearts-sim {__version__} (Python {python}, numpy {np.__version__}, numba {numba.__version__})"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="hearts-sim", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--version", action="version", version=_versions(), help="what is installed, then exit"
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    _command(
        commands,
        "bench",
        "random-vs-random hands/s against OpenSpiel",
        cmd_bench,
        (BENCH_HANDS, threads_option(), OPENSPIEL_HANDS, RULES, RULE, SEED, REPEATS, STARTUP, JSON, QUIET),
    )

    tournament = commands.add_parser(
        "tournament",
        help="duplicate tournament between agents",
        description="duplicate tournament between agents",
    )
    _add_tournament_options(tournament, f"agent specs (default: {' '.join(DEFAULT_AGENTS)})")
    tournament.set_defaults(run=cmd_tournament)

    match = commands.add_parser(
        "match",
        help="two agents in duplicate: A minus B with CI and p-value",
        description="two agents in duplicate: A minus B with CI and p-value",
    )
    _add_tournament_options(match, "exactly two agent specs")
    for option in SPRT_OPTIONS:
        option.add_to(match)
    match.set_defaults(run=cmd_match)

    _command(
        commands,
        "agents",
        "list the agents, their parameters and defaults, and the levels with how they were tuned",
        cmd_agents,
        (AGENT_NAMES, JSON),
    )
    _command(commands, "rules", "list the rules presets and switches", cmd_rules, ())
    levels = _command(commands, "levels", "calibrate the easy/normal/hard ladder", cmd_levels, ())
    _add_kept_options(levels, LEVELS_OPTIONS, LEVELS_RUNTIME)
    tune = _command(commands, "tune", "search an agent's parameters (successive halving)", cmd_tune, ())
    _add_kept_options(tune, TUNE_OPTIONS, TUNE_RUNTIME)
    _command(commands, "play", "play a game in the terminal against CPU opponents", cmd_play, PLAY_OPTIONS)
    _command(
        commands,
        "report",
        "moon-shot figures and summary.md from tournament records (one run or several pooled)",
        cmd_report,
        (
            Option(
                "dirs",
                PATHS,
                "tournament --out directories (or their records/); several are pooled",
                metavar="DIR",
            ),
            Option(
                "out",
                PATH,
                "output directory (default DIR/report; needed for several runs)",
                flags=("--out",),
                metavar="DIR",
            ),
            MIN_POINTS,
            QUIET_PROGRESS,
        ),
    )

    _command(
        commands,
        "replay",
        "one recorded hand of a run, trick by trick (a row, a moon shot or a failed attempt)",
        cmd_replay,
        REPLAY_OPTIONS,
    )

    _command(
        commands,
        "combine",
        "one summary of finished runs of the same agents on other seeds",
        cmd_combine,
        (Option("dirs", PATHS, "tournament or match --out directories", metavar="DIR"), JSON),
    )

    _command(
        commands,
        "status",
        "where runs, tunes and calibrations kept in folders stand: progress, writer, results so far",
        cmd_status,
        (
            Option("dirs", PATHS, "tournament, match, tune or levels --out directories", metavar="DIR"),
            Option("json", FLAG, "print a JSON list, one object per DIR", False, flags=("--json",)),
        ),
    )

    from hearts_sim.apps.server import SERVE_OPTIONS

    _command(
        commands,
        "serve",
        "answer move requests (JSON lines) on stdin/stdout or a port",
        cmd_serve,
        SERVE_OPTIONS,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    letters_where_symbols_cannot_print()
    # SIGTERM (a scheduler's time limit, ``docker stop``) handled as Ctrl-C while a command runs:
    # a tournament keeps its finished chunks and says how to resume, a server reaps its workers
    return with_signals_as_stops(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    return reported("hearts-sim", lambda: _run_command(argv))


def _run_command(argv: Sequence[str] | None) -> int:
    from agents.external import send_agent_prints_to_stderr

    send_agent_prints_to_stderr()  # stdout carries the command's results (--json, serve's answers)
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command a run records: main(argv)'s too
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
