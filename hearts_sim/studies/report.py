"""``hearts-sim report DIR [DIR ...]``: moon-shot figures (PNG) and a Markdown summary of a
tournament's records, or of several runs' records pooled.

The records are streamed through ``analysis.RecordSummary`` in batches, so a run of
millions of hands is reported in bounded memory. The plotting helpers take the tables of
``hearts_sim.studies.analysis`` and draw on a matplotlib ``Axes``; the notebooks use them too.
Figures are drawn on ``matplotlib.figure.Figure`` objects with the Agg canvas, never
through pyplot, so the command works without a display and leaves pyplot's state alone.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hearts_sim.core.errors import StorageError
from hearts_sim.core.files import unwritable, write_atomically
from hearts_sim.core.rules import PASS_DIRECTIONS, POINTS_TOTAL, rules_label
from hearts_sim.selfplay.records import run_folder
from hearts_sim.studies.analysis import (
    DEFAULT_BATCH,
    AnalysisError,
    RecordSummary,
    UnfinishedRunWarning,
    check_min_points,
    failed_points,
    per_thousand,
    pooled_rules,
    thousand_decimals,
)

REPORT_DIR = "report"
SUMMARY_FILE = "summary.md"
MIN_HANDS_PER_POINT = 200  # curves skip feature values seen in fewer hands (their CI is uselessly wide)


class ReportError(AnalysisError):
    """A report that cannot be written (no records, unwritable output): one line, exit code 2."""


# ---------------------------------------------------------------------------- plotting helpers
def new_axes(width: float = 7.0, height: float = 4.0) -> Any:
    """A fresh Axes on a pyplot-free Figure with the Agg canvas (for files, not notebooks)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure.add_subplot()


def _label(name: Any) -> str:
    """A column name as an axis or legend title: ``pass_direction`` reads ``pass direction``."""
    return str(name).replace("_", " ")


def _ordered(values: Sequence[Any]) -> list[Any]:
    """Pass directions in their natural order, anything else as given."""
    values = list(dict.fromkeys(values))
    if all(v in PASS_DIRECTIONS for v in values):
        return [d for d in PASS_DIRECTIONS if d in values]
    return values


def plot_rates(table: pd.DataFrame, ax: Any, *, title: str, ylabel: str, xlabel: str | None = None) -> Any:
    """Bars of ``rate`` with ``low``/``high`` error bars: one bar per group for a one-level
    index, grouped bars (first level on the x axis, one colour per second-level value) for two."""
    if table.index.nlevels == 1:
        labels = [str(v) for v in table.index]
        x = np.arange(len(labels))
        rate = table["rate"].to_numpy(dtype=float)
        errors = [rate - table["low"].to_numpy(dtype=float), table["high"].to_numpy(dtype=float) - rate]
        ax.bar(x, rate, yerr=errors, capsize=4, color="tab:blue")
        ax.set_xticks(x, labels)
    else:
        outer = _ordered(table.index.get_level_values(0))
        inner = _ordered(table.index.get_level_values(1))
        width = 0.8 / max(len(inner), 1)
        x = np.arange(len(outer))
        for i, value in enumerate(inner):
            rows = [table.loc[(o, value)] if (o, value) in table.index else None for o in outer]
            rate = np.array([np.nan if r is None else r["rate"] for r in rows], dtype=float)
            low = np.array([np.nan if r is None else r["low"] for r in rows], dtype=float)
            high = np.array([np.nan if r is None else r["high"] for r in rows], dtype=float)
            ax.bar(
                x + (i - (len(inner) - 1) / 2) * width,
                rate,
                width,
                yerr=[rate - low, high - rate],
                capsize=3,
                label=str(value),
            )
        ax.set_xticks(x, [str(o) for o in outer])
        ax.legend(title=_label(table.index.names[1]), fontsize="small")
    ax.set_xlabel(xlabel or _label(table.index.names[0]))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return ax


