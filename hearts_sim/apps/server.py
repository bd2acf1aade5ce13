"""``hearts-sim serve``: one agent answering move requests, one JSON object per line, on
stdin/stdout or on a local TCP port. Stateless: every request carries the whole history.

Request (one line)::

    {"id": 7, "rules": "standard", "seat": 2, "hand": ["QS", ...], "pass_direction": "left",
     "passed": ["AS", "KS", "QS"], "received": ["2H", "3H", "4H"],
     "plays": [[0, "2C"], [1, "KC"]], "scores": [0, 0, 0, 0], "seed": 12345}

``hand`` is the seat's dealt hand; ``plays`` every card played so far, in order, with who
played it. Optional: ``rules`` (a preset name, or an object of switches over the server's
rules, with an optional ``"preset"``), ``passed``/``received`` (empty while the seat is to
pass), ``scores`` (game scores before this hand), ``points`` (each seat's points this hand;
needed in kitty mode once another seat took the kitty), ``kitty`` (its cards, when this seat
took it), ``dealer``, and ``seed``: the hand seed, with which the answer equals the batched
loop's decision for a hand dealt from that seed. Without it the hand seed is derived from
the server's ``--seed``, the seat and its dealt cards.

Answer: ``{"id": 7, "pass": ["AS", "KS", "QS"], "ms": 0.8}`` while passing,
``{"id": 7, "play": "QS", "ms": 0.6}`` while playing (``ms``: time spent on the request), or
``{"id": 7, "error": "..."}`` for a malformed request, an impossible history or a seat that is
not to move; the server then goes on with the next line. Blank lines are skipped. An agent that
fails is answered ``AGENT_FAILED``, its error written to stderr (``_logged``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from multiprocessing.connection import Connection, Pipe
from typing import IO, Any, Protocol

from agents.api import Agent, load
from agents.external import close_all
from agents.kinds import AgentError
from agents.registry import tuned_for_other_rules
from hearts_sim.apps.options import COUNT, NUMBER, RULE, RULES, SEED, TEXT, Option, UsageError
from hearts_sim.apps.script import said_if_slow
from hearts_sim.core.cards import CardSet, card_str, cards_str
from hearts_sim.core.checks import counted, did_you_mean, is_integer, is_real, one_line, shown
from hearts_sim.core.errors import Terminated, interrupts_deferred
from hearts_sim.core.rules import (
    Rules,
    RulesError,
    pass_direction_cycle,
    resolve_rules,
)
from hearts_sim.game.hand_state import IllegalMoveError
from hearts_sim.game.observation import HistoryError, Observation
from hearts_sim.game.protocol import FIELDS

MAX_LINE = 64 * 1024  # bytes per request line; a longer line gets an error answer
TIME_LIMIT = 10.0  # seconds per request
IDLE_TIMEOUT = 600.0  # seconds a TCP connection may stay silent before it is closed
LINE_TIMEOUT = 60.0  # seconds a TCP request line may take from its first byte to its newline
MAX_CONNECTIONS = 64  # TCP connections served at once (each holds a thread and a worker process)
BACKLOG = 512  # connections the kernel queues while the server accepts (socketserver's default: 5)
_TOO_LONG = object()  # what _read_line returns for a line over the limit


class RequestError(ValueError):
    """A request the server cannot answer; the message is sent back as ``error``."""


class MoveServer:
    """The protocol without the transport: a request line in, an answer line out, never raising.

    Holds only configuration (agent, default rules, seed, limits): no state passes from one
    request to the next, so answers do not depend on the order of requests."""

    def __init__(
        self,
        agent: Agent | str,
        rules: Rules | str = "standard",
        seed: int = 0,
        time_limit: float | None = TIME_LIMIT,
        max_line: int = MAX_LINE,
    ):
        self.agent = agent if isinstance(agent, Agent) else load(agent, seed=seed)
        self.rules = resolve_rules(rules)
        if time_limit is not None and (
            not is_real(time_limit) or not math.isfinite(time_limit) or time_limit < 0
        ):
            raise ValueError(
                f"time_limit={shown(time_limit)}: give seconds (a finite number >= 0; 0 or None: no limit)"
            )
        # a limit ends the worker process of a late decision: without fork() there is none
        self.time_limit = float(time_limit) if time_limit and hasattr(os, "fork") else None
        if not is_integer(max_line) or max_line <= 0:
            raise ValueError(f"max_line={shown(max_line)}: give a positive number of bytes")
        self.max_line = int(max_line)

    def warm_up(self) -> None:
        """Load or compile every kernel before the first request, those of ``explain`` too
        (prints nothing). An agent failing there says so: its error named a seat of no request."""
        try:
            self.agent.warm_up(self.rules, explain=True)
        except AgentError as error:  # its kind and its cause (the agent's own error) kept
            said = f"{error}; in the warm-up before serving (a hand dealt by seed 0)"
            raise type(error)(said) from error.__cause__

    # ------------------------------------------------------------------ one request
    def decide(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer's move part (``pass`` or ``play``); raises on a bad request."""
        unknown = sorted(set(request) - set(FIELDS))
        if unknown:
            known = ", ".join(FIELDS)
            raise RequestError(
                f"unknown field {unknown[0]!r} (known: {known}){did_you_mean(unknown[0], FIELDS)}"
            )
        rules = self._rules(request.get("rules"))
        for name in ("seat", "hand"):
            if request.get(name) is None:
                raise RequestError(f"missing field {name!r}")
        direction = request.get("pass_direction")
        if direction is None:
            if pass_direction_cycle(rules) != ("none",):
                raise RequestError("missing field 'pass_direction' (left, right, across or none)")
            direction = "none"
        if not isinstance(direction, str):
            raise RequestError(f"pass_direction must be a string, not {shown(direction)}")
        seed = request.get("seed")
        if seed is not None and (not is_integer(seed) or not 0 <= seed < 2**64):
            raise RequestError(f"seed must be an integer in 0 .. 2**64-1, not {shown(seed)}")
        explain = request.get("explain", False)
        if not isinstance(explain, bool):
            raise RequestError(f"explain must be true or false, not {shown(explain)}")
        observation = Observation.from_history(
            rules,
            seat=request["seat"],
            hand=_card_list(request["hand"], "hand"),
            pass_direction=direction,
            passed=_card_list(request.get("passed") or [], "passed"),
            received=_card_list(request.get("received") or [], "received"),
            plays=_list(request.get("plays") or [], "plays"),
            scores=_optional_list(request.get("scores"), "scores"),
            points=_optional_list(request.get("points"), "points"),
            kitty=_card_list(request["kitty"], "kitty") if request.get("kitty") else None,
            dealer=request.get("dealer"),
        )
        if request.get("legal") is not None:
            _check_legal(observation, _card_list(request["legal"], "legal"))
        if explain:
            return self._explained(observation, seed)
        move = self.agent.act(observation, hand_seed=seed)
        if isinstance(move, list):
            return {"pass": [card_str(c) for c in move]}
        return {"play": card_str(move)}

    def _explained(self, observation: Observation, seed: int | None) -> dict[str, Any]:
        """The move and what the search weighed: each legal card (``Agent.card_values``) or
        candidate pass (``Agent.pass_values``), best first, with its mean points and playouts."""
        passing = observation.phase == "pass"
        if not (self.agent.scores_passes if passing else self.agent.scores_cards):
            what = "passes without scoring its passes" if passing else "plays without scoring its cards"
            raise RequestError(
                f"explain: {self.agent.name} {what}; serve a search agent (hard, mc, ...) to explain it"
            )
        if passing:
            table = self.agent.pass_values(observation, hand_seed=seed)
            moves = [{"pass": cards.split()} for cards in table["cards"]]
        else:
            table = self.agent.card_values(observation, hand_seed=seed)
            moves = [{"card": card} for card in table["card"]]
        values = [
            {
                **move,
                "points": None if math.isnan(points) else round(float(points), 3),
                "playouts": int(weight),
            }
            for move, points, weight in zip(moves, table["points"], table["weight"], strict=True)
        ]
        chosen = moves[int(table["chosen"].to_numpy().argmax())]
        move = {"pass": chosen["pass"]} if passing else {"play": chosen["card"]}
        return {**move, "values": values}

    def _rules(self, value: Any) -> Rules:
        if value is None:
            return self.rules
        if isinstance(value, str):
            return _preset(value)
        if isinstance(value, dict):
            return _rules_from(json.dumps(value, sort_keys=True), self.rules)
        raise RequestError(f"rules must be a preset name or an object of switches, not {shown(value)}")

    def answer(self, line: bytes | str, runner: Runner | None = None) -> dict[str, Any]:
        """The answer object for one request line. Never raises: every failure is an ``error``."""
        started = time.perf_counter()
        request_id = None
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            request = json.loads(text, parse_constant=_not_json, parse_float=_finite, parse_int=_whole)
            if not isinstance(request, dict):
                raise RequestError("a request must be a JSON object")
            request_id = request.get("id")
            if isinstance(request_id, str) and not _unicode(request_id):  # echoed, strict parsers refused it
                request_id = None
                raise RequestError("id holds a lone surrogate (\\ud800 ...): not a Unicode string")
            move = runner.run(request) if runner else self.decide(request)
        except UnicodeDecodeError:
            return {"id": None, "error": "the request is not valid UTF-8"}
        except json.JSONDecodeError as error:
            return {"id": None, "error": f"malformed JSON: {error}"}
        except RecursionError:  # 20,000 nested arrays: an internal error, until 2026-12-06
            return {"id": None, "error": "malformed JSON: nested too deeply"}
        except (RequestError, HistoryError, IllegalMoveError, RulesError) as error:
            return {"id": request_id, "error": str(error)}
        except TimeLimitExceeded as error:
            return {"id": request_id, "error": str(error)}
        except ZygoteLost:
            return {"id": request_id, "error": "the server cannot start a worker and is stopping"}
        except AgentError as error:
            return {"id": request_id, "error": _logged(request_id, str(error))}
        except WorkerDied as error:  # it read "internal error: RuntimeError: ..." and named no agent
            return {"id": request_id, "error": _logged(request_id, f"agent {self.agent.name}: {error}")}
        except Exception as error:  # never die on input: report and go on
            return {"id": request_id, "error": f"internal error: {type(error).__name__}: {error}"}
        return {"id": request_id, **move, "ms": round((time.perf_counter() - started) * 1e3, 3)}

    def runner(self, zygote: Zygote | None = None) -> Runner | None:
        """What runs this server's decisions under its time limit (None: no limit), its workers
        forked by ``zygote`` if given, else from this process."""
        return Runner(self.decide, self.time_limit, zygote) if self.time_limit is not None else None

    def reply(self, line: bytes | object, runner: Runner | None = None) -> bytes | None:
        """The answer line (with its newline) for what ``read_line`` returned; None for a blank line."""
        if line is _TOO_LONG:
            answer: dict[str, Any] = {"id": None, "error": f"request longer than {self.max_line} bytes"}
        else:
            assert isinstance(line, bytes)
            if not line.strip():
                return None
            answer = self.answer(line, runner)
        try:
            text = json.dumps(answer, separators=(",", ":"), allow_nan=False)
        except ValueError:  # every parsed value is finite: this guards the answers we build
            text = json.dumps({"id": None, "error": "internal error: an answer that is not valid JSON"})
        return (text + "\n").encode()


