"""Agents decided outside the compiled loop: Python objects, ``py:`` classes, ``exec:`` engines.

The same tables as the built-in agents: a pure-Python ``lowest`` gives records bit-identical to
the built-in one (alone and beside compiled agents, hands and games), an engine running
``hearts-sim serve --agent rule`` plays exactly as ``rule``, batching changes nothing, the
observation holds nothing the seat cannot know, and every failure stops the run with one line,
the finished chunks kept and a resume identical to an uninterrupted run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from agents.external import EngineOptions, ExternalAgentError, close_all
from agents.kinds import AgentError
from hearts_sim import Rules, simulate, simulate_games
from hearts_sim.engine.observe import OBSERVED, observe
from hearts_sim.engine.sampler import sample_world
from hearts_sim.engine.state import new_states
from hearts_sim.game.hand_state import HandState
from hearts_sim.game.observation import observations_from
from hearts_sim.game.protocol import request_for
from hearts_sim.selfplay.simulate import Table, run_hands
from hearts_sim.studies.tournament import (
    TournamentConfig,
    TournamentError,
    UncheckedAgentWarning,
    resume_tournament,
    run_tournament,
)

try:
    from tests import python_agents
    from tests.signals import ends_within
except ImportError:  # tests/ itself on sys.path
    import python_agents  # type: ignore[no-redef]
    from signals import ends_within  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "tests" / "python_agents.py"
LOWEST = f"py:{AGENTS}:Lowest"
SERVE = f"exec:{shlex.quote(sys.executable)} -m hearts_sim serve"
FAST = EngineOptions(procs=2, timeout=60.0)


def _same_records(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column but the agents' names."""
    return frame[[c for c in frame.columns if not c.startswith("agent_")]].reset_index(drop=True)


@pytest.mark.parametrize("preset", ["standard", "qdan3", "qdan5", "black_maria", "omnibus"])
def test_a_python_lowest_gives_the_built_in_records_alone_and_mixed(preset: str) -> None:
    n = Rules.preset(preset).n_players
    for seating in (["lowest"] * 5, ["lowest", "rule", "random", "lowest", "highest"]):
        seats = seating[:n]
        ours = Table.build(preset, [[LOWEST if s == "lowest" else s for s in seats]])
        theirs = Table.build(preset, [seats])
        _same_records(run_hands(ours, 7, 0, 300), run_hands(theirs, 7, 0, 300))


def test_a_python_lowest_in_a_duplicate_tournament_and_in_games(tmp_path: Path) -> None:
    ours = run_tournament(
        TournamentConfig((LOWEST, "rule"), deals=60, seed=3), tmp_path / "py", progress=False
    )
    theirs = run_tournament(
        TournamentConfig(("lowest", "rule"), deals=60, seed=3), tmp_path / "nb", progress=False
    )
    a, b = (pd.read_parquet(d / "records") for d in (tmp_path / "py", tmp_path / "nb"))
    pd.testing.assert_frame_equal(_outcomes(a), _outcomes(b))
    assert ours.summary["pairs"][0]["a_minus_b"] == theirs.summary["pairs"][0]["a_minus_b"]
    games, hands = simulate_games("quick", [LOWEST, "random", "rule", "lowest"], games=30, seed=5, hands=True)
    expected, expected_hands = simulate_games(
        "quick", ["lowest", "random", "rule", "lowest"], games=30, seed=5, hands=True
    )
    pd.testing.assert_frame_equal(_outcomes(games), _outcomes(expected))
    pd.testing.assert_frame_equal(_outcomes(hands), _outcomes(expected_hands))  # lockstep keeps every hand
    assert len(hands) == games["hands"].sum()
    for name, agent in (("py_games", LOWEST), ("nb_games", "lowest")):  # chunks after the first too
        config = TournamentConfig(
            (agent, "rule"), Rules.preset("quick"), deals=3, seed=4, games=True, chunk_deals=1
        )
        run_tournament(config, tmp_path / name, progress=False)
    a, b = (pd.read_parquet(tmp_path / d / "hands") for d in ("py_games", "nb_games"))
    pd.testing.assert_frame_equal(_outcomes(a), _outcomes(b))


def test_an_object_passed_in_python_sits_at_the_table_and_act_batch_changes_nothing() -> None:
    batched = python_agents.BatchLowest()
    one_by_one = simulate("standard", [python_agents.Lowest(), "random", "rule", "random"], hands=400, seed=2)
    in_batches = simulate("standard", [batched, "random", "rule", "random"], hands=400, seed=2)
    pd.testing.assert_frame_equal(_outcomes(one_by_one), _outcomes(in_batches))
    assert max(batched.batches) > 50  # positions of many hands in one call


class _PlaysOnly:
    def choose_play(self, obs: object) -> int:
        return 0


def test_an_object_that_is_no_agent_is_told_what_an_agent_needs() -> None:
    """An object with neither method was "an agent spec must be a non-empty string"."""
    spec = r"is neither an agent spec \(a string such as 'rule'\)"
    with pytest.raises(AgentError, match=spec + r" nor an agent \(an object with choose_pass and"):
        simulate("standard", [object(), "random", "random", "random"], hands=1)
    needs = r"has no choose_pass method \(an agent needs choose_pass and choose_play, or act_batch\)"
    with pytest.raises(AgentError, match=needs):
        simulate("standard", [_PlaysOnly(), "random", "random", "random"], hands=1)


def test_a_run_of_an_object_agent_keeps_records_and_resumes_from_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An object passed from Python is recorded by its name (the manifest is JSON: before, writing
    it raised TypeError): the run keeps records, an interruption says to resume from Python, the
    command line's --resume says the same in one line, and the resumed run equals one in a go."""
    from hearts_sim.apps.cli import main
    from hearts_sim.studies.tournament import Interrupted

    agent = python_agents.Lowest()
    agent.lock = threading.Lock()  # type: ignore[attr-defined]  # an object that cannot be copied
    config = TournamentConfig((agent, "rule"), deals=40, seed=3, chunk_deals=10)
    with pytest.raises(Interrupted, match=r"resume with: run_tournament\(config, .*resume=True\)"):
        run_tournament(config, tmp_path / "run", progress=False, stop_after_chunks=2)
    assert main(["tournament", "--resume", str(tmp_path / "run")]) == 2
    assert "was played by py:Lowest, an agent object passed from Python" in capsys.readouterr().err
    with pytest.warns(UncheckedAgentWarning, match="py:Lowest goes on unchecked, its code out of sight"):
        resumed = run_tournament(config, tmp_path / "run", progress=False, resume=True)
    whole = run_tournament(
        TournamentConfig((agent, "rule"), deals=40, seed=3, chunk_deals=10), None, progress=False
    )
    assert resumed.summary == whole.summary
    records = pd.read_parquet(tmp_path / "run" / "records")
    assert len(records) == 40 * 14 and set(records["agent_0"].astype(str)) == {"py:Lowest", "rule"}


