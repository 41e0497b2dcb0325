"""The command groups of ``mabos``, in the order ``mabos --help`` lists them, loaded when invoked.

:data:`COMMAND_TABLE` names each top-level command's module and attribute (an attribute holding a list of groups is
searched by name) and its one-line help, so ``mabos --help`` lists every command without importing any of them, and
``mabos fact query`` imports the facts commands only. ``tests/unit/test_startup_imports.py`` checks the table against
the commands themselves (names, order, help) and pins what a bare start imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

import click

#: Command name -> ("module:attribute", the first paragraph of its help: what ``mabos --help`` shortens).
COMMAND_TABLE: dict[str, tuple[str, str]] = {
    "init": ("cli.commands.workspace:init", "Create a workspace and say where it is."),
    "status": (
        "cli.commands.workspace:status",
        "Show counts of the workspace's records and the rung each part stands on.",
    ),
    "demo": ("cli.commands.workspace:demo", "Build a demo workspace and tour what mabos can do."),
    "agent": ("cli.commands.agents:agent", "Create and inspect agents."),
    "fact": ("cli.commands.facts:fact", "Assert, retract, query and explain facts."),
    "belief": ("cli.commands.bdi:GROUPS", "Beliefs: what an agent holds true."),
    "desire": ("cli.commands.bdi:GROUPS", "Desires: what an agent wants."),
    "goal": ("cli.commands.bdi:GROUPS", "Goals: strategic, tactical, operational."),
    "intention": ("cli.commands.bdi:GROUPS", "Intentions: goals an agent committed to."),
    "plan": ("cli.commands.bdi:GROUPS", "Plans: ways to reach goals."),
    "step": ("cli.commands.bdi:GROUPS", "Plan steps, ordered by --sequence."),
    "graph": ("cli.commands.graph:graph", "Link BDI nodes, query paths, run read-only SQL on the embedded store."),
    "scope": ("cli.commands.scopes:scope", "Grant agents access to more scopes."),
    "memory": (
        "cli.commands.memory:memory",
        "Store, recall and consolidate an agent's memories (working, short-term, long-term).",
    ),
    "conversation": (
        "cli.commands.conversation:GROUPS",
        "Conversation memory: a lossless message log, a summary DAG over it, context within a token budget.",
    ),
    "lcm": (
        "cli.commands.conversation:GROUPS",
        "Recall tools over conversation memory: grep, describe and expand summaries back to their messages.",
    ),
    "index": (
        "cli.commands.index:index",
        "Build and inspect the recall indexes (.mabos/vectors/ and .mabos/mdindex/).",
    ),
    "bdi": ("cli.commands.bdi_cycle:bdi", "BDI maintenance: conflicts, stale intentions, desire priorities (R5)."),
    "rule": (
        "cli.commands.rules:GROUPS",
        "Create, list, toggle, delete, import and export rules (inference, constraint, policy).",
    ),
    "infer": (
        "cli.commands.rules:GROUPS",
        "Forward chaining, backward chaining and abduction over the agent's facts and rules.",
    ),
    "constraint": ("cli.commands.rules:GROUPS", "Constraint rules: violated when all their conditions hold."),
    "policy": ("cli.commands.rules:GROUPS", "Policy rules: actions and escalations that fire on facts plus a context."),
    "knowledge": ("cli.commands.rules:GROUPS", "Questions answered by every reasoning method at once."),
    "cbr": (
        "cli.commands.reason:GROUPS",
        "Case-based reasoning: store past cases, retrieve similar ones (S = 0.6 Sb + 0.4 Sd).",
    ),
    "reason": (
        "cli.commands.reason:GROUPS",
        "Reasoning methods: the seed's 32 methods (`reason [run]`), the catalogue, OWL-RL.",
    ),
    "ontology": (
        "cli.commands.ontology:GROUPS",
        "The shared ontology: propose -> validate -> merge (or reject), scaffold domains, convert to TypeQL.",
    ),
    "typedb": ("cli.commands.typedb:typedb", "The shared TypeDB graph: reachability, schema, raw TypeQL queries."),
    "sync": (
        "cli.commands.sync:sync",
        "Push the outbox to TypeDB, run the nightly job, import and export workspaces.",
    ),
    "tools": (
        "cli.commands.tools_cmd:tools",
        "The agent tools: list them, export their definitions, generate their docs.",
    ),
    "serve": ("cli.commands.serve:serve", "Serve every registry tool to an agent over MCP."),
    "token": ("cli.commands.tokens:token", "API tokens: a remote caller that presents one acts as its agent."),
    "ui": (
        "cli.commands.ui:ui",
        "Serve the local web console: the agent's graph drawn interactively, facts with their history and "
        "derivations, memory with a recall playground (score bars), ontology proposals to approve or reject, "
        "reasoning, conversations and sync.",
    ),
}


def load_command(name: str) -> click.Command:
    """Import the command ``name`` of :data:`COMMAND_TABLE` (KeyError for a name it does not hold)."""
    return import_command(COMMAND_TABLE[name][0], name)


def import_command(where: str, name: str) -> click.Command:
    """The command ``name`` at ``where`` (``module:attribute``; an attribute holding a list is searched by name)."""
    module, attribute = where.split(":")
    found = getattr(importlib.import_module(module), attribute)
    for command in found if isinstance(found, list) else [found]:
        if isinstance(command, click.Command) and command.name == name:
            return command
    raise LookupError(f"{where} defines no command {name!r}: update the table that names it")


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's ``commands``: every name of the table in order, each imported on first access.

    Iterating and ``in`` import nothing; ``[name]``, ``get`` and ``items()``/``values()`` import what they return.
    Commands added later (``add_command``) are kept as given, after the table's.
    """

    def __init__(self, table: dict[str, tuple[str, str]]) -> None:
        self._table = table
        self._names = list(table)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            if name not in self._table or name not in self._names:
                raise KeyError(name)
            self._loaded[name] = import_command(self._table[name][0], name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        if name not in self._names:
            self._names.append(name)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def summary(self, name: str) -> click.Command | None:
        """The loaded command, or a stand-in carrying its table help (for listing without importing)."""
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._names:
            return None
        return click.Command(name, help=self._table[name][1])


class LazyGroup(click.Group):
    """A command group whose subcommands from other modules are imported when one of them is used.

    ``lazy`` maps a subcommand name to ``"module:attribute"`` (as :data:`COMMAND_TABLE` does), so invoking one
    subcommand imports its module only, not its siblings'. Listing them (``--help``, completion) imports them all:
    the help is click's own. The group's own commands (``@group.command``) are kept as usual; ``commands`` holds
    every name, in sorted order as click lists a group's commands.

    Example:
        >>> @click.group("memory", cls=LazyGroup, lazy={"admit": "cli.commands.memory_admit:admit"})
        ... def memory() -> None:
        ...     pass
    """

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        commands = LazyCommands({name: (where, "") for name, where in (lazy or {}).items()})
        for name, command in self.commands.items():
            commands[name] = command
        self.commands: LazyCommands = commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every subcommand's name, sorted (imports nothing)."""
        return sorted(self.commands)


def __getattr__(name: str) -> Any:
    if name == "COMMANDS":  # the old eager list (every top-level command but ui), imported on request
        return [load_command(n) for n in COMMAND_TABLE if n != "ui"]
    raise AttributeError(f"module 'cli.commands' has no attribute {name!r}")


__all__ = ["COMMANDS", "COMMAND_TABLE", "LazyCommands", "LazyGroup", "import_command", "load_command"]
