"""The engine contract every reasoning method implements (shared by all six category modules).

An engine is ``Engine = Callable[[MethodContext, dict[str, Any]], MethodOutcome]``: it gets the
context (who asks, a read handle on that agent's graph within its scopes, an optional chat model, a
seed) and the method's own ``inputs`` object, and returns one :class:`MethodOutcome`::

    {"method", "kind": "computed" | "llm_prompt" | "llm", "conclusion", "confidence", "value",
     "trace", "used", "notes"}

Rules for engines:

- validate ``inputs`` with a pydantic model through :func:`validate`, so a bad field raises
  :class:`~kg.errors.InputError` naming its full path (``inputs.bayesian.network.nodes.Rain.cpt``);
- when inputs are missing, read them from the agent's graph through ``ctx`` (``ctx.facts()``,
  ``ctx.rules()``, ``ctx.cases()``, ``ctx.nodes("belief")``, ...), which only ever sees the agent's
  readable scopes, and list the uids of every record used in ``used``;
- when neither inputs nor records give enough to compute, raise :class:`MissingInputs`; the router
  then returns the method's prompt (``kind="llm_prompt"``) or, with a chat model, lets the model
  execute the method (``kind="llm"``);
- be deterministic: randomness only from ``ctx.rng()`` (seeded by ``ctx.seed``).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from kg.errors import InputError
from kg.models import Model, RuleType, describe_validation_error
from kg.models.base import new_list

if TYPE_CHECKING:
    import numpy as np

    from kg.models import BDINode, Case, Fact, Rule
    from kg.ports import ChatModel
    from kg.workspace import Workspace
    from reasoning.service import Reasoner

Kind = Literal["computed", "llm_prompt", "llm"]
M = TypeVar("M", bound=BaseModel)


class MethodOutcome(Model):
    """What running one reasoning method gives. The one result shape of every method."""

    method: str = Field(description="The canonical method id (hyphenated, e.g. 'decision-theory').")
    kind: Kind = Field(description="computed: an engine computed it; llm_prompt: a prompt for your own LLM; "
                                   "llm: the configured chat model executed the method.")  # fmt: skip
    conclusion: str = Field(description="The conclusion in one line; fusion compares methods by it.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure the method is of its conclusion, 0..1.")
    value: Any = Field(default=None, description="Method-specific JSON (see docs/reasoning-methods.md).")
    trace: list[str] = Field(default_factory=new_list, description="The steps taken, in order.")
    used: list[str] = Field(default_factory=new_list, description="Uids of the records the method read.")
    notes: list[str] = Field(default_factory=new_list)
    partial: bool = Field(default=False, description="True when the method worked on a cut, sampled or incomplete "
                                                     "input (a bound was hit); the notes say which, and the "
                                                     "confidence is then at most 0.8.")  # fmt: skip


#: The highest confidence a partial result may report (a cut, sampled or incomplete input).
PARTIAL_CONFIDENCE_CAP = 0.8


class MissingInputs(Exception):
    """The method has neither inputs nor records to compute from; the router falls back to a prompt/LLM."""

    def __init__(self, method: str, needed: str) -> None:
        self.method = method
        self.needed = needed
        super().__init__(f"{method}: not computed: {needed}")


@dataclass
class MethodContext:
    """Who is reasoning and what they may read.

    ``workspace`` is None for pure computation (the Python API without a graph); the graph readers
    then return nothing. Every reader goes through the workspace's scope policy: only the agent's
    readable scopes (global, its own, its grants) are ever seen.
    """

    agent_id: str
    workspace: Workspace | None = None
    chat: ChatModel | None = None
    seed: int = 0
    problem: str = ""
    _reasoner: Reasoner | None = field(default=None, repr=False)

    def rng(self) -> np.random.Generator:
        """A fresh numpy generator seeded with ``seed`` (the same draws on every run)."""
        import numpy as np  # noqa: PLC0415 - numpy loads with the engines that draw, not with the router

        return np.random.default_rng(self.seed)

    # ---- graph readers (all scoped) -------------------------------------------------------------
    def facts(self, **criteria: Any) -> builtins.list[Fact]:
        """Live facts visible to the agent (FactQuery criteria: subject, predicate, object, limit ...)."""
        if self.workspace is None:
            return []
        criteria.setdefault("limit", 10_000)
        return self.workspace.facts.query(self.agent_id, **criteria)

    def rules(self, kind: RuleType | str | None = None, *, enabled: bool | None = True) -> builtins.list[Rule]:
        """Rules visible to the agent (by default only enabled ones), optionally of one type."""
        if self.workspace is None:
            return []
        parsed = RuleType(kind) if isinstance(kind, str) else kind
        scopes = self.workspace.scopes.readable(self.agent_id)
        return self.workspace.ports.rules.list(scopes=scopes, type=parsed, enabled=enabled)

    def cases(self, *, limit: int = 10_000) -> builtins.list[Case]:
        """Past cases visible to the agent, oldest first."""
        if self.workspace is None:
            return []
        scopes = self.workspace.scopes.readable(self.agent_id)
        return self.workspace.ports.cases.list(scopes=scopes, limit=limit)

    def nodes(self, kind: str, **filters: Any) -> builtins.list[BDINode]:
        """BDI nodes visible to the agent: belief, desire, goal, intention, plan, plan_step."""
        if self.workspace is None:
            return []
        return self.workspace.bdi.list(self.agent_id, kind, **filters)

    def agent_ids(self) -> builtins.list[str]:
        """Ids of the agents of the workspace (agents are not scoped records)."""
        if self.workspace is None:
            return []
        return [a.uid for a in self.workspace.agents.list()]

    def reasoner(self) -> Reasoner:
        """The rule engine over the agent's facts and rules (forward, backward, abduce)."""
        if self.workspace is None:
            raise MissingInputs("reasoner", "no workspace to read facts and rules from")
        if self._reasoner is None:
            ws = self.workspace
            from reasoning.service import Reasoner  # noqa: PLC0415 - the rule engine loads for the methods that use it

            self._reasoner = Reasoner.for_workspace(ws)  # bounded by the workspace's [reasoning] section
        return self._reasoner


