"""The memory tools through the Python API (``cli.tools.call``) on a real workspace: real SQLite, real files.

No embedder (``MABOS_EMBEDDER=none``): recall runs BM25, which is what these checks need.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from cli import tools
from cli.tools.memory import MemoryStatus
from cli.tools.memory_admin import CheckpointResult, HierarchyHits
from kg.errors import InputError, NotFoundError, ScopeError
from kg.memory import files
from kg.memory.checkpoints import checkpoints_dir
from kg.memory.consolidation import ConsolidationResult
from kg.memory.hierarchy import HierarchyResult
from kg.memory.service import RecallResult, StoreResult
from kg.workspace import DB_FILE, STATE_DIR, init_workspace

JWT = "JWT tokens are signed with RS256"
REFUND = "The refund policy is 30 days for annual plans"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace directory with agents ``a`` and ``b`` (closed: every call opens it as an agent would)."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    path = tmp_path / "ws"
    with init_workspace(path) as ws:
        ws.agents.add("a")
        ws.agents.add("b")
    return path


def store(root: Path, content: str, **fields: object) -> StoreResult:
    result = tools.call("memory_store_item", workspace=root, agent_id="a", content=content, **fields)
    assert isinstance(result, StoreResult)
    return result


def recall(root: Path, **args: object) -> RecallResult:
    result = tools.call("memory_recall", workspace=root, agent_id="a", **args)
    assert isinstance(result, RecallResult)
    return result


def write_log(root: Path, day: date, content: str) -> None:
    when = datetime(day.year, day.month, day.day, 10, 0, tzinfo=UTC)
    entry = files.daily_log_entry(when=when, uid=f"M-{day.toordinal():026d}", type_="decision", importance=0.8,
                                  store="working", tags=["acme"], content=content)  # fmt: skip
    files.atomic_write(files.daily_log_path(root, "a", day), files.daily_log_header(day) + entry)


# ---------------------------------------------------------------------------------- store and recall


def test_store_then_recall_finds_it(root: Path) -> None:
    stored = store(root, JWT, type="decision", tags=["auth", "jwt"], store="long_term")
    store(root, REFUND, type="fact")
    assert (stored.item.type.value, stored.item.store.value, stored.item.importance) == ("decision", "long_term", 0.75)
    assert Path(stored.daily_log).read_text(encoding="utf-8").count(JWT) == 1
    found = recall(root, query="how are JWT tokens signed")
    assert [h.item.uid for h in found.hits] == [stored.item.uid]
    assert (found.mode, found.requested_mode, found.fallback) == ("bm25", "hybrid", False)


def test_recall_filters_explain_and_depth(root: Path) -> None:
    jwt = store(root, JWT, tags=["auth"]).item.uid
    store(root, "RS256 keys rotate every 90 days", tags=["auth"])
    assert recall(root, query="JWT", types=["decision"]).hits == []
    explained = recall(root, query="JWT", explain=True, limit=1)
    assert [h.item.uid for h in explained.hits] == [jwt] and explained.hits[0].explain is not None
    assert {h.depth for h in recall(root, query="JWT").hits} == {None}
    deep = recall(root, query="JWT", depth=1)  # recursive: each hit says which depth found it
    assert deep.hits[0].item.uid == jwt and all(h.depth is not None for h in deep.hits)


def test_recall_within_a_window_keeps_the_memory_share(root: Path) -> None:
    store(root, JWT)
    assert recall(root, query="JWT", window=100).max_tokens == 20  # 20% of the window
    assert recall(root, query="JWT", max_tokens=7).max_tokens == 7


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"query": "x", "limit": 101}, "limit"),  # at most 100
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "depth": 4}, "depth"),  # recursive depth at most 3
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "min_importance": 1.5}, "min_importance"),
        ({"query": "x", "max_age": "soon"}, "max_age"),
        ({"query": "x", "colour": "red"}, "colour"),
    ],
)
def test_malformed_recall_names_the_field(root: Path, args: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as err:
        recall(root, **args)
    assert err.value.field == field


def test_recall_defaults_follow_the_tool_table() -> None:
    schema = tools.get("memory_recall").input_schema()["properties"]
    assert (schema["limit"]["default"], schema["limit"]["maximum"]) == (20, 100)
    assert (schema["depth"]["default"], schema["depth"]["maximum"]) == (0, 3)


def test_malformed_store_changes_nothing(root: Path) -> None:
    with pytest.raises(InputError) as err:
        store(root, JWT, importance=2)
    assert err.value.field == "importance"
    with pytest.raises(InputError) as missing:
        tools.call("memory_store_item", workspace=root, agent_id="a")
    assert missing.value.field == "content"
    status = tools.call("memory_status", workspace=root, agent_id="a")
    assert isinstance(status, MemoryStatus) and status.total == 0


def test_a_corrupt_database_answers_from_the_files(root: Path) -> None:
    store(root, REFUND, store="long_term")
    state = root / STATE_DIR
    for leftover in state.glob(f"{DB_FILE}-*"):
        leftover.unlink()
    (state / DB_FILE).write_bytes(b"this is not a database\x00\xff" * 512)
    found = recall(root, query="refund policy")
    assert found.fallback is True and found.hits == [] and found.mode == "bm25"
    assert found.reason and "not a usable mabos database" in found.reason
    assert "refund policy" in found.files[0].text


# ---------------------------------------------------------------------------------- agent identity


def test_a_bound_agent_cannot_act_as_another(root: Path) -> None:
    with pytest.raises(ScopeError):
        tools.call("memory_recall", workspace=root, agent="a", agent_id="b", query="x")
    with pytest.raises(ScopeError):
        tools.call("memory_store_item", workspace=root, agent="a", agent_id="b", content="x")
    bound = tools.call("memory_store_item", workspace=root, agent="a", content=JWT)
    assert isinstance(bound, StoreResult) and bound.item.agent_id == "a"


def test_an_agent_is_required_and_must_exist(root: Path) -> None:
    with pytest.raises(InputError) as none:
        tools.call("memory_status", workspace=root)
    assert none.value.field == "agent_id"
    with pytest.raises(InputError) as malformed:
        tools.call("memory_consolidate", workspace=root, agent_id="../x")
    assert malformed.value.field == "agent"
    with pytest.raises(NotFoundError, match=r"^agent: no agent 'nobody'"):
        tools.call("memory_checkpoint", workspace=root, agent_id="nobody", context="x")


# ---------------------------------------------------------------------------------- consolidate and status


def test_consolidate_dry_run_then_for_real(root: Path) -> None:
    jwt = store(root, JWT, type="decision", tags=["auth"]).item.uid
    store(root, "Lunch was pasta", importance=0.1)
    preview = tools.call("memory_consolidate", workspace=root, agent_id="a", dry_run=True)
    assert isinstance(preview, ConsolidationResult) and (preview.candidates, preview.promoted) == (1, [jwt])
    before = tools.call("memory_status", workspace=root, agent_id="a")
    assert isinstance(before, MemoryStatus) and before.stores["long_term"].active == 0
    done = tools.call("memory_consolidate", workspace=root, agent_id="a")
    assert isinstance(done, ConsolidationResult) and done.promoted == [jwt] and done.memory_file
    assert JWT in Path(done.memory_file).read_text(encoding="utf-8")
    after = tools.call("memory_status", workspace=root, agent_id="a")
    assert isinstance(after, MemoryStatus)
    assert (after.stores["long_term"].active, after.stores["short_term"].active, after.total) == (1, 1, 2)
    assert after.capacity == {"working": 7, "short_term": 200, "long_term": None}


# ---------------------------------------------------------------------------------- checkpoint


def test_checkpoint_write_then_show_latest(root: Path) -> None:
    empty = tools.call("memory_checkpoint", workspace=root, agent_id="a", show_latest=True)
    assert empty == CheckpointResult(path=None, checkpoint=None)
    written = tools.call("memory_checkpoint", workspace=root, agent_id="a", context="Closing the Acme deal",
                         decisions=["Annual plan"], next_steps=["Send the quote"])  # fmt: skip
    assert isinstance(written, CheckpointResult) and written.path is not None and written.checkpoint is not None
    assert written.path.parent == checkpoints_dir(root, "a") and written.checkpoint.decisions == ["Annual plan"]
    latest = tools.call("memory_checkpoint", workspace=root, agent_id="a", show_latest=True)
    assert isinstance(latest, CheckpointResult) and latest.path == written.path
    assert latest.checkpoint is not None and latest.checkpoint.context == "Closing the Acme deal"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "context"),
        ({"context": "   "}, "context"),
        ({"context": "x", "decisions": [""]}, "decisions[0]"),
        ({"show_latest": True, "context": "x"}, "show_latest"),
        ({"context": "x", "decisions": "one"}, "decisions"),
    ],
)
def test_bad_checkpoints_write_nothing(root: Path, args: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as err:
        tools.call("memory_checkpoint", workspace=root, agent_id="a", **args)
    assert err.value.field == field
    assert not checkpoints_dir(root, "a").exists()


# ---------------------------------------------------------------------------------- hierarchy


def test_build_and_search_the_hierarchy(root: Path) -> None:
    write_log(root, date(2025, 1, 14), "Acme contract signed")
    write_log(root, date(2025, 4, 2), "Globex pricing call")
    built = tools.call("memory_build_hierarchy", workspace=root, agent_id="a")
    assert isinstance(built, HierarchyResult) and built.daily_logs == 2
    names = sorted(p.name for p in built.created)
    assert "2025-W03.md" in names and "2025-Q2.md" in names
    again = tools.call("memory_build_hierarchy", workspace=root, agent_id="a", scope="week", since="2025-03-01")
    assert isinstance(again, HierarchyResult) and again.created == again.updated == [] and again.scope == "week"
    for level in ("daily", "weekly", "monthly", "quarterly"):
        found = tools.call("memory_hierarchy_search", workspace=root, agent_id="a", query="globex pricing",
                           level=level)  # fmt: skip
        assert isinstance(found, HierarchyHits) and found.hits[0].score == 1.0 and found.hits[0].level == level


@pytest.mark.parametrize(
    ("name", "args", "field"),
    [
        ("memory_hierarchy_search", {"query": "x", "level": "yearly"}, "level"),
        ("memory_hierarchy_search", {"query": "x", "limit": 0}, "limit"),
        ("memory_hierarchy_search", {"query": "..."}, "query"),
        ("memory_build_hierarchy", {"scope": "year"}, "scope"),
        ("memory_build_hierarchy", {"since": "2025-02-30"}, "since"),
    ],
)
def test_malformed_hierarchy_calls_name_the_field(root: Path, name: str, args: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as err:
        tools.call(name, workspace=root, agent_id="a", **args)
    assert err.value.field == field
