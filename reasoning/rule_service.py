"""Rules of the agents: create, list, toggle, delete, import and export, scope-checked.

Each use case takes its request (:mod:`reasoning.requests`), or the request's fields as keywords. Every rule is
validated by :class:`~kg.models.Rule` and :func:`reasoning.rules.check_rule` before anything is written; an import
validates every rule of the document first and stores none if one is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models import Rule, agent_scope, parse
from kg.models.request import fields_of, requested
from kg.ports import GraphStore
from kg.scopes import ScopePolicy
from reasoning.requests import (
    MAX_IMPORT_RULES,
    ConclusionInput,
    ConditionInput,
    RuleCreateRequest,
    RuleDeleteRequest,
    RuleExportRequest,
    RuleImportRequest,
    RuleListRequest,
    RuleToggleRequest,
)
from reasoning.rules import check_rule, dump_rules, load_rules, parse_rules
from reasoning.rules.patterns import parse_pattern, with_text_patterns


class RuleExport(BaseModel):
    """The agent's readable rules as one document."""

    format: Literal["json", "yaml"] = Field(description="The document's format.")
    document: str = Field(description="The rules as {'rules': [...]}: what rule_import and 'rule create --file' read.")
    count: int = Field(description="How many rules the document holds.")


class RuleService:
    """Rules of the agents, scope-checked."""

    def __init__(self, store: GraphStore, scopes: ScopePolicy, clock: Clock) -> None:
        self.store = store
        self.scopes = scopes
        self.clock = clock

    def _build(self, agent_id: str, data: Mapping[str, Any]) -> Rule:
        self.scopes.require_agent(agent_id)
        fields = {k: v for k, v in data.items() if v is not None}
        for own in ("uid", "agent_id", "created_at"):
            if own in fields and own != "uid":
                raise InputError(own, "is set by mabos, not by the caller")
        rule = parse(Rule, {"uid": fields.pop("uid", None) or new_id("rule"), "agent_id": agent_id,
                            "created_at": self.clock.now(), **fields})  # fmt: skip
        check_rule(rule)
        self.scopes.check_write(agent_id, rule.scope)
        return rule

    def create(self, agent_id: str, request: RuleCreateRequest | None = None, /, **fields: Any) -> Rule:
        """Validate and store one rule (a request, or its fields as keywords; a condition or the conclusion may be
        text, ``"?x hasRevenue gt 1000"``); InputError naming the field if it is refused (nothing is stored)."""
        given = requested(RuleCreateRequest, request, fields)
        data = fields_of(given, RuleCreateRequest)
        data["conditions"] = [_pattern(c, f"conditions[{i}]", operators=True) for i, c in enumerate(given.conditions)]
        if given.conclusion is not None:
            data["conclusion"] = _pattern(given.conclusion, "conclusion", operators=False)
        rule = self._build(agent_id, data)
        if self.store.rules.get_many([rule.uid]):
            raise InputError("uid", f"a rule {rule.uid!r} already exists")
        return self.store.rules.put(rule, now=self.clock.now())

    def import_file(self, agent_id: str, path: Path) -> list[Rule]:
        """Every rule of a JSON or YAML file (by its suffix), as :meth:`import_rules`."""
        return self.import_rules(agent_id, load_rules(path))

    def import_document(self, agent_id: str, text: str | RuleImportRequest,
                        fmt: Literal["json", "yaml"] | None = None) -> list[Rule]:  # fmt: skip
        """Every rule of a JSON or YAML document (a request, or its text and format; what :meth:`export` writes),
        as :meth:`import_rules`."""
        given = requested(RuleImportRequest, text, {"format": fmt}, first="document")
        return self.import_rules(agent_id, parse_rules(given.document, given.format))

    def import_rules(self, agent_id: str, entries: list[dict[str, Any]]) -> list[Rule]:
        """Rule entries (of a file or document), all validated before any is stored.

        They may come from :meth:`export` (of any agent or workspace): each rule gets a new uid, the
        importing agent as owner and the time of import; its scope is kept unless it is another agent's
        private scope (then it becomes the importer's). At most :data:`MAX_IMPORT_RULES` rules.
        """
        if len(entries) > MAX_IMPORT_RULES:
            raise InputError("rules", f"must hold at most {MAX_IMPORT_RULES} rules, got {len(entries)}")
        rules = []
        own = agent_scope(agent_id)
        for index, raw in enumerate(entries):
            data = {k: v for k, v in raw.items() if k not in ("uid", "agent_id", "created_at")}
            if str(data.get("scope", "")).startswith("agent:") and data["scope"] != own:
                data.pop("scope")
            try:
                rules.append(self._build(agent_id, with_text_patterns(data)))
            except InputError as exc:
                raise InputError(f"rules[{index}].{exc.field}", exc.rule) from None
        return [self.store.rules.put(rule, now=self.clock.now()) for rule in rules]

    def list(self, agent_id: str, request: RuleListRequest | None = None, /, **fields: Any) -> list[Rule]:
        """Rules the agent can read, oldest first (a request, or its fields as keywords: ``type``, ``enabled``,
        ``domain``)."""
        given = requested(RuleListRequest, request, fields)
        return self.store.rules.list(scopes=self.scopes.readable(agent_id), type=given.type, enabled=given.enabled,
                                     domain=given.domain)  # fmt: skip

    def get(self, agent_id: str, uid: str) -> Rule:
        """One rule the agent can read."""
        rule = self.store.rules.get_many([uid]).get(uid)
        if rule is None or rule.scope not in self.scopes.readable(agent_id):
            raise NotFoundError(f"rule: no rule {uid!r} visible to {agent_id!r}")
        return rule

    def toggle(self, agent_id: str, uid: str | RuleToggleRequest, *, enabled: bool | None = None) -> Rule:
        """Enable or disable a rule (a request, or its uid and state); flip it when no state is given."""
        given = requested(RuleToggleRequest, uid, {"enabled": enabled}, first="rule_id")
        rule = self.get(agent_id, given.rule_id)
        self.scopes.check_write(agent_id, rule.scope)
        state = (not rule.enabled) if given.enabled is None else given.enabled
        return self.store.rules.put(rule.model_copy(update={"enabled": state}), now=self.clock.now(), by=agent_id)

    def delete(self, agent_id: str, uid: str | RuleDeleteRequest) -> str:
        """Delete a rule the agent can write (a request, or its uid)."""
        rule = self.get(agent_id, requested(RuleDeleteRequest, uid, {}, first="rule_id").rule_id)
        self.scopes.check_write(agent_id, rule.scope)
        self.store.rules.delete([rule.uid], by=agent_id)
        return rule.uid

    def export(self, agent_id: str, fmt: Literal["json", "yaml"] | RuleExportRequest = "json") -> RuleExport:
        """The agent's readable rules as a JSON or YAML document that :meth:`import_document` reads back (a request,
        or the format)."""
        given = requested(RuleExportRequest, fmt, {}, first="format")
        found = self.list(agent_id)
        return RuleExport(format=given.format, document=dump_rules(found, given.format), count=len(found))


def _pattern(value: ConditionInput | ConclusionInput | str, field: str, *, operators: bool) -> dict[str, str]:
    """A condition or conclusion as its fields: text parsed (``"?x hasRevenue gt 1000"``), an object as it is."""
    if isinstance(value, str):
        return parse_pattern(value, field, operators=operators)
    return value.model_dump(mode="json")


__all__ = ["MAX_IMPORT_RULES", "RuleExport", "RuleService"]
