"""A :class:`~kg.ports.ChatModel` over an OpenAI-compatible ``/v1/chat/completions`` endpoint (standard library).

Request ``{"model": ..., "messages": [{"role", "content"}], "max_tokens": n, "temperature": t, "stream": false}``,
response ``{"choices": [{"message": {"content": "..."}}]}`` (OpenAI, vLLM, llama.cpp server, Ollama's OpenAI
API, LM Studio, LiteLLM ...). Every failure (connection refused, timeout, an error status, a body that is not
the expected JSON) becomes :class:`~kg.errors.BackendUnavailableError` naming the endpoint and the cause, so
callers can fall back to the deterministic path (extractive summaries, similarity rules) and say so. The API
key is read from the environment variable named in the configuration at each request and never appears in
an error message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kg.errors import BackendUnavailableError, InputError
from kg.ports import ChatMessage
from kg.recall.openai_http import post_json

if TYPE_CHECKING:
    from kg.config import WorkspaceConfig

#: A one-off run's endpoint and model (used when ``mabos.toml`` names no endpoint) and its seconds per request
#: (over ``[llm] timeout``).
ENV_URL = "MABOS_LLM_URL"
ENV_MODEL = "MABOS_LLM_MODEL"
ENV_TIMEOUT = "MABOS_LLM_TIMEOUT"

DEFAULT_TIMEOUT = 30.0
_ROLES = frozenset({"system", "user", "assistant", "tool"})


def chat_endpoint(url: str) -> str:
    """The chat endpoint for a base URL (``http://h:8080/v1``) or the endpoint itself."""
    url = url.rstrip("/")
    return url if url.endswith("/chat/completions") else f"{url}/chat/completions"


class OpenAIChatModel:
    """Chat completions from an OpenAI-compatible HTTP server.

    Args:
        url: the server's base URL (``http://127.0.0.1:8080/v1``) or its ``.../chat/completions`` endpoint.
        model: the model name sent with each request (and recorded on what the model writes).
        api_key_env: the name of an environment variable holding a bearer token (read per request).
        timeout: seconds for connecting and for each read (a server that does not stream sends its answer when
            it is complete, so in practice the longest a request may take; CPU models want minutes: ``[llm] timeout``).

    Raises:
        InputError: a URL that is not http(s), an empty model name or a non-positive timeout.

    Example:
        >>> chat = OpenAIChatModel("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct")
        >>> chat.complete([ChatMessage("user", "Say hi")], max_tokens=8)  # doctest: +SKIP
        'Hi!'
    """

    def __init__(self, url: str, model: str, *, api_key_env: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        if not url.startswith(("http://", "https://")):
            raise InputError("url", "must start with http:// or https://")
        if not model or not model.strip():
            raise InputError("model", "must not be empty")
        if not timeout > 0:
            raise InputError("timeout", "must be a positive number of seconds")
        self.url = chat_endpoint(url)
        self._model = model
        self.api_key_env = api_key_env or None
        self.timeout = timeout

    @property
    def model(self) -> str:
        """The model name sent to the server."""
        return self._model

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float = 0.0,
                 response_format: Mapping[str, Any] | None = None) -> str:  # fmt: skip
        """The assistant's reply text (possibly empty) to ``messages``.

        Args:
            messages: the conversation to continue, usually a system and a user message.
            max_tokens: the most tokens the server may generate.
            temperature: sampling temperature, 0 (the default) for the most repeatable answers.
            response_format: sent as the request's ``response_format`` (``{"type": "json_schema", ...}`` or
                ``{"type": "json_object"}``) when given; a server that does not accept it answers an error status
                (:class:`~kg.recall.openai_http.HTTPStatusError`).

        Raises:
            InputError: no messages, an unknown role, ``max_tokens`` below 1 or ``temperature`` outside 0-2.
            BackendUnavailableError: the server cannot be reached or answered something unusable.
        """
        _check_request(messages, max_tokens, temperature)
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": False,
        }
        if response_format is not None:
            body["response_format"] = dict(response_format)
        return self._parse(self._post(json.dumps(body).encode()))

    def _post(self, body: bytes) -> bytes:
        return post_json(self.url, body, api_key_env=self.api_key_env, timeout=self.timeout, label="llm")

    def _parse(self, raw: bytes) -> str:
        try:
            return _reply_text(json.loads(raw))
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            raise BackendUnavailableError(
                f"llm: {self.url} returned malformed JSON ({type(exc).__name__}: {exc})"
            ) from exc


