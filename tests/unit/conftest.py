"""Fixtures of the service-level unit tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def ws(workspace):
    """A workspace with two agents, ``a`` and ``b``."""
    workspace.agents.add("a")
    workspace.agents.add("b")
    return workspace
