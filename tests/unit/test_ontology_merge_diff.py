"""``ontology diff`` of a merged proposal (issue 35.3): before, it exited 0 and showed a diff that would insert the
merged node a second time. Now it says the proposal is merged (where, by whom, when) and shows the change the merge
made, byte for byte the diff of the domain file before and after the merge. The console's proposal page shows the
same (tests/ui/test_security.py). Real workspace, SQLite, the shipped ontologies, the CLI entry point."""

from __future__ import annotations

import difflib
import json

import pytest

from kg.ontology.merge import without_node
from kg.workspace import Workspace
from tests.records import VENDOR
from tests.unit.tool_calls import call, mabos

pytestmark = pytest.mark.usefixtures("no_embedder")


def test_the_diff_of_a_merged_proposal_is_the_change_the_merge_made(ws: Workspace) -> None:
    uid = call(ws, "ontology_propose_concept", agent_id="a", **VENDOR).uid
    call(ws, "ontology_validate_proposal", agent_id="a", uid=uid)
    home = ws.path / "ontologies" / "sbvr-business.jsonld"
    before = home.read_text(encoding="utf-8")
    preview = call(ws, "ontology_diff", uid=uid).diff
    assert preview.startswith("--- a/sbvr-business.jsonld") and '+      "@id": "biz:DropshipVendor",' in preview
    call(ws, "ontology_merge_approved", agent_id="a", uid=uid)
    after = home.read_text(encoding="utf-8")
    made = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "a/sbvr-business.jsonld", "b/sbvr-business.jsonld"))  # fmt: skip
    shown = call(ws, "ontology_diff", uid=uid).diff
    head, _, body = shown.partition("\n")
    assert head.startswith(f"# {uid} is merged into sbvr-business.jsonld by a at ")
    assert body == made  # exactly what the merge changed, not a second insertion
    assert after.count('"@id": "biz:DropshipVendor"') == 1
    assert without_node(after, "biz:DropshipVendor") == before  # the exact inverse of the merge's splice

    text = mabos(ws, "ontology", "diff", uid)
    assert text.exit_code == 0 and text.output == shown
    as_json = mabos(ws, "ontology", "diff", uid, "--json")
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["diff"] == shown


def test_a_merged_node_edited_away_is_said_so() -> None:
    text = '{\n  "@graph": [\n    {"@id": "x:A"},\n    {"@id": "x:B"}\n  ]\n}\n'
    assert without_node(text, "x:C") is None
    assert without_node(text, "x:B") == '{\n  "@graph": [\n    {"@id": "x:A"}\n  ]\n}\n'
    assert without_node(text, "x:A") == '{\n  "@graph": [\n    {"@id": "x:B"}\n  ]\n}\n'
