"""Tournaments on Dask (``hearts_sim.studies.cluster``): identical to a local run, whatever the
workers and shard size; a killed worker or an interrupted client loses nothing; without
Dask, ``--cluster`` says what to install. One module-wide LocalCluster of 2 single-threaded
worker processes keeps the suite fast; the tests that need Dask skip without it."""

from __future__ import annotations

import contextlib
import importlib.util
import ipaddress
import json
import os
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agents.external import ExternalAgentError
from agents.registry import parse_agent
from hearts_sim import __version__
from hearts_sim.apps import cli
from hearts_sim.studies.cluster import INSTALL, CannotLoad, ClusterError, DaskRunner, OtherCode
from hearts_sim.studies.tournament import (
    MANIFEST,
    ChunkError,
    Interrupted,
    TournamentConfig,
    resume_tournament,
    run_tournament,
)

try:
    from tests.signals import default_ctrl_c, wait_for_a_chunk
except ImportError:  # run from inside tests/
    from signals import default_ctrl_c, wait_for_a_chunk  # type: ignore[no-redef]

HAVE_DASK = importlib.util.find_spec("distributed") is not None
needs_dask = pytest.mark.skipif(not HAVE_DASK, reason='dask missing (pip install -e ".[cluster]")')

CONFIG = TournamentConfig(("lowest", "random"), deals=40, seed=11, chunk_deals=3)  # 14 chunks


def _records(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "records")


def _tally(out: Path) -> dict[str, Any]:
    return json.loads((out / MANIFEST).read_text())["tally"]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("local") / "run"
    return out, run_tournament(CONFIG, out, progress=False).summary


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    if not HAVE_DASK:
        pytest.skip("dask missing")
    import distributed

    with (
        # ":0", not None: with None the scheduler still serves its HTTP routes on 8787, and
        # two xdist workers running this module both reach for that port
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as connected,
    ):
        yield connected


