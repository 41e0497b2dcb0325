"""Engines of the experience methods (placeholder: filled by issue 20)."""

from __future__ import annotations

from reasoning.router.methods.base import Engine

ENGINES: dict[str, Engine] = {}
