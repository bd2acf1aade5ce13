"""Tournaments: balanced schedules, statistics, records, interrupt-and-resume (bad command-line
input: test_bad_input.py; damaged records: test_records.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import types
import warnings
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from IPython.lib.pretty import pretty

from hearts_sim.core.errors import (
    InputError,
    Terminated,
    interrupts_deferred,
    signal_handlers,
    signals_unwrapped,
    sigterm_as_interrupt,
)
from hearts_sim.core.rules import Rules
from hearts_sim.selfplay.simulate import progress_shown
from hearts_sim.studies import stats, tournament
from hearts_sim.studies.kept import JobStatus
from hearts_sim.studies.stats import (
    BY_DIRECTION,
    SPRT_MIN_DEALS,
    Sprt,
    Tally,
    format_summary,
    match_json,
    new_tally,
    tally_hands,
)
from hearts_sim.studies.tournament import (
    Interrupted,
    SequentialRunWarning,
    TournamentConfig,
    TournamentError,
    combine_runs,
    make_config,
    resume_tournament,
    run_tournament,
    seatings,
)
from hearts_sim.studies.tune import TuneResult

try:
    from tests.signals import started, wait_for_a_chunk
except ImportError:  # run from inside tests/
    from signals import started, wait_for_a_chunk  # type: ignore[no-redef]

CLI = [sys.executable, "-m", "hearts_sim"]


@pytest.mark.parametrize("n_players", [3, 4, 5])
@pytest.mark.parametrize("n_agents", [1, 2, 3, 4, 5, 6])
def test_every_agent_sits_in_every_seat_equally_often(n_agents: int, n_players: int) -> None:
    schedule = seatings(n_agents, n_players)
    assert len(set(schedule)) == len(schedule), "a seating is repeated"
    for seat in range(n_players):
        counts = Counter(s[seat] for s in schedule)
        assert set(counts) == set(range(n_agents)), f"seat {seat} misses an agent"
        assert len(set(counts.values())) == 1, f"seat {seat} is unbalanced: {counts}"
    if n_agents == 2:
        assert len(schedule) == 2**n_players - 2  # every mix of the two agents
    if n_agents == n_players:
        assert len(schedule) == np.prod(range(1, n_players + 1))  # every permutation


def test_every_deal_is_played_in_every_seating(tmp_path: Path) -> None:
    config = TournamentConfig(("lowest", "random", "highest"), deals=50, chunk_deals=20)
    run_tournament(config, tmp_path / "run", progress=False)
    records = pd.read_parquet(tmp_path / "run" / "records")
    n_seatings = len(config.seatings())
    assert len(records) == 50 * n_seatings
    per_deal = records.groupby("deal")["seating"].agg(lambda s: tuple(sorted(s)))
    assert (per_deal == tuple(range(n_seatings))).all()
    # the same deal: identical dealt cards in every seating
    assert (records.groupby("deal")["dealt_0"].nunique() == 1).all()


def test_identical_agents_difference_covers_zero() -> None:
    summary = run_tournament(make_config(["random", "random"], deals=400), progress=False).summary
    (pair,) = summary["pairs"]
    low, high = pair["ci95"]
    assert low <= 0 <= high
    assert [a["name"] for a in summary["agents"]] == ["random#1", "random#2"]


def test_lowest_beats_highest_by_a_large_margin() -> None:
    summary = run_tournament(make_config(["lowest", "highest"], deals=1000), progress=False).summary
    (pair,) = summary["pairs"]
    assert pair["a_minus_b"] < -2.0  # lowest takes far fewer points than highest
    assert pair["ci95"][1] < 0 and pair["p_value"] < 1e-6
    points = {a["name"]: a["points_per_hand"] for a in summary["agents"]}
    # duplicate play over all 14 seatings: the two averages weigh every seat equally
    assert points["lowest"] < points["highest"]


@pytest.mark.parametrize(
    ("agents", "preset"), [(["lowest", "random"], "standard"), (["rule", "random", "lowest"], "black_maria")]
)
def test_summary_figures_match_the_records(agents: list[str], preset: str, tmp_path: Path) -> None:
    """Every figure the tally folds in (``stats._chunk_sums``, one pass over a chunk) is what the
    records say, overall and by pass direction."""
    rules = Rules.preset(preset)
    result = run_tournament(
        make_config(agents, rules=rules, deals=300, seed=5), tmp_path / "run", progress=False
    )
    records = pd.read_parquet(tmp_path / "run" / "records")
    # the shooter's agent ("" for none): a moon shot by a copy of the seat's own agent is not suffered
    seat_agents = np.stack([records[f"agent_{s}"].astype(str) for s in range(rules.n_players)], axis=1)
    shooter = records["moon_shooter"].to_numpy(dtype=np.int64)
    shooter_agent = np.where(shooter >= 0, seat_agents[np.arange(len(records)), np.maximum(shooter, 0)], "")
    long = pd.concat(
        pd.DataFrame(
            {
                "agent": records[f"agent_{s}"].astype(str),
                "direction": records["pass_direction"].astype(str),
                "score": records[f"score_{s}"],
                "shot": records["moon_shooter"] == s,
                "suffered": (shooter >= 0) & (shooter_agent != seat_agents[:, s]),
                "qs": records["qs_taker"] == s,
                "tricks": records[f"tricks_{s}"],
            }
        )
        for s in range(rules.n_players)
    )
    by_agent = long.groupby("agent")
    for row in result.summary["agents"]:
        name = row["name"]
        assert row["hands"] == by_agent.size()[name]
        assert row["points_per_hand"] == pytest.approx(by_agent["score"].mean()[name], abs=1e-4)
        assert row["moon_rate"] == pytest.approx(1000 * by_agent["shot"].mean()[name], abs=1e-4)
        assert row["moons_suffered_rate"] == pytest.approx(1000 * by_agent["suffered"].mean()[name], abs=1e-4)
        assert row["qs_rate"] == pytest.approx(by_agent["qs"].mean()[name], abs=1e-4)
        assert row["tricks_per_hand"] == pytest.approx(by_agent["tricks"].mean()[name], abs=1e-4)
    means = long.groupby(["direction", "agent"])["score"].mean()
    for pair in result.summary["pairs"]:
        for way in pair["by_pass_direction"]:
            d = way["direction"]
            assert way["deals"] * len(result.config.seatings()) == (records["pass_direction"] == d).sum()
            assert way["a_minus_b"] == pytest.approx(means[d, pair["a"]] - means[d, pair["b"]], abs=1e-4)
    tally = Tally(**json.loads((tmp_path / "run" / "manifest.json").read_text())["tally"])
    sums = long.groupby(["direction", "agent"])[["shot", "suffered", "qs", "tricks"]].sum()
    for d, its in tally.by_direction.items():  # the counts behind the tables by direction
        for name, column in [("moons_made", "shot"), ("moons_suffered", "suffered"), ("qs_taken", "qs")]:
            assert getattr(its, name) == [sums[column][d, a] for a in agents]
        assert its.tricks == [sums["tricks"][d, a] for a in agents]


def test_records_are_encoded_beside_the_play_and_committed_in_order(tmp_path: Path) -> None:
    """Each chunk's Parquet parts are encoded on ``ENCODING_THREADS`` threads while the next
    chunks play (rule against random with records: 0.60 to 0.91 million hands a second on two
    cores), and committed in chunk order: ``on_chunk`` sees each chunk counted by the manifest
    when it is called, the parts are those of a run that encodes one chunk at a time (the
    resume of a run stopped after every chunk), and no encoding thread outlives the run."""
    config = TournamentConfig(("rule", "random"), deals=240, seed=5, chunk_deals=20)  # 12 chunks
    out = tmp_path / "run"
    counted: list[tuple[int, int]] = []

    def check(chunk: int) -> None:
        counted.append((chunk, json.loads((out / "manifest.json").read_text())["chunks_done"]))

    whole = run_tournament(config, out, progress=False, on_chunk=check)
    assert counted == [(chunk, chunk + 1) for chunk in range(12)]
    assert not [t for t in threading.enumerate() if t.name.startswith("hearts-sim-parts")]
    one_by_one = tmp_path / "one_by_one"
    for chunk in range(12):
        with contextlib.suppress(tournament.Interrupted):  # the last one finishes the run
            run_tournament(config, one_by_one, resume=chunk > 0, progress=False, stop_after_chunks=1)
    manifests = [json.loads((run / "manifest.json").read_text()) for run in (out, one_by_one)]
    assert manifests[0]["parts"] == manifests[1]["parts"] and manifests[1]["summary"] == whole.summary


def test_a_ctrl_c_during_a_commit_comes_after_it_and_the_chunks_waiting_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a chunk is committed waits for the commit; the chunks encoded behind it are
    committed too before the run stops (they were dropped as if the commit had failed)."""
    config = TournamentConfig(("lowest", "random"), deals=60, seed=4, chunk_deals=20)
    out = tmp_path / "run"
    with pytest.raises(tournament.Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=0)  # the manifest, no chunk
    commit = tournament._commit

    def commit_then_ctrl_c(*args: object, **kwargs: object) -> None:
        commit(*args, **kwargs)  # type: ignore[arg-type]
        if args[2] == 0:
            signal.raise_signal(signal.SIGINT)  # held until the commit is done

    monkeypatch.setattr(tournament, "_commit", commit_then_ctrl_c)
    seatings = np.array(config.seatings())
    tally = new_tally(config.seatings(), 2, False)
    committer = tournament._Committer(
        out, json.loads((out / "manifest.json").read_text()), config.table(), None
    )
    with committer, signal_handlers({signal.SIGINT: signal.default_int_handler}):
        for chunk in range(3):
            records, hands = tournament.chunk_records(config, chunk)
            tally_hands(tally, records, seatings, len(seatings))
            parts = committer.pool.submit(
                tournament._chunk_parts, config, committer.table, records, hands, committer.kept
            )
            committer.waiting.append((chunk, parts, asdict(tally), 3))  # as add() queues, uncommitted
        with pytest.raises(KeyboardInterrupt):
            committer.settle()
        assert not committer.failed
        committer.settle()
    assert json.loads((out / "manifest.json").read_text())["chunks_done"] == 3
    assert tournament.resume_tournament(out, progress=False).summary == run_tournament(config).summary


def test_interrupt_and_resume_is_identical_to_an_uninterrupted_run(tmp_path: Path) -> None:
    config = TournamentConfig(("lowest", "random"), deals=90, seed=3, chunk_deals=20)
    whole = run_tournament(config, tmp_path / "whole", progress=False)
    with pytest.raises(Interrupted, match="resume with"):
        run_tournament(config, tmp_path / "parts", progress=False, stop_after_chunks=2)
    kept = sorted((tmp_path / "parts" / "records").iterdir())
    assert len(kept) == 2  # every finished chunk is on disk
    resumed = resume_tournament(tmp_path / "parts", progress=False)
    assert json.dumps(resumed.summary, sort_keys=True) == json.dumps(whole.summary, sort_keys=True)
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "whole" / "records"), pd.read_parquet(tmp_path / "parts" / "records")
    )
    manifests = [json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("whole", "parts")]
    assert manifests[0]["summary"] == manifests[1]["summary"]


