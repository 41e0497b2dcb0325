"""A command's session starts write-through when a TypeDB address is given, and only then (cli.common.Session).

The session asks the settings before importing write-through (a command without TypeDB saves the import, issue
33): with ``MABOS_TYPEDB_ADDRESS`` naming a port nobody listens on, a write still succeeds and the change waits in
the outbox, said in one warning line; without it, nothing is said. No TypeDB server runs here: the refused
connection is real, and is the case this checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")


def test_an_address_given_starts_write_through_and_the_change_waits(ready: Mabos) -> None:
    result = ready("fact", "assert", *A, "acme", "hasRevenue", "5", "--json",
                   env={"MABOS_TYPEDB_ADDRESS": "127.0.0.1:1"})  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("warning: typedb: 127.0.0.1:1 is unreachable")
    assert "outbox events waiting for 'mabos sync push'" in result.stderr


def test_no_address_no_write_through(ready: Mabos) -> None:
    result = ready("fact", "assert", *A, "acme", "hasRevenue", "5", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
