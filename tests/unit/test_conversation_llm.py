"""The LLM port (OpenAIChatModel) and the LLM summariser against a local stub chat server.

MOCK NOTICE: ``tests/stubs/chat_server.py`` stands in for an LLM, the only thing these tests may not run for
real. It is a real HTTP server on 127.0.0.1 (started per test) that records requests and answers with the text
or status each test sets; everything on our side (urllib, JSON, prompts, length checks, fallback to the real
extractive summariser) runs unmocked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from kg.conversation.llm import OpenAIChatModel, chat_endpoint, chat_model_from_config
from kg.conversation.summarize import (
    EXTRACTIVE_MARKER,
    ExtractiveSummarizer,
    FallbackSummarizer,
    LLMSummarizer,
    format_message,
    make_summarizer,
)
from kg.errors import BackendUnavailableError, InputError
from kg.models.conversation import estimate_tokens
from kg.ports import ChatMessage
from tests.stubs.chat_server import ChatStub
from tests.stubs.http_failures import HttpFailureContract, answered

KEY_ENV = "MABOS_TEST_LLM_KEY"
TEXTS = [
    format_message("user", "Let's move the release to Friday 14 June.", None),
    format_message("assistant", "Agreed: v2.4 ships on 14 June; I will update docs/release.md.", None),
    format_message("user", "TODO: ask Priya whether the migration in schema/0007.sql is ready.", None),
]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatStub]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # a proxy configured on the machine must not intercept
    with ChatStub() as server:
        yield server


def chat(stub: ChatStub, **kwargs: Any) -> OpenAIChatModel:
    return OpenAIChatModel(stub.url, "stub-model", **kwargs)


def ask(url: str, timeout: float) -> str:
    """One chat completion from the server at ``url`` (the HTTP failure checks' client)."""
    return OpenAIChatModel(url, "stub-model", timeout=timeout).complete([ChatMessage("user", "x")], max_tokens=4)


# ------------------------------------------------------------------------------------------ the port


def test_a_request_has_the_openai_shape(stub):
    stub.reply = "Hello there."
    answer = chat(stub).complete(
        [ChatMessage("system", "Be brief."), ChatMessage("user", "Say hello")], max_tokens=16, temperature=0.2
    )
    assert answer == "Hello there."
    [request] = stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "stub-model",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello"}],
        "max_tokens": 16,
        "temperature": 0.2,
        "stream": False,
    }
    assert request.headers["Content-Type"] == "application/json"
    assert "Authorization" not in request.headers


def test_the_api_key_comes_from_the_named_environment_variable(stub, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "s3cret-key")
    chat(stub, api_key_env=KEY_ENV).complete([ChatMessage("user", "x")], max_tokens=4)
    assert stub.requests[0].headers["Authorization"] == "Bearer s3cret-key"


def test_an_unset_api_key_variable_is_reported_without_a_request(stub, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(BackendUnavailableError, match=f"{KEY_ENV} is not set"):
        chat(stub, api_key_env=KEY_ENV).complete([ChatMessage("user", "x")], max_tokens=4)
    assert stub.requests == []


def test_the_key_never_appears_in_an_error_even_when_the_server_echoes_it(stub, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "s3cret-key")
    stub.responder = lambda _: (401, b'{"error": "invalid api key s3cret-key"}')
    with pytest.raises(BackendUnavailableError, match="HTTP 401") as caught:
        chat(stub, api_key_env=KEY_ENV).complete([ChatMessage("user", "x")], max_tokens=4)
    assert "s3cret-key" not in str(caught.value)
    assert "***" in str(caught.value)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("plain text", "plain text"),
        (None, ""),  # a refusal or a tool call carries no text
        ([{"type": "text", "text": "two "}, {"type": "image_url"}, {"type": "text", "text": "parts"}], "two parts"),
    ],
)
def test_reply_content_shapes(stub, content, expected):
    body = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    stub.responder = lambda _: (200, json.dumps(body).encode())
    assert chat(stub).complete([ChatMessage("user", "x")], max_tokens=4) == expected


class TestChatModelFailures(HttpFailureContract):
    """The HTTP failure contract (tests/stubs/http_failures.py) for the chat model."""

    ask = staticmethod(ask)


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b'{"choices": [{"message": {"content": "cut',
        b"[]",
        b"{}",
        b'{"choices": []}',
        b'{"choices": [{"text": "completions API, not chat"}]}',
        b'{"choices": [{"message": {"content": 42}}]}',
    ],
)
def test_malformed_json_becomes_backend_unavailable(stub, payload):
    answered(stub, ask, 200, payload, "malformed JSON")


