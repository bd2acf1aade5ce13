"""Replay a recorded hand card by card: ``replay(row)`` for a row of ``simulate`` or of a
tournament's Parquet records (exported as ``hearts_sim.analysis.replay``).

A record keeps the deal, the passes and the outcome of a hand, not its cards in play order.
They are rebuilt the way they were made: the hand is dealt from the row's hand seed by the
engine's ``deal_hand``, each seat's agent passes and plays through the dispatcher
(``agents.dispatch``) with the random stream ``decision_seed`` gives, as the self-play loop
does, and every card goes through ``HandState``'s checks. The result is then compared with
everything the row records (deal, passes, kitty, points, scores, tricks per seat, first
leader, moon shooter, QS and JD takers, the trick hearts broke in): a replay that disagrees
raises ``ReplayError`` rather than show another hand.

Agents with iteration budgets replay exactly. A time-budgeted play policy (``ms`` > 0) decides
by the clock of the machine that ran it, so its hand cannot be replayed: ``replay`` says so.

>>> from hearts_sim import simulate
>>> df = simulate("standard", ["rule", "random", "lowest", "highest"], hands=20, seed=3)
>>> hand = replay(df.iloc[4])
>>> list(hand.points) == df.loc[4, ["points_0", "points_1", "points_2", "points_3"]].tolist()
True
>>> len(hand.tricks), hand.tricks[0].leader == int(df.loc[4, "first_leader"])
(13, True)
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np
import pandas as pd

from agents.api import Agent, decide
from agents.external import ExternalAgentError, is_object_label
from agents.kinds import AgentError
from agents.registry import TIME_BUDGET, AgentSpec, Policy, parse_agent
from hearts_sim.core.cards import (
    N_CARDS,
    N_RANKS,
    SUIT_NAMES,
    CardSet,
    card_html,
    card_str,
    cards_html,
    cards_str,
    html_table,
)
from hearts_sim.core.checks import is_integer, is_real, shown
from hearts_sim.core.errors import InputError
from hearts_sim.core.rules import Rules, RulesError, pass_offset
from hearts_sim.engine.hand import deal_hand, pack_trick_winners
from hearts_sim.engine.state import new_states
from hearts_sim.game.hand_state import HandState, points_of
from hearts_sim.selfplay.records import seat_column, unpack_trick_winners

MARK_STYLE = "background-color:rgba(255,200,0,0.35)"
# The per-seat record columns a replay is checked against, and the HAND_STATE field of each.
SEAT_FIELDS = {
    "dealt": "dealt",
    "passed": "passed",
    "points": "points",
    "score": "scores",
    "tricks": "tricks_won",
}
_LABEL_SUFFIX = re.compile(r"#\d+$")  # a tournament labels a spec named twice ``rule#1``, ``rule#2``


class ReplayError(InputError):
    """A row that cannot be replayed (columns missing, a time-budgeted agent), or a replay that
    disagrees with its record (made by another version of an agent); the message says which, and
    the command line prints it as one line."""


@dataclass(frozen=True)
class Trick:
    """One trick of a replayed hand: who led, the cards in play order, who took it."""

    number: int  # 0-based, as the records' ``hearts_broken_trick``
    leader: int
    cards: tuple[tuple[int, int], ...]  # (seat, card), in play order
    winner: int
    points: int  # raw points the winner took with it (the kitty's too, on the first trick)
    points_after: tuple[int, ...]  # every seat's raw points once it is taken


@dataclass(frozen=True, repr=False)
class Replay:
    """A recorded hand rebuilt card by card; displays in a notebook as a trick-by-trick table.

    ``points`` are raw penalty points, ``scores`` the hand's scores (moon and bonuses applied),
    ``moon_shooter`` the shooter's seat or -1, as in the records. ``game_totals``: a hand of a
    game's totals before it (empty for a single hand). ``marks`` maps a trick number (0-based)
    to a note shown on its row (``mark``)."""

    rules: Rules
    seed: int
    agents: tuple[str, ...]
    pass_direction: str
    dealer: int
    dealt: tuple[CardSet, ...]
    passed: tuple[CardSet, ...]
    kitty: CardSet
    tricks: tuple[Trick, ...]
    points: tuple[int, ...]
    scores: tuple[int, ...]
    moon_shooter: int
    game_totals: tuple[int, ...] = ()
    marks: Mapping[int, str] = field(default_factory=dict)

    @property
    def trick_winners(self) -> list[int]:
        """The seat that won each trick, in order."""
        return [trick.winner for trick in self.tricks]

    @property
    def plays(self) -> list[tuple[int, int]]:
        """Every card as (seat, card), in play order."""
        return [play for trick in self.tricks for play in trick.cards]

    def moon_stopped(self, seat: int) -> int | None:
        """The trick (0-based) in which ``seat`` could no longer shoot the moon: the first in
        which another seat took points; None if no other seat took any."""
        self._check_seat(seat)
        return next((t.number for t in self.tricks if t.winner != seat and t.points > 0), None)

    def mark(self, trick: int, note: str) -> Replay:
        """A copy that highlights trick ``trick`` (0-based) with ``note`` in the display."""
        self._check_trick(trick, len(self.tricks) - 1)
        if not isinstance(note, str):
            raise ReplayError(f"a trick's note is text, not {shown(note)}")
        return dataclasses.replace(self, marks={**self.marks, trick: note})

    def state_at(self, trick: int) -> HandState:
        """The table just before trick ``trick`` (0-based) is led, as a ``HandState``
        (``len(tricks)``: the finished hand); it displays as the table in a notebook."""
        self._check_trick(trick, len(self.tricks))
        offset = pass_offset(self.pass_direction, len(self.agents))
        state = _dealt_state(self.rules, self.seed, offset, self.dealer, self.game_totals)
        if state.phase == "pass":
            for seat, cards in enumerate(self.passed):
                state.pass_cards(seat, cards)
        for _, card in self.plays[: trick * len(self.agents)]:
            state.play(card)
        return state

    def card_values(self, trick: int, seat: int, agent: str | None = None) -> pd.DataFrame:
        """What ``seat``'s search weighed when it played to trick ``trick`` (0-based):
        ``agents.Agent.card_values`` on the position as it stood, with this hand's seed, so the
        card marked ``chosen`` is the one the seat played. ``agent`` (a spec or level name): ask
        it instead, in the same position with the same seed (where ``easy`` went wrong, what
        would ``hard`` have played?). ``ReplayError`` for an agent that scores no cards."""
        self._check_trick(trick, len(self.tricks) - 1)
        self._check_seat(seat)
        state = self.state_at(trick)
        for player, card in self.tricks[trick].cards:
            if player == seat:
                break
            state.play(card)
        observation = state.observation(seat)
        made = card_str(dict(self.tricks[trick].cards)[seat])
        return self._explain(seat, agent, lambda asked: asked.card_values(observation, self.seed), made)

    def pass_values(self, seat: int, agent: str | None = None) -> pd.DataFrame:
        """What ``seat``'s search weighed when it passed: ``agents.Agent.pass_values`` on its
        dealt hand, with this hand's seed, so the pass marked ``chosen`` is the one it made;
        ``agent``: ask it instead (as ``card_values``). ``ReplayError`` for a hand without a pass
        or an agent that scores no passes."""
        self._check_seat(seat)
        offset = pass_offset(self.pass_direction, len(self.agents))
        state = _dealt_state(self.rules, self.seed, offset, self.dealer, self.game_totals)
        if state.phase != "pass":
            raise ReplayError(
                f"this hand has no pass (pass {self.pass_direction}): ask card_values of a trick"
            )
        observation = state.observation(seat)
        made = cards_str(self.passed[seat].mask)
        return self._explain(seat, agent, lambda asked: asked.pass_values(observation, self.seed), made)

    def _explain(
        self, seat: int, agent: str | None, ask: Callable[[Agent], pd.DataFrame], made: str
    ) -> pd.DataFrame:
        """``ask`` the seat's agent (or ``agent``) its table of values; the move it marks chosen
        must be the one the seat ``made``, unless another agent was asked."""
        if agent is not None and not isinstance(agent, str):
            raise ReplayError(f"agent is a spec or a level name, such as 'hard', not {shown(agent)}")
        name = self.agents[seat] if agent is None else agent
        asked = self._agent(seat, name)
        if asked is None:
            raise ReplayError(f"seat {seat}: {name}, an agent object passed from Python, scores nothing")
        try:
            table = ask(asked)
        except AgentError as error:
            raise ReplayError(f"seat {seat}: {error}") from None
        chosen = str(table[table["chosen"]].iloc[0, 0])
        if agent is None and chosen != made:  # a record of another version of the agent
            raise ReplayError(
                f"seat {seat}'s {name} now chooses {chosen}, not the {made} it chose: the record "
                "was made by another version of it"
            )
        return table

    def searches(self, seat: int) -> bool:
        """Whether ``seat``'s agent scores its cards, so that ``card_values`` explains its plays."""
        self._check_seat(seat)
        agent = self._agent(seat, self.agents[seat])
        return agent is not None and agent.scores_cards

    def searches_passes(self, seat: int) -> bool:
        """Whether ``seat``'s agent searches its passes (``Agent.searches_passes``: ``pimc`` and
        ``ismcts`` only with ``pass_rollouts``), so that ``pass_values`` explains its pass."""
        self._check_seat(seat)
        agent = self._agent(seat, self.agents[seat])
        return agent is not None and agent.searches_passes

    @staticmethod
    def _agent(seat: int, name: str) -> Agent | None:
        """The agent ``name`` (a seat's label or a spec); None for an object passed from Python,
        an outside agent, which scores no cards."""
        if is_object_label(_LABEL_SUFFIX.sub("", name)):
            return None
        return Agent(_spec_of(name, seat, {}))

    def _check_seat(self, seat: int) -> None:
        if not is_integer(seat) or not 0 <= seat < len(self.agents):
            raise ReplayError(
                f"seat {shown(seat)} does not exist: this hand has seats 0..{len(self.agents) - 1}"
            )

    @staticmethod
    def _check_trick(trick: object, last: int) -> None:
        if not is_integer(trick) or not 0 <= trick <= last:
            raise ReplayError(f"trick {shown(trick)} does not exist: choose 0..{last}")

    def to_frame(self) -> pd.DataFrame:
        """One row per card: ``trick`` (0-based), ``position`` (0: the lead), ``seat``, ``agent``,
        ``card``, ``suit``, ``points`` (the card's), ``winner`` (the trick's), ``wins``, and
        ``points_<seat>``: every seat's raw points once the trick is taken."""
        n = len(self.agents)
        rows = []
        for trick in self.tricks:
            for position, (seat, card) in enumerate(trick.cards):
                row: dict[str, Any] = {
                    "trick": trick.number,
                    "position": position,
                    "seat": seat,
                    "agent": self.agents[seat],
                    "card": card_str(card),
                    "suit": SUIT_NAMES[card // N_RANKS],
                    "points": points_of(1 << card, self.rules),
                    "winner": trick.winner,
                    "wins": seat == trick.winner,
                }
                row.update({seat_column("points", s): trick.points_after[s] for s in range(n)})
                rows.append(row)
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        moon = f", moon by seat {self.moon_shooter}" if self.moon_shooter >= 0 else ""
        return f"<Replay {self.rules.label()}, seed {self.seed}, points {list(self.points)}{moon}>"

    def __str__(self) -> str:
        """The text of the display: the caption, each seat's agent, deal, pass and result, then
        one line per trick (who played what, who took it and its points; marks noted)."""
        n = len(self.agents)
        offset = pass_offset(self.pass_direction, n)
        width = max(len(agent) for agent in self.agents)
        lines = [self._caption()]
        for s in range(n):
            passed = f" | passed {self.passed[s]} to {(s + offset) % n}" if offset else ""
            lines.append(
                f"seat {s} {self.agents[s]:<{width}} | {self.dealt[s].by_suit()}{passed} | "
                f"points {self.points[s]}, score {self.scores[s]}"
            )
        if self.kitty:  # its cards go to the first trick's winner (its points are in that trick's)
            lines.append(f"kitty {self.kitty}, to the winner of trick 1")
        for trick in self.tricks:
            cards = "  ".join(f"{seat}:{card_str(card, symbols=True)}" for seat, card in trick.cards)
            note = f"  <- {self.marks[trick.number]}" if trick.number in self.marks else ""
            lines.append(f"{trick.number + 1:>2}. {cards}  won by {trick.winner} (+{trick.points}){note}")
        lines.append(f"points {list(self.points)}, scores {list(self.scores)}")
        return "\n".join(lines)

    def _caption(self) -> str:
        moon = f" | moon by seat {self.moon_shooter}" if self.moon_shooter >= 0 else ""
        totals = f" | game totals before it {list(self.game_totals)}" if self.game_totals else ""
        return (
            f"{self.rules.label()} | seed {self.seed} | pass {self.pass_direction} | "
            f"dealer {self.dealer}{totals}{moon}"
        )

    def _repr_html_(self) -> str:
        """The deal (each seat's agent, dealt and passed cards, result), then one row per trick:
        who led, each seat's card (the winner's in bold), the winner, the trick's points and the
        points so far; marked tricks are highlighted with their note."""
        n = len(self.agents)
        offset = pass_offset(self.pass_direction, n)
        deal_rows = [
            [
                str(s),
                escape(self.agents[s]),
                cards_html(self.dealt[s].mask),
                cards_html(self.passed[s].mask) + (f" &#8594; {(s + offset) % n}" if offset else ""),
                str(self.points[s]),
                str(self.scores[s]),
            ]
            for s in range(n)
        ]
        if self.kitty:
            deal_rows.append(["kitty", "", cards_html(self.kitty.mask), "", "", ""])
        deal = html_table(
            ["seat", "agent", "dealt", "passed", "points", "score"],
            deal_rows,
            caption=escape(self._caption()),
            kind="hs-deal",
        )
        trick_rows, styles = [], []
        for trick in self.tricks:
            cards = dict(trick.cards)
            trick_rows.append(
                [str(trick.number + 1), str(trick.leader)]
                + [card_html(cards[s], emphasis=s == trick.winner) for s in range(n)]
                + [
                    str(trick.winner),
                    str(trick.points),
                    " ".join(str(p) for p in trick.points_after),
                    escape(self.marks.get(trick.number, "")),
                ]
            )
            styles.append(MARK_STYLE if trick.number in self.marks else "")
        header = ["trick", "led by", *(f"seat {s}" for s in range(n)), "winner", "points", "so far", ""]
        tricks = html_table(header, trick_rows, kind="hs-tricks", row_styles=styles)
        return f'<div class="hs-replay">{deal}{tricks}</div>'


# ---------------------------------------------------------------------------- the replay
def replay(row: Any, rules: Rules | str | None = None, agents: Mapping[str, Any] | None = None) -> Replay:
    """Rebuild the hand of one record row (a row of ``simulate``'s DataFrame or of a tournament's
    records: a ``Series``, a one-row ``DataFrame``, a mapping or an ``itertuples`` row) and check
    it against the row. ``rules`` is needed only when the row has no ``rules`` column; ``agents``
    maps a seat's recorded name to the agent that played it where the name alone cannot say (an
    object passed to ``simulate``, recorded as ``py:ClassName``). The row's ``py:`` and ``exec:``
    agents run (their code, their commands): replay rows of records you trust (``hearts-sim
    replay`` asks for ``--trust-agents``).

    Raises ``ReplayError`` when a column is missing, a seat's play policy is time-budgeted, or
    the replay disagrees with the record (an agent, level or kernel changed since it was made)."""
    values = _row_values(row)
    given = _given_agents(agents)
    rules = _rules_of(values, rules)
    n = rules.n_players
    seats = sum(1 for column in values if str(column).startswith("dealt_"))
    if seats and seats != n:  # a row of another table: say so before its deal disagrees
        raise ReplayError(
            f"the row is of {seats} players and the rules of {n}: replay it under the rules it was played by"
        )
    _require(
        values,
        ["seed", "moon_shooter", *(seat_column(c, s) for c in ("agent", *SEAT_FIELDS) for s in range(n))],
    )
    names = tuple(str(values[seat_column("agent", s)]) for s in range(n))
    specs = [_spec_of(name, s, given) for s, name in enumerate(names)]
    seed = _whole(values, "seed", 2**64)
    in_game = [seat_column("game_score", s) for s in range(n) if seat_column("game_score", s) in values]
    totals = [_whole(values, column) for column in in_game]  # a hand of a game: the seats see them
    state = _dealt_state(rules, seed, _pass_offset(values, n), _dealer(values, n), totals)
    if state.phase == "pass":  # every seat passes in turn, as ``play_out_hand``
        for seat, spec in enumerate(specs):
            state.pass_cards(seat, _decision(spec.pass_policy, state, seat, names[seat]))
    tricks: list[Trick] = []
    cards_in_trick: list[tuple[int, int]] = []
    while state.phase == "play":
        player = state.current_player
        assert player is not None
        card = _decision(specs[player].play_policy, state, player, names[player])
        state.play(card)
        cards_in_trick.append((player, card))
        if len(cards_in_trick) == n:
            before = tricks[-1].points_after if tricks else (0,) * n
            after = tuple(int(p) for p in state.points())
            winner = state.trick_winners[-1]
            gained = after[winner] - before[winner]
            tricks.append(
                Trick(len(tricks), cards_in_trick[0][0], tuple(cards_in_trick), winner, gained, after)
            )
            cards_in_trick = []
    result = Replay(
        rules=rules,
        seed=seed,
        agents=names,
        pass_direction=state.pass_direction,
        dealer=int(state.record["dealer"]),
        dealt=tuple(state.dealt(s) for s in range(n)),
        passed=tuple(CardSet(int(state.record["passed"][s])) for s in range(n)),
        kitty=state.kitty,
        tricks=tuple(tricks),
        points=tuple(int(p) for p in state.points()),
        scores=tuple(int(x) for x in state.scores()),
        moon_shooter=state.moon_shooter,
        game_totals=tuple(totals),
    )
    _check(result, state, values)
    return result


def _dealt_state(rules: Rules, seed: int, offset: int, dealer: int, totals: Sequence[int] = ()) -> HandState:
    """The hand dealt from hand seed ``seed`` exactly as the self-play loop deals it; in a game
    whose ``totals`` before it were these (the seats see them)."""
    states = new_states(1)
    states[0]["game_scores"][: len(totals)] = totals
    deal_hand(states[0], rules.to_tuple(), offset, dealer, np.uint64(seed))
    return HandState(rules, states)


def _row_values(row: Any) -> dict[str, Any]:
    """The row's columns as a dict; game records (one row per game) are refused here."""
    values = _as_dict(row)
    if "game" in values and seat_column("dealt", 0) not in values:
        raise ReplayError(
            "a game record keeps no deal (simulate_games, --games): replay a row of simulate(), of a "
            "hand tournament's records, or a hand of the games (simulate_games(hands=True), hands/)"
        )
    return values


def _as_dict(row: Any) -> dict[str, Any]:
    if isinstance(row, pd.DataFrame):
        if len(row) != 1:
            raise ReplayError(
                f"replay takes one record row, not a DataFrame of {len(row)} rows: use df.iloc[i]"
            )
        row = row.iloc[0]
    if isinstance(row, pd.Series):
        return row.to_dict()
    if hasattr(row, "_asdict"):  # a row of DataFrame.itertuples()
        return dict(row._asdict())
    if isinstance(row, Mapping):
        return dict(row)
    raise ReplayError(f"replay takes a record row (a pandas Series or a mapping), not {type(row).__name__}")


def _require(values: Mapping[str, Any], columns: list[str]) -> None:
    missing = [c for c in columns if c not in values]
    if missing:
        raise ReplayError(
            f"the row has no {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''} column: "
            "replay a row of simulate() or of a tournament's records loaded whole "
            "(hearts_sim.analysis.load_records(DIR))"
        )


def _rules_of(values: Mapping[str, Any], rules: Rules | str | None) -> Rules:
    """The rules given (a preset, switches or a display's label: ``Rules.parse``), else the
    row's ``rules`` column (``Rules.describe()``: the switches that differ from the standard game)."""
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        try:
            return Rules.parse(rules)
        except RulesError as error:
            raise ReplayError(str(error)) from None
    if "rules" not in values:
        raise ReplayError("the row has no rules column: pass rules=, e.g. replay(row, rules='qdan3')")
    text = str(values["rules"])
    try:
        return Rules.parse(text)
    except RulesError as error:
        raise ReplayError(f"the row's rules {text!r} cannot be read: {error}") from None


def _given_agents(agents: Any) -> Mapping[str, Any]:
    if agents is None:
        return {}
    if not isinstance(agents, Mapping) or not all(isinstance(name, str) for name in agents):
        raise ReplayError(
            "agents must map a seat's recorded name to its agent, such as {'py:Ducker': Ducker()}, "
            f"not {shown(agents)}"
        )
    return agents


def _spec_of(name: str, seat: int, given: Mapping[str, Any]) -> AgentSpec:
    """The agent of a seat, from its label or ``given[label]``; refused if its play policy thinks
    on the clock."""
    label = _LABEL_SUFFIX.sub("", name)
    try:
        spec = parse_agent(given[name] if name in given else given.get(label, label))
    except AgentError as error:
        if is_object_label(label) and name not in given and label not in given:
            raise ReplayError(
                f"seat {seat} was played by {name}, an agent object passed from Python: give it "
                f"again, replay(row, agents={{{name!r}: the_agent}})"
            ) from None
        raise ReplayError(f"seat {seat}: {error}") from None
    if spec.play_policy.time_budget > 0:
        raise ReplayError(
            f"seat {seat}'s agent {name} plays on a time budget ({TIME_BUDGET}="
            f"{spec.play_policy.time_budget:g}): its decisions depended on the speed of the machine "
            "that ran it, so this hand cannot be replayed; replay records of agents with iteration budgets"
        )
    return spec


def _decision(policy: Policy, state: HandState, seat: int, name: str) -> int:
    """``seat``'s pass (a bitboard) or card, made as the loops made it (``agents.api.decide``)."""
    try:
        return decide(policy, state.record, state.rules, seat, name, lambda: state.observation(seat))
    except ExternalAgentError as error:  # an outside agent failed on this position
        raise ReplayError(f"cannot replay: {error}") from None
    except AgentError as error:  # it cannot be loaded
        raise ReplayError(f"seat {seat}: {error}") from None


def _pass_offset(values: Mapping[str, Any], n: int) -> int:
    if "pass_offset" in values:
        return _whole(values, "pass_offset", n)
    if "pass_direction" in values:
        return pass_offset(str(values["pass_direction"]), n)
    raise ReplayError("the row has no pass_offset or pass_direction column")


def _dealer(values: Mapping[str, Any], n: int) -> int:
    if "dealer" in values:
        return _whole(values, "dealer", n)
    for column in ("deal", "game_hand"):  # the loops deal hand i (of a game) with dealer i mod n
        if column in values:
            return _whole(values, column) % n
    raise ReplayError("the row has no dealer or deal column")


def _check(result: Replay, state: HandState, values: Mapping[str, Any]) -> None:
    """Raise ``ReplayError`` at the first value of the row the replay does not reproduce."""
    record, n = state.record, result.rules.n_players
    replayed = {
        seat_column(column, s): int(record[name][s]) for column, name in SEAT_FIELDS.items() for s in range(n)
    }
    replayed.update(
        kitty=result.kitty.mask,
        first_leader=result.tricks[0].leader,
        moon_shooter=result.moon_shooter,
        qs_taker=int(record["qs_taker"]),
        jd_taker=int(record["jd_taker"]),
        hearts_broken_trick=int(record["hearts_broken_trick"]),
        qs_trick=int(record["qs_trick"]),
        point_tricks=int(record["point_tricks"]),
        trick_winners=int(pack_trick_winners(record)),
    )
    if "pass_direction" in values and str(values["pass_direction"]) != result.pass_direction:
        raise ReplayError(  # it went unread beside pass_offset: a row edited to "up" replayed
            f"the row's pass_direction is {shown(values['pass_direction'])}, and its pass_offset "
            f"passes {result.pass_direction} (was the row edited?)"
        )
    for column, value in replayed.items():
        recorded = _whole(values, column) if column in values else value
        if recorded != value:
            what = "the deal" if column.startswith("dealt") else "the replay"
            raise ReplayError(
                f"{what} disagrees with the record: {column} is {_shown(column, value)}, the record says "
                f"{_shown(column, recorded)} (were the rules, the seed, an agent or a level "
                "changed since the record was made?)"
            )


def _whole(values: Mapping[str, Any], column: str, below: int | None = None) -> int:
    """The row's ``column`` as a Python int, ``0 <= value < below`` when ``below`` is given (the
    kernels index by it); ``ReplayError`` if not (a row built or edited by hand)."""
    value = values[column]
    if is_integer(value) or (is_real(value) and math.isfinite(value) and float(value).is_integer()):
        whole = int(value)  # a float: a row of numeric columns only, which pandas makes float64
        if below is None or 0 <= whole < below:
            return whole
    kind = "a whole number" if below is None else f"a whole number in 0 .. {below - 1}"
    raise ReplayError(f"the row's {column} is {shown(value)}, not {kind}")


def _shown(column: str, value: int) -> str:
    """A record value for a message: cards by name, numbers as they are."""
    if column == "trick_winners" and value >= 0:
        seats = unpack_trick_winners([value])[0]
        return "seats " + " ".join(str(seat) for seat in seats[seats >= 0])
    if column == "point_tricks" and value >= 0:
        return "tricks " + " ".join(str(t) for t in range(value.bit_length()) if value >> t & 1)
    cards = column.startswith(("dealt", "passed", "kitty")) and 0 <= value < 1 << N_CARDS
    return f"'{CardSet(value)}'" if cards else str(value)
