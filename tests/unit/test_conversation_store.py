"""SQLite specifics of the conversation store: immutability triggers, FTS5 and trigram search, the migration,
outbox events, concurrent appenders and a 5,000-message conversation (real SQLite, real workspaces)."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.clock import FixedClock
from kg.errors import ConflictError, InputError
from kg.ids import new_id
from kg.models import Agent
from kg.models.conversation import Conversation, Message, MessageInput, MessageQuery, Summary
from kg.store.sqlite import SqliteGraphStore
from kg.store.sqlite.agents import SqliteAgentStore
from kg.store.sqlite.conversation import match_plan
from kg.store.sqlite.db import Database, load_migrations
from kg.workspace import DB_FILE, STATE_DIR

pytestmark = pytest.mark.usefixtures("no_embedder")


@pytest.fixture
def no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


@pytest.fixture
def store(tmp_path: Path, clock: FixedClock) -> Any:
    s = SqliteGraphStore(tmp_path / "kg.sqlite", clock=clock)
    now = clock.now()
    s.agents.create(Agent(uid=new_id("agent"), agent_id="a", name="A", created_at=now, updated_at=now))
    yield s
    s.close()


def msg(content: str, role: str = "user", **over: Any) -> MessageInput:
    return MessageInput.model_validate({"role": role, "content": content, **over})


def leaf(c: Conversation, messages: list[Message], content: str = "a summary") -> Summary:
    return Summary.model_validate({
        "uid": new_id("summary"), "agent_id": c.agent_id, "created_at": messages[-1].created_at,
        "conversation_uid": c.uid, "kind": "leaf", "depth": 0, "content": content, "token_count": 3,
        "source_token_count": sum(m.token_count for m in messages), "method": "extractive",
        "child_uids": [m.uid for m in messages], "earliest_at": min(m.created_at for m in messages),
        "latest_at": max(m.created_at for m in messages), "descendant_count": len(messages),
    })  # fmt: skip


def uids(items: list[Any]) -> list[str]:
    return [i.uid for i in items]


# ---------------------------------------------------------------------------------------- immutability


def test_messages_summaries_and_edges_refuse_update_and_delete(store, clock):
    c = store.conversations.open("a", "s", now=clock.now())
    ms = store.conversations.append(c.uid, [msg("one"), msg("two")], now=clock.now())
    s = store.summaries.add(leaf(c, ms))
    conn = store.db.conn
    for sql, args in (
        ("UPDATE messages SET content = 'changed' WHERE uid = ?", (ms[0].uid,)),
        ("DELETE FROM messages WHERE uid = ?", (ms[0].uid,)),
        ("UPDATE summaries SET content = 'changed' WHERE uid = ?", (s.uid,)),
        ("DELETE FROM summaries WHERE uid = ?", (s.uid,)),
        ("UPDATE summary_edges SET position = 9 WHERE parent_uid = ?", (s.uid,)),
        ("DELETE FROM summary_edges WHERE parent_uid = ?", (s.uid,)),
    ):
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            conn.execute(sql, args)
    assert store.conversations.messages(MessageQuery(conversation_uid=c.uid)) == ms
    assert store.summaries.get_many([s.uid])[s.uid] == s


def test_the_schema_covers_a_child_once_and_checks_roles(store, clock):
    c = store.conversations.open("a", "s", now=clock.now())
    ms = store.conversations.append(c.uid, [msg("one")], now=clock.now())
    s = store.summaries.add(leaf(c, ms))
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        store.db.conn.execute(
            "INSERT INTO summary_edges(parent_uid, child_uid, position) VALUES (?, ?, 1)", (s.uid, ms[0].uid)
        )
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        store.db.conn.execute(
            "INSERT INTO messages(uid, conversation_uid, seq, role, content, token_count, agent_id, scope, created_at)"
            " VALUES ('MS-X', ?, 5, 'robot', 'x', 1, 'a', 'agent:a', '2024-01-01T00:00:00.000000Z')",
            (c.uid,),
        )
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):  # a seq is taken once per conversation
        store.db.conn.execute(
            "INSERT INTO messages(uid, conversation_uid, seq, role, content, token_count, agent_id, scope, created_at)"
            " VALUES ('MS-X', ?, 0, 'user', 'x', 1, 'a', 'agent:a', '2024-01-01T00:00:00.000000Z')",
            (c.uid,),
        )


# ---------------------------------------------------------------------------------------- search


def test_match_plan_quotes_words_and_routes_cjk_to_trigrams():
    assert match_plan("deploy failed") == ("fts", '"deploy" "failed"', [])
    assert match_plan('say "hi" OR NEAR(x)*') == ("fts", '"say" "hi" "OR" "NEAR" "x"', [])
    assert match_plan("auth* token") == ("fts", '"auth"* "token"', [])
    assert match_plan("北京开会 预算") == ("trigram", '"北京开会"', ["%预算%"])
    assert match_plan("東京 5%_off") == ("trigram", '"5%_off"', ["%東京%"])
    assert match_plan("大") == ("trigram", None, ["%大%"])
    assert match_plan('中文"引号"') == ("trigram", '"中文""引号"""', [])
    with pytest.raises(InputError, match="pattern"):
        match_plan("?!")


