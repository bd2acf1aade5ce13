"""hearts_sim.studies.analysis on hand-built records with known answers, and on a few simulated hands."""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow
import pytest
from pyarrow import parquet

from hearts_sim import simulate, simulate_games
from hearts_sim.core.cards import FULL_DECK, SUIT_MASKS, CardSet
from hearts_sim.core.rules import Rules, RulesError
from hearts_sim.studies.analysis import (
    LONG_COLUMNS,
    MAX_BATCH,
    AnalysisError,
    RecordSummary,
    UnfinishedRunWarning,
    add_features,
    deal_counts,
    deal_differences,
    failed_moon_counts,
    failed_moon_mask,
    failed_moons,
    hand_features,
    iter_records,
    load_records,
    moon_counts,
    moon_rates,
    moons_suffered,
    points_distribution,
    popcount,
    qs_capture_rates,
    qs_counts,
    qs_tricks,
    source_offset,
    stopping_trick_counts,
    stopping_tricks,
    suffered_counts,
    to_long,
    unfinished_note,
    wilson_interval,
)
from hearts_sim.studies.replay import replay
from hearts_sim.studies.tournament import Interrupted, TournamentConfig, run_tournament

CLUBS, DIAMONDS, SPADES, HEARTS = (int(m) for m in SUIT_MASKS)


def cards(text: str) -> int:
    return CardSet.parse(text).mask


def _hands() -> pd.DataFrame:
    """Four hands at a 4-seat table, agents A B A B:

    0. seat 2 (A) shoots the moon (no pass);
    1. seat 1 (B) takes 22 points and no moon: a failed attempt (pass left: seat 1 gets seat 0's cards);
    2. seat 3 (B) takes all 13 hearts but seat 0 takes the QS: the classic failed moon;
    3. an ordinary hand (seat 2 takes the QS alone).
    """
    suits = [CLUBS, DIAMONDS, SPADES, HEARTS]
    passed_left = [cards("AC KC QC"), cards("AD KD QD"), cards("AS KS 2S"), cards("AH KH QH")]
    rows = [
        # pass, passed, points, score, shooter, qs taker
        ("none", [0, 0, 0, 0], [0, 0, 26, 0], [26, 26, 0, 26], 2, 2),
        ("left", passed_left, [4, 22, 0, 0], [4, 22, 0, 0], -1, 1),
        ("right", [0, 0, 0, 0], [13, 0, 0, 13], [13, 0, 0, 13], -1, 0),
        ("across", [0, 0, 0, 0], [5, 8, 13, 0], [5, 8, 13, 0], -1, 2),
    ]
    columns: dict[str, object] = {
        "deal": np.arange(4, dtype=np.int64),
        "seating": np.zeros(4, dtype=np.int32),
        "pass_direction": pd.Categorical(
            [r[0] for r in rows], categories=["left", "right", "across", "none"]
        ),
    }
    for seat, name in enumerate("ABAB"):
        columns[f"agent_{seat}"] = pd.Categorical([name] * 4)
    for seat in range(4):
        columns[f"dealt_{seat}"] = np.full(4, suits[seat], dtype=np.uint64)
        columns[f"passed_{seat}"] = np.array([r[1][seat] for r in rows], dtype=np.uint64)
        columns[f"points_{seat}"] = np.array([r[2][seat] for r in rows], dtype=np.int16)
        columns[f"score_{seat}"] = np.array([r[3][seat] for r in rows], dtype=np.int16)
        columns[f"tricks_{seat}"] = np.array([13 if seat == 2 else 0, 3, 3, 3], dtype=np.int8)
    columns["moon_shooter"] = np.array([r[4] for r in rows], dtype=np.int8)
    columns["qs_taker"] = np.array([r[5] for r in rows], dtype=np.int8)
    columns["jd_taker"] = np.array([2, 1, 0, 3], dtype=np.int8)
    return pd.DataFrame(columns)


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(np.array([0, 5, 10]), np.array([10, 10, 10]))
    assert low[0] == 0.0 and high[2] == 1.0
    assert low[1] == pytest.approx(0.2366, abs=1e-4) and high[1] == pytest.approx(0.7634, abs=1e-4)
    assert np.isnan(wilson_interval(0, 0)[0])


def test_features_of_a_known_hand() -> None:
    hand = cards("AH KH JH 10H 3H QS KS 4S 2C 5C 9C 3C 7C")  # no diamonds
    f = hand_features(np.array([hand, 0], dtype=np.uint64), prefix="x_").iloc[0]
    assert (f.x_hearts, f.x_high_hearts, f.x_heart_run) == (5, 3, 2)  # AH KH, then the QH gap
    assert (f.x_clubs, f.x_diamonds, f.x_spades, f.x_voids, f.x_longest) == (5, 0, 3, 1, 5)
    assert (f.x_high_cards, f.x_spade_honours) == (5, 2)  # AH KH JH QS KS
    assert f.x_has_qs and f.x_has_ks and not f.x_has_as and not f.x_has_jd
    empty = hand_features(np.array([0], dtype=np.uint64)).iloc[0]
    assert empty.voids == 4 and empty.hearts == 0
    assert popcount(np.array([int(FULL_DECK)], dtype=np.uint64)).tolist() == [52]
    one = hand_features(hand)  # one hand as a number: a row (pandas refused a frame of scalars)
    assert one.shape[0] == 1 and one.iloc[0].hearts == 5


def test_long_format_one_row_per_seat() -> None:
    long = to_long(_hands())
    assert len(long) == 16 and long["seat"].tolist()[:4] == [0, 1, 2, 3]
    assert long["agent"].astype(str).tolist()[:4] == ["A", "B", "A", "B"]
    moon = long[long["shot_moon"]]
    assert moon[["hand", "seat", "points", "score"]].values.tolist() == [[0, 2, 26, 0]]
    # seat 2 (A) shot: suffered by the B seats, not by seat 0, another copy of A (until 2026-12-07 it was)
    assert long.loc[long["hand"] == 0, "moon_suffered"].tolist() == [False, True, False, True]
    # hand 1 passes left: seat 1 receives seat 0's cards and holds them instead of its own
    seat1 = long[(long["hand"] == 1) & (long["seat"] == 1)].iloc[0]
    assert seat1["received"] == cards("AC KC QC")
    assert seat1["held"] == (DIAMONDS & ~cards("AD KD QD")) | cards("AC KC QC")
    assert long.loc[long["hand"] == 1, "held"].to_numpy().sum() == int(FULL_DECK)  # still a partition
    assert long.loc[long["hand"] == 0, "received"].tolist() == [0, 0, 0, 0]  # no pass
    # hearts taken: points less the QS's 13
    assert long.loc[long["hand"] == 2, "hearts_taken"].tolist() == [0, 0, 0, 13]
    assert long.loc[long["hand"] == 1, "hearts_taken"].tolist() == [4, 9, 0, 0]


