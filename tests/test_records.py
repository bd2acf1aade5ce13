"""Verified records: the manifest lists every part's rows, size and checksum; resume and report
refuse a run whose records do not match it, naming the part; ``--repair`` re-plays the damaged
chunks from their seeds to records identical to an uninterrupted run; a full disk loses nothing."""

from __future__ import annotations

import errno
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from hearts_sim import __version__
from hearts_sim.apps.cli import main
from hearts_sim.core.rules import Rules
from hearts_sim.selfplay.records import HANDS_DIR, parts_problem
from hearts_sim.studies import tournament
from hearts_sim.studies.analysis import UnfinishedRunWarning, load_records

try:
    from tests.records_damage import (
        CONFIG,
        DAMAGE,
        damaged_runs,
        edit_manifest,
        manifest,
        part,
        played_by_other_code,
    )
except ImportError:  # tests/ on sys.path instead of the repository root
    from records_damage import (  # type: ignore[no-redef]
        CONFIG,
        DAMAGE,
        damaged_runs,
        edit_manifest,
        manifest,
        part,
        played_by_other_code,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return damaged_runs(tmp_path_factory.mktemp("runs"))


def records(run: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(part(run, c)) for c in range(CONFIG.n_chunks)], ignore_index=True)


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("hearts-sim: error: ")
    return err[0]


def test_the_manifest_lists_every_part_with_its_rows_size_and_checksum(runs: dict[str, Path]) -> None:
    good = manifest(runs["good"])
    assert good["chunks_done"] == CONFIG.n_chunks == len(good["parts"])
    for chunk, entry in enumerate(good["parts"]):
        path = part(runs["good"], chunk)
        assert entry["bytes"] == path.stat().st_size
        assert entry["rows"] == pq.ParquetFile(path).metadata.num_rows == 10 * 14


