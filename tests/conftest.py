"""Shared fixtures: every enabled store backend, a workspace on a fixed clock, store snapshots.

``graph_store`` runs a test once per backend registered in :data:`BACKENDS`: SQLite, the one store a workspace
runs on. TypeDB is a replication target, not a store (docs/decisions/2026-11-28-one-typedb-seam.md); its tests
use ``typedb_address``, which skips with a reason when no server can be reached, so plain ``pytest`` stays
offline and fast.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.forkserver
import os
import shutil
import sqlite3
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.clock import FixedClock
from kg.ports import GraphStore
from kg.store.sqlite import SqliteGraphStore
from kg.workspace import DB_FILE, STATE_DIR, Workspace
from tests import embed_memo
from tests.budget import long_run
from tests.collector import freeze_collected, tune_collector
from tests.snapshots import snapshot_workspace


def pytest_configure(config: pytest.Config) -> None:
    """``pytest -m slow`` asks for the long versions of the reliability harnesses: the same as ``MABOS_SLOW=1``
    (which every harness reads), so either way selects them."""
    if "slow" in str(config.getoption("markexpr") or "") and "not slow" not in str(config.getoption("markexpr")):
        os.environ["MABOS_SLOW"] = "1"
    # The CLI sizes its tables to COLUMNS when it is set; a terminal's (or a test runner's) width must not cut the
    # text that CLI tests read, so the tests always see the CLI's own width for a pipe.
    os.environ.pop("COLUMNS", None)
    tune_collector()
    # Bytecode caches on (before any test module is collected): pytest keeps a test module with its asserts rewritten
    # in __pycache__ only when bytecode may be written, and this machine's environment sets PYTHONDONTWRITEBYTECODE=1,
    # so each xdist worker rewrote and compiled every test module on every run (collection: 34 s of CPU, 15 s with the
    # caches). The processes the tests start (`mabos` commands, servers, forkservers) write and reuse theirs too, as an
    # installed package's modules have them. __pycache__ is gitignored; Python and pytest write a cache file atomically
    # and check it against its source's mtime and size (docs/decisions/2026-11-29-test-suite-time.md).
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # One xdist worker runs on each core, so an embedding batch on every core (the embedder's default) competes
    # with the other worker: OpenBLAS's spinning threads then made a batch 5-10x dearer in CPU and slower in wall
    # time (kg/recall/embedder.py, ENV_BATCH_THREADS). The code path is the same, and so are the vectors (bit for
    # bit, 40 texts compared).
    os.environ.setdefault("MABOS_EMBED_THREADS", "1")
    if config.getoption("basetemp") is None and "PYTEST_DEBUG_TEMPROOT" not in os.environ:
        memory = memory_temp_root()
        if memory is not None:  # read by the tmp_path factory; xdist's workers get their folders under it
            os.environ["PYTEST_DEBUG_TEMPROOT"] = str(memory)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test (or parameter) marked ``slow`` runs only in the long run: ``pytest -m slow`` or ``MABOS_SLOW=1``
    (:func:`tests.budget.long_run`); the default run skips it, saying how to run it. The model's vectors are kept
    per text for the test unless its module measures the model (:mod:`tests.embed_memo`)."""
    if item.get_closest_marker("slow") is not None and not long_run():
        pytest.skip("the long run only: pytest -m slow (or MABOS_SLOW=1)")
    embed_memo.configure(item)


