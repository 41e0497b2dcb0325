"""Deontic reasoning (obligations, permissions, prohibitions, conflicts) and temporal reasoning (Allen's
interval relations, what holds as of a time).

deontic: ``{"norms": [{"id", "modality": "obligation|permission|prohibition", "action", "when": ["S P O", ..],
"priority": 0}], "facts": ["S P O", ..], "actions": [..]}``. A norm applies when every ``when`` fact holds.
Without ``facts`` the agent's facts are the situation. Without ``norms`` the agent's policy rules are the
norms: those firing on its facts (``context`` given as ``{key: value}``), the modality read from the
action's first words (``must not``/``may not``/``never`` -> prohibition, ``may``/``can`` -> permission,
anything else -> obligation). An action both obliged and
forbidden (or permitted and forbidden) is a conflict, resolved by priority, then by specificity (the norm
with more conditions, lex specialis), else left unresolved. Whatever is not forbidden is permitted (weak
permission); an obligation implies permission (axiom D).

temporal: ``{"intervals": {name: [start, end]}, "as_of": t, "pair": [a, b]}`` with numbers or ISO dates
(``end`` null = still open). Without ``intervals`` the agent's facts with a validity interval are the
intervals (optionally only ``subject``/``predicate``). Relations follow Allen (1983), the 13 relations of
two intervals; ``value.holding_at`` lists the intervals containing ``as_of`` (start <= t < end).
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from itertools import combinations
from typing import Annotated, Any, Literal

from pydantic import Field

from kg.models import Model
from kg.models.base import new_list
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.premises import triple

_Text = Annotated[str, Field(min_length=1, max_length=1024)]
MAX_INTERVALS = 10_000  # given, or read from the graph (the first by the store's order)
MAX_PAIRED = 200  # intervals whose pairwise relations are listed: 19,900 pairs
MAX_NORMS = 10_000
MAX_SITUATION = 10_000  # the agent's facts read as the situation when none are given


class Norm(Model):
    """One norm."""

    id: Annotated[str, Field(max_length=256)] = ""
    modality: Literal["obligation", "permission", "prohibition"]
    action: _Text
    when: list[_Text] = Field(default_factory=new_list, max_length=100)
    priority: int = 0


class DeonticInput(Model):
    """``deontic`` inputs with explicit norms."""

    norms: list[Norm] = Field(min_length=1, max_length=MAX_NORMS)
    facts: list[_Text] = Field(default_factory=new_list, max_length=100_000)
    actions: list[_Text] = Field(default_factory=new_list, max_length=10_000)


_PROHIBIT = re.compile(r"^(must not|mustn't|may not|shall not|cannot|never|do not|don't|forbidden to)\s+", re.I)
_PERMIT = re.compile(r"^(may|can|is permitted to|permitted to)\s+", re.I)
_OBLIGE = re.compile(r"^(must|shall|should|is required to|required to|obliged to)\s+", re.I)


def modality_of(action: str) -> tuple[str, str]:
    """(modality, bare action) read from a policy action's wording."""
    for pattern, modality in ((_PROHIBIT, "prohibition"), (_PERMIT, "permission"), (_OBLIGE, "obligation")):
        found = pattern.match(action.strip())
        if found:
            return modality, action.strip()[found.end() :].strip()
    return "obligation", action.strip()


def _norms_from_policies(ctx: MethodContext, inputs: dict[str, Any]) -> tuple[list[Norm], list[str]]:
    context = inputs.get("context", {})
    if not isinstance(context, dict):
        raise fail("deontic", "context", "must be an object {key: value}")
    firings = ctx.reasoner().policies(ctx.agent_id, {str(k): str(v) for k, v in context.items()})
    norms, used = [], []
    for firing in firings:
        modality, action = modality_of(firing.action)
        norms.append(Norm.model_validate({"id": firing.name, "modality": modality, "action": action,
                                          "when": [" ".join(t.key) for t in firing.facts]}))  # fmt: skip
        used += [firing.rule_id, *(t.uid for t in firing.facts if t.uid)]
    return norms, used


