"""``mabos graph link|relations|path|sql|render|query``: typed edges of the BDI graph, path queries, read-only SQL and
the cross-agent graph queries (``mabos graph query NAME``).

link, relations, path and query run registry tools (graph_link, graph_relations, graph_path, graph_query); sql and
render are operator commands outside the registry (docs/decisions/2026-11-26-cli-registry.md)."""

from __future__ import annotations

from typing import Any

import click
from pydantic import BaseModel

from cli import render
from cli.common import Session, agent_option, example, mabos_options
from cli.options import Cli, options_for, request_options
from cli.tools.graph import GraphQueryAnswer
from cli.tools.graph_links import GraphLinkInput, GraphPathInput, GraphRelationsInput, PathList, RelationList
from cli.ui.graphview import DEFAULT_LIMIT
from cli.ui.picture import FORMATS, write_picture
from kg.backends import SQL_TIMEOUT
from kg.models import Relation
from reasoning.graph_query_models import QUERY_PARAMS, QueryName


@click.group("graph")
def graph() -> None:
    """Link BDI nodes, query paths, run read-only SQL on the embedded store."""


@graph.command("link")
@request_options(GraphLinkInput, relation=Cli(argument=True, metavar="RELATION"),
                 source_uid=Cli(argument=True, metavar="SOURCE_UID"),
                 target_uid=Cli(argument=True, metavar="TARGET_UID"))  # fmt: skip
@mabos_options
def link(out: Session, *, request: GraphLinkInput) -> None:
    """Link two nodes with a typed relation.

    Relations: belief-supports-goal, desire-motivates-goal, goal-requires-plan, goal-decomposition
    (parent -> subgoal), plan-contains-step, step-depends-on, agent-has-skill, decision-resolves-goal,
    derived-from, case-used-plan.

    Example:

    \b
      mabos graph link --agent sales-agent belief-supports-goal B-01J... G-01J...
    """
    edge = out.run("graph_link", request, Relation)
    out.emit(edge, render.done(f"Linked {edge.source_uid} -[{edge.kind.value}]-> {edge.target_uid} ({edge.uid})"))


@graph.command("relations")
@request_options(GraphRelationsInput, uid=Cli(argument=True, metavar="UID"))
@mabos_options
def relations(out: Session, *, request: GraphRelationsInput) -> None:
    """List the relations of a node.

    Only relations the agent can see are listed.

    Example:

    \b
      mabos graph relations --agent sales-agent G-01J...
    """
    edges = out.run("graph_relations", request, RelationList).relations
    out.emit(edges, render.relations_table(edges), render.count(edges, "relation"))


@graph.command("path")
@request_options(GraphPathInput, kinds=Cli(argument=True, metavar="KIND KIND..."),
                 start_uid=Cli(flag="--from", metavar="UID"))  # fmt: skip
@mabos_options
def path(out: Session, *, request: GraphPathInput) -> None:
    """Find paths through the BDI graph.

    The path's nodes have the given kinds in order; edges are followed either way.

    Kinds: belief, desire, goal, intention, plan, step (and fact, memory, agent, case).

    Example:

    \b
      mabos graph path --agent sales-agent belief goal plan
      mabos graph path --agent sales-agent goal plan step --from G-01J...
    """
    found = out.run("graph_path", request, PathList).paths
    out.emit(found, *(render.path_text(p) for p in found), render.count(found, "path", request.limit))


@graph.command("sql", help=example(
    "Run one read-only SQL statement on the embedded store (a separate read-only connection: INSERT, UPDATE, "
    "DELETE, DDL, ATTACH and writable pragmas are refused before they run). Reads every scope: a tool for the "
    "workspace's owner. Rows past --limit (or 32 MB) are cut and the result says truncated; a query still running "
    "after --timeout seconds is stopped with an error. Tables: docs/cli.md.",
    'mabos graph sql "SELECT predicate, count(*) AS n FROM facts GROUP BY predicate ORDER BY n DESC" --json',
))  # fmt: skip
@click.argument("sql")
@click.option("--limit", type=int, default=1000, show_default=True, help="Most rows returned (1..10000).")
@click.option("--timeout", type=float, default=SQL_TIMEOUT, show_default=True,
              help="Seconds the query may run (at most 300); a query still running then is stopped.")  # fmt: skip
@mabos_options
def sql(out: Session, *, sql: str, limit: int, timeout: float) -> None:
    result = out.workspace().read_sql(sql, limit=limit, timeout=timeout)
    cut = render.note(f"truncated after {len(result.rows)} rows (--limit {limit}, or the 32 MB cap)")
    out.emit(result, render.table("SQL", result.columns, result.rows), cut if result.truncated else None)


