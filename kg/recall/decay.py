"""Weibull decay boost of recall scores (design.md §4): recency, access frequency, importance x confidence.

Pure functions over anything shaped like a memory item (:class:`MemoryLike`); no I/O. The parameters
are memory-lancedb-pro's (issue 4); its source is not available to this project, so the formula
below is ours, written from those parameters. Ages are in days (86,400 s); a time in the future
counts as 0.

1. **Effective half-life** — important items fade more slowly::

       half_life_eff = half_life_days * exp(importance_modulation * importance)

   (30 d at importance 0, 63.5 d at 0.5, 134.5 d at 1 with the defaults).
2. **Recency** — a Weibull (stretched exponential) survival curve of the item's age since
   ``created_at``, with a per-tier shape ``beta`` and floor::

       recency_raw = exp(-ln 2 * (age / half_life_eff) ** beta)        # 0.5 at age = half_life_eff
       recency     = max(floor[tier], recency_raw)

   ``beta`` < 1 (core) falls fast early and keeps a long tail; ``beta`` > 1 (peripheral) holds on
   first and then drops fast.
3. **Access frequency** — saturating in the access count, fading with the time since the last
   access (``accessed_at``, or ``created_at`` when never recorded)::

       frequency = (1 - exp(-access_count / frequency_scale)) * 2 ** (-idle / access_half_life_days)

   0 for an item never accessed. ``frequency_scale`` and ``access_half_life_days`` are our additions.
4. **Boost**::

       composite = recency_weight * recency + frequency_weight * frequency
                   + importance_confidence_weight * importance * confidence
       full      = min(1, max(boost_min, composite))
       boost     = 1 - strength * (1 - full)

   and the recall score is multiplied by ``boost``. ``boost_min=1.0`` or ``strength=0`` switches decay off.
   ``strength`` (1 here, 0.25 in the engine's default :data:`kg.recall.fusion.DEFAULT_DECAY`) keeps decay a
   preference among comparably relevant items: at full strength a months-old item lost up to 45% of its
   score, more than the whole spread of cosine similarities between a relevant and an unrelated turn
   (LoCoMo vector recall@10 0.391 with it, 0.482 without; docs/recall-scoring.md).

Markdown chunks have no importance or access history: they are scored as :class:`ChunkMeta`
(importance 0.5, confidence 1.0, tier ``working``, no accesses).
"""

import math
from datetime import datetime
from typing import NamedTuple, Protocol

from pydantic import ConfigDict, Field

from kg.errors import InputError
from kg.models import Model, Tier, Unit, to_utc

SECONDS_PER_DAY = 86_400.0
_LN2 = math.log(2.0)


class MemoryLike(Protocol):
    """What decay and the importance blend read from a candidate: a memory item or a Markdown chunk."""

    @property
    def importance(self) -> float:
        """0..1."""
        ...

    @property
    def confidence(self) -> float:
        """0..1."""
        ...

    @property
    def tier(self) -> str:
        """``core``, ``working`` or ``peripheral`` (a :class:`kg.models.Tier` is a ``str``)."""
        ...

    @property
    def access_count(self) -> int:
        """How often the item was returned by recall."""
        ...

    @property
    def accessed_at(self) -> datetime | None:
        """Last access, ``None`` when never accessed."""
        ...

    @property
    def created_at(self) -> datetime:
        """Creation time (naive means UTC)."""
        ...


class ChunkMeta(NamedTuple):
    """Decay inputs of a Markdown chunk: neutral importance, tier ``working``, never accessed.

    A named tuple, not a dataclass: defining one costs a tenth of a frozen dataclass's generated methods, and every
    recall defines it (issue 33).

    Attributes:
        created_at: When the chunk's text was written (e.g. the daily log's date or the file's mtime).
    """

    created_at: datetime
    importance: float = 0.5
    confidence: float = 1.0
    tier: str = Tier.WORKING.value
    access_count: int = 0
    accessed_at: datetime | None = None