def plot_rate_curves(
    table: pd.DataFrame,
    ax: Any,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    min_hands: int = MIN_HANDS_PER_POINT,
    log: bool = True,
) -> Any:
    """``rate`` against a numeric second index level (a hand feature), one line per value of the
    first level (an agent), with the Wilson interval as a band; points seen in fewer than
    ``min_hands`` hands are left out."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    table = table[table["hands"] >= min_hands]
    positive = table.loc[table["rate"] > 0, "rate"]
    floor = float(positive.min()) / 2 if log and len(positive) else 0.0  # log axes cannot show 0
    for series in _ordered(table.index.get_level_values(0)):
        rows = table.xs(series, level=0).sort_index()
        x = rows.index.to_numpy(dtype=float)
        rate = rows["rate"].to_numpy(dtype=float)
        line = ax.plot(x, np.where(rate > 0, rate, np.nan) if log else rate, marker="o", label=str(series))
        low = np.maximum(rows["low"].to_numpy(dtype=float), floor)
        ax.fill_between(x, low, rows["high"].to_numpy(dtype=float), alpha=0.2, color=line[0].get_color())
    if log and len(positive):
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))  # 40, not 4 x 10^1
        ax.yaxis.set_minor_formatter(FuncFormatter(_minor_log_label))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # features are counts
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _legend(ax, table, _label(table.index.names[0]))
    return ax


def _legend(ax: Any, table: pd.DataFrame, title: str) -> None:
    """The legend of one line per group, or, for a table with none (no failed moon attempt in
    these hands), a word on the empty axes instead of matplotlib's warning of an empty legend."""
    if len(table):
        ax.legend(title=title, fontsize="small")
    else:
        ax.text(0.5, 0.5, "none in these hands", transform=ax.transAxes, ha="center", va="center")


def _minor_log_label(value: float, _: int) -> str:
    """A log axis's minor tick labelled in plain digits at 2, 3 and 5 times a power of ten only."""
    if value <= 0:
        return ""
    leading = value / 10 ** np.floor(np.log10(value))
    return f"{value:g}" if round(leading) in (2, 3, 5) else ""


def plot_failed_cost(table: pd.DataFrame, ax: Any, *, title: str | None = None) -> Any:
    """Per group: the mean final score of a typical hand next to that of a failed moon attempt."""
    labels = [str(v) for v in table.index]
    x = np.arange(len(labels))
    ax.bar(x - 0.2, table["mean_score"], 0.4, label="all hands")
    ax.bar(x + 0.2, table["failed_mean_score"], 0.4, label="failed moon attempts")
    for xi, cost, top in zip(x, table["cost"], table["failed_mean_score"], strict=True):
        if np.isfinite(cost):
            ax.annotate(f"+{cost:.1f}", (xi + 0.2, top), ha="center", va="bottom", fontsize="small")
    ax.set_xticks(x, labels)
    ax.set_xlabel(_label(table.index.names[0] or "group"))
    ax.set_ylabel("mean final score per hand (points)")
    ax.set_title(title or "What a failed moon attempt costs")
    ax.margins(y=0.25)  # headroom: the legend and the labels above the bars stay clear of them
    ax.legend(fontsize="small", loc="upper left")
    return ax


def plot_distribution(
    table: pd.DataFrame, ax: Any, *, title: str, xlabel: str = "final score in the hand"
) -> Any:
    """One step line per row of a ``points_distribution`` table (share of hands per value)."""
    values = table.columns.to_numpy(dtype=float)
    for group, row in table.iterrows():
        ax.step(values, row.to_numpy(dtype=float), where="mid", label=str(group))
    if len(table):
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of hands")
    ax.set_title(title)
    _legend(ax, table, _label(table.index.name or ""))
    return ax


def plot_tricks(table: pd.DataFrame, ax: Any, *, title: str, ylabel: str) -> Any:
    """One line per row of a table of when (``stopping_tricks``, ``qs_tricks``: shares by 0-based
    trick), drawn against the trick counted from 1 as players count them. A trick in which
    nothing fell is a share of 0: the tables have no column for it, and the line was drawn
    straight over it as if between two values."""
    if len(table.columns):
        table = table.reindex(columns=range(int(table.columns.max()) + 1), fill_value=0.0)
    tricks = table.columns.to_numpy(dtype=int)
    for group, row in table.iterrows():
        ax.plot(tricks + 1, row.to_numpy(dtype=float), marker="o", label=str(group))
    ax.set_xticks(range(1, int(tricks.max()) + 2) if len(tricks) else [])
    ax.set_xlabel("trick")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _legend(ax, table, _label(table.index.name or ""))
    return ax


def mean_trick(table: pd.DataFrame) -> pd.Series:
    """The mean trick, counted from 1, of each row of a table of when."""
    return (table * (table.columns.to_numpy(dtype=float) + 1)).sum(axis=1)


# ---------------------------------------------------------------------------- the report
MOONS_PER_1000 = "moons per 1,000 hands (95% CI)"


