"""The move protocol of ``hearts-sim serve``: one JSON object per line, the seat's whole information
set in each request (stateless), the move in each answer. Engines outside this package speak it
(``exec:COMMAND`` agents); the README documents it as the contract for engine authors.

Request::

    {"id": 7, "rules": {...switches...} | "preset", "seat": 2, "hand": ["QS", ...],
     "pass_direction": "left", "passed": [...], "received": [...],
     "plays": [[0, "2C"], [1, "KC"]], "scores": [0, 0, 0, 0], "points": [0, 0, 0, 0],
     "kitty": [...], "dealer": 0, "seed": 12345}

``hand`` is the seat's dealt hand; ``plays`` every card played so far with who played it.
``legal``, sent by hearts-sim with every request for a card, lists the cards the seat may play
(engines may rely on it; ``hearts-sim serve`` derives them itself, and answers a request whose
``legal`` differs from them with an error: the client's rules or history are not the server's). ``explain``
(``hearts-sim serve`` only, never sent to an engine): with ``true`` the answer also lists what
a search agent weighed, ``"values": [{"card": "5S", "points": 2.13, "playouts": 5346}, ...]``
(for a pass ``{"pass": [...], ...}``).
Answer: ``{"id": 7, "pass": ["AS", "KS", "QS"]}``, ``{"id": 7, "play": "QS"}`` or
``{"id": 7, "error": "..."}``.
"""

from __future__ import annotations

import json
from typing import Any

from hearts_sim.core.cards import card_str, parse_card
from hearts_sim.core.checks import one_line
from hearts_sim.game.observation import Observation

FIELDS = (
    "id",
    "rules",
    "seat",
    "hand",
    "pass_direction",
    "passed",
    "received",
    "plays",
    "scores",
    "points",
    "kitty",
    "dealer",
    "seed",
    "legal",
    "explain",
)


class AnswerError(ValueError):
    """An answer that is not a move of the kind asked for; the message says what is wrong."""


def request_for(observation: Observation, request_id: Any = None, seed: int | None = None) -> dict[str, Any]:
    """The request asking for ``observation``'s decision (``seed``: the hand seed, with which an
    engine built on this package decides exactly as the batched loop does)."""
    request: dict[str, Any] = {
        "id": request_id,
        "rules": observation.rules.to_dict(),
        "seat": observation.seat,
        "hand": observation.dealt.to_list(),
        "pass_direction": observation.pass_direction,
        "passed": observation.passed.to_list(),
        "received": observation.received.to_list(),
        "plays": [[seat, card_str(card)] for seat, card in observation.plays],
        "scores": list(observation.game_scores),
        "points": list(observation.points),
        "dealer": observation.dealer,
    }
    if observation.kitty:
        request["kitty"] = observation.kitty.to_list()
    if observation.phase == "play":
        request["legal"] = observation.legal_moves().to_list()
    if seed is not None:
        request["seed"] = int(seed)
    return request


def move_from_answer(answer: Any, passing: bool) -> list[int] | int:
    """The cards (passing) or the card (playing) of an answer object; raises ``AnswerError``."""
    if not isinstance(answer, dict):
        raise AnswerError(f"an answer must be a JSON object, not {_as_json(answer)}")
    if "error" in answer:
        raise AnswerError(f"answered with an error: {one_line(answer['error'])}")
    key = "pass" if passing else "play"
    if key not in answer:
        raise AnswerError(f"the answer has no {key!r} field")
    if passing and not isinstance(answer[key], list):
        raise AnswerError(f"'pass' must be a list of cards, not {_as_json(answer[key])}")
    cards = answer[key] if passing else [answer[key]]
    for card in cards:  # named as the engine wrote it: null, not Python's None
        if not isinstance(card, str | int) or isinstance(card, bool):
            raise AnswerError(f"not a card: {_as_json(card)}")
    try:
        return [parse_card(card) for card in cards] if passing else parse_card(cards[0])
    except ValueError as error:
        raise AnswerError(str(error)) from None


def _as_json(value: Any) -> str:
    """``value`` as JSON writes it (``null``, ``true``, ``["7C"]``), cut to 80 characters."""
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."