# ---------------------------------------------------------------------------- no Dask needed
def test_without_dask_cluster_says_exactly_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    code = cli.main(["match", "lowest", "random", "--deals", "5", "--cluster", "local:2"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and INSTALL in err, err


def test_the_plays_digest_follows_what_decides_the_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a worker must share with the client: the version, the sources, each seat's policy
    and parameters (a level as its file resolves it), not the names or the deal count."""

    def digest(*agents: str, deals: int = 10) -> str:
        return TournamentConfig(agents, deals=deals).table().plays_digest()

    same = digest("rule", "random")
    assert digest("rule", "random", deals=99) == same
    assert digest("rule(defend=8)", "random") != same != digest("random", "rule")
    assert digest("normal", "random") == digest(str(parse_agent("normal").play_policy), "random")
    monkeypatch.setattr(sys.modules["hearts_sim"], "__version__", "9.9.9")
    assert digest("rule", "random") != same


def test_a_bad_cluster_address_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["tournament", "--deals", "5", "--cluster", "local:0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "local:N" in err, err


# ---------------------------------------------------------------------------- on a LocalCluster
@needs_dask
def test_cluster_run_is_identical_to_the_local_run(
    client: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    local_out, local_summary = local_run
    with DaskRunner(client, max_in_flight=3) as runner:
        result = run_tournament(CONFIG, tmp_path / "run", runner=runner, progress=False)
    assert result.summary == local_summary
    assert _tally(tmp_path / "run") == _tally(local_out)
    pd.testing.assert_frame_equal(_records(tmp_path / "run"), _records(local_out))
    assert sorted(p.name for p in (tmp_path / "run" / "records").iterdir()) == sorted(
        p.name for p in (local_out / "records").iterdir()
    )
    workers = runner.workers()
    assert len(workers) == 2 and all(w["seconds"] > 0 for w in workers.values()), workers


@needs_dask
def test_shard_size_and_workers_do_not_change_the_results(
    client: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    local_out, local_summary = local_run
    other_shards = TournamentConfig(CONFIG.agents, deals=CONFIG.deals, seed=CONFIG.seed, chunk_deals=7)
    with DaskRunner(client, max_in_flight=1) as runner:  # one shard at a time: one worker busy
        result = run_tournament(other_shards, tmp_path / "run", runner=runner, progress=False)
    assert result.summary == local_summary
    pd.testing.assert_frame_equal(_records(tmp_path / "run"), _records(local_out))


@needs_dask
def test_a_sequential_match_stops_on_the_cluster_as_it_does_here(client: Any, tmp_path: Path) -> None:
    from hearts_sim.studies.stats import Sprt

    config = TournamentConfig(("lowest", "random"), deals=400, seed=11, chunk_deals=10, sprt=Sprt(1.0))
    local = run_tournament(config, tmp_path / "local", progress=False)
    assert local.summary["deals"] < 400  # decided early: chunks were still in flight on the workers
    with DaskRunner(client, max_in_flight=4) as runner:
        result = run_tournament(config, tmp_path / "run", runner=runner, progress=False)
        assert not runner.in_flight  # the early stop cancelled the chunks it no longer needs
    assert result.summary == local.summary
    pd.testing.assert_frame_equal(_records(tmp_path / "run"), _records(tmp_path / "local"))


@needs_dask
def test_games_on_the_cluster_rate_in_the_same_order_and_keep_the_same_hands(
    client: Any, tmp_path: Path
) -> None:
    config = TournamentConfig(("lowest", "random", "highest"), deals=6, seed=2, games=True, chunk_deals=1)
    local = run_tournament(config, tmp_path / "local", progress=False).summary
    with DaskRunner(client) as runner:
        assert run_tournament(config, tmp_path / "run", runner=runner, progress=False).summary == local
    hands = [pd.read_parquet(tmp_path / run / "hands") for run in ("local", "run")]
    assert len(hands[0]) > 6 * len(config.seatings())  # games of several hands
    pd.testing.assert_frame_equal(hands[1], hands[0])


@needs_dask
def test_cli_cluster_option_gives_the_local_json(
    client: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["match", "lowest", "random", "--deals", "12", "--seed", "4", "--json", "--quiet"]
    assert cli.main(args) == 0
    local = json.loads(capsys.readouterr().out)
    address = client.scheduler.address
    assert cli.main([*args, "--cluster", address, "--out", str(tmp_path / "run")]) == 0
    assert json.loads(capsys.readouterr().out) == local
    # threads per shard on the workers: more than this machine's cores is no reason to refuse
    from hearts_sim._numba import max_threads

    assert cli.main([*args, "--cluster", address, "--threads", str(max_threads() + 1)]) == 0
    assert json.loads(capsys.readouterr().out) == local
    assert len(client.run(os.getpid)) == 2  # the CLI closed its own client, not the cluster


@needs_dask
def test_resume_after_the_client_stops_continues_from_the_finished_shards(
    client: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    local_out, local_summary = local_run
    out = tmp_path / "run"
    with DaskRunner(client) as runner, pytest.raises(Interrupted):
        run_tournament(CONFIG, out, runner=runner, progress=False, stop_after_chunks=5)
    assert json.loads((out / MANIFEST).read_text())["chunks_done"] == 5
    with DaskRunner(client) as runner:
        result = resume_tournament(out, runner=runner, progress=False)
    assert result.summary == local_summary
    pd.testing.assert_frame_equal(_records(out), _records(local_out))
    assert not client.processing() or not any(client.processing().values())  # nothing left running


def test_an_unreachable_scheduler_is_a_cluster_error() -> None:
    if not HAVE_DASK:
        pytest.skip("dask missing")
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler"):
        DaskRunner("tcp://127.0.0.1:9", timeout=1)


@needs_dask
def test_workers_that_would_play_otherwise_are_refused_and_the_run_resumes(
    client: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """A worker left on another version (a stale image) played its own chunks its own way, and
    the records mixed two programs where they must not depend on the workers: every task checks
    the worker's ``Table.plays_digest`` against the client's."""
    _, local_summary = local_run
    out = tmp_path / "run"
    with DaskRunner(client) as runner, pytest.raises(Interrupted):
        run_tournament(CONFIG, out, runner=runner, progress=False, stop_after_chunks=2)
    client.run(lambda: setattr(sys.modules["hearts_sim"], "__version__", "9.9.9"))
    try:
        with DaskRunner(client, retries=0) as runner, pytest.raises(OtherCode) as refused:
            resume_tournament(out, runner=runner, progress=False)
    finally:
        client.run(lambda: setattr(sys.modules["hearts_sim"], "__version__", __version__))
    assert re.fullmatch(
        r"worker tcp://\S+ would play this tournament otherwise than this machine \(version 9\.9\.9 "
        rf"there, {re.escape(__version__)} here\): install the same hearts-sim, level files and py: agent "
        r"files on every "
        rf"worker; 2 of 14 chunks are done: resume with hearts-sim tournament --resume {re.escape(str(out))}",
        str(refused.value),
    ), refused.value
    assert json.loads((out / MANIFEST).read_text())["chunks_done"] == 2
    with DaskRunner(client) as runner:
        assert resume_tournament(out, runner=runner, progress=False).summary == local_summary


@needs_dask
def test_a_worker_killed_mid_run_loses_nothing(
    client: Any, local_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Runs last: the nanny restarts the killed worker while the run goes on."""
    local_out, local_summary = local_run
    pids: dict[str, int] = client.run(os.getpid)
    killed: list[int] = []

    def kill_a_busy_worker(chunk: int) -> None:
        """Kill a worker that runs or holds a chunk in flight. The two scheduler queries are not
        one snapshot (a chunk can finish between them, a just-submitted one can still be on its
        way), so a chunk boundary that finds nothing busy tries again at the next one."""
        if killed:
            return
        futures = [future for _, future in runner.in_flight]
        # running first, then holding: a chunk that finishes between the two queries is in the second
        busy = {w for w, keys in client.processing().items() if keys}
        busy |= {w for ws in client.who_has(futures).values() for w in ws}
        if not busy:
            return
        address = sorted(busy)[0]
        os.kill(pids[address], signal.SIGKILL)
        killed.append(pids[address])

    with DaskRunner(client, max_in_flight=4, retries=3) as runner:
        result = run_tournament(
            CONFIG, tmp_path / "run", runner=runner, progress=False, on_chunk=kill_a_busy_worker
        )
    assert killed, "no chunk boundary found a worker with a chunk in flight"
    assert result.summary == local_summary
    pd.testing.assert_frame_equal(_records(tmp_path / "run"), _records(local_out))


@needs_dask
def test_a_python_agent_plays_on_the_workers_as_in_process(client: Any, tmp_path: Path) -> None:
    """A ``py:`` agent is imported on each worker (a file path every worker can read)."""
    agents_file = Path(__file__).resolve().parent / "python_agents.py"
    config = TournamentConfig((f"py:{agents_file}:Lowest", "rule"), deals=12, seed=5, chunk_deals=4)
    local = run_tournament(config, tmp_path / "local", progress=False)
    with DaskRunner(client, warm_up=False) as runner:
        remote = run_tournament(config, tmp_path / "remote", runner=runner, progress=False)
    pd.testing.assert_frame_equal(_records(tmp_path / "local"), _records(tmp_path / "remote"))
    assert local.summary == remote.summary


@needs_dask
def test_an_agent_object_that_cannot_pickle_is_refused_in_one_line(client: Any, tmp_path: Path) -> None:
    """An object holding a lock went to the workers as a bare ``TypeError: cannot pickle
    '_thread.lock' object`` from inside Dask; it is refused before any chunk is sent."""
    import threading

    class Lowest:
        def __init__(self) -> None:
            self.lock = threading.Lock()

        def choose_pass(self, obs: Any) -> list[int]:
            return sorted(obs.hand)[: obs.rules.pass_count]

        def choose_play(self, obs: Any) -> int:
            return min(obs.legal_moves())

    agent = Lowest()
    config = TournamentConfig((agent, "rule"), deals=4, seed=5, chunk_deals=2)
    with DaskRunner(client, warm_up=False) as runner, pytest.raises(ClusterError) as refused:
        run_tournament(config, None, runner=runner, progress=False)
    assert str(refused.value) == (
        "agent py:Lowest: an agent object goes to the Dask workers pickled, and it cannot be (cannot "
        "pickle '_thread.lock' object); make it picklable, or name its class as py:FILE:CLASS, which "
        "every worker loads"
    )


@needs_dask
def test_an_agent_failing_on_a_worker_stops_the_run_as_here_not_retried(client: Any, tmp_path: Path) -> None:
    """Dask retries a task that raised: an agent that failed once (a stateful one, a flaky engine)
    was played again on another worker and the run finished, exit code 0, without a word. It
    stops as a run here stops, with its one line."""
    agents_file = Path(__file__).resolve().parent / "python_agents.py"
    flag = tmp_path / "fail-once"
    flag.touch()
    config = TournamentConfig(
        (f"py:{agents_file}:FailsOnce(flag={str(flag)!r})", "rule"), deals=8, seed=5, chunk_deals=4
    )
    with DaskRunner(client, warm_up=False, retries=3) as runner, pytest.raises(ExternalAgentError) as failed:
        run_tournament(config, tmp_path / "run", runner=runner, progress=False)
    assert "raised RuntimeError: failing once (deal " in str(failed.value) and not flag.exists()


@needs_dask
def test_a_worker_with_another_copy_of_a_py_agent_file_is_refused(client: Any, tmp_path: Path) -> None:
    """A node with its own, older copy of a ``py:`` file played it: the records mixed two agents
    under one name. The file's bytes are in ``Table.plays_digest``."""
    agents_file = Path(__file__).resolve().parent / "python_agents.py"
    config = TournamentConfig((f"py:{agents_file}:Lowest", "rule"), deals=4, seed=5, chunk_deals=2)

    def copy_on_the_workers(older: bool) -> None:
        import agents.external

        simulate = sys.modules["hearts_sim.selfplay.simulate"]
        simulate.source_bytes = (lambda spec: b"an older copy") if older else agents.external.source_bytes

    client.run(copy_on_the_workers, True)
    try:
        with DaskRunner(client, warm_up=False, retries=0) as runner, pytest.raises(OtherCode) as refused:
            run_tournament(config, None, runner=runner, progress=False)
    finally:
        client.run(copy_on_the_workers, False)
    assert "(version " in str(refused.value) and "with other sources, level files or py: agent files" in str(
        refused.value
    )


@needs_dask
def test_workers_started_in_another_folder_find_a_py_file_of_the_runs_folder(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``py:mine.py:Lowest`` named relative to the client's folder: the workers, started in
    another, could not find it; they look in the run's folder, and play as this process does."""
    (tmp_path / "mine.py").write_text((Path(__file__).resolve().parent / "python_agents.py").read_text())
    monkeypatch.chdir(tmp_path)
    config = TournamentConfig(("py:mine.py:Lowest", "rule"), deals=4, seed=5, chunk_deals=2)
    with DaskRunner(client, retries=0) as runner:
        run_tournament(config, tmp_path / "run", runner=runner, progress=False)
    run_tournament(config, tmp_path / "local", progress=False)
    shards, local = (pd.read_parquet(tmp_path / run / "records") for run in ("run", "local"))
    pd.testing.assert_frame_equal(shards, local)


@needs_dask
def test_a_worker_that_cannot_load_an_agent_says_so_and_the_run_resumes(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``py:`` module the client imports from a folder of its own path, which the workers lack:
    the worker's error read as the user's own input (``cannot import``) and lost the resume
    command. It names the worker, what to do, and how to resume; the warm-up that failed is not
    left on the scheduler (every worker that joined later replayed it)."""
    (tmp_path / "client_only").mkdir()
    (tmp_path / "client_only" / "mine_only_here.py").write_text(
        (Path(__file__).resolve().parent / "python_agents.py").read_text()
    )
    monkeypatch.syspath_prepend(str(tmp_path / "client_only"))
    config = TournamentConfig(("py:mine_only_here:Lowest", "rule"), deals=4, seed=5, chunk_deals=2)
    with DaskRunner(client, retries=0) as runner, pytest.raises(CannotLoad) as refused:
        run_tournament(config, tmp_path / "run", runner=runner, progress=False)
    # the warm-up that failed is not left on the scheduler, for every later worker to replay
    plugins = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))
    assert not [name for name in plugins if name.startswith("hearts-sim")], plugins
    assert re.fullmatch(
        r"worker tcp://\S+ cannot load an agent the client can: py:mine_only_here:Lowest: cannot import "
        r"mine_only_here in \S+: ModuleNotFoundError: No module named 'mine_only_here' \(a level, or a "
        r"py: file or module, must be found on every worker as on the client: HEARTS_SIM_LEVELS, the "
        rf"run's folder\); 0 of 2 chunks are done: resume with hearts-sim tournament --resume "
        rf"{re.escape(str(tmp_path / 'run'))}",
        str(refused.value),
    ), refused.value


@needs_dask
def test_a_scheduler_without_workers_is_one_line_not_a_wait_without_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import distributed

    from hearts_sim.studies import cluster

    monkeypatch.setattr(cluster, "WORKERS_TIMEOUT", 1.0)
    with (
        distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=":0") as empty,
        DaskRunner(empty.scheduler_address) as runner,
        pytest.raises(ChunkError) as refused,
    ):
        run_tournament(CONFIG, tmp_path / "run", runner=runner, progress=False)
    address = empty.scheduler_address
    assert str(refused.value) == (
        f"the Dask scheduler at {address} has no workers: none joined in 1 s (start some: dask worker "
        f"{address}); 0 of 14 chunks are done: resume with hearts-sim tournament --resume {tmp_path / 'run'} "
        f"--cluster {address}"
    )


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        ("LOCAL:2", ("local", 2)),
        ("Local", ("local", None)),
        ("tcp://10.0.0.1:8786", ("tcp://10.0.0.1:8786", None)),
    ],
)
def test_local_is_local_in_any_case(address: str, parsed: tuple[str, int | None]) -> None:
    """``LOCAL:2`` was read as host LOCAL, port 2, and failed after 20 s."""
    from hearts_sim.studies.cluster import parse_address

    assert parse_address(address) == parsed


@pytest.mark.parametrize("address", ["local:２", "host:８７８６"])  # full-width digits were taken
def test_an_address_takes_ascii_digits_only(address: str) -> None:
    from hearts_sim.studies.cluster import parse_address

    with pytest.raises(ClusterError):
        parse_address(address)


@needs_dask
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"retries": 1.5}, "retries=1.5: retries per chunk must be a whole number, 0 or more"),
        ({"retries": -1}, "retries=-1: retries per chunk must be a whole number, 0 or more"),
        ({"timeout": -1}, "timeout=-1: seconds to reach the scheduler must be above 0"),
        ({"timeout": float("nan")}, "timeout=nan: seconds to reach the scheduler must be above 0"),
        ({"max_in_flight": 0}, "max_in_flight=0: chunks at a time must be a positive number"),
        (
            {"cluster": None},
            "cluster=None: give a scheduler address, 'local', 'local:N' or a distributed.Client",
        ),
    ],
)
def test_dask_runner_refuses_odd_arguments_in_one_line(options: dict[str, Any], message: str) -> None:
    """They raised a bare AssertionError, a KeyError, blamed the scheduler, or (None) started a
    LocalCluster without a word."""
    with pytest.raises(ClusterError) as refused:
        DaskRunner(**{"cluster": "local:1", **options})
    assert str(refused.value) == message


def _listening(port: int) -> set[str]:
    """The addresses a TCP socket listens on at ``port`` on this machine, from ``/proc/net``."""
    found = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                address, _, hex_port = local.rpartition(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                    raw = bytes.fromhex(address)
                    if table == "tcp":
                        found.add(".".join(str(b) for b in raw[::-1]))
                    else:  # four 32-bit words, each in the host's order
                        words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
                        found.add(str(ipaddress.IPv6Address(b"".join(words))))
    return found


@needs_dask
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads /proc/net")
def test_a_local_clusters_dashboard_listens_on_this_machine_only() -> None:
    """``--cluster local:N`` served Dask's dashboard, which has no login, on every interface; it
    and the scheduler listen on 127.0.0.1 now."""
    with DaskRunner("local:1") as runner:
        port = runner.client.scheduler_info()["services"]["dashboard"]
        assert _listening(port) == {"127.0.0.1"}
        assert runner.client.scheduler.address.startswith("tcp://127.0.0.1:")  # its scheduler too


@needs_dask
def test_ctrl_c_on_a_local_cluster_is_one_line(tmp_path: Path) -> None:
    """Ctrl-C reaches the terminal's whole process group: each local worker printed its own
    traceback (73 lines in all) before the client's line. The workers ignore it now; the client
    stops the run and closes them."""
    import subprocess

    out = tmp_path / "run"
    command = [sys.executable, "-m", "hearts_sim", "match", "lowest", "random", "--deals", "50000000"]
    command += ["--out", str(out), "--cluster", "local:1", "--quiet"]
    running = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=default_ctrl_c
    )
    wait_for_a_chunk(out / MANIFEST)
    os.killpg(running.pid, signal.SIGINT)  # as the terminal does
    _, stderr = running.communicate(timeout=120)
    assert running.returncode == 130, stderr
    assert len(stderr.splitlines()) == 1 and stderr.startswith("hearts-sim: interrupted after "), stderr


@needs_dask
@pytest.mark.parametrize("after", [0, 3000])
def test_an_agent_that_ends_its_worker_is_one_line(tmp_path: Path, after: int) -> None:
    """An agent that ends its process (``os._exit``, a native crash, its memory) killed the
    worker: in the warm-up (``after`` 0) a 107-line traceback ending in ``CommClosedError``, and
    later ``KilledWorker`` after Dask's retries, exit code 1, with no resume line."""
    import subprocess

    agent = tmp_path / "ends.py"
    agent.write_text(
        "import os\n\n\nclass Ends:\n    plays = 0\n\n"
        "    def choose_pass(self, observation):\n        return sorted(observation.hand)[:3]\n\n"
        "    def choose_play(self, observation):\n        Ends.plays += 1\n"
        f"        if Ends.plays > {after}:\n            os._exit(5)\n"
        "        return min(observation.legal_moves())\n"
    )
    out = tmp_path / "run"
    command = [sys.executable, "-m", "hearts_sim", "match", f"py:{agent}:Ends", "rule", "--deals", "300"]
    command += ["--out", str(out), "--cluster", "local:1", "--quiet"]
    ended = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert ended.returncode == 2 and len(ended.stderr.splitlines()) == 1, ended.stderr
    died = "a worker died as it warmed up for this run" if after == 0 else "the workers playing chunk 0 died"
    assert ended.stderr.startswith(f"hearts-sim: error: {died} (Dask: "), ended.stderr
    assert (
        "Play a few deals without --cluster to see it fail; 0 of 2 chunks are done: resume with "
        in ended.stderr
    )


# ---------------------------------------------------------------------------- a scheduler lost, or none
def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def _scheduler_process(workers: int = 0) -> Iterator[tuple[str, Any]]:
    """A ``dask scheduler`` of its own process (to be killed as a crash kills it), with
    ``workers`` single-threaded workers of their own processes: its address and process."""
    import socket
    import subprocess
    import time

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    command = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
    processes = [subprocess.Popen([*command, "--port", str(port), "--dashboard-address", ":0"], **quiet)]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as knock:
                if knock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1"]
        for _ in range(workers):
            processes.append(subprocess.Popen([*worker, "--no-nanny", "--no-dashboard"], **quiet))
        yield address, processes[0]
    finally:
        for process in processes:
            process.kill()
            process.wait()


@needs_dask
def test_a_scheduler_killed_mid_run_is_one_line_with_the_resume_command_on_the_cluster(
    tmp_path: Path, local_run: tuple[Path, dict[str, Any]]
) -> None:
    """A scheduler killed under a run (``kill -9``, its node down) was, once the client gave up
    on it, a traceback of 40 lines ending in ``FutureCancelledError`` and no resume command; and
    every stop line of a run on a cluster said to resume without ``--cluster``, which played the
    rest of the study on the client."""
    out = tmp_path / "run"
    config = TournamentConfig(CONFIG.agents, deals=3000, seed=CONFIG.seed, chunk_deals=3)
    with _scheduler_process(workers=1) as (address, scheduler):

        def kill_the_scheduler(chunk: int) -> None:
            if chunk == 1:
                scheduler.kill()

        with DaskRunner(address, timeout=2) as runner, pytest.raises(ChunkError) as lost:
            run_tournament(config, out, runner=runner, progress=False, on_chunk=kill_the_scheduler)
    done = json.loads((out / MANIFEST).read_text())["chunks_done"]
    assert done >= 2
    assert str(lost.value) == (
        f"the connection to the Dask scheduler at {address} was lost (Dask: "
        f"{str(lost.value).split('(Dask: ')[1].split(')')[0]}): is it still running? Start it and its "
        f"workers again; {done} of 1000 chunks are done: resume with hearts-sim tournament --resume "
        f"{out} --cluster {address}"
    )


@needs_dask
def test_a_scheduler_lost_while_the_run_waits_for_workers_is_one_line(tmp_path: Path) -> None:
    """The scheduler ended while the client waited for its first worker: a chained traceback of
    119 lines (ConnectionRefusedError, CancelledError, CommClosedError)."""
    import threading

    with (
        _scheduler_process() as (address, scheduler),
        DaskRunner(address, timeout=2) as runner,
        pytest.raises(ChunkError) as lost,
    ):
        threading.Timer(1.0, scheduler.kill).start()
        run_tournament(CONFIG, tmp_path / "run", runner=runner, progress=False)
    assert str(lost.value).startswith(f"the connection to the Dask scheduler at {address} was lost (Dask: ")
    assert str(lost.value).endswith(
        f"; 0 of 14 chunks are done: resume with hearts-sim tournament --resume {tmp_path / 'run'} "
        f"--cluster {address}"
    )


@needs_dask
@pytest.mark.parametrize("speaks", [b"", b"SSH-2.0-OpenSSH_8.9p1\r\n", b"HTTP/1.0 400 Bad request\r\n\r\n"])
def test_a_port_that_is_no_dask_scheduler_is_one_line_within_the_timeout(speaks: bytes) -> None:
    """A port that took the connection and never answered (or an HTTP server) was a wait without
    end; one that spoke first (SSH's banner) a 78-line traceback after 42 s (``Unable to allocate
    2.82 EiB``): ``Client`` bounded the connection, not Dask's handshake."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    taken: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                taken.append(connection)
                if speaks:
                    connection.sendall(speaks)

    threading.Thread(target=serve, daemon=True).start()
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    try:
        with pytest.raises(ClusterError) as refused:
            DaskRunner(address, timeout=1)
    finally:
        listener.close()
        for connection in taken:
            connection.close()
    assert re.fullmatch(
        rf"{address} (did not answer as a Dask scheduler within 1 s|answered, but not as a Dask "
        r"scheduler \(Dask: \w+\)): is a Dask scheduler listening there \(dask scheduler prints its "
        r"address\)\?",
        str(refused.value),
    ), refused.value


@needs_dask
def test_every_worker_paused_for_its_memory_stops_the_run_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that Dask pauses for its memory takes no task: with every worker paused the run
    waited without end and without a word. Here Dask pauses its worker at once (a pause
    threshold of 0 % of its memory)."""
    import dask
    import distributed

    from hearts_sim.studies import cluster

    monkeypatch.setattr(cluster, "PAUSED_TIMEOUT", 1.0, raising=False)
    monkeypatch.setattr(cluster, "CHECK_EVERY", 0.5, raising=False)
    pause_at_once = {
        "distributed.worker.memory.pause": 1e-9,
        "distributed.worker.memory.target": False,
        "distributed.worker.memory.spill": False,
        "distributed.worker.memory.terminate": False,
        "distributed.worker.memory.monitor-interval": "50ms",
    }
    with (
        dask.config.set(pause_at_once),
        distributed.LocalCluster(
            n_workers=1, processes=True, threads_per_worker=1, dashboard_address=":0"
        ) as paused,
        DaskRunner(paused.scheduler_address, warm_up=False) as runner,
        pytest.raises(ChunkError) as stopped,
    ):
        run_tournament(CONFIG, tmp_path / "run", runner=runner, progress=False)
    address = paused.scheduler_address
    assert str(stopped.value) == (
        f"every worker of the Dask scheduler at {address} is paused for its memory (Dask pauses a worker "
        "at 80 % of its --memory-limit) and none played chunk 0 for 1 s: give the workers more memory "
        "(dask worker --memory-limit), or fewer processes per node; 0 of 14 chunks are done: resume with "
        f"hearts-sim tournament --resume {tmp_path / 'run'} --cluster {address}"
    )


@needs_dask
def test_workers_that_joined_and_died_are_not_said_to_have_never_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed for its memory and restarted in a loop was "none joined in 60 s"."""
    import time

    import distributed

    from hearts_sim.studies import cluster

    monkeypatch.setattr(cluster, "WORKERS_TIMEOUT", 1.0)
    with distributed.LocalCluster(n_workers=1, processes=True, dashboard_address=":0") as emptied:
        emptied.scale(0)
        deadline = time.monotonic() + 30
        while emptied.scheduler.workers and time.monotonic() < deadline:
            time.sleep(0.1)
        with DaskRunner(emptied.scheduler_address) as runner, pytest.raises(ChunkError) as refused:
            run_tournament(CONFIG, None, runner=runner, progress=False)
    assert str(refused.value) == (
        f"the Dask scheduler at {emptied.scheduler_address} has no workers: 1 joined and left (died or "
        "were restarted: their memory limit? see the dask worker's log), none there for 1 s"
    )
