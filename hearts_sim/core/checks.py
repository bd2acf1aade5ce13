"""What every input check means by "a whole number" and "a number".

Python's ``bool`` is an ``int`` (``True + True == 2``), so a check written as ``isinstance(value,
int)`` lets ``deals=True`` through as one deal. These two predicates say once that a bool is not a
number, and that numpy's scalars are (a count from an array is a count); the range and the message
stay with each check, which knows what it asks for. A frozen dataclass that accepts numpy's
scalars stores them as Python's (``store_plain``), and a message shows what it refused on one line
(``shown``), with the likeliest meant name where a name is misspelt (``did_you_mean``) and a count
with its noun in the right number (``counted``).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable
from typing import Any, TypeGuard

import numpy as np


def is_integer(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a whole number: a Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_real(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real number: a Python or numpy integer or float, not a bool (NaN
    and the infinities pass: the range that follows each check decides on them)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def store_plain(instance: Any) -> None:
    """Store a frozen dataclass's numpy scalars as the Python numbers they are (``np.int64(4)`` as
    ``4``), so that it compares, hashes and writes to JSON as if they had been given so. Called
    first in ``__post_init__``, before the checks."""
    for f in dataclasses.fields(instance):
        value = getattr(instance, f.name)
        if isinstance(value, np.generic):
            object.__setattr__(instance, f.name, value.item())


def shown(value: object, width: int = 40) -> str:
    """``value``'s repr on one line and at most ``width`` characters, for an error message: a
    DataFrame or an array given where a name or a number belongs would otherwise spread it over
    many lines.

    >>> shown([1, 2]), shown("x" * 50, 10)
    ('[1, 2]', "'xxxxxxxx…")
    """
    try:
        text = repr(value)
    except Exception:  # an agent's answer whose repr raised: its traceback replaced the message
        text = f"a {type(value).__name__} whose repr raised"
    return one_line(text, width)


def one_line(text: object, width: int = 200) -> str:
    r"""``text`` on one line (each run of whitespace, newlines too, as one space), at most ``width``
    characters: what an agent or an engine said, in an error message of one line (an engine's
    error answer with its traceback ran over five lines and 3.4 KB).

    >>> one_line("Traceback:\n  File x\nValueError: bad"), one_line("y" * 9, 5)
    ('Traceback: File x ValueError: bad', 'yyyy…')
    """
    try:
        flat = " ".join(str(text).split())
    except Exception:
        flat = f"a {type(text).__name__} whose str raised"
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def counted(count: int, noun: str) -> str:
    """``count`` with ``noun`` in the singular or the plural (nouns whose plural adds an s).

    >>> counted(1, "deal"), counted(2_000, "deal"), counted(0, "game")
    ('1 deal', '2,000 deals', '0 games')
    """
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def did_you_mean(name: object, choices: Iterable[str]) -> str:
    """``"; did you mean 'normal'?"`` when ``name`` is a near miss of one of ``choices`` (a
    typo, not another word: difflib's similarity at least 0.75), else ``""``: the end of a message
    that lists every valid choice. Choices that come equally close are all named, in their order.

    >>> did_you_mean("nrmal", ["easy", "normal", "hard"]), did_you_mean("expert", ["easy", "hard"])
    ("; did you mean 'normal'?", '')
    >>> did_you_mean("sete", ["seat", "hand", "seed"])
    "; did you mean 'seat' or 'seed'?"
    """
    if not isinstance(name, str):
        return ""
    folded = name.casefold()  # moon=OFF means off
    ratios = {choice: difflib.SequenceMatcher(None, folded, choice.casefold()).ratio() for choice in choices}
    best = max(ratios.values(), default=0.0)
    if best < 0.75:
        return ""
    return f"; did you mean {' or '.join(repr(c) for c, r in ratios.items() if r == best)}?"
