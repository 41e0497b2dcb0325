"""Analogical reasoning: structure mapping from a source to a target (the algorithm is in
:mod:`.structure_mapping`; modal reasoning is in :mod:`.modal`).

Inputs (``inputs.analogical``): ``{"source": ["S P O", ..], "target": ["S P O", ..]}`` (relations), or
``{"source": "entity", "target": "entity"}`` to compare two entities' neighbourhoods in the agent's facts (the
facts about the entity and about up to :data:`MAX_NEIGHBOURS` of its neighbours). Options: ``similar`` (groups of
relation names that correspond, e.g. ``[["canCapture", "canDestroy"]]``) and ``rename`` (default true: any two
relation names may correspond, at a lower weight, when the structure supports it).

The mapping is the structurally consistent (one-to-one) correspondence of entities and relation names that
preserves the most source relations; the source relations the target lacks are carried over as candidate
inferences, entities the target lacks as ``[name]``. Confidence is the structural evaluation: the weight of
the preserved relations over the number of source relations.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from kg.models import Model
from kg.models.base import new_list
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import input_error, parse_inputs
from reasoning.router.methods.premises import triple
from reasoning.router.methods.structure_mapping import MAX_NODES, RENAME_WEIGHT, SIMILAR_WEIGHT, best_mapping
from reasoning.router.methods.structure_mapping import candidate_inferences as carried

METHOD = "analogical"
MAX_RELATIONS = 200  # a side; relations read from the graph past it are cut (partial)
MAX_NEIGHBOURS = 50
_Relation = Annotated[str, Field(min_length=5, max_length=2_048)]
_Name = Annotated[str, Field(min_length=1, max_length=256)]
Key = tuple[str, str, str]


class AnalogicalInput(Model):
    """``inputs.analogical``."""

    source: list[_Relation] | _Name = Field(description="relations 'S P O', or an entity of the agent's facts")
    target: list[_Relation] | _Name = Field(description="relations 'S P O', or an entity of the agent's facts")
    similar: list[Annotated[list[_Name], Field(min_length=2, max_length=100)]] = Field(default_factory=new_list,
                                                                                        max_length=100)  # fmt: skip
    rename: bool = True


def _relations(ctx: MethodContext, value: list[str] | str, side: str) -> tuple[list[Key], list[str], bool]:
    """The side's relations, the uids read, and whether the graph neighbourhood was cut."""
    if isinstance(value, list):
        if len(value) > MAX_RELATIONS:
            raise input_error(METHOD, [side], f"at most {MAX_RELATIONS} relations a side (MAX_RELATIONS), got "
                              f"{len(value)}")  # fmt: skip
        return [triple(v, METHOD, f"{side}.{i}") for i, v in enumerate(value)], [], False
    facts = {f.uid: f for f in [*ctx.facts(subject=value, limit=MAX_RELATIONS + 1),
                                *ctx.facts(object=value, limit=MAX_RELATIONS + 1)]}  # fmt: skip
    neighbours = sorted({f.object if f.subject == value else f.subject for f in facts.values()})
    for other in neighbours[:MAX_NEIGHBOURS]:
        facts.update({f.uid: f for f in ctx.facts(subject=other, limit=MAX_RELATIONS + 1)})
    rows = sorted(facts.values(), key=lambda f: (f.subject != value, f.uid))
    cut = len(rows) > MAX_RELATIONS or len(neighbours) > MAX_NEIGHBOURS
    rows = rows[:MAX_RELATIONS]
    return [(f.subject, f.predicate, f.object) for f in rows], [f.uid for f in rows], cut


def analogical(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``analogical``."""
    if "source" not in inputs or "target" not in inputs:
        raise MissingInputs(METHOD, "give inputs.analogical.source and target (relations or entities)")
    data = parse_inputs(AnalogicalInput, inputs, METHOD)
    source, used_s, cut_s = _relations(ctx, data.source, "source")
    target, used_t, cut_t = _relations(ctx, data.target, "target")
    if not source or not target:
        raise MissingInputs(METHOD, "the source or the target has no relations (give relations or entities with facts)")
    mapping = best_mapping(source, target, similar=data.similar, rename=data.rename)
    inferences = carried(source, target, mapping)
    preserved = [f"{' '.join(source[i])} -> {' '.join(t)}" for i, t in mapping["pairs"].items()]
    value = {"mapping": mapping["entities"], "relations": {a: b for a, b in mapping["relations"].items() if a != b},
             "preserved": preserved, "candidate_inferences": inferences, "score": mapping["score"],
             "source_relations": len(source), "nodes": mapping["nodes"]}  # fmt: skip
    pairs = ", ".join(f"{s} -> {t}" for s, t in mapping["entities"].items()) or "nothing"
    conclusion = f"maps {pairs}" + (f"; suggests {'; '.join(inferences[:3])}" if inferences else "")
    cuts = []
    if not mapping["complete"]:
        cuts.append(f"the search stopped after {MAX_NODES} nodes (MAX_NODES): the best mapping found so far, maybe "
                    "not the best")  # fmt: skip
    if cut_s or cut_t:
        cuts.append(f"the graph neighbourhood was cut at {MAX_RELATIONS} relations or {MAX_NEIGHBOURS} neighbours")
    renamed = [f"{a} ~ {b}" for a, b in value["relations"].items()]
    return computed(METHOD, conclusion[:1000], mapping["score"] / len(source), value,
                    trace=[f"{len(source)} source and {len(target)} target relations",
                           f"best consistent mapping: {len(preserved)} relation(s) preserved, weight "
                           f"{mapping['score']:g} ({mapping['nodes']} search nodes)",
                           *([f"relations put in correspondence: {', '.join(renamed)}"] if renamed else []),
                           f"{len(inferences)} candidate inference(s)"], used=[*used_s, *used_t],
                    partial="; ".join(cuts) or None)  # fmt: skip


DOCS = {
    METHOD: MethodDoc(
        confidence=f"The structural evaluation: the weight of the source relations the mapping preserves (1 for the "
        f"same relation name, {SIMILAR_WEIGHT} for names in one `similar` group, {RENAME_WEIGHT} for other "
        "renamed relations) divided by the number of source relations. Low when little of the source "
        "finds a counterpart; it says nothing of whether the candidate inferences are true.",
        bound=f"At most {MAX_RELATIONS} relations a side (MAX_RELATIONS; given relations past it: a one-line error; "
        f"from the graph: the first {MAX_RELATIONS} facts of the entity and of at most {MAX_NEIGHBOURS} "
        f"neighbours, marked partial). The branch-and-bound search stops after {MAX_NODES} nodes (MAX_NODES) "
        "with the best mapping found so far, marked partial.",
        inputs=AnalogicalInput,
        example={
            "source": ["sun attracts planet", "sun moreMassiveThan planet", "planet revolvesAround sun"],
            "target": ["nucleus attracts electron", "nucleus moreMassiveThan electron"],
        },
        graph="with entity names as source and target: the facts about each entity and its neighbours",
    ),
}

__all__ = ["DOCS", "AnalogicalInput", "analogical", "best_mapping"]
