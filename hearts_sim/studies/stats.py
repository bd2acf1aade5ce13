"""Tournament statistics: exact integer tallies, paired differences with confidence intervals,
game ratings, and the results table.

Every figure is computed from integer sums per deal (scores and their squares, paired
differences and theirs), so a run that is interrupted and resumed gives a byte-identical
summary. Confidence intervals are t-intervals over deals, since the seatings of one deal
are correlated; with games, OpenSkill (Plackett-Luce) rates every game.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.checks import counted, is_integer, is_real, shown, store_plain
from hearts_sim.core.errors import InputError
from hearts_sim.core.rules import MAX_POINTS, PASS_DIRECTIONS, pass_direction_name, rules_label
from hearts_sim.engine.hand import MAX_HANDS_PER_GAME
from hearts_sim.selfplay.records import undecided_games

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval

# ---------------------------------------------------------------------------- statistics
_PAIR_SUMS = ("pair_sum", "pair_square_sum")  # Tally's k by k sums, kept in every run
# and those of games, None where not kept
_GAME_SQUARES = ("hands_square_sum", "score_hands_sum", "wins_square_sum")
# Tally's lists of one integer sum per agent
_PER_AGENT_SUMS = (
    "score_sum",
    "score_square_sum",
    "moons_made",
    "moons_suffered",
    "qs_taken",
    "tricks",
    "games_hands",
    "wins",
)


def _added(rows: list[list[int]], delta: np.ndarray | list[list[int]]) -> list[list[int]]:
    """A k by k list of exact (Python) integer sums plus ``delta``, element by element."""
    added = delta.tolist() if isinstance(delta, np.ndarray) else delta
    return [[x + y for x, y in zip(r, q, strict=True)] for r, q in zip(rows, added, strict=True)]


@dataclass
class Tally:
    """Exact integer sums over deals, per agent and per pair of agents (JSON-serialisable).

    ``score_sum[a]`` is the sum over deals of S_a(d), agent a's total score in deal d over
    all its seats and seatings; ``pair_sum[a][b]`` sums S_a(d) c_b - S_b(d) c_a, the
    paired difference scaled to integers (c_a: agent a's seats per deal).
    """

    n_agents: int
    slots_per_deal: list[int]
    deals: int = 0
    hands: int = 0
    score_sum: list[int] = field(default_factory=list)
    score_square_sum: list[int] = field(default_factory=list)
    pair_sum: list[list[int]] = field(default_factory=list)
    pair_square_sum: list[list[int]] = field(default_factory=list)
    moons_made: list[int] = field(default_factory=list)
    moons_suffered: list[int] = field(default_factory=list)
    qs_taken: list[int] = field(default_factory=list)
    tricks: list[int] = field(default_factory=list)
    games_hands: list[int] = field(default_factory=list)  # --games: hands played per slot, summed
    wins: list[int] = field(default_factory=list)
    ratings: list[list[float]] = field(default_factory=list)  # --games: OpenSkill (mu, sigma)
    # --games: games cut off undecided after MAX_HANDS_PER_GAME hands, no one winning (None: not
    # counted, a run begun before 2026-12-07; its resume does not know the chunks before)
    undecided: int | None = None
    # --games, over game seeds (each played in every seating): the sums of X_a X_b (X_a: the hands
    # of agent a's games of the seed, summed over its seats) and of Y_a X_b (Y_a: their final
    # scores), which with the score sums give the ratio estimator's interval (``ratio_moments``);
    # None: not kept (hands, or a run of games begun before they were, on 2026-12-07)
    hands_square_sum: list[list[int]] | None = None
    score_hands_sum: list[list[int]] | None = None
    # --games, over game seeds: the sums of W_a W_b (W_a: the games of the seed agent a won, summed
    # over its seats), for the win rates' intervals (``win_rate``, ``win_rate_difference``); None:
    # not kept (hands, or a run of games begun before they were, on 2026-12-08)
    wins_square_sum: list[list[int]] | None = None
    # whether ``moons_suffered`` counts only the moons of another agent's seats (``moons_by_others``);
    # False: a tally begun before 2026-12-07, which counted the agent's own copies' moons too
    suffered_by_others: bool = False
    # hands: the same sums over the deals passed each way, by pass_direction_name (``left``, ...)
    by_direction: dict[str, Tally] = field(default_factory=dict)

    def __post_init__(self) -> None:
        k = self.n_agents
        if not is_integer(k) or k < 1:
            raise TypeError(f"n_agents is {shown(k)}, not a count of agents")
        for name in _PER_AGENT_SUMS:
            if not getattr(self, name):
                setattr(self, name, [0] * k)
        for name in _PAIR_SUMS:
            if not getattr(self, name):
                setattr(self, name, [[0] * k for _ in range(k)])
        self._check_shape()
        if not isinstance(self.by_direction, dict):
            raise TypeError("by_direction is not a mapping of pass directions to tallies")
        self.by_direction = {
            str(d): t if isinstance(t, Tally) else Tally(**t) for d, t in self.by_direction.items()
        }

    @staticmethod
    def problem(manifest: Any) -> str | None:
        """Why a manifest's ``tally`` cannot be read (its keys, the kinds and lengths of its sums);
        None when it can."""
        try:
            Tally(**manifest["tally"])
        except (KeyError, TypeError) as error:
            return f"holds no readable tally ({error})" if isinstance(error, TypeError) else "holds no tally"
        return None

    def _check_shape(self) -> None:
        """``TypeError`` unless every sum is a whole number (the counts not negative) and every
        list holds one per agent (pairs: k by k): a hand-edited manifest's tally was an
        ``IndexError`` on resume, a ``zip`` error in combine, or figures from the wrong sums."""
        k = self.n_agents

        def ints(values: Any) -> bool:  # one whole number per agent
            return isinstance(values, list) and len(values) == k and all(map(is_integer, values))

        counts = ["deals", "hands"] + (["undecided"] if self.undecided is not None else [])  # None: uncounted
        if not isinstance(self.suffered_by_others, bool):
            raise TypeError(f"suffered_by_others is {shown(self.suffered_by_others)}, not true or false")
        problems = [
            f"{name} is {shown(getattr(self, name))}, not a count"
            for name in counts
            if not (is_integer(getattr(self, name)) and getattr(self, name) >= 0)
        ]
        problems += [
            f"{name} is not {k} whole numbers"
            for name in ("slots_per_deal", *_PER_AGENT_SUMS)
            if not ints(getattr(self, name))
        ]

        def square(rows: Any) -> bool:  # k by k whole numbers
            return isinstance(rows, list) and len(rows) == k and all(map(ints, rows))

        problems += [
            f"{name} is not {k} by {k} whole numbers"
            for name in (*_PAIR_SUMS, *_GAME_SQUARES)
            if (name in _PAIR_SUMS or getattr(self, name) is not None)  # a game square None: not kept
            and not square(getattr(self, name))
        ]
        if self.ratings and not (
            isinstance(self.ratings, list)
            and len(self.ratings) == k
            and all(isinstance(r, list) and len(r) == 2 and all(map(is_real, r)) for r in self.ratings)
        ):
            problems.append(f"ratings is not {k} pairs of numbers")
        if problems:
            raise TypeError(f"its {problems[0]}")

    def direction(self, name: str) -> Tally:
        """The tally of the deals passed ``name`` (empty until one is added)."""
        if name not in self.by_direction:
            self.by_direction[name] = Tally(n_agents=self.n_agents, slots_per_deal=list(self.slots_per_deal))
        return self.by_direction[name]

    def directions_complete(self) -> bool:
        """Whether the tallies by pass direction hold every deal (a run begun before they were
        kept, or of whole games, has none or only some)."""
        return bool(self.by_direction) and sum(t.deals for t in self.by_direction.values()) == self.deals

    def add_deal_sums(self, per_deal: np.ndarray) -> None:
        """Fold in a (deals, agents) int64 array of per-deal score sums S_a(d).

        A pair's per-deal difference is D_ab = S_a c_b - S_b c_a (c: slots per deal), so its sums
        come from each agent's sum and the Gram matrix G = S^T S: sum D_ab = c_b sum S_a -
        c_a sum S_b and sum D_ab^2 = c_b^2 G_aa + c_a^2 G_bb - 2 c_a c_b G_ab, exact in int64
        (|S| < 2**16 a deal). A loop over the pairs took 2.8 s a chunk of 64 deals at 256 agents."""
        sums = per_deal.astype(np.int64)
        c = np.asarray(self.slots_per_deal, dtype=np.int64)
        self.deals += len(per_deal)
        total = sums.sum(axis=0)
        gram = sums.T @ sums
        square = np.diag(gram)
        pair = np.outer(total, c) - np.outer(c, total)
        pair_square = np.outer(square, c * c) + np.outer(c * c, square) - 2 * np.outer(c, c) * gram
        self.score_sum = [x + y for x, y in zip(self.score_sum, total.tolist(), strict=True)]
        self.score_square_sum = [x + y for x, y in zip(self.score_square_sum, square.tolist(), strict=True)]
        self.pair_sum = _added(self.pair_sum, pair)
        self.pair_square_sum = _added(self.pair_square_sum, pair_square)

    def add(self, other: Tally) -> None:
        """Fold in the tally of a run of the same agents and seatings over other deals: every
        figure is a sum over deals, so the pooled tally is the sum. Not for games, whose ratings
        depend on the order of every game."""
        if self.ratings or other.ratings:
            raise ValueError("the tallies of games hold ratings, which do not add")
        if (self.n_agents, self.slots_per_deal) != (other.n_agents, other.slots_per_deal):
            raise ValueError("the tallies are of other agents or seatings")
        self.deals += other.deals
        self.hands += other.hands
        self.suffered_by_others = self.suffered_by_others and other.suffered_by_others
        for name in _PER_AGENT_SUMS:
            setattr(
                self, name, [x + y for x, y in zip(getattr(self, name), getattr(other, name), strict=True)]
            )
        for name in _PAIR_SUMS:
            setattr(self, name, _added(getattr(self, name), getattr(other, name)))
        for name in _GAME_SQUARES:  # kept by both, or by neither of the pooled tally
            mine, theirs = getattr(self, name), getattr(other, name)
            setattr(self, name, None if mine is None or theirs is None else _added(mine, theirs))
        for name, tally in other.by_direction.items():
            self.direction(name).add(tally)

    # ------------------------------------------------------------------ derived figures
    def _moments(self, total: int, square: int, scale: int) -> tuple[float, float]:
        """Mean per deal / scale and the sample variance over deals (NaN below two deals)."""
        n = self.deals
        mean = total / n / scale
        if n < 2:
            return mean, float("nan")
        return mean, max((square - total * total / n) / (n - 1) / (scale * scale), 0.0)

    def _mean_ci(self, total: int, square: int, scale: int) -> tuple[float, list[float], float]:
        """Mean per deal / scale, its 95% t-interval, and the two-sided p-value against 0."""
        n = self.deals
        mean, variance = self._moments(total, square, scale)
        return (mean, *t_interval(mean, math.sqrt(variance / n), n - 1))

    def _score_square(self, a: int, b: int) -> int:
        """The sum over deals of S_a(d) S_b(d), from the pair's sum of squares (``add_deal_sums``)."""
        c_a, c_b = self.slots_per_deal[a], self.slots_per_deal[b]
        if a == b:
            return self.score_square_sum[a]
        squares = c_b * c_b * self.score_square_sum[a] + c_a * c_a * self.score_square_sum[b]
        return (squares - self.pair_square_sum[a][b]) // (2 * c_a * c_b)

    def _ratio_residuals(self, a: int, b: int) -> int:
        """H_a H_b times the sum over game seeds of (Y_a - R_a X_a)(Y_b - R_b X_b), exactly (Y: final
        scores and X: hands, summed over the agent's seats of the seed's games; H = sum of X and
        R = sum of Y / H, the agent's points per hand)."""
        assert self.hands_square_sum is not None and self.score_hands_sum is not None
        h_a, h_b = self.games_hands[a], self.games_hands[b]
        y_a, y_b = self.score_sum[a], self.score_sum[b]
        return (
            h_a * h_b * self._score_square(a, b)
            - h_a * y_b * self.score_hands_sum[a][b]
            - y_a * h_b * self.score_hands_sum[b][a]
            + y_a * y_b * self.hands_square_sum[a][b]
        )

    def _ratio_ci(self, weights: dict[int, int]) -> tuple[float, list[float], float]:
        """sum_a w_a R_a over agents a (R_a: its final score points per hand played, over every game
        of every seed), with a 95% t-interval over game seeds and the p-value against 0. A game's
        length varies, and an agent's seats of a seed play games of different lengths, so R_a is a
        ratio estimator: its variance is the delta method's, (1 / n) times the sample variance
        over seeds of sum_a w_a (Y_a - R_a X_a) / mean X_a, computed from exact integer sums. Without
        the sums of a run begun before they were kept, the estimate alone (NaN interval)."""
        n = self.deals
        mean = sum(w * self.score_sum[a] / self.games_hands[a] for a, w in weights.items())
        if n < 2 or self.hands_square_sum is None:
            return mean, [math.nan, math.nan], math.nan
        # sum over seeds of (sum_a w_a z_a)^2, z_a = (Y_a - R_a X_a) n / H_a, over the common
        # denominator prod_a H_a^2 ... kept exact as a Fraction until the end
        from fractions import Fraction

        square = sum(
            Fraction(w_a * w_b * self._ratio_residuals(a, b) * n * n)
            / (self.games_hands[a] ** 2 * self.games_hands[b] ** 2)
            for a, w_a in weights.items()
            for b, w_b in weights.items()
        )
        variance = max(float(square / (n * (n - 1))), 0.0)
        return (mean, *t_interval(mean, math.sqrt(variance), n - 1))

    def points_per_hand(self, a: int) -> tuple[float, list[float]]:
        """Agent ``a``'s mean score per hand and its 95% interval over deals (games: its final
        scores over the hands its games lasted, ``_ratio_ci``)."""
        if self.games_hands[a]:
            mean, ci, _ = self._ratio_ci({a: 1})
            return mean, ci
        mean, ci, _ = self._mean_ci(self.score_sum[a], self.score_square_sum[a], self.slots_per_deal[a])
        return mean, ci

    def difference(self, a: int, b: int) -> tuple[float, list[float], float]:
        """Agent a's points per hand minus agent b's, with 95% CI and p-value: over hands, the
        mean of the paired per-deal differences; over games, the difference of the two ratios
        ``points_per_hand`` gives (``_ratio_ci``)."""
        if self.games_hands[a] and self.games_hands[b]:
            return self._ratio_ci({a: 1, b: -1})
        scale = self.slots_per_deal[a] * self.slots_per_deal[b]
        return self._mean_ci(self.pair_sum[a][b], self.pair_square_sum[a][b], scale)

    def win_rate(self, a: int) -> tuple[float, list[float]]:
        """Agent ``a``'s share of the games it played that it won, with its 95% t-interval over game
        seeds (each seed's games, in every seating, are one sample: ``W_a / c_a``); a NaN interval
        for a run begun before the sums were kept (``wins_square_sum``)."""
        c = self.slots_per_deal[a]
        if self.wins_square_sum is None:
            return self.wins[a] / self.deals / c, [math.nan, math.nan]
        mean, ci, _ = self._mean_ci(self.wins[a], self.wins_square_sum[a][a], c)
        return mean, ci

    def win_rate_difference(self, a: int, b: int) -> tuple[float, list[float], float]:
        """Agent a's win rate minus b's, paired over game seeds (``W_a c_b - W_b c_a``, scaled by
        ``c_a c_b``, as ``add_deal_sums`` pairs the points), its 95% interval and p-value; NaN
        where the sums were not kept."""
        c_a, c_b = self.slots_per_deal[a], self.slots_per_deal[b]
        total = c_b * self.wins[a] - c_a * self.wins[b]
        if self.wins_square_sum is None:
            return total / self.deals / (c_a * c_b), [math.nan, math.nan], math.nan
        gram = self.wins_square_sum
        square = c_b * c_b * gram[a][a] + c_a * c_a * gram[b][b] - 2 * c_a * c_b * gram[a][b]
        return self._mean_ci(total, square, c_a * c_b)

    def difference_moments(self, a: int, b: int) -> tuple[float, float]:
        """The mean and the sample variance over deals of agent a's points per deal-slot minus b's."""
        scale = self.slots_per_deal[a] * self.slots_per_deal[b]
        return self._moments(self.pair_sum[a][b], self.pair_square_sum[a][b], scale)


def t95(dof: int) -> float:
    """Student's t quantile of a two-sided 95% interval with ``dof`` degrees of freedom."""
    # Student's t from scipy.special, imported when needed: scipy.stats, whose t.ppf and t.sf
    # call these two, took 0.4 s more to import, and its dispatch 0.1 ms a call (a tournament
    # of 256 agents spent 44 s in 163,000 of them, for 33,000 pairs in 5 directions)
    from scipy.special import stdtrit

    return float(stdtrit(dof, 0.975))


def t_interval(mean: float, se: float, dof: int) -> tuple[list[float], float]:
    """The 95% t-interval ``mean +- t * se`` with ``dof`` degrees of freedom, and the two-sided
    p-value of ``mean`` against 0 (NaN both, below one degree of freedom)."""
    if dof < 1 or math.isnan(se):
        return [float("nan"), float("nan")], float("nan")
    from scipy.special import stdtr

    half = t95(dof) * se
    p = 1.0 if se == 0 and mean == 0 else (0.0 if se == 0 else float(2 * stdtr(dof, -abs(mean) / se)))
    return [mean - half, mean + half], p


# ---------------------------------------------------------------------------- sequential test
SPRT_MIN_DEALS = 30  # the variance estimate of fewer deals is too rough to stop on
SPRT_ACCEPT_H1 = "H1"
SPRT_ACCEPT_H0 = "H0"


@dataclass(frozen=True)
class Sprt:
    """Wald's sequential probability ratio test of a match, on the paired difference per deal.

    H0: the first agent gains ``null`` points per hand on the second (0: they are level); H1: it
    gains ``gain`` (points are penalties, so a gain of g is a difference of -g). Each deal's
    difference is taken as normal with the variance of the deals so far (the generalised SPRT
    engine testers use), so after ``n`` deals of mean difference ``m`` and variance ``v`` the
    log-likelihood ratio is

        LLR = n * (gain - null) * (-m - (gain + null) / 2) / v

    and the match stops at the first check (after each chunk of deals, from ``SPRT_MIN_DEALS``
    on) where it leaves ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``: above, H1 is
    accepted, below, H0, with error rates of about ``alpha`` (H1 accepted when H0 holds) and
    ``beta`` (H0 accepted when H1 holds). On the same noise it needs about half the deals of a
    fixed-length match with that power, fewer still where the truth lies far from halfway.
    """

    gain: float
    alpha: float = 0.05
    beta: float = 0.05
    null: float = 0.0

    def __post_init__(self) -> None:
        store_plain(self)
        if not is_real(self.gain) or not 0 < self.gain <= MAX_POINTS:
            raise InputError(
                f"sprt gain={shown(self.gain)} is not valid: the points per hand H1 says the first agent "
                f"gains, in (0, {MAX_POINTS:g}]"
            )
        if not is_real(self.null) or not -MAX_POINTS <= self.null < self.gain:
            raise InputError(
                f"sprt null={shown(self.null)} is not valid: the gain H0 says, "
                f"in -{MAX_POINTS:g} .. below gain={self.gain:g}"
            )
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not is_real(value) or not 0 < value < 0.5:
                raise InputError(f"sprt {name}={shown(value)} is not valid: an error rate in (0, 0.5)")

    @property
    def bounds(self) -> tuple[float, float]:
        """The LLR below which H0 is accepted and above which H1 is."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, tally: Tally) -> float:
        """The log-likelihood ratio of H1 to H0 after the tally's deals (NaN below two deals);
        with no spread at all, +-inf as the mean lies nearer H1 or H0 (0 halfway)."""
        if tally.deals < 2:
            return math.nan
        mean, variance = tally.difference_moments(0, 1)
        margin = -mean - (self.gain + self.null) / 2  # > 0: the mean lies nearer H1
        if variance == 0:
            return math.copysign(math.inf, margin) if margin else 0.0
        return tally.deals * (self.gain - self.null) * margin / variance

    def verdict(self, tally: Tally) -> str | None:
        """``SPRT_ACCEPT_H1``, ``SPRT_ACCEPT_H0``, or None while the test goes on."""
        if tally.deals < SPRT_MIN_DEALS:
            return None
        llr = self.llr(tally)
        low, high = self.bounds
        return SPRT_ACCEPT_H1 if llr >= high else SPRT_ACCEPT_H0 if llr <= low else None

    def summary(self, tally: Tally, deals_cap: int) -> dict[str, Any]:
        """The test's figures for a run's summary (JSON data)."""
        low, high = self.bounds
        llr = self.llr(tally)
        return {
            "gain": self.gain,
            "null": self.null,
            "alpha": self.alpha,
            "beta": self.beta,
            "llr": llr if math.isfinite(llr) else None,  # no spread: the verdict says it
            "bounds": [low, high],
            "verdict": self.verdict(tally),
            "deals_cap": deals_cap,
        }


def mean_interval(values: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its 95% t-interval over ``values`` (n - 1 degrees of freedom,
    ``t95``; until 2026-12-07 the normal quantile, 6.4% too narrow at 20 values); NaN where there
    are too few values."""
    if len(values) < 2:
        return float(values.mean()) if len(values) else float("nan"), float("nan")
    return float(values.mean()), t95(len(values) - 1) * float(values.std(ddof=1) / np.sqrt(len(values)))


def _direction_row(direction: str, tally: Tally, a: int, b: int) -> dict[str, Any]:
    diff, ci, p = tally.difference(a, b)
    return {
        "direction": direction,
        "deals": tally.deals,
        "a_minus_b": _exact(diff),
        "ci95": [_exact(x) for x in ci],
        "p_value": _exact(p),
    }


def _exact(x: float) -> float | None:
    """A figure as a summary holds it unrounded (JSON has no NaN: None)."""
    return None if math.isnan(x) else float(x)


# the figures a summary rounds for JSON, to 4 decimals (``p_value``: to 4 significant digits)
_ROUNDED = frozenset(
    {
        "points_per_hand", "ci95", "moon_rate", "moons_suffered_rate", "qs_rate", "tricks_per_hand",
        "win_rate", "mean_final_score", "mu", "sigma", "ordinal", "a_minus_b", "llr", "bounds",
        "gap_points_per_hand", "upper_game_win_rate", "lower_game_win_rate", "one_vs_three",
        "one_vs_three_ci95", "gain_points_per_hand", "win_rate_ci95", "win_rate_a_minus_b",
        "game_win_rate_gap_ci95",
    }
)  # fmt: skip


def _rounded(value: Any, key: str | None = None) -> Any:
    """``value`` (JSON data) with the figures under the keys of ``_ROUNDED`` and ``p_value`` rounded."""
    if isinstance(value, dict):  # under a rounded key (one_vs_three's levels), every figure is
        return {k: _rounded(v, key if key in _ROUNDED else k) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, key) for v in value]
    if isinstance(value, float) and key in ("p_value", "win_rate_p_value"):
        return _round_p(value)
    if isinstance(value, float) and key in _ROUNDED:
        return _round(value)
    return value


