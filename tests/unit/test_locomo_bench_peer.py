"""``bench/locomo_recall.py`` as the README shows it runs on the default install, which has no torch: the
plain-cosine peer (sentence-transformers, the ``torch`` extra) is then skipped with one line saying so, and the
JSON line records why, instead of a traceback."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1].parent
DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None, reason="the torch extra is installed: the peer runs"
)
@pytest.mark.skipif(not DATA.exists(), reason=f"no LoCoMo data at {DATA}")
def test_without_the_torch_extra_the_peer_is_skipped_with_a_reason() -> None:
    done = subprocess.run(
        [sys.executable, "bench/locomo_recall.py", "--data", str(DATA), "--k", "10", "--modes", "bm25",
         "--conversations", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "plain-cosine peer needs sentence-transformers" in done.stderr
    line = json.loads(done.stdout.strip().splitlines()[-1])
    assert line["benchmark"] == "locomo_recall"
    assert "skipped" in line["peer"]
    assert "plain_cosine_peer" not in json.dumps(line["results"])
    assert line["results"], "bm25 recall was measured"
