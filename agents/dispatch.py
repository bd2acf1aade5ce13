"""The decisions the self-play loop asks for, composed from the registry for the kinds at a table.

Design note. A table seats a handful of policy kinds; a compiled loop should contain only
theirs (a table of ``rule`` and ``random`` must not compile three search agents, and editing
``ismcts.py`` must not invalidate it), plus the stateless kinds every set holds (``CHEAP_KINDS``:
a branch each, and sharing one loop saves a compile per mix of them). So the loop takes a
``KindSet`` argument: a Python value whose numba type (``KindSetType``) names the kinds. Code
compiled for a kind set (a numba ``overload`` on that type:
``hearts_sim.selfplay.loops.play_out_hand``, and ``choose_play`` / ``choose_pass`` below) decides
through a chain generated for the set (``play_chain``, ``pass_chain``): one branch per kind
(``if code == RULE: return rule_play(...)``), inlined. numba compiles and caches one
specialisation per kind set.

The type's key includes a digest of the source of every module the set's kernels are built
from (``sources_digest``): a loop's own cache stamp (``hearts_sim._numba``) follows its file's
imports only as far as the registry, so without it an edited agent would keep running from a
stale cache; with it, only the loops that seat the edited kind recompile.

Every policy of a role has one signature (``agents.kinds``)::

    play(params, state, rules, seat, legal, seed) -> card
    pass_cards(params, state, rules, seat, seed) -> bitboard
    stateless_play(legal, seed) -> card      # reads nothing else (``PolicyKind.reads_state``)
    scored_play(params, state, rules, seat, legal, seed, values, weights) -> card   # a search
    scored_pass(params, state, rules, seat, seed, cards, values, weights) -> bitboard

A chain calls a search's scored kernels with fresh statistics arrays (``card_stats``,
``pass_stats``), and plays a forced card without searching: the one place a search kind's play
and pass are made from what it declares.

Python callers decide one position with ``decide_play`` / ``decide_pass`` (a kind's code and
parameter row, any legal set and seed), which compile a one-kind set; ``loop_play`` /
``loop_pass`` make the decision the self-play loop makes for a configured ``Policy`` on a real
record (its legal cards, its ``decision_seed``) in one call, and check it, as ``agents.api``,
replays and data scripts need.
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from collections.abc import Iterable
from functools import cache
from typing import Any

import numpy as np
from numba.core import types
from numba.extending import NativeValue, models, overload, register_model, typeof_impl, unbox

from agents.kinds import AgentError, PolicyKind, card_stats, pass_stats
from agents.registry import CODES, KIND_BY_NAME, KINDS, Policy, pass_kind
from hearts_sim._numba import njit, njit_generated, source_closure
from hearts_sim.core.cards import N_CARDS, cards_str, lowest_card, popcount
from hearts_sim.engine.hand import decision_seed, legal_moves

_ENGINE_PACKAGES = ("hearts_sim.core", "hearts_sim.engine")  # the engine under every loop


# ---------------------------------------------------------------- the kind set, as a value and a type
class KindSet:
    """The policy kinds (registry codes) a compiled loop or dispatcher serves.

    >>> KindSet.of(["rule", "random", "random"]).names  # with every one of ``CHEAP_KINDS``
    ('random', 'lowest', 'highest', 'rule')
    """

    __slots__ = ("codes", "names", "stamp", "_numba_type_")

    def __init__(self, codes: Iterable[int]):
        self.codes = tuple(sorted({int(c) for c in codes}))
        self.names = tuple(KINDS[c].name for c in self.codes)
        self.stamp = sources_digest(self.names)
        # numba reads this attribute before any typeof function: a kernel call types a KindSet
        # argument in ~1 us instead of ~5 (it counts in a learning environment's step)
        self._numba_type_ = KindSetType(self.codes, self.names, self.stamp)

    @classmethod
    def of(cls, names: Iterable[str]) -> KindSet:
        """The set of kinds named (each with the kind it passes like)."""
        return _kind_set(frozenset(names))

    def __repr__(self) -> str:
        return f"KindSet({', '.join(self.names)})"


# Kinds every set holds: the stateless ones (random, lowest, highest) add a branch each to a
# loop, so with them in every set the tables that mix them share one compiled loop, and a loop
# compiled for a table serves it with any of them at the other seats. Each distinct set costs a
# loop's compile (about 25 s on the 2-core machine): a cold test suite compiled 14 sets of these
# three and ``rule`` alone, 670 s of its 1,680 s of compiling.
CHEAP_KINDS = frozenset(kind.name for kind in KINDS if not kind.reads_state)


@cache
def _kind_set(names: frozenset[str]) -> KindSet:
    kinds = {pass_kind(KIND_BY_NAME[name]).name for name in names} | names | CHEAP_KINDS
    return KindSet(CODES[name] for name in kinds)


class KindSetType(types.Dummy):
    """numba's view of a ``KindSet``: which kinds (codes and names) and the digest of their sources."""

    def __init__(self, codes: tuple[int, ...], names: tuple[str, ...], stamp: str):
        self.codes, self.names, self.stamp = codes, names, stamp
        super().__init__(name=f"KindSet({','.join(names)};{stamp})")

    @property
    def key(self) -> Any:
        return (self.codes, self.names, self.stamp)

    def kinds(self) -> list[tuple[int, PolicyKind]]:
        return [(code, KINDS[code]) for code in self.codes]


