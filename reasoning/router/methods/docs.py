"""What each method's numbers mean, how much work it may do, and what inputs it takes.

Every engine module declares ``DOCS: dict[str, MethodDoc]`` for the methods it defines (keyed by canonical method
id). :func:`reasoning.router.methods.method_docs` collects them; the router builds input templates from
``inputs`` and ``example``, and ``docs/reasoning-methods.md`` is generated from them (never typed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class MethodDoc:
    """The documented contract of one method.

    Attributes:
        confidence: What ``confidence`` means for this method, in one or two sentences (a probability that the
            conclusion holds, a share of agreeing criteria, a sampling precision, ...), and when it is low.
        bound: The work bound, naming the constant(s) that enforce it, and what happens at the bound (a clear
            error, or a result marked ``partial``). Build it from the constants (an f-string), never type numbers.
        inputs: The pydantic model of ``inputs.<method>`` (None when the method takes no inputs object).
        example: A small filled ``inputs.<method>`` object that computes (a template a caller can edit).
        graph: What the method reads from the agent's graph when no inputs are given (empty: nothing).
    """

    confidence: str
    bound: str
    inputs: type[BaseModel] | None = None
    example: dict[str, Any] | None = None
    graph: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


__all__ = ["MethodDoc"]
