"""``mabos cbr store|retrieve`` and ``mabos reason [run] | methods | owl-rl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import click
from pydantic import BaseModel

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, Instead, request_options
from cli.tools.cases import CbrRetrieveInput, CbrStoreInput, ReasonInput, cases_of
from cli.tools.owl_rl import MAX_LISTED, OwlCommandContext, OwlRlInput, OwlRlResult
from cli.tools.registry import run
from kg.errors import InputError
from kg.limits import load_yaml, read_text_bounded
from kg.models import parse
from reasoning.cases import StoredCase
from reasoning.cbr import RetrievalResult
from reasoning.router import AUTO, RouterResult, canonical, docgen, engine_kind, list_methods

_OWN = ("agent_id", "created_at")  # set by mabos, never read from a case file
COMMA = Cli(split=",")
HIDDEN = Cli(hidden=True)


def _read_mapping(path: Path, field: str) -> dict[str, Any]:
    import yaml  # noqa: PLC0415 - only a command given a file pays for PyYAML

    try:
        text = read_text_bounded(path, field)  # at most 100 MB, read in chunks (never /dev/zero to the end)
        data = json.loads(text) if path.suffix.lower() == ".json" else load_yaml(text)  # bounded aliases
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise InputError(field, f"{path} is not readable JSON or YAML ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise InputError(field, f"{path} must hold a JSON/YAML object")
    return data


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


# ---------------------------------------------------------------------------------------------- cbr


@click.group("cbr")
def cbr() -> None:
    """Case-based reasoning: store past cases, retrieve similar ones (S = 0.6 Sb + 0.4 Sd)."""


def _case_file(path: Path) -> dict[str, Any]:
    """A case file as ``cbr_store``'s fields (not the ones mabos sets)."""
    data = _read_mapping(path, "file")
    own = [key for key in _OWN if key in data]
    if own:
        raise InputError(own[0], "is set by mabos, not by the caller")
    return data


#: A case file is the operator's (a path never reaches a tool): it gives the case instead of the options, --scope aside.
CASE_FILE = Instead(click.Option(["--file", "file"], type=click.Path(exists=True, dir_okay=False, path_type=Path),
                                 default=None), build=_case_file, keep=("scope",))  # fmt: skip


@cbr.command("store", help=example(
    "Store a case from a JSON/YAML file ({situation: {beliefs, desires, context}, solution: {plan_id, actions}, "
    "outcome: {success, metrics, lessons}}) or from options. An identical situation is stored once; past the "
    "capacity (10,000 per scope) the least useful cases (failed, then oldest) are dropped.",
    "mabos cbr store --agent a --file case.json",
    "mabos cbr store --agent a --beliefs B-1,B-2 --desires D-1 --action 'discount 10%' --success",
))  # fmt: skip
@request_options(CbrStoreInput, situation=Cli(fields={"beliefs": COMMA, "desires": COMMA}),
                 solution=Cli(fields={"plan_id": Cli(flag="--plan", metavar="P-..."), "actions": Cli(flag="--action")}),
                 outcome=Cli(fields={"success": Cli(off="--failure"), "metrics": HIDDEN,
                                     "lessons": Cli(flag="--lesson")}),
                 uid=HIDDEN, instead=CASE_FILE)  # fmt: skip
@mabos_options
def store(out: Session, *, request: CbrStoreInput) -> None:
    result = out.run("cbr_store", request, StoredCase)
    what = "stored" if result.created else "already stored (identical situation)"
    pruned = render.note(f"pruned {len(result.pruned)} case(s) past the capacity") if result.pruned else None
    out.emit(result, render.done(f"{result.case.uid} {what}"), pruned)


@cbr.command("retrieve", help=example(
    "The most similar past cases: S = 0.6 x belief overlap + 0.4 x desire overlap (Jaccard), blended with the "
    "context's text similarity (weight 0.2) when --context is given and the embedder loads.",
    "mabos cbr retrieve --agent a --beliefs B-1,B-2 --desires D-1 --context 'price-sensitive customer'",
))  # fmt: skip
@request_options(CbrRetrieveInput, beliefs=COMMA, desires=COMMA, weights=HIDDEN)
@mabos_options
def retrieve_(out: Session, *, request: CbrRetrieveInput) -> None:
    result = out.run("cbr_retrieve", request, RetrievalResult)
    rows = [(m.case_uid, round(m.score, 4), round(m.belief_similarity, 3), round(m.desire_similarity, 3),
             "" if m.context_similarity is None else round(m.context_similarity, 3),
             "; ".join(m.solution.actions), "success" if m.outcome.success else "failure")
            for m in result.matches]  # fmt: skip
    human: list[Any] = [render.table("Similar cases", ("uid", "score", "Sb", "Sd", "Sc", "solution", "outcome"), rows)
                        if rows else render.note("no similar case")]  # fmt: skip
    human += [render.note(n) for n in result.notes]
    out.emit(result, *human)


# ---------------------------------------------------------------------------------------------- reason


