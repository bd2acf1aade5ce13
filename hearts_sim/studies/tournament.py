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

import itertools
import json
import math
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow
from pyarrow import parquet
from tqdm.auto import tqdm

from agents.external import EngineOptions, ExternalAgentError
from agents.registry import AgentSpec, parse_agent
from hearts_sim.core.rules import Rules, resolve_rules
from hearts_sim.selfplay.records import MANIFEST, RECORDS_DIR, game_columns, hand_columns, part_path
from hearts_sim.selfplay.simulate import (
    SimulationError,
    Table,
    run_games,
    run_hands,
    set_threads,
)
from hearts_sim.studies.stats import Tally, new_tally, summarize, tally_games, tally_hands

FAST_CHUNK_HANDS = 1 << 16
SLOW_CHUNK_HANDS = 64  # a search agent plays: small chunks, frequent progress
EXTERNAL_CHUNK_HANDS = 1 << 12  # a Python agent or an engine plays: blocks big enough to batch


def is_search_agent(spec: AgentSpec | str) -> bool:
    """Whether a seat searches: milliseconds, not microseconds, per decision, so runs involving
    it are sized in tens of deals."""
    return parse_agent(spec).searches


class TournamentError(ValueError):
    """A tournament that cannot run as asked (bad output directory, incompatible resume)."""


class Interrupted(Exception):
    """Ctrl-C between chunks: every finished chunk is on disk."""

    def __init__(self, done: int, total: int, out: Path | None):
        self.done, self.total, self.out = done, total, out
        where = f"; resume with: hearts-sim tournament --resume {out}" if out else ""
        super().__init__(f"interrupted after {done} of {total} chunks{where}")


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

    def __post_init__(self) -> None:
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or self.deals <= 0:
            raise SimulationError(f"the number of deals must be a positive whole number, not {self.deals}")
        specs = self.specs()  # validates every agent spec
        if self.chunk_deals <= 0:
            per_chunk = FAST_CHUNK_HANDS
            if any(spec.external for spec in specs):
                per_chunk = EXTERNAL_CHUNK_HANDS
            if any(spec.searches for spec in specs):
                per_chunk = SLOW_CHUNK_HANDS
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
        return seatings(len(self.agents), self.rules.n_players)

    def table(self) -> Table:
        specs = self.specs()
        return Table.build(self.rules, [[specs[a] for a in s] for s in self.seatings()])

    @property
    def n_chunks(self) -> int:
        return math.ceil(self.deals / self.chunk_deals)

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["agents"] = list(self.agents)
        values["rules"] = self.rules.to_dict()
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TournamentConfig:
        values = dict(values)
        values["agents"] = tuple(values["agents"])
        values["rules"] = Rules.from_dict(values["rules"])
        return cls(**values)


