"""CPU levels: level files, calibration ordering, tuning, and the terminal game."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.kinds import AgentError
from agents.levels import LEVELS_DIR, LevelError, levels, read_level
from agents.registry import parse_agent
from hearts_sim.apps.cli import main
from hearts_sim.core.errors import InputError
from hearts_sim.core.files import shell_path
from hearts_sim.core.rules import Rules
from hearts_sim.engine.hand import card_points
from hearts_sim.game.hand_state import HandState
from hearts_sim.studies import stats, tournament
from hearts_sim.studies.calibrate import (
    Budget,
    CalibrationError,
    calibrate,
    decision_log,
    decision_times,
    format_calibration,
    kept_levels,
    one_against_three,
    resume_calibration,
)
from hearts_sim.studies.kept import JobStopped
from hearts_sim.studies.tournament import TournamentConfig, TournamentError, run_tournament
from hearts_sim.studies.tune import (
    TuneError,
    _candidates,
    kept_tune,
    parse_ranges,
    resume_tune,
    tune,
    write_level,
)

try:
    from tests.signals import started, wait_for_a_chunk
except ImportError:  # run from inside tests/
    from signals import started, wait_for_a_chunk  # type: ignore[no-redef]
try:
    from tests.records_damage import played_by_other_code
except ImportError:
    from records_damage import played_by_other_code  # type: ignore[no-redef]
try:
    from tests.agent_checks import assert_no_peeking, assert_plays_legally
except ImportError:  # tests/ itself on sys.path
    from agent_checks import assert_no_peeking, assert_plays_legally  # type: ignore[no-redef]


def test_shipped_levels_load_and_resolve() -> None:
    shipped = levels()
    assert {"easy", "normal", "hard"} <= set(shipped)
    for name, level in shipped.items():
        spec = parse_agent(name)
        assert spec.name == name  # a level keeps its name in tables and records
        assert level.max_ms_per_decision > 0
        assert level.description


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_shipped_levels_see_only_their_own_information_and_play_legally(level: str) -> None:
    """The levels by name, at their shipped budgets (hard: ~20 ms per decision)."""
    fast = level != "hard"
    assert assert_no_peeking(level, per_rules=5 if fast else 2, alternatives=2 if fast else 1) > 0
    assert_plays_legally(level, hands=30 if fast else 1, stepped_hands=2 if fast else 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('agent = "rule"\nmax_ms_per_decision = 1\n', "lacks description .a string."),
        # each missing key was named alone, one fix at a time, and none said what it holds
        ('agent = "rule"\n', "lacks description .a string.; max_ms_per_decision .a number of ms above 0."),
        (
            'description = "x"\nagent = 3\nmax_ms_per_decision = 1\n',
            "'agent' = 3 is not an agent spec, a string",
        ),
        (
            'description = "x"\nagent = "rule"\nmax_ms_per_decision = "2"\n',
            "= '2' is not a number of ms above 0",
        ),
        (
            'description = "x"\nagent = "rule"\nmax_ms_per_decision = 1\ncolour = "red"\n',
            "unknown key 'colour'",
        ),
        ("description = \n", "not valid TOML"),
        # a traceback in `hearts-sim agents`; NaN written as JSON no parser reads; played as given
        (
            'description = "x"\nagent = "rule"\nmax_ms_per_decision = 1\nprovenance = 5\n',
            "'provenance' is a table",
        ),
        *(
            (
                f'description = "x"\nagent = "rule"\nmax_ms_per_decision = {ms}\n',
                "is not a number of ms above 0",
            )
            for ms in ("nan", "inf", "-5", "0", "60001")  # the last: above the most tune --max-ms writes
        ),
    ],
)
def test_a_malformed_level_file_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(LevelError, match=message) as error:
        read_level(path)
    assert "broken.toml" in str(error.value)


def test_a_level_naming_an_unknown_agent_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _levels_dir(monkeypatch, tmp_path, {"odd": "nosuch"})
    with pytest.raises(LevelError, match=r"odd\.toml.*unknown agent 'nosuch'"):
        parse_agent("odd")


def test_calibration_orders_random_easy_normal() -> None:
    """A statistical test with a fixed seed: each step up the ladder takes fewer points."""
    for lower, upper in (("random", "easy"), ("easy", "normal")):
        summary = run_tournament(TournamentConfig((upper, lower), deals=300, seed=11), progress=False).summary
        (pair,) = summary["pairs"]
        assert pair["ci95"][1] < 0, f"{upper} does not beat {lower}: {pair}"


def test_a_calibration_draws_a_bar_for_each_match(capsys: pytest.CaptureFixture[str]) -> None:
    """The matches of a step took minutes with ``hard`` and said nothing: each draws its bar (the
    deals in hands, the games to 100 in games), silenced by ``progress=False``."""
    budgets = dict(deals=Budget(20, 20), games=Budget(3, 3), table_deals=Budget(5, 5), timing_hands=1)
    calibrate(["random", "lowest"], threads=1, progress=True, **budgets)
    bars = capsys.readouterr().err.replace("\r", "\n").splitlines()
    assert any(" 280/280 [" in bar and "hand/s]" in bar for bar in bars), bars  # 20 deals, 14 seatings
    assert any(" 42/42 [" in bar and "game/s]" in bar for bar in bars), bars
    result = calibrate(["random", "lowest"], threads=1, progress=False, **budgets)
    assert capsys.readouterr().err == ""
    assert "(5 deals per cell, with the half-width" in format_calibration(result)  # no search agent there


def test_a_calibration_of_twins_reads_no_gap_and_long_names_stay_aligned() -> None:
    """``levels --ladder normal,normal`` printed ``-0.000 [-0.000, -0.000]``; a long spec pushed
    its row out of line with the others."""
    step = {
        "upper": "rule(shoot=30)",
        "lower": "random",
        "gap_points_per_hand": -0.0001,
        "ci95": [-0.0002, 0.0],
    }
    step |= {"p_value": 1.0, "significant": False, "upper_game_win_rate": 0.5, "lower_game_win_rate": 0.5}
    short = {**step, "upper": "easy", "lower": "rule(shoot=30)"}
    result = {
        "rules": "standard",
        "ladder": ["random", "rule(shoot=30)", "easy"],
        "steps": [step, short],
        "one_vs_three": {
            a: dict.fromkeys(["random", "rule(shoot=30)", "easy"], 1.0)
            for a in ["random", "rule(shoot=30)", "easy"]
        },
        "one_vs_three_deals": {"fast": 50, "search": 20},
        "decision_ms": {},
    }
    text = format_calibration(result)
    assert "+0.000 [+0.000, +0.000]" in text and "-0.000" not in text
    first, second = (line for line in text.splitlines() if " over " in line)
    assert first.index(" over ") == second.index(" over ")
    assert "(50 deals per cell, 20 where a search agent plays)" in text  # one on the ladder searches


def test_a_calibration_under_house_rules_plays_and_says_them() -> None:
    """Under three players and a target of 50: the games were played to 100 whatever the rules
    said, the text spoke of 14 seatings and three copies, and a step significantly the wrong
    way round read "NOT significant", as a tie does."""
    rules = Rules.preset("qdan3").replace(target_score=50)
    budgets = dict(deals=Budget(60, 60), games=Budget(2, 2), table_deals=Budget(2, 2), timing_hands=1)
    said: list[str] = []
    result = calibrate(
        ["lowest", "random"], rules=rules, threads=1, progress=False, report=said.append, **budgets
    )
    assert "random vs lowest: 60 deals, then 2 games to 50, each in 6 seatings" in said
    assert "one against two: every level against two copies of every level" in said
    text = format_calibration(result)
    assert "games to 50: " in text and "against two copies of the column level" in text
    (step,) = result["steps"]
    assert step["upper"] == "random" and step["ci95"][1] < 0  # the ladder's upper step is the weaker
    assert "(INVERTED: random is significantly weaker)" in text and "NOT significant" not in text


def test_a_level_file_edited_during_a_calibration_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each step built its table anew from the level files: an edit between steps made them compare
    two versions of the level, and the table printed as usual (an "inverted" step, exit code 0)."""
    import hearts_sim.studies.calibrate as calibrate_module

    _levels_dir(monkeypatch, tmp_path, {"mine": "rule(careless=0.2)"})
    played = calibrate_module.play_kept

    def then_edit(*args: Any, **options: Any) -> Any:
        result = played(*args, **options)
        level, edited = tmp_path / "mine.toml", tmp_path / "mine.toml.new"
        edited.write_text(level.read_text().replace("careless=0.2", "careless=0.9"))
        os.replace(edited, level)  # as an editor saves it (sed -i too)
        os.utime(tmp_path, ns=(time.time_ns() + 10**9,) * 2)  # a new stamp whatever the clock's grain
        return result

    monkeypatch.setattr(calibrate_module, "play_kept", then_edit)
    budgets = dict(deals=Budget(2, 2), games=Budget(1, 1), table_deals=Budget(1, 1), timing_hands=1)
    changed = r"the level mine changed during the calibration .its file was edited: it played "
    with pytest.raises(CalibrationError, match=changed + r"rule\(careless=0.2\), now rule\(careless=0.9\)"):
        calibrate(["random", "mine"], threads=1, progress=False, **budgets)


def test_an_inverted_step_says_so_in_its_data_too() -> None:
    """The table said "INVERTED: random is significantly weaker"; the JSON only "significant":
    false, which a reader takes for a tie."""
    budgets = dict(deals=Budget(40, 40), games=Budget(1, 1), table_deals=Budget(1, 1), timing_hands=1)
    (step,) = calibrate(["easy", "random"], threads=1, progress=False, **budgets)["steps"]
    assert step["upper"] == "random" and step["inverted"] and not step["significant"]
    assert step["ci95"][1] < 0  # the gap: random takes significantly more points than easy


def test_a_level_slower_than_its_file_promises_is_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tune`` warned when a level's 99th percentile passed its budget; ``levels`` said nothing."""
    _levels_dir(monkeypatch, tmp_path, {"slowpoke": "mc(samples=50)"})  # a budget of 1 ms
    (tmp_path / "slowpoke.toml").write_text(
        (tmp_path / "slowpoke.toml")
        .read_text()
        .replace("max_ms_per_decision = 1", "max_ms_per_decision = 0.001")
    )
    budgets = dict(deals=Budget(2, 2), games=Budget(1, 1), table_deals=Budget(1, 1), timing_hands=1)
    result = calibrate(["lowest", "slowpoke"], threads=1, progress=False, **budgets)
    assert result["budget_ms"] == {"slowpoke": 0.001}
    (slow,) = (
        line for line in format_calibration(result).splitlines() if line.startswith("  slowpoke median")
    )
    assert slow.endswith("; PAST the 0.001 ms its level file promises")


