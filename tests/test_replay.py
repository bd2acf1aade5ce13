"""``analysis.replay``: a recorded hand rebuilt card by card reproduces its record (points, trick
winners, moon shooter, ...) under every rules set, from ``simulate`` and from a tournament's
Parquet records; rows it cannot replay are refused with the reason.

The replay is checked against the kernel's HAND_RECORD array that ``run_hands`` returns for the
same table and seed (what ``simulate`` and tournaments call), and ``replay`` itself checks every
column of the row, the packed ``trick_winners`` and ``point_tricks`` included.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agents.external import close_all
from hearts_sim import analysis as an
from hearts_sim.core.cards import CardSet, card_str, cards_str, parse_card
from hearts_sim.core.rules import Rules
from hearts_sim.selfplay.records import hand_frame, unpack_trick_winners
from hearts_sim.selfplay.simulate import Table, run_hands, simulate, simulate_games
from hearts_sim.studies import analysis as studies_analysis
from hearts_sim.studies.tournament import TournamentConfig, make_config, run_tournament

try:
    from tests.agent_checks import CHECK_RULES
except ImportError:  # tests/ itself on sys.path
    from agent_checks import CHECK_RULES  # type: ignore[no-redef]

SEATS = ["rule", "random", "lowest", "highest", "normal"]  # a mixed table, cut to the rules' size
QS = parse_card("QS")
EXAMPLE_AGENT = Path(__file__).resolve().parents[1] / "experiments" / "example_agent.py"
SEARCH = "ismcts(iterations=60)"  # an iteration budget: replays exactly (tests/test_search_agents.py's)


def _recorded(rules: Rules, seats: list[str], hands: int, seed: int) -> tuple[np.ndarray, pd.DataFrame]:
    """The kernel's HAND_RECORDs and the DataFrame ``simulate`` makes of them."""
    table = Table.build(rules, [seats])
    records = run_hands(table, seed, 0, hands)
    return records, hand_frame(records, table.rules, table.labels())


def _assert_reproduces(replay: an.Replay, record: np.void, rules: Rules) -> None:
    n, tricks = rules.n_players, rules.hand_size
    assert replay.points == tuple(int(p) for p in record["points"][:n])
    assert replay.scores == tuple(int(x) for x in record["score"][:n])
    assert replay.trick_winners == unpack_trick_winners([record["trick_winners"]])[0, :tricks].tolist()
    assert replay.moon_shooter == int(record["moon_shooter"])
    assert len(replay.plays) == tricks * n
    assert len({card for _, card in replay.plays}) == tricks * n  # every card in play once


@pytest.mark.parametrize("name", sorted(CHECK_RULES))
def test_replay_reproduces_simulated_hands_under_every_rules_set(name: str) -> None:
    rules = CHECK_RULES[name]
    records, frame = _recorded(rules, SEATS[: rules.n_players], hands=200, seed=11)
    moons = np.flatnonzero(records["moon_shooter"] >= 0)[:4]
    chosen = sorted({*range(8), *moons.tolist()})  # ordinary hands and moon shots
    for row in chosen:
        _assert_reproduces(an.replay(frame.iloc[row]), records[row], rules)
    if name == "standard":
        assert len(moons) > 0, "the sample should hold moon shots"


def test_replay_of_a_search_agent_with_an_iteration_budget() -> None:
    rules = CHECK_RULES["qdan3"]
    records, frame = _recorded(rules, [SEARCH, "random", "pass=random,play=" + SEARCH], hands=3, seed=5)
    for row in range(len(frame)):
        _assert_reproduces(an.replay(frame.iloc[row]), records[row], rules)


def test_replay_of_tournament_records_read_back_from_parquet(tmp_path) -> None:
    """A spec named twice is labelled ``highest#1``, ``highest#2``; a level name is kept."""
    config = make_config(["normal", "highest", "highest"], rules="qdan5", deals=6, seed=3)
    run_tournament(config, tmp_path / "run", progress=False)
    loaded = an.load_records(tmp_path / "run")
    records = run_hands(config.table(), config.seed, 0, config.deals)  # the same jobs, in order
    assert len(loaded) == len(records) == 6 * len(config.seatings())
    assert {"highest#1", "highest#2", "normal"} <= set(loaded["agent_0"].astype(str))
    for row in range(len(loaded)):
        _assert_reproduces(an.replay(loaded.iloc[row]), records[row], config.rules)


def test_replay_rows_of_every_form_agree() -> None:
    df = simulate("omnibus", ["rule", "random", "rule", "lowest"], hands=5, seed=2)
    from_series = an.replay(df.iloc[3])
    assert an.replay(df.iloc[[3]]).plays == from_series.plays
    assert an.replay(df.iloc[3].to_dict()).plays == from_series.plays
    assert an.replay(next(df.iloc[3:].itertuples())).plays == from_series.plays
    no_rules = df.iloc[3].drop("rules")
    assert an.replay(no_rules, rules="omnibus").plays == from_series.plays
    # as a display names them (it was refused as an unknown preset 'omnibus (jd_bonus')
    assert an.replay(no_rules, rules="omnibus (jd_bonus=-10)").plays == from_series.plays


