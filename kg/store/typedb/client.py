"""The one place mabos talks to a TypeDB server: connection, transactions, answers as JSON, error translation.

* **One driver per process** (typedb-notes §4.1): drivers are cached by address, user and TLS and reused by
  every :class:`TypeDBClient`; a closed one is replaced.
* **Errors are translated at the boundary.** Everything the driver raises is a ``TypeDBDriverException``
  with a message only; connection failures (``[CXN…]``, transport and protocol errors) become
  :class:`~kg.errors.BackendUnavailableError` (CLI exit code 3), anything else the server refused (a query
  that does not type-check, a failed commit) becomes :class:`~kg.errors.BackendError` (exit code 1). Both
  carry one line naming the address or database.
* **A failed query kills its transaction** (§4.3): every unit of work is its own transaction, rolled back
  on the first error; answers are collected before the transaction closes.
* The driver (``typedb-driver``, the ``typedb`` extra) is imported lazily, so the rest of mabos works
  without it; asking for TypeDB without it installed says how to install it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from decimal import Decimal
from typing import Any

from kg.errors import BackendError, BackendUnavailableError, MabosError
from kg.store.typedb.settings import TypeDBSettings

#: Substrings of driver messages that mean the server could not be reached (not a query problem).
UNREACHABLE_MARKERS = (
    "[CXN", "Unable to connect", "transport error", "tcp connect error", "Connection refused", "grpc-status",
    "connection closed", "Connection Error", "deadline has elapsed", "timed out",
)  # fmt: skip
#: Rows or documents a read returns before it says the answer was truncated.
DEFAULT_LIMIT = 1_000

_DRIVERS: dict[tuple[str, str, str | None], Any] = {}
_LOCK = threading.Lock()


def _driver_module() -> Any:
    try:
        import typedb.driver as module  # noqa: PLC0415 - optional dependency, imported on first use
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise BackendUnavailableError(
            "typedb: the TypeDB driver is not installed; install it with pip install 'mabos[typedb]'"
        ) from exc
    return module


def _first_line(text: str) -> str:
    """The driver's message on one line, from its ``Details:`` part when it has one, at most 300 characters."""
    lines = " ".join(line.strip() for line in str(text).splitlines() if line.strip())
    _, found, details = lines.partition("Details: ")
    return (details if found else lines)[:300] or "no message"


def translate(exc: BaseException, settings: TypeDBSettings, action: str) -> MabosError:
    """A driver exception as a mabos error: unreachable -> exit 3, refused -> exit 1."""
    message = _first_line(getattr(exc, "message", None) or str(exc))
    if any(marker.lower() in message.lower() for marker in UNREACHABLE_MARKERS):
        return BackendUnavailableError(f"typedb: {settings.address} is unreachable ({action}): {message}")
    return BackendError(f"typedb: {action} failed on database {settings.database}: {message}")