def test_agents_command_shows_a_level_with_how_it_was_tuned(capsys: pytest.CaptureFixture[str]) -> None:
    """``hearts-sim agents LEVEL`` prints the level's spec, budget and every provenance entry of
    its file; ``--json`` gives the same provenance, and names narrow the listing to themselves."""
    from hearts_sim.apps.cli import main

    hard = levels()["hard"]
    assert hard.provenance["command"].startswith("hearts-sim tune ")
    assert main(["agents", "hard"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("hard (a level): " + hard.description)
    assert f"agent                {hard.agent}" in out
    assert "max ms per decision  100" in out
    for key, value in hard.provenance.items():
        shown = value if isinstance(value, str) else json.dumps(value)
        assert f"{key} = {shown}" in out, key
    assert "ismcts:" not in out and "easy" not in out  # only what was named

    assert main(["agents", "--json", "easy", "rule"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [kind["name"] for kind in listing["agents"]] == ["rule"]
    assert list(listing["levels"]) == ["easy"]
    assert listing["levels"]["easy"]["provenance"] == levels()["easy"].provenance
    rule = listing["agents"][0]["parameters"]  # values as values: "3" and "an integer in 0 .. 13" before
    assert rule["shoot"] == {**rule["shoot"], "default": 99.0, "type": "number", "low": 0, "high": 100}
    assert rule["careless"]["type"] == "number" and isinstance(rule["careless"]["default"], float)
    assert main(["agents", "--json", "ismcts"]) == 0
    ismcts = json.loads(capsys.readouterr().out)["agents"][0]["parameters"]
    rollout, iterations = ismcts["rollout"], ismcts["iterations"]
    assert rollout["default"] == "greedy" and "greedy" in rollout["choices"] and "low" not in rollout
    assert (iterations["default"], iterations["type"], iterations["low"]) == (15000, "integer", 1)

    assert main(["agents"]) == 0  # no names: every kind and every level, one line each
    everything = capsys.readouterr().out
    assert all(f"\n    {name:<8} " in everything for name in levels())
    assert "deals_played" not in everything


def test_levels_command_calibrates_a_ladder_as_json() -> None:
    """``hearts-sim levels`` on the cheap rungs: every adjacent gap significant, in order."""
    run = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "levels", "--ladder", "random,easy,normal", "--deals", "300",
         "--games", "4", "--table-deals", "20", "--timing-hands", "1", "--threads", "1", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    result = json.loads(run.stdout)
    assert [(s["lower"], s["upper"]) for s in result["steps"]] == [("random", "easy"), ("easy", "normal")]
    for step in result["steps"]:
        assert step["significant"] and step["ci95"][0] > 0, step
        assert step["upper_game_win_rate"] > step["lower_game_win_rate"]
        low, high = step["game_win_rate_gap_ci95"]  # the games' gap in win rate: a t-interval about it
        gap = step["upper_game_win_rate"] - step["lower_game_win_rate"]
        assert low < gap < high and high - gap == pytest.approx(gap - low, abs=2e-4)
        assert f"win rate (gap 95% CI [{low:+.3f}, {high:+.3f}])" in format_calibration(result)
    table = result["one_vs_three"]
    assert table["normal"]["random"] < table["easy"]["random"] < table["random"]["random"]
    assert set(result["decision_ms"]) == {"random", "easy", "normal"}
    assert "vs" not in run.stderr  # --json: the object alone, no progress lines (as the other commands)
    bad = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "levels", "--ladder", "easy,nosuch"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "nosuch" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("ladder", ["random,,lowest", "random,lowest,", ",random,lowest", "random, ,lowest"])
def test_a_ladder_with_an_empty_step_is_refused(ladder: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``levels --ladder random,,lowest`` dropped the empty step and calibrated random against
    lowest, as did a comma at either end: a step left out by mistake went unseen."""
    cheap = ["--deals", "1", "--games", "1", "--table-deals", "1", "--timing-hands", "1", "--quiet"]
    assert main(["levels", "--ladder", ladder, *cheap]) == 2
    said = capsys.readouterr()
    assert not said.out
    assert said.err == (
        f"hearts-sim: error: --ladder {ladder!r} has an empty step (two commas together, or one at an "
        "end): name an agent between every two commas\n"
    )


def test_a_calibration_kept_in_a_folder_resumes_after_sigterm(tmp_path: Path) -> None:
    """``levels`` takes most of an hour with ``hard``, and a stop lost it all: with ``--out`` it
    keeps each pair's matches as runs (resumed from their last chunk) and each cell and timing as
    it is measured, and ``--resume DIR`` ends where an unstopped calibration ends."""
    out = tmp_path / "levels"
    settings = ["--ladder", "random,lowest", "--deals", "400000", "--games", "6", "--table-deals", "100"]
    settings += ["--timing-hands", "2", "--seed", "3"]
    process = started("levels", *settings, "--out", str(out), "--threads", "1")
    wait_for_a_chunk(out / "step-1" / "deals" / "manifest.json")
    process.send_signal(signal.SIGTERM)
    _, said = process.communicate(timeout=120)
    assert process.returncode == 143, said
    assert said.rstrip("\n").split("\n")[-1] == (
        "hearts-sim: terminated during the match lowest vs random; "
        f"resume with: hearts-sim levels --resume {out}"
    )
    stopped = kept_levels(out).status()  # two matches, four cells and two timings to measure
    assert stopped.lines()[0] == (
        f"{out}: a calibration, stopped after 0 of 8 measurements; resume with: hearts-sim levels "
        f"--resume {out}"
    )

    def levels_json(*arguments: str) -> dict:
        run = subprocess.run(
            [sys.executable, "-m", "hearts_sim", "levels", *arguments, "--threads", "1", "--json"],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    resumed, unstopped = levels_json("--resume", str(out)), levels_json(*settings)
    timing = resumed.pop("decision_ms")
    assert set(timing) == set(unstopped.pop("decision_ms")) == {"random", "lowest"}
    assert resumed == unstopped  # the gaps, the win rates, the one-against-three table
    again = levels_json("--resume", str(out))  # finished: every figure read back, none measured again
    assert again.pop("decision_ms") == timing and again == resumed
    finished = kept_levels(out).status()  # the result as levels printed it
    assert (finished.state, finished.done, finished.total) == ("finished", 8, 8)
    assert str(finished) == (
        f"{out}: a calibration, finished, 8 measurements\n\n{format_calibration(finished.result or {})}"
    )
    assert finished.result is not None and finished.result["one_vs_three"] == resumed["one_vs_three"]
    refused = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "levels", "--resume", str(out), "--ladder", "random,easy"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert (refused.returncode, refused.stderr) == (
        2,
        f"hearts-sim: error: --resume continues {out} with the settings it was started with "
        "(in its levels.json): drop --ladder\n",
    )
    kept = json.loads((out / "levels.json").read_text())  # hand-edited, the result dropped
    del kept["progress"]["result"]
    kept["progress"]["steps"]["done"] = "3"  # a TypeError in the count of steps
    kept["progress"]["one_vs_three"]["random with three lowest"] = "x"  # printed as the figure
    (out / "levels.json").write_text(json.dumps(kept))
    edited = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "levels", "--resume", str(out), "--json"],
        capture_output=True,
        text=True,
    )
    assert edited.returncode == 2 and edited.stderr.count("\n") == 1, edited.stderr
    assert "levels.json: its one_vs_three measurements are not numbers (edited?)" in edited.stderr


def test_cheap_levels_decide_within_their_budget() -> None:
    rules = Rules()
    for name in ("easy", "normal"):
        times = decision_times(name, rules, hands=3)
        assert len(times) == 3 * (4 + 52)
        # generous margin: the suite runs on shared machines; the budgets are benchmarked in README
        assert float(sorted(times)[len(times) // 2]) * 1000 < 10 * levels()[name].max_ms_per_decision


def test_the_decision_log_takes_a_preset_and_numpy_counts() -> None:
    """``decision_log("hard", "qdan3", seed=np.int64(3))`` raised AttributeError (a preset name
    for the rules) and OverflowError (a numpy seed): now they read as everywhere else."""
    log = decision_log("rule", "qdan3", hands=np.int64(2), seed=np.int64(3))
    same = decision_log("rule", Rules.preset("qdan3"), hands=2, seed=3)
    assert (
        len(log) == 2 * (3 + 3 * 17) and (log[["passing", "choices"]] == same[["passing", "choices"]]).all()
    )
    for wrong, message in (
        (dict(hands=0), "hands must be a whole number"),
        (dict(seed=-1), "seed=-1 is not valid"),
    ):
        with pytest.raises(ValueError, match=message):
            decision_log("rule", "standard", **wrong)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown rules preset 'nope'"):
        decision_log("rule", "nope")


def test_tune_finds_and_writes_a_level(tmp_path: Path) -> None:
    result = tune("rule", parse_ranges(["shoot=20:60"]), budget=320, candidates=4, seed=1)
    assert result.best.spec.startswith("rule")
    assert len(result.rounds) == 2 and result.rounds[0]["deals"] * 2 == result.rounds[1]["deals"]
    path = tmp_path / "tuned.toml"
    write_level(path, result, "a test level", 5, "hearts-sim tune rule --param shoot=20:60")
    level = read_level(path)
    assert level.agent == result.best.spec and level.provenance["reference"] == "rule"
    assert level.provenance["rules"] == result.rules == "standard" and "rules:" not in str(result)
    # under house rules the level file and the printed result say which (they said so nowhere)
    house = tune("rule", parse_ranges(["shoot=20:60"]), rules=Rules.preset("qdan3"), budget=160, candidates=2)
    write_level(path, house, "a test level", 5, "hearts-sim tune rule --param shoot=20:60 --rules qdan3")
    assert read_level(path).provenance["rules"] == house.rules == "qdan3 (n_players=3)"
    assert str(house).endswith("deals in all; rules: qdan3 (n_players=3))")
    with pytest.raises(TuneError, match="name=lo:hi"):
        parse_ranges(["shoot"])
    with pytest.raises(TuneError, match="--param 3 is not of the form name=lo:hi"):
        parse_ranges([3])  # type: ignore[list-item]
    assert parse_ranges("shoot=20:60") == parse_ranges(["shoot=20:60"])  # one range, not its letters
    with pytest.raises(Exception, match="no parameter 'nosuch'"):
        tune("rule", parse_ranges(["nosuch=1:2"]), budget=1000)


def test_a_tune_under_rules_of_whole_games_warns_that_its_hands_ignore_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``tune --rules quick`` plays hands alone, where target_score=50 changes nothing: ``match``
    said so in a warning line, tune was silent. Its ``--json`` stays the result alone."""
    argv = ["tune", "rule", "--param", "shoot=20:60", "--budget", "160", "--candidates", "2", "--json"]
    assert main([*argv, "--rules", "quick"]) == 0
    said = capsys.readouterr()
    assert said.err == (
        "hearts-sim: warning: target_score=50 counts only in whole games: these hands play the same "
        "without it\n"
    )
    assert json.loads(said.out)["rules"] == "quick (target_score=50)"


def test_a_tunes_values_name_their_choices_as_a_spec_does() -> None:
    """``tune --json``'s best_values gave a choice by its code (``"rollout": 1``), which no spec
    takes and no reader can tell from a count."""
    base, drawn = _candidates("ismcts(iterations=100,rollout=rule)", {"c": (0.5, 1.0)}, 2, seed=1)
    assert base.values["rollout"] == drawn.values["rollout"] == "rule" and drawn.values["final"] == "visits"
    assert isinstance(drawn.values["iterations"], int) and 0.5 <= drawn.values["c"] <= 1.0
    assert parse_agent(drawn.spec) == parse_agent(
        f"ismcts(iterations=100,rollout=rule,c={drawn.values['c']})"
    )


def test_a_tune_shows_one_progress_bar_over_every_hand_of_its_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tune of ``hard`` plays for most of an hour, and said nothing until a round ended: one bar
    now counts every hand of every match (rounds and confirmation, known from the start), chunk
    by chunk, a resumed tune from the matches it reads back; in a log, lines as a run's."""
    arguments: dict = dict(budget=320, candidates=4, seed=1, reference="rule(shoot=40)", threads=1)
    out = tmp_path / "tune"
    with pytest.raises(JobStopped):
        tune("rule", parse_ranges(["defend=8:20"]), **arguments, out=out, progress=True, stop_after_matches=3)
    hands = 14 * (4 * 20 + 2 * 40 + 80)  # 14 seatings; two rounds, then the confirmation
    bars = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if "hand/s" in line]
    assert bars and all(f"/{hands} [" in bar for bar in bars), bars  # one bar, of the whole tune
    assert f" {3 * 14 * 20}/{hands} " in bars[-1]  # three first-round matches of 20 deals
    resumed = resume_tune(out, progress=True)
    bars = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines() if "hand/s" in line]
    assert bars[-1].startswith("100%|") and f" {hands}/{hands} " in bars[-1]
    assert resumed.deals_played * 14 == hands

    monkeypatch.setattr(tournament, "PROGRESS_LINE_SECONDS", 0.0)  # a line after every chunk
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    said: list[str] = []
    tune("rule", parse_ranges(["defend=8:20"]), **arguments, report=said.append)
    assert said[0] == f"hearts-sim: {14 * 20:,} of {hands:,} hands (8%), 00:00 so far"
    assert said[1].startswith(f"hearts-sim: {2 * 14 * 20:,} of {hands:,} hands (17%), 00:00 so far, about ")
    assert sum(line.startswith("round ") for line in said) == 2
    said.clear()
    tune("rule", parse_ranges(["defend=8:20"]), **arguments, report=said.append, progress=False)
    assert [line.split(":")[0] for line in said] == ["round 1", "round 2"]  # no bar, no progress lines
    # a round's pick is measured on the deals that picked it: its line sends the reader on
    assert all(line.endswith("(as picked: the confirmation measures it afresh)") for line in said)
    from hearts_sim.apps.cli import main

    tuned = ["tune", "rule", "--param", "defend=8:20", "--budget", "320", "--candidates", "4", "--seed", "1"]
    assert main([*tuned, "--against", "rule(shoot=40)", "--threads", "1", "--quiet"]) == 0
    printed = capsys.readouterr()
    assert printed.err == "" and printed.out.startswith("best: rule(")


def test_tune_weaker_by_calibrates_a_weaker_level_and_keeps_the_fixed_parameters() -> None:
    result = tune(
        "rule(defend=0)", parse_ranges(["careless=0:1"]), budget=960, reference="rule",
        candidates=8, seed=3, weaker_by=1.0,
    )  # fmt: skip
    assert "defend=0" in result.best.spec and "careless=" in result.best.spec
    first_round = {r["spec"]: r["gain"] for r in result.rounds[0]["results"]}
    assert "rule(defend=0,careless=0)" in first_round  # the base spec itself is a candidate
    best_gap = min(abs(gain + 1.0) for gain in first_round.values())
    assert abs(first_round[result.rounds[1]["results"][0]["spec"]] + 1.0) <= best_gap + 0.5
    assert -1.5 < result.gain < -0.5  # re-measured on fresh deals: about one point behind rule
    with pytest.raises(TuneError, match="must be positive"):
        tune("rule", parse_ranges(["careless=0:1"]), budget=640, weaker_by=-1)
    # from a hand-edited tune.json: a TypeError, and numpy's ValueError deep in the first match
    with pytest.raises(TuneError, match="--budget 'x': a number of deals, 1 or more"):
        tune("rule", parse_ranges(["careless=0:1"]), budget="x")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="--seed=-1 is not valid"):
        tune("rule", parse_ranges(["careless=0:1"]), budget=640, seed=-1)


def test_a_tune_kept_in_a_folder_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    """A 40-minute tune stopped by Ctrl-C or a job's time limit lost everything: with ``out`` it
    keeps its matches, and a resumed tune reads the finished ones back and plays the rest."""
    arguments: dict = dict(budget=320, candidates=4, seed=1, reference="rule(shoot=40)")
    whole = tune("rule", parse_ranges(["defend=8:20"]), **arguments)
    out = tmp_path / "tune"
    for stop in (1, 3, 6):  # in the first round, in the second, before the confirmation
        with pytest.raises(JobStopped) as stopped:
            if stop == 1:
                tune("rule", parse_ranges(["defend=8:20"]), **arguments, out=out, stop_after_matches=stop)
            else:
                resume_tune(out, stop_after_matches=stop)
        assert (
            str(stopped.value)
            == f"interrupted after {stop} of 7 matches; resume with: hearts-sim tune --resume {out}"
        )
        assert stopped.value.exit_code == 130
    (out / ".tune.json.k3j4h5g6.tmp").write_text("{half")  # a kill within a write: the resume deletes it
    resumed = resume_tune(out)
    assert resumed.as_dict() == whole.as_dict()
    assert sorted(p.name for p in out.iterdir()) == [".lock", "confirm", "round-1", "round-2", "tune.json"]
    with kept_tune(out).running(), pytest.raises(TuneError) as refused:  # one process at a time
        resume_tune(out)
    assert str(refused.value) == (
        f"{out} is being run by this process (pid {os.getpid()}), in another call: wait for it to end, "
        f"or stop it and then resume with hearts-sim tune --resume {out}"
    )
    assert kept_tune(out).read()["settings"]["reference"] == "rule(shoot=40)"
    with pytest.raises(TuneError) as taken:  # a finished one: it was told to "continue" it
        tune("rule", parse_ranges(["defend=8:20"]), **arguments, out=out)
    assert str(taken.value) == (
        f"{out} already holds a finished tune (its result: hearts-sim tune --resume {out}): "
        "choose a new --out"
    )
    # a new tune into a folder whose tune runs: told to resume that one (which its runner refused),
    # and in a folder taken a moment before, it could write its settings over the other's
    with kept_tune(out).running(), pytest.raises(TuneError) as refused:
        tune("rule", parse_ranges(["defend=8:20"]), **{**arguments, "budget": 640}, out=out)
    assert str(refused.value) == (
        f"{out} is being run by this process (pid {os.getpid()}), in another call: choose another --out"
    )
    assert kept_tune(out).read()["settings"]["budget"] == 320
    taken = tmp_path / "taken"
    with kept_tune(taken).running(resume=False), pytest.raises(TuneError) as refused:
        (taken / ".tune.json.k3j4h5g6.tmp").write_text("{")  # the other's settings, being written
        tune("rule", parse_ranges(["defend=8:20"]), **arguments, out=taken)
    assert str(refused.value).startswith(f"{taken} is being run by this process (pid ")
    assert sorted(p.name for p in taken.iterdir()) == [".lock", ".tune.json.k3j4h5g6.tmp"]
    with pytest.raises(TuneError, match="holds a different tune \\(its budget differs\\)"):
        tune("rule", parse_ranges(["defend=8:20"]), **{**arguments, "budget": 640}, out=out, resume=True)
    with pytest.raises(
        JobStopped, match="after 0 of 7 matches: nothing is kept \\(hearts-sim tune --out DIR keeps"
    ):
        tune("rule", parse_ranges(["defend=8:20"]), **arguments, stop_after_matches=0)


def _tune_stopped_after_its_first_match(out: Path) -> Path:
    """A small tune kept in ``out``, stopped after its first match; that match's folder."""
    with pytest.raises(JobStopped):
        tune(
            "rule", parse_ranges(["defend=8:20"]), budget=320, candidates=4, seed=1,
            reference="rule(shoot=40)", out=out, stop_after_matches=1,
        )  # fmt: skip
    return out / "round-1" / "candidate-00"


def test_a_kept_tune_goes_on_only_with_code_that_plays_its_matches_as_they_were_played(
    tmp_path: Path,
) -> None:
    """A tune stopped between two matches and resumed after an upgrade or an edited agent would
    rank the candidates by two programs' matches: the first match kept is played again in part
    (its first deal) and the resume is refused where this code plays it otherwise."""
    out = tmp_path / "tune"
    match = _tune_stopped_after_its_first_match(out)
    difference = played_by_other_code(match)
    with pytest.raises(TournamentError) as refused:
        resume_tune(out)
    assert str(refused.value) == (
        f"{match} was played by other code than this: {difference}; finish it with the code that "
        "started it (an agent or a level edited since?), or play it again in a new folder"
    )
    assert sorted(p.name for p in out.iterdir()) == [".lock", "round-1", "tune.json"]


def test_a_kept_match_that_lost_its_manifest_is_named_with_how_to_play_it_again(tmp_path: Path) -> None:
    """``tune --resume`` of a tune whose first match had lost its manifest said "--out ... exists
    and is not an empty directory", an option the user never gave."""
    out = tmp_path / "tune"
    match = _tune_stopped_after_its_first_match(out)
    (match / "manifest.json").unlink()
    with pytest.raises(TournamentError) as refused:
        resume_tune(out)
    assert str(refused.value) == (
        f"{match}, a match of this job, holds files but no manifest.json (lost or removed): delete "
        f"{match} and resume the job to play that match again"
    )
    shutil.rmtree(match)
    assert (
        resume_tune(out).as_dict()
        == tune(
            "rule",
            parse_ranges(["defend=8:20"]),
            budget=320,
            candidates=4,
            seed=1,
            reference="rule(shoot=40)",
        ).as_dict()
    )  # played again, the same


def test_a_tune_stopped_on_the_command_line_resumes_and_writes_the_level_it_was_asked_for(
    tmp_path: Path,
) -> None:
    """SIGTERM at whatever point of whichever match (a scheduler's limit), then ``--resume DIR``
    alone: the same result as a tune never stopped, and the level file it was started to write,
    whose provenance is the command that started it."""
    out, levels = tmp_path / "tune", tmp_path / "levels"
    levels.mkdir()
    command = ["tune", "rule", "--param", "defend=8:20", "--budget", "200000", "--candidates", "2"]
    command += ["--seed", "5", "--against", "rule(shoot=40)", "--threads", "1"]
    level = ["--write-level", "tuned", "--levels-dir", str(levels), "--description", "a test level"]
    process = started(*command, *level, "--out", str(out), "--json")
    wait_for_a_chunk(out / "round-1" / "candidate-00" / "manifest.json")
    process.send_signal(signal.SIGTERM)
    _, said = process.communicate(timeout=120)
    assert process.returncode == 143, said
    assert said.rstrip("\n").split("\n")[-1].startswith("hearts-sim: terminated after ")
    assert said.rstrip("\n").endswith(f"matches; resume with: hearts-sim tune --resume {out}")
    assert not (levels / "tuned.toml").exists()
    refused = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "tune", "--resume", str(out), "--seed", "5"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stderr == (
        f"hearts-sim: error: --resume continues {out} with the settings it was started with "
        "(in its tune.json): drop --seed\n"
    )
    resumed = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "tune", "--resume", str(out), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    whole = subprocess.run(
        [sys.executable, "-m", "hearts_sim", *command, "--json"], capture_output=True, text=True, timeout=300
    )
    assert json.loads(resumed.stdout) == json.loads(whole.stdout)
    tuned = read_level(levels / "tuned.toml")
    assert tuned.agent == json.loads(whole.stdout)["best_spec"] and tuned.description == "a test level"
    assert tuned.provenance["command"] == "hearts-sim " + shlex.join(
        [*command, *level, "--out", str(out), "--json"]
    )
    assert f"to play it, name its folder in HEARTS_SIM_LEVELS: HEARTS_SIM_LEVELS={levels} " in resumed.stderr
    played = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "match", "tuned", "lowest", "--deals", "2", "--threads", "1"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "HEARTS_SIM_LEVELS": str(levels)},
    )  # fmt: skip
    assert played.returncode == 0 and played.stdout.startswith("2 deals x 14 seatings"), played.stderr
    # resumed once it is finished, it leaves the level it wrote as it is: an edit (or a later
    # tune's level) was undone in silence until 2026-12-08
    edited = (levels / "tuned.toml").read_text().replace("a test level", "edited by hand")
    (levels / "tuned.toml").write_text(edited)
    again = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "tune", "--resume", str(out), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 0 and json.loads(again.stdout) == json.loads(whole.stdout)
    assert (levels / "tuned.toml").read_text() == edited
    left = f"level tuned was written when this tune ended ({levels / 'tuned.toml'}), and is left as it is"
    assert left in again.stderr
    repeated = subprocess.run(
        [sys.executable, "-m", "hearts_sim", *command, *level, "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert repeated.returncode == 2 and repeated.stderr == (  # it said to "continue" it
        f"hearts-sim: error: {out} already holds a finished tune (its result: hearts-sim tune --resume "
        f"{out}): choose a new --out\n"
    )


def test_a_kept_tune_whose_level_cannot_be_written_says_where_it_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its resume said "--levels-dir DIR is not a directory", or to choose another --write-level
    name, options ``--resume`` refuses, as if the user had given them (until 2026-12-08)."""
    out, levels = tmp_path / "tune", tmp_path / "levels"
    levels.mkdir()
    argv = ["tune", "rule", "--param", "shoot=20:40", "--budget", "400", "--candidates", "2", "--quiet"]
    assert main([*argv, "--write-level", "mine", "--levels-dir", str(levels), "--out", str(out)]) == 0
    (levels / "mine.toml").unlink()
    levels.rmdir()
    capsys.readouterr()
    assert main(["tune", "--resume", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"hearts-sim: error: the tune kept in {out} was started to write level mine into {levels}, and "
        f"cannot now: {levels} is not a directory; resume it once it can (that folder there and writable, "
        "no other level mine in HEARTS_SIM_LEVELS)\n"
    )
    levels.mkdir()
    assert main(["tune", "--resume", str(out), "--quiet"]) == 0 and (levels / "mine.toml").is_file()


def test_a_level_tuned_against_a_level_names_what_that_level_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its provenance named the reference level alone (``reference = "normal"``), whose meaning a
    later tune of that level changes (until 2026-12-08); a reference that is a spec is as given."""
    levels = tmp_path / "levels"
    levels.mkdir()
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(levels))
    argv = ["tune", "rule", "--param", "shoot=20:40", "--budget", "400", "--candidates", "2", "--quiet"]
    argv += ["--write-level", "mine", "--levels-dir", str(levels)]
    assert main([*argv, "--against", "normal"]) == 0
    provenance = read_level(levels / "mine.toml").provenance
    assert (
        provenance["reference"] == "normal"
        and provenance["reference_plays"] == read_level(LEVELS_DIR / "normal.toml").agent
    )
    assert main([*argv, "--against", "rule(shoot=40)"]) == 0
    provenance = read_level(levels / "mine.toml").provenance
    assert provenance["reference"] == "rule(shoot=40)" and "reference_plays" not in provenance


