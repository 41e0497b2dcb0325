"""Scope isolation (issue 10, part 4): agent ``a`` never reads agent ``b``'s private scope, through any door.

Agent ``b`` fills its private scope ``agent:b`` with every kind of record (memories, facts, a derived fact,
rules of the three kinds, a case, the six BDI node kinds and their links, a conversation with summaries, an
ontology proposal) and every file it writes (daily log, checkpoint, time hierarchy, materialized files, BDI
conflict report). Each carries a marker token starting with ``zqxb``. Then ``a`` runs *probes* aimed at that
data (``b``'s uids, ``b``'s content words, ``b``'s subjects, ``b``'s session key, ``scope="agent:b"``):

* every tool of :data:`cli.tools.REGISTRY` through :func:`cli.tools.run` (the Python API);
* the same probes through the MCP server in-process, bound to ``a`` and unbound with ``agent_id="a"``;
* the ``mabos`` CLI commands that read for an agent (including those that are not tools: ``belief list
  --owner b``, ``graph path``, ``graph relations``, ``memory export``, ``rule export``);
* recall on every path: hybrid, bm25 and vector over items (real all-MiniLM-L6-v2 model), the Markdown files
  (``source=files``), the corrupt-store file fallback and the unusable-vector-index fallback.

A *leak* is a ``zqxb`` marker, or a uid of ``b``'s private records that the probe did not itself pass in,
anywhere in the probe's result or error, serialized to JSON. Echoes of the probe's own arguments (a whole JSON
string equal to an argument, e.g. ``"query": "zqxbmem1"``) are not leaks. Every read probe is also run as
``b`` once to count how many of them do reach ``b``'s data (the probes are aimed, not blank shots).

Then: grants work (grant, ``b`` writes to ``project:x``, ``a`` sees it; revoke, ``a`` no longer does), the
global scope is shared, and every write into a shared scope names its agent (facts' ``agent_id`` and
``updated_by``, memory ``agent_id``, BDI ``updated_by``, the outbox event's ``agent_id``).

The default run executes the full probe set (it takes ~25 s, most of it loading the embedding model once);
``MABOS_SLOW=1 pytest -m slow`` adds :func:`test_probes_repeat_over_many_agents`, which repeats the registry
sweep for several victim agents. Figures: docs/reliability-isolation.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from click.testing import CliRunner
from mcp import Client
from mcp_types import CallToolResult, TextContent

import kg
from cli import tools
from cli.main import cli
from cli.tools.mcp_server import ToolServer
from kg.errors import MabosError
from kg.ids import new_id
from kg.memory.materialize import materialize
from kg.models.conversation import MessageQuery, Summary, SummaryKind, SummaryMethod
from kg.workspace import DB_FILE, STATE_DIR, Workspace
from reasoning.service import RuleService

A, B = "a", "b"
MARK = "zqxb"  # every private record of b carries a token starting with this
SHARED_MARK = "zqxg"  # b's global records: a must see these (the positive control)
REPORT = os.environ.get("MABOS_ISOLATION_REPORT")  # a path: write the figures there as JSON

# ------------------------------------------------------------------------------------------ the world


@dataclass
class World:
    """The populated workspace and b's private uids by name."""

    path: Path
    private: dict[str, str] = field(default_factory=dict)
    shared: dict[str, str] = field(default_factory=dict)

    #: Private uids that a shared record names (the global derived fact's derived_from and rule_id): b published
    #: the references, not the records; a seeing these ids is expected, their content stays hidden.
    referenced: set[str] = field(default_factory=set)

    @property
    def private_uids(self) -> set[str]:
        return set(self.private.values()) - self.referenced


def _dialogue(marker: str, n: int = 24) -> str:
    rows = [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": f"Turn {i}: the {marker}conv budget for the kestrel project is {1000 + i} euros, "
                    f"keep the {marker}secret{i} between us."}
        for i in range(n)
    ]  # fmt: skip
    return "\n".join(json.dumps(r) for r in rows)


def populate(ws: Workspace, victim: str = B, mark: str = MARK) -> World:
    """Give ``victim`` private data of every kind (each with a ``mark`` token), ``a`` its own data, and
    ``victim`` a few global records (``zqxg`` tokens) a must see."""
    world = World(ws.path)
    p = world.private
    ctx = tools.ToolContext(workspace_obj=ws)

    def run(agent: str, name: str, **args: Any) -> Any:
        return tools.run(ctx, name, {"agent_id": agent, **args})

    # ---- the victim's private scope
    p["mem1"] = ws.memory.store_item(victim, f"Initech salary negotiation kestrel {mark}mem1", type="decision").item.uid
    p["mem2"] = ws.memory.store_item(victim, f"The launch codes are hidden under the blue lamp {mark}mem2",
                                     tags=[f"{mark}tag"], store="long_term", importance=0.95).item.uid  # fmt: skip
    p["mem3"] = ws.memory.store_item(victim, f"Working note about the Lisbon offsite {mark}mem3",
                                     store="working").item.uid  # fmt: skip
    f1, _ = ws.facts.assert_fact(victim, f"{mark}acct", "hasBalance", f"{mark}bal9000", confidence=0.9)
    f2, _ = ws.facts.assert_fact(victim, "acme", "hasRevenue", f"{mark}rev")
    f3, _ = ws.facts.assert_fact(victim, "globex", "hasIndustry", "saas")  # same triple as a's, private copy
    p["fact1"], p["fact2"], p["fact3"] = f1.uid, f2.uid, f3.uid
    rules = RuleService(ws.ports, ws.scopes, ws.clock)
    rule = rules.create(victim, name=f"{mark}rule", conditions=[{"subject": "?x", "predicate": "hasIndustry",
                        "object": "saas"}], conclusion={"subject": "?x", "predicate": f"{mark}concl",
                        "object": "true"})  # fmt: skip
    p["rule"] = rule.uid
    p["constraint"] = rules.create(victim, name=f"{mark}constraint", type="constraint",
                                   violation_message=f"?x {mark}violation",
                                   conditions=[{"subject": "?x", "predicate": "hasIndustry",
                                                "object": "saas"}]).uid  # fmt: skip
    p["policy"] = rules.create(victim, name=f"{mark}policy", type="policy", action=f"{mark}action", escalate=True,
                               conditions=[{"subject": "context", "predicate": "amount", "object": "10",
                                            "operator": "gt"}]).uid  # fmt: skip
    derived, _ = ws.facts.assert_fact(victim, f"{mark}acct", "isVip", f"{mark}vip", derived_from=[f1.uid],
                                      rule_id=rule.uid)  # fmt: skip
    p["derived"] = derived.uid
    case = run(victim, "cbr_store", situation={"beliefs": [f"{mark}casebelief"], "desires": [f"{mark}casedesire"],
               "context": f"{mark}casectx kestrel offsite planning"}, solution={"actions": [f"{mark}caseaction"]},
               outcome={"success": True, "lessons": [f"{mark}lesson"]})  # fmt: skip
    p["case"] = case.case.uid
    past = ws.clock.now() - timedelta(days=30)
    belief = ws.bdi.add("belief", victim, f"Acme revenue is falling {mark}bel", certainty=0.9)
    desire = ws.bdi.add("desire", victim, f"Win the kestrel deal {mark}des", priority=9)
    goal = ws.bdi.add("goal", victim, f"Close kestrel {mark}goal", priority=8, progress=0.0,
                      deadline=ws.clock.now() + timedelta(days=1))  # fmt: skip
    intention = ws.bdi.add("intention", victim, f"Call the kestrel buyer {mark}int", deadline=past)
    plan = ws.bdi.add("plan", victim, f"Kestrel outreach {mark}plan")
    step1 = ws.bdi.add("step", victim, f"Draft kestrel offer {mark}step1", sequence=1)
    step2 = ws.bdi.add("step", victim, f"Send kestrel offer {mark}step2", sequence=2)
    for name, node in (("belief", belief), ("desire", desire), ("goal", goal), ("intention", intention),
                       ("plan", plan), ("step1", step1), ("step2", step2)):  # fmt: skip
        p[name] = node.uid
    for relation, src, dst in (("belief-supports-goal", belief, goal), ("desire-motivates-goal", desire, goal),
                               ("goal-requires-plan", goal, plan), ("plan-contains-step", plan, step1),
                               ("plan-contains-step", plan, step2), ("step-depends-on", step2, step1)):  # fmt: skip
        p[f"rel-{relation}-{dst.uid}"] = ws.bdi.link(victim, relation, src.uid, dst.uid).uid
    ingested = ws.conversations.ingest(victim, f"{mark}session", _dialogue(mark))
    p["conversation"] = ingested.conversation_uid
    ws.conversations.compact(victim, f"{mark}session", force=True)
    first = ws.ports.conversations.messages(MessageQuery(conversation_uid=ingested.conversation_uid, to_seq=1))
    p["message0"] = first[0].uid
    if not ws.ports.summaries.roots(ingested.conversation_uid):  # short dialogue: the fresh tail keeps it whole
        ws.ports.summaries.add(Summary(
            uid=new_id("summary"), agent_id=victim, conversation_uid=ingested.conversation_uid,
            kind=SummaryKind.LEAF, depth=0, content=f"The {mark}summary of the kestrel budget talk.", token_count=12,
            source_token_count=sum(m.token_count for m in first), method=SummaryMethod.EXTRACTIVE,
            child_uids=[m.uid for m in first], earliest_at=first[0].created_at, latest_at=first[-1].created_at,
            descendant_count=len(first), created_at=ws.clock.now(),
        ))  # fmt: skip
    for i, summary in enumerate(ws.ports.summaries.roots(ingested.conversation_uid)):
        p[f"summary{i}"] = summary.uid
    proposal = run(victim, "ontology_propose_concept", domain="sbvr-business", node_type="class",
                   node_id=f"{mark.capitalize()}Widget", label=f"{mark.capitalize()} Widget",
                   parent_class="biz:Partner", sbvr_definition=f"a {mark}def widget sold in kestrel bundles",
                   scope=agent_scope(victim))  # fmt: skip
    p["proposal"] = proposal.uid
    run(victim, "memory_checkpoint", context=f"{mark}checkpoint kestrel", decisions=[f"{mark}decision"])
    run(victim, "memory_build_hierarchy")
    run(victim, "bdi_cycle")
    materialize(ws, victim)
    # ---- the victim's global records: shared, a must see them
    world.shared["gmem"] = ws.memory.store_item(victim, f"Shared handbook: refunds take 30 days {SHARED_MARK}mem",
                                                scope="global").item.uid  # fmt: skip
    world.shared["gfact"] = ws.facts.assert_fact(victim, "acme", "hasHq", f"{SHARED_MARK}lisbon",
                                                 scope="global")[0].uid  # fmt: skip
    # a global fact derived from a private one: visible, its private support is not
    world.shared["gderived"] = ws.facts.assert_fact(victim, "acme", "isPartner", "yes", scope="global",
                                                    derived_from=[f2.uid], rule_id=rule.uid)[0].uid  # fmt: skip
    world.referenced = {f2.uid, rule.uid}
    # ---- a's own data (no marker): enough that a's probes have something to return
    ws.memory.store_item(A, "Initech salary review for Alice, kestrel budget approved", type="decision")
    ws.memory.store_item(A, "Lisbon offsite hotel is booked")
    ws.facts.assert_fact(A, "globex", "hasIndustry", "saas")
    ws.facts.assert_fact(A, "acme", "hasRevenue", "$50000")
    a_belief = ws.bdi.add("belief", A, "Acme revenue is rising", certainty=0.9)
    a_goal = ws.bdi.add("goal", A, "Grow Acme revenue", progress=0.0, deadline=ws.clock.now() + timedelta(days=1))
    ws.bdi.link(A, "belief-supports-goal", a_belief.uid, a_goal.uid)
    ws.conversations.ingest(A, "asession", _dialogue("plain"))
    return world


