"""Auto-selection from a problem: the seed's profile scoring, structural cues and semantic similarity.

Two paths, and the result says which ran (``RouterResult.router``):

- ``classification``: the caller gave a classification. Methods rank by the seed's score exactly
  (``0.2·uncertainty + 0.2·complexity + 0.3·domain + 0.15·data + 0.15·stakes``); the problem text only breaks
  ties (cues, then semantic similarity), and catalogue order breaks what is still tied. Every seed method has
  its own profile, so each is first for its own classification.
- ``text``: no classification. The six fields are inferred (keywords, then the profiles of the methods the
  cues point to) and each method scores::

      score = cue + SEMANTIC_WEIGHT · semantic_rel + PROFILE_WEIGHT · profile(inferred classification)

  ``cue`` is the capped sum of the matched cues' weights (:mod:`.cues`), ``semantic_rel`` the similarity to the
  method's worked problems rescaled within the problem (closest 1, mean or below 0; :mod:`.semantic`).
  Without an embedder the semantic term is 0 and the result says so. A text in which nothing points anywhere
  goes to ``strategy-selection`` (which explains the ranking) rather than to the first method of the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kg.models import parse
from kg.ports import Embedder
from reasoning.router.catalogue import SEED
from reasoning.router.cues import cue_scores, find_cues
from reasoning.router.models import MethodScore, MethodSpec, ProblemClassification
from reasoning.router.scoring import WEIGHTS, classify_problem, score_method
from reasoning.router.semantic import relative, similarities

SEMANTIC_WEIGHT = 0.6
PROFILE_WEIGHT = 0.25
#: Where a text with no signal at all goes (a tiny prior, below any real signal).
FALLBACK = "strategy-selection"
FALLBACK_PRIOR = 0.001
_INDEX = {m.id: i for i, m in enumerate(SEED)}
_BY_ID = {m.id: m for m in SEED}
_DIMENSIONS = (*WEIGHTS, "time_pressure")


@dataclass
class Route:
    """What the text router found: the classification, every seed method scored (best first), why, notes."""

    path: Literal["classification", "text", "llm"]
    classification: ProblemClassification
    scores: list[MethodScore]
    notes: list[str] = field(default_factory=list)

    def why(self, method: str) -> str:
        """One sentence on why ``method`` ranks where it does."""
        found = next((s for s in self.scores if s.method == method), None)
        if found is None:
            return ""
        parts = []
        if found.cues:
            parts.append(f"cues: {', '.join(found.cues)}")
        if found.semantic is not None:
            parts.append(f"similarity to its worked problems {found.semantic:.2f}")
        if found.matched:
            whose = "the given" if self.path == "classification" else "the inferred"
            parts.append(f"profile matches {whose} classification on {', '.join(found.matched)} (seed score "
                         f"{found.profile:.2f})")  # fmt: skip
        head = f"rank {found.rank} of {len(self.scores)} by {self.path}"
        return f"{head}; {'; '.join(parts)}" if parts else f"{head}; nothing in the text points to it"


def infer_classification(problem: str, cues: dict[str, float], sem_rel: dict[str, float]) -> tuple[
        ProblemClassification, list[str]]:  # fmt: skip
    """The six fields from the text: keywords first, then the profiles of the methods the cues point to."""
    found = {k: v for k, v in classify_problem(problem).model_dump(mode="json").items() if v is not None}
    notes = [f"{k} = {v} (keywords)" for k, v in found.items()]
    voters = cues or {m: s for m, s in sem_rel.items() if s >= 1.0}
    for dimension in WEIGHTS:
        if dimension in found or not voters:
            continue
        votes: dict[str, float] = {}  # value -> summed weight (first reached wins a tie)
        for method, weight in voters.items():
            value = getattr(_BY_ID[method].profile, dimension).value
            votes[value] = votes.get(value, 0.0) + weight
        value = max(votes, key=lambda v: votes[v])
        found[dimension] = value
        notes.append(f"{dimension} = {value} (profiles of the methods the text points to)")
    return parse(ProblemClassification, found), notes


def cues_decide(cues: dict[str, float], given: ProblemClassification | None) -> bool:
    """True when semantic similarity cannot change the first method: the embedder need not load.

    With a classification, when the seed's score has a single best method, or the cues break its tie; from text,
    when the best cue leads the next by more than the semantic and profile terms together can make up.
    """
    if given is not None:
        rows = sorted(((score_method(m, given)[0], cues.get(m.id, 0.0)) for m in SEED), reverse=True)
        return rows[0] != rows[1]
    ranked = [*sorted(cues.values(), reverse=True), 0.0, 0.0]
    return ranked[0] - ranked[1] > SEMANTIC_WEIGHT + PROFILE_WEIGHT


def route(problem: str, given: ProblemClassification | None, embedder: Embedder | None, *,
          semantic: bool | None = None) -> Route:  # fmt: skip
    """Every seed method scored for ``problem`` (and a given classification), best first.

    ``semantic``: True always compares with the worked problems (when the embedder loads), False never, None
    only when the cues do not decide the first method (:func:`cues_decide`), so a clear problem loads no model.
    """
    hits = find_cues(problem)
    cues = cue_scores(hits)
    names: dict[str, list[str]] = {}
    for hit in hits:
        for method in hit.methods:
            names.setdefault(method, []).append(hit.name)
    notes: list[str] = []
    if semantic is False or (semantic is None and cues_decide(cues, given)):
        sims: dict[str, float] = {}
        off = None
        notes.append(
            "semantic similarity not computed: "
            + ("turned off" if semantic is False else "the structural cues decide the first method")
        )
    else:
        sims, off = similarities(problem, embedder)
    sem_rel = relative(sims)
    notes += [off] if off else []
    path: Literal["classification", "text"] = "classification" if given is not None else "text"
    if given is not None:
        chosen = given
    else:
        chosen, inferred = infer_classification(problem, cues, sem_rel)
        notes.append("classification read from the problem text: " + ("; ".join(inferred) or "nothing found"))
    rows: list[tuple[float, float, int, MethodSpec, float, list[str]]] = []
    for spec in SEED:
        profile, matched = score_method(spec, chosen)
        text = cues.get(spec.id, 0.0) + SEMANTIC_WEIGHT * sem_rel.get(spec.id, 0.0)
        text += FALLBACK_PRIOR if spec.id == FALLBACK and path == "text" else 0.0
        total = profile if path == "classification" else text + PROFILE_WEIGHT * profile
        rows.append((round(total, 4), round(text, 4), -_INDEX[spec.id], spec, profile, matched))
    rows.sort(key=lambda r: (r[0], r[1], r[2]), reverse=True)
    scores = [MethodScore(method=m.id, category=m.category, score=total, matched=matched, rank=rank, profile=profile,
                          cue=cues.get(m.id, 0.0), cues=names.get(m.id, []), semantic=sims.get(m.id))
              for rank, (total, _, _, m, profile, matched) in enumerate(rows, 1)]  # fmt: skip
    return Route(path=path, classification=chosen, scores=scores, notes=notes)


def explain_tie(result: Route, chosen: int) -> str | None:
    """How a tie at the cut after the first ``chosen`` methods was broken, or None if there was none."""
    scores = result.scores
    if len(scores) <= chosen:
        return None
    last = scores[chosen - 1].score
    tied = [s for s in scores if s.score == last]
    if len(tied) < 2:
        return None
    kept = [s.method for s in scores[:chosen] if s.score == last]
    names = ", ".join(s.method for s in tied)
    signal = any(s.cue or s.semantic is not None for s in tied)
    how = (
        "by the problem text (structural cues, then semantic similarity), then catalogue order"
        if signal
        else "by catalogue order (the seed's table order: formal, probabilistic, causal, experience, social, meta)"
    )
    return f"{len(tied)} methods tie at score {last}: {names}; kept {', '.join(kept)} {how}"


__all__ = ["FALLBACK", "PROFILE_WEIGHT", "SEMANTIC_WEIGHT", "Route", "explain_tie", "infer_classification", "route"]
