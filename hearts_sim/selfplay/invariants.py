"""Invariants every hand satisfies (docs/rules.md), checked vectorised over HAND_RECORD arrays.

Used by ``hearts-sim bench`` on millions of hands and by the tests on thousands.
"""

from __future__ import annotations

import numpy as np

from hearts_sim.core.cards import card_counts
from hearts_sim.core.rules import Rules
from hearts_sim.engine.hand import deck_cards
from hearts_sim.selfplay.records import tricks_won_masks, unpack_trick_winners


class InvariantError(AssertionError):
    """A hand broke a rule that every hand must satisfy; the message names the first one."""


def check_hand_records(records: np.ndarray, rules: Rules) -> int:
    """Raise ``InvariantError`` unless every record is a legal, fully scored hand; returns the count.

    Checks: the dealt hands and the kitty partition the cards in play; passed cards come
    from the dealt hand; tricks add up to the hand size; raw points add up to the moon
    total; final scores follow the moon rule's pattern plus the JD and no-trick bonuses; the
    record of when each trick was won agrees with those totals (``_check_trick_timeline``).
    """
    n = rules.n_players
    dealt = records["dealt"][:, :n].astype(np.uint64)
    union = np.bitwise_or.reduce(dealt, axis=1) | records["kitty"].astype(np.uint64)
    sizes = card_counts(dealt).sum(axis=1) + card_counts(records["kitty"])
    deck = np.uint64(deck_cards(rules.to_tuple()))
    _require(union == deck, records, "the dealt hands and kitty do not cover the deck")
    _require(sizes == int(deck).bit_count(), records, "a card was dealt twice")
    passed = records["passed"][:, :n].astype(np.uint64)
    _require(((passed & ~dealt) == 0).all(axis=1), records, "a seat passed a card it was not dealt")
    _require(
        np.isin(card_counts(passed), (0, rules.pass_count)).all(axis=1),
        records,
        "a seat passed the wrong number of cards",
    )
    _require(
        records["tricks"][:, :n].sum(axis=1) == rules.hand_size,
        records,
        "tricks do not add up to the hand size",
    )
    points = records["points"][:, :n].astype(np.int64)
    total = rules.moon_total
    _require(points.sum(axis=1) == total, records, f"raw points do not add up to {total}")
    expected = points.copy()
    shooter = records["moon_shooter"].astype(np.int64)
    moon = shooter >= 0
    if rules.moon == "off":
        _require(~moon, records, "a moon was scored with moon=off")
    else:
        seats = np.arange(n)[None, :]
        is_shooter = seats == shooter[:, None]
        _require(
            ~moon | (points[np.arange(len(points)), np.maximum(shooter, 0)] == total),
            records,
            "the moon shooter did not take every point",
        )
        moon_scores = (
            np.where(is_shooter, 0, total) if rules.moon == "others_plus" else np.where(is_shooter, -total, 0)
        )
        expected = np.where(moon[:, None], moon_scores, expected)
    if rules.jd_bonus:
        jd = records["jd_taker"].astype(np.int64)
        expected[np.arange(len(jd)), jd] += rules.jd_bonus
    if rules.avoid_all_tricks_bonus:
        no_tricks = (records["tricks"][:, :n] == 0) & ~moon[:, None]
        expected += np.where(no_tricks, rules.avoid_all_tricks_bonus, 0)
    _require(
        (records["score"][:, :n] == expected).all(axis=1),
        records,
        "final scores do not follow the moon/bonus rules",
    )
    _check_trick_timeline(records, rules, points)
    return len(records)


def _check_trick_timeline(records: np.ndarray, rules: Rules, points: np.ndarray) -> None:
    """The record of when things happened agrees with its totals: each seat won as many tricks
    as it is credited with, took points exactly if it won a point trick, and won the trick
    that took the queen of spades."""
    n, tricks = rules.n_players, rules.hand_size
    winners = unpack_trick_winners(records["trick_winners"])[:, :tricks].astype(np.int64)
    _require((winners >= 0).all(axis=1), records, "a trick of the hand has no winner")
    point_tricks = records["point_tricks"].astype(np.int64)
    _require(point_tricks >> tricks == 0, records, "a point trick past the hand's last trick")
    won = tricks_won_masks(winners, n)
    _require(
        (card_counts(won) == records["tricks"][:, :n]).all(axis=1),
        records,
        "trick winners do not add up to tricks",
    )
    _require(
        ((won & point_tricks[:, None] != 0) == (points > 0)).all(axis=1),
        records,
        "a seat's points do not match the point tricks it won",
    )
    qs_trick = records["qs_trick"].astype(np.int64)
    rows = np.arange(len(records))
    _require((qs_trick >= 0) & (qs_trick < tricks), records, "the queen of spades was taken in no trick")
    taker = winners[rows, np.clip(qs_trick, 0, tricks - 1)]
    _require(taker == records["qs_taker"], records, "the queen of spades' trick was won by another seat")
    _require(
        (point_tricks >> np.clip(qs_trick, 0, tricks - 1)) & 1 == 1,
        records,
        "the queen's trick carried no points",
    )


def _require(ok: np.ndarray | np.bool_, records: np.ndarray, message: str) -> None:
    bad = np.flatnonzero(~np.asarray(ok))
    if len(bad):
        row = records[bad[0]]
        names = records.dtype.names or ()
        hand = f"game {row['game']} hand {row['game_hand']}" if "game" in names else f"deal {row['deal']}"
        raise InvariantError(
            f"{message} ({hand}, seating {row['seating']}; {len(bad)} of {len(records)} hands)"
        )
