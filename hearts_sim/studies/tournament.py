"""Duplicate tournaments: every deal in a balanced set of seatings, exact running statistics,
Parquet records in chunks, and resumable runs.

Scheduling (``seatings``): with two distinct agents every deal is played in all the
seatings that mix them (14 at 4 seats); with as many agents as seats, in every
permutation; otherwise in the rotations of the agent list and their mirror images,
so each agent sits in each seat equally often and passes to each neighbour equally
often. Card luck cancels because every seating replays the same deal.

Statistics (``hearts_sim.studies.stats``) are kept as exact integer sums per chunk, so a run
that is interrupted and resumed gives a byte-identical summary.

>>> seatings(2, 4)[:3]
[(0, 0, 0, 1), (0, 0, 1, 0), (0, 0, 1, 1)]
>>> len(seatings(2, 4)), len(seatings(4, 4)), len(seatings(3, 4))
(14, 24, 6)
"""

from __future__ import annotations

import html
import itertools
import json
import math
import os
import shlex
import time
import warnings
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence, Set
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow
from pyarrow import parquet
from tqdm.auto import tqdm

from agents.external import (
    EngineOptions,
    ExternalAgentError,
    agent_folder,
    agents_found_in,
    check_trusted,
    code_held,
    code_unseen,
    decider,
    file_problem,
    is_object_label,
)
from agents.kinds import AgentError
from agents.levels import LEVELS_VARIABLE
from agents.registry import AgentSpec, parse_agent
from hearts_sim.core.cards import CardSet
from hearts_sim.core.checks import counted, is_integer, shown, store_plain
from hearts_sim.core.errors import (
    InputError,
    Stopped,
    StorageError,
    Terminated,
    interrupts_deferred,
    signals_unwrapped,
)
from hearts_sim.core.files import (
    LockHeld,
    arrow_path,
    broken_link,
    exclusive_lock,
    is_leftover_write,
    look_at_lock,
    read_json_object,
    remove_leftover_writes,
    shell_path,
    taken_out,
    unwritable,
    write_atomically,
)
from hearts_sim.core.rules import Rules, RulesError, resolve_rules
from hearts_sim.engine.rng import MAX_DEALS, SeedError, check_seed, derive_seed
from hearts_sim.selfplay.records import (
    GAME_HAND_RECORD,
    HANDS_DIR,
    LOCK,
    MANIFEST,
    NO_HAND_PARTS,
    PARTS_KEYS,
    RECORDS_DIR,
    entries_problem,
    game_columns,
    hand_columns,
    held_job,
    part_entry,
    part_path,
    part_problem,
    parts_problem,
    repair_hint,
    resuming_command,
    verified_parts,
)
from hearts_sim.selfplay.simulate import (
    SimulationError,
    Table,
    check_games_can_end,
    check_progress,
    compile_seconds,
    first_game,
    progress_shown,
    run_games,
    run_hands,
    set_threads,
)
from hearts_sim.studies.stats import (
    Sprt,
    Tally,
    format_summary,
    new_tally,
    summarize,
    tally_games,
    tally_hands,
)

FAST_CHUNK_HANDS = 1 << 16
# A game to 100 lasts 8 to 12 hands between the built-in agents (fewer to 50): a chunk of games
# is cut to about as many hands as a chunk of hands, which a run of games keeps too (``hands/``).
GAME_HANDS = 16
SLOW_CHUNK_HANDS = 64  # a search agent plays: small chunks, frequent progress
PROGRESS_LINE_SECONDS = 60.0  # stderr not a terminal: a progress line at most this often
LONG_RUN_SECONDS = 3600.0  # a run whose rest would take longer says so, once, and how to shorten it
EXTERNAL_CHUNK_HANDS = 1 << 12  # a Python agent plays: blocks big enough to batch its calls
# an engine plays: a pipe's round trip a decision, so a chunk of 4,096 hands took a minute at best
# and hours for an engine that searches, without progress or a Ctrl-C that kept any of it
ENGINE_CHUNK_HANDS = 1 << 9
SLOW_CHUNK_SECONDS = 300.0  # a first chunk slower than this says how to make chunks shorter


def is_search_agent(spec: AgentSpec | str) -> bool:
    """Whether a seat searches: milliseconds, not microseconds, per decision, so runs involving
    it are sized in tens of deals."""
    return parse_agent(spec).searches


class TournamentError(InputError):
    """A tournament that cannot run as asked (bad output directory, incompatible resume)."""


class ChunkError(TournamentError):
    """A chunk that a runner could not play (a cluster's worker that runs other code than this
    process): the run stops there, keeping every chunk finished before it."""

    failure: str | None = None  # the failure alone, without how to resume the run


class SequentialRunWarning(UserWarning):
    """``combine_runs`` pools a match stopped by its sequential test: its length follows its results."""


class UncheckedAgentWarning(UserWarning):
    """A run resumed with outside agents whose code a process cannot see (an engine's command, an
    object): a change to them since the run started would mix two programs in its records."""


class Interrupted(Stopped):
    """Ctrl-C (or SIGTERM, ``terminated``) between chunks: every finished chunk is on disk."""

    def __init__(self, done: int, total: int, out: Path | None, resume: str = "", terminated: bool = False):
        self.done, self.total, self.out = done, total, out
        # without --out it said how far it got alone, as if it could go on (tune and levels said)
        where = f"; resume with: {resume}" if out else ": nothing is kept (--out DIR keeps a run, to resume)"
        super().__init__(f"after {done} of {total} chunks{where}", terminated)


def resume_command(out: Path, objects: bool = False, manifest: Any = None) -> str:
    """How to continue the run in ``out``: the command line (the subcommand that started it, in
    ``manifest``: ``records.resuming_command``), or from Python when its agents include objects
    (recorded by name only, so the caller gives them again)."""
    if objects:
        return f"run_tournament(config, {str(out)!r}, resume=True), with its agent objects in config"
    return f"hearts-sim {resuming_command(manifest)} --resume {shell_path(out)}"


# what the runner playing the run adds to its printed resume commands (``--cluster ADDRESS``)
_RESUME_OPTIONS: ContextVar[str] = ContextVar("resume_options", default="")


def manifest_resume(out: Path, manifest: dict[str, Any]) -> str:
    """``resume_command`` for the run in ``out`` with this manifest; while a runner plays it, with
    the runner's own options (``resume_options``: a ``--cluster`` run's said to resume without
    ``--cluster``, which played the rest of a big study on the client, until 2026-12-08)."""
    objects = bool(_recorded_objects(manifest))
    command = resume_command(out, objects, manifest)
    options = _RESUME_OPTIONS.get()
    return f"{command} {options}" if options and not objects else command


@contextmanager
def _resumed_on(runner: ChunkRunner | None) -> Iterator[None]:
    """Resume commands printed within, by ``manifest_resume``, carry ``runner.resume_options``."""
    token = _RESUME_OPTIONS.set(getattr(runner, "resume_options", "") or "")
    try:
        yield
    finally:
        _RESUME_OPTIONS.reset(token)


# ---------------------------------------------------------------------------- scheduling
def seatings(n_agents: int, n_players: int) -> list[tuple[int, ...]]:
    """Seat assignments (agent index per seat) for a duplicate tournament."""
    if n_agents < 1:
        raise TournamentError("a tournament needs at least one agent")
    if n_agents == 1:
        return [(0,) * n_players]
    if n_agents == 2:
        return [s for s in itertools.product((0, 1), repeat=n_players) if 0 in s and 1 in s]
    if n_agents == n_players:
        return list(itertools.permutations(range(n_agents)))
    rotations = [tuple((r + seat) % n_agents for seat in range(n_players)) for r in range(n_agents)]
    mirrors = [tuple((r - seat) % n_agents for seat in range(n_players)) for r in range(n_agents)]
    return rotations + mirrors


