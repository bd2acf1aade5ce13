"""A full disk (or a spent quota) while results are written: every writer goes through
``write_atomically``, so a file is whole or as it was, and the command says so in one line.

The disk fills in the ``os.write`` of a temporary ``write_atomically`` made here: half the bytes
land, then ``OSError(ENOSPC)``, as a real full disk does (checked by hand on a full 2 MB tmpfs)."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.levels import read_level
from hearts_sim.apps.cli import main
from hearts_sim.core.errors import InputError
from hearts_sim.core.files import exclusive_lock, write_atomically
from hearts_sim.studies.tournament import Interrupted, TournamentError, make_config, run_tournament
from hearts_sim.studies.tune import Candidate, TuneError, TuneResult, write_level

try:
    from tests.test_learning import script_module
except ImportError:  # run from inside tests/
    from test_learning import script_module  # type: ignore[no-redef]


def _fill_the_disk(monkeypatch: pytest.MonkeyPatch, after: int = 0) -> list[Path]:
    """Every write of a temporary (``tempfile.mkstemp``'s ``.NAME.XXXXXXXX.tmp``) after the first
    ``after`` lands half its bytes and fails as a full disk does; returns the temporaries written."""
    written: list[Path] = []
    temporaries: dict[int, tuple[Path, int]] = {}  # descriptor: the temporary, its inode
    mkstemp, write = tempfile.mkstemp, os.write

    def recorded_mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        descriptor, name = mkstemp(*args, **kwargs)
        if name.endswith(".tmp"):
            temporaries[descriptor] = Path(name), os.fstat(descriptor).st_ino
        return descriptor, name

    def half_then_full(descriptor: int, data: Any) -> int:
        path, inode = temporaries.pop(descriptor, (None, -1))
        if path is None or os.fstat(descriptor).st_ino != inode:  # not a temporary: the number reused
            return write(descriptor, data)
        written.append(path)
        if len(written) <= after:
            return write(descriptor, data)
        write(descriptor, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(tempfile, "mkstemp", recorded_mkstemp)
    monkeypatch.setattr(os, "write", half_then_full)
    return written


def _final(temporary: Path) -> str:
    """The name ``write_atomically``'s temporary ``.NAME.XXXXXXXX.tmp`` replaces: ``NAME``."""
    return temporary.name.removeprefix(".").removesuffix(".tmp").rsplit(".", 1)[0]


def test_a_failed_write_leaves_the_file_as_it_was_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "manifest.json"
    write_atomically(path, b"the old contents")
    _fill_the_disk(monkeypatch)
    with pytest.raises(OSError, match="No space left on device"):
        write_atomically(path, b"the new contents, which do not fit")
    assert path.read_bytes() == b"the old contents"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]
    monkeypatch.undo()
    write_atomically(tmp_path / "new" / "file.txt", b"new")  # creates the folder
    assert (tmp_path / "new" / "file.txt").read_bytes() == b"new"


def test_the_data_reaches_the_disk_before_the_name_points_at_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rename ahead of its data can leave an empty file after a power cut (ext4, XFS, btrfs):
    the temporary is synced whole before it replaces the file, and the folder after."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("reads which file a descriptor is from /proc")
    path = tmp_path / "hard.toml"
    write_atomically(path, b"the old level")
    events: list[tuple[str, str, bytes | None]] = []
    fsync, replace = os.fsync, os.replace

    def recorded_fsync(descriptor: int) -> None:
        synced = Path(os.readlink(f"/proc/self/fd/{descriptor}"))
        contents = synced.read_bytes() if synced.is_file() else None
        events.append(("fsync", synced.name, contents))
        events.append(("then the file holds", path.name, path.read_bytes()))
        fsync(descriptor)

    def recorded_replace(source: Any, target: Any) -> None:
        events.append(("replace", Path(source).name, None))
        replace(source, target)

    monkeypatch.setattr(os, "fsync", recorded_fsync)
    monkeypatch.setattr(os, "replace", recorded_replace)
    write_atomically(path, b"the new level")
    temporary = events[0][1]
    assert re.fullmatch(r"\.hard\.toml\.\w{8}\.tmp", temporary)  # a name no one could know to plant
    assert events == [
        ("fsync", temporary, b"the new level"),
        ("then the file holds", "hard.toml", b"the old level"),
        ("replace", temporary, None),
        ("fsync", tmp_path.name, None),
        ("then the file holds", "hard.toml", b"the new level"),
    ]


