"""The extraction use case's request: what ``memory extract`` takes, declared once.

:func:`kg.extraction.workspace.extract` accepts it (the extractor, admission preset and window choose the run, the
session and seq where it reads); the ``memory_extract`` tool (cli/tools/extraction.py) is it plus ``agent_id``,
and ``mabos memory extract`` generates its options from it (docs/decisions/2026-11-28-request-models.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kg.models.request import Request

#: Messages per window (the default), and the most one window takes.
WINDOW = 8
MAX_WINDOW = 200
#: The admission presets (kg.memory.admission.PRESETS, named here so a request imports no numeric stack).
ADMISSION_PRESETS = ("balanced", "conservative", "high-recall")

Extractor = Literal["auto", "deterministic", "llm"]


class ExtractRequest(Request):
    """Which conversation messages to extract, and how."""

    session: str | None = Field(default=None, description="One conversation (session key or uid); default all.")
    since: int | None = Field(
        default=None, ge=0, description="Start at this message seq when it is past the mark (never re-reads)."
    )
    extractor: Extractor = Field(
        default="auto", description="auto: the configured LLM if any, else the deterministic sentence rules."
    )
    admission: str = Field(
        default="balanced", description=f"Admission preset ({', '.join(sorted(ADMISSION_PRESETS))}) or off."
    )
    window: int = Field(default=WINDOW, ge=1, le=MAX_WINDOW, description="Messages per extraction window.")


__all__ = ["ADMISSION_PRESETS", "MAX_WINDOW", "WINDOW", "ExtractRequest", "Extractor"]
