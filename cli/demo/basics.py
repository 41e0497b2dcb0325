"""The first sections of ``mabos demo``: agents, facts with history and an explanation, the BDI graph with
its paths, scopes and grants, and the store's status."""

from __future__ import annotations

from typing import Any

from cli.demo.report import FINANCE, PROJECT, SALES, Section
from kg.errors import ScopeError
from kg.ids import new_id
from kg.models import BDINode, Fact, GraphPath
from kg.workspace import Workspace


def _fact(fact: Fact) -> str:
    return f"{fact.subject} {fact.predicate} {fact.object} (confidence {fact.confidence:g})"


def agents(ws: Workspace, out: Section) -> None:
    ws.agents.add(SALES, name="Sales", role="seller", department="sales")
    ws.agents.add(FINANCE, name="Finance", role="analyst", department="finance", commitment_strategy="cautious")
    for agent in ws.agents.list():
        strategy = agent.commitment_strategy.value
        out.say(f"{agent.agent_id}: {agent.name}, {agent.role}, {strategy} (scope {agent.scope})")


def facts(ws: Workspace, out: Section) -> None:
    revenue, status = ws.facts.assert_fact(SALES, "acme", "hasRevenue", "$50000", confidence=0.8, source="crm")
    out.say(f"assert: {revenue.uid} {status}: {_fact(revenue)}")
    revenue, status = ws.facts.assert_fact(SALES, "acme", "hasRevenue", "$50000", confidence=0.9, source="cfo-report")
    out.say(f"assert again with a new confidence: {revenue.uid} {status} (an upsert, no duplicate)")
    industry, _ = ws.facts.assert_fact(SALES, "acme", "hasIndustry", "saas")
    customer, _ = ws.facts.assert_fact(SALES, "acme", "hasCustomer", "globex")
    matches = ws.facts.query(SALES, subject="acme", predicate="has*")
    out.say(f"query acme has*: {len(matches)} facts: " + "; ".join(_fact(f) for f in matches))
    before = ws.clock.now()
    ws.facts.retract(SALES, uids=[customer.uid])
    now = ws.facts.query(SALES, subject="acme", predicate="hasCustomer")
    then = ws.facts.query(SALES, subject="acme", predicate="hasCustomer", as_of=before)
    out.say(f"retract acme hasCustomer globex: now {len(now)} facts, as of before the retraction {len(then)}")
    _explain(ws, out, [revenue, industry])


def _explain(ws: Workspace, out: Section, supports: list[Fact]) -> None:
    derived, _ = ws.facts.assert_fact(SALES, "acme", "isTarget", "true", confidence=0.85, rule_id=new_id("rule"),
                                      derived_from=[f.uid for f in supports])  # fmt: skip
    out.say(f"explain {derived.uid} ({_fact(derived)}):")
    explanation = ws.facts.explain(SALES, derived.uid)
    out.say(f"  derived by rule {explanation.rule_id} from:")
    for support in explanation.supports:
        out.say(f"    {support.uid}: {_fact(support.fact) if support.fact else 'not visible'}")


def _node(ws: Workspace, kind: str, content: str, **fields: Any) -> BDINode:
    return ws.bdi.add(kind, SALES, content, **fields)


