"""Rules of the agents: create, list, toggle, delete, import and export, scope-checked.

Every rule is validated by :class:`~kg.models.Rule` and :func:`reasoning.rules.check_rule` before anything is
written; an import validates every rule of the document first and stores none if one is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models import Rule, RuleType, agent_scope, parse
from kg.ports import GraphStore
from kg.scopes import ScopePolicy
from reasoning.rules import check_rule, dump_rules, load_rules, parse_rules
from reasoning.rules.patterns import with_text_patterns

#: Rules of one import.
MAX_IMPORT_RULES = 1_000


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

    def create(self, agent_id: str, **fields: Any) -> Rule:
        """Validate and store one rule; InputError naming the field if it is refused (nothing is stored)."""
        rule = self._build(agent_id, fields)
        if self.store.rules.get_many([rule.uid]):
            raise InputError("uid", f"a rule {rule.uid!r} already exists")
        return self.store.rules.put(rule, now=self.clock.now())

    def import_file(self, agent_id: str, path: Path) -> list[Rule]:
        """Every rule of a JSON or YAML file (by its suffix), as :meth:`import_rules`."""
        return self.import_rules(agent_id, load_rules(path))

    def import_document(self, agent_id: str, text: str, fmt: Literal["json", "yaml"]) -> list[Rule]:
        """Every rule of a JSON or YAML document (what :meth:`export` writes), as :meth:`import_rules`."""
        return self.import_rules(agent_id, parse_rules(text, fmt))

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

    def list(self, agent_id: str, *, type: str | None = None, enabled: bool | None = None,
             domain: str | None = None) -> list[Rule]:  # fmt: skip
        """Rules the agent can read, oldest first."""
        kind = rule_type(type) if type is not None else None
        return self.store.rules.list(scopes=self.scopes.readable(agent_id), type=kind, enabled=enabled, domain=domain)

    def get(self, agent_id: str, uid: str) -> Rule:
        """One rule the agent can read."""
        rule = self.store.rules.get_many([uid]).get(uid)
        if rule is None or rule.scope not in self.scopes.readable(agent_id):
            raise NotFoundError(f"rule: no rule {uid!r} visible to {agent_id!r}")
        return rule

    def toggle(self, agent_id: str, uid: str, *, enabled: bool | None = None) -> Rule:
        """Enable or disable a rule (flip it when ``enabled`` is not given)."""
        rule = self.get(agent_id, uid)
        self.scopes.check_write(agent_id, rule.scope)
        state = (not rule.enabled) if enabled is None else enabled
        return self.store.rules.put(rule.model_copy(update={"enabled": state}), now=self.clock.now(), by=agent_id)

    def delete(self, agent_id: str, uid: str) -> str:
        """Delete a rule the agent can write."""
        rule = self.get(agent_id, uid)
        self.scopes.check_write(agent_id, rule.scope)
        self.store.rules.delete([uid], by=agent_id)
        return uid

    def export(self, agent_id: str, fmt: Literal["json", "yaml"] = "json") -> str:
        """The agent's readable rules as a JSON or YAML document that :meth:`import_document` reads back."""
        if fmt not in ("json", "yaml"):
            raise InputError("format", f"must be json or yaml, got {fmt!r}")
        return dump_rules(self.list(agent_id), fmt)


def rule_type(value: str) -> RuleType:
    """A rule kind by name; InputError naming ``type`` otherwise."""
    try:
        return RuleType(value)
    except ValueError:
        raise InputError("type", f"must be inference, constraint or policy, got {value!r}") from None


__all__ = ["MAX_IMPORT_RULES", "RuleService", "rule_type"]
