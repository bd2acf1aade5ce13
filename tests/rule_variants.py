"""The rule sets the engine tests sweep, in one place: every preset, plus variants that reach the
switches the presets leave at their defaults (kitty deals for 3 and 5 players, any first lead,
hearts led instead of the queen, self-minus and no moon, a loose first trick, every bonus at once,
Black Maria with a kitty)."""

from __future__ import annotations

from hearts_sim import PRESETS, Rules

# The 5-player variants also guard the regression of test_simulate_labels_five_player_hands
# (test_invariants.py): simulate() once failed for every 5-player table.
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
}
