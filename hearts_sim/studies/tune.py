"""``hearts-sim tune``: search an agent's parameters by successive halving on duplicate matches.

Each round plays every surviving candidate in a duplicate match against the reference
field on the same deals (common random numbers: the comparison between candidates is
paired), keeps the better half and doubles the deals. The winner is then re-measured on
fresh deals against the reference, so its reported gain is not inflated by selection.

"Better" is the larger gain over the reference, or, with ``weaker_by``, the gain closest
to ``-weaker_by``: how an easier level is calibrated to sit a chosen distance below a
stronger one (e.g. ``careless`` of ``rule`` against ``normal``).

>>> parse_ranges(["shoot=20:60", "defend=8:20"])
{'shoot': (20.0, 60.0), 'defend': (8.0, 20.0)}
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.external import PY, EngineOptions, ExternalSpec, found_from_anywhere
from agents.kinds import AgentError
from agents.levels import LevelError
from agents.registry import check_level_name, parse_agent
from agents.search import MAX_MS
from hearts_sim.core.checks import is_integer, is_real, shown
from hearts_sim.core.errors import InputError
from hearts_sim.core.files import write_atomically
from hearts_sim.core.rules import Rules
from hearts_sim.engine.rng import MAX_SEED, check_seed
from hearts_sim.selfplay.records import TUNE_FILE
from hearts_sim.studies.kept import JobStopped, KeptJob, job_stops, kept_job
from hearts_sim.studies.stats import Figures, exact_figures
from hearts_sim.studies.tournament import (
    JobProgress,
    ShownAsText,
    TournamentConfig,
    play_kept,
)

FRESH_SEED_OFFSET = 1_000_003  # the confirmation match uses deals no round has seen


class TuneError(InputError):
    """Bad tuning arguments (unknown parameter, empty range, budget too small)."""


def parse_ranges(texts: Sequence[str]) -> dict[str, tuple[float, float]]:
    """``name=lo:hi`` strings as {name: (lo, hi)}."""
    ranges = {}
    for text in [texts] if isinstance(texts, str) else texts:
        if not isinstance(text, str):
            raise TuneError(f"--param {shown(text)} is not of the form name=lo:hi")
        name, sep, bounds = text.partition("=")
        low, colon, high = bounds.partition(":")
        try:
            if not sep or not colon:
                raise ValueError
            lo, hi = float(low), float(high)
        except ValueError:
            raise TuneError(f"--param {text!r} is not of the form name=lo:hi") from None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise TuneError(f"--param {text!r}: the ends must be finite numbers")
        if name.strip() in ranges:
            raise TuneError(f"--param {text!r}: {name.strip()} has a range already")
        if lo > hi:
            raise TuneError(f"--param {text!r}: the low end exceeds the high end")
        ranges[name.strip()] = (lo, hi)
    if not ranges:
        raise TuneError("give at least one --param name=lo:hi")
    return ranges


@dataclass(frozen=True)
class Candidate:
    """A setting a tune tries: every parameter's value (a choice by its name, as in a spec:
    ``rollout: "greedy"``, not its code), and its spec."""

    values: dict[str, float | int | str]
    spec: str


@dataclass(repr=False)
class TuneResult(ShownAsText):
    """A tune's winner and its gain over the reference on fresh deals; ``print(result)`` and a
    notebook show what ``hearts-sim tune`` prints."""

    agent: str
    reference: str
    best: Candidate
    gain: float  # reference minus best, points per hand (positive: the tuned agent is better)
    ci95: list[float]
    rounds: list[dict[str, Any]]
    deals_played: int
    rules: str = "standard"  # the label of the rules it was tuned under (Rules.label())

    @property
    def best_is_reference(self) -> bool:
        """The winner plays as the reference does (the base spec won against itself): its gain
        measures nothing."""
        return parse_agent(self.best.spec) == parse_agent(self.reference)

    def as_dict(self) -> Figures:
        """The result as ``tune --json`` prints it (its figures rounded; ``exact``: as the kept
        file records them and the text prints them, rounded once)."""
        return Figures(
            {
                "agent": self.agent,
                "reference": self.reference,
                "best_spec": self.best.spec,
                "best_values": self.best.values,
                "best_is_reference": self.best_is_reference,
                "gain_points_per_hand": self.gain,
                "ci95": self.ci95,
                "rounds": self.rounds,
                "deals_played": self.deals_played,
                "rules": self.rules,
            }
        )

    def __str__(self) -> str:
        return format_tune(self.as_dict())


def format_tune(result: Mapping[str, Any]) -> str:
    """A tune's result (``TuneResult.as_dict``) as ``hearts-sim tune`` prints it, from its
    unrounded figures where it holds them."""
    result = exact_figures(result)
    low, high = result["ci95"]
    same = " (it plays as the reference does: the base spec won, against itself)"
    rules = result.get("rules", "standard")  # a tune kept before 2026-12-06 did not say
    under = "" if rules == "standard" else f"; rules: {rules}"
    return (
        f"best: {result['best_spec']}{same if result.get('best_is_reference') else ''}\n"
        f"gain over {result['reference']}: {result['gain_points_per_hand']:+.3f} points/hand, 95% CI "
        f"[{low:+.3f}, {high:+.3f}] (fresh deals; {result['deals_played']:,} deals in all{under})"
    )


def _candidates(agent: str, ranges: dict[str, tuple[float, float]], count: int, seed: int) -> list[Candidate]:
    """``count`` settings drawn uniformly from the ranges (integers rounded), the defaults first."""
    base = parse_agent(agent)
    if base.pass_policy != base.play_policy:
        raise TuneError("tune one policy kind at a time (e.g. rule or mc), not a pass=/play= combination")
    if base.play_policy.external is not None:
        return _external_candidates(base.play_policy.external, ranges, count, seed)
    kind = base.play_policy.kind
    kind_defaults = {p.name: p.default for p in kind.parameters}
    for name, (lo, hi) in ranges.items():
        parameter = kind.parameter(name)  # raises AgentError naming the valid parameters
        if parameter.choices:
            raise TuneError(
                f"--param {name}: it takes one of {', '.join(parameter.choices)}; set it in the spec"
            )
        if not parameter.low <= lo <= hi <= parameter.high:
            raise TuneError(f"--param {name}={lo:g}:{hi:g} leaves its allowed range: {parameter.allowed()}")
        if parameter.integer and not (float(lo).is_integer() and float(hi).is_integer()):
            raise TuneError(f"--param {name}={lo:g}:{hi:g}: {name} is a whole number, so give whole bounds")
    rng = np.random.default_rng(seed)
    defaults = dict(base.play_policy.values)
    draws = [defaults] + [
        {**defaults, **{name: rng.uniform(lo, hi) for name, (lo, hi) in ranges.items()}}
        for _ in range(count - 1)
    ]
    out = []
    for values in draws:
        typed = {
            name: int(round(v)) if isinstance(kind.parameter(name).default, int) else round(float(v), 3)
            for name, v in values.items()
        }
        arguments = ",".join(  # the searched parameters and those the base spec fixes
            f"{k}={kind.parameter(k).format(v)}"
            for k, v in typed.items()
            if k in ranges or v != kind_defaults[k]
        )
        named = {k: kind.parameter(k).format(v) if kind.parameter(k).choices else v for k, v in typed.items()}
        out.append(Candidate(named, f"{kind.name}({arguments})" if arguments else kind.name))
    return out


def _external_candidates(
    spec: ExternalSpec, ranges: dict[str, tuple[float, float]], count: int, seed: int
) -> list[Candidate]:
    """Candidates of a ``py:`` agent: its keyword arguments drawn from the ranges (an integer
    where both ends of the range are), the spec as given first."""
    if spec.kind != PY:
        raise TuneError(f"{spec}: only py: agents have keyword arguments to tune")
    rng = np.random.default_rng(seed)
    given = dict(spec.kwargs)
    out = [Candidate(dict(given), spec.text)]
    for _ in range(count - 1):
        values = dict(given)
        for name, (lo, hi) in ranges.items():
            draw = rng.uniform(lo, hi)
            values[name] = (
                int(round(draw)) if float(lo).is_integer() and float(hi).is_integer() else round(draw, 3)
            )
        arguments = ",".join(f"{k}={v!r}" for k, v in values.items())
        out.append(Candidate(values, f"py:{spec.target}({arguments})"))
    return out


def _gap(
    spec: str,
    reference: str,
    rules: Rules,
    deals: int,
    seed: int,
    threads: int | None,
    report: Callable[[str], None] | None = None,
    engines: EngineOptions | None = None,
    out: Path | None = None,
    progress: JobProgress | None = None,
) -> tuple[float, list[float]]:
    """Reference minus candidate in points per hand (positive: the candidate takes fewer points);
    with ``out``, the match is the run there: continued if it was started, read if finished.
    ``progress``: the tune's bar, which the match advances."""
    config = TournamentConfig((spec, reference), rules=rules, deals=deals, seed=seed)
    summary = play_kept(
        config,
        out,
        threads=threads,
        progress=False,
        engines=engines,
        report=report,
        on_chunk=progress.on_chunk(config) if progress is not None else None,
    ).summary
    if progress is not None:
        progress.match_done(config)
    pair = exact_figures(summary)["pairs"][0]  # unrounded: the text rounds it once
    low, high = pair["ci95"]
    return -pair["a_minus_b"] + 0.0, [  # + 0.0: no "-0.000" for a candidate that plays as the reference
        -high + 0.0 if high is not None else math.nan,
        -low + 0.0 if low is not None else math.nan,
    ]


