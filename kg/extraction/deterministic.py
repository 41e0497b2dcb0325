"""The deterministic extractor (the default: no model, no key): sentence rules over a window of messages.

Only messages written by the user side are read (``role`` user; the message ``name``, when set, names the
speaker, else the ``speaker`` given); system, assistant and tool messages, and user messages that look
like tool output (a code fence, JSON, a traceback), are skipped. Each statement sentence goes through
:mod:`kg.extraction.rules`; statements are grouped into memories (preferences by topic, a profile per
speaker, an entity per related person or thing, events per message and kind) and at most
:data:`MAX_MEMORIES` are kept per window (profile first, then preferences, entities, cases, patterns,
events). Every fact any rule finds is kept.

:func:`compress` is the seed's compression (the OpenClaw enhancement spec, section 4): a conversation of more
than :data:`SUMMARY_AFTER` messages becomes one condensed memory of user facts, decisions, preferences, goals
and lessons of at most :data:`SUMMARY_WORDS` words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from kg.extraction.changes import endings
from kg.extraction.clauses import clauses
from kg.extraction.coref import People
from kg.extraction.rules import Statement, skipped, slug, statements
from kg.models import Category, ExtractedMemory, FactCandidate, WindowExtraction
from kg.models.base import MAX_CONTENT
from kg.models.conversation import Message, Role

#: Memories kept per window (the seed's MAX_MEMORIES_PER_EXTRACTION).
MAX_MEMORIES = 5
#: A conversation longer than this gets a session summary (the seed's compression trigger).
SUMMARY_AFTER = 20
#: Words of a session summary at most.
SUMMARY_WORDS = 100
#: Source messages a summary's lineage lists at most (the first ones with a statement).
MAX_SOURCES = 1_000
_ORDER = {"profile": 0, "preferences": 1, "entities": 2, "cases": 3, "patterns": 4, "events": 5}
_TITLES = {"profile": "Profile", "preferences": "Preferences", "entities": "Entity", "events": "Event",
           "cases": "Case", "patterns": "Pattern"}  # fmt: skip
_TOOLISH = re.compile(r"^\s*(?:```|\{|\[\s*\{|Traceback \(most recent call last\))")
_FACT_CONFIDENCE = {"profile": 0.9, "entities": 0.85, "preferences": 0.8, "events": 0.75}
#: Characters of an overview (L1) at most; the narrative (L2) gets the rest of a stored item's
#: :data:`MAX_CONTENT` (the three levels are stored as one text).
OVERVIEW_CHARS = 16_000
CONTENT_CHARS = MAX_CONTENT - OVERVIEW_CHARS - 1_000
#: Characters of one message quoted in a narrative at most.
QUOTE_CHARS = 2_000


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a line or word boundary, marked with "…" when cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    at = max(head.rfind("\n"), head.rfind(" "))
    return (head[:at] if at > limit // 2 else head).rstrip() + "…"


def readable(message: Message) -> bool:
    """Whether the extractor reads ``message`` (user side, not tool output)."""
    return message.role is Role.USER and not _TOOLISH.match(message.content)


def speaker_of(message: Message, default: str) -> str:
    """The entity the message's first person refers to."""
    return slug(message.name) if message.name else default


#: Clause modes that say nothing about the speaker (:mod:`kg.extraction.clauses`).
SILENT = frozenset({"question", "hypothetical", "reported", "negated"})


def clause_statement(text: str, mode: str, who: str, when: datetime) -> Statement | None:
    """The statement of one clause said in ``mode`` (None for a silent mode or when no rule matches); the facts
    of an ``ended`` clause become its endings."""
    if mode == "wish":  # "I'd love to make a pottery bowl": a goal memory, never a fact
        wished = None if skipped(text) else statements(text, who, when)
        if wished is None or wished.kind != "goal":
            return None
        wished.facts, wished.phrase = [], wished.phrase.replace("plans to", "wishes to", 1)
        return wished
    if mode in SILENT or skipped(text):
        return None
    statement = statements(text, who, when)
    ends = endings(text, who)
    if mode == "ended" and statement is not None:
        ends += [f for f in statement.facts if f not in ends]
        statement.facts, statement.phrase = [], f"no longer {statement.phrase}"
    if statement is None and ends:
        statement = Statement("events", "event", text, text, who, when)
    if statement is not None:
        statement.ends = ends
    return statement


