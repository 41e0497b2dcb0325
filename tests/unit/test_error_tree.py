"""Every error a user can meet is a MabosError (docs/decisions/2026-11-28-error-tree.md), read from the source.

Two rules, checked over kg, reasoning, sync and cli:

- an exception class derives from :class:`kg.errors.MabosError`, or it is a signal caught inside the package
  that raises it (listed below with where it is caught);
- a bare ``raise ValueError/TypeError/RuntimeError`` is either read by pydantic (in a validator, which pydantic
  turns into a ``ValidationError`` and the boundary into an ``InputError`` naming the field), or it is listed
  below with why no user meets it bare (a programming error, or a signal a boundary translates).

Each list must be exact: an entry that no longer matches the code fails too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.errors import BackendError, MabosError, WorkspaceError
from kg.ports import ExtractionFailedError, UnknownAggregateError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("kg", "reasoning", "sync", "cli")
BARE = frozenset({"ValueError", "TypeError", "RuntimeError"})
BUILTIN_BASES = frozenset({"Exception", "BaseException", "ValueError", "TypeError", "RuntimeError", "LookupError",
                           "KeyError", "OSError", "ArithmeticError"})  # fmt: skip
VALIDATOR_DECORATORS = frozenset({"field_validator", "model_validator"})
VALIDATOR_WRAPPERS = frozenset({"AfterValidator", "BeforeValidator", "PlainValidator", "WrapValidator"})

#: Exception classes outside the tree: control-flow signals that never leave the package that raises them.
SIGNALS = {
    "kg/recall/vector_files.py::UnusableError": "caught in VectorIndex.load: the index is rebuilt",
    "reasoning/router/methods/base.py::MissingInputs": "caught in reasoning.router.run: the method falls back",
    "reasoning/router/methods/identification.py::NotIdentifiable": "caught in causal_effect: a hedge, reported",
    "reasoning/router/methods/modal_logic.py::_Stop": "caught in the same module: ends a search",
    "reasoning/rules/backward.py::_SearchCut": "caught in the same module: the proof search hit its step bound",
    "reasoning/rules/plans.py::LimitReached": "caught inside reasoning.rules: a join hit its bound",
    "sync/nightly_steps.py::StepSkipped": "caught in sync.nightly: the step is reported as skipped",
    "cli/ui/security.py::_BodyTooLarge": "caught in BodyCap, the same module: the body grew past the cap (413)",
}

#: Bare raises outside validators, by enclosing function: why no user meets them bare.
BARE_RAISES = {
    # programming errors: a caller inside mabos broke a contract; a traceback is the right answer
    "kg/extraction/llm.py::LLMExtractor.__init__": "attempts comes from ExtractionConfig, already bounded 1-10",
    "kg/memory/write_policy.py::WriteQueue._drain": "a write sink returned the wrong number of results",
    "reasoning/router/methods/__init__.py::engine": "an ENGINE_TABLE entry that names no engine",
    "reasoning/router/methods/__init__.py::method_docs": "a method module without a proper DOCS table",
    "sync/replay.py::push": "batch is bounded before: --batch is an IntRange(1, 10000), the tool's field ge=1",
    "cli/options.py::options_for": "a command names a field its request model lacks",
    "reasoning/router/methods/fields.py::distinct": "called from model validators only: pydantic makes its ValueError "
    "the method input's one-line InputError (test_methods_social checks it for all three engines)",
    "reasoning/graph_query_models.py::_any_query_field": "two graph query models give one field different types",
    "reasoning/graph_query_models.py::_widest": "two graph query models constrain one field other than by bounds",
    "cli/option_fields.py::FieldOption.__init__": "a command's option declaration is incomplete",
    "cli/option_fields.py::FieldOption._type": "a request field has no command-line type",
    "cli/option_fields.py::FieldOption._parts": "a command's Cli(fields=...) names no model, or fields the model lacks",
    "cli/tools/mcp_auth.py::TokenGate.__init__": "the server's own wiring",
    "cli/tools/registry.py::tool.register": "a tool registered twice",
    "cli/tools/registry.py::_annotated_models": "a tool handler without its input and output models",
    "cli/ui/work.py::ConsoleWork.__call__": "routes are the console's own names; the except below makes it one line",
    "kg/store/sqlite/db.py::Database.pragma": "the store's own calls name one of SCOPED_PRAGMAS (bulk load, journal)",
    # signals a boundary translates into a MabosError
    "kg/conversation/llm.py::_reply_text": "OpenAIChatModel._parse raises BackendUnavailableError from it",
    "kg/extraction/llm.py::parse_reply": "LLMExtractor.extract retries, then raises ExtractionFailedError",
    "kg/recall/http_embedder.py::_vectors": "HttpEmbedder._parse raises BackendUnavailableError from it",
    "kg/recall/minilm.py::read_safetensors": "kg.recall.embedder raises BackendUnavailableError from any load error",
    "kg/recall/minilm.py::load": "kg.recall.embedder raises BackendUnavailableError from any load error",
    "kg/recall/minilm.py::_check_pipeline": "kg.recall.embedder raises BackendUnavailableError from any load error",
    "kg/rdf/parse.py::TermMapper.node": "parse_documents raises InputError(documents[i]) from it",
    # validators pydantic reaches through a factory (AfterValidator(_matching(...)))
    "kg/models/base.py::_matching.check": "the AfterValidator of AgentId and Scope",
}


def _modules(names: frozenset[str]) -> Iterator[tuple[str, ast.Module]]:
    """The modules of the packages, parsed, that can hold one of ``names``: a module whose text has none of them is
    skipped unparsed, unless it is not ASCII (an identifier in other letters may normalise to one, PEP 3131)."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if text.isascii() and not any(name in text for name in names):
                continue
            yield path.relative_to(ROOT).as_posix(), ast.parse(text)


