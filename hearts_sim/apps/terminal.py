"""``hearts-sim play``: a whole game in the terminal, one person against CPU opponents.

The person sits in seat 0 (``--seat`` to change). Each turn shows the hand sorted by suit,
the trick so far, the scores, the pass direction and the legal cards; cards are typed
like ``qs``, ``10h`` or ``♠Q`` (three of them, space-separated, to pass). An illegal or
malformed card is refused with the reason and asked again. At any prompt ``help`` (or ``?``)
says this, ``hint`` shows what the CPU opponent would do in the person's place, and ``quit``
leaves the game with the totals so far. ``--seed`` replays a game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hearts_sim.core.cards import CardSet, card_str, parse_card
from hearts_sim.core.rules import Rules, pass_offset
from hearts_sim.game.hand_state import Game, HandState, IllegalMoveError, points_of

if TYPE_CHECKING:
    from agents.api import Agent

Ask = Callable[[str], str]
Say = Callable[[str], None]


QUIT = ("quit", "exit", "q")  # what leaves the game at any prompt (no card is written so)
HELP = ("help", "?", "h")
HINT = "hint"
HINT_PASSES = 4  # candidate passes a search level's hint shows, best first
HELP_TEXT = (
    "  type cards like qs, 10h, th or ♠Q (to pass, all of them, space-separated); "
    "hint: what the CPU would do in your place; quit: leave with the totals so far"
)


class InputEnded(Exception):
    """The person's input ended before the game did."""


class _Left(Exception):
    """The person typed ``quit``."""


def _ask(ask: Ask, say: Say, prompt: str, hint: Callable[[], str]) -> str:
    """The person's answer to ``prompt``, after any ``help`` or ``hint`` asked for on the way."""
    while True:
        try:
            text = ask(prompt).strip()
        except EOFError:
            raise InputEnded("input ended before the game was over") from None
        word = text.lower()
        if word in QUIT:
            raise _Left
        if word in HELP:
            say(HELP_TEXT)
        elif word == HINT:
            say(f"  hint: {hint()}")
        else:
            return text


def _show_table(say: Say, state: HandState, game: Game, seat: int, names: list[str]) -> None:
    trick = ", ".join(f"{names[s]} {card_str(c, symbols=True)}" for s, c in state.trick) or "(you lead)"
    scores = "  ".join(f"{names[s]} {game.totals[s]}+{int(p)}" for s, p in enumerate(state.points()))
    say(f"  trick {state.trick_number + 1}: {trick}")
    say(f"  scores (game+hand): {scores}")
    say(f"  your hand: {state.hand(seat).by_suit()}")
    say(f"  legal: {state.legal_moves()}")


def play_in_terminal(
    rules: Rules,
    opponent: str,
    seed: int = 0,
    seat: int = 0,
    ask: Ask = input,
    say: Say = print,
) -> Game:
    """Play one game with a person in ``seat`` and ``opponent`` (a level or agent spec) elsewhere."""
    from agents import load

    cpu = load(opponent)
    n = rules.n_players
    names = [("you" if s == seat else f"cpu{s}") for s in range(n)]
    game = Game(rules, seed=seed)
    say(f"Hearts ({rules.label()}) against {opponent}, seed {seed}. You are seat {seat}; help, hint, quit.")
    try:
        _play_game(game, cpu, rules, seat, names, ask, say)
    except _Left:
        totals = _by_seat(game.totals, names)
        say(f"\nYou left after {game.hands_played} hands (the hand in play not counted); totals: {totals}")
        return game
    winners = game.winners
    if game.cut_off:  # it said "Winner: " and no one
        totals = _by_seat(game.totals, names)
        say(f"\nNo winner: the game is cut off after {game.hands_played:,} hands; totals: {totals}")
    elif winners == [seat]:
        say("\nYou win!")
    else:
        say(f"\nWinner: {', '.join(names[w] for w in winners)}")
    return game


