"""The console builds the vector index when idle (issue 18, cli/ui/indexing.py): a real workspace with more items than
recall builds inline and no saved index, the console app with its lifespan running (Starlette's test client), the
pass in a real forkserver child embedding with the packaged model; recall in the console's own process.

Nothing here measures time: each wait polls ``/api/index`` (which never stops a pass) for a state, with a generous
guard against a hang.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from cli.idle_index import IdleIndexer
from cli.main import cli
from cli.ui import create_app
from kg.workspace import Workspace

CAR = "The car would not start this morning"
INLINE_LIMIT = 40  # the workspace's [recall] inline_index_limit here (500 by default): the same code path, fewer items
ITEMS = 60  # more than a recall builds inline: without an index, recall is BM25-only
TOKEN = "console-idle-test-token-0123456789"  # noqa: S105 - a test token


def _store(ws: Workspace) -> str:
    """``ITEMS`` long-term items of agent a (none indexed; the short-term store would archive all but 200) and one
    private item of b about a car; the uid of a's car item. The workspace's recall embeds at most ``INLINE_LIMIT``
    items inline (``mabos.toml``, read by the console and by the indexer's child when they open the workspace)."""
    config = ws.path / "mabos.toml"
    config.write_text(config.read_text() + f"\n[recall]\ninline_index_limit = {INLINE_LIMIT}\n")
    uid = ws.memory.store_item("a", CAR, type="fact", store="long_term").item.uid
    for n in range(ITEMS - 1):
        ws.memory.store_item("a", f"note {n}: the meeting about budget line {n} moved to room {n % 7}", type="fact",
                             store="long_term")  # fmt: skip
    ws.agents.add("b")
    ws.memory.store_item("b", "Bob's car would not start this morning either", type="fact", store="long_term")
    return uid


def _poll(client: TestClient, done: Callable[[dict[str, Any]], bool], seen: list[dict[str, Any]]) -> dict[str, Any]:
    """``/api/index`` until ``done`` holds for it (each answer kept in ``seen``)."""
    guard = time.monotonic() + 600  # a guard against a hang, not a timing assertion
    while time.monotonic() < guard:
        status = client.get("/api/index").json()
        seen.append(status)
        if done(status):
            return status
        time.sleep(0.05)
    raise AssertionError(f"the index never got there; last: {seen[-1:]}")


def _recall(client: TestClient, agent: str) -> dict[str, Any]:
    answer = client.get("/api/memory", params={"agent": agent, "q": CAR, "k": "5"})
    assert answer.status_code == 200, answer.text
    recall: dict[str, Any] = answer.json()["recall"]
    return recall


def _vectors(ws: Workspace) -> dict[str, Any]:
    assert ws.vectors is not None
    return ws.vectors.status()


def test_the_idle_console_builds_the_missing_index_and_recall_leaves_bm25(embedded_ws: Workspace) -> None:
    ws = embedded_ws
    car = _store(ws)
    assert _vectors(ws)["state"] == "missing"
    app = create_app(ws.path, agent="a", index_when_idle=0.2)
    app.state.indexer.batch = 4  # a progress report every 4 items: the polls see the pass on its way
    app.state.indexer.poll = 0.02  # look at the idle state often (0.5 s by default): a pass starts soon after 0.2 s
    seen: list[dict[str, Any]] = []
    with TestClient(app, base_url="http://127.0.0.1") as client:
        before = _recall(client, "a")
        assert before["mode"] == "bm25" and any("BM25 only" in note for note in before["notes"])
        assert not before["fallback"] and before["hits"][0]["uid"] == car  # one step down: the store, not the files
        final = _poll(client, lambda s: s["state"] == "up to date", seen)
        after = _recall(client, "a")
        overview = client.get("/api/overview", params={"agent": "a"}).json()
        page = client.get("/", params={"agent": "a"}).text
        other = _recall(client, "b")
    assert any(s["state"] == "indexing" and s["done"] for s in seen)  # progress was shown on the way
    assert (final["done"], final["total"], final["backlog"]) == (ITEMS + 1, ITEMS + 1, 0)
    assert after["mode"] == "hybrid" and not any("BM25 only" in note for note in after["notes"])
    assert after["hits"][0]["uid"] == car and after["hits"][0]["bars"]["vector"] > 0
    assert overview["index"]["state"] == "up to date" and 'id="index-status"' in page and "up to date" in page
    assert car not in {hit["uid"] for hit in other["hits"]}  # b's recall through the new index: none of a's items
    status = _vectors(ws)  # the saved index, as another process sees it
    n = ITEMS + 1
    assert (status["state"], status["items"], status["indexed"], status["backlog"]) == ("ready", n, n, 0)


def test_a_request_during_the_build_is_answered_first_and_the_build_loses_nothing(embedded_ws: Workspace) -> None:
    ws = embedded_ws
    _store(ws)
    app = create_app(ws.path, agent="a", index_when_idle=0.2)
    indexer: IdleIndexer = app.state.indexer
    indexer.pass_items, indexer.batch = 40, 8  # checkpoints and reports small enough to land a request mid-pass
    indexer.poll = 0.02  # the next pass starts soon after 0.2 idle seconds (polls every 0.5 s by default)
    seen: list[dict[str, Any]] = []
    with TestClient(app, base_url="http://127.0.0.1") as client:
        _poll(client, lambda s: s["state"] == "indexing" and (s["done"] or 0) > 0, seen)
        answered = _recall(client, "a")  # arrives while the pass runs
        indexer.events.append("answered")
        final = _poll(client, lambda s: s["state"] == "up to date", seen)
    assert answered["mode"] == "bm25" and answered["hits"]  # answered from the store while the index was unfinished
    events = indexer.events
    # the pass was stopped before the request was served, then the next idle period resumed the build
    assert events.index("stopped") < events.index("answered") < events.index("done")
    assert "done" not in events[: events.index("stopped")]
    assert events[events.index("answered") :].count("start") >= 1
    assert final["passes"] >= 2 and final["state"] == "up to date"
    status = _vectors(ws)  # killed mid-build: every item indexed exactly once
    n = ITEMS + 1
    assert (status["state"], status["items"], status["indexed"], status["backlog"]) == ("ready", n, n, 0)


@pytest.mark.usefixtures("no_embedder")
def test_index_progress_is_behind_the_token_and_shows_an_agent_token_no_counts(tool_ws: Workspace) -> None:
    created = tool_ws.tokens.create("b", label="console")
    app = create_app(tool_ws.path, token=TOKEN, require_token=True, index_when_idle=0.2)
    with TestClient(app, base_url="http://192.0.2.10") as client:
        refused = client.get("/api/index")
        assert refused.status_code == 401 and "token: required" in refused.text
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        operator = _poll(client, lambda s: s["state"] == "unavailable", [])  # the child found no embedder
        assert operator["message"] == "no embedder configured" and operator["passes"] >= 1
        client.headers["Authorization"] = f"Bearer {created.secret}"
        agent_view = client.get("/api/index").json()
        overview = client.get("/api/overview").json()
    assert operator["text"] == "unavailable: no embedder configured"
    assert agent_view == {"state": "unavailable", "text": "unavailable"}  # no workspace-wide counts for one agent
    assert overview["agent_id"] == "b" and overview["index"] == agent_view


@pytest.mark.usefixtures("no_embedder")
def test_off_by_default_in_the_library_and_with_no_index_when_idle(tool_ws: Workspace) -> None:
    with TestClient(create_app(tool_ws.path, agent="a"), base_url="http://127.0.0.1") as client:
        assert client.get("/api/index").json() == {"state": "off", "text": "off (--no-index-when-idle)"}
        assert client.get("/api/overview").json()["index"]["state"] == "off"
        assert 'id="index-status"' not in client.get("/").text
    assert create_app(tool_ws.path).state.indexer is None
    for flags, seconds in (([], 30.0), (["--index-when-idle", "5"], 5.0), (["--no-index-when-idle"], 0.0)):
        plan = CliRunner().invoke(cli, ["ui", "--dry-run", "--json", "--workspace", str(tool_ws.path), *flags])
        assert plan.exit_code == 0, plan.output
        assert json.loads(plan.stdout)["index_when_idle_s"] == seconds  # on by default, as serve --mcp