def _figures(summary: RecordSummary) -> dict[str, Any]:
    """File name -> Axes of each figure."""
    figures: dict[str, Any] = {}

    def moon_bars(name: str, table: str, title: str, width: float = 7.0) -> None:
        figures[name] = new_axes(width)
        plot_rates(summary.moon_rates(table), figures[name], title=title, ylabel=MOONS_PER_1000)

    moon_bars("moon_rate_by_agent.png", "moons", "Moon shots by agent")
    moon_bars(
        "moon_rate_by_pass_direction.png", "moons_by_direction", "Moon shots by agent and pass direction", 8.0
    )
    ax = figures["moon_vs_hearts.png"] = new_axes()
    plot_rate_curves(
        summary.moon_rates("moons_by_hearts"),
        ax,
        title="Moon rate by hearts held after the pass",
        xlabel="hearts held after the pass",
        ylabel="moons per 1,000 hands",
    )
    ax = figures["moon_vs_high_hearts.png"] = new_axes()
    plot_rate_curves(
        summary.moon_rates("moons_by_high_hearts"),
        ax,
        title="Moon rate by high hearts (J-A) held after the pass",
        xlabel="hearts J or higher held after the pass",
        ylabel="moons per 1,000 hands",
    )
    ax = figures["failed_moon_cost.png"] = new_axes()
    plot_failed_cost(
        summary.failed_moons(),
        ax,
        title=f"Failed moon attempts (>= {summary.failed_min_points} points or all hearts, no moon)",
    )
    ax = figures["score_distribution.png"] = new_axes()
    plot_distribution(summary.points_distribution(), ax, title="Final score per hand")
    ax = figures["qs_by_pass_direction.png"] = new_axes(8.0)
    plot_rates(
        summary.qs_capture_rates(),
        ax,
        title="Queen of spades taken, by agent and pass direction",
        ylabel="share of hands taking the QS (95% CI)",
    )
    if summary.has_timeline:
        ax = figures["moon_stopped_trick.png"] = new_axes()
        plot_tricks(
            summary.stopping_tricks(),
            ax,
            title="When failed moon attempts were stopped",
            ylabel="share of the agent's failed attempts",
        )
        ax = figures["qs_trick.png"] = new_axes()
        plot_tricks(
            summary.qs_tricks(),
            ax,
            title="When the queen of spades fell",
            ylabel="share of the agent's QS captures",
        )
    if summary.in_games:
        title = "Moon shots by agent and place in the game before the hand (1: leading)"
        moon_bars("moon_rate_by_game_place.png", "moons_by_game_place", title, 8.0)
    return figures


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def summary_markdown(
    summary: RecordSummary, source: str, figures: Sequence[str], notes: Sequence[str] = ()
) -> str:
    """The Markdown summary: per-agent moon figures, moon rate per pass direction, QS rates;
    ``notes`` (a run that is not finished, ``UnfinishedRunWarning``) as a warning under the title."""
    moons = summary.moon_rates("moons")
    failed = summary.failed_moons()
    suffered = summary.moons_suffered()
    rules = "; ".join(sorted(map(rules_label, summary.rules))) or "not recorded"
    lines = [
        "# Moon-shot report",
        "",
        *(f"**Warning**: {note}." for note in notes),
        *([""] if notes else []),
        f"Records: `{source}`: {summary.hands:,} hands; rules: {rules}.",
        "Rates are per 1,000 hands an agent played (player-hands), with Wilson 95% intervals over "
        "the deals (the hands of a deal, in its every seating, are one sample).",
        f"A failed attempt: no moon, but at least {summary.failed_min_points} raw points"
        + (" or all 13 hearts." if summary.all_hearts else "."),
        *(
            [
                "Moons are off under these rules (moon=off): no one shoots, and the failed attempts are the "
                "hands of that many points all the same (with every point card in one hand among them)."
            ]
            if any("moon=off" in label for label in summary.rules)
            else []
        ),
        "",
    ]
    rows = []
    decimals = (  # one for each column (each cell its own made them ragged)
        thousand_decimals(moons["low"], moons["high"]),
        thousand_decimals(failed["failed_low"], failed["failed_high"]),
        thousand_decimals(suffered["low"], suffered["high"]),
    )
    for agent in moons.index:
        m, f, s = moons.loc[agent], failed.loc[agent], suffered.loc[agent]
        rows.append(
            [
                agent,
                f"{int(m['hands']):,}",
                f"{int(m['moons']):,}",
                per_thousand(m["rate"], m["low"], m["high"], decimals[0]),
                per_thousand(f["failed_rate"], f["failed_low"], f["failed_high"], decimals[1]),
                "-" if np.isnan(f["success"]) else f"{f['success']:.2f}",
                "-" if np.isnan(f["cost"]) else f"{f['cost']:+.1f}",
                per_thousand(s["rate"], s["low"], s["high"], decimals[2]),
                f"{s['lost_per_hand']:.2f}",
            ]
        )
    header = [
        "agent",
        "hands",
        "moons",
        "moons /1k",
        "failed /1k",
        "success",
        "failed cost",
        "suffered /1k",
        "lost to moons /hand",
    ]
    lines += _markdown_table(header, rows)
    lines += [
        "",
        "success: moons / (moons + failed attempts); failed cost: mean score of a failed attempt "
        "minus the agent's mean score per hand; lost to moons: points added by other players' moons.",
        "",
        "## Moons per 1,000 hands by pass direction",
        "",
    ]
    by_direction = summary.moon_rates("moons_by_direction")
    directions = _ordered(by_direction.index.get_level_values(1))
    lines += _markdown_table(["agent", *directions], _rate_rows(by_direction, moons.index, directions))
    lines += ["", "## Queen of spades capture rate by pass direction", ""]
    qs_rows = _rate_rows(summary.qs_capture_rates(), moons.index, directions, lambda r, _: f"{r['rate']:.3f}")
    lines += _markdown_table(["agent", *directions], qs_rows)
    lines += ["", "## When", ""]
    if summary.has_timeline:
        stopped, queen = mean_trick(summary.stopping_tricks()), mean_trick(summary.qs_tricks())
        rows = [
            [agent, *(f"{table[agent]:.1f}" if agent in table.index else "-" for table in (stopped, queen))]
            for agent in moons.index
        ]
        lines += _markdown_table(
            ["agent", "failed attempt stopped in trick (mean)", "QS taken in trick (mean)"], rows
        )
        lines += [
            "",
            "Tricks count from 1; an attempt is stopped by the first trick another player takes points in.",
        ]
    else:
        lines.append(
            f"Only {summary.timeline_hands:,} of the {summary.hands:,} hands say when each trick was won "
            "(records made before 2026-12-05 do not): no figures of when."
        )
    if summary.in_games:
        by_place = summary.moon_rates("moons_by_game_place")
        places = sorted(set(by_place.index.get_level_values(1)))
        header = ["agent", *(_place(p) for p in places)]
        lines += ["", "## Moons per 1,000 hands by place in the game", ""]
        lines += _markdown_table(header, _rate_rows(by_place, moons.index, places))
        failed_by_place = summary.failed_moons(table="failed_by_game_place")
        lines += ["", "## Failed attempts per 1,000 hands by place in the game", ""]
        lines += _markdown_table(header, _rate_rows(failed_by_place, moons.index, places, _failed_cell))
        lines += [
            "",
            "The seat's place by the game's totals before the hand: 1st has the lowest total "
            "(seats with equal totals share the better place).",
        ]
    elif summary.game_hands:  # runs of games pooled with runs of single hands
        lines += [
            "",
            f"Only {summary.game_hands:,} of the {summary.hands:,} hands are hands of games (the others "
            "are single hands, which stand in no game): no tables by place in the game.",
        ]
    lines += ["", "## Figures", ""]
    lines += [f"![{name}]({name})" for name in figures]
    return "\n".join(lines) + "\n"


