"""Every file and standard input the CLI reads is capped, and JSONL splits where its writer joined (issue 30).

Before: ``conversation ingest --file /dev/zero`` and ``reason run --inputs /dev/zero`` read until memory ran out.
Now every read goes through :func:`kg.limits.read_bounded`, which reads in chunks and stops at the cap plus one
byte, then refuses with one line naming the field and the cap; nothing is written. ``conversation ingest`` and
``memory admit`` split JSONL on ``"\\n"`` only: a line written by ``json.dumps(..., ensure_ascii=False)`` may hold
U+2028, U+0085 ... raw, which ``str.splitlines()`` cut in two. Real workspaces, real CLI, nothing mocked.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.commands.memory_admit import read_candidates
from cli.main import cli
from kg.errors import InputError
from kg.limits import LINE_BREAKS, MAX_DOCUMENT_BYTES, jsonl_lines, load_json, read_bounded, read_text_bounded
from kg.models.conversation import MessageQuery
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace

CAP = f"is larger than the cap of {MAX_DOCUMENT_BYTES:,} bytes"


class Zeros(io.RawIOBase):
    """An endless binary stream that counts the bytes it hands out."""

    handed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        size = len(buffer)
        buffer[:size] = bytes(size)
        self.handed += size
        return size


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def test_a_bounded_read_stops_one_byte_past_the_cap() -> None:
    stream = Zeros()
    with pytest.raises(InputError) as caught:
        read_bounded(stream, "file", cap=3_000_000)  # type: ignore[arg-type]
    assert str(caught.value) == "file: the stream is larger than the cap of 3,000,000 bytes"
    assert stream.handed == 3_000_001


def test_at_the_cap_is_accepted_and_one_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    path.write_bytes(b"x" * 1000)
    assert read_text_bounded(path, "file", cap=1000) == "x" * 1000
    with pytest.raises(InputError, match=r"^file: .*doc\.txt is larger than the cap of 999 bytes$"):
        read_text_bounded(path, "file", cap=999)
    with pytest.raises(InputError, match=r"^documents\[0\]: cannot read .*missing"):
        read_bounded(tmp_path / "missing", "documents[0]")
    path.write_bytes(b"ok \xff")
    with pytest.raises(InputError, match=r"^file: is not UTF-8 text \(byte 3"):
        read_text_bounded(path, "file")


def _cli(workspace: Workspace, *args: str, stdin: object = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--workspace", str(workspace.path), *args], input=stdin)  # type: ignore[arg-type]
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("conversation", "ingest", "--agent", "a", "--session", "s", "--file", "/dev/zero"), "file"),
        (("reason", "run", "--agent", "a", "--method", "deductive", "--inputs", "/dev/zero"), "inputs"),
        (("fact", "import", "/dev/zero", "--format", "nt", "--agent", "a"), "files[0]"),
    ],
)
def test_the_cli_refuses_dev_zero_with_one_line(workspace: Workspace, args: tuple[str, ...], field: str) -> None:
    workspace.agents.add("a")
    before = snapshot_workspace(workspace)
    code, stderr = _cli(workspace, *args)
    assert (code, stderr.strip()) == (1, f"error: {field}: /dev/zero {CAP}")
    assert snapshot_workspace(workspace) == before


def test_standard_input_is_capped_too(workspace: Workspace) -> None:
    workspace.agents.add("a")
    with open("/dev/zero", "rb") as zeros:
        code, stderr = _cli(workspace, "conversation", "ingest", "--agent", "a", "--session", "s", "--file", "-",
                            stdin=zeros)  # fmt: skip
    assert (code, stderr.strip()) == (1, f"error: file: standard input {CAP}")


def test_jsonl_with_unicode_line_separators_ingests_as_written(workspace: Workspace, tmp_path: Path) -> None:
    workspace.agents.add("a")
    contents = [f"before{ch}after" for ch in LINE_BREAKS.replace("\r", "")] + ["crlf line end"]
    lines = [json.dumps({"role": "user", "content": text}, ensure_ascii=False) for text in contents]
    path = tmp_path / "messages.jsonl"
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1] + "\r\n", encoding="utf-8")
    code, stderr = _cli(workspace, "conversation", "ingest", "--agent", "a", "--session", "s", "--file", str(path))
    assert code == 0, stderr
    [conversation] = workspace.ports.conversations.list("a")
    stored = workspace.ports.conversations.messages(MessageQuery(conversation_uid=conversation.uid))
    assert [m.content for m in stored] == contents


def test_memory_admit_reads_the_same_jsonl() -> None:
    line = json.dumps({"content": "one\u2028two\x85three", "type": "fact"}, ensure_ascii=False)
    assert [c.content for c in read_candidates(line + "\n\n")] == ["one\u2028two\x85three"]


def test_a_jsonl_line_over_its_cap_and_json_nested_too_deep_are_one_line_errors() -> None:
    with pytest.raises(InputError, match=r"^line 2: longer than the cap of 10 characters$"):
        list(jsonl_lines('{"a": 1}\n' + "x" * 11, max_line=10))
    with pytest.raises(InputError, match=r"^line 1: JSON nested too deep$"):
        load_json("[" * 100_000 + "]" * 100_000, "line 1")
