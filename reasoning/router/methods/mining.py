"""The work bound of frequent-itemset mining (Apriori), shared by ``inductive`` and ``pattern-recognition``.

Apriori counts, for each itemset length k, candidate itemsets inside every transaction; a transaction of n items
holds C(n, k) itemsets of length k, so long transactions make the count explode (one basket of 50 items holds
15.9 million itemsets of length 6). The work of a run is bounded above by the itemset occurrences
``sum over transactions of C(size, k)`` for k up to the length asked; :func:`affordable_length` lowers the
length until that sum fits the budget (the result is then partial: longer patterns were not searched).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb


def occurrences(transactions: Sequence[Sequence[str]], length: int) -> int:
    """Itemset occurrences of lengths 1..``length`` over the transactions."""
    return sum(comb(len(t), k) for t in transactions for k in range(1, length + 1))


def affordable_length(transactions: Sequence[Sequence[str]], length: int, budget: int) -> int:
    """The longest itemset length up to ``length`` whose occurrences fit ``budget`` (at least 1)."""
    while length > 1 and occurrences(transactions, length) > budget:
        length -= 1
    return length


__all__ = ["affordable_length", "occurrences"]