def test_to_frame_one_row_per_card() -> None:
    df = simulate("black_maria", ["rule", "highest", "random"], hands=10, seed=4)
    replay = an.replay(df.iloc[7])
    frame = replay.to_frame()
    assert len(frame) == 51 and frame["card"].is_unique
    assert frame["trick"].tolist() == [t for t in range(17) for _ in range(3)]
    assert (frame.loc[frame["position"] == 0, "seat"].tolist()) == [t.leader for t in replay.tricks]
    assert frame.groupby("trick")["wins"].sum().eq(1).all()
    assert frame.loc[frame["wins"], "seat"].tolist() == replay.trick_winners
    last = frame.iloc[-1]
    assert tuple(int(last[f"points_{s}"]) for s in range(3)) == replay.points
    assert int(frame["points"].sum()) == 43  # Black Maria: hearts, QS, KS and AS
    assert frame.loc[frame["card"] == "KS", "points"].tolist() == [10]


def test_state_at_and_moon_stopped() -> None:
    df = simulate("standard", ["rule", "highest", "rule", "highest"], hands=200, seed=9)
    failed = an.to_long(df).pipe(lambda long: long[an.failed_moon_mask(long)])
    hand, seat = int(failed["hand"].iloc[0]), int(failed["seat"].iloc[0])
    replay = an.replay(df.iloc[hand])
    stopped = replay.moon_stopped(seat)
    assert stopped is not None
    stopper = replay.tricks[stopped]
    assert stopper.winner != seat and stopper.points > 0
    assert all(t.winner == seat or t.points == 0 for t in replay.tricks[:stopped])
    before = replay.state_at(stopped)
    assert before.trick_number == stopped and before.phase == "play"
    assert tuple(int(p) for p in before.points()) == (
        replay.tricks[stopped - 1].points_after if stopped else (0,) * 4
    )
    end = replay.state_at(len(replay.tricks))
    assert end.phase == "done" and tuple(int(x) for x in end.scores()) == replay.scores
    marked = replay.mark(stopped, "stopped")
    assert marked.marks == {stopped: "stopped"} and replay.marks == {}
    with pytest.raises(an.ReplayError, match="does not exist"):
        replay.mark(len(replay.tricks), "after the end")
    # what a notebook can get wrong: each is refused where it is given, not when the table displays
    for refused, message in [
        (lambda: replay.mark(True, "a bool is not trick 1"), r"trick True does not exist: choose 0\.\.12"),
        (lambda: replay.mark(1.5, "x"), "trick 1.5 does not exist"),
        (lambda: replay.mark(1, 42), "a trick's note is text, not 42"),
        (lambda: replay.state_at(-1), r"trick -1 does not exist: choose 0\.\.13"),
        (lambda: replay.moon_stopped(4), r"seat 4 does not exist: this hand has seats 0\.\.3"),
        (lambda: replay.moon_stopped("0"), "seat '0' does not exist"),
    ]:
        with pytest.raises(an.ReplayError, match=message):
            refused()


