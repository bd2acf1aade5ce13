"""A folder from someone else: a run's manifest and records, and a kept job's file, name the
outside agents (``py:``, ``exec:``) that play it; resuming or replaying it runs them, so the
command line and the ``resume_*`` functions go on only with ``--trust-agents`` (``trust_agents``).

Until 2026-12-07 a downloaded run whose manifest was edited to name another command ran it on
``--resume`` without a word, and ``replay --row 0`` ran the command its records named.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from agents.external import UntrustedAgents, check_trusted, close_all, names_outside_agent
from hearts_sim.apps.cli import main
from hearts_sim.studies.tournament import (
    Interrupted,
    UncheckedAgentWarning,
    make_config,
    resume_tournament,
    run_tournament,
)

ROOT = Path(__file__).resolve().parents[1]
ENGINE = f"{shlex.quote(sys.executable)} {ROOT / 'experiments' / 'example_engine.py'}"
DUCKER = f"py:{ROOT / 'experiments' / 'example_agent.py'}:Ducker"


def _stopped_run(out: Path, agent: str) -> None:
    """A match of ``agent`` against random stopped after its first of two chunks."""
    config = make_config([agent, "random"], deals=4, seed=2, chunk_deals=2)
    with pytest.raises(Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=1)
    close_all()


def test_a_downloaded_runs_command_runs_only_when_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The manifest of a stopped run edited to name a command that also leaves a mark: ``--resume``
    and ``replay`` refuse it in one line that names it, before it runs; ``--trust-agents`` runs it
    (the mark is left: the refusal was what kept it from running), and the run finishes."""
    run, mark = tmp_path / "run", tmp_path / "ran"
    _stopped_run(run, f"exec:{ENGINE}")
    manifest = (run / "manifest.json").read_text()
    edited = f"exec:sh -c {shlex.quote(f'touch {shlex.quote(str(mark))}; exec {ENGINE}')}"
    (run / "manifest.json").write_text(manifest.replace(json.dumps(f"exec:{ENGINE}"), json.dumps(edited)))
    assert edited in json.loads((run / "manifest.json").read_text())["agent_specs"]

    assert main(["tournament", "--resume", str(run), "--quiet"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1
    assert said.startswith(f"hearts-sim: error: {run / 'manifest.json'} (its agents run in ")
    assert f"names outside agents, which run code on this machine: {edited}; go on only if you trust" in said
    assert said.rstrip().endswith("add --trust-agents (from Python: trust_agents=True)")
    with pytest.raises(UntrustedAgents, match="names outside agents"):
        resume_tournament(run, progress=False)
    assert not mark.exists()
    # replaying a hand runs its agents too: refused from the manifest, before the records are read
    assert main(["replay", str(run), "--row", "0"]) == 2
    said = capsys.readouterr().err
    assert f"{run} names outside agents, which run code on this machine: {edited}" in said
    assert said.endswith("add --trust-agents\n")  # an.replay(row) runs the row it is given
    (run / "manifest.json").unlink()  # records alone: their rows name the engine's command
    assert main(["replay", str(run / "records"), "--row", "0"]) == 2
    said = capsys.readouterr().err
    assert f"names outside agents, which run code on this machine: exec:{ENGINE}" in said
    (run / "manifest.json").write_text(manifest.replace(json.dumps(f"exec:{ENGINE}"), json.dumps(edited)))
    assert main(["tournament", str(run), "--trust-agents"]) == 2  # it answers for a folder's agents
    assert "--trust-agents works with --resume DIR" in capsys.readouterr().err

    with pytest.warns(UncheckedAgentWarning, match="goes on unchecked"):  # an engine's code is out of sight
        assert main(["tournament", "--resume", str(run), "--quiet", "--trust-agents", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deals"] == 4
    close_all()
    assert mark.exists()
    assert main(["replay", str(run), "--row", "0", "--trust-agents"]) == 0
    assert capsys.readouterr().out.startswith("row 0; deal 0, seating 0")
    close_all()


def test_a_python_agent_of_a_run_is_imported_only_when_trusted(tmp_path: Path) -> None:
    """``resume_tournament`` of a run of a ``py:`` agent: refused, then resumed with
    ``trust_agents=True`` to the result of the run played in one go."""
    run = tmp_path / "run"
    _stopped_run(run, DUCKER)
    with pytest.raises(UntrustedAgents, match=re.escape(f"run code on this machine: {DUCKER}")):
        resume_tournament(run, progress=False)
    resumed = resume_tournament(run, progress=False, trust_agents=True)
    whole = run_tournament(make_config([DUCKER, "random"], deals=4, seed=2, chunk_deals=2), progress=False)
    assert resumed.summary == whole.summary


def test_what_names_an_outside_agent() -> None:
    """Anywhere in a spec, a level or a job's setting; an agent object's label runs nothing."""
    for named in ("py:mine.py:Mine", "exec:./engine --fast", "pass=exec:eng,play=rule", " py:pkg.mod:A(k=1)"):
        assert names_outside_agent(named), named
    for plain in ("rule", "hard", "ismcts(iterations=60)", "py:Lowest", "pass=random,play=rule", "standard"):
        assert not names_outside_agent(plain), plain
    check_trusted([], "runs/r1", trusted=False)  # nothing outside: nothing to trust
    check_trusted(["exec:./engine"], "runs/r1", trusted=True)
    with pytest.raises(UntrustedAgents, match=r"^runs/r1 names outside agents, .*: exec:./engine; go on"):
        check_trusted(["exec:./engine", "exec:./engine"], "runs/r1", trusted=False)  # named once
