"""``MABOS_EMBED_THREADS`` sets the BLAS threads of the embedder's batch path (kg/recall/embedder.py): the test suite
sets 1 (tests/conftest.py), as one xdist worker runs on each core; a bad value is refused naming the variable."""

from __future__ import annotations

import os

import pytest

from kg.errors import InputError
from kg.recall.embedder import ENV_BATCH_THREADS, MiniLMEmbedder


def test_the_variable_sets_the_batch_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_BATCH_THREADS, "3")
    assert MiniLMEmbedder().batch_threads == 3
    assert MiniLMEmbedder(batch_threads=2).batch_threads == 2  # an explicit count wins


def test_without_it_a_batch_uses_every_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_BATCH_THREADS, raising=False)
    assert MiniLMEmbedder().batch_threads == (os.cpu_count() or 1)


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "\u0663"])
def test_a_bad_value_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(ENV_BATCH_THREADS, value)
    with pytest.raises(InputError) as refused:
        MiniLMEmbedder()
    assert refused.value.field == ENV_BATCH_THREADS and "positive integer" in str(refused.value)


def test_the_suite_runs_batches_on_one_thread() -> None:
    assert os.environ.get(ENV_BATCH_THREADS) == "1"