#: The test files that take longest, longest first. With ``--dist loadfile --no-loadscope-reorder`` (pyproject.toml)
#: xdist hands whole files to its two workers in collection order, each taking the next file when it is nearly done;
#: started first, these leave the many short files to fill in at the end, so both workers finish within seconds of each
#: other (a long file handed out last keeps one worker busy alone for as long). A file missing here only runs later; a
#: name that no longer exists is ignored. The figures (2026-11-29, sixth pass): each file's test durations summed
#: (setup, call and teardown) in the 13:31 full run, at load 6-7 (2,116 s of durations, about 4x an idle run's; the two
#: workers ended 5 s apart), so a file that waits on child processes or servers, and so suffers more from a busy
#: machine, is started early. Every file of 17 s or more there (about 4 s idle) is here. Refresh when a file grows by
#: several seconds (docs/decisions/2026-11-29-test-suite-time.md).
SLOWEST_FILES: tuple[str, ...] = (
    "tests/reliability/test_scope_isolation.py",  # 150 s
    "tests/cli/test_commands.py",  # 90 s
    "tests/test_quality.py",  # 18 s; 16 s more when the code changed since mypy's cache was written (a fresh clone)
    "tests/unit/test_recall_reads_files.py",  # 74 s
    "tests/reliability/test_bad_input.py",  # 73 s
    "tests/unit/test_startup_imports.py",  # 62 s
    "tests/docs/test_docs_cli.py",  # 59 s
    "tests/unit/test_ontology_files.py",  # 54 s
    "tests/cli/test_demo.py",  # 51 s
    "tests/unit/test_facts_bulk_fast.py",  # 48 s
    "tests/docs/test_docs_readme.py",  # 43 s
    "tests/integration/test_mcp_stdio.py",  # 39 s
    "tests/unit/test_error_tree.py",  # 38 s
    "tests/unit/test_ui_idle_index.py",  # 33 s
    "tests/reliability/test_concurrent_writers.py",  # 31 s
    "tests/unit/test_fact_import_paths.py",  # 30 s
    "tests/integration/test_mcp_http.py",  # 29 s
    "tests/reliability/test_crash_safety.py",  # 26 s
    "tests/unit/test_ontology_memo.py",  # 26 s
    "tests/docs/test_docs_commands.py",  # 26 s
    "tests/unit/test_nightly.py",  # 23 s
    "tests/ui/test_browser_index.py",  # 22 s
    "tests/unit/test_reason_startup.py",  # 22 s
    "tests/unit/test_fact_import_rows.py",  # 21 s
    "tests/unit/test_fact_import_parsers.py",  # 21 s
    "tests/unit/test_conversation_summarize.py",  # 21 s
    "tests/unit/test_rules_properties.py",  # 21 s
    "tests/ui/test_browser_hostile.py",  # 20 s
    "tests/unit/test_tools_ontology_admin.py",  # 19 s
    "tests/unit/test_mcp_idle_index.py",  # 19 s
    "tests/unit/test_extraction_llm.py",  # 19 s
    "tests/unit/test_pydantic_plugins.py",  # 19 s
    "tests/reliability/test_limits.py",  # 19 s
    "tests/unit/test_recall_vectors.py",  # 18 s
    "tests/reliability/test_outbox_chaos.py",  # 18 s
    "tests/ui/test_browser.py",  # 18 s
    "tests/unit/test_memory_dedup.py",  # 17 s
    "tests/unit/test_recall_engine.py",  # 17 s
    "tests/unit/test_embedding_runtime.py",  # 17 s
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`SLOWEST_FILES` first, in its order; every other file after them, in collection order
    (a stable sort: the tests of a file keep their order)."""
    rank = {name: position for position, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


def pytest_collection_finish() -> None:
    """What collection built stays for the whole run: out of the collector's way (:mod:`tests.collector`)."""
    freeze_collected()


#: A memory file system for the tests' temporary folders, and the free space it must have.
MEMORY_TEMP_ROOT = Path("/dev/shm")  # noqa: S108 - the root of pytest-of-<user> (0700, owner checked by pytest)
MEMORY_TEMP_MIN_FREE = 4 * 2**30


def memory_temp_root() -> Path | None:
    """``/dev/shm`` when it is a writable tmpfs with room to spare, else None (the system's temp folder then).

    The suite writes thousands of workspaces, and SQLite (``synchronous = FULL``) and the Markdown writers fsync
    every commit: on a disk that is tens of thousands of waits per run, on tmpfs none. What the tests check does
    not depend on it: a killed process loses nothing of what it wrote to the page cache on either file system, and
    no test can cut the power. ``pytest --basetemp DIR`` or ``PYTEST_DEBUG_TEMPROOT=DIR`` chooses another place.
    """
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
        tmpfs = any(line.split()[1:3] == [str(MEMORY_TEMP_ROOT), "tmpfs"] for line in mounts)
        roomy = shutil.disk_usage(MEMORY_TEMP_ROOT).free >= MEMORY_TEMP_MIN_FREE
    except (OSError, IndexError):
        return None
    return MEMORY_TEMP_ROOT if tmpfs and roomy and os.access(MEMORY_TEMP_ROOT, os.W_OK | os.X_OK) else None


#: The instant every fixed clock starts at.
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

BackendFactory = Callable[[Path, FixedClock], GraphStore]


@dataclass(frozen=True)
class Backend:
    """How to build one store backend for a test, and the marks its tests carry."""

    factory: BackendFactory
    marks: tuple[pytest.MarkDecorator, ...] = field(default_factory=tuple)


def _sqlite_store(tmp_path: Path, clock: FixedClock) -> GraphStore:
    return SqliteGraphStore(tmp_path / "kg.sqlite", clock=clock)


#: Backend name -> factory.
BACKENDS: dict[str, Backend] = {
    "sqlite": Backend(_sqlite_store),
}


# ------------------------------------------------------------------------------------------ TypeDB

#: The server image the integration tests start when Docker is available (override: MABOS_TYPEDB_IMAGE).
TYPEDB_IMAGE = "typedb/typedb:3.14.0"


def _docker_engine() -> str | None:
    """None when a Docker engine answers within a second, else why not (no socket, no daemon, no SDK)."""

    if not os.environ.get("DOCKER_HOST") and not Path("/var/run/docker.sock").exists():
        return "no DOCKER_HOST and no /var/run/docker.sock"
    try:
        import docker  # noqa: PLC0415 - the testcontainers dependency; optional for plain pytest
    except ImportError:
        return "the docker SDK is not installed"
    client = None
    try:
        client = docker.from_env(timeout=1)
        client.ping()
    except Exception as exc:
        return f"the Docker engine does not answer ({type(exc).__name__})"
    finally:
        if client is not None:
            client.close()
    return None


@pytest.fixture(scope="session")
def typedb_address() -> Iterator[str]:
    """``host:port`` of a TypeDB 3.x server: ``MABOS_TYPEDB_ADDRESS``, else a testcontainers container.

    Skips (in well under a second) with the reason when neither is available.
    """

    address = os.environ.get("MABOS_TYPEDB_ADDRESS")
    if address:
        yield address
        return
    reason = _docker_engine()
    if reason is not None:
        pytest.skip(f"TypeDB tests need MABOS_TYPEDB_ADDRESS or a Docker engine: {reason}")
    from testcontainers.core.container import DockerContainer  # noqa: PLC0415
    from testcontainers.core.wait_strategies import HttpWaitStrategy  # noqa: PLC0415

    image = os.environ.get("MABOS_TYPEDB_IMAGE", TYPEDB_IMAGE)
    container = (
        DockerContainer(image)
        .with_exposed_ports(1729, 8000)
        .with_command(["--diagnostics.reporting.metrics=false", "--diagnostics.reporting.errors=false"])
        .waiting_for(HttpWaitStrategy(8000, "/health").for_status_code(204))
    )
    with container:
        yield f"{container.get_container_host_ip()}:{container.get_exposed_port(1729)}"


# ------------------------------------------------------------------------------------------ server children


@pytest.fixture(scope="session", autouse=True)
def _forkserver() -> None:
    """Start this test process's forkserver now, preloading what a server's children preload on a workspace that
    embeds locally (``cli.child_process.server_preload``: the MCP workers' and the idle indexer's modules and the
    embedding stack).

    A process has one forkserver and the first child it starts decides the preload (cli/child_process.py): without
    this, a test file that happens to start an MCP pool first leaves every later idle-index pass and embedding
    worker of the process importing the tool modules and the embedding runtime again. The children run the
    same code either way; only what is already imported when they start differs. The forkserver imports in the
    background while the tests run.

    The console's modules (``CONSOLE_WORKERS.preload``: its pages and its Jinja2 templates, compiled on import) are
    preloaded too, as ``mabos ui``'s forkserver has them: without them each console worker (three per app, a new
    app in most console tests) imported the pages and compiled every template again on start."""
    from cli.child_process import preload_for  # noqa: PLC0415
    from cli.ui.lanes import CONSOLE_WORKERS  # noqa: PLC0415

    preload = [*preload_for("local"), *CONSOLE_WORKERS.preload]
    multiprocessing.get_context("forkserver").set_forkserver_preload(preload)
    multiprocessing.forkserver.ensure_running()


# ------------------------------------------------------------------------------------------ conversations

#: An original 48-message dialogue (tests/data/conversation/compaction-dialogue.md says where it comes from).
DIALOGUE = Path(__file__).resolve().parent / "data" / "conversation" / "compaction-dialogue.jsonl"


@pytest.fixture(scope="session")
def long_dialogue() -> Callable[[int], list[dict[str, Any]]]:
    """``long_dialogue(copies)``: the dialogue repeated, without times and with fresh tool call ids per copy, as
    ingest rows: enough messages beyond the 64-message fresh tail to compact."""
    rows = [json.loads(line) for line in DIALOGUE.read_text(encoding="utf-8").splitlines()]

    def repeated(copies: int = 4) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for copy in range(copies):
            for row in rows:
                fresh = {k: v for k, v in row.items() if k != "created_at"}
                if row.get("tool_call_id"):
                    fresh["tool_call_id"] = f"{row['tool_call_id']}-{copy}"
                out.append(fresh)
        return out

    return repeated


# ------------------------------------------------------------------------------------------ golden files


def check_golden(path: Path, text: str) -> None:
    """``text`` must equal the golden file ``path``; ``UPDATE_GOLDEN=1`` rewrites the file instead (review it)."""
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}; run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs (UPDATE_GOLDEN=1 after review)"


