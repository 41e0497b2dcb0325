"""No module outside kg reaches a store adapter or its internals (issue 34).

import-linter forbids ``reasoning``, ``sync`` and ``cli`` to import ``kg.store`` (pyproject.toml). This test reads
the syntax trees of those packages and of ``bench`` for what an import contract cannot see: the workspace's
private store (``ws._store``), the removed public one (``ws.store``), an adapter's database handle (``.db``) and
its commit hooks (``commit_hooks``); and, for ``bench`` (not a root package of the contracts), imports of
``kg.store``. Code above kg asks the workspace for services and ports (``ws.ports.facts``, ``ws.ports.outbox``,
``ws.ports.commits`` ...) instead.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("reasoning", "sync", "cli", "bench")
#: Attributes that only exist below the ports: the workspace's private adapter, an adapter's SQLite handle and
#: the hooks the commit notifier wraps.
INTERNALS = {"_store", "db", "commit_hooks"}
#: Names a workspace goes by (``ws``, ``self.ws``, ``ctx.workspace``, ``ctx.workspace()``, ``night_ws`` ...).
WORKSPACE_NAMES = {"ws", "workspace"}
#: "path:line text" -> why it may reach below the ports. Empty: nothing outside kg does.
ALLOWED: dict[str, str] = {}


def _name_of(node: ast.expr) -> str | None:
    """The last identifier of ``ws``, ``self.ws``, ``ctx.workspace`` or ``ctx.workspace()``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_workspace(node: ast.expr) -> bool:
    name = _name_of(node)
    return name is not None and (name in WORKSPACE_NAMES or name.endswith("_ws"))


def violations(source: str, path: str = "<source>") -> list[str]:
    """Every place in ``source`` that reaches a store adapter, as ``path:line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Attribute, ast.Import, ast.ImportFrom)):
            continue
        what = None
        if isinstance(node, ast.Attribute) and node.attr in INTERNALS:
            what = f"adapter internals: .{node.attr}"
        elif isinstance(node, ast.Attribute) and node.attr == "store" and _is_workspace(node.value):
            what = "the workspace's store adapter: use ws.ports or a service"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[:2] == ["kg", "store"]:
            what = f"imports a store adapter: {node.module}"
        elif isinstance(node, ast.Import) and any(a.name.split(".")[:2] == ["kg", "store"] for a in node.names):
            what = "imports a store adapter"
        if what is not None:
            line = source.splitlines()[node.lineno - 1].strip()
            if f"{path}:{line}" not in ALLOWED:
                found.append(f"{path}:{node.lineno}: {what} ({line})")
    return found


#: The words every violation below names: an internal attribute, ``.store``, or ``kg.store`` in an import.
_WORDS = re.compile(r"\b(?:" + "|".join(sorted(INTERNALS | {"store"})) + r")\b")


def _modules() -> list[Path]:
    return sorted(p for package in CHECKED for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_outside_kg_reaches_a_store_adapter() -> None:
    modules = _modules()
    assert len(modules) > 100, "the packages were not found"
    texts = {p: p.read_text(encoding="utf-8") for p in modules}
    # Every violation names one of these words (an attribute or a module path); a module whose text has none (and is
    # ASCII: other letters may normalise to them, PEP 3131) is not parsed.
    named = [p for p, text in texts.items() if not text.isascii() or _WORDS.search(text)]
    found = [v for p in named for v in violations(texts[p], str(p.relative_to(ROOT)))]
    assert found == [], "\n".join(found)


def test_every_allowed_exception_still_exists_and_says_why() -> None:
    for where, why in ALLOWED.items():
        path, _, line = where.partition(":")
        assert line in (ROOT / path).read_text(encoding="utf-8"), f"stale allow-list entry: {where}"
        assert len(why) > 20, f"{where}: say why it may reach below the ports"


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("ws.store.db.commit_hooks.append(hook)", ".commit_hooks"),
        ("rows = self.ws.store.outbox.counts()", "the workspace's store adapter"),
        ("CaseService(ctx.workspace().store, scopes, clock, None)", "the workspace's store adapter"),
        ("tokens = night_ws._store.tokens", "._store"),
        ("from kg.store.sqlite.readonly import run_readonly", "imports a store adapter: kg.store.sqlite.readonly"),
        ("import kg.store.typedb.client", "imports a store adapter"),
        ("q = SqliteGraphQueries(backend.db)", ".db"),
    ],
)
def test_the_check_finds_each_kind_of_reach(source: str, what: str) -> None:
    found = violations(source)
    assert len(found) >= 1 and what in found[0], found


def test_the_check_leaves_ports_services_and_other_stores_alone() -> None:
    source = (
        "ws.ports.commits.subscribe(writer.notify)\n"
        "pending = ws.ports.outbox.counts()['pending']\n"
        "kind = item.store.value\n"  # a memory item's store (short_term, long_term ...), not an adapter
        "rules = self.store.rules.list(scopes=scopes)\n"  # a service's own ports
        "from kg.shared_graph import shared_client\n"
    )
    assert violations(source) == []


def test_the_import_contract_fails_when_sync_imports_an_adapter(tmp_path: Path) -> None:
    """Break the contract on purpose in a copy of the packages (the source tree is never touched)."""
    for package in ("kg", "reasoning", "sync", "cli"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    probe = tmp_path / "sync" / "contract_probe.py"
    probe.write_text('"""Breaks the contract."""\n\nimport kg.store.sqlite  # noqa: F401\n', encoding="utf-8")
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint) if lint.exists() else "lint-imports", "--no-cache"], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)}, capture_output=True, text=True,
                            timeout=600, check=False)  # fmt: skip
    assert result.returncode != 0, result.stdout
    assert "No module outside kg imports a store adapter BROKEN" in result.stdout
    assert "sync.contract_probe -> kg.store.sqlite" in result.stdout
