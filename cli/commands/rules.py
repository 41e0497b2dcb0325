"""``mabos rule ...``, ``infer ...``, ``constraint check``, ``policy eval`` and ``knowledge explain``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import click
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, Instead, request_options
from cli.tools.inference import (
    MAX_HYPOTHESES,
    AbduceInput,
    BackwardInput,
    ForwardInput,
    HypothesisList,
    KnowledgeInput,
    ProofOutcome,
    ProofStep,
)
from cli.tools.registry import run
from cli.tools.rules import (
    ImportedRules,
    NoArguments,
    PolicyEvalInput,
    PolicyFiringList,
    RuleCreateInput,
    RuleImportInput,
    RuleList,
    RuleListInput,
    RuleToggleInput,
    ViolationList,
)
from cli.tools.rules_admin import RuleDeleted, RuleDeleteInput, RuleExport, RuleExportInput
from kg.errors import InputError
from kg.limits import read_text_bounded
from kg.models import Rule
from reasoning.service import ForwardReport, KnowledgeAnswer

ARGUMENT = Cli(argument=True)
RULE_ID = Cli(argument=True, metavar="RULE_ID")
#: A triple pattern's object, a positional argument as its subject and predicate.
OBJECT = Cli(argument=True, metavar="OBJECT")


def _rule_line(rule: Rule) -> str:
    ifs = " AND ".join(
        f"{c.subject} {c.predicate} {'' if c.operator == 'eq' else c.operator + ' '}{c.object}" for c in rule.conditions
    )
    then = (
        f"{rule.conclusion.subject} {rule.conclusion.predicate} {rule.conclusion.object}"
        if rule.conclusion
        else rule.violation_message or rule.action
    )
    return f"IF {ifs} THEN {then}"


def _rules_table(rules: list[Rule]) -> Any:
    rows = [(r.uid, r.name, r.type.value, "yes" if r.enabled else "no", r.confidence_factor, _rule_line(r))
            for r in rules]  # fmt: skip
    return render.table("Rules", ("uid", "name", "type", "enabled", "cf", "rule"), rows)


# ---------------------------------------------------------------------------------------------- rule

_FORMATS = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}


def _rule_file(path: Path) -> dict[str, str]:
    """A rule file as ``rule_import``'s fields: its text and format (by suffix); InputError naming ``file`` when it
    cannot be read."""
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError("file", f"{path}: a rule file ends in .json, .yaml or .yml")
    return {"document": read_text_bounded(path, "file"), "format": fmt}  # at most 100 MB, read in chunks


#: A rule file is the operator's (a path never reaches a tool): it gives rule_import's document instead of the options.
RULE_FILE = Instead(click.Option(["--file", "file"], type=click.Path(exists=True, dir_okay=False, path_type=Path),
                                 default=None), build=_rule_file, model=RuleImportInput)  # fmt: skip


@click.group("rule")
def rule() -> None:
    """Create, list, toggle, delete, import and export rules (inference, constraint, policy)."""


@rule.command(
    "create",
    help=example(
        'Create a rule from options or from a JSON/YAML file (one rule, a list, or {"rules": [...]}).\n\n'
        "Conditions are 'SUBJECT PREDICATE [OPERATOR] OBJECT' with ?variables; operators eq, ne, gt, lt, "
        'gte, lte, contains (or =, !=, >, <, >=, <=, ~). Numbers such as "$50,000" or "15%" compare '
        "numerically. A rule whose conclusion uses a variable no condition binds is refused.",
        "mabos rule create --agent a --name taxable --if '?x hasRevenue gt 1000000' --if '?x locatedIn US' "
        "--then '?x isTaxable true'",
        "mabos rule create --agent a --file rules.yaml",
    ),
)
@request_options(RuleCreateInput, conditions=Cli(flag="--if", metavar="PATTERN"),
                 conclusion=Cli(flag="--then", metavar="PATTERN"), violation_message=Cli(flag="--message"),
                 enabled=Cli(flag="--disabled", negated="Store the rule disabled."), instead=RULE_FILE)  # fmt: skip
@mabos_options
def create(out: Session, *, request: RuleCreateInput | RuleImportInput) -> None:
    if isinstance(request, RuleImportInput):  # reading the file is the CLI's part; storing goes through the registry
        created = out.run("rule_import", request, ImportedRules).rules
    else:
        created = [out.run("rule_create", request, Rule)]
    out.emit(created, render.done(f"created {len(created)} rule(s)"), _rules_table(created))


@rule.command(
    "list", help=example("Rules the agent can read, oldest first.", "mabos rule list --agent a --type inference --json")
)
@request_options(RuleListInput, enabled=Cli(off="--disabled"))
@mabos_options
def list_(out: Session, *, request: RuleListInput) -> None:
    found = out.run("rule_list", request, RuleList).rules
    out.emit(found, _rules_table(found) if found else render.note("no rules"))


@rule.command(
    "toggle",
    help=example(
        "Enable or disable a rule (flips it unless --on or --off is given).", "mabos rule toggle --agent a R-01J..."
    ),
)
@request_options(RuleToggleInput, rule_id=RULE_ID, enabled=Cli(flag="--on", off="--off"))
@mabos_options
def toggle(out: Session, *, request: RuleToggleInput) -> None:
    changed = out.run("rule_toggle", request, Rule)
    out.emit(changed, render.done(f"{changed.uid} {'enabled' if changed.enabled else 'disabled'}"))


@rule.command("delete", help=example("Delete a rule for good ('rule toggle' only disables it).",
                                     "mabos rule delete --agent a R-01J..."))  # fmt: skip
@request_options(RuleDeleteInput, rule_id=RULE_ID)
@mabos_options
def delete(out: Session, *, request: RuleDeleteInput) -> None:
    gone = out.run("rule_delete", request, RuleDeleted)
    out.emit(gone, render.done(f"{gone.uid} ({gone.rule.name}) deleted"))


@rule.command(
    "export",
    help=example(
        "Print the agent's rules as JSON or YAML; 'rule create --file' reads them back (new uids, the importer "
        "as owner). With --json the document comes inside a JSON object (format, document, count).",
        "mabos rule export --agent a --format yaml > rules.yaml",
    ),
)
@request_options(RuleExportInput)
@mabos_options
def export(out: Session, *, request: RuleExportInput) -> None:
    exported = out.run("rule_export", request, RuleExport)
    out.emit_text(exported, exported.document)


# ---------------------------------------------------------------------------------------------- infer


@click.group("infer")
def infer() -> None:
    """Forward chaining, backward chaining and abduction over the agent's facts and rules."""