def test_a_failure_in_a_run_of_games_names_the_hand_of_the_game(tmp_path: Path) -> None:
    """An agent failing in a game's later hand was placed by its game, seating and seat only:
    which of the game's hands (``replay --game G --hand H``) was left to find."""
    agents_file = tmp_path / "late.py"
    agents_file.write_text(
        "class Late:\n"
        "    def choose_pass(self, obs):\n"
        "        return sorted(obs.hand)[: obs.rules.pass_count]\n"
        "    def choose_play(self, obs):\n"
        "        if any(obs.game_scores):\n"
        "            raise RuntimeError('a later hand')\n"
        "        return min(obs.legal_moves())\n"
    )
    config = TournamentConfig(
        (f"py:{agents_file}:Late", "random"), rules=Rules.preset("quick"), deals=1, seed=2, games=True
    )
    with pytest.raises(
        ExternalAgentError, match=r"raised RuntimeError: a later hand \(game 0, hand 1, seating "
    ):
        run_tournament(config, None, progress=False)


def test_an_object_is_recorded_as_an_object_whatever_its_name(tmp_path: Path) -> None:
    """An object's ``name`` was its label as it was: ``agents.load("rule")`` (whose name is its
    spec) was recorded as the built-in ``rule``, and the command line's resume played that, then
    refused it as other code; a name with a colon read back as a ``py:`` file."""
    from agents.api import load
    from hearts_sim.studies.tournament import Interrupted, load_manifest

    class Named(python_agents.Lowest):
        name = "mine:v2 (beta)"

    config = TournamentConfig((load("rule", seed=4), Named(), "random"), deals=4, seed=3, chunk_deals=2)
    assert [spec.name for spec in config.specs()] == ["py:rule", "py:mine_v2_beta", "random"]
    with pytest.raises(Interrupted, match=r"resume with: run_tournament\(config, "):
        run_tournament(config, tmp_path / "run", progress=False, stop_after_chunks=1)
    assert load_manifest(tmp_path / "run")["config"]["agents"] == ["py:rule", "py:mine_v2_beta", "random"]
    with pytest.raises(TournamentError, match="was played by py:rule, an agent object passed from Python"):
        resume_tournament(tmp_path / "run", progress=False)


def test_an_object_given_again_stands_for_its_label_as_recorded_before(tmp_path: Path) -> None:
    """A run recorded an object by its ``name`` as it was (``careful``, until 2026-12-07): given
    again, the object stands for that label too, where the run read as a level not found."""
    from hearts_sim.studies.tournament import manifest_config

    class Careful(python_agents.Lowest):
        name = "careful"

    agent = Careful()
    config = TournamentConfig((agent, "random"), deals=4, seed=3, chunk_deals=2)
    recorded = {"config": {**config.to_dict(), "agents": ["careful", "random"]}}
    assert manifest_config(tmp_path, recorded, given=config).agents == (agent, "random")


def test_a_full_disk_during_a_run_of_an_object_agent_says_to_resume_from_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from hearts_sim.core.errors import StorageError
    from hearts_sim.studies import tournament

    write = tournament.write_atomically

    def full_after_one_part(path: Path, data: bytes) -> None:
        if path.name == "part-000001.parquet":
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, data)

    monkeypatch.setattr(tournament, "write_atomically", full_after_one_part)
    config = TournamentConfig((python_agents.Lowest(), "rule"), deals=30, seed=3, chunk_deals=10)
    with pytest.raises(StorageError, match=r"1 of 3 chunks are saved; resume with: run_tournament\(config, "):
        run_tournament(config, tmp_path / "run", progress=False)


def test_a_seeded_python_agent_is_reproducible_and_seeds_differ_by_decision() -> None:
    spec = f"py:{AGENTS}:SeededRandom"
    first = simulate("qdan3", spec, hands=200, seed=11)
    again = simulate("qdan3", spec, hands=200, seed=11)
    other = simulate("qdan3", spec, hands=200, seed=12)
    pd.testing.assert_frame_equal(first, again)
    assert not first["points_0"].equals(other["points_0"])
    assert first["points_0"].nunique() > 3


def test_an_engine_speaking_the_serve_protocol_plays_exactly_as_the_built_in_agent(tmp_path: Path) -> None:
    """In a duplicate match, with two engine processes; the hand seed makes serve decide as the loop."""
    engines = EngineOptions(procs=2, timeout=120)
    config = TournamentConfig((f"{SERVE} --agent rule", "lowest"), deals=3, seed=4)
    ours = run_tournament(config, tmp_path / "exec", progress=False, engines=engines)
    theirs = run_tournament(
        TournamentConfig(("rule", "lowest"), deals=3, seed=4), tmp_path / "nb", progress=False
    )
    a, b = (pd.read_parquet(d / "records") for d in (tmp_path / "exec", tmp_path / "nb"))
    pd.testing.assert_frame_equal(_outcomes(a), _outcomes(b))
    assert ours.summary["pairs"][0]["a_minus_b"] == theirs.summary["pairs"][0]["a_minus_b"]
    close_all()


def test_the_example_engine_and_agent_of_the_readme_play_legal_hearts() -> None:
    engine = f"exec:{shlex.quote(sys.executable)} {ROOT / 'experiments' / 'example_engine.py'}"
    frame = simulate("standard", [engine, "random", "random", "random"], hands=40, seed=1)
    expected = simulate(
        "standard", ["pass=lowest,play=lowest", "random", "random", "random"], hands=40, seed=1
    )
    pd.testing.assert_frame_equal(
        _outcomes(frame).drop(columns=["passed_0"]), _outcomes(expected).drop(columns=["passed_0"])
    )
    ducker = simulate(
        "standard",
        [f"py:{ROOT / 'experiments' / 'example_agent.py'}:Ducker", "rule", "rule", "rule"],
        hands=100,
        seed=1,
    )
    assert (ducker[[f"points_{s}" for s in range(4)]].sum(axis=1) == 26).all()
    close_all()


