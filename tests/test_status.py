"""``hearts-sim status``: where a run, tune or calibration kept in a folder stands, read from its
manifest while a process writes it or after: its progress, who writes it, and its results so far,
which are those of a shorter run of the same deals."""

from __future__ import annotations

import errno
import html
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hearts_sim.apps.cli import main
from hearts_sim.core import files
from hearts_sim.core.files import LockHeld, exclusive_lock, look_at_lock
from hearts_sim.selfplay.records import LOCK
from hearts_sim.studies import tournament
from hearts_sim.studies.kept import JobStopped, KeptJob
from hearts_sim.studies.stats import format_summary
from hearts_sim.studies.tune import kept_tune, parse_ranges, resume_tune, tune

ROOT = Path(__file__).resolve().parents[1]

try:
    from tests.records_damage import CONFIG, DONE, interrupted_run
except ImportError:  # tests/ on sys.path instead of the repository root
    from records_damage import CONFIG, DONE, interrupted_run  # type: ignore[no-redef]


def stopped_tune(out: Path, budget: int, candidates: int, matches: int) -> Path:
    """``out``, a tune of ``rule``'s ``defend`` against ``rule(shoot=40)`` stopped after ``matches``."""
    with pytest.raises(JobStopped):
        tune(
            "rule", parse_ranges(["defend=8:20"]), budget=budget, candidates=candidates, seed=1,
            reference="rule(shoot=40)", out=out, stop_after_matches=matches,
        )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return interrupted_run(tmp_path_factory.mktemp("runs") / "stopped")


