"""What the memory features that span several services need from an open workspace.

Export and import of the cognitive files, materialized Markdown and consolidation read and write through the
workspace's services. They take this protocol rather than :class:`kg.workspace.Workspace` itself (which fits
it), so ``kg.memory`` never imports the workspace that is built on top of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: a command that imports a memory feature does not load every service
    from kg.bdi import BDIService
    from kg.clock import Clock
    from kg.facts import FactService
    from kg.memory.service import MemoryService
    from kg.scopes import ScopePolicy


class MemoryWorkspace(Protocol):
    """An open workspace as the memory features see it."""

    @property
    def path(self) -> Path:
        """The workspace folder."""
        ...

    @property
    def clock(self) -> Clock:
        """The workspace's clock."""
        ...

    @property
    def scopes(self) -> ScopePolicy:
        """Who may read and write which scopes."""
        ...

    @property
    def facts(self) -> FactService:
        """Facts."""
        ...

    @property
    def bdi(self) -> BDIService:
        """The BDI graph."""
        ...

    @property
    def memory(self) -> MemoryService:
        """Memory items."""
        ...


__all__ = ["MemoryWorkspace"]
