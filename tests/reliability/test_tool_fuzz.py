"""Wrong-typed input at the front door (issue 18, "front-door inconsistencies"): every registered tool, fed random
JSON of the wrong type for its fields, answers with one-line :class:`~kg.errors.InputError`\\ s only and writes nothing.

For each tool the input model's JSON schema says which JSON kinds a field accepts (``string``, ``integer``, an object
for a nested model, ``null`` for an optional one, ...); hypothesis draws values of the *other* kinds (leaving out what
pydantic's lax mode rightly coerces: ``"5"`` for an integer, ``1`` for a boolean, an int for a number) for a random
set of fields, with or without a valid ``agent_id``. The arguments as a whole, the tool name and the bound agent are
fuzzed the same way. Every call must raise ``InputError`` (no other exception type, no traceback-shaped message:
one line, ``<field>: <rule>``) and leave the outbox as it was (every write appends an outbox event).

Real workspace, real SQLite; ``MABOS_EMBEDDER=none`` (no handler runs: refusals come first). A few examples per tool
keep the run to seconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli import tools
from cli.tools import REGISTRY, ToolContext, run
from kg.errors import InputError
from kg.workspace import Workspace, init_workspace

AGENT = "fuzz-agent"
EXAMPLES = 6
KINDS = ("null", "boolean", "integer", "number", "string", "array", "object")
_BOOL_WORDS = {"0", "1", "true", "false", "yes", "no", "on", "off", "t", "f", "y", "n"}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    mp = pytest.MonkeyPatch()
    mp.setenv("MABOS_EMBEDDER", "none")
    workspace = init_workspace(tmp_path_factory.mktemp("fuzz") / "ws")
    workspace.agents.add(AGENT)
    yield workspace
    workspace.close()
    mp.undo()


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return defs[ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else schema


def accepted_kinds(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    """The JSON kinds a property's schema accepts (every kind when it says nothing)."""
    schema = _resolve(schema, defs)
    union = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf")
    if union:
        return set().union(*(accepted_kinds(s, defs) for s in union))
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind) | ({"number"} if "integer" in kind else set())
    if isinstance(kind, str):
        return {kind}
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is not None:
        return {_kind(v) for v in values}
    return set(KINDS)  # Any: nothing is of the wrong type


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"


def _not_a_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return True
    return False


_SCALARS = st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=False), st.text(max_size=8), st.booleans())
_JSON = st.recursive(st.one_of(st.none(), _SCALARS), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=5), inner, max_size=3), max_leaves=6)  # fmt: skip


def wrong_values(accepted: set[str]) -> st.SearchStrategy[Any] | None:
    """Values of a kind the field does not accept (and that lax validation would not coerce into one)."""
    numeric = bool(accepted & {"integer", "number"})
    options: list[st.SearchStrategy[Any]] = []
    if "null" not in accepted:
        options.append(st.none())
    if "boolean" not in accepted and not numeric:
        options.append(st.booleans())
    if not numeric and "boolean" not in accepted:
        options.append(st.integers(-(10**6), 10**6))
    if "number" not in accepted:
        fractional = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
        options.append(fractional if "integer" in accepted or "boolean" in accepted else st.floats(allow_nan=False))
    if "string" not in accepted:
        text = st.text(min_size=1, max_size=12)
        if numeric:
            text = text.filter(_not_a_number)
        if "boolean" in accepted:
            text = text.filter(lambda t: t.strip().lower() not in _BOOL_WORDS)
        options.append(text)
    if "array" not in accepted:
        options.append(st.lists(_JSON, max_size=3))
    if "object" not in accepted:
        options.append(st.dictionaries(st.text(max_size=6), _JSON, max_size=3))
    return st.one_of(options) if options else None


