"""Materialized files: memory items, facts and beliefs in the seed's section format, on a real workspace."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from kg.errors import InputError
from kg.ids import new_id
from kg.memory.materialize import (
    BELIEFS_FILE,
    FACTS_FILE,
    MEMORY_ITEMS_FILE,
    FileStatus,
    body,
    headline,
    materialize,
    render_memory_items,
)
from kg.models import MemoryItem

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)  # the fixed clock's start (tests/conftest.py)


def _item(content: str, **fields: object) -> MemoryItem:
    return MemoryItem.model_validate({"uid": new_id("memory"), "agent_id": "a", "created_at": T0,
                                      "content": content, **fields})  # fmt: skip


def _sections(text: str) -> list[str]:
    return re.split(r"^## ", text, flags=re.M)[1:]


def test_memory_items_render_in_the_seed_format() -> None:
    item = _item("JWT uses RS256", type="decision", store="long_term", importance=0.8, tags=["auth", "jwt"],
                 derived_from=[new_id("memory"), new_id("memory")])  # fmt: skip
    text = render_memory_items("a", [item])
    assert text == (
        "# MABOS Memory Items — a\n\n"
        "> Materialized from the store: 1 item (1 long_term, 0 short_term, 0 working; 0 archived).\n\n"
        "## [long_term] decision: JWT uses RS256\n\n"
        f"- ID: {item.uid}\n"
        "- Store: long_term\n"
        "- Type: decision\n"
        "- Importance: 0.8\n"
        "- Source: agent\n"
        "- Tags: auth, jwt\n"
        f"- Derived from: {item.derived_from[0]}, {item.derived_from[1]}\n"
        "- Created: 2024-05-01T12:00:00.000000Z\n\n"
        "JWT uses RS256\n"
    )


def test_items_are_ordered_by_creation_and_archived_ones_are_marked() -> None:
    late = _item("second", created_at=T0 + timedelta(minutes=1))
    archived = _item("first", archived_at=T0 + timedelta(hours=3))
    text = render_memory_items("a", [late, archived])
    first, second = _sections(text)
    assert first.startswith("[archived] [short_term] observation: first\n")
    assert "- Archived: 2024-05-01T15:00:00.000000Z\n" in first
    assert second.startswith("[short_term] observation: second\n") and "Archived" not in second
    assert "1 archived" in text
    assert "- Tags:" not in text and "- Derived from:" not in text  # empty lines are left out, as in the seed


def test_headings_are_one_line_and_bodies_never_open_a_section() -> None:
    content = "# Title\nline *two*\n  ## indented heading\n" + "x" * 300
    item = _item(content)
    (section,) = _sections(render_memory_items("a", [item]))
    heading = section.split("\n", 1)[0]
    assert "\n" not in heading and heading.endswith("…") and len(headline(content)) == 120
    assert "\n\\# Title\nline *two*\n  \\## indented heading\n" in section
    assert body("#a\nb") == "\\#a\nb"


def test_materialize_writes_the_three_files(ws) -> None:
    item = ws.memory.store_item("a", "JWT uses RS256", type="decision", tags=["auth"]).item
    old = ws.memory.store_item("a", "Old news", type="event").item
    ws.memory.update("a", old.uid, archived_at=T0)
    ws.memory.store_item("b", "Not mine")
    fact, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "$50000", confidence=0.9)
    gone, _ = ws.facts.assert_fact("a", "acme", "hasIndustry", "saas")
    ws.facts.retract("a", uids=[gone.uid])
    derived, _ = ws.facts.assert_fact("a", "acme", "isTarget", "true", derived_from=[fact.uid], rule_id=new_id("rule"))
    ws.facts.assert_fact("b", "globex", "hasIndustry", "retail", scope="global")
    belief = ws.bdi.add("belief", "a", "Acme is growing", certainty=0.8)
    ws.bdi.add("belief", "b", "Not my belief", scope="global")

    result = materialize(ws, "a")

    assert [(f.path, f.status, f.records) for f in result.files] == [
        (f"agents/a/memory/{MEMORY_ITEMS_FILE}", FileStatus.WRITTEN, 2),
        (f"agents/a/{FACTS_FILE}", FileStatus.WRITTEN, 3),
        (f"agents/a/{BELIEFS_FILE}", FileStatus.WRITTEN, 1),
    ]
    items = (ws.path / result.files[0].path).read_text(encoding="utf-8")
    assert f"- ID: {item.uid}\n" in items and f"- ID: {old.uid}\n" in items and "Not mine" not in items
    assert "## [archived] [short_term] event: Old news" in items
    facts = (ws.path / result.files[1].path).read_text(encoding="utf-8")
    assert "## acme hasRevenue $50000\n\n" in facts and "- Confidence: 0.9\n" in facts
    assert "## [retracted] acme hasIndustry saas" in facts and "- Retracted: " in facts
    assert f"- Derived from: {fact.uid}\n- Rule: {derived.rule_id}\n" in facts
    assert "globex" not in facts  # visible to a, but asserted by b
    assert "1 derived, 1 retracted" in facts
    beliefs = (ws.path / result.files[2].path).read_text(encoding="utf-8")
    assert beliefs == (
        "# MABOS Beliefs — a\n\n> Materialized from the store: 1 belief.\n\n## Acme is growing\n\n"
        f"- ID: {belief.uid}\n- Certainty: 0.8\n- Status: active\n- Updated: 2024-05-01T12:00:00.000000Z\n\n"
        "Acme is growing\n"
    )


def test_files_are_rewritten_only_when_their_content_changes(ws, snapshot) -> None:
    ws.memory.store_item("a", "first", type="event")
    materialize(ws, "a")
    before = snapshot(ws)
    again = materialize(ws, "a")
    assert {f.status for f in again.files} == {FileStatus.UNCHANGED}
    assert snapshot(ws) == before
    ws.facts.assert_fact("a", "acme", "hasIndustry", "saas")
    changed = materialize(ws, "a")
    assert [f.status for f in changed.files] == [FileStatus.UNCHANGED, FileStatus.WRITTEN, FileStatus.UNCHANGED]


def test_an_agent_without_records_gets_empty_files(ws) -> None:
    result = materialize(ws, "b")
    assert [f.records for f in result.files] == [0, 0, 0]
    text = (ws.path / "agents/b/mabos-beliefs.md").read_text(encoding="utf-8")
    assert text == "# MABOS Beliefs — b\n\n> Materialized from the store: 0 beliefs.\n"


@pytest.mark.parametrize("agent", ["../x", "A", "a/b", "", "a\n"])
def test_bad_agent_ids_are_refused_before_anything_is_written(ws, snapshot, agent: str) -> None:
    before = snapshot(ws)
    with pytest.raises(InputError) as err:
        materialize(ws, agent)
    assert err.value.field == "agent"
    assert snapshot(ws) == before


def test_unicode_content_is_kept(ws) -> None:
    ws.memory.store_item("a", "Größe 😀 — 日本語\n* not a list *", type="fact")
    materialize(ws, "a")
    text = (ws.path / "agents/a/memory" / MEMORY_ITEMS_FILE).read_text(encoding="utf-8")
    assert "fact: Größe 😀 — 日本語 * not a list *\n" in text
    assert "\nGröße 😀 — 日本語\n* not a list *\n" in text
