"""Every integer field of every tool refuses a value SQLite cannot hold, in one line naming the field.

Found by the slow bad-input fuzzing (issue 30): ``memory_extract`` with ``since=2**63`` reached SQLite and raised
OverflowError (an internal error) instead of a one-line error. The check sits in ``ToolInput`` for every field that
takes an integer (alone, optional or in a list), so a new tool gets it too. Pure validation, no workspace needed; the
CLI run below uses a real workspace.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from cli import tools
from cli.main import cli
from cli.tools.registry import INT64_MAX, _int_fields, get
from kg.errors import InputError

INT_FIELDS = [(name, field) for name in sorted(tools.REGISTRY) for field in _int_fields(get(name).input)]


def test_the_tools_have_integer_fields_to_check() -> None:
    assert len(INT_FIELDS) > 20 and ("memory_extract", "since") in INT_FIELDS


@pytest.mark.parametrize(("tool", "field"), INT_FIELDS, ids=[f"{t}.{f}" for t, f in INT_FIELDS])
@pytest.mark.parametrize("value", [INT64_MAX + 1, -(2**63) - 1, 10**40])
def test_an_integer_past_64_bits_is_refused_naming_the_field(tool: str, field: str, value: int) -> None:
    info = get(tool).input.model_fields[field]
    given = [value] if "list" in str(info.annotation) else value
    with pytest.raises(InputError) as refused:
        get(tool).parse({"agent_id": "a", field: given})
    assert str(refused.value).startswith(f"{field}:") and "\n" not in str(refused.value)


def test_memory_extract_since_at_and_past_the_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner, ws = CliRunner(), str(tmp_path / "ws")
    assert runner.invoke(cli, ["init", "--workspace", ws]).exit_code == 0
    assert runner.invoke(cli, ["agent", "add", "a", "--workspace", ws]).exit_code == 0
    (tmp_path / "c.jsonl").write_text('{"role": "user", "content": "I moved to Berlin in May."}\n')
    ingest = ["conversation", "ingest", "--workspace", ws, "--agent", "a", "--session", "s1", "--file"]
    assert runner.invoke(cli, [*ingest, str(tmp_path / "c.jsonl")]).exit_code == 0
    extract = ["memory", "extract", "--workspace", ws, "--agent", "a", "--since"]
    at = runner.invoke(cli, [*extract, str(INT64_MAX)])
    assert at.exit_code == 0, at.output  # the largest mark SQLite holds: nothing after it, no crash
    past = runner.invoke(cli, [*extract, str(INT64_MAX + 1)])
    assert past.exit_code == 1 and "since: must be a 64-bit integer" in past.output
