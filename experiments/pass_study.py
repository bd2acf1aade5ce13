"""What each pass policy is worth with the play held fixed: ``pass=X,play=hard`` for X in random,
rule, mc and hard (the searched pass), by pass direction.

The agents play one duplicate tournament (every deal in each of their seatings: the 24
permutations of four at a 4-player table), so each pass policy meets the others with the same
cards; records go to ``--out`` (rerun the same command to continue an interrupted run). The table gives, per
pass direction, each policy's points per hand with a 95% t-interval over deals, and its
difference from the rule agent's pass, paired per deal (negative: fewer points than passing
like ``rule``). With the ``none`` direction nobody passes, so all four play alike there.

    python experiments/pass_study.py --deals 100 --out runs/pass_study        # play (resumable)
    python experiments/pass_study.py --report runs/pass_study                # the table only
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from hearts_sim.apps.script import ScriptParser, master_seed, run_script, threads, whole
from hearts_sim.studies.analysis import load_records, to_long
from hearts_sim.studies.stats import mean_interval
from hearts_sim.studies.tournament import load_manifest, make_config, run_tournament

PASSES = ("random", "rule", "mc", "hard")
REFERENCE = "rule"


def agents_for(play: str, passes: tuple[str, ...] = PASSES) -> list[str]:
    return [f"pass={x},play={play}" for x in passes]


def pass_table(out: Path) -> str:
    """The Markdown table of the run in ``out``: rows pass policies, columns pass directions."""
    manifest = load_manifest(out)
    names = manifest["agent_specs"]  # as the records name them (levels resolved)
    passes = [text.split(",play=")[0].removeprefix("pass=") for text in manifest["config"]["agents"]]
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
    play = manifest["config"]["agents"][0].split(",play=", 1)[1]
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
    out = Path(args.out)
    config = make_config(
        agents_for(args.play, tuple(args.passes)), args.rules, deals=args.deals, seed=args.seed
    )
    resume = (out / "manifest.json").exists()
    command = ["python", "experiments/pass_study.py", *(sys.argv[1:] if argv is None else argv)]
    run_tournament(config, out, resume=resume, threads=args.threads, command=command)
    print(pass_table(out))
    return 0


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    run_script(main)
