"""The work bound of frequent-itemset mining (Apriori), shared by ``inductive`` and ``pattern-recognition``.

Apriori counts, for each itemset length k, candidate itemsets inside every transaction; a transaction of n items
holds C(n, k) itemsets of length k, so long transactions make the count explode (one basket of 50 items holds
15.9 million itemsets of length 6). Each frequent itemset of length k then yields up to 2^k - 2 association rules
(three baskets of 24 items at length 6: 8 million rules, ten minutes), and an itemset is frequent only if it
occurs in at least ``min_count`` transactions. The work of a run is therefore bounded above by

    sum over transactions t and lengths k <= max_length of C(|t|, k) * (1 + 2^k / min_count)

and :func:`affordable_length` lowers the length until that sum fits the budget (the caller marks the result
partial: longer patterns were not searched).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb


def occurrences(transactions: Sequence[Sequence[str]], length: int, min_count: int = 1) -> float:
    """The work bound above for itemsets of lengths 1..``length``."""
    sizes = [len(t) for t in transactions]
    return float(sum(comb(n, k) * (1 + 2**k / max(1, min_count)) for n in sizes for k in range(1, length + 1)))


def affordable_length(transactions: Sequence[Sequence[str]], length: int, budget: int, min_count: int = 1) -> int:
    """The longest itemset length up to ``length`` whose work fits ``budget`` (at least 1)."""
    while length > 1 and occurrences(transactions, length, min_count) > budget:
        length -= 1
    return length


__all__ = ["affordable_length", "occurrences"]