def test_no_peeking_the_observation_holds_only_the_information_set() -> None:
    """Re-dealing the cards a seat cannot see, consistently with what it knows, leaves its
    observation (every field) unchanged."""
    rows = np.zeros(2, dtype=OBSERVED)
    worlds = new_states(1)
    checked = 0
    for hand in range(60):
        state = HandState.deal("standard", seed=9, hand=hand)
        if state.phase == "pass":
            for seat in range(4):
                state.pass_cards(seat, sorted(state.hand(seat))[:3])
        while state.phase == "play":
            seat = int(state.current_player)  # type: ignore[arg-type]
            if len(state.plays) % 7 == 3:
                rules = state.rules.to_tuple()
                observe(state.record, rules, seat, rows[0])
                sample_world(state.record, rules, seat, np.uint64(hand * 131 + seat), worlds[0])
                assert worlds[0]["hands"].tolist() != state.record["hands"].tolist() or len(state.plays) > 40
                observe(worlds[0], rules, seat, rows[1])
                assert rows[0].tobytes() == rows[1].tobytes()
                a, b = observations_from(rows, state.rules)
                assert a == b and a.legal_moves() == b.legal_moves() == state.legal_moves()
                assert a == state.observation(seat)
                checked += 1
            state.play(min(state.legal_moves()))
    assert checked > 200


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (f"py:{AGENTS}:Raises", "raised RuntimeError: the model is not loaded (deal "),
        (f"py:{AGENTS}:Exits", "raised SystemExit: 3 (deal "),  # the command ended silently, exit code 3
        (f"py:{AGENTS}:Illegal", "not legal now (legal: 2C)"),  # the cards written one way
        (  # it read "raised TypeError: 'NoneType' object is not iterable", the toolkit's own error
            f"py:{AGENTS}:BatchAnswersNone",
            "act_batch answered None, not a list of moves (deal 3, seating 0, seat 0, playing)",
        ),
        (  # it read "did not decide within 30 s", at once
            f"py:{AGENTS}:BatchTimesOut",
            "raised TimeoutError: the model server did not answer (deal ",
        ),
        (f"py:{AGENTS}:PassesTwo", "passed KS QH: pass 3 different cards ("),
        # a traceback, exit 1; for ever; a traceback from the message's own repr; a message over lines
        (
            f"py:{AGENTS}:PassesBrokenGenerator",
            "its pass raised RuntimeError: the generator broke as it was read (deal ",
        ),
        (f"py:{AGENTS}:PassesForEver", "passed more than 52 cards (deal "),
        (  # its own TypeError, read as "not a list of cards", the agent's error dropped
            f"py:{AGENTS}:PassesRaisingTypeError",
            "its pass raised TypeError: a bug in the agent as it was read (deal ",
        ),
        (f"py:{AGENTS}:BatchForEver", "act_batch answered more moves than its 1 position (deal "),
        (f"py:{AGENTS}:PlaysUnprintable", "played a Unprintable whose repr raised, not a card (deal "),
        (
            f"py:{AGENTS}:RaisesOverLines",
            "raised RuntimeError: the model is not loaded: File model.py, line 3 load() (deal ",
        ),
        (
            f"py:{AGENTS}:PassesLegal",
            "passed nothing: pass 3 different cards of its hand (legal_moves() lists cards to play",
        ),
        ("py:no_such_module:Agent", "cannot import no_such_module"),
        (f"py:{AGENTS}:Nope", "has no Nope"),
        (  # the request it died on quoted, as the README says (until 2026-12-06 it was not)
            f"exec:{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)'",
            'the engine has exited (exit code 3), at request {"id":0,"seat":',
        ),
        (
            f"exec:{shlex.quote(sys.executable)} -c 'import os; import time; os.close(1); time.sleep(60)'",
            'the engine closed its output, at request {"id":0,',  # it was "has exited", alive
        ),
        (
            f"""exec:{shlex.quote(sys.executable)} -c 'input(); print("{{\\"id\\": 7, \\"pass\\": []}}")'""",
            'answered id 7, not 0, to request {"id":0,',
        ),
        (  # as JSON, as the README says bad answers are quoted: it was '0', Python's
            f"exec:{shlex.quote(sys.executable)} -c "
            + shlex.quote('import json; input(); print(json.dumps({"id": "0"}))'),
            'answered id "0", not 0, to request {"id":0,',
        ),
        (f"exec:{shlex.quote(sys.executable)} -c 'print(\"hello\")'", "answered 'hello', not a JSON object"),
        ("exec:/no/such/engine", "cannot start"),
    ],
)
def test_every_failure_is_one_clear_error(spec: str, message: str) -> None:
    with pytest.raises(AgentError) as caught:
        simulate("standard", [spec, "random", "random", "random"], hands=4, seed=0)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    if "python_agents" in spec and not spec.endswith(("Nope", "None")):  # where it happened
        assert re.search(r"\((deal \d+, seating \d+, seat \d+, (playing|passing))\)$", str(caught.value))
    if spec.endswith(":Raises"):  # from its own error: the traceback shows the agent's line that raised
        cause = caught.value.__cause__
        assert isinstance(cause, RuntimeError)
        assert traceback.extract_tb(cause.__traceback__)[-1].name == "choose_play"
    close_all()


def test_an_engine_that_answered_and_exited_before_the_request_is_read_for_its_answer() -> None:
    """An engine that writes a line and exits: on a busy machine it had exited before the first
    request was written, and the broken pipe said "the engine has exited", where its line was
    there to be read (and refused as no JSON object): the suite failed so, now and then, until
    2026-12-08. Here it has surely exited first."""
    from agents.external import Engine

    engine = Engine(f"{shlex.quote(sys.executable)} -c 'print(\"hello\")'", "hello")
    engine.process.wait(timeout=60)
    time.sleep(0.1)  # and its pipe's reading end is closed
    engine.send({"id": 0})
    assert engine.read_line() == b"hello"
    silent = Engine(f"{shlex.quote(sys.executable)} -c 'pass'", "silent")
    silent.process.wait(timeout=60)
    with pytest.raises(ExternalAgentError, match=r"agent silent: the engine has exited \(exit code 0\)"):
        silent.send({"id": 0})


def test_agents_and_engines_that_hang_time_out() -> None:
    with pytest.raises(ExternalAgentError, match="did not decide within 0.5 s"):
        simulate(
            "standard",
            [f"py:{AGENTS}:Sleeps(seconds=5)", "random", "random", "random"],
            hands=1,
            engine_timeout=0.5,
        )
    # one slow decision among many: the limit of a batch of them, pooled, let it through
    with pytest.raises(
        ExternalAgentError, match=r"did not decide within 0.5 s \(deal \d+, seating 0, seat 0"
    ):
        simulate("standard", [f"py:{AGENTS}:SleepsOnce(seconds=1.5)"] * 4, hands=64, engine_timeout=0.5)
    hang = f"exec:{shlex.quote(sys.executable)} -c 'import time; time.sleep(60)'"
    with pytest.raises(ExternalAgentError, match="no answer within"):
        from agents import external

        old, external.FIRST_ANSWER_GRACE = external.FIRST_ANSWER_GRACE, 1.0
        try:
            simulate("standard", [hang, "random", "random", "random"], hands=1, engine_timeout=0.5)
        finally:
            external.FIRST_ANSWER_GRACE = old
    close_all()


def _engine(code: str) -> str:
    """``exec:`` of a Python engine given as its code."""
    return f"exec:{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def test_an_agent_that_cannot_load_says_so_before_any_compile_notice(tmp_path: Path) -> None:
    """With an empty numba cache (a fresh clone: CI), ``match py:missing.py:Mine random`` said
    "compiling the kernels ... (one time, about 20 s)" and then that the file is missing."""
    refused = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "match", "py:missing.py:Mine", "random", "--deals", "1"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cold"), "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == ["hearts-sim: error: py:missing.py:Mine: no such file missing.py"]


def test_an_engines_command_keeps_its_commas_quotes_and_brackets() -> None:
    """An engine's command runs to the end of the spec: ``exec:python -c 'import sys, time'`` was
    split at its comma and refused as a malformed pass=/play= combination; a bracket of its own
    was "unbalanced parentheses"."""
    from agents.registry import parse_agent

    for command in ("python -c 'import sys, time'", "engine --weights a,b", "engine ':)'"):
        assert parse_agent(f"exec:{command}").name == f"exec:{command}"
    for spec, roles in (
        ("pass=rule,play=exec:engine --weights a,b", ("rule", "exec:engine --weights a,b")),
        ("pass=exec:engine --weights a,b,play=rule", ("exec:engine --weights a,b", "rule")),
        ("play=exec:b --x 1,2,pass=exec:a", ("exec:a", "exec:b --x 1,2")),
    ):
        combined = parse_agent(spec)
        assert (str(combined.pass_policy), str(combined.play_policy)) == roles
        assert parse_agent(combined.name) == combined  # its name, as records keep it, reads back
    with pytest.raises(AgentError, match="malformed agent spec"):
        parse_agent("rule,exec:engine")  # a part without its role is still refused