def test_a_level_tuned_under_other_rules_is_said_to_be_wherever_it_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A level tuned for three players played the standard game (``match``, ``levels``, ``serve``,
    ``play``) without a word until 2026-12-08, and ``tune`` printed the line to play it without
    its rules. A whole game's switches (``target_score``) do not count: tuning plays hands."""
    from agents.registry import tuned_for_other_rules

    levels = tmp_path / "levels"
    levels.mkdir()
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(levels))
    tune = ["tune", "rule", "--param", "shoot=20:40", "--budget", "400", "--candidates", "2", "--seed", "1"]
    tune += ["--write-level", "three", "--levels-dir", str(levels), "--threads", "1", "--quiet"]
    assert main([*tune, "--rules", "qdan3"]) == 0
    assert read_level(levels / "three.toml").tuned_under() == Rules.preset("qdan3")
    monkeypatch.delenv("HEARTS_SIM_LEVELS")
    assert main([*tune, "--rules", "qdan3"]) == 0
    to_play = f"HEARTS_SIM_LEVELS={levels} hearts-sim match three normal --rules qdan3\n"
    assert to_play in capsys.readouterr().out
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(levels))
    said = (
        "hearts-sim: warning: level three was tuned under qdan3 (n_players=3), not these rules (standard): "
        "its settings may not suit them\n"
    )
    assert main(["match", "three", "random", "--deals", "1", "--threads", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == said
    for alike in (["--rules", "qdan3"], ["--rules", "qdan3", "--rule", "target_score=50", "--games"]):
        assert main(["match", "three", "random", "--deals", "1", "--threads", "1", "--quiet", *alike]) == 0
        assert "warning" not in capsys.readouterr().err
    standard = Rules()
    assert tuned_for_other_rules(["pass=three,play=rule", "rule", "hard"], standard) == [said[21:-1]]
    (levels / "wraps.toml").write_text('description = "x"\nagent = "three"\nmax_ms_per_decision = 1\n')
    assert tuned_for_other_rules(["wraps"], standard) == [said[21:-1]]  # a level naming it
    assert tuned_for_other_rules(["three"], Rules.preset("qdan3").replace(target_score=20)) == []
    assert main(tune) == 0
    assert (
        f"hearts-sim: warning: level three in {levels / 'three.toml'} was tuned under qdan3 (n_players=3): "
        "this tune, under standard, replaces it\n"
    ) in capsys.readouterr().err
    assert read_level(levels / "three.toml").tuned_under() == standard


LEVEL = 'description = "mine"\nagent = "rule(shoot=30)"\nmax_ms_per_decision = 1\n'


def test_levels_of_your_own_play_from_the_folders_of_hearts_sim_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A level written with ``tune --levels-dir DIR`` could be played nowhere: ``match`` and
    ``agents`` read only the installed package's ``agents/levels``."""
    mine, more = tmp_path / "mine", tmp_path / "more"
    mine.mkdir(), more.mkdir()
    (mine / "cautious.toml").write_text(LEVEL)
    with pytest.raises(AgentError, match="unknown agent 'cautious'"):
        parse_agent("cautious")
    monkeypatch.setenv("HEARTS_SIM_LEVELS", os.pathsep.join([str(mine), str(more)]))
    assert (
        parse_agent("cautious") == parse_agent("rule(shoot=30)")
        and parse_agent("cautious").name == "cautious"
    )
    assert parse_agent("hard") == parse_agent(levels()["hard"].agent)  # the shipped ones still first
    monkeypatch.setenv("HEARTS_SIM_LEVELS", os.pathsep.join([str(mine), str(mine), str(LEVELS_DIR)]))
    assert parse_agent("cautious").name == "cautious"  # a folder named twice is read once
    monkeypatch.setenv("HEARTS_SIM_LEVELS", os.pathsep.join([str(mine), str(more)]))
    (more / "hard.toml").write_text(LEVEL)  # never in place of a shipped level
    with pytest.raises(LevelError, match=f"{more / 'hard.toml'}: the level hard is in .*hard.toml already"):
        parse_agent("cautious")
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(tmp_path / "missing"))
    with pytest.raises(
        LevelError, match=f"HEARTS_SIM_LEVELS names {tmp_path / 'missing'}, which is not a folder"
    ):
        parse_agent("rule(shoot=29)")


def test_tune_refuses_a_resume_it_cannot_continue(tmp_path: Path) -> None:
    def cli(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hearts_sim", "tune", *arguments], capture_output=True, text=True
        )

    for arguments, message in [
        ((), "tune needs AGENT, the policy kind to tune (e.g. rule), or --resume DIR"),
        (("--resume", str(tmp_path)), f"{tmp_path} holds no tune (tune.json is missing)"),
        (
            ("--resume", str(tmp_path), "rule"),
            f"--resume continues {tmp_path} with the settings it was started with "
            "(in its tune.json): drop AGENT",
        ),
    ]:
        refused = cli(*arguments)
        assert (refused.returncode, refused.stderr) == (2, f"hearts-sim: error: {message}\n")
    run = tmp_path / "run"  # a match's folder given to tune --resume: it says what it holds
    run_tournament(TournamentConfig(("rule", "random"), deals=1), run, progress=False)
    refused = cli("--resume", str(run))
    assert refused.stderr == (
        f"hearts-sim: error: {run} holds no tune (tune.json is missing): it holds a tournament run "
        f"(hearts-sim status {run} shows it)\n"
    )
    tuned = tmp_path / "tuned"  # a tune's folder given to match or levels --resume: said only "no run"
    tuned.mkdir()
    (tuned / "tune.json").write_text("{}")
    for command, lacks in (
        ("match", "tournament run (manifest.json"),
        ("levels", "calibration (levels.json"),
    ):
        refused = subprocess.run(
            [sys.executable, "-m", "hearts_sim", command, "--resume", str(tuned)],
            capture_output=True,
            text=True,
        )
        assert refused.stderr == (
            f"hearts-sim: error: {tuned} holds no {lacks} is missing): it holds a tune "
            f"(hearts-sim status {tuned} shows it)\n"
        )
    (tmp_path / "tune.json").write_text("{not json")
    refused = cli("--resume", str(tmp_path))
    assert refused.returncode == 2 and refused.stderr.startswith(
        f"hearts-sim: error: cannot read {tmp_path / 'tune.json'}: "
    )


# ------------------------------------------------------------------------------ terminal game
class ScriptedPlayer:
    """Answers the prompts of ``play_in_terminal``: a malformed card and an illegal card first, then the
    first legal card shown (or the first cards of the hand when passing)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.mistakes = ["zz", "AH"]  # malformed, then (on the first trick) illegal

    def say(self, text: str) -> None:
        self.lines.append(text)

    def ask(self, prompt: str) -> str:
        self.lines.append(prompt)
        if prompt.startswith("pass"):
            hand = next(line for line in reversed(self.lines) if "your hand:" in line)
            return " ".join(self._cards(hand)[:3])
        if self.mistakes:
            return self.mistakes.pop(0)
        legal = next(line for line in reversed(self.lines) if line.startswith("  legal:"))
        return self._cards(legal)[0]

    @staticmethod
    def _cards(line: str) -> list[str]:
        """Cards of a ``legal: ♣2 ♠Q`` line or a ``your hand: ♣ 2 9  ♦ -  ...`` line, as ``2C`` etc."""
        suits = {"♣": "C", "♦": "D", "♠": "S", "♥": "H"}
        label, _, cards = line.partition(":")
        if "legal" in label:
            return [rank + suits[suit] for suit, rank in re.findall(r"([♣♦♠♥])(\w+)", cards)]
        found = []
        for suit, ranks in re.findall(r"([♣♦♠♥])((?: [\w-]+)+)", cards):
            found += [rank + suits[suit] for rank in ranks.split() if rank != "-"]
        return found


def test_terminal_game_plays_to_the_end_and_names_the_right_winner() -> None:
    from hearts_sim.apps.terminal import play_in_terminal

    player = ScriptedPlayer()
    game = play_in_terminal(Rules.preset("quick"), "easy", seed=4, ask=player.ask, say=player.say)
    text = "\n".join(player.lines)
    assert "malformed card 'zz'" in text
    assert "AH is not legal now" in text or "does not hold AH" in text
    assert game.over and max(game.totals) >= 50
    lowest = min(game.totals)
    winners = [s for s, t in enumerate(game.totals) if t == lowest]
    assert game.winners == winners and len(winners) == 1
    expected = "You win!" if winners == [0] else f"Winner: cpu{winners[0]}"
    assert player.lines[-1].strip() == expected
    # the person's own cards are in the record, the verb agrees, the scores are named by seat
    assert sum(line.startswith("  you play ") for line in player.lines) == 13 * game.hands_played
    assert "  -> you takes the trick" not in player.lines
    assert "  -> you take the trick" in player.lines or game.totals[0] == 0
    assert all(
        line.startswith("  hand scores: you ") and "; totals: you " in line
        for line in player.lines
        if line.startswith("  hand scores: ")
    )


def test_the_terminal_game_says_who_takes_the_kitty_and_its_points() -> None:
    """Under a kitty deal the game never named the kitty: trick 1 seemed to score points no card
    in it carried. Now each hand says it lies there, and trick 1 who takes it with its points (its
    cards to the person only), checked against each hand's deal."""
    from hearts_sim.apps.terminal import play_in_terminal

    rules = Rules(n_players=3, deck_mode="kitty", target_score=40)
    player = ScriptedPlayer()
    game = play_in_terminal(rules, "easy", seed=1, ask=player.ask, say=player.say)
    said = "  kitty: 1 card face down, for the winner of the first trick"
    lying = [line for line in player.lines if line == said]
    taken = [line for line in player.lines if "the trick and the kitty" in line]
    assert len(lying) == len(taken) == game.hands_played > 1
    told = []
    for hand, line in enumerate(taken):
        kitty = HandState.deal(rules, seed=game.game_seed, hand=hand).kitty
        points = int(card_points(np.uint64(kitty.mask), rules.to_tuple()))
        worth = f"{points} point{'s' if points != 1 else ''}"
        if line.startswith("  -> you take"):
            assert line.endswith(f"the trick and the kitty: {kitty} ({worth})")
        else:
            assert line.endswith(f"takes the trick and the kitty ({worth} in it)") and str(kitty) not in line
        told.append(points)
    assert any(told)  # a kitty with a heart was told


def test_terminal_help_and_hints_at_any_prompt() -> None:
    """``help`` says how to answer, ``hint`` what the CPU would pass or play in the person's place
    (legal: taking every hint plays on), neither counts as an answer, and ``quit`` leaves."""
    from hearts_sim.apps.terminal import HELP_TEXT, play_in_terminal

    lines: list[str] = []
    answers = iter(["help", "hint", "HINT-PASS", "?", "hint", "HINT-PLAY", "hint", "HINT-PLAY", "quit"])

    def ask(prompt: str) -> str:
        lines.append(prompt)
        answer = next(answers)
        if answer.startswith("HINT-"):  # the cards of the last hint
            return next(line for line in reversed(lines) if line.startswith("  hint: "))[len("  hint: ") :]
        return answer

    game = play_in_terminal(Rules.preset("standard"), "normal", seed=3, ask=ask, say=lines.append)
    hints = [line[len("  hint: ") :] for line in lines if line.startswith("  hint: ")]
    assert lines.count(HELP_TEXT) == 2 and len(hints) == 3
    assert len(hints[0].split()) == 3 and all(len(hint.split()) == 1 for hint in hints[1:])
    assert any(line.startswith("  you received: ") for line in lines)  # the hinted pass was taken
    assert not any("not legal" in line or "does not hold" in line for line in lines)
    assert lines[-1].startswith("\nYou left after 0 hands") and game.hands_played == 0


def test_a_search_opponents_hint_shows_the_points_it_expects_after_each_card() -> None:
    """Against a search agent a play hint is its card and, from ``Agent.card_values``, the points
    it expects the person to take this hand after each legal card, best first (a pass hint: its
    best passes, ``Agent.pass_values``); playing the hinted cards plays on."""
    from hearts_sim.apps.terminal import play_in_terminal

    lines: list[str] = []

    def ask(prompt: str) -> str:
        lines.append(prompt)
        if lines[-2:-1] and lines[-2].startswith("  hint: "):
            hint = lines[-2][len("  hint: ") :]
            return hint.split(" (")[0]  # a pass's three cards, or the card before its reasons
        return "quit" if sum(line.startswith("  hint: ") for line in lines) >= 8 else "hint"

    play_in_terminal(Rules(), "ismcts(iterations=200,pass_rollouts=400)", seed=5, ask=ask, say=lines.append)
    hints = [line[len("  hint: ") :] for line in lines if line.startswith("  hint: ")]
    assert len(hints) == 8
    passing = re.fullmatch(
        r"((?:\w+ ){2}\w+) \(points it expects you to take this hand after its best passes: (.+)\)", hints[0]
    )
    assert passing, hints[0]  # the pass, then up to four candidates, best first
    listed = [item.rsplit(" ", 1) for item in passing.group(2).split(", ")]
    assert 1 <= len(listed) <= 4 and all(len(cards.split()) == 3 for cards, _ in listed)
    assert [float(points) for _, points in listed] == sorted(float(points) for _, points in listed)
    plays = hints[1:]
    searched = [
        re.fullmatch(r"(\w+) \(points it expects you to take this hand after each card: (.+)\)", h)
        for h in plays
    ]
    forced = [re.fullmatch(r"\w+ \(your only legal card\)", h) for h in plays]
    assert any(searched) and all(m or f for m, f in zip(searched, forced, strict=True))
    for match in filter(None, searched):
        listed = [item.rsplit(" ", 1) for item in match.group(2).split(", ")]
        points = [float(value) for _, value in listed]
        assert match.group(1) in [card for card, _ in listed] and points == sorted(points)
    assert not any("not legal" in line or "does not hold" in line for line in lines)


def test_a_terminal_game_against_your_own_python_agent() -> None:
    """``hearts-sim play --level py:...``: the opponents are a Python agent (its hint too), and
    a game taking every hint plays to the end. Before, the first CPU pass raised KeyError."""
    from hearts_sim.apps.terminal import play_in_terminal

    ducker = f"py:{Path(__file__).resolve().parents[1] / 'experiments' / 'example_agent.py'}:Ducker"
    lines: list[str] = []

    def ask(prompt: str) -> str:  # ask for a hint, then answer with it
        lines.append(prompt)
        if lines[-2:-1] and lines[-2].startswith("  hint: "):
            return lines[-2][len("  hint: ") :]
        return "hint"

    game = play_in_terminal(Rules.preset("quick"), ducker, seed=2, ask=ask, say=lines.append)
    assert game.over and game.hands_played >= 1
    assert not any("not legal" in line or "does not hold" in line for line in lines)
    assert f" against {ducker}, seed 2" in lines[0]


def test_terminal_game_ends_cleanly_when_input_runs_out() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "play", "--level", "easy", "--seed", "1"],
        input="qs\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert "input ended" in result.stderr and "Traceback" not in result.stderr
    assert "your hand" in result.stdout


