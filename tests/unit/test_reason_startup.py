"""A cold ``mabos reason run`` imports the engine of the method it runs, not all 32 (issue 33).

``reasoning.router.methods.ENGINE_TABLE`` maps each method id to ``module:attribute``; the router imports a
method's module when the method runs (or when its template is built), so a deductive run loads no NumPy, networkx,
nashpy, scipy, rdflib or owlrl. The table is checked against the category modules' ``ENGINES`` tables and the
``DOCS`` tables. The import checks run in fresh interpreters and read ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click.testing
import pytest

from reasoning.router import SEED, engine_kind, methods
from reasoning.router.catalogue import METHODS
from tests.unit.test_startup_imports import _MABOS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "reasoning.router.methods"
#: Libraries only some engines use: none of them is needed to prove a goal from facts and rules.
HEAVY = {"numpy", "scipy", "nashpy", "networkx", "pgmpy", "sympy", "rdflib", "owlrl", "constraint", "efficient_apriori"}
ENV = {**os.environ, "MABOS_EMBEDDER": "none"}

# ------------------------------------------------------------------------------------------------ the table


def test_the_table_names_the_engine_of_every_seed_method_and_no_other() -> None:
    assert list(methods.ENGINE_TABLE) == [m.id for m in SEED]  # the 32 methods, in catalogue order
    by_category: dict[str, Any] = {}
    for name in methods.CATEGORY_MODULES:
        module = __import__(f"{PACKAGE}.{name}", fromlist=["ENGINES"])
        assert not set(by_category) & set(module.ENGINES), name
        by_category.update(module.ENGINES)
    assert methods.engines() == by_category  # the same function objects as the category modules' tables
    for method_id, where in methods.ENGINE_TABLE.items():
        name, attr = where.split(":")
        found = methods.engine(method_id)
        assert found is not None and (found.__module__, found.__name__) == (f"{PACKAGE}.{name}", attr)
    extension = [m for m in METHODS if m not in SEED]
    assert extension and not any(methods.has_engine(m.id) or methods.engine(m.id) for m in extension)
    assert {engine_kind(m) for m in extension} == {"prompt"}
    assert all(engine_kind(m) == m.engine for m in SEED)


def test_a_methods_doc_is_read_from_its_engines_module() -> None:
    every = methods.method_docs()
    assert set(every) == set(methods.ENGINE_TABLE)
    for method_id in methods.ENGINE_TABLE:
        assert methods.method_doc(method_id) is every[method_id], method_id
    assert methods.method_doc("minimax-regret") is None  # an extension method: a prompt, no engine and no doc


# ------------------------------------------------------------------------------------------ cold processes

#: ``mabos <argv>`` in a fresh interpreter (test_startup_imports' runner), then what it printed and imported.
_REPORT = 'print(json.dumps({"exit": EXIT, "printed": printed.getvalue(), "modules": sorted(sys.modules)}))\n'
_RUN = f"import json\n{_MABOS}{_REPORT}"
_IMPORT = "import importlib, json, sys\nimportlib.import_module(sys.argv[1])\nprint(json.dumps(sorted(sys.modules)))\n"


def _fresh(code: str, *args: str) -> Any:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env=ENV,
                          check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def _reason(workspace: Path, *argv: str) -> tuple[dict[str, Any], set[str]]:
    """``mabos reason run <argv> --json`` in a fresh interpreter: its answer and the modules it imported."""
    found = _fresh(_RUN, "reason", "run", "--agent", "a", *argv, "--json", "--workspace", str(workspace))
    assert found["exit"] == 0, found["printed"]
    return json.loads(found["printed"]), set(found["modules"])


def _methods_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith(f"{PACKAGE}.")}


def _tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def _engine_imports(method_id: str) -> set[str]:
    """What importing the module of ``method_id``'s engine imports, in a fresh interpreter."""
    module = methods.ENGINE_TABLE[method_id].split(":")[0]
    return set(_fresh(_IMPORT, f"{PACKAGE}.{module}"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One agent with two facts and the README's taxable rule (written here; the checks run in fresh processes)."""
    from cli.main import cli  # noqa: PLC0415

    path = tmp_path_factory.mktemp("reason-startup") / "w"
    runner = click.testing.CliRunner()
    for args in (["init"], ["agent", "add", "a"], ["fact", "assert", "--agent", "a", "acme", "hasRevenue", "2000000"],
                 ["fact", "assert", "--agent", "a", "acme", "locatedIn", "US"],
                 ["rule", "create", "--agent", "a", "--name", "taxable", "--if", "?x hasRevenue gt 1000000",
                  "--if", "?x locatedIn US", "--then", "?x isTaxable true"]):  # fmt: skip
        result = runner.invoke(cli, ["--workspace", str(path), *args, "--json"], env={"MABOS_EMBEDDER": "none"})
        assert result.exit_code == 0, result.output
    return path


def test_a_cold_deductive_run_imports_its_engine_and_no_heavy_library(workspace: Path) -> None:
    answer, modules = _reason(workspace, "--method", "deductive", "--goal", "acme isTaxable true")
    [result] = answer["results"]
    assert (result["kind"], result["value"]["status"]) == ("computed", "proved")
    assert _tops(modules) & HEAVY == set()
    assert _methods_modules(modules) == _methods_modules(_engine_imports("deductive"))  # its module and what it imports
    unused = {f"{PACKAGE}.{name}" for name in ("games", "scm", "counterfactual", "montecarlo", "causal", "social",
                                               "probabilistic", "meta", "experience")}  # fmt: skip
    assert modules & unused == set()
    assert modules & {"reasoning.owl", "reasoning.owl_ontology", "reasoning.owl2rl"} == set()
    # nor auto-selection: the cue patterns, the similarity to the worked problems, the LLM classification
    auto = {f"reasoning.router.{name}" for name in ("cues", "textroute", "semantic", "llm_route")}
    assert modules & auto == set()


def test_a_cold_auto_run_imports_the_engines_it_runs_only(workspace: Path) -> None:
    """Auto mode ranks the methods from the catalogue's profiles (no engine import) and imports what it runs."""
    argv = ("--auto", "--uncertainty", "high", "--complexity", "complex", "--domain", "empirical", "Enter Germany?")
    answer, modules = _reason(workspace, *argv)
    ran = answer["methods"]
    assert answer["mode"] == "auto" and len(ran) == 1 and len(answer["scores"]) == 10
    assert ran == ["decision-theory"]  # the seed's profile scoring for this classification
    assert _methods_modules(modules) == _methods_modules(_engine_imports(ran[0]))
    # the rule engine loads with the methods that prove or derive (ctx.reasoner()), not with the router
    assert [m for m in modules if m.startswith(("reasoning.rules", "reasoning.service"))] == []
    assert len({methods.ENGINE_TABLE[s["method"]].split(":")[0] for s in answer["scores"]}) > 1  # more were ranked


def test_a_game_is_solved_with_nashpy_loaded_then(workspace: Path, tmp_path: Path) -> None:
    """The control: the same check sees the heavy library of a method that needs it."""
    game = {
        "players": ["row", "col"],
        "actions": [["C", "D"], ["C", "D"]],
        "payoffs": [[[3, 3], [0, 5]], [[5, 0], [1, 1]]],
    }
    inputs = tmp_path / "game.json"
    inputs.write_text(json.dumps(game), encoding="utf-8")
    answer, modules = _reason(workspace, "--method", "game-theory", "--inputs", str(inputs))
    assert answer["results"][0]["kind"] == "computed"
    assert {"nashpy", "scipy", "numpy"} <= _tops(modules)
