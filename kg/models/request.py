"""Request models: the parameters of one use case, declared once (issue 34).

A use case's request model lives beside the service that takes it (``kg/memory/requests.py`` for
:class:`kg.memory.service.MemoryService`, ``kg/facts_requests.py`` for :class:`kg.facts.FactService`). The service
accepts it; the registry tool's input is the same model plus ``agent_id`` (``class FactQueryInput(FactQueryRequest,
ToolInput)``), so the JSON schema MCP and the Python API see is the model's; and ``mabos`` generates its click
options from the model's fields (:mod:`cli.options`): help is the field's description, defaults, choices and
repeated options come from the field's type. Each field is therefore named, typed, bounded, described and
validated in one place.

Python callers may still give a service the request's fields as keywords (``ws.facts.query("a",
subject="acme")``): :func:`requested` validates them into the model, so there is one validation either way.
"""

from __future__ import annotations

from typing import Any, TypeVar

from kg.errors import InputError
from kg.models.base import Model, parse


class Request(Model):
    """Base of every request model: unknown fields are refused, so a misspelt parameter is an error, not a no-op."""


R = TypeVar("R", bound=Request)


def requested(model: type[R], given: R | Any, fields: dict[str, Any], *, first: str | None = None) -> R:
    """The request a service method was given: ``given`` itself when it is a ``model``, else the request built from
    ``fields`` (and ``given`` as its field ``first``, for methods whose first argument is a field) and validated.

    A None field counts as not given (the model's default applies). Raises :class:`InputError` naming the field and
    its rule, also when a request comes with fields beside it (they would be ignored silently otherwise).
    """
    fields = {key: value for key, value in fields.items() if value is not None}
    if isinstance(given, model):
        if fields:
            raise InputError(next(iter(fields)), f"give it in the {model.__name__}, not beside it")
        return given
    if first is not None:
        fields = {first: given, **fields} if given is not None else fields
    elif given is not None:
        raise InputError("request", f"must be a {model.__name__}, got {type(given).__name__}")
    return parse(model, fields)


def fields_of(request: Request, model: type[Request]) -> dict[str, Any]:
    """The values of ``model``'s fields in ``request`` (a ``model`` or a subclass such as a tool input, whose own
    fields, ``agent_id``, are left out), as they are: not copied, not dumped."""
    return {name: getattr(request, name) for name in model.model_fields}


__all__ = ["Request", "fields_of", "requested"]
