"""The rule sets the engine tests sweep, in one place: every preset, plus variants that reach the
switches the presets leave at their defaults (kitty deals for 3 and 5 players, any first lead,
hearts led instead of the queen, self-minus and no moon, a loose first trick, every bonus at once,
Black Maria with a kitty), and a hypothesis strategy over every combination of switch values."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from hearts_sim import PRESETS, Rules, RulesError

# The 5-player variants also guard the regression of test_simulate_labels_five_player_hands
# (test_invariants.py): simulate() once failed for every 5-player table. Swept by test_differential,
# test_reference_engine, test_selfplay and test_invariants.
RULE_VARIANTS: dict[str, Rules] = {
    **PRESETS,
    "kitty3": Rules(n_players=3, deck_mode="kitty"),
    "kitty5_any_club": Rules(n_players=5, deck_mode="kitty", first_lead="any_club"),
    "any_lead_self_minus": Rules(first_lead="any", lead_hearts_instead_of_qs=True, moon="self_minus"),
    "loose_no_moon": Rules(no_points_first_trick=False, must_break_hearts=False, moon="off"),
    "everything5": Rules(
        n_players=5,
        deck_mode="kitty",
        black_maria=True,
        jd_bonus=-10,
        avoid_all_tricks_bonus=-5,
        qs_breaks_hearts=True,
        first_lead="any",
    ),
    "openspiel_bonus": Rules.preset("openspiel", avoid_all_tricks_bonus=-5, jd_bonus=-10),
    "black_maria_kitty_across": Rules(black_maria=True, pass_cycle="across", jd_bonus=-10),
    "kitty5_any_lead": Rules(n_players=5, deck_mode="kitty", first_lead="any", jd_bonus=-10),
    "self_minus_omnibus": Rules(moon="self_minus", jd_bonus=-10, pass_cycle="across"),
    "no_moon_avoid_bonus": Rules(moon="off", avoid_all_tricks_bonus=-5, pass_cycle="right"),
    "no_passing_any_club": Rules(n_players=3, pass_count=0, first_lead="any_club", black_maria=True),
}


# Every value docs/rules.md lists for every switch; invalid combinations are filtered out below.
SWITCH_VALUES: dict[str, tuple] = {
    "n_players": (3, 4, 5),
    "deck_mode": ("remove", "kitty"),
    "pass_count": (3, 0),
    "pass_cycle": ("cycle", "left", "right", "across", "none", "random"),
    "first_lead": ("two_clubs", "any_club", "any"),
    "no_points_first_trick": (True, False),
    "must_break_hearts": (True, False),
    "qs_breaks_hearts": (False, True),
    "lead_hearts_instead_of_qs": (False, True),
    "moon": ("others_plus", "self_minus", "off"),
    "jd_bonus": (0, -10),
    "black_maria": (False, True),
    "avoid_all_tricks_bonus": (0, -5),
    "target_score": (100, 50),
    "tie_rule": ("continue", "share"),
}


def rules_or_none(switches: dict) -> Rules | None:
    """The rules these switch values make, or None where they do not combine."""
    try:
        return Rules(**switches)
    except RulesError:  # e.g. kitty with 4 players, across with 3 or 5
        return None


rules_strategy = (
    st.fixed_dictionaries({k: st.sampled_from(v) for k, v in SWITCH_VALUES.items()})
    .map(rules_or_none)
    .filter(lambda r: r is not None)
)


# Reproducible hypothesis runs over generated rule sets (test_differential.py, test_selfplay.py).
SWITCH_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