register_model(KindSetType)(models.OpaqueModel)


@unbox(KindSetType)
def _unbox_kind_set(typ: KindSetType, obj: Any, c: Any) -> NativeValue:
    return NativeValue(c.context.get_dummy_value())  # the type is all there is to it


@typeof_impl.register(KindSet)
def _typeof_kind_set(value: KindSet, context: Any) -> KindSetType:
    return value._numba_type_


def _engine_modules() -> list[str]:
    """Every module of the engine the loops are built on (imported, so the digest never depends
    on what a process happened to import)."""
    names = ["hearts_sim._numba"]
    for package in _ENGINE_PACKAGES:
        path = importlib.import_module(package).__path__
        names += [f"{package}.{info.name}" for info in pkgutil.iter_modules(path)]
    for name in names:
        importlib.import_module(name)
    return names


@cache
def source_modules(names: tuple[str, ...]) -> dict[str, str]:
    """The project modules the kernels of kinds ``names`` are built from, with their digests:
    the kinds' modules and everything those import, transitively; the engine every loop is
    built on; this dispatcher; and the data a kind's kernels freeze in (``PolicyKind.data``)."""
    kernels = [kernel.py_func.__module__ for name in names for kernel in KIND_BY_NAME[name].kernels]
    seen = source_closure([__name__, *_engine_modules(), *kernels])
    seen.update({f"{name} data": KIND_BY_NAME[name].data for name in names if KIND_BY_NAME[name].data})
    return seen


def sources_digest(names: tuple[str, ...]) -> str:
    """One digest of ``source_modules(names)``: part of a kind set's numba type, so a loop
    compiled before any of those sources changed is never loaded from the cache after."""
    return hashlib.sha256(repr(sorted(source_modules(names).items())).encode()).hexdigest()[:12]


# ---------------------------------------------------------------- composing the chains
# what the calls of the chains use besides their kernels
CHAIN_GLOBALS = {
    "card_stats": card_stats,
    "pass_stats": pass_stats,
    "lowest_card": lowest_card,
    "popcount": popcount,
}


def code_chain(
    name: str, arguments: str, branches: list[tuple[int, str]], fallback: str, **names: Any
) -> Any:
    """A flat ``if code == K: return <call>`` function of ``(code, <arguments>)``, generated as
    source with ``names`` (the kernels the calls use) and ``CHAIN_GLOBALS`` as its globals, and
    inlined into its caller.

    Generated rather than nested closures: numba's inliner does not resolve the free variables
    of nested closures reliably, and a flat chain compiles faster."""
    lines = [f"def {name}(code, {arguments}):"]
    for code, call in branches:
        lines += [f"    if code == {code}:", f"        return {call}"]
    lines.append(f"    return {fallback}")
    namespace: dict[str, Any] = {"np": np, **CHAIN_GLOBALS, **names}
    exec(compile("\n".join(lines), f"<generated {name}>", "exec"), namespace)
    return njit_generated(namespace[name])


def _kernel_chain(name: str, arguments: str, branches: list[tuple[int, str, Any]], fallback: str) -> Any:
    """``code_chain`` where each branch calls its own kernel: ``(code, call, kernel)``, the call an
    expression in which ``{kernel}`` names it."""
    calls = [(code, call.format(kernel=f"kernel_{i}")) for i, (code, call, _) in enumerate(branches)]
    kernels = {f"kernel_{i}": kernel for i, (_, _, kernel) in enumerate(branches)}
    return code_chain(name, arguments, calls, fallback, **kernels)