def _value_json(value: Any) -> Any:
    """A TypeDB value as JSON data (datetimes and dates as ISO text, decimals and durations as text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)


def concept_json(concept: Any) -> Any:
    """One concept of an answer row as JSON: a value, ``{"type", "iid"}`` for instances, a label for types."""
    if concept is None:
        return None
    if concept.is_attribute() or concept.is_value():
        return _value_json(concept.try_get_value())
    if concept.is_type():
        return {"label": concept.get_label()}
    return {"type": concept.get_label(), "iid": concept.try_get_iid()}


class TypeDBClient:
    """A TypeDB database reached through the process's shared driver."""

    def __init__(self, settings: TypeDBSettings) -> None:
        self.settings = settings

    # ------------------------------------------------------------------ connection

    def driver(self) -> Any:
        """The process's driver for these settings (connected on first use)."""
        s = self.settings
        key = (s.address, s.username, s.tls_ca)
        with _LOCK:
            driver = _DRIVERS.get(key)
            if driver is not None and driver.is_open():
                return driver
            td = _driver_module()
            tls = td.DriverTlsConfig.enabled_with_root_ca(s.tls_ca) if s.tls_ca else td.DriverTlsConfig.disabled()
            options = td.DriverOptions(tls, request_timeout_millis=s.timeout_ms)
            try:
                driver = td.TypeDB.driver(s.address, td.Credentials(s.username, s.password), options)
            except td.TypeDBDriverException as exc:
                raise translate(exc, s, "connect") from exc
            _DRIVERS[key] = driver
            return driver

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        td = _driver_module()
        try:
            yield
        except td.TypeDBDriverException as exc:
            raise translate(exc, self.settings, action) from exc

    @contextmanager
    def transaction(self, kind: str, action: str) -> Iterator[Any]:
        """A ``read``, ``write`` or ``schema`` transaction on the database, errors translated."""
        td = _driver_module()
        driver = self.driver()
        options = td.TransactionOptions(transaction_timeout_millis=max(self.settings.timeout_ms * 12, 60_000))
        tx_type = {"read": td.TransactionType.READ, "write": td.TransactionType.WRITE,
                   "schema": td.TransactionType.SCHEMA}[kind]  # fmt: skip
        with self._errors(action), driver.transaction(self.settings.database, tx_type, options) as tx:
            yield tx

    # ------------------------------------------------------------------ operations

    def status(self) -> dict[str, Any]:
        """Reachability, server version and whether the database exists; never raises for a dead server."""
        report: dict[str, Any] = {**self.settings.public(), "reachable": False}
        try:
            driver = self.driver()
            with self._errors("status"):
                version = driver.server_version()
                report["server_version"] = f"{version.distribution} {version.version}"
                report["database_exists"] = bool(driver.databases.contains(self.settings.database))
            report["reachable"] = True
        except BackendUnavailableError as exc:
            report["error"] = str(exc)
        return report

    def ensure_database(self) -> bool:
        """Create the database if it does not exist; True when it was created."""
        driver = self.driver()
        with self._errors("create database"):
            if driver.databases.contains(self.settings.database):
                return False
            driver.databases.create(self.settings.database)
            return True

    def schema(self) -> str:
        """The database's schema as a ``define`` query (empty when the database does not exist)."""
        driver = self.driver()
        with self._errors("read schema"):
            if not driver.databases.contains(self.settings.database):
                return ""
            return str(driver.databases.get(self.settings.database).schema())

    def define(self, queries: Sequence[str]) -> None:
        """Run schema queries in one schema transaction and commit (all or nothing)."""
        with self.transaction("schema", "define schema") as tx:
            for query in queries:
                tx.query(query).resolve()
            tx.commit()

    def write(self, queries: Sequence[str]) -> None:
        """Run write queries in order in one write transaction and commit (all or nothing).

        The queries are sent without waiting for each answer (the driver keeps their order) and
        resolved before the commit, so a batch costs about one round trip per query on the server only.
        """
        if not queries:
            return
        with self.transaction("write", "write") as tx:
            promises = [tx.query(query) for query in queries]
            for promise in promises:
                promise.resolve()
            tx.commit()

    def query(self, query: str, *, write: bool = False, limit: int = DEFAULT_LIMIT) -> tuple[list[Any], bool]:
        """Run one query; return its answers as JSON data (at most ``limit``) and whether more were cut off.

        A read transaction unless ``write``; a write is committed. Fetch answers come back as their
        documents, row answers as ``{variable: value or {"type", "iid"}}``, schema answers as ``[]``.
        """
        with self.transaction("write" if write else "read", "query") as tx:
            answer = tx.query(query).resolve()
            rows: list[Any] = []
            truncated = False
            if answer.is_concept_documents() or answer.is_concept_rows():
                stream = answer.as_concept_documents() if answer.is_concept_documents() else answer.as_concept_rows()
                for item in stream:
                    if len(rows) == limit:
                        truncated = True
                        break
                    rows.append(item if isinstance(item, dict) else self._row(item))
            if write:
                tx.commit()
            return rows, truncated

    @classmethod
    def answers(cls, tx: Any, query: str) -> list[Any]:
        """Run ``query`` in the open transaction ``tx`` and collect every answer as JSON data (fetch answers as
        their documents, rows as ``{variable: value or {"type", "iid"}}``, schema answers as ``[]``)."""
        answer = tx.query(query).resolve()
        if answer.is_concept_documents():
            return list(answer.as_concept_documents())
        if answer.is_concept_rows():
            return [cls._row(row) for row in answer.as_concept_rows()]
        return []

    def read(self, query: str) -> list[dict[str, Any]]:
        """Every answer of a read query as JSON data (the graph queries' client protocol)."""
        rows, _ = self.query(query, limit=10**9)
        return rows

    @staticmethod
    def _row(row: Any) -> dict[str, Any]:
        return {name: concept_json(row.get(name)) for name in row.column_names()}


__all__ = ["DEFAULT_LIMIT", "TypeDBClient", "concept_json", "translate"]
