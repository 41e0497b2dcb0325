"""The "nothing changed" snapshot (``tests.conftest.snapshot_workspace``) that hundreds of refusal tests compare: it
sees every change of the store's content and of the file tree, and only those (not the order rows lie on disk)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from kg.workspace import DB_FILE, STATE_DIR, Workspace
from tests.conftest import snapshot_workspace


def _sql(ws: Workspace, statement: str) -> None:
    conn = sqlite3.connect(ws.path / STATE_DIR / DB_FILE)
    try:
        with conn:
            conn.execute(statement)
    finally:
        conn.close()


def test_the_same_content_gives_the_same_snapshot_whatever_the_row_order(workspace: Workspace) -> None:
    workspace.agents.add("a")
    workspace.memory.store_item("a", "first")
    workspace.memory.store_item("a", "second")
    before = snapshot_workspace(workspace)
    assert snapshot_workspace(workspace) == before
    # the same rows written back in the opposite order (new rowids, new pages): content only is compared
    _sql(workspace, "CREATE TABLE copy AS SELECT * FROM outbox_log")
    _sql(workspace, "DELETE FROM outbox_log")
    _sql(workspace, "INSERT INTO outbox_log SELECT * FROM copy ORDER BY rowid DESC")
    _sql(workspace, "DROP TABLE copy")
    _sql(workspace, "VACUUM")
    assert snapshot_workspace(workspace) == before


def test_a_changed_row_is_seen(workspace: Workspace) -> None:
    workspace.agents.add("a")
    workspace.memory.store_item("a", "first")
    before = snapshot_workspace(workspace)
    wal = workspace.path / STATE_DIR / f"{DB_FILE}-wal"
    wal_before = wal.read_bytes()
    _sql(workspace, "UPDATE memory_items SET importance = importance + 0.125")
    after = snapshot_workspace(workspace)
    assert after["store"] != before["store"]
    assert wal.read_bytes() != wal_before and after["files"] == before["files"]  # the database files: the store's


def test_a_new_table_is_seen(workspace: Workspace) -> None:
    before = snapshot_workspace(workspace)
    _sql(workspace, "CREATE TABLE extra (x)")
    assert snapshot_workspace(workspace)["store"] != before["store"]


def test_file_bytes_names_folders_and_links_are_seen(workspace: Workspace) -> None:
    note = workspace.path / "notes.md"
    text = b"# Notes\n"
    note.write_bytes(text)
    before = snapshot_workspace(workspace)
    states = []
    note.write_bytes(text + b" ")
    states.append(snapshot_workspace(workspace))
    note.write_bytes(text)
    assert snapshot_workspace(workspace) == before  # the same bytes again
    note.rename(note.with_name("renamed.md"))
    states.append(snapshot_workspace(workspace))
    note.with_name("renamed.md").rename(note)
    (workspace.path / "empty").mkdir()
    states.append(snapshot_workspace(workspace))
    (workspace.path / "empty").rmdir()
    os.symlink(note, workspace.path / "link.md")  # a link is read as its target's bytes
    states.append(snapshot_workspace(workspace))
    (workspace.path / "link.md").unlink()
    assert all(state["files"] != before["files"] for state in states)
    assert len({state["files"] for state in states}) == len(states)
    assert snapshot_workspace(workspace) == before


def test_a_file_under_a_folder_named_like_the_state_folder_elsewhere_is_seen(workspace: Workspace) -> None:
    before = snapshot_workspace(workspace)
    nested = Path(workspace.path / "agents" / STATE_DIR)
    nested.mkdir(parents=True)
    (nested / DB_FILE).write_bytes(b"not the store")
    assert snapshot_workspace(workspace)["files"] != before["files"]
