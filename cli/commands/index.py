"""``mabos index rebuild|update|status``: the vector index and the Markdown index of a workspace."""

from __future__ import annotations

from typing import Any

import click

from cli import render
from cli.common import Session, example, mabos_options
from cli.index_update import sidecar as _sidecar
from cli.index_update import update_indexes
from cli.progress import progress
from kg.recall.file_search import embed_chunks
from kg.recall.markdown_index import MarkdownIndex


@click.group("index")
def index() -> None:
    """Build and inspect the recall indexes (.mabos/vectors/ and .mabos/mdindex/)."""


@index.command(
    "rebuild",
    help=example(
        "Rebuild the vector index from the store and the Markdown index from the files.\n\n"
        "With --agent only that agent's items are embedded again and its Markdown index rebuilt; "
        "with --all (the default) the whole vector index is rebuilt and every agent's Markdown index, and the "
        "files' chunks the embedding cache lacks are embedded. "
        "Embeddings come from the cache when the text was embedded before.",
        "mabos index rebuild --all",
        "mabos index rebuild --agent sales-agent --json",
    ),
)
@click.option("--agent", default=None, help="Only this agent's items and files.")
@click.option("--all", "all_", is_flag=True, help="Everything (the default).")
@mabos_options
def rebuild(out: Session, *, agent: str | None, all_: bool) -> None:
    if agent and all_:
        raise click.UsageError("give --agent or --all, not both")
    ws = out.workspace()
    markdown = MarkdownIndex(ws.path)
    if agent:
        ws.scopes.require_agent(agent)
        agents = [agent]
    else:
        agents = markdown.agents()
    with progress("embedding") as update:
        sidecar = _sidecar(ws)
        vectors = sidecar.reindex_agent(agent, progress=update) if agent else sidecar.rebuild(progress=update)
    files = []
    for name in agents:
        markdown.sidecar_path(name).unlink(missing_ok=True)
        files.append(markdown.refresh(name))
    embedded = sum(embed_chunks(markdown, name, ws.embedder) for name in agents)
    data: dict[str, Any] = {"vectors": vectors, "markdown": files, "chunks_embedded": embedded}
    text = render.done(f"vector index: {vectors.indexed} items embedded ({vectors.backlog} waiting); "
                       f"Markdown index: {sum(f.chunks for f in files)} chunks of {sum(f.files for f in files)} "
                       f"files for {len(files)} agents, {embedded} chunk vectors added")  # fmt: skip
    out.emit(data, text)


@index.command(
    "update",
    help=example(
        "Embed the items waiting for the vector index (the backlog) and save it; refresh the Markdown index and "
        "embed the chunks of the Markdown files the embedding cache lacks.\n\n"
        "Recall only reads: it scores up to 500 waiting items exactly without saving them, and re-chunks changed "
        "files in memory. Run this after a bulk import or from a nightly job (the servers' idle pass does it too).",
        "mabos index update --json",
    ),
)
@mabos_options
def update(out: Session) -> None:
    report, files, embedded = update_indexes(out.workspace())
    rebuilt = f" (rebuilt: {report.reason})" if report.rebuilt else ""
    chunks = sum(f.chunks for f in files)
    text = render.done(f"vector index: {report.indexed} items added{rebuilt}, {report.backlog} waiting; "
                       f"Markdown index: {chunks} chunks, {embedded} chunk vectors added")  # fmt: skip
    out.emit({"vectors": report, "markdown": files, "chunks_embedded": embedded}, text)


@index.command(
    "status",
    help=example(
        "Show the vector index (model, count, kind, backlog, whether it is usable) and the Markdown index.",
        "mabos index status --json",
    ),
)
@mabos_options
def status(out: Session) -> None:
    ws = out.workspace()
    vectors: dict[str, Any] = ws.vectors.status() if ws.vectors is not None else {"state": "disabled"}
    markdown = MarkdownIndex(ws.path)
    files = []
    for name in markdown.agents():
        chunks = markdown.chunks(name, refresh=False) if markdown.sidecar_path(name).exists() else []
        files.append({"agent_id": name, "indexed": markdown.sidecar_path(name).exists(), "chunks": len(chunks),
                      "files": len({c.path for c in chunks})})  # fmt: skip
    data = {"vectors": vectors, "markdown": files}
    pairs = [(k, vectors.get(k)) for k in ("state", "reason", "model", "items", "indexed", "backlog", "kind")]
    out.emit(data, render.key_values("vector index", pairs),
             render.table("Markdown index", ["agent", "indexed", "files", "chunks"],
                          [(f["agent_id"], f["indexed"], f["files"], f["chunks"]) for f in files]))  # fmt: skip
