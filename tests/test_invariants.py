"""docs/rules.md invariants over tens of thousands of simulated hands and hundreds of games.

Checked with numpy on ``simulate`` / ``simulate_games`` DataFrames (random agents), with
the deck and every expectation derived here from docs/rules.md, not from the engine:
- each hand: the dealt hands and the kitty partition the deck in play; passed cards come
  from the dealt hand; the pass direction follows the cycle, the dealer rotates; the first
  leader holds the lowest club after the exchange (left of the dealer for ``any``);
  raw points sum to 26 (43 with Black Maria); tricks sum to the hand size; scores follow
  the moon pattern plus the JD and no-trick bonuses; the QS/JD takers are consistent;
  the deal is uniform (every seat holds every card about equally often);
- each game: someone reached the target; the winners follow the tie rule; final scores
  are the raw points plus the moon adjustments;
- reproducibility: the same seed gives identical frames for any chunk size and thread count.
"""

from __future__ import annotations

import numba
import numpy as np
import pandas as pd
import pytest

from hearts_sim import PRESETS, Rules, simulate, simulate_games
from hearts_sim.core.cards import card_counts
from hearts_sim.selfplay import simulate as simulate_module

try:
    from tests.rule_variants import RULE_VARIANTS
except ImportError:  # tests/ itself on sys.path (rootdir-less import mode)
    from rule_variants import RULE_VARIANTS  # type: ignore[no-redef]

HANDS = 30_000
GAMES = 400
QS, JD = 36, 22
CLUBS = (1 << 13) - 1


# ---------------------------------------------------------------- docs/rules.md, independently
def deck_mask(rules: Rules) -> int:
    """Cards in play: remove mode drops 2D (3 players) or 2D and 2C (5 players)."""
    removed = set()
    if rules.deck_mode == "remove" and rules.n_players == 3:
        removed = {13}
    elif rules.deck_mode == "remove" and rules.n_players == 5:
        removed = {13, 0}
    return sum(1 << c for c in range(52) if c not in removed)


def moon_total(rules: Rules) -> int:
    return 43 if rules.black_maria else 26


def cycle(rules: Rules) -> tuple[str, ...]:
    if rules.pass_count == 0 or rules.pass_cycle == "none":
        return ("none",)
    if rules.pass_cycle in ("cycle", "random"):
        return ("left", "right", "across", "none") if rules.n_players == 4 else ("left", "right", "none")
    return (rules.pass_cycle,)


def offsets(directions: np.ndarray, n: int) -> np.ndarray:
    table = {"none": 0, "left": 1, "right": n - 1, "across": 2}
    return np.array([table[d] for d in directions], dtype=np.int64)


def seat_columns(frame: pd.DataFrame, prefix: str, n: int, dtype=np.int64) -> np.ndarray:
    return np.stack([frame[f"{prefix}_{s}"].to_numpy().astype(dtype) for s in range(n)], axis=1)


def bad_rows(frame: pd.DataFrame, ok: np.ndarray) -> str:
    """The first rows breaking an invariant, for the assertion message."""
    return "\n" + frame[~np.asarray(ok)].head(3).T.to_string()


# ---------------------------------------------------------------- hands
@pytest.fixture(scope="module", params=sorted(RULE_VARIANTS))
def hands(request):
    rules = RULE_VARIANTS[request.param]
    return rules, simulate(rules, "random", hands=HANDS, seed=2024)


def test_deal_partitions_the_deck(hands):
    rules, frame = hands
    n = rules.n_players
    dealt = seat_columns(frame, "dealt", n, np.uint64)
    if rules.kitty_size:
        kitty = frame["kitty"].to_numpy().astype(np.uint64)
    else:
        kitty = np.zeros(len(frame), np.uint64)
    sizes_ok = (card_counts(dealt) == rules.hand_size).all(1)
    assert sizes_ok.all(), bad_rows(frame, sizes_ok)
    assert (card_counts(kitty) == rules.kitty_size).all()
    union = np.bitwise_or.reduce(dealt, axis=1) | kitty
    disjoint = card_counts(dealt).sum(1) + card_counts(kitty) == deck_size(rules)
    ok = (union == np.uint64(deck_mask(rules))) & disjoint
    assert ok.all(), bad_rows(frame, ok)


