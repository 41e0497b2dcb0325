"""Compaction's settings (the seed's defaults), its trigger, and the reports it returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field, model_validator

from kg.models import Model
from kg.models.base import new_list

#: Writes an R3 checkpoint with this context text; returns where it went (a path) for the report.
CheckpointWriter = Callable[[str], str]


Trigger = Literal["manual", "threshold", "flush"]


class CompactionSettings(Model):
    """The lossless-claw defaults (issue 8) plus the R3 flush margins of :func:`should_flush`."""

    leaf_chunk_tokens: int = Field(default=20_000, ge=1)
    leaf_target_tokens: int = Field(default=2_400, ge=1)
    condensed_target_tokens: int = Field(default=2_000, ge=1)
    leaf_min_fanout: int = Field(default=8, ge=2)  # leaves condensed into one depth-1 summary
    condensed_min_fanout: int = Field(default=4, ge=2)  # depth>=1 summaries condensed one level up
    hard_min_fanout: int = Field(default=2, ge=2)  # both, when forced
    fresh_tail: int = Field(default=64, ge=0)
    context_threshold: float = Field(default=0.75, gt=0, le=1)
    min_compression: float = Field(default=0.35, ge=0, lt=1)
    max_target_ratio: float = Field(default=3.0, ge=1)
    reserve_floor: int = Field(default=8_000, ge=0)
    soft_threshold: int = Field(default=4_000, ge=0)

    @model_validator(mode="after")
    def _fanouts(self) -> CompactionSettings:
        if self.hard_min_fanout > min(self.leaf_min_fanout, self.condensed_min_fanout):
            raise ValueError("hard_min_fanout: must not exceed leaf_min_fanout or condensed_min_fanout")
        return self

    def fanout(self, depth: int, *, forced: bool) -> int:
        """Minimum children of a new summary of ``depth`` (>= 1)."""
        if forced:
            return self.hard_min_fanout
        return self.leaf_min_fanout if depth == 1 else self.condensed_min_fanout

    def target(self, depth: int) -> int:
        """Target tokens of a summary of ``depth``."""
        return self.leaf_target_tokens if depth == 0 else self.condensed_target_tokens


DEFAULT_SETTINGS = CompactionSettings()


class CompactionTrigger(Model):
    """Whether a conversation needs compacting for a budget, and which rule said so."""

    needed: bool
    reason: Literal["threshold", "flush"] | None
    context_tokens: int
    budget: int
    threshold_tokens: int
    flush_tokens: int


class DepthStats(Model):
    """What one depth gained: ``compression_ratio`` is summary tokens / source tokens (0.12 = 88% smaller)."""

    depth: int
    summaries: int
    source_tokens: int
    summary_tokens: int
    compression_ratio: float


class Rejection(Model):
    """A summary that failed acceptance twice and was not stored (its sources stay as they were)."""

    depth: int
    children: int
    first_child: str
    last_child: str
    source_tokens: int
    summary_tokens: int
    reason: str


class CompactionReport(Model):
    """What a compaction did.

    ``context_tokens_before/after``: uncovered message tokens + root summary tokens. ``checkpoint``: where
    the R3 checkpoint went (None when nothing was eligible, or no writer was given). ``retried``: summaries
    accepted on the second attempt.
    """

    conversation_uid: str
    trigger: Trigger
    compacted: bool
    forced: bool = False
    checkpoint: str | None = None
    context_tokens_before: int
    context_tokens_after: int
    uncovered_messages: int
    roots: int
    created: list[str] = Field(default_factory=new_list)
    depths: list[DepthStats] = Field(default_factory=new_list)
    rejected: list[Rejection] = Field(default_factory=new_list)
    retried: int = 0
    note: str | None = None

    @classmethod
    def unchanged(cls, conversation_uid: str, trigger: Trigger, *, tokens: int, uncovered: int, roots: int,
                  note: str) -> CompactionReport:  # fmt: skip
        """A compaction that wrote nothing: the context stays at ``tokens``, and ``note`` says why."""
        return cls(conversation_uid=conversation_uid, trigger=trigger, compacted=False, context_tokens_before=tokens,
                   context_tokens_after=tokens, uncovered_messages=uncovered, roots=roots, note=note)  # fmt: skip


class LosslessReport(Model):
    """Every message is beneath a root summary or uncovered, exactly once, with consistent counts and times."""

    messages: int
    covered: int
    uncovered: int
    reachable: int
    missing: list[str] = Field(default_factory=new_list)
    duplicated: list[str] = Field(default_factory=new_list)
    inconsistent: list[str] = Field(default_factory=new_list)

    @property
    def lossless(self) -> bool:
        """True when nothing is missing, duplicated or inconsistent."""
        return not (self.missing or self.duplicated or self.inconsistent) and self.reachable == self.messages
