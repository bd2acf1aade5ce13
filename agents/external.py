"""Agents decided outside the compiled loop: Python objects and external engines.

Design note. A built-in agent is a numba kernel the self-play loop calls for each decision. An
*external* agent is anything else that can decide from an ``Observation``:

* a Python object with ``choose_pass(obs) -> cards`` and ``choose_play(obs) -> card`` (the same
  protocol as ``agents.load``'s agents), optionally ``act_batch(observations) -> moves`` to decide
  many positions in one call (a network's forward pass). Spec: ``py:package.module:Name``,
  ``py:path/to/file.py:Name``, with keyword arguments ``py:file.py:Name(depth=3)``; in Python,
  the object itself;
* a program speaking the JSON-lines protocol of ``hearts-sim serve`` (``hearts_sim.game.protocol``)
  on stdin/stdout: ``exec:COMMAND``, e.g. ``exec:hearts-sim serve --agent rule``. Several
  processes per engine when tables run in parallel (``EngineOptions.procs``), a time limit per
  request (``EngineOptions.timeout``).

A table with external seats is played in lockstep blocks (``hearts_sim.selfplay.lockstep``): the
compiled loop advances every hand of a block until an external seat must decide, those decisions
are asked for in one batch per agent, and the loop goes on. Seeds: a Python agent that accepts a
``seed`` keyword (``seeds`` for ``act_batch``), or has ``reset(seed)``, gets 64 bits per decision
derived one-way from the hand seed, so its results are reproducible like everyone else's and the
seed tells it nothing about the deal. An engine gets the hand seed itself (``seed`` in the
request), with which ``hearts-sim serve`` decides exactly as the compiled loop does: trust the
engines you run.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import json
import math
import os
import queue
import re
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from agents.kinds import AgentError
from hearts_sim.core.cards import N_CARDS, card_str, cards_of, cards_str, parse_card
from hearts_sim.core.checks import counted, is_integer, is_real, one_line, shown
from hearts_sim.core.files import disk_bytes
from hearts_sim.core.rules import Rules
from hearts_sim.game.observation import Observation
from hearts_sim.game.protocol import AnswerError, move_from_answer, request_for

PY, EXEC, OBJECT = "py", "exec", "object"
# what an agent's own code may raise, reported as its failure: sys.exit() in it too (the command
# ended silently with the agent's exit code)
AGENT_FAILURES = (Exception, SystemExit)
MAX_ENGINE_PROCS = 1024  # processes per engine
MAX_ENGINE_TIMEOUT = 1e6  # seconds per decision (11 days): past it, no limit is meant (0, None)
FIRST_ANSWER_GRACE = 300.0  # seconds an engine's first answer may take at least (it compiles, warms up)
_PY_TARGET = re.compile(r"^(?P<where>.+):(?P<name>[A-Za-z_]\w*)\s*(?:\((?P<args>.*)\))?\s*$", re.S)


class ExternalAgentError(AgentError):
    """An external agent failed (raised, answered garbage, an illegal move, timed out, died);
    ``position``: the index in its batch of the position it failed on, where one is known."""

    position: int | None = None
    failure: str | None = None  # in a run: the failure alone, without how to resume the run

    def at(self, position: int) -> ExternalAgentError:
        self.position = position
        return self


class AnswerRefused(ValueError):
    """A Python agent's answer refused by the toolkit's checks (not a card, not a legal one): its
    one line says it all, where the agent's own code raising comes with that code's traceback."""


class PositionFailed(Exception):
    """A Python agent's own code raised while deciding position ``index`` of a batch."""

    def __init__(self, index: int, error: BaseException):
        super().__init__(f"{type(error).__name__}: {one_line(error)}")
        self.index = index


@dataclass(frozen=True)
class EngineOptions:
    """How external agents run: processes per engine (1 .. 1024), and seconds per decision (None,
    0 or infinity: no limit, as ``--engine-timeout 0``). Anything else is an ``AgentError`` naming
    the keyword of ``simulate`` that set it (a million processes were started, and a negative
    limit failed every decision at once)."""

    procs: int = 1
    timeout: float | None = 30.0

    def __post_init__(self) -> None:
        if not is_integer(self.procs) or not 1 <= self.procs <= MAX_ENGINE_PROCS:
            raise AgentError(
                f"engine_procs={shown(self.procs)} is not valid: processes per engine, "
                f"1 .. {MAX_ENGINE_PROCS}"
            )
        timeout = self.timeout
        if timeout is not None and (  # NaN too; 10**400 was float()'s OverflowError
            not is_real(timeout) or not (0 <= timeout <= MAX_ENGINE_TIMEOUT or timeout == math.inf)
        ):
            raise AgentError(
                f"engine_timeout={shown(timeout)} is not valid: seconds per decision, 0 .. "
                f"{MAX_ENGINE_TIMEOUT:,.0f} (0, None or infinity: no limit)"
            )
        object.__setattr__(self, "procs", int(self.procs))
        object.__setattr__(self, "timeout", None if not timeout or timeout == math.inf else float(timeout))


@dataclass(frozen=True)
class ExternalSpec:
    """An external agent as specified: ``py:...``, ``exec:...``, or a Python object."""

    text: str  # the spec as written, or the object's name
    kind: str  # PY, EXEC or OBJECT
    target: str = ""  # the module or file and class (PY), the command (EXEC)
    kwargs: tuple[tuple[str, Any], ...] = ()
    instance: Any = field(default=None, compare=False, hash=False)  # OBJECT

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:  # an object is itself; specs are their text
        if not isinstance(other, ExternalSpec):
            return NotImplemented
        if self.kind == OBJECT or other.kind == OBJECT:
            return self.instance is other.instance
        return self.text == other.text

    def __hash__(self) -> int:
        return hash(id(self.instance)) if self.kind == OBJECT else hash(self.text)


def is_external(text: str) -> bool:
    return text.lstrip().startswith(("py:", "exec:"))


TRUST_FLAG = "--trust-agents"  # the command line's word for running a folder's outside agents


class UntrustedAgents(AgentError):
    """Outside agents named by a folder (a run's manifest or records, a kept job's file), which a
    resume or a replay would run, refused until the user says they trust where it came from."""


def names_outside_agent(text: str) -> bool:
    """Whether a spec, level or job setting names an outside agent anywhere in it (``py:x.py:A``,
    ``pass=exec:eng,play=rule``), an agent object's label (``py:Name``, which runs nothing) aside."""
    if is_object_label(text.strip()):
        return False
    return re.search(r"(?:^|[\s,=(\[])(?:py|exec):", text) is not None