def test_a_time_budgeted_agent_cannot_be_replayed(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """... from Python or from the command line, which says so in one line (it printed a
    traceback until 2026-12-05: ``ReplayError`` was not an ``InputError``)."""
    from hearts_sim.apps.cli import main

    df = simulate("standard", ["ismcts(ms=1)", "random", "random", "random"], hands=1, seed=1, threads=1)
    with pytest.raises(an.ReplayError, match=r"seat 0's agent ismcts\(ms=1\) plays on a time budget"):
        an.replay(df.iloc[0])
    run = tmp_path / "run"
    assert main(["tournament", "mc(ms=1)", "random", "--deals", "1", "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["replay", str(run), "--row", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "agent mc(ms=1) plays on a time budget (ms=1)" in err


def test_a_record_the_replay_disagrees_with_is_refused() -> None:
    df = simulate("standard", ["rule", "random", "lowest", "highest"], hands=3, seed=8)
    row = df.iloc[1].copy()
    row["points_2"] = int(row["points_2"]) + 1
    with pytest.raises(an.ReplayError, match="the replay disagrees with the record: points_2"):
        an.replay(row)
    row = df.iloc[1].copy()
    row["agent_1"] = "highest"  # not the agent that played: it passes other cards
    with pytest.raises(an.ReplayError, match="disagrees with the record: passed_1"):
        an.replay(row)
    with pytest.raises(an.ReplayError, match="the deal disagrees with the record: dealt_0"):
        an.replay(_with(df.iloc[1], seed=int(df.iloc[1]["seed"]) + 1))


def _with(row: pd.Series, **values: object) -> pd.Series:
    changed = row.astype(object)
    for column, value in values.items():
        changed[column] = value
    return changed


@pytest.mark.parametrize("name", sorted(CHECK_RULES))
def test_when_columns_of_the_long_format_agree_with_the_replay(name: str) -> None:
    """``to_long``'s ``first_points_trick``, ``moon_stopped_trick`` and ``qs_trick``, read from the
    records in bulk, are what the replayed hand shows trick by trick (kitty rules included)."""
    rules = CHECK_RULES[name]
    frame = simulate(rules, SEATS[: rules.n_players], hands=40, seed=12)
    long = an.to_long(frame).set_index(["hand", "seat"])
    for hand in range(len(frame)):
        replay = an.replay(frame.iloc[hand])
        queen = next(
            t
            for t in replay.tricks
            if QS in {c for _, c in t.cards} or (t.number == 0 and QS in replay.kitty)
        )
        for seat in range(rules.n_players):
            row = long.loc[(hand, seat)]
            took = [t.number for t in replay.tricks if t.winner == seat and t.points > 0]
            assert row["first_points_trick"] == (took[0] if took else -1)
            stopped = replay.moon_stopped(seat)
            assert row["moon_stopped_trick"] == (-1 if stopped is None else stopped)
            assert row["qs_trick"] == queen.number


SEEDED_AGENT = """
import random

class Lucky:
    def choose_pass(self, obs, seed):
        return random.Random(seed).sample(sorted(obs.hand), obs.rules.pass_count)

    def choose_play(self, obs, seed):
        return random.Random(seed){play}
"""


@pytest.mark.parametrize("preset", ["standard", "qdan3"])
def test_hands_of_outside_agents_replay_with_the_loops_seeds(preset: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A Python agent and an engine on stdin/stdout are asked again, with the seeds the lockstep
    loop gave them: an agent that plays at random from its seed replays exactly; one whose code
    changed since, or that fails now, is refused in one line."""
    (tmp_path / "lucky.py").write_text(SEEDED_AGENT.format(play=".choice(sorted(obs.legal_moves()))"))
    engine = f"exec:{shlex.quote(sys.executable)} -m hearts_sim serve --agent rule"
    seats = [f"py:{tmp_path / 'lucky.py'}:Lucky", "rule", f"py:{EXAMPLE_AGENT}:Ducker", engine]
    rules = Rules.preset(preset)
    records, frame = _recorded(rules, seats[: rules.n_players], hands=12, seed=6)
    for row in range(len(frame)):
        _assert_reproduces(an.replay(frame.iloc[row]), records[row], rules)
    _new_session()
    (tmp_path / "lucky.py").write_text(SEEDED_AGENT.format(play=".choice(sorted(obs.legal_moves())[:1])"))
    with pytest.raises(an.ReplayError, match="disagrees with the record"):
        for row in range(len(frame)):
            an.replay(frame.iloc[row])
    _new_session()
    (tmp_path / "lucky.py").write_text(SEEDED_AGENT.format(play=".choice([])"))
    with pytest.raises(
        an.ReplayError, match=r"cannot replay: agent py:.*lucky.py:Lucky: raised .* \(seat 0, "
    ):
        an.replay(frame.iloc[0])
    _new_session()
    (tmp_path / "lucky.py").unlink()
    with pytest.raises(an.ReplayError, match=r"seat 0: py:.*lucky.py:Lucky: no such file"):
        an.replay(frame.iloc[0])


def test_an_agent_object_is_given_again_by_its_recorded_name() -> None:
    """``simulate`` records an object as ``py:ClassName``, which names no file or module: the
    replay asks for the object and plays it exactly once given."""
    import importlib.util

    loader = importlib.util.spec_from_file_location("example_agent", EXAMPLE_AGENT)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    rules = Rules()
    records, frame = _recorded(rules, [module.Ducker(), "rule", "random", "lowest"], hands=6, seed=2)
    assert frame["agent_0"].iloc[0] == "py:Ducker"
    with pytest.raises(an.ReplayError, match=r"seat 0 was played by py:Ducker, an agent object .* agents="):
        an.replay(frame.iloc[0])
    for row in range(len(frame)):
        _assert_reproduces(
            an.replay(frame.iloc[row], agents={"py:Ducker": module.Ducker()}), records[row], rules
        )
    with pytest.raises(an.ReplayError, match="agents must map a seat's recorded name to its agent"):
        an.replay(frame.iloc[0], agents=[module.Ducker()])
    close_all()


def test_the_replay_command_finds_a_hand_and_shows_it(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``hearts-sim replay DIR``: a row, the nth moon shot or failed attempt (of an agent), read
    batch by batch; a failed attempt's stopping trick is marked."""
    from hearts_sim.apps.cli import main

    run = tmp_path / "run"
    run_tournament(
        make_config(["rule", "highest", "random", "lowest"], deals=20, seed=5), run, progress=False
    )
    records = an.load_records(run)
    long = an.to_long(records)
    shooter = str(long.loc[long["shot_moon"], "agent"].value_counts().index[0])
    moons = long[long["shot_moon"] & (long["agent"] == shooter)]
    failed = long[an.failed_moon_mask(long)]
    assert len(moons) >= 2 and len(failed) >= 3
    for k in (1, 2):  # the same hand whatever the batches
        found = an.find_hand(run, moon=True, agent=shooter, nth=k, batch_size=50)
        assert (found.index, found.seat) == (moons["hand"].iloc[k - 1], moons["seat"].iloc[k - 1])

    assert main(["replay", str(run), "--moon", "--agent", shooter, "--nth", "2"]) == 0
    shot = moons.iloc[1]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"row {shot['hand']:,}, seat {shot['seat']} ({shooter}) shoots the moon; deal ")
    assert out[1:] == str(an.replay(records.iloc[shot["hand"]])).splitlines()

    assert main(["replay", str(run), "--failed", "--nth", "3"]) == 0
    attempt = failed.iloc[2]
    out = capsys.readouterr().out.splitlines()
    who = f"seat {attempt['seat']} ({attempt['agent']})"
    assert out[0].startswith(f"row {attempt['hand']:,}, {who} takes {attempt['points']} points and no moon")
    stopped = int(attempt["moon_stopped_trick"])
    marked = [line for line in out if "<- seat" in line]
    assert marked == [line for line in out if line.startswith(f"{stopped + 1:>2}. ")]
    assert marked[0].endswith("moon is off") and f"seat {attempt['seat']}'s moon" in marked[0]

    assert main(["replay", str(run), "--row", "7"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == str(an.replay(records.iloc[7])).splitlines()


def test_a_row_is_found_in_the_part_that_holds_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``find_hand(row=N)`` reads the one part that holds row N (the parts' footers count their
    rows), where it read every part before it whole (a speed-up: this is its equivalence check,
    which the old code passes too): the same row as ``load_records``, every column alike, at each
    part's edges; a row past the end names the run's rows."""
    run = tmp_path / "run"
    run_tournament(TournamentConfig(("rule", "random"), deals=12, seed=3, chunk_deals=4), run, progress=False)
    records = an.load_records(run)
    parts = sorted((run / "records").glob("*.parquet"))
    sizes = [len(pd.read_parquet(part)) for part in parts]
    assert len(parts) == 3 and sum(sizes) == len(records)
    edges = [0, sizes[0] - 1, sizes[0], sizes[0] + sizes[1], len(records) - 1]
    for row in edges:
        found = an.find_hand(run, row=row)
        assert (found.index, found.seat) == (row, None)
        pd.testing.assert_series_equal(found.row, records.iloc[row], check_names=False)
        assert str(an.replay(found.row)) == str(an.replay(records.iloc[row]))
    with pytest.raises(
        an.AnalysisError, match=f"holds {len(records)} hands .*: there is no row {len(records)}$"
    ):
        an.find_hand(run, row=len(records))


def test_the_replay_command_shows_a_hand_of_a_game_with_the_totals_before_it(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A ``--games`` run with ``--out`` says where its hands are; ``replay`` finds its moon shots
    among them and names the game, the hand and the totals; ``--worst`` says why it cannot."""
    from hearts_sim.apps.cli import main

    run = tmp_path / "games"
    command = ["tournament", "random", "rule", "--games", "--rules", "quick", "--deals", "20", "--seed", "4"]
    assert main([*command, "--out", str(run), "--quiet"]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    assert hint == f"every hand of its games: hearts-sim report {run}; hearts-sim replay {run} --moon"
    hands = an.load_records(run)
    long = an.to_long(hands)
    shot = long[long["shot_moon"]].iloc[0]
    row = hands.iloc[shot["hand"]]
    assert main(["replay", str(run), "--moon"]) == 0
    out = capsys.readouterr().out.splitlines()
    totals = [int(row[f"game_score_{s}"]) for s in range(4)]
    where = f"game {row['game']:,}, its hand {row['game_hand'] + 1}"
    who = f"seat {shot['seat']} ({shot['agent']})"
    assert out[0] == f"row {shot['hand']:,}, {who} shoots the moon; {where}, seating {row['seating']}"
    assert out[1:] == str(an.replay(row)).splitlines()
    assert f"| game totals before it {totals} |" in out[1]  # the caption
    assert main(["replay", str(run), "--worst", "random"]) == 2
    assert "hands of games" in capsys.readouterr().err

    # a whole game, hand by hand, then one of its hands
    game = hands[(hands["game"] == 7) & (hands["seating"] == 3)]
    read = an.game_rows(run, 7, seating=3, batch_size=5)  # the parts that cannot hold it are skipped
    pd.testing.assert_frame_equal(read, game.reset_index(drop=True), check_categorical=False)
    with pytest.raises(an.AnalysisError, match="holds game records .*, not the hands of games"):
        an.game_rows(run / "records", 7)
    assert main(["replay", str(run), "--game", "7", "--seating", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    won = [str(s) for s in range(4) if game[f"game_won_{s}"].iloc[0]]
    assert out[0].endswith(f"; {len(game)} hands, won by seat {' and seat '.join(won)}")
    table = [line.split() for line in out[2 : 2 + len(game)]]
    totals = game[[f"score_{s}" for s in range(4)]].cumsum().to_numpy()
    assert [[int(x) for x in line[6:10]] for line in table] == totals.tolist()
    shooters = [" ".join(line[10:]) for line in table]
    assert shooters == [f"seat {s}" if s >= 0 else "-" for s in game["moon_shooter"]]
    assert main(["replay", str(run), "--game", str(row["game"]), "--seating", str(row["seating"])]) == 0
    moon_line = capsys.readouterr().out.splitlines()[2 + int(row["game_hand"])]  # the caption, the header
    assert moon_line.split()[0] == str(row["game_hand"] + 1)
    assert moon_line.endswith(f"seat {row['moon_shooter']}")
    last = len(game)
    assert main(["replay", str(run), "--game", "7", "--seating", "3", "--hand", str(last)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == str(an.replay(game.iloc[-1])).splitlines()
    assert main(["replay", str(run), "--game", "7", "--seating", "3", "--hand", str(last + 1)]) == 2
    assert f"game 7 in seating 3 lasted {last} hands, not {last + 1}" in capsys.readouterr().err
    assert main(["replay", str(run), "--game", "20"]) == 2
    assert (
        "holds no game 20 in seating 0: it holds games 0 .. 19, seatings 0 .. 13" in capsys.readouterr().err
    )


def test_the_deal_an_agent_played_worst_and_the_same_cards_in_the_others_hands(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``deal_differences`` averages to the match's A minus B; ``worst_deal`` (and ``hearts-sim
    replay --worst``) picks its largest deal, A's worst hand in it and the same seat played by B."""
    from hearts_sim.apps.cli import main

    run = tmp_path / "run"
    result = run_tournament(make_config(["lowest", "rule"], deals=25, seed=8), run, progress=False)
    records = an.load_records(run)
    table = an.deal_differences(records, "lowest", "rule")
    assert len(table) == 25
    assert table["diff"].mean() == pytest.approx(result.summary["pairs"][0]["a_minus_b"], abs=5e-4)
    ranked = table["diff"].sort_values(ascending=False, kind="stable")
    for nth in (1, 3):
        worse = an.worst_deal(run, "lowest", nth=nth, batch_size=64)  # rule: the only other agent
        assert (worse.deal, worse.b, worse.rank, worse.deals) == (ranked.index[nth - 1], "rule", nth, 25)
        assert worse.means == pytest.approx(tuple(table.loc[worse.deal, ["lowest", "rule"]]))
        a_row, b_row = worse.a_hand.row, worse.b_hand.row
        seat = worse.a_hand.seat
        assert worse.b_hand.seat == seat and a_row["deal"] == b_row["deal"] == worse.deal
        assert a_row[f"agent_{seat}"] == "lowest" and b_row[f"agent_{seat}"] == "rule"
        assert a_row[f"dealt_{seat}"] == b_row[f"dealt_{seat}"]  # the same cards
        deal = an.to_long(records).query("deal == @worse.deal and agent == 'lowest'")
        assert a_row[f"score_{seat}"] == deal["score"].max()
        assert records.iloc[worse.a_hand.index].equals(a_row)
        # a notebook cell ending in one shows a line, not both record rows (78 lines)
        a_mean, b_mean = worse.means
        assert repr(worse) == (
            f"<DealComparison deal {worse.deal} ({worse.pass_direction}, rank {nth} of 25): "
            f"lowest {a_mean:.2f} vs rule {b_mean:.2f} points/hand>"
        )
        assert repr(worse.a_hand) == (
            f"<FoundHand row {worse.a_hand.index}, seat {seat}, seed {a_row['seed']}: "
            "replay(found.row) shows it>"
        )

    assert main(["replay", str(run), "--worst", "lowest", "--nth", "3"]) == 0
    out = capsys.readouterr().out
    worse = an.worst_deal(run, "lowest", "rule", nth=3)
    assert out.startswith(f"deal {worse.deal:,} (pass {worse.pass_direction}), number 3 of 25 by how much")
    assert str(an.replay(worse.a_hand.row)) in out and str(an.replay(worse.b_hand.row)) in out
    with pytest.raises(an.AnalysisError, match="no agent 'rul' in .* did you mean 'rule'"):
        an.worst_deal(run, "lowest", "rul")
    # a misspelt name is refused from the manifest, before a batch is read (it read the whole
    # run first: 19 s for 9.6 million hands)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            studies_analysis, "iter_records", lambda *args, **kwargs: pytest.fail("the run was read")
        )
        for look in (
            lambda: an.worst_deal(run, "rul", "lowest"),
            lambda: an.find_hand(run, moon=True, agent="rul"),
        ):
            with pytest.raises(
                an.AnalysisError, match="no agent 'rul' in .*: it has lowest, rule; did you mean 'rule'"
            ):
                look()
    # a match with --out ends with the command that shows it
    assert main(["match", "lowest", "rule", "--deals", "6", "--out", str(tmp_path / "m"), "--quiet"]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    command = f"hearts-sim replay {tmp_path / 'm'} --worst lowest"
    assert hint == f"the deal lowest played worst against the other: {command}"
    assert main(hint.split("hearts-sim ")[1].split()) == 0
    assert capsys.readouterr().out.startswith("deal ")
    with pytest.raises(an.AnalysisError, match="holds 25 deals that lowest and rule both played, not 26"):
        an.worst_deal(run, "lowest", nth=26)
    with pytest.raises(an.AnalysisError, match="compare two agents, not 'rule' with itself"):
        an.deal_differences(records, "rule", "rule")
    three = simulate("standard", ["lowest", "rule", "random", "rule"], hands=4, seed=1)
    with pytest.raises(
        an.AnalysisError,
        match=r"3 agents .*: name the one to compare with \(b; hearts-sim replay --against NAME\)",
    ):
        an.deal_differences(three.assign(deal=range(4)), "lowest", None)  # type: ignore[arg-type]


def test_scans_of_a_run_draw_a_bar_of_the_hands_read(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``worst_deal`` and ``find_hand`` read a run batch by batch (about 5 s a million hands
    for ``--worst``), silent until 2026-12-07: a bar of the hands read, out of all the run holds,
    where someone watches or ``progress=True``, as ``RecordSummary.from_records`` draws; none
    under ``replay --quiet``."""
    from hearts_sim.apps.cli import main

    run = tmp_path / "run"
    run_tournament(make_config(["lowest", "rule"], deals=25, seed=8), run, progress=False)
    hands = 25 * 14
    an.worst_deal(run, "lowest", batch_size=64, progress=True)
    bars = capsys.readouterr().err.replace("\r", "\n")
    assert "reading:" in bars and f"/{hands} [" in bars and "finding deal " in bars, bars
    found = an.find_hand(run, moon=True, batch_size=64, progress=True)
    bars = capsys.readouterr().err.replace("\r", "\n")
    assert "reading:" in bars and f"/{hands} [" in bars, bars
    assert an.find_hand(run, moon=True, batch_size=64).index == found.index  # nobody watches pytest
    an.worst_deal(run, "lowest", batch_size=64)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal
    assert main(["replay", str(run), "--moon"]) == 0
    assert "reading:" in capsys.readouterr().err
    assert main(["replay", str(run), "--worst", "lowest", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def _new_session() -> None:
    """As if in a new Python session: engines stopped, agents' files imported afresh."""
    close_all()
    for name in [name for name in sys.modules if name.startswith("hearts_sim_agent_")]:
        del sys.modules[name]


def test_records_without_the_when_columns_still_analyse() -> None:
    """Records written before the timeline columns existed give the long format without them."""
    frame = simulate("standard", ["rule", "random", "lowest", "highest"], hands=50, seed=3)
    old = frame.drop(columns=["trick_winners", "point_tricks", "qs_trick"])
    long = an.to_long(old)
    assert "moon_stopped_trick" not in long.columns
    assert long.equals(
        an.to_long(frame).drop(columns=["first_points_trick", "moon_stopped_trick", "qs_trick"])
    )
    an.replay(old.iloc[0])  # nothing to check them against: the rest still is


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda row: row.drop("seed"), "the row has no seed column"),
        (lambda row: row.drop(["rules"]), "no rules column: pass rules="),
        (lambda row: row.replace({"rule": "clever"}), "seat 0: unknown agent 'clever'"),
        (lambda row: row.drop(["pass_offset", "pass_direction"]), "no pass_offset or pass_direction"),
        # a row edited by hand: the kernels index by these, so an offset past the table crashed
        (lambda row: _with(row, pass_offset=2**53 + 1), "pass_offset is 9007199254740993, not"),
        (lambda row: _with(row, dealer=4), r"the row's dealer is 4, not a whole number in 0 \.\. 3"),
        (  # it went unread beside pass_offset
            lambda row: _with(row, pass_direction="up"),
            r"the row's pass_direction is 'up', and its pass_offset passes left \(was the row edited\?\)",
        ),
        (lambda row: _with(row, seed=-1), "the row's seed is -1, not a whole number"),
        (lambda row: _with(row, seed="x"), "the row's seed is 'x', not a whole number"),
        (lambda row: _with(row, points_1=float("inf")), "the row's points_1 is inf, not a whole number"),
        (lambda row: _with(row, dealt_0=-1), "dealt_0 is '.*', the record says -1"),
        (
            lambda row: _with(row, point_tricks=1),
            r"point_tricks is tricks [\d ]+, the record says tricks 0 \(",
        ),
        (
            lambda row: _with(row, trick_winners=int(row["trick_winners"]) ^ 1),
            r"trick_winners is seats [\d ]+, the record says seats",
        ),
    ],
)
def test_rows_that_cannot_be_replayed_say_why(change, message: str) -> None:  # type: ignore[no-untyped-def]
    df = simulate("standard", ["rule", "random", "lowest", "highest"], hands=1, seed=8)
    with pytest.raises(an.ReplayError, match=message):
        an.replay(change(df.iloc[0]))
    with pytest.raises(an.ReplayError, match="one record row, not a DataFrame of 2 rows"):
        an.replay(pd.concat([df, df]))


def test_rules_of_other_players_than_the_row_are_refused() -> None:
    df = simulate("standard", ["rule", "random", "lowest", "highest"], hands=1, seed=8)
    with pytest.raises(an.ReplayError, match="the row is of 4 players and the rules of 3: replay it"):
        an.replay(df.iloc[0], rules="qdan3")  # the same seed would deal 3 hands
    with pytest.raises(an.ReplayError, match="the row is of 4 players and the rules of 5: replay it"):
        an.replay(df.iloc[0], rules="qdan5")  # it said: the row has no agent_4, dealt_4, ... column


def test_a_game_record_is_refused() -> None:
    games = simulate_games("quick", "random", games=1, seed=1)
    with pytest.raises(an.ReplayError, match=r"a game record keeps no deal .*\(hands=True\)"):
        an.replay(games.iloc[0])


def test_every_hand_of_a_game_replays_and_its_players_see_the_totals_before_it() -> None:
    """``Trailing`` plays otherwise when it is last in the game: the replay of a hand of a game
    deals the game's totals before it to the seats, as the loop did, or the cards differ."""
    trailing = f"py:{Path(__file__).resolve().parent / 'python_agents.py'}:Trailing"
    games, hands = simulate_games(
        "quick", [trailing, "rule", "random", "mc(samples=4)"], 8, seed=3, hands=True
    )
    assert len(hands) == games["hands"].sum() > len(games)
    for i in range(len(hands)):
        replayed = an.replay(hands.iloc[i])
        assert replayed.scores == tuple(int(hands[f"score_{s}"].iloc[i]) for s in range(4))
        totals = tuple(int(hands[f"game_score_{s}"].iloc[i]) for s in range(4))
        assert replayed.game_totals == totals
        assert tuple(replayed.state_at(1).record["game_scores"][:4]) == totals  # the table as it stood
    without_totals = hands.drop(columns=[f"game_score_{s}" for s in range(4)])
    mismatched = 0
    for i in range(len(hands)):
        try:
            an.replay(without_totals.iloc[i])
        except an.ReplayError:
            mismatched += 1
    assert mismatched > 0  # Trailing was last in some hand, and played otherwise there


def test_a_replay_says_what_each_search_weighed_and_what_another_agent_would_play() -> None:
    """``Replay.card_values(trick, seat)``: the search's statistics in the position as it stood,
    with the hand's seed, so the card marked chosen is the card the seat played; ``agent=`` asks
    another agent in the same position (what ``agents.load`` answers there with that seed);
    ``Replay.pass_values(seat)`` the same for the pass."""
    import agents

    df = simulate("standard", ["ismcts(iterations=150)", "easy", "mc(samples=6)", "rule"], hands=2, seed=2)
    hand = an.replay(df.iloc[1])
    assert [hand.searches(seat) for seat in range(4)] == [True, False, True, False]
    for trick in (0, 4, 12):
        state = hand.state_at(trick)
        for seat, card in hand.tricks[trick].cards:
            if hand.searches(seat):
                table = hand.card_values(trick, seat)
                assert sorted(table["card"]) == sorted(card_str(c) for c in state.legal_moves())
                assert table.loc[table["chosen"], "card"].tolist() == [card_str(card)]
            else:
                with pytest.raises(an.ReplayError, match=f"seat {seat}: .* scores no cards"):
                    hand.card_values(trick, seat)
            state.play(card)
    state = hand.state_at(4)
    for seat, card in hand.tricks[4].cards:
        if seat == 1:
            break
        state.play(card)
    asked = agents.load("mc(samples=6)").card_values(state.observation(1), hand_seed=hand.seed)
    pd.testing.assert_frame_equal(hand.card_values(4, 1, agent="mc(samples=6)"), asked)
    with pytest.raises(an.ReplayError, match="seat 4 does not exist"):
        hand.card_values(0, 4)
    with pytest.raises(an.ReplayError, match="trick 13 does not exist"):
        hand.card_values(13, 0)
    with pytest.raises(an.ReplayError, match="agent is a spec or a level name"):
        hand.card_values(0, 0, agent=3)  # type: ignore[arg-type]

    # the pass: mc searches its candidates; ismcts without pass_rollouts passes as rule does, one row
    # of no playouts, and searches_passes said True of it (--why-pass listed it, weighed by nothing)
    assert [hand.searches_passes(seat) for seat in range(4)] == [False, False, True, False]
    for seat in (0, 2):
        table = hand.pass_values(seat)
        assert table.loc[table["chosen"], "cards"].tolist() == [cards_str(hand.passed[seat].mask)]
        assert len(table) == 1 if seat == 0 else (table["weight"] == 30).all() and len(table) > 1
    with pytest.raises(an.ReplayError, match="seat 1: easy passes by rule, which scores no passes"):
        hand.pass_values(1)
    asked = hand.pass_values(1, agent="mc(pass_samples=5)")
    assert asked["chosen"].sum() == 1 and set(asked["weight"]) <= {0, 5}  # 0: a single candidate
    with pytest.raises(an.ReplayError, match=r"this hand has no pass \(pass none\)"):
        an.replay(simulate("standard", "rule", hands=4, seed=2).iloc[3]).pass_values(0)


def test_the_replay_command_says_why_with_why_and_ask(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``replay ... --why T`` lists each search seat's card and what it weighed in trick T;
    ``--ask SPEC`` asks that agent in every seat's place and says what it would play."""
    from hearts_sim.apps.cli import main

    run = tmp_path / "run"
    assert (
        main(["tournament", "ismcts(iterations=100)", "easy", "--deals", "1", "--out", str(run), "--quiet"])
        == 0
    )
    capsys.readouterr()
    hand = an.replay(an.load_records(run).iloc[3])
    assert main(["replay", str(run), "--row", "3", "--why", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("trick 5: the points each search expected this hand after each card (playouts)")
    searchers = [(seat, card) for seat, card in hand.tricks[4].cards if hand.searches(seat)]
    assert searchers and len(out) == start + 1 + len(searchers)
    for line, (seat, card) in zip(out[start + 1 :], searchers, strict=True):
        table = hand.card_values(4, seat)
        # cards as the hand above shows them (``♠Q``), where the tables name them as parse reads (QS)
        played = card_str(card, symbols=True)
        assert line.startswith(f"  seat {seat} ismcts(iterations=100) played {played}: ")
        last = CardSet.parse(table["card"].iloc[-1])
        assert line.endswith(f"{last} {table['points'].iloc[-1]:.2f} ({table['weight'].iloc[-1]:,})")
    assert main(["replay", str(run), "--row", "3", "--why", "5", "--ask", "mc(samples=4)"]) == 0
    out = capsys.readouterr().out.splitlines()
    asked = out[
        out.index("trick 5: the points each search expected this hand after each card (playouts)") + 1 :
    ]
    assert len(asked) == 4
    for line, (seat, _) in zip(asked, hand.tricks[4].cards, strict=True):
        chosen = CardSet.parse(hand.card_values(4, seat, "mc(samples=4)").query("chosen")["card"].iloc[0])
        assert line.startswith(f"  seat {seat} ") and f"; mc(samples=4) would play {chosen}: " in line

    # the pass: ismcts without pass_rollouts passes as rule does, with no search, and easy too
    assert main(["replay", str(run), "--row", "3", "--why-pass"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "the pass: no seat passed by a search agent; ask one with --ask hard"
    assert main(["replay", str(run), "--row", "3", "--why-pass", "--ask", "ismcts"]) == 2
    said = "--ask ismcts: it passes without a search; ask a search agent (hard, mc, ...)"
    assert capsys.readouterr().err.strip() == f"hearts-sim: error: {said}"
    assert main(["replay", str(run), "--row", "3", "--why-pass", "--ask", "mc(pass_samples=5)"]) == 0
    out = capsys.readouterr().out.splitlines()
    asked = out[
        out.index("the pass: the points each search expected this hand after its best passes (playouts)")
        + 1 :
    ]
    assert len(asked) == 4
    for seat, line in enumerate(asked):
        table = hand.pass_values(seat, "mc(pass_samples=5)")
        chosen = CardSet.parse(table.loc[table["chosen"], "cards"].iloc[0])
        assert line.startswith(f"  seat {seat} {hand.agents[seat]} passed {hand.passed[seat]}; ")
        assert f"; mc(pass_samples=5) would pass {chosen}: " in line
