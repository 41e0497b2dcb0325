"""The prepared workspace the docs' commands run against, and one page's run (tests/docs/harness.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kg.workspace import open_workspace
from tests.docs.harness import EXAMPLES, ROOT, PageRun, commands, run

#: Agents the pages act as, beyond the demo's.
AGENTS = ("a", "b", "reader", "alice", "bob")
#: Scopes granted to them (the pages write there).
GRANTS = (("reader", "project:kb"),)


@pytest.fixture(scope="session")
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


@pytest.fixture
def run_page(prepared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Run every command of a page in order, in a scratch folder with the example files and a copy of the
    prepared workspace (``$MABOS_WORKSPACE`` and ``./my-workspace``)."""

    def page_run(page: Path) -> None:
        for name in ("MABOS_WORKSPACE", "MABOS_TYPEDB_ADDRESS", "MABOS_TYPEDB_DATABASE", "MABOS_DEBUG"):
            monkeypatch.delenv(name, raising=False)
        cwd = tmp_path / "cwd"
        shutil.copytree(EXAMPLES, cwd)
        # As at the repository root: the generated pages the docs commands check or rewrite (a copy).
        shutil.copytree(ROOT / "docs", cwd / "docs", ignore=shutil.ignore_patterns("console", "examples", "*.png"))
        workspace = tmp_path / "mabos-workspace"
        shutil.copytree(prepared, workspace)
        shutil.copytree(prepared, cwd / "my-workspace")
        state = PageRun(cwd=cwd, workspace=workspace, env={"MABOS_EMBEDDER": "none"})
        state.harvest(workspace / ".mabos" / "kg.sqlite")
        runner = CliRunner()
        for command in commands(page):
            run(command, state, runner)

    return page_run