def deck_size(rules: Rules) -> int:
    return deck_mask(rules).bit_count()


def test_deal_is_uniform(hands):
    rules, frame = hands
    n = rules.n_players
    dealt = seat_columns(frame, "dealt", n, np.uint64)
    share = rules.hand_size / deck_size(rules)
    for card in range(52):
        if not deck_mask(rules) >> card & 1:
            continue
        held = ((dealt >> np.uint64(card)) & np.uint64(1)).mean(axis=0)
        assert np.abs(held - share).max() < 0.02, (card, held)


def test_passing_direction_dealer_and_first_leader(hands):
    rules, frame = hands
    n, count = rules.n_players, len(frame)
    deal = frame["deal"].to_numpy()
    assert (deal == np.arange(count)).all()
    assert (frame["dealer"].to_numpy() == deal % n).all()
    directions = frame["pass_direction"].astype(str).to_numpy()
    allowed = cycle(rules)
    if rules.pass_cycle == "random" and len(allowed) > 1:
        for direction in allowed:  # uniform over the cycle's directions, "none" included
            assert abs((directions == direction).mean() - 1 / len(allowed)) < 0.02, direction
        assert set(directions) == set(allowed)
    else:
        expected = np.array(allowed)[deal % len(allowed)]
        assert (directions == expected).all(), bad_rows(frame, directions == expected)

    dealt = seat_columns(frame, "dealt", n, np.uint64)
    passed = seat_columns(frame, "passed", n, np.uint64)
    off = offsets(directions, n)
    assert ((passed & ~dealt) == 0).all(), "a seat passed a card it was not dealt"
    expected_count = np.where(off == 0, 0, rules.pass_count)[:, None]
    assert (card_counts(passed) == expected_count).all()

    rows = np.arange(count)
    held = np.empty_like(dealt)  # the hands after the exchange
    for seat in range(n):
        giver = (seat - off) % n
        held[:, seat] = (dealt[:, seat] & ~passed[:, seat]) | passed[rows, giver]
    assert (np.bitwise_or.reduce(held, axis=1) == np.bitwise_or.reduce(dealt, axis=1)).all()
    assert (card_counts(held) == rules.hand_size).all()
    leader = frame["first_leader"].to_numpy().astype(np.int64)
    if rules.first_lead == "any":
        ok = leader == (frame["dealer"].to_numpy() + 1) % n
    else:
        clubs = np.bitwise_or.reduce(held, axis=1) & np.uint64(CLUBS)
        lowest_club = clubs & (~clubs + np.uint64(1))
        ok = (held[rows, leader] & lowest_club) != 0
    assert ok.all(), bad_rows(frame, ok)


def test_points_tricks_and_score_patterns(hands):
    rules, frame = hands
    n, T = rules.n_players, moon_total(rules)
    rows = np.arange(len(frame))
    points = seat_columns(frame, "points", n)
    scores = seat_columns(frame, "score", n)
    tricks = seat_columns(frame, "tricks", n)
    shooter = frame["moon_shooter"].to_numpy().astype(np.int64)
    qs_taker = frame["qs_taker"].to_numpy().astype(np.int64)
    jd_taker = frame["jd_taker"].to_numpy().astype(np.int64)

    assert (points >= 0).all() and (points.sum(1) == T).all(), bad_rows(frame, points.sum(1) == T)
    assert (tricks >= 0).all() and (tricks.sum(1) == rules.hand_size).all()
    assert ((qs_taker >= 0) & (qs_taker < n)).all() and (points[rows, qs_taker] >= 13).all()
    assert ((jd_taker >= 0) & (jd_taker < n)).all()
    broken = frame["hearts_broken_trick"].to_numpy()
    assert ((broken >= 0) & (broken < rules.hand_size)).all()  # 13 hearts never all fit a kitty

    took_all = points == T  # points are positive per card: T means every point card
    if rules.moon == "off":
        assert (shooter == -1).all()
    else:
        expected = np.where(took_all.any(1), took_all.argmax(1), -1)
        assert (shooter == expected).all(), bad_rows(frame, shooter == expected)

    base = scores.copy()
    base[rows, jd_taker] -= rules.jd_bonus
    moon = shooter >= 0
    is_shooter = np.arange(n)[None, :] == shooter[:, None]
    # others_plus: (0, T, T, ...); self_minus: (-T, 0, 0, ...)
    pattern = np.where(is_shooter, 0, T) if rules.moon == "others_plus" else np.where(is_shooter, -T, 0)
    ok_moon = (base == pattern).all(1) | ~moon
    assert ok_moon.all(), bad_rows(frame, ok_moon)
    raw = base - rules.avoid_all_tricks_bonus * (tricks == 0)
    ok_plain = (raw == points).all(1) | moon
    assert ok_plain.all(), bad_rows(frame, ok_plain)
    if rules.moon != "off":  # random play does shoot the moon now and then
        assert moon.any()


