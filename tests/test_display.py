"""Notebook display: ``_repr_html_`` of CardSet, HandState, Observation and Replay is well-formed
markup (parsed strictly, as XML) and shows every card once, where it is; an Observation shows
nothing its seat cannot see. Plain-text reprs stay as they were."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

from hearts_sim import CardSet, HandState, Observation, Rules, simulate
from hearts_sim import analysis as an
from hearts_sim.core.cards import RED, parse_card
from hearts_sim.engine.hand import deck_cards

try:
    from tests.agent_checks import CHECK_RULES
except ImportError:  # tests/ itself on sys.path
    from agent_checks import CHECK_RULES  # type: ignore[no-redef]


def parse(markup: str) -> ET.Element:
    """The markup as an element tree; raises on anything not well-formed (unclosed or
    mismatched tags, bare ampersands, named entities)."""
    return ET.fromstring(f"<root>{markup}</root>")


def cards_in(element: ET.Element) -> Counter[int]:
    """How often each card is shown under ``element``."""
    return Counter(parse_card(e.attrib["data-card"]) for e in element.iter() if "data-card" in e.attrib)


def mask(counts: Counter[int]) -> int:
    assert all(c == 1 for c in counts.values()), (
        f"cards shown twice: {[k for k, c in counts.items() if c > 1]}"
    )
    return sum(1 << card for card in counts)


def labelled_rows(table: ET.Element) -> dict[str, ET.Element]:
    """The body rows of a table by the text of their first cell."""
    rows = {}
    for row in table.iter("tr"):
        cells = list(row)
        if cells and cells[0].tag == "td":
            rows["".join(cells[0].itertext())] = row
    return rows


def table(root: ET.Element, kind: str) -> ET.Element:
    found = [t for t in root.iter("table") if kind in t.attrib.get("class", "").split()]
    assert len(found) == 1, f"expected one {kind} table"
    return found[0]


def play_to(state: HandState, cards: int) -> None:
    """Seats yet to pass pass their lowest cards, then the lowest legal card is played ``cards`` times."""
    if state.phase == "pass":
        for seat in range(state.n_players):
            if not int(state.record["passes_made"]) >> seat & 1:
                state.pass_cards(seat, list(state.hand(seat))[: state.rules.pass_count])
    for _ in range(cards):
        state.play(next(iter(state.legal_moves())))


# ---------------------------------------------------------------- CardSet
@pytest.mark.parametrize("seed", range(6))
def test_cardset_html_every_card_once_by_suit_red_suits_red(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cards = CardSet([int(c) for c in rng.choice(52, size=int(rng.integers(0, 53)), replace=False)])
    root = parse(cards._repr_html_())
    spans = [e for e in root.iter() if "data-card" in e.attrib]
    assert [e.attrib["data-card"] for e in spans] == cards.to_list()  # sorted by suit, then rank
    assert mask(cards_in(root)) == cards.mask
    for span in spans:
        red = span.attrib["data-card"][-1] in "DH"
        assert (f"color:{RED}" in span.attrib["style"]) == red
        assert "".join(span.itertext())[0] in "♣♦♠♥"
    assert repr(cards).startswith("CardSet('") and str(CardSet("QS 2C")) == "♣2 ♠Q"  # plain text unchanged


# ---------------------------------------------------------------- HandState
@pytest.mark.parametrize("name", sorted(CHECK_RULES))
def test_hand_state_html_shows_the_whole_deck_once(name: str) -> None:
    rules = CHECK_RULES[name]
    deck = int(deck_cards(rules.to_tuple()))
    state = HandState.deal(rules, seed=3, hand=1)
    total = rules.hand_size * rules.n_players
    for played in (0, 1, rules.n_players + 2, total):
        current = state.copy()
        play_to(current, played)
        root = parse(current._repr_html_())
        assert mask(cards_in(root)) == deck, f"after {played} cards"
        caption = "".join(next(root.iter("caption")).itertext())
        assert f"pass {current.pass_direction}" in caption
        if current.phase == "done":
            assert "hand over" in caption
    assert str(state).startswith(rules.label())  # the text table names the rules as the HTML does


def test_hand_state_html_marks_the_pass_being_chosen_and_the_trick() -> None:
    state = HandState.deal("standard", seed=7)
    state.pass_cards(0, "AD KS AH")
    root = parse(state._repr_html_())
    seat_0 = labelled_rows(table(root, "hs-hand-state"))["0"]
    underlined = {parse_card(e.attrib["data-card"]) for u in seat_0.iter("u") for e in u}
    assert underlined == set(CardSet("AD KS AH"))
    play_to(state, 2)
    trick_cells = [
        list(row)[2] for row in labelled_rows(table(parse(state._repr_html_()), "hs-hand-state")).values()
    ]
    assert sum(len(cards_in(cell)) for cell in trick_cells) == 2


# ---------------------------------------------------------------- Observation
def observations_along_a_hand(rules: Rules) -> Iterator[Observation]:
    """Every seat's observation before the first card, in the third trick and at the end."""
    state = HandState.deal(rules, seed=5, hand=0)
    n = rules.n_players
    for played in (0, 2 * n + 1, rules.hand_size * n):
        current = state.copy()
        play_to(current, played)
        yield from (current.observation(seat) for seat in range(n))