def test_games_report_win_rates_and_ratings() -> None:
    summary = run_tournament(
        make_config(["lowest", "highest"], rules="quick", deals=60, games=True), progress=False
    ).summary
    rows = {a["name"]: a for a in summary["agents"]}
    assert rows["lowest"]["win_rate"] > rows["highest"]["win_rate"]
    assert rows["lowest"]["rating"]["mu"] > rows["highest"]["rating"]["mu"]
    assert rows["lowest"]["mean_final_score"] < rows["highest"]["mean_final_score"]
    assert "by_pass_direction" not in summary["pairs"][0]  # a game passes every way
    assert summary["undecided_games"] == 0 and "cut off" not in format_summary(summary)


def test_games_cut_off_undecided_are_counted_and_said(tmp_path: Path) -> None:
    """A target these agents need more than 1,000 hands for: every game was cut off, win rates
    of 0 and ratings printed without a word. The summary counts them (kept in the manifest's
    tally, so a resumed run counts them too) and its table says so."""
    config = make_config(["lowest", "highest"], rule_overrides=["target_score=20000"], deals=1, games=True)
    summary = run_tournament(config, out=tmp_path / "far", progress=False).summary
    assert summary["undecided_games"] == 14 == summary["deals"] * summary["seatings"]
    assert all(a["win_rate"] == 0 for a in summary["agents"])
    assert "14 of 14 games cut off undecided after 1,000 hands: no one won them" in format_summary(summary)
    manifest = json.loads((tmp_path / "far" / "manifest.json").read_text())
    assert manifest["tally"]["undecided"] == 14
    # a run begun before they were counted: its resume cannot know the chunks before, and says none
    resumed = _resumed_without(replace(config, deals=2, chunk_deals=1), tmp_path / "old", "undecided")
    assert resumed["undecided_games"] is None and "cut off" not in format_summary(resumed)


def test_tables_round_the_figures_once() -> None:
    """The summary's JSON rounds to 4 decimals and its table prints 3, from the unrounded figures:
    a difference of -2.940476 was rounded to -2.9405 and then printed -2.941 (as combine of
    ``match rule easy --deals 300`` on seeds 1 and 2 printed -1.954 for -1.953452)."""
    tally = Tally(n_agents=2, slots_per_deal=[28, 28])
    tally.add_deal_sums(np.array([[100, 182], [100, 182], [100, 183]]))  # -247 / (3 deals x 28) a slot
    tally.hands = 3 * 14
    summary = stats.summarize(tally, ["a", "b"], games=False, seatings=14, rules=Rules().describe(), seed=1)
    assert "a - b: -2.940 points/hand" in format_summary(summary)
    assert summary["pairs"][0]["a_minus_b"] == -2.9405 and json.loads(json.dumps(summary)) == summary
    assert stats.exact_figures(summary)["pairs"][0]["a_minus_b"] == pytest.approx(-247 / 84, abs=1e-15)


def _games_by_seed(out: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per game seed and agent, from a run of games' records: the final scores and the hands of
    the games its seats played (Y and X), and the agents' names."""
    records = pd.read_parquet(out / "records")
    seats = [c.removeprefix("agent_") for c in records.columns if c.startswith("agent_")]
    long = pd.concat(
        pd.DataFrame(
            {
                "game": records["game"],
                "agent": records[f"agent_{s}"],
                "final": records[f"final_score_{s}"],
                "hands": records["hands"],
            }
        )
        for s in seats
    )
    by_seed = long.groupby(["game", "agent"])[["final", "hands"]].sum().unstack()
    names = list(by_seed["final"].columns)
    return by_seed["final"].to_numpy(np.float64), by_seed["hands"].to_numpy(np.float64), names


def test_games_points_per_hand_and_their_difference_are_ratios_over_game_seeds(tmp_path: Path) -> None:
    """Over games an agent's points per hand is its final scores over the hands its games lasted,
    and A - B the difference of the two: the pair was the per-game difference over the mean game
    length of both (normal - random -7.115, [-7.211, -7.020], where the table's rows gave 3.697 and
    10.253, -6.556), and every interval left out how the games' lengths vary. Checked against the
    delta method computed here from the records, clustered on the game seed."""
    from scipy.stats import t

    config = make_config(["lowest", "random"], rules="quick", deals=40, seed=3, games=True)
    summary = run_tournament(config, tmp_path / "g", progress=False).summary
    y, x, names = _games_by_seed(tmp_path / "g")
    n = len(y)
    ratio = y.sum(axis=0) / x.sum(axis=0)
    z = (y - ratio * x) / x.mean(axis=0)  # each seed's linearised residual, per agent
    q = t.ppf(0.975, n - 1)
    rows = {a["name"]: a for a in summary["agents"]}
    for i, name in enumerate(names):
        half = q * z[:, i].std(ddof=1) / np.sqrt(n)
        assert rows[name]["points_per_hand"] == pytest.approx(ratio[i], abs=1e-4)
        assert rows[name]["ci95"] == pytest.approx([ratio[i] - half, ratio[i] + half], abs=1e-4)
    a, b = names.index("lowest"), names.index("random")
    diff = ratio[a] - ratio[b]
    se = (z[:, a] - z[:, b]).std(ddof=1) / np.sqrt(n)
    pair = summary["pairs"][0]
    rows_diff = rows["lowest"]["points_per_hand"] - rows["random"]["points_per_hand"]
    assert pair["a_minus_b"] == pytest.approx(rows_diff, abs=2e-4)
    assert pair["a_minus_b"] == pytest.approx(diff, abs=1e-4)
    assert pair["ci95"] == pytest.approx([diff - q * se, diff + q * se], abs=1e-4)
    assert pair["p_value"] == pytest.approx(2 * t.sf(abs(diff) / se, n - 1), rel=1e-3)


def test_games_count_as_suffered_the_moons_of_other_agents_only(tmp_path: Path) -> None:
    """``suffered/1k`` over games: the moons shot in an agent's games by the seats of another
    agent (its copies' counted too until 2026-12-07)."""
    config = make_config(["lowest", "random"], rules="quick", deals=30, seed=4, games=True)
    summary = run_tournament(config, tmp_path / "g", progress=False).summary
    records = pd.read_parquet(tmp_path / "g" / "records")
    agents = np.stack([records[f"agent_{s}"].astype(str) for s in range(4)], axis=1)
    moons = np.stack([records[f"moons_{s}"] for s in range(4)], axis=1)
    for row in summary["agents"]:
        mine, theirs = agents == row["name"], agents != row["name"]
        suffered = (mine.sum(axis=1) * (moons * theirs).sum(axis=1)).sum()
        assert (moons * mine).sum() > 0 and (moons * theirs).sum() > 0  # moons on both sides to tell apart
        assert row["moons_suffered_rate"] == pytest.approx(1000 * suffered / row["hands"], abs=1e-4)


def test_games_run_without_the_sums_of_game_lengths_has_figures_without_intervals(tmp_path: Path) -> None:
    """A run of games whose tally lacks the sums the ratio's interval needs (begun before
    2026-12-07's fix): resumed, or shown by ``status`` once finished (its kept summary was of the
    old kind), its points per hand and A - B are the ratios, its intervals and p-values none, and
    its table says why."""
    config = make_config(["lowest", "random"], rules="quick", deals=8, chunk_deals=4, seed=3, games=True)
    whole = run_tournament(config, tmp_path / "new", progress=False).summary
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "old", progress=False, stop_after_chunks=1)
    manifest_file = tmp_path / "old" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    for key in ("hands_square_sum", "score_hands_sum"):
        del manifest["tally"][key]
    manifest_file.write_text(json.dumps(manifest))
    resumed = resume_tournament(tmp_path / "old", progress=False).summary
    for summary in (resumed, tournament.run_status(tmp_path / "old").summary or {}):
        points = [a["points_per_hand"] for a in summary["agents"]]
        assert points == [a["points_per_hand"] for a in whole["agents"]]
        assert summary["pairs"][0]["a_minus_b"] == whole["pairs"][0]["a_minus_b"]
        assert all(a["ci95"] == [None, None] for a in summary["agents"])
        assert summary["pairs"][0]["ci95"] == [None, None] and summary["pairs"][0]["p_value"] is None
        assert stats.NO_GAME_INTERVALS in format_summary(summary)
    assert "intervals_kept" not in whole and stats.NO_GAME_INTERVALS not in format_summary(whole)


def test_a_tally_that_counted_the_agents_own_moons_as_suffered_shows_no_suffered_rate(tmp_path: Path) -> None:
    """A tally begun before 2026-12-07 counted as suffered the moons of an agent's own copies too,
    and nothing told its chunks from a resume's: resumed, shown by ``status`` or combined, such a
    run shows no suffered/1k (``-``, and a line that says why), where its other figures stand."""
    config = make_config(["normal", "easy"], deals=8, chunk_deals=4, seed=3)
    whole = run_tournament(config, tmp_path / "new", progress=False).summary
    other = run_tournament(replace(config, seed=4), tmp_path / "other", progress=False).summary
    resumed = _resumed_without(config, tmp_path / "old", "suffered_by_others")
    combined = combine_runs([tmp_path / "old", tmp_path / "other"])
    for summary in (resumed, tournament.run_status(tmp_path / "old").summary or {}, combined):
        assert [a["moons_suffered_rate"] for a in summary["agents"]] == [None, None]
        table = format_summary(summary)
        assert stats.NO_SUFFERED in table
        rows = [line.split() for line in table.splitlines() if re.match(r"(normal|easy) +\d", line)]
        assert len(rows) == 2 and all(row[5] == "-" for row in rows), table
    for a, b in zip(resumed["agents"], whole["agents"], strict=True):
        assert {**a, "moons_suffered_rate": None} == {**b, "moons_suffered_rate": None}
    for summary in (whole, other, combine_runs([tmp_path / "new", tmp_path / "other"])):
        assert all(a["moons_suffered_rate"] is not None for a in summary["agents"])
        assert stats.NO_SUFFERED not in format_summary(summary)


