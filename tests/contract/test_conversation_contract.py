"""Conversation and summary port contract: sessions, sequenced immutable messages, the summary DAG, search."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kg.clock import FixedClock
from kg.errors import ConflictError, InputError, NotFoundError
from kg.ids import new_id
from kg.models.conversation import (
    Conversation,
    Message,
    MessageInput,
    MessageQuery,
    Role,
    Summary,
    SummaryKind,
    SummaryMethod,
    estimate_tokens,
)
from kg.ports import GraphStore


@pytest.fixture
def store(memory_store: GraphStore) -> GraphStore:
    """The shared ``memory_store``: agents ``a`` and ``b`` on a backend that keeps memory."""
    return memory_store


def msg(content: str, role: str = "user", **over: Any) -> MessageInput:
    return MessageInput.model_validate({"role": role, "content": content, **over})


def conv(store: GraphStore, clock: FixedClock, session: str = "s1", agent: str = "a") -> Conversation:
    return store.conversations.open(agent, session, title=f"title {session}", now=clock.now())


def fill(store: GraphStore, clock: FixedClock, c: Conversation, n: int, start: int = 0) -> list[Message]:
    """Append ``n`` messages one minute apart."""
    out = []
    for i in range(start, start + n):
        clock.advance(timedelta(minutes=1))
        out += store.conversations.append(c.uid, [msg(f"message number {i}")], now=clock.now())
    return out


def leaf(c: Conversation, messages: list[Message], **over: Any) -> Summary:
    data: dict[str, Any] = {
        "uid": new_id("summary"), "agent_id": c.agent_id, "created_at": max(m.created_at for m in messages),
        "conversation_uid": c.uid, "kind": "leaf", "depth": 0, "content": "summary of " + ", ".join(
            m.content for m in messages), "token_count": 5, "source_token_count": sum(m.token_count for m in messages),
        "method": "extractive", "child_uids": [m.uid for m in messages],
        "earliest_at": min(m.created_at for m in messages), "latest_at": max(m.created_at for m in messages),
        "descendant_count": len(messages), **over,
    }  # fmt: skip
    return Summary.model_validate(data)


def condensed(c: Conversation, children: list[Summary], **over: Any) -> Summary:
    data: dict[str, Any] = {
        "uid": new_id("summary"), "agent_id": c.agent_id, "created_at": max(s.latest_at for s in children),
        "conversation_uid": c.uid, "kind": "condensed", "depth": children[0].depth + 1,
        "content": "condensed " + " / ".join(s.content for s in children), "token_count": 3,
        "source_token_count": sum(s.token_count for s in children), "method": "llm", "model": "stub-model",
        "child_uids": [s.uid for s in children], "earliest_at": min(s.earliest_at for s in children),
        "latest_at": max(s.latest_at for s in children),
        "descendant_count": sum(s.descendant_count for s in children), **over,
    }  # fmt: skip
    return Summary.model_validate(data)


# ---------------------------------------------------------------------------------------- conversations


def test_open_creates_an_active_conversation_once_per_agent_and_session(store, clock):
    c = conv(store, clock)
    assert (c.agent_id, c.scope, c.session_key, c.title, c.active) == ("a", "agent:a", "s1", "title s1", True)
    assert c.created_at == c.updated_at == clock.now()
    clock.advance(timedelta(minutes=1))
    again = store.conversations.open("a", "s1", title="other title", now=clock.now())
    assert again == c  # existing: returned unchanged
    other_agent = store.conversations.open("b", "s1", now=clock.now())
    assert other_agent.uid != c.uid and other_agent.agent_id == "b"
    assert store.conversations.get(c.uid) == c
    assert store.conversations.find("a", "s1") == c
    assert store.conversations.find("a", "nope") is None
    assert store.conversations.find("zz", "s1") is None


def test_open_refuses_an_unknown_agent_and_bad_session_keys(store, clock):
    with pytest.raises(NotFoundError, match="agent_id"):
        store.conversations.open("ghost", "s1", now=clock.now())
    for bad in ("", "a\nb", "x" * 257):
        with pytest.raises(InputError, match="session_key"):
            store.conversations.open("a", bad, now=clock.now())
    assert store.conversations.list("a") == []


def test_get_of_an_unknown_conversation_is_not_found(store):
    with pytest.raises(NotFoundError, match="conversation"):
        store.conversations.get(new_id("conversation"))


def test_list_is_newest_activity_first_and_filters_active(store, clock):
    first = conv(store, clock, "s1")
    clock.advance(timedelta(minutes=1))
    second = conv(store, clock, "s2")
    conv(store, clock, "other", agent="b")
    assert [c.uid for c in store.conversations.list("a")] == [second.uid, first.uid]
    clock.advance(timedelta(minutes=1))
    store.conversations.append(first.uid, [msg("hello")], now=clock.now())
    listed = store.conversations.list("a")
    assert [c.uid for c in listed] == [first.uid, second.uid]
    assert listed[0].updated_at == clock.now()
    assert [c.uid for c in store.conversations.list("a", active=True)] == [first.uid, second.uid]
    assert store.conversations.list("a", active=False) == []
    with pytest.raises(NotFoundError, match="agent_id"):
        store.conversations.list("ghost")


# ---------------------------------------------------------------------------------------- messages


def test_append_numbers_messages_consecutively_and_reads_them_back(store, clock):
    c = conv(store, clock)
    first = store.conversations.append(
        c.uid,
        [msg("You are helpful.", "system"), msg("hi"), msg("hello!", "assistant", token_count=7)],
        now=clock.now(),
    )
    assert [m.seq for m in first] == [0, 1, 2]
    assert [m.role for m in first] == [Role.SYSTEM, Role.USER, Role.ASSISTANT]
    assert first[0].token_count == estimate_tokens("You are helpful.") and first[2].token_count == 7
    assert all(m.created_at == clock.now() and m.conversation_uid == c.uid for m in first)
    assert all((m.agent_id, m.scope) == ("a", "agent:a") for m in first)
    clock.advance(timedelta(minutes=1))
    when = clock.now() - timedelta(hours=1)
    second = store.conversations.append(
        c.uid,
        [
            msg("", "assistant", tool_call_id="call-1"),
            msg("42", "tool", tool_call_id="call-1", name="calculator", created_at=when),
        ],
        now=clock.now(),
    )
    assert [m.seq for m in second] == [3, 4]
    assert second[1].created_at == when and second[1].name == "calculator" and second[1].tool_call_id == "call-1"
    stored = store.conversations.messages(MessageQuery(conversation_uid=c.uid))
    assert stored == first + second
    assert all(isinstance(m, Message) for m in stored)
    assert Message.model_validate(stored[4].model_dump()) == stored[4]  # reads equal validated models
    assert store.conversations.get_messages([second[1].uid, first[0].uid, new_id("message")]) == {
        second[1].uid: second[1],
        first[0].uid: first[0],
    }
    assert store.conversations.append(c.uid, [], now=clock.now()) == []


def test_append_to_an_unknown_conversation_is_not_found_and_writes_nothing(store, clock):
    with pytest.raises(NotFoundError, match="conversation"):
        store.conversations.append(new_id("conversation"), [msg("x")], now=clock.now())
    with pytest.raises(NotFoundError, match="conversation"):
        store.conversations.messages(MessageQuery(conversation_uid=new_id("conversation")))


def test_sequences_are_per_conversation(store, clock):
    c1, c2 = conv(store, clock, "s1"), conv(store, clock, "s2")
    store.conversations.append(c1.uid, [msg("a"), msg("b")], now=clock.now())
    assert [m.seq for m in store.conversations.append(c2.uid, [msg("c")], now=clock.now())] == [0]
    assert [m.seq for m in store.conversations.append(c1.uid, [msg("d")], now=clock.now())] == [2]


def test_message_query_bounds(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 6)
    q = store.conversations.messages
    assert [m.seq for m in q(MessageQuery(conversation_uid=c.uid, from_seq=2, to_seq=4))] == [2, 3, 4]
    assert [m.seq for m in q(MessageQuery(conversation_uid=c.uid, since=ms[3].created_at))] == [3, 4, 5]
    assert [m.seq for m in q(MessageQuery(conversation_uid=c.uid, before=ms[2].created_at))] == [0, 1]
    assert [m.seq for m in q(MessageQuery(conversation_uid=c.uid, from_seq=1, limit=2))] == [1, 2]


# ---------------------------------------------------------------------------------------- message search


def test_full_text_search_needs_every_word_and_is_oldest_first(store, clock):
    c, other = conv(store, clock, "s1"), conv(store, clock, "s2")
    texts = ["The deploy failed on Friday", "Deploy succeeded after the fix", "Lunch plans", "deploy failed again"]
    ms = [store.conversations.append(c.uid, [msg(t)], now=clock.advance(timedelta(minutes=1)) or clock.now())[0]
          for t in texts]  # fmt: skip
    store.conversations.append(other.uid, [msg("deploy failed elsewhere")], now=clock.now())
    search = store.conversations.search
    assert [m.uid for m in search("deploy failed", conversation_uids=[c.uid])] == [ms[0].uid, ms[3].uid]
    assert [m.uid for m in search("DEPLOY", conversation_uids=[c.uid])] == [ms[0].uid, ms[1].uid, ms[3].uid]
    assert len(search("deploy failed", conversation_uids=[c.uid, other.uid])) == 3
    assert [m.uid for m in search("succ*", conversation_uids=[c.uid])] == [ms[1].uid]
    assert [m.uid for m in search("deploy", conversation_uids=[c.uid], limit=1)] == [ms[0].uid]
    assert [m.uid for m in search("deploy", conversation_uids=[c.uid], since=ms[1].created_at)] == [
        ms[1].uid, ms[3].uid]  # fmt: skip
    assert [m.uid for m in search("deploy", conversation_uids=[c.uid], before=ms[1].created_at)] == [ms[0].uid]
    assert search("deploy", conversation_uids=[]) == []
    # FTS5 syntax in the pattern is searched as words, never run as syntax
    assert search('deploy" OR "lunch', conversation_uids=[c.uid]) == []
    assert [m.uid for m in search("NEAR(lunch plans)", conversation_uids=[c.uid])] == []
    assert [m.uid for m in search("lunch: plans^", conversation_uids=[c.uid])] == [ms[2].uid]


def test_regex_search(store, clock):
    c = conv(store, clock)
    ms = store.conversations.append(
        c.uid, [msg("error E1234 in build"), msg("all good"), msg("Error e99 again")], now=clock.now()
    )
    search = store.conversations.search
    assert [m.uid for m in search(r"[Ee]\d+", conversation_uids=[c.uid], mode="regex")] == [ms[0].uid, ms[2].uid]
    assert [m.uid for m in search(r"(?i)^error", conversation_uids=[c.uid], mode="regex")] == [ms[0].uid, ms[2].uid]
    assert [m.uid for m in search(r"^error", conversation_uids=[c.uid], mode="regex")] == [ms[0].uid]


def test_search_refuses_bad_input(store, clock):
    c = conv(store, clock)
    search = store.conversations.search
    for pattern, mode, field in (
        ("([", "regex", "pattern"),
        ("", "full_text", "pattern"),
        ("   ", "regex", "pattern"),
        ("!!!", "full_text", "pattern"),
        ("x" * 1001, "full_text", "pattern"),
        ("x", "fuzzy", "mode"),
    ):
        with pytest.raises(InputError) as info:
            search(pattern, conversation_uids=[c.uid], mode=mode)
        assert info.value.field == field
    with pytest.raises(InputError) as info:
        search("x", conversation_uids=[c.uid], limit=0)
    assert info.value.field == "limit"
    with pytest.raises(InputError) as info:
        store.summaries.search("([", conversation_uids=[c.uid], mode="regex")
    assert info.value.field == "pattern"


def test_cjk_text_is_found_by_substring(store, clock):
    c = conv(store, clock)
    ms = store.conversations.append(
        c.uid,
        [
            msg("我们明天在北京开会讨论预算"),
            msg("東京タワーに行きました"),
            msg("회의는 내일입니다"),
            msg("plain English"),
        ],
        now=clock.now(),
    )
    search = store.conversations.search
    assert [m.uid for m in search("北京开会", conversation_uids=[c.uid])] == [ms[0].uid]
    assert [m.uid for m in search("北京", conversation_uids=[c.uid])] == [ms[0].uid]  # shorter than a trigram
    assert [m.uid for m in search("タワー", conversation_uids=[c.uid])] == [ms[1].uid]
    assert [m.uid for m in search("내일", conversation_uids=[c.uid])] == [ms[2].uid]
    assert [m.uid for m in search("预算 北京", conversation_uids=[c.uid])] == [ms[0].uid]
    assert search("上海", conversation_uids=[c.uid]) == []
    assert [m.uid for m in search("北京|東京", conversation_uids=[c.uid], mode="regex")] == [ms[0].uid, ms[1].uid]


# ---------------------------------------------------------------------------------------- summaries


def test_summary_dag_add_read_roots_parents_and_uncovered(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 6)
    l1, l2 = leaf(c, ms[0:2]), leaf(c, ms[2:4])
    assert store.summaries.add(l1) == l1
    store.summaries.add(l2)
    assert store.summaries.get_many([l1.uid, l2.uid, new_id("summary")]) == {l1.uid: l1, l2.uid: l2}
    assert [m.uid for m in store.summaries.uncovered_messages(c.uid)] == [m.uid for m in ms[4:]]
    assert [s.uid for s in store.summaries.roots(c.uid)] == [l1.uid, l2.uid]
    top = condensed(c, [l1, l2])
    store.summaries.add(top)
    assert store.summaries.get_many([top.uid])[top.uid].child_uids == [l1.uid, l2.uid]
    assert store.summaries.roots(c.uid) == [top]
    assert [s.uid for s in store.summaries.list(c.uid)] == [l1.uid, top.uid, l2.uid]  # earliest_at, then uid
    assert [s.uid for s in store.summaries.list(c.uid, depth=0)] == [l1.uid, l2.uid]
    assert store.summaries.list(c.uid, depth=1) == [top]
    assert store.summaries.parent_of(ms[0].uid) == l1.uid
    assert store.summaries.parent_of(l2.uid) == top.uid
    assert store.summaries.parent_of(top.uid) is None
    assert store.summaries.parent_of(ms[5].uid) is None
    assert top.descendant_count == 4 and top.earliest_at == ms[0].created_at and top.latest_at == ms[3].created_at


def test_summary_list_is_chronological(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 4)
    late, early = leaf(c, ms[2:4]), leaf(c, ms[0:2])
    store.summaries.add(late)
    store.summaries.add(early)
    assert [s.uid for s in store.summaries.list(c.uid)] == [early.uid, late.uid]
    assert [s.uid for s in store.summaries.roots(c.uid)] == [early.uid, late.uid]


def test_summary_reads_of_an_unknown_conversation_are_not_found(store):
    ghost = new_id("conversation")
    for call in (store.summaries.list, store.summaries.roots, store.summaries.uncovered_messages):
        with pytest.raises(NotFoundError, match="conversation"):
            call(ghost)


def test_a_child_is_covered_once(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 4)
    store.summaries.add(leaf(c, ms[0:2]))
    before = store.summaries.list(c.uid)
    with pytest.raises(ConflictError, match="already covered"):
        store.summaries.add(leaf(c, ms[1:3]))
    assert store.summaries.list(c.uid) == before  # nothing written
    assert [m.uid for m in store.summaries.uncovered_messages(c.uid)] == [ms[2].uid, ms[3].uid]


def test_children_must_exist_in_the_conversation_at_the_right_depth(store, clock):
    c, other = conv(store, clock, "s1"), conv(store, clock, "s2")
    ms = fill(store, clock, c, 4)
    foreign = store.conversations.append(other.uid, [msg("elsewhere")], now=clock.now())
    with pytest.raises(ConflictError, match="not a message"):
        store.summaries.add(leaf(c, [ms[0], foreign[0]]))
    with pytest.raises(ConflictError, match="not a message"):
        store.summaries.add(leaf(c, ms[0:1], child_uids=[new_id("message")]))
    l1, l2 = leaf(c, ms[0:2]), leaf(c, ms[2:4])
    store.summaries.add(l1)
    store.summaries.add(l2)
    with pytest.raises(ConflictError, match="not a message"):  # a leaf covers messages, not summaries
        store.summaries.add(leaf(c, ms[0:1], child_uids=[l1.uid]))
    with pytest.raises(ConflictError, match="depth"):  # depth 2 over depth-0 summaries
        store.summaries.add(condensed(c, [l1, l2], depth=2))
    with pytest.raises(ConflictError, match="not a summary"):  # a condensed summary covers summaries
        store.summaries.add(condensed(c, [l1], child_uids=[ms[0].uid]))
    assert store.summaries.roots(c.uid) == [l1, l2]


def test_summary_of_an_unknown_conversation_or_taken_uid(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 2)
    with pytest.raises(NotFoundError, match="conversation"):
        store.summaries.add(leaf(c, ms, conversation_uid=new_id("conversation")))
    first = leaf(c, ms[:1])
    store.summaries.add(first)
    with pytest.raises(ConflictError, match="already exists"):
        store.summaries.add(leaf(c, ms[1:], uid=first.uid))


def test_summary_must_match_its_conversation_and_children(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 3)
    for over, field in (
        ({"agent_id": "b"}, "agent_id"),
        ({"scope": "global"}, "scope"),
        ({"descendant_count": 5}, "descendant_count"),
        ({"earliest_at": ms[0].created_at - timedelta(seconds=1)}, "earliest_at"),
        ({"latest_at": ms[2].created_at + timedelta(seconds=1)}, "latest_at"),
    ):
        with pytest.raises(InputError) as info:
            store.summaries.add(leaf(c, ms, **over))
        assert info.value.field == field
    assert store.summaries.list(c.uid) == []


def test_summary_search(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 6)
    s1 = store.summaries.add(leaf(c, ms[0:2], content="Decided to use PostgreSQL 16 for the 项目数据库"))
    s2 = store.summaries.add(leaf(c, ms[2:4], content="Budget review; decided nothing"))
    s3 = store.summaries.add(leaf(c, ms[4:6], content="Postgres migration done"))
    search = store.summaries.search
    assert [s.uid for s in search("decided", conversation_uids=[c.uid])] == [s1.uid, s2.uid]
    assert [s.uid for s in search("项目数据", conversation_uids=[c.uid])] == [s1.uid]
    assert [s.uid for s in search(r"Postgre(SQL|s)", conversation_uids=[c.uid], mode="regex")] == [s1.uid, s3.uid]
    # time filters keep summaries whose span overlaps [since, before)
    assert [s.uid for s in search("decided", conversation_uids=[c.uid], since=ms[1].created_at)] == [s1.uid, s2.uid]
    assert [s.uid for s in search("decided", conversation_uids=[c.uid], since=ms[2].created_at)] == [s2.uid]
    assert [s.uid for s in search("decided", conversation_uids=[c.uid], before=ms[2].created_at)] == [s1.uid]
    assert search("decided", conversation_uids=[c.uid], limit=1) == [s1]
    assert search("decided", conversation_uids=[]) == []


def test_models_of_the_dag_round_trip(store, clock):
    c = conv(store, clock)
    ms = fill(store, clock, c, 2)
    s = leaf(c, ms, method=SummaryMethod.LLM, model="m-1")
    store.summaries.add(s)
    got = store.summaries.get_many([s.uid])[s.uid]
    assert got == s and got.kind is SummaryKind.LEAF and got.method is SummaryMethod.LLM and got.model == "m-1"
    assert Summary.model_validate(got.model_dump()) == got  # reads equal validated models
    assert store.summaries.list(c.uid)[0].model_dump() == s.model_dump()
