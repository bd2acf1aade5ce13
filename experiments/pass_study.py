"""What each pass policy is worth with the play held fixed: ``pass=X,play=hard`` for X in random,
rule, mc and hard (the searched pass), by pass direction.

The agents play one duplicate tournament, every deal in each of their seatings: with as many
policies as seats, every order of them (the 24 permutations of four at a 4-player table), with
two or three, the tournament's seatings that treat each one alike. Either way each pass policy
meets the others with the same cards, and each passes to and receives from each other one
equally often, so the order of ``--passes`` changes nothing. Any other number is refused (five
at four seats were seated in 10 of their orders, where who passed to whom, and so the table,
depended on that order): run several studies, each with ``rule`` as the reference. Records go
to ``--out`` (rerun the same command to continue an interrupted run). The table gives, per
pass direction, each policy's points per hand with a 95% t-interval over deals, and its
difference from the rule agent's pass, paired per deal (negative: fewer points than passing
like ``rule``). With the ``none`` direction nobody passes, so all of them play alike there.

    python experiments/pass_study.py --deals 100 --out runs/pass_study        # play (resumable)
    python experiments/pass_study.py --report runs/pass_study                # the table only
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd

from hearts_sim.apps.script import ScriptParser, master_seed, run_script, threads, whole
from hearts_sim.studies.analysis import load_records, to_long
from hearts_sim.studies.stats import mean_interval
from hearts_sim.studies.tournament import (
    TournamentError,
    load_manifest,
    make_config,
    manifest_config,
    run_tournament,
    seatings,
)

PASSES = ("random", "rule", "mc", "hard")
REFERENCE = "rule"


def agents_for(play: str, passes: tuple[str, ...] = PASSES) -> list[str]:
    return [f"pass={x},play={play}" for x in passes]


def seated_alike(n_policies: int, n_seats: int) -> bool:
    """Whether the tournament's seatings of ``n_policies`` agents at ``n_seats`` treat each agent
    alike: the same seatings whatever the agents' order (each relabelling of them maps the set
    onto itself), so each meets each other one with the same cards and passes to it as often.
    True for up to three agents and for as many as seats; five at four seats (rotations and
    mirror images, 10 seatings) passed to some neighbours three times as often as to others.

    >>> [k for k in range(1, 7) if seated_alike(k, 4)], [k for k in range(1, 7) if seated_alike(k, 5)]
    ([1, 2, 3, 4], [1, 2, 3, 5])
    """
    played = sorted(seatings(n_policies, n_seats))
    # a swap of the first two and a turn of all of them generate every relabelling
    swap = [1, 0, *range(2, n_policies)] if n_policies > 1 else [0]
    turn = [(a + 1) % n_policies for a in range(n_policies)]
    return all(sorted(tuple(g[a] for a in s) for s in played) == played for g in (swap, turn))


def fitting_counts(n_seats: int) -> str:
    """The numbers of pass policies a study at ``n_seats`` seats takes, in words: ``2 to 4``."""
    counts = [k for k in range(2, n_seats + 1) if seated_alike(k, n_seats)]
    if len(counts) > 2 and counts == list(range(2, n_seats + 1)):
        return f"2 to {n_seats}"
    return ", ".join(map(str, counts[:-1])) + f" or {counts[-1]}"


def unbalanced(n_policies: int, n_seats: int) -> str | None:
    """Why ``n_policies`` pass policies at ``n_seats`` seats make no pass study, or None."""
    if seated_alike(n_policies, n_seats):
        return None
    return (
        f"{n_policies} pass policies at {n_seats} seats are seated in {len(seatings(n_policies, n_seats))} "
        "of their orders, not each alike, so who passes to whom, and the table, depend on their order"
    )


def pass_study_of(out: Path, manifest: dict[str, Any]) -> tuple[list[str], str]:
    """The pass policies and the shared play of the run in ``out``, or a one-line
    ``TournamentError`` for a run that is no pass study (``--report`` on a match printed
    ``IndexError``, on a run varying the play rows all labelled by their play)."""
    config = manifest_config(out, manifest)
    found = [str(agent) for agent in config.agents]
    passes, plays = [], set()
    for text in found:
        passing, _, play = text.partition(",play=")
        passes.append(passing.removeprefix("pass="))
        plays.add(play if passing.startswith("pass=") else "")  # "" for any agent not pass=X,play=Y
    shown = ", ".join(map(repr, found))
    if len(plays) != 1 or "" in plays:
        raise TournamentError(
            f"{out} holds no pass study: its agents ({shown}) are not all pass=X,play=<one play policy>"
        )
    if REFERENCE not in passes:
        raise TournamentError(
            f"{out} holds no pass study: none of its agents ({shown}) passes like "
            f"{REFERENCE!r}, the reference"
        )
    why = unbalanced(len(passes), config.rules.n_players)
    if why:
        raise TournamentError(f"{out} is a pass study whose {why}: no table of it is fair")
    return passes, plays.pop()


def pass_table(out: Path) -> str:
    """The Markdown table of the run in ``out``: rows pass policies, columns pass directions."""
    manifest = load_manifest(out)
    names = manifest["agent_specs"]  # as the records name them (levels resolved)
    passes, play = pass_study_of(out, manifest)
    long = to_long(load_records(out))
    per_deal = (
        long.groupby(["pass_direction", "deal", "agent"], observed=True)["score"].mean().unstack("agent")
    )
    directions = [d for d in ("left", "right", "across", "none") if d in per_deal.index.get_level_values(0)]
    lines = [
        "| pass policy | " + " | ".join(f"{d}: points/hand | {d}: vs rule" for d in directions) + " |",
        "|---|" + "---|---|" * len(directions),
    ]
    reference = names[passes.index(REFERENCE)]
    for name, label in zip(names, passes, strict=True):
        cells = []
        for direction in directions:
            table = per_deal.loc[direction]
            mean, half = mean_interval(table[name].to_numpy())
            diff, diff_half = mean_interval((table[name] - table[reference]).to_numpy())
            cells.append(f"{mean:.2f} ± {half:.2f}")
            cells.append("—" if name == reference else f"{diff:+.2f} ± {diff_half:.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    counts = per_deal.groupby(level=0, observed=True).size()
    deals = ", ".join(f"{d} {counts[d]}" for d in directions)
    seatings = len(manifest["seatings"])
    return "\n".join(lines) + f"\n\nDeals per direction: {deals} (each in {seatings} seatings); play: {play}."


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="run directory (records and manifest); rerun to continue")
    parser.add_argument("--report", metavar="DIR", help="print the table of a finished run only")
    parser.add_argument("--deals", type=whole("--deals"), default=100)
    parser.add_argument("--play", default="hard", help="the play policy every agent shares")
    parser.add_argument("--passes", nargs="+", default=list(PASSES))
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=master_seed(), default=0)
    parser.add_argument("--threads", type=threads(), default=1, help="threads (default 1)")
    args = parser.parse_args(argv)
    if args.report:
        print(pass_table(Path(args.report)))
        return 0
    if not args.out:
        parser.error("give --out DIR (or --report DIR)")
    if REFERENCE not in args.passes:
        parser.error(f"--passes must include {REFERENCE!r}, the reference")
    twice = sorted({x for x in args.passes if args.passes.count(x) > 1})
    if twice:  # 'rule rule' played on and printed a row for each, the second 'vs rule' +0.00
        parser.error(f"--passes names {', '.join(map(repr, twice))} more than once: name each policy once")
    out = Path(args.out)
    config = make_config(
        agents_for(args.play, tuple(args.passes)), args.rules, deals=args.deals, seed=args.seed
    )
    why = unbalanced(len(args.passes), config.rules.n_players)
    if why:
        parser.error(
            f"--passes: {why}; give {fitting_counts(config.rules.n_players)} "
            f"(to compare more, run several studies, each with {REFERENCE!r} as the reference)"
        )
    resume = (out / "manifest.json").exists()
    command = ["python", "experiments/pass_study.py", *(sys.argv[1:] if argv is None else argv)]
    run_tournament(config, out, resume=resume, threads=args.threads, command=command)
    print(pass_table(out))
    return 0


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    run_script(main)
