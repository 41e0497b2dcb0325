"""The LLM extractor: the seed's extraction prompt through the OpenAI-compatible :class:`~kg.ports.ChatModel`.

One request per window, asking for structured output: ``response_format`` ``json_schema`` with :data:`SCHEMA`
(OpenAI, vLLM, Ollama and llama.cpp's server constrain the reply to it). A server that refuses that request
(HTTP 400 or 422) is asked again, for the rest of the run, with the next format of :data:`FORMATS`: ``json_object``
with the schema (llama.cpp), plain ``json_object``, then none; whatever comes back is parsed tolerantly
(:func:`parse_reply`: a code fence, words around the object, control characters inside strings).

The reply is the seed's format (``memories``: category, abstract, overview, content) plus ``facts`` (subject,
predicate, object, confidence, the words saying ``when``, and the earlier value a statement ``replaces``), validated
by pydantic. Every fact then passes :class:`~kg.extraction.sanity.SanityCheck`, as a rule-made one does (a subject
or object not written in the window, an unknown predicate: refused and counted in the report). A fact's lineage
is the message that says it and its ``valid_from`` the date that message's words give (``when``, else the date
in its sentence, resolved against the message's time by :func:`kg.extraction.dates.find_date`), else the
message's time.

Each request has the configured timeout (``[llm] timeout``); an unusable reply, a failing endpoint or a timeout
is retried up to ``attempts`` requests in all, then :class:`~kg.ports.ExtractionFailedError` ends the window:
the service records it as failed, writes nothing of it and leaves it for the next run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kg.errors import BackendUnavailableError
from kg.extraction.dates import find_date
from kg.extraction.deterministic import MAX_MEMORIES, readable, speaker_of
from kg.extraction.entities import Vocabulary, normalise
from kg.extraction.sanity import KNOWN_PREDICATES, Refusal, SanityCheck, found_in, words
from kg.models import Category, ExtractedMemory, FactCandidate, WindowExtraction
from kg.models.base import MAX_OBJECT, MAX_TERM, new_list
from kg.models.conversation import Message
from kg.ports import ChatMessage, ChatModel, ExtractionFailedError
from kg.recall.openai_http import HTTPStatusError

#: The memory type each category is stored as.
KIND_OF = {"profile": "identity", "preferences": "preference", "entities": "fact", "events": "event",
           "cases": "lesson", "patterns": "skill"}  # fmt: skip
MAX_TOKENS = 2_000
#: Requests per window (the first and its retries) unless configured (``[llm] attempts``).
ATTEMPTS = 2
#: Statuses by which a server says it does not take the request as sent (here: its ``response_format``).
_REFUSED_FORMAT = frozenset({400, 422})


def _format_refused(exc: HTTPStatusError) -> bool:
    """Whether the server refused the request's ``response_format``: 400 or 422, or any error status whose body
    names it (llama-cpp-python's server answers an unknown ``type`` with 500 and its validation error)."""
    return exc.status in _REFUSED_FORMAT or any(word in str(exc) for word in ("response_format", "json_schema"))


_TEXT = {"type": "string"}  # no maxLength: llama.cpp spells a bound out as that many grammar rules, slowly;
_LINE = {"type": "string"}  # max_tokens bounds the reply
_FACT = {"type": "object", "additionalProperties": False,
         "required": ["subject", "predicate", "object", "confidence", "when", "replaces"],
         "properties": {"subject": _LINE, "predicate": _LINE, "object": _LINE,
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "when": _LINE, "replaces": _LINE}}  # fmt: skip
_MEMORY = {"type": "object", "additionalProperties": False, "required": ["category", "abstract", "overview", "content"],
           "properties": {"category": {"type": "string", "enum": [c.value for c in Category]},
                          "abstract": _LINE, "overview": _TEXT, "content": _TEXT}}  # fmt: skip
#: The reply's JSON schema (every key required and nothing else allowed, as OpenAI's strict mode wants; arrays
#: bounded; facts first, so that a reply cut at ``max_tokens`` loses memories rather than facts).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts", "memories"],
    "properties": {"facts": {"type": "array", "maxItems": 8, "items": _FACT},
                   "memories": {"type": "array", "maxItems": MAX_MEMORIES, "items": _MEMORY}},
}  # fmt: skip
#: The ``response_format`` values tried in order; a server refusing one gets the next for the rest of the run.
FORMATS: tuple[dict[str, Any] | None, ...] = (
    {"type": "json_schema", "json_schema": {"name": "extraction", "schema": SCHEMA, "strict": True}},
    {"type": "json_object", "schema": SCHEMA},
    {"type": "json_object"},
    None,
)

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

