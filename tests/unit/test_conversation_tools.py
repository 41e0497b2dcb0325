"""lcm_grep, lcm_describe and lcm_expand on a real workspace store (SQLite) with a real summary DAG."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kg.conversation.tools import GREP_MAX_CHARS, lcm_describe, lcm_expand, lcm_grep, snippet
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models.conversation import Conversation, Message, MessageInput, MessageQuery, Summary
from kg.regex import compile_regex
from kg.workspace import Workspace

#: ``ws`` (tests/unit/conftest.py) is agents ``a`` and ``b`` on the fixed clock; these tests need no embedder.
pytestmark = pytest.mark.usefixtures("no_embedder")


def add(ws: Workspace, c: Conversation, texts: list[str], *, role: str = "user") -> list[Message]:
    """Append messages one minute apart after the conversation's last one."""
    already = len(ws.ports.conversations.messages(MessageQuery(conversation_uid=c.uid)))
    start = ws.clock.now()
    inputs = [MessageInput(role=role, content=t, created_at=start + timedelta(minutes=already + i))
              for i, t in enumerate(texts)]  # fmt: skip
    return ws.ports.conversations.append(c.uid, inputs, now=start)


def summarise(ws: Workspace, c: Conversation, children: list[Any], content: str) -> Summary:
    leaf = isinstance(children[0], Message)
    times = [(m.created_at, m.created_at) if leaf else (m.earliest_at, m.latest_at) for m in children]
    return ws.ports.summaries.add(Summary(
        uid=new_id("summary"), agent_id=c.agent_id, scope=c.scope, created_at=ws.clock.now(),
        conversation_uid=c.uid, kind="leaf" if leaf else "condensed", depth=0 if leaf else children[0].depth + 1,
        content=content, token_count=-(-len(content) // 4), source_token_count=sum(m.token_count for m in children),
        method="extractive", child_uids=[m.uid for m in children], earliest_at=min(t[0] for t in times),
        latest_at=max(t[1] for t in times),
        descendant_count=len(children) if leaf else sum(s.descendant_count for s in children),
    ))  # fmt: skip


@pytest.fixture
def dag(ws: Workspace) -> dict[str, Any]:
    """Agent a: 16 messages; leaves over 0-3, 4-7, 8-11, 12-15; two depth-1 summaries; one depth-2 root."""
    c = ws.ports.conversations.open("a", "s1", now=ws.clock.now())
    ms = add(ws, c, [f"message {i}: the deploy token is TK-{i:03d} for host{i}.example.org" for i in range(16)])
    leaves = [summarise(ws, c, ms[i : i + 4], f"leaf {i // 4}: deploy tokens TK-{i:03d}..") for i in range(0, 16, 4)]
    mids = [summarise(ws, c, leaves[i : i + 2], f"condensed {i // 2}: deploy tokens") for i in (0, 2)]
    root = summarise(ws, c, mids, "root: all deploy tokens of the week")
    return {"conv": c, "messages": ms, "leaves": leaves, "mids": mids, "root": root}


# ------------------------------------------------------------------------------------------ grep


def test_grep_regex_over_both_cites_ids_with_snippets(ws, dag):
    r = lcm_grep(ws.ports, "a", r"TK-00[0-4]")
    kinds = [(h.kind, h.uid) for h in r.hits]
    assert ("message", dag["messages"][3].uid) in kinds and ("summary", dag["leaves"][0].uid) in kinds
    assert [h.uid for h in r.hits if h.kind == "message"] == [m.uid for m in dag["messages"][:5]]
    assert [h.at for h in r.hits] == sorted(h.at for h in r.hits)  # oldest first
    hit = next(h for h in r.hits if h.uid == dag["messages"][2].uid)
    assert "TK-002" in hit.snippet and hit.matches == 1 and hit.seq == 2 and hit.role == "user"
    assert r.conversations == [dag["conv"].uid] and not r.truncated
    assert r.total_chars == sum(len(h.snippet) for h in r.hits)


def test_grep_scope_and_full_text_mode(ws, dag):
    only_summaries = lcm_grep(ws.ports, "a", "deploy tokens", mode="full_text", scope="summaries")
    assert {h.kind for h in only_summaries.hits} == {"summary"} and len(only_summaries.hits) == 7
    assert all("deploy" in h.snippet.lower() for h in only_summaries.hits)
    only_messages = lcm_grep(ws.ports, "a", "HOST7", mode="full_text", scope="messages")
    assert [h.uid for h in only_messages.hits] == [dag["messages"][7].uid]
    assert lcm_grep(ws.ports, "a", "HOST7", scope="messages").hits == []  # regex is case-sensitive


def test_grep_time_window_limit_and_conversation(ws, dag):
    ms = dag["messages"]
    r = lcm_grep(ws.ports, "a", "message", scope="messages", since=ms[4].created_at, before=ms[6].created_at)
    assert [h.uid for h in r.hits] == [ms[4].uid, ms[5].uid]
    r = lcm_grep(ws.ports, "a", "message", scope="messages", limit=3)
    assert [h.uid for h in r.hits] == [m.uid for m in ms[:3]] and r.truncated and r.truncated_by == ["limit"]
    assert not lcm_grep(ws.ports, "a", "message", scope="messages", limit=16).truncated
    other = ws.ports.conversations.open("a", "s2", now=ws.clock.now())
    add(ws, other, ["a message elsewhere"])
    assert len(lcm_grep(ws.ports, "a", "message", scope="messages").hits) == 17
    assert len(lcm_grep(ws.ports, "a", "message", scope="messages", conversation="s2").hits) == 1
    assert len(lcm_grep(ws.ports, "a", "message", scope="messages", conversation=dag["conv"].uid).hits) == 16


def test_grep_caps_the_result_at_40000_characters(ws):
    c = ws.ports.conversations.open("a", "big", now=ws.clock.now())
    add(ws, c, [("x" * 500 + " needle " + "y" * 500) for _ in range(400)])
    r = lcm_grep(ws.ports, "a", "needle", limit=1000)
    assert r.truncated and r.truncated_by == ["chars"]
    assert r.total_chars <= GREP_MAX_CHARS < r.total_chars + len(r.hits[0].snippet)
    assert all("needle" in h.snippet and h.snippet.startswith("...") for h in r.hits)
    assert 100 < len(r.hits) < 400


def test_snippet_windows():
    assert snippet("abc", compile_regex("b"), context=10) == ("abc", 1)
    text, n = snippet("a" * 50 + "XY" + "b" * 50, compile_regex("XY"), context=5)
    assert (text, n) == ("...aaaaaXYbbbbb...", 1)
    assert snippet("no match here", compile_regex("zzz"), context=3) == ("no m...", 0)


def test_grep_bad_input_is_one_line_and_names_the_field(ws, dag):
    for kwargs, field in (
        ({"pattern": "(unclosed"}, "pattern"),
        ({"pattern": ""}, "pattern"),
        ({"pattern": "!!!", "mode": "full_text"}, "pattern"),
        ({"pattern": "x", "mode": "fuzzy"}, "mode"),
        ({"pattern": "x", "scope": "all"}, "scope"),
        ({"pattern": "x", "limit": 0}, "limit"),
        ({"pattern": "x", "since": dag["messages"][5].created_at, "before": dag["messages"][1].created_at}, "before"),
    ):
        with pytest.raises(InputError) as err:
            lcm_grep(ws.ports, "a", **kwargs)
        assert err.value.field == field and "\n" not in str(err.value)
    with pytest.raises(InputError, match=r"^pattern: is not a valid regular expression"):
        lcm_grep(ws.ports, "a", "[z-a]")
    with pytest.raises(InputError, match=r"^agent:"):
        lcm_grep(ws.ports, "Not An Agent", "x")


def test_grep_sees_only_the_agents_own_conversations(ws, dag):
    assert lcm_grep(ws.ports, "b", "TK-").hits == []
    assert lcm_grep(ws.ports, "b", "TK-").conversations == []
    for name in ("s1", dag["conv"].uid):
        with pytest.raises(NotFoundError, match="agent 'b' has no conversation"):
            lcm_grep(ws.ports, "b", "TK-", conversation=name)


# ------------------------------------------------------------------------------------------ describe


def test_describe_a_leaf_with_its_lineage(ws, dag):
    leaf = dag["leaves"][2]
    d = lcm_describe(ws.ports, "a", leaf.uid)
    assert (d.kind, d.depth, d.content, d.method, d.model) == ("leaf", 0, leaf.content, "extractive", None)
    assert d.lineage == [dag["mids"][1].uid, dag["root"].uid] and d.parent_uid == dag["mids"][1].uid
    assert d.root_uid == dag["root"].uid and d.child_kind == "message"
    assert d.child_uids == [m.uid for m in dag["messages"][8:12]] and d.descendant_count == 4
    assert (d.earliest_at, d.latest_at) == (dag["messages"][8].created_at, dag["messages"][11].created_at)
    assert d.token_count == leaf.token_count and d.source_token_count == leaf.source_token_count
    assert d.compression == pytest.approx(leaf.token_count / leaf.source_token_count, abs=1e-4)


def test_describe_the_root(ws, dag):
    d = lcm_describe(ws.ports, "a", dag["root"].uid)
    assert (d.kind, d.depth, d.lineage, d.parent_uid, d.root_uid) == ("condensed", 2, [], None, dag["root"].uid)
    assert d.child_kind == "summary" and d.child_uids == [m.uid for m in dag["mids"]] and d.descendant_count == 16


def test_describe_refuses_other_agents_and_bad_ids(ws, dag):
    with pytest.raises(NotFoundError, match="agent 'b' has no summary"):
        lcm_describe(ws.ports, "b", dag["root"].uid)
    with pytest.raises(NotFoundError, match="agent 'a' has no summary"):
        lcm_describe(ws.ports, "a", new_id("summary"))
    with pytest.raises(InputError, match=r"^summary_uid: must be a summary id"):
        lcm_describe(ws.ports, "a", dag["messages"][0].uid)


# ------------------------------------------------------------------------------------------ expand


def test_expand_everything_recovers_every_message(ws, dag):
    r = lcm_expand(ws.ports, "a", dag["root"].uid, max_depth=3, include_messages=True, max_tokens=100_000)
    assert not r.truncated and r.unexpanded == []
    assert [i.uid for i in r.items if i.level == 1] == [m.uid for m in dag["mids"]]
    assert [i.uid for i in r.items if i.level == 2] == [s.uid for s in dag["leaves"]]
    assert [i.uid for i in r.items if i.level == 3] == [m.uid for m in dag["messages"]]
    assert r.items[-1].parent_uid == dag["leaves"][3].uid and r.items[-1].role == "user"
    assert r.total_tokens == sum(i.tokens for i in r.items)


def test_expand_without_messages_stops_at_leaves_untruncated(ws, dag):
    r = lcm_expand(ws.ports, "a", dag["root"].uid, max_depth=5)
    assert {i.kind for i in r.items} == {"summary"} and len(r.items) == 6 and not r.truncated


def test_expand_depth_cap_says_truncated(ws, dag):
    r = lcm_expand(ws.ports, "a", dag["root"].uid, max_depth=1)
    assert [i.uid for i in r.items] == [m.uid for m in dag["mids"]]
    assert r.truncated and r.truncated_by == ["depth"] and r.unexpanded == [m.uid for m in dag["mids"]]
    r = lcm_expand(ws.ports, "a", dag["root"].uid, max_depth=2, include_messages=True)
    assert r.truncated and r.unexpanded == [s.uid for s in dag["leaves"]]
    leaf = lcm_expand(ws.ports, "a", dag["leaves"][0].uid, max_depth=1, include_messages=True)
    assert not leaf.truncated and [i.uid for i in leaf.items] == [m.uid for m in dag["messages"][:4]]


def test_expand_token_cap_says_truncated(ws, dag):
    full = lcm_expand(ws.ports, "a", dag["root"].uid, include_messages=True, max_tokens=100_000)
    cap = sum(i.tokens for i in full.items[:9])  # both mids, all leaves and the first 3 messages
    r = lcm_expand(ws.ports, "a", dag["root"].uid, include_messages=True, max_tokens=cap)
    assert r.items == full.items[:9] and r.total_tokens == cap
    assert r.truncated and r.truncated_by == ["tokens"]
    assert r.unexpanded == [s.uid for s in dag["leaves"]]
    tiny = lcm_expand(ws.ports, "a", dag["root"].uid, max_tokens=1)
    assert tiny.items == [] and tiny.truncated and tiny.unexpanded == [dag["root"].uid]


def test_expand_refuses_other_agents_and_bad_caps(ws, dag):
    with pytest.raises(NotFoundError):
        lcm_expand(ws.ports, "b", dag["root"].uid)
    for kwargs, field in (({"max_depth": 0}, "max_depth"), ({"max_tokens": 0}, "max_tokens"),
                          ({"max_depth": 65}, "max_depth")):  # fmt: skip
        with pytest.raises(InputError) as err:
            lcm_expand(ws.ports, "a", dag["root"].uid, **kwargs)
        assert err.value.field == field


def test_grep_with_a_catastrophic_regex_returns_instead_of_hanging(ws: Workspace) -> None:
    """Issue 18: 34 a's and a '!' made Python's re backtrack 2^34 times on '(a+)+$' (over 60 s at 100% CPU)."""
    c = ws.ports.conversations.open("a", "s1", now=ws.clock.now())
    add(ws, c, ["a" * 34 + "!", "aaaa"])
    found = lcm_grep(ws.ports, "a", "(a+)+$", mode="regex")
    assert [h.snippet for h in found.hits] == ["aaaa"] and not found.truncated


def test_grep_refuses_a_regex_it_cannot_run_in_linear_time(ws: Workspace) -> None:
    with pytest.raises(InputError, match=r"^pattern: .*backreference") as caught:
        lcm_grep(ws.ports, "a", r"(a)\1", mode="regex")
    assert "\n" not in str(caught.value)


def test_grep_past_its_deadline_returns_what_it_found_and_says_so(ws: Workspace) -> None:
    c = ws.ports.conversations.open("a", "s1", now=ws.clock.now())
    add(ws, c, ["alpha one", "alpha two"])
    found = lcm_grep(ws.ports, "a", "alpha", mode="regex", deadline=0)
    assert found.hits == [] and found.truncated and found.truncated_by == ["deadline"]