def test_games_win_rates_have_intervals_over_game_seeds(tmp_path: Path) -> None:
    """A win rate over games was a bare figure, and A - B had none, until 2026-12-08: a level's
    lead in games won could not be told from chance. Checked against Student's t computed here
    from the records: per game seed, the games an agent's seats won over its seats (every seating
    of the seed one sample), and A - B paired by seed."""
    from scipy.stats import t

    config = make_config(
        ["lowest", "random", "rule"], rules="quick", deals=30, chunk_deals=10, seed=5, games=True
    )
    summary = run_tournament(config, tmp_path / "g", progress=False).summary
    records = pd.read_parquet(tmp_path / "g" / "records")
    long = pd.concat(
        pd.DataFrame({"game": records["game"], "agent": records[f"agent_{s}"], "won": records[f"won_{s}"]})
        for s in range(4)
    )
    by_seed = long.astype({"won": np.int64}).groupby(["game", "agent"])["won"].agg(["sum", "size"])
    rate = (by_seed["sum"] / by_seed["size"]).unstack()  # a row a game seed, a column an agent
    n = len(rate)
    q = t.ppf(0.975, n - 1)
    rows = {a["name"]: a for a in summary["agents"]}
    for name in rate.columns:
        x = rate[name].to_numpy()
        half = q * x.std(ddof=1) / np.sqrt(n)
        assert half > 0 and rows[name]["win_rate"] == pytest.approx(x.mean(), abs=1e-4)
        assert rows[name]["win_rate_ci95"] == pytest.approx([x.mean() - half, x.mean() + half], abs=1e-4)
    table = format_summary(summary)
    for pair in summary["pairs"]:
        d = (rate[pair["a"]] - rate[pair["b"]]).to_numpy()
        se = d.std(ddof=1) / np.sqrt(n)
        assert pair["win_rate_a_minus_b"] == pytest.approx(d.mean(), abs=1e-4)
        assert pair["win_rate_ci95"] == pytest.approx([d.mean() - q * se, d.mean() + q * se], abs=1e-4)
        assert pair["win_rate_p_value"] == pytest.approx(2 * t.sf(abs(d.mean()) / se, n - 1), rel=1e-3)
        assert f"  win rate, {pair['a']} - {pair['b']}: {pair['win_rate_a_minus_b']:+.3f}, 95% CI [" in table
    exact = stats.exact_figures(summary)["agents"][2]
    low, high = exact["win_rate_ci95"]
    assert re.search(rf"^rule .* {exact['win_rate']:.3f} \[{low:.3f}, {high:.3f}\] ", table, re.MULTILINE), (
        table
    )
    assert stats.NO_WIN_INTERVALS not in table
    resumed = _resumed_without(config, tmp_path / "old", "wins_square_sum")  # begun before they were kept
    assert [a["win_rate"] for a in resumed["agents"]] == [a["win_rate"] for a in summary["agents"]]
    assert all(a["win_rate_ci95"] == [None, None] for a in resumed["agents"])
    assert all(p["win_rate_p_value"] is None for p in resumed["pairs"])
    assert stats.NO_WIN_INTERVALS in format_summary(resumed)


def _resumed_without(config: TournamentConfig, out: Path, key: str) -> dict[str, Any]:
    """The summary of ``config`` stopped after its first chunk in ``out``, its manifest's tally
    then without ``key`` (a run begun before the tally kept it), and resumed."""
    with pytest.raises(Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=1)
    manifest_file = out / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    del manifest["tally"][key]
    manifest_file.write_text(json.dumps(manifest))
    return resume_tournament(out, progress=False).summary


@pytest.mark.parametrize("k", [2, 3, 5])
def test_game_ratings_are_openskills_to_the_last_bit(k: int) -> None:
    """``stats.rate_games`` rates a run's games in numba (openskill's own ``rate`` was most of the
    time of a run of games); openskill, rating the same games one by one, is the oracle: the
    same mu and sigma, bit for bit, over a thousand games with ties and absent agents."""
    from openskill.models import PlackettLuce

    rng = np.random.default_rng(k)
    present = rng.random((1000, k)) < 0.8
    means = rng.integers(0, 8, (1000, k)) * 12.5  # many ties
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(k)]
    for row in range(len(present)):
        teams = [a for a in range(k) if present[row, a]]
        if len(teams) > 1:
            rated = model.rate([[ratings[a]] for a in teams], scores=[-means[row, a] for a in teams])
            for a, (rating,) in zip(teams, rated, strict=True):
                ratings[a] = rating
    mu, sigma = np.full(k, model.mu), np.full(k, model.sigma)
    stats.rate_games(mu, sigma, present, means, model.beta, model.kappa, model.tau)
    assert mu.tolist() == [r.mu for r in ratings] and sigma.tolist() == [r.sigma for r in ratings]


class HandsSeen(tournament.LocalRunner):
    """The local runner, counting the hands of games each chunk brought back."""

    def __init__(self) -> None:
        super().__init__()
        self.hands: list[int] = []

    def chunks(self, config: TournamentConfig, chunks: range, hands: bool = True) -> tournament.PlayedChunks:
        for chunk, (records, kept) in super().chunks(config, chunks, hands):
            self.hands.append(len(kept))
            yield chunk, (records, kept)


def test_games_keep_their_hands_only_for_a_run_that_writes_them(tmp_path: Path) -> None:
    config = make_config(["lowest", "random"], rules="quick", deals=8, seed=2, games=True)
    quiet, written = HandsSeen(), HandsSeen()
    summary = run_tournament(config, runner=quiet, progress=False).summary
    assert quiet.hands and set(quiet.hands) == {0}
    assert run_tournament(config, tmp_path / "run", runner=written, progress=False).summary == summary
    assert min(written.hands) > 0 and len(written.hands) == len(quiet.hands)


def test_a_different_run_cannot_be_resumed_into(tmp_path: Path) -> None:
    run_tournament(TournamentConfig(("lowest", "random"), deals=10), tmp_path / "run", progress=False)
    # a finished run: "continue it with --resume" went on with that run, which had nothing left
    finished = (
        f"already holds a finished run .hearts-sim status {tmp_path / 'run'} shows it.: choose a new --out"
    )
    with pytest.raises(TournamentError, match=finished):
        run_tournament(TournamentConfig(("lowest", "random"), deals=10), tmp_path / "run", progress=False)
    with pytest.raises(TournamentError, match="different tournament"):
        run_tournament(
            TournamentConfig(("lowest", "highest"), deals=10), tmp_path / "run", resume=True, progress=False
        )


@pytest.mark.skipif(sys.platform == "win32", reason="flock: no lock on Windows")
def test_a_run_being_written_is_refused_to_a_second_writer(tmp_path: Path) -> None:
    """A second ``--resume`` (a scheduler's retry, a second terminal) played the same chunks beside
    the first, and the manifest kept the count of whichever wrote last: "39 of 50 chunks" for a
    run the first had finished. Now the run is locked while it is written, and the lock goes
    with the writer."""
    config = TournamentConfig(("lowest", "random"), deals=60, seed=4, chunk_deals=20)
    out = tmp_path / "run"
    refusals: list[str] = []

    def second_writer(chunk: int) -> None:
        for attempt in (
            lambda: resume_tournament(out, progress=False),
            lambda: run_tournament(config, out, progress=False),  # a new run into it
        ):
            with pytest.raises(TournamentError) as refused:
                attempt()
            refusals.append(str(refused.value))

    whole = run_tournament(config, out, progress=False, on_chunk=second_writer)
    assert len(refusals) == 6  # both refused after each of the three chunks
    writer = f"{out} is being written by this process (pid {os.getpid()}), in another call"
    resume = f"hearts-sim tournament --resume {out}"
    assert refusals[0::2] == [f"{writer}: wait for it to end, or stop it and then resume with {resume}"] * 3
    # a new run lost the folder: resuming it would go on with the other run (two runs begun at once)
    assert refusals[1::2] == [f"{writer}: choose another --out"] * 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["chunks_done"] == 3 and manifest["summary"] == whole.summary
    assert resume_tournament(out, progress=False).summary == whole.summary  # free again
    match = tmp_path / "match"  # a match's run resumes as a match (it said tournament)
    refusals.clear()
    command = ["hearts-sim", "match", "lowest", "random", "--out", str(match)]
    run_tournament(config, match, progress=False, command=command, on_chunk=lambda chunk: refusals.append(
        str(pytest.raises(TournamentError, resume_tournament, match, progress=False).value)
    ))  # fmt: skip
    assert set(refusals) == {
        f"{match} is being written by this process (pid {os.getpid()}), in another call: wait for it to end, "
        f"or stop it and then resume with hearts-sim match --resume {match}"
    }


@pytest.mark.skipif(sys.platform == "win32", reason="flock: no lock on Windows")
def test_a_killed_writer_leaves_no_stale_lock(tmp_path: Path) -> None:
    """SIGKILL (the OOM killer, a scheduler's hard limit) gives the process no chance to clean up:
    the lock file stays, and the run resumes all the same (the kernel dropped the flock)."""
    out = tmp_path / "run"
    script = (
        "import os, signal\n"
        "from hearts_sim.studies.tournament import TournamentConfig, run_tournament\n"
        "config = TournamentConfig(('lowest', 'random'), deals=60, seed=4, chunk_deals=20)\n"
        f"run_tournament(config, {str(out)!r}, progress=False,\n"
        "               on_chunk=lambda chunk: os.kill(os.getpid(), signal.SIGKILL))\n"
    )
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (out / ".lock").read_text().strip().isdigit()  # the killed writer's pid
    resumed = resume_tournament(out, progress=False)
    whole = run_tournament(
        TournamentConfig(("lowest", "random"), deals=60, seed=4, chunk_deals=20), progress=False
    )
    assert resumed.summary == whole.summary


