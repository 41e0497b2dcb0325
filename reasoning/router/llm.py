"""The optional LLM: prompts for methods that computed nothing, execution by the configured chat model
(``kind: "llm"``), and narration of computed results (``--narrate``).

Without a chat model nothing here calls anything: a method lacking inputs returns its prompt
(``kind: "llm_prompt"``) for the caller's own LLM. When the model fails (endpoint down, a reply that is not
the asked JSON), the prompt is returned with a note saying why: nothing fails because of the LLM.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kg.errors import BackendUnavailableError
from kg.ports import ChatMessage
from reasoning.router.methods.base import MethodContext, MethodOutcome, clamp, llm, llm_prompt
from reasoning.router.models import MethodSpec

PROMPT_MARKER = "[mabos reasoning router: a prompt for your own LLM; mabos did not compute this method]"
RESPONSE_FORMAT = {
    "conclusion": "your conclusion in one line",
    "confidence": "a number from 0 to 1",
    "rationale": "two to four sentences on how the method led there",
}
MAX_TOKENS = 400
NARRATE_TOKENS = 200


def build_prompt(method: MethodSpec, problem: str, inputs: Any) -> str:
    """The structured prompt that applies ``method`` to ``problem``."""
    steps = "\n".join(f"{n}. {step}" for n, step in enumerate(method.steps, 1))
    parts = [PROMPT_MARKER, f"Apply the reasoning method {method.name!r} ({method.category.value}): "
             f"{method.description}", f"Problem:\n{problem.strip() or '(no problem text was given)'}"]  # fmt: skip
    if inputs:
        parts.append(f"Inputs (JSON):\n{json.dumps(inputs, indent=2, sort_keys=True, default=str)}")
    parts += [f"Steps:\n{steps}", f"Reply with JSON only: {json.dumps(RESPONSE_FORMAT)}"]
    return "\n\n".join(parts)


def _reply(text: str) -> dict[str, Any] | None:
    found = re.search(r"\{.*\}", text, re.S)
    try:
        data = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("conclusion"), str) or not data["conclusion"].strip():
        return None
    return data


def not_computed(ctx: MethodContext, method: MethodSpec, inputs: Any, why: str) -> MethodOutcome:
    """The method's prompt, or, with a chat model, the model's execution of the method."""
    prompt = build_prompt(method, ctx.problem, inputs)
    if ctx.chat is None:
        return llm_prompt(method.id, prompt, inputs, notes=[f"not computed: {why}; returned a prompt instead"])
    try:
        text = ctx.chat.complete([ChatMessage(role="user", content=prompt)], max_tokens=MAX_TOKENS)
    except BackendUnavailableError as exc:
        return llm_prompt(method.id, prompt, inputs, notes=[f"not computed: {why}; the chat model failed ({exc})"])
    data = _reply(text)
    if data is None:
        return llm_prompt(method.id, prompt, inputs,
                          notes=[f"not computed: {why}; the chat model's reply was not the asked JSON"])  # fmt: skip
    try:
        confidence = clamp(float(data.get("confidence", 0.5)))
    except (TypeError, ValueError):
        confidence = 0.5
    return llm(method.id, ctx.chat.model, data["conclusion"].strip()[:1000], confidence,
               rationale=str(data.get("rationale", ""))[:4000],
               notes=[f"executed by the chat model {ctx.chat.model!r} ({why}); not computed by mabos"])  # fmt: skip


def narrate(ctx: MethodContext, outcome: MethodOutcome) -> str | None:
    """A short explanation of a computed result by the chat model; None without a model or when it fails."""
    if ctx.chat is None or outcome.kind != "computed":
        return None
    body = json.dumps({"method": outcome.method, "conclusion": outcome.conclusion, "confidence": outcome.confidence,
                       "trace": outcome.trace[:20]}, default=str)  # fmt: skip
    prompt = (
        f"Problem: {ctx.problem or '(none given)'}\nA reasoning engine computed this result (JSON):\n{body}\n"
        "Explain it in two or three plain sentences for a business reader. Do not change any number."
    )
    try:
        return ctx.chat.complete([ChatMessage(role="user", content=prompt)], max_tokens=NARRATE_TOKENS).strip()
    except BackendUnavailableError:
        return None


__all__ = ["PROMPT_MARKER", "RESPONSE_FORMAT", "build_prompt", "narrate", "not_computed"]
