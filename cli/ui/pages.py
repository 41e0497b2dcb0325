"""The data of the overview, facts and memory pages (each also served as JSON under ``/api/...``).

Every function takes the console, the acting agent and the request's query parameters and returns plain JSON
data; the templates render the same dictionaries. Nothing here writes: the recall playground runs recall with
``touch=False`` so trying queries does not change access counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, cast

import click

from cli.common import ISO_DATETIME
from cli.tools.facts import FactList
from cli.tools.memory import MemoryStatus
from cli.ui.context import Console, int_arg, plain, plain_dict, text_arg
from cli.ui.graphview import BDI_KINDS, fact_stats
from cli.ui.review import last_report, typedb_view
from kg.errors import InputError
from kg.recall.fusion_types import ScoreBreakdown

Params = Mapping[str, str]
RECENT = 12


def _datetime(params: Params, name: str) -> Any:
    raw = text_arg(params, name)
    if raw is None:
        return None
    try:
        return ISO_DATETIME.convert(raw, None, None)
    except click.BadParameter:
        rule = f"must be an ISO-8601 date or timestamp (e.g. 2024-05-01T12:00:00Z), got {raw[:40]!r}"
        raise InputError(name, rule) from None


def overview(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """Agents, what this agent can see per store and record type, the outbox, TypeDB, the last nightly report and
    recent activity."""
    ws = console.ws
    memory = cast(MemoryStatus, console.call("memory_status", agent, {}))
    bdi = {kind: len(ws.bdi.list(agent, kind, limit=100_000)) for kind in BDI_KINDS}
    typedb = typedb_view(console, agent)  # outbox counts limited to what the agent may read
    total_facts, newest = fact_stats(console, agent, None, RECENT)
    recent_facts = [ws.facts.get(agent, uid) for uid in newest]
    recent_items = ws.memory.list_items(agent, include_archived=False)[-RECENT:]
    activity = [{"at": f.created_at, "kind": "fact", "uid": f.uid, "text": f"{f.subject} {f.predicate} {f.object}"}
                for f in recent_facts]  # fmt: skip
    activity += [{"at": i.created_at, "kind": f"memory ({i.store.value})", "uid": i.uid, "text": i.content}
                 for i in recent_items]  # fmt: skip
    activity.sort(key=lambda a: (a["at"], a["uid"]), reverse=True)
    return plain_dict({
        "agent_id": agent,
        "agent": ws.agents.get(agent).model_dump(mode="json"),
        "readable_scopes": ws.scopes.readable(agent),
        "counts": {"facts": total_facts, "bdi": bdi,
                   "memory": {k: v.model_dump() for k, v in memory.stores.items()}, "memory_total": memory.total},
        "outbox": typedb.get("outbox", {}),
        "typedb": {k: typedb.get(k) for k in ("configured", "reachable", "address", "message", "error")},
        "last_nightly": last_report(console, agent),
        "activity": activity[:RECENT],
    })  # fmt: skip


def facts(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """``fact_query`` with the CLI's filters; with ``?fact=F-...`` that fact's history timeline and derivation
    tree."""
    arguments: dict[str, Any] = {
        "subject": text_arg(params, "subject"), "predicate": text_arg(params, "predicate"),
        "object": text_arg(params, "object"), "scope": text_arg(params, "scope"),
        "valid_at": _datetime(params, "valid_at"), "as_of": _datetime(params, "as_of"),
        "include_retracted": params.get("include_retracted") in ("1", "on", "true"),
        "only_derived": params.get("only_derived") in ("1", "on", "true"),
        "limit": int_arg(params, "limit", 100, 1, 10_000),
    }  # fmt: skip
    confidence = text_arg(params, "min_confidence")
    if confidence is not None:
        try:
            arguments["min_confidence"] = float(confidence)
        except ValueError:
            raise InputError("min_confidence", f"must be a number 0..1, got {confidence[:40]!r}") from None
    found = cast(FactList, console.call("fact_query", agent, {k: v for k, v in arguments.items() if v is not None}))
    data: dict[str, Any] = {"agent_id": agent, "filters": plain(arguments), "facts": plain(found.facts)}
    chosen = text_arg(params, "fact")
    if chosen is not None:
        data["selected"] = fact_detail(console, agent, chosen)
    return data


def fact_detail(console: Console, agent: str, uid: str) -> dict[str, Any]:
    """One fact: the record, its versions over time (same subject and predicate, retracted ones too) and its
    derivation tree (``fact_explain``)."""
    explanation = console.call("fact_explain", agent, {"fact_id": uid, "depth": 5})
    fact = console.ws.facts.get(agent, uid)
    escaped = {"subject": fact.subject.replace("*", "\\*"), "predicate": fact.predicate.replace("*", "\\*")}
    versions = cast(FactList, console.call("fact_query", agent, {**escaped, "include_retracted": True,
                                                                 "limit": 1000})).facts  # fmt: skip
    timeline = sorted(({"uid": f.uid, "object": f.object, "created_at": f.created_at, "valid_from": f.valid_from,
                        "valid_until": f.valid_until, "retracted_at": f.retracted_at, "current": f.uid == uid}
                       for f in versions), key=lambda v: (v["created_at"], v["uid"]))  # fmt: skip
    return plain_dict({"fact": fact, "timeline": timeline, "explanation": explanation})


def memory(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """Items by store and tier, the daily timeline, and (with ``?q=``) the recall playground's scored hits."""
    ws = console.ws
    store = text_arg(params, "store")
    items = ws.memory.list_items(agent, include_archived=False, limit=int_arg(params, "limit", 500, 1, 100_000),
                                 stores=[store] if store else None)  # fmt: skip
    by_store: dict[str, Counter[str]] = {}
    for item in items:
        by_store.setdefault(item.store.value, Counter())[item.tier.value] += 1
    days = Counter(item.created_at.date().isoformat() for item in items)
    data: dict[str, Any] = {
        "agent_id": agent, "store": store,
        "by_store": {s: dict(c) for s, c in sorted(by_store.items())},
        "timeline": [{"day": d, "count": n} for d, n in sorted(days.items())],
        "items": plain(items[-200:][::-1]),
    }  # fmt: skip
    query = text_arg(params, "q")
    if query is not None:
        data["recall"] = recall(console, agent, query, params)
    return data


