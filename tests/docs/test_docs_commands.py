"""Every shell block of README.md and docs/*.md runs as written (issue 35.2); see tests/docs/harness.py for how.

One test per page, in page order; each page gets its own scratch folder and its own copy of the prepared
workspace, so the pages do not depend on each other. Commands run in-process; the embedder is off (BM25 recall)
except for the ``index`` commands, which run the shipped model (see ``EMBEDDING_GROUPS`` in the harness).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.workspace import open_workspace
from tests.docs.harness import EXAMPLES, ROOT, PageRun, commands, run

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Agents the pages act as, beyond the demo's.
AGENTS = ("a", "b", "reader", "alice", "bob")
#: Scopes granted to them (the pages write there).
GRANTS = (("reader", "project:kb"),)


def _pages_with_commands() -> list[Path]:
    return [page for page in PAGES if commands(page)]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo's workspace plus the agents the pages use, built once per test process."""
    from cli.demo import build_demo  # noqa: PLC0415

    path = tmp_path_factory.mktemp("docs") / "prepared"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MABOS_EMBEDDER", "none")
        build_demo(path)
        with open_workspace(path) as ws:
            for agent in AGENTS:
                ws.agents.add(agent)
            for agent, scope in GRANTS:
                ws.scopes.grant(agent, scope, granted_by="admin")
    yield path


def test_every_page_with_commands_is_found() -> None:
    names = {page.name for page in _pages_with_commands()}
    assert {"README.md", "cli.md", "degradation.md"} <= names


@pytest.mark.parametrize("page", _pages_with_commands(), ids=lambda p: p.name)
def test_the_commands_of_the_page_run(page: Path, prepared: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    for name in ("MABOS_WORKSPACE", "MABOS_TYPEDB_ADDRESS", "MABOS_TYPEDB_DATABASE", "MABOS_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    cwd = tmp_path / "cwd"
    shutil.copytree(EXAMPLES, cwd)
    workspace = tmp_path / "mabos-workspace"
    shutil.copytree(prepared, workspace)
    shutil.copytree(prepared, cwd / "my-workspace")
    state = PageRun(cwd=cwd, workspace=workspace, env={"MABOS_EMBEDDER": "none"})
    state.harvest(workspace / ".mabos" / "kg.sqlite")
    runner = CliRunner()
    for command in commands(page):
        run(command, state, runner)
