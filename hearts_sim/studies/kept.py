"""A long job kept in a folder, so that one stopped by Ctrl-C, SIGTERM or a crash goes on where it
stopped: ``hearts-sim tune --out DIR`` and ``hearts-sim levels --out DIR``, resumed with
``--resume DIR``.

The folder holds the job's settings in one JSON file (``tune.json``, ``levels.json``), written
before any work, with a ``note`` of what its caller needs back on resuming (the command line's
other options, the command that started it) and the ``folder`` it was started in, where its
outside agents named relative to it are found on resuming from anywhere (as a run's are).
Each match is a tournament run in a subfolder (which resumes from its last chunk); results that
are not runs go to ``progress`` in the same file as they are measured, with how many of the
job's steps are done (``count_step``) and, at the end, the job's result (``finish``), which
``hearts-sim status`` shows. ``KeptJob`` is the folder; ``JobStopped`` is what a job raises when
a signal stops it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.external import (
    ExternalAgentError,
    agent_folder,
    agents_found_in,
    check_trusted,
    names_outside_agent,
)
from hearts_sim.core.checks import is_integer
from hearts_sim.core.errors import InputError, Stopped, StorageError, Terminated, signals_unwrapped
from hearts_sim.core.files import (
    LockHeld,
    broken_link,
    exclusive_lock,
    is_leftover_write,
    look_at_lock,
    read_json_object,
    remove_leftover_writes,
    shell_path,
    taken_out,
    write_atomically,
)
from hearts_sim.selfplay.records import LOCK, MANIFEST, held_job
from hearts_sim.studies.tournament import (
    ChunkError,
    Interrupted,
    RunStatus,
    ShownAsText,
    check_same_play,
    run_status,
)


def job_resume(command: str, out: Path) -> str:
    """The command that resumes the job kept in ``out`` (``command``: its subcommand, ``tune``)."""
    return f"hearts-sim {command} --resume {shell_path(out)}"


def job_failure(error: Exception, command: str, out: Path | None) -> Exception:
    """``error``, an agent's failure in one of a job's matches, with the job's resume command
    where the match's own was (``tournament --resume DIR/round-1/candidate-00``: a resume of
    that match alone, outside the job)."""
    failure = getattr(error, "failure", None)
    if out is None or failure is None:
        return error
    return type(error)(f"{failure}; what was played is kept: resume with {job_resume(command, out)}")


@contextmanager
def job_stops(command: str, where: Callable[[], str], out: Path | None) -> Iterator[None]:
    """A job ended early during the block, said as the job's, with its resume command:
    - Ctrl-C or SIGTERM, in a match (its ``Interrupted``: its chunks are kept) or between two
      (numba's wrapping of it included), as the job's ``JobStopped``, which says ``where()`` it
      stopped (a signal that fell after a match's last chunk, its summary, was a bare
      "interrupted");
    - an agent's failure in a match, a chunk a cluster could not play, or a part or manifest that
      could not be written (a full disk: it said to resume the match alone), as ``job_failure``."""
    try:
        with signals_unwrapped():
            yield
    except (Interrupted, KeyboardInterrupt) as stop:
        terminated = stop.terminated if isinstance(stop, Interrupted) else isinstance(stop, Terminated)
        raise JobStopped(command, where(), out, terminated) from None
    except (ExternalAgentError, ChunkError, StorageError) as error:
        raise job_failure(error, command, out) from None


class JobStopped(Stopped):
    """Ctrl-C or SIGTERM during a kept job (or one that is not kept): how far it got, and how to
    go on. ``command`` is the job's subcommand (``tune``)."""

    def __init__(self, command: str, where: str, out: Path | None, terminated: bool):
        self.out = out
        kept = (
            f"; resume with: {job_resume(command, out)}"
            if out is not None
            else f": nothing is kept (hearts-sim {command} --out DIR keeps what it measures, and resumes)"
        )
        super().__init__(f"{where}{kept}", terminated)


@dataclass(frozen=True)
class KeptJob:
    """A job's folder: ``out``, its settings file's name ``file``, the ``command`` that runs it and
    ``what`` it is (for messages: ``levels``, ``calibration``); ``error`` is the job's
    ``InputError`` class, ``steps`` what its steps are (``matches``) and ``show`` the text of its
    result (what the command prints)."""

    out: Path
    file: str
    command: str
    what: str
    error: type[InputError]
    steps: str
    show: Callable[[dict[str, Any]], str]

    @property
    def path(self) -> Path:
        """The job's kept file in its folder (``tune.json``, ``levels.json``)."""
        return self.out / self.file

    def read(self) -> dict[str, Any]:
        """The kept ``settings``, ``note``, ``folder`` and ``progress``."""
        missing = f"{self.out} holds no {self.what} ({self.file} is missing){held_job(self.out, self.file)}"
        stored = read_json_object(self.path, self.error, missing, f"a {self.what}'s file")
        if not isinstance(stored.get("settings"), dict) or not isinstance(stored.get("progress", {}), dict):
            raise self.error(f"{self.path} is not a {self.what}'s file (no settings)")
        return stored

    def start(self, settings: Mapping[str, Any], note: Mapping[str, Any] | None, resume: bool) -> None:
        """A new job writes its settings into a missing or empty folder; a resumed one must find
        the same settings there (``settings`` as JSON gives them: lists, not tuples). Called
        holding the folder (``kept_job``): a second new job could write its settings over the
        first's, and was told to resume a job another process was running."""
        settings = json.loads(json.dumps(settings))
        if resume:
            kept = self.read()["settings"]
            if kept != settings:
                differ = next(name for name in settings if kept.get(name) != settings[name])
                raise self.error(
                    f"{self.out} holds a different {self.what} (its {differ} differs): choose another --out"
                )
            return
        if self.path.exists():
            if "result" in self.progress():  # "continue" a finished one: it was done
                raise self.error(
                    f"{self.out} already holds a finished {self.what} (its result: "
                    f"{job_resume(self.command, self.out)}): choose a new --out"
                )
            raise self.error(
                f"{self.out} already holds a {self.what}: continue it with "
                f"{job_resume(self.command, self.out)}"
            )
        if not self._fit_for_new_job():
            raise self.error(taken_out(self.out))
        if (broken := broken_link(self.out)) is not None:
            raise self.error(f"--out {broken}: point it at a folder, or choose another --out")
        try:
            folder = str(agent_folder())  # where py:mine.py is found (``agents_found_in``)
            self._write({"settings": settings, "note": dict(note or {}), "folder": folder, "progress": {}})
        except OSError as error:
            raise self.error(f"cannot write to --out {self.out}: {error.strerror or error}") from None

    def check_same_play(self) -> None:
        """Refuse to go on with other code than the one that played the job's matches so far (an
        upgrade, an edited agent): the first match kept (by folder name) with a chunk played is
        checked as a tournament's resume checks its run (``tournament.check_same_play``), its
        first chunk played again."""
        for manifest in sorted(self.out.rglob(MANIFEST)):
            if check_same_play(manifest.parent):
                return

    def _fit_for_new_job(self) -> bool:
        """``out`` is missing, or a folder with nothing in it but its lock file (and the temporary
        of its settings' write, where a kill fell within it)."""
        if not self.out.exists():
            return True
        return self.out.is_dir() and all(
            path.name == LOCK or is_leftover_write(path) for path in self.out.iterdir()
        )

    @contextmanager
    def running(self, resume: bool = True) -> Iterator[None]:
        """This process runs the job while the block runs; another that tries is refused (the
        flock of ``core.files.exclusive_lock``, dropped when the process ends). A new job takes
        its folder first (made if missing, unless it holds something else: nothing is created
        there), so that it writes its settings holding it."""
        if not resume and not self.path.exists() and not self._fit_for_new_job():
            holder = look_at_lock(self.out / LOCK).holder  # another new job writing its settings
            raise self.error(
                f"{self.out} is being run by {holder.who}: choose another --out"
                if holder is not None
                else taken_out(self.out)
            )
        if not resume and broken_link(self.out) is None:
            try:
                self.out.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise self.error(f"cannot write to --out {self.out}: {error.strerror or error}") from None
        try:
            with exclusive_lock(self.out / LOCK):
                if resume and self.path.is_file():  # a job's folder: its own temporaries alone
                    remove_leftover_writes(self.out)
                yield
        except LockHeld as held:
            if not resume:  # a new job that lost the folder to another: resuming would go on with that one
                raise self.error(f"{self.out} is being run by {held.who}: choose another --out") from None
            raise self.error(
                f"{self.out} is being run by {held.who}: wait for it to end, or stop it "
                f"and then resume with {job_resume(self.command, self.out)}"
            ) from None

    def status(self) -> JobStatus:
        """Whether a process runs the job now, how far it got, where each of its matches stands,
        and its result once it is finished."""
        progress = self.read().get("progress", {})  # a folder that holds no such job: its error
        runs = [run_status(manifest.parent) for manifest in sorted(self.out.rglob(MANIFEST))]
        runs.sort(key=lambda run: math.inf if run.started is None else run.started)  # as played
        lock = look_at_lock(self.out / LOCK)
        steps = progress.get("steps")
        done, total = (steps.get("done"), steps.get("total")) if isinstance(steps, dict) else (None, None)
        if not all(type(count) is int and count >= 0 for count in (done, total)):
            done, total = None, None  # not counted (a job kept before steps were), or edited
        result = progress.get("result")
        if result is not None:
            try:
                self.show(result)
            except (KeyError, IndexError, TypeError, ValueError) as error:
                raise self.error(
                    f"{self.path} holds a result that cannot be read ({type(error).__name__}: {error}); "
                    f"{job_resume(self.command, self.out)} gives it again"
                ) from None
        return JobStatus(self, lock.holder, runs, lock.known, done, total, result)

    def folder(self) -> str | None:
        """The folder the job was started in, where its outside agents named relative to it are
        found; None for a job kept before it was recorded."""
        folder = self.read().get("folder")
        return folder if isinstance(folder, str) else None

    def check_trusted(self, trusted: bool) -> None:
        """Refuse to resume a job whose settings name outside agents (its agent, a ladder's step:
        ``py:``, ``exec:``) unless ``trusted`` (``agents.external.check_trusted``): its file may
        come from anyone."""
        outside = [text for text in _texts(self.read()["settings"]) if names_outside_agent(text)]
        check_trusted(outside, str(self.path), trusted, folder=self.folder())

    def progress(self) -> dict[str, Any]:
        """What the job recorded with ``record`` so far."""
        return dict(self.read().get("progress", {}))

    def count_step(self, done: int, total: int) -> None:
        """Keep how far the job got, ``done`` of its ``total`` steps, for ``status``: written when
        it goes further than what is kept (a resume reading its steps back writes nothing)."""
        kept = self.progress().get("steps")
        steps = kept if isinstance(kept, dict) else {}  # none yet, or of the wrong kind: written anew
        known = steps.get("done")
        if not is_integer(known) or done > known or total != steps.get("total"):
            self.record(steps={"done": done, "total": total})

    def finish(self, result: Mapping[str, Any]) -> None:
        """Keep the job's result (JSON), which ``status`` shows as the command prints it. A write
        that fails (a full disk) loses nothing: the job still returns its result, and a resume
        reads its matches back and gives it again."""
        with suppress(StorageError):
            self.record(result=result)

    def record(self, **values: Any) -> None:
        """Keep measured results (JSON) under their keys, in one write: the file whole or as it
        was; a failed write (a full disk) is a ``StorageError`` that says how to go on."""
        stored = self.read()
        stored.setdefault("progress", {}).update(values)
        try:
            self._write(stored)
        except OSError as error:
            raise StorageError(
                f"cannot write {self.path}: {error.strerror or error}; what it kept before is there: "
                f"resume with: {job_resume(self.command, self.out)}"
            ) from None

    def _write(self, stored: Mapping[str, Any]) -> None:
        write_atomically(self.path, (json.dumps(stored, indent=2) + "\n").encode())


@dataclass(frozen=True, repr=False)
class JobStatus(ShownAsText):
    """``KeptJob.status``: the process running the job (None: none), ``done`` of its ``total``
    steps (None: a job kept before they were counted), its matches' ``RunStatus`` and its
    ``result`` once finished."""

    job: KeptJob
    writer: LockHeld | None
    runs: list[RunStatus]
    known: bool = True  # False: no flock here to tell a job that runs from one that does not
    done: int | None = None
    total: int | None = None
    result: dict[str, Any] | None = None

    @property
    def state(self) -> str:
        """``running``, ``finished``, ``stopped`` or ``unknown``, as a run's."""
        if self.writer is not None:
            return "running"
        if self.result is not None:
            return "finished"
        return "stopped" if self.known else "unknown"

    def lines(self) -> list[str]:
        """The job's line; then its result once finished, else one line a match (its folder
        within the job's)."""
        job = self.job
        resume = job_resume(job.command, job.out)
        counted = self.total is not None  # not in a job kept before steps were counted
        steps = f"{self.done} of {self.total} {job.steps}"
        state = self.state
        if state == "running":
            assert self.writer is not None
            line = f"being run by {self.writer.who}" + (f", {steps} done" if counted else "")
        elif state == "finished":
            line = f"finished, {self.total} {job.steps}" if counted else "finished"
        elif state == "stopped" and counted:
            line = f"stopped after {steps}; resume with: {resume}"
        elif state == "stopped":
            line = f"not running; {resume} goes on with it (or prints its result, if it is finished)"
        else:
            done = f", {steps} done" if counted else ""
            line = f"running or not (no flock here to tell by){done}; a stopped one goes on with {resume}"
        head = f"{job.out}: a {job.what}, {line}"
        if self.result is not None and self.writer is None:
            return [head, "", job.show(self.result)]
        return [head, *(f"  {run.out.relative_to(job.out)}: {run.progress()}" for run in self.runs)]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def as_dict(self) -> dict[str, Any]:
        """The status as ``status --json`` prints it."""
        return {
            "out": str(self.job.out),
            "job": self.job.command,
            "state": self.state,
            "writer_pid": self.writer.pid if self.writer is not None else None,
            "done": self.done,
            "total": self.total,
            "steps": self.job.steps,
            "result": self.result,
            "runs": [run.as_dict() for run in self.runs],
        }


def _texts(value: Any) -> Iterator[str]:
    """Every string in a JSON value (its lists' and objects' values, at any depth)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | dict):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _texts(item)


@contextmanager
def kept_job(
    folder: Callable[[Path], KeptJob],
    out: str | Path | None,
    settings: Mapping[str, Any],
    note: Mapping[str, Any] | None,
    resume: bool,
) -> Iterator[KeptJob | None]:
    """The job kept in ``out`` (``folder(out)``), started or resumed and run by this process
    alone for the block; None without ``out`` (nothing kept), where ``resume`` is refused."""
    if out is None:
        if resume:
            raise folder(Path()).error("resume=True continues a job kept in out: give out=DIR")
        yield None
        return
    job = folder(Path(out))
    with job.running(resume):
        job.start(settings, note, resume)
        with agents_found_in(job.folder() if resume else None):  # from any folder
            if resume:
                job.check_same_play()
            yield job


__all__ = ["JobStatus", "JobStopped", "KeptJob", "job_stops", "kept_job"]
