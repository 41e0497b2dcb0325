"""The lazy faces of issue 33 say the same as the eager imports they replace.

``kg.models`` and ``kg.ports`` load each name on first use (:mod:`kg.faces`), the SQLite store builds each port
on first use (``kg.store.sqlite.PORTS``), ``StorePorts`` reads each port when asked, and ``kg.text.words``
compiles its CJK patterns on first use. Each table is written beside the imports the type checker reads; these
tests check that the two agree, so a name added to one and not the other fails here (what a command imports is
pinned in tests/unit/test_startup_imports.py).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest

import kg.models
import kg.ports
import kg.store.sqlite
from kg.ports import StorePorts
from kg.store.sqlite import PORTS, SqliteGraphStore

ROOT = Path(__file__).resolve().parents[2]


def _type_checking_imports(module: ModuleType) -> dict[str, str]:
    """Name -> module of the ``from x import y`` statements under ``if TYPE_CHECKING:`` in ``module``'s source."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    found.update({alias.name: str(statement.module) for alias in statement.names})
    return found


@pytest.mark.parametrize("face", [kg.models, kg.ports], ids=lambda m: m.__name__)
def test_a_face_exports_what_the_type_checker_imports_and_nothing_else(face: ModuleType) -> None:
    table = {name: module for module, names in face._SOURCES.items() for name in names}
    assert table == _type_checking_imports(face)
    assert sorted(table) == sorted(face.__all__)
    assert face.__all__ == sorted(face.__all__, key=lambda n: (not n.isupper(), n))  # as ruff sorts __all__


@pytest.mark.parametrize("face", [kg.models, kg.ports], ids=lambda m: m.__name__)
def test_every_exported_name_is_the_object_its_module_defines(face: ModuleType) -> None:
    for module, names in face._SOURCES.items():
        for name in names:
            assert getattr(face, name) is getattr(importlib.import_module(module), name), name
    assert set(face.__all__) <= set(dir(face))


def test_an_unknown_name_is_an_attribute_error_and_from_import_says_so() -> None:
    with pytest.raises(AttributeError, match=re.escape("module 'kg.models' has no attribute 'Nonesuch'")):
        kg.models.Nonesuch  # noqa: B018 - the attribute access is the test
    with pytest.raises(ImportError, match=re.escape("cannot import name 'Nonesuch' from 'kg.ports'")):
        from kg.ports import Nonesuch  # type: ignore[attr-defined]  # noqa: F401, PLC0415


def test_importing_one_name_imports_its_module_only() -> None:
    code = (
        "import sys\n"
        "from kg.models import Fact\n"
        "from kg.ports import FactStore\n"
        "print(sorted(m for m in sys.modules if m.startswith(('kg.models.', 'kg.ports.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    loaded = set(ast.literal_eval(done.stdout.strip()))
    assert {"kg.models.facts", "kg.ports.facts"} <= loaded
    assert not loaded & {"kg.models.bdi", "kg.models.conversation", "kg.models.reasoning", "kg.ports.conversation",
                         "kg.ports.graph", "kg.ports.store"}  # fmt: skip


# ------------------------------------------------------------------------------------------ the SQLite ports


def _annotations_of_sqlite_store() -> dict[str, str]:
    """Port name -> adapter class name, from the ``if TYPE_CHECKING:`` annotations of ``SqliteGraphStore``."""
    tree = ast.parse(Path(str(kg.store.sqlite.__file__)).read_text(encoding="utf-8"))
    store = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SqliteGraphStore")
    block = next(n for n in store.body if isinstance(n, ast.If))
    return {a.target.id: ast.unparse(a.annotation) for a in block.body if isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)}  # fmt: skip


def test_the_port_table_builds_the_adapter_the_type_checker_is_told() -> None:
    annotated = _annotations_of_sqlite_store()
    assert {name: where.split(":")[1] for name, where in PORTS.items()} == annotated
    imported = _type_checking_imports(kg.store.sqlite)
    assert {where for where in PORTS.values()} == {f"{imported[c]}:{c}" for c in annotated.values()}


def test_every_port_is_built_on_first_use_once(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "kg.sqlite")
    try:
        assert not set(PORTS) & set(vars(store))  # nothing built by opening
        for name, where in PORTS.items():
            module, cls = where.split(":")
            port = getattr(store, name)
            assert type(port) is getattr(importlib.import_module(module), cls)
            assert getattr(store, name) is port
        with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
            store.nonesuch  # type: ignore[attr-defined]  # noqa: B018
    finally:
        store.close()


def test_threads_asking_for_a_port_together_get_one_adapter(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "kg.sqlite")
    start, got = threading.Barrier(8), []

    def ask() -> None:
        start.wait()
        got.append(store.commits)  # the commit notifier keeps its listeners: two of them would lose some

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()
    assert len(got) == 8 and len({id(port) for port in got}) == 1


def test_store_ports_read_each_port_from_the_adapter_when_asked(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "kg.sqlite")
    try:
        ports = StorePorts.of(store)
        assert "conversations" not in vars(store)
        assert ports.conversations is store.conversations
        assert ports.stats()["backend"] == "sqlite"
        names = {n for n, v in vars(StorePorts).items() if type(v).__name__ == "_Port"}
        assert names == set(PORTS) - {"tokens"} | {"stats"}  # the adapter's credentials are not a port
        with pytest.raises(dataclasses.FrozenInstanceError):
            ports.facts = ports.rules  # type: ignore[misc]
    finally:
        store.close()


# ------------------------------------------------------------------------------------------ the CJK patterns


def test_the_lazy_patterns_compile_on_first_use_to_what_the_names_say() -> None:
    code = (
        "import sys\n"
        "import kg.text.words as w\n"
        "before = [n for n in w._LAZY_PATTERNS if n in vars(w)]\n"
        "from kg.text.words import TOKEN_RE\n"
        "print([before, [n for n in w._LAZY_PATTERNS if n in vars(w)]])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert ast.literal_eval(done.stdout.strip()) == [[], ["TOKEN_RE"]]
    words = importlib.import_module("kg.text.words")
    for name, pattern in words._LAZY_PATTERNS.items():
        assert getattr(words, name) == re.compile(pattern)
    assert words.TOKEN_RE.findall("v2_beta 東京") == ["v2_beta", "東", "京"]
    assert set(words._LAZY_PATTERNS) <= set(words.__all__)