def _levels_dir(monkeypatch: pytest.MonkeyPatch, directory: Path, files: dict[str, str]) -> None:
    """Serve the level files ``files`` (name: agent spec) from ``directory``, beside the shipped ones
    (``$HEARTS_SIM_LEVELS``)."""
    for name, agent in files.items():
        (directory / f"{name}.toml").write_text(
            f'description = "x"\nagent = "{agent}"\nmax_ms_per_decision = 1\n'
        )
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(directory))


def test_a_level_named_like_a_built_in_agent_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _levels_dir(monkeypatch, tmp_path, {"lowest": "highest"})
    with pytest.raises(LevelError, match=r"lowest\.toml: a level cannot take the name of the built-in agent"):
        parse_agent("lowest")


def test_a_level_that_names_itself_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _levels_dir(
        monkeypatch,
        tmp_path,
        {
            "loop": "loop",
            "ping": "pong",
            "pong": "ping",
            "alias": "ping2",
            "ping2": "rule",
            "role": "pass=role,play=rule",
        },
    )
    with pytest.raises(LevelError, match=r"loop\.toml: the level refers to itself \(loop -> loop\)"):
        parse_agent("loop")
    with pytest.raises(LevelError, match=r"ping\.toml: the level refers to itself \(ping -> pong -> ping\)"):
        parse_agent("ping")
    # through a role too: it was a RecursionError (until 2026-12-08)
    with pytest.raises(LevelError, match=r"role\.toml: the level refers to itself \(role -> role\)"):
        parse_agent("role")
    alias = parse_agent("alias")  # a level may name another level
    assert alias.name == "alias" and alias.play_policy.kind.name == "rule"
    # and the commands that look for levels tuned under other rules first (serve, tune) say so too
    for command in (
        ["serve", "--agent", "ping"],
        ["tune", "ping", "--param", "shoot=25:60", "--budget", "100"],
    ):
        assert main(command) == 2
        assert "ping.toml: the level refers to itself (ping -> pong -> ping)\n" in capsys.readouterr().err


