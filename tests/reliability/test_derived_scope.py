"""Derived writes never publish what their sources keep private (issue 18): the rule and its producers.

The rule (:mod:`kg.scopes`): a record derived from others takes a scope no wider than the narrowest of its
sources, and records of different non-global scopes are never merged. Here:

* the rule itself, as a property over random scope mixes;
* each producer over random scope mixes (consolidation and dedup have their own property tests in
  ``tests/unit/test_memory_consolidation.py`` and ``tests/unit/test_memory_dedup.py``; the time hierarchy is
  checked here, with the symlinks an agent could plant in its own folder);
* ``memory admit`` (the dedup writer) end to end;
* the isolation probe of the nightly job: agent ``a`` (granted ``project:x``) stores items that share tags in
  ``project:x``, ``agent:a`` and ``global``; after ``mabos sync nightly --all`` agent ``c`` (no grant) recalls
  nothing of ``a``'s private or project items, through items, the Markdown files and the hierarchy.

Real workspaces (embedded SQLite, files on disk), the real nightly runner and CLI; no embedder (lexical
recall), nothing mocked.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from cli.main import cli
from kg.clock import FixedClock
from kg.errors import InputError
from kg.memory.admission import MemoryCandidate
from kg.memory.hierarchy import build_hierarchy, search_hierarchy, summary_scope
from kg.memory.write_policy import MemoryWriter
from kg.recall.fallback import fallback_recall
from kg.scopes import derived_scope_allowed, merge_refusal, narrowest_scope, same_scope_groups
from kg.workspace import Workspace
from tests.budget import examples
from tests.conftest import T0

SCOPES = ("global", "agent:a", "agent:b", "project:x", "project:y", "user:u", "custom:c")
MARK = "zqxp"  # every item of a outside global carries a token starting with this


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


# ------------------------------------------------------------------------------------------ the rule


def test_the_rule_on_examples() -> None:
    assert narrowest_scope(["global", "global"]) == "global"
    assert narrowest_scope(["global", "project:x", "project:x"]) == "project:x"
    assert narrowest_scope(["agent:a", "global"]) == "agent:a"
    assert narrowest_scope(["project:x", "agent:a"]) is None  # two audiences: no single scope within both
    assert narrowest_scope(["agent:a", "agent:b"]) is None
    with pytest.raises(InputError, match="scopes: a derived record needs at least one source scope"):
        narrowest_scope([])
    assert derived_scope_allowed("agent:a", ["global"]) and not derived_scope_allowed("global", ["agent:a"])
    assert not derived_scope_allowed("agent:a", ["project:x"])  # a copy would outlive a revoked grant
    assert merge_refusal(["project:x", "project:x"]) is None
    assert "merge only within one scope" in (merge_refusal(["global", "agent:a"]) or "")
    assert same_scope_groups([("a", 1), ("g", 2), ("a", 3)], lambda t: t[0]) == [[("a", 1), ("a", 3)], [("g", 2)]]


def _audience(scope: str, agents: dict[str, set[str]]) -> set[str]:
    """Who reads a scope: everyone for global, the agent for its own, the grantees otherwise."""
    if scope == "global":
        return set(agents)
    if scope.startswith("agent:"):
        return {scope.removeprefix("agent:")}
    return {a for a, grants in agents.items() if scope in grants}


@settings(max_examples=examples(300), deadline=None)
@given(sources=st.lists(st.sampled_from(SCOPES), min_size=1, max_size=6),
       grants=st.dictionaries(st.sampled_from("abc"), st.sets(st.sampled_from(SCOPES[3:]))))  # fmt: skip
def test_property_the_derived_scope_is_within_every_source_audience(
    sources: list[str], grants: dict[str, set[str]]
) -> None:
    """Whatever the grants: whoever can read the derived record could read every source, and a mix of two
    non-global scopes yields no scope at all."""
    agents = {a: grants.get(a, set()) for a in "abc"}
    narrow = narrowest_scope(sources)
    if narrow is None:
        assert len(set(sources) - {"global"}) >= 2
        return
    for source in sources:
        assert _audience(narrow, agents) <= _audience(source, agents)
    for candidate in SCOPES:
        if derived_scope_allowed(candidate, sources) and narrow != "global":
            assert candidate == narrow


# ------------------------------------------------------------------------------------------ time hierarchy


def _grant_all(ws: Workspace) -> None:
    for agent in "abc":
        ws.agents.add(agent)
    ws.scopes.grant("a", "project:x", granted_by="test")
    ws.scopes.grant("b", "project:x", granted_by="test")


def _summaries(ws: Workspace, agent: str) -> dict[str, str]:
    folder = ws.path / "agents" / agent / "memory"
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for level in ("weekly", "monthly", "quarterly")
            for p in sorted((folder / level).glob("*.md"))}  # fmt: skip


_UID = re.compile(r"\bM-[0-9A-Z]{26}\b")
_ITEM = st.tuples(st.sampled_from("abc"), st.sampled_from(("global", "agent:", "project:x")), st.integers(0, 40))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(_ITEM, min_size=1, max_size=16))
def test_property_a_summary_cites_only_its_agents_own_entries(
    tmp_path_factory: pytest.TempPathFactory, items: list[tuple[str, str, int]]
) -> None:
    """Items of three agents in mixed scopes over several weeks: each agent's summaries (scope ``agent:<id>``:
    only that agent reads its folder) cite only entries of that agent's own writes, which it could all read;
    c (no grant) finds nothing of a's or b's non-global items at any level."""
    clock = FixedClock(T0)
    ws = kg.init_workspace(tmp_path_factory.mktemp("hier") / "ws", clock=clock)
    try:
        _grant_all(ws)
        owner: dict[str, tuple[str, str]] = {}
        for n, (agent, kind, day) in enumerate(items):
            scope = f"agent:{agent}" if kind == "agent:" else kind
            if scope == "project:x" and agent == "c":  # c has no grant
                scope = "global"
            clock.set(T0 + timedelta(days=day, minutes=n))
            text = f"{MARK}{n} note" if scope != "global" and agent != "c" else f"c or shared note {n}"
            owner[ws.memory.store_item(agent, text, scope=scope).item.uid] = (agent, scope)
        for agent in "abc":
            build_hierarchy(ws.path, agent, clock=ws.clock)
            readable = set(ws.scopes.readable(agent))
            for name, text in _summaries(ws, agent).items():
                for uid in _UID.findall(text):
                    assert owner[uid][0] == agent, f"{agent}/{name} cites {uid} of {owner[uid][0]}"
                    assert derived_scope_allowed(summary_scope(agent), [summary_scope(agent)])
                    assert owner[uid][1] in readable
        for level in ("daily", "weekly", "monthly", "quarterly"):
            hits = search_hierarchy(ws.path, "c", f"{MARK} note", level=level, limit=1000)  # type: ignore[arg-type]
            assert not any(MARK in h.snippet for h in hits), level
    finally:
        ws.close()


def _plant_symlinks(ws: Workspace) -> None:
    """b writes a private item; a's folder gets a daily log linked to b's and a weekly folder linked to b's."""
    ws.memory.store_item("b", f"b's private plan {MARK}b")
    ws.memory.store_item("a", "a's own note")
    day = ws.clock.now().date()
    b_memory = ws.path / "agents" / "b" / "memory"
    a_memory = ws.path / "agents" / "a" / "memory"
    (b_memory / "weekly").mkdir(parents=True, exist_ok=True)
    other = day + timedelta(days=1)
    (a_memory / f"{other.isoformat()}.md").symlink_to(b_memory / f"{day.isoformat()}.md")