@pytest.mark.parametrize("name", ["standard", "kitty3", "qdan5", "any_lead"])
def test_observation_html_shows_what_the_seat_sees_and_nothing_else(name: str) -> None:
    for obs in observations_along_a_hand(CHECK_RULES[name]):
        root = parse(obs._repr_html_())
        rows = labelled_rows(table(root, "hs-observation"))
        assert mask(cards_in(rows["hand"])) == obs.hand.mask
        passed = [row for label, row in rows.items() if label.startswith("passed to")]
        received = [row for label, row in rows.items() if label.startswith("received from")]
        assert sum(mask(cards_in(r)) for r in passed) == obs.passed.mask
        assert sum(mask(cards_in(r)) for r in received) == obs.received.mask
        assert (mask(cards_in(rows["kitty"])) if "kitty" in rows else 0) == obs.kitty.mask
        tricks = [t for t in root.iter("table") if "hs-tricks" in t.attrib["class"]]
        played_cards = sum(1 << card for _, card in obs.plays)
        assert (mask(cards_in(tricks[0])) if tricks else 0) == played_cards
        known = obs.hand.mask | obs.passed.mask | obs.received.mask | obs.kitty.mask | played_cards
        assert mask(Counter(set(cards_in(root)))) & ~known == 0, "shows a card the seat cannot see"


@pytest.mark.parametrize("name", ["standard", "qdan5", "kitty3", "any_lead"])
def test_an_observation_shows_as_one_line_whose_hand_pastes_back(name: str) -> None:
    """``repr(obs)`` (``print`` of a list of them, a notebook's text output): the seat, the rules'
    label, where the hand is, whether it is to move and its cards as ``CardSet.parse`` reads them;
    the dataclass's was 700 to 1,100 characters, its cards as integers."""
    rules = CHECK_RULES[name]
    for obs in observations_along_a_hand(rules):
        shown, cards = repr(obs).removesuffix(">").split(": hand ")
        assert shown.startswith(f"<Observation seat {obs.seat}, {rules.label()}, ")
        assert shown.endswith(", to move") == obs.to_move
        assert CardSet.parse("" if cards == "-" else cards) == obs.hand
        where = shown.split(", ")[-2 if obs.to_move else -1]
        trick = f"trick {len(obs.plays) // rules.n_players + 1}"
        assert where == {"pass": f"pass {obs.pass_direction}", "done": "hand over"}.get(obs.phase, trick)


# ---------------------------------------------------------------- Replay
def test_replay_html_deal_and_tricks_each_show_every_card_once() -> None:
    df = simulate(CHECK_RULES["kitty3"], ["rule", "highest", "random"], hands=5, seed=6)
    replay = an.replay(df.iloc[2]).mark(4, "look here & <there>")
    root = parse(replay._repr_html_())
    deal = table(root, "hs-deal")
    rows = labelled_rows(deal)
    dealt = [mask(cards_in(list(rows[str(s)])[2])) for s in range(3)]
    assert dealt == [c.mask for c in replay.dealt]
    assert mask(cards_in(list(rows["kitty"])[2])) == replay.kitty.mask
    passed = [mask(cards_in(list(rows[str(s)])[3])) for s in range(3)]
    assert passed == [c.mask for c in replay.passed]
    tricks = table(root, "hs-tricks")
    assert mask(cards_in(tricks)) == sum(1 << card for _, card in replay.plays)
    trick_rows = labelled_rows(tricks)
    assert list(trick_rows) == [str(t + 1) for t in range(17)]
    assert "background" in trick_rows["5"].attrib.get("style", "")
    assert "look here & <there>" in "".join(trick_rows["5"].itertext())
    assert "style" not in trick_rows["4"].attrib
    for trick in replay.tricks:  # the winner's card is the bold one
        bold = [e for e in trick_rows[str(trick.number + 1)].iter() if "bold" in e.attrib.get("style", "")]
        assert [parse_card(e.attrib["data-card"]) for e in bold] == [dict(trick.cards)[trick.winner]]
    text = str(replay).splitlines()  # the caption, a line per seat, the kitty, a line per trick, the result
    assert len(text) == 1 + len(replay.agents) + 1 + 17 + 1
    for seat, agent in enumerate(replay.agents):
        assert text[1 + seat].startswith(f"seat {seat} {agent} ")
        assert text[1 + seat].split(" | ")[1] == replay.dealt[seat].by_suit()
    assert text[1 + len(replay.agents)] == f"kitty {replay.kitty}, to the winner of trick 1"
    assert text[1 + len(replay.agents) + 1 + 4].startswith(" 5. ")
    assert text[1 + len(replay.agents) + 1 + 4].endswith("<- look here & <there>")


