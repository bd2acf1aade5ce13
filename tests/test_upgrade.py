"""Runs written by older versions, taken up by this code: a resume, a repair and a combine of a run
whose manifest keeps no record of how its agents played (``plays``, before 2026-12-06;
``played_as``, before 2026-12-07) check its records against this code's play before they add to
them, pool them or rewrite them. An "old" run is one written here with those keys removed from its
manifest; a level of its own (``mine``, in a folder ``HEARTS_SIM_LEVELS`` names) edited between
the run and its resume stands for an agent that plays otherwise since."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from hearts_sim import __version__
from hearts_sim.studies import tournament
from hearts_sim.studies.tournament import TournamentConfig, TournamentError, run_tournament

try:
    from tests.records_damage import edit_manifest, manifest, part
except ImportError:  # tests/ on sys.path instead of the repository root
    from records_damage import edit_manifest, manifest, part  # type: ignore[no-redef]

# mine against random on seed 2 in chunks of 8 deals: ``rule(careless=0.01)`` plays deal 0 as
# ``rule`` does, and deals 5, 7 and more of the first chunk otherwise; ``rule(defend=10)`` plays
# every deal otherwise
DEALS, CHUNK_DEALS, SEED = 24, 8, 2  # 3 chunks
RULE, ALIKE_AT_FIRST, OTHER = "rule", "rule(careless=0.01)", "rule(defend=10)"


@pytest.fixture
def levels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "levels"
    folder.mkdir()
    monkeypatch.setenv("HEARTS_SIM_LEVELS", str(folder))
    _level(folder, RULE)
    return folder


def config(seed: int = SEED) -> TournamentConfig:
    """The run's configuration (its level ``mine`` found once the ``levels`` fixture serves it)."""
    return TournamentConfig(("mine", "random"), deals=DEALS, seed=seed, chunk_deals=CHUNK_DEALS)


def _level(folder: Path, agent: str) -> None:
    """Level ``mine`` plays ``agent`` from now on (its file written again)."""
    (folder / "mine.toml").write_text(f'description = "x"\nagent = "{agent}"\nmax_ms_per_decision = 1\n')


def _as_old(run: Path) -> None:
    """The manifest as a version before 2026-12-06 wrote it: version 0.1.0, no ``plays``, no
    ``played_as``."""
    kept = {key: value for key, value in manifest(run).items() if key not in ("plays", "played_as")}
    kept["version"] = "0.1.0"
    (run / "manifest.json").write_text(json.dumps(kept))


def contents(run: Path) -> dict[str, bytes]:
    return {str(path.relative_to(run)): path.read_bytes() for path in run.rglob("*") if path.is_file()}


