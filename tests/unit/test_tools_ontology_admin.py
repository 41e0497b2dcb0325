"""ontology_reject_proposal, ontology_diff, ontology_check, ontology_to_typeql (cli/tools/ontology_admin.py),
reason_owl_rl (cli/tools/owl_rl.py) and the ``mabos ontology reject|diff|check|to-typeql`` and ``mabos reason
owl-rl`` commands that run them (issue 18: the commands called OntologyService, the TypeQL converter and
run_owl_rl directly, past the registry's validation). Real workspace, SQLite, rdflib and the shipped ontologies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli import tools
from cli.tools.ontology_admin import OntologyCheck, ProposalDiff, TypeQLResult
from cli.tools.owl_rl import OwlRlResult
from kg.errors import ConflictError, InputError, MabosError, NotFoundError
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace
from tests.records import VENDOR
from tests.unit.tool_calls import call, mabos, refused_unchanged, spy_on

pytestmark = pytest.mark.usefixtures("no_embedder")


def propose(ws: Workspace, agent: str = "a", **extra: Any) -> str:
    return call(ws, "ontology_propose_concept", agent_id=agent, **{**VENDOR, **extra}).uid  # type: ignore[no-any-return]


def test_diff_check_typeql_and_reject(ws: Workspace) -> None:
    uid = propose(ws)
    before = snapshot_workspace(ws)
    diff = call(ws, "ontology_diff", uid=uid)
    assert isinstance(diff, ProposalDiff) and '"@id": "biz:DropshipVendor"' in diff.diff
    checked = call(ws, "ontology_check")
    assert isinstance(checked, OntologyCheck) and checked.ok and len(checked.files) >= 2
    schema = call(ws, "ontology_to_typeql", agent_id=None)
    assert isinstance(schema, TypeQLResult) and schema.text.startswith("#") and "define" in schema.text
    assert schema.counts["entities"] > 0 and all(name.endswith(".jsonld") for name in schema.files)
    assert snapshot_workspace(ws) == before, "diff, check and to_typeql write nothing"
    rejected = call(ws, "ontology_reject_proposal", uid=uid, reason="duplicate of biz:Supplier")
    assert rejected.status.value == "rejected" and rejected.history[-1].by == "a"
    with pytest.raises(ConflictError, match=r"^status: cannot reject"):
        call(ws, "ontology_reject_proposal", uid=uid, reason="again")


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("ontology_reject_proposal", {"reason": "x"}, "uid"),
        ("ontology_reject_proposal", {"uid": "{uid}"}, "reason"),
        ("ontology_reject_proposal", {"uid": "{uid}", "reason": ""}, "reason"),
        ("ontology_reject_proposal", {"uid": "{uid}", "reason": "   "}, "reason"),
        ("ontology_reject_proposal", {"uid": ["O-1"], "reason": "x"}, "uid"),
        ("ontology_diff", {}, "uid"),
        ("ontology_diff", {"uid": ""}, "uid"),
        ("ontology_check", {"strict": True}, "strict"),
        ("ontology_to_typeql", {"out": "/etc/passwd"}, "out"),
        ("reason_owl_rl", {"engine": "hermit"}, "engine"),
        ("reason_owl_rl", {"dry_run": "perhaps"}, "dry_run"),
        ("reason_owl_rl", {"limit": 0}, "limit"),
        ("reason_owl_rl", {"ontology": ["/etc/passwd"]}, "ontology"),
    ],
)
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    uid = propose(ws)
    arguments = {k: v.format(uid=uid) if isinstance(v, str) else v for k, v in arguments.items()}
    assert refused_unchanged(ws, name, arguments).field == field


def test_a_private_proposal_is_neither_diffed_nor_rejected_by_another_agent(ws: Workspace) -> None:
    theirs = propose(ws, "b", scope="agent:b")
    before = snapshot_workspace(ws)
    for name, arguments in (("ontology_diff", {}), ("ontology_reject_proposal", {"reason": "mine now"})):
        with pytest.raises(NotFoundError, match=r"^proposal: no proposal"):
            call(ws, name, uid=theirs, **arguments)
        with pytest.raises(MabosError, match="agent_id"):
            tools.call(name, workspace=ws.path, agent="a", agent_id="b", uid=theirs, **arguments)
    assert snapshot_workspace(ws) == before
    ws.scopes.grant("a", "project:x", granted_by="admin")
    ws.scopes.grant("b", "project:x", granted_by="admin")
    shared = propose(ws, "b", scope="project:x", node_id="biz:SharedVendor", label="Shared Vendor")
    ws.scopes.revoke("a", "project:x", revoked_by="admin")
    with pytest.raises(NotFoundError):
        call(ws, "ontology_reject_proposal", uid=shared, reason="not granted any more")
    assert [p.status.value for p in call(ws, "ontology_list_proposals", agent_id="b").proposals] == ["pending"] * 2
    assert call(ws, "ontology_diff", agent_id="b", uid=theirs).diff, "b still diffs its own proposal"
    with pytest.raises(InputError, match=r"^agent_id: required"):  # an MCP caller always acts as an agent
        tools.run(tools.ToolContext(workspace_obj=ws, operator=False), "ontology_diff", {"uid": theirs})


def test_owl_rl_writes_into_the_agents_own_scope_only(ws: Workspace) -> None:
    ws.facts.assert_fact("a", "Dog", "subClassOf", "Animal")
    ws.facts.assert_fact("a", "rex", "type", "Dog")
    ws.facts.assert_fact("b", "fido", "type", "Dog")  # b's private fact: not an input of a's closure
    dry = call(ws, "reason_owl_rl", dry_run=True)
    assert isinstance(dry, OwlRlResult) and dry.created >= 1 and not dry.truncated
    assert ws.facts.query("a", subject="rex", predicate="type", object="Animal") == []
    done = call(ws, "reason_owl_rl", limit=1)
    assert done.created == dry.created and len(done.entailments) == 1 and done.truncated == (done.entailed > 1)
    derived = ws.facts.query("a", subject="rex", predicate="type", object="Animal")
    assert [(f.scope, f.source) for f in derived] == [("agent:a", "owl-rl")]
    assert ws.facts.query("a", subject="fido", predicate="type", object="Animal") == []
    assert ws.facts.query("b", subject="rex", predicate="type", object="Animal") == [], "b cannot read a's result"
    assert call(ws, "reason_owl_rl").created == 0, "a second run changes nothing"


def test_the_commands_run_the_tools_with_unchanged_output(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ("ontology_reject_proposal", "ontology_diff", "ontology_check", "ontology_to_typeql", "reason_owl_rl")
    seen = spy_on(monkeypatch, *names)
    uid = propose(ws)
    shown = mabos(ws, "ontology", "diff", uid)
    assert shown.exit_code == 0 and shown.stdout.startswith("---")
    assert set(json.loads(mabos(ws, "ontology", "diff", uid, "--json").stdout)) == {"uid", "diff"}
    checked = json.loads(mabos(ws, "ontology", "check", "--json").stdout)
    assert isinstance(checked, list) and all(r["ok"] for r in checked), "--json is still the list of files"
    written = json.loads(mabos(ws, "ontology", "to-typeql", "--out", str(tmp_path / "o.tql"), "--json").stdout)
    assert set(written) == {"path", "files", "counts", "notes"} and Path(written["files"][0]).is_file()
    assert (tmp_path / "o.tql").read_text(encoding="utf-8").startswith("#")
    printed = mabos(ws, "ontology", "to-typeql", "--out", "-")
    assert printed.exit_code == 0 and "define" in printed.stdout
    rejected = mabos(ws, "ontology", "reject", uid, "--reason", "duplicate", "--by", "b", "--json")
    assert json.loads(rejected.stdout)["history"][-1]["by"] == "b"
    empty = mabos(ws, "ontology", "to-typeql", "--ontology-dir", str(tmp_path / "none"))
    assert empty.exit_code == 1 and empty.stderr.startswith("error: ") and empty.stderr.count("\n") == 1
    ws.facts.assert_fact("a", "Dog", "subClassOf", "Animal")
    ws.facts.assert_fact("a", "rex", "type", "Dog")
    extra = tmp_path / "zoo.ttl"
    extra.write_text("@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n", encoding="utf-8")
    owl = json.loads(mabos(ws, "reason", "owl-rl", "--agent", "a", "--ontology", str(extra), "--json").stdout)
    assert owl["created"] >= 1 and "truncated" not in owl, "--json is the report as before"
    assert seen == ["ontology_diff", "ontology_diff", "ontology_check", "ontology_to_typeql", "ontology_to_typeql",
                    "ontology_reject_proposal", "ontology_to_typeql", "reason_owl_rl"]  # fmt: skip
