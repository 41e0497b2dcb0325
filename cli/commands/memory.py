"""``mabos memory store|recall|status`` (and the subcommands of other modules, imported when used)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from cli import render
from cli.commands import LazyGroup
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from cli.recall_view import recall_view
from cli.tools import memory as memory_tools
from cli.tools.memory import RecallInput, StatusInput, StoreInput
from cli.tools.overrides import CommandContext
from cli.tools.registry import run
from kg.memory.service import RecallResult, StoreResult

if TYPE_CHECKING:
    from kg.workspace import Workspace

ARGUMENT = Cli(argument=True)
TAGS = Cli(split=",")
#: click checks these bounds itself (a usage error), as these options always did.
BOUNDED = Cli(bounded=True)


#: The subcommands of other modules, imported when one is used: a recall imports neither admission, extraction nor
#: consolidation.
SUBCOMMANDS = {
    "admit": "cli.commands.memory_admit:admit",
    "checkpoint": "cli.commands.memory_files:checkpoint",
    "consolidate": "cli.commands.memory_consolidate:consolidate",
    "export": "cli.commands.memory_export:export",
    "extract": "cli.commands.memory_extract:extract",
    "hierarchy": "cli.commands.memory_files:hierarchy",
    "import": "cli.commands.memory_export:import_",
    "list": "cli.commands.memory_extract:list_",
    "materialize": "cli.commands.memory_export:materialize_",
}


@click.group("memory", cls=LazyGroup, lazy=SUBCOMMANDS)
def memory() -> None:
    """Store, recall and consolidate an agent's memories (working, short-term, long-term)."""


@memory.command("store")
@request_options(StoreInput, content=ARGUMENT, tags=TAGS)
@mabos_options
def store(out: Session, *, request: StoreInput) -> None:
    """Store a memory item and append it to today's daily log.

    Working memory keeps 7 items (the oldest moves to short-term); short-term keeps 200 for 2 hours
    (then they are archived, never deleted).

    Example:

    \b
      mabos memory store --agent A "JWT uses RS256" --type decision --importance 0.8 --tags auth,jwt
    """
    result = out.run("memory_store_item", request, StoreResult)
    item = result.item
    text = render.done(f"{item.uid} stored in {item.store.value} ({item.type.value}, importance {item.importance:.2f})")
    for uid in result.demoted:
        text.append(f"\n  moved to short-term: {uid}", style="")
    for uid in result.archived:
        text.append(f"\n  archived: {uid}", style="")
    out.emit(result, text)


@memory.command("recall")
@request_options(RecallInput, query=ARGUMENT, depth=BOUNDED, types=Cli(flag="--type"), stores=Cli(flag="--store"),
                 tags=TAGS, max_tokens=BOUNDED, window=BOUNDED)  # fmt: skip
@mabos_options
def recall(out: Session, *, request: RecallInput) -> None:
    """Recall memories, best first: BM25 and vector similarity fused, blended with importance and decay.

    With --depth N the search is repeated with the most frequent new terms of the results; each hit
    then says which depth found it. If the database or the vector index cannot be used, the agent's
    Markdown files answer instead and the result says "fallback": true and why.

    Example:

    \b
      mabos memory recall --agent A "how do we sign tokens" --explain --limit 5
      mabos memory recall --agent A "authentication" --mode bm25 --fusion rrf --depth 2 --json
    """
    result = cast(RecallResult, run(OpenOnUse(path=out.path, session=out), "memory_recall", request))
    out.emit(result, *recall_view(result, explain=request.explain))


class OpenOnUse(CommandContext):
    """The command's tool context, which opens the command's workspace only when the tool asks for it: so the
    tool decides what a database that cannot be opened means (:func:`kg.memory.service.recall_or_files`), the same
    for ``mabos memory recall`` as over MCP.

    Not a dataclass of its own (one more field, ``session``, set here): the generated methods cost a cold recall
    about 3 M instructions (issue 33)."""

    def __init__(self, *, path: Path | None, session: Session) -> None:
        super().__init__(path=path)
        self.session = session

    def workspace(self) -> Workspace:
        """The command's workspace (opened now, closed with the command)."""
        return self.session.workspace()


@memory.command("status")
@request_options(StatusInput)
@mabos_options
def status(out: Session, *, request: StatusInput) -> None:
    """Counts per store (active and archived) and the capacities.

    Example:

    \b
      mabos memory status --agent A --json
    """
    data = out.run("memory_status", request, memory_tools.MemoryStatus)
    rows = [(name, c.active, c.archived, data.capacity[name] or "unbounded") for name, c in data.stores.items()]
    out.emit(data, render.table(f"memory of {data.agent_id}", ["store", "active", "archived", "capacity"], rows))