def test_a_filesystem_without_locks_still_takes_the_run(tmp_path: Path, monkeypatch) -> None:
    """Some network mounts refuse flock (ENOLCK): the run is written unlocked, not refused."""
    import errno

    from hearts_sim.core import files

    if files.fcntl is None:
        pytest.skip("no fcntl")

    def no_locks(descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(files.fcntl, "flock", no_locks)
    config = TournamentConfig(("lowest", "random"), deals=20, seed=4, chunk_deals=10)
    assert run_tournament(config, tmp_path / "run", progress=False).summary["agents"]
    assert (tmp_path / "run" / ".lock").read_text() == ""  # no lock taken, no pid written


def test_tally_pair_sums_are_the_sums_of_each_deals_differences() -> None:
    """The Gram-matrix form of ``add_deal_sums`` (a loop over the pairs took 2.8 s a chunk at 256
    agents) against the definition: per deal, D_ab = S_a c_b - S_b c_a; exact Python integers
    (the manifest's JSON), over two chunks, with unequal slots and sums near the int64 bound's
    margin (|S| < 2**16)."""
    rng = np.random.default_rng(3)
    slots = [1, 3, 12, 7, 2]
    chunks = [rng.integers(-(2**15), 2**15, size=(deals, 5)) for deals in (40, 1)]
    tally = Tally(n_agents=5, slots_per_deal=slots)
    for chunk in chunks:
        tally.add_deal_sums(chunk)
    sums = [[int(x) for x in row] for chunk in chunks for row in chunk]
    assert tally.deals == 41
    assert tally.score_sum == [sum(row[a] for row in sums) for a in range(5)]
    assert tally.score_square_sum == [sum(row[a] ** 2 for row in sums) for a in range(5)]
    for a in range(5):
        for b in range(5):
            differences = [row[a] * slots[b] - row[b] * slots[a] for row in sums]
            assert tally.pair_sum[a][b] == sum(differences)
            assert tally.pair_square_sum[a][b] == sum(d * d for d in differences)
    assert all(type(x) is int for row in tally.pair_square_sum for x in row)
    json.dumps(dataclasses.asdict(tally))  # the manifest keeps it as JSON


# ------------------------------------------------------------------------------ sequential test
def _simulated_sprt(
    sprt: Sprt, truth: float, rng: np.random.Generator, cap: int = 3000
) -> tuple[str | None, int]:
    """(verdict, deals) of the test on a match whose per-deal differences are normal around
    ``truth`` with a spread of 1.3 points per hand (2,000-iteration screens of ``hard`` show 1.2
    to 1.9), checked every 4 deals as a search agent's chunks are."""
    tally = Tally(n_agents=2, slots_per_deal=[10, 10])  # differences in tenths of a point
    while tally.deals < cap:
        tenths = np.rint(10 * rng.normal(truth, 1.3, 4)).astype(np.int64)
        tally.add_deal_sums(np.stack([tenths, np.zeros_like(tenths)], axis=1))
        if (verdict := sprt.verdict(tally)) is not None:
            return verdict, tally.deals
    return None, tally.deals


def test_sprt_keeps_its_error_rates_and_needs_fewer_deals_than_a_fixed_match() -> None:
    sprt = Sprt(0.3)
    rng = np.random.default_rng(7)
    trials = 400
    null = [_simulated_sprt(sprt, 0.0, rng) for _ in range(trials)]
    gain = [_simulated_sprt(sprt, -0.3, rng) for _ in range(trials)]
    false_gain = sum(v == "H1" for v, _ in null) / trials
    missed = sum(v == "H0" for v, _ in gain) / trials
    assert false_gain < 0.085 and missed < 0.085  # alpha = beta = 0.05, 400 trials each
    assert all(v is not None for v, _ in null + gain)  # every test decided well before the cap
    # a fixed-length match with the same error rates needs ((1.645 + 1.645) * 1.3 / 0.3)^2 = 203 deals
    assert np.mean([d for _, d in null]) < 150 and np.mean([d for _, d in gain]) < 150
    assert min(d for _, d in null + gain) >= SPRT_MIN_DEALS


def test_sprt_llr_is_the_normal_likelihood_ratio_of_the_deals() -> None:
    from scipy import stats

    differences = np.array([-3.0, 1.0, 0.0, -2.0, 0.5, -1.5])
    tally = Tally(n_agents=2, slots_per_deal=[2, 2])  # a deal's difference: (S_a - S_b) / 2
    tally.add_deal_sums(np.stack([np.rint(2 * differences), np.zeros(6)], axis=1).astype(np.int64))
    sprt = Sprt(0.8)
    scale = differences.std(ddof=1)
    expected = (
        stats.norm.logpdf(differences, -0.8, scale).sum() - stats.norm.logpdf(differences, 0.0, scale).sum()
    )
    assert sprt.llr(tally) == pytest.approx(expected)
    shifted = Sprt(0.8, null=0.3)  # H0: a gain of 0.3 instead of none
    expected = (
        stats.norm.logpdf(differences, -0.8, scale).sum() - stats.norm.logpdf(differences, -0.3, scale).sum()
    )
    assert shifted.llr(tally) == pytest.approx(expected)
    assert sprt.bounds == pytest.approx((np.log(0.05 / 0.95), np.log(0.95 / 0.05)))
    assert sprt.verdict(tally) is None  # fewer deals than the test stops on


def test_a_decided_sprt_match_is_the_match_of_the_deals_it_played(tmp_path: Path) -> None:
    config = TournamentConfig(("lowest", "random"), deals=2000, seed=5, chunk_deals=10, sprt=Sprt(1.0))
    stopped = run_tournament(config, tmp_path / "sprt", progress=False)
    deals = stopped.summary["deals"]
    assert deals == SPRT_MIN_DEALS  # lowest is far better than random: H1 at the first look
    assert stopped.summary["sprt"]["verdict"] == "H1" and stopped.summary["sprt"]["deals_cap"] == 2000
    manifest = json.loads((tmp_path / "sprt" / "manifest.json").read_text())
    assert manifest["config"]["deals"] == deals and manifest["chunks_done"] == manifest["chunks_total"] == 3
    fixed = run_tournament(
        TournamentConfig(("lowest", "random"), deals=deals, seed=5, chunk_deals=10),
        tmp_path / "fixed",
        progress=False,
    )
    assert {k: v for k, v in stopped.summary.items() if k != "sprt"} == fixed.summary
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "sprt" / "records"), pd.read_parquet(tmp_path / "fixed" / "records")
    )
    assert combine_runs([tmp_path / "sprt"])["deals"] == deals  # a finished run
    assert resume_tournament(tmp_path / "sprt", progress=False).summary == stopped.summary
    told = format_summary(stopped.summary).splitlines()[-1]
    # the difference's p-value as well as its interval (the line named only the interval)
    early = "(stopped early: the difference, interval and p-value above lean toward this verdict)"
    assert told.endswith(f"H1 accepted after 30 of at most 2,000 deals {early}")
    at_the_cap = {**stopped.summary, "sprt": {**stopped.summary["sprt"], "deals_cap": deals}}
    assert format_summary(at_the_cap).endswith("H1 accepted after 30 of at most 30 deals")  # no early stop


def test_an_interrupted_sprt_match_resumes_to_the_same_verdict(tmp_path: Path) -> None:
    # rule and normal differ by about 0.1 points per hand: H0 (no gain of 1) after about a hundred deals
    config = TournamentConfig(("rule", "normal"), deals=1000, seed=3, chunk_deals=10, sprt=Sprt(1.0))
    whole = run_tournament(config, tmp_path / "whole", progress=False)
    assert whole.summary["sprt"]["verdict"] == "H0" and SPRT_MIN_DEALS < whole.summary["deals"] < 1000
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "parts", progress=False, stop_after_chunks=2)
    resumed = resume_tournament(tmp_path / "parts", progress=False)
    assert json.dumps(resumed.summary, sort_keys=True) == json.dumps(whole.summary, sort_keys=True)
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "whole" / "records"), pd.read_parquet(tmp_path / "parts" / "records")
    )


def test_a_stopped_match_is_resumed_as_a_match(tmp_path: Path) -> None:
    """A stopped ``match`` said to resume with ``hearts-sim tournament --resume``, which prints the
    tournament's summary (its JSON is not a match's); the subcommand that started it resumes it."""
    config = TournamentConfig(("rule", "random"), deals=40, seed=3, chunk_deals=4)
    for subcommand in ("match", "tournament"):
        out = tmp_path / subcommand
        started_by = ["hearts-sim", subcommand, "rule", "random", "--out", str(out)]
        with pytest.raises(Interrupted, match=f"resume with: hearts-sim {subcommand} --resume {out}$"):
            run_tournament(config, out, progress=False, stop_after_chunks=1, command=started_by)
        assert tournament.run_status(out).resume == f"hearts-sim {subcommand} --resume {out}"
    with pytest.raises(Interrupted, match="resume with: hearts-sim tournament --resume"):  # none recorded
        run_tournament(config, tmp_path / "python", progress=False, stop_after_chunks=1)
    with pytest.raises(
        Interrupted, match=r"^interrupted after 1 of 10 chunks: nothing is kept \(--out DIR keeps a run"
    ):
        run_tournament(config, None, progress=False, stop_after_chunks=1)  # it said how far it got alone


