"""Checking a method's inputs: pydantic models, errors naming the field path as the caller wrote it.

A path reads ``inputs.<method>.<key>[<index>]...``, e.g. ``inputs.game-theory.payoffs[1][0]``: keys
with a dot, list positions in brackets, so an agent can find the value it has to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from kg.errors import InputError
from kg.models.base import error_location

M = TypeVar("M", bound=BaseModel)

_PLAIN_KEY = re.compile(r"[\w\-]{1,64}")


def path_of(method: str, loc: Sequence[str | int]) -> str:
    """``inputs.<method>`` followed by ``loc``: string parts as ``.key``, integers as ``[i]``."""
    text = f"inputs.{method}"
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if _PLAIN_KEY.fullmatch(part) else f".{part[:40]!r}"
    return text


def input_error(method: str, loc: Sequence[str | int], rule: str) -> InputError:
    """An :class:`InputError` for the input at ``loc`` of ``method``."""
    return InputError(path_of(method, loc), rule)


def distinct(names: Sequence[str], field: str) -> set[str]:
    """The names as a set, for a model validator: a name given twice raises ``@<field>: <field> must be unique``."""
    known = set(names)
    if len(known) != len(names):
        raise ValueError(f"@{field}: {field} must be unique")
    return known


def parse_inputs(model: type[M], data: Any, method: str) -> M:
    """Validate a method's inputs into ``model``, or raise :class:`InputError` naming the field path.

    A model-level rule reports its own location by starting its message with ``@<dotted.path>: ``
    (integers in the path become ``[i]``), e.g. ``"@payoffs.1: must have 3 cells"``.
    """
    if not isinstance(data, Mapping):
        raise InputError(f"inputs.{method}", f"must be an object, got {type(data).__name__}")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = error_location(err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        located = re.match(r"^@([\w.\-]+): (.*)$", msg, re.S)
        if located:
            loc = [*loc, *(int(p) if p.isdigit() else p for p in located.group(1).split("."))]
            msg = located.group(2)
        value = err.get("input")
        if err["type"] != "value_error" and isinstance(value, str | int | float) and not isinstance(value, bool):
            shown = repr(value)
            msg = f"{msg} (got {shown[:57] + '...' if len(shown) > 60 else shown})"
        raise input_error(method, loc, msg) from None


__all__ = ["distinct", "input_error", "parse_inputs", "path_of"]