def test_an_engine_writing_without_end_or_newline_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that answers with bytes without end, never a newline, was read for ever: its
    ``--engine-timeout`` never came, its buffer grew, each read rescanning it."""
    flood = _engine("import sys\ninput()\nwhile True: sys.stdout.write('x' * 65536); sys.stdout.flush()")
    with pytest.raises(ExternalAgentError, match=r"wrote [\d,]+ bytes without ending a line"):
        simulate("standard", [flood, "random", "random", "random"], hands=1, engine_timeout=5)
    trickle = _engine(
        "import sys, time\ninput()\nwhile True: sys.stdout.write('x'); sys.stdout.flush(); time.sleep(0.01)"
    )
    from agents import external

    monkeypatch.setattr(external, "FIRST_ANSWER_GRACE", 1.0)  # its first answer's grace is minutes
    with pytest.raises(ExternalAgentError, match=r"no answer within 1 s \(a first answer: 1 s at least\)"):
        simulate("standard", [trickle, "random", "random", "random"], hands=1, engine_timeout=0.5)
    close_all()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_an_engine_started_through_a_wrapper_is_ended_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killing a timed-out engine killed the wrapper alone (``exec:bash -c 'python eng.py; true'``,
    a script without ``exec``): the engine lived on, its parent gone, deciding for nobody."""
    pid_file = tmp_path / "engine.pid"
    inner = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); input(); time.sleep(60)"
    wrapped = f"exec:bash -c {shlex.quote(f'{shlex.quote(sys.executable)} -c {shlex.quote(inner)}; true')}"
    from agents import external

    monkeypatch.setattr(external, "FIRST_ANSWER_GRACE", 1.0)
    with pytest.raises(ExternalAgentError, match="no answer within"):
        simulate("standard", [wrapped, "random", "random", "random"], hands=1, engine_timeout=0.5)
    assert ends_within(int(pid_file.read_text())), "the engine behind the wrapper is still running"
    close_all()


def test_an_engines_last_words_are_its_last_stderr_line_however_much_it_wrote() -> None:
    """Its last stderr line, quoted when it dies, is read from the end of what it wrote: the whole
    file was read and decoded, 1.7 GB for an engine that wrote 1 MiB a request."""
    chatty = _engine("import sys\nsys.stderr.write('noise\\n' * 100_000 + 'out of memory\\n')\nsys.exit(5)")
    with pytest.raises(ExternalAgentError, match=r"exited \(exit code 5\); its last words: out of memory"):
        simulate("standard", [chatty, "random", "random", "random"], hands=1)
    close_all()


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc")
def test_an_engines_stderr_takes_no_disk_past_its_tail() -> None:
    """An engine's stderr went to a temporary file (deleted, held open) without limit: one writing
    400 MB a request filled 4 GB of disk in 25 s. Only the tail its last words come from is kept,
    in memory: after 32 MiB on stderr no file this process holds has grown, and an engine that
    then dies is still quoted."""
    noise = "import sys\nsys.stderr.write(('e' * 1023 + '\\n') * 32768)\nsys.stderr.flush()\n"
    answers = "import json\nfor line in sys.stdin:\n    r = json.loads(line)\n"
    answers += "    move = {'play': r['legal'][0]} if 'legal' in r else {'pass': r['hand'][:3]}\n"
    answers += "    print(json.dumps({'id': r['id'], **move}), flush=True)\n"

    def held_bytes() -> int:
        """The size of the deleted files this process holds open (a temporary file's)."""
        total = 0
        for fd in Path("/proc/self/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd).endswith("(deleted)"):
                    total += os.stat(fd).st_size
        return total

    before = held_bytes()
    assert len(simulate("standard", [_engine(noise + answers), "random", "random", "random"], hands=1)) == 1
    assert held_bytes() - before < 1 << 20
    close_all()
    dies = _engine(noise + "sys.stderr.write('out of memory\\n')\nsys.exit(5)")
    with pytest.raises(ExternalAgentError, match=r"exited \(exit code 5\); its last words: out of memory"):
        simulate("standard", [dies, "random", "random", "random"], hands=1)
    close_all()


def test_a_py_agent_file_changed_since_it_was_loaded_is_loaded_again(tmp_path: Path) -> None:
    """A long-lived process (a Dask worker) kept the first version of a ``py:`` file it loaded
    and played it after the file changed: a researcher's edit gave the old numbers, exit code 0.
    A file written since is imported anew, and a class added to it is found."""
    agent = tmp_path / "mine.py"
    lowest = "class Mine:\n    def choose_pass(self, obs): return sorted(obs.hand)[:3]\n"
    lowest += "    def choose_play(self, obs): return min(obs.legal_moves())\n"
    agent.write_text(lowest)
    seats = [f"py:{agent}:Mine", "random", "random", "random"]
    first = simulate("standard", seats, hands=6, seed=3)
    highest = lowest.replace("min(obs.legal_moves())", "max(obs.legal_moves())  # the highest")
    agent.write_text(highest + "class Other(Mine):\n    pass\n")
    changed = simulate("standard", seats, hands=6, seed=3)
    (tmp_path / "fresh.py").write_text(highest)
    fresh = simulate("standard", [f"py:{tmp_path / 'fresh.py'}:Mine", *seats[1:]], hands=6, seed=3)
    points = [c for c in first.columns if c.startswith("points_")]
    assert not first[points].equals(changed[points]) and changed[points].equals(fresh[points])
    assert len(simulate("standard", [f"py:{agent}:Other", *seats[1:]], hands=1)) == 1
    close_all()


def test_a_hung_python_agent_lets_the_process_exit_after_its_timeout() -> None:
    """The call stuck past its limit keeps its thread, a daemon one: the process ends with the
    error (a ``ThreadPoolExecutor``'s thread was joined at exit, so it hung until killed)."""
    script = (
        "from hearts_sim import simulate\n"
        f"simulate('standard', ['py:{AGENTS}:Sleeps(seconds=3600)', 'random', 'random', 'random'], "
        "hands=1, engine_timeout=0.2)"
    )
    ended = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert ended.returncode == 1 and "did not decide within 0.2 s" in ended.stderr


@pytest.mark.parametrize("no_limit", [0, None, float("inf")])
def test_an_engine_without_a_time_limit_plays(no_limit: float | None) -> None:
    """``--engine-timeout 0`` (no limit) failed every exec: engine: the deadline a billion seconds
    ahead overflowed the selector's timeout."""
    engine = f"exec:{shlex.quote(sys.executable)} {ROOT / 'experiments' / 'example_engine.py'}"
    hands = simulate("standard", [engine, "random", "random", "random"], hands=2, engine_timeout=no_limit)
    assert len(hands) == 2 and EngineOptions(timeout=no_limit).timeout is None
    close_all()


@pytest.mark.parametrize("timeout", [20, 0])
def test_an_engines_first_answer_waits_for_the_timeout_asked(
    timeout: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first answer had ``FIRST_ANSWER_GRACE`` (300 s) whatever the timeout: less than a longer
    ``--engine-timeout`` asked, and a limit where 0 asked for none. Here the grace is 0.3 s and
    the engine's first answer takes 1.5 s: it plays under a timeout of 20 s, and under none."""
    from agents import external

    monkeypatch.setattr(external, "FIRST_ANSWER_GRACE", 0.3)
    slow_start = _engine(
        "import json, sys, time\nfirst = True\nfor line in sys.stdin:\n"
        "    if first:\n        time.sleep(1.5)\n        first = False\n"
        "    r = json.loads(line)\n"
        "    move = {'play': r['legal'][0]} if 'legal' in r else {'pass': r['hand'][:3]}\n"
        "    print(json.dumps({'id': r['id'], **move}), flush=True)\n"
    )
    hands = simulate("standard", [slow_start, "random", "random", "random"], hands=1, engine_timeout=timeout)
    assert len(hands) == 1
    close_all()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"engine_procs": 0}, "engine_procs=0 is not valid: processes per engine, 1 .. 1024"),
        ({"engine_procs": 1_000_000}, "engine_procs=1000000 is not valid"),  # it started them
        ({"engine_procs": 1.5}, "engine_procs=1.5 is not valid"),
        ({"engine_timeout": -1}, "engine_timeout=-1 is not valid: seconds per decision, 0 .. 1,000,000"),
        ({"engine_timeout": 10**400}, "is not valid: seconds per decision"),  # float()'s OverflowError
        ({"engine_timeout": 1e7}, "engine_timeout=10000000.0 is not valid"),  # past the command line's range
        ({"engine_timeout": float("nan")}, "engine_timeout=nan is not valid"),
        ({"engine_timeout": "30"}, "engine_timeout='30' is not valid"),
    ],
)
def test_engine_options_out_of_range_are_one_line(options: dict[str, Any], message: str) -> None:
    with pytest.raises(AgentError, match=re.escape(message)):
        simulate("standard", [f"py:{AGENTS}:Lowest", "random", "random", "random"], hands=1, **options)


