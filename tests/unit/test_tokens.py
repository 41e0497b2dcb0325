"""API tokens (kg/tokens.py over kg/store/sqlite/tokens.py, migration 8) and ``mabos token create|list|revoke``.

A real workspace on a fixed clock: a token verifies until it is revoked or expires, only its hash is stored, a
secret of another form or with one character changed verifies as nothing, and the CLI prints the secret once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from kg.clock import FixedClock
from kg.errors import InputError, NotFoundError
from kg.tokens import TokenService, hash_secret, parse_lifetime
from kg.workspace import DB_FILE, STATE_DIR, Workspace, init_workspace
from tests.conftest import T0


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def ws(tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    workspace = init_workspace(tmp_path / "ws", clock=clock)
    workspace.agents.add("alice")
    workspace.agents.add("bob")
    yield workspace
    workspace.close()


def test_a_token_verifies_as_its_agent_until_revoked(ws: Workspace) -> None:
    created = ws.tokens.create("alice", label="laptop")
    assert created.secret.startswith(f"mabos_{created.token.token_id}_")
    info = ws.tokens.verify(created.secret)
    assert info is not None and info.agent_id == "alice" and info.status == "active" and info.label == "laptop"
    assert ws.tokens.revoke(created.token.token_id).status == "revoked"
    assert ws.tokens.verify(created.secret) is None
    again = ws.tokens.revoke(created.token.token_id)  # revoking twice keeps the first time
    assert again.revoked_at == ws.tokens.list("alice")[0].revoked_at


def test_a_token_expires(ws: Workspace, clock: FixedClock) -> None:
    created = ws.tokens.create("bob", lifetime=parse_lifetime("2h"))
    clock.advance(timedelta(hours=1, minutes=59))
    assert ws.tokens.verify(created.secret) is not None
    clock.advance(timedelta(minutes=1))
    assert ws.tokens.verify(created.secret) is None
    assert [t.status for t in ws.tokens.list("bob")] == ["expired"]


def test_only_the_hash_is_stored(ws: Workspace) -> None:
    created = ws.tokens.create("alice")
    with sqlite3.connect(ws.path / STATE_DIR / DB_FILE) as conn:
        rows = conn.execute("SELECT * FROM api_tokens").fetchall()
    assert len(rows) == 1 and created.secret not in repr(rows) and hash_secret(created.secret) in rows[0]


def test_forged_and_malformed_secrets_verify_as_nothing(ws: Workspace) -> None:
    secret = ws.tokens.create("alice").secret
    last = "A" if secret[-1] != "A" else "B"
    other = ws.tokens.create("bob").secret
    spliced = secret[: len("mabos_") + 12] + other[len("mabos_") + 12 :]  # alice's id, bob's random part
    for forged in [secret[:-1] + last, spliced, secret + "x", secret.upper(), "", "Bearer " + secret, "mabos__x"]:
        assert ws.tokens.verify(forged) is None, forged
    assert ws.tokens.verify(None) is None  # type: ignore[arg-type]


def test_refusals_name_the_field(ws: Workspace) -> None:
    with pytest.raises(NotFoundError, match="agent: no agent 'carol'"):
        ws.tokens.create("carol")
    with pytest.raises(InputError, match=r"^agent: "):
        ws.tokens.create("Not An Id")
    with pytest.raises(InputError, match=r"^label: "):
        ws.tokens.create("alice", label="two\nlines")
    with pytest.raises(NotFoundError, match=r"^token: no token 'nope'"):
        ws.tokens.revoke("nope")
    for bad in ("30", "0d", "3661d", "soon", "1y"):
        with pytest.raises(InputError, match=r"^expires: "):
            parse_lifetime(bad)
    assert ws.tokens.list() == []


def test_the_service_works_on_any_token_store(ws: Workspace, clock: FixedClock) -> None:
    # The console will build its own service on the same port: the same store gives the same answers.
    other = TokenService(ws._store.tokens, clock)
    secret = ws.tokens.create("alice").secret
    found = other.verify(secret)
    assert found is not None and found.agent_id == "alice"
    assert other.active_count() == 1


def test_the_cli_creates_lists_and_revokes(ws: Workspace) -> None:
    runner = CliRunner()
    base = ["--workspace", str(ws.path)]
    made = runner.invoke(cli, ["token", "create", "--agent", "alice", "--expires", "30d", "--json", *base])
    assert made.exit_code == 0, made.output
    created = json.loads(made.output)
    secret, token_id = created["secret"], created["token"]["token_id"]
    assert ws.tokens.verify(secret) is not None
    plain = runner.invoke(cli, ["token", "create", "--agent", "bob", *base])
    assert plain.exit_code == 0 and "mabos_" in plain.output and "shown once" in plain.output
    listed = runner.invoke(cli, ["token", "list", "--agent", "alice", "--json", *base])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)["tokens"]
    assert [(r["token_id"], r["agent_id"], r["status"]) for r in rows] == [(token_id, "alice", "active")]
    assert "secret" not in listed.output and secret not in listed.output
    everyone = runner.invoke(cli, ["token", "list", *base])
    assert everyone.exit_code == 0 and "alice" in everyone.output and "bob" in everyone.output
    revoked = runner.invoke(cli, ["token", "revoke", token_id, "--json", *base])
    assert revoked.exit_code == 0 and json.loads(revoked.output)["status"] == "revoked"
    assert ws.tokens.verify(secret) is None
    bad = runner.invoke(cli, ["token", "create", "--agent", "alice", "--expires", "forever", *base])
    assert bad.exit_code == 1 and bad.output.strip().splitlines() == [
        "error: expires: must be a number and a unit m, h, d or w (e.g. 30d), got 'forever'"
    ]
    unknown = runner.invoke(cli, ["token", "revoke", "000000000000", *base])
    assert unknown.exit_code == 1 and "no token" in unknown.output
