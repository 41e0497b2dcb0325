"""Which addresses reach this machine only, the address servers bind by default, and the Host/Origin allow-list.

Both servers (``mabos serve --mcp --http`` and ``mabos ui``) listen on :data:`DEFAULT_HOST` unless told otherwise,
and off loopback they require a token (docs/security.md); :func:`is_loopback` is the one test of "off loopback".

Bound to a loopback address (any of 127.0.0.0/8, ``::1``, ``localhost``) without a token, a server answers only
requests whose ``Host`` names the bound address or a loopback name, and whose ``Origin`` (when a browser sends one)
is such an address too (:func:`host_allowed`, :func:`origin_allowed`): a web page that rebinds its own name to the
loopback address sends its own name in both headers, so it is refused (421 and 403) whatever loopback address the
server is on (:func:`allowed_hosts` feeds the same list to the MCP SDK's check).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

#: Where a server binds when ``--host`` is not given.
DEFAULT_HOST = "127.0.0.1"
#: Names that always mean this machine (beside the bound address itself).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, ``[::1]``, ``localhost``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(host: str) -> str:
    """A bind address as it appears in a ``Host`` header: IPv6 in brackets, lower case."""
    name = host.strip().strip("[]").lower()
    return f"[{name}]" if ":" in name else name


def allowed_hosts(bound: str) -> list[str]:
    """The ``Host`` names a server bound to loopback address ``bound`` answers: that address and the loopback
    names (each with any port, in the MCP SDK's ``name:*`` form)."""
    names = dict.fromkeys([host_name(bound), *LOOPBACK_NAMES])
    return [f"{name}:*" for name in names] + list(names)


def allowed_origins(bound: str) -> list[str]:
    """The ``Origin`` values a browser page on the bound address or a loopback name sends (http, any port)."""
    names = dict.fromkeys([host_name(bound), *LOOPBACK_NAMES])
    return [f"http://{name}:*" for name in names] + [f"http://{name}" for name in names]


def _split_host(header: str) -> str:
    """The name of a ``Host`` header value (``name``, ``name:port``, ``[v6]:port``), lower case."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def host_allowed(header: str | None, bound: str) -> bool:
    """Whether a ``Host`` header names the bound loopback address or a loopback name (the console's rule; the
    MCP server gives :func:`allowed_hosts` to its SDK)."""
    if not header:
        return False
    return _split_host(header) in {host_name(bound), *LOOPBACK_NAMES}


def origin_allowed(header: str | None, bound: str) -> bool:
    """Whether an ``Origin`` header is absent or an http(s) origin on the bound address or a loopback name."""
    if header is None:
        return True
    parts = urlsplit(header.strip().lower())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    return host_allowed(parts.netloc, bound)


__all__ = ["DEFAULT_HOST", "allowed_hosts", "allowed_origins", "host_allowed", "host_name", "is_loopback",
           "origin_allowed"]  # fmt: skip