def test_a_level_file_name_must_be_a_plain_identifier(tmp_path: Path) -> None:
    path = tmp_path / "my-level.toml"
    path.write_text('description = "x"\nagent = "rule"\nmax_ms_per_decision = 1\n')
    with pytest.raises(LevelError, match="plain identifier"):
        read_level(path)


def test_write_level_refuses_bad_budgets_and_names(tmp_path: Path) -> None:
    result = tune("rule", parse_ranges(["shoot=20:60"]), budget=160, candidates=2, seed=2)
    for max_ms in (-1.0, 0.0, float("nan"), float("inf")):
        with pytest.raises(TuneError, match="--max-ms"):
            write_level(tmp_path / "fine.toml", result, "x", max_ms, "cmd")
    with pytest.raises(TuneError, match="built-in agent 'lowest'"):
        write_level(tmp_path / "lowest.toml", result, "x", 5, "cmd")
    # on macOS's and Windows' filesystems Hard.toml is hard.toml: it replaced the shipped level
    with pytest.raises(
        TuneError, match=r"'Hard' cannot name a level: a new level's name is in lowercase \('hard'\)"
    ):
        write_level(tmp_path / "Hard.toml", result, "x", 5, "cmd")
    for device in ("con", "nul", "com1", "lpt9"):  # Windows' devices, whatever the extension
        with pytest.raises(TuneError, match=f"'{device}' names a device on Windows, not a file"):
            write_level(tmp_path / f"{device}.toml", result, "x", 5, "cmd")
    assert not list(tmp_path.iterdir())
    write_level(tmp_path / "con2.toml", result, "x", 5, "cmd")  # a name like one is fine