AGENT_FAILED = "the agent failed on this request; the server's log says why"


def _logged(request_id: Any, message: str) -> str:
    """The answer to a request the agent failed on: ``AGENT_FAILED``, the full ``message`` on the
    server's stderr. An engine's failure names its command and quotes its stderr, which may hold
    what a client must not see (a token in its arguments, a password in its last words): until
    2026-12-07 a client read them in the answer. A local run (a tournament) keeps the details."""
    shown_id = one_line(json.dumps(request_id, ensure_ascii=True), 60)  # the client's: one line
    print(f"hearts-sim serve: request id {shown_id}: {message}", file=sys.stderr, flush=True)
    return AGENT_FAILED


def _whole(text: str) -> int:
    """A JSON integer; ``RequestError`` for one past Python's 4,300 digits (an internal error)."""
    try:
        return int(text)
    except ValueError:
        raise RequestError(f"a number of {len(text):,} digits is no value a request holds") from None


def _unicode(text: str) -> bool:
    """Whether ``text`` is a Unicode string (no lone surrogate, which JSON's escapes can carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _not_json(constant: str) -> Any:
    raise RequestError(f"{constant} is not JSON (numbers must be finite)")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise RequestError(f"{text} is out of range for a JSON number")
    return value


@lru_cache(maxsize=64)
def _preset(name: str) -> Rules:
    try:  # a preset, or any text the server writes rules as (its "ready" line's label)
        return Rules.parse(name)
    except RulesError as error:
        raise RequestError(str(error)) from None


@lru_cache(maxsize=256)
def _rules_from(switches_json: str, default: Rules) -> Rules:
    """Rules from a request's ``rules`` object: ``preset`` (else the server's rules) plus switches."""
    switches = json.loads(switches_json)
    preset = switches.pop("preset", None)
    base = default if preset is None else _preset(preset) if isinstance(preset, str) else None
    if base is None:
        raise RequestError(f"rules: preset must be a preset name, not {shown(preset)}")
    return base.replace(**switches)


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise RequestError(f"{name} must be a list, not {shown(value)}")
    return value


def _optional_list(value: Any, name: str) -> list[Any] | None:
    return None if value is None else _list(value, name)


def _check_legal(observation: Observation, legal: list[Any] | str) -> None:
    """A request's ``legal`` (optional) must be the cards the seat may play: a client whose rules
    or history differ from the server's finds out here, not from a move made under other rules."""
    try:
        given = CardSet(legal)
    except (TypeError, ValueError) as error:
        raise RequestError(f"legal: {error}") from None
    allowed = observation.legal_moves()
    if given != allowed:
        if allowed:
            may = f"may play {cards_str(allowed.mask)}"
        elif observation.phase == "play":  # it said "is to play, not to play"
            may = "is not to move"
        else:
            may = f"is to {observation.phase}, not to play"
        raise RequestError(
            f"legal lists {cards_str(given.mask) or 'no card'}, but under the request's rules and "
            f"history seat {observation.seat} {may}"
        )


