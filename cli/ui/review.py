"""The data of the ontology, reasoning, conversation and sync pages, and the console's two actions.

The only writes the console makes are :func:`approve` (``ontology_merge_approved``) and :func:`reject` (the
service call ``mabos ontology reject`` makes), both as the acting agent. An agent has the right to review a
proposal when it may write the proposal's scope (the scope rule every write follows); the page shows the buttons
only then, and the services check again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from rdflib import RDFS, URIRef

from cli.tools.ontology import ProposalList, service
from cli.ui.context import Console, int_arg, plain, text_arg
from kg.errors import InputError, MabosError, NotFoundError, ScopeError
from kg.models import OntologyProposal, ProposalStatus
from kg.models.conversation import MessageQuery
from kg.ontology.files import compact
from kg.ontology.proposals import OPEN, OntologyService
from kg.workspace import STATE_DIR
from reasoning.router.catalogue import list_methods
from sync.nightly import REPORTS_DIR, NightlyReport

Params = Mapping[str, str]


# ------------------------------------------------------------------------------------------------ ontology


def may_review(console: Console, agent: str, proposal: OntologyProposal) -> bool:
    """Whether ``agent`` may approve or reject ``proposal``: it is open and the agent may write its scope."""
    if proposal.status not in OPEN:
        return False
    try:
        console.ws.scopes.check_write(agent, proposal.scope)
    except MabosError:
        return False
    return True


def ontology_service(console: Console) -> OntologyService:
    """The ontology service the tools use, kept for the console's life (it keeps parsed files by content hash)."""
    return console.keep("ontology", lambda: service(console.tools))


def hierarchy(console: Console) -> dict[str, Any]:
    """Classes as a tree (``rdfs:subClassOf``) and properties with their domain and range, compact ids."""
    active = ontology_service(console).active()
    graph, prefixes = active.graph, active.prefixes

    def name(iri: Any) -> str:
        return compact(str(iri), prefixes)

    classes = sorted(iri for iri, kind in active.kinds.items() if kind == "class")
    parents = {name(c): sorted(name(p) for p in graph.objects(c, RDFS.subClassOf) if isinstance(p, URIRef))
               for c in classes}  # fmt: skip
    children: dict[str, list[str]] = {}
    for child, ups in parents.items():
        for parent in ups or [""]:
            children.setdefault(parent if parent in parents else "", []).append(child)
    properties = [{"id": name(iri), "kind": kind, "domain": [name(d) for d in graph.objects(iri, RDFS.domain)],
                   "range": [name(r) for r in graph.objects(iri, RDFS.range)]}
                  for iri, kind in sorted(active.kinds.items()) if kind != "class"]  # fmt: skip
    return {"roots": sorted(children.get("", [])), "children": {k: sorted(v) for k, v in children.items() if k},
            "properties": properties, "files": sorted(active.files)}  # fmt: skip


