"""One request field's click parameter(s), and how a value goes from click to the model (:mod:`cli.options`).

:class:`Cli` is how a command says that a field's command line differs from the generated option; :class:`FieldOption`
makes the option (or argument) from the field's type, default, bounds and description, tells whether the user gave
it, and turns click's value into the field's. The rules are listed in :mod:`cli.options`.
"""

from __future__ import annotations

import enum
import types
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import Annotated, Any, Literal, NamedTuple, Union, cast, get_args, get_origin

import annotated_types
import click
from click.core import ParameterSource
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from cli.common import ISO_DATETIME, agent_option
from kg.errors import InputError

#: The parameter sources that mean the user gave the value (not click's default).
GIVEN = frozenset({ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT, ParameterSource.PROMPT})
DATE = click.DateTime(formats=["%Y-%m-%d"])


class Cli(NamedTuple):
    """How one field of a request appears on the command line, where that differs from the generated option (a named
    tuple, as :class:`cli.options.Instead`: a frozen dataclass's generated methods cost every command ~7 M
    instructions to define, a named tuple's ~1 M; issue 33).

    Attributes:
        flag: The option's name when it is not ``--<field-name>`` (``types`` is ``--type``).
        short: A one-letter alias of a valued option (``-s`` beside ``--session``).
        choices: The values click offers for a text field the model takes as text (``--admission``'s presets).
        argument: A positional argument instead of an option (a list field takes any number of them).
        metavar: What the help shows for the value (``F-...``; a positional argument's ``[FACT_ID]...``).
        split: A list given as one text split on this separator (``--tags auth,jwt``).
        negated: A flag that sets the boolean field to false, and its help (``--active`` for
            ``include_archived``): the field's description says what true means.
        bounded: click checks the field's ``ge``/``le`` bounds itself (an ``IntRange``; a value outside is a usage
            error, exit 2), for the options that always did; otherwise the model checks them (exit 1).
        params: The command's own parameters that give this field (``documents`` from ``FILES`` and ``--format``),
            in the field's place; ``build`` turns their values, by parameter name, into the field's value.
        off: The flag that sets an optional boolean false (``--failure`` beside ``--success``; default
            ``--no-<flag>``).
        hidden: Not on the command line: the field takes ``value`` (when not None), else the model's default
            (``limit`` of a command that always lists everything). ``agent_id`` is ``--agent/-a`` unless its
            :class:`Cli` is hidden (the command acts as the operator) or gives ``params`` (``--by``).
        fields: The field is a model given by one option per field of its own, in its place (``--uncertainty`` ...
            ``--stakes`` for ``problem_classification``), each as its :class:`Cli` here says; the field is given
            when one of them is (always, when the field is required: its fields' defaults apply).
    """

    flag: str | None = None
    short: str | None = None
    choices: tuple[str, ...] = ()
    argument: bool = False
    metavar: str | None = None
    split: str | None = None
    negated: str | None = None
    bounded: bool = False
    params: tuple[click.Parameter, ...] = ()
    build: Callable[..., Any] | None = None
    off: str | None = None
    hidden: bool = False
    value: Any = None
    fields: Mapping[str, Cli] | None = None


def attach(command: Callable[..., Any], param: click.Parameter) -> None:
    """Add ``param`` to the parameters the ``@click.command`` decorator collects (as ``@click.option`` does)."""
    params: list[click.Parameter] = command.__dict__.setdefault("__click_params__", [])
    params.append(param)


