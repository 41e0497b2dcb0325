"""Every shell block of the docs pages runs as written (issue 35.2); see tests/docs/harness.py for how.

One test per page, in page order; each page gets its own scratch folder and its own copy of the prepared
workspace (tests/docs/conftest.py), so the pages do not depend on each other. Commands run in-process; the
embedder is off (BM25 recall) except for the ``index`` commands, which run the shipped model (see
``EMBEDDING_GROUPS`` in the harness). README.md and docs/cli.md, the two longest pages, have files of their own
(test_docs_readme.py, test_docs_cli.py) so that the two test workers share the work.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.docs.harness import ROOT, commands

#: Pages tested in files of their own.
OWN_FILES = {"README.md", "cli.md"}
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _pages_with_commands() -> list[Path]:
    return [page for page in PAGES if commands(page)]


def test_every_page_with_commands_is_found() -> None:
    names = {page.name for page in _pages_with_commands()}
    assert {"README.md", "cli.md", "degradation.md"} <= names


@pytest.mark.parametrize("page", [p for p in _pages_with_commands() if p.name not in OWN_FILES],
                         ids=lambda p: p.name)  # fmt: skip
def test_the_commands_of_the_page_run(page: Path, run_page: Callable[[Path], None]) -> None:
    run_page(page)
