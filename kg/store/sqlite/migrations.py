"""The embedded store's SQL migrations: the numbered files shipped in ``schema/sqlite`` (or a wheel's
``share/mabos``), read and hashed once per process, and the statement splitter that applies them
(:meth:`kg.store.sqlite.db.Database.migrate`)."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from kg.errors import WorkspaceError


def schema_dir() -> Path:
    """Where the SQL migrations live: the source tree, or ``<prefix>/share/mabos`` for a wheel."""
    candidates = [
        Path(__file__).resolve().parents[3] / "schema" / "sqlite",
        Path(sys.prefix) / "share" / "mabos" / "schema" / "sqlite",
    ]
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.glob("*.sql")):
            return candidate
    raise WorkspaceError(f"schema: no SQL migrations found in {', '.join(map(str, candidates))}")


@dataclass(frozen=True)
class Migration:
    """One numbered SQL file."""

    version: int
    name: str
    sql: str

    @cached_property
    def checksum(self) -> str:
        """SHA-256 of the file text, to notice an edited migration."""
        return hashlib.sha256(self.sql.encode()).hexdigest()


def load_migrations(directory: Path | None = None) -> list[Migration]:
    """Migrations ``NNNN_name.sql`` in version order: those of ``directory``, read now, or by default the shipped
    ones, read and hashed once per process (every store open compares them with the applied ones)."""
    if directory is None:
        return list(_shipped_migrations())
    return _read_migrations(directory)


@cache
def _shipped_migrations() -> tuple[Migration, ...]:
    return tuple(_read_migrations(schema_dir()))


def _read_migrations(directory: Path) -> list[Migration]:
    found = []
    for path in sorted(directory.glob("*.sql")):
        version, _, name = path.stem.partition("_")
        if not version.isdigit():
            raise WorkspaceError(f"schema: migration file {path.name} must start with a number")
        found.append(Migration(int(version), name, path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise WorkspaceError("schema: two migrations share a version number")
    return found


def split_statements(sql: str) -> list[str]:
    """Split a script into complete statements (triggers with inner ``;`` stay whole)."""
    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not all(ln.strip().startswith("--") or not ln.strip() for ln in buffer.splitlines()):
        raise WorkspaceError("schema: migration ends with an incomplete statement")
    return statements


__all__ = ["Migration", "load_migrations", "schema_dir", "split_statements"]