def _card_list(value: Any, name: str) -> list[Any] | str:
    if isinstance(value, str):
        return value
    return [c for c in _list(value, name)]


# ---------------------------------------------------------------- time limits
class TimeLimitExceeded(RuntimeError):
    """A request ran past the server's time limit."""


class WorkerDied(RuntimeError):
    """The worker process deciding a request ended without an answer (its agent called
    ``os._exit``, or native code crashed): the agent's failure, not the server's."""


class Runner:
    """Calls ``function`` on one request at a time in a worker process, giving up after ``limit`` s.

    Numba code cannot be interrupted, but a process can be ended: the worker is forked from a
    process that has loaded the kernels (so it starts warm): this one, or a ``Zygote`` of it
    where this one runs threads. When a call runs past the limit the worker is killed and
    reaped, with its process group: an ``exec:`` engine it started, stuck on the request, ends
    with it (it ran on after the server exited, one per timed-out request, until 2026-12-06); the
    next call forks a fresh one. Nothing keeps running after a timeout: no thread, no process.
    Exceptions come back as raised.
    """

    def __init__(self, function: Callable[[Any], Any], limit: float, zygote: Zygote | None = None):
        assert zygote is None or zygote.function == function, "a zygote's workers run its own function"
        self.function = function
        self.limit = limit
        self.zygote = zygote
        self._child: tuple[int, Connection] | None = None

    def run(self, argument: Any) -> Any:
        pid, connection = self._child or self._start()
        connection.send(argument)
        if not connection.poll(self.limit):
            self.close()
            raise TimeLimitExceeded(f"no answer within the time limit of {self.limit:g} s")
        try:
            ok, value = connection.recv()
        except (EOFError, OSError):
            self.close()
            raise WorkerDied("the process deciding it ended without an answer (os._exit? a crash?)") from None
        if not ok:
            raise value
        return value

    def _start(self) -> tuple[int, Connection]:
        with interrupts_deferred():  # a stop as it forks comes once the worker is recorded (``_fork_child``)
            self._child = self.zygote.spawn() if self.zygote is not None else _fork_worker(self.function)
        return self._child

    def close(self) -> None:
        """End the worker, whatever it is doing, and reap it."""
        child, self._child = self._child, None  # one swap: a server's stop and its connection's end
        if child is not None:  # may close it at once (the check then the read raced)
            pid, connection = child
            connection.close()
            try:
                os.killpg(pid, signal.SIGKILL)  # the worker and what it started: its process group
            except (ProcessLookupError, PermissionError):  # not a group leader (yet): the worker alone
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _fork_worker(function: Callable[[Any], Any]) -> tuple[int, Connection]:
    """A worker forked from this process: its pid, and our end of its pipe."""
    ours, theirs = Pipe()
    pid = _fork_child(theirs.fileno(), lambda: _work_in_own_group(function, theirs))  # until the pipe closes
    with contextlib.suppress(OSError):  # set on both sides, so it holds before either goes on
        os.setpgid(pid, pid)
    theirs.close()
    return pid, ours