def test_a_folder_that_cannot_be_synced_still_gets_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows cannot open a folder, and some network filesystems refuse to sync one: the
    file is written all the same (the rename is then as durable as the system makes it)."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("reads which file a descriptor is from /proc")
    synced: list[int] = []

    def files_only(descriptor: int) -> None:
        if os.path.isdir(f"/proc/self/fd/{descriptor}"):
            raise OSError(errno.EINVAL, "Invalid argument")
        synced.append(descriptor)

    monkeypatch.setattr(os, "fsync", files_only)
    write_atomically(tmp_path / "part-0.parquet", b"rows")
    assert (tmp_path / "part-0.parquet").read_bytes() == b"rows"
    assert len(synced) == 1


def test_a_failed_sync_is_a_failed_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fsync is where a disk reports an I/O error on data it accepted into the cache: the file
    keeps its old contents, the temporary goes, and the error reaches the caller."""
    path = tmp_path / "manifest.json"
    write_atomically(path, b"{}")

    def failing(descriptor: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(OSError, match="Input/output error"):
        write_atomically(path, b'{"chunks_done": 3}')
    assert path.read_bytes() == b"{}"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_a_ctrl_c_within_the_write_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as the data reaches the disk (the slow step) left ``.manifest.json.tmp`` beside the
    file: only an ``OSError`` removed it."""
    path = tmp_path / "manifest.json"
    write_atomically(path, b"{}")

    def interrupted(descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, b'{"chunks_done": 3}')
    assert path.read_bytes() == b"{}"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_a_write_replaces_links_in_the_folder_and_writes_through_none(tmp_path: Path) -> None:
    """The temporary was ``.NAME.tmp``, a name known in advance, written with ``write_bytes``: a
    link planted there (a run folder from a tar, a zip or git keeps it; another user of a shared
    folder can make it) had its target overwritten, and was then renamed onto ``NAME``. The
    temporary is now a new file of a name no one can know; a link at ``NAME`` is replaced."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("a", "b"):
        (outside / name).write_bytes(b"precious " + name.encode())
    run = tmp_path / "run"
    run.mkdir()
    (run / ".manifest.json.tmp").symlink_to(outside / "a")
    (run / "manifest.json").symlink_to(outside / "b")
    write_atomically(run / "manifest.json", b"the manifest")
    assert [(outside / name).read_bytes() for name in ("a", "b")] == [b"precious a", b"precious b"]
    assert not (run / "manifest.json").is_symlink()
    assert (run / "manifest.json").read_bytes() == b"the manifest"
    assert sorted(p.name for p in run.iterdir()) == [".manifest.json.tmp", "manifest.json"]  # untouched


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="Windows' files have no such mode")
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_written_file_has_the_mode_of_a_plain_write(tmp_path: Path, umask: int, mode: int) -> None:
    """``mkstemp`` makes its file ``0o600``: the temporary is given what a plain write gives, so a
    run in a folder shared with a group stays readable by it."""
    before = os.umask(umask)
    try:
        write_atomically(tmp_path / "manifest.json", b"{}")
    finally:
        os.umask(before)
    assert (tmp_path / "manifest.json").stat().st_mode & 0o777 == mode


def test_resuming_a_run_writes_through_no_link_planted_in_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run unpacked from a download with links at the names of its temporaries: ``--resume``
    overwrote their targets outside the run with a records part and a manifest until 2026-12-07.
    A temporary left by a killed write is not read, and the run reads back whole."""
    from hearts_sim.studies.analysis import load_records

    out, outside = tmp_path / "run", tmp_path / "outside"
    config = replace(make_config(["random", "lowest"], deals=4, seed=3), chunk_deals=1)
    with pytest.raises(Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=1, threads=1)
    outside.mkdir()
    planted = {
        out / "records" / ".part-000001.parquet.tmp": outside / "a",
        out / ".manifest.json.tmp": outside / "b",
    }
    for link, target in planted.items():
        target.write_bytes(b"precious")
        link.symlink_to(target)
    (out / "records" / ".part-000002.parquet.k3j4h5g6.tmp").write_bytes(b"PAR1 half a part")  # a kill
    assert main(["tournament", "--resume", str(out), "--threads", "1", "--quiet"]) == 0
    assert [target.read_bytes() for target in planted.values()] == [b"precious", b"precious"]
    assert all(link.is_symlink() for link in planted)
    whole = tmp_path / "whole"
    run_tournament(config, whole, progress=False, threads=1)
    assert load_records(out).equals(load_records(whole))
    assert main(["status", str(out)]) == 0 and "finished" in capsys.readouterr().out