@pytest.fixture
def golden() -> Callable[[Path, str], None]:
    """``golden(path, text)``: compare generated text with its golden file (see :func:`check_golden`)."""
    return check_golden


@pytest.fixture
def clock() -> FixedClock:
    """A clock frozen at :data:`T0`; tests move it with ``advance``/``set``."""
    return FixedClock(T0)


@pytest.fixture(params=[pytest.param(name, marks=b.marks, id=name) for name, b in BACKENDS.items()])
def graph_store(request: pytest.FixtureRequest, tmp_path: Path, clock: FixedClock) -> Iterator[GraphStore]:
    """A fresh, empty store of each enabled backend, on the ``clock`` fixture."""
    if request.param == "sqlite":  # what the factory would create, copied (see fresh_template)
        _copy_fresh(request.getfixturevalue("fresh_template") / "kg.sqlite", tmp_path / "kg.sqlite")
    store = BACKENDS[request.param].factory(tmp_path, clock)
    yield store
    store.close()


@pytest.fixture(scope="session")
def fresh_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace (``ws``) and a store (``kg.sqlite``) exactly as ``init_workspace`` and ``SqliteGraphStore`` create
    them on a clock at :data:`T0`, made once per test process: the ``workspace`` and ``graph_store`` fixtures copy them
    (about 4x cheaper than running every migration again; hundreds of tests use them)."""
    root = tmp_path_factory.mktemp("fresh")
    kg.init_workspace(root / "ws", clock=FixedClock(T0)).close()
    SqliteGraphStore(root / "kg.sqlite", clock=FixedClock(T0)).close()
    return root


def _copy_fresh(source: Path, target: Path) -> None:
    """Copy a fresh workspace directory or store file (with its WAL files); the copy gets its own random store id,
    as every new store does (a saved vector index names the store it belongs to)."""
    if source.is_dir():
        shutil.copytree(source, target)
        db = target / STATE_DIR / DB_FILE
    else:
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{source}{suffix}").exists():
                shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
        db = target
    conn = sqlite3.connect(db)
    try:
        with conn:
            conn.execute("UPDATE store_meta SET value = ? WHERE key = 'store_id'", (uuid.uuid4().hex,))
    finally:
        conn.close()


@pytest.fixture(scope="session")
def copy_workspace() -> Callable[[Path, Path], None]:
    """``copy_workspace(source, target)``: copy a closed workspace a module built once (a per-process template) to
    ``target`` for one test, with its own store id, as the ``workspace`` fixture copies the fresh one."""
    return _copy_fresh


@pytest.fixture
def workspace(tmp_path: Path, clock: FixedClock, fresh_template: Path) -> Iterator[Workspace]:
    """A fresh workspace at ``tmp_path/ws``; its clock (``workspace.clock``) is the ``clock`` fixture."""
    _copy_fresh(fresh_template / "ws", tmp_path / "ws")
    ws = kg.init_workspace(tmp_path / "ws", clock=clock)  # an existing workspace: opened as it is
    yield ws
    ws.close()


# ------------------------------------------------------------------------------------------ snapshots


@pytest.fixture
def snapshot() -> Callable[[Any], dict[str, str]]:
    """``snapshot(workspace)`` -> digests to compare for "nothing changed" assertions."""
    return snapshot_workspace
