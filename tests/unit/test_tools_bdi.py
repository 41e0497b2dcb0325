"""bdi_add, bdi_list and bdi_update (cli/tools/bdi.py) and the ``mabos belief|desire|goal|intention|plan|step
add|list|update`` commands that run them (issue 18: the commands called BDIService directly, past the registry's
validation). Real workspace and SQLite; no embedder needed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, get_args

import pytest

from cli import tools
from cli.tools.bdi import KIND_FIELDS, BdiNodes, Status
from kg.errors import MabosError, NotFoundError, ScopeError
from kg.ids import new_id
from kg.models import NODE_STATUSES, BDINode, NodeKind
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace
from tests.unit.tool_calls import call, mabos, refused_unchanged, spy_on

pytestmark = pytest.mark.usefixtures("no_embedder")


def test_the_status_type_is_every_kinds_statuses() -> None:
    assert set(get_args(Status)) == {s for statuses in NODE_STATUSES.values() for s in statuses}
    assert set(KIND_FIELDS) == set(NodeKind)


def test_each_kind_is_added_with_its_fields_listed_and_updated(ws: Workspace) -> None:
    deadline = datetime(2030, 1, 1, tzinfo=UTC)
    made = {
        "belief": call(ws, "bdi_add", kind="belief", content="Acme grows", certainty=0.7),
        "desire": call(ws, "bdi_add", kind="desire", content="Lead SaaS", priority=9, urgency=0.4),
        "goal": call(
            ws,
            "bdi_add",
            kind="goal",
            content="Grow revenue",
            hierarchy_level="strategic",
            priority=8,
            progress=0.1,
            deadline="2030-01-01T00:00:00",
            urgency=0.5,
        ),
        "intention": call(ws, "bdi_add", kind="intention", content="Close Acme", priority=7, deadline=deadline),
        "plan": call(ws, "bdi_add", kind="plan", content="Outbound", status="active", hierarchy_level="tactical"),
        "step": call(ws, "bdi_add", kind="step", content="Draft the email", sequence=1),
    }
    assert {k: (n.kind.value, n.status) for k, n in made.items()} == {
        "belief": ("belief", "active"), "desire": ("desire", "active"), "goal": ("goal", "pending"),
        "intention": ("intention", "active"), "plan": ("plan", "active"), "step": ("plan_step", "pending"),
    }  # fmt: skip
    assert made["goal"].deadline == deadline and made["goal"].certainty is None and made["belief"].certainty == 0.7
    assert all(isinstance(n, BDINode) and n.scope == "agent:a" for n in made.values())
    listed = call(ws, "bdi_list")
    assert (
        isinstance(listed, BdiNodes)
        and listed.count == 6
        and {n.uid for n in listed.nodes} == {n.uid for n in made.values()}
    )
    assert [n.uid for n in call(ws, "bdi_list", kind="plan_step", status="pending").nodes] == [made["step"].uid]
    assert call(ws, "bdi_list", kind="goal", status="achieved").count == 0
    done = call(ws, "bdi_update", uid=made["goal"].uid, kind="goal", status="achieved", progress=1.0)
    assert (done.status, done.progress, done.content) == ("achieved", 1.0, "Grow revenue")
    assert ws.ports.bdi.get(made["goal"].uid).status == "achieved"
    assert call(ws, "bdi_update", uid=made["belief"].uid, content="Acme shrinks").content == "Acme shrinks"
    assert call(ws, "bdi_list", agent_id="b").count == 0, "b sees none of a's private nodes"


#: Bad inputs of the three tools and the field each error names (the service's keyword path names the same).
BAD = [
        ("bdi_add", {"content": "x"}, "kind"),
        ("bdi_add", {"kind": "wish", "content": "x"}, "kind"),
        ("bdi_add", {"kind": 3, "content": "x"}, "kind"),
        ("bdi_add", {"kind": "belief"}, "content"),
        ("bdi_add", {"kind": "belief", "content": ""}, "content"),
        ("bdi_add", {"kind": "belief", "content": ["x"]}, "content"),
        ("bdi_add", {"kind": "belief", "content": "x", "certainty": 1.5}, "certainty"),
        ("bdi_add", {"kind": "belief", "content": "x", "certainty": "sure"}, "certainty"),
        ("bdi_add", {"kind": "belief", "content": "x", "priority": 3}, "priority"),
        ("bdi_add", {"kind": "goal", "content": "x", "priority": 11}, "priority"),
        ("bdi_add", {"kind": "goal", "content": "x", "status": "done"}, "status"),
        ("bdi_add", {"kind": "goal", "content": "x", "status": "finished"}, "status"),
        ("bdi_add", {"kind": "goal", "content": "x", "deadline": "next week"}, "deadline"),
        ("bdi_add", {"kind": "goal", "content": "x", "hierarchy_level": "cosmic"}, "hierarchy_level"),
        ("bdi_add", {"kind": "plan_step", "content": "x", "sequence": -1}, "sequence"),
        ("bdi_add", {"kind": "plan", "content": "x", "sequence": 1}, "sequence"),
        ("bdi_add", {"kind": "belief", "content": "x", "scope": "nowhere"}, "scope"),
        ("bdi_add", {"kind": "belief", "content": "x", "colour": "red"}, "colour"),
        ("bdi_list", {"kind": "wish"}, "kind"),
        ("bdi_list", {"limit": 0}, "limit"),
        ("bdi_list", {"limit": "many"}, "limit"),
        ("bdi_list", {"kind": "belief", "status": "pending"}, "status"),
        ("bdi_list", {"status": "nonsense"}, "status"),
        ("bdi_update", {}, "uid"),
        ("bdi_update", {"uid": "G-1", "status": "active"}, "uid"),
        ("bdi_update", {"uid": new_id("fact"), "status": "active"}, "uid"),
        ("bdi_update", {"uid": "{goal}", "kind": "belief", "status": "active"}, "uid"),
        ("bdi_update", {"uid": "{goal}"}, "changes"),
        ("bdi_update", {"uid": "{goal}", "certainty": 0.5}, "certainty"),
        ("bdi_update", {"uid": "{goal}", "status": "revised"}, "status"),
        ("bdi_update", {"uid": "{goal}", "progress": 2}, "progress"),
        ("bdi_update", {"uid": "{goal}", "content": "x\ud800"}, "content"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "arguments", "field"), BAD)
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    goal = call(ws, "bdi_add", kind="goal", content="Grow revenue")
    arguments = {k: v.format(goal=goal.uid) if isinstance(v, str) and "{" in v else v for k, v in arguments.items()}
    assert refused_unchanged(ws, name, arguments).field == field


@pytest.mark.parametrize(("name", "arguments", "field"), BAD)
def test_python_keywords_are_validated_into_the_same_requests(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    """BDIService.add/list/update given keywords build the tools' requests: the same errors, nothing written."""
    goal = ws.bdi.add("goal", "a", "Grow revenue")
    given = {k: v.format(goal=goal.uid) if isinstance(v, str) and "{" in v else v for k, v in arguments.items()}
    before = snapshot_workspace(ws)
    with pytest.raises(MabosError) as err:
        if name == "bdi_add":
            ws.bdi.add(given.pop("kind", None), "a", **given)
        elif name == "bdi_list":
            ws.bdi.list("a", given.pop("kind", None), **given)
        else:
            ws.bdi.update("a", given.pop("uid", None), **given)
    assert err.value.field == field
    assert snapshot_workspace(ws) == before


