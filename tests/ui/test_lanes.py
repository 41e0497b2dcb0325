"""Where console work runs (cli/ui/lanes.py, cli/ui/work.py): the worker handler on its own, the workers' preload,
the errors' statuses and the view cache. The served console with its real worker processes: tests/ui/test_serving.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from cli import child_process
from cli.idle_index import IdleIndexer
from cli.ui.context import CACHE_SIZE, Console
from cli.ui.lanes import Lanes
from cli.ui.work import ConsoleWork, Job, status_of
from cli.workers import DeadlineError, WorkerError, WorkerMemoryError
from kg.workspace import DB_FILE, STATE_DIR
from tests.serving import ChildStarted, spy_child_starts

if TYPE_CHECKING:
    from conftest import Built


def test_the_handler_answers_pages_json_and_its_own_bugs_in_one_line(built: Built) -> None:
    work = ConsoleWork(built.path, "a")
    try:
        page = work(Job("page", "overview", {}, csrf="t0ken"))
        assert page.status == 200 and page.media_type.startswith("text/html")
        assert b'<meta name="csrf-token" content="t0ken">' in page.body and b"Alice" in page.body
        api = work(Job("api", "overview", {"agent": "b"}, index={"state": "off"}))
        assert api.status == 200 and b'"agent_id":"b"' in api.body and b'"index":{"state":"off"}' in api.body
        refused = work(Job("api", "facts", {"agent": "b"}, bound="a"))  # a token fixing a may not act as b
        assert refused.status == 403 and refused.body.startswith(b'{"error":"agent: this console session acts as')
        bug = work(Job("nowhere", "overview", {}))
        assert bug.status == 500 and bug.body == b"error: internal error: ValueError: unknown console route 'nowhere'"
        after = work(Job("page", "facts", {"subject": "acme"}))  # the handler serves on
        assert after.status == 200 and b"hasIndustry" in after.body
    finally:
        work.close()


def test_an_action_without_the_csrf_token_changes_nothing(built: Built) -> None:
    work = ConsoleWork(built.path, "a")
    try:
        fields = {"agent": "a", "uid": built.uids["proposal"], "reason": "no"}
        refused = work(Job("reject", "ontology", fields, csrf_ok=False, as_json=True))
        assert refused.status == 403 and b"csrf: missing or wrong CSRF token" in refused.body
        detail = work(Job("api", "ontology", {"agent": "a", "proposal": built.uids["proposal"]}))
        assert b'"status":"validated"' in detail.body
        done = work(Job("reject", "ontology", fields, csrf_ok=True))
        assert done.status == 303 and done.location is not None and "done=rejected" in done.location
    finally:
        work.close()


def test_worker_errors_are_mabos_errors_with_their_status() -> None:
    assert status_of(DeadlineError("deadline: ...")) == 504
    assert status_of(WorkerMemoryError("memory: ...")) == 503
    assert status_of(WorkerError("the worker running GET / ended (exit code 1)")) == 503


def test_the_console_workers_preload_the_servers_list_and_the_console(
    built: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the first child a process starts decides its forkserver's preload: the console's workers start first (with
    # the server), and their list holds the idle indexer's, so the index passes fork with what they need too
    asked = spy_child_starts(monkeypatch)
    with pytest.raises(ChildStarted):
        Lanes(built.path, "a").pool._spawn()
    with pytest.raises(ChildStarted):
        anyio.run(IdleIndexer(built.path)._one_pass)
    indexer = child_process.server_preload(built.path)
    assert asked == {"mabos-ui-worker": [*indexer, "cli.ui.work", "cli.ui.rendering"], "mabos-idle-index": indexer}


def test_the_view_cache_keeps_the_most_recently_used_views(tmp_path: Path) -> None:
    console = Console(tmp_path)
    computed: list[int] = []

    def view(number: int) -> Any:
        def compute() -> int:
            computed.append(number)
            return number

        return console.cached(("view", number), compute)

    for number in range(CACHE_SIZE):
        view(number)
    view(0)  # used again: now the most recent
    view(CACHE_SIZE)  # one too many: the least recently used (1) leaves
    computed.clear()
    assert [view(0), view(2), view(1)] == [0, 2, 1]
    assert computed == [1]  # only the evicted view was computed again
    (tmp_path / STATE_DIR).mkdir()
    (tmp_path / STATE_DIR / DB_FILE).write_bytes(b"changed")  # any committed write changes the stamp
    view(0)
    assert computed == [1, 0]
