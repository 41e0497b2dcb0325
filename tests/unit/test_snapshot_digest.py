"""The "nothing changed" snapshot (``tests.snapshots.snapshot_workspace``) that hundreds of refusal tests compare: it
sees every change of the store's content and of the file tree, and only those (not the order rows lie on disk)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from kg.workspace import DB_FILE, STATE_DIR, Workspace
from tests.snapshots import snapshot_workspace


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


def test_a_digest_kept_for_unchanged_bytes_is_the_digest_read_afresh(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sqlite_digest`` reads the tables again only when the database file, its WAL or its journal changed byte for
    byte; what it returns is always what reading them gives: through writes, a checkpoint, the closing of the store
    and the empty WAL a read-only connection creates."""
    import tests.snapshots as shared  # noqa: PLC0415 - the module the fixtures use, to count its reads

    reads: list[Path] = []
    read_tables = shared._content_digest
    monkeypatch.setattr(shared, "_content_digest", lambda path: reads.append(path) or read_tables(path))
    db = workspace.path / STATE_DIR / DB_FILE
    workspace.agents.add("a")
    seen = []
    for change in (
        "",
        "UPDATE agents SET name = 'A' WHERE agent_id = 'a'",
        "PRAGMA wal_checkpoint(TRUNCATE)",  # the content moves from the WAL into the database file: the same content
        "UPDATE agents SET name = 'B' WHERE agent_id = 'a'",
        "close",  # the last connection closes: the WAL is checkpointed and removed
    ):
        if change == "close":
            workspace.close()
        elif change:
            _sql(workspace, change)
        before = len(reads)
        digest = shared.sqlite_digest(db)
        assert len(reads) == before + 1 and digest == read_tables(db)  # changed bytes: the tables are read
        assert shared.sqlite_digest(db) == digest and len(reads) == before + 1  # the same bytes: the digest kept
        seen.append(digest)
    assert Path(f"{db}-wal").read_bytes() == b""  # created by the read-only connection after the close
    assert seen[1] == seen[2] and seen[3] == seen[4]
    assert len({seen[0], seen[1], seen[3]}) == 3