def test_an_engine_that_owes_an_answer_is_killed_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine past its timeout was sent the end of its input and given 5 s to exit before it
    was killed: a silent engine's run took 5 s longer to fail. This one would read the end of
    its input after 3 s and exit 0; it is killed at once."""
    from agents import external

    monkeypatch.setattr(external, "FIRST_ANSWER_GRACE", 0.5)
    engines: list[Any] = []

    class Kept(external.Engine):  # the engines started, to look at after the failure
        def __init__(self, command: str, name: str) -> None:
            super().__init__(command, name)
            engines.append(self)

    monkeypatch.setattr(external, "Engine", Kept)
    python = shlex.quote(sys.executable)
    slow = f"exec:{python} -c 'import sys; import time; sys.stdin.readline(); time.sleep(3)'"
    with pytest.raises(ExternalAgentError, match="no answer within"):
        simulate("standard", [slow, "random", "random", "random"], hands=1, engine_timeout=0.5)
    assert engines and all(e.owes for e in engines)
    close_all()  # the failed decision ended them already
    assert [e.process.returncode for e in engines] == [-signal.SIGKILL] * len(engines)


def test_engines_that_ignore_the_end_of_their_input_share_one_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """The processes of an engine were closed one after another, each given its 5 s to exit:
    ``--engine-procs 4`` of an engine that ignores the end of its input ended a run 20 s late.
    They are told together now, and killed when the one wait is over."""
    from agents import external

    monkeypatch.setattr(external, "ENGINE_EXIT_SECONDS", 0.5)
    deaf = f"{shlex.quote(sys.executable)} -c 'import time\nwhile True: time.sleep(1)'"
    engines = external.EngineDecider(deaf, "exec:deaf", EngineOptions(procs=3))
    calls: list[tuple[str, int, float | None]] = []
    end_input, reap = external.Engine.end_input, external.Engine.reap

    def ending(engine: external.Engine) -> None:
        calls.append(("end", id(engine), None))
        end_input(engine)

    def reaping(engine: external.Engine, deadline: float) -> None:
        calls.append(("reap", id(engine), deadline))
        reap(engine, deadline)

    monkeypatch.setattr(external.Engine, "end_input", ending)
    monkeypatch.setattr(external.Engine, "reap", reaping)
    engines.close()
    ids = [id(e) for e in engines.engines]
    assert [(what, who) for what, who, _ in calls] == [("end", i) for i in ids] + [("reap", i) for i in ids]
    assert len({deadline for what, _, deadline in calls if what == "reap"}) == 1  # one wait, shared
    assert [e.process.returncode for e in engines.engines] == [-signal.SIGKILL] * 3


def test_a_failure_keeps_the_finished_chunks_and_the_resume_is_identical(tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    flag.write_text("on")
    spec = f"py:{AGENTS}:FailsWhile(flag={str(flag)!r}, after=5000)"
    config = TournamentConfig((spec, "rule"), deals=40, seed=2, chunk_deals=10)
    with pytest.raises(ExternalAgentError) as caught:
        run_tournament(config, tmp_path / "run", progress=False)
    assert "chunks are done: resume with hearts-sim tournament --resume" in str(caught.value)
    done = sorted((tmp_path / "run" / "records").glob("part-*.parquet"))
    assert 1 <= len(done) < 4
    flag.unlink()
    resumed = run_tournament(config, tmp_path / "run", resume=True, progress=False)
    whole = run_tournament(
        TournamentConfig((LOWEST, "rule"), deals=40, seed=2, chunk_deals=10),
        tmp_path / "whole",
        progress=False,
    )
    a, b = (pd.read_parquet(d / "records") for d in (tmp_path / "run", tmp_path / "whole"))
    pd.testing.assert_frame_equal(_outcomes(a), _outcomes(b))
    assert resumed.summary["pairs"][0]["a_minus_b"] == whole.summary["pairs"][0]["a_minus_b"]


def test_the_command_line_takes_external_agents_and_reports_a_failure_in_one_line(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "match", LOWEST, "lowest", "--deals", "20", "--json", "--quiet"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    assert '"a_minus_b": 0.0' in run.stdout
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "hearts_sim",
            "match",
            f"py:{AGENTS}:Illegal",
            "lowest",
            "--deals",
            "5",
            "--out",
            str(tmp_path / "r"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.count("\n") == 1 and "not legal now" in bad.stderr and "--resume" in bad.stderr


def test_the_readme_shows_the_example_agent_and_engine_as_they_are() -> None:
    readme = (ROOT / "README.md").read_text()
    for example in ("example_agent.py", "example_engine.py"):
        assert (ROOT / "experiments" / example).read_text() in readme, example


def test_levels_time_and_tune_varies_an_external_agent() -> None:
    from agents.registry import parse_agent
    from hearts_sim.studies.calibrate import decision_log
    from hearts_sim.studies.tune import _candidates

    log = decision_log(LOWEST, Rules(), hands=2)  # hands 0 and 1 pass (left, right): 4 passes each
    assert len(log) == 2 * 52 + 2 * 4 and log["passing"].sum() == 8 and (log["seconds"] > 0).all()
    pool = _candidates(f"py:{AGENTS}:Sleeps(seconds=0.5)", {"seconds": (0, 2)}, 4, seed=1)
    assert pool[0].spec.endswith("Sleeps(seconds=0.5)")
    assert all(isinstance(c.values["seconds"], int) for c in pool[1:]) and len({c.spec for c in pool}) > 1
    assert all(parse_agent(c.spec).external for c in pool)


def test_a_run_finds_the_agents_named_relative_to_its_folder_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run records the folder it was started in, and its resume and replay find a ``py:`` file
    and an ``exec:`` command named relative to it there, wherever they are run from: from another
    folder the file was "no such file mine.py" and the resume blamed "other code than this"."""
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    (start / "mine.py").write_text(AGENTS.read_text())
    (start / "engine.py").write_text((ROOT / "experiments" / "example_engine.py").read_text())
    from hearts_sim.studies.tournament import Interrupted, recorded_folder, resume_tournament

    monkeypatch.chdir(start)
    engine = f"exec:{shlex.quote(sys.executable)} engine.py"
    config = TournamentConfig(("py:mine.py:Lowest", engine), deals=4, seed=4, chunk_deals=2)
    for run in ("run", "again"):
        with pytest.raises(Interrupted):
            run_tournament(config, tmp_path / run, progress=False, stop_after_chunks=1)
    whole = run_tournament(config, tmp_path / "whole", progress=False)
    close_all()  # a new process: nothing loaded, no engine running
    monkeypatch.chdir(elsewhere)
    assert recorded_folder(tmp_path / "run") == str(start)
    with pytest.warns(UncheckedAgentWarning, match="engine.py goes on unchecked"):  # the engine's code
        resumed = resume_tournament(tmp_path / "run", progress=False, trust_agents=True)
    a, b = (pd.read_parquet(d / "records") for d in (tmp_path / "run", tmp_path / "whole"))
    pd.testing.assert_frame_equal(_outcomes(a), _outcomes(b))
    assert resumed.summary["pairs"] == whole.summary["pairs"]
    close_all()
    for named in (tmp_path / "run", tmp_path / "run" / "records"):  # the run, or its records/
        replayed = subprocess.run(
            [sys.executable, "-m", "hearts_sim", "replay", str(named), "--row", "5", "--trust-agents"],
            capture_output=True,
            text=True,
            cwd=elsewhere,
        )
        assert replayed.returncode == 0, replayed.stderr
        assert "row 5" in replayed.stdout and "py:mine.py:Lowest" in replayed.stdout
    (start / "mine.py").unlink()  # gone: the resume's check names the file, not other code
    with pytest.raises(TournamentError, match=rf"no such file mine\.py in {re.escape(str(start))}$"):
        resume_tournament(tmp_path / "again", progress=False, trust_agents=True)


