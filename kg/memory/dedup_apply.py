"""Applying a dedup decision (:mod:`kg.memory.dedup`) through the memory service, without loss.

``merge``, ``contradict`` and ``supersede`` write a new item whose ``derived_from`` names the old one, then archive
the old one (``archived_at`` now, a tag ``merged`` / ``contradicted`` / ``superseded``); ``support`` raises the
old item's confidence and importance; a decision tying a candidate to a memory of another scope becomes
``create``. Nothing is ever deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from kg.memory.admission import MemoryCandidate
from kg.memory.dedup import DedupAction, DedupDecision, new_content_words
from kg.memory.importance import formula_weighted
from kg.memory.service import MemoryService
from kg.models import MAX_CONTENT, MAX_TAGS, MemoryItem, Model
from kg.models.base import new_list
from kg.scopes import merge_refusal

#: ``support`` raises confidence as a noisy-OR with this much evidence: each support halves the doubt.
SUPPORT_EVIDENCE = 0.5
#: Tags put on an archived item, by the action that retired it.
RETIRED_TAG = {"merge": "merged", "contradict": "contradicted", "supersede": "superseded"}
#: Between the existing text and the candidate's in a rules merge.
SEPARATOR = " | "


class AppliedDecision(Model):
    """What applying a decision changed in the store (``action`` is what was done: ``create`` when the decision
    named a memory of another scope, which ``notes`` then explains)."""

    action: DedupAction
    target_uid: str | None = None
    written: list[str] = Field(default_factory=new_list)
    updated: list[str] = Field(default_factory=new_list)
    archived: list[str] = Field(default_factory=new_list)
    notes: list[str] = Field(default_factory=new_list)


def merged_text(existing: str, candidate: str) -> str:
    """The text of a rules merge: the existing text, plus the candidate's when it brings new content words."""
    if not new_content_words(candidate, existing):
        return existing
    text = existing.strip() + SEPARATOR + candidate.strip()
    return text if len(text) <= MAX_CONTENT else text[: MAX_CONTENT - 1] + "…"


def _with_tag(tags: Sequence[str], tag: str) -> list[str]:
    out = list(dict.fromkeys(tags))
    return [*out, tag] if tag not in out and len(out) < MAX_TAGS else out


def _union(*groups: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(t for g in groups for t in g))[:MAX_TAGS]


def apply_decision(memory: MemoryService, agent_id: str, candidate: MemoryCandidate, decision: DedupDecision, *,
                   sources: Sequence[str] = ()) -> AppliedDecision:  # fmt: skip
    """Carry out ``decision`` through the memory service; nothing is ever deleted.

    ``sources`` (message uids, for an extracted candidate) go into the lineage (``derived_from``) of any item
    written, after the memory it replaces or extends.

    A new item is written before the old one is archived, so an interruption between the two steps leaves
    both active (never neither).
    """
    action = decision.action
    done = AppliedDecision(action=action, target_uid=decision.target_uid)
    if action == "skip":
        return done
    fields: dict[str, Any] = candidate.model_dump(include={"type", "importance", "tags", "store", "scope", "source"})
    if sources:
        fields["derived_from"] = list(sources)
    if action == "create" or decision.target_uid is None:
        done.written.append(memory.store_item(agent_id, candidate.content, **fields).item.uid)
        return done
    old = memory.get(agent_id, decision.target_uid)
    scope = memory.policy.check_write(agent_id, candidate.scope)
    if (refusal := _cross_scope(action, scope, old)) is not None:
        item = memory.store_item(agent_id, candidate.content, **fields).item
        return AppliedDecision(action="create", written=[item.uid], notes=[refusal])
    if action == "support":
        confidence = 1 - (1 - old.confidence) * (1 - SUPPORT_EVIDENCE)
        # a formula-weighted importance is left to the formula (the tag update recalculates it)
        weight = {} if formula_weighted(old) else {"importance": max(old.importance, candidate.effective_importance())}
        memory.update(agent_id, old.uid, confidence=round(confidence, 6), tags=_union(old.tags, candidate.tags),
                      **weight)  # fmt: skip
        done.updated.append(old.uid)
        return done
    content = _new_content(action, old, candidate, decision)
    fields["derived_from"] = [old.uid, *sources]
    if action == "merge":
        fields.update(type=old.type, importance=max(old.importance, candidate.effective_importance()),
                      tags=_union(old.tags, candidate.tags), scope=old.scope, store=old.store)  # fmt: skip
    elif action == "contextualize":
        fields["tags"] = _with_tag(candidate.tags, "context")
        if decision.context_label:
            fields["tags"] = _with_tag(fields["tags"], f"context:{decision.context_label}")
    elif action == "contradict":
        fields["tags"] = _with_tag(candidate.tags, "contradicts")
    done.written.append(memory.store_item(agent_id, content, **fields).item.uid)
    if action in RETIRED_TAG:
        memory.update(agent_id, old.uid, archived_at=memory.clock.now(), tags=_with_tag(old.tags, RETIRED_TAG[action]))
        done.archived.append(old.uid)
    return done


def _cross_scope(action: str, scope: str, old: MemoryItem) -> str | None:
    """Why ``action`` may not tie a candidate of ``scope`` to ``old`` (None: same scope, it may)."""
    if (refusal := merge_refusal([scope, old.scope])) is None:
        return None
    return f"{action} with {old.uid} ({old.scope}) not done: {refusal}; stored as a new item in {scope}"


def _new_content(action: str, old: MemoryItem, candidate: MemoryCandidate, decision: DedupDecision) -> str:
    if decision.content and action in ("merge", "supersede"):
        return decision.content
    return merged_text(old.content, candidate.content) if action == "merge" else candidate.content


__all__ = ["RETIRED_TAG", "SEPARATOR", "SUPPORT_EVIDENCE", "AppliedDecision", "apply_decision", "merged_text"]