def check_trusted(
    outside: Sequence[str], source: str, trusted: bool, from_python: bool = True, folder: str | None = None
) -> None:
    """Refuse to go on with ``outside``, the outside agents ``source`` names, unless ``trusted``:
    a run folder or a job's file can come from anyone (a download, a colleague's archive), and
    resuming or replaying it runs the Python code and the commands it names, as this user. Until
    2026-12-07 an edited manifest's ``exec:`` command ran on ``--resume`` without a word.
    ``from_python``: whether the caller has a Python way to say so (``trust_agents=True``);
    ``folder``: the one they run in, as ``source`` records it (``agents_found_in``)."""
    if outside and not trusted:
        named = ", ".join(dict.fromkeys(outside))
        source += f" (its agents run in {folder})" if folder else ""
        python = " (from Python: trust_agents=True)" if from_python else ""
        raise UntrustedAgents(
            f"{source} names outside agents, which run code on this machine: {named}; go on only "
            f"if you trust where it came from: add {TRUST_FLAG}{python}"
        )


def parse_external(text: str) -> ExternalSpec:
    """``py:module:Name(k=v)`` or ``exec:COMMAND``, checked for form (not loaded yet)."""
    text = text.strip()
    if text.startswith("exec:"):
        command = text[len("exec:") :].strip()
        if not command:
            raise AgentError("exec: needs a command, e.g. exec:hearts-sim serve --agent rule")
        try:
            shlex.split(command)
        except ValueError as error:
            raise AgentError(f"{text}: the command does not parse ({error})") from None
        return ExternalSpec(text, EXEC, command)
    match = _PY_TARGET.match(text[len("py:") :])
    if not match:
        raise AgentError(f"malformed {text!r}: write py:package.module:Name or py:path/file.py:Name(k=v)")
    kwargs = _keyword_arguments(match.group("args") or "", text)
    return ExternalSpec(text, PY, f"{match.group('where').strip()}:{match.group('name')}", kwargs)


def wrap_object(agent: Any) -> ExternalSpec:
    """An object with ``choose_pass``/``choose_play`` (or ``act_batch``) as an agent."""
    if not (callable(getattr(agent, "act_batch", None)) or callable(getattr(agent, "choose_play", None))):
        raise AgentError(
            f"{shown(agent)} is not an agent: it needs choose_pass and choose_play (or act_batch)"
        )
    return ExternalSpec(
        object_label(getattr(agent, "name", None) or type(agent).__name__), OBJECT, instance=agent
    )


def object_label(name: object) -> str:
    """How an agent object is shown and recorded: ``py:`` and its ``name`` (else its class's) as
    a word, which reads back as no spec. An object named ``rule`` (``agents.load("rule")``, whose
    name is its spec) was recorded as the built-in agent, which its resume then played."""
    word = re.sub(r"\W+", "_", str(name).removeprefix("py:")).strip("_")
    return f"py:{word or 'agent'}"


def is_object_label(name: str) -> bool:
    """Whether ``name`` is how an agent object is recorded (``py:ClassName``, from ``wrap_object``):
    it names no module or file, so the object itself must be given again to replay or resume."""
    return re.fullmatch(r"py:\w+", name) is not None


def _keyword_arguments(text: str, spec: str) -> tuple[tuple[str, Any], ...]:
    """``depth=3, name='x'`` as literal keyword arguments."""
    if not text.strip():
        return ()
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        assert isinstance(call, ast.Call) and not call.args
        return tuple((k.arg, ast.literal_eval(k.value)) for k in call.keywords if k.arg is not None)
    except (SyntaxError, ValueError, AssertionError):
        raise AgentError(f"{spec}: arguments must be literal keyword arguments, e.g. (depth=3)") from None


# ---------------------------------------------------------------- deciders
class Decider(Protocol):
    name: str

    def decide(
        self, observations: list[Observation], passing: bool, seeds: list[int], hand_seeds: list[int]
    ) -> list[Any]: ...


