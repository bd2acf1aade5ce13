"""Tournaments on a Dask cluster: ``DaskRunner`` plays the chunks on the workers.

A chunk (a shard: a range of deal seeds, each deal in every seating) is a pure function
of (config, chunk index), so a worker plays it with the same numba kernels as a local run
and returns the records; the runner yields them in chunk order and ``run_tournament`` on
the client tallies them, writes Parquet and keeps the manifest exactly as for a local
run. Records and summary are therefore identical whatever the number of workers.

- At most ``max_in_flight`` chunks are submitted at a time (default: twice the workers'
  threads), so memory stays flat on the client and on the workers.
- A chunk whose worker dies is recomputed (the scheduler reschedules it; ``retries``
  also covers exceptions); a crashed client resumes from its manifest (``--resume``).
- A worker plugin plays one deal of the tournament on every worker, current and joining,
  before the first chunk: numba kernels load from (or are compiled into) the on-disk
  cache once per worker process.
- Every chunk checks that its worker would play the tournament as the client would
  (``Table.plays_digest``: the version, the kernels' sources, each seat's policy): a worker
  on other code refuses the chunk (``OtherCode``), so no run mixes two programs' records.

``dask[distributed]`` is optional (``pip install -e ".[cluster]"``); this module imports
without it and ``DaskRunner`` raises ``ClusterError`` with the install command.

>>> parse_address("local:2")
('local', 2)
>>> parse_address("tcp://10.0.0.1:8786")
('tcp://10.0.0.1:8786', None)
>>> parse_address("scheduler:8786")
('tcp://scheduler:8786', None)
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import re
import shlex
import signal
import threading
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

from agents.external import (
    OBJECT,
    EngineOptions,
    ExternalAgentError,
    agent_folder,
    agents_found_in,
    code_held,
    decider,
)
from agents.kinds import AgentError
from hearts_sim.core.checks import is_integer, is_real, one_line, shown
from hearts_sim.core.errors import install_hint, signal_handlers
from hearts_sim.selfplay.simulate import Table
from hearts_sim.studies.tournament import (
    ChunkError,
    ChunkRecords,
    PlayedChunks,
    TournamentConfig,
    TournamentError,
    TournamentResult,
    chunk_records,
    run_tournament,
)

INSTALL = install_hint('"dask[distributed]>=2024.1"', "cluster")
PLUGIN_NAME = "hearts-sim-warm-up"
DEFAULT_RETRIES = 3

try:  # the plugin's base class; without dask the plugin is never used
    from distributed.diagnostics.plugin import WorkerPlugin as _PluginBase
except ImportError:  # pragma: no cover - exercised by the tests without dask
    _PluginBase = object  # type: ignore[assignment,misc]


class ClusterError(TournamentError):
    """Dask missing, a bad ``--cluster`` address, or a scheduler that cannot be reached."""


def _distributed() -> Any:
    """The ``distributed`` module, or a one-line ClusterError saying what to install."""
    try:
        import distributed
    except ImportError:
        raise ClusterError(f"--cluster needs Dask, which is not installed: {INSTALL}") from None
    return distributed


SCHEDULER = re.compile(
    r"(?:(tcp|tls|ws|wss)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})", re.ASCII
)
MAX_LOCAL_WORKERS = 1024
CONNECT_TIMEOUT = 20.0  # seconds to reach a scheduler before --cluster gives up with one line
WORKERS_TIMEOUT = 60.0  # seconds for a first worker to join a scheduler that has none
PAUSED_TIMEOUT = 60.0  # seconds every worker may stay paused (its memory) before the run stops
CHECK_EVERY = 5.0  # seconds between looks at the workers while a chunk is awaited


def parse_address(address: str) -> tuple[str, int | None]:
    """``local`` / ``local:N`` (a LocalCluster of N worker processes) or a scheduler address
    ``[tcp|tls|ws|wss://]HOST:PORT``; anything else is a one-line ``ClusterError`` at once."""
    text = address.strip() if isinstance(address, str) else ""
    if text.lower() == "local":
        return "local", None
    if text.lower().startswith("local:"):  # LOCAL:2 was a host LOCAL, port 2: 20 s to fail
        count = text[len("local:") :]
        if not (count.isascii() and count.isdigit()) or not 0 < int(count) <= MAX_LOCAL_WORKERS:
            raise ClusterError(
                f"--cluster {address}: local:N needs a number of worker processes in 1 .. {MAX_LOCAL_WORKERS}"
            )
        return "local", int(count)
    match = SCHEDULER.fullmatch(text)
    if not match or not 0 < int(match.group(3)) < 65536:
        raise ClusterError(
            f"--cluster {shown(address)} is not an address: give a scheduler as tcp://HOST:PORT "
            "(e.g. tcp://10.0.0.1:8786), or local:N"
        )
    return text if match.group(1) else f"tcp://{text}", None


# ---------------------------------------------------------------------------- worker side
_WARM: dict[str, Any] = {}  # this worker process's first warm-up seconds, numba cache hits and misses


class OtherCode(ChunkError):
    """A worker that would play the tournament otherwise than the client: another version of
    hearts-sim, other sources or level files (``Table.plays_digest``)."""


@dataclasses.dataclass(frozen=True)
class AgentFailed:
    """What ``play_chunk`` returns for an agent that failed in play: its one line. Returned, not
    raised: Dask retries a task that raised (``retries``), so an agent failing now and then (a
    stateful one, a flaky engine) was played again, on another worker, without a word, where a
    run here stops with the line."""

    message: str


def play_chunk(
    config: TournamentConfig,
    chunk: int,
    threads: int = 1,
    engines: EngineOptions | None = None,
    hands: bool = True,
    plays: tuple[str, str] | None = None,
    folder: str | None = None,
) -> ChunkRecords | AgentFailed:
    """One task: chunk ``chunk`` of ``config`` on ``threads`` threads (capped at the worker's
    cores), with the hands of games if ``hands``. The thread count is a setting per calling
    thread, so it is set in the task. External agents (``engines``) must be importable, or their
    commands runnable, on the worker: those named relative to a folder are found in ``folder``,
    the run's (``agents_found_in``). ``plays``: the client's ``Table.plays_digest`` and version,
    which this worker's must match (``OtherCode``), or the records would mix two programs."""
    from hearts_sim._numba import max_threads
    from hearts_sim.selfplay.simulate import set_threads

    try:
        with agents_found_in(folder), code_held():  # a py: file edited within the chunk stops it
            table = config.table()
            for spec in table.external_specs():  # one this worker cannot load: it says so
                decider(spec, engines or EngineOptions())  # (loaded once; the chunk's play takes it)
            if plays is not None:
                _check_plays(table, *plays)
            set_threads(max(1, min(threads, max_threads())))
            return chunk_records(config, chunk, engines, hands)
    except ExternalAgentError as error:  # an agent's failure in play: its own one line, not retried
        return AgentFailed(str(error))
    except AgentError as error:  # it read as the user's input, which the client had accepted
        raise CannotLoad(
            f"{_this_worker()} cannot load an agent the client can: {error} (a level, or a py: file or "
            "module, must be found on every worker as on the client: HEARTS_SIM_LEVELS, the run's folder)"
        ) from None


class WorkerDied(ChunkError):
    """A worker process ended under a chunk (or its warm-up) and Dask gave up on it: an agent
    that ends its process (``os._exit``, a native crash) or its memory, not a Python error."""


def _worker_died_errors() -> tuple[type[BaseException], ...]:
    """What Dask raises for a worker that died under a task (``KilledWorker``, after its retries)
    or under a call to it (``CommClosedError``): a traceback of 107 lines, until 2026-12-07."""
    try:
        from distributed.comm.core import CommClosedError
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover - without dask no runner exists
        return ()
    return (KilledWorker, CommClosedError)


_WORKER_DIED = _worker_died_errors()
_KILLED = _WORKER_DIED[:1]  # KilledWorker: a death Dask saw; a closed connection may be the scheduler's


class _DeadWorkerFutures(logging.Filter):
    """Drops asyncio's "Future exception was never retrieved" for a connection to a worker that
    died: the local cluster's scheduler runs in this process, and its broadcasts to the dead
    worker printed 9 lines of traceback above the run's one line (``WorkerDied``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (_WORKER_DIED and isinstance(error, _WORKER_DIED))


def _quiet(logger: str, quieting: type[logging.Filter]) -> None:
    """``logger`` with a ``quieting`` filter, once however many runners ask."""
    log = logging.getLogger(logger)
    if not any(isinstance(f, quieting) for f in log.filters):
        log.addFilter(quieting())


class _LostSchedulerLog(logging.Filter):
    """Drops Dask's "Failed to reconnect to scheduler after 20.00 seconds, closing client", a
    timestamped log line above the run's own line for a lost scheduler (``DaskRunner._lost``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to reconnect to scheduler")


def _died(error: BaseException) -> str:
    """The rest of the line for a worker's death: Dask's word for it, and the likely cause (a
    closed connection may also be the scheduler's, lost: that said too)."""
    lost = ", or the connection to the scheduler was lost" if not isinstance(error, _KILLED) else ""
    return (
        f" (Dask: {type(error).__name__}{lost}): an agent that ends its process (os._exit, a crash in "
        "native code) or runs out of memory? Play a few deals without --cluster to see it fail"
    )


class CannotLoad(ChunkError):
    """A worker that cannot load an agent of the tournament (a level, a ``py:`` file or module
    that the client has and it has not): the run stops there, keeping the chunks before it."""


def _this_worker() -> str:
    try:
        return f"worker {_distributed().get_worker().address}"
    except ValueError:  # not in a task: a warm-up (which says where), or called directly
        return f"worker {_WARM['address']}" if "address" in _WARM else f"process {os.getpid()}"


def _check_plays(table: Table, digest: str, version: str) -> None:
    import hearts_sim

    if table.plays_digest() == digest:
        return
    where = _this_worker()
    here = hearts_sim.__version__
    versions = (
        f"version {here} there, {version} here"
        if here != version
        else f"version {here} on both, with other sources, level files or py: agent files"
    )
    raise OtherCode(
        f"{where} would play this tournament otherwise than this machine ({versions}): "
        "install the same hearts-sim, level files and py: agent files on every worker"
    )


def _cache_stats() -> dict[str, Any]:
    from hearts_sim.selfplay.loops import play_game_block, play_hand_block

    stats = [kernel.stats for kernel in (play_hand_block, play_game_block)]  # type: ignore[attr-defined]
    return {
        "cache_path": str(stats[0].cache_path),
        "cache_hits": sum(sum(s.cache_hits.values()) for s in stats),
        "cache_misses": sum(sum(s.cache_misses.values()) for s in stats),
    }


def warm_up(config: TournamentConfig, folder: str | None = None) -> dict[str, Any]:
    """Play one deal of ``config`` (its outside agents found in ``folder``, as ``play_chunk``'s):
    loads its kernels from numba's on-disk cache (compiling and caching them on a cold machine).
    Returns this process's warm-up figures."""
    start = time.perf_counter()
    played = play_chunk(dataclasses.replace(config, deals=1, chunk_deals=1), 0, folder=folder)
    if isinstance(played, AgentFailed):  # as it raised before: the plugin's registration fails
        raise ExternalAgentError(played.message)
    seconds = time.perf_counter() - start
    _WARM.setdefault("seconds", seconds)  # the first warm-up: the one that loads or compiles
    _WARM.update(pid=os.getpid(), warm_ups=_WARM.get("warm_ups", 0) + 1, **_cache_stats())
    return dict(_WARM)


def worker_info() -> dict[str, Any]:
    """What the warm-up recorded in this worker process (empty if none ran)."""
    return dict(_WARM)


class WarmUp(_PluginBase):  # type: ignore[misc,valid-type]
    """Worker plugin: ``warm_up(config)`` on every worker, including workers that join or
    are restarted later, before they take a chunk (off the worker's event loop)."""

    def __init__(self, config: TournamentConfig, folder: str | None = None):
        self.config, self.folder = config, folder

    async def setup(self, worker: Any) -> None:
        _WARM["address"] = worker.address
        await asyncio.get_running_loop().run_in_executor(None, warm_up, self.config, self.folder)


# ---------------------------------------------------------------------------- client side
def _check_sendable(table: Table) -> None:
    """Every agent object of ``table`` pickles, as a chunk sent to the workers must (by Dask's
    cloudpickle): one holding a lock was a bare ``TypeError: cannot pickle '_thread.lock'
    object`` from deep inside Dask."""
    import cloudpickle

    for spec in table.external_specs():
        if spec.kind != OBJECT:
            continue
        try:
            cloudpickle.dumps(spec.instance)
        except Exception as error:  # noqa: BLE001 (whatever its __reduce__ raises)
            raise ClusterError(
                f"agent {spec}: an agent object goes to the Dask workers pickled, and it cannot be "
                f"({one_line(error) or type(error).__name__}); make it picklable, or name its class "
                "as py:FILE:CLASS, which every worker loads"
            ) from None


def _check_a_scheduler_answers(address: str, seconds: float) -> None:
    """That a Dask scheduler answers at ``address`` within ``seconds``, the whole handshake
    included, or a one-line ``ClusterError``. ``distributed.Client`` bounds the connection, not
    the handshake: a port that took the connection and never answered (or an HTTP server) was a
    wait without end, and a server that spoke first (SSH's banner) a traceback of 78 lines after
    42 s (its bytes read as a message's length), until 2026-12-08. Asked in a thread of its own,
    joined with a deadline, so nothing of Dask's can hold the caller past it."""
    from distributed.core import rpc
    from distributed.security import Security

    async def identity() -> Any:
        args = Security().get_connection_args("client")
        scheduler = rpc(address, timeout=seconds, connection_args=args)
        try:
            return await scheduler.identity()
        finally:
            await scheduler.close_rpc()

    answer: list[Any] = []

    def ask() -> None:
        try:
            answer.append(asyncio.run(asyncio.wait_for(identity(), seconds + 1)))
        except BaseException as error:  # noqa: BLE001 (whatever a stranger's bytes make of Dask)
            answer.append(error)

    asking = threading.Thread(target=ask, name="hearts-sim-scheduler-check", daemon=True)
    asking.start()
    asking.join(seconds + 2)
    said = answer[0] if answer else None
    if isinstance(said, dict) and said.get("type") == "Scheduler":
        return
    late = said is None or _timed_out(said)  # TimeoutError is an OSError
    if isinstance(said, OSError) and not late and not isinstance(said, _WORKER_DIED):  # refused, no host
        reason = str(said).splitlines()[0] if str(said) else type(said).__name__
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {reason}")
    if isinstance(said, dict):  # a Dask worker's or nanny's port
        raise ClusterError(
            f"{address} is a Dask {said.get('type', 'server')}, not a scheduler: give the scheduler's "
            "address (dask scheduler prints it)"
        )
    how = (
        f"did not answer as a Dask scheduler within {seconds:g} s"
        if late
        else f"answered, but not as a Dask scheduler (Dask: {type(said).__name__})"
    )
    listening = "is a Dask scheduler listening there (dask scheduler prints its address)?"
    raise ClusterError(f"{address} {how}: {listening}")


def _timed_out(error: BaseException) -> bool:
    return isinstance(error, TimeoutError | asyncio.TimeoutError | asyncio.CancelledError)


class DaskRunner:
    """A ``ChunkRunner`` that plays chunks on a Dask cluster and yields them in order.

    ``cluster``: a scheduler address (``tcp://host:8786``), ``local`` or ``local:N`` (a
    LocalCluster of N single-threaded worker processes on this machine, closed with the
    runner), a ``distributed.Client`` (used as is, not closed) or a cluster object.
    ``threads``: threads per task (default 1: run one single-threaded worker
    process per core). ``max_in_flight``: chunks submitted at a time (default twice the
    workers' threads). ``retries``: Dask retries per chunk after an exception (a chunk
    lost with its worker is rescheduled by the scheduler anyway). ``warm_up``: compile or
    load the kernels on every worker before the first chunk. ``engines``: how the workers run
    external agents (their modules must be importable, their commands runnable, there).

    >>> with DaskRunner("local:2") as runner:                      # doctest: +SKIP
    ...     run_tournament(config, "runs/r1", runner=runner)
    """

    def __init__(
        self,
        cluster: Any = "local",
        *,
        threads: int = 1,
        max_in_flight: int | None = None,
        retries: int = DEFAULT_RETRIES,
        warm_up: bool = True,
        timeout: float | None = None,
        engines: EngineOptions | None = None,
    ):
        if isinstance(cluster, str):
            parse_address(cluster)  # a bad address is reported before a missing Dask
        distributed = _distributed()
        if not is_integer(threads) or threads < 1:
            raise ClusterError(f"threads={shown(threads)}: threads per task must be a positive number")
        if max_in_flight is not None and (not is_integer(max_in_flight) or max_in_flight < 1):
            raise ClusterError(
                f"max_in_flight={shown(max_in_flight)}: chunks at a time must be a positive number"
            )
        if not is_integer(retries) or retries < 0:  # 1.5 was a bare AssertionError from Dask
            raise ClusterError(
                f"retries={shown(retries)}: retries per chunk must be a whole number, 0 or more"
            )
        if timeout is not None and (not is_real(timeout) or not 0 < timeout < math.inf):  # NaN too
            raise ClusterError(f"timeout={shown(timeout)}: seconds to reach the scheduler must be above 0")
        if cluster is None:  # it ran a LocalCluster without a word
            raise ClusterError(
                "cluster=None: give a scheduler address, 'local', 'local:N' or a distributed.Client"
            )
        self.threads = int(threads)
        self.engines = engines
        self.retries = retries
        self.warm_up = warm_up
        self._max_in_flight = max_in_flight
        self._cluster: Any = None  # a LocalCluster this runner created (and closes)
        self._owns_client = True
        self.in_flight: deque[Any] = deque()  # (chunk, future), oldest first: for tests/diagnostics
        # what a printed resume command adds (``manifest_resume``): the run goes on where it played
        self.resume_options = f"--cluster {shlex.quote(cluster)}" if isinstance(cluster, str) else ""
        if isinstance(cluster, distributed.Client):
            self.client = cluster
            self._owns_client = False
            self.address = cluster.scheduler.address
            return
        if isinstance(cluster, str):
            address, n_workers = parse_address(cluster)
            if address == "local":
                # its processes ignore Ctrl-C (SIGINT goes to the terminal's whole process group):
                # the client stops the run and closes them, where each worker printed a traceback
                with signal_handlers({signal.SIGINT: signal.SIG_IGN}):  # inherited by the processes
                    self._cluster = distributed.LocalCluster(
                        n_workers=n_workers or os.cpu_count() or 1,
                        threads_per_worker=1,
                        processes=True,
                        # not 8787, which may be taken; this machine only: the dashboard has no
                        # login, and it was on every interface until 2026-12-07
                        dashboard_address="127.0.0.1:0",
                        # not the nanny's "still alive after 4 s" at close, nor a worker's teardown
                        # of a warm-up that a stopped run unregistered
                        silence_logs=logging.CRITICAL,
                    )
                cluster = self._cluster
                _quiet("asyncio", _DeadWorkerFutures)
            else:
                cluster = address
        wait = CONNECT_TIMEOUT if timeout is None else timeout
        if isinstance(cluster, str):  # a scheduler's address (not one this runner started)
            _check_a_scheduler_answers(cluster, wait)
        try:
            self.client = distributed.Client(cluster, set_as_default=False, timeout=wait)
        except (OSError, TimeoutError, ValueError) as error:
            self._close_cluster()
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ClusterError(f"cannot reach the Dask scheduler at {cluster}: {reason}") from None
        self.address = self.client.scheduler.address
        _quiet("distributed.client", _LostSchedulerLog)  # the run says it in its own line

    # -------------------------------------------------------------- context manager
    def __enter__(self) -> DaskRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the client and any LocalCluster this runner started (not a given Client)."""
        if self._owns_client:
            self.client.close()
        self._close_cluster()

    def _close_cluster(self) -> None:
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    # -------------------------------------------------------------- running
    @property
    def max_in_flight(self) -> int:
        if self._max_in_flight is not None:
            return self._max_in_flight
        return max(2, 2 * sum(self.client.nthreads().values()))

    def workers(self) -> dict[str, dict[str, Any]]:
        """Per worker address: its pid and warm-up figures (seconds, numba cache hits/misses)."""
        info: dict[str, dict[str, Any]] = self.client.run(worker_info)
        return info

    def _wait_for_a_worker(self) -> None:
        """Until one worker is there: a scheduler without any left the run waiting without a word."""
        if self.client.nthreads():
            return
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
        except TimeoutError:
            raise self._no_workers("none joined in") from None

    def _no_workers(self, since: str) -> ChunkError:
        """No worker for ``WORKERS_TIMEOUT`` s: none joined, or those that joined died (a worker
        killed for its memory, restarted by its nanny and killed again, said "none joined")."""
        address = self.address
        left = 0
        with contextlib.suppress(Exception):  # the scheduler's log of the workers that left
            left = sum(
                1
                for _, event in self.client.get_events("all")
                if isinstance(event, dict) and event.get("action") == "remove-worker"
            )
        if left:
            return ChunkError(
                f"the Dask scheduler at {address} has no workers: {left} joined and left (died or were "
                f"restarted: their memory limit? see the dask worker's log), none there for "
                f"{WORKERS_TIMEOUT:g} s"
            )
        return ChunkError(
            f"the Dask scheduler at {address} has no workers: {since} {WORKERS_TIMEOUT:g} s "
            f"(start some: dask worker {address})"
        )

    def _lost(self, error: BaseException) -> ChunkError | None:
        """The run's line for a scheduler this client lost (killed, its machine down), or None
        for any other error. Dask cancelled every chunk ("scheduler-connection-lost") or failed
        a call, in a traceback of 40 to 119 lines with no resume command, until 2026-12-08."""
        if isinstance(error, TournamentError | ExternalAgentError):
            return None
        lost = getattr(error, "reason", None) == "scheduler-connection-lost"
        if not (lost or self.client.status in ("connecting", "closing", "closed")):
            return None
        return ChunkError(
            f"the connection to the Dask scheduler at {self.address} was lost (Dask: "
            f"{type(error).__name__}): is it still running? Start it and its workers again"
        )

    def _result(self, chunk: int, future: Any) -> Any:
        """The chunk's records, once it is played. A worker paused for its memory (at 80 % of its
        ``--memory-limit``) takes no task: with every worker paused, or none left, the run
        waited without end and without a word, until 2026-12-08; it stops after
        ``PAUSED_TIMEOUT`` (or ``WORKERS_TIMEOUT``) s of that."""
        stuck: tuple[str, float] | None = None  # ("paused" or "none", since when)
        while True:
            try:
                return future.result(timeout=CHECK_EVERY)
            except TimeoutError:
                pass
            state = self._workers_state()
            if state == "working":
                stuck = None
                continue
            if stuck is None or stuck[0] != state:
                stuck = (state, time.monotonic())
            waited = time.monotonic() - stuck[1]
            if state == "none" and waited >= WORKERS_TIMEOUT:
                raise self._no_workers("none left in")
            if state == "paused" and waited >= PAUSED_TIMEOUT:
                raise ChunkError(
                    f"every worker of the Dask scheduler at {self.address} is paused for its memory (Dask "
                    f"pauses a worker at 80 % of its --memory-limit) and none played chunk {chunk} for "
                    f"{PAUSED_TIMEOUT:g} s: give the workers more memory (dask worker --memory-limit), "
                    "or fewer processes per node"
                )

    def _workers_state(self) -> str:
        """``paused`` where every worker is, ``none`` where there is none, else ``working``."""
        try:
            info = self.client.scheduler_info(n_workers=-1)
        except TypeError:  # a Dask before its n_workers (all workers then)
            info = self.client.scheduler_info()
        statuses = [worker.get("status") for worker in info.get("workers", {}).values()]
        if not statuses:
            return "none"
        return "paused" if all(status == "paused" for status in statuses) else "working"

    def chunks(self, config: TournamentConfig, chunks: range, hands: bool = True) -> PlayedChunks:
        """Submit up to ``max_in_flight`` chunks, yield the oldest as soon as it is done, submit
        the next: records arrive in chunk order, whatever order the workers finish in."""
        if not len(chunks):
            return
        import hearts_sim

        table = config.table()
        _check_sendable(table)
        plays = (table.plays_digest(), hearts_sim.__version__)  # what every worker must match
        folder = str(agent_folder())  # where the run's agents are found, on every worker too
        token = uuid.uuid4().hex[:12]
        plugin = f"{PLUGIN_NAME}-{token}"
        todo = iter(chunks)

        def submit() -> None:
            chunk = next(todo, None)
            if chunk is not None:
                future = self.client.submit(
                    play_chunk,
                    config,
                    chunk,
                    self.threads,
                    self.engines,
                    hands,
                    plays,
                    folder,
                    key=f"hearts-sim-chunk-{token}-{chunk}",
                    retries=self.retries,
                    pure=False,
                )
                self.in_flight.append((chunk, future))

        try:
            self._wait_for_a_worker()
            if self.warm_up:  # in the try: a warm-up that fails is unregistered too (workers replayed it)
                try:
                    self.client.register_plugin(WarmUp(config, folder), name=plugin)
                except _WORKER_DIED as error:
                    died = WorkerDied(f"a worker died as it warmed up for this run{_died(error)}")
                    raise self._lost(error) or died from None
            for _ in range(self.max_in_flight):
                submit()
            while self.in_flight:
                chunk, future = self.in_flight[0]
                try:
                    records = self._result(chunk, future)
                except _WORKER_DIED as error:
                    died = WorkerDied(f"the workers playing chunk {chunk} died{_died(error)}")
                    raise self._lost(error) or died from None
                if isinstance(records, AgentFailed):
                    raise ExternalAgentError(records.message)
                self.in_flight.popleft()
                future.release()
                submit()
                yield chunk, records
        except Exception as error:  # noqa: BLE001 (a lost scheduler fails whatever Dask call was under way)
            lost = self._lost(error)
            if lost is None:
                raise
            raise lost from None
        finally:
            if self.in_flight:
                self.client.cancel([future for _, future in self.in_flight])
                self.in_flight.clear()
            if self.warm_up:
                with contextlib.suppress(Exception):
                    self.client.unregister_worker_plugin(plugin)


# ---------------------------------------------------------------------------- convenience
def run_on_cluster(
    config: TournamentConfig,
    out: str | Path | None = None,
    *,
    cluster: Any = "local",
    threads: int = 1,
    max_in_flight: int | None = None,
    retries: int = DEFAULT_RETRIES,
    **options: Any,
) -> TournamentResult:
    """``run_tournament`` with its chunks played on ``cluster`` (see ``DaskRunner``)."""
    with DaskRunner(cluster, threads=threads, max_in_flight=max_in_flight, retries=retries) as runner:
        return run_tournament(config, out, runner=runner, **options)
