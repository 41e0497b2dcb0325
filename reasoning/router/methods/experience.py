"""Engines of the experience methods: satisficing, pattern-recognition, and (from :mod:`.recognition`)
case-based, heuristic and naturalistic.

Satisficing (Simon 1955; ``inputs.satisficing``)::

    {"options": [{"name": "A", "attributes": {"price": 120, "rating": 4.1}}, ...],   # in the order considered
     "aspirations": {"price": {"max": 150}, "rating": {"min": 4}}}

``value.choice`` is the first option meeting every aspiration level (null if none does) and
``value.checked`` the options looked at, each with the aspirations it failed: the search stops at
the first acceptable option, as a satisficer does. A missing or non-numeric attribute fails its
aspiration. Without ``options`` the agent's facts are the options: every subject with a visible fact
whose predicate is an aspiration's attribute (``supplierA price 140``), considered in the order of
its first such fact (or of ``subjects``, which also restricts them); the facts read are in ``used``.

Pattern recognition (``inputs.pattern-recognition``): frequent itemsets and association rules
(Apriori, Agrawal & Srikant 1994, through efficient-apriori) over ``transactions`` (lists of items),
or, without them, over the agent's graph: ``"source": "facts"`` (default) makes one transaction per
subject of the visible live facts, its items ``predicate=object``; ``"source": "memories"`` one per
visible memory item, its items ``type=<type>`` and ``tag=<tag>``. ``min_support`` (share of
transactions, default 0.1, and at least 2 transactions), ``min_confidence`` (default 0.7),
``max_length`` (default 3) and ``top`` (default 20) shape the output.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from kg.models import MAX_LIST, MemoryQuery, Model, Unit
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import input_error, parse_inputs
from reasoning.router.methods.mining import affordable_length
from reasoning.router.methods.recognition import DOCS as RECOGNITION_DOCS
from reasoning.router.methods.recognition import ENGINES as RECOGNITION
from reasoning.rules import parse_number

SATISFICING = "satisficing"
_CUT = "\x00cut"  # key of the attributes whose facts were cut at MAX_GRAPH_RECORDS
PATTERNS = "pattern-recognition"
MAX_TRANSACTIONS = 100_000
MAX_GRAPH_RECORDS = 20_000
MAX_ITEMSET_WORK = 100_000  # itemsets and rules Apriori may count and build (see .mining)

_Name = Annotated[str, Field(min_length=1, max_length=256)]
_Number = Annotated[float, Field(allow_inf_nan=False)]


# ----------------------------------------------------------------------------------------------
# satisficing
# ----------------------------------------------------------------------------------------------


class Option(Model):
    """One option and its attribute values."""

    name: _Name
    attributes: dict[_Name, Any] = Field(default_factory=dict)


class Aspiration(Model):
    """The least (``min``) and/or most (``max``) acceptable value of an attribute."""

    min: _Number | None = None
    max: _Number | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> Aspiration:
        if self.min is None and self.max is None:
            raise ValueError("@min: give min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("@min: must not be greater than max")
        return self


class SatisficingInput(Model):
    """Inputs of ``satisficing`` (without ``options``, they are read from the facts)."""

    options: list[Option] | None = Field(default=None, min_length=1, max_length=MAX_LIST)
    aspirations: dict[_Name, Aspiration] = Field(min_length=1, max_length=1_000)
    subjects: list[_Name] | None = Field(default=None, min_length=1, max_length=MAX_LIST)


def _failures(option: Option, aspirations: dict[str, Aspiration]) -> list[str]:
    failed = []
    for attr, level in aspirations.items():
        raw = option.attributes.get(attr)
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            failed.append(f"{attr} missing" if raw is None else f"{attr} is not a number")
        elif level.min is not None and raw < level.min:
            failed.append(f"{attr} {raw:g} < min {level.min:g}")
        elif level.max is not None and raw > level.max:
            failed.append(f"{attr} {raw:g} > max {level.max:g}")
    return failed


def satisfice(data: Any) -> dict[str, Any]:
    """``value``: ``choice`` (first acceptable option or None), ``checked`` (with failures), ``considered``."""
    s = data if isinstance(data, SatisficingInput) else parse_inputs(SatisficingInput, data, SATISFICING)
    if s.options is None:
        raise input_error(SATISFICING, ["options"], "is required here (the graph is read only by the engine)")
    checked = []
    for option in s.options:
        failed = _failures(option, s.aspirations)
        checked.append({"name": option.name, "acceptable": not failed, "failed": failed})
        if not failed:
            return {"choice": option.name, "checked": checked, "considered": len(checked), "total": len(s.options)}
    return {"choice": None, "checked": checked, "considered": len(checked), "total": len(s.options)}


def options_from_facts(ctx: MethodContext, s: SatisficingInput) -> tuple[list[Option], dict[str, list[str]]]:
    """Options from the visible facts: every subject with a fact on an aspiration's attribute (a number
    where the object reads as one), in the order of its first such fact, or in ``subjects`` order."""
    attributes: dict[str, dict[str, Any]] = defaultdict(dict)
    first: dict[str, tuple[Any, str]] = {}
    uids: dict[str, list[str]] = defaultdict(list)
    for attr in s.aspirations:
        read = ctx.facts(predicate=attr, limit=MAX_GRAPH_RECORDS)
        if len(read) >= MAX_GRAPH_RECORDS:
            uids[_CUT].append(attr)
        for f in read:
            number = parse_number(f.object)
            attributes[f.subject][attr] = f.object if number is None else number
            uids[f.subject].append(f.uid)
            first[f.subject] = min(first.get(f.subject, (f.created_at, f.uid)), (f.created_at, f.uid))
    names = [n for n in s.subjects if n in attributes] if s.subjects else sorted(first, key=lambda n: first[n])
    names = [n for n in names if n != _CUT]
    return [Option(name=n[:256], attributes=attributes[n]) for n in names], uids


def satisficing(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """The first option that meets every aspiration level."""
    if not inputs:
        raise MissingInputs(SATISFICING, "give inputs.satisficing.aspirations (and options, or facts to read)")
    s = parse_inputs(SatisficingInput, inputs, SATISFICING)
    uids: dict[str, list[str]] = {}
    origin = "the given options"
    if s.options is None:
        options, uids = options_from_facts(ctx, s)
        if not options:
            raise MissingInputs(SATISFICING, "give inputs.satisficing.options (no visible facts have the aspirations' "
                                             "attributes as predicates)")  # fmt: skip
        s = s.model_copy(update={"options": options})
        origin = "the subjects of the visible facts on the aspirations' attributes, first asserted first"
    value = satisfice(s)
    used = [uid for c in value["checked"] for uid in uids.get(c["name"], []) if c["name"] != _CUT]
    cut = None
    if uids.get(_CUT):
        cut = (f"read the first {MAX_GRAPH_RECORDS} facts of {', '.join(uids[_CUT])} only (MAX_GRAPH_RECORDS): an "
               "earlier acceptable option may have been left out")  # fmt: skip
    trace = [f"options from {origin}"]
    trace += [f"{c['name']}: " + ("meets every aspiration: stop" if c["acceptable"] else "; ".join(c["failed"]))
              for c in value["checked"]]  # fmt: skip
    if value["choice"] is None:
        note = "lower an aspiration level or look for more options"
        return computed(SATISFICING, f"no option meets every aspiration ({value['total']} checked)", 1.0, value,
                        trace=trace, used=used, notes=[note], partial=cut)  # fmt: skip
    text = f"choose {value['choice']} (option {value['considered']} of {value['total']} considered)"
    return computed(SATISFICING, text, 1.0, value, trace=trace, used=used, partial=cut)


# ----------------------------------------------------------------------------------------------
# pattern recognition
# ----------------------------------------------------------------------------------------------


class PatternInput(Model):
    """Inputs of ``pattern-recognition``."""

    transactions: list[list[_Name]] | None = Field(default=None, min_length=1, max_length=MAX_TRANSACTIONS)
    source: Literal["facts", "memories"] = "facts"
    min_support: Annotated[float, Field(gt=0.0, le=1.0, allow_inf_nan=False)] = 0.1
    min_confidence: Unit = 0.7
    max_length: int = Field(default=3, ge=1, le=6)
    top: int = Field(default=20, ge=1, le=1_000)


def _from_graph(ctx: MethodContext, source: str) -> tuple[list[tuple[str, ...]], dict[str, list[str]], list[str]]:
    """Transactions from the visible facts or memories, and the uids behind each item."""
    baskets: dict[str, set[str]] = defaultdict(set)
    uids: dict[str, list[str]] = defaultdict(list)
    notes = []
    if source == "facts":
        for f in ctx.facts(limit=MAX_GRAPH_RECORDS):
            item = f"{f.predicate}={f.object}"
            baskets[f.subject].add(item)
            uids[item].append(f.uid)
        count = sum(len(v) for v in uids.values())
    else:
        ws = ctx.workspace
        items = [] if ws is None else ws.ports.memory.list(
            MemoryQuery(scopes=ws.scopes.readable(ctx.agent_id), limit=MAX_GRAPH_RECORDS))  # fmt: skip
        for m in items:
            for item in (f"type={m.type.value}", *(f"tag={t}" for t in m.tags)):
                baskets[m.uid].add(item)
                uids[item].append(m.uid)
        count = len(items)
    if count >= MAX_GRAPH_RECORDS:
        notes.append(f"read the first {MAX_GRAPH_RECORDS} {source} only (MAX_GRAPH_RECORDS)")
    return [tuple(sorted(b)) for _, b in sorted(baskets.items())], uids, notes


def mine(transactions: list[tuple[str, ...]], p: PatternInput) -> dict[str, Any]:
    """Frequent itemsets (support ≥ max(min_support, 2 transactions)) and association rules; ``length`` is the
    itemset length searched (lower than ``max_length`` when the work bound cut it)."""
    n = len(transactions)
    support = max(p.min_support, 2 / n) if n >= 2 else 1.0
    length = affordable_length(transactions, p.max_length, MAX_ITEMSET_WORK, math.ceil(support * n))
    from efficient_apriori import apriori  # noqa: PLC0415 - it imports importlib.metadata: only when mining

    itemsets, rules = apriori(transactions, min_support=support, min_confidence=p.min_confidence,
                              max_length=length)  # fmt: skip
    found = [(items, count) for size in itemsets.values() for items, count in size.items()]
    found.sort(key=lambda pair: (-pair[1], -len(pair[0]), pair[0]))
    patterns = [{"items": list(items), "count": count, "support": round(count / n, 6)}
                for items, count in found if len(items) >= 2][: p.top]  # fmt: skip
    frequent = [{"item": items[0], "count": count, "support": round(count / n, 6)}
                for items, count in found if len(items) == 1][: p.top]  # fmt: skip
    ordered = sorted(rules, key=lambda r: (-r.confidence, -r.lift, -r.support, r.lhs, r.rhs))
    shown = [{"if": list(r.lhs), "then": list(r.rhs), "confidence": round(r.confidence, 6),
              "support": round(r.support, 6), "lift": round(r.lift, 6)} for r in ordered[: p.top]]  # fmt: skip
    return {"transactions": n, "min_support": round(support, 6), "patterns": patterns, "frequent_items": frequent,
            "rules": shown, "length": length}  # fmt: skip


def pattern_recognition(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Frequent patterns and association rules in transactions, the agent's facts or its memories."""
    p = parse_inputs(PatternInput, inputs, PATTERNS)
    used: list[str] = []
    notes: list[str] = []
    if p.transactions is not None:
        transactions = [tuple(sorted(set(t))) for t in p.transactions]
        origin = "the given transactions"
    else:
        transactions, uids, notes = _from_graph(ctx, p.source)
        origin = f"the visible {p.source} (one transaction per {'subject' if p.source == 'facts' else 'item'})"
    if len(transactions) < 2:
        found = "" if p.transactions is not None else f"; fewer than 2 found in the {p.source}"
        raise MissingInputs(PATTERNS, f"give inputs.pattern-recognition.transactions (at least 2){found}")
    value = mine(transactions, p)
    if p.transactions is None:
        named = {i for pat in value["patterns"] for i in pat["items"]} | {r for x in value["rules"] for r in x["if"]}
        used = [uid for item in sorted(named) for uid in uids.get(item, [])]
    trace = [f"{value['transactions']} transaction(s) from {origin}",
             f"Apriori at support ≥ {value['min_support']:g}, confidence ≥ {p.min_confidence:g}, "
             f"itemsets up to {p.max_length}: {len(value['patterns'])} pattern(s), "
             f"{len(value['rules'])} rule(s)"]  # fmt: skip
    if value["rules"]:
        r = value["rules"][0]
        rule = f"{{{', '.join(r['if'])}}} -> {{{', '.join(r['then'])}}}"
        text = f"strongest rule {rule} (confidence {r['confidence']:.3g})"
        confidence = r["confidence"]
    elif value["patterns"]:
        top = value["patterns"][0]
        text = f"most frequent pattern {{{', '.join(top['items'])}}} (support {top['support']:.3g})"
        confidence = top["support"]
    else:
        text, confidence = "no pattern reaches the support threshold", 0.0
    cuts = [n for n in notes if n.startswith("read the first")]
    if value["length"] < p.max_length:
        cuts.append(f"itemsets searched up to length {value['length']}, not {p.max_length}: longer ones would count "
                    f"more than {MAX_ITEMSET_WORK} units of itemset and rule work (MAX_ITEMSET_WORK)")  # fmt: skip
    return computed(PATTERNS, text, confidence, value, trace=trace, used=used,
                    notes=[n for n in notes if n not in cuts], partial="; ".join(cuts) or None)  # fmt: skip