def test_a_module_of_the_current_folder_is_an_agent_of_the_command(tmp_path: Path) -> None:
    """``py:package.module:Name`` of the folder the command runs in: ``hearts-sim`` (a console
    script, with no folder of its own on the path; ``python -P -m`` here) could not import it."""
    package = tmp_path / "house_agents"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mine.py").write_text(AGENTS.read_text())
    run = subprocess.run(
        [sys.executable, "-P", "-m", "hearts_sim", "match", "py:house_agents.mine:Lowest", "lowest"]
        + ["--deals", "4", "--json", "--quiet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert '"a_minus_b": 0.0' in run.stdout


ODD_ENGINE = """
import json, os, sys, time
RANKS = "2 3 4 5 6 7 8 9 10 J Q K A".split()
MODE, ODD = sys.argv[1], sys.argv[2]  # it misbehaves once, on its second request: then ODD exists
answered = 0
for line in sys.stdin:
    request = json.loads(line)
    answered += 1
    cards = sorted(request["hand"], key=lambda card: RANKS.index(card[:-1]))
    low = json.dumps({"id": request["id"], "pass": cards[:3]})
    odd = answered == 2 and not os.path.exists(ODD)
    if odd:
        open(ODD, "w").close()
    if odd and MODE == "late":  # past the time limit, then the highest cards
        time.sleep(2)
        low = json.dumps({"id": request["id"], "pass": cards[-3:]})
    if odd and MODE == "crash":
        sys.exit(5)
    print(low + ("\\n" + low if answered == 1 and MODE == "twice" else ""), flush=True)
"""


@pytest.mark.parametrize("mode", ["late", "crash", "twice"])
def test_an_engine_that_fails_a_decision_gives_no_later_one_a_wrong_answer(tmp_path: Path, mode: str) -> None:
    """A long-lived caller (``hearts-sim serve``, ``agents.load``) asks an engine one position at
    a time. The late answer to a request that timed out was taken as the next request's move
    (every request had id 0, its place in a batch of one); after an engine crashed every later
    request failed; a second answer to one request was the next one's. Each request now has its
    own id, and a failed decision ends the engines, which the next starts afresh."""
    from agents.external import EngineDecider

    engine = tmp_path / "odd_engine.py"
    engine.write_text(ODD_ENGINE)
    command = f"{shlex.quote(sys.executable)} {engine} {mode} {tmp_path / 'misbehaved'}"
    decider = EngineDecider(command, "odd", EngineOptions(1, 0.5))
    positions = [HandState.deal("standard", seed=seed, hand=0).observation(0) for seed in range(4)]

    def lowest(observation: Any) -> list[int]:
        return sorted(observation.hand, key=lambda card: (card % 13, card))[:3]

    def passes(observation: Any) -> list[int]:
        return sorted(decider.decide([observation], True, [0], [0])[0])

    try:
        assert passes(positions[0]) == sorted(lowest(positions[0]))
        if mode == "twice":  # its second answer to the first request is not the second's
            assert passes(positions[1]) == sorted(lowest(positions[1]))
        else:
            with pytest.raises(ExternalAgentError, match="no answer within 0.5 s|the engine has exited"):
                passes(positions[1])
        time.sleep(2.5 if mode == "late" else 0)  # its late answer is written by now
        for observation in positions[2:]:
            assert passes(observation) == sorted(lowest(observation))
    finally:
        decider.close()


def test_a_folder_set_in_one_thread_outlives_another_threads_block(tmp_path: Path) -> None:
    """``agents_found_in`` set one process-wide folder and put back the one before on leaving: a
    Dask worker's warm-up (a thread of its own) left its block while the first chunk, in the same
    run's folder, was still inside its own, and the chunk no longer found ``py:mine.py`` ("no such
    file mine.py"; the cluster test failed now and then). Each thread keeps its own folder, and a
    thread without one sees the folder of any block still open."""
    from agents.external import agent_folder, agents_found_in

    here = Path.cwd()
    inside, left, seen = threading.Event(), threading.Event(), []

    def chunk() -> None:
        with agents_found_in(tmp_path):
            inside.set()
            left.wait(10)
            seen.append(agent_folder())

    worker = threading.Thread(target=chunk)
    with agents_found_in(tmp_path):  # the warm-up: in first, out while the chunk is still inside
        worker.start()
        inside.wait(10)
    assert agent_folder() == tmp_path  # a thread with no block of its own: the one still open
    left.set()
    worker.join(10)
    assert seen == [tmp_path] and agent_folder() == here  # and after every block: the current folder
    other = tmp_path / "other"
    with agents_found_in(tmp_path), agents_found_in(other):  # nested: the inner one, then the outer
        assert agent_folder() == other
    assert agent_folder() == here


FIRST_BY_HELPER = """from resume_check_helper import pick


class First:
    def choose_pass(self, obs):
        return list(obs.hand)[:3]

    def choose_play(self, obs):
        return pick(list(obs.legal_moves()))
"""


def test_a_resume_sees_the_helper_a_python_agent_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's digest read the ``py:`` file alone: a helper beside it edited between a stop and the
    resume went on without a word, and the records held two programs. The helper's source is in
    the digest now, so the edit is refused and its undoing goes on; the helper is found beside the
    file, as ``python mine.py`` finds it (under the command line it was ModuleNotFoundError)."""
    from hearts_sim.studies.tournament import Interrupted, resume_tournament

    monkeypatch.chdir(tmp_path)
    helper = tmp_path / "resume_check_helper.py"
    helper.write_text("def pick(legal):\n    return legal[0]\n")
    (tmp_path / "mine.py").write_text(FIRST_BY_HELPER)
    config = TournamentConfig(("py:mine.py:First", "random"), deals=4, seed=2, chunk_deals=2)
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "run", progress=False, stop_after_chunks=1)
    helper.write_text("def pick(legal):\n    return legal[-1]\n")
    refused = (
        r"was played by other code than this \(the same version, with other sources, level files or py: "
    )
    refused += r"agent files\); .* \(py:mine.py:First: an outside agent\)"  # which (it named none)
    with pytest.raises(TournamentError, match=refused):
        resume_tournament(tmp_path / "run", progress=False, trust_agents=True)
    helper.write_text("def pick(legal):\n    return legal[0]\n")
    resumed = resume_tournament(tmp_path / "run", progress=False, trust_agents=True)
    whole = run_tournament(config, tmp_path / "whole", progress=False)
    assert resumed.summary["pairs"] == whole.summary["pairs"]


def test_an_agent_fixed_after_failing_in_the_first_chunk_labels_the_run_with_the_fixed_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run kept the digest of the file that failed before any chunk was played: the resume
    played every deal with the fixed file, and every later resume of the finished run was refused
    as "played by other code" (putting the failing file back was accepted)."""
    from hearts_sim.studies.tournament import check_same_play, load_manifest

    monkeypatch.chdir(tmp_path)
    failing = FIRST_BY_HELPER.replace(
        "from resume_check_helper import pick", "def pick(legal):\n    raise KeyError"
    )
    (tmp_path / "mine.py").write_text(failing)
    config = TournamentConfig(("py:mine.py:First", "random"), deals=4, seed=2, chunk_deals=2)
    with pytest.raises(ExternalAgentError, match="raised KeyError"):
        run_tournament(config, tmp_path / "run", progress=False)
    assert load_manifest(tmp_path / "run")["chunks_done"] == 0
    (tmp_path / "mine.py").write_text(failing.replace("raise KeyError", "return legal[0]"))
    run_tournament(config, tmp_path / "run", resume=True, progress=False)
    assert load_manifest(tmp_path / "run")["plays"] == config.table().plays_digest()
    assert check_same_play(tmp_path / "run")  # checked, and found the same code


def test_a_resume_of_an_engine_warns_that_its_code_goes_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine's command shows nothing of its code: its run went on without a word."""
    from hearts_sim.studies.tournament import Interrupted, resume_tournament

    monkeypatch.chdir(tmp_path)
    engine = f"exec:{shlex.quote(sys.executable)} {ROOT / 'experiments' / 'example_engine.py'}"
    config = TournamentConfig((engine, "random"), deals=4, seed=2, chunk_deals=2)
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "run", progress=False, stop_after_chunks=1)
    with pytest.warns(
        UncheckedAgentWarning, match=f"{re.escape(engine)} goes on unchecked, its code out of sight"
    ):
        resume_tournament(tmp_path / "run", progress=False, trust_agents=True)
    close_all()


SEAT_2_FAILS = """
import json, sys
RANKS = "2 3 4 5 6 7 8 9 10 J Q K A".split()
for line in sys.stdin:
    request = json.loads(line)
    cards = sorted(request["hand"], key=lambda card: RANKS.index(card[:-1]))
    if "legal" not in request:
        print(json.dumps({"id": request["id"], "pass": cards[:3]}), flush=True)
    elif request["seat"] == 2 and len(request["plays"]) >= 8:  # seat 2 from its third trick
        print(json.dumps({"id": request["id"], "error": "seat 2 is out of ideas"}), flush=True)
    else:
        print(json.dumps({"id": request["id"], "play": request["legal"][0]}), flush=True)
"""


def test_an_engine_failure_names_the_position_it_failed_on(tmp_path: Path) -> None:
    """An engine's failure (no answer, an exit, garbage, an error answer) named the first position
    of its batch: deal 0, seat 0, where the request it quoted was another seat's."""
    engine = tmp_path / "seat_2_fails.py"
    engine.write_text(SEAT_2_FAILS)
    spec = f"exec:{shlex.quote(sys.executable)} {engine}"
    with pytest.raises(ExternalAgentError) as failed:
        simulate("standard", [spec] * 4, hands=8, seed=1, threads=1)
    message = str(failed.value)
    assert "seat 2 is out of ideas" in message and '"seat":2' in message
    assert re.search(r"\(deal \d+, seating 0, seat 2, playing\)$", message), message
    close_all()


def test_what_an_agent_prints_goes_to_stderr(tmp_path: Path) -> None:
    """A printing agent's lines went to stdout: ``--json``'s object no longer parsed, and ``serve``
    put them before its answers, where a client reads JSON lines."""
    printer = f"py:{AGENTS}:Printer"
    match = [sys.executable, "-m", "hearts_sim", "match", printer, "rule", "--deals", "2", "--json"]
    ran = subprocess.run(match, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["deals"] == 2
    assert "Printer made" in ran.stderr and "Printer plays" in ran.stderr
    state = HandState.deal("standard", seed=1, hand=3)  # no pass: a play at once
    request = json.dumps(request_for(state.observation(state.current_player), request_id=7, seed=1))
    for limit in ("1", "0"):  # in a worker, in the server itself
        serve = [sys.executable, "-m", "hearts_sim", "serve", "--agent", printer, "--time-limit", limit]
        served = subprocess.run(serve, input=request + "\n", capture_output=True, text=True, timeout=300)
        assert served.returncode == 0, served.stderr
        assert [json.loads(line)["id"] for line in served.stdout.splitlines()] == [7]
        assert "Printer plays" in served.stderr


def test_a_resume_keeps_the_decision_time_limit_of_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The manifest did not keep ``--engine-timeout``: a run started with a long limit was resumed
    (with the printed command, too) under the default 30 s. The run's limit goes on until a
    resume gives another, which then lasts."""
    from hearts_sim.apps.cli import main
    from hearts_sim.studies.tournament import load_manifest, resume_tournament

    run = tmp_path / "run"
    config = TournamentConfig(
        (f"py:{AGENTS}:SleepsOnce(seconds=0.6)", "random"), deals=2, seed=1, chunk_deals=1
    )
    slow = "did not decide within 0.2 s"
    with pytest.raises(ExternalAgentError, match=slow):
        run_tournament(config, run, progress=False, engines=EngineOptions(timeout=0.2))
    assert load_manifest(run)["engine_timeout"] == 0.2
    close_all()  # a fresh agent sleeps again
    assert main(["match", "--resume", str(run), "--quiet", "--trust-agents"]) == 2
    assert slow in capsys.readouterr().err
    close_all()
    with pytest.raises(ExternalAgentError, match=slow):
        resume_tournament(run, progress=False, trust_agents=True)
    close_all()
    longer = EngineOptions(timeout=5)
    assert resume_tournament(run, progress=False, trust_agents=True, engines=longer).summary["deals"] == 2
    assert load_manifest(run)["engine_timeout"] == 5
    close_all()


@pytest.mark.parametrize(
    ("answer", "passing", "message"),
    [  # each named as the engine wrote it: it read None, True, ['7C'] (Python's)
        ({"play": None}, False, "not a card: null"),
        ({"play": True}, False, "not a card: true"),
        ({"play": ["7C"]}, False, 'not a card: ["7C"]'),
        ({"pass": ["7C", None, "8C"]}, True, "not a card: null"),
        ({"pass": "7C 8C 9C"}, True, """'pass' must be a list of cards, not "7C 8C 9C\""""),
        ([{"play": "7C"}], False, 'an answer must be a JSON object, not [{"play": "7C"}]'),
        ({"play": "zz"}, False, "malformed card 'zz'"),
        (  # an engine's traceback, 3 KB over lines: one line, cut
            {"error": "Traceback:\n  File e.py\n" + "x" * 3000},
            False,
            "answered with an error: Traceback: File e.py xxx",
        ),
    ],
)
def test_an_engines_bad_answer_is_quoted_as_json(answer: Any, passing: bool, message: str) -> None:
    from hearts_sim.game.protocol import AnswerError, move_from_answer

    with pytest.raises(AnswerError) as refused:
        move_from_answer(answer, passing)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
    assert len(str(refused.value)) < 300  # an engine's traceback of 3 KB, cut
    assert move_from_answer({"play": 36}, False) == move_from_answer({"play": "qs"}, False) == 36