def test_word_search_uses_unicode61_with_diacritics_and_case_folded(store, clock):
    c = store.conversations.open("a", "s", now=clock.now())
    ms = store.conversations.append(
        c.uid, [msg("Café Zürich meeting"), msg("cafe zurich again"), msg("snake_case_name here")], now=clock.now()
    )
    search = store.conversations.search
    assert uids(search("CAFE zurich", conversation_uids=[c.uid])) == uids(ms[:2])
    assert uids(search("café", conversation_uids=[c.uid])) == uids(ms[:2])
    assert uids(search("snake_case", conversation_uids=[c.uid])) == [ms[2].uid]  # "_" separates words


def test_trigram_search_over_chinese_japanese_and_mixed_text(store, clock):
    c = store.conversations.open("a", "s", now=clock.now())
    texts = [
        "我们决定使用PostgreSQL作为主数据库，截止日期是2024年6月1日。",  # noqa: RUF001
        "明日の会議は東京本社で午後三時から始まります。",
        "ユーザー認証にはJWTトークンを使う",
        "数据库迁移已经完成",
        "nothing to see",
    ]
    ms = store.conversations.append(c.uid, [msg(t) for t in texts], now=clock.now())
    search = store.conversations.search
    assert uids(search("主数据库", conversation_uids=[c.uid])) == [ms[0].uid]
    assert uids(search("数据库", conversation_uids=[c.uid])) == [ms[0].uid, ms[3].uid]
    assert uids(search("東京本社", conversation_uids=[c.uid])) == [ms[1].uid]
    assert uids(search("会議", conversation_uids=[c.uid])) == [ms[1].uid]
    assert uids(search("jwtトークン", conversation_uids=[c.uid])) == [ms[2].uid]  # ASCII case folded
    assert uids(search("数据库 postgresql", conversation_uids=[c.uid])) == [ms[0].uid]
    assert uids(search("2024年6月", conversation_uids=[c.uid])) == [ms[0].uid]
    assert search("大阪", conversation_uids=[c.uid]) == []
    # the word index sees a CJK run as one token: only the trigram index finds words inside it
    assert store.db.read("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", ('"数据库"',)) == []
    assert len(store.db.read("SELECT rowid FROM messages_trigram WHERE messages_trigram MATCH ?", ('"数据库"',))) == 2


def test_summaries_are_indexed_by_words_and_trigrams(store, clock):
    c = store.conversations.open("a", "s", now=clock.now())
    ms = store.conversations.append(c.uid, [msg("x"), msg("y")], now=clock.now())
    s1 = store.summaries.add(leaf(c, ms[:1], "用户偏好深色主题; decided on dark mode"))
    s2 = store.summaries.add(leaf(c, ms[1:], "会議の議事録"))
    search = store.summaries.search
    assert uids(search("深色主题", conversation_uids=[c.uid])) == [s1.uid]
    assert uids(search("議事録", conversation_uids=[c.uid])) == [s2.uid]
    assert uids(search("dark MODE", conversation_uids=[c.uid])) == [s1.uid]
    assert uids(search("dark", conversation_uids=[c.uid], mode="regex")) == [s1.uid]


def test_regex_search_is_bounded_to_the_given_conversations(store, clock):
    c1 = store.conversations.open("a", "s1", now=clock.now())
    c2 = store.conversations.open("a", "s2", now=clock.now())
    m1 = store.conversations.append(c1.uid, [msg("ticket ABC-123")], now=clock.now())
    store.conversations.append(c2.uid, [msg("ticket XYZ-999")], now=clock.now())
    assert uids(store.conversations.search(r"[A-Z]{3}-\d+", conversation_uids=[c1.uid], mode="regex")) == uids(m1)
    assert len(store.conversations.search(r"[A-Z]{3}-\d+", conversation_uids=[c1.uid, c2.uid], mode="regex")) == 2
    assert store.conversations.search(r"ABC", conversation_uids=[new_id("conversation")], mode="regex") == []


# ---------------------------------------------------------------------------------------- outbox


def test_every_write_appends_outbox_events_with_the_stored_rows(store, clock):
    c = store.conversations.open("a", "s", title="T", now=clock.now())
    ms = store.conversations.append(c.uid, [msg("one"), msg("two", "assistant")], now=clock.now())
    s = store.summaries.add(leaf(c, ms))
    events = [e for e in store.outbox.pending(limit=1000) if e.aggregate in ("conversation", "message", "summary")]
    assert [(e.aggregate, e.op, e.record_uid) for e in events] == [
        ("conversation", "upsert", c.uid),
        ("message", "upsert", ms[0].uid),
        ("message", "upsert", ms[1].uid),
        ("conversation", "upsert", c.uid),
        ("summary", "upsert", s.uid),
    ]
    assert all((e.agent_id, e.scope) == ("a", "agent:a") for e in events)
    assert Conversation.model_validate(events[0].payload) == c
    assert Message.model_validate(events[2].payload) == ms[1]
    assert Summary.model_validate(events[4].payload) == s
    assert events[4].payload["child_uids"] == uids(ms)