def _fork_child(keep: int, body: Callable[[], None]) -> int:
    """Fork a child that holds descriptor ``keep`` of ours (and stderr) and runs ``body``, then
    exits: it never returns into the server. Returns its pid.

    Called with Ctrl-C and SIGTERM held (``interrupts_deferred``) until the caller has recorded
    the child: one that fell during the fork was raised inside an at-fork callback Python runs
    (``logging``'s), printed as "Exception ignored" and lost, and the server served on; and one
    delivered before the pid was kept left the child unreaped. The child takes Python's own
    handlers back (it never leaves the caller's block, where the signals are held for the parent)."""
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # a zygote's children inherit its SIG_IGN
            _detach(keep)
            body()
        finally:
            os._exit(0)
    return pid


class Zygote:
    """A one-thread copy of the warmed-up server that forks the time-limited workers for it.

    A fork copies one thread and every lock: forked from a server whose other threads serve
    other connections (``TCPServer``), a worker may inherit a lock one of them held mid-decision
    (numba's compiler lock, an allocator's) and wait on it until the time limit ends it. So the
    TCP server forks this process once, before it starts a thread, and asks it for each worker:
    the worker is forked from a process with one thread, and its pipe comes back over a Unix
    socket (``socket.send_fds``). The zygote reaps its workers as they end. (Python 3.12+ still
    warns once, at the zygote's own fork: numpy's BLAS and pyarrow start idle native threads on
    import, which the warning counts.)
    """

    def __init__(self, function: Callable[[Any], Any], on_lost: Callable[[str], None] | None = None):
        self.function = function
        self.on_lost = on_lost  # told why, where a zygote that exited cannot be replaced
        self._lock = threading.Lock()  # one spawn at a time: connections ask from their threads
        self._start()

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # the zygote: fork a worker per request until the server closes the socket
        with interrupts_deferred():  # a stop as it forks comes once it is recorded (``_fork_child``)
            try:
                pid = _fork_child(theirs.fileno(), lambda: _spawn_workers(self.function, theirs))
            except OSError:
                ours.close()
                raise
            finally:
                theirs.close()
            self.pid, self._control = pid, ours

    def spawn(self) -> tuple[int, Connection]:
        """A fresh worker: its pid, and the server's end of its pipe. A zygote that has exited (the
        out-of-memory killer ends the largest process) is replaced, once, saying so on stderr:
        until 2026-12-07 every later request read "internal error: ... zygote has exited" while
        the port still took connections. One that cannot be replaced raises ``ZygoteLost``."""
        with self._lock:
            child = self._ask()
            if child is None:
                child = self._replace()
        return child

    def _ask(self) -> tuple[int, Connection] | None:
        try:
            self._control.sendall(b"F")
            message, fds, _, _ = socket.recv_fds(self._control, 32, 1)
        except OSError:
            return None
        if not fds:
            return None
        return int(message), Connection(fds[0])

    def _replace(self) -> tuple[int, Connection]:
        """A worker from a new zygote, the one that stopped answering reaped; ``ZygoteLost`` (and
        ``on_lost`` told) where the new one cannot start or answer. The server forking it runs
        threads, but they only read, parse and pass on requests: the locks a decision takes
        (numba's compiler's) are not theirs to hold."""
        old, self.pid = self.pid, 0  # reaped here: never signalled again (its number may be reused)
        self._control.close()
        how = "its replacement could not start"  # old is 0: a replacement that failed before
        if old > 0:
            with contextlib.suppress(ProcessLookupError):  # gone already: its exit status stands
                os.kill(old, signal.SIGKILL)
            try:
                _, status = os.waitpid(old, 0)
                how = _exit_status(status)
            except ChildProcessError:
                how = "reaped elsewhere"
        print(
            f"hearts-sim serve: the worker zygote (pid {old}) exited ({how}; the out-of-memory killer?); "
            "starting a new one",
            file=sys.stderr,
            flush=True,
        )
        child = None
        with contextlib.suppress(OSError):
            self._start()
            child = self._ask()
        if child is None:
            why = f"the server's worker zygote exited ({how}) and a new one could not start"
            if self.on_lost is not None:
                self.on_lost(why)
            raise ZygoteLost(why)
        return child

    def close(self) -> None:
        """End the zygote (its workers end as their pipes close) and reap it."""
        self._control.close()
        if self.pid > 0:  # 0: reaped by ``_replace``, whose replacement failed (waitpid(0) waits for any)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)