#: An engine computes one method from the context and the method's own inputs object.
Engine = Callable[[MethodContext, dict[str, Any]], MethodOutcome]


def validate(model: type[M], data: Any, method: str) -> M:
    """``data`` validated into ``model``; errors name the path ``inputs.<method>.<field path>``.

    Raises:
        InputError: ``data`` is not an object or breaks the model's rules.
    """
    if not isinstance(data, dict):
        raise InputError(f"inputs.{method}", f"must be a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        inner = describe_validation_error(exc)
        path = "" if inner.field == model.__name__ else f".{inner.field}"
        raise InputError(f"inputs.{method}{path}", inner.rule) from None


def fail(method: str, path: str, rule: str) -> InputError:
    """An :class:`InputError` for ``inputs.<method>.<path>`` (raise it)."""
    return InputError(f"inputs.{method}" + (f".{path}" if path else ""), rule)


def clamp(value: float) -> float:
    """``value`` clipped into 0..1 (NaN becomes 0)."""
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def computed(
    method: str,
    conclusion: str,
    confidence: float,
    value: Any = None,
    *,
    trace: Sequence[str] = (),
    used: Sequence[str] = (),
    notes: Sequence[str] = (),
    partial: str | None = None,
) -> MethodOutcome:
    """A computed result (``used`` is de-duplicated, order kept).

    ``partial`` is one sentence saying which bound cut the input (or what was sampled or unknown): the outcome is
    then marked ``partial``, the sentence is added to ``notes`` and to the trace, and the confidence is capped at
    :data:`PARTIAL_CONFIDENCE_CAP`. Every engine that works on a cut or sampled input must pass it.
    """
    outcome = MethodOutcome(method=method, kind="computed", conclusion=conclusion, confidence=clamp(confidence),
                            value=value, trace=list(trace), used=list(dict.fromkeys(used)),
                            notes=list(notes))  # fmt: skip
    return mark_partial(outcome, partial) if partial else outcome


def mark_partial(outcome: MethodOutcome, why: str) -> MethodOutcome:
    """``outcome`` marked as computed on a cut, sampled or incomplete input (see :func:`computed`)."""
    return outcome.model_copy(update={
        "partial": True,
        "confidence": min(outcome.confidence, PARTIAL_CONFIDENCE_CAP),
        "notes": [*outcome.notes, why] if why not in outcome.notes else outcome.notes,
        "trace": [*outcome.trace, f"partial: {why}"],
    })  # fmt: skip


def llm_prompt(method: str, prompt: str, inputs: Any = None, notes: Sequence[str] = ()) -> MethodOutcome:
    """Not computed: a prompt for the caller's own LLM (``value`` holds the prompt and the inputs)."""
    return MethodOutcome(method=method, kind="llm_prompt", conclusion="(not computed: prompt for your LLM)",
                         confidence=0.0, value={"prompt": prompt, "inputs": inputs or {}},
                         notes=list(notes))  # fmt: skip


def llm(method: str, model: str, conclusion: str, confidence: float, *, rationale: str,
        notes: Sequence[str] = ()) -> MethodOutcome:  # fmt: skip
    """Executed by the configured chat model (``value`` records the model and its rationale)."""
    return MethodOutcome(method=method, kind="llm", conclusion=conclusion, confidence=clamp(confidence),
                         value={"model": model, "rationale": rationale}, notes=list(notes))  # fmt: skip


__all__ = [
    "PARTIAL_CONFIDENCE_CAP",
    "Engine",
    "Kind",
    "MethodContext",
    "MethodOutcome",
    "MissingInputs",
    "clamp",
    "computed",
    "fail",
    "llm",
    "llm_prompt",
    "mark_partial",
    "validate",
]