def test_the_manifest_reads_back_as_written_with_one_part_a_line(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """The manifest is rewritten after every chunk: its parts are written one compact entry a
    line (json's indenting encoder cost 78 ms a chunk at 20,000 parts) and its tally on one line
    (16 ms a chunk at 64 agents, whose pairs it sums), the rest indented."""
    good = manifest(runs["good"])
    text = (runs["good"] / "manifest.json").read_text()
    lines = text.splitlines()
    for entry in good["parts"]:
        assert (
            f"    {json.dumps(entry, sort_keys=True)}," in lines
            or f"    {json.dumps(entry, sort_keys=True)}" in lines
        )
    assert '  "chunks_done": 4,' in lines
    assert f'  "tally": {json.dumps(good["tally"], sort_keys=True, separators=(",", ":"))},' in lines
    for variant in (
        {**good, "parts": []},
        {**good, "hand_parts": good["parts"][:1]},
        {**good, "command": "\0parts"},
        {**good, "command": "\0tally"},
        {key: value for key, value in good.items() if key != "tally"},
    ):
        assert json.loads(tournament._manifest_text(variant)) == variant


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("truncated", "part-000001.parquet is"),
        ("deleted", "part-000001.parquet is missing"),
        ("garbage", "part-000000.parquet does not hold the recorded contents"),
        ("edited", "chunks_done is 1 but 2 parts are listed"),
        ("tally_edited", "its tally counts 20 deals, not the 10 of its 1 chunks"),
    ],
)
def test_a_damaged_run_is_refused_then_repaired_to_the_uninterrupted_records(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, message: str
) -> None:
    run = tmp_path / damage
    shutil.copytree(runs[damage], run)
    before = (run / "manifest.json").read_text()
    assert main(["tournament", "--resume", str(run), "--quiet"]) == 2
    line = one_error_line(capsys)
    assert message in line and f"--resume {run} --repair" in line
    assert (run / "manifest.json").read_text() == before  # refused: nothing touched
    if damage != "tally_edited":  # report reads the parts the manifest lists, verified the same way
        assert main(["report", str(run)]) == 2  # (the tally is the resume's alone)
        assert message in one_error_line(capsys)
    assert main(["tournament", "--resume", str(run), "--repair", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    good = manifest(runs["good"])
    assert summary == good["summary"]
    assert manifest(run)["parts"] == good["parts"]  # byte-identical parts
    pd.testing.assert_frame_equal(records(run), records(runs["good"]))


def test_repair_refuses_to_play_over_records_whose_manifest_is_another_runs(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A manifest copied from another run (the same agents on another seed: a backup restored into
    the wrong folder) failed every part's checksum, and ``--repair`` played that run over all of
    this one's good records; two parts swapped, likewise. Both are refused in one line, before a
    part is touched, where a part that is damaged (some of its rows wrong, or unreadable) is
    still re-played (``test_a_damaged_run_is_refused_then_repaired_...``)."""
    run, other = tmp_path / "run", tmp_path / "other"
    shutil.copytree(runs["good"], run)
    tournament.run_tournament(
        tournament.TournamentConfig(CONFIG.agents, deals=20, seed=CONFIG.seed + 1, chunk_deals=10),
        other,
        progress=False,
    )
    (run / "manifest.json").write_bytes((other / "manifest.json").read_bytes())
    held = {chunk: part(run, chunk).read_bytes() for chunk in range(CONFIG.n_chunks)}
    assert main(["tournament", "--resume", str(run), "--repair", "--quiet"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(
        f"hearts-sim: error: {part(run, 0)} holds whole records of another run or chunk (deal 0 of seed "
    )
    assert f"where --seed {CONFIG.seed + 1} deals " in line
    assert f"{run / 'manifest.json'} is not the manifest of these records (copied from another run?)" in line
    assert {chunk: part(run, chunk).read_bytes() for chunk in held} == held

    (run / "manifest.json").write_bytes((runs["good"] / "manifest.json").read_bytes())
    part(run, 0).write_bytes(held[1])
    part(run, 1).write_bytes(held[0])
    assert main(["tournament", "--resume", str(run), "--repair", "--quiet"]) == 2
    assert (
        f"{part(run, 0)} holds whole records of another run or chunk (deal 10, which chunk 0 does not deal)"
        in (one_error_line(capsys))
    )
    part(run, 0).write_bytes(held[0])
    part(run, 1).write_bytes(held[1])
    assert main(["tournament", "--resume", str(run), "--repair", "--quiet"]) == 0  # whole again


@pytest.mark.parametrize("damage", ["empty_manifest", "list_manifest", "garbage_manifest"])
def test_a_manifest_without_a_configuration_cannot_be_resumed_or_repaired(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    for extra in ([], ["--repair"]):
        assert main(["tournament", "--resume", str(runs[damage]), *extra]) == 2
        line = one_error_line(capsys)
        assert "manifest" in line or "cannot read" in line
        if damage == "garbage_manifest":  # what then: it said only what json could not parse
            then = "a manifest that is no JSON cannot be repaired: start a new run (its records are whole)"
            assert line.endswith(f"; {then}")


def test_report_ignores_a_part_the_manifest_does_not_count_and_resume_overwrites_it(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """A kill -9 between a part's write and the manifest's leaves an uncounted part: it is not
    read, and resuming plays its chunk again."""
    run = tmp_path / "run"
    shutil.copytree(runs["interrupted"], run)
    shutil.copy(part(runs["good"], 3), part(run, 2))  # a stray part where chunk 2 will go
    with pytest.warns(UnfinishedRunWarning, match="counts 2 of 4 chunks"):  # the counted parts only
        assert len(load_records(run)) == 2 * 10 * 14
    tournament.resume_tournament(run, progress=False)
    pd.testing.assert_frame_equal(records(run), records(runs["good"]))


@pytest.mark.parametrize("failing", ["part", "manifest"])
def test_a_full_disk_is_one_line_with_the_resume_command_and_resuming_gives_the_same_results(
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    failing: str,
) -> None:
    out = tmp_path / "run"
    arguments = ["tournament", "lowest", "random", "--deals", "20000", "--seed", "3", "--quiet"]
    written: list[str] = []
    write = tournament.write_atomically

    def fill_up(path: Path, data: bytes) -> None:
        kind = "part" if path.name.startswith("part-") else "manifest"
        written.append(kind)
        if kind == failing and written.count("part") == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        write(path, data)

    monkeypatch.setattr(tournament, "write_atomically", fill_up)
    assert main([*arguments, "--out", str(out)]) == 1
    line = one_error_line(capsys)
    assert "No space left on device" in line
    assert "2 of 5 chunks are saved" in line and f"resume with: hearts-sim tournament --resume {out}" in line
    assert manifest(out)["chunks_done"] == 2
    monkeypatch.setattr(tournament, "write_atomically", write)
    assert main(["tournament", "--resume", str(out), "--json"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert main([*arguments, "--out", str(tmp_path / "whole"), "--json"]) == 0
    assert resumed == json.loads(capsys.readouterr().out)
    assert manifest(out)["parts"] == manifest(tmp_path / "whole")["parts"]


def test_every_damage_is_exercised() -> None:
    assert set(DAMAGE) >= {"truncated", "deleted", "garbage", "edited", "empty_manifest"}


GAMES = tournament.TournamentConfig(
    ("rule", "random"), rules=Rules.preset("quick"), deals=8, seed=5, chunk_deals=2, games=True
)


def _frames(run: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run of games' records and the hands of its games, read part by part."""
    return tuple(  # type: ignore[return-value]
        pd.concat([pd.read_parquet(p) for p in sorted((run / d).glob("part-*.parquet"))], ignore_index=True)
        for d in ("records", "hands")
    )


def test_a_run_of_games_keeps_every_hand_verified_resumed_and_repaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--games --out`` writes ``hands/`` beside ``records/``, each part listed with its
    checksum (``hand_parts``); an interrupted run resumes to the same hands, a damaged hand part
    is refused by name and repaired, and a manifest from before hands were kept is re-played."""
    whole = tournament.run_tournament(GAMES, tmp_path / "whole", progress=False)
    games, hands = _frames(tmp_path / "whole")
    assert len(hands) == games["hands"].sum() and set(hands["game"]) == set(games["game"])
    entries = manifest(tmp_path / "whole")["hand_parts"]
    assert [e["rows"] for e in entries] == [
        pq.ParquetFile(p).metadata.num_rows for p in sorted((tmp_path / "whole" / "hands").iterdir())
    ]
    run = tmp_path / "parts"
    with pytest.raises(tournament.Interrupted):
        tournament.run_tournament(GAMES, run, progress=False, stop_after_chunks=2)
    assert tournament.resume_tournament(run, progress=False).summary == whole.summary
    for ours, theirs in zip(_frames(run), (games, hands), strict=True):
        pd.testing.assert_frame_equal(ours, theirs)

    damaged = run / "hands" / "part-000002.parquet"
    damaged.write_bytes(damaged.read_bytes()[:100])
    assert main(["report", str(run)]) == 2
    assert "hands/part-000002.parquet is 100 bytes" in one_error_line(capsys)
    assert main(["tournament", "--resume", str(run), "--quiet"]) == 2
    assert "hands/part-000002.parquet is 100 bytes" in one_error_line(capsys)
    assert main(["tournament", "--resume", str(run), "--repair", "--quiet"]) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(_frames(run)[1], hands)

    older = json.loads((run / "manifest.json").read_text())
    del older["hand_parts"]  # a run of games made before their hands were kept
    (run / "manifest.json").write_text(json.dumps(older))
    assert main(["tournament", "--resume", str(run), "--quiet"]) == 2
    assert "lists no checksums of the games' hands" in one_error_line(capsys)
    assert main(["tournament", "--resume", str(run), "--repair", "--quiet"]) == 0
    capsys.readouterr()
    assert manifest(run)["hand_parts"] == entries


OTHER_PLAYS = "0123456789abcdef"  # the ``Table.plays_digest`` of other code


@pytest.mark.parametrize("games", [False, True])
def test_a_run_resumes_only_with_code_that_plays_it_as_it_was_played(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], games: bool
) -> None:
    """A run resumed after an upgrade or an edit of its agents added that code's hands to the
    old ones, one result of two programs: the resume plays the run's first deal (first game)
    again and refuses records this code would not have made, touching nothing."""
    run = tmp_path / "other"
    if games:
        with pytest.raises(tournament.Interrupted):
            tournament.run_tournament(GAMES, run, progress=False, stop_after_chunks=2)
    else:
        shutil.copytree(runs["interrupted"], run)
    difference = played_by_other_code(run)
    before = (run / "manifest.json").read_text()
    assert main(["tournament", "--resume", str(run), "--quiet"]) == 2
    assert one_error_line(capsys) == (
        f"hearts-sim: error: {run} was played by other code than this: {difference}; finish it with "
        "the code that started it (an agent or a level edited since?), or play it again in a new folder"
    )
    edit_manifest(run, version="0.0.1")
    assert main(["tournament", "--resume", str(run), "--quiet"]) == 2
    assert "finish it with version 0.0.1, which started it, or play it again" in one_error_line(capsys)
    edit_manifest(run, version=__version__)
    assert (run / "manifest.json").read_text() == before  # refused: nothing touched
    assert sorted((run / "records").iterdir()) == [part(run, chunk) for chunk in range(2)]


def test_the_same_code_resumes_at_once_and_other_code_that_plays_alike_resumes_and_says_so(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """A resume by the code that started the run does not play its first chunk again (the
    manifest's ``plays`` digest says it is that code); another version that plays the run as it
    was played (a fix elsewhere) goes on with it after the check, and says so."""
    config = tournament.TournamentConfig(("mc(samples=2)", "random"), deals=4, seed=3, chunk_deals=2)
    same = tmp_path / "same"
    with pytest.raises(tournament.Interrupted):
        tournament.run_tournament(config, same, progress=False, stop_after_chunks=1)
    other = tmp_path / "other"
    shutil.copytree(same, other)
    said: list[str] = []
    tournament.resume_tournament(same, progress=False, report=said.append)
    assert not [line for line in said if "again" in line]
    edit_manifest(other, plays=OTHER_PLAYS)
    said.clear()
    tournament.resume_tournament(other, progress=False, report=said.append)
    assert (
        f"hearts-sim: playing deals 0 to 1 of {other} again, to check that this code plays them as recorded"
        in said
    )

    upgraded = tmp_path / "upgraded"
    shutil.copytree(runs["interrupted"], upgraded)
    edit_manifest(upgraded, version="0.0.1", plays=OTHER_PLAYS)
    said.clear()
    result = tournament.resume_tournament(upgraded, progress=False, report=said.append)
    assert said == [
        f"hearts-sim: {upgraded} was started by version 0.0.1, and {__version__} plays it as recorded"
    ]
    assert result.summary == manifest(runs["good"])["summary"]
    pd.testing.assert_frame_equal(records(upgraded), records(runs["good"]))


def test_a_run_whose_agents_do_not_replay_resumes_only_with_its_own_code(tmp_path: Path) -> None:
    """A search on the clock decides by the machine's speed, so its first deal cannot be played
    again to compare: its run resumes with the code that started it, and no other."""
    config = tournament.TournamentConfig(("mc(ms=0.5)", "random"), deals=4, seed=3, chunk_deals=2)
    run = tmp_path / "timed"
    with pytest.raises(tournament.Interrupted):
        tournament.run_tournament(config, run, progress=False, stop_after_chunks=1)
    plays = manifest(run)["plays"]
    for changes, versions in [
        ({"version": "0.0.1", "plays": OTHER_PLAYS}, f"version 0.0.1, and this is {__version__}"),
        ({"plays": OTHER_PLAYS}, "the same version, with other sources, level files or py: agent files"),
    ]:
        edit_manifest(run, **changes)
        with pytest.raises(tournament.TournamentError) as refused:
            tournament.resume_tournament(run, progress=False)
        assert str(refused.value) == (
            f"{run} was played by other code than this ({versions}); its agents cannot be replayed to "
            "check that they play as they did (mc(ms=0.5): a search on the clock): finish it "
            "with the code that started it, or play it again in a new folder"
        )
        edit_manifest(run, version=__version__, plays=plays)
    assert manifest(run)["chunks_done"] == 1
    edit_manifest(run, plays=None)  # a run from before the digest: its version alone decides
    assert tournament.resume_tournament(run, progress=False).summary["deals"] == 4


def test_runs_of_different_versions_combine_where_they_play_alike(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """Another version's run, whose digest (which holds the version) is never this code's, is
    played again, as one that keeps none is, and pools where it plays alike (refused by its digest
    alone until 2026-12-07, as a finished 0.2.0 run was beside 0.3.0's); a run of 0.1.0 that this
    code checked (and whose manifest took this code's digest, as a resume does) was refused beside
    this version's by its version alone until 2026-12-07."""
    other = tmp_path / "seed4"
    tournament.run_tournament(tournament.replace(CONFIG, seed=4), other, progress=False)
    assert tournament.combine_runs([runs["good"], other])["deals"] == 2 * CONFIG.deals
    edit_manifest(other, version="0.0.1")  # checked by this code since: its digest is this code's
    assert tournament.combine_runs([runs["good"], other])["deals"] == 2 * CONFIG.deals
    edit_manifest(other, plays=OTHER_PLAYS)  # as 0.0.1 wrote it: played again, alike
    assert tournament.combine_runs([runs["good"], other])["deals"] == 2 * CONFIG.deals
    edit_manifest(other, plays=None)  # from before the digest: played again, alike
    assert tournament.combine_runs([other, runs["good"]])["deals"] == 2 * CONFIG.deals


def test_runs_played_by_different_code_do_not_combine(runs: dict[str, Path], tmp_path: Path) -> None:
    """A level or a ``py:`` file edited between two runs of the same name: the manifests' plays
    digests differ, and the two were pooled as one agent without a word."""
    other = tmp_path / "seed5"
    tournament.run_tournament(tournament.replace(CONFIG, seed=5), other, progress=False)
    edit_manifest(other, plays="0" * 64)
    with pytest.raises(tournament.TournamentError, match="were played by different code"):
        tournament.combine_runs([runs["good"], other])
    edit_manifest(other, plays=None)  # a run from before the digest: its version alone decides
    assert tournament.combine_runs([runs["good"], other])["deals"] == 2 * CONFIG.deals


def test_a_manifest_counting_other_parts_says_how_many_in_words_that_agree() -> None:
    """It said "chunks_done is 0 but 1 parts are listed"."""
    assert parts_problem({"parts": [{}], "chunks_done": 0}) == "chunks_done is 0 but 1 part is listed"
    two = parts_problem({"hand_parts": [{}, {}], "chunks_done": 1}, HANDS_DIR)
    assert two == "chunks_done is 1 but 2 hand parts are listed"
    assert parts_problem({"parts": [{}], "chunks_done": 1}) is None


def test_a_slow_chunk_is_on_disk_before_the_next_one_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished chunk was committed only once the next chunk had played (its parts were still
    being encoded when it was queued): a kill lost the last finished chunk of a slow run, minutes
    of ``hard``, and ``status`` saw the parts come in pairs. A chunk that took longer than
    ``PROMPT_COMMIT_SECONDS`` to play is committed before the next one starts."""
    monkeypatch.setattr(tournament, "PROMPT_COMMIT_SECONDS", 0.0)  # every chunk counts as slow
    out = tmp_path / "run"
    committed: list[int] = []

    class Watching(tournament.LocalRunner):
        def chunks(self, config: Any, chunks: range, hands: bool = True) -> Any:
            for chunk in chunks:
                committed.append(json.loads((out / tournament.MANIFEST).read_text())["chunks_done"])
                yield chunk, tournament.chunk_records(config, chunk, self.engines, hands)

    tournament.run_tournament(CONFIG, out, runner=Watching(), progress=False)
    assert committed == list(range(CONFIG.n_chunks))  # chunk k starts with chunks 0 .. k-1 on disk


def test_the_repair_hint_of_a_match_resumes_it_as_a_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A match's damaged records said to repair them with ``hearts-sim tournament --resume``,
    which prints a tournament's summary and JSON (its interrupt line already said match)."""
    out = tmp_path / "m"
    assert (
        main(["match", "lowest", "random", "--deals", "20", "--seed", "2", "--out", str(out), "--quiet"]) == 0
    )
    part = sorted((out / "records").glob("*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:-7])
    for command in (["match", "--resume", str(out)], ["report", str(out)]):
        capsys.readouterr()
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"hearts-sim match --resume {out} --repair" in err and err.count("\n") == 1, err


def _edited(run: Path, edit: Any) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    edit(manifest)
    (run / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("edit", "commands", "message"),
    [  # each was a traceback (IndexError, ValueError, TypeError) in the commands named
        (  # status said "finished" (until 2026-12-06)
            lambda m: m["parts"][0].update(bytes="12"),
            ("resume", "report", "combine", "status"),
            "of the wrong kind",
        ),
        (
            lambda m: m["tally"]["score_sum"].pop(),
            ("resume", "status", "combine", "report"),  # report wrote its files (until 2026-12-06)
            "score_sum is not 2 whole",
        ),
        (
            lambda m: m["tally"].update(deals="20"),
            ("resume", "status", "report"),
            "its deals is '20', not a count",
        ),
        (lambda m: m.update(deals_cap="x"), ("resume",), "deals_cap is 'x', not a count of deals"),
        (
            lambda m: m.update(engine_timeout="slow"),
            ("resume",),
            "manifest.json: engine_timeout='slow' is not",
        ),
        (lambda m: m.update(summary="x"), ("status",), "its summary is 'x', not a table of figures"),
        (lambda m: m.update(config=[]), ("status",), "'deals' is missing"),
        (lambda m: m["config"].update(deals=float("nan")), ("status",), "cannot convert float NaN"),
    ],
)
def test_a_hand_edited_manifest_is_one_line_in_every_command(
    runs: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Any,
    commands: tuple[str, ...],
    message: str,
) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["good"], run)
    _edited(run, edit)
    argv = {
        "resume": ["tournament", "--resume", str(run), "--quiet"],
        "report": ["report", str(run), "--out", str(tmp_path / "report")],
        "combine": ["combine", str(run), str(runs["interrupted"])],
        "status": ["status", str(run)],
    }
    for command in commands:
        assert main(argv[command]) == 2, command
        assert message in one_error_line(capsys), command


def test_a_new_run_on_a_full_disk_names_the_file_it_could_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock's note of its pid was the first write, and a full disk failed it as "cannot write
    the output: No space left on device" (from Python, a bare ``OSError``): the note is let go,
    and the run's first file says what could not be written."""
    from hearts_sim.core import files

    def full(descriptor: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "write", full)
    out = tmp_path / "run"
    assert main(["tournament", "lowest", "random", "--deals", "20", "--out", str(out), "--quiet"]) == 1
    assert one_error_line(capsys) == (  # no run to resume (it said to): the same command, which then plays
        f"hearts-sim: error: cannot write {out / 'manifest.json'}: No space left on device; nothing was "
        "played: run the same command again once it can write"
    )
    monkeypatch.undo()
    assert main(["tournament", "lowest", "random", "--deals", "20", "--out", str(out), "--quiet"]) == 0


def test_a_run_stopped_before_its_first_manifest_is_started_afresh(tmp_path: Path) -> None:
    """A stop between making the run's folders and writing its first manifest left an empty
    records/ folder, and the folder was then refused as "exists and is not an empty directory"
    (a kept job's match too, with a note to delete it by hand)."""
    out = tmp_path / "run"
    (out / "records").mkdir(parents=True)
    (out / ".lock").touch()
    result = tournament.run_tournament(CONFIG, out, progress=False)
    assert result.summary["deals"] == CONFIG.deals and (out / "manifest.json").is_file()
    # killed within the first manifest's write: its temporary too (refused until 2026-12-07, by a
    # new run, and a kept job's resume, which starts its match's run likewise)
    out = tmp_path / "killed"
    (out / "records").mkdir(parents=True)
    (out / ".lock").touch()
    (out / ".manifest.json.x1y2z3ab.tmp").write_text('{"config": ')
    result = tournament.run_tournament(CONFIG, out, progress=False)
    assert result.summary["deals"] == CONFIG.deals and (out / "manifest.json").is_file()
    job = tmp_path / "tune"  # a kept job's folder, killed within its settings' write
    job.mkdir()
    (job / ".tune.json.x1y2z3ab.tmp").write_text('{"settings": ')
    tuned = ["tune", "rule", "--param", "shoot=20:60", "--budget", "16", "--candidates", "2", "--quiet"]
    assert main([*tuned, "--out", str(job)]) == 0 and (job / "tune.json").is_file()


WHEN_COLUMNS = ("qs_trick", "point_tricks", "trick_winners")  # the records' columns since 2026-12-05


def test_a_run_begun_by_an_earlier_version_goes_on_with_its_columns(tmp_path: Path) -> None:
    """A run begun before the records said when each trick was won, resumed by a later version,
    had parts with those columns and parts without; readers keep the columns every part has, so
    ``report`` said none of its 2.7 million hands said when, and ``load_records`` refused the
    column it had just written. Its later parts, and a part ``--repair`` plays again, now keep
    its columns."""
    from hearts_sim.selfplay.records import part_entry

    config = tournament.TournamentConfig(("rule", "random"), deals=6, seed=4, chunk_deals=2)
    run = tmp_path / "old"
    with pytest.raises(tournament.Interrupted):
        tournament.run_tournament(config, run, progress=False, stop_after_chunks=1)
    first = pq.read_table(part(run, 0)).drop_columns(list(WHEN_COLUMNS))  # as the earlier version wrote it
    pq.write_table(first, part(run, 0))
    data = part(run, 0).read_bytes()
    edit_manifest(run, parts=[part_entry(data, first.num_rows)])
    tournament.resume_tournament(run, progress=False)
    names = [pq.read_schema(part(run, chunk)).names for chunk in range(config.n_chunks)]
    assert names == [first.schema.names] * config.n_chunks
    part(run, 1).write_bytes(b"damaged")
    tournament.resume_tournament(run, progress=False, repair=True)
    assert pq.read_schema(part(run, 1)).names == first.schema.names
    assert len(load_records(run)) == 6 * 14
    fresh = tmp_path / "new"
    tournament.run_tournament(config, fresh, progress=False)  # a run begun now has them all
    assert set(WHEN_COLUMNS) <= set(pq.read_schema(part(fresh, 2)).names)


def test_a_run_of_games_without_hands_says_how_to_get_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run of games made before 2026-12-05 kept no hands: its resume called it damaged ("cannot
    be trusted ... re-play the damaged chunks"), ``replay --game`` said it held game records, and
    the readers that ``runs made since 2026-12-05`` have them. Each now says that ``--repair``
    plays it again with them, which it does."""
    from hearts_sim.studies import analysis as an

    run = tmp_path / "old games"
    tournament.run_tournament(GAMES, run, progress=False)
    shutil.rmtree(run / HANDS_DIR)
    edit_manifest(run, hand_parts=None)  # as the earlier version wrote it
    again = f"hearts-sim tournament --resume '{run}' --repair plays it again with them"
    assert main(["tournament", "--resume", str(run)]) == 2
    assert one_error_line(capsys) == (
        f"hearts-sim: error: {run} is a run of games that kept no hands of them (runs made before "
        f"2026-12-05 did not): {again}"
    )
    for read in (lambda: an.load_records(run), lambda: an.game_rows(run, 0)):
        with pytest.raises(an.AnalysisError, match=r"kept no hands of them .*; " + re.escape(again)):
            read()
    assert main(["replay", str(run), "--game", "0"]) == 2
    assert one_error_line(capsys).endswith(again)
    assert main(["tournament", "--resume", str(run), "--repair", "--quiet"]) == 0
    capsys.readouterr()
    assert len(an.game_rows(run, 0)) > 0