class FieldOption:
    """One field's click parameter(s) and how its value goes from click to the model."""

    def __init__(self, name: str, info: FieldInfo, cli: Cli, *, optional: bool = False) -> None:
        self.name, self.info, self.cli = name, info, cli
        self.kind, self.many = _shape(info.annotation)
        self.mapping = get_origin(self.kind) is dict
        #: click requires nothing (the model checks): the field's parent or the command's Instead may give it.
        self.optional = optional
        self.param: click.Parameter | None = None
        self.parts: list[FieldOption] = []
        #: agent_id is --agent/-a (cli.common.agent_option), the one spelling of the acting agent, unless the
        #: command says otherwise (hidden: none; params: its own, as ontology's --by and --approved-by; argument:
        #: the agent the command is about, as agent add's AGENT_ID)
        self.acting = name == "agent_id" and not (cli.hidden or cli.params or cli.argument)
        if self.acting or cli.hidden:
            return
        if cli.params:
            if cli.build is None:
                raise TypeError(f"{name}: Cli(params=...) needs build=")
            return
        if cli.fields is not None:
            self.parts = self._parts(cli.fields)
            return
        self.param = self._argument() if cli.argument else self._option()

    def _parts(self, fields: Mapping[str, Cli]) -> list[FieldOption]:
        nested = self.kind
        if not (isinstance(nested, type) and issubclass(nested, BaseModel)):
            raise TypeError(f"{self.name}: Cli(fields=...) needs a model field, not {nested!r}")
        unknown = sorted(fields.keys() - nested.model_fields.keys())
        if unknown:
            raise TypeError(f"{self.name}: {nested.__name__} has no field {', '.join(unknown)}")
        return [FieldOption(name, info, fields.get(name, Cli()), optional=True)
                for name, info in nested.model_fields.items()]  # fmt: skip

    @property
    def required(self) -> bool:
        return self.info.is_required() and not self.optional

    # ------------------------------------------------------------------ the parameter

    def _default(self) -> Any:
        default = None if self.info.is_required() or self.many or self.mapping else self.info.get_default()
        return default.value if isinstance(default, enum.Enum) else default

    def _help(self) -> str | None:
        text = self.info.description
        if text is None or self.cli.negated:
            return self.cli.negated or text
        suffix = " (comma-separated)" if self.cli.split else " (repeatable)" if self.many or self.mapping else ""
        return f"{text.removesuffix('.')}{suffix}." if suffix else text

    def _type(self) -> click.ParamType[Any]:
        kind = self.kind
        choices = self._choices()
        if choices is not None:
            return click.Choice(choices)
        if kind is datetime:
            return ISO_DATETIME
        if kind is date:
            return DATE
        if kind in (int, float):
            return self._number(kind)
        if kind is str or self.cli.split or self.mapping or str in _members(kind):
            return click.STRING  # a dict's KEY=VALUE pairs; the text form of a field that takes other forms too
        raise TypeError(f"{self.name}: no command-line type for {kind!r}")

    def _choices(self) -> list[str] | None:
        """The values a ``Literal`` or enum field takes, or the command's own (:attr:`Cli.choices`); else None."""
        if self.cli.choices:
            return list(self.cli.choices)
        if get_origin(self.kind) is Literal:
            return [str(v) for v in get_args(self.kind)]
        if isinstance(self.kind, type) and issubclass(self.kind, enum.Enum):
            return [str(member.value) for member in self.kind]
        return None

    def _number(self, kind: type) -> click.ParamType[Any]:
        if not self.cli.bounded:
            return click.INT if kind is int else click.FLOAT
        low: Any = next((m.ge for m in self.info.metadata if isinstance(m, annotated_types.Ge)), None)
        high: Any = next((m.le for m in self.info.metadata if isinstance(m, annotated_types.Le)), None)
        return click.IntRange(low, high) if kind is int else click.FloatRange(low, high)

    def _argument(self) -> click.Argument:
        extra = _given(default=None if self.info.is_required() else self._default(), metavar=self.cli.metavar)
        return click.Argument([self.name], type=self._type(), nargs=-1 if self.many else 1,
                              required=self.required, **extra)  # fmt: skip

    def flag(self) -> str:
        """The option's flag (``--max-age``), or a positional argument's name as the help shows it."""
        return self.cli.flag or ("--" + self.name.replace("_", "-") if not self.cli.argument else self.name.upper())

    def _option(self) -> click.Option:
        flag = self.flag()
        default = self._default()
        shown = default is not None and default is not False and default != ""
        if self.kind is bool:
            if self.cli.negated:
                return click.Option([flag, self.name], is_flag=True, default=False, help=self._help())
            off = self.cli.off or f"--no-{flag.removeprefix('--')}"
            if default is None:  # optional: unset unless given (as a required field's parent or Instead may give it)
                return click.Option([f"{flag}/{off}", self.name], default=None, help=self._help())
            names = [f"{flag}/{off}" if default else flag, self.name]
            return click.Option(names, is_flag=True, default=bool(default), show_default=shown,
                                help=self._help())  # fmt: skip
        metavar = self.cli.metavar or ("YYYY-MM-DD" if self.kind is date else "KEY=VALUE" if self.mapping else None)
        extra = _given(default=default, metavar=metavar)
        names = [flag, self.cli.short, self.name] if self.cli.short else [flag, self.name]
        return click.Option(names, type=self._type(),
                            multiple=(self.many or self.mapping) and not self.cli.split, required=self.required,
                            show_default=shown, help=self._help(), **extra)  # fmt: skip

    def attach(self, command: Callable[..., Any]) -> None:
        """Give ``command`` this field's parameter(s)."""
        if self.acting:
            agent_option(command)
            return
        for part in reversed(self.parts):
            part.attach(command)
        for param in reversed(self.cli.params or (self.param,)):
            if param is not None:
                attach(command, param)

    # ------------------------------------------------------------------ the value

    def _names(self) -> list[str]:
        if self.acting:
            return ["agent"]
        if self.parts:
            return [name for part in self.parts for name in part._names()]
        return [p.name for p in (self.cli.params or (self.param,)) if p is not None and p.name is not None]

    def present(self, ctx: click.Context, kwargs: dict[str, Any]) -> bool:
        """Whether the user gave this field (always, for a field the command's own parameters build)."""
        if self.cli.hidden:
            return self.cli.value is not None
        if self.cli.params:
            return True
        if self.parts:
            return self.info.is_required() or any(part.present(ctx, kwargs) for part in self.parts)
        source = ctx.get_parameter_source(self._names()[0])
        if source not in GIVEN:
            return False
        return not (self.cli.split and not _split(kwargs[self._names()[0]], self.cli.split))

    def typed(self, ctx: click.Context, kwargs: dict[str, Any]) -> str | None:
        """The generated option by which the user gave this field (None: not given, or by ``--agent``, a hidden
        value or the command's own parameters)."""
        if self.acting or self.cli.hidden or self.cli.params:
            return None
        if self.parts:
            return next((flag for part in self.parts if (flag := part.typed(ctx, kwargs))), None)
        return self.flag() if self.present(ctx, kwargs) else None

    def value(self, ctx: click.Context, kwargs: dict[str, Any]) -> Any:
        """The field's value from click's ``kwargs``."""
        if self.cli.hidden or self.cli.params or self.parts:
            return self._composed(ctx, kwargs)
        value = kwargs[self._names()[0]]
        if self.cli.split:
            return _split(value, self.cli.split)
        if self.cli.negated:
            return not value
        if self.mapping:
            return _pairs(self.name, value)
        if isinstance(value, datetime) and self.kind is date:
            return value.date()
        return list(value) if isinstance(value, tuple) else value

    def _composed(self, ctx: click.Context, kwargs: dict[str, Any]) -> Any:
        """The value of a hidden field, of one its fields' options give, or of one the command's parameters build."""
        if self.cli.hidden:
            return self.cli.value
        if self.parts:
            return {part.name: part.value(ctx, kwargs) for part in self.parts if part.present(ctx, kwargs)}
        build = cast(Callable[..., Any], self.cli.build)  # checked on creation
        return build(**{name: kwargs[name] for name in self._names()})

    def consume(self, kwargs: dict[str, Any]) -> None:
        """Take this field's parameters out of the keywords the command body receives."""
        for name in self._names():
            kwargs.pop(name, None)