def test_tune_prints_its_result_before_writing_and_keeps_it_when_the_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hearts_sim.apps.cli import main
    from hearts_sim.studies import tune as tune_module

    arguments = [
        "tune",
        "rule",
        "--param",
        "shoot=20:60",
        "--budget",
        "160",
        "--candidates",
        "2",
        "--seed",
        "2",
    ]
    arguments += ["--write-level", "tuned", "--levels-dir", str(tmp_path)]

    def full_disk(*args: object) -> None:
        raise TuneError(f"cannot write level file {tmp_path / 'tuned.toml'}: No space left on device")

    monkeypatch.setattr(tune_module, "write_level", full_disk)
    assert main(arguments) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("best: rule(") and "gain over rule" in captured.out
    assert captured.err.strip().splitlines()[-1] == (  # after the rounds' progress lines
        f"hearts-sim: error: cannot write level file {tmp_path / 'tuned.toml'}: No space left on device"
    )
    monkeypatch.undo()
    assert main(arguments) == 0
    assert read_level(tmp_path / "tuned.toml").agent in capsys.readouterr().out


def test_a_level_written_on_a_gain_the_fresh_deals_do_not_confirm_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--write-level`` wrote the winner whatever its confirmation on fresh deals said (the second
    hard tune: -0.071 [-0.746, +0.603]): a warning where the 95% interval holds 0, or leaves out
    the distance ``--weaker-by`` asked for; none where it clears it (rule over random)."""
    tuned = ["tune", "rule", "--param", "shoot=20:60", "--budget", "160", "--candidates", "2", "--seed", "2"]
    tuned += ["--against", "random", "--quiet", "--write-level", "tuned", "--levels-dir", str(tmp_path)]
    assert main(tuned) == 0
    said = capsys.readouterr()
    gain = re.search(r"gain over random: (\+[\d.]+) points/hand, 95% CI \[(\+[\d.]+), ", said.out)
    assert gain is not None and float(gain[2]) > 0, said.out  # cleared: no warning
    assert "warning" not in said.err
    (tmp_path / "tuned.toml").unlink()
    assert main([*tuned, "--weaker-by", "1"]) == 0
    said = capsys.readouterr()
    assert said.err.splitlines()[-1].startswith("hearts-sim: warning: level tuned: +")
    assert said.err.rstrip().endswith("not the -1.000 --weaker-by asked for; written all the same")
    assert (tmp_path / "tuned.toml").is_file()


def test_a_tune_stopped_by_a_full_disk_says_to_resume_the_tune(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A part of a tune's second match that cannot be written: one line that says to resume the
    tune (it said ``tournament --resume DIR/round-1/candidate-01``, which finished that match
    alone), and the tune resumes."""
    import errno

    out = tmp_path / "t"
    command = ["tune", "rule", "--param", "shoot=20:60", "--budget", "160", "--candidates", "2"]
    command += ["--seed", "2", "--quiet", "--json"]
    write = tournament.write_atomically

    def fill_up(path: Path, data: bytes) -> None:
        if path.name.startswith("part-") and "candidate-01" in str(path):
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, data)

    monkeypatch.setattr(tournament, "write_atomically", fill_up)
    assert main([*command, "--out", str(out)]) == 1
    said = capsys.readouterr().err.strip().splitlines()[-1]
    part = out / "round-1" / "candidate-01" / "records" / "part-000000.parquet"
    assert said == (
        f"hearts-sim: error: cannot write {part}: No space left on device; what was played is kept: "
        f"resume with hearts-sim tune --resume {out}"
    )
    monkeypatch.undo()
    assert main(["tune", "--resume", str(out), "--quiet", "--json"]) == 0  # as in a go: the kills' test
    assert json.loads(capsys.readouterr().out)["deals_played"] > 0


def test_quit_leaves_the_terminal_game_with_the_totals_so_far() -> None:
    from hearts_sim.apps.terminal import play_in_terminal

    player = ScriptedPlayer()
    player.mistakes = ["zz", "QUIT"]  # a malformed card is asked again; quit (any case) leaves
    game = play_in_terminal(Rules.preset("quick"), "easy", seed=4, ask=player.ask, say=player.say)
    assert not game.over and game.hands_played == 0 and game.totals == [0, 0, 0, 0]
    assert (
        player.lines[-1]
        == "\nYou left after 0 hands (the hand in play not counted); totals: you 0  cpu1 0  cpu2 0  cpu3 0"
    )
    assert "malformed card 'zz'" in "\n".join(player.lines)
    left = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "play", "--level", "easy"],
        input="quit\n",
        capture_output=True,
        text=True,
    )
    assert left.returncode == 0 and "You left after 0 hands" in left.stdout
    # nothing on stderr, but the notice of a warm-up that took over 2 s (a busy machine's)
    notice = "hearts-sim: loading the CPU opponents' kernels"
    assert [line for line in left.stderr.splitlines() if not line.startswith(notice)] == []
    # a new game each time (seed 0 dealt every game alike), and --seed with its seed deals it again
    again = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "play", "--level", "easy"],
        input="quit\n",
        capture_output=True,
        text=True,
    )
    seeds = [re.search(r", seed (\d+)\. ", run.stdout.splitlines()[0]) for run in (left, again)]
    assert all(seeds) and seeds[0][1] != seeds[1][1]  # type: ignore[index]
    replayed = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "play", "--level", "easy", "--seed", seeds[0][1]],  # type: ignore[index]
        input="quit\n",
        capture_output=True,
        text=True,
    )
    assert replayed.stdout == left.stdout
    ended = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "play", "--level", "easy"],
        input="",
        capture_output=True,
        text=True,
    )  # the error was printed on the prompt's line
    assert ended.returncode == 2 and ended.stdout.endswith(": \n")
    assert ended.stderr == "hearts-sim: error: input ended before the game was over\n"


def test_the_terminal_game_says_when_its_opponents_compile(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first game sat silent for 29 s (``hard``: 43 s) after its banner while the opponents'
    kernels compiled, as if hung: they are warmed up before it, and a warm-up past a second is
    said on stderr; a quick one (cached) says nothing."""
    import io

    from agents.api import Agent
    from hearts_sim.apps import cli

    warmed: list[str] = []

    def slow_warm_up(agent: Agent, rules: Rules, explain: bool = False) -> None:
        warmed.append(agent.name)
        time.sleep(0.5)

    monkeypatch.setattr(Agent, "warm_up", slow_warm_up)
    monkeypatch.setattr(cli, "COMPILE_NOTICE_SECONDS", 0.05)
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert cli.main(["play", "--level", "easy", "--seed", "1"]) == 0
    said = capsys.readouterr()
    assert warmed == ["easy"] and said.out.startswith("Hearts (standard) against easy, seed 1.")
    notice = "hearts-sim: loading the CPU opponents' kernels (compiling them the first time: a minute or two)"
    assert said.err == notice + "\n"
    monkeypatch.setattr(cli, "COMPILE_NOTICE_SECONDS", 60.0)
    monkeypatch.setattr("sys.stdin", io.StringIO("quit\n"))
    assert cli.main(["play", "--level", "easy", "--seed", "1"]) == 0
    assert capsys.readouterr().err == ""


def test_the_terminal_game_refuses_a_seat_or_an_opponent_before_it_starts(tmp_path: Path) -> None:
    """``--seat -1`` said "choose 0 .. 4" at 4 players (and 4 was then refused); a ``py:`` opponent
    that cannot load printed the game's banner and first hand before its error."""
    for arguments, message in (
        (["--seat", "-1"], "--seat -1 is not valid: choose a whole number in 0 .. 3 for 4 players"),
        (
            ["--seat", "3", "--rules", "qdan3"],
            "--seat 3 is not valid: choose a whole number in 0 .. 2 for 3 players",
        ),
        (["--level", "py:nosuch.py:X"], "py:nosuch.py:X: no such file nosuch.py"),
    ):
        refused = subprocess.run(
            [sys.executable, "-m", "hearts_sim", "play", *arguments],
            input="quit\n",
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert (refused.returncode, refused.stdout) == (2, ""), refused
        assert refused.stderr == f"hearts-sim: error: {message}\n"


def test_a_written_level_keeps_how_fast_it_decides_and_a_tie_with_the_reference_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--max-ms`` was written into the level unchecked (a level of 0.1 ms decisions promised
    0.001 ms), and a base spec that won against itself printed a gain of +0.000 as if measured."""
    from hearts_sim.apps.cli import main

    command = ["tune", "rule", "--param", "shoot=99:99", "--budget", "200", "--candidates", "2"]
    level = ["--write-level", "mine", "--levels-dir", str(tmp_path), "--max-ms", "0.001"]
    assert main([*command, *level, "--threads", "1", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("best: rule(shoot=99) (it plays as the reference does: the base spec won")
    timing = read_level(tmp_path / "mine.toml").provenance
    assert timing["timed_decisions"] > 100 and 0 < timing["median_ms"] <= timing["p99_ms"]
    assert f"takes {timing['p99_ms']:g} ms a decision at the 99th percentile" in err
    assert "more than the --max-ms 0.001 the level promises" in err


def test_a_run_of_a_level_resumed_without_its_folder_says_the_run_is_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said the manifest "holds no readable tournament configuration ...: start a new run",
    advice that threw away a good run whose level was only not found from here."""
    from dataclasses import replace

    from hearts_sim.studies.tournament import Interrupted, resume_tournament

    levels = tmp_path / "levels"
    levels.mkdir()
    _levels_dir(monkeypatch, levels, {"mine": "rule(careless=0.2)"})
    config = replace(TournamentConfig(("mine", "random"), deals=8, seed=1), chunk_deals=2)
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "run", progress=False, stop_after_chunks=1)
    monkeypatch.delenv("HEARTS_SIM_LEVELS")
    with pytest.raises(
        TournamentError, match=r"run's agents cannot be set up here \(unknown agent 'mine'"
    ) as refused:
        resume_tournament(tmp_path / "run", progress=False)
    assert "HEARTS_SIM_LEVELS names" in str(refused.value) and "the run is intact" in str(refused.value)
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(levels))
    assert resume_tournament(tmp_path / "run", progress=False).summary["deals"] == 8


