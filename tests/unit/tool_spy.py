"""``spy_on(monkeypatch, *names)``: record which registry tools run, to prove that a CLI command goes through the tool
registry (its validation and scope checks) rather than calling a service directly. The tools still run for real."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from cli import tools


def spy_on(monkeypatch: pytest.MonkeyPatch, *names: str) -> list[str]:
    """Wrap the handlers of tools ``names``; the returned list gains a tool's name each time its handler runs."""
    seen: list[str] = []
    for name in names:
        original = tools.REGISTRY[name]

        def spy(ctx: Any, args: Any, original: Any = original) -> Any:
            seen.append(original.name)
            return original.handler(ctx, args)

        monkeypatch.setitem(tools.REGISTRY, name, dataclasses.replace(original, handler=spy))
    return seen
