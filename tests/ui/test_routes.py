"""Every console page and API route on a real workspace (Starlette's test client; no mocks).

The workspace (tests/ui/conftest.py) has two agents: the console acts as ``a``; ``b`` owns private records
("secretcorp", "Bobs hidden quota goal", "Bob private memo", "BobSecretThing") that ``a`` must never see.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from starlette.testclient import TestClient

from cli.ui import create_app
from cli.ui.pages import BARS
from kg.workspace import open_workspace

if TYPE_CHECKING:
    from conftest import Built

PAGES = ["/", "/graph", "/facts", "/memory", "/ontology", "/reasoning", "/conversation", "/sync"]
APIS = ["/api/overview", "/api/graph", "/api/facts", "/api/memory", "/api/ontology", "/api/reasoning",
        "/api/conversation", "/api/sync"]  # fmt: skip
B_PRIVATE = ("secretcorp", "Bobs hidden quota", "Bob private memo", "BobSecretThing")


@pytest.fixture(scope="module")
def built(built_template: Built) -> Built:
    """These tests only read: they share the session's workspace (no copy per test)."""
    return built_template


@pytest.fixture(scope="module")
def client(built_template: Built) -> Iterator[TestClient]:
    """One console for the module, on the shared workspace, loopback, no token."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MABOS_EMBEDDER", "none")
        app = create_app(built_template.path, agent="a")
        with TestClient(app, base_url="http://127.0.0.1") as test_client:
            yield test_client


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders_for_the_acting_agent(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert '<option value="a" selected>' in response.text
    assert 'class="error"' not in response.text


def test_page_content(client: TestClient, built: Built) -> None:
    overview = client.get("/").text
    assert "Alice" in overview and "acme hasPlan pro" in overview
    assert "cytoscape.min.js" in client.get("/graph").text
    facts = client.get("/facts?subject=acme").text
    assert "hasIndustry" in facts and "history · why" in facts
    assert "Dropship Fulfillment" in client.get("/ontology").text
    assert "Acme renewal call" in client.get("/conversation").text
    assert "agent:a" in client.get("/sync").text


@pytest.mark.parametrize("path", APIS)
def test_every_api_route_answers_json(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200, response.text
    assert response.json()["agent_id"] == "a"


def test_api_graph_nodes_and_edges(client: TestClient, built: Built) -> None:
    view = client.get("/api/graph?agent=a").json()
    ids = {node["id"] for node in view["nodes"]}
    assert {built.uids["belief"], built.uids["goal"], built.uids["plan"], "entity:acme"} <= ids
    kinds = {edge["label"] for edge in view["edges"]}
    assert {"belief-supports-goal", "goal-requires-plan", "hasIndustry", "isTarget"} <= kinds
    assert view["capped"] is False and view["total"] == view["shown"]
    assert built.uids["b_goal"] not in ids and "entity:secretcorp" not in ids


def test_api_graph_is_capped_and_says_so(client: TestClient) -> None:
    view = client.get("/api/graph?limit=1&types=goal,belief,entity").json()
    assert view["capped"] is True
    assert view["shown"] == {"bdi": 1, "facts": 1}
    assert view["total"]["facts"] == 5 and view["total"]["bdi"] == 2


def test_api_graph_filters_by_type_and_scope(client: TestClient, built: Built) -> None:
    goals = client.get("/api/graph?types=goal").json()
    assert [n["id"] for n in goals["nodes"]] == [built.uids["goal"]]
    shared = client.get("/api/graph?types=entity&scope=global").json()
    assert {n["id"] for n in shared["nodes"]} == {"entity:globex", "entity:germany"}


def test_node_detail_record_history_and_neighbours(client: TestClient, built: Built) -> None:
    acme = client.get("/api/graph/node?id=entity:acme").json()
    history = [(h["what"], h["state"]) for h in acme["history"]]
    assert ("hasPlan basic", "retracted") in history and ("hasPlan pro", "live") in history
    assert "entity:saas" in {n["id"] for n in acme["nodes"]}
    goal = client.get(f"/api/graph/node?id={built.uids['goal']}").json()
    assert goal["record"]["content"] == "Win the Acme renewal"
    assert {n["id"] for n in goal["nodes"]} == {built.uids["belief"], built.uids["plan"]}
    hidden = client.get(f"/api/graph/node?id={built.uids['b_goal']}")
    assert hidden.status_code == 404 and built.uids["b_goal"] in hidden.json()["error"]


def test_fact_history_timeline_and_derivation_tree(client: TestClient, built: Built) -> None:
    derived = client.get(f"/api/facts?fact={built.uids['derived']}").json()["selected"]
    assert derived["explanation"]["rule_name"] == "saas-target"
    assert derived["explanation"]["supports"][0]["fact"]["predicate"] == "hasIndustry"
    plan = client.get(f"/api/facts?fact={built.uids['new_plan']}").json()["selected"]
    timeline = [(v["object"], v["retracted_at"] is not None, v["current"]) for v in plan["timeline"]]
    assert timeline == [("basic", True, False), ("pro", False, True)]
    page = client.get(f"/facts?fact={built.uids['derived']}").text
    assert "saas-target" in page and "Derivation" in page


def test_facts_query_takes_the_cli_filters(client: TestClient, built: Built) -> None:
    live = client.get("/api/facts?subject=acme&predicate=hasPlan").json()["facts"]
    assert [f["object"] for f in live] == ["pro"]
    with_retracted = client.get("/api/facts?subject=acme&predicate=hasPlan&include_retracted=1").json()["facts"]
    assert sorted(f["object"] for f in with_retracted) == ["basic", "pro"]
    derived = client.get("/api/facts?only_derived=1").json()["facts"]
    assert [f["predicate"] for f in derived] == ["isTarget"]
    assert client.get("/api/facts?as_of=2000-01-01").json()["facts"] == []


def test_recall_playground_scores_without_touching(client: TestClient, built: Built) -> None:
    with open_workspace(built.path) as ws:
        before = {i.uid: i.access_count for i in ws.memory.list_items("a")}
    result = client.get("/api/memory?q=keys+rotate").json()["recall"]
    assert result["hits"] and result["hits"][0]["content"].startswith("JWT signing keys")
    assert set(result["hits"][0]["bars"]) == set(BARS)
    assert result["hits"][0]["bars"]["bm25"] > 0
    with open_workspace(built.path) as ws:
        assert {i.uid: i.access_count for i in ws.memory.list_items("a")} == before
    page = client.get("/memory?q=keys+rotate").text
    assert page.count('class="bar-row"') == 6 * len(result["hits"])


def test_memory_by_store_tier_and_day(client: TestClient) -> None:
    data = client.get("/api/memory").json()
    assert sum(data["by_store"]["long_term"].values()) == 3
    assert sum(day["count"] for day in data["timeline"]) == 3


def test_ontology_hierarchy_proposals_and_detail(client: TestClient, built: Built) -> None:
    data = client.get(f"/api/ontology?proposal={built.uids['proposal']}").json()
    assert "ecommerce:Fulfillment" in {c for kids in data["hierarchy"]["children"].values() for c in kids} | set(
        data["hierarchy"]["roots"]
    )
    [validated] = data["proposals"]["validated"]
    assert validated["uid"] == built.uids["proposal"] and validated["may_review"] is True
    assert "DropshipFulfillment" in data["selected"]["diff"]
    assert all(c["ok"] for c in data["selected"]["proposal"]["validation_result"])


def _csrf(client: TestClient) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/reasoning").text)
    assert found is not None
    return found.group(1)


def test_reasoning_proof_abduction_and_router(client: TestClient) -> None:
    headers = {"X-CSRF-Token": _csrf(client)}
    triple = {"subject": "acme", "predicate": "isTarget", "object": "yes"}
    proof = client.post("/api/reasoning", data={"run": "backward", **triple}, headers=headers).json()["proof"]
    assert proof["proved"] is True and proof["proofs"]
    hypotheses = client.post("/api/reasoning", data={"run": "abduce", **triple}, headers=headers).json()
    assert hypotheses["hypotheses"]["hypotheses"][0]["name"] == "saas-target"
    routed = client.post("/api/reasoning", data={"run": "router", "problem": "is acme a target", "method": "deductive"},
                         headers=headers).json()["router"]  # fmt: skip
    assert routed["methods"] == ["deductive"]
    page = client.post("/reasoning", data={"run": "backward", "csrf": headers["X-CSRF-Token"], **triple}).text
    assert "proved" in page and "saas-target" in page


def test_a_reasoning_get_computes_nothing_and_a_post_needs_the_csrf_token(client: TestClient) -> None:
    """Before: ``GET /reasoning?run=router...`` ran the router (64 s over 600 causal facts), and any site could
    send that GET. Now a GET only shows the forms; a run is a POST with the console's CSRF token."""
    shown = client.get("/api/reasoning?run=backward&subject=acme&predicate=isTarget&object=yes").json()
    assert "proof" not in shown and shown["not_run"].startswith("press the button")
    page = client.get("/reasoning?run=router&problem=why&method=causal").text
    assert 'id="not-run"' in page and "Router ·" not in page and 'method="post" action="/reasoning"' in page
    for forged in ({}, {"X-CSRF-Token": "guess"}):
        refused = client.post("/api/reasoning", data={"run": "backward", "subject": "acme", "predicate": "isTarget",
                                                      "object": "yes"}, headers=forged)  # fmt: skip
        assert refused.status_code == 403 and refused.json()["error"].startswith("csrf: missing or wrong")
    page_refused = client.post("/reasoning", data={"run": "backward", "subject": "acme"})
    assert page_refused.status_code == 403 and "error: csrf: missing or wrong CSRF token" in page_refused.text
    token = {"X-CSRF-Token": _csrf(client)}
    bad = client.post("/api/reasoning", data={"run": "backward", "subject": "acme"}, headers=token)
    assert bad.status_code == 400 and bad.json()["error"].startswith("predicate: required")


