"""The command groups of ``mabos``, in the order ``mabos --help`` lists them."""

from __future__ import annotations

import click

from cli.commands.agents import agent
from cli.commands.bdi import GROUPS as BDI_GROUPS
from cli.commands.bdi_cycle import bdi
from cli.commands.conversation import GROUPS as CONVERSATION_GROUPS
from cli.commands.facts import fact
from cli.commands.graph import graph
from cli.commands.index import index
from cli.commands.memory import memory
from cli.commands.ontology import GROUPS as ONTOLOGY_GROUPS
from cli.commands.reason import GROUPS as REASON_GROUPS
from cli.commands.rules import GROUPS as RULE_GROUPS
from cli.commands.scopes import scope
from cli.commands.serve import serve
from cli.commands.sync import sync
from cli.commands.tokens import token
from cli.commands.tools_cmd import tools
from cli.commands.typedb import typedb
from cli.commands.workspace import demo, init, status

COMMANDS: list[click.Command] = [
    init,
    status,
    demo,
    agent,
    fact,
    *BDI_GROUPS,
    graph,
    scope,
    memory,
    *CONVERSATION_GROUPS,
    index,
    bdi,
    *RULE_GROUPS,
    *REASON_GROUPS,
    *ONTOLOGY_GROUPS,
    typedb,
    sync,
    tools,
    serve,
    token,
]

__all__ = ["COMMANDS"]
