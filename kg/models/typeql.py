"""TypeQL naming rules, shared by the ontology feature (which generates labels) and the TypeDB adapter (which
checks them): reserved words, words no generated label uses, and the shape of a generated label."""

from __future__ import annotations

import re

#: The 41 keywords the TypeQL 3 grammar refuses as labels (typeql.pest ``reserved``).
RESERVED_WORDS = frozenset((
    "with", "match", "fetch", "update", "define", "undefine", "redefine", "insert", "put", "delete", "end",
    "entity", "relation", "attribute", "role", "asc", "desc", "struct", "fun", "return", "alias", "sub", "owns",
    "as", "plays", "relates", "iid", "isa", "links", "has", "is", "or", "not", "try", "in", "true", "false", "of",
    "from", "first", "last",
))  # fmt: skip
#: Words no generated label uses: the reserved ones, the grammar's other keywords (value types, reducers,
#: built-in functions, stream operators), ``label``/``let``/``given`` and ``thing`` (the 2.x root type).
AVOIDED_WORDS = RESERVED_WORDS | frozenset((
    "abs", "ceil", "floor", "round", "length", "len", "check", "count", "max", "min", "mean", "median", "std",
    "sum", "list", "value", "select", "sort", "limit", "offset", "group", "groupby", "reduce", "require",
    "distinct", "like", "contains", "boolean", "integer", "double", "decimal", "date", "datetime", "datetime-tz",
    "duration", "string", "label", "let", "given", "thing",
))  # fmt: skip
#: A generated label: ASCII kebab-case starting with a letter (a subset of the TypeQL identifier rule).
IDENTIFIER_RE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")

__all__ = ["AVOIDED_WORDS", "IDENTIFIER_RE", "RESERVED_WORDS"]
