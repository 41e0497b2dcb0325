"""One JSON POST to an OpenAI-compatible endpoint, shared by the HTTP embedder and the chat model.

The bearer token is read from the environment variable named in the configuration at each request. Every
failure (the variable unset, connection refused, timeout, an error status) becomes
:class:`~kg.errors.BackendUnavailableError` naming the endpoint and the cause; the start of an error body is
quoted on one line with the key blanked should the server echo it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kg.errors import BackendUnavailableError

if TYPE_CHECKING:
    import urllib.error

_BODY_EXCERPT = 200


class HTTPStatusError(BackendUnavailableError):
    """The server answered an error status (``status``): a caller may change its request (an unsupported
    ``response_format`` is answered 400 or 422) rather than give up."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def post_json(url: str, body: bytes, *, api_key_env: str | None, timeout: float, label: str) -> bytes:
    """The raw response body of a POST of ``body`` (JSON) to ``url``; ``label`` starts every error message.

    Raises:
        BackendUnavailableError: ``api_key_env`` is set but the variable is not, or the server cannot be
            reached or did not answer within ``timeout`` seconds (connecting, and each read).
        HTTPStatusError: it answered an error status (a :class:`~kg.errors.BackendUnavailableError`).
    """
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise BackendUnavailableError(f"{label}: environment variable {api_key_env} is not set")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    import urllib.error  # noqa: PLC0415 - urllib.request (http.client, ssl, email) loads when a call is made
    import urllib.request  # noqa: PLC0415

    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - callers check the scheme
            raw: bytes = response.read()
            return raw
    except urllib.error.HTTPError as exc:
        excerpt = _excerpt(exc, key)
        raise HTTPStatusError(
            f"{label}: {url} answered HTTP {exc.code} {exc.reason}" + (f": {excerpt}" if excerpt else ""), exc.code
        ) from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise BackendUnavailableError(f"{label}: {url} cannot be reached ({reason})") from exc


def _excerpt(exc: urllib.error.HTTPError, key: str | None) -> str:
    """The start of an error body on one line, with the API key blanked should the server echo it."""
    try:
        text = exc.read(_BODY_EXCERPT).decode("utf-8", "replace")
    except OSError:
        text = ""
    finally:
        exc.close()
    text = " ".join(text.split())
    return text.replace(key, "***") if key else text
