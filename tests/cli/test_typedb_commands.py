"""``mabos typedb ...`` and ``mabos sync push`` without a server: configured or not, they say so and change nothing.

No TypeDB server runs here; "configured but unreachable" is a real refused connection (nothing listens on
127.0.0.1:1). The same commands run against a live server in tests/integration (marker ``typedb``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Mabos

DEAD = "127.0.0.1:1"


def test_status_without_typedb_says_not_configured(ready: Mabos) -> None:
    report = ready.json("typedb", "status")
    assert report["configured"] is False
    assert "MABOS_TYPEDB_ADDRESS" in report["message"]
    assert report["outbox"]["pending"] > 0


def test_status_with_a_dead_server_reports_unreachable_and_exits_0(ready: Mabos) -> None:
    result = ready("typedb", "status", "--json", env={"MABOS_TYPEDB_ADDRESS": DEAD})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["configured"], report["reachable"], report["configured_by"]) == (True, False, "MABOS_TYPEDB_ADDRESS")
    assert report["database"] == f"mabos_{ready.workspace.name}".replace("-", "_")


def test_push_to_a_dead_server_exits_3_and_keeps_the_outbox(ready: Mabos) -> None:
    before = ready.json("typedb", "status")["outbox"]
    result = ready("sync", "push", "--typedb", DEAD)
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: typedb: {DEAD} is unreachable") and result.stderr.count("\n") == 1
    assert ready.json("typedb", "status")["outbox"] == before


def test_push_without_typedb_is_a_user_error(ready: Mabos) -> None:
    result = ready("sync", "push")
    assert result.exit_code == 1
    assert "typedb: not configured" in result.stderr


def test_a_read_only_query_refuses_write_stages_before_connecting(ready: Mabos) -> None:
    # No address at all: the refusal comes first, so it cannot have been the server's.
    result = ready("typedb", "query", "match $g isa goal; delete $g;")
    assert result.exit_code == 1
    assert result.stderr == "error: query: a read-only query cannot contain a 'delete' stage (use --write)\n"


def test_a_bad_address_is_a_usage_error_naming_the_option(ready: Mabos) -> None:
    result = ready("typedb", "status", "--typedb", "http://localhost:1729")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: --typedb: must be host:port")


def test_a_write_with_typedb_down_succeeds_and_warns_once(ready: Mabos) -> None:
    env = {"MABOS_TYPEDB_ADDRESS": DEAD}
    result = ready("agent", "add", "ops-agent", "--name", "Ops", env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Created agent ops-agent")
    assert result.stderr.startswith(f"warning: typedb: {DEAD} is unreachable") and result.stderr.count("\n") == 1
    assert "outbox events waiting for 'mabos sync push'" in result.stderr
    again = ready("agent", "add", "qa-agent", "--name", "QA", env=env)  # the breaker is open: no new attempt
    assert again.exit_code == 0 and "circuit breaker open" in again.stderr
    quiet = ready("agent", "list", env=env)  # nothing committed: nothing to say
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_graph_queries_fall_back_to_the_local_store_when_typedb_is_down(ready: Mabos) -> None:
    result = ready("graph", "query", "goals-behind", "--at", "2030-01-01", "--json", env={"MABOS_TYPEDB_ADDRESS": DEAD})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["source"] == "local"
    assert result.stderr.startswith(f"warning: typedb: {DEAD} is unreachable") and result.stderr.count("\n") == 1
    assert result.stderr.rstrip().endswith("answering from the local store")
    again = ready("graph", "query", "blocked-steps", env={"MABOS_TYPEDB_ADDRESS": DEAD})
    assert again.exit_code == 0 and "circuit breaker open" in again.stderr
    plain = ready("graph", "query", "blocked-steps", "--json")  # not configured: local, nothing to warn about
    assert plain.exit_code == 0 and plain.stderr == "" and json.loads(plain.stdout)["source"] == "local"
