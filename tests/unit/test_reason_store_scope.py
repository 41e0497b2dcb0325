"""``reason``'s ``store_scope`` is validated as a scope whether or not ``store`` is set (found by the 10 MB check of
``tests/reliability/test_bad_input.py``: it took any text, 10 MB too, and checked it only when storing)."""

from __future__ import annotations

import pytest

from cli import tools
from kg.errors import InputError


@pytest.mark.parametrize("scope", ["x" * 10_000_000, "nope", "agent:", "project:a b"])
def test_a_store_scope_that_is_no_scope_is_refused_naming_the_field(scope: str) -> None:
    with pytest.raises(InputError) as refused:
        tools.get("reason").parse({"agent_id": "a", "problem": "Is acme taxable?", "store_scope": scope})
    assert refused.value.field == "store_scope" and "\n" not in str(refused.value) and len(str(refused.value)) < 1_000


def test_a_scope_is_taken() -> None:
    parsed = tools.get("reason").parse({"agent_id": "a", "problem": "p", "store": "memory", "store_scope": "global"})
    assert parsed.store_scope == "global"
