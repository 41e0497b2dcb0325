"""The LLM extractor: the seed's extraction prompt through the OpenAI-compatible :class:`~kg.ports.ChatModel`.

One request per window. The reply must be one JSON object in the seed's format (``memories``: category,
abstract, overview, content), to which mabos adds ``facts`` (subject, predicate, object, confidence); it is
validated by pydantic. A reply that does not validate (or a failing endpoint) is retried once; a second
failure raises :class:`~kg.ports.ExtractionFailedError` and the service records the window as failed and
leaves it (and the rest of its conversation) for the next run: a window is never half written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kg.errors import BackendUnavailableError
from kg.extraction.deterministic import MAX_MEMORIES, readable, speaker_of
from kg.models import Category, ExtractedMemory, FactCandidate, WindowExtraction
from kg.models.conversation import Message
from kg.ports import ChatMessage, ChatModel, ExtractionFailedError

#: The memory type each category is stored as.
KIND_OF = {"profile": "identity", "preferences": "preference", "entities": "fact", "events": "event",
           "cases": "lesson", "patterns": "skill"}  # fmt: skip
MAX_TOKENS = 2_000
ATTEMPTS = 2

SYSTEM_PROMPT = """\
You extract long-term memories from a conversation between a user and an AI assistant.

Categories:
- profile: who the user is (name, age, job, home, background)
- preferences: likes, dislikes and preferred ways of doing things
- entities: people, places, organisations, projects and things the user mentions, with what is said of them
- events: things that happened or are planned, with their dates, and decisions made
- cases: a problem met and how it was solved (a lesson)
- patterns: habits and reusable ways of working

Each memory has three levels:
- abstract: a one-line index of the memory
- overview: a structured Markdown summary
- content: the full narrative, with names, dates and numbers

Rules:
- Maximum 5 memories per extraction
- Preferences should be aggregated by topic
- Output language should match the dominant language in the conversation
- Resolve relative dates ("yesterday", "last week") against the message times shown
- Skip system metadata, "[Subagent Context]" blocks, recall queries like "Do you remember X?", tool output, \
logs and boilerplate
- Only extract what the user states; never invent

Also list the subject-predicate-object facts stated, with camelCase predicates and a confidence from 0 to 1 \
(the user is the subject "{speaker}").

Answer with one JSON object and nothing else:
{{"memories": [{{"category": "profile|preferences|entities|events|cases|patterns", "abstract": "One-line index", \
"overview": "Structured Markdown summary", "content": "Full narrative"}}], \
"facts": [{{"subject": "...", "predicate": "...", "object": "...", "confidence": 0.9}}]}}"""


class _Memory(BaseModel):
    model_config = ConfigDict(extra="ignore")
    category: Category
    abstract: Annotated[str, Field(min_length=1, max_length=1_000)]
    overview: Annotated[str, Field(min_length=1, max_length=60_000)]
    content: Annotated[str, Field(min_length=1, max_length=60_000)]


class _Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")
    subject: Annotated[str, Field(min_length=1, max_length=200)]
    predicate: Annotated[str, Field(min_length=1, max_length=200)]
    object: Annotated[str, Field(min_length=1, max_length=1_000)]
    confidence: float = Field(default=0.8, ge=0, le=1)


class Reply(BaseModel):
    """The reply's shape (``facts`` optional)."""

    model_config = ConfigDict(extra="ignore")
    memories: list[_Memory] = Field(default_factory=list)
    facts: list[_Fact] = Field(default_factory=list)


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_reply(text: str) -> Reply:
    """The validated reply (a ```json fence or words around the object are tolerated).

    Raises:
        ValueError: not one JSON object of the expected shape (the message says what is wrong).
    """
    match = _OBJECT.search(text)
    if match is None:
        raise ValueError("the reply holds no JSON object")
    try:
        data: Any = json.loads(match[0])
        return Reply.model_validate(data)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON ({exc.msg})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def render_window(window: Sequence[Message], speaker: str) -> str:
    """The user message of the request: the readable messages with their times and speakers."""
    lines = []
    for m in window:
        if readable(m):
            lines.append(f"[{m.created_at:%Y-%m-%d %H:%M}] {speaker_of(m, speaker)}: {m.content}")
        elif m.role.value == "assistant":
            lines.append(f"[{m.created_at:%Y-%m-%d %H:%M}] assistant: {m.content}")
    return "Conversation:\n" + "\n".join(lines)


class LLMExtractor:
    """Extraction by the configured chat model (module docstring)."""

    method = "llm"

    def __init__(self, chat: ChatModel, *, max_memories: int = MAX_MEMORIES) -> None:
        self.chat = chat
        self.max_memories = max_memories

    def extract(self, window: Sequence[Message], *, speaker: str) -> WindowExtraction:
        """Memory and fact candidates of ``window`` by the model (two attempts)."""
        sources = [m.uid for m in window if readable(m)]
        if not sources:
            return WindowExtraction(method=self.method, model=self.chat.model)
        messages = [ChatMessage("system", SYSTEM_PROMPT.format(speaker=speaker)),
                    ChatMessage("user", render_window(window, speaker))]  # fmt: skip
        problems = []
        for _ in range(ATTEMPTS):
            try:
                reply = parse_reply(self.chat.complete(messages, max_tokens=MAX_TOKENS, temperature=0.0))
            except (ValueError, BackendUnavailableError) as exc:
                problems.append(str(exc))
                continue
            return self._candidates(reply, window, sources)
        raise ExtractionFailedError(f"LLM reply unusable after {ATTEMPTS} attempts: {' / '.join(problems)}")

    def _candidates(self, reply: Reply, window: Sequence[Message], sources: list[str]) -> WindowExtraction:
        when = window[-1].created_at
        memories = [ExtractedMemory(category=m.category, abstract=m.abstract.strip(), overview=m.overview.strip(),
                                    content=m.content.strip(), sources=sources, kind=KIND_OF[m.category.value],
                                    observed_at=when)
                    for m in reply.memories[: self.max_memories]]  # fmt: skip
        facts = [FactCandidate(subject=f.subject, predicate=f.predicate, object=f.object,
                               object_is_entity=len(f.object.split()) <= 3 and not f.object[:1].isdigit(),
                               confidence=f.confidence, valid_from=when, sources=sources)
                 for f in reply.facts]  # fmt: skip
        return WindowExtraction(memories=memories, facts=facts, method=self.method, model=self.chat.model)


__all__ = ["KIND_OF", "SYSTEM_PROMPT", "LLMExtractor", "Reply", "parse_reply", "render_window"]
