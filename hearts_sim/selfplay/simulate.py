"""``simulate`` and ``simulate_games``: batched self-play from Python, one DataFrame row per hand or game.

This is the composition layer over the engine: it resolves rules and agent specs,
runs the ``play_hand_block`` / ``play_game_block`` kernels chunk by chunk (with a progress bar
on long runs) and turns the record arrays into pandas DataFrames.

>>> df = simulate("standard", ["lowest", "random", "random", "random"], hands=1000, seed=1)
>>> len(df), int(df[["points_0", "points_1", "points_2", "points_3"]].sum(axis=1).min())
(1000, 26)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from agents.dispatch import KindSet
from agents.external import EngineOptions, ExternalSpec, source_bytes
from agents.registry import KIND_BY_NAME, AgentSpec, parse_agent, seat_arrays
from hearts_sim._numba import max_threads, module_stamp, threads_bound
from hearts_sim.core.checks import is_integer, shown
from hearts_sim.core.errors import InputError
from hearts_sim.core.rules import Rules, resolve_rules
from hearts_sim.engine.hand import MAX_HANDS_PER_GAME, unreachable_target
from hearts_sim.engine.rng import MAX_INDEX, SeedError, check_index, check_seed
from hearts_sim.engine.state import new_states
from hearts_sim.selfplay.lockstep import external_seats, run_lockstep
from hearts_sim.selfplay.loops import (
    advance_game_block,
    advance_hand_block,
    blocks_for,
    in_blocks,
    play_game_block,
    play_hand_block,
    set_thread_count,
)
from hearts_sim.selfplay.records import (
    GAME_HAND_RECORD,
    GAME_RECORD,
    HAND_RECORD,
    game_frame,
    hand_frame,
    undecided_games,
)

DEFAULT_CHUNK = 1 << 17  # hands per kernel call: bounds memory, paces the progress bar
MAX_COUNT = 2**40  # hands or games in one call: the kernels count in int64, memory runs out first


class SimulationError(InputError):
    """Bad arguments to a simulation (hand count, seats, threads)."""


class UndecidedGamesWarning(UserWarning):
    """Some games of a run were cut off undecided after ``MAX_HANDS_PER_GAME`` hands: no one won them."""


@dataclass(frozen=True)
class Table:
    """Rules and the seatings to play every deal in, resolved to kernel arguments."""

    rules: Rules
    seatings: tuple[tuple[AgentSpec, ...], ...]

    @classmethod
    def build(cls, rules: Rules | str | None, seatings: Sequence[Sequence[Any]]) -> Table:
        rules = resolve_rules(rules)
        resolved = tuple(tuple(parse_agent(a) for a in seating) for seating in seatings)
        for seating in resolved:
            if len(seating) != rules.n_players:
                raise SimulationError(
                    f"{len(seating)} seats given for {rules.n_players} players: "
                    f"name one agent per seat, or one agent for all seats"
                )
        return cls(rules, resolved)

    @property
    def external(self) -> bool:
        """Whether some seat is decided outside the compiled loop (a Python agent, an engine)."""
        return any(agent.external for seating in self.seatings for agent in seating)

    def labels(self) -> list[list[str]]:
        """The agent's name in each seat of each seating (the records' ``agent_<seat>`` columns)."""
        return [[agent.name for agent in seating] for seating in self.seatings]

    def kind_set(self) -> KindSet:
        """The policy kinds this table's decisions run (and the cheap kinds every set holds,
        ``agents.dispatch.CHEAP_KINDS``): the loops are compiled for these alone."""
        return KindSet.of(
            kind.name for seating in self.seatings for agent in seating for kind in agent.kinds()
        )

    def uncached(self) -> str:
        """Why the loops for this table compile in every process, numba's cache unable to keep
        them (a kind's data too large to freeze: ``PolicyKind.uncached``); '' when it keeps them."""
        reasons = (KIND_BY_NAME[name].uncached for name in self.kind_set().names)
        return "; ".join(dict.fromkeys(reason for reason in reasons if reason))

    @property
    def searches(self) -> bool:
        """Whether a seat's agent searches (``mc``, ``pimc``, ``ismcts`` and the levels of them):
        hands of seconds, not microseconds."""
        return any(KIND_BY_NAME[name].searches for name in self.kind_set().names)

    def kernel_arguments(self) -> tuple[Any, ...]:
        """(kinds, rules, pass codes, pass params, play codes, play params) for the loops."""
        return (self.kind_set(), self.rules.to_tuple(), *seat_arrays([list(s) for s in self.seatings]))

    def plays_digest(self) -> str:
        """What decides how this table plays, as one digest: the version, the sources of its
        kernels (``KindSet.stamp``: the engine, the kinds, their weights) and of the loops, and
        every seat's policies and parameters (a level resolved by its file), and the sources of its
        ``py:`` agents (``source_bytes``). Two processes with the same digest play every deal
        alike, but for outside agents whose code it cannot see (``code_unseen``: an engine's
        command, an object)."""
        import hearts_sim  # the attribute at call time: a process's version, not this module's

        kinds, rules, *policies = self.kernel_arguments()
        loops = [module_stamp(f"hearts_sim.selfplay.{name}") for name in ("loops", "lockstep")]
        digest = hashlib.sha256(repr((hearts_sim.__version__, kinds.stamp, loops, rules)).encode())
        for array in policies:
            digest.update(np.ascontiguousarray(array).tobytes())
        for spec in self.external_specs():
            digest.update(hashlib.sha256(source_bytes(spec)).digest())
        return digest.hexdigest()[:16]

    def external_specs(self) -> list[ExternalSpec]:
        """The outside agents of its seats, each once, in seat order."""
        return list(dict.fromkeys(external_seats(self).values()))


# Compiling a loop into an empty cache, measured on the quiet 2-core development machine
# (2026-12-01, numba's compile events, the loop of each kind with random): the cheap kinds and
# the rule player (the default tournament's loop) about 20 s, and what a search kind adds to it
# (mc 56 s in all, pimc 79 s, ismcts 96 s). Shared parts (the world sampler) compile once, so
# for a set of several search kinds the sum is on the high side.
COMPILE_BASE_SECONDS = 20.0
COMPILE_ADDED_SECONDS = {"mc": 35.0, "pimc": 60.0, "ismcts": 75.0}  # another search kind: the most


def compile_seconds(table: Table, games: bool = False) -> float | None:
    """About how long the first kernel call for ``table`` compiles, when neither this process
    nor numba's on-disk cache holds the loop specialised for its kind set; None otherwise
    (or when numba's cache cannot be inspected: then nothing is promised)."""
    kinds, rules, pass_codes, pass_params, play_codes, play_params = table.kernel_arguments()
    policies = (pass_codes, pass_params, play_codes, play_params)
    one = np.zeros(1, dtype=np.int64)
    if table.external:  # played in lockstep (``selfplay.lockstep``): its loops' signatures
        # (with an outside agent, "compiling ... one time, about 20 s" was said in every run)
        loop = advance_game_block if games else advance_hand_block
        slots: tuple[Any, ...] = (one, new_states(1), one)  # jobs, states, status
        if games:  # and each slot's hands played, its game's record, whether its hands are kept
            slots += (one, np.zeros(1, GAME_RECORD), False)
        arguments: tuple[Any, ...] = (kinds, rules, np.uint64(0), *policies, *slots, 0, 1)
    else:
        loop = play_game_block if games else play_hand_block
        records: tuple[np.ndarray, ...] = (np.zeros(1, dtype=HAND_RECORD),)
        if games:  # the games, their hands, each block's progress
            records = (np.zeros(1, GAME_RECORD), np.zeros(0, GAME_HAND_RECORD), np.zeros((1, 2), np.int64))
        arguments = (kinds, rules, np.uint64(0), 0, 1, *policies, new_states(1), *records, 0, 1)
    try:
        signature = tuple(loop.typeof_pyval(a) for a in arguments)
        if signature in loop.overloads:
            return None
        cache = loop._cache  # numba's FunctionCache: the index of what is on disk
        if cache._index_key(signature, loop.targetctx.codegen()) in cache._cache_file._load_index():
            return None
    except Exception:  # numba's internals moved: better silent than wrong
        return None
    searches = [name for name in kinds.names if KIND_BY_NAME[name].searches]
    most = max(COMPILE_ADDED_SECONDS.values())
    return COMPILE_BASE_SECONDS + sum(COMPILE_ADDED_SECONDS.get(name, most) for name in searches)


def set_threads(threads: int | None) -> int:
    """Play the loops on ``threads`` threads in calls from this thread (all cores if None;
    ``selfplay.loops.in_blocks``); returns the number in use."""
    if threads is None:
        threads = max_threads()
    if not is_integer(threads) or not 1 <= threads <= max_threads():
        raise SimulationError(
            f"threads={shown(threads)} is not valid: choose 1 .. {max_threads()} ({threads_bound()})"
        )
    set_thread_count(int(threads))
    return int(threads)


def _play_hands(table: Table, seed: int, first: int, count: int, records: np.ndarray) -> None:
    """``play_hand_block`` over ``count`` deals from ``first``, in blocks on threads
    (``loops.in_blocks``), one scratch state per block."""
    kinds, rules, *policies = table.kernel_arguments()
    states = new_states(_blocks(table, len(records)))
    in_blocks(
        play_hand_block, len(states), kinds, rules, np.uint64(seed), first, count, *policies, states, records
    )


def run_hands(
    table: Table,
    seed: int,
    first_deal: int,
    n_deals: int,
    out: np.ndarray | None = None,
    engines: EngineOptions | None = None,
) -> np.ndarray:
    """Kernel call: ``n_deals`` deals from ``first_deal``, each in every seating, as HAND_RECORDs
    (written into ``out`` when given: ``n_deals * len(table.seatings)`` records; every field
    is written, so ``out`` may come from ``np.empty``). A table with external seats is played
    in lockstep (``selfplay.lockstep``; ``engines``: how its engines run)."""
    records = _records_out(out, n_deals * len(table.seatings), HAND_RECORD)
    if table.external:
        run_lockstep(table, seed, first_deal, n_deals, records, False, engines or EngineOptions())
        return records
    _play_hands(table, seed, first_deal, n_deals, records)
    return records


def _records_out(out: np.ndarray | None, count: int, dtype: np.dtype) -> np.ndarray:
    if out is None:
        return np.zeros(count, dtype=dtype)
    if out.shape != (count,) or out.dtype != dtype:
        raise ValueError(f"out must hold {count} records of the kernel's dtype, not {out.shape} {out.dtype}")
    return out


# Room for each game's hands in a first try: a game to 100 between random players lasts about 11
# hands (at most 15 in 2,000); a block whose games run past their room plays its games from the
# first that did not fit again, with twice as much.
HANDS_PER_GAME_GUESS = 24


def run_games(
    table: Table,
    seed: int,
    first_game: int,
    n_games: int,
    out: np.ndarray | None = None,
    engines: EngineOptions | None = None,
    keep_hands: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Kernel call: ``n_games`` whole games, each in every seating, as GAME_RECORDs (into ``out``
    when given, as ``run_hands``), and with ``keep_hands`` every hand of them as
    GAME_HAND_RECORDs, by game, seating, then hand (else an empty array)."""
    records = _records_out(out, n_games * len(table.seatings), GAME_RECORD)
    first_job = first_game * len(table.seatings)
    if table.external:
        options = engines or EngineOptions()
        return records, run_lockstep(table, seed, first_game, n_games, records, True, options, keep_hands)
    if not keep_hands:
        no_hands = np.zeros(0, dtype=GAME_HAND_RECORD)
        _play_games(table, seed, first_job, records, no_hands)
        return records, no_hands
    return records, np.concatenate(
        _games_keeping_hands(table, seed, first_job, records, HANDS_PER_GAME_GUESS)
    )


def first_game(table: Table, seed: int) -> np.ndarray:
    """Game 0 in the table's first seating alone, as one GAME_RECORD: the first record a run of
    whole games writes, played without the other seatings (a ``hard`` game is a few seconds each)."""
    records = np.zeros(1, dtype=GAME_RECORD)
    _play_games(table, seed, 0, records, np.zeros(0, dtype=GAME_HAND_RECORD))
    return records


def _blocks(table: Table, n_jobs: int) -> int:
    """The blocks to play ``n_jobs`` hands or games in: a search agent's take seconds a hand, so
    a block each, that a stop (Ctrl-C) waits for those in play alone (blocks of a chunk's share
    kept a first Ctrl-C waiting 4 to 14 s with ``hard``); a few a thread otherwise."""
    return n_jobs if table.searches else blocks_for(n_jobs)


def _play_games(
    table: Table, seed: int, first_job: int, records: np.ndarray, hands: np.ndarray
) -> np.ndarray:
    """``play_game_block`` over the jobs of ``records`` from ``first_job``, in blocks on threads;
    each block's (hands written, first job not played)."""
    kinds, rules, *policies = table.kernel_arguments()
    states = new_states(_blocks(table, len(records)))
    progress = np.zeros((len(states), 2), dtype=np.int64)
    in_blocks(
        play_game_block, len(states), kinds, rules, np.uint64(seed), first_job, len(records), *policies,
        states, records, hands, progress,
    )  # fmt: skip
    return progress


def _games_keeping_hands(
    table: Table, seed: int, first_job: int, records: np.ndarray, per_game: int
) -> list[np.ndarray]:
    """The hands of the games of ``records`` (jobs from ``first_job``) in job order, with room
    for ``per_game`` hands a game: the games of a block that ran out of room are played again
    with twice as much (each is a function of its seed)."""
    hands = np.empty(len(records) * per_game, dtype=GAME_HAND_RECORD)
    progress = _play_games(table, seed, first_job, records, hands)
    n_blocks = len(progress)
    pieces = []
    for block, (written, stopped) in enumerate(progress.tolist()):
        at = block * len(hands) // n_blocks  # the block's share of ``hands`` starts here
        pieces.append(hands[at : at + written])
        stop = (block + 1) * len(records) // n_blocks
        if stopped < stop:
            rest = records[stopped:stop]
            pieces += _games_keeping_hands(table, seed, first_job + stopped, rest, 2 * per_game)
    return pieces


def chunks(total: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, count) pairs covering ``range(total)``."""
    for start in range(0, total, size):
        yield start, min(size, total - start)


def check_count(name: str, count: int) -> int:
    """``count`` of hands, games or rows as a Python int, in 1 .. ``MAX_COUNT``."""
    if not is_integer(count) or not 0 < count <= MAX_COUNT:
        raise SimulationError(f"{name} must be a whole number in 1 .. {MAX_COUNT}, not {shown(count)}")
    return int(count)


def check_games_can_end(rules: Rules) -> None:
    """``SimulationError`` for a target no game can reach (``unreachable_target``): a run printed
    win rates of 0 and ratings as if they meant something."""
    problem = unreachable_target(rules)
    if problem is not None:
        raise SimulationError(problem)


def _check_seeding(seed: int, first: int, count: int, name: str) -> tuple[int, int]:
    """The master seed and the first hand (game) index, checked, with the last of ``count`` from
    it in range too (past 2**62 a row could not be dealt again): one line naming the bad one."""
    try:
        seed, first = check_seed(seed), check_index(first, name)
    except SeedError as error:
        raise SimulationError(str(error)) from None
    if first + count - 1 > MAX_INDEX:
        unit = name.removeprefix("first_")
        raise SimulationError(
            f"{name}={first} is not valid with {unit}s={count}: the last {unit} would be past index "
            f"2**62; start at {MAX_INDEX - count + 1} at most"
        )
    return seed, first


def _seatings(rules: Rules, seats: Any) -> list[list[Any]]:
    """One seating from one agent for every seat, or one agent (a spec, or an agent object) per seat."""
    if seats is None:
        seats = "random"
    if isinstance(seats, (str, AgentSpec)) or not isinstance(seats, (list, tuple)):
        return [[seats] * rules.n_players]
    return [list(seats)]


def check_progress(progress: Any) -> None:
    """One line for a ``progress`` that is not True, False or None (``"no"`` drew the bar)."""
    if progress is not None and not isinstance(progress, bool | np.bool_):
        raise SimulationError(f"progress={shown(progress)} is not valid: True, False or None (automatic)")


def progress_shown(progress: bool | None) -> bool:
    """Whether a long run draws a progress bar: ``progress`` where given, else where someone
    watches one: a terminal, or a Jupyter kernel (its stderr is no terminal; ``tqdm.auto`` draws
    a widget there, or a text bar without ipywidgets)."""
    if progress is not None:
        return bool(progress)
    return sys.stderr.isatty() or "ipykernel" in sys.modules


def _run_chunked(
    run: Callable[[int, int, np.ndarray], object],
    total: int,
    chunk: int,
    dtype: np.dtype,
    unit: str,
    progress: bool | None,
    table: Table,
) -> np.ndarray:
    """``run(start, count, out)`` chunk by chunk into one array of ``total`` records (no copy
    at the end), with a progress bar on long runs, and on any run whose loop compiles first
    (``compile_seconds``), where someone watches: the bar says so until the first chunk is in.
    A first ``simulate`` in a notebook waited 20 s to 2 minutes without a word."""
    watched = progress if progress is not None else progress_shown(None)
    compiling = compile_seconds(table, dtype == GAME_RECORD) if watched else None
    show = watched and (progress is not None or total >= 4 * chunk or compiling is not None)
    records = _records_room(total, dtype, unit)
    with tqdm(total=total, unit=unit, disable=not show, smoothing=0.1) as bar:
        if compiling is not None:
            bar.set_description_str(f"compiling the kernels (one time, about {compiling:.0f} s)")
        for start, count in chunks(total, chunk):
            run(start, count, records[start : start + count])
            if compiling is not None and start == 0:
                bar.set_description_str("", refresh=False)
            bar.update(count)
    return records


def _records_room(total: int, dtype: np.dtype, unit: str) -> np.ndarray:
    """Room for ``total`` records, refused in one line where they cannot fit in the memory this
    process can have (``available_memory``): ``hands=10**12`` was numpy's ``MemoryError`` quoting
    the whole record dtype (139 TiB), and in a container a run past its limit was killed mid-run."""
    need = total * dtype.itemsize
    memory = available_memory()
    if memory is None or need <= memory:
        try:
            return np.empty(total, dtype=dtype)
        except MemoryError:
            pass
    room = "" if memory is None else f", and {memory_size(memory)} is available here"
    raise SimulationError(
        f"{total:,} {unit}s need {memory_size(need)} for their records{room}: play fewer at a "
        f"time (first_{unit}= says where each part starts), or a match (hearts-sim match), which "
        "keeps its records on disk"
    )


def memory_size(size: int) -> str:
    """Bytes for a message: in GiB, or MiB below one."""
    return f"{size / 2**30:,.1f} GiB" if size >= 2**30 else f"{size / 2**20:,.1f} MiB"


def _cgroup_stat(path: Path, key: str) -> int:
    """The value of ``key`` in a cgroup's ``memory.stat`` (0 where it is not there)."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


def available_memory(root: Path = Path("/")) -> int | None:
    """The bytes this process can still have: the smallest of what the system calls available
    (Linux's ``MemAvailable``) and what a container's limit leaves (cgroup v2 ``memory.max`` less
    ``memory.current``, or v1's, the file cache it can drop given back: a container that had read
    much Parquet counted its cache as used, near its limit), else the machine's memory (the
    host's, where a container hides its limit); None where nothing says (Windows). ``root``: where
    ``/proc`` and ``/sys`` are read (a test's folder)."""
    sizes = []
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in (root / "proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                sizes.append(int(line.split()[1]) * 1024)
    cgroup = root / "sys/fs/cgroup"
    for folder, limit, used, cache in (
        (cgroup, "memory.max", "memory.current", "inactive_file"),  # v2
        (cgroup / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
    ):
        with contextlib.suppress(OSError, ValueError):
            text = Path(folder, limit).read_text().strip()
            if text != "max" and int(text) < 2**60:  # v1 says "no limit" with a huge number
                left = int(text) - int(Path(folder, used).read_text())
                sizes.append(max(0, left + _cgroup_stat(Path(folder, "memory.stat"), cache)))
    if not sizes:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    return min(sizes) if sizes else None


def simulate(
    rules: Rules | str = "standard",
    seats: Any = None,
    hands: int = 10_000,
    seed: int = 0,
    *,
    first_hand: int = 0,
    chunk_size: int = DEFAULT_CHUNK,
    threads: int | None = None,
    progress: bool | None = None,
    engine_procs: int = 1,
    engine_timeout: float | None = 30.0,
) -> pd.DataFrame:
    """Play ``hands`` independent hands and return one row per hand.

    ``seats``: one agent spec per seat, or one spec for every seat (default ``random``); a
    Python agent object or a ``py:``/``exec:`` spec decides outside the compiled loop
    (``agents.external``; ``engine_procs`` processes per engine, ``engine_timeout`` seconds
    per request). Hand i is dealt from ``derive_seed(seed, first_hand + i)`` with pass
    direction i of the cycle and dealer i mod n, so results are identical for any chunk size
    or thread count.
    """
    rules = resolve_rules(rules)
    hands = check_count("hands", hands)
    chunk_size = check_count("chunk_size", chunk_size)
    check_progress(progress)
    seed, first_hand = _check_seeding(seed, first_hand, hands, "first_hand")
    table = Table.build(rules, _seatings(rules, seats))
    set_threads(threads)
    engines = EngineOptions(engine_procs, engine_timeout)
    records = _run_chunked(
        lambda start, count, out: run_hands(table, seed, first_hand + start, count, out, engines),
        hands,
        chunk_size,
        HAND_RECORD,
        "hand",
        progress,
        table,
    )
    return hand_frame(records, table.rules, table.labels())


def simulate_games(
    rules: Rules | str = "standard",
    seats: Any = None,
    games: int = 1_000,
    seed: int = 0,
    *,
    hands: bool = False,
    first_game: int = 0,
    chunk_size: int = 1 << 13,
    threads: int | None = None,
    progress: bool | None = None,
    engine_procs: int = 1,
    engine_timeout: float | None = 30.0,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Play ``games`` whole games to ``rules.target_score``; one row per game (scores, winner, moons).
    Seats and engines as in ``simulate``.

    ``hands=True`` returns ``(games, hands)``: also every hand of the games, one row each with
    ``simulate``'s columns, ``game`` and ``game_hand`` (0-based) in place of ``deal``, and
    ``game_score_<s>``, the game's totals before the hand, and ``game_won_<s>``, whether the seat
    won that game (alone or sharing first place). Hand h of game g is dealt the same
    cards in every seating, and can be replayed (``replay``)."""
    rules = resolve_rules(rules)
    games = check_count("games", games)
    if not isinstance(hands, (bool, np.bool_)):
        raise SimulationError(
            f"hands must be True or False (keep every hand of the games), not {shown(hands)}"
        )
    chunk_size = check_count("chunk_size", chunk_size)
    check_progress(progress)
    seed, first_game = _check_seeding(seed, first_game, games, "first_game")
    check_games_can_end(rules)
    table = Table.build(rules, _seatings(rules, seats))
    set_threads(threads)
    engines = EngineOptions(engine_procs, engine_timeout)
    kept: list[np.ndarray] = []

    def run(start: int, count: int, out: np.ndarray) -> None:
        kept.append(run_games(table, seed, first_game + start, count, out, engines, bool(hands))[1])
        if hands:
            _check_hands_room(kept, start + count, games)

    records = _run_chunked(run, games, chunk_size, GAME_RECORD, "game", progress, table)
    undecided = undecided_games(records)
    if undecided:  # every row winner -1 and n_winners 0, and not a word, until 2026-12-07
        warnings.warn(
            f"{undecided:,} of {games:,} games cut off undecided after {MAX_HANDS_PER_GAME:,} hands "
            f"(no winner: n_winners 0): target_score={rules.target_score} is far for these agents",
            UndecidedGamesWarning,
            stacklevel=2,
        )
    frame = game_frame(records, table.rules, table.labels())
    if not hands:
        return frame
    every_hand = np.concatenate(kept)
    kept.clear()  # the chunks' pieces, copied into one array
    return frame, hand_frame(every_hand, table.rules, table.labels())


def _check_hands_room(kept: list[np.ndarray], played: int, games: int) -> None:
    """After a chunk of ``simulate_games(hands=True)``: a refusal in one line where all the games'
    hands, at the length of those played so far, would not fit in the memory this process can
    have (``available_memory``), twice over (the chunks' pieces, then the one array they are
    gathered into). A game's hands are not known before it ends, and the games' own records were
    the only ones checked: 400,000 games took 1.7 GB past a limit of 512 MiB."""
    memory = available_memory()
    held = sum(piece.nbytes for piece in kept)
    need = 2 * held * games // played
    if memory is not None and need > memory:
        raise SimulationError(
            f"the hands of {games:,} games need about {memory_size(need)} at the length of the "
            f"first {played:,}, and {memory_size(memory)} is available here: play fewer games at a "
            "time (first_game= says where each part starts), or without hands=True"
        )
