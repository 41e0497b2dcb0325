"""Multi-method fusion, the seed's five steps: run each method, collect the conclusions, find agreements and
disagreements, a unified conclusion weighing each method's confidence, and an overall confidence.

Conclusions compare casefolded, whitespace collapsed, a trailing full stop ignored. A position's weight is
the sum of the confidences of the methods that reached it; the unified conclusion is the heaviest position
(ties: the one reached first in the order the methods were given). With ``W`` the total weight of the
computed results, ``w`` the winner's weight and ``n`` its number of methods::

    overall_confidence = (w / W) · (w / n)      # share of the support x mean confidence of its methods

so unanimous, confident methods give a high confidence; a split or hesitant panel a low one. Results
that computed nothing (``llm_prompt``) are listed as pending and carry no weight; ``llm`` results count.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from reasoning.router.methods.base import MethodOutcome
from reasoning.router.models import Disagreement, FusionReport, Position


def conclusion_key(conclusion: str) -> str:
    """The form conclusions are compared in."""
    return " ".join(conclusion.casefold().split()).rstrip(".")


def fuse(results: Sequence[MethodOutcome]) -> FusionReport:
    """Agreements, disagreements, the unified conclusion and the overall confidence of several results."""
    answered = [r for r in results if r.kind != "llm_prompt"]
    pending = [r.method for r in results if r.kind == "llm_prompt"]
    groups: dict[str, list[MethodOutcome]] = {}
    for result in answered:
        groups.setdefault(conclusion_key(result.conclusion), []).append(result)
    positions = [
        Position(conclusion=group[0].conclusion, methods=[m.method for m in group],
                 weight=round(sum(m.confidence for m in group), 6))
        for group in groups.values()
    ]  # fmt: skip
    positions.sort(key=lambda p: -p.weight)  # stable: first reached wins a tie
    disagreements = [Disagreement(methods=(a.method, b.method), conclusions=(a.conclusion, b.conclusion))
                     for a, b in combinations(answered, 2)
                     if conclusion_key(a.conclusion) != conclusion_key(b.conclusion)]  # fmt: skip
    total = sum(p.weight for p in positions)
    if not positions or total <= 0:
        unified, overall = (positions[0].conclusion if positions else None), 0.0
    else:
        top = positions[0]
        unified, overall = top.conclusion, (top.weight / total) * (top.weight / len(top.methods))
    agreements = [p for p in positions if len(p.methods) >= 2]
    verdict = f"unified: {unified} (overall confidence {overall:.2f})" if unified else "no conclusion"
    summary = (f"{len(answered)} of {len(results)} methods concluded, {len(positions)} distinct conclusion(s), "
               f"{len(agreements)} agreement(s), {len(disagreements)} disagreeing pair(s); {verdict}")  # fmt: skip
    return FusionReport(positions=positions, agreements=agreements, disagreements=disagreements, pending=pending,
                        unified_conclusion=unified, overall_confidence=round(min(1.0, overall), 6),
                        summary=summary)  # fmt: skip


__all__ = ["conclusion_key", "fuse"]
