"""Issue 21, last two points, on a real workspace (SQLite, no embedder, no LLM): ``lcm describe`` on an extracted
memory item, and the spec's importance recalculated on access, on a related memory, on a tag change and in the
nightly maintenance pass, never over an explicit importance."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from cli import tools
from cli.main import cli
from kg.conversation.tools_models import SummaryDescription
from kg.errors import NotFoundError
from kg.extraction import extraction_service
from kg.extraction.workspace import reweigh
from kg.memory.admission import MemoryCandidate
from kg.memory.dedup import DedupDecision
from kg.memory.dedup_apply import apply_decision
from kg.memory.importance import MANUAL_TAG
from kg.models import MemoryItem
from kg.models.conversation import MessageQuery
from kg.workspace import Workspace

T1 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
T2 = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def xws(quiet_workspace: Callable[[datetime], Workspace]) -> Workspace:
    """A workspace with agents ``a`` and ``b``, no embedder and no LLM, its clock at T1 (messages said then)."""
    return quiet_workspace(T1)


def say(ws: Workspace, *texts: str, when: datetime = T1, agent: str = "a") -> tuple[str, list[str]]:
    result = ws.conversations.ingest(agent, "s1", [{"role": "user", "content": t, "created_at": when} for t in texts])
    query = MessageQuery(conversation_uid=result.conversation_uid, from_seq=result.first_seq, to_seq=result.last_seq)
    return result.conversation_uid, [m.uid for m in ws.ports.conversations.messages(query)]


def one(ws: Workspace, uid: str) -> MemoryItem:
    return ws.memory.get("a", uid)


def later(ws: Workspace, hours: float) -> None:
    ws.clock.advance(timedelta(hours=hours))  # type: ignore[attr-defined]


def test_lcm_describe_shows_a_memory_item_and_its_messages_to_its_agent_only(
    xws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    conv, uids = say(xws, "I live in Berlin.", "I love hiking.")
    extraction_service(xws).extract("a")
    profile = next(i for i in xws.memory.list_items("a") if "category:profile" in i.tags)
    found = tools.call("lcm_describe", workspace=xws.path, agent_id="a", summary_uid=profile.uid)
    assert isinstance(found, SummaryDescription)
    assert (
        found.category == "profile"
        and found.kind == "memory"
        and found.method == "extraction"
        and found.memory_type == profile.type.value
    )
    assert found.child_uids == [uids[0]] and found.descendant_count == 1 and found.child_kind == "message"
    assert found.conversation_uid == conv and found.earliest_at == found.latest_at == T1
    assert found.abstract and found.abstract == profile.content.split("\n\n")[0]
    assert found.token_count > 0 and found.source_token_count > 0 and found.replaced_uids == []
    # walk on from the description to the messages themselves
    got = xws.ports.conversations.get_messages(found.child_uids)
    assert [got[u].content for u in found.child_uids] == ["I live in Berlin."]
    with pytest.raises(NotFoundError):  # another agent's item is reported as a missing one
        tools.call("lcm_describe", workspace=xws.path, agent_id="b", summary_uid=profile.uid)

    monkeypatch.delenv("MABOS_WORKSPACE", raising=False)
    runner, ws_args = CliRunner(), ["--workspace", str(xws.path)]
    ok = runner.invoke(cli, [*ws_args, "lcm", "describe", "--agent", "a", profile.uid, "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.stdout)
    assert data["kind"] == "memory" and data["child_uids"] == [uids[0]] and data["category"] == "profile"
    denied = runner.invoke(cli, [*ws_args, "lcm", "describe", "--agent", "b", profile.uid, "--json"])
    assert denied.exit_code == 1 and profile.uid in denied.stderr


def test_lcm_describe_walks_through_the_items_a_memory_replaced(xws: Workspace) -> None:
    _, first = say(xws, "I love hiking.")
    extraction_service(xws).extract("a")
    _, second = say(xws, "I love hiking.", when=T2)  # the same words again: dedup may replace the first item
    extraction_service(xws).extract("a")
    newest = next(i for i in reversed(xws.memory.list_items("a")) if i.archived_at is None)
    found = tools.call("lcm_describe", workspace=xws.path, agent_id="a", summary_uid=newest.uid)
    assert isinstance(found, SummaryDescription)
    assert set(found.child_uids) & {*first, *second}
    replaced = [u for u in newest.derived_from if u.startswith("M-")]
    assert found.replaced_uids == [u for u in replaced if u in found.replaced_uids]
    if replaced:  # through the replaced item down to the first message
        assert first[0] in found.child_uids and found.earliest_at == T1


def extracted_tea(ws: Workspace) -> MemoryItem:
    say(ws, "I prefer green tea.")
    extraction_service(ws).extract("a")
    [item] = ws.memory.list_items("a")
    assert item.importance == pytest.approx(0.4)  # prefer 0.15 + preference 0.15 + recency 0.1, no access
    return item


def test_a_recall_recalculates_the_importance_of_what_it_returns(xws: Workspace) -> None:
    item = extracted_tea(xws)
    explicit = xws.memory.store_item(
        "a", "I prefer green tea too", type="preference", importance=0.9, store="long_term"
    ).item
    later(xws, 100)
    hits = xws.memory.recall("a", "green tea", mode="bm25").hits
    assert {h.item.uid for h in hits} == {item.uid, explicit.uid}
    after = one(xws, item.uid)
    assert after.access_count == 1
    assert after.importance == pytest.approx(0.3 + 0.03 + 0.1 * math.exp(-0.5), abs=1e-4)
    assert one(xws, explicit.uid).importance == 0.9  # an explicit importance is never recalculated
    xws.memory.recall("a", "green tea", mode="bm25", touch=False)
    assert one(xws, item.uid) == after  # no access counted, nothing written


def test_a_tag_change_and_a_related_new_memory_recalculate_it(xws: Workspace) -> None:
    item = extracted_tea(xws)
    say(xws, "I love hiking.")
    extraction_service(xws).extract("a")
    other = next(i for i in xws.memory.list_items("a") if i.uid != item.uid)
    later(xws, 100)
    tagged = xws.memory.update("a", item.uid, tags=[*item.tags, "tea", "important"])
    assert tagged.importance == pytest.approx(0.3 + 0.05 + 0.1 * math.exp(-0.5), abs=1e-4)
    later(xws, 100)
    xws.memory.store_item("a", "Oolong is a tea too", tags=["tea"], store="long_term")
    assert one(xws, item.uid).importance == pytest.approx(0.3 + 0.05 + 0.1 * math.exp(-1.0), abs=1e-4)
    assert one(xws, other.uid).importance == other.importance  # not related: left as it was
    xws.memory.store_item("a", "Nothing to do with it", tags=["extracted", "category:preferences"])
    assert one(xws, other.uid).importance == other.importance  # marker and category tags relate nothing


def test_an_explicit_importance_is_never_recalculated_again(xws: Workspace) -> None:
    item = extracted_tea(xws)
    set_by_hand = xws.memory.update("a", item.uid, importance=0.95)
    assert set_by_hand.importance == 0.95 and MANUAL_TAG in set_by_hand.tags
    later(xws, 300)
    xws.memory.recall("a", "green tea", mode="bm25")
    xws.memory.update("a", item.uid, tags=[*set_by_hand.tags, "tea", "critical"])
    xws.memory.store_item("a", "Sencha is green", tags=["tea"])
    assert reweigh(xws, "a") == 0
    assert one(xws, item.uid).importance == 0.95


def test_the_nightly_maintenance_pass_recalculates_it(xws: Workspace) -> None:
    item = extracted_tea(xws)
    later(xws, 200)
    assert reweigh(xws, "a") == 1
    assert one(xws, item.uid).importance == pytest.approx(0.3 + 0.1 * math.exp(-1.0), abs=1e-4)
    assert reweigh(xws, "a") == 0


def test_a_supporting_memory_leaves_the_importance_to_the_formula(xws: Workspace) -> None:
    item = extracted_tea(xws)
    later(xws, 100)
    candidate = MemoryCandidate(content="I prefer green tea.", type="preference", tags=["extracted", "tea"],
                                source="extraction", importance=0.99)  # fmt: skip
    decision = DedupDecision(action="support", target_uid=item.uid, method="rules", reason="same preference")
    apply_decision(xws.memory, "a", candidate, decision)
    after = one(xws, item.uid)
    assert MANUAL_TAG not in after.tags and "tea" in after.tags and after.confidence == 1.0
    assert after.importance == pytest.approx(0.3 + 0.1 * math.exp(-0.5), abs=1e-4)  # the formula, not 0.99
