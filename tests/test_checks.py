"""What the input checks count as a number (``hearts_sim.core.checks``), and that the frozen
dataclasses written to manifests store numpy's scalars as Python's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hearts_sim.core.checks import is_integer, is_real
from hearts_sim.core.rules import Rules, RulesError
from hearts_sim.selfplay.simulate import SimulationError
from hearts_sim.studies.stats import Sprt
from hearts_sim.studies.tournament import TournamentConfig


@pytest.mark.parametrize(
    ("value", "integer", "real"),
    [
        (3, True, True),
        (np.int64(3), True, True),
        (np.uint64(3), True, True),
        (3.0, False, True),
        (np.float32(0.5), False, True),
        (float("nan"), False, True),  # a number: the range after the check refuses it
        (True, False, False),
        (np.bool_(True), False, False),
        ("3", False, False),
        (None, False, False),
        ([3], False, False),
    ],
)
def test_what_counts_as_a_number(value: object, integer: bool, real: bool) -> None:
    assert is_integer(value) is integer
    assert is_real(value) is real


def test_a_bool_is_refused_where_a_count_is_asked() -> None:
    with pytest.raises(SimulationError, match="deals=True"):
        TournamentConfig(agents=("random", "rule"), deals=True)
    with pytest.raises(RulesError, match="n_players=True"):
        Rules(n_players=True)
    with pytest.raises(ValueError, match="gain=True"):
        Sprt(gain=True)


def test_numpy_scalars_are_stored_as_python_numbers() -> None:
    rules = Rules(n_players=np.int64(4), black_maria=np.bool_(True))
    assert rules == Rules(black_maria=True) and hash(rules) == hash(Rules(black_maria=True))
    assert type(rules.n_players) is int and type(rules.black_maria) is bool

    sprt = Sprt(gain=np.float32(0.5), alpha=np.float64(0.05))
    assert type(sprt.gain) is float and sprt == Sprt(gain=0.5)

    config = TournamentConfig(
        agents=("random", "rule"), rules=rules, deals=np.int64(8), seed=np.uint64(3), sprt=sprt
    )
    assert (config.deals, config.seed) == (8, 3) and type(config.seed) is int
    # what a run's manifest holds, and what --resume reads back
    text = json.dumps(config.to_dict())
    assert TournamentConfig.from_dict(json.loads(text)) == config