def _resolve(a: Norm, b: Norm) -> tuple[Norm | None, str]:
    if a.priority != b.priority:
        return (a if a.priority > b.priority else b), "priority"
    if len(a.when) != len(b.when):
        return (a if len(a.when) > len(b.when) else b), "specificity (lex specialis)"
    return None, "unresolved (same priority and specificity)"


def _statuses(applicable: list[Norm], actions: list[str]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Each action's deontic status and the conflicts met on the way (norms without an id get one)."""
    for i, norm in enumerate(applicable):
        if not norm.id:
            applicable[i] = norm.model_copy(update={"id": f"norm {i + 1}"})
    by_action: dict[str, dict[str, list[Norm]]] = {}
    for norm in applicable:
        by_action.setdefault(norm.action, {}).setdefault(norm.modality, []).append(norm)
    for action in actions:
        by_action.setdefault(action, {})
    status: dict[str, str] = {}
    conflicts = []
    for action, kinds in by_action.items():
        forbid = kinds.get("prohibition", [])
        allow = kinds.get("obligation", []) + kinds.get("permission", [])
        if forbid and allow:
            top_f = max(forbid, key=lambda n: (n.priority, len(n.when)))
            top_a = max(allow, key=lambda n: (n.priority, len(n.when)))
            winner, how = _resolve(top_f, top_a)
            conflicts.append({"action": action, "between": [top_a.id, top_f.id], "resolved_by": how,
                              "winner": winner.id if winner else None})  # fmt: skip
            status[action] = ("unresolved" if winner is None else "forbidden" if winner is top_f
                              else "obliged" if top_a.modality == "obligation" else "permitted")  # fmt: skip
        elif forbid:
            status[action] = "forbidden"
        elif kinds.get("obligation"):
            status[action] = "obliged"
        else:
            status[action] = "permitted" if kinds.get("permission") else "permitted (not forbidden)"
    return status, conflicts


def deontic(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``deontic``."""
    used: list[str] = []
    cut = None
    if "norms" in inputs:
        data = validate(DeonticInput, inputs, "deontic")
        facts = {triple(f, "deontic", f"facts.{i}") for i, f in enumerate(data.facts)}
        if not data.facts:  # the agent's facts are the situation
            known = ctx.facts(limit=MAX_SITUATION)
            if len(known) >= MAX_SITUATION:
                cut = f"read the first {MAX_SITUATION} of the agent's facts as the situation (MAX_SITUATION)"
            facts = {(f.subject, f.predicate, f.object) for f in known}
            used = [f.uid for f in known]
        for i, norm in enumerate(data.norms):
            for j, cond in enumerate(norm.when):
                triple(cond, "deontic", f"norms.{i}.when.{j}")
        applicable = [n for n in data.norms if all(triple(c, "deontic", "when") in facts for c in n.when)]
        actions = data.actions
    elif ctx.workspace is not None:
        applicable, used = _norms_from_policies(ctx, inputs)
        actions = []
        if not applicable:
            raise MissingInputs("deontic", "no policy rule fires on the agent's facts; give inputs.deontic.norms")
    else:
        raise MissingInputs("deontic", "give inputs.deontic.norms (and facts)")
    status, conflicts = _statuses(applicable, actions)
    lists = {"must": sorted(a for a, s in status.items() if s == "obliged"),
             "must not": sorted(a for a, s in status.items() if s == "forbidden"),
             "may": sorted(a for a, s in status.items() if s.startswith("permitted"))}  # fmt: skip
    value = {"status": status, "conflicts": conflicts, "applicable": [n.model_dump() for n in applicable],
             "obligations": lists["must"], "prohibitions": lists["must not"], "permissions": lists["may"]}  # fmt: skip
    parts = [f"{label}: {', '.join(items)}" for label, items in lists.items() if items]
    unresolved = [c for c in conflicts if c["winner"] is None]
    if conflicts:
        parts.append(f"{len(conflicts)} conflict(s), {len(unresolved)} unresolved")
    confidence = 1.0 - len(unresolved) / max(1, len(status))
    trace = [
        f"{len(applicable)} applicable norm(s)",
        *(f"{c['action']}: {c['between'][0]} vs {c['between'][1]} -> {c['resolved_by']}" for c in conflicts),
    ]
    return computed("deontic", "; ".join(parts) or "no norm applies", confidence, value, trace=trace, used=used,
                    partial=cut)  # fmt: skip


# ---------------------------------------------------------------------------------------------- temporal


def allen(a: tuple[float, float], b: tuple[float, float]) -> str:  # noqa: PLR0911 - one return per relation
    """Allen's relation of interval a to interval b (both with start < end; math.inf for an open end)."""
    (a1, a2), (b1, b2) = a, b
    if a2 < b1:
        return "before"
    if b2 < a1:
        return "after"
    if a2 == b1:
        return "meets"
    if b2 == a1:
        return "met-by"
    if a1 == b1 and a2 == b2:
        return "equals"
    if a1 == b1:
        return "starts" if a2 < b2 else "started-by"
    if a2 == b2:
        return "finishes" if a1 > b1 else "finished-by"
    if b1 < a1 and a2 < b2:
        return "during"
    if a1 < b1 and b2 < a2:
        return "contains"
    return "overlaps" if a1 < b1 else "overlapped-by"


def _time(value: Any, path: str) -> float:
    if value is None:
        return math.inf
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            pass
    raise fail("temporal", path, "must be a number or an ISO date/time (null for an open end)")


def _intervals(ctx: MethodContext, inputs: dict[str, Any]) -> tuple[dict[str, tuple[float, float]], list[str],
                                                                  str | None]:  # fmt: skip
    """The intervals of the inputs, else of the agent's facts with a validity interval (their uids, and a sentence
    when the graph held more facts than were read)."""
    used: list[str] = []
    cut = None
    raw = inputs.get("intervals")
    intervals: dict[str, tuple[float, float]] = {}
    if raw is not None:
        if not isinstance(raw, dict):
            raise fail("temporal", "intervals", "must map names to [start, end]")
        if len(raw) > MAX_INTERVALS:
            raise fail("temporal", "intervals", f"at most {MAX_INTERVALS} intervals (MAX_INTERVALS), got {len(raw)}")
        for name, pair in raw.items():
            if not isinstance(pair, list) or len(pair) != 2 or pair[0] is None:
                raise fail("temporal", f"intervals.{name}", "must be [start, end] (end null when open)")
            intervals[name] = (_time(pair[0], f"intervals.{name}.0"), _time(pair[1], f"intervals.{name}.1"))
    else:
        criteria = {k: inputs[k] for k in ("subject", "predicate") if isinstance(inputs.get(k), str)}
        read = ctx.facts(**criteria, limit=MAX_INTERVALS)
        if len(read) >= MAX_INTERVALS:
            cut = f"read the first {MAX_INTERVALS} facts of the graph only (MAX_INTERVALS)"
        for fact in read:
            if fact.valid_from is not None or fact.valid_until is not None:
                start = fact.valid_from.timestamp() if fact.valid_from else -math.inf
                end = fact.valid_until.timestamp() if fact.valid_until else math.inf
                intervals[f"{fact.subject} {fact.predicate} {fact.object}"] = (start, end)
                used.append(fact.uid)
    return intervals, used, cut


def temporal(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``temporal``."""
    intervals, used, cut = _intervals(ctx, inputs)
    if not intervals:
        raise MissingInputs("temporal", "give inputs.temporal.intervals (or facts with valid_from/valid_until)")
    for name, (start, end) in intervals.items():
        if not start < end:
            raise fail("temporal", f"intervals.{name}", "must start before it ends")
    names = sorted(intervals)[:MAX_PAIRED]
    relations = [{"a": a, "b": b, "relation": allen(intervals[a], intervals[b])} for a, b in combinations(names, 2)]
    value: dict[str, Any] = {"relations": relations, "intervals": len(intervals), "paired": len(names)}
    conclusion = f"{len(relations)} interval relation(s) among {len(names)} intervals"
    if len(intervals) > len(names):
        cut = (f"{cut + '; ' if cut else ''}relations computed among the first {MAX_PAIRED} of {len(intervals)} "
               "intervals by name (MAX_PAIRED); "
               "give a pair, or fewer intervals, for the others")  # fmt: skip
        conclusion += f" (of {len(intervals)}: cut at {MAX_PAIRED})"
    pair = inputs.get("pair")
    if pair is not None:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) and p in intervals
                                                                  for p in pair)):  # fmt: skip
            raise fail("temporal", "pair", "must be [a, b] with two known intervals")
        conclusion = f"{pair[0]} {allen(intervals[pair[0]], intervals[pair[1]])} {pair[1]}"
        value["pair_relation"] = allen(intervals[pair[0]], intervals[pair[1]])
    if "as_of" in inputs:
        t = _time(inputs["as_of"], "as_of")
        holding = sorted(n for n, (s, e) in intervals.items() if s <= t < e)
        value["holding_at"] = holding
        conclusion += f"; as of {inputs['as_of']}: {', '.join(holding) or 'nothing'} hold(s)"
    every = "every pair" if cut is None else f"every pair of the first {len(names)} by name"
    return computed("temporal", conclusion[:1000], 1.0, value, used=used, partial=cut,
                    trace=[f"{len(intervals)} intervals", f"Allen relation of {every} (Allen 1983)"])  # fmt: skip


class TemporalInput(Model):
    """``inputs.temporal`` (for the template; the engine reads the same keys)."""

    intervals: dict[_Text, list[float | str | None]] | None = Field(default=None, max_length=MAX_INTERVALS)
    pair: list[_Text] | None = Field(default=None, min_length=2, max_length=2)
    as_of: float | str | None = None
    subject: _Text | None = None
    predicate: _Text | None = None


DOCS = {
    "deontic": MethodDoc(
        confidence="The share of actions whose deontic status is settled: 1 minus the share of actions caught in a "
        "conflict that neither priority nor specificity resolves.",
        bound=f"At most {MAX_NORMS} norms of at most 100 conditions each and 100,000 facts (input limits); the "
        "work is linear in norms x conditions (each condition is a set lookup). From policy rules: the "
        "workspace's rule evaluation bounds apply.",
        inputs=DeonticInput,
        example={
            "norms": [
                {
                    "id": "erasure",
                    "modality": "obligation",
                    "action": "erase data",
                    "when": ["customer requests erasure"],
                },
                {
                    "id": "retention",
                    "modality": "prohibition",
                    "action": "erase data",
                    "when": ["invoice withinRetention yes"],
                    "priority": 1,
                },
            ],
            "facts": ["customer requests erasure", "invoice withinRetention yes"],
        },
        graph=f"without norms: the agent's policy rules firing on its facts; without facts: the agent's first "
        f"{MAX_SITUATION} facts (MAX_SITUATION; more: partial)",
    ),
    "temporal": MethodDoc(
        confidence="1.0: Allen's relation of two intervals and what holds at a time are exact given the endpoints; at "
        "most 0.8 when the pairwise table was cut (partial).",
        bound=f"At most {MAX_INTERVALS} intervals (given: a one-line error past it; from the graph: the first "
        f"{MAX_INTERVALS} facts). Pairwise relations are listed among the first {MAX_PAIRED} intervals by name "
        "(MAX_PAIRED; more: the result is marked partial and says how many were left out); a named pair and "
        "as_of use every interval.",
        inputs=TemporalInput,
        example={
            "intervals": {"design": ["2026-01-01", "2026-02-01"], "build": ["2026-02-01", "2026-04-01"]},
            "pair": ["design", "build"],
            "as_of": "2026-02-15",
        },
        graph="the agent's facts with a validity interval (valid_from / valid_until), optionally of one subject "
        "or predicate",
    ),
}

__all__ = ["DOCS", "allen", "deontic", "modality_of", "temporal"]
