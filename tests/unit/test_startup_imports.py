"""What a bare start imports (issue 33): lazy package faces, a lazy command group and a lazy tool registry.

Each check runs in a fresh interpreter and reads ``sys.modules``, so what one test imported cannot hide another's.
The tables that make the laziness possible (``cli.commands.COMMAND_TABLE``, ``cli.tools.tool_table.TOOL_TABLE``)
are checked against the commands and tools themselves: names, order, help and handlers.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import click.testing
import pytest

from tests.forked import FORK_EACH

ROOT = Path(__file__).resolve().parents[2]
#: Never imported by a bare start: numeric, RDF, the web stack, the embedding stacks.
HEAVY = {"numpy", "faiss", "rdflib", "torch", "starlette", "sentence_transformers", "transformers", "scipy", "owlrl"}

_REPORT = """
import json, sys
std = sys.stdlib_module_names
print(json.dumps({"third_party": sorted({m.split(".")[0] for m in sys.modules} - set(std) - {"__main__"}),
                  "std": sorted({m.split(".")[0] for m in sys.modules} & set(std)),
                  "ours": sorted(m for m in sys.modules if m.split(".")[0] in ("kg", "cli", "reasoning", "sync"))}))
"""


def _imports(code: str, *args: str) -> dict[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", code + _REPORT, *args], capture_output=True, text=True, cwd=ROOT,
                          check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _third_party(found: dict[str, list[str]]) -> set[str]:
    ours = {"kg", "cli", "reasoning", "sync"}
    return {m for m in found["third_party"] if not m.startswith("_") and m not in ours}


def test_import_kg_errors_imports_the_errors_only():
    found = _imports("import kg.errors")
    assert found["ours"] == ["kg", "kg.errors"]
    assert _third_party(found) == set()


def test_kg_still_exports_its_names_on_first_use():
    found = _imports("import kg\nassert kg.Workspace.__name__ == 'Workspace' and callable(kg.open_workspace)")
    assert "kg.workspace" in found["ours"]


def test_mabos_help_imports_click_and_the_command_table_only():
    code = (
        "import contextlib, io, sys\n"
        "from cli.main import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    cli.main(args=['--help'], prog_name='mabos')\n"
    )
    found = _imports(code)
    assert found["ours"] == ["cli", "cli.commands", "cli.main", "cli.pydantic_plugins", "kg", "kg.errors"]
    assert _third_party(found) == {"click"}


#: Runs ``mabos <argv>`` in the fresh interpreter, keeping its exit code and what it printed for the report.
_MABOS = """
import contextlib, io, sys
from cli.main import cli
printed, EXIT = io.StringIO(), 0
with contextlib.redirect_stdout(printed):
    try:
        cli.main(args=sys.argv[1:], prog_name='mabos')
    except SystemExit as stop:
        EXIT = stop.code
"""
_MABOS_REPORT = """
print(json.dumps({"exit": EXIT, "printed": printed.getvalue()}))
"""
#: What a query answered as JSON must not import: the heavy stacks, the RDF parsers, the embedding runtime, YAML,
#: and rich (human output only: cli/render.py makes the renderings on first use).
JSON_HEAVY = HEAVY | {"rich", "pyoxigraph", "tokenizers", "threadpoolctl", "yaml"}
#: What neither a fact query nor a recall uses: the BDI, reasoning and ontology models and the adapters and services
#: over them (kg.models, kg.ports and the store's ports load on first use: tests/unit/test_lazy_faces.py).
NOT_FOR_A_QUERY = ("kg.models.bdi", "kg.models.reasoning", "kg.models.ontology", "kg.bdi", "kg.store.sqlite.graph",
                   "kg.store.sqlite.reasoning", "kg.store.sqlite.ontology", "kg.store.sqlite.conversation")  # fmt: skip


def _mabos(*argv: str) -> tuple[dict[str, list[str]], str]:
    """What ``mabos <argv>`` imports, and what it printed (the command must succeed)."""
    done = subprocess.run([sys.executable, "-c", _MABOS + _REPORT + _MABOS_REPORT, *argv], capture_output=True,
                          text=True, cwd=ROOT, check=True)  # fmt: skip
    *_, imports, outcome = done.stdout.splitlines()
    result = json.loads(outcome)
    assert result["exit"] == 0, done.stderr
    return json.loads(imports), str(result["printed"])


@pytest.fixture(scope="module")
def answering(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one agent, one fact and one memory (written in this process: the checks run in fresh ones)."""
    from cli.main import cli  # noqa: PLC0415

    path = tmp_path_factory.mktemp("startup") / "w"
    runner = click.testing.CliRunner()
    for args in (["init"], ["agent", "add", "a"], ["fact", "assert", "--agent", "a", "acme", "hasRevenue", "5"],
                 ["memory", "store", "--agent", "a", "Renewal terms agreed with Acme"]):  # fmt: skip
        result = runner.invoke(cli, ["--workspace", str(path), *args, "--json"], env={"MABOS_EMBEDDER": "none"})
        assert result.exit_code == 0, result.output
    return path


