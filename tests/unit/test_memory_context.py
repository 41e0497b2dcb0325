"""The conversational context of episodic memory items (kg/store/sqlite/memory.py) on a real SQLite store.

An observation or event is indexed with the two episodic items stored just before it and the one stored just
after it (same agent and scope, within an hour): a question then finds the turn that answers it even when the
words it shares are in a neighbouring turn.
"""

from __future__ import annotations

from datetime import timedelta

from kg.ids import new_id
from kg.models import MemoryItem
from kg.ports import StoreLimits


def context(ws, uid: str) -> str:
    return str(ws._store.db.read("SELECT context FROM memory_items WHERE uid = ?", (uid,))[0][0])


def said(ws, text: str, *, agent: str = "a", minutes: int = 1, **fields) -> str:
    ws.clock.advance(timedelta(minutes=minutes))
    fields = {"type": "observation", "store": "long_term", **fields}
    return ws.memory.store_item(agent, text, **fields).item.uid


def test_a_turn_is_indexed_with_two_before_and_one_after(ws):
    uids = [said(ws, f"turn {n}") for n in range(1, 6)]
    assert [context(ws, u) for u in uids] == [
        "turn 2",
        "turn 1 turn 3",
        "turn 1 turn 2 turn 4",
        "turn 2 turn 3 turn 5",
        "turn 3 turn 4",  # the last turn has no next one yet
    ]


def test_a_batch_gets_the_same_contexts_as_one_by_one(ws):
    first = said(ws, "turn 1")
    now = ws.clock.now()
    batch = [
        MemoryItem(uid=new_id("memory"), agent_id="a", scope="agent:a", content=f"turn {n}",
                   created_at=now + timedelta(minutes=n), updated_at=now + timedelta(minutes=n))
        for n in (2, 3, 4)
    ]  # fmt: skip
    ws.ports.memory.add(batch, limits=StoreLimits(), now=now)
    assert [context(ws, u) for u in [first, *(i.uid for i in batch)]] == [
        "turn 2",
        "turn 1 turn 3",
        "turn 1 turn 2 turn 4",
        "turn 2 turn 3",
    ]


def test_turns_more_than_an_hour_apart_are_separate_conversations(ws):
    morning = said(ws, "morning turn")
    evening = said(ws, "evening turn", minutes=61)
    later = said(ws, "evening again")
    assert context(ws, morning) == ""
    assert context(ws, evening) == "evening again"
    assert context(ws, later) == "evening turn"


def test_semantic_items_other_agents_and_other_scopes_lend_no_context(ws):
    first = said(ws, "turn 1")
    said(ws, "a fact in between", type="fact")
    said(ws, "agent b speaks", agent="b")
    said(ws, "a shared note", scope="global")
    second = said(ws, "turn 2")
    assert context(ws, first) == "turn 2"
    assert context(ws, second) == "turn 1"


def test_the_next_turn_changes_neither_the_item_nor_the_outbox(ws):
    first = said(ws, "turn 1")
    before = ws.ports.memory.get_many([first])[first]
    events = ws._store.db.read("SELECT COUNT(*) FROM outbox")[0][0]
    said(ws, "turn 2")
    assert ws.ports.memory.get_many([first])[first] == before  # updated_at and content untouched
    assert ws._store.db.read("SELECT COUNT(*) FROM outbox")[0][0] == events + 1  # the new item's event only


def test_recall_finds_a_turn_through_the_words_of_the_next_one(ws):
    said(ws, "Caroline: how was your weekend?")
    adopted = said(ws, "Melanie: we finally adopted a puppy named Rex")
    reply = said(ws, "Caroline: a dog is such great company")
    for n in range(8):
        said(ws, f"Caroline: unrelated chatter number {n}", minutes=90)  # other conversations
    hits = ws.memory.recall("a", "the dog", mode="bm25", touch=False).hits
    assert [h.item.uid for h in hits] == [reply, adopted]  # the adoption only through the reply after it