def decision_seed_for_agent(decision_seed: int) -> int:
    """64 bits for one decision of an external agent, derived one-way from the loop's decision
    seed (which a splitmix bijection ties to the hand seed, hence to the deal)."""
    digest = hashlib.blake2b(int(decision_seed).to_bytes(8, "little"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


_PRINTS = threading.Lock()
_printing_agents = 0  # calls into agents' code now running, on any thread
_saved_stdout: tuple[Any, int | None] | None = None
_PRINTS_TO_STDERR = False  # set by the command line (send_agent_prints_to_stderr)


def send_agent_prints_to_stderr() -> None:
    """From now on, what agents print goes to stderr (``agent_prints_to_stderr``): for a process
    whose stdout carries its results, as the ``hearts-sim`` command's does."""
    global _PRINTS_TO_STDERR
    _PRINTS_TO_STDERR = True


@contextmanager
def agent_prints_to_stderr() -> Iterator[None]:
    """What an agent's code prints goes to stderr while the block runs (``sys.stdout`` and file
    descriptor 1 both), in a process that asked for it (``send_agent_prints_to_stderr``: the
    command line, whose stdout carries ``--json``'s one object and ``serve``'s answers, which an
    agent's prints broke). Counted across threads: the first call in redirects, the last out
    restores. A library caller's prints stay where it sends them (a notebook, ``redirect_stdout``)."""
    global _printing_agents, _saved_stdout
    if not _PRINTS_TO_STDERR:
        yield
        return
    with _PRINTS:
        if _printing_agents == 0:
            _flush(sys.stdout)
            descriptor = _stdout_to_stderr()
            _saved_stdout = (sys.stdout, descriptor)
            sys.stdout = sys.stderr
        _printing_agents += 1
    try:
        yield
    finally:
        with _PRINTS:
            _printing_agents -= 1
            if _printing_agents == 0 and _saved_stdout is not None:
                _flush(sys.stderr)
                sys.stdout, descriptor = _saved_stdout
                if descriptor is not None:
                    os.dup2(descriptor, 1)
                    os.close(descriptor)
                _saved_stdout = None


def _stdout_to_stderr() -> int | None:
    """Descriptor 1 pointed at stderr's file; a copy of what it was (None where there is no
    descriptor 1 or 2 to point: a windowed Python, a closed stream; Python's streams alone then)."""
    try:
        saved = os.dup(1)
    except OSError:
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(saved)
        return None
    return saved


def _flush(stream: Any) -> None:
    with contextlib.suppress(AttributeError, OSError, ValueError):  # None, a closed pipe or file
        stream.flush()


class OutOfTime(Exception):
    """A call on an ``AgentThread`` ran past its time limit. Not ``TimeoutError``: an agent's own
    ``TimeoutError`` (a socket of its, a lock) read as the toolkit's time limit, "did not decide
    within 30 s" after a fraction of a second."""


class AgentThread:
    """A daemon thread that makes a Python agent's calls, each waited for up to a time limit. A
    call stuck past it keeps the thread, and the process can still exit: a thread of a
    ``ThreadPoolExecutor`` is joined at exit, so one hung agent held the process forever."""

    def __init__(self, name: str):
        self.calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        while (task := self.calls.get()) is not None:
            call, arguments, outcome, done = task
            try:
                outcome.append((True, call(*arguments)))
            except BaseException as error:  # the agent's own (sys.exit too): raised where it was asked
                outcome.append((False, error))
            done.set()

    def call(self, left: Callable[[], float], call: Callable[..., Any], *arguments: Any) -> Any:
        """``call(*arguments)`` on the thread: its result, or what it raised; ``OutOfTime`` once
        ``left()``, the seconds it has left (which it may extend as it goes on), runs out."""
        outcome: list[tuple[bool, Any]] = []
        done = threading.Event()
        self.calls.put((call, arguments, outcome, done))
        while not done.wait(max(0.0, left())):
            if left() <= 0:
                raise OutOfTime
        returned, value = outcome[0]
        if not returned:
            raise value
        return value

    def stop(self) -> None:
        self.calls.put(None)


class PythonDecider:
    """Decisions from a Python object, in one ``act_batch`` call or one call per position."""

    def __init__(self, agent: Any, name: str, timeout: float | None):
        self.agent, self.name, self.timeout = agent, name, timeout
        self.batch = callable(getattr(agent, "act_batch", None))
        self.reset = getattr(agent, "reset", None) if callable(getattr(agent, "reset", None)) else None
        methods = ("act_batch",) if self.batch else ("choose_pass", "choose_play")
        for method in methods:
            if not callable(getattr(agent, method, None)):
                raise AgentError(
                    f"agent {name} has no {method} method (an agent needs choose_pass and choose_play, "
                    "or act_batch)"
                )
        self.takes_seed = {
            method: _accepts(getattr(agent, method), "seeds" if method == "act_batch" else "seed")
            for method in methods
        }
        self._worker: AgentThread | None = None

    def decide(
        self, observations: list[Observation], passing: bool, seeds: list[int], hand_seeds: list[int]
    ) -> list[Any]:
        wants_seeds = self.reset is not None or any(self.takes_seed.values())
        own = [decision_seed_for_agent(s) for s in seeds] if wants_seeds else [0] * len(seeds)
        if self.batch:
            return self.timed(len(observations), self._decide_batch, observations, own)
        method = getattr(self.agent, "choose_pass" if passing else "choose_play")
        seeded = self.takes_seed["choose_pass" if passing else "choose_play"]
        return self.timed(1, self._decide_each, method, observations, own, seeded)

    def timed(self, positions: int, call: Callable[..., Any], *arguments: Any) -> Any:
        """``call(progress, *arguments)`` within the time limit: of each decision where the call
        makes one at a time (``positions`` 1; it says which it is at in ``progress``: a batch's
        pooled limit let a slow one through), of ``positions`` decisions where it makes them at
        once (``act_batch``). What the agent prints goes to stderr (``agent_prints_to_stderr``)."""
        progress = [(0, time.monotonic())]  # the decision the call is at, and since when
        if self.timeout is None:
            with agent_prints_to_stderr():
                return call(progress, *arguments)
        worker = self._worker = self._worker or AgentThread(f"agent {self.name}")
        limit = self.timeout * positions
        try:
            with agent_prints_to_stderr():
                return worker.call(
                    lambda: progress[0][1] + limit - time.monotonic(), call, progress, *arguments
                )
        except OutOfTime:
            self._worker = None  # the stuck call keeps its thread; the run stops
            if positions == 1:
                failed = ExternalAgentError(f"agent {self.name} did not decide within {limit:g} s")
                raise failed.at(progress[0][0]) from None
            raise ExternalAgentError(
                f"agent {self.name} did not decide {positions} positions within {limit:g} s "
                f"({self.timeout:g} s each, in one call)"
            ) from None

    def _decide_each(
        self,
        progress: list[tuple[int, float]],
        method: Callable[..., Any],
        observations: list[Observation],
        own: list[int],
        seeded: bool,
    ) -> list[Any]:
        moves = []
        for i, (observation, seed) in enumerate(zip(observations, own, strict=True)):
            progress[0] = (i, time.monotonic())
            try:
                if self.reset:
                    self.reset(seed)
                moves.append(method(observation, seed=seed) if seeded else method(observation))
            except AGENT_FAILURES as error:
                raise PositionFailed(i, error) from error
        return moves

    def _decide_batch(self, progress: Any, observations: list[Observation], own: list[int]) -> list[Any]:
        if self.reset:
            self.reset(own[0])
        if self.takes_seed["act_batch"]:
            answer = self.agent.act_batch(observations, seeds=own)
        else:
            answer = self.agent.act_batch(observations)
        if isinstance(answer, str | bytes | dict) or not hasattr(answer, "__iter__"):
            # list() of it was the agent's "raised TypeError: 'NoneType' object is not iterable"
            raise AnswerRefused(f"act_batch answered {shown(answer)}, not a list of moves")
        moves = list(islice(answer, len(observations) + 1))  # itertools.cycle was read for ever
        if len(moves) > len(observations):
            asked = counted(len(observations), "position")
            raise AnswerRefused(f"act_batch answered more moves than its {asked}")
        return moves

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()


def _accepts(method: Any, keyword: str) -> bool:
    try:
        return keyword in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


ENGINE_EXIT_SECONDS = 5.0  # an engine's time to exit once its input is closed, then it is killed
MAX_ANSWER_BYTES = 1 << 20  # an answer line longer than this is refused (a move is a few dozen bytes)
LAST_WORDS_BYTES = 64 * 1024  # the tail of an engine's stderr kept, for its last line


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs, from ``/proc`` (empty where there is none)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:  # "pid (command) state ppid ...": the command may hold spaces and brackets
            parent = int(stat.read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # a process that ended as it was read
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, waiting = [], [pid]
    while waiting:
        for child in children.get(waiting.pop(), []):
            found.append(child)
            waiting.append(child)
    return found


class StderrTail:
    """The last ``size`` bytes an engine wrote on stderr, read from its pipe on a daemon thread
    until the pipe closes. Its stderr went to a temporary file without limit: an engine writing
    400 MB a request filled 4 GB of disk in 25 s (until 2026-12-07), of which only the last line
    was ever read (``Engine._last_words``)."""

    def __init__(self, pipe: Any, size: int, name: str):
        self.size = size
        self._tail = bytearray()
        self._lock = threading.Lock()
        self.closed = threading.Event()  # the pipe's end was read: every writer has exited
        threading.Thread(target=self._read, args=(pipe,), name=f"stderr of {name}", daemon=True).start()

    def _read(self, pipe: Any) -> None:
        try:
            while chunk := os.read(pipe.fileno(), 1 << 16):
                with self._lock:
                    self._tail += chunk
                    if len(self._tail) > self.size:
                        del self._tail[: len(self._tail) - self.size]
        except (OSError, ValueError):  # closed under it
            pass
        finally:
            with contextlib.suppress(OSError):
                pipe.close()
            self.closed.set()

    def text(self, wait: float = 0.0) -> str:
        """What it holds, after waiting up to ``wait`` s for the end of the pipe (an engine that
        exited: the rest of what it wrote is read first)."""
        self.closed.wait(wait)
        with self._lock:
            return self._tail.decode(errors="replace")


class Engine:
    """One engine process: requests on its stdin, answers on its stdout, the tail of its stderr
    kept (``StderrTail``).

    ``kill`` ends it with what it started (Linux): an engine started through a wrapper
    (``exec:bash -c 'python eng.py; true'``, a script without ``exec``) was left running, its
    parent gone, when only the wrapper was killed. It stays in its caller's process group, which
    a served worker's end kills whole (``apps.server.Runner``), as a terminal's Ctrl-C reaches."""

    def __init__(self, command: str, name: str):
        self.name = name
        if sys.platform == "win32":  # its pipes are read without blocking, through select()
            raise ExternalAgentError(
                f"agent {name}: an exec: engine needs Linux or macOS (non-blocking pipes); on Windows, "
                "run hearts-sim under WSL, or call the engine from a py: agent"
            )
        try:
            self.process = subprocess.Popen(
                shlex.split(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=agent_folder(),  # a run's engine runs where the run began, resumed or not
            )
        except OSError as error:
            reason = error.strerror or error
            raise ExternalAgentError(f"agent {name}: cannot start {command!r}: {reason}") from None
        assert self.process.stdout is not None and self.process.stdin is not None
        self.stderr = StderrTail(self.process.stderr, LAST_WORDS_BYTES, name)
        os.set_blocking(self.process.stdout.fileno(), False)
        self.buffer = b""
        self.answered = False  # it has answered a request (its first may take longer)
        self.owes = False  # a request sent is not answered yet: the engine is busy, or stuck

    def send(self, request: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.owes = True
            self.process.stdin.write((json.dumps(request, separators=(",", ":")) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            if self._wrote_a_line():  # what it said before it exited is the answer read next
                return
            words = self._last_words()
            raise ExternalAgentError(f"agent {self.name}: the engine has exited{words}") from None

    def _wrote_a_line(self) -> bool:
        """Whether the engine, whose input is closed, left a whole line unread in its output: an
        engine that wrote ``hello`` and exited was said to have exited, where its line was there
        to be read and refused (``answered 'hello', not a JSON object``), when the machine was
        busy enough for it to exit before the request was written (until 2026-12-08)."""
        assert self.process.stdout is not None
        with contextlib.suppress(OSError):  # BlockingIOError: nothing there
            self.buffer += os.read(self.process.stdout.fileno(), MAX_ANSWER_BYTES)
        return b"\n" in self.buffer

    def read_line(self) -> bytes | None:
        """A complete line if one is buffered, or is after one read of what is readable now, else
        None; raises at end of output, or past ``MAX_ANSWER_BYTES`` without a newline. One read a
        call, so that the caller's deadline is checked between reads: an engine writing without
        end, never a newline, was read for ever, its timeout never reached."""
        assert self.process.stdout is not None
        if b"\n" not in self.buffer:
            try:
                chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            except BlockingIOError:
                return None
            if not chunk:
                words = self._last_words()
                if self.process.poll() is None:  # its output closed, the process alive: not "exited"
                    raise ExternalAgentError(f"agent {self.name}: the engine closed its output{words}")
                raise ExternalAgentError(f"agent {self.name}: the engine has exited{words}")
            self.buffer += chunk
            if b"\n" not in chunk:
                if len(self.buffer) > MAX_ANSWER_BYTES:
                    raise ExternalAgentError(
                        f"agent {self.name}: the engine wrote {len(self.buffer):,} bytes without ending "
                        "a line (an answer is one JSON line)"
                    )
                return None
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def kill(self) -> None:
        """End the engine and the processes it started, at once."""
        for pid in descendants(self.process.pid) if self.process.poll() is None else []:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.process.kill()

    def _last_words(self) -> str:
        try:  # it closed its output: let it finish exiting, to name its exit code
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        # its tail alone is kept: the whole file was read once, 1.7 GB for an engine that wrote
        # 1 MiB a request; what it wrote as it exited is read first (a process it started and
        # left running may hold the pipe: not waited for long)
        tail = self.stderr.text(wait=2 if code is not None else 0)
        lines = [x for x in tail.splitlines() if x.strip()]
        said = f"; its last words: {lines[-1].strip()[:200]}" if lines else ""
        return (f" (exit code {code})" if code is not None else "") + said

    def close(self) -> None:
        """An idle engine is told to stop by the end of its input (``ENGINE_EXIT_SECONDS`` to exit,
        then killed); one that owes an answer (past its timeout, or busy when the run failed
        elsewhere) is killed at once: it would read the end of its input only after deciding."""
        self.end_input()
        self.reap(time.monotonic() + ENGINE_EXIT_SECONDS)

    def end_input(self) -> None:
        """Close the engine's input (killing it first if it owes an answer): it should exit."""
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                if self.owes:
                    self.kill()
                self.process.stdin.close()
            except OSError:
                self.kill()

    def reap(self, deadline: float) -> None:
        """Wait for the engine to exit until ``deadline`` (``time.monotonic``), then kill it."""
        try:
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            self.process.wait()


class EngineDecider:
    """Decisions from ``procs`` processes of one engine command, one request in flight per process.

    Every request has an id of its own (a count), so an answer to an earlier one is told from the
    answer awaited. A decision that fails (no answer in time, the engine gone, an answer that is
    not one) ends the engines, which the next decision starts afresh: a long-lived caller (``hearts-sim
    serve``, ``agents.load``) got a late answer to the request before as its move, without a word
    (the ids were the positions in the batch: 0 for a single decision), and after an engine's
    crash every later request failed."""

    def __init__(self, command: str, name: str, options: EngineOptions):
        self.command, self.name, self.options = command, name, options
        self.engines: list[Engine] = []
        self._start()  # at once: a command that cannot start says so when the agent is loaded
        self.requests = 0  # requests sent: the next one's id

    def _start(self) -> None:
        self.engines = [Engine(self.command, self.name) for _ in range(self.options.procs)]

    def decide(
        self, observations: list[Observation], passing: bool, seeds: list[int], hand_seeds: list[int]
    ) -> list[Any]:
        if not self.engines:  # ended by a failure: start afresh
            self._start()
        try:
            return self._decide(observations, passing, hand_seeds)
        except ExternalAgentError:
            self.close()  # what it still owes, or will write, is no answer to a later request
            self.engines = []
            raise

    def _decide(self, observations: list[Observation], passing: bool, hand_seeds: list[int]) -> list[Any]:
        moves: list[Any] = [None] * len(observations)
        pending = list(range(len(observations)))[::-1]
        busy: dict[int, tuple[int, float, dict[str, Any]]] = {}  # engine -> (position, deadline, request)
        selector = selectors.DefaultSelector()
        for e, engine in enumerate(self.engines):
            assert engine.process.stdout is not None
            selector.register(engine.process.stdout, selectors.EVENT_READ, e)
        try:
            while pending or busy:
                for e, engine in enumerate(self.engines):
                    if e not in busy and pending:
                        i = pending.pop()
                        request = request_for(observations[i], request_id=self.requests, seed=hand_seeds[i])
                        self.requests += 1
                        try:
                            engine.send(request)
                        except ExternalAgentError as error:
                            raise ExternalAgentError(f"{error}, at request {_brief(request)}").at(i) from None
                        busy[e] = (i, time.monotonic() + self._wait(engine.answered), request)
                wait = min(deadline for _, deadline, _ in busy.values()) - time.monotonic()
                # no limit: wait for as long as it takes (a huge timeout overflows epoll's)
                ready = {key.data for key, _ in selector.select(None if wait == math.inf else max(0.0, wait))}
                for e in list(busy):
                    i, deadline, request = busy[e]
                    try:
                        line = self.engines[e].read_line() if e in ready or self.engines[e].buffer else None
                        while line is not None and _earlier_answer(line, request["id"]):
                            line = self.engines[e].read_line()  # a second answer to an earlier request
                    except ExternalAgentError as error:  # it ended: the request it died on, quoted
                        raise ExternalAgentError(f"{error}, at request {_brief(request)}").at(i) from None
                    if line is None:
                        if time.monotonic() > deadline:
                            raise self._late(self.engines[e].answered, request).at(i)
                        continue
                    self.engines[e].owes = False
                    try:
                        moves[i] = self._move(line, passing, request)
                    except ExternalAgentError as error:
                        raise error.at(i) from None
                    self.engines[e].answered = True
                    del busy[e]
        finally:
            selector.close()
        return moves

    def _wait(self, answered: bool) -> float:
        """How long an engine may take over a request: the timeout (infinity: no limit), and for
        its first answer (it compiles, warms up) ``FIRST_ANSWER_GRACE`` at least. The first answer
        had ``FIRST_ANSWER_GRACE`` whatever the timeout, until 2026-12-07: less than a longer one
        asked for, and a limit where 0 asked for none."""
        if self.options.timeout is None:
            return math.inf
        return self.options.timeout if answered else max(self.options.timeout, FIRST_ANSWER_GRACE)

    def _late(self, answered: bool, request: dict[str, Any]) -> ExternalAgentError:
        """The error of an engine that did not answer ``request`` in time (``_wait``)."""
        first = "" if answered else f" (a first answer: {FIRST_ANSWER_GRACE:g} s at least)"
        within = f"no answer within {self._wait(answered):g} s{first}"
        return ExternalAgentError(f"agent {self.name}: {within} to request {_brief(request)}")

    def _move(self, line: bytes, passing: bool, request: dict[str, Any]) -> Any:
        try:
            answer = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = line[:120].decode("utf-8", errors="replace").rstrip("\r\n")  # as the engine wrote it
            raise ExternalAgentError(
                f"agent {self.name}: answered {text!r}, not a JSON object, to request {_brief(request)}"
            ) from None
        if isinstance(answer, dict) and answer.get("id") != request["id"]:
            wrong = one_line(json.dumps(answer.get("id")), 40)  # as JSON: null, "0"; not None, '0'
            raise ExternalAgentError(
                f"agent {self.name}: answered id {wrong}, not {request['id']}, to request {_brief(request)}"
            )
        try:
            return move_from_answer(answer, passing)
        except AnswerError as error:
            raise ExternalAgentError(f"agent {self.name}: {error}, to request {_brief(request)}") from None

    def close(self) -> None:
        """Every process told to stop at once, then reaped, sharing one ``ENGINE_EXIT_SECONDS``:
        closed one after another, 4 processes that ignored the end of their input took 20 s."""
        for engine in self.engines:
            engine.end_input()
        deadline = time.monotonic() + ENGINE_EXIT_SECONDS
        for engine in self.engines:
            engine.reap(deadline)


def _earlier_answer(line: bytes, awaited: int) -> bool:
    """Whether ``line`` answers a request sent before the one ``awaited`` (an engine that wrote
    its answer twice)."""
    try:
        answer = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    earlier = answer.get("id") if isinstance(answer, dict) else None
    return is_integer(earlier) and 0 <= earlier < awaited


def _brief(request: dict[str, Any]) -> str:
    """A request as JSON, without the rules (long, and the same in every request)."""
    return json.dumps({k: v for k, v in request.items() if k != "rules"}, separators=(",", ":"))


# ---------------------------------------------------------------- where outside agents are found
# Set by ``agents_found_in``: this thread's folder, else that of any block still open in another
# thread of the process (the threads a block starts, an engine pool's, find its agents too). A
# single global restored on leaving a block was cleared under another thread still inside one: a
# Dask worker's warm-up and its first chunk, both in the run's folder, lost it ("no such file").
_THREAD = threading.local()
_OPEN: list[Path] = []  # the folders of the blocks open in any thread, oldest first
_OPEN_LOCK = threading.Lock()


def _found_in() -> Path | None:
    """The folder ``agents_found_in`` set for this thread, or for the process; None: none."""
    own: Path | None = getattr(_THREAD, "folder", None)
    if own is not None:
        return own
    with _OPEN_LOCK:
        return _OPEN[-1] if _OPEN else None


def agent_folder() -> Path:
    """The folder in which a ``py:`` file or module and an ``exec:`` command named relative to
    it are found (an ``exec:`` engine runs in it): the current folder, or a run's own."""
    folder = _found_in()
    if folder is not None:
        return folder
    try:
        return Path.cwd()
    except OSError:  # the current folder was removed: relative names find nothing
        return Path(".")


@contextmanager
def agents_found_in(folder: str | Path | None) -> Iterator[None]:
    """Find the outside agents named relative to ``folder`` while the block runs (None: no
    change). A run records the folder it was started in, and its resume, replay and cluster
    workers find its agents there, wherever they are run from: ``py:mine.py:Mine`` was "no such
    file mine.py" from another folder, and a resume blamed other code for it."""
    if folder is None:
        yield
        return
    path, before = Path(folder), getattr(_THREAD, "folder", None)
    _THREAD.folder = path
    with _OPEN_LOCK:
        _OPEN.append(path)
    try:
        yield
    finally:
        _THREAD.folder = before
        with _OPEN_LOCK:
            _OPEN.remove(path)  # this block's entry: another thread's open block keeps its own


def _where_found(relative: str) -> str:
    """``relative`` as a message names it: with the folder it was looked for in, if not this one."""
    folder = _found_in()
    if folder is None or Path(relative).expanduser().is_absolute():
        return relative
    return f"{relative} in {folder}"


# ---------------------------------------------------------------- loading, once per process
_Key = tuple[ExternalSpec, EngineOptions, Path]
_DECIDERS: dict[_Key, Decider] = {}
# each one's file when loaded: its stamp (``_file_stamp``, cheap to compare) and bytes' digest
_FILES: dict[_Key, tuple[tuple[str, int, int] | None, str | None]] = {}


def _agent_file(spec: ExternalSpec) -> Path | None:
    """The file of a ``py:`` spec that names one (``mine.py:Mine``), None for a module or other kinds."""
    where = spec.target.rpartition(":")[0]
    if spec.kind != PY or not (where.endswith(".py") or os.sep in where or "/" in where):
        return None
    return agent_folder() / Path(where).expanduser()  # an absolute path stays itself


def found_from_anywhere(text: str) -> tuple[str, str | None]:
    """``text`` (any agent spec) as a file kept apart from the folder it was named in (a level
    written by ``tune``) must write it to be found from any folder: a ``py:`` file named relative
    to ``agent_folder`` by its absolute path. With what the spec still takes from that folder, in
    words (a module found there, an ``exec:`` command run there), or None."""
    if not is_external(text):
        return text, None
    spec = parse_external(text)
    folder = agent_folder()
    if spec.kind == EXEC:  # a word of the command that is a file here (./engine, engine.py)
        words = [word for word in shlex.split(spec.target) if not word.startswith("-")]
        files = [word for word in words if not Path(word).is_absolute() and _exists(folder / word)]
        return text, f"its exec: command names {files[0]}, found in {folder} only" if files else None
    path = _agent_file(spec)
    if path is None:  # a module: installed, or beside the folder (found from it only)
        module = spec.target.rpartition(":")[0]
        if _module_file(module, [str(folder)]) is None:
            return text, None
        return text, f"its module {module} is found from {folder} only (elsewhere: on PYTHONPATH)"
    body = text.strip()[len("py:") :]
    where = _PY_TARGET.match(body)
    assert where is not None  # parsed above
    absolute = os.path.normpath(path.absolute())
    return f"py:{body[: where.start('where')]}{absolute}{body[where.end('where') :]}", None


def _exists(path: Path) -> bool:
    """Whether ``path`` names a file or folder; False for a word no file can be named (a name
    part over 255 bytes, a NUL), where ``exists`` raised."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def file_problem(spec: ExternalSpec) -> str | None:
    """Why the file of a ``py:`` spec cannot be read here, in one line (None: it can, or the spec
    names none)."""
    path = _agent_file(spec)
    if path is None:
        return None
    where = spec.target.rpartition(":")[0]
    if not path.is_file():
        return f"{spec.text}: no such file {_where_found(where)}"
    try:
        with path.open("rb"):
            return None
    except OSError as error:
        return f"{spec.text}: cannot read {_where_found(where)}: {error.strerror or error}"


def source_bytes(spec: ExternalSpec) -> bytes:
    """What of an external agent's code a process can see: for a ``py:`` agent the sources of
    its module and of the modules of its own it imports (``_agent_sources``: a helper beside it,
    edited, changes how it plays; the file alone was read, so a run resumed after such an edit
    mixed two programs in its records); nothing for a command or an object, or a module that
    cannot be found (``code_unseen``)."""
    sources = _agent_sources(spec) if spec.kind == PY else []
    return b"".join(disk_bytes(name) + b"\0" + source + b"\0" for name, source in sources)


def code_unseen(spec: ExternalSpec) -> bool:
    """Whether a process cannot see the code of an outside agent, so that a resume cannot check it
    plays as it did: an engine's command, an object passed from Python, a module not found."""
    return spec.kind != PY or not _agent_sources(spec)


def _agent_sources(spec: ExternalSpec) -> list[tuple[str, bytes]]:
    """The sources of a ``py:`` agent's module (first, unnamed) and of the modules of its own it
    imports, at the top or inside a function (``import helper``, ``from .util import pick``), and
    theirs in turn, sorted by name. Read from the files, importing nothing: the same code gives
    the same sources before and during play, whatever was imported first and wherever its
    dependencies can be imported. Its own: found in its file's folder, the agent folder, or its
    top-level package (an installed one too), never another installed package or Python's."""
    where = spec.target.rpartition(":")[0]
    path = _agent_file(spec)
    folders = [str(agent_folder())]
    first: Path | None
    if path is not None:
        first, package = path, None
        folders.insert(0, str(path.resolve().parent))
    else:
        first = _module_file(where, [*folders, *sys.path])
        package = where.split(".")[0]
    if first is None or not first.is_file():
        return []
    found: dict[Path, str] = {}
    stack = [(first, where if path is None else "")]
    while stack:
        file, name = stack.pop()
        if file in found:
            continue
        found[file] = name
        for imported in _imported_names(file, name):
            top = imported.split(".")[0]
            search = [*folders, *(sys.path if top == package else [])]  # its own package's, wherever
            for candidate in (imported, imported.rpartition(".")[0]):  # a module, or the package of a name
                module_file = _module_file(candidate, search) if candidate else None
                if module_file is not None:
                    stack.append((module_file, candidate))
                    break
    sources = []
    for file, name in sorted(found.items(), key=lambda item: (item[0] != first, item[1])):
        try:
            sources.append(("" if file == first else name, file.read_bytes()))
        except OSError:
            sources.append((name, b"?"))
    return sources


def _module_file(name: str, search: list[str]) -> Path | None:
    """The source file of module ``name`` (dotted) found on ``search`` without importing it (a
    package's ``__init__.py``); None where it is not there, or is no Python source."""
    from importlib.machinery import PathFinder

    parts, found, locations = name.split("."), None, search
    for depth in range(1, len(parts) + 1):
        try:
            found = PathFinder.find_spec(".".join(parts[:depth]), locations)
        except (ImportError, ValueError):
            return None
        if found is None or (depth < len(parts) and not found.submodule_search_locations):
            return None
        locations = list(found.submodule_search_locations or [])
    origin = getattr(found, "origin", None)
    return Path(origin) if isinstance(origin, str) and origin.endswith(".py") else None


def _imported_names(file: Path, module: str) -> list[str]:
    """The modules ``file`` (of module ``module``; "" for an agent file) imports anywhere in it,
    relative imports resolved, with the names ``from X import a`` takes as possible modules X.a."""
    try:
        tree = ast.parse(file.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package up (none above the top)
                parts = package.split(".") if package else []
                if node.level > len(parts):
                    continue
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            if base:
                names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"] or [base]
    return names


def _file_stamp(spec: ExternalSpec) -> tuple[str, int, int] | None:
    """Which file a ``py:`` spec names, when and how large it was last written (None: no file,
    or none named)."""
    path = _agent_file(spec)
    if path is None:
        return None
    try:
        status = path.stat()
    except OSError:
        return None
    return str(path), status.st_mtime_ns, status.st_size


def decider(spec: ExternalSpec, options: EngineOptions) -> Decider:
    """The decider of an external agent in this process (started once, kept for later chunks; a
    ``py:`` file changed since is loaded again: a long-lived Dask worker played the old code),
    but not within a run of this thread that has used it (``code_held``): there the change
    stops the run. A file written again with the same bytes (``touch``, a checkout) is no change."""
    key = (spec, options, agent_folder())
    stamp = _file_stamp(spec)
    loaded_stamp, loaded_digest = _FILES.get(key, (None, None))
    if key in _DECIDERS and loaded_stamp != stamp:
        if (digest := _file_digest(spec)) == loaded_digest:
            _FILES[key] = stamp, digest  # the same code
        elif any(key in used for used in _runs_held()):
            file = _agent_file(spec)
            raise ExternalAgentError(
                f"agent {spec.text}: {file} changed during the run, which stops here, every record of "
                "the code it began with (put that code back to resume it, or play it again in a new folder)"
            )
        else:
            getattr(_DECIDERS.pop(key), "close", lambda: None)()
    for used in _runs_held():
        used.add(key)
    if key not in _DECIDERS:
        _FILES[key] = stamp, _file_digest(spec)
        if spec.kind == EXEC:
            _DECIDERS[key] = EngineDecider(spec.target, spec.text, options)
        else:
            with agent_prints_to_stderr():  # its import and construction too
                agent = spec.instance if spec.kind == OBJECT else load_python_agent(spec)
            _DECIDERS[key] = PythonDecider(agent, spec.text, options.timeout)
    return _DECIDERS[key]


def _file_digest(spec: ExternalSpec) -> str | None:
    """The SHA-256 of a ``py:`` spec's file (None: no file, or none named)."""
    path = _agent_file(spec)
    try:
        return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


_HELD = threading.local()  # per thread: the deciders each of its runs in progress has used


def _runs_held() -> list[set[Any]]:
    """This thread's runs in progress (``code_held``), each with the deciders it has used: a Dask
    worker plays chunks of other runs on its other threads, which may load the file anew."""
    runs: list[set[Any]] = _HELD.__dict__.setdefault("runs", [])
    return runs


@contextmanager
def code_held() -> Iterator[None]:
    """During the block (a run's chunks in this process), a ``py:`` agent file that the run has
    played and that changes stops it (``decider``), where it was loaded again: a match went on
    with the edited code, its records of two programs, exit code 0."""
    used: set[Any] = set()
    _runs_held().append(used)
    try:
        yield
    finally:
        _runs_held().remove(used)


def load_python_agent(spec: ExternalSpec) -> Any:
    """Import the module or file of a ``py:`` spec and instantiate its class with the arguments."""
    where, _, name = spec.target.rpartition(":")
    module = _agent_module(spec)
    cls = getattr(module, name, None)
    if cls is None:
        raise AgentError(f"{spec.text}: {where} has no {name}")
    try:
        return cls(**dict(spec.kwargs))
    except AGENT_FAILURES as error:
        raise AgentError(f"{spec.text}: {name}(...) failed: {type(error).__name__}: {error}") from None


def _agent_module(spec: ExternalSpec) -> ModuleType:
    """The module of a ``py:`` spec, imported once: a file's with its own folder first on the path
    while it is imported (as ``python mine.py`` runs it: ``from helper import pick`` beside it
    failed under the command line), a module's as ``python -m`` finds it in the agent's folder."""
    where = spec.target.rpartition(":")[0]
    path = _agent_file(spec)
    if path is None:
        with _first_on_path(agent_folder()):
            try:
                return importlib.import_module(where)
            except AGENT_FAILURES as error:
                failure = f"{type(error).__name__}: {error}"
                raise AgentError(f"{spec.text}: cannot import {_where_found(where)}: {failure}") from None
    problem = file_problem(spec)
    if problem is not None:
        raise AgentError(problem)
    # one module per file and contents: a file changed since it was imported is imported anew
    source = disk_bytes(path.resolve()) + b"\0" + path.read_bytes()
    module_name = f"hearts_sim_agent_{hashlib.sha1(source).hexdigest()[:12]}"
    module = sys.modules.get(module_name)
    if module is not None:
        return module
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise AgentError(f"{spec.text}: cannot import {where}")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    try:
        with _first_on_path(path.resolve().parent):
            loader_spec.loader.exec_module(module)
    except AGENT_FAILURES as error:
        del sys.modules[module_name]
        failure = f"{type(error).__name__}: {error}"
        raise AgentError(f"{spec.text}: importing {where} failed: {failure}") from None
    return module


@contextmanager
def _first_on_path(folder: Path) -> Iterator[None]:
    """``folder`` first on ``sys.path`` while the block runs (where it was not there already)."""
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added:
            sys.path.remove(entry)


def external_moves(
    spec: ExternalSpec,
    observations: list[Any],
    passing: bool,
    seeds: list[int],
    hand_seeds: list[int],
    rules: Rules,
    options: EngineOptions,
    where: Callable[[int], str],
) -> list[int]:
    """The moves an external agent makes in ``observations`` (one batch, with the loop's decision
    seeds), each checked: cards, or pass bitboards. Whatever goes wrong is an
    ``ExternalAgentError`` naming the agent and, by ``where(i)``, the position."""
    try:
        answers = decider(spec, options).decide(observations, passing, seeds, hand_seeds)
    except ExternalAgentError as error:  # at the position it failed on (it said the batch's first)
        raise located(error, len(observations), where) from None
    except AgentError:  # the agent cannot be loaded (a file since removed): the caller says where
        raise
    except PositionFailed as failure:  # the agent's own code failed on one position
        # from the agent's own error: in Python, the traceback shows the line of its code that raised
        raise ExternalAgentError(
            f"agent {spec}: raised {failure} ({where(failure.index)})"
        ) from failure.__cause__
    except AGENT_FAILURES as error:  # the agent's own code failed on a batch
        raise batch_failed(spec, error, len(observations), where) from agent_cause(error)
    if len(answers) != len(observations):
        raise ExternalAgentError(
            f"agent {spec}: {len(answers)} moves for {len(observations)} positions ({where(0)})"
        )
    return [
        _checked(answer, observation, rules, passing, spec, partial(where, i))
        for i, (observation, answer) in enumerate(zip(observations, answers, strict=True))
    ]


def located(error: ExternalAgentError, positions: int, where: Callable[[int], str]) -> ExternalAgentError:
    """``error`` with the position it failed on (``where``), or a batch's first where none is known."""
    return ExternalAgentError(f"{error} ({_position(error.position, positions, where)})")


def _position(position: int | None, positions: int, where: Callable[[int], str]) -> str:
    """Where a failure happened: at ``position`` of the batch, or (None) in a batch of
    ``positions``, named by its first."""
    if position is not None or positions == 1:
        return where(position or 0)
    return f"a batch of {positions} positions, the first: {where(0)}"


def batch_failed(
    spec: Any, error: BaseException, positions: int, where: Callable[[int], str]
) -> ExternalAgentError:
    """The one line for an agent whose own code raised ``error`` deciding a batch of positions
    (raise it ``from agent_cause(error)``)."""
    what = error if isinstance(error, AnswerRefused) else f"raised {type(error).__name__}: {one_line(error)}"
    return ExternalAgentError(f"agent {spec}: {what} ({_position(None, positions, where)})")


def agent_cause(error: BaseException) -> BaseException | None:
    """What an agent's failure is raised from: the agent's own error, whose traceback shows the
    line of its code that raised, or None where the toolkit's checks refused its answer
    (``AnswerRefused``: the one line says it all, the toolkit's frames would only hide it)."""
    return None if isinstance(error, AnswerRefused) else error


def _checked(
    answer: Any, observation: Any, rules: Rules, passing: bool, spec: ExternalSpec, where: Callable[[], str]
) -> int:
    """An agent's move as a card (or pass bitboard), refused unless the rules allow it; ``where``
    names the position (built only for an error)."""
    if (
        not passing
        and type(answer) is int
        and 0 <= answer < N_CARDS
        and observation.legal_moves().mask >> answer & 1
    ):
        return answer  # the common case, checked without parsing
    if passing:
        try:
            items = iter(answer)
        except TypeError:
            raise ExternalAgentError(
                f"agent {spec} passed {shown(answer)}, not a list of cards ({where()})"
            ) from None
        try:  # read as far as one card past the deck: itertools.cycle(hand) was read for ever
            listed = list(islice(items, N_CARDS + 1))
        except Exception as error:  # a generator that raised as it was read: a traceback, exit 1
            raise ExternalAgentError(
                f"agent {spec}: its pass raised {type(error).__name__}: {one_line(error)} as it was "
                f"read ({where()})"
            ) from error
        if len(listed) > N_CARDS:
            raise ExternalAgentError(f"agent {spec} passed more than {N_CARDS} cards ({where()})")
        try:
            cards = [parse_card(c) for c in listed]
        except (TypeError, ValueError):
            raise ExternalAgentError(
                f"agent {spec} passed {shown(answer)}, not a list of cards ({where()})"
            ) from None
        mask = sum(1 << c for c in set(cards))
        if len(cards) != rules.pass_count or mask.bit_count() != rules.pass_count:
            hint = "" if cards else " of its hand (legal_moves() lists cards to play: none while passing)"
            raise ExternalAgentError(
                f"agent {spec} passed {' '.join(map(card_str, cards)) or 'nothing'}: "
                f"pass {rules.pass_count} different cards{hint} ({where()})"
            )
        if mask & ~observation.hand.mask:
            stray = card_str(cards_of(mask & ~observation.hand.mask)[0])
            raise ExternalAgentError(f"agent {spec} passed {stray}, which it does not hold ({where()})")
        return mask
    try:
        card = parse_card(answer)
    except (TypeError, ValueError):
        raise ExternalAgentError(f"agent {spec} played {shown(answer)}, not a card ({where()})") from None
    legal = observation.legal_moves()
    if not legal.mask >> card & 1:
        raise ExternalAgentError(
            f"agent {spec} played {card_str(card)}, not legal now "
            f"(legal: {cards_str(legal.mask)}) ({where()})"
        )
    return card


def close_all() -> None:
    """Stop every engine process and thread this process started."""
    _FILES.clear()
    while _DECIDERS:
        _, running = _DECIDERS.popitem()
        getattr(running, "close", lambda: None)()


def _forget_in_child() -> None:
    """A forked child (the move server's worker, a fork-started pool) has none of its parent's
    threads, so the parent's deciders (a thread pool each, or the pipe of an engine the parent
    started and stops) would hang or cross there: the child starts its own."""
    _DECIDERS.clear()


atexit.register(close_all)
if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork: every command died importing this
    os.register_at_fork(after_in_child=_forget_in_child)
