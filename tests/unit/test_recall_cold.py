"""What a cold ``mabos memory recall --mode bm25 --json`` loads (issue 33: a bm25 recall within 0.5 s).

Each check runs the ``mabos`` entry point (``cli.main.main``, as the installed script does) in a fresh interpreter and
reads ``sys.modules`` after the answer, so what one test imported cannot hide another's. The broader start-up checks
(no vectors, no RDF, no files search) are in tests/unit/test_startup_imports.py.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click.testing
import pytest
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]

#: ``mabos <argv>`` through the entry point, then what it printed, its exit code and every module it imported.
_MAIN = """
import contextlib, io, json, sys
from cli.main import main
printed, EXIT = io.StringIO(), 0
with contextlib.redirect_stdout(printed):
    try:
        main(sys.argv[1:])
    except SystemExit as stop:
        EXIT = stop.code
print(json.dumps({"exit": EXIT, "printed": printed.getvalue(), "modules": sorted(sys.modules)}))
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one agent and two memories (written in this process: the checks run in fresh ones)."""
    from cli.main import cli  # noqa: PLC0415

    path = tmp_path_factory.mktemp("recall-cold") / "w"
    runner = click.testing.CliRunner()
    for args in (["init"], ["agent", "add", "a"], ["memory", "store", "--agent", "a", "Renewal terms agreed with Acme"],
                 ["memory", "store", "--agent", "a", "SSO needs SAML", "--store", "long_term"]):  # fmt: skip
        result = runner.invoke(cli, ["--workspace", str(path), *args, "--json"], env={"MABOS_EMBEDDER": "none"})
        assert result.exit_code == 0, result.output
    return path


def _recall(workspace: Path, *extra: str) -> dict[str, Any]:
    argv = ["memory", "recall", "--agent", "a", "renewal terms", "--mode", "bm25", "--json", "--workspace",
            str(workspace), *extra]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", _MAIN, *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert found["exit"] == 0, done.stderr
    return found


def test_a_bm25_recall_imports_no_logging_and_no_file_copying(workspace: Path):
    """``logging`` is imported by the first warning, ``tempfile`` and ``shutil`` (with lzma, bz2) by the first
    file the vector index writes: a recall that answers cleanly, and writes only its access counts to SQLite, makes
    neither (about 18 M instructions of a cold recall)."""
    found = _recall(workspace)
    assert json.loads(found["printed"])["hits"][0]["item"]["content"] == "Renewal terms agreed with Acme"
    assert {"logging", "tempfile", "shutil", "lzma", "bz2"} & set(found["modules"]) == set()
    # the request's token fields come from kg.conversation.window: the context budget's models are not defined
    assert "kg.conversation.window" in found["modules"] and "kg.conversation.budget" not in found["modules"]


#: The model modules a bm25 recall defines beyond a fact query's: their annotations are evaluated when the class body
#: runs (bytecode, cached with the module), not compiled from strings by pydantic in every process (PEP 563): about
#: 10 M instructions of a cold recall (docs/decisions/2026-11-29-pydantic-plugins.md has the fact query's four).
RECALL_EVALUATED_ANNOTATIONS = (
    "kg.memory.requests", "kg.memory.recall_search", "kg.recall.fusion_types", "kg.recall.decay", "kg.recall.engine",
    "kg.recall.file_hits", "cli.tools.memory",
)  # fmt: skip


@pytest.mark.parametrize("name", RECALL_EVALUATED_ANNOTATIONS)
def test_the_recall_models_hold_evaluated_annotations(name: str):
    """Each pydantic model a module defines keeps its annotations as types, not as strings to compile
    (docs/decisions/2026-11-29-recall-cold-start.md)."""
    module = importlib.import_module(name)
    models = [c for c in vars(module).values()
              if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__ == name]  # fmt: skip
    assert models
    postponed = {f"{m.__name__}.{field}" for m in models for field, a in vars(m).get("__annotations__", {}).items()
                 if isinstance(a, str)}  # fmt: skip
    assert postponed == set()


#: Value records every bm25 recall defines, as named tuples or a plain subclass: a dataclass's generated methods are
#: compiled from source in each process, 2-5 M instructions per class here (together about 14 M of a cold recall).
NOT_DATACLASSES = {"kg.recall.fusion._Branches", "kg.recall.decay.ChunkMeta", "kg.memory.access.Access",
                   "kg.recall.engine.EngineResult", "cli.commands.memory.OpenOnUse"}  # fmt: skip
_COUNT_DATACLASSES = """
import dataclasses
DEFINED = []
_process = dataclasses._process_class
def _counting(cls, *args, **kwargs):
    DEFINED.append(f"{cls.__module__}.{cls.__qualname__}")
    return _process(cls, *args, **kwargs)
dataclasses._process_class = _counting
"""


def test_a_bm25_recall_defines_its_value_records_without_dataclass_code(workspace: Path):
    argv = ["memory", "recall", "--agent", "a", "renewal terms", "--mode", "bm25", "--json", "--workspace",
            str(workspace)]  # fmt: skip
    report = _MAIN.replace('"modules": sorted(sys.modules)', '"modules": DEFINED')
    done = subprocess.run([sys.executable, "-c", _COUNT_DATACLASSES + report, *argv], capture_output=True, text=True,
                          cwd=ROOT, check=True)  # fmt: skip
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["exit"] == 0, done.stderr
    assert json.loads(found["printed"])["hits"][0]["item"]["content"] == "Renewal terms agreed with Acme"
    assert "kg.ports.store.StorePorts" in found["modules"]  # the count sees the recall's dataclasses
    assert sorted(NOT_DATACLASSES & set(found["modules"])) == []
