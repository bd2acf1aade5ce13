"""``hearts-sim report``: figures and summary.md from a small tournament's records; errors exit 2."""

from __future__ import annotations

import json
import shutil
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from hearts_sim import simulate
from hearts_sim.apps.cli import main
from hearts_sim.core.rules import Rules
from hearts_sim.studies.analysis import (
    RecordSummary,
    UnfinishedRunWarning,
    failed_moons,
    load_records,
    moon_rates,
    to_long,
)
from hearts_sim.studies.report import (
    REPORT_DIR,
    SUMMARY_FILE,
    _figures,
    mean_trick,
    new_axes,
    plot_distribution,
    plot_failed_cost,
    plot_rate_curves,
    plot_rates,
    plot_tricks,
    summary_markdown,
    write_report,
)
from hearts_sim.studies.tournament import Interrupted, TournamentConfig, make_config, run_tournament

FIGURES = {
    "moon_rate_by_agent.png",
    "moon_rate_by_pass_direction.png",
    "moon_vs_hearts.png",
    "moon_vs_high_hearts.png",
    "failed_moon_cost.png",
    "score_distribution.png",
    "qs_by_pass_direction.png",
    "moon_stopped_trick.png",
    "qs_trick.png",
}
AGENTS = ["random", "lowest", "highest"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tournament") / "run"
    run_tournament(make_config(AGENTS, deals=400, seed=3), out, progress=False)  # 6 seatings: 2,400 hands
    return out


def test_report_quiet_draws_no_bar(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal the report draws a bar of the hands it reads; ``--quiet`` (which it lacked,
    as every other long command has it) draws none."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["report", str(run_dir), "--out", str(tmp_path / "shown")]) == 0
    assert "reading" in capsys.readouterr().err
    assert main(["report", str(run_dir), "--out", str(tmp_path / "quiet"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_report_writes_figures_and_summary(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # given the records folder itself, the report still lands in the run folder
    assert main(["report", str(run_dir / "records"), "--min-points", "18"]) == 0
    report = run_dir / REPORT_DIR
    assert {p.name for p in report.iterdir()} == FIGURES | {SUMMARY_FILE}
    for name in FIGURES:
        assert (report / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = (report / SUMMARY_FILE).read_text()
    assert "2,400 hands" in summary and "rules: standard" in summary and "at least 18 raw points" in summary
    moons = RecordSummary.from_records(run_dir).moon_rates("moons")
    for agent in AGENTS:  # counts with thousands separators, as the hands are
        hands, made = int(moons.loc[agent, "hands"]), int(moons.loc[agent, "moons"])
        assert f"| {agent} | {hands:,} | {made:,} | " in summary and hands >= 1000
    assert "summary.md" in capsys.readouterr().out
    when = RecordSummary.from_records(run_dir, min_points=18)
    for agent, stopped in mean_trick(when.stopping_tricks()).items():
        assert f"| {agent} | {stopped:.1f} | {mean_trick(when.qs_tricks())[agent]:.1f} |" in summary


def test_a_report_of_records_made_before_the_timeline_leaves_when_out(run_dir: Path) -> None:
    old = load_records(run_dir).drop(columns=["trick_winners", "point_tricks", "qs_trick"])
    summary = RecordSummary.from_frame(old)
    assert set(_figures(summary)) == FIGURES - {"moon_stopped_trick.png", "qs_trick.png"}
    assert "Only 0 of the 2,400 hands say when each trick was won" in summary_markdown(summary, "old", [])


def test_report_out_must_be_writable(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    assert main(["report", str(run_dir), "--out", str(blocker / "report")]) == 2
    assert "cannot create the report directory" in capsys.readouterr().err


def test_a_report_folder_that_is_a_link_is_refused_and_a_linked_file_replaced(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``report`` link in a downloaded run sent ``summary.md`` and the figures into the folder it
    named (over a ``summary.md`` there) until 2026-12-07: the folder, default or ``--out``, is
    refused in one line before the records are read; a link inside it where a file goes is
    replaced by the file, its target left alone."""
    run, notes = tmp_path / "run", tmp_path / "notes"
    shutil.copytree(run_dir, run)
    shutil.rmtree(run / REPORT_DIR, ignore_errors=True)
    notes.mkdir()
    (notes / SUMMARY_FILE).write_text("my notes")
    (run / REPORT_DIR).symlink_to(notes)
    for out in ([], ["--out", str(run / REPORT_DIR)]):
        assert main(["report", str(run), *out, "--quiet"]) == 2
        assert capsys.readouterr().err == (
            f"hearts-sim: error: the report folder {run / REPORT_DIR} is a symbolic link (to {notes}): a "
            "report is written into a folder, not through a link; remove the link, or name the folder "
            "it points to with --out\n"
        )
    assert [p.name for p in notes.iterdir()] == [SUMMARY_FILE]
    assert (notes / SUMMARY_FILE).read_text() == "my notes"
    (run / REPORT_DIR).unlink()
    (run / REPORT_DIR).mkdir()
    (run / REPORT_DIR / SUMMARY_FILE).symlink_to(notes / SUMMARY_FILE)
    assert main(["report", str(run), "--quiet"]) == 0
    assert (notes / SUMMARY_FILE).read_text() == "my notes"
    summary = run / REPORT_DIR / SUMMARY_FILE
    assert not summary.is_symlink() and summary.read_text().startswith("# Moon-shot report")


def test_report_pools_runs_on_other_seeds(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "seed4"
    run_tournament(make_config(AGENTS, deals=100, seed=4), other, progress=False)  # 600 hands
    out = tmp_path / "pooled"
    assert main(["report", str(run_dir), str(other / "records"), "--out", str(out)]) == 0
    summary = (out / SUMMARY_FILE).read_text()
    assert "3,000 hands" in summary and f"`{run_dir}`, `{other / 'records'}`" in summary
    pooled = RecordSummary.from_records([run_dir, other]).moon_rates("moons")
    apart = [RecordSummary.from_records(path).moon_rates("moons") for path in (run_dir, other)]
    assert pooled["hands"].tolist() == (apart[0]["hands"] + apart[1]["hands"]).tolist()
    assert pooled["moons"].tolist() == (apart[0]["moons"] + apart[1]["moons"]).tolist()
    assert {p.name for p in out.iterdir()} == FIGURES | {SUMMARY_FILE}
    assert "summary.md" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (make_config(AGENTS, deals=50, seed=3), "runs of the same agents on seed 3"),  # the same hands
        # the same hands too, each seating with its agents in other seats: pooled without a word
        (make_config(AGENTS[::-1], deals=50, seed=3), "runs of the same agents (in another order) on seed 3"),
        (
            make_config(AGENTS, deals=50, seed=4, rule_overrides=["moon=self_minus"]),
            "are runs under different rules (moon=self_minus; standard)",
        ),
    ],
)
def test_report_refuses_runs_that_do_not_pool(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], other: Any, message: str
) -> None:
    run_tournament(other, tmp_path / "other", progress=False)
    out = tmp_path / "pooled"
    assert main(["report", str(run_dir), str(tmp_path / "other"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()  # refused before anything is written


def test_report_refuses_a_copy_of_a_runs_records_beside_the_run(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records without a manifest (a copy of a run's records/) were pooled with the run they came
    from, every hand counted twice without a word; and a manifest.json that is a folder let
    every part be read unverified, with no note that the run was unfinished."""
    copy = tmp_path / "copy"
    shutil.copytree(run_dir / "records", copy / "records")
    for paths in ([run_dir, copy], [copy, run_dir]):
        assert main(["report", *map(str, paths), "--out", str(tmp_path / "pooled")]) == 2
        err = capsys.readouterr().err
        assert "begin with the same hand, of the same agents" in err and err.count("\n") == 1
    other = tmp_path / "seed4"
    run_tournament(make_config(AGENTS, deals=50, seed=4), other, progress=False)
    shutil.copytree(other / "records", tmp_path / "copy4" / "records")
    assert main(["report", str(copy), str(tmp_path / "copy4"), "--out", str(tmp_path / "pooled")]) == 0
    # the copy of a run on the same seed under other rules: told by its rules, not as a copy
    off = tmp_path / "off"
    run_tournament(make_config(AGENTS, deals=50, seed=3, rule_overrides="moon=off"), off, progress=False)
    shutil.copytree(off / "records", tmp_path / "copy_off" / "records")
    assert main(["report", str(copy), str(tmp_path / "copy_off"), "--out", str(tmp_path / "pooled2")]) == 2
    err = capsys.readouterr().err
    assert "are runs under different rules (moon=off; standard): their rates do not pool" in err
    (other / "manifest.json").unlink()
    (other / "manifest.json").mkdir()
    assert main(["report", str(other), "--out", str(tmp_path / "alone")]) == 2
    assert "manifest.json is not a file" in capsys.readouterr().err


def test_report_figures_match_the_in_memory_analysis(run_dir: Path) -> None:
    records = load_records(run_dir)
    assert len(records) == 2400 and str(records["rules"].iloc[0]) == "standard"  # from the manifest
    streamed = RecordSummary.from_records(run_dir, batch_size=500)
    memory = moon_rates(records, "agent", scale=1000)
    assert streamed.moon_rates("moons")["moons"].tolist() == memory["moons"].tolist()
    assert streamed.hands == 2400 and streamed.rules == {"standard"}


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "does not exist"),
        ("empty", "holds no records"),
        ("file", "is not a directory"),
    ],
)
def test_report_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, message: str
) -> None:
    target = tmp_path / "target"
    if setup == "empty":
        target.mkdir()
    elif setup == "file":
        target.write_text("not a run")
    assert main(["report", str(target)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_report_of_a_run_of_games_reads_its_hands_and_says_where_the_moons_fell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "games"
    run_tournament(make_config(["random", "rule"], rules="quick", deals=30, games=True), out, progress=False)
    assert main(["report", str(out / "hands")]) == 0  # the run's hands/, as its records/: into the run
    summary = (out / REPORT_DIR / SUMMARY_FILE).read_text()
    assert (out / REPORT_DIR / "moon_rate_by_game_place.png").read_bytes()[:4] == b"\x89PNG"
    hands = load_records(out)
    assert len(hands) == hands.groupby(["game", "seating"]).size().sum() > 30 * 14
    assert f"{len(hands):,} hands" in summary
    moons = moon_rates(hands, ["agent", "game_place"], scale=1000)
    failed = failed_moons(hands, ["agent", "game_place"], scale=1000)
    moons_part, failed_part = summary.split("## Moons per 1,000 hands by place in the game")[1].split(
        "## Failed attempts per 1,000 hands by place in the game"
    )
    for table, rates, prefix in ((moons_part, moons, ""), (failed_part, failed, "failed_")):
        assert "| agent | 1st | 2nd | 3rd | 4th |" in table
        for agent in ("random", "rule"):
            cells = [
                f"{r[prefix + 'rate']:.1f} [{r[prefix + 'low']:.1f}, {r[prefix + 'high']:.1f}]"
                for _, r in rates.loc[agent].iterrows()
            ]
            assert f"| {agent} | {' | '.join(cells)} |" in table
    capsys.readouterr()
    assert main(["report", str(out / "records")]) == 2  # the games themselves: one row per game
    err = capsys.readouterr().err
    assert "holds game records (from --games), not per-hand records: its run's hands/" in err
    single = tmp_path / "single"  # hands of no game, pooled with them: the tables by place cannot be
    run_tournament(make_config(["random", "rule"], rules="quick", deals=10, seed=5), single, progress=False)
    assert main(["report", str(out), str(single), "--out", str(tmp_path / "pooled")]) == 0
    pooled = (tmp_path / "pooled" / SUMMARY_FILE).read_text()
    assert f"Only {len(hands):,} of the {len(hands) + 140:,} hands are hands of games" in pooled
    assert "by place in the game" not in pooled.replace("no tables by place in the game", "")


def test_a_log_rate_axis_reads_in_plain_numbers() -> None:
    """Moon rates span a decade or two: the log axis is labelled 3, 5, 10, 20, 50 (minor ticks at
    2, 3 and 5 times a power of ten only), not matplotlib's 4 x 10^1."""
    index = pd.MultiIndex.from_product([["rule", "random"], range(6)], names=["agent", "hearts"])
    rate = np.array([14.0, 6.5, 3.6, 2.7, 3.7, 5.1, 45.0, 33.0, 18.0, 13.0, 12.5, 12.3])
    table = pd.DataFrame({"rate": rate, "low": rate * 0.9, "high": rate * 1.1, "hands": 10**5}, index=index)
    ax = plot_rate_curves(table, new_axes(), title="t", xlabel="hearts", ylabel="moons per 1,000 hands")
    ax.figure.canvas.draw()
    bottom, top = ax.get_ylim()
    labels = [
        (tick.get_position()[1], tick.get_text())
        for tick in ax.get_yticklabels() + ax.get_yticklabels(minor=True)
        if tick.get_text() and bottom <= tick.get_position()[1] <= top
    ]
    assert {text for _, text in labels} >= {"3", "5", "10", "20", "30"}
    assert all(text == f"{value:g}" and text[0] in "1235" for value, text in labels), labels


def test_the_failed_moon_legend_clears_the_bars() -> None:
    """Headroom above the tallest bar keeps the legend (upper left) off the bars and their labels."""
    table = pd.DataFrame(
        {"mean_score": [10.4, 3.6], "failed_mean_score": [21.7, 21.3], "cost": [11.2, 17.6]},
        index=pd.Index(["random", "rule"], name="agent"),
    )
    ax = plot_failed_cost(table, new_axes())
    assert ax.get_ylim()[1] > 1.2 * 21.7


def test_a_column_name_reads_as_words_on_a_figure() -> None:
    """Legend titles and axis labels taken from the table read ``pass direction``, not ``pass_direction``."""
    index = pd.MultiIndex.from_product(
        [["rule", "random"], ["left", "none"]], names=["agent", "pass_direction"]
    )
    table = pd.DataFrame({"rate": [3.0, 8.0, 18.0, 9.0], "low": 1.0, "high": 20.0}, index=index)
    ax = plot_rates(table, new_axes(), title="t", ylabel="moons per 1,000 hands")
    assert ax.get_legend().get_title().get_text() == "pass direction" and ax.get_xlabel() == "agent"


def test_a_report_of_an_unfinished_run_says_so(tmp_path: Path) -> None:
    """A run stopped after 1 of its chunks was reported as if it were whole."""
    config = TournamentConfig(("random", "lowest"), deals=40, seed=2, chunk_deals=4)
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "run", progress=False, stop_after_chunks=1)
    with pytest.warns(UnfinishedRunWarning, match="is not finished: its manifest counts 1 of 10 chunks"):
        assert main(["report", str(tmp_path / "run")]) == 0
    summary = (tmp_path / "run" / REPORT_DIR / SUMMARY_FILE).read_text()
    assert f"**Warning**: {tmp_path / 'run'} is not finished: its manifest counts 1 of 10 chunks" in summary
    assert "56 hands" in summary


def test_a_report_of_a_run_being_written_names_the_chunks_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note was read from the manifest again once the records were read: a run being written
    had counted another chunk by then, and the report said "3 of 21 chunks" over the hands of 2."""
    from hearts_sim.studies import report

    run = tmp_path / "run"
    config = TournamentConfig(("random", "lowest"), deals=40, seed=2, chunk_deals=4)
    with pytest.raises(Interrupted):
        run_tournament(config, run, progress=False, stop_after_chunks=1)
    read = report.RecordSummary.from_records

    def read_then_the_writer_goes_on(*arguments: Any, **options: Any) -> Any:
        summary = read(*arguments, **options)
        manifest = json.loads((run / "manifest.json").read_text())
        (run / "manifest.json").write_text(json.dumps({**manifest, "chunks_done": 2}))  # as a writer does
        return summary

    monkeypatch.setattr(report.RecordSummary, "from_records", read_then_the_writer_goes_on)
    with pytest.warns(UnfinishedRunWarning, match="counts 1 of 10 chunks"):
        assert main(["report", str(run)]) == 0
    summary = (run / REPORT_DIR / SUMMARY_FILE).read_text()
    assert "its manifest counts 1 of 10 chunks" in summary and "56 hands" in summary


def test_a_figure_of_no_hands_says_so_without_a_warning() -> None:
    """A Black Maria report with no failed attempt at --min-points 43 printed matplotlib's "No
    artists with labels found to put in legend" among its own lines."""
    empty = pd.DataFrame(columns=pd.Index([], dtype=int), index=pd.Index([], name="agent"), dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = [
            plot_tricks(empty, new_axes(), title="t", ylabel="share"),
            plot_distribution(empty, new_axes(), title="t"),
        ]
    for ax in drawn:
        assert ax.get_legend() is None and [t.get_text() for t in ax.texts] == ["none in these hands"]


def test_a_trick_in_which_nothing_fell_is_drawn_at_zero() -> None:
    """The tables of when have no column for a trick in which nothing fell: the line ran
    straight from trick 6 to trick 8 as if trick 7 had a share between theirs."""
    table = pd.DataFrame({5: [0.5], 7: [0.5]}, index=pd.Index(["rule"], name="agent"))
    ax = plot_tricks(table, new_axes(), title="t", ylabel="share")
    x, y = ax.lines[0].get_data()
    assert list(x) == list(range(1, 9)) and list(y) == [0, 0, 0, 0, 0, 0.5, 0, 0.5]


def test_the_rules_are_named_by_their_preset() -> None:
    """summary.md said "rules: n_players=5" for qdan5, and "target_score=50" for quick."""
    five = RecordSummary.from_frame(simulate("qdan5", ["random"] * 5, hands=20, seed=1))
    assert "rules: qdan5 (n_players=5)." in summary_markdown(five, "x", [])
    edited = RecordSummary.from_frame(simulate(Rules(moon="off"), ["random"] * 4, hands=20, seed=1))
    assert "rules: moon=off." in summary_markdown(edited, "x", [])
    # a summary of the records' own threshold names it (it said "at least None raw points")
    maria = RecordSummary.from_frame(simulate("black_maria", ["random"] * 3, hands=20, seed=1))
    assert "A failed attempt: no moon, but at least 33 raw points" in summary_markdown(maria, "x", [])


def test_the_report_reads_failed_attempts_by_the_rules_of_its_runs(tmp_path: Path) -> None:
    """Black Maria's 43 points were held to 26's threshold of 20 (and "or all 13 hearts", which
    its records never say); under moon=off a hand with every point card in one seat, stopped by
    no one, was averaged in as stopped in trick 0."""
    maria = tmp_path / "maria"
    run_tournament(make_config(["highest", "rule"], "black_maria", deals=100), maria, progress=False)
    write_report(maria)
    text = (maria / "report" / SUMMARY_FILE).read_text()
    assert "at least 33 raw points." in text and "13 hearts" not in text
    assert "at least 40 raw points." in (
        write_report(maria, tmp_path / "forty", min_points=40)[-1].read_text()
    )  # a threshold given is kept
    off = tmp_path / "off"
    run_tournament(
        make_config(["highest", "rule"], rule_overrides=["moon=off"], deals=200), off, progress=False
    )
    summary = RecordSummary.from_records(off)
    assert "-1" not in map(str, summary.stopping_tricks().columns)
    records = load_records(off)
    took_all = (to_long(records)["points"] == 26).sum()
    assert took_all > 0  # hands nobody stopped: the case at hand
    write_report(off)
    assert "Moons are off under these rules (moon=off)" in (off / "report" / SUMMARY_FILE).read_text()


def test_reading_a_run_draws_a_bar_of_its_hands(
    run_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report of 9.6 million hands read for 40 s without a word: the hands read, as a bar
    where someone watches (a terminal or a notebook: by default since 2026-12-07, where Python's
    ``from_records`` drew none unless asked), or where ``progress=True``."""
    summary = RecordSummary.from_records(run_dir, batch_size=500, progress=True)
    bars = capsys.readouterr().err.replace("\r", "\n")
    assert "reading:" in bars and f"/{summary.hands} [" in bars, bars  # of every hand the run holds
    RecordSummary.from_records(run_dir, batch_size=500)  # nobody watches pytest's stderr
    assert capsys.readouterr().err == ""
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))  # a notebook
    RecordSummary.from_records(run_dir, batch_size=500)
    assert "reading:" in capsys.readouterr().err
    RecordSummary.from_records(run_dir, batch_size=500, progress=False)
    assert capsys.readouterr().err == ""


def test_a_column_of_rates_shows_one_number_of_decimals() -> None:
    """At millions of hands an interval per 1,000 can be narrower than one decimal shows
    (``6.0 [6.0, 6.0]`` for ``[5.95, 6.04]``); a cell with its own decimals made a column ragged
    (``15.5 [14.5, 16.6]`` above ``0.021 [0.004, 0.048]``). A column takes the decimals its
    narrowest interval needs."""
    from hearts_sim.studies import analysis as an
    from hearts_sim.studies import report

    index = pd.MultiIndex.from_tuples([("a", 1), ("b", 1), ("a", 2), ("b", 2)], names=["agent", "place"])
    table = pd.DataFrame(
        {"rate": [15.5, 0.021, 6.0, 7.2], "low": [14.5, 0.004, 5.95, 6.1], "high": [16.6, 0.048, 6.04, 8.3]},
        index=index,
    )
    assert report._rate_rows(table, ["a", "b"], [1, 2]) == [
        ["a", "15.500 [14.500, 16.600]", "6.00 [5.95, 6.04]"],
        ["b", "0.021 [0.004, 0.048]", "7.20 [6.10, 8.30]"],
    ]
    assert an.per_thousand(6.0, 5.95, 6.04) == "6.00 [5.95, 6.04]"
    assert an.per_thousand(12.3, 11.1, 13.6) == "12.3 [11.1, 13.6]"