#: After the command, each report runs in a child forked from the process: it sees the state the command left, as a
#: process of its own running the command and that report would, and the command (the costly part) runs once for all.
_FORKED_REPORTS = (
    FORK_EACH
    + """
import threading
assert threading.active_count() == 1, "a thread outlived the command: a forked report could inherit its locks"


def answer(report):
    tag, code = report
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(code, {"__name__": "__main__"})
    print(json.dumps([tag, out.getvalue().splitlines()[-1]]))


fork_each(REPORTS, answer)
"""
)
#: The queries several checks read, each as ``mabos`` runs it (``--workspace`` added).
QUERIES = {
    "fact_query": ["fact", "query", "--agent", "a", "--subject", "acme", "--json"],
    "bm25_recall": ["memory", "recall", "--agent", "a", "renewal terms", "--mode", "bm25", "--json"],
}
_CJK_REPORT = "import kg.text.words as w\nprint([n for n in w._LAZY_PATTERNS if n in vars(w)])\n"


class Answered:
    """One run of a query: what it printed, and the last line each report printed after it."""

    def __init__(self, argv: list[str], reports: dict[str, str]) -> None:
        code = _MABOS + "import json\nREPORTS = " + repr(list(reports.items())) + _FORKED_REPORTS + _MABOS_REPORT
        done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT,
                              check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr  # a report that raised: its traceback
        *lines, outcome = done.stdout.splitlines()
        result = json.loads(outcome)
        assert result["exit"] == 0, done.stderr
        self.printed = str(result["printed"])
        self.reports: dict[str, str] = dict(json.loads(line) for line in lines[-len(reports) :])
        assert list(self.reports) == list(reports), done.stderr


@pytest.fixture(scope="module")
def asked(answering: Path) -> Any:
    """``asked(query)``: the query of :data:`QUERIES` run once per module with every report these checks read."""
    runs: dict[str, Answered] = {}

    def ask(query: str) -> Answered:
        if query not in runs:
            reports = {"imports": _REPORT, "defaults": _DEFAULTS_REPORT, "dataclasses": _DATACLASSES_REPORT}
            if query == "bm25_recall":
                reports |= {"cjk": _CJK_REPORT, "recall": _RECALL_REPORT}
            runs[query] = Answered([*QUERIES[query], "--workspace", str(answering)], reports)
        return runs[query]

    return ask


def test_a_fact_query_as_json_imports_only_what_it_answers_with(asked: Any):
    answered = asked("fact_query")
    found, printed = json.loads(answered.reports["imports"]), answered.printed
    assert [(f["subject"], f["predicate"], f["object"]) for f in json.loads(printed)] == [("acme", "hasRevenue", "5")]
    assert _third_party(found) & JSON_HEAVY == set()
    tool_modules = [m for m in found["ours"] if m.startswith("cli.tools.") and m not in {
        "cli.tools.registry", "cli.tools.tool_table", "cli.tools.overrides"}]  # fmt: skip
    assert tool_modules == ["cli.tools.facts"]  # the one module the command runs tools of
    unused = ("kg.recall.vectors", "kg.recall.minilm", "kg.conversation.service", "kg.rdf.parse", "cli.render")
    assert [m for m in found["ours"] if m.startswith(unused)] == []  # nor the renderings' module
    # nor the conversation models, the memory adapter (the open's daily-log check found nothing to append), the
    # CJK patterns or filelock (no lock taken)
    also_unused = ("kg.models.conversation", "kg.store.sqlite.memory", "kg.text", "kg.memory.service",
                   "kg.recall.fusion", "kg.facts_fast", "kg.facts_results", "kg.facts_import_requests",
                   "kg.facts_write_requests", "kg.ports.facts", "kg.store.sqlite.facts_prepare")  # fmt: skip
    assert [m for m in found["ours"] if m.startswith((*NOT_FOR_A_QUERY, *also_unused))] == []
    assert "filelock" not in found["third_party"]
    assert "logging" not in found["std"]  # imported where a warning is logged (workspace, store, write-through)
    # none configured: the session sees it before importing write-through
    typedb = ("kg.shared_graph", "kg.store.typedb", "sync.shared_graph", "sync.write_through", "sync.breaker")
    assert [m for m in found["ours"] if m.startswith(typedb)] == []