def _lock_planted(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A run stopped after its first chunk whose lock file is a link to a file outside it, which
    holds ``precious``; the run, the link, its target."""
    out, target = tmp_path / "run", tmp_path / "precious.txt"
    config = replace(make_config(["random", "lowest"], deals=4, seed=3), chunk_deals=1)
    with pytest.raises(Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=1, threads=1)
    target.write_text("precious")
    (out / ".lock").unlink()
    (out / ".lock").symlink_to(target)
    return out, out / ".lock", target


def test_a_lock_file_that_is_a_link_is_refused_not_written_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock was opened ``O_CREAT|O_RDWR`` and truncated to the writer's pid: a ``.lock`` link
    in a downloaded run truncated its target outside the run until 2026-12-07 (and one to a
    missing file created it)."""
    out, link, target = _lock_planted(tmp_path)
    assert main(["tournament", "--resume", str(out), "--threads", "1", "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"hearts-sim: error: {link} is a symbolic link (to {target}), not a lock file: a link in a "
        "run's folder would send its writes elsewhere; remove it and run again\n"
    )
    assert target.read_text() == "precious"
    target.unlink()  # a link to nowhere: nothing is created there
    with pytest.raises(InputError, match="is a symbolic link"), exclusive_lock(link):
        pass
    assert not target.exists()
    link.unlink()
    assert main(["tournament", "--resume", str(out), "--threads", "1", "--quiet"]) == 0


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="the system's refusal to open a link")
def test_a_lock_link_made_after_the_look_is_refused_by_the_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link made between ``exclusive_lock``'s look and its open (another user racing it) is
    refused by ``O_NOFOLLOW``: the first look is made to miss it."""
    out, link, target = _lock_planted(tmp_path)
    islink, looks = os.path.islink, []

    def misses_the_first(path: Any) -> bool:
        looks.append(path)
        return len(looks) > 1 and islink(path)

    monkeypatch.setattr(os.path, "islink", misses_the_first)
    with pytest.raises(InputError, match=f"{re.escape(str(link))} is a symbolic link"), exclusive_lock(link):
        pass
    assert target.read_text() == "precious" and len(looks) >= 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="a FIFO: POSIX")
def test_a_lock_file_that_is_no_plain_file_is_refused_and_status_does_not_wait_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``.lock`` FIFO (tar keeps them) hung ``status`` (its open waited for a writer) and made
    ``--resume`` a traceback (``ftruncate``: ``Invalid argument``); a ``.lock`` folder let the run
    go unlocked. Each is refused in one line, and ``status`` reads the run."""
    out, link, _ = _lock_planted(tmp_path)
    link.unlink()
    os.mkfifo(link)
    looked = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "status", str(out)], capture_output=True, text=True, timeout=120
    )
    assert looked.returncode == 0 and "stopped after 1 of 4 deals" in looked.stdout, looked.stderr[-2000:]
    line = f"hearts-sim: error: {link} is not a plain file, as a lock file must be: remove it and run again\n"
    for make in (os.mkfifo, os.mkdir):
        if link.is_dir():
            link.rmdir()
        else:
            link.unlink()
        make(link)
        assert main(["tournament", "--resume", str(out), "--threads", "1", "--quiet"]) == 2
        assert capsys.readouterr().err == line


def _result() -> TuneResult:
    best = Candidate({"shoot": 30}, "rule(shoot=30)")
    return TuneResult("rule", "rule", best, 0.1, [0.0, 0.2], [], 100)