def test_match_resume_refuses_a_tournament_before_playing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``match --resume`` of a stopped tournament of three agents played the rest of it, then
    said it was not a match (the run finished on disk, exit code 2): refused before a deal."""
    from hearts_sim.apps.cli import main

    out = tmp_path / "three"
    config = TournamentConfig(("rule", "random", "lowest"), deals=40, seed=3, chunk_deals=4)
    with pytest.raises(Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=1)
    assert main(["match", "--resume", str(out), "--quiet"]) == 2
    said = capsys.readouterr().err.strip()
    assert said == (
        f"hearts-sim: error: {out} holds a tournament of 3 agents, not a match: "
        f"resume it with hearts-sim tournament --resume {out}"
    )
    status = tournament.run_status(out)
    assert (status.state, status.done) == ("stopped", 4)


def test_ctrl_c_after_the_last_chunk_says_the_run_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C between a kept run's last chunk and its printed results was a bare "hearts-sim:
    interrupted"; the run is whole on disk. Here the Ctrl-C comes as the results are formatted."""
    from hearts_sim.apps.cli import main

    def ctrl_c(*_: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(stats, "format_summary", ctrl_c)
    out = tmp_path / "run"
    assert main(["match", "rule", "lowest", "--deals", "4", "--threads", "1", "--out", str(out)]) == 130
    said = capsys.readouterr().err.splitlines()[-1]  # after a line on compiling, the first time
    assert (
        said == f"hearts-sim: interrupted after the run finished: hearts-sim status {out} prints its results"
    )
    assert tournament.run_status(out).state == "finished"
    assert main(["match", "rule", "lowest", "--deals", "4", "--threads", "1"]) == 130  # nothing kept
    assert capsys.readouterr().err.splitlines()[-1] == "hearts-sim: interrupted"

    def half_imported(out: Path) -> None:  # a stop inside scipy's import left it half made
        raise NameError("name '_ndimage_api' is not defined")

    monkeypatch.setattr(tournament, "run_status", half_imported)  # a 40-line traceback, exit code 1
    assert main(["match", "rule", "lowest", "--deals", "4", "--threads", "1", "--out", str(out) + "2"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == "hearts-sim: interrupted"


def test_an_undecided_sprt_match_plays_every_deal() -> None:
    config = TournamentConfig(("rule", "normal"), deals=40, seed=3, chunk_deals=10, sprt=Sprt(0.1))
    summary = run_tournament(config, progress=False).summary
    assert summary["deals"] == 40 and summary["sprt"]["verdict"] is None
    # the runs left undecided are those whose estimate stayed between the bounds: it said nothing
    told = "undecided after all 40 deals (--deals) (the difference, interval and p-value above lean toward "
    assert told + "halfway between H0 and H1)" in format_summary(summary)


# ------------------------------------------------------------------------------ command line
def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


def test_a_game_switch_over_hands_is_warned_of(capsys: pytest.CaptureFixture[str]) -> None:
    """``--rules quick`` without ``--games`` played hands labelled quick that then would not pool
    with standard ones, its game to 50 counting nowhere, without a word."""
    from hearts_sim.apps.cli import main

    match = ["match", "rule", "random", "--deals", "1", "--threads", "1", "--quiet"]
    assert main([*match, "--rules", "quick", "--rule", "tie_rule=share"]) == 0
    assert capsys.readouterr().err == (
        "hearts-sim: warning: target_score=50 and tie_rule=share count only in whole games (--games): "
        "these hands play the same without them\n"
    )
    for quiet in (["--rules", "quick", "--games"], ["--rule", "moon=off"]):
        assert main([*match, *quiet]) == 0
        assert capsys.readouterr().err == ""


def test_agents_that_differ_only_in_their_pass_under_rules_without_passing_are_warned_of(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A pass comparison under rules that never pass reported +0.000 [+0.000, +0.000] without a
    word (until 2026-12-08)."""
    from hearts_sim.apps.cli import main

    match = [
        "match",
        "pass=lowest,play=rule",
        "pass=random,play=rule",
        "--deals",
        "2",
        "--threads",
        "1",
        "--quiet",
    ]
    assert main([*match, "--rule", "pass_count=0"]) == 0
    said = capsys.readouterr()
    assert said.err == (
        "hearts-sim: warning: these agents differ only in how they pass, and these rules never pass: "
        "every hand plays alike\n"
    )
    assert "+0.000 points/hand" in said.out
    playing_apart = ["match", "pass=lowest,play=rule", "pass=random,play=random", *match[3:]]
    for other in (match, [*playing_apart, "--rule", "pass_count=0"]):  # they pass, or play apart
        assert main(other) == 0
        assert capsys.readouterr().err == ""


def test_match_json_has_the_documented_keys() -> None:
    result = _cli("match", "lowest", "highest", "--hands", "200", "--json")  # the old name of --deals
    assert result.returncode == 0, result.stderr
    assert result.stderr == (  # the deprecated alias says so (it never did)
        "hearts-sim: warning: --hands is the old name of --deals (deals, each played in every seating): "
        "write --deals\n"
    )
    data = json.loads(result.stdout)
    for key in ("agents", "deals", "points_per_hand", "a_minus_b", "ci95", "p_value"):
        assert key in data
    assert data["agents"] == ["lowest", "highest"] and data["deals"] == 200
    assert data["ci95"][0] < data["a_minus_b"] < data["ci95"][1] < 0
    assert data["sprt"] is None
    # each agent's figures, as the table prints them and a tournament's JSON gives them
    assert [agent["name"] for agent in data["per_agent"]] == data["agents"]
    for agent in data["per_agent"]:
        assert agent["points_per_hand"] == data["points_per_hand"][agent["name"]]
        assert agent["ci95"][0] < agent["points_per_hand"] < agent["ci95"][1]
        assert {"moon_rate", "qs_rate", "tricks_per_hand"} <= set(agent)


def test_match_sprt_on_the_command_line_stops_before_deals() -> None:
    result = _cli(
        "match", "lowest", "random", "--deals", "9000", "--sprt", "2", "--sprt-alpha", "0.01", "--json"
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["sprt"]["verdict"] == "H1" and data["sprt"]["alpha"] == 0.01 and data["sprt"]["beta"] == 0.05
    assert data["deals"] < 9000 and data["sprt"]["deals_cap"] == 9000  # one chunk of fast agents
    text = _cli("match", "lowest", "random", "--deals", "9000", "--sprt", "2", "--quiet")
    assert "H1 accepted" in text.stdout


def test_tournament_table_and_json(tmp_path: Path) -> None:
    config = tmp_path / "ladder.toml"
    config.write_text('agents = ["lowest", "random", "highest"]\nhands = 100\nrules = "qdan3"\n')
    text = _cli("tournament", "--config", str(config), "--quiet")
    assert text.returncode == 0, text.stderr
    assert "points/hand" in text.stdout and "lowest" in text.stdout
    assert (
        text.stderr
        == f"hearts-sim: warning: config file {config}: 'hands' is the old name of 'deals': write deals\n"
    )
    data = json.loads(_cli("tournament", "--config", str(config), "--json").stdout)
    assert data["deals"] == 100 and "n_players=3" in data["rules"]
    for agent in data["agents"]:
        assert {"name", "points_per_hand", "ci95", "moon_rate"} <= set(agent)


def _per_deal_differences(out: Path, a: str, direction: str | None = None) -> np.ndarray:
    """Agent ``a``'s mean score in each deal of a two-agent run's records less the other's (in
    the deals passed ``direction`` only, where one is given)."""
    records = pd.read_parquet(out / "records")
    if direction is not None:
        records = records[records["pass_direction"] == direction]
    seats = [c[len("agent_") :] for c in records.columns if c.startswith("agent_")]
    long = pd.concat(
        pd.DataFrame(
            {"deal": records["deal"], "mine": records[f"agent_{s}"] == a, "score": records[f"score_{s}"]}
        )
        for s in seats
    )
    means = long.groupby(["deal", "mine"])["score"].mean().unstack()
    return (means[True] - means[False]).to_numpy()


def _t_interval(differences: np.ndarray) -> tuple[float, list[float]]:
    from scipy import stats

    mean, se = differences.mean(), differences.std(ddof=1) / np.sqrt(len(differences))
    half = stats.t.ppf(0.975, len(differences) - 1) * se
    return mean, [mean - half, mean + half]


def test_differences_by_pass_direction_match_the_records(tmp_path: Path) -> None:
    result = run_tournament(
        TournamentConfig(("rule", "random"), deals=60, seed=7, chunk_deals=25),
        tmp_path / "run",
        progress=False,
    )
    (pair,) = result.summary["pairs"]
    rows = pair["by_pass_direction"]
    assert [row["direction"] for row in rows] == ["left", "right", "across", "none"]
    assert sum(row["deals"] for row in rows) == 60
    for row in rows:  # every direction's paired t-interval over its own deals, from the records
        differences = _per_deal_differences(tmp_path / "run", "rule", row["direction"])
        mean, ci = _t_interval(differences)
        assert row["deals"] == len(differences)
        assert row["a_minus_b"] == pytest.approx(mean, abs=1e-4)
        assert row["ci95"] == pytest.approx(ci, abs=1e-4)
    shown = format_summary(result.summary)
    assert "  by pass direction (95% each, unadjusted): left " in shown
    assert f"none {rows[3]['a_minus_b']:+.3f}" in shown
    assert match_json(result.summary)["by_pass_direction"] == rows
    # runs combined: the directions pool too
    run_tournament(make_config(["rule", "random"], deals=20, seed=8), tmp_path / "more", progress=False)
    pooled = combine_runs([tmp_path / "run", tmp_path / "more"])["pairs"][0]["by_pass_direction"]
    assert sum(row["deals"] for row in pooled) == 80
    across = np.concatenate([_per_deal_differences(tmp_path / d, "rule", "across") for d in ("run", "more")])
    assert pooled[2]["a_minus_b"] == pytest.approx(_t_interval(across)[0], abs=1e-4)


def test_counts_of_one_are_singular(tmp_path: Path) -> None:
    """``(1 deals)`` was printed after a direction played once."""
    one = run_tournament(make_config(["rule", "random"], deals=1, seed=3), tmp_path / "one", progress=False)
    assert format_summary(one.summary).startswith("1 deal x 14 seatings = 14 hands; ")
    two = run_tournament(make_config(["rule", "random"], deals=2, seed=3), tmp_path / "two", progress=False)
    shown = format_summary(two.summary)
    assert shown.startswith("2 deals x 14 seatings = 28 hands; ")
    one_each = re.escape(BY_DIRECTION) + r": left [-+][\d.]+ \(1 deal\); right [-+][\d.]+ \(1 deal\)$"
    assert re.search(one_each, shown, re.M)


def test_a_run_without_direction_tallies_shows_none(tmp_path: Path) -> None:
    """A run whose manifest predates the tallies by direction (or holds only part of its deals in
    them) combines and resumes without a split, rather than a split of some of its deals."""
    config = TournamentConfig(("lowest", "random"), deals=30, seed=4, chunk_deals=10)
    resumed = _resumed_without(config, tmp_path / "old", "by_direction")
    assert resumed["deals"] == 30 and "by_pass_direction" not in resumed["pairs"][0]
    assert "by_pass_direction" not in combine_runs([tmp_path / "old"])["pairs"][0]
    manifest_file = tmp_path / "old" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["tally"]["by_direction"] = ["left"]
    manifest_file.write_text(json.dumps(manifest))
    with pytest.raises(TournamentError, match="holds no readable tally"):
        combine_runs([tmp_path / "old"])


def test_combined_runs_pool_every_deal_of_every_run(tmp_path: Path) -> None:
    from scipy import stats

    for seed, deals in ((1, 60), (2, 40)):
        run_tournament(
            make_config(["lowest", "random"], deals=deals, seed=seed), tmp_path / f"s{seed}", progress=False
        )
    summary = combine_runs([tmp_path / "s1", tmp_path / "s2"])
    assert (summary["deals"], summary["hands"], summary["seed"]) == (100, 1400, [1, 2])
    # the pooled interval is the t-interval over all 100 deals' paired differences in the records
    differences = np.concatenate([_per_deal_differences(tmp_path / d, "lowest") for d in ("s1", "s2")])
    mean, se = differences.mean(), differences.std(ddof=1) / np.sqrt(len(differences))
    half = stats.t.ppf(0.975, len(differences) - 1) * se
    (pair,) = summary["pairs"]
    assert pair["a_minus_b"] == pytest.approx(mean, abs=1e-4)
    assert pair["ci95"] == pytest.approx([mean - half, mean + half], abs=1e-4)
    assert pair["p_value"] == pytest.approx(2 * stats.t.sf(abs(mean) / se, len(differences) - 1), rel=1e-3)
    scores = pd.concat(pd.read_parquet(tmp_path / d / "records") for d in ("s1", "s2"))
    lowest = np.concatenate([scores.loc[scores[f"agent_{s}"] == "lowest", f"score_{s}"] for s in range(4)])
    assert summary["agents"][0]["points_per_hand"] == pytest.approx(lowest.mean(), abs=1e-4)
    # one run alone: its own summary
    alone = json.loads((tmp_path / "s1" / "manifest.json").read_text())["summary"]
    assert combine_runs([tmp_path / "s1"]) == {**alone, "seed": [1]}
    # one run's folder given alone, as a string or a path (its characters were read as runs:
    # "r holds no tournament run"), or a generator of them
    assert combine_runs(str(tmp_path / "s1")) == combine_runs(tmp_path / "s1") == {**alone, "seed": [1]}
    assert combine_runs(tmp_path / d for d in ("s1", "s2")) == summary
    for wrong in (5, None, [5]):
        refused = f"^combine takes a list of run folders, not {re.escape(str(wrong))}$"
        with pytest.raises(TournamentError, match=refused):
            combine_runs(wrong)  # type: ignore[arg-type]


def test_make_config_takes_one_agent_as_a_string_and_refuses_what_is_no_list() -> None:
    """``make_config("lowest")`` was ``unknown agent 'l'`` (read a character at a time; one spec
    is one agent, as ``simulate`` reads it), and ``None``, ``5`` or ``rule_overrides=5`` were
    Python's ``TypeError: 'int' object is not iterable``."""
    assert make_config("lowest", deals=2).agents == ("lowest",)
    for wrong in (None, 5, {"lowest", "highest"}):  # a set: its order, the seats', changes per process
        with pytest.raises(InputError, match=r"^agents=.* is not valid: a list of agent specs$"):
            make_config(wrong, deals=2)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="^rule_overrides=5 is not valid: key=value strings or a dict"):
        make_config(["lowest", "highest"], rule_overrides=5)  # type: ignore[arg-type]
    assert make_config(["lowest", "highest"], rule_overrides=None).rules == Rules()  # type: ignore[arg-type]


def test_combining_a_match_a_sequential_test_stopped_warns(tmp_path: Path) -> None:
    """Its length depends on its results: pooled, its deals lean the figures toward its decision.
    It was pooled without a word; a fixed-length run pools silently."""
    run_tournament(make_config(["lowest", "random"], deals=40, seed=1), tmp_path / "fixed", progress=False)
    stopped = make_config(["lowest", "random"], deals=100_000, seed=2, sprt=Sprt(0.8))
    assert run_tournament(stopped, tmp_path / "sprt", progress=False).summary["deals"] < 100_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        combine_runs([tmp_path / "fixed"])
        combine_runs([tmp_path / "sprt"])  # alone: its own summary, nothing pooled
    message = f"{tmp_path / 'sprt'}: a match stopped by its sequential test"
    with pytest.warns(SequentialRunWarning, match=re.escape(message)):
        combine_runs([tmp_path / "fixed", tmp_path / "sprt"])
    shown = _cli("combine", str(tmp_path / "fixed"), str(tmp_path / "sprt"), "--json")
    assert shown.returncode == 0 and shown.stderr.startswith("hearts-sim: warning: "), shown.stderr


def test_runs_that_do_not_pool_are_refused(tmp_path: Path) -> None:
    run_tournament(make_config(["lowest", "random"], deals=10, seed=1), tmp_path / "a", progress=False)
    run_tournament(make_config(["lowest", "highest"], deals=10, seed=2), tmp_path / "other", progress=False)
    run_tournament(make_config(["random", "lowest"], deals=10, seed=6), tmp_path / "swapped", progress=False)
    shutil.copytree(tmp_path / "a", tmp_path / "copy")
    run_tournament(
        make_config(["lowest", "random"], rules="qdan3", deals=10, seed=5), tmp_path / "three", progress=False
    )
    run_tournament(
        make_config(["lowest", "random"], rules="quick", deals=6, seed=3, games=True),
        tmp_path / "games",
        progress=False,
    )
    config = TournamentConfig(("lowest", "random"), deals=30, seed=4, chunk_deals=10)
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "half", progress=False, stop_after_chunks=1)
    for dirs, message in (
        (["a", "a"], "a and .*a are the same run: its deals would count twice"),  # not: give it a seed
        (["a", "other"], "runs of different agents"),
        (["a", "swapped"], "runs of the same agents in another order: they do not combine"),
        (["a", "copy"], "both played seed 1: their deals would count twice"),
        (["a", "three"], "runs of different rules"),
        (["a", "games"], "runs of games are not combined"),
        (["a", "half"], r"unfinished \(1 of 3 chunks\)"),
    ):
        with pytest.raises(TournamentError, match=message):
            combine_runs([tmp_path / d for d in dirs])
    with pytest.raises(TournamentError, match="at least one run directory"):
        combine_runs([])
    refused = _cli("combine", str(tmp_path / "a"), str(tmp_path / "other"))
    assert (
        refused.returncode == 2 and refused.stderr.count("\n") == 1 and "different agents" in refused.stderr
    )
    pooled = _cli("combine", str(tmp_path / "a"), "--json")
    assert pooled.returncode == 0 and json.loads(pooled.stdout)["deals"] == 10


def test_a_tournament_is_run_from_its_config() -> None:
    with pytest.raises(
        TypeError, match="run_tournament takes a TournamentConfig \\(make_config\\(...\\)\\), not str"
    ):
        run_tournament("random rule")  # type: ignore[arg-type]


def test_existing_output_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _cli("match", "lowest", "random", "--deals", "10", "--out", str(out), "--quiet").returncode == 0
    again = _cli("match", "lowest", "random", "--deals", "10", "--out", str(out))
    assert again.returncode == 2 and "already holds a finished run" in again.stderr
    assert len(list((out / "records").iterdir())) == 1  # nothing lost
    stopped = tmp_path / "stopped"
    with pytest.raises(Interrupted):
        run_tournament(replace(make_config(["lowest", "random"], deals=8), chunk_deals=2), stopped,
                       progress=False, stop_after_chunks=1)  # fmt: skip
    with pytest.raises(
        TournamentError, match="already holds a run: continue it with hearts-sim tournament --resume"
    ):
        run_tournament(make_config(["lowest", "random"], deals=8), stopped, progress=False)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("stop", "code", "said"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_ctrl_c_keeps_finished_chunks_and_says_how_to_resume(
    tmp_path: Path, stop: signal.Signals, code: int, said: str
) -> None:
    """Ctrl-C, and SIGTERM (a scheduler's time limit, ``docker stop``; until 2026-12-06 it killed
    the run with no word, and could fall between a chunk's part and its manifest update)."""
    out = tmp_path / "run"
    process = started("tournament", "lowest", "random", "--deals", "50000000", "--out", str(out), "--quiet")
    manifest = out / "manifest.json"
    wait_for_a_chunk(manifest)
    os.kill(process.pid, stop)
    try:
        _, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        _, stderr = process.communicate()
        pytest.fail(f"still running 120 s after {stop.name}; its threads:\n{stderr[-6000:]}")
    assert process.returncode == code
    assert stderr.startswith(f"hearts-sim: {said} after ") and f"--resume {out}" in stderr
    done = json.loads(manifest.read_text())["chunks_done"]
    assert 1 <= done < json.loads(manifest.read_text())["chunks_total"]
    assert len(list((out / "records").glob("*.parquet"))) == done


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("stop", "code", "said"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_levels_stopped_mid_match_says_so_in_one_line(stop: signal.Signals, code: int, said: str) -> None:
    """``levels`` and ``tune`` play their matches through run_tournament, whose ``Interrupted``
    only ``tournament`` and ``match`` caught: Ctrl-C or SIGTERM in them ended in a traceback
    and exit code 1 (until 2026-12-06)."""
    process = started("levels", "--ladder", "random,lowest", "--deals", "50000000", "--threads", "1")
    assert process.stderr is not None
    first = process.stderr.readline()  # "lowest vs random: 50000000 deals, ...": the match starts
    assert "lowest vs random" in first, first
    time.sleep(3)  # into its chunks (compiled by then, or compiling: either way one line)
    os.kill(process.pid, stop)
    _, rest = process.communicate(timeout=120)
    assert process.returncode == code, rest
    assert "Traceback" not in rest
    assert rest.rstrip("\n").split("\n")[-1].startswith(f"hearts-sim: {said}"), rest


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("stop", "raised"), [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Terminated)]
)
def test_ctrl_c_waits_until_a_chunk_is_committed(stop: signal.Signals, raised: type[BaseException]) -> None:
    """Ctrl-C or SIGTERM between a chunk's Parquet part and its manifest update would leave a
    part the manifest does not count: the commit holds the signal and delivers it afterwards to
    the handler it had (for SIGTERM here, the command line's, which raises ``Terminated``). A
    suite started in the background by a shell inherits SIGINT ignored, so Python's Ctrl-C
    handler is installed here, not assumed."""
    with signal_handlers({signal.SIGINT: signal.default_int_handler}), sigterm_as_interrupt():
        before = {held: signal.getsignal(held) for held in (signal.SIGINT, signal.SIGTERM)}
        steps = []
        with pytest.raises(raised), interrupts_deferred():
            os.kill(os.getpid(), stop)
            time.sleep(0.05)  # the signal is delivered here, and held
            steps.append("part and manifest written")
        assert steps == ["part and manifest written"]
        assert {held: signal.getsignal(held) for held in before} == before


@pytest.mark.parametrize("config", sorted((Path(__file__).parents[1] / "experiments").glob("*.toml")))
def test_experiment_configs_run(config: Path) -> None:
    result = _cli("tournament", "--config", str(config), "--deals", "20", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["deals"] == 20


def test_a_rule_switch_on_the_command_line_overrides_the_config_files(tmp_path: Path) -> None:
    """Every option of the command line wins over the config file's; a rule switch set twice in
    one of them (the last silently won) is refused."""
    config = tmp_path / "run.toml"
    config.write_text('agents = ["lowest", "random"]\ndeals = 2\nrule = ["moon=off", "jd_bonus=-10"]\n')
    result = _cli("tournament", "--config", str(config), "--rule", "moon=self_minus", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["rules"] == "moon=self_minus, jd_bonus=-10"


def test_a_cold_start_is_announced_before_the_first_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the loop is in neither the process nor numba's cache, the report hears it first."""
    import hearts_sim.studies.tournament as tournament

    lines: list[str] = []
    monkeypatch.setattr(tournament, "compile_seconds", lambda table, games=False: 42.0)
    run_tournament(make_config(["lowest", "random"], deals=3), progress=False, report=lines.append)
    assert lines == ["hearts-sim: compiling the kernels for these agents (one time, about 42 s)"]
    monkeypatch.setattr(tournament, "compile_seconds", lambda table, games=False: None)
    run_tournament(make_config(["lowest", "random"], deals=3), progress=False, report=lines.append)
    assert len(lines) == 1


def test_compile_seconds_reads_numba_s_cache(tmp_path: Path) -> None:
    """None once the loop is compiled here; a figure in a process whose numba cache is empty."""
    from hearts_sim.selfplay.simulate import Table, compile_seconds, run_hands

    table = Table.build("standard", [["lowest", "random", "random", "random"]])
    run_hands(table, 0, 0, 1)
    assert compile_seconds(table) is None
    outside = f"py:{Path(__file__).resolve().parent / 'python_agents.py'}:Lowest"  # the lockstep loops
    probe = (
        "from hearts_sim.selfplay.simulate import Table, compile_seconds\n"
        f"for seats in (['lowest', 'random'], ['mc', 'random'], ['mc', 'ismcts'], [{outside!r}, 'random']):\n"
        "    print(compile_seconds(Table.build('standard', [seats * 2])))"
    )
    cold = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    cheap, mc, mc_and_ismcts, lockstep = map(float, cold.stdout.split())
    assert 0 < cheap < mc < mc_and_ismcts  # each search kind at the table adds its own figure
    assert lockstep > 0  # a figure, as for the compiled loops: not None, numba's cache unread


@pytest.mark.parametrize("games", [False, True])
def test_the_results_table_says_what_its_columns_count(games: bool) -> None:
    """A newcomer met ``suffered/1k`` and ``QS rate`` with nothing to say what they count: a line
    under the agents' rows says, for hands and for whole games."""
    config = TournamentConfig(("rule", "random"), deals=2, seed=1, games=games)
    lines = format_summary(run_tournament(config, None, progress=False).summary).splitlines()
    last_row = next(i for i, line in enumerate(lines) if line.startswith("---")) + 2  # two agents
    assert lines[last_row].startswith("random ")
    assert lines[last_row + 1] == (stats.LEGEND_GAMES if games else stats.LEGEND_HANDS)
    assert ("QS rate" in lines[last_row + 1]) is not games and ("rating" in lines[last_row + 1]) is games


@pytest.mark.parametrize(("stop", "code"), [(KeyboardInterrupt, 130), (Terminated, 143)])
def test_a_signal_after_the_stop_line_is_the_exit_code_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, stop: type[BaseException], code: int
) -> None:
    """A second Ctrl-C or SIGTERM landing after the command said how it stopped (a storm of them
    a few ms apart), as the handlers were put back: a traceback under the stop line."""
    from hearts_sim.apps import cli

    def said_its_line_then_signalled(argv: Any) -> int:
        raise stop

    monkeypatch.setattr(cli, "_main", said_its_line_then_signalled)
    assert cli.main(["tournament"]) == code


def test_a_run_that_would_take_hours_says_so_once_with_the_deals_an_hour_plays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``tournament hard normal`` ran at its default 20,000 deals (6 days here) without a word:
    once the pace is known (the second chunk: the first may have compiled), a rest of over an
    hour is said, once, with the ``--deals`` an hour plays; nothing for a shorter rest."""
    # the run starts, chunk 1 ends (compiled), chunk 2 after 40 s, never asked again
    clock = iter([0.0, 10.0, 50.0, 10_000.0])
    monkeypatch.setattr(tournament.time, "monotonic", lambda: next(clock))
    said: list[str] = []
    note = tournament.LongRunNote(said.append, _match(20_000), resumed=False, deals=0)
    for deals in (4, 8, 12, 16):  # 40 s for 4 deals: 10 s a deal
        note.update(deals)
    assert said == [
        "hearts-sim: at this pace the rest of the run takes about 2.3 days; --deals 360 plays about an hour"
    ]
    for resumed, sprt, total, expected in (
        (
            True,
            Sprt(0.3),
            20_000,
            ["hearts-sim: at this pace the rest of the run takes at most about 2.3 days"],
        ),
        (False, None, 300, []),  # 2,920 s left: under an hour
    ):
        clock = iter([0.0, 10.0, 50.0])
        said.clear()
        note = tournament.LongRunNote(said.append, _match(total, sprt), resumed=resumed, deals=0)
        note.update(4)
        note.update(8)
        assert said == expected
    tournament.LongRunNote(None, _match(20_000), resumed=False, deals=0).update(4)  # --quiet: no clock read


def _match(deals: int, sprt: Sprt | None = None, games: bool = False) -> TournamentConfig:
    """``hard`` against ``normal``: 4 deals a chunk."""
    rules = Rules.preset("quick") if games else Rules()
    return TournamentConfig(("hard", "normal"), rules=rules, deals=deals, sprt=sprt, games=games)


def test_a_slow_first_chunk_says_how_to_make_chunks_shorter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of an engine that searches (4,096 hands until 2026-12-07) or of a slow Python agent
    could take hours with the bar still and no Ctrl-C that kept any of it, and nothing said why:
    a first chunk of over five minutes says so, with the ``--chunk-deals`` of a minute's chunks;
    nothing for a quicker one, for the last chunk, or under ``--quiet``."""
    said: list[str] = []
    for resumed, sprt, games, before, expected in (
        (
            False,
            None,
            False,
            0,
            "4 deals took 20 minutes: progress and Ctrl-C act between chunks, and "
            "--chunk-deals 1 makes them about a minute",
        ),
        (
            True,
            Sprt(0.3),
            False,
            8,
            "4 deals took 20 minutes: progress, Ctrl-C and --sprt act between "
            "chunks, and a run started with --chunk-deals 1 makes them about a minute",
        ),
        (
            False,
            None,
            True,
            0,
            "4 games took 20 minutes: progress and Ctrl-C act between chunks, and "
            "--chunk-deals 1 makes them about a minute",
        ),
    ):
        clock = iter([0.0, 1200.0, 1500.0])  # the run starts, its first chunk ends, its second
        monkeypatch.setattr(tournament.time, "monotonic", lambda ticks=clock: next(ticks))
        said.clear()
        note = tournament.LongRunNote(said.append, _match(100, sprt, games), resumed=resumed, deals=before)
        note.update(before + 4)
        note.update(before + 8)
        assert said[0] == f"hearts-sim: its first chunk of {expected}"
        assert len(said) == 2 and said[1].startswith("hearts-sim: at this pace")  # and the run's length
    for start, total in ((1000.0, 40), (900.0, 40), (0.0, 4)):  # 200 s, 300 s; the run's only chunk
        clock = iter([start, 1200.0])
        monkeypatch.setattr(tournament.time, "monotonic", lambda ticks=clock: next(ticks))
        said.clear()
        tournament.LongRunNote(said.append, _match(total), resumed=False, deals=0).update(4)
        assert said == []
    clock = iter([0.0, 1200.0])  # a chunk of one deal: it cannot be made shorter (it said --chunk-deals 1)
    monkeypatch.setattr(tournament.time, "monotonic", lambda: next(clock))
    tournament.LongRunNote(said.append, _match(40), resumed=False, deals=0).update(1)
    assert said == []
    tournament.LongRunNote(None, _match(40), resumed=False, deals=0).update(4)  # --quiet: no clock read


def test_an_engine_plays_chunks_of_hundreds_of_hands_not_thousands() -> None:
    """An engine answers through a pipe (0.6 ms a decision at best): its chunks of 4,096 hands
    took a minute at best between progress lines; a Python agent's stay large, to batch its calls."""
    seatings = len(TournamentConfig(("rule", "random")).seatings())
    engine = TournamentConfig(("rule", "exec:./engine"))
    python = TournamentConfig(("rule", "py:mine.py:Mine"))
    assert engine.chunk_deals * seatings <= 512 < python.chunk_deals * seatings
    searching = TournamentConfig(("hard", "exec:./engine"))  # a search's tens of deals win
    assert searching.chunk_deals * seatings <= 64


def test_chunk_deals_sets_a_runs_chunks_and_leaves_its_results_as_they_are(tmp_path: Path) -> None:
    """``--chunk-deals`` (or the config file's ``chunk_deals``): the Python API's ``chunk_deals``
    from the command line, kept in the manifest for a resume; the records do not change."""
    config = tmp_path / "run.toml"
    config.write_text('agents = ["lowest", "random"]\ndeals = 12\nchunk_deals = 4\n')
    runs = {}
    for name, options in (
        ("given", ["--chunk-deals", "5"]),
        ("file", ["--config", str(config)]),
        ("auto", []),
    ):
        agents = [] if name == "file" else ["lowest", "random", "--deals", "12"]
        result = _cli("match", *agents, *options, "--out", str(tmp_path / name), "--json")
        assert result.returncode == 0, result.stderr
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        runs[name] = (manifest["config"]["chunk_deals"], manifest["chunks_total"])
    assert runs["given"] == (5, 3) and runs["file"] == (4, 3) and runs["auto"][1] == 1
    frames = [pd.read_parquet(tmp_path / name / "records") for name in runs]
    for frame in frames[1:]:
        pd.testing.assert_frame_equal(frame, frames[0])


def test_only_the_command_lines_runs_note_their_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tune's and a calibration's matches run through ``run_tournament`` with a ``report`` too:
    each slow one said "--deals N plays about an hour", an option ``tune`` does not have."""
    monkeypatch.setattr(tournament, "LONG_RUN_SECONDS", -1.0)  # every rest is long
    config = TournamentConfig(("rule", "random"), deals=12, seed=1, chunk_deals=4)
    for pace_note in (False, True):
        said: list[str] = []
        run_tournament(config, None, progress=False, report=said.append, pace_note=pace_note)
        noted = [line for line in said if line.startswith("hearts-sim: at this pace")]  # (or compiling)
        assert len(noted) == pace_note


def test_a_search_agents_hands_are_played_a_block_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first Ctrl-C waits for the blocks in play: blocks of a chunk's share (7 of ``hard``'s
    hands, seconds each) kept it waiting 4 to 14 s. A table with a search agent plays a block a
    hand; the others keep a few blocks a thread."""
    from hearts_sim.selfplay import simulate as sim

    blocks: list[int] = []
    play = sim.in_blocks

    def counted(kernel: Any, n_blocks: int, *arguments: Any) -> None:
        blocks.append(n_blocks)
        play(kernel, n_blocks, *arguments)

    monkeypatch.setattr(sim, "in_blocks", counted)
    searching = sim.Table.build("standard", [["mc(samples=2)", "random", "random", "random"]])
    fast = sim.Table.build("standard", [["rule", "random", "random", "random"]] * 40)
    records = sim.run_hands(searching, 0, 0, 3)
    sim.run_hands(fast, 0, 0, 3)
    assert searching.searches and not fast.searches
    assert blocks == [len(records), sim.blocks_for(120)] and len(records) == 3 < blocks[1] < 120
    # whole games too, a block a game, their hands as one block plays them (room grown per game)
    short = sim.Table.build("quick", [["mc(samples=1)", "random", "random", "random"]])  # games to 50
    games, hands = sim.run_games(short, 0, 0, 2, keep_hands=True)
    assert blocks[-1] == len(games) == 2
    monkeypatch.setattr(sim, "_blocks", lambda table, n_jobs: 1)
    one_block = sim.run_games(short, 0, 0, 2, keep_hands=True)
    assert games.tobytes() == one_block[0].tobytes() and hands.tobytes() == one_block[1].tobytes()


def test_compile_seconds_knows_the_lockstep_loops_of_outside_agents() -> None:
    """A table with a Python agent or an engine is played by the lockstep loops: the figure was
    read off the compiled loop's cache, which such a table never fills, so every run with an
    outside agent said "compiling the kernels ... (one time, about 20 s)"."""
    from hearts_sim.selfplay.simulate import Table, compile_seconds, run_games, run_hands

    agents_file = Path(__file__).resolve().parent / "python_agents.py"
    table = Table.build("standard", [[f"py:{agents_file}:Lowest", "random", "random", "random"]])
    run_hands(table, 0, 0, 1)
    assert compile_seconds(table) is None
    run_games(table, 0, 0, 1)
    assert compile_seconds(table, games=True) is None


def test_a_run_logged_to_a_file_reports_its_progress_in_lines(monkeypatch, tmp_path: Path) -> None:
    """Where stderr is not a terminal (a long match under nohup writes to a log), the progress bar
    would print nothing readable: the run reports lines instead (deals played, time so far, time
    left at the pace since the first chunk, which may have compiled the kernels, and the
    sequential test's LLR), a resumed run counting from where it stands; none when progress is
    switched off, and a terminal keeps its bar."""
    monkeypatch.setattr(tournament, "PROGRESS_LINE_SECONDS", 0.0)  # a line after every chunk
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)  # not in a notebook either
    config = TournamentConfig(("lowest", "random"), deals=50, seed=3, chunk_deals=10)
    said: list[str] = []
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "run", report=said.append, stop_after_chunks=3)
    clock = r"\d\d:\d\d"
    assert re.fullmatch(rf"hearts-sim: 10 of 50 deals \(20%\), {clock} so far", said[0]), said
    assert re.fullmatch(rf"hearts-sim: 20 of 50 deals \(40%\), {clock} so far, about {clock} left", said[1])
    assert said[2].startswith("hearts-sim: 30 of 50 deals (60%), ") and len(said) == 3
    said.clear()
    resume_tournament(tmp_path / "run", report=said.append)
    assert re.fullmatch(rf"hearts-sim: 40 of 50 deals \(80%\), {clock} so far", said[0])
    assert len(said) == 1  # the first chunk of this process sets the pace; the last says nothing
    said.clear()
    with pytest.raises(Interrupted):  # the test cannot stop before SPRT_MIN_DEALS
        run_tournament(replace(config, sprt=Sprt(0.3)), report=said.append, stop_after_chunks=2)
    assert re.fullmatch(r"hearts-sim: 20 of 50 deals .* left, LLR [+-]\d+\.\d\d", said[1]), said
    games = TournamentConfig(
        ("lowest", "random"), rules=Rules.preset("quick"), deals=4, chunk_deals=2, games=True
    )
    run_tournament(games, report=said.append)
    assert said[-1].startswith("hearts-sim: 2 of 4 games (50%), ")
    said.clear()
    run_tournament(config, report=said.append, progress=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    run_tournament(config, report=said.append)
    assert said == []


def test_a_notebook_gets_the_progress_bar(monkeypatch) -> None:
    """A Jupyter kernel's stderr is no terminal, yet someone watches it: the bar is drawn there
    (``tqdm.auto``: a widget), and ``progress=False`` still switches it off."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    assert not progress_shown(None)
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    assert progress_shown(None) and not progress_shown(False)


def test_a_first_simulate_in_a_notebook_says_it_compiles(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate`` compiled its loop (20 s to 2 minutes) without a word in a notebook, where the
    command line says so: where someone watches, a bar says it until the first chunk is in,
    even for a run too short for a bar of its own; nothing with ``progress=False`` or warm."""
    import hearts_sim.selfplay.simulate as simulate_module

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))  # a notebook
    monkeypatch.setattr(simulate_module, "compile_seconds", lambda table, games=False: 42.0)
    notice = "compiling the kernels (one time, about 42 s)"
    simulate_module.simulate("standard", "random", hands=8)
    assert notice in capsys.readouterr().err
    simulate_module.simulate_games("quick", "random", games=2)
    assert notice in capsys.readouterr().err
    simulate_module.simulate("standard", "random", hands=8, progress=False)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(simulate_module, "compile_seconds", lambda table, games=False: None)
    simulate_module.simulate("standard", "random", hands=8)  # warm, and short: no bar at all
    assert capsys.readouterr().err == ""