class ZygoteLost(RuntimeError):
    """The worker zygote exited and no new one could start: the server cannot answer and stops."""


def _exit_status(status: int) -> str:
    """A ``waitpid`` status in words: ``killed by SIGKILL``, ``exit code 1``."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _spawn_workers(function: Callable[[Any], Any], control: socket.socket) -> None:
    """The zygote's loop: a worker forked for each byte the server sends."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped as they end
    while control.recv(1):
        with interrupts_deferred():  # (``_fork_child``)
            pid, pipe = _fork_worker(function)
        socket.send_fds(control, [str(pid).encode()], [pipe.fileno()])
        pipe.close()


def _detach(keep: int) -> None:
    """In a fresh worker: hold no descriptor of the server's but the worker's own pipe and
    stderr, so that a client's connection (or stdout) closes when the server closes it."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.closerange(3, keep)
    os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))


def _work_in_own_group(function: Callable[[Any], Any], connection: Connection) -> None:
    """``_work`` in a process group of the worker's own, which ``Runner.close`` ends whole; the
    engines it started are stopped when its pipe closes (its exit is ``os._exit``, which runs no
    ``atexit``)."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    try:
        _work(function, connection)
    finally:
        close_all()


def _work(function: Callable[[Any], Any], connection: Connection) -> None:
    """A worker's loop: (True, result) or (False, exception) for each argument received."""
    while True:
        try:
            argument = connection.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[bool, Any] = (True, function(argument))
        except Exception as error:
            answer = (False, error)
        try:
            connection.send(answer)
        except (OSError, ValueError):
            return
        except Exception as error:  # an exception that does not pickle: send its words
            connection.send((False, RuntimeError(f"{type(answer[1]).__name__}: {error}")))


