"""Scoring methods against a problem profile, and the keyword classifier that builds a profile from text.

Score of a method for a problem::

    score = 0.20·m(uncertainty) + 0.20·m(complexity) + 0.30·d(domain) + 0.15·m(data) + 0.15·m(stakes)

    m(a, b) = 1 if a == b, 0.5 if the levels are adjacent (low-medium, medium-high), else 0
    d       = 1   if the problem's domain is one of the method's domains
              0.5 otherwise, if the method lists "general" or the problem's domain is "general"
              0   otherwise

Scores are rounded to 4 decimals (they are multiples of 0.025) and sorted best first, ties by id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kg.errors import InputError
from kg.models import parse
from reasoning.router.catalogue import METHODS
from reasoning.router.models import DimensionScores, Domain, Level, MethodScore, MethodSpec, ProblemProfile

WEIGHTS: dict[str, float] = {
    "uncertainty": 0.20,
    "complexity": 0.20,
    "domain": 0.30,
    "data_availability": 0.15,
    "stakes": 0.15,
}


def level_match(problem: Level, ideal: Level) -> float:
    """1 for equal levels, 0.5 for adjacent ones, 0 for low against high."""
    return {0: 1.0, 1: 0.5}.get(abs(problem.rank - ideal.rank), 0.0)


def domain_match(problem: Domain, domains: frozenset[Domain]) -> float:
    """1 if the method suits the domain, 0.5 if either side is general, else 0."""
    if problem in domains:
        return 1.0
    if Domain.GENERAL in domains or problem is Domain.GENERAL:
        return 0.5
    return 0.0


def score_method(method: MethodSpec, profile: ProblemProfile) -> MethodScore:
    """One method's fit for the problem."""
    ideal = method.profile
    parts = DimensionScores(
        uncertainty=level_match(profile.uncertainty, ideal.uncertainty),
        complexity=level_match(profile.complexity, ideal.complexity),
        domain=domain_match(profile.domain, ideal.domains),
        data_availability=level_match(profile.data_availability, ideal.data_availability),
        stakes=level_match(profile.stakes, ideal.stakes),
    )
    total = sum(WEIGHTS[name] * value for name, value in parts.model_dump().items())
    return MethodScore(method_id=method.id, name=method.name, category=method.category, score=round(total, 4),
                       breakdown=parts, computes=method.engine is not None)  # fmt: skip


def _profile(profile: ProblemProfile | Mapping[str, Any]) -> ProblemProfile:
    return profile if isinstance(profile, ProblemProfile) else parse(ProblemProfile, dict(profile))


def score_methods_for_problem(profile: ProblemProfile | Mapping[str, Any]) -> list[MethodScore]:
    """Every catalogue method scored for ``profile``, best first (ties by method id).

    Raises:
        InputError: a level or domain outside the allowed values.
    """
    checked = _profile(profile)
    scores = sorted((score_method(m, checked) for m in METHODS), key=lambda s: s.method_id)
    scores.sort(key=lambda s: s.score, reverse=True)
    return scores


# --------------------------------------------------------------------------------------------
# Keyword classifier
# --------------------------------------------------------------------------------------------

