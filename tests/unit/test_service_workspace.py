"""Workspaces: init is idempotent, open needs one, agents get their directory."""

from __future__ import annotations

from datetime import timedelta

import pytest

import kg
from kg.errors import WorkspaceError
from kg.workspace import CONFIG_FILE, DB_FILE, ENV_WORKSPACE, STATE_DIR, default_path, workspace_name


def test_init_creates_the_layout(workspace):
    root = workspace.path
    assert (root / CONFIG_FILE).is_file()
    assert (root / STATE_DIR / DB_FILE).is_file()
    assert (root / "agents").is_dir()
    assert workspace.config.name == "ws" and workspace.config.store == "sqlite"
    assert workspace.config.created_at == "2024-05-01T12:00:00.000000Z"  # from the injected clock


def test_init_is_idempotent(workspace, clock, snapshot):
    workspace.agents.add("a")
    workspace.facts.assert_fact("a", "acme", "is", "firm")
    config = (workspace.path / CONFIG_FILE).read_bytes()
    before = snapshot(workspace)
    workspace.close()

    clock.advance(timedelta(days=1))  # a later init must not rewrite created_at
    with kg.init_workspace(workspace.path, clock=clock) as again:
        assert (again.path / CONFIG_FILE).read_bytes() == config
        assert [a.agent_id for a in again.agents.list()] == ["a"]
        assert [f.subject for f in again.facts.query("a")] == ["acme"]
        assert snapshot(again) == before


def test_open_reads_an_existing_workspace(workspace, clock):
    workspace.agents.add("a")
    workspace.close()

    with kg.open_workspace(workspace.path, clock=clock) as ws:
        assert ws.agents.get("a").agent_id == "a"
        assert (ws.path / "agents" / "a" / "memory").is_dir()


def test_open_without_a_workspace_says_how_to_make_one(tmp_path):
    missing = tmp_path / "nowhere"

    with pytest.raises(WorkspaceError) as err:
        kg.open_workspace(missing)

    assert str(missing) in str(err.value)
    assert "mabos init" in str(err.value)
    assert not missing.exists()  # opening never creates


def test_init_on_a_file_is_refused(tmp_path):
    target = tmp_path / "file"
    target.write_text("not a directory")

    with pytest.raises(WorkspaceError, match="not a directory"):
        kg.init_workspace(target)
    assert target.read_text() == "not a directory"


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("name = [", "not valid TOML"),
        ('name = "Bad Name"', "name"),
        ('name = "ok"\nstore = "oracle"', "store"),
        ('name = "ok"\nsurprise = 1', "surprise"),
    ],
)
def test_a_broken_config_is_a_workspace_error(tmp_path, content, match):
    (tmp_path / CONFIG_FILE).write_text(content)

    with pytest.raises(WorkspaceError, match=match):
        kg.open_workspace(tmp_path)


def test_adding_an_agent_makes_its_directory(workspace):
    workspace.agents.add("sales-agent", name="Sales")
    assert (workspace.path / "agents" / "sales-agent" / "memory").is_dir()
    assert workspace.agents.get("sales-agent").name == "Sales"


def test_default_path_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_WORKSPACE, str(tmp_path / "from-env"))
    assert default_path() == tmp_path / "from-env"
    monkeypatch.delenv(ENV_WORKSPACE)
    assert str(default_path()) == "mabos-workspace"


def test_workspace_names_are_valid_agent_like_ids(tmp_path):
    assert workspace_name(tmp_path / "My Space!") == "my-space"
    assert workspace_name(tmp_path / "___") == "workspace"
    assert len(workspace_name(tmp_path / ("x" * 100))) == 64


def test_status_counts(workspace):
    workspace.agents.add("a")
    workspace.facts.assert_fact("a", "acme", "is", "firm")
    status = workspace.status()
    assert status["store"]["agents"] == 1
    assert status["store"]["facts"]["live"] == 1
    assert status["store"]["outbox"]["pending"] == 2