# Regression test for an ENGINE BUG found with this module (fixed in 7fa04d3): simulate()
# labelled pass directions with pass_direction_name(o, n) for every offset o < n; with 5
# players offsets 2 and 3 are both "across", so building the categorical raised
# "ValueError: Categorical categories must be unique" for every 5-player table.
# Minimal repro: simulate("qdan5", hands=3).
def test_simulate_labels_five_player_hands():
    frame = simulate("qdan5", "random", hands=30, seed=1)
    assert set(frame["pass_direction"].astype(str)) <= {"left", "right", "none"}
    assert list(frame["pass_direction"].astype(str)[:6]) == ["left", "right", "none"] * 2


# ---------------------------------------------------------------- games
GAME_VARIANTS = {
    **PRESETS,
    "share_quick": Rules(target_score=50, tie_rule="share"),
    "share_self_minus3": Rules(n_players=3, deck_mode="kitty", moon="self_minus", tie_rule="share"),
    "no_moon": Rules(moon="off", target_score=50),
}


@pytest.mark.parametrize("name", sorted(GAME_VARIANTS))
def test_games_end_and_winners(name):
    rules = GAME_VARIANTS[name]
    n, T = rules.n_players, moon_total(rules)
    frame, hands = simulate_games(rules, "random", games=GAMES, seed=99, hands=True)
    assert len(frame) == GAMES and (frame["game"].to_numpy() == np.arange(GAMES)).all()
    every_hand_adds_up_to_its_game(rules, frame, hands)
    final = seat_columns(frame, "final_score", n)
    won = seat_columns(frame, "won", n, bool)
    moons = seat_columns(frame, "moons", n)
    points = seat_columns(frame, "points", n)
    hand_count = frame["hands"].to_numpy()
    n_winners = frame["n_winners"].to_numpy()
    winner = frame["winner"].to_numpy()

    assert (final.max(1) >= rules.target_score).all(), bad_rows(frame, final.max(1) >= rules.target_score)
    lowest = final.min(1, keepdims=True)
    assert (won == (final == lowest)).all(), bad_rows(frame, (won == (final == lowest)).all(1))
    assert (n_winners == won.sum(1)).all()
    if rules.tie_rule == "continue":
        assert (n_winners == 1).all(), bad_rows(frame, n_winners == 1)
    else:
        assert (n_winners >= 1).all()
        assert (n_winners > 1).any()  # shared first places do happen in a few hundred games
    assert (winner == np.where(n_winners == 1, won.argmax(1), -1)).all()

    assert (hand_count >= 1).all() and (points.sum(1) == T * hand_count).all()
    assert (moons >= 0).all() and (moons.sum(1) <= hand_count).all()
    if rules.moon == "off":
        assert (moons == 0).all()
    if rules.jd_bonus == 0 and rules.avoid_all_tricks_bonus == 0:
        all_moons = moons.sum(1, keepdims=True)
        if rules.moon == "others_plus":
            expected = points - T * moons + T * (all_moons - moons)
        elif rules.moon == "self_minus":
            expected = points - 2 * T * moons
        else:
            expected = points
        assert (final == expected).all(), bad_rows(frame, (final == expected).all(1))


