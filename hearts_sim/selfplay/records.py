"""Every record schema in one place: the kernels' record dtypes, the DataFrame and Parquet columns
they become, and the on-disk layout of a run (``records/part-NNNNNN.parquet`` and a manifest).

A run's manifest lists, for every committed part, its rows, its size and the SHA-256 of its
bytes (``part_entry``), taken when the part is written; whoever reads or resumes the run checks
every part it uses against that list (``verified_parts``), so a truncated, altered or missing
part is refused by name instead of being counted.

A hand record is one row per (deal, seating) in the order the jobs were played; per-seat fields
are sized ``MAX_PLAYERS`` in the dtype and become columns suffixed ``_0`` .. ``_{n-1}``
(``seat_column``); the winners of the tricks are packed into one integer
(``engine.hand.pack_trick_winners``, ``unpack_trick_winners``).
Game records are the same per game; the hands of games (``GAME_HAND_RECORD``) are hand records
that say which game, which hand of it, and the game's totals before it.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hearts_sim.core.checks import counted, is_integer
from hearts_sim.core.errors import InputError
from hearts_sim.core.files import shell_path
from hearts_sim.core.rules import MAX_PLAYERS, PASS_DIRECTIONS, Rules, pass_direction_name
from hearts_sim.engine.state import MAX_TRICKS, NO_TRICK, TRICK_BITS

i1, i2, i4, i8, u8 = np.int8, np.int16, np.int32, np.int64, np.uint64

# What a played hand records, in both kinds of hand record below.
_HAND_FIELDS: list[tuple[Any, ...]] = [
    ("seating", i4),
    ("hand_seed", u8),
    ("pass_offset", i1),
    ("dealer", i1),
    ("moon_shooter", i1),
    ("qs_taker", i1),
    ("jd_taker", i1),
    ("hearts_broken_trick", i1),
    ("qs_trick", i1),  # the trick that took the QS (0: also when it lay in the kitty)
    ("first_leader", i1),
    ("point_tricks", i4),  # bit t: trick t carried points (the kitty's count with trick 0)
    ("kitty", u8),
    ("dealt", u8, MAX_PLAYERS),
    ("passed", u8, MAX_PLAYERS),
    ("points", i2, MAX_PLAYERS),
    ("score", i2, MAX_PLAYERS),
    ("tricks", i1, MAX_PLAYERS),
    ("trick_winners", u8),  # every trick's winner, packed (``unpack_trick_winners``)
]
HAND_RECORD = np.dtype([("deal", i8), *_HAND_FIELDS])

GAME_RECORD = np.dtype(
    [
        ("game", i8),
        ("seating", i4),
        ("game_seed", u8),
        ("hands", i4),
        ("winners", i4),  # bitmask of the winning seats (several if shared)
        ("final_score", i4, MAX_PLAYERS),
        ("moons", i2, MAX_PLAYERS),
        ("points", i4, MAX_PLAYERS),  # raw penalty points over the game
    ]
)

# Every hand of a game (``simulate_games(..., hands=True)``, a ``--games`` run's ``hands/``): a
# HAND_RECORD whose deal is hand ``game_hand`` (0-based) of game ``game``, with the game's
# totals before it. Hand h of a game is dealt the same cards in every seating.
GAME_HAND_RECORD = np.dtype(
    [
        ("game", i8),
        ("game_hand", i2),
        *_HAND_FIELDS,
        ("game_score", i4, MAX_PLAYERS),  # the game's totals before this hand
        ("game_winners", i4),  # bitmask of the seats that won the game (GAME_RECORD's winners)
    ]
)

# Per-seat columns of the DataFrames and Parquet parts (``dealt_0`` ...), by record kind.
HAND_SEAT_COLUMNS = ("dealt", "passed", "points", "score", "tricks")
GAME_SEAT_COLUMNS = ("final_score", "moons", "points")
HAND_OUTCOME_COLUMNS = (
    "moon_shooter",
    "qs_taker",
    "jd_taker",
    "hearts_broken_trick",
    "qs_trick",
    "point_tricks",
    "trick_winners",  # packed: ``unpack_trick_winners``
)

# The directory of a run with --out: its records (hands, or games with --games), and with
# --games every hand of those games too.
RECORDS_DIR = "records"
HANDS_DIR = "hands"
MANIFEST = "manifest.json"
LOCK = ".lock"  # flock-ed by the process writing the run (``tournament._sole_writer``)
PART_GLOB = "part-*.parquet"
# The file that says what a kept job's folder holds: a run (its manifest), a tune or a calibration
# (its settings and what it has measured; each of its matches a run in a folder inside).
TUNE_FILE = "tune.json"
LEVELS_FILE = "levels.json"
HELD_BY = {MANIFEST: "a tournament run", TUNE_FILE: "a tune", LEVELS_FILE: "a calibration"}


def held_job(out: str | Path, looked_for: str) -> str:
    """``: it holds a tune (hearts-sim status DIR shows it)`` where ``out`` holds another job than
    the one whose file ``looked_for`` it lacks (``match --resume`` of a tune's folder said only
    that it held no run), else ``""``."""
    held = next(
        (what for file, what in HELD_BY.items() if file != looked_for and (Path(out) / file).is_file()), None
    )
    return "" if held is None else f": it holds {held} (hearts-sim status {shell_path(out)} shows it)"


def run_folder(path: str | Path) -> Path:
    """The run a path names: the run whose ``records/`` or ``hands/`` it is (the folder above
    holds the manifest: anything of its name, which its readers then refuse if it is no file),
    or the path itself."""
    path = Path(path)
    return path.parent if (path.parent / MANIFEST).exists() else path


def seat_column(name: str, seat: int) -> str:
    """The column of ``seat``'s value of a per-seat field: ``dealt_0``, ``points_3``, ..."""
    return f"{name}_{seat}"