def test_long_format_builds_only_the_columns_named() -> None:
    """Wide records turned long for a table get only the columns it reads (every column of
    9.6M hands took 8.6 GB at the peak); the values are the full long frame's, and so are
    the tables."""
    records = simulate("standard", ["rule", "random", "rule", "random"], hands=600, seed=3)
    full = to_long(records)
    some = to_long(records, columns=["points", "held", "qs_trick"], features=["dealt"])
    features = [c for c in some.columns if c.startswith("dealt_")]
    assert set(some.columns) == {"hand", "seat", "points", "held", "dealt", *features, "qs_trick"}
    assert features and len(some.columns) - len(features) < len(full.columns) / 3
    pd.testing.assert_frame_equal(some.drop(columns=features), full[[c for c in some if c not in features]])
    for table in (
        lambda data: moon_rates(data, by=["agent", "held_hearts"]),
        lambda data: failed_moons(data, by="pass_direction"),
        moons_suffered,
        qs_tricks,
        lambda data: stopping_tricks(data, min_points=14),
        lambda data: points_distribution(data, column="points"),
        lambda data: qs_capture_rates(data, by=["seat", "dealt_spades"]),
        # a table of when passes its own few columns on to the counting: read as wide records
        # ("no dealt_0 column") unless grouped by agent, until is_long told them apart
        lambda data: qs_tricks(data, "seat"),
        lambda data: stopping_tricks(data, None, min_points=14),
        lambda data: qs_tricks(data, "pass_direction"),
    ):
        pd.testing.assert_frame_equal(table(records), table(full))
    with pytest.raises(AnalysisError, match="needs column 'scor'.*did you mean 'score'"):
        points_distribution(records, column="scor")  # suggested among every column it could have
    with pytest.raises(AnalysisError, match="to_long makes no column 'pointz'.*did you mean 'points'"):
        to_long(records, columns=["pointz"])  # it was left out in silence
    games, hands = simulate_games("quick", "random", games=3, seed=1, hands=True)
    assert list(to_long(hands).columns) == [c for c in LONG_COLUMNS if c != "deal"]  # every one it makes


def _in_a_game(hands: pd.DataFrame) -> pd.DataFrame:
    """The hands as hands 0 .. 3 of one game: ``game``, ``game_hand`` for ``deal``, and the
    totals before each hand (the sums of the scores before it)."""
    scores = np.stack([hands[f"score_{s}"].to_numpy(dtype=np.int64) for s in range(4)], axis=1)
    totals = np.cumsum(scores, axis=0) - scores
    game = hands.drop(columns=["deal"]).assign(game=0, game_hand=np.arange(len(hands)))
    game = game.assign(**{f"game_won_{s}": s == 2 for s in range(4)})  # the lowest total at the end
    return game.assign(**{f"game_score_{s}": totals[:, s] for s in range(4)})


def test_where_each_seat_stood_in_the_game_before_a_hand() -> None:
    long = to_long(_in_a_game(_hands()))
    totals = [[0, 0, 0, 0], [26, 26, 0, 26], [30, 48, 0, 26], [43, 48, 0, 39]]
    assert long["game_score"].tolist() == sum(totals, [])
    places = [[1, 1, 1, 1], [2, 2, 1, 2], [3, 4, 1, 2], [3, 4, 1, 2]]  # equal totals share a place
    assert long["game_place"].tolist() == sum(places, [])
    assert long["game_behind"].tolist() == [t - min(row) for row in totals for t in row]
    assert long["game_hand"].tolist() == [h for h in range(4) for _ in range(4)]
    assert long["game_won"].tolist() == [False, False, True, False] * 4
    by_place = moon_rates(long, ["agent", "game_place"])
    assert by_place.loc[("A", 1), ["hands", "moons"]].tolist() == [5, 1]  # seat 2's moon, all level
    summary = RecordSummary.from_frame(_in_a_game(_hands()))
    assert summary.in_games and summary.game_hands == 4
    assert summary.moon_rates("moons_by_game_place", scale=1.0).equals(by_place)
    failed = summary.failed_moons(scale=1.0, table="failed_by_game_place")
    assert failed.equals(failed_moons(long, ["agent", "game_place"], scale=1.0))
    # B failed twice, 2nd both times: seat 1's 22 points in hand 1, seat 3's 13 hearts in hand 2
    assert failed.loc[("B", 2), ["hands", "failed"]].tolist() == [4, 2]
    with pytest.raises(AnalysisError, match="unknown failed-attempt table 'moons'"):
        summary.failed_moons(table="moons")
    with pytest.raises(AnalysisError, match="only 0 of these 4 hands are hands of games"):
        RecordSummary.from_frame(_hands()).moon_rates("moons_by_game_place")


def test_moon_rates_known_moon() -> None:
    rates = moon_rates(_hands(), "agent")
    assert rates.loc["A", ["hands", "moons"]].tolist() == [8, 1]
    assert rates.loc["B", ["hands", "moons"]].tolist() == [8, 0]
    assert rates.loc["A", "rate"] == pytest.approx(1 / 8)
    assert rates.loc["A", "low"] < 1 / 8 < rates.loc["A", "high"]
    per_hand = moon_rates(_hands(), None, per="hand", scale=1000)
    assert per_hand[["hands", "moons"]].values.tolist() == [[4, 1]] and per_hand["rate"].iloc[0] == 250
    by_direction = moon_rates(_hands(), "pass_direction", per="hand")
    assert by_direction["moons"].to_dict() == {"left": 0, "right": 0, "across": 0, "none": 1}
    # long frames concatenated (two runs', their hand numbers each from 0): each hand counted once,
    # where a moon of one frame's hand 3 marked the other's hand 3 too (78 moons for 40)
    long = to_long(_hands())
    twice = moon_rates(pd.concat([long, long.assign(shot_moon=False)], ignore_index=True), None, per="hand")
    assert twice[["hands", "moons"]].values.tolist() == [[8, 1]]
    with pytest.raises(AnalysisError, match="cannot group by 'agent'"):
        moon_rates(_hands(), "agent", per="hand")
    with pytest.raises(AnalysisError, match="no such column"):
        moon_rates(_hands(), "nonsense")


def test_moon_rate_by_a_feature_computed_on_demand() -> None:
    rates = moon_rates(_hands(), "dealt_spades")  # only seat 2 holds spades, and it shot once
    assert rates.loc[13, ["hands", "moons"]].tolist() == [4, 1]
    assert rates.loc[0, "moons"] == 0


def test_failed_moons_and_their_cost() -> None:
    table = failed_moons(_hands(), "agent")
    assert table.loc["B", "failed"] == 2 and table.loc["A", "failed"] == 0  # 22 points; all hearts
    assert table.loc["B", "failed_mean_score"] == pytest.approx((22 + 13) / 2)
    b_scores = [26, 26, 22, 0, 0, 13, 8, 0]
    assert table.loc["B", "mean_score"] == pytest.approx(np.mean(b_scores))
    assert table.loc["B", "cost"] == pytest.approx(17.5 - np.mean(b_scores))
    assert table.loc["A", "success"] == 1.0 and table.loc["B", "success"] == 0.0
    assert failed_moons(_hands(), "agent", all_hearts=False).loc["B", "failed"] == 1
    assert failed_moons(_hands(), "agent", min_points=23).loc["B", "failed"] == 1


def test_moons_suffered() -> None:
    table = moons_suffered(_hands(), "agent")
    assert table.loc["B", ["suffered", "points_lost"]].tolist() == [2, 52]
    # the moon A's seat 2 shot is not one suffered by A's seat 0: a copy is no opponent (it was [1, 26])
    assert table.loc["A", ["suffered", "points_lost"]].tolist() == [0, 0]
    assert table.loc["B", "lost_per_hand"] == pytest.approx(52 / 8)