def agent_scope(agent: str) -> str:
    return f"agent:{agent}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One populated workspace for the probe sweeps (probes never write b's data: checked at the end)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MABOS_EMBEDDER", raising=False)  # the real model: the vector paths must run
        mp.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
        mp.setenv("HF_HUB_OFFLINE", "1")
        ws = kg.init_workspace(tmp_path_factory.mktemp("isolation") / "ws")
        ws.agents.add(A)
        ws.agents.add(B)
        built = populate(ws)
        ws.close()
        yield built


# ------------------------------------------------------------------------------------------ leak detection


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def leaks(output: str, args: dict[str, Any], private_uids: set[str], mark: str = MARK) -> list[str]:
    """What in ``output`` (JSON text, or an error message) reveals the victim's private data."""
    passed = set(_strings(args))
    passed |= {word.strip("()?,*") for s in list(passed) for word in s.split()}  # reformatted echoes: "(s, p, o)"
    text = output
    for s in sorted((s for s in passed if len(s) >= 4), key=len, reverse=True):  # echoes are not leaks
        for form in (s, json.dumps(s)[1:-1], json.dumps(json.dumps(s)[1:-1])[1:-1]):
            text = text.replace(form, "")
    found = []
    lowered = text.lower()
    if mark in lowered:
        at = lowered.index(mark)
        found.append(f"marker: ...{text[max(0, at - 80) : at + 40]}...")
    found += [f"uid {u}" for u in private_uids if u in text and not any(u in s for s in passed)]
    return found


def serialize(value: Any) -> str:
    if hasattr(value, "model_dump"):
        return json.dumps(value.model_dump(mode="json"), sort_keys=True)
    return json.dumps(value, sort_keys=True, default=str)


@dataclass
class Tally:
    """Probes run and leaks found, per surface."""

    probes: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    found: list[str] = field(default_factory=list)

    def record(self, surface: str, label: str, output: str, args: dict[str, Any], private: set[str], *,
               error: bool, mark: str = MARK) -> None:  # fmt: skip
        self.probes[surface] = self.probes.get(surface, 0) + 1
        if error:
            self.refused[surface] = self.refused.get(surface, 0) + 1
        self.found += [f"{surface} {label} {args}: {leak}" for leak in leaks(output, args, private, mark)]


TALLY = Tally()
AIMED: dict[str, int] = {}
COVERAGE: dict[str, str] = {}

# ------------------------------------------------------------------------------------------ the probes

#: Tools whose output is only what the call itself wrote (or workspace-wide status): probed with arguments aimed
#: at b's data (b's scope, b's uids) to check they are refused or act on a's own records only.
WRITE_ONLY = frozenset({
    "memory_store_item", "fact_assert", "fact_import", "fact_retract", "rule_create", "rule_import", "rule_toggle",
    "rule_delete", "bdi_add", "bdi_update", "graph_link", "conversation_ingest", "conversation_compact", "cbr_store",
    "memory_admit", "ontology_reject_proposal", "memory_materialize", "memory_export", "memory_import",
    "ontology_propose_concept", "ontology_merge_approved", "ontology_scaffold_domain", "memory_build_hierarchy",
    "typedb_sync_schema", "typedb_sync_agent_data",
})  # fmt: skip