def _per_thousand_cell(row: pd.Series, decimals: dict[Any, int]) -> str:
    return per_thousand(row["rate"], row["low"], row["high"], decimals[row.name[1]])


def _failed_cell(row: pd.Series, decimals: dict[Any, int]) -> str:
    return per_thousand(row["failed_rate"], row["failed_low"], row["failed_high"], decimals[row.name[1]])


def _rate_rows(
    table: pd.DataFrame,
    agents: Sequence[Any],
    keys: Sequence[Any],
    cell: Callable[[pd.Series, dict[Any, int]], str] = _per_thousand_cell,
) -> list[list[str]]:
    """A row per agent of a table indexed (agent, key): ``cell`` of its row under each key
    (default: the rate per 1,000 with its interval, each key's column with the decimals its
    narrowest interval needs), ``-`` where it has none."""
    low, high = ("failed_low", "failed_high") if "failed_low" in table.columns else ("low", "high")
    present = set(table.index.get_level_values(1)) if low in table.columns else set()
    decimals = {
        key: thousand_decimals(table.xs(key, level=1)[low], table.xs(key, level=1)[high])
        if key in present
        else 1
        for key in keys
    }
    rows = []
    for agent in agents:
        cells = [
            cell(table.loc[(agent, key)], decimals) if (agent, key) in table.index else "-" for key in keys
        ]
        rows.append([agent, *cells])
    return rows