def _with_timeline(frame: pd.DataFrame) -> pd.DataFrame:
    """``_hands()`` with when each trick was won (packed as the records pack it):

    0. seat 2 wins every trick, the points from trick 1 on, the queen in trick 5;
    1. seat 1 takes points from trick 2 until seat 2 wins point trick 8; the queen in trick 4;
    2. seat 3 takes the hearts from trick 3, seat 0 the queen in trick 10;
    3. tricks 5, 6, 7 carry points, won by seats 1, 2, 3 (the queen in 6).
    """
    winners = [
        [2] * 13,
        [0, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 3, 1],
        [3] * 10 + [0, 3, 3],
        [0, 1, 2, 3] * 3 + [2],
    ]
    point_tricks = [range(1, 13), (2, 3, 4, 5, 6, 8, 11), range(3, 13), (5, 6, 7)]
    return frame.assign(
        trick_winners=np.array(
            [sum(w << 3 * t for t, w in enumerate(seats + [7] * 4)) for seats in winners], dtype=np.uint64
        ),
        point_tricks=np.array([sum(1 << t for t in tricks) for tricks in point_tricks], dtype=np.int32),
        qs_trick=np.array([5, 4, 10, 6], dtype=np.int8),
    )


def test_when_each_seat_took_points_and_was_stopped() -> None:
    long = to_long(_with_timeline(_hands())).set_index(["hand", "seat"])
    assert long.loc[0, "first_points_trick"].tolist() == [-1, -1, 1, -1]
    assert long.loc[0, "moon_stopped_trick"].tolist() == [1, 1, -1, 1]
    assert long.loc[1, "first_points_trick"].tolist() == [-1, 2, 8, 11]
    assert long.loc[1, "moon_stopped_trick"].tolist() == [2, 8, 2, 2]
    assert long.loc[2, "moon_stopped_trick"].tolist() == [3, 3, 3, 10]
    assert long.loc[3, "first_points_trick"].tolist() == [-1, 5, 6, 7]
    assert long["qs_trick"].tolist() == [5] * 4 + [4] * 4 + [10] * 4 + [6] * 4


def test_tables_of_when() -> None:
    records = _with_timeline(_hands())
    stopped = stopping_tricks(records)  # the failed attempts: hand 1 seat 1, hand 2 seat 3 (both B)
    assert list(stopped.index) == ["B"] and stopped.loc["B"].to_dict() == {8: 0.5, 10: 0.5}
    queen = qs_tricks(records)  # A took it in tricks 5, 10 and 6; B in trick 4
    assert queen.loc["A"].tolist() == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3])
    assert queen.loc["B", 4] == 1.0
    summary = RecordSummary.from_frame(records)
    assert summary.has_timeline
    pd.testing.assert_frame_equal(summary.stopping_tricks(), stopped)
    pd.testing.assert_frame_equal(summary.qs_tricks(), queen)


def test_records_made_before_the_timeline_say_so() -> None:
    with pytest.raises(AnalysisError, match="these records do not say when each trick was won"):
        stopping_tricks(_hands())
    summary = RecordSummary.from_frame(_hands())
    summary.add(_with_timeline(_hands()))  # a pool of old and new hands: when is known for half
    assert not summary.has_timeline and summary.moon_rates()["hands"].sum() == 8 * 4
    with pytest.raises(AnalysisError, match="only 4 of these 8 hands say when each trick was won"):
        summary.qs_tricks()


def test_points_distribution_and_qs_rates() -> None:
    dist = points_distribution(_hands(), "agent", column="points")
    assert np.allclose(dist.sum(axis=1), 1.0)
    assert dist.loc["A", 0] == pytest.approx(3 / 8)  # A's points: 0 26 | 4 0 | 13 0 | 5 13
    qs = qs_capture_rates(_hands(), "pass_direction")
    assert qs["qs"].tolist() == [1, 1, 1, 1] and qs["hands"].tolist() == [4, 4, 4, 4]


def test_summary_streams_parquet_batches_like_memory(tmp_path) -> None:
    df = simulate("standard", ["random", "highest", "random", "lowest"], hands=3000, seed=5)
    for i, part in enumerate((df.iloc[:1000], df.iloc[1000:])):  # two parts, read in batches of 700
        parquet.write_table(
            pyarrow.Table.from_pandas(part, preserve_index=False), tmp_path / f"part-{i}.parquet"
        )
    streamed = RecordSummary.from_records(tmp_path, batch_size=700)
    memory = RecordSummary.from_frame(df)
    assert streamed.hands == memory.hands == 3000
    for name in memory.counts:
        pd.testing.assert_frame_equal(streamed.counts[name], memory.counts[name], check_dtype=False)
    pd.testing.assert_frame_equal(
        streamed.moon_rates("moons_by_direction"), moon_rates(df, ["agent", "pass_direction"], scale=1000)
    )
    loaded = load_records(tmp_path)
    assert len(loaded) == 3000 and loaded["moon_shooter"].equals(df["moon_shooter"])