def part_path(out: Path, chunk: int, directory: str = RECORDS_DIR) -> Path:
    """Where chunk ``chunk`` of a run in ``out`` is written (its game hands: ``HANDS_DIR``)."""
    return Path(out) / directory / f"part-{chunk:06d}.parquet"


class RecordsError(InputError):
    """A run whose records on disk do not match its manifest; the message names the part."""


PART_FIELDS = ("rows", "bytes", "sha256")  # what the manifest's ``parts`` list holds per part


def part_entry(data: bytes, rows: int) -> dict[str, Any]:
    """The manifest's entry for a part of ``rows`` records whose file holds ``data``."""
    return {"rows": int(rows), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def entry_problem(entry: Any) -> str | None:
    """Why a manifest's entry of a part is not one (its fields, their kinds); None when it is."""
    if not isinstance(entry, dict) or sorted(entry) != sorted(PART_FIELDS):
        return "has no valid entry in the manifest"
    size_entry, digest_entry = entry["bytes"], entry["sha256"]
    if not (is_integer(size_entry) and size_entry >= 0 and isinstance(digest_entry, str)):
        return "has no valid entry in the manifest (its bytes or sha256 is of the wrong kind)"
    return None


def entries_problem(manifest: Any) -> str | None:
    """Why a manifest's lists of parts hold an entry that is not one (``entry_problem``), naming
    the part; None when every entry listed is one. Reads no part: cheap enough for ``status``."""
    for directory, key in PARTS_KEYS.items():
        entries = manifest.get(key) if isinstance(manifest, dict) else None
        for chunk, entry in enumerate(entries if isinstance(entries, list) else []):
            if (problem := entry_problem(entry)) is not None:
                return f"{directory}/{part_path(Path(), chunk, directory).name} {problem}"
    return None


def part_problem(path: Path, entry: Any) -> str | None:
    """Why the part at ``path`` does not match its manifest ``entry``; None when it does."""
    if (problem := entry_problem(entry)) is not None:
        return problem
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return "is missing"
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if size != entry["bytes"]:
        return f"is {size:,} bytes, not the {entry['bytes']:,} recorded (truncated or overwritten)"
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if digest.hexdigest() != entry["sha256"]:
        return "does not hold the recorded contents (its SHA-256 differs)"
    return None


def resuming_command(manifest: Any) -> str:
    """The subcommand that resumes a run: the one that started it (its manifest's ``command``),
    since a ``match`` prints its own summary (its JSON differs from a tournament's)."""
    command = manifest.get("command") if isinstance(manifest, dict) else None
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:  # a hand-edited manifest
        words = []
    return "match" if words[1:2] == ["match"] else "tournament"


def repair_hint(out: Path, manifest: Any) -> str:
    """How to re-play a run's damaged chunks, with the subcommand that started it."""
    command = f"hearts-sim {resuming_command(manifest)} --resume {shell_path(out)} --repair"
    return f"re-play the damaged chunks with: {command}"


PARTS_KEYS = {RECORDS_DIR: "parts", HANDS_DIR: "hand_parts"}  # the manifest's list for each directory
# a run of games made before 2026-12-05, which kept no hands, or an edited manifest
NO_HAND_PARTS = "lists no checksums of the games' hands (written before they were recorded, or edited)"


def parts_problem(manifest: Any, directory: str = RECORDS_DIR) -> str | None:
    """Why a manifest's list of the parts in ``directory`` cannot be used (None when it can): it
    must list one entry per chunk it counts as done."""
    key = PARTS_KEYS[directory]
    parts = manifest.get(key) if isinstance(manifest, dict) else None
    done = manifest.get("chunks_done") if isinstance(manifest, dict) else None
    if not isinstance(parts, list):
        if directory == HANDS_DIR:
            return NO_HAND_PARTS
        return "lists no part checksums (written before they were recorded, or edited)"
    if not is_integer(done) or done != len(parts):
        listed = counted(len(parts), key.replace("_", " ").removesuffix("s"))  # "1 part", "2 hand parts"
        return f"chunks_done is {done!r} but {listed} {'is' if len(parts) == 1 else 'are'} listed"
    return None


def verified_parts(out: Path, manifest: Any, directory: str = RECORDS_DIR) -> list[Path]:
    """The parts in ``directory`` a run's manifest counts, each checked against its entry
    (``RecordsError`` naming the manifest or the first part that does not match)."""
    problem = parts_problem(manifest, directory)
    if problem is not None:
        raise RecordsError(
            f"{Path(out) / MANIFEST} cannot be trusted: {problem}; {repair_hint(out, manifest)}"
        )
    paths = []
    for chunk, entry in enumerate(manifest[PARTS_KEYS[directory]]):
        path = part_path(out, chunk, directory)
        problem = part_problem(path, entry)
        if problem is not None:
            raise RecordsError(f"records part {path} {problem}; {repair_hint(out, manifest)}")
        paths.append(path)
    return paths


def hand_frame(records: np.ndarray, rules: Rules, labels: Sequence[Sequence[str]]) -> pd.DataFrame:
    """HAND_RECORDs as a DataFrame: one row per hand, per-seat columns suffixed ``_0`` .. ``_{n-1}``
    (GAME_HAND_RECORDs: ``game`` and ``game_hand`` in place of ``deal``, and ``game_score_<s>``).

    ``labels[i]`` names the agent in each seat of seating i. The numeric columns are views of
    ``records``, not copies: gathering ~40 strided columns into pandas' consolidated blocks took
    longer than playing the hands."""
    return pd.DataFrame(hand_columns(records, rules, labels), copy=False)


def undecided_games(records: np.ndarray) -> int:
    """How many of these GAME_RECORDs were cut off undecided (``MAX_HANDS_PER_GAME``): a game that
    ends has a winner, so those are the ones with none."""
    return int((records["winners"] == 0).sum())


def game_frame(records: np.ndarray, rules: Rules, labels: Sequence[Sequence[str]]) -> pd.DataFrame:
    """GAME_RECORDs as a DataFrame: one row per game (columns viewing ``records``)."""
    return pd.DataFrame(game_columns(records, rules, labels), copy=False)


def _agent_columns(records: np.ndarray, rules: Rules, labels: Sequence[Sequence[str]]) -> dict[str, Any]:
    """``rules`` (the rules' short description) and ``agent_s`` (the agent in seat s of each
    row's seating), as categoricals: a few bytes per row, and groupable across runs."""
    seating = records["seating"] if len(labels) > 1 else None  # one seating: constant columns
    columns: dict[str, Any] = {
        "rules": _categorical(np.zeros(len(records), dtype=np.int8), [rules.describe()])
    }
    for seat in range(rules.n_players):
        names = sorted({row[seat] for row in labels})
        codes: np.ndarray = np.array([names.index(row[seat]) for row in labels], dtype=_code_dtype(names))
        per_row = (
            codes[seating] if seating is not None else np.full(len(records), codes[0], dtype=codes.dtype)
        )
        columns[seat_column("agent", seat)] = _categorical(per_row, names)
    return columns


def _categorical(codes: np.ndarray, categories: Sequence[str]) -> pd.Categorical:
    """A categorical from codes made here, in range by construction (pandas' check of every code
    cost more than building the column)."""
    return pd.Categorical.from_codes(codes, categories=list(categories), validate=False)


def _code_dtype(categories: Sequence[object]) -> type[np.signedinteger]:
    """The narrowest code type for a categorical (pandas checks and narrows wider codes: slow)."""
    return np.int8 if len(categories) < 128 else np.int32


def _seat_columns(records: np.ndarray, fields: Sequence[str], n: int) -> dict[str, Any]:
    return {seat_column(name, seat): records[name][:, seat] for name in fields for seat in range(n)}


def hand_columns(records: np.ndarray, rules: Rules, labels: Sequence[Sequence[str]]) -> dict[str, Any]:
    """The columns of ``hand_frame`` (numpy arrays and categoricals, ready for pandas or Arrow)."""
    n = rules.n_players
    # one category per direction name (offsets 2 and 3 are not "across" with 5 players)
    offset_codes = np.array(
        [PASS_DIRECTIONS.index(pass_direction_name(o, n)) for o in range(n)], dtype=np.int8
    )
    in_games = records.dtype == GAME_HAND_RECORD
    which = ("game", "game_hand") if in_games else ("deal",)  # the hand's place in the run
    columns: dict[str, Any] = {
        **{name: records[name] for name in which},
        "seating": records["seating"],
        "seed": records["hand_seed"],
        "pass_direction": _categorical(offset_codes[records["pass_offset"]], PASS_DIRECTIONS),
        "pass_offset": records["pass_offset"],  # receiver = (seat + pass_offset) % n
        "dealer": records["dealer"],
        "first_leader": records["first_leader"],
    }
    columns.update(_agent_columns(records, rules, labels))
    columns.update(_seat_columns(records, HAND_SEAT_COLUMNS, n))
    if rules.kitty_size:
        columns["kitty"] = records["kitty"]
    for name in HAND_OUTCOME_COLUMNS:
        columns[name] = records[name]
    if in_games:
        columns.update(_seat_columns(records, ("game_score",), n))
        columns.update(_won_columns(records["game_winners"], n, "game_won"))
    return columns


def _won_columns(winners: np.ndarray, n: int, name: str) -> dict[str, np.ndarray]:
    """``<name>_<s>``: whether seat s is among the ``winners`` bitmask's seats, per row."""
    winners = winners.astype(np.int64)
    return {seat_column(name, seat): ((winners >> seat) & 1).astype(bool) for seat in range(n)}


def unpack_trick_winners(packed: Any) -> np.ndarray:
    """The seat that won each trick, (hands, MAX_TRICKS) int8, -1 past the hand's last trick."""
    packed = np.asarray(packed, dtype=np.uint64)
    shifts = np.arange(MAX_TRICKS, dtype=np.uint64) * np.uint64(TRICK_BITS)
    seats = ((packed[:, None] >> shifts) & np.uint64(NO_TRICK)).astype(np.int8)
    seats[seats == NO_TRICK] = -1
    return seats


def tricks_won_masks(winners: np.ndarray, n_players: int) -> np.ndarray:
    """(hands, n_players) int64 from ``unpack_trick_winners``: bit t of column s set when seat s
    won trick t (``& point_tricks``: the point tricks each seat won)."""
    bits = np.int64(1) << np.arange(winners.shape[1], dtype=np.int64)
    return np.stack([(winners == seat) @ bits for seat in range(n_players)], axis=1)


def game_columns(records: np.ndarray, rules: Rules, labels: Sequence[Sequence[str]]) -> dict[str, Any]:
    """The columns of ``game_frame``."""
    n = rules.n_players
    winners = records["winners"].astype(np.int64)
    n_winners = np.zeros(len(records), dtype=np.int64)
    sole = np.full(len(records), -1, dtype=np.int64)
    for seat in range(n):
        won = (winners >> seat) & 1
        n_winners += won
        sole = np.where(won == 1, seat, sole)
    columns: dict[str, Any] = {
        "game": records["game"],
        "seating": records["seating"],
        "seed": records["game_seed"],
        "hands": records["hands"],
        "winner": np.where(n_winners == 1, sole, -1),  # -1: shared first place or no result
        "n_winners": n_winners,
    }
    columns.update(_agent_columns(records, rules, labels))
    columns.update(_won_columns(winners, n, "won"))
    columns.update(_seat_columns(records, GAME_SEAT_COLUMNS, n))
    return columns