def records(run: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(part(run, c)) for c in range(DEALS // CHUNK_DEALS)], ignore_index=True)


def _finished(run: Path, old: bool, seed: int = SEED) -> Path:
    run_tournament(config(seed), run, threads=1, progress=False)
    if old:
        _as_old(run)
    return run


def _stopped(run: Path, chunks: int = 1, **options: Any) -> None:
    """The run of ``config()`` in ``run``, stopped after ``chunks`` more chunks."""
    with pytest.raises(tournament.Interrupted):
        run_tournament(config(), run, threads=1, progress=False, stop_after_chunks=chunks, **options)


def run_hands_of(agent: str, deals: int) -> Any:
    """The records of ``agent`` against random on the first ``deals`` deals of ``SEED``."""
    from hearts_sim.selfplay.simulate import run_hands

    table = TournamentConfig((agent, "random"), deals=deals, seed=SEED).table()
    return run_hands(table, SEED, 0, deals)


@pytest.mark.parametrize("old", [False, True])
@pytest.mark.parametrize("damaged", [0, 2])
def test_a_repair_by_other_code_is_refused_before_it_rewrites_anything(
    tmp_path: Path, levels: Path, old: bool, damaged: int
) -> None:
    """A repair re-played the damaged chunks by whatever code resumed the run and kept the
    manifest's tally of the old play: a finished run of a level re-tuned since took the new
    level's play in its repaired part, and its summary and records disagreed (until 2026-12-07;
    a plain resume was checked). The check comes first, against the first part that is whole."""
    run = _finished(tmp_path / "run", old)
    path = part(run, damaged)
    path.write_bytes(path.read_bytes()[:1000])
    before = contents(run)
    _level(levels, OTHER)
    with pytest.raises(TournamentError) as refused:
        tournament.resume_tournament(run, repair=True, threads=1, progress=False)
    said = str(refused.value)
    if old:
        first = 8 if damaged == 0 else 0  # the first deal of the first whole part
        begins = f"{re.escape(str(run))} was played by other code than this: deal {first} in seating "
        assert re.match(begins, said)
        assert said.endswith(
            "; finish it with version 0.1.0, which started it, or play it again in a new folder"
        )
    else:
        assert said == (
            f"{run} was played with mine as {RULE}, and it is {OTHER} now (its level file edited since?): "
            "finish it with the level as it was, or play it again in a new folder"
        )
    assert contents(run) == before  # refused: nothing rewritten

    _level(levels, RULE)  # the level as it was: the repair goes on, to the uninterrupted run
    repaired = tournament.resume_tournament(run, repair=True, threads=1, progress=False)
    good = _finished(tmp_path / "good", old=False)
    assert repaired.summary == manifest(good)["summary"]
    pd.testing.assert_frame_equal(records(run), records(good))


def test_an_old_run_is_checked_on_its_whole_first_chunk(tmp_path: Path, levels: Path) -> None:
    """A resume of a run that does not say what it played played its deal 0 again alone, which
    another level can play alike (a re-tuned ``normal`` does in one deal of nine): the run went on
    and mixed the two programs (until 2026-12-07). Its whole first chunk is played again."""
    run = tmp_path / "run"
    _stopped(run)
    _as_old(run)
    before = contents(run)
    _level(levels, ALIKE_AT_FIRST)
    assert (run_hands_of(ALIKE_AT_FIRST, 1) == run_hands_of(RULE, 1)).all()  # deal 0 plays alike
    with pytest.raises(TournamentError) as refused:
        run_tournament(config(), run, resume=True, threads=1, progress=False)
    begins = f"{re.escape(str(run))} was played by other code than this: deal 5 in seating \\d+ plays "
    assert re.match(begins, str(refused.value)), refused.value
    assert contents(run) == before  # refused: nothing touched

    _level(levels, RULE)  # the code that played it: it goes on, and says what it checked
    said: list[str] = []
    result = run_tournament(config(), run, resume=True, threads=1, progress=False, report=said.append)
    assert said == [f"hearts-sim: {run} was started by version 0.1.0, and {__version__} plays it as recorded"]
    assert result.summary == run_tournament(config(), threads=1, progress=False).summary


def test_an_old_run_once_checked_keeps_what_this_code_plays(tmp_path: Path, levels: Path) -> None:
    """A resume that found an old run played as this code plays it left its manifest without
    ``plays`` and ``played_as``, so every later resume was checked on deal 0 alone, and a level
    edited after the first resume went on unseen (until 2026-12-07). The manifest now keeps this
    code's, and a later resume compares them first."""
    run = tmp_path / "run"
    _stopped(run)
    _as_old(run)
    _stopped(run, resume=True)
    kept = manifest(run)
    assert kept["plays"] == config().table().plays_digest()
    assert kept["played_as"] == [RULE, "random"]
    _level(levels, ALIKE_AT_FIRST)
    with pytest.raises(TournamentError) as refused:
        run_tournament(config(), run, resume=True, threads=1, progress=False)
    assert str(refused.value) == (
        f"{run} was played with mine as {RULE}, and it is {ALIKE_AT_FIRST} now (its level file edited "
        "since?): finish it with the level as it was, or play it again in a new folder"
    )


@pytest.mark.parametrize("old", [False, True])
def test_a_run_of_games_is_checked_on_the_games_of_its_first_whole_part(
    tmp_path: Path, levels: Path, old: bool
) -> None:
    """A repair of a run of games whose first part is damaged plays the games of its next part
    again in every seating, not game 0."""
    games = TournamentConfig(("mine", "random"), deals=6, seed=SEED, chunk_deals=2, games=True)
    run = tmp_path / "games"
    run_tournament(games, run, threads=1, progress=False)
    if old:
        _as_old(run)
    else:  # other sources, the same level
        edit_manifest(run, plays="0123456789abcdef")
    path = part(run, 0)
    path.write_bytes(path.read_bytes()[:1000])
    if old:
        _level(levels, OTHER)
        with pytest.raises(TournamentError, match=r"other code than this: game [23] in seating \d+ plays "):
            tournament.resume_tournament(run, repair=True, threads=1, progress=False)
        _level(levels, RULE)
    said: list[str] = []
    tournament.resume_tournament(run, repair=True, threads=1, progress=False, report=said.append)
    assert (
        f"hearts-sim: {run} was started by version 0.1.0, and {__version__} plays it as recorded" in said
        if old
        else f"hearts-sim: {run} was started by other sources than these, which play games 2 to 3 as recorded"
        in said
    )
    good = tmp_path / "good"
    run_tournament(games, good, threads=1, progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(part(run, 0)), pd.read_parquet(part(good, 0)))


def test_combine_compares_every_digest_with_every_other(tmp_path: Path, levels: Path) -> None:
    """Each run's digest was compared with the first run's alone, and not at all where either had
    none (until 2026-12-07): ``combine OLD D E`` pooled D and E played by different code."""
    old, d, e = (_finished(tmp_path / f"s{seed}", old=False, seed=seed) for seed in (1, 3, 4))
    _as_old(old)
    edit_manifest(e, plays="0123456789abcdef")  # other code's digest
    for order in ([old, d, e], [d, old, e]):
        with pytest.raises(TournamentError) as refused:
            tournament.combine_runs(order)
        assert str(refused.value) == (
            f"{e} and {d} were played by different code (an agent, level or py: file edited between "
            "them: their manifests' plays digests differ): they do not combine"
        )
    assert tournament.combine_runs([old, d])["deals"] == 2 * DEALS  # this code plays them alike


def test_an_old_run_is_combined_only_where_this_code_plays_it_as_recorded(
    tmp_path: Path, levels: Path
) -> None:
    """A run that does not say how its agents played was pooled with any run of the same version
    (until 2026-12-07), a level edited between them or not: its first chunk is played again."""
    old = _finished(tmp_path / "old", old=True)  # seed 2: deal 0 alike, deal 5 not
    _level(levels, ALIKE_AT_FIRST)
    new = _finished(tmp_path / "new", old=False, seed=1)
    for order in ([old, new], [new, old]):
        with pytest.raises(TournamentError) as refused:
            tournament.combine_runs(order)
        said = str(refused.value)
        begins = (
            f"{old} was written before 2026-12-06 without a record of how its agents played, and this "
            "code plays it otherwise: deal 5 in seating "
        )
        assert said.startswith(begins), said
        assert said.endswith(
            "; they do not combine: combine it with runs of version 0.1.0, which wrote it, or play it again "
            "with this code"
        )
    _level(levels, RULE)  # the old run plays as recorded, the new one not
    with pytest.raises(TournamentError) as refused:
        tournament.combine_runs([old, new])
    assert str(refused.value).startswith(
        f"{new} was played by the code that wrote it (an agent or a level edited since?), and this code "
        "plays it otherwise: deal 1 in seating "
    )
    alike = _finished(tmp_path / "alike", old=False, seed=3)
    assert tournament.combine_runs([old, alike])["deals"] == 2 * DEALS


def test_a_finished_run_of_another_version_combines_where_this_code_plays_it_as_recorded(
    tmp_path: Path, levels: Path
) -> None:
    """A run's digest holds the version that played it, so a finished run of the version before
    (0.2.0, its digest kept) was refused beside this version's as "played by different code"
    whatever it played, where its resume would go on: its first chunk is played again, as a run
    without a digest is, and it pools where it plays as recorded."""
    before = _finished(tmp_path / "before", old=False, seed=1)
    edit_manifest(before, version="0.2.0", plays="0123456789abcdef")  # the version before's digest
    now = _finished(tmp_path / "now", old=False, seed=3)
    assert tournament.combine_runs([before, now])["deals"] == 2 * DEALS
    assert tournament.combine_runs([now, before])["deals"] == 2 * DEALS
    _level(levels, OTHER)  # a run of the version before, whose level has been edited since
    edited = _finished(tmp_path / "edited", old=False, seed=4)
    edit_manifest(edited, version="0.2.0", plays="0123456789abcdef")
    _level(levels, RULE)
    with pytest.raises(TournamentError) as refused:
        tournament.combine_runs([now, edited])
    said = str(refused.value)
    assert said.startswith(
        f"{edited} was played by version 0.2.0, which wrote it, and this code plays it otherwise: deal "
    ), said
    assert said.endswith(
        "; they do not combine: combine it with runs of version 0.2.0, which wrote it, or play it again "
        "with this code"
    )


def test_an_old_run_of_agents_that_do_not_replay_is_combined_by_its_own_version_alone(
    tmp_path: Path,
) -> None:
    """A search on the clock cannot be played again to check it: runs without a digest are pooled
    by the version that wrote them, as their resume goes on, and refused by another."""
    timed = TournamentConfig(("mc(ms=0.5)", "random"), deals=2, seed=3, chunk_deals=2)
    runs = [tmp_path / "a", tmp_path / "b"]
    for seed, run in enumerate(runs):
        run_tournament(tournament.replace(timed, seed=seed), run, threads=1, progress=False)
        _as_old(run)
        edit_manifest(run, version=__version__)  # written by this version before it kept a digest
    assert tournament.combine_runs(runs)["deals"] == 4
    for run in runs:
        edit_manifest(run, version="0.0.1")
    with pytest.raises(TournamentError) as refused:
        tournament.combine_runs(runs)
    assert str(refused.value) == (
        f"{runs[0]} was written before 2026-12-06 without a record of how its agents played, and they "
        "cannot be played again to check it (mc(ms=0.5): a search on the clock): combine it with runs of "
        "version 0.0.1, which wrote it"
    )


def test_a_difference_in_cards_is_shown_as_cards(tmp_path: Path, levels: Path) -> None:
    """A pass that differs was shown as two bitboards (``passed_2 2251799847243776,
    2251851353292800 in its records``, until 2026-12-07): it names the cards."""
    from hearts_sim.core.cards import CardSet

    _level(levels, "lowest")  # passes its three highest cards
    run = tmp_path / "run"
    _stopped(run)
    _as_old(run)
    _level(levels, "pass=rule,play=lowest")  # passes others, and 2C stays where it was
    now = _finished(tmp_path / "now", old=False)
    passed = [
        " ".join(CardSet.of_mask(int(pd.read_parquet(part(played, 0))["passed_0"][0])).to_list())
        for played in (now, run)
    ]
    assert passed[0] != passed[1] and all(len(cards.split()) == 3 for cards in passed)
    with pytest.raises(TournamentError) as refused:
        run_tournament(config(), run, resume=True, threads=1, progress=False)
    difference = (
        f"deal 0 in seating 0 plays differently now (passed_0 {passed[0]}, {passed[1]} in its records)"
    )
    assert f"{run} was played by other code than this: {difference}; " in str(refused.value)


def test_an_old_run_checked_by_a_resume_combines_with_this_versions_runs(
    tmp_path: Path, levels: Path
) -> None:
    """A run of 0.1.0 that a resume found played as this code plays it takes this code's digest,
    and then pools with this version's runs: its version alone refused it until 2026-12-07."""
    old = tmp_path / "old"
    with pytest.raises(tournament.Interrupted):
        run_tournament(config(), old, threads=1, progress=False, stop_after_chunks=1)
    _as_old(old)
    run_tournament(config(), old, threads=1, progress=False, resume=True)
    assert manifest(old)["version"] == "0.1.0" and "plays" in manifest(old)
    new = _finished(tmp_path / "new", old=False, seed=5)
    assert tournament.combine_runs([old, new])["deals"] == 2 * DEALS


def test_a_run_of_other_sources_once_checked_keeps_this_codes_digest(tmp_path: Path, levels: Path) -> None:
    """A run whose digest was other code's was played again at every resume (a whole chunk of
    ``hard``: 40 s); once checked, its manifest takes this code's digest."""
    run = tmp_path / "run"
    with pytest.raises(tournament.Interrupted):
        run_tournament(config(), run, threads=1, progress=False, stop_after_chunks=1)
    mine = manifest(run)["plays"]
    edit_manifest(run, plays="0123456789abcdef")
    with pytest.raises(tournament.Interrupted):
        run_tournament(config(), run, threads=1, progress=False, resume=True, stop_after_chunks=1)
    assert manifest(run)["plays"] == mine


def test_a_python_resume_goes_on_with_the_chunks_the_run_began_with(tmp_path: Path, levels: Path) -> None:
    """The automatic size of a chunk for an engine changed (2026-12-07): a Python resume with the
    config as written (its size now another) was refused as "a different tournament"; the run's
    own chunks go on, to the same records."""
    run = tmp_path / "run"
    with pytest.raises(tournament.Interrupted):
        run_tournament(config(), run, threads=1, progress=False, stop_after_chunks=1)
    automatic = tournament.replace(config(), chunk_deals=0)
    assert automatic.chunk_deals != CHUNK_DEALS
    resumed = run_tournament(automatic, run, threads=1, progress=False, resume=True)
    assert resumed.config.chunk_deals == CHUNK_DEALS and manifest(run)["chunks_done"] == DEALS // CHUNK_DEALS
    pd.testing.assert_frame_equal(records(run), records(_finished(tmp_path / "whole", old=False)))
    with pytest.raises(TournamentError, match="holds a different tournament"):  # anything else is refused
        run_tournament(tournament.replace(automatic, seed=9), run, threads=1, progress=False, resume=True)
