"""The nightly job's request (issue 34: a use case's parameters are declared once).

:func:`sync.nightly.nightly` takes a :class:`NightlyRequest`, and ``mabos sync nightly`` generates ``--agent``,
``--all`` and ``--skip`` from it. The TypeDB address (``--typedb``) is the operator's setting, not a field.
"""

from __future__ import annotations

from pydantic import Field

from kg.models.base import new_list
from kg.models.request import Request


class NightlyRequest(Request):
    """Which agents the per-agent steps run for (``agents``, or every agent: not both), and which steps not to run."""

    agents: list[str] = Field(default_factory=new_list, description="Run the per-agent steps for this agent.")
    all_agents: bool = Field(default=False, description="Run the per-agent steps for every agent.")
    skip: list[str] = Field(default_factory=new_list, description="Do not run this step.")


__all__ = ["NightlyRequest"]