ENGINES: dict[str, Engine] = {SATISFICING: satisficing, PATTERNS: pattern_recognition, **RECOGNITION}

DOCS = {
    SATISFICING: MethodDoc(
        confidence="1.0: whether an option meets the aspiration levels is exact; the choice is the first acceptable "
        "option, not the best one (that is what satisficing means). At most 0.8 when the options read "
        "from the graph were cut (partial).",
        bound=f"At most {MAX_LIST} options and 1,000 aspirations given, linear in options x aspirations; from the "
        f"graph at most {MAX_GRAPH_RECORDS} facts per attribute (MAX_GRAPH_RECORDS; more: partial).",
        inputs=SatisficingInput,
        example={
            "options": [
                {"name": "A", "attributes": {"price": 180, "rating": 4.5}},
                {"name": "B", "attributes": {"price": 120, "rating": 4.1}},
            ],
            "aspirations": {"price": {"max": 150}, "rating": {"min": 4}},
        },
        graph="without options: every subject with a visible fact whose predicate is an aspiration's attribute",
    ),
    PATTERNS: MethodDoc(
        confidence="The confidence of the strongest association rule (P(then | if) over the transactions), else "
        "the support of the most frequent pattern; 0 when nothing reaches the thresholds.",
        bound=f"At most {MAX_TRANSACTIONS} transactions given, or {MAX_GRAPH_RECORDS} facts or memories read "
        f"(MAX_GRAPH_RECORDS; more: partial). Apriori counts itemsets up to max_length; past "
        f"{MAX_ITEMSET_WORK} units of itemset and rule work (MAX_ITEMSET_WORK) the length is lowered until they fit, "
        "and the result is marked partial.",
        inputs=PatternInput,
        example={
            "transactions": [
                ["bread", "milk"],
                ["bread", "butter", "milk"],
                ["bread", "butter"],
                ["milk", "butter", "bread"],
            ],
            "min_support": 0.5,
        },
        graph="without transactions: one per subject of the visible facts (predicate=object items), or one per "
        "visible memory item (source: memories)",
    ),
    **RECOGNITION_DOCS,
}

__all__ = ["DOCS", "ENGINES", "PatternInput", "SatisficingInput", "mine", "satisfice"]