class DecaySettings(Model):
    """Parameters of the decay boost (frozen); defaults are memory-lancedb-pro's from issue 4.

    Attributes:
        half_life_days: Age (days) at which recency is 0.5 for an item of importance 0 (30).
        importance_modulation: ``half_life_eff = half_life_days * exp(modulation * importance)`` (1.5).
        beta_core: Weibull shape of core items (0.8).
        beta_working: Weibull shape of working items (1.0, a plain exponential).
        beta_peripheral: Weibull shape of peripheral items (1.3).
        floor_core: Lowest recency of a core item (0.9).
        floor_working: Lowest recency of a working item (0.7).
        floor_peripheral: Lowest recency of a peripheral item (0.5).
        recency_weight: Weight of recency in the boost (0.4).
        frequency_weight: Weight of access frequency in the boost (0.3).
        importance_confidence_weight: Weight of importance x confidence in the boost (0.3).
        boost_min: Lowest boost; the boost is clamped to ``[boost_min, 1]`` (0.3; 1.0 turns decay off).
        strength: How much of the clamped boost applies: ``boost = 1 - strength * (1 - full)`` (1.0 here;
            the recall engine's default is 0.25, see :data:`kg.recall.fusion.DEFAULT_DECAY`).
        frequency_scale: Access count at which the count term reaches ``1 - 1/e`` (5; ours).
        access_half_life_days: Days after the last access at which frequency halves (30; ours).
    """

    model_config = ConfigDict(frozen=True)

    half_life_days: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    importance_modulation: float = Field(default=1.5, ge=0, le=50)
    beta_core: float = Field(default=0.8, gt=0, le=10)
    beta_working: float = Field(default=1.0, gt=0, le=10)
    beta_peripheral: float = Field(default=1.3, gt=0, le=10)
    floor_core: Unit = 0.9
    floor_working: Unit = 0.7
    floor_peripheral: Unit = 0.5
    recency_weight: Unit = 0.4
    frequency_weight: Unit = 0.3
    importance_confidence_weight: Unit = 0.3
    boost_min: Unit = 0.3
    strength: Unit = 1.0
    frequency_scale: float = Field(default=5.0, gt=0, allow_inf_nan=False)
    access_half_life_days: float = Field(default=30.0, gt=0, allow_inf_nan=False)

    def beta(self, tier: str) -> float:
        """Weibull shape of a tier."""
        t = _tier(tier)
        return self.beta_core if t is Tier.CORE else self.beta_working if t is Tier.WORKING else self.beta_peripheral

    def floor(self, tier: str) -> float:
        """Recency floor of a tier."""
        t = _tier(tier)
        return self.floor_core if t is Tier.CORE else self.floor_working if t is Tier.WORKING else self.floor_peripheral


class DecayComponents(NamedTuple):
    """Every part of one item's decay boost (see the module docstring for the formulas).

    A tuple, not a model: recall computes one per candidate on its hot path.
    """

    age_days: float
    half_life_days: float
    recency_raw: float
    recency: float
    frequency: float
    importance_confidence: float
    boost: float


_TIERS: dict[str, Tier] = {t.value: t for t in Tier}


def _tier(value: str) -> Tier:
    tier = _TIERS.get(value)  # a Tier is a str: found too
    if tier is None:
        raise InputError("tier", f"must be core, working or peripheral, got {value!r}")
    return tier


def check_unit(field: str, value: float) -> float:
    """``value`` if it is a finite number in 0..1, else :class:`InputError` naming ``field``."""
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InputError(field, f"must be a number between 0 and 1, got {value!r}")
    return float(value)


def days_between(earlier: datetime, later: datetime) -> float:
    """Days from ``earlier`` to ``later`` (naive means UTC); 0 when ``earlier`` lies after ``later``."""
    return max(0.0, (to_utc(later) - to_utc(earlier)).total_seconds() / SECONDS_PER_DAY)


def effective_half_life(importance: float, settings: DecaySettings) -> float:
    """``half_life_days * exp(importance_modulation * importance)``, in days."""
    return settings.half_life_days * math.exp(settings.importance_modulation * importance)


def recency(age_days: float, importance: float, tier: str, settings: DecaySettings) -> tuple[float, float]:
    """``(recency_raw, recency)``: the Weibull survival at ``age_days`` and the same raised to the tier floor."""
    ratio = max(0.0, age_days) / effective_half_life(importance, settings)
    # ratio ** beta in log space: a float power overflows (OverflowError) for extreme settings
    power = 0.0 if ratio == 0.0 else math.exp(min(700.0, settings.beta(tier) * math.log(ratio)))
    raw = math.exp(-_LN2 * power)
    return raw, max(settings.floor(tier), raw)


def frequency(access_count: int, idle_days: float, settings: DecaySettings) -> float:
    """``(1 - exp(-count / frequency_scale)) * 2 ** (-idle / access_half_life_days)``; 0 when never accessed."""
    if access_count <= 0:
        return 0.0
    saturation = 1.0 - math.exp(-access_count / settings.frequency_scale)
    return saturation * math.exp(-_LN2 * max(0.0, idle_days) / settings.access_half_life_days)


def decay_boost(item: MemoryLike, now: datetime, settings: DecaySettings) -> DecayComponents:
    """The boost of one item at ``now``, with its components.

    Raises:
        InputError: importance or confidence outside 0..1, or an unknown tier.
    """
    importance = check_unit("importance", item.importance)
    confidence = check_unit("confidence", item.confidence)
    age = days_between(item.created_at, now)
    raw, floored = recency(age, importance, item.tier, settings)
    idle = days_between(item.accessed_at or item.created_at, now)
    freq = frequency(item.access_count, idle, settings)
    composite = (
        settings.recency_weight * floored
        + settings.frequency_weight * freq
        + settings.importance_confidence_weight * importance * confidence
    )
    full = min(1.0, max(settings.boost_min, composite))
    return DecayComponents(
        age_days=age,
        half_life_days=effective_half_life(importance, settings),
        recency_raw=raw,
        recency=floored,
        frequency=freq,
        importance_confidence=importance * confidence,
        boost=full if settings.strength == 1.0 else 1.0 - settings.strength * (1.0 - full),
    )


__all__ = [
    "ChunkMeta",
    "DecayComponents",
    "DecaySettings",
    "MemoryLike",
    "check_unit",
    "days_between",
    "decay_boost",
    "effective_half_life",
    "frequency",
    "recency",
]