def window_statements(window: Sequence[Message], speaker: str,
                      people: dict[str, People] | None = None) -> list[tuple[Message, Statement]]:  # fmt: skip
    """Every statement of the readable messages of ``window``, in order (``people``: the persons each
    conversation mentioned so far, by conversation uid, for pronouns)."""
    people = {} if people is None else people
    found = []
    for message in window:
        if not readable(message):
            continue
        who = speaker_of(message, speaker)
        known = people.setdefault(message.conversation_uid, People())
        for clause in clauses(message.content, message.created_at, known):
            statement = clause_statement(clause.text, clause.mode, who, message.created_at)
            if statement is not None:
                statement.sentence, statement.date = clause.sentence, clause.date
                found.append((message, statement))
    return found


def _key(message: Message, s: Statement) -> tuple[str, ...]:
    if s.category == "profile":
        return ("profile", s.speaker)
    if s.category == "preferences":
        return ("preferences", s.speaker, s.topic)
    if s.category == "entities":
        return ("entities", s.speaker, s.group)
    if s.category == "patterns":
        return ("patterns", s.speaker)
    if s.category == "cases":
        return ("cases", s.speaker, message.uid, s.sentence)
    return ("events", s.speaker, s.kind, message.uid)


def _grouped(found: Sequence[tuple[Message, Statement]], cap: int) -> list[tuple[str, list[tuple[Message, Statement]]]]:
    """The statements grouped into memories, ranked (profile first ... events last), at most ``cap``: events are one
    memory per message and kind while they fit; over the cap, the two smallest event memories of one speaker
    (else of any speakers) are joined, again and again, so that every statement of the window is kept in some
    memory rather than cut, in memories as small as the cap allows."""
    groups: dict[tuple[str, ...], list[tuple[Message, Statement]]] = {}
    for message, s in found:
        groups.setdefault(_key(message, s), []).append((message, s))
    ranked = [(k, g) for k, g in sorted(groups.items(), key=lambda kv: _ORDER[kv[0][0]])]  # stable
    while len(ranked) > cap:
        events = [i for i, (k, _) in enumerate(ranked) if k[0] == "events"]
        every = [(len(ranked[a][1]) + len(ranked[b][1]), a, b) for n, a in enumerate(events) for b in events[n + 1 :]]
        pairs = [p for p in every if ranked[p[1]][0][1] == ranked[p[2]][0][1]] or every  # one speaker's first
        if not pairs:
            break
        _, a, b = min(pairs)
        ranked[a] = (ranked[a][0], ranked[a][1] + ranked[b][1])
        del ranked[b]
    return [(k[0], g) for k, g in ranked[:cap]]


def _dated(s: Statement) -> str:
    return f"{s.phrase} ({s.date.label()})" if s.date is not None else s.phrase


def render(category: str, group: list[tuple[Message, Statement]]) -> ExtractedMemory:
    """One memory from statements of one group: L0 abstract, L1 overview, L2 narrative (each message quoted whole,
    once: the statement's context)."""
    first = group[0][1]
    speakers = list(dict.fromkeys(s.speaker for _, s in group))
    who, topic = ", ".join(speakers), first.topic
    mixed = len(speakers) > 1
    phrases = list(dict.fromkeys(f"{s.speaker} {_dated(s)}" if mixed else _dated(s) for _, s in group))
    head = f"{who} ({topic})" if topic else who
    abstract = f"{head}: {'; '.join(phrases)}"
    if len(abstract) > 300:
        abstract = abstract[:299] + "…"
    lines = [f"## {_TITLES[category]}{': ' + topic if topic else ''}", f"- speaker: {who}"]
    lines += [f"- {p}" for p in phrases]
    narrative = []
    for message, s in group:
        quote = cut(" ".join(message.content.split()), QUOTE_CHARS)
        said = f'On {message.created_at:%Y-%m-%d}, {s.speaker} said: "{quote}"'
        if s.date is not None:
            said += f" ({s.date.text} = {s.date.label()})"
        narrative.append(said)
    sources = list(dict.fromkeys(m.uid for m, _ in group))
    overview = cut("\n".join(lines), OVERVIEW_CHARS)
    return ExtractedMemory(category=Category(category), abstract=abstract, overview=overview,
                           content=cut(" ".join(dict.fromkeys(narrative)), CONTENT_CHARS), sources=sources,
                           kind=first.kind, topic=topic, observed_at=group[-1][0].created_at)  # fmt: skip