def tune(
    agent: str,
    ranges: dict[str, tuple[float, float]],
    budget: int,
    reference: str | None = None,
    rules: Rules | None = None,
    candidates: int = 16,
    seed: int = 0,
    threads: int | None = None,
    report: Callable[[str], None] | None = None,
    weaker_by: float | None = None,
    engines: EngineOptions | None = None,
    out: str | Path | None = None,
    *,
    progress: bool | None = None,
    resume: bool = False,
    note: Mapping[str, Any] | None = None,
    stop_after_matches: int | None = None,
) -> TuneResult:
    """Successive halving with at most ``budget`` deals (each deal is played in every seating: 14
    at four players): half for the rounds, a quarter for the winner's confirmation on fresh deals
    (with two candidates a half, so the whole budget), the split the shipped levels' provenance
    was measured with.

    ``weaker_by``: aim for an agent that many points per hand behind the reference
    instead of the strongest one.

    ``out``: a folder that keeps the tune, so that one stopped (Ctrl-C, SIGTERM, a crash) goes
    on where it stopped: its settings in ``tune.json`` (with ``note``, what the caller wants
    back on resuming), each match a tournament run in ``round-R/candidate-K`` or ``confirm``.
    ``resume``: continue the tune in ``out`` (``resume_tune`` reads its settings); every match
    it finished is read back, the one under way continues from its last chunk, and the result
    is the uninterrupted tune's. Ctrl-C or SIGTERM raises ``kept.JobStopped``.

    ``progress``: one bar over every hand of the tune's matches (``tournament.JobProgress``),
    with ``report`` its lines where stderr is a log; as ``run_tournament``'s, shown where given,
    else on a terminal or in a notebook.
    ``stop_after_matches`` simulates an interruption after that many matches, for tests."""
    if weaker_by is not None and not (math.isfinite(weaker_by) and weaker_by > 0):
        raise TuneError(f"--weaker-by {weaker_by:g} must be positive (points per hand behind the reference)")
    if not is_integer(candidates) or candidates < 2:
        raise TuneError(f"--candidates {shown(candidates)}: tuning compares at least 2 candidates")
    if not is_integer(budget) or budget < 1:  # a str from a hand-edited tune.json: a TypeError
        raise TuneError(f"--budget {shown(budget)}: a number of deals, 1 or more")
    seed = check_seed(seed, "--seed")  # -1 was numpy's ValueError, deep in the first match
    rules = rules or Rules()
    reference = reference or agent
    parse_agent(reference)
    pool = _candidates(agent, ranges, candidates, seed)
    n_rounds = max(1, math.ceil(math.log2(len(pool))))
    # budget = sum over rounds of survivors * deals; deals double while survivors halve
    first_deals = budget // (2 * len(pool) * n_rounds)
    if first_deals < 2:
        raise TuneError(
            f"--budget {budget} is too small for {len(pool)} candidates: give at least "
            f"{4 * len(pool) * n_rounds} deals"
        )
    settings = {
        "agent": agent,
        "ranges": {name: [low, high] for name, (low, high) in ranges.items()},
        "budget": budget,
        "reference": reference,
        "rules": rules.to_dict(),
        "candidates": candidates,
        "seed": seed,
        "weaker_by": weaker_by,
    }
    with kept_job(kept_tune, out, settings, note, resume) as job:
        result = _successive_halving(
            agent,
            pool,
            reference,
            rules,
            budget,
            first_deals,
            n_rounds,
            seed,
            threads=threads,
            report=report,
            weaker_by=weaker_by,
            engines=engines,
            job=job,
            progress=progress,
            stop_after_matches=stop_after_matches,
        )
        if job is not None:
            job.finish(exact_figures(result.as_dict()))  # kept unrounded: status prints it as tune does
        return result


