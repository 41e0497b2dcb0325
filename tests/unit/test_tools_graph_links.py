"""graph_link, graph_relations and graph_path (cli/tools/graph_links.py) and the ``mabos graph link|relations|path``
commands that run them (issue 18: the commands called BDIService directly, past the registry's validation). Real
workspace and SQLite; no embedder needed."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from cli.tools.graph_links import LinkKind, PathList, RelationList
from kg.errors import NotFoundError, ScopeError
from kg.ids import new_id
from kg.models import Relation, RelationKind
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace
from tests.unit.tool_calls import call, mabos, refused_unchanged, spy_on

pytestmark = pytest.mark.usefixtures("no_embedder")


def chain(ws: Workspace) -> dict[str, str]:
    """a's belief -> goal -> plan -> two steps, the second depending on the first."""
    uids = {
        "belief": call(ws, "bdi_add", kind="belief", content="Acme grows").uid,
        "goal": call(ws, "bdi_add", kind="goal", content="Grow revenue").uid,
        "plan": call(ws, "bdi_add", kind="plan", content="Outbound").uid,
        "s1": call(ws, "bdi_add", kind="step", content="Draft", sequence=1).uid,
        "s2": call(ws, "bdi_add", kind="step", content="Send", sequence=2).uid,
    }
    for relation, source, target in (("belief-supports-goal", "belief", "goal"), ("goal-requires-plan", "goal", "plan"),
                                     ("plan-contains-step", "plan", "s1"), ("plan-contains-step", "plan", "s2"),
                                     ("step-depends-on", "s2", "s1")):  # fmt: skip
        call(ws, "graph_link", relation=relation, source_uid=uids[source], target_uid=uids[target])
    return uids


def test_the_link_kinds_are_the_storable_relations() -> None:
    assert set(get_args(LinkKind)) == {k.value for k in RelationKind} - {"agent-owns"}  # agent-owns is implied


