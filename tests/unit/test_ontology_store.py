"""Ontology proposals in the embedded store (migration 6, kg/store/sqlite/ontology.py) and their model."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest

from kg.errors import ConflictError, InputError, NotFoundError
from kg.ids import new_id
from kg.models import OntologyProposal, ProposalStatus, parse
from kg.store.sqlite.db import load_migrations


def proposal(agent: str = "a", **fields) -> OntologyProposal:
    data = {
        "uid": new_id("proposal"), "agent_id": agent, "scope": "global", "created_at": "2024-05-01T12:00:00Z",
        "proposed_by": agent, "domain": "ecommerce", "node_type": "class", "node_id": "DropshipFulfillment",
        "label": "Dropship fulfillment", **fields,
    }  # fmt: skip
    return OntologyProposal.model_validate(data)


def events(ws) -> list[tuple[str, str, dict]]:
    rows = ws._store.db.read("SELECT op, record_uid, payload FROM outbox WHERE aggregate = 'proposal' ORDER BY seq")
    return [(r[0], r[1], json.loads(r[2])) for r in rows]


def moved(p: OntologyProposal, status: ProposalStatus, by: str, when) -> OntologyProposal:
    step = {"status": status, "by": by, "at": when, "note": "n"}
    return parse(OntologyProposal, {**p.model_dump(), "status": status, "history": [*p.model_dump()["history"], step]})


def test_migration_6_creates_the_table() -> None:
    assert [(m.version, m.name) for m in load_migrations()][5] == (6, "ontology_proposals")


def test_a_proposal_round_trips_with_an_event(ws) -> None:
    stored = ws.ports.proposals.add(proposal(sbvr_synonyms=["Drop shipping"], rationale="suppliers ship"))
    assert ws.ports.proposals.get(stored.uid) == stored
    assert events(ws) == [("upsert", stored.uid, stored.model_dump(mode="json"))]
    assert ws.ports.stats()["ontology_proposals"] == 1


def test_a_new_proposal_has_a_pending_history_entry() -> None:
    p = proposal()
    assert [(h.status, h.by, h.at) for h in p.history] == [(ProposalStatus.PENDING, "a", p.created_at)]
    assert p.updated_at == p.created_at


def test_old_data_without_history_still_reads(ws) -> None:
    legacy = proposal().model_dump(mode="json")
    del legacy["history"], legacy["multi_valued"]
    read = OntologyProposal.model_validate_json(json.dumps(legacy))
    assert read.history[0].status is ProposalStatus.PENDING and read.history[0].by == "a"
    assert read.multi_valued is False


def test_history_entries_are_validated() -> None:
    with pytest.raises(InputError, match=r"history.0.by"):
        parse(OntologyProposal, {**proposal().model_dump(), "history": [{"status": "pending", "by": "Not An Id",
                                                                          "at": "2024-05-01T12:00:00Z"}]})  # fmt: skip


def test_update_is_a_compare_and_set_on_the_status(ws, clock) -> None:
    stored = ws.ports.proposals.add(proposal())
    later = clock.advance(timedelta(minutes=5))
    validated = moved(stored, ProposalStatus.VALIDATED, "b", later)
    ws.ports.proposals.update(validated, expected_status=ProposalStatus.PENDING)
    assert ws.ports.proposals.get(stored.uid) == validated
    assert [h.by for h in ws.ports.proposals.get(stored.uid).history] == ["a", "b"]
    with pytest.raises(ConflictError, match="is validated now, not pending"):
        ws.ports.proposals.update(validated, expected_status=ProposalStatus.PENDING)
    row = ws._store.db.read("SELECT status, updated_at FROM ontology_proposals WHERE uid = ?", (stored.uid,))[0]
    assert (row[0], row[1]) == ("validated", "2024-05-01T12:05:00.000000Z")
    assert [e[0] for e in events(ws)] == ["upsert", "upsert"]
    assert events(ws)[-1][2]["status"] == "validated"


def test_update_refuses_to_move_a_proposal_and_needs_it_to_exist(ws) -> None:
    stored = ws.ports.proposals.add(proposal())
    with pytest.raises(ConflictError, match="another agent or scope"):
        ws.ports.proposals.update(stored.model_copy(update={"scope": "agent:a"}), expected_status=stored.status)
    with pytest.raises(NotFoundError):
        ws.ports.proposals.update(proposal(), expected_status=ProposalStatus.PENDING)
    with pytest.raises(NotFoundError, match="no ontology proposal"):
        ws.ports.proposals.get(new_id("proposal"))


def test_add_needs_a_known_agent_and_a_fresh_uid(ws) -> None:
    with pytest.raises(NotFoundError, match="no agent 'zed'"):
        ws.ports.proposals.add(proposal("zed"))
    stored = ws.ports.proposals.add(proposal())
    with pytest.raises(ConflictError, match="already exists"):
        ws.ports.proposals.add(stored)
    assert len(events(ws)) == 1


def test_list_filters_by_scope_status_and_domain(ws, clock) -> None:
    shared = ws.ports.proposals.add(proposal())
    private = ws.ports.proposals.add(proposal("b", scope="agent:b", domain="saas"))
    done = ws.ports.proposals.add(proposal())
    ws.ports.proposals.update(moved(done, ProposalStatus.REJECTED, "a", clock.now()), expected_status=done.status)
    uids = lambda found: [p.uid for p in found]  # noqa: E731
    assert uids(ws.ports.proposals.list()) == [shared.uid, private.uid, done.uid]
    assert uids(ws.ports.proposals.list(scopes=["global"])) == [shared.uid, done.uid]
    assert uids(ws.ports.proposals.list(status=ProposalStatus.PENDING)) == [shared.uid, private.uid]
    assert uids(ws.ports.proposals.list(domain="saas")) == [private.uid]
    assert uids(ws.ports.proposals.list(scopes=["agent:b"], domain="ecommerce")) == []
    with pytest.raises(InputError, match="scopes"):
        ws.ports.proposals.list(scopes=[])


def test_the_table_refuses_unknown_statuses(ws) -> None:
    stored = ws.ports.proposals.add(proposal())
    with pytest.raises(sqlite3.IntegrityError), ws._store.db.write() as conn:
        conn.execute("UPDATE ontology_proposals SET status = 'merged' WHERE uid = ?", (stored.uid,))