def _build_graph(ws: Workspace) -> tuple[BDINode, int]:
    """Beliefs, a desire, a goal hierarchy and a plan with steps, all linked: (the top goal, the link count)."""
    market = _node(ws, "belief", "The SaaS market grows 20% a year", certainty=0.7)
    acme = _node(ws, "belief", "Acme is ready to buy", certainty=0.9)
    lead = _node(ws, "desire", "Lead the SaaS market", priority=9)
    grow = _node(ws, "goal", "Grow revenue 30% this year", hierarchy_level="strategic", priority=8)
    win = _node(ws, "goal", "Win 10 new SaaS customers", hierarchy_level="tactical", priority=7)
    demos = _node(ws, "goal", "Book 40 demos this quarter", hierarchy_level="operational", priority=6)
    plan = _node(ws, "plan", "Outbound campaign", status="active")
    steps = [_node(ws, "step", text, sequence=i) for i, text in
             enumerate(("Build the lead list", "Send the emails", "Book the demos"), start=1)]  # fmt: skip
    links = [("belief-supports-goal", market, grow), ("belief-supports-goal", acme, win),
             ("desire-motivates-goal", lead, grow), ("goal-decomposition", grow, win),
             ("goal-decomposition", win, demos), ("goal-requires-plan", win, plan),
             *(("plan-contains-step", plan, step) for step in steps),
             ("step-depends-on", steps[1], steps[0]), ("step-depends-on", steps[2], steps[1])]  # fmt: skip
    for relation, source, target in links:
        ws.bdi.link(SALES, relation, source.uid, target.uid)
    return grow, len(links)


def bdi_graph(ws: Workspace, out: Section) -> None:
    top, link_count = _build_graph(ws)
    for kind in ("belief", "desire", "goal", "plan", "step"):
        out.say(f"{kind}s: " + "; ".join(_node_text(n) for n in ws.bdi.list(SALES, kind)))
    out.say(f"{link_count} links (supports, motivates, decomposition, requires, contains, depends-on)")
    out.say("goal hierarchy (path goal -> goal -> goal from the strategic goal):")
    for path in ws.bdi.paths(SALES, ["goal", "goal", "goal"], start_uid=top.uid):
        out.say(f"  {_path_text(path)}")
    out.say("path query belief -> goal -> plan:")
    for path in ws.bdi.paths(SALES, ["belief", "goal", "plan"]):
        out.say(f"  {_path_text(path)}")


def _path_text(path: GraphPath) -> str:
    hops = [f" -[{rel}]-> {label}" for rel, label in zip(path.relations, path.labels[1:], strict=True)]
    return path.labels[0] + "".join(hops)


def _node_text(node: BDINode) -> str:
    extra = [f"{node.hierarchy_level.value}" if node.hierarchy_level else "",
             f"priority {node.priority}" if node.priority else "",
             f"certainty {node.certainty:g}" if node.certainty is not None else "",
             f"#{node.sequence}" if node.kind.value == "plan_step" else ""]  # fmt: skip
    details = ", ".join(e for e in extra if e)
    return f"{node.content}" + (f" ({details})" if details else "")


def scopes(ws: Workspace, out: Section) -> None:
    ws.scopes.grant(SALES, PROJECT, granted_by="admin")
    ws.facts.assert_fact(SALES, "q3-launch", "hasBudget", "$120000", scope=PROJECT)
    out.say(f"{SALES} was granted {PROJECT} and asserted a budget fact there")
    try:
        ws.facts.query(FINANCE, scope=PROJECT)
    except ScopeError as exc:
        out.say(f"{FINANCE} without a grant: refused ({exc})")
    ws.scopes.grant(FINANCE, PROJECT, granted_by=SALES)
    seen = ws.facts.query(FINANCE, scope=PROJECT)
    out.say(f"after 'scope grant {FINANCE} {PROJECT}': {FINANCE} sees " + "; ".join(_fact(f) for f in seen))


def status(ws: Workspace, out: Section) -> None:
    store = ws.status()["store"]
    facts, outbox = store["facts"], store["outbox"]
    out.say(f"agents {store['agents']}, grants {store['grants']}, relations {store['relations']}")
    out.say(f"facts: {facts['live']} live, {facts['retracted']} retracted, {facts['derived']} derived")
    out.say("bdi nodes: " + ", ".join(f"{n} {k.replace('plan_step', 'step')}" for k, n in store["bdi"].items()))
    out.say(f"outbox: {outbox['pending']} events pending (to sync to a shared graph), {outbox['acked']} acked")
