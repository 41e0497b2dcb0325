"""Reading LoCoMo for the benchmarks that use it (bench/locomo_recall.py, bench/extraction.py, bench/context.py).

The data file's default place, the turns of a conversation with their times, and a question's evidence ids.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_EVIDENCE = re.compile(r"D(\d+):(\d+)")
_SESSION = re.compile(r"^session_(\d+)$")


def default_data() -> Path:
    root = Path(os.environ.get("MABOS_BENCH_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
    return root / "locomo" / "locomo-dev.json"


def session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware datetime (UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def speaker_turns(sample: dict[str, Any], *, seconds: int = 1) -> list[tuple[str, datetime, str, str]]:
    """(dia_id, time, speaker, text) of every turn, in session and turn order (turns ``seconds`` apart)."""
    conv = sample["conversation"]
    numbers = sorted(int(m[1]) for k in conv if (m := _SESSION.match(k)) and isinstance(conv[k], list))
    found = []
    for n in numbers:
        start = session_date(conv[f"session_{n}_date_time"])
        for i, turn in enumerate(conv[f"session_{n}"]):
            found.append((turn["dia_id"], start + timedelta(seconds=seconds * i), turn["speaker"], turn["text"]))
    return found


def evidence(qa: dict[str, Any], known: set[str]) -> list[str]:
    """The question's evidence ids normalised to ``D<n>:<m>``, without repeats and those not in ``known``."""
    ids = [f"D{int(a)}:{int(b)}" for ev in qa.get("evidence", []) for a, b in _EVIDENCE.findall(str(ev))]
    return [i for i in dict.fromkeys(ids) if i in known]
