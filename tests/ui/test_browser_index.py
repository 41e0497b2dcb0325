"""The header's index indicator in a real browser: ``mabos ui`` started as a user starts it (a subprocess, idle-time
indexing on), Debian's headless Chromium through Playwright. The page polls ``/api/index`` and shows where the
background build stands; with the embedder off (as in every console test) the pass ends "unavailable: no embedder
configured", which the header must come to show without a reload. Skips with a reason where Chromium is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from tests.serving import free_port, wait_listening
from tests.ui.test_browser import CHROMIUM, browser  # noqa: F401 - the module's one Chromium, as a fixture here too

if TYPE_CHECKING:
    from conftest import Built

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)")


@pytest.fixture
def served(built: Built, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``mabos ui`` on the test workspace with a one-second idle delay; its base URL and its stderr file."""
    port = free_port()
    log = tmp_path / "ui.err"
    command = [sys.executable, "-m", "cli.main", "ui", "--workspace", str(built.path), "--agent", "a", "--port",
               str(port), "--index-when-idle", "1"]  # fmt: skip
    with log.open("wb") as err:
        server = subprocess.Popen(command, env=dict(os.environ), cwd=REPO, stderr=err, stdout=subprocess.DEVNULL)
    try:
        with ThreadPoolExecutor(1) as waiter:  # Playwright's loop owns this thread
            waiter.submit(anyio.run, partial(wait_listening, port, server, timeout=120)).result()  # a hang guard
        yield f"http://127.0.0.1:{port}", log
    finally:
        server.terminate()
        server.wait(30)


def test_the_header_follows_the_idle_index_pass_without_a_reload(browser: Any, served: tuple[str, Path]) -> None:  # noqa: F811
    url, log = served
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    polls: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda request: polls.append(request.url) if request.url.endswith("/api/index") else None)
    try:
        # the pass may end before the page is drawn (its child forks from the workers' warm forkserver): either way
        # the page polls /api/index (first after 3 s) and shows the state the pass ended in
        with page.expect_request(lambda request: request.url.endswith("/api/index"), timeout=180_000):
            page.goto(f"{url}/?agent=a")
            assert page.locator("#index-status").count() == 1  # on by default in mabos ui
        page.wait_for_selector("#index-status[data-state='unavailable']", timeout=180_000)  # no eval: CSP forbids it
        shown = page.inner_text("#index-status")
    finally:
        context.close()
    assert polls and not errors, errors
    assert shown == "index: unavailable: no embedder configured"
    assert "vector index (idle): no embedder configured" in log.read_text(encoding="utf-8")  # the server's log
