"""Moon-shot analysis over the per-hand records of ``simulate`` and tournaments.

The records are wide (one row per hand, per-seat columns ``dealt_0``, ``points_1``, ...);
most questions are about a player, so ``to_long`` turns them into one row per
(hand, seat) with the seat's agent, cards, points and flags (``shot_moon``,
``moon_suffered``, ``took_qs``, ...). ``hand_features`` computes hand shape (hearts,
high hearts, spade honours, suit lengths, voids) from the ``uint64`` bitboards with
vectorised popcounts, at the deal and after the pass.

Every statistic is a sum of counts, so it is computed the same way in memory
(``moon_rates(df, by=...)``) and over a tournament's Parquet records too large for
memory (``RecordSummary.from_records(path)`` reads a few columns in batches and adds
the counts up). Rates carry Wilson 95% intervals at the effective number of hands over the
records' deals (a duplicate run replays each deal in every seating; the seats of one hand
share its cards).

>>> from hearts_sim import simulate
>>> df = simulate("standard", ["random", "lowest", "highest", "random"], hands=2000, seed=0)
>>> rates = moon_rates(df, by="agent", scale=1000)      # moons per 1,000 hands of each agent
>>> rates.columns.tolist(), rates.index.tolist()
(['hands', 'moons', 'rate', 'low', 'high'], ['highest', 'lowest', 'random'])
>>> int(rates.loc["random", "hands"])                   # random sits in two seats
4000
"""

from __future__ import annotations

import contextvars
import functools
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from hearts_sim.core.cards import (
    ACE,
    AS_BIT,
    CLUBS,
    DIAMONDS,
    FULL_DECK,
    HEARTS,
    JACK,
    JD_BIT,
    KS_BIT,
    N_RANKS,
    N_SUITS,
    POINTS_QS,
    QS_BIT,
    SPADES,
    SUIT_MASKS,
    card_counts,
    card_index,
)
from hearts_sim.core.checks import did_you_mean, is_integer, is_real, shown
from hearts_sim.core.errors import InputError
from hearts_sim.core.files import arrow_path, shell_path
from hearts_sim.core.rules import (
    MAX_POINTS,
    PASS_DIRECTIONS,
    POINTS_TOTAL,
    Rules,
    RulesError,
    check_n_players,
    pass_offset,
    rules_label,
)
from hearts_sim.selfplay.records import (
    HAND_SEAT_COLUMNS,
    HANDS_DIR,
    MANIFEST,
    PART_GLOB,
    PARTS_KEYS,
    RECORDS_DIR,
    RecordsError,
    repair_hint,
    run_folder,
    tricks_won_masks,
    unpack_trick_winners,
    verified_parts,
)
from hearts_sim.selfplay.simulate import progress_shown
from hearts_sim.studies.replay import Replay as Replay
from hearts_sim.studies.replay import ReplayError as ReplayError
from hearts_sim.studies.replay import Trick as Trick
from hearts_sim.studies.replay import replay as replay
from hearts_sim.studies.stats import Z95, Tally, moons_by_others

DEFAULT_FAILED_POINTS = 20  # a failed moon: at least this many raw points (of 26), and no moon
DEFAULT_BATCH = 1 << 17
MAX_BATCH = 2**31 - 1  # pyarrow takes a batch size as a C int
HAND_FIELDS = ("deal", "seed", "seating", "pass_direction", "rules", "moon_shooter", "qs_taker", "jd_taker")
TIMELINE_FIELDS = ("trick_winners", "point_tricks", "qs_trick")  # when: records since 2026-12-05
TIMELINE_TABLES = ("stopping_tricks", "qs_tricks")  # RecordSummary's tables that need them
GAME_FIELDS = ("game", "game_hand")  # hands of games (``simulate_games(hands=True)``, ``hands/``)
GAME_SEAT_FIELDS = ("game_score", "game_won")  # and per seat: its total before the hand, the game won
GAME_TABLES = ("moons_by_game_place", "failed_by_game_place")  # RecordSummary's, of hands of games
STAGES = ("dealt", "held", "received")  # bitboard columns of the long format that features apply to

HIGH_RANKS = range(JACK, ACE + 1)  # J, Q, K, A
HIGH_HEARTS = np.uint64(sum(1 << card_index(HEARTS, r) for r in HIGH_RANKS))
HIGH_CARDS = np.uint64(sum(1 << card_index(s, r) for s in range(N_SUITS) for r in HIGH_RANKS))
SPADE_HONOURS = QS_BIT | KS_BIT | AS_BIT
FEATURES = (
    "hearts",
    "high_hearts",
    "heart_run",
    "clubs",
    "diamonds",
    "spades",
    "voids",
    "longest",
    "high_cards",
    "spade_honours",
    "has_qs",
    "has_ks",
    "has_as",
    "has_jd",
)


class UnfinishedRunWarning(UserWarning):
    """Records read from a run that is not finished (stopped, or being written): what they say is
    about the hands of its finished chunks only (``unfinished_note``)."""


class AnalysisError(InputError):
    """Records that cannot be analysed as asked (missing directory or columns, game records)."""


def _frame(data: Any) -> pd.DataFrame:
    """``data`` if it is a DataFrame of records; ``AnalysisError`` saying what to pass if not."""
    if isinstance(data, pd.DataFrame):
        return data
    hint = ": load_records(path) reads a run's records" if isinstance(data, (str, Path)) else ""
    raise AnalysisError(f"expected a DataFrame of hand records, not {type(data).__name__}{hint}")