# A keyword is a word, a phrase, or a prefix ending in "*" ("invest*" matches investment).
_LEVEL_KEYWORDS: dict[str, dict[Level, tuple[str, ...]]] = {
    "uncertainty": {
        Level.HIGH: ("probabilit*", "probable", "likely", "unlikely", "likelihood", "chance", "chances", "risk*",
                     "uncertain*", "unknown*", "unpredictable", "volatil*", "forecast*", "predict*", "odds", "might",
                     "maybe", "possibly", "estimate*", "not sure", "not certain", "ambigu*", "unclear", "guess*"),
        Level.LOW: ("certain", "certainly", "known", "definitely", "deterministic", "guaranteed", "proven", "fixed",
                    "always", "must", "for sure", "confirmed"),
    },
    "complexity": {
        Level.HIGH: ("complex*", "complicated", "interdependen*", "multiple", "many", "several", "trade-off*",
                     "tradeoff*", "stakeholders", "system-wide", "ecosystem", "nonlinear", "long-term", "intricate"),
        Level.LOW: ("simple", "straightforward", "single", "quick", "trivial", "basic", "routine", "one-off", "easy"),
    },
    "data_availability": {
        Level.HIGH: ("data", "dataset*", "historical", "history", "statistic*", "metrics", "logs", "measured",
                     "measurements", "records", "survey*", "samples", "benchmark*"),
        Level.LOW: ("no data", "little data", "limited data", "lack of data", "without data", "scarce", "anecdot*",
                    "unprecedented", "first time", "novel", "no history", "no records"),
    },
    "stakes": {
        Level.HIGH: ("critical", "safety", "life", "lives", "death", "fatal", "irreversible", "million*", "billion*",
                     "bankrupt*", "catastroph*", "crucial", "major", "high stakes", "high-stakes", "reputation*",
                     "survival", "existential"),
        Level.LOW: ("minor", "small", "trivial", "low stakes", "low-stakes", "cheap", "reversible", "inexpensive",
                    "no big deal", "harmless"),
    },
}  # fmt: skip

# Domains in tie-break order: on equal hit counts the earlier one wins.
_DOMAIN_KEYWORDS: dict[Domain, tuple[str, ...]] = {
    Domain.LEGAL: ("legal*", "law", "laws", "lawsuit*", "contract*", "complian*", "regulat*", "liabilit*", "gdpr",
                   "court*", "litigation", "licen*", "patent*", "clause*", "statute*", "attorney*", "lawyer*", "sue",
                   "sued", "breach*", "privacy"),
    Domain.FINANCE: ("money", "cost", "costs", "price*", "pricing", "budget*", "revenue*", "profit*", "invest*",
                     "loan*", "cash", "financ*", "roi", "margin*", "dollar*", "euro*", "interest rate",
                     "interest rates", "$", "€", "£", "fund*", "capital", "tax*", "valuation", "dividend*",
                     "portfolio*", "expense*", "spend*", "payment*", "stock price", "return on investment"),
    Domain.TECHNICAL: ("software", "code", "bug*", "server*", "api", "apis", "database*", "deploy*", "outage*",
                       "latency", "algorithm*", "network*", "infrastructure", "crash*", "cpu", "memory leak",
                       "kubernetes", "cloud", "security", "vulnerabilit*", "microservice*", "frontend", "backend",
                       "engineering", "technical"),
    Domain.OPERATIONS: ("supply", "supplier*", "inventory", "logistic*", "schedul*", "workflow*", "process*",
                        "staffing", "shift", "shifts", "capacity", "delivery", "deliveries", "production", "warehouse*",
                        "shipping", "throughput", "procurement", "operations", "operational", "maintenance",
                        "vendor*", "stock-out*"),
    Domain.MARKETING: ("marketing", "campaign*", "brand*", "customer*", "advertis*", "conversion*", "audience*",
                       "churn", "segment*", "social media", "seo", "promotion*"),
    Domain.PEOPLE: ("hire", "hiring", "hired", "employee*", "team", "teams", "culture", "morale", "hr",
                    "human resources", "recruit*", "manager*", "performance review", "layoff*", "salar*", "burnout",
                    "talent", "colleague*"),
    Domain.STRATEGY: ("strateg*", "competitor*", "competition", "competitive", "market", "markets", "market share",
                      "expansion", "expand*",
                      "merger*", "acquisition*", "vision", "positioning", "partnership*", "new market",
                      "diversif*", "growth", "long-term plan"),
}  # fmt: skip