# ---------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class TournamentConfig:
    """Everything that determines a tournament's results (and nothing that does not)."""

    agents: tuple[str, ...]
    rules: Rules = field(default_factory=Rules)
    deals: int = 20_000
    seed: int = 0
    games: bool = False
    chunk_deals: int = 0  # 0: chosen from the agents' speed
    # a match stopped by a sequential test: when it decides, ``deals`` becomes the deals played
    sprt: Sprt | None = None

    def __post_init__(self) -> None:
        store_plain(self)
        if not is_integer(self.deals) or not 0 < self.deals <= MAX_DEALS:
            raise SimulationError(
                f"deals={shown(self.deals)} is not valid: choose a whole number in 1 .. {MAX_DEALS}"
            )
        try:
            check_seed(self.seed)
        except SeedError as error:
            raise SimulationError(str(error)) from None
        if not isinstance(self.games, bool):
            raise SimulationError(f"games={shown(self.games)} is not valid: choose True or False")
        if self.games:
            check_games_can_end(self.rules)
        if not is_integer(self.chunk_deals) or self.chunk_deals < 0:
            raise SimulationError(
                f"chunk_deals={shown(self.chunk_deals)} is not valid: a whole number, 0 for automatic"
            )
        if self.sprt is not None:
            if not isinstance(self.sprt, Sprt):
                raise SimulationError(f"sprt={shown(self.sprt)} is not valid: a Sprt or None")
            if len(self.agents) != 2 or self.games:
                raise SimulationError(
                    "a sequential test (--sprt) stops a match of two agents over hands, "
                    f"not {'whole games' if self.games else f'{len(self.agents)} agents'}"
                )
        specs = self.specs()  # validates every agent spec
        if self.chunk_deals <= 0:
            per_chunk = FAST_CHUNK_HANDS
            if any(spec.external for spec in specs):
                per_chunk = EXTERNAL_CHUNK_HANDS
            if any(spec.engine for spec in specs):
                per_chunk = ENGINE_CHUNK_HANDS
            if any(spec.searches for spec in specs):
                per_chunk = SLOW_CHUNK_HANDS
            if self.games:  # a chunk of games holds about as many hands as one of hands
                per_chunk //= GAME_HANDS
            object.__setattr__(self, "chunk_deals", max(1, per_chunk // len(self.seatings())))

    def specs(self) -> list[AgentSpec]:
        """The agents, labelled uniquely (a spec named twice becomes ``name#1``, ``name#2``)."""
        parsed = [parse_agent(text) for text in self.agents]
        names = [p.name for p in parsed]
        return [
            AgentSpec(p.pass_policy, p.play_policy, label=f"{p.name}#{names[:i].count(p.name) + 1}")
            if names.count(p.name) > 1
            else p
            for i, p in enumerate(parsed)
        ]

    def seatings(self) -> list[tuple[int, ...]]:
        """The seatings each deal is played in (``seatings``): agent indexes per seat."""
        return seatings(len(self.agents), self.rules.n_players)

    def table(self) -> Table:
        """The seatings as the kernels take them: one table of agent specs per seating."""
        specs = self.specs()
        return Table.build(self.rules, [[specs[a] for a in s] for s in self.seatings()])

    @property
    def n_chunks(self) -> int:
        """The chunks the run is played and saved in: ``deals / chunk_deals``, rounded up."""
        return math.ceil(self.deals / self.chunk_deals)

    def to_dict(self) -> dict[str, Any]:
        """The config as the manifest records it (JSON), which ``from_dict`` reads back."""
        # field by field, not asdict(): that deep-copies an agent object, which may hold a model
        # or a lock; an object is recorded by its label (py:ClassName), as the manifest is JSON
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["agents"] = [a if isinstance(a, str) else parse_agent(a).name for a in self.agents]
        values["rules"] = self.rules.to_dict()
        values["sprt"] = asdict(self.sprt) if self.sprt is not None else None
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TournamentConfig:
        values = dict(values)
        values["agents"] = tuple(values["agents"])
        values["rules"] = Rules.from_dict(values["rules"])
        if isinstance(values.get("sprt"), dict):
            values["sprt"] = Sprt(**values["sprt"])
        return cls(**values)


# ---------------------------------------------------------------------------- running
def _prepare_out(out: Path) -> None:
    """Create ``out`` for a new run: it must not hold another run; it must be writable."""
    if (out / MANIFEST).exists():
        try:
            manifest = load_manifest(out)
            done, total = manifest.get("chunks_done"), manifest.get("chunks_total")
            finished = is_integer(done) and is_integer(total) and done >= total
            again = manifest_resume(out, manifest)
        except TournamentError:  # a manifest that cannot be read: resuming says why
            finished, again = False, resume_command(out)
        what = (  # a finished run has nothing to continue: the advice went on with it, not this one
            f"a finished run (hearts-sim status {shell_path(out)} shows it): choose"
            if finished
            else f"a run: continue it with {again}, or choose"
        )
        raise TournamentError(f"{out} already holds {what} a new --out directory")
    if not _fit_for_new_run(out):
        raise TournamentError(taken_out(out))
    try:
        (out / RECORDS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TournamentError(f"cannot write to --out {out}: {error.strerror or error}") from None
    if (why := unwritable(out)) is not None:
        raise TournamentError(f"cannot write to --out {out}: {why}")


@contextmanager
def _sole_writer(out: Path | None, resume: bool) -> Iterator[None]:
    """The run in ``out`` is written by this process alone while the block runs: ``LOCK``, a
    ``flock`` the kernel drops when the process ends (``core.files.exclusive_lock``). Without it
    a second ``--resume`` (a scheduler's retry, a second terminal) played the same chunks beside
    the first, and whichever wrote the manifest last left its count: a finished run read "39 of
    50 chunks". Nothing is created in a folder that holds no run and cannot take a new one."""
    if out is None or not ((out / MANIFEST).exists() or (not resume and _fit_for_new_run(out))):
        yield  # no run to protect: the usual checks say what is wrong with ``out``
        return
    if (broken := broken_link(out)) is not None:  # mkdir said "File exists"
        raise TournamentError(f"--out {broken}: point it at a folder, or choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TournamentError(f"cannot write to --out {out}: {error.strerror or error}") from None
    try:
        with exclusive_lock(out / LOCK):
            yield
    except LockHeld as held:
        if not resume:  # a new run that lost the folder to another: resuming would go on with that one
            raise TournamentError(f"{out} is being written by {held.who}: choose another --out") from None
        try:  # a match resumes as a match
            again = manifest_resume(out, load_manifest(out))
        except TournamentError:  # the other process's run has no manifest yet
            again = resume_command(out)
        raise TournamentError(
            f"{out} is being written by {held.who}: wait for it to end, or stop it and then resume "
            f"with {again}"
        ) from None


def _fit_for_new_run(out: Path) -> bool:
    """``out`` is missing or an empty folder, but for a lock file, empty records folders and the
    temporary of a first manifest (a run stopped before its first manifest leaves them:
    ``_prepare_out`` makes them first; killed within the manifest's write, the temporary was
    refused as another run's files, by a new run and by a tune's resume alike, until 2026-12-07)."""

    def left_empty(path: Path) -> bool:
        if path.name == LOCK or is_leftover_write(path):
            return True
        return path.name in PARTS_KEYS and path.is_dir() and not any(path.iterdir())

    return not out.exists() or (out.is_dir() and all(map(left_empty, out.iterdir())))


def _write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    write_atomically(out / MANIFEST, (_manifest_text(manifest) + "\n").encode())


def _manifest_text(manifest: dict[str, Any]) -> str:
    """The manifest as JSON, indented, with each list of parts one compact entry a line and the
    tally on one line: json's indenting encoder is pure Python, and a manifest is rewritten after
    every chunk, so a run of 20,000 chunks spent 78 ms a chunk on it at the end (the parts are 99%
    of the text); 20 ms so. The tally, exact sums for the program to read, grows with the square
    of the agents: indented, 64 agents' took 16 ms a chunk and 0.7 MB, on one line 3 ms and 0.14."""
    lists = {key: manifest[key] for key in PARTS_KEYS.values() if isinstance(manifest.get(key), list)}
    one_line = {"tally": manifest["tally"]} if "tally" in manifest else {}
    shortened = {key: f"\0{key}" for key in (*lists, *one_line)}
    text = json.dumps({**manifest, **shortened}, indent=2, sort_keys=True)
    if any(text.count(json.dumps(marker)) != 1 for marker in shortened.values()):
        return json.dumps(manifest, indent=2, sort_keys=True)  # a value that reads like a marker
    for key, entries in lists.items():
        compact = json.dumps(entries, sort_keys=True, separators=(", ", ": "))
        entry_lines = compact.replace("}, {", "},\n    {").replace("[{", "[\n    {", 1)
        text = text.replace(json.dumps(f"\0{key}"), entry_lines[:-2] + "}\n  ]" if entries else "[]")
    for key, value in one_line.items():
        text = text.replace(json.dumps(f"\0{key}"), json.dumps(value, sort_keys=True, separators=(",", ":")))
    return text


def _part_bytes(columns: dict[str, Any]) -> bytes:
    """A chunk's records as the bytes of a Parquet file (hashed before they are written)."""
    sink = pyarrow.BufferOutputStream()
    parquet.write_table(pyarrow.table(columns), sink)
    return bytes(sink.getvalue().to_pybytes())


def load_manifest(out: Path) -> dict[str, Any]:
    """The manifest of the run in ``out``: a JSON object, or a one-line ``TournamentError``."""
    missing = f"{out} holds no tournament run ({MANIFEST} is missing){held_job(out, MANIFEST)}"
    # cut short or overwritten (never by a run: each is written whole), a copy that failed
    damaged = "; a manifest that is no JSON cannot be repaired: start a new run (its records are whole)"
    return read_json_object(Path(out) / MANIFEST, TournamentError, missing, "a tournament manifest", damaged)


def recorded_folder(out: Path) -> str | None:
    """The folder the run in ``out`` was started in, where its outside agents named relative to
    it are found (``agents_found_in``); None for a run from before it was recorded, or one whose
    manifest cannot be read (the checks that follow say what is wrong)."""
    try:
        return _manifest_folder(load_manifest(out))
    except TournamentError:
        return None


def _manifest_folder(manifest: dict[str, Any]) -> str | None:
    folder = manifest.get("folder")
    return folder if isinstance(folder, str) else None


def manifest_config(
    out: Path, manifest: dict[str, Any], given: TournamentConfig | None = None
) -> TournamentConfig:
    """The configuration a manifest records; without it nothing can be resumed or repaired. An
    agent object is recorded by its label (``py:ClassName``): ``given``'s object in its place
    stands for it, when its label is the one recorded."""
    try:
        values = dict(manifest["config"])
        if given is not None and len(given.agents) == len(values["agents"]):
            values["agents"] = [
                # by its label, or by its name as it was recorded until 2026-12-07 (``object_label``)
                mine
                if not isinstance(mine, str)
                and recorded in (parse_agent(mine).name, str(getattr(mine, "name", None)))
                else recorded
                for mine, recorded in zip(given.agents, values["agents"], strict=True)
            ]
        return TournamentConfig.from_dict(values)
    except AgentError as error:  # the run is whole: its agents are not found from here
        raise TournamentError(
            f"{out}'s agents cannot be set up here ({error}): a level is found in the folders "
            f"{LEVELS_VARIABLE} names (name the one it was in when the run began), an agent's "
            "parameters as the version that began the run took them; the run is intact"
        ) from None
    except (KeyError, TypeError, ValueError) as error:
        reason = f"{error} is missing" if isinstance(error, KeyError) else str(error)
        raise TournamentError(
            f"{Path(out) / MANIFEST} holds no readable tournament configuration ({reason}): "
            "it cannot be resumed; start a new run"
        ) from None


def _chunked_as_recorded(config: TournamentConfig, out: Path) -> TournamentConfig:
    """``config`` with the chunks of the run it resumes in ``out``, where that is all that differs:
    the automatic size of a chunk for its agents may have changed since the run began (an
    engine's, 2026-12-07: a Python resume of an engine's run was refused as "a different
    tournament"). Anything else is left to ``_checked_for_resume`` to refuse."""
    if not (out / MANIFEST).is_file():
        return config
    try:
        recorded = manifest_config(out, load_manifest(out), given=config)
    except TournamentError:
        return config
    same = recorded != config and replace(recorded, chunk_deals=config.chunk_deals) == config
    return replace(config, chunk_deals=recorded.chunk_deals) if same else config


def _untrusted_manifest(out: Path, manifest: Any, problem: str) -> TournamentError:
    """The refusal of a run whose manifest's counts cannot be trusted (``manifest_problem``)."""
    hint = repair_hint(out, manifest)
    if problem == NO_HAND_PARTS and not (out / HANDS_DIR).exists():  # not damage: its code kept none
        again = f"hearts-sim {resuming_command(manifest)} --resume {shell_path(out)} --repair"
        return TournamentError(
            f"{out} is a run of games that kept no hands of them (runs made before 2026-12-05 did not): "
            f"{again} plays it again with them"
        )
    return TournamentError(f"{out / MANIFEST} cannot be trusted: {problem}; {hint} (re-plays the whole run)")


def _expected_rows(config: TournamentConfig, chunk: int) -> int:
    return min(config.chunk_deals, config.deals - chunk * config.chunk_deals) * len(config.seatings())


def manifest_problem(config: TournamentConfig, manifest: dict[str, Any]) -> str | None:
    """Why a manifest's counts cannot be trusted (chunks done, parts listed, the tally), or None.
    The tally is checked against the chunks it claims, so an edited ``chunks_done`` is caught."""
    done, total, parts = manifest.get("chunks_done"), manifest.get("chunks_total"), manifest.get("parts")
    if total != config.n_chunks:
        return f"chunks_total is {total!r}, not the configuration's {config.n_chunks}"
    for directory in _directories(config):
        if (problem := parts_problem(manifest, directory)) is not None:
            return problem
    assert isinstance(done, int) and isinstance(parts, list)
    if not 0 <= done <= config.n_chunks:
        return f"chunks_done is {done!r}, not a count in 0 .. {config.n_chunks}"
    for chunk, entry in enumerate(parts):
        if not isinstance(entry, dict) or entry.get("rows") != _expected_rows(config, chunk):
            return f"the entry of part {chunk} does not hold its {_expected_rows(config, chunk)} rows"
    if (problem := Tally.problem(manifest)) is not None:
        return problem
    tally = Tally(**manifest["tally"])
    cap = manifest.get("deals_cap", config.deals)
    if not (is_integer(cap) and cap >= 1):
        return f"deals_cap is {cap!r}, not a count of deals"
    deals = min(done * config.chunk_deals, config.deals)
    if tally.deals != deals or tally.n_agents != len(config.agents):
        return f"its tally counts {tally.deals} deals, not the {deals} of its {done} chunks"
    return None


class ShownAsText:
    """A notebook shows it as ``print`` does: its ``__str__``, the text a command prints
    (``TournamentResult``, ``RunStatus``, ``kept.JobStatus``, ``tune.TuneResult``). A dataclass
    among them is declared with ``repr=False``: IPython takes the first ``__repr__`` or
    ``_repr_pretty_`` up the class's MRO, and the dataclass's own came first (1,500 characters of
    fields in a terminal or a notebook's text output, never the table)."""

    def __str__(self) -> str:  # each class's own text: without one, __repr__ (this) would recurse
        raise NotImplementedError(f"{type(self).__name__} says what it shows in its own __str__")

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython's plain-text display
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"


@dataclass(repr=False)
class TournamentResult(ShownAsText):
    """A finished run: its configuration, its ``summary`` (the JSON of ``--json``) and where its
    records are. ``print(result)`` and a notebook show the table ``hearts-sim tournament`` prints;
    ``table()`` has the per-agent figures as a DataFrame."""

    config: TournamentConfig
    summary: dict[str, Any]
    out: Path | None = None

    def __str__(self) -> str:
        return format_summary(self.summary)

    def table(self) -> pd.DataFrame:
        """One row per agent (index: its name): points per hand with the 95% interval over deals
        (``low``, ``high``), moons made and suffered per 1,000 hands, the queen's rate, tricks per
        hand, and ``hands``: the hands the agent played, one per seat it held (two seats of a
        table, two hands), so the agents' ``hands`` add up to the run's hands times the players;
        with ``games``, the win rate (its interval ``win_rate_low``, ``win_rate_high``), final score
        and rating too."""
        rows = []
        for agent in self.summary["agents"]:
            row = {k: v for k, v in agent.items() if k not in ("ci95", "rating", "win_rate_ci95")}
            row["low"], row["high"] = agent["ci95"]
            if "win_rate" in agent:  # games (a summary kept before 2026-12-08 holds no interval)
                row["win_rate_low"], row["win_rate_high"] = agent.get("win_rate_ci95", [None, None])
            if "rating" in agent:
                row.update({f"rating_{k}": v for k, v in agent["rating"].items()})
            rows.append(row)
        order = ["name", "points_per_hand", "low", "high"]
        frame = pd.DataFrame(rows).dropna(axis=1, how="all")  # games: no queen or trick figures
        return frame[order + [c for c in frame.columns if c not in order]].set_index("name")

    def pairs(self) -> pd.DataFrame:
        """One row per pair of agents (``a``, ``b``, in the order the run names them): ``a`` minus
        ``b`` in points per hand (``a_minus_b``: negative, ``a`` did better) with its 95% interval
        over deals (``low``, ``high``) and p-value, as the printed table's difference lines (a
        p-value below 1e-300 underflows to 0.0, printed ``p < 1e-300``); with ``games``, ``a`` minus
        ``b`` in win rate too (``win_rate_a_minus_b``: positive, ``a`` won more; ``win_rate_low``,
        ``win_rate_high``, ``win_rate_p_value``)."""
        columns = ["a", "b", "a_minus_b", "low", "high", "p_value"]
        games = self.config.games
        if games:
            columns += ["win_rate_a_minus_b", "win_rate_low", "win_rate_high", "win_rate_p_value"]
        rows = []
        for pair in self.summary["pairs"]:
            row = {"a": pair["a"], "b": pair["b"], "a_minus_b": pair["a_minus_b"], "p_value": pair["p_value"]}
            row["low"], row["high"] = pair["ci95"]
            if games:
                # a summary kept before 2026-12-08 holds none of them
                row["win_rate_low"], row["win_rate_high"] = pair.get("win_rate_ci95", [None, None])
                row.update({key: pair.get(key) for key in ("win_rate_a_minus_b", "win_rate_p_value")})
            rows.append(row)
        return pd.DataFrame(rows, columns=columns)

    def directions(self) -> pd.DataFrame:
        """The difference lines by pass direction as a frame, one row per pair of agents and
        direction (``a``, ``b``, ``direction``, ``deals``, ``a_minus_b``, ``low``, ``high``,
        ``p_value``): what a pass comparison reads (``pass=X,play=rule`` against ``rule`` gains
        passing to a neighbour and loses across), reachable until 2026-12-08 only through
        ``summary["pairs"][i]["by_pass_direction"]``. Empty for games (a game passes every way)
        and for a run whose tally does not hold every deal by direction."""
        columns = ["a", "b", "direction", "deals", "a_minus_b", "low", "high", "p_value"]
        rows = [
            {"a": pair["a"], "b": pair["b"], **row, "low": row["ci95"][0], "high": row["ci95"][1]}
            for pair in self.summary["pairs"]
            for row in pair.get("by_pass_direction", [])
        ]
        return pd.DataFrame(rows, columns=columns)


def run_tournament(
    config: TournamentConfig,
    out: str | Path | None = None,
    *,
    resume: bool = False,
    repair: bool = False,
    threads: int | None = None,
    progress: bool | None = None,
    command: Sequence[str] | None = None,
    stop_after_chunks: int | None = None,
    on_chunk: Callable[[int], None] | None = None,
    runner: ChunkRunner | None = None,
    engines: EngineOptions | None = None,
    report: Callable[[str], None] | None = None,
    pace_note: bool = False,
) -> TournamentResult:
    """Play the tournament chunk by chunk; with ``out``, stream records to Parquet and keep a
    manifest so that an interrupted run can be resumed (``resume=True``) to the same result.

    A resumed run's records are checked against the manifest first (every part's size and
    SHA-256, the counts, the tally); a mismatch is a ``TournamentError`` naming the part, unless
    ``repair``: damaged parts are then re-played from their seeds (every chunk is a pure function
    of the configuration), and a manifest whose counts cannot be trusted is rebuilt by
    re-playing the run from its first chunk. ``report`` receives a line per repair step, and
    one before the first chunk when this process must compile the loop first (a cold cache),
    and with ``pace_note`` one where the rest of the run would take over an hour (``LongRunNote``:
    the command line's tournament and match, not a tune's or a calibration's matches).

    ``runner`` plays the chunks (default: ``LocalRunner``, this process, with ``engines`` for its
    external agents). ``stop_after_chunks``
    simulates an interruption after that many chunks (raises ``Interrupted``), for tests.
    A part or manifest that cannot be written (a full disk) raises ``StorageError``, which
    says how to resume; the chunks committed before it are kept.
    """
    if not isinstance(config, TournamentConfig):
        raise TypeError(
            f"run_tournament takes a TournamentConfig (make_config(...)), not {type(config).__name__}"
        )
    _check_run_arguments(out, resume, repair, progress, stop_after_chunks, report)
    out_path = Path(out) if out is not None else None
    with (
        _sole_writer(out_path, resume),  # a second process on this run is refused
        agents_found_in(recorded_folder(out_path) if out_path is not None and resume else None),
        _resumed_on(runner),
    ):
        return _play_run(
            config,
            out_path,
            resume=resume,
            repair=repair,
            threads=threads,
            progress=progress,
            command=command,
            stop_after_chunks=stop_after_chunks,
            on_chunk=on_chunk,
            runner=runner,
            engines=engines,
            report=report,
            pace_note=pace_note,
        )


def _check_run_arguments(
    out: Any, resume: Any, repair: Any, progress: Any, stop_after_chunks: Any, report: Any
) -> None:
    """One line for ``run_tournament``'s arguments of the wrong kind: ``out=5`` was Python's
    "expected str, bytes or os.PathLike object", ``resume=True`` without ``out`` was ignored, a
    ``progress`` of ``"no"`` drew the bar, and ``stop_after_chunks=-1`` said "after -1 of 1"."""
    if out is not None and not isinstance(out, str | os.PathLike):
        raise TournamentError(f"out={shown(out)} is not valid: the run's folder (a path), or None")
    for name, value in (("resume", resume), ("repair", repair)):
        if not isinstance(value, bool | np.bool_):
            raise TournamentError(f"{name}={shown(value)} is not valid: True or False")
    if (resume or repair) and out is None:
        raise TournamentError(f"{'resume' if resume else 'repair'}=True needs out, the folder of the run")
    check_progress(progress)
    if stop_after_chunks is not None and not (is_integer(stop_after_chunks) and stop_after_chunks >= 0):
        raise TournamentError(f"stop_after_chunks={shown(stop_after_chunks)} is not valid: a count of chunks")
    if report is not None and not callable(report):
        raise TournamentError(f"report={shown(report)} is not valid: a function taking a line, or None")


def _play_run(
    config: TournamentConfig,
    out_path: Path | None,
    *,
    resume: bool,
    repair: bool,
    threads: int | None,
    progress: bool | None,
    command: Sequence[str] | None,
    stop_after_chunks: int | None,
    on_chunk: Callable[[int], None] | None,
    runner: ChunkRunner | None,
    engines: EngineOptions | None,
    report: Callable[[str], None] | None,
    pace_note: bool,
) -> TournamentResult:
    """``run_tournament``'s work, with the run in ``out_path`` (if any) this process's alone."""
    if resume and out_path is not None:
        _ready_to_go_on(out_path, repair)
        config = _chunked_as_recorded(config, out_path)
    if resume and engines is None and out_path is not None:  # the time limit it was started with
        engines = recorded_engines(out_path)
    runner = runner or LocalRunner(engines)
    table = config.table()
    manifest: dict[str, Any] = {}
    if out_path is not None:
        timeout = (engines or EngineOptions()).timeout
        manifest = (
            _resumed_manifest(config, out_path, repair, runner, table, report, timeout)
            if resume
            else _new_manifest(config, out_path, table, command, timeout)
        )
    tally = (
        Tally(**manifest["tally"])
        if manifest
        else new_tally(config.seatings(), len(config.agents), config.games)
    )
    first_chunk = int(manifest.get("chunks_done", 0))
    resume_with = manifest_resume(out_path, manifest) if out_path is not None else ""
    set_threads(threads)
    seating_agents = np.array(config.seatings(), dtype=np.int64)
    n_seatings = len(seating_agents)
    unit = "game" if config.games else "hand"
    show = progress_shown(progress)
    total_jobs = config.deals * n_seatings
    done_jobs = min(first_chunk * config.chunk_deals, config.deals) * n_seatings
    lines = ProgressLines(
        report if progress is None and not show else None, config.deals, "game" if config.games else "deal"
    )
    long_run = LongRunNote(report if pace_note else None, config, resume, done_jobs // n_seatings)
    last_chunk = config.n_chunks
    if stop_after_chunks is not None:
        last_chunk = min(last_chunk, first_chunk + stop_after_chunks)
    chunk = first_chunk
    if report is not None and isinstance(runner, LocalRunner) and first_chunk < last_chunk:
        for spec in table.external_specs():  # one that cannot load says so first, not "compiling"
            decider(spec, engines or EngineOptions())
        _report_compiling(report, table, config.games)
    deals_cap = int(manifest.get("deals_cap", config.deals))
    committer = _Committer(out_path, manifest, table, on_chunk) if out_path is not None else None
    chunks = runner.chunks(config, range(first_chunk, last_chunk), hands=out_path is not None)
    try:
        with (
            signals_unwrapped(),  # a Ctrl-C that numba wrapped (a tally's kernel, a cleanup) is one too
            tqdm(total=total_jobs, initial=done_jobs, unit=unit, disable=not show, smoothing=0.05) as bar,
            closing(chunks) as played,
            committer or nullcontext(),
        ):
            try:
                for chunk, (records, hands) in played:
                    if config.games:
                        tally_games(tally, records, seating_agents, n_seatings)
                    else:
                        tally_hands(tally, records, seating_agents, n_seatings)
                    decided = config.sprt is not None and config.sprt.verdict(tally) is not None
                    if decided:  # the run becomes the one ``--deals <deals played>`` gives, finished
                        config = replace(config, deals=tally.deals)
                        last_chunk = config.n_chunks
                        if out_path is not None:
                            manifest.update(
                                config=config.to_dict(), chunks_total=config.n_chunks, deals_cap=deals_cap
                            )
                    if committer is not None:
                        committer.add(config, chunk, records, hands, tally)
                    elif on_chunk is not None:
                        on_chunk(chunk)
                    bar.update(len(records))
                    llr = ""
                    if config.sprt is not None:
                        llr = f"LLR {config.sprt.llr(tally):+.2f}"
                        bar.set_postfix_str(llr, refresh=False)
                    lines.update(tally.deals, llr)
                    long_run.update(tally.deals)
                    if decided:
                        break
            finally:
                if committer is not None:  # every chunk played is kept, whatever ends the loop
                    committer.settle()
    except KeyboardInterrupt as stop:
        done = int(manifest.get("chunks_done", chunk)) if out_path is not None else chunk
        terminated = isinstance(stop, Terminated)
        raise Interrupted(done, config.n_chunks, out_path, resume_with, terminated) from None
    except (ExternalAgentError, ChunkError) as error:  # the chunks finished before it are on disk
        if out_path is None:
            raise
        done = int(manifest.get("chunks_done", chunk))
        stopped = type(error)(
            f"{error}; {done} of {config.n_chunks} chunks are done: resume with {resume_with}"
        )
        stopped.failure = str(error)  # without the resume: a job of many runs says its own
        raise stopped from None
    if last_chunk < config.n_chunks:
        raise Interrupted(last_chunk, config.n_chunks, out_path, resume_with)
    summary = _summary(config.to_dict(), [spec.name for spec in config.specs()], tally, deals_cap)
    if out_path is not None:
        manifest["summary"] = summary
        try:
            _save_manifest(out_path, manifest, config.n_chunks, config.n_chunks)
        except StorageError:
            if first_chunk < config.n_chunks or repair:
                raise
            # a finished run's resume only reads it (a read-only mount, a folder of another
            # user's): its records and manifest are whole, and it said to resume it again
    return TournamentResult(config, summary, out_path)


def _new_manifest(
    config: TournamentConfig,
    out_path: Path,
    table: Table,
    command: Sequence[str] | None,
    timeout: float | None,
) -> dict[str, Any]:
    """The manifest of a run begun in ``out_path`` (emptied first), saved before its first chunk."""
    from hearts_sim import __version__

    _prepare_out(out_path)
    manifest = {
        "command": shlex.join(command) if command else None,
        "config": config.to_dict(),
        "agent_specs": [s.name for s in config.specs()],
        "seatings": [list(s) for s in config.seatings()],
        "version": __version__,
        "folder": str(agent_folder()),  # where its outside agents are found (``recorded_folder``)
        **_what_it_plays(config, table),
        # what an outside agent may take a decision, which a resume keeps (it fell back to 30 s)
        "engine_timeout": timeout,
    }
    _reset_progress(config, manifest)
    _save_manifest(out_path, manifest, 0, config.n_chunks)
    return manifest


def _resumed_manifest(
    config: TournamentConfig,
    out_path: Path,
    repair: bool,
    runner: ChunkRunner,
    table: Table,
    report: Callable[[str], None] | None,
    timeout: float | None,
) -> dict[str, Any]:
    """The manifest of the run in ``out_path``, checked to go on with ``config`` (``_checked_for_resume``)."""
    from hearts_sim import __version__

    manifest = _checked_for_resume(config, out_path, repair, runner, table, report or (lambda _: None))
    manifest["engine_timeout"] = timeout  # one given now lasts
    if not manifest["chunks_done"]:  # nothing played yet: this code plays all of it
        # (a py: agent fixed after it failed in the first chunk kept the failing file's
        # digest, so the finished run read as played by other code on every later resume; a level
        # edited before it kept the old settings as what the run was played with)
        manifest.update(version=__version__, **_what_it_plays(config, table))
    return manifest


def _run_folders(out: Path) -> list[Path]:
    """The folders a run in ``out`` writes in: ``out`` and those of its parts that exist."""
    return [out, *(out / name for name in PARTS_KEYS if (out / name).is_dir())]


def _ready_to_go_on(out: Path, repair: bool) -> None:
    """Before a resume of the run in ``out`` (held by this process: ``_sole_writer``) plays
    anything: the temporaries of killed writes deleted (``remove_leftover_writes``), and a
    ``StorageError`` where it has chunks to play (or parts to repair) and no file can be written
    in its folders: a read-only mount, a folder of another user's. Its resume compiled the
    kernels and played a chunk first, and lost it, until 2026-12-08. A finished run still resumes
    there (it only reads); a manifest that cannot be read is left to the checks that say what is
    wrong with it (nothing is done in a folder that holds no run)."""
    try:
        manifest = load_manifest(out)
        done, total = int(manifest["chunks_done"]), int(manifest["chunks_total"])
    except (TournamentError, KeyError, TypeError, ValueError):
        return
    for folder in _run_folders(out):
        remove_leftover_writes(folder)
    if done >= total and not repair:
        return
    for folder in _run_folders(out):
        if (why := unwritable(folder)) is not None:
            raise _storage_error(folder, OSError(why), done, total, out, manifest)


def _report_compiling(report: Callable[[str], None], table: Table, games: bool) -> None:
    """Say, before the first chunk, that its agents' kernels are compiled and for about how long
    (nothing when they are cached)."""
    seconds = compile_seconds(table, games=games)
    if seconds is not None:
        uncached = table.uncached()
        when = (
            f"about {seconds:.0f} s, in every process: {uncached}"
            if uncached
            else f"one time, about {seconds:.0f} s"
        )
        report(f"hearts-sim: compiling the kernels for these agents ({when})")


def _summary(config: dict[str, Any], names: list[str], tally: Tally, deals_cap: int) -> dict[str, Any]:
    """The summary of the deals ``tally`` counts, of a run of ``config`` (``to_dict``: a manifest
    holds it) between agents ``names``."""
    rules = Rules.from_dict(config["rules"])
    summary = summarize(
        tally,
        names,
        games=bool(config["games"]),
        seatings=len(seatings(len(names), rules.n_players)),
        rules=rules.describe(),
        seed=config["seed"],
    )
    if config.get("sprt"):
        summary.put("sprt", Sprt(**config["sprt"]).summary(tally, deals_cap))
    return summary


@dataclass(frozen=True, repr=False)
class RunStatus(ShownAsText):
    """Where the run in ``out`` stands, from its manifest alone (its records are not read: a
    resume checks those): ``summary`` the results of the deals played so far, computed as the
    finished run's are (None before the first chunk), ``writer`` the process writing it now (None:
    none), ``left`` about how many seconds that process needs still, at the pace of its last chunks,
    ``started`` when its first chunk was kept (None: not yet)."""

    out: Path
    unit: str  # "deal" or "game"
    done: int
    total: int
    chunks_done: int
    chunks_total: int
    summary: dict[str, Any] | None
    writer: LockHeld | None
    left: float | None
    resume: str
    known: bool = True  # False: no flock here to tell a run being written from a stopped one
    started: float | None = None  # the first part's mtime

    @property
    def state(self) -> str:
        """``finished``, ``running``, ``stopped``, or ``unknown`` (``known`` is False)."""
        if self.chunks_done >= self.chunks_total:
            return "finished"
        if self.writer is not None:
            return "running"
        return "stopped" if self.known else "unknown"

    def progress(self) -> str:
        """``finished, 400 deals``, ``stopped after 120 of 400 deals (30%)`` or, while it is
        written, ``120 of 400 deals (30%), being written by ..., about 22:10 left``."""
        if self.state == "finished":
            return f"finished, {counted(self.done, self.unit)}"
        progress = f"{self.done:,} of {counted(self.total, self.unit)} ({self.done / self.total:.0%})"
        if self.state == "unknown":
            return f"{progress}, being written or stopped (no flock here to tell by)"
        if self.writer is None:
            return f"stopped after {progress}"
        left = f", about {tqdm.format_interval(self.left)} left" if self.left is not None else ""
        return f"{progress}, being written by {self.writer.who}{left}"

    def line(self) -> str:
        """``progress``, after the run's folder; a stopped run says how to resume it."""
        how = {"stopped": "; resume with: ", "unknown": "; a stopped one resumes with: "}.get(self.state)
        return f"{self.out}: {self.progress()}" + (f"{how}{self.resume}" if how else "")

    def __str__(self) -> str:
        """What ``hearts-sim status`` prints: the line, then the results so far."""
        if self.summary is None:
            return self.line()
        so_far = "so far (an interval read before the end is no stopping rule: --sprt is one):\n"
        return f"{self.line()}\n\n{so_far if self.state != 'finished' else ''}{format_summary(self.summary)}"

    def as_dict(self) -> dict[str, Any]:
        """The status as JSON data (``hearts-sim status --json``)."""
        return {
            "out": str(self.out),
            "state": self.state,
            "unit": self.unit,
            "done": self.done,
            "total": self.total,
            "chunks_done": self.chunks_done,
            "chunks_total": self.chunks_total,
            "writer_pid": self.writer.pid if self.writer is not None else None,
            "seconds_left": None if self.left is None else round(self.left, 1),
            "summary": self.summary,
        }


def run_status(out: str | Path) -> RunStatus:
    """Where the run in ``out`` stands (``RunStatus``), read while it is being written or not; a
    one-line ``TournamentError`` for a folder that holds no run or a manifest that cannot be read.
    It parses no agent, so it serves runs of agent objects and of levels removed since."""
    out = Path(out)
    manifest = load_manifest(out)
    try:  # every value read here, checked here: a hand-edited manifest is one line, not a traceback
        config, names = dict(manifest["config"]), list(manifest["agent_specs"])
        done, total, deals = int(manifest["chunks_done"]), int(manifest["chunks_total"]), int(config["deals"])
        tally = Tally(**manifest["tally"])
        kept = manifest.get("summary")
        if not isinstance(kept, (dict, type(None))):
            raise TypeError(f"its summary is {shown(kept)}, not a table of figures")
        # its figures from the tally, unrounded for the table (the kept summary is rounded, and a
        # run of games of before 2026-12-07 kept one whose pair left out the lengths of its games)
        cap = int(manifest.get("deals_cap") or deals)
        summary = _summary(config, names, tally, cap) if tally.deals else None
        if (problem := entries_problem(manifest)) is not None:  # what resume and report refuse
            raise ValueError(problem)
    except (KeyError, TypeError, ValueError) as error:
        reason = f"{error} is missing" if isinstance(error, KeyError) else str(error)
        raise TournamentError(f"{out / MANIFEST} cannot be read as a run's manifest ({reason})") from None
    lock = look_at_lock(out / LOCK)
    writer = lock.holder if done < total else None
    left = None
    if writer is not None:  # at the median gap between its last parts: a stop among them counts once
        times = sorted(filter(None, (_written_at(part_path(out, c)) for c in range(max(0, done - 11), done))))
        if len(times) > 1:
            left = float(np.median(np.diff(times))) * (total - done)
    return RunStatus(
        out=out,
        unit="game" if config.get("games") else "deal",
        done=tally.deals,
        total=deals,
        chunks_done=done,
        chunks_total=total,
        summary=summary,
        writer=writer,
        left=left,
        resume=manifest_resume(out, manifest),
        known=lock.known,
        started=_written_at(part_path(out, 0)),
    )


def _written_at(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class Pace:
    """A run's pace from the end of this process's first chunk on (that chunk may have waited for
    the kernels to compile): seconds a deal (or game), told at each chunk's end."""

    def __init__(self) -> None:
        self.since: tuple[float, int] | None = None  # (time, deals) at the first chunk's end

    def per_deal(self, deals: int, now: float) -> float | None:
        """Seconds a deal since the first chunk, ``deals`` played by ``now``; None before that."""
        if self.since is None:
            self.since = (now, deals)
        since, paced = self.since
        return (now - since) / (deals - paced) if deals > paced else None


class ProgressLines:
    """The progress bar's news as a line through ``report`` at most once every
    ``PROGRESS_LINE_SECONDS``, for a run whose stderr is a log file (a long match under
    ``nohup`` or a batch system), where a bar would print nothing readable; no lines without a
    ``report``. The time left is at the pace of the deals since this process's first chunk
    (which may have waited for the kernels to compile)."""

    def __init__(self, report: Callable[[str], None] | None, total: int, unit: str) -> None:
        self.report = report
        self.total = total
        self.unit = unit
        self.start = self.last = time.monotonic()
        self.pace = Pace()

    def update(self, deals: int, extra: str = "") -> None:
        """``deals`` played so far; ``extra``: more news (the sequential test's LLR)."""
        now = time.monotonic()
        per_deal = self.pace.per_deal(deals, now)
        if self.report is None or deals >= self.total or now - self.last < PROGRESS_LINE_SECONDS:
            return
        self.last = now
        news = [f"{deals:,} of {counted(self.total, self.unit)} ({deals / self.total:.0%})"]
        news.append(f"{tqdm.format_interval(now - self.start)} so far")
        if per_deal is not None:
            news.append(f"about {tqdm.format_interval(per_deal * (self.total - deals))} left")
        if extra:
            news.append(extra)
        self.report("hearts-sim: " + ", ".join(news))


class LongRunNote:
    """Once the pace is known (the second chunk this process played: the first may have waited
    for the kernels to compile), one line through ``report`` where the rest of the run would take
    over ``LONG_RUN_SECONDS``, with the ``--deals`` an hour plays: ``tournament hard normal``
    ran at its default 20,000 deals, about 6 days here, its bar at 0 for the first minutes. Before
    that, a first chunk slower than ``SLOW_CHUNK_SECONDS`` says how to make chunks shorter."""

    def __init__(
        self, report: Callable[[str], None] | None, config: TournamentConfig, resumed: bool, deals: int
    ) -> None:
        """``deals``: those played before this process's first chunk."""
        self.report, self.resumed = report, resumed
        self.total, self.bound = config.deals, config.sprt is not None
        self.unit = "game" if config.games else "deal"
        self.pace = Pace()
        self.judged = report is None
        self.started = None if report is None else (time.monotonic(), deals)  # the first chunk's start

    def update(self, deals: int) -> None:
        """``deals`` played so far (or games)."""
        if self.judged:
            return
        now = time.monotonic()
        if self.started is not None:
            self._slow_chunk(deals, now)
        per_deal = self.pace.per_deal(deals, now)
        if per_deal is None:
            return
        self.judged = True
        left = per_deal * (self.total - deals)
        if left > LONG_RUN_SECONDS and self.report is not None:
            shorter = (
                "" if self.resumed else f"; --deals {max(1, int(3600 / per_deal)):,} plays about an hour"
            )
            bound = "at most " if self.bound else ""  # a sequential test may stop it sooner
            self.report(
                f"hearts-sim: at this pace the rest of the run takes {bound}about {_duration(left)}{shorter}"
            )

    def _slow_chunk(self, deals: int, now: float) -> None:
        """After this process's first chunk: one that took over ``SLOW_CHUNK_SECONDS`` (an engine
        that searches, a slow Python agent: 4,096 hands a chunk) says how to make them shorter,
        for progress and a Ctrl-C act between chunks only."""
        assert self.started is not None and self.report is not None
        (since, before), self.started = self.started, None
        took = now - since
        if took <= SLOW_CHUNK_SECONDS or deals >= self.total:
            return
        minute = max(1, int(60 * (deals - before) / took))
        if minute >= deals - before:  # chunks as small as they go already (a deal's hands are one)
            return
        shorter = (
            f"--chunk-deals {minute}" if not self.resumed else f"a run started with --chunk-deals {minute}"
        )
        acts = "progress, Ctrl-C and --sprt act" if self.bound else "progress and Ctrl-C act"
        self.report(
            f"hearts-sim: its first chunk of {counted(deals - before, self.unit)} took {_duration(took)}: "
            f"{acts} between chunks, and {shorter} makes them about a minute"
        )


def _duration(seconds: float) -> str:
    """``5.8 days``, ``3.2 hours`` or ``45 minutes``."""
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 60:.0f} minutes"


class JobProgress:
    """One progress bar over the matches of a kept job (a tune's rounds and confirmation), ``total``
    hands planned in all, where each match would otherwise be silent or draw a bar of its own;
    through ``report``, where stderr is a log, the lines of ``ProgressLines``. ``progress`` as
    ``run_tournament``'s: shown where given, else on a terminal or in a notebook."""

    def __init__(self, total: int, progress: bool | None, report: Callable[[str], None] | None) -> None:
        show = progress_shown(progress)
        self.bar = tqdm(total=total, unit="hand", disable=not show, smoothing=0.05)
        self.lines = ProgressLines(report if progress is None and not show else None, total, "hand")
        self.matched = 0  # the hands of the matches finished so far
        self.hands = 0  # and of the chunks of the match under way (a disabled bar counts nothing)

    def __enter__(self) -> JobProgress:
        return self

    def __exit__(self, *stopped: object) -> None:
        self.bar.close()

    def on_chunk(self, config: TournamentConfig) -> Callable[[int], None]:
        """``run_tournament``'s ``on_chunk`` for the match of ``config``: each chunk it keeps
        advances the bar by its hands."""

        def advance(chunk: int) -> None:
            self._show(self.hands + _expected_rows(config, chunk))

        return advance

    def match_done(self, config: TournamentConfig) -> None:
        """The match of ``config`` is finished: its hands all count, played now or read back."""
        self.matched += config.deals * len(config.seatings())
        self._show(self.matched)

    def _show(self, hands: int) -> None:
        if hands != self.hands:  # a match's end after its last chunk is no news
            self.bar.update(hands - self.hands)
            self.lines.update(hands)
            self.hands = hands


def _directories(config: TournamentConfig) -> tuple[str, ...]:
    """Where a run's parts go: its records, and with games every hand of them."""
    return (RECORDS_DIR, HANDS_DIR) if config.games else (RECORDS_DIR,)


def _record_columns(config: TournamentConfig, table: Table, records: np.ndarray) -> dict[str, Any]:
    """The columns of a run's ``records/`` parts: of games with ``games``, else of hands."""
    return (game_columns if config.games else hand_columns)(records, table.rules, table.labels())


def _chunk_parts(
    config: TournamentConfig,
    table: Table,
    records: np.ndarray,
    hands: np.ndarray,
    kept: Mapping[str, frozenset[str]],
) -> dict[str, tuple[bytes, int]]:
    """A chunk's Parquet part for each of the run's directories: its bytes and rows; a directory
    in ``kept`` (``_run_columns``) keeps only those of its columns."""
    columns = {RECORDS_DIR: (_record_columns(config, table, records), len(records))}
    if config.games:
        columns[HANDS_DIR] = (hand_columns(hands, table.rules, table.labels()), len(hands))
    return {
        directory: (_part_bytes({k: v for k, v in made.items() if k in kept.get(directory, made)}), rows)
        for directory, (made, rows) in columns.items()
    }


def _run_columns(out: Path, manifest: dict[str, Any]) -> dict[str, frozenset[str]]:
    """The columns of the parts a run holds already, for each of its directories (those of the
    first part that reads): a run begun by an earlier version goes on with its columns. One
    begun before 2026-12-05 and resumed by a later version had parts with the columns that say
    when each trick was won and parts without; readers keep the columns every part has, so
    ``report`` said that none of its hands said when, and ``load_records(columns=["qs_trick"])``
    refused the column."""
    kept = {}
    for directory, key in PARTS_KEYS.items():
        for chunk in range(len(manifest.get(key) or ())):
            try:
                kept[directory] = frozenset(parquet.read_schema(part_path(out, chunk, directory)).names)
                break
            except (OSError, pyarrow.ArrowException):  # missing or damaged: --repair plays it again
                continue
    return kept


def _reset_progress(config: TournamentConfig, manifest: dict[str, Any]) -> None:
    """The manifest of a run with no chunk played yet."""
    tally = new_tally(config.seatings(), len(config.agents), config.games)
    manifest.update(chunks_total=config.n_chunks, chunks_done=0, parts=[], tally=asdict(tally), summary=None)
    if config.games:
        manifest["hand_parts"] = []


def _save_manifest(out: Path, manifest: dict[str, Any], done: int, total: int) -> None:
    try:
        _write_manifest(out, manifest)
    except OSError as error:
        raise _storage_error(out / MANIFEST, error, done, total, out, manifest) from None


def _storage_error(
    path: Path, error: OSError, done: int, total: int, out: Path, manifest: dict[str, Any]
) -> StorageError:
    """A part or manifest of the run in ``out`` that could not be written: what was saved and how
    to resume; its ``failure`` (the write alone) is what a kept job says with its own resume
    (``kept.job_failure``: a tune stopped by a full disk said to resume its match alone)."""
    failure = f"cannot write {path}: {error.strerror or error}"
    if not (out / MANIFEST).exists():  # the first manifest: there is no run to resume (it said to)
        stored = StorageError(f"{failure}; nothing was played: run the same command again once it can write")
    else:
        again = manifest_resume(out, manifest)
        stored = StorageError(f"{failure}; {done} of {total} chunks are saved; resume with: {again}")
    stored.failure = failure
    return stored


def _recorded_objects(manifest: dict[str, Any]) -> list[str]:
    """The agents a manifest records by an object's label (``py:ClassName``): only Python, given
    the objects again, can resume their run."""
    config = manifest.get("config")
    agents = config.get("agents") if isinstance(config, dict) else None
    return (
        [a for a in agents if isinstance(a, str) and is_object_label(a)] if isinstance(agents, list) else []
    )


def _commit(
    out: Path,
    manifest: dict[str, Any],
    chunk: int,
    parts: dict[str, tuple[bytes, int]],
    tally: dict[str, Any],
    total: int,
) -> None:
    """Write chunk ``chunk``'s parts, then the manifest that counts them (and their checksums)
    with ``tally``, the tally as it was with chunk ``chunk`` counted (``asdict``)."""
    for directory, (data, _) in parts.items():
        part = part_path(out, chunk, directory)
        try:
            write_atomically(part, data)
        except OSError as error:
            raise _storage_error(part, error, chunk, total, out, manifest) from None
    for directory, (data, rows) in parts.items():
        key = PARTS_KEYS[directory]
        manifest[key] = [*manifest[key][:chunk], part_entry(data, rows)]
    manifest["chunks_done"] = chunk + 1
    manifest["tally"] = tally
    try:
        _write_manifest(out, manifest)
    except OSError as error:  # the parts are on disk, uncounted: resuming re-plays their chunk
        for directory in parts:
            manifest[PARTS_KEYS[directory]] = manifest[PARTS_KEYS[directory]][:chunk]
        manifest["chunks_done"] = chunk
        raise _storage_error(out / MANIFEST, error, chunk, total, out, manifest) from None


# A run with --out encodes each chunk's Parquet parts on this many threads while the next chunks
# play (pyarrow releases the GIL), and commits them in order; at most twice as many wait.
ENCODING_THREADS = 2
# A chunk that took longer than this to play is committed as soon as its parts are encoded
# (milliseconds), not once the next chunk has played: a kill lost the last finished chunk of a
# slow run (minutes of hard), and status saw its parts come in pairs. Fast chunks keep the overlap.
PROMPT_COMMIT_SECONDS = 0.5


class _Committer:
    """The chunks of a run kept in ``out`` on their way to disk: each chunk's parts are encoded
    on a pool of threads while the next chunks play, and committed by the calling thread in chunk
    order (its parts, then the manifest that counts them; ``on_chunk`` after each). Encoding a
    chunk took as long as playing it (random against lowest: 33 and 37 ms for 65,000 hands, the
    play on two threads), and the two ran one after the other."""

    def __init__(
        self, out: Path, manifest: dict[str, Any], table: Table, on_chunk: Callable[[int], None] | None
    ) -> None:
        self.out, self.manifest, self.table, self.on_chunk = out, manifest, table, on_chunk
        self.kept = _run_columns(out, manifest)
        self.pool = ThreadPoolExecutor(ENCODING_THREADS, thread_name_prefix="hearts-sim-parts")
        self.waiting: deque[tuple[int, Future[dict[str, tuple[bytes, int]]], dict[str, Any], int]] = deque()
        self.failed = False  # a commit failed: nothing after it may be counted
        self.added = time.monotonic()  # when the last chunk came: the next one's time to play

    def __enter__(self) -> _Committer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def add(
        self, config: TournamentConfig, chunk: int, records: np.ndarray, hands: np.ndarray, tally: Tally
    ) -> None:
        """Queue chunk ``chunk`` (``tally`` counts it) and commit the chunks ready, in order."""
        parts = self.pool.submit(_chunk_parts, config, self.table, records, hands, self.kept)
        self.waiting.append((chunk, parts, asdict(tally), config.n_chunks))
        now = time.monotonic()
        slow, self.added = now - self.added > PROMPT_COMMIT_SECONDS, now
        self._commit_ready(everything=slow)

    def settle(self) -> None:
        """Commit every chunk queued (the run ends or stops), unless a commit failed."""
        if not self.failed:
            self._commit_ready(everything=True)

    def _commit_ready(self, everything: bool) -> None:
        """Commit the chunks at the head of the queue whose parts are encoded (all with
        ``everything``, and enough to keep the queue short)."""
        while self.waiting and (
            everything or self.waiting[0][1].done() or len(self.waiting) > 2 * ENCODING_THREADS
        ):
            with interrupts_deferred():  # a Ctrl-C comes after the commit, not inside it
                chunk, parts, tally, total = self.waiting.popleft()
                try:
                    _commit(self.out, self.manifest, chunk, parts.result(), tally, total)
                except BaseException:
                    self.failed = True
                    raise
            if self.on_chunk is not None:
                self.on_chunk(chunk)


def _checked_for_resume(
    config: TournamentConfig,
    out: Path,
    repair: bool,
    runner: ChunkRunner,
    table: Table,
    report: Callable[[str], None],
) -> dict[str, Any]:
    """The manifest of the run in ``out``, verified against ``config`` and the records on disk
    (with ``repair``: made to match them, by re-playing what is damaged)."""
    manifest = load_manifest(out)
    if manifest_config(out, manifest, given=config) != config:
        raise TournamentError(
            f"{out} holds a different tournament; resume it with "
            "its own arguments (hearts-sim tournament --resume DIR)"
        )
    problem = manifest_problem(config, manifest)
    if problem is not None:
        if not repair:
            raise _untrusted_manifest(out, manifest, problem)
        report(f"hearts-sim: repair: {out / MANIFEST}: {problem}; re-playing the run from its first chunk")
        manifest.pop("summary", None)
        _reset_progress(config, manifest)
        _save_manifest(out, manifest, 0, config.n_chunks)
        return manifest
    damaged = sorted(
        (chunk, str(part), problem)
        for directory in _directories(config)
        for chunk, entry in enumerate(manifest[PARTS_KEYS[directory]])
        if (problem := part_problem(part := part_path(out, chunk, directory), entry)) is not None
    )
    if damaged and not repair:
        _, name, problem = damaged[0]
        more = f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else ""
        raise TournamentError(f"records part {name} {problem}{more}; {repair_hint(out, manifest)}")
    for chunk in sorted({chunk for chunk, _, _ in damaged}):  # before one is played over
        _refuse_foreign_part(config, out, chunk)
    # more to play, or to play again: by the code that played it? (until 2026-12-07 a repair
    # re-played the damaged chunks first, by whatever code resumed, beside the other chunks'
    # records and tally: a run of an old level took the new one's)
    to_play = bool(damaged) or int(manifest["chunks_done"]) < config.n_chunks
    if to_play and _check_same_play(config, out, manifest, table, report, {chunk for chunk, _, _ in damaged}):
        _keep_what_it_plays(config, manifest, table)
    for chunk, name, problem in damaged:
        report(f"hearts-sim: repair: {name} {problem}; re-playing chunk {chunk} from its seeds")
    kept = _run_columns(out, manifest)  # a part re-played as the run's others are, columns too
    for chunk in sorted({chunk for chunk, _, _ in damaged}):
        for _, (records, hands) in runner.chunks(config, range(chunk, chunk + 1)):
            for directory, (data, rows) in _chunk_parts(config, table, records, hands, kept).items():
                part = part_path(out, chunk, directory)
                try:
                    write_atomically(part, data)
                except OSError as error:
                    raise _storage_error(part, error, chunk, config.n_chunks, out, manifest) from None
                manifest[PARTS_KEYS[directory]][chunk] = part_entry(data, rows)
    if damaged:
        _save_manifest(out, manifest, int(manifest["chunks_done"]), config.n_chunks)
    return manifest


def _check_same_play(
    config: TournamentConfig,
    out: Path,
    manifest: dict[str, Any],
    table: Table,
    report: Callable[[str], None],
    damaged: Set[int] = frozenset(),
) -> bool:
    """Refuse to add to the run in ``out`` what other code would play. The same code goes on at
    once (the manifest's ``plays``, ``Table.plays_digest``: version, kernel sources, each seat's
    settings). Other code, an upgrade or an edited agent or level, plays the run's first chunk
    again (``_checked_deals``; where that is a run of games' game 0 alone, in its first seating
    only: ``_records_difference``), and goes on only where it plays every hand as recorded: changes
    elsewhere pass, changes to how it plays are refused. Until 2026-12-07 its deal 0 alone was
    played, which a re-tuned ``normal`` plays as the old one did in one deal of nine, and a run
    whose manifest does not say what its levels played (no ``played_as``, before 2026-12-07, or
    no ``plays``, before 2026-12-06) went on mixing the two. Agents that cannot be replayed
    (``AgentSpec.reproducible``) go on with the same code alone (a run from before the digest: the
    same version). A repair checks before it re-plays the ``damaged`` chunks, against the first
    chunk whose part is whole (chunk 0's may be among them).

    Returns whether the run is known to be played as this code plays it (its digest, or its
    records played again alike); not a run with no chunk played, nor one let go on unchecked."""
    from hearts_sim import __version__

    started = manifest.get("version")
    for spec in table.external_specs():  # a file it cannot read is not other code: it says so
        problem = file_problem(spec)
        if problem is not None:
            raise TournamentError(f"{out}: {problem}")
    if not manifest["chunks_done"]:
        return False  # nothing played yet
    unseen = [spec.text for spec in table.external_specs() if code_unseen(spec)]
    if manifest.get("plays") == table.plays_digest():
        _warn_unchecked(out, unseen)
        return True  # played by this code, as far as it can be seen
    _check_same_levels(config, out, manifest.get("played_as"))
    if not all(spec.reproducible for spec in config.specs()):
        if "plays" in manifest or started not in (None, __version__):
            versions = (
                f"version {started}, and this is {__version__}"
                if started not in (None, __version__)
                else "the same version, with other sources, level files or py: agent files"
            )
            unreplayable = "; ".join(  # which, and why (it said "a search on the clock, an outside agent")
                f"{spec.name}: {'an outside agent' if spec.external else 'a search on the clock'}"
                for spec in config.specs()
                if not spec.reproducible
            )
            raise TournamentError(
                f"{out} was played by other code than this ({versions}); its agents cannot be "
                f"replayed to check that they play as they did ({unreplayable}): finish it with the "
                "code that started it, or play it again in a new folder"
            )
        _warn_unchecked(out, unseen)
        return False
    who = (
        f"version {started}, which started it"
        if started not in (None, __version__)
        else "the code that started it (an agent or a level edited since?)"
    )
    whole = [chunk for chunk in range(int(manifest["chunks_done"])) if chunk not in damaged]
    if not whole:
        raise TournamentError(
            f"{out} was played by other code than this, and no part of its records is whole to check "
            f"that this code plays them as recorded: finish it with {who}, or play it again in a new folder"
        )
    chunk = whole[0]
    deals = _checked_deals(config, chunk)
    first = _deals_text(config, chunk * config.chunk_deals, deals)
    if any(spec.searches for spec in config.specs()):
        them = "it" if deals == 1 else "them"
        report(
            f"hearts-sim: playing {first} of {out} again, to check that this code plays {them} as recorded"
        )
    difference = _records_difference(config, out, table, chunk, deals)
    if difference is not None:
        raise TournamentError(
            f"{out} was played by other code than this: {difference}; finish it with {who}, "
            "or play it again in a new folder"
        )
    if started not in (None, __version__):
        report(f"hearts-sim: {out} was started by version {started}, and {__version__} plays it as recorded")
    else:
        report(f"hearts-sim: {out} was started by other sources than these, which play {first} as recorded")
    return True


def _checked_deals(config: TournamentConfig, chunk: int) -> int:
    """The deals (games) of chunk ``chunk`` that other code plays again to check that it plays the
    run as recorded: all of them, up to a chunk as the agents' speed sizes it (a chunk of
    fast agents is 65,536 hands, a tenth of a second; one of a search agent, a few deals), so a
    run of long chunks (``--chunk-deals``) is not played again for minutes."""
    sized = replace(config, chunk_deals=0).chunk_deals
    return max(1, min(config.chunk_deals, sized, config.deals - chunk * config.chunk_deals))


def _deals_text(config: TournamentConfig, start: int, count: int) -> str:
    """``deal 8``, or ``deals 8 to 15`` (games with ``games``)."""
    key = "game" if config.games else "deal"
    return f"{key} {start}" if count == 1 else f"{key}s {start} to {start + count - 1}"


def _keep_what_it_plays(config: TournamentConfig, manifest: dict[str, Any], table: Table) -> None:
    """Once the run was found played as this code plays it, its manifest takes this code's
    ``plays`` and ``played_as``, which every later resume compares first (its ``version`` stays
    the one that started it). Until 2026-12-07 a manifest without them (written before 2026-12-06
    or 2026-12-07) stayed so, checked on deal 0 alone at every resume: a level edited between two
    resumes that played deal 0 alike went on unseen; and one with another code's digest was
    played again at every resume (a whole chunk of ``hard``: 40 s)."""
    manifest.update(_what_it_plays(config, table))


def _what_it_plays(config: TournamentConfig, table: Table) -> dict[str, Any]:
    """What a manifest keeps of how this code plays a run, which a resume compares first
    (``_check_same_play``): the digest of its code and settings (``plays``) and each agent's
    settings, a level's as its file resolved them (``played_as``)."""
    return {"plays": table.plays_digest(), "played_as": [s.plays for s in config.specs()]}


def _check_same_levels(config: TournamentConfig, out: Path, played_as: Any) -> None:
    """Refuse to go on where a level plays other settings than those the run was played with (its
    file edited since): the first deal, played again, need not show it (a level's new ``shoot=30``
    played deal 0 as before, and its later deals went into the run beside the old ones). The
    settings are compared as this version reads them, not as text (a version that spells a
    parameter otherwise plays the same). A run begun before the manifest kept them (2026-12-07)
    has no ``played_as``."""
    if not isinstance(played_as, list):
        return
    for spec, was in zip(config.specs(), played_as, strict=False):
        if spec.label and not _plays_as(spec, was):
            played = was if isinstance(was, str) else shown(was)
            raise TournamentError(
                f"{out} was played with {spec.name} as {played}, and it is {spec.plays} now (its level "
                "file edited since?): finish it with the level as it was, or play it again in a new folder"
            )


def _plays_as(spec: AgentSpec, text: Any) -> bool:
    """Whether ``spec`` plays what the spec ``text`` says (its policies and parameters)."""
    try:
        return isinstance(text, str) and parse_agent(text) == spec
    except AgentError:  # a parameter this version does not know: other settings
        return False


def _warn_unchecked(out: Path, unseen: list[str]) -> None:
    """Say that a run goes on with outside agents whose code no process can see (it went on
    without a word): changed since it started, they would mix two programs in its records."""
    if unseen:
        warnings.warn(
            f"{out}: {', '.join(unseen)} goes on unchecked, its code out of sight (an engine's "
            "command, an object): changed since the run started, it would mix two programs in its records",
            UncheckedAgentWarning,
            stacklevel=4,
        )


def check_same_play(out: Path, report: Callable[[str], None] | None = None) -> bool:
    """``_check_same_play`` for the run in ``out`` whatever its progress, for a job whose finished
    runs are read back, not resumed (a kept tune): whether it was checked (a run with no chunk
    played, or one that cannot be trusted, is not: its own resume reports the latter)."""
    manifest = load_manifest(out)
    config = manifest_config(out, manifest)
    if manifest_problem(config, manifest) or not manifest["chunks_done"]:
        return False
    if part_problem(part_path(out, 0), manifest["parts"][0]) is not None:
        return False
    with agents_found_in(_manifest_folder(manifest)):  # the manifest read above, not read again
        _check_same_play(config, out, manifest, config.table(), report or (lambda _: None))
    return True


def _refuse_foreign_part(config: TournamentConfig, out: Path, chunk: int) -> None:
    """Refuse to re-play chunk ``chunk`` over a part that is whole but holds other deals than the
    manifest's config deals there, every row of it (another run's: its seed; another chunk's: its
    numbers), where the manifest, not the records, is what is wrong: one copied from another run
    made ``--repair`` play that run over every part of this one (until 2026-12-07). A part that
    cannot be read, or some of whose rows are right, is damaged, and re-played."""
    key, start = ("game" if config.games else "deal"), chunk * config.chunk_deals
    part = part_path(out, chunk)
    try:
        held = parquet.read_table(arrow_path(part), columns=[key, "seed"]).to_pandas()
    except (OSError, ValueError, KeyError, pyarrow.ArrowException):
        return
    numbers, seeds = held[key].to_numpy(np.int64), held["seed"].to_numpy(np.uint64)
    dealt = np.array([derive_seed(np.uint64(config.seed), number) for number in numbers], np.uint64)
    outside = (numbers < start) | (numbers >= start + config.chunk_deals)
    wrong = np.flatnonzero(outside | (seeds != dealt))
    if not len(wrong) or len(wrong) < len(held):  # some right: a part damaged, not another's
        return
    number, row = int(numbers[wrong[0]]), int(wrong[0])
    what = (
        f"{key} {number}, which chunk {chunk} does not deal"
        if outside[row]
        else f"{key} {number} of seed {int(seeds[row])}, where --seed {config.seed} deals {int(dealt[row])}"
    )
    raise TournamentError(
        f"{part} holds whole records of another run or chunk ({what}): {out / MANIFEST} is not "
        "the manifest of these records (copied from another run?), and --repair would play over "
        "them: put the run's own manifest back, or move its records away to play the run again"
    )


def _records_difference(
    config: TournamentConfig, out: Path, table: Table, chunk: int, deals: int = 1
) -> str | None:
    """How this code's play of the first ``deals`` deals (games) of chunk ``chunk`` differs from
    the records of the run in ``out``, or None: the first row that differs (by deal, then
    seating) and its first column. Game 0 alone is played in seating 0 alone (``first_game``: a
    ``hard`` game is seconds); other games in every seating. Columns a later version added are
    not compared."""
    key = "game" if config.games else "deal"
    start = chunk * config.chunk_deals
    if config.games:
        played = (start, deals) == (0, 1)
        records = first_game(table, config.seed) if played else run_games(table, config.seed, start, deals)[0]
    else:
        records = run_hands(table, config.seed, start, deals)
    fresh = pd.DataFrame(_record_columns(config, table, records)).set_index([key, "seating"]).sort_index()
    kept = parquet.read_table(
        arrow_path(part_path(out, chunk)), filters=[(key, ">=", start), (key, "<", start + deals)]
    ).to_pandas()
    kept = kept.set_index([key, "seating"])
    held = fresh.index.isin(kept.index)
    recorded = kept.reindex(fresh.index[held])
    columns = [column for column in fresh.columns if column in recorded.columns]
    differs = {
        column: _differs(_values(fresh[column])[held], _values(recorded[column])) for column in columns
    }
    wrong = ~held
    wrong[held] = np.logical_or.reduce([differs[column] for column in columns]) if columns else False
    if not wrong.any():
        return None
    row = int(np.argmax(wrong))
    number, seating = fresh.index[row]
    where = f"{key} {number} in seating {seating}"
    if not held[row]:
        return f"its records hold no {where}"
    at = int(np.count_nonzero(held[:row]))  # the row among those the records hold
    column = next(column for column in columns if differs[column][at])
    now, then = (
        _shown_value(column, value) for value in (fresh[column].iloc[row], recorded[column].iloc[at])
    )
    return f"{where} plays differently now ({column} {now}, {then} in its records)"


def _shown_value(column: str, value: Any) -> str:
    """A record's value as a message shows it: a set of cards (``dealt_1``, ``passed_2``,
    ``kitty``) by its cards, ``2C 4D QS``, where it was a bitboard (``passed_2
    2251799847243776, 2251851353292800 in its records``, until 2026-12-07)."""
    if (column == "kitty" or column.rpartition("_")[0] in ("dealt", "passed")) and is_integer(value):
        return " ".join(CardSet.of_mask(int(value)).to_list()) or "no cards"
    return str(value)


def _values(column: pd.Series) -> np.ndarray:
    """A column's values to compare: a categorical's as its labels (categories differ by run)."""
    return np.asarray(column.astype(object) if isinstance(column.dtype, pd.CategoricalDtype) else column)


def _differs(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Where two columns' values differ, row by row (all of them where their kinds cannot be
    compared: a column an older version wrote as text)."""
    try:
        return np.broadcast_to(np.asarray(mine != theirs, dtype=bool), mine.shape)
    except (TypeError, ValueError):
        return np.ones(mine.shape, dtype=bool)


def chunk_records(
    config: TournamentConfig, chunk: int, engines: EngineOptions | None = None, hands: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Play chunk ``chunk`` of a tournament: its HAND_RECORDs (or GAME_RECORDs with ``games``),
    and with ``games`` and ``hands`` every hand of those games (GAME_HAND_RECORDs; else an empty
    array: a run that writes no records has no use for them).

    A pure function of (config, chunk) whatever the machine, thread count or process,
    which is what lets any runner (local or a cluster) produce identical results.
    ``engines``: how external agents run (processes, time limit), not what they decide.
    """
    table = config.table()
    start = chunk * config.chunk_deals
    count = min(config.chunk_deals, config.deals - start)
    if config.games:
        return run_games(table, config.seed, start, count, engines=engines, keep_hands=hands)
    return run_hands(table, config.seed, start, count, engines=engines), np.zeros(0, dtype=GAME_HAND_RECORD)


ChunkRecords = tuple[np.ndarray, np.ndarray]  # ``chunk_records``: the records, the hands of games
PlayedChunks = Generator[tuple[int, ChunkRecords], None, None]  # (chunk index, its records), in order


class ChunkRunner(Protocol):
    """Plays chunks of a tournament and yields them in order, as (chunk index, ``chunk_records``);
    a generator, which a run that stops early (a sequential test decided) closes. ``hands``: keep
    the hands of games (``chunk_records``), for a run that writes them."""

    def chunks(self, config: TournamentConfig, chunks: range, hands: bool = True) -> PlayedChunks: ...


class LocalRunner:
    """Runs every chunk in this process, one after the other (each on ``selfplay.loops.in_blocks``)."""

    def __init__(self, engines: EngineOptions | None = None):
        self.engines = engines

    def chunks(self, config: TournamentConfig, chunks: range, hands: bool = True) -> PlayedChunks:
        with code_held():  # a py: agent file edited during the run stops it, not plays on
            for chunk in chunks:
                yield chunk, chunk_records(config, chunk, self.engines, hands)


def play_kept(config: TournamentConfig, out: Path | None, **options: Any) -> TournamentResult:
    """The run of ``config`` in ``out``, a step of a kept job (a tune's match): played, continued
    from its last chunk, or read back when it is finished; without ``out``, played in memory.
    A step's folder that holds files but no manifest (lost, or removed by hand) is refused saying
    how to play that match again: it read as an ``--out`` the user never gave."""
    if out is not None and not (out / MANIFEST).exists() and not _fit_for_new_run(out):
        raise TournamentError(
            f"{out}, a match of this job, holds files but no {MANIFEST} (lost or removed): delete "
            f"{out} and resume the job to play that match again"
        )
    return run_tournament(config, out, resume=out is not None and (out / MANIFEST).exists(), **options)


def resume_tournament(out: str | Path, *, trust_agents: bool = False, **options: Any) -> TournamentResult:
    """Continue the run stored in ``out`` from its last finished chunk (``repair=True``: after
    re-playing whatever does not match the manifest). Its outside agents (``py:``, ``exec:``) run
    only with ``trust_agents=True``: the manifest names the code they run (``check_trusted``)."""
    manifest = load_manifest(Path(out))
    objects = _recorded_objects(manifest)
    if objects:
        raise TournamentError(
            f"{out} was played by {objects[0]}, an agent object passed from Python: resume it from "
            "Python with the same objects, run_tournament(config, out, resume=True)"
        )
    config = manifest_config(Path(out), manifest)
    outside = [spec.plays for spec in config.specs() if spec.external]
    check_trusted(outside, str(Path(out) / MANIFEST), trust_agents, folder=_manifest_folder(manifest))
    return run_tournament(config, out, resume=True, **options)


def recorded_engines(out: Path, procs: int | None = None) -> EngineOptions:
    """How the outside agents of the run in ``out`` run on resuming it: its decisions' time limit
    as it was last played with (runs from before 2026-12-06 did not record it: the default),
    ``procs`` processes. A hand-edited limit is a one-line ``TournamentError`` naming the file."""
    timeout = load_manifest(out).get("engine_timeout", EngineOptions.timeout)
    try:
        return EngineOptions(timeout=timeout, **({"procs": procs} if procs else {}))
    except AgentError as error:
        raise TournamentError(f"{Path(out) / MANIFEST}: {error}") from None


def combine_runs(outs: Sequence[str | Path] | str | Path) -> dict[str, Any]:
    """The summary of finished runs of the same agents and rules on other seeds, as if one run
    had played all their deals: their manifests' exact tallies summed, so every interval is over
    the deals of every run (seeds 34 and 35 of a match, or halves run on two machines).

    A one-line ``TournamentError`` for a run that is unfinished or whose manifest cannot be
    trusted (a ``RecordsError`` for one whose records were damaged), a run of other agents or
    rules, a seed given twice (its deals would count twice), and runs of whole games (their
    ratings follow the order of every game: play one longer run). Agents are matched by their
    specs as written, so runs started by different versions of hearts-sim are refused too, and
    runs whose manifests' ``plays`` digests differ (any two of them). A run that keeps no digest
    (written before 2026-12-06) is pooled only where this code plays the runs as recorded
    (``_check_combined_play``).
    """
    if isinstance(outs, str | os.PathLike):  # one run: its name's characters were read as runs
        outs = [outs]
    listed = list(outs) if isinstance(outs, Iterable) else None
    if listed is None or not all(isinstance(out, str | os.PathLike) for out in listed):
        raise TournamentError(f"combine takes a list of run folders, not {shown(outs)}")
    outs = listed
    if not outs:
        raise TournamentError("combine needs at least one run directory")
    first: tuple[Path, TournamentConfig] | None = None  # the first run and its config
    digested: tuple[Path, Any, Any] | None = None  # the first run with a plays digest, and its version
    runs: list[tuple[Path, TournamentConfig, dict[str, Any]]] = []
    seeds: dict[int, Path] = {}
    sequential: list[str] = []  # the runs a sequential test stopped
    total: Tally | None = None
    given: dict[Path, Path] = {}
    for out in map(Path, outs):
        manifest = load_manifest(out)  # first: a folder that holds no run (a link's loop) says so
        if out.resolve() in given:
            raise TournamentError(
                f"{given[out.resolve()]} and {out} are the same run: its deals would count twice"
            )
        given[out.resolve()] = out
        config = manifest_config(out, manifest)
        problem = manifest_problem(config, manifest)
        if problem is not None:
            raise _untrusted_manifest(out, manifest, problem)
        for directory in _directories(config):  # damaged records: a RecordsError that says how to repair them
            verified_parts(out, manifest, directory)
        if manifest["chunks_done"] < config.n_chunks:
            holder = look_at_lock(out / LOCK).holder
            finish = f"finish it with {manifest_resume(out, manifest)}"
            raise TournamentError(
                f"{out} is unfinished ({manifest['chunks_done']} of {config.n_chunks} chunks): "
                + (finish if holder is None else f"it is being written by {holder.who}: combine it once done")
            )
        if config.games:
            raise TournamentError(
                f"{out} plays whole games, whose ratings follow the order of every game: "
                "runs of games are not combined (play one longer run)"
            )
        plays = manifest.get("plays")  # what its version and agents play (no version check of its own:
        # a run of 0.1.0 that this code had checked, as a resume does, was refused beside 0.2.0's)
        if first is None:
            first = (out, config)
        elif config.agents != first[1].agents or config.rules != first[1].rules:
            what = "agents" if config.agents != first[1].agents else "rules"
            if what == "agents" and sorted(map(str, config.agents)) == sorted(map(str, first[1].agents)):
                raise TournamentError(
                    f"{out} and {first[0]} are runs of the same agents in another order: they do not "
                    "combine (a summary and its A minus B follow the order given: play both in one)"
                )
            raise TournamentError(f"{out} and {first[0]} are runs of different {what}: they do not combine")
        if plays is not None:  # pooled without a word until 2026-12-06; until 2026-12-07 each was
            if digested is None:  # compared with the first run's alone, and none where it had none
                digested = (out, plays, manifest.get("version"))
            elif plays != digested[1] and manifest.get("version") == digested[2]:  # other versions: played
                raise TournamentError(
                    f"{out} and {digested[0]} were played by different code (an agent, level or py: file "
                    "edited between them: their manifests' plays digests differ): they do not combine"
                )
        if config.seed in seeds:
            raise TournamentError(
                f"{seeds[config.seed]} and {out} both played seed {config.seed}: "
                "their deals would count twice (give each run its own --seed)"
            )
        seeds[config.seed] = out
        runs.append((out, config, manifest))
        if config.sprt is not None:
            sequential.append(str(out))
        tally = Tally(**manifest["tally"])
        if total is None:
            total = tally
        else:
            total.add(tally)
    assert first is not None and total is not None
    digests = [manifest.get("plays") for _, _, manifest in runs]
    if len(runs) > 1 and (None in digests or len(set(digests)) > 1):  # alone: its summary, nothing pooled
        _check_combined_play(runs)  # a run without a digest, or of another version
    if sequential and len(given) > 1:  # pooled without a word until 2026-12-06 (alone: its own summary)
        warnings.warn(
            f"{', '.join(sequential)}: a match stopped by its sequential test (--sprt), whose length "
            "depends on its results: pooled, its deals lean the figures toward its decision (pool "
            "runs of a fixed --deals for an unbiased estimate)",
            SequentialRunWarning,
            stacklevel=2,
        )
    config = first[1]
    return summarize(
        total,
        [spec.name for spec in config.specs()],
        games=False,
        seatings=len(config.seatings()),
        rules=config.rules.describe(),
        seed=list(seeds),
    )


def _check_combined_play(runs: list[tuple[Path, TournamentConfig, dict[str, Any]]]) -> None:
    """Refuse to pool runs whose manifests do not say they were played alike where this code does
    not play them as recorded: a run without ``plays`` (written before 2026-12-06; until
    2026-12-07 pooled with any run of the same version and agents' names, whose level or ``py:``
    files may have been edited between them), or runs of other versions, whose digests differ
    (the digest holds the version: a finished 0.2.0 run was refused beside 0.3.0's, where its
    resume would go on). Each run is checked against this code: one with this code's digest at
    once, the others by playing their first chunk again (``_checked_deals``; once for each
    digest). Agents that cannot be played again (``AgentSpec.reproducible``) are pooled by one
    version alone, as their resume goes on."""
    from hearts_sim import __version__

    config = runs[0][1]
    unreplayable = [spec for spec in config.specs() if not spec.reproducible]
    if unreplayable:
        versions = {manifest.get("version") for _, _, manifest in runs}
        if versions == {__version__}:
            return
        old, _, manifest = next(run for run in runs if run[2].get("version") != __version__)
        why = "; ".join(
            f"{spec.name}: {'an outside agent' if spec.external else 'a search on the clock'}"
            for spec in unreplayable
        )
        raise TournamentError(
            f"{old} {_how_played(manifest)}, and they cannot be played again to check it ({why}): "
            f"combine it with runs of {_its_code(manifest)}"
        )
    checked: set[str] = set()  # digests whose run this code plays as recorded
    for out, config, manifest in runs:
        plays = manifest.get("plays")
        with agents_found_in(_manifest_folder(manifest)):
            table = config.table()
            if plays == table.plays_digest() or plays in checked:
                continue
            difference = _records_difference(config, out, table, 0, _checked_deals(config, 0))
        if difference is not None:
            raise TournamentError(
                f"{out} {_how_played(manifest)}, and this code plays it otherwise: {difference}; they do "
                f"not combine: combine it with runs of {_its_code(manifest)}, or play it again with this code"
            )
        if plays is not None:
            checked.add(plays)


def _how_played(manifest: dict[str, Any]) -> str:
    """What a run's manifest says of the code that played it, where it is not this code's."""
    if manifest.get("plays") is None:
        return "was written before 2026-12-06 without a record of how its agents played"
    return f"was played by {_its_code(manifest)}"


def _its_code(manifest: dict[str, Any]) -> str:
    """The code that wrote a run, as a message names it: its version, or an edit since."""
    from hearts_sim import __version__

    version = manifest.get("version")
    if version != __version__:
        return f"version {version}, which wrote it"
    return "the code that wrote it (an agent or a level edited since?)"


def make_config(
    agents: Sequence[str] | str,
    rules: Rules | str | None = "standard",
    rule_overrides: str | Sequence[str] | Mapping[str, Any] = (),
    deals: int = 20_000,
    seed: int = 0,
    games: bool = False,
    sprt: Sprt | None = None,
    chunk_deals: int = 0,
) -> TournamentConfig:
    """A config from command-line style values (a preset name or ``Rules``; overrides as
    ``key=value`` strings, or a dict of switches); ``sprt``: a match that stops once the
    sequential test decides, checked after each chunk (``chunk_deals``, 0: set by the agents'
    speed, thousands of deals for fast ones; ``--deals``: the most it plays)."""
    resolved = resolve_rules(rules)
    if isinstance(rule_overrides, Mapping):
        resolved = resolved.replace(**rule_overrides)
    elif isinstance(rule_overrides, str | Iterable):
        resolved = resolved.with_strings(rule_overrides)
    elif rule_overrides is not None:  # 5 was "'int' object is not iterable"
        raise RulesError(
            f"rule_overrides={shown(rule_overrides)} is not valid: key=value strings or a dict of switches"
        )
    if isinstance(agents, str):  # one agent in every seat, as simulate reads one spec
        agents = [agents]  # (its name was read a character at a time: "unknown agent 'l'")
    elif not isinstance(agents, Iterable) or isinstance(agents, Set | Mapping):  # a set: no seat order
        raise SimulationError(f"agents={shown(agents)} is not valid: a list of agent specs")
    return TournamentConfig(
        agents=tuple(agents),
        rules=resolved,
        deals=deals,
        seed=seed,
        games=games,
        sprt=sprt,
        chunk_deals=chunk_deals,
    )