def test_a_level_that_cannot_be_written_keeps_the_level_it_would_replace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tune --write-level hard`` on a full disk truncated ``hard.toml`` to what fitted (checked
    on a tmpfs: 4,096 bytes of the new file, the old level gone, ``hard`` unreadable) until
    2026-12-06."""
    path = tmp_path / "hard.toml"
    write_level(path, _result(), "the level in place", 100, "hearts-sim tune ...")
    before = path.read_bytes()
    _fill_the_disk(monkeypatch)
    with pytest.raises(TuneError, match=f"cannot write level file {path}: No space left on device"):
        write_level(path, _result(), "x" * 9000, 100, "hearts-sim tune ...")
    assert path.read_bytes() == before
    assert read_level(path).description == "the level in place"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tournament") / "run"
    run_tournament(make_config(["random", "lowest"], deals=40, seed=3), out, progress=False)
    return out


def test_a_report_on_a_full_disk_is_one_line_and_leaves_no_half_figure(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hearts-sim report`` ended in a traceback (matplotlib's ``OSError``) and left an empty
    PNG until 2026-12-06."""
    out = tmp_path / "report"
    written = _fill_the_disk(monkeypatch, after=2)
    assert main(["report", str(run_dir), "--out", str(out)]) == 1
    failed = out / _final(written[2])
    assert capsys.readouterr().err == f"hearts-sim: error: cannot write {failed}: No space left on device\n"
    assert sorted(p.name for p in out.iterdir()) == sorted(map(_final, written[:2]))
    for name in written[:2]:  # the two that fitted are whole
        assert (out / _final(name)).read_bytes()[:4] == b"\x89PNG"
    monkeypatch.undo()
    assert main(["report", str(run_dir), "--out", str(out)]) == 0


def test_training_outlives_a_checkpoint_the_disk_refuses_and_says_so_when_the_last_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint that does not fit costs that checkpoint (a warning), not the run; weights
    that cannot be written at the end are one line and exit code 1, where both were a traceback
    until 2026-12-06."""
    train_policy = script_module("train_policy.py")
    out = tmp_path / "policy.npz"
    arguments = ["--decisions", "1280", "--envs", "64", "--hidden", "8", "8", "--reports", "2"]
    arguments += ["--backend", "numpy", "--out", str(out)]
    calls = 0

    def first_fails(path: Path, result: dict[str, Any], args: Any, **options: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        save(path, result, args, **options)

    save = train_policy.save
    monkeypatch.setattr(train_policy, "save", first_fails)
    train_policy.main(arguments)
    captured = capsys.readouterr()
    assert captured.err.count(f"warning: checkpoint not saved to {out}: No space left on device") == 1
    assert f"wrote {out}" in captured.out and calls >= 3
    with np.load(out) as data:
        assert json.loads(str(data["meta"]))["decisions"] == 1280

    _fill_the_disk(monkeypatch)
    with pytest.raises(SystemExit) as stopped:
        train_policy.main(arguments)
    assert stopped.value.code == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f": error: cannot write {out}: No space left on device")  # prog: argv[0]
    with np.load(out) as data:  # the weights written before are whole
        assert json.loads(str(data["meta"]))["decisions"] == 1280


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="Linux's /dev/full: every write is ENOSPC")
@pytest.mark.parametrize("command", [["agents", "--json"], ["match", "lowest", "random", "--deals", "1"]])
def test_output_redirected_to_a_full_disk_is_one_line_and_exit_1(command: list[str]) -> None:
    """``hearts-sim match ... --json > results.json`` on a full disk ended in a traceback from
    ``print`` until 2026-12-06."""
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [sys.executable, "-m", "hearts_sim", *command], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert run.returncode == 1
    line = "hearts-sim: error: cannot write the output: No space left on device"
    assert run.stderr.splitlines()[-1:] == [line]
    assert "Traceback" not in run.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="Linux's /dev/full: every write is ENOSPC")
def test_a_tuned_level_is_written_when_its_result_cannot_be_printed(tmp_path: Path) -> None:
    """``tune --write-level`` with stdout on a full disk lost the level, and without ``--out``
    the whole tune: the level is written, then the failure is one line."""
    command = ["tune", "rule", "--param", "shoot=20:60", "--budget", "64", "--candidates", "4"]
    command += ["--threads", "1", "--quiet", "--write-level", "kept", "--levels-dir", str(tmp_path)]
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            [sys.executable, "-m", "hearts_sim", *command], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert run.returncode == 1
    assert (
        run.stderr.splitlines()[-1] == "hearts-sim: error: cannot write the output: No space left on device"
    )
    assert (tmp_path / "kept.toml").is_file() and f"wrote level kept ({tmp_path / 'kept.toml'})" in run.stderr


def test_records_are_read_from_the_folder_named_not_from_home_or_as_a_uri(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """pyarrow expands a leading ``~`` and reads a first part with a colon as a URI: the records of
    ``./~/r`` (``--out=~/r``, ``out = "~/r"`` in a config) were read from ``$HOME/r``, another
    run's, without a word, and ``run:1`` was a traceback in report, replay and ``load_records``."""
    from hearts_sim.studies.analysis import load_records

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    run_tournament(make_config(["random", "lowest"], deals=8, seed=1), Path("~/r"), progress=False)
    run_tournament(make_config(["random", "lowest"], deals=8, seed=2), home / "r", progress=False)
    here, there = load_records("~/r"), load_records(home / "r")
    assert here.equals(load_records(work / "~" / "r")) and not here["seed"].equals(there["seed"])
    run_tournament(make_config(["random", "lowest"], deals=8, seed=1), Path("run:1"), progress=False)
    assert load_records("run:1").equals(here)
    assert main(["replay", "run:1", "--row", "0"]) == 0
    assert "won by" in capsys.readouterr().out