def _name(node: ast.expr) -> str:
    """The last name of ``x``, ``a.x`` or ``x(...)``."""
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _validators(tree: ast.Module) -> set[str]:
    """Names of the module's functions pydantic calls: decorated validators, functions handed to an
    ``AfterValidator`` (and its kin), and the functions those call, transitively."""
    functions = [n for n in ast.walk(tree) if isinstance(n, Function)]
    found = {f.name for f in functions if {_name(d) for d in f.decorator_list} & VALIDATOR_DECORATORS}
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and _name(call) in VALIDATOR_WRAPPERS:
            found |= {a.id for a in call.args if isinstance(a, ast.Name)}
    calls = {f.name: {_name(c) for c in ast.walk(f) if isinstance(c, ast.Call)} for f in functions}
    while True:
        more = {callee for name in found for callee in calls.get(name, ()) if callee in calls} - found
        if not more:
            return found
        found |= more


def _bare_raises(path: str, tree: ast.Module) -> Iterator[tuple[str, int, bool]]:
    """(``path::qualified function``, line, in a validator) of each bare raise of the module."""
    validators = _validators(tree)

    def visit(node: ast.AST, scope: list[ast.AST]) -> Iterator[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, Function | ast.ClassDef):
                yield from visit(child, [*scope, child])
                continue
            if isinstance(child, ast.Raise) and child.exc is not None and _name(child.exc) in BARE:
                function = next((s for s in reversed(scope) if isinstance(s, Function)), None)
                where = ".".join(s.name for s in scope if isinstance(s, Function | ast.ClassDef))
                yield f"{path}::{where}", child.lineno, function is not None and function.name in validators
            yield from visit(child, scope)

    yield from visit(tree, [])


def test_exception_classes_are_in_the_tree_or_internal_signals() -> None:
    outside = {
        f"{path}::{node.name}"
        for path, tree in _modules(BUILTIN_BASES)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and {_name(b) for b in node.bases} & BUILTIN_BASES
    }
    assert outside - {"kg/errors.py::MabosError"} == set(SIGNALS)


def test_bare_raises_are_validators_or_listed() -> None:
    listed: set[str] = set()
    unexplained = []
    for path, tree in _modules(BARE):
        for where, line, in_validator in _bare_raises(path, tree):
            if in_validator:
                continue
            if where in BARE_RAISES:
                listed.add(where)
            else:
                unexplained.append(f"{path}:{line} ({where})")
    assert unexplained == [], "a bare raise a user may meet: raise a MabosError (InputError...) or list it"
    assert listed == set(BARE_RAISES), sorted(set(BARE_RAISES) - listed)  # no stale entry


def test_the_rules_see_what_they_check() -> None:
    """The scanner finds a validator's raise, a helper it calls, a wrapped function, and an unlisted raise."""
    source = (
        "from pydantic import AfterValidator, model_validator\n"
        "def helper(v):\n    raise ValueError('x: bad')\n"
        "def wrapped(v):\n    raise ValueError('y: bad')\n"
        "T = AfterValidator(wrapped)\n"
        "class M:\n    @model_validator(mode='after')\n    def _check(self):\n        helper(self)\n"
        "        raise ValueError('z: bad')\n"
        "def service(n):\n    raise TypeError('n')\n"
    )
    found = {(where, in_validator) for where, _, in_validator in _bare_raises("m.py", ast.parse(source))}
    assert found == {("m.py::helper", True), ("m.py::wrapped", True), ("m.py::M._check", True),
                     ("m.py::service", False)}  # fmt: skip


#: A chat model's unusable answer is a backend's refusal; a newer workspace's outbox event, a workspace problem.
@pytest.mark.parametrize(
    ("error", "kind"), [(ExtractionFailedError, BackendError), (UnknownAggregateError, WorkspaceError)]
)
def test_the_ports_errors_are_mabos_errors(error: type[Exception], kind: type[MabosError]) -> None:
    assert issubclass(error, kind) and issubclass(error, MabosError)
