"""Exit codes: 1 user error (one line naming the field, nothing written), 2 usage error, 3 backend down."""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import TYPE_CHECKING

import click
import pytest

from cli.main import reported_errors
from cli.tools.mcp_calls import error_result
from cli.ui.work import internal
from kg.errors import BackendUnavailableError, InputError

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")
MISSING_FACT = "F-01HZZZZZZZZZZZZZZZZZZZZZZZ"
MISSING_GOAL = "G-01HZZZZZZZZZZZZZZZZZZZZZZZ"

BAD_INPUT = [
    pytest.param(("fact", "assert", *A, "acme", "x", "y", "--confidence", "1.5"), "confidence", id="confidence"),
    pytest.param(("agent", "add", "../x"), "agent_id", id="agent-id-dotdot"),
    pytest.param(("agent", "add", "a/b"), "agent_id", id="agent-id-slash"),
    pytest.param(("agent", "add", "sales-agent"), "agent_id", id="agent-duplicate"),
    pytest.param(("fact", "assert", "--agent", "nobody", "acme", "x", "y"), "agent", id="unknown-agent"),
    pytest.param(("fact", "assert", *A, "", "x", "y"), "subject", id="empty-subject"),
    pytest.param(("fact", "assert", *A, "acme", "x", "y", "--scope", "project:secret"), "scope", id="scope"),
    pytest.param(
        ("fact", "assert", *A, "acme", "x", "y", "--valid-from", "2024-02-01", "--valid-until", "2024-01-01"),
        "valid_until",
        id="validity",
    ),
    pytest.param(("fact", "assert", *A, "acme", "x", "y", "--derived-from", "nope"), "derived_from.0", id="lineage"),
    pytest.param(("fact", "retract", *A, "--subject", " "), "subject", id="retract-blank"),
    pytest.param(("fact", "retract", *A), "retract", id="retract-nothing"),
    pytest.param(("fact", "query", *A, "--limit", "0"), "limit", id="limit"),
    pytest.param(("fact", "explain", *A, MISSING_FACT), "fact", id="explain-missing"),
    pytest.param(("fact", "explain", *A, MISSING_FACT, "--depth", "11"), "depth", id="explain-depth"),
    pytest.param(("goal", "add", *A, "Grow", "--priority", "11"), "priority", id="priority"),
    pytest.param(("belief", "add", *A, "x", "--certainty", "-0.1"), "certainty", id="certainty"),
    pytest.param(("goal", "update", *A, MISSING_GOAL, "--priority", "3"), "uid", id="update-missing"),
    pytest.param(("goal", "update", *A, "B-01HZZZZZZZZZZZZZZZZZZZZZZZ", "--priority", "3"), "uid", id="wrong-kind"),
    pytest.param(("graph", "link", *A, "goal-requires-plan", MISSING_GOAL, MISSING_GOAL), "source", id="link-missing"),
    pytest.param(("scope", "grant", "sales-agent", "nonsense", "--by", "me"), "scope", id="grant-scope"),
    pytest.param(("scope", "grant", "sales-agent", "project:x", "--by", ""), "granted_by", id="grant-by"),
    # paths the file system would refuse (PATH_MAX, NAME_MAX): refused naming the field, not an internal error
    pytest.param(("--workspace", "/nowhere/" + "w" * 5000, "agent", "list"), "workspace", id="workspace-too-long"),
    pytest.param(("sync", "import-workspace", "/nowhere/" + "i" * 300, "--dry-run"), "path", id="import-path-name"),
    pytest.param(("sync", "export-workspace", "/nowhere/" + "e" * 5000 + "/x"), "path", id="export-path-too-long"),
]


@pytest.mark.parametrize(("args", "field"), BAD_INPUT)
def test_bad_input_exits_1_names_the_field_and_changes_nothing(
    ready: Mabos, digest: Callable[[], dict[str, str]], args: tuple[str, ...], field: str
) -> None:
    before = digest()
    result = ready(*args)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {field}: ")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr and len(result.stderr) < 1100
    assert digest() == before


def test_the_digest_sees_a_write(ready: Mabos, digest: Callable[[], dict[str, str]]) -> None:
    before = digest()
    ready.ok("fact", "assert", *A, "acme", "x", "y")
    assert digest()["store"] != before["store"]
    ready.ok("agent", "add", "another")
    assert digest()["files"] != before["files"]


