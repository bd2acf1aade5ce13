"""Moon rate per 1,000 hands in self-play, per agent and rules preset: the README's reference table.

Every table is four (three, five) copies of one agent; a hand counts once when any player
shoots the moon. Rates carry Wilson 95% intervals. Hands are played in chunks so memory stays
flat; results depend only on ``--seed``.

    python experiments/moon_table.py                          # 1,000,000 hands per cell
    python experiments/moon_table.py --hands 20000 --out moon_table.md
"""

from __future__ import annotations

import shlex
import sys
import time

from tqdm import tqdm

from agents.registry import parse_agent
from hearts_sim.apps.script import ScriptParser, master_seed, out_file, run_script, threads, whole
from hearts_sim.core.files import write_atomically
from hearts_sim.core.rules import resolve_rules
from hearts_sim.selfplay.simulate import simulate
from hearts_sim.studies.analysis import per_thousand, wilson_interval

AGENTS = ["random", "lowest", "highest", "rule"]
PRESETS = ["standard", "qdan3", "qdan5"]
CHUNK = 250_000  # the most hands per simulate call: bounds memory
FIRST_CHUNK = 16
CHUNK_SECONDS = 5.0


def moon_count(preset: str, agent: str, hands: int, seed: int, threads: int | None) -> int:
    """Hands with a moon among ``hands`` self-play hands, with a progress bar. Chunks start at
    ``FIRST_CHUNK`` hands and double while one takes under ``CHUNK_SECONDS``, up to ``CHUNK``:
    a search agent's cell (an hour of ``hard``) shows its progress, a fast agent's runs in large
    chunks. Hand i is the same hand for any chunking (``first_hand``), so the counts are too."""
    moons, start, chunk = 0, 0, FIRST_CHUNK
    with tqdm(total=hands, unit="hand", desc=f"{agent} {preset}", leave=False, smoothing=0.1) as bar:
        while start < hands:
            count = min(chunk, hands - start)
            started = time.perf_counter()
            df = simulate(
                preset, agent, hands=count, seed=seed, first_hand=start, threads=threads, progress=False
            )
            moons += int((df["moon_shooter"].to_numpy() >= 0).sum())
            start += count
            bar.update(count)
            if time.perf_counter() - started < CHUNK_SECONDS:
                chunk = min(2 * chunk, CHUNK)
    return moons


def moon_table(agents: list[str], presets: list[str], hands: int, seed: int, threads: int | None) -> str:
    """The Markdown table: one row per agent, one column per preset."""
    header = [f"{p} ({resolve_rules(p).n_players} players)" for p in presets]
    lines = ["| agent | " + " | ".join(header) + " |", "|---|" + "---|" * len(presets)]
    for agent in agents:
        cells = []
        for preset in presets:
            started = time.perf_counter()
            moons = moon_count(preset, agent, hands, seed, threads)
            low, high = wilson_interval(moons, hands)
            cells.append(per_thousand(1000 * moons / hands, 1000 * float(low), 1000 * float(high)))
            elapsed = time.perf_counter() - started
            print(
                f"{agent:>8} {preset:>8}: {moons} moons in {hands:,} hands ({elapsed:.1f} s)", file=sys.stderr
            )
        lines.append(f"| {agent} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--hands", type=whole("--hands"), default=1_000_000, help="self-play hands per agent and preset"
    )
    parser.add_argument("--agents", nargs="+", default=AGENTS)
    parser.add_argument("--presets", nargs="+", default=PRESETS)
    parser.add_argument("--seed", type=master_seed(), default=0)
    parser.add_argument(
        "--threads",
        type=threads(),
        default=None,
        help="threads (default: all cores)",
    )
    parser.add_argument(
        "--out", type=out_file("--out"), default=None, help="also write the Markdown to this file"
    )
    args = parser.parse_args(argv)
    for agent in args.agents:  # every name checked before the first cell is played
        parse_agent(agent)
    for preset in args.presets:
        resolve_rules(preset)
    table = moon_table(args.agents, args.presets, args.hands, args.seed, args.threads)
    command = shlex.join(["python", "experiments/moon_table.py", *(sys.argv[1:] if argv is None else argv)])
    text = (
        f"Moon shots per 1,000 hands in self-play (hands in which any player shot the moon; "
        f"95% Wilson intervals), {args.hands:,} hands per cell, seed {args.seed}:\n\n"
        f"{table}\n\nProduced by `{command}`.\n"
    )
    print(text)
    if args.out:
        write_atomically(args.out, text.encode())
    return 0


if __name__ == "__main__":
    run_script(main)
