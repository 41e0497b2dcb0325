"""Which addresses reach this machine only, and the address servers bind by default.

Both servers (``mabos serve --mcp --http`` and ``mabos ui``) listen on :data:`DEFAULT_HOST` unless told otherwise,
and off loopback they require a token (docs/security.md); :func:`is_loopback` is the one test of "off loopback".
"""

from __future__ import annotations

import ipaddress

#: Where a server binds when ``--host`` is not given.
DEFAULT_HOST = "127.0.0.1"


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, ``[::1]``, ``localhost``)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
