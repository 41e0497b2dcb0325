"""Labelled discrete factors: numpy tables whose axes are named variables, with a work budget.

A :class:`Factor` is a non-negative table over named discrete variables (axis ``i`` is ``names[i]``, its length the
size of that variable's domain). Variable elimination (:mod:`.discrete`), the estimate of an identified causal
effect (:mod:`.identification`) and structural causal models (:mod:`.scm`) multiply, marginalise and divide them.

Every operation spends the cells of the table it builds from a :class:`Budget`; a table larger than
:data:`MAX_FACTOR_CELLS`, or a run whose tables add up to more than :data:`MAX_WORK_CELLS`, stops with a one-line
:class:`~kg.errors.InputError` naming the field that made it large (never an unbounded computation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from reasoning.router.methods.base import fail

#: The largest table one step may build (float64: 32 MB).
MAX_FACTOR_CELLS = 1 << 22
#: The cells all steps of one method run may build together (a few seconds of numpy work).
MAX_WORK_CELLS = 50_000_000


@dataclass
class Budget:
    """Cells of tables built so far by one run, against :data:`MAX_FACTOR_CELLS` and :data:`MAX_WORK_CELLS`."""

    method: str
    field: str
    spent: int = 0

    def spend(self, cells: int, what: str = "a table") -> None:
        """Count ``cells`` more.

        Raises:
            InputError: naming ``inputs.<method>.<field>``: one table or the total is over its bound.
        """
        if cells > MAX_FACTOR_CELLS:
            raise fail(self.method, self.field, f"needs {what} of {cells:,} cells (at most {MAX_FACTOR_CELLS:,}): "
                                                "the variables are too many or too densely connected")  # fmt: skip
        self.spent += cells
        if self.spent > MAX_WORK_CELLS:
            raise fail(self.method, self.field, f"needs more than {MAX_WORK_CELLS:,} table cells of work: the "
                                                "variables are too many or too densely connected")  # fmt: skip


@dataclass(frozen=True)
class Factor:
    """A table over named variables (``table.shape[i]`` is the domain size of ``names[i]``)."""

    names: tuple[str, ...]
    table: np.ndarray

    def aligned(self, names: Sequence[str]) -> np.ndarray:
        """The table with axes in ``names`` order (a superset of this factor's), size 1 on missing axes."""
        order = [self.names.index(n) for n in names if n in self.names]
        shape = [self.table.shape[self.names.index(n)] if n in self.names else 1 for n in names]
        return np.transpose(self.table, order).reshape(shape)


def size(names: Iterable[str], domains: Mapping[str, Sequence[str]]) -> int:
    """Cells of a table over ``names``."""
    return math.prod(len(domains[n]) for n in names)


def unit() -> Factor:
    """The factor 1 over no variable."""
    return Factor((), np.ones(()))


def product(factors: Sequence[Factor], budget: Budget) -> Factor:
    """The product of ``factors`` (over the union of their variables, in first-seen order)."""
    names = tuple(dict.fromkeys(n for f in factors for n in f.names))
    shapes = {n: f.table.shape[f.names.index(n)] for f in factors for n in f.names}
    budget.spend(math.prod(shapes[n] for n in names), "a product table")
    out = np.ones([shapes[n] for n in names])
    for f in factors:
        out = out * f.aligned(names)
    return Factor(names, out)


def sum_out(factor: Factor, names: Iterable[str]) -> Factor:
    """``factor`` with the variables ``names`` summed out (names it does not have are ignored)."""
    drop = [i for i, n in enumerate(factor.names) if n in set(names)]
    if not drop:
        return factor
    return Factor(tuple(n for n in factor.names if n not in set(names)), factor.table.sum(axis=tuple(drop)))


def divide(numerator: Factor, denominator: Factor, budget: Budget) -> Factor:
    """``numerator / denominator`` cell by cell, 0 where the denominator is 0 (an impossible condition)."""
    names = tuple(dict.fromkeys([*numerator.names, *denominator.names]))
    shapes = {n: f.table.shape[f.names.index(n)] for f in (numerator, denominator) for n in f.names}
    budget.spend(math.prod(shapes[n] for n in names), "a quotient table")
    top, bottom = np.broadcast_arrays(numerator.aligned(names), denominator.aligned(names))
    out = np.divide(top, bottom, out=np.zeros(top.shape), where=bottom > 0)
    return Factor(names, out)


def reduce(factor: Factor, assignment: Mapping[str, int]) -> Factor:
    """``factor`` sliced at the given value indices (variables it does not have are ignored)."""
    index = tuple(assignment.get(n, slice(None)) for n in factor.names)
    return Factor(tuple(n for n in factor.names if n not in assignment), factor.table[index])


def normalised(factor: Factor) -> Factor | None:
    """``factor`` scaled to sum to 1, or None when it sums to 0."""
    total = float(factor.table.sum())
    return None if total <= 0 else Factor(factor.names, factor.table / total)


__all__ = ["MAX_FACTOR_CELLS", "MAX_WORK_CELLS", "Budget", "Factor", "divide", "normalised", "product", "reduce",
           "size", "sum_out", "unit"]  # fmt: skip