def test_agents_names_a_level_that_cannot_be_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A level whose spec is refused (a parameter misspelt or out of range, a loop of levels) was
    shown and listed as any other, exit code 0, and failed in every match."""
    _levels_dir(
        monkeypatch,
        tmp_path,
        {"typo": "rule(shooot=5)", "far": "rule(shoot=500)", "one": "two", "two": "one"},
    )
    for name, words in (
        ("typo", "has no parameter 'shooot'"),
        ("far", "shoot='500' is not valid"),
        ("one", "refers to itself"),
    ):
        assert main(["agents", name]) == 2
        said = capsys.readouterr().err
        assert said.startswith(f"hearts-sim: error: level file {tmp_path / name}.toml: ") and words in said
    assert main(["agents"]) == 0
    listed = {
        line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("    ")
    }
    assert "CANNOT BE PLAYED" in listed["typo"] and "CANNOT BE PLAYED" not in listed["easy"]
    assert main(["agents", "--json"]) == 0
    problems = {
        name: level["problem"] for name, level in json.loads(capsys.readouterr().out)["levels"].items()
    }
    assert problems["normal"] is None and "refers to itself" in problems["two"] and "500" in problems["far"]


def test_agents_shows_a_provenance_of_dates_and_nan_and_its_json_is_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``[provenance]`` holding TOML dates and times was a traceback in ``hearts-sim agents`` (text
    and ``--json``), and NaN or an infinity went out of ``--json`` as ``NaN``/``-Infinity``, which
    strict JSON parsers refuse: ``--json`` gives ISO text and null."""
    (tmp_path / "dated.toml").write_text(
        'description = "x"\nagent = "rule"\nmax_ms_per_decision = 10\n[provenance]\n'
        "tuned_on = 2026-12-07\nat = 07:32:00\nstamp = 2026-12-07T07:32:00Z\ngain = nan\n"
        "ci95 = [-inf, 0.5]\n[provenance.more]\nwhen = 2026-12-06\n"
    )
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(tmp_path))

    def strict(text: str) -> Any:
        return json.loads(text, parse_constant=lambda constant: pytest.fail(f"{constant} is not JSON"))

    expected = {
        "tuned_on": "2026-12-07",
        "at": "07:32:00",
        "stamp": "2026-12-07T07:32:00+00:00",
        "gain": None,
        "ci95": [None, 0.5],
        "more": {"when": "2026-12-06"},
    }
    for argv in (["agents", "dated", "--json"], ["agents", "--json"]):
        assert main(argv) == 0
        assert strict(capsys.readouterr().out)["levels"]["dated"]["provenance"] == expected
    assert main(["agents", "dated"]) == 0
    shown = capsys.readouterr().out
    for line in ("tuned_on = 2026-12-07", "at = 07:32:00", "gain = NaN", 'more = {"when": "2026-12-06"}'):
        assert f"        {line}\n" in shown


def test_an_agent_failing_in_a_kept_job_is_resumed_as_the_job(tmp_path: Path) -> None:
    """The line named the match it failed in: "resume with hearts-sim tournament --resume
    DIR/round-1/candidate-00", a resume of that match alone, outside the tune (levels likewise)."""
    from agents.external import ExternalAgentError

    flag = tmp_path / "fail"
    flag.write_text("on")
    failing = f"py:{Path(__file__).parent / 'python_agents.py'}:FailsWhile(flag={str(flag)!r})"
    out = tmp_path / "tune"
    with pytest.raises(ExternalAgentError) as failed:
        tune(
            "rule",
            parse_ranges(["shoot=20:60"]),
            budget=8,
            candidates=2,
            reference=failing,
            out=out,
            threads=1,
        )
    said = str(failed.value)
    assert "raised RuntimeError: failing on purpose" in said and "candidate-00" not in said
    assert said.endswith(f"what was played is kept: resume with hearts-sim tune --resume {shell_path(out)}")
    budgets = dict(deals=Budget(2, 2), games=Budget(1, 1), table_deals=Budget(1, 1), timing_hands=1)
    with pytest.raises(ExternalAgentError, match=r"resume with hearts-sim levels --resume .*/levels$"):
        calibrate(["random", failing], threads=1, progress=False, out=tmp_path / "levels", **budgets)
    flag.unlink()
    # the job's file names the agent's file: resuming it runs that code, so only when trusted
    from agents.external import UntrustedAgents

    for resume, kept in (
        (resume_tune, out / "tune.json"),
        (resume_calibration, tmp_path / "levels" / "levels.json"),
    ):
        with pytest.raises(UntrustedAgents, match=re.escape(f"{kept} (its agents run in ")) as refused:
            resume(kept.parent, threads=1, progress=False)
        assert f"names outside agents, which run code on this machine: {failing}; go on only" in str(
            refused.value
        )
    assert resume_tune(out, threads=1, trust_agents=True).best.spec.startswith("rule")


def test_a_signal_numba_wrapped_in_a_timing_stops_the_calibration_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C that arrived as a timing's kernel was called came out of numba as a
    ``SystemError`` wrapping it, past the calibration's ``except KeyboardInterrupt``: a bare
    "interrupted" without the resume command. It stops the calibration as any Ctrl-C does."""
    import hearts_sim.studies.calibrate as calibrate_module

    def timed_then_stopped(*arguments: Any) -> None:  # numba's wrapping of a signal in the kernel
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as signalled:
            raise SystemError(
                "CPUDispatcher(<function play_hands>) returned a result with an exception set"
            ) from signalled

    monkeypatch.setattr(calibrate_module, "_timed_hands", timed_then_stopped)
    budgets = dict(deals=Budget(2, 2), games=Budget(1, 1), table_deals=Budget(1, 1), timing_hands=1)
    out = tmp_path / "levels"
    with pytest.raises(JobStopped) as stopped:
        calibrate(["random", "lowest"], threads=1, progress=False, out=out, **budgets)
    assert (
        str(stopped.value)
        == f"interrupted during the timing of random; resume with: hearts-sim levels --resume {out}"
    )
    assert stopped.value.exit_code == 130


MY_AGENT = """
class Mine:
    def __init__(self, k: int = 0):
        self.k = k

    def choose_pass(self, obs):
        return sorted(obs.hand)[-3:]

    def choose_play(self, obs):
        legal = sorted(obs.legal_moves())
        return legal[self.k % len(legal)]
"""


def test_a_tune_of_an_agent_file_resumes_and_writes_a_level_that_plays_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tune of ``py:mine.py:Mine`` resumed from another folder failed ("no such file
    mine.py"), where a run's resume finds its agents where it began; and the level it wrote named
    ``py:mine.py:Mine(k=2)``, played from the folder of the tune only (the line it printed to play
    it failed anywhere else). The tune keeps its folder; the level names the file's full path,
    and says so where it still needs the folder (a module found from it)."""
    began, elsewhere, level_folder = tmp_path / "began", tmp_path / "elsewhere", tmp_path / "levels"
    for folder in (began, elsewhere, level_folder):
        folder.mkdir()
    (began / "mine.py").write_text(MY_AGENT)
    (began / "my_agents.py").write_text(MY_AGENT)
    monkeypatch.chdir(began)
    stopped = tmp_path / "stopped"
    with pytest.raises(JobStopped):
        tune("py:mine.py:Mine", parse_ranges(["k=0:3"]), budget=160, candidates=2, reference="random",
             out=stopped, stop_after_matches=1, progress=False)  # fmt: skip
    tuned = ["--param", "k=0:3", "--against", "random", "--budget", "160", "--candidates", "2", "--quiet"]
    kept = tmp_path / "kept"
    written = ["--levels-dir", str(level_folder), "--out", str(kept)]
    assert main(["tune", "py:mine.py:Mine", *tuned, "--write-level", "mine", *written]) == 0
    assert (
        main(
            [
                "tune",
                "py:my_agents:Mine",
                *tuned,
                "--write-level",
                "module",
                "--levels-dir",
                str(level_folder),
            ]
        )
        == 0
    )
    said = capsys.readouterr().err
    assert f"hearts-sim: warning: level module: its module my_agents is found from {began} only" in said
    assert not [line for line in said.splitlines() if "level mine:" in line and "found from" in line]
    level = read_level(level_folder / "mine.toml")
    assert level.agent.startswith(f"py:{began / 'mine.py'}:Mine(k=")
    assert read_level(level_folder / "module.toml").agent.startswith("py:my_agents:Mine(k=")

    monkeypatch.chdir(elsewhere)
    assert resume_tune(stopped, progress=False, trust_agents=True).best.spec.startswith("py:mine.py:Mine(k=")
    (level_folder / "mine.toml").unlink()
    assert main(["tune", "--resume", str(kept), "--quiet"]) == 2  # it runs mine.py: trusted?
    assert "names outside agents, which run code on this machine: py:mine.py:Mine" in capsys.readouterr().err
    trusted = ["tune", "--resume", str(kept), "--quiet", "--trust-agents"]
    assert main(trusted) == 0  # written again, as found from began
    assert read_level(level_folder / "mine.toml").agent == level.agent
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(level_folder))
    assert main(["match", "mine", "random", "--deals", "8", "--quiet", "--json"]) == 0


@pytest.mark.parametrize("kept", [True, False])
def test_a_stop_as_the_tuned_level_is_timed_says_how_to_write_it_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kept: bool
) -> None:
    """After the tune's result, ``--write-level`` times the winner (seconds for a search agent):
    a Ctrl-C there was a bare "hearts-sim: interrupted", the level not written and not a word
    of how to write it without tuning again."""
    import hearts_sim.apps.cli as cli

    def stopped(*arguments: Any) -> None:
        raise KeyboardInterrupt

    level_folder, out = tmp_path / "levels", tmp_path / "tune"
    level_folder.mkdir()
    tuned = ["tune", "rule", "--param", "defend=8:20", "--budget", "160", "--candidates", "2", "--quiet"]
    tuned += ["--write-level", "mine", "--levels-dir", str(level_folder)]
    tuned += ["--out", str(out)] if kept else []
    monkeypatch.setattr(cli, "_level_timing", stopped)
    assert main(tuned) == 130
    said = capsys.readouterr()
    assert said.out.startswith("best: rule(")  # the result, printed before
    then = f"hearts-sim tune --resume {out} writes it" if kept else "the tune's result is above"
    assert said.err == f"hearts-sim: interrupted before level mine was written: {then}\n"
    assert not (level_folder / "mine.toml").exists()
    if kept:
        monkeypatch.undo()
        assert main(["tune", "--resume", str(out), "--quiet"]) == 0
        assert read_level(level_folder / "mine.toml").agent.startswith("rule(")


