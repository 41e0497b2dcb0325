"""The console's safety: CSRF on the two actions, tokens on every request, agent tokens fixing the agent,
loopback-only Host names without a token, and nothing written on a refused request."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from starlette.testclient import TestClient

from cli.ui import create_app
from cli.ui.security import TOKEN_COOKIE, check_bind
from kg.errors import InputError
from kg.workspace import open_workspace

if TYPE_CHECKING:
    from conftest import Built

TOKEN = "console-test-token-0123456789"  # noqa: S105 - a test token


@pytest.fixture
def token_client(built: Built) -> Iterator[TestClient]:
    """The console with a token, as for a non-loopback host."""
    with TestClient(create_app(built.path, agent="a", token=TOKEN), base_url="http://192.0.2.10") as test_client:
        yield test_client


def _csrf(client: TestClient) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/graph").text)
    assert found is not None
    return found.group(1)


def _status(built: Built, uid: str) -> str:
    with open_workspace(built.path) as ws:
        return str(ws.ports.proposals.get(uid).status.value)


def test_approve_needs_the_csrf_token_and_then_merges(client: TestClient, built: Built) -> None:
    uid = built.uids["proposal"]
    for forged in ({"agent": "a", "uid": uid}, {"agent": "a", "uid": uid, "csrf": "guess"}):
        refused = client.post("/ontology/approve", data=forged, follow_redirects=False)
        assert refused.status_code == 403 and "error: csrf: missing or wrong CSRF token" in refused.text
        assert client.post("/api/ontology/approve", data=forged).status_code == 403
    assert _status(built, uid) == "validated"
    done = client.post("/ontology/approve", data={"agent": "a", "uid": uid, "csrf": _csrf(client)},
                       follow_redirects=False)  # fmt: skip
    assert done.status_code == 303 and "done=merged" in done.headers["location"]
    assert _status(built, uid) == "approved-merged"
    page = client.get(done.headers["location"]).text
    assert 'id="proposal-status">approved-merged<' in page and "approve (merge)" not in page
    # issue 35.3: after the merge, the page says so and shows what it changed (before: a diff inserting it again)
    assert "What the merge changed" in page and "Diff of a merge now" not in page
    assert f"# {uid} is merged into ecommerce.jsonld by a at " in page
    assert page.count("+      &#34;@id&#34;: &#34;ecommerce:DropshipFulfillment&#34;,") == 1
    ontology = (built.path / "ontologies" / "ecommerce.jsonld").read_text(encoding="utf-8")
    assert "DropshipFulfillment" in ontology


def test_json_actions_take_the_csrf_header(client: TestClient, built: Built) -> None:
    uid = built.uids["proposal"]
    headers = {"X-CSRF-Token": _csrf(client)}
    missing_reason = client.post("/api/ontology/reject", data={"uid": uid}, headers=headers)
    assert missing_reason.status_code == 400 and missing_reason.json()["error"].startswith("reason:")
    assert _status(built, uid) == "validated"
    rejected = client.post("/api/ontology/reject", data={"uid": uid, "reason": "not now"}, headers=headers).json()
    assert rejected["done"] == "rejected" and rejected["proposal"]["status"] == "rejected"
    again = client.post("/api/ontology/approve", data={"uid": uid}, headers=headers)
    assert again.status_code == 403 and "may not review" in again.json()["error"]
    assert _status(built, uid) == "rejected"


def test_a_cannot_act_on_bs_private_proposal(client: TestClient, built: Built) -> None:
    uid = built.uids["b_proposal"]
    headers = {"X-CSRF-Token": _csrf(client)}
    refused = client.post("/api/ontology/reject", data={"uid": uid, "reason": "x"}, headers=headers)
    assert refused.status_code == 404 and "BobSecretThing" not in refused.text
    assert _status(built, uid) == "pending"


def test_actions_are_post_only(client: TestClient) -> None:
    assert client.get("/ontology/approve").status_code == 405


def test_a_token_is_required_on_every_request(token_client: TestClient) -> None:
    for path in ("/", "/api/graph", "/static/console.js", "/static/cytoscape.min.js"):
        response = token_client.get(path)
        assert response.status_code == 401 and response.text.startswith("error: token: required")
    assert token_client.get("/", headers={"Authorization": "Bearer wrong-token-0000000000"}).status_code == 401
    assert token_client.get("/api/graph", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_a_token_login_sets_a_cookie_and_drops_the_token_from_the_address(token_client: TestClient) -> None:
    assert token_client.get("/graph?token=not-the-token", follow_redirects=False).status_code == 401
    login = token_client.get(f"/graph?agent=a&token={TOKEN}", follow_redirects=False)
    assert login.status_code == 303 and login.headers["location"] == "/graph?agent=a"
    cookie = login.headers["set-cookie"]
    assert cookie.startswith(f"{TOKEN_COOKIE}={TOKEN}") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    token_client.cookies.set(TOKEN_COOKIE, TOKEN)
    assert token_client.get("/graph?agent=a").status_code == 200


def test_an_agent_token_fixes_the_acting_agent(built: Built) -> None:
    with open_workspace(built.path) as ws:
        created = ws.tokens.create("b", label="console")
    app = create_app(built.path, require_token=True)
    with TestClient(app, base_url="http://192.0.2.10") as client:
        client.headers["Authorization"] = f"Bearer {created.secret}"
        graph = client.get("/api/graph").json()
        assert graph["agent_id"] == "b" and "entity:secretcorp" in {n["id"] for n in graph["nodes"]}
        refused = client.get("/api/graph?agent=a")
        assert refused.status_code == 403 and "acts as 'b'" in refused.json()["error"]
        assert '<option value="a"' not in client.get("/").text
        with open_workspace(built.path) as ws:
            ws.tokens.revoke(created.token.token_id)
        assert client.get("/api/graph").status_code == 401


def test_without_a_token_only_loopback_host_names_are_answered(client: TestClient) -> None:
    assert client.get("/", headers={"Host": "localhost:8765"}).status_code == 200
    rebound = client.get("/", headers={"Host": "evil.example:8765"})
    assert rebound.status_code == 421 and "its loopback address only" in rebound.text
    foreign = client.get("/api/overview", headers={"Origin": "http://evil.example:8765"})
    assert foreign.status_code == 403 and foreign.text.startswith("error: origin:")
    for origin in ("null", "file://", "http://evil.example"):
        assert client.get("/api/overview", headers={"Origin": origin}).status_code == 403
    assert client.get("/api/overview", headers={"Origin": "http://127.0.0.1:8765"}).status_code == 200


def test_every_answer_carries_the_content_security_policy(client: TestClient, token_client: TestClient) -> None:
    """No inline script may run in the console: the CSP says so on pages, JSON, static files and refusals."""
    answers = [client.get(p) for p in ("/", "/graph", "/ontology", "/api/overview", "/static/graph.js")]
    answers += [client.get("/", headers={"Host": "evil.example"}), token_client.get("/")]  # refusals: 421, 401
    for answer in answers:
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self';" in policy and "unsafe-inline" not in policy.split("style-src")[0]
        assert "object-src 'none'" in policy and "base-uri 'none'" in policy and "frame-ancestors 'none'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert [a.status_code for a in answers[-2:]] == [421, 401]


def test_no_template_holds_inline_script_handlers_or_unescaped_output() -> None:
    """The class of the graph panel's XSS, server side: no template may mark data safe, write script inline or
    carry an ``on*=`` handler or a ``javascript:`` URL (the CSP would block them; they must not be needed)."""
    root = Path(__file__).resolve().parents[2] / "cli" / "ui" / "templates"
    texts = {p.name: p.read_text(encoding="utf-8") for p in root.glob("*.html")}
    assert len(texts) >= 10
    for name, text in texts.items():
        assert "|safe" not in text.replace(" ", "") and "Markup" not in text, name
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), name
        assert not re.search(r"\son[a-z]+\s*=", text, re.IGNORECASE), name
        assert "javascript:" not in text.lower(), name
        assert not re.search(r"\s[a-zA-Z-]+=\{\{", text), name  # every attribute value holding data is quoted


@pytest.mark.parametrize(
    ("host", "token", "agent_tokens", "message"),
    [
        ("0.0.0.0", None, 0, "token: required when --host is not a loopback address"),  # noqa: S104
        ("192.0.2.1", "short", 0, "token: must be at least 16 characters"),
    ],
)
def test_binding_off_loopback_needs_a_token(host: str, token: str | None, agent_tokens: int, message: str) -> None:
    with pytest.raises(InputError, match=message):
        check_bind(host, token, agent_tokens)


def test_binding_rules_that_pass() -> None:
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("0.0.0.0", TOKEN)  # noqa: S104
    check_bind("192.0.2.1", None, agent_tokens=2)