@infer.command(
    "forward",
    help=example(
        "Derive everything the enabled inference rules entail from the asserted facts (semi-naive, to a fixpoint).\n\n"
        "With --persist the derived facts are stored (source 'inference', with their rule and supporting facts) "
        "and derived facts that no longer follow are retracted.",
        "mabos infer forward --agent a --persist",
    ),
)
@request_options(ForwardInput)
@mabos_options
def forward(out: Session, *, request: ForwardInput) -> None:
    # this process is the CLI's own: the closure may pause its garbage collector (reasoning.rules.forward_chain)
    report = cast(ForwardReport, run(out.tools(tune_process=True), "infer_forward", request))
    offset = request.offset
    rows = [
        (d.subject, d.predicate, d.object, round(d.confidence, 4), d.rule_name, d.uid or "") for d in report.derived
    ]
    stopped = "" if report.fixpoint else f" (stopped by {report.stopped_by})"
    summary = (f"{report.total_derived} derived from {report.facts} facts and {report.rules} rules in "
               f"{report.iterations} iteration(s){stopped}")  # fmt: skip
    if request.persist:
        summary += (
            f"; stored {report.created} new, updated {report.updated}, {report.unchanged} unchanged, "
            f"retracted {len(report.retracted)}"
        )
    columns = ("subject", "predicate", "object", "confidence", "rule", "uid")
    page = f"showing {offset}-{offset + len(rows) - 1}; next page: --offset {report.next_offset}"
    out.emit(report, render.done(summary), render.table("Derived", columns, rows),
             render.note(page) if report.next_offset is not None else None,
             render.note(report.note) if report.note else None)  # fmt: skip


def _proof_tree(node: ProofStep, tree: Tree) -> None:
    """Add a proof node and its children under ``tree``."""
    how = f"by rule {node.rule.name}" if node.rule else f"fact {node.fact or ''}".strip()
    branch = tree.add(f"{' '.join(node.triple)}  (confidence {node.confidence:g}, {how})")
    for child in node.children:
        _proof_tree(child, branch)


