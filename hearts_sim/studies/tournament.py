"""Duplicate tournaments: every deal in a balanced set of seatings, exact running statistics,
Parquet records in chunks, and resumable runs.

Scheduling (``seatings``): with two distinct agents every deal is played in all the
seatings that mix them (14 at 4 seats); with as many agents as seats, in every
permutation; otherwise in the rotations of the agent list and their mirror images,
so each agent sits in each seat equally often and passes to each neighbour equally
often. Card luck cancels because every seating replays the same deal.

Statistics are kept as exact integer sums per chunk (per-deal score sums and their
squares), so a run that is interrupted and resumed gives a byte-identical summary.

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
from scipy import stats
from tqdm.auto import tqdm

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

FAST_CHUNK_HANDS = 1 << 16
SLOW_CHUNK_HANDS = 64  # a search agent plays: small chunks, frequent progress


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
            slow = any(is_search_agent(s) for s in specs)
            per_chunk = SLOW_CHUNK_HANDS if slow else FAST_CHUNK_HANDS
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


# ---------------------------------------------------------------------------- statistics
@dataclass
class Tally:
    """Exact integer sums over deals, per agent and per pair of agents (JSON-serialisable).

    ``score_sum[a]`` is the sum over deals of S_a(d), agent a's total score in deal d over
    all its seats and seatings; ``pair_sum[a][b]`` sums S_a(d) c_b - S_b(d) c_a, the
    paired difference scaled to integers (c_a: agent a's seats per deal).
    """

    n_agents: int
    slots_per_deal: list[int]
    deals: int = 0
    hands: int = 0
    score_sum: list[int] = field(default_factory=list)
    score_square_sum: list[int] = field(default_factory=list)
    pair_sum: list[list[int]] = field(default_factory=list)
    pair_square_sum: list[list[int]] = field(default_factory=list)
    moons_made: list[int] = field(default_factory=list)
    moons_suffered: list[int] = field(default_factory=list)
    qs_taken: list[int] = field(default_factory=list)
    tricks: list[int] = field(default_factory=list)
    games_hands: list[int] = field(default_factory=list)  # --games: hands played per slot, summed
    wins: list[int] = field(default_factory=list)
    ratings: list[list[float]] = field(default_factory=list)  # --games: OpenSkill (mu, sigma)

    def __post_init__(self) -> None:
        k = self.n_agents
        for name in (
            "score_sum",
            "score_square_sum",
            "moons_made",
            "moons_suffered",
            "qs_taken",
            "tricks",
            "games_hands",
            "wins",
        ):
            if not getattr(self, name):
                setattr(self, name, [0] * k)
        for name in ("pair_sum", "pair_square_sum"):
            if not getattr(self, name):
                setattr(self, name, [[0] * k for _ in range(k)])

    def add_deal_sums(self, per_deal: np.ndarray) -> None:
        """Fold in a (deals, agents) int64 array of per-deal score sums S_a(d)."""
        sums = per_deal.astype(np.int64)  # |S| < 2**16 per deal: a chunk's squares fit in int64
        c = self.slots_per_deal
        self.deals += len(per_deal)
        for a in range(self.n_agents):
            self.score_sum[a] += int(sums[:, a].sum())
            self.score_square_sum[a] += int((sums[:, a] * sums[:, a]).sum())
            for b in range(self.n_agents):
                diff = sums[:, a] * c[b] - sums[:, b] * c[a]
                self.pair_sum[a][b] += int(diff.sum())
                self.pair_square_sum[a][b] += int((diff * diff).sum())

    # ------------------------------------------------------------------ derived figures
    def _mean_ci(self, total: int, square: int, scale: int) -> tuple[float, list[float], float]:
        """Mean per deal / scale, its 95% t-interval, and the two-sided p-value against 0."""
        n = self.deals
        mean = total / n / scale
        if n < 2:
            return mean, [float("nan"), float("nan")], float("nan")
        variance = (square - total * total / n) / (n - 1) / (scale * scale)
        se = math.sqrt(max(variance, 0.0) / n)
        half = float(stats.t.ppf(0.975, n - 1)) * se
        p = (
            1.0
            if se == 0 and mean == 0
            else (0.0 if se == 0 else float(2 * stats.t.sf(abs(mean) / se, n - 1)))
        )
        return mean, [mean - half, mean + half], p

    def points_per_hand(self, a: int) -> tuple[float, list[float]]:
        mean, ci, _ = self._mean_ci(self.score_sum[a], self.score_square_sum[a], self.slots_per_deal[a])
        if self.games_hands[a]:  # games: per game -> per hand
            per_game_hands = self.games_hands[a] / (self.deals * self.slots_per_deal[a])
            return mean / per_game_hands, [x / per_game_hands for x in ci]
        return mean, ci

    def difference(self, a: int, b: int) -> tuple[float, list[float], float]:
        """Agent a's points per deal-slot minus agent b's, with 95% CI and p-value."""
        scale = self.slots_per_deal[a] * self.slots_per_deal[b]
        return self._mean_ci(self.pair_sum[a][b], self.pair_square_sum[a][b], scale)


def _round(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


def summarize(config: TournamentConfig, tally: Tally) -> dict[str, Any]:
    """The summary as plain JSON data: per agent, and per pair of agents."""
    specs = config.specs()
    names = [s.name for s in specs]
    per_agent = []
    for a, name in enumerate(names):
        slots = tally.deals * tally.slots_per_deal[a]
        hands = tally.games_hands[a] if config.games else slots
        mean, ci = tally.points_per_hand(a)
        row: dict[str, Any] = {
            "name": name,
            "points_per_hand": _round(mean),
            "ci95": [_round(x) for x in ci],
            "moon_rate": _round(1000 * tally.moons_made[a] / hands),
            "moons_suffered_rate": _round(1000 * tally.moons_suffered[a] / hands),
            "qs_rate": None if config.games else _round(tally.qs_taken[a] / hands),
            "tricks_per_hand": None if config.games else _round(tally.tricks[a] / hands),
            "hands": hands,
        }
        if config.games:
            row["games"] = slots
            row["win_rate"] = _round(tally.wins[a] / slots)
            row["mean_final_score"] = _round(tally.score_sum[a] / slots)
            mu, sigma = tally.ratings[a]
            row["rating"] = {"mu": _round(mu), "sigma": _round(sigma), "ordinal": _round(mu - 3 * sigma)}
        per_agent.append(row)
    pairs = []
    for a, b in itertools.combinations(range(len(names)), 2):
        diff, ci, p = tally.difference(a, b)
        if config.games:  # per game -> per hand, using the mean game length of both
            per_game = (tally.games_hands[a] + tally.games_hands[b]) / (
                tally.deals * (tally.slots_per_deal[a] + tally.slots_per_deal[b])
            )
            diff, ci = diff / per_game, [x / per_game for x in ci]
        pairs.append(
            {
                "a": names[a],
                "b": names[b],
                "a_minus_b": _round(diff),
                "ci95": [_round(x) for x in ci],
                "p_value": _round(p),
            }
        )
    return {
        "agents": per_agent,
        "pairs": pairs,
        "deals": tally.deals,
        "hands": tally.hands,
        "seatings": len(config.seatings()),
        "unit": "games" if config.games else "hands",
        "rules": config.rules.describe(),
        "seed": config.seed,
    }


# ---------------------------------------------------------------------------- one chunk
def _tally_hands(tally: Tally, records: np.ndarray, seating_agents: np.ndarray, n_seatings: int) -> None:
    """Fold a chunk of HAND_RECORDs (ordered by deal, then seating) into the tally."""
    n = seating_agents.shape[1]
    k = tally.n_agents
    deals = len(records) // n_seatings
    agent = seating_agents[records["seating"]]  # (rows, seats)
    score = records["score"][:, :n].astype(np.int64)
    deal_index = np.repeat(np.arange(deals), n_seatings)[:, None] * k + agent
    per_deal = np.bincount(deal_index.ravel(), weights=score.ravel(), minlength=deals * k)
    tally.add_deal_sums(np.rint(per_deal).astype(np.int64).reshape(deals, k))
    tally.hands += len(records)
    shooter = records["moon_shooter"].astype(np.int64)[:, None]
    seats = np.arange(n)[None, :]
    made = seats == shooter  # never true without a moon (shooter -1)
    suffered = (seats != shooter) & (shooter >= 0)
    qs = seats == records["qs_taker"].astype(np.int64)[:, None]

    def per_agent(selected: np.ndarray, weights: np.ndarray | None = None) -> list[int]:
        w = None if weights is None else weights[selected]
        return np.rint(np.bincount(agent[selected], weights=w, minlength=k)).astype(np.int64).tolist()

    everyone = np.ones_like(made)
    tricks = records["tricks"][:, :n].astype(np.int64)
    for name, counts in (
        ("moons_made", per_agent(made)),
        ("moons_suffered", per_agent(suffered)),
        ("qs_taken", per_agent(qs)),
        ("tricks", per_agent(everyone, tricks)),
    ):
        totals = getattr(tally, name)
        for a in range(k):
            totals[a] += counts[a]


def _tally_games(tally: Tally, records: np.ndarray, seating_agents: np.ndarray, n_seatings: int) -> None:
    """Fold a chunk of GAME_RECORDs into the tally, and rate each game with OpenSkill."""
    from openskill.models import PlackettLuce

    n = seating_agents.shape[1]
    k = tally.n_agents
    games = len(records) // n_seatings
    agent = seating_agents[records["seating"]]
    final = records["final_score"][:, :n].astype(np.int64)
    game_index = np.repeat(np.arange(games), n_seatings)[:, None] * k + agent
    per_game = np.bincount(game_index.ravel(), weights=final.ravel(), minlength=games * k)
    tally.add_deal_sums(np.rint(per_game).astype(np.int64).reshape(games, k))
    tally.hands += int(records["hands"].sum())
    winners = records["winners"].astype(np.int64)
    moons = records["moons"][:, :n].astype(np.int64)
    hands = records["hands"].astype(np.int64)
    for a in range(k):
        mine = agent == a
        for seat in range(n):
            rows = mine[:, seat]
            tally.wins[a] += int(((winners[rows] >> seat) & 1).sum())
            tally.games_hands[a] += int(hands[rows].sum())
            tally.moons_made[a] += int(moons[rows, seat].sum())
            others = moons[rows].sum(axis=1) - moons[rows, seat]
            tally.moons_suffered[a] += int(others.sum())
    model = PlackettLuce()
    ratings = [model.rating(mu=mu, sigma=sigma) for mu, sigma in tally.ratings]
    for row in range(len(records)):
        present = sorted(set(agent[row].tolist()))
        if len(present) < 2:
            continue
        means = [float(final[row][agent[row] == a].mean()) for a in present]
        updated = model.rate([[ratings[a]] for a in present], scores=[-m for m in means])
        for a, team in zip(present, updated, strict=True):
            ratings[a] = team[0]
    tally.ratings = [[r.mu, r.sigma] for r in ratings]


# ---------------------------------------------------------------------------- running
def _new_tally(config: TournamentConfig) -> Tally:
    from openskill.models import PlackettLuce

    k = len(config.agents)
    slots = [sum(s.count(a) for s in config.seatings()) for a in range(k)]
    tally = Tally(n_agents=k, slots_per_deal=slots)
    if config.games:
        fresh = PlackettLuce().rating()
        tally.ratings = [[fresh.mu, fresh.sigma] for _ in range(k)]
    return tally


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
) -> TournamentResult:
    """Play the tournament chunk by chunk; with ``out``, stream records to Parquet and keep a
    manifest so that an interrupted run can be resumed (``resume=True``) to the same result.

    ``runner`` plays the chunks (default: ``LocalRunner``, this process). ``stop_after_chunks``
    simulates an interruption after that many chunks (raises ``Interrupted``), for tests.
    """
    from hearts_sim import __version__

    out_path = Path(out) if out is not None else None
    tally = _new_tally(config)
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
    runner = runner or LocalRunner()
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
                    _tally_games(tally, records, seating_agents, n_seatings)
                else:
                    _tally_hands(tally, records, seating_agents, n_seatings)
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
    if last_chunk < config.n_chunks:
        raise Interrupted(last_chunk, config.n_chunks, out_path)
    summary = summarize(config, tally)
    if out_path is not None:
        manifest["summary"] = summary
        _write_manifest(out_path, manifest)
    return TournamentResult(config, summary, out_path)


def chunk_records(config: TournamentConfig, chunk: int) -> np.ndarray:
    """Play chunk ``chunk`` of a tournament: HAND_RECORDs (or GAME_RECORDs with ``games``).

    A pure function of (config, chunk) whatever the machine, thread count or process,
    which is what lets any runner (local or a cluster) produce identical results.
    """
    table = config.table()
    start = chunk * config.chunk_deals
    count = min(config.chunk_deals, config.deals - start)
    if config.games:
        return run_games(table, config.seed, start, count)
    return run_hands(table, config.seed, start, count)


class ChunkRunner(Protocol):
    """Plays chunks of a tournament and yields them in order, as (chunk index, records)."""

    def chunks(self, config: TournamentConfig, chunks: range) -> Iterator[tuple[int, np.ndarray]]: ...


class LocalRunner:
    """Runs every chunk in this process, one after the other (numba threads inside each)."""

    def chunks(self, config: TournamentConfig, chunks: range) -> Iterator[tuple[int, np.ndarray]]:
        for chunk in chunks:
            yield chunk, chunk_records(config, chunk)


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


# ---------------------------------------------------------------------------- display
def format_summary(summary: dict[str, Any]) -> str:
    """The results table for the terminal (aligned columns)."""
    games = summary["unit"] == "games"
    header = ["agent", "points/hand", "95% CI", "moons/1k", "suffered/1k"]
    header += ["win rate", "final score", "rating"] if games else ["QS rate", "tricks/hand"]
    rows = []
    for a in summary["agents"]:
        low, high = a["ci95"]
        ci = "-" if low is None else f"[{low:.2f}, {high:.2f}]"
        row = [
            a["name"],
            f"{a['points_per_hand']:.3f}",
            ci,
            f"{a['moon_rate']:.2f}",
            f"{a['moons_suffered_rate']:.2f}",
        ]
        if games:
            r = a["rating"]
            row += [f"{a['win_rate']:.3f}", f"{a['mean_final_score']:.1f}", f"{r['mu']:.1f}±{r['sigma']:.1f}"]
        else:
            row += [f"{a['qs_rate']:.3f}", f"{a['tricks_per_hand']:.2f}"]
        rows.append(row)
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    unit = "games" if games else "deals"
    out = [
        f"{summary['deals']:,} {unit} x {summary['seatings']} seatings = {summary['hands']:,} hands; "
        f"rules: {summary['rules']}; seed {summary['seed']}",
        "",
        line(header),
        line(["-" * w for w in widths]),
    ]
    out += [line(r) for r in rows]
    if summary["pairs"]:
        out.append("")
        for p in summary["pairs"]:
            low, high = p["ci95"]
            ci = "-" if low is None else f"[{low:+.3f}, {high:+.3f}]"
            out.append(
                f"{p['a']} - {p['b']}: {p['a_minus_b']:+.3f} points/hand, 95% CI {ci}, p = {p['p_value']:.3g}"
                if p["p_value"] is not None
                else f"{p['a']} - {p['b']}: {p['a_minus_b']:+.3f} points/hand"
            )
        out.append("(points are penalties: negative means the first agent did better)")
    return "\n".join(out)


def match_json(summary: dict[str, Any]) -> dict[str, Any]:
    """``hearts-sim match --json``: the two-agent view of a summary."""
    a, b = summary["agents"]
    pair = summary["pairs"][0]
    return {
        "agents": [a["name"], b["name"]],
        "deals": summary["deals"],
        "hands": summary["hands"],
        "points_per_hand": {a["name"]: a["points_per_hand"], b["name"]: b["points_per_hand"]},
        "a_minus_b": pair["a_minus_b"],
        "ci95": pair["ci95"],
        "p_value": pair["p_value"],
        "rules": summary["rules"],
        "seed": summary["seed"],
        "unit": summary["unit"],
    }
