"""Fixtures for CLI tests: a runner bound to a fresh workspace path, a populated graph, store digests.

Every test runs against a real workspace (embedded SQLite) under ``tmp_path``; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

import kg
from cli.main import cli
from kg.ids import new_id
from kg.models import OntologyProposal
from kg.models.conversation import MessageQuery, Summary, SummaryKind, SummaryMethod
from reasoning.service import RuleService

SALES = "sales-agent"
#: An original 48-message dialogue (tests/data/conversation/compaction-dialogue.md says where it comes from).
DIALOGUE = Path(__file__).resolve().parents[1] / "data" / "conversation" / "compaction-dialogue.jsonl"
FINANCE = "finance-agent"


@dataclass
class Mabos:
    """Runs ``mabos --workspace <workspace> ...`` in-process."""

    runner: CliRunner
    workspace: Path

    def __call__(self, *args: str, env: dict[str, str | None] | None = None) -> Result:
        """Invoke with the workspace given before the subcommand."""
        return self.raw("--workspace", str(self.workspace), *args, env=env)

    def raw(self, *args: str, env: dict[str, str | None] | None = None) -> Result:
        """Invoke with exactly these arguments."""
        return self.runner.invoke(cli, list(args), env=env)

    def ok(self, *args: str) -> Result:
        """Invoke and require exit code 0."""
        result = self(*args)
        assert result.exit_code == 0, f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        return result

    def json(self, *args: str) -> Any:
        """Invoke with ``--json``, require success, an empty stderr and JSON on stdout."""
        result = self.ok(*args, "--json")
        assert result.stderr == ""
        return json.loads(result.stdout)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No stray environment, and a scratch working directory for default paths."""
    monkeypatch.delenv("MABOS_WORKSPACE", raising=False)
    monkeypatch.delenv("MABOS_DEBUG", raising=False)
    for name in ("MABOS_TYPEDB_ADDRESS", "MABOS_TYPEDB_DATABASE"):  # a developer's server must not leak in
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def mabos(tmp_path: Path) -> Mabos:
    """A runner for a workspace at ``tmp_path / "ws"`` (not created yet)."""
    return Mabos(CliRunner(), tmp_path / "ws")


def make_ready(path: Path) -> None:
    """Create the workspace at ``path`` with the agents sales-agent and finance-agent."""
    with kg.init_workspace(path) as ws:
        ws.agents.add(SALES, name="Sales", role="seller")
        ws.agents.add(FINANCE, name="Finance")


Template = Callable[[str], tuple[Path, dict[str, str]]]


@pytest.fixture(scope="session")
def cli_template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """``cli_template("ready" | "populated")``: that workspace (and its uids by name), built once per test process
    and environment (``MABOS_EMBEDDER``); ``ready`` and ``populated`` copy it for each test (several times cheaper
    than building it again; every test still gets its own copy to write to)."""
    built: dict[tuple[str, str], tuple[Path, dict[str, str]]] = {}

    def template(kind: str) -> tuple[Path, dict[str, str]]:
        key = (kind, os.environ.get("MABOS_EMBEDDER", ""))
        if key not in built:
            path = tmp_path_factory.mktemp(f"cli-{kind}") / "ws"
            make_ready(path)
            built[key] = (path, populate(path) if kind == "populated" else {})
        return built[key]

    return template


@pytest.fixture
def ready(mabos: Mabos, cli_template: Template, copy_workspace: Callable[[Path, Path], None]) -> Mabos:
    """A workspace with the agents sales-agent and finance-agent."""
    copy_workspace(cli_template("ready")[0], mabos.workspace)
    return mabos


@pytest.fixture
def populated(ready: Mabos, cli_template: Template, copy_workspace: Callable[[Path, Path], None]) -> dict[str, str]:
    """Facts (one derived) and a small BDI graph; returns their uids by name."""
    source, uids = cli_template("populated")
    shutil.rmtree(ready.workspace)
    copy_workspace(source, ready.workspace)
    return uids