def test_a_symlink_in_an_agents_folder_never_pulls_another_agents_log_in(workspace: Workspace) -> None:
    _grant_all(workspace)
    _plant_symlinks(workspace)
    result = build_hierarchy(workspace.path, "a", clock=workspace.clock)
    assert result.daily_logs == 1 and any("outside" in line for line in result.ignored)
    assert not any(MARK in text for text in _summaries(workspace, "a").values())
    for level in ("daily", "weekly"):
        assert not search_hierarchy(workspace.path, "a", f"{MARK}b plan", level=level)  # type: ignore[arg-type]


def test_a_symlinked_summary_folder_is_never_written_through(workspace: Workspace) -> None:
    _grant_all(workspace)
    workspace.memory.store_item("a", f"a's private note {MARK}a")
    b_weekly = workspace.path / "agents" / "b" / "memory" / "weekly"
    b_weekly.mkdir(parents=True)
    (workspace.path / "agents" / "a" / "memory" / "weekly").symlink_to(b_weekly)
    result = build_hierarchy(workspace.path, "a", scope="week", clock=workspace.clock)
    assert list(b_weekly.iterdir()) == [] and result.created == [] and len(result.foreign) == 1


# ------------------------------------------------------------------------------------------ memory admit


def test_memory_admit_never_merges_a_private_candidate_into_a_global_memory(workspace: Workspace) -> None:
    workspace.agents.add("a")
    workspace.agents.add("c")
    words = "the quarterly budget review meeting moved to the large room on the third floor"
    old = workspace.memory.store_item("a", words, scope="global", tags=["office"]).item
    writer = MemoryWriter(workspace.memory, "a", embedder=None)
    report = writer.offer([MemoryCandidate(content=f"{words} {MARK}secret", tags=["private"])])
    [outcome] = report.outcomes
    assert outcome.decision is not None and outcome.decision.action == "merge"
    assert outcome.applied is not None and outcome.applied.action == "create" and outcome.applied.notes
    kept = workspace.memory.get("c", old.uid)
    assert (kept.content, kept.tags, kept.archived_at) == (words, ["office"], None)
    assert not any(MARK in h.item.content for h in workspace.memory.recall("c", f"{MARK}secret", mode="bm25").hits)


