"""The TypeDB client's offline behaviour: settings, error translation, an unreachable server, schema text.

Nothing here needs a server: an address with nothing listening (127.0.0.1:1) is refused at once by the real
driver, which is exactly the "configured but unreachable" case. Queries against a live server are in
tests/integration (marker ``typedb``).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from kg.errors import BackendError, BackendUnavailableError, InputError, WorkspaceError
from kg.store.typedb.client import TypeDBClient, translate
from kg.store.typedb.schema import check_read_only, fingerprint
from kg.store.typedb.settings import TypeDBSettings, check_address, resolve_settings
from kg.workspace import ONTOLOGY_DIR, init_workspace
from sync.shared_graph import push_outbox, run_typeql, schema_queries, status, sync_schema, typedb_settings
from sync.shared_graph_requests import SchemaSyncRequest, TypeQLRequest


def _closed_port() -> str:
    """An address on this machine where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"127.0.0.1:{port}"


SETTINGS = TypeDBSettings(address="db.example:1729", database="mabos_w")


def test_address_precedence_flag_then_env_then_config() -> None:
    env = {"MABOS_TYPEDB_ADDRESS": "env-host:1729"}
    kw = {"workspace_name": "w", "config_address": "conf-host:1729"}
    assert resolve_settings(**kw, override="flag-host:1", environ=env).address == "flag-host:1"  # type: ignore[union-attr]
    assert resolve_settings(**kw, environ=env).address == "env-host:1729"  # type: ignore[union-attr]
    assert resolve_settings(**kw, environ={}).address == "conf-host:1729"  # type: ignore[union-attr]
    assert resolve_settings(workspace_name="w", environ={}) is None


def test_database_and_credentials_defaults_and_env() -> None:
    found = resolve_settings(workspace_name="my-space", override="h:1729", environ={})
    assert found is not None
    assert (found.database, found.username, found.password) == ("mabos_my_space", "admin", "password")
    env = {"MABOS_TYPEDB_USERNAME": "ops", "MABOS_TYPEDB_PASSWORD": "s3cret", "MABOS_TYPEDB_DATABASE": "shared"}
    found = resolve_settings(workspace_name="w", override="h:1729", environ=env)
    assert found is not None
    assert (found.database, found.username, found.password) == ("shared", "ops", "s3cret")
    assert "s3cret" not in repr(found) and "s3cret" not in str(found.public())


@pytest.mark.parametrize("bad", ["http://h:1729", "h", "h:0", "h:99999", "h:17 29", ":1729", "h:1729/x"])
def test_a_bad_address_names_its_source(bad: str) -> None:
    with pytest.raises(InputError, match="--typedb: must be host:port"):
        resolve_settings(workspace_name="w", override=bad, environ={})
    with pytest.raises(InputError, match=r"typedb\.address"):
        check_address(bad)


def test_a_bad_database_name_is_refused() -> None:
    with pytest.raises(InputError, match=r"typedb\.database"):
        resolve_settings(workspace_name="w", override="h:1", environ={"MABOS_TYPEDB_DATABASE": "a b"})


def test_driver_errors_are_translated_by_kind() -> None:
    refused = RuntimeError("Unable to connect to TypeDB server(s).\nDetails: [CXN04] Connection Error: refused")
    error = translate(refused, SETTINGS, "connect")
    assert isinstance(error, BackendUnavailableError)
    assert str(error) == "typedb: db.example:1729 is unreachable (connect): [CXN04] Connection Error: refused"
    typing = RuntimeError("[QEX7] Type-inference was unable to find compatible types\nfor $x")
    error = translate(typing, SETTINGS, "query")
    assert isinstance(error, BackendError) and not isinstance(error, BackendUnavailableError)
    assert "\n" not in str(error) and "database mabos_w" in str(error)