# ---------------------------------------------------------------- transports
class _Lines(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


def read_line(stream: _Lines, limit: int) -> bytes | object | None:
    """One line of at most ``limit`` bytes (newline not counted); ``_TOO_LONG`` after skipping
    the rest of a longer line; None at the end of the stream."""
    line = stream.readline(limit + 1)
    if not line:
        return None
    if len(line) > limit and not line.endswith(b"\n"):
        while (rest := stream.readline(limit + 1)) and not rest.endswith(b"\n"):
            pass
        return _TOO_LONG
    return line


def serve_stdio(server: MoveServer, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Answer every line of ``stdin`` on ``stdout`` until the end of input."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    runner = server.runner()
    try:
        while (line := read_line(stdin, server.max_line)) is not None:
            reply = server.reply(line, runner)
            if reply is not None:
                stdout.write(reply)
                stdout.flush()
    except BrokenPipeError:  # the reader went away (``serve | head -1``): nothing left to answer
        pass
    finally:
        if runner is not None:
            runner.close()


class LineTimeout(TimeoutError):
    """A TCP client began a request line and did not end it within the server's line timeout."""


class _SocketLines:
    """A TCP client's request lines, read with two clocks: ``idle`` seconds for a line's first
    byte (from the connection's start or the last line that was not blank, so blank lines keep
    nothing open), and ``line`` seconds from a line's first byte to its newline (``LineTimeout``).
    A socket's own timeout is per ``recv``: a client sending a byte every few seconds and never
    ending a line held its connection, thread and worker for ever (until 2026-12-07)."""

    def __init__(self, connection: socket.socket, idle: float, line: float):
        self.connection, self.idle, self.line = connection, idle, line
        self.buffer = b""
        self.started: float | None = None  # when the line being read got its first byte
        self.idle_since: float | None = time.monotonic()  # None: from the next wait on

    def readline(self, size: int = -1, /) -> bytes:
        """Up to and including the next newline, at most ``size`` bytes; b"" at the end."""
        if self.idle_since is None:
            self.idle_since = time.monotonic()
        limit = len(self.buffer) + (1 << 62) if size < 0 else size
        while True:
            newline = self.buffer.find(b"\n", 0, limit)
            if newline >= 0:
                line, self.buffer = self.buffer[: newline + 1], self.buffer[newline + 1 :]
                self.started = time.monotonic() if self.buffer else None  # the next line's bytes came
                if line.strip():
                    self.idle_since = None
                return line
            if len(self.buffer) >= limit:  # part of a longer line: its clock goes on
                line, self.buffer = self.buffer[:limit], self.buffer[limit:]
                return line
            chunk = self._receive()
            if not chunk:
                line, self.buffer = self.buffer, b""
                return line
            if self.started is None:
                self.started = time.monotonic()
            self.buffer += chunk

    def _receive(self) -> bytes:
        now = time.monotonic()
        late = LineTimeout(f"request line not ended within {self.line:g} s of its first byte")
        if self.started is not None:
            left = self.started + self.line - now
            if left <= 0:
                raise late
        else:
            assert self.idle_since is not None
            left = self.idle_since + self.idle - now
            if left <= 0:
                raise TimeoutError("silent past the idle timeout")
        self.connection.settimeout(left)
        try:
            return self.connection.recv(1 << 16)
        except TimeoutError:
            if self.started is not None:
                raise late from None
            raise
        finally:
            self.connection.settimeout(self.idle)  # writing an answer: as long as a silence may last


class _Connection(socketserver.StreamRequestHandler):
    """One TCP client: line-delimited requests until it closes, stays silent too long, or takes
    too long over a line (``_SocketLines``)."""

    timeout = IDLE_TIMEOUT  # until the first read; then the server's, set by ``_SocketLines``

    def handle(self) -> None:
        tcp: TCPServer = self.server  # type: ignore[assignment]
        server = tcp.move_server
        runner = server.runner(tcp.zygote)
        if runner is not None:
            tcp.runners.add(runner)
        lines = _SocketLines(self.connection, tcp.idle_timeout, tcp.line_timeout)
        try:
            while (line := read_line(lines, server.max_line)) is not None:
                reply = server.reply(line, runner)
                if reply is not None:
                    self.wfile.write(reply)
        except LineTimeout as error:  # a client holding a line open: told why, then closed
            _say_and_end(self.connection, f"{error}: connection closed")
        except OSError:  # the client went away, or its silence ran past the idle timeout
            pass
        finally:
            if runner is not None:
                tcp.runners.discard(runner)
                runner.close()


def _say_and_end(connection: socket.socket, message: str) -> None:
    """Send ``message`` as the error answer of no request and end the connection's sending, without
    blocking (the line fits an idle send buffer); what the client sent and was not read is read
    and dropped, which a close would answer with a reset that could lose the line."""
    line = json.dumps({"id": None, "error": message}, separators=(",", ":")) + "\n"
    with contextlib.suppress(OSError):
        connection.setblocking(False)
        connection.sendall(line.encode())
        connection.shutdown(socket.SHUT_WR)
        while connection.recv(1 << 16):
            pass


class TCPServer(socketserver.ThreadingTCPServer):
    """A thread per connection, bound to 127.0.0.1 only; with a time limit, the workers come from
    a ``Zygote`` forked when serving starts (after the warm-up, before any thread).

    At most ``max_connections`` are served at once: one more is answered one error line and
    closed (300 clients held 302 processes, about 1 GB, until 2026-12-07). A connection is closed
    after ``idle_timeout`` s without a request, or once a request line has taken ``line_timeout``
    s from its first byte."""

    daemon_threads = True
    # SO_REUSEADDR on Windows lets a second server bind a taken port (and share its connections)
    allow_reuse_address = sys.platform != "win32"
    request_queue_size = BACKLOG

    def __init__(
        self,
        move_server: MoveServer,
        port: int,
        host: str = "127.0.0.1",
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = IDLE_TIMEOUT,
        line_timeout: float = LINE_TIMEOUT,
    ):
        self.move_server = move_server
        self.zygote: Zygote | None = None
        self.runners: set[Runner] = set()  # the open connections' workers (a set's add is atomic)
        self.max_connections = max_connections
        self.idle_timeout, self.line_timeout = idle_timeout, line_timeout
        self.failure: str | None = None  # why it stopped on its own (its zygote lost): exit code 1
        self._slots = threading.BoundedSemaphore(max_connections)  # one a connection being served
        super().__init__((host, port), _Connection)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a thread of its own, or, past ``max_connections``, refuse it."""
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: its slot is free again
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        """One error line and the end of the connection, without blocking the accepting thread
        (a fresh connection's send buffer takes the line at once)."""
        busy = (
            f"the server is busy: {counted(self.max_connections, 'connection')} "
            f"{'is' if self.max_connections == 1 else 'are'} open, its limit "
            "(--max-connections); try again later"
        )
        _say_and_end(request, busy)
        request.close()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        if self.zygote is None and self.move_server.time_limit is not None:
            self.zygote = Zygote(self.move_server.decide, on_lost=self._lost)
        super().serve_forever(poll_interval)

    def _lost(self, why: str) -> None:
        """Stop serving (from a connection's thread): a server that can answer no request should
        exit, non-zero, for its supervisor to start it again, not keep taking connections."""
        self.failure = why
        threading.Thread(target=self.shutdown, daemon=True).start()

    def server_close(self) -> None:
        """Stop serving, ending the workers of the connections still open: their threads are
        daemons, which never reached their own ``close``, so a worker deciding when SIGTERM came
        lived on, its parent gone, for the rest of its decision."""
        super().server_close()
        for runner in list(self.runners):
            runner.close()
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None

    @property
    def port(self) -> int:
        return int(self.server_address[1])


# ---------------------------------------------------------------- command line
SERVE_OPTIONS = (
    Option(
        "agent",
        TEXT,
        "the agent that answers, required: a spec or level name (e.g. rule, hard)",
        flags=("--agent",),
        metavar="SPEC",
    ),
    replace(RULES, help="rules preset when a request names none"),
    RULE,
    Option(
        "seed",
        SEED.kind,
        "derives the hand seed of requests that carry no 'seed'",
        0,
        0,
        SEED.high,
        ("--seed",),
        high_text=SEED.high_text,
    ),
    Option(
        "port",
        COUNT,
        "serve on 127.0.0.1:PORT instead of stdin/stdout (0: any free port)",
        None,
        0,
        65535,
        ("--port",),
    ),
    Option("time_limit", NUMBER, "seconds per request (0: none)", TIME_LIMIT, 0, 86_400, ("--time-limit",)),
    Option("max_line", COUNT, "bytes per request line", MAX_LINE, 1, 64 * 1024 * 1024, ("--max-line",)),
    Option(
        "max_connections",
        COUNT,
        f"with --port: TCP connections served at once (default {MAX_CONNECTIONS}); one more gets an "
        "error line and is closed",
        None,
        1,
        4096,
        ("--max-connections",),
    ),
)


WARM_UP_NOTICE_SECONDS = 2.0  # a warm-up longer than this says what it is doing


def _warm_up_saying_so(server: MoveServer) -> None:
    """The server's warm-up, with a line on stderr once it has taken ``WARM_UP_NOTICE_SECONDS``:
    a first run compiles the agent's kernels, and ``serve --agent normal`` said nothing for a
    minute before ``ready``. The timer's thread is gone before serving forks its zygote."""
    said_if_slow(
        server.warm_up,
        f"hearts-sim serve: warming up {server.agent.name}: loading its kernels, or compiling them on "
        "a first run (one time, a minute or more)",
        WARM_UP_NOTICE_SECONDS,
    )


def serve_command(args: argparse.Namespace) -> int:
    """Run ``hearts-sim serve``: bind (TCP), warm up, say so on stderr, answer until EOF (stdin)
    or Ctrl-C (TCP). Returns the exit code."""
    if not args.agent:
        raise UsageError("serve needs --agent SPEC (an agent spec or a level name)")
    if args.max_connections is not None and args.port is None:  # it was ignored in silence
        raise UsageError("--max-connections counts the connections of --port: add --port PORT")
    rules = resolve_rules(args.rules).with_strings(args.rule)
    for line in tuned_for_other_rules([args.agent], rules):
        print(f"hearts-sim serve: warning: {line}", file=sys.stderr)
    server = MoveServer(
        load(args.agent, seed=args.seed), rules, time_limit=args.time_limit, max_line=args.max_line
    )
    tcp = None
    if args.port is not None:
        try:
            # bound before warming up: a taken port fails fast
            tcp = TCPServer(server, args.port, max_connections=args.max_connections or MAX_CONNECTIONS)
        except (OSError, OverflowError) as error:
            reason = getattr(error, "strerror", None) or error
            raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {reason}") from None
    if args.time_limit and server.time_limit is None:  # dropped without a word: a hung agent hung it
        print(
            f"hearts-sim serve: warning: no fork() here (Windows): --time-limit {args.time_limit:g} is not "
            "enforced, and an agent that hangs hangs the server",
            file=sys.stderr,
        )
    _warm_up_saying_so(server)
    where = "stdin/stdout" if tcp is None else f"127.0.0.1:{tcp.port}"
    ready = f"hearts-sim serve: ready ({server.agent.name}, {rules.label()}, {where})"
    if tcp is None:
        print(ready, file=sys.stderr, flush=True)
        serve_stdio(server)
        return 0
    try:
        print(ready, file=sys.stderr, flush=True)  # within: a signal at once stops it as later
        tcp.serve_forever()
        if tcp.failure is not None:
            print(f"hearts-sim serve: stopped: {tcp.failure}", file=sys.stderr, flush=True)
            return 1
    except KeyboardInterrupt as stop:  # its way to stop: exit code 0, as a service manager expects,
        signalled = "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"  # and a line saying so
        print(f"hearts-sim serve: stopped ({signalled})", file=sys.stderr, flush=True)
    finally:
        tcp.server_close()
    return 0