def test_a_large_frame_is_summarised_in_batches_cut_where_deals_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``RecordSummary.from_frame`` counted a frame whole: 2.9 million hands took twice the time
    and 2.8 GB more than batches. It counts ``DEFAULT_BATCH`` rows at a time, each batch cut
    where a deal ends, so its tables (the deal sums of the intervals too) are those of one pass."""
    import hearts_sim.studies.analysis as analysis

    run_tournament(TournamentConfig(("rule", "random"), deals=300, seed=3), tmp_path / "run", progress=False)
    df = load_records(tmp_path / "run")  # 4,200 hands, 14 to a deal
    whole = RecordSummary.from_frame(df)
    counted: list[int] = []
    original = RecordSummary._count
    monkeypatch.setattr(analysis, "DEFAULT_BATCH", 1000)  # cut at 1,000 rows, a deal would split

    def count(self: RecordSummary, batch: pd.DataFrame) -> None:
        counted.append(len(batch))
        original(self, batch)

    monkeypatch.setattr(RecordSummary, "_count", count)
    batched = RecordSummary.from_frame(df)
    assert sum(counted) == 4200 and len(counted) == 5 and all(size % 14 == 0 for size in counted)
    assert batched.hands == whole.hands and batched.rules == whole.rules
    for name in whole.counts:
        pd.testing.assert_frame_equal(batched.counts[name], whole.counts[name], check_dtype=False)
    with pytest.raises(AnalysisError, match="other rules than the summary's"):  # checked before any count
        batched.add(load_records(tmp_path / "run").assign(rules="qdan5"))
    assert batched.hands == 4200
    # the hands of games: a deal (a hand seed) is that hand of its game in every seating, rows
    # apart, so the cuts fall where games end (cut where the seed changed, they split deals)
    games = TournamentConfig(("rule", "random"), rules=Rules.preset("quick"), deals=40, seed=3, games=True)
    run_tournament(games, tmp_path / "games", progress=False)
    hands = load_records(tmp_path / "games")
    monkeypatch.setattr(analysis, "DEFAULT_BATCH", 10**9)
    whole = RecordSummary.from_frame(hands)
    monkeypatch.setattr(analysis, "DEFAULT_BATCH", 300)
    counted.clear()
    batched = RecordSummary.from_frame(hands)
    assert len(counted) > 3
    for name in whole.counts:
        pd.testing.assert_frame_equal(batched.counts[name], whole.counts[name], check_dtype=False)


def test_records_are_read_a_part_at_a_time_however_slow_the_reader(tmp_path) -> None:
    """pyarrow's threaded scanner reads ahead without bound while its reader is busy: a report of
    9.6 million hands peaked at 1.8 GB, all its parts decoded and waiting (0.77 GB at 2.4 million:
    memory grew with the run). Read a part at a time, a slow reader holds what one part takes
    in arrow (2.7 times its DataFrame here), however many parts the run has (24 here, a frame
    each)."""
    df = simulate("standard", "random", hands=48_000, seed=8)
    _write_parts(df, tmp_path, 24)
    before = pyarrow.total_allocated_bytes()
    held, largest = [], 0
    for batch in iter_records(tmp_path, batch_size=2000):
        largest = max(largest, int(batch.memory_usage(deep=True).sum()))
        time.sleep(0.02)  # the reader's work (to_long and the counts: 0.25 s a part in a report)
        held.append(pyarrow.total_allocated_bytes() - before)
    assert len(held) == 24
    assert max(held) < 4 * largest, (held, largest)  # all of them waiting: 26 times


def _write_parts(df: pd.DataFrame, folder: Path, parts: int) -> None:
    size = len(df) // parts
    for i in range(parts):
        part = pyarrow.Table.from_pandas(df.iloc[i * size : (i + 1) * size], preserve_index=False)
        parquet.write_table(part, folder / f"part-{i:02d}.parquet")


def test_small_parts_are_read_together_up_to_the_batch_size(tmp_path: Path) -> None:
    """A search agent's run is parts of 56 hands, and each frame costs an analysis a fixed time: a
    report of 250 such parts took 20 s, five times one of 10,000 hands in one part. Parts are
    gathered into frames of up to ``batch_size`` rows, in order, the same records."""
    df = simulate("standard", ["random", "rule", "lowest", "random"], hands=2400, seed=8)
    _write_parts(df, tmp_path, 24)  # 100 hands a part
    frames = list(iter_records(tmp_path, batch_size=250, every_column=True))
    assert [len(frame) for frame in frames] == [200] * 12  # a third part would pass 250
    whole = pd.concat(frames, ignore_index=True)
    assert whole.equals(load_records(tmp_path))
    assert (whole["seed"].to_numpy() == df["seed"].to_numpy()).all()
    assert [len(frame) for frame in iter_records(tmp_path, batch_size=60)] == [60, 40] * 24  # within a part


@pytest.mark.parametrize("preset", ["qdan3", "qdan5", "black_maria"])
def test_long_format_other_tables(preset: str) -> None:
    df = simulate(preset, "random", hands=300, seed=2)
    long = to_long(df, features=True)
    n = int(long["n_players"].iloc[0])
    assert len(long) == 300 * n
    held = np.bitwise_or.reduce(long["held"].to_numpy().reshape(-1, n), axis=1)
    dealt = np.bitwise_or.reduce(long["dealt"].to_numpy().reshape(-1, n), axis=1)
    assert (held == dealt).all()  # passing moves cards between seats, never in or out
    assert (long["shot_moon"].to_numpy().reshape(-1, n).sum(axis=1) == (df["moon_shooter"] >= 0)).all()


def test_single_hands_pooled_with_hands_of_games_are_refused_not_made_up() -> None:
    """``pd.concat`` of ``simulate`` and ``simulate_games(hands=True)`` records: every single hand
    read as first place, won, with a total of -2**63 (one numpy warning), and a shooter's win
    rate by place was the single hands' (0.987 where the games gave 0.75)."""
    games = _in_a_game(_hands())
    single = _hands()
    pooled = pd.concat([single, games], ignore_index=True)
    with pytest.raises(
        AnalysisError, match=r"only 4 of these 8 hands are hands of games .* analyse the two apart"
    ):
        to_long(pooled)
    with pytest.raises(AnalysisError, match="only 4 of these 8 hands are hands of games"):
        moon_rates(pooled, ["agent", "game_place"])
    assert len(to_long(games)) == len(to_long(single)) == 16


def test_a_rate_with_no_moon_counts_each_deal_as_one_trial() -> None:
    """No moon in 60 deals of an agent's 28 seat-hands: nothing to estimate the clustering from,
    and the interval was Wilson over all 1,680 hands (upper bound 2.3 per 1,000, where the
    seat-hands of a deal may all move together); now over the 60 deals, the worst case (60.2).
    So is a rate of 1, and a group of one deal."""
    deals = np.repeat(np.arange(60), 28)
    frame = pd.DataFrame({"deal": deals, "seat": np.tile(np.arange(4), 60 * 7), "agent": "A"})
    none = moon_rates(frame.assign(shot_moon=False, moon_suffered=False), "agent", scale=1000)
    assert none["moons"].iloc[0] == 0 and none["low"].iloc[0] == 0
    assert none["high"].iloc[0] == pytest.approx(1000 * wilson_interval(0, 60)[1])
    every = moon_rates(frame.assign(shot_moon=True, moon_suffered=False), "agent")
    assert every["low"].iloc[0] == pytest.approx(wilson_interval(60, 60)[0])
    one_deal = frame[frame["deal"] == 0].assign(shot_moon=np.arange(28) < 7, moon_suffered=False)
    assert moon_rates(one_deal, "agent")["low"].iloc[0] == pytest.approx(wilson_interval(0.25, 1)[0])


def test_points_lost_to_moons_leave_the_jack_of_diamonds_bonus_out() -> None:
    """Omnibus: a seat that suffered a moon and took the jack of diamonds was counted 16 points
    lost (26 less its -10 bonus), and the report's "lost to moons /hand" fell short."""
    # two agents: a moon shot by a copy of the seat's own agent is not suffered (self-play suffers none)
    records = simulate("omnibus", ["highest", "random", "highest", "random"], hands=4000, seed=3)
    lost = moons_suffered(records, None)
    assert lost["suffered"].iloc[0] > 0
    assert lost["points_lost"].iloc[0] == 26 * lost["suffered"].iloc[0]
    jd_sufferers = to_long(records).query("moon_suffered and took_jd")
    assert len(jd_sufferers) > 0  # the case the test is about occurs in these hands
    summary = RecordSummary.from_frame(records)
    assert summary.moons_suffered()["points_lost"].sum() == lost["points_lost"].iloc[0]


