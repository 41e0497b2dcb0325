"""Port of outbox replay into a store: apply another store's change events as they are."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from kg.errors import WorkspaceError
from kg.models import CaseSituation, OutboxEvent

SituationKey = Callable[[CaseSituation], str]
"""Computes a case's ``situation_key`` column (the reasoning layer's function, passed in from above)."""


class UnknownAggregateError(WorkspaceError):
    """An outbox event of an aggregate no replay handler knows, e.g. from a newer mabos (the batch is not applied).

    A user meets it (``mabos workspace import`` of a newer workspace's events), so it is a :class:`MabosError`:
    one line on stderr, exit code 1, nothing changed."""


class ReplayApplier(Protocol):
    """Applies outbox events to a store idempotently, reproducing the source's rows exactly.

    A replay bypasses the aggregate ports on purpose: they mint uids, stamp the clock's time, check
    permissions and run capacity rules, while a replay keeps the source's uids, timestamps and states.
    """

    def apply_events(self, events: Sequence[OutboxEvent], *, situation_key: SituationKey) -> None:
        """Apply ``events`` in order in one transaction (all or nothing).

        An event at or below the source outbox position last applied to its record is skipped (a
        resend); an event that changed the store is appended to the store's own outbox. Raises
        :class:`UnknownAggregateError` (changing nothing) when an event's aggregate has no handler.
        """
        ...
