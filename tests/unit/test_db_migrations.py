"""Migrations of the embedded store: versions, checksums, too-new stores, statement splitting."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kg.errors import MabosError, WorkspaceError
from kg.store.sqlite.db import Database, Migration, load_migrations, split_statements

LATEST = max(m.version for m in load_migrations())


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    finally:
        conn.close()


def migration_rows(path: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT version, checksum FROM schema_migrations ORDER BY version").fetchall()
    finally:
        conn.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "kg.sqlite"


def test_migrations_are_numbered_from_one_without_gaps():
    versions = [m.version for m in load_migrations()]
    assert versions == list(range(1, len(versions) + 1))
    assert load_migrations()[0].name == "foundation"


def test_fresh_database_gets_every_migration(db_path):
    db = Database(db_path)
    try:
        assert db.schema_version() == LATEST >= 1
    finally:
        db.close()
    assert {"agents", "facts", "fact_history", "lineage", "bdi_nodes", "relations", "outbox", "outbox_log"} <= tables(
        db_path
    )
    assert [v for v, _ in migration_rows(db_path)] == list(range(1, LATEST + 1))


def test_the_connection_that_migrated_can_still_pack_a_bulk_loads_sorts(db_path):
    # the migrations' index builds open the temp database, and SQLite refuses temp_store's switch inside a
    # transaction while it is open: a bulk load on the connection that created the store sorted record by record
    db = Database(db_path)
    try:
        assert int(db.conn.execute("PRAGMA temp_store").fetchone()[0]) == 2  # MEMORY, as opened
        with db.write(), db.packed_sorts() as packed:
            assert packed
    finally:
        db.close()


def test_a_migration_keeps_the_temp_tables_a_connection_holds(db_path):
    Database(db_path).close()
    db = Database(db_path, migrate=False)
    try:
        db.conn.execute("CREATE TEMP TABLE scratch(x)")
        db.conn.execute("INSERT INTO scratch VALUES (1)")
        extra = Migration(
            LATEST + 1, "extra", "CREATE TABLE extra(x INTEGER) STRICT;\nCREATE INDEX extra_x ON extra(x);\n"
        )
        assert db.migrate([*load_migrations(), extra]) == [LATEST + 1]
        assert [tuple(r) for r in db.conn.execute("SELECT x FROM scratch")] == [(1,)]  # the temp database stays
    finally:
        db.close()


def test_reopening_applies_nothing(db_path):
    Database(db_path).close()
    before = migration_rows(db_path)

    db = Database(db_path, migrate=False)
    try:
        assert db.migrate() == []
        assert db.schema_version() == LATEST
    finally:
        db.close()
    assert migration_rows(db_path) == before


def test_a_new_migration_is_applied_once(db_path):
    Database(db_path).close()
    extra = Migration(LATEST + 1, "extra", "CREATE TABLE extra(x INTEGER) STRICT;\n")

    db = Database(db_path, migrate=False)
    try:
        assert db.migrate([*load_migrations(), extra]) == [LATEST + 1]
        assert db.migrate([*load_migrations(), extra]) == []
        assert db.schema_version() == LATEST + 1
    finally:
        db.close()
    assert "extra" in tables(db_path)


def test_an_edited_migration_is_detected(db_path):
    Database(db_path).close()
    edited = [Migration(m.version, m.name, m.sql + "\n-- edited\n") if m.version == 1 else m for m in load_migrations()]

    db = Database(db_path, migrate=False)
    try:
        with pytest.raises(WorkspaceError, match="migration 1 was edited"):
            db.migrate(edited)
    finally:
        db.close()


def test_a_database_newer_than_the_code_is_refused(db_path):
    Database(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(
        "INSERT INTO schema_migrations VALUES (?, 'future', 'x', '2099-01-01T00:00:00.000000Z')", (LATEST + 5,)
    )
    conn.commit()
    conn.close()

    with pytest.raises(WorkspaceError, match="upgrade mabos"):
        Database(db_path)


def test_a_failing_migration_leaves_nothing_behind(db_path):
    Database(db_path).close()
    broken = Migration(LATEST + 1, "broken", "CREATE TABLE half(x INTEGER);\nCREATE TABLE oops(;\n")

    db = Database(db_path, migrate=False)
    try:
        with pytest.raises((sqlite3.Error, MabosError)):
            db.migrate([*load_migrations(), broken])
        assert db.schema_version() == LATEST
    finally:
        db.close()
    assert "half" not in tables(db_path)


def test_load_migrations_checks_file_names(tmp_path):
    (tmp_path / "0001_a.sql").write_text("CREATE TABLE a(x);\n")
    (tmp_path / "0002_b.sql").write_text("CREATE TABLE b(x);\n")
    assert [(m.version, m.name) for m in load_migrations(tmp_path)] == [(1, "a"), (2, "b")]

    (tmp_path / "0002_c.sql").write_text("CREATE TABLE c(x);\n")
    with pytest.raises(WorkspaceError, match="share a version"):
        load_migrations(tmp_path)

    (tmp_path / "0002_c.sql").unlink()
    (tmp_path / "readme.sql").write_text("")
    with pytest.raises(WorkspaceError, match="must start with a number"):
        load_migrations(tmp_path)


def test_checksum_follows_the_text():
    a = Migration(1, "a", "CREATE TABLE a(x);")
    assert a.checksum == Migration(1, "renamed", "CREATE TABLE a(x);").checksum
    assert a.checksum != Migration(1, "a", "CREATE TABLE a(y);").checksum


# ------------------------------------------------------------------------------------------ splitting

SCRIPT = """-- a comment; with a semicolon
CREATE TABLE t (x INTEGER, note TEXT DEFAULT 'a;b');
CREATE TABLE log (x INTEGER);
CREATE TRIGGER t_log AFTER INSERT ON t
BEGIN
    INSERT INTO log(x) VALUES (NEW.x);
    UPDATE log SET x = x + 1 WHERE x = NEW.x;
END;

-- trailing comment only
"""


def test_split_keeps_triggers_whole():
    statements = split_statements(SCRIPT)

    assert len(statements) == 3
    trigger = statements[2]
    assert trigger.startswith("CREATE TRIGGER t_log") and trigger.endswith("END;")
    assert "INSERT INTO log" in trigger and "UPDATE log" in trigger
    assert "'a;b'" in statements[0]


def test_split_statements_run_as_a_script(tmp_path):
    conn = sqlite3.connect(tmp_path / "x.sqlite")
    for statement in split_statements(SCRIPT):
        conn.execute(statement)
    conn.execute("INSERT INTO t(x) VALUES (1)")
    assert conn.execute("SELECT x FROM log").fetchall() == [(2,)]
    conn.close()


def test_split_refuses_an_unfinished_statement():
    with pytest.raises(WorkspaceError, match="incomplete"):
        split_statements("CREATE TABLE a(x);\nCREATE TABLE b(x)\n")


def test_real_migrations_split_into_complete_statements():
    for migration in load_migrations():
        statements = split_statements(migration.sql)
        assert statements
        assert all(sqlite3.complete_statement(s) for s in statements)
        for trigger in (s for s in statements if s.upper().startswith("CREATE TRIGGER")):
            assert trigger.rstrip().upper().endswith("END;")