def test_game_records_and_missing_directories_are_refused(tmp_path) -> None:
    with pytest.raises(AnalysisError, match="does not exist"):
        RecordSummary.from_records(tmp_path / "nothing")
    with pytest.raises(AnalysisError, match="holds no records"):
        RecordSummary.from_records(tmp_path)
    with pytest.raises(AnalysisError, match="not per-hand records"):
        to_long(pd.DataFrame({"game": [0]}))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: moon_rates("runs/x"), r"not str: load_records\(path\) reads"),
        (lambda: failed_moons(np.zeros(3)), "expected a DataFrame of hand records, not ndarray"),
        (lambda: moon_rates(_hands().drop(columns=["passed_1", "tricks_3"])), r"'passed_1' \(and 1 more\)"),
        (lambda: moons_suffered(to_long(_hands()).drop(columns=["score"])), "needs column 'score'"),
        (lambda: qs_capture_rates(_hands(), by=["agent", 3]), r"by must be a column name .* \['agent', 3\]"),
        (lambda: moon_rates(_hands(), by=3), "by must be a column name"),
        (lambda: points_distribution(_hands(), column=3), "column must be a column name"),
        (lambda: points_distribution(_hands(), column="nope"), "needs column 'nope'"),
        (lambda: to_long(_hands(), features="x"), "unknown card stage 'x'"),
        (lambda: to_long(_hands(), features=3), "features must be a card stage"),
        (lambda: add_features(to_long(_hands()).drop(columns=["held"]), "held"), "needs column 'held'"),
        (lambda: hand_features([-1]), "not negative ones"),
        (lambda: hand_features(2**60), "bits 0 .. 51: these have bits past them"),
        (lambda: hand_features([[1, 2]]), "one bitboard a hand, in one dimension, not shape \\(1, 2\\)"),
        (lambda: popcount([1.5]), "not float64 values"),
        (lambda: popcount(2**64), "not object values"),
        (lambda: RecordSummary.from_frame(_hands()).moon_rates("failed"), "unknown moon table 'failed'"),
        (lambda: RecordSummary.from_frame(_hands()).moon_rates("moon"), "; did you mean 'moons'\\?"),
        (
            lambda: to_long(_hands(), features="helt"),
            "choose from dealt, held, received; did you mean 'held'",
        ),
        (lambda: RecordSummary().moon_rates(), "no records added yet"),
        (
            lambda: moon_rates(to_long(_hands()), "held_heart"),
            "on demand, such as .*did you mean 'held_hearts'",
        ),
        (lambda: points_distribution(_hands(), column="scor"), "needs column 'scor'.*did you mean 'score'"),
        (lambda: moon_rates(_hands(), scale=-1000), "scale must be a number > 0, not -1000"),
        (lambda: qs_capture_rates(_hands(), z=float("inf")), "z must be a number > 0, not inf"),
        (lambda: RecordSummary.from_frame(_hands()).failed_moons(scale="x"), "scale must be a number > 0"),
        (lambda: failed_moons(_hands(), min_points=0), "min_points 0 is not valid: a hand has at most 43"),
        (lambda: failed_moons(_hands(), min_points=44), "min_points 44 is not valid: .* choose 1 .. 43"),
        (lambda: stopping_tricks(_with_timeline(_hands()), min_points=1.5), "min_points 1.5 is not valid"),
        (lambda: failed_moon_mask(_hands()), "marks the rows of long records: pass to_long\\(records\\)"),
        (lambda: failed_moon_mask(to_long(_hands()).drop(columns=["points"])), "needs column 'points'"),
        (
            lambda: to_long(pd.concat([_hands(), simulate("qdan5", ["random"] * 5, hands=2)])),
            "these records mix numbers of players: 4 of their 6 hands have no seat 4",
        ),
        (
            lambda: RecordSummary.from_frame(_hands(), min_point=18),
            "unknown option 'min_point': choose min_points or all_hearts; did you mean 'min_points'",
        ),
        (
            lambda: RecordSummary().add(RecordSummary()),
            "expected a DataFrame of hand records, not RecordSummary",
        ),
        (lambda: RecordSummary(all_hearts="yes"), "all_hearts must be True or False, not 'yes'"),
        (lambda: RecordSummary(min_points=50), "min_points 50 is not valid"),
        (
            lambda: stopping_tricks(to_long(_with_timeline(_hands())).drop(columns=["shot_moon"])),
            "needs column 'shot_moon'",
        ),
        (
            lambda: qs_tricks(to_long(_with_timeline(_hands())).drop(columns=["took_qs"])),
            "needs column 'took_qs'",
        ),
        (lambda: RecordSummary().qs_tricks(), "no records added yet"),
    ],
)
def test_odd_input_is_refused_in_one_line(call, message: str) -> None:
    """What a notebook gets wrong first: a path for a DataFrame, records loaded without a column a
    table reads, a grouping or an option of the wrong kind. Each is an ``AnalysisError`` (a
    ``ValueError``) of one line, not pandas' ``KeyError`` or numpy's ``OverflowError``."""
    with pytest.raises(AnalysisError, match=message) as refused:
        call()
    assert "\n" not in str(refused.value)


def test_a_summary_pools_only_hands_that_pool_and_shows_in_one_line() -> None:
    """``RecordSummary.add`` took a 5-player frame, or records under other rules, into a 4-player
    standard summary without a word (``from_records`` of such runs refuses them); its repr was
    every count table, 9,600 characters in a notebook."""
    summary = RecordSummary.from_frame(simulate("standard", ["random", "lowest"] * 2, hands=4))
    assert repr(summary) == "RecordSummary(4 hands; agents: lowest, random; rules: standard)"
    assert (
        repr(RecordSummary.from_frame(_hands()))
        == "RecordSummary(4 hands; agents: A, B; rules: not recorded)"
    )
    with pytest.raises(AnalysisError, match="of 5 players and the summary's of 4: their rates do not pool"):
        summary.add(simulate("qdan5", ["random"] * 5, hands=2))
    other = simulate(Rules(moon="self_minus"), ["random"] * 4, hands=2)
    with pytest.raises(
        AnalysisError, match="under other rules than the summary's \\(moon=self_minus; standard\\)"
    ):
        summary.add(other)
    assert summary.hands == 4  # nothing of a refused frame was counted
    summary.add(simulate("standard", ["random"] * 4, hands=3))
    assert summary.hands == 7 and summary.n_players == 4


def test_the_failed_moon_mask_is_a_series_on_the_long_index() -> None:
    long = to_long(_hands()).iloc[::-1]  # any index: the mask keeps it
    mask = failed_moon_mask(long)
    assert mask.index.equals(long.index) and mask.dtype == bool and mask.name == "failed_moon"
    assert sorted(long[mask][["hand", "seat"]].itertuples(index=False)) == [(1, 1), (2, 3)]
    assert mask.groupby(long["agent"], observed=True).sum().to_dict() == {"A": 0, "B": 2}


def test_with_the_moon_off_a_seat_that_takes_every_point_failed_at_nothing() -> None:
    """``moon=off``: a seat that took all 26 shot no moon, and nothing stopped it; it was counted
    a failed attempt (96 of 881 among four ``highest``), which ``stopping_tricks`` left out and
    on which the README's replay of an attempt failed (``moon_stopped`` None, ``mark(None)``)."""
    df = simulate("standard, moon=off", ["highest"] * 4, hands=3000, seed=1)
    long = to_long(df)
    took_all = (long["points"] == 26).to_numpy()
    mask = failed_moon_mask(long).to_numpy()
    assert took_all.sum() > 20 and mask.sum() > 200  # both kinds are there
    assert not (mask & took_all).any()
    assert mask.sum() == failed_moons(df, "agent")["failed"].sum() == stopping_trick_counts(df)["hands"].sum()
    attempt = long[mask].iloc[0]  # the README's steps
    hand = replay(df.iloc[attempt["hand"]])
    stopped = hand.moon_stopped(attempt["seat"])
    assert stopped is not None and hand.mark(stopped, "moon stopped").state_at(stopped).phase == "play"


