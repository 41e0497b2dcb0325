"""The tool registry's declaration: a tool's input and output models are its handler's annotations, and the
shared input fields (``token_count``, kg/conversation/requests.py, which the memory and conversation tools use)
validate as one rule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from cli.tools.registry import REGISTRY, ToolContext, ToolInput, get, tool
from kg.conversation.window import token_count
from kg.errors import InputError


class _EchoInput(ToolInput):
    """A test tool's input."""

    text: str
    budget: int | None = token_count(10, "At most this many tokens.")


class _Echo(BaseModel):
    """A test tool's output."""

    text: str


@pytest.fixture
def registered() -> Iterator[list[str]]:
    """Names the test registers; removed from the process-wide registry afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        REGISTRY.pop(name, None)


def test_the_models_are_the_handlers_annotations(registered: list[str]) -> None:
    registered.append("test_echo")

    @tool("test_echo", group="test", description="Echo  the\n text.")
    def echo(ctx: ToolContext, args: _EchoInput) -> _Echo:
        return _Echo(text=args.text)

    found = get("test_echo")
    assert (found.input, found.output, found.handler, found.description) == (_EchoInput, _Echo, echo, "Echo the text.")
    assert list(found.input_schema()["properties"]) == ["agent_id", "text", "budget"]
    assert found.parse({"text": "hi", "budget": 10}).budget == 10


@pytest.mark.parametrize("budget", [0, 11, "many"])
def test_a_token_count_outside_its_bounds_is_refused_naming_the_field(registered: list[str], budget: object) -> None:
    registered.append("test_echo")

    @tool("test_echo", group="test", description="Echo the text.")
    def echo(ctx: ToolContext, args: _EchoInput) -> _Echo:
        return _Echo(text=args.text)

    with pytest.raises(InputError) as error:
        get("test_echo").parse({"text": "hi", "budget": budget})
    assert error.value.field == "budget"


def test_a_handler_not_annotated_with_models_is_refused_and_not_registered(registered: list[str]) -> None:
    registered.extend(["test_untyped_input", "test_untyped_output"])
    with pytest.raises(TypeError, match=r"annotate 'args' with a ToolInput subclass"):

        @tool("test_untyped_input", group="test", description="Nothing.")  # type: ignore[type-var]  # mypy refuses it too
        def bad_input(ctx: ToolContext, args: dict[str, str]) -> _Echo:
            return _Echo(text="")

    with pytest.raises(TypeError, match=r"annotate its return with a pydantic model"):

        @tool("test_untyped_output", group="test", description="Nothing.")  # type: ignore[type-var]  # mypy refuses it too
        def bad_output(ctx: ToolContext, args: _EchoInput) -> str:
            return args.text

    assert "test_untyped_input" not in REGISTRY and "test_untyped_output" not in REGISTRY


def _date_fields() -> list[tuple[str, str]]:
    """(tool, field) for every date or date-time input field of every registered tool."""
    import cli.tools  # noqa: F401, PLC0415  (registers every tool)

    return sorted(
        (name, field)
        for name, spec in REGISTRY.items()
        for field, prop in spec.input_schema().get("properties", {}).items()
        if any(option.get("format") in {"date", "date-time"} for option in [prop, *prop.get("anyOf", [])])
    )


@pytest.mark.parametrize(("name", "field"), _date_fields())
def test_a_number_for_a_date_is_refused_naming_the_field(ws, name: str, field: str) -> None:
    # pydantic alone reads 0 as 1970-01-01 (found by the tool fuzz: memory_build_hierarchy took since=0).
    from tests.unit.tool_calls import refused_unchanged  # noqa: PLC0415

    error = refused_unchanged(ws, name, {"agent_id": "a", field: 0})
    assert error.field == field and "not a number" in str(error)