@graph.command("render", help=example(
    "Write a self-contained picture of the graph AGENT can see (the console's view, capped at --limit facts and "
    "BDI nodes): html (embeds cytoscape.js), svg (laid out here, no Graphviz), dot (Graphviz) or mermaid. "
    "Default file: <workspace>/.mabos/reports/graph-<agent>.<ext>, which the nightly report links; --out - "
    "prints it.",
    "mabos graph render --agent sales-agent",
    "mabos graph render --agent sales-agent --format mermaid --out -",
))  # fmt: skip
@agent_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="html", show_default=True)
@click.option("--out", "out_path", default=None, help="File to write, or '-' for standard output.")
@click.option("--types", default=None, help="Node types, comma-separated (default: BDI types, entity, literal).")
@click.option("--limit", type=int, default=DEFAULT_LIMIT, show_default=True, help="Most facts and BDI nodes drawn.")
@mabos_options
def render_(out: Session, *, agent: str, fmt: str, out_path: str | None, types: str | None, limit: int) -> None:
    target, text, view = write_picture(out.workspace(), agent, fmt=fmt, out=out_path, types=types, limit=limit)
    if target is None and not out.as_json:
        click.echo(text, nl=False)
        return
    summary = {"path": str(target) if target else None, "format": fmt, "nodes": len(view.nodes),
               "edges": len(view.edges), "shown": view.shown, "total": view.total, "capped": view.capped}  # fmt: skip
    out.emit(summary, render.done(f"wrote {target}: {len(view.nodes)} nodes, {len(view.edges)} edges"
                                  + (" (capped)" if view.capped else "")))  # fmt: skip


# ------------------------------------------------------------------------------------- graph query


def run_graph_query(out: Session, name: str, params: dict[str, Any], *, agent: str | None) -> GraphQueryAnswer:
    """Answer catalogue query ``name`` through the ``graph_query`` tool (TypeDB when configured and reachable,
    else the local store, with one line on stderr saying why) and print it (JSON: the result without the
    fallback reason)."""
    answer = out.run("graph_query", {"name": name, "agent_id": agent, **params}, GraphQueryAnswer)
    if answer.fallback_reason is not None:
        click.echo(f"warning: {answer.fallback_reason}; answering from the local store", err=True)
    out.emit(answer.model_dump(mode="json", exclude={"fallback_reason"}), *render.graph_query(answer))
    return answer


viewer_option = click.option(
    "--agent", "-a", default=None, metavar="AGENT",
    help="Only what this agent may read (default: every agent's records, the operator's view).",
)  # fmt: skip


@graph.group("query")
def query() -> None:
    """Cross-agent graph queries (the same answers on the local store and TypeDB): docs/graph-queries.md."""


def _query_command(name: QueryName, help_text: str, **fields: Cli) -> click.Command:
    """``mabos graph query NAME`` with ``--agent`` and the parameters of the query's model (:data:`QUERY_PARAMS`,
    generated by :func:`cli.options.options_for`; ``fields`` where the command line differs): each command answers
    its query through :func:`run_graph_query` with the parameters the user gave (the query applies its defaults)."""
    params = QUERY_PARAMS[name]

    def answer(out: Session, *, agent: str | None, request: BaseModel) -> None:
        run_graph_query(out, name, request.model_dump(exclude_unset=True), agent=agent)

    command = viewer_option(options_for(params, fields)(mabos_options(answer)))
    return query.command(name, help=help_text)(command)


_query_command(
    "goals-behind",
    example(
        "Open goals (pending, active, suspended) whose progress is below the share of time elapsed from creation "
        "to deadline, most behind first. --tolerance reports only larger gaps; --at judges at another moment.",
        "mabos graph query goals-behind --json",
        "mabos graph query goals-behind --agent finance-agent --tolerance 0.1 --at 2024-06-01",
    ),
)
_query_command(
    "paths",
    example(
        "Directed paths belief -> goal (-> subgoal ...) -> plan, also from desires and down to steps. --from and "
        "--to take a kind (belief, desire, goal, plan; goal, plan, step), a uid, or kind:uid.",
        "mabos graph query paths --json",
        "mabos graph query paths --from belief:B-01J... --to plan --max-depth 3",
    ),
    start=Cli(flag="--from"),
)
_query_command(
    "belief-conflicts",
    example(
        "Active beliefs about one subject that say different things (both more certain than --min-certainty), "
        "across agents, with the goals they support.",
        "mabos graph query belief-conflicts --json",
    ),
)
_query_command(
    "lineage",
    example(
        "What a fact or memory item was derived from (ancestors) and what was derived from it (descendants).",
        "mabos graph query lineage F-01J... --json",
        "mabos graph query lineage M-01J... --direction ancestors --max-depth 3",
    ),
    uid=Cli(argument=True, metavar="UID"),
)
_query_command(
    "belief-holders",
    example(
        "Which agents hold an active belief about SUBJECT: the belief's subject (as conflict detection derives it) "
        "equals SUBJECT, or with --match contains the belief's text contains it (case-insensitive).",
        'mabos graph query belief-holders "acme revenue" --json',
        "mabos graph query belief-holders growing --match contains",
    ),
    subject=Cli(argument=True),
)
_query_command(
    "blocked-steps",
    example(
        "Open plan steps (pending, in progress) with dependencies that are not done or skipped: what they wait on, "
        "the unfinished steps at the bottom of those chains, and dependency cycles.",
        "mabos graph query blocked-steps --json",
    ),
)