def test_links_relations_and_paths(ws: Workspace) -> None:
    uids = chain(ws)
    edges = call(ws, "graph_relations", uid=uids["plan"])
    assert isinstance(edges, RelationList) and edges.count == 3
    assert all(isinstance(e, Relation) and e.scope == "agent:a" for e in edges.relations)
    assert sorted(e.kind.value for e in edges.relations) == ["goal-requires-plan", "plan-contains-step",
                                                              "plan-contains-step"]  # fmt: skip
    found = call(ws, "graph_path", kinds=["belief", "goal", "plan", "step"])
    assert isinstance(found, PathList) and found.count == 2
    assert {tuple(p.nodes) for p in found.paths} == {(uids["belief"], uids["goal"], uids["plan"], uids[s])
                                                     for s in ("s1", "s2")}  # fmt: skip
    assert call(ws, "graph_path", kinds=["step", "step"], relation="step-depends-on").count == 2  # either direction
    assert call(ws, "graph_path", kinds=["plan", "step"], start_uid=uids["plan"], limit=1).count == 1
    assert call(ws, "graph_relations", agent_id="b", uid=uids["plan"]).count == 0
    assert call(ws, "graph_path", agent_id="b", kinds=["belief", "goal"]).count == 0


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("graph_link", {"source_uid": "{belief}", "target_uid": "{goal}"}, "relation"),
        ("graph_link", {"relation": "agent-owns", "source_uid": "{belief}", "target_uid": "{goal}"}, "relation"),
        ("graph_link", {"relation": "likes", "source_uid": "{belief}", "target_uid": "{goal}"}, "relation"),
        ("graph_link", {"relation": "belief-supports-goal", "source_uid": "B-1", "target_uid": "{goal}"}, "source_uid"),
        ("graph_link", {"relation": "belief-supports-goal", "source_uid": "{belief}", "target_uid": 5}, "target_uid"),
        ("graph_link", {"relation": "belief-supports-goal", "source_uid": "{goal}", "target_uid": "{belief}"},
         "belief"),
        ("graph_link", {"relation": "belief-supports-goal", "source_uid": "{belief}", "target_uid": "{goal}",
                        "scope": "nowhere"}, "scope"),
        ("graph_relations", {}, "uid"),
        ("graph_relations", {"uid": ["G-1"]}, "uid"),
        ("graph_path", {}, "kinds"),
        ("graph_path", {"kinds": []}, "kinds"),
        ("graph_path", {"kinds": "belief goal"}, "kinds"),
        ("graph_path", {"kinds": ["belief"] * 9}, "kinds"),
        ("graph_path", {"kinds": ["belief", "unicorn"]}, "kinds"),
        ("graph_path", {"kinds": ["belief", ""]}, "kinds"),
        ("graph_path", {"kinds": ["belief"], "relation": "likes"}, "relation"),
        ("graph_path", {"kinds": ["belief"], "limit": 10_001}, "limit"),
        ("graph_path", {"kinds": ["belief"], "start_uid": "nope"}, "start_uid"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    uids = {"belief": call(ws, "bdi_add", kind="belief", content="b").uid,
            "goal": call(ws, "bdi_add", kind="goal", content="g").uid}  # fmt: skip
    arguments = {k: v.format(**uids) if isinstance(v, str) else v for k, v in arguments.items()}
    assert refused_unchanged(ws, name, arguments).field.split("[")[0].split(".")[0] == field


def test_scopes_are_the_services(ws: Workspace) -> None:
    uids = chain(ws)
    theirs = call(ws, "bdi_add", agent_id="b", kind="belief", content="b's").uid
    before = snapshot_workspace(ws)
    with pytest.raises(NotFoundError, match=r"^target: no record"):
        call(
            ws, "graph_link", agent_id="b", relation="belief-supports-goal", source_uid=theirs, target_uid=uids["goal"]
        )
    with pytest.raises(NotFoundError, match=r"^source: no record"):
        call(ws, "graph_link", relation="belief-supports-goal", source_uid=theirs, target_uid=uids["goal"])
    with pytest.raises(ScopeError, match=r"^scope: "):
        call(ws, "graph_link", relation="belief-supports-goal", source_uid=uids["belief"], target_uid=uids["goal"],
             scope="agent:b")  # fmt: skip
    with pytest.raises(NotFoundError):
        call(ws, "graph_link", relation="belief-supports-goal", source_uid=new_id("belief"), target_uid=uids["goal"])
    assert snapshot_workspace(ws) == before


def test_the_commands_run_the_tools_with_unchanged_output(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_on(monkeypatch, "graph_link", "graph_relations", "graph_path")
    belief = call(ws, "bdi_add", kind="belief", content="Acme grows").uid
    goal = call(ws, "bdi_add", kind="goal", content="Grow revenue").uid
    linked = mabos(ws, "graph", "link", "--agent", "a", "belief-supports-goal", belief, goal)
    assert linked.exit_code == 0 and linked.stdout.startswith(f"Linked {belief} -[belief-supports-goal]-> {goal} (")
    edges = json.loads(mabos(ws, "graph", "relations", "--agent", "a", goal, "--json").stdout)
    assert isinstance(edges, list) and [(e["source_uid"], e["target_uid"]) for e in edges] == [(belief, goal)]
    paths = json.loads(mabos(ws, "graph", "path", "--agent", "a", "belief", "goal", "--json").stdout)
    assert isinstance(paths, list) and [p["nodes"] for p in paths] == [[belief, goal]], "--json is still a list"
    human = mabos(ws, "graph", "path", "--agent", "a", "belief", "goal", "--from", belief)
    assert human.exit_code == 0 and "Acme grows" in human.stdout
    bad = mabos(ws, "graph", "path", "--agent", "a", "belief", "unicorn")
    assert bad.exit_code == 1 and bad.stderr.startswith("error: kinds: ") and bad.stderr.count("\n") == 1
    assert seen == ["graph_link", "graph_relations", "graph_path", "graph_path", "graph_path"]