def test_scopes_are_the_services(ws: Workspace) -> None:
    theirs = call(ws, "bdi_add", agent_id="b", kind="goal", content="b's goal")
    before = snapshot_workspace(ws)
    with pytest.raises(NotFoundError, match=r"^uid: no node"):
        call(ws, "bdi_update", uid=theirs.uid, progress=1.0)
    with pytest.raises(ScopeError, match=r"^scope: "):
        call(ws, "bdi_add", kind="belief", content="planted", scope="agent:b")
    with pytest.raises(ScopeError, match=r"^scope: "):
        call(ws, "bdi_list", scope="agent:b")
    with pytest.raises(MabosError, match="agent_id"):
        tools.call("bdi_update", workspace=ws.path, agent="a", agent_id="b", uid=theirs.uid, progress=1.0)
    assert snapshot_workspace(ws) == before
    ws.scopes.grant("a", "project:x", granted_by="admin")
    shared = call(ws, "bdi_add", kind="belief", content="shared", scope="project:x")
    assert shared.scope == "project:x" and call(ws, "bdi_list", agent_id="b", scope="global").count == 0


def test_the_commands_run_the_tools_with_unchanged_output(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_on(monkeypatch, "bdi_add", "bdi_list", "bdi_update")
    added = mabos(ws, "goal", "add", "--agent", "a", "Grow revenue", "--level", "strategic", "--priority", "8",
                  "--json")  # fmt: skip
    node = json.loads(added.stdout)
    assert added.exit_code == 0 and (node["kind"], node["hierarchy_level"], node["priority"]) == (
        "goal",
        "strategic",
        8,
    )
    human = mabos(ws, "step", "add", "--agent", "a", "Draft the email", "--sequence", "1")
    assert human.exit_code == 0 and human.stdout.startswith("Created step S-"), human.stdout
    listed = json.loads(mabos(ws, "goal", "list", "--agent", "a", "--json").stdout)
    assert isinstance(listed, list) and [n["uid"] for n in listed] == [node["uid"]], "--json is still a list of nodes"
    changed = json.loads(
        mabos(ws, "goal", "update", "--agent", "a", node["uid"], "--status", "active", "--json").stdout
    )
    assert changed["status"] == "active"
    wrong = mabos(ws, "belief", "update", "--agent", "a", node["uid"], "--status", "revised")
    assert wrong.exit_code == 1 and wrong.stderr == f"error: uid: '{node['uid']}' is not a belief id\n"
    empty = mabos(ws, "goal", "update", "--agent", "a", node["uid"])
    assert empty.exit_code == 1 and empty.stderr.startswith("error: changes: nothing to update")
    assert seen == ["bdi_add", "bdi_add", "bdi_list", "bdi_update", "bdi_update"]  # the wrong kind: refused on input
