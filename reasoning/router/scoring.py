"""The seed's meta-reasoning router (``scoreMethodsForProblem``) and a keyword classifier for text.

Score of a method for a classification, exactly as the seed writes it::

    score = 0.2·[ideal_uncertainty = uncertainty] + 0.2·[ideal_complexity = complexity]
          + 0.3·[ideal_domain = domain] + 0.15·[ideal_data = data_availability] + 0.15·[ideal_stakes = stakes]

(``[..]`` is 1 on a match, else 0; a dimension the classification leaves out matches nothing;
``time_pressure`` is not scored). Auto-selection scores the seed's 32 methods. Ties are broken
deterministically by catalogue order (the seed's table order, formal first) and the result says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kg.errors import InputError
from kg.models import parse
from kg.text.words import WORD
from reasoning.router.catalogue import SEED
from reasoning.router.models import MethodScore, MethodSpec, ProblemClassification

WEIGHTS: dict[str, float] = {
    "uncertainty": 0.2,
    "complexity": 0.2,
    "domain": 0.3,
    "data_availability": 0.15,
    "stakes": 0.15,
}


def classification(value: ProblemClassification | Mapping[str, Any] | None) -> ProblemClassification:
    """``value`` as a :class:`ProblemClassification` (errors name ``problem_classification.<field>``)."""
    if value is None:
        return ProblemClassification()
    if isinstance(value, ProblemClassification):
        return value
    try:
        return parse(ProblemClassification, dict(value))
    except InputError as exc:
        raise InputError(f"problem_classification.{exc.field}", exc.rule) from None


def score_method(method: MethodSpec, problem: ProblemClassification) -> tuple[float, list[str]]:
    """The seed's score of one method and the dimensions that matched."""
    matched = [name for name in WEIGHTS if getattr(problem, name) is not None
               and getattr(problem, name) == getattr(method.profile, name)]  # fmt: skip
    return round(sum(WEIGHTS[name] for name in matched), 4), matched


def score_methods_for_problem(
    problem: ProblemClassification | Mapping[str, Any], methods: tuple[MethodSpec, ...] = SEED
) -> list[MethodScore]:
    """Every method scored, best first; equal scores keep catalogue order (the tie-break)."""
    checked = classification(problem)
    scored = [(i, m, *score_method(m, checked)) for i, m in enumerate(methods)]
    scored.sort(key=lambda row: (-row[2], row[0]))
    return [MethodScore(method=m.id, category=m.category, score=score, matched=matched, rank=rank)
            for rank, (_, m, score, matched) in enumerate(scored, 1)]  # fmt: skip


def explain_tie(scores: list[MethodScore], chosen: int) -> str | None:
    """A sentence explaining the tie at the cut after the first ``chosen`` methods, or None if there is none."""
    if len(scores) <= chosen:
        return None
    last = scores[chosen - 1].score
    tied = [s.method for s in scores if s.score == last]
    if len(tied) < 2:
        return None
    kept = [m for m in tied if m in {s.method for s in scores[:chosen]}]
    return (f"{len(tied)} methods tie at score {last}: {', '.join(tied)}; kept {', '.join(kept)} by catalogue order "
            "(the seed's table order: formal, probabilistic, causal, experience, social, meta)")  # fmt: skip


# ---------------------------------------------------------------------------------------------- keywords
# A keyword is a word, or a prefix ending in "*" ("probab*" matches probability). Each dimension takes
# the value with the most hits; none (or a tie) leaves the dimension out.
_KEYWORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "uncertainty": {
        "high": ("probab*", "likel*", "uncertain*", "risk*", "chance*", "maybe", "might", "unknown*", "predict*",
                 "forecast*", "estimat*", "odds", "unclear"),
        "low": ("certain", "known", "definitely", "proven", "given", "always", "must", "deterministic"),
    },
    "complexity": {
        "complex": ("complex*", "complicated", "interdependen*", "many", "multiple", "several", "system*",
                    "feedback", "trade-off*", "loop*"),
        "simple": ("simple", "single", "quick", "straightforward", "basic", "routine", "easy"),
    },
    "domain": {
        "formal": ("rule*", "logic*", "proof", "prove", "law*", "legal", "policy", "policies", "contract*",
                   "complian*", "oblig*", "permit*", "forbid*", "schedul*", "deadline*"),
        "empirical": ("data", "measure*", "sales", "cost*", "price*", "demand", "experiment*", "rate*", "failure*",
                      "outage*", "revenue*", "sensor*", "test*", "cause*", "effect*"),
        "social": ("people", "team*", "stakeholder*", "vote*", "voting", "negotiat*", "competitor*", "customer*",
                   "partner*", "argument*", "employee*", "union*", "bargain*"),
    },
    "time_pressure": {
        "urgent": ("urgent*", "immediately", "asap", "now", "today", "emergency", "deadline"),
        "none": ("eventually", "someday", "no rush", "long-term"),
    },
    "data_availability": {
        "rich": ("data", "dataset*", "historical", "history", "statistic*", "logs", "records", "measured"),
        "sparse": ("scarce", "anecdot*", "unprecedented", "novel", "first", "little", "no data"),
    },
    "stakes": {
        "high": ("critical", "safety", "lives", "irreversible", "million*", "billion*", "crucial", "major",
                 "bankrupt*", "catastroph*", "reputation*"),
        "low": ("minor", "small", "trivial", "cheap", "reversible", "harmless"),
    },
}  # fmt: skip

#: A word (:data:`kg.text.words.WORD`) with its joined parts ("follow-up", "don't").
_TOKEN = re.compile(rf"{WORD}(?:['-]{WORD})*")


def _hits(tokens: list[str], keywords: tuple[str, ...]) -> list[str]:
    found = []
    for token in tokens:
        for keyword in keywords:
            if token.startswith(keyword[:-1]) if keyword.endswith("*") else token == keyword:
                found.append(token)
                break
    return found


def classification_signals(text: str) -> dict[str, list[str]]:
    """The keywords found, by ``dimension:value`` (e.g. ``uncertainty:high``)."""
    tokens = _TOKEN.findall(text.casefold())
    signals: dict[str, list[str]] = {}
    for dimension, groups in _KEYWORDS.items():
        for value, keywords in groups.items():
            found = _hits(tokens, keywords)
            if found:
                signals[f"{dimension}:{value}"] = sorted(set(found))
    return signals


def classify_problem(text: str) -> ProblemClassification:
    """A classification from keywords in ``text``: per dimension the value with the most distinct hits."""
    signals = classification_signals(text)
    found: dict[str, str] = {}
    for dimension, groups in _KEYWORDS.items():
        counts = sorted(((len(signals.get(f"{dimension}:{v}", [])), v) for v in groups), reverse=True)
        if counts[0][0] > 0 and (len(counts) == 1 or counts[0][0] > counts[1][0]):
            found[dimension] = counts[0][1]
    return parse(ProblemClassification, found)


__all__ = [
    "WEIGHTS",
    "classification",
    "classification_signals",
    "classify_problem",
    "explain_tie",
    "score_method",
    "score_methods_for_problem",
]