@infer.command("backward", help=example(
    "Prove SUBJECT PREDICATE OBJECT (?variables allowed) goal-first; unprovable goals list the knowledge gaps.",
    "mabos infer backward --agent a acme isTaxable true",
))  # fmt: skip
@request_options(BackwardInput, subject=ARGUMENT, predicate=ARGUMENT, object=OBJECT)
@mabos_options
def backward(out: Session, *, request: BackwardInput) -> None:
    result = out.run("infer_backward", request, ProofOutcome)
    human: list[Any] = [render.done("proved") if result.proved else render.note("not proved")]
    for proof in result.proofs[:3]:
        tree = Tree("proof")
        _proof_tree(proof, tree)
        human.append(tree)
    for gap in result.gaps:
        human.append(render.note(f"knowledge gap: {json.dumps(gap.model_dump(mode='json'), ensure_ascii=False)}"))
    out.emit(result, *human, _cut(result.note))


@infer.command("abduce", help=example(
    "Hypotheses that would explain an observation, ranked by (supported / all conditions) x confidence factor.",
    "mabos infer abduce --agent a acme isTaxable true",
))  # fmt: skip
@request_options(AbduceInput, subject=ARGUMENT, predicate=ARGUMENT, object=OBJECT,
                 limit=Cli(hidden=True, value=MAX_HYPOTHESES))  # every hypothesis  # fmt: skip
@mabos_options
def abduce(out: Session, *, request: AbduceInput) -> None:
    found = out.run("infer_abductive", request, HypothesisList).hypotheses
    rows = [(h.name, round(h.score, 4), len(h.supported), len(h.missing)) for h in found]
    out.emit(found, _table_or("Hypotheses", ("rule", "score", "supported", "missing"), rows,
                              render.note("no rule concludes this")))  # fmt: skip


# ---------------------------------------------------------------------------------------------- checks


@click.group("constraint")
def constraint() -> None:
    """Constraint rules: violated when all their conditions hold."""


@constraint.command("check", help=example(
    "Check the enabled constraints against the facts and their forward closure.",
    "mabos constraint check --agent a",
))  # fmt: skip
@request_options(NoArguments)
@mabos_options
def check(out: Session, *, request: NoArguments) -> None:
    result = out.run("constraint_check", request, ViolationList)
    rows = [(v.severity.value, v.name, v.message) for v in result.violations]
    out.emit(result.violations, _table_or("Violations", ("severity", "rule", "message"), rows,
                                          render.done("no violations")), _cut(result.note))  # fmt: skip


def _table_or(title: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]], empty: Text) -> Table | Text:
    """The rows' table, or the line saying there is nothing when there are no rows."""
    return render.table(title, columns, rows) if rows else empty


def _cut(note: str | None) -> Text | None:
    """The note of a forward closure a bound cut (None when it was complete)."""
    return render.note(f"incomplete: {note}") if note else None


@click.group("policy")
def policy() -> None:
    """Policy rules: actions and escalations that fire on facts plus a context."""


@policy.command("eval", help=example(
    "Evaluate the enabled policies; --context KEY=VALUE adds the triple 'context KEY VALUE' for this run only.",
    "mabos policy eval --agent a --context amount=12000 --context channel=web",
))  # fmt: skip
@request_options(PolicyEvalInput)
@mabos_options
def evaluate(out: Session, *, request: PolicyEvalInput) -> None:
    result = out.run("policy_eval", request, PolicyFiringList)
    rows = [(p.name, p.action, "yes" if p.escalate else "no") for p in result.firings]
    out.emit(result.firings, _table_or("Policies fired", ("rule", "action", "escalate"), rows,
                                       render.note("no policy fired")), _cut(result.note))  # fmt: skip


@click.group("knowledge")
def knowledge() -> None:
    """Questions answered by every reasoning method at once."""


@knowledge.command("explain", help=example(
    "Answer a question from direct facts, the forward closure, backward proofs and abduction, "
    "saying which method found what.",
    "mabos knowledge explain --agent a 'Is acme taxable?'",
))  # fmt: skip
@request_options(KnowledgeInput, question=ARGUMENT, limit=Cli(hidden=True))
@mabos_options
def explain(out: Session, *, request: KnowledgeInput) -> None:
    answer = out.run("knowledge_explain", request, KnowledgeAnswer)
    question = request.question
    rows = [(f.method, f.subject, f.predicate, f.object, f.confidence) for f in answer.findings]
    none = render.note(f"nothing known about: {', '.join(answer.terms) or question}")
    columns = ("method", "subject", "predicate", "object", "confidence")
    out.emit(answer, _table_or(f"Knowledge: {question}", columns, rows, none), _cut(answer.note))


GROUPS = [rule, infer, constraint, policy, knowledge]

__all__ = ["GROUPS"]
