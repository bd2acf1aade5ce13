"""Cards as bits: card index ``suit * 13 + rank``, a set of cards is one ``uint64``.

Suits are clubs=0, diamonds=1, spades=2, hearts=3 and ranks 0 (two) .. 12 (ace), so
``hand & SUIT_MASKS[s]`` answers "can follow suit" in one operation and the hearts are
bits 39..51. The bit helpers at the bottom are the kernels' vocabulary; each is one
LLVM instruction or a few, with the trick explained where it is not obvious.

>>> parse_card("QS") == QS, parse_card("10h"), card_str(parse_card("♠Q"))
(True, 47, 'QS')
>>> CardSet.parse("2C QS AH 10H")
CardSet('♣2 ♠Q ♥10 ♥A')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeAlias

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from hearts_sim._numba import njit, njit_inline, target_cpu_features
from hearts_sim.core.checks import is_integer, shown

Bitboard: TypeAlias = int  # a set of cards as a plain integer (bit i = card i)

N_SUITS = 4
N_RANKS = 13
N_CARDS = 52
CLUBS, DIAMONDS, SPADES, HEARTS = range(N_SUITS)
SUIT_LETTERS = "CDSH"
SUIT_NAMES = ("clubs", "diamonds", "spades", "hearts")
SUIT_SYMBOLS = "♣♦♠♥"
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
TWO, THREE, JACK, QUEEN, KING, ACE = 0, 1, 9, 10, 11, 12
NO_CARD = -1  # an empty slot (e.g. a seat that has not played to the trick yet)


def card_index(suit: int, rank: int) -> int:
    """A card's bit (0 to 51) from its suit and rank indexes: suits in the order clubs, diamonds,
    spades, hearts; ranks 2 to ace."""
    return suit * N_RANKS + rank


TWO_CLUBS = card_index(CLUBS, TWO)
TWO_DIAMONDS = card_index(DIAMONDS, TWO)
JD = card_index(DIAMONDS, JACK)
QS = card_index(SPADES, QUEEN)
KS = card_index(SPADES, KING)
AS = card_index(SPADES, ACE)

SUIT_BITS = np.uint64((1 << N_RANKS) - 1)  # the 13 bits of one suit, at rank positions
SUIT_MASKS = np.array([int(SUIT_BITS) << (N_RANKS * s) for s in range(N_SUITS)], dtype=np.uint64)
CLUBS_MASK = np.uint64(SUIT_MASKS[CLUBS])
SPADES_MASK = np.uint64(SUIT_MASKS[SPADES])
HEARTS_MASK = np.uint64(SUIT_MASKS[HEARTS])
FULL_DECK = np.uint64((1 << N_CARDS) - 1)
QS_BIT = np.uint64(1 << QS)
KS_BIT = np.uint64(1 << KS)
AS_BIT = np.uint64(1 << AS)
JD_BIT = np.uint64(1 << JD)
TWO_CLUBS_BIT = np.uint64(1 << TWO_CLUBS)
TWO_DIAMONDS_BIT = np.uint64(1 << TWO_DIAMONDS)
HEARTS_AND_QS = HEARTS_MASK | QS_BIT  # the standard point cards
BLACK_MARIA_POINT_CARDS = HEARTS_AND_QS | KS_BIT | AS_BIT
POINTS_PER_HEART, POINTS_QS, POINTS_KS, POINTS_AS = 1, 13, 10, 7


# ---------------------------------------------------------------- parsing and formatting
_SUIT_BY_CHAR = {
    **{c: i for i, c in enumerate(SUIT_LETTERS)},
    **{c: i for i, c in enumerate(SUIT_SYMBOLS)},
    **{c: i for i, c in enumerate("♧♢♤♡")},
}
_RANK_BY_TEXT = {**{r: i for i, r in enumerate(RANK_NAMES)}, "T": 8, "1": 12}
del _RANK_BY_TEXT["1"]  # "1" alone is not a rank (10 is "10" or "T")


def parse_card(text: str | int) -> int:
    """The index of a card written ``QS``, ``qs``, ``10h``, ``Th``, ``♠Q`` or ``Q♠``.

    An int in 0..51 is returned unchanged. Raises ``ValueError`` naming the string.
    """
    if is_integer(text):
        if 0 <= int(text) < N_CARDS:
            return int(text)
        raise ValueError(f"card index {text} is out of range 0..51")
    if not isinstance(text, str):
        raise ValueError(f"not a card: {shown(text)}")
    s = text.strip().upper()
    if len(s) >= 2:
        # suit first (♠Q) or last (QS)
        for suit_char, rank_text in ((s[0], s[1:]), (s[-1], s[:-1])):
            suit = _SUIT_BY_CHAR.get(suit_char)
            rank = _RANK_BY_TEXT.get(rank_text)
            if suit is not None and rank is not None:
                return card_index(suit, rank)
    raise ValueError(f"malformed card {text!r}: write rank then suit, e.g. 'QS', '10h', 'Th' or '♠Q'")


def card_str(card: int, symbols: bool = False) -> str:
    """``QS`` (or ``♠Q`` with symbols) for a card index."""
    if not is_integer(card):
        raise ValueError(f"not a card index: {shown(card)}")
    if not 0 <= card < N_CARDS:
        raise ValueError(f"card index {card} is out of range 0..51")
    suit, rank = divmod(int(card), N_RANKS)
    return (
        f"{SUIT_SYMBOLS[suit]}{RANK_NAMES[rank]}" if symbols else (f"{RANK_NAMES[rank]}{SUIT_LETTERS[suit]}")
    )


def parse_cards(cards: str | Iterable[str | int] | CardSet | int | np.integer) -> int:
    """A bitboard from a space/comma separated string, an iterable of cards or a ``CardSet``."""
    if isinstance(cards, CardSet):
        return cards.mask
    if isinstance(cards, bool):
        raise ValueError(f"not a card set: {shown(cards)}")
    if isinstance(cards, (int, np.integer)):
        mask = int(cards)
        if mask < 0 or mask >> N_CARDS:
            raise ValueError(f"bitboard {mask:#x} has bits outside the 52 cards")
        return mask
    if isinstance(cards, str):
        cards = cards.replace(",", " ").split()
    if not isinstance(cards, Iterable):  # None: "'NoneType' object is not iterable"
        raise ValueError(f"not a card set: {shown(cards)}")
    mask = 0
    for count, card in enumerate(cards, 1):
        if count > N_CARDS:  # an endless iterator ran for ever
            raise ValueError(f"more than {N_CARDS} cards listed: a card set holds each card once")
        mask |= 1 << parse_card(card)
    return mask


def listed_twice(cards: str | Iterable[str | int] | CardSet | int | np.integer) -> int | None:
    """The first card that a string or list of cards names twice (None if none, or for a set or a
    bitboard, which cannot): as a bitboard it is one card short. Call after ``parse_cards``."""
    words = cards.replace(",", " ").split() if isinstance(cards, str) else cards
    if not isinstance(words, (list, tuple)):
        return None
    listed = [parse_card(card) for card in words]
    return next((card for card in listed if listed.count(card) > 1), None)


def cards_of(mask: int) -> list[int]:
    """The card indices of a bitboard, lowest first; ``ValueError`` for anything but a set of
    the 52 cards (a negative Python int would never run out of low bits)."""
    if not is_integer(mask) or not 0 <= mask < 1 << N_CARDS:
        raise ValueError(f"not a bitboard of the 52 cards: {shown(mask)}")
    mask = int(mask)
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cards_str(mask: int) -> str:
    """A bitboard's cards, lowest first, space separated (empty for none).

    >>> cards_str(parse_cards("QS 2C"))
    '2C QS'
    """
    return " ".join(card_str(c) for c in cards_of(mask))


class CardSet:
    """A bitboard with set operators and a readable repr, for notebooks and tests.

    >>> hand = CardSet.parse("2C 5C QS 3H")
    >>> hand & CardSet.suit("clubs"), len(hand), "QS" in hand
    (CardSet('♣2 ♣5'), 4, True)
    >>> int(hand - CardSet.parse("QS"))
    1099511627785
    """

    __slots__ = ("mask",)

    def __init__(self, cards: str | Iterable[str | int] | CardSet | int | np.integer = 0):
        self.mask = parse_cards(cards)

    @classmethod
    def parse(cls, text: str) -> CardSet:
        return cls(text)

    @classmethod
    def of_mask(cls, mask: int) -> CardSet:
        """A card set from a bitboard known to be valid (no checks: for bulk construction)."""
        cards = object.__new__(cls)
        cards.mask = mask
        return cards

    @classmethod
    def suit(cls, name: str | int) -> CardSet:
        """The 13 cards of a suit, by name (``"hearts"``, any case) or index (0 clubs .. 3 hearts)."""
        if is_integer(name) and 0 <= name < N_SUITS:
            return cls(int(SUIT_MASKS[name]))
        if isinstance(name, str) and name.lower() in SUIT_NAMES:
            return cls(int(SUIT_MASKS[SUIT_NAMES.index(name.lower())]))
        raise ValueError(f"not a suit: {shown(name)} (choose {', '.join(SUIT_NAMES)} or 0..3)")

    @classmethod
    def deck(cls) -> CardSet:
        return cls(int(FULL_DECK))

    def __iter__(self) -> Iterator[int]:
        return iter(cards_of(self.mask))

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, card: object) -> bool:
        return bool(self.mask >> parse_card(card) & 1)  # type: ignore[arg-type]

    def __int__(self) -> int:
        return self.mask

    def __index__(self) -> int:
        return self.mask

    def __bool__(self) -> bool:
        return self.mask != 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CardSet):
            return self.mask == other.mask
        if isinstance(other, (int, np.integer)):
            return self.mask == int(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.mask)

    def __or__(self, other: object) -> CardSet:
        return CardSet(self.mask | CardSet(other).mask)  # type: ignore[arg-type]

    def __and__(self, other: object) -> CardSet:
        return CardSet(self.mask & CardSet(other).mask)  # type: ignore[arg-type]

    def __sub__(self, other: object) -> CardSet:
        return CardSet(self.mask & ~CardSet(other).mask)  # type: ignore[arg-type]

    def __xor__(self, other: object) -> CardSet:
        return CardSet(self.mask ^ CardSet(other).mask)  # type: ignore[arg-type]

    def __invert__(self) -> CardSet:
        return CardSet(int(FULL_DECK) & ~self.mask)

    __ror__, __rand__, __rxor__ = __or__, __and__, __xor__

    def to_list(self, symbols: bool = False) -> list[str]:
        """Each card's name in deck order: ``['2C', 'QS']``, or ``['♣2', '♠Q']`` with ``symbols``."""
        return [card_str(c, symbols) for c in self]

    def by_suit(self) -> str:
        """The cards grouped by suit, for a table or a prompt.

        >>> CardSet.parse("2C 9C KC QS 10H AH").by_suit()
        '♣ 2 9 K  ♦ -  ♠ Q  ♥ 10 A'
        """
        groups = []
        for suit, symbol in enumerate(SUIT_SYMBOLS):
            ranks = [RANK_NAMES[c % N_RANKS] for c in self if c // N_RANKS == suit]
            groups.append(f"{symbol} {' '.join(ranks) or '-'}")
        return "  ".join(groups)

    def __str__(self) -> str:
        return " ".join(self.to_list(symbols=True))

    def __repr__(self) -> str:
        return f"CardSet('{self}')"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the cards by suit, with symbols, hearts and diamonds in red."""
        return cards_html(self.mask)


# ---------------------------------------------------------------- HTML for notebooks
# Every card is one ``<span class="hs-card" data-card="QS">`` (the tests count cards by that
# attribute); the markup is well-formed XML (no named entities) so a strict parser reads it.
RED = "#c8102e"  # hearts and diamonds; black suits keep the notebook's text colour (dark themes)
_RED_SUITS = (DIAMONDS, HEARTS)
_LEFT = "text-align:left;padding:2px 8px;vertical-align:top"  # notebooks right-align cells


def card_html(card: int, emphasis: bool = False) -> str:
    """One card as ``♠Q`` in its suit's colour; ``emphasis`` sets it in bold (a trick's winner)."""
    style = f"color:{RED};" if card // N_RANKS in _RED_SUITS else ""
    style += "font-weight:bold;" if emphasis else ""
    return (
        f'<span class="hs-card" data-card="{card_str(card)}" style="{style}white-space:nowrap">'
        f"{card_str(card, symbols=True)}</span>"
    )


def cards_html(mask: int, underline: int = 0) -> str:
    """A set of cards sorted by suit (clubs, diamonds, spades, hearts), a gap between suits;
    the cards of ``underline`` are underlined (e.g. the ones chosen to pass)."""
    if not mask:
        return '<span class="hs-cards" title="no cards">-</span>'
    groups = []
    for suit in range(N_SUITS):
        cards = cards_of(int(mask) & int(SUIT_MASKS[suit]))
        if cards:
            shown = [f"<u>{card_html(c)}</u>" if underline >> c & 1 else card_html(c) for c in cards]
            groups.append(f'<span class="hs-suit" style="margin-right:0.8em">{" ".join(shown)}</span>')
    return f'<span class="hs-cards">{"".join(groups)}</span>'


def html_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    caption: str = "",
    kind: str = "",
    row_styles: Sequence[str] = (),
) -> str:
    """A small left-aligned table of HTML cells (escape text with ``html.escape``); ``kind`` names
    it in its class (``hs-replay``), ``row_styles[i]`` styles row i (a highlight)."""
    head = "".join(f'<th style="{_LEFT}">{cell}</th>' for cell in header)
    body = []
    for i, row in enumerate(rows):
        style = f' style="{row_styles[i]}"' if i < len(row_styles) and row_styles[i] else ""
        cells = "".join(f'<td style="{_LEFT}">{cell}</td>' for cell in row)
        body.append(f"<tr{style}>{cells}</tr>")
    title = f'<caption style="text-align:left">{caption}</caption>' if caption else ""
    return (
        f'<table class="{f"hs-table {kind}".strip()}" style="border-collapse:collapse">{title}'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


# ---------------------------------------------------------------- bit helpers for kernels
@intrinsic
def _popcount(typingctx, mask):  # type: ignore[no-untyped-def]

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def _count_trailing_zeros(typingctx, mask):  # type: ignore[no-untyped-def]
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@intrinsic
def _count_leading_zeros(typingctx, mask):  # type: ignore[no-untyped-def]
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(types.uint64), codegen


@njit_inline
def popcount(mask: np.uint64) -> np.uint64:
    """Number of cards in a bitboard (one ``popcnt``)."""
    return _popcount(mask)  # type: ignore[call-arg]


def card_counts(masks: np.ndarray) -> np.ndarray:
    """Number of cards in each bitboard of a ``uint64`` array, as int64: ``popcount`` for numpy
    (``np.bitwise_count`` from numpy 2.0; before it, the set bits of each byte summed).

    >>> card_counts(np.array([0, 0b1011, 2**52 - 1], dtype=np.uint64)).tolist()
    [0, 3, 52]
    """
    masks = np.asarray(masks, dtype=np.uint64)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(masks).astype(np.int64)
    as_bytes = masks.reshape(-1, 1).view(np.uint8)
    return np.unpackbits(as_bytes, axis=1).sum(axis=1, dtype=np.int64).reshape(masks.shape)


@njit
def lowest_card(mask: np.uint64) -> np.int64:
    """Index of the lowest set bit (64 for an empty set)."""
    return np.int64(_count_trailing_zeros(mask))  # type: ignore[call-arg]


@njit
def highest_card(mask: np.uint64) -> np.int64:
    """Index of the highest set bit (-1 for an empty set)."""
    return np.int64(63) - np.int64(_count_leading_zeros(mask))  # type: ignore[call-arg]


@njit
def card_bit(card: np.int64) -> np.uint64:
    return np.uint64(1) << np.uint64(card)


@njit
def has_card(mask: np.uint64, card: np.int64) -> bool:
    return (mask >> np.uint64(card)) & np.uint64(1) != np.uint64(0)


@njit
def suit_of(card: np.int64) -> np.int64:
    return card // N_RANKS


@njit
def rank_of(card: np.int64) -> np.int64:
    return card % N_RANKS


@njit
def ranks_held(mask: np.uint64) -> np.uint64:
    """The 13-bit set of ranks present in any suit: the four suits folded onto each other."""
    return (mask | (mask >> np.uint64(13)) | (mask >> np.uint64(26)) | (mask >> np.uint64(39))) & SUIT_BITS


RANK_COLUMN = np.uint64(1 | 1 << 13 | 1 << 26 | 1 << 39)  # the four cards of rank 0 (the twos)


@njit
def highest_ranked_card(mask: np.uint64) -> np.int64:
    """The card of highest rank (ties: the higher suit, hearts first); -1 if empty."""
    ranks = ranks_held(mask)
    if ranks == np.uint64(0):
        return np.int64(-1)
    return highest_card(mask & (RANK_COLUMN << np.uint64(highest_card(ranks))))


@njit
def lowest_ranked_card(mask: np.uint64) -> np.int64:
    """The card of lowest rank (ties: the lower suit, clubs first); 64 if empty."""
    ranks = ranks_held(mask)
    if ranks == np.uint64(0):
        return np.int64(64)
    return lowest_card(mask & (RANK_COLUMN << np.uint64(lowest_card(ranks))))


# SELECT_IN_BYTE[b * 8 + k]: position of the k-th set bit of byte b (8 where absent).
SELECT_IN_BYTE = np.full(256 * 8, 8, dtype=np.uint8)
for _byte in range(256):
    for _k, _pos in enumerate(i for i in range(8) if _byte >> i & 1):
        SELECT_IN_BYTE[_byte * 8 + _k] = _pos

# BMI2's pdep deposits the bits of its first operand at the set bits of the second, so
# pdep(1 << k, mask) is the k-th set bit of mask: one 3-cycle instruction on current x86.
# Used where numba compiles for a CPU with BMI2 (not where the host has it but numba targets
# another, as with NUMBA_CPU_NAME=generic: LLVM would abort). Numba's cache is keyed by the
# target's CPU and features, so a kernel compiled with pdep is only loaded where they match.
HAS_PDEP = "+bmi2" in target_cpu_features()


@intrinsic
def _pdep(typingctx, source, mask):  # type: ignore[no-untyped-def]
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64 = ir.IntType(64)
        fn = builder.module.declare_intrinsic("llvm.x86.bmi.pdep.64", fnty=ir.FunctionType(i64, [i64, i64]))
        return builder.call(fn, args)

    return types.uint64(types.uint64, types.uint64), codegen


@njit
def _select_bit_portable(mask: np.uint64, k: np.int64) -> np.int64:
    """Branch-free narrowing: if the low half holds <= k bits, skip it (shift by 32 and
    subtract its count from k), then the same for 16 and 8 bits, then a byte table."""
    kk = np.uint64(k)
    position = np.uint64(0)
    for width in (32, 16, 8):
        w = np.uint64(width)
        low_count: np.uint64 = popcount(mask & ((np.uint64(1) << w) - np.uint64(1)))
        skip = np.uint64(low_count <= kk)
        kk -= skip * low_count
        mask >>= skip * w
        position += skip * w
    return np.int64(position + np.uint64(SELECT_IN_BYTE[(mask & np.uint64(0xFF)) * np.uint64(8) + kk]))


@njit
def select_card_bit(mask: np.uint64, k: np.int64) -> np.uint64:
    """The k-th (0-based) set bit of ``mask`` as a bitboard: ``card_bit(select_bit(mask, k))``
    in one instruction with pdep (no round trip through the index on a dealing chain)."""
    if HAS_PDEP:
        return _pdep(np.uint64(1) << np.uint64(k), mask)  # type: ignore[call-arg,no-any-return]
    return card_bit(_select_bit_portable(mask, k))


@njit
def select_bit(mask: np.uint64, k: np.int64) -> np.int64:
    """Index of the k-th (0-based) set bit of ``mask``; k must be < popcount(mask).

    A bit-clearing loop has an unpredictable trip count and is much slower.
    """
    if HAS_PDEP:
        return lowest_card(_pdep(np.uint64(1) << np.uint64(k), mask))  # type: ignore[call-arg]
    return _select_bit_portable(mask, k)
