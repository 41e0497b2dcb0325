"""Crash safety of extraction: a process killed with SIGKILL in the middle of a run loses and duplicates nothing.

A child process runs the extraction and kills itself (SIGKILL, no clean-up of any kind) either inside the second
window's transaction (its memory items written, its facts and mark not yet) or right after that window's commit
(before its daily-log entries are appended). The workspace is then reopened and extracted again, and everything
is compared with a copy of the same workspace extracted once without a crash. Real SQLite, real files.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.extraction import extraction_service
from kg.extraction.service import MARK
from kg.memory.files import logged_uids

CHILD = """
import os, signal, sys
import kg
from kg.extraction import extraction_service
from kg.extraction.service import ExtractionService

path, mode = sys.argv[1], sys.argv[2]
ws = kg.open_workspace(path)
service = extraction_service(ws)
seen = {"n": 0}
if mode == "inside":
    original = ExtractionService._apply
    def apply(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen["n"] += 1
        if seen["n"] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
    ExtractionService._apply = apply
else:
    hook = service.after_commit
    def after(agent, uids):
        seen["n"] += 1
        if seen["n"] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        hook(agent, uids)
    service.after_commit = after
service.extract("a")
print("finished without being killed")
"""

T = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
TEMPLATES = ["I went to {x} yesterday.", "I love {x}.", "My friend {X} lives in {X}ville.",
             "I am planning to visit {X}burg.", "I learned that {x} needs care."]  # fmt: skip


def texts() -> list[str]:
    words = [f"topic{chr(97 + i)}{chr(97 + j)}" for i in range(5) for j in range(8)]
    return [TEMPLATES[n % len(TEMPLATES)].format(x=w, X=w.capitalize()) for n, w in enumerate(words)]


def state(path: Path) -> dict[str, Any]:
    ws = kg.open_workspace(path)
    try:
        items = ws.memory.list_items("a")
        text = {i.uid: i.content for i in items}  # memory uids differ between runs: compare what they name

        def lineage(uids: list[str]) -> tuple[str, ...]:
            return tuple(text.get(u, u) for u in uids)

        facts = ws.facts.query("a", limit=10_000)
        conv = ws.ports.conversations.find("a", "s1")
        assert conv is not None
        logged: Counter[str] = Counter()
        for log in (path / "agents" / "a" / "memory").glob("*.md"):
            logged.update(logged_uids(log))
        return {
            "items": sorted((i.content, lineage(i.derived_from), tuple(i.tags), i.archived_at is None) for i in items),
            "facts": sorted(
                (f.subject, f.predicate, f.object, f.valid_from, f.valid_until, tuple(f.derived_from)) for f in facts
            ),
            "mark": ws.ports.marks.get(MARK + conv.uid),
            "logged_once": all(logged[i.uid] == 1 for i in items),
        }
    finally:
        ws.close()


@pytest.mark.parametrize("mode", ["inside", "after-commit"])
def test_sigkill_mid_run_then_rerun_neither_loses_nor_duplicates(tmp_path: Path, mode: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_LLM_URL", raising=False)
    ws = kg.init_workspace(tmp_path / "ws")
    ws.agents.add("a")
    rows = [{"role": "user", "content": t, "created_at": T + timedelta(minutes=n)} for n, t in enumerate(texts())]
    ws.conversations.ingest("a", "s1", rows)
    ws.close()
    shutil.copytree(tmp_path / "ws", tmp_path / "reference")
    reference = kg.open_workspace(tmp_path / "reference")
    extraction_service(reference).extract("a")
    reference.close()

    child = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "ws"), mode], capture_output=True,
                           text=True, timeout=300, check=False)  # fmt: skip
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    killed = state(tmp_path / "ws")
    assert 0 < killed["mark"] < 40  # really stopped mid-run

    rerun = kg.open_workspace(tmp_path / "ws")
    extraction_service(rerun).extract("a")
    rerun.close()
    after, expected = state(tmp_path / "ws"), state(tmp_path / "reference")
    assert after["mark"] == expected["mark"] == 40
    assert after["items"] == expected["items"] and len(after["items"]) >= 10
    assert after["facts"] == expected["facts"] and after["facts"]
    assert after["logged_once"] and expected["logged_once"]
