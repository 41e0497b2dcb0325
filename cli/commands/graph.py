"""``mabos graph link|relations|path|sql``: typed edges of the BDI graph, path queries, read-only SQL."""

from __future__ import annotations

from typing import Any

import click

from cli import render
from cli.common import Session, agent_option, example, mabos_options, scope_option
from kg.models import RelationKind
from kg.store.sqlite.readonly import run_readonly
from kg.workspace import DB_FILE, STATE_DIR

RELATIONS = [k.value for k in RelationKind if k is not RelationKind.AGENT_OWNS]  # agent-owns is implied


@click.group("graph")
def graph() -> None:
    """Link BDI nodes, query paths, run read-only SQL on the embedded store."""


@graph.command("link")
@agent_option
@click.argument("relation", type=click.Choice(RELATIONS), metavar="RELATION")
@click.argument("source_uid", metavar="SOURCE_UID")
@click.argument("target_uid", metavar="TARGET_UID")
@scope_option
@mabos_options
def link(out: Session, *, agent: str, relation: str, source_uid: str, target_uid: str, scope: str | None) -> None:
    """Link two nodes with a typed relation.

    Relations: belief-supports-goal, desire-motivates-goal, goal-requires-plan, goal-decomposition
    (parent -> subgoal), plan-contains-step, step-depends-on, agent-has-skill, decision-resolves-goal,
    derived-from, case-used-plan.

    Example:

    \b
      mabos graph link --agent sales-agent belief-supports-goal B-01J... G-01J...
    """
    edge = out.workspace().bdi.link(agent, relation, source_uid, target_uid, scope=scope)
    out.emit(edge, render.done(f"Linked {edge.source_uid} -[{edge.kind.value}]-> {edge.target_uid} ({edge.uid})"))


@graph.command("relations")
@agent_option
@click.argument("uid", metavar="UID")
@mabos_options
def relations(out: Session, *, agent: str, uid: str) -> None:
    """List the relations of a node.

    Only relations the agent can see are listed.

    Example:

    \b
      mabos graph relations --agent sales-agent G-01J...
    """
    edges = out.workspace().bdi.relations(agent, uid)
    out.emit(edges, render.relations_table(edges), render.count(edges, "relation"))


@graph.command("path")
@agent_option
@click.argument("kinds", nargs=-1, required=True, metavar="KIND KIND...")
@click.option("--from", "start_uid", default=None, metavar="UID", help="Start the paths at this node.")
@click.option("--relation", type=click.Choice(RELATIONS), default=None, help="Follow only this relation.")
@click.option("--limit", type=int, default=100, show_default=True, help="At most this many paths.")
@mabos_options
def path(
    out: Session,
    *,
    agent: str,
    kinds: tuple[str, ...],
    start_uid: str | None,
    relation: str | None,
    limit: int,
) -> None:
    """Find paths through the BDI graph.

    The path's nodes have the given kinds in order; edges are followed either way.

    Kinds: belief, desire, goal, intention, plan, step (and fact, memory, agent, case).

    Example:

    \b
      mabos graph path --agent sales-agent belief goal plan
      mabos graph path --agent sales-agent goal plan step --from G-01J...
    """
    found = out.workspace().bdi.paths(agent, list(kinds), start_uid=start_uid, relation=relation, limit=limit)
    out.emit(found, *(render.path_text(p) for p in found), render.count(found, "path", limit))


@graph.command("sql", help=example(
    "Run one read-only SQL statement on the embedded store (a separate read-only connection: INSERT, UPDATE, "
    "DELETE, DDL, ATTACH and writable pragmas are refused before they run). Reads every scope: a tool for the "
    "workspace's owner. Rows past --limit are cut and the result says truncated. Tables: docs/cli.md.",
    'mabos graph sql "SELECT predicate, count(*) AS n FROM facts GROUP BY predicate ORDER BY n DESC" --json',
))  # fmt: skip
@click.argument("sql")
@click.option("--limit", type=int, default=1000, show_default=True, help="Most rows returned (1..10000).")
@mabos_options
def sql(out: Session, *, sql: str, limit: int) -> None:
    ws = out.workspace()
    result = run_readonly(ws.path / STATE_DIR / DB_FILE, sql, limit=limit)
    lines: list[Any] = [render.table("SQL", result.columns, result.rows)]
    if result.truncated:
        lines.append(render.note(f"truncated at {limit} rows (raise --limit)"))
    out.emit(result, *lines)