def test_a_stopped_run_shows_the_results_of_its_deals_so_far(
    stopped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The deals played so far give the summary that a run of just those deals gives."""
    played = DONE * CONFIG.chunk_deals
    shorter = tournament.run_tournament(tournament.replace(CONFIG, deals=played), None, progress=False)
    status = tournament.run_status(stopped)
    assert (status.state, status.done, status.total, status.writer) == ("stopped", played, CONFIG.deals, None)
    assert status.summary == shorter.summary
    assert main(["status", str(stopped)]) == 0
    printed = capsys.readouterr().out
    assert printed == f"{status}\n"  # a notebook shows the same (and as HTML, escaped)
    assert status._repr_html_() == f"<pre>{html.escape(str(status))}</pre>"
    lines = printed.splitlines()
    assert lines[0] == (
        f"{stopped}: stopped after {played} of {CONFIG.deals} deals (50%); "
        f"resume with: hearts-sim tournament --resume {stopped}"
    )
    assert lines[2].startswith("so far (an interval read before the end is no stopping rule")
    assert "\n".join(lines[3:]) == format_summary(shorter.summary)


def test_a_run_being_written_names_its_writer_and_the_time_left(
    stopped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with exclusive_lock(stopped / LOCK):
        status = tournament.run_status(stopped)
        assert status.state == "running" and status.writer is not None and status.writer.pid == os.getpid()
        assert status.left is not None and status.left >= 0
        assert main(["status", str(stopped), "--json"]) == 0
        reported = json.loads(capsys.readouterr().out)
    assert status.line().startswith(
        f"{stopped}: {DONE * CONFIG.chunk_deals} of {CONFIG.deals} deals (50%), being written by "
        f"this process (pid {os.getpid()}), in another call, about "
    )
    assert [(r["state"], r["writer_pid"], r["done"], r["chunks_done"]) for r in reported] == [
        ("running", os.getpid(), DONE * CONFIG.chunk_deals, DONE)
    ]
    assert tournament.run_status(stopped).writer is None  # the writer is gone


def test_a_writer_starting_while_status_looks_is_not_refused(tmp_path: Path) -> None:
    """``look_at_lock`` takes a shared lock for a moment; a writer starting in that moment waits
    it out instead of reporting the run as another's."""
    fcntl = pytest.importorskip("fcntl")
    path = tmp_path / LOCK
    with exclusive_lock(path):
        held = look_at_lock(path).holder
    if held is None:
        pytest.skip("this filesystem has no flock")
    assert isinstance(held, LockHeld) and held.pid == os.getpid()
    looking = os.open(path, os.O_RDONLY)
    fcntl.flock(looking, fcntl.LOCK_SH | fcntl.LOCK_NB)  # as look_at_lock looks
    threading.Timer(0.03, os.close, (looking,)).start()  # and is done 30 ms later
    with exclusive_lock(path):  # before: LockHeld, "being written by another process"
        assert isinstance(look_at_lock(path).holder, LockHeld)
    assert look_at_lock(path) == (True, None)


def test_a_lock_held_by_another_process_names_that_process(tmp_path: Path) -> None:
    """A second writer (another ``tournament --out`` into the same folder, a ``tune --resume``
    while it runs) was told the folder was written by "this process (pid <its own>), in another
    call": its own descriptor, registered before it tried the lock, was taken for the holder."""
    pytest.importorskip("fcntl")
    path = tmp_path / LOCK
    with exclusive_lock(path):
        if look_at_lock(path).holder is None:
            pytest.skip("this filesystem has no flock")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from hearts_sim.core.files import exclusive_lock\n"
         f"with exclusive_lock(__import__('pathlib').Path({str(path)!r})):\n"
         "    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(LockHeld) as refused, exclusive_lock(path):
            pass
        assert not refused.value.ours and refused.value.pid == holder.pid
        assert refused.value.who == f"another process (pid {holder.pid})"
    finally:
        holder.kill()
        holder.wait()
    with exclusive_lock(path):  # the holder gone, the lock is free
        pass


def test_a_forked_child_does_not_keep_the_run_locked(tmp_path: Path) -> None:
    """A child forked while a run was written (a notebook's ``multiprocessing`` pool) held a copy
    of the lock's descriptor, so the run read as "being written" by the parent's pid, which wrote
    nothing any more, for as long as the child lived; another thread of the writer's own process
    was "another process"."""
    pytest.importorskip("fcntl")
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    path = tmp_path / LOCK
    with exclusive_lock(path):
        held = look_at_lock(path).holder
        if held is None:
            pytest.skip("this filesystem has no flock")
        assert held.who == f"this process (pid {os.getpid()}), in another call"
        ready, running = os.pipe()
        child = os.fork()
        if child == 0:  # the child lives on past the writer's lock
            os.write(running, b"x")  # once it runs: the fork's callbacks have run
            time.sleep(30)
            os._exit(0)
    os.read(ready, 1)
    try:
        assert look_at_lock(path) == (True, None)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(ready)
        os.close(running)
    assert LockHeld("4242").who == "another process (pid 4242)"


def test_a_finished_run_and_a_kept_tune(
    stopped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    finished = tmp_path / "finished"
    shutil.copytree(stopped, finished)
    result = tournament.resume_tournament(finished, progress=False)
    out = stopped_tune(tmp_path / "tune", budget=320, candidates=4, matches=2)
    assert main(["status", str(finished), str(out)]) == 0
    text = capsys.readouterr().out
    assert text == (
        f"{finished}: finished, {CONFIG.deals} deals\n\n{format_summary(result.summary)}\n\n"
        f"{out}: a tune, stopped after 2 of 7 matches; resume with: hearts-sim tune --resume {out}\n"
        "  round-1/candidate-00: finished, 20 deals\n  round-1/candidate-01: finished, 20 deals\n"
    )
    with kept_tune(out).running():
        status = kept_tune(out).status()
    assert status.lines()[0] == (
        f"{out}: a tune, being run by this process (pid {os.getpid()}), in another call, 2 of 7 matches done"
    )
    assert (
        status.as_dict()["runs"][0]["summary"]
        == json.loads((out / "round-1" / "candidate-00" / "manifest.json").read_text())["summary"]
    )
    tuned = resume_tune(out)  # the tune's result is shown as the command printed it
    assert main(["status", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}: a tune, finished, 7 matches\n\n{tuned}\n"
    assert str(tuned).startswith(f"best: {tuned.best.spec}\ngain over rule(shoot=40): ")
    assert main(["status", str(out), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)[0]
    assert (shown["state"], shown["done"], shown["total"]) == ("finished", 7, 7)
    assert shown["result"] == json.loads(json.dumps(tuned.as_dict()))
    played = [str(Path(run["out"]).relative_to(out)) for run in shown["runs"]]  # in the order played
    assert played == [*(f"round-1/candidate-0{k}" for k in range(4)), *played[4:6], "confirm"]


def test_a_tune_whose_result_cannot_be_kept_still_gives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The result is written to the job's file last; a full disk then loses nothing: the tune
    returns it, the status says the tune stopped after its last match, and a resume gives it."""
    out, arguments = tmp_path / "tune", dict(budget=160, candidates=2, seed=1, reference="rule(shoot=40)")
    write = KeptJob._write

    def full_disk_for_the_result(job: KeptJob, stored: dict) -> None:
        if "result" in stored["progress"]:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        write(job, stored)

    with monkeypatch.context() as patched:
        patched.setattr(KeptJob, "_write", full_disk_for_the_result)
        tuned = tune("rule", parse_ranges(["defend=8:20"]), **arguments, out=out)
    status = kept_tune(out).status()
    assert (status.state, status.done, status.total, status.result) == ("stopped", 3, 3, None)
    assert resume_tune(out).as_dict() == tuned.as_dict()
    assert kept_tune(out).status().result == json.loads(json.dumps(tuned.as_dict()))


def test_a_hand_edited_job_file_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Steps that are not two counts are shown as not counted; a result that cannot be shown is
    a one-line error that says how to have it again."""
    out = stopped_tune(tmp_path / "tune", budget=160, candidates=2, matches=2)
    resume_tune(out)
    kept = json.loads((out / "tune.json").read_text())
    for steps in ({"done": 1}, {"done": "a", "total": 3}, {"done": True, "total": 3}, [1, 3]):
        (out / "tune.json").write_text(json.dumps({**kept, "progress": {**kept["progress"], "steps": steps}}))
        assert main(["status", str(out)]) == 0
        assert capsys.readouterr().out.startswith(f"{out}: a tune, finished\n\nbest: rule(")
    damaged = {**kept["progress"], "result": {"best_spec": "rule"}}
    (out / "tune.json").write_text(json.dumps({**kept, "progress": damaged}))
    assert main(["status", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"hearts-sim: error: {out / 'tune.json'} holds a result that cannot be read (KeyError: 'ci95'); "
        f"hearts-sim tune --resume {out} gives it again\n"
    )


def test_a_job_kept_before_its_steps_were_counted_still_shows(tmp_path: Path) -> None:
    out = stopped_tune(tmp_path / "tune", budget=160, candidates=2, matches=1)
    kept = json.loads((out / "tune.json").read_text())
    del kept["progress"]["steps"]
    (out / "tune.json").write_text(json.dumps(kept))
    status = kept_tune(out).status()
    assert (status.state, status.done, status.total) == ("stopped", None, None)
    assert status.lines() == [
        f"{out}: a tune, not running; hearts-sim tune --resume {out} goes on with it (or prints its "
        "result, if it is finished)",
        "  round-1/candidate-00: finished, 40 deals",
    ]


def test_a_sequential_match_under_way_is_undecided_so_far(tmp_path: Path) -> None:
    config = tournament.replace(CONFIG, deals=400, sprt=tournament.Sprt(gain=0.3))
    with pytest.raises(tournament.Interrupted):
        tournament.run_tournament(config, tmp_path / "sprt", progress=False, stop_after_chunks=1)
    text = format_summary(tournament.run_status(tmp_path / "sprt").summary or {})
    assert text.splitlines()[-1].endswith("; undecided so far, after 10 of at most 400 deals")


def test_where_there_is_no_flock_the_status_says_it_cannot_tell(
    stopped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows (no ``fcntl``): runs are written unlocked, so a stopped run and one being written
    look alike; the status says so rather than calling it stopped."""
    monkeypatch.setattr(files, "fcntl", None)
    status = tournament.run_status(stopped)
    assert status.state == "unknown"
    assert status.line() == (
        f"{stopped}: 20 of 40 deals (50%), being written or stopped (no flock here to tell by); "
        f"a stopped one resumes with: hearts-sim tournament --resume {stopped}"
    )


def test_status_of_several_folders_shows_each_that_it_can(
    stopped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``status runs/*`` printed nothing but the error of one folder that held no run; a folder of
    runs, or a run's manifest.json named for its folder, held "no run" either."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(stopped, runs / "a")
    (runs / "notes").mkdir()  # a folder beside the runs that holds none: passed over
    line = f"{runs / 'a'}: {tournament.run_status(runs / 'a').progress()}"
    assert main(["status", str(runs / "a"), str(tmp_path / "missing")]) == 2
    out, err = capsys.readouterr()
    assert out.startswith(line) and err == (
        f"hearts-sim: error: {tmp_path / 'missing'} holds no tournament run, tune or calibration "
        "(no manifest.json, tune.json or levels.json, nor a folder that does)\n"
    )
    assert main(["status", str(runs)]) == 0  # the runs in a folder of runs
    assert capsys.readouterr().out.startswith(line)
    assert main(["status", str(runs / "a" / "manifest.json"), "--json"]) == 0
    assert [s["out"] for s in json.loads(capsys.readouterr().out)] == [str(runs / "a")]
    assert main(["status", str(runs / "notes")]) == 2


def test_a_folder_that_cannot_be_listed_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of runs is listed for the runs in it; one that cannot be (no permission; root
    reads any, so the refusal is simulated here) is an error line, not a traceback."""
    locked = tmp_path / "locked"
    locked.mkdir()
    listed = Path.iterdir

    def refuse(self: Path) -> Any:
        if self == locked:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return listed(self)

    monkeypatch.setattr(Path, "iterdir", refuse)
    assert main(["status", str(locked)]) == 2
    assert capsys.readouterr().err == f"hearts-sim: error: cannot read {locked}: Permission denied\n"