def test_a_result_shows_its_table_in_print_and_in_a_notebook() -> None:
    """``print(result)`` and a notebook cell show the table the command line prints, not the
    dataclass's one long line; ``table()`` has the per-agent figures as a DataFrame."""
    result = run_tournament(make_config(["lowest", "random"], deals=100, seed=2), progress=False)
    assert str(result) == format_summary(result.summary) and "lowest - random: " in str(result)
    assert result._repr_html_() == "<pre>" + str(result).replace("<", "&lt;").replace(">", "&gt;") + "</pre>"
    # IPython's text display (a terminal, jupyter console, a notebook's text/plain) and repr: the
    # table too, not the dataclass's fields (its __repr__ came before _repr_pretty_ in the MRO)
    assert pretty(result) == repr(result) == str(result)
    for shown in (tournament.TournamentResult, tournament.RunStatus, JobStatus, TuneResult):
        assert issubclass(shown, tournament.ShownAsText) and "__repr__" not in vars(shown), shown
    table = result.table()
    assert table.index.tolist() == ["lowest", "random"]
    assert list(table.columns[:3]) == ["points_per_hand", "low", "high"]
    for agent in result.summary["agents"]:
        row = table.loc[agent["name"]]
        assert [row["low"], row["high"]] == agent["ci95"] and row["hands"] == agent["hands"] == 2800
        assert row["low"] < row["points_per_hand"] < row["high"]
    games = run_tournament(
        make_config(["lowest", "random"], rules="quick", deals=4, games=True), progress=False
    )
    columns = set(games.table().columns)
    assert {"win_rate", "rating_mu", "rating_sigma"} <= columns and "qs_rate" not in columns
    for agent in games.summary["agents"]:
        row = games.table().loc[agent["name"]]
        assert [row["win_rate_low"], row["win_rate_high"]] == agent["win_rate_ci95"]
    [pair] = games.summary["pairs"]
    assert games.pairs().iloc[0][["win_rate_a_minus_b", "win_rate_low", "win_rate_high"]].tolist() == [
        pair["win_rate_a_minus_b"],
        *pair["win_rate_ci95"],
    ]
    assert "win_rate_low" not in result.pairs().columns  # hands: no games won


