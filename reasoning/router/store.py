"""Storing a reasoning result, on request, as a memory item or a case.

What a method derived from records takes a scope no wider than the narrowest of its sources
(``used``): records only in ``global`` allow any scope the agent may write; records in one shared
scope (``project:x``) allow that scope or the agent's own; records in its own scope, in several
non-global scopes, or not found, allow only the agent's own scope (``agent:<id>``, the default).
A wider scope is refused with a one-line error and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from kg.errors import InputError
from kg.models import agent_scope
from kg.workspace import Workspace
from reasoning.cases import CaseService
from reasoning.router.methods.base import MethodOutcome

StoreAs = Literal["memory", "case"]


def source_scopes(ws: Workspace, agent_id: str, uids: Sequence[str]) -> dict[str, str | None]:
    """The scope of each used record (None when it is not found among what the agent can read)."""
    readable = ws.scopes.readable(agent_id)
    wanted = list(dict.fromkeys(uids))
    found: dict[str, str] = {}
    found.update({u: f.scope for u, f in ws.ports.facts.get_many(wanted).items()})
    found.update({u: r.scope for u, r in ws.ports.rules.get_many(wanted).items()})
    found.update({u: m.scope for u, m in ws.ports.memory.get_many(wanted).items()})
    if any(u.startswith("C-") for u in wanted):
        found.update({c.uid: c.scope for c in ws.ports.cases.list(scopes=readable) if c.uid in wanted})
    for uid in wanted:
        if uid not in found and uid[:2] in {"B-", "D-", "G-", "I-", "P-", "S-"}:
            try:
                found[uid] = ws.ports.bdi.get(uid).scope
            except Exception:  # noqa: S112 - an unknown node counts as the narrowest scope below
                continue
    return {u: (found.get(u) if found.get(u) in readable else None) for u in wanted}


def allowed_scopes(ws: Workspace, agent_id: str, uids: Sequence[str]) -> list[str]:
    """The scopes a result derived from ``uids`` may be stored in, narrowest first."""
    own = agent_scope(agent_id)
    scopes = set(source_scopes(ws, agent_id, uids).values())
    if None in scopes:
        return [own]
    shared = {s for s in scopes if s != "global"}
    if not shared:
        return [own, *(s for s in ws.scopes.readable(agent_id) if s != own)]
    if len(shared) == 1 and own not in shared:
        return [own, *(s for s in shared if s is not None)]
    return [own]


def store_result(
    ws: Workspace, agent_id: str, problem: str, outcome: MethodOutcome, *, store_as: StoreAs,
    scope: str | None = None, success: bool | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Write ``outcome`` as a memory (type decision) or a case; return ``{kind, uid, scope}``.

    Raises:
        InputError: a scope wider than the sources allow, a prompt result (nothing computed), or a case
            without ``success`` (a case records how the decision turned out).
    """
    if outcome.kind == "llm_prompt":
        raise InputError("store", f"{outcome.method} computed nothing (a prompt); there is no result to store")
    allowed = allowed_scopes(ws, agent_id, outcome.used)
    target = scope or allowed[0]
    if target not in allowed:
        raise InputError("scope", f"{target!r} is wider than the sources of the result allow "
                                  f"({', '.join(allowed)})")  # fmt: skip
    label = f"Reasoning ({outcome.method}, {outcome.kind}): {outcome.conclusion}"
    if store_as == "memory":
        written = ws.memory.store_item(agent_id, f"{label} (confidence {outcome.confidence:.2f})"[:4000],
                                       type="decision", confidence=outcome.confidence, source="reasoning",
                                       tags=["reasoning", outcome.method],
                                       derived_from=[u for u in outcome.used if u[:2] in {"F-", "M-"}][:100],
                                       scope=target)  # fmt: skip
        return {"kind": "memory", "uid": written.item.uid, "scope": target}
    if success is None:
        raise InputError("success", "storing a result as a case needs success true|false (how it turned out)")
    cases = CaseService(ws.ports, ws.scopes, ws.clock, ws.embedder)
    beliefs = [u for u in outcome.used if u.startswith("B-")][:100]
    stored = cases.store_case(agent_id, situation={"beliefs": beliefs, "desires": [], "context": problem[:4000]},
                              solution={"actions": [label[:4000]]},
                              outcome={"success": success, "metrics": {"confidence": outcome.confidence}},
                              scope=target)  # fmt: skip
    return {"kind": "case", "uid": stored.case.uid, "scope": target}


__all__ = ["StoreAs", "allowed_scopes", "source_scopes", "store_result"]
