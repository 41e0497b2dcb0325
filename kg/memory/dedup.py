"""Dedup decisions for memory candidates that resemble existing memories, and applying them without loss.

For one candidate, the agent's existing memories with similarity >= :data:`PREFILTER` (0.7) are its
neighbours, the best :data:`TOP_K` (3) of them. No neighbour: ``create``. Otherwise one decision among

==============  =================================================================================
create          nothing close enough: store the candidate as a new memory
merge           the same memory said again with little new: one new item replaces the old one
skip            nothing new at all (same words): write nothing
support         confirms an existing memory: raise its confidence and importance, write no new item
contextualize   related, adds context or detail: store it, linked to the existing memory
contradict      says the existing memory is false: store it, retire the old one
supersede       a newer version of the existing memory: store it, retire the old one
==============  =================================================================================

**By the LLM** when a :class:`~kg.ports.ChatModel` is given: one request per candidate with neighbours,
asking for a single JSON object (:data:`SYSTEM_PROMPT`). A reply that is not such an object, names an
unknown action or a memory that is not a neighbour, or an endpoint that fails, falls back to the rules,
and the decision's ``notes`` say so.

**By similarity rules** otherwise (cosine with an embedder, token Jaccard without one):

- top similarity > :data:`MERGE_ABOVE` (0.9): ``merge`` (``skip`` when the words are the same);
- 0.7 to 0.9, related: ``support`` when the candidate brings no content word the neighbour lacks
  (stopwords aside), else ``contextualize``;
- below 0.7: ``create``.

The rules never say ``contradict`` or ``supersede``: telling a correction from a paraphrase needs the LLM.

**Batch-internal dedup** (:func:`batch_duplicates`): inside one batch, a candidate at cosine >=
:data:`BATCH_SIMILARITY` (0.85) to an earlier kept candidate is dropped as its duplicate, with the reason.

**Applying** (:func:`kg.memory.dedup_apply.apply_decision`) never deletes: ``merge``, ``contradict`` and
``supersede`` write a new item whose ``derived_from`` names the old one, then archive the old one (``archived_at``
now, a tag ``merged`` / ``contradicted`` / ``superseded``). Archived items stay recallable (``include_archived``,
``valid_at`` before the archive time): the history is bi-temporal.

**Scopes.** A decision that ties the candidate to a stored memory (every action but ``create`` and ``skip``)
is carried out only when both are in the same scope (the candidate's scope, its agent's own by default).
Across scopes it becomes ``create``: the candidate alone, in its own scope, unlinked, and the stored memory
untouched, with a note saying why. Otherwise a private candidate merged into a ``global`` neighbour would
publish its text, ``support`` would copy its tags there, and a ``project:x`` memory retired by an
``agent:a`` correction would vanish for the project with no visible successor (the rule of derived records,
:mod:`kg.scopes`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import Field

from kg.errors import BackendUnavailableError
from kg.memory.admission import MemoryCandidate
from kg.memory.grounding import words
from kg.memory.neighbours import Neighbours, bulk, unit_rows
from kg.models import MAX_CONTENT, Model
from kg.models.base import new_list
from kg.ports import ChatMessage, ChatModel, Embedder

DedupAction = Literal["create", "merge", "skip", "support", "contextualize", "contradict", "supersede"]
ACTIONS: tuple[str, ...] = ("create", "merge", "skip", "support", "contextualize", "contradict", "supersede")
#: Existing memories at least this similar are neighbours of a candidate.
PREFILTER = 0.7
#: At most this many neighbours are considered (the most similar).
TOP_K = 3
#: Rules: above this similarity, merge.
MERGE_ABOVE = 0.9
#: Candidates of one batch at least this similar to an earlier one are its duplicates.
BATCH_SIMILARITY = 0.85
LLM_MAX_TOKENS = 400

SYSTEM_PROMPT = """\
You keep the long-term memory of a software agent tidy. You are shown one new candidate memory and up to \
three stored memories that look similar to it. Pick exactly one action for the candidate:
- "create": it is about something else; store it as a new memory.
- "merge": it says the same thing as a stored memory, perhaps with a small addition; give the combined text.
- "skip": a stored memory already says all of it; store nothing.
- "support": it confirms a stored memory without adding anything; strengthen that memory.
- "contextualize": it is related and adds context or detail a stored memory lacks; store it linked to that one.
- "contradict": it states that a stored memory is wrong; the stored one is retired, history is kept.
- "supersede": it is a newer version of a stored memory (a changed preference, an updated value); the \
stored one is retired, history is kept; give the text to store.
For "contextualize", name the context the candidate holds in: one of general, morning, evening, night, \
weekday, weekend, work, leisure, summer, winter, travel.
Answer with one JSON object and nothing else:
{"action": "<one of the actions>", "target": "<id of the stored memory it concerns, null for create>", \
"reason": "<one short sentence>", "content": "<text to store for merge or supersede, else null>", \
"context_label": "<for contextualize: one of the contexts above, else null>"}"""
#: The seed's context labels of a ``contextualize`` decision (stored as a ``context:<label>`` tag).
CONTEXT_LABELS = ("general", "morning", "evening", "night", "weekday", "weekend", "work", "leisure", "summer",
                  "winter", "travel")  # fmt: skip


class Neighbour(Model):
    """An existing memory close to a candidate."""

    uid: str
    content: str
    similarity: float


class DedupDecision(Model):
    """What to do with one candidate, why, and who decided (``method`` llm or rules)."""

    action: DedupAction
    target_uid: str | None = None
    similarity: float | None = None
    neighbours: list[Neighbour] = Field(default_factory=new_list)
    method: Literal["llm", "rules"]
    model: str | None = None
    reason: str
    content: str | None = None
    context_label: str | None = None
    notes: list[str] = Field(default_factory=new_list)


class BatchDuplicate(Model):
    """A candidate dropped inside its batch as a near copy of an earlier one."""

    index: int
    duplicate_of: int
    similarity: float
    reason: str


# ------------------------------------------------------------------------------------------ batch dedup


def batch_duplicates(candidates: Sequence[MemoryCandidate], embedder: Embedder | None, *,
                     threshold: float = BATCH_SIMILARITY) -> list[BatchDuplicate]:  # fmt: skip
    """Candidates that nearly repeat an earlier kept candidate of the same batch (greedy, in order).

    Each candidate is compared with the kept ones before it; one at ``threshold`` or more (cosine, or token
    Jaccard without an embedder) is a duplicate of the most similar. Every dropped candidate is listed with
    the one it repeats; all others are kept.
    """
    if len(candidates) < 2:
        return []
    texts = [c.content for c in candidates]
    if embedder is not None:
        matrix = unit_rows(embedder.embed(texts, batch=bulk(texts)))
        similarity = (matrix @ matrix.T).clip(0.0, 1.0).tolist()
    else:
        tokens = [set(words(t)) for t in texts]
        similarity = [[_jaccard(a, b) for b in tokens] for a in tokens]
    method = "cosine" if embedder is not None else "token Jaccard"
    kept: list[int] = []
    dropped = []
    for index in range(len(candidates)):
        best = max(kept, key=lambda k: (similarity[index][k], -k), default=None)
        if best is not None and similarity[index][best] >= threshold:
            score = round(float(similarity[index][best]), 6)
            reason = f"{method} {score:.3f} >= {threshold} to candidate {best} of the same batch"
            dropped.append(BatchDuplicate(index=index, duplicate_of=best, similarity=score, reason=reason))
        else:
            kept.append(index)
    return dropped


def _jaccard(a: set[str], b: set[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


# ------------------------------------------------------------------------------------------ decisions


class Deduplicator:
    """Decides create / merge / skip / support / contextualize / contradict / supersede for candidates.

    Args:
        embedder: for cosine similarity; without one, token Jaccard (decisions note it).
        chat: the optional LLM; without one, the similarity rules decide.
        prefilter: the least similarity of a neighbour.
        top_k: how many neighbours at most.
        merge_above: the rules merge above this similarity.

    Example:
        >>> dedup = Deduplicator(ws.embedder)  # doctest: +SKIP
        >>> dedup.decide(candidate, Neighbours(ws.memory.list_items("a"), ws.embedder)).action  # doctest: +SKIP
        'merge'
    """

    def __init__(self, embedder: Embedder | None, chat: ChatModel | None = None, *, prefilter: float = PREFILTER,
                 top_k: int = TOP_K, merge_above: float = MERGE_ABOVE) -> None:  # fmt: skip
        self.embedder = embedder
        self.chat = chat
        self.prefilter = prefilter
        self.top_k = top_k
        self.merge_above = merge_above

    def neighbours(self, candidate: MemoryCandidate, existing: Neighbours) -> list[Neighbour]:
        """The ``top_k`` most similar existing memories at ``prefilter`` or more, best first."""
        [vector] = existing.embed([candidate.content])
        ranked = existing.ranked(candidate.content, vector)
        return [Neighbour(uid=item.uid, content=item.content, similarity=round(score, 6))
                for item, score in ranked[: self.top_k] if score >= self.prefilter]  # fmt: skip

    def decide(self, candidate: MemoryCandidate, existing: Neighbours) -> DedupDecision:
        """The decision for one candidate against the agent's existing memories."""
        near = self.neighbours(candidate, existing)
        notes = ["similarity by token Jaccard: no embedder"] if existing.method == "jaccard" else []
        if not near:
            return DedupDecision(action="create", method="rules", notes=notes,
                                 reason=f"no existing memory at similarity >= {self.prefilter}")  # fmt: skip
        if self.chat is not None:
            decision, problem = self._ask(candidate, near)
            if decision is not None:
                return decision.model_copy(update={"notes": notes})
            notes.append(f"LLM decision unusable ({problem}); decided by similarity rules")
        return self.by_rules(candidate, near).model_copy(update={"notes": notes})

    def by_rules(self, candidate: MemoryCandidate, near: Sequence[Neighbour]) -> DedupDecision:
        """The similarity rules (module docstring) over the neighbours, best first."""
        top = near[0]
        base = {"target_uid": top.uid, "similarity": top.similarity, "neighbours": list(near), "method": "rules"}
        if top.similarity > self.merge_above:
            if words(candidate.content) == words(top.content):
                return DedupDecision(action="skip", reason=f"same words as {top.uid}", **base)
            return DedupDecision(action="merge", reason=f"similarity {top.similarity:.3f} > {self.merge_above} "
                                 f"to {top.uid}", **base)  # fmt: skip
        new = new_content_words(candidate.content, top.content)
        if not new:
            return DedupDecision(action="support", reason=f"related to {top.uid} (similarity {top.similarity:.3f}) "
                                 "and adds no content word", **base)  # fmt: skip
        shown = ", ".join(new[:5])
        return DedupDecision(action="contextualize", reason=f"related to {top.uid} (similarity "
                             f"{top.similarity:.3f}) and adds: {shown}", **base)  # fmt: skip

    def _ask(self, candidate: MemoryCandidate, near: Sequence[Neighbour]) -> tuple[DedupDecision | None, str]:
        assert self.chat is not None  # noqa: S101 - only called with a chat model
        messages = [ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", render_request(candidate, near))]
        try:
            reply = self.chat.complete(messages, max_tokens=LLM_MAX_TOKENS, temperature=0.0)
        except BackendUnavailableError as exc:
            return None, f"LLM unavailable: {exc}"
        return parse_reply(reply, near, model=self.chat.model)


def new_content_words(candidate: str, existing: str) -> list[str]:
    """Words of ``candidate`` (stopwords aside) that ``existing`` lacks, in order of first use."""
    known = set(words(existing))
    return list(dict.fromkeys(w for w in words(candidate, content=True) if w not in known))


def render_request(candidate: MemoryCandidate, near: Sequence[Neighbour]) -> str:
    """The user message of the LLM request: the candidate and its neighbours as JSON."""
    body = {
        "candidate": {"type": candidate.type.value, "content": candidate.content},
        "stored": [{"id": n.uid, "similarity": n.similarity, "content": n.content} for n in near],
    }
    return json.dumps(body, ensure_ascii=False, indent=1)


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_reply(reply: str, near: Sequence[Neighbour], *, model: str) -> tuple[DedupDecision | None, str]:
    """The decision in an LLM reply, or None and what is wrong with the reply."""
    match = _OBJECT.search(reply)  # tolerate a ```json fence or a sentence around the object
    try:
        data: Any = json.loads(match[0]) if match else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return None, "the reply is not a JSON object"
    action, target, content = data.get("action"), data.get("target"), data.get("content")
    if action not in ACTIONS:
        return None, f"unknown action {action!r}"
    by_uid = {n.uid: n for n in near}
    if action != "create" and target not in by_uid:
        return None, f"target {target!r} is not one of the stored memories shown"
    if content is not None and (not isinstance(content, str) or not content.strip() or len(content) > MAX_CONTENT):
        return None, "content must be a non-empty text"
    reason = data.get("reason")
    label = data.get("context_label")
    chosen = by_uid.get(str(target)) if action != "create" else None
    return DedupDecision(
        action=action, target_uid=chosen.uid if chosen else None, similarity=chosen.similarity if chosen else None,
        neighbours=list(near), method="llm", model=model, content=content.strip() if content else None,
        reason=str(reason).strip() if isinstance(reason, str) and reason.strip() else f"the LLM chose {action}",
        context_label=label if action == "contextualize" and label in CONTEXT_LABELS else None,
    ), ""  # fmt: skip


__all__ = [
    "ACTIONS",
    "BATCH_SIMILARITY",
    "CONTEXT_LABELS",
    "MERGE_ABOVE",
    "PREFILTER",
    "SYSTEM_PROMPT",
    "TOP_K",
    "BatchDuplicate",
    "DedupAction",
    "DedupDecision",
    "Deduplicator",
    "Neighbour",
    "batch_duplicates",
    "new_content_words",
    "parse_reply",
    "render_request",
]