def _check_request(messages: Sequence[ChatMessage], max_tokens: int, temperature: float) -> None:
    if not messages:
        raise InputError("messages", "at least one message is required")
    for message in messages:
        if message.role not in _ROLES:
            raise InputError("messages.role", f"must be one of {', '.join(sorted(_ROLES))}, not {message.role!r}")
    if max_tokens < 1:
        raise InputError("max_tokens", "must be at least 1")
    if not 0.0 <= temperature <= 2.0:
        raise InputError("temperature", "must be between 0 and 2")


def _reply_text(payload: Any) -> str:
    """``choices[0].message.content`` as text; TypeError/KeyError/IndexError when the shape is wrong."""
    choice = payload["choices"][0]
    content = choice["message"]["content"]
    if content is None:  # a refusal or a tool call: no text
        return ""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        return "".join(part["text"] for part in content if part.get("type") == "text")
    if not isinstance(content, str):
        raise TypeError("message.content must be a string")
    return content


def chat_model_from_config(
    url: str | None, model: str | None, api_key_env: str | None = None, *, timeout: float = DEFAULT_TIMEOUT
) -> OpenAIChatModel | None:
    """The chat model of a ``[conversation]`` configuration (``llm_url``, ``llm_model``, ``llm_api_key_env``).

    Returns:
        None when ``url`` is empty (no LLM configured: the deterministic paths are used), else the model.

    Raises:
        InputError: ``llm_url`` set without ``llm_model``, or a URL that is not http(s).
    """
    if not url or not url.strip():
        return None
    if not model or not model.strip():
        raise InputError("conversation.llm_model", "required when conversation.llm_url is set")
    try:
        return OpenAIChatModel(url.strip(), model.strip(), api_key_env=api_key_env, timeout=timeout)
    except InputError as exc:
        raise InputError(f"conversation.llm_{exc.field}", exc.rule) from exc


def request_timeout(config: WorkspaceConfig) -> float:
    """Seconds per LLM request: ``MABOS_LLM_TIMEOUT``, else ``[llm] timeout``."""
    raw = os.environ.get(ENV_TIMEOUT, "").strip()
    if not raw:
        return config.llm.timeout
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value <= 3600:
        raise InputError(ENV_TIMEOUT, f"must be a number of seconds above 0 and at most 3600, got {raw[:40]!r}")
    return value


def configured_chat(config: WorkspaceConfig) -> OpenAIChatModel | None:
    """The workspace's one chat model, for every LLM user (extraction, conversation summaries, reasoning, admission):
    ``[llm] base_url`` (or ``[conversation] llm_url``), else ``MABOS_LLM_URL`` (model from ``MABOS_LLM_MODEL``,
    default ``default``), else None; requests time out after :func:`request_timeout` seconds."""
    c = config.conversation
    timeout = request_timeout(config)
    chat = chat_model_from_config(c.llm_url, c.llm_model, c.llm_api_key_env, timeout=timeout)
    if chat is None and os.environ.get(ENV_URL, "").strip():
        chat = chat_model_from_config(os.environ[ENV_URL], os.environ.get(ENV_MODEL) or "default", timeout=timeout)
    return chat


__all__ = ["DEFAULT_TIMEOUT", "ENV_MODEL", "ENV_TIMEOUT", "ENV_URL", "OpenAIChatModel", "chat_endpoint",
           "chat_model_from_config", "configured_chat", "request_timeout"]  # fmt: skip