@pytest.mark.parametrize("name", ["standard", "qdan3", "qdan5"])
def test_the_text_table_aligns_its_seats_and_shows_the_chosen_passes(name: str) -> None:
    """``print(state)``: every seat's figures in one column (a fixed width ran over with three
    players' 17 cards), the cards a seat has chosen to pass (nothing said which had), and "-" for
    a hand played out (each suit's "-" before)."""
    rules = CHECK_RULES[name]
    state = HandState.deal(rules, seed=3, hand=0)
    n = rules.n_players
    chosen = list(state.hand(1))[: rules.pass_count]
    state.pass_cards(1, chosen)
    rows = str(state).splitlines()[1 : 1 + n]
    assert len({row.index("  points ") for row in rows}) == 1, rows
    assert rows[1].endswith(f"  passes {CardSet(chosen)}") and "passes" not in rows[0] + rows[2]
    play_to(state, rules.hand_size * n)
    rows = str(state).splitlines()[1 : 1 + n]
    assert all(row.startswith(f"  seat {seat}: -  points ") for seat, row in enumerate(rows)), rows


def test_the_text_views_show_the_kitty_until_the_first_trick_takes_it() -> None:
    """``print(state)`` said ``kitty: (taken)`` from the first card of trick 1 on, while no one
    had taken it (the HTML showed it); ``print(replay)`` left the kitty out, so trick 1 showed
    points that no card in it carried."""
    from hearts_sim import Rules

    rules = Rules.preset("qdan3", deck_mode="kitty", pass_count=0)
    state = HandState.deal(rules, seed=1, hand=0)
    kitty = str(state.kitty)
    state.play(next(iter(state.legal_moves())))
    assert f"  kitty: {kitty}" in str(state).splitlines()
    while state.trick_number == 0:
        state.play(next(iter(state.legal_moves())))
    assert f"  kitty: (taken by seat {state.trick_winners[0]})" in str(state).splitlines()
    records = simulate(Rules.preset("qdan5", deck_mode="kitty"), "random", hands=3, seed=2, progress=False)
    shown = an.replay(records.iloc[1])
    assert f"kitty {shown.kitty}, to the winner of trick 1" in str(shown).splitlines()


def test_reprs_count_tricks_from_one_and_a_game_says_where_it_stands() -> None:
    """``repr(state)`` said trick 0 where ``str`` and the HTML say trick 1, and ``to play None``
    while passing; ``repr(Game(...))`` was the default ``<... object at 0x...>``."""
    from hearts_sim import Game

    game = Game("quick", seed=3)
    assert repr(game) == "<Game quick (target_score=50), 0 hands played, totals [0, 0, 0, 0]>"
    while not game.over:
        state = game.next_hand()
        if state.phase == "pass":
            assert repr(state) == f"<HandState pass {state.pass_direction}>"
            for seat in range(4):
                state.pass_cards(seat, list(state.hand(seat))[:3])
        assert repr(state) == f"<HandState play, trick 1, to play {state.current_player}>"
        while state.phase != "done":
            state.play(next(iter(state.legal_moves())))
        scores = [int(x) for x in state.scores()]
        assert repr(state) == f"<HandState done, scores {scores}>" and "np." not in repr(state)
        game.finish_hand(state)
        if not game.over:  # the next hand's table shows the totals before it, as a replay's caption does
            shown = f"game totals before it {game.totals}"
            assert shown in str(game.next_hand()).splitlines()[0] and shown in game.next_hand()._repr_html_()
    assert repr(game).endswith(f"hands played, totals {game.totals}, won by {game.winners}>")
