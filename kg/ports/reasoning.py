"""Ports of rules and cases."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol

from kg.models import (
    Case,
    Rule,
    RuleType,
)


class RuleStore(Protocol):
    """Inference, constraint and policy rules (stored whole)."""

    def put(self, rule: Rule, *, now: datetime, by: str | None = None) -> Rule:
        """Insert or replace (by uid, same agent and scope) with an outbox event naming ``by`` (default the
        rule's agent): the agent that made this change."""
        ...

    def get_many(self, uids: Iterable[str]) -> dict[str, Rule]:
        """Rules by uid (any scope; the caller filters)."""
        ...

    def list(
        self, *, scopes: Sequence[str], type: RuleType | None = None, enabled: bool | None = None,
        domain: str | None = None,
    ) -> builtins.list[Rule]:  # fmt: skip
        """Rules in the scopes, oldest first, optionally filtered."""
        ...

    def delete(self, uids: Sequence[str], *, by: str | None = None) -> builtins.list[str]:
        """Delete by uid (events name ``by``, default each rule's agent); return the uids deleted."""
        ...


class CaseStore(Protocol):
    """Past cases for case-based reasoning, one per situation and scope."""

    def add(self, case: Case, *, situation_key: str) -> tuple[Case, bool]:
        """Store unless the scope holds the same situation; the stored case and whether it is new."""
        ...

    def list(self, *, scopes: Sequence[str], limit: int | None = None) -> builtins.list[Case]:
        """Cases in the scopes, oldest first."""
        ...

    def count(self, scope: str) -> int:
        """Cases in one scope."""
        ...

    def delete(self, uids: Sequence[str]) -> builtins.list[str]:
        """Delete by uid; return the uids deleted."""
        ...