Also list the subject-predicate-object facts the user states about themselves or others:
- subject: "{speaker}" for the user, else a name exactly as written in the conversation
- predicate: one of {predicates}, or has<Relation> (hasSister, hasDog)
- object: a few words copied exactly from the conversation
- confidence: from 0 to 1
- when: the words of the conversation that say when it became true ("last week", "in March"), else ""
- replaces: the earlier value this statement ends ("I moved from Berlin to Paris": "Berlin"), else ""
- no facts from questions, wishes, hypotheticals ("if I ..."), what someone else said, or what the user corrects

Answer with one JSON object and nothing else:
{{"memories": [{{"category": "profile|preferences|entities|events|cases|patterns", "abstract": "One-line index", \
"overview": "Structured Markdown summary", "content": "Full narrative"}}], \
"facts": [{{"subject": "...", "predicate": "...", "object": "...", "confidence": 0.9, "when": "", "replaces": ""}}]}}"""


class _Memory(BaseModel):
    model_config = ConfigDict(extra="ignore")
    category: Category
    abstract: Annotated[str, Field(min_length=1, max_length=1_000)]
    overview: Annotated[str, Field(min_length=1, max_length=60_000)]
    content: Annotated[str, Field(min_length=1, max_length=60_000)]


class _Fact(BaseModel):
    """One fact of the reply: blank or overlong terms are refused one by one later, not the whole reply."""

    model_config = ConfigDict(extra="ignore")
    subject: Annotated[str, Field(max_length=MAX_TERM)]
    predicate: Annotated[str, Field(max_length=MAX_TERM)]
    object: Annotated[str, Field(max_length=MAX_OBJECT)]
    confidence: float = 0.8
    when: Annotated[str, Field(max_length=MAX_TERM)] | None = None
    replaces: Annotated[str, Field(max_length=MAX_TERM)] | None = None


class Reply(BaseModel):
    """The reply's shape (``facts`` optional)."""

    model_config = ConfigDict(extra="ignore")
    memories: list[_Memory] = Field(default_factory=new_list)
    facts: list[_Fact] = Field(default_factory=new_list)


_DECODER = json.JSONDecoder(strict=False)  # control characters inside strings (a raw newline) are tolerated
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_reply(text: str) -> Reply:
    """The validated reply: the first JSON object of ``text`` that has the reply's shape (a ```json fence, words
    around the object and control characters inside its strings are tolerated).

    Raises:
        ValueError: no such object (the message says what is wrong).
    """
    candidates = [m[1] for m in _FENCE.finditer(text)] + [text]
    problem = "the reply holds no JSON object"
    for chunk in candidates:
        for start in (i for i, c in enumerate(chunk) if c == "{"):
            try:
                data, _ = _DECODER.raw_decode(chunk, start)
            except json.JSONDecodeError as exc:
                if problem.startswith("the reply holds no"):
                    problem = f"the reply is not valid JSON ({exc.msg})"
                continue
            if not isinstance(data, dict) or not {"memories", "facts"} & data.keys():
                continue  # not the reply (a fact of a reply cut short is an object too)
            try:
                return Reply.model_validate(data)
            except ValidationError as exc:
                first = exc.errors()[0]
                problem = f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
                break  # an object of the wrong shape: its inner objects are not the reply either
    raise ValueError(problem)


