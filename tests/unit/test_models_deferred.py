"""mabos models build their validators on first use (``defer_build``): threads that meet a model first at the same
moment all get its own validator (pydantic >= 2.14 rebuilds under a lock; before that a racing thread could
validate with the parent's validator and refuse the model's fields as extra inputs)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from kg.models.base import Model


def test_threads_meeting_a_deferred_model_first_all_validate_with_its_own_fields() -> None:
    class Fresh(Model):  # a new class: nothing has built it yet
        name: str
        count: int = 0

    assert not Fresh.__pydantic_complete__
    start = threading.Barrier(16)

    def make(n: int) -> Fresh:
        start.wait()
        return Fresh(name=f"n{n}", count=n)

    with ThreadPoolExecutor(16) as pool:
        made = list(pool.map(make, range(16)))
    assert [(m.name, m.count) for m in made] == [(f"n{n}", n) for n in range(16)]
    assert Fresh.__pydantic_complete__