#: The score components drawn as bars, from the recall's explanation of each hit.
BARS = ("bm25", "vector", "fusion", "importance", "decay", "mmr")


def recall(console: Console, agent: str, query: str, params: Params) -> dict[str, Any]:
    """Recall as the CLI does (``--explain``), without touching the hits; each hit with its bars (0..1)."""
    mode = text_arg(params, "mode") or "hybrid"
    fusion = text_arg(params, "fusion") or "weighted"
    limit = int_arg(params, "k", 10, 1, 100)
    result = console.ws.memory.recall(agent, query, limit=limit, mode=mode, fusion=fusion,
                                      mmr=params.get("mmr") in ("1", "on", "true"), explain=True,
                                      touch=False)  # fmt: skip
    hits = [
        {"uid": hit.item.uid, "content": hit.item.content, "store": hit.item.store.value, "tier": hit.item.tier.value,
         "score": hit.score, "bars": bars(hit.explain, hit.bm25, hit.vector, hit.importance, hit.decay)}
        for hit in result.hits
    ]  # fmt: skip
    return plain_dict({"query": query, "mode": result.mode, "fusion": result.fusion, "mmr": result.mmr,
                  "notes": result.notes, "fallback": result.fallback, "reason": result.reason,
                  "hits": hits})  # fmt: skip


def bars(
    explain: ScoreBreakdown | None, bm25: float, vector: float, importance: float, decay: float
) -> dict[str, float]:
    """The six bars of one hit: normalised BM25 and vector scores, the fused score, importance, the decay boost
    and the MMR penalty (from the explanation when there is one)."""
    if explain is None:
        return {"bm25": bm25, "vector": vector, "fusion": 0.0, "importance": importance, "decay": decay, "mmr": 0.0}
    return {"bm25": explain.bm25_norm, "vector": explain.vector_norm, "fusion": explain.fused,
            "importance": explain.importance, "decay": explain.decay_boost, "mmr": explain.mmr_penalty}  # fmt: skip


__all__ = ["BARS", "bars", "fact_detail", "facts", "memory", "overview", "recall"]