def test_an_unreachable_server_fails_fast_with_exit_code_3() -> None:
    client = TypeDBClient(TypeDBSettings(address=_closed_port(), database="mabos_w"))
    started = time.monotonic()
    with pytest.raises(BackendUnavailableError, match="unreachable") as caught:
        client.write(["insert $x isa agent;"])
    assert caught.value.exit_code == 3
    assert time.monotonic() - started < 10
    report = client.status()
    assert report["reachable"] is False and "unreachable" in report["error"]
    assert "password" not in report


def test_workspace_status_and_push_without_and_with_a_dead_server(tmp_path: Path) -> None:
    ws = init_workspace(tmp_path / "w")
    try:
        ws.agents.add("sales-agent", name="Sales")
        pending = ws.ports.outbox.counts()["pending"]
        assert pending > 0
        report = status(ws, override=_closed_port())
        assert report["configured"] is True and report["reachable"] is False
        with pytest.raises(BackendUnavailableError):
            push_outbox(ws, override=_closed_port())
        with pytest.raises(BackendUnavailableError):
            sync_schema(ws, override=_closed_port())
        assert ws.ports.outbox.counts()["pending"] == pending  # nothing acknowledged, nothing lost
    finally:
        ws.close()


def test_not_configured_says_how_to_configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    ws = init_workspace(tmp_path / "w")
    try:
        assert typedb_settings(ws) is None
        assert status(ws)["configured"] is False
        with pytest.raises(WorkspaceError, match="MABOS_TYPEDB_ADDRESS"):
            push_outbox(ws)
    finally:
        ws.close()


def test_the_shared_graph_services_take_their_requests(tmp_path: Path) -> None:
    """push_outbox, sync_schema and run_typeql take the request the typedb tools' inputs extend (issue 34), or its
    fields as keywords validated into it: a bad value or a field beside a request is refused naming the field before
    any server is asked (the address here is dead: reaching it would be BackendUnavailableError)."""
    ws = init_workspace(tmp_path / "w")
    try:
        with pytest.raises(InputError) as bad:
            push_outbox(ws, batch=0, override=_closed_port())
        assert bad.value.field == "batch"
        with pytest.raises(InputError) as beside:
            sync_schema(ws, SchemaSyncRequest(if_changed=True), if_changed=False, override=_closed_port())
        assert beside.value.field == "if_changed"
        with pytest.raises(InputError, match="read"):  # a write stage without write=True: refused before connecting
            run_typeql(ws, TypeQLRequest(query="insert $x isa goal;"), override=_closed_port())
        with pytest.raises(BackendUnavailableError):
            run_typeql(ws, TypeQLRequest(query="match $g isa goal;", limit=1), override=_closed_port())
    finally:
        ws.close()


def test_workspace_schema_is_base_then_ontology(tmp_path: Path) -> None:
    ws = init_workspace(tmp_path / "w")
    try:
        queries = schema_queries(ws.path / ONTOLOGY_DIR)
        assert len(queries) == 2
        assert queries[0].lstrip().startswith("define") and "entity record," in queries[0]
        assert "define" in queries[1] and "entity goal sub cognitive-node" in queries[1]
        assert fingerprint(queries) == fingerprint(list(queries))
        assert fingerprint(queries) != fingerprint([*queries[:1], queries[1] + "\n"])
        assert schema_queries(tmp_path / "no-ontologies") == queries[:1]
    finally:
        ws.close()


@pytest.mark.parametrize(
    "query",
    ['match $x isa goal; insert $y isa goal;', "match $x isa goal; delete $x;", "define entity x;",
     'match $g isa goal; update $g has node-status "done";', "put $x isa agent, has uid \"a\";"],
)  # fmt: skip
def test_read_only_queries_refuse_write_stages(query: str) -> None:
    with pytest.raises(InputError, match="read-only query cannot contain"):
        check_read_only(query)


def test_read_only_check_ignores_strings_and_variables() -> None:
    check_read_only('match $put isa goal, has has-content "please delete this"; fetch { "c": $put.has-content };')