def test_bad_input_with_json_keeps_stdout_empty(ready: Mabos) -> None:
    result = ready("fact", "assert", *A, "acme", "x", "y", "--confidence", "1.5", "--json")
    assert result.exit_code == 1 and result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("bogus",), id="unknown-command"),
        pytest.param(("fact", "assert", *A, "acme", "x"), id="missing-argument"),
        pytest.param(("fact", "query", *A, "--bogus"), id="unknown-option"),
        pytest.param(("fact", "query"), id="missing-agent"),
        pytest.param(("fact", "assert", *A, "a", "b", "c", "--confidence", "high"), id="not-a-number"),
        pytest.param(("fact", "query", *A, "--as-of", "yesterday"), id="not-a-date"),
        pytest.param(("goal", "add", *A, "x", "--level", "galactic"), id="not-a-choice"),
        pytest.param(("graph", "link", *A, "likes", "x", "y"), id="unknown-relation"),
        pytest.param(("scope", "grant", "sales-agent", "project:x"), id="missing-by"),
    ],
)
def test_usage_errors_exit_2(ready: Mabos, digest: Callable[[], dict[str, str]], args: tuple[str, ...]) -> None:
    before = digest()
    result = ready(*args)
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.stderr and "Traceback" not in result.stderr
    assert digest() == before


def test_missing_workspace_is_a_user_error(mabos: Mabos) -> None:
    result = mabos("status")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: workspace: no workspace at")
    # says how to make one and how to name another (a user who ran `mabos demo` typed a command without --workspace)
    assert "mabos init --workspace" in result.stderr and "--workspace DIR or MABOS_WORKSPACE" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not mabos.workspace.exists()


def test_corrupt_store_gives_one_line_and_no_traceback(ready: Mabos) -> None:
    store = ready.workspace / ".mabos" / "kg.sqlite"
    for suffix in ("-wal", "-shm"):
        store.with_name(store.name + suffix).unlink(missing_ok=True)
    store.write_bytes(b"this is not a database" * 100)
    result = ready("status")
    assert result.exit_code in (1, 3)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr and len(result.stderr) < 1100
    assert result.stderr.startswith(("error: ", "internal error: "))


def _exit_code_of(exc: Exception) -> int:
    with pytest.raises(click.exceptions.Exit) as caught, reported_errors():
        raise exc
    return caught.value.exit_code


def test_error_mapping(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code_of(InputError("confidence", "must be at most 1")) == 1
    assert capsys.readouterr().err == "error: confidence: must be at most 1\n"
    assert _exit_code_of(BackendUnavailableError("typedb: cannot reach localhost:1729")) == 3
    assert capsys.readouterr().err == "error: typedb: cannot reach localhost:1729\n"
    assert _exit_code_of(RuntimeError("boom\nsecond line")) == 1
    err = capsys.readouterr().err
    assert err.startswith("internal error: RuntimeError: boom second line") and err.count("\n") == 1


def test_a_path_the_file_system_refuses_is_one_line_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    """An OSError about a path the user named is the user's to fix (exit 1, the path and the reason, clipped past 200
    characters); one without a path stays an internal error; a huge foreign message is clipped as mabos's own are."""
    long_name = "/nowhere/" + "n" * 5000
    assert _exit_code_of(OSError(errno.ENAMETOOLONG, "File name too long", long_name)) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: /nowhere/" + "n" * 124 + "...[4843 characters left out]...")
    assert err.endswith("..." + "n" * 33 + ": File name too long\n")
    assert err.count("\n") == 1 and len(err) < 300
    assert _exit_code_of(OSError(errno.EIO, "Input/output error")) == 1
    assert capsys.readouterr().err.startswith("internal error: OSError: ")
    # a MabosError cuts its own message; a foreign one is cut here
    assert _exit_code_of(RuntimeError("x" * 50_000)) == 1
    err = capsys.readouterr().err
    assert "...[49500 characters left out]..." + "x" * 100 + " (set MABOS_DEBUG=1" in err
    assert err.count("\n") == 1 and len(err) < 1100


def test_every_surface_shows_a_foreign_error_on_one_clipped_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI, the console and the MCP server show the same one line for the same foreign error: white space folded,
    clipped as mabos's own messages are (a 50,000-character, 25,000-line message from a library does not flood a
    page or a model's context)."""
    text = "first line\n" + "y\n" * 25_000
    line = "RuntimeError: first line " + "y " * 194 + "y...[49510 characters left out]..." + " y" * 50
    assert _exit_code_of(RuntimeError(text)) == 1
    assert capsys.readouterr().err == f"internal error: {line} (set MABOS_DEBUG=1 for the traceback)\n"
    assert internal(RuntimeError(text)) == f"internal error: {line}"
    reply = error_result(f"internal error: RuntimeError: {text}")
    assert reply.is_error and len(reply.content) == 1
    shown = reply.content[0].text  # the MCP reply clips its whole line, prefix included
    assert shown.startswith("internal error: RuntimeError: first line y y")
    assert shown.endswith("y...[49540 characters left out]..." + " y" * 50)
    assert "\n" not in shown and len(shown) < 700


def test_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"), reported_errors():
        raise RuntimeError("boom")


def test_click_exceptions_pass_through() -> None:
    with pytest.raises(click.UsageError), reported_errors():
        raise click.UsageError("bad")