def _given(**attributes: Any) -> dict[str, Any]:
    """The attributes that are not None: click tells an explicit ``default=None`` from no default at all."""
    return {key: value for key, value in attributes.items() if value is not None}


def _split(text: str, separator: str) -> list[str]:
    return [part.strip() for part in text.split(separator) if part.strip()]


def _pairs(name: str, given: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` texts as a dict (the key stripped, the value as given); an InputError names a bad one."""
    pairs: dict[str, str] = {}
    for index, pair in enumerate(given):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{name}[{index}]", f"must be KEY=VALUE, got {pair!r}")
        pairs[key.strip()] = value
    return pairs


def _members(kind: Any) -> tuple[Any, ...]:
    """The members of a union type (none for any other type)."""
    return get_args(kind) if get_origin(kind) in (Union, types.UnionType) else ()


def _shape(annotation: Any) -> tuple[Any, bool]:
    """The type a field's values have on the command line, without ``None``, ``Annotated`` and the list around it;
    and whether the field is a list."""
    kind = _bare(annotation)
    if get_origin(kind) in (list, tuple, set, Sequence):
        return _bare(get_args(kind)[0]), True
    return kind, False


def _bare(annotation: Any) -> Any:
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


__all__ = ["DATE", "GIVEN", "Cli", "FieldOption", "attach"]