def _place(place: int) -> str:
    """1st, 2nd, 3rd, 4th, 5th."""
    return f"{place}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(place, 'th') }"


def _unwritable_target(target: Path) -> str | None:
    """Why no report can be written in ``target`` (None: it can, or the folder on the way to it
    that exists is a file, which creating it says), from the nearest folder of it that exists: a
    run on a read-only mount read all its records first, minutes of a large one, and then
    could not create its ``report`` folder."""
    folder = target
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return unwritable(folder) if folder.is_dir() else None


def write_report(
    paths: str | Path | Sequence[str | Path],
    out: str | Path | None = None,
    *,
    min_points: int | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: bool | None = None,
) -> list[Path]:
    """Read a tournament's records (a path: the ``--out`` directory or its ``records/``), or pool
    those of several runs under the same rules, and write the figures and ``summary.md`` into
    ``out`` (default ``path/report``; several runs need it); returns the files written.
    ``min_points``: the raw points of a failed moon attempt (default ``failed_points`` of the
    runs' rules: 20 of 26, 33 of Black Maria's 43; all 13 hearts count under 26 points);
    ``progress``: a bar of the hands read (default: where someone watches). Raises
    ``ReportError`` with a one-line reason when it cannot, ``StorageError`` when a file cannot be
    written (each file is whole or as it was: ``write_atomically``). A report folder that is a
    symbolic link is refused (a ``report`` link in a downloaded run sent the files into the
    folder it named until 2026-12-07); a link in it where a file goes is replaced, not followed."""
    sources = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    if not sources:
        raise ReportError("report needs at least one run directory")
    if len(sources) > 1 and out is None:
        raise ReportError(f"a report of {len(sources)} runs needs --out DIR: where to write it")
    target = Path(out) if out is not None else run_folder(sources[0]) / REPORT_DIR
    if target.is_symlink():  # checked before the reading, which may take minutes
        raise ReportError(
            f"the report folder {target} is a symbolic link (to {os.readlink(target)}): a report is "
            "written into a folder, not through a link; remove the link, or name the folder it "
            "points to with --out"
        )
    elsewhere = "" if out is not None else ": name a folder that can be written with --out DIR"
    if (why := _unwritable_target(target)) is not None:  # checked before the reading, as the link
        raise ReportError(f"cannot write the report in {target}: {why}{elsewhere}")
    try:
        rules = pooled_rules(sources)  # from the manifests: before the records are read
        if min_points is None:  # Black Maria's 43 points were held to 26's 20, its hearts to 13
            min_points = failed_points(rules)
        check_min_points(min_points, rules, name="--min-points")  # 0 and 27 said other ranges
        all_hearts = rules is None or rules.moon_total == POINTS_TOTAL
        with warnings.catch_warnings(record=True) as said:  # said as the records were read
            warnings.simplefilter("always")
            summary = RecordSummary.from_records(
                sources,
                batch_size=batch_size,
                progress=progress,
                min_points=min_points,
                all_hearts=all_hearts,
            )
        # on to the caller, once the reading is done; each once, as the default filter shows them
        seen = {(w.category, str(w.message), w.filename, w.lineno): w for w in said}
        for warning in seen.values():
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    except ReportError:
        raise
    except AnalysisError as error:
        raise ReportError(str(error)) from None
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReportError(
            f"cannot create the report directory {target}: {error.strerror or error}{elsewhere}"
        ) from None
    figures = _figures(summary)
    files = {}
    for name, ax in figures.items():
        image = io.BytesIO()
        ax.figure.savefig(image, dpi=100, format="png")
        files[target / name] = image.getvalue()
    # what the reading said of an unfinished run, of the manifest it read: read again here, a run
    # being written had counted a chunk more ("3 of 21 chunks" over the hands of 2)
    notes = list(dict.fromkeys(str(w.message) for w in said if issubclass(w.category, UnfinishedRunWarning)))
    markdown = summary_markdown(summary, "`, `".join(map(str, sources)), list(figures), notes)
    # UTF-8, the folders' names in it as their bytes (surrogates under a locale not UTF-8)
    files[target / SUMMARY_FILE] = markdown.encode("utf-8", "surrogateescape")
    for path, data in files.items():
        try:
            write_atomically(path, data)
        except OSError as error:  # a full disk: the records are only read, so nothing is lost
            raise StorageError(f"cannot write {path}: {error.strerror or error}") from None
    return list(files)