def every_hand_of(games: pd.DataFrame, hands: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``hands`` where each game's hands start and where they end (one seating)."""
    counts = games["hands"].to_numpy()
    assert (hands.groupby("game").size().reindex(games["game"]).to_numpy() == counts).all()
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return first, first + counts - 1


def every_hand_adds_up_to_its_game(rules: Rules, games: pd.DataFrame, hands: pd.DataFrame) -> None:
    """The hands of games (``hands=True``): hand h of a game follows the cycle as hand h of
    ``simulate`` does, its totals before it are the sums of the game's earlier scores, and the
    last hand's totals plus its scores are the game's final scores."""
    n, T = rules.n_players, moon_total(rules)
    first, last = every_hand_of(games, hands)
    number = hands["game_hand"].to_numpy()
    assert (number == np.arange(len(hands)) - np.repeat(first, games["hands"].to_numpy())).all()
    assert (hands["dealer"].to_numpy() == number % n).all()
    if rules.pass_cycle != "random":
        allowed = np.array(cycle(rules))
        assert (hands["pass_direction"].astype(str).to_numpy() == allowed[number % len(allowed)]).all()
    assert (seat_columns(hands, "points", n).sum(1) == T).all()
    scores, totals = seat_columns(hands, "score", n), seat_columns(hands, "game_score", n)
    assert (totals[first] == 0).all()
    following = np.setdiff1d(np.arange(len(hands)), first)
    assert (totals[following] == totals[following - 1] + scores[following - 1]).all()
    assert (totals[last] + scores[last] == seat_columns(games, "final_score", n)).all()
    shooter = hands["moon_shooter"].to_numpy()
    moons = np.stack([np.add.reduceat((shooter == s).astype(np.int64), first) for s in range(n)], 1)
    assert (moons == seat_columns(games, "moons", n)).all()
    won = np.repeat(seat_columns(games, "won", n, bool), games["hands"].to_numpy(), axis=0)
    assert (seat_columns(hands, "game_won", n, bool) == won).all()  # every hand says who won its game


# ---------------------------------------------------------------- reproducibility
THREADS = sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)})
CHUNKS = [1000, 7, None]  # None: the default chunk size
REPRO_RULES = {
    "standard": Rules(),
    "kitty3_random_cycle": Rules(n_players=3, deck_mode="kitty", pass_cycle="random"),
}


def seats_for(rules: Rules) -> list[str]:
    return ["random", "pass=lowest,play=random", "highest", "pass=random,play=lowest", "random"][
        : rules.n_players
    ]


@pytest.mark.parametrize("name", sorted(REPRO_RULES))
def test_simulate_reproducible_across_chunks_and_threads(name):
    rules = REPRO_RULES[name]
    seats = seats_for(rules)
    base = simulate(rules, seats, hands=700, seed=31337, threads=1)
    for chunk in CHUNKS:
        for threads in THREADS:
            kwargs = {} if chunk is None else {"chunk_size": chunk}
            frame = simulate(rules, seats, hands=700, seed=31337, threads=threads, **kwargs)
            pd.testing.assert_frame_equal(frame, base, obj=f"chunk_size={chunk}, threads={threads}")
    other = simulate(rules, seats, hands=700, seed=31338, threads=1)
    assert not other["dealt_0"].equals(base["dealt_0"])
    tail = simulate(rules, seats, hands=500, seed=31337, first_hand=200)
    pd.testing.assert_frame_equal(tail, base.iloc[200:].reset_index(drop=True))