def _wrong_arguments(name: str) -> st.SearchStrategy[dict[str, Any]]:
    schema = REGISTRY[name].input_schema()
    defs = schema.get("$defs", {})
    fields = {
        field: strategy
        for field, prop in schema.get("properties", {}).items()
        if (strategy := wrong_values(accepted_kinds(prop, defs))) is not None
    }
    assert fields, f"{name}: no field has a wrong type to try"
    chosen = st.lists(st.sampled_from(sorted(fields)), min_size=1, max_size=3, unique=True)
    valid_agent = st.sampled_from([{}, {"agent_id": AGENT}])

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        names = draw(chosen)
        base = {} if "agent_id" in names else draw(valid_agent)
        return {**base, **{field: draw(fields[field]) for field in names}}

    return build()


def _outbox_total(ws: Workspace) -> int:
    return sum(ws.ports.outbox.counts().values())


def _assert_one_line_input_error(exc: BaseException) -> None:
    assert type(exc) is InputError, f"{type(exc).__name__}: {exc}"
    message = str(exc)
    assert message and "\n" not in message and "\r" not in message, repr(message)
    assert ": " in message, repr(message)  # <field>: <rule>


_FAST = settings(max_examples=EXAMPLES, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_tool_refuses_wrong_types_with_one_line_and_writes_nothing(ws: Workspace, name: str) -> None:
    ctx = ToolContext(workspace_obj=ws, operator=False)
    before = _outbox_total(ws)

    @_FAST
    @given(arguments=_wrong_arguments(name))
    def check(arguments: dict[str, Any]) -> None:
        with pytest.raises(Exception) as caught:
            run(ctx, name, arguments)
        _assert_one_line_input_error(caught.value)

    check()
    assert _outbox_total(ws) == before


@_FAST
@given(arguments=_JSON.filter(lambda v: not isinstance(v, dict)), name=st.sampled_from(list(REGISTRY)))
def test_arguments_that_are_not_an_object_are_an_input_error(ws: Workspace, arguments: Any, name: str) -> None:
    with pytest.raises(Exception) as caught:
        run(ToolContext(workspace_obj=ws, operator=False), name, arguments)
    _assert_one_line_input_error(caught.value)


@_FAST
@given(name=_JSON.filter(lambda v: not isinstance(v, str)))
def test_a_tool_name_that_is_not_a_string_is_an_input_error(ws: Workspace, name: Any) -> None:
    with pytest.raises(Exception) as caught:
        run(ToolContext(workspace_obj=ws, operator=False), name, {"agent_id": AGENT})
    _assert_one_line_input_error(caught.value)


@_FAST
@given(agent=_JSON.filter(lambda v: v is not None and not isinstance(v, str)))
def test_a_bound_agent_that_is_not_a_string_is_an_input_error(ws: Workspace, agent: Any) -> None:
    # It was a TypeError from a regex deep in the scope checks.
    before = _outbox_total(ws)
    with pytest.raises(Exception) as caught:
        tools.call("memory_store_item", workspace=ws.path, agent=agent, content="hello")
    _assert_one_line_input_error(caught.value)
    assert str(caught.value).startswith("agent: ")
    assert _outbox_total(ws) == before


@pytest.mark.parametrize("workspace", [5, ["a"], {"p": 1}])
def test_a_workspace_that_is_not_a_path_is_an_input_error(workspace: Any) -> None:
    with pytest.raises(Exception) as caught:
        tools.call("memory_status", workspace=workspace, agent_id=AGENT)
    _assert_one_line_input_error(caught.value)


def test_the_kinds_of_a_schema_are_read_correctly() -> None:
    # The strategy is only as good as this reading of the schemas: check it on shapes the tools use.
    defs = {"Pattern": {"type": "object", "properties": {}}, "Kind": {"enum": ["a", "b"], "type": "string"}}
    assert accepted_kinds({"anyOf": [{"type": "string"}, {"type": "null"}]}, defs) == {"string", "null"}
    assert accepted_kinds({"$ref": "#/$defs/Pattern"}, defs) == {"object"}
    assert accepted_kinds({"$ref": "#/$defs/Kind"}, defs) == {"string"}
    assert accepted_kinds({"enum": [1, 2]}, defs) == {"integer"}
    assert accepted_kinds({}, defs) == set(KINDS)
    assert wrong_values(set(KINDS)) is None
