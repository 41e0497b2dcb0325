"""``mabos rule ...``, ``infer ...``, ``constraint check``, ``policy eval`` and ``knowledge explain``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import click
from rich.text import Text
from rich.tree import Tree

from cli import render
from cli.common import Session, agent_option, example, mabos_options, scope_option
from cli.tools.inference import MAX_HYPOTHESES, HypothesisList, ProofOutcome, ProofStep
from cli.tools.registry import run
from cli.tools.rules import ImportedRules, PolicyFiringList, RuleList, ViolationList
from cli.tools.rules_admin import RuleDeleted, RuleExport
from kg.errors import InputError
from kg.limits import read_text_bounded
from kg.models import Rule, RuleType, Severity
from reasoning.service import DEFAULT_LIMITS, ForwardReport, KnowledgeAnswer


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


def _rule_file(path: Path) -> tuple[str, str]:
    """The text and format (by suffix) of a rule file; InputError naming ``file`` when it cannot be read."""
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError("file", f"{path}: a rule file ends in .json, .yaml or .yml")
    return read_text_bounded(path, "file"), fmt  # at most 100 MB, read in chunks


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
@agent_option
@click.option("--file", "file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None)
@click.option("--name", default=None)
@click.option("--type", "kind", type=click.Choice([t.value for t in RuleType]), default="inference", show_default=True)
@click.option("--if", "conditions", multiple=True, metavar="PATTERN", help="A condition (repeatable).")
@click.option("--then", "conclusion", default=None, metavar="PATTERN", help="The conclusion (inference rules).")
@click.option("--description", default=None)
@click.option("--confidence-factor", type=float, default=None, help="0..1 (default 0.9).")
@click.option("--message", default=None, help="Violation message (constraints); ?variables are filled in.")
@click.option("--severity", type=click.Choice([s.value for s in Severity]), default=None)
@click.option("--action", default=None, help="What a policy asks for when it fires.")
@click.option("--escalate", is_flag=True, default=False, help="A firing policy escalates.")
@click.option("--domain", default=None)
@click.option("--disabled", is_flag=True, default=False, help="Store the rule disabled.")
@scope_option
@mabos_options
def create(out: Session, *, agent: str, file: Path | None, name: str | None, kind: str,
           conditions: tuple[str, ...], conclusion: str | None, description: str | None,
           confidence_factor: float | None, message: str | None, severity: str | None, action: str | None,
           escalate: bool, domain: str | None, disabled: bool, scope: str | None) -> None:  # fmt: skip
    if file is not None:
        if name or conditions or conclusion:
            raise InputError("file", "give either --file or --name/--if/--then, not both")
        document, fmt = _rule_file(file)  # reading a file is the CLI's part; storing goes through the registry
        arguments = {"agent_id": agent, "document": document, "format": fmt}
        imported = out.run("rule_import", arguments, ImportedRules)
        created = imported.rules
    else:
        if not name:
            raise InputError("name", "is required (or give --file)")
        fields: dict[str, Any] = {
            "agent_id": agent, "name": name, "type": kind, "description": description,
            "confidence_factor": confidence_factor, "violation_message": message, "severity": severity,
            "action": action, "escalate": escalate, "domain": domain, "scope": scope, "enabled": not disabled,
            "conditions": list(conditions), "conclusion": conclusion,
        }  # fmt: skip
        given = {key: value for key, value in fields.items() if value is not None}
        created = [out.run("rule_create", given, Rule)]
    out.emit(created, render.done(f"created {len(created)} rule(s)"), _rules_table(created))


@rule.command(
    "list", help=example("Rules the agent can read, oldest first.", "mabos rule list --agent a --type inference --json")
)
@agent_option
@click.option("--type", "kind", type=click.Choice([t.value for t in RuleType]), default=None)
@click.option("--enabled/--disabled", "enabled", default=None, help="Only enabled (or disabled) rules.")
@click.option("--domain", default=None)
@mabos_options
def list_(out: Session, *, agent: str, kind: str | None, enabled: bool | None, domain: str | None) -> None:
    arguments = {"agent_id": agent, "type": kind, "enabled": enabled, "domain": domain}
    found = out.run("rule_list", arguments, RuleList).rules
    out.emit(found, _rules_table(found) if found else render.note("no rules"))


@rule.command(
    "toggle",
    help=example(
        "Enable or disable a rule (flips it unless --on or --off is given).", "mabos rule toggle --agent a R-01J..."
    ),
)
@agent_option
@click.argument("uid", metavar="RULE_ID")
@click.option("--on/--off", "enabled", default=None, help="Set the state instead of flipping it.")
@mabos_options
def toggle(out: Session, *, agent: str, uid: str, enabled: bool | None) -> None:
    changed = out.run("rule_toggle", {"agent_id": agent, "rule_id": uid, "enabled": enabled}, Rule)
    out.emit(changed, render.done(f"{changed.uid} {'enabled' if changed.enabled else 'disabled'}"))


@rule.command("delete", help=example("Delete a rule for good ('rule toggle' only disables it).",
                                     "mabos rule delete --agent a R-01J..."))  # fmt: skip
@agent_option
@click.argument("uid", metavar="RULE_ID")
@mabos_options
def delete(out: Session, *, agent: str, uid: str) -> None:
    gone = out.run("rule_delete", {"agent_id": agent, "rule_id": uid}, RuleDeleted)
    out.emit(gone, render.done(f"{gone.uid} ({gone.rule.name}) deleted"))


@rule.command(
    "export",
    help=example(
        "Print the agent's rules as JSON or YAML; 'rule create --file' reads them back (new uids, the importer "
        "as owner). With --json the document comes inside a JSON object (format, document, count).",
        "mabos rule export --agent a --format yaml > rules.yaml",
    ),
)
@agent_option
@click.option("--format", "fmt", type=click.Choice(["json", "yaml"]), default="json", show_default=True)
@mabos_options
def export(out: Session, *, agent: str, fmt: str) -> None:
    exported = out.run("rule_export", {"agent_id": agent, "format": fmt}, RuleExport)
    if out.as_json:
        out.emit(exported)
    else:
        click.echo(exported.document, nl=False)


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
@agent_option
@click.option("--persist", is_flag=True, default=False, help="Store the derived facts (and retract stale ones).")
@click.option("--max-iterations", type=int, default=10, show_default=True)
@click.option("--max-derived", type=int, default=None, help="Stop after deriving this many facts (default and "
              f"most: mabos.toml [reasoning] max_derived, else {DEFAULT_LIMITS.max_derived}).")  # fmt: skip
@click.option("--max-join", type=int, default=None, help="Stop after examining this many candidate facts "
              f"(default and most: [reasoning] max_join, else {DEFAULT_LIMITS.max_join}).")  # fmt: skip
@click.option("--offset", type=int, default=0, show_default=True, help="Show the derived facts from here.")
@click.option("--limit", type=int, default=1000, show_default=True, help="Show at most this many (1..10000).")
@mabos_options
def forward(out: Session, *, agent: str, persist: bool, max_iterations: int, max_derived: int | None,
            max_join: int | None, offset: int, limit: int) -> None:  # fmt: skip
    arguments = {"agent_id": agent, "persist": persist, "max_iterations": max_iterations, "max_derived": max_derived,
                 "max_join": max_join, "offset": offset, "limit": limit}  # fmt: skip
    # this process is the CLI's own: the closure may pause its garbage collector (reasoning.rules.forward_chain)
    report = cast(ForwardReport, run(replace(out.tools(), tune_process=True), "infer_forward", arguments))
    rows = [
        (d.subject, d.predicate, d.object, round(d.confidence, 4), d.rule_name, d.uid or "") for d in report.derived
    ]
    stopped = "" if report.fixpoint else f" (stopped by {report.stopped_by})"
    summary = (f"{report.total_derived} derived from {report.facts} facts and {report.rules} rules in "
               f"{report.iterations} iteration(s){stopped}")  # fmt: skip
    if persist:
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
@agent_option
@click.argument("subject")
@click.argument("predicate")
@click.argument("obj", metavar="OBJECT")
@click.option("--max-depth", type=int, default=5, show_default=True)
@mabos_options
def backward(out: Session, *, agent: str, subject: str, predicate: str, obj: str, max_depth: int) -> None:
    arguments = {"agent_id": agent, "subject": subject, "predicate": predicate, "object": obj, "max_depth": max_depth}
    result = out.run("infer_backward", arguments, ProofOutcome)
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
@agent_option
@click.argument("subject")
@click.argument("predicate")
@click.argument("obj", metavar="OBJECT")
@mabos_options
def abduce(out: Session, *, agent: str, subject: str, predicate: str, obj: str) -> None:
    arguments = {"agent_id": agent, "subject": subject, "predicate": predicate, "object": obj,
                 "limit": MAX_HYPOTHESES}  # fmt: skip
    found = out.run("infer_abductive", arguments, HypothesisList).hypotheses
    rows = [(h.name, round(h.score, 4), len(h.supported), len(h.missing)) for h in found]
    out.emit(found, render.table("Hypotheses", ("rule", "score", "supported", "missing"), rows)
             if found else render.note("no rule concludes this"))  # fmt: skip


# ---------------------------------------------------------------------------------------------- checks


@click.group("constraint")
def constraint() -> None:
    """Constraint rules: violated when all their conditions hold."""


@constraint.command("check", help=example(
    "Check the enabled constraints against the facts and their forward closure.",
    "mabos constraint check --agent a",
))  # fmt: skip
@agent_option
@mabos_options
def check(out: Session, *, agent: str) -> None:
    result = out.run("constraint_check", {"agent_id": agent}, ViolationList)
    found = result.violations
    rows = [(v.severity.value, v.name, v.message) for v in found]
    out.emit(found, render.table("Violations", ("severity", "rule", "message"), rows)
             if found else render.done("no violations"), _cut(result.note))  # fmt: skip


def _cut(note: str | None) -> Text | None:
    """The note of a forward closure a bound cut (None when it was complete)."""
    return render.note(f"incomplete: {note}") if note else None


@click.group("policy")
def policy() -> None:
    """Policy rules: actions and escalations that fire on facts plus a context."""


def _context(pairs: tuple[str, ...]) -> dict[str, str]:
    context: dict[str, str] = {}
    for index, pair in enumerate(pairs):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"context[{index}]", f"must be KEY=VALUE, got {pair!r}")
        context[key.strip()] = value
    return context


@policy.command("eval", help=example(
    "Evaluate the enabled policies; --context KEY=VALUE adds the triple 'context KEY VALUE' for this run only.",
    "mabos policy eval --agent a --context amount=12000 --context channel=web",
))  # fmt: skip
@agent_option
@click.option("--context", "pairs", multiple=True, metavar="KEY=VALUE")
@mabos_options
def evaluate(out: Session, *, agent: str, pairs: tuple[str, ...]) -> None:
    arguments = {"agent_id": agent, "context": _context(pairs)}
    result = out.run("policy_eval", arguments, PolicyFiringList)
    found = result.firings
    rows = [(p.name, p.action, "yes" if p.escalate else "no") for p in found]
    out.emit(found, render.table("Policies fired", ("rule", "action", "escalate"), rows)
             if found else render.note("no policy fired"), _cut(result.note))  # fmt: skip


@click.group("knowledge")
def knowledge() -> None:
    """Questions answered by every reasoning method at once."""


@knowledge.command("explain", help=example(
    "Answer a question from direct facts, the forward closure, backward proofs and abduction, "
    "saying which method found what.",
    "mabos knowledge explain --agent a 'Is acme taxable?'",
))  # fmt: skip
@agent_option
@click.argument("question")
@mabos_options
def explain(out: Session, *, agent: str, question: str) -> None:
    answer = out.run("knowledge_explain", {"agent_id": agent, "question": question}, KnowledgeAnswer)
    rows = [(f.method, f.subject, f.predicate, f.object, f.confidence) for f in answer.findings]
    out.emit(answer, render.table(f"Knowledge: {question}", ("method", "subject", "predicate", "object",
                                                              "confidence"), rows)
             if rows else render.note(f"nothing known about: {', '.join(answer.terms) or question}"),
             _cut(answer.note))  # fmt: skip


GROUPS = [rule, infer, constraint, policy, knowledge]

__all__ = ["GROUPS"]
