"""What the tool tests share: ``call`` (a tool as agent ``a`` unless told, through :func:`cli.tools.call`),
``refused_unchanged`` (a bad call's one-line error, and proof that it changed nothing), ``mabos`` (the CLI on the
workspace) and ``spy_on`` (which registry tools a command ran, to prove that it goes through the
registry, with its validation and scope checks, rather than calling a service directly; the tools still run)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner, Result
from pydantic import BaseModel

from cli import tools
from cli.main import cli
from kg.errors import InputError
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace


def call(ws: Workspace, name: str, /, **arguments: Any) -> Any:
    """Run tool ``name`` on ``ws`` by path (``agent_id`` defaults to ``a``); its output model."""
    arguments.setdefault("agent_id", "a")
    result = tools.call(name, workspace=ws.path, **arguments)
    assert isinstance(result, BaseModel)
    return result


def refused_unchanged(ws: Workspace, name: str, arguments: dict[str, Any]) -> InputError:
    """The :class:`InputError` a bad call of tool ``name`` raises, checked to be one line "FIELD: RULE" and to leave
    the workspace as it was (the test fails when the call succeeds or writes anything)."""
    before = snapshot_workspace(ws)
    with pytest.raises(InputError) as raised:
        call(ws, name, **arguments)
    message = str(raised.value)
    assert message.startswith(f"{raised.value.field}: ") and "\n" not in message, message
    assert snapshot_workspace(ws) == before, f"the refused call changed the workspace: {message}"
    return raised.value


def mabos(ws: Workspace, *args: str) -> Result:
    """``mabos --workspace <ws> ARGS...``."""
    return CliRunner().invoke(cli, ["--workspace", str(ws.path), *args])


def spy_on(monkeypatch: pytest.MonkeyPatch, *names: str) -> list[str]:
    """Wrap the handlers of tools ``names``; the returned list gains a tool's name each time its handler runs."""
    seen: list[str] = []
    for name in names:
        original = tools.REGISTRY[name]

        def spy(ctx: Any, args: Any, original: Any = original) -> Any:
            seen.append(original.name)
            return original.handler(ctx, args)

        monkeypatch.setitem(tools.REGISTRY, name, original._replace(handler=spy))
    return seen