PLAY_ARGUMENTS = "params, state, rules, seat, legal, seed"
PASS_ARGUMENTS = "params, state, rules, seat, seed"


def play_call(kind: PolicyKind) -> tuple[str, Any]:
    """How a chain plays ``kind``: the call (``{kernel}`` for its kernel) and the kernel."""
    if kind.stateless_play:
        return "{kernel}(legal, seed)", kind.stateless_play
    if kind.scored_play:  # a search: none for a forced card, fresh statistics otherwise
        call = f"{{kernel}}({PLAY_ARGUMENTS}, *card_stats())"
        return f"{call} if popcount(legal) > 1 else lowest_card(legal)", kind.scored_play
    return f"{{kernel}}({PLAY_ARGUMENTS})", kind.play


def pass_call(kind: PolicyKind, params: str = "params") -> tuple[str, Any]:
    """How a chain passes like ``kind`` with the parameter row ``params`` (an expression)."""
    arguments = f"{params}, state, rules, seat, seed"
    if kind.scored_pass:
        return f"{{kernel}}({arguments}, *pass_stats())", kind.scored_pass
    return f"{{kernel}}({arguments})", kind.pass_cards


def play_chain(kinds: KindSetType) -> Any:
    """(code, params, state, rules, seat, legal, seed) -> the card of policy ``code``."""
    branches = [(code, *play_call(kind)) for code, kind in kinds.kinds()]
    return _kernel_chain("choose_play_of_set", PLAY_ARGUMENTS, branches, "np.int64(-1)")


def stateless_chain(kinds: KindSetType) -> Any:
    """(code, legal, seed) -> the card of stateless policy ``code``."""
    branches = [(code, *play_call(kind)) for code, kind in kinds.kinds() if kind.stateless_play]
    return _kernel_chain("choose_stateless_play_of_set", "legal, seed", branches, "np.int64(-1)")


def one_policy(stateless_play: Any) -> Any:
    """(code, legal, seed) -> ``stateless_play(legal, seed)``: the chain of a table where every
    seat plays the same stateless policy (its branch settled at compile time)."""
    return code_chain("one_stateless_policy", "legal, seed", [], "kernel(legal, seed)", kernel=stateless_play)


def pass_chain(kinds: KindSetType) -> Any:
    """(code, params, state, rules, seat, seed) -> the cards policy ``code`` passes."""
    branches = []
    for code, kind in kinds.kinds():
        passer = pass_kind(kind)
        if passer is kind:
            branches.append((code, *pass_call(kind)))
        else:  # no pass policy of its own: pass like ``passer`` with its defaults
            defaults = ", ".join(repr(x) for x in passer.default_params())
            branches.append((code, *pass_call(passer, f"({defaults})")))
    return _kernel_chain("choose_pass_of_set", PASS_ARGUMENTS, branches, "np.uint64(0)")


# ---------------------------------------------------------------- the dispatcher (overload stubs)
def choose_play(kinds, code, params, state, rules, seat, legal, seed):  # type: ignore[no-untyped-def]
    """The card policy ``code`` (one of ``kinds``) plays from ``legal`` for ``seat``."""
    raise NotImplementedError("compiled code only: call decide_play from Python")


def choose_pass(kinds, code, params, state, rules, seat, seed):  # type: ignore[no-untyped-def]
    """The cards policy ``code`` (one of ``kinds``) passes from ``seat``'s dealt hand."""
    raise NotImplementedError("compiled code only: call decide_pass from Python")


# Overloads are never inlined into their callers (``inline="always"`` on an overload): numba's
# overload inlining mis-typed the parameter row inside a caller's while loop (a runtime "tuple
# index out of range") and broke the trick loop's bookkeeping. The generated chains, plain
# inline functions, are inlined into the overload's own body instead.
@overload(choose_play)
def _choose_play(kinds, code, params, state, rules, seat, legal, seed):  # type: ignore[no-untyped-def]
    chain = play_chain(kinds)

    def impl(kinds, code, params, state, rules, seat, legal, seed):  # type: ignore[no-untyped-def]
        return chain(code, params, state, rules, seat, legal, seed)

    return impl


