"""The TypeDB schema of a workspace: the base record types plus the types of its active ontology set."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from kg.errors import InputError, WorkspaceError

BASE_FILE = "base.tql"


def schema_dir() -> Path:
    """``schema/typedb`` of the source tree, or ``<prefix>/share/mabos/schema/typedb`` for an installed wheel."""
    for root in (Path(__file__).resolve().parents[3], Path(sys.prefix) / "share" / "mabos"):
        candidate = root / "schema" / "typedb"
        if (candidate / BASE_FILE).is_file():
            return candidate
    raise WorkspaceError("schema: schema/typedb/base.tql not found in the source tree or share/mabos")


def base_schema() -> str:
    """The text of ``base.tql`` (a ``define`` query)."""
    return (schema_dir() / BASE_FILE).read_text(encoding="utf-8")


def schema_for(ontology: str) -> list[str]:
    """The schema queries of a workspace, base first, then ``ontology`` (the TypeQL ``define`` of its active
    ontology set, '' for none); define them in one schema transaction."""
    return [base_schema(), ontology] if ontology.strip() else [base_schema()]


def fingerprint(queries: list[str]) -> str:
    """A SHA-256 over the schema queries: it changes exactly when the schema text does."""
    digest = hashlib.sha256()
    for query in queries:
        digest.update(query.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def check_read_only(query: str) -> None:
    """Refuse query text that would write or change the schema (for read-only raw queries).

    TypeDB itself refuses writes in a read transaction; this check only gives the one-line error before a
    round trip, naming the stage, and treats the query text as words outside string literals.
    """
    words = _words_outside_strings(query)
    for stage in ("insert", "delete", "update", "put", "define", "undefine", "redefine"):
        if stage in words:
            raise InputError("query", f"a read-only query cannot contain a {stage!r} stage (use --write)")


def _words_outside_strings(query: str) -> set[str]:
    words: set[str] = set()
    current: list[str] = []
    quote: str | None = None
    escaped = False
    variable = False
    for ch in query + " ":
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        if ch.isalnum() or ch in "_-":
            current.append(ch)
            continue
        if current and not variable:  # $put is a variable, not a stage
            words.add("".join(current).lower())
        current = []
        variable = ch == "$"
    return words


__all__ = ["base_schema", "check_read_only", "fingerprint", "schema_dir", "schema_for"]