def test_conversation_sessions_dag_and_expansion(client: TestClient) -> None:
    data = client.get("/api/conversation?session=renewal").json()
    summaries = data["session"]["summaries"]
    assert summaries
    expanded = client.get(f"/api/conversation?summary={summaries[0]['uid']}").json()["expanded"]
    assert any(item.get("kind") == "message" for item in expanded["items"])


def test_sync_outbox_is_limited_to_readable_scopes(client: TestClient) -> None:
    data = client.get("/api/sync?limit=5000").json()
    scopes = {e["scope"] for e in data["events"]}
    assert scopes and scopes <= {"global", "agent:a"}
    assert data["status"]["configured"] is False


def test_outbox_counts_cover_only_what_the_agent_may_read(client: TestClient, built: Built) -> None:
    """Before: /api/sync and /api/overview showed the outbox count of every agent (the tool's count). Now each
    agent sees the pending events it may read, exactly the events /api/sync lists for it."""
    with open_workspace(built.path) as ws:
        everyone = ws.ports.outbox.counts()["pending"]
    seen = {}
    for agent in ("a", "b"):
        data = client.get(f"/api/sync?agent={agent}&limit=5000").json()
        assert data["status"]["outbox"]["pending"] == len(data["events"])
        assert client.get(f"/api/overview?agent={agent}").json()["outbox"] == data["status"]["outbox"]
        seen[agent] = len(data["events"])
    assert seen["a"] < everyone and seen["b"] < everyone  # each has private events the other may not count
    assert f">{seen['a']}</p>" in client.get("/sync?agent=a").text


