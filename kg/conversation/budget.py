"""The context budget: one model context window split into system, tools, memory, history, request and reserve.

Recall and context assembly take their limits from it: :func:`allocate` gives the shares, the assembler is
called with ``budget_tokens=budget.history`` and recall fills at most ``budget.memory`` tokens.

Default ratios (ours; the seed's ratios are not available, so these are documented choices):

==================  =====  ===========================================================
share               ratio  what it holds
==================  =====  ===========================================================
response_reserve    15%    room left for the model's answer (never filled)
system              10%    the system prompt, incl. the summary-expansion note
tools               10%    tool schemas
memory              20%    retrieved long-term memory (recall results)
request             5%     the current user request
history             rest   conversation history: fresh tail, summaries, older messages (40%)
==================  =====  ===========================================================

The rule, in order (all integer arithmetic, so the result is deterministic):

1. Each share is its **fixed need** when one is given, else ``floor(ratio * total)``.
2. ``history = total - all other shares``: what a fixed need leaves unused flows to history, and so does
   the rounding remainder, so the shares always add up to ``total``.
3. If history would be negative (fixed needs above their ratio), the shares that were *not* fixed give back
   tokens, memory first, then tools, system, request and the response reserve, each down to 0.
4. If the fixed needs alone exceed ``total``: :class:`~kg.errors.InputError` (nothing is allocated).

No share is ever negative.
"""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import ConfigDict, Field, model_validator

from kg.conversation.window import MAX_WINDOW
from kg.errors import InputError
from kg.models import Model
from kg.models.base import new_list

#: The shares other than history, in the order they give tokens back (rule 3).
GIVE_BACK_ORDER = ("memory", "tools", "system", "request", "response_reserve")

Ratio = Annotated[float, Field(ge=0.0, le=1.0)]


class BudgetRatios(Model):
    """Fractions of the window for each share but history (history takes the rest).

    Attributes:
        response_reserve: Kept free for the model's answer (0.15).
        system: System prompt (0.10).
        tools: Tool schemas (0.10).
        memory: Retrieved memory, i.e. recall results (0.20).
        request: The current request (0.05).
    """

    model_config = ConfigDict(frozen=True)

    response_reserve: Ratio = 0.15
    system: Ratio = 0.10
    tools: Ratio = 0.10
    memory: Ratio = 0.20
    request: Ratio = 0.05

    @model_validator(mode="after")
    def _at_most_one(self) -> Self:
        if self.response_reserve + self.system + self.tools + self.memory + self.request > 1.0 + 1e-9:
            raise ValueError("ratios: response_reserve + system + tools + memory + request must be at most 1")
        return self

    @property
    def history(self) -> float:
        """The fraction left for history (0.40 by default)."""
        return max(0.0, 1.0 - (self.response_reserve + self.system + self.tools + self.memory + self.request))


#: Validated at import (about 1.3 M instructions). Constructed, as DEFAULT_FUSION is, it left a recall (which then
#: imported this module for MAX_WINDOW, now in kg.conversation.window) with no validator built while ``mabos`` loads
#: its command: the first build, which imports pydantic's plugin loader and importlib.metadata, then ran after the
#: collector was re-enabled and cost more in collections than it saved (docs/decisions/2026-11-29-lazy-startup.md,
#: fourth pass).
DEFAULT_RATIOS = BudgetRatios()


class ContextBudget(Model):
    """A window split into shares (tokens); they add up to ``total``.

    Attributes:
        total: The model's context window.
        system: System prompt.
        tools: Tool schemas.
        memory: Retrieved memory (the recall limit).
        history: Conversation history (the assembler's ``budget_tokens``).
        request: The current request.
        response_reserve: Kept free for the answer.
        fixed: The shares given as fixed needs.
        rule: How the shares were computed, in words.
        notes: What the rule had to do beyond the ratios (give-backs), empty when nothing.
    """

    model_config = ConfigDict(frozen=True)

    total: int = Field(ge=0)
    system: int = Field(ge=0)
    tools: int = Field(ge=0)
    memory: int = Field(ge=0)
    history: int = Field(ge=0)
    request: int = Field(ge=0)
    response_reserve: int = Field(ge=0)
    fixed: list[str] = Field(default_factory=new_list)
    rule: str
    notes: list[str] = Field(default_factory=new_list)


def _check_tokens(field: str, value: int | None, *, limit: int = MAX_WINDOW) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(field, f"must be a whole number of tokens, got {value!r}")
    if not 0 <= value <= limit:
        raise InputError(field, f"must be between 0 and {limit} tokens, got {value}")


def allocate(
    total_tokens: int,
    *,
    system: int | None = None,
    tools: int | None = None,
    memory: int | None = None,
    request: int | None = None,
    response_reserve: int | None = None,
    ratios: BudgetRatios = DEFAULT_RATIOS,
) -> ContextBudget:
    """Split a context window of ``total_tokens`` into shares (see the module docstring for the rule).

    Args:
        total_tokens: The model's context window.
        system: Fixed need of the system prompt, or None for its ratio.
        tools: Fixed need of the tool schemas, or None.
        memory: Fixed need of retrieved memory, or None.
        request: Fixed need of the current request, or None.
        response_reserve: Fixed response reserve, or None.
        ratios: The ratios of the shares without a fixed need.

    Returns:
        The shares; ``history`` is the rest, never negative.

    Raises:
        InputError: a negative or non-integer amount, or fixed needs above ``total_tokens``.
    """
    _check_tokens("total_tokens", total_tokens)
    needs = {"system": system, "tools": tools, "memory": memory, "request": request,
             "response_reserve": response_reserve}  # fmt: skip
    for name, need in needs.items():
        _check_tokens(name, need)
    fixed = [name for name in GIVE_BACK_ORDER if needs[name] is not None]
    fixed_sum = sum(needs[name] or 0 for name in fixed)
    if fixed_sum > total_tokens:
        parts = " + ".join(f"{name} {needs[name]}" for name in fixed)
        raise InputError("total_tokens", f"fixed needs ({parts} = {fixed_sum}) exceed the window of {total_tokens}")
    shares = {name: needs[name] if needs[name] is not None else int(getattr(ratios, name) * total_tokens)
              for name in GIVE_BACK_ORDER}  # fmt: skip
    history = total_tokens - sum(v or 0 for v in shares.values())
    notes: list[str] = []
    for name in GIVE_BACK_ORDER:
        if history >= 0:
            break
        if name in fixed:
            continue
        back = min(shares[name] or 0, -history)
        shares[name] = (shares[name] or 0) - back
        history += back
        notes.append(f"{name} gave back {back} tokens to cover fixed needs")
    by_ratio = ", ".join(f"{name} {getattr(ratios, name):.0%}" for name in GIVE_BACK_ORDER if name not in fixed)
    rule = (f"fixed needs as given ({', '.join(fixed) or 'none'}), other shares by ratio ({by_ratio or 'none'}); "
            "history takes the rest")  # fmt: skip
    return ContextBudget(total=total_tokens, history=history, fixed=fixed, rule=rule, notes=notes,
                         **{name: value or 0 for name, value in shares.items()})  # fmt: skip


__all__ = ["DEFAULT_RATIOS", "GIVE_BACK_ORDER", "MAX_WINDOW", "BudgetRatios", "ContextBudget", "allocate"]