def test_a_path_option_takes_a_leading_tilde_for_home_wherever_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shell makes ``$HOME/r`` of ``--out ~/r`` but not of ``--out=~/r``, a quoted ``'~/r'``
    or a config file's ``out = "~/r"``: those wrote a folder ``./~/r``, while ``--levels-dir`` and
    the scripts' paths took ``~`` for home. Every path option does now, in every form."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    assert main(["match", "random", "lowest", "--deals", "8", "--out=~/r", "--quiet", "--json"]) == 0
    (work / "c.toml").write_text('agents = ["random", "lowest"]\ndeals = 8\nout = "~/c"\n')
    assert main(["tournament", "--config=~/../work/c.toml", "--quiet", "--json"]) == 0
    assert (home / "r" / "manifest.json").is_file() and (home / "c" / "manifest.json").is_file()
    assert not (work / "~").exists()
    capsys.readouterr()
    assert main(["status", "~/r", "~/c"]) == 0  # quoted, as a script may pass them
    said = capsys.readouterr().out
    assert f"{home / 'r'}: " in said and f"{home / 'c'}: " in said
    assert main(["replay", "~/r", "--row", "0"]) == 0 and "won by" in capsys.readouterr().out
    assert main(["report", "~/r", "--out=~/report"]) == 0
    assert (home / "report").is_dir() and not (work / "~").exists()