def _successive_halving(
    agent: str,
    pool: list[Candidate],
    reference: str,
    rules: Rules,
    budget: int,
    first_deals: int,
    n_rounds: int,
    seed: int,
    *,
    threads: int | None,
    report: Callable[[str], None] | None,
    weaker_by: float | None,
    engines: EngineOptions | None,
    job: KeptJob | None,
    progress: bool | None,
    stop_after_matches: int | None,
) -> TuneResult:
    """``tune``'s rounds and confirmation, each match kept in ``job``'s folder when given, with
    how many are done."""
    directory = job.out if job is not None else None
    number: dict[str, int] = {}  # a candidate's folder: its place in the first round (twins share one)
    for k, candidate in enumerate(pool):
        number.setdefault(candidate.spec, k)
    # every round's matches (the pool halves each round, the deals double), then the confirmation
    total = sum(max(1, len(pool) >> r) for r in range(n_rounds)) + 1
    confirm = max(first_deals * 2, budget // 4)
    planned = sum(max(1, len(pool) >> r) * (first_deals << r) for r in range(n_rounds)) + confirm
    seatings = len(TournamentConfig((pool[0].spec, reference), rules=rules, deals=1).seatings())
    done = 0
    if job is not None:
        job.count_step(done, total)

    def gap(spec: str, deals: int, match_seed: int, name: str) -> tuple[float, list[float]]:
        nonlocal done
        if stop_after_matches is not None and done >= stop_after_matches:
            raise JobStopped("tune", f"after {done} of {total} matches", directory, terminated=False)
        path = directory / name if directory is not None else None
        result = _gap(spec, reference, rules, deals, match_seed, threads, report, engines, path, bar)
        done += 1
        if job is not None:
            job.count_step(done, total)
        return result

    rounds, used, deals = [], 0, first_deals
    with (
        job_stops("tune", lambda: f"after {done} of {total} matches", directory),
        JobProgress(planned * seatings, progress, report) as bar,  # every hand of every match
    ):
        for round_number in range(n_rounds):
            scored = []
            for candidate in pool:
                gain, ci = gap(
                    candidate.spec,
                    deals,
                    (seed + round_number) & MAX_SEED,
                    f"round-{round_number + 1}/candidate-{number[candidate.spec]:02d}",
                )
                scored.append((gain, ci, candidate))
                used += deals
            if weaker_by is None:
                scored.sort(key=lambda item: -item[0])
            else:
                scored.sort(key=lambda item: abs(item[0] + weaker_by))
            rounds.append(
                {"deals": deals, "results": [{"spec": c.spec, "gain": round(g, 4)} for g, _, c in scored]}
            )
            if report:
                picked = "best" if weaker_by is None else "closest"
                report(  # the pick of several on the same deals: its figure is biased toward it
                    f"round {round_number + 1}: {len(pool)} candidates x {deals} deals; {picked} "
                    f"{scored[0][2].spec} gains {scored[0][0]:+.3f} points/hand over {reference} "
                    "(as picked: the confirmation measures it afresh)"
                )
            pool = [c for _, _, c in scored[: max(1, len(scored) // 2)]]
            deals *= 2
        best = pool[0]
        gain, ci = gap(best.spec, confirm, (seed + FRESH_SEED_OFFSET) & MAX_SEED, "confirm")
    used += confirm
    return TuneResult(agent, reference, best, gain, ci, rounds, used, rules.label())


def kept_tune(out: str | Path) -> KeptJob:
    """The folder of a tune started with ``out`` (``tune.json``: its settings and ``note``)."""
    return KeptJob(Path(out), TUNE_FILE, "tune", "tune", TuneError, "matches", format_tune)


def resume_tune(out: str | Path, *, trust_agents: bool = False, **options: Any) -> TuneResult:
    """Continue the tune kept in ``out`` with the settings it was started with; ``options``:
    ``threads``, ``report``, ``progress``, ``engines``. An outside agent (``py:``, ``exec:``) goes
    on only with ``trust_agents=True`` (``KeptJob.check_trusted``)."""
    job = kept_tune(out)
    job.check_trusted(trust_agents)
    settings = dict(job.read()["settings"])
    try:
        ranges = {name: (float(low), float(high)) for name, (low, high) in settings.pop("ranges").items()}
        rules = Rules.from_dict(settings.pop("rules"))
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise TuneError(f"{Path(out) / TUNE_FILE} is not a tune's file ({error})") from None
    return tune(ranges=ranges, rules=rules, out=out, resume=True, **settings, **options)


def write_level(
    path: Path,
    result: TuneResult,
    description: str,
    max_ms: float,
    command: str,
    timing: Mapping[str, float | int] | None = None,
) -> str | None:
    """Save a tuned spec as a level file (agents/levels/<name>.toml), with its provenance;
    ``timing``: its time per decision as measured where it was tuned (``median_ms``, ``p99_ms``,
    ``decisions``), beside the budget it promises. A ``py:`` file is written by its absolute path,
    found from any folder the level is played from; returned: what the level still needs of
    this folder (``found_from_anywhere``), or None."""
    if not is_real(max_ms) or not 0 < max_ms <= MAX_MS:
        raise TuneError(f"--max-ms {shown(max_ms)}: a level's budget is a number of ms in (0, {MAX_MS:g}]")
    try:
        check_level_name(path.stem)
    except LevelError as error:
        raise TuneError(str(error)) from None

    # every string as TOML writes one (a JSON string, its characters as they are: TOML has no
    # surrogate pairs): a spec with a quote (exec:python "engine.py") was pasted in raw, and the
    # file failed to read back after the whole tune, in a traceback; a name's bytes that are not
    # UTF-8 (surrogates, in the command) as \xNN, so that the file stays UTF-8
    def quoted(text: str) -> str:
        readable = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return json.dumps(readable, ensure_ascii=False)

    agent, needs = found_from_anywhere(result.best.spec)  # py:mine.py was found from here only
    try:  # a level's name, what it played spelled out: a later tune of that level changes the name's meaning
        reference = parse_agent(result.reference)
        reference_plays = reference.plays if reference.label else None
    except AgentError:
        reference_plays = None
    lines = [
        f"description = {quoted(description)}",
        f"agent = {quoted(agent)}",
        f"max_ms_per_decision = {max_ms:g}",
        "",
        "[provenance]",
        f"command = {quoted(command)}",
        f"reference = {quoted(result.reference)}",
        *([f"reference_plays = {quoted(reference_plays)}"] if reference_plays is not None else []),
        f"rules = {quoted(result.rules)}",  # a level tuned under house rules (it said so nowhere)
        f"gain_points_per_hand = {round(result.gain, 4)}",
        f"ci95 = [{round(result.ci95[0], 4)}, {round(result.ci95[1], 4)}]",
        f"deals_played = {result.deals_played}",
        *(f"{key} = {value}" for key, value in (timing or {}).items()),
        "",
    ]
    text = "\n".join(lines)
    try:
        data = text.encode()
        tomllib.loads(data.decode())  # what we write must read back: one unreadable level stops every command
    except (UnicodeError, tomllib.TOMLDecodeError) as error:
        raise TuneError(f"the level file {path} would not read back ({error}): not written") from None
    try:
        write_atomically(path, data)  # the level it replaces survives a failed write
    except OSError as error:
        raise TuneError(f"cannot write level file {path}: {error.strerror or error}") from None
    return needs


__all__ = [
    "TuneError",
    "TuneResult",
    "format_tune",
    "kept_tune",
    "parse_ranges",
    "resume_tune",
    "tune",
    "write_level",
]
