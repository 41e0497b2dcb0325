"""The cyclic garbage collector's schedule in the test processes (docs/decisions/2026-11-29-test-suite-time.md,
"Seventh pass, the collector").

A test process keeps what pytest collected (modules, functions, fixtures, hypothesis strategies: hundreds of
thousands of objects) for the whole run, and with the default thresholds (700, 10, 10) the collector walks them
again and again: 5.55 s of 60 s of CPU in six heavy files, measured with ``gc.callbacks``. Moving what collection
built to the permanent generation once it is done (``gc.freeze``, as ``mabos`` itself does after loading a command)
and collecting the youngest generation every 10,000 allocations instead of 700 took that to 1.52 s; a larger first
threshold (50,000) saved no more. Nothing a test asserts depends on when cycles are freed: the code under test runs
as it does anywhere, and the tests of the import's collector pause set and check the collector themselves.
"""

from __future__ import annotations

import gc

#: (youngest, middle, oldest): see the module's docstring for how they were chosen.
THRESHOLDS = (10_000, 20, 20)


def tune_collector() -> None:
    """Collect less often in this test process (pytest's configure step, in each xdist worker)."""
    gc.set_threshold(*THRESHOLDS)


def freeze_collected() -> None:
    """Move what the collection built to the permanent generation (after pytest collected the tests)."""
    gc.collect()
    gc.freeze()
