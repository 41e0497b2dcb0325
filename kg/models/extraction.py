"""What an extractor proposes from a window of conversation messages: memory candidates in the seed's six
categories with three levels (L0 abstract, L1 overview, L2 content), and subject-predicate-object facts."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from kg.models.base import MAX_CONTENT, MAX_OBJECT, MAX_TERM, Model, RecordId, Unit, UtcDatetime, new_list


class Category(StrEnum):
    """The seed's six memory categories (memory-lancedb-pro smart extraction)."""

    PROFILE = "profile"
    PREFERENCES = "preferences"
    ENTITIES = "entities"
    EVENTS = "events"
    CASES = "cases"
    PATTERNS = "patterns"


Line = Annotated[str, Field(min_length=1, max_length=1_000)]
Block = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT)]


class ExtractedMemory(Model):
    """One memory candidate: ``abstract`` (L0, one line), ``overview`` (L1, structured Markdown) and
    ``content`` (L2, the full narrative), from the messages ``sources`` (message uids, in order).

    ``kind`` is the memory type to store it as (``preference``, ``goal``, ``event`` ...); ``topic`` is
    what preferences are aggregated by.
    """

    category: Category
    abstract: Line
    overview: Block
    content: Block
    sources: list[RecordId] = Field(min_length=1, max_length=1_000)
    kind: str = "observation"
    topic: Annotated[str, Field(max_length=200)] = ""
    observed_at: UtcDatetime | None = None


class FactCandidate(Model):
    """One subject-predicate-object fact said in the window, valid from ``valid_from`` (the message time,
    or the date the sentence names)."""

    subject: Annotated[str, Field(min_length=1, max_length=MAX_TERM)]
    predicate: Annotated[str, Field(min_length=1, max_length=MAX_TERM)]
    object: Annotated[str, Field(min_length=1, max_length=MAX_OBJECT)]
    object_is_entity: bool = True
    confidence: Unit = 0.8
    valid_from: UtcDatetime | None = None
    #: When the fact stopped holding, as the text says ("I left Shell in May"); None: still holds.
    valid_until: UtcDatetime | None = None
    #: The statement only ends the fact ("I no longer work at Philips"): it closes the current one at
    #: ``valid_until`` (or records it closed when none is stored) and asserts nothing new.
    ends: bool = False
    sources: list[RecordId] = Field(min_length=1, max_length=1_000)


class WindowExtraction(Model):
    """What an extractor found in one window (``method`` deterministic or llm, ``model`` for llm)."""

    memories: list[ExtractedMemory] = Field(default_factory=new_list)
    facts: list[FactCandidate] = Field(default_factory=new_list)
    #: Facts the sanity checks refused (:mod:`kg.extraction.sanity`), one line each: terms and reason.
    refused: list[str] = Field(default_factory=new_list)
    method: str = "deterministic"
    model: str | None = None


__all__ = ["Category", "ExtractedMemory", "FactCandidate", "WindowExtraction"]
