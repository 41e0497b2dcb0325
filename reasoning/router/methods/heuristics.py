"""Fast and frugal heuristics on cues (Gigerenzer & Goldstein, "Reasoning the fast and frugal way", Psychological
Review 1996; Goldstein & Gigerenzer, "Models of ecological rationality: the recognition heuristic", 2002).

Inputs (``inputs.heuristic`` with ``cues`` or ``recognized``)::

    {"rule": "take-the-best" | "tallying" | "recognition", "criterion": "more inhabitants",
     "options": ["hamburg", "cologne"],
     "cues": [{"name": "state capital", "validity": 0.77, "values": {"hamburg": true, "cologne": false}}, ..],
     "recognized": ["hamburg", "cologne"], "recognition_validity": 0.8}

- take-the-best: cues in order of validity; the first cue that discriminates (one option positive, another
  negative or unknown) decides, and the search stops. With more than two options this is the lexicographic
  order of their cue profiles. No cue discriminates: guess (the first option listed).
- tallying: count each option's positive cues, ignoring validities; the most wins (ties: guess).
- recognition: if exactly one option is recognised, choose it; if several are, take-the-best among them
  (when cues are given); if none is, guess.

Confidence: take-the-best and recognition report the validity of the cue that decided (the share of pairs in
which that cue, when it discriminates, points to the right option); tallying the share of discriminating cue
votes that favour the winner; a guess is 1 / number of options.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from kg.models import Model, Unit
from kg.models.base import new_list
from reasoning.router.methods.base import MethodOutcome, computed
from reasoning.router.methods.fields import distinct, parse_inputs

METHOD = "heuristic"
MAX_OPTIONS = 1_000
MAX_CUES = 100

_Name = Annotated[str, Field(min_length=1, max_length=256)]


class Cue(Model):
    """A binary cue: its validity and each option's value (true, false, or missing: unknown)."""

    name: _Name
    validity: Unit
    values: dict[_Name, bool | None] = Field(default_factory=dict, max_length=MAX_OPTIONS)


class CueInput(Model):
    """``inputs.heuristic`` for the cue-based heuristics."""

    rule: Literal["take-the-best", "tallying", "recognition"] = "take-the-best"
    criterion: Annotated[str, Field(max_length=256)] = "the criterion"
    options: list[_Name] = Field(min_length=2, max_length=MAX_OPTIONS)
    cues: list[Cue] = Field(default_factory=new_list, max_length=MAX_CUES)
    recognized: list[_Name] | None = Field(default=None, max_length=MAX_OPTIONS)
    recognition_validity: Unit | None = None

    @model_validator(mode="after")
    def _consistent(self) -> CueInput:
        known = distinct(self.options, "options")
        for i, cue in enumerate(self.cues):
            for name in cue.values:
                if name not in known:
                    raise ValueError(f"@cues.{i}.values: {name[:80]!r} is not one of the options")
        if self.rule == "recognition" and self.recognized is None:
            raise ValueError("@recognized: the recognition heuristic needs the list of recognised options")
        if self.rule != "recognition" and not self.cues:
            raise ValueError(f"@cues: {self.rule} needs at least one cue")
        return self


def take_the_best(options: list[str], cues: list[Cue]) -> tuple[list[str], Cue | None, list[str]]:
    """The options still best after the first discriminating cue (one, or all when none discriminates), the cue
    that decided, and the trace."""
    alive = list(options)
    trace = []
    for cue in sorted(cues, key=lambda c: -c.validity):  # stable: equal validities keep the given order
        positive = [o for o in alive if cue.values.get(o) is True]
        if positive and len(positive) < len(alive):
            stop = "; stop" if len(positive) == 1 else ""
            trace.append(f"{cue.name} (validity {cue.validity:g}) discriminates: {', '.join(positive)} positive{stop}")
            if len(positive) == 1:
                return positive, cue, trace
            alive = positive
            continue
        trace.append(f"{cue.name} (validity {cue.validity:g}) does not discriminate")
    return alive, None, trace


def tallying(options: list[str], cues: list[Cue]) -> tuple[list[str], dict[str, int], float]:
    """The options with the most positive cues, every option's tally, and the winner's share of the cue votes."""
    tally = {o: sum(1 for c in cues if c.values.get(o) is True) for o in options}
    top = max(tally.values())
    best = [o for o in options if tally[o] == top]
    votes = sum(tally.values())
    return best, tally, (top / votes if votes and len(best) == 1 else 1 / len(best))


def decide(data: Any) -> MethodOutcome:
    """Run the chosen cue heuristic (inputs already known to be cue-based)."""
    h = parse_inputs(CueInput, data, METHOD)
    trace: list[str] = []
    value: dict[str, Any] = {"rule": h.rule, "options": h.options}
    pool, confidence, decided_by = list(h.options), 0.0, None
    if h.rule == "recognition":
        known = set(h.recognized or [])
        pool = [o for o in h.options if o in known]
        trace.append(f"recognised: {', '.join(pool) or 'none'}")
        if len(pool) == 1:
            decided_by, confidence = "recognition", h.recognition_validity if h.recognition_validity is not None \
                else 0.5  # fmt: skip
            trace.append("exactly one option is recognised: choose it; stop")
        pool = pool or list(h.options)
    if h.rule == "tallying":
        pool, value["tally"], confidence = tallying(pool, h.cues)
        decided_by = "tallying" if len(pool) == 1 else None
        trace.append("tally of positive cues: " + ", ".join(f"{o} {n}" for o, n in value["tally"].items()))
    elif decided_by is None and h.cues:
        pool, cue, steps = take_the_best(pool, h.cues)
        trace += steps
        if cue is not None:
            decided_by, confidence = cue.name, cue.validity
    if len(pool) > 1:
        trace.append(f"no cue separates {', '.join(pool)}: guess the first listed")
        confidence, decided_by = 1 / len(pool), decided_by or "guess"
    choice = pool[0]
    value |= {"choice": choice, "decided_by": decided_by, "tied": pool if len(pool) > 1 else []}
    text = f"{choice} has {h.criterion} ({h.rule}: decided by {decided_by})"
    return computed(METHOD, text[:1000], confidence, value, trace=trace)


__all__ = ["METHOD", "Cue", "CueInput", "decide", "take_the_best", "tallying"]
