"""``hearts-sim levels``: prove where each CPU level stands.

Three measurements: (1) the ladder random < easy < normal < hard in duplicate, each
adjacent pair as a points-per-hand gap with a 95% CI and p-value plus the head-to-head
win rate in games to the rules' target score; (2) each level against copies of each other
level in every other seat (three at four players), which is what a person meets at a table;
(3) per-decision time (median and 99th percentile) of each level on one thread.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.api import Agent
from agents.dispatch import decide_pass, decide_play
from agents.external import EngineOptions, decider
from agents.levels import LADDER, LevelError, every_level
from agents.registry import AgentSpec, parse_agent
from hearts_sim.core.checks import counted, is_real
from hearts_sim.core.errors import InputError
from hearts_sim.core.rules import Rules, resolve_rules
from hearts_sim.engine.hand import decision_seed
from hearts_sim.engine.rng import MAX_SEED, check_seed
from hearts_sim.game.hand_state import HandState
from hearts_sim.selfplay.records import LEVELS_FILE
from hearts_sim.selfplay.simulate import Table, check_count, run_hands, set_threads
from hearts_sim.studies.kept import KeptJob, job_stops, kept_job
from hearts_sim.studies.stats import Figures, exact_figures, format_p_value, mean_interval
from hearts_sim.studies.tournament import TournamentConfig, is_search_agent, play_kept

# seconds: wall clock; cpu_seconds: this thread's CPU time, what the decision costs on one core
# however loaded the machine is (another process on the core stretches the wall clock only)
DECISION = np.dtype(
    [("seconds", np.float64), ("cpu_seconds", np.float64), ("passing", np.bool_), ("choices", np.int64)]
)


def decision_times(
    spec: str, rules: Rules | str, hands: int = 20, seed: int = 0, engines: EngineOptions | None = None
) -> np.ndarray:
    """Seconds per decision (passes and plays) of ``spec`` in all seats, one call at a time."""
    return decision_log(spec, rules, hands, seed, engines)["seconds"]


def decision_log(
    spec: str, rules: Rules | str, hands: int = 20, seed: int = 0, engines: EngineOptions | None = None
) -> np.ndarray:
    """Every decision of ``spec`` in all seats over ``hands`` hands, timed one call at a time:
    a ``DECISION`` array (wall and CPU seconds, passing, choices = legal cards, or the hand when
    passing).

    One untimed hand first: a process's first call loads the compiled kernels from numba's
    cache (~0.1 s), which is start-up, not thinking time."""
    rules, hands, seed = resolve_rules(rules), check_count("hands", hands), check_seed(seed)
    _timed_hands(spec, rules, 1, (seed + hands) & MAX_SEED, engines)
    return _timed_hands(spec, rules, hands, seed, engines)


def _timed_hands(
    spec: str, rules: Rules, hands: int, seed: int, engines: EngineOptions | None = None
) -> np.ndarray:
    agent = parse_agent(spec)
    if agent.external:
        return _timed_external_hands(agent, rules, hands, seed, engines or EngineOptions())
    rules_tuple = rules.to_tuple()
    pass_policy, play_policy = agent.pass_policy, agent.play_policy
    log = []
    for hand in range(hands):
        state = HandState.deal(rules, seed=seed, hand=hand)
        record = state.record
        if state.phase == "pass":
            for seat in range(rules.n_players):
                decision = decision_seed(record, seat)
                start, cpu = time.perf_counter(), time.thread_time()  # the policy alone is timed
                cards = decide_pass(pass_policy.code, pass_policy.row, record, rules_tuple, seat, decision)
                elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
                log.append((elapsed, cpu, True, int(record["dealt"][seat]).bit_count()))
                state.pass_cards(seat, int(cards))
        while state.phase == "play":
            player = state.current_player
            assert player is not None
            seat = player
            legal, decision = np.uint64(int(state.legal_moves())), decision_seed(record, seat)
            start, cpu = time.perf_counter(), time.thread_time()  # the policy alone is timed
            card = decide_play(play_policy.code, play_policy.row, record, rules_tuple, seat, legal, decision)
            elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
            log.append((elapsed, cpu, False, int(legal).bit_count()))
            state.play(int(card))
    return np.array(log, dtype=DECISION)


def _timed_external_hands(
    agent: AgentSpec, rules: Rules, hands: int, seed: int, engines: EngineOptions
) -> np.ndarray:
    """``_timed_hands`` for an agent decided outside the compiled loop: each decision asked of it
    alone, as a table would (observation, seed), and timed."""
    log = []

    def decide(state: HandState, seat: int, passing: bool) -> Any:
        policy = agent.pass_policy if passing else agent.play_policy
        observation, hand_seed = state.observation(seat), int(state.record["hand_seed"])
        seed_bits = int(decision_seed(state.record, seat))
        start, cpu = time.perf_counter(), time.thread_time()
        if policy.external is None:  # a compiled policy beside an external one (pass=rule,...)
            move = Agent(AgentSpec(policy, policy)).act(observation, hand_seed)
        else:
            move = decider(policy.external, engines).decide([observation], passing, [seed_bits], [hand_seed])[
                0
            ]
        choices = len(observation.hand) if passing else len(observation.legal_moves())
        # an engine's own CPU time is in its process: cpu_seconds counts this side's only
        log.append((time.perf_counter() - start, time.thread_time() - cpu, passing, choices))
        return move

    for hand in range(hands):
        state = HandState.deal(rules, seed=seed, hand=hand)
        if state.phase == "pass":
            for seat in range(rules.n_players):
                state.pass_cards(seat, decide(state, seat, True))
        while state.phase == "play":
            state.play(decide(state, int(state.current_player or 0), False))
    return np.array(log, dtype=DECISION)


def one_against_three(
    level: str, others: str, rules: Rules, deals: int, seed: int, engines: EngineOptions | None = None
) -> tuple[float, float]:
    """``level``'s points per hand with ``others`` in every other seat (each seat in turn), and
    the half-width of its 95% interval over the deals (each deal's mean over the seats)."""
    n = rules.n_players
    seatings = [[level if s == seat else others for s in range(n)] for seat in range(n)]
    records = run_hands(Table.build(rules, seatings), seed, 0, deals, engines=engines)
    mine = records["score"][np.arange(len(records)), records["seating"]]  # seating i: level in seat i
    per_deal = np.bincount(records["deal"], weights=mine) / np.bincount(records["deal"])
    return float(mine.mean()), mean_interval(per_deal)[1]


@dataclass(frozen=True)
class Budget:
    """Deals (or games) per measurement: ``fast`` between cheap agents, ``search`` when a
    search agent (``hard``) sits at the table; it thinks ~10^4 times longer per card."""

    fast: int
    search: int

    def for_agents(self, *specs: str) -> int:
        return self.search if any(is_search_agent(s) for s in specs) else self.fast


class CalibrationError(InputError):
    """A calibration that cannot run or resume as asked (its --out, a different kept one)."""


def kept_levels(out: str | Path) -> KeptJob:
    """The folder of a calibration started with ``out`` (``levels.json``: its settings, its
    one-against-three cells and timings as they are measured; each pair's matches in step-K/)."""
    return KeptJob(
        Path(out), LEVELS_FILE, "levels", "calibration", CalibrationError, "measurements", format_calibration
    )


def calibrate(
    ladder: Sequence[str] = LADDER,
    rules: Rules | None = None,
    deals: Budget = Budget(2000, 60),
    games: Budget = Budget(200, 10),
    table_deals: Budget = Budget(500, 20),
    timing_hands: int = 10,
    seed: int = 0,
    threads: int | None = None,
    report: Callable[[str], None] | None = None,
    engines: EngineOptions | None = None,
    out: str | Path | None = None,
    *,
    progress: bool | None = None,
    resume: bool = False,
    note: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """All three measurements as plain data (the ``--json`` output); ``report`` hears one
    line as each measurement starts (runs with a search agent take minutes). Each pair's
    matches draw their progress bars (``progress`` as ``run_tournament``'s: shown where given,
    else on a terminal or in a notebook; where stderr is a log, lines through ``report``).

    ``out`` keeps the calibration (``kept_levels``), so that one stopped by Ctrl-C or SIGTERM
    (``kept.JobStopped``) goes on with ``resume=True`` (``resume_calibration``): the matches
    from their last chunk, the cells and timings not yet measured."""
    rules = rules or Rules()
    settings = {
        "ladder": list(ladder),
        "rules": rules.to_dict(),
        "deals": asdict(deals),
        "games": asdict(games),
        "table_deals": asdict(table_deals),
        "timing_hands": timing_hands,
        "seed": seed,
    }
    now = ["the first match"]  # what is being measured, for the message of a stop
    with kept_job(kept_levels, out, settings, note, resume) as job:
        # in a match (its chunks kept), a cell, a timing (numba's wrapping of a signal included)
        with job_stops("levels", lambda: f"during {now[0]}", job.out if job else None):
            result = _calibrate(
                ladder,
                rules,
                deals,
                games,
                table_deals,
                timing_hands,
                seed,
                threads,
                report,
                progress,
                engines,
                job,
                now,
            )
        if job is not None:
            job.finish(exact_figures(result))  # kept unrounded: status prints it as the command does
        return result


def resume_calibration(out: str | Path, *, trust_agents: bool = False, **options: Any) -> dict[str, Any]:
    """Continue the calibration kept in ``out`` with its settings; ``options``: ``threads``,
    ``report``, ``progress``, ``engines``. A ladder's outside agent (``py:``, ``exec:``) goes on
    only with ``trust_agents=True`` (``KeptJob.check_trusted``)."""
    job = kept_levels(out)
    job.check_trusted(trust_agents)
    settings = dict(job.read()["settings"])
    try:
        deals, games, table_deals = (
            Budget(**settings.pop(name)) for name in ("deals", "games", "table_deals")
        )
        rules = Rules.from_dict(settings.pop("rules"))
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise CalibrationError(f"{Path(out) / LEVELS_FILE} is not a levels file ({error})") from None
    return calibrate(
        rules=rules,
        deals=deals,
        games=games,
        table_deals=table_deals,
        out=out,
        resume=True,
        **settings,
        **options,
    )


def _calibrate(
    ladder: Sequence[str],
    rules: Rules,
    deals: Budget,
    games: Budget,
    table_deals: Budget,
    timing_hands: int,
    seed: int,
    threads: int | None,
    report: Callable[[str], None] | None,
    progress: bool | None,
    engines: EngineOptions | None,
    job: KeptJob | None,
    now: list[str],
) -> dict[str, Any]:
    """``calibrate``'s measurements; each kept in ``job`` as it is made, and read back from it
    when it was made before. ``now[0]`` says what is being measured."""
    game_rules = rules  # the house's target: games to 100 were played whatever the rules said
    copies = _number_word(rules.n_players - 1)
    set_threads(threads)
    say = report or (lambda line: None)
    kept = _read_back(job) if job is not None else {}
    # two matches a step of the ladder, a cell of the one-against-three table a pair, a timing a level
    measurements, measured = 2 * (len(ladder) - 1) + len(ladder) ** 2 + len(ladder), 0

    def count(more: int) -> None:  # ``more`` measurements made or read back
        nonlocal measured
        measured += more
        if job is not None:
            job.count_step(measured, measurements)

    count(0)
    held = _ladder_plays(ladder)

    def unchanged() -> None:
        """Each level as it was when the calibration began: a step builds its table anew, and a
        level file edited meanwhile made the steps compare two versions of it, without a word."""
        for level, was, plays in zip(ladder, held, _ladder_plays(ladder), strict=True):
            if plays != was:
                raise CalibrationError(
                    f"the level {level} changed during the calibration (its file was edited: it played "
                    f"{was}, now {plays}): its steps would compare two "
                    "versions of it; put the file back and resume, or start again in a new folder"
                )

    def match(config: TournamentConfig, folder: str) -> dict[str, Any]:
        unchanged()
        where = job.out / folder if job is not None else None
        options = {"threads": threads, "progress": progress, "engines": engines, "report": report}
        summary = play_kept(config, where, **options).summary
        count(1)
        return summary

    def keep(*keys: str) -> None:
        if job is not None:
            job.record(**{key: kept[key] for key in keys})

    steps = []
    for step, (lower, upper) in enumerate(zip(ladder, ladder[1:], strict=False), start=1):
        pair_deals, pair_games = deals.for_agents(upper, lower), games.for_agents(upper, lower)
        pair = TournamentConfig((upper, lower), rules=rules, deals=pair_deals, seed=seed)
        say(
            f"{upper} vs {lower}: {pair_deals} deals, then {pair_games} games to "
            f"{game_rules.target_score}, each in {len(pair.seatings())} seatings"
        )
        now[0] = f"the match {upper} vs {lower}"
        hands = match(pair, f"step-{step}/deals")
        now[0] = f"the games {upper} vs {lower}"
        whole = match(
            TournamentConfig((upper, lower), rules=game_rules, deals=pair_games, seed=seed, games=True),
            f"step-{step}/games",
        )
        difference = exact_figures(hands)["pairs"][0]  # unrounded: the text rounds them once
        win_rates = [agent["win_rate"] for agent in exact_figures(whole)["agents"]]
        win_gap = exact_figures(whole)["pairs"][0]["win_rate_ci95"]  # upper's win rate minus lower's
        low, high = difference["ci95"]
        steps.append(
            {
                "upper": upper,
                "lower": lower,
                "gap_points_per_hand": -difference["a_minus_b"],  # positive: upper takes fewer points
                "ci95": [None if high is None else -high, None if low is None else -low],
                "p_value": difference["p_value"],
                "significant": high is not None and high < 0,
                # the other way round: the upper level significantly weaker (JSON read it as a tie)
                "inverted": low is not None and low > 0,
                "upper_game_win_rate": win_rates[0],
                "lower_game_win_rate": win_rates[1],
                "game_win_rate_gap_ci95": win_gap,
                "deals": pair_deals,
                "games": pair_games,
            }
        )
    say(f"one against {copies}: every level against {copies} copies of every level")
    cells = kept.setdefault("one_vs_three", {})  # each cell as it is measured: "hard with three normal"
    margins = kept.setdefault("one_vs_three_ci95", {})  # each cell's half-width (none kept before 2026-12-07)
    for level in ladder:
        for other in ladder:
            name = f"{level} with three {other}"
            if name not in cells:
                unchanged()
                now[0] = f"one against {copies}, {name}"
                cell_deals = table_deals.for_agents(level, other)
                mean, margin = one_against_three(level, other, rules, cell_deals, seed, engines)
                cells[name], margins[name] = mean, _kept_margin(margin)  # unrounded: JSON rounds them
                keep("one_vs_three", "one_vs_three_ci95")  # one write: a cell is kept with its margin
            count(1)
    table = {level: {other: cells[f"{level} with three {other}"] for other in ladder} for level in ladder}
    table_ci = {level: {o: margins.get(f"{level} with three {o}") for o in ladder} for level in ladder}
    say(f"timing {timing_hands} hands per level, one decision at a time")
    timing = kept.setdefault("decision_ms", {})
    for level in ladder:
        if level not in timing:
            unchanged()
            now[0] = f"the timing of {level}"
            timing[level] = decision_timing(level, rules, timing_hands, seed, engines)
            keep("decision_ms")
        count(1)
    return Figures(
        {
            "rules": rules.describe(),
            "game_target": game_rules.target_score,
            "copies": rules.n_players - 1,
            "ladder": list(ladder),
            "steps": steps,
            "one_vs_three": table,
            "one_vs_three_ci95": table_ci,  # each cell's half-width, points per hand (None: kept without)
            "one_vs_three_deals": {
                "fast": table_deals.fast,
                "search": table_deals.search if any(map(is_search_agent, ladder)) else None,  # none plays
            },
            "decision_ms": {level: timing[level] for level in ladder},
            "budget_ms": _budgets(ladder),
        }
    )


def _kept_margin(margin: float) -> float | None:
    """A cell's half-width as kept (JSON has no NaN: one deal gives none)."""
    return None if math.isnan(margin) else margin


def _margin_text(margin: float | None) -> str:
    return "" if margin is None else f"+-{margin:.2f}"


def _ladder_plays(ladder: Sequence[str]) -> list[str]:
    """What each level of ``ladder`` plays now, as its level file (read again) says."""
    return [parse_agent(level).plays for level in ladder]


RESTART = "start the calibration again in a new folder"  # a kept file it cannot read back


def _read_back(job: KeptJob) -> dict[str, Any]:
    """The measurements a kept calibration made before, each of the kind it was written as: a
    hand-edited ``levels.json`` is refused in one line (a cell edited to "x" was printed as the
    figure, and a timing of the wrong kind was a ``TypeError``)."""
    kept = job.progress()
    cells, timings = kept.get("one_vs_three", {}), kept.get("decision_ms", {})
    margins = kept.get("one_vs_three_ci95", {})
    if not (isinstance(cells, dict) and all(is_real(value) for value in cells.values())) or not (
        isinstance(margins, dict) and all(m is None or is_real(m) for m in margins.values())
    ):
        raise job.error(f"{job.path}: its one_vs_three measurements are not numbers (edited?): {RESTART}")
    if not (
        isinstance(timings, dict)
        and all(isinstance(t, dict) and all(is_real(v) for v in t.values()) for t in timings.values())
    ):
        raise job.error(f"{job.path}: its decision_ms timings are not numbers (edited?): {RESTART}")
    return kept


def decision_timing(
    level: str, rules: Rules, hands: int, seed: int = 0, engines: EngineOptions | None = None
) -> dict[str, float | int]:
    """``level``'s time per decision over ``hands`` hands, in ms: wall clock and CPU time (the
    calibration's timings, and ``tune``'s of the level it writes)."""
    log = decision_log(level, rules, hands, seed, engines)
    seconds, cpu = log["seconds"] * 1000, log["cpu_seconds"] * 1000
    return {
        "median_ms": round(float(np.median(seconds)), 4),
        "p99_ms": round(float(np.percentile(seconds, 99)), 4),
        "median_cpu_ms": round(float(np.median(cpu)), 4),
        "p99_cpu_ms": round(float(np.percentile(cpu, 99)), 4),
        "decisions": len(seconds),
    }


def _budgets(ladder: Sequence[str]) -> dict[str, float]:
    """What each level of the ladder promises a site per decision (its file's
    ``max_ms_per_decision``), set beside its time here."""
    try:
        found = every_level()
    except LevelError:  # a broken level folder no step of this ladder read: no budgets, no failure
        return {}
    return {level: found[level].max_ms_per_decision for level in ladder if level in found}


def _win_gap_text(interval: list[float | None] | None) -> str:
    """`` (gap 95% CI [+0.201, +0.371])``: the 95% interval of the upper level's win rate less the
    lower's, where the step kept it (a calibration from before 2026-12-08, or of two games
    alone, did not)."""
    if not interval or interval[0] is None or interval[1] is None:
        return ""
    return f" (gap 95% CI [{interval[0]:+.3f}, {interval[1]:+.3f}])"


def _number_word(count: int) -> str:
    """``three`` for 3: the copies of a level at the table, in words."""
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
    return words[count] if 0 <= count < len(words) else str(count)


def _signed(value: float | None) -> str:
    """``+0.123``; ``+0.000`` for a value that rounds to zero from below (``-0.000`` read as a loss)."""
    return "-" if value is None else f"{round(value, 3) + 0.0:+.3f}"


def format_calibration(result: Mapping[str, Any]) -> str:
    """A calibration as ``hearts-sim levels`` prints it, from its unrounded figures where it holds
    them (``Figures``; one kept before 2026-12-07 kept them rounded to 3 decimals)."""
    result = exact_figures(result)
    lines = [f"rules: {result['rules']}", "", "ladder (gap = lower's points per hand minus upper's):"]
    name = max([8, *(len(x) for x in result["ladder"])])  # long specs keep the columns aligned
    target = result.get("game_target", 100)  # a calibration kept before 2026-12-06 played to 100
    for s in result["steps"]:
        mark = "significant" if s["significant"] else "NOT significant"
        if s["ci95"][1] is not None and s["ci95"][1] < 0:  # "inverted", from the CI (as kept before it)
            mark = f"INVERTED: {s['upper']} is significantly weaker"
        lines.append(
            f"  {s['upper']:>{name}} over {s['lower']:<{name}} {_signed(s['gap_points_per_hand'])} "
            f"[{_signed(s['ci95'][0])}, {_signed(s['ci95'][1])}] {format_p_value(s['p_value'])} ({mark}); "
            f"games to {target}: {s['upper_game_win_rate']:.3f} vs {s['lower_game_win_rate']:.3f} win rate"
            + _win_gap_text(s.get("game_win_rate_gap_ci95"))
        )
    ladder = result["ladder"]
    width = max(len(x) for x in ladder) + 2
    lines += [
        "",
        f"points per hand of the row level against {_number_word(result.get('copies', 3))} copies of the "
        "column level:",
        " " * width + "".join(f"{c:>{width}}" for c in ladder),
    ]
    margins = result.get("one_vs_three_ci95", {})  # a calibration kept before 2026-12-07 has none
    for level in ladder:
        row, margin = result["one_vs_three"][level], margins.get(level, {})
        lines.append(f"{level:<{width}}" + "".join(f"{row[c]:>{width}.2f}" for c in ladder))
        if any(margin.get(c) is not None for c in ladder):  # under the row: its 95% half-widths
            lines.append(" " * width + "".join(f"{_margin_text(margin.get(c)):>{width}}" for c in ladder))
    deals = result["one_vs_three_deals"]
    searched = f", {deals['search']} where a search agent plays" if deals.get("search") is not None else ""
    measured = any(m is not None for row in margins.values() for m in row.values())  # none kept before
    shown = ", with the half-width of its 95% interval under it" if measured else ""
    lines.append(f"({counted(deals['fast'], 'deal')} per cell{searched}{shown})")
    lines += ["", "per-decision time (one thread; wall clock, and CPU time of the deciding thread):"]
    budgets = result.get("budget_ms", {})  # a calibration kept before 2026-12-06 has none
    for level, t in result["decision_ms"].items():
        budget = budgets.get(level)
        past = (
            f"; PAST the {budget:g} ms its level file promises"
            if budget is not None and t["p99_ms"] > budget
            else ""
        )  # tune warned, levels said nothing
        lines.append(
            f"  {level:<{name}} median {t['median_ms']:.3f} ms, p99 {t['p99_ms']:.3f} ms; CPU median "
            f"{t['median_cpu_ms']:.3f} ms, p99 {t['p99_cpu_ms']:.3f} ms over {t['decisions']} decisions{past}"
        )
    return "\n".join(lines)
