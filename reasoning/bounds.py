"""The bounds of forward closures run for agents, and how a result says that one cut it.

Every closure the services compute (``infer_forward``, ``constraint_check``, ``policy_eval``,
``knowledge_explain``, ``explain``, the nightly inference step) runs under :class:`~reasoning.rules.ChainLimits`:
the workspace's ``[reasoning]`` bounds, else :data:`DEFAULT_LIMITS`. A call may ask for lower bounds, never
higher ones (an agent on the MCP server cannot lift the owner's cap). A cut closure is sound but incomplete:
the answer carries ``fixpoint: false`` and a note naming the bound and what to do.

Backward chaining (``infer_backward``, the backward proofs of ``knowledge_explain``) is bounded by work too:
one proof search takes at most :data:`MAX_PROOF_STEPS` steps (a goal opened, or a stored fact tried against
one), its proofs and its knowledge gaps together, whatever ``max_depth`` says; ``knowledge_explain`` shares one
such bound among every goal it tries. A cut search answers with the proofs it found (they hold),
``complete: false`` and a note: "not proved" then means not proved within the bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg.errors import InputError
from kg.models import Model
from reasoning.requests import DEFAULT_MAX_DERIVED, DEFAULT_MAX_JOIN
from reasoning.rules import ChainLimits, ForwardResult
from reasoning.rules.backward import MAX_PROOF_STEPS

if TYPE_CHECKING:
    from kg.workspace import Workspace

#: Bounds of one forward closure unless the workspace sets others: a few seconds of joins (Python examines
#: roughly 0.2-0.5 M candidate facts a second). A transitive rule over a 1,000-fact chain now stops there,
#: instead of running 126 s and 1 GB for its 499,500 facts.
DEFAULT_LIMITS = ChainLimits(max_derived=DEFAULT_MAX_DERIVED, max_join=DEFAULT_MAX_JOIN)  # 50,000 and 2,000,000
#: Violations or policy firings one call returns at most.
MAX_RESULTS = 1_000


class ClosureStatus(Model):
    """Whether a forward closure is complete, and if not, what cut it.

    Attributes:
        fixpoint: True when the closure is complete.
        stopped_by: ``max_derived``, ``max_join`` or ``max_iterations`` when it is not.
        derived: Facts derived.
        join_work: Candidate facts the joins examined.
        max_derived: The bound on derived facts that applied.
        max_join: The bound on candidate facts that applied.
        checked: False when a constraint check or policy evaluation on the closure was itself cut (at
            :data:`MAX_RESULTS` results or ``max_join``).
        note: One sentence for a cut closure or check (None when complete).
    """

    fixpoint: bool
    checked: bool = True
    stopped_by: str | None = None
    derived: int
    join_work: int
    max_derived: int
    max_join: int
    note: str | None = None


def workspace_limits(ws: Workspace) -> ChainLimits:
    """The workspace's ``[reasoning]`` bounds, each unset one from :data:`DEFAULT_LIMITS`."""
    config = ws.config.reasoning
    return complete(ChainLimits(max_derived=config.max_derived, max_join=config.max_join))


def complete(limits: ChainLimits | None) -> ChainLimits:
    """``limits`` with each unset bound from :data:`DEFAULT_LIMITS`."""
    limits = limits or DEFAULT_LIMITS
    return ChainLimits(max_derived=limits.max_derived or DEFAULT_LIMITS.max_derived,
                       max_join=limits.max_join or DEFAULT_LIMITS.max_join)  # fmt: skip


def lowered(ceiling: ChainLimits, max_derived: int | None, max_join: int | None) -> ChainLimits:
    """The bounds a call asked for, each from 1 to the ceiling's (unset: the ceiling's).

    Raises:
        InputError: naming ``max_derived`` or ``max_join``: below 1 or above the ceiling.
    """
    chosen: dict[str, int | None] = {}
    for name, asked, top in (("max_derived", max_derived, ceiling.max_derived),
                             ("max_join", max_join, ceiling.max_join)):  # fmt: skip
        if asked is not None and (isinstance(asked, bool) or not isinstance(asked, int)):
            raise InputError(name, f"must be a whole number, got {asked!r}")
        if asked is not None and not 1 <= asked <= (top or asked):
            raise InputError(name, f"must be from 1 to {top} (the workspace's [reasoning] {name}), got {asked}")
        chosen[name] = top if asked is None else asked
    return ChainLimits(**chosen)


def status(result: ForwardResult, limits: ChainLimits) -> ClosureStatus:
    """How complete ``result`` is under ``limits`` (both bounds set), with a note when it was cut."""
    max_derived, max_join = limits.max_derived or 0, limits.max_join or 0
    notes = {
        "max_derived": f"stopped after deriving {len(result.derived)} facts (max_derived {max_derived})",
        "max_join": f"stopped after examining {result.join_work} candidate facts (max_join {max_join})",
        "max_iterations": f"stopped after {result.iterations} iterations (max_iterations)",
    }
    note = None
    if result.stopped_by is not None:
        note = (f"{notes.get(result.stopped_by, result.stopped_by)}: the closure is incomplete; what was derived "
                "holds. Narrow the rules or facts, or raise the bound (the workspace's [reasoning] section caps "
                "it).")  # fmt: skip
    return ClosureStatus(fixpoint=result.fixpoint, stopped_by=result.stopped_by, derived=len(result.derived),
                         join_work=result.join_work, max_derived=max_derived, max_join=max_join,
                         note=note)  # fmt: skip


def check_note(stopped: str | None, limits: ChainLimits, found: int) -> str | None:
    """One sentence when a constraint check or policy evaluation itself was cut (None when it was not)."""
    if stopped == "max_results":
        return f"stopped after {found} results (at most {MAX_RESULTS} are returned): fix these and check again."
    if stopped == "max_join":
        return (f"the check stopped after examining {limits.max_join} candidate facts (max_join) with {found} "
                "results: narrow its conditions.")  # fmt: skip
    return None


def joined(*notes: str | None) -> str | None:
    """The notes that are set, as one line (None when none is)."""
    found = [n for n in notes if n]
    return " ".join(found) if found else None


__all__ = ["DEFAULT_LIMITS", "MAX_PROOF_STEPS", "MAX_RESULTS", "ClosureStatus", "check_note", "complete", "joined",
           "lowered", "status", "workspace_limits"]  # fmt: skip
