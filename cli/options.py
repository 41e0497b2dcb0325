"""Click parameters generated from a request model: a use case's parameters are declared once, in kg (issue 34).

``@request_options(FactQueryInput)`` gives a command one click parameter per field of the model (a registry tool's
input: the kg request model plus ``agent_id``, which becomes :data:`cli.common.agent_option`), in the model's
field order, and hands the command body the validated model as ``request``. The rules
(docs/decisions/2026-11-28-request-models.md):

* a field ``max_age`` is the option ``--max-age``; its help is the field's description, its default the field's
  (shown unless it is None, false or empty); a field without a default is required;
* a ``Literal`` or enum field takes a choice; ``bool`` is a flag (``--x/--no-x`` when it defaults to true);
  ``list[X]`` a repeatable option ("(repeatable)" ends its help); ``datetime`` an ISO-8601 value (naive = UTC),
  ``date`` a ``YYYY-MM-DD`` one; numbers are plain numbers;
* an optional ``bool`` (default None) is ``--x/--no-x`` and stays unset unless given; a field that takes a text
  among other forms (``ConditionInput | str``) takes the text; ``dict[str, str]`` is a repeatable ``KEY=VALUE``;
* only the values the user gave reach the model (the defaults stay the model's), the model validates them once,
  and a bad value is the one-line :class:`~kg.errors.InputError` naming the field (exit 1), as over MCP.

Where the command line differs from the field, the command says how with :class:`Cli`, never by declaring the
field again: another flag name, a positional argument, a comma-separated text for a list, a flag that sets a
boolean false, bounds click checks itself, parameters of the command's own that build the field's value, one
option per field of a nested model, or no option at all. A parameter of the command's own that gives the whole
request instead of the options (``--file``) is an :class:`Instead`.

This module puts a command's parameters together and builds its request; :mod:`cli.option_fields` makes each
field's parameter and reads its value.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeVar

import click
from pydantic import BaseModel

from cli.option_fields import GIVEN, Cli, FieldOption, attach
from kg.errors import InputError
from kg.models import parse

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


class Instead(NamedTuple):
    """A parameter of the command's own that gives the whole request in place of the generated options (``--file``;
    a named tuple, as :class:`cli.option_fields.Cli`).

    It is listed after ``--agent``. When it is given, no option may be but ``--agent`` and those in ``keep``, which
    override what ``build`` made of its value; when it is not, a field the model requires and the options left out
    is the error ``<field>: is required (or give --file)``. click requires no generated option then.

    Attributes:
        param: The parameter.
        build: Its value -> the request's fields (without ``agent_id``).
        model: The request it gives, when not the command's own (``rule create --file`` imports a rule document).
        keep: Fields the options may still give beside it.
    """

    param: click.Parameter
    build: Callable[[Any], dict[str, Any]]
    model: type[BaseModel] | None = None
    keep: tuple[str, ...] = ()


def request_options(
    model: type[M], *, instead: Instead | None = None, **fields: Cli
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """A decorator giving a command the parameters of ``model``'s fields and passing it ``request=<the model>``.

    Args:
        model: The request model (a tool's input: the kg request plus ``agent_id``).
        instead: A parameter of the command's own that gives the request instead of the options (then ``request``
            may be an ``instead.model``).
        **fields: :class:`Cli` for the fields whose command line differs from the generated option.
    """
    return options_for(model, fields, instead=instead)


def options_for(
    model: type[M], fields: Mapping[str, Cli], *, instead: Instead | None = None
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """:func:`request_options` with the :class:`Cli` of the fields as a mapping, for a command made in a loop or a
    factory (``mabos graph query NAME``: one command per query model)."""
    unknown = sorted(fields.keys() - model.model_fields.keys())
    if unknown:
        raise TypeError(f"options_for({model.__name__}): no field {', '.join(unknown)}")
    optional = instead is not None
    shapes = {name: FieldOption(name, info, fields.get(name, Cli()), optional=optional)
              for name, info in model.model_fields.items()}  # fmt: skip

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(command)
        def with_request(**kwargs: Any) -> R:
            ctx = click.get_current_context()
            given, typed = {}, {}
            for name, shape in shapes.items():
                if shape.present(ctx, kwargs):
                    given[name] = shape.value(ctx, kwargs)
                    typed[name] = shape.typed(ctx, kwargs)
                shape.consume(kwargs)
            if instead is None:
                return command(request=parse(model, given), **kwargs)
            return command(request=_instead(instead, model, ctx, kwargs=kwargs, given=given, typed=typed), **kwargs)

        for shape in reversed(shapes.values()):  # click lists parameters in the reverse of their attachment
            if instead is not None and shape.name == "agent_id":
                attach(with_request, instead.param)
            shape.attach(with_request)
        if instead is not None and "agent_id" not in shapes:
            attach(with_request, instead.param)
        return with_request

    return decorate


def _instead(instead: Instead, model: type[BaseModel], ctx: click.Context, *, kwargs: dict[str, Any],
             given: dict[str, Any], typed: dict[str, str | None]) -> BaseModel:  # fmt: skip
    """The request of a command with an :class:`Instead`: built from its parameter when given, else the options'."""
    name = instead.param.name or ""
    value = kwargs.pop(name)
    flag = _flag(instead.param)
    if ctx.get_parameter_source(name) not in GIVEN:
        try:
            return parse(model, given)
        except InputError as exc:
            if exc.rule == "Field required":
                raise InputError(exc.field, f"is required (or give {flag})") from None
            raise
    clash = [option for field, option in typed.items() if option and field not in instead.keep]
    if clash:
        raise InputError(name, f"give either {flag} or {clash[0]}, not both")
    kept = {key: given[key] for key in ("agent_id", *instead.keep) if key in given}
    return parse(instead.model or model, {**instead.build(value), **kept})


def _flag(param: click.Parameter) -> str:
    """How the user writes ``param``: its longest option name, or its metavar."""
    return max(param.opts, key=len) if isinstance(param, click.Option) else (param.name or "").upper()


def acting(request: BaseModel) -> str:
    """The acting agent of a request built from the command line (the ``--agent`` it was given)."""
    agent = getattr(request, "agent_id", None)
    if not isinstance(agent, str):
        raise InputError("agent_id", "required (the acting agent's id)")
    return agent


__all__ = ["Cli", "Instead", "acting", "options_for", "request_options"]