def populate(path: Path) -> dict[str, str]:
    """Fill the ready workspace at ``path`` (see :func:`populated`); returns the uids by name."""
    with kg.open_workspace(path) as ws:
        revenue, _ = ws.facts.assert_fact(SALES, "acme", "hasRevenue", "$50000", confidence=0.9)
        industry, _ = ws.facts.assert_fact(SALES, "acme", "hasIndustry", "saas")
        derived, _ = ws.facts.assert_fact(
            SALES, "acme", "isTarget", "true", derived_from=[revenue.uid, industry.uid], rule_id=new_id("rule")
        )
        belief = ws.bdi.add("belief", SALES, "Acme is growing", certainty=0.8)
        goal = ws.bdi.add("goal", SALES, "Grow revenue", hierarchy_level="strategic", priority=8)
        plan = ws.bdi.add("plan", SALES, "Outbound campaign")
        desire = ws.bdi.add("desire", SALES, "Lead the SaaS market", priority=9)
        intention = ws.bdi.add("intention", SALES, "Close the Acme deal")
        step = ws.bdi.add("step", SALES, "Build the lead list", sequence=1)
        for relation, source, target in (
            ("belief-supports-goal", belief, goal),
            ("goal-requires-plan", goal, plan),
            ("plan-contains-step", plan, step),
        ):
            ws.bdi.link(SALES, relation, source.uid, target.uid)
        ws.scopes.grant(FINANCE, "project:q3", granted_by="admin")
        rules = RuleService(ws.ports, ws.scopes, ws.clock)
        target = rules.create(SALES, name="saas-target", conditions=[{"subject": "?x", "predicate": "hasIndustry",
                              "object": "saas"}], conclusion={"subject": "?x", "predicate": "isTarget",
                              "object": "true"})  # fmt: skip
        rules.create(
            SALES,
            name="revenue-floor",
            type="constraint",
            violation_message="?x earns too little",
            conditions=[{"subject": "?x", "predicate": "hasRevenue", "object": "100000", "operator": "lt"}],
        )
        rules.create(
            SALES,
            name="big-order",
            type="policy",
            action="ask finance",
            escalate=True,
            conditions=[{"subject": "context", "predicate": "amount", "object": "10000", "operator": "gt"}],
        )
        # proposals straight into the store (propose/validate would parse the base ontology in every test)
        now = ws.clock.now()
        proposal, validated = (
            OntologyProposal.model_validate({
                "uid": new_id("proposal"), "agent_id": SALES, "scope": "global", "created_at": now,
                "domain": "sbvr-business", "node_type": "class", "node_id": node_id, "label": label,
                "parent_class": "biz:Partner", "sbvr_definition": definition, "proposed_by": SALES, "status": status,
                "history": [{"status": "pending", "by": SALES, "at": now}]
                + ([{"status": "validated", "by": SALES, "at": now}] if status == "validated" else []),
            })
            for node_id, label, definition, status in (
                ("ResellerPartner", "Reseller Partner", "a partner that resells our products", "pending"),
                ("AffiliateSite", "Affiliate Site", "a website that refers buyers for a fee", "validated"),
            )
        )  # fmt: skip
        ws.ports.proposals.add(proposal)
        ws.ports.proposals.add(validated)
        # a conversation with one leaf summary over its first two messages (written straight into the store)
        ingested = ws.conversations.ingest(SALES, "s1", DIALOGUE.read_text(encoding="utf-8"))
        first = ws.ports.conversations.messages(MessageQuery(conversation_uid=ingested.conversation_uid, to_seq=1))
        summary = ws.ports.summaries.add(Summary(
            uid=new_id("summary"), agent_id=SALES, conversation_uid=ingested.conversation_uid, kind=SummaryKind.LEAF,
            depth=0, content="Maya plans a Lisbon offsite for 14 people, 12-15 June 2025.", token_count=15,
            source_token_count=sum(m.token_count for m in first), method=SummaryMethod.EXTRACTIVE,
            child_uids=[m.uid for m in first], earliest_at=first[0].created_at, latest_at=first[-1].created_at,
            descendant_count=len(first), created_at=now,
        ))  # fmt: skip
        token = ws.tokens.create(SALES, label="cli")
    return {
        "token": token.token.token_id,
        "revenue": revenue.uid, "industry": industry.uid, "derived": derived.uid, "belief": belief.uid,
        "goal": goal.uid, "plan": plan.uid, "step": step.uid, "desire": desire.uid, "intention": intention.uid,
        "rule": target.uid, "proposal": proposal.uid, "validated": validated.uid, "summary": summary.uid,
    }  # fmt: skip


def iter_leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    """Every leaf command as (``"fact assert"``, command)."""
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        if isinstance(command, click.Group):
            yield from iter_leaves(command, path)
        else:
            yield " ".join(path), command


@pytest.fixture
def digest(mabos: Mabos, snapshot: Callable[[Any], dict[str, str]]) -> Callable[[], dict[str, str]]:
    """Digests of the test workspace's store and files (``snapshot`` of tests/conftest.py): compare before/after."""
    return lambda: snapshot(SimpleNamespace(path=mabos.workspace))


@pytest.fixture(scope="session")
def leaves() -> list[tuple[str, click.Command]]:
    """Every leaf command of ``mabos``."""
    return list(iter_leaves(cli))