def test_printed_commands_quote_the_paths_they_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``resume with: hearts-sim tournament --resume stop me`` failed when pasted (two words), as
    did a hint naming a folder that starts with ``-`` (read as an option)."""
    from hearts_sim.core.files import shell_path

    assert shell_path("stop me") == "'stop me'" and shell_path("-run") == "./-run"
    assert shell_path(Path("/tmp/-run")) == "/tmp/-run" and shell_path("runs/a") == "runs/a"
    out = tmp_path / "stop me"
    config = replace(make_config(["random", "lowest"], deals=40, seed=3), chunk_deals=8)
    with pytest.raises(Interrupted, match=re.escape(f"resume with: hearts-sim tournament --resume '{out}'")):
        run_tournament(config, out, progress=False, stop_after_chunks=1)
    assert main(["status", str(out)]) == 0
    assert f"resume with: hearts-sim tournament --resume '{out}'" in capsys.readouterr().out


def test_non_ascii_names_work_under_a_locale_that_is_not_utf8(tmp_path: Path) -> None:
    """Under ``LC_ALL=C PYTHONUTF8=0`` a file name's bytes reach Python as surrogates: report and
    replay failed on pyarrow's ``UnicodeEncodeError``, a ``py:`` agent in such a folder on its
    digest, a level file with a UTF-8 description could not be read (and one with Notepad's
    byte-order mark was "Invalid statement"), and printed commands showed the folder as ``??``."""
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0"}
    env.pop("PYTHONIOENCODING", None)
    folder = tmp_path / "wd é"
    folder.mkdir()
    (folder / "mine.py").write_bytes((Path(__file__).parent / "python_agents.py").read_bytes())
    levels = tmp_path / "levels"
    levels.mkdir()
    level = 'description = "café level"\nagent = "rule"\nmax_ms_per_decision = 2\n'
    (levels / "cafe.toml").write_bytes(b"\xef\xbb\xbf" + level.encode())
    env["HEARTS_SIM_LEVELS"] = str(levels)

    def run(*arguments: str) -> bytes:
        done = subprocess.run(
            [sys.executable, "-m", "hearts_sim", *arguments],
            capture_output=True,
            cwd=folder,
            env=env,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        return done.stdout

    out = "c é".encode()
    printed = run(
        "match", "py:mine.py:Lowest", "cafe", "--deals", "4", "--threads", "1", "--quiet", "--out", "c é"
    )
    assert b"hearts-sim replay '" + out + b"' --worst" in printed
    assert b"wrote 10 files to " + out in run("report", "c é")
    assert b"Records: `c \xc3\xa9`" in (folder / "c é" / "report" / "summary.md").read_bytes()
    assert b"won by" in run("replay", "c é", "--row", "0", "--trust-agents")


def test_an_out_that_is_a_broken_link_is_named_as_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link to nowhere, or one that loops, was "cannot write to --out DIR: File exists" (mkdir's
    word), and ``combine`` of a loop a traceback (``RuntimeError: Symlink loop``)."""
    dangling, loop = tmp_path / "dangling", tmp_path / "loop"
    dangling.symlink_to(tmp_path / "nowhere")
    loop.symlink_to(loop)
    for out, words in ((dangling, f"to {tmp_path / 'nowhere'}, which does not exist"), (loop, "that loops")):
        for command in (["tournament", "random", "lowest", "--deals", "4"], ["levels", "--threads", "1"]):
            assert main([*command, "--out", str(out)]) == 2
            assert f"--out {out} is a symbolic link {words}: point it at a folder" in capsys.readouterr().err
    assert main(["combine", str(loop)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_level_with_quotes_and_backslashes_in_its_strings_reads_back_as_written(tmp_path: Path) -> None:
    """The agent and reference were pasted into the TOML raw: ``exec:python "engine.py"`` made a file
    that did not read back, a traceback after the whole tune with the level lost, and a
    backslash would have read back as another string."""
    spec, reference = 'exec:python "engine.py" --x \\t', "py:mine.py:Mine(tag='a\"b')"
    result = TuneResult("rule", reference, Candidate({}, spec), 0.1, [0.0, 0.2], [], 100)
    path = tmp_path / "quoted.toml"
    write_level(path, result, "café 😀, a \\ in it", 100, 'hearts-sim tune "x"')
    level = read_level(path)
    assert (level.agent, level.provenance["reference"]) == (spec, reference)
    assert level.description == "café 😀, a \\ in it" and level.provenance["command"] == 'hearts-sim tune "x"'
    # a folder's name whose bytes are not UTF-8 (a surrogate in Python): a file that was not UTF-8,
    # which stopped every command that reads the levels
    write_level(path, result, "tuned", 100, "hearts-sim tune --out runs/caf\udce9")
    assert read_level(path).provenance["command"] == "hearts-sim tune --out runs/caf\\xe9"


def _read_only(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """No file can be created in ``folder`` or below it, as on a read-only mount (``EROFS``);
    the tests as root could not use a folder's mode, which root writes through."""
    mkstemp = tempfile.mkstemp

    def refused(*args: Any, dir: Any = None, **kwargs: Any) -> tuple[int, str]:
        if dir is not None and Path(dir).resolve().is_relative_to(folder.resolve()):
            raise OSError(errno.EROFS, "Read-only file system", str(dir))
        return mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", refused)


def test_a_resume_where_nothing_can_be_written_plays_nothing_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stopped run on a read-only mount (checked by hand on a read-only bind mount): its resume
    compiled the kernels and played a chunk, then lost it to the first write ("cannot write
    .../part-000001.parquet") until 2026-12-08. Once it can write, it resumes to the whole run."""
    from hearts_sim.studies.analysis import load_records

    out, whole = tmp_path / "run", tmp_path / "whole"
    config = replace(make_config(["random", "lowest"], deals=3, seed=3), chunk_deals=1)
    with pytest.raises(Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=1, threads=1)
    parts = sorted((out / "records").iterdir())
    _read_only(monkeypatch, out)
    assert main(["tournament", "--resume", str(out), "--threads", "1", "--quiet"]) == 1
    assert capsys.readouterr().err == (
        f"hearts-sim: error: cannot write {out}: Read-only file system; 1 of 3 chunks are saved; "
        f"resume with: hearts-sim tournament --resume {out}\n"
    )
    assert sorted((out / "records").iterdir()) == parts
    monkeypatch.undo()
    assert main(["tournament", "--resume", str(out), "--threads", "1", "--quiet"]) == 0
    run_tournament(config, whole, progress=False, threads=1)
    assert load_records(out).equals(load_records(whole))


def test_a_finished_run_resumes_where_nothing_can_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Resuming a finished run reads it and prints its result; on a read-only mount it failed
    on rewriting its manifest, and said to resume it again, until 2026-12-08."""
    out = tmp_path / "run"
    config = make_config(["random", "lowest"], deals=3, seed=3)
    finished = run_tournament(config, out, progress=False, threads=1)
    manifest = (out / "manifest.json").read_bytes()
    _read_only(monkeypatch, out)
    assert run_tournament(config, out, resume=True, progress=False, threads=1).summary == finished.summary
    assert main(["tournament", "--resume", str(out), "--threads", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert (out / "manifest.json").read_bytes() == manifest


def test_a_report_that_cannot_be_written_says_so_before_reading_the_records(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run on a read-only mount: its report read every record first (minutes of a large run),
    then could not create its folder, and did not say where else it could go, until 2026-12-08."""
    from hearts_sim.studies.analysis import RecordSummary

    def unread(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the records were read")

    monkeypatch.setattr(RecordSummary, "from_records", unread)
    _read_only(monkeypatch, run_dir)
    assert main(["report", str(run_dir)]) == 2
    assert capsys.readouterr().err == (
        f"hearts-sim: error: cannot write the report in {run_dir / 'report'}: Read-only file system: "
        "name a folder that can be written with --out DIR\n"
    )
    assert main(["report", str(run_dir), "--out", str(run_dir / "a" / "b")]) == 2
    assert capsys.readouterr().err == (
        f"hearts-sim: error: cannot write the report in {run_dir / 'a' / 'b'}: Read-only file system\n"
    )


def test_a_resume_deletes_the_temporaries_of_killed_writes(tmp_path: Path) -> None:
    """A run killed within writes kept each temporary, a records part's size, through every
    resume until 2026-12-08; a link at such a name is not ours and stays (no write follows it)."""
    out, outside = tmp_path / "run", tmp_path / "outside.txt"
    config = replace(make_config(["random", "lowest"], deals=3, seed=3), chunk_deals=1)
    with pytest.raises(Interrupted):
        run_tournament(config, out, progress=False, stop_after_chunks=1, threads=1)
    killed = [out / "records" / ".part-000001.parquet.k3j4h5g6.tmp", out / ".manifest.json.a1b2c3d4.tmp"]
    for path in killed:
        path.write_bytes(b"half a write")
    outside.write_text("precious")
    (out / ".notes.k3j4h5g6.tmp").write_text("the user's")  # no temporary of ours: it stays
    planted = out / "records" / ".part-000002.parquet.zzzzzzzz.tmp"
    planted.symlink_to(outside)
    with pytest.raises(Interrupted):
        run_tournament(config, out, resume=True, progress=False, stop_after_chunks=1, threads=1)
    assert not any(path.exists() for path in killed)
    assert planted.is_symlink() and outside.read_text() == "precious"
    assert (out / ".notes.k3j4h5g6.tmp").read_text() == "the user's"
    elsewhere = tmp_path / "elsewhere"  # nor is it taken for a killed write that leaves a folder free
    elsewhere.mkdir()
    (elsewhere / ".notes.k3j4h5g6.tmp").write_text("the user's")
    with pytest.raises(TournamentError, match="exists and is not an empty directory"):
        run_tournament(config, elsewhere, progress=False)
    for missing in (tmp_path / "missing", tmp_path):  # no run there: its line, nothing deleted
        (tmp_path / ".x.k3j4h5g6.tmp").write_text("not ours to delete")
        with pytest.raises(TournamentError, match="holds no tournament run"):
            run_tournament(config, missing, resume=True, progress=False)
        assert (tmp_path / ".x.k3j4h5g6.tmp").read_text() == "not ours to delete"