def test_bad_configuration_and_requests_are_input_errors(stub):
    with pytest.raises(InputError, match="url"):
        OpenAIChatModel("ftp://example.org/v1", "m")
    with pytest.raises(InputError, match="model"):
        OpenAIChatModel(stub.url, " ")
    with pytest.raises(InputError, match="timeout"):
        OpenAIChatModel(stub.url, "m", timeout=0)
    model = chat(stub)
    with pytest.raises(InputError, match="messages"):
        model.complete([], max_tokens=4)
    with pytest.raises(InputError, match=r"messages\.role"):
        model.complete([ChatMessage("narrator", "x")], max_tokens=4)
    with pytest.raises(InputError, match="max_tokens"):
        model.complete([ChatMessage("user", "x")], max_tokens=0)
    with pytest.raises(InputError, match="temperature"):
        model.complete([ChatMessage("user", "x")], max_tokens=4, temperature=3.0)
    assert stub.requests == []


def test_endpoints():
    assert chat_endpoint("http://h:8080/v1") == "http://h:8080/v1/chat/completions"
    assert chat_endpoint("http://h:8080/v1/") == "http://h:8080/v1/chat/completions"
    assert chat_endpoint("https://api.example.org/v1/chat/completions") == "https://api.example.org/v1/chat/completions"


def test_chat_model_from_config(stub):
    assert chat_model_from_config(None, None) is None
    assert chat_model_from_config("", "m") is None
    model = chat_model_from_config(f" {stub.url} ", "stub-model", KEY_ENV)
    assert model is not None
    assert (model.url, model.model, model.api_key_env) == (f"{stub.url}/chat/completions", "stub-model", KEY_ENV)
    with pytest.raises(InputError, match=r"conversation.llm_model: required when conversation.llm_url is set"):
        chat_model_from_config(stub.url, "")
    with pytest.raises(InputError, match=r"conversation.llm_url: must start with http"):
        chat_model_from_config("localhost:8080", "m")


# ------------------------------------------------------------------------------------------ the LLM summariser


def test_a_leaf_summary_sends_our_prompt_and_the_messages_in_order(stub):
    stub.reply = "- The user moved the v2.4 release to Friday 14 June.\n- TODO: ask Priya about schema/0007.sql."
    result = LLMSummarizer(chat(stub)).summarize(TEXTS, target_tokens=100, depth=0)
    assert (result.method, result.model) == ("llm", "stub-model")
    assert result.content == stub.reply
    [request] = stub.requests
    system, user = request.body["messages"]
    assert system["role"] == "system"
    for rule in ("decisions", "numbers", "file paths", "open questions", "Do not invent", "about 100 tokens"):
        assert rule in system["content"]
    assert "never more than 300 tokens" in system["content"]
    assert user["role"] == "user"
    positions = [user["content"].index(text) for text in TEXTS]
    assert positions == sorted(positions)
    assert request.body["max_tokens"] == 300  # 3x the target: the hard limit
    assert request.body["temperature"] == 0.0


def test_a_condensed_summary_uses_the_merging_prompt(stub):
    stub.reply = "Merged."
    LLMSummarizer(chat(stub)).summarize(["First summary.", "Second summary."], target_tokens=50, depth=2)
    system, user = stub.requests[0].body["messages"]
    assert "merge" in system["content"]
    assert "chronology" in system["content"]
    assert "drop step-by-step detail" in system["content"]  # the depth-2 hint
    assert '<summary n="1">\nFirst summary.\n</summary>' in user["content"]
    assert '<summary n="2">\nSecond summary.\n</summary>' in user["content"]
    assert "depth 1" in user["content"]


def test_the_depth_changes_the_hint():
    prompts = {depth: LLMSummarizer.system_prompt(100, depth, 300) for depth in (0, 1, 2, 3, 7)}
    assert len({prompts[0], prompts[1], prompts[2], prompts[3]}) == 4
    assert prompts[7] == prompts[3]


def test_reasoning_blocks_and_whitespace_are_removed(stub):
    stub.reply = "<think>\nThe user wants a summary...\n</think>\n\n  The release moved to 14 June.  "
    result = LLMSummarizer(chat(stub)).summarize(TEXTS, target_tokens=50, depth=0)
    assert result.content == "The release moved to 14 June."


