"""docs/tools.md is what the registry generates now (stale docs fail), every tool of issue 9 is registered, and
the exported definitions are well-formed for MCP, OpenAI and OpenClaw."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema.validators import validator_for

from cli.tools import REGISTRY
from cli.tools.export import FORMATS, definitions, input_schema, output_schema, render_docs, rooted, summary
from cli.tools.registry import SEED_TOOL_NAMES
from kg.errors import InputError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "tools.md"
ISSUE_TOOLS = SEED_TOOL_NAMES  # every tool issue 9 names


def test_docs_are_generated_from_the_registry_now() -> None:
    assert DOCS.is_file(), "docs/tools.md is missing: run 'mabos tools docs --out docs/tools.md'"
    assert DOCS.read_text(encoding="utf-8") == render_docs(), (
        "docs/tools.md is stale: run 'mabos tools docs --out docs/tools.md' and commit it"
    )


def test_every_tool_of_the_issue_is_registered_and_documented() -> None:
    missing = [name for name in ISSUE_TOOLS if name not in REGISTRY]
    assert not missing, f"tools of issue 9 not registered: {missing}"
    page = render_docs()
    assert all(f"### `{name}`" in page for name in ISSUE_TOOLS)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_tool_is_described_for_an_llm(name: str) -> None:
    found = REGISTRY[name]
    assert len(found.description) >= 40 and summary(found.description).endswith((".", "!", "?")), name
    schema = input_schema(found)
    undescribed = [field for field, prop in schema["properties"].items() if not prop.get("description")]
    assert not undescribed, f"{name}: fields without a description: {undescribed}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_schemas_are_valid_json_schema_objects(name: str) -> None:
    for schema in (input_schema(REGISTRY[name]), output_schema(REGISTRY[name])):
        validator_for(schema).check_schema(schema)
        assert schema["type"] == "object"
    assert input_schema(REGISTRY[name])["additionalProperties"] is False  # unknown arguments are refused


def test_export_formats() -> None:
    mcp, openai, openclaw = (definitions(fmt) for fmt in FORMATS)
    assert [d["name"] for d in mcp] == list(REGISTRY) == [d["name"] for d in openclaw]
    assert set(mcp[0]) == {"name", "description", "inputSchema", "outputSchema"}
    assert openai[0]["type"] == "function" and set(openai[0]["function"]) == {"name", "description", "parameters"}
    assert set(openclaw[0]) == {"name", "description", "parameters"}
    assert openai[0]["function"]["parameters"] == mcp[0]["inputSchema"] == openclaw[0]["parameters"]
    one = definitions("openclaw", ["memory_recall"])
    assert [d["name"] for d in one] == ["memory_recall"]
    with pytest.raises(InputError, match=r"^format: must be one of mcp, openai, openclaw"):
        definitions("yaml")
    with pytest.raises(InputError, match=r"^tool: no tool 'nope'"):
        definitions("mcp", ["nope"])


def test_summary_is_the_first_sentence() -> None:
    assert summary("Find memories. Use it before answering.") == "Find memories."
    assert summary("Route to method e.g. deductive") == "Route to method e.g. deductive"


def test_check_outside_the_repository_says_the_page_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35.2: run outside the repository, 'tools docs --check' said 'docs/tools.md is stale'."""
    from click.testing import CliRunner  # noqa: PLC0415

    from cli.main import cli  # noqa: PLC0415

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["tools", "docs", "--check", "--workspace", str(tmp_path / "ws")])
    assert result.exit_code == 1
    assert "does not exist" in result.stderr and "stale" not in result.stderr
    assert not (tmp_path / "docs").exists()


def test_schemas_are_made_once_and_handed_out_as_fresh_copies() -> None:
    found = REGISTRY["fact_query"]
    first, second = input_schema(found), input_schema(found)
    assert first == second == rooted(found.input.model_json_schema()) and first is not second
    first["properties"].clear()  # a caller that edits its copy changes nobody else's
    assert input_schema(found)["properties"] == second["properties"] != {}
    assert output_schema(found) == rooted(found.output.model_json_schema(mode="serialization"))
