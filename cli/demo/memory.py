"""The memory and BDI-maintenance parts of ``mabos demo`` (a second workspace handle with an injected
clock writes a week of past memories, so the time hierarchy and stale intentions have a past)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from cli.demo.report import Section
from cli.index_update import update_indexes
from cli.recall_view import explain_line
from kg.clock import FixedClock
from kg.memory.checkpoints import latest_checkpoint, write_checkpoint
from kg.memory.cognitive import export_cognitive
from kg.memory.consolidation import consolidate
from kg.memory.hierarchy import build_hierarchy, search_hierarchy
from kg.memory.materialize import materialize
from kg.workspace import Workspace, open_workspace
from reasoning.bdi.cycle import run_cycle

PAST_DAYS = 8
_WEEK = [
    ("Kick-off with Acme: they need SSO before renewal", "event", ["acme", "auth"]),
    ("Decided: JWT access tokens signed with RS256", "decision", ["auth", "jwt"]),
    ("Acme prefers quarterly invoices", "preference", ["acme", "billing"]),
    ("Lesson: ask for the security questionnaire early", "lesson", ["acme", "security"]),
    ("Token refresh every hour keeps sessions short", "fact", ["auth", "jwt"]),
    ("Acme security review passed", "event", ["acme", "security"]),
    ("Renewal call booked with the Acme CFO", "event", ["acme", "billing"]),
]


def past_week(ws: Workspace, agent_id: str) -> FixedClock:
    """Store a week of memories dated in the past through a clock set back ``PAST_DAYS`` days."""
    clock = FixedClock(ws.clock.now() - timedelta(days=PAST_DAYS))
    with open_workspace(ws.path, clock=clock) as past:
        past.bdi.add("intention", agent_id, "Chase the unsigned NDA")  # never touched again: goes stale
        for content, type_, tags in _WEEK:
            past.memory.store_item(agent_id, content, type=type_, tags=tags, store="long_term")
            clock.advance(timedelta(days=1))
    return clock


def memory(ws: Workspace, agent_id: str, out: Section) -> None:
    """Stores, capacity, recall (also recursive), consolidation, checkpoint, hierarchy."""
    past_week(ws, agent_id)
    out.say(f"a past week: {len(_WEEK)} long-term memories dated day by day (an injected clock), one daily log each")
    for n in range(9):
        ws.memory.store_item(agent_id, f"Call note {n}: Acme asked about SSO pricing", store="working",
                             tags=["acme", "pricing"])  # fmt: skip
    status = ws.memory.status(agent_id)["stores"]
    out.say(f"9 working notes: {status['working']['active']} stay in working memory, the "
            f"{status['short_term']['active']} oldest moved to short-term")  # fmt: skip
    for content, tags in (("SSO add-on priced at $5 per user", ["sso", "pricing"]),
                          ("SSO needs SAML and SCIM", ["sso", "saml"]),
                          ("Offer SSO in the renewal quote", ["sso", "pricing", "renewal"])):  # fmt: skip
        ws.memory.store_item(agent_id, content, type="fact", importance=0.7, tags=tags)
    stored = ws.memory.store_item(agent_id, "JWT keys rotate every 90 days", type="decision", tags=["auth", "jwt"])
    out.say(f"a decision without --importance gets its type's default: {stored.item.importance}")
    found = ws.memory.recall(agent_id, "how often do signing keys change", limit=3, explain=True)
    out.say(f"hybrid recall 'how often do signing keys change' (mode {found.mode}): "
            + "; ".join(f"{h.item.content} ({h.score:.2f}: bm25 {h.bm25:.2f}, vector {h.vector:.2f})"
                        for h in found.hits))  # fmt: skip
    for note in found.notes:
        out.say(f"  note: {note}")
    if found.hits and found.hits[0].explain is not None:
        out.say(f"  --explain of the first: {explain_line(found.hits[0].explain)}")
    deeper = [h for h in ws.memory.recall(agent_id, "JWT tokens", limit=3, depth=2).hits if h.depth]
    out.say(f"recall with --depth 2 adds {len(deeper)} more via the terms of the first hits, e.g. "
            + "; ".join(f"{h.item.content} (depth {h.depth})" for h in deeper[:2]))  # fmt: skip
    result = consolidate(ws, agent_id)
    out.say(f"consolidate: {result.candidates} candidates, {len(result.groups)} merged group(s), "
            f"{len(result.promoted)} promoted as they are; MEMORY.md rewritten")  # fmt: skip
    for group in result.groups[:1]:
        out.say(f"  {group.content[:100]}")
    write_checkpoint(ws.path, agent_id, context="Preparing the Acme renewal", decisions=["Offer SSO in the plan"],
                     next_steps=["Send the quote"], clock=ws.clock)  # fmt: skip
    latest = latest_checkpoint(ws.path, agent_id)
    out.say(f"checkpoint written; the latest resolves to {latest.path.name if latest else None}")
    built = build_hierarchy(ws.path, agent_id, scope="all", clock=ws.clock)
    out.say(f"time hierarchy from {built.daily_logs} daily logs: {len(built.written)} weekly/monthly/quarterly "
            "summaries")  # fmt: skip
    files = materialize(ws, agent_id).files
    exported = export_cognitive(ws, agent_id)
    names = ", ".join(Path(f.path).name for f in exported.files)
    out.say(f"Markdown views: {', '.join(Path(f.path).name for f in files)}")
    out.say(f"cognitive files (edit them and 'mabos memory import' them back): {names}")
    weekly = search_hierarchy(ws.path, agent_id, "security questionnaire", level="weekly", limit=1)
    where = f"{weekly[0].period}, lines {weekly[0].line_start}-{weekly[0].line_end}" if weekly else "nothing"
    out.say(f"weekly search 'security questionnaire': {where}")


def bdi_cycle(ws: Workspace, agent_id: str, out: Section) -> None:
    """Two conflicting confident beliefs and one stale intention, then one maintenance cycle."""
    ws.bdi.add("belief", agent_id, "subject: acme budget\nAcme's budget is $100k", certainty=0.9)
    ws.bdi.add("belief", agent_id, "subject: acme budget\nAcme's budget is $60k", certainty=0.8)
    result = run_cycle(ws, agent_id)
    data = result.model_dump(mode="json", exclude={"details"})
    out.say("bdi cycle: " + ", ".join(f"{k} {v}" for k, v in data.items() if k != "timestamp"))
    if result.details.report_path:
        out.say(f"conflict report: {result.details.report_path}")


def indexes(ws: Workspace, out: Section) -> None:
    """What ``mabos index update`` does, so the first recall after the demo only reads (embeddings included)."""
    if ws.vectors is None:
        out.say("no embedder configured: recall ranks by BM25 alone, there is no vector index to build")
        return
    report, files, embedded = update_indexes(ws)
    out.say(f"vector index: {report.indexed} memory items embedded and saved ({report.backlog} waiting)")
    out.say(f"Markdown index: {sum(f.chunks for f in files)} chunks of {sum(f.files for f in files)} files, "
            f"{embedded} chunk vectors cached, so 'memory recall --source files' only reads")  # fmt: skip
