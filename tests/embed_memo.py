"""The test processes keep each text's vector from the packaged model once computed (per process, per loaded model).

Most of the model's forward passes in the suite are the same texts again: the demo's memories and Markdown chunks
embedded by every ``mabos demo`` build, docs page and ``index`` command of a worker, a module's workspace rebuilt
and its chunks embedded again for each test. :func:`install` wraps :meth:`kg.recall.minilm.MiniLM.encode` so that a
text already encoded in this process is answered from memory and only the others go through the model, in one call.
Everything above the model runs as before (the embedder, its lock and BLAS threads, the embedding cache, the vector
index), and so does every spy a test puts on ``embed``.

A vector from memory was computed in another batch than the caller's, so it can differ from the one the caller's
batch would give in the last bits (1.5e-7 at most, measured; :meth:`MiniLM.encode` pads each batch to its longest
text): no test compares vectors more tightly than the model's own tests, and those (the files setting
``MEASURES_THE_MODEL = True``: batch against single, determinism, the reference vectors) run without the memo.
Processes the tests start (``mabos`` commands, servers, the forkserver's workers) run the model as shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

#: Texts longer than this go to the model every time (a fuzz test's 10 MB string is not worth keeping).
LONGEST_KEPT = 4_000
#: Vectors kept per model before the memo starts afresh (384 floats each: ~25 MB at the bound).
MOST_KEPT = 16_000

_state: dict[str, Any] = {"installed": False, "enabled": True}
_memos: dict[int, tuple[object, dict[str, Any]]] = {}


def install() -> None:
    """Wrap ``MiniLM.encode`` once in this process (imports the model's module: numpy and the tokenizer's)."""
    if _state["installed"]:
        return
    import numpy as np  # noqa: PLC0415 - only where a test runs, not in xdist's controller

    from kg.recall.minilm import MiniLM  # noqa: PLC0415

    original = MiniLM.encode

    def encode(self: MiniLM, texts: Sequence[str], *, batch_size: int = 64) -> Any:
        texts = list(texts)
        if not _state["enabled"] or not texts:
            return original(self, texts, batch_size=batch_size)
        kept = _memos.setdefault(id(self), (self, {}))[1]  # the model object is held: its id stays its own
        missing = list(dict.fromkeys(t for t in texts if t not in kept))
        fresh: dict[str, Any] = {}
        if missing:
            vectors = original(self, missing, batch_size=batch_size)
            fresh = dict(zip(missing, vectors, strict=True))
            if len(kept) + len(missing) > MOST_KEPT:
                kept.clear()
            kept.update((t, v) for t, v in fresh.items() if len(t) <= LONGEST_KEPT)
        return np.stack([fresh[t] if t in fresh else kept[t] for t in texts])  # a new array: callers may write to it

    MiniLM.encode = encode  # type: ignore[method-assign]
    _state["installed"] = True


def configure(item: pytest.Item) -> None:
    """Before each test: the memo on, unless the test's module measures the model itself."""
    _state["enabled"] = not getattr(getattr(item, "module", None), "MEASURES_THE_MODEL", False)
    if _state["enabled"]:
        install()
