"""What the input checks count as a number (``hearts_sim.core.checks``), that the frozen
dataclasses written to manifests store numpy's scalars as Python's, and how a message shows a
refused value."""

from __future__ import annotations

import copy
import json
import pickle
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given

from hearts_sim import PRESETS, HandState, make_config, parse_card
from hearts_sim.apps.server import MoveServer
from hearts_sim.core.checks import is_integer, is_real, shown
from hearts_sim.core.rules import Rules, RulesError, pass_offset, resolve_rules
from hearts_sim.selfplay.simulate import SimulationError
from hearts_sim.studies.stats import Sprt
from hearts_sim.studies.tournament import TournamentConfig

try:
    from tests.rule_variants import SWITCH_SETTINGS, rules_strategy
except ImportError:  # run from inside tests/
    from rule_variants import SWITCH_SETTINGS, rules_strategy  # type: ignore[no-redef]


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


def test_an_unknown_switch_is_a_rules_error_from_the_constructor_too() -> None:
    """``Rules(moom="off")`` was the generated ``__init__``'s ``TypeError``, where
    ``Rules.preset`` and ``replace`` named the switch; copies and pickles still build."""
    with pytest.raises(RulesError, match="unknown rule switch 'moom': .*; did you mean 'moon'"):
        Rules(moom="off")
    rules = Rules(moon="off")
    assert pickle.loads(pickle.dumps(rules)) == rules == copy.deepcopy(rules)


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


def test_a_refused_value_is_shown_on_one_line() -> None:
    """A table or an array where a number or a name belongs is shown cut to one line, and a long
    value is cut short, in every message that echoes what it refused."""
    table, array = pd.DataFrame({"x": [1, 2]}), np.zeros((3, 3))
    assert shown(table) == "x 0 1 1 2" and shown(array).startswith("array([[0., 0., 0.], ")
    assert len(shown(array)) == 40 and shown(array).endswith("…")
    assert shown(list(range(10_000)), 12) == "[0, 1, 2, 3…"
    for refuse in (
        lambda v: Rules(n_players=v),
        lambda v: HandState.deal("standard", seed=v),
        parse_card,
        lambda v: Sprt(gain=v),
        lambda v: pass_offset(v, 4),
        lambda v: MoveServer("rule", time_limit=v),
    ):
        for value in (table, array):
            with pytest.raises(ValueError) as refused:
                refuse(value)
            assert "\n" not in str(refused.value) and shown(value) in str(refused.value)


def test_pass_offset_refuses_a_table_the_rules_do_not_play() -> None:
    """A table size is checked where the offset is computed (the Rules' own message), so no caller
    gets a division by zero or an offset modulo a table of one."""
    assert [pass_offset(d, 5) for d in ("left", "right", "none")] == [1, 4, 0]
    for n_players, message in ((0, "n_players=0 is not supported"), (1.5, "n_players=1.5 is not valid")):
        with pytest.raises(RulesError, match=message):
            pass_offset("left", n_players)


def test_hearts_sim_rules_lists_every_switch_as_rule_takes_it(capsys: pytest.CaptureFixture[str]) -> None:
    """``hearts-sim rules`` shows each switch at the standard game's value, written as ``--rule``
    takes it (each line read back gives the standard rules), its meaning and what it accepts,
    in the words its refusals use."""
    from hearts_sim.apps.cli import main
    from hearts_sim.core.rules import SWITCHES, accepted

    assert main(["rules"]) == 0
    listed = {}
    for line in capsys.readouterr().out.splitlines():
        setting, _, meaning = line.strip().partition(" ")
        if "=" in setting:
            listed[setting.partition("=")[0]] = (setting, meaning.strip())
    assert list(listed) == list(SWITCHES)
    for name, (setting, meaning) in listed.items():
        assert Rules().with_strings([setting]) == Rules()
        assert meaning == f"{SWITCHES[name].doc} ({accepted(name)})"
    with pytest.raises(RulesError, match=re.escape(f"choose {accepted('pass_count')}")):
        Rules(pass_count=2)


@SWITCH_SETTINGS
@given(rules_strategy)
def test_rules_read_back_from_every_text_the_toolkit_writes_them_as(rules: Rules) -> None:
    """``Rules.parse`` reads a records' ``rules`` column (``describe()``) and a display's label
    (``label()``, which was refused as an unknown preset ``'qdan5 (n_players=5)'``)."""
    assert Rules.parse(rules.describe()) == rules == Rules.parse(rules.label())
    assert resolve_rules(rules.label()) == rules


def test_a_preset_its_label_and_its_switches_are_one_rules() -> None:
    for name, preset in PRESETS.items():
        assert Rules.parse(name) == Rules.parse(f" {preset.label()} ") == preset
    assert Rules.parse("qdan3, moon=off") == Rules.preset("qdan3", moon="off")
    with pytest.raises(RulesError, match=r"'qdan3 \(moon=off\)' is no label: qdan3 is qdan3 \(n_players=3\)"):
        Rules.parse("qdan3 (moon=off)")  # it played 4 players with the moon off
    with pytest.raises(RulesError, match="unknown rules preset 'qdan9': .*did you mean 'qdan3'"):
        Rules.parse("qdan9, moon=off")
    with pytest.raises(RulesError, match="rules must be a preset name or switches as text, not 5"):
        Rules.parse(5)  # type: ignore[arg-type]


def test_make_config_takes_one_override_string_or_a_dict_of_switches() -> None:
    """A string was read a character at a time: ``rule override 'm' is not of the form key=value``."""
    qdan5_no_moon = Rules.preset("qdan5", moon="off")
    for overrides in ("moon=off", ["moon=off"], {"moon": "off"}):
        assert make_config(["rule", "random"], rules="qdan5", rule_overrides=overrides).rules == qdan5_no_moon
    with pytest.raises(RulesError, match="unknown rule switch 'moom'"):
        make_config(["rule", "random"], rule_overrides={"moom": "off"})


def test_the_command_line_takes_rules_as_displays_write_them(capsys: pytest.CaptureFixture[str]) -> None:
    from hearts_sim.apps.cli import main

    headers = []
    for rules in (["--rules", "qdan3", "--rule", "moon=off"], ["--rules", "n_players=3, moon=off"]):
        assert main(["match", "rule", "random", "--deals", "1", "--threads", "1", "--quiet", *rules]) == 0
        headers.append(capsys.readouterr().out.splitlines()[0])
    assert headers[0] == headers[1] and "rules: n_players=3, moon=off" in headers[0]