def test_a_refused_write_leaves_no_trace(store, clock, tmp_path):
    c = store.conversations.open("a", "s", now=clock.now())
    ms = store.conversations.append(c.uid, [msg("one")], now=clock.now())
    store.summaries.add(leaf(c, ms))
    before = store.outbox.counts(), store.db.read("SELECT COUNT(*) FROM summary_edges")[0][0]
    with pytest.raises(ConflictError):
        store.summaries.add(leaf(c, ms))
    assert (store.outbox.counts(), store.db.read("SELECT COUNT(*) FROM summary_edges")[0][0]) == before


# ---------------------------------------------------------------------------------------- migration


def test_migration_7_applies_to_an_existing_workspace(tmp_path, clock):
    root = tmp_path / "ws"
    (root / STATE_DIR).mkdir(parents=True)
    old = Database(root / STATE_DIR / DB_FILE, clock=clock, migrate=False)
    old.migrate([m for m in load_migrations() if m.version <= 6])
    assert old.schema_version() == 6
    now = clock.now()
    SqliteAgentStore(old).create(Agent(uid=new_id("agent"), agent_id="old", name="Old", created_at=now,
                                       updated_at=now))  # fmt: skip
    old.close()
    with kg.init_workspace(root, clock=clock) as ws:
        assert ws._store.db.schema_version() == max(m.version for m in load_migrations()) >= 7
        assert ws.ports.agents.get("old").name == "Old"
        c = ws.ports.conversations.open("old", "first", now=clock.now())
        ms = ws.ports.conversations.append(c.uid, [msg("hello 世界和平")], now=clock.now())
        assert uids(ws.ports.conversations.search("世界和平", conversation_uids=[c.uid])) == uids(ms)
        assert ws._store.db.integrity_ok()
    with kg.open_workspace(root, clock=clock) as ws:  # reopening applies nothing and keeps the messages
        assert ws.ports.conversations.find("old", "first") == c


# ---------------------------------------------------------------------------------------- concurrency, volume


def test_concurrent_appenders_never_share_a_seq(tmp_path, clock):
    path = tmp_path / "kg.sqlite"
    first = SqliteGraphStore(path, clock=clock)
    now = clock.now()
    first.agents.create(Agent(uid=new_id("agent"), agent_id="a", name="A", created_at=now, updated_at=now))
    c = first.conversations.open("a", "s", now=now)
    stores = [first, SqliteGraphStore(path, clock=clock), SqliteGraphStore(path, clock=clock)]
    errors: list[BaseException] = []

    def work(s: SqliteGraphStore, worker: int) -> None:
        try:
            for n in range(20):
                s.conversations.append(c.uid, [msg(f"w{worker} n{n} a"), msg(f"w{worker} n{n} b")], now=now)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s, i)) for i, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    stored = first.conversations.messages(MessageQuery(conversation_uid=c.uid))
    assert [m.seq for m in stored] == list(range(120))
    for worker in range(3):  # each batch's two messages got consecutive seqs
        mine = [m for m in stored if m.content.startswith(f"w{worker} ")]
        assert all(b.seq == a.seq + 1 for a, b in zip(mine[::2], mine[1::2], strict=True))
    for s in stores:
        s.close()


def test_five_thousand_messages_in_batches(store, clock):
    c = store.conversations.open("a", "long", now=clock.now())
    appended: list[Message] = []
    for batch in range(50):
        clock.advance(timedelta(seconds=30))
        texts = [f"turn {batch * 100 + i}: topic{(batch * 100 + i) % 7} detail 第{batch}批" for i in range(100)]
        appended += store.conversations.append(c.uid, [msg(t, "user" if i % 2 else "assistant")
                                                       for i, t in enumerate(texts)], now=clock.now())  # fmt: skip
    assert [m.seq for m in appended] == list(range(5000))
    stored = store.conversations.messages(MessageQuery(conversation_uid=c.uid))
    assert stored == appended
    assert len(store.conversations.get_messages(uids(appended))) == 5000  # beyond SQLite's parameter limit
    assert len(store.summaries.uncovered_messages(c.uid)) == 5000
    for start in range(0, 200, 20):  # cover the first 200 messages with leaves
        store.summaries.add(leaf(c, appended[start : start + 20]))
    assert store.summaries.uncovered_messages(c.uid)[0].seq == 200
    hits = store.conversations.search("topic3", conversation_uids=[c.uid], limit=10_000)
    assert len(hits) == len([m for m in appended if "topic3 " in m.content])
    assert uids(store.conversations.search("第49批", conversation_uids=[c.uid], limit=1)) == [appended[4900].uid]
    assert (
        len(store.conversations.search(r"turn 4\d{3}:", conversation_uids=[c.uid], mode="regex", limit=10_000)) == 1000
    )
    counts = {r[0]: r[1] for r in store.db.read("SELECT aggregate, COUNT(*) FROM outbox GROUP BY aggregate")}
    assert counts["message"] == 5000 and counts["summary"] == 10
    assert json.loads(store.db.read("SELECT payload FROM outbox WHERE aggregate = 'message' LIMIT 1")[0][0])["seq"] == 0
