"""Fixtures of the console tests: one real workspace built through the tools (two agents, private and shared
records, a derived fact, a retracted fact, BDI links, memories, a validated ontology proposal, a compacted
conversation), copied per test so tests that approve or reject do not see each other's writes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from cli import tools
from cli.ui import create_app
from kg.workspace import init_workspace, open_workspace

DIALOGUE = Path(__file__).resolve().parents[1] / "data" / "conversation" / "compaction-dialogue.jsonl"


@dataclass
class Built:
    """The built workspace and the uids the tests look for."""

    path: Path
    uids: dict[str, str]


def _call(path: Path, tool: str, **arguments: Any) -> Any:
    return tools.call(tool, workspace=path, **arguments)


def build(path: Path) -> dict[str, str]:
    """Fill a fresh workspace at ``path``; the uids by name."""
    with init_workspace(path) as ws:
        ws.agents.add("a", name="Alice", role="knowledge")
        ws.agents.add("b", name="Bob", role="seller")
        uids: dict[str, str] = {}
        belief = ws.bdi.add("belief", "a", "Acme is growing fast", certainty=0.8)
        goal = ws.bdi.add("goal", "a", "Win the Acme renewal", priority=1)
        plan = ws.bdi.add("plan", "a", "Offer SSO in the plan")
        ws.bdi.link("a", "belief-supports-goal", belief.uid, goal.uid)
        ws.bdi.link("a", "goal-requires-plan", goal.uid, plan.uid)
        uids.update(belief=belief.uid, goal=goal.uid, plan=plan.uid)
        uids["b_goal"] = ws.bdi.add("goal", "b", "Bobs hidden quota goal").uid
        uids["old_plan"] = ws.facts.assert_fact("a", "acme", "hasPlan", "basic")[0].uid
        ws.facts.retract("a", uids=[uids["old_plan"]])
        uids["new_plan"] = ws.facts.assert_fact("a", "acme", "hasPlan", "pro")[0].uid
        ws.facts.assert_fact("a", "acme", "hasIndustry", "saas")
        ws.facts.assert_fact("a", "acme", "hasRevenue", "$50,000")
        ws.facts.assert_fact("b", "globex", "locatedIn", "germany", scope="global")
        uids["secret"] = ws.facts.assert_fact("b", "secretcorp", "hasRevenue", "999", object_kind="literal")[0].uid
        for content in ("JWT signing keys rotate every 90 days", "Acme asked about SSO pricing",
                        "The security review of Acme passed"):  # fmt: skip
            ws.memory.store_item("a", content, type="fact", importance=0.7, store="long_term")
        ws.memory.store_item("b", "Bob private memo about keys rotation", store="long_term")
        rows = [json.loads(line) for line in DIALOGUE.read_text(encoding="utf-8").splitlines() if line.strip()]
        ws.conversations.ingest("a", "renewal", rows * 4, title="Acme renewal call")
        ws.conversations.compact("a", "renewal")
    _call(path, "rule_create", agent_id="a", name="saas-target", conclusion={
        "subject": "?x", "predicate": "isTarget", "object": "yes"}, conditions=[
        {"subject": "?x", "predicate": "hasIndustry", "object": "saas"}])  # fmt: skip
    _call(path, "infer_forward", agent_id="a", persist=True)
    _call(path, "ontology_scaffold_domain", agent_id="a", template="ecommerce", domain="ecommerce")
    proposal = _call(path, "ontology_propose_concept", agent_id="a", domain="ecommerce", node_type="class",
                     node_id="ecommerce:DropshipFulfillment", label="Dropship Fulfillment",
                     parent_class="ecommerce:Fulfillment", rationale="three suppliers ship direct",
                     sbvr_definition="Fulfillment in which the supplier ships directly to the customer")  # fmt: skip
    _call(path, "ontology_validate_proposal", agent_id="a", uid=proposal.uid)
    uids["proposal"] = proposal.uid
    private = _call(path, "ontology_propose_concept", agent_id="b", domain="ecommerce", node_type="class",
                    node_id="ecommerce:BobSecretThing", label="Bob Secret Thing", parent_class="ecommerce:Fulfillment",
                    sbvr_definition="A thing only Bob knows about", scope="agent:b")  # fmt: skip
    uids["b_proposal"] = private.uid
    with open_workspace(path) as ws:
        derived = ws.facts.query("a", predicate="isTarget")
        uids["derived"] = derived[0].uid
    uids.update(seed_hostile(path))
    with open_workspace(path) as ws:  # many unlinked nodes with long labels: cose lays them out in a row
        ws.agents.add("crowd")
        for i in range(14):
            ws.bdi.add("belief", "crowd", f"belief number {i} with a label long enough to collide")
    return uids


#: Text an attacker (a neighbouring agent) writes to run script in the operator's console: a quote breaking out of
#: a single-quoted attribute with an event handler (the graph panel's old hole), tags with handlers, a script
#: element, a textarea/script break-out, a javascript: URL, line and paragraph separators, a template expression.
#: Every payload would set ``window.__xss`` or the title.
HOSTILE = (
    "x' onmouseover='window.__xss=1;document.title=1' y='"
    ' "><img src=x onerror="__xss=2"><script>__xss=3</script></textarea></title></script>'
    '<svg onload="__xss=4"> javascript:__xss=5 \u2028<b onclick=__xss=6>b</b>\u2029{{7*7}}'
    "<a href=javascript:__xss=7>a</a>"
)
assert len(HOSTILE) <= 256 - 10  # a name, a title, a label: 256 characters at most, with a short prefix


def seed_hostile(path: Path) -> dict[str, str]:
    """Agent ``h`` (name and role hostile) writes :data:`HOSTILE` into every field a page or panel shows: a fact's
    subject, predicate and object, a derived fact, every BDI kind, a memory, a conversation (title and messages),
    an ontology proposal (label, definition, rationale), all in h's private scope (``a``'s views stay as they were).
    """
    uids: dict[str, str] = {}
    with open_workspace(path) as ws:
        ws.agents.add("h", name=HOSTILE, role=HOSTILE)
        uids["h_fact"] = ws.facts.assert_fact("h", HOSTILE, "hasX", "y")[0].uid
        ws.facts.assert_fact("h", "acme-h", HOSTILE, HOSTILE)
        ws.facts.assert_fact("h", HOSTILE, "relatesTo", HOSTILE + " 2")
        nodes = {kind: ws.bdi.add(kind, "h", f"{kind}: {HOSTILE}") for kind in ("belief", "desire", "goal",
                                                                               "intention", "plan")}  # fmt: skip
        ws.bdi.link("h", "belief-supports-goal", nodes["belief"].uid, nodes["goal"].uid)
        uids["h_goal"] = nodes["goal"].uid
        ws.memory.store_item("h", f"memo {HOSTILE}", store="long_term")
        rows = [{"role": "user", "content": f"message {i} {HOSTILE}"} for i in range(3)]
        ws.conversations.ingest("h", "hostile", rows, title=HOSTILE)
    _call(path, "rule_create", agent_id="h", name="hostile-rule", conclusion={
        "subject": "?x", "predicate": "isT", "object": HOSTILE}, conditions=[
        {"subject": "?x", "predicate": "hasX", "object": "y"}])  # fmt: skip
    _call(path, "infer_forward", agent_id="h", persist=True)
    proposal = _call(path, "ontology_propose_concept", agent_id="h", domain="ecommerce", node_type="class",
                     node_id="ecommerce:HostileThing", label=HOSTILE, parent_class="ecommerce:Fulfillment",
                     rationale=HOSTILE, sbvr_definition=f"A thing {HOSTILE}", scope="agent:h")  # fmt: skip
    _call(path, "ontology_validate_proposal", agent_id="h", uid=proposal.uid)
    uids["h_proposal"] = proposal.uid
    with open_workspace(path) as ws:
        uids["h_derived"] = ws.facts.query("h", predicate="isT")[0].uid
    return uids


@pytest.fixture(scope="session")
def built_template(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The workspace, built once per session (embedder off: these tests are about the console, and recall then
    runs BM25-only and says so)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MABOS_EMBEDDER", "none")
        path = tmp_path_factory.mktemp("console") / "ws"
        return Built(path, build(path))


@pytest.fixture
def built(built_template: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Built:
    """A private copy of the built workspace for one test."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    copy = tmp_path / "ws"
    shutil.copytree(built_template.path, copy)
    return Built(copy, dict(built_template.uids))


@pytest.fixture
def client(built: Built) -> Iterator[TestClient]:
    """The console on the copy, loopback, no token."""
    with TestClient(create_app(built.path, agent="a"), base_url="http://127.0.0.1") as test_client:
        yield test_client