def read_probes(w: World, victim: str = B, mark: str = MARK) -> list[tuple[str, dict[str, Any]]]:
    """(tool, arguments) aimed at the victim's private data; the acting agent is added by the surface."""
    p = w.private
    own = agent_scope(victim)
    out: list[tuple[str, dict[str, Any]]] = []
    queries = [f"{mark}mem1", "Initech salary negotiation kestrel", "launch codes hidden under the blue lamp", ""]
    for mode in ("hybrid", "bm25", "vector"):
        out += [("memory_recall", {"query": q, "mode": mode, "limit": 100, "include_archived": True}) for q in queries]
        out += [("memory_recall", {"query": q, "mode": mode, "source": "files"}) for q in queries[:3]]
    out += [
        ("memory_recall", {"query": "kestrel", "depth": 3, "mmr": True, "explain": True}),
        ("memory_recall", {"query": "kestrel", "fusion": "rrf", "tags": [f"{mark}tag"]}),
        ("memory_recall", {"query": "kestrel", "scope": own}),
        ("memory_recall", {"query": "kestrel", "stores": ["working", "long_term"], "types": ["decision"]}),
        ("memory_hierarchy_search", {"query": "kestrel"}),
        *[
            ("memory_hierarchy_search", {"query": f"{mark}mem1 kestrel", "level": lv})
            for lv in ("daily", "weekly", "monthly", "quarterly")
        ],
        ("memory_list", {}),
        ("memory_list", {"store": "long_term", "include_archived": True, "limit": 100_000}),
        ("memory_list", {"type": "decision", "since": "2000-01-01T00:00:00Z"}),
        ("memory_list", {"category": "events"}),
        ("bdi_list", {}),
        ("bdi_list", {"owner": victim, "limit": 100_000}),
        ("bdi_list", {"scope": own}),
        *[("bdi_list", {"kind": kind}) for kind in ("belief", "desire", "goal", "intention", "plan", "step")],
        ("bdi_list", {"kind": "plan_step", "status": "pending"}),
        *[("graph_relations", {"uid": p[k]}) for k in ("belief", "goal", "plan", "step1", "step2")],
        ("graph_path", {"kinds": ["belief", "goal", "plan", "step"], "limit": 10_000}),
        ("graph_path", {"kinds": ["goal", "plan"], "start_uid": p["goal"]}),
        ("graph_path", {"kinds": ["step", "step"], "relation": "step-depends-on"}),
        ("graph_path", {"kinds": ["desire"]}),
        ("memory_checkpoint", {"show_latest": True}),
        ("memory_status", {}),
        ("memory_consolidate", {"dry_run": True, "min_importance": 0.0, "min_access_count": 0}),
        ("fact_query", {"subject": f"{mark}acct"}),
        ("fact_query", {"subject": "*", "include_retracted": True, "limit": 100_000}),
        ("fact_query", {"object": f"{mark}*"}),
        ("fact_query", {"predicate": "hasBalance"}),
        ("fact_query", {"only_derived": True}),
        ("fact_query", {"subject": "acme", "as_of": "2999-01-01T00:00:00Z"}),
        ("fact_query", {"scope": own}),
        *[("fact_explain", {"fact_id": p[k], "depth": 10}) for k in ("fact1", "derived", "fact2")],
        ("fact_explain", {"fact_id": w.shared["gderived"], "depth": 10}),
        ("graph_query", {"name": "goals-behind", "tolerance": 0.0, "at": "2999-01-01T00:00:00Z"}),
        ("graph_query", {"name": "paths"}),
        ("graph_query", {"name": "paths", "start": "desire", "to": "step", "max_depth": 50}),
        ("graph_query", {"name": "paths", "start": p["belief"], "to": "step"}),
        ("graph_query", {"name": "paths", "start": "goal", "to": p["step2"]}),
        ("graph_query", {"name": "belief-conflicts", "min_certainty": 0.0}),
        ("graph_query", {"name": "belief-holders", "subject": "acme revenue", "match": "contains"}),
        ("graph_query", {"name": "belief-holders", "subject": "acme revenue"}),
        ("graph_query", {"name": "belief-holders", "subject": f"{mark}bel", "match": "contains"}),
        ("graph_query", {"name": "blocked-steps"}),
        *[("graph_query", {"name": "lineage", "uid": p[k], "max_depth": 50}) for k in ("fact1", "derived", "mem1")],
        ("graph_query", {"name": "lineage", "uid": w.shared["gderived"]}),
        ("bdi_cycle", {}),
        ("cbr_retrieve", {"beliefs": [f"{mark}casebelief"], "desires": [f"{mark}casedesire"], "k": 100}),
        ("cbr_retrieve", {"context": "kestrel offsite planning", "k": 100}),
        ("cbr_retrieve", {"beliefs": [p["belief"]], "desires": [p["desire"]], "k": 100}),
        ("reason", {"method": "deductive", "inputs": {"deductive": {"goal": f"globex {mark}concl true"}}}),
        ("reason", {"method": "deductive", "inputs": {"deductive": {"goal": f"{mark}acct isVip ?y"}}}),
        ("reason", {"method": "deductive", "problem": "what follows from the facts?"}),
        ("reason", {"method": "abductive", "inputs": {"abductive": {"observation": f"globex {mark}concl true"}}}),
        (
            "reason",
            {
                "method": "case_based",
                "inputs": {"case_based": {"beliefs": [f"{mark}casebelief"], "context": "kestrel offsite"}},
            },
        ),
        ("reason", {"problem": "Should we raise the kestrel budget?", "top": 3}),
        ("rule_list", {}),
        ("rule_list", {"type": "policy"}),
        ("rule_export", {}),
        ("rule_export", {"format": "yaml"}),
        ("constraint_check", {}),
        ("policy_eval", {"context": {"amount": "100"}}),
        ("infer_forward", {}),
        ("infer_backward", {"subject": "?x", "predicate": f"{mark}concl", "object": "true"}),
        ("infer_backward", {"subject": f"{mark}acct", "predicate": "isVip", "object": "?y"}),
        ("infer_backward", {"subject": f"{mark}acct", "predicate": "hasBalance", "object": "?y"}),
        ("infer_abductive", {"subject": "globex", "predicate": f"{mark}concl", "object": "true"}),
        ("knowledge_explain", {"question": f"Is globex {mark}concl?"}),
        ("knowledge_explain", {"question": f"What is the balance of {mark}acct?"}),
        ("lcm_grep", {"pattern": f"{mark}secret"}),
        ("lcm_grep", {"pattern": "(?i)kestrel", "limit": 10_000}),
        ("lcm_grep", {"pattern": "kestrel budget", "mode": "full_text", "scope": "summaries"}),
        ("lcm_grep", {"pattern": "kestrel", "session_key": f"{mark}session"}),
        ("context_assemble", {"session_key": f"{mark}session", "budget": 100_000}),
        ("context_assemble", {"session_key": f"{mark}session", "window": 100_000, "prompt": "kestrel"}),
        ("ontology_list_proposals", {}),
        ("ontology_list_proposals", {"domain": "sbvr-business", "limit": 1000}),
        ("ontology_validate_proposal", {"uid": p["proposal"]}),
        ("ontology_diff", {"uid": p["proposal"]}),
        ("ontology_check", {}),
        ("ontology_to_typeql", {}),
        ("reason_owl_rl", {"dry_run": True, "limit": 100_000}),
        # the reference engine reads the same facts (one selection for both engines) at ~100x the cost: long run only
        *([("reason_owl_rl", {"dry_run": True, "engine": "owlrl"})] if SLOW else []),
        ("typedb_status", {}),
        ("typedb_query", {"query": "match $x isa fact;"}),
    ]
    for key in sorted(k for k in p if k.startswith("summary")):
        out += [("lcm_describe", {"summary_uid": p[key]}),
                ("lcm_expand", {"summary_uid": p[key], "include_messages": True, "max_depth": 64})]  # fmt: skip
    return out


_NT = "<urn:planted> <urn:by> <urn:a> .\n"  # fact_import's probe: one triple


