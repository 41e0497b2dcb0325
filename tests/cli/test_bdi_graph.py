"""BDI node groups (one factory, six kinds), links, relations and path queries."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from cli.commands.bdi import KINDS, KindSpec
from kg.models import NODE_STATUSES

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")


@pytest.mark.parametrize("spec", KINDS, ids=[spec.group for spec in KINDS])
def test_add_list_update_for_every_kind(ready: Mabos, spec: KindSpec) -> None:
    group, statuses = spec.group, NODE_STATUSES[spec.kind]
    node = ready.json(group, "add", *A, f"a {group}")
    assert node["kind"] == spec.kind.value and node["status"] == statuses[0]
    assert node["scope"] == "agent:sales-agent"
    listed = ready.json(group, "list", *A)
    assert [n["uid"] for n in listed] == [node["uid"]]
    updated = ready.json(group, "update", *A, node["uid"], "--status", statuses[1], "--content", "changed")
    assert (updated["status"], updated["content"]) == (statuses[1], "changed")
    assert ready.json(group, "list", *A, "--status", statuses[0]) == []
    human = ready.ok(group, "list", *A).stdout
    assert node["uid"] in human and "changed" in human


def test_kind_specific_fields(ready: Mabos) -> None:
    goal = ready.json("goal", "add", *A, "Grow revenue", "--level", "strategic", "--priority", "8",
                      "--deadline", "2025-12-31", "--urgency", "0.3", "--progress", "0.1")  # fmt: skip
    assert (goal["hierarchy_level"], goal["priority"], goal["urgency"], goal["progress"]) == ("strategic", 8, 0.3, 0.1)
    assert goal["deadline"] == "2025-12-31T00:00:00.000000Z"
    assert ready.json("belief", "add", *A, "Acme grows", "--certainty", "0.7")["certainty"] == 0.7
    assert ready.json("step", "add", *A, "Email", "--sequence", "2")["sequence"] == 2
    assert ready.json("plan", "add", *A, "Campaign", "--level", "tactical")["hierarchy_level"] == "tactical"
    human = ready.ok("goal", "update", *A, goal["uid"], "--priority", "9").stdout
    assert re.search(rf'Updated goal {goal["uid"]} "Grow revenue" \[pending, priority 9', human)


def test_options_are_per_kind(ready: Mabos) -> None:
    assert ready("belief", "add", *A, "x", "--level", "strategic").exit_code == 2
    assert ready("step", "add", *A, "x", "--priority", "3").exit_code == 2
    assert ready("goal", "add", *A, "x", "--status", "done").exit_code == 2  # a step status, not a goal's


def test_links_relations_and_paths(populated: dict[str, str], ready: Mabos) -> None:
    linked = ready.json("graph", "link", *A, "desire-motivates-goal", populated["desire"], populated["goal"])
    assert (linked["kind"], linked["source_uid"], linked["target_uid"]) == (
        "desire-motivates-goal", populated["desire"], populated["goal"],
    )  # fmt: skip
    relations = ready.json("graph", "relations", *A, populated["goal"])
    assert sorted(r["kind"] for r in relations) == [
        "belief-supports-goal",
        "desire-motivates-goal",
        "goal-requires-plan",
    ]

    paths = ready.json("graph", "path", *A, "belief", "goal", "plan")
    assert paths == [{
        "nodes": [populated["belief"], populated["goal"], populated["plan"]],
        "kinds": ["belief", "goal", "plan"],
        "relations": ["belief-supports-goal", "goal-requires-plan"],
        "labels": ["Acme is growing", "Grow revenue", "Outbound campaign"],
    }]  # fmt: skip
    human = ready.ok("graph", "path", *A, "belief", "goal", "plan").stdout
    assert (
        "Acme is growing (belief) -[belief-supports-goal]-> Grow revenue (goal) "
        "-[goal-requires-plan]-> Outbound campaign (plan)"
    ) in human
    assert ready.json("graph", "path", *A, "goal", "plan", "step", "--from", populated["plan"]) == []
    assert len(ready.json("graph", "path", *A, "plan", "step", "--relation", "plan-contains-step")) == 1


def test_link_checks_the_kinds_of_its_ends(populated: dict[str, str], ready: Mabos) -> None:
    result = ready("graph", "link", *A, "goal-requires-plan", populated["belief"], populated["plan"])
    assert result.exit_code == 1 and result.stderr.startswith("error: goal: ")


def test_update_refuses_an_id_of_another_kind(populated: dict[str, str], ready: Mabos) -> None:
    result = ready("goal", "update", *A, populated["belief"], "--priority", "3")
    assert result.exit_code == 1
    assert result.stderr == f"error: uid: '{populated['belief']}' is not a goal id\n"
