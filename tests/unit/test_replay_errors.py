"""An outbox event no replay knows is a user-facing MabosError naming the aggregate, and nothing is applied."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kg.clock import FixedClock
from kg.errors import MabosError
from kg.models import OutboxEvent
from kg.ports import UnknownAggregateError
from kg.store.sqlite import SqliteGraphStore

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _event(seq: int, aggregate: str, **payload: object) -> OutboxEvent:
    return OutboxEvent(seq=seq, aggregate=aggregate, op="create", record_uid=f"agent_{seq:026d}", agent_id="a",
                       scope=None, payload=payload, created_at=T0)  # fmt: skip


def test_an_unknown_aggregate_is_a_mabos_error_and_changes_nothing(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "kg.sqlite", clock=FixedClock(T0))
    try:
        before = store.outbox.counts()
        with pytest.raises(UnknownAggregateError) as refused:
            store.replay.apply_events([_event(1, "hologram")], situation_key=lambda situation: "")
        assert isinstance(refused.value, MabosError) and refused.value.exit_code == 1
        assert str(refused.value) == "aggregate: no replay for hologram"
        assert store.outbox.counts() == before
    finally:
        store.close()
