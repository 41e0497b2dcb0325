"""Decay boost (kg.recall.decay) against the formula, with expected values worked out by hand.

Notation: 2^-x = exp(-ln2 * x). With importance 0 the effective half-life is 30 d, so an age of
30 d is ratio 1 and 90 d is ratio 3; with importance 1 it is 30 * e^1.5 = 134.4507 d.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kg.errors import InputError
from kg.ids import new_id
from kg.models import MemoryItem, Tier
from kg.recall.decay import (
    ChunkMeta,
    DecaySettings,
    decay_boost,
    effective_half_life,
    frequency,
    recency,
)

NOW = datetime(2025, 1, 31, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
DEFAULT = DecaySettings()
NO_FLOORS = DecaySettings(floor_core=0.0, floor_working=0.0, floor_peripheral=0.0)
TIERS = [Tier.CORE, Tier.WORKING, Tier.PERIPHERAL]


def meta(*, age: float = 0.0, tier: str = "working", importance: float = 0.0, confidence: float = 1.0,
         count: int = 0, idle: float | None = None) -> ChunkMeta:  # fmt: skip
    """A candidate created ``age`` days before NOW, last accessed ``idle`` days before NOW (never if None)."""
    return ChunkMeta(created_at=NOW - age * DAY, tier=tier, importance=importance, confidence=confidence,
                     access_count=count, accessed_at=None if idle is None else NOW - idle * DAY)  # fmt: skip


def test_defaults_are_the_issue_parameters() -> None:
    d = DEFAULT
    assert (d.half_life_days, d.importance_modulation) == (30.0, 1.5)
    assert (d.beta_core, d.beta_working, d.beta_peripheral) == (0.8, 1.0, 1.3)
    assert (d.floor_core, d.floor_working, d.floor_peripheral) == (0.9, 0.7, 0.5)
    assert (d.recency_weight, d.frequency_weight, d.importance_confidence_weight) == (0.4, 0.3, 0.3)
    assert d.boost_min == 0.3
    with pytest.raises(ValidationError):
        d.boost_min = 0.5  # type: ignore[misc]  # frozen
    with pytest.raises(ValidationError):
        DecaySettings(half_life_days=0)


def test_effective_half_life_grows_with_importance() -> None:
    assert effective_half_life(0.0, DEFAULT) == pytest.approx(30.0)  # 30 * e^0
    assert effective_half_life(0.5, DEFAULT) == pytest.approx(63.5100, abs=1e-4)  # 30 * e^0.75 = 30 * 2.117000
    assert effective_half_life(1.0, DEFAULT) == pytest.approx(134.4507, abs=1e-4)  # 30 * e^1.5 = 30 * 4.481689


@pytest.mark.parametrize(
    ("importance", "tier", "age", "raw", "floored"),
    [
        # Importance 0: raw = 2^-(ratio^beta). At 30 d ratio 1 -> 0.5 for every beta.
        # At 90 d: core 2^-(3^0.8) = 2^-2.408225 = 0.188388; working 2^-3 = 0.125;
        # peripheral 2^-(3^1.3) = 2^-4.171168 = 0.055508. Every one of these lies under its floor.
        (0.0, Tier.CORE, 0, 1.0, 1.0),
        (0.0, Tier.WORKING, 0, 1.0, 1.0),
        (0.0, Tier.PERIPHERAL, 0, 1.0, 1.0),
        (0.0, Tier.CORE, 30, 0.5, 0.9),
        (0.0, Tier.WORKING, 30, 0.5, 0.7),
        (0.0, Tier.PERIPHERAL, 30, 0.5, 0.5),  # exactly at its floor
        (0.0, Tier.CORE, 90, 0.188388, 0.9),
        (0.0, Tier.WORKING, 90, 0.125, 0.7),
        (0.0, Tier.PERIPHERAL, 90, 0.055508, 0.5),
        # Importance 1: half-life 134.4507 d. At 30 d ratio = e^-1.5 = 0.223130, so ratio^beta = e^(-1.5 beta):
        #   core       e^-1.2  = 0.301194 -> 2^-0.301194 = 0.811580 -> floor 0.9
        #   working    e^-1.5  = 0.223130 -> 2^-0.223130 = 0.856705 (above 0.7)
        #   peripheral e^-1.95 = 0.142274 -> 2^-0.142274 = 0.906090 (above 0.5)
        # At 90 d ratio = 3 e^-1.5 = 0.669390 (ln = -0.401388):
        #   core       e^(0.8 * -0.401388) = 0.725343 -> 2^-0.725343 = 0.604853 -> floor 0.9
        #   working    0.669390 -> 2^-0.669390 = 0.628772 -> floor 0.7
        #   peripheral e^(1.3 * -0.401388) = 0.593449 -> 2^-0.593449 = 0.662757 (above 0.5)
        (1.0, Tier.CORE, 30, 0.811580, 0.9),
        (1.0, Tier.WORKING, 30, 0.856705, 0.856705),
        (1.0, Tier.PERIPHERAL, 30, 0.906090, 0.906090),
        (1.0, Tier.CORE, 90, 0.604853, 0.9),
        (1.0, Tier.WORKING, 90, 0.628772, 0.7),
        (1.0, Tier.PERIPHERAL, 90, 0.662757, 0.662757),
    ],
)
def test_recency_at_0_30_90_days(importance: float, tier: Tier, age: float, raw: float, floored: float) -> None:
    """The raw and floored recency under the defaults; without floors the result is the raw value."""
    got_raw, got = recency(age, importance, tier, DEFAULT)
    assert got_raw == pytest.approx(raw, abs=1e-6)
    assert got == pytest.approx(floored, abs=1e-6)
    assert recency(age, importance, tier, NO_FLOORS)[1] == pytest.approx(raw, abs=1e-6)


def test_frequency_saturates_and_fades_with_idle_time() -> None:
    assert frequency(0, 0.0, DEFAULT) == 0.0
    assert frequency(5, 0.0, DEFAULT) == pytest.approx(0.632121, abs=1e-6)  # 1 - e^-1
    assert frequency(10, 0.0, DEFAULT) == pytest.approx(0.864665, abs=1e-6)  # 1 - e^-2
    assert frequency(5, 30.0, DEFAULT) == pytest.approx(0.316060, abs=1e-6)  # 0.632121 * 2^-1
    assert frequency(5, 60.0, DEFAULT) == pytest.approx(0.158030, abs=1e-6)  # 0.632121 * 2^-2


def test_boost_of_a_fresh_never_accessed_item() -> None:
    # recency 1, frequency 0, importance x confidence 0.5: 0.4 * 1 + 0.3 * 0 + 0.3 * 0.5 = 0.55
    d = decay_boost(meta(importance=0.5), NOW, DEFAULT)
    assert (d.age_days, d.recency_raw, d.recency, d.frequency) == (0.0, 1.0, 1.0, 0.0)
    assert d.importance_confidence == 0.5
    assert d.boost == pytest.approx(0.55)


def test_boost_with_accesses_and_confidence() -> None:
    # working, 30 d old, importance 0.8, confidence 0.5, 5 accesses, the last 30 d ago:
    # half-life 30 e^1.2 = 99.6035 d, raw 2^-(30 / 99.6035) = 2^-0.301194 = 0.811580 (above 0.7)
    # frequency 0.632121 * 0.5 = 0.316060; importance x confidence 0.4
    # boost = 0.4 * 0.811580 + 0.3 * 0.316060 + 0.3 * 0.4 = 0.324632 + 0.094818 + 0.12 = 0.539450
    d = decay_boost(meta(age=30, importance=0.8, confidence=0.5, count=5, idle=30), NOW, DEFAULT)
    assert d.half_life_days == pytest.approx(99.6035, abs=1e-4)
    assert d.recency == pytest.approx(0.811580, abs=1e-6)
    assert d.frequency == pytest.approx(0.316060, abs=1e-6)
    assert d.importance_confidence == pytest.approx(0.4)
    assert d.boost == pytest.approx(0.539450, abs=1e-6)


def test_boost_is_clamped_at_its_minimum() -> None:
    # peripheral, 90 d, importance 0, never accessed: 0.4 * 0.5 (floor) + 0 + 0 = 0.2 -> 0.3
    d = decay_boost(meta(age=90, tier="peripheral"), NOW, DEFAULT)
    assert d.recency == 0.5
    assert d.boost == 0.3
    # working, same: 0.4 * 0.7 = 0.28 -> 0.3; core: 0.4 * 0.9 = 0.36 stays
    assert decay_boost(meta(age=90, tier="working"), NOW, DEFAULT).boost == 0.3
    assert decay_boost(meta(age=90, tier="core"), NOW, DEFAULT).boost == pytest.approx(0.36)


def test_boost_is_clamped_at_one_and_can_be_switched_off() -> None:
    heavy = DecaySettings(recency_weight=1.0, frequency_weight=1.0, importance_confidence_weight=1.0)
    assert decay_boost(meta(importance=1.0, count=50, idle=0), NOW, heavy).boost == 1.0  # 1 + ~1 + 1 -> 1
    assert decay_boost(meta(age=900, tier="peripheral"), NOW, DecaySettings(boost_min=1.0)).boost == 1.0


def test_memory_items_are_memory_like() -> None:
    item = MemoryItem(uid=new_id("memory"), agent_id="a", content="x", created_at=NOW - 30 * DAY, tier=Tier.CORE,
                      importance=0.0, access_count=0)  # fmt: skip
    d = decay_boost(item, NOW, DEFAULT)
    assert d.recency_raw == pytest.approx(0.5)  # ratio 1
    assert d.recency == 0.9
    assert d.boost == pytest.approx(0.36)  # 0.4 * 0.9


def test_chunks_are_neutral() -> None:
    chunk = ChunkMeta(created_at=NOW)
    assert (chunk.importance, chunk.confidence, chunk.tier, chunk.access_count, chunk.accessed_at) == (
        0.5, 1.0, "working", 0, None,
    )  # fmt: skip


def test_naive_times_are_utc_and_the_future_counts_as_now() -> None:
    naive = ChunkMeta(created_at=(NOW - 30 * DAY).replace(tzinfo=None), importance=0.0)
    assert decay_boost(naive, NOW, DEFAULT).age_days == pytest.approx(30.0)
    future = ChunkMeta(created_at=NOW + DAY, importance=0.0)
    assert decay_boost(future, NOW, DEFAULT).recency_raw == 1.0


def test_extreme_settings_do_not_overflow() -> None:
    tiny = DecaySettings(half_life_days=1e-300, beta_peripheral=10.0)
    assert decay_boost(meta(age=3650, tier="peripheral"), NOW, tiny).recency_raw == 0.0


@pytest.mark.parametrize(("field", "value"), [("importance", 1.5), ("confidence", -0.1), ("importance", float("nan"))])
def test_out_of_range_inputs_are_refused(field: str, value: float) -> None:
    with pytest.raises(InputError, match=field):
        decay_boost(meta(**{field: value}), NOW, DEFAULT)


def test_unknown_tier_is_refused() -> None:
    with pytest.raises(InputError, match="tier"):
        decay_boost(meta(tier="hot"), NOW, DEFAULT)


# ------------------------------------------------------------------------------------ properties

units = st.floats(0.0, 1.0)
ages = st.floats(0.0, 10_000.0)


@settings(max_examples=50)
@given(tier=st.sampled_from(TIERS), importance=units, a=ages, b=ages)
def test_more_recent_never_lowers_recency(tier: Tier, importance: float, a: float, b: float) -> None:
    younger, older = sorted((a, b))
    raw_y, rec_y = recency(younger, importance, tier, DEFAULT)
    raw_o, rec_o = recency(older, importance, tier, DEFAULT)
    assert raw_y >= raw_o
    assert rec_y >= rec_o


candidates = st.builds(
    lambda tier, importance, confidence, age, count, idle: meta(
        tier=tier, importance=importance, confidence=confidence, age=age, count=count, idle=idle
    ),
    st.sampled_from(TIERS), units, units, ages, st.integers(0, 10_000), st.none() | ages,
)  # fmt: skip


@settings(max_examples=50)
@given(candidate=candidates)
def test_components_stay_in_their_ranges(candidate: ChunkMeta) -> None:
    d = decay_boost(candidate, NOW, DEFAULT)
    assert 0.0 <= d.recency_raw <= 1.0
    assert DEFAULT.floor(candidate.tier) <= d.recency <= 1.0
    assert 0.0 <= d.frequency <= 1.0
    assert 0.0 <= d.importance_confidence <= 1.0
    assert DEFAULT.boost_min <= d.boost <= 1.0