def _rule_documents(w: World, victim: str) -> list[tuple[str, dict[str, Any]]]:
    """rule_import's probes: rules that name the victim's scope, owner and an existing rule uid of theirs."""
    planted = {
        "name": "planted-import",
        "conditions": [{"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
        "conclusion": {"subject": "?x", "predicate": "plantedImport", "object": "yes"},
        "scope": agent_scope(victim),
        "agent_id": victim,
        "uid": w.private["rule"],
    }
    as_yaml = yaml.safe_dump({"rules": [{**planted, "name": "planted-yaml"}]})
    return [
        ("rule_import", {"document": json.dumps([planted]), "format": "json"}),
        ("rule_import", {"document": as_yaml, "format": "yaml"}),
    ]


def write_probes(w: World, victim: str = B, mark: str = MARK) -> list[tuple[str, dict[str, Any]]]:
    """Writes aimed at the victim's data: each is refused or acts on a's own records only."""
    p = w.private
    own = agent_scope(victim)
    return [
        ("memory_store_item", {"content": "planted by a", "scope": own}),
        ("fact_assert", {"subject": "planted", "predicate": "by", "object": "a", "scope": own}),
        ("fact_import", {"documents": [{"name": "p.nt", "format": "nt", "content": _NT}], "scope": own}),
        ("fact_retract", {"fact_ids": [p["fact1"], p["fact2"], p["fact3"], p["derived"]]}),
        ("fact_retract", {"subject": f"{mark}acct"}),
        ("fact_retract", {"predicate": "hasBalance"}),
        ("fact_retract", {"subject": "globex", "scope": own}),
        (
            "rule_create",
            {"name": "planted", "conditions": ["?x hasIndustry saas"], "conclusion": "?x planted yes", "scope": own},
        ),
        *_rule_documents(w, victim),
        *[("rule_toggle", {"rule_id": p[k], "enabled": False}) for k in ("rule", "constraint", "policy")],
        *[("rule_delete", {"rule_id": p[k]}) for k in ("rule", "constraint", "policy")],
        ("bdi_add", {"kind": "belief", "content": "planted by a", "scope": own}),
        ("bdi_add", {"kind": "goal", "content": "planted goal", "scope": own, "priority": 9}),
        *[
            ("bdi_update", {"uid": p[k], "content": "overwritten by a"})
            for k in ("belief", "desire", "goal", "intention", "plan", "step1", "step2")
        ],
        ("bdi_update", {"uid": p["goal"], "status": "abandoned", "progress": 1.0}),
        ("graph_link", {"relation": "belief-supports-goal", "source_uid": p["belief"], "target_uid": p["goal"]}),
        (
            "graph_link",
            {"relation": "step-depends-on", "source_uid": p["step1"], "target_uid": p["step2"], "scope": own},
        ),
        (
            "cbr_store",
            {
                "situation": {"beliefs": ["x"]},
                "solution": {"actions": ["y"]},
                "outcome": {"success": False},
                "scope": own,
            },
        ),
        (
            "cbr_store",
            {
                "situation": {"beliefs": ["overwrite"]},
                "solution": {"actions": ["y"]},
                "outcome": {"success": False},
                "uid": p["case"],
            },
        ),
        (
            "ontology_propose_concept",
            {
                "domain": "sbvr-business",
                "node_type": "class",
                "node_id": "PlantedThing",
                "label": "Planted Thing",
                "parent_class": "biz:Partner",
                "sbvr_definition": "a planted thing",
                "scope": own,
            },
        ),
        ("ontology_merge_approved", {"uid": p["proposal"]}),
        ("ontology_reject_proposal", {"uid": p["proposal"], "reason": "rejected by a"}),
        ("ontology_scaffold_domain", {"template": "saas", "domain": "probe-saas"}),
        ("memory_extract", {"session": f"{mark}session", "extractor": "deterministic", "since": 0}),
        ("memory_extract", {"session": p["conversation"], "extractor": "deterministic"}),
        ("memory_extract", {"extractor": "deterministic"}),
        ("memory_admit", {"candidates": [{"content": "planted by a", "scope": own}], "preset": "off"}),
        (
            "memory_admit",
            {"candidates": [{"content": "Initech salary negotiation kestrel", "type": "decision"}], "preset": "off"},
        ),
        (
            "memory_admit",
            {"candidates": [{"content": "The launch codes are hidden under the blue lamp"}], "dry_run": True},
        ),
        ("reason_owl_rl", {"limit": 100_000}),
        ("memory_materialize", {}),
        ("memory_export", {}),
        ("memory_import", {}),
        ("memory_export", {"kind": "beliefs"}),
        ("memory_import", {"kind": "beliefs"}),
        ("memory_checkpoint", {"context": "a's own checkpoint"}),
        ("memory_build_hierarchy", {}),
        ("memory_consolidate", {"min_importance": 0.0, "min_access_count": 0}),
        ("infer_forward", {"persist": True}),
        ("bdi_cycle", {"all_agents": True}),
        ("typedb_sync_schema", {}),
        ("typedb_sync_agent_data", {}),
        # last: a's own new session under b's session key (a different conversation; b's is untouched)
        ("conversation_compact", {"session_key": f"{mark}session", "force": True}),
        ("conversation_compact", {"session_key": p["conversation"]}),
        ("conversation_ingest", {"session_key": f"{mark}session", "messages": [{"role": "user", "content": "hi"}]}),
        ("conversation_ingest", {"session_key": f"{mark}session", "jsonl": '{"role": "user", "content": "again"}'}),
        ("conversation_compact", {"session_key": f"{mark}session", "budget": 1}),
    ]


def private_rows(path: Path, victim: str = B) -> dict[str, list[Any]]:
    """Every row of the victim's private scope and conversations (read-only connection)."""
    conn = sqlite3.connect(f"file:{path / STATE_DIR / DB_FILE}?mode=ro", uri=True)
    try:
        out: dict[str, list[Any]] = {}
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            if "scope" in columns:
                where, args = "scope = ?", (agent_scope(victim),)
            elif table in ("conversations",):
                where, args = "agent_id = ?", (victim,)
            else:
                continue
            keep = [c for c in columns if c not in ("access_count", "accessed_at")]
            rows = conn.execute(f'SELECT {", ".join(keep)} FROM "{table}" WHERE {where}', args).fetchall()
            out[table] = sorted(repr(r) for r in rows)
        for table, sql in (("messages", "SELECT m.* FROM messages m JOIN conversations c ON c.uid = "
                                        "m.conversation_uid WHERE c.agent_id = ?"),
                           ("summaries", "SELECT s.* FROM summaries s JOIN conversations c ON c.uid = "
                                         "s.conversation_uid WHERE c.agent_id = ?")):  # fmt: skip
            with contextlib.suppress(sqlite3.OperationalError):
                out[table] = sorted(repr(r) for r in conn.execute(sql, (victim,)).fetchall())
        return out
    finally:
        conn.close()


# ------------------------------------------------------------------------------------------ surfaces


def run_registry(ctx: tools.ToolContext, name: str, args: dict[str, Any]) -> tuple[str, bool]:
    """Run one tool; its output as JSON, or its error message (and whether it was an error)."""
    try:
        return serialize(tools.run(ctx, name, args)), False
    except MabosError as exc:
        return f"{type(exc).__name__}: {exc}", True


def mcp_text(result: CallToolResult) -> str:
    text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
    return serialize({"structured": result.structured_content, "text": text})


def run_mcp(server: ToolServer, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool]]:
    """Call each tool through the MCP client in-process; (serialized result, is_error) per call."""
    out: list[tuple[str, bool]] = []

    async def main() -> None:
        with anyio.fail_after(600):
            async with Client(server.server, mode="legacy") as client:
                for name, args in calls:
                    result = await client.call_tool(name, args)
                    out.append((mcp_text(result), bool(result.is_error)))

    anyio.run(main)
    return out


# ------------------------------------------------------------------------------------------ tests


SLOW = os.environ.get("MABOS_SLOW") == "1"


def _sweep(w: World, tally: Tally, *, victim: str = B, mark: str = MARK, full: bool = SLOW) -> None:
    """Every read probe, the write probes, then every read probe again (after the writes: nothing a wrote may carry
    b's data), on the registry and both MCP servers; the re-read runs on the registry only unless ``full``."""
    reads, writes = read_probes(w, victim, mark), write_probes(w, victim, mark)
    private = w.private_uids
    covered = {name for name, _ in reads + writes}
    assert covered == set(tools.REGISTRY), f"tools without a probe: {sorted(set(tools.REGISTRY) - covered)}"
    ws = kg.open_workspace(w.path)
    with contextlib.ExitStack() as stack:
        stack.callback(ws.close)
        before = private_rows(w.path, victim)
        api = tools.ToolContext(workspace_obj=ws)
        bound = ToolServer(tools.ToolContext(workspace_obj=ws, agent=A))
        unbound = ToolServer(tools.ToolContext(workspace_obj=ws))
        # one worker pool for both servers: a worker takes the acting agent with each call (the bound server's agent,
        # or None with agent_id in the arguments), so the calls run exactly as on two pools, and the embedding model
        # loads in one worker process instead of two (~3 s each); the calls are sequential, so the pool's per-agent
        # limits never come into play
        unbound.pool.close()
        unbound.pool = bound.pool
        stack.callback(bound.close)
        for n, phase in enumerate((reads, writes, reads)):
            for name, args in phase:
                output, error = run_registry(api, name, {"agent_id": A, **args})
                tally.record("python-api", name, output, args, private, error=error, mark=mark)
            if n == 2 and not full:
                break
            for (name, args), (output, error) in zip(phase, run_mcp(bound, phase), strict=True):
                tally.record("mcp-bound", name, output, args, private, error=error, mark=mark)
            as_a = [(name, {"agent_id": A, **args}) for name, args in phase]
            for (name, args), (output, error) in zip(phase, run_mcp(unbound, as_a), strict=True):
                tally.record("mcp-unbound", name, output, args, private, error=error, mark=mark)
        assert private_rows(w.path, victim) == before, "a probe changed the victim's private records"


def test_no_tool_leaks_private_data_on_any_surface(world: World) -> None:
    """Every tool, as a, through the Python API, an MCP server bound to a and an unbound one with agent_id=a."""
    _sweep(world, TALLY)
    for name in tools.REGISTRY:
        COVERAGE[name] = "write-only (aimed writes)" if name in WRITE_ONLY else "read (aimed reads)"
    assert TALLY.found == [], "\n".join(TALLY.found[:20])
    assert sum(TALLY.probes.values()) > 400


def test_the_read_probes_are_aimed_at_real_data(world: World) -> None:
    """Run as b, the owner, most read probes surface b's markers: the probes would see a leak."""
    ws = kg.open_workspace(world.path)
    try:
        ctx = tools.ToolContext(workspace_obj=ws)
        hits = 0
        probes = read_probes(world)
        for name, args in probes:
            output, _ = run_registry(ctx, name, {"agent_id": B, **args})
            hits += bool(leaks(output, args, set()))
        AIMED.update(probes=len(probes), reach_private_data_as_owner=hits)
        assert hits >= len(probes) * 0.6, f"only {hits} of {len(probes)} probes reach b's data as b"
    finally:
        ws.close()


def test_the_operator_view_is_not_an_agent_view(world: World) -> None:
    """Without an agent (operator) graph_query sees b's data: so its agent-bound answers above are really filtered;
    a server bound to a refuses the operator-only forms."""
    ws = kg.open_workspace(world.path)
    try:
        op = tools.run(tools.ToolContext(workspace_obj=ws), "graph_query", {"name": "paths"})
        assert MARK in serialize(op)
        bound = tools.ToolContext(workspace_obj=ws, agent=A)
        for name, args in (("typedb_query", {"query": "match $x isa fact;"}), ("bdi_cycle", {"all_agents": True}),
                           ("memory_recall", {"agent_id": B, "query": "kestrel"})):  # fmt: skip
            with pytest.raises(MabosError):
                tools.run(bound, name, args)
    finally:
        ws.close()


CLI_PROBES: list[list[str]] = [
    ["memory", "recall", "kestrel", "--mode", "hybrid", "--include-archived", "--limit", "100"],
    ["memory", "recall", "launch codes blue lamp", "--mode", "vector"],
    ["memory", "recall", "{MARK}mem1", "--mode", "bm25"],
    ["memory", "recall", "kestrel", "--source", "files"],
    ["memory", "recall", "kestrel", "--scope", "agent:b"],
    ["memory", "status"],
    ["memory", "export", "--kind", "all"],
    ["memory", "hierarchy", "search", "kestrel", "--level", "daily"],
    ["fact", "query", "--subject", "*", "--include-retracted"],
    ["fact", "query", "--scope", "agent:b"],
    ["fact", "explain", "{derived}"],
    *[
        [kind, "list", "--owner", "b", "--limit", "1000"]
        for kind in ("belief", "desire", "goal", "intention", "plan", "step")
    ],
    ["belief", "list", "--scope", "agent:b"],
    ["belief", "update", "{belief}", "--content", "overwritten by a"],
    ["graph", "path", "belief", "goal", "plan", "step"],
    ["graph", "path", "goal", "plan", "--from", "{goal}"],
    ["graph", "relations", "{goal}"],
    ["graph", "link", "belief-supports-goal", "{belief}", "{goal}"],
    ["graph", "query", "paths"],
    ["graph", "query", "lineage", "{derived}"],
    ["graph", "query", "belief-holders", "acme revenue", "--match", "contains"],
    ["graph", "query", "belief-conflicts", "--min-certainty", "0"],
    ["graph", "query", "blocked-steps"],
    ["graph", "query", "goals-behind", "--at", "2999-01-01T00:00:00Z"],
    ["rule", "list"],
    ["rule", "export"],
    ["rule", "delete", "{rule}"],
    ["constraint", "check"],
    ["policy", "eval", "--context", "amount=100"],
    ["infer", "forward"],
    ["infer", "backward", "?x", "{MARK}concl", "true"],
    ["infer", "abduce", "globex", "{MARK}concl", "true"],
    ["knowledge", "explain", "Is globex {MARK}concl?"],
    ["cbr", "retrieve", "--beliefs", "{MARK}casebelief", "--context", "kestrel offsite planning"],
    ["lcm", "grep", "kestrel"],
    ["lcm", "describe", "{summary0}"],
    ["lcm", "expand", "{summary0}", "--include-messages"],
    ["conversation", "assemble", "--session", "{MARK}session", "--budget", "100000"],
    ["conversation", "compact", "--session", "{MARK}session"],
    ["reason", "run", "--method", "deductive", "--goal", "globex {MARK}concl true"],
    ["memory", "materialize"],
    ["bdi", "cycle"],
]


def test_no_cli_command_leaks_private_data(world: World) -> None:
    """The ``mabos`` commands that act for an agent, run as ``--agent a --json`` with arguments aimed at b."""
    runner = CliRunner()
    private = world.private_uids
    before = private_rows(world.path)
    values = {"MARK": MARK, **world.private}
    for argv in CLI_PROBES:
        args = [a.format(**values) for a in argv]
        result = runner.invoke(cli, ["--workspace", str(world.path), *args, "--agent", A, "--json"],
                               env={"MABOS_TYPEDB_ADDRESS": None, "HF_HUB_OFFLINE": "1"})  # fmt: skip
        assert result.exit_code in (0, 1), f"{args}: exit {result.exit_code}\n{result.output}\n{result.exception}"
        passed = {f"a{i}": a for i, a in enumerate(args)}
        TALLY.record("cli", " ".join(argv[:2]), result.stdout + result.stderr, passed, private,
                     error=result.exit_code != 0)  # fmt: skip
    assert private_rows(world.path) == before
    assert [f for f in TALLY.found if f.startswith("cli")] == []


def test_files_a_can_read_hold_nothing_of_b(world: World) -> None:
    """Everything under agents/a/ (what source=files and the fallback search) is free of b's markers."""
    files = 0
    for path in sorted((world.path / "agents" / A).rglob("*")):
        if path.is_file():
            files += 1
            text = path.read_text(encoding="utf-8", errors="replace")
            TALLY.record("files", path.name, serialize(text), {}, world.private_uids, error=False)
    assert [f for f in TALLY.found if f.startswith("files")] == []
    assert files >= 3


def test_recall_fallbacks_keep_agents_apart(world: World, tmp_path: Path) -> None:
    """The corrupt-store fallback (API, bound MCP, CLI) and the unusable-vector-index fallback answer from a's
    files only; b's files answer b (the fallback is live, not empty)."""
    copy = tmp_path / "corrupt"
    shutil.copytree(world.path, copy)
    db = copy / STATE_DIR / DB_FILE
    for extra in (db.with_name(DB_FILE + "-wal"), db.with_name(DB_FILE + "-shm")):
        extra.unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    queries = [f"{MARK}mem1", "Initech salary negotiation kestrel", "launch codes blue lamp", "kestrel"]
    for query in queries:
        for mode in ("hybrid", "bm25", "vector"):
            args = {"query": query, "mode": mode}
            result = tools.call("memory_recall", workspace=copy, agent_id=A, **args)
            assert result.fallback is True  # type: ignore[attr-defined]
            TALLY.record("fallback-corrupt", "api", serialize(result), args, world.private_uids, error=False)
            bound = tools.call("memory_recall", workspace=copy, agent=A, **args)
            TALLY.record("fallback-corrupt", "bound", serialize(bound), args, world.private_uids, error=False)
        cli_out = CliRunner().invoke(cli, ["--workspace", str(copy), "memory", "recall", query, "--agent", A,
                                           "--json"], env={"HF_HUB_OFFLINE": "1"})  # fmt: skip
        TALLY.record("fallback-corrupt", "cli", cli_out.stdout + cli_out.stderr, {"q": query}, world.private_uids,
                     error=cli_out.exit_code != 0)  # fmt: skip
    server = ToolServer(tools.ToolContext(path=copy, agent=A))
    try:
        mcp = run_mcp(server, [("memory_recall", {"query": q}) for q in queries])
    finally:
        server.close()
    for query, (output, error) in zip(queries, mcp, strict=True):
        TALLY.record("fallback-corrupt", "mcp", output, {"query": query}, world.private_uids, error=error)
    own = tools.call("memory_recall", workspace=copy, agent_id=B, query="launch codes blue lamp")
    assert MARK in serialize(own), "b's own fallback finds b's files"
    # the vector index unusable and too large to rebuild inline: BM25 over the store answers
    vec = tmp_path / "vectors"
    shutil.copytree(world.path, vec)
    with kg.open_workspace(vec) as wsv:
        shutil.rmtree(vec / STATE_DIR / "vectors", ignore_errors=True)
        wsv.recall_engine.settings = wsv.recall_engine.settings.model_copy(update={"inline_index_limit": 0})
        wsv.recall_engine.sidecar = type(wsv.recall_engine.sidecar)(  # type: ignore[misc]
            vec / STATE_DIR / "vectors", wsv.ports, wsv.embedder
        )
        for query in queries:
            result = wsv.memory.recall(A, query, mode="vector")
            TALLY.record("fallback-index", "api", serialize(result), {"query": query}, world.private_uids,
                         error=False)  # fmt: skip
        fell_back = wsv.memory.recall(B, "launch codes blue lamp", mode="vector")
    assert [f for f in TALLY.found if f.startswith("fallback")] == []
    # a missing index degrades to BM25 over the store (issue 18), still only within the agent's scopes
    assert fell_back.mode == "bm25" and MARK in serialize(fell_back), "the degraded recall ran and is live"


def test_markdown_fallback_reads_only_the_acting_agents_folder(world: World) -> None:
    """The file fallback, called directly with a's id for each of b's words, finds none of b's lines."""
    from kg.recall.fallback import fallback_recall  # noqa: PLC0415

    for query in ("kestrel", f"{MARK}mem2", "launch codes", f"{MARK}checkpoint", f"{MARK}conv", f"{MARK}bel"):
        found = fallback_recall(world.path, A, query, limit=1000, reason="probe")
        TALLY.record("fallback-direct", "a", serialize(found), {"query": query}, world.private_uids, error=False)
    assert [f for f in TALLY.found if f.startswith("fallback-direct")] == []


# ------------------------------------------------------------------------------------------ grants and sharing


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    ws = kg.init_workspace(tmp_path / "ws")
    ws.agents.add(A)
    ws.agents.add(B)
    yield ws
    ws.close()


def _sees(ws: Workspace, agent: str, token: str) -> dict[str, bool]:
    """Whether ``agent`` sees ``token`` through recall, fact_query, belief list, rule list, cases and graph_query."""
    ctx = tools.ToolContext(workspace_obj=ws)
    outputs = {
        "recall": tools.run(ctx, "memory_recall", {"agent_id": agent, "query": token, "mode": "bm25"}),
        "facts": tools.run(ctx, "fact_query", {"agent_id": agent, "subject": "*"}),
        "beliefs": tools.run(ctx, "bdi_list", {"agent_id": agent, "kind": "belief"}),
        "rules": tools.run(ctx, "rule_list", {"agent_id": agent}),
        "cases": tools.run(ctx, "cbr_retrieve", {"agent_id": agent, "beliefs": [f"{token}case"], "k": 100}),
        "graph": tools.run(
            ctx, "graph_query", {"agent_id": agent, "name": "belief-holders", "subject": token, "match": "contains"}
        ),
    }
    hid = f"{token}hid"
    return {k: hid in serialize([x.model_dump(mode="json") for x in v] if isinstance(v, list) else v)
            for k, v in outputs.items()}  # fmt: skip


def _write_into(ws: Workspace, agent: str, scope: str, token: str) -> None:
    """One record of each kind in ``scope``, each carrying ``<token>hid`` (never searched for, so never echoed)."""
    ctx = tools.ToolContext(workspace_obj=ws)
    hid = f"{token}hid"
    tools.run(ctx, "memory_store_item", {"agent_id": agent, "content": f"shared note {token} {hid}", "scope": scope})
    tools.run(ctx, "fact_assert", {"agent_id": agent, "subject": f"{token}co", "predicate": "p", "object": hid,
                                   "scope": scope})  # fmt: skip
    tools.run(ctx, "bdi_add", {"agent_id": agent, "kind": "belief", "content": f"belief about {token} {hid}",
                               "scope": scope})  # fmt: skip
    tools.run(ctx, "rule_create", {"agent_id": agent, "name": f"{hid}-rule", "conditions": ["?x p o"],
                                   "conclusion": "?x q o", "scope": scope})  # fmt: skip
    tools.run(
        ctx,
        "cbr_store",
        {
            "agent_id": agent,
            "situation": {"beliefs": [f"{token}case"]},
            "solution": {"actions": [hid]},
            "outcome": {"success": True},
            "scope": scope,
        },
    )


def test_granted_scopes_work_and_revocation_ends_them(pair: Workspace) -> None:
    """Grant a project:x, b writes there, a sees it everywhere; revoke, a sees it nowhere (and cannot write)."""
    pair.scopes.grant(A, "project:x", granted_by="admin")
    pair.scopes.grant(B, "project:x", granted_by="admin")
    _write_into(pair, B, "project:x", "zqxp")
    assert _sees(pair, A, "zqxp") == dict.fromkeys(("recall", "facts", "beliefs", "rules", "cases", "graph"), True)
    pair.scopes.revoke(A, "project:x", revoked_by="admin")
    assert _sees(pair, A, "zqxp") == dict.fromkeys(("recall", "facts", "beliefs", "rules", "cases", "graph"), False)
    assert _sees(pair, B, "zqxp")["recall"], "b keeps its grant"
    with pytest.raises(MabosError):
        tools.call("memory_store_item", workspace=pair.path, agent_id=A, content="late", scope="project:x")
    TALLY.probes["grants"] = TALLY.probes.get("grants", 0) + 12


def test_global_scope_is_shared(pair: Workspace) -> None:
    """What b writes to global, a (never granted anything) sees through every door."""
    _write_into(pair, B, "global", "zqxg")
    assert _sees(pair, A, "zqxg") == dict.fromkeys(("recall", "facts", "beliefs", "rules", "cases", "graph"), True)
    TALLY.probes["grants"] = TALLY.probes.get("grants", 0) + 6


def test_shared_scope_writes_name_their_agent(pair: Workspace) -> None:
    """No anonymous poisoning: every write into a shared scope records which agent made it."""
    pair.scopes.grant(A, "project:x", granted_by="admin")
    pair.scopes.grant(B, "project:x", granted_by="admin")
    ctx = tools.ToolContext(workspace_obj=pair)
    first = tools.run(ctx, "fact_assert", {"agent_id": B, "subject": "acme", "predicate": "tier", "object": "gold",
                                           "scope": "project:x", "confidence": 0.5})  # fmt: skip
    assert (first.fact.agent_id, first.fact.updated_by) == (B, B)  # type: ignore[attr-defined]
    second = tools.run(ctx, "fact_assert", {"agent_id": A, "subject": "acme", "predicate": "tier", "object": "gold",
                                            "scope": "project:x", "confidence": 0.9})  # fmt: skip
    assert second.status == "updated"  # type: ignore[attr-defined]
    assert second.fact.uid == first.fact.uid  # type: ignore[attr-defined]
    assert second.fact.updated_by == A, "the agent that changed the shared fact is recorded"  # type: ignore[attr-defined]
    history = pair.facts.query(B, subject="acme", as_of=first.fact.updated_at)  # type: ignore[attr-defined]
    assert [f.updated_by for f in history] == [B], "the earlier version still names b"
    memory = tools.run(ctx, "memory_store_item", {"agent_id": A, "content": "note", "scope": "project:x"})
    assert memory.item.agent_id == A  # type: ignore[attr-defined]
    belief = pair.bdi.add("belief", B, "Acme is loyal", scope="project:x")
    pair.bdi.update(A, belief.uid, certainty=0.2)
    retracted = tools.run(ctx, "fact_retract", {"agent_id": A, "fact_ids": [first.fact.uid]})  # type: ignore[attr-defined]
    assert retracted.count == 1  # type: ignore[attr-defined]
    rule = tools.run(ctx, "rule_create", {"agent_id": B, "name": "r", "conditions": ["?x p o"],
                                          "conclusion": "?x q o", "scope": "project:x"})  # fmt: skip
    tools.run(ctx, "rule_toggle", {"agent_id": A, "rule_id": rule.uid})  # type: ignore[attr-defined]
    conn = sqlite3.connect(f"file:{pair.path / STATE_DIR / DB_FILE}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT updated_by FROM bdi_nodes WHERE uid = ?", (belief.uid,)).fetchone() == (A,)
        assert conn.execute("SELECT retracted_by FROM facts WHERE uid = ?", (first.fact.uid,)).fetchone() == (A,)  # type: ignore[attr-defined]
        events = conn.execute("SELECT aggregate, record_uid, agent_id FROM outbox WHERE scope = 'project:x' "
                              "ORDER BY seq").fetchall()  # fmt: skip
    finally:
        conn.close()
    assert events and all(agent in (A, B) for _, _, agent in events), f"an anonymous shared write: {events}"
    by_record = [(uid, agent) for _, uid, agent in events]
    assert (belief.uid, A) in by_record and (first.fact.uid, A) in by_record  # type: ignore[attr-defined]
    assert (rule.uid, A) in by_record, "the toggle of b's shared rule names a"  # type: ignore[attr-defined]
    RuleService(pair.ports, pair.scopes, pair.clock).delete(A, rule.uid)  # type: ignore[attr-defined]
    conn = sqlite3.connect(f"file:{pair.path / STATE_DIR / DB_FILE}?mode=ro", uri=True)
    try:
        deleted = conn.execute("SELECT agent_id FROM outbox WHERE record_uid = ? AND op = 'delete'",
                               (rule.uid,)).fetchall()  # type: ignore[attr-defined]  # fmt: skip
    finally:
        conn.close()
    assert deleted == [(A,)], "the deletion of b's shared rule names a"
    TALLY.probes["attribution"] = len(events)


def test_rule_delete_and_export_stay_within_the_agents_scopes(pair: Workspace) -> None:
    """Issue 18: rule delete and export run through the registry. b can neither delete nor export a's private rule
    (API, bound MCP context, CLI); a's export holds nothing of b's; a shared rule can be deleted only while granted."""
    ctx = tools.ToolContext(workspace_obj=pair)

    def create(agent: str, name: str, scope: str | None = None) -> str:
        rule = tools.run(ctx, "rule_create", {"agent_id": agent, "name": name, "conditions": ["?x p o"],
                                              "conclusion": "?x q o", "scope": scope})  # fmt: skip
        return rule.uid  # type: ignore[attr-defined, no-any-return]

    def export(agent: str, fmt: str = "json") -> str:
        return tools.run(ctx, "rule_export", {"agent_id": agent, "format": fmt}).document  # type: ignore[attr-defined, no-any-return]

    mine, theirs = create(A, "zqxaprivate"), create(B, "zqxbprivate")
    for fmt in ("json", "yaml"):
        assert "zqxaprivate" in export(A, fmt) and "zqxbprivate" not in export(A, fmt) and theirs not in export(A, fmt)
        assert "zqxaprivate" not in export(B, fmt) and mine not in export(B, fmt)
    with pytest.raises(MabosError, match=r"^rule: no rule"):
        tools.run(ctx, "rule_delete", {"agent_id": B, "rule_id": mine})
    with pytest.raises(MabosError, match="agent_id"):  # a server bound to b cannot name a
        tools.run(tools.ToolContext(workspace_obj=pair, agent=B), "rule_delete", {"agent_id": A, "rule_id": mine})
    refused = CliRunner().invoke(cli, ["--workspace", str(pair.path), "rule", "delete", mine, "--agent", B])
    assert refused.exit_code == 1 and refused.stderr.startswith("error: rule: no rule"), refused.output
    shown = CliRunner().invoke(cli, ["--workspace", str(pair.path), "rule", "export", "--agent", B, "--json"])
    assert shown.exit_code == 0 and "zqxaprivate" not in shown.stdout and json.loads(shown.stdout)["count"] == 1
    assert [r.uid for r in pair.ports.rules.list(scopes=[agent_scope(A)])] == [mine], "b's attempts changed nothing"
    # a shared rule: a may delete b's rule in project:x while granted, not after the grant is revoked
    pair.scopes.grant(A, "project:x", granted_by="admin")
    pair.scopes.grant(B, "project:x", granted_by="admin")
    shared, kept = create(B, "zqxshared1", "project:x"), create(B, "zqxshared2", "project:x")
    assert "zqxshared1" in export(A)
    assert tools.run(ctx, "rule_delete", {"agent_id": A, "rule_id": shared}).uid == shared  # type: ignore[attr-defined]
    pair.scopes.revoke(A, "project:x", revoked_by="admin")
    assert "zqxshared2" not in export(A)
    with pytest.raises(MabosError, match=r"^rule: no rule"):
        tools.run(ctx, "rule_delete", {"agent_id": A, "rule_id": kept})
    assert [r.uid for r in pair.ports.rules.list(scopes=["project:x"])] == [kept]
    TALLY.probes["rule-admin"] = 12


def test_bdi_tools_stay_within_the_agents_scopes(pair: Workspace) -> None:
    """Issue 18: ``belief|goal|... add|list|update`` run bdi_add, bdi_list, bdi_update through the registry. b can
    neither list, update nor add into a's private nodes (API, bound MCP context, CLI); in a shared scope a may update
    b's node while granted, not after the grant is revoked."""
    ctx = tools.ToolContext(workspace_obj=pair)

    def add(agent: str, kind: str, content: str, scope: str | None = None) -> str:
        node = tools.run(ctx, "bdi_add", {"agent_id": agent, "kind": kind, "content": content, "scope": scope})
        return node.uid  # type: ignore[attr-defined, no-any-return]

    def listed(agent: str, **filters: Any) -> str:
        return serialize(tools.run(ctx, "bdi_list", {"agent_id": agent, **filters}))

    mine = add(A, "goal", "zqxagoal private target")
    add(B, "belief", "zqxbbelief private")
    assert "zqxagoal" in listed(A) and "zqxbbelief" not in listed(A, limit=100_000)
    assert "zqxagoal" not in listed(B, owner=A) and mine not in listed(B, kind="goal")
    with pytest.raises(MabosError, match=r"^scope: "):
        tools.run(ctx, "bdi_list", {"agent_id": B, "scope": agent_scope(A)})
    with pytest.raises(MabosError, match=r"^uid: no node"):
        tools.run(ctx, "bdi_update", {"agent_id": B, "uid": mine, "content": "zqxoverwritten"})
    with pytest.raises(MabosError, match=r"^scope: "):
        add(B, "belief", "zqxplanted", agent_scope(A))
    with pytest.raises(MabosError, match="agent_id"):  # a server bound to b cannot name a
        tools.run(tools.ToolContext(workspace_obj=pair, agent=B), "bdi_update", {"agent_id": A, "uid": mine,
                                                                                 "progress": 1.0})  # fmt: skip
    base = ["--workspace", str(pair.path)]
    refused = CliRunner().invoke(cli, [*base, "goal", "update", mine, "--status", "achieved", "--agent", B])
    assert refused.exit_code == 1 and refused.stderr.startswith("error: uid: no node"), refused.output
    planted = CliRunner().invoke(cli, [*base, "belief", "add", "zqxplanted", "--scope", agent_scope(A), "--agent", B])
    assert planted.exit_code == 1 and planted.stderr.startswith("error: scope: "), planted.output
    shown = CliRunner().invoke(cli, [*base, "goal", "list", "--owner", A, "--agent", B, "--json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout) == [], shown.output
    assert [(n.uid, n.content) for n in pair.ports.bdi.list(scopes=[agent_scope(A)], limit=100)] == [
        (mine, "zqxagoal private target")
    ], "b's attempts changed nothing"
    # a shared node: a may update b's goal in project:x while granted, not after the grant is revoked
    pair.scopes.grant(A, "project:x", granted_by="admin")
    pair.scopes.grant(B, "project:x", granted_by="admin")
    shared = add(B, "goal", "zqxshared goal", "project:x")
    assert "zqxshared" in listed(A, scope="project:x")
    changed = tools.run(ctx, "bdi_update", {"agent_id": A, "uid": shared, "progress": 0.5})
    assert changed.progress == 0.5  # type: ignore[attr-defined]
    pair.scopes.revoke(A, "project:x", revoked_by="admin")
    assert "zqxshared" not in listed(A)
    with pytest.raises(MabosError, match=r"^uid: no node"):
        tools.run(ctx, "bdi_update", {"agent_id": A, "uid": shared, "progress": 1.0})
    with pytest.raises(MabosError, match=r"^scope: "):
        add(A, "belief", "zqxlate", "project:x")
    assert pair.ports.bdi.get(shared).progress == 0.5
    TALLY.probes["bdi-nodes"] = 14


def test_graph_edge_tools_stay_within_the_agents_scopes(pair: Workspace) -> None:
    """Issue 18: ``graph link|relations|path`` run graph_link, graph_relations, graph_path through the registry. b
    can neither link a's private nodes nor see their edges or paths (API, bound MCP context, CLI); a shared edge is
    seen while granted only."""
    ctx = tools.ToolContext(workspace_obj=pair)

    def run(agent: str, name: str, **args: Any) -> Any:
        return tools.run(ctx, name, {"agent_id": agent, **args})

    belief = run(A, "bdi_add", kind="belief", content="zqxabelief").uid
    goal = run(A, "bdi_add", kind="goal", content="zqxagoal").uid
    edge = run(A, "graph_link", relation="belief-supports-goal", source_uid=belief, target_uid=goal)
    assert run(A, "graph_relations", uid=goal).relations == [edge]
    assert run(A, "graph_path", kinds=["belief", "goal"]).count == 1
    theirs = run(B, "bdi_add", kind="belief", content="zqxbbelief").uid
    assert run(B, "graph_relations", uid=goal).count == 0 and run(B, "graph_path", kinds=["belief", "goal"]).count == 0
    assert run(B, "graph_path", kinds=["goal"], start_uid=goal).count == 0
    with pytest.raises(MabosError, match=r"^target: no record"):
        run(B, "graph_link", relation="belief-supports-goal", source_uid=theirs, target_uid=goal)
    with pytest.raises(MabosError, match=r"^scope: "):
        run(B, "graph_link", relation="belief-supports-goal", source_uid=theirs, target_uid=goal,
            scope=agent_scope(A))  # fmt: skip
    with pytest.raises(MabosError, match="agent_id"):  # a server bound to b cannot name a
        tools.run(tools.ToolContext(workspace_obj=pair, agent=B), "graph_relations", {"agent_id": A, "uid": goal})
    base = ["--workspace", str(pair.path)]
    refused = CliRunner().invoke(cli, [*base, "graph", "link", "belief-supports-goal", theirs, goal, "--agent", B])
    assert refused.exit_code == 1 and refused.stderr.startswith("error: target: no record"), refused.output
    shown = CliRunner().invoke(cli, [*base, "graph", "relations", goal, "--agent", B, "--json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout) == [], shown.output
    paths = CliRunner().invoke(cli, [*base, "graph", "path", "belief", "goal", "--agent", B, "--json"])
    assert paths.exit_code == 0 and json.loads(paths.stdout) == [], paths.output
    assert [r.uid for r in pair.ports.relations.relations(goal, scopes=["global", agent_scope(A), agent_scope(B)])] == [
        edge.uid
    ], "b's attempts added no edge"
    # a shared edge: b's belief and goal in project:x, linked by b; a sees the edge while granted only
    pair.scopes.grant(A, "project:x", granted_by="admin")
    pair.scopes.grant(B, "project:x", granted_by="admin")
    sb = run(B, "bdi_add", kind="belief", content="zqxsharedb", scope="project:x").uid
    sg = run(B, "bdi_add", kind="goal", content="zqxsharedg", scope="project:x").uid
    shared = run(B, "graph_link", relation="belief-supports-goal", source_uid=sb, target_uid=sg, scope="project:x")
    assert run(A, "graph_relations", uid=sg).relations == [shared]
    pair.scopes.revoke(A, "project:x", revoked_by="admin")
    assert run(A, "graph_relations", uid=sg).count == 0 and run(A, "graph_path", kinds=["belief", "goal"]).count == 1
    with pytest.raises(MabosError, match=r"^source: no record"):
        run(A, "graph_link", relation="belief-supports-goal", source_uid=sb, target_uid=goal)
    TALLY.probes["graph-edges"] = 13


def test_conversation_tools_stay_within_the_agents_sessions(pair: Workspace) -> None:
    """Issue 18: ``conversation ingest|compact`` run conversation_ingest and conversation_compact through the
    registry. A session belongs to one agent: b naming a's session key compacts nothing of a's and ingests into a
    conversation of its own (API, bound MCP context, CLI); a's messages and summaries are untouched."""
    ctx = tools.ToolContext(workspace_obj=pair)
    rows = [json.loads(line) for line in _dialogue("zqxa", 40).splitlines()]
    mine = tools.run(ctx, "conversation_ingest", {"agent_id": A, "session_key": "deal", "messages": rows})
    before = private_rows(pair.path, A)
    with pytest.raises(MabosError, match=r"^session: agent 'b' has no conversation 'deal'"):
        tools.run(ctx, "conversation_compact", {"agent_id": B, "session_key": "deal", "force": True})
    with pytest.raises(MabosError, match="agent_id"):  # a server bound to b cannot name a
        tools.run(tools.ToolContext(workspace_obj=pair, agent=B), "conversation_compact",
                  {"agent_id": A, "session_key": "deal"})  # fmt: skip
    base = ["--workspace", str(pair.path)]
    refused = CliRunner().invoke(cli, [*base, "conversation", "compact", "--session", "deal", "--agent", B])
    assert refused.exit_code == 1 and refused.stderr.startswith("error: session: agent 'b' has no"), refused.output
    theirs = tools.run(ctx, "conversation_ingest", {"agent_id": B, "session_key": "deal",
                                                    "jsonl": '{"role": "user", "content": "b speaking"}'})  # fmt: skip
    assert theirs.conversation_uid != mine.conversation_uid and theirs.created  # type: ignore[attr-defined]
    feed = pair.path / "b.jsonl"
    feed.write_text('{"role": "user", "content": "b again"}\n', encoding="utf-8")
    shown = CliRunner().invoke(cli, [*base, "conversation", "ingest", "--session", "deal", "--file", str(feed),
                                     "--agent", B, "--json"])  # fmt: skip
    assert shown.exit_code == 0 and json.loads(shown.stdout)["conversation_uid"] == theirs.conversation_uid  # type: ignore[attr-defined]
    assert "zqxa" not in shown.stdout
    b_compact = tools.run(ctx, "conversation_compact", {"agent_id": B, "session_key": "deal", "force": True})
    assert b_compact.conversation_uid == theirs.conversation_uid  # type: ignore[attr-defined]
    assert private_rows(pair.path, A) == before, "b's calls changed nothing of a's"
    TALLY.probes["conversation-admin"] = 6


def test_admit_reject_and_owl_rl_stay_within_the_agents_scopes(pair: Workspace) -> None:
    """Issue 18: ``memory admit``, ``ontology reject`` and ``reason owl-rl`` run memory_admit,
    ontology_reject_proposal and reason_owl_rl through the registry. b cannot admit into a's scope, reject a's
    private proposal, or feed a's facts into its closure (API, bound MCP context, CLI); a's closure lands in a's own
    scope only."""
    ctx = tools.ToolContext(workspace_obj=pair)
    pair.facts.assert_fact(A, "Dog", "subClassOf", "Animal")
    pair.facts.assert_fact(A, "zqxarex", "type", "Dog")
    proposal = tools.run(ctx, "ontology_propose_concept", {"agent_id": A, "domain": "sbvr-business",
                         "node_type": "class", "node_id": "ZqxaWidget", "label": "Zqxa Widget",
                         "parent_class": "biz:Partner", "scope": agent_scope(A)}).uid  # type: ignore[attr-defined]  # fmt: skip
    before = private_rows(pair.path, A)
    with pytest.raises(MabosError, match=r"^scope: "):
        tools.run(ctx, "memory_admit", {"agent_id": B, "candidates": [{"content": "planted", "scope": agent_scope(A)}]})
    with pytest.raises(MabosError, match=r"^proposal: no proposal"):
        tools.run(ctx, "ontology_reject_proposal", {"agent_id": B, "uid": proposal, "reason": "mine"})
    with pytest.raises(MabosError, match="agent_id"):  # a server bound to b cannot name a
        tools.run(tools.ToolContext(workspace_obj=pair, agent=B), "reason_owl_rl", {"agent_id": A})
    theirs = tools.run(ctx, "reason_owl_rl", {"agent_id": B})
    assert "zqxa" not in serialize(theirs) and theirs.input_facts == 0  # type: ignore[attr-defined]
    base = ["--workspace", str(pair.path)]
    refused = CliRunner().invoke(cli, [*base, "ontology", "reject", proposal, "--reason", "x", "--by", B])
    assert refused.exit_code == 1 and refused.stderr.startswith("error: proposal: no proposal"), refused.output
    owl = CliRunner().invoke(cli, [*base, "reason", "owl-rl", "--agent", B, "--json"])
    assert owl.exit_code == 0 and "zqxa" not in owl.stdout, owl.output
    assert private_rows(pair.path, A) == before, "b's calls changed nothing of a's"
    mine = tools.run(ctx, "reason_owl_rl", {"agent_id": A})
    assert mine.created >= 1  # type: ignore[attr-defined]
    derived = pair.facts.query(A, subject="zqxarex", predicate="type", object="Animal")
    assert [f.scope for f in derived] == [agent_scope(A)]
    TALLY.probes["admit-reject-owl"] = 6


def test_memory_file_tools_stay_within_the_agents_folder(pair: Workspace) -> None:
    """Issue 18: ``memory materialize|export|import`` run memory_materialize, memory_export and memory_import through
    the registry. a's files hold nothing of b's, and a Beliefs.md of a's naming b's belief changes nothing of b's
    (API, bound MCP context, CLI)."""
    ctx = tools.ToolContext(workspace_obj=pair)
    theirs = pair.bdi.add("belief", B, "zqxb private belief", certainty=0.9)
    pair.memory.store_item(B, "zqxb private memory")
    pair.bdi.add("belief", A, "Acme is growing")
    for name in ("memory_materialize", "memory_export"):
        tools.run(ctx, name, {"agent_id": A})
    written = [p for p in (pair.path / "agents" / A).rglob("*.md") if p.is_file()]
    assert len(written) >= 9 and not [p for p in written if "zqxb" in p.read_text(encoding="utf-8")]
    beliefs = pair.path / "agents" / A / "Beliefs.md"
    beliefs.write_text(f"# Beliefs\n\n## zqxa overwrite\ncertainty: 0.1\nid: {theirs.uid}\n", encoding="utf-8")
    before = private_rows(pair.path, B)
    with pytest.raises(MabosError, match=r"id: no belief"):
        tools.run(ctx, "memory_import", {"agent_id": A, "kind": "beliefs"})
    with pytest.raises(MabosError, match="agent_id"):  # a server bound to a cannot name b
        tools.run(tools.ToolContext(workspace_obj=pair, agent=A), "memory_import", {"agent_id": B})
    base = ["--workspace", str(pair.path)]
    refused = CliRunner().invoke(cli, [*base, "memory", "import", "--kind", "beliefs", "--agent", A])
    assert refused.exit_code == 1 and "id: no belief" in refused.stderr, refused.output
    assert private_rows(pair.path, B) == before, "a's import changed nothing of b's"
    assert pair.bdi.get(B, theirs.uid).content == "zqxb private belief"
    TALLY.probes["memory-files"] = 5


# ------------------------------------------------------------------------------------------ slow and report


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("MABOS_SLOW") != "1", reason="the long version: MABOS_SLOW=1 pytest -m slow")
def test_probes_repeat_over_many_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry and MCP sweep again with three more victims in one workspace (each private from a)."""
    monkeypatch.delenv("MABOS_EMBEDDER", raising=False)
    ws = kg.init_workspace(tmp_path / "many")
    ws.agents.add(A)
    victims = [("c", "zqxc"), ("d", "zqxd"), ("e", "zqxe")]
    worlds = []
    for victim, mark in victims:
        ws.agents.add(victim)
        worlds.append((victim, mark, populate(ws, victim, mark)))
    ws.close()
    for victim, mark, w in worlds:
        _sweep(w, TALLY, victim=victim, mark=mark, full=True)
    assert TALLY.found == []


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    if REPORT:
        Path(REPORT).write_text(
            json.dumps(
                {
                    "probes": TALLY.probes,
                    "refused": TALLY.refused,
                    "leaks": len(TALLY.found),
                    "aimed": AIMED,
                    "coverage": COVERAGE,
                },
                indent=2,
            )
        )