# ---------------------------------------------------------------------------- running
def _prepare_out(out: Path) -> None:
    """Create ``out`` for a new run: it must not hold another run; it must be writable."""
    if (out / MANIFEST).exists():
        raise TournamentError(
            f"{out} already holds a run: continue it with --resume {out}, or choose a new --out directory"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TournamentError(f"--out {out} exists and is not an empty directory")
    try:
        (out / RECORDS_DIR).mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as error:
        raise TournamentError(f"cannot write to --out {out}: {error.strerror or error}") from None


def _write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Atomically replace the manifest (a crash never leaves half a file)."""
    temporary = out / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.replace(temporary, out / MANIFEST)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block is done, then raise it: a chunk's Parquet part and the
    manifest that counts it are written together or not at all. (Only the main thread
    receives signals; elsewhere this does nothing.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if received:
        raise KeyboardInterrupt


def load_manifest(out: Path) -> dict[str, Any]:
    path = Path(out) / MANIFEST
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise TournamentError(f"{out} holds no tournament run ({MANIFEST} is missing)") from None
    except (OSError, json.JSONDecodeError) as error:
        raise TournamentError(f"cannot read {path}: {error}") from None


@dataclass
class TournamentResult:
    config: TournamentConfig
    summary: dict[str, Any]
    out: Path | None = None


def run_tournament(
    config: TournamentConfig,
    out: str | Path | None = None,
    *,
    resume: bool = False,
    threads: int | None = None,
    progress: bool | None = None,
    command: Sequence[str] | None = None,
    stop_after_chunks: int | None = None,
    on_chunk: Callable[[int], None] | None = None,
    runner: ChunkRunner | None = None,
    engines: EngineOptions | None = None,
) -> TournamentResult:
    """Play the tournament chunk by chunk; with ``out``, stream records to Parquet and keep a
    manifest so that an interrupted run can be resumed (``resume=True``) to the same result.

    ``runner`` plays the chunks (default: ``LocalRunner``, this process, with ``engines`` for
    its external agents). ``stop_after_chunks``
    simulates an interruption after that many chunks (raises ``Interrupted``), for tests.
    """
    from hearts_sim import __version__

    out_path = Path(out) if out is not None else None
    tally = new_tally(config.seatings(), len(config.agents), config.games)
    first_chunk = 0
    manifest: dict[str, Any] = {}
    if out_path is not None:
        if resume:
            manifest = load_manifest(out_path)
            saved = TournamentConfig.from_dict(manifest["config"])
            if saved != config:
                raise TournamentError(
                    f"{out_path} holds a different tournament; resume it with "
                    "its own arguments (hearts-sim tournament --resume DIR)"
                )
            first_chunk = int(manifest["chunks_done"])
            tally = Tally(**manifest["tally"])
        else:
            _prepare_out(out_path)
            manifest = {
                "command": shlex.join(command) if command else None,
                "config": config.to_dict(),
                "agent_specs": [s.name for s in config.specs()],
                "seatings": [list(s) for s in config.seatings()],
                "version": __version__,
                "chunks_total": config.n_chunks,
                "chunks_done": 0,
                "tally": asdict(tally),
                "summary": None,
            }
            _write_manifest(out_path, manifest)
    set_threads(threads)
    runner = runner or LocalRunner(engines)
    table = config.table()
    seating_agents = np.array(config.seatings(), dtype=np.int64)
    n_seatings = len(seating_agents)
    unit = "game" if config.games else "hand"
    show = sys.stderr.isatty() if progress is None else progress
    total_jobs = config.deals * n_seatings
    done_jobs = min(first_chunk * config.chunk_deals, config.deals) * n_seatings
    last_chunk = config.n_chunks
    if stop_after_chunks is not None:
        last_chunk = min(last_chunk, first_chunk + stop_after_chunks)
    chunk = first_chunk
    with tqdm(total=total_jobs, initial=done_jobs, unit=unit, disable=not show, smoothing=0.05) as bar:
        try:
            for chunk, records in runner.chunks(config, range(first_chunk, last_chunk)):
                if config.games:
                    tally_games(tally, records, seating_agents, n_seatings)
                else:
                    tally_hands(tally, records, seating_agents, n_seatings)
                if out_path is not None:
                    columns = (game_columns if config.games else hand_columns)(
                        records, table.rules, table.labels()
                    )
                    part = part_path(out_path, chunk)
                    with interrupts_deferred():
                        parquet.write_table(pyarrow.table(columns), part.with_suffix(".tmp"))
                        os.replace(part.with_suffix(".tmp"), part)
                        manifest["chunks_done"] = chunk + 1
                        manifest["tally"] = asdict(tally)
                        _write_manifest(out_path, manifest)
                bar.update(len(records))
                if on_chunk is not None:
                    on_chunk(chunk)
        except KeyboardInterrupt:
            done = int(manifest.get("chunks_done", chunk)) if out_path is not None else chunk
            raise Interrupted(done, config.n_chunks, out_path) from None
        except ExternalAgentError as error:  # the chunks finished before it are on disk
            if out_path is None:
                raise
            done = int(manifest.get("chunks_done", chunk))
            raise ExternalAgentError(
                f"{error}; {done} of {config.n_chunks} chunks are done: "
                f"resume with hearts-sim tournament --resume {out_path}"
            ) from None
    if last_chunk < config.n_chunks:
        raise Interrupted(last_chunk, config.n_chunks, out_path)
    summary = summarize(
        tally,
        [spec.name for spec in config.specs()],
        games=config.games,
        seatings=len(config.seatings()),
        rules=config.rules.describe(),
        seed=config.seed,
    )
    if out_path is not None:
        manifest["summary"] = summary
        _write_manifest(out_path, manifest)
    return TournamentResult(config, summary, out_path)


def chunk_records(config: TournamentConfig, chunk: int, engines: EngineOptions | None = None) -> np.ndarray:
    """Play chunk ``chunk`` of a tournament: HAND_RECORDs (or GAME_RECORDs with ``games``).

    A pure function of (config, chunk) whatever the machine, thread count or process,
    which is what lets any runner (local or a cluster) produce identical results.
    ``engines``: how external agents run (processes, time limit), not what they decide.
    """
    table = config.table()
    start = chunk * config.chunk_deals
    count = min(config.chunk_deals, config.deals - start)
    if config.games:
        return run_games(table, config.seed, start, count, engines=engines)
    return run_hands(table, config.seed, start, count, engines=engines)


class ChunkRunner(Protocol):
    """Plays chunks of a tournament and yields them in order, as (chunk index, records)."""

    def chunks(self, config: TournamentConfig, chunks: range) -> Iterator[tuple[int, np.ndarray]]: ...


class LocalRunner:
    """Runs every chunk in this process, one after the other (numba threads inside each)."""

    def __init__(self, engines: EngineOptions | None = None):
        self.engines = engines

    def chunks(self, config: TournamentConfig, chunks: range) -> Iterator[tuple[int, np.ndarray]]:
        for chunk in chunks:
            yield chunk, chunk_records(config, chunk, self.engines)


def resume_tournament(out: str | Path, **options: Any) -> TournamentResult:
    """Continue the run stored in ``out`` from its last finished chunk."""
    manifest = load_manifest(Path(out))
    config = TournamentConfig.from_dict(manifest["config"])
    return run_tournament(config, out, resume=True, **options)


def make_config(
    agents: Sequence[str],
    rules: Rules | str | None = "standard",
    rule_overrides: Sequence[str] = (),
    deals: int = 20_000,
    seed: int = 0,
    games: bool = False,
) -> TournamentConfig:
    """A config from command-line style values (preset name, ``key=value`` overrides)."""
    resolved = resolve_rules(rules)
    if rule_overrides:
        resolved = resolved.with_strings(list(rule_overrides))
    return TournamentConfig(agents=tuple(agents), rules=resolved, deals=deals, seed=seed, games=games)
