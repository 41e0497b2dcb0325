"""Auto-selection by the configured chat model (``RouterResult.router == "llm"``).

With a chat model in the context and no classification given, the model is asked for the same shape the text
router produces: the six-field classification and the seed methods that fit, best first. Its answer is checked
(known method ids only, the classification through :class:`ProblemClassification`); the methods it names rank
first in its order, the others follow in the text router's order. When the model fails or answers something
else, the text router's ranking stands and a note says why: nothing fails because of the LLM.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kg.errors import BackendUnavailableError, InputError
from kg.models import parse
from kg.ports import ChatMessage, ChatModel
from reasoning.router.catalogue import SEED, canonical
from reasoning.router.models import ProblemClassification
from reasoning.router.textroute import Route

MAX_TOKENS = 300
SCHEMA = {
    "classification": {"uncertainty": "low|medium|high", "complexity": "simple|moderate|complex",
                       "domain": "formal|empirical|social|mixed", "time_pressure": "none|moderate|urgent",
                       "data_availability": "rich|moderate|sparse", "stakes": "low|medium|high"},
    "methods": ["up to 3 method ids from the list, best first"],
}  # fmt: skip


def classify_prompt(problem: str) -> str:
    """The prompt asking the model to classify ``problem`` and name the methods it needs."""
    listing = "\n".join(f"- {m.id}: {m.description}" for m in SEED)
    return (f"Classify this problem and choose the reasoning methods it needs.\n\nProblem:\n{problem.strip()}\n\n"
            f"Methods:\n{listing}\n\nReply with JSON only: {json.dumps(SCHEMA)}")  # fmt: skip


def _parse(text: str) -> tuple[ProblemClassification, list[str]] | None:
    found = re.search(r"\{.*\}", text, re.S)
    try:
        data: Any = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("methods"), list):
        return None
    seed = {m.id for m in SEED}
    methods = [c for c in (canonical(str(m)) for m in data["methods"][:32]) if c in seed]
    raw: dict[str, Any] = data["classification"] if isinstance(data.get("classification"), dict) else {}
    try:
        chosen = parse(ProblemClassification, {k: v for k, v in raw.items() if v is not None})
    except InputError:
        return None
    return (chosen, list(dict.fromkeys(methods))) if methods else None


def llm_route(problem: str, chat: ChatModel, text: Route) -> Route:
    """The model's ranking in front of the text router's (or the text router's, with a note, on failure)."""
    try:
        reply = chat.complete([ChatMessage(role="user", content=classify_prompt(problem))], max_tokens=MAX_TOKENS)
    except BackendUnavailableError as exc:
        text.notes.append(f"the chat model could not classify ({exc}); routed by the problem text")
        return text
    parsed = _parse(reply)
    if parsed is None:
        text.notes.append("the chat model's classification was not the asked JSON; routed by the problem text")
        return text
    chosen, methods = parsed
    order = methods + [s.method for s in text.scores if s.method not in methods]
    by_id = {s.method: s for s in text.scores}
    scores = [
        by_id[m].model_copy(update={"rank": rank, "score": round(1.0 - 0.01 * (rank - 1), 4) if m in methods
                                    else by_id[m].score})
        for rank, m in enumerate(order, 1)
    ]  # fmt: skip
    notes = [*text.notes, f"the chat model {chat.model!r} classified the problem and chose {', '.join(methods)}"]
    return Route(path="llm", classification=chosen, scores=scores, notes=notes)


__all__ = ["classify_prompt", "llm_route"]