def test_a_bm25_recall_as_json_imports_no_vectors_rdf_web_or_rich(asked: Any):
    answered = asked("bm25_recall")
    found, printed = json.loads(answered.reports["imports"]), answered.printed
    result = json.loads(printed)
    assert result["mode"] == "bm25"
    assert [hit["item"]["content"] for hit in result["hits"]] == ["Renewal terms agreed with Acme"]
    assert _third_party(found) & JSON_HEAVY == set()
    assert [m for m in found["ours"] if m.startswith((*NOT_FOR_A_QUERY, "kg.facts"))] == []
    assert "filelock" not in found["third_party"]  # the vector index's write lock: a read takes none


def test_an_english_bm25_recall_compiles_no_cjk_pattern(asked: Any):
    """The CJK patterns take ~10 ms each to compile (kg.text.words makes them on first use): English text never
    needs them, neither in the query's terms nor in the modules a recall imports."""
    assert asked("bm25_recall").reports["cjk"] == "[]"


#: What a recall of memory items by BM25 leaves unloaded (issue 33, third pass): the Markdown index and the file
#: fallback, the vector index's class and candidate search, the time hierarchy, checkpoints, consolidation and the
#: other upkeep tools, the tier rules, the conversation requests and models, and the fact adapter and models; nor a
#: thread pool or an LRU cache.
NOT_FOR_A_BM25_RECALL = {
    "kg.recall.markdown_index", "kg.recall.chunking", "kg.recall.fallback", "kg.recall.file_search",
    "kg.recall.vectors", "kg.recall.vector_branch", "kg.memory.hierarchy", "kg.memory.hierarchy_logs",
    "kg.memory.hierarchy_search", "kg.memory.checkpoints", "kg.memory.tiers", "kg.conversation.requests",
    "kg.models.conversation", "kg.store.sqlite.facts", "kg.models.facts", "kg.ports.facts", "concurrent.futures",
    "cachetools", "kg.memory.hierarchy_models", "kg.memory.admin_requests", "kg.memory.consolidation",
    "cli.tools.memory_admin", "cli.commands.memory_consolidate",
}  # fmt: skip
_RECALL_REPORT = """
import json, sys
from kg.memory.recall_search import RecallHit
from kg.recall.decay import DecaySettings
print(json.dumps({"modules": sorted(sys.modules),
                  "built": [m.__name__ for m in (RecallHit, DecaySettings) if m.__pydantic_complete__]}))
"""


def test_a_bm25_recall_loads_neither_the_files_search_nor_the_vector_index_nor_other_features(asked: Any):
    """A recall by BM25 imports what its answer is made with: not what the Markdown files' search, the vector
    search, the memory's upkeep tools (consolidation, checkpoints, the hierarchy), the conversation or the fact
    features are made with, and builds no validator for its hits or the default decay (constructed from valid
    values: tests/unit/test_recall_reads.py)."""
    answered = asked("bm25_recall")
    assert [h["item"]["content"] for h in json.loads(answered.printed)["hits"]] == ["Renewal terms agreed with Acme"]
    found = json.loads(answered.reports["recall"])
    assert sorted(NOT_FOR_A_BM25_RECALL & set(found["modules"])) == []
    assert found["built"] == []


def test_human_output_renders_with_rich(answering: Path):
    found, printed = _mabos("fact", "query", "--agent", "a", "--workspace", str(answering))
    assert "rich" in found["third_party"]
    assert printed.startswith("Facts\n") and "acme" in printed and "1 fact" in printed


# ------------------------------------------------------------------------------------------ the command table


