"""Conformance with OpenSpiel's ``hearts`` under the ``openspiel`` preset, both ways round.

Forward: hands played by OpenSpiel itself (uniform chance, uniform random legal moves,
``tests/openspiel_oracle.py``) are replayed move by move in ``HandState.from_deal``: the
player to move and the legal set agree at every play, and the raw points, moon shooter
and final scores (OpenSpiel's moon-adjusted points, ``26 - returns``) agree at the end.

Reverse: hands whose every move is chosen by OUR engine (random legal cards, and a greedy
seat that shoots the moon now and then) are fed to OpenSpiel, which must accept each move
with the same legal set and end with the same points.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pyspiel")

from hearts_sim import HandState, Rules  # noqa: E402

try:
    from tests import openspiel_oracle as oracle
except ImportError:  # tests/ on sys.path instead of the repository root
    import openspiel_oracle as oracle  # type: ignore[no-redef]

RULES = Rules.preset("openspiel")
SEED_BLOCKS = [range(start, start + 60) for start in range(0, 300, 60)]


def names(cards) -> str:
    return " ".join(oracle.card_name(c) for c in sorted(cards))


def repro(h: dict, upto: int) -> str:
    hands = "; ".join(names(hand) for hand in h["hands"])
    passes = "; ".join(names(p) for p in h["passes"])
    plays = " ".join(f"{s}:{oracle.card_name(c)}" for s, c in h["plays"][:upto])
    return (
        f"\nrepro: Rules.preset('openspiel'), hands [{hands}], direction {h['pass_direction']},"
        f" passes [{passes}], plays {plays}"
    )


@pytest.mark.parametrize("seeds", SEED_BLOCKS, ids=lambda r: f"seeds{r.start}-{r.stop - 1}")
def test_openspiel_hands_replay_in_handstate(seeds):
    for seed in seeds:
        h = oracle.play_random_openspiel_hand(seed)
        state = HandState.from_deal(RULES, h["hands"], h["pass_direction"])
        assert state.pass_direction == h["pass_direction"]
        if h["pass_direction"] == "none":
            assert state.phase == "play"
        else:
            assert state.phase == "pass"
            for seat in range(4):
                state.pass_cards(seat, h["passes"][seat])
        for i, ((seat, card), legal) in enumerate(zip(h["plays"], h["legal_sets"], strict=True)):
            assert state.phase == "play", f"seed {seed} play {i}{repro(h, i)}"
            assert state.current_player == seat, f"seed {seed} play {i}{repro(h, i)}"
            ours = set(state.legal_moves())
            assert ours == legal, (
                f"seed {seed} play {i}: ours {names(ours)}, OpenSpiel {names(legal)}{repro(h, i)}"
            )
            state.play(card)
        assert state.phase == "done", f"seed {seed}"
        assert [int(p) for p in state.points()] == h["points"], f"seed {seed}{repro(h, 52)}"
        assert state.moon_shooter == h["moon_shooter"], f"seed {seed}{repro(h, 52)}"
        assert [int(s) for s in state.scores()] == [26 - int(r) for r in h["returns"]], f"seed {seed}"


def play_in_our_engine(rng: random.Random, greedy_seat: int | None) -> dict:
    """Deal, pass and play one hand choosing every move from OUR engine's legal sets."""
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [sorted(deck[13 * s : 13 * (s + 1)]) for s in range(4)]
    direction = rng.choice(["left", "right", "across", "none"])
    state = HandState.from_deal(RULES, hands, direction)
    passes: list[list[int]] = [[] for _ in range(4)]
    if direction != "none":
        for seat in rng.sample(range(4), 4):  # simultaneous: any order
            passes[seat] = rng.sample(hands[seat], 3)
            state.pass_cards(seat, passes[seat])
    plays, legal_sets = [], []
    while state.phase == "play":
        seat = state.current_player
        legal = sorted(state.legal_moves())
        if greedy_seat is not None:  # one seat plays high, the others low: moons happen
            card = legal[-1] if seat == greedy_seat else legal[0]
        else:
            card = rng.choice(legal)
        plays.append((seat, card))
        legal_sets.append(set(legal))
        state.play(card)
    return {
        "hands": hands,
        "pass_direction": direction,
        "passes": passes,
        "plays": plays,
        "legal_sets": legal_sets,
        "points": [int(p) for p in state.points()],
        "moon_shooter": state.moon_shooter,
        "scores": [int(s) for s in state.scores()],
    }


@pytest.mark.parametrize("greedy", [False, True], ids=["random", "greedy"])
def test_our_moves_accepted_by_openspiel(greedy):
    rng = random.Random(f"reverse-{greedy}")
    moons = 0
    for k in range(100):
        ours = play_in_our_engine(rng, k % 4 if greedy else None)
        theirs = oracle.replay_in_openspiel(
            ours["hands"], ours["pass_direction"], ours["passes"], ours["plays"]
        )
        assert theirs["terminal"], repro(ours, 52)
        for i, (mine, os_legal) in enumerate(zip(ours["legal_sets"], theirs["legal_sets"], strict=True)):
            assert mine == os_legal, (
                f"play {i}: ours {names(mine)}, OpenSpiel {names(os_legal)}{repro(ours, i)}"
            )
        assert ours["points"] == theirs["points"], repro(ours, 52)
        assert ours["moon_shooter"] == theirs["moon_shooter"], repro(ours, 52)
        assert ours["scores"] == [26 - int(r) for r in theirs["returns"]], repro(ours, 52)
        moons += ours["moon_shooter"] >= 0
    if greedy:
        assert moons > 0  # the moon path was compared too