@pytest.mark.parametrize("name", sorted(REPRO_RULES))
def test_simulate_games_reproducible_across_chunks_and_threads(name, monkeypatch):
    rules = REPRO_RULES[name]
    seats = seats_for(rules)
    base = simulate_games(rules, seats, games=150, seed=4242, threads=1)
    base_games, base_hands = simulate_games(rules, seats, games=150, seed=4242, threads=1, hands=True)
    pd.testing.assert_frame_equal(base_games, base)  # keeping the hands changes no game
    for chunk in CHUNKS:
        for threads in THREADS:
            kwargs = {} if chunk is None else {"chunk_size": chunk}
            where = f"chunk_size={chunk}, threads={threads}"
            frame = simulate_games(rules, seats, games=150, seed=4242, threads=threads, **kwargs)
            pd.testing.assert_frame_equal(frame, base, obj=where)
            _, hands = simulate_games(
                rules, seats, games=150, seed=4242, threads=threads, hands=True, **kwargs
            )
            pd.testing.assert_frame_equal(hands, base_hands, obj=f"hands, {where}")
    # room for one hand a game: every block runs out, and its games are played again with more
    monkeypatch.setattr(simulate_module, "HANDS_PER_GAME_GUESS", 1)
    for threads in THREADS:
        _, hands = simulate_games(rules, seats, games=150, seed=4242, threads=threads, hands=True)
        pd.testing.assert_frame_equal(hands, base_hands, obj=f"hands played again, threads={threads}")
    tail = simulate_games(rules, seats, games=100, seed=4242, first_game=50)
    pd.testing.assert_frame_equal(tail, base.iloc[50:].reset_index(drop=True))
    _, tail_hands = simulate_games(rules, seats, games=100, seed=4242, first_game=50, hands=True)
    later = base_hands[base_hands["game"] >= 50].reset_index(drop=True)
    pd.testing.assert_frame_equal(tail_hands, later)


# ---------------------------------------------------------------- the checker bench runs
def corrupt(record: np.void, damage: str) -> None:
    """Break one fact of a hand record (a view into the records) in the way ``damage`` names."""
    if damage == "a card was dealt twice":
        record["dealt"][0] |= record["dealt"][1]
    elif damage == "tricks do not add up":
        record["tricks"][0] += 1
    elif damage == "raw points do not add up":
        record["points"][0] += 1
    elif damage == "trick winners do not add up":
        record["trick_winners"] ^= np.uint64(1)  # the first trick's winner: seat 0 <-> 1, 2 <-> 3
    elif damage == "a trick of the hand has no winner":
        record["trick_winners"] |= np.uint64(7 << 3 * 12)  # the last trick marked as not played
    elif damage == "a point trick past the hand's last trick":
        record["point_tricks"] |= 1 << 13
    elif damage == "points do not match the point tricks":
        record["point_tricks"] = 0
    elif damage == "the queen of spades was taken in no trick":
        record["qs_trick"] = -1
    elif damage == "won by another seat":
        record["qs_taker"] = (record["qs_taker"] + 1) % 4


@pytest.mark.parametrize(
    "damage",
    [
        "a card was dealt twice",
        "tricks do not add up",
        "raw points do not add up",
        "trick winners do not add up",
        "a trick of the hand has no winner",
        "a point trick past the hand's last trick",
        "points do not match the point tricks",
        "the queen of spades was taken in no trick",
        "won by another seat",
    ],
)
def test_the_invariant_checker_names_what_a_record_breaks(damage: str) -> None:
    """``check_hand_records`` (run by ``hearts-sim bench`` on millions of hands) passes the
    kernel's records and refuses each kind of damage by name."""
    from hearts_sim.selfplay.invariants import InvariantError, check_hand_records
    from hearts_sim.selfplay.simulate import Table, run_hands

    rules = Rules()
    records = run_hands(Table.build(rules, [["rule", "random", "lowest", "highest"]]), 7, 0, 200)
    assert check_hand_records(records, rules) == 200
    corrupt(records[0], damage)
    with pytest.raises(InvariantError, match=damage):
        check_hand_records(records, rules)


def test_card_counts_under_numpy_1_counts_as_numpy_2_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy 1.26 (the floor pyproject.toml allows) has no ``np.bitwise_count``: ``card_counts``
    sums the set bits of each byte there. Both ways on the same bitboards, every shape."""
    rng = np.random.default_rng(5)
    masks = rng.integers(0, 2**63, size=(200, 4), dtype=np.uint64) | (np.uint64(1) << np.uint64(63))
    masks[0] = [0, 1, 2**52 - 1, 2**64 - 1]
    native = card_counts(masks)
    expected = [[bin(int(m)).count("1") for m in row] for row in masks]
    assert native.tolist() == expected and native.dtype == np.int64
    monkeypatch.delattr(np, "bitwise_count", raising=False)  # numpy 1: already without it
    assert card_counts(masks).tolist() == expected and card_counts(masks).dtype == np.int64
    assert card_counts(masks[:, 2]).tolist() == [row[2] for row in expected]
    assert int(card_counts(masks[0, 2])) == 52  # a scalar
