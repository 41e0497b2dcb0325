"""The report of one extraction run (JSON through the models, Markdown through :meth:`ExtractionReport.markdown`)."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from kg.models import Model
from kg.models.base import new_list


class EntityMatch(Model):
    """How a name an extractor used was resolved to an entity id."""

    name: str
    entity: str
    method: str
    similarity: float | None = None


class Invalidation(Model):
    """A current fact closed by a newer value of a functional predicate (or a new fact closed by an older
    statement that starts later)."""

    uid: str
    subject: str
    predicate: str
    object: str
    valid_until: str
    by_object: str


class WindowReport(Model):
    """One window of one conversation: messages ``from_seq``..``to_seq`` and what came of them."""

    conversation_uid: str
    from_seq: int
    to_seq: int
    status: Literal["done", "failed", "skipped"]
    scope: str | None = None
    candidates: int = 0
    decisions: dict[str, int] = Field(default_factory=dict)
    written: list[str] = Field(default_factory=new_list)
    updated: list[str] = Field(default_factory=new_list)
    archived: list[str] = Field(default_factory=new_list)
    facts_asserted: list[str] = Field(default_factory=new_list)
    facts_invalidated: list[Invalidation] = Field(default_factory=new_list)
    entities: list[EntityMatch] = Field(default_factory=new_list)
    facts_refused: list[str] = Field(default_factory=new_list)
    error: str | None = None


class ExtractionReport(Model):
    """What one run did: windows, candidates, decisions by kind, facts asserted and invalidated, failures."""

    agent_id: str
    extractor: str
    model: str | None = None
    conversations: int = 0
    messages: int = 0
    windows: list[WindowReport] = Field(default_factory=new_list)
    summaries: list[str] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list)

    @property
    def done(self) -> list[WindowReport]:
        """Windows written."""
        return [w for w in self.windows if w.status == "done"]

    def totals(self) -> dict[str, object]:
        """The run's counts."""
        decisions: Counter[str] = Counter()
        for w in self.windows:
            decisions.update(w.decisions)
        return {
            "windows": len(self.windows),
            "windows_done": len(self.done),
            "windows_failed": sum(w.status == "failed" for w in self.windows),
            "candidates": sum(w.candidates for w in self.windows),
            "decisions": dict(sorted(decisions.items())),
            "items_written": sum(len(w.written) for w in self.windows) + len(self.summaries),
            "facts_asserted": sum(len(w.facts_asserted) for w in self.windows),
            "facts_invalidated": sum(len(w.facts_invalidated) for w in self.windows),
            "facts_refused": sum(len(w.facts_refused) for w in self.windows),
            "failures": [
                f"{w.conversation_uid} {w.from_seq}-{w.to_seq}: {w.error}" for w in self.windows if w.status == "failed"
            ],
        }

    def markdown(self) -> str:
        """The report as Markdown."""
        t = self.totals()
        lines = [f"# Extraction report: {self.agent_id}", "",
                 f"- extractor: {self.extractor}{f' ({self.model})' if self.model else ''}",
                 f"- conversations: {self.conversations}, messages read: {self.messages}",
                 f"- windows: {t['windows']} ({t['windows_done']} written, {t['windows_failed']} failed)",
                 f"- candidates: {t['candidates']}",
                 f"- decisions: {', '.join(f'{k} {v}' for k, v in t['decisions'].items()) or 'none'}",  # type: ignore[attr-defined]
                 f"- memory items written: {t['items_written']} (session summaries: {len(self.summaries)})",
                 f"- facts asserted: {t['facts_asserted']}, facts invalidated: {t['facts_invalidated']}, "
                 f"facts refused: {t['facts_refused']}"]  # fmt: skip
        invalidated = [i for w in self.windows for i in w.facts_invalidated]
        if invalidated:
            lines += ["", "## Facts invalidated", ""]
            lines += [f"- `{i.subject} {i.predicate} {i.object}` valid until {i.valid_until} (now {i.by_object})"
                      for i in invalidated]  # fmt: skip
        refused = [f"{w.from_seq}-{w.to_seq}: {r}" for w in self.windows for r in w.facts_refused]
        if refused:
            lines += ["", "## Facts refused by the sanity checks", ""] + [f"- {r}" for r in refused[:100]]
        failures = t["failures"]
        if failures:
            lines += ["", "## Failures (left for the next run)", ""]
            lines += [f"- {f}" for f in failures]  # type: ignore[attr-defined]
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines) + "\n"


__all__ = ["EntityMatch", "ExtractionReport", "Invalidation", "WindowReport"]