def test_memory_admit_cli_says_a_cross_scope_merge_became_a_create(tmp_path: Path) -> None:
    path = tmp_path / "ws"
    words = "the quarterly budget review meeting moved to the large room on the third floor"
    with kg.init_workspace(path) as ws:
        ws.agents.add("a")
        ws.memory.store_item("a", words, scope="global")
    (tmp_path / "c.jsonl").write_text(json.dumps({"content": f"{words} {MARK}secret"}) + "\n")
    args = ["--workspace", str(path), "memory", "admit", "--agent", "a", "--file", str(tmp_path / "c.jsonl"),
            "--preset", "off"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "create" in result.stdout and "merge only within one scope" in " ".join(result.stdout.split())
    with kg.open_workspace(path) as ws:
        assert [i.content for i in ws.memory.list_items("a", scope="global")] == [words]


# ------------------------------------------------------------------------------------------ nightly probe

SECRETS = {"project:x": f"Project x launch code is {MARK}launch", "agent:a": f"a's password hint is {MARK}hint",
           "global": "The office opens at nine"}  # fmt: skip


def _nightly_world(path: Path) -> None:
    with kg.init_workspace(path) as ws:
        _grant_all(ws)
        for scope, text in SECRETS.items():
            for n in range(2):  # two per scope: a same-scope merge still happens
                ws.memory.store_item("a", f"{text} ({n})", importance=0.9, tags=["office", "launch"], scope=scope,
                                     store="short_term")  # fmt: skip
        ws.memory.store_item("b", f"b reads project x: {MARK}bproj", importance=0.9, tags=["office"],
                             scope="project:x")  # fmt: skip


def test_probe_nightly_all_publishes_nothing_private(tmp_path: Path) -> None:
    path = tmp_path / "ws"
    _nightly_world(path)
    result = CliRunner().invoke(cli, ["--workspace", str(path), "sync", "nightly", "--all", "--json"])
    report = json.loads(result.stdout)
    consolidate = next(s for s in report["steps"] if s["name"] == "consolidate")
    assert consolidate["status"] == "ok" and consolidate["details"]["groups"] >= 3, consolidate
    with kg.open_workspace(path) as ws:
        derived = [i for a in "ab" for i in ws.memory.list_items(a) if i.derived_from]
        assert derived and all(
            derived_scope_allowed(i.scope, [ws.memory.get(i.agent_id, u).scope for u in i.derived_from])
            for i in derived
        )
        leaks: list[str] = []
        probes = ["launch code", "password hint", f"{MARK}launch", f"{MARK}hint", "office launch", f"{MARK}bproj",
                  "Consolidated from"]  # fmt: skip
        for query in probes:
            hits: list[Any] = ws.memory.recall("c", query, mode="bm25", include_archived=True).hits
            leaks += [f"items {query!r}: {h.item.content}" for h in hits if MARK in h.item.content]
            files = fallback_recall(path, "c", query, reason="probe").hits
            leaks += [f"files {query!r}: {h.text[:80]}" for h in files if MARK in h.text]
            for level in ("daily", "weekly", "monthly", "quarterly"):
                found = search_hierarchy(path, "c", query, level=level)  # type: ignore[arg-type]
                leaks += [f"{level} {query!r}" for h in found if MARK in h.snippet]
        assert leaks == []
        # positive control: a recalls its own and the project's items, consolidated in their own scopes
        own = {h.item.scope for h in ws.memory.recall("a", f"{MARK}launch {MARK}hint", mode="bm25").hits}
        assert {"project:x", "agent:a"} <= own
