"""Record ids: prefixed, time-ordered, unique, recognisable."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from kg import ids
from kg.ids import PREFIXES, is_id, new_id

CROCKFORD = set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")


@pytest.mark.parametrize(("kind", "prefix"), sorted(PREFIXES.items()))
def test_prefix_and_shape(kind, prefix):
    uid = new_id(kind)
    head, _, body = uid.partition("-")
    assert head == prefix
    assert len(body) == 26 and set(body) <= CROCKFORD
    assert is_id(uid) and is_id(uid, kind)


def test_design_prefixes():
    assert [new_id(k)[:2] for k in ("memory", "fact", "rule", "case")] == ["M-", "F-", "R-", "C-"]


def test_sorted_in_creation_order_and_unique_over_10k():
    made = [new_id("fact") for _ in range(10_000)]
    assert sorted(made) == made
    assert len(set(made)) == len(made)


def test_unique_across_threads():
    made: list[list[str]] = [[] for _ in range(4)]

    def work(bucket: list[str]) -> None:
        bucket.extend(new_id("event") for _ in range(2_000))

    threads = [threading.Thread(target=work, args=(bucket,)) for bucket in made]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [uid for bucket in made for uid in bucket]
    assert len(set(every)) == 8_000
    assert all(bucket == sorted(bucket) for bucket in made)


@pytest.fixture
def fake_time(monkeypatch):
    """A settable wall clock (ns) for the id generator, starting 1 s ahead of the real one.

    Ahead, so that the generator (whose state is process-wide) really follows it; only a second or
    two ahead, so that ids made after the test are not held in the future for long.
    """
    now = [time.time_ns() + 10**9]
    monkeypatch.setattr(ids, "time", SimpleNamespace(time_ns=lambda: now[0]))
    return now


def test_order_survives_a_clock_step_back(fake_time):
    first = new_id("fact")
    fake_time[0] -= 5 * 10**9  # the wall clock jumps back 5 s
    second = new_id("fact")
    assert second > first


def test_time_prefix_follows_the_clock(fake_time):
    early = new_id("fact")
    fake_time[0] += 10**6  # one millisecond later
    late = new_id("fact")
    assert early[2:12] < late[2:12]  # the first 10 characters carry the millisecond timestamp


def test_many_ids_in_one_millisecond_stay_ordered(fake_time):
    made = [new_id("fact") for _ in range(1_000)]
    assert sorted(made) == made and len(set(made)) == 1_000
    assert len({uid[2:12] for uid in made}) == 1


@pytest.mark.parametrize(
    "value",
    [
        "",
        "F-",
        "F-" + "0" * 25,
        "F-" + "0" * 27,
        "f-" + "0" * 26,
        "F_" + "0" * 26,
        "F-" + "I" * 26,
        "F-" + "U" * 26,
        "FOUR-" + "0" * 26,
        "F-" + "0" * 26 + "\n",
        " F-" + "0" * 26,
    ],
)
def test_is_id_refuses_malformed(value):
    assert not is_id(value)


def test_is_id_checks_the_kind():
    uid = new_id("goal")
    assert is_id(uid, "goal") and not is_id(uid, "fact")
