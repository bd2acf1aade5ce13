"""OpenSpiel's ``hearts`` as a reference oracle, translated into hearts_sim's encoding.

Facts established from open_spiel 2.0.2 (``open_spiel/games/hearts/hearts.{h,cc}``)
and checked against ``pyspiel``; the tests in ``test_openspiel_oracle.py`` pin them.

Card / action numbering
    OpenSpiel: action = rank*4 + suit, suits clubs=0, diamonds=1, HEARTS=2, SPADES=3,
    rank 0 = two ... 12 = ace (2C=0, 2D=1, 2H=2, 2S=3, QS=43, AH=50, AS=51).
    Ours:      card = suit*13 + rank, suits clubs=0, diamonds=1, SPADES=2, HEARTS=3
    (2C=0, QS=36, AH=51). Conversion: ``os = rank*4 + (0, 1, 3, 2)[suit]``; the suit
    permutation is its own inverse. The same 52 ids are used for deal, pass and play
    actions; ``action_to_string`` gives e.g. "2C", "TD", "QS" (at the very first node it
    gives "No Pass", "Left", "Across", "Right" instead).

Chance and move order of one hand (the game is a single hand, no match state)
    1. Pass-direction chance node (the first action): outcomes 0..3, each 1/4:
       0 "No Pass", 1 "Left", 2 "Across", 3 "Right". The random direction therefore
       INCLUDES no-pass (1/4). With ``pass_cards=False`` only 0 is legal.
       Seat ``s`` passes to ``(s + action) % 4``: Left = s+1, Across = s+2,
       Right = s+3 = s-1, i.e. exactly our "left"/"across"/"right".
    2. Deal: 52 chance nodes, each uniform over the undealt cards; the i-th card dealt
       goes to seat ``i % 4`` (so a hand is dealt as 0,1,2,3,0,1,...).
    3. Pass (skipped for No Pass): seat 0 chooses its 3 cards (one action each, any card
       still in its hand), then seat 1, 2, 3. Cards change hands only after seat 3's
       third pass, so nobody can pass on a received card.
    4. Play: the holder of 2C (after passing) leads and must lead 2C
       (``can_lead_any_club=False``). Play goes s -> s+1; the trick winner (highest card
       of the led suit) leads next.

Legality, in the order OpenSpiel applies it (``PlayLegalActions``)
    - Must follow the led suit if able.
    - First trick, void in the led suit (``no_pts_on_first_trick=True``): any card that
      is neither a heart nor QS; if the hand holds only hearts and QS, ANY card,
      including QS (no preference for a heart over QS).
    - Leading: no heart until hearts are broken, unless the hand is all hearts.
      Hearts are broken by any heart being played (a first-trick heart discard
      included) and, by default (``qs_breaks_hearts=True``), by QS being played.
      A leader holding only hearts + QS before hearts are broken must lead QS
      (``can_lead_hearts_instead_of_qs=False``).
    - ``must_break_hearts=False`` would start the hand with hearts already broken.

Points and returns
    Raw points: each heart 1 and QS 13 to the trick winner (JD -10 only with
    ``jd_bonus``); ``state.points(p)`` gives these during play. At the end,
    ``ComputeScore`` shoots the moon if one player took every trick that carried points
    (a JD-only trick is ignored): the shooter's points -26 (-> 0), every other
    player's +26. ``state.points(p)`` AFTER the end is this adjusted value (sum 78 on a
    moon, 26 otherwise, so the raw points can be recovered exactly).
    ``state.returns()[p] = 26 - adjusted_points[p]`` (a utility, higher is better):
    no moon -> ``26 - raw[p]``; moon -> shooter 26.0, everyone else 0.0. Returns are
    all 0.0 before the end. ``evaluate_bots`` returns these returns.
    (Default parameters: avoid_all_tricks_bonus=False, can_lead_any_club=False,
    can_lead_hearts_instead_of_qs=False, jd_bonus=False, must_break_hearts=True,
    no_pts_on_first_trick=True, pass_cards=True, qs_breaks_hearts=True.)

``pyspiel`` is imported lazily, so this module imports without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hearts_sim.studies.openspiel_peer import ACTION_TO_DIRECTION, DIRECTION_TO_ACTION, os_to_our, our_to_os

N_SEATS = 4
N_CARDS = 52
PASS_COUNT = 3
TOTAL_POINTS = 26
QUEEN_OF_SPADES = 36  # ours
_OS_QUEEN_OF_SPADES = 43

_RANK_CHARS = "23456789TJQKA"
_SUIT_CHARS = "CDSH"  # our suit order

DIRECTION_OFFSET = {"none": 0, "left": 1, "across": 2, "right": 3}  # seat -> seat+offset


class OpenSpielRejectedMove(ValueError):
    """OpenSpiel refused a move (wrong seat to act, or a card not among its legal actions)."""


def card_name(card: int) -> str:
    """Our card id -> "QS"-style name (the same text OpenSpiel's action_to_string uses)."""
    suit, rank = divmod(int(card), 13)
    return _RANK_CHARS[rank] + _SUIT_CHARS[suit]


def card_points(card: int) -> int:
    """Raw penalty points of our card: heart 1, QS 13, else 0."""
    return 1 if card // 13 == 3 else (13 if card == QUEEN_OF_SPADES else 0)


def _load_game(params: dict | None = None):
    import pyspiel  # lazy: keep this module importable without open_spiel

    return pyspiel.load_game("hearts", params or {})


def _legal_ours(state) -> set[int]:
    return {os_to_our(a) for a in state.legal_actions()}


def _raw_points(state) -> tuple[list[int], int]:
    """Raw (pre-moon) points per seat and the moon shooter (-1 if none) of a state."""
    pts = [int(state.points(p)) for p in range(N_SEATS)]
    if not state.is_terminal():
        return pts, -1
    if sum(pts) == 3 * TOTAL_POINTS:  # moon: shooter 0, others 26 after adjustment
        shooter = pts.index(0)
        return [TOTAL_POINTS if p == shooter else 0 for p in range(N_SEATS)], shooter
    if sum(pts) != TOTAL_POINTS:
        raise AssertionError(f"unexpected OpenSpiel terminal points {pts}")
    return pts, -1


def _points_from_plays(plays: Sequence[tuple[int, int]]) -> list[int]:
    """Independent recount of raw points from complete tricks (highest of led suit wins)."""
    pts = [0] * N_SEATS
    for t in range(len(plays) // N_SEATS):
        trick = plays[t * N_SEATS : (t + 1) * N_SEATS]
        led = trick[0][1] // 13
        winner = max((c, s) for s, c in trick if c // 13 == led)[1]
        pts[winner] += sum(card_points(c) for _, c in trick)
    return pts


def _finish(state, out: dict) -> dict:
    """Fill points / returns / moon_shooter / next-move fields and cross-check them."""
    points, shooter = _raw_points(state)
    out["points"] = points
    out["moon_shooter"] = shooter
    out["terminal"] = bool(state.is_terminal())
    if state.is_terminal():
        returns = [float(r) for r in state.returns()]
        out["returns"] = returns
        out["to_play"] = -1
        out["next_legal"] = set()
        recount = _points_from_plays(out["plays"])
        if recount != points:
            raise AssertionError(f"OpenSpiel points {points} != recount from plays {recount}")
        adjusted = [int(state.points(p)) for p in range(N_SEATS)]
        if returns != [float(TOTAL_POINTS - a) for a in adjusted]:
            raise AssertionError(f"returns {returns} != 26 - adjusted points {adjusted}")
    else:
        out["returns"] = None
        out["to_play"] = int(state.current_player())
        out["next_legal"] = _legal_ours(state) if state.current_player() >= 0 else set()
    return out


def play_random_openspiel_hand(seed: int) -> dict[str, Any]:
    """Play one hand of default ``hearts``: uniform chance outcomes, uniform random legal moves.

    Returns, in our encoding: ``hands`` (4 sorted lists, as dealt, before passing),
    ``pass_direction``, ``passes`` (4 lists in the order passed; empty for "none"),
    ``plays`` [(seat, card)], ``legal_sets`` (set of legal cards before each play),
    ``points`` (raw, pre-moon), ``returns`` (OpenSpiel's), ``moon_shooter`` (-1 if none),
    plus ``terminal`` (True), ``to_play`` (-1), ``next_legal`` (empty set).
    """
    rng = np.random.default_rng(seed)
    state = _load_game().new_initial_state()

    def chance() -> int:
        actions, probs = zip(*state.chance_outcomes(), strict=True)
        p = np.asarray(probs, dtype=float)
        return int(actions[rng.choice(len(actions), p=p / p.sum())])

    direction_action = chance()
    state.apply_action(direction_action)
    direction = ACTION_TO_DIRECTION[direction_action]

    hands: list[list[int]] = [[] for _ in range(N_SEATS)]
    for i in range(N_CARDS):
        a = chance()
        hands[i % N_SEATS].append(os_to_our(a))
        state.apply_action(a)

    passes: list[list[int]] = [[] for _ in range(N_SEATS)]
    plays: list[tuple[int, int]] = []
    legal_sets: list[set[int]] = []
    n_pass_moves = 0 if direction == "none" else N_SEATS * PASS_COUNT
    move = 0
    while not state.is_terminal():
        if state.is_chance_node():
            raise AssertionError("unexpected chance node after the deal")
        seat = int(state.current_player())
        legal = state.legal_actions()
        a = int(legal[rng.integers(len(legal))])
        if move < n_pass_moves:
            passes[seat].append(os_to_our(a))
        else:
            legal_sets.append({os_to_our(x) for x in legal})
            plays.append((seat, os_to_our(a)))
        state.apply_action(a)
        move += 1

    out = {
        "hands": [sorted(h) for h in hands],
        "pass_direction": direction,
        "passes": passes,
        "plays": plays,
        "legal_sets": legal_sets,
    }
    return _finish(state, out)


def replay_in_openspiel(
    hands: Sequence[Sequence[int]],
    pass_direction: str,
    passes: Sequence[Sequence[int]],
    plays: Sequence[tuple[int, int]],
) -> dict[str, Any]:
    """Drive default ``hearts`` through a given deal, direction, passes and plays (our encoding).

    ``plays`` may be a prefix of the hand. Returns the dict of ``play_random_openspiel_hand``
    (``hands`` echoed as given); when the hand is unfinished, ``returns`` is None, ``points``
    are the raw points so far, and ``to_play`` / ``next_legal`` describe the next move.
    Raises ``OpenSpielRejectedMove`` if OpenSpiel refuses a pass or play, ``ValueError`` for
    a malformed deal or direction.
    """
    if pass_direction not in DIRECTION_TO_ACTION:
        raise ValueError(f"pass_direction {pass_direction!r}: choose one of {list(DIRECTION_TO_ACTION)}")
    hands = [[int(c) for c in h] for h in hands]
    if len(hands) != N_SEATS or any(len(h) != 13 for h in hands):
        raise ValueError(f"hands must be 4 lists of 13 cards, got sizes {[len(h) for h in hands]}")
    if sorted(c for h in hands for c in h) != list(range(N_CARDS)):
        raise ValueError("hands must hold each of the 52 cards exactly once")
    passes = [[int(c) for c in p] for p in passes]
    if len(passes) != N_SEATS:
        raise ValueError("passes must be 4 lists")
    want = 0 if pass_direction == "none" else PASS_COUNT
    if any(len(p) != want for p in passes):
        raise ValueError(
            f"direction {pass_direction!r} needs {want} passed cards per seat, got {[len(p) for p in passes]}"
        )

    state = _load_game().new_initial_state()
    state.apply_action(DIRECTION_TO_ACTION[pass_direction])
    for i in range(13):
        for seat in range(N_SEATS):
            state.apply_action(our_to_os(hands[seat][i]))

    def apply(kind: str, step: int, seat: int, card: int) -> set[int]:
        if state.is_terminal():
            raise OpenSpielRejectedMove(f"{kind} {step}: seat {seat} {card_name(card)}: hand is over")
        to_move = int(state.current_player())
        legal = _legal_ours(state)
        if to_move != seat:
            raise OpenSpielRejectedMove(
                f"{kind} {step}: seat {seat} tried {card_name(card)} ({card}) but OpenSpiel "
                f"expects seat {to_move} to move"
            )
        if card not in legal:
            raise OpenSpielRejectedMove(
                f"{kind} {step}: seat {seat} tried {card_name(card)} ({card}); OpenSpiel allows "
                f"{sorted(legal)} = {[card_name(c) for c in sorted(legal)]}"
            )
        state.apply_action(our_to_os(card))
        return legal

    step = 0
    for seat in range(N_SEATS):
        for card in passes[seat]:
            apply("pass", step, seat, card)
            step += 1

    legal_sets: list[set[int]] = []
    norm_plays: list[tuple[int, int]] = []
    for i, (seat, card) in enumerate(plays):
        legal_sets.append(apply("play", i, int(seat), int(card)))
        norm_plays.append((int(seat), int(card)))

    out = {
        "hands": hands,
        "pass_direction": pass_direction,
        "passes": passes,
        "plays": norm_plays,
        "legal_sets": legal_sets,
    }
    return _finish(state, out)