def _require(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """``AnalysisError`` naming the first of ``columns`` that ``frame`` lacks (records loaded
    with a narrower ``columns=``, or a frame cut down by hand)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        hint = did_you_mean(missing[0], map(str, frame.columns))
        raise AnalysisError(f"{what} needs column {missing[0]!r}{more}, which these records lack{hint}")


def _bitboards(cards: Any) -> np.ndarray:
    """``cards`` as an array of ``uint64`` bitboards (one number: one of them); ``AnalysisError``
    for anything but whole numbers >= 0 (numpy would wrap -1 round, or refuse it with an
    ``OverflowError``) and for bits past the 52 cards (a hand of none of them)."""
    bits = np.atleast_1d(np.asarray(cards))
    if bits.dtype.kind not in "ui":
        raise AnalysisError(f"bitboards are whole numbers (uint64 card masks), not {bits.dtype} values")
    if bits.dtype.kind == "i" and (bits < 0).any():
        raise AnalysisError("bitboards are whole numbers >= 0 (uint64 card masks), not negative ones")
    bits = bits.astype(np.uint64, copy=False)
    if (bits & ~np.uint64(FULL_DECK)).any():
        raise AnalysisError("bitboards hold the 52 cards in bits 0 .. 51: these have bits past them")
    return bits


# ---------------------------------------------------------------------------- statistics
def wilson_interval(successes: Any, trials: Any, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval for a binomial proportion (95% by default), vectorised.

    Unlike the normal approximation it stays inside [0, 1] and is sensible for rare
    events such as moons (a few per thousand) and for zero successes.

    >>> low, high = wilson_interval(0, 10)
    >>> float(low), round(float(high), 4)
    (0.0, 0.2775)
    >>> [round(float(x), 4) for x in wilson_interval(50, 100)]
    [0.4038, 0.5962]
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        z2 = z * z
        denominator = 1 + z2 / n
        centre = (p + z2 / (2 * n)) / denominator
        half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0))  # exact at the ends
    high = np.where(k == n, 1.0, np.clip(centre + half, 0.0, 1.0))
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def popcount(cards: Any) -> np.ndarray:
    """Number of cards in each bitboard of a records column (``hearts_sim.core.cards.card_counts``),
    as int8.

    >>> popcount(np.array([0, 0b1011, 2**52 - 1], dtype=np.uint64)).tolist()
    [0, 3, 52]
    """
    return card_counts(_bitboards(cards)).astype(np.int8)


def hand_features(cards: Any, prefix: str = "") -> pd.DataFrame:
    """Shape of each hand in an array of bitboards: one column per name in ``FEATURES``.

    ``hearts``: hearts held; ``high_hearts``: hearts J or higher; ``heart_run``: top hearts
    held without a gap from the ace (AH KH QH = 3); ``clubs``/``diamonds``/``spades``: suit
    lengths; ``voids``: empty suits; ``longest``: the longest suit; ``high_cards``: J or
    higher in any suit; ``spade_honours``: how many of QS, KS, AS; ``has_qs`` ...
    ``has_jd``: holds that card.

    >>> from hearts_sim.core.cards import CardSet
    >>> hand = CardSet.parse("AH KH QH 9H 2H QS AS 2S 3S 4S 5D 6D 7D").mask
    >>> f = hand_features(np.array([hand], dtype=np.uint64)).iloc[0]
    >>> int(f.hearts), int(f.high_hearts), int(f.heart_run), int(f.voids), bool(f.has_qs)
    (5, 3, 3, 1, True)
    """
    index = cards.index if isinstance(cards, pd.Series) else None  # a frame's column joins back on its rows
    bits = _bitboards(cards)
    if bits.ndim != 1:  # a column of a frame: one hand a row
        raise AnalysisError(
            f"hand_features takes one bitboard a hand, in one dimension, not shape {bits.shape}"
        )
    lengths = {s: popcount(bits & SUIT_MASKS[s]) for s in range(N_SUITS)}
    run = np.zeros(bits.shape, dtype=np.int8)
    alive = np.ones(bits.shape, dtype=bool)
    for rank in range(N_RANKS - 1, -1, -1):
        alive &= (bits & np.uint64(1 << card_index(HEARTS, rank))) != 0
        run += alive
    stacked = np.stack([lengths[s] for s in range(N_SUITS)])
    columns: dict[str, np.ndarray] = {
        "hearts": lengths[HEARTS],
        "high_hearts": popcount(bits & HIGH_HEARTS),
        "heart_run": run,
        "clubs": lengths[CLUBS],
        "diamonds": lengths[DIAMONDS],
        "spades": lengths[SPADES],
        "voids": (stacked == 0).sum(axis=0).astype(np.int8),
        "longest": stacked.max(axis=0).astype(np.int8),
        "high_cards": popcount(bits & HIGH_CARDS),
        "spade_honours": popcount(bits & SPADE_HONOURS),
        "has_qs": (bits & QS_BIT) != 0,
        "has_ks": (bits & KS_BIT) != 0,
        "has_as": (bits & AS_BIT) != 0,
        "has_jd": (bits & JD_BIT) != 0,
    }
    return pd.DataFrame({f"{prefix}{name}": values for name, values in columns.items()}, index=index)


# ---------------------------------------------------------------------------- wide -> long
def n_seats(records: pd.DataFrame) -> int:
    """The number of players in wide records (the ``dealt_<seat>`` columns); ``AnalysisError``
    for records of several numbers of players (``pd.concat`` of a 4-player run and a 5-player
    one leaves the 4-player hands without a seat 4, which would count as a fifth player)."""
    records = _frame(records)
    count = 0
    while f"dealt_{count}" in records.columns:
        count += 1
    if count == 0:
        raise AnalysisError(
            "these are not per-hand records (no dealt_0 column): analyse the records of simulate(), "
            "of a hand tournament, or the hands of games (simulate_games(hands=True), a --games run's hands/)"
        )
    short = int(records[f"dealt_{count - 1}"].isna().sum())
    if short:
        raise AnalysisError(
            f"these records mix numbers of players: {short:,} of their {len(records):,} hands have no seat "
            f"{count - 1}; analyse the records of each number of players apart (their rates do not pool)"
        )
    return count


def long_columns(n_players: int) -> list[str]:
    """The wide columns ``to_long`` reads: a column projection for Parquet."""
    per_seat = [
        f"{name}_{s}" for name in ("agent", *HAND_SEAT_COLUMNS, *GAME_SEAT_FIELDS) for s in range(n_players)
    ]
    return [*HAND_FIELDS, *GAME_FIELDS, *TIMELINE_FIELDS, *per_seat]


def _repeat(column: pd.Series, times: int) -> Any:
    """Each value of ``column`` ``times`` times in a row, keeping a categorical categorical."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return pd.Categorical.from_codes(np.repeat(column.cat.codes.to_numpy(), times), column.cat.categories)
    return np.repeat(column.to_numpy(), times)


def _seat_matrix(records: pd.DataFrame, name: str, n: int, dtype: Any = None) -> np.ndarray:
    return np.stack([records[f"{name}_{s}"].to_numpy(dtype=dtype) for s in range(n)], axis=1)


def _agents(records: pd.DataFrame, n: int) -> pd.Categorical:
    """The agent of each (hand, seat), one categorical over the names seen in any seat."""
    seats = [records[f"agent_{s}"].astype("category") for s in range(n)]
    names = sorted({str(c) for column in seats for c in column.cat.categories})
    codes = np.stack([pd.Categorical(column, categories=names).codes for column in seats], axis=1)
    return pd.Categorical.from_codes(codes.ravel(), categories=names)


def source_offset(direction: str, n_players: int) -> int:
    """Seat s receives its passed cards from seat (s + offset) % n; 0 when it receives none.

    ``across`` is only determined with 4 players (with 5 the records do not say which of the
    two far seats passed), so it gives 0 (unknown: the received cards count as none).

    >>> [source_offset(d, 4) for d in ("left", "right", "across", "none")]
    [3, 1, 2, 0]
    """
    check_n_players(n_players)
    if direction == "across" and n_players != 4:
        return 0
    return -pass_offset(direction, n_players) % n_players  # passes go to seat + offset


# the long columns made together (one computation): asking for any of them makes them all
TIMELINE_COLUMNS = ("first_points_trick", "moon_stopped_trick", "qs_trick")
GAME_STANDING_COLUMNS = ("game_score", "game_place", "game_behind", "game_won")
# every column ``to_long`` can make (those of hands of games and of when only from such records)
LONG_COLUMNS = (
    "hand", "deal", "seed", *GAME_FIELDS, "seating", "seat", "n_players", "pass_direction", "rules", "agent",
    "dealt", "passed", "received", "held", "points", "score", "tricks", "shot_moon", "moon_suffered",
    "took_qs", "took_jd", "hearts_taken", *TIMELINE_COLUMNS, *GAME_STANDING_COLUMNS,
)  # fmt: skip
# the long columns one value a hand, the same in every seat's row; the others differ from seat to
# seat, and a per="hand" table cannot group by them (it took seat 0's: moon_rates(per="hand") by
# shot_moon said every hand's moon was seat 0's); a column added to LONG_COLUMNS is per seat
# unless named here
PER_HAND_COLUMNS = (
    "hand",
    "deal",
    "seed",
    *GAME_FIELDS,
    "seating",
    "n_players",
    "pass_direction",
    "rules",
    "qs_trick",
)
PER_SEAT_COLUMNS = tuple(name for name in LONG_COLUMNS if name not in PER_HAND_COLUMNS)


def is_long(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` holds records in long format (``to_long``'s rows, one per seat, however
    few of its columns) rather than wide ones (``dealt_0``, ``points_1``, ...)."""
    return "seat" in frame.columns and "dealt_0" not in frame.columns


def to_long(
    records: pd.DataFrame, features: bool | Sequence[str] = False, columns: Iterable[str] | None = None
) -> pd.DataFrame:
    """One row per (hand, seat) from wide per-hand records, since most questions are per player.

    Columns: ``hand`` (row position in ``records``), ``deal`` and ``seed`` (as recorded),
    ``seating``, ``seat``, ``n_players``, ``pass_direction``, ``rules`` (when recorded), ``agent``; the seat's
    bitboards ``dealt``, ``passed``, ``received`` (the cards passed to it) and ``held`` (its
    hand after the pass); ``points`` (raw), ``score`` (after moon and bonus adjustments),
    ``tricks``; flags ``shot_moon``, ``moon_suffered`` (a player of another agent shot: a copy
    of the seat's own agent is no opponent, and self-play suffers none),
    ``took_qs``, ``took_jd``; ``hearts_taken`` (``points`` minus the QS's 13 in hands
    whose points total 26, else -1). From records that hold when each trick was won (all
    made since 2026-12-05), 0-based tricks, -1 for never: ``first_points_trick`` (the first
    trick in which the seat took points), ``moon_stopped_trick`` (the first in which another
    seat did: from then on this seat could not shoot the moon) and ``qs_trick`` (the trick
    that took the queen of spades). From hands of games (``simulate_games(hands=True)``, a
    ``--games`` run's ``hands/``): ``game``, ``game_hand`` (0-based), and where the seat stood
    before the hand: ``game_score`` (its total), ``game_place`` (1 for the lowest total, ties
    sharing the better place) and ``game_behind`` (its total less the lowest), and
    ``game_won`` (the seat won that game, alone or sharing first place). ``features``:
    True or a list of stages among ``dealt``, ``held``, ``received`` adds ``hand_features``
    columns prefixed ``held_`` ...

    ``columns``: only these long columns (with ``hand`` and ``seat``, and the card stages that
    ``features`` reads), for tables over millions of hands: each column left out is memory
    never taken (the analysis functions name what they read). None: every column.
    """
    n = n_seats(records)
    stages = STAGES[:2] if features is True else () if features is False else _stages(features, "features")
    wanted = (
        None if columns is None else {"hand", "seat", *_names(columns, "columns", "a column name"), *stages}
    )
    unknown = sorted((wanted or set()) - set(LONG_COLUMNS))
    if unknown:  # a misspelt name was left out in silence
        hint = did_you_mean(unknown[0], LONG_COLUMNS)
        raise AnalysisError(
            f"to_long makes no column {unknown[0]!r}: choose among {', '.join(LONG_COLUMNS)}{hint}"
        )

    def want(*names: str) -> bool:
        return wanted is None or any(name in wanted for name in names)

    seat_columns = [f"{name}_{s}" for name in ("agent", *HAND_SEAT_COLUMNS) for s in range(n)]
    _require(records, [*seat_columns, "moon_shooter", "qs_taker", "jd_taker"], "to_long")
    rows = len(records)
    in_games = [name for name in ("game", "game_score_0") if name in records.columns]
    if in_games and records[in_games].isna().to_numpy().any():  # made-up places and totals, one warning
        single = int(records[in_games].isna().any(axis=1).sum())
        raise AnalysisError(
            f"only {rows - single:,} of these {rows:,} hands are hands of games (single hands pooled "
            "with them, pd.concat?): their game columns would be made up for the others; "
            "analyse the two apart"
        )
    out: dict[str, Any] = {"hand": np.repeat(np.arange(rows, dtype=np.int64), n)}
    for name in ("deal", "seed", *GAME_FIELDS, "seating"):
        if name in records.columns and want(name):
            out[name] = _repeat(records[name], n)
    out["seat"] = np.tile(np.arange(n, dtype=np.int8), rows)
    if want("n_players"):
        out["n_players"] = np.full(rows * n, n, dtype=np.int8)
    for name in ("pass_direction", "rules"):
        if name in records.columns and want(name):
            out[name] = _repeat(records[name], n)
    if want("agent"):
        out["agent"] = _agents(records, n)
    if want(*STAGES, "passed"):
        _add_cards(out, records, n, want)
    _add_outcomes(out, records, n, want)
    if all(name in records.columns for name in TIMELINE_FIELDS) and want(*TIMELINE_COLUMNS):
        point_tricks = records["point_tricks"].to_numpy(dtype=np.int64)[:, None]
        won = point_tricks & tricks_won_masks(unpack_trick_winners(records["trick_winners"].to_numpy()), n)
        out["first_points_trick"] = _first_trick(won).ravel()
        out["moon_stopped_trick"] = _first_trick(point_tricks & ~won).ravel()
        out["qs_trick"] = _repeat(records["qs_trick"], n)
    if "game_score_0" in records.columns and want(*GAME_STANDING_COLUMNS):
        _add_game_standing(out, records, n)
    long = pd.DataFrame({name: value for name, value in out.items() if want(name)})
    return add_features(long, stages) if stages else long


def _add_outcomes(out: dict[str, Any], records: pd.DataFrame, n: int, want: Callable[..., bool]) -> None:
    """What each seat took into ``out``: ``points``, ``score``, ``tricks``, ``shot_moon``,
    ``moon_suffered``, ``took_qs``, ``took_jd`` and ``hearts_taken``."""
    seat_grid = np.arange(n, dtype=np.int8)[None, :]  # against a (hands, 1) column: [h, s]

    def taker(column: str) -> np.ndarray:
        return records[column].to_numpy(dtype=np.int64)[:, None]

    points = _seat_matrix(records, "points", n, np.int16)
    if want("points"):
        out["points"] = points.ravel()
    if want("score"):
        out["score"] = _seat_matrix(records, "score", n, np.int16).ravel()
    if want("tricks"):
        out["tricks"] = _seat_matrix(records, "tricks", n, np.int8).ravel()
    shooter = taker("moon_shooter")
    if want("shot_moon"):
        out["shot_moon"] = (seat_grid == shooter).ravel()
    if want("moon_suffered"):  # shot by a seat of another agent (``moons_by_others``)
        agents = _agents(records, n).codes.reshape(-1, n)
        out["moon_suffered"] = (moons_by_others(seat_grid == shooter, agents) > 0).ravel()
    took_qs = seat_grid == taker("qs_taker")
    if want("took_qs"):
        out["took_qs"] = took_qs.ravel()
    if want("took_jd"):
        out["took_jd"] = (seat_grid == taker("jd_taker")).ravel()
    if want("hearts_taken"):
        # hearts and the queen alone: the hands whose hearts_taken the points tell
        standard = points.astype(np.int64).sum(axis=1, keepdims=True) == POINTS_TOTAL
        out["hearts_taken"] = np.where(standard, points - POINTS_QS * took_qs, -1).astype(np.int8).ravel()


def _add_game_standing(out: dict[str, Any], records: pd.DataFrame, n: int) -> None:
    """Where each seat stood in its game before the hand into ``out``: ``game_score``,
    ``game_place``, ``game_behind`` and (when recorded) ``game_won``."""
    totals = _seat_matrix(records, "game_score", n, np.int64)
    out["game_score"] = totals.ravel()
    lower = (totals[:, None, :] < totals[:, :, None]).sum(axis=2)  # [h, s]: the seats below s
    out["game_place"] = (1 + lower).astype(np.int8).ravel()
    out["game_behind"] = (totals - totals.min(axis=1, keepdims=True)).ravel()
    if "game_won_0" in records.columns:
        out["game_won"] = _seat_matrix(records, "game_won", n, bool).ravel()


def _add_cards(out: dict[str, Any], records: pd.DataFrame, n: int, want: Callable[..., bool]) -> None:
    """The seat's bitboards into ``out``: ``dealt``, ``passed``, ``received`` (the cards passed to
    it, from the seat the pass direction names) and ``held`` (its hand after the pass)."""
    rows = len(records)
    dealt = _seat_matrix(records, "dealt", n, np.uint64)
    passed = _seat_matrix(records, "passed", n, np.uint64)
    if "pass_offset" in records.columns:  # passes go to seat + offset, so come from seat - offset
        offsets = (-records["pass_offset"].to_numpy(dtype=np.int64)) % n
    elif "pass_direction" in records.columns:  # a few names: look each up once (no sort of strings)
        codes, names = pd.factorize(records["pass_direction"], use_na_sentinel=False)
        offsets = np.array([source_offset(str(name), n) for name in names], dtype=np.int64)[codes]
    else:
        offsets = np.zeros(rows, dtype=np.int64)
    source = (np.arange(n)[None, :] + offsets[:, None]) % n
    received = np.take_along_axis(passed, source, axis=1)
    received[offsets == 0] = 0
    for name, cards in (("dealt", dealt), ("passed", passed), ("received", received)):
        if want(name):
            out[name] = cards.ravel()
    if want("held"):
        out["held"] = ((dealt & ~passed) | received).ravel()


def _first_trick(masks: np.ndarray) -> np.ndarray:
    """The lowest set bit's index of each mask, as int8; -1 for an empty mask."""
    lowest = masks & -masks  # two's complement: only the lowest set bit survives
    index = card_counts(lowest - 1).astype(np.int8)
    return np.where(masks == 0, np.int8(-1), index)


def _names(value: str | Iterable[str], argument: str, kind: str) -> list[str]:
    """One name or several, as a list; ``AnalysisError`` unless each is a string."""
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, Iterable) else None
    if names is None or not all(isinstance(name, str) for name in names):
        raise AnalysisError(f"{argument} must be {kind} or a list of them, not {shown(value)}")
    return names


def _stages(stages: str | Iterable[str], argument: str = "stages") -> tuple[str, ...]:
    """Card stages (``dealt``, ``held``, ``received``): one name or several."""
    names = _names(stages, argument, "a card stage")
    for stage in names:
        if stage not in STAGES:
            hint = did_you_mean(stage, STAGES)
            raise AnalysisError(f"unknown card stage {shown(stage)}: choose from {', '.join(STAGES)}{hint}")
    return tuple(names)


def add_features(long: pd.DataFrame, stages: Iterable[str] = ("dealt", "held")) -> pd.DataFrame:
    """``long`` with ``hand_features`` columns for each bitboard stage (``held_hearts``, ...)."""
    parts = [_frame(long)]
    for stage in _stages(stages):
        _require(long, [stage], "add_features")
        parts.append(hand_features(long[stage].to_numpy(), prefix=f"{stage}_").set_axis(long.index))
    return pd.concat(parts, axis=1)


def _long(
    data: pd.DataFrame, by: Sequence[str], reads: Sequence[str], optional: Sequence[str] = ()
) -> pd.DataFrame:
    """``data`` in long format, with any feature column ``by`` names; ``AnalysisError`` when it
    lacks a column the table ``reads``. Wide records are turned long with only the columns the
    table reads, groups by and may use (``optional``): a tenth of the memory of every column."""
    data = _frame(data)
    _check_one_rules(data, by)
    stages = [
        stage
        for stage in STAGES
        if any(c.startswith(f"{stage}_") and c[len(stage) + 1 :] in FEATURES for c in by)
    ]
    wide = not is_long(data)  # a long frame of a few columns too: a table's own, passed on to another
    named = [name for name in (*reads, *by, *optional) if name in LONG_COLUMNS]  # the rest: refused below
    long = to_long(data, columns=[*named, *stages]) if wide else data
    if wide and not all(c in long.columns for c in reads):  # named among all the columns it could have
        _require(to_long(data.iloc[:0]), reads, "this table")
    _require(long, reads, "this table")
    missing = [stage for stage in stages if f"{stage}_hearts" not in long.columns]
    if missing:
        long = add_features(long, missing)
    absent = [c for c in by if c not in long.columns]
    if absent:
        features = [f"{stage}_{feature}" for stage in STAGES for feature in FEATURES]
        have = list(map(str, to_long(data.iloc[:0]).columns if wide else long.columns))  # all it could
        hint = did_you_mean(absent[0], [*have, *features])
        raise AnalysisError(
            f"cannot group by {absent[0]!r}: no such column (have {', '.join(have)}; and the hand "
            f"features of {', '.join(STAGES)} on demand, such as held_hearts){hint}"
        )
    return long


def _check_one_rules(data: pd.DataFrame, by: Sequence[str]) -> None:
    """``AnalysisError`` for records under several rules (``pd.concat`` of two runs) that a table
    would pool: a moon rate over standard hands and ``moon=off`` ones is neither's. Grouped by
    ``rules``, each group is one rules' and the table compares them."""
    if "rules" not in data.columns or "rules" in by:
        return
    names = pd.unique(data["rules"])  # of a category column: the values seen, from its codes
    if len(names) > 1:
        named = "; ".join(sorted(map(str, names)))
        raise AnalysisError(
            f"these records mix rules ({named}): their rates do not pool; group a table by 'rules' "
            "too (by=['agent', 'rules']) or analyse each rules' records apart"
        )


def _keys(by: str | Sequence[str] | None) -> list[str]:
    """``by`` as a list of column names (None: no grouping)."""
    return [] if by is None else _names(by, "by", "a column name")


# ---------------------------------------------------------------------------- counting
def _group_sums(
    long: pd.DataFrame, by: Sequence[str], values: dict[str, Any], rated: str | None = None
) -> pd.DataFrame:
    """Sums of ``values`` per group of ``by``, with plain (not categorical) index values so
    that count tables from different batches add up; an empty ``by`` gives one row ``all``.
    ``rated``: a count of ``values`` whose rate per hand gets an interval (``_with_rate``),
    for which the table also sums what that interval needs of the deals (``_deal_sums``).

    Keys that are categories or small whole numbers (an agent, a pass direction, a count of
    hearts) are summed with one ``np.bincount`` over their codes: ``DataFrame.groupby`` took
    8 of the 13 ms of a table of a 65,536-hand batch, and a report makes a dozen a batch."""
    columns = {name: np.asarray(v, dtype=np.int64) for name, v in values.items()}
    dense = [_dense_codes(long[key]) for key in by]
    coded = [codes for codes in dense if codes is not None]
    counted = len(coded) == len(by) and math.prod(len(levels) for _, levels in coded) <= DENSE_GROUPS
    group = _mixed_radix(coded, len(long)) if counted or not by else None  # each row's, numbered once
    cards = _deal_key(long.columns)  # what the hands of a deal share
    if rated is not None and cards is not None and cards not in by and len(long):
        rows = group if group is not None else _numbered_groups(long, by)
        columns |= _deal_sums(_deal_ids(long), rows, columns["hands"], columns[rated])
    if not by:
        return pd.DataFrame(columns, index=long.index).sum().to_frame("all").T.rename_axis("group")
    if group is not None:  # keys counted densely
        return _bincount_sums(by, coded, columns, group)
    frame = pd.DataFrame(columns, index=long.index)
    for key in by:
        frame[key] = (
            long[key].to_numpy() if not isinstance(long[key].dtype, pd.CategoricalDtype) else long[key]
        )
    sums = frame.groupby(list(by), sort=True, observed=True).sum().reset_index()
    return _plain_keys(sums, by)


DENSE_GROUPS = 1 << 16  # the most groups a table is counted in by bincount
DENSE_DEALS = 1 << 22  # the most (group, deal) pairs counted in arrays instead of by hashing
DEAL_SUMS = ("deals", "rated_sq", "rated_hands", "hands_sq")  # _deal_sums' columns, additive


def _deal_sums(
    deal: np.ndarray, group: np.ndarray, hands: np.ndarray, rated: np.ndarray
) -> dict[str, np.ndarray]:
    """Per row, what makes the sums over a group's rows the group's sums over its deals (n_d
    hands of a deal in the group, k_d of them counted): the number of deals and the sums of
    k_d^2, k_d n_d and n_d^2, from which ``_with_rate`` widens its interval. A row adds its
    k_i and n_i times its deal's totals in the group (sum_i k_i K_d = sum_d k_d^2), and 1 for
    the deal where it is the deal's first row.

    A duplicate run plays each deal in every seating, so its hands are clusters, not independent
    trials: the agent that shoots the moon with a deal's cards in one seating often does in the
    next; and the seats that suffer one moon suffer it together. ``deal`` tells each row's deal
    (``_deal_ids``: its number, the (number, seed) pair of pooled runs, or its hand seed where the
    records have no deal number, the hands of games).
    Additive over batches as long as a deal's hands stay in one batch (a run's chunks are whole
    deals); a deal split by a batch counts as two, which narrows the interval a little."""
    deal = deal.astype(np.int64)
    span = int(deal.max()) - int(deal.min()) + 1  # a batch's deals are a run's few thousand in a row
    if (int(group.max()) + 1) * span <= DENSE_DEALS:
        cluster = group * span + (deal - int(deal.min()))
    else:  # deals of several runs, far apart, or told by their seeds
        codes, distinct = pd.factorize(deal)
        cluster = pd.factorize(group * len(distinct) + codes)[0]
    first = np.full(int(cluster.max()) + 1, len(cluster))
    np.minimum.at(first, cluster, np.arange(len(cluster)))
    deal_hands = np.bincount(cluster, weights=hands)[cluster].astype(np.int64)
    deal_rated = np.bincount(cluster, weights=rated)[cluster].astype(np.int64)
    return {
        "deals": (first[cluster] == np.arange(len(cluster))).astype(np.int64),  # a deal's first row
        "rated_sq": rated * deal_rated,
        "rated_hands": rated * deal_hands,
        "hands_sq": hands * deal_hands,
    }


def _numbered_groups(long: pd.DataFrame, by: Sequence[str]) -> np.ndarray:
    """Each row's group among keys groupby counts (``_group_sums``' other path), numbered; a row
    whose key is missing is in no group: one of its own here, which the sums leave out."""
    numbered = long.groupby(list(by), observed=True).ngroup().to_numpy(dtype=np.float64)
    missing = np.isnan(numbered)
    return np.where(missing, np.nanmax(numbered, initial=-1) + 1, numbered).astype(np.int64)


def _mixed_radix(dense: list[tuple[np.ndarray, pd.Index]], rows: int) -> np.ndarray:
    """Each of ``rows`` rows' group among keys with dense codes, numbered in mixed radix (the
    last key's codes vary fastest; no keys: one group)."""
    group = np.zeros(rows, dtype=np.int64)
    for codes, levels in dense:
        group = group * len(levels) + codes
    return group


def _dense_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index] | None:
    """A key's codes 0 .. n-1 and the value of each (categories, or a range of whole numbers),
    or None where it is empty, has missing values or spans too many numbers to count densely."""
    if not len(column):
        return None
    if isinstance(column.dtype, pd.CategoricalDtype):  # shown as strings, as groupby's are
        codes = column.cat.codes.to_numpy()
        return (codes.astype(np.int64), column.cat.categories.astype(str)) if codes.min() >= 0 else None
    values = column.to_numpy()
    if values.dtype.kind not in "iu" or int(values.max()) - int(values.min()) >= DENSE_GROUPS:
        return None
    low, span = values.min(), np.arange(int(values.max()) - int(values.min()) + 1)
    if values.dtype.kind == "u":  # unsigned differences: a uint64 past 2**63 does not wrap
        return (values - low).astype(np.int64), pd.Index(low + span.astype(values.dtype))
    return values.astype(np.int64) - int(low), pd.Index((span + int(low)).astype(values.dtype))


def _bincount_sums(
    by: Sequence[str],
    dense: list[tuple[np.ndarray, pd.Index]],
    columns: dict[str, np.ndarray],
    group: np.ndarray,
) -> pd.DataFrame:
    """``_group_sums`` of keys with dense codes: each row's group numbered in mixed radix
    (``group``, ``_mixed_radix``), every value summed by ``np.bincount``, and only the groups that
    occur kept, as groupby keeps them."""
    sizes = [len(levels) for _, levels in dense]
    n_groups = math.prod(sizes)
    rows = np.bincount(group, minlength=n_groups)
    seen = np.flatnonzero(rows)
    frame = {
        name: np.bincount(group, weights=v, minlength=n_groups)[seen].round().astype(np.int64)
        for name, v in columns.items()
    }
    place = seen  # each group's codes, the last key's first
    for key, (_, levels), size in reversed(list(zip(by, dense, sizes, strict=True))):
        frame[key] = levels.to_numpy()[place % size]
        place = place // size
    return _plain_keys(pd.DataFrame(frame), by)


def _plain_keys(sums: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """A table of sums with its keys as the index, categories as their strings, sorted."""
    for key in by:
        if isinstance(sums[key].dtype, pd.CategoricalDtype):
            sums[key] = sums[key].astype(str)
    return sums.set_index(list(by)).sort_index(key=_natural_order)


def add_counts(total: pd.DataFrame | None, part: pd.DataFrame) -> pd.DataFrame:
    """The sum of two count tables over the union of their groups (for batch aggregation)."""
    return part if total is None else sum_counts([total, part])


def sum_counts(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The sum of count tables over the union of their groups, in one grouping: for tables whose
    groups grow with the records (one per deal), where adding each batch's to the total so far
    costs the batches times the deals."""
    if len(tables) == 1:
        return tables[0]
    levels = list(range(tables[0].index.nlevels))
    return pd.concat(tables).groupby(level=levels).sum().sort_index(key=_natural_order)


def _natural_order(values: pd.Index) -> pd.Index:
    """Sort key for count tables: pass directions in their cycle order, other values as they are."""
    if values.dtype.kind in "biuf" or not set(values).issubset(PASS_DIRECTIONS):
        return values
    return pd.Index([PASS_DIRECTIONS.index(v) for v in values])


def _with_rate(
    counts: pd.DataFrame, successes: str, trials: str, scale: float, z: float, prefix: str = ""
) -> pd.DataFrame:
    for name, value in (("scale", scale), ("z", z)):
        if not is_real(value) or not 0 < value < math.inf:
            raise AnalysisError(f"{name} must be a number > 0, not {shown(value)}")
    out = counts.copy()
    k, n = out[successes].to_numpy(), out[trials].to_numpy()
    deff = _design_effect(out, k, n) if set(DEAL_SUMS) <= set(out.columns) else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        low, high = wilson_interval(k / deff, n / deff, z)  # the same rate, fewer effective trials
        out[f"{prefix}rate"] = k / n * scale
    out[f"{prefix}low"] = low * scale
    out[f"{prefix}high"] = high * scale
    return out.drop(columns=[c for c in DEAL_SUMS if c in out.columns])


def _design_effect(sums: pd.DataFrame, k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """How many times the variance of a rate k/n over clusters of hands (deals, ``_deal_sums``)
    is the binomial one, at least 1: the ratio estimator's linearised variance, D/(D-1) times
    the sum over deals of (k_d - r n_d)^2 over n^2, against r(1-r)/n (Kish's design effect).
    In ``simulate``'s records a deal is one hand: a moon shot by one seat of it has none above 1,
    a moon suffered by the other seats together has one.

    A group whose rate is 0 or 1, or of one deal, shows no spread to estimate it from: there it is
    the worst case, n over the deals, every hand of a deal moving together (one trial a deal).
    Until 2026-12-07 it was 1, Wilson over every hand: no moon in 60 deals of 28 seat-hands of
    an agent gave an upper bound of 2.3 per 1,000 hands where 60 trials give 60.2, and 600
    simulated 60-deal runs at 6 moons per 1,000 (a moon deal's cards shoot in 7 seatings) were
    covered 79.5% of the time, never where none was seen; 95.2% now."""
    deals = sums["deals"].to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = k / n
        spread = sums["rated_sq"] - 2 * r * sums["rated_hands"] + r * r * sums["hands_sq"]
        clustered = deals / (deals - 1) * spread.to_numpy(dtype=np.float64) / (n * n)
        deff = clustered / (r * (1 - r) / n)
    estimated = (deals > 1) & (k > 0) & (k < n) & np.isfinite(deff)
    return np.maximum(np.where(estimated, deff, n / deals), 1.0)


def _deal_key(columns: Iterable[str]) -> str | None:
    """The column that tells a row's deal, for the rate intervals (``_deal_sums``): ``deal``, or the
    hand ``seed`` of records that have no deal number (the hands of games); None: neither."""
    return next((name for name in ("deal", "seed") if name in columns), None)


def _deal_column(data: pd.DataFrame) -> tuple[str, ...]:
    """The columns of ``data`` that tell a row's deal (``_deal_ids``), as the optional columns to
    read: ``deal`` and ``seed``, or the one of them recorded."""
    columns = _frame(data).columns
    return tuple(name for name in ("deal", "seed") if name in columns)


def _deal_ids(frame: pd.DataFrame) -> np.ndarray:
    """Each row's deal as a whole number, the same for the rows of one deal and different for
    those of two: its ``deal`` number where each number carries one ``seed`` (the deal's own seed,
    the same in every seating: one run's records), else its (deal, seed) pair numbered, so that the
    records of runs pooled with ``pd.concat``, whose deal numbers all start at 0, are not taken
    for one deal (until 2026-12-08 they were: ``deal_differences`` of two 1,500-deal runs gave
    1,500 deals, each of two runs' cards, and the intervals clustered them so). Two runs on the
    same seed dealt the same cards: their hands of a deal are one deal's. The hand ``seed`` alone
    for records without deal numbers (the hands of games); ``deal`` alone without seeds."""
    known = _KNOWN_DEALS.get()
    if known is not None and known[0] is frame:  # a summary's batch, whose tables all need them
        return known[1]
    key = _deal_key(frame.columns)
    assert key is not None
    deal = frame[key].to_numpy()
    if key == "seed" or "seed" not in frame.columns or not len(deal):
        return deal.astype(np.int64)  # a seed past 2**63 wraps round: still one number a deal
    deal = deal.astype(np.int64, copy=False)
    seed = frame["seed"].to_numpy().astype(np.uint64, copy=False)
    if _one_seed_a_deal(deal, seed):
        return deal
    return pd.factorize(pd.MultiIndex.from_arrays([deal, seed]))[0].astype(np.int64)


# the long frame ``RecordSummary`` counts now and its ``_deal_ids``, found once for its dozen tables
_KNOWN_DEALS: contextvars.ContextVar[tuple[pd.DataFrame, np.ndarray] | None] = contextvars.ContextVar(
    "known_deals", default=None
)


def _one_seed_a_deal(deal: np.ndarray, seed: np.ndarray) -> bool:
    """Whether every deal number among ``deal`` comes with one seed: first as a run's rows in
    order have them (each number's rows in one block, the blocks' numbers rising, one seed a
    block: three comparisons of neighbours); else in any order (one seed kept per number, and
    each row's compared with it)."""
    same = deal[1:] == deal[:-1]
    if not ((seed[1:] != seed[:-1]) & same).any():
        firsts = deal[np.r_[0, np.flatnonzero(~same) + 1]]
        if (firsts[1:] > firsts[:-1]).all():
            return True
    low, span = int(deal.min()), int(deal.max()) - int(deal.min()) + 1
    at = deal - low if span <= 4 * len(deal) else pd.factorize(deal)[0]
    seed_of = np.zeros(int(at.max()) + 1, dtype=np.uint64)
    seed_of[at] = seed  # one of each number's seeds: every row's is it where the number has one
    return bool((seed_of[at] == seed).all())


def moon_counts(
    data: pd.DataFrame, by: str | Sequence[str] | None = "agent", per: str = "player"
) -> pd.DataFrame:
    """Trials (``hands``) and ``moons`` per group; additive over batches. See ``moon_rates``. With
    the records' deals (a ``deal`` or ``seed`` column) also ``deals``, ``rated_sq``,
    ``rated_hands`` and ``hands_sq``, the sums over deals the interval needs (``_deal_sums``)."""
    keys = _keys(by)
    reads = ("seat", "shot_moon", "hand") if per == "hand" else ("seat", "shot_moon")
    long = _long(data, keys, reads, optional=_deal_column(data))
    if per == "hand":
        per_seat = [k for k in keys if k in PER_SEAT_COLUMNS or k.startswith(tuple(f"{s}_" for s in STAGES))]
        if per_seat:
            raise AnalysisError(f"per='hand' counts hands, not players: it cannot group by {per_seat[0]!r}")
        # a hand's rows: a block that starts at its seat 0 (or where ``hand`` changes), so that
        # frames concatenated, whose ``hand`` numbers start again at 0, are not taken as one
        hand, seat = long["hand"].to_numpy(dtype=np.int64), long["seat"].to_numpy()
        first = seat == 0
        block = np.cumsum(first | np.r_[True, hand[1:] != hand[:-1]]) - 1
        shot = np.zeros(int(block[-1]) + 1 if len(block) else 0, dtype=bool)  # a moon by any seat
        shot[block[long["shot_moon"].to_numpy(dtype=bool)]] = True
        long = long[first]
        moon = shot[block[first]]
    elif per == "player":
        moon = long["shot_moon"].to_numpy()
    else:
        raise AnalysisError(f"per={shown(per)}: choose 'player' (one trial per seat and hand) or 'hand'")
    return _group_sums(long, keys, {"hands": np.ones(len(long)), "moons": moon}, rated="moons")


def moon_rates(
    data: pd.DataFrame,
    by: str | Sequence[str] | None = "agent",
    *,
    per: str = "player",
    scale: float = 1.0,
    z: float = Z95,
) -> pd.DataFrame:
    """Moon rate per group with its Wilson interval: columns hands, moons, rate, low, high.
    The interval counts each deal's hands as one cluster (``_with_rate``; records with a ``deal``
    or ``seed`` column).

    ``data``: wide records or ``to_long`` output. ``by``: any long-format columns (``agent``
    is the shooter's agent, ``seat``, ``pass_direction``, ``n_players``, ``rules``) or hand
    features such as ``held_hearts`` (computed on demand). ``per="player"``: one trial per
    player and hand (the rate an agent shoots at); ``per="hand"``: one trial per hand, a
    moon by anyone (group by hand-level columns only). ``scale=1000``: per 1,000 hands.
    """
    return _with_rate(moon_counts(data, by, per), "moons", "hands", scale, z)


def check_min_points(min_points: Any, rules: Rules | None = None, name: str = "min_points") -> None:
    """``AnalysisError`` unless ``min_points`` (the points that make a failed moon attempt) is a
    whole number a hand can reach: under ``rules``, or under any rules (43 points, Black Maria's)."""
    most = MAX_POINTS if rules is None else rules.moon_total
    if not is_integer(min_points) or not 1 <= min_points <= most:
        limit = "a hand has" if rules is None else "a hand under these rules has"
        raise AnalysisError(
            f"{name} {shown(min_points)} is not valid: {limit} at most {most} points; choose 1 .. {most}"
        )


def failed_points(rules: Rules | None) -> int:
    """The default raw points of a failed moon attempt under ``rules``: 20 of a 26-point deck's,
    the same share of another (33 of Black Maria's 43); 20 when the rules are not known."""
    return (
        DEFAULT_FAILED_POINTS
        if rules is None
        else round(DEFAULT_FAILED_POINTS * rules.moon_total / POINTS_TOTAL)
    )


def _failed_points(long: pd.DataFrame, min_points: Any) -> int | np.ndarray:
    """``min_points`` checked against the rules of the records (their ``rules`` column: 27 is
    no threshold of a 26-point deck); where it is None, each row's ``failed_points`` of its rules
    (20 of 26, 33 of Black Maria's 43; 20 without the column, or for a row that names none)."""
    codes, named = pd.factorize(long["rules"]) if "rules" in long.columns else (None, [])
    # the rules named, then None for the rows that name none (factorize's code -1 picks the last)
    rules = [*(_parsed_rules(str(name)) for name in named), None]
    if min_points is not None:
        for each in rules:
            check_min_points(min_points, each)
        return int(min_points)
    points = np.array([failed_points(each) for each in rules], dtype=np.int64)
    return points[-1] if codes is None else points[codes]


@functools.lru_cache(maxsize=64)
def _parsed_rules(described: str) -> Rules | None:
    """The rules a ``rules`` column names (``Rules.describe()``); None for one edited by hand."""
    try:
        return Rules.parse(described)
    except RulesError:
        return None


def failed_moon_mask(long: pd.DataFrame, min_points: int | None = None, all_hearts: bool = True) -> Any:
    """Which (hand, seat) rows are failed moon attempts.

    A player failed a moon when it did not shoot but took at least ``min_points`` raw
    points (default ``failed_points`` of the records' rules, their ``rules`` column: 20 of the
    26, QS and 7+ hearts, the hands where only a few point cards escaped; 33 of Black Maria's
    43, the same share, as ``find_hand`` and the report count them, where until 2026-12-07 these
    functions held every deck to 20), or, with ``all_hearts``, took all 13 hearts while someone
    else took the QS (the classic failed moon, only 13 points; 26-point hands only).
    An attempt failed because another seat took points: with ``moon=off`` a seat that took them
    all shot no moon and failed at nothing (where the records say when each trick was won, as
    all made since 2026-12-05 do: ``moon_stopped_trick``), as ``stopping_tricks`` counts them.
    ``long``: records in long format (``to_long``); the mask is a boolean Series on its index.
    """
    long = _frame(long)
    if not is_long(long) and "dealt_0" in long.columns:
        raise AnalysisError("failed_moon_mask marks the rows of long records: pass to_long(records)")
    _require(long, ("points", "hearts_taken", "shot_moon"), "failed_moon_mask")
    return pd.Series(_failed(long, min_points, all_hearts), index=long.index, name="failed_moon")


def _failed(long: pd.DataFrame, min_points: Any, all_hearts: bool) -> np.ndarray:
    """``failed_moon_mask`` as an array (the count tables' columns)."""
    failed = long["points"].to_numpy() >= _failed_points(long, min_points)
    if all_hearts:
        failed = failed | (long["hearts_taken"].to_numpy() == N_RANKS)
    if "moon_stopped_trick" in long.columns:  # -1: no other seat took points (moon=off), nothing stopped it
        failed = failed & (long["moon_stopped_trick"].to_numpy() >= 0)
    return failed & ~long["shot_moon"].to_numpy()


def failed_moon_counts(
    data: pd.DataFrame,
    by: str | Sequence[str] | None = "agent",
    min_points: int | None = None,
    all_hearts: bool = True,
) -> pd.DataFrame:
    """Counts and score sums behind ``failed_moons``; additive over batches."""
    keys = _keys(by)
    optional = ("moon_stopped_trick", "rules", *_deal_column(data))  # where recorded: ``_failed`` reads them
    long = _long(data, keys, ("points", "score", "hearts_taken", "shot_moon"), optional=optional)
    failed = _failed(long, min_points, all_hearts)
    score = long["score"].to_numpy(dtype=np.int64)
    return _group_sums(
        long,
        keys,
        {
            "hands": np.ones(len(long)),
            "moons": long["shot_moon"].to_numpy(),
            "failed": failed,
            "score_sum": score,
            "failed_score_sum": np.where(failed, score, 0),
        },
        rated="failed",
    )


def _failed_table(counts: pd.DataFrame, scale: float, z: float) -> pd.DataFrame:
    out = _with_rate(counts, "failed", "hands", scale, z, prefix="failed_")
    with np.errstate(divide="ignore", invalid="ignore"):
        out["success"] = out["moons"] / (out["moons"] + out["failed"])
        out["mean_score"] = out["score_sum"] / out["hands"]
        out["failed_mean_score"] = out["failed_score_sum"] / out["failed"]
    out["cost"] = out["failed_mean_score"] - out["mean_score"]
    return out.drop(columns=["score_sum", "failed_score_sum"])


def failed_moons(
    data: pd.DataFrame,
    by: str | Sequence[str] | None = "agent",
    *,
    min_points: int | None = None,
    all_hearts: bool = True,
    scale: float = 1.0,
    z: float = Z95,
) -> pd.DataFrame:
    """Failed moon attempts (``failed_moon_mask``) per group and what they cost.

    Columns: hands, moons, failed, failed_rate/low/high (Wilson, times ``scale``),
    ``success`` (moons / (moons + failed attempts)), ``mean_score`` (the typical hand:
    the group's mean final score), ``failed_mean_score`` and ``cost`` (the difference:
    the points a failed attempt costs over a typical hand).
    """
    return _failed_table(failed_moon_counts(data, by, min_points, all_hearts), scale, z)


def suffered_counts(data: pd.DataFrame, by: str | Sequence[str] | None = "agent") -> pd.DataFrame:
    """Counts behind ``moons_suffered``; additive over batches."""
    keys = _keys(by)
    long = _long(data, keys, ("moon_suffered", "score", "points"), optional=("hand", *_deal_column(data)))
    suffered = long["moon_suffered"].to_numpy()
    added = long["score"].to_numpy(dtype=np.int64) - long["points"].to_numpy(dtype=np.int64)
    if "hand" in long.columns and suffered.any():
        # what the moon added, without a jack-of-diamonds bonus (Omnibus: the taker's -10 was
        # counted off the moon's 26): the most any seat that suffered the hand's moon was added
        hand = long["hand"].to_numpy(dtype=np.int64)
        most = np.full(int(hand.max()) + 1, np.iinfo(np.int64).min)
        np.maximum.at(most, hand[suffered], added[suffered])
        added = np.where(suffered, most[hand], added)
    return _group_sums(
        long,
        keys,
        {"hands": np.ones(len(long)), "suffered": suffered, "points_lost": np.where(suffered, added, 0)},
        rated="suffered",
    )


def _suffered_table(counts: pd.DataFrame, scale: float, z: float) -> pd.DataFrame:
    out = _with_rate(counts, "suffered", "hands", scale, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["lost_per_hand"] = out["points_lost"] / out["hands"]
    return out


def moons_suffered(
    data: pd.DataFrame,
    by: str | Sequence[str] | None = "agent",
    *,
    scale: float = 1.0,
    z: float = Z95,
) -> pd.DataFrame:
    """Moons shot against each group by the players of another agent (``moon_suffered``: a copy
    of its own agent at the table is no opponent), and the points they cost it.

    ``points_lost`` sums score minus raw points over the hands such a player shot the
    moon (26 each under ``moon=others_plus``; 0 under ``self_minus``, where only the
    shooter's score moves); ``lost_per_hand`` spreads it over all the group's hands.
    """
    return _suffered_table(suffered_counts(data, by), scale, z)


def distribution_counts(
    data: pd.DataFrame, by: str | Sequence[str] | None = "agent", column: str = "score"
) -> pd.DataFrame:
    """Hands per (group, value of ``column``); additive over batches."""
    keys = _keys(by)
    if not isinstance(column, str):
        raise AnalysisError(f"column must be a column name such as 'score' or 'points', not {shown(column)}")
    long = _long(data, keys, (column,))
    frame = long.assign(**{f"_{column}": long[column]})
    return _group_sums(frame, [*keys, f"_{column}"], {"hands": np.ones(len(long))}).rename_axis(
        index={f"_{column}": column}
    )


def _distribution_table(counts: pd.DataFrame, column: str) -> pd.DataFrame:
    hands = counts["hands"]
    if counts.index.nlevels == 1:
        return (hands / hands.sum()).to_frame("share").T.rename_axis(index="group")
    table = hands.unstack(column, fill_value=0)
    return table.div(table.sum(axis=1), axis=0)


def points_distribution(
    data: pd.DataFrame, by: str | Sequence[str] | None = "agent", column: str = "score"
) -> pd.DataFrame:
    """The share of hands at each value of ``column`` (``score`` or raw ``points``), one row
    per group and one column per value; rows sum to 1."""
    return _distribution_table(distribution_counts(data, by, column), column)


def qs_counts(data: pd.DataFrame, by: str | Sequence[str] | None = "agent") -> pd.DataFrame:
    """Hands and QS captures per group; additive over batches."""
    keys = _keys(by)
    long = _long(data, keys, ("took_qs",), optional=_deal_column(data))
    qs = long["took_qs"].to_numpy()
    return _group_sums(long, keys, {"hands": np.ones(len(long)), "qs": qs}, rated="qs")


def qs_capture_rates(
    data: pd.DataFrame,
    by: str | Sequence[str] | None = "agent",
    *,
    scale: float = 1.0,
    z: float = Z95,
) -> pd.DataFrame:
    """How often a player takes the QS, per group (default: per agent, as the other rate tables;
    ``["agent", "pass_direction"]`` as the report), with Wilson CI. Until 2026-12-07 the default
    was per pass direction alone, where some seat takes it every hand: 1/n in every row."""
    return _with_rate(qs_counts(data, by), "qs", "hands", scale, z)


def _timeline(
    data: pd.DataFrame, keys: Sequence[str], column: str, reads: Sequence[str], optional: Sequence[str] = ()
) -> pd.DataFrame:
    """``data`` in long format with its ``column`` of when things happened and the columns the
    table ``reads``; records made before the tricks' winners were recorded (2026-12-05) are
    refused saying so."""
    long = _long(data, keys, reads, optional=(column, *optional))
    if column not in long.columns:
        raise AnalysisError(
            f"these records do not say when each trick was won (no {column} column): records "
            "made before 2026-12-05 lack it; simulate or play the tournament again to have it"
        )
    return long


def stopping_trick_counts(
    data: pd.DataFrame,
    by: str | Sequence[str] | None = "agent",
    min_points: int | None = None,
    all_hearts: bool = True,
) -> pd.DataFrame:
    """Failed moon attempts per (group, trick that stopped them); additive over batches."""
    keys = _keys(by)
    long = _timeline(data, keys, "moon_stopped_trick", ("points", "hearts_taken", "shot_moon"), ("rules",))
    return distribution_counts(long[_failed(long, min_points, all_hearts)], keys, "moon_stopped_trick")


def stopping_tricks(
    data: pd.DataFrame,
    by: str | Sequence[str] | None = "agent",
    min_points: int | None = None,
    all_hearts: bool = True,
) -> pd.DataFrame:
    """When failed moon attempts (``failed_moon_mask``) were stopped: the share of a group's
    attempts whose first trick taken by another seat with points was trick 0, 1, ... (one column
    per trick, 0-based; rows sum to 1)."""
    counts = stopping_trick_counts(data, by, min_points, all_hearts)
    return _distribution_table(counts, "moon_stopped_trick")


def qs_trick_counts(data: pd.DataFrame, by: str | Sequence[str] | None = "agent") -> pd.DataFrame:
    """Queen of spades captures per (group of the seat that took it, trick); additive over batches."""
    keys = _keys(by)
    long = _timeline(data, keys, "qs_trick", ("took_qs",))
    return distribution_counts(long[long["took_qs"].to_numpy()], keys, "qs_trick")


def qs_tricks(data: pd.DataFrame, by: str | Sequence[str] | None = "agent") -> pd.DataFrame:
    """When the queen of spades fell: the share of each group's captures of it taken in trick 0,
    1, ... (0-based; 0 also when it lay in the kitty; rows sum to 1)."""
    return _distribution_table(qs_trick_counts(data, by), "qs_trick")


def deal_counts(data: pd.DataFrame, column: str = "score") -> pd.DataFrame:
    """The sum and count of ``column`` per (deal, seed, agent), or (deal, agent) for records
    without seeds; additive over batches. The deal's seed tells apart the deals of runs pooled
    with ``pd.concat`` that share a number (every run's start at 0; until 2026-12-08 they were
    summed as one deal); two runs on the same seed dealt the same cards, and their hands of a deal
    are one deal's."""
    data = _frame(data)  # a list raised AttributeError on its .columns
    if not isinstance(column, str):
        raise AnalysisError(f"column must be a column name such as 'score' or 'points', not {shown(column)}")
    if "game_hand" in data.columns and "deal" not in data.columns:
        raise AnalysisError(
            "these are hands of games: the seatings of a game part after its first hand (their totals "
            "differ, and so do their games' lengths), so they are not compared deal by deal"
        )
    long = _long(data, [], ("deal", "agent", column), optional=("seed",))
    return long.groupby([*_deal_levels(long), "agent"], observed=True)[column].agg(["sum", "count"])


def _deal_levels(long: pd.DataFrame) -> list[str]:
    """The columns that key a deal of ``deal_counts``: ``deal`` and, where recorded, ``seed``."""
    return ["deal", "seed"] if "seed" in long.columns else ["deal"]


def _pair_by_deal(counts: pd.DataFrame, a: str, b: str | None, where: str) -> pd.DataFrame:
    """``a``'s and ``b``'s mean per hand in each deal both played, and ``diff`` = a minus b, from
    ``deal_counts`` (indexed as its deals are); ``b`` may be None when there are two agents.
    Unknown names are refused."""
    means = (counts["sum"] / counts["count"]).unstack("agent")
    names = [str(name) for name in means.columns]
    if b is None and len(names) != 2:
        raise AnalysisError(
            f"{where} has {len(names)} agents ({', '.join(names)}): name the one to compare with "
            "(b; hearts-sim replay --against NAME)"
        )
    if b is None:
        b = next((name for name in names if name != a), a)
    for agent in (a, b):
        if not isinstance(agent, str) or agent not in names:
            hint = did_you_mean(agent, names) if isinstance(agent, str) else ""
            raise AnalysisError(f"no agent {shown(agent)} in {where}: it has {', '.join(names)}{hint}")
    if a == b:
        raise AnalysisError(f"deal_differences and worst_deal compare two agents, not {a!r} with itself")
    both = means[[a, b]].dropna()
    return pd.DataFrame({a: both[a], b: both[b], "diff": both[a] - both[b]})


def deal_differences(data: pd.DataFrame, a: str, b: str, column: str = "score") -> pd.DataFrame:
    """Agent ``a`` against ``b`` deal by deal, from duplicate records (a tournament's or a match's):
    each one's mean ``column`` per hand over its seats in the deal's seatings, and ``diff`` = a
    minus b, one row per deal that both played (with its ``pass_direction`` and ``seed``), indexed
    by deal number. The mean of ``diff`` is the match's A minus B; its largest values are the deals
    where ``a`` did worst on the same cards (``worst_deal`` picks the hands to replay).

    Runs pooled (``load_records([A, B])``, or ``pd.concat`` of their records) keep their deals
    apart by seed: their deal numbers all start at 0, so a number may show in several rows, one
    for each run's deal (until 2026-12-08 they were averaged into one, of two runs' cards and
    pass directions). Two runs on the same seed dealt the same cards: a deal of both is one row,
    its means over both runs' hands."""
    optional = ("seed",)
    long = _long(data, [], ("deal", "pass_direction", "agent", column), optional)  # turned long once
    out = _pair_by_deal(deal_counts(long, column), a, b, "these records")
    levels = _deal_levels(long)
    directions = long.groupby(levels, observed=True)["pass_direction"].first()
    out = out.assign(pass_direction=directions.reindex(out.index))
    return out.reset_index("seed") if "seed" in levels else out


# ---------------------------------------------------------------------------- Parquet records
def records_path(path: str | Path) -> Path:
    """The directory of Parquet hand records for a tournament run ``path`` (its ``records/``,
    or the ``hands/`` of a run of games) or for the records directory itself; raises
    ``AnalysisError`` naming what is missing."""
    path = Path(path)
    if not path.exists():
        raise AnalysisError(f"{path} does not exist")
    if not path.is_dir():
        raise AnalysisError(f"{path} is not a directory")
    inside = [path / name for name in (HANDS_DIR, RECORDS_DIR) if (path / name).is_dir()]
    directory = inside[0] if inside else path
    if not any(directory.glob("*.parquet")):
        raise AnalysisError(f"{path} holds no records (no {RECORDS_DIR}/{PART_GLOB} files)")
    return directory


def _run_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of the run whose records are in ``directory`` (or that is ``directory``);
    None when no readable one goes with them."""
    import json

    for manifest in (directory / MANIFEST, directory.parent / MANIFEST):
        if manifest.is_file():
            try:
                read = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            return read if isinstance(read, dict) else None
    return None


def _run_config(directory: Path) -> dict[str, Any] | None:
    """The config of the run whose records are in ``directory`` (or that is ``directory``), from
    its manifest, with its rules as ``Rules``; None when no readable manifest goes with them."""
    try:
        config = dict((_run_manifest(directory) or {})["config"])
        config["rules"] = Rules.from_dict(config["rules"])
        return config
    except (ValueError, KeyError, TypeError):
        return None


def run_rules(directory: Path) -> Rules | None:
    """The rules of the run whose records are in ``directory`` (or that is ``directory``), from
    its manifest; None when no readable manifest goes with the records."""
    config = _run_config(directory)
    return None if config is None else config["rules"]


def pooled_rules(paths: Sequence[str | Path]) -> Rules | None:
    """The rules of the runs whose records are pooled (``RecordSummary.from_records`` of several
    runs, ``hearts-sim report A B``); None when no manifest names them. ``AnalysisError`` for a
    path that holds no records, a run given twice, runs under other rules (their rates do not
    pool) and two runs of the same agents and seed (they played the same hands), told by their
    manifests or, for records without one (a copy of a run's ``records/``), by their first hand."""
    seen: dict[Path, Path] = {}
    runs: list[tuple[Path, dict[str, Any]]] = []
    first_hands: dict[Path, tuple[str | None, tuple[Any, ...]]] = {}  # a run given -> its rules, first hand
    for path in map(Path, paths):
        directory = records_path(path)
        if directory.resolve() in seen:
            given = seen[directory.resolve()]
            raise AnalysisError(f"{path} and {given} are the same run: its hands would count twice")
        seen[directory.resolve()] = path
        config = _run_config(directory)
        if config is not None:
            for other, known in runs:
                if known["rules"] != config["rules"]:
                    raise _different_rules(path, other, config["rules"].label(), known["rules"].label())
                same_seed = config.get("seed") is not None and known.get("seed") == config.get("seed")
                agents, known_agents = config.get("agents") or [], known.get("agents") or []
                if same_seed and sorted(map(str, known_agents)) == sorted(map(str, agents)):
                    order = "" if list(known_agents) == list(agents) else " (in another order)"
                    seed = config.get("seed")
                    raise AnalysisError(
                        f"{path} and {other} are runs of the same agents{order} on seed {seed}: "
                        "they played the same hands, which would count twice (give each run its own --seed)"
                    )
        first = _first_hand(directory)  # what tells records without a manifest apart
        if first is not None:
            rules, hand = first
            for other, (other_rules, other_hand) in first_hands.items():
                if rules and other_rules and rules != other_rules:  # their own rules column, where known
                    raise _different_rules(path, other, rules_label(rules), rules_label(other_rules))
                if hand == other_hand:
                    raise AnalysisError(
                        f"{path} and {other} begin with the same hand, of the same agents (a copy "
                        "of one run's records?): their hands would count twice"
                    )
            first_hands[path] = first
        if config is not None:
            runs.append((path, config))
    return runs[0][1]["rules"] if runs else None


def _different_rules(path: str | Path, other: str | Path, rules: str, other_rules: str) -> AnalysisError:
    return AnalysisError(
        f"{path} and {other} are runs under different rules ({rules}; {other_rules}): their rates do not pool"
    )


def _first_hand(directory: Path) -> tuple[str | None, tuple[Any, ...]] | None:
    """The rules of the first hand of the first part in ``directory`` (its ``rules`` column; None
    for records without one, whose rules are not known) and the hand: its seed and the agents at
    the table (sorted), which two runs share only when they played the same hands; None when
    unreadable (reading the records says why)."""
    import pyarrow.parquet as pq

    parts = sorted(directory.glob("*.parquet"))
    try:
        names = pq.read_schema(arrow_path(parts[0])).names
        agents = [name for name in names if name.startswith("agent_")]
        columns = ["seed", *agents, *(["rules"] if "rules" in names else [])]
        part = pq.ParquetFile(arrow_path(parts[0]))
        first = part.read_row_group(0, columns=columns).slice(0, 1).to_pylist()[0]
        hand = (first["seed"], *sorted(str(first[name]) for name in agents))
        return (str(first["rules"]) if "rules" in first else None), hand
    except Exception:  # pyarrow's errors for a damaged part are many; the readers name them
        return None


def run_parts(directory: Path) -> list[Path]:
    """The Parquet parts to read in a records directory: those its run's manifest counts, each
    verified against the manifest's size and checksum (``AnalysisError`` naming the first that
    does not match); every part there when no manifest goes with the records."""
    import json

    run = run_folder(directory)
    if (run / MANIFEST).exists() and not (run / MANIFEST).is_file():  # its parts were read unverified
        raise AnalysisError(f"{run / MANIFEST} is not a file: the records cannot be checked against it")
    if not (run / MANIFEST).is_file():
        return sorted(directory.glob("*.parquet"))  # not subfolders (a report/ inside)
    try:
        manifest = json.loads((run / MANIFEST).read_text(encoding="utf-8"))
        parts = verified_parts(run, manifest, directory.name if directory.name in PARTS_KEYS else RECORDS_DIR)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise AnalysisError(f"cannot read {run / MANIFEST}: {error}") from None
    except RecordsError as error:
        raise AnalysisError(str(error)) from None
    if (problem := Tally.problem(manifest)) is not None:  # what resume, status and combine refuse
        raise AnalysisError(f"{run / MANIFEST} cannot be trusted: {problem}; {repair_hint(run, manifest)}")
    if not parts:
        raise AnalysisError(f"{run} holds no finished chunk yet (its manifest counts none)")
    note = _unfinished(run, manifest)
    if note is not None:
        warnings.warn(note, UnfinishedRunWarning, stacklevel=3)
    return parts


def unfinished_note(path: str | Path) -> str | None:
    """What to say of records read from a run that is not finished (its manifest counts fewer
    chunks done than planned: stopped, or being written); None for a finished run, or records
    without a manifest."""
    import json

    run = run_folder(records_path(path))
    try:
        manifest = json.loads((run / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return _unfinished(run, manifest)


def _unfinished(run: Path, manifest: Any) -> str | None:
    """``unfinished_note`` of the run in ``run`` with this manifest (as read)."""
    done, total = (
        (manifest.get("chunks_done"), manifest.get("chunks_total"))
        if isinstance(manifest, dict)
        else (None, None)
    )
    if not (is_integer(done) and is_integer(total)) or done >= total:
        return None
    return (
        f"{run} is not finished: its manifest counts {done:,} of {total:,} chunks, and these are "
        f"their hands only (hearts-sim status {shell_path(run)} says whether it is being written, or how "
        "to resume it)"
    )


def _dataset(path: str | Path, batch_size: int = DEFAULT_BATCH) -> tuple[Any, Path]:
    """The pyarrow dataset of a run's verified parts (the columns every part has) and its
    records directory; ``batch_size`` is checked first, before any part is read."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if not is_integer(batch_size) or not 1 <= batch_size <= MAX_BATCH:
        raise AnalysisError(
            f"batch_size must be a whole number of rows in 1 .. {MAX_BATCH:,}, not {shown(batch_size)}"
        )

    directory = records_path(path)
    parts = [arrow_path(part) for part in run_parts(directory)]
    dataset = ds.dataset(parts, format="parquet")
    # a run resumed by a later version holds parts with more columns: read the ones all parts have
    shared = set.intersection(*(set(part.physical_schema.names) for part in dataset.get_fragments()))
    if len(shared) < len(dataset.schema.names):
        schema = pa.schema([column for column in dataset.schema if column.name in shared])
        dataset = ds.dataset(parts, format="parquet", schema=schema)
    return dataset, directory


def iter_records(
    path: str | Path,
    columns: Sequence[str] | None = None,
    batch_size: int = DEFAULT_BATCH,
    *,
    every_column: bool = False,
) -> Iterator[pd.DataFrame]:
    """The wide hand records of a tournament directory as DataFrames of at most
    ``batch_size`` rows, reading only ``columns`` (default: those ``to_long`` needs;
    ``every_column``: all the records hold), so a run of millions of hands is analysed in
    bounded memory. A ``rules`` column is added from the manifest when the records do not carry
    one."""
    dataset, directory = _hand_dataset(path, batch_size)
    names = set(dataset.schema.names)
    n = sum(1 for name in names if name.startswith("dealt_"))
    if every_column:
        wanted = list(dataset.schema.names)
    elif columns is None:
        wanted = long_columns(n)  # those of its optional fields the records lack are not read
    else:
        wanted = _names(columns, "columns", "a column name")
        unknown = [c for c in wanted if c not in names and c != "rules"]  # rules: from the manifest
        if unknown:
            have = ", ".join(dataset.schema.names)
            raise AnalysisError(f"{path}'s records have no column {shown(unknown[0])} (they have {have})")
    read = [c for c in wanted if c in names]
    yield from _frames(dataset, directory, read, "rules" in wanted, batch_size)


def _reading_bar(
    runs: Sequence[str | Path], batch_size: int, progress: bool | None, desc: str = "reading"
) -> tqdm:
    """A bar of the hands read from ``runs``' records, out of all they hold, drawn where
    ``progress`` says or, when None, where someone watches (``progress_shown``: a terminal or a
    notebook): a scan of millions of hands reads for a minute or more (``worst_deal``: about 5 s
    a million hands, silent until 2026-12-07)."""
    shown = progress_shown(progress)
    total = sum(_dataset(path, batch_size)[0].count_rows() for path in runs) if shown else None
    return tqdm(total=total, unit="hand", desc=desc, disable=not shown, leave=False)


def _hand_dataset(path: str | Path, batch_size: int = DEFAULT_BATCH) -> tuple[Any, Path]:
    """``_dataset`` of per-hand records; game records (one row per game) are refused."""
    dataset, directory = _dataset(path, batch_size)
    if "dealt_0" not in dataset.schema.names:
        raise AnalysisError(
            f"{path} holds game records (from --games), not per-hand records: {_hands_of(directory)}"
        )
    return dataset, directory


def _hands_of(directory: Path) -> str:
    """Where the hands of the run of games whose game records are in ``directory`` are, or how to
    get them: a run made before 2026-12-05 kept none, and was told only that later runs do."""
    run = directory.parent if directory.name == RECORDS_DIR else directory
    if (run / HANDS_DIR).is_dir():
        return f"its run's {HANDS_DIR}/ holds every hand of its games"
    return (
        f"this run of games kept no hands of them (runs made before 2026-12-05 did not); "
        f"hearts-sim tournament --resume {shell_path(run)} --repair plays it again with them"
    )


def _frames(
    dataset: Any, directory: Path, read: list[str], rules: bool, batch_size: int, where: Any = None
) -> Iterator[pd.DataFrame]:
    """The columns ``read`` of a run's dataset as DataFrames, with a ``rules`` column from the
    manifest when ``rules`` is asked for and the records lack one; ``where``: a pyarrow filter
    (the parts' statistics skip those that cannot match).

    The parts are read one after the other, in order, each by this thread as its batches are
    asked for. pyarrow's scanner over the whole dataset reads ahead without bound while its
    reader is busy: a report of 9.6 million hands held all 147 parts decoded at once (1.8 GB at
    its peak, against 0.48 GB read a part at a time, in the same 36 s).

    Small parts are gathered into frames of up to ``batch_size`` rows: a search agent's run is
    parts of 56 hands, and every analysis pays a fixed cost a frame (a report of 250 such parts,
    14,000 hands, took 20 s, five times one of 10,000 hands in one part)."""
    import pyarrow as pa

    known = run_rules(directory) if rules and "rules" not in dataset.schema.names else None

    def frame_of(batches: list[pa.RecordBatch]) -> pd.DataFrame:
        frame = (pa.Table.from_batches(batches) if len(batches) > 1 else batches[0]).to_pandas()
        if known is not None:
            frame["rules"] = pd.Categorical([known.describe()] * len(frame))
        return frame

    pending: list[pa.RecordBatch] = []
    rows = 0
    for part in dataset.get_fragments(filter=where):
        batches = part.to_batches(schema=dataset.schema, columns=read, batch_size=batch_size, filter=where)
        for batch in batches:
            if pending and rows + batch.num_rows > batch_size:
                yield frame_of(pending)
                pending, rows = [], 0
            pending.append(batch)
            rows += batch.num_rows
    if pending:
        yield frame_of(pending)


def _run_paths(paths: Any) -> list[str | Path]:
    """One run directory or several, as a list; ``AnalysisError`` for none, or for a path that is
    not a ``str`` or ``Path``."""
    runs = [paths] if isinstance(paths, (str, Path)) else list(paths) if isinstance(paths, Iterable) else None
    if runs is None or not all(isinstance(run, (str, Path)) for run in runs):
        raise AnalysisError(f"name a run directory (a str or Path) or a list of them, not {shown(paths)}")
    if not runs:
        raise AnalysisError("no run given: name at least one run directory")
    return runs


def load_records(
    paths: str | Path | Sequence[str | Path], columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """All the hand records of a tournament directory in memory (for small runs): every column,
    or ``columns``. A row of it can be replayed (``replay``).

    A list of runs pools them, as ``RecordSummary.from_records`` and ``hearts-sim report A B``
    do: runs on other seeds, or of other agents under the same rules, one after the other in
    the order given (their deals told apart by number and seed, ``deal_differences``), with the
    columns every run has (a run made before a column was recorded lacks it). Runs under other
    rules, a run named twice and two runs of the same agents on one seed (the same hands) are
    refused (``pooled_rules``), as are hands of games with single deals. Until 2026-12-08 a list
    raised a ``TypeError``, and ``pd.concat`` of the runs' records was the way to pool them."""
    runs = _run_paths(paths)
    if len(runs) > 1:
        pooled_rules(runs)
    frames = [_load_run(path, columns) for path in runs]
    frame = frames[0] if len(frames) == 1 else _pooled_frames(runs, frames)
    del frames
    return frame


def _pooled_frames(runs: Sequence[str | Path], frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The records of several runs one after the other, with the columns all of them have;
    ``AnalysisError`` for hands of games beside single deals, whose columns differ in kind."""
    games = [path for path, frame in zip(runs, frames, strict=True) if "game_hand" in frame.columns]
    if games and len(games) < len(runs):
        single = next(path for path in runs if path not in games)
        raise AnalysisError(
            f"{games[0]} holds hands of games and {single} single deals: they do not pool "
            "(load and analyse each apart)"
        )
    shared = set.intersection(*(set(frame.columns) for frame in frames))
    kept = [name for name in frames[0].columns if name in shared]
    return _as_categories(pd.concat([frame[kept] for frame in frames], ignore_index=True))


def _as_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its agents, rules and pass directions as categories again (in place), which
    a concatenation of parts or runs with other category sets makes plain text: ``object`` under
    pandas 2, the ``str`` dtype under pandas 3 (where it was left so until 2026-12-08)."""
    for column in frame.columns:
        if column.startswith(("agent_", "rules", "pass_direction")) and not isinstance(
            frame[column].dtype, pd.CategoricalDtype
        ):
            frame[column] = frame[column].astype("category")
    return frame


def _load_run(path: str | Path, columns: Sequence[str] | None) -> pd.DataFrame:
    """``load_records`` of one run."""
    import pyarrow as pa

    parts = list(iter_records(path, columns, every_column=columns is None))
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    del parts
    _as_categories(frame)  # batches may have different category sets
    # pyarrow's allocator keeps the decoded batches' memory for reuse: 609 MB resident after
    # reading 1.4 million hands (a 173 MB frame), 397 MB once it is handed back
    pa.default_memory_pool().release_unused()
    return frame


@dataclass(frozen=True)
class FoundHand:
    """A hand picked from a run by ``find_hand``: its record row, its position among the run's
    rows, and the seat that shot the moon or failed at it (None for a row asked by number)."""

    row: pd.Series
    index: int
    seat: int | None

    def __repr__(self) -> str:  # the dataclass's printed the whole record row: 39 lines a hand
        seat = "" if self.seat is None else f", seat {self.seat}"
        return f"<FoundHand row {self.index}{seat}, seed {self.row.get('seed')}: replay(found.row) shows it>"


def _check_agents_named(path: str | Path, names: Iterable[str | None]) -> None:
    """Refuse, before a batch is read, a name that the run's manifest does not list among its
    agents (a misspelt ``--agent rul`` read all 9.6 million hands, 19 s, before its refusal);
    records without a manifest are checked as they are read."""
    agents = (_run_manifest(records_path(path)) or {}).get("agent_specs")
    if not (isinstance(agents, list) and all(isinstance(a, str) for a in agents)):
        return
    for name in names:
        if name is not None and name not in agents:
            hint = did_you_mean(name, sorted(agents)) if isinstance(name, str) else ""
            raise AnalysisError(f"no agent {shown(name)} in {path}: it has {', '.join(sorted(agents))}{hint}")


def find_hand(
    path: str | Path,
    *,
    row: int | None = None,
    moon: bool = False,
    failed: bool = False,
    agent: str | None = None,
    nth: int = 1,
    min_points: int | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: bool | None = None,
) -> FoundHand:
    """One hand of a run's records, read batch by batch (a million-hand run is not loaded):
    row number ``row`` (0-based, as ``load_records`` numbers them; only the part that holds it is
    read), or the ``nth`` hand in which
    the moon was shot (``moon``) or an attempt failed (``failed``, ``failed_moon_mask`` with
    ``min_points``), by ``agent``'s seat when given; ``progress``: ``_reading_bar``'s.
    ``replay(found.row)`` plays it again."""
    if (row is not None) + moon + failed != 1:
        raise AnalysisError("say which hand: a row number, or the moon shots, or the failed attempts")
    if row is not None and (not is_integer(row) or row < 0):
        raise AnalysisError(f"row must be a whole number >= 0, not {shown(row)}")
    if not is_integer(nth) or nth < 1:
        raise AnalysisError(f"nth must be a whole number >= 1, not {shown(nth)}")
    if agent is not None and row is not None:
        raise AnalysisError("an agent picks among the moon shots or the failed attempts, not a row number")
    if row is not None:
        return FoundHand(_record_row(path, row, batch_size), row, None)
    _check_agents_named(path, [agent])
    if failed:
        rules = run_rules(records_path(path))
        min_points = failed_points(rules) if min_points is None else min_points
        check_min_points(min_points, rules)
    seen, found, agents = 0, 0, set[str]()
    with _reading_bar([path], batch_size, progress) as bar:
        for batch in iter_records(path, batch_size=batch_size, every_column=True):
            bar.update(len(batch))
            long = to_long(batch)
            agents.update(str(a) for a in long["agent"].cat.categories)
            picked = long["shot_moon"].to_numpy() if moon else _failed(long, min_points, True)
            if agent is not None:
                picked = picked & (long["agent"].astype(str).to_numpy() == agent)
            hits = long[picked]
            if found + len(hits) >= nth:
                hit = hits.iloc[nth - found - 1]
                hand = int(hit["hand"])
                return FoundHand(batch.iloc[hand], seen + hand, int(hit["seat"]))
            found += len(hits)
            seen += len(batch)
    if agent is not None and agent not in agents:
        hint = did_you_mean(agent, sorted(agents))
        raise AnalysisError(f"no agent {shown(agent)} in {path}: it has {', '.join(sorted(agents))}{hint}")
    what = "moon shots" if moon else f"failed moon attempts (at least {min_points} points or all hearts)"
    by = f" by {agent}" if agent is not None else ""
    raise AnalysisError(f"the {seen:,} hands of {path} hold {found:,} {what}{by}, not {nth:,}")


def _record_row(path: str | Path, row: int, batch_size: int) -> pd.Series:
    """Row ``row`` of a run's hand records, numbered as ``load_records`` numbers them: the parts'
    row counts (their footers) say which part holds it, and that part alone is read (every part
    before it was read whole, 0.3 s for the last row of 1.4 million hands)."""
    dataset, _ = _hand_dataset(path, batch_size)
    seen = 0
    for part in dataset.get_fragments():
        count = part.count_rows()
        if row < seen + count:
            table = part.scanner(schema=dataset.schema, batch_size=batch_size).take([row - seen])
            found: pd.Series = table.to_pandas().iloc[0]
            return found.rename(row)
        seen += count
    raise AnalysisError(f"{path} holds {seen:,} hands (rows 0 .. {seen - 1:,}): there is no row {row:,}")


def game_rows(path: str | Path, game: int, seating: int = 0, batch_size: int = DEFAULT_BATCH) -> pd.DataFrame:
    """Every hand of game ``game`` in seating ``seating`` of a run of games (its ``hands/``), in
    the order they were played, read from the parts that can hold it; ``replay`` plays any of
    them again."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    for value, name in ((game, "game"), (seating, "seating")):
        if not is_integer(value) or value < 0:
            raise AnalysisError(f"{name} must be a whole number >= 0, not {shown(value)}")
    dataset, directory = _dataset(path, batch_size)
    names = list(dataset.schema.names)
    if "game_hand" not in names:
        if "dealt_0" not in names:
            kind = "game records (one row per game), not the hands of games"
            raise AnalysisError(f"{path} holds {kind}: {_hands_of(directory)}")
        raise AnalysisError(
            f"{path} holds hands of single deals, not the hands of games (a --games run's hands/)"
        )
    where = (ds.field("game") == int(game)) & (ds.field("seating") == int(seating))
    found = list(_frames(dataset, directory, names, True, batch_size, where))
    if not found or sum(map(len, found)) == 0:
        keys = dataset.to_table(columns=["game", "seating"])
        held = f"games 0 .. {pc.max(keys['game']).as_py():,}, seatings 0 .. {pc.max(keys['seating']).as_py()}"
        raise AnalysisError(f"{path} holds no game {game:,} in seating {seating}: it holds {held}")
    rows = pd.concat(found, ignore_index=True) if len(found) > 1 else found[0]
    return rows.sort_values("game_hand", kind="stable").reset_index(drop=True)


def game_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """A game hand by hand (``game_rows``): the hand (from 1), its pass, each seat's score in it
    and its total after it, and who shot the moon (-1: nobody)."""
    rows = _frame(rows)
    n = n_seats(rows)
    _require(rows, ["game_hand", "moon_shooter", *(f"game_score_{s}" for s in range(n))], "game_summary")
    table: dict[str, Any] = {"hand": rows["game_hand"].to_numpy() + 1}
    if "pass_direction" in rows.columns:
        table["pass"] = rows["pass_direction"].astype(str).to_numpy()
    for s in range(n):
        table[f"score_{s}"] = rows[f"score_{s}"].to_numpy()
    for s in range(n):
        table[f"total_{s}"] = rows[f"game_score_{s}"].to_numpy() + rows[f"score_{s}"].to_numpy()
    table["moon"] = rows["moon_shooter"].to_numpy()
    return pd.DataFrame(table)


@dataclass(frozen=True)
class DealComparison:
    """A deal of a duplicate run where agent ``a`` did worse than ``b`` on the same cards
    (``worst_deal``): both agents' mean score per hand in it, its rank among the run's deals,
    the seat-hand where ``a`` scored most, and the same seat's cards played by ``b``."""

    deal: int
    pass_direction: str
    a: str
    b: str
    means: tuple[float, float]
    rank: int
    deals: int
    a_hand: FoundHand
    b_hand: FoundHand

    def __repr__(self) -> str:  # the dataclass's printed both record rows: 78 lines
        (a_mean, b_mean), rank = self.means, f"{self.rank} of {self.deals:,}"
        return (
            f"<DealComparison deal {self.deal} ({self.pass_direction}, rank {rank}): "
            f"{self.a} {a_mean:.2f} vs {self.b} {b_mean:.2f} points/hand>"
        )


def worst_deal(
    path: str | Path,
    a: str,
    b: str | None = None,
    nth: int = 1,
    batch_size: int = DEFAULT_BATCH,
    progress: bool | None = None,
) -> DealComparison:
    """The ``nth`` deal of a run in which ``a`` scored most above ``b`` per hand
    (``deal_differences``; ``b`` may be left out when the run has two agents), read in two
    passes over the records' batches: the sums per deal, then that deal's rows (``progress``:
    ``_reading_bar``'s, of the first)."""
    if not is_integer(nth) or nth < 1:
        raise AnalysisError(f"nth must be a whole number >= 1, not {shown(nth)}")
    _check_agents_named(path, [a, b])
    sums = []
    with _reading_bar([path], batch_size, progress) as bar:
        for batch in iter_records(path, batch_size=batch_size):
            sums.append(deal_counts(batch))
            bar.update(len(batch))
    counts = sum_counts(sums)
    pair = _pair_by_deal(counts, a, b, str(path))
    b = str(pair.columns[1])
    order = pair["diff"].sort_values(ascending=False, kind="stable")
    if nth > len(order):
        raise AnalysisError(f"{path} holds {len(order):,} deals that {a} and {b} both played, not {nth:,}")
    key = order.index[nth - 1]  # (deal, seed), or the deal of records without seeds
    deal = int(key[0] if isinstance(key, tuple) else key)  # a run's deal numbers tell its deals
    rows, first = _deal_rows(path, deal, batch_size, progress)
    long = to_long(rows)
    theirs = long[long["agent"] == a]
    worst = theirs.loc[theirs["score"].idxmax()]  # the first of the highest scores
    seat = int(worst["seat"])
    same = long[(long["agent"] == b) & (long["seat"] == seat)]
    if same.empty:  # seatings in which b never holds that seat: its first seat-hand of the deal
        same = long[long["agent"] == b]
    other = same.iloc[0]

    def found(hit: pd.Series) -> FoundHand:
        return FoundHand(rows.iloc[int(hit["hand"])], first + int(hit["hand"]), int(hit["seat"]))

    direction = str(rows["pass_direction"].iloc[0]) if "pass_direction" in rows.columns else "?"
    return DealComparison(
        deal,
        direction,
        a,
        b,
        (float(pair.loc[key, a]), float(pair.loc[key, b])),
        nth,
        len(order),
        found(worst),
        found(other),
    )


def _deal_rows(
    path: str | Path, deal: int, batch_size: int, progress: bool | None
) -> tuple[pd.DataFrame, int]:
    """Every record row of ``deal`` (all columns), and the run's row number of the first."""
    parts, first, seen = [], None, 0
    with _reading_bar([path], batch_size, progress, f"finding deal {deal}") as bar:
        for batch in iter_records(path, batch_size=batch_size, every_column=True):
            bar.update(len(batch))
            at = np.flatnonzero(batch["deal"].to_numpy() == deal)
            if len(at):
                first = seen + int(at[0]) if first is None else first
                parts.append(batch.iloc[at])
            elif parts:  # a deal's rows are contiguous: past them
                break
            seen += len(batch)
    assert first is not None
    return pd.concat(parts, ignore_index=True), first


# ---------------------------------------------------------------------------- one-pass summary
Counter = Callable[[pd.DataFrame], pd.DataFrame]


def _deal_batches(records: pd.DataFrame, size: int) -> Iterator[pd.DataFrame]:
    """``records`` in slices of about ``size`` rows, each cut where a deal ends (``_deal_key``),
    so that a deal's hands stay in one slice as they do in a run's batches (``_deal_sums``). The
    hands of games are cut where a game ends: a deal (a hand seed) is that hand of the game in
    every seating, rows apart."""
    if len(records) <= size:
        yield records
        return
    targets = np.arange(size, len(records), size)
    key = "game" if "game" in records.columns else _deal_key(records.columns)
    cuts = targets
    if key is not None:
        deal = records[key].to_numpy()
        starts = np.flatnonzero(deal[1:] != deal[:-1]) + 1  # where a deal begins
        if len(starts):
            cuts = np.unique(starts[np.minimum(np.searchsorted(starts, targets), len(starts) - 1)])
    bounds = [0, *cuts.tolist(), len(records)]
    for low, high in zip(bounds, bounds[1:], strict=False):
        if high > low:
            yield records.iloc[low:high]


@dataclass
class RecordSummary:
    """The count tables behind the moon-shot report, accumulated batch by batch.

    ``add(records)`` folds in a DataFrame of wide records; ``from_records(path)`` streams a
    tournament's Parquet records through it; ``from_frame(df)`` does it in memory. The
    methods turn the counts into the tables of the functions above.
    """

    min_points: int | None = None  # None: ``failed_points`` of the records' rules (``failed_moon_mask``)
    all_hearts: bool = True
    hands: int = 0
    timeline_hands: int = 0  # of ``hands``, those whose records say when each trick was won
    game_hands: int = 0  # of ``hands``, those of games (which say where each seat stood)
    counts: dict[str, pd.DataFrame] = field(default_factory=dict)
    rules: set[str] = field(default_factory=set)
    n_players: int = 0  # of the hands added (0: none yet)

    def __post_init__(self) -> None:
        if self.min_points is not None:
            check_min_points(self.min_points)
        if not isinstance(self.all_hearts, bool):
            raise AnalysisError(f"all_hearts must be True or False, not {shown(self.all_hearts)}")

    def __repr__(self) -> str:  # not every count table (a notebook cell ending in one filled the screen)
        agents = ", ".join(self.agents) if self.counts else "none yet"
        rules = "; ".join(sorted(map(rules_label, self.rules))) or "not recorded"
        return f"RecordSummary({self.hands:,} hands; agents: {agents}; rules: {rules})"

    def counters(self) -> dict[str, Counter]:
        """Each count table's name and how a batch of long records is counted into it."""
        return {
            "moons": lambda long: moon_counts(long, "agent"),
            "moons_by_direction": lambda long: moon_counts(long, ["agent", "pass_direction"]),
            "moons_by_seat": lambda long: moon_counts(long, ["agent", "seat"]),
            "moons_by_hearts": lambda long: moon_counts(long, ["agent", "held_hearts"]),
            "moons_by_high_hearts": lambda long: moon_counts(long, ["agent", "held_high_hearts"]),
            "moons_by_dealt_hearts": lambda long: moon_counts(long, ["agent", "dealt_hearts"]),
            "failed": lambda long: failed_moon_counts(long, "agent", self.min_points, self.all_hearts),
            "suffered": lambda long: suffered_counts(long, "agent"),
            "scores": lambda long: distribution_counts(long, "agent", "score"),
            "qs": lambda long: qs_counts(long, ["agent", "pass_direction"]),
            "stopping_tricks": lambda long: stopping_trick_counts(
                long, "agent", self.min_points, self.all_hearts
            ),
            "qs_tricks": lambda long: qs_trick_counts(long, "agent"),
            "moons_by_game_place": lambda long: moon_counts(long, ["agent", "game_place"]),
            "failed_by_game_place": lambda long: failed_moon_counts(
                long, ["agent", "game_place"], self.min_points, self.all_hearts
            ),
        }

    def add(self, records: pd.DataFrame) -> None:
        """Fold in wide per-hand records: of the same number of players and the same rules as
        those added before (``AnalysisError`` otherwise: their rates do not pool). A large frame
        is counted ``DEFAULT_BATCH`` rows at a time, each cut where a deal ends, as
        ``from_records`` reads a run: 2.9 million hands at once took twice the time and 2.8 GB
        more (until 2026-12-07)."""
        records = _frame(records)
        if len(records) == 0:
            return
        n, rules = self._pooled(records)
        for batch in _deal_batches(records, DEFAULT_BATCH):
            self._count(batch)
        self.n_players = n
        self.rules.update(rules)

    def _pooled(self, records: pd.DataFrame) -> tuple[int, set[str]]:
        """The players and rules of ``records``, refused where they do not pool with the summary's."""
        n = n_seats(records)
        if self.n_players and n != self.n_players:
            raise AnalysisError(
                f"these records are of {n} players and the summary's of {self.n_players}: "
                "their rates do not pool (make a summary for each)"
            )
        rules = set(map(str, pd.unique(records["rules"].astype(str)))) if "rules" in records else set()
        if len(self.rules | rules) > 1:
            named = "; ".join(sorted(self.rules | rules))
            raise AnalysisError(
                f"these records are under other rules than the summary's ({named}): "
                "their rates do not pool (make a summary for each)"
            )
        return n, rules

    def _count(self, records: pd.DataFrame) -> None:
        long = to_long(records, features=("dealt", "held"))
        self.hands += len(records)
        timeline = "qs_trick" in long.columns  # not in records made before 2026-12-05
        self.timeline_hands += len(records) if timeline else 0
        in_games = "game_place" in long.columns
        self.game_hands += len(records) if in_games else 0
        deals = _deal_ids(long) if len(long) and _deal_key(long.columns) is not None else None
        known = _KNOWN_DEALS.set(None if deals is None else (long, deals))
        try:
            for name, count in self.counters().items():
                if (timeline or name not in TIMELINE_TABLES) and (in_games or name not in GAME_TABLES):
                    self.counts[name] = add_counts(self.counts.get(name), count(long))
        finally:
            _KNOWN_DEALS.reset(known)

    @classmethod
    def from_frame(cls, records: pd.DataFrame, **options: Any) -> RecordSummary:
        summary = cls.with_options(**options)
        summary.add(records)
        return summary

    @classmethod
    def with_options(cls, **options: Any) -> RecordSummary:
        """An empty summary counting failed attempts as ``options`` say (``min_points``,
        ``all_hearts``); ``AnalysisError`` for any other name."""
        allowed = ("min_points", "all_hearts")
        for name in options:
            if name not in allowed:
                raise AnalysisError(
                    f"unknown option {name!r}: choose {' or '.join(allowed)}{did_you_mean(name, allowed)}"
                )
        return cls(**options)

    @classmethod
    def from_records(
        cls,
        paths: str | Path | Sequence[str | Path],
        batch_size: int = DEFAULT_BATCH,
        progress: bool | None = None,
        **options: Any,
    ) -> RecordSummary:
        """Stream the records of one run, or pool several (runs on other seeds, or of other
        agents under the same rules; ``pooled_rules`` says which pool); ``progress``: a bar of the
        hands read (None, the default: where someone watches, ``progress_shown``, as ``report``
        and ``simulate`` draw theirs; until 2026-12-07 none unless asked, and a notebook's
        9.6-million-hand summary read for 40 s without a word)."""
        runs = _run_paths(paths)
        if len(runs) > 1:
            pooled_rules(runs)
        summary = cls.with_options(**options)
        with _reading_bar(runs, batch_size, progress) as bar:
            for path in runs:  # 9.6 million hands took 40 s without a word
                for batch in iter_records(path, batch_size=batch_size):
                    summary.add(batch)
                    bar.update(len(batch))
        if summary.hands == 0:
            raise AnalysisError(f"{', '.join(map(str, runs))} holds no hands")
        return summary

    def _counts(self, name: str) -> pd.DataFrame:
        if not self.counts:
            raise AnalysisError("no records added yet")
        if name in GAME_TABLES and not self.in_games:
            raise AnalysisError(
                f"only {self.game_hands:,} of these {self.hands:,} hands are hands of games: "
                f"no table {name} (read the hands/ of a --games run, or simulate_games(hands=True))"
            )
        return self.counts[name]

    def moon_rates(self, table: str = "moons", scale: float = 1000.0) -> pd.DataFrame:
        """``moon_rates`` of one of the moon tables (``moons``, ``moons_by_direction``, ...)."""
        tables = [name for name in self.counters() if name.startswith("moons")]
        if table not in tables:
            hint = did_you_mean(table, tables)
            raise AnalysisError(f"unknown moon table {shown(table)}: choose from {', '.join(tables)}{hint}")
        return _with_rate(self._counts(table), "moons", "hands", scale, Z95)

    def failed_moons(self, scale: float = 1000.0, table: str = "failed") -> pd.DataFrame:
        """``failed_moons`` by agent (``failed``), or by agent and place in the game
        (``failed_by_game_place``, hands of games only)."""
        if table not in ("failed", "failed_by_game_place"):
            raise AnalysisError(
                f"unknown failed-attempt table {shown(table)}: choose failed or failed_by_game_place"
            )
        return _failed_table(self._counts(table), scale, Z95)

    def moons_suffered(self, scale: float = 1000.0) -> pd.DataFrame:
        """``moons_suffered`` by agent: moons shot against it per ``scale`` hands, and their cost."""
        return _suffered_table(self._counts("suffered"), scale, Z95)

    def points_distribution(self) -> pd.DataFrame:
        """``points_distribution`` by agent: the share of its hands at each score."""
        return _distribution_table(self._counts("scores"), "score")

    def qs_capture_rates(self) -> pd.DataFrame:
        """``qs_capture_rates`` by agent and pass direction: the share of hands it took the queen in."""
        return _with_rate(self._counts("qs"), "qs", "hands", 1.0, Z95)

    @property
    def failed_min_points(self) -> int:
        """The raw points of a failed attempt its tables count: ``min_points``, or where that is
        None ``failed_points`` of the rules of the records added (20 before any, or of several)."""
        if self.min_points is not None:
            return self.min_points
        named = [_parsed_rules(name) for name in self.rules]
        return failed_points(named[0] if len(named) == 1 else None)

    @property
    def has_timeline(self) -> bool:
        """Whether every hand added said when each trick was won (records made since 2026-12-05)."""
        return 0 < self.timeline_hands == self.hands

    @property
    def in_games(self) -> bool:
        """Whether every hand added was a hand of a game (so it says where each seat stood)."""
        return 0 < self.game_hands == self.hands

    def _timeline_counts(self, name: str) -> pd.DataFrame:
        if self.hands and not self.has_timeline:
            raise AnalysisError(
                f"only {self.timeline_hands:,} of these {self.hands:,} hands say when each trick was "
                "won (records made before 2026-12-05 do not): no table of when"
            )
        return self._counts(name)

    def stopping_tricks(self) -> pd.DataFrame:
        """``stopping_tricks`` by agent: the share of its failed attempts stopped at each trick."""
        return _distribution_table(self._timeline_counts("stopping_tricks"), "moon_stopped_trick")

    def qs_tricks(self) -> pd.DataFrame:
        """``qs_tricks`` by agent: the share of its captures of the queen taken at each trick."""
        return _distribution_table(self._timeline_counts("qs_tricks"), "qs_trick")

    @property
    def agents(self) -> list[str]:
        """The agents the records added so far name, in the tables' order."""
        return [str(a) for a in self._counts("moons").index]


def thousand_decimals(low: Any, high: Any) -> int:
    """The decimals a column of rates per 1,000 shows, so that its narrowest interval shows: 1,
    or 2 or 3 for intervals narrower than 0.5 or 0.05 (millions of hands: ``6.0 [6.0, 6.0]``
    hid ``[5.95, 6.04]``). One for a whole column, which a cell's own would make ragged.

    >>> thousand_decimals([11.1, 5.951], [13.56, 6.037])
    2
    """
    widths = np.atleast_1d(np.asarray(high, dtype=float) - np.asarray(low, dtype=float))
    widths = widths[np.isfinite(widths)]
    narrowest = float(widths.min()) if len(widths) else 1.0
    return 1 if narrowest >= 0.5 else 2 if narrowest >= 0.05 else 3


def per_thousand(rate: float, low: float, high: float, decimals: int | None = None) -> str:
    """``12.3 [11.1, 13.6]``: a rate per 1,000 hands with its interval, for tables, with
    ``decimals`` (default: what its own interval needs, ``thousand_decimals``).

    >>> per_thousand(12.34, 11.1, 13.56)
    '12.3 [11.1, 13.6]'
    >>> per_thousand(5.993, 5.951, 6.037)
    '5.99 [5.95, 6.04]'
    """
    if math.isnan(rate):
        return "-"
    places = thousand_decimals(low, high) if decimals is None else decimals
    return f"{rate:.{places}f} [{low:.{places}f}, {high:.{places}f}]"