def test_a_results_directions_are_the_printed_lines_by_pass_direction_as_a_frame() -> None:
    result = run_tournament(make_config(["pass=lowest,play=rule", "rule"], deals=40, seed=3), progress=False)
    frame = result.directions()
    [pair] = result.summary["pairs"]
    assert frame["direction"].tolist() == [row["direction"] for row in pair["by_pass_direction"]]
    assert frame["direction"].tolist() == ["left", "right", "across", "none"]
    for (_, row), kept in zip(frame.iterrows(), pair["by_pass_direction"], strict=True):
        assert (row["a"], row["b"]) == ("pass=lowest,play=rule", "rule")
        assert [row["deals"], row["a_minus_b"], row["low"], row["high"]] == [
            kept["deals"],
            kept["a_minus_b"],
            *kept["ci95"],
        ]
    assert frame["deals"].sum() == 40 and frame.loc[frame["direction"] == "none", "a_minus_b"].item() == 0
    games = make_config(["lowest", "random"], rules="quick", deals=2, games=True)
    assert run_tournament(games, progress=False).directions().empty


def test_a_results_pairs_are_the_printed_difference_lines_as_a_frame() -> None:
    result = run_tournament(make_config(["lowest", "random", "rule"], deals=40, seed=3), progress=False)
    pairs = result.pairs()
    assert [tuple(p) for p in pairs[["a", "b"]].values] == [
        ("lowest", "random"),
        ("lowest", "rule"),
        ("random", "rule"),
    ]
    for row, line in zip(pairs.itertuples(), result.summary["pairs"], strict=True):
        assert f"{row.a} - {row.b}: {row.a_minus_b:+.3f} points/hand" in str(result)
        assert (row.low, row.high, row.p_value) == (*line["ci95"], line["p_value"])
        assert row.low < row.a_minus_b < row.high