def ontology(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """The hierarchy, the proposals the agent can read by status, and (``?proposal=``) one proposal's validation
    report and diff."""
    status = text_arg(params, "status")
    found = cast(ProposalList, console.call("ontology_list_proposals", agent, {"status": status, "limit": 10_000}))
    by_status: dict[str, list[dict[str, Any]]] = {s.value: [] for s in ProposalStatus}
    for proposal in found.proposals:
        row = proposal.model_dump(mode="json")
        row["may_review"] = may_review(console, agent, proposal)
        by_status[proposal.status.value].append(row)
    data: dict[str, Any] = {"agent_id": agent, "status": status, "hierarchy": hierarchy(console),
                            "proposals": by_status}  # fmt: skip
    chosen = text_arg(params, "proposal")
    if chosen is not None:
        data["selected"] = proposal_detail(console, agent, chosen)
    return data


def proposal_detail(console: Console, agent: str, uid: str) -> dict[str, Any]:
    """A proposal the agent can read, its last validation report and the diff a merge would make now."""
    proposal = _visible(console, agent, uid)
    try:
        diff = ontology_service(console).diff(uid, agent)
    except MabosError as exc:
        diff = f"(no diff: {exc})"
    return {"proposal": proposal.model_dump(mode="json"), "may_review": may_review(console, agent, proposal),
            "diff": diff}  # fmt: skip


def approve(console: Console, agent: str, uid: str) -> dict[str, Any]:
    """Merge a validated proposal as ``agent`` (re-validated by the service first)."""
    _require_review(console, agent, uid)
    merged = console.call("ontology_merge_approved", agent, {"uid": uid})
    return {"done": "merged", "proposal": merged.model_dump(mode="json")}


def reject(console: Console, agent: str, uid: str, reason: str) -> dict[str, Any]:
    """Reject a proposal as ``agent``, recording why."""
    _require_review(console, agent, uid)
    rejected = ontology_service(console).reject(uid, agent, reason)
    return {"done": "rejected", "proposal": rejected.model_dump(mode="json")}


def _require_review(console: Console, agent: str, uid: str) -> None:
    proposal = _visible(console, agent, uid)
    if not may_review(console, agent, proposal):
        raise ScopeError(f"proposal: {agent!r} may not review {uid!r} (status {proposal.status.value}; needs an open "
                         "proposal in a scope the agent may write)")  # fmt: skip


def _visible(console: Console, agent: str, uid: str) -> OntologyProposal:
    proposal = ontology_service(console).get(uid)
    if proposal.scope not in console.ws.scopes.readable(agent):
        raise NotFoundError(f"proposal: no proposal {uid!r} visible to {agent!r}")
    return proposal


# ------------------------------------------------------------------------------------------------ reasoning


def reasoning(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """The reasoning page as a GET shows it: the methods and the forms, computing nothing (a run is a POST with the
    CSRF token, :func:`run_reasoning`, so no other site's page can make the console work)."""
    data: dict[str, Any] = {"agent_id": agent, "methods": [{"id": m.id, "name": m.name} for m in list_methods()]}
    if text_arg(params, "run") is not None:
        data["not_run"] = "press the button to run it (a run is a POST: GET never computes)"
    return data


def run_reasoning(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """A backward proof or abduction (``subject, predicate, object``) or a router run (``problem, method``); the
    methods bound their own work (docs/reasoning-methods.md) and the request has the console's deadline."""
    data: dict[str, Any] = {"agent_id": agent, "methods": [{"id": m.id, "name": m.name} for m in list_methods()]}
    action = text_arg(params, "run")
    triple = {k: text_arg(params, k) or "" for k in ("subject", "predicate", "object")}
    if action in ("backward", "abduce"):
        for key, value in triple.items():
            if not value:
                raise InputError(key, "required (a term or ?variable)")
        if action == "backward":
            depth = int_arg(params, "max_depth", 5, 1, 10)
            data["proof"] = plain(console.call("infer_backward", agent, {**triple, "max_depth": depth}))
        else:
            data["hypotheses"] = plain(console.call("infer_abductive", agent, {**triple, "limit": 20}))
    elif action == "router":
        arguments = {"problem": text_arg(params, "problem") or "", "method": text_arg(params, "method")}
        data["router"] = plain(console.call("reason", agent, {k: v for k, v in arguments.items() if v}))
    else:
        raise InputError("run", "must be backward, abduce or router")
    return data


# ------------------------------------------------------------------------------------------------ conversation


#: Messages per page of the conversation page.
MESSAGES_PAGE = 50


def conversation(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """The agent's sessions; with ``?session=`` its messages (``MESSAGES_PAGE`` a page from ``?from=SEQ``) and its
    summary DAG; with ``?summary=`` that summary expanded to its messages (``lcm_expand``)."""
    ws = console.ws
    sessions = [c.model_dump(mode="json") for c in ws.ports.conversations.list(agent)]
    data: dict[str, Any] = {"agent_id": agent, "sessions": sessions}
    key = text_arg(params, "session")
    if key is not None:
        found = ws.conversations.conversation(agent, key)
        summaries = ws.ports.summaries.list(found.uid)
        start = int_arg(params, "from", 0, 0, 2**62)
        page = ws.ports.conversations.messages(MessageQuery(conversation_uid=found.uid, from_seq=start,
                                                            limit=MESSAGES_PAGE + 1))  # fmt: skip
        shown = page[:MESSAGES_PAGE]
        data["session"] = {"conversation": found.model_dump(mode="json"),
                           "summaries": [s.model_dump(mode="json") for s in summaries],
                           "messages": [m.model_dump(mode="json") for m in shown], "from": start,
                           "next": page[MESSAGES_PAGE].seq if len(page) > MESSAGES_PAGE else None,
                           "previous": max(0, start - MESSAGES_PAGE) if start > 0 else None}  # fmt: skip
    summary = text_arg(params, "summary")
    if summary is not None:
        arguments = {"summary_uid": summary, "include_messages": True, "max_depth": 10}
        data["expanded"] = plain(console.call("lcm_expand", agent, arguments))
    return data


# ------------------------------------------------------------------------------------------------ sync


def reports_dir(console: Console) -> Path:
    """Where the nightly job writes its reports (and ``mabos graph render`` its pictures)."""
    return console.path / STATE_DIR / REPORTS_DIR


def _report_view(report: NightlyReport, agent: str) -> dict[str, Any]:
    """A report as an agent may see it: the run and its steps; per-agent details only for this agent."""
    steps = []
    for step in report.steps:
        own = step.details.get("agents", {}).get(agent) if isinstance(step.details.get("agents"), dict) else None
        steps.append({"name": step.name, "status": step.status.value, "duration_s": step.duration_s, "mine": own})
    return {"date": report.date, "started_at": report.started_at.isoformat(), "duration_s": report.duration_s,
            "exit_code": report.exit_code, "failed": report.failed, "steps": steps,
            "included": agent in report.agents}  # fmt: skip


def reports(console: Console, agent: str, limit: int = 10) -> list[dict[str, Any]]:
    """The newest nightly reports, newest first."""
    found = []
    for path in sorted(reports_dir(console).glob("nightly-*.json"), reverse=True)[:limit]:
        try:
            report = NightlyReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
        found.append(_report_view(report, agent))
    return found


def last_report(console: Console, agent: str) -> dict[str, Any] | None:
    """The newest nightly report, or None."""
    found = reports(console, agent, limit=1)
    return found[0] if found else None


def outbox_counts(console: Console, agent: str) -> dict[str, int]:
    """Pending and acknowledged outbox events the agent may see (in scopes it reads, or its own unscoped ones):
    the tool's counts cover every agent, and how much the others wrote is not this agent's to know."""
    return console.ws.ports.outbox.counts(scopes=sorted(console.ws.scopes.readable(agent)), agent_id=agent)


def typedb_view(console: Console, agent: str) -> dict[str, Any]:
    """``typedb_status`` as the agent may see it: the outbox counts limited to what it may read."""
    status: dict[str, Any] = console.call("typedb_status", agent, {}).model_dump(mode="json")
    status["outbox"] = outbox_counts(console, agent)
    return status


def sync(console: Console, agent: str, params: Params) -> dict[str, Any]:
    """Outbox events in scopes the agent can read, the replay status (``typedb_status``, its counts limited to those
    events) and nightly reports."""
    readable = set(console.ws.scopes.readable(agent))
    limit = int_arg(params, "limit", 200, 1, 5000)
    events = [e.model_dump(mode="json", exclude={"payload"}) for e in console.ws.ports.outbox.pending(limit=limit)
              if e.scope in readable or (e.scope is None and e.agent_id == agent)]  # fmt: skip
    status = typedb_view(console, agent)
    pictures = sorted(p.name for p in reports_dir(console).glob(f"graph-{agent}.*"))
    return {"agent_id": agent, "events": events, "status": status, "reports": reports(console, agent),
            "pictures": pictures}  # fmt: skip


__all__ = [
    "approve",
    "conversation",
    "hierarchy",
    "last_report",
    "may_review",
    "ontology",
    "outbox_counts",
    "proposal_detail",
    "reasoning",
    "reject",
    "reports",
    "reports_dir",
    "run_reasoning",
    "sync",
    "typedb_view",
]