_TOKEN = re.compile(r"[$€£]|[^\W_]+(?:['-][^\W_]+)*")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def _consume(tokens: list[str | None], keyword: str) -> int:
    """Count and blank out the occurrences of ``keyword`` (so a phrase's words are not counted again)."""
    words = keyword.split()
    prefix = words[-1].endswith("*")
    if prefix:
        words[-1] = words[-1][:-1]
    hits, size = 0, len(words)
    for start in range(len(tokens) - size + 1):
        window = tokens[start : start + size]
        if any(w is None for w in window):
            continue
        exact, last = window[:-1] == words[:-1], str(window[-1])
        if exact and (last.startswith(words[-1]) if prefix else last == words[-1]):
            tokens[start : start + size] = [None] * size
            hits += 1
    return hits


def _count(tokens: list[str], groups: Mapping[Any, tuple[str, ...]]) -> dict[Any, list[str]]:
    """Keyword hits per group; longer keywords are matched first and consume their words."""
    remaining: list[str | None] = list(tokens)
    keywords = sorted(((kw, group) for group, kws in groups.items() for kw in kws), key=lambda p: -len(p[0].split()))
    hits: dict[Any, list[str]] = {group: [] for group in groups}
    for keyword, group in keywords:
        hits[group].extend([keyword] * _consume(remaining, keyword))
    return hits


def _level(hits: dict[Level, list[str]]) -> Level:
    high, low = len(hits[Level.HIGH]), len(hits[Level.LOW])
    return Level.HIGH if high > low else Level.LOW if low > high else Level.MEDIUM


def _domain(hits: dict[Domain, list[str]]) -> Domain:
    best = max(_DOMAIN_KEYWORDS, key=lambda d: len(hits[d]))  # max keeps the first of equals
    return best if hits[best] else Domain.GENERAL


def classification_signals(text: str) -> dict[str, list[str]]:
    """The keywords the classifier found, by ``dimension:value`` (``uncertainty:high``, ``domain:finance``)."""
    tokens = _tokens(text)
    signals: dict[str, list[str]] = {}
    for dimension, groups in _LEVEL_KEYWORDS.items():
        for level, found in _count(tokens, groups).items():
            if found:
                signals[f"{dimension}:{level.value}"] = sorted(found)
    for domain, found in _count(tokens, _DOMAIN_KEYWORDS).items():
        if found:
            signals[f"domain:{domain.value}"] = sorted(found)
    return signals


def _explicit(name: str, value: str | None, kind: type[Level] | type[Domain]) -> Any:
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        valid = ", ".join(v.value for v in kind)
        raise InputError(name, f"must be one of {valid}, got {value!r}") from None


def classify_problem(
    text: str,
    *,
    uncertainty: Level | str | None = None,
    complexity: Level | str | None = None,
    domain: Domain | str | None = None,
    data_availability: Level | str | None = None,
    stakes: Level | str | None = None,
) -> ProblemProfile:
    """A problem profile from keywords in ``text``; explicit values override what the text suggests.

    Per level dimension: more "high" than "low" keyword hits -> high, more "low" -> low, else medium.
    Domain: the domain with the most hits (ties in the order legal, finance, technical, operations,
    marketing, people, strategy), general when none. Matching is on casefolded words; phrases are
    matched before single words and consume them ("no data" counts as low data, not as "data").

    Raises:
        InputError: an explicit value outside the allowed levels or domains.
    """
    given = {
        "uncertainty": _explicit("uncertainty", uncertainty, Level),
        "complexity": _explicit("complexity", complexity, Level),
        "domain": _explicit("domain", domain, Domain),
        "data_availability": _explicit("data_availability", data_availability, Level),
        "stakes": _explicit("stakes", stakes, Level),
    }
    tokens = _tokens(text)
    found: dict[str, Any] = {name: _level(_count(tokens, groups)) for name, groups in _LEVEL_KEYWORDS.items()}
    found["domain"] = _domain(_count(tokens, _DOMAIN_KEYWORDS))
    found.update({name: value for name, value in given.items() if value is not None})
    return ProblemProfile(**found)


__all__ = [
    "WEIGHTS",
    "classification_signals",
    "classify_problem",
    "domain_match",
    "level_match",
    "score_method",
    "score_methods_for_problem",
]