def test_a_signal_raised_inside_numbas_cache_loading_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM while numba loaded a kernel from its cache came out as a ``SystemError`` ("returned
    a result with an exception set") wrapping ``Terminated``, a traceback where a stop is one line
    (a levels run stopped 3 s in, now and then). Any other ``SystemError`` is no stop."""
    from hearts_sim.apps.script import reported
    from hearts_sim.core.errors import Terminated

    def loading_a_kernel() -> int:
        try:
            raise Terminated
        except Terminated as stop:
            raise SystemError("<function _numba_unpickle> returned a result with an exception set") from stop

    assert reported("hearts-sim", loading_a_kernel) == 143
    assert capsys.readouterr().err == "hearts-sim: terminated\n"

    def broken() -> int:
        raise SystemError("a bug")

    with pytest.raises(SystemError, match="a bug"):
        reported("hearts-sim", broken)


@pytest.mark.parametrize("stop", [KeyboardInterrupt, Terminated])
def test_a_signal_numba_wrapped_as_a_run_tallies_says_what_was_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: type[KeyboardInterrupt]
) -> None:
    """A Ctrl-C that arrived as a chunk's tally kernel was called came out of numba as a
    ``SystemError`` wrapping it, which passed the run's ``except KeyboardInterrupt``: a bare
    "hearts-sim: interrupted", without the chunks kept or the resume command (a Dask run stopped
    in CI, now and then). It is the run's stop, as any other Ctrl-C between chunks."""
    tallied: list[int] = []

    def tally_then_stopped(*arguments: Any) -> None:  # the kernel, then numba's wrapping of a signal
        if len(tallied) == 2:
            try:
                raise stop
            except KeyboardInterrupt as signalled:
                wrapped = "CPUDispatcher(<function _chunk_sums>) returned a result with an exception set"
                raise SystemError(wrapped) from signalled
        tallied.append(1)
        tally_hands(*arguments)

    monkeypatch.setattr(tournament, "tally_hands", tally_then_stopped)
    out = tmp_path / "run"
    config = TournamentConfig(("lowest", "random"), deals=60, chunk_deals=20)
    with pytest.raises(Interrupted) as stopped:
        run_tournament(config, out, progress=False)
    said = "terminated" if stop is Terminated else "interrupted"
    assert str(stopped.value).startswith(f"{said} after 2 of 3 chunks; resume with: hearts-sim ")
    assert stopped.value.exit_code == (143 if stop is Terminated else 130)
    assert json.loads((out / "manifest.json").read_text())["chunks_done"] == 2
    monkeypatch.undo()
    assert resume_tournament(out, progress=False).summary == run_tournament(config, progress=False).summary


@pytest.mark.parametrize(
    ("signum", "code", "said"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_numbas_compiler_swallowed_is_one_line(
    capsys: pytest.CaptureFixture[str], signum: signal.Signals, code: int, said: str
) -> None:
    """A stop that falls in a callback of llvmlite's during a compile is swallowed there ("Exception
    ignored on calling ctypes callback function"), and numba then fails with ``RuntimeError: no
    compiled object yet``: 140 lines and exit code 1 (seen stopping a server as it warmed up).
    Any other ``RuntimeError`` stays a traceback."""
    from hearts_sim.apps.script import reported

    def compiling() -> int:
        try:
            os.kill(os.getpid(), signum)
            time.sleep(0.05)  # delivered here, and swallowed as the callback does
        except KeyboardInterrupt:
            pass
        raise RuntimeError("no compiled object yet for <Library 'random_below' at 0x7fa423c5b890>")

    def broken() -> int:
        raise RuntimeError("a bug")

    with signal_handlers({signal.SIGINT: signal.default_int_handler}), sigterm_as_interrupt():
        assert reported("hearts-sim", compiling) == code
        assert capsys.readouterr().err == f"hearts-sim: {said}\n"
        with pytest.raises(RuntimeError, match="a bug"):
            reported("hearts-sim", broken)
    # nothing shows a signal there: a job (a run, a tune) does not guess one, the last handler does
    with pytest.raises(RuntimeError, match="no compiled object yet"), signals_unwrapped():
        raise RuntimeError("no compiled object yet for <Library 'random_below' at 0x7fa423c5b890>")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"out": 5}, "out=5 is not valid: the run's folder (a path), or None"),
        ({"resume": True}, "resume=True needs out, the folder of the run"),  # it was ignored
        ({"resume": "yes"}, "resume='yes' is not valid: True or False"),
        (
            {"progress": "no"},
            "progress='no' is not valid: True, False or None (automatic)",
        ),  # it drew the bar
        ({"stop_after_chunks": -1}, "stop_after_chunks=-1 is not valid: a count of chunks"),
        ({"report": 5}, "report=5 is not valid: a function taking a line, or None"),
    ],
)
def test_run_tournament_refuses_arguments_of_the_wrong_kind(arguments: dict[str, Any], message: str) -> None:
    """``out=5`` was Python's "expected str, bytes or os.PathLike object", and the others were
    taken: a bar drawn for ``progress="no"``, "interrupted after -1 of 1 chunks"."""
    with pytest.raises(InputError) as refused:
        run_tournament(make_config(["lowest", "highest"], deals=2), **arguments)
    assert str(refused.value) == message


def test_simulate_refuses_a_progress_that_is_no_flag() -> None:
    from hearts_sim import simulate, simulate_games

    for run in (simulate, simulate_games):
        with pytest.raises(InputError, match="^progress='no' is not valid: True, False or None"):
            run(progress="no")  # type: ignore[operator]


def test_combine_of_a_run_being_written_says_to_wait(tmp_path: Path) -> None:
    """It said "finish it with --resume", which the writer's lock refuses."""
    config = TournamentConfig(("lowest", "random"), deals=40, seed=4, chunk_deals=20)
    out = tmp_path / "run"
    seen: list[str] = []

    def combine_now(chunk: int) -> None:
        if chunk == 0:
            seen.append(str(pytest.raises(TournamentError, combine_runs, [out]).value))

    run_tournament(config, out, progress=False, on_chunk=combine_now)
    assert seen == [
        f"{out} is unfinished (1 of 2 chunks): it is being written by this process (pid {os.getpid()}), "
        "in another call: combine it once done"
    ]
