"""The reason use case over a workspace: the agent's method context, the router, and storing the results.

``reason`` (the tool, ``mabos reason run``) calls :func:`reason_for` with a :class:`~reasoning.router_requests.
ReasonRequest`; :func:`reasoning.router.reason` is the router itself, for callers with a context of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kg.models.request import requested
from reasoning.router.methods.base import MethodContext
from reasoning.router.models import RouterResult
from reasoning.router.run import reason
from reasoning.router.store import store_result
from reasoning.router_requests import ReasonRequest

if TYPE_CHECKING:
    from kg.workspace import Workspace


def method_context(ws: Workspace, agent: str, *, seed: int = 0, problem: str = "") -> MethodContext:
    """The context engines run in: the agent, its workspace and the configured chat model (if any, with the
    configured ``[llm] timeout``, as every LLM user of the workspace)."""
    from kg.conversation.llm import configured_chat  # noqa: PLC0415 - the chat client loads only where a model may run

    chat = configured_chat(ws.config)
    return MethodContext(agent_id=agent, workspace=ws, chat=chat, seed=seed, problem=problem)


def reason_for(ws: Workspace, agent_id: str, request: ReasonRequest | None = None, /, **fields: Any) -> RouterResult:
    """Run the router for ``agent_id`` over its workspace (a request, or its fields as keywords) and store each
    computed result when the request asks (a scope the agent may write, no wider than the result's sources).

    Raises:
        NotFoundError: unknown agent. ScopeError: a ``store_scope`` the agent may not write.
        InputError: see :func:`reasoning.router.reason` and :func:`reasoning.router.store.store_result`.
    """
    asked = requested(ReasonRequest, request, fields)
    ws.scopes.require_agent(agent_id)
    if asked.store is not None and asked.store_scope is not None:
        ws.scopes.check_write(agent_id, asked.store_scope)
    context = method_context(ws, agent_id, seed=asked.seed, problem=asked.problem)
    result = reason(context, asked.problem, method=asked.method, problem_classification=asked.problem_classification,
                    multi_method=asked.multi_method, methods=asked.methods, inputs=asked.inputs, top=asked.top,
                    narrate_results=asked.narrate)  # fmt: skip
    if asked.store is None:
        return result
    stored = [store_result(ws, agent_id, asked.problem, r, store_as=asked.store, scope=asked.store_scope,
                           success=asked.success) for r in result.results if r.kind != "llm_prompt"]  # fmt: skip
    return result.model_copy(update={"stored": stored})


__all__ = ["method_context", "reason_for"]
