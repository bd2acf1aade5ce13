"""Python agents for the tests of agents decided outside the compiled loop (tests/test_external.py).

``Lowest`` re-implements the built-in ``lowest`` in plain Python: same passes, same cards, so a
table with it must give records bit-identical to the built-in agent's.
"""

from __future__ import annotations

import itertools
import random
import time
from pathlib import Path
from typing import Any

from hearts_sim.core.cards import N_RANKS


def _by_rank(cards: Any, highest: bool = False) -> list[int]:
    """Rank first, then suit (clubs first): the order of the built-in ``lowest_ranked_card``."""
    ordered = sorted(cards, key=lambda c: (c % N_RANKS, c // N_RANKS))
    return ordered[::-1] if highest else ordered


class Lowest:
    """The built-in ``lowest``: plays its lowest-ranked legal card, passes its highest cards."""

    def choose_pass(self, obs: Any) -> list[int]:
        return _by_rank(obs.hand, highest=True)[: obs.rules.pass_count]

    def choose_play(self, obs: Any) -> int:
        return _by_rank(obs.legal_moves())[0]


class BatchLowest(Lowest):
    """``Lowest`` deciding many positions in one call."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def act_batch(self, observations: list[Any]) -> list[Any]:
        self.batches.append(len(observations))
        return [self.choose_pass(o) if o.phase == "pass" else self.choose_play(o) for o in observations]


class BatchAnswersNone(Lowest):
    """An ``act_batch`` that forgot its ``return``."""

    def act_batch(self, observations: list[Any]) -> None:
        pass


class BatchTimesOut(Lowest):
    """An ``act_batch`` whose own call timed out (a model server's socket): its ``TimeoutError``
    is its failure, not the toolkit's time limit."""

    def act_batch(self, observations: list[Any]) -> list[int]:
        raise TimeoutError("the model server did not answer")


class SeededRandom:
    """Uniform over legal cards, from the seed the table gives each decision."""

    def choose_pass(self, obs: Any, seed: int) -> list[int]:
        return random.Random(seed).sample(sorted(obs.hand), obs.rules.pass_count)

    def choose_play(self, obs: Any, seed: int) -> int:
        return random.Random(seed).choice(sorted(obs.legal_moves()))


class Trailing(Lowest):
    """``Lowest``, except that in a game, alone with the highest total, it plays its highest
    legal card: its play depends on the game's totals, which a replay must show it."""

    def choose_play(self, obs: Any) -> int:
        totals = list(obs.game_scores)
        last = totals.count(max(totals)) == 1 and totals[obs.seat] == max(totals)
        return _by_rank(obs.legal_moves(), highest=last)[0]


class Raises(Lowest):
    def choose_play(self, obs: Any) -> int:
        raise RuntimeError("the model is not loaded")


class Exits(Lowest):
    def choose_play(self, obs: Any) -> int:
        raise SystemExit(3)


class Illegal(Lowest):
    """Plays the highest card it holds, legal or not."""

    def choose_play(self, obs: Any) -> int:
        return _by_rank(obs.hand, highest=True)[0]


class PassesLegal(Lowest):
    """Passes from ``legal_moves()``, which is empty while passing."""

    def choose_pass(self, obs: Any) -> list[int]:
        return list(obs.legal_moves())[:3]


class RaisesOverLines(Lowest):
    def choose_play(self, obs: Any) -> int:
        raise RuntimeError("the model is not loaded:\n  File model.py, line 3\n    load()")


class PassesBrokenGenerator(Lowest):
    """Passes a generator that yields one card, then raises as it is read."""

    def choose_pass(self, obs: Any) -> Any:
        yield super().choose_pass(obs)[0]
        raise RuntimeError("the generator broke")


class PassesForEver(Lowest):
    """Passes ``itertools.cycle`` of its three cards: an iterator without an end."""

    def choose_pass(self, obs: Any) -> Any:
        return itertools.cycle(super().choose_pass(obs))


class PassesRaisingTypeError(Lowest):
    """Passes a generator that raises ``TypeError`` of its own as it is read."""

    def choose_pass(self, obs: Any) -> Any:
        yield super().choose_pass(obs)[0]
        raise TypeError("a bug in the agent")


class BatchForEver(Lowest):
    """``act_batch`` answering ``itertools.cycle`` of a move: moves without end."""

    def act_batch(self, observations: list[Any]) -> Any:
        return itertools.cycle([self.choose_pass(observations[0]) if observations[0].phase == "pass" else 0])


class PlaysUnprintable(Lowest):
    """Plays an object whose repr raises."""

    def choose_play(self, obs: Any) -> Any:
        class Unprintable:
            def __repr__(self) -> str:
                raise RuntimeError("no repr")

        return Unprintable()


class PassesTwo(Lowest):
    def choose_pass(self, obs: Any) -> list[int]:
        return super().choose_pass(obs)[:2]


class Sleeps(Lowest):
    def __init__(self, seconds: float = 3.0) -> None:
        self.seconds = seconds

    def choose_play(self, obs: Any) -> int:
        time.sleep(self.seconds)
        return super().choose_play(obs)


class FailsWhile(Lowest):
    """``Lowest`` that raises while the file ``flag`` exists, once it has made ``after`` plays."""

    def __init__(self, flag: str, after: int = 0) -> None:
        self.flag, self.after, self.plays = Path(flag), after, 0

    def choose_play(self, obs: Any) -> int:
        self.plays += 1
        if self.plays > self.after and self.flag.exists():
            raise RuntimeError("failing on purpose")
        return super().choose_play(obs)


class FailsOnce(Lowest):
    """``Lowest`` that raises once, on the play that finds the file ``flag`` (which it removes)."""

    def __init__(self, flag: str) -> None:
        self.flag = Path(flag)

    def choose_play(self, obs: Any) -> int:
        try:
            self.flag.unlink()
        except FileNotFoundError:
            return super().choose_play(obs)
        raise RuntimeError("failing once")


class Printer(Lowest):
    """``Lowest`` that prints as it is made and at every decision (its stdout went to stdout)."""

    def __init__(self) -> None:
        print("Printer made")

    def choose_pass(self, obs: Any) -> list[int]:
        print("Printer passes")
        return super().choose_pass(obs)

    def choose_play(self, obs: Any) -> int:
        print("Printer plays")
        return super().choose_play(obs)


class SleepsOnce(Lowest):
    """``Lowest`` that takes ``seconds`` over its ``at``-th play alone."""

    def __init__(self, seconds: float, at: int = 3) -> None:
        self.seconds, self.at, self.plays = seconds, at, 0

    def choose_play(self, obs: Any) -> int:
        self.plays += 1
        if self.plays == self.at:
            time.sleep(self.seconds)
        return super().choose_play(obs)