def render_window(window: Sequence[Message], speaker: str) -> str:
    """The user message of the request: the readable messages with their times and speakers."""
    lines = []
    for m in window:
        if readable(m):
            lines.append(f"[{m.created_at:%Y-%m-%d %H:%M}] {speaker_of(m, speaker)}: {m.content}")
        elif m.role.value == "assistant":
            lines.append(f"[{m.created_at:%Y-%m-%d %H:%M}] assistant: {m.content}")
    return "Conversation:\n" + "\n".join(lines)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


class LLMExtractor:
    """Extraction by the configured chat model (module docstring).

    Args:
        chat: the chat model (its timeout bounds each request).
        vocabulary: the ontology's terms, for the sanity checks (empty: the known predicates only).
        attempts: requests per window at most (1 to 10).
        max_tokens: the most tokens a reply may take.
        known: entity ids a fact may name without the window's text naming them (the agent's entities).
    """

    method = "llm"

    def __init__(self, chat: ChatModel, *, max_memories: int = MAX_MEMORIES, vocabulary: Vocabulary | None = None,
                 attempts: int = ATTEMPTS, max_tokens: int = MAX_TOKENS,
                 known: Sequence[str] = ()) -> None:  # fmt: skip
        if not 1 <= attempts <= 10:
            raise ValueError(f"attempts must be between 1 and 10, got {attempts}")
        self.chat = chat
        self.max_memories = max_memories
        self.vocabulary = vocabulary or Vocabulary()
        self.attempts = attempts
        self.max_tokens = max_tokens
        self.known = list(known)
        self.format = 0  # index into FORMATS: moves down when a server refuses one

    def extract(self, window: Sequence[Message], *, speaker: str) -> WindowExtraction:
        """Memory and fact candidates of ``window`` by the model (at most ``attempts`` requests).

        Raises:
            ExtractionFailedError: no usable reply within the attempts (each problem is named).
        """
        sources = [m.uid for m in window if readable(m)]
        if not sources:
            return WindowExtraction(method=self.method, model=self.chat.model)
        predicates = ", ".join(sorted(KNOWN_PREDICATES | set(self.vocabulary.properties.values())))
        messages = [ChatMessage("system", SYSTEM_PROMPT.format(speaker=speaker, predicates=predicates)),
                    ChatMessage("user", render_window(window, speaker))]  # fmt: skip
        problems: list[str] = []
        attempt = 0
        while attempt < self.attempts:
            try:
                text = self._complete(messages)
            except HTTPStatusError as exc:
                if _format_refused(exc) and self.format < len(FORMATS) - 1:
                    self.format += 1  # the server does not take this response_format: the next one, not an attempt
                    problems.append(f"{exc} (asking without that response_format)")
                    continue
                problems.append(str(exc))
            except BackendUnavailableError as exc:
                problems.append(str(exc))
            else:
                try:
                    return self._candidates(parse_reply(text), window, speaker)
                except ValueError as exc:
                    problems.append(str(exc))
            attempt += 1
        raise ExtractionFailedError(f"LLM reply unusable after {self.attempts} attempts: {' / '.join(problems)}")

    def _complete(self, messages: list[ChatMessage]) -> str:
        response_format: Mapping[str, Any] | None = FORMATS[self.format]
        if response_format is None:
            return self.chat.complete(messages, max_tokens=self.max_tokens, temperature=0.0)
        return self.chat.complete(messages, max_tokens=self.max_tokens, temperature=0.0,
                                  response_format=response_format)  # fmt: skip

    def _candidates(self, reply: Reply, window: Sequence[Message], speaker: str) -> WindowExtraction:
        said = [m for m in window if readable(m)]
        sources = [m.uid for m in said]
        when = said[-1].created_at
        memories = [ExtractedMemory(category=m.category, abstract=m.abstract.strip(), overview=m.overview.strip(),
                                    content=m.content.strip(), sources=sources, kind=KIND_OF[m.category.value],
                                    observed_at=when)
                    for m in reply.memories[: self.max_memories]]  # fmt: skip
        names = [speaker, *dict.fromkeys(speaker_of(m, speaker) for m in said)]
        check = SanityCheck(self.vocabulary, speakers=names, known=self.known)
        text = "\n".join(m.content for m in said)
        text_words = words(text)
        facts: list[FactCandidate] = []
        refused: list[str] = []
        for f in reply.facts:
            subject, predicate, obj = f.subject.strip(), f.predicate.strip(), f.object.strip()
            if not (subject and predicate and obj):
                refused.append(f"{subject} {predicate} {obj}: a term is blank")
                continue
            confidence = min(max(f.confidence, 0.0), 1.0)  # a model's 1.5 is its "sure", not a broken reply
            proposed = FactCandidate(subject=subject, predicate=predicate, object=obj, confidence=confidence,
                                     object_is_entity=len(obj.split()) <= 3 and not obj[:1].isdigit(),
                                     valid_from=when, sources=sources)  # fmt: skip
            result = check.check_words(proposed, text_words, text)
            if isinstance(result, Refusal):
                refused.append(result.line())
                continue
            dated = _dated(result, f.when, said)
            ending = self._ending(dated, (f.replaces or "").strip(), check, text_words)
            if isinstance(ending, str):
                refused.append(ending)
            elif ending is not None:
                facts.append(ending)
            facts.append(dated)
        return WindowExtraction(memories=memories, facts=facts, method=self.method, model=self.chat.model,
                                refused=refused)  # fmt: skip

    def _ending(self, fact: FactCandidate, old: str, check: SanityCheck,
                text_words: Sequence[str]) -> FactCandidate | str | None:  # fmt: skip
        """The model's word that ``fact`` replaces the earlier value ``old``, as an ending the planner carries out
        (closing the current fact with that value at ``fact``'s start); why not (a refusal line); or None when
        the model said nothing. Accepted when ``old`` is written in the window and the predicate allows one
        value at a time (:meth:`Vocabulary.is_functional`: the ontology's functional properties and the default
        list); a predicate that may hold several values keeps the earlier one (an opposite statement, "I can't
        stand coffee now", closes ``likes coffee`` in the planner without the model's word)."""
        if not old or normalise(old) == normalise(fact.object):
            return None
        line = f"{fact.subject} {fact.predicate} {' '.join(old.split())[:80]}"
        predicate = fact.predicate
        if not self.vocabulary.is_functional(predicate):
            return f"{line}: not closed, {predicate} may hold several values at once"
        if not found_in(text_words, old) and normalise(old) not in check.known:
            return f"{line}: not closed, {old[:80]!r} is not found in the window"
        return FactCandidate(subject=fact.subject, predicate=predicate, object=old, confidence=fact.confidence,
                             object_is_entity=fact.object_is_entity, valid_until=fact.valid_from, ends=True,
                             sources=fact.sources)  # fmt: skip


def _dated(fact: FactCandidate, when: str | None, said: Sequence[Message]) -> FactCandidate:
    """``fact`` with the message that says it as its source and the date its words give (module docstring)."""
    source = next((m for m in reversed(said) if found_in(words(m.content), fact.object)), None)
    if source is None:  # a known entity the window does not spell out: the window's messages and end
        return fact
    moment = source.created_at
    found = None
    if when and when.strip() and found_in(words(source.content), when):
        found = find_date(when, moment)
    if found is None:
        sentence = next((s for s in _SENTENCE.split(source.content) if found_in(words(s), fact.object)),
                        source.content)  # fmt: skip
        found = find_date(sentence, moment)
    start: datetime = found.when if found is not None and found.when <= moment else moment
    return fact.model_copy(update={"sources": [source.uid], "valid_from": start})


__all__ = ["ATTEMPTS", "FORMATS", "KIND_OF", "SCHEMA", "SYSTEM_PROMPT", "LLMExtractor", "Reply", "parse_reply",
           "render_window"]  # fmt: skip
