"""Tournament runs with damaged records, for the resume, repair, report and bad-input tests.

Every damaged run is a copy of one run interrupted after 2 of its 4 chunks; ``good`` is the
same tournament played to the end without interruption."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hearts_sim.selfplay.records import part_entry
from hearts_sim.studies.tournament import Interrupted, TournamentConfig, run_tournament

CONFIG = TournamentConfig(("lowest", "random"), deals=40, seed=3, chunk_deals=10)  # 4 chunks
DONE = 2  # chunks the interrupted run finished


def part(run: Path, chunk: int) -> Path:
    return run / "records" / f"part-{chunk:06d}.parquet"


def manifest(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "manifest.json").read_text()))


def edit_manifest(run: Path, **changes: Any) -> None:
    """The run's manifest with ``changes``; a key given None is taken out (as an earlier
    version wrote it without that key)."""
    recorded = {**manifest(run), **changes}
    for name in [name for name, value in changes.items() if value is None]:
        del recorded[name]
    (run / "manifest.json").write_text(json.dumps(recorded))


def _truncate(run: Path) -> None:
    path = part(run, 1)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garbage(run: Path) -> None:
    path = part(run, 0)
    path.write_bytes(os.urandom(path.stat().st_size))  # the same size: only the checksum tells


DAMAGE = {
    "truncated": _truncate,
    "deleted": lambda run: part(run, 1).unlink(),
    "garbage": _garbage,
    "edited": lambda run: edit_manifest(run, chunks_done=1),
    "tally_edited": lambda run: edit_manifest(
        run, parts=json.loads((run / "manifest.json").read_text())["parts"][:1], chunks_done=1
    ),
    "empty_manifest": lambda run: (run / "manifest.json").write_text("{}"),
    "list_manifest": lambda run: (run / "manifest.json").write_text("[]"),
    "garbage_manifest": lambda run: (run / "manifest.json").write_text("{not json"),
}


def interrupted_run(out: Path) -> Path:
    try:
        run_tournament(CONFIG, out, progress=False, stop_after_chunks=DONE)
    except Interrupted:
        return out
    raise AssertionError("the run was not interrupted")


def played_by_other_code(run: Path) -> str:
    """Make the run in ``run`` look played by other code (an upgrade, an edited agent): seat 1 of
    its first deal (first game) in seating 0 took a point more, in records and a manifest that are
    whole and verified, and the manifest's ``plays`` digest is another's. Returns how a resume by
    this code words the difference."""
    games = bool(json.loads((run / "manifest.json").read_text())["config"].get("games"))
    key, column = ("game", "final_score_1") if games else ("deal", "points_1")
    records = pq.read_table(part(run, 0)).to_pandas()
    row = records.index[(records[key] == 0) & (records["seating"] == 0)][0]
    played = int(records.loc[row, column])
    records.loc[row, column] = played + 1
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(records, preserve_index=False), buffer)
    part(run, 0).write_bytes(buffer.getvalue())
    manifest = json.loads((run / "manifest.json").read_text())
    entry = part_entry(buffer.getvalue(), len(records))
    edit_manifest(run, parts=[entry, *manifest["parts"][1:]], plays="0123456789abcdef")  # other code's digest
    return f"{key} 0 in seating 0 plays differently now ({column} {played}, {played + 1} in its records)"


def damaged_runs(root: Path) -> dict[str, Path]:
    """``good`` (finished), ``interrupted`` (2 of 4 chunks) and one copy of the interrupted
    run per kind of damage in ``DAMAGE``."""
    root.mkdir(parents=True, exist_ok=True)
    runs = {"good": root / "good", "interrupted": interrupted_run(root / "interrupted")}
    run_tournament(CONFIG, runs["good"], progress=False)
    for name, damage in DAMAGE.items():
        runs[name] = root / name
        shutil.copytree(runs["interrupted"], runs[name])
        damage(runs[name])
    return runs