def test_the_failed_threshold_follows_each_rows_rules() -> None:
    """A failed attempt is ``failed_points`` of the records' rules: 33 of Black Maria's 43, as
    ``find_hand`` and the report count it, where these tables held every deck to 26's 20 (580
    attempts where the report saw 160); a threshold no hand of those rules reaches is refused."""
    maria = simulate(Rules(black_maria=True), ["highest", "random", "lowest", "rule"], hands=400, seed=2)
    standard = simulate("standard", ["highest", "random", "lowest", "rule"], hands=400, seed=2)
    for records, points in ((maria, 33), (standard, 20)):
        long = to_long(records)
        mask = failed_moon_mask(long)
        assert mask.sum() == failed_moon_mask(long, points).sum() > 0
        assert failed_moons(records)["failed"].sum() == mask.sum()
        summary = RecordSummary.from_frame(records)
        assert summary.failed_moons()["failed"].sum() == mask.sum() and summary.failed_min_points == points
        assert stopping_trick_counts(records)["hands"].sum() == mask.sum()
    assert failed_moon_mask(to_long(maria), 20).sum() > failed_moon_mask(to_long(maria)).sum()
    unnamed = to_long(maria).drop(columns="rules")  # records without the column: 20, as before
    assert failed_moon_mask(unnamed).sum() == failed_moon_mask(unnamed, 20).sum()
    blank = to_long(maria).assign(rules=None)  # a row naming no rules: 20 (it raised IndexError)
    assert failed_moon_mask(blank).sum() == failed_moon_mask(unnamed, 20).sum()
    pooled = pd.concat([to_long(standard).assign(rules=None), to_long(maria)], ignore_index=True)
    expected = failed_moon_mask(to_long(standard), 20).sum() + failed_moon_mask(to_long(maria)).sum()
    assert failed_moon_mask(pooled).sum() == expected  # the rows without were held to the last rules'
    with pytest.raises(AnalysisError, match="min_points 27 is not valid"):
        failed_moons(standard, min_points=27)
    both = failed_moons(pd.concat([maria, standard], ignore_index=True), ["agent", "rules"])
    assert (
        both["failed"].sum()
        == failed_moon_mask(to_long(maria)).sum() + failed_moon_mask(to_long(standard)).sum()
    )


def test_hand_features_keep_the_rows_of_a_frames_column() -> None:
    """``hand_features(df["dealt_0"])`` of a filtered frame was numbered from 0: joined back on its
    rows it put each hand's features on another hand."""
    records = simulate("standard", "random", hands=8, seed=1)
    odd = records[records["deal"] % 2 == 1]
    features = hand_features(odd["dealt_0"])
    assert features.index.equals(odd.index)
    pd.testing.assert_frame_equal(features.reset_index(drop=True), hand_features(odd["dealt_0"].to_numpy()))


def test_tables_that_said_nothing_or_took_seat_0s_value_are_refused_or_fixed() -> None:
    """``qs_capture_rates`` by default grouped by pass direction alone, where some seat takes the
    queen every hand (1/n in every row): per agent now, as its siblings; ``per="hand"`` grouped
    by a seat's column took seat 0's value; ``deal_counts`` of a list raised AttributeError."""
    records = simulate("standard", ["rule", "random", "rule", "random"], hands=40, seed=3)
    assert qs_capture_rates(records).index.tolist() == ["random", "rule"]
    assert qs_capture_rates(records)["rate"].nunique() > 1
    for column in ("shot_moon", "took_qs", "points", "score"):
        with pytest.raises(
            AnalysisError, match=f"per='hand' counts hands, not players: it cannot group by '{column}'"
        ):
            moon_rates(records, column, per="hand")
    assert moon_rates(records, "pass_direction", per="hand")["hands"].sum() == 40
    with pytest.raises(AnalysisError, match="expected a DataFrame of hand records, not list"):
        deal_counts([1, 2])  # type: ignore[arg-type]


def test_records_of_an_unfinished_run_come_with_a_warning(tmp_path) -> None:
    """A run stopped after 1 of its chunks read as if it were whole: a report said "65,534
    hands" without a word that they were 1 of 43 chunks'."""
    config = TournamentConfig(("random", "lowest"), deals=40, seed=2, chunk_deals=4)
    with pytest.raises(Interrupted):
        run_tournament(config, tmp_path / "stopped", progress=False, stop_after_chunks=1)
    with pytest.warns(
        UnfinishedRunWarning, match=r"stopped is not finished: its manifest counts 1 of 10 chunks"
    ):
        assert len(load_records(tmp_path / "stopped")) == 4 * 14
    assert "hearts-sim status" in unfinished_note(tmp_path / "stopped")
    run_tournament(config, tmp_path / "stopped", progress=False, resume=True)
    assert unfinished_note(tmp_path / "stopped") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a finished run reads without one
        assert len(load_records(tmp_path / "stopped")) == 40 * 14


@pytest.mark.parametrize(
    ("direction", "n_players", "message"),
    [
        ("left", 0, "n_players=0 is not supported: choose 3, 4 or 5"),
        ("across", 6, "n_players=6 is not supported"),
        ("right", 4.5, "n_players=4.5 is not valid: it must be an integer"),
        ("up", 4, "unknown pass direction 'up'"),
    ],
)
def test_source_offset_refuses_what_the_rules_refuse(direction, n_players, message: str) -> None:
    """A table size or a direction the rules do not play is the rules' own one-line error (the
    check ``pass_offset`` makes everywhere), not a division by zero, and not 0 for an
    across pass at a table of six."""
    with pytest.raises(RulesError, match=message):
        source_offset(direction, n_players)


def test_a_single_stage_name_is_one_stage() -> None:
    """``features="held"`` is the stage ``held``, not the letters h, e, l, d."""
    long = to_long(_hands(), features="held")
    assert "held_hearts" in long.columns and "dealt_hearts" not in long.columns
    assert list(add_features(to_long(_hands()), "dealt").columns) == list(
        to_long(_hands(), features="dealt").columns
    )


def test_a_run_whose_parts_differ_in_columns_reads_the_shared_ones(tmp_path) -> None:
    """A run resumed by a later version: its first parts lack the columns of when."""
    df = simulate("standard", "rule", hands=600, seed=4)
    old = df.iloc[:300].drop(columns=["trick_winners", "point_tricks", "qs_trick"])
    for i, part in enumerate((old, df.iloc[300:])):
        parquet.write_table(
            pyarrow.Table.from_pandas(part, preserve_index=False), tmp_path / f"part-{i}.parquet"
        )
    loaded = load_records(tmp_path)
    assert len(loaded) == 600 and "qs_trick" not in loaded.columns
    summary = RecordSummary.from_records(tmp_path)
    assert summary.hands == 600 and not summary.has_timeline


def test_the_parquet_readers_refuse_odd_columns_and_batch_sizes(tmp_path) -> None:
    df = simulate("standard", "random", hands=50, seed=3, progress=False)
    parquet.write_table(pyarrow.Table.from_pandas(df, preserve_index=False), tmp_path / "part-0.parquet")
    assert list(load_records(tmp_path, columns="dealt_0").columns) == ["dealt_0"]  # one name, not its letters
    with pytest.raises(AnalysisError, match="have no column 'nope' \\(they have deal, "):
        load_records(tmp_path, columns=["dealt_0", "nope"])
    with pytest.raises(AnalysisError, match="columns must be a column name"):
        load_records(tmp_path, columns=[3])
    for size in (0, 1.5, True, MAX_BATCH + 1):
        with pytest.raises(AnalysisError, match="batch_size must be a whole number of rows"):
            RecordSummary.from_records(tmp_path, batch_size=size)
    assert RecordSummary.from_records(tmp_path, batch_size=MAX_BATCH).hands == 50