def facts_of(found: Sequence[tuple[Message, Statement]]) -> list[FactCandidate]:
    """The facts of the statements (first statement of each (s, p, o) wins), valid from the date the sentence
    names when that is not after the message, else from the message time."""
    out: dict[tuple[str, str, str], FactCandidate] = {}
    for message, s in found:
        start: datetime = message.created_at
        if s.date is not None and s.date.when <= message.created_at and s.kind != "goal":
            start = s.date.when
        for subject, predicate, obj, entity in s.ends:
            key = (subject, "-" + predicate, obj.lower())
            out.setdefault(key, FactCandidate(subject=subject, predicate=predicate, object=obj, object_is_entity=entity,
                                              confidence=_FACT_CONFIDENCE.get(s.category, 0.7), valid_until=start,
                                              ends=True, sources=[message.uid]))  # fmt: skip
        for subject, predicate, obj, entity in s.facts:
            key = (subject, predicate, obj.lower())
            if key not in out:
                out[key] = FactCandidate(subject=subject, predicate=predicate, object=obj, object_is_entity=entity,
                                         confidence=_FACT_CONFIDENCE.get(s.category, 0.7), valid_from=start,
                                         sources=[message.uid])  # fmt: skip
    return list(out.values())


class DeterministicExtractor:
    """Sentence rules over first-person statements (module docstring); ``max_memories`` per window."""

    method = "deterministic"

    def __init__(self, *, max_memories: int = MAX_MEMORIES) -> None:
        self.max_memories = max_memories
        self.people: dict[str, People] = {}  # persons mentioned so far, per conversation (for pronouns)

    def extract(self, window: Sequence[Message], *, speaker: str) -> WindowExtraction:
        """Memory and fact candidates of ``window``."""
        found = window_statements(window, speaker, self.people)
        memories = [render(category, group) for category, group in _grouped(found, self.max_memories)]
        return WindowExtraction(memories=memories, facts=facts_of(found), method=self.method)


def compress(messages: Sequence[Message], speaker: str, *, words: int = SUMMARY_WORDS) -> ExtractedMemory | None:
    """The session summary of a conversation of more than :data:`SUMMARY_AFTER` messages (None otherwise, or when
    no statement was found): user facts, decisions, preferences, goals and lessons, dates and names kept."""
    if len(messages) <= SUMMARY_AFTER:
        return None
    found = window_statements(messages, speaker)
    speakers = {s.speaker for _, s in found}
    sections: dict[str, list[str]] = {"User facts": [], "Decisions made": [], "Preferences": [], "Goals": [],
                                      "Lessons": []}  # fmt: skip
    for _, s in found:
        text = _dated(s) if len(speakers) == 1 else f"{s.speaker} {_dated(s)}"
        if s.category in ("profile", "entities"):
            sections["User facts"].append(text)
        elif s.kind == "decision":
            sections["Decisions made"].append(text)
        elif s.category == "preferences":
            sections["Preferences"].append(text)
        elif s.kind == "goal":
            sections["Goals"].append(text)
        elif s.category == "cases":
            sections["Lessons"].append(text)
    lines, used = [], 0
    for title, said in sections.items():
        items = list(dict.fromkeys(said))
        if not items:
            continue
        line = f"- {title}: {'; '.join(items)}"
        budget = words - used
        if budget <= 2:
            break
        tokens = line.split()
        if len(tokens) > budget:
            line = " ".join(tokens[:budget]) + " …"
        lines.append(line)
        used += min(len(tokens), budget)
    if not lines:
        return None
    first, last = messages[0], messages[-1]
    sources = list(dict.fromkeys(m.uid for m, _ in found))[:MAX_SOURCES]  # a record's lineage list holds 1,000
    return ExtractedMemory(
        category=Category.EVENTS, kind="fact", topic="session summary",
        abstract=f"Session summary {first.created_at:%Y-%m-%d} to {last.created_at:%Y-%m-%d} "
        f"({len(messages)} messages)",
        overview="\n".join(lines), content="\n".join(lines), sources=sources, observed_at=last.created_at,
    )  # fmt: skip


__all__ = ["MAX_MEMORIES", "SUMMARY_AFTER", "SUMMARY_WORDS", "DeterministicExtractor", "compress", "facts_of",
           "readable", "render", "window_statements"]  # fmt: skip
