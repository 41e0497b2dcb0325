"""Modal formulas: parsing (bounded nesting), truth in a Kripke model (bottom-up, with a work counter), and a
labelled tableau deciding validity and satisfiability in K, T, S4 and S5.

Syntax: proposition names (identifiers), ``true``, ``false``, ``not``, ``and``, ``or``, ``->`` (implies,
right-associative, weakest), ``box f`` / ``box(f)`` (necessarily) and ``dia f`` / ``dia(f)`` (possibly), with
parentheses. Formulas are tuples: ``("atom", p)``, ``("not", f)``, ``("and", f, g)``, ``("or", f, g)``,
``("imp", f, g)``, ``("box", f)``, ``("dia", f)``, ``("true",)``, ``("false",)``.

The tableau (Fitting, *Proof Methods for Modal and Intuitionistic Logics*, 1983; Goré, "Tableau methods for
modal and temporal logics", 1999) works on negation normal form over explicit worlds: ``and`` adds both
parts, ``or`` branches (depth first), ``box f`` at w puts f in every world w sees (in S4 also ``box f``: the 4
rule), ``dia f`` at w needs a world w sees holding f, else a new one is made. Frames: K any, T reflexive,
S4 reflexive and transitive (a world whose formulas are all in an ancestor's is blocked by it), S5 one cluster
(every world sees every world). An open branch gives a counter-model, which is checked by evaluation before it
is reported. Work is counted in rule applications (:data:`MAX_STEPS`) and worlds (:data:`MAX_WORLDS`); at a
bound the formula is *undecided*.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from kg.errors import InputError

Formula = tuple[Any, ...]
Logic = Literal["K", "T", "S4", "S5"]

MAX_FORMULA_CHARS = 4_000
MAX_FORMULA_DEPTH = 64  # nesting of operators and parentheses; deeper is refused (no recursion error)
MAX_STEPS = 20_000  # tableau rule applications for one formula
MAX_WORLDS = 64  # worlds of one tableau branch

_TOKEN = re.compile(r"\s*(->|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\S)")
_WORDS = {"not", "and", "or", "box", "dia", "true", "false"}
_ALLOWED = "only names, true, false, not, and, or, ->, box, dia and parentheses are allowed"


class _Parser:
    def __init__(self, text: str, fail: Callable[[str], InputError]) -> None:
        self.tokens = [t for t in _TOKEN.findall(text) if t]
        self.i, self.fail, self.text = 0, fail, text

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, want: str | None = None) -> str:
        token = self.peek()
        if token is None or (want is not None and token != want):
            raise self.fail(f"{self.text[:80]!r}: expected {want or 'more'} at token {self.i + 1} ({_ALLOWED})")
        self.i += 1
        return token

    def formula(self, depth: int) -> Formula:
        if depth > MAX_FORMULA_DEPTH:
            raise self.fail(f"nests deeper than {MAX_FORMULA_DEPTH} operators (MAX_FORMULA_DEPTH)")
        left = self.binary(depth, "or")
        if self.peek() == "->":
            self.take()
            return ("imp", left, self.formula(depth + 1))
        return left

    def binary(self, depth: int, op: str) -> Formula:
        left = self.unary(depth + 1) if op == "and" else self.binary(depth, "and")
        while self.peek() == op:
            self.take()
            right = self.unary(depth + 1) if op == "and" else self.binary(depth, "and")
            left = (op, left, right)
        return left

    def unary(self, depth: int) -> Formula:
        if depth > MAX_FORMULA_DEPTH:
            raise self.fail(f"nests deeper than {MAX_FORMULA_DEPTH} operators (MAX_FORMULA_DEPTH)")
        token = self.take()
        if token in ("not", "box", "dia"):
            return (token, self.unary(depth + 1))
        if token == "(":  # noqa: S105 - a parenthesis, not a password
            inner = self.formula(depth + 1)
            self.take(")")
            return inner
        if token in ("true", "false"):
            return (token,)
        if re.fullmatch(r"[A-Za-z_]\w*", token) and token not in _WORDS:
            return ("atom", token)
        raise self.fail(f"{self.text[:80]!r}: {_ALLOWED} (got {token[:20]!r})")


def parse(text: str, fail: Callable[[str], InputError]) -> Formula:
    """The formula ``text`` as a tuple; ``fail(rule)`` builds the error for bad syntax or too deep nesting."""
    if len(text) > MAX_FORMULA_CHARS:
        raise fail(f"is longer than {MAX_FORMULA_CHARS} characters (MAX_FORMULA_CHARS)")
    parser = _Parser(text, fail)
    found = parser.formula(0)
    if parser.peek() is not None:
        raise fail(f"{text[:80]!r}: unexpected {parser.peek()!r} at token {parser.i + 1} ({_ALLOWED})")
    return found


def show(f: Formula) -> str:
    """The formula as text (fully parenthesised binary operators)."""
    op = f[0]
    if op == "atom":
        return str(f[1])
    if op in ("true", "false"):
        return str(op)
    if op in ("not", "box", "dia"):
        return f"{op} {show(f[1])}" if f[1][0] in ("atom", "true", "false", "not", "box", "dia") else \
            f"{op}({show(f[1])})"  # fmt: skip
    symbol = {"and": "and", "or": "or", "imp": "->"}[op]
    return f"({show(f[1])} {symbol} {show(f[2])})"


# ---------------------------------------------------------------------------------------------- models


class Budget:
    """A work counter: :meth:`spend` refuses (False, nothing spent) what would pass ``limit`` units."""

    def __init__(self, limit: int) -> None:
        self.limit, self.used = limit, 0

    def spend(self, units: int) -> bool:
        if self.used + units > self.limit:
            return False
        self.used += units
        return True


def extension(f: Formula, worlds: dict[str, set[str]], access: dict[str, set[str]], budget: Budget,
              memo: dict[Formula, frozenset[str]]) -> frozenset[str] | None:  # fmt: skip
    """The worlds where ``f`` holds, each subformula computed once (``memo``); None when ``budget`` ran out.

    Work: one unit per world for each distinct subformula, plus one per link for each box or diamond.
    """
    if f in memo:
        return memo[f]
    op = f[0]
    parts = [extension(g, worlds, access, budget, memo) for g in f[1:] if isinstance(g, tuple)]
    if any(p is None for p in parts):
        return None
    links = sum(len(v) for v in access.values()) if op in ("box", "dia") else 0
    if not budget.spend(len(worlds) + links):
        return None
    every = frozenset(worlds)
    sets = [p for p in parts if p is not None]
    result: frozenset[str]
    if op == "atom":
        result = frozenset(w for w, props in worlds.items() if f[1] in props)
    elif op in ("true", "false"):
        result = every if op == "true" else frozenset()
    elif op == "not":
        result = every - sets[0]
    elif op == "and":
        result = sets[0] & sets[1]
    elif op == "or":
        result = sets[0] | sets[1]
    elif op == "imp":
        result = (every - sets[0]) | sets[1]
    elif op == "box":
        result = frozenset(w for w in worlds if access[w] <= sets[0])
    else:
        result = frozenset(w for w in worlds if access[w] & sets[0])
    memo[f] = result
    return result


# ---------------------------------------------------------------------------------------------- tableau


def nnf(f: Formula, negated: bool = False) -> Formula:
    """Negation normal form: ``not`` only on atoms, no ``->``."""
    op = f[0]
    if op == "not":
        return nnf(f[1], not negated)
    if op == "atom":
        return ("not", f) if negated else f
    if op in ("true", "false"):
        return (("false",) if op == "true" else ("true",)) if negated else f
    if op == "imp":
        return nnf(("or", ("not", f[1]), f[2]), negated)
    if op in ("and", "or"):
        flip = {"and": "or", "or": "and"}[op] if negated else op
        return (flip, nnf(f[1], negated), nnf(f[2], negated))
    flip = {"box": "dia", "dia": "box"}[op] if negated else op
    return (flip, nnf(f[1], negated))


class _Stop(Exception):
    """The tableau hit a work bound."""


class Tableau:
    """One satisfiability search in a logic; ``steps`` counts rule applications."""

    def __init__(self, logic: Logic) -> None:
        self.logic, self.steps, self.bound = logic, 0, ""

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            self.bound = f"MAX_STEPS ({MAX_STEPS} rule applications)"
            raise _Stop

    def satisfiable(self, f: Formula) -> tuple[bool | None, dict[str, Any] | None]:
        """(True and a model of ``f``, False, or None when a bound stopped the search)."""
        try:
            found = self._search([{nnf(f)}], set(), [None])
        except _Stop:
            return None, None
        return (False, None) if found is None else (True, found)

    def _edges(self, worlds: list[set[Formula]], edges: set[tuple[int, int]]) -> set[tuple[int, int]]:
        n = len(worlds)
        if self.logic == "S5":
            return {(i, j) for i in range(n) for j in range(n)}
        closed = set(edges) | ({(i, i) for i in range(n)} if self.logic != "K" else set())
        while self.logic == "S4":
            more = {(a, d) for a, b in closed for c, d in closed if b == c} - closed
            if not more:
                break
            closed |= more
        return closed

    def _saturate(self, worlds: list[set[Formula]], edges: set[tuple[int, int]]) -> bool:
        """Apply and-, box- and frame rules to a fixpoint; False on a clash."""
        changed = True
        while changed:
            changed = False
            for w, label in enumerate(worlds):
                for f in list(label):
                    adds: list[tuple[int, Formula]] = []
                    if f[0] == "and":
                        adds = [(w, f[1]), (w, f[2])]
                    elif f[0] == "box":
                        seen = [v for a, v in edges if a == w]
                        adds = [(v, f[1]) for v in seen] + ([(v, f) for v in seen] if self.logic == "S4" else [])
                    for v, g in adds:
                        if g not in worlds[v]:
                            self._tick()
                            worlds[v].add(g)
                            changed = True
                if ("false",) in label or any(g[0] == "not" and g[1] in label for g in label):
                    return False
        return True

    def _blocked(self, w: int, worlds: list[set[Formula]], parents: list[int | None]) -> bool:
        a = parents[w]
        while a is not None:
            if worlds[w] <= worlds[a]:
                return True
            a = parents[a]
        return False

    def _search(self, worlds: list[set[Formula]], edges: set[tuple[int, int]],
                parents: list[int | None]) -> dict[str, Any] | None:  # fmt: skip
        while True:
            edges = self._edges(worlds, edges)
            if not self._saturate(worlds, edges):
                return None
            split = next(((w, f) for w, label in enumerate(worlds) for f in sorted(label, key=repr)
                          if f[0] == "or" and f[1] not in label and f[2] not in label), None)  # fmt: skip
            if split is not None:
                w, f = split
                for part in (f[1], f[2]):
                    self._tick()
                    copy = [set(label) for label in worlds]
                    copy[w].add(part)
                    found = self._search(copy, set(edges), list(parents))
                    if found is not None:
                        return found
                return None
            need = next(((w, f) for w, label in enumerate(worlds) for f in sorted(label, key=repr)
                         if f[0] == "dia" and not any(f[1] in worlds[v] for a, v in edges if a == w)
                         and not (self.logic == "S4" and self._blocked(w, worlds, parents))), None)  # fmt: skip
            if need is None:
                return self._model(worlds, edges, parents)
            if len(worlds) >= MAX_WORLDS:
                self.bound = f"MAX_WORLDS ({MAX_WORLDS} worlds in one branch)"
                raise _Stop
            self._tick()
            w, f = need
            worlds.append({f[1]})
            parents.append(w)
            edges = edges | {(w, len(worlds) - 1)}

    def _model(self, worlds: list[set[Formula]], edges: set[tuple[int, int]],
               parents: list[int | None]) -> dict[str, Any]:  # fmt: skip
        links = set(edges)
        if self.logic == "S4":  # a blocked world sees what its blocking ancestor sees
            for w in range(len(worlds)):
                a = parents[w]
                while a is not None and not worlds[w] <= worlds[a]:
                    a = parents[a]
                if a is not None and not any(x == w and y != w for x, y in links):
                    links |= {(w, y) for x, y in links if x == a}
            links = self._edges(worlds, links)
        names = [f"w{i}" for i in range(len(worlds))]
        return {"worlds": {names[i]: sorted(f[1] for f in label if f[0] == "atom") for i, label in enumerate(worlds)},
                "access": sorted([names[a], names[b]] for a, b in links), "actual": names[0]}  # fmt: skip


def decide(f: Formula, logic: Logic, task: Literal["validity", "satisfiability"]) -> dict[str, Any]:
    """Whether ``f`` is valid (or satisfiable) in ``logic``: ``answer`` True/False/None (undecided at a bound), a
    counter-model (or model) checked by evaluation, ``steps`` and, when undecided, the ``bound`` hit."""
    tableau = Tableau(logic)
    target = ("not", f) if task == "validity" else f
    sat, model = tableau.satisfiable(target)
    row: dict[str, Any] = {"formula": show(f), "logic": logic, "task": task, "steps": tableau.steps}
    if sat is None:
        return row | {"answer": None, "bound": tableau.bound}
    if model is not None:  # check the model before reporting it: the formula must hold at its actual world
        worlds = {w: set(props) for w, props in model["worlds"].items()}
        access: dict[str, set[str]] = {w: set() for w in worlds}
        for a, b in model["access"]:
            access[a].add(b)
        holds = extension(target, worlds, access, Budget(10**7), {})
        if holds is None or model["actual"] not in holds:
            return row | {"answer": None, "bound": "the model found did not check (reported as undecided)"}
        row["counter_model" if task == "validity" else "model"] = model
    return row | {"answer": (not sat) if task == "validity" else sat}


__all__ = ["MAX_FORMULA_DEPTH", "MAX_STEPS", "MAX_WORLDS", "Budget", "Formula", "Logic", "decide", "extension",
           "nnf", "parse", "show"]  # fmt: skip
