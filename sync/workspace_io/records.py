"""The JSON files of the OpenClaw-MABOS layout and the mabos records they hold.

Each function pair maps one file's entries to and from mabos models. The OpenClaw-MABOS names come first
(``id``, ``case_id``, ``stored_at`` ...); fields the original has no name for (``scope``, ``tier``,
``retracted_at`` ...) are added under the mabos model's own names, which the original system ignores.

Sources (kingler/openclaw-mabos and openclaw/openclaw, ``extensions/mabos/src/tools/``):
``memory-tools.ts`` (``memory-store.json``), ``fact-store.ts`` (``facts.json``), ``rule-engine.ts``
(``rules.json``), ``cbr-tools.ts`` (``cases.json``).

Ids: a source id that is already a mabos id of the right kind is kept; any other (``F-001``,
``M-1712345678-ab3x``) becomes a stable mabos id derived from the agent, the kind and the source id
(:func:`import_uid`), so importing the same file twice names the same records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kg.errors import InputError
from kg.ids import PREFIXES, is_id
from kg.models import (
    AGENT_ID_RE,
    Agent,
    Case,
    Fact,
    MemoryItem,
    MemoryStoreKind,
    Relation,
    Rule,
    format_ts,
    infer_object_kind,
)

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PREFIX_KIND = {prefix: kind for kind, prefix in PREFIXES.items()}
#: Names under which each JSON file keeps its entries (cases.json is a bare list in the original).
MEMORY_FILE, FACTS_FILE, RULES_FILE, CASES_FILE = "memory-store.json", "facts.json", "rules.json", "cases.json"
AGENT_FILE, RELATIONS_FILE = "mabos-agent.json", "mabos-relations.json"
#: What export writes for the record fields mabos keeps but the format does not (see docs).
NOT_CARRIED = {"memory": ("accessed_at", "access_count")}


def import_uid(kind: str, agent_id: str, source_id: str) -> str:
    """The mabos uid of a record named ``source_id`` in an agent's files (kept if already a mabos id)."""
    prefix = PREFIXES[kind]
    if is_id(source_id) and source_id.startswith(prefix + "-"):
        return source_id
    digest = int.from_bytes(hashlib.sha256(f"{agent_id}\0{kind}\0{source_id}".encode()).digest()[:16], "big")
    digest >>= 3  # 125 bits: the first character stays 0-7, as in a ULID
    chars = "".join(_ALPHABET[(digest >> shift) & 31] for shift in range(125, -1, -5))
    return f"{prefix}-{chars[-26:]}"


def ref_uid(default_kind: str, agent_id: str, source_id: str) -> str:
    """A reference (``derived_from`` entry ...) as a uid; a mabos id keeps its own kind."""
    if is_id(source_id):
        return source_id
    return import_uid(default_kind, agent_id, source_id)


def content_id(*parts: str) -> str:
    """A source id for a record that has none: its content (so the same content maps to the same uid)."""
    return "content:" + "\0".join(parts)


def kind_of(uid: str) -> str | None:
    """The record kind of a mabos id (``F-...`` -> ``fact``)."""
    return _PREFIX_KIND.get(uid.split("-", 1)[0])


class Entry:
    """One entry of a file: where it is (for error messages) and its raw mapping."""

    def __init__(self, file: str, label: str, data: Any) -> None:
        if not isinstance(data, dict):
            raise InputError(f"{file}: {label}", f"must be a JSON object, got {type(data).__name__}")
        self.file, self.label, self.data = file, label, data

    def error(self, field: str, rule: str) -> InputError:
        """An InputError naming the file, the entry and the field."""
        return InputError(f"{self.file}: {self.label}.{field}", rule)

    def get(self, *names: str) -> Any:
        """The first of ``names`` present and not null."""
        for name in names:
            if self.data.get(name) is not None:
                return self.data[name]
        return None

    def text(self, name: str) -> str | None:
        """A string field (or None); anything else is an error."""
        value = self.data.get(name)
        if value is not None and not isinstance(value, str):
            raise self.error(name, f"must be a string, got {type(value).__name__}")
        return value

    def strings(self, name: str) -> list[str]:
        """A list of strings (a single string counts as a one-item list)."""
        value = self.data.get(name)
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(name, "must be a list of strings")
        return list(value)


