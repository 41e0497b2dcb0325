"""conversation_ingest and conversation_compact (cli/tools/conversation_admin.py) and the ``mabos conversation
ingest|compact`` commands that run them (issue 18: the commands called ConversationService directly, past the
registry's validation). Real workspace and SQLite; no embedder needed; the default deterministic summarizer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.tools.conversation_admin import Compacted, Ingested
from kg.errors import NotFoundError
from kg.models.conversation import MessageQuery
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace
from tests.unit.tool_calls import call, mabos, refused_unchanged, spy_on

pytestmark = pytest.mark.usefixtures("no_embedder")
Dialogue = Callable[[int], list[dict[str, Any]]]


def test_ingest_as_messages_or_jsonl_then_compact(ws: Workspace, long_dialogue: Dialogue) -> None:
    rows = long_dialogue(2)
    first = call(ws, "conversation_ingest", session_key="s1", messages=rows[:10], title="Acme call")
    assert isinstance(first, Ingested) and (first.created, first.appended, first.first_seq) == (True, 10, 0)
    jsonl = "\n".join(json.dumps(r) for r in rows[10:]) + "\n\n"
    more = call(ws, "conversation_ingest", session_key="s1", jsonl=jsonl)
    assert (more.created, more.appended, more.conversation_uid) == (False, len(rows) - 10, first.conversation_uid)
    assert more.extraction is None, "every_messages is off by default"
    stored = ws.ports.conversations.messages(MessageQuery(conversation_uid=first.conversation_uid))
    assert [m.content for m in stored] == [r["content"] for r in rows]
    report = call(ws, "conversation_compact", session_key="s1")
    assert isinstance(report, Compacted) and report.compacted and report.created
    assert report.context_tokens_after < report.context_tokens_before
    assert report.extraction is not None and report.extraction["windows"] >= 1, "after_compact is on by default"
    quiet = call(ws, "conversation_compact", session_key="s1", budget=100_000_000)
    assert not quiet.compacted and quiet.note.startswith("not needed")


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("conversation_ingest", {"messages": [{"role": "user", "content": "x"}]}, "session_key"),
        ("conversation_ingest", {"session_key": "", "messages": [{"role": "user", "content": "x"}]}, "session_key"),
        ("conversation_ingest", {"session_key": "a\nb", "jsonl": '{"role": "user", "content": "x"}'}, "session_key"),
        ("conversation_ingest", {"session_key": "s"}, "messages"),
        ("conversation_ingest", {"session_key": "s", "messages": [{"role": "user", "content": "x"}],
                                 "jsonl": '{"role": "user", "content": "x"}'}, "messages"),
        ("conversation_ingest", {"session_key": "s", "messages": []}, "messages"),
        ("conversation_ingest", {"session_key": "s", "messages": "hello"}, "messages"),
        ("conversation_ingest", {"session_key": "s", "messages": [{"role": "king", "content": "x"}]}, "messages"),
        ("conversation_ingest", {"session_key": "s", "messages": [{"content": "x"}]}, "messages"),
        ("conversation_ingest", {"session_key": "s", "messages": [{"role": "user", "content": 5}]}, "messages"),
        ("conversation_ingest", {"session_key": "s", "jsonl": ""}, "jsonl"),
        ("conversation_ingest", {"session_key": "s", "jsonl": '{"role": "user", "content": "x"}\nnot json'}, "line 2"),
        ("conversation_ingest", {"session_key": "s", "jsonl": '{"role": "user"}'}, "line 1: content"),
        ("conversation_ingest", {"session_key": "s", "jsonl": "\n\n"}, "messages"),
        ("conversation_ingest", {"session_key": "s", "jsonl": '{"role": "user", "content": "x"}', "title": 3},
         "title"),
        ("conversation_compact", {}, "session_key"),
        ("conversation_compact", {"session_key": "s1", "budget": 0}, "budget"),
        ("conversation_compact", {"session_key": "s1", "budget": "lots"}, "budget"),
        ("conversation_compact", {"session_key": "s1", "force": "yes please"}, "force"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
    ws: Workspace, long_dialogue: Dialogue, name: str, arguments: dict[str, Any], field: str
) -> None:
    call(ws, "conversation_ingest", session_key="s1", messages=long_dialogue(1)[:5])
    assert refused_unchanged(ws, name, arguments).field.split(".")[0] == field


def test_sessions_belong_to_their_agent(ws: Workspace, long_dialogue: Dialogue) -> None:
    mine = call(ws, "conversation_ingest", session_key="deal", messages=long_dialogue(2))
    before = snapshot_workspace(ws)
    with pytest.raises(NotFoundError, match=r"^session: agent 'b' has no conversation 'deal'"):
        call(ws, "conversation_compact", agent_id="b", session_key="deal", force=True)
    with pytest.raises(NotFoundError, match=r"^agent: no agent .nobody."):
        call(ws, "conversation_ingest", agent_id="nobody", session_key="deal", jsonl='{"role": "user", "content": "x"}')
    assert snapshot_workspace(ws) == before
    said = [{"role": "user", "content": "b here"}]
    theirs = call(ws, "conversation_ingest", agent_id="b", session_key="deal", messages=said)
    assert theirs.created and theirs.conversation_uid != mine.conversation_uid


def test_the_commands_run_the_tools_with_unchanged_output(
    ws: Workspace, long_dialogue: Dialogue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_on(monkeypatch, "conversation_ingest", "conversation_compact")
    feed = tmp_path / "m.jsonl"
    feed.write_text("\n".join(json.dumps(r) for r in long_dialogue(2)) + "\n", encoding="utf-8")
    human = mabos(ws, "conversation", "ingest", "--agent", "a", "--session", "s1", "--file", str(feed))
    assert human.exit_code == 0 and " messages (" in human.stdout and "created s1 (seq 0-" in human.stdout
    again = json.loads(mabos(ws, "conversation", "ingest", "--agent", "a", "--session", "s1", "--file", str(feed),
                             "--json").stdout)  # fmt: skip
    assert set(again) == {"agent_id", "session_key", "conversation_uid", "created", "appended", "first_seq",
                          "last_seq", "tokens"}, "--json is the ingest result as before"  # fmt: skip
    compacted = mabos(ws, "conversation", "compact", "--agent", "a", "--session", "s1", "--json")
    report = json.loads(compacted.stdout)
    assert compacted.exit_code == 0 and report["compacted"] and "extraction" not in report
    shown = mabos(ws, "conversation", "compact", "--agent", "a", "--session", "s1", "--budget", "100000000")
    assert shown.exit_code == 0 and "Compaction" in shown.stdout
    bad = mabos(ws, "conversation", "ingest", "--agent", "a", "--session", "s1", "--file", str(tmp_path / "none"))
    assert bad.exit_code == 1 and bad.stderr.startswith("error: file: cannot read")
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"role": "user", "content": "ok"}\n{"role": 7}\n', encoding="utf-8")
    refused = mabos(ws, "conversation", "ingest", "--agent", "a", "--session", "s1", "--file", str(junk))
    assert refused.exit_code == 1 and refused.stderr.startswith("error: line 2: ") and refused.stderr.count("\n") == 1
    assert seen == ["conversation_ingest", "conversation_ingest", "conversation_compact", "conversation_compact",
                    "conversation_ingest"]  # fmt: skip
