"""Cognitive files: export from the store, hand edits, import back; real workspace and real files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.clock import FixedClock
from kg.errors import InputError, NotFoundError, ScopeError
from kg.memory.cognitive import (
    CognitiveKind,
    content_lines,
    export_cognitive,
    import_cognitive,
    normalize_content,
    parse_cognitive,
    split_marker,
)
from kg.memory.materialize import FileStatus
from kg.models import MemoryType
from tests.budget import examples

DEADLINE = datetime(2024, 6, 1, tzinfo=UTC)
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)  # the fixed clock's start (tests/conftest.py)


@pytest.fixture
def mind(ws) -> dict[str, str]:
    """Agent ``a`` with every kind of record; returns their uids by name."""
    nodes = {
        "belief": ws.bdi.add("belief", "a", "Acme is growing", certainty=0.8),
        "belief2": ws.bdi.add("belief", "a", "Globex is shrinking", certainty=0.4, scope="global"),
        "desire": ws.bdi.add("desire", "a", "Lead the SaaS market", priority=9, urgency=0.5),
        "goal": ws.bdi.add("goal", "a", "Grow revenue", hierarchy_level="strategic", priority=8, deadline=DEADLINE),
        "intention": ws.bdi.add("intention", "a", "Close the Acme deal", priority=7),
        "plan": ws.bdi.add("plan", "a", "Outbound campaign", status="active"),
        "step": ws.bdi.add("step", "a", "Build the lead list", sequence=1),
        "step2": ws.bdi.add("step", "a", "Send the emails", sequence=2),
        "orphan": ws.bdi.add("step", "a", "Unplanned step"),
    }
    for step in ("step2", "step"):
        ws.bdi.link("a", "plan-contains-step", nodes["plan"].uid, nodes[step].uid)
    ws.bdi.add("belief", "b", "Not a's belief")
    uids = {name: node.uid for name, node in nodes.items()}
    lesson = ws.memory.store_item("a", "Test the import", type="lesson", tags=["qa"], store="long_term").item
    ws.memory.store_item("a", "Not a lesson", type="decision")
    uids["lesson"] = lesson.uid
    return uids


def _file(ws, name: str) -> Path:
    return ws.path / "agents" / "a" / name


def _read(ws, name: str) -> str:
    return _file(ws, name).read_text(encoding="utf-8")


def _write(ws, name: str, text: str) -> None:
    _file(ws, name).write_text(text, encoding="utf-8")


def _nodes(ws, agent: str = "a") -> dict[str, dict[str, object]]:
    return {
        n.uid: n.model_dump()
        for kind in ("belief", "desire", "goal", "intention", "plan", "plan_step")
        for n in ws.bdi.list(agent, kind, owner=agent)
    }


# ---------------------------------------------------------------------------------------------- export


def test_export_writes_one_file_per_kind(ws, mind) -> None:
    result = export_cognitive(ws, "a")
    assert [(f.path, f.status, f.records) for f in result.files] == [
        ("agents/a/Beliefs.md", FileStatus.WRITTEN, 2),
        ("agents/a/Desires.md", FileStatus.WRITTEN, 1),
        ("agents/a/Goals.md", FileStatus.WRITTEN, 1),
        ("agents/a/Intentions.md", FileStatus.WRITTEN, 1),
        ("agents/a/Plans.md", FileStatus.WRITTEN, 4),
        ("agents/a/Learnings.md", FileStatus.WRITTEN, 1),
    ]
    assert _read(ws, "Beliefs.md") == (
        "# Beliefs\n\n"
        "## Acme is growing\ncertainty: 0.8\nstatus: active\n"
        f"[updated: 2024-05-01T12:00:00.000000Z]\nid: {mind['belief']}\n"
        "\n## Globex is shrinking\ncertainty: 0.4\nstatus: active\nscope: global\n"
        f"[updated: 2024-05-01T12:00:00.000000Z]\nid: {mind['belief2']}\n"
    )
    assert _read(ws, "Goals.md") == (
        "# Goals\n\n## Grow revenue\npriority: 8\nstatus: pending\nprogress: 0.0\nlevel: strategic\n"
        "[deadline: 2024-06-01T00:00:00.000000Z]\n[updated: 2024-05-01T12:00:00.000000Z]\n"
        f"id: {mind['goal']}\n"
    )
    assert "urgency: 0.5\n" in _read(ws, "Desires.md")
    learnings = _read(ws, "Learnings.md")
    assert "## Test the import\nimportance: 0.65\nconfidence: 1.0\nstore: long_term\ntags: qa\n" in learnings
    assert "Not a lesson" not in learnings
    assert "Not a's belief" not in _read(ws, "Beliefs.md")


def test_plan_steps_are_listed_under_their_plan_in_sequence(ws, mind) -> None:
    export_cognitive(ws, "a", "plans")
    text = _read(ws, "Plans.md")
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["# Plans", "### Unplanned step", "## Outbound campaign", "### Build the lead list",
                        "### Send the emails"]  # fmt: skip
    assert "<!-- steps that belong to no plan -->" in text
    assert not (ws.path / "agents/a/Beliefs.md").exists()  # only the kind asked for


def test_export_is_deterministic_and_rewrites_nothing_unchanged(ws, mind, snapshot) -> None:
    export_cognitive(ws, "a")
    before = snapshot(ws)
    again = export_cognitive(ws, "a")
    assert {f.status for f in again.files} == {FileStatus.UNCHANGED}
    assert snapshot(ws) == before


# ---------------------------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("kind", [*CognitiveKind, "all"])
def test_export_then_import_changes_nothing(ws, mind, snapshot, kind) -> None:
    exported = export_cognitive(ws, "a", kind)
    texts = {f.path: (ws.path / f.path).read_bytes() for f in exported.files}
    before = snapshot(ws)
    result = import_cognitive(ws, "a", kind)
    assert (result.created, result.updated, result.linked, result.warnings, result.files) == ([], [], [], [], [])
    assert result.unchanged == sum(f.records for f in exported.files)
    assert snapshot(ws) == before  # the store (outbox included) and every file: byte for byte
    again = export_cognitive(ws, "a", kind)
    assert {f.status for f in again.files} == {FileStatus.UNCHANGED}
    assert {f.path: (ws.path / f.path).read_bytes() for f in again.files} == texts


TRICKY = [
    "# not a heading\n## nor this\n### nor this",
    "*bold* _it_ `code` [link](x) <b>html</b> | table |",
    "first line\n\nafter a blank line\n    indented code\n> quoted\n>",
    "certainty: 0.1\nid: B-01J00000000000000000000000\n[updated: 1999-01-01]",
    "Größe 😀 — 日本語 \u200f\u05e2\u05d1\u05e8\u05d9\u05ea\u200f \u2028 separator",
    "- looks like a bullet\n1. and a list",
    "tab\tinside\ttext",
]


@pytest.mark.parametrize("content", TRICKY)
def test_special_content_round_trips(ws, snapshot, content: str) -> None:
    node = ws.bdi.add("belief", "a", content, certainty=0.5)
    export_cognitive(ws, "a", "beliefs")
    before = snapshot(ws)
    assert import_cognitive(ws, "a", "beliefs").unchanged == 1
    assert snapshot(ws) == before
    assert ws.bdi.get("a", node.uid).content == content


def test_whitespace_only_differences_are_not_edits(ws, snapshot) -> None:
    node = ws.bdi.add("belief", "a", "  padded  \r\ntrailing   \n\n", certainty=0.5)
    export_cognitive(ws, "a", "beliefs")
    assert _read(ws, "Beliefs.md").startswith("# Beliefs\n\n## padded\n> trailing\ncertainty")
    before = snapshot(ws)
    import_cognitive(ws, "a", "beliefs")
    assert snapshot(ws) == before
    assert ws.bdi.get("a", node.uid).content == "  padded  \r\ntrailing   \n\n"


@settings(max_examples=examples(300), deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=80))
def test_any_text_reads_back_as_its_normal_form(content: str) -> None:
    if not normalize_content(content):
        return  # whitespace only: the models refuse it
    text = "# Beliefs\n\n" + "\n".join(content_lines(2, content)) + "\nid: B-01J00000000000000000000000\n"
    parsed = parse_cognitive(text, CognitiveKind.BELIEFS, "Beliefs.md")
    (section,) = parsed.sections
    assert section.content == normalize_content(content)
    assert normalize_content(section.content) == section.content
    assert set(section.markers) == {"id"} and parsed.warnings == []


TEXTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=40)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(TEXTS.filter(lambda t: normalize_content(t) != ""), min_size=1, max_size=3),
       st.lists(st.floats(0, 1), min_size=3, max_size=3))  # fmt: skip
def test_stored_beliefs_survive_export_and_import(tmp_path_factory, snapshot, contents: list[str], certainties) -> None:
    with kg.init_workspace(tmp_path_factory.mktemp("ws"), clock=FixedClock(T0)) as ws:
        ws.agents.add("a")
        nodes = [ws.bdi.add("belief", "a", c, certainty=x) for c, x in zip(contents, certainties, strict=False)]
        export_cognitive(ws, "a", "beliefs")
        before = snapshot(ws)
        result = import_cognitive(ws, "a", "beliefs")
        assert (result.created, result.updated, result.unchanged) == ([], [], len(nodes))
        assert snapshot(ws) == before
        assert [ws.bdi.get("a", n.uid) for n in nodes] == nodes


# ---------------------------------------------------------------------------------------------- hand edits


def test_editing_a_certainty_updates_exactly_that_node(ws, mind, clock) -> None:
    export_cognitive(ws, "a")
    before = _nodes(ws)
    _write(ws, "Beliefs.md", _read(ws, "Beliefs.md").replace("certainty: 0.8", "certainty: 0.95"))
    clock.advance(timedelta(minutes=5))
    result = import_cognitive(ws, "a")
    assert (result.created, result.updated, result.linked) == ([], [mind["belief"]], [])
    after = _nodes(ws)
    changed = {uid for uid in after if after[uid] != before[uid]}
    assert changed == {mind["belief"]}
    assert after[mind["belief"]]["certainty"] == 0.95
    assert after[mind["belief"]]["updated_at"] == clock.now()
    # the edited file was exported again (new [updated: ...]); exporting now changes nothing
    assert [f.path for f in result.files] == ["agents/a/Beliefs.md"]
    assert "[updated: 2024-05-01T12:05:00.000000Z]" in _read(ws, "Beliefs.md")
    assert {f.status for f in export_cognitive(ws, "a").files} == {FileStatus.UNCHANGED}


def test_edits_of_several_fields_and_the_text(ws, mind) -> None:
    export_cognitive(ws, "a", "goals")
    text = _read(ws, "Goals.md")
    text = text.replace("## Grow revenue", "## Grow revenue by 20%\n> in *every* region")
    text = text.replace("status: pending", "Status: ACTIVE").replace("progress: 0.0", "- progress: 0.25")
    text = text.replace("[deadline: 2024-06-01T00:00:00.000000Z]", "[deadline: 2024-07-01]")
    _write(ws, "Goals.md", text)
    result = import_cognitive(ws, "a", "goals")
    goal = ws.bdi.get("a", mind["goal"])
    assert result.updated == [mind["goal"]]
    assert goal.content == "Grow revenue by 20%\nin *every* region"
    assert (goal.status, goal.progress, goal.priority) == ("active", 0.25, 8)
    assert goal.deadline == datetime(2024, 7, 1, tzinfo=UTC)


def test_a_removed_marker_leaves_the_field_as_it_is(ws, mind, snapshot) -> None:
    export_cognitive(ws, "a", "desires")
    _write(ws, "Desires.md", _read(ws, "Desires.md").replace("urgency: 0.5\n", ""))
    before = snapshot(ws)
    assert import_cognitive(ws, "a", "desires").unchanged == 1
    assert snapshot(ws) == before


def test_a_new_section_creates_a_node_and_gets_its_id(ws, mind, snapshot) -> None:
    export_cognitive(ws, "a", "beliefs")
    _write(ws, "Beliefs.md", _read(ws, "Beliefs.md") + "\n## Initech is hiring\n> says the *news*\ncertainty: 0.6\n")
    result = import_cognitive(ws, "a", "beliefs")
    (uid,) = result.created
    node = ws.bdi.get("a", uid)
    assert (node.content, node.certainty, node.scope) == ("Initech is hiring\nsays the *news*", 0.6, "agent:a")
    assert f"id: {uid}\n" in _read(ws, "Beliefs.md")
    before = snapshot(ws)
    assert import_cognitive(ws, "a", "beliefs").created == []  # idempotent
    assert snapshot(ws) == before


def test_a_section_without_id_but_known_text_is_that_node(ws, mind, snapshot) -> None:
    export_cognitive(ws, "a", "beliefs")
    text = _read(ws, "Beliefs.md").replace(f"id: {mind['belief']}\n", "").replace("[updated: ", "[x: ")
    _write(ws, "Beliefs.md", text.replace("certainty: 0.8", "certainty: 0.7"))
    result = import_cognitive(ws, "a", "beliefs")
    assert (result.created, result.updated) == ([], [mind["belief"]])


def test_new_steps_under_plans_are_created_and_linked(ws, mind) -> None:
    export_cognitive(ws, "a", "plans")
    text = _read(ws, "Plans.md")
    text = text.replace(f"id: {mind['plan']}\n", f"id: {mind['plan']}\n\n### Call the leads\nsequence: 3\n")
    text += "\n## Partner programme\nstatus: active\n\n### Find partners\n\n### Sign them\nsequence: 1\n"
    _write(ws, "Plans.md", text)
    result = import_cognitive(ws, "a", "plans")
    assert len(result.created) == 4 and result.linked == [result.created[0], *result.created[2:]]
    plans = {p.content: p for p in ws.bdi.list("a", "plan")}
    partner = plans["Partner programme"]
    paths = ws.bdi.paths("a", ["plan", "plan_step"], start_uid=partner.uid)
    assert sorted(p.labels[1] for p in paths) == ["Find partners", "Sign them"]
    outbound = ws.bdi.paths("a", ["plan", "plan_step"], start_uid=mind["plan"])
    assert sorted(p.labels[1] for p in outbound) == ["Build the lead list", "Call the leads", "Send the emails"]
    exported = _read(ws, "Plans.md")
    assert exported.index("### Call the leads") > exported.index("### Send the emails")  # sequence 3
    assert {f.status for f in export_cognitive(ws, "a", "plans").files} == {FileStatus.UNCHANGED}


def test_a_plan_less_step_put_under_a_plan_is_linked_but_steps_are_not_moved(ws, mind) -> None:
    other = ws.bdi.add("plan", "a", "Other plan")
    export_cognitive(ws, "a", "plans")
    text = _read(ws, "Plans.md")
    orphan = text[text.index("### Unplanned step") : text.index("## Outbound")]
    step2 = text[text.index("### Send the emails") : text.index("## Other plan")]
    text = text.replace(orphan, "").replace(step2, "") + "\n" + orphan + step2
    _write(ws, "Plans.md", text)
    result = import_cognitive(ws, "a", "plans")
    assert result.linked == [mind["orphan"]] and result.created == result.updated == []
    assert [p.nodes for p in ws.bdi.paths("a", ["plan", "plan_step"], start_uid=other.uid)] == [
        [other.uid, mind["orphan"]]
    ]
    (warning,) = result.warnings
    assert f"step {mind['step2']} belongs to plan {mind['plan']}" in warning


def test_learnings_edit_importance_and_tags_and_add_lessons(ws, mind) -> None:
    export_cognitive(ws, "a", "learnings")
    text = _read(ws, "Learnings.md").replace("importance: 0.65", "importance: 0.9").replace("tags: qa", "tags: qa, io")
    text += "\n## Lessons need ids\nimportance: 0.7\ntags: meta\n"
    _write(ws, "Learnings.md", text)
    result = import_cognitive(ws, "a", "learnings")
    assert result.updated == [mind["lesson"]]
    lesson = ws.memory.get("a", mind["lesson"])
    assert (lesson.importance, lesson.tags) == (0.9, ["qa", "io"])
    (uid,) = result.created
    new = ws.memory.get("a", uid)
    assert (new.type, new.store.value, new.importance, new.tags) == (MemoryType.LESSON, "long_term", 0.7, ["meta"])
    assert f"id: {uid}" in _read(ws, "Learnings.md")


def test_a_lessons_text_and_store_are_not_edited(ws, mind, snapshot) -> None:
    export_cognitive(ws, "a", "learnings")
    original = _read(ws, "Learnings.md")
    _write(ws, "Learnings.md", original.replace("store: long_term", "store: working"))
    before = snapshot(ws)
    result = import_cognitive(ws, "a", "learnings")
    assert result.unchanged == 1 and "store is kept by the memory rules" in result.warnings[0]
    assert snapshot(ws) == before
    _write(ws, "Learnings.md", original.replace("## Test the import", "## Test the export"))
    with pytest.raises(InputError, match=r"Learnings.md:3: content: a lesson's text cannot be edited"):
        import_cognitive(ws, "a", "learnings")


# ---------------------------------------------------------------------------------------------- seed files


def test_beliefs_without_headers_become_beliefs(ws, snapshot) -> None:
    seed = (
        "# Beliefs\n\nSome intro paragraph that\nspans two lines.\n\n- Acme is growing\n"
        "- [x] Globex is shrinking\n  (continued)\n* Initech is hiring\n1. Numbered belief\n\ncertainty: 0.9\n"
    )
    _write(ws, "Beliefs.md", seed)
    result = import_cognitive(ws, "a", "beliefs")
    contents = [ws.bdi.get("a", uid).content for uid in result.created]
    assert contents == ["Some intro paragraph that spans two lines.", "Acme is growing",
                        "Globex is shrinking (continued)", "Initech is hiring", "Numbered belief"]  # fmt: skip
    assert result.warnings == ["agents/a/Beliefs.md:12: marker 'certainty' outside a ## section ignored"]
    assert _read(ws, "Beliefs.md").count("\nid: B-") == 5  # rewritten in the section format
    _write(ws, "Beliefs.md", seed)  # the same header-less file again: matched by text, nothing doubles
    before = snapshot(ws)
    assert import_cognitive(ws, "a", "beliefs").created == []
    assert len(ws.bdi.list("a", "belief")) == 5
    assert snapshot(ws)["store"] == before["store"]


def test_unknown_markers_and_stray_lines_are_warnings(ws, mind, snapshot) -> None:
    export_cognitive(ws, "a", "beliefs")
    text = _read(ws, "Beliefs.md").replace("certainty: 0.8\n", "certainty: 0.8\nmood: happy\nJust a note.\n")
    text += "\n### A sub-heading\ncertainty: 0.1\n\n# Another title\n"
    _write(ws, "Beliefs.md", text)
    before = snapshot(ws)
    result = import_cognitive(ws, "a", "beliefs")
    assert [w.split(": ", 1)[1] for w in result.warnings] == [
        "unknown marker 'mood' ignored",
        "line ignored: not a marker such as 'certainty: 0.8' (continue text with '> ')",
        "heading 'A sub-heading' and the lines under it ignored (only ## records are read)",
        "heading 'Another title' and the lines under it ignored (only ## records are read)",
    ]
    assert result.warnings[0].startswith("agents/a/Beliefs.md:5:")
    assert snapshot(ws)["store"] == before["store"]


def test_marker_spellings() -> None:
    assert split_marker("- **Certainty:** 0.8") == ("certainty", "0.8")
    assert split_marker("[Deadline: 2024-06-01T00:00:00Z]") == ("deadline", "2024-06-01T00:00:00Z")
    assert split_marker("hierarchy_level: strategic") == ("level", "strategic")
    assert split_marker("Updated-At: x") == ("updated", "x")
    assert split_marker("no colon here") is None
    assert split_marker("a sentence, with: a colon") is None  # not a marker name: reported as a stray line


# ---------------------------------------------------------------------------------------------- bad input


BAD = [
    ("certainty: 0.8", "certainty: 1.7", "certainty", "less than or equal to 1"),
    ("certainty: 0.8", "certainty: high", "certainty", "valid number"),
    ("status: active", "status: bogus", "status", "a belief status must be one of"),
    ("certainty: 0.8", "certainty: 0.8\npriority: 7.5", "priority", "valid integer"),
    ("certainty: 0.8", "certainty: 0.8\nlevel: galactic", "level", "strategic"),
    ("certainty: 0.8", "certainty: 0.8\n[deadline: tomorrow]", "deadline", "ISO-8601"),
    ("certainty: 0.8", "certainty: 0.8\ncertainty: 0.9", "certainty", "given twice"),
    ("certainty: 0.8", "certainty: 0.8\nscope: nowhere", "scope", "must be global"),
    ("certainty: 0.8", "certainty: 0.8\nscope: global", "scope", "cannot be changed by import"),
    ("id: B-", "id: G-", "id", "must be an id such as B-01J"),
    ("id: B-", "id: B-01J00000000000000000000000\nx: B-", "id", "no belief B-01J00000000000000000000000 visible"),
    ("## Acme is growing", "##", "content", "at least 1 character"),
    # a field the kind does not use: refused up front (BDIService refuses it too, after earlier sections' writes)
    ("certainty: 0.8", "certainty: 0.8\nurgency: 0.5", "urgency", "a belief has no urgency"),
    ("## Brand new belief", "## Brand new belief\npriority: 3", "priority", "a belief has no priority"),
]


@pytest.mark.parametrize("case", BAD, ids=[f"{case[2]}-{i}" for i, case in enumerate(BAD)])
def test_a_bad_section_is_refused_and_nothing_is_written(ws, mind, snapshot, case) -> None:
    old, new, field, rule = case
    export_cognitive(ws, "a")
    _write(ws, "Desires.md", _read(ws, "Desires.md").replace("priority: 9", "priority: 3"))  # a valid edit
    text = _read(ws, "Beliefs.md")
    _write(ws, "Beliefs.md", text.replace("\n## Globex", "\n## Brand new belief\n\n## Globex").replace(old, new, 1))
    before = snapshot(ws)
    with pytest.raises(InputError) as err:
        import_cognitive(ws, "a")
    assert err.value.field.startswith("agents/a/Beliefs.md:") and err.value.field.endswith(f": {field}")
    line = int(err.value.field.split(":")[1])
    lines = _read(ws, "Beliefs.md").splitlines()
    assert field in lines[line - 1] or field in ("content", "id", "status")
    assert rule in err.value.rule
    assert snapshot(ws) == before  # neither the valid desire edit nor the new belief was written


def test_a_duplicate_id_is_refused(ws, mind) -> None:
    export_cognitive(ws, "a", "beliefs")
    text = _read(ws, "Beliefs.md")
    _write(ws, "Beliefs.md", text + "\n## Copy\nid: " + mind["belief"] + "\n")
    with pytest.raises(InputError, match=r"Beliefs.md:17: id: B-\w+ is given twice \(also at agents/a/Beliefs.md:7\)"):
        import_cognitive(ws, "a", "beliefs")


def test_another_agents_private_node_is_not_found(ws, mind) -> None:
    theirs = ws.bdi.add("belief", "b", "b's secret")
    _write(ws, "Beliefs.md", f"# Beliefs\n\n## b's secret\ncertainty: 0.1\nid: {theirs.uid}\n")
    with pytest.raises(InputError, match=r"id: no belief .* visible to 'a'"):
        import_cognitive(ws, "a", "beliefs")


def test_a_node_in_a_scope_the_agent_cannot_write_is_refused(ws, mind) -> None:
    ws.scopes.grant("b", "project:x", granted_by="admin")
    _write(ws, "Beliefs.md", "# Beliefs\n\n## New\nscope: project:x\n")
    with pytest.raises(ScopeError, match=r"Beliefs.md:4: scope: agent 'a' may not write"):
        import_cognitive(ws, "a", "beliefs")


def test_a_stale_file_is_refused(ws, mind, clock, snapshot) -> None:
    export_cognitive(ws, "a", "beliefs")
    clock.advance(timedelta(minutes=1))
    ws.bdi.update("a", mind["belief"], certainty=0.5)  # someone else changed it after the export
    stale = _read(ws, "Beliefs.md")
    _write(ws, "Beliefs.md", stale.replace("certainty: 0.4", "certainty: 0.3"))  # edit another section
    before = snapshot(ws)
    # the unedited but stale section would put certainty 0.8 back over the newer 0.5: refused
    with pytest.raises(InputError, match=r"Beliefs.md:6: updated: the record changed in the store \(2024-05-01T12:01"):
        import_cognitive(ws, "a", "beliefs")
    assert snapshot(ws) == before
    export_cognitive(ws, "a", "beliefs")  # export again, redo the edit: accepted
    _write(ws, "Beliefs.md", _read(ws, "Beliefs.md").replace("certainty: 0.4", "certainty: 0.3"))
    assert import_cognitive(ws, "a", "beliefs").updated == [mind["belief2"]]
    assert ws.bdi.get("a", mind["belief"]).certainty == 0.5


def test_a_section_without_updated_marker_is_not_checked_for_staleness(ws, mind, clock) -> None:
    export_cognitive(ws, "a", "beliefs")
    clock.advance(timedelta(minutes=1))
    ws.bdi.update("a", mind["belief"], certainty=0.5)
    lines = [line for line in _read(ws, "Beliefs.md").splitlines() if not line.startswith("[updated")]
    _write(ws, "Beliefs.md", "\n".join(lines))
    assert import_cognitive(ws, "a", "beliefs").updated == [mind["belief"]]  # the file wins
    assert ws.bdi.get("a", mind["belief"]).certainty == 0.8


def test_missing_and_unreadable_files(ws, mind) -> None:
    with pytest.raises(NotFoundError, match=r"agents/a/Beliefs\.md: no such file"):
        import_cognitive(ws, "a", "beliefs")
    export_cognitive(ws, "a", "goals")
    result = import_cognitive(ws, "a")
    assert len(result.missing) == 5 and result.unchanged == 1
    _file(ws, "Goals.md").write_bytes(b"# Goals\n\n## \xff\xfe\n")
    with pytest.raises(InputError, match=r"agents/a/Goals\.md: is not UTF-8 text"):
        import_cognitive(ws, "a", "goals")


def test_unknown_kind_and_agent(ws) -> None:
    with pytest.raises(InputError, match="kind: must be one of beliefs"):
        export_cognitive(ws, "a", "feelings")
    with pytest.raises(NotFoundError):
        export_cognitive(ws, "nobody")


@pytest.mark.parametrize("agent", ["../x", "..", "a/../b", "Agent"])
def test_bad_agent_ids_are_refused(ws, snapshot, agent: str) -> None:
    before = snapshot(ws)
    for call in (export_cognitive, import_cognitive):
        with pytest.raises(InputError) as err:
            call(ws, agent)
        assert err.value.field == "agent"
    assert snapshot(ws) == before