def test_an_agent_prints_where_the_process_has_no_stdout() -> None:
    """A closed descriptor 1 (a daemon, a windowed Python): the agent's prints go to Python's
    stderr, and the redirect neither fails nor leaves stdout pointed elsewhere."""
    script = (
        "import os, sys\n"
        "os.close(1)\n"
        "from agents.external import send_agent_prints_to_stderr\n"
        "send_agent_prints_to_stderr()  # as the command line does\n"
        "from hearts_sim import simulate\n"
        f"simulate('standard', ['py:{AGENTS}:Printer', 'rule', 'rule', 'rule'], hands=2)\n"
        "assert sys.stdout is sys.__stdout__\n"
        "sys.stderr.write('done')\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and ran.stderr.endswith("done"), ran.stderr
    assert "Printer plays" in ran.stderr


LAZY_AGENT = """_helper = None


class Lazy:
    def choose_pass(self, obs):
        return sorted(obs.hand)[:3]

    def choose_play(self, obs):
        global _helper
        if _helper is None:  # imported on its first play: the module's names change during play
            from lazy_check_helper import pick

            _helper = pick
        return _helper(sorted(obs.legal_moves()))
"""


def test_a_python_agents_digest_is_its_sources_not_its_names_during_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digest walked the agent module's names as they were: a helper imported in a method
    joined them on the first play, so the same code's resume was refused as other code, and an
    edit to such a helper went unseen before. Read from the files, the sources are the same
    before and during play, the helper among them."""
    from agents.external import parse_external, source_bytes
    from hearts_sim.studies.tournament import Interrupted, resume_tournament

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # the method's import, at play (its folder is not kept)
    (tmp_path / "lazy_check_helper.py").write_text("def pick(legal):\n    return legal[0]\n")
    (tmp_path / "lazy.py").write_text(LAZY_AGENT)
    spec = parse_external("py:lazy.py:Lazy")
    before = source_bytes(spec)
    assert b"def pick(legal)" in before  # the helper's source, imported inside a method
    config = TournamentConfig(("py:lazy.py:Lazy", "random"), deals=4, seed=2, chunk_deals=2)
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "run", progress=False, stop_after_chunks=1)
    assert source_bytes(spec) == before  # played: its names changed, its sources did not
    assert resume_tournament(tmp_path / "run", progress=False, trust_agents=True).summary["deals"] == 4
    close_all()


def test_a_library_callers_prints_stay_where_it_sends_them() -> None:
    """From Python, an agent's prints go where the caller sends stdout (a notebook's cell,
    ``redirect_stdout``, pytest's capture): only the command line sends them to stderr."""
    script = (
        "import contextlib, io\n"
        "from hearts_sim import simulate\n"
        "caught = io.StringIO()\n"
        "with contextlib.redirect_stdout(caught):\n"
        f"    simulate('standard', ['py:{AGENTS}:Printer', 'rule', 'rule', 'rule'], hands=1)\n"
        "assert 'Printer plays' in caught.getvalue(), caught.getvalue()\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert "Printer" not in ran.stderr


def test_a_py_agent_file_edited_during_a_run_stops_it_not_plays_on(tmp_path: Path) -> None:
    """The file changed mid-run was loaded again for the next decisions: a match went on with the
    edited code, its records of two programs, exit code 0. The run stops there, the chunks before
    it kept, every record of the code it began with; a file written again with the same bytes (a
    touch, a checkout) is no change."""
    agent = tmp_path / "edits_itself.py"
    agent.write_text(
        "import os\n\n\n"
        "class EditsItself:\n"
        "    plays = 0\n\n"
        "    def choose_pass(self, observation):\n"
        "        return sorted(observation.hand)[:3]\n\n"
        "    def choose_play(self, observation):\n"
        "        EditsItself.plays += 1\n"
        "        if EditsItself.plays == 300:  # in the first chunk: written again, the same bytes\n"
        "            with open(__file__, 'rb') as file:\n"
        "                same = file.read()\n"
        "            with open(__file__, 'wb') as file:\n"
        "                file.write(same)\n"
        "            os.utime(__file__, ns=(1, 1))\n"
        "        if EditsItself.plays == 1000:  # in the second chunk (728 plays a chunk)\n"
        "            with open(__file__, 'a') as file:\n"
        "                file.write('# edited\\n')\n"
        "        return min(observation.legal_moves())\n"
    )
    config = TournamentConfig((f"py:{agent}:EditsItself", "rule"), deals=10, seed=5, chunk_deals=2)
    with pytest.raises(ExternalAgentError) as stopped:
        run_tournament(config, tmp_path / "run", progress=False)
    assert f"agent py:{agent}:EditsItself: {agent} changed during the run, which stops here" in str(
        stopped.value
    )
    assert "; 1 of 5 chunks are done: resume with " in str(stopped.value)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["chunks_done"] == 1
    # a later run in this process loads the file as it is now, as before
    agent.write_text(agent.read_text().replace("== 1000", "== -1"))
    assert run_tournament(replace(config, deals=2), None, progress=False).summary["deals"] == 2


def test_a_level_spec_with_a_word_no_file_can_be_named_is_not_tied_to_the_folder() -> None:
    """``found_from_anywhere`` asked the file system about each word of an ``exec:`` command: one
    over 255 bytes (``python -c "<code>"``) raised ENAMETOOLONG after a whole tune, and the level
    was never written (a review)."""
    from agents.external import found_from_anywhere

    long_code = "exec:python -c " + shlex.quote("print(1)" + " " * 300)
    assert found_from_anywhere(long_code) == (long_code, None)
