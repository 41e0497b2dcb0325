"""Rule patterns written as text: ``"?x hasRevenue gt $50,000"`` -> subject, predicate, operator, object.

The same text is accepted wherever a rule is written by hand: ``mabos rule create --if/--then``, the rule tools'
string conditions and the conditions and conclusion of a rule file (``mabos rule create --file``), which may mix
text and the ``{"subject": ..., "predicate": ..., "operator": ..., "object": ...}`` form that ``rule export`` writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kg.errors import InputError
from kg.models import Operator

#: Operator symbols and their names.
SYMBOLS = {"=": "eq", "==": "eq", "!=": "ne", ">": "gt", "<": "lt", ">=": "gte", "<=": "lte", "~": "contains"}
_OPERATORS = {op.value for op in Operator}


def parse_pattern(text: str, field: str, *, operators: bool = True) -> dict[str, str]:
    """``"?x hasRevenue gt $50,000"`` -> subject, predicate, operator, object (the object may hold spaces)."""
    parts = text.split(maxsplit=2)
    if len(parts) < 3:
        raise InputError(
            field, f"must be 'SUBJECT PREDICATE OBJECT' (optionally an operator before OBJECT), got {text!r}"
        )
    subject, predicate, rest = parts
    pattern = {"subject": subject, "predicate": predicate, "object": rest}
    head, _, tail = rest.partition(" ")
    op = SYMBOLS.get(head, head)
    if operators and op in _OPERATORS and tail.strip():
        pattern.update(operator=op, object=tail.strip())
    return pattern


def with_text_patterns(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A rule entry whose text conditions and conclusion are parsed into patterns (other values unchanged)."""
    data = dict(entry)
    conditions = data.get("conditions")
    if isinstance(conditions, list):
        data["conditions"] = [
            parse_pattern(c, f"conditions.{i}") if isinstance(c, str) else c for i, c in enumerate(conditions)
        ]
    if isinstance(data.get("conclusion"), str):
        data["conclusion"] = parse_pattern(data["conclusion"], "conclusion", operators=False)
    return data