def test_the_command_table_lists_every_command_in_order_with_its_help():
    from cli.commands import COMMAND_TABLE, load_command  # noqa: PLC0415

    for name in COMMAND_TABLE:
        command = load_command(name)
        stand_in = click.Command(name, help=COMMAND_TABLE[name][1])
        assert not command.hidden and not command.deprecated and not command.short_help, name
        for limit in (20, 45, 60, 120, 400):  # what `mabos --help` prints at any terminal width
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)
        assert COMMAND_TABLE[name][0].startswith(command.callback.__module__ if command.callback else "cli.commands.")


def test_every_command_module_is_in_the_table():
    import pkgutil  # noqa: PLC0415

    import cli.commands  # noqa: PLC0415
    from cli.commands import COMMAND_TABLE  # noqa: PLC0415

    listed = {where.split(":")[0] for where, _ in COMMAND_TABLE.values()}
    tops = set()
    for info in pkgutil.iter_modules(cli.commands.__path__):
        module = __import__(f"cli.commands.{info.name}", fromlist=["_"])
        # a module defining a top-level group: one not attached under another group of the package
        tops |= {f"cli.commands.{info.name}" for value in vars(module).values()
                 if isinstance(value, click.Group) and value.callback and value.callback.__module__ == module.__name__
                 and value.name in COMMAND_TABLE}  # fmt: skip
    assert tops <= listed


def test_mabos_help_is_the_same_as_with_every_command_imported():
    from cli.commands import COMMAND_TABLE, load_command  # noqa: PLC0415
    from cli.main import MabosGroup, cli  # noqa: PLC0415

    lazy = click.testing.CliRunner().invoke(cli, ["--help"], prog_name="mabos", terminal_width=100).output
    eager = MabosGroup("mabos", help=cli.help, params=cli.params, context_settings=cli.context_settings)
    for name in COMMAND_TABLE:
        eager.add_command(load_command(name))
    context = click.Context(eager, info_name="mabos", terminal_width=100, **eager.context_settings)
    assert lazy == eager.get_help(context) + "\n"


def test_the_root_workspace_option_matches_the_commands_one():
    from cli.common import WORKSPACE_KEY, workspace_option  # noqa: PLC0415
    from cli.main import WORKSPACE_KEY as ROOT_KEY  # noqa: PLC0415
    from cli.main import cli  # noqa: PLC0415

    ours = next(p for p in cli.params if p.name == "workspace")
    theirs = click.command("x")(workspace_option(lambda: None)).params[0]
    assert ROOT_KEY == WORKSPACE_KEY
    assert ours.to_info_dict() == theirs.to_info_dict()


