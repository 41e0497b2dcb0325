"""Rule files: JSON or YAML holding a list of rules, or ``{"rules": [...]}``.

``load_rules`` returns the entries as plain mappings (the caller adds uids and owners and validates them,
e.g. with :func:`~reasoning.rules.build_rule`); ``dump_rules`` writes rules so that loading the text
and validating each entry gives the same rules back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml

from kg.errors import InputError
from kg.limits import load_yaml, read_text_bounded
from kg.models import Rule

_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}


def load_rules(path: Path) -> list[dict[str, Any]]:
    """The rule entries of a JSON or YAML file (by its suffix).

    Raises:
        InputError: the file cannot be read, does not parse, or does not hold a list of mappings.
    """
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise InputError("path", f"{path}: a rule file ends in .json, .yaml or .yml")
    text = read_text_bounded(path, "path")  # at most 100 MB, read in chunks
    return rules_from_data(_parse(text, fmt, "path", f"{path}: "))


def parse_rules(text: str, fmt: str, *, field: str = "document") -> list[dict[str, Any]]:
    """The rule entries of a JSON or YAML document (what a rule file holds).

    Raises:
        InputError: naming ``field`` (or ``format``): an unknown format, text that does not parse, or
            content that is not a list of mappings.
    """
    if fmt not in ("json", "yaml"):
        raise InputError("format", f"must be json or yaml, got {fmt!r}")
    return rules_from_data(_parse(text, fmt, field, ""))


def _parse(text: str, fmt: str, field: str, where: str) -> Any:
    if fmt == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(field, f"{where}not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    try:
        return load_yaml(text)  # yaml.safe_load, refused when aliases expand it far past its size
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise InputError(field, f"{where}not valid YAML{line}: {problem}") from exc


def rules_from_data(data: Any) -> list[dict[str, Any]]:
    """The rule entries of parsed file content: a list of mappings, or a mapping with a ``rules`` list.

    Raises:
        InputError: the content has another shape.
    """
    if isinstance(data, dict):
        if "rules" not in data:
            raise InputError("rules", "a rule file holds a list of rules or a mapping with a 'rules' list")
        data = data["rules"]
    if not isinstance(data, list):
        raise InputError("rules", f"must be a list of rules, got {type(data).__name__}")
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or not all(isinstance(k, str) for k in entry):
            raise InputError(f"rules[{i}]", f"must be a mapping of rule fields, got {type(entry).__name__}")
    return data


def dump_rules(rules: Sequence[Rule], fmt: Literal["json", "yaml"] = "yaml") -> str:
    """The rules as a ``{"rules": [...]}`` JSON or YAML document (every field, JSON-typed values).

    Raises:
        InputError: ``fmt`` is neither ``json`` nor ``yaml``.
    """
    data = {"rules": [rule.model_dump(mode="json") for rule in rules]}
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    raise InputError("fmt", f"must be 'json' or 'yaml', got {fmt!r}")
