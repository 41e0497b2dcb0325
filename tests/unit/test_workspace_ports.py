"""The workspace hands out services and named ports, never its store adapter (issue 34).

``ws.ports`` holds the store's ports by role (the same objects the adapter uses: a write through one is a write
to the store), the services are built on first use and once, and the adapter is chosen by ``kg.backends``.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import kg
from kg.backends import open_store
from kg.clock import SystemClock
from kg.errors import InputError, WorkspaceError
from kg.memory.service import MemoryService
from kg.ports import StorePorts
from kg.workspace import CONFIG_FILE, ENV_EMBEDDER

ROOT = Path(__file__).resolve().parents[2]


def test_the_workspace_hands_out_ports_and_no_adapter(workspace) -> None:
    assert not hasattr(workspace, "store")
    ports = workspace.ports
    assert isinstance(ports, StorePorts)
    for internal in ("db", "close", "tokens"):  # the adapter's handle, life cycle, credentials
        assert not hasattr(ports, internal), internal
    with pytest.raises(dataclasses.FrozenInstanceError):
        ports.facts = ports.rules  # type: ignore[misc]


def test_a_write_through_a_port_is_a_write_to_the_store(workspace) -> None:
    workspace.agents.add("a")
    fact, _ = workspace.facts.assert_fact("a", "acme", "is", "firm")
    assert workspace.ports.facts.get_many([fact.uid])[fact.uid].subject == "acme"
    assert workspace.ports.outbox.counts()["pending"] == workspace.status()["store"]["outbox"]["pending"] > 0
    assert workspace.ports.stats()["facts"]["live"] == 1


def test_the_commit_notifier_calls_a_listener_after_each_commit_until_it_unsubscribes(workspace) -> None:
    heard: list[int] = []

    def listener() -> None:
        heard.append(1)

    commits = workspace.ports.commits
    commits.subscribe(listener)
    assert commits.subscribed(listener)
    workspace.agents.add("a")
    after_one = len(heard)
    assert after_one >= 1
    commits.unsubscribe(listener)
    commits.unsubscribe(listener)  # twice: nothing happens
    assert not commits.subscribed(listener)
    workspace.agents.add("b")
    assert len(heard) == after_one


def test_a_failing_listener_never_fails_the_committed_write(workspace) -> None:
    def broken() -> None:
        raise RuntimeError("listener broke")

    workspace.ports.commits.subscribe(broken)
    assert workspace.agents.add("a").agent_id == "a"
    assert [a.agent_id for a in workspace.ports.agents.list()] == ["a"]


def test_services_are_built_once_even_when_threads_ask_together(workspace) -> None:
    assert "memory" not in vars(workspace)  # nothing built at open
    barrier = threading.Barrier(8)
    seen: list[MemoryService] = []

    def ask() -> None:
        barrier.wait()
        seen.append(workspace.memory)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 8 and all(s is seen[0] for s in seen)
    assert workspace.memory.engine is workspace.recall_engine  # one engine, shared as before


def test_read_sql_reads_and_refuses_to_write(workspace) -> None:
    workspace.agents.add("a")
    assert workspace.read_sql("SELECT agent_id FROM agents").rows == [["a"]]
    with pytest.raises(InputError, match="sql"):
        workspace.read_sql("DELETE FROM agents")
    assert [a.agent_id for a in workspace.ports.agents.list()] == ["a"]


def test_an_unknown_store_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(
        WorkspaceError, match=r"store: a store adapter is not available for the 'typedb' store \(known: sqlite\)"
    ):
        open_store("typedb", tmp_path / "kg.sqlite", clock=SystemClock())
    assert not (tmp_path / "kg.sqlite").exists()


@pytest.mark.parametrize(
    ("env", "recall", "error"),
    [
        ("bogus", "", "MABOS_EMBEDDER: must be local, http or none, got 'bogus'"),
        (
            None,
            '\n[recall]\nembedder = "http"\n',
            f"{CONFIG_FILE}: recall.embedder_url: required when the embedder is http",
        ),
    ],
)
def test_a_bad_embedder_setting_still_fails_the_open(tmp_path: Path, monkeypatch, env, recall, error) -> None:
    kg.init_workspace(tmp_path / "w").close()
    if recall:
        config = tmp_path / "w" / CONFIG_FILE
        config.write_text(config.read_text(encoding="utf-8") + recall, encoding="utf-8")
    if env is None:
        monkeypatch.delenv(ENV_EMBEDDER, raising=False)
    else:
        monkeypatch.setenv(ENV_EMBEDDER, env)
    with pytest.raises(WorkspaceError) as raised:
        kg.open_workspace(tmp_path / "w")
    assert str(raised.value) == error


def test_opening_a_workspace_and_querying_facts_loads_no_recall(tmp_path: Path) -> None:
    """A fresh interpreter opens a workspace, queries facts and closes it: recall, the vector index, conversations
    and numpy are never imported (they load with the first service that needs them)."""
    kg.init_workspace(tmp_path / "w").close()
    code = (
        "import json, sys\n"
        "from kg.workspace import open_workspace\n"
        "with open_workspace(sys.argv[1]) as ws:\n"
        "    ws.agents.add('a')\n"
        "    ws.facts.assert_fact('a', 'acme', 'is', 'firm')\n"
        "    found = ws.facts.query('a')\n"
        "print(json.dumps({'found': len(found), 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "w")], capture_output=True, text=True,
                          cwd=ROOT, check=True)  # fmt: skip
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["found"] == 1
    loaded = set(report["modules"])
    assert not loaded & {"numpy", "faiss", "kg.recall.engine", "kg.recall.sidecar", "kg.memory.service",
                         "kg.conversation.service"}  # fmt: skip


def test_the_embedder_setting_is_read_when_the_workspace_opens(tmp_path: Path, monkeypatch) -> None:
    """The embedder is built on first use from the setting read at open, as when it was built at open."""
    monkeypatch.setenv(ENV_EMBEDDER, "none")
    with kg.init_workspace(tmp_path / "w") as ws:
        monkeypatch.setenv(ENV_EMBEDDER, "local")
        assert ws.embedder is None and ws.vectors is None
