"""Where the shared TypeDB graph is and how to log in, resolved once from flags, environment and config.

Precedence for the address: the ``--typedb`` option, then ``MABOS_TYPEDB_ADDRESS``, then ``[typedb]
address`` in ``mabos.toml``; none of them means TypeDB is not configured and mabos runs on the embedded
store alone. The database defaults to ``mabos_<workspace name>`` (``MABOS_TYPEDB_DATABASE`` or
``[typedb] database`` override it). Credentials only ever come from the environment
(``MABOS_TYPEDB_USERNAME``, ``MABOS_TYPEDB_PASSWORD``; TypeDB's defaults ``admin`` / ``password``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kg.errors import InputError

ENV_ADDRESS = "MABOS_TYPEDB_ADDRESS"
ENV_DATABASE = "MABOS_TYPEDB_DATABASE"
ENV_USERNAME = "MABOS_TYPEDB_USERNAME"
ENV_PASSWORD = "MABOS_TYPEDB_PASSWORD"  # noqa: S105 - the variable's name, not a password
ENV_TLS_CA = "MABOS_TYPEDB_TLS_CA"
DEFAULT_USERNAME = "admin"
DEFAULT_PASSWORD = "password"  # noqa: S105 - TypeDB's documented default, used only when the env says nothing
#: Unary requests (connect, open a transaction) give up after this long.
DEFAULT_TIMEOUT_MS = 5_000
#: Write-through gives up after this long: it must never hold the caller up for long.
WRITE_THROUGH_TIMEOUT_MS = 2_000

_ADDRESS_RE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})\Z")
_DATABASE_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}\Z")


@dataclass(frozen=True)
class TypeDBSettings:
    """A resolved TypeDB connection: address ``host:port``, database, credentials, TLS.

    ``password`` is kept out of ``repr`` so settings can be logged.
    """

    address: str
    database: str
    username: str = DEFAULT_USERNAME
    password: str = field(default=DEFAULT_PASSWORD, repr=False)
    tls_ca: str | None = None
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    origin: str = "config"

    def public(self) -> dict[str, object]:
        """What may be shown to a user (no password)."""
        return {"address": self.address, "database": self.database, "username": self.username,
                "tls": self.tls_ca is not None, "configured_by": self.origin}  # fmt: skip


def check_address(address: str, field_name: str = "typedb.address") -> str:
    """``host:port`` (no scheme), or an :class:`InputError` naming ``field_name``."""
    text = address.strip()
    match = _ADDRESS_RE.match(text)
    if match is None or not 0 < int(match.group(2)) < 65_536:
        raise InputError(field_name, f"must be host:port such as localhost:1729 (no scheme), got {address[:80]!r}")
    return text


def default_database(workspace_name: str) -> str:
    """``mabos_<workspace name>`` with ``-`` as ``_`` (the name is already ``[a-z0-9_-]``)."""
    return "mabos_" + workspace_name.replace("-", "_")


def resolve_settings(
    *,
    workspace_name: str,
    config_address: str | None = None,
    config_database: str | None = None,
    override: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> TypeDBSettings | None:
    """The TypeDB settings in force, or None when no address is configured anywhere."""
    env = os.environ if environ is None else environ
    candidates = ((override, "--typedb"), (env.get(ENV_ADDRESS), ENV_ADDRESS), (config_address, "mabos.toml"))
    chosen = next(((value, origin) for value, origin in candidates if value and value.strip()), None)
    if chosen is None:
        return None
    address = check_address(chosen[0], chosen[1])
    database = env.get(ENV_DATABASE) or config_database or default_database(workspace_name)
    if not _DATABASE_RE.match(database):
        raise InputError("typedb.database", f"must be letters, digits, _ or - (at most 128), got {database[:80]!r}")
    return TypeDBSettings(
        address=address,
        database=database,
        username=env.get(ENV_USERNAME) or DEFAULT_USERNAME,
        password=env.get(ENV_PASSWORD) or DEFAULT_PASSWORD,
        tls_ca=env.get(ENV_TLS_CA) or None,
        origin=chosen[1],
    )


__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "ENV_ADDRESS",
    "ENV_DATABASE",
    "ENV_PASSWORD",
    "ENV_TLS_CA",
    "ENV_USERNAME",
    "WRITE_THROUGH_TIMEOUT_MS",
    "TypeDBSettings",
    "check_address",
    "default_database",
    "resolve_settings",
]