def test_a_stop_after_a_matchs_last_chunk_stops_the_tune_as_any_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A signal that fell after a match's last chunk, as its summary was made (scipy imported),
    passed the tune's stop (which caught a match's ``Interrupted`` alone): a bare "hearts-sim:
    terminated" for a kept tune (6 of 15 SIGTERMs in a QA sweep)."""
    arguments: dict = dict(budget=320, candidates=4, seed=1, reference="rule(shoot=40)", threads=1)
    summarised = tournament._summary

    def stopped(*given: Any) -> Any:  # the second match's summary
        calls.append(1)
        if len(calls) == 2:
            raise tournament.Terminated
        return summarised(*given)

    calls: list[int] = []
    monkeypatch.setattr(tournament, "_summary", stopped)
    out = tmp_path / "tune"
    with pytest.raises(JobStopped) as halted:
        tune("rule", parse_ranges(["defend=8:20"]), **arguments, out=out, progress=False)
    resume = f"resume with: hearts-sim tune --resume {out}"
    assert str(halted.value) == f"terminated after 1 of 7 matches; {resume}"
    assert halted.value.exit_code == 143
    monkeypatch.undo()
    whole = tune("rule", parse_ranges(["defend=8:20"]), **arguments, progress=False)
    assert resume_tune(out, progress=False).as_dict() == whole.as_dict()


def test_a_tune_resumed_elsewhere_writes_its_level_in_the_relative_levels_dir_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--levels-dir levels`` was kept as written, so a resume from another folder (which a kept
    tune allows) wrote the level into that folder's ``levels``, or refused it (a review)."""
    began, elsewhere = tmp_path / "began", tmp_path / "elsewhere"
    for folder in (began / "levels", elsewhere):
        folder.mkdir(parents=True)
    monkeypatch.chdir(began)
    tuned = ["tune", "rule", "--param", "defend=8:20", "--budget", "160", "--candidates", "2", "--quiet"]
    assert main([*tuned, "--write-level", "mine", "--levels-dir", "levels", "--out", "kept"]) == 0
    (began / "levels" / "mine.toml").unlink()
    monkeypatch.chdir(elsewhere)
    assert main(["tune", "--resume", str(began / "kept"), "--quiet"]) == 0
    assert (began / "levels" / "mine.toml").is_file()


def test_a_one_against_three_margin_is_a_t_interval() -> None:
    """The cell's +- is a t-interval over its deals (n - 1 degrees of freedom): at the 20 deals
    where `hard` plays it took the normal quantile, 1.96 for 2.093, 6.4% too narrow."""
    from scipy.stats import t

    values = np.arange(20, dtype=np.float64) ** 1.5
    mean, half = stats.mean_interval(values)
    assert mean == pytest.approx(values.mean())
    assert half == pytest.approx(t.ppf(0.975, 19) * values.std(ddof=1) / np.sqrt(20), rel=1e-12)
    assert np.isnan(stats.mean_interval(values[:1])[1])


def test_a_one_against_three_cell_says_how_sure_it_is() -> None:
    """A cell of the one-against-three table is a mean over its deals, and at the 20 deals where
    `hard` plays it is sure to about 2 points a hand: the table printed two decimals and nothing
    else. Its half-width is the spread of the cell over other seeds (an interval over the deals,
    each deal's mean over the seats: the seats of one deal share its cards)."""
    rules = Rules()
    cells = [one_against_three("easy", "random", rules, 60, seed) for seed in range(40)]
    means, margins = np.array([m for m, _ in cells]), np.array([h for _, h in cells])
    spread = means.std(ddof=1) * 1.96  # what the half-width should be, from the seeds
    assert 0.7 < np.median(margins) / spread < 1.4, (np.median(margins), spread)
    covered = np.mean(np.abs(means - means.mean()) <= margins)
    assert covered >= 0.85
    result = {
        "rules": "standard",
        "ladder": ["random", "easy"],
        "steps": [],
        "one_vs_three": {"random": {"random": 6.5, "easy": 12.0}, "easy": {"random": 3.0, "easy": 7.0}},
        "one_vs_three_ci95": {"random": {"random": 0.2, "easy": None}, "easy": {"random": 0.31, "easy": 0.4}},
        "one_vs_three_deals": {"fast": 500},
        "decision_ms": {},
    }
    text = format_calibration(result)
    assert "+-0.31" in text and "(500 deals per cell, with the half-width of its 95% interval under" in text
    kept_before = {
        **result,
        "one_vs_three_ci95": {a: dict.fromkeys(row) for a, row in result["one_vs_three"].items()},
    }
    assert "(500 deals per cell)" in format_calibration(kept_before)  # a resumed old calibration: none


def test_a_calibration_prints_its_gaps_rounded_once() -> None:
    """A step's gap was rounded to 4 decimals (the match summary's JSON) and printed to 3: -2.940476
    read -2.941. The calibration's JSON keeps 4 decimals; its text rounds the unrounded gap."""
    step = {
        "upper": "easy",
        "lower": "random",
        "gap_points_per_hand": 247 / 84,
        "ci95": [247 / 84 - 0.5, 247 / 84 + 0.5],
        "p_value": 1e-5,
        "significant": True,
        "inverted": False,
        "upper_game_win_rate": 0.5,
        "lower_game_win_rate": 0.25,
        "deals": 3,
        "games": 1,
    }
    result = stats.Figures(
        {
            "rules": "standard",
            "ladder": ["random", "easy"],
            "steps": [step],
            "one_vs_three": {"random": {"random": 6.5, "easy": 12.0}, "easy": {"random": 3.0, "easy": 7.0}},
            "one_vs_three_deals": {"fast": 500},
            "decision_ms": {},
        }
    )
    assert result["steps"][0]["gap_points_per_hand"] == 2.9405  # JSON: 4 decimals
    assert "easy over random   +2.940 [+2.440, +3.440]" in format_calibration(result)
    assert "+2.941" in format_calibration(json.loads(json.dumps(result)))  # what the rounded JSON reads


def _figures(result: Any) -> list[tuple[Any, ...]]:
    """A run's figures per agent, without the agents' names."""
    keys = ("points_per_hand", "moon_rate", "qs_rate", "tricks_per_hand")
    return [tuple(agent[key] for key in keys) for agent in result.summary["agents"]]


def _run_stopped_after_one_chunk(run: Path, agents: list[str]) -> TournamentConfig:
    config = TournamentConfig(tuple(agents), deals=8, seed=0, chunk_deals=4)
    with pytest.raises(tournament.Interrupted):
        run_tournament(config, run, stop_after_chunks=1, threads=1, progress=False)
    return config


def test_a_run_resumed_after_its_level_file_was_edited_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume by other code plays deal 0 again; an edit of a level that plays that deal as before
    (rule's moon threshold) passed, and the run's later chunks were played by the new settings
    beside the old ones, without a word. The manifest keeps what each agent played as."""
    levels = tmp_path / "levels"
    levels.mkdir()
    _levels_dir(monkeypatch, levels, {"mine": "rule(shoot=47.39)"})
    run = tmp_path / "run"
    config = _run_stopped_after_one_chunk(run, ["mine", "random"])
    _levels_dir(monkeypatch, levels, {"mine": "rule(shoot=30)"})
    edited = TournamentConfig(("rule(shoot=30)", "random"), deals=1, seed=0)
    before = TournamentConfig(("rule(shoot=47.39)", "random"), deals=1, seed=0)
    assert _figures(run_tournament(edited, progress=False)) == _figures(
        run_tournament(before, progress=False)
    )
    with pytest.raises(TournamentError) as refused:  # deal 0 alike: the old check let it go on
        run_tournament(config, run, resume=True, threads=1, progress=False)
    assert str(refused.value) == (
        f"{run} was played with mine as rule(shoot=47.39), and it is rule(shoot=30) now (its level file "
        "edited since?): finish it with the level as it was, or play it again in a new folder"
    )
    _levels_dir(monkeypatch, levels, {"mine": "rule(shoot=47.39)"})  # put back: it goes on
    finished = run_tournament(config, run, resume=True, threads=1, progress=False)
    assert finished.summary == run_tournament(config, threads=1, progress=False).summary


def test_a_run_resumed_by_other_sources_that_play_it_alike_says_so(tmp_path: Path) -> None:
    """Other sources of the same version (an edit elsewhere) that play the first chunk as recorded
    go on, and say so."""
    run = tmp_path / "run"
    config = _run_stopped_after_one_chunk(run, ["rule", "random"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["played_as"] == ["rule", "random"]
    manifest["plays"] = "0123456789abcdef"  # another digest: other kernel sources
    (run / "manifest.json").write_text(json.dumps(manifest))
    said: list[str] = []
    run_tournament(config, run, resume=True, threads=1, progress=False, report=said.append)
    assert said == [
        f"hearts-sim: {run} was started by other sources than these, which play deals 0 to 3 as recorded"
    ]


def test_a_level_file_written_in_place_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The levels were read again when their folder's mtime changed, which a file written in place
    (an editor's save, ``write_text``) leaves as it was: a notebook went on playing the old level."""
    _levels_dir(monkeypatch, tmp_path, {"mine": "rule(careless=0.2)"})
    folder_time = tmp_path.stat().st_mtime_ns
    assert parse_agent("mine").plays == "rule(careless=0.2)"
    _levels_dir(monkeypatch, tmp_path, {"mine": "rule(careless=0.25)"})
    assert tmp_path.stat().st_mtime_ns == folder_time  # written in place: the folder is as it was
    assert parse_agent("mine").plays == "rule(careless=0.25)"


def test_a_run_resumed_before_its_first_chunk_keeps_what_it_plays_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with no chunk played is played from its resume on: its manifest took the resuming
    code's digest but kept the level's old settings, so putting the old file back was accepted and
    mixed the two (the review of 2026-12-07)."""
    levels = tmp_path / "levels"
    levels.mkdir()
    _levels_dir(monkeypatch, levels, {"mine": "rule(shoot=47.39)"})
    run = tmp_path / "run"
    config = TournamentConfig(("mine", "random"), deals=8, seed=0, chunk_deals=4)
    with pytest.raises(tournament.Interrupted):
        run_tournament(config, run, stop_after_chunks=0, threads=1, progress=False)
    _levels_dir(monkeypatch, levels, {"mine": "rule(shoot=30)"})
    with pytest.raises(tournament.Interrupted):
        run_tournament(config, run, resume=True, stop_after_chunks=1, threads=1, progress=False)
    assert json.loads((run / "manifest.json").read_text())["played_as"] == ["rule(shoot=30)", "random"]
    _levels_dir(monkeypatch, levels, {"mine": "rule(shoot=47.39)"})
    with pytest.raises(
        TournamentError, match=r"played with mine as rule\(shoot=30\), and it is rule\(shoot=47.39\)"
    ):
        run_tournament(config, run, resume=True, threads=1, progress=False)


def test_a_level_spelled_otherwise_by_another_version_is_not_an_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a level played is compared by its settings, not its text: a version that wrote a
    parameter otherwise (``shoot=47.390``) plays the same, and the resume goes on."""
    levels = tmp_path / "levels"
    levels.mkdir()
    _levels_dir(monkeypatch, levels, {"mine": "rule(shoot=47.39)"})
    run = tmp_path / "run"
    config = _run_stopped_after_one_chunk(run, ["mine", "random"])
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(played_as=["rule(shoot=47.390)", "random"], plays="0123456789abcdef")
    (run / "manifest.json").write_text(json.dumps(manifest))
    finished = run_tournament(config, run, resume=True, threads=1, progress=False)
    assert finished.summary == run_tournament(config, threads=1, progress=False).summary