def test_count_tables_are_the_same_by_bincount_and_by_groupby(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys that are categories or narrow whole numbers are counted by ``np.bincount`` (a report
    of 2.4 million hands spent 8.9 s in its tables through ``DataFrame.groupby``, 6.2 s now); the
    tables are those of groupby, which counts every other key, down to their index dtypes."""
    from hearts_sim.studies import analysis

    long = to_long(
        simulate("standard", ["random", "lowest", "highest", "rule"], hands=3000, seed=4), features=True
    )
    long["spread"] = long["score"].astype(np.int64) * 100_000  # too wide a range: groupby counts it

    odd = pd.DataFrame(
        {
            "int_categories": pd.Categorical([3, 1, 3, 2, 1]),  # shown as strings, as groupby's are
            "int8": np.array([-100, 100, 5, -100, 0], dtype=np.int8),  # a span past int8
            "uint64": np.array([2**63 + 5, 2**63 + 1, 2**63 + 5, 2**63, 2**63], dtype=np.uint64),
        }
    )
    counts = {"hands": np.ones(5), "points": np.arange(5)}

    def tables() -> list[pd.DataFrame]:
        keys = ["int_categories", "int8", "uint64"]
        return [analysis._group_sums(odd, [key], counts) for key in keys] + [
            analysis._group_sums(odd, keys, counts),
            analysis.moon_counts(long, ["agent", "pass_direction"]),
            analysis.moon_counts(long, ["agent", "held_hearts"]),
            analysis.distribution_counts(long, ["agent", "seat"], "score"),
            analysis.failed_moon_counts(long, "agent"),
            analysis.qs_counts(long, ["pass_direction", "agent"]),
            analysis.distribution_counts(long, "agent", "spread"),
            analysis.moon_counts(long, None),
        ]

    by_bincount = tables()
    assert by_bincount[4].index.names == ["agent", "pass_direction"]
    assert by_bincount[4]["hands"].sum() == 12_000 and by_bincount[1]["points"].tolist() == [3, 4, 2, 1]
    monkeypatch.setattr(analysis, "DENSE_GROUPS", 0)  # no key is narrow enough: groupby counts all
    for dense, grouped in zip(by_bincount, tables(), strict=True):
        pd.testing.assert_frame_equal(dense, grouped)


def test_a_table_refuses_records_under_several_rules_it_would_pool() -> None:
    """``pd.concat`` of a standard run and a ``moon=off`` one: a moon rate by agent halved the
    standard rate, silently (the summary and ``report`` refused the mix; the tables did not)."""
    agents = ["highest", "lowest", "random", "random"]
    standard = simulate("standard", agents, hands=300, seed=1)
    both = pd.concat([standard, simulate(Rules(moon="off"), agents, hands=300, seed=2)], ignore_index=True)
    mixed = (
        "these records mix rules \\(moon=off; standard\\): their rates do not pool; "
        "group a table by 'rules' too"
    )
    for table in (moon_rates, failed_moons, moons_suffered, points_distribution, qs_capture_rates):
        with pytest.raises(AnalysisError, match=mixed):
            table(both)
        with pytest.raises(AnalysisError, match=mixed):
            table(to_long(both))
    with pytest.raises(AnalysisError, match=mixed):
        deal_differences(both, "highest", "lowest")
    by_rules = moon_rates(both, ["agent", "rules"])  # grouped by rules: each group is one rules'
    alone = moon_rates(standard)
    assert by_rules.xs("standard", level="rules")["moons"].to_dict() == alone["moons"].to_dict()
    assert by_rules.xs("moon=off", level="rules")["moons"].sum() == 0
    assert moon_rates(standard)["moons"].sum() > 0  # the standard run had moons to halve


def test_the_analysis_module_imports_by_its_short_name() -> None:
    """``import hearts_sim.analysis`` was ModuleNotFoundError: only the package's lazy attribute
    gave the module the README names. Every name is the analysis module's own object."""
    import hearts_sim
    import hearts_sim.analysis as short
    from hearts_sim import analysis
    from hearts_sim.analysis import to_long as short_to_long
    from hearts_sim.studies import analysis as full

    assert short is analysis is hearts_sim.analysis and short_to_long is to_long is full.to_long
    assert short.RecordSummary is full.RecordSummary and short._frame is full._frame  # unexported too
    assert set(dir(full)) <= set(dir(short))


def test_records_without_a_rules_column_are_not_taken_for_standard_ones(tmp_path) -> None:
    """Loose records (no manifest) are told apart by their first hand's rules column; records
    without one were taken for standard, and refused beside a run under other rules they share."""
    from hearts_sim.studies.analysis import pooled_rules

    loose = []
    for seed, keep_rules in ((3, True), (4, False)):
        run = tmp_path / f"run{seed}"
        config = TournamentConfig(("lowest", "random"), rules=Rules(moon="off"), deals=20, seed=seed)
        run_tournament(config, run, progress=False)
        records = tmp_path / f"loose{seed}" / "records"
        records.mkdir(parents=True)
        for part in sorted((run / "records").glob("*.parquet")):
            table = parquet.read_table(part)
            parquet.write_table(table if keep_rules else table.drop(["rules"]), records / part.name)
        loose.append(records)
    assert pooled_rules(loose) is None  # no manifest: pooled, under the rules of the one that says


def test_rates_of_duplicate_records_have_intervals_over_deals(tmp_path: Path) -> None:
    """A duplicate run plays each deal in every seating, so the hands of a deal are one cluster:
    the interval of a rate is Wilson's at the effective number of hands (Kish's design effect,
    from the ratio estimator's variance over deals), wider than Wilson's over player-hands,
    which covered a known moon rate 90% of the time instead of 95%. Records without deals keep
    Wilson's interval; the hands of games are told apart by their seeds; in self-play every hand
    is its own deal, whose seats suffer one moon together."""
    run_tournament(TournamentConfig(("rule", "random"), deals=1500, seed=8), tmp_path / "run", progress=False)
    records = pd.read_parquet(tmp_path / "run" / "records")
    long = to_long(records)
    for table, counted in (
        (moon_rates(records), "shot_moon"),
        (qs_capture_rates(records, "agent"), "took_qs"),
    ):
        for agent, row in table.iterrows():
            mine = long[long["agent"] == agent]
            per_deal = mine.groupby("deal")[counted].agg(["sum", "size"])
            k, n, deals = per_deal["sum"].sum(), per_deal["size"].sum(), len(per_deal)
            rate = k / n
            clustered = deals / (deals - 1) * ((per_deal["sum"] - rate * per_deal["size"]) ** 2).sum() / n**2
            deff = max(1.0, clustered / (rate * (1 - rate) / n))
            if counted == "shot_moon":  # the same cards make the same moon in another seating
                assert deff > 1.2
            low, high = wilson_interval(k / deff, n / deff)
            assert (row["low"], row["high"]) == pytest.approx((low, high), rel=1e-9)
            assert row["rate"] == pytest.approx(rate)
    plain = moon_rates(records.drop(columns=["deal", "seed"]))  # nothing tells a deal: Wilson over hands
    low, high = wilson_interval(plain["moons"].to_numpy(), plain["hands"].to_numpy())
    assert np.allclose(plain["low"], low) and np.allclose(plain["high"], high)
    assert (moon_rates(records)["low"] < plain["low"]).all()
    summary = RecordSummary.from_records(tmp_path / "run", batch_size=4000, progress=False)  # many batches
    assert np.allclose(
        summary.moon_rates(scale=1)[["low", "high"]], moon_rates(records)[["low", "high"]], rtol=1e-3
    )
    selfplay = simulate("standard", ["random", "rule", "random", "rule"], hands=4000, seed=3)
    assert selfplay["deal"].is_unique  # one hand a deal: a moon shot by one seat of it alone
    alone = moon_rates(selfplay)
    low, high = wilson_interval(alone["moons"].to_numpy(), alone["hands"].to_numpy())
    assert np.allclose(alone["low"], low) and np.allclose(alone["high"], high)
    suffered = moons_suffered(selfplay, None)  # but suffered by the other three together: wider
    low, high = wilson_interval(suffered["suffered"].to_numpy(), suffered["hands"].to_numpy())
    assert (suffered["low"] < low).all() and (suffered["high"] > high).all()
    # the hands of duplicate games have no deal number: their seeds tell a deal's hands
    games = tmp_path / "games"
    run_tournament(TournamentConfig(("rule", "random"), deals=40, seed=8, games=True), games, progress=False)
    hands = pd.read_parquet(games / "hands")
    assert "deal" not in hands.columns
    widened, plain = moon_rates(hands), moon_rates(hands.drop(columns=["seed"]))
    assert (widened["low"] < plain["low"]).all() and (widened["high"] > plain["high"]).all()
    # a row whose group key is missing is in no group, as without the deals (it raised)
    keyed = to_long(records).assign(x=lambda frame: np.where(frame["seat"] == 0, np.nan, frame["seat"] * 1.5))
    assert list(moon_rates(keyed, "x").index) == [1.5, 3.0, 4.5]


def test_runs_pooled_with_concat_keep_their_deals_apart(tmp_path: Path) -> None:
    """Every run numbers its deals from 0: ``pd.concat`` of two runs' records gave
    ``deal_differences`` one row a number, of two runs' cards and pass directions (1,500 deals
    of two 1,500-deal runs), and the intervals took the two runs' deals for one. A deal is its
    number and seed now; two runs on the same seed dealt the same cards, one deal each."""
    runs = []
    for seed in (4, 5):
        config = TournamentConfig(("lowest", "rule"), deals=12, seed=seed)
        run_tournament(config, tmp_path / f"s{seed}", progress=False)
        runs.append(load_records(tmp_path / f"s{seed}"))
    both = pd.concat(runs, ignore_index=True)
    alone = [deal_differences(run, "lowest", "rule") for run in runs]
    pooled = deal_differences(both, "lowest", "rule")
    assert len(pooled) == 24 and list(pooled.index) == sorted([*range(12)] * 2)
    expected = pd.concat(alone).reset_index().sort_values(["deal", "seed"]).set_index("deal")
    pd.testing.assert_frame_equal(pooled, expected)  # each run's own deals, directions and means
    assert pooled["diff"].mean() == pytest.approx(np.mean([table["diff"].mean() for table in alone]))
    for table in (moon_counts, failed_moon_counts, suffered_counts, qs_counts):
        deals = [table(frame)["deals"] for frame in (*runs, both)]
        assert (deals[0] + deals[1]).equals(deals[2]), table.__name__  # 12 + 12 deals, not 12
    counts = deal_counts(both)
    assert counts.index.names == ["deal", "seed", "agent"] and len(counts) == 48
    summary = RecordSummary.from_frame(both)  # its batch's deals found once for all its tables
    assert np.allclose(summary.moon_rates(scale=1), moon_rates(both)[summary.moon_rates().columns])
    assert np.allclose(summary.moons_suffered(scale=1), moons_suffered(both))
    # the same run twice: its deals once, its table as the run's alone, no deal added
    twice = pd.concat([runs[0], runs[0]], ignore_index=True)
    pd.testing.assert_frame_equal(deal_differences(twice, "lowest", "rule"), alone[0])
    for table in (moon_counts, qs_counts):
        once, doubled = table(runs[0]), table(twice)
        assert (doubled["hands"] == 2 * once["hands"]).all() and doubled["deals"].equals(once["deals"])
    once, doubled = moon_rates(runs[0], None), moon_rates(twice, None)  # moons: a deal's hands together
    assert np.allclose(doubled[["rate", "low", "high"]], once[["rate", "low", "high"]])


def test_load_records_pools_a_list_of_runs_as_report_does(tmp_path: Path) -> None:
    """``load_records([A, B])`` raised ``TypeError: expected str, bytes or os.PathLike object, not
    list``. It pools them now, refusing what ``hearts-sim report A B`` refuses, and keeps the
    columns every run has (a run made before the timeline columns lacks them)."""
    for seed in (4, 5):
        config = TournamentConfig(("lowest", "rule"), deals=6, seed=seed)
        run_tournament(config, tmp_path / f"s{seed}", progress=False)
    a, b = tmp_path / "s4", tmp_path / "s5"
    pooled = load_records([a, b])
    assert len(pooled) == 2 * 6 * 14 and isinstance(pooled["agent_0"].dtype, pd.CategoricalDtype)
    concat = pd.concat([load_records(a), load_records(b)], ignore_index=True)
    pd.testing.assert_frame_equal(
        deal_differences(pooled, "lowest", "rule"), deal_differences(concat, "lowest", "rule")
    )
    assert len(deal_differences(pooled, "lowest", "rule")) == 12
    assert load_records([a]).equals(load_records(a))
    assert list(load_records([a, b], columns=["seed"])) == ["seed"]
    old = tmp_path / "old" / "records"  # a copy of s5's records from before the timeline columns
    old.mkdir(parents=True)
    for part in sorted((b / "records").glob("*.parquet")):
        parquet.write_table(
            parquet.read_table(part).drop(["trick_winners", "point_tricks", "qs_trick"]), old / part.name
        )
    mixed = load_records([a, old])
    assert len(mixed) == 168 and "qs_trick" not in mixed and "qs_trick" in load_records(a)
    run_tournament(
        TournamentConfig(("lowest", "random"), deals=2, seed=7), tmp_path / "others", progress=False
    )
    others = load_records([a, tmp_path / "others"])  # other agents: categories of other sets
    for column in ("agent_0", "agent_3", "rules", "pass_direction"):  # pandas 3 made them str
        assert isinstance(others[column].dtype, pd.CategoricalDtype), column
    assert set(others["agent_0"].cat.categories) == {"lowest", "rule", "random"}
    assert moon_rates(mixed)["hands"].sum() == 168 * 4
    run_tournament(TournamentConfig(("lowest", "rule"), deals=6, seed=4), tmp_path / "again", progress=False)
    games = tmp_path / "games"
    run_tournament(TournamentConfig(("lowest", "rule"), deals=2, seed=6, games=True), games, progress=False)
    for paths, message in (
        ([a, a], "are the same run: its hands would count twice"),
        ([a, tmp_path / "again"], "are runs of the same agents on seed 4: they played the same hands"),
        ([a, games], "holds hands of games and .* single deals: they do not pool"),
        ([], "no run given: name at least one run directory"),
        ([a, 3], r"name a run directory \(a str or Path\) or a list of them, not \["),
        (3, r"name a run directory \(a str or Path\) or a list of them, not 3"),
    ):
        with pytest.raises(AnalysisError, match=message):
            load_records(paths)  # type: ignore[arg-type]