def test_a_root_workspace_reaches_the_command(tmp_path: Path):
    from cli.main import cli  # noqa: PLC0415

    result = click.testing.CliRunner().invoke(cli, ["--workspace", str(tmp_path / "w"), "init", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["workspace"] == str(tmp_path / "w")


def test_an_unknown_command_is_a_usage_error():
    from cli.main import cli  # noqa: PLC0415

    result = click.testing.CliRunner().invoke(cli, ["nosuch"])
    assert result.exit_code == 2 and "No such command 'nosuch'" in result.output


_LAZY_GROUP = """
import click
from cli.commands import LazyGroup

@click.group("g", cls=LazyGroup, lazy={"admit": "cli.commands.memory_admit:admit",
                                       "checkpoint": "cli.commands.memory_files:checkpoint"})
def g():
    "A group."

@g.command("own")
def own():
    "Its own command."
"""


def test_a_lazy_group_imports_the_invoked_subcommand_only():
    code = _LAZY_GROUP + (
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    g.main(args=['admit', '--help'], prog_name='g')\n"
    )
    found = _imports(code)
    assert "cli.commands.memory_admit" in found["ours"] and "cli.commands.memory_files" not in found["ours"]


def test_a_lazy_group_lists_every_subcommand_sorted_as_click_does():
    namespace: dict[str, Any] = {}
    exec(_LAZY_GROUP, namespace)  # noqa: S102 - the group defined above, in this process
    group = namespace["g"]
    help_text = click.testing.CliRunner().invoke(group, ["--help"], terminal_width=100).output
    listed = [line.split()[0] for line in help_text.split("Commands:\n")[1].splitlines() if line.strip()]
    assert listed == ["admit", "checkpoint", "own"] == group.list_commands(click.Context(group))
    assert group.get_command(click.Context(group), "checkpoint").name == "checkpoint"
    assert group.get_command(click.Context(group), "nosuch") is None


# ------------------------------------------------------------------------------------------ the tool table


def test_the_tool_table_is_what_importing_every_tool_module_registers():
    code = (
        "import importlib, json, pkgutil\n"
        "import cli.tools as package\n"
        "from cli.tools.registry import REGISTRY\n"
        "from cli.tools.tool_table import INFRASTRUCTURE\n"
        "for m in sorted(i.name for i in pkgutil.iter_modules(package.__path__)):\n"
        "    if m not in INFRASTRUCTURE: importlib.import_module('cli.tools.' + m)\n"
        "tools = REGISTRY._tools.items()\n"
        "print(json.dumps([[n, t.handler.__module__ + ':' + t.handler.__name__] for n, t in tools]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    from cli.tools.tool_table import TOOL_TABLE  # noqa: PLC0415

    registered = json.loads(done.stdout)
    missing = [f'    "{n}": "{where}",' for n, where in registered if TOOL_TABLE.get(n) != where]
    assert not missing, "add to cli/tools/tool_table.py TOOL_TABLE:\n" + "\n".join(missing)
    assert [n for n, _ in registered] == list(TOOL_TABLE)  # the listing order of `mabos tools list` and MCP


def test_calling_one_tool_imports_its_module_only():
    code = "from cli.tools.registry import get\nassert get('fact_query').name == 'fact_query'\n"
    found = _imports(code)
    infrastructure = {"cli.tools.registry", "cli.tools.tool_table", "cli.tools.overrides"}
    assert [m for m in found["ours"] if m.startswith("cli.tools.") and m not in infrastructure] == ["cli.tools.facts"]


@pytest.mark.parametrize("probe", ["assert 'nosuch' not in REGISTRY", "assert REGISTRY.get('nosuch') is None"])
def test_an_unknown_tool_name_is_looked_for_in_every_module(probe: str):
    found = _imports(f"from cli.tools.registry import REGISTRY\n{probe}\n")
    assert "cli.tools.memory" in found["ours"]  # not in the table: every module was searched before saying no


# ------------------------------------------------------------------------------------------ models built on first use

_BUILT = """
import json, sys
from kg.workspace import open_workspace
ws = open_workspace(sys.argv[1])
import kg.config as config, kg.workspace as workspace
models = [getattr(config, n) for n in config.__all__ if n.endswith("Config")] + [workspace.Housekeeping]
print(json.dumps({"built": sorted(m.__name__ for m in models if m.__pydantic_complete__),
                  "fusion": "kg.recall.fusion_types" in sys.modules, "opened": ws.opened.model_dump()}))
"""


@pytest.mark.parametrize("setting", ["", "[recall]\ndecay = false\n"], ids=["as-init-wrote-it", "a-setting"])
def test_opening_a_workspace_builds_the_settings_model_only(answering: Path, tmp_path: Path, setting: str):
    """Each pydantic model a command builds costs it about as much as importing a module: opening a workspace
    whose ``mabos.toml`` is as ``mabos init`` wrote it builds no settings model (kg.config.plain_config); one with a
    setting is validated with one model's validator (a table the file leaves out is validated as an empty one, not
    through its own model's default factory). Either reports the housekeeping without building its model, and
    imports no recall module for the fusion weights' defaults."""
    path = answering
    if setting:
        path = tmp_path / "w"
        shutil.copytree(answering, path)
        (path / "mabos.toml").write_text((answering / "mabos.toml").read_text() + setting, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", _BUILT, str(path)], capture_output=True, text=True, cwd=ROOT,
                          check=True)  # fmt: skip
    found = json.loads(done.stdout.splitlines()[-1])
    # Housekeeping is built by model_dump here, after the check
    assert found["built"] == (["WorkspaceConfig"] if setting else [])
    assert found["fusion"] is False
    assert found["opened"] == {"removed_temp_files": [], "daily_log_entries_appended": [], "errors": []}


def test_a_settings_file_without_tables_reads_as_the_defaults():
    from kg.config import SECTIONS, WorkspaceConfig  # noqa: PLC0415
    from kg.errors import InputError  # noqa: PLC0415
    from kg.models import parse  # noqa: PLC0415

    bare = WorkspaceConfig.model_validate({"name": "w"})
    assert bare == WorkspaceConfig.model_validate({"name": "w", **{section: {} for section in SECTIONS}})
    assert set(SECTIONS) == set(WorkspaceConfig.model_fields) - {"name", "store", "created_at"}
    for section in SECTIONS:  # each table still has its model's defaults and rules
        factory = WorkspaceConfig.model_fields[section].default_factory
        assert factory is not None and getattr(bare, section) == factory(), section
    with pytest.raises(InputError) as refused:
        parse(WorkspaceConfig, {"name": "w", "recall": {"vector_weight": 2}})
    assert refused.value.field == "recall.vector_weight"


def test_the_settings_fusion_weights_are_the_engines_defaults():
    from kg.config import DEFAULT_BM25_WEIGHT, DEFAULT_VECTOR_WEIGHT, RecallConfig  # noqa: PLC0415
    from kg.recall.fusion_types import FusionSettings  # noqa: PLC0415

    engine = FusionSettings.model_fields
    weights = (DEFAULT_VECTOR_WEIGHT, DEFAULT_BM25_WEIGHT)
    assert weights == (engine["vector_weight"].default, engine["bm25_weight"].default)
    assert weights == (RecallConfig().vector_weight, RecallConfig().bm25_weight)


@pytest.mark.parametrize(
    "recall", [{}, {"inline_index_limit": 7, "decay": False, "vector_weight": 0.5, "bm25_weight": 0.25}]
)
def test_the_engine_settings_of_a_config_are_the_validated_ones(recall: dict[str, Any]):
    """``recall_settings`` constructs the engine's settings from values validated already (no validator built):
    they equal what validating the same values gives."""
    from kg.config import RecallConfig  # noqa: PLC0415
    from kg.recall.decay import DecaySettings  # noqa: PLC0415
    from kg.recall.engine import RecallSettings  # noqa: PLC0415
    from kg.recall.fusion import DEFAULT_DECAY  # noqa: PLC0415
    from kg.recall.fusion_types import FusionSettings  # noqa: PLC0415
    from kg.workspace import recall_settings  # noqa: PLC0415

    made = recall_settings(RecallConfig.model_validate(recall))
    expected = {"fusion": FusionSettings(vector_weight=recall.get("vector_weight", 0.3),
                                         bm25_weight=recall.get("bm25_weight", 0.7)),
                "decay": DEFAULT_DECAY if recall.get("decay", True) else DecaySettings(boost_min=1.0)}  # fmt: skip
    if "inline_index_limit" in recall:
        expected["inline_index_limit"] = recall["inline_index_limit"]
    assert made == RecallSettings.model_validate(expected)
    assert made.model_dump() == RecallSettings.model_validate(expected).model_dump()


_FROZEN = """
import gc, json, sys
from cli.main import cli, main
import click.testing
if sys.argv[3] == "off":
    gc.disable()
loading = []  # collections once the command's module is being imported and before anything is frozen
gc.callbacks.append(lambda phase, info: phase == "start" and "cli.commands.facts" in sys.modules
                    and gc.get_freeze_count() == 0 and loading.append(info["generation"]))
argv = ["--workspace", sys.argv[2], "fact", "query", "--agent", "a", "--json"]
if sys.argv[1] == "main":
    try:
        main(argv)
    except SystemExit:
        pass
else:
    assert click.testing.CliRunner().invoke(cli, argv).exit_code == 0
print(json.dumps({"frozen": gc.get_freeze_count(), "loading": len(loading), "enabled": gc.isenabled()}))
"""


def _collector(entry: str, path: Path, host: str = "on") -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _FROZEN, entry, str(path), host], capture_output=True, text=True,
                          cwd=ROOT, check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize(("entry", "frozen"), [("main", True), ("runner", False)])
def test_the_mabos_process_freezes_what_loading_its_command_made(answering: Path, entry: str, frozen: bool):
    """``mabos`` (:func:`cli.main.main`) pauses the collector while the command loads, then moves what the import
    made to the collector's permanent generation and collects again; invoking the ``cli`` group itself (tests,
    programs calling it repeatedly) changes nothing: it collects while loading and freezes nothing."""
    seen = _collector(entry, answering)
    assert (seen["frozen"] > 0) is frozen
    assert (seen["loading"] == 0) is frozen  # no collection walked the command's import in the mabos process
    assert seen["enabled"]  # on again afterwards either way


def test_a_host_that_turned_the_collector_off_keeps_it_off(answering: Path):
    """``main`` called by a program that disabled the collector leaves it disabled and freezes nothing."""
    assert _collector("main", answering, "off") == {"frozen": 0, "loading": 0, "enabled": False}


@pytest.mark.parametrize(("override", "env", "address"), [
    (None, None, None), ("  ", "", " "), ("h:1729", None, None), (None, "h:1729", None), (None, None, "h:1729"),
    ("", " ", "h:1729"), ("h:1729", "x:1", "y:2"),
])  # fmt: skip
def test_an_address_is_given_where_the_typedb_settings_find_one(override: str | None, env: str | None,
                                                                 address: str | None):  # fmt: skip
    """``[typedb]``'s ``address_given`` (what write-through checks at every open, without the TypeDB side) agrees
    with the settings' own resolution, and reads the same variable."""
    from kg.config import TYPEDB_ADDRESS_ENV, TypeDBConfig  # noqa: PLC0415
    from kg.shared_graph import resolve_settings  # noqa: PLC0415
    from kg.store.typedb.settings import ENV_ADDRESS  # noqa: PLC0415

    assert TYPEDB_ADDRESS_ENV == ENV_ADDRESS
    environ = {} if env is None else {ENV_ADDRESS: env}
    found = resolve_settings(workspace_name="w", config_address=address, override=override, environ=environ)
    assert TypeDBConfig(address=address).address_given(override, environ) is (found is not None)


def _builtin_list_factories(path: Path) -> list[str]:
    """``Field(..., default_factory=list)`` calls in one module, as ``path:line``."""
    found: list[str] = []
    text = path.read_text(encoding="utf-8")
    if "default_factory" not in text:  # a keyword argument's name is one token: no call here can pass it
        return found
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Field":
            found += [
                f"{path.relative_to(ROOT)}:{kw.value.lineno}"
                for kw in node.keywords
                if kw.arg == "default_factory" and isinstance(kw.value, ast.Name) and kw.value.id == "list"
            ]
    return found


def test_no_pydantic_field_takes_the_builtin_list_as_its_factory():
    """pydantic reads a factory's signature when it builds a model; the builtin ``list``'s is parsed with tokenize,
    whose first use compiles its patterns (~13 M instructions of a cold command): ``kg.models.base.new_list``."""
    modules = [p for package in ("kg", "cli", "reasoning", "sync") for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(modules) > 300
    assert [spot for module in modules for spot in _builtin_list_factories(module)] == []


def test_building_the_models_of_a_fact_query_and_a_recall_compiles_no_tokenize_pattern():
    """The models a fact query and a recall build, built in a fresh interpreter, leave tokenize's pattern cache empty
    (with a builtin ``list`` factory it holds the token pattern: the check would see it)."""
    code = """
import json, tokenize
from pydantic import BaseModel, Field
from kg.models.facts import Fact
from kg.models.memory import MemoryItem
from kg.memory.requests import RecallRequest
for model in (Fact, MemoryItem, RecallRequest):
    model.model_json_schema()
before = tokenize._compile.cache_info().currsize

class Control(BaseModel):
    items: list[int] = Field(default_factory=list)

Control.model_json_schema()
print(json.dumps([before, tokenize._compile.cache_info().currsize]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    before, with_builtin = json.loads(done.stdout.splitlines()[-1])
    assert before == 0
    assert with_builtin > 0  # the control: a builtin list factory does compile it


#: What a fact query no longer loads since the fact tools and commands live in modules of their own (issue 33, fourth
#: pass): the writes', the explanation's and the RDF import's tools and commands, and the importer.
NOT_FOR_A_FACT_QUERY = {"cli.tools.fact_writes", "cli.tools.facts_explain", "cli.tools.facts_import",
                        "cli.commands.fact_writes", "cli.commands.facts_explain", "cli.commands.facts_import",
                        "kg.rdf.importer", "kg.rdf.documents"}  # fmt: skip
_DEFAULTS_REPORT = """
import json, sys
from kg.recall.fusion_types import FusionSettings
print(json.dumps({"modules": sorted(sys.modules), "built": FusionSettings.__pydantic_complete__}))
"""


@pytest.mark.parametrize("command", ["fact_query", "bm25_recall"])
def test_a_fact_query_loads_one_fact_tool_and_a_recall_builds_no_fusion_settings(asked: Any, command: str):
    """A fact query imports the query's tool and command only; a bm25 recall with the default weights builds no
    validator for the fusion settings (their defaults are constructed: tests/unit/test_default_settings.py)."""
    answered = asked(command)
    assert json.loads(answered.printed)  # it answered: the fact, or the recall's hits
    found = json.loads(answered.reports["defaults"])
    assert sorted(NOT_FOR_A_FACT_QUERY & set(found["modules"])) == []
    assert found["built"] is False


_MAIN = """
import json, sys
from cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as stop:
    EXIT = stop.code
print(json.dumps({"exit": EXIT, "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize("command", ["fact_query", "bm25_recall"])
def test_the_mabos_process_imports_no_package_metadata(answering: Path, command: str):
    """``mabos`` stands in for pydantic's plugin loader (plugins off, the default), whose import of
    ``importlib.metadata`` (with email, zipfile, csv ...) cost 7% of a cold fact query:
    tests/unit/test_pydantic_plugins.py checks the stand-in and the ways to keep plugins."""
    argv = {"fact_query": ["fact", "query", "--agent", "a", "--subject", "acme"],
            "bm25_recall": ["memory", "recall", "--agent", "a", "renewal terms", "--mode",
                            "bm25"]}[command]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("PYDANTIC_DISABLE_PLUGINS", "MABOS_PYDANTIC_PLUGINS")}
    done = subprocess.run([sys.executable, "-c", _MAIN, *argv, "--json", "--workspace", str(answering)],
                          capture_output=True, text=True, cwd=ROOT, env=env, check=True)  # fmt: skip
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["exit"] == 0, done.stderr
    assert "pydantic_core" in found["modules"]  # it built models
    assert [m for m in found["modules"] if m.startswith(("importlib.metadata", "email", "zipfile", "csv"))] == []
    if command == "fact_query":  # a read: shutil and tempfile are imported by the first file write or copy
        assert {"shutil", "tempfile"} & set(found["modules"]) == set()


#: Model modules every command (or a fact query) defines: their annotations are evaluated when the class body runs
#: (bytecode, cached with the module), not by pydantic from strings (PEP 563), which compiles each field's annotation
#: in every process: about 9 M instructions of a cold fact query for these four.
EVALUATED_ANNOTATIONS = ("kg/config.py", "kg/models/facts.py", "kg/facts_requests.py", "kg/models/agents.py",
                         "kg/facts_write_requests.py", "kg/facts_import_requests.py")  # fmt: skip


@pytest.mark.parametrize("module", EVALUATED_ANNOTATIONS)
def test_the_hot_model_modules_do_not_postpone_their_annotations(module: str):
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    future = [a.name for node in tree.body if isinstance(node, ast.ImportFrom) and node.module == "__future__"
              for a in node.names]  # fmt: skip
    assert "annotations" not in future, f"{module}: see docs/decisions/2026-11-29-pydantic-plugins.md"


_DATACLASSES_REPORT = """
import json, sys
found = sorted(f"{name}.{cls.__qualname__}" for name, module in list(sys.modules.items())
               if name.split(".")[0] in ("cli", "kg", "sync", "reasoning") for cls in vars(module).values()
               if isinstance(cls, type) and cls.__module__ == name and "__dataclass_params__" in vars(cls))
print(json.dumps(found))
"""
#: The dataclasses of mabos that every fact query and bm25 recall defines. Defining one generates and compiles its
#: methods in every process (about 2-7 M instructions each, a frozen one with many fields the most); value objects
#: made at import, such as cli.option_fields.Cli, cli.options.Instead and cli.tools.registry.Tool, are named tuples
#: (about 1 M), and the tool contexts (cli.tools.registry.ToolContext, cli.tools.overrides.CommandContext) plain
#: classes.
QUERY_DATACLASSES = {"kg.ports.store.StorePorts", "kg.store.sqlite.migrations.Migration"}
RECALL_DATACLASSES = QUERY_DATACLASSES | {
    "kg.ports.memory.MemoryWriteResult",
    "kg.ports.memory.StoreLimits",
    "kg.recall.sidecar_state.Build",
    "kg.recall.sidecar_state.IndexView",
}


@pytest.mark.parametrize("command", ["fact_query", "bm25_recall"])
def test_a_query_defines_no_more_dataclasses_than_these(asked: Any, command: str):
    expected = QUERY_DATACLASSES if command == "fact_query" else RECALL_DATACLASSES
    # fewer is fine: update the sets, which only shrink
    assert set(json.loads(asked(command).reports["dataclasses"])) <= expected