class _ReasonGroup(click.Group):
    """``mabos reason ...`` runs the router; ``reason methods`` and ``reason owl-rl`` are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("reason", cls=_ReasonGroup)
def reason_group() -> None:
    """Reasoning methods: the seed's 32 methods (`reason [run]`), the catalogue, OWL-RL."""


def _inputs(path: Path | None, method: str | None, shortcuts: dict[str, str | None]) -> dict[str, Any]:
    inputs: dict[str, Any] = _read_mapping(path, "inputs") if path else {}
    if inputs and method and not all(canonical(k) for k in inputs):  # the method's own object
        inputs = {method: inputs}
    if shortcuts["goal"]:
        inputs.setdefault("deductive", {})["goal"] = shortcuts["goal"]
    if shortcuts["observation"]:
        inputs.setdefault("abductive", {})["observation"] = shortcuts["observation"]
    if shortcuts["beliefs"] or shortcuts["desires"]:
        situation = {"beliefs": _csv(shortcuts["beliefs"]), "desires": _csv(shortcuts["desires"])}
        inputs.setdefault("case-based", {}).update(situation)
    return inputs


def _mode(request: ReasonInput, auto: bool) -> None:
    """The command line asks for one mode (the tool auto-selects when none is given): --method, --methods (with or
    without --multi), --multi, or --auto (a classification option implies it)."""
    auto = auto or request.problem_classification is not None
    chosen = [x for x in (request.method, request.methods, AUTO if auto else None,
                          "multi" if request.multi_method else None) if x]  # fmt: skip
    if len(chosen) > 1 and not (request.multi_method and request.methods):
        raise InputError("method", "give one of --method ID, --methods A,B, --multi or --auto (a classification)")
    if not chosen:
        raise InputError("method", "give --method ID, --methods A,B, --multi or --auto (see 'mabos reason methods')")


@reason_group.command("run", help=example(
    "Apply a reasoning method to a problem. Every method of the seed's catalogue computes from structured "
    "inputs (--inputs FILE: {method_id: {...}} or the method's own object) or from the agent's facts, rules, "
    "cases, beliefs and goals; a method lacking both returns a prompt for your LLM (kind llm_prompt), or runs "
    "on the configured chat model (kind llm). --auto (or any of --uncertainty ...) selects the method by the "
    "seed's scoring; --methods A,B runs several and fuses their conclusions.",
    "mabos reason run --agent a --method bayesian --inputs sprinkler.json --json",
    "mabos reason --agent a --method deductive --goal 'acme isTaxable true'",
    "mabos reason --agent a --auto --uncertainty high --complexity complex --domain empirical 'Enter Germany?'",
    "mabos reason --agent a --methods deductive,abductive,counterfactual --inputs inputs.json",
))  # fmt: skip
@request_options(ReasonInput, problem=Cli(argument=True),
                 problem_classification=Cli(fields={"data_availability": Cli(flag="--data")}),
                 multi_method=Cli(flag="--multi"), methods=COMMA, inputs=HIDDEN,
                 success=Cli(off="--failure"))  # fmt: skip