def test_a_never_sees_bs_private_records_anywhere(client: TestClient, built: Built) -> None:
    queries = ["", "?q=keys", "?subject=*", "?session=renewal", "?limit=5000&types=" + ",".join(
        ["belief", "desire", "goal", "intention", "plan", "plan_step", "entity", "literal", "memory"])]  # fmt: skip
    for path in PAGES + APIS:
        for query in queries:
            text = client.get(path + query).text
            assert not [s for s in B_PRIVATE if s in text], (path, query)
    seen_by_b = client.get("/api/graph?agent=b").text + client.get("/api/ontology?agent=b").text
    assert "secretcorp" in seen_by_b and "BobSecretThing" in seen_by_b  # the check above can fail


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/api/facts?limit=abc", 400, "limit: must be a whole number"),
        ("/api/facts?valid_at=yesterday", 400, "valid_at: must be an ISO-8601 date"),
        ("/api/graph?types=bogus", 400, "types: unknown node type 'bogus'"),
        ("/api/graph?agent=zz", 404, "agent: no agent 'zz'"),
        ("/api/graph?agent=Bad!", 400, "agent: must match"),
        ("/api/facts?scope=agent:b", 403, "scope: agent 'a' may not read 'agent:b'"),
    ],
)
def test_bad_input_gets_the_cli_one_line_error(client: TestClient, path: str, status: int, message: str) -> None:
    response = client.get(path)
    assert response.status_code == status
    assert response.json()["error"].startswith(message)
    page = client.get(path.replace("/api", "", 1))
    assert page.status_code == status and f"error: {message}" in page.text.replace("&#39;", "'")
