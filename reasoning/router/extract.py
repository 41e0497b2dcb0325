"""Inputs read from a problem's own words: the numbers of a test result, lotteries, ranked ballots.

Each reader returns an :class:`Extraction`: the method's complete ``inputs`` object when the text holds every
number the method needs, otherwise a partial template (``None`` where a number is missing) and the list of what
is missing. Nothing is guessed: a number that is not in the text stays ``None`` and is named in ``missing``.

Example:
    >>> found = read_inputs("bayesian", "95% sensitive, 5% false positives, prevalence 1 in 1000; tested positive")
    >>> found.inputs["network"]["nodes"]["Condition"]["cpt"]
    {'': 0.001}
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_NUM = r"(\d[\d,]*(?:\.\d+)?)"


@dataclass
class Extraction:
    """What the text gave for one method."""

    inputs: dict[str, Any] | None  # complete inputs, ready to run
    template: dict[str, Any]  # the same shape with None where a value is missing
    missing: list[str] = field(default_factory=list)
    found: list[str] = field(default_factory=list)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _share(match: re.Match[str] | None, group: int | None = None) -> float | None:
    """A share (``95%`` or ``0.95``) from ``group``, by default the first group that matched: a pattern of
    alternatives (``95% sensitive|sensitivity of 95%``) holds its number in whichever alternative matched."""
    if match is None:
        return None
    text = match.group(group) if group is not None else next((g for g in match.groups() if g is not None), None)
    if text is None:
        return None
    value = _number(text)
    return value / 100 if value > 1 else value


def _bayesian(text: str) -> Extraction | None:
    low = text.casefold()
    pair = re.search(rf"(?:catches|flags|detects|identifies|reads [\w ]+? for|finds) {_NUM}\s*%[^.;]*?(?:and|but)"
                     rf"(?: also)?(?: [a-z]+){{0,3}}? {_NUM}\s*%", low)  # fmt: skip
    sensitivity = _share(re.search(rf"{_NUM}\s*% sensitiv|sensitivity (?:of |is )?{_NUM}\s*%", low))
    if sensitivity is None and re.search(rf"sensitivity (?:of |is )?{_NUM}", low):
        sensitivity = _share(re.search(rf"sensitivity (?:of |is )?{_NUM}", low))
    fpr = _share(re.search(rf"false[- ]positive(?: rate)? (?:of |is )?{_NUM}\s*%|{_NUM}\s*% false[- ]positive", low))
    if fpr is None and (m := re.search(rf"{_NUM}\s*% specific|specificity (?:of |is )?{_NUM}\s*%", low)):
        fpr = round(1 - (_share(m) or 0.0), 10)
    if pair is not None:
        sensitivity = sensitivity if sensitivity is not None else _share(pair, 1)
        fpr = fpr if fpr is not None else _share(pair, 2)
    prevalence: float | None = None
    if m := re.search(rf"(?:1|one) (?:in|out of) (?:every )?{_NUM}", low):
        prevalence = 1 / _number(m.group(1))
    elif m := re.search(rf"prevalence (?:of |is )?{_NUM}\s*%|{_NUM}\s*% of (?:all )?[a-z]+ (?:is|are|have|has)\b", low):
        prevalence = _share(m)
    negative = re.search(r"tested negative|negative (?:test|result)", low) is not None
    positive = negative or re.search(r"tested positive|positive (?:test|result)|was (?:flagged|rejected|detected)|"
                                     r"blew over|reads? over|came back positive", low) is not None  # fmt: skip
    if sensitivity is None and fpr is None and prevalence is None:
        return None
    node: dict[str, Any] = {"Condition": {"parents": [], "cpt": {"": prevalence}},
            "Positive": {"parents": ["Condition"], "cpt": {"T": sensitivity, "F": fpr}}}  # fmt: skip
    template = {"network": {"nodes": node}, "evidence": {"Positive": not negative} if positive else None,
                "query": "Condition"}  # fmt: skip
    names = {"prevalence (P(condition), e.g. '1 in 1000')": prevalence,
             "sensitivity (P(positive | condition))": sensitivity,
             "false-positive rate (P(positive | no condition) = 1 - specificity)": fpr,
             "the observed result (positive or negative)": True if positive else None}  # fmt: skip
    missing = [name for name, value in names.items() if value is None]
    found = [f"{name.split(' (')[0]} = {value:.6g}" for name, value in names.items()
             if isinstance(value, float)]  # fmt: skip
    return Extraction(None if missing else template, template, missing, found)


_OUTCOME = re.compile(
    rf"(?:pays?|wins?|winning|yields?|gives?|earns?|of)\s+\$?{_NUM}[^,;.]{{0,20}}?\s+with (?:a )?(?:probability|chance)"
    rf"(?: of)?\s+{_NUM}\s*(%)?|{_NUM}\s*(%) chance of (?:winning |an? )?\$?{_NUM}"
)  # fmt: skip
_SURE = re.compile(rf"(?:certain|sure|guaranteed)\s+\$?{_NUM}|\$?{_NUM}[^,;.]{{0,12}}?\bfor sure")
_REST = re.compile(rf"(?:nothing|zero) otherwise|otherwise(?: nothing|,? zero)|otherwise\s+\$?{_NUM}")
_OPTION = re.compile(r"\b(?:option|bet|plan|choice|lottery|offer)\s+([A-Z0-9][\w-]{0,30})", re.I)


def _lottery(segment: str) -> list[dict[str, float]] | None:
    outcomes = []
    for m in _OUTCOME.finditer(segment):
        if m.group(1) is not None:
            value, p = _number(m.group(1)), _number(m.group(2)) / (100 if m.group(3) else 1)
        else:
            p, value = _number(m.group(4)) / 100, _number(m.group(6))
        outcomes.append({"probability": p, "utility": value})
    if (sure := _SURE.search(segment)) and not outcomes:
        return [{"probability": 1.0, "utility": _number(sure.group(1) or sure.group(2))}]
    total = sum(o["probability"] for o in outcomes)
    if outcomes and total < 1 - 1e-9 and (rest := _REST.search(segment)):
        outcomes.append({"probability": round(1 - total, 12), "utility": _number(rest.group(1)) if rest.group(1)
                         else 0.0})  # fmt: skip
    if not outcomes or abs(sum(o["probability"] for o in outcomes) - 1) > 1e-6:
        return None
    return outcomes


def _expected_utility(text: str) -> Extraction | None:
    marks = list(_OPTION.finditer(text))
    if len(marks) < 2:
        return None
    options: list[dict[str, Any]] = []
    missing: list[str] = []
    for i, mark in enumerate(marks):
        segment = text[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        outcomes = _lottery(segment)
        options.append({"name": mark.group(1), "outcomes": outcomes or [{"probability": None, "utility": None}]})
        if outcomes is None:
            missing.append(f"outcomes of {mark.group(1)} (probabilities summing to 1, and utilities)")
    template = {"options": options}
    found = [f"{o['name']}: {len(o['outcomes'])} outcome(s)" for o in options]
    return Extraction(None if missing else template, template, missing, found)


_PREFER = re.compile(rf"{_NUM}\s+(?:[a-z]+\s+){{0,2}}?(?:prefer|rank(?:ed)?|vote(?:d)?(?: for)?)\s+"
                     r"((?:[\w-]+(?:\s+(?:over|>|then|before|above)\s+|\s*>\s*))+[\w-]+)", re.I)  # fmt: skip
_SPLIT = re.compile(r"\s*(?:>|\bover\b|\bthen\b|\bbefore\b|\babove\b)\s*", re.I)


def _social_choice(text: str) -> Extraction | None:
    ballots: list[dict[str, Any]] = []
    candidates: list[str] = []
    for m in _PREFER.finditer(text):
        ranking = [name for name in _SPLIT.split(m.group(2)) if name]
        if len(set(ranking)) != len(ranking):
            continue
        ballots.append({"ranking": ranking, "count": int(_number(m.group(1)))})
        candidates += [c for c in ranking if c not in candidates]
    if len(ballots) < 2 or len(candidates) < 2:
        return None
    low = text.casefold()
    rule = next((r for key, r in (("borda", "borda"), ("plurality", "plurality"), ("runoff", "irv"),
                                  ("instant", "irv")) if key in low), "condorcet")  # fmt: skip
    if any(len(b["ranking"]) != len(candidates) for b in ballots) and rule in ("borda", "condorcet"):
        template = {"rule": rule, "candidates": candidates, "ballots": ballots}
        return Extraction(None, template, ["complete rankings (every ballot must rank every candidate)"])
    inputs = {"rule": rule, "candidates": candidates, "ballots": ballots}
    return Extraction(inputs, inputs, [], [f"{len(ballots)} ballot group(s) over {', '.join(candidates)}; "
                                           f"rule {rule}"])  # fmt: skip


READERS: dict[str, Callable[[str], Extraction | None]] = {
    "bayesian": _bayesian,
    "expected-utility": _expected_utility,
    "social-choice": _social_choice,
}


def read_inputs(method: str, text: str) -> Extraction | None:
    """The inputs of ``method`` read from ``text`` (complete or partial), or None when it holds nothing for it."""
    reader = READERS.get(method)
    if reader is None or not text.strip():
        return None
    return reader(text[:4000])


__all__ = ["READERS", "Extraction", "read_inputs"]