# The command line's own: the mode switch the tool does not need, and the inputs from a file (the operator's) or
# from shortcuts for three methods, which the command puts in ``inputs``.
@click.option("--auto", "auto", is_flag=True, default=False, help="Select the method from the classification.")
@click.option("--inputs", "inputs_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None)
@click.option("--goal", default=None, metavar="'S P O'", help="Deductive: prove this (backward chaining).")
@click.option("--observation", default=None, metavar="'S P O'", help="Abductive: explain this.")
@click.option("--beliefs", default=None, help="Case-based: comma-separated beliefs.")
@click.option("--desires", default=None, help="Case-based: comma-separated desires.")
@mabos_options
def run_(out: Session, *, request: ReasonInput, auto: bool, inputs_file: Path | None, goal: str | None,
         observation: str | None, beliefs: str | None, desires: str | None) -> None:  # fmt: skip
    _mode(request, auto)
    shortcuts = {"goal": goal, "observation": observation, "beliefs": beliefs, "desires": desires}
    built: dict[str, Any] = {"inputs": _inputs(inputs_file, request.method, shortcuts)}
    if request.methods:
        built["multi_method"] = True  # --methods A,B fuses, as --multi does
    asked = parse(ReasonInput, {**request.model_dump(exclude_unset=True), **built})  # validated with what was built
    result = out.run("reason", asked, RouterResult)
    rows = [(r.method, r.kind, round(r.confidence, 3), r.conclusion) for r in result.results]
    human: list[Any] = [render.table(f"Reasoning ({result.mode})", ("method", "kind", "confidence", "conclusion"),
                                     rows)]  # fmt: skip
    if result.fusion is not None:
        human.append(render.note(result.fusion.summary))
    if result.tie_break:
        human.append(render.note(result.tie_break))
    if result.router != "explicit":
        human += [render.note(f"chosen by {result.router}: {m}: {why}") for m, why in result.why.items()]
    for m, template in result.templates.items():
        filling = json.dumps(template["inputs"])
        human += [render.note(f"{m} needs inputs; missing: {'; '.join(template['missing'])} (template from "
                              f"{template['source']})"),
                  render.note(f"inputs to fill (save as inputs.json, then: {template['rerun']}):\n{filling}"),
                  render.note("prompt for an LLM (--json: results[].value.fill_prompt): "
                              + next(r.value["fill_prompt"] for r in result.results if r.method == m))]  # fmt: skip
    human += [render.note(f"{m}: {text}") for m, text in result.narration.items()]
    human += [render.done(f"stored {s['kind']} {s['uid']} in {s['scope']}") for s in result.stored]
    human += [render.note(n) for r in result.results for n in r.notes] + [render.note(n) for n in result.notes]
    out.emit(result, *human)


@reason_group.command("docs", help=example(
    "Regenerate the generated part of docs/reasoning-methods.md (the catalogue, its counts, and each method's "
    "confidence meaning, work bound, inputs and example) from the catalogue and the methods' MethodDoc tables; "
    "--check writes nothing and fails when the page is stale.",
    "mabos reason docs --check --out docs/reasoning-methods.md",
))  # fmt: skip
@click.option("--out", "path", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("docs/reasoning-methods.md"), show_default=True, help="The page to update.")  # fmt: skip
@click.option("--check", is_flag=True, help="Write nothing; fail (exit 1) when the page differs.")
@mabos_options
def docs_(out: Session, *, path: Path, check: bool) -> None:
    if not path.is_file():
        raise InputError("--out", f"{path} does not exist (the page holds the generated block's markers)")
    current = path.read_text(encoding="utf-8")
    text = docgen.render(current)
    changed = text != current
    if check and changed:
        raise InputError("--out", f"{path} is stale: run 'mabos reason docs --out {path}'")
    if changed and not check:
        path.write_text(text, encoding="utf-8")
    result = {"path": str(path), "changed": changed}
    out.emit(result, render.done(f"{'Wrote' if changed else 'Up to date'}: {path}"))


class MethodRow(BaseModel):
    """One catalogue entry as ``mabos reason methods --json`` lists it."""

    id: str
    category: str
    engine: str
    name: str
    description: str
    profile: dict[str, str]


@reason_group.command(
    "methods",
    help=example(
        "The catalogue: the seed's 32 methods in 6 categories and 16 extension methods, with their ideal "
        "problem profiles and engine (builtin: computes from inputs; graph: also reads the agent's graph; "
        "prompt: returns a prompt for your LLM).",
        "mabos reason methods --category probabilistic --json",
    ),
)
@click.option("--category", default=None, help="Only one category (formal, probabilistic, ..., extension).")
@mabos_options
def methods_(out: Session, *, category: str | None) -> None:
    found = [MethodRow(id=m.id, category=m.category.value, engine=engine_kind(m), name=m.name,
                       description=m.description, profile=m.profile.model_dump(mode="json"))
             for m in list_methods(category)]  # fmt: skip
    rows = [(m.id, m.category, m.engine, m.description) for m in found]
    out.emit(found, render.table("Reasoning methods", ("id", "category", "engine", "description"), rows))


@reason_group.command("owl-rl", help=example(
    "Run the OWL 2 RL closure (our engine; --engine owlrl for the reference library) over the workspace's "
    "ontologies/ and the agent's facts, and store the new class and property facts as derived facts with source "
    "'owl-rl' (stale ones are retracted).",
    "mabos reason owl-rl --agent a",
    "mabos reason owl-rl --agent a --ontology extra.ttl --dry-run --engine owlrl",
))  # fmt: skip
@request_options(OwlRlInput, limit=Cli(hidden=True, value=MAX_LISTED))  # every entailment is listed
@click.option("--ontology", "ontology", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="An extra ontology file (JSON-LD, Turtle, RDF/XML; repeatable).")  # fmt: skip
@mabos_options
def owl_rl(out: Session, *, request: OwlRlInput, ontology: tuple[Path, ...]) -> None:
    ctx = OwlCommandContext(workspace_obj=out.workspace(), extra_ontology=list(ontology))
    report = cast(OwlRlResult, run(ctx, "reason_owl_rl", request))
    rows = [(e.subject, e.predicate, e.object, round(e.confidence, 4)) for e in report.entailments[:50]]
    summary = (f"{report.entailed} entailed from {report.input_facts} facts and {report.ontology_triples} ontology "
               f"triples in {report.seconds:.2f} s; created {report.created}, retracted {len(report.retracted)}"
               f"{' (dry run: nothing written)' if request.dry_run else ''}")  # fmt: skip
    table = render.table("Entailed", ("subject", "predicate", "object", "confidence"), rows)
    cut = render.note(f"only the first {MAX_LISTED} entailments are listed") if report.truncated else None
    out.emit(report.model_dump(mode="json", exclude={"truncated"}), render.done(summary), table, cut)


GROUPS = [cbr, reason_group]

__all__ = ["GROUPS", "cases_of"]  # cases_of now lives in cli.tools.cases (re-exported)