def _play_game(game: Game, cpu: Agent, rules: Rules, seat: int, names: list[str], ask: Ask, say: Say) -> None:
    """The hands of ``game`` until it is over, the person in ``seat`` and ``cpu`` elsewhere."""
    n = rules.n_players
    while not game.over:
        state = game.next_hand()
        say(f"\n=== hand {game.hands_played + 1}: pass {state.pass_direction} ===")
        if rules.kitty_size:
            cards = f"{rules.kitty_size} card{'s' if rules.kitty_size > 1 else ''}"
            say(f"  kitty: {cards} face down, for the winner of the first trick")
        if state.phase == "pass":
            receiver = (seat + pass_offset(state.pass_direction, n)) % n
            for other in range(n):
                if other != seat:
                    state.pass_cards(other, cpu.choose_pass(state.observation(other)))
            say(f"  your hand: {state.hand(seat).by_suit()}")
            while True:
                prompt = f"pass {rules.pass_count} cards to {names[receiver]}: "
                text = _ask(ask, say, prompt, _hint(cpu, state, seat))
                try:
                    state.pass_cards(seat, [parse_card(t) for t in text.replace(",", " ").split()])
                    break
                except (ValueError, IllegalMoveError) as error:
                    say(f"  {error}")
            say(f"  you received: {CardSet(state.observation(seat).received)}")
        while state.phase == "play":
            player = state.current_player
            assert player is not None
            if player != seat:
                card = cpu.choose_play(state.observation(player))
                state.play(card)
                say(f"  {names[player]} plays {card_str(parse_card(card), symbols=True)}")
            else:
                _show_table(say, state, game, seat, names)
                while True:
                    text = _ask(ask, say, "your card: ", _hint(cpu, state, seat))
                    try:
                        card = parse_card(text)
                        state.play(card)
                        break
                    except (ValueError, IllegalMoveError) as error:
                        say(f"  {error}")
                say(f"  you play {card_str(card, symbols=True)}")  # a piped game's record of it too
            if state.trick_winners and not state.trick:  # this card completed a trick
                winner = names[state.trick_winners[-1]]
                kitty = _kitty_taken(state, seat) if len(state.trick_winners) == 1 else ""
                say(f"  -> {winner} {'take' if winner == 'you' else 'takes'} the trick{kitty}")
        game.finish_hand(state)
        moon = f" ({names[state.moon_shooter]} shot the moon!)" if state.moon_shooter >= 0 else ""
        scores = _by_seat([int(x) for x in state.scores()], names)
        say(f"  hand scores: {scores}{moon}; totals: {_by_seat(game.totals, names)}")


def _kitty_taken(state: HandState, seat: int) -> str:
    """What the first trick's winner takes beside it: the kitty, its cards shown to the person
    only, its points to all (the scores line shows them anyway; it said nothing of the kitty, so
    trick 1 seemed to score points no card in it carried)."""
    if not state.rules.kitty_size:
        return ""
    points = points_of(state.kitty.mask, state.rules)
    worth = f"{points} point{'s' if points != 1 else ''}"
    if state.trick_winners[0] == seat:
        return f" and the kitty: {state.kitty} ({worth})"
    return f" and the kitty ({worth} in it)"


def _by_seat(values: list[int], names: list[str]) -> str:
    """``you 15  cpu1 8 ...``: a figure per seat, named (it printed a bare list)."""
    return "  ".join(f"{name} {value}" for name, value in zip(names, values, strict=True))


def _hint(cpu: Agent, state: HandState, seat: int) -> Callable[[], str]:
    """What ``cpu`` would pass or play in ``seat``'s place now, as the person types cards."""

    def hint() -> str:
        observation = state.observation(seat)
        if observation.phase == "play" and cpu.scores_cards:  # a search: what it expects of each card
            table = cpu.card_values(observation)
            chosen = table.loc[table["chosen"], "card"].iloc[0]
            if len(table) == 1:
                return f"{chosen} (your only legal card)"
            points = ", ".join(f"{row.card} {row.points:.1f}" for row in table.itertuples() if row.weight > 0)
            return f"{chosen} (points it expects you to take this hand after each card: {points})"
        if observation.phase == "pass" and cpu.scores_passes:  # ... and of its best passes
            table = cpu.pass_values(observation)
            chosen = table.loc[table["chosen"], "cards"].iloc[0]
            tried = table[table["weight"] > 0].head(HINT_PASSES)
            if tried.empty:
                return chosen
            points = ", ".join(f"{row.cards} {row.points:.1f}" for row in tried.itertuples())
            return f"{chosen} (points it expects you to take this hand after its best passes: {points})"
        move = cpu.act(observation)
        return " ".join(card_str(c) for c in (move if isinstance(move, list) else [move]))

    return hint