def _present(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


# ------------------------------------------------------------------------------------ memory-store.json


def memory_to_json(items: list[MemoryItem]) -> dict[str, Any]:
    """``memory-store.json``: ``{working, short_term, long_term, version}`` with mabos extras per item."""
    stores: dict[str, list[dict[str, Any]]] = {kind.value: [] for kind in MemoryStoreKind}
    for item in items:
        data = item.model_dump(mode="json")
        entry = {"id": data.pop("uid"), "content": data.pop("content"), "type": data.pop("type"),
                 "importance": data.pop("importance"), "source": data.pop("source"), "tags": data.pop("tags"),
                 "created_at": data.pop("created_at"), "accessed_at": data.pop("accessed_at"),
                 "access_count": data.pop("access_count")}  # fmt: skip
        data.pop("store")
        data.pop("agent_id")
        stores[item.store.value].append(entry | data)
    return {**stores, "version": len(items)}


def memory_entries(file: str, data: Any) -> list[tuple[Entry, str]]:
    """The entries of ``memory-store.json`` with the store each sits in."""
    if not isinstance(data, dict):
        raise InputError(file, "must be a JSON object with working, short_term and long_term lists")
    found = []
    for kind in MemoryStoreKind:
        items = data.get(kind.value) or []
        if not isinstance(items, list):
            raise InputError(f"{file}: {kind.value}", "must be a list of memory items")
        found += [(Entry(file, f"{kind.value}[{i}]", raw), kind.value) for i, raw in enumerate(items)]
    return found


def memory_fields(entry: Entry, store: str, agent_id: str) -> dict[str, Any]:
    """A memory entry as MemoryItem fields (uid mapped, references mapped)."""
    data = dict(entry.data)
    content = entry.text("content") or ""
    source_id = entry.text("id") or content_id(content)
    data.pop("id", None)
    data.pop("agent_id", None)
    for dropped in NOT_CARRIED["memory"]:  # local usage statistics: never replicated
        data.pop(dropped, None)
    derived = [ref_uid("memory", agent_id, ref) for ref in entry.strings("derived_from")]
    return _present({**data, "uid": import_uid("memory", agent_id, source_id), "agent_id": agent_id,
                     "store": store, "derived_from": derived})  # fmt: skip


# ------------------------------------------------------------------------------------ facts.json


def _versioned(key: str, models: list[Fact] | list[Rule]) -> dict[str, Any]:
    """``{key: [...], version}``: each record's fields with ``uid`` as ``id`` and no ``agent_id``."""
    entries = []
    for model in models:
        data = model.model_dump(mode="json")
        data.pop("agent_id")
        entries.append({"id": data.pop("uid"), **data})
    return {key: entries, "version": len(entries)}


def _listed(file: str, data: Any, key: str) -> list[Entry]:
    """The entries of a ``{key: [...]}`` file, or an error naming the file."""
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError(file, f"must be a JSON object with a {key!r} list")
    return [Entry(file, f"{key}[{i}]", raw) for i, raw in enumerate(items)]


def facts_to_json(facts: list[Fact]) -> dict[str, Any]:
    """``facts.json``: ``{facts, version}``; retracted facts keep ``retracted_at``."""
    return _versioned("facts", facts)


def fact_entries(file: str, data: Any) -> list[Entry]:
    """The entries of ``facts.json``."""
    return _listed(file, data, "facts")


def fact_fields(entry: Entry, agent_id: str) -> dict[str, Any]:
    """A fact entry as Fact fields (defaults of the original filled in)."""
    data = dict(entry.data)
    triple = [str(entry.get(k) or "") for k in ("subject", "predicate", "object")]
    source_id = entry.text("id") or content_id(*triple)
    data.pop("id", None)
    rule = entry.text("rule_id")
    data.update({
        "uid": import_uid("fact", agent_id, source_id), "agent_id": agent_id,
        "derived_from": [ref_uid("fact", agent_id, ref) for ref in entry.strings("derived_from")],
        "rule_id": import_uid("rule", agent_id, rule) if rule else None,
    })  # fmt: skip
    data.setdefault("confidence", 1.0)
    data.setdefault("source", "agent")
    if data.get("object_kind") is None and isinstance(data.get("object"), str):
        data["object_kind"] = infer_object_kind(data["object"])
    data.setdefault("updated_by", agent_id)
    if data.get("updated_at") is None:
        data["updated_at"] = data.get("created_at")
    return _present(data)


# ------------------------------------------------------------------------------------ rules.json


def rules_to_json(rules: list[Rule]) -> dict[str, Any]:
    """``rules.json``: ``{rules, version}``."""
    return _versioned("rules", rules)


def rule_entries(file: str, data: Any) -> list[Entry]:
    """The entries of ``rules.json``."""
    return _listed(file, data, "rules")


def _pattern(raw: Any, index: int) -> Any:
    """An original condition or conclusion: an omitted subject or object is a fresh variable."""
    if not isinstance(raw, dict):
        return raw
    data = {k: v for k, v in raw.items() if k != "variable" and v is not None}
    variable = raw.get("variable")
    if "object" not in data and isinstance(variable, str) and variable:
        data["object"] = variable if variable.startswith("?") else f"?{variable}"
    data.setdefault("subject", f"?s{index}")
    data.setdefault("object", f"?o{index}")
    return data


def rule_fields(entry: Entry, agent_id: str) -> dict[str, Any]:
    """A rule entry as Rule fields."""
    data = dict(entry.data)
    source_id = entry.text("id") or content_id(str(entry.get("name") or ""))
    data.pop("id", None)
    conditions = data.get("conditions")
    if isinstance(conditions, list):
        data["conditions"] = [_pattern(c, i) for i, c in enumerate(conditions)]
    if isinstance(data.get("conclusion"), dict):
        data["conclusion"] = _pattern(data["conclusion"], 0)
    data.update({"uid": import_uid("rule", agent_id, source_id), "agent_id": agent_id})
    return _present(data)


# ------------------------------------------------------------------------------------ cases.json


def cases_to_json(cases: list[Case]) -> list[dict[str, Any]]:
    """``cases.json``: a list of ``{case_id, situation, solution, outcome, stored_at}`` (+ ``scope``).

    ``outcome.lessons`` is a string in the original: one lesson is written as a string, several as a list.
    """
    entries = []
    for case in cases:
        data = case.model_dump(mode="json")
        lessons = data["outcome"].pop("lessons")
        if len(lessons) == 1:
            data["outcome"]["lessons"] = lessons[0]
        elif lessons:
            data["outcome"]["lessons"] = lessons
        keys = {"case_id": "uid", "situation": "situation", "solution": "solution", "outcome": "outcome",
                "stored_at": "created_at", "scope": "scope"}  # fmt: skip
        entries.append({name: data[key] for name, key in keys.items()})
    return entries


def case_entries(file: str, data: Any) -> list[Entry]:
    """The entries of ``cases.json`` (a list, or ``{"cases": [...]}``)."""
    items = data.get("cases") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InputError(file, "must be a JSON list of cases")
    return [Entry(file, f"[{i}]", raw) for i, raw in enumerate(items)]


def case_fields(entry: Entry, agent_id: str) -> dict[str, Any]:
    """A case entry as Case fields (``stored_at`` is the creation time, plan ids are mapped)."""
    data = {k: v for k, v in entry.data.items() if k not in ("case_id", "stored_at", "id")}
    situation = data.get("situation")
    source_id = entry.text("case_id") or entry.text("id") or content_id(repr(situation))
    solution = data.get("solution")
    if isinstance(solution, dict) and isinstance(solution.get("plan_id"), str) and solution["plan_id"]:
        data["solution"] = {**solution, "plan_id": ref_uid("plan", agent_id, solution["plan_id"])}
    outcome = data.get("outcome")
    if isinstance(outcome, dict) and isinstance(outcome.get("lessons"), str):
        data["outcome"] = {**outcome, "lessons": [outcome["lessons"]]}
    data.update({"uid": import_uid("case", agent_id, source_id), "agent_id": agent_id,
                 "created_at": entry.get("stored_at", "created_at")})  # fmt: skip
    return _present(data)


# ------------------------------------------------------------------------------------ mabos extras


def agent_to_json(agent: Agent) -> dict[str, Any]:
    """``mabos-agent.json``: the agent record."""
    return agent.model_dump(mode="json")


def agent_fields(data: Any, agent_id: str) -> dict[str, Any]:
    """Agent fields from ``mabos-agent.json`` or the original's ``agent.json`` (name and role only)."""
    fields: dict[str, Any] = {"uid": import_uid("agent", agent_id, agent_id), "agent_id": agent_id, "name": agent_id}
    if isinstance(data, dict):
        if "uid" in data:  # mabos-agent.json: the whole record
            return {**data, "agent_id": agent_id}
        fields.update({k: data[k] for k in ("name", "role") if isinstance(data.get(k), str) and data[k].strip()})
    return fields


def relations_to_json(relations: list[Relation]) -> dict[str, Any]:
    """``mabos-relations.json``: ``{relations}``."""
    return {"relations": [r.model_dump(mode="json") for r in relations]}


def relation_uid(agent_id: str, kind: str, source_uid: str, target_uid: str) -> str:
    """A stable uid for a link read from the original's Markdown (Desire:, Parent:, ``via``)."""
    return import_uid("relation", agent_id, f"{kind}\0{source_uid}\0{target_uid}")


def valid_agent_dir(name: str) -> bool:
    """Whether a directory name is a valid agent id."""
    return bool(AGENT_ID_RE.match(name))


def stamp(value: datetime | None) -> str | None:
    """A timestamp as JSON text."""
    return format_ts(value) if value is not None else None
