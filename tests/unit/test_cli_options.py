"""cli.options: click parameters generated from a request model (issue 34), run through click itself."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any, Literal

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

from cli.main import reported_errors
from cli.options import Cli, Instead, acting, options_for, request_options
from cli.tools.registry import ToolInput
from kg.models import UtcDatetime
from kg.models.request import Request


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


class PaintRequest(Request):
    """A request with one field of every kind the generator handles."""

    what: str = Field(description="What to paint.")
    colour: Colour | None = Field(None, description="Which colour.")
    finish: Literal["matt", "gloss"] = Field("matt", description="The finish.")
    coats: int = Field(2, ge=1, le=5, description="How many coats (1..5).")
    bounded: int | None = Field(None, ge=1, le=9, description="Checked by click.")
    thinner: float | None = Field(None, ge=0.0, le=1.0, description="Share of thinner.")
    dry: bool = Field(False, description="Dry run.")
    primer: bool = Field(True, description="Prime first.")
    sand: bool = Field(True, description="Sand between coats.")
    walls: list[str] = Field(default_factory=list, description="Walls to paint.")
    tags: list[str] | None = Field(None, description="Labels.")
    after: UtcDatetime | None = Field(None, description="Not before this time.")
    day: date | None = Field(None, description="The day.")
    brushes: list[int] | None = Field(None, description="Brush sizes.")


class PaintInput(PaintRequest, ToolInput):
    """Arguments of a paint tool."""


SEEN: list[PaintInput] = []


@click.command("paint")
@request_options(PaintInput, what=Cli(argument=True), walls=Cli(flag="--wall"), tags=Cli(split=","),
                 bounded=Cli(bounded=True), sand=Cli(flag="--no-sand", negated="Do not sand."),
                 brushes=Cli(params=(click.Option(["--brush-sizes", "sizes"], default=""),),
                             build=lambda sizes: [int(s) for s in sizes.split("/") if s]))  # fmt: skip
@click.option("--loud", is_flag=True)
def paint(*, request: PaintInput, loud: bool) -> None:
    SEEN.append(request)
    click.echo(json.dumps({"given": sorted(request.model_fields_set), "loud": loud, "agent": acting(request)}))


def _run(*args: str) -> tuple[int, str, dict[str, Any] | None]:
    SEEN.clear()
    result = CliRunner().invoke(_Reported([paint]), ["paint", *args])
    return result.exit_code, result.output, (json.loads(result.stdout) if result.exit_code == 0 else None)


class _Reported(click.Group):
    """A group reporting errors as ``mabos`` does (one line, exit 1 for an InputError)."""

    def __init__(self, commands: list[click.Command]) -> None:
        super().__init__("t", commands={c.name or "": c for c in commands})

    def invoke(self, ctx: click.Context) -> Any:
        with reported_errors():
            return super().invoke(ctx)


def _params() -> dict[str, click.Parameter]:
    return {p.name or "": p for p in paint.params}


def test_the_parameters_follow_the_fields_in_order():
    assert [p.name for p in paint.params] == ["agent", "what", "colour", "finish", "coats", "bounded", "thinner",
                                              "dry", "primer", "sand", "walls", "tags", "after", "day", "sizes",
                                              "loud"]  # fmt: skip
    params = _params()
    assert isinstance(params["what"], click.Argument) and params["what"].required
    assert params["agent"].opts == ["--agent", "-a"] and params["agent"].required
    assert params["colour"].type.to_info_dict()["choices"] == ("red", "blue")
    assert params["finish"].type.to_info_dict()["choices"] == ("matt", "gloss")
    assert params["walls"].opts == ["--wall"] and params["walls"].multiple
    assert params["primer"].secondary_opts == ["--no-primer"]
    assert params["sand"].opts == ["--no-sand"] and params["sand"].secondary_opts == []


def test_help_is_the_description_with_what_the_command_line_adds():
    ctx = click.Context(paint)
    records = {name: p.get_help_record(ctx) for name, p in _params().items() if isinstance(p, click.Option)}
    assert records["coats"] == ("--coats INTEGER", "How many coats (1..5).  [default: 2]")
    assert records["bounded"] == ("--bounded INTEGER RANGE", "Checked by click.  [1<=x<=9]")
    assert records["walls"] == ("--wall TEXT", "Walls to paint (repeatable).")
    assert records["tags"] == ("--tags TEXT", "Labels (comma-separated).")
    assert records["sand"] == ("--no-sand", "Do not sand.")
    assert records["primer"] == ("--primer / --no-primer", "Prime first.  [default: primer]")
    assert records["dry"] == ("--dry", "Dry run.")
    assert records["day"] == ("--day YYYY-MM-DD", "The day.")


def test_only_what_the_user_gave_reaches_the_model():
    code, output, printed = _run("--agent", "a", "kitchen")
    assert code == 0, output
    assert printed == {"given": ["agent_id", "brushes", "what"], "loud": False, "agent": "a"}
    assert SEEN[0].coats == 2 and SEEN[0].primer and SEEN[0].sand and SEEN[0].walls == []


def test_values_are_converted_as_the_field_wants_them():
    code, output, _ = _run("-a", "a", "hall", "--colour", "blue", "--wall", "n", "--wall", "s", "--tags", " x, ,y ",
                           "--no-sand", "--no-primer", "--after", "2024-05-01", "--day", "2024-05-02",
                           "--brush-sizes", "3/5", "--loud")  # fmt: skip
    assert code == 0, output
    got = SEEN[0]
    assert (got.colour, got.walls, got.tags) == (Colour.BLUE, ["n", "s"], ["x", "y"])
    assert (got.sand, got.primer) == (False, False)
    assert got.after == datetime(2024, 5, 1, tzinfo=UTC) and got.day == date(2024, 5, 2) and got.brushes == [3, 5]


def test_an_empty_split_list_is_not_given():
    code, _, printed = _run("-a", "a", "hall", "--tags", " , ")
    assert code == 0 and printed is not None and "tags" not in printed["given"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        pytest.param(("--coats", "9"), "coats", id="int-bound"),
        pytest.param(("--thinner", "1.5"), "thinner", id="float-bound"),
        pytest.param(("--brush-sizes", "0/-1", "--thinner", "0.5", "--coats", "0"), "coats", id="after-the-build"),
    ],
)
def test_the_model_validates_once_and_names_the_field(args: tuple[str, ...], field: str):
    code, output, _ = _run("-a", "a", "hall", *args)
    assert code == 1 and output.startswith(f"error: {field}: ") and output.count("\n") == 1
    assert SEEN == []


def test_a_bounded_option_is_a_usage_error():
    code, output, _ = _run("-a", "a", "hall", "--bounded", "10")
    assert code == 2 and "10 is not in the range 1<=x<=9" in output


def test_a_field_the_model_lacks_is_refused_when_the_command_is_declared():
    with pytest.raises(TypeError, match="no field nope"):
        request_options(PaintInput, nope=Cli(flag="--nope"))
    with pytest.raises(TypeError, match="needs build="):
        request_options(PaintInput, brushes=Cli(params=(click.Option(["--b"]),)))
    with pytest.raises(TypeError, match="no field nope"):
        options_for(PaintInput, {"nope": Cli(flag="--nope")})


def test_options_for_takes_the_fields_cli_as_a_mapping():
    """options_for(model, {field: Cli}) is request_options(model, field=Cli), for commands made in a factory."""
    fields = {"what": Cli(argument=True), "walls": Cli(flag="--wall")}

    def command(*, request: PaintInput) -> None:
        click.echo(json.dumps(request.model_dump(mode="json", include={"what", "walls"})))

    by_mapping = click.command("mapped")(options_for(PaintInput, fields)(command))
    by_keywords = click.command("keyed")(request_options(PaintInput, **fields)(command))
    assert [p.to_info_dict() for p in by_mapping.params] == [p.to_info_dict() for p in by_keywords.params]
    result = CliRunner().invoke(by_mapping, ["-a", "a", "door", "--wall", "north"])
    assert result.exit_code == 0 and json.loads(result.stdout) == {"what": "door", "walls": ["north"]}


# ---------------------------------------------------------------------------------------------- nested, hidden, Instead


class Frame(Request):
    """A nested model whose fields become options of their own."""

    wood: Literal["oak", "pine"] | None = Field(None, description="The wood.")
    width: int = Field(2, ge=1, description="Width in cm.")


class Hanging(Request):
    """Both options and a file give it."""

    title: str = Field(description="The picture's title.")
    frame: Frame = Field(description="The frame.")
    glazed: bool | None = Field(None, description="Behind glass (true) or not (false); unset: as the frame says.")
    hooks: list[int | str] = Field(default_factory=list, description="Hooks, by number or name.")
    notes: dict[str, str] = Field(default_factory=dict, description="Notes, each a KEY and a VALUE.")
    limit: int = Field(10, description="Listed at most.")
    secret: str | None = Field(None, description="Never on the command line.")
    wall: str | None = Field(None, description="Where it hangs.")


class HangingInput(Hanging, ToolInput):
    """Arguments of a hanging tool."""


class Catalogue(Request):
    """What a catalogue file gives instead."""

    document: str = Field(description="The catalogue.")


class CatalogueInput(Catalogue, ToolInput):
    """Arguments of a catalogue tool."""


HUNG: list[Any] = []
FROM = click.Option(["--from", "source"], default=None, help="A file.")


@click.command("hang")
@request_options(HangingInput, frame=Cli(fields={"width": Cli(flag="--frame-width")}), glazed=Cli(off="--bare"),
                 hooks=Cli(flag="--hook"), limit=Cli(hidden=True, value=100), secret=Cli(hidden=True),
                 instead=Instead(FROM, build=lambda text: {"title": text.upper(), "frame": {}},
                                 keep=("wall",)))  # fmt: skip
def hang(*, request: HangingInput) -> None:
    HUNG.append(request)


@click.command("shelve")
@request_options(HangingInput, frame=Cli(fields={}), instead=Instead(FROM, build=lambda text: {"document": text},
                                                                     model=CatalogueInput))  # fmt: skip
def shelve(*, request: HangingInput | CatalogueInput) -> None:
    HUNG.append(request)


def _hang(*args: str, command: click.Command = hang) -> tuple[int, str]:
    HUNG.clear()
    result = CliRunner().invoke(_Reported([command]), [command.name or "", "-a", "a", *args])
    return result.exit_code, result.output


def test_nested_optional_bool_text_union_mapping_and_hidden_fields_on_the_command_line():
    params = {p.name: p for p in hang.params}
    assert list(params) == ["agent", "source", "title", "wood", "width", "glazed", "hooks", "notes", "wall"]
    ctx = click.Context(hang)
    assert params["width"].get_help_record(ctx) == ("--frame-width INTEGER", "Width in cm.  [default: 2]")
    assert params["glazed"].get_help_record(ctx)[0] == "--glazed / --bare" and params["glazed"].default is None
    assert params["notes"].get_help_record(ctx) == ("--notes KEY=VALUE", "Notes, each a KEY and a VALUE (repeatable).")
    assert not any(p.required for p in hang.params if p.name != "agent")  # the Instead may give what they would
    code, output = _hang("--title", "sunset", "--wood", "oak", "--bare", "--hook", "3", "--hook", "left",
                         "--notes", "by= Ann", "--notes", " year=1990")  # fmt: skip
    assert code == 0, output
    got = HUNG[0]
    assert (got.frame.wood, got.frame.width, got.glazed) == ("oak", 2, False)
    assert got.hooks == ["3", "left"]  # text: the form the command line gives
    assert (got.notes, got.limit, got.secret) == ({"by": " Ann", "year": "1990"}, 100, None)
    assert "glazed" in got.model_fields_set and "secret" not in got.model_fields_set
    code, _ = _hang("--title", "dawn")
    assert code == 0 and HUNG[0].glazed is None and HUNG[0].frame == Frame()  # a required model: its defaults


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param(("--title", "x", "--notes", "by"), "error: notes[0]: must be KEY=VALUE, got 'by'", id="pair"),
        pytest.param(("--title", "x", "--frame-width", "0"), "error: frame.width: ", id="nested-bound"),
        pytest.param((), "error: title: is required (or give --from)", id="required"),
        pytest.param(
            ("--from", "x", "--wood", "oak"), "error: source: give either --from or --wood, not both", id="both"
        ),
    ],
)
def test_errors_name_the_field_or_the_option(args: tuple[str, ...], error: str):
    code, output = _hang(*args)
    assert code == 1 and output.startswith(error) and output.count("\n") == 1
    assert HUNG == []


def test_instead_builds_the_request_keeping_the_options_it_allows():
    code, output = _hang("--from", "dusk", "--wall", "north")
    assert code == 0, output
    assert (HUNG[0].title, HUNG[0].wall, HUNG[0].limit) == ("DUSK", "north", 10)  # not the command line's hidden 100
    code, output = _hang("--from", "list of works", command=shelve)
    assert code == 0, output
    assert isinstance(HUNG[0], CatalogueInput) and HUNG[0].document == "list of works" and acting(HUNG[0]) == "a"


def test_a_nested_field_needs_a_model():
    with pytest.raises(TypeError, match="needs a model field"):
        request_options(HangingInput, title=Cli(fields={}))
    with pytest.raises(TypeError, match="Frame has no field depth"):
        request_options(HangingInput, frame=Cli(fields={"depth": Cli()}))


# ---------------------------------------------------------------------------------------------- the acting agent

SIGNED: list[CatalogueInput] = []
BY = click.Option(["--by", "by"], required=True, help="Who signs.")


@click.command("sign")
@request_options(CatalogueInput, agent_id=Cli(params=(BY,), build=lambda by: by), document=Cli(argument=True))
def sign(*, request: CatalogueInput) -> None:
    SIGNED.append(request)


@click.command("survey")
@request_options(CatalogueInput, agent_id=Cli(hidden=True), document=Cli(short="-d", choices=("map", "deed")))
def survey(*, request: CatalogueInput) -> None:
    SIGNED.append(request)


def test_the_acting_agent_by_the_commands_own_option_or_none():
    assert [p.name for p in sign.params] == ["by", "document"] and [p.name for p in survey.params] == ["document"]
    SIGNED.clear()
    assert CliRunner().invoke(_Reported([sign]), ["sign", "deed", "--by", "ann"]).exit_code == 0
    assert CliRunner().invoke(_Reported([survey]), ["survey", "-d", "map"]).exit_code == 0
    assert survey.params[0].opts == ["--document", "-d"]
    assert CliRunner().invoke(_Reported([survey]), ["survey", "-d", "chart"]).exit_code == 2  # not a choice
    assert [(s.agent_id, s.document) for s in SIGNED] == [("ann", "deed"), (None, "map")]
    assert "agent_id" not in SIGNED[1].model_fields_set
    missing = CliRunner().invoke(_Reported([sign]), ["sign", "deed"])
    assert missing.exit_code == 2 and "Missing option '--by'" in missing.output  # the command's own rule