@overload(choose_pass)
def _choose_pass(kinds, code, params, state, rules, seat, seed):  # type: ignore[no-untyped-def]
    chain = pass_chain(kinds)

    def impl(kinds, code, params, state, rules, seat, seed):  # type: ignore[no-untyped-def]
        return chain(code, params, state, rules, seat, seed)

    return impl


# ---------------------------------------------------------------- one decision from Python
@njit
def _decide_play(kinds, code, params, states, rules, seat, legal, seed):  # type: ignore[no-untyped-def]
    return choose_play(kinds, code, params, states[0], rules, seat, legal, seed)


@njit
def _decide_pass(kinds, code, params, states, rules, seat, seed):  # type: ignore[no-untyped-def]
    return choose_pass(kinds, code, params, states[0], rules, seat, seed)


@njit
def _loop_play(kinds, code, params, states, rules, seat):  # type: ignore[no-untyped-def]
    """The loop's play decision on ``states[0]``, and the legal cards it chose from (one call
    into numba: an array argument crosses for ~1 us, a record for ~40 us)."""
    state = states[0]
    legal = legal_moves(state, rules)
    return choose_play(kinds, code, params, state, rules, seat, legal, decision_seed(state, seat)), legal


@njit
def _loop_pass(kinds, code, params, states, rules, seat):  # type: ignore[no-untyped-def]
    """The loop's pass decision on ``states[0]``."""
    state = states[0]
    return choose_pass(kinds, code, params, state, rules, seat, decision_seed(state, seat))


def _one(record: Any) -> np.ndarray:
    """A one-element array holding ``record`` (an array crosses into numba for ~1 us, a record ~40 us)."""
    if isinstance(record, np.ndarray):
        return record[:1]
    base = record.base if isinstance(record, np.void) else None
    if isinstance(base, np.ndarray) and base.ndim == 1 and base.size == 1:
        return base
    return np.array([record], dtype=record.dtype)


def decide_play(
    code: int, params: tuple[float, ...], state: Any, rules: Any, seat: int, legal: Any, seed: Any
) -> int:
    """The card policy ``code`` plays (as the self-play loop would) on a ``HAND_STATE`` record or
    one-element array ``state``."""
    kinds = KindSet.of([KINDS[code].name])
    card = _decide_play(kinds, code, params, _one(state), rules, seat, np.uint64(legal), np.uint64(seed))
    return int(card)


def decide_pass(code: int, params: tuple[float, ...], state: Any, rules: Any, seat: int, seed: Any) -> int:
    """The cards (a bitboard) policy ``code`` passes, as the self-play loop would."""
    kinds = KindSet.of([KINDS[code].name])
    return int(_decide_pass(kinds, code, params, _one(state), rules, seat, np.uint64(seed)))


def loop_play(policy: Policy, state: Any, rules: Any, seat: int, name: str | None = None) -> int:
    """The card ``policy`` plays for ``seat`` on the record (or one-element array) ``state``, as
    the self-play loop (``play_out_hand``) would: from the legal cards, with the seat's
    ``decision_seed``. Raises ``AgentError`` (naming ``name``, else the policy) for a card that
    is not legal: a policy's bug, never the caller's."""
    kinds = KindSet.of([policy.kind.name])
    card, legal = _loop_play(kinds, policy.code, policy.row, _one(state), rules, seat)
    if not 0 <= card < N_CARDS or not legal >> card & 1:
        raise AgentError(f"agent {name or policy} chose {card}, not one of its legal cards")
    return int(card)


def loop_pass(policy: Policy, state: Any, rules: Any, seat: int, name: str | None = None) -> int:
    """The cards (a bitboard) ``policy`` passes for ``seat`` on the record (or one-element array)
    ``state``, as the self-play loop would: with the seat's ``decision_seed``. Raises
    ``AgentError`` (naming ``name``, else the policy) unless they are ``pass_count`` of its cards."""
    states = _one(state)
    mask = int(_loop_pass(KindSet.of([policy.kind.name]), policy.code, policy.row, states, rules, seat))
    if mask.bit_count() != rules.pass_count or mask & ~int(states[0]["dealt"][seat]):
        passed = cards_str(mask) or "nothing"
        raise AgentError(f"agent {name or policy} passed {passed}: not {rules.pass_count} of its cards")
    return mask
