"""The benchmark scripts in experiments/ run and print their figures (tiny sizes)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def test_agent_costs_prints_every_figure() -> None:
    run = subprocess.run(
        [sys.executable, str(EXPERIMENTS / "agent_costs.py"), "--hands", "1", "--rule-hands", "2000"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = run.stdout.splitlines()
    assert re.match(r"rule in all seats\s+[\d,]+ hands/s", lines[0])
    assert [line.split()[0] for line in lines[1:]] == ["mc", "mc(rollout=random)", "mc", "pimc", "ismcts"]
    assert all(float(re.findall(r"([\d,.]+) (?:rollouts|decisions)/s", line)[0].replace(",", "")) > 0
               for line in lines[1:])  # fmt: skip