class Figures(dict[str, Any]):
    """Figures as JSON data (a summary, a calibration), rounded to 4 decimals and p-values to 4
    significant digits, with ``exact`` the same figures unrounded, which the tables print
    (``exact_figures``): a figure rounded to 4 decimals and then printed to 3 could be off by one
    in its last digit (combine of ``match rule easy --deals 300`` on seeds 1 and 2 printed -1.954
    for -1.953452, until 2026-12-07)."""

    def __init__(self, exact: dict[str, Any]) -> None:
        super().__init__(_rounded(exact))
        self.exact = exact

    def put(self, key: str, value: Any) -> None:
        """Set ``key`` to the unrounded ``value``, and to it rounded as JSON."""
        self.exact[key] = value
        self[key] = _rounded({key: value})[key]


def exact_figures(figures: Mapping[str, Any]) -> Mapping[str, Any]:
    """The unrounded figures of ``Figures``, for a table; other data (read back from JSON) as it is."""
    exact = getattr(figures, "exact", None)
    return exact if isinstance(exact, dict) else figures


def _round(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


def _round_p(p: float) -> float | None:
    """A p-value to 4 significant digits (rounding to 4 decimals would turn 3e-5 into 0)."""
    return None if math.isnan(p) else float(f"{p:.4g}")


SMALLEST_P = 1e-300  # below this a p-value underflows in double precision: say so, never "p = 0"


def format_p_value(p: float | None) -> str:
    """``p = 0.0123``, ``p < 1e-300`` where the tail probability underflowed, ``p = -`` without one.

    >>> format_p_value(0.0), format_p_value(2.5e-12), format_p_value(None)
    ('p < 1e-300', 'p = 2.5e-12', 'p = -')
    """
    if p is None or math.isnan(p):
        return "p = -"
    return f"p < {SMALLEST_P:g}" if p < SMALLEST_P else f"p = {p:.3g}"


def summarize(
    tally: Tally, names: Sequence[str], *, games: bool, seatings: int, rules: str, seed: int | list[int]
) -> Figures:
    """The summary as plain JSON data: per agent (named ``names``), and per pair of agents
    (``seed``: a list for runs combined); rounded, with the figures unrounded for the tables
    (``Figures``)."""
    per_agent, counted = [], tally.suffered_by_others  # counted as now: else none shown
    for a, name in enumerate(names):
        slots = tally.deals * tally.slots_per_deal[a]
        hands = tally.games_hands[a] if games else slots
        mean, ci = tally.points_per_hand(a)
        row: dict[str, Any] = {
            "name": name,
            "points_per_hand": _exact(mean),
            "ci95": [_exact(x) for x in ci],
            "moon_rate": _exact(1000 * tally.moons_made[a] / hands),
            "moons_suffered_rate": _exact(1000 * tally.moons_suffered[a] / hands) if counted else None,
            "qs_rate": None if games else _exact(tally.qs_taken[a] / hands),
            "tricks_per_hand": None if games else _exact(tally.tricks[a] / hands),
            "hands": hands,
        }
        if games:
            row["games"] = slots
            win_rate, win_ci = tally.win_rate(a)
            row["win_rate"] = _exact(win_rate)
            row["win_rate_ci95"] = [_exact(x) for x in win_ci]
            row["mean_final_score"] = _exact(tally.score_sum[a] / slots)
            mu, sigma = tally.ratings[a]
            row["rating"] = {"mu": _exact(mu), "sigma": _exact(sigma), "ordinal": _exact(mu - 3 * sigma)}
        per_agent.append(row)
    pairs = []
    # hands: the difference in the deals passed each way (games span every direction)
    directions = [
        (d, tally.by_direction[d])
        for d in PASS_DIRECTIONS
        if not games and tally.directions_complete() and d in tally.by_direction
    ]
    for a, b in itertools.combinations(range(len(names)), 2):
        diff, ci, p = tally.difference(a, b)
        pair: dict[str, Any] = {
            "a": names[a],
            "b": names[b],
            "a_minus_b": _exact(diff),
            "ci95": [_exact(x) for x in ci],
            "p_value": _exact(p),
        }
        if games:
            win_diff, win_ci, win_p = tally.win_rate_difference(a, b)
            pair["win_rate_a_minus_b"] = _exact(win_diff)
            pair["win_rate_ci95"] = [_exact(x) for x in win_ci]
            pair["win_rate_p_value"] = _exact(win_p)
        if directions:
            pair["by_pass_direction"] = [_direction_row(d, t, a, b) for d, t in directions]
        pairs.append(pair)
    return Figures(
        {
            "agents": per_agent,
            "pairs": pairs,
            "deals": tally.deals,
            "hands": tally.hands,
            "seatings": seatings,
            "unit": "games" if games else "hands",
            **({"undecided_games": tally.undecided} if games else {}),
            # a run of games begun before the sums of its intervals were kept: the figures alone
            **({"intervals_kept": False} if games and tally.hands_square_sum is None else {}),
            # one begun before the sums of its win rates' intervals were kept (2026-12-08)
            **({"win_intervals_kept": False} if games and tally.wins_square_sum is None else {}),
            # a tally begun before moons suffered were counted from other agents' seats alone
            **({"suffered_kept": False} if not tally.suffered_by_others else {}),
            "rules": rules,
            "seed": seed,
        }
    )


# ---------------------------------------------------------------------------- folding records in
def tally_hands(tally: Tally, records: np.ndarray, seating_agents: np.ndarray, n_seatings: int) -> None:
    """Fold a chunk of HAND_RECORDs (ordered by deal, then seating) into the tally, and each
    deal into the tally of its pass direction (every seating of a deal passes the same way)."""
    n = seating_agents.shape[1]
    deals = len(records) // n_seatings
    shooter = records["moon_shooter"].astype(np.int64)
    shot = (shooter[:, None] == np.arange(n)).astype(np.int64)
    per_deal, counts = _chunk_sums(
        records["seating"],
        records["pass_offset"],
        shooter,
        moons_by_others(shot, seating_agents[records["seating"]]),
        records["qs_taker"],
        records["score"],
        records["tricks"],
        seating_agents,
        n_seatings,
        tally.n_agents,
    )
    deal_offsets = records["pass_offset"][::n_seatings]
    targets = [(tally, np.ones(deals, dtype=bool), counts.sum(axis=1))]
    targets += [
        (tally.direction(pass_direction_name(int(offset), n)), deal_offsets == offset, counts[:, offset])
        for offset in np.unique(deal_offsets)
    ]
    for target, its_deals, its_counts in targets:
        target.add_deal_sums(per_deal[its_deals])
        target.hands += int(its_deals.sum()) * n_seatings
        for name, by_agent in zip(_HAND_COUNTS, its_counts.tolist(), strict=True):
            totals = getattr(target, name)
            for a, count in enumerate(by_agent):
                totals[a] += count


_HAND_COUNTS = ("moons_made", "moons_suffered", "qs_taken", "tricks")  # ``_chunk_sums``'s counts
N_HAND_COUNTS = len(_HAND_COUNTS)


@njit
def _chunk_sums(
    seating, pass_offset, moon_shooter, suffered, qs_taker, score, tricks, seating_agents, n_seatings, k
):
    """``tally_hands``'s one pass over a chunk's records: each deal's score sum per agent
    (deals, k), and by (``_HAND_COUNTS``, pass offset, agent) the moons made and suffered
    (``suffered``: per hand and seat, ``moons_by_others``), the
    queens of spades taken and the tricks won. Numpy took 23 ms a chunk of 65,536 hands, a third
    of the time of a random-against-lowest run without records."""
    n = seating_agents.shape[1]
    per_deal = np.zeros((seating.shape[0] // n_seatings, k), dtype=np.int64)
    counts = np.zeros((N_HAND_COUNTS, n, k), dtype=np.int64)
    for row in range(seating.shape[0]):
        deal, offset, shooter = row // n_seatings, pass_offset[row], moon_shooter[row]
        for seat in range(n):
            agent = seating_agents[seating[row], seat]
            per_deal[deal, agent] += score[row, seat]
            counts[0, offset, agent] += shooter == seat
            counts[1, offset, agent] += suffered[row, seat]
            counts[2, offset, agent] += qs_taker[row] == seat
            counts[3, offset, agent] += tricks[row, seat]
    return per_deal, counts


def moons_by_others(moons: np.ndarray, agents: np.ndarray) -> np.ndarray:
    """The moons shot against each seat: per row (a hand, a game) and seat, the moons shot by the
    seats of another agent. ``moons`` and ``agents`` are (rows, seats): the moons each seat shot
    and its agent (any labels). A copy of the agent at its own table is no opponent, and its
    moons are not counted (they were until 2026-12-07: ``suffered/1k``, ``moons_suffered``)."""
    other = agents[:, :, None] != agents[:, None, :]  # [row, seat, shooter's seat]
    return (other * moons[:, None, :].astype(np.int64)).sum(axis=2)


def tally_games(tally: Tally, records: np.ndarray, seating_agents: np.ndarray, n_seatings: int) -> None:
    """Fold a chunk of GAME_RECORDs into the tally, and rate each game as OpenSkill's
    Plackett-Luce model does (``rate_games``)."""
    from openskill.models import PlackettLuce

    n = seating_agents.shape[1]
    k = tally.n_agents
    games = len(records) // n_seatings
    agent = seating_agents[records["seating"]]
    final = records["final_score"][:, :n].astype(np.int64)
    game_index = np.repeat(np.arange(games), n_seatings)[:, None] * k + agent
    per_game = np.bincount(game_index.ravel(), weights=final.ravel(), minlength=games * k)
    tally.add_deal_sums(np.rint(per_game).astype(np.int64).reshape(games, k))
    tally.hands += int(records["hands"].sum())
    winners = records["winners"].astype(np.int64)
    won = (winners[:, None] >> np.arange(n)) & 1  # each game's winners, a column a seat
    if tally.undecided is not None:
        tally.undecided += undecided_games(records)
    moons = records["moons"][:, :n].astype(np.int64)
    hands = records["hands"].astype(np.int64)
    suffered = moons_by_others(moons, agent)
    for a in range(k):
        mine = agent == a
        for seat in range(n):
            rows = mine[:, seat]
            tally.wins[a] += int(won[rows, seat].sum())
            tally.games_hands[a] += int(hands[rows].sum())
            tally.moons_made[a] += int(moons[rows, seat].sum())
            tally.moons_suffered[a] += int(suffered[rows, seat].sum())
    if tally.hands_square_sum is not None and tally.score_hands_sum is not None:
        # per game seed and agent, the hands of its games and their final scores (its seats summed)
        seed_hands = np.zeros((games, k), dtype=np.int64)
        seed_score = np.zeros((games, k), dtype=np.int64)
        seed_of = np.arange(games).repeat(n_seatings)
        for seat in range(n):
            np.add.at(seed_hands, (seed_of, agent[:, seat]), hands)
            np.add.at(seed_score, (seed_of, agent[:, seat]), final[:, seat])
        tally.hands_square_sum = _added(tally.hands_square_sum, seed_hands.T @ seed_hands)
        tally.score_hands_sum = _added(tally.score_hands_sum, seed_score.T @ seed_hands)
    if tally.wins_square_sum is not None:  # per game seed and agent, the games it won (its seats summed)
        seed_wins = np.zeros((games, k), dtype=np.int64)
        for seat in range(n):
            np.add.at(seed_wins, (np.arange(games).repeat(n_seatings), agent[:, seat]), won[:, seat])
        tally.wins_square_sum = _added(tally.wins_square_sum, seed_wins.T @ seed_wins)
    seats_of = np.zeros((len(records), k), dtype=np.int64)  # each game's seats of each agent
    score_of = np.zeros((len(records), k), dtype=np.int64)  # and their final scores, summed
    for seat in range(n):
        np.add.at(seats_of, (np.arange(len(records)), agent[:, seat]), 1)
        np.add.at(score_of, (np.arange(len(records)), agent[:, seat]), final[:, seat])
    model = PlackettLuce()
    mu, sigma = (np.array(column, dtype=np.float64) for column in zip(*tally.ratings, strict=True))
    with np.errstate(invalid="ignore"):  # an agent not at a game's table: 0 / 0, and not rated
        means = score_of / seats_of
    rate_games(mu, sigma, seats_of > 0, means, model.beta, model.kappa, model.tau)
    tally.ratings = [[float(m), float(s)] for m, s in zip(mu, sigma, strict=True)]


@njit
def rate_games(mu, sigma, present, mean_score, beta, kappa, tau) -> None:
    """Rate games one after the other, as openskill's ``PlackettLuce().rate`` does at its
    defaults with ``scores`` the negated mean final scores (a test holds them equal): in each
    game (a row) every agent ``present`` is a team of one, ranked by ``mean_score``, lowest
    first, ties sharing a rank (Weng and Lin's Algorithm 4). ``mu`` and ``sigma`` are updated
    in place. A run of 20,000 deals of games (280,000 games) took 15.0 s with openskill's
    ``rate`` on each game, most of it copying its rating objects, and 2.4 s with this."""
    k = mu.shape[0]
    team = np.empty(k, dtype=np.int64)  # the game's agents, by rank (ties in agent order)
    rank = np.empty(k, dtype=np.int64)
    sigma_sq = np.empty(k, dtype=np.float64)
    sum_q = np.empty(k, dtype=np.float64)
    ties = np.empty(k, dtype=np.int64)
    for row in range(present.shape[0]):
        m = 0
        for a in range(k):
            if present[row, a]:
                team[m] = a
                m += 1
        if m < 2:
            continue
        for t in range(m):  # competition ranking: the teams with a lower mean score
            rank[t] = 0
            for u in range(m):
                rank[t] += mean_score[row, team[u]] < mean_score[row, team[t]]
        for t in range(1, m):  # a stable insertion sort by rank
            moved_team, moved_rank, u = team[t], rank[t], t
            while u > 0 and rank[u - 1] > moved_rank:
                team[u], rank[u] = team[u - 1], rank[u - 1]
                u -= 1
            team[u], rank[u] = moved_team, moved_rank
        c = 0.0
        for t in range(m):
            sigma[team[t]] = np.sqrt(sigma[team[t]] * sigma[team[t]] + tau * tau)  # the dynamics
            sigma_sq[t] = sigma[team[t]] ** 2
            c += sigma_sq[t] + beta**2
        c = np.sqrt(c)
        for q in range(m):
            sum_q[q], ties[q] = 0.0, 0
            for t in range(m):
                if rank[t] >= rank[q]:
                    sum_q[q] += np.exp(mu[team[t]] / c)
                ties[q] += rank[t] == rank[q]
        for t in range(m):
            share = np.exp(mu[team[t]] / c)
            omega, delta = 0.0, 0.0
            for q in range(m):
                if rank[q] <= rank[t]:
                    p = share / sum_q[q]
                    delta += p * (1 - p) / ties[q]
                    omega += (1 - p) / ties[q] if q == t else -p / ties[q]
            omega *= sigma_sq[t] / c
            delta *= sigma_sq[t] / c**2
            delta *= np.sqrt(sigma_sq[t]) / c  # the default gamma
            mu[team[t]] += omega
            sigma[team[t]] *= np.sqrt(max(1 - delta, kappa))


def new_tally(seatings: Sequence[Sequence[int]], n_agents: int, games: bool) -> Tally:
    """An empty tally for agents seated as ``seatings`` (agent index per seat)."""
    from openskill.models import PlackettLuce

    slots = [sum(list(s).count(a) for s in seatings) for a in range(n_agents)]
    tally = Tally(n_agents=n_agents, slots_per_deal=slots, suffered_by_others=True)
    if games:
        fresh = PlackettLuce().rating()
        tally.ratings = [[fresh.mu, fresh.sigma] for _ in range(n_agents)]
        tally.undecided = 0
        tally.hands_square_sum = [[0] * n_agents for _ in range(n_agents)]
        tally.score_hands_sum = [[0] * n_agents for _ in range(n_agents)]
        tally.wins_square_sum = [[0] * n_agents for _ in range(n_agents)]
    return tally


# ---------------------------------------------------------------------------- display
def format_summary(summary: Mapping[str, Any]) -> str:
    """The results table for the terminal (aligned columns), from the unrounded figures where
    ``summary`` holds them (``Figures``)."""
    summary = exact_figures(summary)
    games = summary["unit"] == "games"
    header = ["agent", "points/hand", "95% CI", "moons/1k", "suffered/1k"]
    header += ["win rate", "final score", "rating"] if games else ["QS rate", "tricks/hand"]
    rows = []
    for a in summary["agents"]:
        low, high = a["ci95"]
        ci = "-" if low is None else f"[{low:.2f}, {high:.2f}]"
        row = [
            a["name"],
            f"{a['points_per_hand']:.3f}",
            ci,
            f"{a['moon_rate']:.2f}",
            "-" if a["moons_suffered_rate"] is None else f"{a['moons_suffered_rate']:.2f}",
        ]
        if games:
            r = a["rating"]
            win_low, win_high = a.get("win_rate_ci95", [None, None])
            win_ci = "" if win_low is None else f" [{win_low:.3f}, {win_high:.3f}]"
            row += [
                f"{a['win_rate']:.3f}{win_ci}",
                f"{a['mean_final_score']:.1f}",
                f"{r['mu']:.1f}±{r['sigma']:.1f}",
            ]
        else:
            row += [f"{a['qs_rate']:.3f}", f"{a['tricks_per_hand']:.2f}"]
        rows.append(row)
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    out = [
        f"{counted(summary['deals'], 'game' if games else 'deal')} x "
        f"{counted(summary['seatings'], 'seating')} = {counted(summary['hands'], 'hand')}; "
        f"rules: {rules_label(summary['rules'])}; {_seeds(summary['seed'])}",
        "",
        line(header),
        line(["-" * w for w in widths]),
    ]
    out += [line(r) for r in rows]
    out.append(LEGEND_GAMES if games else LEGEND_HANDS)
    if summary.get("undecided_games"):
        out += ["", undecided_text(summary["undecided_games"], summary["deals"] * summary["seatings"])]
    if summary.get("intervals_kept") is False:
        out += ["", NO_GAME_INTERVALS]
    if summary.get("suffered_kept") is False:
        out += ["", NO_SUFFERED]
    if summary.get("win_intervals_kept") is False and summary.get("intervals_kept") is not False:
        out += ["", NO_WIN_INTERVALS]
    if summary["pairs"]:
        out.append("")
        for p in summary["pairs"]:
            low, high = p["ci95"]
            ci = "-" if low is None else f"[{low:+.3f}, {high:+.3f}]"
            out.append(
                f"{p['a']} - {p['b']}: {p['a_minus_b']:+.3f} points/hand, 95% CI {ci}, "
                + format_p_value(p["p_value"])
                if p["p_value"] is not None
                else f"{p['a']} - {p['b']}: {p['a_minus_b']:+.3f} points/hand"
            )
            if p.get("win_rate_p_value") is not None:
                low, high = p["win_rate_ci95"]
                out.append(
                    f"  win rate, {p['a']} - {p['b']}: {p['win_rate_a_minus_b']:+.3f}, "
                    f"95% CI [{low:+.3f}, {high:+.3f}], {format_p_value(p['win_rate_p_value'])}"
                )
            if len(p.get("by_pass_direction", ())) > 1:
                directions = "; ".join(map(_direction_text, p["by_pass_direction"]))
                out.append(f"  {BY_DIRECTION}: {directions}")
        out.append("(points are penalties: negative means the first agent did better)")
    if "sprt" in summary:
        out.append(sprt_text(summary["sprt"], summary["deals"]))
    return "\n".join(out)


# what the table's columns count, under it: a newcomer could not tell suffered/1k or QS rate
LEGEND_HANDS = (
    "(points/hand: penalty points, lower is better; moons/1k: moons shot per 1,000 hands; "
    "suffered/1k: shot by another agent; QS rate: share of hands it took the queen of spades)"
)
LEGEND_GAMES = (
    "(points/hand: penalty points, lower is better; moons/1k: moons shot per 1,000 hands; "
    "suffered/1k: shot by another agent; win rate: share of its games won, 95% CI; "
    "rating: OpenSkill's mean ± deviation)"
)
NO_GAME_INTERVALS = (
    "(no intervals or p-values: this run of games was begun before 2026-12-07's code kept the sums "
    "of game lengths they need; its points/hand and A - B are exact; play it again for intervals)"
)
NO_WIN_INTERVALS = (
    "(no win-rate intervals: this run of games was begun before 2026-12-08's code kept the sums "
    "they need; its win rates are exact)"
)
NO_SUFFERED = (
    "(no suffered/1k: this run's tally was begun before 2026-12-07, when it counted as suffered the "
    "moons of an agent's own copies too; report counts them from its records)"
)
BY_DIRECTION = "by pass direction (95% each, unadjusted)"  # one look a direction: one may miss by chance


def undecided_text(undecided: int, games: int) -> str:
    """The line for games cut off undecided (``MAX_HANDS_PER_GAME``): a run to a far target
    showed win rates of 0 without a word."""
    return (
        f"{undecided:,} of {counted(games, 'game')} cut off undecided after {MAX_HANDS_PER_GAME:,} "
        "hands: no one won them, and every win rate counts them as lost (a lower target_score ends them)"
    )


def sprt_text(sprt: dict[str, Any], deals: int) -> str:
    """The sequential test's line: its hypotheses, error rates, LLR and verdict."""
    low, high = sprt["bounds"]
    llr = "inf" if sprt["llr"] is None else f"{sprt['llr']:+.2f}"
    null = "no gain" if sprt["null"] == 0 else f"a gain of {sprt['null']:g}"
    test = (
        f"SPRT, H0: {null}, H1: a gain of {sprt['gain']:g} points/hand for the first agent "
        f"(alpha {sprt['alpha']:g}, beta {sprt['beta']:g}): LLR {llr} in [{low:+.2f}, {high:+.2f}]"
    )
    verdict = sprt["verdict"]
    if verdict is None and deals < sprt["deals_cap"]:  # a run still under way (hearts-sim status)
        return f"{test}; undecided so far, after {deals:,} of at most {counted(sprt['deals_cap'], 'deal')}"
    if verdict is None:  # the runs left undecided are those whose estimate stayed between the bounds
        return f"{test}; undecided after all {counted(deals, 'deal')} (--deals) {SPRT_UNDECIDED}"
    told = f"{test}; {verdict} accepted after {deals:,} of at most {counted(sprt['deals_cap'], 'deal')}"
    if deals < sprt["deals_cap"]:  # the difference's interval and p-value are a fixed-length match's
        told += f" {SPRT_EARLY}"
    return told


# what the figures above a sequential test's line are worth: a fixed-length match's, they lean
# toward where the test stopped (until 2026-12-07 an undecided run said nothing, and an early stop
# named only the interval)
SPRT_EARLY = "(stopped early: the difference, interval and p-value above lean toward this verdict)"
SPRT_UNDECIDED = "(the difference, interval and p-value above lean toward halfway between H0 and H1)"


def _direction_text(row: dict[str, Any]) -> str:
    """``left -0.980 [-1.770, -0.190] (50 deals)``; no interval from a single deal."""
    low, high = row["ci95"]
    ci = "" if low is None else f" [{low:+.3f}, {high:+.3f}]"
    return f"{row['direction']} {row['a_minus_b']:+.3f}{ci} ({counted(row['deals'], 'deal')})"


def _seeds(seed: int | list[int]) -> str:
    """``seed 7``, or ``seeds 34, 35`` for runs combined."""
    if isinstance(seed, list):
        return ("seed " if len(seed) == 1 else "seeds ") + ", ".join(map(str, seed))
    return f"seed {seed}"


def match_json(summary: dict[str, Any]) -> dict[str, Any]:
    """``hearts-sim match --json``: the two-agent view of a summary, with ``per_agent`` each
    agent's figures as a tournament's ``agents`` gives them (its interval, moons, queen rate,
    tricks; with games the win rate, final score and rating), which the table printed and the
    JSON left out until 2026-12-07."""
    a, b = summary["agents"]
    pair = summary["pairs"][0]
    return {
        "agents": [a["name"], b["name"]],
        "per_agent": [a, b],
        "deals": summary["deals"],
        "hands": summary["hands"],
        "points_per_hand": {a["name"]: a["points_per_hand"], b["name"]: b["points_per_hand"]},
        "a_minus_b": pair["a_minus_b"],
        "ci95": pair["ci95"],
        "p_value": pair["p_value"],
        "by_pass_direction": pair.get("by_pass_direction", []),
        "rules": summary["rules"],
        "seed": summary["seed"],
        "unit": summary["unit"],
        "sprt": summary.get("sprt"),
    }