def test_an_oversize_reply_is_sent_back_once_to_be_shortened(stub):
    long, short = "word " * 200, "The release moved to 14 June."  # 250 tokens against a limit of 30
    stub.reply = [long, short]
    result = LLMSummarizer(chat(stub)).summarize(TEXTS, target_tokens=10, depth=0)
    assert result.content == short
    first, second = (r.body["messages"] for r in stub.requests)
    assert second[:2] == first
    assert second[2] == {"role": "assistant", "content": long.strip()}
    assert second[3]["role"] == "user"
    assert "must not exceed 30" in second[3]["content"]


def test_a_reply_still_over_three_times_the_target_is_rejected(stub):
    stub.reply = "word " * 200
    with pytest.raises(BackendUnavailableError, match=r"over 3x the target of 10 \(30\): rejected"):
        LLMSummarizer(chat(stub)).summarize(TEXTS, target_tokens=10, depth=0)
    assert len(stub.requests) == 2


def test_a_reply_at_exactly_three_times_the_target_is_accepted(stub):
    stub.reply = "x" * 120  # 30 tokens by chars/4
    result = LLMSummarizer(chat(stub)).summarize(TEXTS, target_tokens=10, depth=0)
    assert estimate_tokens(result.content) == 30
    assert len(stub.requests) == 1


@pytest.mark.parametrize("reply", ["", "   \n", "<think>only thinking</think>"])
def test_an_empty_reply_is_rejected(stub, reply):
    stub.reply = reply
    with pytest.raises(BackendUnavailableError, match="empty summary"):
        LLMSummarizer(chat(stub)).summarize(TEXTS, target_tokens=50, depth=0)


def test_bad_summary_requests_are_input_errors(stub):
    summarizer = LLMSummarizer(chat(stub))
    with pytest.raises(InputError, match="texts"):
        summarizer.summarize(["", "  "], target_tokens=50, depth=0)
    with pytest.raises(InputError, match="target_tokens"):
        summarizer.summarize(TEXTS, target_tokens=0, depth=0)
    with pytest.raises(InputError, match="depth"):
        summarizer.summarize(TEXTS, target_tokens=50, depth=-1)
    assert stub.requests == []


# ------------------------------------------------------------------------------------------ fallback


def test_a_failing_llm_falls_back_to_extractive_and_says_so(stub):
    stub.status, stub.reply = 500, "boom"
    summarizer = make_summarizer(chat(stub))
    assert isinstance(summarizer, FallbackSummarizer)
    result = summarizer.summarize(TEXTS, target_tokens=60, depth=0)
    assert (result.method, result.model) == ("extractive", None)
    assert result.content.startswith(EXTRACTIVE_MARKER)
    assert summarizer.last_error is not None
    assert "HTTP 500" in summarizer.last_error


def test_an_oversize_llm_summary_falls_back_to_extractive(stub):
    stub.reply = "word " * 500
    result = make_summarizer(chat(stub)).summarize(TEXTS, target_tokens=20, depth=0)
    assert result.method == "extractive"


def test_after_repeated_failures_the_llm_is_not_asked_again(stub):
    stub.status = 503
    summarizer = FallbackSummarizer(LLMSummarizer(chat(stub)), ExtractiveSummarizer(), max_failures=2)
    for _ in range(4):
        assert summarizer.summarize(TEXTS, target_tokens=60, depth=0).method == "extractive"
    assert len(stub.requests) == 2


def test_a_success_resets_the_failure_count(stub):
    stub.responder = None
    summarizer = FallbackSummarizer(LLMSummarizer(chat(stub)), ExtractiveSummarizer(), max_failures=2)
    stub.status = 503
    summarizer.summarize(TEXTS, target_tokens=60, depth=0)
    stub.status, stub.reply = 200, "Release on 14 June."
    assert summarizer.summarize(TEXTS, target_tokens=60, depth=0).method == "llm"
    assert summarizer.failures == 0
    stub.status = 503
    summarizer.summarize(TEXTS, target_tokens=60, depth=0)
    assert summarizer.summarize(TEXTS, target_tokens=60, depth=0).method == "extractive"
    assert len(stub.requests) == 4  # the count restarted after the success


def test_make_summarizer_follows_the_configuration(stub):
    assert isinstance(make_summarizer(None), ExtractiveSummarizer)
    assert isinstance(make_summarizer(chat(stub)), FallbackSummarizer)
    assert isinstance(make_summarizer(chat(stub), fallback=False), LLMSummarizer)
    stub.status = 500
    with pytest.raises(BackendUnavailableError):
        make_summarizer(chat(stub), fallback=False).summarize(TEXTS, target_tokens=60, depth=0)
