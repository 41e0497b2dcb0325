"""Structure mapping between two sets of relations ``(subject, relation, object)``, in the manner of Gentner's
structure-mapping theory (Falkenhainer, Forbus & Gentner, "The Structure-Mapping Engine", 1989), with
non-identical relations allowed to correspond as in ACME (Holyoak & Thagard, 1989).

A *match hypothesis* pairs a source relation with a target relation whose relation names correspond: the same
name (weight 1), names in the same ``similar`` group (a common generalisation, "minimal ascension": weight
:data:`SIMILAR_WEIGHT`), or, when ``rename`` is on, any two names (weight :data:`RENAME_WEIGHT`). A mapping is a
set of match hypotheses that is one-to-one on entities and on relation names (structural consistency); the best
mapping maximises the summed weight, found by branch and bound over the source relations (each matched once or
left out), bounded by :data:`MAX_NODES` search steps (each node and each match hypothesis tried counts one).

Candidate inferences carry the source relations the target lacks into the target: mapped entities and relation
names are translated; an entity the mapping does not cover is carried over as a new target entity, shown in
brackets (``[smallGroups]``: "something in the target playing the role of smallGroups", SME's skolem). Only
relations touching at least one mapped entity are carried (they are anchored in the mapping).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Key = tuple[str, str, str]

SIMILAR_WEIGHT = 0.9
RENAME_WEIGHT = 0.5
MAX_NODES = 100_000  # search steps (a node or a match tried); past it the best mapping so far is reported (partial)


def _weight(a: str, b: str, groups: dict[str, int], rename: bool) -> float:
    if a == b:
        return 1.0
    if a in groups and groups[a] == groups.get(b):
        return SIMILAR_WEIGHT
    return RENAME_WEIGHT if rename else 0.0


def match_hypotheses(source: Sequence[Key], target: Sequence[Key], similar: Sequence[Sequence[str]],
                     rename: bool) -> list[list[tuple[float, Key]]]:  # fmt: skip
    """For each source relation, the target relations it may match, best weight first."""
    groups = {name: i for i, group in enumerate(similar) for name in group}
    found = []
    for s in source:
        options = [(w, t) for t in target if (w := _weight(s[1], t[1], groups, rename)) > 0]
        found.append(sorted(options, key=lambda o: (-o[0], o[1])))
    return found


def best_mapping(source: Sequence[Key], target: Sequence[Key], *, similar: Sequence[Sequence[str]] = (),
                 rename: bool = True) -> dict[str, Any]:  # fmt: skip
    """The structurally consistent mapping of most weight: ``entities``, ``relations`` (name -> name), ``pairs``
    (source relation -> target relation), ``score``, ``nodes`` searched and ``complete`` (False at the bound)."""
    options = match_hypotheses(source, target, similar, rename)
    order = sorted(range(len(source)), key=lambda i: (-(options[i][0][0] if options[i] else 0.0), i))
    ceiling = [0.0] * (len(order) + 1)  # the most weight still to gain from position k on
    for k in range(len(order) - 1, -1, -1):
        ceiling[k] = ceiling[k + 1] + (options[order[k]][0][0] if options[order[k]] else 0.0)
    best: dict[str, Any] = {"score": -1.0, "pairs": {}, "nodes": 0, "stopped": False}
    maps: list[dict[str, str]] = [{}, {}, {}, {}]  # entity s->t, t->s, relation s->t, t->s
    pairs: dict[int, Key] = {}

    def fits(s: Key, t: Key) -> list[tuple[int, str, str]]:
        wanted = [(0, s[0], t[0]), (0, s[2], t[2]), (2, s[1], t[1])]
        added: list[tuple[int, str, str]] = []
        for side, a, b in wanted:
            if maps[side].get(a, b) != b or maps[side + 1].get(b, a) != a:
                for side2, a2, b2 in added:
                    del maps[side2][a2], maps[side2 + 1][b2]
                return []
            if a not in maps[side]:
                maps[side][a], maps[side + 1][b] = b, a
                added.append((side, a, b))
        return added or [(-1, "", "")]

    def search(k: int, score: float, taken: set[Key]) -> None:
        if best["nodes"] >= MAX_NODES:
            best["stopped"] = True
            return
        best["nodes"] += 1
        if score + ceiling[k] <= best["score"]:
            return
        if k == len(order):
            best.update(score=score, pairs=dict(pairs))
            return
        i = order[k]
        for weight, t in options[i]:
            if best["nodes"] >= MAX_NODES:
                best["stopped"] = True
                return
            best["nodes"] += 1
            if t in taken:
                continue
            added = fits(source[i], t)
            if not added:
                continue
            pairs[i] = t
            search(k + 1, score + weight, taken | {t})
            del pairs[i]
            for side, a, b in added:
                if side >= 0:
                    del maps[side][a], maps[side + 1][b]
        search(k + 1, score, taken)

    search(0, 0.0, set())
    chosen: dict[int, Key] = best["pairs"]
    entities: dict[str, str] = {}
    relations: dict[str, str] = {}
    for i, t in sorted(chosen.items()):
        s = source[i]
        entities.update({s[0]: t[0], s[2]: t[2]})
        relations[s[1]] = t[1]
    return {"entities": entities, "relations": relations, "score": max(best["score"], 0.0),
            "pairs": {i: t for i, t in sorted(chosen.items())}, "nodes": best["nodes"],
            "complete": not best["stopped"]}  # fmt: skip


def candidate_inferences(source: Sequence[Key], target: Sequence[Key], mapping: dict[str, Any]) -> list[str]:
    """Source relations the target lacks, carried into the target (unmapped entities as ``[name]``)."""
    entities, relations = mapping["entities"], mapping["relations"]
    have = set(target)
    found: list[str] = []
    for i, (s, p, o) in enumerate(source):
        if i in mapping["pairs"] or (s not in entities and o not in entities):
            continue
        carried = (entities.get(s, f"[{s}]"), relations.get(p, p), entities.get(o, f"[{o}]"))
        if carried not in have:
            found.append(" ".join(carried))
    return list(dict.fromkeys(found))


__all__ = ["MAX_NODES", "RENAME_WEIGHT", "SIMILAR_WEIGHT", "best_mapping", "candidate_inferences", "match_hypotheses"]
