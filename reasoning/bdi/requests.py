"""The BDI maintenance cycle's request: whose cycle to run, declared once.

:func:`reasoning.bdi.cycle.run_cycle` runs one agent's cycle, :func:`~reasoning.bdi.cycle.run_all` every agent's;
the ``bdi_cycle`` tool (cli/tools/graph.py) is this request plus ``agent_id`` and picks between them, and ``mabos bdi
cycle`` generates ``--all`` from it (docs/decisions/2026-11-28-request-models.md).
"""

from __future__ import annotations

from pydantic import Field

from kg.models.request import Request


class CycleRequest(Request):
    """The cycle of the acting agent, or of every agent."""

    all_agents: bool = Field(
        default=False,
        description="Run the cycle for every agent of the workspace instead of the acting agent's (operator only: "
        "not on a server bound to one agent).",
    )


__all__ = ["CycleRequest"]
