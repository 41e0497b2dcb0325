"""From conversation to knowledge: memory and fact extraction over conversation messages (issue 21).

``extraction_service(ws)`` builds the run for a workspace::

    report = extraction_service(ws).extract("sales-agent")          # every conversation, from its mark
    report = extraction_service(ws, extractor="llm").extract("a", session="s1")

Extractors: ``deterministic`` (sentence rules, no model: the default), ``llm`` (the configured
``[conversation] llm_url``, or ``MABOS_LLM_URL``/``MABOS_LLM_MODEL``), ``auto`` (llm when configured, else
deterministic). docs/extraction.md describes what each finds.
"""

from __future__ import annotations

from kg.extraction.deterministic import DeterministicExtractor, compress
from kg.extraction.entities import DEFAULT_FUNCTIONAL, EntityResolver, Vocabulary
from kg.extraction.importance import importance
from kg.extraction.llm import LLMExtractor
from kg.extraction.report import ExtractionReport, WindowReport
from kg.extraction.service import WINDOW, ExtractionService
from kg.extraction.workspace import EXTRACTORS, extraction_service, workspace_chat

__all__ = ["DEFAULT_FUNCTIONAL", "EXTRACTORS", "WINDOW", "DeterministicExtractor", "EntityResolver",
           "ExtractionReport", "ExtractionService", "LLMExtractor", "Vocabulary", "WindowReport", "compress",
           "extraction_service", "importance", "workspace_chat"]  # fmt: skip
